//! What `numaprobe study` says, as text: the progress of each [`Event`],
//! the dry run's plan, the line an unfinished study ends with and the
//! `--restore` summary. Returned, never printed: the CLI prints.

use std::path::Path;

use vary::journal::Entry;
use vary::{DryRun, Event, Observer, Outcome, Plan};

/// The lines (for stderr) that `event` gives; `quiet` keeps only those
/// that matter whatever it says (the way back, failures, leftovers).
pub fn event_lines(plan: &Plan, event: &Event<'_>, quiet: bool) -> Vec<String> {
    let key = plan.knob.key();
    let mut lines = Vec::new();
    match *event {
        Event::Started { now, restore_commands } => {
            if !quiet {
                lines.push(format!(
                    "numaprobe: study of {key} (now {now}): {}; {} round(s), {} runs in the order {}",
                    plan.values.join(", "),
                    plan.rounds,
                    plan.order.len(),
                    plan.sequence().join(" ")
                ));
            }
            // Said before any change, and whatever --quiet says: the way
            // back if this process is killed before it restores.
            lines.push(format!(
                "numaprobe: {key} is put back to {now} at the end (also on Ctrl-C or failure); if numaprobe is killed first, restore it with `numaprobe study --restore` (or by hand: {})",
                restore_commands.join("; ")
            ));
        }
        Event::Run { n, total, value, label } if !quiet => {
            lines.push(format!("numaprobe: run {} of {total}: {key}={value} (label {label:?})", n + 1));
        }
        Event::Restored { now } if !quiet => lines.push(format!("numaprobe: {key} is {now} again")),
        Event::RestoreFailed(message) => lines.push(format!("numaprobe: error: {message}")),
        Event::JournalLeft(message) => lines.push(format!(
            "numaprobe: warning: {key} is back, but the study journal is left: {message}"
        )),
        Event::Uncontained(why) => lines.push(format!(
            "numaprobe: warning: the study's runs are not held in a cgroup ({why}): a process a run starts outside its process group is not killed with it"
        )),
        Event::LeftBehind { n, processes } => lines.push(format!(
            "numaprobe: warning: run {} left {processes} process(es) running after it ended; killed with its cgroup",
            n + 1
        )),
        _ => {}
    }
    lines
}

/// An [`Observer`] that hands each event's lines ([`event_lines`]) to
/// `sink` (the CLI prints them on stderr).
pub struct Lines<'a, F: Fn(&str)> {
    pub plan: &'a Plan,
    pub quiet: bool,
    pub sink: F,
}

impl<F: Fn(&str)> Observer for Lines<'_, F> {
    fn event(&self, event: Event<'_>) {
        for line in event_lines(self.plan, &event, self.quiet) {
            (self.sink)(&line);
        }
    }
}

/// Seconds as people read them: `40 s`, `12 min`, `1.5 h`.
pub fn human_time(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// `study --dry-run`: the runs, the time they would take and how the
/// setting is restored.
pub fn plan(plan: &Plan, dry: &DryRun, run_options: &[String]) -> String {
    let (key, values) = (plan.knob.key(), &plan.values);
    let runs: Vec<String> = plan
        .order
        .iter()
        .enumerate()
        .map(|(n, &i)| format!("  {:>3}. {key}={}  (label {:?})", n + 1, values[i], plan.labels[i]))
        .collect();
    let time = match (dry.per_run_s, dry.estimate_s) {
        (Some(one), Some(all)) => format!(
            "Estimated time: about {} ({} runs of about {} each, measuring only; the machine's load changes it)",
            human_time(all),
            plan.order.len(),
            human_time(one)
        ),
        _ => "Estimated time: unknown (`numaprobe run --dry-run` with these options gave none)".into(),
    };
    format!(
        "Study of {key} (now {}): {} against {}, {} round(s); nothing changed (--dry-run)
         Runs, each `numaprobe run {}`:
{}
{time}
Restored at the end with: {}",
        dry.current,
        values[1..].join(", "),
        values[0],
        plan.rounds,
        run_options.join(" "),
        runs.join("\n"),
        dry.restore_commands.join("; ")
    )
}

/// What to do with the runs an unfinished study kept: a command that
/// works with them (never a comparison naming a label without runs).
pub fn next_step(db: Option<&Path>, with_runs: &[&str]) -> String {
    let db = db.map(|p| format!("--db '{}' ", p.display())).unwrap_or_default();
    match with_runs {
        [] => "no run was saved, nothing to compare".to_string(),
        [one] => {
            format!("only {one:?} has runs, nothing to compare; see them with: numaprobe {db}list")
        }
        many => format!(
            "compare them with: numaprobe {db}compare {}",
            many.iter()
                .map(|l| format!("'label:{}'", l.replace('\'', "'\\''")))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// The line an unfinished study ends with: why (`why`, and the signal
/// `by` when the user stopped it), what was restored and kept (`saved`:
/// how many runs the database holds of a label), and what to do next.
pub fn stopped<T>(
    plan: &Plan,
    outcome: &Outcome<T>,
    why: &str,
    by: Option<&str>,
    db: Option<&Path>,
    saved: impl Fn(&str) -> usize,
) -> String {
    let saved: Vec<(&str, usize)> = plan.labels.iter().map(|l| (l.as_str(), saved(l))).collect();
    let kept: Vec<String> =
        saved.iter().map(|(l, n)| format!("{n} run(s) labelled {l:?}")).collect();
    let with_runs: Vec<&str> = saved.iter().filter(|(_, n)| *n > 0).map(|(l, _)| *l).collect();
    format!(
        "{why} after {} of {} runs{}; {} restored; kept {}; {}",
        outcome.complete(),
        plan.order.len(),
        by.map(|b| format!(" ({b})")).unwrap_or_default(),
        outcome.restored,
        kept.join(", "),
        next_step(db, &with_runs)
    )
}

/// The heading above a finished study's comparison.
pub fn finished<T>(plan: &Plan, outcome: &Outcome<T>) -> String {
    format!(
        "\nStudy of {}: {} against {} ({} run(s) each, alternated; {} restored)\n",
        plan.knob.key(),
        plan.values[1..].join(", "),
        plan.values[0],
        plan.rounds,
        outcome.restored
    )
}

/// `study --restore`'s summary (`entry`: the journal put back, `None`:
/// there was none; `was`: the value in force before).
pub fn restored(entry: Option<&Entry>, was: Option<&str>) -> String {
    match entry {
        None => "No unfinished study: nothing to restore.".to_string(),
        Some(e) => format!(
            "{} put back to {} (it was {}; left by study PID {}); journal cleared.",
            e.key,
            e.shown,
            was.unwrap_or("unreadable"),
            e.pid
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards issue 37 cause 3: with no run of a value kept, the suggested
    /// `compare` named an empty label and itself exited 2.
    #[test]
    fn the_next_step_names_only_labels_with_runs() {
        assert_eq!(next_step(None, &[]), "no run was saved, nothing to compare");
        let one = next_step(None, &["s: thp_enabled=never"]);
        assert!(one.contains("numaprobe list") && !one.contains("compare '"), "{one}");
        let two = next_step(None, &["s: a=1", "it's: a=2"]);
        assert_eq!(
            two,
            "compare them with: numaprobe compare 'label:s: a=1' 'label:it'\\''s: a=2'"
        );
        let db = next_step(Some(Path::new("/tmp/r.db")), &["x"]);
        assert!(db.ends_with("numaprobe --db '/tmp/r.db' list"), "{db}");
    }

    #[test]
    fn times_read_as_people_say_them() {
        assert_eq!(human_time(40.4), "40 s");
        assert_eq!(human_time(720.0), "12 min");
        assert_eq!(human_time(5400.0), "1.5 h");
    }
}
