//! Draws measurement events on stderr: one progress bar per phase on a
//! terminal, nothing when stderr is not a terminal or `quiet` is asked.
//! Warnings go to stderr unless quiet.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::Mutex;

use events::{Event, Observer};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The observer that draws the bars.
pub struct Bars {
    quiet: bool,
    draw: bool,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Bars {
    /// Bars on stderr when it is a terminal and not `quiet`.
    pub fn new(quiet: bool) -> Self {
        Bars { quiet, draw: !quiet && std::io::stderr().is_terminal(), bars: Mutex::default() }
    }

    fn bar(&self, total: u64) -> ProgressBar {
        if !self.draw {
            return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        }
        let bar = ProgressBar::new(total);
        let style = if total > 0 {
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} ETA {eta} {msg}")
        } else {
            ProgressStyle::with_template("{prefix:>12} {spinner} {elapsed} {msg}")
        };
        if let Ok(style) = style {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }
}

impl Observer for Bars {
    fn event(&self, event: Event) {
        let mut bars = self.bars.lock().unwrap_or_else(|p| p.into_inner());
        match event {
            Event::PhaseStart { phase, total } => {
                let bar = self.bar(total);
                bar.set_prefix(phase.clone());
                bars.insert(phase, bar);
            }
            Event::Progress { phase, done, what } => {
                if let Some(bar) = bars.get(&phase) {
                    bar.set_position(done);
                    bar.set_message(what);
                }
            }
            Event::PhaseEnd { phase } => {
                if let Some(bar) = bars.remove(&phase) {
                    bar.finish_and_clear();
                }
            }
            Event::StepStart { phase, name, .. } => {
                if let Some(bar) = bars.get(&phase) {
                    bar.set_message(name);
                }
            }
            Event::StepEnd { phase, index, name, error } => {
                if let Some(bar) = bars.get(&phase) {
                    bar.set_position(index as u64 + 1);
                    bar.set_message(name.clone());
                }
                if let Some(e) = error {
                    self.warn(&bars, &format!("step failed, going on: {name}: {e}"));
                }
            }
            Event::Warning(msg) => self.warn(&bars, &msg),
            Event::SmallArrays { bytes, want } => {
                self.warn(&bars, &crate::bw::small_arrays(bytes, want))
            }
            Event::Disturbed { what, figures, marked, worst } => {
                self.warn(&bars, &disturbed(&what, figures, marked, &worst))
            }
            Event::Record(_) => {}
        }
    }
}

/// The warning of a phase whose figures were disturbed
/// (`Event::Disturbed`): `lat sweep: 2 of 3 figures were disturbed and are
/// marked; the worst: CPU 0 was busy ...`, or for one figure `lat: the
/// figure was disturbed and is marked: ...`.
pub fn disturbed(
    what: &str,
    figures: usize,
    marked: usize,
    worst: &results::disturbance::Cause,
) -> String {
    if figures == 1 {
        format!("{what}: the figure was disturbed and is marked: {worst}")
    } else {
        format!(
            "{what}: {marked} of {figures} figures were disturbed and are marked; the worst: \
             {worst}"
        )
    }
}

impl Bars {
    fn warn(&self, bars: &HashMap<String, ProgressBar>, msg: &str) {
        if !self.quiet {
            let line = format!("numaprobe: warning: {}", report::safe::visible(msg));
            // Through a visible bar so the line is not drawn over; a hidden
            // bar would drop it.
            match bars.values().next().filter(|_| self.draw) {
                Some(bar) => bar.println(line),
                None => eprintln!("{line}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::disturbance::{Cause, Disturbance};

    /// A phase's disturbance warning, for several figures and for one,
    /// whole, and with no flag in it.
    #[test]
    fn a_disturbed_phase_is_worded_whole() {
        let busy = Disturbance {
            clean: 3,
            disturbed: 8,
            lost_pct: 48.0,
            busiest_cpu: Some(0),
            ..Default::default()
        };
        let many = disturbed("lat sweep", 3, 2, &busy.cause());
        assert_eq!(
            many,
            "lat sweep: 2 of 3 figures were disturbed and are marked; the worst: CPU 0 was busy \
             with other processes for 48% of the time (8 of 11 samples discarded)"
        );
        let one = disturbed("lat", 1, 1, &Cause::TooFewClean);
        assert_eq!(one, "lat: the figure was disturbed and is marked: too few clean samples");
        assert!(!many.contains("--") && !one.contains("--"));
    }
}
