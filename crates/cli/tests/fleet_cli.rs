//! `numaprobe fleet` end to end on the real binary: hosts' exports made from
//! the synthetic fixture's baseline run (one host's bandwidth scaled to 85%,
//! one host's THP changed), imported, then the fleet report in every
//! format and the `--json` contract of docs/fleet.md.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

/// Writes host `name`'s export (the fixture's baseline run, bandwidth
/// scaled by `bw`, latency by 1/`bw`, run number `n` for its UUID).
fn host_export(dir: &Path, n: u32, name: &str, bw: f64, cpu: Option<&str>, thp: &str) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let mut run = doc["runs"][0].clone();
    run["uuid"] = format!("16161616-0000-4000-8000-{n:012}").into();
    run["machine"]["fingerprint"] = format!("{n:016x}").into();
    run["machine"]["info"]["hostname"] = name.into();
    if let Some(c) = cpu {
        run["machine"]["info"]["cpu_model"] = c.into();
    }
    run["config"]["thp"] = thp.into();
    // A little spread so the MAD is not zero.
    let noise = 1.0 + (n % 5) as f64 * 0.002;
    for r in run["results"].as_array_mut().unwrap() {
        for (k, v) in r["payload"].as_object_mut().unwrap() {
            let f = if k.ends_with("_gbs") {
                bw * noise
            } else if k.ends_with("_ns") {
                noise / bw
            } else {
                continue;
            };
            if let Some(x) = v.as_f64() {
                *v = (x * f).into();
            }
        }
    }
    doc["runs"] = Value::Array(vec![run]);
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

/// Six hosts of one model (`slow-3` at 85%, `thp-5` with THP always) and
/// one of another model, imported.
fn fleet() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("fleet.db");
    let mut files = Vec::new();
    for n in 0..6u32 {
        let (name, bw, thp) = match n {
            3 => ("slow-3".to_string(), 0.85, "madvise"),
            5 => ("thp-5".to_string(), 1.0, "always"),
            _ => (format!("node-{n}"), 1.0, "madvise"),
        };
        files.push(host_export(dir.path(), n, &name, bw, None, thp));
    }
    files.push(host_export(dir.path(), 9, "epyc-9", 0.5, Some("AMD EPYC 7313"), "always"));
    np(&db).arg("import").args(&files).assert().success();
    (dir, db)
}

#[test]
fn the_slow_host_and_the_drifted_one_are_found() {
    let (_dir, db) = fleet();
    let out = np(&db).args(["fleet", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threshold_pct"], 5.0);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "two models are never peers: {v}");
    let epyc = groups.iter().find(|g| g["model"].as_str().unwrap().contains("EPYC")).unwrap();
    assert_eq!(epyc["peers_missing"], true);
    assert_eq!(epyc["hosts"][0]["outlier"], false, "a lone host is never flagged");
    let xeon = groups.iter().find(|g| g["model"].as_str().unwrap().contains("Xeon")).unwrap();
    let hosts = xeon["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 6);
    for h in hosts {
        // The contract's fields.
        assert!(h["host"].is_string() && h["run"].is_i64() && h["outlier"].is_boolean());
        assert!(h["flags"].is_array() && h["drift"].is_array());
        let name = h["host"].as_str().unwrap();
        assert_eq!(h["outlier"], name == "slow-3", "{name}: {h}");
        let drift: Vec<&str> =
            h["drift"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
        assert_eq!(drift, if name == "thp-5" { vec!["thp"] } else { vec![] }, "{name}");
    }
    let slow = hosts.iter().find(|h| h["host"] == "slow-3").unwrap();
    let local =
        slow["flags"].as_array().unwrap().iter().find(|f| f["metric"] == "local_bw_gbs").unwrap();
    let dev = local["deviation_pct"].as_f64().unwrap();
    assert!((-16.0..-14.0).contains(&dev), "{dev}");
}

#[test]
fn text_markdown_and_html_reports() {
    let (dir, db) = fleet();
    np(&db)
        .arg("fleet")
        .assert()
        .success()
        .stdout(predicate::str::contains("1 outlier host(s), 1 host(s) with configuration drift"))
        .stdout(predicate::str::contains("slow-3 !"))
        .stdout(predicate::str::contains("peers missing: 1 host(s) of this model"));
    let html = dir.path().join("fleet.html");
    np(&db).args(["fleet", "-o"]).arg(&html).assert().success();
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("<svg class=\"chart"), "a per-host chart");
    assert!(h.contains("slow-3") && h.contains("more than 5% worse"));
    np(&db)
        .args(["fleet", "--format", "md", "--threshold", "20"])
        .assert()
        .success()
        .stdout(predicate::str::contains("0 outlier host(s)"))
        .stdout(predicate::str::contains("| thp | madvise | thp-5 |"));
}

#[test]
fn bad_input_is_named() {
    let (_dir, db) = fleet();
    np(&db)
        .args(["fleet", "--threshold", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--threshold"));
    np(&db)
        .args(["fleet", "--label", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no complete run is labelled \"nope\""));
    let empty = tempfile::tempdir().unwrap();
    np(&empty.path().join("none.db"))
        .arg("fleet")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no results database here yet"));
}

/// Issue 16: the fleet database's runs as OpenMetrics, one series set per
/// host, ending with `# EOF`.
#[test]
fn export_openmetrics_of_several_hosts() {
    let (_dir, db) = fleet();
    let out = np(&db).args(["export", "--format", "openmetrics", "1", "4"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("# EOF\n"));
    for host in ["node-0", "slow-3"] {
        let local = format!(
            "numaprobe_headline_bandwidth_bytes_per_second{{metric=\"local\",host=\"{host}\""
        );
        assert!(text.contains(&local), "{local} missing:\n{text}");
    }
    assert_eq!(text.matches("# TYPE numaprobe_run_info gauge").count(), 1, "one family, two runs");
    assert_eq!(text.lines().filter(|l| l.starts_with("numaprobe_run_info{")).count(), 2);
}
