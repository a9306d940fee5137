//! `export --format json`: the store's export document (every run with
//! its machine, configuration, topology and results as stored), which
//! `import` reads back.

use store::{RunId, Store};

use super::{Error, Exported, Exporter};

/// The export document, one line of JSON and a newline.
pub struct Json;

impl Exporter for Json {
    fn export(&self, db: &Store, ids: &[RunId]) -> Result<Exported, Error> {
        let mut s = db.export_runs(ids)?.to_json();
        s.push('\n');
        Ok(Exported::bytes(s.into_bytes()))
    }
}
