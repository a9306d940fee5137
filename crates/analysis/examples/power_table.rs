//! The power table of a settings study: how often two groups of alternated
//! runs (R S R S ...) are judged right, left undecided or judged wrong, by
//! the same code `numaprobe compare` runs (`Study::of_groups`, its noise
//! floors' pool the study's own runs), over simulated runs of a program's
//! score with known noise, drift and change. `scripts/power-table.sh` runs
//! it in release mode; the seeds are fixed, so two runs print the same.
//!
//! A run's score is `100 * exp(drift * i + noise * Z)`, times `1 + change`
//! for the runs of S: `i` the run's place in the series, `Z` standard
//! normal (log-normal noise: `noise` is the standard deviation of a run's
//! log score, about its percent spread), `drift` per run (geometric: 4% is
//! x1.04 from one run to the next). A verdict is wrong when it names the
//! wrong direction, calls identical settings better or worse, or calls a
//! change beyond the margin `same`.
//!
//! Usage: `power_table [--trials N] [--drift PCT,...] [--order abab|abba]`.

use analysis::study::{GroupInput, Study};
use results::run::LoadedRun;
use results::runstats::{Criteria, GroupVerdict};
use serde_json::json;

/// xorshift64*: small, deterministic, good enough for a simulation.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A complete `exec --policies default --repeat 1` run scoring `score`,
/// labelled `label`, started `i` minutes into the series.
fn exec_run(i: usize, label: &str, score: f64) -> LoadedRun {
    let record = results::upgrade::read(
        "exec",
        &json!({"policy": "default", "placement": "",
                "runs": [{"rep": 1, "wall_s": 1.0, "exit_code": 0, "ok": true, "metric": score}],
                "ok_runs": 1, "median_metric": score, "median_wall_s": 1.0,
                "verdict": "baseline", "metric_higher_is_better": true}),
    )
    .record;
    let started = format!("2026-01-01T{:02}:{:02}:00Z", i / 60, i % 60);
    let mut run: LoadedRun = serde_json::from_value(json!({
        "id": i + 1, "uuid": format!("u{i}"), "label": label, "started": started,
        "finished": null, "status": "complete", "complete": true, "message": null,
        "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
        "command_line": "numaprobe exec", "result_count": 1, "imported": false,
        "machine_info": {}, "config": {"nodes": 1}, "topology": {}, "results": []
    }))
    .expect("a run document");
    run.results =
        vec![results::run::StoredRecord { seq: 1, recorded: started, record, as_stored: None }];
    run
}

#[derive(Default)]
struct Tally {
    better: u32,
    same: u32,
    worse: u32,
    undecided: u32,
    wrong: u32,
}

/// The verdict on S against R for one simulated study.
fn one_study(
    rng: &mut Rng,
    n: usize,
    noise: f64,
    change: f64,
    drift: f64,
    abba: bool,
) -> GroupVerdict {
    let (mut r, mut s) = (Vec::new(), Vec::new());
    for i in 0..2 * n {
        // A B A B ..., or study --vary's A B B A A B ...
        let second = if abba { (i % 2 == 1) != ((i / 2) % 2 == 1) } else { i % 2 == 1 };
        let level = 100.0 * (drift.ln_1p() * i as f64 + noise * rng.normal()).exp();
        if second {
            s.push(exec_run(i, "S", level * (1.0 + change)));
        } else {
            r.push(exec_run(i, "R", level));
        }
    }
    let pool: Vec<LoadedRun> = r.iter().chain(&s).cloned().collect();
    let groups = vec![
        GroupInput { reference: "label:R".into(), runs: r },
        GroupInput { reference: "label:S".into(), runs: s },
    ];
    let study = Study::of_groups(&groups, 0, &Criteria::default(), &pool).expect("a study");
    let m = study
        .metrics
        .iter()
        .find(|m| m.metric == "exec_metric[default]")
        .expect("the program's metric");
    m.groups[1].verdict.expect("a verdict")
}

fn main() {
    let mut trials = 400u32;
    let mut drifts = vec![0.0, 4.0];
    let mut abba = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--trials" => trials = args.next().and_then(|v| v.parse().ok()).expect("--trials N"),
            "--drift" => {
                drifts = args
                    .next()
                    .map(|v| v.split(',').map(|x| x.parse().expect("a percent")).collect())
                    .expect("--drift PCT,...")
            }
            "--order" => abba = args.next().as_deref() == Some("abba"),
            other => {
                eprintln!("power_table: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let margin = Criteria::default().margin_pct;
    println!(
        "# {} trials per row; order {}; confidence {:.0}%, margin {margin}%; noise = sd of a run's log score; drift per run",
        trials,
        if abba { "A B B A A B ..." } else { "A B A B ..." },
        Criteria::default().confidence * 100.0
    );
    println!(
        "{:>6} {:>6} {:>6} {:>3} | {:>7} {:>7} {:>7} {:>7} | {:>8} {:>9} {:>6}",
        "drift%",
        "noise%",
        "change%",
        "n",
        "better",
        "same",
        "worse",
        "undec.",
        "decided%",
        "undecided%",
        "wrong%"
    );
    for &drift in &drifts {
        for noise in [0.5, 1.0, 1.5, 2.0, 3.0] {
            for change in [0.0, 2.0, 3.0, 5.0, 8.0, 10.0] {
                for n in [3usize, 5, 10] {
                    // One seed per row, from the row itself: rows do not
                    // depend on which other rows ran.
                    let seed = 0x9E37_79B9_7F4A_7C15u64
                        ^ ((drift * 100.0) as u64) << 48
                        ^ ((noise * 100.0) as u64) << 32
                        ^ ((change * 100.0) as u64) << 16
                        ^ n as u64;
                    let mut rng = Rng(seed | 1);
                    let mut t = Tally::default();
                    for _ in 0..trials {
                        let v = one_study(
                            &mut rng,
                            n,
                            noise / 100.0,
                            change / 100.0,
                            drift / 100.0,
                            abba,
                        );
                        match v {
                            GroupVerdict::Better => t.better += 1,
                            GroupVerdict::Same => t.same += 1,
                            GroupVerdict::Worse => t.worse += 1,
                            GroupVerdict::Undecided => t.undecided += 1,
                        }
                        let wrong = match v {
                            GroupVerdict::Worse => true,
                            GroupVerdict::Better => change == 0.0,
                            GroupVerdict::Same => change > margin,
                            GroupVerdict::Undecided => false,
                        };
                        t.wrong += u32::from(wrong);
                    }
                    let pct = |x: u32| 100.0 * x as f64 / trials as f64;
                    let decided = t.better + t.same + t.worse - t.wrong;
                    println!(
                        "{drift:>6.1} {noise:>6.1} {change:>7.1} {n:>3} | {:>7} {:>7} {:>7} {:>7} | {:>8.1} {:>9.1} {:>6.1}",
                        t.better,
                        t.same,
                        t.worse,
                        t.undecided,
                        pct(decided),
                        pct(t.undecided),
                        pct(t.wrong)
                    );
                }
            }
        }
    }
}
