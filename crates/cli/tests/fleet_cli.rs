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
    let xeon_note = |v: &Value| {
        let groups = v["groups"].as_array().unwrap();
        groups.iter().find(|g| g["model"].as_str().unwrap().contains("Xeon")).unwrap()["note"]
            .clone()
    };
    let (_dir, db) = fleet();
    let out = np(&db).args(["fleet", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threshold_pct"], 5.0);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "two models are never peers: {v}");
    let epyc = groups.iter().find(|g| g["model"].as_str().unwrap().contains("EPYC")).unwrap();
    assert_eq!(epyc["peers_missing"], true);
    // The sentences the document carries, whole.
    assert_eq!(
        v["method"],
        "Each host's latest complete run holding the fleet's figures is compared with the median \
         of its peers (same model). A host is flagged on a metric when it is more than 5% worse \
         than the peer median (bandwidth below it, latency above it) and its robust z-score \
         |value - median| / (1.4826 x MAD) exceeds 3.5, so the spread of normal hosts flags \
         nobody and the outliers do not move the reference. Groups with fewer than 3 hosts flag \
         nothing (peers missing). Drift: a setting whose value differs from the one most of the \
         group's hosts hold."
    );
    assert_eq!(
        epyc["note"],
        "peers missing: 1 host(s) of this model; at least 3 are needed to tell an odd one out, \
         so nothing is flagged"
    );
    assert_eq!(xeon_note(&v), Value::Null);
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
        .stderr(predicate::str::contains("no run is labelled \"nope\""));
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

/// RFC 3339 UTC of now minus `ago_s` seconds.
fn ago(ago_s: u64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let t = now.as_secs() - ago_s;
    let (days, rem) = (t / 86_400, t % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.000Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Rewrites an export's run in place.
fn patch(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut doc["runs"][0]);
    std::fs::write(path, doc.to_string()).unwrap();
}

/// Issue 27: hosts are machines (two with one host name are two, one
/// renamed is one); every host shows its run's time and age; stale runs
/// are never healthy; a host whose latest run is incomplete is listed with
/// why instead of its older run; hosts the orchestrator could not measure
/// are listed with their error; one analysis writes every format.
#[test]
fn identity_freshness_and_hosts_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("fleet.db");
    let mut files = Vec::new();
    for n in 0..4u32 {
        let p = host_export(d, n, &format!("node-{n}"), 1.0, None, "madvise");
        patch(&p, |r| {
            r["started"] = ago(3600).into();
            r["machine"]["info"]["machine_id"] = format!("{n:016x}").into();
        });
        files.push(p);
    }
    // Two clones: one host name, two machines.
    for (n, id) in [(10u32, "c1"), (11, "c2")] {
        let p = host_export(d, n, &format!("clone-{n}"), 1.0, None, "madvise");
        patch(&p, |r| {
            r["started"] = ago(1800).into();
            r["machine"]["info"]["hostname"] = "clone".into();
            r["machine"]["info"]["machine_id"] = id.into();
        });
        files.push(p);
    }
    // node-1 renamed: its older run under another name is the same machine.
    let old = host_export(d, 20, "node-1-old", 1.0, None, "madvise");
    patch(&old, |r| {
        r["started"] = ago(7200).into();
        r["machine"]["info"]["machine_id"] = format!("{:016x}", 1).into();
    });
    files.push(old);
    // node-2's latest run is incomplete: listed, its complete run not used.
    let broken = host_export(d, 21, "node-2-latest", 1.0, None, "madvise");
    patch(&broken, |r| {
        r["machine"]["info"]["hostname"] = "node-2".into();
        r["started"] = ago(600).into();
        r["status"] = "incomplete".into();
        r["message"] = "interrupted (SIGTERM)".into();
        r["machine"]["info"]["machine_id"] = format!("{:016x}", 2).into();
    });
    files.push(broken);
    // stale-9: measured 30 days ago.
    let stale = host_export(d, 9, "stale-9", 1.0, None, "madvise");
    patch(&stale, |r| r["started"] = ago(30 * 86_400).into());
    files.push(stale);
    np(&db).arg("import").args(&files).assert().success();
    let unmeasured = d.join("unmeasured.tsv");
    std::fs::write(
        &unmeasured,
        "# from the gather step\nnode-3\ttimed out after 600 s: waiting for the measuring lock\nghost\tunreachable: ssh: connection refused\n",
    )
    .unwrap();
    let (json, md, txt) = (d.join("f.json"), d.join("f.md"), d.join("f.txt"));
    np(&db)
        .args(["--quiet", "fleet", "--unmeasured"])
        .arg(&unmeasured)
        .arg("-o")
        .arg(&json)
        .arg("-o")
        .arg(&md)
        .arg("-o")
        .arg(&txt)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["max_age_s"], 691_200, "the documented default, 8 d");
    let hosts: Vec<&Value> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hosts"].as_array().unwrap())
        .collect();
    let names: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    // node-2 (incomplete) and node-3 (not measured) are not compared.
    assert_eq!(names, ["clone", "clone", "node-0", "node-1", "stale-9"], "{v}");
    assert_eq!(v["hosts"], 5);
    for h in &hosts {
        assert!(h["started"].is_string() && h["age_s"].is_f64(), "{h}");
        let stale = h["host"] == "stale-9";
        assert_eq!(h["stale"], stale, "{h}");
        assert_eq!(h["healthy"], !stale, "{h}");
    }
    assert_eq!(v["healthy"], 4);
    assert_eq!(v["stale"], 1);
    let clones: Vec<&&Value> = hosts.iter().filter(|h| h["host"] == "clone").collect();
    assert!(clones.iter().all(|h| h["duplicate_hostname"] == true));
    assert_ne!(clones[0]["machine_id"], clones[1]["machine_id"]);
    let warned =
        |w: &str| v["warnings"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains(w));
    assert!(warned("host name clone is used by 2 machines"), "{}", v["warnings"]);
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "node-1 was also named node-1-old: one machine (same identity), shown by its latest name",
            "host name clone is used by 2 machines (machine ids c1, c2): each is listed on its own"
        ])
    );
    assert!(warned("node-1 was also named node-1-old"), "{}", v["warnings"]);
    let node1 = hosts.iter().find(|h| h["host"] == "node-1").unwrap();
    assert_eq!(node1["also_named"], serde_json::json!(["node-1-old"]));
    let inc = &v["incomplete"][0];
    assert_eq!(
        (inc["host"].as_str(), inc["status"].as_str()),
        (Some("node-2"), Some("incomplete"))
    );
    assert_eq!(inc["reason"], "interrupted (SIGTERM)");
    assert!(inc["last_complete"]["run"].is_i64(), "{inc}");
    let un: Vec<(&str, &str, bool)> = v["unmeasured"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (u["host"].as_str().unwrap(), u["error"].as_str().unwrap(), u["last_run"].is_object())
        })
        .collect();
    assert_eq!(
        un,
        [
            ("node-3", "timed out after 600 s: waiting for the measuring lock", true),
            ("ghost", "unreachable: ssh: connection refused", false),
        ]
    );
    for g in v["groups"].as_array().unwrap() {
        assert!(g.as_object().unwrap().contains_key("note"), "note is always there: {g}");
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("Not measured: 2 host(s)") && md.contains("| Taken (age) |"), "{md}");
    assert!(md.contains("node-1 (was node-1-old)"), "{md}");
    let txt = std::fs::read_to_string(&txt).unwrap();
    assert!(txt.contains("4 healthy") && txt.contains("1 stale (run older than 8.0 d)"), "{txt}");
    assert!(txt.contains("(30.0 d ago) stale"), "{txt}");
    // A longer maximum age: nothing stale.
    let out = np(&db).args(["--json", "fleet", "--max-age", "60d"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["stale"].as_u64(), v["healthy"].as_u64()), (Some(0), Some(6)), "{v}");
    // A clone not measured, without its machine id: which one is not
    // known, said whole.
    let ambiguous = d.join("ambiguous.tsv");
    std::fs::write(&ambiguous, "clone\tunreachable\n").unwrap();
    let out = np(&db).args(["--json", "fleet", "--unmeasured"]).arg(&ambiguous).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["warnings"],
        serde_json::json!([
            "clone was not measured (unreachable), but 2 machines here are named clone: which one \
             is not known (the orchestrator gave no machine id), so the runs of each are still \
             compared",
            "node-1 was also named node-1-old: one machine (same identity), shown by its latest name",
            "host name clone is used by 2 machines (machine ids c1, c2): each is listed on its own"
        ])
    );
    // Bad input: exit 2, named.
    np(&db)
        .args(["fleet", "--max-age", "7"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-age").and(predicate::str::contains("no unit")));
    np(&db)
        .args(["fleet", "--unmeasured"])
        .arg(d.join("nope.tsv"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope.tsv"));
}

/// Every host of a round failed: the report lists them all, from no
/// database at all.
#[test]
fn a_round_with_no_host_measured_still_has_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("unmeasured.tsv");
    std::fs::write(&list, "a\tunreachable\nb\tnumaprobe run exit status 2\n").unwrap();
    let out = np(&dir.path().join("none.db"))
        .args(["--json", "fleet", "--unmeasured"])
        .arg(&list)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hosts"], 0);
    assert_eq!(v["unmeasured"].as_array().unwrap().len(), 2);
}

/// Writes host `name`'s export of an `exec` run (the fixture's run holding
/// its `exec` results only: none of the fleet's figures), started at
/// `started`, ending with `status`.
fn exec_export(dir: &Path, n: u32, name: &str, started: &str, status: &str) -> PathBuf {
    let p = host_export(dir, n, &format!("{name}-exec-{n}"), 1.0, None, "madvise");
    patch(&p, |r| {
        r["machine"]["info"]["hostname"] = name.into();
        r["machine"]["fingerprint"] = format!("{:016x}", fingerprint_of(name)).into();
        r["started"] = started.into();
        r["status"] = status.into();
        r["command_line"] = "numaprobe exec -- ./app".into();
        let results = r["results"].as_array_mut().unwrap();
        results.retain(|x| x["kind"] == "exec");
        assert!(!results.is_empty(), "the fixture's run has exec results");
    });
    p
}

/// The machine fingerprint `fleet()` gives host `name`.
fn fingerprint_of(name: &str) -> u32 {
    match name {
        "slow-3" => 3,
        "thp-5" => 5,
        "epyc-9" => 9,
        other => other.trim_start_matches("node-").parse().unwrap(),
    }
}

/// An `exec` run newer than a host's measurement (complete or failed) does
/// not hide it: the measurement is compared, the run used named and the
/// newer run passed over with why; a host with nothing but an exec run is
/// left out with why.
#[test]
fn an_exec_run_does_not_hide_the_last_measurement() {
    let (dir, db) = fleet();
    let d = dir.path();
    let files = [
        exec_export(d, 30, "slow-3", "2026-11-03T00:00:00.000Z", "complete"),
        exec_export(d, 31, "node-0", "2026-11-03T00:00:00.000Z", "failed"),
        exec_export(d, 32, "node-7", "2026-11-03T00:00:00.000Z", "complete"),
    ];
    np(&db).arg("import").args(&files).assert().success();
    let out = np(&db).args(["fleet", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let xeon = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["model"].as_str().unwrap().contains("Xeon"))
        .unwrap();
    let host = |name: &str| xeon["hosts"].as_array().unwrap().iter().find(|h| h["host"] == name);
    let slow = host("slow-3").expect("slow-3 compared");
    assert_eq!(slow["outlier"], true, "its measurement is compared: {slow}");
    assert_eq!(slow["run_uuid"], "16161616-0000-4000-8000-000000000003");
    assert_eq!(slow["passed_over"][0]["run_uuid"], "16161616-0000-4000-8000-000000000030");
    assert_eq!(slow["passed_over"][0]["why"], "an exec run: none of the fleet's figures");
    let node0 = host("node-0").expect("node-0 compared");
    assert_eq!(node0["passed_over"][0]["status"], "failed");
    assert!(
        v["incomplete"].as_array().unwrap().is_empty(),
        "a failed exec run is no failed measurement: {v}"
    );
    assert_eq!(v["skipped"][0]["host"], "node-7");
    assert_eq!(
        v["skipped"],
        serde_json::json!([{
            "host": "node-7",
            "reason": "no run holds the fleet's figures (its latest: an exec run: none of the \
                       fleet's figures)"
        }])
    );
    assert!(v["skipped"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("no run holds the fleet's figures"));
    let text = np(&db).arg("fleet").output().unwrap().stdout;
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("2 host(s) compared on their latest run holding the fleet's figures"),
        "{text}"
    );
    assert!(text.contains("an exec run: none of the fleet's figures; passed over"), "{text}");
    // The HTML charts every headline metric by its name.
    let html = d.join("fleet.html");
    np(&db).args(["fleet", "-o"]).arg(&html).assert().success();
    let h = std::fs::read_to_string(&html).unwrap();
    for name in [
        "Local bandwidth (GB/s, higher is better) per host",
        "Local latency (ns, lower is better) per host",
        "Remote latency (ns, lower is better) per host",
    ] {
        assert!(h.contains(name), "{name}");
    }
    let medians = xeon["medians"].as_array().unwrap();
    assert_eq!(
        h.matches("<svg class=\"chart").count(),
        medians.len(),
        "one chart per headline metric of the Xeon group (the EPYC one has one host)"
    );
    for m in medians {
        assert!(!h.contains(m["metric"].as_str().unwrap()), "no raw id in the HTML: {m}");
    }
}

/// Issue 35: the OpenMetrics export of a run without figures (an exec
/// run) warns that only its run_info is written and names the latest run
/// of the same machine that has figures.
#[test]
fn openmetrics_of_a_run_without_figures_points_to_one_with_them() {
    let (dir, db) = fleet();
    let f = exec_export(dir.path(), 30, "slow-3", "2026-11-03T00:00:00.000Z", "complete");
    np(&db).arg("import").arg(&f).assert().success();
    let list: Value =
        serde_json::from_slice(&np(&db).args(["list", "--json"]).output().unwrap().stdout).unwrap();
    let id_of = |uuid_end: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["uuid"].as_str().unwrap().ends_with(uuid_end))
            .map(|r| r["id"].as_i64().unwrap())
            .unwrap()
    };
    let (exec, measured) = (id_of("000000000030"), id_of("000000000003"));
    let out =
        np(&db).args(["export", "--format", "openmetrics"]).arg(exec.to_string()).output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("warning: run {exec} ("))
            && err.contains("holds no bandwidth or latency figure"),
        "{err}"
    );
    assert!(
        err.contains(&format!("the latest run of this machine with figures is {measured} (`numaprobe export --format openmetrics {measured}`)")),
        "{err}"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().filter(|l| !l.starts_with('#')).count(),
        2,
        "run_info and its time: {text}"
    );
    // A run with figures: no warning.
    let out = np(&db)
        .args(["export", "--format", "openmetrics"])
        .arg(measured.to_string())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
}

/// Issue 38 (minor): an `--unmeasured` line without its tab and a
/// `--max-age` with an unknown unit are refused (exit 2), each named.
#[test]
fn unmeasured_lines_need_their_tab_and_units_are_named() {
    let (dir, db) = fleet();
    let tsv = dir.path().join("un.tsv");
    std::fs::write(&tsv, "# hosts\nnode-1 timed out after 600 s\n").unwrap();
    np(&db)
        .args(["fleet", "--unmeasured"])
        .arg(&tsv)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("line 2: expected HOST<TAB>ERROR"));
    // Each fault of a line, the whole error line.
    for (i, (text, said)) in [
        (
            "# hosts\nnode-1 timed out\n",
            "line 2: expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (no tab): \"node-1 timed out\"",
        ),
        (
            "a\tb\tc\td\n",
            "line 1: expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (more than 3 fields): \"a\\tb\\tc\\td\"",
        ),
        ("\tno host\n", "line 1: no host name before the tab: \"\\tno host\""),
        ("a\tb\tid x\n", "line 1: the machine id has a space: \"a\\tb\\tid x\""),
    ]
    .into_iter()
    .enumerate()
    {
        let tsv = dir.path().join(format!("bad-{i}.tsv"));
        std::fs::write(&tsv, text).unwrap();
        let out = np(&db).args(["fleet", "--unmeasured"]).arg(&tsv).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("numaprobe: error: --unmeasured {}: {said}\n", tsv.display())
        );
    }
    np(&db).args(["fleet", "--max-age", "2w"]).assert().code(2).stderr(
        predicate::str::contains("unknown unit 'w'").and(predicate::str::contains("no unit").not()),
    );
}

/// JSON text with `// comments` (outside strings) removed.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let (mut in_str, mut esc, mut cut) = (false, false, line.len());
        let b = line.as_bytes();
        for i in 0..b.len() {
            match b[i] {
                _ if esc => esc = false,
                b'\\' if in_str => esc = true,
                b'"' => in_str = !in_str,
                b'/' if !in_str && b.get(i + 1) == Some(&b'/') => {
                    cut = i;
                    break;
                }
                _ => {}
            }
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// Fields the contract shows with a value that may be null.
const NULLABLE: [&str; 10] = [
    "declared_order_disagrees",
    "label",
    "note",
    "machine_id",
    "machine_id_source",
    "last_run",
    "last_complete",
    "age_s",
    "majority",
    "deviation_pct",
];

/// Checks `real` against the documented example `doc` at `path`: the same
/// keys in every object, the same JSON types (null where [`NULLABLE`]),
/// every element of an array like the example's first; maps keyed by data
/// (`metrics`, `values`) entry by entry. Records each array path checked.
fn conforms(doc: &Value, real: &Value, path: &str, seen: &mut Vec<String>, bad: &mut Vec<String>) {
    let key = path.rsplit(['.', '[']).next().unwrap_or("");
    match (doc, real) {
        (_, Value::Null) if NULLABLE.contains(&key) => {}
        (Value::Null, _) if NULLABLE.contains(&key) => {}
        (Value::Object(d), Value::Object(r)) if key == "metrics" || key == "values" => {
            let example = d.values().next().unwrap();
            for (k, x) in r {
                conforms(example, x, &format!("{path}.{k}"), seen, bad);
            }
        }
        (Value::Object(d), Value::Object(r)) => {
            let dk: Vec<&String> = d.keys().collect();
            let rk: Vec<&String> = r.keys().collect();
            if dk != rk {
                bad.push(format!("{path}: documented keys {dk:?}, written {rk:?}"));
            }
            for (k, x) in d {
                if let Some(y) = r.get(k) {
                    conforms(x, y, &format!("{path}.{k}"), seen, bad);
                }
            }
        }
        (Value::Array(d), Value::Array(r)) => {
            if let Some(example) = d.first() {
                for y in r {
                    conforms(example, y, &format!("{path}[]"), seen, bad);
                }
                if !r.is_empty() {
                    seen.push(path.to_string());
                }
            }
        }
        (Value::String(_), Value::String(_))
        | (Value::Number(_), Value::Number(_))
        | (Value::Bool(_), Value::Bool(_)) => {}
        (d, r) => bad.push(format!("{path}: documented {d}, written {r}")),
    }
}

/// Every array path of the documented example with an element.
fn array_paths(doc: &Value, path: &str, out: &mut Vec<String>) {
    let key = path.rsplit(['.', '[']).next().unwrap_or("");
    match doc {
        Value::Object(m) if key != "metrics" && key != "values" => {
            for (k, x) in m {
                array_paths(x, &format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            out.push(path.to_string());
            array_paths(&a[0], &format!("{path}[]"), out);
        }
        _ => {}
    }
}

/// `fleet --json` is exactly what docs/fleet.md shows: the example there,
/// parsed, has the same fields of the same types as the output of a fleet
/// that fills every part of it (clones, a renamed machine, a slow host,
/// drift, an incomplete latest run, hosts not measured, an exec run passed
/// over, a host left out).
#[test]
fn fleet_json_follows_its_documented_contract() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/fleet.md"))
            .unwrap();
    let at = docs.find("### `fleet --json` contract").expect("the contract's section");
    let block = &docs[at..];
    let start = block.find("```json\n").unwrap() + "```json\n".len();
    let end = start + block[start..].find("```").unwrap();
    let doc: Value = serde_json::from_str(&strip_comments(&block[start..end]))
        .unwrap_or_else(|e| panic!("the documented example is JSON once its comments go: {e}"));

    let (dir, db) = fleet();
    let d = dir.path();
    let mut files = Vec::new();
    for (n, id) in [(40u32, "c1"), (41, "c2")] {
        let p = host_export(d, n, &format!("clone-{n}"), 1.0, None, "madvise");
        patch(&p, |r| {
            r["machine"]["info"]["hostname"] = "clone".into();
            r["machine"]["info"]["machine_id"] = id.into();
            r["machine"]["info"]["machine_id_source"] = "machine_id".into();
        });
        files.push(p);
    }
    let renamed = host_export(d, 42, "clone-old", 1.0, None, "madvise");
    patch(&renamed, |r| {
        r["started"] = "2026-11-01T00:00:00.000Z".into();
        r["machine"]["info"]["machine_id"] = "c1".into();
        r["machine"]["info"]["machine_id_source"] = "machine_id".into();
    });
    files.push(renamed);
    let broken = host_export(d, 43, "node-1-broken", 1.0, None, "madvise");
    patch(&broken, |r| {
        r["machine"]["info"]["hostname"] = "node-1".into();
        r["machine"]["fingerprint"] = format!("{:016x}", 1).into();
        r["started"] = "2026-11-04T00:00:00.000Z".into();
        r["status"] = "incomplete".into();
        r["message"] = "interrupted (SIGTERM)".into();
    });
    files.push(broken);
    files.push(exec_export(d, 44, "slow-3", "2026-11-03T00:00:00.000Z", "complete"));
    files.push(exec_export(d, 45, "node-8", "2026-11-03T00:00:00.000Z", "complete"));
    np(&db).arg("import").args(&files).assert().success();
    let unmeasured = d.join("unmeasured.tsv");
    std::fs::write(&unmeasured, "node-2\ttimed out after 600 s\nghost\tunreachable\n").unwrap();
    let out = np(&db)
        .args(["--json", "fleet", "--group-by", "label", "--unmeasured"])
        .arg(&unmeasured)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let real: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(real["schema_version"], doc["schema_version"]);
    let (mut seen, mut bad) = (Vec::new(), Vec::new());
    conforms(&doc, &real, "", &mut seen, &mut bad);
    bad.dedup();
    assert!(bad.is_empty(), "docs/fleet.md and fleet --json differ:\n{}\n{real:#}", bad.join("\n"));
    let mut wanted = Vec::new();
    array_paths(&doc, "", &mut wanted);
    for p in &wanted {
        assert!(seen.contains(p), "the fleet fills {p} (else its shape goes unchecked): {real:#}");
    }
}
