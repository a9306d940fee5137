//! What a study must tell its reader besides its figures, typed: the
//! warnings (what makes its groups less comparable than they look) and
//! the notes (what the reader must know to trust it). Each carries the
//! groups, runs, metrics and numbers it is about; the front ends word it
//! (`report::study::words`).

use results::run::{RunId, RunStatus};
use results::scope::StepNote;

use crate::catalogue::MetricId;

/// Something that makes a study's groups less comparable than they look.
#[derive(Debug, Clone, PartialEq)]
pub enum StudyWarning {
    /// Group `group` (an index into [`super::Study::groups`]) holds runs
    /// of several configurations (`configs`, by fingerprint); `differ`:
    /// the settings whose values differ between its runs.
    MixedConfigs { group: usize, configs: Vec<String>, differ: Vec<String> },
    /// A run of group `group` declares a setting its own records
    /// contradict (`what`: [`crate::declared::contradictions`]).
    Contradiction { group: usize, run: RunId, what: crate::declared::Contradiction },
    /// Group `group` holds runs that are not complete.
    NotComplete { group: usize, runs: Vec<(RunId, RunStatus)> },
    /// Runs of one configuration (the same recorded and declared
    /// settings, `label`) sit at two levels far beyond their own spread:
    /// left out of the noise floor. `metrics`: each metric it shows on,
    /// with the low and the high level's median, in the order of their
    /// text ids.
    LevelShift {
        low: Vec<RunId>,
        high: Vec<RunId>,
        label: Option<String>,
        metrics: Vec<(MetricId, f64, f64)>,
    },
    /// The groups come from `count` machines: each run's machine
    /// description and fingerprint (with repeats).
    Machines { count: usize, machines: Vec<(String, String)> },
}

/// What the reader must know to trust a study.
#[derive(Debug, Clone, PartialEq)]
pub enum StudyNote {
    /// No recorded or declared setting differs between the groups;
    /// `labels_differ`: their runs carry different labels, which are then
    /// taken as what differs.
    NothingDiffers { labels_differ: bool },
    /// Run `run` (of group `group`) cannot compute `metric` from part of
    /// what it needs: `what` is missing ([`crate::scope::Missing`]).
    Missing { group: usize, run: Option<RunId>, metric: MetricId, what: crate::scope::Lacking },
    /// `metric` was measured at its scope in the groups `measured` and
    /// derived in the groups `derived`: shown side by side, not judged.
    MixedScope { metric: MetricId, measured: Vec<usize>, derived: Vec<usize> },
    /// `metrics` (in the order of their text ids) were derived in `runs`
    /// (each group with its runs), never deciding a pick; `steps`: why
    /// those runs have no package-scope records (their stored step notes;
    /// none: they hold no such note).
    Derived { metrics: Vec<MetricId>, runs: Vec<(usize, Vec<Option<RunId>>)>, steps: Vec<StepNote> },
    /// The program metrics of these groups (each with its one run) are
    /// the repeats inside one `exec` call.
    OneExecCall { runs: Vec<(usize, RunId)> },
    /// Row `row` (an index into [`super::Study::metrics`]), a per-node
    /// figure, is not judged between `groups`, whose nodes differ in
    /// size ([`super::Study::layouts`]).
    NodeSizes { row: usize, groups: Vec<usize> },
}
