//! The exporters: stored runs written in another program's format. Each
//! format is one [`Exporter`] in a file of its own, the stored runs in,
//! one file's bytes and what the user should know about them out:
//! [`json::Json`] (the export document `import` reads back), [`csv::Csv`],
//! [`openmetrics::OpenMetrics`] (Prometheus, node_exporter's textfile
//! collector) and [`hwloc::Hwloc`] (hwloc's memory attributes). Parquet
//! ([`parquet`], feature `parquet`) writes three tables into three files,
//! one run at a time, and so stands beside the trait; the Markdown and
//! HTML reports are [`crate::Format`]'s renderers of one
//! [`crate::Document`].

pub mod csv;
pub mod hwloc;
pub mod json;
pub mod openmetrics;
#[cfg(feature = "parquet")]
pub mod parquet;

use store::{LoadedRun, RunId, Store, StoreError};

/// What an exporter wrote: the bytes of the file, and the lines the user
/// should read beside it (a run that gave this format nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exported {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
}

impl Exported {
    fn bytes(bytes: Vec<u8>) -> Exported {
        Exported { bytes, warnings: Vec::new() }
    }
}

/// Why an export could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Hwloc(#[from] hwloc::HwlocError),
}

/// One export format.
pub trait Exporter {
    /// The runs `ids` of `db`, in that order, as one file.
    fn export(&self, db: &Store, ids: &[RunId]) -> Result<Exported, Error>;
}

/// The runs `ids` of `db`, loaded in that order.
fn load(db: &Store, ids: &[RunId]) -> Result<Vec<LoadedRun>, StoreError> {
    ids.iter().map(|id| db.load_run(*id)).collect()
}
