//! On the real binary: the memory an import takes follows the
//! largest run, not the file: the peak resident set of the child (from
//! `wait4`) importing 1 GiB of garbage and a 12 MiB export.
//!
//! The kernel counts in a child's peak what its parent held when it
//! forked, so this file holds only these two tests, each keeping its own
//! memory small (the export is written to a file run by run).

#[path = "support/lock.rs"]
mod lock_support;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

fn np(db: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("numaprobe"));
    c.env_remove("NUMAPROBE_DB")
        .env("NUMAPROBE_LOCK", lock_support::private_lock("memory"))
        .arg("--db")
        .arg(db);
    c
}

/// The fixture's runs, the `n`-th copy under fresh UUIDs.
fn runs_copy(fixture: &Value, n: usize) -> Vec<Value> {
    let mut runs = fixture["runs"].as_array().unwrap().clone();
    for (i, r) in runs.iter_mut().enumerate() {
        r["uuid"] = format!("{n:08x}-0000-4000-8000-{i:012x}").into();
    }
    runs
}

/// Runs `import -` with `feed` writing its stdin; returns the exit code,
/// stderr and the child's peak resident set in KiB (`wait4`). The peak
/// counts what the child shared with this test process between `fork`
/// and `exec`, so the tests keep their own memory small (the large
/// export is written to a file and fed from it).
// The child is reaped by `wait4` below, for its resource usage.
#[allow(clippy::zombie_processes)]
fn import_stdin(db: &Path, feed: impl FnOnce(&mut dyn Write) + Send) -> (i32, String, i64) {
    let mut child = np(db)
        .args(["import", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    std::thread::scope(|s| {
        s.spawn(move || feed(&mut stdin));
        let err = s.spawn(move || {
            let mut e = String::new();
            std::io::Read::read_to_string(&mut stderr, &mut e).unwrap();
            e
        });
        let mut status = 0;
        // SAFETY: rusage is plain data; wait4 fills it for our child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let pid = child.id() as i32;
        // SAFETY: valid out-pointers; the pid is our child's.
        assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut ru) }, pid);
        let code = std::process::ExitStatus::from_raw(status).code().unwrap_or(-1);
        (code, err.join().unwrap(), ru.ru_maxrss)
    })
}

/// The peak resident set allowed: far below the inputs (1 GiB, 12 MiB of
/// runs, each about 26 KiB), above the binary's own (about 16 MiB).
const RSS_LIMIT_KIB: i64 = 64 << 10;

/// `yes '[[[[' | numaprobe import -` stops at the nesting limit, in one
/// line, instead of holding the stream in memory before parsing.
#[test]
fn garbage_on_stdin_is_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let (code, err, rss) = import_stdin(&db, |w| {
        let chunk = "[[[[\n".repeat(1 << 16);
        let mut sent = 0usize;
        while sent < 1 << 30 {
            if w.write_all(chunk.as_bytes()).is_err() {
                return; // the reader stopped: what we want
            }
            sent += chunk.len();
        }
    });
    eprintln!("peak RSS refusing 1 GiB of garbage: {rss} KiB");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("stdin") && err.contains("nesting deeper than"), "{err}");
    assert!(err.lines().all(|l| l.starts_with("numaprobe: ")), "one line each: {err}");
    assert!(rss < RSS_LIMIT_KIB, "peak RSS {rss} KiB reading garbage");
    assert!(!db.exists(), "nothing imported");
}

/// A 12 MiB export (510 runs) took about 13 times its size as one string
/// and one JSON tree; streamed, memory follows one run.
#[test]
fn a_large_export_is_imported_in_memory_bounded_by_its_largest_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // Written run by run, so this process never holds the whole export.
    let file = dir.path().join("big.json");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
    w.write_all(br#"{"format": "numaprobe-export", "version": 1, "exported": "2026-11-05T08:00:00.000Z", "runs": ["#).unwrap();
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../report/tests/fixtures/synthetic-export.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for i in 0..170 {
        for (j, r) in runs_copy(&fixture, i).iter().enumerate() {
            if i + j > 0 {
                w.write_all(b",").unwrap();
            }
            serde_json::to_writer(&mut w, r).unwrap();
        }
    }
    w.write_all(b"]}").unwrap();
    drop(w);
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 12 << 20, "{size} bytes");
    drop(fixture);
    let (code, err, rss) = import_stdin(&db, |w| {
        std::io::copy(&mut std::fs::File::open(&file).unwrap(), w).unwrap();
    });
    eprintln!("peak RSS importing {size} bytes: {rss} KiB");
    assert_eq!(code, 0, "{err}");
    assert!(rss < RSS_LIMIT_KIB, "peak RSS {rss} KiB importing {size} bytes");
    let out = np(&db).args(["list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 510);
}
