//! The store commands end to end on the real binary: import, list, show,
//! export, compare, report, and the errors users meet (no database, a
//! foreign file, a run that does not exist).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

/// Three synthetic runs (two settings on a 2-socket Xeon, one interrupted
/// run on an EPYC), made by crates/report/tests/fixtures/make_synthetic.py.
fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn stdout_json(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A database holding the fixture's runs 1, 2, 3.
fn imported() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    np(&db)
        .arg("import")
        .arg(fixture())
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 3 run(s) as 1, 2, 3, skipped 0"));
    (dir, db)
}

/// The default database not there yet (nothing measured): no runs. A
/// database named with `--db` that is not there is a mistyped path
/// (`frictions_cli`).
#[test]
fn list_without_a_database_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let list = |json: bool| {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env_remove("NUMAPROBE_DB").env("XDG_DATA_HOME", dir.path());
        if json {
            c.arg("--json");
        }
        c.arg("list");
        c
    };
    list(false).assert().success().stdout(predicate::str::contains("No runs in"));
    let v = stdout_json(&mut list(true));
    assert_eq!(v, serde_json::json!([]));
    assert!(!dir.path().join("numaprobe").exists(), "list does not create the database");
}

#[test]
fn import_is_idempotent_and_list_shows_the_runs() {
    let (_dir, db) = imported();
    np(&db)
        .arg("import")
        .arg(fixture())
        .assert()
        .success()
        .stdout(predicate::str::contains("imported 0 run(s), skipped 3"));
    let v = stdout_json(np(&db).args(["list", "--json"]));
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["id"], 1);
    assert_eq!(runs[0]["label"], "baseline");
    assert_eq!(runs[0]["started"], "2026-11-02T11:40:00.000Z");
    assert_eq!(runs[0]["complete"], true);
    assert_eq!(runs[0]["result_count"], 97);
    assert_eq!(runs[2]["complete"], false);
    assert_eq!(runs[2]["status"], "incomplete");
    assert_eq!(
        runs[2]["machine"],
        "lab-epyc-1: AMD EPYC 7313 16-Core Processor, 1 package, 2 nodes, 128 GiB"
    );
    np(&db)
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::contains("THP always, performance governor"));
}

#[test]
fn import_json_output_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let text = std::fs::read_to_string(fixture()).unwrap();
    let v = stdout_json(np(&db).args(["import", "-", "--json"]).write_stdin(text));
    assert_eq!(v[0]["file"], "stdin");
    assert_eq!(v[0]["imported"].as_array().unwrap().len(), 3);
    assert_eq!(v[0]["imported"][1]["uuid"], "8e7d6c5b-4a39-4281-b7c6-d5e4f3a2b1c0");
}

/// A corrupt export and one from a newer numaprobe are skipped,
/// each with its named error, the good one is imported, the command exits
/// 1; importing again changes nothing (idempotent).
#[test]
fn bad_import_files_are_skipped_by_name_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"format": "something-else"}"#).unwrap();
    let cut = dir.path().join("cut.json");
    let text = std::fs::read_to_string(fixture()).unwrap();
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    let newer = dir.path().join("newer.json");
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["version"] = 99.into();
    std::fs::write(&newer, v.to_string()).unwrap();
    let out =
        np(&db).arg("import").arg(&bad).arg(fixture()).arg(&cut).arg(&newer).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("skipped (corrupt): ") && e.contains("bad.json: not a numaprobe export"),
        "{e}"
    );
    assert!(e.contains("cut.json: not a numaprobe export: invalid JSON"), "{e}");
    assert!(
        e.contains("skipped (newer_version): ")
            && e.contains("newer.json: export from a newer numaprobe (export version 99"),
        "{e}"
    );
    assert!(e.contains("3 of 4 file(s) skipped"), "{e}");
    let o = String::from_utf8_lossy(&out.stdout);
    assert!(o.contains("imported 3 run(s) as 1, 2, 3"), "{o}");
    let runs = stdout_json(np(&db).args(["list", "--json"]));
    assert_eq!(runs.as_array().unwrap().len(), 3);
    // JSON names each file's fate.
    let out = np(&db).args(["import", "--json"]).arg(fixture()).arg(&newer).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["imported"].as_array().unwrap().len(), 0, "idempotent: {v}");
    assert_eq!(v[0]["skipped"].as_array().unwrap().len(), 3);
    assert_eq!(v[1]["error"], "newer_version");
    assert!(v[1].get("imported").is_none(), "{v}");
}

#[test]
fn a_lone_bad_import_file_creates_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"format": "something-else"}"#).unwrap();
    np(&db)
        .arg("import")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("bad.json: not a numaprobe export"));
    assert!(!db.exists(), "nothing imported when the only file is bad");
}

/// A device (or a FIFO) is refused at once, naming it, and nothing is
/// imported: read as a stream, `import /dev/zero` grows without end.
#[test]
fn importing_a_device_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = np(&db).arg("import").arg("/dev/zero").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("/dev/zero") && e.contains("a character device"), "{e}");
    assert!(!db.exists(), "nothing imported");
}

#[test]
fn show_prints_the_summary_tables() {
    let (_dir, db) = imported();
    np(&db)
        .args(["show", "baseline"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Run 1 (baseline)"))
        .stdout(predicate::str::contains("20 bw, 69 lat, 4 audit, 4 exec"))
        .stdout(predicate::str::contains("remote, mean of node pairs"))
        .stdout(predicate::str::contains("143.3"));
    let v = stdout_json(np(&db).args(["show", "latest", "--json"]));
    assert_eq!(v["id"], 3);
    assert_eq!(v["message"], "interrupted (Ctrl-C)");
    assert_eq!(v["results"].as_array().unwrap().len(), 4);
    assert_eq!(v["results"][0]["payload"]["best_gbs"], 71.8);
}

#[test]
fn unknown_runs_are_usage_errors() {
    let (_dir, db) = imported();
    np(&db)
        .args(["show", "42"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no run matches \"42\""));
    np(&db)
        .args(["show", "latest~x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("bad run reference"));
    np(&db)
        .args(["compare", "1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("at least two"));
    np(&db).args(["report", "1", "-o", "x.pdf"]).assert().code(2);
}

#[test]
fn export_json_round_trips_through_another_database() {
    let (dir, db) = imported();
    let out = dir.path().join("two.json");
    np(&db).args(["export", "1", "latest", "-o"]).arg(&out).assert().success();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["format"], "numaprobe-export");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
    let other = dir.path().join("other.db");
    np(&other).arg("import").arg(&out).assert().success();
    let v =
        stdout_json(np(&other).args(["show", "c4d5e6f7-0812-4a3b-8c4d-5e6f708192a3", "--json"]));
    assert_eq!(v["label"], "epyc NPS2");
    assert_eq!(v["status"], "incomplete");
}

#[test]
fn export_takes_group_references_like_compare() {
    let (_dir, db) = imported();
    // config:c0ffee00 selects runs 1 and 2; label:epyc NPS2 run 3; a run
    // named twice is exported once.
    let v = stdout_json(np(&db).args(["export", "config:c0ffee00", "label:epyc NPS2", "2"]));
    let ids: Vec<&str> =
        v["runs"].as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(ids, ["baseline", "THP always, performance governor", "epyc NPS2"]);
    let out = np(&db).args(["export", "label:baseline", "--format", "csv"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 1, "{text}");
    assert!(text.lines().skip(1).all(|l| l.starts_with("1,")), "{text}");
    // A group that selects nothing: one line, exit 2, nothing written.
    for (group, msg) in [
        ("label:nothing", "\"label:nothing\" selects no run"),
        ("config:ffff0000", "\"config:ffff0000\" selects no run"),
    ] {
        let out = np(&db).args(["export", "1", group]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{group}");
        assert!(out.stdout.is_empty(), "{group}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{group}: {err}");
        assert!(err.contains(msg), "{group}: {err}");
    }
}

#[test]
fn export_csv_has_a_line_per_result() {
    let (_dir, db) = imported();
    let out = np(&db).args(["export", "3", "--format", "csv"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 4);
    assert!(lines[0].starts_with("run_id,run_uuid,label,machine,seq,kind,mode,kernel,threads"));
    assert!(lines[1].starts_with("3,c4d5e6f7-0812-4a3b-8c4d-5e6f708192a3,epyc NPS2,"));
    assert!(lines[1].contains(",bw,local,triad,8,"));
}

#[test]
fn compare_gives_changes_and_verdicts() {
    let (_dir, db) = imported();
    let v = stdout_json(np(&db).args(["compare", "2", "3", "--baseline", "1", "--json"]));
    assert_eq!(v["baseline"], 0);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[0]["ref"], "1");
    assert_eq!(groups[0]["runs"], serde_json::json!([1]));
    assert_eq!(v["across_machines"], true);
    // The settings that differ come first; the machine is one of them.
    let diff = v["settings_diff"].as_array().unwrap();
    assert_eq!(diff[0]["setting"], "machine");
    assert_eq!(diff[0]["values"].as_array().unwrap().len(), 3);
    let lat =
        v["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "local_lat_ns").unwrap();
    assert_eq!(lat["unit"], "ns");
    assert_eq!(lat["higher_is_better"], false);
    assert_eq!(lat["groups"][0]["median"], 89.75);
    assert_eq!(lat["groups"][0]["n"], 1);
    // One run per side and no repeated runs to measure a noise floor from:
    // a change is never called better or worse, and the runs needed are said.
    for g in &lat["groups"].as_array().unwrap()[1..] {
        assert_eq!(g["verdict"], "undecided", "{g}");
        assert_eq!(g["runs_needed"], 3, "{g}");
        assert!(g["ci_low_pct"].is_null());
    }
    assert!(v["recommendations"].as_array().unwrap().iter().any(|r| r["profile"] == "database"));
    let out = np(&db)
        .args(["compare", "baseline", "THP always, performance governor"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("Settings that differ:"), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("governor ") && l.contains(" powersave ")),
        "{text}"
    );
    assert!(text.contains(" the same in every group (--verbose lists them)."), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains("85.4 (n=1)") && l.contains("-4.8%") && l.contains("undecided")),
        "{text}"
    );
    assert!(text.contains("Recommendations:"), "{text}");
}

#[test]
fn compare_refuses_bad_groups_with_one_line() {
    let (_dir, db) = imported();
    for (args, msg) in [
        (vec!["compare", "label:nothing", "1"], "\"label:nothing\" selects no run"),
        (vec!["compare", "1"], "at least two"),
        (vec!["compare", "1", "1"], "in two groups"),
        (vec!["compare", "1", "2", "--margin", "0"], "--margin"),
        (vec!["compare", "1", "2", "3", "1", "2", "3", "1", "2", "3"], "2 to 8 groups"),
    ] {
        let out = np(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    // Groups from different machines: allowed, with a warning.
    let out = np(&db).args(["compare", "1", "3"]).output().unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("warning: the groups come from 2 machines")
    );
    // A group mixing configurations: allowed, with a warning listing them.
    let v = stdout_json(np(&db).args(["compare", "config:c0ffee00", "3", "--json"]));
    assert_eq!(v["groups"][0]["runs"], serde_json::json!([1, 2]));
    let w = v["warnings"].as_array().unwrap();
    assert!(
        w.iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("group config:c0ffee00 mixes 2 configurations (c0ffee003f2b")),
        "{w:?}"
    );
}

/// Group references are read once, with the arguments: a form that can be
/// no group is refused on one line (exit 2) that names the argument and
/// the forms a group takes, and `--baseline` is matched to a group by
/// what it selects, not by its spelling.
#[test]
fn compare_reads_group_references_once_and_refuses_bad_ones() {
    let (_dir, db) = imported();
    for (args, arg) in [
        (vec!["compare", "config:ab", "1"], "<GROUP>"),
        (vec!["compare", "1", "label:"], "<GROUP>"),
        (vec!["compare", "1", "2", "--baseline", "latest~x"], "--baseline"),
    ] {
        let out = np(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(arg), "{args:?}: {err}");
        assert!(err.contains("`label:TEXT`, `config:HASH`"), "{args:?}: {err}");
    }
    // Refused before the store is opened: the same line without one.
    let none = db.with_file_name("none.db");
    let out = np(&none).args(["compare", "config:ab", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`label:TEXT`"));
    assert!(!none.exists());
    // `002` is run 2: the baseline is that group, not a third one.
    let v = stdout_json(np(&db).args(["compare", "1", "2", "--baseline", "002", "--json"]));
    assert_eq!(v["baseline"], 1, "{v}");
    assert_eq!(v["groups"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["groups"][1]["ref"], "2", "{v}");
}

#[test]
fn report_writes_markdown_and_html() {
    let (dir, db) = imported();
    np(&db)
        .args(["report", "1", "--compare", "2"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "# numaprobe comparison: baseline (baseline) vs THP always, performance governor\n",
        ))
        .stdout(predicate::str::contains("## Analysis and recommendations"));
    let html = dir.path().join("r.html");
    np(&db).args(["report", "1", "--compare", "2", "3", "-o"]).arg(&html).assert().success();
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.starts_with("<!DOCTYPE html>"));
    // the baseline run's 10 charts (with the remote/local views of both
    // matrices) and one per compared metric of the catalogue (21: six
    // headline metrics, the local bandwidth per package, the cross-package
    // bandwidth, the spread-memory latency, the remote penalty, the
    // latency a thread sees, five per-CPU figures, four exec policies'
    // program metric), the answer's forest plot of every change, and the
    // groups' sweep, loaded-latency and scaling curves overlaid
    assert_eq!(text.matches("<svg class=\"chart").count(), 35);
    np(&db)
        .args(["report", "3", "--format", "html"])
        .assert()
        .success()
        .stdout(predicate::str::contains("<svg class=\"chart heatmap\""));
}

#[test]
fn a_foreign_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("notes.db");
    std::fs::write(&db, "not a database at all").unwrap();
    np(&db)
        .arg("list")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("notes.db: not a numaprobe results database"));
    np(&db).arg("import").arg(fixture()).assert().code(1);
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "not a database at all");
}

#[test]
fn the_database_can_come_from_the_environment() {
    let (_dir, db) = imported();
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_DB", &db).args(["list", "--json"]);
    assert_eq!(stdout_json(&mut c).as_array().unwrap().len(), 3);
}

/// Without `HOME` or `XDG_DATA_HOME` (and no database given) there is no
/// default database: the one line says which flag gives one, exit 1.
#[test]
fn no_data_directory_names_the_flag_that_gives_one() {
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env_remove("HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("NUMAPROBE_DB")
        .arg("list")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    let want = "numaprobe: error: cannot find the data directory: neither XDG_DATA_HOME nor HOME \
                is set (use --db PATH)";
    assert!(err.lines().any(|l| l == want), "no line {want:?} in:\n{err}");
}
