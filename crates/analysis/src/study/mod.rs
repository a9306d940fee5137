//! Settings studies: groups of runs (one group per setting) side by side
//! against a baseline group, with the settings that differ, a verdict per
//! metric from the run-to-run spread ([`results::runstats`]), the best
//! group per metric where the verdict supports it, hidden-NUMA evidence,
//! and recommendations per workload profile. One plain data structure,
//! [`Study`], printed by `compare` (text and `--json`) and drawn by the
//! reports (`report::study`).

use std::collections::{BTreeMap, BTreeSet};

use results::run::{LoadedRun, RunId, RunStatus};
use results::runstats::{Basis, Criteria, FloorKind, GroupVerdict, Undecided};
use serde::Serialize;

use crate::catalogue::MetricId;
use crate::data::RunData;
use crate::layout::Layout;

mod build;
mod derivation;
mod floors;
mod recommend;
mod rows;
mod said;

pub use floors::{Floors, LevelShift};
pub use recommend::{Against, Change, ForWhom, Missing, Next, Reason};
pub use said::{StudyNote, StudyWarning};

/// The most groups a study compares side by side.
pub const MAX_GROUPS: usize = 8;

/// Config fields that are not settings (see `audit::fingerprint`).
const NOT_SETTINGS: [&str; 2] = ["fingerprint", "budget"];

/// Why a study cannot be built from the groups given: each is the user's
/// mistake (exit 2). Reading the runs is the caller's: the store's errors
/// never reach analysis.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("compare needs 2 to {MAX_GROUPS} groups of runs (got {0})")]
    GroupCount(usize),
    #[error("{0:?} selects no run")]
    NoRuns(String),
    #[error("run {run} is in two groups ({a} and {b}); each run may be in one group only")]
    Overlap { run: RunId, a: String, b: String },
}

/// `n` groups can be compared (2 to [`MAX_GROUPS`]): checked before the
/// caller reads any run.
pub fn check_group_count(n: usize) -> Result<(), StudyError> {
    if (2..=MAX_GROUPS).contains(&n) {
        Ok(())
    } else {
        Err(StudyError::GroupCount(n))
    }
}

/// A group of runs as given: the reference that selected it and its runs.
#[derive(Debug, Clone)]
pub struct GroupInput {
    pub reference: String,
    pub runs: Vec<LoadedRun>,
}

/// One group of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyGroup {
    /// The reference that selected it (`label:SNC2`, `config:3f2a`, `17`).
    pub reference: String,
    /// The runs' common label, else the reference.
    pub label: String,
    /// Run ids, oldest first.
    pub runs: Vec<RunId>,
    /// Configuration fingerprints of its runs (more than one: a mixed group).
    pub configs: Vec<String>,
    /// Machine fingerprints of its runs.
    pub machines: Vec<String>,
    /// Runs that are not complete, with their status.
    pub not_complete: Vec<(RunId, RunStatus)>,
    /// The per-CPU latency evidence when the group's settings hide NUMA.
    pub hidden_numa: Option<HiddenNuma>,
    /// Every run of the group saw one OS node: remote figures are
    /// impossible for it, never asked for.
    pub one_node: bool,
}

/// The per-CPU latency evidence that a group's settings hide NUMA: the OS
/// shows one node while, in every run of the group that measured per-CPU
/// latency, the CPUs split into groups by their latency to one memory
/// node on a machine with NUMA below the OS (the rule of
/// [`crate::hidden::hides_numa`]). The front ends word it.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenNuma {
    /// The memory node the per-CPU latency was measured to (`None`: the
    /// run did not record it).
    pub mem_node: Option<u32>,
    /// The latency groups of the first such run, fastest first: how many
    /// CPUs and their latency, ns.
    pub groups: Vec<(usize, f64)>,
    /// The runs that show the split.
    pub runs: Vec<RunId>,
    /// The machine's NUMA below the OS in the first such run (packages or
    /// firmware proximity domains).
    pub below: results::hidden::NumaBelow,
}

/// Where a noise floor came from: the kind of bound it is (what it
/// guarantees, at the study's confidence) and the repeated runs of
/// identical settings of this machine it rests on. The front ends word it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloorSource {
    pub kind: FloorKind,
    /// Runs of every configuration of the metric's floors.
    pub runs: usize,
    /// Configurations (of identical settings) they come from.
    pub configurations: usize,
}

/// A setting that differs between groups.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingDiff {
    pub setting: String,
    /// One per group.
    pub values: Vec<SettingValue>,
}

/// A setting's value in one group of a study: the front ends word it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingValue {
    /// No run of the group records the setting.
    Unset,
    /// Every run of the group holds this value.
    One(String),
    /// The group's runs disagree: the values they hold, each once, in
    /// order (`None`: runs that do not record the setting).
    Mixed(Vec<Option<String>>),
    /// The names of the machines the group's runs ran on, each once, in
    /// order (the `machine` row of a study across machines).
    Machines(Vec<String>),
}

/// One metric of one group against the baseline group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupMetric {
    /// Runs that measured it.
    pub n: usize,
    pub median: Option<f64>,
    /// One value per run that measured it (the dots of the chart).
    pub values: Vec<f64>,
    /// Against the baseline group's median (the same figure as `median`);
    /// `None` for the baseline.
    pub change_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub verdict: Option<GroupVerdict>,
    /// For `undecided`: runs per group that would likely decide, never a
    /// count that the noise floor for groups that size would still hold
    /// undecided.
    pub runs_needed: Option<u32>,
    pub basis: Option<Basis>,
    /// The noise floor this comparison was held to (percent), if measured,
    /// and where it came from.
    pub noise_floor_pct: Option<f64>,
    pub noise_floor_source: Option<FloorSource>,
    /// Too few runs for an interval and for a floor that could decide: the
    /// runs of one configuration of identical settings still missing on
    /// this machine for such a floor (`runs_needed` per group is the other
    /// way to decide).
    pub floor_runs_needed: Option<usize>,
    /// More runs per group would not decide: the noise floor for groups of
    /// the size that would give an interval (percent) is larger than the
    /// change. Alternate the settings' runs instead.
    pub more_runs_held_by_floor_pct: Option<f64>,
    /// Why this group cannot have the metric (one OS node: no remote
    /// memory); `None` where it can. The front ends word it.
    pub not_applicable: Option<crate::layout::NotApplicable>,
    /// The bracketed runs the verdict rests on (basis `bracketed`: runs of
    /// one group with runs of the other on both sides of them).
    pub brackets: Option<usize>,
    /// The study's groups whose runs gave the run-to-run noise, when it
    /// was pooled over 3 or more of them (docs/store.md's premise,
    /// checked); absent when the pair's own brackets gave it.
    pub pooled_groups: Option<usize>,
    /// Why an `undecided` verdict could not rest on the runs' order (not
    /// alternated, or too few runs to bracket).
    pub undecided_because: Option<Undecided>,
    /// How the group's value was derived when some of its runs did not
    /// measure the metric at its scope (from cells measured one at a
    /// time): it is never judged against a measured group and never
    /// decides a pick.
    pub derived: Option<GroupDerived>,
}

/// One group judged against another on one metric (the pairwise verdicts
/// behind `best_group` and the recommendations).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub verdict: GroupVerdict,
    pub change_pct: f64,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub runs_needed: Option<u32>,
    /// More runs would not decide: the noise floor (%) for groups of
    /// `runs_needed` runs is larger than the change.
    pub more_runs_held_by_floor_pct: Option<f64>,
}

/// One metric across the groups.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyMetric {
    /// Stable id from the catalogue (`local_bw_gbs`, `thread_lat_ns`,
    /// `per_cpu_split_to_node0`, `exec_metric`, ...).
    pub metric: MetricId,
    /// The catalogue's name (the front ends follow it with how the row was
    /// derived, [`StudyMetric::derived`]).
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// The hardware relation and the scope the metric is defined by
    /// (`catalogue::MetricDef`).
    pub relation: crate::layout::Relation,
    pub scope: crate::layout::Scope,
    /// One per group, in the order of [`Study::groups`].
    pub groups: Vec<GroupMetric>,
    /// The group judged better than every other group that has the metric
    /// (pairwise, with the same intervals, margin and floors as the
    /// verdicts); `None` when no group is (a tie inside the margin, or
    /// undecided).
    pub best_group: Option<usize>,
    /// The noise floor for groups the size of the baseline group (each
    /// group's own is in [`GroupMetric::noise_floor_pct`]); `None` where
    /// none can be used (see [`Floors::for_sizes`]).
    pub noise_floor_pct: Option<f64>,
    pub noise_floor_source: Option<FloorSource>,
    /// `pairs[a][b]`: group `b` judged against group `a`.
    pub pairs: Vec<Vec<Option<Pair>>>,
    /// Set when some group's value is derived (see
    /// [`GroupMetric::derived`]): the row decides no pick. The front ends
    /// word it after the row's `name`.
    pub derived: Option<RowDerived>,
}

/// How a group's value of a metric was derived: the front ends word it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDerived {
    /// How its runs derived it, each way once, in order.
    pub from: Vec<crate::scope::DerivedFrom>,
    /// `(n, of)` when only `n` of the `of` runs of the group that have the
    /// metric derived it (the others measured it); `None` when all did.
    pub runs: Option<(usize, usize)>,
}

/// How a row's values were derived: the front ends word it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowDerived {
    /// The groups' derivations, each once, in the order of the groups.
    pub how: Vec<GroupDerived>,
    /// The groups that derived it where another group measured it
    /// (indices into [`Study::groups`]); `None` when every group that has
    /// the metric derived it.
    pub named: Option<Vec<usize>>,
}

/// What a workload profile should pick, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The audit's workload profile (`database`, `latency`, `hpc`,
    /// `virtualization`, `ai-training`, `general`), or `program` (the
    /// program's own metric under `exec`); written as that name.
    pub profile: ForWhom,
    /// What the recommendation rests on, in the order found (the front
    /// ends word it).
    #[serde(skip)]
    pub reasons: Vec<Reason>,
    /// The group a pick is judged against and the settings that differ
    /// (`None`: no pick, or the pick is judged against no other group).
    #[serde(skip)]
    pub against: Option<Against>,
    /// The groups still in the running when the profile makes no pick
    /// after comparing some (empty otherwise).
    #[serde(skip)]
    pub no_pick_between: Vec<usize>,
    /// What the profile's runs cannot hold whatever they say.
    #[serde(skip)]
    pub missing: Option<Missing>,
    /// What to measure next, in the order found.
    #[serde(skip)]
    pub next: Vec<Next>,
    /// The group to pick, when the data decide.
    pub group: Option<usize>,
    /// The metric that decided the pick.
    pub decided_by: Option<MetricId>,
    /// Groups ruled out for this profile whatever their figures (a
    /// configuration that hides a per-CPU latency split from the OS).
    pub excluded: Vec<usize>,
    /// Why the profile makes no pick (absent where it picks, and for
    /// `general`, which never picks: it names settings that hide NUMA).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_pick: Option<NoPick>,
}

/// Why a profile makes no pick: the front ends word it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum NoPick {
    /// No metric the profile judges was measured in two of its groups.
    NothingMeasured,
    /// The groups left tie within the margin on every metric that ranks
    /// them (`groups`: their indices).
    Tie { groups: Vec<usize> },
    /// `metric` (the first that could rank them) left `groups` undecided:
    /// more runs, or runs alternated over time, would decide.
    Undecided { metric: MetricId, groups: Vec<usize> },
    /// Every group was ruled out (each hides a per-CPU latency split).
    AllRuledOut,
}

/// A settings study: groups of runs against a baseline group. Typed all
/// through: the front ends word its warnings and notes, and build the
/// `--json` document that prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Study {
    pub groups: Vec<StudyGroup>,
    /// Index of the baseline in `groups`.
    pub baseline: usize,
    /// Every setting that differs between the groups.
    pub settings_diff: Vec<SettingDiff>,
    /// The settings every group shares: the setting and its value.
    pub settings_same: Vec<(String, SettingValue)>,
    pub metrics: Vec<StudyMetric>,
    pub recommendations: Vec<Recommendation>,
    /// Two-sided confidence of the intervals.
    pub confidence: f64,
    /// Equivalence margin, percent.
    pub margin_pct: f64,
    /// True when the groups come from more than one machine.
    pub across_machines: bool,
    /// Mixed groups, other machines, incomplete runs.
    pub warnings: Vec<StudyWarning>,
    /// What the reader must know to trust the study (nothing recorded
    /// differs between the groups: declare it with `--set`).
    pub notes: Vec<StudyNote>,
    /// Where each group's nodes sit (its first run's).
    pub layouts: Vec<Layout>,
    /// The headline figures of the groups' runs that are impossible
    /// ([`crate::impossible`]): each group median they enter is flagged.
    pub impossible: Vec<StudyImpossible>,
    /// The runs whose figure of a metric rests on results that were marked
    /// disturbed or noisy ([`crate::inputs::marked_inputs`]): a verdict on
    /// them compares figures other work may have held back.
    pub marked_inputs: Vec<crate::inputs::MarkedInput>,
}

/// An impossible headline figure of one run of a study.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyImpossible {
    /// The group (index into [`Study::groups`]) and the run.
    pub group: usize,
    pub run: RunId,
    /// The metric's stable id (`local_bw_gbs`).
    pub metric: MetricId,
    /// The figure, the limit it breaks and the likely cause
    /// (`report::impossible::text` words it).
    pub figure: crate::impossible::Impossible,
}

impl Study {
    /// Whether group `group`'s `metric` holds an impossible figure.
    pub fn impossible_in(&self, group: usize, metric: &MetricId) -> bool {
        self.impossible.iter().any(|i| i.group == group && i.metric == *metric)
    }
}

fn settings_of(run: &LoadedRun) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = run
        .config
        .settings()
        .filter(|s| !NOT_SETTINGS.contains(&s.name.split('.').next().unwrap_or_default()))
        .map(|s| (s.name, s.value.compared_text()))
        .collect();
    // What `exec` placed the program under is part of what was measured.
    let policies: Vec<&str> = run
        .records()
        .filter_map(|r| match r {
            results::Record::Exec(e) => Some(e.policy.as_str()),
            _ => None,
        })
        .collect();
    if !policies.is_empty() {
        m.insert("exec.policies".into(), policies.join(", "));
    }
    m
}

impl Study {
    /// The study of `groups` as the caller loaded them (`base`: the index
    /// of the baseline group), its noise floors from `pool`: every
    /// complete run of the machines involved (`compare` reads them from
    /// the store). A group without runs, or a run in two groups, is the
    /// user's mistake.
    pub fn of_groups(
        groups: &[GroupInput],
        base: usize,
        policy: &Criteria,
        pool: &[LoadedRun],
    ) -> Result<Study, StudyError> {
        check_group_count(groups.len())?;
        let mut seen: BTreeMap<RunId, &str> = BTreeMap::new();
        for g in groups {
            if g.runs.is_empty() {
                return Err(StudyError::NoRuns(g.reference.clone()));
            }
            for r in &g.runs {
                if let Some(prev) = seen.insert(r.summary.id, &g.reference) {
                    return Err(StudyError::Overlap {
                        run: r.summary.id,
                        a: prev.to_string(),
                        b: g.reference.clone(),
                    });
                }
            }
        }
        Ok(Study::build(groups, base, policy, &Floors::from_runs(pool)))
    }

    /// The machines (fingerprints) of the groups' runs: those whose
    /// complete runs make the noise floors' pool.
    pub fn machines_of(groups: &[GroupInput]) -> BTreeSet<String> {
        groups.iter().flat_map(|g| &g.runs).map(|r| r.summary.machine_fingerprint.clone()).collect()
    }

    /// The runs of identical settings this machine needs before one run
    /// per side can be judged at the study's confidence (the range floor
    /// of [`results::runstats::runs_for_range_floor`]).
    pub fn runs_for_one_run_floor(&self) -> usize {
        results::runstats::runs_for_range_floor(2, self.confidence)
    }

    /// Each run as its own group, the first the baseline; noise floors from
    /// these runs only (repeated identical settings among them).
    pub fn of_runs(runs: &[LoadedRun]) -> Study {
        let groups: Vec<GroupInput> = runs
            .iter()
            .map(|r| GroupInput { reference: r.summary.id.to_string(), runs: vec![r.clone()] })
            .collect();
        Study::build(&groups, 0, &Criteria::default(), &Floors::from_runs(runs))
    }
}

/// The impossible headline figures of every group's runs.
fn impossible_of(groups: &[GroupInput]) -> Vec<StudyImpossible> {
    let mut out = Vec::new();
    for (group, g) in groups.iter().enumerate() {
        for r in &g.runs {
            for (k, i) in crate::impossible::headlines(&RunData::of(r)) {
                out.push(StudyImpossible {
                    group,
                    run: r.summary.id,
                    metric: MetricId::Headline(k),
                    figure: i,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod exec_sample_tests {
    use super::*;
    use crate::data::tests::{rec, run_of};
    use results::profile::Profile as WorkloadProfile;
    use serde_json::{json, Value};

    /// A run of `exec --policies default --repeat N` whose repeats scored
    /// `scores`, labelled `label`, with its own id and configuration.
    fn exec_run(id: i64, label: &str, scores: &[f64]) -> LoadedRun {
        let runs: Vec<Value> = scores
            .iter()
            .enumerate()
            .map(|(i, s)| json!({"rep": i + 1, "wall_s": 1.0, "exit_code": 0, "ok": true, "metric": s}))
            .collect();
        let median = results::stats::median(scores).unwrap();
        let mut r = run_of(
            vec![rec(
                "exec",
                json!({"policy": "default", "placement": "", "runs": runs,
                       "ok_runs": scores.len(), "median_metric": median, "median_wall_s": 1.0,
                       "verdict": "baseline", "metric_higher_is_better": true}),
            )],
            Some(1),
        );
        r.summary.id = RunId(id);
        r.summary.label = Some(label.into());
        r.config =
            serde_json::from_value(json!({"nodes": 1, "declared": {"bios.smt": label}})).unwrap();
        r
    }

    fn group(reference: &str, runs: Vec<LoadedRun>) -> GroupInput {
        GroupInput { reference: reference.into(), runs }
    }

    const ID: &str = "exec_metric[default]";

    #[test]
    fn groups_of_one_exec_call_are_judged_on_its_repeats_and_say_so() {
        let on = exec_run(1, "on", &[40.0, 40.4, 39.6, 40.2, 39.8]);
        let off = exec_run(2, "off", &[30.0, 30.3, 29.7, 30.15, 29.85]);
        let s = Study::build(
            &[group("label:on", vec![on]), group("label:off", vec![off])],
            0,
            &Criteria::default(),
            &Floors::default(),
        );
        let m = s.metrics.iter().find(|m| m.metric == ID).unwrap();
        assert_eq!((m.groups[0].n, m.groups[1].n), (5, 5), "each repeat a sample");
        assert_eq!(m.groups[1].verdict, Some(GroupVerdict::Worse));
        let note = s.notes.iter().find(|n| matches!(n, StudyNote::OneExecCall { .. }));
        let note = note.expect("a note says the samples are one call's repeats");
        assert_eq!(note, &StudyNote::OneExecCall { runs: vec![(0, RunId(1)), (1, RunId(2))] });
    }

    #[test]
    fn groups_of_three_runs_are_judged_one_value_per_run() {
        let runs = |first: i64, label: &str, base: f64| -> Vec<LoadedRun> {
            (0..3)
                .map(|i| {
                    let b = base + i as f64 * 0.1;
                    exec_run(first + i, label, &[b, b + 5.0, b - 5.0, b + 1.0, b - 1.0])
                })
                .collect()
        };
        let s = Study::build(
            &[group("label:on", runs(1, "on", 40.0)), group("label:off", runs(4, "off", 30.0))],
            0,
            &Criteria::default(),
            &Floors::default(),
        );
        let m = s.metrics.iter().find(|m| m.metric == ID).unwrap();
        assert_eq!(m.groups[0].values, [40.0, 40.1, 40.2], "the runs' medians, not 15 repeats");
        assert!(
            s.notes.iter().all(|n| !matches!(n, StudyNote::OneExecCall { .. })),
            "{:?}",
            s.notes
        );
    }

    /// The checks `compare` relied on the store for are analysis': too
    /// few groups, a group without runs and a run in two groups are
    /// refused, whoever loaded the runs.
    #[test]
    fn groups_that_overlap_or_hold_no_run_are_refused() {
        let (a, b) = (exec_run(1, "a", &[1.0]), exec_run(2, "b", &[1.0]));
        let p = Criteria::default();
        let one = [group("1", vec![a.clone()])];
        assert!(matches!(Study::of_groups(&one, 0, &p, &[]), Err(StudyError::GroupCount(1))));
        let empty = [group("1", vec![a.clone()]), group("label:x", vec![])];
        match Study::of_groups(&empty, 0, &p, &[]) {
            Err(StudyError::NoRuns(r)) => assert_eq!(r, "label:x"),
            other => panic!("{other:?}"),
        }
        let twice = [group("label:a", vec![a.clone()]), group("1", vec![a.clone()])];
        match Study::of_groups(&twice, 0, &p, &[]) {
            Err(e @ StudyError::Overlap { .. }) => assert_eq!(
                e.to_string(),
                "run 1 is in two groups (label:a and 1); each run may be in one group only"
            ),
            other => panic!("{other:?}"),
        }
        let s = Study::of_groups(&[group("1", vec![a]), group("2", vec![b])], 1, &p, &[]).unwrap();
        assert_eq!(s.baseline, 1);
        assert!(check_group_count(9).is_err() && check_group_count(8).is_ok());
    }

    #[test]
    fn recommendations_name_their_profile_as_the_audit_does() {
        assert_eq!(ForWhom::Workload(WorkloadProfile::AiTraining).to_string(), "ai-training");
        assert_eq!(ForWhom::Program(None).to_string(), "program");
        assert_eq!(ForWhom::Program(Some("t".into())).to_string(), "program t");
        let on = exec_run(1, "on", &[40.0, 40.4, 39.6, 40.2, 39.8]);
        let off = exec_run(2, "off", &[30.0, 30.3, 29.7, 30.15, 29.85]);
        let s = Study::build(
            &[group("label:on", vec![on]), group("label:off", vec![off])],
            0,
            &Criteria::default(),
            &Floors::default(),
        );
        let names: Vec<&ForWhom> = s.recommendations.iter().map(|r| &r.profile).collect();
        assert_eq!(names, [&ForWhom::Program(None)], "{:?}", s.recommendations);
    }
    /// A small deterministic generator of standard normal values
    /// (xorshift64* and Box-Muller).
    struct Normal(u64);

    impl Normal {
        fn next(&mut self) -> f64 {
            let mut u = || {
                self.0 ^= self.0 >> 12;
                self.0 ^= self.0 << 25;
                self.0 ^= self.0 >> 27;
                ((self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5)
                    / (1u64 << 53) as f64
            };
            let (a, b) = (u(), u());
            (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
        }
    }

    #[test]
    fn a_five_percent_change_at_one_and_a_half_percent_noise_in_a_study_of_four_settings_of_three_runs_is_decided(
    ) {
        // The seeds' shape: 4 settings, 3 runs each, taken in turn (R S T U
        // R S T U ...), 1.5% log-normal noise per run, a drift of 2% per
        // run; S is 5% above R, T and U are R. S against R must be `better`
        // in at least 95% of 1000 studies, what docs/store.md gives for 3
        // runs per setting: its own 3 + 3 brackets alone (3 degrees of
        // freedom for the noise) decide about 88%, the noise pooled over
        // the study (7) about 96-97% (the premises of pooling and of the
        // verdicts in docs/store.md; the false verdicts on identical
        // settings are runstats' `pooled_verdicts_on_identical_...`).
        let mut z = Normal(0x5EED_4747);
        let (trials, mut better, mut pooled) = (1000, 0, 0);
        for _ in 0..trials {
            let mut groups: Vec<Vec<LoadedRun>> = vec![Vec::new(); 4];
            for i in 0..12 {
                let g = i % 4;
                let gap = if g == 1 { 1.05 } else { 1.0 };
                let score = 100.0 * gap * 1.02f64.powi(i as i32) * (0.015 * z.next()).exp();
                groups[g].push(exec_run(i as i64 + 1, ["r", "s", "t", "u"][g], &[score]));
            }
            let groups: Vec<GroupInput> = groups
                .into_iter()
                .zip(["label:r", "label:s", "label:t", "label:u"])
                .map(|(runs, name)| group(name, runs))
                .collect();
            let s = Study::build(&groups, 0, &Criteria::default(), &Floors::default());
            let m = s.metrics.iter().find(|m| m.metric == ID).unwrap();
            let c = &m.groups[1];
            assert_eq!(c.basis, Some(Basis::Bracketed), "{c:?}");
            better += u32::from(c.verdict == Some(GroupVerdict::Better));
            pooled += u32::from(c.pooled_groups == Some(4));
        }
        assert!(better * 100 >= trials * 95, "decided {better} of {trials} (pooled {pooled})");
        assert!(pooled * 10 >= trials * 9, "pooled {pooled} of {trials}");
    }
}
