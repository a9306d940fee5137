//! The store end to end on temporary files: writing runs, reading them back,
//! crashed runs, refusing foreign and damaged files, export and import.

use std::path::{Path, PathBuf};

use results::context::{Machine, Reading};
use results::Record;
use serde_json::{json, Value};
use store::{ExportDoc, NewRun, RunId, RunRef, RunStatus, Store, StoreError, EXPORT_FORMAT};

/// A typed document (machine, configuration, topology) written as JSON.
fn doc<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn machine() -> Machine {
    doc(json!({"hostname": "db1", "cpu_model": "Xeon Gold 6338", "packages": 2, "nodes": 2,
           "mem_total_bytes": 274877906944u64}))
}

fn new_run(label: &str, started: &str) -> NewRun {
    let mut r = NewRun::new(format!("numaprobe run --label '{label}'"), "0.1.0");
    r.label = Some(label.to_string());
    r.started = Some(started.to_string());
    r.machine = machine();
    r.config = doc(json!({"numa_mode": "node-per-package", "thp": "always", "kernel": "6.1.0"}));
    r.topology = doc(json!({"schema_version": 1, "nodes": [{"id": 0}, {"id": 1}]}));
    r
}

/// A stored result of `kind` written as JSON, read as the store reads it.
fn rec(kind: &str, v: Value) -> Record {
    results::upgrade::read(kind, &v).record
}

/// A bandwidth result as `bw` writes it.
fn bw(node: u32, gbs: f64) -> Record {
    rec(
        "bw",
        json!({"mode": "local", "kernel": "triad", "threads": 28, "cpus": "0-27",
           "cpu_node": node, "mem_node": node, "mem_nodes": node.to_string(), "policy": "bind",
           "array_bytes": 1u64 << 30, "arrays": 3, "bytes_per_rep": 3u64 << 30,
           "best_gbs": gbs, "median_gbs": gbs - 1.0, "min_gbs": gbs - 2.0, "max_gbs": gbs,
           "mean_gbs": gbs - 1.0, "spread_pct": 1.9, "top_spread_pct": 0.5, "stable": true,
           "reps": 10, "median_rep_s": 0.03, "placement": {"status": "unverified", "check": null},
           "isa": "avx512", "stores": "nt", "pages": "thp", "llc_bytes": null,
           "size_rule_ok": true, "peak_gbs": null, "peak_fraction": null, "validated": true,
           "interrupted": false}),
    )
}

/// An audit finding as `audit` writes it.
fn finding(id: &str) -> Record {
    rec(
        "audit",
        json!({"id": id, "severity": "warn", "title": id, "found": "f", "expected": "e",
               "why": "w", "fix": "x", "needs": "runtime", "evidence": null}),
    )
}

fn db_path(dir: &Path) -> PathBuf {
    dir.join("sub/dir/results.db")
}

#[test]
fn a_run_is_written_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(dir.path());
    let mut db = Store::open(&path).unwrap();
    assert_eq!(db.schema_version().unwrap(), store::schema::SCHEMA_VERSION);
    let run = db.begin_run(&new_run("baseline", "2026-11-01T10:00:00.000Z")).unwrap();
    assert_eq!(db.add_result(run, &bw(0, 101.0)).unwrap(), 1);
    assert_eq!(db.add_result(run, &bw(1, 99.5)).unwrap(), 2);
    let lat = json!({"mode": "matrix", "cpu_node": 0, "mem_node": 1, "median_ns": 140.2});
    assert_eq!(db.add_result(run, &rec("lat", lat.clone())).unwrap(), 3);

    // While running, and owned by this live process, it shows as running.
    assert_eq!(db.run_summary(run).unwrap().status, RunStatus::Running);
    db.finish_run(run, RunStatus::Complete, None).unwrap();
    drop(db);

    let db = Store::open_existing(&path).unwrap();
    let runs = db.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    let s = &runs[0];
    assert_eq!(s.id, run);
    assert_eq!(s.label.as_deref(), Some("baseline"));
    assert_eq!(s.status, RunStatus::Complete);
    assert!(s.complete);
    assert_eq!(s.result_count, 3);
    assert_eq!(s.machine, "db1: Xeon Gold 6338, 2 packages, 2 nodes, 256 GiB");
    assert_eq!(s.started, "2026-11-01T10:00:00.000Z");
    assert!(s.finished.is_some());

    let loaded = db.load_run(run).unwrap();
    assert_eq!(loaded.results.len(), 3);
    assert_eq!(loaded.results[0].record, bw(0, 101.0));
    assert_eq!(loaded.results[0].as_stored, None, "today's record: stored as it writes");
    assert_eq!(loaded.results[2].record.kind(), "lat");
    // a hand-made chase is stored as the record it reads as: what it gave,
    // and not-a-number (null) for the figures it lacked
    let stored = loaded.results[2].stored_json();
    assert_eq!((stored["median_ns"].as_f64(), stored["cpu_node"].as_u64()), (Some(140.2), Some(0)));
    assert!(stored["p99_ns"].is_null());
    assert_eq!(loaded.machine_info, machine());
    assert_eq!(loaded.config.thp, Some(Reading::Value("always".into())));
    let local = |r: &&Record| matches!(r, Record::Bw(b) if b.mode == results::bw::Mode::Local);
    assert_eq!(loaded.records().filter(local).count(), 2);
}

#[test]
fn results_cannot_be_added_to_a_finished_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    let run = db.begin_run(&new_run("a", "2026-11-01T10:00:00.000Z")).unwrap();
    db.finish_run(run, RunStatus::Incomplete, Some("interrupted (Ctrl-C)")).unwrap();
    let err = db.add_result(run, &bw(0, 1.0)).unwrap_err();
    assert!(matches!(err, StoreError::RunClosed { .. }), "{err}");
    let s = db.run_summary(run).unwrap();
    assert_eq!(s.status, RunStatus::Incomplete);
    assert_eq!(s.message.as_deref(), Some("interrupted (Ctrl-C)"));
    assert!(db.finish_run(RunId(999), RunStatus::Complete, None).is_err());
}

#[test]
fn a_run_left_running_by_a_dead_process_is_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(dir.path());
    let mut db = Store::open(&path).unwrap();
    let run = db.begin_run(&new_run("crashed", "2026-11-01T10:00:00.000Z")).unwrap();
    db.add_result(run, &bw(0, 100.0)).unwrap();
    // Pretend the run belongs to a process that has exited.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead_pid = child.id();
    child.wait().unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute("UPDATE runs SET owner_pid = ?1", [dead_pid]).unwrap();
    let s = db.run_summary(run).unwrap();
    assert_eq!(s.status, RunStatus::Incomplete);
    assert!(!s.complete);
    assert_eq!(s.result_count, 1, "what was measured is kept");
    assert!(s.message.unwrap().contains("ended without finishing"));
    // Another boot of the same host: not running either.
    raw.execute("UPDATE runs SET owner_pid = ?1, owner_boot_id = 'x'", [std::process::id()])
        .unwrap();
    assert_eq!(db.run_summary(run).unwrap().status, RunStatus::Incomplete);
}

fn assert_untouched(path: &Path, before: &[u8], err: StoreError, expect: &str) {
    let text = err.to_string();
    assert!(text.contains(&path.display().to_string()), "error names the file: {text}");
    assert!(text.contains(expect), "{text}");
    assert_eq!(std::fs::read(path).unwrap(), before, "file left as it was");
}

#[test]
fn a_foreign_sqlite_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }));
    assert_untouched(&path, &before, err, "songs");

    let path = dir.path().join("app.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA application_id = 1234;").unwrap();
        c.execute_batch("CREATE TABLE t (x);").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert_untouched(&path, &before, err, "0x000004d2");
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "these are my notes, not a database\n").unwrap();
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotSqlite { .. }));
    assert_untouched(&path, &before, err, "not an SQLite file");
}

#[test]
fn a_corrupt_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    {
        let mut db = Store::open(&path).unwrap();
        let run = db.begin_run(&new_run("a", "2026-11-01T10:00:00.000Z")).unwrap();
        for i in 0..200 {
            db.add_result(run, &bw(i % 2, 100.0 + f64::from(i))).unwrap();
        }
        db.finish_run(run, RunStatus::Complete, None).unwrap();
    }
    // Closing the last connection checkpoints the WAL into the main file.
    assert!(!dir.path().join("results.db-wal").exists());
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 8192);
    // Scribble over the second page onwards (b-tree pages).
    for b in bytes.iter_mut().skip(4096) {
        *b = 0xA5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert_untouched(&path, &bytes, err, "corrupt");
}

#[test]
fn a_database_from_a_newer_numaprobe_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.db");
    drop(Store::open(&path).unwrap());
    rusqlite::Connection::open(&path).unwrap().execute_batch("PRAGMA user_version = 99").unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { found: 99, .. }), "{err}");
}

#[test]
fn open_existing_does_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.db");
    assert!(matches!(Store::open_existing(&path), Err(StoreError::Missing { .. })));
    assert!(!path.exists());
}

#[test]
fn run_references_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    let a = db.begin_run(&new_run("base", "2026-11-01T10:00:00.000Z")).unwrap();
    let b = db.begin_run(&new_run("snc2", "2026-11-02T10:00:00.000Z")).unwrap();
    let c = db.begin_run(&new_run("snc2", "2026-11-03T10:00:00.000Z")).unwrap();
    let r = |s: &str| db.resolve(&s.parse::<RunRef>().unwrap());
    assert_eq!(r("latest").unwrap(), c);
    assert_eq!(r("latest~2").unwrap(), a);
    assert_eq!(r(&b.to_string()).unwrap(), b);
    assert_eq!(r("base").unwrap(), a);
    let uuid = db.run_summary(b).unwrap().uuid;
    assert_eq!(r(&uuid.to_uppercase()).unwrap(), b);
    match r("snc2") {
        Err(StoreError::AmbiguousRun { ids, .. }) => assert_eq!(ids, format!("{b}, {c}")),
        other => panic!("expected ambiguity, got {other:?}"),
    }
    assert!(matches!(r("latest~3"), Err(StoreError::NoSuchRun(_))));
    assert!(matches!(r("42"), Err(StoreError::NoSuchRun(_))));
    assert!(matches!(r("nope"), Err(StoreError::NoSuchRun(_))));
}

#[test]
fn group_references_select_every_matching_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    let a = db.begin_run(&new_run("base", "2026-11-01T10:00:00.000Z")).unwrap();
    let b = db.begin_run(&new_run("snc2", "2026-11-02T10:00:00.000Z")).unwrap();
    let mut other = new_run("snc2", "2026-11-03T10:00:00.000Z");
    other.config = doc(json!({"fingerprint": "abcdef0123456789", "numa_mode": "per-die"}));
    let c = db.begin_run(&other).unwrap();
    let g = |s: &str| db.resolve_group(&s.parse::<RunRef>().unwrap());
    assert_eq!(g("label:snc2").unwrap(), vec![b, c]);
    assert_eq!(g("label:base").unwrap(), vec![a]);
    // A plain label or id still names one run.
    assert_eq!(g("base").unwrap(), vec![a]);
    assert!(matches!(g("snc2"), Err(StoreError::AmbiguousRun { .. })));
    // config: by the fingerprint or a prefix of it.
    assert_eq!(g("config:ABCDEF").unwrap(), vec![c]);
    let hash = db.run_summary(a).unwrap().config_hash;
    assert_eq!(g(&format!("config:{hash}")).unwrap(), vec![a, b]);
    assert!(matches!(g("label:nothing"), Err(StoreError::NoSuchRun(s)) if s == "label:nothing"));
    assert!(matches!(g("config:ffff9999"), Err(StoreError::NoSuchRun(_))));
    // A group with one run resolves as a single run too.
    assert_eq!(db.resolve(&"label:base".parse().unwrap()).unwrap(), a);
}

#[test]
fn runs_are_grouped_by_machine() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    db.begin_run(&new_run("a", "2026-11-01T10:00:00.000Z")).unwrap();
    db.begin_run(&new_run("b", "2026-11-02T10:00:00.000Z")).unwrap();
    let mut other = new_run("c", "2026-11-03T10:00:00.000Z");
    other.machine = doc(json!({"hostname": "db2", "cpu_model": "EPYC 9654"}));
    db.begin_run(&other).unwrap();
    let runs = db.list_runs().unwrap();
    assert_eq!(runs[0].machine_fingerprint, runs[1].machine_fingerprint);
    assert_ne!(runs[0].machine_fingerprint, runs[2].machine_fingerprint);
    // A document without a fingerprint is keyed by the hash of the document
    // as written, as before it was typed: older databases keep grouping.
    let raw = json!({"hostname": "db2", "cpu_model": "EPYC 9654"});
    assert_eq!(runs[2].machine_fingerprint, store::util::json_hash(&raw));
    assert_eq!(runs[2].machine_fingerprint, "00c9c91c815d97a3");
    assert_eq!(db.list_runs_for_machine(&runs[0].machine_fingerprint).unwrap().len(), 2);
    assert_eq!(runs[2].machine, "db2: EPYC 9654");
}

#[test]
fn two_handles_write_to_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = db_path(dir.path());
    let mut one = Store::open(&path).unwrap();
    let mut two = Store::open(&path).unwrap();
    let r1 = one.begin_run(&new_run("one", "2026-11-01T10:00:00.000Z")).unwrap();
    let r2 = two.begin_run(&new_run("two", "2026-11-01T10:00:01.000Z")).unwrap();
    for i in 0..5 {
        one.add_result(r1, &bw(0, f64::from(i))).unwrap();
        two.add_result(r2, &bw(1, f64::from(i))).unwrap();
    }
    assert_eq!(one.run_summary(r2).unwrap().result_count, 5);
    assert_eq!(two.run_summary(r1).unwrap().result_count, 5);
}

#[test]
fn export_then_import_is_faithful_and_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = Store::open(dir.path().join("a.db")).unwrap();
    let r1 = a.begin_run(&new_run("base", "2026-11-01T10:00:00.000Z")).unwrap();
    a.add_result(r1, &bw(0, 100.0)).unwrap();
    a.add_result(r1, &finding("thp")).unwrap();
    a.finish_run(r1, RunStatus::Complete, None).unwrap();
    let r2 = a.begin_run(&new_run("still running", "2026-11-02T10:00:00.000Z")).unwrap();
    a.add_result(r2, &bw(1, 90.0)).unwrap();

    let text = a.export_runs(&[r1, r2]).unwrap().to_json();
    let doc = ExportDoc::from_json(&text, "a.json").unwrap();
    assert_eq!(doc.format, EXPORT_FORMAT);
    assert_eq!(doc.runs.len(), 2);

    let mut b = Store::open(dir.path().join("b.db")).unwrap();
    // b already has a run of its own: imported ids do not collide with it.
    let own = b.begin_run(&new_run("own", "2026-10-01T10:00:00.000Z")).unwrap();
    let first = b.import(&doc).unwrap();
    assert_eq!(first.imported.len(), 2);
    assert!(first.skipped.is_empty());
    assert!(first.imported.iter().all(|i| i.id != own));
    let second = b.import(&doc).unwrap();
    assert!(second.imported.is_empty());
    assert_eq!(second.skipped.len(), 2);
    assert_eq!(b.list_runs().unwrap().len(), 3, "no duplicates");

    let orig = a.load_run(r1).unwrap();
    let copy = b.load(&RunRef::Uuid(orig.summary.uuid.clone())).unwrap();
    assert_eq!(copy.results, orig.results);
    assert_eq!(copy.summary.label, orig.summary.label);
    assert_eq!(copy.summary.started, orig.summary.started);
    assert_eq!(copy.summary.machine_fingerprint, orig.summary.machine_fingerprint);
    assert_eq!(copy.summary.config_hash, orig.summary.config_hash);
    assert_eq!(copy.topology, orig.topology);
    assert!(copy.summary.imported);
    // A run exported while running arrives incomplete.
    let moved = b.load(&RunRef::Label("still running".into())).unwrap();
    assert_eq!(moved.summary.status, RunStatus::Incomplete);
    assert_eq!(moved.results.len(), 1);
}

/// Results this version reads differently than they were stored (a kind
/// written by a newer numaprobe, the first version's bandwidth placement, a
/// hand-made finding, a record with a field added later) go through an
/// import and an export byte for byte, while reading as records.
#[test]
fn results_of_any_shape_survive_import_and_export_unchanged() {
    let today = bw(0, 100.0).to_json();
    let mut newer = today.clone();
    newer["added_by_a_newer_numaprobe"] = json!({"x": [1, 2]});
    let mut v1 = today.clone();
    v1["placement"] = json!(0.998);
    v1["placement_check"] = json!({"expected": "0", "fraction": 0.998, "ok": true});
    let results = [
        ("future-kind", json!({"what": "a kind this version does not know"})),
        ("bw", v1),
        ("audit", json!({"rule": "thp", "level": "warning", "title": "THP is never"})),
        ("bw", newer),
        ("bw", today),
    ];
    let doc = json!({"format": EXPORT_FORMAT, "version": 1, "exported": "2026-11-20T10:00:00Z",
        "runs": [{"uuid": "0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a21", "label": "odd",
            "command_line": "x", "tool_version": "9.9.9", "started": "2026-11-20T10:00:00Z",
            "finished": null, "status": "complete", "message": null,
            "machine": {"fingerprint": "m", "description": "d", "info": {"future": 1}},
            "config_hash": "c", "config": {"future_setting": {"a": 1}}, "topology": {},
            "results": results.iter().enumerate().map(|(i, (k, p))| json!({"seq": i + 1,
                "recorded": "2026-11-20T10:00:00Z", "kind": k, "payload": p})).collect::<Vec<_>>()}]});
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    let imported = db.import(&ExportDoc::from_json(&doc.to_string(), "odd.json").unwrap()).unwrap();
    let run = db.load_run(imported.imported[0].id).unwrap();
    let kinds: Vec<&str> = run.records().map(Record::kind).collect();
    assert_eq!(kinds, ["future-kind", "bw", "audit", "bw", "bw"]);
    assert!(matches!(run.results[0].record, Record::Unknown(_)));
    assert!(matches!(run.results[1].record, Record::Bw(_)), "the first version's, upgraded");
    assert!(matches!(run.results[2].record, Record::Finding(_)), "hand-made, read");
    let kept: Vec<bool> = run.results.iter().map(|r| r.as_stored.is_some()).collect();
    assert_eq!(kept, [false, true, true, true, false], "the stored text kept beside a reading");
    let back: Value =
        serde_json::from_str(&db.export_runs(&[run.summary.id]).unwrap().to_json()).unwrap();
    let r = &back["runs"][0];
    assert_eq!(r["results"], doc["runs"][0]["results"]);
    assert_eq!(r["machine"]["info"], doc["runs"][0]["machine"]["info"]);
    assert_eq!(r["config"], doc["runs"][0]["config"]);
    assert_eq!(r["topology"], json!({}));
}

#[test]
fn bad_export_documents_are_named() {
    let e = ExportDoc::from_json("{", "x.json").unwrap_err().to_string();
    assert!(e.starts_with("x.json: not a numaprobe export: invalid JSON"), "{e}");
    let e = ExportDoc::from_json(r#"{"format": "other"}"#, "y.json").unwrap_err().to_string();
    assert!(e.contains("format is \"other\""), "{e}");
    let e =
        ExportDoc::from_json(r#"{"format": "numaprobe-export", "version": 7, "runs": []}"#, "z")
            .unwrap_err()
            .to_string();
    assert!(e.contains("export version 7"), "{e}");
}

/// Issue 37 cause 6, for configurations without numaprobe's seal: a
/// hand-made export keeps its `config_hash` (the report goldens' are
/// hand-made), but a hash that already names other settings in the
/// database is not taken: the run is filed under its own settings' hash,
/// with a warning naming it, so runs of different settings never pool.
#[test]
fn a_hand_made_config_hash_that_names_other_settings_is_not_taken() {
    let run = |uuid: &str, label: &str, thp: &str| {
        json!({"uuid": uuid, "label": label, "command_line": "x", "tool_version": "0.1.0",
            "started": "2026-11-20T10:00:00Z", "finished": null, "status": "complete",
            "message": null, "machine": {"fingerprint": "m", "description": "d", "info": {}},
            "config_hash": "c0ffee0000000001", "config": {"thp_enabled": thp}, "topology": {},
            "results": []})
    };
    let doc = |runs: Vec<Value>| {
        let d = json!({"format": EXPORT_FORMAT, "version": 1,
            "exported": "2026-11-20T10:00:00Z", "runs": runs});
        ExportDoc::from_json(&d.to_string(), "hand.json").unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(db_path(dir.path())).unwrap();
    let first = db
        .import(&doc(vec![
            run("0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a01", "a", "always"),
            run("0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a02", "a again", "always"),
        ]))
        .unwrap();
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    let hash = |db: &Store, id: RunId| db.run_summary(id).unwrap().config_hash;
    assert_eq!(hash(&db, first.imported[0].id), "c0ffee0000000001", "a hand-made hash is kept");
    assert_eq!(hash(&db, first.imported[1].id), "c0ffee0000000001", "same settings: pooled");

    let second =
        db.import(&doc(vec![run("0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a03", "b", "never")])).unwrap();
    let id = second.imported[0].id;
    let stored = hash(&db, id);
    assert_ne!(stored, "c0ffee0000000001", "other settings are not pooled under that hash");
    let own = db.load_run(id).unwrap().config.settings_hash();
    assert_eq!(stored, own, "filed under its own settings' hash");
    assert_eq!(second.warnings.len(), 1, "{:?}", second.warnings);
    let w = &second.warnings[0];
    assert!(
        w.starts_with(&format!(
            "run {id} (uuid 0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a03, label \"b\")"
        )),
        "{w}"
    );
    assert!(w.contains("already names other settings in this database (run 1)"), "{w}");
    assert!(w.contains(&format!("stored under {own}")), "{w}");
}
