//! Imports that must not poison a database: a configuration edited by
//! hand is filed under the hash of what it holds (with a warning naming
//! the run), and a run of a hostile shape (a topology of 10^6 CPUs, 10^6
//! declared keys) is refused in one line with nothing of its file
//! imported. The runs are recorded here by `exec` (`true` under one
//! placement: no measurement) and exported, then edited.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn np(dir: &Path, db: &str) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_DB", dir.join(db))
        .env("NUMAPROBE_LOCK", dir.join("m.lock"))
        .env("NUMAPROBE_STATE_DIR", dir.join("state"));
    c
}

fn ok(c: &mut Command) -> (String, String) {
    let out = c.output().unwrap();
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{c:?}: {o}{e}");
    (o, e)
}

/// A database `a.db` holding one `exec` run declaring bios.a=1, and its
/// export.
fn recorded(dir: &Path) -> (Value, PathBuf) {
    ok(np(dir, "a.db")
        .args(["exec", "-q", "-r", "1", "-p", "default", "--set", "bios.a=1"])
        .args(["--", "true"]));
    let out = dir.join("a.json");
    ok(np(dir, "a.db").args(["export", "latest", "-o"]).arg(&out));
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (doc, out)
}

fn config_hash(dir: &Path, db: &str) -> String {
    let (o, _) = ok(np(dir, db).args(["--json", "show", "latest"]));
    let v: Value = serde_json::from_str(&o).unwrap();
    v["config_hash"].as_str().unwrap().to_string()
}

/// Guards issue 37 cause 6: a hand-edited configuration kept its
/// original `config_hash`, so runs of different settings pooled as one.
#[test]
fn an_edited_configuration_is_filed_under_its_own_hash_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (mut doc, file) = recorded(d);
    let original = config_hash(d, "a.db");

    // Unedited: the same hash, no warning.
    let (_, err) = ok(np(d, "b.db").arg("import").arg(&file));
    assert!(!err.contains("config_hash"), "{err}");
    assert_eq!(config_hash(d, "b.db"), original);

    // Edited (the declared setting changed, hash and fingerprint kept).
    let run = &mut doc["runs"][0];
    run["config"]["declared"]["bios.a"] = Value::from("2");
    run["uuid"] = Value::from("3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6b");
    let edited = d.join("edited.json");
    std::fs::write(&edited, doc.to_string()).unwrap();
    let (_, err) = ok(np(d, "c.db").arg("import").arg(&edited));
    assert!(err.contains("warning"), "{err}");
    assert!(err.contains("run 1 (uuid 3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6b"), "{err}");
    assert!(err.contains(&format!("its config_hash {original} does not match")), "{err}");
    let stored = config_hash(d, "c.db");
    assert_ne!(stored, original, "filed under the edited configuration's own hash");
    let (o, _) = ok(np(d, "c.db").args(["--json", "show", "latest"]));
    let shown: Value = serde_json::from_str(&o).unwrap();
    assert_eq!(shown["config"]["fingerprint"], Value::from(stored.as_str()));
}

/// Guards issue 37 cause 4: 10^6 CPUs in a run's topology took 2 GB to
/// import and 1.4 GB in every reader; 10^6 declared keys 500 MB. Both
/// are refused in one line and nothing of the file is imported (the good
/// run before them included).
#[test]
fn runs_of_a_hostile_shape_are_refused_and_nothing_of_their_file_is_imported() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (doc, _) = recorded(d);
    let good = doc["runs"][0].clone();
    for (what, edit) in [
        (
            "cpus",
            Box::new(|r: &mut Value| {
                let cpu = r["topology"]["cpus"][0].clone();
                r["topology"]["cpus"] = Value::Array(vec![cpu; 70_000]);
            }) as Box<dyn Fn(&mut Value)>,
        ),
        (
            "declared",
            Box::new(|r: &mut Value| {
                let keys: serde_json::Map<String, Value> =
                    (0..2000).map(|i| (format!("bios.k{i}"), Value::from("v"))).collect();
                r["config"]["declared"] = Value::Object(keys);
            }),
        ),
    ] {
        let mut bad = good.clone();
        bad["uuid"] = Value::from("3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6c");
        edit(&mut bad);
        let mut two = doc.clone();
        two["runs"] = Value::Array(vec![good.clone(), bad]);
        let file = d.join(format!("{what}.json"));
        std::fs::write(&file, two.to_string()).unwrap();
        let db = format!("{what}.db");
        let out = np(d, &db).arg("import").arg(&file).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        let line = err.lines().find(|l| l.contains("skipped")).unwrap_or_else(|| panic!("{err}"));
        let want = if what == "cpus" { "more than 65536 items" } else { "declares 2000 settings" };
        assert!(line.contains(want), "{what}: {err}");
        assert!(
            !d.join(&db).exists() || {
                let (o, _) = ok(np(d, &db).args(["--json", "list"]));
                serde_json::from_str::<Value>(&o).unwrap().as_array().is_some_and(Vec::is_empty)
            },
            "{what}: half imported"
        );
    }
}
