//! deploy/sql run by DuckDB (its Python package, pinned, from PyPI:
//! scripts/duckdb-setup.sh) on `export --format parquet --all` of
//! synthetic fleets made from a real-shaped export, its verdicts checked
//! equal to `numaprobe fleet --json`'s host by host (feature
//! `duckdb-tests`; .ci/run runs it):
//!
//!     scripts/duckdb-setup.sh &&
//!     cargo test -p numaprobe --features duckdb-tests --test fleet_sql -- --nocapture

#[path = "support/fleet_sql.rs"]
mod fleet_sql;

use std::path::Path;
use std::time::Duration;

use fleet_sql::{assert_same, exact, fleet_json, now_arg, num, python, run_ok, sql, Fleet};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(600);

fn args(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// DuckDB's verdicts on `f` with `fleet`'s flags `flags` (and its
/// --unmeasured list), checked equal to `fleet --json`'s.
fn check(f: &Fleet, flags: &[&str], sql_flags: &[&str]) -> fleet_sql::Compared {
    let u = f.unmeasured.display().to_string();
    let mut fa = args(flags);
    fa.extend(["--unmeasured".to_string(), u.clone()]);
    let fa: Vec<&str> = fa.iter().map(String::as_str).collect();
    let j = fleet_json(f, &fa);
    let mut qa = args(sql_flags);
    qa.extend(["--unmeasured".to_string(), u]);
    qa.extend(now_arg(&j));
    let q = sql("duckdb", &f.parquet, &qa, LIMIT).unwrap_or_else(|e| panic!("{e}"));
    let c = assert_same(&j, &q);
    eprintln!("fleet-sql: duckdb = fleet {flags:?}: {c:?}");
    c
}

/// 1,000 hosts (and the varied fleet's own: a model of 2, one of 7 with
/// identical figures, one of 4): every host's verdict from DuckDB is
/// `fleet --json`'s, and the fleet holds every case, so each kind of
/// verdict was compared: outliers, drift, stale and future-dated runs,
/// hosts whose latest run failed (some with no complete run at all), hosts
/// not measured (one never seen: no run here), hosts with only exec runs,
/// runs passed over.
#[test]
fn duckdb_gives_fleets_verdicts_on_1000_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 1000, 100);
    let c = check(&f, &[], &[]);
    assert!(c.hosts > 900, "{c:?}");
    for (what, n) in [
        ("flags", c.flags),
        ("drift", c.drift),
        ("stale", c.stale),
        ("future", c.future),
        ("incomplete", c.incomplete),
        ("unmeasured", c.unmeasured),
        ("skipped", c.skipped),
        ("passed_over", c.passed_over),
    ] {
        assert!(n > 0, "the fleet has no {what} to compare: {c:?}");
    }
}

/// `fleet`'s flags as the SQL's named parameters: a threshold and a
/// maximum age, a label, grouping by label and by configuration; every
/// host's verdict the same under each.
#[test]
fn duckdb_gives_fleets_verdicts_under_every_flag() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 300, 50);
    let c = check(
        &f,
        &["--threshold", "10", "--max-age", "2d"],
        &["--threshold", "10", "--max-age", "172800"],
    );
    assert!(c.stale > c.hosts / 2, "most runs are older than 2 days: {c:?}");
    check(&f, &["--label", "acceptance"], &["--label", "acceptance"]);
    let c = check(&f, &["--group-by", "label"], &["--group-by", "label"]);
    assert!(c.hosts > 250, "{c:?}");
    check(&f, &["--group-by", "config"], &["--group-by", "config"]);
}

/// Runs a DuckDB script with `python()`: its stdout.
fn duckdb(script: &str) -> String {
    run_ok(std::process::Command::new(python()).arg("-c").arg(script))
}

/// The three tables again under `to`, through DuckDB: `figures`,
/// `runs` and `settings` are SELECTs over `f`, `r` and `s` (the
/// exported files), written with the key-value metadata `kv` (none when
/// empty).
fn rewrite(f: &Fleet, to: &Path, figures: &str, runs: &str, settings: &str, kv: &str) {
    let base = f.parquet.display().to_string();
    let stem = base.trim_end_matches(".parquet");
    let out = to.display().to_string();
    let ostem = out.trim_end_matches(".parquet");
    let opts = if kv.is_empty() {
        "FORMAT parquet".into()
    } else {
        format!("FORMAT parquet, KV_METADATA {kv}")
    };
    duckdb(&format!(
        r#"import duckdb
c = duckdb.connect()
c.execute("CREATE VIEW f AS SELECT * FROM '{base}'")
c.execute("CREATE VIEW r AS SELECT * FROM '{stem}.runs.parquet'")
c.execute("CREATE VIEW s AS SELECT * FROM '{stem}.settings.parquet'")
c.execute("COPY ({figures}) TO '{out}' ({opts})")
c.execute("COPY ({runs}) TO '{ostem}.runs.parquet' ({opts})")
c.execute("COPY ({settings}) TO '{ostem}.settings.parquet' ({opts})")
"#
    ));
}

/// Tables of another schema version are refused by name: version 1 (no
/// version column, no metadata) and a version 3 (column and metadata):
/// the message names the version the SQL reads and the one the file
/// holds, and no verdict is printed.
#[test]
fn duckdb_refuses_parquet_of_another_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 30, 30);
    let v1 = dir.path().join("v1.parquet");
    rewrite(
        &f,
        &v1,
        "SELECT * EXCLUDE (schema_version) FROM f",
        "SELECT * EXCLUDE (schema_version, run_id, exec, message, settings) FROM r",
        "SELECT * EXCLUDE (schema_version) FROM s",
        "",
    );
    let e = sql("duckdb", &v1, &[], LIMIT).unwrap_err();
    assert!(
        e.contains("reads numaprobe Parquet schema version 2")
            && e.contains("no version (numaprobe Parquet schema version 1"),
        "{e}"
    );
    let v3 = dir.path().join("v3.parquet");
    rewrite(
        &f,
        &v3,
        "SELECT * REPLACE (3 AS schema_version) FROM f",
        "SELECT * REPLACE (3 AS schema_version) FROM r",
        "SELECT * REPLACE (3 AS schema_version) FROM s",
        "{'numaprobe.schema_version': '3'}",
    );
    let e = sql("duckdb", &v3, &[], LIMIT).unwrap_err();
    assert!(e.contains("schema version 2") && e.contains("holds version 3"), "{e}");
    // The same files, their metadata saying 2 but their rows 3: the
    // check on the column (what Spark and Trino read) refuses them too.
    let mixed = dir.path().join("mixed.parquet");
    rewrite(
        &f,
        &mixed,
        "SELECT * REPLACE (3 AS schema_version) FROM f",
        "SELECT * REPLACE (3 AS schema_version) FROM r",
        "SELECT * FROM s",
        "{'numaprobe.schema_version': '2'}",
    );
    let e = sql("duckdb", &mixed, &[], LIMIT).unwrap_err();
    assert!(e.contains("numaprobe_runs holds version 3"), "{e}");
    // And the untouched export is read.
    assert!(sql("duckdb", &f.parquet, &[], LIMIT).is_ok());
}

/// A fleet figure of another numaprobe version (an id this one does not
/// know, with its direction) is judged like the others, never dropped:
/// the host 40 % below the others on it is flagged on it, with the
/// group's median, and the other verdicts do not move.
#[test]
fn duckdb_judges_metric_ids_of_another_version() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 60, 60);
    let before = sql("duckdb", &f.parquet, &[], LIMIT).unwrap();
    let hosts = before["hosts"].as_array().unwrap();
    let slow = hosts
        .iter()
        .find(|h| h["model"].as_str().unwrap().starts_with("2x Intel(R) Xeon(R) Silver"))
        .unwrap();
    let slow_uuid = slow["run_uuid"].as_str().unwrap();
    let newer = dir.path().join("newer.parquet");
    rewrite(
        &f,
        &newer,
        &format!(
            "SELECT * FROM f UNION ALL SELECT * REPLACE ('cxl_tier_bw_gbs' AS metric_id, \
             CASE WHEN run_uuid = '{slow_uuid}' THEN 30.0 ELSE 50.0 END AS value) \
             FROM f WHERE kind = 'fleet' AND metric_id = 'local_bw_gbs'"
        ),
        "SELECT * FROM r",
        "SELECT * FROM s",
        "{'numaprobe.schema_version': '2'}",
    );
    let after = sql("duckdb", &newer, &[], LIMIT).unwrap();
    let on_new: Vec<&Value> = after["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["metric_id"] == "cxl_tier_bw_gbs")
        .collect();
    assert_eq!(on_new.len(), 1, "{on_new:?}");
    assert_eq!(on_new[0]["run_uuid"], slow_uuid);
    assert_eq!((num(&on_new[0]["value"]), num(&on_new[0]["median"])), (Some(30.0), Some(50.0)));
    assert_eq!(num(&on_new[0]["deviation_pct"]), Some(-40.0));
    assert!(after["peer_stats"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["metric_id"] == "cxl_tier_bw_gbs" && num(&p["median"]) == Some(50.0)));
    // A view's rows come in no set order: compared sorted.
    let sorted = |v: &Value| {
        let mut v: Vec<String> = v.as_array().unwrap().iter().map(Value::to_string).collect();
        v.sort();
        v
    };
    let old: Vec<&Value> = after["outliers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["metric_id"] != "cxl_tier_bw_gbs")
        .collect();
    let mut old: Vec<String> = old.iter().map(|o| o.to_string()).collect();
    old.sort();
    assert_eq!(old, sorted(&before["outliers"]));
    assert_eq!(sorted(&after["drift"]), sorted(&before["drift"]));
}

/// DuckDB reads the export's values as `fleet` holds them: each compared
/// host's fleet figures (kind 'fleet') are its `fleet --json` metrics to
/// the bit, every figure and setting joins its run, each run's counts of
/// figures and settings are its rows, and docs/fleet.md's first query
/// (the slow-host example) names the hosts fleet flags on local
/// bandwidth.
#[test]
fn duckdb_reads_the_parquet_export() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 200, 200);
    let j = fleet_json(&f, &[]);
    let base = f.parquet.display().to_string();
    let stem = base.trim_end_matches(".parquet").to_string();
    let docs = std::fs::read_to_string(fleet_sql::repo().join("docs/fleet.md")).unwrap();
    let query = docs
        .split("```sql\n")
        .nth(1)
        .and_then(|q| q.split("```").next())
        .expect("docs/fleet.md has the slow-host query")
        .replace("'fleet.parquet'", &format!("'{base}'"))
        .replace("'fleet.runs.parquet'", &format!("'{stem}.runs.parquet'"));
    let got: Value = exact(&duckdb(&format!(
        r#"import duckdb, json
c = duckdb.connect()
f, r, s = {base:?}, {runs:?}, {settings:?}
q = lambda sql: c.execute(sql).fetchall()
out = {{
  "fleet": [[u, m, v] for u, m, v in q(f"select run_uuid, metric_id, value from '{{f}}' where kind = 'fleet'")],
  "unjoined_figures": q(f"select count(*) from '{{f}}' x anti join '{{r}}' y using (run_uuid)")[0][0],
  "unjoined_settings": q(f"select count(*) from '{{s}}' x anti join '{{r}}' y using (run_uuid)")[0][0],
  "bad_counts": q(f"select count(*) from '{{r}}' y where figures <> (select count(*) from '{{f}}' x where x.run_uuid = y.run_uuid) or settings <> (select count(*) from '{{s}}' x where x.run_uuid = y.run_uuid)")[0][0],
  "stable_null": q(f"select count(*) from '{{f}}' where kind = 'result' and stable is null")[0][0],
  "slow": [str(row[0]) for row in c.execute({query:?}).fetchall()],
}}
print(json.dumps(out))
"#,
        runs = format!("{stem}.runs.parquet"),
        settings = format!("{stem}.settings.parquet"),
    )));
    assert_eq!(got["unjoined_figures"], 0, "every figure has its run");
    assert_eq!(got["unjoined_settings"], 0, "every setting has its run");
    assert_eq!(got["bad_counts"], 0, "each run's figures and settings are its rows");
    assert_eq!(got["stable_null"], 0, "every result says whether it was stable");
    let mut figures: std::collections::BTreeMap<(String, String), f64> = Default::default();
    for x in got["fleet"].as_array().unwrap() {
        figures.insert(
            (x[0].as_str().unwrap().into(), x[1].as_str().unwrap().into()),
            num(&x[2]).unwrap(),
        );
    }
    let mut checked = 0;
    let mut slow_fleet = Vec::new();
    for g in j["groups"].as_array().unwrap() {
        for h in g["hosts"].as_array().unwrap() {
            let uuid = h["run_uuid"].as_str().unwrap();
            let ms = h["metrics"].as_object().unwrap();
            let mine: Vec<(&String, &f64)> =
                figures.iter().filter(|((u, _), _)| u == uuid).map(|((_, m), v)| (m, v)).collect();
            assert_eq!(mine.len(), ms.len(), "{uuid}: {mine:?} vs {ms:?}");
            for (m, v) in mine {
                assert_eq!(Some(*v), num(&ms[m]["value"]), "{uuid} {m}");
                checked += 1;
            }
            // The docs' query: threshold alone, on local bandwidth, of
            // groups of 3 hosts or more.
            if !g["peers_missing"].as_bool().unwrap() {
                if let Some(d) = ms.get("local_bw_gbs").and_then(|m| num(&m["deviation_pct"])) {
                    if d < -5.0 {
                        slow_fleet.push(h["host"].as_str().unwrap().to_string());
                    }
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
    let mut slow: Vec<String> =
        got["slow"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().into()).collect();
    slow.sort();
    slow_fleet.sort();
    assert!(!slow.is_empty());
    assert_eq!(slow, slow_fleet);
}
