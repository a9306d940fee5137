//! Impossible figures flagged in every output that shows them: a bandwidth
//! above the theoretical peak (`--peak-gbs`) in `bw`, `run` and the report
//! (measured here, against a stated peak of 0.5 GB/s no memory is that
//! slow), a latency below the last-level cache's own in `lat` (a 16 KiB
//! chase, an L1 hit), and in the report, `compare` and `fleet` over
//! hand-made runs (a local triad of 50 GB/s against a stated 10 GB/s
//! peak on DRAM-sized arrays, a matrix latency of 15 ns under the run's
//! 20 ns L3 plateau). Each names the limit and the likely cause, and no
//! headline stands without the flag.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

#[path = "support/hand_made.rs"]
mod hand_made;
use hand_made::Made;

/// The binary on database `db`, with a measuring lock of its own beside
/// it (tests measure in parallel).
fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c.env("NUMAPROBE_LOCK", db.with_extension("lock"));
    c
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn bw_flags_a_figure_above_the_stated_peak_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "bw",
        "--kernel",
        "triad",
        "--size",
        "64M",
        "--min-reps",
        "2",
        "--max-reps",
        "2",
        "--budget",
        "0.1",
        "--peak-gbs",
        "0.5",
    ];
    let text = ok(&np(&dir.path().join("r.db")).args(args).output().unwrap());
    assert!(text.contains("impossible: bw local triad"), "{text}");
    assert!(text.contains("the theoretical peak of 0.5 GB/s; likely cause: "), "{text}");
    let out = np(&dir.path().join("r.db")).arg("--json").args(args).output().unwrap();
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let i = &v["impossible"][0];
    assert_eq!(i["limit"], 0.5, "{v:#}");
    assert_eq!(i["unit"], "GB/s");
    assert!(i["ratio"].as_f64().unwrap() > 1.0, "{i}");
    assert!(!i["cause"].as_str().unwrap().is_empty(), "{i}");
}

#[test]
fn lat_flags_a_latency_below_the_last_level_cache_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    // Many short samples: on a busy machine the clean ones still outnumber
    // those another process stretched.
    let args = ["lat", "--size", "16K", "--samples", "21", "--sample-ms", "2"];
    let text = ok(&np(&dir.path().join("r.db")).args(args).output().unwrap());
    assert!(text.contains(" (impossible)"), "the median is marked: {text}");
    assert!(text.contains("impossible: lat point, CPU "), "{text}");
    assert!(
        text.contains("likely cause: a cache passing for DRAM: the chase's 16 KiB fits in"),
        "{text}"
    );
    let out = np(&dir.path().join("r.db")).arg("--json").args(args).output().unwrap();
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let i = &v["impossible"][0];
    assert_eq!(i["limit"], 8.0, "the typical floor: {v:#}");
    assert_eq!(i["unit"], "ns");
    assert!(i["ratio"].as_f64().unwrap() < 1.0, "{i}");
}

#[test]
fn run_flags_its_summary_its_json_and_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let reports = dir.path().join("reports");
    let run = |json: bool| {
        let mut c = np(&db);
        if json {
            c.arg("--json");
        }
        c.args(["-q", "run", "--quick", "--only", "bw-local", "--peak-gbs", "0.5"])
            .arg("--report-dir")
            .arg(&reports)
            .output()
            .unwrap()
    };
    let text = ok(&run(false));
    assert!(text.contains("(impossible)"), "the summary table marks the figure: {text}");
    assert!(text.contains(": impossible: "), "the marked figures' lines say why: {text}");
    let v: Value = serde_json::from_str(&ok(&run(true))).unwrap();
    assert!(!v["impossible"].as_array().unwrap().is_empty(), "{v:#}");
    let m = &v["metrics"]["local_bw_gbs"]["impossible"];
    assert_eq!(m["limit"], 0.5, "the headline carries its flag: {v:#}");
    let md = std::fs::read_to_string(v["report_md"].as_str().unwrap()).unwrap();
    assert!(md.contains("(impossible)"), "{md}");
    assert!(md.contains("(impossible): above the theoretical peak"), "the caution row: {md}");
}

/// A hand-made run of host `host` ([`hand_made::run`]).
fn run_doc(n: u32, host: &str, label: &str, gbs: f64, lat_ns: f64) -> Value {
    let config = ("c1", "test");
    hand_made::run(&Made { n, host, label, machine: n, config, status: "complete", gbs, lat_ns })
}

fn import(db: &Path, runs: Vec<Value>) {
    let f = db.with_file_name("runs.json");
    std::fs::write(&f, hand_made::export(runs)).unwrap();
    np(db).arg("import").arg(&f).assert().success();
}

#[test]
fn the_report_compare_and_fleet_flag_impossible_figures_of_saved_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(
        &db,
        vec![
            run_doc(1, "h1", "ok", 9.0, 95.0),
            run_doc(2, "h2", "bad", 50.0, 15.0),
            run_doc(3, "h3", "ok", 9.1, 96.0),
        ],
    );
    // the report: the headline tiles, the tables and the lines saying why
    let md = ok(&np(&db).args(["report", "bad"]).output().unwrap());
    assert!(md.contains("50 GB/s (impossible)") || md.contains("50.0 GB/s (impossible)"), "{md}");
    assert!(md.contains("15.0 ns (impossible)") || md.contains("15 ns (impossible)"), "{md}");
    assert!(
        md.contains("5.00x the theoretical peak of 10.0 GB/s; likely cause: a wrong peak"),
        "{md}"
    );
    assert!(md.contains("75% of the L3's own latency (the run's sweep plateau) (20.0 ns)"), "{md}");
    let ok_md = ok(&np(&db).args(["report", "1"]).output().unwrap());
    assert!(!ok_md.contains("impossible"), "{ok_md}");

    // compare: the group medians made of an impossible figure, and why
    let text = ok(&np(&db).args(["compare", "2", "1"]).output().unwrap());
    assert!(text.contains("(impossible)"), "{text}");
    assert!(text.contains("Impossible in"), "{text}");
    let out = np(&db).args(["--json", "compare", "2", "1"]).output().unwrap();
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let metrics: Vec<&str> =
        v["impossible"].as_array().unwrap().iter().map(|i| i["metric"].as_str().unwrap()).collect();
    assert_eq!(metrics, ["local_bw_gbs", "local_lat_ns"], "{v:#}");

    // fleet: the host's figures marked, the list of why
    let out = np(&db).args(["--json", "fleet"]).output().unwrap();
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    let h2 = v["groups"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "h2")
        .unwrap_or_else(|| panic!("{v:#}"));
    let flagged: Vec<&String> = h2["impossible"].as_object().unwrap().keys().collect();
    assert_eq!(flagged, ["local_bw_gbs", "local_lat_ns"], "{h2:#}");
    assert_eq!(
        h2["impossible"],
        serde_json::json!({
            "local_bw_gbs": "bw local triad, 4 thread(s), CPU node 0 -> memory 0: 50.0 GB/s is \
                impossible: 5.00x the theoretical peak of 10.0 GB/s; likely cause: a wrong peak: \
                the arrays were DRAM-sized on verified pages, so the peak given (--peak-gbs) or \
                read from the DIMM table is too low (channels or MT/s)",
            "local_lat_ns": "lat matrix, CPU 0 -> memory node 0: 15.0 ns is impossible: 75% of \
                the L3's own latency (the run's sweep plateau) (20.0 ns); likely cause: a cache \
                or prefetcher passing for DRAM (chase of 1024 MiB, 256 B stride), or the cache's \
                plateau misread"
        }),
        "{h2:#}"
    );
    let text = ok(&np(&db).arg("fleet").output().unwrap());
    assert!(text.contains("2 impossible figure(s)"), "{text}");
    assert!(text.contains("(impossible)"), "{text}");
}
