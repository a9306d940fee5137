//! A run as it was stored and is read back: its id, status, summary, its
//! records with their place in the run, and the whole loaded run. The store
//! writes and reads these; analysis and reports take them already loaded.

use std::fmt;

use crate::context::{Configuration, Machine, RunTopology};
use crate::Record;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The id of a run in one database. Ids are not kept across databases
/// (import gives new ones); the run's UUID is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The state of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Still measuring (its process is alive on this machine).
    Running,
    /// Every planned measurement was taken.
    Complete,
    /// Stopped early (Ctrl-C, or its process died): holds what was measured.
    Incomplete,
    /// Stopped by an error (see the run's message).
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Failed => "failed",
        }
    }

    /// The status a stored name says; `None` for another name.
    pub fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "incomplete" => RunStatus::Incomplete,
            "failed" => RunStatus::Failed,
            _ => return None,
        })
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of `numaprobe list`: a run without its results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    pub uuid: String,
    pub label: Option<String>,
    /// RFC 3339 UTC.
    pub started: String,
    pub finished: Option<String>,
    /// The effective status: a run recorded as running whose process is gone
    /// shows as `incomplete`.
    pub status: RunStatus,
    /// True when `status` is `complete`.
    pub complete: bool,
    pub message: Option<String>,
    /// The machine's one-line description.
    pub machine: String,
    pub machine_fingerprint: String,
    pub config_hash: String,
    pub tool_version: String,
    pub command_line: String,
    pub result_count: u64,
    /// True when the run came in through `numaprobe import`.
    pub imported: bool,
}

/// One stored result: the record, with its place in the run.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    /// Order within the run, from 1.
    pub seq: u32,
    /// RFC 3339 UTC time it was stored.
    pub recorded: String,
    pub record: Record,
    /// The JSON it was stored as, when the record writes something else: a
    /// first-version or hand-made payload read into today's record
    /// ([`crate::upgrade`]), or one holding fields this version does not
    /// know. Export writes it back as stored, and the report's raw figures
    /// show it.
    pub as_stored: Option<String>,
}

impl StoredRecord {
    /// The result as it is stored: its JSON as written (see
    /// [`StoredRecord::as_stored`]).
    pub fn stored_json(&self) -> Value {
        match &self.as_stored {
            Some(text) => serde_json::from_str(text).unwrap_or(Value::Null),
            None => self.record.to_json(),
        }
    }
}

/// The JSON shape of a stored result in `show --json` and exports: `seq`,
/// `recorded`, `kind` and the `payload` as stored.
#[derive(Serialize, Deserialize)]
struct StoredJson {
    seq: u32,
    recorded: String,
    kind: String,
    payload: Value,
}

impl Serialize for StoredRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        StoredJson {
            seq: self.seq,
            recorded: self.recorded.clone(),
            kind: self.record.kind().to_string(),
            payload: self.stored_json(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for StoredRecord {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let j = StoredJson::deserialize(d)?;
        let up = crate::upgrade::read(&j.kind, &j.payload);
        Ok(StoredRecord {
            seq: j.seq,
            recorded: j.recorded,
            record: up.record,
            as_stored: up.as_stored,
        })
    }
}

/// A run with everything stored about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedRun {
    #[serde(flatten)]
    pub summary: RunSummary,
    /// The machine document.
    pub machine_info: Machine,
    /// The settings document.
    pub config: Configuration,
    /// The `topo --json` document.
    pub topology: RunTopology,
    pub results: Vec<StoredRecord>,
}

impl LoadedRun {
    /// The records, in the order they were stored.
    pub fn records(&self) -> impl Iterator<Item = &Record> + Clone + '_ {
        self.results.iter().map(|r| &r.record)
    }

    /// The label, or `run N` when it has none.
    pub fn display_name(&self) -> String {
        match &self.summary.label {
            Some(l) if !l.is_empty() => l.clone(),
            _ => format!("run {}", self.summary.id),
        }
    }
}
