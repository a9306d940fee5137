//! The command line of each child `numaprobe run` a study starts
//! ([`vary::child::Argv`]): the study's global options first, then the
//! run's options, its label and, for a setting the machine's
//! configuration does not show, `--set KEY=VALUE`.

use std::ffi::OsString;
use std::path::PathBuf;

/// The flags the study passes on to each child.
#[derive(Debug, Clone)]
pub struct ChildFlags {
    /// `--db` given to the study.
    pub db: Option<PathBuf>,
    pub quiet: bool,
    /// With `--json`, each child writes its run document.
    pub json: bool,
    /// The options of every run (after `--`).
    pub options: Vec<String>,
}

impl ChildFlags {
    fn db(&self) -> Vec<OsString> {
        match &self.db {
            Some(db) => vec!["--db".into(), db.into()],
            None => Vec::new(),
        }
    }
}

impl vary::child::Argv for ChildFlags {
    /// `[--db DB] --json --quiet run OPTIONS --dry-run`.
    fn estimate(&self) -> Vec<OsString> {
        let mut a = self.db();
        a.extend(["--json", "--quiet", "run"].map(OsString::from));
        a.extend(self.options.iter().map(OsString::from));
        a.push("--dry-run".into());
        a
    }

    /// `[--db DB] [--quiet] [--json] run OPTIONS --label LABEL
    /// [--set KEY=VALUE]`.
    fn run(&self, label: &str, declare: Option<(&str, &str)>) -> Vec<OsString> {
        let mut a = self.db();
        if self.quiet {
            a.push("--quiet".into());
        }
        if self.json {
            a.push("--json".into());
        }
        a.push("run".into());
        a.extend(self.options.iter().map(OsString::from));
        a.extend(["--label".into(), label.into()]);
        if let Some((key, value)) = declare {
            a.extend(["--set".into(), format!("{key}={value}").into()]);
        }
        a
    }
}
