//! A database that already holds a giant run (written by an older
//! numaprobe, or by hand): `show`, `report`, `compare` and `export` refuse
//! that run in one line naming it, without building it in memory, and
//! read the database's other runs as usual. The run is written here with
//! the store's own API (which does not bound what it is given), as an
//! older numaprobe's import did.
//!
//! The peak resident set of each command (`wait4`) is compared with the
//! same command's on an ordinary run. A child's peak counts what this
//! process held when it forked, so the database is written by a forked
//! process of its own and this one stays small.

#[path = "support/lock.rs"]
mod lock_support;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use store::{NewRun, RunId, RunStatus, Store};

/// Runs numaprobe on `db`; returns the exit code, stderr and the peak
/// resident set in KiB.
// The child is reaped by `wait4` below, for its resource usage.
#[allow(clippy::zombie_processes)]
fn np(db: &Path, args: &[&str]) -> (i32, String, i64) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("numaprobe"))
        .env_remove("NUMAPROBE_DB")
        .env("NUMAPROBE_LOCK", lock_support::private_lock("giant"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as i32;
    // SAFETY: valid out-pointers; the pid is our child's.
    assert_eq!(unsafe { libc::wait4(pid, &mut status, 0, &mut ru) }, pid);
    let code = std::process::ExitStatus::from_raw(status).code().unwrap_or(-1);
    (code, err, ru.ru_maxrss)
}

/// An ordinary run and one whose topology lists `cpus` CPUs.
fn database(path: &Path, cpus: usize) {
    let mut db = Store::open(path).unwrap();
    let mut add = |label: &str, topology: String| {
        let mut r = NewRun::new("numaprobe run", "0.1.0");
        r.label = Some(label.to_string());
        r.topology = serde_json::from_str(&topology).unwrap();
        let id = db.begin_run(&r).unwrap();
        db.finish_run(id, RunStatus::Complete, None).unwrap();
        id
    };
    let fine = add("fine", r#"{"cpus": [{"id": 0, "node": 0}]}"#.into());
    let mut text = String::with_capacity(cpus * 24 + 16);
    text.push_str(r#"{"cpus": ["#);
    for i in 0..cpus {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(r#"{{"id":{i},"node":0}}"#));
    }
    text.push_str("]}");
    let giant = add("giant", text);
    assert_eq!((fine, giant), (RunId(1), RunId(2)));
}

/// Guards issue 37 cause 4 on the read side: a run of 10^6 CPUs took
/// 1.37 GB in every reader of its database.
#[test]
fn a_giant_stored_run_is_refused_by_name_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    // SAFETY: the forked child only writes the database and leaves with
    // _exit; the parent waits for it.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        let ok = std::panic::catch_unwind(|| database(&db, 1_000_000)).is_ok();
        // SAFETY: ends the forked child without running the harness's code.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: our own child, waited once.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert_eq!(status, 0, "writing the database");
    let (fine, giant) = (RunId(1), RunId(2));
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let (fine, giant) = (fine.to_string(), giant.to_string());
    for args in [
        vec!["show", "ID"],
        vec!["report", "ID", "-o", out],
        vec!["export", "ID", "-o", out],
        vec!["compare", "OTHER", "ID"],
    ] {
        let with = |id: &str, other: &str| -> Vec<String> {
            args.iter()
                .map(|a| match *a {
                    "ID" => id.to_string(),
                    "OTHER" => other.to_string(),
                    a => a.to_string(),
                })
                .collect()
        };
        let giant_args = with(&giant, &fine);
        let giant_args: Vec<&str> = giant_args.iter().map(String::as_str).collect();
        let (code, err, rss) = np(&db, &giant_args);
        eprintln!("{args:?} on the giant run: exit {code}, peak RSS {rss} KiB");
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains(&format!("run {giant} (\"giant\") is too large to read")),
            "{args:?}: {err}"
        );
        assert!(err.contains("more than 65536 items"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");

        if args[0] == "compare" {
            continue; // an ordinary comparison needs two groups of runs
        }
        let fine_args = with(&fine, &fine);
        let fine_args: Vec<&str> = fine_args.iter().map(String::as_str).collect();
        let (code, err, base) = np(&db, &fine_args);
        assert_eq!(code, 0, "{args:?} on the ordinary run: {err}");
        eprintln!("{args:?} on the ordinary run: peak RSS {base} KiB");
        // The topology's text is read once (about 24 MB) and lexed; before,
        // the run was built whole (1.37 GB).
        assert!(rss < base + (128 << 10), "{args:?}: {rss} KiB, {base} KiB for an ordinary run");
    }
    let (code, err, _) = np(&db, &["list"]);
    assert_eq!(code, 0, "the giant run is still listed: {err}");
}
