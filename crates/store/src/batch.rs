//! Importing export files one after the other, each in its own
//! transaction (memory holds one run at a time). A file that cannot be
//! read, is not a valid export or comes from a newer numaprobe is skipped
//! with a named error and the others are imported. The database is opened
//! at the first good file: a batch that imports nothing leaves none behind.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{CheckedExport, ImportOutcome, Store, StoreError};

/// What `import` did with one file: imported (`outcome`) or skipped with
/// a named error (`error`: `unreadable`, `corrupt` or `newer_version`).
#[derive(Serialize)]
pub struct Import {
    pub file: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ImportOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What happens, as it happens.
pub enum Step<'a> {
    /// A file imported with a warning.
    Warning { file: &'a str, text: &'a str },
    /// A file skipped: why (`kind`, as in [`Import::error`]) and the error.
    Skipped { kind: &'static str, message: &'a str },
    /// One more file done (imported or skipped).
    Done,
}

/// Why a batch stopped before its last file.
pub enum Stopped {
    /// The database could not be opened.
    Open(StoreError),
    /// `file` failed inside its transaction: nothing from it was
    /// committed, `left` files after it were not tried.
    Import { file: String, error: StoreError, left: usize },
}

/// Imports `files` (`-`: stdin) into the database at `path`: what each
/// file did, how many were skipped, and why the batch stopped early if it
/// did.
pub fn import_files(
    path: &Path,
    files: &[PathBuf],
    on: &mut dyn FnMut(Step),
) -> (Vec<Import>, usize, Option<Stopped>) {
    let mut db: Option<Store> = None;
    let mut reports = Vec::new();
    let mut failed = 0usize;
    for (i, f) in files.iter().enumerate() {
        match check_export(f) {
            Ok(mut checked) => {
                let name = checked.origin().to_string();
                let store = match &mut db {
                    Some(s) => s,
                    None => match Store::open(path) {
                        Ok(s) => db.insert(s),
                        Err(e) => return (reports, failed, Some(Stopped::Open(e))),
                    },
                };
                let outcome = match store.import_checked(&mut checked) {
                    Ok(o) => o,
                    Err(error) => {
                        let left = files.len() - i - 1;
                        return (
                            reports,
                            failed,
                            Some(Stopped::Import { file: name, error, left }),
                        );
                    }
                };
                for w in &outcome.warnings {
                    on(Step::Warning { file: &name, text: w });
                }
                reports.push(Import {
                    file: name,
                    outcome: Some(outcome),
                    error: None,
                    message: None,
                });
            }
            Err((name, kind, message)) => {
                failed += 1;
                on(Step::Skipped { kind, message: &message });
                reports.push(Import {
                    file: name,
                    outcome: None,
                    error: Some(kind),
                    message: Some(message),
                });
            }
        }
        on(Step::Done);
    }
    (reports, failed, None)
}

/// Checks one export file (or stdin for `-`) as a stream, every run,
/// without opening the database; the error's name says why a file is
/// skipped.
fn check_export(f: &Path) -> Result<CheckedExport, (String, &'static str, String)> {
    let checked =
        if f == Path::new("-") { CheckedExport::from_stdin() } else { CheckedExport::from_file(f) };
    checked.map_err(|e| {
        let name = if f == Path::new("-") { "stdin".to_string() } else { f.display().to_string() };
        let kind = match &e {
            StoreError::ExportUnreadable { .. } => "unreadable",
            StoreError::ExportTooNew { .. } => "newer_version",
            _ => "corrupt",
        };
        (name, kind, e.to_string())
    })
}
