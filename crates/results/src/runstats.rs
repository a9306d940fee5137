//! Verdicts between groups of runs: does a setting change a metric, judged
//! from the spread between runs (never from the repetitions inside one run).
//!
//! Method (documented for users in `docs/store.md`):
//!
//! * Each run gives one value per metric. A group's figure is the median of
//!   its runs; the change is `median(group) / median(baseline) - 1`.
//! * The confidence interval is the distribution-free interval for a shift
//!   of the log values (Moses 1965; Hollander & Wolfe, *Nonparametric
//!   Statistical Methods*, §4.3), the one that goes with the Mann–Whitney
//!   rank test: the `k`-th smallest and `k`-th largest of the `m x n`
//!   differences `ln(new_j) - ln(base_i)`, with `k` chosen from the exact
//!   null distribution of the Mann–Whitney count so that the coverage is at
//!   least the confidence asked (90% by default). It assumes only that runs
//!   are exchangeable within a group; it holds for any distribution shape,
//!   bimodal included, and for 3 to 5 runs per group its coverage is exact,
//!   not asymptotic. On the log scale a shift is a ratio, so the interval is
//!   reported as percent changes.
//! * Verdicts: `same` when the whole interval lies inside the equivalence
//!   margin (`±margin_pct`); `better`/`worse` when the interval excludes no
//!   change (lies entirely on one side of 0) and the change of medians is at
//!   least the margin; otherwise `undecided`.
//! * An interval exists only when the groups are large enough for the
//!   confidence asked (at 90%: 3+3, 2+5, 1+19 runs). Below that (one run per
//!   side, say) the change must exceed a [`NoiseFloor`] measured from
//!   repeated runs of identical settings to be `better`/`worse`; otherwise
//!   the verdict is `undecided` with the runs that would decide it.

use serde::{Deserialize, Serialize};

use crate::stats::percentile_sorted;

/// The verdict on one metric of one group against the baseline group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupVerdict {
    Better,
    Worse,
    /// The interval excludes any change larger than the margin.
    Same,
    /// Not enough evidence either way.
    Undecided,
}

impl GroupVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            GroupVerdict::Better => "better",
            GroupVerdict::Worse => "worse",
            GroupVerdict::Same => "same",
            GroupVerdict::Undecided => "undecided",
        }
    }
}

/// The largest change seen between runs of identical settings on one
/// machine: below it, one run per side cannot tell a change from noise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoiseFloor {
    /// Percent (of the smaller value's ratio, see [`noise_floor_pct`]).
    pub pct: f64,
    /// Where it was measured, for the reader ("12 runs of config 3f2a… on
    /// this machine").
    pub source: String,
}

/// How a verdict was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// The rank interval between groups.
    Interval,
    /// The noise floor decided: too few runs for an interval (the change
    /// against the floor), or a change inside the spread of groups of
    /// identical settings.
    NoiseFloor,
    /// Too few runs and no noise floor known.
    TooFewRuns,
}

/// Parameters of a judgement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    /// Two-sided confidence of the interval, e.g. 0.90.
    pub confidence: f64,
    /// Changes smaller than this (percent) do not matter: the equivalence
    /// margin for `same`, and the smallest change called `better`/`worse`.
    pub margin_pct: f64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { confidence: DEFAULT_CONFIDENCE, margin_pct: DEFAULT_MARGIN_PCT }
    }
}

/// The default two-sided confidence: the highest that 3 runs per side can
/// reach (the exact rank test's smallest two-sided p-value at 3+3 is 0.10).
pub const DEFAULT_CONFIDENCE: f64 = 0.90;
/// The default equivalence margin, percent.
pub const DEFAULT_MARGIN_PCT: f64 = 3.0;
/// A change equal to the floor (the very pair of runs the floor was
/// measured from) is within it, whatever the rounding (log units).
const FLOOR_TOLERANCE: f64 = 1e-9;
/// The most runs per side [`Judgement::runs_needed`] suggests.
pub const MAX_RUNS_SUGGESTED: u32 = 30;

/// One group's metric judged against the baseline group's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgement {
    pub n_base: usize,
    pub n: usize,
    pub median_base: f64,
    pub median: f64,
    /// `median / median_base - 1`, percent.
    pub change_pct: f64,
    /// The interval's ends, percent (`None` when the groups are too small
    /// for the confidence asked).
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    /// The interval's exact coverage (at least the confidence asked).
    pub coverage: Option<f64>,
    pub verdict: GroupVerdict,
    pub basis: Basis,
    /// For `undecided`: runs per group that would likely decide (at most
    /// [`MAX_RUNS_SUGGESTED`]; `None` when even that would not).
    pub runs_needed: Option<u32>,
}

/// Number of ways to get each Mann–Whitney count `u` (0..=m*n) from two
/// groups of `m` and `n` exchangeable values, as `f64` (exact to 2^53).
fn mann_whitney_counts(m: usize, n: usize) -> Vec<f64> {
    // f[j][u] for groups (i, j): built up over i.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect(); // i = 0
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]); // j = 0
        for j in 1..=n {
            let len = i * j + 1;
            let mut v = vec![0.0; len];
            // f(i, j, u) = f(i-1, j, u - j) + f(i, j-1, u)
            for (u, x) in prev[j].iter().enumerate() {
                v[u + j] += x;
            }
            for (u, x) in cur[j - 1].iter().enumerate() {
                v[u] += x;
            }
            cur.push(v);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The rank `k` (1-based) of the interval's ends among the sorted
/// differences, and the interval's coverage; `None` when no `k` reaches
/// `confidence` (the groups are too small).
pub fn interval_rank(m: usize, n: usize, confidence: f64) -> Option<(usize, f64)> {
    if m == 0 || n == 0 {
        return None;
    }
    let counts = mann_whitney_counts(m, n);
    let total: f64 = counts.iter().sum();
    let alpha_half = (1.0 - confidence) / 2.0;
    let mut cum = 0.0;
    let mut best = None;
    for (u, c) in counts.iter().enumerate() {
        cum += c;
        // P(U <= u): leaving u+1 differences out at each end keeps coverage
        // 1 - 2 P(U <= u).
        if cum / total <= alpha_half + 1e-12 {
            best = Some((u + 1, 1.0 - 2.0 * cum / total));
        } else {
            break;
        }
    }
    best
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    percentile_sorted(&s, 50.0)
}

fn pct(log_ratio: f64) -> f64 {
    log_ratio.exp_m1() * 100.0
}

/// Spread of log values for planning more runs: the sample standard
/// deviation (not a robust one: an outlying run is exactly the run-to-run
/// variation more runs must average out).
fn log_spread(logs: &[f64]) -> f64 {
    if logs.len() < 2 {
        return 0.0;
    }
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let ss: f64 = logs.iter().map(|x| (x - mean).powi(2)).sum();
    (ss / (logs.len() - 1) as f64).sqrt()
}

/// The upper standard normal quantile for a two-sided confidence (a
/// rational approximation, Abramowitz & Stegun 26.2.23, |error| < 4.5e-4).
fn z_two_sided(confidence: f64) -> f64 {
    let p = ((1.0 - confidence) / 2.0).clamp(1e-12, 0.5);
    let t = (-2.0 * p.ln()).sqrt();
    t - (2.515517 + 0.802853 * t + 0.010328 * t * t)
        / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
}

/// Smallest equal group size for which the interval exists at `confidence`.
fn min_runs_for_interval(confidence: f64) -> u32 {
    (1..=MAX_RUNS_SUGGESTED as usize)
        .find(|&k| interval_rank(k, k, confidence).is_some())
        .unwrap_or(MAX_RUNS_SUGGESTED as usize) as u32
}

/// Runs per group likely to decide, from the pooled spread of the log
/// values: the interval's half-width (about `z s sqrt(2/n)`) must fit
/// between the change and zero (when the change is beyond the margin) or
/// between the change and the margin (when it is inside).
fn runs_to_decide(
    change: f64,
    spread: f64,
    margin: f64,
    policy: &Policy,
    have: usize,
) -> Option<u32> {
    let floor = min_runs_for_interval(policy.confidence).max(have as u32 + 1);
    let gap = if change.abs() >= margin { change.abs() } else { margin - change.abs() };
    if spread <= 0.0 {
        return Some(floor);
    }
    if gap <= 0.0 {
        return None;
    }
    let z = z_two_sided(policy.confidence);
    let n = (2.0 * (z * spread / gap).powi(2)).ceil();
    let n = (n as u32).max(floor);
    (n <= MAX_RUNS_SUGGESTED).then_some(n)
}

/// Judges `new` against `base` (one value per run, positive, same unit).
/// `None` when either side has no usable value.
pub fn judge(
    base: &[f64],
    new: &[f64],
    higher_is_better: bool,
    policy: &Policy,
    floor: Option<&NoiseFloor>,
) -> Option<Judgement> {
    let ok = |v: &&f64| v.is_finite() && **v > 0.0;
    let b: Vec<f64> = base.iter().filter(ok).map(|v| v.ln()).collect();
    let x: Vec<f64> = new.iter().filter(ok).map(|v| v.ln()).collect();
    if b.is_empty() || x.is_empty() {
        return None;
    }
    let (mb, mx) = (median(&b), median(&x));
    let change = mx - mb;
    let margin = (1.0 + policy.margin_pct / 100.0).ln();
    let good = |d: f64| if higher_is_better { d > 0.0 } else { d < 0.0 };
    let mut j = Judgement {
        n_base: b.len(),
        n: x.len(),
        median_base: mb.exp(),
        median: mx.exp(),
        change_pct: pct(change),
        ci_low_pct: None,
        ci_high_pct: None,
        coverage: None,
        verdict: GroupVerdict::Undecided,
        basis: Basis::TooFewRuns,
        runs_needed: None,
    };
    let spread = {
        let (sb, sx) = (log_spread(&b), log_spread(&x));
        match (b.len() > 1, x.len() > 1) {
            (true, true) => ((sb * sb + sx * sx) / 2.0).sqrt(),
            (true, false) => sb,
            (false, true) => sx,
            (false, false) => 0.0,
        }
    };
    match interval_rank(b.len(), x.len(), policy.confidence) {
        Some((k, coverage)) => {
            let mut d: Vec<f64> = b.iter().flat_map(|bi| x.iter().map(move |xj| xj - bi)).collect();
            d.sort_by(|p, q| p.total_cmp(q));
            let (lo, hi) = (d[k - 1], d[d.len() - k]);
            j.ci_low_pct = Some(pct(lo));
            j.ci_high_pct = Some(pct(hi));
            j.coverage = Some(coverage);
            j.basis = Basis::Interval;
            // The interval lies on one side of zero, and the change of
            // medians on that same side, at least the margin away.
            let side = if lo > 0.0 {
                1.0
            } else if hi < 0.0 {
                -1.0
            } else {
                0.0
            };
            let beyond = side != 0.0 && change * side >= margin;
            // Runs taken back to back share the machine's state (load,
            // thermals, placement), so a group can drift as a whole: a
            // change must also exceed the spread seen between groups of
            // identical settings on this machine, when it was measured.
            let below_floor =
                floor.is_some_and(|f| change.abs() <= (1.0 + f.pct / 100.0).ln() + FLOOR_TOLERANCE);
            j.verdict = if lo > -margin && hi < margin {
                GroupVerdict::Same
            } else if beyond && below_floor {
                j.basis = Basis::NoiseFloor;
                GroupVerdict::Undecided
            } else if beyond && good(change) {
                GroupVerdict::Better
            } else if beyond {
                GroupVerdict::Worse
            } else {
                GroupVerdict::Undecided
            };
            if j.verdict == GroupVerdict::Undecided && j.basis == Basis::Interval {
                j.runs_needed =
                    runs_to_decide(change, spread, margin, policy, b.len().max(x.len()));
            }
        }
        None => {
            let need = min_runs_for_interval(policy.confidence);
            match floor {
                Some(f)
                    if change.abs() > (1.0 + f.pct / 100.0).ln() + FLOOR_TOLERANCE
                        && change.abs() >= margin =>
                {
                    j.basis = Basis::NoiseFloor;
                    j.verdict =
                        if good(change) { GroupVerdict::Better } else { GroupVerdict::Worse };
                }
                // The floor bounds what noise can do to one run: a change
                // that stays inside the margin even when widened by it is same.
                Some(f) if change.abs() + (1.0 + f.pct / 100.0).ln() < margin => {
                    j.basis = Basis::NoiseFloor;
                    j.verdict = GroupVerdict::Same;
                }
                Some(_) => {
                    j.basis = Basis::NoiseFloor;
                    j.runs_needed = Some(need);
                }
                None => {
                    j.runs_needed = Some(need);
                }
            }
        }
    }
    Some(j)
}

/// The noise floor of a metric from groups of runs of identical settings
/// (each inner slice one configuration's runs): the largest ratio between
/// any two runs of one group, as a percent change (`max / min - 1`). `None`
/// when no group has two usable runs.
pub fn noise_floor_pct(groups: &[Vec<f64>]) -> Option<f64> {
    let mut worst: Option<f64> = None;
    for g in groups {
        let v: Vec<f64> = g.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
        if v.len() < 2 {
            continue;
        }
        let (lo, hi) = v.iter().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(*x), b.max(*x)));
        let r = (hi / lo - 1.0) * 100.0;
        worst = Some(worst.map_or(r, |w: f64| w.max(r)));
    }
    worst
}

/// The noise floor for comparing groups of `k` runs: each inner slice is
/// one configuration's runs in time order, cut into consecutive blocks of
/// `k` runs; the floor is the widest ratio between two block medians of one
/// configuration (`max / min - 1`, percent). `k = 1` is [`noise_floor_pct`].
/// `None` when no configuration has two full blocks.
pub fn block_floor_pct(series: &[Vec<f64>], k: usize) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let medians: Vec<Vec<f64>> = series
        .iter()
        .map(|runs| {
            let v: Vec<f64> = runs.iter().copied().filter(|v| v.is_finite() && *v > 0.0).collect();
            v.chunks_exact(k).map(median).collect()
        })
        .collect();
    noise_floor_pct(&medians)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p() -> Policy {
        Policy::default()
    }

    #[test]
    fn mann_whitney_counts_match_the_binomial_totals() {
        // The counts of U over all splits sum to C(m+n, m) and are symmetric.
        for (m, n, total) in [(3, 3, 20.0), (4, 4, 70.0), (3, 5, 56.0), (1, 1, 2.0), (5, 5, 252.0)]
        {
            let c = mann_whitney_counts(m, n);
            assert_eq!(c.len(), m * n + 1);
            assert_eq!(c.iter().sum::<f64>(), total, "{m}x{n}");
            let rev: Vec<f64> = c.iter().rev().copied().collect();
            assert_eq!(c, rev);
        }
        // 3 + 3: U = 0 and U = 1 happen once each, U = 2 twice.
        assert_eq!(&mann_whitney_counts(3, 3)[..3], &[1.0, 1.0, 2.0]);
    }

    #[test]
    fn interval_ranks_are_exact() {
        // 3 + 3 at 90%: the full range, coverage 1 - 2/20.
        let (k, cov) = interval_rank(3, 3, 0.90).unwrap();
        assert_eq!(k, 1);
        assert!((cov - 0.9).abs() < 1e-12);
        // Too small at 90%: 2 + 2, 1 + 1, 1 + 5.
        assert!(interval_rank(2, 2, 0.90).is_none());
        assert!(interval_rank(1, 1, 0.90).is_none());
        assert!(interval_rank(1, 5, 0.90).is_none());
        // 3 + 3 cannot reach 95%; 4 + 4 can (2/70).
        assert!(interval_rank(3, 3, 0.95).is_none());
        assert_eq!(interval_rank(4, 4, 0.95).unwrap().0, 1);
        // 5 + 5 at 90%: P(U <= 4) = 12/252 <= 0.05, P(U <= 5) = 19/252 > 0.05.
        let (k, cov) = interval_rank(5, 5, 0.90).unwrap();
        assert_eq!(k, 5);
        assert!((cov - (1.0 - 24.0 / 252.0)).abs() < 1e-12);
        assert_eq!(min_runs_for_interval(0.90), 3);
        assert_eq!(min_runs_for_interval(0.95), 4);
    }

    #[test]
    fn z_is_close_to_the_normal_quantile() {
        assert!((z_two_sided(0.90) - 1.6449).abs() < 1e-3);
        assert!((z_two_sided(0.95) - 1.9600).abs() < 1e-3);
    }

    #[test]
    fn a_clear_improvement_of_twenty_percent_is_better() {
        let base = [100.0, 102.0, 98.0];
        let new = [120.0, 122.5, 118.0];
        let j = judge(&base, &new, true, &p(), None).unwrap();
        assert_eq!(j.verdict, GroupVerdict::Better);
        assert!((j.change_pct - 20.0).abs() < 1e-9);
        assert!(j.ci_low_pct.unwrap() > 15.0 && j.ci_high_pct.unwrap() < 26.0, "{j:?}");
        // Lower is better (latency): the same figures are worse.
        assert_eq!(judge(&base, &new, false, &p(), None).unwrap().verdict, GroupVerdict::Worse);
    }

    #[test]
    fn five_percent_with_one_percent_noise_is_better_and_with_eight_undecided() {
        let base = [100.0, 101.0, 99.0];
        let quiet = [105.0, 106.0, 104.1];
        assert_eq!(judge(&base, &quiet, true, &p(), None).unwrap().verdict, GroupVerdict::Better);
        let noisy_base = [100.0, 92.0, 108.0];
        let noisy = [105.0, 97.0, 113.0];
        let j = judge(&noisy_base, &noisy, true, &p(), None).unwrap();
        assert_eq!(j.verdict, GroupVerdict::Undecided);
        let n = j.runs_needed.expect("a number of runs");
        assert!((4..=MAX_RUNS_SUGGESTED).contains(&n), "{n}");
    }

    #[test]
    fn bimodal_runs_with_the_same_modes_are_never_different() {
        // Each run lands in one of two modes (vCPU placement, page colouring):
        // 60 or 90 GB/s. Groups drawing the same modes differ by chance only.
        let a = [60.0, 90.0, 61.0, 89.0];
        let b = [90.5, 60.5, 90.0, 59.5];
        let j = judge(&a, &b, true, &p(), None).unwrap();
        assert_eq!(j.verdict, GroupVerdict::Undecided, "{j:?}");
        // All of one mode against all of the other is a real change.
        let lo = [60.0, 61.0, 59.5];
        let hi = [90.0, 89.0, 91.0];
        assert_eq!(judge(&lo, &hi, true, &p(), None).unwrap().verdict, GroupVerdict::Better);
    }

    #[test]
    fn tight_groups_within_the_margin_are_same() {
        let a = [100.0, 100.5, 99.6, 100.2];
        let b = [100.4, 99.9, 100.8, 100.1];
        let j = judge(&a, &b, true, &p(), None).unwrap();
        assert_eq!(j.verdict, GroupVerdict::Same, "{j:?}");
        assert!(j.ci_low_pct.unwrap() > -3.0 && j.ci_high_pct.unwrap() < 3.0);
    }

    #[test]
    fn one_run_per_side_needs_the_noise_floor() {
        let floor = NoiseFloor { pct: 40.0, source: "test".into() };
        // +52% over a 40% floor: better; without a floor: undecided.
        let j = judge(&[46.3], &[70.5], true, &p(), Some(&floor)).unwrap();
        assert_eq!((j.verdict, j.basis), (GroupVerdict::Better, Basis::NoiseFloor));
        assert!(j.ci_low_pct.is_none());
        let j = judge(&[46.3], &[70.5], true, &p(), None).unwrap();
        assert_eq!((j.verdict, j.basis), (GroupVerdict::Undecided, Basis::TooFewRuns));
        assert_eq!(j.runs_needed, Some(3));
        // A quiet machine (floor 1%) and a 0.5% change: same.
        let quiet = NoiseFloor { pct: 1.0, source: "test".into() };
        let j = judge(&[100.0], &[100.5], true, &p(), Some(&quiet)).unwrap();
        assert_eq!((j.verdict, j.basis), (GroupVerdict::Same, Basis::NoiseFloor));
        // +30% under the floor: undecided, 3 runs per side would decide.
        let j = judge(&[100.0], &[130.0], true, &p(), Some(&floor)).unwrap();
        assert_eq!(j.verdict, GroupVerdict::Undecided);
        assert_eq!(j.runs_needed, Some(3));
    }

    #[test]
    fn the_noise_floor_is_the_widest_ratio_within_a_group() {
        let g = vec![vec![10.0, 12.0, 11.0], vec![20.0, 30.0], vec![5.0]];
        assert!((noise_floor_pct(&g).unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(noise_floor_pct(&[vec![5.0]]), None);
    }

    #[test]
    fn groups_that_drift_together_stay_within_the_floor() {
        // Three back-to-back runs each, both groups identical settings, but
        // the machine was busier during the second block: every run lower.
        let a = [12.5, 13.0, 12.8];
        let b = [10.4, 10.1, 10.6];
        assert_eq!(judge(&a, &b, true, &p(), None).unwrap().verdict, GroupVerdict::Worse);
        let floor = NoiseFloor { pct: 30.0, source: "blocks".into() };
        let j = judge(&a, &b, true, &p(), Some(&floor)).unwrap();
        assert_eq!((j.verdict, j.basis), (GroupVerdict::Undecided, Basis::NoiseFloor));
        // A change beyond the floor still counts.
        let c = [20.0, 21.0, 20.5];
        assert_eq!(judge(&a, &c, true, &p(), Some(&floor)).unwrap().verdict, GroupVerdict::Better);
    }

    #[test]
    fn block_floors_compare_medians_of_consecutive_runs() {
        let s = vec![vec![10.0, 11.0, 12.0, 20.0, 21.0, 22.0, 5.0]];
        // Blocks of 3: medians 11 and 21 (the 7th run is left over).
        assert!((block_floor_pct(&s, 3).unwrap() - (21.0 / 11.0 - 1.0) * 100.0).abs() < 1e-9);
        assert!((block_floor_pct(&s, 1).unwrap() - 340.0).abs() < 1e-9);
        assert_eq!(block_floor_pct(&s, 4), None);
    }

    #[test]
    fn missing_values_give_no_judgement() {
        assert!(judge(&[], &[1.0], true, &p(), None).is_none());
        assert!(judge(&[f64::NAN, 0.0], &[1.0], true, &p(), None).is_none());
    }

    fn sample() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(1.0f64..1000.0, 1..7)
    }

    proptest! {
        /// The same runs on both sides, in any order, are never better or worse.
        #[test]
        fn identical_groups_are_never_different(v in sample(), floor in 0.0f64..100.0) {
            let mut w = v.clone();
            w.reverse();
            let f = NoiseFloor { pct: floor, source: "p".into() };
            for fl in [None, Some(&f)] {
                let j = judge(&v, &w, true, &p(), fl).unwrap();
                prop_assert!(matches!(j.verdict, GroupVerdict::Same | GroupVerdict::Undecided), "{:?}", j);
                prop_assert!(j.change_pct.abs() < 1e-9);
            }
        }

        /// Swapping the groups swaps better and worse and keeps same/undecided.
        #[test]
        fn swapping_groups_mirrors_the_verdict(a in sample(), b in sample()) {
            let ab = judge(&a, &b, true, &p(), None).unwrap().verdict;
            let ba = judge(&b, &a, true, &p(), None).unwrap().verdict;
            let mirrored = match ab {
                GroupVerdict::Better => GroupVerdict::Worse,
                GroupVerdict::Worse => GroupVerdict::Better,
                v => v,
            };
            prop_assert_eq!(ba, mirrored);
        }

        /// Units do not matter: scaling every run leaves the verdict.
        #[test]
        fn verdicts_are_scale_free(a in sample(), b in sample(), s in 0.01f64..100.0) {
            let j1 = judge(&a, &b, true, &p(), None).unwrap();
            let sa: Vec<f64> = a.iter().map(|x| x * s).collect();
            let sb: Vec<f64> = b.iter().map(|x| x * s).collect();
            let j2 = judge(&sa, &sb, true, &p(), None).unwrap();
            prop_assert_eq!(j1.verdict, j2.verdict);
            prop_assert!((j1.change_pct - j2.change_pct).abs() < 1e-6);
        }

        /// A verdict of better or worse always rests on an interval that
        /// excludes zero on its side and a change beyond the margin (or, with
        /// too few runs, beyond the noise floor).
        #[test]
        fn better_means_the_evidence_says_so(a in sample(), b in sample(), floor in 1.0f64..100.0) {
            let f = NoiseFloor { pct: floor, source: "p".into() };
            let j = judge(&a, &b, true, &p(), Some(&f)).unwrap();
            if j.verdict == GroupVerdict::Better {
                prop_assert!(j.change_pct >= DEFAULT_MARGIN_PCT - 1e-9);
                match j.basis {
                    Basis::Interval => prop_assert!(j.ci_low_pct.unwrap() > 0.0),
                    Basis::NoiseFloor => prop_assert!(j.change_pct > floor),
                    Basis::TooFewRuns => prop_assert!(false, "better without evidence"),
                }
            }
            if j.verdict == GroupVerdict::Same {
                match (j.ci_low_pct, j.ci_high_pct) {
                    (Some(lo), Some(hi)) => {
                        prop_assert!(lo > -DEFAULT_MARGIN_PCT && hi < DEFAULT_MARGIN_PCT);
                    }
                    _ => {
                        // One run per side: the change widened by the floor
                        // stays inside the margin.
                        prop_assert_eq!(j.basis, Basis::NoiseFloor);
                        prop_assert!(floor < DEFAULT_MARGIN_PCT);
                        prop_assert!(j.change_pct.abs() < DEFAULT_MARGIN_PCT);
                    }
                }
            }
        }
    }
}
