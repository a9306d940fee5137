//! What the database may be before SQLite opens it, and how connections
//! are set up so that several writers share one file.
//!
//! * The database is a regular file or nothing: a block or character
//!   device, a FIFO, a socket or a directory at the path (or at its
//!   `-wal`, `-shm` or `-journal` name) is refused with one line before
//!   SQLite opens anything; opening never blocks on a FIFO.
//! * Writers wait for each other: a busy timeout, every write transaction
//!   `BEGIN IMMEDIATE` (a deferred one that read first cannot wait for the
//!   write lock: SQLite answers "database is locked" at once), and the
//!   schema created or migrated in one exclusive transaction that reads
//!   the schema version again once it holds the lock, so two writers
//!   creating one database never both run the migrations.
//! * A file carrying numaprobe's `application_id` must hold exactly the
//!   tables its schema version has.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::{Result, StoreError};
use crate::schema::{APPLICATION_ID, MIGRATIONS};

const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// How long a writer waits for another writer's transaction (an import
/// of a large export holds the write lock while it runs).
pub(crate) const WRITE_BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// The files SQLite opens beside the database, by suffix.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// `path` with `suffix` appended (`results.db-wal`).
pub(crate) fn side_path(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Checks what is at `path` (following a symbolic link, which may name
/// the database) and beside it: `Ok(None)` when nothing is there, the
/// length of the regular file otherwise; anything but a regular file is
/// [`StoreError::NotAFile`].
pub(crate) fn check_file(path: &Path) -> Result<Option<u64>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => return Err(StoreError::Io { path: path.to_path_buf(), source }),
    };
    if let Some(what) = meta.as_ref().and_then(|m| topo::fs::not_regular(m.file_type())) {
        return Err(StoreError::NotAFile { path: path.to_path_buf(), what });
    }
    for suffix in SIDE_FILES {
        let side = side_path(path, suffix);
        if let Ok(m) = std::fs::metadata(&side) {
            if let Some(what) = topo::fs::not_regular(m.file_type()) {
                return Err(StoreError::NotAFile { path: side, what });
            }
        }
    }
    Ok(meta.map(|m| m.len()))
}

/// Refuses a non-empty file that does not start like an SQLite database.
/// The file is opened without blocking and checked again after opening
/// (it may have been swapped since [`check_file`]).
pub(crate) fn check_header(path: &Path) -> Result<()> {
    let io = |source| StoreError::Io { path: path.to_path_buf(), source };
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if let Some(what) = topo::fs::not_regular(meta.file_type()) {
        return Err(StoreError::NotAFile { path: path.to_path_buf(), what });
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut head = [0u8; 16];
    let n = f.read(&mut head).map_err(io)?;
    if n < 16 || &head != SQLITE_MAGIC {
        return Err(StoreError::NotSqlite { path: path.to_path_buf() });
    }
    Ok(())
}

/// Whether a failure to open read-only calls for the `immutable` way:
/// SQLite could not open or create the `-shm` file (a read-only mount, a
/// folder this user cannot write: `SQLITE_CANTOPEN`,
/// `SQLITE_READONLY_DIRECTORY` and the other read-only codes).
pub(crate) fn needs_immutable(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode;
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, ErrorCode::CannotOpen | ErrorCode::ReadOnly))
}

/// The tables schema version `version` has: those its migrations create,
/// less those they drop.
pub(crate) fn tables_of_version(version: i64) -> Vec<String> {
    let mut tables: Vec<String> = Vec::new();
    for sql in MIGRATIONS.iter().take(version.max(0) as usize) {
        let words: Vec<String> = sql
            .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_lowercase())
            .collect();
        for (i, w) in words.iter().enumerate() {
            let (create, drop) = (w == "create", w == "drop");
            if !(create || drop) || words.get(i + 1).map(String::as_str) != Some("table") {
                continue;
            }
            let mut j = i + 2;
            if words.get(j).map(String::as_str) == Some("if") {
                j += if create { 3 } else { 2 };
            }
            let Some(name) = words.get(j) else { continue };
            if create {
                tables.push(name.clone());
            } else {
                tables.retain(|t| t != name);
            }
        }
    }
    tables.sort();
    tables
}

/// The user tables (not SQLite's own) and views of `conn`, sorted.
pub(crate) fn user_tables(conn: &Connection, path: &Path) -> Result<Vec<String>> {
    let err = |e| StoreError::sqlite(path, e);
    let mut stmt = conn
        .prepare(
            "SELECT lower(name) FROM sqlite_master WHERE type IN ('table', 'view')
             AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY 1",
        )
        .map_err(err)?;
    let rows = stmt.query_map([], |r| r.get(0)).map_err(err)?;
    rows.collect::<rusqlite::Result<Vec<String>>>().map_err(err)
}

/// A file with numaprobe's `application_id` whose tables are not those
/// of its schema version is someone else's (or damaged): refused.
pub(crate) fn check_our_tables(conn: &Connection, path: &Path, version: i64) -> Result<()> {
    let found = user_tables(conn, path)?;
    let expected = tables_of_version(version);
    if found != expected {
        let list = |t: &[String]| if t.is_empty() { "none".to_string() } else { t.join(", ") };
        return Err(StoreError::NotOurSchema {
            path: path.to_path_buf(),
            version,
            found: list(&found),
            expected: list(&expected),
        });
    }
    Ok(())
}

/// A writing connection: a busy timeout and `BEGIN IMMEDIATE` for every
/// transaction (`Connection::transaction`).
pub(crate) fn prepare_writer(conn: &mut Connection, path: &Path) -> Result<()> {
    conn.busy_timeout(WRITE_BUSY_TIMEOUT).map_err(|e| StoreError::sqlite(path, e))?;
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    Ok(())
}

/// Creates or migrates the schema in one exclusive transaction, from the
/// version read once the lock is held (another writer may have done it
/// meanwhile); `check` vets the file again under the lock and returns its
/// version.
pub(crate) fn migrate_locked(
    conn: &mut Connection,
    path: &Path,
    check: impl Fn(&Connection) -> Result<i64>,
) -> Result<()> {
    let err = |e| StoreError::sqlite(path, e);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive).map_err(err)?;
    let from = check(&tx)?;
    for sql in MIGRATIONS.iter().skip(from as usize) {
        tx.execute_batch(sql).map_err(err)?;
    }
    if (from as usize) < MIGRATIONS.len() {
        tx.execute_batch(&format!(
            "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {};",
            MIGRATIONS.len()
        ))
        .map_err(err)?;
    }
    tx.commit().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_of_each_version_come_from_its_migrations() {
        assert!(tables_of_version(0).is_empty());
        assert_eq!(tables_of_version(1), ["machines", "results", "runs"]);
    }
}
