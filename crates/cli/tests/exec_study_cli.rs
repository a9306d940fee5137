//! `exec` as a study instrument, end to end with the real binary: the
//! README's recipe (one `exec --repeat 5` call per setting) decides a 30%
//! change; a program's two scores (`--metric NAME=REGEX` twice) are judged
//! each on its own from one call per setting; `--policies all` and
//! `--policies default` pair on the default policy; `--metric-file` never
//! gives a stale score; repeats alternate across policies; bad metric
//! flags are usage errors of one line; runs alternated on a drifting
//! machine are judged by their brackets, so that the drift cancels.

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

    /// An executable shell script in the test's folder.
    fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let p = self.path(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    }

    /// One `exec` call of 5 repeats of [`Env::bench`] printing `rate:`
    /// around `rate`, labelled `label`, with `extra` options before `--`.
    fn five_repeats(&self, bench: &str, label: &str, rate: &str, extra: &[&str]) {
        let counter = format!("counter-{label}");
        let rate = format!("rate={rate}");
        let mut args = vec!["exec", "--policies", "default", "--repeat", "5", "--label", label];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--metric", "rate: ([0-9.]+)", "--", bench, &counter, &rate]);
        self.ok(&args);
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

    /// A benchmark printing `NAME: VALUE` for each `NAME=BASE` argument
    /// after the first (a counter file), each within ±1% of its base:
    /// deterministic jitter from the call count (-1%, +1%, -0.5%, ...).
    fn bench(&self) -> String {
        self.script(
            "bench.sh",
            r#"counter=$1; shift
n=$(cat "$counter" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$counter"
j=$(( (n * 7) % 5 - 2 ))
for kv in "$@"; do
  name=${kv%%=*}; base=${kv#*=}
  r=$(( base * (1000 + 5 * j) ))
  printf '%s: %d.%03d\n' "$name" $((r / 1000)) $((r % 1000))
done
"#,
        )
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

fn recommendation<'a>(v: &'a Value, profile: &str) -> &'a Value {
    v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["profile"] == profile)
        .unwrap_or_else(|| panic!("no {profile} recommendation in {}", v["recommendations"]))
}

#[test]
fn the_readme_recipe_decides_a_30_percent_change_from_one_exec_call_per_setting() {
    let env = Env::new();
    let bench = env.bench();
    for (label, rate) in [("on", "40"), ("off", "30")] {
        let smt = format!("bios.smt={label}");
        env.five_repeats(&bench, label, rate, &["--set", &smt]);
    }
    let v = env.json(&["compare", "label:on", "label:off"]);
    let m = metric(&v, "exec_metric[default]");
    let (on, off) = (&m["groups"][0], &m["groups"][1]);
    assert_eq!((on["n"].as_u64(), off["n"].as_u64()), (Some(5), Some(5)), "{m}");
    assert_eq!(on["values"].as_array().unwrap().len(), 5, "each repeat is a sample: {on}");
    assert_eq!(off["verdict"], "worse", "{off}");
    let change = off["change_pct"].as_f64().unwrap();
    assert!((change + 25.0).abs() < 1.0, "40 -> 30 is -25%: {change}");
    // and the other way round: +33%, better
    let v = env.json(&["compare", "label:off", "label:on"]);
    assert_eq!(metric(&v, "exec_metric[default]")["groups"][1]["verdict"], "better");
    let r = recommendation(&v, "program");
    assert_eq!(r["group"], 1, "{}", r["text"]);
    assert_eq!(r["decided_by"], "exec_metric[default]");
    // The study says what these samples are and what they are not.
    let notes: Vec<&str> =
        v["notes"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(
        notes.iter().any(|n| n.contains("repeats inside one `exec` call")
            && n.contains("do not sample what changes between boots")),
        "{notes:?}"
    );
}

#[test]
fn a_two_metric_exec_study_judges_each_metric_from_one_call_per_setting() {
    let env = Env::new();
    let bench = env.bench();
    // int +30%, fp unchanged (each within ±1%)
    for (label, int) in [("before", "30"), ("after", "39")] {
        let counter = format!("counter-{label}");
        let set = format!("bios.boost={label}");
        let int = format!("int={int}");
        env.ok(&[
            "exec",
            "-p",
            "default",
            "-r",
            "5",
            "--label",
            label,
            "--set",
            &set,
            "--metric",
            "int=int: ([0-9.]+)",
            "--metric",
            "fp=fp: ([0-9.]+)",
            "--",
            &bench,
            &counter,
            &int,
            "fp=20",
        ]);
    }
    let v = env.json(&["compare", "label:before", "label:after"]);
    let int = metric(&v, "exec_metric:int[default]");
    assert_eq!(int["name"], "Program metric int under default");
    assert_eq!(int["groups"][1]["verdict"], "better", "{int}");
    let change = int["groups"][1]["change_pct"].as_f64().unwrap();
    assert!((change - 30.0).abs() < 1.5, "int +30%: {change}");
    let fp = metric(&v, "exec_metric:fp[default]");
    assert_eq!(fp["groups"][1]["verdict"], "same", "{fp}");
    // One recommendation per named metric, each judged alone.
    let r = recommendation(&v, "program int");
    assert_eq!(
        (r["group"].as_u64(), r["decided_by"].as_str()),
        (Some(1), Some("exec_metric:int[default]")),
        "{}",
        r["text"]
    );
    let r = recommendation(&v, "program fp");
    assert!(r["group"].is_null(), "fp is unchanged: {}", r["text"]);
    // Named metrics only: judged by them, never picked by wall time.
    let profiles: Vec<&str> = v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["profile"].as_str())
        .collect();
    assert_eq!(profiles, ["program fp", "program int"], "{}", v["recommendations"]);
    // Each run stored both values.
    let runs = env.json(&["show", "latest"]);
    let text = runs.to_string();
    assert!(text.contains("\"int\"") && text.contains("\"fp\""), "{text}");
}

#[test]
fn policies_all_and_policies_default_pair_on_the_default_policy() {
    let env = Env::new();
    for (label, policies) in [("all", "all"), ("default", "default")] {
        let set = format!("bios.x={label}");
        env.ok(&[
            "exec",
            "-p",
            policies,
            "-r",
            "3",
            "--label",
            label,
            "--set",
            &set,
            "--metric",
            "v=([0-9]+)",
            "--",
            "sh",
            "-c",
            "echo v=7",
        ]);
    }
    let v = env.json(&["compare", "label:all", "label:default"]);
    let m = metric(&v, "exec_metric[default]");
    assert_eq!(m["name"], "Program metric under default");
    let n: Vec<u64> = (0..2).map(|g| m["groups"][g]["n"].as_u64().unwrap()).collect();
    assert_eq!(n, [3, 3], "both groups measured the default policy: {m}");
    assert_eq!(m["groups"][1]["verdict"], "same", "{m}");
    let wall = metric(&v, "exec_wall_s[default]");
    assert!(wall["groups"][0]["n"].as_u64() > Some(0) && wall["groups"][1]["n"].as_u64() > Some(0));
    // no figure of `default` stored under another id in one group only
    let ids: Vec<&str> =
        v["metrics"].as_array().unwrap().iter().filter_map(|m| m["metric"].as_str()).collect();
    assert!(!ids.contains(&"exec_metric"), "{ids:?}");
}

#[test]
fn a_metric_file_is_read_after_each_run_and_never_gives_a_stale_score() {
    let env = Env::new();
    // Writes its score only on the first call; later calls leave the file.
    let writer = env.script(
        "writer.sh",
        r#"n=$(cat calls 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > calls
echo 'score on stdout: 1'
if [ "$n" = 1 ]; then printf '{"score": 41.5, "time": 2.25}\n' > result.json; fi
"#,
    );
    let v = env.json(&[
        "exec",
        "--no-save",
        "-p",
        "default",
        "-r",
        "3",
        "--metric-file",
        "result.json",
        "--metric",
        r#"score="score": ([0-9.]+)"#,
        "--metric",
        r#"time="time": ([0-9.]+)"#,
        "--metric-lower-is-better",
        "time",
        "--",
        &writer,
    ]);
    assert_eq!(v["metric_file"], "result.json");
    assert_eq!(v["compared_on"], "metric:score");
    let p = &v["policies"][0];
    assert_eq!(p["metrics"]["time"]["higher_is_better"], false);
    let runs = p["runs"].as_array().unwrap();
    assert_eq!(runs[0]["metrics"]["score"]["value"], 41.5, "read from the file: {}", runs[0]);
    assert_eq!(runs[0]["metrics"]["time"]["value"], 2.25);
    for r in &runs[1..] {
        for name in ["score", "time"] {
            let m = &r["metrics"][name];
            assert!(m["value"].is_null(), "the previous run's score is never taken: {r}");
            let e = m["error"].as_str().unwrap();
            assert!(e.contains("metric file result.json: not written by this run"), "{e}");
        }
    }
    // a link where the file should be is refused, not followed
    std::fs::write(env.path("elsewhere.json"), r#"{"score": 99}"#).unwrap();
    std::os::unix::fs::symlink(env.path("elsewhere.json"), env.path("link.json")).unwrap();
    let v = env.json(&[
        "exec",
        "--no-save",
        "-p",
        "default",
        "-r",
        "1",
        "--metric-file",
        "link.json",
        "--metric",
        r#""score": ([0-9.]+)"#,
        "--",
        "true",
    ]);
    let r = &v["policies"][0]["runs"][0];
    assert!(r["metric"].is_null(), "{r}");
    assert!(
        r["metric_error"].as_str().unwrap().contains("a symbolic link; refusing to follow it"),
        "{r}"
    );
}

#[test]
fn repeats_alternate_across_policies() {
    let env = Env::new();
    // Each run appends the memory policy it runs under (numa_maps of the shell).
    let log = env.path("order.log");
    let script = env.script(
        "policy.sh",
        &format!("head -n 1 /proc/$$/numa_maps | cut -d' ' -f2 >> '{}'\n", log.display()),
    );
    env.ok(&[
        "exec",
        "--no-save",
        "-p",
        "default,local:0",
        "-r",
        "3",
        "--warmup",
        "1",
        "--",
        &script,
    ]);
    let order = std::fs::read_to_string(&log).unwrap();
    let order: Vec<&str> = order.lines().collect();
    assert_eq!(
        order,
        ["default", "bind:0", "default", "bind:0", "default", "bind:0", "default", "bind:0"],
        "warmup round, then rounds 1..3, each policy once per round"
    );
}

#[test]
fn bad_metric_flags_are_usage_errors_of_one_line() {
    let env = Env::new();
    let cases: [(&[&str], &str); 6] = [
        (&["--metric", "int=a(x)", "--metric", "int=b(x)"], "the metric name 'int' is given twice"),
        (&["--metric", "(a)", "--metric", "(b)"], "two unnamed metrics"),
        (&["--metric", "int=int: ([0-9"], "int: invalid regular expression 'int: ([0-9'"),
        (&["--metric", r"fp=fp: \d+"], "has no capture group"),
        (
            &["--metric", "int=i(x)", "--metric-lower-is-better", "fp"],
            "a direction is given for 'fp'",
        ),
        (&["--metric-file", "r.csv"], "--metric-file needs --metric"),
    ];
    for (args, want) in cases {
        let out =
            env.np(&[&["exec", "--no-save"], args, &["--", "true"]].concat()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "{args:?}: one line: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Score per watt: two settings' `exec` runs, their repeats given RAPL
/// power afterwards (this VM has no RAPL zone: the export document is
/// edited, as a machine with one would have stored it, and imported),
/// are judged per watt as well as on the metric. The faster setting (40
/// at 20 W) is worse per watt than the slower one (30 at 10 W).
#[test]
fn compare_judges_the_score_per_watt_of_runs_with_power() {
    let env = Env::new();
    let bench = env.bench();
    for (label, rate) in [("fast", "40"), ("frugal", "30")] {
        env.five_repeats(&bench, label, rate, &[]);
    }
    env.ok(&["export", "label:fast", "label:frugal", "-o", "runs.json"]);
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("runs.json")).unwrap()).unwrap();
    let mut edited = 0;
    for run in doc["runs"].as_array_mut().unwrap() {
        let watts = if run["label"] == "fast" { 20.0 } else { 10.0 };
        for r in run["results"].as_array_mut().unwrap() {
            if r["kind"] != "exec" {
                continue;
            }
            for (i, rep) in r["payload"]["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
                // 1 s at WATTS, +0.1% per repeat: package 90%, DRAM 10%
                let j = watts * (1.0 + 0.001 * i as f64);
                rep["power"] = serde_json::json!({"seconds": 1.0, "zones": [
                    {"zone": "intel-rapl:0", "name": "package-0", "joules": j * 0.9, "watts": j * 0.9},
                    {"zone": "intel-rapl:0:0", "name": "dram", "joules": j * 0.1, "watts": j * 0.1}]});
                edited += 1;
            }
        }
    }
    assert_eq!(edited, 10, "5 repeats per run");
    std::fs::write(env.path("power.json"), doc.to_string()).unwrap();
    let with_power = Env::new();
    with_power.ok(&["import", env.path("power.json").to_str().unwrap()]);
    let v = with_power.json(&["compare", "label:fast", "label:frugal"]);
    assert_eq!(metric(&v, "exec_metric[default]")["groups"][1]["verdict"], "worse");
    let pw = metric(&v, "exec_metric_per_watt[default]");
    assert_eq!(pw["higher_is_better"], true, "{pw}");
    let (fast, frugal) = (&pw["groups"][0], &pw["groups"][1]);
    assert_eq!((fast["n"].as_u64(), frugal["n"].as_u64()), (Some(5), Some(5)), "{pw}");
    assert_eq!(frugal["verdict"], "better", "{pw}");
    // 40/20 = 2 per W against 30/10 = 3 per W: +50%
    let change = frugal["change_pct"].as_f64().unwrap();
    assert!((change - 50.0).abs() < 2.0, "{pw}");
    let j = metric(&v, "exec_energy_j[default]");
    assert_eq!(
        (j["higher_is_better"].as_bool(), j["groups"][1]["verdict"].as_str()),
        (Some(false), Some("better")),
        "{j}"
    );
    // One repeat of each run without power (as where RAPL became
    // unreadable mid-run): neither figure, never a 0.
    for run in doc["runs"].as_array_mut().unwrap() {
        for r in run["results"].as_array_mut().unwrap() {
            if r["kind"] == "exec" {
                r["payload"]["runs"][2].as_object_mut().unwrap().remove("power");
            }
        }
    }
    std::fs::write(env.path("partial.json"), doc.to_string()).unwrap();
    let partial = Env::new();
    partial.ok(&["import", env.path("partial.json").to_str().unwrap()]);
    let v = partial.json(&["compare", "label:fast", "label:frugal"]);
    let ids: Vec<&str> =
        v["metrics"].as_array().unwrap().iter().filter_map(|m| m["metric"].as_str()).collect();
    assert!(ids.contains(&"exec_metric[default]"), "{ids:?}");
    assert!(
        !ids.iter().any(|i| i.starts_with("exec_metric_per_watt") || i.starts_with("exec_energy")),
        "{ids:?}"
    );
}

// A machine that drifts while a study alternates its settings: `exec`
// runs of identical settings labelled R S R S ..., each scoring 4% above
// the run before it (a warming machine, a neighbour VM leaving). Every S
// follows an R, so pairing each run with the next one gives every pair
// the same sign; a run compared with the runs of the other label on both
// sides of it (bracketed) sees no change.

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
    // No pick from the score. The runs' wall time is really measured, on a
    // machine that other work may slow down between runs: a pick from it
    // is not this test's business.
    let r = v["recommendations"].as_array().unwrap().iter().find(|r| r["profile"] == "program");
    let r = r.expect("a program recommendation");
    assert!(
        r["group"].is_null() || r["decided_by"] != "exec_metric[default]",
        "no pick from the score of identical settings: {r}"
    );
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

/// 4 labels R S T U, 3 exec runs each, taken in turn on a machine drifting
/// 3% per run, each run's score times `noise[i]`; S scores 8% above the
/// others.
fn four_in_turn(env: &Env, noise: &[f64; 12]) {
    for (i, n) in noise.iter().enumerate() {
        let label = ["R", "S", "T", "U"][i % 4];
        let gap = if label == "S" { 1.08 } else { 1.0 };
        env.exec_scoring(label, 100.0 * 1.03f64.powi(i as i32) * gap * n);
    }
}

#[test]
fn a_study_of_four_labels_in_turn_pools_its_noise_and_says_so() {
    // About 1% scatter, the same for every label: one noise for the study,
    // 12 runs less 1 level, 1 drift and 3 differences: 7 degrees of
    // freedom where S against R alone would have 3.
    let env = Env::new();
    four_in_turn(
        &env,
        &[1.012, 0.991, 1.004, 0.987, 1.009, 1.015, 0.993, 1.001, 0.985, 1.007, 0.998, 1.011],
    );
    let labels = ["compare", "label:R", "label:S", "label:T", "label:U"];
    let v = env.json(&labels);
    let s = &metric(&v, "exec_metric[default]")["groups"][1];
    assert_eq!((s["basis"].as_str(), s["pooled_groups"].as_u64()), (Some("bracketed"), Some(4)));
    assert_eq!(s["verdict"], "better", "{s}");
    let text = env.ok(&labels);
    assert!(text.contains("of all 4 groups at once"), "{text}");
    assert!(text.contains("7 degrees of freedom"), "{text}");
}

#[test]
fn a_label_far_noisier_than_the_others_keeps_each_pair_on_its_own_brackets() {
    // T scatters by about 25%, the others by about 1%: the premise of one
    // noise fails, and no verdict may rest on the others' quiet.
    let env = Env::new();
    four_in_turn(
        &env,
        &[1.012, 0.991, 1.30, 0.987, 1.009, 1.015, 0.75, 1.001, 0.985, 1.007, 1.25, 1.011],
    );
    let v = env.json(&["compare", "label:R", "label:S", "label:T", "label:U"]);
    let m = metric(&v, "exec_metric[default]");
    for g in 1..4 {
        let c = &m["groups"][g];
        assert_eq!(c["basis"], "bracketed", "{c}");
        assert!(c.get("pooled_groups").is_none(), "group {g}: {c}");
    }
}

/// Each refused metric flag, the one whole line it says (a memory warning
/// may join stderr on another line).
#[test]
fn bad_metric_flags_say_their_whole_line() {
    let env = Env::new();
    let cases: [(&[&str], &str); 10] = [
        (
            &["--metric", "int=a(x)", "--metric", "int=b(x)"],
            "bad --metric: the metric name 'int' is given twice",
        ),
        (
            &["--metric", "(a)", "--metric", "(b)"],
            "bad --metric: two unnamed metrics ('(a)' and '(b)'): name them, e.g. --metric int=REGEX --metric fp=REGEX",
        ),
        (
            &["--metric", "int=int: ([0-9"],
            "bad --metric: int: invalid regular expression 'int: ([0-9': unclosed character class",
        ),
        (
            &["--metric", r"fp=fp: \d+"],
            r"bad --metric: fp: 'fp: \d+' has no capture group; put the number in parentheses, e.g. 'Triad:\s+([0-9.]+)'",
        ),
        (
            &["--metric", "int=i(x)", "--metric-lower-is-better", "fp"],
            "bad --metric: a direction is given for 'fp', which no --metric NAME=REGEX names (named: int)",
        ),
        (
            &["--metric-higher-is-better", "x"],
            "bad --metric: a direction is given for 'x', which no --metric NAME=REGEX names (no metric is named)",
        ),
        (
            &["--metric", "int=i(x)", "--metric-lower-is-better", "int", "--metric-higher-is-better", "int"],
            "bad --metric: 'int' is said to be both lower- and higher-is-better",
        ),
        (
            &["--higher-is-better"],
            "bad --metric: --higher-is-better/--lower-is-better need --metric (wall time is always lower-is-better)",
        ),
        (
            &["--metric-lower-is-better"],
            "bad --metric: --higher-is-better/--lower-is-better need --metric (wall time is always lower-is-better)",
        ),
        (
            &["--metric-file", "r.csv"],
            "bad --metric: --metric-file needs --metric (the patterns searched in the file)",
        ),
    ];
    for (args, want) in cases {
        let out =
            env.np(&[&["exec", "--no-save"], args, &["--", "true"]].concat()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let want = format!("numaprobe: error: {want}");
        assert!(err.lines().any(|l| l == want), "{args:?}: no line {want:?} in:\n{err}");
    }
}
