//! deploy/sql run by DuckDB on synthetic fleets of 10,000 and 100,000
//! hosts, its verdicts checked equal to `numaprobe fleet --json`'s host by
//! host, each step timed (feature `fleet-scale-tests`; .ci/run runs it
//! after scripts/duckdb-setup.sh, with the static release build of the
//! guest suite):
//!
//!     scripts/duckdb-setup.sh &&
//!     NUMAPROBE_BIN=target/static/x86_64-unknown-linux-gnu/release/numaprobe \
//!     cargo test -p numaprobe --features fleet-scale-tests --test fleet_sql_scale -- --nocapture --test-threads 1
//!
//! A release build is required (`NUMAPROBE_BIN`, the same commit as this
//! test): a debug build imports 100,000 hosts in hours.

#[path = "support/fleet_sql.rs"]
mod fleet_sql;

use std::time::Duration;

use fleet_sql::{assert_same, fleet_json, now_arg, sql};

/// A release build is there (support::fleet_sql::bin checks its commit).
fn release() {
    assert!(
        std::env::var_os("NUMAPROBE_BIN").is_some(),
        "NUMAPROBE_BIN must name a release build of this commit (e.g. \
         target/static/x86_64-unknown-linux-gnu/release/numaprobe, which scripts/guest-setup.sh builds)"
    );
    fleet_sql::bin();
}

fn at(hosts: usize) {
    release();
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), hosts, 1000);
    let u = f.unmeasured.display().to_string();
    let j = fleet_json(&f, &["--unmeasured", &u]);
    let mut args = vec!["--unmeasured".to_string(), u];
    args.extend(now_arg(&j));
    let q = sql("duckdb", &f.parquet, &args, Duration::from_secs(900))
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("fleet-sql: duckdb at {hosts} hosts: {}", q["seconds"]);
    let c = assert_same(&j, &q);
    eprintln!("fleet-sql: duckdb = fleet at {hosts} hosts: {c:?}");
    assert!(c.hosts > hosts * 9 / 10, "{c:?}");
    assert!(c.flags > 0 && c.drift > 0 && c.stale > 0 && c.future > 0 && c.incomplete > 0, "{c:?}");
}

#[test]
fn duckdb_equals_fleet_on_10000_hosts() {
    at(10_000);
}

#[test]
fn duckdb_equals_fleet_on_100000_hosts() {
    at(100_000);
}
