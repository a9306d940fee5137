//! The result store: an embedded SQLite database of machines, runs and
//! their results, written as each result is measured, and read back by
//! `list`, `show`, `export`, `compare` and `report`.
//!
//! Writers (`run`, `exec`, `bw`/`lat` with `--label`) use it like this
//! (holding the measuring lock of the `lock` crate while they measure):
//!
//! ```no_run
//! use store::{NewRun, RunStatus, Store};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut db = Store::open(Store::default_path()?)?;
//! let mut new = NewRun::new("numaprobe run --quick", env!("CARGO_PKG_VERSION"));
//! new.label = Some("SNC2 on".into());
//! let run = db.begin_run(&new)?;
//! # let result: results::Record = unimplemented!();
//! db.add_result(run, &result)?; // a results::Record, durable at once
//! db.finish_run(run, RunStatus::Complete, None)?;
//! # Ok(()) }
//! ```
//!
//! See `docs/store.md` for the schema and the export format.

pub mod batch;
mod db;
mod error;
mod export;
mod import;
mod limits;
mod open;
#[cfg(feature = "parquet")]
pub mod parquet;
pub mod recording;
mod runref;
pub mod schema;
pub mod select;
mod types;
pub mod util;

pub use db::{describe_machine, Store};
pub use error::StoreError;
pub use export::{
    ExportDoc, ExportedMachine, ExportedRun, ImportOutcome, ImportedRun, EXPORT_FORMAT,
    EXPORT_VERSION,
};
pub use import::CheckedExport;
pub use limits::{MAX_DEPTH, RUN_CAP, STRING_CAP};
pub use runref::RunRef;
pub use types::{LoadedRun, NewRun, RunId, RunStatus, RunSummary, StoredRecord};
