//! On the real binary: eight writers at once on one database
//! (seven imports and a `run`).

#[path = "support/lock.rs"]
mod lock_support;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

fn fixture() -> Value {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures/synthetic-export.json");
    serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap()
}

fn np(db: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("numaprobe"));
    c.env_remove("NUMAPROBE_DB")
        .env("NUMAPROBE_LOCK", lock_support::private_lock("load"))
        .arg("--db")
        .arg(db);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The fixture's runs under fresh UUIDs (so every export adds runs).
fn fresh_runs(tag: usize) -> Vec<Value> {
    let doc = fixture();
    let mut runs = doc["runs"].as_array().unwrap().clone();
    for (i, r) in runs.iter_mut().enumerate() {
        r["uuid"] = format!("{:08x}-0000-4000-8000-{:012x}", tag, i).into();
    }
    runs
}

fn write_export(path: &Path, runs: &[Value]) {
    let mut doc = fixture();
    doc["runs"] = Value::Array(runs.to_vec());
    std::fs::write(path, doc.to_string()).unwrap();
}

fn uuids_in(db: &Path) -> Vec<String> {
    let out = np(db).args(["list", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().unwrap().iter().map(|r| r["uuid"].as_str().unwrap().to_string()).collect()
}

/// Seven imports and a run started together on `db`: every one succeeds
/// and every run is there.
fn eight_writers(dir: &Path, db: &Path, round: usize) {
    let mut expected = uuids_in_or_none(db);
    let mut children: Vec<(String, Child)> = Vec::new();
    for i in 0..7 {
        let runs = fresh_runs(round * 100 + i);
        expected.extend(runs.iter().map(|r| r["uuid"].as_str().unwrap().to_string()));
        let f = dir.join(format!("e{round}-{i}.json"));
        write_export(&f, &runs);
        let child = np(db)
            .arg("import")
            .arg(&f)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        children.push((format!("import {i}"), child));
    }
    let run = np(db)
        .args(["--json", "--quiet", "run", "--quick", "--only", "bw-local", "--report-dir"])
        .arg(dir.join("reports"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    children.push(("run".into(), run));
    let mut run_uuid = None;
    for (what, child) in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "round {round}, {what}: {}", text(&out.stderr));
        if what == "run" {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["status"], "complete", "{v}");
            run_uuid = Some(v["uuid"].as_str().unwrap().to_string());
        }
    }
    expected.push(run_uuid.unwrap());
    let mut got = uuids_in(db);
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "round {round}: every run of every writer, once");
}

fn uuids_in_or_none(db: &Path) -> Vec<String> {
    if db.exists() {
        uuids_in(db)
    } else {
        Vec::new()
    }
}

/// Four parallel imports: 7 of 12 failed "database is locked" on an
/// existing database, 9 of 12 on a new one ("table machines already
/// exists"). Eight writers, on a new database and then on that one.
#[test]
fn eight_concurrent_writers_on_one_database_all_succeed_and_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    eight_writers(dir.path(), &db, 1);
    eight_writers(dir.path(), &db, 2);
}
