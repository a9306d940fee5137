//! End-to-end tests of `numaprobe exec` on this (single-node) machine:
//! metric parsing, bad input, failures, timeouts, Ctrl-C, placements on
//! node 0, refusals, the JSON document and the table.

#[path = "support/lock.rs"]
mod lock_support;
use lock_support::assert_refused_by_our_lock;

use std::path::{Path, PathBuf};

// The QEMU harness of the guest suite (engineer "guest"), for the one
// multi-node exec test at the end of this file.
#[cfg(feature = "guest-tests")]
#[allow(dead_code)]
#[path = "guest/harness.rs"]
mod harness;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `numaprobe exec ARGS`, saving into a private database.
    fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env("NUMAPROBE_DB", self.path("results.db"))
            .env("NUMAPROBE_LOCK", self.path("measure.lock"))
            .current_dir(self.dir.path())
            .arg("exec")
            .args(args);
        c
    }

    /// The latest saved run as `list --json` shows it.
    fn latest_run(&self) -> Value {
        let out = Command::cargo_bin("numaprobe")
            .unwrap()
            .env("NUMAPROBE_DB", self.path("results.db"))
            .args(["list", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array().and_then(|a| a.last()).cloned().expect("a saved run")
    }

    fn json(&self, args: &[&str]) -> (Value, std::process::Output) {
        let out = self.exec(&[&["--json"], args].concat()).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (v, out)
    }
}

fn numaprobe() -> String {
    assert_cmd::cargo::cargo_bin("numaprobe").display().to_string()
}

/// The lines of `text` that start with `start`, in order.
fn lines_from<'a>(text: &'a str, start: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(start)).collect()
}

/// The lines of `text` that hold `part`, in order.
fn lines_with<'a>(text: &'a str, part: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(part)).collect()
}

fn policies(v: &Value) -> Vec<&str> {
    v["policies"].as_array().unwrap().iter().map(|p| p["policy"].as_str().unwrap()).collect()
}

fn alive(pid: i32) -> bool {
    // a zombie waiting for an init that does not reap counts as dead
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !matches!(
            s.rsplit(')').next().and_then(|r| r.split_whitespace().next()),
            Some("Z" | "X")
        ),
        Err(_) => false,
    }
}

#[test]
fn metric_is_the_first_group_of_the_output() {
    let env = Env::new();
    let (v, out) = env.json(&[
        "-p",
        "default,local:0",
        "-r",
        "3",
        "--metric",
        r"Triad:\s+([0-9.]+)",
        "--",
        "sh",
        "-c",
        "echo 'Triad: 123.5'",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(v["compared_on"], "metric");
    assert_eq!(v["direction"], "higher-is-better");
    for p in v["policies"].as_array().unwrap() {
        assert_eq!(p["median_metric"], 123.5);
        let runs = p["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3);
        assert!(runs.iter().all(|r| r["metric"] == 123.5 && r["metric_error"].is_null()));
    }
    // equal metrics: within noise, nothing named best
    assert_eq!(v["policies"][1]["verdict"], "within-noise");
    assert_eq!(v["policies"][1]["change_pct"], 0.0);
    assert!(v["best_policy"].is_null());
}

#[test]
fn metric_found_on_stderr_and_no_match_recorded_per_run() {
    let env = Env::new();
    let (v, out) = env.json(&[
        "-p",
        "default",
        "-r",
        "1",
        "--metric",
        r"rate=(\d+)",
        "--",
        "sh",
        "-c",
        "echo rate=42 >&2",
    ]);
    assert!(out.status.success());
    assert_eq!(v["policies"][0]["runs"][0]["metric"], 42.0);

    let (v, out) = env.json(&[
        "-p",
        "default",
        "-r",
        "2",
        "--metric",
        r"rate=(\d+)",
        "--",
        "sh",
        "-c",
        "echo nothing",
    ]);
    assert!(out.status.success(), "a missing metric is not a failed run");
    for r in v["policies"][0]["runs"].as_array().unwrap() {
        assert!(r["metric"].is_null());
        assert_eq!(r["metric_error"], "no match");
    }
    assert!(v["policies"][0]["median_metric"].is_null());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("metric no match"));
    // the metric no run gave, worded with its flag, and the end of
    // the last run's stdout under it, whole lines; before the warning
    // that the runs were short (when they were)
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("matched no run's output"))
        .unwrap_or_else(|| panic!("no miss warning: {err}"));
    assert_eq!(
        lines[at..at + 2],
        [
            r"numaprobe: warning: --metric 'rate=(\d+)' matched no run's output; the last run's stdout ends with:",
            "    nothing",
        ],
        "{err}"
    );
    if let Some(short) = lines.iter().position(|l| l.contains("measured runs took under")) {
        assert!(short > at, "{err}");
    }

    // a named metric searched in a file the run wrote: the file named, no
    // output shown
    let (_, out) = env.json(&[
        "-p",
        "default",
        "-r",
        "1",
        "--metric-file",
        "out.txt",
        "--metric",
        r"v=v=(\d+)",
        "--",
        "sh",
        "-c",
        "echo x > out.txt",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let miss: Vec<&str> = lines_with(&err, "found no number");
    assert_eq!(
        miss,
        [r"numaprobe: warning: --metric v='v=(\d+)' found no number in the metric file out.txt"],
        "{err}"
    );
}

#[test]
fn invalid_regex_and_regex_without_group_are_usage_errors() {
    let env = Env::new();
    env.exec(&["--metric", "Triad: ([0-9", "--", "true"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("invalid regular expression 'Triad: ([0-9'"));
    env.exec(&["--metric", r"Triad: \d+", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no capture group"));
    env.exec(&["--lower-is-better", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("need --metric"));
    env.exec(&["--timeout", "-1", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--timeout"));
}

#[test]
fn command_not_found_or_not_executable_fails_before_any_run() {
    let env = Env::new();
    env.exec(&["--", "no-such-command-np"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("command not found: 'no-such-command-np'"));
    let script = env.path("plain.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran > ran.txt\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    env.exec(&["--", script.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("plain.sh: not executable"));
    assert!(!env.path("ran.txt").exists());
    env.exec(&[]).assert().code(2);
}

#[test]
fn failing_command_is_reported_and_the_matrix_goes_on() {
    let env = Env::new();
    let (v, out) = env.json(&[
        "-p",
        "default,local:0",
        "-r",
        "2",
        "--",
        "sh",
        "-c",
        "echo oops-from-stderr >&2; exit 3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(policies(&v), ["default", "local:0"]);
    assert_eq!(v["failed_runs"], 4);
    for p in v["policies"].as_array().unwrap() {
        assert_eq!(p["verdict"], "no-data");
        for r in p["runs"].as_array().unwrap() {
            assert_eq!(r["exit_code"], 3);
            assert_eq!(r["ok"], false);
            assert_eq!(r["stderr_tail"], serde_json::json!(["oops-from-stderr"]));
        }
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("local:0 run 2/2: exited with status 3"), "{err}");
    assert!(err.contains("oops-from-stderr"), "{err}");
    assert!(err.contains("4 of 4 runs failed"), "{err}");
    // nothing was measured: the saved run is failed, not complete
    let run = env.latest_run();
    assert_eq!(run["status"], "failed", "{run}");
    assert!(run["message"].as_str().unwrap().contains("all 4 runs of the program failed"), "{run}");
}

#[test]
fn a_run_with_some_failed_runs_is_saved_incomplete() {
    let env = Env::new();
    // the first run fails and leaves a mark, the second succeeds
    let (v, out) = env.json(&[
        "-p",
        "default",
        "-r",
        "2",
        "--",
        "sh",
        "-c",
        "test -e mark || { touch mark; exit 3; }",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["failed_runs"], 1);
    let run = env.latest_run();
    assert_eq!(run["status"], "incomplete", "{run}");
    assert!(run["message"].as_str().unwrap().contains("1 of 2 runs failed"), "{run}");
}

#[test]
fn show_of_an_exec_run_prints_its_policy_table() {
    let env = Env::new();
    let out = env.exec(&["-p", "default,local:0", "-r", "1", "--", "true"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", env.path("results.db"))
        .args(["show", "latest"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("No bandwidth"), "{text}");
    assert!(text.contains("Program under placements (compared on wall time"), "{text}");
    // one row per policy, the successful runs counted
    for policy in ["default", "local:0"] {
        assert!(
            text.lines().any(|l| l.contains(policy) && l.contains("1/1")),
            "no row for {policy}: {text}"
        );
    }
    // one run each: too few to judge, so no placement beats the default
    assert!(text.contains("No placement is better than 'default'"), "{text}");
}

/// `--keep-output N` stores the last N KiB of each stream with each run,
/// however much the program prints (8 MiB here: the stored run stays
/// small), the totals say how much was written, and the report's appendix
/// shows the tail; 4 KiB is kept by default, 0 keeps none.
#[test]
fn keep_output_stores_a_bounded_tail_and_the_report_shows_it() {
    let env = Env::new();
    let prog = "head -c 8388608 /dev/zero | tr '\\0' x; echo; echo LAST-LINE; echo err-end >&2";
    let (v, out) =
        env.json(&["-p", "default", "-r", "1", "--keep-output", "2", "--", "sh", "-c", prog]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let o = &v["policies"][0]["runs"][0]["output"];
    let tail = o["stdout_tail"].as_str().unwrap();
    assert_eq!(tail.len(), 2048, "the last 2 KiB");
    assert!(tail.ends_with("x\nLAST-LINE\n"), "{tail}");
    assert_eq!(o["stdout_bytes"], 8 * 1024 * 1024 + 1 + 10);
    assert_eq!(o["stderr_tail"], "err-end\n");
    let db = std::fs::metadata(env.path("results.db")).unwrap().len();
    assert!(db < 1 << 20, "the database holds {db} bytes: the output was stored whole");
    let report = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", env.path("results.db"))
        .args(["report", "latest", "--format", "md"])
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let md = String::from_utf8_lossy(&report.stdout);
    let appendix = md.split_once("Appendix: raw figures").unwrap().1;
    assert!(appendix.contains("### Program output"), "{appendix}");
    assert!(
        appendix.contains("default (run 1), stdout, the last 2 KiB of 8 MiB (8 MiB left out)"),
        "{appendix}"
    );
    assert!(appendix.contains("LAST-LINE"), "{appendix}");
    // the default keeps 4 KiB; 0 keeps none
    let (v, _) = env.json(&["-p", "default", "-r", "1", "--", "sh", "-c", prog]);
    assert_eq!(v["policies"][0]["runs"][0]["output"]["stdout_tail"].as_str().unwrap().len(), 4096);
    let (v, _) = env.json(&["-p", "default", "-r", "1", "--keep-output", "0", "--", "true"]);
    assert!(v["policies"][0]["runs"][0].get("output").is_none(), "{v}");
}

/// Each run records its energy and frequency (`power`), as `bw`'s results
/// do: joules per zone where RAPL or amd_energy is readable, else the
/// reason; on this project's VM there is no RAPL zone, and it says so.
#[test]
fn each_run_records_power_or_why_not() {
    let env = Env::new();
    let (v, out) = env.json(&["-p", "default", "-r", "2", "--", "sh", "-c", "sleep 0.05"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for run in v["policies"][0]["runs"].as_array().unwrap() {
        let p = &run["power"];
        assert!(p["seconds"].as_f64().unwrap() >= 0.05, "{p}");
        let zones = p["zones"].as_array().map_or(0, |z| z.len());
        let why = p["energy_unavailable"].as_str();
        assert!((zones > 0) != why.is_some(), "zones or a reason, not both: {p}");
        if std::path::Path::new("/sys/class/powercap/intel-rapl:0").exists() {
            assert!(zones > 0, "{p}");
        } else {
            assert!(why.unwrap().contains("RAPL") || why.unwrap().contains("amd_energy"), "{p}");
        }
    }
}

/// `--keep-output` past 1024 KiB, negative or not a number exits 2.
#[test]
fn keep_output_is_bounded() {
    let env = Env::new();
    for bad in ["1025", "-1", "lots", "1.5"] {
        env.exec(&["--keep-output", bad, "--", "true"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--keep-output"));
    }
}

#[test]
fn stderr_tail_keeps_the_last_twenty_lines() {
    let env = Env::new();
    let (v, _) = env.json(&[
        "-p",
        "default",
        "-r",
        "1",
        "--",
        "sh",
        "-c",
        "for i in $(seq 1 50); do echo line$i >&2; done; exit 1",
    ]);
    let tail = v["policies"][0]["runs"][0]["stderr_tail"].as_array().unwrap();
    assert_eq!(tail.len(), 20);
    assert_eq!(tail[0], "line31");
    assert_eq!(tail[19], "line50");
}

#[test]
fn fail_fast_stops_at_the_first_failure() {
    let env = Env::new();
    let (v, out) =
        env.json(&["-p", "default,local:0", "-r", "3", "--fail-fast", "--", "sh", "-c", "exit 7"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(policies(&v), ["default"]);
    assert_eq!(v["policies"][0]["runs"].as_array().unwrap().len(), 1);
    assert!(v["stopped"].as_str().unwrap().contains("--fail-fast"));
    // the stop reason, whole: in the document (its line, among the
    // top-level keys in their order), the error line and the saved run
    let why = "--fail-fast: default run 1/3 failed";
    assert_eq!(v["stopped"], why);
    let doc = String::from_utf8_lossy(&out.stdout);
    let top: Vec<&str> = doc
        .lines()
        .filter(|l| l.starts_with("  \"") && !l.starts_with("   "))
        .map(|l| l.split('"').nth(1).unwrap())
        .collect();
    assert_eq!(
        top,
        [
            "schema_version",
            "command",
            "repeat",
            "warmup",
            "metric",
            "compared_on",
            "direction",
            "baseline",
            "floor_pct",
            "policies",
            "best_policy",
            "best_reason",
            "tied_with_best",
            "stopped",
            "failed_runs",
        ],
        "{doc}"
    );
    let line = format!("  \"stopped\": \"{why}\",");
    assert!(doc.lines().any(|l| l == line), "{doc}");
    let err = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = lines_from(&err, "numaprobe: error:");
    assert_eq!(errors, [format!("numaprobe: error: 1 of 1 runs failed ({why})")], "{err}");
    let run = env.latest_run();
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["message"], format!("all 1 runs of the program failed ({why})"), "{run}");
    // and in the text, its own line
    let out = env
        .exec(&["-p", "default,local:0", "-r", "3", "--fail-fast", "--", "sh", "-c", "exit 7"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let stopped: Vec<&str> = lines_from(&text, "stopped");
    assert_eq!(stopped, [format!("stopped early: {why}")], "{text}");
}

#[test]
fn warmup_runs_happen_but_are_not_recorded() {
    let env = Env::new();
    let (v, out) = env.json(&[
        "-p",
        "default,local:0",
        "-r",
        "1",
        "--warmup",
        "2",
        "--",
        "sh",
        "-c",
        "echo x >> count.txt",
    ]);
    assert!(out.status.success());
    let runs = std::fs::read_to_string(env.path("count.txt")).unwrap().lines().count();
    assert_eq!(runs, 6, "2 policies x (2 warmups + 1 run)");
    assert_eq!(v["warmup"], 2);
    assert!(v["policies"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["runs"].as_array().unwrap().len() == 1));
}

#[test]
fn a_signal_ends_a_run_and_is_recorded() {
    let env = Env::new();
    let (v, _) = env.json(&["-p", "default", "-r", "1", "--", "sh", "-c", "kill -USR1 $$"]);
    let r = &v["policies"][0]["runs"][0];
    assert_eq!(r["signal"], 10);
    assert!(r["exit_code"].is_null());
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let env = Env::new();
    let pidfile = env.path("grandchild.pid");
    let script = format!("sleep 100 & echo $! > {}; sleep 100", pidfile.display());
    let (v, out) =
        env.json(&["-p", "default", "-r", "1", "--timeout", "0.5", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(1));
    let r = &v["policies"][0]["runs"][0];
    assert_eq!(r["timed_out"], true);
    assert_eq!(r["signal"], 15, "SIGTERM ends sh");
    assert!(r["wall_s"].as_f64().unwrap() < 50.0, "did not wait for sleep 100");
    let gc: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert!(!alive(gc), "grandchild {gc} survived the timeout");
    assert!(String::from_utf8_lossy(&out.stderr).contains("timed out"));
}

/// The command stops numaprobe itself with `signal` ($PPID: no shell in
/// between), then would sleep: numaprobe stops the child, keeps the one run
/// measured, names the cause and exits 128 + the signal's number.
fn a_signal_stops_the_child_and_keeps_what_was_measured(signal: &str, code: i32, cause: &str) {
    let env = Env::new();
    let script = format!("kill -{signal} $PPID; sleep 30");
    let (v, out) = env.json(&["-p", "default,local:0", "-r", "3", "--", "sh", "-c", &script]);
    assert_eq!(out.status.code(), Some(code), "128 + SIG{signal}");
    assert_eq!(policies(&v), ["default"]);
    let runs = v["policies"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["interrupted"], true);
    assert!(runs[0]["wall_s"].as_f64().unwrap() < 25.0, "did not wait for sleep 30");
    assert_eq!(v["stopped"], format!("interrupted ({cause})"));
    let run = env.latest_run();
    assert_eq!(run["status"], "incomplete", "{run}");
    assert_eq!(run["message"], format!("interrupted ({cause})"), "{run}");
}

#[test]
fn ctrl_c_stops_the_child_and_keeps_what_was_measured() {
    a_signal_stops_the_child_and_keeps_what_was_measured("INT", 130, "Ctrl-C");
}

#[test]
fn sigterm_stops_the_child_like_ctrl_c_and_names_itself() {
    a_signal_stops_the_child_and_keeps_what_was_measured("TERM", 143, "SIGTERM");
}

#[test]
fn local_and_interleave_on_node_0_place_the_pages_there() {
    let env = Env::new();
    let np = numaprobe();
    let (v, out) = env.json(&[
        "-p",
        "local:0,interleave:0",
        "-r",
        "1",
        "--",
        &np,
        "exec",
        "--touch",
        "16M",
        "--touch-hold-ms",
        "300",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(v["policies"][0]["mem_policy"], "bind");
    assert_eq!(v["policies"][0]["mem_nodes"], "0");
    assert_eq!(v["policies"][1]["mem_policy"], "interleave");
    for p in v["policies"].as_array().unwrap() {
        let pages = &p["runs"][0]["numa_pages"];
        assert!(pages["samples"].as_u64().unwrap() >= 1, "{pages}");
        let n0 = &pages["nodes"][0];
        assert_eq!(n0["node"], 0);
        assert!(n0["anon_kib"].as_u64().unwrap() >= 16 * 1024, "{pages}");
        assert_eq!(n0["anon_fraction"], 1.0);
        let d = &p["runs"][0]["numastat_delta"][0];
        assert_eq!(d["node"], 0);
        assert!(d["numa_hit"].as_u64().unwrap() >= 4096, "16 MiB is 4096 pages: {d}");
    }
}

#[test]
fn the_child_runs_under_the_policy() {
    let env = Env::new();
    let probe = "grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status; grep -o -m1 -E '(bind|interleave|weighted interleave|default)[^ ]*' /proc/self/numa_maps";
    for (policy, want) in
        [("local:0", "bind:0"), ("interleave:0", "interleave:0"), ("default", "default")]
    {
        let out = env
            .exec(&["-p", policy, "-r", "1", "--show-output", "--", "sh", "-c", probe])
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.lines().any(|l| l.starts_with(want)), "{policy}: {err}");
    }
}

#[test]
fn nodes_the_process_may_not_use_are_refused_before_starting() {
    let env = Env::new();
    // Whatever the machine: a node one past its highest id does not exist.
    let ids: Vec<u32> = std::fs::read_dir("/sys/devices/system/node")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .collect();
    let first = *ids.iter().min().expect("at least one node");
    let bad = ids.iter().max().unwrap() + 1;
    for policy in [
        format!("local:{bad}"),
        format!("remote:{first}/{bad}"),
        format!("cpus-only:{bad}"),
        format!("interleave:{first},{bad}"),
        format!("default,local:{bad}"),
    ] {
        env.exec(&["-p", &policy, "--", "sh", "-c", "echo ran > ran.txt"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("node(s) {bad} do not exist")));
    }
    assert!(!env.path("ran.txt").exists(), "nothing may run before a refusal");
    env.exec(&["-p", "nonsense", "--", "true"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown policy 'nonsense'"));
    // the policy refusals, each its whole error line
    for (policies, want) in [
        (
            "nonsense",
            "bad policy unknown policy 'nonsense' (known: default, local:N, remote:A/B, \
             interleave[:LIST], weighted[:LIST], cpus-only:N, all)",
        ),
        ("local", "bad policy 'local' needs a node, e.g. local:0"),
        ("local:x", "bad policy 'local:x': 'x' is not a node number"),
        ("remote:0", "bad policy 'remote:0': expected remote:CPU_NODE/MEM_NODE"),
        ("default:1", "bad policy 'default:1': default takes no argument"),
        ("local:0,,default", "bad policy empty entry in policy list 'local:0,,default'"),
        ("interleave:!x", "bad policy 'interleave:!x': bad node set: '!x': 'x' is not a number"),
    ] {
        let out =
            env.exec(&["-p", policies, "--", "sh", "-c", "echo ran > ran.txt"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{policies}");
        let err = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = lines_from(&err, "numaprobe: error:");
        assert_eq!(errors, [format!("numaprobe: error: {want}")], "{policies}");
    }
    assert!(!env.path("ran.txt").exists(), "nothing may run before a refusal");
}

#[test]
fn all_on_one_node_is_default_and_local_0() {
    let env = Env::new();
    let (v, out) = env.json(&["-r", "1", "--", "true"]);
    assert!(out.status.success());
    let nodes = std::fs::read_dir("/sys/devices/system/node")
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("node"))
        .count();
    if nodes == 1 {
        assert_eq!(policies(&v), ["default", "local:0"]);
    }
    assert_eq!(policies(&v)[0], "default");
}

#[test]
fn weighted_runs_or_is_refused_clearly() {
    let env = Env::new();
    let has = Path::new("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir();
    let a = env.exec(&["-p", "weighted", "-r", "1", "--", "true"]).assert();
    if has {
        a.success().stdout(predicate::str::contains("weighted-interleave 0"));
    } else {
        a.code(2).stderr(predicate::str::contains(
            "weighted interleave (MPOL_WEIGHTED_INTERLEAVE) is not supported by this kernel",
        ));
    }
}

/// `default` and `local:0`, `repeat` runs each, of a command printing the
/// metric `v=5`.
fn default_and_local_0_printing_v_5(repeat: &str) -> [&str; 10] {
    ["-p", "default,local:0", "-r", repeat, "--metric", r"v=(\d+)", "--", "sh", "-c", "echo v=5"]
}

#[test]
fn json_has_the_documented_fields() {
    let env = Env::new();
    let (v, out) = env.json(&default_and_local_0_printing_v_5("2"));
    assert!(out.status.success());
    for k in [
        "command",
        "repeat",
        "warmup",
        "metric",
        "compared_on",
        "direction",
        "baseline",
        "policies",
        "best_policy",
        "best_reason",
        "stopped",
    ] {
        assert!(v.get(k).is_some(), "missing top-level {k}");
    }
    assert_eq!(v["baseline"], "default");
    for p in v["policies"].as_array().unwrap() {
        for k in [
            "policy",
            "placement",
            "runs",
            "median_metric",
            "median_wall_s",
            "change_pct",
            "verdict",
            "noise_pct",
        ] {
            assert!(p.get(k).is_some(), "missing policy field {k}");
        }
        for r in p["runs"].as_array().unwrap() {
            for k in [
                "wall_s",
                "user_s",
                "sys_s",
                "max_rss_kib",
                "exit_code",
                "signal",
                "metric",
                "numa_pages",
                "numastat_delta",
            ] {
                assert!(r.get(k).is_some(), "missing run field {k}");
            }
            assert!(r["wall_s"].as_f64().unwrap() > 0.0);
            assert!(r["max_rss_kib"].as_u64().unwrap() > 0);
            assert_eq!(r["exit_code"], 0);
        }
    }
    assert_eq!(v["policies"][0]["verdict"], "baseline");
}

#[test]
fn table_compares_policies_with_default() {
    let env = Env::new();
    let out = env.exec(&default_and_local_0_printing_v_5("3")).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in ["vs default", "baseline", "local:0", "cpus ", "bind 0", "within noise"] {
        assert!(text.contains(want), "missing '{want}' in:\n{text}");
    }
    // the verdict's line, whole, and its reason in the `--json` document
    let best: Vec<&str> = lines_from(&text, "best");
    assert_eq!(best, ["best: none (no policy is better than 'default' beyond noise)"], "{text}");
    let (v, out) = env.json(&default_and_local_0_printing_v_5("3"));
    assert!(out.status.success());
    assert_eq!(v["best_reason"], "no policy is better than 'default' beyond noise");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("verdict"), "{err}");
}

#[test]
fn two_runs_give_no_verdict_and_say_how_many_are_needed() {
    let env = Env::new();
    let (v, out) = env.json(&default_and_local_0_printing_v_5("2"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(v["policies"][0]["verdict"], "baseline");
    assert_eq!(v["policies"][1]["verdict"], "undecided");
    assert!(v["best_policy"].is_null());
    let why = "no better/worse verdict from fewer than 3 successful runs per policy \
               ('default' has 2, 'local:0' has 2); run with --repeat 3 or more";
    assert_eq!(v["best_reason"], why);
    // the same words warned about, the one line
    let err = String::from_utf8_lossy(&out.stderr);
    let warned: Vec<&str> = lines_with(&err, "verdict");
    assert_eq!(warned, [format!("numaprobe: warning: {why}")], "{err}");

    // one run each, in the text: the verdict's line and the warning, whole
    let out = env.exec(&default_and_local_0_printing_v_5("1")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let why = "no better/worse verdict from fewer than 3 successful runs per policy \
               ('default' has 1, 'local:0' has 1); run with --repeat 3 or more";
    let best: Vec<&str> = lines_from(&text, "best");
    assert_eq!(best, [format!("best: none ({why})")], "{text}");
    let err = String::from_utf8_lossy(&out.stderr);
    let warned: Vec<&str> = lines_with(&err, "verdict");
    assert_eq!(warned, [format!("numaprobe: warning: {why}")], "{err}");
}

/// Three policies whose metrics the run's count decides (the runs go
/// default, local:0, interleave:0, round by round): `v` is 10 under
/// default and 20 under the others, and interleave:0 gives it in the
/// first round only; `w` is 10 under default and 20 under the others.
/// The reasons, whole: the best by `v` with interleave:0 undecided (also
/// warned about), and the best by `w` tied with the other.
#[test]
fn the_best_policy_and_why_are_said_whole() {
    let env = Env::new();
    let script = "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; \
                  case $((n % 3)) in 1) echo v=10 w=10;; 2) echo v=20 w=20;; \
                  0) echo w=20; if [ $n -le 3 ]; then echo v=20; fi;; esac; exit 0";
    let args = [
        "-p",
        "default,local:0,interleave:0",
        "-r",
        "3",
        "--metric",
        r"v=v=(\d+)",
        "--metric",
        r"w=w=(\d+)",
        "--",
        "sh",
        "-c",
        script,
    ];
    let undecided = "no better/worse verdict from fewer than 3 successful runs per policy \
                     ('interleave:0' has 1); run with --repeat 3 or more";
    let by_v = format!("'local:0' is +100.0% against 'default', beyond noise; {undecided}");
    let by_w =
        "'interleave:0' is +100.0% against 'default', beyond noise; within noise of it: local:0";
    let (v, out) = env.json(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(v["best_policy"], "local:0");
    assert_eq!(v["best_reason"], by_v.as_str());
    assert_eq!(v["named_metrics"][1]["best_reason"], by_w);
    let err = String::from_utf8_lossy(&out.stderr);
    let warned: Vec<&str> = lines_with(&err, "verdict");
    assert_eq!(warned, [format!("numaprobe: warning: {undecided}")], "{err}");

    // the text, from a count started afresh
    let out = Env::new().exec(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let best: Vec<&str> = lines_from(&text, "best");
    assert_eq!(
        best,
        [
            format!("best: local:0 ({by_v})"),
            format!(r"best by w /w=(\d+)/ (higher is better): interleave:0 ({by_w})"),
        ],
        "{text}"
    );
}

/// A baseline without the quantity compared: no best, and why, whole.
#[test]
fn a_baseline_without_the_quantity_gives_no_best_and_says_why() {
    let env = Env::new();
    let p = ["-p", "default,local:0", "-r", "1"];
    for (more, why) in [
        (
            &[r"--metric", r"x=(\d+)", "--", "true"][..],
            "no best policy: the baseline 'default' has no successful run with a metric",
        ),
        (
            &[r"--metric", r"x=x=(\d+)", "--", "true"][..],
            "no best policy: the baseline 'default' has no successful run with metric 'x'",
        ),
        (&["--", "false"][..], "no best policy: the baseline 'default' has no successful run"),
    ] {
        let (v, _) = env.json(&[&p[..], more].concat());
        assert_eq!(v["best_reason"], why);
        let out = env.exec(&[&p[..], more].concat()).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let best: Vec<&str> = lines_from(&text, "best");
        assert_eq!(best, [format!("best: none ({why})")], "{text}");
    }
}

#[test]
fn runs_under_five_ms_are_warned_about() {
    let env = Env::new();
    let (v, out) = env.json(&["-p", "default", "-r", "3", "--", "true"]);
    assert!(out.status.success());
    let walls: Vec<f64> = v["policies"][0]["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["wall_s"].as_f64().unwrap())
        .collect();
    let short = walls.iter().filter(|&&w| w < 0.005).count();
    let err = String::from_utf8_lossy(&out.stderr);
    // `true` takes about a millisecond; on a loaded machine some runs may
    // not, and then the warning must count exactly the short ones.
    if short > 0 {
        let want = format!("{short} of 3 measured runs took under 5 ms");
        assert!(err.contains(&want), "{walls:?}: {err}");
    } else {
        assert!(!err.contains("under 5 ms"), "{walls:?}: {err}");
    }
    // a run of 50 ms is never warned about
    let (_, out) = env.json(&["-p", "default", "-r", "3", "--", "sleep", "0.05"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("under 5 ms"));
}

#[test]
fn each_policy_is_saved_into_the_store() {
    let env = Env::new();
    env.exec(&["-p", "default,local:0", "-r", "1", "--", "true"]).assert().success();
    let db = store::Store::open_existing(env.path("results.db")).unwrap();
    let runs = db.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    let loaded = db.load_run(runs[0].id).unwrap();
    let saved: Vec<&results::exec::PolicyResult> = loaded
        .records()
        .filter_map(|r| match r {
            results::Record::Exec(p) => Some(p.as_ref()),
            _ => None,
        })
        .collect();
    assert_eq!(saved.len(), 2);
    assert_eq!(saved[1].policy, "local:0");
}

#[test]
fn touch_helper_reports_its_own_pages() {
    Command::cargo_bin("numaprobe")
        .unwrap()
        .args(["exec", "--touch", "4M", "--touch-hold-ms", "0"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"touch: 4194304 bytes in [0-9.]+ s").unwrap())
        .stdout(predicate::str::is_match(r"anon KiB per node: N0=\d+").unwrap());
    Command::cargo_bin("numaprobe").unwrap().args(["exec", "--touch", "lots"]).assert().code(2);
}

/// The placement proof on a real multi-node kernel: a 2-node guest (one
/// socket per node) runs the memory-touching helper under `local:0`,
/// `remote:0/1` and `interleave`, and the pages found match each policy.
/// Gated: `cargo test -p numaprobe --features guest-tests --test exec_cli`.
#[cfg(feature = "guest-tests")]
#[test]
fn guest_two_nodes_pages_follow_the_policy() {
    let one_liner =
        "numaprobe exec --no-save --json --repeat 1 --policies local:0,remote:0/1,interleave \
                     -- numaprobe exec --touch 32M --touch-hold-ms 500";
    let boot = harness::Machine::new("exec-2node")
        .sockets(2, 1)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(1, 0)])
        .distances(&[&[10, 21], &[21, 10]])
        .run("exec", one_liner)
        .boot();
    let out = boot.get("exec");
    let v = out.expect_rc(0).json();
    assert_eq!(policies(&v), ["local:0", "remote:0/1", "interleave"], "{out}");
    let anon = |p: &Value, node: u64| -> (u64, f64) {
        let n = p["runs"][0]["numa_pages"]["nodes"]
            .as_array()
            .unwrap_or_else(|| panic!("no numa_pages in {p}"))
            .iter()
            .find(|n| n["node"] == node);
        n.map_or((0, 0.0), |n| {
            (n["anon_kib"].as_u64().unwrap(), n["anon_fraction"].as_f64().unwrap())
        })
    };
    let stat = |p: &Value, node: u64, key: &str| -> u64 {
        p["runs"][0]["numastat_delta"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["node"] == node)
            .map_or(0, |d| d[key].as_u64().unwrap())
    };
    let pol = |i: usize| &v["policies"][i];
    // local:0: everything anonymous on node 0, allocated by a task on node 0
    let (kib, frac) = anon(pol(0), 0);
    assert!(kib >= 32 * 1024 && frac >= 0.95, "local:0: {kib} KiB, {frac}\n{out}");
    assert!(stat(pol(0), 0, "local_node") >= 8192, "{out}");
    // remote:0/1: CPUs of node 0, pages on node 1, counted as other_node there
    assert_eq!(pol(1)["mem_nodes"], "1");
    let (kib, frac) = anon(pol(1), 1);
    assert!(kib >= 32 * 1024 && frac >= 0.95, "remote:0/1: {kib} KiB, {frac}\n{out}");
    assert!(stat(pol(1), 1, "other_node") >= 8192, "{out}");
    // interleave over both: about half on each
    for node in [0, 1] {
        let (kib, frac) = anon(pol(2), node);
        assert!(
            kib >= 14 * 1024 && (frac - 0.5).abs() <= 0.1,
            "interleave node {node}: {kib} KiB, {frac}\n{out}"
        );
        // counted per allocation (a THP is one), so only "some" is certain
        assert!(stat(pol(2), node, "interleave_hit") >= 1, "{out}");
    }
}

/// `exec` honours the measuring lock while `run` holds it; the command is
/// never started.
#[test]
fn a_held_measuring_lock_makes_exec_refuse_naming_the_holder() {
    let env = Env::new();
    let _held = lock::MeasureLock::acquire_at(&env.path("measure.lock")).unwrap();
    let out = env
        .exec(&["-p", "default", "-r", "1", "--", "sh", "-c", "echo ran > ran.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_refused_by_our_lock(&err);
    assert!(!env.path("ran.txt").exists(), "the command must not run");
}

/// A `sleep` argument no other test or run uses (GNU sleep takes
/// fractions), so a test finds its own processes and nobody else's.
fn sleep_marker(n: u32) -> String {
    format!("300.{}{n}", std::process::id())
}

/// Live `sleep MARKER` processes (zombies count as gone).
fn sleepers(marker: &str) -> Vec<i32> {
    let want = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                && alive(*pid)
        })
        .collect()
}

/// Waits up to `secs` for every `sleep MARKER` to be gone; kills and
/// returns those left (so a failing test leaves nothing behind).
fn left_running(marker: &str, secs: u64) -> Vec<i32> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let left = sleepers(marker);
        if left.is_empty() || std::time::Instant::now() > until {
            for &pid in &left {
                // SAFETY: kill has no memory effects; these are our test's sleeps.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `--timeout` ends a process that left the group with `setsid` too:
/// orphans come to numaprobe (a subreaper) and the tagged ones are killed
/// after the run.
#[test]
fn timeout_also_ends_what_left_the_group_with_setsid() {
    let env = Env::new();
    let m = sleep_marker(1);
    let script = format!("setsid sleep {m} & sleep {m}");
    let (v, out) =
        env.json(&["-p", "default", "-r", "1", "--timeout", "1", "--", "sh", "-c", &script]);
    let left = left_running(&m, 3);
    assert!(
        left.is_empty(),
        "sleep {m} {left:?} survived the timeout: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["policies"][0]["runs"][0]["timed_out"], true);
}

/// `kill -9` of numaprobe ends the command's whole group, not only the
/// child (PDEATHSIG), whose children would run on re-parented to init: the
/// watchdog ends the group when numaprobe dies.
#[test]
fn kill_9_of_numaprobe_ends_the_commands_whole_tree() {
    let env = Env::new();
    let m = sleep_marker(2);
    let script = format!("(sleep {m} &) ; sleep {m}");
    let mut np = std::process::Command::new(numaprobe())
        .env("NUMAPROBE_DB", env.path("results.db"))
        .env("NUMAPROBE_LOCK", env.path("measure.lock"))
        .args(["--quiet", "exec", "-p", "default", "-r", "1", "--no-save", "--", "sh", "-c"])
        .arg(&script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sleepers(&m).len() < 2 {
        assert!(std::time::Instant::now() < until, "the two sleeps never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    np.kill().unwrap(); // SIGKILL
    np.wait().unwrap();
    let left = left_running(&m, 5);
    assert!(left.is_empty(), "sleep {m} {left:?} outlived a kill -9 of numaprobe");
}

/// The `exec` cgroups of the numaprobe process `pid` still present.
fn run_cgroups(pid: u32) -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let v2 = mounts
        .lines()
        .find(|l| l.contains(" - cgroup2 "))
        .and_then(|l| l.split(' ').nth(4))
        .expect("a cgroup2 file system is mounted (these tests need one)");
    let ours = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = ours.lines().find_map(|l| l.strip_prefix("0::")).unwrap();
    let dir = Path::new(v2).join(path.trim_start_matches('/'));
    let prefix = format!("numaprobe-exec-{pid}-");
    std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// A process that left the group (`setsid`) and dropped the tag
/// (`env -i`) does not outlive a `kill -9` of numaprobe: each run has a
/// cgroup of its own, which the watchdog (a session of its own) kills
/// whole and removes when numaprobe dies.
#[test]
fn kill_9_of_numaprobe_kills_setsid_and_env_i_grandchildren_through_the_cgroup() {
    let env = Env::new();
    let m = sleep_marker(3);
    let script = format!(
        "setsid sleep {m} & env -i setsid sh -c 'sleep {m}; true' & (setsid sleep {m} &) ; sleep {m}"
    );
    let mut np = std::process::Command::new(numaprobe())
        .env("NUMAPROBE_DB", env.path("results.db"))
        .env("NUMAPROBE_LOCK", env.path("measure.lock"))
        .args(["--quiet", "exec", "-p", "default", "-r", "1", "--no-save", "--", "sh", "-c"])
        .arg(&script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while sleepers(&m).len() < 4 {
        assert!(std::time::Instant::now() < until, "the four sleeps never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let cgroups = run_cgroups(np.id());
    np.kill().unwrap(); // SIGKILL
    np.wait().unwrap();
    let left = left_running(&m, 10);
    assert!(left.is_empty(), "sleep {m} {left:?} outlived a kill -9 of numaprobe");
    assert_eq!(cgroups.len(), 1, "the run had its cgroup: {cgroups:?}");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !run_cgroups(np.id()).is_empty() {
        assert!(std::time::Instant::now() < until, "the run's cgroup was not removed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Each run's record says how its process tree was held: here, a cgroup
/// of its own, removed after the run; what escaped the group into its
/// own session without the tag is ended at the run's end.
#[test]
fn each_run_records_its_cgroup_and_ends_what_escaped_the_group() {
    let env = Env::new();
    let m = sleep_marker(4);
    let script = format!("env -i setsid sh -c 'sleep {m}; true' & true");
    let (v, out) = env.json(&["-p", "default", "-r", "2", "--", "sh", "-c", &script]);
    let left = left_running(&m, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(left.is_empty(), "sleep {m} {left:?} outlived the run");
    for r in v["policies"][0]["runs"].as_array().unwrap() {
        let how = r["containment"].as_str().unwrap_or_default();
        assert!(how.starts_with("cgroup v2 ") && how.contains("numaprobe-exec-"), "{r}");
    }
    // how many of the escaped shell's processes are still there at the
    // run's end depends on how far it got; that some were ended does not
    for rep in ["default run 1/2", "default run 2/2"] {
        let line = err.lines().find(|l| l.contains(rep)).unwrap_or_default();
        assert!(line.contains("process(es) running"), "{rep}: {err}");
    }
}

/// Where no cgroup can be made (here every cgroup mount is read-only, in
/// a private mount namespace), the run says so in its record and keeps
/// the process group and subreaper.
#[test]
fn on_read_only_cgroup_mounts_the_run_record_says_it_had_no_cgroup() {
    let env = Env::new();
    let script = r#"set -e
        for m in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do mount -o remount,ro,bind "$m"; done
        NUMAPROBE_DB="$D/results.db" NUMAPROBE_LOCK="$D/measure.lock" \
            "$NP" --json exec -p default -r 1 -- true"#;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let out = std::process::Command::new("unshare")
        .arg(if root { "-m" } else { "-rm" })
        .args(["sh", "-c", script])
        .env("NP", numaprobe())
        .env("D", env.dir.path())
        .output()
        .expect("this test needs unshare and findmnt (util-linux)");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let how = v["policies"][0]["runs"][0]["containment"].as_str().unwrap_or_default();
    assert!(how.starts_with("process group only") && how.contains("no cgroup"), "{how}");
    assert!(how.contains("Read-only file system"), "{how}");
}

/// The command `exec` prints and stores is shell-quoted: pasted into
/// `sh -c` it runs the same program with the same words (`echo X: 42` is
/// one word of `sh -c`, not three).
#[test]
fn the_printed_and_stored_command_pastes_back_through_sh() {
    let env = Env::new();
    let out =
        env.exec(&["-p", "default", "-r", "1", "--", "sh", "-c", "echo X: 42"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let printed = text
        .lines()
        .find_map(|l| l.strip_prefix("numaprobe exec: "))
        .unwrap_or_else(|| panic!("no command line in:\n{text}"));
    assert_eq!(printed, "sh -c 'echo X: 42'");
    let stored = env.latest_run()["command_line"].as_str().unwrap().to_string();
    assert!(stored.ends_with(" -- sh -c 'echo X: 42'"), "{stored}");
    for line in [printed.to_string(), stored.split_once(" -- ").unwrap().1.to_string()] {
        let back = std::process::Command::new("sh").arg("-c").arg(&line).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&back.stdout), "X: 42\n", "{line}");
    }
}

/// `--policies all` (the default) on this one-node machine says what it
/// ran and what it left out, and why.
#[test]
fn policies_all_says_what_it_skipped_and_why() {
    let env = Env::new();
    let out = env.exec(&["-r", "1", "--", "true"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| {
            l.starts_with(
                "numaprobe: --policies all on this machine is default,local:0; left out: ",
            )
        })
        .unwrap_or_else(|| panic!("{err}"));
    assert!(line.contains("remote:A/B and cpus-only:A: no other memory node"), "{line}");
    assert!(line.contains("interleave and weighted: nothing to interleave over"), "{line}");
    // named policies: nothing to say
    let out = env.exec(&["-p", "default", "-r", "1", "--", "true"]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("left out"));
}
