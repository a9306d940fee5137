//! `cpu.prefetchers` judges the hardware prefetchers from `lat`'s
//! saved prefetch check (stride 64 B against the default stride), per
//! profile, with the figures as evidence; `unknown` without a check.

use std::path::PathBuf;

use audit::{Evidence, Profile, Read, Report, Settings};
use results::audit::{Finding, Needs, Severity};
use results::Record;
use serde_json::json;
use topo::*;

mod support;
use support::TERMS;

/// A result read from stored JSON, as the store reads it.
fn read(kind: &str, v: serde_json::Value) -> Record {
    results::upgrade::read(kind, &v).record
}

fn tuned() -> (Topology, Settings) {
    let root =
        SysRoot::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tuned")).unwrap();
    (Topology::discover(&root).unwrap(), Settings::read(&root))
}

fn finding(ev: Evidence, p: Profile) -> Finding {
    let (t, s) = tuned();
    let r = Report::from_parts("test".into(), &t, s, Read::Absent, ev, p, TERMS);
    r.finding("cpu.prefetchers").cloned().expect("the rule always gives a finding")
}

/// A saved check as `lat` stores it (kind `lat-summary`, mode
/// `prefetch-check`), built by the same judge `lat` uses.
fn check(line: (f64, f64), stride: (f64, f64)) -> Record {
    let c = results::lat::PrefetchCheck::judge(3, Some(0), 1 << 30, "4k".into(), 256, line, stride);
    Record::LatSummary(Box::new(results::lat::LatSummary::PrefetchCheck(c)))
}

fn evidence(results: &[Record]) -> Evidence {
    Evidence::from_records(results)
}

#[test]
fn no_check_is_unknown_and_says_how_to_get_one() {
    for p in Profile::ALL {
        let f = finding(Evidence::default(), p);
        assert_eq!(f.severity, Severity::Unknown, "{p}: {f:#?}");
        assert!(f.found.contains("no saved run"), "{f:#?}");
        assert_eq!(
            f.fix,
            "numaprobe lat (or numaprobe run): both measure and save the prefetch check, then \
             audit again"
        );
        assert_eq!(f.evidence, None);
    }
    // bandwidth and latency results without a check are no prefetch evidence
    let ev = evidence(&[
        read("lat", json!({"mode":"point","cpu_node":0,"mem_node":0,"median_ns":100.0})),
        read("lat-summary", json!({"mode":"sweep"})),
    ]);
    assert!(ev.prefetch.is_none());
    assert_eq!(finding(ev, Profile::General).severity, Severity::Unknown);
}

#[test]
fn a_measured_effect_is_cited_with_the_exact_figures() {
    let ev = evidence(&[check((101.7, 1.0), (162.0, 2.0))]);
    let f = finding(ev.clone(), Profile::Hpc);
    assert_eq!(f.severity, Severity::Ok, "{f:#?}");
    let e = f.evidence.clone().unwrap();
    assert!(
        e.starts_with(
            "stride 64 B: 101.7 ns, stride 256 B: 162.0 ns, prefetchers shorten neighbour loads by 37%"
        ),
        "{e}"
    );
    assert!(e.contains("1024 MiB rings, 4k pages, CPU 3"), "{e}");
    assert!(f.found.contains("37% shorter"), "{f:#?}");
    // latency-bound services: information, with what the prefetchers do
    // and do not do for them
    let f = finding(ev, Profile::Latency);
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(f.why.contains("162.0 ns") && f.why.contains("random"), "{f:#?}");
    assert_eq!(f.needs, Needs::Nothing);
}

#[test]
fn no_effect_on_a_quiet_machine_warns_streaming_profiles_only() {
    let ev = evidence(&[check((150.0, 1.0), (151.0, 1.0))]);
    for p in [Profile::Hpc, Profile::General, Profile::Database, Profile::AiTraining] {
        let f = finding(ev.clone(), p);
        assert_eq!(f.severity, Severity::Warn, "{p}: {f:#?}");
        assert_eq!(f.needs, Needs::Bios);
        assert!(f.fix.contains("Adjacent Cache Line Prefetch"), "{f:#?}");
        assert!(f.evidence.as_deref().unwrap().contains("no difference above the noise"));
    }
    assert_eq!(finding(ev, Profile::Latency).severity, Severity::Info);
}

#[test]
fn a_noisy_check_is_undecided_not_a_verdict() {
    // 30 ns of noise on 150 ns: the difference says nothing
    let f = finding(evidence(&[check((120.0, 20.0), (150.0, 25.0))]), Profile::Hpc);
    assert_eq!(f.severity, Severity::Unknown, "{f:#?}");
    assert!(f.found.contains("could not tell"), "{f:#?}");
    assert!(f.evidence.is_some());
    assert_eq!(f.fix, "numaprobe lat on a quiet machine, then audit again");
}

#[test]
fn a_slower_neighbour_chase_says_to_measure_again_on_a_quiet_machine() {
    let f = finding(evidence(&[check((160.0, 1.0), (150.0, 1.0))]), Profile::Hpc);
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(f.found.contains("unexpected"), "{f:#?}");
    assert_eq!(f.fix, "numaprobe lat on a quiet machine, then audit again");
}

#[test]
fn the_last_check_of_the_run_is_the_one_used() {
    let ev = evidence(&[check((150.0, 1.0), (151.0, 1.0)), check((100.0, 1.0), (160.0, 1.0))]);
    let c = &ev.prefetch.as_ref().unwrap().check;
    assert_eq!((c.line_ns, c.stride_ns), (100.0, 160.0));
    assert!(!ev.is_empty(), "a check alone is evidence");
}

/// A check stored as disturbed (`stable: false`, not significant) is
/// undecided in every profile, never "no spatial-prefetch effect" with a
/// BIOS fix: 106.5 vs 146.9 ns measured while other work took the CPU.
#[test]
fn a_disturbed_stored_check_is_undecided_never_no_effect() {
    let stored = read(
        "lat-summary",
        json!({"mode": "prefetch-check", "cpu": 3, "mem_node": 0, "size_bytes": 1u64 << 30,
               "page_size": "4k", "line_ns": 106.5, "stride_ns": 146.9, "stride_bytes": 256,
               "noise_ns": 1.2, "shortened_pct": 27.5, "significant": false,
               "note": "undecided: disturbed", "stable": false}),
    );
    for p in Profile::ALL {
        let ev = evidence(std::slice::from_ref(&stored));
        assert!(ev
            .prefetch
            .as_ref()
            .unwrap()
            .describe()
            .contains("undecided: the check was disturbed"));
        let f = finding(ev, p);
        assert_eq!(f.severity, Severity::Unknown, "{p}: {f:#?}");
        assert!(f.found.contains("undecided") && f.found.contains("disturbed"), "{p}: {f:#?}");
        assert!(!f.found.contains("no spatial-prefetch effect"), "{p}: {f:#?}");
        assert_eq!(f.fix, "numaprobe lat on a quiet machine, then audit again", "{p}");
    }
}
