//! The monitoring files of deploy/ against what numaprobe really writes:
//! every metric and label name the Grafana dashboard
//! (deploy/grafana/numaprobe-fleet.json) and the Prometheus rules
//! (deploy/prometheus/numaprobe.rules.yml) use exists in the OpenMetrics
//! output of `numaprobe export --format openmetrics` (of runs imported
//! from the synthetic fixture: every bandwidth and latency result kind of
//! a default run) or is recorded by the rules themselves. promtool checks
//! and tests the rules for real in the fleet suite (fleet_real.rs).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

/// The families and label names of the exporter's output for the
/// fixture's runs.
fn exported() -> (BTreeSet<String>, BTreeSet<String>) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let fixture = repo().join("crates/report/tests/fixtures/synthetic-export.json");
    // As runs record them now: with the machine's identity.
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&fixture).unwrap()).unwrap();
    for run in doc["runs"].as_array_mut().unwrap() {
        run["machine"]["info"]["machine_id"] = "3f9c0a1e5b7d2c44".into();
    }
    let fixture = dir.path().join("export.json");
    std::fs::write(&fixture, doc.to_string()).unwrap();
    np(&db).arg("import").arg(&fixture).assert().success();
    let out = np(&db).args(["export", "--format", "openmetrics", "latest"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let (mut families, mut labels) = (BTreeSet::new(), BTreeSet::new());
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (name, rest) = line.split_once('{').expect("every series has labels");
        families.insert(name.to_string());
        let body = &rest[..rest.rfind('}').unwrap()];
        // name="value" pairs; values are escaped, so split at `",`.
        for pair in body.split("\",") {
            labels.insert(pair.split_once("=\"").unwrap().0.to_string());
        }
    }
    (families, labels)
}

/// The names the rules file records.
fn recorded(rules: &str) -> BTreeSet<String> {
    rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- record: "))
        .map(|n| n.trim().to_string())
        .collect()
}

fn is_name(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// Metric names (`numaprobe...`) an expression uses.
fn metric_names(expr: &str) -> BTreeSet<String> {
    expr.split(|c: char| !is_name(c))
        .filter(|t| t.starts_with("numaprobe"))
        .map(str::to_string)
        .collect()
}

/// Label names an expression uses: in matchers `{a="x", b=~"y"}`, in
/// `by (...)`, `on (...)`, `group_left (...)`, and in legends `{{a}}`.
fn label_names(expr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = expr;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        let Some(end) = after.find('}') else { break };
        let inner = after[..end].trim_matches('{');
        for m in inner.split(',') {
            let name: String = m.trim().chars().take_while(|c| is_name(*c)).collect();
            if !name.is_empty() && !name.starts_with('$') {
                out.insert(name);
            }
        }
        rest = &after[end + 1..];
    }
    for kw in ["by", "on", "group_left", "without", "ignoring"] {
        let mut rest = expr;
        while let Some(i) = rest.find(kw) {
            let before_ok = i == 0 || !is_name(rest[..i].chars().last().unwrap());
            let after = rest[i + kw.len()..].trim_start();
            if before_ok && after.starts_with('(') {
                let list = &after[1..after.find(')').unwrap()];
                out.extend(list.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()));
            }
            rest = &rest[i + kw.len()..];
        }
    }
    out
}

/// Every string under `key` anywhere in the document.
fn strings_at(v: &Value, key: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match x {
                    Value::String(s) if k == key => out.push(s.clone()),
                    _ => strings_at(x, key, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| strings_at(x, key, out)),
        _ => {}
    }
}

/// Labels numaprobe does not write but Prometheus adds (scrape target,
/// alerts) and that the dashboard may use.
const PROMETHEUS_LABELS: [&str; 4] = ["instance", "job", "alertname", "alertstate"];

#[test]
fn the_dashboard_uses_only_what_the_exporter_and_the_rules_write() {
    let (families, labels) = exported();
    // The families the docs promise are there.
    for f in [
        "numaprobe_bandwidth_bytes_per_second",
        "numaprobe_latency_seconds",
        "numaprobe_headline_bandwidth_bytes_per_second",
        "numaprobe_headline_latency_seconds",
        "numaprobe_run_timestamp_seconds",
        "numaprobe_run_info",
    ] {
        assert!(families.contains(f), "{f} not exported: {families:?}");
    }
    let rules =
        std::fs::read_to_string(repo().join("deploy/prometheus/numaprobe.rules.yml")).unwrap();
    let recorded = recorded(&rules);
    assert!(recorded.len() >= 10, "{recorded:?}");
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("deploy/grafana/numaprobe-fleet.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    assert_eq!(dash["uid"], "numaprobe-fleet");
    let mut exprs = Vec::new();
    strings_at(&dash["panels"], "expr", &mut exprs);
    strings_at(&dash["templating"], "definition", &mut exprs);
    let mut legends = Vec::new();
    strings_at(&dash["panels"], "legendFormat", &mut legends);
    assert!(exprs.len() >= 8, "{exprs:?}");
    let known_labels: BTreeSet<&str> =
        labels.iter().map(String::as_str).chain(PROMETHEUS_LABELS).collect();
    let mut used_metrics = BTreeSet::new();
    for e in &exprs {
        for m in metric_names(e) {
            assert!(
                families.contains(&m) || recorded.contains(&m),
                "the dashboard's {m} is neither exported nor recorded (in {e})"
            );
            used_metrics.insert(m);
        }
        for l in label_names(e) {
            assert!(known_labels.contains(l.as_str()), "label {l} is not written (in {e})");
        }
    }
    for l in &legends {
        for name in l.split("{{").skip(1).filter_map(|s| s.split_once("}}")).map(|(n, _)| n) {
            assert!(known_labels.contains(name.trim()), "legend label {name} (in {l})");
        }
    }
    // It shows the raw families as well as the rules' peer comparison.
    assert!(used_metrics.contains("numaprobe_run_info"));
    assert!(used_metrics.iter().any(|m| recorded.contains(m)));
    // Every $variable is defined.
    let defined: BTreeSet<&str> = dash["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let text = dash.to_string();
    for part in text.split('$').skip(1) {
        let name: String =
            part.trim_start_matches('{').chars().take_while(|c| is_name(*c)).collect();
        if name.is_empty() || name.starts_with("__") {
            continue;
        }
        assert!(defined.contains(name.as_str()), "${name} is not a dashboard variable");
    }
}

#[test]
fn the_rules_use_only_what_the_exporter_writes() {
    let (families, labels) = exported();
    let rules =
        std::fs::read_to_string(repo().join("deploy/prometheus/numaprobe.rules.yml")).unwrap();
    let recorded = recorded(&rules);
    let exprs: Vec<&str> =
        rules.split("expr:").skip(1).map(|s| s.split("labels:").next().unwrap()).collect();
    assert!(exprs.len() >= 14, "{}", exprs.len());
    for e in &exprs {
        let e = e.split("\n      - ").next().unwrap();
        for m in metric_names(e) {
            assert!(families.contains(&m) || recorded.contains(&m), "{m} (in {e})");
        }
        for l in label_names(e) {
            assert!(labels.contains(&l), "label {l} is not written (in {e})");
        }
    }
    // The peer median is per model: the model label is on run_info.
    assert!(labels.contains("model") && labels.contains("stream_kernel"));
}

/// The helpers above read what they should (so the checks can fail).
#[test]
fn the_name_scanners_find_names() {
    let e = r#"sum by (model, metric) (numaprobe_x{host=~"$host",a="b"}) * on (host) group_left (m) numaprobe:y:z"#;
    assert_eq!(metric_names(e).into_iter().collect::<Vec<_>>(), ["numaprobe:y:z", "numaprobe_x"]);
    assert_eq!(
        label_names(e).into_iter().collect::<Vec<_>>(),
        ["a", "host", "m", "metric", "model"]
    );
}
