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

use std::fmt;

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

    /// What held the figure back, typed: why its threads waited (a busy
    /// CPU, or switches where no run delay was read), the samples a
    /// thread changed CPU in, and the samples discarded. Each part is
    /// given only when it holds: a share of time that rounds to 0% is not
    /// "busy", and with nothing discarded and no time lost the cause is
    /// [`Cause::NothingLost`].
    pub fn cause(&self) -> Cause {
        let waited = if self.lost_pct >= 0.5 && self.source == Source::RunDelay {
            Some(Waited::Busy { cpu: self.busiest_cpu, lost_pct: self.lost_pct })
        } else if self.involuntary_switches > 0 && self.disturbed > 0 {
            Some(Waited::SwitchedOut { switches: self.involuntary_switches })
        } else {
            None
        };
        if waited.is_none() && self.migrations == 0 && self.disturbed == 0 {
            return Cause::NothingLost { clean: self.clean };
        }
        Cause::Lost {
            waited,
            migrations: self.migrations,
            discarded: self.disturbed,
            samples: self.clean + self.disturbed,
        }
    }

    /// Whether the figure lost anything to other work: a sample discarded,
    /// or a measurable share of its time (at least 0.5%, what `cause`
    /// writes as 1%) spent waiting for its CPU.
    pub fn lost_anything(&self) -> bool {
        self.disturbed > 0 || self.lost_pct >= 0.5
    }
}

/// Why a figure's threads waited to run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Waited {
    /// Another task had the CPU (`None`: the CPU is not known) for this
    /// share of the measuring time, percent (0.5 at least).
    Busy { cpu: Option<u32>, lost_pct: f64 },
    /// No run delay was read: the measuring thread was switched out this
    /// many times, and samples were discarded.
    SwitchedOut { switches: u64 },
}

/// What held a figure back ([`Disturbance::cause`]), with the values at
/// fault. The report and `compare` word it; its [`fmt::Display`] is the
/// words a measurement writes while it measures (its warning, a prefetch
/// check's stored note), the same words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cause {
    /// Samples discarded or time lost: why the threads waited (when it
    /// is known), the samples a thread changed CPU in (0: none), the
    /// samples discarded and all the samples.
    Lost { waited: Option<Waited>, migrations: u64, discarded: usize, samples: usize },
    /// Nothing was discarded and no time lost: the clean samples.
    NothingLost { clean: usize },
    /// No disturbance was recorded: the figure kept too few clean samples.
    TooFewClean,
}

impl Cause {
    /// The cause of a figure's disturbance record, or
    /// [`Cause::TooFewClean`] without one.
    pub fn of(d: Option<&Disturbance>) -> Cause {
        d.map_or(Cause::TooFewClean, Disturbance::cause)
    }
}

/// "CPU 0 was busy with other processes for 48% of the time (9 of 11
/// samples discarded)": one sentence without a full stop.
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Cause::TooFewClean => f.write_str("too few clean samples"),
            Cause::NothingLost { clean } => {
                write!(f, "no sample was discarded and no time lost ({clean} clean samples)")
            }
            Cause::Lost { waited, migrations, discarded, samples } => {
                let mut parts = Vec::new();
                match waited {
                    Some(Waited::Busy { cpu, lost_pct }) => {
                        let cpu = cpu.map_or_else(|| "the CPU".to_string(), |c| format!("CPU {c}"));
                        parts.push(format!(
                            "{cpu} was busy with other processes for {lost_pct:.0}% of the time"
                        ));
                    }
                    Some(Waited::SwitchedOut { switches }) => parts
                        .push(format!("the measuring thread was switched out {switches} time(s)")),
                    None => {}
                }
                if migrations > 0 {
                    parts.push(format!("a measuring thread changed CPU in {migrations} sample(s)"));
                }
                if parts.is_empty() {
                    return write!(f, "{discarded} of {samples} samples discarded");
                }
                write!(f, "{} ({discarded} of {samples} samples discarded)", parts.join("; "))
            }
        }
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
        let c = d(2, 9, 48.2).cause().to_string();
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
            s.cause().to_string(),
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
        assert_eq!(
            quiet.cause().to_string(),
            "no sample was discarded and no time lost (20 clean samples)"
        );
        let switched = Disturbance { involuntary_switches: 4, ..d(20, 0, 0.0) };
        assert_eq!(switched.cause(), Cause::NothingLost { clean: 20 });
        assert!(!switched.cause().to_string().contains("switched out"));
        let discarded = d(15, 5, 0.2);
        assert!(discarded.lost_anything());
        assert_eq!(discarded.cause().to_string(), "5 of 20 samples discarded");
        assert_eq!(Cause::of(None).to_string(), "too few clean samples");
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
