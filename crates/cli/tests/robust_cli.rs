//! Command-line failures, end to end: huge durations and counts,
//! conflicting flags, an empty program name, a `--touch` past the machine's
//! memory, output folders that cannot be written, causes said twice.
//! Each test says what failure it guards against. SIGTERM and SIGHUP
//! during a run are tested in run_cli.rs, beside Ctrl-C.

#[path = "support/lock.rs"]
mod lock_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

/// numaprobe with a private database and measuring lock in `dir`.
fn np(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_DB", dir.join("results.db")).env("NUMAPROBE_LOCK", dir.join("measure.lock"));
    c
}

/// Runs `args` (killed after 2 minutes: a flag taken unbounded would run
/// on), expects `code`, one line on stderr holding every needle; returns it.
fn one_line_error(args: &[&str], code: i32, needles: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut child =
        np(dir.path()).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{args:?} still running after 2 minutes: the value was taken");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert_eq!(
        err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
        1,
        "{args:?}: one line: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' not in: {err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// Guards against `bw --budget 1e20`/`1e308` and `exec --timeout 1e308`
/// panicking ("cannot convert float seconds to Duration") and against
/// `lat --samples 1000000000` and `--sample-ms 99999999999` running
/// (almost) for ever.
#[test]
fn huge_durations_and_counts_are_refused_naming_the_flag_and_the_range() {
    for (args, flag, range) in [
        (&["bw", "--budget", "1e20"][..], "--budget", "0.001 to 3600 seconds"),
        (&["bw", "--budget", "1e308"], "--budget", "0.001 to 3600 seconds"),
        (&["bw", "--budget", "nan"], "--budget", "0.001 to 3600 seconds"),
        (&["exec", "--timeout", "1e308", "--", "true"], "--timeout", "0.001 to 604800 seconds"),
        (&["exec", "--timeout", "inf", "--", "true"], "--timeout", "0.001 to 604800 seconds"),
        (&["lat", "--samples", "1000000000"], "--samples", "from 1 to 10000"),
        (&["lat", "--sample-ms", "99999999999"], "--sample-ms", "1 to 10000 ms"),
        (&["advise", "interleave", "--budget", "1e20"], "--budget", "0.001 to 3600 seconds"),
        (&["run", "--repeat", "4294967296"], "--repeat", "from 1 to 1000"),
    ] {
        one_line_error(args, 2, &[flag, range]);
    }
}

/// Guards against accepting each pair (`bw --matrix --scaling` running
/// both, `lat --cpu 0 --cpu-node 0` using one of them, `bw --scaling --cpus
/// 0` ignoring --cpus, `exec --touch 1M -- true` ignoring the command).
#[test]
fn conflicting_flags_are_refused_naming_both() {
    for (args, a, b) in [
        (&["bw", "--matrix", "--scaling"][..], "--matrix", "--scaling"),
        (&["bw", "--global", "--interleave"], "--global", "--interleave"),
        (&["bw", "--matrix", "--cpu-node", "0"], "--cpu-node", "--matrix"),
        (&["bw", "--weighted", "--mem-node", "0"], "--mem-node", "--weighted"),
        (&["bw", "--scaling", "--cpus", "0"], "--cpus", "--scaling"),
        (&["lat", "--cpu", "0", "--cpu-node", "0"], "--cpu", "--cpu-node"),
        (&["lat", "--cpu", "0", "--per-cpu"], "--cpu", "--per-cpu"),
        (&["lat", "--matrix", "--sweep"], "--matrix", "--sweep"),
        (&["place", "--cpu", "0", "--cpu-node", "0"], "--cpu", "--cpu-node"),
        (&["exec", "--touch", "1M", "--", "true"], "--touch", "CMD"),
        (&["run", "--quick", "--thorough"], "--quick", "--thorough"),
    ] {
        one_line_error(args, 2, &[a, b, "cannot be used with"]);
    }
}

/// Guards against ".../.cargo/bin/: not executable: is a directory" (the
/// empty name joined to the first PATH folder).
#[test]
fn an_empty_program_name_is_a_usage_error_naming_it() {
    let err = one_line_error(&["exec", "--", ""], 2, &["program name", "empty"]);
    assert!(!err.contains("directory"), "{err}");
}

/// Guards against "memory allocation of 109951162777600 bytes failed",
/// abort (exit 134).
#[test]
fn touching_more_than_the_machine_can_spare_is_refused() {
    one_line_error(
        &["exec", "--touch", "100T"],
        2,
        &["--touch 100 TiB:", "can spare", "iB, keeping"],
    );
}

/// Nothing is measured, nothing saved: guards against a run that measures
/// everything, then fails writing its report (exit 1).
#[test]
fn an_unwritable_report_folder_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(dir.path())
        .args(["run", "--quick", "--only", "bw-local", "--report-dir", "/proc/nonexistent/x"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(), 1, "{err}");
    assert!(err.contains("--report-dir /proc/nonexistent/x: cannot write there"), "{err}");
    assert!(out.stdout.is_empty(), "not even the plan: {}", String::from_utf8_lossy(&out.stdout));
    assert!(!dir.path().join("results.db").exists(), "nothing measured, nothing saved");

    // The default folder beside an unusable database: the environment's
    // problem (exit 1), said before measuring too.
    let out = np(dir.path())
        .env("NUMAPROBE_DB", "/proc/nonexistent/results.db")
        .args(["run", "--quick", "--only", "bw-local"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("/proc/nonexistent/reports: cannot write the reports there"), "{err}");

    // --textfile: a folder that exists but cannot take a file.
    let out = np(dir.path())
        .args(["run", "--quick", "--only", "bw-local", "--textfile", "/proc/self"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--textfile /proc/self: cannot write there"), "{err}");
    assert!(!dir.path().join("results.db").exists());
}

/// Guards against a cause said twice: "results will not be saved: /proc/x:
/// No such file or directory (os error 2): No such file or directory (os
/// error 2)".
#[test]
fn a_cause_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(dir.path())
        .env("NUMAPROBE_DB", "/proc/nonexistent/results.db")
        .args(["exec", "-r", "1", "-p", "default", "--", "true"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.contains("results will not be saved")).expect(&err);
    let cause = std::io::Error::from_raw_os_error(libc::ENOENT).to_string();
    assert_eq!(line.matches(&cause).count(), 1, "{line}");
}

/// `run --wait` says once whom it waits for (it printed its line at every
/// poll, 14 times), then runs when the lock is free.
#[test]
fn run_wait_says_once_whom_it_waits_for() {
    use std::io::{BufRead, BufReader, Read};
    let dir = tempfile::tempdir().unwrap();
    let lock = lock_support::private_lock("run-wait");
    let held = lock::MeasureLock::acquire_at(&lock).unwrap();
    let mut child = np(dir.path())
        .env("NUMAPROBE_LOCK", &lock)
        .args(["run", "--quick", "--only", "bw-local", "--wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    // The first line that is not one of the machine's own warnings (memory
    // the nodes do not show yet) is the wait.
    let mut first = String::new();
    while first.is_empty() || first.starts_with("numaprobe: warning:") {
        first.clear();
        assert!(err.read_line(&mut first).unwrap() > 0, "stderr ended before the wait line");
    }
    let pid = std::process::id();
    assert!(first.contains(&format!("waiting for the measuring numaprobe (PID {pid})")), "{first}");
    // Several polls (every 500 ms) while the lock is held.
    std::thread::sleep(Duration::from_millis(2000));
    drop(held);
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{first}{rest}");
    assert!(!rest.contains("waiting for"), "said again: {rest}");
}

/// Guards against core-to-core latency leaving the main thread pinned to
/// its last pair's first CPU: the second run of `run --repeat` would find
/// one usable CPU, its loaded-latency and c2c steps would refuse ("usable
/// CPUs: 0") and `run` would exit 1.
#[test]
fn a_repeated_run_keeps_every_cpu_after_core_to_core_latency() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(dir.path())
        .args(["--json", "--quiet", "run", "--quick", "--repeat", "2"])
        .args(["--only", "lat-c2c,lat-loaded", "--report-dir"])
        .arg(dir.path().join("reports"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let runs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r["status"], "complete", "{r}");
    }
}
