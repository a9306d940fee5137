//! The store's errors: every one names the database file or the input it
//! concerns.

use std::path::{Path, PathBuf};

/// What went wrong with the results database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file exists but is not an SQLite database at all.
    #[error("{}: not a numaprobe results database (not an SQLite file); left untouched", path.display())]
    NotSqlite { path: PathBuf },
    /// Something that is not a regular file where the database (or one of
    /// SQLite's files beside it) would be: a device, a FIFO, a socket, a
    /// directory. Refused before SQLite opens it.
    #[error(
        "{}: {what}, not a results database; refusing to open it (the database is a regular file)",
        path.display()
    )]
    NotAFile { path: PathBuf, what: &'static str },
    /// A file with numaprobe's `application_id` whose tables are not the
    /// ones of its schema version.
    #[error(
        "{}: marked as a numaprobe database (schema version {version}) but its tables ({found}) are not numaprobe's ({expected}); left untouched",
        path.display()
    )]
    NotOurSchema { path: PathBuf, version: i64, found: String, expected: String },
    /// An SQLite database that belongs to another program.
    #[error(
        "{}: an SQLite database of another program (application_id {found:#010x}, tables: {tables}); left untouched",
        path.display()
    )]
    Foreign { path: PathBuf, found: i32, tables: String },
    /// SQLite reports the file as damaged.
    #[error("{}: the database is corrupt ({detail}); left untouched", path.display())]
    Corrupt { path: PathBuf, detail: String },
    /// Written by a newer numaprobe whose schema this one does not know.
    #[error(
        "{}: written by a newer numaprobe (schema version {found}; this one knows up to {known})",
        path.display()
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },
    /// No database file at the path (for commands that only read).
    #[error("{}: no results database here yet (`numaprobe run` creates it)", path.display())]
    Missing { path: PathBuf },
    /// An empty file where a database is expected (for commands that only
    /// read; a writing command makes it a database).
    #[error("{}: an empty file, not a results database yet (`numaprobe run` makes it one)", path.display())]
    Empty { path: PathBuf },
    /// A database of an older schema, which only a writing command upgrades.
    #[error(
        "{}: schema version {found}, older than this numaprobe's {known}; reading commands never change the database: `numaprobe run` or `import` (with write access) upgrades it",
        path.display()
    )]
    NeedsUpgrade { path: PathBuf, found: i64, known: i64 },
    /// A read-only WAL database whose write-ahead log holds data that
    /// cannot be read without write access.
    #[error(
        "{}: cannot be read here: its write-ahead log {} holds results not yet in the database file, and reading it needs write access to the folder; copy both files somewhere writable",
        path.display(),
        wal.display()
    )]
    UnreadableWal { path: PathBuf, wal: PathBuf },
    /// SQLITE_FULL: the filesystem (or the database's page limit) is full.
    #[error("{}: the disk is full (SQLite could not grow the database)", path.display())]
    Full { path: PathBuf },
    /// Any other SQLite failure.
    #[error("{}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A filesystem failure.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A stored JSON column or a payload that is not valid JSON.
    #[error("{}: invalid JSON in {what}: {source}", path.display())]
    Json {
        path: PathBuf,
        what: String,
        #[source]
        source: serde_json::Error,
    },
    /// Neither `XDG_DATA_HOME` nor `HOME` is set: no default database
    /// (the caller may still name one).
    #[error("cannot find the data directory: neither XDG_DATA_HOME nor HOME is set")]
    NoDataDir,
    /// A stored run over the shape limits imports keep (written by an
    /// older numaprobe or by hand): refused rather than rebuilt in memory.
    #[error(
        "{}: run {run}{} is too large to read: {detail}; numaprobe reads no run it would not import (at most {} items in any list or object, {} MiB in all); the database's other runs read as usual",
        path.display(),
        label.as_deref().map(|l| format!(" ({l:?})")).unwrap_or_default(),
        crate::limits::ITEM_CAP,
        crate::limits::RUN_CAP >> 20
    )]
    RunTooLarge { path: PathBuf, run: crate::types::RunId, label: Option<String>, detail: String },
    /// A run reference that matches no run.
    #[error("no run matches {0:?} (see `numaprobe list`)")]
    NoSuchRun(String),
    /// A label shared by several runs.
    #[error("{input:?} matches several runs ({ids}); name one by its id")]
    AmbiguousRun { input: String, ids: String },
    /// A run reference that cannot be parsed.
    #[error(
        "bad run reference {0:?}: expected a run id, `latest`, `latest~N`, a run UUID or a label"
    )]
    BadRunRef(String),
    /// Results added to a run that is no longer running.
    #[error("run {id} is {status}, not running: no more results can be added")]
    RunClosed { id: i64, status: String },
    /// An import document that is not a numaprobe export.
    #[error("{origin}: not a numaprobe export: {detail}")]
    BadExport { origin: String, detail: String },
    /// An export that could not be read (not a regular file, a read error).
    #[error("{origin}: cannot read: {source}")]
    ExportUnreadable {
        origin: String,
        #[source]
        source: std::io::Error,
    },
    /// An export written by a newer numaprobe (a later export version).
    #[error(
        "{origin}: export from a newer numaprobe (export version {found}; this one reads version {known})"
    )]
    ExportTooNew { origin: String, found: u64, known: u32 },
}

impl StoreError {
    /// Wraps an SQLite error, recognising corruption.
    pub(crate) fn sqlite(path: &Path, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, msg) = &e {
            if f.code == ErrorCode::DiskFull {
                return StoreError::Full { path: path.to_path_buf() };
            }
            if matches!(f.code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) {
                return StoreError::Corrupt {
                    path: path.to_path_buf(),
                    detail: one_line(&msg.clone().unwrap_or_else(|| f.to_string())),
                };
            }
        }
        StoreError::Sqlite { path: path.to_path_buf(), source: e }
    }
}

/// Result alias of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// SQLite's text on one line: integrity-check reports come one problem
/// per line, under a `*** in database main ***` banner.
pub(crate) fn one_line(text: &str) -> String {
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("*** in database"))
        .collect();
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integrity_reports_become_one_line() {
        let t = "*** in database main ***\nTree 3 page 3: btreeInitPage() returns error code 11\nwrong # of entries in index x\n";
        assert_eq!(
            one_line(t),
            "Tree 3 page 3: btreeInitPage() returns error code 11; wrong # of entries in index x"
        );
    }
}
