//! The database schema and its migrations.
//!
//! The schema version is SQLite's `user_version`; migration `i` (0-based)
//! takes the database from version `i` to `i + 1`, each in one transaction.
//! `application_id` marks the file as numaprobe's so that a foreign SQLite
//! file is recognised and left alone.

/// `application_id` of a numaprobe results database: ASCII `NUMA`.
pub const APPLICATION_ID: i32 = 0x4E55_4D41;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Migrations in order; never edit a published one, append a new one.
pub const MIGRATIONS: &[&str] = &[V1];

const V1: &str = r#"
CREATE TABLE machines (
    id           INTEGER PRIMARY KEY,
    fingerprint  TEXT NOT NULL UNIQUE,
    description  TEXT NOT NULL,
    info_json    TEXT NOT NULL,
    first_seen   TEXT NOT NULL
);

CREATE TABLE runs (
    id            INTEGER PRIMARY KEY,
    uuid          TEXT NOT NULL UNIQUE,
    label         TEXT,
    command_line  TEXT NOT NULL,
    tool_version  TEXT NOT NULL,
    started       TEXT NOT NULL,
    finished      TEXT,
    status        TEXT NOT NULL
                  CHECK (status IN ('running', 'complete', 'incomplete', 'failed')),
    message       TEXT,
    machine_id    INTEGER NOT NULL REFERENCES machines(id),
    config_hash   TEXT NOT NULL,
    config_json   TEXT NOT NULL,
    topology_json TEXT NOT NULL,
    -- who is measuring, to tell a live run from one whose process died
    owner_host    TEXT,
    owner_boot_id TEXT,
    owner_pid     INTEGER,
    imported_at   TEXT
);
CREATE INDEX runs_by_machine ON runs (machine_id, started);
CREATE INDEX runs_by_label ON runs (label);

CREATE TABLE results (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq           INTEGER NOT NULL,
    recorded      TEXT NOT NULL,
    kind          TEXT NOT NULL,
    -- key columns copied from the payload for queries; the payload is the truth
    mode          TEXT,
    kernel        TEXT,
    cpu_node      INTEGER,
    mem_node      INTEGER,
    value         REAL,
    unit          TEXT,
    payload_json  TEXT NOT NULL,
    UNIQUE (run_id, seq)
);
CREATE INDEX results_by_run ON results (run_id, kind, mode);
"#;
