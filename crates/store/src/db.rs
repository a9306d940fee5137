//! [`Store`]: opening (and recognising) the database, writing runs and
//! results as they are measured, and reading them back.

use std::path::{Path, PathBuf};
use std::time::Duration;

use results::context::{Configuration, Machine};
use results::lat::{Lat, LatSummary};
use results::Record;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{one_line, Result, StoreError};
use crate::limits::{check_stored, ITEM_CAP, RUN_CAP};
use crate::open;
use crate::runref::RunRef;
use crate::schema::{APPLICATION_ID, SCHEMA_VERSION};
use crate::types::{LoadedRun, NewRun, RunId, RunStatus, RunSummary, StoredRecord};
use crate::util::{json_hash, now_rfc3339, time_order_key};

/// The results database. Every write is its own committed transaction, so a
/// result is durable as soon as [`Store::add_result`] returns.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Who is measuring: a run whose owner is gone is incomplete.
struct Owner {
    host: Option<String>,
    boot_id: Option<String>,
    pid: u32,
}

impl Owner {
    fn current() -> Owner {
        let root = topo::SysRoot::live();
        let read = |rel: &str| root.read_optional(rel).ok().flatten().map(|s| s.trim().to_string());
        Owner {
            host: read("proc/sys/kernel/hostname"),
            boot_id: read("proc/sys/kernel/random/boot_id"),
            pid: std::process::id(),
        }
    }

    /// True when a run recorded with this owner may still be measuring: same
    /// host, same boot, and the process exists.
    fn is_alive(host: Option<&str>, boot_id: Option<&str>, pid: Option<i64>) -> bool {
        let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()).filter(|p| *p > 0) else {
            return false;
        };
        let me = Owner::current();
        if host != me.host.as_deref() || boot_id != me.boot_id.as_deref() {
            return false;
        }
        // SAFETY: kill with signal 0 sends nothing; it only checks that the
        // process exists and may be signalled.
        let rc = unsafe { libc::kill(pid, 0) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    }
}

impl Store {
    /// `$XDG_DATA_HOME/numaprobe/results.db`, or
    /// `$HOME/.local/share/numaprobe/results.db` when `XDG_DATA_HOME` is unset
    /// or not absolute (XDG Base Directory rules).
    pub fn default_path() -> Result<PathBuf> {
        let xdg = std::env::var_os("XDG_DATA_HOME").map(PathBuf::from);
        let home = std::env::var_os("HOME").map(PathBuf::from);
        default_path_from(xdg, home)
    }

    /// Opens the database at `path`, creating it (and its directory) when it
    /// does not exist, and migrating it to the current schema. A file that is
    /// not numaprobe's, is corrupt, or is from a newer numaprobe is an error
    /// and is left untouched.
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        match open::check_file(path)? {
            Some(_) => open::check_header(path)?,
            None => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|source| StoreError::Io { path: dir.to_path_buf(), source })?;
                }
            }
        }
        Store::open_checked(path)
    }

    /// Checks, without opening anything, that `path` is a regular file or
    /// nothing, and so are SQLite's files beside it (for a command that
    /// checks where it will write before it measures).
    pub fn check_path(path: &Path) -> Result<()> {
        open::check_file(path).map(|_| ())
    }

    /// Opens an existing database read-only, for the commands that only
    /// read (`list`, `show`, `report`, `export`, `compare`): it is never
    /// created, migrated or written, so a database on read-only storage
    /// (or in a folder without write permission) can be read.
    /// [`StoreError::Missing`] when there is no file at `path`,
    /// [`StoreError::Empty`] for an empty file.
    ///
    /// A WAL database normally needs its `-shm` file, which a reader
    /// creates when it is missing; where it cannot (read-only storage) and
    /// no write-ahead log holds results, the file is opened `immutable=1`
    /// (SQLite: "Read-Only Databases" in wal.html).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        match open::check_file(path)? {
            None => return Err(StoreError::Missing { path: path.to_path_buf() }),
            Some(0) => return Err(StoreError::Empty { path: path.to_path_buf() }),
            Some(_) => open::check_header(path)?,
        }
        let err = |e| StoreError::sqlite(path, e);
        let conn = match open_read_only(path, false) {
            Ok(c) => c,
            Err(e) if open::needs_immutable(&e) => {
                let wal = open::side_path(path, "-wal");
                if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
                    return Err(StoreError::UnreadableWal { path: path.to_path_buf(), wal });
                }
                open_read_only(path, true).map_err(err)?
            }
            Err(e) => return Err(err(e)),
        };
        let version = check_identity_at_once(&conn, path)?;
        if version == 0 {
            // An SQLite file with nothing in it yet: no runs.
            return Err(StoreError::Empty { path: path.to_path_buf() });
        }
        if version < SCHEMA_VERSION {
            return Err(StoreError::NeedsUpgrade {
                path: path.to_path_buf(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        quick_check(&conn, path)?;
        Ok(Store { conn, path: path.to_path_buf() })
    }

    fn open_checked(path: &Path) -> Result<Store> {
        let err = |e| StoreError::sqlite(path, e);
        let mut conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(err)?;
        open::prepare_writer(&mut conn, path)?;
        let version = check_identity_at_once(&conn, path)?;
        quick_check(&conn, path)?;
        // WAL first (a no-op once set): readers then never block writers.
        let mode: String =
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(err)?;
        debug_assert!(mode == "wal" || mode == "memory", "journal mode {mode}");
        if version < SCHEMA_VERSION {
            open::migrate_locked(&mut conn, path, |c| check_identity(c, path))?;
        }
        let store = Store { conn, path: path.to_path_buf() };
        store
            .conn
            .execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(err)?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open database (always the current one
    /// after [`Store::open`]).
    pub fn schema_version(&self) -> Result<i64> {
        self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(|e| self.err(e))
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sqlite(&self.path, e)
    }

    /// Records the start of a run (status `running`, owned by this process)
    /// and returns its id. The machine is added on first sight.
    pub fn begin_run(&mut self, run: &NewRun) -> Result<RunId> {
        let owner = Owner::current();
        let uuid = run.uuid.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let started = run.started.clone().unwrap_or_else(now_rfc3339);
        let path = self.path.clone();
        let err = |e| StoreError::sqlite(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let machine_id = upsert_machine(&tx, &run.machine).map_err(err)?;
        tx.execute(
            "INSERT INTO runs (uuid, label, command_line, tool_version, started, status,
                 machine_id, config_hash, config_json, topology_json,
                 owner_host, owner_boot_id, owner_pid)
             VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                uuid,
                run.label,
                run.command_line,
                run.tool_version,
                started,
                machine_id,
                config_fingerprint(&run.config),
                json_text(&run.config),
                json_text(&run.topology),
                owner.host,
                owner.boot_id,
                owner.pid,
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(err)?;
        Ok(RunId(id))
    }

    /// Stores one result of a running run and commits it at once; returns its
    /// sequence number in the run. Key columns (mode, kernel, cpu_node,
    /// mem_node, value and unit) are copied from the record for queries; the
    /// record itself is kept whole, as its JSON.
    pub fn add_result(&mut self, run: RunId, record: &Record) -> Result<u32> {
        let (status, ..) = self.raw_status(run)?;
        if status != RunStatus::Running {
            return Err(StoreError::RunClosed { id: run.0, status: status.to_string() });
        }
        let now = now_rfc3339();
        let path = self.path.clone();
        let err = |e| StoreError::sqlite(&path, e);
        let tx = self.conn.transaction().map_err(err)?;
        let stored =
            StoredRecord { seq: 0, recorded: now, record: record.clone(), as_stored: None };
        let seq = insert_result(&tx, run.0, None, &stored.recorded, &stored).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(seq)
    }

    /// Marks a run finished with `status` (`complete`, `incomplete` after
    /// Ctrl-C, or `failed`) and an optional message (e.g. the error).
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        message: Option<&str>,
    ) -> Result<()> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, message = ?3, finished = ?4 WHERE id = ?1",
                params![run.0, status.as_str(), message, now_rfc3339()],
            )
            .map_err(|e| self.err(e))?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run.to_string()));
        }
        Ok(())
    }

    fn raw_status(&self, run: RunId) -> Result<(RunStatus, Option<String>)> {
        let row: Option<(String, Option<String>)> = self
            .conn
            .query_row("SELECT status, message FROM runs WHERE id = ?1", [run.0], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()
            .map_err(|e| self.err(e))?;
        let (s, m) = row.ok_or_else(|| StoreError::NoSuchRun(run.to_string()))?;
        Ok((RunStatus::parse(&s).unwrap_or(RunStatus::Incomplete), m))
    }

    /// Every run, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunSummary>> {
        self.query_summaries("", [])
    }

    /// Runs on the machine with this fingerprint, oldest first.
    pub fn list_runs_for_machine(&self, fingerprint: &str) -> Result<Vec<RunSummary>> {
        self.query_summaries("WHERE m.fingerprint = ?1", [fingerprint])
    }

    /// The latest run (by start time) of the machine with this fingerprint
    /// that holds at least one result; `None` when it has none. The machine
    /// fingerprint survives setting changes (SNC, SMT, `numa=off`), so this
    /// finds the machine's runs under any configuration.
    pub fn latest_run_of_machine(&self, fingerprint: &str) -> Result<Option<RunId>> {
        let ids = self.ids_in_time_order(
            "SELECT r.id, r.started FROM runs r JOIN machines m ON m.id = r.machine_id
             WHERE m.fingerprint = ?1
               AND EXISTS (SELECT 1 FROM results x WHERE x.run_id = r.id)",
            &fingerprint,
        )?;
        Ok(ids.last().copied())
    }

    /// The ids `sql` selects (an id and a start time per row, one
    /// parameter), oldest first by the instant the start time names (then
    /// by id); a start time that is not RFC 3339 counts as the oldest, so
    /// it is never `latest` ([`crate::util::time_order_key`]).
    fn ids_in_time_order(&self, sql: &str, p: &dyn rusqlite::ToSql) -> Result<Vec<RunId>> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
        let mut rows = stmt
            .query_map([p], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        rows.sort_by_cached_key(|(id, started)| (time_order_key(started), *id));
        Ok(rows.into_iter().map(|(id, _)| RunId(id)).collect())
    }

    /// One run without its results.
    pub fn run_summary(&self, run: RunId) -> Result<RunSummary> {
        self.query_summaries("WHERE r.id = ?1", [run.0])?
            .pop()
            .ok_or_else(|| StoreError::NoSuchRun(run.to_string()))
    }

    fn query_summaries<P: rusqlite::Params>(&self, filter: &str, p: P) -> Result<Vec<RunSummary>> {
        let sql = format!(
            "SELECT r.id, r.uuid, r.label, r.started, r.finished, r.status, r.message,
                    m.description, m.fingerprint, r.config_hash, r.tool_version, r.command_line,
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id),
                    r.imported_at, r.owner_host, r.owner_boot_id, r.owner_pid
             FROM runs r JOIN machines m ON m.id = r.machine_id
             {filter}"
        );
        // Cached: `fleet` and the exports ask for one run at a time.
        let mut stmt = self.conn.prepare_cached(&sql).map_err(|e| self.err(e))?;
        let rows = stmt.query_map(p, summary_from_row).map_err(|e| self.err(e))?;
        let mut runs = rows.collect::<rusqlite::Result<Vec<_>>>().map_err(|e| self.err(e))?;
        runs.sort_by_cached_key(|r| (time_order_key(&r.started), r.id.0));
        Ok(runs)
    }

    /// Finds the run a reference names (a group reference must select
    /// exactly one run).
    pub fn resolve(&self, r: &RunRef) -> Result<RunId> {
        let ids = self.matching(r)?;
        match ids.as_slice() {
            [id] => Ok(*id),
            [] => Err(StoreError::NoSuchRun(r.to_string())),
            many => Err(StoreError::AmbiguousRun {
                input: r.to_string(),
                ids: many.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// The runs a reference selects, oldest first: every run of a group
    /// reference (`label:TEXT`, `config:HASH`), else the one run it names.
    /// Selecting nothing is [`StoreError::NoSuchRun`].
    pub fn resolve_group(&self, r: &RunRef) -> Result<Vec<RunId>> {
        if !r.is_group() {
            return Ok(vec![self.resolve(r)?]);
        }
        let ids = self.matching(r)?;
        if ids.is_empty() {
            return Err(StoreError::NoSuchRun(r.to_string()));
        }
        Ok(ids)
    }

    fn matching(&self, r: &RunRef) -> Result<Vec<RunId>> {
        let q = |sql: &str, p: &dyn rusqlite::ToSql| -> Result<Vec<RunId>> {
            let mut stmt = self.conn.prepare(sql).map_err(|e| self.err(e))?;
            let ids = stmt
                .query_map([p], |row| row.get(0))
                .map_err(|e| self.err(e))?
                .collect::<rusqlite::Result<Vec<i64>>>()
                .map_err(|e| self.err(e))?;
            Ok(ids.into_iter().map(RunId).collect())
        };
        match r {
            RunRef::Latest(n) => {
                let all = self.ids_in_time_order("SELECT id, started FROM runs WHERE ?1", &1)?;
                Ok(all.iter().rev().nth(*n as usize).copied().into_iter().collect())
            }
            RunRef::Id(id) => q("SELECT id FROM runs WHERE id = ?1", id),
            RunRef::Uuid(u) => q("SELECT id FROM runs WHERE uuid = ?1", u),
            RunRef::Label(l) => q("SELECT id FROM runs WHERE label = ?1 ORDER BY id", l),
            RunRef::LabelGroup(l) => {
                self.ids_in_time_order("SELECT id, started FROM runs WHERE label = ?1", l)
            }
            RunRef::Config(h) => self.ids_in_time_order(
                "SELECT id, started FROM runs WHERE substr(lower(config_hash), 1, length(?1)) = ?1",
                h,
            ),
        }
    }

    /// Refuses a stored run whose shape an import would refuse (more than
    /// [`ITEM_CAP`] results, more than [`RUN_CAP`] bytes in all), from
    /// counts and lengths SQLite gives without building anything.
    fn check_run_size(&self, summary: &RunSummary) -> Result<()> {
        let run = summary.id;
        let (columns, results, payloads): (i64, i64, i64) = self
            .conn
            .query_row(
                "SELECT length(CAST(m.info_json AS BLOB)) + length(CAST(r.config_json AS BLOB))
                        + length(CAST(r.topology_json AS BLOB)),
                    (SELECT COUNT(*) FROM results x WHERE x.run_id = r.id),
                    (SELECT COALESCE(SUM(length(CAST(x.payload_json AS BLOB))), 0)
                     FROM results x WHERE x.run_id = r.id)
                 FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id = ?1",
                [run.0],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.err(e))?;
        let detail = if results > i64::from(ITEM_CAP) {
            format!("it holds {results} results")
        } else if (columns.max(0) as u64).saturating_add(payloads.max(0) as u64) > RUN_CAP {
            format!("it holds {} bytes of JSON", columns.saturating_add(payloads))
        } else {
            return Ok(());
        };
        Err(self.too_large(summary, detail))
    }

    fn too_large(&self, summary: &RunSummary, detail: String) -> StoreError {
        StoreError::RunTooLarge {
            path: self.path.clone(),
            run: summary.id,
            label: summary.label.clone(),
            detail,
        }
    }

    /// [`Store::parse_json`] after the shape check of an import
    /// ([`check_stored`]): a giant stored column is refused, never
    /// built.
    fn parse_bounded<T: DeserializeOwned>(
        &self,
        summary: &RunSummary,
        text: &str,
        what: &str,
    ) -> Result<T> {
        check_stored(text)
            .map_err(|why| self.too_large(summary, format!("its {what} has {why}")))?;
        self.parse_json(text, &format!("{what} of run {}", summary.id))
    }

    /// A run with its results, machine, configuration and topology.
    /// A run over the limits an import keeps is refused
    /// ([`StoreError::RunTooLarge`]), whoever wrote it.
    pub fn load_run(&self, run: RunId) -> Result<LoadedRun> {
        self.load_run_reading(run, Reading::Whole)
    }

    /// [`Store::load_run`] for a reader of its records that never writes
    /// the run back (`fleet`, the Parquet export): only the results of
    /// `kinds` (every kind when `None`), each read as its record without
    /// comparing it with its stored text (`as_stored` is `None`), which
    /// only exports and raw figures show. The same checks and errors.
    pub fn load_run_records(&self, run: RunId, kinds: Option<&[&str]>) -> Result<LoadedRun> {
        self.load_run_reading(run, Reading::Records(kinds))
    }

    fn load_run_reading(&self, run: RunId, reading: Reading) -> Result<LoadedRun> {
        let summary = self.run_summary(run)?;
        self.check_run_size(&summary)?;
        let (machine_info, config, topology): (String, String, String) = self
            .conn
            .prepare_cached(
                "SELECT m.info_json, r.config_json, r.topology_json
                 FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id = ?1",
            )
            .and_then(|mut s| s.query_row([run.0], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))))
            .map_err(|e| self.err(e))?;
        // Only the kinds asked for leave SQLite: a row's columns are read
        // when it is stepped to, so a kind left out must not be selected
        // (its payload, overflow pages and all, would be read for nothing).
        let (kinds, only): (&[&str], _) = match reading {
            Reading::Records(Some(kinds)) => {
                (kinds, format!(" AND kind IN ({})", vec!["?"; kinds.len()].join(", ")))
            }
            Reading::Whole | Reading::Records(None) => (&[], String::new()),
        };
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT seq, recorded, kind, payload_json FROM results
                 WHERE run_id = ?{only} ORDER BY seq"
            ))
            .map_err(|e| self.err(e))?;
        let params = std::iter::once(rusqlite::types::Value::Integer(run.0))
            .chain(kinds.iter().map(|k| rusqlite::types::Value::Text(k.to_string())));
        let raw = stmt
            .query_map(rusqlite::params_from_iter(params), |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.err(e))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))?;
        let mut results = Vec::with_capacity(raw.len());
        for (seq, recorded, kind, payload) in raw {
            let payload: Value =
                self.parse_bounded(&summary, &payload, &format!("result {seq}"))?;
            let (record, as_stored) = match reading {
                Reading::Whole => {
                    let up = results::upgrade::read(&kind, &payload);
                    (up.record, up.as_stored)
                }
                Reading::Records(_) => (results::upgrade::record(&kind, &payload), None),
            };
            results.push(StoredRecord { seq, recorded, record, as_stored });
        }
        Ok(LoadedRun {
            machine_info: self.parse_bounded(&summary, &machine_info, "machine")?,
            config: self.parse_bounded(&summary, &config, "configuration")?,
            topology: self.parse_bounded(&summary, &topology, "topology")?,
            summary,
            results,
        })
    }

    /// Resolves a reference and loads the run.
    pub fn load(&self, r: &RunRef) -> Result<LoadedRun> {
        self.load_run(self.resolve(r)?)
    }

    fn parse_json<T: DeserializeOwned>(&self, text: &str, what: &str) -> Result<T> {
        serde_json::from_str(text).map_err(|source| StoreError::Json {
            path: self.path.clone(),
            what: what.to_string(),
            source,
        })
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub(crate) fn machine_row(&self, run: RunId) -> Result<(String, String, String)> {
        self.conn
            .query_row(
                "SELECT m.fingerprint, m.description, m.info_json
                 FROM runs r JOIN machines m ON m.id = r.machine_id WHERE r.id = ?1",
                [run.0],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| self.err(e))
    }
}

fn default_path_from(xdg: Option<PathBuf>, home: Option<PathBuf>) -> Result<PathBuf> {
    let base = match xdg.filter(|p| p.is_absolute()) {
        Some(x) => x,
        None => home
            .filter(|h| !h.as_os_str().is_empty())
            .ok_or(StoreError::NoDataDir)?
            .join(".local/share"),
    };
    Ok(base.join("numaprobe").join("results.db"))
}

/// [`check_identity`] in one read transaction: its reads (the
/// application id, the schema version, the tables) see one state of the
/// file. Read one statement at a time, another writer creating the
/// database between them gives an application id of 0 beside numaprobe's
/// tables: "another program's database".
fn check_identity_at_once(conn: &Connection, path: &Path) -> Result<i64> {
    let err = |e| StoreError::sqlite(path, e);
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)
        .map_err(err)?;
    let version = check_identity(&tx, path)?;
    tx.finish().map_err(err)?;
    Ok(version)
}

/// Checks that `conn` is a numaprobe database this build can read (or an
/// empty one) and returns its schema version.
fn check_identity(conn: &Connection, path: &Path) -> Result<i64> {
    let err = |e| StoreError::sqlite(path, e);
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(err)?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(err)?;
    if app_id == APPLICATION_ID {
        if version <= SCHEMA_VERSION {
            open::check_our_tables(conn, path, version)?;
        }
    } else {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
            .map_err(err)?;
        let tables: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .map_err(err)?
            .collect::<rusqlite::Result<_>>()
            .map_err(err)?;
        if app_id != 0 || version != 0 || !tables.is_empty() {
            let tables = if tables.is_empty() { "none".into() } else { tables.join(", ") };
            return Err(StoreError::Foreign { path: path.to_path_buf(), found: app_id, tables });
        }
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found: version,
            known: SCHEMA_VERSION,
        });
    }
    Ok(version)
}

/// A damaged page anywhere is reported on open, naming the file, rather than
/// halfway through a report. Results databases are small (a few MB), so
/// the check costs milliseconds.
fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let err = |e| StoreError::sqlite(path, e);
    let check: Vec<String> = {
        let mut stmt = conn.prepare("PRAGMA quick_check(5)").map_err(err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(err)?
    };
    if check.first().map(String::as_str) != Some("ok") {
        let detail = one_line(&check.join("\n"));
        return Err(StoreError::Corrupt { path: path.to_path_buf(), detail });
    }
    Ok(())
}

/// A read-only connection to `path` (`immutable`: SQLite takes no locks
/// and needs no `-shm` file: only for storage nobody can write), checked
/// by reading the schema, which is when SQLite actually opens the file.
fn open_read_only(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
    let uri =
        format!("file:{}?mode=ro{}", uri_path(path), if immutable { "&immutable=1" } else { "" });
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
    Ok(conn)
}

/// `path` for an SQLite URI: every byte but unreserved ones and `/`
/// percent-encoded (RFC 3986), so `?`, `#` and `%` in a name stay a name.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The grouping key of a document: its `fingerprint` when it has one,
/// else the hash of the whole document.
fn fingerprint_or_hash(fingerprint: Option<&String>, doc: &impl serde::Serialize) -> String {
    match fingerprint {
        Some(f) if !f.is_empty() => f.clone(),
        _ => json_hash(&serde_json::to_value(doc).unwrap_or(Value::Null)),
    }
}

/// The key runs of one configuration share.
pub(crate) fn config_fingerprint(doc: &Configuration) -> String {
    fingerprint_or_hash(doc.fingerprint.as_ref(), doc)
}

/// The key runs of one machine share.
pub(crate) fn machine_fingerprint(doc: &Machine) -> String {
    fingerprint_or_hash(doc.fingerprint.as_ref(), doc)
}

/// What [`Store::load_run_reading`] builds of a run's results.
#[derive(Clone, Copy)]
enum Reading<'a> {
    /// Every result, each with its stored text where its record writes
    /// something else ([`results::upgrade::read`]).
    Whole,
    /// The results of these kinds (all when `None`), records only.
    Records(Option<&'a [&'a str]>),
}

/// A document as the JSON text the database holds (keys sorted).
pub(crate) fn json_text(doc: &impl serde::Serialize) -> String {
    serde_json::to_value(doc).map(|v| v.to_string()).unwrap_or_else(|_| "{}".into())
}

/// A one-line description of a machine document (see [`NewRun`]).
pub fn describe_machine(doc: &Machine) -> String {
    if let Some(d) = doc.description.as_deref().filter(|d| !d.is_empty()) {
        return d.to_string();
    }
    let mut parts = Vec::new();
    if let Some(m) = doc.cpu_model() {
        parts.push(m.to_string());
    }
    if let Some(p) = doc.packages.as_ref().map(|c| c.get()) {
        parts.push(format!("{p} package{}", if p == 1 { "" } else { "s" }));
    }
    if let Some(n) = doc.nodes.as_ref().map(|c| c.get()) {
        parts.push(format!("{n} node{}", if n == 1 { "" } else { "s" }));
    }
    if let Some(b) = doc.mem_total_bytes {
        parts.push(format!("{:.0} GiB", b as f64 / (1u64 << 30) as f64));
    }
    let body = parts.join(", ");
    match doc.hostname() {
        Some(h) if body.is_empty() => h.to_string(),
        Some(h) => format!("{h}: {body}"),
        None if body.is_empty() => "unknown machine".to_string(),
        None => body,
    }
}

pub(crate) fn upsert_machine(conn: &Connection, doc: &Machine) -> rusqlite::Result<i64> {
    upsert_machine_with(conn, &machine_fingerprint(doc), &describe_machine(doc), doc)
}

pub(crate) fn upsert_machine_with(
    conn: &Connection,
    fingerprint: &str,
    description: &str,
    doc: &Machine,
) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO machines (fingerprint, description, info_json, first_seen)
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (fingerprint) DO NOTHING",
        params![fingerprint, description, json_text(doc), now_rfc3339()],
    )?;
    conn.query_row("SELECT id FROM machines WHERE fingerprint = ?1", [fingerprint], |r| r.get(0))
}

/// Inserts a result (as stored: its record's JSON, or the text it was
/// stored as); `seq` `None` takes the next number in the run.
pub(crate) fn insert_result(
    conn: &Connection,
    run: i64,
    seq: Option<u32>,
    recorded: &str,
    r: &StoredRecord,
) -> rusqlite::Result<u32> {
    let seq: u32 = match seq {
        Some(s) => s,
        None => conn.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM results WHERE run_id = ?1",
            [run],
            |r| r.get(0),
        )?,
    };
    match &r.as_stored {
        Some(text) => insert_row(conn, run, seq, recorded, &r.record, text)?,
        None => insert_row(conn, run, seq, recorded, &r.record, &r.record.to_json().to_string())?,
    }
    Ok(seq)
}

/// Inserts one result row: `record`'s key columns and `payload`, the text
/// stored for it.
pub(crate) fn insert_row(
    conn: &Connection,
    run: i64,
    seq: u32,
    recorded: &str,
    record: &Record,
    payload: &str,
) -> rusqlite::Result<()> {
    let keys = KeyColumns::of(record);
    // Cached: an import inserts thousands of results through one statement.
    conn.prepare_cached(
        "INSERT INTO results (run_id, seq, recorded, kind, mode, kernel, cpu_node, mem_node,
                              value, unit, payload_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        run,
        seq,
        recorded,
        record.kind(),
        keys.mode,
        keys.kernel,
        keys.cpu_node,
        keys.mem_node,
        keys.value,
        keys.unit,
        payload
    ])?;
    Ok(())
}

/// Columns copied out of a record so that SQL can filter on them.
struct KeyColumns {
    mode: Option<&'static str>,
    kernel: Option<&'static str>,
    cpu_node: Option<u32>,
    mem_node: Option<u32>,
    value: Option<f64>,
    unit: Option<&'static str>,
}

impl KeyColumns {
    /// The headline value is the result's main figure: best GB/s of a
    /// bandwidth result, the median ns of a latency result (a loaded
    /// point's latency when it has no median), a program's median metric
    /// (in its own unit); summaries, findings and unknown results have none.
    fn of(r: &Record) -> KeyColumns {
        let none = KeyColumns {
            mode: None,
            kernel: None,
            cpu_node: None,
            mem_node: None,
            value: None,
            unit: None,
        };
        let finite = |v: f64| Some(v).filter(|v| v.is_finite());
        match r {
            Record::Bw(b) => KeyColumns {
                mode: Some(b.mode.name()),
                kernel: Some(b.kernel.name()),
                cpu_node: b.cpu_node,
                mem_node: b.mem_node,
                value: finite(b.best_gbs),
                unit: Some("GB/s"),
            },
            Record::Lat(l) => match l.as_ref() {
                Lat::Chase(c) => KeyColumns {
                    mode: Some(c.mode.name()),
                    cpu_node: c.cpu_node,
                    mem_node: c.mem_node,
                    value: finite(c.median_ns),
                    unit: Some("ns"),
                    ..none
                },
                Lat::Loaded(p) => KeyColumns {
                    mode: Some(p.mode.name()),
                    mem_node: p.mem_node,
                    value: finite(p.median_ns).or(finite(p.latency_ns)),
                    unit: Some("ns"),
                    ..none
                },
                Lat::C2c(c) => KeyColumns {
                    mode: Some(c.mode.name()),
                    value: finite(c.median_ns),
                    unit: Some("ns"),
                    ..none
                },
            },
            Record::LatSummary(s) => match s.as_ref() {
                LatSummary::PerCpu(p) => {
                    KeyColumns { mode: Some(p.mode.name()), mem_node: p.mem_node, ..none }
                }
                LatSummary::Sweep(p) => {
                    KeyColumns { mode: Some(p.mode.name()), mem_node: p.mem_node, ..none }
                }
                LatSummary::PerCpuSweep(p) => {
                    KeyColumns { mode: Some(p.mode.name()), mem_node: p.mem_node, ..none }
                }
                LatSummary::Loaded(p) => {
                    KeyColumns { mode: Some(p.mode.name()), mem_node: p.mem_node, ..none }
                }
                LatSummary::PrefetchCheck(p) => {
                    KeyColumns { mode: Some(p.mode.name()), mem_node: p.mem_node, ..none }
                }
            },
            Record::Exec(e) => KeyColumns { value: e.stats.median_metric, ..none },
            Record::Gpu(g) => KeyColumns {
                mode: Some("copy"),
                mem_node: Some(g.mem_node),
                value: finite(g.median_gbs),
                unit: Some("GB/s"),
                ..none
            },
            Record::Step(_) | Record::Finding(_) | Record::Unknown(_) => none,
        }
    }
}

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let raw: String = r.get(5)?;
    let mut status = RunStatus::parse(&raw).unwrap_or(RunStatus::Incomplete);
    let host: Option<String> = r.get(14)?;
    let boot: Option<String> = r.get(15)?;
    let pid: Option<i64> = r.get(16)?;
    if status == RunStatus::Running && !Owner::is_alive(host.as_deref(), boot.as_deref(), pid) {
        status = RunStatus::Incomplete;
    }
    let mut message: Option<String> = r.get(6)?;
    if raw == "running" && status == RunStatus::Incomplete && message.is_none() {
        message = Some("the measuring process ended without finishing the run".into());
    }
    let imported_at: Option<String> = r.get(13)?;
    Ok(RunSummary {
        id: RunId(r.get(0)?),
        uuid: r.get(1)?,
        label: r.get(2)?,
        started: r.get(3)?,
        finished: r.get(4)?,
        status,
        complete: status == RunStatus::Complete,
        message,
        machine: r.get(7)?,
        machine_fingerprint: r.get(8)?,
        config_hash: r.get(9)?,
        tool_version: r.get(10)?,
        command_line: r.get(11)?,
        result_count: r.get::<_, i64>(12)? as u64,
        imported: imported_at.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_path_follows_xdg() {
        let p = default_path_from(Some("/x/data".into()), Some("/home/u".into())).unwrap();
        assert_eq!(p, PathBuf::from("/x/data/numaprobe/results.db"));
        // a relative XDG_DATA_HOME is ignored, as the spec says
        let p = default_path_from(Some("rel".into()), Some("/home/u".into())).unwrap();
        assert_eq!(p, PathBuf::from("/home/u/.local/share/numaprobe/results.db"));
        assert!(matches!(default_path_from(None, None), Err(StoreError::NoDataDir)));
    }

    #[test]
    fn describes_machines_from_the_fields_it_finds() {
        let m = |v: Value| serde_json::from_value::<Machine>(v).unwrap();
        let d = describe_machine(&m(json!({
            "hostname": "db1", "cpu_model": "Xeon 8480+", "packages": 2, "nodes": [0, 1, 2, 3],
            "mem_total_bytes": 549755813888u64
        })));
        assert_eq!(d, "db1: Xeon 8480+, 2 packages, 4 nodes, 512 GiB");
        assert_eq!(describe_machine(&m(json!({"description": "lab box"}))), "lab box");
        assert_eq!(describe_machine(&m(json!({}))), "unknown machine");
    }

    #[test]
    fn key_columns_pick_the_headline_value() {
        let bw = json!({"mode": "local", "kernel": "triad", "cpu_node": 1, "mem_node": 1,
                        "best_gbs": 101.5, "median_gbs": 100.0});
        let k = KeyColumns::of(&results::upgrade::read("bw", &bw).record);
        assert_eq!(
            (k.mode, k.kernel, k.cpu_node, k.mem_node),
            (Some("local"), Some("triad"), Some(1), Some(1))
        );
        assert_eq!((k.value, k.unit), (Some(101.5), Some("GB/s")));
        let lat = json!({"mode": "loaded", "delay": 0, "latency_ns": 210.0, "load_gbs": 80.0});
        let k = KeyColumns::of(&results::upgrade::read("lat", &lat).record);
        assert_eq!((k.value, k.unit, k.mem_node), (Some(210.0), Some("ns"), None));
    }
}
