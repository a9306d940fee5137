//! A distrusted figure in words ([`analysis::trust::Distrust`]): the word
//! written beside it and its cause, one sentence without a full stop. The
//! report, `compare` and `compare --json`'s marked inputs write these.

use analysis::trust::{Distrust, IdleFrom};
use results::lat;

/// The word written beside the figure: `disturbed` (samples discarded or
/// a busy CPU) or `noisy` (repetitions or samples that never settled with
/// nothing lost, a load that stalled).
pub fn word(d: &Distrust) -> &'static str {
    match d {
        Distrust::Disturbed(_) => "disturbed",
        Distrust::Noisy { .. } | Distrust::Unsettled { .. } | Distrust::Stalled => "noisy",
    }
}

/// A spread to one decimal, without a trailing `.0`.
fn pct(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// The cause in words, one sentence without a full stop: the
/// disturbance's own words (`results::disturbance::Cause`), how far the
/// repetitions or samples spread, or the load that stalled.
pub fn cause(d: &Distrust) -> String {
    match d {
        Distrust::Disturbed(c) => c.to_string(),
        Distrust::Noisy { top_spread_pct } => format!(
            "the best repetitions still spread {}% when the time ran out",
            pct(*top_spread_pct)
        ),
        Distrust::Unsettled { spread_pct } => format!(
            "its samples spread {}% with none discarded and its CPU not busy",
            pct(*spread_pct)
        ),
        Distrust::Stalled => "a load thread moved no line while latency was chased, so the \
                              point understates its load"
            .into(),
    }
}

/// What a chase's mode is called where a figure is said to come from it:
/// `the matrix`, `the latency point`, `the per-CPU latency`, `the sweep`,
/// else `the chase`.
pub fn chase_source(mode: lat::Mode) -> &'static str {
    match mode {
        lat::Mode::Matrix => "the matrix",
        lat::Mode::Point => "the latency point",
        lat::Mode::PerCpu => "the per-CPU latency",
        lat::Mode::Sweep => "the sweep",
        _ => "the chase",
    }
}

/// Where the idle figure a loaded point contradicts came from: its
/// chase's [`chase_source`], or `the curve's idle point`.
pub fn idle_from(f: IdleFrom) -> &'static str {
    match f {
        IdleFrom::Chase(mode) => chase_source(mode),
        IdleFrom::CurveIdle => "the curve's idle point",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::trust::of_lat;
    use results::disturbance::{Cause, Disturbance, Source, Waited};

    /// Every shape of distrust in the words the report and `compare
    /// --json` write, whole.
    #[test]
    fn every_distrust_is_worded_whole() {
        let busy = Disturbance {
            clean: 2,
            disturbed: 9,
            lost_pct: 48.2,
            busiest_cpu: Some(3),
            ..Default::default()
        };
        let words = |d: Distrust| (word(&d), cause(&d));
        assert_eq!(
            words(of_lat(false, Some(&busy), 1.0).unwrap()),
            (
                "disturbed",
                "CPU 3 was busy with other processes for 48% of the time (9 of 11 samples \
                 discarded)"
                    .into()
            )
        );
        assert_eq!(
            words(of_lat(false, None, 1.0).unwrap()),
            ("disturbed", "too few clean samples".into())
        );
        assert_eq!(
            words(Distrust::Noisy { top_spread_pct: 7.0 }),
            ("noisy", "the best repetitions still spread 7% when the time ran out".into())
        );
        assert_eq!(
            words(Distrust::Noisy { top_spread_pct: 12.25 }),
            ("noisy", "the best repetitions still spread 12.2% when the time ran out".into())
        );
        assert_eq!(
            words(Distrust::Unsettled { spread_pct: 1.2 }),
            ("noisy", "its samples spread 1.2% with none discarded and its CPU not busy".into())
        );
        assert_eq!(
            words(Distrust::Stalled),
            (
                "noisy",
                "a load thread moved no line while latency was chased, so the point \
                 understates its load"
                    .into()
            )
        );
    }

    /// Every source of an idle figure, the modes no loaded point takes
    /// its idle figure from too.
    #[test]
    fn every_source_is_named() {
        let all = [
            IdleFrom::Chase(lat::Mode::Matrix),
            IdleFrom::Chase(lat::Mode::Point),
            IdleFrom::Chase(lat::Mode::PerCpu),
            IdleFrom::Chase(lat::Mode::Sweep),
            IdleFrom::Chase(lat::Mode::Package),
            IdleFrom::CurveIdle,
        ];
        assert_eq!(
            all.map(idle_from),
            [
                "the matrix",
                "the latency point",
                "the per-CPU latency",
                "the sweep",
                "the chase",
                "the curve's idle point"
            ]
        );
    }

    /// Every shape of a disturbance's cause, the CLI cannot reach some.
    #[test]
    fn every_cause_of_disturbance_is_worded_whole() {
        let lost = |waited, migrations, discarded| {
            cause(&Distrust::Disturbed(Cause::Lost { waited, migrations, discarded, samples: 5 }))
        };
        assert_eq!(
            lost(Some(Waited::Busy { cpu: None, lost_pct: 12.4 }), 0, 0),
            "the CPU was busy with other processes for 12% of the time (0 of 5 samples discarded)"
        );
        assert_eq!(
            lost(Some(Waited::SwitchedOut { switches: 7 }), 1, 4),
            "the measuring thread was switched out 7 time(s); a measuring thread changed CPU in 1 \
             sample(s) (4 of 5 samples discarded)"
        );
        assert_eq!(
            lost(None, 2, 0),
            "a measuring thread changed CPU in 2 sample(s) (0 of 5 samples discarded)"
        );
        assert_eq!(lost(None, 0, 3), "3 of 5 samples discarded");
        assert_eq!(
            cause(&Distrust::Disturbed(Cause::NothingLost { clean: 20 })),
            "no sample was discarded and no time lost (20 clean samples)"
        );
        let switched = Disturbance {
            clean: 1,
            disturbed: 4,
            involuntary_switches: 7,
            migrations: 1,
            source: Source::Switches,
            ..Default::default()
        };
        assert_eq!(
            switched.cause(),
            Cause::Lost {
                waited: Some(Waited::SwitchedOut { switches: 7 }),
                migrations: 1,
                discarded: 4,
                samples: 5
            }
        );
        for c in [Cause::TooFewClean, switched.cause(), Cause::NothingLost { clean: 1 }] {
            assert!(!cause(&Distrust::Disturbed(c)).contains("--"));
        }
    }
}
