//! The power table of a settings study: how often alternated runs of
//! groups are judged right, left undecided or judged wrong, by the same
//! code `numaprobe compare` runs (`Study::of_groups`), over simulated runs
//! of a program's score with known noise, drift and change.
//! `scripts/power-table.sh` runs it in release mode; the seeds are fixed,
//! so two runs print the same.
//!
//! Two shapes: a pair (R S R S ...) and the seeds' study of 4 settings
//! (R S T U R S T U ...), both with `n` runs per setting; the verdict
//! counted is S against R, S being `change` above R and T, U identical to
//! R. "pair alone" judges S against R on the pair's own brackets alone
//! (`runstats::judge_bracketed`, what `compare` does for such groups when
//! the study's noise cannot be pooled); "compare" is `Study::of_groups`,
//! which pools the noise over the study's groups (docs/store.md).
//!
//! A run's score is `100 * exp(drift * i + noise * Z)`, times `1 + change`
//! for the runs of S: `i` the run's place in the series, `Z` standard
//! normal (log-normal noise: `noise` is the standard deviation of a run's
//! log score, about its percent spread), `drift` per run (geometric: 4% is
//! x1.04 from one run to the next). A verdict is wrong when it names the
//! wrong direction, calls identical settings better or worse, or calls a
//! change beyond the margin `same`.
//!
//! A third set of columns, "margin rule", counts the verdicts `compare`
//! would give if `better`/`worse` also needed the change of medians itself
//! to reach the margin: a rule NOT in use (docs/store.md says why), shown
//! because it trades the decided share (the estimate's own scatter, about
//! `noise * sqrt(2/3)` at 3 runs per setting, holds a 5% change at 1.5%
//! noise near 94% under it) for fewer false verdicts where the noise is
//! small against the margin.
//!
//! Usage: `power_table [--trials N] [--drift PCT,...] [--order abab|abba]
//! [--shape pair|study|both] [--noise PCT,...] [--change PCT,...] [--n
//! N,...]` (`abba`: each round of settings in the reverse order of the one
//! before, as `study --vary` takes them).

use analysis::study::{GroupInput, Study};
use results::run::LoadedRun;
use results::runstats::{judge_bracketed, Criteria, GroupVerdict};
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
    decided: u32,
    undecided: u32,
    wrong: u32,
}

impl Tally {
    fn add(&mut self, v: GroupVerdict, change: f64, margin: f64) {
        let wrong = match v {
            GroupVerdict::Worse => true,
            GroupVerdict::Better => change == 0.0,
            GroupVerdict::Same => change > margin,
            GroupVerdict::Undecided => false,
        };
        if wrong {
            self.wrong += 1;
        } else if v == GroupVerdict::Undecided {
            self.undecided += 1;
        } else {
            self.decided += 1;
        }
    }
}

/// The verdicts on S against R for one simulated study of `k` settings
/// (R, S, then identical ones) of `n` runs each: the pair's own brackets,
/// the study as `compare` judges it, and the study under the margin rule.
fn one_study(
    rng: &mut Rng,
    k: usize,
    n: usize,
    noise: f64,
    change: f64,
    drift: f64,
    abba: bool,
) -> (GroupVerdict, GroupVerdict, GroupVerdict) {
    let names: Vec<String> = (0..k).map(|g| ((b'R' + g as u8) as char).to_string()).collect();
    let mut runs: Vec<Vec<LoadedRun>> = vec![Vec::new(); k];
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); k];
    for i in 0..k * n {
        let (round, at) = (i / k, i % k);
        // R S T U R S T U ..., or study --vary's R S T U U T S R R ...
        let g = if abba && round % 2 == 1 { k - 1 - at } else { at };
        let level = 100.0 * (drift.ln_1p() * i as f64 + noise * rng.normal()).exp();
        let score = if g == 1 { level * (1.0 + change) } else { level };
        runs[g].push(exec_run(i, &names[g], score));
        series[g].push((i as f64, score));
    }
    let alone = judge_bracketed(&series[0], &series[1], true, &Criteria::default())
        .map(|j| j.verdict)
        .unwrap_or(GroupVerdict::Undecided);
    let pool: Vec<LoadedRun> = runs.iter().flatten().cloned().collect();
    let groups: Vec<GroupInput> = runs
        .into_iter()
        .zip(&names)
        .map(|(runs, name)| GroupInput { reference: format!("label:{name}"), runs })
        .collect();
    let study = Study::of_groups(&groups, 0, &Criteria::default(), &pool).expect("a study");
    let m = study
        .metrics
        .iter()
        .find(|m| m.metric == "exec_metric[default]")
        .expect("the program's metric");
    let c = &m.groups[1];
    let compare = c.verdict.expect("a verdict");
    // The margin rule: a better/worse whose change of medians is under the
    // margin would have been undecided (`same` is judged the same way).
    let margin_rule = match (compare, c.change_pct) {
        (GroupVerdict::Better | GroupVerdict::Worse, Some(d))
            if (d / 100.0).ln_1p().abs() < (Criteria::default().margin_pct / 100.0).ln_1p() =>
        {
            GroupVerdict::Undecided
        }
        (v, _) => v,
    };
    (alone, compare, margin_rule)
}

fn main() {
    let mut trials = 400u32;
    let mut drifts = vec![0.0, 4.0];
    let mut abba = false;
    let mut shapes = vec![2usize, 4];
    let mut noises = vec![0.5, 1.0, 1.5, 2.0, 3.0];
    let mut changes = vec![0.0, 2.0, 3.0, 5.0, 8.0, 10.0];
    let mut sizes = vec![3usize, 5, 10];
    let list = |v: Option<String>, what: &str| -> Vec<f64> {
        v.map(|v| v.split(',').map(|x| x.parse().expect(what)).collect()).expect(what)
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--trials" => trials = args.next().and_then(|v| v.parse().ok()).expect("--trials N"),
            "--drift" => drifts = list(args.next(), "--drift PCT,..."),
            "--noise" => noises = list(args.next(), "--noise PCT,..."),
            "--change" => changes = list(args.next(), "--change PCT,..."),
            "--n" => {
                sizes = list(args.next(), "--n N,...").into_iter().map(|n| n as usize).collect()
            }
            "--order" => abba = args.next().as_deref() == Some("abba"),
            "--shape" => {
                shapes = match args.next().as_deref() {
                    Some("pair") => vec![2],
                    Some("study") => vec![4],
                    Some("both") => vec![2, 4],
                    _ => {
                        eprintln!("power_table: --shape pair|study|both");
                        std::process::exit(2);
                    }
                }
            }
            other => {
                eprintln!("power_table: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let margin = Criteria::default().margin_pct;
    println!(
        "# {} trials per row; order {}; confidence {:.0}%, margin {margin}%; noise = sd of a run's log score; drift per run; n = runs per setting; percent of trials",
        trials,
        if abba { "reversed each round (A B B A ...)" } else { "A B A B ..." },
        Criteria::default().confidence * 100.0
    );
    println!("# pair alone: the pair's own brackets; compare: the study (noise pooled over its settings);");
    println!("# margin rule: compare, if better/worse also needed the change of medians to reach the margin (a rule not in use)");
    let cols = ["decided", "undec.", "wrong"];
    println!(
        "{:>5} {:>6} {:>6} {:>7} {:>3} | {:>8} {:>6} {:>6} | {:>8} {:>6} {:>6} | {:>8} {:>6} {:>6}",
        "shape",
        "drift%",
        "noise%",
        "change%",
        "n",
        cols[0],
        cols[1],
        cols[2],
        cols[0],
        cols[1],
        cols[2],
        cols[0],
        cols[1],
        cols[2]
    );
    println!(
        "{:>33} | {:^22} | {:^22} | {:^22}",
        "", "pair alone", "compare", "margin rule (not in use)"
    );
    for &k in &shapes {
        for &drift in &drifts {
            for &noise in &noises {
                for &change in &changes {
                    for &n in &sizes {
                        // One seed per row, from the row itself: rows do
                        // not depend on which other rows ran.
                        let seed = 0x9E37_79B9_7F4A_7C15u64
                            ^ ((drift * 100.0) as u64) << 48
                            ^ ((noise * 100.0) as u64) << 32
                            ^ ((change * 100.0) as u64) << 16
                            ^ if k == 2 { 0 } else { (k as u64) << 8 }
                            ^ n as u64;
                        let mut rng = Rng(seed | 1);
                        let (mut alone, mut compare, mut margin_rule) =
                            (Tally::default(), Tally::default(), Tally::default());
                        for _ in 0..trials {
                            let (b, a, i) = one_study(
                                &mut rng,
                                k,
                                n,
                                noise / 100.0,
                                change / 100.0,
                                drift / 100.0,
                                abba,
                            );
                            alone.add(b, change, margin);
                            compare.add(a, change, margin);
                            margin_rule.add(i, change, margin);
                        }
                        let pct = |x: u32| 100.0 * x as f64 / trials as f64;
                        let shape = if k == 2 { "pair".to_string() } else { format!("{k}x{n}") };
                        println!(
                            "{shape:>5} {drift:>6.1} {noise:>6.1} {change:>7.1} {n:>3} | {:>8.1} {:>6.1} {:>6.1} | {:>8.1} {:>6.1} {:>6.1} | {:>8.1} {:>6.1} {:>6.1}",
                            pct(alone.decided),
                            pct(alone.undecided),
                            pct(alone.wrong),
                            pct(compare.decided),
                            pct(compare.undecided),
                            pct(compare.wrong),
                            pct(margin_rule.decided),
                            pct(margin_rule.undecided),
                            pct(margin_rule.wrong)
                        );
                    }
                }
            }
        }
    }
}
