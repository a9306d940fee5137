//! How much of a figure's measuring time went to other work: the record
//! every timed figure carries (samples kept and discarded, the share of
//! time its threads waited to run, involuntary switches, migrations) and
//! the rule that calls a figure unstable.
//!
//! A sample is *disturbed* when one of its threads waited to run (it was
//! runnable but another task had its CPU) for more than
//! [`SAMPLE_TOLERANCE_PCT`] of the sample's wall time, or moved to another
//! CPU; disturbed samples are left out of the figure. A figure is
//! *unstable* when too few clean samples remain, or when its threads
//! waited for more than [`LOST_LIMIT_PCT`] of the measuring time: the
//! clean samples then come from the gaps another process left, and the
//! machine was not quiet enough to trust them without a second look.

use serde::{Deserialize, Serialize};

/// A sample whose thread waited to run longer than this share of its wall
/// time (percent) is disturbed. The clock of a clean sample is off by at
/// most this much.
pub const SAMPLE_TOLERANCE_PCT: f64 = 1.0;

/// A figure whose threads waited to run longer than this share of the
/// measuring time (percent) is unstable, however many clean samples it
/// kept.
pub const LOST_LIMIT_PCT: f64 = 10.0;

/// How waiting was told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The thread's run delay (`/proc/thread-self/schedstat`, second
    /// field: ns spent runnable but not running).
    #[default]
    RunDelay,
    /// No run delay to read (a kernel without schedstat): a sample with
    /// any involuntary context switch counts as disturbed.
    Switches,
}

/// The disturbance of one figure's samples (or repetitions).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Disturbance {
    /// Samples kept: no thread waited beyond the tolerance or moved.
    pub clean: usize,
    /// Samples discarded.
    pub disturbed: usize,
    /// Share of the measuring wall time (every sample, kept or not) the
    /// most delayed thread spent waiting to run, percent.
    pub lost_pct: f64,
    /// The CPU of that thread (`None` when no thread waited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busiest_cpu: Option<u32>,
    /// Involuntary context switches of the measuring threads over all
    /// samples.
    pub involuntary_switches: u64,
    /// Samples during which a measuring thread changed CPU.
    pub migrations: u64,
    pub source: Source,
}

impl Disturbance {
    /// Whether the figure can be trusted: at least `min_clean` clean
    /// samples, and no more than [`LOST_LIMIT_PCT`] of the time lost.
    pub fn stable(&self, min_clean: usize) -> bool {
        self.clean >= min_clean.max(1) && self.lost_pct <= LOST_LIMIT_PCT
    }

    /// The cause in words, for the one-line warning:
    /// "CPU 0 was busy with other processes for 48% of the time (9 of 11
    /// samples discarded)". Each part is said only when it holds: a share
    /// of time that rounds to 0% is not "busy", and with nothing discarded
    /// and no time lost the words say so instead of naming a busy CPU.
    pub fn cause(&self) -> String {
        let cpu = self.busiest_cpu.map_or_else(|| "the CPU".to_string(), |c| format!("CPU {c}"));
        let mut parts = Vec::new();
        if self.lost_pct >= 0.5 && self.source == Source::RunDelay {
            parts.push(format!(
                "{cpu} was busy with other processes for {:.0}% of the time",
                self.lost_pct
            ));
        } else if self.involuntary_switches > 0 && self.disturbed > 0 {
            parts.push(format!(
                "the measuring thread was switched out {} time(s)",
                self.involuntary_switches
            ));
        }
        if self.migrations > 0 {
            parts.push(format!("a measuring thread changed CPU in {} sample(s)", self.migrations));
        }
        let total = self.clean + self.disturbed;
        if parts.is_empty() {
            return if self.disturbed > 0 {
                format!("{} of {total} samples discarded", self.disturbed)
            } else {
                format!("no sample was discarded and no time lost ({} clean samples)", self.clean)
            };
        }
        format!("{} ({} of {total} samples discarded)", parts.join("; "), self.disturbed)
    }

    /// Whether the figure lost anything to other work: a sample discarded,
    /// or a measurable share of its time (at least 0.5%, what `cause`
    /// writes as 1%) spent waiting for its CPU.
    pub fn lost_anything(&self) -> bool {
        self.disturbed > 0 || self.lost_pct >= 0.5
    }
}

/// Records written before the check was made carry no disturbance: read
/// them as stable (nothing was flagged then either).
pub fn unchecked_is_stable() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(clean: usize, disturbed: usize, lost_pct: f64) -> Disturbance {
        Disturbance { clean, disturbed, lost_pct, busiest_cpu: Some(0), ..Default::default() }
    }

    #[test]
    fn too_few_clean_samples_or_too_much_time_lost_is_unstable() {
        assert!(d(11, 0, 0.0).stable(6));
        assert!(d(6, 5, 9.0).stable(6));
        assert!(!d(5, 6, 1.0).stable(6), "too few clean samples");
        assert!(!d(11, 3, 48.0).stable(6), "the CPU was busy half the time");
        assert!(!d(0, 0, 0.0).stable(0), "nothing measured is never stable");
    }

    #[test]
    fn the_cause_names_the_cpu_and_the_share() {
        let c = d(2, 9, 48.2).cause();
        assert_eq!(
            c,
            "CPU 0 was busy with other processes for 48% of the time (9 of 11 samples discarded)"
        );
        let s = Disturbance {
            clean: 1,
            disturbed: 4,
            involuntary_switches: 7,
            migrations: 1,
            source: Source::Switches,
            ..Default::default()
        };
        assert_eq!(
            s.cause(),
            "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 \
             sample(s) (4 of 5 samples discarded)"
        );
    }

    /// A figure that lost nothing is not called busy: the issue's
    /// "busy for 0% of the time (0 of 20 samples discarded)".
    #[test]
    fn nothing_lost_is_not_a_busy_cpu() {
        let quiet = d(20, 0, 0.3);
        assert!(!quiet.lost_anything());
        assert_eq!(quiet.cause(), "no sample was discarded and no time lost (20 clean samples)");
        let switched = Disturbance { involuntary_switches: 4, ..d(20, 0, 0.0) };
        assert!(!switched.cause().contains("switched out"), "{}", switched.cause());
        let discarded = d(15, 5, 0.2);
        assert!(discarded.lost_anything());
        assert_eq!(discarded.cause(), "5 of 20 samples discarded");
    }

    #[test]
    fn the_record_reads_back_and_names_its_source() {
        let v = serde_json::to_value(d(3, 1, 2.5)).unwrap();
        assert_eq!(v["source"], "run-delay");
        assert_eq!(v["busiest_cpu"], 0);
        let back: Disturbance = serde_json::from_value(v).unwrap();
        assert_eq!(back, d(3, 1, 2.5));
    }
}
