//! A machine that drifts while a study alternates its settings, end to end
//! with the real binary: `exec` runs of identical settings labelled R S R
//! S ..., each scoring 4% above the run before it (a warming machine, a
//! neighbour VM leaving). Every S follows an R, so pairing each run with
//! the next one gives every pair the same sign; a run compared with the
//! runs of the other label on both sides of it (bracketed) sees no change.

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::Value;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `numaprobe ARGS` on a private database and lock, in the test's folder.
    fn np(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env("NUMAPROBE_DB", self.path("results.db"))
            .env("NUMAPROBE_LOCK", self.path("measure.lock"))
            .current_dir(self.dir.path())
            .args(args);
        c
    }

    /// Runs `numaprobe ARGS`, which must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.np(args).output().unwrap();
        assert!(
            out.status.success(),
            "numaprobe {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(&[&["--json"], args].concat());
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// One `exec` run of one repeat, labelled `label`, of a program that
    /// prints `score: SCORE`.
    fn exec_scoring(&self, label: &str, score: f64) {
        let echo = format!("echo score: {score:.3}");
        self.ok(&[
            "exec",
            "--policies",
            "default",
            "--repeat",
            "1",
            "--label",
            label,
            "--metric",
            "score: ([0-9.]+)",
            "--",
            "sh",
            "-c",
            &echo,
        ]);
    }
}

fn metric<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == id)
        .unwrap_or_else(|| panic!("no metric {id} in {}", v["metrics"]))
}

/// `runs` exec runs labelled `a`, `b`, `a`, `b`, ... whose scores grow by
/// `drift` per run (geometric: 4% is x1.04 each run), the runs of `b`
/// scoring `gap` times what the machine gives at that moment.
fn alternated(env: &Env, runs: usize, drift: f64, gap: f64) {
    for i in 0..runs {
        let level = 100.0 * (1.0 + drift).powi(i as i32);
        let (label, score) = if i % 2 == 0 { ("R", level) } else { ("S", level * gap) };
        env.exec_scoring(label, score);
    }
}

#[test]
fn identical_settings_on_a_machine_drifting_four_percent_per_run_are_never_better() {
    let env = Env::new();
    alternated(&env, 10, 0.04, 1.0);
    let v = env.json(&["compare", "label:R", "label:S"]);
    let m = metric(&v, "exec_metric[default]");
    let s = &m["groups"][1];
    assert_eq!(s["n"], 5, "{m}");
    let verdict = s["verdict"].as_str().unwrap();
    assert!(
        verdict == "same" || verdict == "undecided",
        "identical settings judged {verdict}: {m}"
    );
    assert_eq!(s["basis"], "bracketed", "{m}");
    // The drift cancels in each bracket: no change is left.
    let change = s["change_pct"].as_f64().unwrap();
    assert!(change.abs() < 0.5, "the change must be the drift-free one: {m}");
    // The text says how the verdict was reached.
    let text = env.ok(&["compare", "label:R", "label:S"]);
    assert!(text.contains("bracketed"), "{text}");
    let r = v["recommendations"].as_array().unwrap().iter().find(|r| r["profile"] == "program");
    assert!(r.is_some_and(|r| r["group"].is_null()), "no pick between identical settings: {r:?}");
}

#[test]
fn an_eight_percent_gap_under_a_four_percent_drift_per_run_is_decided() {
    let env = Env::new();
    alternated(&env, 10, 0.04, 1.08);
    let v = env.json(&["compare", "label:R", "label:S"]);
    let s = &metric(&v, "exec_metric[default]")["groups"][1];
    assert_eq!((s["verdict"].as_str(), s["basis"].as_str()), (Some("better"), Some("bracketed")));
    let change = s["change_pct"].as_f64().unwrap();
    assert!((change - 8.0).abs() < 0.5, "+8% once the drift is taken out: {s}");
    let (lo, hi) = (s["ci_low_pct"].as_f64().unwrap(), s["ci_high_pct"].as_f64().unwrap());
    assert!(lo > 0.0 && lo <= change && change <= hi, "{s}");
}

#[test]
fn two_runs_per_label_in_blocks_cannot_be_bracketed_and_say_so() {
    // R R S S on a machine drifting 10% per run: no run of one label lies
    // between two of the other.
    let env = Env::new();
    for (i, label) in ["R", "R", "S", "S"].iter().enumerate() {
        env.exec_scoring(label, 100.0 * 1.1f64.powi(i as i32));
    }
    let v = env.json(&["compare", "label:R", "label:S"]);
    let s = &metric(&v, "exec_metric[default]")["groups"][1];
    assert_eq!(s["verdict"], "undecided", "{s}");
    assert_eq!(s["undecided_because"]["reason"], "not-bracketed", "{s}");
    let text = env.ok(&["compare", "label:R", "label:S"]);
    assert!(text.contains("cannot be bracketed"), "the text names the missing brackets: {text}");
}
