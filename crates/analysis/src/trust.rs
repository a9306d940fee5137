//! Whether a figure can be trusted as it stands: a record that says
//! `stable: false` was either disturbed (samples or repetitions discarded
//! because the thread waited for its CPU) or noisy (the repetitions never
//! settled). The report marks such figures `(disturbed)` or `(noisy)`.
//!
//! Figures of one run can also contradict each other: a thread-scaling
//! point on some CPUs cannot beat, beyond the noise, what local bandwidth
//! reached with the same kernel on those CPUs and more
//! ([`contradictions`]). One of the two was held back (by other work, or
//! a repetition the stopping rule took as settled), so both are flagged.

use results::bw::{BwResult, Mode};
use results::disturbance::Disturbance;
use results::lat::{LatResult, LoadedPoint};

use crate::data::RunData;

/// Why a figure is not to be trusted as it stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Distrust {
    /// Samples or repetitions were discarded because the thread waited for
    /// its CPU; the cause names the CPU and the share of time lost.
    Disturbed(String),
    /// The best repetitions still spread this much (%) when the time ran
    /// out.
    Noisy { top_spread_pct: f64 },
}

/// The distrust of a bandwidth result (`stable: false`): disturbed when
/// it lost samples to other work, else noisy.
pub fn of_bw(p: &BwResult) -> Option<Distrust> {
    if p.stable {
        return None;
    }
    match &p.disturbance {
        Some(d) if d.disturbed > 0 || d.lost_pct > 0.0 => Some(Distrust::Disturbed(d.cause())),
        _ => Some(Distrust::Noisy { top_spread_pct: p.top_spread_pct }),
    }
}

/// The distrust of a latency figure from its `stable` and `disturbance`:
/// a latency figure that is not stable had too few clean samples.
pub fn of_lat(stable: bool, d: Option<&Disturbance>) -> Option<Distrust> {
    if stable {
        return None;
    }
    Some(match d {
        Some(d) => Distrust::Disturbed(d.cause()),
        None => Distrust::Disturbed("too few clean samples".into()),
    })
}

/// The distrust of a chase.
pub fn of_chase(p: &LatResult) -> Option<Distrust> {
    of_lat(p.stable, p.disturbance.as_ref())
}

/// The distrust of a loaded-latency point.
pub fn of_loaded(p: &LoadedPoint) -> Option<Distrust> {
    of_lat(p.stable, p.disturbance.as_ref())
}

/// The least excess, %, called a contradiction whatever the noise: two
/// bests of the same work on the same CPUs differ by a few % from turbo
/// and timer granularity alone.
pub const CONTRADICTION_MIN_PCT: f64 = 5.0;

/// A scaling point above the local figure of the same CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction<'a> {
    /// The thread-scaling point.
    pub scaling: &'a BwResult,
    /// The local result on a superset of its CPUs, same kernel, stores and
    /// memory node (the best of such, when there are several).
    pub local: &'a BwResult,
    /// How far the scaling point's best is above the local best, %.
    pub excess_pct: f64,
    /// What the noise allows, %: the two results' noise of their best
    /// repetitions added, at least [`CONTRADICTION_MIN_PCT`].
    pub allowed_pct: f64,
}

/// The noise of a best repetition, %: the spread of the best repetitions
/// (what the stopping rule settles), else three robust CVs of the spread
/// of all (records without the top spread).
pub fn best_noise_pct(p: &BwResult) -> f64 {
    if p.top_spread_pct.is_finite() && p.top_spread_pct > 0.0 {
        return p.top_spread_pct;
    }
    p.noise().map_or(0.0, |n| 3.0 * n)
}

/// Scaling points that beat, beyond the noise, the local figure measured
/// with the same kernel and stores on a superset of their CPUs and the same
/// memory node: more threads on the same memory never lose that much, so
/// one of the two figures is wrong.
pub fn contradictions(d: &RunData) -> Vec<Contradiction<'_>> {
    let mut out = Vec::new();
    for s in d.bw_mode(Mode::Scaling) {
        if !(s.best_gbs.is_finite() && s.best_gbs > 0.0) || s.cpus.is_empty() {
            continue;
        }
        let local = d
            .bw_mode(Mode::Local)
            .filter(|l| {
                l.kernel == s.kernel
                    && l.stores == s.stores
                    && l.mem_node == s.mem_node
                    && l.best_gbs.is_finite()
                    && l.best_gbs > 0.0
                    && s.cpus.is_subset(&l.cpus)
            })
            .max_by(|a, b| a.best_gbs.total_cmp(&b.best_gbs));
        let Some(l) = local else { continue };
        let excess_pct = (s.best_gbs / l.best_gbs - 1.0) * 100.0;
        let allowed_pct = (best_noise_pct(s) + best_noise_pct(l)).max(CONTRADICTION_MIN_PCT);
        if excess_pct > allowed_pct {
            out.push(Contradiction { scaling: s, local: l, excess_pct, allowed_pct });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
    use results::Record;
    use serde_json::json;

    #[test]
    fn unstable_bandwidth_is_disturbed_when_it_lost_samples_else_noisy() {
        let d = data(vec![
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": true}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": false,
                "disturbance": {"clean": 2, "disturbed": 9, "lost_pct": 48.2, "busiest_cpu": 0,
                "involuntary_switches": 3, "migrations": 0, "source": "run-delay"}}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": false,
                "top_spread_pct": 7.5}),
            ),
        ]);
        assert_eq!(of_bw(&d.bw[0]), None);
        assert!(matches!(of_bw(&d.bw[1]), Some(Distrust::Disturbed(c)) if c.contains("48%")));
        assert_eq!(of_bw(&d.bw[2]), Some(Distrust::Noisy { top_spread_pct: 7.5 }));
        assert_eq!(of_lat(true, None), None);
        assert_eq!(of_lat(false, None), Some(Distrust::Disturbed("too few clean samples".into())));
    }

    fn bw_at(mode: &str, cpus: &str, threads: usize, best: f64, top: f64) -> Record {
        rec(
            "bw",
            json!({"mode": mode, "kernel": "triad", "stores": "nt", "cpus": cpus,
                "threads": threads, "cpu_node": 0, "mem_node": 0, "best_gbs": best,
                "spread_pct": 3.0, "top_spread_pct": top, "reps": 20, "stable": true}),
        )
    }

    /// The run: 2-thread scaling at 103 GB/s where local triad on
    /// the same CPUs reached 53.6.
    #[test]
    fn scaling_above_local_on_the_same_cpus_is_a_contradiction() {
        let d = data(vec![
            bw_at("local", "0-1", 2, 53.6, 2.0),
            bw_at("scaling", "0", 1, 50.0, 2.0),
            bw_at("scaling", "0-1", 2, 103.0, 2.0),
        ]);
        let c = contradictions(&d);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].scaling.threads, c[0].local.best_gbs), (2, 53.6));
        assert!((c[0].excess_pct - (103.0 / 53.6 - 1.0) * 100.0).abs() < 1e-9);
        assert_eq!(c[0].allowed_pct, 5.0);
    }

    /// Within the noise, on other CPUs, another kernel or other stores:
    /// no contradiction.
    #[test]
    fn what_the_noise_allows_or_other_work_is_no_contradiction() {
        // 8% above, but the two bests wobble 6% + 4%.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 6.0), bw_at("scaling", "0-1", 2, 54.0, 4.0)]);
        assert!(contradictions(&d).is_empty());
        // The same 8% with settled bests is one.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), bw_at("scaling", "0-1", 2, 54.0, 1.0)]);
        assert_eq!(contradictions(&d).len(), 1);
        // CPUs 2-3 were not part of the local run.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), bw_at("scaling", "2-3", 2, 90.0, 1.0)]);
        assert!(contradictions(&d).is_empty());
        // Regular stores against nt stores: different work.
        let mut other = bw_at("scaling", "0-1", 2, 90.0, 1.0);
        if let Record::Bw(b) = &mut other {
            b.stores = results::bw::Stores::Regular;
        }
        let d = data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), other]);
        assert!(contradictions(&d).is_empty());
    }
}
