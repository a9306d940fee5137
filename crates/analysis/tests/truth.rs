//! The analysis against a simulated truth it never saw (docs/testing.md,
//! "The simulated truth"): random machines built from hardware limits
//! (crate `simmodel`) write settings studies as `numaprobe run` stores
//! them, with noise, drift and disturbed runs; `Study::of_groups` judges
//! them in process; each profile's pick is held against the best setting
//! the profile's premise gives on the model's own, noise-free figures.
//!
//! `cargo test -p analysis --test truth -- --nocapture` prints the
//! confusion table (right / undecided / wrong per profile) and the time
//! taken. `NUMAPROBE_TRUTH_CASES` sets the number of random models
//! (default 500), `NUMAPROBE_TRUTH_SEED` the generator's seed (default
//! fixed, so that CI sees the same models every time),
//! `NUMAPROBE_TRUTH_SHOW` how many wrong picks to print (default 40).

use std::collections::BTreeMap;
use std::time::Instant;

use analysis::study::{ForWhom, GroupInput, Study};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRng, TestRunner};
use results::run::LoadedRun;
use results::runstats::Criteria;
use simmodel::runs;
use simmodel::truth::{truths, Bands, Truth};
use simmodel::view::View;

/// The groups of a modelled study, one per setting in the study's order,
/// and every run (the noise floors' pool `compare` reads: every complete
/// run of the machine).
fn groups(s: &runs::Study) -> (Vec<GroupInput>, Vec<LoadedRun>) {
    let all = s.runs();
    let g = s
        .labels
        .iter()
        .map(|l| GroupInput {
            reference: format!("label:{l}"),
            runs: all.iter().filter(|r| r.summary.label.as_deref() == Some(l)).cloned().collect(),
        })
        .collect();
    (g, all)
}

/// The study of a modelled study's runs, as `compare` builds it.
fn judge(s: &runs::Study) -> Study {
    let (g, pool) = groups(s);
    Study::of_groups(&g, 0, &Criteria::default(), &pool).expect("a study")
}

/// The truth of a modelled study: margin the default 3%; near-margin
/// band three times its noise for what may come out either way, twice it
/// for what counts as clear.
fn truth_of(s: &runs::Study) -> (Vec<Truth>, Vec<Truth>) {
    let views: Vec<View> = s.settings.iter().map(|x| View::new(&s.machine, *x)).collect();
    let margin = Criteria::default().margin_pct / 100.0;
    (
        truths(&views, margin, Bands::of(&s.noise, 3.0)),
        truths(&views, margin, Bands::of(&s.noise, 2.0)),
    )
}

#[derive(Default, Clone, Copy)]
struct Tally {
    right: usize,
    undecided: usize,
    wrong: usize,
    clear: usize,
    clear_decided: usize,
}

/// One case's outcome per profile, and any wrong pick described.
fn check(seed: u64, table: &mut BTreeMap<&'static str, Tally>, wrong: &mut Vec<String>) {
    let s = simmodel::random::study(seed);
    let st = judge(&s);
    let (accept, clear) = truth_of(&s);
    for (t, c) in accept.iter().zip(&clear) {
        let rec = st
            .recommendations
            .iter()
            .find(|r| matches!(&r.profile, ForWhom::Workload(p) if p.name() == t.profile))
            .unwrap_or_else(|| panic!("seed {seed:#x}: no {} recommendation", t.profile));
        let e = table.entry(t.profile).or_default();
        let is_clear = c.clear && s.runs_per_setting >= 3 && s.noise.outlier.is_none();
        if is_clear {
            e.clear += 1;
        }
        match rec.group {
            None => e.undecided += 1,
            Some(g) if t.acceptable.contains(&g) => {
                e.right += 1;
                if is_clear {
                    e.clear_decided += 1;
                }
            }
            Some(g) => {
                e.wrong += 1;
                wrong.push(format!(
                    "seed {seed:#x} {}: picked {} ({}), truth {:?} (acceptable {:?}, by {:?}); settings {:?}; {:?}",
                    t.profile,
                    s.labels[g],
                    rec.decided_by.as_ref().map_or("-".to_string(), |m| m.to_string()),
                    t.pick.map(|p| &s.labels[p]),
                    t.acceptable.iter().map(|&a| &s.labels[a]).collect::<Vec<_>>(),
                    t.decided_by,
                    s.labels,
                    rec.reasons
                ));
            }
        }
    }
}

#[test]
fn no_pick_is_wrong_over_random_models_and_clear_cases_are_decided() {
    let cases: u32 =
        std::env::var("NUMAPROBE_TRUTH_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500);
    let seed: u64 = std::env::var("NUMAPROBE_TRUTH_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_0047);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config { cases, ..Config::default() },
        TestRng::from_seed(proptest::test_runner::RngAlgorithm::ChaCha, &key),
    );
    let started = Instant::now();
    let mut table: BTreeMap<&'static str, Tally> = BTreeMap::new();
    let mut wrong = Vec::new();
    let strategy = proptest::num::u64::ANY;
    for _ in 0..cases {
        let model_seed = strategy.new_tree(&mut runner).expect("a seed").current();
        check(model_seed, &mut table, &mut wrong);
    }
    let took = started.elapsed();
    println!("{cases} random models in {:.1} s", took.as_secs_f64());
    println!(
        "{:<16} {:>6} {:>10} {:>6}   {:>6} {:>14}",
        "profile", "right", "undecided", "wrong", "clear", "clear decided"
    );
    let mut clear = (0, 0);
    for (p, t) in &table {
        println!(
            "{p:<16} {:>6} {:>10} {:>6}   {:>6} {:>14}",
            t.right, t.undecided, t.wrong, t.clear, t.clear_decided
        );
        clear.0 += t.clear;
        clear.1 += t.clear_decided;
    }
    let rate = clear.1 as f64 / clear.0.max(1) as f64;
    println!("clear cases decided: {} of {} ({:.1}%)", clear.1, clear.0, rate * 100.0);
    let show: usize =
        std::env::var("NUMAPROBE_TRUTH_SHOW").ok().and_then(|v| v.parse().ok()).unwrap_or(40);
    for w in wrong.iter().take(show) {
        println!("WRONG {w}");
    }
    assert!(wrong.is_empty(), "{} wrong picks (first: {})", wrong.len(), wrong[0]);
    assert!(clear.0 >= 50, "too few clear cases to judge: {}", clear.0);
    assert!(rate >= 0.95, "clear cases decided in {:.1}% (at least 95%)", rate * 100.0);
}
