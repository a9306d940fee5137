//! deploy/sql on synthetic fleets of 10,000 and 100,000 hosts, its
//! verdicts checked equal to `numaprobe fleet --json`'s host by host, each
//! step's wall time, CPU time and peak RSS printed (GNU time) (feature
//! `fleet-scale-tests`, after scripts/duckdb-setup.sh, with a release
//! build of this commit):
//!
//!     NUMAPROBE_BIN=target/static/x86_64-unknown-linux-gnu/release/numaprobe \
//!     cargo test -p numaprobe --features fleet-scale-tests --test fleet_sql_scale -- --nocapture --test-threads 1
//!
//! runs both tests: 10,000 hosts with DuckDB, then 10,000 hosts grown to
//! 100,000 inside their database (scripts/fleet-copy.py; why that keeps
//! the check honest: docs/testing.md, "The fleet at 100,000 hosts"), each
//! size judged by `fleet` and the SQL. `.ci/run` runs the second (`--exact
//! sql_equals_fleet_on_10000_then_100000_hosts`), which checks the 10,000
//! hosts on its way. With `--features fleet-scale-tests,spark-tests`
//! (after scripts/spark-setup.sh) Spark judges both sizes too.

#[path = "support/fleet_sql.rs"]
mod fleet_sql;

use std::time::Duration;

use fleet_sql::{assert_same, fleet_json, now_arg, sql, Compared, Fleet};

/// Each of `engines` judges `f` and its verdicts are checked against
/// `fleet --json`'s, host by host: what was compared.
fn judged(f: &Fleet, hosts: usize, engines: &[&str]) -> Vec<Compared> {
    let u = f.unmeasured.display().to_string();
    eprintln!("fleet-sql: fleet --json at {hosts} hosts");
    let j = fleet_json(f, &["--unmeasured", &u]);
    let mut args = vec!["--unmeasured".to_string(), u];
    args.extend(now_arg(&j));
    let mut out = Vec::new();
    for engine in engines {
        let q = sql(engine, &f.parquet, &args, Duration::from_secs(3600))
            .unwrap_or_else(|e| panic!("{e}"));
        eprintln!("fleet-sql: {engine} at {hosts} hosts: {}", q["seconds"]);
        let c = assert_same(&j, &q);
        eprintln!("fleet-sql: {engine} = fleet at {hosts} hosts: {c:?}");
        assert!(c.hosts > hosts * 9 / 10, "{c:?}");
        assert!(
            c.flags > 0 && c.drift > 0 && c.stale > 0 && c.future > 0 && c.incomplete > 0,
            "{c:?}"
        );
        out.push(c);
    }
    out
}

fn release_build() {
    assert!(
        std::env::var_os("NUMAPROBE_BIN").is_some(),
        "NUMAPROBE_BIN must name a release build of this commit (e.g. \
         target/static/x86_64-unknown-linux-gnu/release/numaprobe, which scripts/guest-setup.sh builds)"
    );
    fleet_sql::bin();
}

/// Judges `base` imported hosts, then the same database grown to `base *
/// (copies + 1)` hosts inside it ([`fleet_sql::grow`]), with each of
/// `engines` at both sizes.
fn at(base: usize, copies: usize, engines: &[&str]) {
    release_build();
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), base, 1000);
    let small = judged(&f, base, engines);
    if copies == 0 {
        return;
    }
    let hosts = base * (copies + 1);
    fleet_sql::grow(&f, copies, hosts);
    let large = judged(&f, hosts, engines);
    for (s, l) in small.iter().zip(&large) {
        // Every copy is a host of its own: ten times the hosts compared,
        // give or take those the --unmeasured list names only in the
        // originals and the groups the copies make large enough to judge.
        assert!(l.hosts > s.hosts * (copies + 1) * 9 / 10, "{s:?} then {l:?}");
        assert!(l.flags > s.flags * copies && l.drift > s.drift * copies, "{s:?} then {l:?}");
    }
}

#[test]
fn duckdb_equals_fleet_on_10000_hosts() {
    at(10_000, 0, &["duckdb"]);
}

/// 10,000 imported hosts, then 100,000: the 10,000 copied nine times in
/// the database (docs/testing.md, "The fleet at 100,000 hosts"); DuckDB,
/// and Spark in builds with `spark-tests`.
#[test]
fn sql_equals_fleet_on_10000_then_100000_hosts() {
    let engines: &[&str] =
        if cfg!(feature = "spark-tests") { &["duckdb", "spark"] } else { &["duckdb"] };
    at(10_000, 9, engines);
}
