//! `--counters` end to end: software events are real on every
//! machine, so page faults must grow with the memory a command touches
//! under each placement, and CPU migrations must appear when the command
//! moves itself between CPUs; hardware events either count or say why not
//! (this development VM has no PMU: every one says `unavailable (...)`);
//! `bw` and `lat` record the counts with each result.

#[path = "support/lock.rs"]
#[allow(dead_code)]
mod lock_support;
use lock_support::private_lock;

use assert_cmd::Command;
use serde_json::Value;

fn numaprobe(cmd: &str) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", private_lock(cmd)).arg(cmd);
    c
}

/// `numaprobe CMD --json ARGS`, which must succeed.
fn json(cmd: &str, args: &[&str]) -> Value {
    let out = numaprobe(cmd).arg("--json").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "failed: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn value(c: &Value, event: &str) -> Option<f64> {
    c["events"].as_array()?.iter().find(|r| r["event"] == event)?["value"].as_f64()
}

const HARDWARE: [&str; 8] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "node-loads",
    "node-load-misses",
    "node-stores",
    "node-store-misses",
];
const SOFTWARE: [&str; 5] =
    ["page-faults", "minor-faults", "major-faults", "cpu-migrations", "context-switches"];

/// Every event is there once; software events have values; each hardware
/// event has a value or a reason, never both, never neither.
fn check_complete(c: &Value) {
    let events = c["events"].as_array().expect("events");
    let names: Vec<&str> = events.iter().filter_map(|r| r["event"].as_str()).collect();
    assert_eq!(names, [&HARDWARE[..], &SOFTWARE[..]].concat(), "{c}");
    for e in SOFTWARE {
        assert!(value(c, e).is_some_and(|v| v >= 0.0), "{e} not counted: {c}");
    }
    for r in events {
        let has_value = r["value"].is_number();
        let why = r["unavailable"].as_str();
        assert!(has_value != why.is_some(), "value xor reason: {r}");
        if let Some(w) = why {
            assert!(!w.is_empty(), "{r}");
            assert!(r["raw"].is_null(), "nothing estimated for an unavailable event: {r}");
        }
    }
}

/// Bytes a page fault maps when the buffer is touched byte by byte: 2 MiB
/// with THP `always`, else 4 KiB.
fn fault_bytes() -> f64 {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if thp.contains("[always]") {
        2.0 * 1048576.0
    } else {
        4096.0
    }
}

/// Median page faults per policy of `exec --counters -- numaprobe exec --touch SIZE`.
fn faults_per_policy(size: &str) -> Vec<(String, f64, f64)> {
    let me = assert_cmd::cargo::cargo_bin("numaprobe");
    let v = json(
        "exec",
        &[
            "--counters",
            "--no-save",
            "--repeat",
            "1",
            "--policies",
            "all",
            "--",
            me.to_str().unwrap(),
            "exec",
            "--touch",
            size,
            "--touch-hold-ms",
            "0",
        ],
    );
    v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let c = &p["counters"];
            assert_eq!(c["scope"], "command and its children", "{c}");
            check_complete(c);
            // every run carries its own reading too
            for r in p["runs"].as_array().unwrap() {
                check_complete(&r["counters"]);
            }
            (
                p["policy"].as_str().unwrap().to_string(),
                value(c, "page-faults").unwrap(),
                value(c, "minor-faults").unwrap(),
            )
        })
        .collect()
}

#[test]
fn exec_page_faults_grow_with_touched_memory_under_each_placement() {
    let small = faults_per_policy("16M");
    let large = faults_per_policy("64M");
    assert!(small.len() >= 2, "default and local:0 at least: {small:?}");
    let touched = 48.0 * 1048576.0;
    for ((policy, s, s_minor), (p2, l, l_minor)) in small.iter().zip(&large) {
        assert_eq!(policy, p2);
        let grew = l - s;
        let lo = 0.75 * touched / fault_bytes();
        let hi = 1.25 * touched / 4096.0 + 2000.0;
        assert!(
            grew >= lo && grew <= hi,
            "{policy}: {s} faults at 16 MiB, {l} at 64 MiB: grew {grew}, expected {lo}..{hi}"
        );
        // anonymous memory from a fresh mapping: minor faults, no disk
        assert!(l_minor >= &(l - 50.0) && s_minor <= s, "{policy}: minor {l_minor} of {l}");
    }
}

#[test]
fn exec_counts_migrations_when_the_command_moves_itself() {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(online >= 2, "this test moves a process between CPUs 0 and 1");
    // the shell moves itself (taskset -p on $$) ten times each way
    let script = "for i in 1 2 3 4 5 6 7 8 9 10; do \
                  taskset -p -c 0 $$ >/dev/null; taskset -p -c 1 $$ >/dev/null; done";
    let v = json(
        "exec",
        &[
            "--counters",
            "--no-save",
            "--repeat",
            "1",
            "--policies",
            "default",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let c = &v["policies"][0]["counters"];
    check_complete(c);
    let m = value(c, "cpu-migrations").unwrap();
    assert!(m >= 15.0, "20 moves gave {m} migrations: {c}");
}

#[test]
fn exec_says_why_hardware_events_are_missing_in_its_table() {
    let out = numaprobe("exec")
        .args(["--counters", "--no-save", "--repeat", "1", "--policies", "default", "--", "true"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("counters (command and its children):"), "{text}");
    let v = json(
        "exec",
        &["--counters", "--no-save", "--repeat", "1", "--policies", "default", "--", "true"],
    );
    let c = &v["policies"][0]["counters"];
    let cycles = c["events"].as_array().unwrap().iter().find(|r| r["event"] == "cycles").unwrap();
    match cycles["unavailable"].as_str() {
        // no PMU (this VM) or not permitted: the table names the reason
        Some(why) => {
            assert!(text.contains(&format!("unavailable ({why})")), "{text}");
            assert!(c["derived"]["ipc"].is_null(), "no IPC without cycles: {c}");
        }
        None => assert!(c["derived"]["ipc"].as_f64().is_some_and(|x| x > 0.0), "{c}"),
    }
    // without the flag nothing is counted or recorded
    let v = json("exec", &["--no-save", "--repeat", "1", "--policies", "default", "--", "true"]);
    assert!(v["policies"][0].get("counters").is_none(), "{v}");
    assert!(v["policies"][0]["runs"][0].get("counters").is_none(), "{v}");
}

#[test]
fn bw_records_the_team_counts_with_each_result() {
    let v = json(
        "bw",
        &[
            "--counters",
            "--kernel",
            "copy,triad",
            "--size",
            "8M",
            "--budget",
            "0.2",
            "--threads",
            "2",
        ],
    );
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let c = &r["counters"];
        assert_eq!(c["scope"], "2 team thread(s)", "{c}");
        check_complete(c);
        // memory-controller bytes per socket, or why there are none
        let uncore = c["uncore"].as_array().map_or(0, Vec::len);
        assert!(uncore > 0 || c["uncore_unavailable"].is_string(), "{c}");
    }
    let v = json("bw", &["--kernel", "copy", "--size", "8M", "--budget", "0.1"]);
    assert!(v["results"][0].get("counters").is_none(), "{v}");
}

#[test]
fn lat_records_the_chase_threads_counts() {
    let v = json("lat", &["--counters", "--size", "4M", "--samples", "3", "--sample-ms", "2"]);
    let c = &v["results"][0]["counters"];
    assert_eq!(c["scope"], "chase thread", "{c}");
    check_complete(c);
}

#[test]
fn saved_counts_reach_the_report_beside_placements_and_bandwidth() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("numaprobe")
            .unwrap()
            .env("NUMAPROBE_DB", &db)
            .env("NUMAPROBE_LOCK", private_lock("report"))
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&["exec", "--counters", "--repeat", "1", "--policies", "default", "--quiet", "--", "true"]);
    let md = run(&["report", "1"]);
    let line = md.lines().find(|l| l.contains("| default")).expect("policy row");
    assert!(
        md.contains("IPC") && md.contains("Page faults") && md.contains("CPU migrations"),
        "{md}"
    );
    // page faults of `true` are counted: a number in the row, not a dash
    assert!(line.split('|').any(|c| c.trim().parse::<f64>().is_ok_and(|n| n > 0.0)), "{line}");
    assert!(md.contains("median of the successful runs"), "{md}");
    run(&[
        "bw",
        "--counters",
        "--save",
        "--kernel",
        "triad",
        "--size",
        "8M",
        "--budget",
        "0.1",
        "--quiet",
    ]);
    let md = run(&["report", "2"]);
    assert!(md.contains("Counters beside bandwidth"), "{md}");
    // a run without counters shows none of it
    run(&["bw", "--save", "--kernel", "triad", "--size", "8M", "--budget", "0.1", "--quiet"]);
    let md = run(&["report", "3"]);
    assert!(!md.contains("Counters beside bandwidth"), "{md}");
}
