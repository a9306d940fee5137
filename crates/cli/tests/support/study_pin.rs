//! The exact bytes of a study's outputs against golden files under
//! tests/golden/study_words (`NUMAPROBE_BLESS=1` rewrites them, only for a
//! deliberate change of what a study says): shared by the study-wording
//! suites.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// numaprobe on the store `db`, with no database or terminal width from
/// the environment.
pub fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").env_remove("COLUMNS").arg("--db").arg(db);
    c
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/study_words")
}

/// Compares `got` with the golden file `name` (or writes it when blessing).
pub fn golden(name: &str, got: &[u8], failures: &mut Vec<String>) {
    let path = golden_dir().join(name);
    if std::env::var_os("NUMAPROBE_BLESS").is_some() {
        std::fs::create_dir_all(golden_dir()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    match std::fs::read(&path) {
        Ok(want) if want == got => {}
        Ok(want) => failures.push(format!(
            "{name} differs from its golden file:\n--- want\n{}\n--- got\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(got)
        )),
        Err(e) => failures.push(format!("{name}: {e}")),
    }
}

/// stdout of a command that must succeed.
pub fn stdout(c: &mut Command) -> Vec<u8> {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// The study's warnings `compare` wrote on stderr, one a line: the lines
/// the machine under the test can add (the NUMA nodes' memory, a killed
/// study's journal) left out.
pub fn study_warnings(c: &mut Command) -> Vec<u8> {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8(out.stderr).unwrap();
    let kept: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("numaprobe: warning: "))
        .filter(|l| !l.contains("NUMA nodes hold") && !l.contains("was killed before"))
        .collect();
    (kept.join("\n") + "\n").into_bytes()
}

/// Every output of the study of `groups` in the store `db`, compared
/// with the golden files `PREFIX-*`
/// (the HTML page too with `html`: the fixture's pages are large, one
/// page pins what the HTML renderer does with the study's sentences).
pub fn pin(db: &Path, prefix: &str, groups: &[&str], html: bool, failures: &mut Vec<String>) {
    let json = stdout(np(db).arg("--json").arg("compare").args(groups));
    golden(&format!("{prefix}-compare.json"), &json, failures);
    let text = stdout(np(db).arg("compare").args(groups));
    golden(&format!("{prefix}-compare.txt"), &text, failures);
    let verbose = stdout(np(db).args(["compare", "--verbose"]).args(groups));
    golden(&format!("{prefix}-compare-verbose.txt"), &verbose, failures);
    let warnings = study_warnings(np(db).arg("compare").args(groups));
    golden(&format!("{prefix}-compare-warnings.txt"), &warnings, failures);
    let report = |extra: &[&str]| {
        stdout(np(db).arg("report").arg(groups[0]).arg("--compare").args(&groups[1..]).args(extra))
    };
    golden(&format!("{prefix}-report.md"), &report(&[]), failures);
    if html {
        golden(&format!("{prefix}-report.html"), &report(&["--format", "html"]), failures);
    }
    golden(&format!("{prefix}-brief.md"), &report(&["--brief"]), failures);
}
