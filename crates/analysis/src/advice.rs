//! What a run's figures decide for its recommendations, apart from the
//! words the report writes for them: how large the remote-latency penalty
//! is, how many results had pages away from the node asked for, and how
//! many varied beyond the noisy spread.

use results::bw::NOISY_SPREAD_PCT;

use crate::data::RunData;

/// Remote / local latency from which keeping work and memory on one node
/// pays for latency-sensitive processes.
pub const LARGE_PENALTY: f64 = 1.5;
/// Remote / local latency from which binding helps latency-bound work.
pub const MODERATE_PENALTY: f64 = 1.2;

/// How much remote memory costs in latency against local memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Penalty {
    /// At least [`LARGE_PENALTY`]: keep latency-sensitive work on one node.
    Large,
    /// At least [`MODERATE_PENALTY`]: binding helps latency-bound work.
    Moderate,
    /// Below: interleaving costs little latency.
    Small,
}

impl Penalty {
    /// The band of a remote / local latency ratio.
    pub fn of(ratio: f64) -> Penalty {
        if ratio >= LARGE_PENALTY {
            Penalty::Large
        } else if ratio >= MODERATE_PENALTY {
            Penalty::Moderate
        } else {
            Penalty::Small
        }
    }
}

/// Results whose pages were away from the node asked for (placement
/// flagged): their figures mix nodes.
pub fn misplaced_results(d: &RunData) -> usize {
    (d.bw.iter().map(|b| &b.placement))
        .chain(d.chases.iter().map(|l| &l.placement))
        .chain(d.loaded.iter().map(|l| &l.placement))
        .filter(|p| p.flagged())
        .count()
}

/// Results whose repetitions spread beyond [`NOISY_SPREAD_PCT`].
pub fn noisy_results(d: &RunData) -> usize {
    (d.bw.iter().map(|b| b.spread_pct))
        .chain(d.chases.iter().map(|l| l.spread_pct))
        .chain(d.loaded.iter().map(|l| l.spread_pct))
        .chain(d.c2c.iter().map(|l| l.spread_pct))
        .filter(|s| *s > NOISY_SPREAD_PCT)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
    use serde_json::json;

    #[test]
    fn penalty_bands_start_at_their_thresholds() {
        assert_eq!(Penalty::of(1.5), Penalty::Large);
        assert_eq!(Penalty::of(1.49), Penalty::Moderate);
        assert_eq!(Penalty::of(1.2), Penalty::Moderate);
        assert_eq!(Penalty::of(1.19), Penalty::Small);
    }

    #[test]
    fn noisy_results_are_those_beyond_the_noisy_spread() {
        let b = |spread: f64| {
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 1.0, "spread_pct": spread}),
            )
        };
        let d = data(vec![b(1.0), b(NOISY_SPREAD_PCT), b(NOISY_SPREAD_PCT + 0.1), b(40.0)]);
        assert_eq!(noisy_results(&d), 2);
        assert_eq!(misplaced_results(&d), 0);
    }
}
