//! Settings studies: groups of runs (one group per setting) side by side
//! against a baseline group, with the settings that differ, a verdict per
//! metric from the run-to-run spread ([`results::runstats`]), the best
//! group per metric where the verdict supports it, hidden-NUMA evidence,
//! and recommendations per workload profile. One plain data structure,
//! [`Study`], printed by `compare` (text and `--json`) and drawn by the
//! reports (`report::study`).

use std::collections::{BTreeMap, BTreeSet};

use results::profile::Profile as WorkloadProfile;
use results::run::{LoadedRun, RunId, RunStatus};
use results::runstats::{
    bracketed_study, guard_floor, interval_rank, judge, judge_bracketed, judge_fit, noise_is_even,
    range_floor, Basis, Criteria, GroupVerdict, Judgement, NoiseFloor, Undecided,
    DEFAULT_MARGIN_PCT, MAX_RUNS_SUGGESTED,
};
use serde::Serialize;

use crate::catalogue::{self, MetricDef, MetricId};
use crate::data::RunData;
use crate::layout::Layout;
use crate::text::{clip, signed_pct};

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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyGroup {
    /// The reference that selected it (`label:SNC2`, `config:3f2a`, `17`).
    #[serde(rename = "ref")]
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
    pub not_complete: Vec<String>,
    /// The per-CPU latency evidence when the group's settings hide NUMA.
    pub hidden_numa: Option<String>,
    /// Every run of the group saw one OS node: remote figures are
    /// impossible for it, never asked for.
    pub one_node: bool,
}

/// A setting that differs between groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingDiff {
    pub setting: String,
    /// One per group (`mixed (a | b)` when a group's runs disagree).
    pub values: Vec<String>,
}

/// One metric of one group against the baseline group.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
    pub noise_floor_source: Option<String>,
    /// Too few runs for an interval and for a floor that could decide: the
    /// runs of one configuration of identical settings still missing on
    /// this machine for such a floor (`runs_needed` per group is the other
    /// way to decide).
    pub floor_runs_needed: Option<usize>,
    /// More runs per group would not decide: the noise floor for groups of
    /// the size that would give an interval (percent) is larger than the
    /// change. Alternate the settings' runs instead.
    pub more_runs_held_by_floor_pct: Option<f64>,
    /// Why this group cannot have the metric (`one OS node: no remote
    /// memory`); `None` where it can.
    pub not_applicable: Option<String>,
    /// The bracketed runs the verdict rests on (basis `bracketed`: runs of
    /// one group with runs of the other on both sides of them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brackets: Option<usize>,
    /// The study's groups whose runs gave the run-to-run noise, when it
    /// was pooled over 3 or more of them (docs/store.md's premise,
    /// checked); absent when the pair's own brackets gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled_groups: Option<usize>,
    /// Why an `undecided` verdict could not rest on the runs' order (not
    /// alternated, or too few runs to bracket).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undecided_because: Option<Undecided>,
    /// How the group's value was derived when some of its runs did not
    /// measure the metric at its scope (`derived from cells measured one
    /// at a time`): it is never judged against a measured group and never
    /// decides a pick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived: Option<String>,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyMetric {
    /// Stable id from the catalogue (`local_bw_gbs`, `thread_lat_ns`,
    /// `per_cpu_split_to_node0`, `exec_metric`, ...).
    pub metric: String,
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
    pub noise_floor_source: Option<String>,
    /// `pairs[a][b]`: group `b` judged against group `a`.
    #[serde(skip)]
    pub pairs: Vec<Vec<Option<Pair>>>,
    /// Set when some group's value is derived (see
    /// [`GroupMetric::derived`]): the row decides no pick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived: Option<String>,
}

/// What a workload profile should pick, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The audit's workload profile (`database`, `latency`, `hpc`,
    /// `virtualization`, `ai-training`, `general`), or `program` (the
    /// program's own metric under `exec`); written as that name.
    pub profile: ForWhom,
    pub text: String,
    /// The group to pick, when the data decide.
    pub group: Option<usize>,
    /// The metric that decided the pick.
    pub decided_by: Option<String>,
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
    Undecided { metric: String, groups: Vec<usize> },
    /// Every group was ruled out (each hides a per-CPU latency split).
    AllRuledOut,
}

/// A settings study: groups of runs against a baseline group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Study {
    pub groups: Vec<StudyGroup>,
    /// Index of the baseline in `groups`.
    pub baseline: usize,
    /// Every setting that differs between the groups.
    pub settings_diff: Vec<SettingDiff>,
    /// The settings every group shares, as `setting=value`.
    pub settings_same: Vec<String>,
    pub metrics: Vec<StudyMetric>,
    pub recommendations: Vec<Recommendation>,
    /// Two-sided confidence of the intervals.
    pub confidence: f64,
    /// Equivalence margin, percent.
    pub margin_pct: f64,
    /// True when the groups come from more than one machine.
    pub across_machines: bool,
    /// Mixed groups, other machines, incomplete runs.
    pub warnings: Vec<String>,
    /// What the reader must know to trust the study (nothing recorded
    /// differs between the groups: declare it with `--set`).
    pub notes: Vec<String>,
    /// Where each group's nodes sit (its first run's).
    #[serde(skip)]
    pub layouts: Vec<Layout>,
    /// The headline figures of the groups' runs that are impossible
    /// ([`crate::impossible`]): each group median they enter is flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub impossible: Vec<StudyImpossible>,
    /// The runs whose figure of a metric rests on results that were marked
    /// disturbed or noisy ([`crate::inputs::marked_inputs`]): a verdict on
    /// them compares figures other work may have held back.
    pub marked_inputs: Vec<crate::inputs::MarkedInput>,
}

/// An impossible headline figure of one run of a study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyImpossible {
    /// The group (index into [`Study::groups`]) and the run.
    pub group: usize,
    pub run: RunId,
    /// The metric's stable id (`local_bw_gbs`).
    pub metric: String,
    /// The figure, the limit it breaks and the likely cause.
    pub text: String,
}

impl Study {
    /// Whether group `group`'s `metric` holds an impossible figure.
    pub fn impossible_in(&self, group: usize, metric: &str) -> bool {
        self.impossible.iter().any(|i| i.group == group && i.metric == metric)
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

/// The per-CPU evidence that a group's settings hide NUMA: in every run of
/// the group that measured per-CPU latency, the rule every reader applies
/// ([`crate::hidden::hides_numa`]) holds. Anything less says nothing.
fn hidden_numa_of(runs: &[LoadedRun]) -> Option<String> {
    let mut seen = Vec::new();
    for r in runs {
        let d = RunData::of(r);
        let per_cpu = catalogue::per_cpu_groups(&d);
        if per_cpu.is_empty() {
            continue;
        }
        let (why, split) = per_cpu.iter().find_map(|p| {
            let sizes: Vec<usize> = p.groups.iter().map(|g| g.0).collect();
            Some((crate::hidden::hides_numa(r, &d, &sizes)?, p))
        })?;
        seen.push((r.summary.id, why, split.clone()));
    }
    let (_, why, p) = seen.first()?;
    let ids: Vec<String> = seen.iter().map(|s| s.0.to_string()).collect();
    let groups: Vec<String> =
        p.groups.iter().map(|(n, ns)| format!("{n} CPUs at {ns:.1} ns")).collect();
    Some(format!(
        "the OS shows one node but per-CPU latency to memory node {} splits into {} groups ({}) in run{} {} of a machine with {why}: this setting hides NUMA (numa=off, NPS0 or firmware interleave) without removing it",
        p.mem_node.map_or("?".into(), |n| n.to_string()),
        p.groups.len(),
        groups.join(", "),
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", "),
    ))
}

/// The floor for a pair of group sizes ([`Floors::for_sizes`]).
type FloorFor = Result<Option<NoiseFloor>, (usize, usize)>;

/// The values of every catalogue metric in a run, each with its samples
/// (empty: the value is the only one).
type RunValues = BTreeMap<String, (f64, Vec<f64>)>;

/// A group with fewer runs than this that measured a metric is judged on
/// the samples inside its runs (each repeat of `exec`) instead of one
/// value per run.
const POOL_SAMPLES_BELOW_RUNS: usize = 3;

/// Repeated runs of identical settings (same machine, same detected and
/// declared settings, same label, complete) per metric, from which the noise floor of
/// each comparison is predicted ([`Floors::for_sizes`]).
#[derive(Debug, Clone, Default)]
pub struct Floors {
    /// Per metric id: one series of values per configuration, in
    /// start-time order.
    pub by_metric: BTreeMap<String, Vec<Vec<f64>>>,
    /// Series of one configuration that split into two levels far apart
    /// beyond their own spread: not repeats, left out of `by_metric`.
    pub level_shifts: Vec<LevelShift>,
}

/// Runs of identical recorded settings and label whose values of a metric
/// sit at two levels, the gap between them more than [`SHIFT_FACTOR`]
/// times the spread inside either level and beyond the margin: something
/// the runs do not record changed between them.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelShift {
    pub metric: String,
    pub label: Option<String>,
    /// The runs of the lower level and of the upper one, with each level's
    /// median.
    pub low: (Vec<RunId>, f64),
    pub high: (Vec<RunId>, f64),
}

/// How many times the spread inside each level the gap between two levels
/// must be for a series not to count as repeats.
const SHIFT_FACTOR: f64 = 4.0;

/// The fewest runs of each level: two runs that happen to agree are not a
/// level (and leaving a bimodal configuration out of the floor would make
/// the floor less cautious on the evidence of four runs).
const MIN_LEVEL: usize = 3;

/// The two levels of a series of `(run, value)`, when it has them
/// ([`LevelShift`]): split at the widest gap between sorted values, each
/// level of at least [`MIN_LEVEL`] runs.
fn level_shift(metric: &str, label: &Option<String>, s: &[(RunId, f64)]) -> Option<LevelShift> {
    let mut v: Vec<(RunId, f64)> =
        s.iter().copied().filter(|x| x.1.is_finite() && x.1 > 0.0).collect();
    if v.len() < 2 * MIN_LEVEL {
        return None;
    }
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    let logs: Vec<f64> = v.iter().map(|x| x.1.ln()).collect();
    let (k, gap) =
        (1..logs.len()).map(|i| (i, logs[i] - logs[i - 1])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    if k < MIN_LEVEL || logs.len() - k < MIN_LEVEL {
        return None;
    }
    let spread = (logs[k - 1] - logs[0]).max(logs[logs.len() - 1] - logs[k]);
    if gap <= SHIFT_FACTOR * spread || gap <= (1.0 + DEFAULT_MARGIN_PCT / 100.0).ln() {
        return None;
    }
    let level = |x: &[(RunId, f64)]| {
        let mut ids: Vec<RunId> = x.iter().map(|r| r.0).collect();
        ids.sort();
        let vals: Vec<f64> = x.iter().map(|r| r.1).collect();
        (ids, results::stats::median(&vals).unwrap_or(f64::NAN))
    };
    Some(LevelShift {
        metric: metric.to_string(),
        label: label.clone(),
        low: level(&v[..k]),
        high: level(&v[k..]),
    })
}

impl Floors {
    /// Collects the series from `runs` (any set: they are grouped by
    /// machine and by every setting, declared ones and `exec`'s placement
    /// included, here, in start-time order).
    pub fn from_runs(runs: &[LoadedRun]) -> Floors {
        let mut by_cfg: BTreeMap<(String, String, Option<String>), Vec<&LoadedRun>> =
            BTreeMap::new();
        for r in runs.iter().filter(|r| r.summary.status == RunStatus::Complete) {
            // Every setting the study compares (detected, declared, and the
            // placement `exec` ran the program under), not only the hash
            // stored with the run; and the label: a label is the user's
            // statement that something differs, so runs of two labels are
            // never repeats of one configuration, whatever the OS saw.
            let settings = serde_json::to_string(&settings_of(r)).unwrap_or_default();
            let key = (r.summary.machine_fingerprint.clone(), settings, r.summary.label.clone());
            by_cfg.entry(key).or_default().push(r);
        }
        let mut by_metric: BTreeMap<String, Vec<Vec<f64>>> = BTreeMap::new();
        let mut level_shifts = Vec::new();
        for ((_, _, label), v) in by_cfg.iter_mut() {
            // By the instant each start names (offsets differ between
            // machines and imports), not by its text.
            v.sort_by_cached_key(|r| {
                (results::time::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN), r.summary.id)
            });
            let mut series: BTreeMap<String, Vec<(RunId, f64)>> = BTreeMap::new();
            for r in v.iter() {
                for mv in catalogue::catalogue(r) {
                    series.entry(mv.def.id.to_string()).or_default().push((r.summary.id, mv.value));
                }
            }
            for (id, s) in series {
                // Two levels far apart are not the spread of repeats: left
                // out, so that an unrecorded change never widens the floor.
                if let Some(shift) = level_shift(&id, label, &s) {
                    level_shifts.push(shift);
                    continue;
                }
                by_metric.entry(id).or_default().push(s.into_iter().map(|x| x.1).collect());
            }
        }
        Floors { by_metric, level_shifts }
    }

    /// The floor a comparison of groups of `m` and `n` runs is held to.
    /// With an interval (groups large enough at the confidence asked): the
    /// Student-t guard on medians of `min(m, n)` consecutive runs, else of
    /// the largest smaller block measured (wider, so more cautious); `None`
    /// when no configuration has two blocks. Without an interval: the
    /// distribution-free range floor for `m + n` runs, or `Err((have,
    /// need))` when no configuration has the runs it needs.
    pub fn for_sizes(
        &self,
        metric: &str,
        m: usize,
        n: usize,
        policy: &Criteria,
    ) -> Result<Option<NoiseFloor>, (usize, usize)> {
        let empty = Vec::new();
        let series = self.by_metric.get(metric).unwrap_or(&empty);
        let what = |f: NoiseFloor| {
            let runs: usize = series.iter().map(Vec::len).sum();
            NoiseFloor {
                source: format!(
                    "{} ({runs} runs of {} configuration(s) of this machine in this database)",
                    f.source,
                    series.len()
                ),
                ..f
            }
        };
        if interval_rank(m, n, policy.confidence).is_some() {
            let k = m.min(n).clamp(1, MAX_BLOCK);
            Ok((1..=k).rev().find_map(|k| guard_floor(series, k, policy.confidence)).map(what))
        } else {
            range_floor(series, m + n, policy.confidence).map(|f| Some(what(f)))
        }
    }
}

/// The largest block size floors are computed for.
const MAX_BLOCK: usize = 5;

impl Study {
    /// Builds the study of `groups` against `groups[baseline]`.
    ///
    /// # Panics
    /// When `baseline` is out of range.
    pub fn build(
        groups: &[GroupInput],
        baseline: usize,
        policy: &Criteria,
        floors: &Floors,
    ) -> Study {
        assert!(baseline < groups.len(), "baseline index out of range");
        let mut warnings = Vec::new();
        // Groups.
        let mut infos = Vec::new();
        let mut settings: Vec<BTreeMap<String, String>> = Vec::new();
        // Where each group's nodes sit (its first run's): what makes a
        // metric impossible for it, and whether its per-node figures are
        // the same metric as another group's.
        let layouts: Vec<Layout> = groups
            .iter()
            .map(|g| {
                g.runs.first().map_or_else(Layout::default, |r| {
                    Layout::of(r, catalogue::os_nodes(r, &RunData::of(r)))
                })
            })
            .collect();
        for g in groups {
            let labels: BTreeSet<Option<&str>> =
                g.runs.iter().map(|r| r.summary.label.as_deref()).collect();
            let label = match labels.iter().next() {
                Some(Some(l)) if labels.len() == 1 => l.to_string(),
                _ => g.reference.trim_start_matches("label:").to_string(),
            };
            let mut configs: Vec<String> = Vec::new();
            let mut machines: Vec<String> = Vec::new();
            for r in &g.runs {
                if !configs.contains(&r.summary.config_hash) {
                    configs.push(r.summary.config_hash.clone());
                }
                if !machines.contains(&r.summary.machine_fingerprint) {
                    machines.push(r.summary.machine_fingerprint.clone());
                }
            }
            let per_run: Vec<BTreeMap<String, String>> = g.runs.iter().map(settings_of).collect();
            let keys: BTreeSet<&String> = per_run.iter().flat_map(|m| m.keys()).collect();
            let mut merged = BTreeMap::new();
            let mut inner_diff = Vec::new();
            for k in keys {
                let vals: BTreeSet<&str> =
                    per_run.iter().map(|m| m.get(k).map(String::as_str).unwrap_or("-")).collect();
                let v = if vals.len() == 1 {
                    vals.iter().next().map(|s| s.to_string()).unwrap_or_default()
                } else {
                    inner_diff.push(k.clone());
                    format!("mixed ({})", vals.into_iter().collect::<Vec<_>>().join(" | "))
                };
                merged.insert(k.clone(), v);
            }
            if configs.len() > 1 {
                warnings.push(format!(
                    "group {} mixes {} configurations ({}){}",
                    g.reference,
                    configs.len(),
                    configs.join(", "),
                    if inner_diff.is_empty() {
                        String::new()
                    } else {
                        format!(": {} differ inside it", inner_diff.join(", "))
                    }
                ));
            }
            for r in &g.runs {
                let packages = r.machine_info.packages.as_ref().map(|c| c.get());
                for c in crate::declared::contradictions(&r.config, packages) {
                    warnings.push(format!("group {}: run {}: {c}", g.reference, r.summary.id));
                }
            }
            let not_complete: Vec<String> = g
                .runs
                .iter()
                .filter(|r| r.summary.status != RunStatus::Complete)
                .map(|r| format!("run {} {}", r.summary.id, r.summary.status))
                .collect();
            if !not_complete.is_empty() {
                warnings.push(format!(
                    "group {} holds runs that are not complete: {}",
                    g.reference,
                    not_complete.join(", ")
                ));
            }
            settings.push(merged);
            infos.push(StudyGroup {
                reference: g.reference.clone(),
                label,
                runs: g.runs.iter().map(|r| r.summary.id).collect(),
                configs,
                machines,
                not_complete,
                hidden_numa: hidden_numa_of(&g.runs),
                one_node: !g.runs.is_empty()
                    && g.runs.iter().all(|r| catalogue::os_nodes(r, &RunData::of(r)) <= 1),
            });
        }
        // Runs of one configuration at two levels, where the study holds
        // any of them: named once per split, with the metrics it shows on.
        let ours: BTreeSet<RunId> =
            groups.iter().flat_map(|g| &g.runs).map(|r| r.summary.id).collect();
        let mut shifts: BTreeMap<(Vec<RunId>, Vec<RunId>), Vec<&LevelShift>> = BTreeMap::new();
        for sh in &floors.level_shifts {
            if sh.low.0.iter().chain(&sh.high.0).any(|id| ours.contains(id)) {
                shifts.entry((sh.low.0.clone(), sh.high.0.clone())).or_default().push(sh);
            }
        }
        for ((low, high), v) in &shifts {
            let ids = |v: &[RunId]| v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
            let metrics: Vec<String> = v
                .iter()
                .take(3)
                .map(|s| {
                    format!(
                        "{} {:.4} vs {:.4}",
                        catalogue::def_of(&s.metric).name,
                        s.low.1,
                        s.high.1
                    )
                })
                .collect();
            let label =
                v[0].label.as_deref().map_or("no label".to_string(), |l| format!("label {l}"));
            warnings.push(format!(
                "runs {} and runs {} ({label}, the same recorded and declared settings) sit at two levels far beyond their own spread ({}{}): they are not repeats, something unrecorded changed between them; they are left out of the noise floor. Declare what changed with `--set KEY=VALUE`, or label the runs apart",
                ids(low),
                ids(high),
                metrics.join("; "),
                if v.len() > 3 { format!("; {} more metrics", v.len() - 3) } else { String::new() },
            ));
        }
        let all_machines: BTreeSet<&String> = infos.iter().flat_map(|g| &g.machines).collect();
        let across_machines = all_machines.len() > 1;
        if across_machines {
            let descr: BTreeSet<String> = groups
                .iter()
                .flat_map(|g| &g.runs)
                .map(|r| format!("{} [{}]", r.summary.machine, r.summary.machine_fingerprint))
                .collect();
            warnings.push(format!(
                "the groups come from {} machines ({}): differences include the hardware, not only the settings",
                all_machines.len(),
                descr.into_iter().collect::<Vec<_>>().join("; ")
            ));
        }
        // Settings diff.
        let keys: BTreeSet<&String> = settings.iter().flat_map(|m| m.keys()).collect();
        let mut settings_diff = Vec::new();
        let mut settings_same = Vec::new();
        if across_machines {
            settings_diff.push(SettingDiff {
                setting: "machine".into(),
                values: groups
                    .iter()
                    .map(|g| {
                        let d: BTreeSet<&str> =
                            g.runs.iter().map(|r| r.summary.machine.as_str()).collect();
                        d.into_iter().collect::<Vec<_>>().join(" | ")
                    })
                    .collect(),
            });
        }
        for k in keys {
            let values: Vec<String> =
                settings.iter().map(|m| m.get(k).cloned().unwrap_or_else(|| "-".into())).collect();
            if values.iter().all(|v| *v == values[0]) {
                settings_same.push(format!("{k}={}", values[0]));
            } else {
                settings_diff.push(SettingDiff { setting: k.clone(), values });
            }
        }
        // Group names that say which group they are: a label two groups
        // share is followed by the run (one-run groups) or the reference.
        let twins: Vec<bool> = (0..infos.len())
            .map(|i| (0..infos.len()).any(|j| j != i && infos[j].label == infos[i].label))
            .collect();
        for (g, twin) in infos.iter_mut().zip(twins) {
            if twin {
                g.label = match g.runs.as_slice() {
                    [one] => format!("{} (run {one})", g.label),
                    _ => format!("{} ({})", g.label, g.reference),
                };
            }
        }
        let mut notes = Vec::new();
        if settings_diff.is_empty() {
            let labels: BTreeSet<Option<&str>> =
                groups.iter().flat_map(|g| &g.runs).map(|r| r.summary.label.as_deref()).collect();
            notes.push(if labels.len() > 1 {
                "no recorded or declared setting differs between the groups: their labels are taken as what differs (runs of different labels are never pooled as repeats in the noise floor), but nothing records what changed, and a gap between groups taken one after the other may be the machine's drift. Alternate their runs over time (A, B, A, B: each run is then judged against the runs of the other group on both sides of it, so that the drift cancels) and declare what you changed with `--set KEY=VALUE` on `run`/`exec`/`bw`/`lat` (e.g. `--set bios.smt=off`)".to_string()
            } else {
                "no recorded or declared setting differs between the groups: a difference between them cannot be told from run-to-run drift, and their runs count as repeats of one configuration in the noise floor. Declare what you changed with `--set KEY=VALUE` on `run`/`exec`/`bw`/`lat` (e.g. `--set bios.smt=off`) so that the runs of each setting are told apart".to_string()
            });
        }
        // Metrics: every catalogue metric any run holds, in catalogue order.
        let per_group: Vec<Vec<RunValues>> = groups
            .iter()
            .map(|g| {
                g.runs
                    .iter()
                    .map(|r| {
                        catalogue::catalogue(r)
                            .into_iter()
                            .map(|m| (m.def.id.to_string(), (m.value, m.samples)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let g_has_runs: Vec<bool> = groups.iter().map(|g| !g.runs.is_empty()).collect();
        // Per group and run: the metrics derived instead of measured at
        // their scope, and the figures left out for missing cells.
        let derivation = crate::scope::Derivation::of(groups);
        notes.extend(derivation.missing_notes(&infos));
        // Each run's place in the study's series (its rank by start, then
        // by id) and its values, for the brackets of alternated groups.
        let mut order: Vec<(i64, RunId)> = groups
            .iter()
            .flat_map(|g| &g.runs)
            .map(|r| {
                let t = results::time::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN);
                (t, r.summary.id)
            })
            .collect();
        order.sort();
        let place = |r: &LoadedRun| {
            let t = results::time::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN);
            order.binary_search(&(t, r.summary.id)).unwrap_or(0) as f64
        };
        let timeline: Vec<Vec<(f64, BTreeMap<String, f64>)>> = groups
            .iter()
            .map(|g| {
                g.runs
                    .iter()
                    .map(|r| {
                        let v = catalogue::catalogue(r)
                            .into_iter()
                            .map(|m| (m.def.id.to_string(), m.value));
                        (place(r), v.collect())
                    })
                    .collect()
            })
            .collect();
        let mut defs: Vec<MetricDef> = Vec::new();
        for r in groups.iter().flat_map(|g| &g.runs) {
            for m in catalogue::catalogue(r) {
                if !defs.iter().any(|d| d.id == m.def.id) {
                    defs.push(m.def);
                }
            }
        }
        defs.sort_by_key(|d| catalogue::rank(&d.id));
        let mut rows = Vec::new();
        // Groups judged on the samples inside one run (one `exec` call): the
        // group and that run's index in it.
        let mut from_one_run: BTreeMap<usize, usize> = BTreeMap::new();
        for def in defs {
            let key = def.id.to_string();
            // A program figure without its policy (runs of one policy
            // each) says nothing more where every run that has it measured
            // the same one policy: the row `exec_metric[POLICY]` is the same.
            if catalogue::exec_policy_free(&def.id) {
                let under: BTreeSet<&String> = per_group
                    .iter()
                    .flatten()
                    .filter(|m| m.contains_key(&key))
                    .flat_map(|m| m.keys())
                    .filter(|k| {
                        let k = MetricId::parse(k);
                        k.policy().is_some() && k.without_policy() == def.id
                    })
                    .collect();
                if under.len() == 1 {
                    continue;
                }
            }
            // One value per run with 3 or more runs; with fewer, the pooled
            // samples of the runs (each repeat of `exec` is a whole run of
            // the program, alternated across policies).
            let values: Vec<Vec<f64>> = per_group
                .iter()
                .enumerate()
                .map(|(gi, rs)| {
                    let have: Vec<&(f64, Vec<f64>)> =
                        rs.iter().filter_map(|m| m.get(&key)).collect();
                    if have.len() >= POOL_SAMPLES_BELOW_RUNS
                        || have.iter().all(|(_, samples)| samples.len() < 2)
                    {
                        return have.iter().map(|(v, _)| *v).collect();
                    }
                    if let (1, Some(ri)) =
                        (have.len(), rs.iter().position(|m| m.contains_key(&key)))
                    {
                        from_one_run.insert(gi, ri);
                    }
                    have.iter()
                        .flat_map(
                            |(v, samples)| {
                                if samples.is_empty() {
                                    vec![*v]
                                } else {
                                    samples.clone()
                                }
                            },
                        )
                        .collect()
                })
                .collect();
            // The floor for groups of `runs_needed` runs: a change inside it
            // stays undecided however many runs are taken.
            let held_by_floor = |j: &Judgement| -> Option<f64> {
                // Bracketed verdicts are drift-free: no floor holds them.
                if j.basis == Basis::Bracketed {
                    return None;
                }
                let n = j.runs_needed? as usize;
                let f = floors.for_sizes(&key, n, n, policy).ok().flatten()?;
                let change = (1.0 + j.change_pct / 100.0).ln().abs();
                (change <= (1.0 + f.pct / 100.0).ln()).then_some(f.pct)
            };
            let series = |g: usize| -> Vec<(f64, f64)> {
                timeline[g].iter().filter_map(|(t, v)| Some((*t, *v.get(&key)?))).collect()
            };
            let derived: Vec<Option<String>> =
                (0..groups.len()).map(|g| derivation.of_group(g, &key)).collect();
            // One run-to-run noise for the study's alternated groups of 3+
            // runs each, where no group's own scatter is far above the
            // others' (the premise in docs/store.md, checked by
            // runstats::noise_is_even); otherwise each pair on its own.
            let pool_in: Vec<Vec<(f64, f64)>> = (0..values.len())
                .map(|g| {
                    let s = series(g);
                    if values[g].len() == s.len() && s.len() >= 3 {
                        s
                    } else {
                        Vec::new()
                    }
                })
                .collect();
            let pooled = noise_is_even(&pool_in)
                .ok()
                .and_then(|_| bracketed_study(&pool_in).ok())
                .filter(|f| f.groups > 2);
            let judge_pair = |a: usize, b: usize| -> Option<(Judgement, FloorFor)> {
                // A per-node bandwidth figure of nodes of another size is
                // not the same metric: no verdict (see the notes).
                if def.sized_by_node() && layouts[a].structure() != layouts[b].structure() {
                    return None;
                }
                // A derived figure is never judged against a measured one.
                if derived[a].is_some() != derived[b].is_some() {
                    return None;
                }
                // Groups judged one value per run whose runs alternate: each
                // run against the other group's runs on both sides of it, so
                // that the machine's drift cancels (results::runstats::
                // bracketed). The rank interval below assumes the runs of a
                // group exchangeable, which a drifting machine breaks.
                let (sa, sb) = (series(a), series(b));
                let mut unbracketed = None;
                if values[a].len() == sa.len() && values[b].len() == sb.len() {
                    if let Some(fit) = pooled.as_ref().and_then(|f| f.pair(a, b)) {
                        let j = judge_fit(&fit, &sa, &sb, def.higher_is_better, policy);
                        return Some((j, Ok(None)));
                    }
                    match judge_bracketed(&sa, &sb, def.higher_is_better, policy) {
                        Ok(j) => return Some((j, Ok(None))),
                        Err(why) => unbracketed = Some(why),
                    }
                }
                let floor = floors.for_sizes(&key, values[a].len(), values[b].len(), policy);
                let f = floor.as_ref().ok().and_then(Option::as_ref);
                let mut j = judge(&values[a], &values[b], def.higher_is_better, policy, f)?;
                // One run on a side can never be bracketed: "too few runs"
                // says it all there.
                if j.verdict == GroupVerdict::Undecided && sa.len().min(sb.len()) >= 2 {
                    j.undecided_because = unbracketed;
                }
                Some((j, floor))
            };
            let mut cells = Vec::new();
            for (i, v) in values.iter().enumerate() {
                let mut c = GroupMetric {
                    n: v.len(),
                    median: results::stats::median(v),
                    values: v.clone(),
                    change_pct: None,
                    ci_low_pct: None,
                    ci_high_pct: None,
                    verdict: None,
                    runs_needed: None,
                    basis: None,
                    noise_floor_pct: None,
                    noise_floor_source: None,
                    floor_runs_needed: None,
                    more_runs_held_by_floor_pct: None,
                    brackets: None,
                    pooled_groups: None,
                    undecided_because: None,
                    not_applicable: if g_has_runs[i] { def.impossible(&layouts[i]) } else { None },
                    derived: derived[i].clone(),
                };
                if i != baseline {
                    if let Some((j, floor)) = judge_pair(baseline, i) {
                        c.brackets = j.brackets;
                        c.pooled_groups = j.pooled_groups;
                        c.undecided_because = j.undecided_because;
                        if let Ok(Some(f)) = &floor {
                            c.noise_floor_pct = Some(f.pct);
                            c.noise_floor_source = Some(f.source.clone());
                        }
                        if let Err((have, need)) = floor {
                            c.floor_runs_needed = Some(need.saturating_sub(have));
                        }
                        c.change_pct = Some(j.change_pct);
                        c.ci_low_pct = j.ci_low_pct;
                        c.ci_high_pct = j.ci_high_pct;
                        c.verdict = Some(j.verdict);
                        c.basis = Some(j.basis);
                        c.runs_needed = j.runs_needed;
                        if let Some(pct) = held_by_floor(&j) {
                            c.runs_needed = None;
                            c.more_runs_held_by_floor_pct = Some(pct);
                        }
                    }
                }
                cells.push(c);
            }
            let k = values.len();
            let pairs: Vec<Vec<Option<Pair>>> = (0..k)
                .map(|a| {
                    (0..k)
                        .map(|b| {
                            let (j, _) = judge_pair(a, b).filter(|_| a != b)?;
                            let held = held_by_floor(&j);
                            Some(Pair {
                                verdict: j.verdict,
                                change_pct: j.change_pct,
                                ci_low_pct: j.ci_low_pct,
                                ci_high_pct: j.ci_high_pct,
                                runs_needed: j.runs_needed.filter(|_| held.is_none()),
                                more_runs_held_by_floor_pct: held,
                            })
                        })
                        .collect()
                })
                .collect();
            let nb = values[baseline].len();
            let base_floor = floors.for_sizes(&key, nb, nb, policy).ok().flatten();
            let mut row = StudyMetric {
                metric: key.clone(),
                name: def.name.clone(),
                unit: def.unit.clone(),
                higher_is_better: def.higher_is_better,
                relation: def.relation,
                scope: def.scope,
                groups: cells,
                best_group: None,
                noise_floor_pct: base_floor.as_ref().map(|f| f.pct),
                noise_floor_source: base_floor.map(|f| f.source),
                pairs,
                derived: None,
            };
            if let Some(how) = derivation.row(&key, &derived, &infos) {
                row.name = format!("{} ({how})", row.name);
                row.derived = Some(how);
                notes.extend(derivation.mixed_note(&key, &def.name, &derived, &infos));
            }
            let all: Vec<usize> = (0..k).collect();
            row.best_group = best_of(&row, &all);
            rows.push(row);
        }
        notes.extend(derivation.why_notes(&infos));
        if !from_one_run.is_empty() {
            let names: Vec<String> = from_one_run
                .iter()
                .map(|(&g, &ri)| format!("{} (run {})", infos[g].label, infos[g].runs[ri]))
                .collect();
            notes.push(format!(
                "the program metrics of {} are the repeats inside one `exec` call: each repeat is a whole run of the program (a new process, placement, allocation and first touch), alternated across policies, so they sample run-to-run variation within one boot; they do not sample what changes between boots or calls (memory layout after a reboot, firmware training, the machine's state that day). Repeat the call, after a reboot where that matters, for 3 or more runs per group: the runs are then judged one value each",
                names.join(", ")
            ));
        }
        // Per-node bandwidth between nodes of different sizes: shown, never
        // judged, and the reader is told which figure to read instead.
        for row in &rows {
            if !catalogue::def_of(&row.metric).sized_by_node() {
                continue;
            }
            let have: Vec<usize> = (0..groups.len()).filter(|&i| row.groups[i].n > 0).collect();
            let kinds: BTreeSet<_> = have.iter().map(|&i| layouts[i].structure()).collect();
            if kinds.len() < 2 {
                continue;
            }
            let each: Vec<String> = have
                .iter()
                .map(|&i| format!("{}: {}", infos[i].label, layouts[i].structure().text()))
                .collect();
            notes.push(format!(
                "{} is not judged between groups whose nodes differ ({}): a node's figure grows and shrinks with the NUMA mode's node size; read the per-package and whole-machine figures ({}, {}, {}) instead",
                row.name,
                each.join("; "),
                catalogue::LOCAL_BW_PKG,
                catalogue::CROSS_PKG_BW,
                "global_bw_gbs"
            ));
        }
        let mut study = Study {
            groups: infos,
            baseline,
            settings_diff,
            settings_same,
            metrics: rows,
            recommendations: Vec::new(),
            confidence: policy.confidence,
            margin_pct: policy.margin_pct,
            across_machines,
            warnings,
            notes,
            layouts,
            impossible: impossible_of(groups),
            marked_inputs: Vec::new(),
        };
        study.marked_inputs = crate::inputs::marked_inputs(
            groups.iter().map(|g| g.runs.as_slice()),
            &study.metrics.iter().map(|m| m.metric.clone()).collect::<Vec<_>>(),
        );
        study.recommendations = recommend(&study);
        study
    }

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
                    metric: k.id().to_string(),
                    text: i.text(),
                });
            }
        }
    }
    out
}

/// The group among `among` judged better than every other one of them
/// that has the metric (pairwise, with the study's intervals, margin and
/// floors); `None` when none is, or fewer than two have it.
fn best_of(m: &StudyMetric, among: &[usize]) -> Option<usize> {
    let have: Vec<usize> = among.iter().copied().filter(|&i| m.groups[i].n > 0).collect();
    if have.len() < 2 {
        return None;
    }
    have.iter().copied().find(|&g| {
        have.iter().all(|&h| {
            h == g || m.pairs[h][g].as_ref().is_some_and(|p| p.verdict == GroupVerdict::Better)
        })
    })
}

/// Those of `among` that no other of them beats on the metric (the top
/// tier: ties and undecided pairs stay together).
fn top_tier(m: &StudyMetric, among: &[usize]) -> Vec<usize> {
    among
        .iter()
        .copied()
        .filter(|&g| {
            m.groups[g].n == 0
                || !among.iter().any(|&h| {
                    h != g
                        && m.groups[h].n > 0
                        && m.pairs[g][h].as_ref().is_some_and(|p| p.verdict == GroupVerdict::Better)
                })
        })
        .collect()
}

/// Whom a recommendation is for: a workload profile of the audit's list
/// ([`results::profile::Profile`]), or a program measured under `exec`
/// (its unnamed metric and wall time, or one named metric).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForWhom {
    Workload(WorkloadProfile),
    Program(Option<String>),
}

impl Serialize for ForWhom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for ForWhom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForWhom::Workload(p) => f.write_str(p.name()),
            ForWhom::Program(None) => f.write_str("program"),
            ForWhom::Program(Some(n)) => write!(f, "program {n}"),
        }
    }
}

/// A workload profile: the groups it can never pick, the metrics no pick
/// may lose on (guards: a group decidedly worse than another on one is
/// ruled out), and the metrics that pick among the rest, in order.
struct Profile {
    who: ForWhom,
    /// Rule out configurations that hide a per-CPU latency split.
    no_hidden_split: bool,
    guards: Vec<String>,
    gains: Vec<String>,
    missing_note: Option<&'static str>,
}

/// The AI-training profile: each GPU's host-to-device bandwidth from its
/// fastest node (`numaprobe gpu`) leads where the study holds it; without
/// it, a note says how to measure it.
fn ai_training(s: &Study, mut prof: Profile) -> Profile {
    let gpu: Vec<String> = s
        .metrics
        .iter()
        .filter(|m| m.metric.starts_with(catalogue::GPU_H2D_BW))
        .map(|m| m.metric.clone())
        .collect();
    if gpu.is_empty() {
        prof.missing_note = Some(
            "host-to-GPU bandwidth from each node was not measured: `numaprobe gpu --label ...` in each configuration",
        );
    }
    prof.gains.splice(0..0, gpu);
    prof
}

/// The profiles and the metrics that matter to each (docs/store.md,
/// "Recommendations": each follows from the profile's premise there).
fn profiles(s: &Study) -> Vec<Profile> {
    use catalogue::{CROSS_PKG_BW, LOCAL_BW_PKG, SPREAD_LAT, THREAD_LAT};
    let p = |who, no_hidden_split, guards: Vec<&str>, gains: Vec<&str>| Profile {
        who,
        no_hidden_split,
        guards: guards.into_iter().map(String::from).collect(),
        gains: gains.into_iter().map(String::from).collect(),
        missing_note: None,
    };
    // Each profile starts from its premise: where the workload's threads
    // run, where its pages are and how it touches them. Its metrics are
    // the figures that placement sees, by hardware relation and scope, so
    // that they mean the same under every NUMA mode.
    let mut v = vec![
        // Premise: threads run on every node and move between them; the
        // buffer pool is spread over every node. A lookup lands on a node
        // in proportion to its memory (spread latency); scans stream the
        // spread memory from every CPU (interleaved bandwidth, a guard).
        // A hidden split: the OS places the pool without knowing it.
        p(
            ForWhom::Workload(WorkloadProfile::Database),
            true,
            vec!["interleave_bw_gbs"],
            vec![SPREAD_LAT],
        ),
        // Premise: threads and their memory bound to one node, each
        // request a pointer chase through it while the node's other cores
        // keep it busy: its own node's latency, then under that load. It
        // can bind only to nodes the OS shows.
        p(
            ForWhom::Workload(WorkloadProfile::Latency),
            true,
            vec![],
            vec![THREAD_LAT, "loaded_lat_at_peak_ns"],
        ),
        // Premise: ranks or teams bound per domain, every core streaming
        // its own domain's memory at once: the package's bandwidth bound
        // per domain, then its own domain's latency for the accesses that
        // are not streamed. Bound, it touches no memory spread over nodes.
        p(ForWhom::Workload(WorkloadProfile::Hpc), false, vec![], vec![LOCAL_BW_PKG, THREAD_LAT]),
        // Premise: guests span the nodes, their memory spread by the host
        // and their vCPUs moving between packages: the spread latency, then
        // the other package's latency (a vCPU away from its memory); all
        // guests stream spread memory from every CPU (interleaved
        // bandwidth, a guard).
        p(
            ForWhom::Workload(WorkloadProfile::Virtualization),
            false,
            vec!["interleave_bw_gbs"],
            vec![SPREAD_LAT, "remote_lat_ns"],
        ),
        // Premise: pinned host buffers on every package feed the GPUs by
        // host-to-device copies (`numaprobe gpu`, when the runs hold it);
        // the loaders stream host memory from every CPU (interleaved
        // bandwidth) and fill the buffers of GPUs on the other package
        // across the link (cross-package bandwidth).
        ai_training(
            s,
            p(
                ForWhom::Workload(WorkloadProfile::AiTraining),
                false,
                vec![],
                vec!["interleave_bw_gbs", CROSS_PKG_BW],
            ),
        ),
    ];
    // Any `exec` figure (metric, wall time, per watt, energy).
    let program = |m: &StudyMetric| MetricId::parse(&m.metric).is_exec();
    if s.metrics.iter().any(program) {
        // The program's unnamed metric, then its wall time (wall time
        // alone when the runs have no metric); then one profile per named
        // metric (`exec --metric NAME=REGEX`), each judged alone in its own
        // direction (a program's int and fp rates can move apart). Runs
        // with named metrics only are judged by them, not by wall time.
        let mut named: Vec<String> = Vec::new();
        for m in &s.metrics {
            if let Some(n) = catalogue::exec_metric_name(&m.metric) {
                if !named.contains(&n) {
                    named.push(n);
                }
            }
        }
        let mut progs = Vec::new();
        if named.is_empty() || !rows_for(s, catalogue::EXEC_METRIC).is_empty() {
            progs.push(p(
                ForWhom::Program(None),
                false,
                vec![],
                vec![catalogue::EXEC_METRIC, catalogue::EXEC_WALL],
            ));
        }
        for n in named {
            let id = format!("{}:{n}", catalogue::EXEC_METRIC);
            progs.push(p(ForWhom::Program(Some(n)), false, vec![], vec![&id]));
        }
        // Runs of `exec` only: the program's own figures are the study;
        // the machine profiles would only list what `run` measures.
        if s.metrics.iter().all(program) {
            return progs;
        }
        v.extend(progs);
    }
    v
}

/// The study's metrics a profile's metric id stands for: an `exec` id
/// without its policy (`exec_metric`, `exec_metric:NAME`, `exec_wall_s`)
/// stands for that metric under every policy (`exec_metric:NAME[POLICY]`).
fn rows_for<'a>(s: &'a Study, id: &str) -> Vec<&'a StudyMetric> {
    let exec = id == catalogue::EXEC_WALL
        || id
            .strip_prefix(catalogue::EXEC_METRIC)
            .is_some_and(|r| r.is_empty() || r.starts_with(':'));
    s.metrics
        .iter()
        // a figure derived from cells never decides a pick
        .filter(|m| m.derived.is_none())
        .filter(|m| {
            m.metric == id
                || (exec && m.metric.strip_prefix(id).is_some_and(|r| r.starts_with('[')))
        })
        .collect()
}

/// `+4.3% (90% interval +2.0% to +6.5%)` for a pair.
fn pair_text(p: &Pair, conf: f64) -> String {
    match (p.ci_low_pct, p.ci_high_pct) {
        (Some(lo), Some(hi)) => {
            format!(
                "{} ({conf}% interval {} to {})",
                signed_pct(p.change_pct),
                signed_pct(lo),
                signed_pct(hi)
            )
        }
        _ => format!("{} (beyond this machine's noise floor)", signed_pct(p.change_pct)),
    }
}

fn names(s: &Study, v: &[usize]) -> String {
    let n: Vec<&str> = v.iter().map(|&i| s.groups[i].label.as_str()).collect();
    match n.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// An undecided pair of groups `(a, b)`, the runs per group that would
/// decide it and the noise floor that holds more runs back.
type Undecided4 = (usize, usize, Option<u32>, Option<f64>);

/// Whether group `c` is ahead of group `w` on `m` (its median, in the
/// metric's direction).
fn ahead(m: &StudyMetric, c: usize, w: usize) -> bool {
    match (m.groups[c].median, m.groups[w].median) {
        (Some(a), Some(b)) => {
            if m.higher_is_better {
                a > b
            } else {
                a < b
            }
        }
        _ => false,
    }
}

/// The pairs of `groups` (both measured) that `m` leaves undecided, with
/// the runs per group that would decide and the noise floor that holds
/// more runs back.
fn undecided_pairs(
    m: &StudyMetric,
    groups: &[usize],
) -> Vec<(usize, usize, Option<u32>, Option<f64>)> {
    groups
        .iter()
        .flat_map(|&a| groups.iter().map(move |&b| (a, b)))
        .filter(|(a, b)| a < b && m.groups[*a].n > 0 && m.groups[*b].n > 0)
        .filter_map(|(a, b)| {
            let p = m.pairs[a][b].as_ref()?;
            (p.verdict == GroupVerdict::Undecided).then_some((
                a,
                b,
                p.runs_needed,
                p.more_runs_held_by_floor_pct,
            ))
        })
        .collect()
}

/// What would decide the undecided pairs of a figure named `lname`.
fn runs_that_decide(lname: &str, undecided: &[Undecided4]) -> String {
    let need = undecided.iter().filter_map(|u| u.2).max();
    let held = undecided.iter().filter_map(|u| u.3).reduce(f64::max);
    match (need, held) {
        (_, Some(pct)) => format!(
            "{lname}: more runs per group would not decide (the {pct:.1}% noise floor for groups that size is larger than the change): runs of the settings alternated over time, or a quieter machine"
        ),
        (Some(n), None) => format!("{n} runs per group for {lname}"),
        (None, None) => format!(
            "{lname}: more than {MAX_RUNS_SUGGESTED} runs per group, or a quieter machine, or runs of the settings alternated over time"
        ),
    }
}

fn recommend(s: &Study) -> Vec<Recommendation> {
    let conf = (s.confidence * 100.0).round();
    let mut out = Vec::new();
    for prof in profiles(s) {
        let mut parts: Vec<String> = Vec::new();
        let mut next: Vec<String> = Vec::new();
        let mut excluded = Vec::new();
        let mut cand: Vec<usize> = (0..s.groups.len()).collect();
        if prof.no_hidden_split {
            for (i, g) in s.groups.iter().enumerate() {
                if g.hidden_numa.is_some() {
                    excluded.push(i);
                    parts.push(format!(
                        "{} is ruled out: the OS shows one node while per-CPU latency splits (see below), so it hides the split and threads land on the slow CPUs unseen",
                        g.label
                    ));
                }
            }
            cand.retain(|i| !excluded.contains(i));
        }
        let mut decided_by = None;
        let mut last_lost = None;
        let mut compared = false;
        let mut group = None;
        // The first gain that left the remaining groups undecided.
        let mut undecided_on: Option<(String, Vec<usize>)> = None;
        // Guards: drop every candidate another candidate decidedly beats,
        // whatever it gains elsewhere (figures of different kinds are never
        // weighed against each other).
        for id in &prof.guards {
            for m in rows_for(s, id) {
                let lname = lower_first(&m.name);
                let top = top_tier(m, &cand);
                let mut dropped = Vec::new();
                for l in cand.iter().copied().filter(|c| !top.contains(c)) {
                    let beaten = cand.iter().copied().find_map(|t| {
                        let p = m.pairs[l][t].as_ref()?;
                        (p.verdict == GroupVerdict::Better).then_some((t, p))
                    });
                    if let Some((t, p)) = beaten {
                        parts.push(format!(
                            "{} loses on {lname}: {} is {} against it",
                            s.groups[l].label,
                            s.groups[t].label,
                            pair_text(p, conf)
                        ));
                        dropped.push(l);
                    }
                }
                if let Some(&l) = dropped.first() {
                    decided_by.get_or_insert_with(|| m.metric.clone());
                    last_lost = Some(l);
                }
                cand.retain(|c| !dropped.contains(c));
            }
        }
        // Guards the runs could not rank between groups still in the
        // running: a pick that one of them may lose to on a guard is not
        // made (the guard may drop it).
        let open_guards: Vec<(&StudyMetric, Vec<Undecided4>)> = prof
            .guards
            .iter()
            .flat_map(|id| rows_for(s, id))
            .map(|m| (m, undecided_pairs(m, &cand)))
            .filter(|(_, u)| !u.is_empty())
            .collect();
        // Gains: the first metric with a clear winner among the candidates
        // picks it; a tie narrows the candidates to the top tier.
        for id in &prof.gains {
            if undecided_on.is_some() {
                break;
            }
            let rows = rows_for(s, id);
            if rows.is_empty() {
                continue;
            }
            for m in rows {
                let lname = lower_first(&m.name);
                if cand.len() < 2 {
                    break;
                }
                if cand.iter().filter(|&&c| m.groups[c].n > 0).count() < 2 {
                    continue;
                }
                compared = true;
                if let Some(w) = best_of(m, &cand) {
                    // The closest rival: the smallest change against the winner.
                    let rival = cand
                        .iter()
                        .copied()
                        .filter(|&c| c != w && m.groups[c].n > 0)
                        .min_by(|&a, &b| {
                            let ca =
                                m.pairs[a][w].as_ref().map_or(f64::MAX, |p| p.change_pct.abs());
                            let cb =
                                m.pairs[b][w].as_ref().map_or(f64::MAX, |p| p.change_pct.abs());
                            ca.total_cmp(&cb)
                        })
                        .unwrap_or(w);
                    if let Some(p) = m.pairs[rival][w].as_ref() {
                        parts.push(format!(
                            "{} wins on {lname}: {} against {}, the closest of the others",
                            s.groups[w].label,
                            pair_text(p, conf),
                            s.groups[rival].label
                        ));
                    }
                    decided_by = Some(m.metric.clone());
                    group = Some((w, rival));
                    cand = vec![w];
                    break;
                }
                let top = top_tier(m, &cand);
                let measured: Vec<usize> =
                    top.iter().copied().filter(|&c| m.groups[c].n > 0).collect();
                let undecided = undecided_pairs(m, &measured);
                if undecided.is_empty() {
                    parts.push(format!(
                        "{} tie on {lname} (within ±{}% of each other)",
                        names(s, &measured),
                        s.margin_pct
                    ));
                } else {
                    // Undecided is not a tie: a later figure would pick
                    // between groups this one may rank the other way.
                    parts.push(format!("{lname} is undecided between {}", names(s, &measured)));
                    undecided_on.get_or_insert_with(|| (m.metric.clone(), measured.clone()));
                    next.push(runs_that_decide(&lname, &undecided));
                    cand = top;
                    break;
                }
                cand = top;
            }
            if group.is_some() || undecided_on.is_some() {
                break;
            }
        }
        // A winner on a gain metric, or the one candidate the guards (or
        // the ruling out of a hidden split) left.
        if group.is_none() && cand.len() == 1 && !excluded.is_empty() && decided_by.is_none() {
            decided_by = s
                .metrics
                .iter()
                .find(|m| m.metric.starts_with("per_cpu_split"))
                .map(|m| m.metric.clone());
            last_lost = excluded.first().copied();
        }
        if group.is_none() && cand.len() == 1 && decided_by.is_some() {
            group = Some((cand[0], last_lost.unwrap_or(cand[0])));
        }
        if let Some((w, _)) = group {
            for (m, open) in &open_guards {
                let at_risk: Vec<Undecided4> = open
                    .iter()
                    .copied()
                    .filter(|u| {
                        let c = if u.0 == w {
                            u.1
                        } else if u.1 == w {
                            u.0
                        } else {
                            return false;
                        };
                        ahead(m, c, w)
                    })
                    .collect();
                if at_risk.is_empty() {
                    continue;
                }
                let lname = lower_first(&m.name);
                let rivals: Vec<usize> =
                    at_risk.iter().map(|u| if u.0 == w { u.1 } else { u.0 }).collect();
                parts.push(format!(
                    "{} may lose on {lname}, which is undecided between it and {}",
                    s.groups[w].label,
                    names(s, &rivals)
                ));
                let mut groups = vec![w];
                groups.extend(rivals);
                groups.sort_unstable();
                undecided_on = Some((m.metric.clone(), groups));
                next.push(runs_that_decide(&lname, &at_risk));
                group = None;
                decided_by = None;
                break;
            }
        }
        // What was not measured (never what a configuration makes impossible).
        for id in prof.guards.iter().chain(&prof.gains) {
            if !rows_for(s, id).is_empty() || id.starts_with("exec_") {
                continue;
            }
            let def = catalogue::def_of(id);
            if let Some(how) =
                s.metrics.iter().find(|m| m.metric == *id).and_then(|m| m.derived.as_ref())
            {
                parts.push(format!("{} decides nothing: {how}", lower_first(&def.name)));
                if let Some(step) = def.step {
                    next.push(format!("the `{step}` step in every group, to measure it at its scope (`numaprobe run --only {step}`)"));
                }
                continue;
            }
            let impossible =
                !s.layouts.is_empty() && s.layouts.iter().all(|l| def.impossible(l).is_some());
            if impossible || (def.step_needs_nodes && s.groups.iter().all(|g| g.one_node)) {
                continue;
            }
            parts.push(format!("{} was not measured", lower_first(&def.name)));
            if let Some(step) = def.step {
                next.push(format!("the `{step}` step (`numaprobe run --only {step}`)"));
            }
        }
        if parts.is_empty() && next.is_empty() {
            parts.push(
                "nothing to compare: no metric this profile needs was measured in two groups"
                    .into(),
            );
        }
        let mut text = if parts.is_empty() {
            String::new()
        } else {
            format!("{}.", capitalise(&parts.join("; ")))
        };
        let pick = group.map(|(w, _)| w);
        let no_pick = match (pick, undecided_on) {
            (Some(_), _) => None,
            (None, _) if cand.is_empty() => Some(NoPick::AllRuledOut),
            (None, Some((metric, groups))) => Some(NoPick::Undecided { metric, groups }),
            (None, None) if compared => Some(NoPick::Tie { groups: cand.clone() }),
            (None, None) => Some(NoPick::NothingMeasured),
        };
        match pick {
            Some(g) => {
                let against = match group {
                    Some((_, rival)) if g == s.baseline => rival,
                    _ => s.baseline,
                };
                text.push_str(&format!(
                    " {} {}.",
                    if g == s.baseline { "Keep" } else { "Pick" },
                    s.groups[g].label
                ));
                let diffs = differing(s, against, g);
                if g != against {
                    if diffs.is_empty() {
                        text.push_str(&format!(" No recorded or declared setting differs from {}: the change comes from something not recorded (declare it with `--set`), or the machine changed between the runs.", s.groups[against].label));
                    } else {
                        text.push_str(&format!(
                            " What differs from {}: {}.",
                            s.groups[against].label,
                            diffs.join(", ")
                        ));
                    }
                }
            }
            None if cand.len() > 1 && compared => {
                text.push_str(&format!(" No pick between {}.", names(s, &cand)));
            }
            None => {}
        }
        if let Some(n) = prof.missing_note {
            text.push_str(&format!(" Not decided by these runs: {n}."));
        }
        if !next.is_empty() {
            text.push_str(&format!(" Measure next: {}.", next.join("; ")));
        }
        out.push(Recommendation {
            profile: prof.who,
            text: text.trim().to_string(),
            group: pick,
            decided_by,
            excluded,
            no_pick,
        });
    }
    for g in &s.groups {
        if let Some(h) = &g.hidden_numa {
            out.push(Recommendation {
                profile: ForWhom::Workload(WorkloadProfile::General),
                text: format!(
                    "{} hides NUMA: {h}. Placement still matters under it but the OS cannot manage it; prefer a setting that shows the nodes.",
                    g.label
                ),
                group: None,
                decided_by: None,
                excluded: Vec::new(),
                no_pick: None,
            });
        }
    }
    out
}

/// `setting (value in a -> value in g)` for the settings (detected and
/// declared) where group `g` differs from group `a`.
fn differing(s: &Study, a: usize, g: usize) -> Vec<String> {
    // What the user declared and the NUMA mode's name say most: first.
    let rank = |d: &&SettingDiff| match d.setting.as_str() {
        k if k.starts_with("declared.") => 0,
        "numa_mode_label" => 1,
        _ => 2,
    };
    let mut v: Vec<&SettingDiff> =
        s.settings_diff.iter().filter(|d| d.values[g] != d.values[a]).collect();
    v.sort_by_key(rank);
    v.into_iter()
        .take(6)
        .map(|d| {
            format!("{} ({} -> {})", d.setting, clip(&d.values[a], 30), clip(&d.values[g], 30))
        })
        .collect()
}

/// `s` with its first letter in lower case (names inside sentences keep
/// their acronyms: `OS`, `CPU`).
fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod exec_sample_tests {
    use super::*;
    use crate::data::tests::{rec, run_of};
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
        let note = s.notes.iter().find(|n| n.contains("repeats inside one `exec` call"));
        let note = note.expect("a note says the samples are one call's repeats");
        assert!(note.contains("on (run 1), off (run 2)"), "{note}");
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
        assert!(s.notes.iter().all(|n| !n.contains("repeats inside one")), "{:?}", s.notes);
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

#[cfg(test)]
mod profile_tests {
    use super::*;
    use crate::data::tests::{rec, run_of};
    use serde_json::json;

    /// A complete run of a machine of two packages of one node each,
    /// started `id` minutes into the series: bound (`bw` global, and each
    /// package's `bw-package` record at half of it) and interleaved
    /// bandwidth, a latency matrix whose local cells are `local` ns and
    /// remote ones `remote` ns, and each package's chases to its own and
    /// the other package's memory at the same figures.
    fn run(
        id: i64,
        label: &str,
        global: f64,
        interleave: f64,
        local: f64,
        remote: f64,
    ) -> LoadedRun {
        let bw = |mode: &str, gbs: f64| {
            rec("bw", json!({"mode": mode, "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs}))
        };
        let lat = |c: u32, m: u32, ns: f64| {
            rec("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns}))
        };
        let scope = |p: u32, to: u32, policy: &str| {
            let memory = if p == to { "own-package" } else { "other-package" };
            json!({"package": p, "memory": memory, "mem_package": to, "policy": policy,
                   "cpus": p.to_string(), "cpu_nodes": p.to_string(), "mem_nodes": to.to_string()})
        };
        let bw_pkg = |p: u32, gbs: f64| {
            rec(
                "bw",
                json!({"mode": "package", "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs,
                       "scope": scope(p, p, "bind-per-node")}),
            )
        };
        let lat_pkg = |p: u32, to: u32, ns: f64| {
            rec(
                "lat",
                json!({"mode": "package", "cpu": p, "median_ns": ns, "interleave": to.to_string(),
                       "scope": scope(p, to, "interleave")}),
            )
        };
        let mut r = run_of(
            vec![
                bw("global", global),
                bw_pkg(0, global / 2.0),
                bw_pkg(1, global / 2.0),
                bw("interleave", interleave),
                lat(0, 0, local),
                lat(0, 1, remote),
                lat(1, 0, remote),
                lat(1, 1, local),
                lat_pkg(0, 0, local),
                lat_pkg(0, 1, remote),
                lat_pkg(1, 0, remote),
                lat_pkg(1, 1, local),
            ],
            Some(2),
        );
        r.summary.id = RunId(id);
        r.summary.label = Some(label.into());
        r.summary.started = format!("2026-01-01T00:{id:02}:00Z");
        r.machine_info = serde_json::from_value(json!({"packages": 2})).unwrap();
        r.config =
            serde_json::from_value(json!({"nodes": 2, "declared": {"bios.x": label}})).unwrap();
        r
    }

    /// Groups A and B of three runs each, taken A B A B A B, every figure
    /// of B `f` times A's (`[global, interleave, local, remote]`), each
    /// run's figures off by `jitter` (a fraction, alternately up and down).
    fn study(b: [f64; 4], jitter: f64) -> Study {
        let a = [400.0, 300.0, 100.0, 200.0];
        let (mut ga, mut gb) = (Vec::new(), Vec::new());
        for i in 0..6i64 {
            let j = 1.0 + jitter * [1.0, -1.0, 0.5, 0.0, -0.5, 1.0][i as usize];
            let f = |k: usize| a[k] * j * if i % 2 == 1 { b[k] } else { 1.0 };
            let (label, g) = if i % 2 == 0 { ("A", &mut ga) } else { ("B", &mut gb) };
            g.push(run(i + 1, label, f(0), f(1), f(2), f(3)));
        }
        let groups = vec![
            GroupInput { reference: "label:A".into(), runs: ga },
            GroupInput { reference: "label:B".into(), runs: gb },
        ];
        Study::build(&groups, 0, &Criteria::default(), &Floors::default())
    }

    fn rec_of(s: &Study, p: WorkloadProfile) -> &Recommendation {
        s.recommendations.iter().find(|r| r.profile == ForWhom::Workload(p)).unwrap()
    }

    #[test]
    fn a_guard_drops_a_group_whatever_it_gains_elsewhere() {
        // B's spread latency is 20% lower (the database's gain) but its
        // interleaved bandwidth 6% lower (the database's guard): dropped.
        let s = study([1.0, 0.94, 0.8, 0.8], 0.002);
        let db = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(db.group, Some(0), "{}", db.text);
        assert_eq!(db.decided_by.as_deref(), Some("interleave_bw_gbs"), "{}", db.text);
        assert!(db.text.contains("B loses on interleaved bandwidth"), "{}", db.text);
        assert!(!db.text.contains("gains more"), "{}", db.text);
    }

    #[test]
    fn a_pick_that_may_lose_on_an_undecided_guard_is_not_made() {
        // B's spread latency is 20% lower; its interleaved bandwidth 3.5%
        // lower in 3% noise: the guard cannot tell whether B loses beyond
        // the margin, so B (behind on it) is not picked.
        let s = study([1.0, 0.965, 0.8, 0.8], 0.03);
        let db = rec_of(&s, WorkloadProfile::Database);
        let il = s.metrics.iter().find(|m| m.metric == "interleave_bw_gbs").unwrap();
        assert_eq!(
            il.pairs[0][1].as_ref().map(|p| p.verdict),
            Some(GroupVerdict::Undecided),
            "{}",
            db.text
        );
        assert_eq!(db.group, None, "{}", db.text);
        assert_eq!(
            db.no_pick,
            Some(NoPick::Undecided { metric: "interleave_bw_gbs".into(), groups: vec![0, 1] }),
            "{}",
            db.text
        );
        assert!(db.text.contains("B may lose on interleaved bandwidth"), "{}", db.text);
        // B ahead on the same undecided guard cannot be dropped by it: the
        // spread latency picks B.
        let s = study([1.0, 1.035, 0.8, 0.8], 0.03);
        let db = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(db.group, Some(1), "{}", db.text);
        assert_eq!(db.decided_by.as_deref(), Some(catalogue::SPREAD_LAT), "{}", db.text);
    }

    #[test]
    fn a_gain_left_undecided_is_not_passed_over_to_the_next() {
        // Hpc: B's bound bandwidth 5% higher in 8% noise (undecided), its
        // local latency 20% lower (decided): the latency does not pick.
        let s = study([1.05, 1.0, 0.8, 1.0], 0.08);
        let hpc = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(hpc.group, None, "{}", hpc.text);
        assert_eq!(
            hpc.no_pick,
            Some(NoPick::Undecided { metric: catalogue::LOCAL_BW_PKG.into(), groups: vec![0, 1] }),
            "{}",
            hpc.text
        );
    }

    #[test]
    fn hpc_bound_per_domain_is_not_held_to_the_interleaved_bandwidth() {
        // B: +10% bound per domain, -10% interleaved. A workload bound per
        // domain sees the first only.
        let s = study([1.1, 0.9, 1.0, 1.0], 0.002);
        let hpc = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(hpc.group, Some(1), "{}", hpc.text);
        assert_eq!(hpc.decided_by.as_deref(), Some(catalogue::LOCAL_BW_PKG), "{}", hpc.text);
        // The database, whose scans stream spread memory, keeps A.
        assert_eq!(rec_of(&s, WorkloadProfile::Database).group, Some(0));
    }

    #[test]
    fn a_profile_that_cannot_pick_says_why() {
        // Identical settings, quiet: every figure ties.
        let s = study([1.0; 4], 0.002);
        for p in [WorkloadProfile::Database, WorkloadProfile::Hpc, WorkloadProfile::Latency] {
            let r = rec_of(&s, p);
            assert_eq!(r.group, None, "{p:?}: {}", r.text);
            assert_eq!(r.no_pick, Some(NoPick::Tie { groups: vec![0, 1] }), "{p:?}: {}", r.text);
        }
        // A 5% gap in 8% noise: the first figure that ranks them is
        // undecided, and the reason names it.
        let s = study([1.0, 1.0, 0.95, 0.95], 0.08);
        let r = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(
            r.no_pick,
            Some(NoPick::Undecided { metric: catalogue::SPREAD_LAT.into(), groups: vec![0, 1] }),
            "{}",
            r.text
        );
        // Hpc has no guard: its first gain, the bound bandwidth per
        // package, is undecided, and the latency after it picks nothing.
        let r = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(
            r.no_pick,
            Some(NoPick::Undecided { metric: catalogue::LOCAL_BW_PKG.into(), groups: vec![0, 1] }),
            "{}",
            r.text
        );
        // A pick carries no reason.
        let s = study([1.0, 1.0, 0.8, 0.8], 0.002);
        let r = rec_of(&s, WorkloadProfile::Database);
        assert_eq!((r.group, &r.no_pick), (Some(1), &None), "{}", r.text);
        // Nothing the profile ranks by in two groups: the runs measured
        // bandwidth only.
        let mut s = study([1.0; 4], 0.002);
        s.metrics.retain(|m| m.metric.ends_with("_gbs"));
        let r = recommend(&s)
            .into_iter()
            .find(|r| r.profile == ForWhom::Workload(WorkloadProfile::Latency))
            .unwrap();
        assert_eq!(r.no_pick, Some(NoPick::NothingMeasured), "{}", r.text);
        // In JSON, a tagged reason.
        let v = serde_json::to_value(NoPick::Tie { groups: vec![0, 1] }).unwrap();
        assert_eq!(v, json!({"reason": "tie", "groups": [0, 1]}));
    }
}
