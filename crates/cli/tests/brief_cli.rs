//! `numaprobe report --brief`: the short Markdown for tickets, on the
//! synthetic SNC2+CXL store (three runs under different settings and a
//! single-node machine).

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/snc2-cxl-export.json")
}

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    np(&db).arg("import").arg(fixture()).assert().success();
    (dir, db)
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn brief(db: &Path, args: &[&str]) -> String {
    let out = np(db).arg("report").args(args).arg("--brief").assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn brief_of_a_comparison_names_the_settings_that_differ_and_the_verdicts() {
    let (_dir, db) = store();
    let b = brief(&db, &["1", "--compare", "2", "3"]);
    assert!(b.lines().count() <= 60, "{} lines:\n{b}", b.lines().count());
    assert!(b.starts_with("### numaprobe brief: SNC2 baseline\n"));
    for want in [
        "- **Memory:** DDR5-4800, 16 of 32 slots (16 of 16 channels), 32 GiB modules, 768 GiB in all; theoretical peak 614.4 GB/s",
        "- **NUMA mode:** SNC2: ",
        // figures rounded to their noise, the tables' spread beside them
        "| Global bandwidth | 462 GB/s | 1.8% | 1 result(s), triad |",
        // and which measurement each figure took
        "| Local latency | 98.1 ns | up to 1.5% | 4 result(s), from the matrix, each of its 4 parts the most trustworthy of its measurements",
        "- **CRITICAL** memory.channels: socket 1: 6 of 8 channels populated",
        // only the settings that differ, one column per run
        "| numa_balancing | 0 | 0 | 1 |",
        "| thp_enabled | madvise | always | madvise |",
        // one run per side, no repeated runs: undecided, never better/worse
        "| Local latency (ns) | 98.1 (n=1) | 93.7 (n=1) -4.5% undecided | 101.2 (n=1) +3.1% undecided |",
    ] {
        assert!(b.contains(want), "missing {want:?} in:\n{b}");
    }
    assert!(!b.contains("| governor |"), "a setting equal in every run is not listed:\n{b}");
}

#[test]
fn brief_of_one_run_has_no_comparison() {
    let (_dir, db) = store();
    let b = brief(&db, &["4"]);
    assert!(b.lines().count() <= 60);
    assert!(b.contains("### numaprobe brief: desktop"));
    assert!(b.contains("| Local bandwidth |"));
    assert!(!b.contains("**Comparison**"));
    assert!(b.contains("- **Settings:** thp_enabled=always, governor=schedutil"), "{b}");
}

#[test]
fn brief_refuses_html() {
    let (_dir, db) = store();
    for args in [&["--format", "html"][..], &["-o", "x.html"][..]] {
        let out = np(&db).args(["report", "1", "--brief"]).args(args).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "{err}"
        );
        assert!(err.contains("--brief writes Markdown only"), "{err}");
    }
}

#[test]
fn brief_of_groups_shows_the_study() {
    let (_dir, db) = store();
    let b = brief(&db, &["label:SNC2 baseline", "--compare", "2"]);
    assert!(b.lines().count() <= 60, "{b}");
    assert!(b.contains("**Comparison** against SNC2 baseline (baseline):"), "{b}");
    assert!(b.contains("| thp_enabled | madvise | always |"), "{b}");
    assert!(b.contains("-4.5% undecided"), "{b}");
}
