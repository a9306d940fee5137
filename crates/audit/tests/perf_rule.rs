//! `audit` reports `kernel.perf_event_paranoid` and whether
//! `--counters` can count hardware events: no PMU (a VM), not permitted, or
//! usable; a capture gives the level alone.

use std::path::PathBuf;

use audit::{Evidence, PerfCounters, Profile, Read, Report, Settings};
use results::audit::{Finding, Needs, Severity};
use topo::*;

mod support;
use support::TERMS;

fn tuned() -> (Topology, Settings) {
    let root =
        SysRoot::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/tuned")).unwrap();
    (Topology::discover(&root).unwrap(), Settings::read(&root))
}

fn finding(s: &Settings, t: &Topology) -> Option<Finding> {
    let r = Report::from_parts(
        "test".into(),
        t,
        s.clone(),
        Read::Absent,
        Evidence::default(),
        Profile::General,
        TERMS,
    );
    r.finding("kernel.perf_counters").cloned()
}

fn live(hw: Option<&str>, root: bool) -> Read<PerfCounters> {
    Read::Value(PerfCounters {
        hardware_unavailable: hw.map(str::to_string),
        software_unavailable: None,
        user_only: false,
        root,
    })
}

#[test]
fn a_capture_without_the_file_says_nothing_and_one_with_it_gives_the_level() {
    let (t, mut s) = tuned();
    assert_eq!(s.perf_counters, Read::Absent, "a capture is never probed");
    s.perf_event_paranoid = Read::Absent;
    assert_eq!(finding(&s, &t), None);
    s.perf_event_paranoid = Read::Value(2);
    let f = finding(&s, &t).unwrap();
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.found.contains("perf_event_paranoid = 2") && f.found.contains("user space only"),
        "{f:#?}"
    );
    assert!(f.fix.contains("perf_event_paranoid=1") && f.needs == Needs::Runtime, "{f:#?}");
    s.perf_event_paranoid = Read::Value(-1);
    assert_eq!(finding(&s, &t).unwrap().severity, Severity::Ok);
}

#[test]
fn no_pmu_and_not_permitted_give_different_fixes() {
    let (t, mut s) = tuned();
    s.perf_event_paranoid = Read::Value(2);
    s.perf_counters = live(Some("not supported by this machine's PMU (ENOENT)"), true);
    let f = finding(&s, &t).unwrap();
    assert_eq!(f.severity, Severity::Info);
    assert!(f.found.starts_with("hardware events unavailable to root (not supported"), "{f:#?}");
    assert!(f.found.contains("software events (page faults"), "{f:#?}");
    assert!(f.fix.contains("pmu=on"), "{f:#?}");

    s.perf_counters = live(Some("not permitted: kernel.perf_event_paranoid is 3"), false);
    let f = finding(&s, &t).unwrap();
    assert!(f.found.contains("unavailable to this user (not permitted"), "{f:#?}");
    assert!(f.fix.contains("perf_event_paranoid=1"), "{f:#?}");

    s.perf_counters = live(None, true);
    let f = finding(&s, &t).unwrap();
    assert_eq!(f.severity, Severity::Ok);
    assert!(f.found.starts_with("hardware and software events countable by root"), "{f:#?}");
}

#[test]
fn old_settings_records_without_the_fields_still_read() {
    let (_, s) = tuned();
    let mut v = serde_json::to_value(&s).unwrap();
    v.as_object_mut().unwrap().remove("perf_event_paranoid");
    v.as_object_mut().unwrap().remove("perf_counters");
    let back: Settings = serde_json::from_value(v).unwrap();
    assert_eq!(back.perf_event_paranoid, Read::Absent);
    assert_eq!(back.perf_counters, Read::Absent);
}

/// Every finding of the rule, word for word (what `audit --json` writes
/// and a run stores): the capture's two levels and the live machine's
/// countable, not permitted and no-PMU cases.
#[test]
fn every_finding_word_for_word() {
    let (t, mut s) = tuned();
    let words = |f: Finding| (f.severity, f.found, f.expected, f.why, f.fix, f.needs);
    let paranoid2 = "kernel.perf_event_paranoid = 2 (users may count their own processes in \
                     user space only; uncore counters need root or CAP_PERFMON)";
    let fix = "sysctl -w kernel.perf_event_paranoid=1 (0 also allows uncore memory-controller \
               counters; persist in /etc/sysctl.d/90-perf.conf), or run numaprobe as root or \
               with CAP_PERFMON";
    let expected = "hardware and software events countable (for --counters)";

    s.perf_event_paranoid = Read::Value(2);
    assert_eq!(
        words(finding(&s, &t).unwrap()),
        (
            Severity::Info,
            paranoid2.to_string(),
            "1 or lower for unprivileged --counters (0 for uncore counters)".to_string(),
            "Without privileges, --counters would miss the kernel's share of each event (or \
             every event), and memory-controller traffic."
                .to_string(),
            fix.to_string(),
            Needs::Runtime
        )
    );
    s.perf_event_paranoid = Read::Value(1);
    assert_eq!(
        words(finding(&s, &t).unwrap()),
        (
            Severity::Ok,
            "kernel.perf_event_paranoid = 1 (users may count their own processes, kernel \
             included; not CPU-wide or uncore events)"
                .to_string(),
            expected.to_string(),
            "Unprivileged users may count their own processes, kernel included.".to_string(),
            String::new(),
            Needs::Nothing
        )
    );

    s.perf_event_paranoid = Read::Value(2);
    s.perf_counters = live(None, false);
    assert_eq!(
        words(finding(&s, &t).unwrap()),
        (
            Severity::Ok,
            format!("hardware and software events countable by this user; {paranoid2}"),
            expected.to_string(),
            "--counters shows IPC, LLC misses and the share of remote node loads per \
             placement, which explain why a remote placement is slow."
                .to_string(),
            String::new(),
            Needs::Nothing
        )
    );
    s.perf_counters = live(Some("not permitted: kernel.perf_event_paranoid is 3"), false);
    assert_eq!(
        words(finding(&s, &t).unwrap()),
        (
            Severity::Info,
            format!(
                "hardware events unavailable to this user (not permitted: \
                 kernel.perf_event_paranoid is 3); software events (page faults, migrations, \
                 context switches) countable; {paranoid2}"
            ),
            expected.to_string(),
            "The kernel forbids counting hardware events to this user, so --counters records \
             them as unavailable."
                .to_string(),
            fix.to_string(),
            Needs::Runtime
        )
    );
    s.perf_counters = live(Some("not supported by this machine's PMU (ENOENT)"), true);
    assert_eq!(
        words(finding(&s, &t).unwrap()),
        (
            Severity::Info,
            format!(
                "hardware events unavailable to root (not supported by this machine's PMU \
                 (ENOENT)); software events (page faults, migrations, context switches) \
                 countable; {paranoid2}"
            ),
            expected.to_string(),
            "No PMU is available to the kernel (usually a virtual machine without a virtual \
             PMU), so --counters records hardware events as unavailable and only software \
             events."
                .to_string(),
            "Measure on bare metal, or give the guest a virtual PMU (QEMU/libvirt: -cpu \
             host,pmu=on or <pmu state='on'/>; VMware: enable 'virtualize CPU performance \
             counters') and restart it"
                .to_string(),
            Needs::Reboot
        )
    );
}

/// The rule names no flag itself: every text of every case with another
/// name for the option holds that name and no `--`.
#[test]
fn the_rule_takes_the_options_name_from_its_caller() {
    let (t, mut s) = tuned();
    let terms = audit::Terms { counters: "the counters option", ..TERMS };
    let of = |s: &Settings| {
        let r = Report::from_parts(
            "test".into(),
            &t,
            s.clone(),
            Read::Absent,
            Evidence::default(),
            Profile::General,
            terms,
        );
        r.finding("kernel.perf_counters").cloned().unwrap()
    };
    let mut seen = 0;
    for level in [1, 2] {
        s.perf_event_paranoid = Read::Value(level);
        for pc in [
            Read::Absent,
            live(None, false),
            live(Some("not permitted: kernel.perf_event_paranoid is 3"), false),
            live(Some("not supported by this machine's PMU (ENOENT)"), true),
        ] {
            s.perf_counters = pc;
            let f = of(&s);
            let text = [&f.found, &f.expected, &f.why, &f.fix].map(|t| t.as_str()).join(" | ");
            assert!(!text.contains("--"), "{text}");
            seen += usize::from(text.contains("the counters option"));
        }
    }
    assert_eq!(seen, 8, "every case names the option");
}
