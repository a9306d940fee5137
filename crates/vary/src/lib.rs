//! A settings study measured: one setting Linux can change at run time
//! (`audit::runtime`) given each of its values in turn, a run measured
//! under each, the values alternated round after round (A B, B A, A B...)
//! so that the machine's drift falls on every side, each run labelled with
//! its value, and the setting put back as it was at the end, on failure
//! and on a stop request. How a run is measured is the caller's
//! ([`Runner`]; `numaprobe study` starts a `numaprobe run`); what happens
//! is told to an [`Observer`] as it happens. Before the first change the
//! values found are written to the study journal ([`journal`]), cleared
//! once they are back; a study killed in between leaves it for
//! `numaprobe study --restore`. Nothing here prints.

pub mod child;
pub mod journal;

use audit::runtime::{self, Knob, RuntimeError, Snapshot};
use events::StopFlag;
use journal::{Entry, StateDir};
use topo::SysRoot;

/// The order of the runs: value indices, round after round, every other
/// round reversed (A B B A A B for two values and three rounds).
pub fn order(values: usize, rounds: u32) -> Vec<usize> {
    (0..rounds)
        .flat_map(|r| {
            let mut v: Vec<usize> = (0..values).collect();
            if r % 2 == 1 {
                v.reverse();
            }
            v
        })
        .collect()
}

/// The most values one study compares (`compare`'s most groups).
pub const MAX_VALUES: usize = 8;

/// A `KEY=A,B,...` request refused ([`parse_vary`]), with what was given;
/// the front end says it with its flag.
#[derive(Debug, thiserror::Error)]
pub enum VaryError {
    /// No `=` between the setting and its values.
    #[error("{0:?}: expected KEY=A,B (e.g. thp_enabled=madvise,always)")]
    NoValues(String),
    /// The setting is not one that can be changed at run time.
    #[error(transparent)]
    Key(RuntimeError),
    /// One of the values is empty.
    #[error("{0:?}: an empty value")]
    EmptyValue(String),
    /// Fewer than 2 or more than [`MAX_VALUES`] values.
    #[error("{given:?}: give 2 to {MAX_VALUES} values to compare (got {got})")]
    Count { given: String, got: usize },
}

/// `KEY=A,B,...` into the knob and its values as written (2 to
/// [`MAX_VALUES`], none empty).
pub fn parse_vary(s: &str) -> Result<(Knob, Vec<String>), VaryError> {
    let Some((key, list)) = s.split_once('=') else {
        return Err(VaryError::NoValues(s.to_string()));
    };
    let knob = Knob::parse(key).map_err(VaryError::Key)?;
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(VaryError::EmptyValue(s.to_string()));
    }
    if !(2..=MAX_VALUES).contains(&values.len()) {
        return Err(VaryError::Count { given: s.to_string(), got: values.len() });
    }
    Ok((knob, values))
}

/// The label of the runs of `value`: `PREFIX: KEY=VALUE`.
pub fn label_of(prefix: &str, knob: Knob, value: &str) -> String {
    format!("{prefix}: {}={value}", knob.key())
}

/// Why a study cannot be planned: the request was at fault, nothing was
/// changed.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    #[error("the value {0} is given twice")]
    Twice(String),
    /// The label prefix is blank.
    #[error("the label is empty")]
    EmptyLabel,
}

impl PlanError {
    /// True when the request was at fault (a usage error).
    pub fn is_usage(&self) -> bool {
        match self {
            PlanError::Runtime(e) => e.is_usage(),
            PlanError::Twice(_) | PlanError::EmptyLabel => true,
        }
    }
}

/// The label prefix when none is given: `study` and the start time
/// (`now`, RFC 3339, cut to whole seconds).
pub fn default_prefix(now: &str) -> String {
    format!("study {}Z", now.split('.').next().unwrap_or(now))
}

/// What a study measures, in which order, under which labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub knob: Knob,
    /// The values as this kernel takes them, the first the baseline.
    pub values: Vec<String>,
    /// Runs of each value.
    pub rounds: u32,
    /// The label of each value's runs.
    pub labels: Vec<String>,
    /// Value indices in the order they are measured ([`order`]).
    pub order: Vec<usize>,
}

impl Plan {
    /// Checks `written` against what this machine offers for `knob` and
    /// plans `rounds` rounds, the runs labelled `PREFIX: KEY=VALUE`.
    pub fn new(
        root: &SysRoot,
        knob: Knob,
        written: &[String],
        rounds: u32,
        prefix: &str,
    ) -> Result<Plan, PlanError> {
        let values = runtime::check(root, knob, written)?;
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(PlanError::Twice(v.clone()));
            }
        }
        if prefix.trim().is_empty() {
            return Err(PlanError::EmptyLabel);
        }
        let labels = values.iter().map(|v| label_of(prefix, knob, v)).collect();
        let order = order(values.len(), rounds);
        Ok(Plan { knob, values, rounds, labels, order })
    }

    /// The values in the order they are measured.
    pub fn sequence(&self) -> Vec<&str> {
        self.order.iter().map(|&i| self.values[i].as_str()).collect()
    }
}

/// How one run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Complete,
    /// Stopped by the user, with what it measured saved.
    Interrupted,
    /// Failed, with its exit status (`None`: killed by a signal).
    Failed(Option<i32>),
}

/// Measures one run of a study while its value is in force.
pub trait Runner {
    /// What a run gives back besides how it ended (its id, its document).
    type Output;
    /// Measures run `n` (from 0) of the plan, of `value`, labelled
    /// `label`. An error says why the run could not be started.
    fn run(&mut self, n: usize, value: &str, label: &str) -> Result<(Ended, Self::Output), String>;
}

/// What a study tells as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// Before any change: the value in force now, and the commands that
    /// put it back by hand should the process die before it restores.
    Started { now: &'a str, restore_commands: &'a [String] },
    /// Run `n` (from 0) of `total` begins, `value` in force.
    Run { n: usize, total: usize, value: &'a str, label: &'a str },
    /// The setting holds `now` again.
    Restored { now: &'a str },
    /// Putting the setting back failed after an unexpected end (a
    /// panic); the message says how to restore it by hand.
    RestoreFailed(&'a str),
    /// The setting is back but the journal could not be removed (the
    /// next command will say a study is unfinished).
    JournalLeft(&'a str),
    /// No cgroup could be made for the runs (why): a process a run leaves
    /// behind out of its process group is not found. Said once.
    Uncontained(&'a str),
    /// Run `n` (from 0) left `processes` processes in its cgroup; they
    /// were killed.
    LeftBehind { n: usize, processes: u32 },
}

/// Receives a study's [`Event`]s.
pub trait Observer {
    fn event(&self, event: Event<'_>);
}

/// One measured run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done<T> {
    /// Index of its value in [`Plan::values`].
    pub value: usize,
    pub label: String,
    pub ended: Ended,
    pub output: T,
}

/// What a study did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome<T> {
    /// The runs measured, in order.
    pub runs: Vec<Done<T>>,
    /// Why the study stopped before its end: a value not taken, a run that
    /// could not start or that failed. `None` when every run completed or
    /// the user stopped it.
    pub failure: Option<String>,
    /// The value the setting was put back to.
    pub restored: String,
}

impl<T> Outcome<T> {
    /// The runs that completed.
    pub fn complete(&self) -> usize {
        self.runs.iter().filter(|d| d.ended == Ended::Complete).count()
    }

    /// Why the study ended before its plan did (`None`: it did not);
    /// `stopped` when the user asked it to stop.
    pub fn stop_reason(&self, plan: &Plan, stopped: bool) -> Option<String> {
        match (&self.failure, stopped) {
            (Some(f), _) => Some(format!("study stopped: {f}")),
            (None, true) => Some("study interrupted".to_string()),
            (None, false) if self.complete() < plan.order.len() => Some(format!(
                "study stopped: run {} of {} did not complete",
                self.runs.len(),
                plan.order.len()
            )),
            (None, false) => None,
        }
    }
}

/// What `study --dry-run` shows: the study checked, nothing changed.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRun {
    /// The value in force now.
    pub current: String,
    pub restore_commands: Vec<String>,
    /// One run's estimated seconds, and the whole study's.
    pub per_run_s: Option<f64>,
    pub estimate_s: Option<f64>,
    /// Why the rounds are too few for any verdict but undecided.
    pub undecidable: Option<TooFewRounds>,
}

/// Rounds too few for an interval: every verdict would be undecided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TooFewRounds {
    /// The rounds asked for (one run per value each).
    pub rounds: u32,
    /// The runs per value an interval needs.
    pub need: u32,
    /// The intervals' two-sided confidence (0..1).
    pub confidence: f64,
}

impl DryRun {
    /// Reads the value in force and the commands that restore it; one
    /// run's estimate (`per_run_s`) times the runs.
    pub fn of(root: &SysRoot, plan: &Plan, per_run_s: Option<f64>) -> Result<DryRun, RuntimeError> {
        let snap = runtime::snapshot(root, plan.knob)?;
        let restore_commands = runtime::restore_commands(root, &snap);
        let confidence = results::runstats::Criteria::default().confidence;
        let need = results::runstats::min_runs_for_interval(confidence);
        let undecidable =
            (plan.rounds < need).then_some(TooFewRounds { rounds: plan.rounds, need, confidence });
        Ok(DryRun {
            current: snap.shown,
            restore_commands,
            per_run_s,
            estimate_s: per_run_s.map(|s| s * plan.order.len() as f64),
            undecidable,
        })
    }
}

/// Why a study could not begin, or could not put the setting back.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// Reading the setting before any change.
    #[error(transparent)]
    Snapshot(RuntimeError),
    /// Writing the journal before any change: nothing was changed.
    #[error("{0}; nothing was changed")]
    Journal(journal::JournalError),
    #[error("{key} could not be put back to {shown}: {files}; restore by hand: {commands}")]
    NotRestored { key: &'static str, shown: String, files: String, commands: String },
    #[error("{key} reads {now} after being put back to {shown}; restore by hand: {commands}")]
    ReadsOther { key: &'static str, now: String, shown: String, commands: String },
    #[error(transparent)]
    ReadBack(RuntimeError),
}

/// Puts the setting back when dropped, whatever ended the study (a panic
/// included); [`Restorer::restore`] does it first and says how it went.
struct Restorer<'a> {
    root: &'a SysRoot,
    state: &'a StateDir,
    snap: Snapshot,
    observer: &'a dyn Observer,
    done: bool,
}

impl Restorer<'_> {
    /// Restores and reads back; an error names the files left and the
    /// commands that restore them by hand.
    fn restore(&mut self) -> Result<(), StudyError> {
        self.done = true;
        let left = runtime::restore(self.root, &self.snap);
        let key = self.snap.knob.key();
        let commands = || runtime::restore_commands(self.root, &self.snap).join("; ");
        if !left.is_empty() {
            let files: Vec<String> =
                left.iter().map(|f| format!("{} ({}: {})", f.path, f.value, f.error)).collect();
            return Err(StudyError::NotRestored {
                key,
                shown: self.snap.shown.clone(),
                files: files.join(", "),
                commands: commands(),
            });
        }
        let now = runtime::current(self.root, self.snap.knob).map_err(StudyError::ReadBack)?;
        if now != self.snap.shown {
            return Err(StudyError::ReadsOther {
                key,
                now,
                shown: self.snap.shown.clone(),
                commands: commands(),
            });
        }
        if let Err(e) = self.state.clear() {
            self.observer.event(Event::JournalLeft(&e.to_string()));
        }
        Ok(())
    }
}

impl Drop for Restorer<'_> {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.restore() {
                self.observer.event(Event::RestoreFailed(&e.to_string()));
            }
        }
    }
}

/// Measures `plan`: for each run in order, gives the setting its value and
/// has `runner` measure it; stops at the first failure, at an interrupted
/// run or when `stop` is set between runs; then puts the setting back and
/// reads it back. The values found are journaled in `state` before the
/// first change and the journal cleared once they read back. The runs
/// measured are in the outcome whatever ended the study; an error means
/// the setting could not be read or journaled first, or put back.
pub fn execute<R: Runner>(
    root: &SysRoot,
    state: &StateDir,
    plan: &Plan,
    runner: &mut R,
    observer: &dyn Observer,
    stop: &StopFlag,
) -> Result<Outcome<R::Output>, StudyError> {
    let knob = plan.knob;
    let snap = runtime::snapshot(root, knob).map_err(StudyError::Snapshot)?;
    let commands = runtime::restore_commands(root, &snap);
    state.write(&Entry::of(&snap)).map_err(StudyError::Journal)?;
    observer.event(Event::Started { now: &snap.shown, restore_commands: &commands });
    let mut restorer = Restorer { root, state, snap, observer, done: false };

    let mut runs = Vec::new();
    let mut failure = None;
    let total = plan.order.len();
    for (n, &vi) in plan.order.iter().enumerate() {
        if stop.is_stopped() {
            break;
        }
        let value = &plan.values[vi];
        if let Err(e) = runtime::apply(root, knob, value) {
            failure = Some(format!("setting {}={value}: {e}", knob.key()));
            break;
        }
        let label = &plan.labels[vi];
        observer.event(Event::Run { n, total, value, label });
        let (ended, output) = match runner.run(n, value, label) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(format!("starting run {}: {e}", n + 1));
                break;
            }
        };
        runs.push(Done { value: vi, label: label.clone(), ended, output });
        match ended {
            Ended::Complete => {}
            Ended::Interrupted => break,
            Ended::Failed(code) => {
                failure = Some(format!(
                    "run {} of {total} ({}={value}) ended with exit status {}",
                    n + 1,
                    knob.key(),
                    code.map_or("none (killed by a signal)".into(), |c| c.to_string())
                ));
                break;
            }
        }
    }
    restorer.restore()?;
    observer.event(Event::Restored { now: &restorer.snap.shown });
    Ok(Outcome { runs, failure, restored: restorer.snap.shown.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    const THP: &str = "sys/kernel/mm/transparent_hugepage/enabled";

    /// A root holding THP's `enabled` file (`madvise` in force).
    fn tree() -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(THP);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "always [madvise] never\n").unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        (dir, root)
    }

    /// The state folder of a tree made by [`tree`].
    fn state(dir: &tempfile::TempDir) -> StateDir {
        StateDir::ensure(&dir.path().join("state")).unwrap()
    }

    fn plan(root: &SysRoot, rounds: u32) -> Plan {
        let written = ["madvise".to_string(), "always".to_string()];
        Plan::new(root, Knob::ThpEnabled, &written, rounds, "s").unwrap()
    }

    /// Reads the value in force at each run; ends each as told.
    struct Fake<'a> {
        root: &'a SysRoot,
        seen: Vec<String>,
        ends: Vec<Ended>,
        /// The journal as each run found it.
        journals: Vec<Option<Entry>>,
        state: Option<&'a StateDir>,
    }

    impl Runner for Fake<'_> {
        type Output = usize;
        fn run(&mut self, n: usize, value: &str, label: &str) -> Result<(Ended, usize), String> {
            let now = runtime::current(self.root, Knob::ThpEnabled).unwrap();
            assert_eq!(now, value);
            assert_eq!(label, format!("s: thp_enabled={value}"));
            self.seen.push(now);
            self.journals.push(self.state.and_then(|s| s.read().unwrap()));
            Ok((self.ends.get(n).copied().unwrap_or(Ended::Complete), n))
        }
    }

    #[derive(Default)]
    struct Told(RefCell<Vec<String>>);

    impl Observer for Told {
        fn event(&self, e: Event<'_>) {
            self.0.borrow_mut().push(match e {
                Event::Started { now, .. } => format!("started {now}"),
                Event::Run { n, total, value, .. } => format!("run {n}/{total} {value}"),
                Event::Restored { now } => format!("restored {now}"),
                Event::RestoreFailed(m) => format!("failed {m}"),
                Event::JournalLeft(m) => format!("journal left {m}"),
                e => format!("{e:?}"),
            });
        }
    }

    #[test]
    fn runs_alternate_so_that_drift_falls_on_every_value() {
        assert_eq!(order(2, 3), [0, 1, 1, 0, 0, 1]);
        assert_eq!(order(3, 2), [0, 1, 2, 2, 1, 0]);
        assert_eq!(order(2, 1), [0, 1]);
        // With an even number of rounds, every value's mean position is
        // the same: a linear drift adds the same to each.
        let o = order(3, 4);
        let mean = |v: usize| {
            let pos: Vec<usize> = (0..o.len()).filter(|&i| o[i] == v).collect();
            pos.iter().sum::<usize>() as f64 / pos.len() as f64
        };
        assert_eq!((mean(0), mean(1), mean(2)), (5.5, 5.5, 5.5));
    }

    #[test]
    fn each_run_measures_its_value_and_the_setting_is_put_back() {
        let (_dir, root) = tree();
        let plan = plan(&root, 2);
        assert_eq!(plan.sequence(), ["madvise", "always", "always", "madvise"]);
        let mut fake = Fake {
            root: &root,
            seen: Vec::new(),
            ends: Vec::new(),
            journals: Vec::new(),
            state: None,
        };
        let told = Told::default();
        let out = execute(&root, &state(&_dir), &plan, &mut fake, &told, &StopFlag::new()).unwrap();
        assert_eq!(fake.seen, ["madvise", "always", "always", "madvise"]);
        assert_eq!(out.failure, None);
        assert_eq!(out.restored, "madvise");
        assert_eq!(out.runs.iter().map(|d| d.output).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(out.runs[1].label, "s: thp_enabled=always");
        assert_eq!(runtime::current(&root, Knob::ThpEnabled).unwrap(), "madvise");
        assert_eq!(
            told.0.borrow().clone(),
            [
                "started madvise",
                "run 0/4 madvise",
                "run 1/4 always",
                "run 2/4 always",
                "run 3/4 madvise",
                "restored madvise"
            ]
        );
    }

    #[test]
    fn a_failed_run_ends_the_study_and_the_setting_is_still_put_back() {
        let (_dir, root) = tree();
        let plan = plan(&root, 2);
        let ends = vec![Ended::Complete, Ended::Failed(Some(1))];
        let mut fake =
            Fake { root: &root, seen: Vec::new(), ends, journals: Vec::new(), state: None };
        let out =
            execute(&root, &state(&_dir), &plan, &mut fake, &Told::default(), &StopFlag::new())
                .unwrap();
        assert_eq!(out.runs.len(), 2);
        assert_eq!(
            out.failure.as_deref(),
            Some("run 2 of 4 (thp_enabled=always) ended with exit status 1")
        );
        assert_eq!(runtime::current(&root, Knob::ThpEnabled).unwrap(), "madvise");
    }

    #[test]
    fn an_interrupted_run_or_a_stop_request_ends_the_study_without_a_failure() {
        let (_dir, root) = tree();
        let plan = plan(&root, 2);
        let mut fake = Fake {
            root: &root,
            seen: Vec::new(),
            ends: vec![Ended::Interrupted],
            journals: Vec::new(),
            state: None,
        };
        let out =
            execute(&root, &state(&_dir), &plan, &mut fake, &Told::default(), &StopFlag::new())
                .unwrap();
        assert_eq!((out.runs.len(), out.failure), (1, None));

        let stop = StopFlag::new();
        stop.stop();
        let mut fake = Fake {
            root: &root,
            seen: Vec::new(),
            ends: Vec::new(),
            journals: Vec::new(),
            state: None,
        };
        let out = execute(&root, &state(&_dir), &plan, &mut fake, &Told::default(), &stop).unwrap();
        assert!(out.runs.is_empty());
        assert_eq!(runtime::current(&root, Knob::ThpEnabled).unwrap(), "madvise");
    }

    /// A `kill -9` between two runs must leave the originals on disk:
    /// the journal is there during every run, and gone once restored.
    #[test]
    fn the_originals_are_journaled_before_the_first_change_and_cleared_after() {
        let (dir, root) = tree();
        let st = state(&dir);
        let plan = plan(&root, 1);
        let mut fake = Fake {
            root: &root,
            seen: Vec::new(),
            ends: Vec::new(),
            journals: Vec::new(),
            state: Some(&st),
        };
        execute(&root, &st, &plan, &mut fake, &Told::default(), &StopFlag::new()).unwrap();
        assert_eq!(fake.journals.len(), 2);
        for j in &fake.journals {
            let j = j.as_ref().expect("journal present while a run measures");
            assert_eq!((j.key.as_str(), j.shown.as_str()), ("thp_enabled", "madvise"));
            assert_eq!(j.files[0].rel, THP);
            assert_eq!(j.files[0].value, "madvise");
            assert_eq!(j.pid, std::process::id());
        }
        assert_eq!(st.read().unwrap(), None, "cleared after the restore");

        // A journal that cannot be written: nothing is changed.
        let (dir, root) = tree();
        let st = state(&dir);
        std::fs::create_dir(st.journal().with_extension("journal.new")).unwrap();
        std::fs::write(st.journal().with_extension("journal.new").join("x"), "").unwrap();
        let mut fake = Fake {
            root: &root,
            seen: Vec::new(),
            ends: Vec::new(),
            journals: Vec::new(),
            state: None,
        };
        let e = execute(&root, &st, &plan, &mut fake, &Told::default(), &StopFlag::new());
        assert!(matches!(e, Err(StudyError::Journal(_))), "{e:?}");
        assert!(fake.seen.is_empty());
        assert_eq!(runtime::current(&root, Knob::ThpEnabled).unwrap(), "madvise");
    }

    #[test]
    fn vary_is_parsed_and_bad_forms_are_refused() {
        let (k, v) = parse_vary("thp_enabled=madvise, always").unwrap();
        assert_eq!((k, v), (Knob::ThpEnabled, vec!["madvise".to_string(), "always".into()]));
        assert!(
            matches!(parse_vary("thp_enabled"), Err(VaryError::NoValues(s)) if s == "thp_enabled")
        );
        assert!(matches!(
            parse_vary("thp=always,never"),
            Err(VaryError::Key(RuntimeError::UnknownKey { key, .. })) if key == "thp"
        ));
        assert!(matches!(parse_vary("thp_enabled=always"), Err(VaryError::Count { got: 1, .. })));
        assert!(matches!(parse_vary("thp_enabled=always,,never"), Err(VaryError::EmptyValue(_))));
        let nine = parse_vary("boost=on,off,on,off,on,off,on,off,on");
        assert!(matches!(nine, Err(VaryError::Count { got: 9, .. })), "{nine:?}");
        for e in [parse_vary("thp_enabled").unwrap_err(), nine.unwrap_err()] {
            assert!(!e.to_string().contains("--"), "no flag in the library's words: {e}");
        }
    }

    #[test]
    fn a_blank_label_is_refused_as_the_command_line_says_it() {
        let (_dir, root) = tree();
        let written = ["madvise".to_string(), "always".to_string()];
        let e = Plan::new(&root, Knob::ThpEnabled, &written, 1, "  ").unwrap_err();
        assert!(e.is_usage());
        assert!(matches!(e, PlanError::EmptyLabel), "{e:?}");
        assert_eq!(default_prefix("2026-11-27T18:00:00.123+00:00"), "study 2026-11-27T18:00:00Z");
    }

    #[test]
    fn a_value_given_twice_is_refused() {
        let (_dir, root) = tree();
        let written = ["always".to_string(), "always".to_string()];
        let e = Plan::new(&root, Knob::ThpEnabled, &written, 1, "s").unwrap_err();
        assert!(e.is_usage());
        assert_eq!(e.to_string(), "the value always is given twice");
    }
}
