//! Declared settings end to end: `--set`/`--set-file` of `bw`, `lat`,
//! `exec` and `run` land in the saved run's configuration and fingerprint,
//! and in every settings diff (`compare`, `report --compare`); `exec
//! --label`; and the bad inputs (exit 2, one line, nothing saved).

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

struct Env {
    dir: tempfile::TempDir,
}

/// Tiny, quick bandwidth figures: the run, not the speed, is tested.
const BW_TINY: &[&str] = &[
    "bw",
    "--kernel",
    "triad",
    "--size",
    "1M",
    "--min-reps",
    "2",
    "--max-reps",
    "2",
    "--budget",
    "0.1",
];

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env("NUMAPROBE_DB", self.path("results.db"))
            .env("NUMAPROBE_LOCK", self.path("measure.lock"))
            .current_dir(self.dir.path())
            .args(args);
        c
    }

    /// Runs `args`, asserts exit 0, returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {:?}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(&[args, &["--json"]].concat());
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {text}"))
    }

    /// Runs `args`, asserts exit 2 with one line on stderr, returns it.
    fn usage(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "{args:?}: one line: {err}"
        );
        err
    }

    fn bw(&self, extra: &[&str]) {
        self.ok(&[BW_TINY, extra, &["-q"]].concat());
    }
}

fn settings_diff(study: &Value) -> Vec<(String, Vec<String>)> {
    study["settings_diff"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let vals = d["values"].as_array().unwrap();
            (
                d["setting"].as_str().unwrap().to_string(),
                vals.iter().map(|v| v.as_str().unwrap().to_string()).collect(),
            )
        })
        .collect()
}

#[test]
fn declared_settings_tell_runs_apart_in_the_fingerprint_and_every_diff() {
    let e = Env::new();
    e.bw(&["--set", "bios.numa=on", "--set", "bios.snc=2", "--label", "on"]);
    e.bw(&["--set", "bios.numa=off", "--set", "BIOS.SNC = 2", "--label", "off"]);
    e.bw(&["--label", "plain"]);
    let runs = e.json(&["list"]);
    let hashes: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["config_hash"].as_str().unwrap()).collect();
    assert_eq!(hashes.len(), 3);
    assert!(
        hashes[0] != hashes[1] && hashes[1] != hashes[2] && hashes[0] != hashes[2],
        "{hashes:?}"
    );
    // The documents: the declared settings (keys lower-cased), and none at
    // all where nothing was declared.
    let shown = e.json(&["show", "1"]);
    assert_eq!(
        shown["config"]["declared"],
        serde_json::json!({"bios.numa": "on", "bios.snc": "2"})
    );
    assert!(e.json(&["show", "3"])["config"].get("declared").is_none());

    // compare: only bios.numa differs; bios.snc is the same in both.
    let study = e.json(&["compare", "label:on", "label:off"]);
    let diff = settings_diff(&study);
    assert_eq!(diff, [("declared.bios.numa".to_string(), vec!["on".into(), "off".into()])]);
    let same: Vec<&str> =
        study["settings_same"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert!(same.contains(&"declared.bios.snc=2"), "{same:?}");
    // Against a run that declared nothing: shown as not recorded.
    let study = e.json(&["compare", "label:on", "label:plain"]);
    let diff = settings_diff(&study);
    assert!(
        diff.contains(&("declared.bios.numa".to_string(), vec!["on".into(), "-".into()])),
        "{diff:?}"
    );
    // The text table and the report's comparison say it too.
    let text = e.ok(&["compare", "label:on", "label:off"]);
    assert!(text.contains("declared.bios.numa"), "{text}");
    let md = e.ok(&["report", "1", "--compare", "2"]);
    let section = md.split("Settings that differ").nth(1).unwrap_or_else(|| panic!("{md}"));
    let row = section
        .lines()
        .find(|l| l.contains("declared.bios.numa"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("on") && row.contains("off"), "{row}");
}

#[test]
fn a_settings_file_declares_like_set() {
    let e = Env::new();
    std::fs::write(
        e.path("milan.txt"),
        "# Milan study, SMT and boost\n\nbios.smt = on\n   # comment\nbios.boost=off\n",
    )
    .unwrap();
    e.bw(&["--set-file", "milan.txt", "--set", "bios.smt=on"]);
    let shown = e.json(&["show", "latest"]);
    assert_eq!(
        shown["config"]["declared"],
        serde_json::json!({"bios.boost": "off", "bios.smt": "on"})
    );
}

#[test]
fn exec_takes_a_label_and_declared_settings() {
    let e = Env::new();
    for (label, smt) in [("smt on", "on"), ("smt off", "off")] {
        e.ok(&[
            "exec",
            "-q",
            "-r",
            "1",
            "-p",
            "default",
            "--label",
            label,
            "--set",
            &format!("bios.smt={smt}"),
            "--",
            "true",
        ]);
    }
    let runs = e.json(&["list"]);
    let labels: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["label"].as_str().unwrap_or("")).collect();
    assert_eq!(labels, ["smt on", "smt off"]);
    let study = e.json(&["compare", "label:smt on", "label:smt off"]);
    assert_eq!(
        settings_diff(&study),
        [("declared.bios.smt".to_string(), vec!["on".into(), "off".into()])]
    );
}

#[test]
fn bad_declarations_are_one_line_usage_errors_and_save_nothing() {
    let e = Env::new();
    let no_eq = e.usage(&[BW_TINY, &["--set", "bios.numa"]].concat());
    assert!(no_eq.contains("expected KEY=VALUE"), "{no_eq}");
    let empty = e.usage(&[BW_TINY, &["--set", "=on"]].concat());
    assert!(empty.contains("key before '=' is empty"), "{empty}");
    let twice = e.usage(&[BW_TINY, &["--set", "bios.snc=2", "--set", "bios.snc=4"]].concat());
    assert!(twice.contains("bios.snc is declared twice with different values"), "{twice}");
    std::fs::write(e.path("bad.txt"), "bios.numa=on\n# fine\nbios.numa=off\n").unwrap();
    let file = e.usage(&["lat", "--size", "1M", "--set-file", "bad.txt"]);
    assert!(file.contains("bad.txt:3") && file.contains("declared twice"), "{file}");
    let missing = e.usage(&["run", "--quick", "--set-file", "nope.txt"]);
    assert!(missing.contains("nope.txt") && missing.contains("cannot read"), "{missing}");
    let exec = e.usage(&["exec", "--no-save", "--set", "a=b", "--", "true"]);
    assert!(exec.contains("--no-save"), "{exec}");
    assert!(!Path::new(&e.path("results.db")).exists(), "nothing may be saved");
}

/// Guards issue 37 cause 5: a byte order mark became part of the first
/// key (two `declared.bios.a` that never pool), ten files of 70k keys were
/// accepted, a newline in a `--set` key cut the error short, and
/// `--set-file /etc/shadow` echoed the file's first line.
#[test]
fn a_bom_is_dropped_declarations_are_capped_and_errors_escape_and_never_echo_a_file() {
    let e = Env::new();
    std::fs::write(e.path("bom.txt"), "\u{feff}bios.a=1\n").unwrap();
    let exec = ["exec", "-q", "-r", "1", "-p", "default"];
    e.ok(&[&exec[..], &["--set-file", "bom.txt", "--set", "bios.a=1", "--", "true"]].concat());
    let shown = e.json(&["show", "latest"]);
    assert_eq!(shown["config"]["declared"], serde_json::json!({"bios.a": "1"}));

    // The cap holds across files and --set together.
    let half: String = (0..600).map(|i| format!("k{i}=v\n")).collect();
    let other: String = (600..1200).map(|i| format!("k{i}=v\n")).collect();
    std::fs::write(e.path("a.txt"), half).unwrap();
    std::fs::write(e.path("b.txt"), other).unwrap();
    let many = e.usage(&[BW_TINY, &["--set-file", "a.txt", "--set-file", "b.txt"]].concat());
    assert!(many.contains("b.txt:425") && many.contains("more than 1024 settings"), "{many}");

    let newline = e.usage(&[BW_TINY, &["--set", "bios.a\nforged line=1"]].concat());
    assert!(newline.contains("bios.a\\nforged line=1"), "{newline}");
    assert!(newline.contains("no spaces"), "the reason is kept: {newline}");

    std::fs::write(e.path("shadow"), "root:$6$SECRETHASH:20228:0:99999:7:::\n").unwrap();
    let shadow = e.usage(&[BW_TINY, &["--set-file", "shadow"]].concat());
    assert!(shadow.contains("shadow:1: expected KEY=VALUE"), "{shadow}");
    assert!(!shadow.contains("SECRETHASH") && !shadow.contains("root:"), "{shadow}");
}

/// A declared setting the run's own readings contradict is a warning on
/// the run and in every comparison that uses it. SMT is read from this
/// machine and the opposite declared, so the test holds on any machine.
#[test]
fn a_declared_setting_the_machine_contradicts_is_a_warning_everywhere() {
    let e = Env::new();
    let control = std::fs::read_to_string("/sys/devices/system/cpu/smt/control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "notsupported".into());
    let wrong = if control == "on" { "bios.smt=off" } else { "bios.smt=on" };
    let out =
        e.cmd(&[BW_TINY, &["--set", wrong, "--label", "wrong", "-q"]].concat()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("declared {wrong}, but the kernel reports smt=")),
        "no warning for {wrong} under smt/control={control}: {err}"
    );
    // The run that declares nothing, or what the machine shows, warns not.
    let out = e.cmd(&[BW_TINY, &["--label", "plain", "-q"]].concat()).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("declared"), "{out:?}");
    let v = e.json(&["compare", "label:wrong", "label:plain"]);
    let w = v["warnings"].to_string();
    assert!(w.contains(&format!("group label:wrong: run 1: declared {wrong}")), "{w}");
}
