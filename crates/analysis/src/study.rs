//! Settings studies: groups of runs (one group per setting) side by side
//! against a baseline group, with the settings that differ, a verdict per
//! metric from the run-to-run spread ([`results::runstats`]), the best
//! group per metric where the verdict supports it, hidden-NUMA evidence,
//! and recommendations per workload profile. One plain data structure,
//! [`Study`], printed by `compare` (text and `--json`) and drawn by the
//! reports (`report::study`).

use std::collections::{BTreeMap, BTreeSet};

use results::context::Reading;
use results::runstats::{
    guard_floor, interval_rank, judge, range_floor, Basis, GroupVerdict, NoiseFloor, Policy,
    MAX_RUNS_SUGGESTED,
};
use serde::Serialize;
use serde_json::Value;
use store::{LoadedRun, RunId, RunRef, RunStatus, Store, StoreError};

use crate::data::RunData;
use crate::metrics::{metrics, MetricKey};
use crate::text::{clip, signed_pct};

/// The most groups a study compares side by side.
pub const MAX_GROUPS: usize = 8;

/// Config fields that are not settings (see `audit::fingerprint`).
const NOT_SETTINGS: [&str; 2] = ["fingerprint", "budget"];

/// Why a study cannot be built: each is the user's mistake (exit 2) except
/// [`StudyError::Store`].
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    #[error("compare needs 2 to {MAX_GROUPS} groups of runs (got {0})")]
    GroupCount(usize),
    #[error("{0:?} selects no run")]
    NoRuns(String),
    #[error("run {run} is in two groups ({a} and {b}); each run may be in one group only")]
    Overlap { run: RunId, a: String, b: String },
    #[error("{0}")]
    BadRef(StoreError),
    #[error(transparent)]
    Store(StoreError),
}

impl StudyError {
    /// True when the input was wrong (exit 2), not the database.
    pub fn is_usage(&self) -> bool {
        !matches!(self, StudyError::Store(_))
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
    /// Against the baseline group's median; `None` for the baseline.
    pub change_pct: Option<f64>,
    pub ci_low_pct: Option<f64>,
    pub ci_high_pct: Option<f64>,
    pub verdict: Option<GroupVerdict>,
    /// For `undecided`: runs per group that would likely decide.
    pub runs_needed: Option<u32>,
    pub basis: Option<Basis>,
    /// The noise floor this comparison was held to (percent), if measured.
    pub noise_floor_pct: Option<f64>,
    /// Too few runs for an interval and for a floor that could decide: the
    /// runs of one configuration of identical settings still missing on
    /// this machine for such a floor (`runs_needed` per group is the other
    /// way to decide).
    pub floor_runs_needed: Option<usize>,
}

/// One metric across the groups.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyMetric {
    /// Stable id (`local_bw_gbs`, ... , `remote_penalty_ratio`).
    pub metric: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// One per group, in the order of [`Study::groups`].
    pub groups: Vec<GroupMetric>,
    /// The group with the best median when the verdicts support it: a
    /// group judged `better` than the baseline (the best of them), or the
    /// baseline when every other group is `worse`.
    pub best_group: Option<usize>,
    /// The noise floor for groups the size of the baseline group (each
    /// group's own is in [`GroupMetric::noise_floor_pct`]); `None` where
    /// none can be used (see [`Floors::for_sizes`]).
    pub noise_floor_pct: Option<f64>,
    pub noise_floor_source: Option<String>,
}

/// What a workload profile should pick, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// The audit's profile name (`database`, `latency`, `hpc`,
    /// `virtualization`, `ai-training`) or `general`.
    pub profile: String,
    pub text: String,
    /// The group to pick, when the data decide.
    pub group: Option<usize>,
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
}

/// The metrics a study judges: the headline metrics and the remote penalty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StudyKey {
    Headline(MetricKey),
    /// Remote latency / local latency (lower is better).
    RemotePenalty,
}

impl StudyKey {
    pub fn all() -> Vec<StudyKey> {
        let mut v: Vec<StudyKey> = MetricKey::ALL.iter().map(|k| StudyKey::Headline(*k)).collect();
        v.push(StudyKey::RemotePenalty);
        v
    }
    pub fn id(self) -> &'static str {
        match self {
            StudyKey::Headline(k) => k.id(),
            StudyKey::RemotePenalty => "remote_penalty_ratio",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            StudyKey::Headline(k) => k.name(),
            StudyKey::RemotePenalty => "Remote penalty",
        }
    }
    pub fn unit(self) -> &'static str {
        match self {
            StudyKey::Headline(k) => k.unit(),
            StudyKey::RemotePenalty => "x",
        }
    }
    pub fn higher_is_better(self) -> bool {
        match self {
            StudyKey::Headline(k) => k.higher_is_better(),
            StudyKey::RemotePenalty => false,
        }
    }
    /// The `run` step that measures it (for "measure next").
    fn step(self) -> &'static str {
        match self {
            StudyKey::Headline(MetricKey::LocalBw) => "bw-local",
            StudyKey::Headline(MetricKey::GlobalBw) => "bw-global",
            StudyKey::Headline(MetricKey::InterleaveBw) => "bw-interleave",
            StudyKey::Headline(MetricKey::CrossBw) => "bw-matrix",
            StudyKey::Headline(MetricKey::LocalLat | MetricKey::RemoteLat) => "lat-matrix",
            StudyKey::Headline(MetricKey::LoadedLatPeak) => "lat-loaded",
            StudyKey::RemotePenalty => "lat-matrix",
        }
    }
    /// The value of this metric in one run.
    pub fn value_of(self, m: &BTreeMap<MetricKey, crate::metrics::Metric>) -> Option<f64> {
        match self {
            StudyKey::Headline(k) => m.get(&k).map(|x| x.value),
            StudyKey::RemotePenalty => {
                let r = m.get(&MetricKey::RemoteLat)?.value;
                let l = m.get(&MetricKey::LocalLat)?.value;
                (l > 0.0).then(|| r / l)
            }
        }
    }
}

/// Flattens a configuration document into `setting -> value text`.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if prefix.is_empty() && NOT_SETTINGS.contains(&k.as_str()) {
                    continue;
                }
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        Value::Null => {
            out.insert(prefix.to_string(), "-".into());
        }
        Value::String(s) => {
            out.insert(prefix.to_string(), s.clone());
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

fn settings_of(run: &LoadedRun) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    flatten("", &run.config.to_json(), &mut m);
    m
}

/// The per-CPU evidence that a group's settings hide NUMA.
fn hidden_numa_of(runs: &[LoadedRun]) -> Option<String> {
    for r in runs {
        let d = RunData::of(r);
        if let Some(s) = d.per_cpu_summaries.iter().find(|s| s.hidden_numa && s.groups.len() > 1) {
            let text = |s: &Option<Reading<String>>| s.as_ref().and_then(Reading::value).cloned();
            let mode = text(&r.config.numa_mode_label)
                .or_else(|| text(&r.config.numa_mode))
                .unwrap_or_else(|| "one node".into());
            return Some(format!(
                "the OS shows {} node(s) ({mode}) but per-CPU latency to memory node {} splits into {} groups ({}) in run {}: this setting hides NUMA (numa=off, NPS0 or firmware interleave) without removing it",
                r.config.nodes.unwrap_or(1),
                s.mem_node.map_or("?".into(), |n| n.to_string()),
                s.groups.len(),
                s.groups_text(),
                r.summary.id
            ));
        }
    }
    None
}

/// Repeated runs of identical settings (same machine and configuration
/// fingerprint, complete) per metric, from which the noise floor of each
/// comparison is predicted ([`Floors::for_sizes`]).
#[derive(Debug, Clone, Default)]
pub struct Floors {
    /// Per metric: one series of values per configuration, in start-time
    /// order.
    pub by_metric: BTreeMap<&'static str, Vec<Vec<f64>>>,
}

impl Floors {
    /// Collects the series from `runs` (any set: they are grouped by machine
    /// and configuration here, in start-time order).
    pub fn from_runs(runs: &[LoadedRun]) -> Floors {
        let mut by_cfg: BTreeMap<(String, String), Vec<&LoadedRun>> = BTreeMap::new();
        for r in runs.iter().filter(|r| r.summary.status == RunStatus::Complete) {
            by_cfg
                .entry((r.summary.machine_fingerprint.clone(), r.summary.config_hash.clone()))
                .or_default()
                .push(r);
        }
        for v in by_cfg.values_mut() {
            // By the instant each start names (offsets differ between
            // machines and imports), not by its text.
            v.sort_by_cached_key(|r| {
                (store::util::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN), r.summary.id)
            });
        }
        let vals: Vec<Vec<BTreeMap<MetricKey, crate::metrics::Metric>>> =
            by_cfg.values().map(|v| v.iter().map(|r| metrics(&RunData::of(r))).collect()).collect();
        let mut by_metric = BTreeMap::new();
        for key in StudyKey::all() {
            let series: Vec<Vec<f64>> = vals
                .iter()
                .map(|ms| ms.iter().filter_map(|m| key.value_of(m)).collect::<Vec<f64>>())
                .filter(|s| !s.is_empty())
                .collect();
            if !series.is_empty() {
                by_metric.insert(key.id(), series);
            }
        }
        Floors { by_metric }
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
        policy: &Policy,
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
        policy: &Policy,
        floors: &Floors,
    ) -> Study {
        assert!(baseline < groups.len(), "baseline index out of range");
        let mut warnings = Vec::new();
        // Groups.
        let mut infos = Vec::new();
        let mut settings: Vec<BTreeMap<String, String>> = Vec::new();
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
            });
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
        // Metrics.
        let per_group: Vec<Vec<BTreeMap<MetricKey, crate::metrics::Metric>>> = groups
            .iter()
            .map(|g| g.runs.iter().map(|r| metrics(&RunData::of(r))).collect())
            .collect();
        let mut rows = Vec::new();
        for key in StudyKey::all() {
            let values: Vec<Vec<f64>> = per_group
                .iter()
                .map(|ms| ms.iter().filter_map(|m| key.value_of(m)).collect())
                .collect();
            if values.iter().all(|v| v.is_empty()) {
                continue;
            }
            let cells: Vec<GroupMetric> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let med = results::stats::median(v);
                    let mut c = GroupMetric {
                        n: v.len(),
                        median: med,
                        values: v.clone(),
                        change_pct: None,
                        ci_low_pct: None,
                        ci_high_pct: None,
                        verdict: None,
                        runs_needed: None,
                        basis: None,
                        noise_floor_pct: None,
                        floor_runs_needed: None,
                    };
                    let floor = floors.for_sizes(key.id(), values[baseline].len(), v.len(), policy);
                    if i != baseline {
                        let f = floor.as_ref().ok().and_then(Option::as_ref);
                        if let Some(j) =
                            judge(&values[baseline], v, key.higher_is_better(), policy, f)
                        {
                            c.noise_floor_pct = f.map(|f| f.pct);
                            if let Err((have, need)) = floor {
                                c.floor_runs_needed = Some(need.saturating_sub(have));
                            }
                            c.change_pct = Some(j.change_pct);
                            c.ci_low_pct = j.ci_low_pct;
                            c.ci_high_pct = j.ci_high_pct;
                            c.verdict = Some(j.verdict);
                            c.runs_needed = j.runs_needed;
                            c.basis = Some(j.basis);
                        }
                    }
                    c
                })
                .collect();
            let best_group = best_group(&cells, baseline, key.higher_is_better());
            let nb = values[baseline].len();
            let base_floor = floors.for_sizes(key.id(), nb, nb, policy).ok().flatten();
            rows.push(StudyMetric {
                metric: key.id(),
                name: key.name(),
                unit: key.unit(),
                higher_is_better: key.higher_is_better(),
                groups: cells,
                best_group,
                noise_floor_pct: base_floor.as_ref().map(|f| f.pct),
                noise_floor_source: base_floor.map(|f| f.source),
            });
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
        };
        study.recommendations = recommend(&study);
        study
    }

    /// The study of the groups `refs` select in `db` (`baseline`: one of
    /// `refs`, or another reference, which then becomes the first group;
    /// default the first). Noise floors come from every run of the
    /// machines involved.
    pub fn from_store(
        db: &Store,
        refs: &[String],
        baseline: Option<&str>,
        policy: &Policy,
    ) -> Result<Study, StudyError> {
        let mut refs: Vec<String> = refs.to_vec();
        let mut base = 0;
        if let Some(b) = baseline {
            match refs.iter().position(|r| r == b) {
                Some(i) => base = i,
                None => refs.insert(0, b.to_string()),
            }
        }
        if !(2..=MAX_GROUPS).contains(&refs.len()) {
            return Err(StudyError::GroupCount(refs.len()));
        }
        let mut groups = Vec::new();
        let mut seen: BTreeMap<RunId, String> = BTreeMap::new();
        for r in &refs {
            let parsed: RunRef = r.parse().map_err(StudyError::BadRef)?;
            let ids = match db.resolve_group(&parsed) {
                Ok(ids) => ids,
                Err(StoreError::NoSuchRun(_)) => return Err(StudyError::NoRuns(r.clone())),
                Err(e @ StoreError::AmbiguousRun { .. }) => return Err(StudyError::BadRef(e)),
                Err(e) => return Err(StudyError::Store(e)),
            };
            let mut runs = Vec::new();
            for id in ids {
                if let Some(prev) = seen.insert(id, r.clone()) {
                    return Err(StudyError::Overlap { run: id, a: prev, b: r.clone() });
                }
                runs.push(db.load_run(id).map_err(StudyError::Store)?);
            }
            groups.push(GroupInput { reference: r.clone(), runs });
        }
        let machines: BTreeSet<String> = groups
            .iter()
            .flat_map(|g| &g.runs)
            .map(|r| r.summary.machine_fingerprint.clone())
            .collect();
        let mut pool = Vec::new();
        for fp in &machines {
            for s in db.list_runs_for_machine(fp).map_err(StudyError::Store)? {
                if s.status == RunStatus::Complete {
                    pool.push(db.load_run(s.id).map_err(StudyError::Store)?);
                }
            }
        }
        Ok(Study::build(&groups, base, policy, &Floors::from_runs(&pool)))
    }

    /// Each run as its own group, the first the baseline; noise floors from
    /// these runs only (repeated identical settings among them).
    pub fn of_runs(runs: &[LoadedRun]) -> Study {
        let groups: Vec<GroupInput> = runs
            .iter()
            .map(|r| GroupInput { reference: r.summary.id.to_string(), runs: vec![r.clone()] })
            .collect();
        Study::build(&groups, 0, &Policy::default(), &Floors::from_runs(runs))
    }
}

/// The best group when the verdicts support it (see [`StudyMetric::best_group`]).
fn best_group(cells: &[GroupMetric], baseline: usize, higher: bool) -> Option<usize> {
    let better: Vec<usize> =
        (0..cells.len()).filter(|&i| cells[i].verdict == Some(GroupVerdict::Better)).collect();
    if !better.is_empty() {
        return better.into_iter().max_by(|&a, &b| {
            let (x, y) = (cells[a].median.unwrap_or(0.0), cells[b].median.unwrap_or(0.0));
            if higher {
                x.total_cmp(&y)
            } else {
                y.total_cmp(&x)
            }
        });
    }
    let others: Vec<&GroupMetric> =
        cells.iter().enumerate().filter(|(i, _)| *i != baseline).map(|(_, c)| c).collect();
    if !others.is_empty() && others.iter().all(|c| c.verdict == Some(GroupVerdict::Worse)) {
        return Some(baseline);
    }
    None
}

/// The profiles and the metrics that matter to each.
fn profiles() -> Vec<(&'static str, Vec<StudyKey>, Option<&'static str>)> {
    use MetricKey::*;
    let h = StudyKey::Headline;
    vec![
        ("database", vec![h(LocalLat), h(RemoteLat), h(LoadedLatPeak)], None),
        ("latency", vec![h(LocalLat), h(RemoteLat), h(LoadedLatPeak)], None),
        ("hpc", vec![h(LocalBw), h(GlobalBw)], None),
        ("virtualization", vec![h(InterleaveBw), StudyKey::RemotePenalty], None),
        (
            "ai-training",
            vec![h(GlobalBw)],
            Some("device-local bandwidth (GPU/accelerator to its node's memory) is not measured by `numaprobe run`: measure it with the device's own copy benchmark pinned per node"),
        ),
    ]
}

fn recommend(s: &Study) -> Vec<Recommendation> {
    let conf = (s.confidence * 100.0).round();
    let mut out = Vec::new();
    for (profile, keys, missing_note) in profiles() {
        let mut parts = Vec::new();
        let mut winners: BTreeMap<usize, usize> = BTreeMap::new();
        let mut next: Vec<String> = Vec::new();
        for key in keys {
            let Some(m) = s.metrics.iter().find(|m| m.metric == key.id()) else {
                parts.push(format!("{} was not measured", key.name().to_lowercase()));
                next.push(format!(
                    "the `{}` step (`numaprobe run --only {}`{})",
                    key.step(),
                    key.step(),
                    if matches!(
                        key,
                        StudyKey::Headline(MetricKey::RemoteLat | MetricKey::CrossBw)
                            | StudyKey::RemotePenalty
                    ) {
                        "; needs two or more NUMA nodes"
                    } else {
                        ""
                    }
                ));
                continue;
            };
            let lname = m.name.to_lowercase();
            match m.best_group {
                Some(b) if b != s.baseline => {
                    let c = &m.groups[b];
                    *winners.entry(b).or_default() += 1;
                    parts.push(format!(
                        "{} wins on {lname}: {} against {}{}",
                        s.groups[b].label,
                        signed_pct(c.change_pct.unwrap_or(0.0)),
                        s.groups[s.baseline].label,
                        match (c.ci_low_pct, c.ci_high_pct) {
                            (Some(lo), Some(hi)) => format!(
                                " ({conf}% interval {} to {})",
                                signed_pct(lo),
                                signed_pct(hi)
                            ),
                            _ => " (beyond this machine's noise floor; one run per side)".into(),
                        }
                    ));
                }
                Some(b) => {
                    *winners.entry(b).or_default() += 1;
                    parts.push(format!(
                        "{} (the baseline) wins on {lname}: every other group is worse",
                        s.groups[b].label
                    ));
                }
                None => {
                    let others: Vec<&GroupMetric> = m
                        .groups
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != s.baseline)
                        .map(|(_, c)| c)
                        .collect();
                    if others.iter().all(|c| c.verdict == Some(GroupVerdict::Same)) {
                        parts.push(format!(
                            "{lname} is the same in every group (within ±{}%)",
                            s.margin_pct
                        ));
                    } else {
                        let need = others.iter().filter_map(|c| c.runs_needed).max();
                        parts.push(format!("{lname} is undecided"));
                        next.push(match need {
                            Some(n) => format!("{n} runs per group for {lname}"),
                            None => format!(
                                "{lname}: more than {MAX_RUNS_SUGGESTED} runs per group, or a quieter machine, or runs of the settings alternated over time"
                            ),
                        });
                    }
                }
            }
        }
        let group = match winners.keys().collect::<Vec<_>>().as_slice() {
            [one] => Some(**one),
            _ => None,
        };
        let mut text = format!("{}.", capitalise(&parts.join("; ")));
        match group {
            Some(g) if g != s.baseline => {
                let diffs = differing(s, g);
                text.push_str(&format!(" Pick {}.", s.groups[g].label));
                if diffs.is_empty() {
                    text.push_str(" No recorded setting differs from the baseline: the change comes from something not recorded, or the machine changed between the runs.");
                } else {
                    text.push_str(&format!(
                        " What differs from the baseline: {}.",
                        diffs.join(", ")
                    ));
                }
            }
            Some(g) => text.push_str(&format!(" Keep {}.", s.groups[g].label)),
            None if winners.len() > 1 => text
                .push_str(" Different groups win different metrics: weigh them for your workload."),
            None => {}
        }
        if let Some(n) = missing_note {
            text.push_str(&format!(" Not decided by these runs: {n}."));
        }
        if !next.is_empty() {
            text.push_str(&format!(" Measure next: {}.", next.join("; ")));
        }
        out.push(Recommendation { profile: profile.into(), text, group });
    }
    for (i, g) in s.groups.iter().enumerate() {
        if let Some(h) = &g.hidden_numa {
            out.push(Recommendation {
                profile: "general".into(),
                text: format!(
                    "{} hides NUMA: {h}. Placement still matters under it but the OS cannot manage it; prefer a setting that shows the nodes.",
                    g.label
                ),
                group: None,
            });
            let _ = i;
        }
    }
    out
}

/// `setting (baseline value -> group value)` for the settings where group
/// `g` differs from the baseline.
fn differing(s: &Study, g: usize) -> Vec<String> {
    s.settings_diff
        .iter()
        .filter(|d| d.values[g] != d.values[s.baseline])
        .take(6)
        .map(|d| {
            format!(
                "{} ({} -> {})",
                d.setting,
                clip(&d.values[s.baseline], 30),
                clip(&d.values[g], 30)
            )
        })
        .collect()
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
