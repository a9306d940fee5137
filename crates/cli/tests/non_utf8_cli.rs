//! On the real binary: an argument that is not UTF-8 is a usage error
//! (exit 2, numaprobe's one-line prefix) where clap wants text, and a path
//! that is not UTF-8 (`--db`) is used as it is, the run saved, its
//! command line stored with U+FFFD for the bad byte. Neither panics.

#[path = "support/lock.rs"]
mod lock_support;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt;

fn np() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").env("NUMAPROBE_LOCK", lock_support::private_lock("non-utf8"));
    c
}

/// `prefix` followed by the byte 0xFF, which no UTF-8 text holds.
fn bad(prefix: &str) -> OsString {
    let mut b = prefix.as_bytes().to_vec();
    b.push(0xff);
    OsString::from_vec(b)
}

#[test]
fn a_word_that_is_not_utf8_is_a_usage_error_not_a_panic() {
    for args in [
        vec![bad("")],
        vec!["topo".into(), bad("--x")],
        vec!["bw".into(), "--size".into(), bad("1M")],
    ] {
        let out = np().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.lines().any(|l| l.starts_with("numaprobe: error: ")), "{args:?}: {err}");
    }
}

#[test]
fn a_database_path_that_is_not_utf8_is_used_and_the_run_saved() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = dir.path().as_os_str().to_owned();
    db.push("/");
    db.push(bad("np"));
    let out = np()
        .arg("--db")
        .arg(&db)
        .args(["bw", "--size", "1M", "--kernel", "triad", "--threads", "1", "--budget", "0.05"])
        .args(["--save", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(std::path::Path::new(&db).is_file(), "no database at the path given: {err}");
    let list = np().arg("--db").arg(&db).args(["--json", "list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(0), "{}", String::from_utf8_lossy(&list.stderr));
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let runs = runs.as_array().expect("list --json is an array");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let command = runs[0]["command_line"].as_str().expect("the run's command is text");
    assert!(command.contains("np\u{fffd}"), "{command}");
}
