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

/// The fixture with run 2 marked in every way a mark can take: the
/// global bandwidth disturbed on a busy CPU, the interleaved one noisy,
/// the matrix's latency cells unsettled, without a disturbance record and
/// switched out, and the peak loaded point stalled.
fn store_every_shape(dir: &Path) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let results = doc["runs"][1]["results"].as_array_mut().unwrap();
    let find = |results: &mut Vec<Value>, kind: &str, mode: &str, pick: &dyn Fn(&Value) -> bool| {
        let i = results
            .iter()
            .position(|r| r["kind"] == kind && r["payload"]["mode"] == mode && pick(&r["payload"]))
            .unwrap_or_else(|| panic!("run 2 has a {kind} {mode} result"));
        i
    };
    let i = find(results, "bw", "global", &|_| true);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["disturbance"] = serde_json::json!({"clean": 2, "disturbed": 9,
        "lost_pct": 48.2, "busiest_cpu": 3, "involuntary_switches": 40, "migrations": 0,
        "source": "run-delay"});
    let i = find(results, "bw", "matrix", &|p| p["cpu_node"] == 0 && p["mem_node"] == 1);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["top_spread_pct"] = serde_json::json!(12.25);
    let i = find(results, "bw", "interleave", &|_| true);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["top_spread_pct"] = serde_json::json!(7.0);
    let cell = |c: u64, m: u64| move |p: &Value| p["cpu"] == c && p["mem_node"] == m;
    // each marked cell's own size, so that no clean chase of the same
    // quantity (the per-CPU latency) is taken in its place
    let alone = |r: &mut Value| {
        let size = r["payload"]["size_bytes"].as_u64().unwrap();
        r["payload"]["size_bytes"] = serde_json::json!(size + 4096);
    };
    let i = find(results, "lat", "matrix", &cell(0, 0));
    alone(&mut results[i]);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["disturbance"] = serde_json::json!({"clean": 20, "disturbed": 0,
        "lost_pct": 0.2, "involuntary_switches": 0, "migrations": 0, "source": "run-delay"});
    let i = find(results, "lat", "matrix", &cell(0, 1));
    alone(&mut results[i]);
    results[i]["payload"]["stable"] = Value::Bool(false);
    let i = find(results, "lat", "matrix", &cell(16, 0));
    alone(&mut results[i]);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["disturbance"] = serde_json::json!({"clean": 1, "disturbed": 4,
        "lost_pct": 0.0, "involuntary_switches": 7, "migrations": 1, "source": "switches"});
    let i = find(results, "lat", "loaded", &|p| p["load_gbs"] == 95.2);
    results[i]["payload"]["stable"] = Value::Bool(false);
    results[i]["payload"]["idle"] = Value::Bool(false);
    results[i]["payload"]["disturbance"] = serde_json::json!({"clean": 30, "disturbed": 0,
        "lost_pct": 0.0, "involuntary_switches": 0, "migrations": 0, "source": "run-delay"});
    let file = dir.join("export.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let db = dir.join("results.db");
    np(&db).arg("import").arg(&file).assert().success();
    db
}

/// The `marked_inputs` array of a `compare --json` document as printed:
/// from its key to the bracket that closes it.
fn marked_inputs_text(doc: &str) -> &str {
    let start = doc.find("\"marked_inputs\"").expect("the document has marked_inputs");
    let open = doc[start..].find('[').unwrap() + start;
    let mut depth = 0;
    for (i, ch) in doc[open..].char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return &doc[start..open + i + 1];
                }
            }
            _ => {}
        }
    }
    panic!("unclosed marked_inputs: {doc}")
}

/// Every shape of a mark (disturbed on a busy CPU, switched out, too few
/// clean samples; noisy, unsettled, stalled), whole: `compare --json`'s
/// `marked_inputs` byte for byte, and the lines of `compare`'s text that
/// name them.
#[test]
fn every_shape_of_a_marked_input_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_every_shape(dir.path());
    let json = out(&db, &["--json", "compare", "1", "2"]);
    assert_eq!(
        marked_inputs_text(&json),
        r#""marked_inputs": [
    {
      "metric": "local_bw_pkg_gbs",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "bw global triad, 32 thread(s)",
          "state": "disturbed",
          "cause": "CPU 3 was busy with other processes for 48% of the time (9 of 11 samples discarded)"
        }
      ]
    },
    {
      "metric": "global_bw_gbs",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "bw global triad, 32 thread(s)",
          "state": "disturbed",
          "cause": "CPU 3 was busy with other processes for 48% of the time (9 of 11 samples discarded)"
        }
      ]
    },
    {
      "metric": "interleave_bw_gbs",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "bw interleave triad, 32 thread(s)",
          "state": "noisy",
          "cause": "the best repetitions still spread 7% when the time ran out"
        }
      ]
    },
    {
      "metric": "cross_pkg_bw_gbs",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "bw matrix triad, 16 thread(s), CPU node 0 -> memory 1",
          "state": "noisy",
          "cause": "the best repetitions still spread 12.2% when the time ran out"
        }
      ]
    },
    {
      "metric": "local_lat_ns",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat matrix, CPU 0 -> memory node 0",
          "state": "noisy",
          "cause": "its samples spread 1.2% with none discarded and its CPU not busy"
        }
      ]
    },
    {
      "metric": "remote_lat_ns",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat matrix, CPU 0 -> memory node 1",
          "state": "disturbed",
          "cause": "too few clean samples"
        },
        {
          "what": "lat matrix, CPU 16 -> memory node 0",
          "state": "disturbed",
          "cause": "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 sample(s) (4 of 5 samples discarded)"
        }
      ]
    },
    {
      "metric": "spread_lat_ns",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat matrix, CPU 0 -> memory node 0",
          "state": "noisy",
          "cause": "its samples spread 1.2% with none discarded and its CPU not busy"
        },
        {
          "what": "lat matrix, CPU 0 -> memory node 1",
          "state": "disturbed",
          "cause": "too few clean samples"
        },
        {
          "what": "lat matrix, CPU 16 -> memory node 0",
          "state": "disturbed",
          "cause": "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 sample(s) (4 of 5 samples discarded)"
        }
      ]
    },
    {
      "metric": "loaded_lat_at_peak_ns",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat loaded, CPU 0",
          "state": "noisy",
          "cause": "a load thread moved no line while latency was chased, so the point understates its load"
        }
      ]
    },
    {
      "metric": "remote_penalty_ratio",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat matrix, CPU 0 -> memory node 0",
          "state": "noisy",
          "cause": "its samples spread 1.2% with none discarded and its CPU not busy"
        },
        {
          "what": "lat matrix, CPU 0 -> memory node 1",
          "state": "disturbed",
          "cause": "too few clean samples"
        },
        {
          "what": "lat matrix, CPU 16 -> memory node 0",
          "state": "disturbed",
          "cause": "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 sample(s) (4 of 5 samples discarded)"
        }
      ]
    },
    {
      "metric": "thread_lat_ns",
      "group": 1,
      "run": 2,
      "marks": [
        {
          "what": "lat matrix, CPU 0 -> memory node 0",
          "state": "noisy",
          "cause": "its samples spread 1.2% with none discarded and its CPU not busy"
        },
        {
          "what": "lat matrix, CPU 0 -> memory node 1",
          "state": "disturbed",
          "cause": "too few clean samples"
        },
        {
          "what": "lat matrix, CPU 16 -> memory node 0",
          "state": "disturbed",
          "cause": "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 sample(s) (4 of 5 samples discarded)"
        }
      ]
    }
  ]"#
    );
    let text = out(&db, &["compare", "1", "2"]);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("marked") || l.contains("disturbed") || l.contains("noisy"))
        .collect();
    assert_eq!(
        lines,
        [
            "Disturbed inputs: 1 run holds figures marked disturbed or noisy behind 10 metrics: \
             run 2 (THP always, performance governor). The rows and verdicts that rest on them \
             say so (!); measure those runs again on a quiet machine before trusting them.",
            "  [1] On marked inputs: run 2 of THP always, performance governor (disturbed): the \
             figures compared may have been held back by other work; measure those runs again \
             on a quiet machine.",
            "  [2] On marked inputs: run 2 of THP always, performance governor (noisy): the \
             figures compared may have been held back by other work; measure those runs again \
             on a quiet machine.",
            "  [3] On marked inputs: run 2 of THP always, performance governor (disturbed, \
             noisy): the figures compared may have been held back by other work; measure those \
             runs again on a quiet machine.",
        ]
    );
    // the run's own report names each marked figure with its cause
    let md_file = dir.path().join("r.md");
    np(&db).args(["report", "2", "-o"]).arg(&md_file).assert().success();
    let md = std::fs::read_to_string(&md_file).unwrap();
    let causes: Vec<&str> =
        md.lines().filter(|l| l.contains(": disturbed: ") || l.contains(": noisy: ")).collect();
    assert_eq!(
        causes,
        [
            "- bw global triad, 32 thread(s), memory 0-1: disturbed: CPU 3 was busy with other \
             processes for 48% of the time (9 of 11 samples discarded).",
            "- bw interleave triad, 32 thread(s), memory 0-1: noisy: the best repetitions still \
             spread 7% when the time ran out.",
            "- bw matrix triad, 16 thread(s), CPU node 0 -> memory 1: noisy: the best \
             repetitions still spread 12.2% when the time ran out.",
            "- lat matrix, CPU 0 -> memory node 0: noisy: its samples spread 1.2% with none \
             discarded and its CPU not busy.",
            "- lat matrix, CPU 0 -> memory node 1: disturbed: too few clean samples.",
            "- lat matrix, CPU 16 -> memory node 0: disturbed: the measuring thread was \
             switched out 7 time(s); a measuring thread changed CPU in 1 sample(s) (4 of 5 \
             samples discarded).",
            "- lat loaded, CPU 0: noisy: a load thread moved no line while latency was chased, \
             so the point understates its load.",
        ]
    );
}
