//! Whether a figure can be trusted as it stands: a record that says
//! `stable: false` was either disturbed (samples or repetitions discarded
//! because the thread waited for its CPU) or noisy (the repetitions never
//! settled). The report marks such figures `(disturbed)` or `(noisy)`.

use results::bw::BwResult;
use results::disturbance::Disturbance;
use results::lat::{LatResult, LoadedPoint};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
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
}
