//! The JSON export of runs, and importing it into another database
//! (gathering runs from several servers). Import is idempotent: a run is
//! known by its UUID and is never added twice.

use results::context::{Configuration, Machine, RunTopology};
use rusqlite::{params, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::db::{insert_result, insert_row, json_text, upsert_machine_with, Store};
use crate::error::{Result, StoreError};
use crate::types::{RunId, RunStatus, StoredRecord};
use crate::util::{now_rfc3339, parse_rfc3339};

/// The `format` field of an export document.
pub const EXPORT_FORMAT: &str = "numaprobe-export";
/// The export document version this build writes and reads.
pub const EXPORT_VERSION: u32 = 1;

/// An export document: one or more runs with everything needed to import
/// them elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDoc {
    /// Always `numaprobe-export`.
    pub format: String,
    /// [`EXPORT_VERSION`].
    pub version: u32,
    /// RFC 3339 UTC time of the export.
    pub exported: String,
    pub runs: Vec<ExportedRun>,
}

/// One run in an export document. `R` is how a result is read: whole, as
/// a [`StoredRecord`]; an import reads it as [`ResultHead`] (the check
/// pass, payload only validated) and [`ResultRow`] (the payload as JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedRun<R = StoredRecord> {
    /// Stable identity of the run across databases.
    pub uuid: String,
    /// The run's id in the database it was exported from (informative).
    #[serde(default)]
    pub source_id: Option<i64>,
    pub label: Option<String>,
    pub command_line: String,
    pub tool_version: String,
    pub started: String,
    pub finished: Option<String>,
    pub status: RunStatus,
    pub message: Option<String>,
    pub machine: ExportedMachine,
    pub config_hash: String,
    pub config: Configuration,
    pub topology: RunTopology,
    pub results: Vec<R>,
}

/// The machine of an exported run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMachine {
    pub fingerprint: String,
    pub description: String,
    pub info: Machine,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ImportOutcome {
    pub imported: Vec<ImportedRun>,
    /// Runs already in the database (same UUID): left as they were.
    pub skipped: Vec<ImportedRun>,
    /// Imported runs whose `config_hash` did not match their
    /// configuration (edited by hand): stored under the hash recomputed
    /// from the configuration, each named here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A run named in an [`ImportOutcome`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedRun {
    pub uuid: String,
    /// Its id in this database.
    pub id: RunId,
    pub label: Option<String>,
}

impl ExportDoc {
    /// Parses an export document; `origin` (a file name) names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<ExportDoc> {
        let bad = |detail: String| StoreError::BadExport { origin: origin.to_string(), detail };
        let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON: {e}")))?;
        match v.get("format").and_then(Value::as_str) {
            Some(EXPORT_FORMAT) => {}
            Some(other) => return Err(bad(format!("format is {other:?}, not {EXPORT_FORMAT:?}"))),
            None => return Err(bad(format!("no \"format\": {EXPORT_FORMAT:?} field"))),
        }
        match v.get("version").and_then(Value::as_u64) {
            Some(n) if n == u64::from(EXPORT_VERSION) => {}
            Some(n) if n > u64::from(EXPORT_VERSION) => {
                return Err(StoreError::ExportTooNew {
                    origin: origin.to_string(),
                    found: n,
                    known: EXPORT_VERSION,
                })
            }
            Some(n) => {
                return Err(bad(format!(
                    "export version {n}; this numaprobe reads version {EXPORT_VERSION}"
                )))
            }
            None => return Err(bad("no \"version\" field".into())),
        }
        let doc: ExportDoc = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
        for r in &doc.runs {
            check_exported_run(r).map_err(bad)?;
        }
        Ok(doc)
    }

    /// Pretty JSON text of the document.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("export documents serialise")
    }
}

/// What the checks of a run read of each result.
pub(crate) trait ResultFields {
    fn seq(&self) -> u32;
    fn recorded(&self) -> &str;
}

impl ResultFields for StoredRecord {
    fn seq(&self) -> u32 {
        self.seq
    }
    fn recorded(&self) -> &str {
        &self.recorded
    }
}

/// A result as an import reads it: the fields of [`StoredRecord`]'s JSON,
/// the payload as `P`.
#[derive(Deserialize)]
pub(crate) struct ResultJson<P> {
    seq: u32,
    recorded: String,
    kind: String,
    payload: P,
}

impl<P> ResultFields for ResultJson<P> {
    fn seq(&self) -> u32 {
        self.seq
    }
    fn recorded(&self) -> &str {
        &self.recorded
    }
}

/// A result as the check pass of an import reads it: the payload parsed
/// (so bad JSON in it fails as it would on import) but not kept or read
/// into a record.
pub(crate) type ResultHead = ResultJson<AnyJson>;

/// A result as an import stores it: the payload as JSON, read into its
/// record once (for the key columns and to know whether the record
/// writes it as stored).
pub(crate) type ResultRow = ResultJson<Value>;

/// A result an import can store.
pub(crate) trait ImportRow: ResultFields {
    fn insert(&self, tx: &rusqlite::Transaction<'_>, run: i64) -> rusqlite::Result<()>;
}

impl ImportRow for StoredRecord {
    fn insert(&self, tx: &rusqlite::Transaction<'_>, run: i64) -> rusqlite::Result<()> {
        insert_result(tx, run, Some(self.seq), &self.recorded, self).map(drop)
    }
}

impl ImportRow for ResultRow {
    /// Stores what [`StoredRecord`] would: the payload's text as the
    /// record writes it, which is the payload itself when the record reads
    /// it unchanged (`as_stored` is then `None`), so it is not written twice.
    fn insert(&self, tx: &rusqlite::Transaction<'_>, run: i64) -> rusqlite::Result<()> {
        let up = results::upgrade::read(&self.kind, &self.payload);
        let text = up.as_stored.unwrap_or_else(|| self.payload.to_string());
        insert_row(tx, run, self.seq, &self.recorded, &up.record, &text)
    }
}

/// Any JSON value, parsed as [`Value`] parses it (the same errors: bad
/// UTF-8, numbers out of range) and dropped as it is read.
pub(crate) struct AnyJson;

impl<'de> Deserialize<'de> for AnyJson {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(AnyJsonVisitor)
    }
}

struct AnyJsonVisitor;

impl<'de> serde::de::Visitor<'de> for AnyJsonVisitor {
    type Value = AnyJson;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_unit<E>(self) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_none<E>(self) -> std::result::Result<AnyJson, E> {
        Ok(AnyJson)
    }
    fn visit_some<D: serde::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<AnyJson, D::Error> {
        AnyJson::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<AnyJson, A::Error> {
        while seq.next_element::<AnyJson>()?.is_some() {}
        Ok(AnyJson)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<AnyJson, A::Error> {
        while map.next_key::<AnyJson>()?.is_some() {
            map.next_value::<AnyJson>()?;
        }
        Ok(AnyJson)
    }
}

/// A run's UUID is a UUID, and [`check_run`]; the error names the run.
pub(crate) fn check_exported_run<R: ResultFields>(
    r: &ExportedRun<R>,
) -> std::result::Result<(), String> {
    if uuid::Uuid::parse_str(&r.uuid).is_err() {
        return Err(format!("run uuid {:?} is not a UUID", r.uuid));
    }
    check_run(r).map_err(|e| format!("run {}: {e}", r.uuid))
}

/// What the database needs of a run before anything is written: RFC 3339
/// times (a start time that is not one would sort wrongly as `latest`)
/// and distinct result sequence numbers.
fn check_run<R: ResultFields>(r: &ExportedRun<R>) -> std::result::Result<(), String> {
    let time = |field: &str, v: &str| match parse_rfc3339(v) {
        Some(_) => Ok(()),
        None => {
            Err(format!("{field} is {v:?}, not an RFC 3339 time such as 2026-11-21T21:07:32.123Z"))
        }
    };
    time("\"started\"", &r.started)?;
    if let Some(d) = &r.config.declared {
        use results::context::declared_limits as lim;
        if d.len() > lim::MAX_KEYS {
            return Err(format!(
                "declares {} settings, more than {} (\"config\".\"declared\")",
                d.len(),
                lim::MAX_KEYS
            ));
        }
        let bytes: usize = d.iter().map(|(k, v)| k.len() + v.len()).sum();
        if bytes > lim::MAX_BYTES {
            return Err(format!(
                "declares {bytes} bytes of settings, more than {}",
                lim::MAX_BYTES
            ));
        }
        if let Some((k, _)) =
            d.iter().find(|(k, v)| k.len() > lim::MAX_KEY_BYTES || v.len() > lim::MAX_VALUE_BYTES)
        {
            return Err(format!(
                "declares a setting longer than {} bytes (key) or {} bytes (value): {:?}",
                lim::MAX_KEY_BYTES,
                lim::MAX_VALUE_BYTES,
                k.chars().take(40).collect::<String>()
            ));
        }
    }
    if let Some(f) = &r.finished {
        time("\"finished\"", f)?;
    }
    let mut seen = std::collections::HashSet::with_capacity(r.results.len());
    for x in &r.results {
        if !seen.insert(x.seq()) {
            return Err(format!("result seq {} appears more than once", x.seq()));
        }
        time(&format!("result {}: \"recorded\"", x.seq()), x.recorded())?;
    }
    Ok(())
}

impl Store {
    /// An export document holding `runs` in the given order.
    pub fn export_runs(&self, runs: &[RunId]) -> Result<ExportDoc> {
        let mut out = Vec::with_capacity(runs.len());
        for &id in runs {
            let run = self.load_run(id)?;
            let (fingerprint, description, _) = self.machine_row(id)?;
            let s = run.summary;
            out.push(ExportedRun {
                uuid: s.uuid,
                source_id: Some(s.id.0),
                label: s.label,
                command_line: s.command_line,
                tool_version: s.tool_version,
                started: s.started,
                finished: s.finished,
                status: s.status,
                message: s.message,
                machine: ExportedMachine { fingerprint, description, info: run.machine_info },
                config_hash: s.config_hash,
                config: run.config,
                topology: run.topology,
                results: run.results,
            });
        }
        Ok(ExportDoc {
            format: EXPORT_FORMAT.to_string(),
            version: EXPORT_VERSION,
            exported: now_rfc3339(),
            runs: out,
        })
    }

    /// Adds the runs of an export document that this database does not
    /// have yet (by UUID), all in one transaction: a document comes in
    /// whole or not at all. A run exported while still `running` comes in
    /// as `incomplete`.
    pub fn import(&mut self, doc: &ExportDoc) -> Result<ImportOutcome> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::sqlite(&path, e);
        let mut outcome = ImportOutcome::default();
        let conn = self.conn_mut();
        let tx = conn.transaction().map_err(err)?;
        for run in &doc.runs {
            import_run(&tx, run, &mut outcome).map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(outcome)
    }
}

/// Adds one run (checked) of an export in the transaction `tx`, or notes
/// it as skipped when its UUID is already present.
/// The id of a stored run filed under `hash` whose configuration's
/// settings are not those hashing to `settings` (`None`: none, or no run
/// under `hash`). Runs under one hash are checked up to a few: the rule
/// keeps them alike, so one that differs shows at once.
fn claimed_by_other_settings(
    tx: &rusqlite::Transaction<'_>,
    hash: &str,
    settings: &str,
) -> rusqlite::Result<Option<i64>> {
    let mut stmt =
        tx.prepare("SELECT id, config_json FROM runs WHERE config_hash = ?1 ORDER BY id LIMIT 8")?;
    let rows = stmt.query_map([hash], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, text) = row?;
        let same = crate::limits::check_stored(&text).is_ok()
            && serde_json::from_str::<Configuration>(&text)
                .is_ok_and(|c| c.settings_hash() == settings);
        if !same {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

pub(crate) fn import_run<R: ImportRow>(
    tx: &rusqlite::Transaction<'_>,
    run: &ExportedRun<R>,
    outcome: &mut ImportOutcome,
) -> rusqlite::Result<()> {
    let uuid = run.uuid.to_ascii_lowercase();
    let existing: Option<i64> =
        tx.query_row("SELECT id FROM runs WHERE uuid = ?1", [&uuid], |r| r.get(0)).optional()?;
    if let Some(id) = existing {
        outcome.skipped.push(ImportedRun { uuid, id: RunId(id), label: run.label.clone() });
        return Ok(());
    }
    let machine_id = upsert_machine_with(
        tx,
        &run.machine.fingerprint,
        &run.machine.description,
        &run.machine.info,
    )?;
    let status = match run.status {
        RunStatus::Running => RunStatus::Incomplete,
        s => s,
    };
    // The configuration decides which runs pool: its hash is recomputed
    // from the document stored, never taken on trust. A configuration
    // sealed by numaprobe carries its fingerprint (the settings hash); one
    // without (hand-made documents) keeps the hash it came with unless
    // the database already files other settings under that hash
    // ([`claimed_by_other_settings`]): then it is filed under its own.
    let mut config = run.config.clone();
    let mut stale = None;
    if config.fingerprint.is_some() {
        let fresh = config.settings_hash();
        if fresh != run.config_hash || config.fingerprint.as_deref() != Some(fresh.as_str()) {
            stale = Some((run.config_hash.clone(), fresh.clone()));
        }
        config.fingerprint = Some(fresh);
    }
    let mut config_hash = config.fingerprint.clone().unwrap_or_else(|| run.config_hash.clone());
    let mut clash = None;
    if config.fingerprint.is_none() {
        let fresh = config.settings_hash();
        if let Some(other) = claimed_by_other_settings(tx, &run.config_hash, &fresh)? {
            clash = Some((run.config_hash.clone(), fresh.clone(), other));
            config_hash = fresh;
        }
    }
    tx.execute(
        "INSERT INTO runs (uuid, label, command_line, tool_version, started, finished,
             status, message, machine_id, config_hash, config_json, topology_json,
             imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        params![
            uuid,
            run.label,
            run.command_line,
            run.tool_version,
            run.started,
            run.finished,
            status.as_str(),
            run.message,
            machine_id,
            config_hash,
            json_text(&config),
            json_text(&run.topology),
            now_rfc3339(),
        ],
    )?;
    let id = tx.last_insert_rowid();
    if let Some((old, fresh)) = stale {
        outcome.warnings.push(format!(
            "run {id} (uuid {uuid}{}): its config_hash {old} does not match its configuration (edited?); stored under {fresh}, the hash of the configuration as it is",
            run.label.as_deref().map(|l| format!(", label {l:?}")).unwrap_or_default()
        ));
    }
    if let Some((old, fresh, other)) = clash {
        outcome.warnings.push(format!(
            "run {id} (uuid {uuid}{}): its config_hash {old} already names other settings in this database (run {other}); stored under {fresh}, the hash of its own configuration, so the two are not pooled",
            run.label.as_deref().map(|l| format!(", label {l:?}")).unwrap_or_default()
        ));
    }
    for r in &run.results {
        r.insert(tx, id)?;
    }
    outcome.imported.push(ImportedRun { uuid, id: RunId(id), label: run.label.clone() });
    Ok(())
}
