//! End-to-end tests of `numaprobe place` on the real machine. They need
//! node 0 with memory (true on every Linux NUMA-enabled kernel) and only
//! small buffers; multi-node behaviour is proven in the emulated guests.

#[path = "support/lock.rs"]
mod lock_support;
use lock_support::assert_refused_by_our_lock;
use lock_support::private_lock;

use assert_cmd::Command;
use serde_json::Value;

fn place(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_LOCK", private_lock("place"))
        .arg("place")
        .args(args)
        .assert()
}

fn json_of(a: &assert_cmd::assert::Assert) -> Value {
    let out = &a.get_output().stdout;
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

fn stderr_of(a: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn bind_to_node_zero_puts_every_page_there() {
    let a = place(&["--json", "--mem-nodes", "0", "--size", "8M", "--pages", "nothp"]).success();
    let j = json_of(&a);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["policy"]["mode"], "bind");
    assert_eq!(j["policy"]["nodes"], "0");
    assert_eq!(j["policy_read_back"]["mode"], "bind");
    assert_eq!(j["applied_with"], "mbind");
    assert_eq!(j["size_bytes"], 8 << 20);
    // 8 MiB of 4 KiB pages, every one asked about (default samples 65536).
    assert_eq!(j["placement"]["sampled_pages"], 2048);
    assert_eq!(j["page_counts"]["0"], 2048);
    assert_eq!(j["placement"]["not_present_pages"], 0);
    assert!(j["placement"]["fraction"].as_f64().unwrap() >= 0.99);
    assert_eq!(j["placement"]["expected"], "0");
    assert_eq!(j["placement"]["ok"], true);
    assert_eq!(j["ok"], true);
    assert_eq!(j["pages"]["requested"], "nothp");
    assert_eq!(j["pages"]["obtained"], "base");
    assert_eq!(j["pages"]["thp_bytes"], 0);
    assert!(j["numastat_delta"]["0"]["numa_hit"].as_u64().unwrap() >= 2048);
    assert!(j["numa_balancing_enabled"].is_boolean() || j["numa_balancing_enabled"].is_null());
}

#[test]
fn set_mempolicy_path_and_sampling_work_too() {
    let a = place(&[
        "--json",
        "--mem-nodes",
        "0",
        "--via",
        "thread",
        "--size",
        "8M",
        "--pages",
        "nothp",
        "--samples",
        "100",
    ])
    .success();
    let j = json_of(&a);
    assert_eq!(j["applied_with"], "set_mempolicy");
    // The range itself has no policy; the thread's did the placing.
    assert_eq!(j["policy_read_back"]["mode"], "default");
    assert_eq!(j["placement"]["sampled_pages"], 100);
    assert_eq!(j["placement"]["total_pages"], 2048);
    assert_eq!(j["page_counts"]["0"], 100);
}

#[test]
fn interleave_over_all_nodes_reports_a_spread_check() {
    let a = place(&["--json", "--policy", "interleave", "--mem-nodes", "all", "--size", "4M"])
        .success();
    let j = json_of(&a);
    assert_eq!(j["policy"]["mode"], "interleave");
    assert_eq!(j["placement"]["spread"]["ok"], true);
    assert_eq!(j["placement"]["spread"]["expected_share"]["0"], 1.0);
}

#[test]
fn a_wrong_expectation_fails_with_exit_1_after_printing_the_json() {
    let a = place(&["--json", "--mem-nodes", "0", "--expect", "1", "--size", "4M"]).code(1);
    let j = json_of(&a);
    assert_eq!(j["ok"], false);
    assert_eq!(j["expect_source"], "--expect");
    assert_eq!(j["placement"]["expected"], "1");
    assert_eq!(j["placement"]["fraction"], 0.0);
    let err = stderr_of(&a);
    assert!(err.contains("placement check failed") && err.contains("node 0 100.0%"), "{err}");
}

#[test]
fn a_nonexistent_node_is_a_usage_error() {
    let a = place(&["--json", "--mem-nodes", "999", "--size", "4M"]).code(2);
    assert!(a.get_output().stdout.is_empty());
    let err = stderr_of(&a);
    assert!(
        err.contains("--mem-nodes") && err.contains("999") && err.contains("do not exist"),
        "{err}"
    );
    let err = stderr_of(&place(&["--cpu-node", "999"]).code(2));
    assert!(err.contains("999"), "{err}");
}

#[test]
fn a_size_the_node_cannot_spare_is_refused_before_allocating() {
    let a = place(&["--json", "--mem-nodes", "0", "--size", "64T"]).code(2);
    assert!(a.get_output().stdout.is_empty());
    let err = stderr_of(&a);
    assert!(err.contains("node 0 cannot spare") && err.contains("try a size of at most"), "{err}");
}

#[test]
fn bad_flag_values_are_usage_errors_naming_the_value() {
    for (args, needle) in [
        (vec!["--size", "12Q"], "12Q"),
        (vec!["--size", "0"], "'0'"),
        (vec!["--pages", "3m"], "3m"),
        (vec!["--policy", "sideways", "--mem-nodes", "0"], "sideways"),
        (vec!["--policy", "preferred", "--mem-nodes", "!0"], "!0"),
        (vec!["--mem-nodes", "3-1"], "3-1"),
        (vec!["--policy", "interleave"], "needs --mem-nodes"),
        (vec!["--threshold", "1.5"], "1.5"),
        (vec!["--cpu", "99999"], "99999"),
    ] {
        let err = stderr_of(&place(&args).code(2));
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn text_output_names_the_policy_and_the_verdict() {
    let a = place(&["--mem-nodes", "0", "--size", "4M", "--cpu", "0"]).success();
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(out.contains("bind nodes 0 via mbind"), "{out}");
    assert!(out.contains("pinned to 0, ran on CPU 0"), "{out}");
    assert!(out.contains(": OK"), "{out}");
}

/// `place` honours the measuring lock while `run` holds it.
#[test]
fn a_held_measuring_lock_makes_place_refuse_naming_the_holder() {
    let path = private_lock("place");
    let _held = lock::MeasureLock::acquire_at(&path).unwrap();
    let a = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_LOCK", &path)
        .args(["place", "--size", "1M"])
        .assert()
        .code(1);
    let err = stderr_of(&a);
    assert_refused_by_our_lock(&err);
    assert!(a.get_output().stdout.is_empty());
    // Word for word, with what to do next.
    let want = format!(
        "numaprobe: error: another numaprobe measurement is running on this machine (held by PID \
         {}; lock {}); wait for it to finish or use --wait (from a terminal numaprobe waits up \
         to 10 min by itself)",
        std::process::id(),
        path.display()
    );
    assert!(err.lines().any(|l| l == want), "{err}");
}

/// With `--wait` the command says once whom it waits for (not at every
/// poll), then runs when the holder lets go.
#[test]
fn wait_says_once_whom_it_waits_for_then_runs() {
    use std::io::{BufRead, BufReader};
    let path = private_lock("place");
    let held = lock::MeasureLock::acquire_at(&path).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numaprobe"))
        .env("NUMAPROBE_LOCK", &path)
        .args(["place", "--size", "1M", "--wait", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert_eq!(
        first,
        format!(
            "numaprobe: waiting for the measuring numaprobe (PID {}) to finish...\n",
            std::process::id()
        )
    );
    // Several polls (every 500 ms) go by while the lock is still held.
    std::thread::sleep(std::time::Duration::from_millis(1600));
    drop(held);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{first}{rest}");
    assert!(!rest.contains("waiting for"), "said again: {rest}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["ok"], true);
}

/// Where the expectation came from is one word, the same in the document
/// and at the end of the text's check line: the policy's nodes, the
/// pinned CPU's node (`local`), or `--expect`.
#[test]
fn the_expectations_source_is_named_alike_in_json_and_text() {
    for (args, word) in [
        (vec!["--mem-nodes", "0"], "policy"),
        (vec!["--policy", "local"], "local-cpu"),
        (vec!["--mem-nodes", "0", "--expect", "0"], "--expect"),
    ] {
        let args = [args.as_slice(), &["--size", "1M"]].concat();
        let j = json_of(&place(&[&["--json"], args.as_slice()].concat()).success());
        assert_eq!(j["expect_source"], word, "{args:?}");
        let a = place(&args).success();
        let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
        let last = text.lines().last().unwrap_or_default();
        assert!(last.ends_with(&format!(" from {word}: OK")), "{args:?}: {text}");
    }
}
