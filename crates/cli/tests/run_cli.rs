//! End-to-end tests of `numaprobe run` on this machine: runs are saved with
//! their label, compare against each other, and a run interrupted by
//! Ctrl-C, SIGTERM or SIGHUP is kept as incomplete with what it measured
//! and its report.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

/// numaprobe with a private database and measuring lock.
fn np(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.arg("--db").arg(dir.join("results.db")).env("NUMAPROBE_LOCK", dir.join("measure.lock"));
    c
}

fn json_of(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{:?} failed: {}", c, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn two_labelled_runs_are_saved_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    for label in ["THP always", "THP never"] {
        let v = json_of(
            np(dir.path())
                .args([
                    "--json",
                    "--quiet",
                    "run",
                    "--quick",
                    "--only",
                    "bw-local,lat-matrix",
                    "--label",
                    label,
                ])
                .arg("--report-dir")
                .arg(dir.path().join("reports")),
        );
        assert_eq!(v["status"], "complete", "{v}");
        assert_eq!(v["label"], label);
        // the audit findings plus one triad result and one latency point
        assert!(v["results"].as_u64().unwrap() >= 3, "{v}");
        for key in ["local_bw_gbs", "local_lat_ns"] {
            assert!(v["metrics"][key]["value"].as_f64().unwrap() > 0.0, "{key} missing: {v}");
        }
        assert_eq!(v["metrics"]["local_bw_gbs"]["unit"], "GB/s");
        assert_eq!(v["uuid"].as_str().unwrap().len(), 36, "{v}");
        assert!(v["id"].as_i64().unwrap() >= 1);
        for key in ["machine_fingerprint", "config_fingerprint", "config_hash"] {
            assert!(!v[key].as_str().unwrap().is_empty(), "{key} missing: {v}");
        }
        // The budget is recorded but is not a setting.
        assert_eq!(v["config_fingerprint"], v["config_hash"], "{v}");
        let html = std::fs::read_to_string(v["report_html"].as_str().unwrap()).unwrap();
        assert!(
            html.contains(label) && html.contains("GB/s"),
            "the report names the run and its bandwidth"
        );
    }
    let runs = json_of(np(dir.path()).args(["--json", "list"]));
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["label"], "THP always");
    assert_eq!(runs[1]["label"], "THP never");
    assert!(runs.iter().all(|r| r["complete"] == true));
    assert_eq!(runs[0]["machine_fingerprint"], runs[1]["machine_fingerprint"]);

    let cmp = np(dir.path()).args(["compare", "1", "2"]).output().unwrap();
    assert!(cmp.status.success(), "{}", String::from_utf8_lossy(&cmp.stderr));
    let text = String::from_utf8_lossy(&cmp.stdout);
    assert!(text.contains("THP always") && text.contains("THP never"), "{text}");
}

#[test]
fn repeat_makes_that_many_runs_under_one_label() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(dir.path())
        .args(["--json", "run", "--quick", "--only", "lat-matrix", "--repeat", "2", "--label", "R"])
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("run 1 of 2 (R)") && stderr.contains("run 2 of 2 (R)"), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0]["uuid"], runs[1]["uuid"]);
    assert_eq!(runs[0]["config_hash"], runs[1]["config_hash"]);
    let listed = json_of(np(dir.path()).args(["--json", "list"]));
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(listed.as_array().unwrap().iter().all(|r| r["label"] == "R"));
    let bad = np(dir.path()).args(["run", "--quick", "--repeat", "0"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(), 1, "{err}");
}

/// Starts `run --quick --label cut` on a private database, waits until a
/// latency result is saved, sends `sig`, and returns the exit code, stderr
/// and the folder.
fn signal_a_run(sig: i32) -> (Option<i32>, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = np(dir.path())
        .args([
            "--quiet",
            "run",
            "--quick",
            "--only",
            "lat-sweep,lat-per-cpu,lat-loaded",
            "--label",
            "cut",
        ])
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until some latency results are in the store, then signal.
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(300), "no result saved in 5 minutes");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be interrupted"
        );
        let out = np(dir.path()).args(["--json", "show", "latest"]).output().unwrap();
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            if v["results"].as_array().is_some_and(|r| r.iter().any(|r| r["kind"] == "lat")) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on our own child's PID; no memory is involved.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).to_string(), dir)
}

/// The run after the signal: saved incomplete (`interrupted (NAME)`) with
/// its finish time and what it measured, its report written, nothing
/// measured after.
fn assert_saved_interrupted_by(dir: &Path, name: &str) {
    let runs = json_of(np(dir).args(["--json", "list"]));
    let run = &runs[0];
    assert_eq!(run["label"], "cut");
    assert_eq!(run["complete"], false, "{run}");
    assert_eq!(run["status"], "incomplete");
    assert!(run["message"].as_str().unwrap().contains(&format!("interrupted ({name})")), "{run}");
    assert!(run["finished"].as_str().is_some_and(|f| !f.is_empty()), "no finish time: {run}");
    let shown = json_of(np(dir).args(["--json", "show", "latest"]));
    let lat = shown["results"].as_array().unwrap().iter().filter(|r| r["kind"] == "lat").count();
    assert!(lat >= 1, "the latency results measured before {name} are kept: {shown}");
    // Loaded latency is the last step: an interrupted sweep never gets there.
    assert!(!shown.to_string().contains("\"mode\":\"loaded\""), "the run went on after {name}");
    // Reports are named run-ID-UUID8.{html,md}.
    let id = run["id"].as_i64().unwrap();
    let uuid8 = &run["uuid"].as_str().unwrap()[..8];
    for ext in ["html", "md"] {
        let report = dir.join("reports").join(format!("run-{id}-{uuid8}.{ext}"));
        assert!(report.is_file(), "{} not written", report.display());
    }
}

#[test]
fn a_run_interrupted_by_ctrl_c_is_kept_incomplete_with_its_results() {
    let (code, stderr, dir) = signal_a_run(libc::SIGINT);
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by Ctrl-C"), "{stderr}");
    assert_saved_interrupted_by(dir.path(), "Ctrl-C");
}

/// SIGTERM is handled like Ctrl-C (the run stops at a safe point, is
/// saved with its finish time and report), then exits 143; killed at once
/// by the signal, the run would stay `running` with no report.
#[test]
fn sigterm_stops_a_run_at_a_safe_point_saves_and_reports_it() {
    let (code, stderr, dir) = signal_a_run(libc::SIGTERM);
    assert_eq!(code, Some(143), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert_saved_interrupted_by(dir.path(), "SIGTERM");
}

/// SIGHUP (the terminal went away) likewise, exit 129.
#[test]
fn sighup_stops_a_run_at_a_safe_point_saves_and_reports_it() {
    let (code, stderr, dir) = signal_a_run(libc::SIGHUP);
    assert_eq!(code, Some(129), "{stderr}");
    assert!(stderr.contains("interrupted by SIGHUP"), "{stderr}");
    assert_saved_interrupted_by(dir.path(), "SIGHUP");
}

#[test]
fn bad_step_names_and_profiles_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(dir.path()).args(["run", "--quick", "--only", "bw-nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("invalid value 'bw-nope' for '--only <STEPS>'"), "{err}");
    assert!(err.contains("possible values: bw-local") && err.contains("lat-c2c"), "{err}");
    let out = np(dir.path()).args(["run", "--quick", "--profile", "gaming"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("results.db").exists(), "nothing is created for a usage error");
}

/// `--peak-gbs` of `run` and `bw`: 0, negative, NaN and infinite
/// peaks are usage errors naming the flag, refused before anything is
/// created; so are an unknown store method and a bad `--set link.gbs`.
#[test]
fn bad_peaks_and_store_methods_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["run", "bw"] {
        for bad in ["0", "-5", "NaN", "inf", "1e9", "fast"] {
            let flag = format!("--peak-gbs={bad}");
            let out = np(dir.path()).args([cmd, &flag]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd} --peak-gbs {bad}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("invalid value") && err.contains("--peak-gbs"),
                "{cmd} {bad}: {err}"
            );
        }
        let out = np(dir.path()).args([cmd, "--stores", "sideways"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd} --stores sideways");
        // the declared link is checked as a peak is
        for bad in ["0", "-1", "nan", "fast"] {
            let set = format!("link.gbs={bad}");
            let out = np(dir.path()).args([cmd, "--set", &set]).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd} --set {set}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("--set link.gbs"), "{cmd} --set {set}: {err}");
        }
    }
    assert!(!dir.path().join("results.db").exists(), "nothing is created for a usage error");
    // good values are taken (the plan only)
    let out = np(dir.path())
        .args(["run", "--quick", "--dry-run", "--stores", "regular", "--peak-gbs", "76.8"])
        .args(["--set", "link.gbs=41.6"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `run --stores regular --peak-gbs P` measures with regular stores, stores
/// the peak with every bandwidth result, and the report names the method
/// beside each figure and its share of the peak; a peak far below what
/// any memory delivers (0.5 GB/s) makes every figure impossible, and the
/// report says so.
#[test]
fn run_takes_the_store_method_and_the_peak_and_the_report_shows_both() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(
        np(dir.path())
            .args(["--json", "--quiet", "run", "--quick", "--only", "bw-local"])
            .args(["--stores", "regular", "--peak-gbs", "0.5", "--label", "regular"])
            .arg("--report-dir")
            .arg(dir.path().join("reports")),
    );
    assert_eq!(v["status"], "complete", "{v}");
    let id = v["id"].as_i64().unwrap().to_string();
    let shown = json_of(np(dir.path()).args(["--json", "show", &id]));
    let bw: Vec<&Value> = shown["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "bw")
        .map(|r| &r["payload"])
        .collect();
    assert!(!bw.is_empty(), "{shown}");
    for r in &bw {
        assert_eq!(r["stores"], "regular", "{r}");
        assert_eq!(r["peak_gbs"], 0.5, "{r}");
    }
    let md = std::fs::read_to_string(v["report_md"].as_str().unwrap()).unwrap();
    assert!(md.contains("| ISA, stores | % of peak |"), "{md}");
    assert!(md.contains(", regular stores |"), "{md}");
    assert!(md.contains("triad (regular stores)"), "{md}");
    assert!(md.contains("the STREAM-equivalent figures"), "{md}");
    assert!(md.contains("which is impossible"), "{md}");
    // the head's peak is the one the figures were judged against (one
    // node here: the machine's peak is the node's)
    assert!(md.contains("theoretical peak 0.5 GB/s"), "{md}");
    // power and frequency: figures where RAPL and the MSRs or cpufreq
    // answer, else the reasons (this VM: none of them)
    assert!(md.contains("### Power and frequency"), "{md}");
    assert!(md.contains("| GB/s per W |") || md.contains("Unavailable: "), "{md}");
}

#[test]
fn dry_run_prints_the_plan_and_measures_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(np(dir.path()).args(["--json", "run", "--quick", "--dry-run"]));
    let steps: Vec<&str> =
        v["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert!(steps.contains(&"bw local") && steps.contains(&"lat matrix"), "{v}");
    assert!(v["estimate_s"].as_f64().unwrap() > 0.0);
    assert!(!dir.path().join("results.db").exists());
}

/// The interleaved latency needs two nodes with memory and CPUs: on a
/// one-node machine (this dev VM) the plan leaves it out and says why, in
/// text and in `--json`; on more nodes it is planned once.
#[test]
fn the_interleaved_latency_is_skipped_on_one_node_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.strip_prefix("node").is_some_and(|i| i.parse::<u32>().is_ok())
                })
                .count()
        })
        .unwrap_or(1);
    let v = json_of(np(dir.path()).args(["--json", "run", "--quick", "--dry-run"]));
    let steps: Vec<&str> =
        v["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    if nodes == 1 {
        assert!(!steps.contains(&"lat interleave"), "{v}");
        let skipped: Vec<&Value> = v["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["step"] == "lat-interleave")
            .collect();
        assert_eq!(
            skipped,
            [&serde_json::json!({"step": "lat-interleave",
                "reason": "only node 0 has both memory and CPUs: interleaving needs two or more"})]
        );
        let out = np(dir.path()).args(["run", "--quick", "--dry-run"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("Skipped: lat-interleave (only node 0 has both memory and CPUs: interleaving needs two or more)"),
            "{text}"
        );
    } else {
        assert_eq!(steps.iter().filter(|s| **s == "lat interleave").count(), 1, "{v}");
    }
}

/// `ln -s victim L; NUMAPROBE_LOCK=L numaprobe run` leaves the victim as
/// it is (a lock that followed the link would truncate it to a PID).
#[test]
fn a_symlink_as_the_lock_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let link = dir.path().join("L");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = np(dir.path())
        .env("NUMAPROBE_LOCK", &link)
        .args(["--quiet", "run", "--quick", "--only", "bw-local"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&link.display().to_string()), "names the path: {err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!dir.path().join("results.db").exists(), "no run was begun");
}

/// A second measuring run refuses while the first holds the lock, naming
/// the holder's PID.
#[test]
fn a_second_run_refuses_while_the_lock_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let _held = lock::MeasureLock::acquire_at(&dir.path().join("measure.lock")).unwrap();
    let out =
        np(dir.path()).args(["--quiet", "run", "--quick", "--only", "bw-local"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("held by PID {}", std::process::id())), "{err}");
    assert!(err.contains("--wait"), "{err}");
}

/// `--lock PATH` chooses the lock file (a hostPath shared by the
/// containers of one node) over `NUMAPROBE_LOCK`, and a lock held there
/// refuses the run.
#[test]
fn the_lock_flag_chooses_the_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared-by-pods.lock");
    let _held = lock::MeasureLock::acquire_at(&shared).unwrap();
    let out = np(dir.path())
        .arg("--lock")
        .arg(&shared)
        .args(["--quiet", "run", "--quick", "--only", "bw-local"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("shared-by-pods.lock") && err.contains("held by PID"), "{err}");
    assert!(!dir.path().join("results.db").exists(), "no run was begun");
}

/// `run --textfile DIR` leaves DIR/numaprobe.prom (and no
/// temporary file) for node_exporter; a DIR that is not a folder is a
/// usage error said before measuring.
#[test]
fn run_writes_the_textfile_for_node_exporter() {
    let dir = tempfile::tempdir().unwrap();
    let tf = dir.path().join("textfile");
    std::fs::create_dir(&tf).unwrap();
    let out = np(dir.path())
        .args(["--quiet", "run", "--quick", "--only", "bw-local", "--label", "tf", "--textfile"])
        .arg(&tf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> = std::fs::read_dir(&tf)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["numaprobe.prom"]);
    let text = std::fs::read_to_string(tf.join("numaprobe.prom")).unwrap();
    assert!(
        text.contains(
            "numaprobe_bandwidth_bytes_per_second{mode=\"local\",stream_kernel=\"triad\""
        ),
        "{text}"
    );
    assert!(text.contains("label=\"tf\""), "{text}");
    assert!(text.contains("numaprobe_run_timestamp_seconds{"), "{text}");
    assert!(text.ends_with("# EOF\n"));
    let out = np(dir.path())
        .args(["run", "--quick", "--textfile"])
        .arg(dir.path().join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));
}

/// `run` exits 1 when a step failed (the run is saved
/// `incomplete`), so orchestration tools can tell. Loaded latency needs a
/// CPU besides the chasing one: confined to one CPU, that step fails.
#[test]
fn a_run_with_a_failed_step_is_saved_incomplete_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("numaprobe");
    let out = Command::new("taskset")
        .args(["-c", "0"])
        .arg(bin)
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .env("NUMAPROBE_LOCK", dir.path().join("measure.lock"))
        .args(["--json", "run", "--quick", "--only", "lat-loaded", "--label", "one cpu"])
        .arg("--report-dir")
        .arg(dir.path().join("reports"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("numaprobe: error: run 1 ended incomplete ("), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "incomplete", "{v}");
    assert_eq!(v["complete"], false);
    let runs = json_of(np(dir.path()).args(["--json", "list"]));
    assert_eq!(runs[0]["status"], "incomplete");
}
