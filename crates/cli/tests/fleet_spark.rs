//! deploy/sql run by Spark (pyspark, pinned, from PyPI, on Debian's
//! openjdk-17-jre-headless: scripts/spark-setup.sh), in local mode
//! (local[2], bound to 127.0.0.1, started by scripts/fleet-sql.py and
//! stopped by it, killed past its bound), on `export --format parquet
//! --all` of a synthetic fleet; its verdicts checked equal to `numaprobe
//! fleet --json`'s host by host (feature `spark-tests`; docs/testing.md):
//!
//!     scripts/spark-setup.sh &&
//!     cargo test -p numaprobe --features spark-tests --test fleet_spark -- --nocapture --test-threads 1
//!
//! (what `.ci/run` runs, with `NUMAPROBE_BIN` the static release build).

#[path = "support/fleet_sql.rs"]
mod fleet_sql;

use std::time::Duration;

use fleet_sql::{assert_same, fleet_json, now_arg, python, run_ok, sql};

const LIMIT: Duration = Duration::from_secs(1800);

/// 1,000 hosts with every case `fleet` judges (scripts/fleet-synth.py
/// --varied): Spark's verdicts are `fleet --json`'s for every host, under
/// the default flags and under a threshold, a maximum age and grouping by
/// label.
#[test]
fn spark_gives_fleets_verdicts_on_1000_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 1000, 100);
    let u = f.unmeasured.display().to_string();
    for (flags, sql_flags) in [
        (vec![], vec![]),
        (
            vec!["--threshold", "10", "--max-age", "2d", "--group-by", "label"],
            vec!["--threshold", "10", "--max-age", "172800", "--group-by", "label"],
        ),
    ] {
        let mut fa = flags.clone();
        fa.extend(["--unmeasured", &u]);
        let j = fleet_json(&f, &fa);
        let mut qa: Vec<String> = sql_flags.iter().map(|s| s.to_string()).collect();
        qa.extend(["--unmeasured".to_string(), u.clone()]);
        qa.extend(now_arg(&j));
        let q = sql("spark", &f.parquet, &qa, LIMIT).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(q["engine"], "spark");
        let c = assert_same(&j, &q);
        eprintln!("fleet-sql: spark {} = fleet {flags:?}: {c:?}", q["version"]);
        assert!(
            c.hosts > 900 && c.flags > 0 && c.drift > 0 && c.incomplete > 0 && c.unmeasured > 0,
            "{c:?}"
        );
    }
}

/// A version 1 export (no version column, none of the columns added
/// since) read by Spark with version 2's columns stated: fleet.sql's first
/// check refuses it, naming both versions.
#[test]
fn spark_refuses_parquet_of_another_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 20, 20);
    let base = f.parquet.display().to_string();
    let stem = base.trim_end_matches(".parquet").to_string();
    let v1 = dir.path().join("v1.parquet").display().to_string();
    let v1stem = v1.trim_end_matches(".parquet").to_string();
    run_ok(std::process::Command::new(python()).arg("-c").arg(format!(
        r#"import duckdb
c = duckdb.connect()
c.execute("COPY (SELECT * EXCLUDE (schema_version) FROM '{base}') TO '{v1}' (FORMAT parquet)")
c.execute("COPY (SELECT * EXCLUDE (schema_version, run_id, exec, message, settings) FROM '{stem}.runs.parquet') TO '{v1stem}.runs.parquet' (FORMAT parquet)")
c.execute("COPY (SELECT * EXCLUDE (schema_version) FROM '{stem}.settings.parquet') TO '{v1stem}.settings.parquet' (FORMAT parquet)")
"#
    )));
    let e = sql("spark", std::path::Path::new(&v1), &[], LIMIT).unwrap_err();
    assert!(
        e.contains("reads numaprobe Parquet schema version 2")
            && e.contains("numaprobe_runs holds version none (a version 1 export)"),
        "{e}"
    );
}
