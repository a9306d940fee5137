//! The small frictions a new user meets, each with the behaviour that
//! removes it: `report latest --compare latest~1` reads forward (the older
//! run is the baseline); `list` on a mistyped `--db` says the database is
//! missing (exit 1, as `show`); the plan's estimate says the load it
//! assumed; `report --format markdown` is accepted as `--table markdown`
//! is; a slip of a subcommand gets a suggestion at every level; every
//! error starts with one prefix; `topo` says once that the nodes hold less
//! memory than the system.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

#[path = "support/tree.rs"]
mod tree;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn imported() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    np(&db).arg("import").arg(fixture()).assert().success();
    (dir, db)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The fixture's runs 1 (`baseline`, started 2 Nov) and 2 (`THP always,
/// performance governor`, 3 Nov): whichever is named first, the older run
/// is the baseline, so the change reads from the older run to the newer.
#[test]
fn report_compare_reads_forward_from_the_older_run() {
    let (_d, db) = imported();
    for args in [["2", "--compare", "1"], ["1", "--compare", "2"]] {
        let out = np(&db).arg("report").args(args).arg("--brief").output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let brief = text(&out.stdout);
        assert!(
            brief.contains("**Comparison** against baseline (baseline)"),
            "report {args:?}: the older run is not the baseline:\n{brief}"
        );
    }
}

/// A `--db` that names no file is a mistyped path: said, exit 1, as `show`
/// says it; nothing is created. The default database not there yet (a new
/// user's first `list`) lists no runs.
#[test]
fn list_on_a_missing_database_says_it_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("a/mistyped/path.db");
    for cmd in ["list", "show"] {
        let out = np(&missing).arg(cmd).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{cmd}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.contains("no results database here yet"), "{cmd}: {err}");
    }
    assert!(!missing.exists() && !missing.parent().unwrap().exists(), "nothing created");
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env_remove("NUMAPROBE_DB")
        .env("XDG_DATA_HOME", dir.path().join("fresh"))
        .arg("list")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("No runs in"), "{}", text(&out.stdout));
}

/// The plan's estimate on an idle machine and at the load the machine has
/// now, and the load average it read: never less than the idle estimate.
#[test]
fn the_plan_says_the_load_its_estimate_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let out = np(&dir.path().join("r.db"))
        .args(["--json", "run", "--quick", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let load = v["load_average"].as_f64().expect("this Linux has /proc/loadavg");
    let (idle, at_load) =
        (v["estimate_s"].as_f64().unwrap(), v["estimate_at_load_s"].as_f64().unwrap());
    assert!(load >= 0.0 && at_load >= idle, "{v}");
    let plan = Command::cargo_bin("numaprobe")
        .unwrap()
        .env_remove("NUMAPROBE_DB")
        .args(["--db"])
        .arg(dir.path().join("r.db"))
        .args(["run", "--quick", "--dry-run"])
        .output()
        .unwrap();
    let plan = text(&plan.stdout);
    let line =
        plan.lines().find(|l| l.starts_with("Estimated time:")).unwrap_or_else(|| panic!("{plan}"));
    assert!(line.contains("load average"), "the estimate does not say the load: {line}");
    assert!(plan.contains("stopping once latency settles past it"), "{plan}");
}

/// `--format markdown` is what `--table markdown` calls Markdown.
#[test]
fn report_format_markdown_is_accepted() {
    let (_d, db) = imported();
    let md = np(&db).args(["report", "1", "--format", "markdown"]).output().unwrap();
    assert!(md.status.success(), "{}", text(&md.stderr));
    let short = np(&db).args(["report", "1", "--format", "md"]).output().unwrap();
    assert_eq!(md.stdout, short.stdout);
}

/// A slip of a subcommand (a swapped, missing or extra letter) gets a
/// suggestion, at the top level and under `advise`; every usage error
/// starts with the prefix every other error has.
#[test]
fn slips_get_a_suggestion_and_every_error_one_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for (args, want) in [
        (vec!["rnu"], "'run'"),
        (vec!["comapre"], "'compare'"),
        (vec!["shwo"], "'show'"),
        (vec!["advise", "interlave"], "'interleave'"),
    ] {
        let out = np(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("tip:") && err.contains(want), "{args:?}: no suggestion: {err}");
        assert!(err.starts_with("numaprobe: error:"), "{args:?}: {err}");
    }
    for args in [
        vec!["report", "--format", "fancy"],
        vec!["bw", "--threads", "0"],
        vec!["list", "--no-such-flag"],
        vec!["show", "no-such-run"],
    ] {
        let out = np(&db).args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = text(&out.stderr);
        let first = err.lines().find(|l| !l.starts_with("numaprobe: warning:")).unwrap_or_default();
        assert!(first.starts_with("numaprobe: error:"), "{args:?}: {err}");
    }
}

/// A machine whose nodes hold less than `/proc/meminfo` counts (a VM's
/// memory plugged in as used): `topo` says it once, in its text, not again
/// on stderr.
#[test]
fn topo_says_the_memory_shortfall_once() {
    let d = tempfile::tempdir().unwrap();
    tree::copy(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data/snc2-cxl"),
        d.path(),
    );
    std::fs::write(
        d.path().join("proc/meminfo"),
        "MemTotal:       10485760000 kB\nMemFree:        10000000000 kB\n",
    )
    .unwrap();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .arg("topo")
        .arg("--root")
        .arg(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(all.matches("of the system's").count(), 1, "said more than once:\n{all}");
}
