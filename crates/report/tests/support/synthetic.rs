//! The synthetic runs of `fixtures/synthetic-export.json` (made by
//! `fixtures/make_synthetic.py`), for report's tests and console's.

use store::{ExportDoc, LoadedRun, RunRef, Store};

const FIXTURE: &str = include_str!("../fixtures/synthetic-export.json");

/// The fixture's runs, imported into a fresh store and loaded back (so the
/// test goes through the same path as the CLI): baseline, THP always, epyc.
pub fn runs() -> Vec<LoadedRun> {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(dir.path().join("r.db")).unwrap();
    let doc = ExportDoc::from_json(FIXTURE, "synthetic-export.json").unwrap();
    let out = db.import(&doc).unwrap();
    assert_eq!(out.imported.len(), 3);
    out.imported.iter().map(|i| db.load(&RunRef::Id(i.id.0)).unwrap()).collect()
}
