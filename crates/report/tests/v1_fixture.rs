//! Reports of runs stored by the first version (`data/v1`, see its README)
//! must stay byte-identical: the database opens, the export imports, and
//! every report, summary, comparison and CSV drawn from them equals the
//! golden file the first version wrote. `NUMAPROBE_BLESS=1` rewrites the
//! golden files (only for a deliberate change of a report).

use std::path::{Path, PathBuf};

use analysis::study::Study;
use report::{render_report, study, Format};
use store::{ExportDoc, LoadedRun, RunRef, Store};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1")
}

/// Compares `got` with the golden file `name` (or writes it when blessing).
fn golden(name: &str, got: &[u8], failures: &mut Vec<String>) {
    let path = data().join("golden").join(name);
    if std::env::var_os("NUMAPROBE_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if want != got {
        let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(got));
        let line = w.lines().zip(g.lines()).position(|(a, b)| a != b);
        let at = line.map_or_else(
            || "length differs".to_string(),
            |l| {
                format!(
                    "line {}:\n  want {:?}\n  got  {:?}",
                    l + 1,
                    w.lines().nth(l).unwrap(),
                    g.lines().nth(l).unwrap()
                )
            },
        );
        failures.push(format!("{name}: {at}"));
    }
}

/// The v1 database, copied (opening may migrate it) and every run loaded.
fn stored_runs() -> (tempfile::TempDir, Vec<LoadedRun>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    std::fs::copy(data().join("results.db"), &db).unwrap();
    let store = Store::open_existing(&db).unwrap();
    let mut ids: Vec<i64> = store.list_runs().unwrap().iter().map(|s| s.id.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    let runs = ids.iter().map(|id| store.load(&RunRef::Id(*id)).unwrap()).collect();
    (dir, runs)
}

/// Every run's Markdown, text summary (and HTML when `html`), and the CSV of
/// them all.
fn check_runs(prefix: &str, runs: &[LoadedRun], html: bool, failures: &mut Vec<String>) {
    for run in runs {
        let id = run.summary.id.0;
        let md = render_report(Format::Markdown, run, &[]);
        golden(&format!("{prefix}run-{id}.md"), &md, failures);
        if html {
            let html = render_report(Format::Html, run, &[]);
            golden(&format!("{prefix}run-{id}.html"), &html, failures);
        }
        golden(&format!("{prefix}run-{id}.txt"), report::summary_text(run).as_bytes(), failures);
    }
    golden(&format!("{prefix}runs.csv"), report::export::csv::runs_csv(runs).as_bytes(), failures);
}

/// What `compare` prints for these runs (each its own group, the first the
/// baseline).
fn comparison_text(runs: &[LoadedRun]) -> String {
    let s = Study::of_runs(runs);
    format!(
        "{}\n{}\n{}\n{}\n{}\n{}\n",
        study::groups_table(&s).to_text(),
        study::settings_table(&s).to_text(),
        study::settings_same_line(&s),
        study::metrics_table_with(&s, &study::group_noise(&s, &runs.iter().collect::<Vec<_>>()))
            .to_text(),
        study::verdict_lines(&s).join("\n"),
        s.recommendations
            .iter()
            .map(|r| format!("{}: {}", r.profile, study::recommend::recommendation_text(&s, r)))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

#[test]
fn reports_of_the_v1_database_are_unchanged() {
    let (_dir, runs) = stored_runs();
    let mut failures = Vec::new();
    check_runs("", &runs, true, &mut failures);
    // the synthetic baseline against THP always and the epyc run
    let (base, rest) = (&runs[2], &runs[3..5]);
    golden("compare-3-4-5.md", &render_report(Format::Markdown, base, rest), &mut failures);
    golden("compare-3-4-5.html", &render_report(Format::Html, base, rest), &mut failures);
    golden("compare-3-4-5.txt", comparison_text(&runs[2..5]).as_bytes(), &mut failures);
    // the real quick run against the interrupted one
    let pair = [runs[0].clone(), runs[5].clone()];
    golden("compare-1-6.md", &render_report(Format::Markdown, &pair[0], &pair[1..]), &mut failures);
    golden("compare-1-6.txt", comparison_text(&pair).as_bytes(), &mut failures);
    assert!(failures.is_empty(), "reports changed:\n{}", failures.join("\n"));
}

#[test]
fn reports_of_the_v1_export_are_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(dir.path().join("r.db")).unwrap();
    let path = data().join("real-export.json");
    let doc =
        ExportDoc::from_json(&std::fs::read_to_string(&path).unwrap(), "real-export.json").unwrap();
    let out = db.import(&doc).unwrap();
    assert_eq!(out.imported.len(), 3);
    let runs: Vec<LoadedRun> =
        out.imported.iter().map(|i| db.load(&RunRef::Id(i.id.0)).unwrap()).collect();
    let mut failures = Vec::new();
    check_runs("import-", &runs, false, &mut failures);
    assert!(failures.is_empty(), "reports changed:\n{}", failures.join("\n"));
}

/// Every result of the v1 database reads as a typed record: the real runs'
/// (every kind, audit findings and exec policies included) as they are or,
/// for the first version's bandwidth placement, upgraded (the stored text
/// kept beside the record), and the synthetic runs' hand-made payloads with
/// their alias names. Nothing reads as an unknown result.
#[test]
fn v1_results_read_as_typed_records() {
    let (_dir, runs) = stored_runs();
    let mut typed = std::collections::BTreeMap::<String, usize>::new();
    for run in &runs {
        for r in &run.results {
            let kind = r.record.kind();
            assert!(
                !matches!(r.record, results::Record::Unknown(_)),
                "run {} seq {}: {kind} not read: {}",
                run.summary.id,
                r.seq,
                r.stored_json()
            );
            let real = [1, 2, 6].contains(&run.summary.id.0);
            if real && matches!(kind, "exec" | "audit") {
                assert_eq!(r.as_stored, None, "{kind}: the record writes what was stored");
            }
            if real {
                *typed.entry(kind.to_string()).or_default() += 1;
            }
        }
    }
    // run 1: 4 bw, 39 lat, 2 summaries and its findings; run 2: 2 exec;
    // run 6: 4 bw, 34 lat, 2 summaries and its findings
    let count = |k: &str| typed.get(k).copied().unwrap_or(0);
    assert_eq!((count("bw"), count("lat"), count("lat-summary"), count("exec")), (8, 73, 4, 2));
    assert!(count("audit") >= 2, "{typed:?}");
    // the first version's bandwidth results: upgraded, the stored text kept
    let bw = runs[0].results.iter().find(|r| r.record.kind() == "bw").unwrap();
    let stored = bw.stored_json();
    assert!(stored["placement"].is_number() && stored.get("placement_check").is_some());
    let results::Record::Bw(b) = &bw.record else { unreachable!() };
    assert!(b.placement.check.is_some(), "{b:?}");
}

/// The context documents of every exported run (the real v1 runs and the
/// synthetic fixtures) read into their typed form and write back exactly,
/// and the settings of every run numaprobe wrote hash to the fingerprint
/// they were stored with: a database written before the documents were
/// typed keeps grouping its runs by the same keys.
#[test]
fn context_documents_round_trip_and_keep_their_hashes() {
    use results::context::{Configuration, Machine, RunTopology};
    use serde_json::Value;
    let files = [
        data().join("real-export.json"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/synthetic-export.json"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/snc2-cxl-export.json"),
    ];
    let mut hashed = 0;
    for (i, f) in files.into_iter().enumerate() {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for run in doc["runs"].as_array().unwrap() {
            let uuid = &run["uuid"];
            let config: Configuration = serde_json::from_value(run["config"].clone()).unwrap();
            assert_eq!(serde_json::to_value(&config).unwrap(), run["config"], "{uuid} config");
            let machine: Machine = serde_json::from_value(run["machine"]["info"].clone()).unwrap();
            let back = serde_json::to_value(&machine).unwrap();
            assert_eq!(back, run["machine"]["info"], "{uuid} machine");
            let topo: RunTopology = serde_json::from_value(run["topology"].clone()).unwrap();
            assert_eq!(serde_json::to_value(&topo).unwrap(), run["topology"], "{uuid} topology");
            let why = serde_json::from_value::<topo::Topology>(run["topology"].clone()).err();
            assert!(topo.get().is_some(), "{uuid}: the topology reads as one: {why:?}");
            if i > 0 {
                continue; // the synthetic runs' hashes are made up
            }
            // This version's configurations carry their `fingerprint`; the
            // first version's were grouped by the hash of the whole document.
            let hash = match &config.fingerprint {
                Some(fp) => {
                    assert_eq!(&config.settings_hash(), fp, "{uuid}: settings hash");
                    fp.clone()
                }
                None => store::util::json_hash(&serde_json::to_value(&config).unwrap()),
            };
            assert_eq!(run["config_hash"], hash.as_str(), "{uuid}");
            let m = &run["machine"];
            assert_eq!(machine.fingerprint.as_deref(), m["fingerprint"].as_str(), "{uuid}");
            hashed += 1;
        }
    }
    assert_eq!(hashed, 3, "the three real runs' configurations keep their hash");
}
