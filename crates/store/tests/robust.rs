//! The store against hostile or unusual input: read-only
//! opening that never creates or migrates, start times that are not times,
//! duplicate result numbers in an import, and a database that fills up.

use serde_json::json;
use store::{ExportDoc, NewRun, RunRef, RunStatus, Store, StoreError};

fn run(label: &str, started: &str) -> NewRun {
    let mut r = NewRun::new("numaprobe run", "0.1.0");
    r.label = Some(label.to_string());
    r.started = Some(started.to_string());
    r.machine = serde_json::from_value(json!({"hostname": "db1"})).unwrap();
    r
}

fn add(db: &mut Store, label: &str, started: &str) -> store::RunId {
    let id = db.begin_run(&run(label, started)).unwrap();
    let bw = json!({"mode": "local", "kernel": "triad", "best_gbs": 1.0});
    db.add_result(id, &results::upgrade::read("bw", &bw).record).unwrap();
    db.finish_run(id, RunStatus::Complete, None).unwrap();
    id
}

#[test]
fn reading_never_creates_or_fills_in_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.db");
    assert!(matches!(Store::open_existing(&missing), Err(StoreError::Missing { .. })));
    assert!(!missing.exists());
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = Store::open_existing(&empty).unwrap_err();
    assert!(matches!(err, StoreError::Empty { .. }), "{err}");
    assert!(err.to_string().starts_with(&empty.display().to_string()), "{err}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0, "the empty file stays empty");
}

#[test]
fn a_read_only_store_refuses_to_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut db = Store::open(&path).unwrap();
    add(&mut db, "a", "2026-11-01T10:00:00.000Z");
    drop(db);
    let before = std::fs::read(&path).unwrap();
    let mut ro = Store::open_existing(&path).unwrap();
    assert_eq!(ro.list_runs().unwrap().len(), 1);
    assert!(ro.begin_run(&run("b", "2026-11-02T10:00:00.000Z")).is_err());
    drop(ro);
    assert_eq!(std::fs::read(&path).unwrap(), before, "the database file is unchanged");
}

#[test]
fn latest_follows_the_instant_and_a_stored_non_time_is_never_latest() {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(dir.path().join("r.db")).unwrap();
    // As text, "+05:00" sorts after "Z"; as instants it is an hour earlier.
    let early = add(&mut db, "early", "2026-11-05T01:00:00.000+05:00");
    let late = add(&mut db, "late", "2026-11-04T21:00:00.000Z");
    // What an import wrote before start times were checked.
    let junk = add(&mut db, "junk", "not a date");
    assert_eq!(db.resolve(&RunRef::Latest(0)).unwrap(), late);
    assert_eq!(db.resolve(&RunRef::Latest(1)).unwrap(), early);
    assert_eq!(db.resolve(&RunRef::Latest(2)).unwrap(), junk);
    let order: Vec<_> = db.list_runs().unwrap().iter().map(|r| r.id).collect();
    assert_eq!(order, [junk, early, late]);
    let fp = db.run_summary(late).unwrap().machine_fingerprint;
    assert_eq!(db.latest_run_of_machine(&fp).unwrap(), Some(late));
}

fn export_of(started: &str, seqs: &[u32]) -> String {
    let results: Vec<_> = seqs
        .iter()
        .map(|s| {
            json!({"seq": s, "recorded": "2026-11-01T10:00:01.000Z", "kind": "bw",
                        "payload": {"mode": "local", "best_gbs": 1.0}})
        })
        .collect();
    json!({"format": "numaprobe-export", "version": 1, "exported": "2026-11-01T11:00:00Z",
        "runs": [{"uuid": "00000000-0000-4000-8000-000000000001", "label": "x",
            "command_line": "numaprobe run", "tool_version": "0.1.0", "started": started,
            "finished": null, "status": "complete", "message": null,
            "machine": {"fingerprint": "f", "description": "d", "info": {}},
            "config_hash": "c", "config": {}, "topology": {}, "results": results}]})
    .to_string()
}

#[test]
fn an_import_with_a_start_that_is_not_a_time_is_refused_naming_the_run() {
    let err = ExportDoc::from_json(&export_of("not a date", &[1]), "x.json").unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("x.json")
            && msg.contains("00000000-0000-4000-8000-000000000001")
            && msg.contains("\"not a date\"")
            && msg.contains("RFC 3339"),
        "{msg}"
    );
    assert!(ExportDoc::from_json(&export_of("2026-11-01T10:00:00Z", &[1]), "x").is_ok());
}

#[test]
fn duplicate_result_numbers_are_refused_before_anything_is_written() {
    let err = ExportDoc::from_json(&export_of("2026-11-01T10:00:00Z", &[1, 2, 2]), "x.json")
        .unwrap_err()
        .to_string();
    assert!(err.contains("00000000-0000-4000-8000-000000000001") && err.contains("seq 2"), "{err}");
    assert!(!err.contains("UNIQUE"), "{err}");
}

/// A file carrying numaprobe's application id but other tables was
/// adopted: the migration added numaprobe's tables beside them. Such a
/// file is refused, untouched, by writers and readers, at schema version
/// 0 and 1 alike.
#[test]
fn a_file_with_our_application_id_and_foreign_tables_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (version, extra) in [(0, ""), (1, store::schema::MIGRATIONS[0])] {
        let path = dir.path().join(format!("v{version}.db"));
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(extra).unwrap();
            c.execute_batch(&format!(
                "CREATE TABLE accounts (id INTEGER, secret TEXT);
                 INSERT INTO accounts VALUES (1, 'x');
                 PRAGMA application_id = {}; PRAGMA user_version = {version};",
                store::schema::APPLICATION_ID
            ))
            .unwrap();
        }
        let before = std::fs::read(&path).unwrap();
        for err in [Store::open(&path).unwrap_err(), Store::open_existing(&path).unwrap_err()] {
            assert!(matches!(err, StoreError::NotOurSchema { .. }), "{err:?}");
            let msg = err.to_string();
            assert!(msg.contains("accounts") && msg.contains("left untouched"), "{msg}");
        }
        assert_eq!(std::fs::read(&path).unwrap(), before, "version {version}: untouched");
    }
}

/// Guards issue 37 cause 4 on the read side: a run written by an older
/// numaprobe or by hand with 70,000 CPUs in its topology, 70,000 declared
/// keys or 65,537 results was rebuilt whole by every reader (1.37 GB at
/// 10^6 CPUs). It is now refused by the import's limits, naming the run,
/// while the database's other runs read as usual.
#[test]
fn a_stored_run_over_the_import_limits_is_refused_by_name_and_the_others_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.db");
    let mut db = Store::open(&path).unwrap();
    let mut ids = Vec::new();
    for label in ["fine", "cpus", "declared", "results"] {
        let id = db.begin_run(&run(label, "2026-11-05T08:00:00Z")).unwrap();
        db.finish_run(id, store::RunStatus::Complete, None).unwrap();
        ids.push(id);
    }
    drop(db);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        let cpus: Vec<String> =
            (0..70_000).map(|i| format!(r#"{{"id": {i}, "node": 0}}"#)).collect();
        c.execute(
            "UPDATE runs SET topology_json = ?2 WHERE id = ?1",
            rusqlite::params![ids[1].0, format!(r#"{{"cpus": [{}]}}"#, cpus.join(","))],
        )
        .unwrap();
        let keys: Vec<String> = (0..70_000).map(|i| format!(r#""bios.k{i}": "v""#)).collect();
        c.execute(
            "UPDATE runs SET config_json = ?2 WHERE id = ?1",
            rusqlite::params![ids[2].0, format!(r#"{{"declared": {{{}}}}}"#, keys.join(","))],
        )
        .unwrap();
        c.execute_batch("BEGIN").unwrap();
        let mut ins = c
            .prepare(
                "INSERT INTO results (run_id, seq, recorded, kind, payload_json)
                 VALUES (?1, ?2, '2026-11-05T08:00:01Z', 'future-kind', '{}')",
            )
            .unwrap();
        for seq in 1..=65_537 {
            ins.execute(rusqlite::params![ids[3].0, seq]).unwrap();
        }
        drop(ins);
        c.execute_batch("COMMIT").unwrap();
    }
    let db = Store::open_existing(&path).unwrap();
    assert!(db.load_run(ids[0]).is_ok(), "the ordinary run reads as before");
    for (id, label, why) in [
        (ids[1], "cpus", "its topology has an array or object of more than 65536 items"),
        (ids[2], "declared", "its configuration has an array or object of more than 65536 items"),
        (ids[3], "results", "it holds 65537 results"),
    ] {
        let e = db.load_run(id).err().unwrap_or_else(|| panic!("{label}: read whole"));
        assert!(matches!(e, StoreError::RunTooLarge { .. }), "{label}: {e:?}");
        let msg = e.to_string();
        assert!(msg.contains(&format!("run {id} (\"{label}\") is too large to read")), "{msg}");
        assert!(msg.contains(why), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        let e = db.export_runs(&[id]).err().unwrap_or_else(|| panic!("{label}: exported"));
        assert!(matches!(e, StoreError::RunTooLarge { .. }), "export: {e:?}");
    }
    assert_eq!(db.list_runs().unwrap().len(), 4, "listed, with the count of its results");
}
