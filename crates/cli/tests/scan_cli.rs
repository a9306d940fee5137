//! `numaprobe scan` end to end on this machine: a small scan measures
//! every chunk on the node (and, as root, gives each chunk's physical
//! ranges), and a size beyond what the node can spare is refused before
//! anything is allocated. Figures are never judged: only structure.

#[path = "support/lock.rs"]
mod lock_support;

use assert_cmd::Command;
use serde_json::Value;

fn np() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", lock_support::private_lock("scan"));
    c
}

#[test]
fn a_small_scan_measures_every_chunk_on_the_node() {
    let out = np()
        .args(["scan", "--mem-node", "0", "--chunk", "4M", "--size", "12M", "--reps", "2"])
        .args(["--pages", "nothp", "--json", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["mem_node"], 0);
    assert_eq!(v["chunks_planned"], 3);
    assert_eq!(v["interrupted"], false);
    let chunks = v["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 3, "{v}");
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c["index"], i);
        assert_eq!(c["on_node"], 1.0, "{c}");
        assert!(c["best_gbs"].as_f64().unwrap() > 0.0, "{c}");
        let bytes = c["bytes"].as_u64().unwrap();
        assert!(bytes <= 4 << 20 && bytes > 3 << 20, "{c}");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let ranges = c["phys"].as_array().unwrap_or_else(|| panic!("root: ranges {c}"));
            let sum: u64 = ranges
                .iter()
                .map(|r| r["end"].as_u64().unwrap() - r["start"].as_u64().unwrap())
                .sum();
            assert_eq!(sum, bytes, "every page of the chunk has a frame: {c}");
        } else {
            assert!(c["phys"].is_null());
        }
    }
    assert!(v["verdict"]["median_gbs"].as_f64().unwrap() > 0.0);
}

#[test]
fn more_than_the_node_can_spare_is_refused_before_allocating() {
    let out = np().args(["scan", "--mem-node", "0", "--size", "64T"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("can spare") && err.contains("nothing was allocated"), "{err}");
    assert_eq!(err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(), 1, "{err}");
    let out = np().args(["scan", "--mem-node", "99"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_chunk_larger_than_the_total_is_refused_in_human_units() {
    // without --size the total is bounded by default: no silent growth to
    // fit one huge chunk
    let out = np().args(["scan", "--mem-node", "0", "--chunk", "999999T"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(), 1, "{err}");
    assert!(err.contains("--chunk 999999 TiB is larger than the default total of"), "{err}");
    assert!(err.contains("nothing was allocated") && !err.contains("bytes"), "{err}");
    let out = np().args(["scan", "--mem-node", "0", "--chunk", "8M", "--size", "4M"]).output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--chunk 8 MiB is larger than --size 4 MiB"), "{err}");
}

#[test]
fn the_default_chunk_shrinks_loudly_to_fit_a_small_total() {
    let out = np()
        .args(["scan", "--mem-node", "0", "--size", "64M", "--reps", "1", "--pages", "nothp"])
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("chunks of 8 MiB instead of the default 1 GiB"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["chunk_bytes"], 8 << 20);
    assert_eq!(v["chunks_planned"], 8);
    assert_eq!(v["total_bytes"], 64 << 20);
    assert_eq!(v["total_from"], "size");
}

#[test]
fn a_held_measuring_lock_makes_scan_and_advise_refuse_naming_the_holder() {
    let path = lock_support::private_lock("scan-held");
    let _held = lock::MeasureLock::acquire_at(&path).unwrap();
    for args in [
        &["scan", "--mem-node", "0", "--chunk", "4M", "--size", "4M"][..],
        &["advise", "interleave", "--budget", "0.1"][..],
    ] {
        let out = Command::cargo_bin("numaprobe")
            .unwrap()
            .env("NUMAPROBE_LOCK", &path)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "nothing measured");
        lock_support::assert_refused_by_our_lock(&String::from_utf8_lossy(&out.stderr));
    }
}

/// The one line of stderr a refused `scan` says (a memory warning may
/// join stderr on another line): exits 2; the line must match `pattern`.
fn refused(args: &[&str], pattern: &str) {
    use predicates::prelude::*;
    let out = np().arg("scan").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    let re = predicates::str::is_match(pattern).unwrap();
    assert!(err.lines().any(|l| re.eval(l)), "no line matches {pattern} in:\n{err}");
}

/// The sizing's refusals, whole lines: what the node can spare and the
/// reading threads are the machine's, every other word is pinned.
#[test]
fn sizing_refusals_name_their_flag_word_for_word() {
    let spare = r"node 0 can spare [0-9.]+ [KMGT]?i?B \([0-9.]+ [KMGT]?i?B available, [0-9.]+ [KMGT]?i?B kept free\)";
    refused(
        &["--mem-node", "0", "--size", "1T"],
        &format!("^numaprobe: error: --size 1 TiB: {spare}; nothing was allocated$"),
    );
    refused(
        &["--mem-node", "0", "--chunk", "999999T"],
        &format!(
            r"^numaprobe: error: --chunk 999999 TiB is larger than the default total of [0-9.]+ [KMGT]?i?B \(half of what the node can spare, at most 8 GiB; {spare}\): give a smaller --chunk or a larger --size; nothing was allocated$"
        ),
    );
    refused(
        &["--mem-node", "0", "--chunk", "999999T", "--size", "all"],
        &format!(
            "^numaprobe: error: --chunk 999999 TiB is larger than {spare}: give a smaller --chunk or a larger --size; nothing was allocated$"
        ),
    );
    refused(
        &["--mem-node", "0", "--chunk", "8M", "--size", "4M"],
        "^numaprobe: error: --chunk 8 MiB is larger than --size 4 MiB: give a smaller --chunk or a larger --size; nothing was allocated$",
    );
    refused(
        &["--mem-node", "0", "--chunk", "1K", "--size", "4M"],
        r"^numaprobe: error: --chunk 1 KiB: each of the [0-9]+ reading thread\(s\) needs at least one page of [0-9]+ KiB$",
    );
}
