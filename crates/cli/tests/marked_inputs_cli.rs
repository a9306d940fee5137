//! A comparison says when its inputs were marked: a run whose global
//! bandwidth result was disturbed (its samples discarded while its CPU was
//! busy) makes `compare` say so in its header, beside the rows resting on
//! it and in the verdicts' notes; `compare --json` lists it under
//! `marked_inputs`; the HTML answer and the brief say it too.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    // wide enough that no line of `compare` wraps
    c.env_remove("NUMAPROBE_DB").env("COLUMNS", "400").arg("--db").arg(db);
    c
}

fn out(db: &Path, args: &[&str]) -> String {
    let o = np(db).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The fixture with run 2's `bw global` result disturbed (`marked`), or
/// as it is.
fn store(dir: &Path, marked: bool) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    if marked {
        let run = &mut doc["runs"][1];
        let r = run["results"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["kind"] == "bw" && r["payload"]["mode"] == "global")
            .expect("run 2 has a global bandwidth result");
        r["payload"]["stable"] = Value::Bool(false);
        r["payload"]["disturbance"] = serde_json::json!({"clean": 2, "disturbed": 9,
            "lost_pct": 48.2, "busiest_cpu": 3, "involuntary_switches": 40, "migrations": 0,
            "source": "run-delay"});
    }
    let file = dir.join("export.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let db = dir.join("results.db");
    np(&db).arg("import").arg(&file).assert().success();
    db
}

#[test]
fn a_comparison_says_which_inputs_were_disturbed() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), true);
    let text = out(&db, &["compare", "1", "2"]);
    assert!(text.contains("Disturbed inputs: 1 run holds"), "{text}");
    assert!(text.contains("run 2 (THP always, performance governor)"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("Global bandwidth"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains('!'), "the row resting on it is not marked: {row}");
    assert!(
        text.contains("n marked inputs: run 2 of THP always, performance governor (disturbed)"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&out(&db, &["--json", "compare", "1", "2"])).unwrap();
    let marked = v["marked_inputs"].as_array().unwrap();
    let global = marked
        .iter()
        .find(|m| m["metric"] == "global_bw_gbs")
        .unwrap_or_else(|| panic!("{marked:?}"));
    assert_eq!((global["group"].as_u64(), global["run"].as_u64()), (Some(1), Some(2)));
    assert_eq!(global["marks"][0]["state"], "disturbed");
    assert!(global["marks"][0]["cause"].as_str().unwrap().contains("CPU 3 was busy"), "{global}");
    // Only the metrics drawn from that result: local latency is not marked.
    assert!(!marked.iter().any(|m| m["metric"] == "local_lat_ns"), "{marked:?}");
    let html_file = dir.path().join("r.html");
    np(&db).args(["report", "1", "--compare", "2", "-o"]).arg(&html_file).assert().success();
    let html = std::fs::read_to_string(&html_file).unwrap();
    let answer =
        &html[html.find("<h2>The answer</h2>").unwrap()..html.find("<h2>Comparison</h2>").unwrap()];
    assert!(answer.contains("Disturbed inputs:"), "no line in the answer");
    assert!(answer.contains("(disturbed inputs)"), "no verdict says so");
    let brief = out(&db, &["report", "1", "--compare", "2", "--brief"]);
    assert!(brief.contains("Disturbed inputs:"), "{brief}");
    // The same study with clean inputs says nothing of it.
    let clean_dir = dir.path().join("clean");
    std::fs::create_dir(&clean_dir).unwrap();
    let clean = store(&clean_dir, false);
    let text = out(&clean, &["compare", "1", "2"]);
    assert!(!text.contains("Disturbed inputs") && !text.contains("marked inputs"), "{text}");
    let v: Value = serde_json::from_str(&out(&clean, &["--json", "compare", "1", "2"])).unwrap();
    assert_eq!(v["marked_inputs"], serde_json::json!([]));
}
