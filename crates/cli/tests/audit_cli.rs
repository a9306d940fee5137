//! `numaprobe audit` end to end: this machine (text and JSON, checked
//! against what procfs says), the audit crate's fixture trees, evidence
//! taken from a results database, `--fail-on`, bad input, and every hwloc
//! capture under `--root` (feature `fixtures`: needs ../shared/fixtures).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::{json, Value};

#[cfg(feature = "fixtures")]
#[path = "../../topo/tests/support/captures.rs"]
mod captures;

fn audit() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.arg("audit");
    c
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/data").join(name)
}

fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.arg("--json").output().unwrap();
    assert!(out.status.success(), "audit: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn finding<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id} in {r:#}"))
}

#[test]
fn audits_this_machine_as_text() {
    let db = tempfile::tempdir().unwrap();
    audit()
        .env("NUMAPROBE_DB", db.path().join("none.db"))
        .assert()
        .success()
        .stdout(contains("Audit for profile general (root /)"))
        .stdout(contains("numa.mode"))
        .stdout(contains("No saved measurements of this machine"));
}

#[test]
fn audits_this_machine_as_json_matching_procfs() {
    let db = tempfile::tempdir().unwrap();
    let r = json_of(
        audit().env("NUMAPROBE_DB", db.path().join("none.db")).args(["--profile", "latency"]),
    );
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["profile"], "latency");
    let findings = r["findings"].as_array().unwrap();
    assert!(findings.len() >= 10, "{r:#}");
    for f in findings {
        for k in ["id", "severity", "title", "found", "expected", "why", "fix", "needs"] {
            assert!(f.get(k).is_some(), "finding lacks {k}: {f}");
        }
    }
    // Settings agree with the files themselves.
    if let Ok(rel) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
        assert_eq!(r["settings"]["kernel"]["value"], rel.trim());
    }
    if let Ok(z) = std::fs::read_to_string("/proc/sys/vm/zone_reclaim_mode") {
        assert_eq!(r["settings"]["zone_reclaim_mode"]["value"], z.trim().parse::<u64>().unwrap());
    }
    if let Ok(t) = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") {
        let sel = t.split('[').nth(1).unwrap().split(']').next().unwrap();
        assert_eq!(r["settings"]["thp_enabled"]["value"], sel);
    }
    // Without a DMI table (or without root), the population is not guessed.
    if !Path::new("/sys/firmware/dmi/tables/DMI").exists() {
        assert_eq!(finding(&r, "memory.population")["severity"], "unknown");
    }
}

#[test]
fn untuned_tree_fires_and_tuned_tree_is_quiet() {
    let r = json_of(audit().arg("--root").arg(data("untuned")).args([
        "--profile",
        "database",
        "--no-evidence",
    ]));
    assert_eq!(finding(&r, "kernel.zone_reclaim_mode")["severity"], "critical");
    assert_eq!(finding(&r, "kernel.numa_balancing")["severity"], "warn");
    assert_eq!(
        finding(&r, "kernel.zone_reclaim_mode")["fix"],
        "sysctl -w vm.zone_reclaim_mode=0 (persist in /etc/sysctl.d/90-numa.conf)"
    );
    let r = json_of(audit().arg("--root").arg(data("tuned")).args([
        "--profile",
        "database",
        "--no-evidence",
    ]));
    assert_eq!(r["counts"]["warn"], 0, "{r:#}");
    assert_eq!(r["counts"]["critical"], 0, "{r:#}");
    assert_eq!(finding(&r, "kernel.zone_reclaim_mode")["severity"], "ok");
}

/// The performance-counter finding of a capture, whole, as `audit --json`
/// writes it (and a run stores it): the untuned tree with
/// `kernel.perf_event_paranoid` added at 2, then at 1.
#[test]
fn the_counters_finding_of_a_capture_word_for_word() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("untuned");
    let cp = std::process::Command::new("cp").arg("-a").arg(data("untuned")).arg(&root).status();
    assert!(cp.unwrap().success());
    let paranoid = root.join("proc/sys/kernel/perf_event_paranoid");
    let of = |level: &str| {
        std::fs::write(&paranoid, format!("{level}\n")).unwrap();
        let r = json_of(audit().arg("--root").arg(&root).arg("--no-evidence"));
        finding(&r, "kernel.perf_counters").clone()
    };
    let fix = "sysctl -w kernel.perf_event_paranoid=1 (0 also allows uncore memory-controller \
               counters; persist in /etc/sysctl.d/90-perf.conf), or run numaprobe as root or \
               with CAP_PERFMON";
    assert_eq!(
        of("2"),
        json!({
            "id": "kernel.perf_counters",
            "severity": "info",
            "title": "Performance counters",
            "found": "kernel.perf_event_paranoid = 2 (users may count their own processes in \
                      user space only; uncore counters need root or CAP_PERFMON)",
            "expected": "1 or lower for unprivileged --counters (0 for uncore counters)",
            "why": "Without privileges, --counters would miss the kernel's share of each event \
                    (or every event), and memory-controller traffic.",
            "fix": fix,
            "needs": "runtime",
            "evidence": null
        })
    );
    assert_eq!(
        of("1"),
        json!({
            "id": "kernel.perf_counters",
            "severity": "ok",
            "title": "Performance counters",
            "found": "kernel.perf_event_paranoid = 1 (users may count their own processes, \
                      kernel included; not CPU-wide or uncore events)",
            "expected": "hardware and software events countable (for --counters)",
            "why": "Unprivileged users may count their own processes, kernel included.",
            "fix": "",
            "needs": "nothing",
            "evidence": null
        })
    );
}

#[test]
fn fail_on_sets_the_exit_status() {
    audit()
        .arg("--root")
        .arg(data("untuned"))
        .args(["--profile", "database", "--fail-on", "warn"])
        .assert()
        .code(1)
        .stdout(contains("kernel.zone_reclaim_mode"))
        .stderr(contains("(--fail-on warn)"));
    audit()
        .arg("--root")
        .arg(data("tuned"))
        .args(["--profile", "database", "--fail-on", "warn"])
        .assert()
        .success();
}

#[test]
fn bad_input_is_a_usage_error() {
    audit().args(["--profile", "olap"]).assert().code(2).stderr(contains("'olap'"));
    audit().args(["--fail-on", "info"]).assert().code(2).stderr(contains("info"));
    audit()
        .args(["--root", "/no/such/numaprobe-root"])
        .assert()
        .code(2)
        .stderr(contains("/no/such/numaprobe-root"));
}

fn this_topology() -> results::context::RunTopology {
    let t = topo::Topology::discover(&topo::SysRoot::live()).unwrap();
    results::context::RunTopology::of(&t)
}

/// This machine's fingerprint document, as `run` saves it.
fn this_machine() -> results::context::Machine {
    let root = topo::SysRoot::live();
    let t = topo::Topology::discover(&root).unwrap();
    audit::fingerprint::machine(&root, &t, &audit::Read::Absent)
}

fn save_run(
    db: &Path,
    topology: results::context::RunTopology,
    machine: results::context::Machine,
    label: &str,
) {
    let mut s = store::Store::open(db).unwrap();
    let mut new = store::NewRun::new("numaprobe run --test", "0.0.0-test");
    new.label = Some(label.into());
    new.topology = topology;
    new.machine = machine;
    let run = s.begin_run(&new).unwrap();
    let rec = |kind: &str, v: Value| results::upgrade::read(kind, &v).record;
    let lat = |mem: u32, ns: f64| {
        rec("lat", json!({"mode":"matrix","cpu":0,"cpu_node":0,"mem_node":mem,"median_ns":ns}))
    };
    s.add_result(run, &lat(0, 100.0)).unwrap();
    s.add_result(run, &lat(1, 180.0)).unwrap();
    let bw = json!({"mode":"local","kernel":"triad","cpu_node":0,"mem_node":0,"best_gbs":50.0,
                    "median_gbs":49.0});
    s.add_result(run, &rec("bw", bw)).unwrap();
    s.finish_run(run, store::RunStatus::Complete, None).unwrap();
}

#[test]
fn evidence_comes_from_the_latest_run_of_this_machine() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    save_run(&db, this_topology(), this_machine(), "this machine");
    // A later run of another machine must not be cited.
    let mut other = topo::Topology::discover(&topo::SysRoot::live()).unwrap();
    other.cpu_model = Some("Some Other CPU 9000".into());
    other.online_cpus = topo::CpuSet::parse_list("0-511").unwrap();
    let other_machine = serde_json::from_value(
        json!({"fingerprint": "0123456789abcdef", "cpu_model": "Some Other CPU 9000"}),
    )
    .unwrap();
    save_run(&db, results::context::RunTopology::of(&other), other_machine, "other machine");
    let r = json_of(audit().env("NUMAPROBE_DB", &db).args(["--profile", "database"]));
    let ev = &r["evidence"];
    assert!(ev["source"].as_str().unwrap().contains("this machine"), "{ev:#}");
    assert!((ev["remote_local_latency_ratio"].as_f64().unwrap() - 1.8).abs() < 1e-9, "{ev:#}");
    let f = finding(&r, "numa.remote_penalty");
    assert_eq!(f["severity"], "warn");
    assert!(f["found"]
        .as_str()
        .unwrap()
        .contains("remote latency 1.8x local: bind instances to nodes"));
    // The text output says where the evidence comes from.
    audit().env("NUMAPROBE_DB", &db).assert().success().stdout(contains("Evidence from run 1"));
    // --no-evidence ignores the store; --run picks a run explicitly.
    let r = json_of(audit().env("NUMAPROBE_DB", &db).arg("--no-evidence"));
    assert!(r["evidence"]["source"].is_null());
    let r = json_of(audit().env("NUMAPROBE_DB", &db).args(["--run", "other machine"]));
    assert!(r["evidence"]["source"].as_str().unwrap().contains("other machine"));
    // A reference naming no run is a usage error (exit 2, one line), as
    // in `show` and `report`.
    for bad in ["nope", "999", "label:"] {
        let out = audit().env("NUMAPROBE_DB", &db).args(["--run", bad]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "--run {bad}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "one line: {err}"
        );
        assert!(err.contains(&format!("--run {bad}")), "{err}");
    }
}

/// Needs the captures beside the checkout: gated behind the `fixtures`
/// feature, which `.ci/run` always turns on; without the folder it fails.
#[cfg(feature = "fixtures")]
#[test]
fn audit_and_topo_run_on_every_hwloc_capture() {
    let mut n = 0;
    for name in captures::names() {
        let root = captures::unpack(&name);
        for profile in ["general", "ai-training"] {
            let r = json_of(audit().arg("--root").arg(&root).args(["--profile", profile]));
            assert!(!r["findings"].as_array().unwrap().is_empty(), "{name}");
        }
        audit().arg("--root").arg(&root).assert().success().stdout(contains("numa.mode"));
        Command::cargo_bin("numaprobe")
            .unwrap()
            .args(["topo", "--root"])
            .arg(&root)
            .assert()
            .success()
            .stdout(contains("NUMA mode"));
        n += 1;
    }
    assert!(n >= 16, "only {n} captures");
}

/// `cpu.prefetchers` cites the prefetch check of the latest run of
/// this machine that has one, even when a later run (here bandwidth only)
/// has none; `--run` takes that run's check alone; none at all is unknown.
#[test]
fn prefetch_evidence_comes_from_the_latest_run_with_a_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    {
        let mut s = store::Store::open(&db).unwrap();
        let mut new = store::NewRun::new("numaprobe lat --test", "0.0.0-test");
        new.label = Some("with check".into());
        new.topology = this_topology();
        new.machine = this_machine();
        let run = s.begin_run(&new).unwrap();
        let check = results::lat::PrefetchCheck::judge(
            0,
            Some(0),
            1 << 30,
            "4k".into(),
            256,
            (101.7, 1.5),
            (162.0, 2.0),
        );
        let check = results::lat::LatSummary::PrefetchCheck(check);
        s.add_result(run, &results::Record::LatSummary(Box::new(check))).unwrap();
        s.finish_run(run, store::RunStatus::Complete, None).unwrap();
    }
    // a later run of this machine without a check
    save_run(&db, this_topology(), this_machine(), "later");
    let r = json_of(audit().env("NUMAPROBE_DB", &db));
    assert!(r["evidence"]["source"].as_str().unwrap().contains("later"), "{:#}", r["evidence"]);
    let f = finding(&r, "cpu.prefetchers");
    assert_eq!(f["severity"], "ok", "{f:#}");
    let e = f["evidence"].as_str().unwrap();
    assert!(
        e.starts_with(
            "stride 64 B: 101.7 ns, stride 256 B: 162.0 ns, prefetchers shorten neighbour loads by 37%"
        ) && e.contains("with check"),
        "{e}"
    );
    assert!(r["evidence"]["prefetch"]["source"].as_str().unwrap().contains("with check"));
    // the latency profile: information, with the DRAM figure to compare
    let r = json_of(audit().env("NUMAPROBE_DB", &db).args(["--profile", "latency"]));
    assert_eq!(finding(&r, "cpu.prefetchers")["severity"], "info");
    audit()
        .env("NUMAPROBE_DB", &db)
        .arg("--all")
        .assert()
        .success()
        .stdout(contains("evidence: stride 64 B: 101.7 ns, stride 256 B: 162.0 ns"));
    // --run names a run without a check: no guess from other runs
    let r = json_of(audit().env("NUMAPROBE_DB", &db).args(["--run", "later"]));
    assert_eq!(finding(&r, "cpu.prefetchers")["severity"], "unknown");
    // no store at all
    let r = json_of(audit().env("NUMAPROBE_DB", dir.path().join("none.db")));
    let f = finding(&r, "cpu.prefetchers");
    assert_eq!(f["severity"], "unknown");
    assert!(f["found"].as_str().unwrap().contains("no saved run"), "{f:#}");
}
