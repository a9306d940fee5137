//! `export --format parquet --all` holds what `numaprobe fleet` judges, so
//! that deploy/sql can judge the same (the SQL itself runs in the DuckDB
//! and Spark suites: fleet_sql, fleet_spark). On 1,000 synthetic hosts
//! (scripts/fleet-synth.py --varied, with python3) the three tables are
//! read back with the parquet crate's own reader and held against `fleet
//! --json`: every compared host's run (model, database id, status) and
//! fleet figures to the bit, every group's drifting settings counted from
//! the settings table as `fleet` counts them, every incomplete host's
//! status and reason. Plain suite: no engine needed.

#[path = "support/fleet_sql.rs"]
mod fleet_sql;

use std::collections::BTreeMap;
use std::path::Path;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use serde_json::Value;

/// Every row of a Parquet file as (column -> field).
fn rows(path: &Path) -> Vec<BTreeMap<String, Field>> {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let kv = reader.metadata().file_metadata().key_value_metadata().cloned().unwrap_or_default();
    assert!(
        kv.iter().any(|k| k.key == "numaprobe.schema_version" && k.value.as_deref() == Some("2")),
        "{}: {kv:?}",
        path.display()
    );
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            let r: Row = r.unwrap();
            r.get_column_iter().map(|(k, v)| (k.clone(), v.clone())).collect()
        })
        .collect()
}

fn text(f: &Field) -> Option<String> {
    match f {
        Field::Str(s) => Some(s.clone()),
        Field::Null => None,
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn parquet_export_holds_what_fleet_judges_on_1000_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let f = fleet_sql::make(dir.path(), 1000, 100);
    let j = fleet_sql::fleet_json(&f, &[]);
    let stem = f.parquet.display().to_string().trim_end_matches(".parquet").to_string();
    let runs = rows(Path::new(&format!("{stem}.runs.parquet")));
    let figures = rows(&f.parquet);
    let settings = rows(Path::new(&format!("{stem}.settings.parquet")));
    for r in runs.iter().chain(&figures).chain(&settings) {
        assert_eq!(r["schema_version"], Field::Int(2));
    }
    let run_of: BTreeMap<String, &BTreeMap<String, Field>> =
        runs.iter().map(|r| (text(&r["run_uuid"]).unwrap(), r)).collect();
    assert_eq!(run_of.len(), runs.len(), "one row per run");
    let mut fleet_figures: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for x in figures.iter().filter(|x| x["kind"] == Field::Str("fleet".into())) {
        let Field::Double(v) = x["value"] else { panic!("{x:?}") };
        fleet_figures
            .entry(text(&x["run_uuid"]).unwrap())
            .or_default()
            .insert(text(&x["metric_id"]).unwrap(), v);
    }
    let mut setting_of: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for s in &settings {
        setting_of
            .entry(text(&s["run_uuid"]).unwrap())
            .or_default()
            .insert(text(&s["setting"]).unwrap(), text(&s["value"]).unwrap());
    }
    let (mut hosts, mut values, mut drifting) = (0, 0, 0);
    for g in j["groups"].as_array().unwrap() {
        let members: Vec<&Value> = g["hosts"].as_array().unwrap().iter().collect();
        for h in &members {
            let uuid = h["run_uuid"].as_str().unwrap();
            let r = run_of[uuid];
            assert_eq!(text(&r["model"]).as_deref(), g["model"].as_str(), "{uuid}");
            assert_eq!(r["run_id"], Field::Long(h["run"].as_i64().unwrap()), "{uuid}");
            assert_eq!(r["status"], Field::Str("complete".into()));
            if h["also_named"] == Value::Array(vec![]) {
                assert_eq!(text(&r["host"]).as_deref(), h["host"].as_str(), "{uuid}");
            }
            let want: BTreeMap<String, f64> = h["metrics"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, m)| (k.clone(), fleet_sql::num(&m["value"]).unwrap()))
                .collect();
            assert_eq!(fleet_figures.get(uuid).cloned().unwrap_or_default(), want, "{uuid}");
            let Field::Long(n) = r["settings"] else { panic!("{r:?}") };
            assert_eq!(n as usize, setting_of.get(uuid).map_or(0, |s| s.len()), "{uuid}");
            hosts += 1;
            values += want.len();
        }
        for d in g["drift_settings"].as_array().unwrap() {
            let name = d["setting"].as_str().unwrap();
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            for h in &members {
                let v = setting_of
                    .get(h["run_uuid"].as_str().unwrap())
                    .and_then(|s| s.get(name).cloned())
                    .unwrap_or_else(|| "-".into());
                *counts.entry(v).or_default() += 1;
            }
            let want: BTreeMap<String, u64> = d["values"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            assert_eq!(counts, want, "{} {name}", g["model"]);
            drifting += 1;
        }
    }
    assert!(hosts > 900 && values > 6000 && drifting > 0, "{hosts} {values} {drifting}");
    let mut incomplete = 0;
    for i in j["incomplete"].as_array().unwrap() {
        let r = run_of[i["run_uuid"].as_str().unwrap()];
        assert_eq!(text(&r["status"]).as_deref(), i["status"].as_str());
        let reason = text(&r["message"]).or(text(&r["status"]));
        assert_eq!(reason.as_deref(), i["reason"].as_str());
        incomplete += 1;
    }
    assert!(incomplete > 0);
    // Exec runs are marked: every run passed over as an exec run says so.
    for g in j["groups"].as_array().unwrap() {
        for h in g["hosts"].as_array().unwrap() {
            for p in h["passed_over"].as_array().unwrap() {
                let r = run_of[p["run_uuid"].as_str().unwrap()];
                let exec = p["why"].as_str().unwrap().starts_with("an exec run");
                assert_eq!(r["exec"], Field::Bool(exec), "{p}");
                assert!(!fleet_figures.contains_key(p["run_uuid"].as_str().unwrap()), "{p}");
            }
        }
    }
}
