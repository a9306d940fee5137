//! `numaprobe bw` end to end: argument errors exit 2 with a message naming
//! the bad value, before anything is allocated; a tiny real run gives
//! well-formed, validated JSON.

#[path = "support/lock.rs"]
mod lock_support;
use lock_support::assert_refused_by_our_lock;
use lock_support::private_lock;

use assert_cmd::Command;
use predicates::prelude::*;

fn bw() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", private_lock("bw")).arg("bw");
    c
}

fn usage_error(args: &[&str], needle: &str) {
    bw().args(args).assert().code(2).stderr(predicate::str::contains(needle));
}

#[test]
fn zero_threads_is_a_usage_error() {
    usage_error(&["--threads", "0"], "invalid value '0' for '--threads <N>'");
}

#[test]
fn unknown_kernel_is_a_usage_error() {
    usage_error(&["--kernel", "copy,bogus"], "bogus");
}

#[test]
fn unknown_isa_and_store_mode_are_usage_errors() {
    usage_error(&["--isa", "mmx"], "mmx");
    usage_error(&["--stores", "sometimes"], "sometimes");
    usage_error(&["--isa", "scalar", "--stores", "nt"], "non-temporal");
}

#[test]
fn invalid_nodes_and_cpus_are_usage_errors() {
    usage_error(&["--cpu-node", "4095", "--size", "1M"], "4095");
    usage_error(&["--mem-node", "4095", "--size", "1M"], "4095");
    usage_error(&["--cpus", "100000", "--size", "1M"], "100000");
    usage_error(&["--cpus", "x-y"], "x-y");
}

#[test]
fn size_beyond_what_the_node_can_spare_is_refused() {
    usage_error(&["--size", "1T"], "can spare");
    usage_error(&["--size", "12 parsecs"], "parsecs");
}

#[test]
fn node_flags_do_not_combine_with_matrix() {
    usage_error(
        &["--matrix", "--cpu-node", "0"],
        "'--matrix' cannot be used with '--cpu-node <NODE>'",
    );
}

#[test]
fn tiny_json_run_has_the_documented_structure() {
    let out = bw()
        .args([
            "--json",
            "--quiet",
            "--size",
            "1M",
            "--budget",
            "0.05",
            "--min-reps",
            "2",
            "--kernel",
            "copy,triad,read,write,rw3:1",
            "--threads",
            "1",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["unit"], "GB/s = 1e9 bytes/s");
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["interrupted"], false);
    let results = doc["results"].as_array().unwrap();
    let kernels: Vec<&str> = results.iter().map(|r| r["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["copy", "triad", "read", "write", "rw3:1"]);
    for r in results {
        assert_eq!(r["mode"], "local");
        assert_eq!(r["threads"], 1);
        assert_eq!(r["array_bytes"], 1 << 20);
        assert_eq!(r["validated"], true);
        assert_eq!(r["size_rule_ok"], false, "1 MiB breaks STREAM's rule on any real LLC");
        assert!(r["reps"].as_u64().unwrap() >= 2);
        for f in ["best_gbs", "median_gbs", "min_gbs", "max_gbs"] {
            assert!(r[f].as_f64().unwrap() > 0.0, "{f} in {r}");
        }
        assert!(r["min_gbs"].as_f64() <= r["median_gbs"].as_f64());
        assert!(r["median_gbs"].as_f64() <= r["best_gbs"].as_f64());
        // placement is real on this machine: every page on the bound node
        let frac = r["placement"]["check"]["fraction"].as_f64().unwrap();
        assert!((0.99..=1.0).contains(&frac), "placement {frac}");
        assert_eq!(r["placement"]["status"], "verified");
        assert_eq!(r["placement"]["check"]["ok"], true);
        assert!(r["cpu_node"].is_u64() && r["mem_node"].is_u64());
        assert!(!r["isa"].as_str().unwrap().is_empty());
    }
    let bytes = |i: usize| results[i]["bytes_per_rep"].as_u64().unwrap();
    // STREAM byte counting: copy 16, triad 24, read 8, write 8, rw3:1 32 per element
    let n = (1u64 << 20) / 8;
    assert_eq!(
        [bytes(0), bytes(1), bytes(2), bytes(3), bytes(4)],
        [16 * n, 24 * n, 8 * n, 8 * n, 32 * n]
    );
    assert_eq!(results[2]["stores"], "none");
}

/// Two threads: the bytes counted are both threads' (each moves its half
/// of every array), and the figures are those bytes over the repetitions'
/// times: the median figure is the bytes over the median time (for an
/// odd count of repetitions; for an even one, the mean of the two middle
/// figures, which is at least that).
#[test]
fn two_threads_count_both_threads_bytes() {
    let out = bw()
        .args(["--json", "--quiet", "--size", "2M", "--budget", "0.05", "--min-reps", "3"])
        .args(["--kernel", "copy,read,rw3:1", "--threads", "2", "--pages", "4k"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let n = (2u64 << 20) / 8; // elements per array, both threads
    for (r, per_element) in doc["results"].as_array().unwrap().iter().zip([16, 8, 32]) {
        assert_eq!(r["threads"], 2, "{r}");
        assert_eq!(r["array_bytes"], 2 << 20, "{r}");
        let bytes = r["bytes_per_rep"].as_u64().unwrap();
        assert_eq!(bytes, per_element * n, "{r}");
        let median = r["median_gbs"].as_f64().unwrap();
        let at_median_time = bytes as f64 / r["median_rep_s"].as_f64().unwrap() / 1e9;
        if r["reps"].as_u64().unwrap() % 2 == 1 {
            assert!(
                (median / at_median_time - 1.0).abs() < 1e-9,
                "{median} vs {at_median_time}: {r}"
            );
        } else {
            assert!(median >= at_median_time * (1.0 - 1e-9), "{median} vs {at_median_time}: {r}");
        }
        assert_eq!(r["placement"]["status"], "verified", "{r}");
    }
}

#[test]
fn forced_scalar_isa_is_recorded() {
    let out = bw()
        .args([
            "--json",
            "--quiet",
            "--size",
            "256K",
            "--budget",
            "0.02",
            "--min-reps",
            "1",
            "--kernel",
            "add",
            "--threads",
            "1",
            "--isa",
            "scalar",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["results"][0]["isa"], "scalar");
    assert_eq!(doc["results"][0]["stores"], "regular");
}

#[test]
fn small_size_warns_about_the_cache_rule() {
    bw().args([
        "--size",
        "256K",
        "--budget",
        "0.02",
        "--min-reps",
        "1",
        "--kernel",
        "copy",
        "--threads",
        "1",
    ])
    .assert()
    .success()
    .stdout(predicate::str::contains("GB/s = 1e9 bytes/s"))
    .stderr(predicate::str::contains("below 4x the last-level cache"));
    // The whole line (the cache's size is this machine's).
    let out = bw()
        .args(["--size", "256K", "--budget", "0.02", "--min-reps", "1", "--kernel", "copy"])
        .args(["--threads", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    let line = err.lines().find(|l| l.contains("below 4x")).expect("the warning");
    let re = predicate::str::is_match(
        r"^numaprobe: warning: --size 256 KiB per array is below 4x the last-level cache the threads share \([0-9.]+ [KMGT]?i?B\): figures may include cache bandwidth$",
    )
    .unwrap();
    assert!(re.eval(line), "{line}");
}

/// `bw` honours the measuring lock while `run` holds it.
#[test]
fn a_held_measuring_lock_makes_bw_refuse_naming_the_holder() {
    let path = private_lock("bw");
    let _held = lock::MeasureLock::acquire_at(&path).unwrap();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_LOCK", &path)
        .args(["bw", "--size", "1M", "--kernel", "triad", "--threads", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing measured");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_refused_by_our_lock(&err);
    assert!(err.contains(&path.display().to_string()), "{err}");
}

/// `bw --save`/`--label` save a run (in `--db`) that `list` and `show`
/// find.
#[test]
fn bw_with_a_label_saves_a_run_that_list_and_show_find() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let tiny = ["--size", "1M", "--budget", "0.05", "--min-reps", "2", "--threads", "1"];
    bw().arg("--db").arg(&db).args(tiny).args(["--kernel", "triad", "--quiet"]).assert().success();
    assert!(!db.exists(), "without --save or --label nothing is saved");
    bw().arg("--db")
        .arg(&db)
        .args(tiny)
        .args(["--kernel", "copy,triad", "--label", "bw test"])
        .assert()
        .success()
        .stderr(predicate::str::contains("saved as run 1 (complete)"));
    bw().arg("--db")
        .arg(&db)
        .args(tiny)
        .args(["--kernel", "triad", "--save", "--quiet"])
        .assert()
        .success();
    let np = |args: &[&str]| {
        let out = Command::cargo_bin("numaprobe")
            .unwrap()
            .arg("--db")
            .arg(&db)
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let list = np(&["list"]);
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{list}");
    assert_eq!(runs[0]["label"], "bw test");
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[0]["result_count"], 2);
    assert!(runs[1]["label"].is_null());
    let shown = np(&["show", "bw test"]);
    let results = shown["results"].as_array().unwrap();
    let kernels: Vec<&str> =
        results.iter().map(|r| r["payload"]["kernel"].as_str().unwrap()).collect();
    assert_eq!(kernels, ["copy", "triad"]);
    assert!(results.iter().all(|r| r["kind"] == "bw"));
    assert!(shown["machine_fingerprint"].as_str().is_some_and(|f| f.len() == 16), "{shown}");
}

/// A panic in a measuring thread is numaprobe's bug: exit 1 with
/// the request for a bug report, never a usage error (2) or Rust's 101.
/// Nothing on the command line provokes one, so the test uses the hook
/// that debug builds honour (`NUMAPROBE_TEST_PANIC`, absent from release).
#[test]
fn a_panic_in_a_measuring_thread_is_a_bug_report_with_exit_1() {
    let out = bw()
        .env("NUMAPROBE_TEST_PANIC", "team-worker")
        .args(["--size", "1M", "--kernel", "triad", "--threads", "1", "--budget", "0.05"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("deliberate test panic in team-worker"), "the panic is shown: {err}");
    assert!(
        err.contains("this is a bug in numaprobe") && err.contains("please report it"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "no figure printed: {}", String::from_utf8_lossy(&out.stdout));
}

/// Every result records energy and frequency over its timed repetitions,
/// or says why each is unavailable (no RAPL zone, no permission, a VM): on
/// this development VM, the reasons. The readers themselves are tested on
/// fake trees (advance, wrap, unreadable, hostile files) in
/// `counters::power`.
#[test]
fn every_result_records_power_and_frequency_or_why_not() {
    let out = bw()
        .args(["--json", "--quiet", "--size", "1M", "--budget", "0.05", "--min-reps", "2"])
        .args(["--kernel", "copy,read", "--threads", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let p = &r["power"];
        assert!(p["seconds"].as_f64().unwrap() > 0.0, "{p}");
        let zones = p["zones"].as_array().unwrap();
        match p["energy_unavailable"].as_str() {
            Some(why) => assert!(zones.is_empty() && !why.is_empty(), "{p}"),
            None => assert!(
                zones.iter().all(|z| z["joules"].as_f64().unwrap() >= 0.0) && !zones.is_empty(),
                "{p}"
            ),
        }
        match p["mean_mhz"].as_f64() {
            Some(mhz) => {
                assert!(mhz > 0.0 && p["frequency_source"].is_string(), "{p}")
            }
            None => assert!(!p["frequency_unavailable"].as_str().unwrap().is_empty(), "{p}"),
        }
    }
}

/// The one line of stderr a refused `bw` says (a memory warning may join
/// stderr on another line): exits 2, and returns that line.
fn refusal_line(args: &[&str], pattern: &str) -> String {
    refusal_line_of(bw().args(args), pattern)
}

fn refusal_line_of(cmd: &mut Command, pattern: &str) -> String {
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    let re = predicate::str::is_match(pattern).unwrap();
    let found = err.lines().find(|l| re.eval(l));
    found.unwrap_or_else(|| panic!("no line matches {pattern} in:\n{err}")).to_string()
}

/// The plan's refusals word the flag they refuse, whole line pinned.
#[test]
fn plan_refusals_name_their_flag_word_for_word() {
    let nt = ["--isa", "scalar", "--stores", "nt"];
    let want = "numaprobe: error: --stores nt: the scalar kernels have no non-temporal stores \
                (use --stores regular or another --isa)";
    assert_eq!(refusal_line(&nt, "^numaprobe: error: --stores"), want);
    let more = ["--cpus", "+0", "--threads", "2", "--size", "1M"];
    let want = "numaprobe: error: --threads 2 is more than the 1 CPU(s) given with --cpus";
    assert_eq!(refusal_line(&more, "^numaprobe: error: --threads"), want);
    // The node's usable CPUs depend on the machine: their count and list
    // are the only free parts of the line.
    refusal_line(
        &["--threads", "65536", "--size", "1M"],
        r"^numaprobe: error: --threads 65536: node [0-9]+ has only [0-9]+ usable CPU\(s\) \([0-9,-]+\)$",
    );
    // What the node can spare depends on the machine too.
    refusal_line(
        &["--size", "1T"],
        r"^numaprobe: error: --size 1 TiB per array x 3 arrays needs 3 TiB, more than the memory node\(s\) can spare \([0-9.]+ [KMGT]?i?B\); use --size [0-9.]+ [KMGT]?i?B or less$",
    );
}

/// `advise interleave` measures with bw's plan: its `--size` refusal is
/// bw's line, word for word.
#[test]
fn advise_size_refusal_is_bws_line() {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", private_lock("bw-advise"));
    c.args(["advise", "interleave", "--size", "1T", "--quiet"]);
    refusal_line_of(
        &mut c,
        r"^numaprobe: error: --size 1 TiB per array x 3 arrays needs 3 TiB, more than the memory node\(s\) can spare \([0-9.]+ [KMGT]?i?B\); use --size [0-9.]+ [KMGT]?i?B or less$",
    );
}
