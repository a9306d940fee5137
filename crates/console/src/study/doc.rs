//! The documents `numaprobe --json study` prints, typed: the study
//! ([`StudyDoc`]), its dry run ([`PlanDoc`]) and `--restore`
//! ([`RestoreDoc`]). The caller adds the schema version and sorts keys.

use analysis::study::{GroupMetric, StudyMetric};
use serde::Serialize;

use vary::child::RunOutput;
use vary::journal::Entry;
use vary::{DryRun, Outcome, Plan};

/// `study --json`; `C` is the comparison of the runs.
#[derive(Debug, Serialize)]
pub struct StudyDoc<'a, C> {
    key: &'a str,
    values: &'a [String],
    baseline: &'a str,
    rounds: u32,
    order: Vec<&'a str>,
    /// The value the setting was put back to.
    restored: &'a str,
    labels: &'a [String],
    runs: Vec<RunDoc<'a>>,
    /// The comparison of the runs (`null` when the study stopped early).
    comparison: Option<&'a C>,
    /// Why the study stopped before its end (`null`: it did not).
    stopped: Option<&'a str>,
}

/// One run of the study, in the order measured.
#[derive(Debug, Serialize)]
struct RunDoc<'a> {
    value: &'a str,
    label: &'a str,
    /// The run's id and status (`null` when it wrote no document).
    run: Option<store::RunId>,
    status: Option<store::RunStatus>,
}

impl<'a, C> StudyDoc<'a, C> {
    pub fn new(
        plan: &'a Plan,
        outcome: &'a Outcome<Option<RunOutput>>,
        comparison: Option<&'a C>,
        stopped: Option<&'a str>,
    ) -> StudyDoc<'a, C> {
        StudyDoc {
            key: plan.knob.key(),
            values: &plan.values,
            baseline: &plan.values[0],
            rounds: plan.rounds,
            order: plan.sequence(),
            restored: &outcome.restored,
            labels: &plan.labels,
            runs: outcome
                .runs
                .iter()
                .map(|d| RunDoc {
                    value: &plan.values[d.value],
                    label: &d.label,
                    run: d.output.map(|o| o.id),
                    status: d.output.map(|o| o.status),
                })
                .collect(),
            comparison,
            stopped,
        }
    }
}

/// `study --dry-run --json`.
#[derive(Debug, Serialize)]
pub struct PlanDoc<'a> {
    dry_run: bool,
    key: &'a str,
    /// The value in force now.
    current: &'a str,
    values: &'a [String],
    baseline: &'a str,
    rounds: u32,
    order: Vec<&'a str>,
    labels: &'a [String],
    run_options: &'a [String],
    restore_commands: &'a [String],
    /// The whole study's estimated seconds of measuring (`null`: unknown).
    estimate_s: Option<f64>,
    /// False when the rounds are too few for any verdict but undecided.
    decidable: bool,
}

impl<'a> PlanDoc<'a> {
    pub fn new(plan: &'a Plan, dry: &'a DryRun, run_options: &'a [String]) -> PlanDoc<'a> {
        PlanDoc {
            dry_run: true,
            key: plan.knob.key(),
            current: &dry.current,
            values: &plan.values,
            baseline: &plan.values[0],
            rounds: plan.rounds,
            order: plan.sequence(),
            labels: &plan.labels,
            run_options,
            restore_commands: &dry.restore_commands,
            estimate_s: dry.estimate_s,
            decidable: dry.undecidable.is_none(),
        }
    }
}

/// `study --restore --json`.
#[derive(Debug, Serialize)]
pub struct RestoreDoc<'a> {
    /// Whether a journal was found (false: nothing to restore).
    journal: bool,
    key: Option<&'a str>,
    /// The value put back.
    restored: Option<&'a str>,
    /// The value in force before the restore.
    was: Option<&'a str>,
    study_pid: Option<u32>,
}

impl<'a> RestoreDoc<'a> {
    /// `entry`: the journal put back (`None`: there was none); `was`: the
    /// value in force before.
    pub fn new(entry: Option<&'a Entry>, was: Option<&'a str>) -> RestoreDoc<'a> {
        RestoreDoc {
            journal: entry.is_some(),
            key: entry.map(|e| e.key.as_str()),
            restored: entry.map(|e| e.shown.as_str()),
            was,
            study_pid: entry.map(|e| e.pid),
        }
    }
}

/// `compare --json` (and the comparison of `study --json`): the study with
/// its warnings and notes in words (`report::study::words`), its fields in
/// the order the document has always had.
#[derive(Debug, Serialize)]
pub struct CompareDoc<'a> {
    groups: Vec<GroupDoc<'a>>,
    baseline: usize,
    settings_diff: Vec<SettingDiffDoc<'a>>,
    settings_same: Vec<String>,
    metrics: Vec<MetricDoc<'a>>,
    recommendations: Vec<RecommendationDoc<'a>>,
    confidence: f64,
    margin_pct: f64,
    across_machines: bool,
    warnings: Vec<String>,
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    impossible: Vec<ImpossibleDoc<'a>>,
    marked_inputs: Vec<MarkedInputDoc<'a>>,
}

/// A run whose figure of a metric rests on marked results, in `compare
/// --json`: the metric's id, the group, the run and each mark.
#[derive(Debug, Serialize)]
struct MarkedInputDoc<'a> {
    metric: &'a analysis::metric_id::MetricId,
    group: usize,
    run: store::RunId,
    marks: Vec<MarkDoc>,
}

/// One marked result: what it is (`report::subject::marked`), `disturbed`
/// or `noisy`, and why, in `report::trust`'s words.
#[derive(Debug, Serialize)]
struct MarkDoc {
    what: String,
    state: &'static str,
    cause: String,
}

impl<'a> MarkedInputDoc<'a> {
    fn new(m: &'a analysis::inputs::MarkedInput) -> MarkedInputDoc<'a> {
        MarkedInputDoc {
            metric: &m.metric,
            group: m.group,
            run: m.run,
            marks: m
                .marks
                .iter()
                .map(|k| MarkDoc {
                    what: report::subject::marked(&k.what),
                    state: report::trust::word(&k.distrust),
                    cause: report::trust::cause(&k.distrust),
                })
                .collect(),
        }
    }
}

impl<'a> CompareDoc<'a> {
    pub fn new(study: &'a analysis::study::Study) -> CompareDoc<'a> {
        CompareDoc {
            groups: study.groups.iter().map(GroupDoc::new).collect(),
            baseline: study.baseline,
            settings_diff: study
                .settings_diff
                .iter()
                .map(|d| SettingDiffDoc {
                    setting: &d.setting,
                    values: d.values.iter().map(report::study::words::setting_value).collect(),
                })
                .collect(),
            settings_same: study
                .settings_same
                .iter()
                .map(|(k, v)| format!("{k}={}", report::study::words::setting_value(v)))
                .collect(),
            metrics: study.metrics.iter().map(|m| MetricDoc::new(study, m)).collect(),
            recommendations: study
                .recommendations
                .iter()
                .map(|r| RecommendationDoc {
                    profile: &r.profile,
                    text: report::study::recommend::recommendation_text(study, r),
                    group: r.group,
                    decided_by: r.decided_by.as_ref(),
                    excluded: &r.excluded,
                    no_pick: r.no_pick.as_ref(),
                })
                .collect(),
            confidence: study.confidence,
            margin_pct: study.margin_pct,
            across_machines: study.across_machines,
            warnings: report::study::words::warnings(study),
            notes: report::study::words::notes(study),
            impossible: study
                .impossible
                .iter()
                .map(|i| ImpossibleDoc {
                    group: i.group,
                    run: i.run,
                    metric: &i.metric,
                    text: report::impossible::text(&i.figure),
                })
                .collect(),
            marked_inputs: study.marked_inputs.iter().map(MarkedInputDoc::new).collect(),
        }
    }
}

/// A setting that differs between the groups in `compare --json`: its
/// value in each group in words (`report::study::words::setting_value`).
#[derive(Debug, Serialize)]
struct SettingDiffDoc<'a> {
    setting: &'a str,
    values: Vec<String>,
}

/// A metric of the study in `compare --json`: its definition and each
/// group's figure and verdict, the noise floors' sources in words
/// (`report::study::words::floor_source`).
#[derive(Debug, Serialize)]
struct MetricDoc<'a> {
    metric: &'a analysis::catalogue::MetricId,
    name: String,
    unit: &'a str,
    higher_is_better: bool,
    relation: analysis::layout::Relation,
    scope: analysis::layout::Scope,
    groups: Vec<GroupMetricDoc<'a>>,
    best_group: Option<usize>,
    noise_floor_pct: Option<f64>,
    noise_floor_source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    derived: Option<String>,
}

impl<'a> MetricDoc<'a> {
    fn new(study: &analysis::study::Study, m: &'a StudyMetric) -> MetricDoc<'a> {
        let source = |s: &analysis::study::FloorSource| {
            report::study::words::floor_source(study.confidence, s)
        };
        MetricDoc {
            metric: &m.metric,
            name: report::study::words::row_name(study, m),
            unit: &m.unit,
            higher_is_better: m.higher_is_better,
            relation: m.relation,
            scope: m.scope,
            groups: m
                .groups
                .iter()
                .map(|c| GroupMetricDoc {
                    cell: c,
                    noise_floor_source: c.noise_floor_source.as_ref().map(source),
                })
                .collect(),
            best_group: m.best_group,
            noise_floor_pct: m.noise_floor_pct,
            noise_floor_source: m.noise_floor_source.as_ref().map(source),
            derived: m.derived.as_ref().map(|d| report::study::words::row_derived(study, d)),
        }
    }
}

/// One group's cell of a metric in `compare --json`, its keys in the
/// order the document has always had.
#[derive(Debug)]
struct GroupMetricDoc<'a> {
    cell: &'a GroupMetric,
    noise_floor_source: Option<String>,
}

impl Serialize for GroupMetricDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let c = self.cell;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("n", &c.n)?;
        m.serialize_entry("median", &c.median)?;
        m.serialize_entry("values", &c.values)?;
        m.serialize_entry("change_pct", &c.change_pct)?;
        m.serialize_entry("ci_low_pct", &c.ci_low_pct)?;
        m.serialize_entry("ci_high_pct", &c.ci_high_pct)?;
        m.serialize_entry("verdict", &c.verdict)?;
        m.serialize_entry("runs_needed", &c.runs_needed)?;
        m.serialize_entry("basis", &c.basis)?;
        m.serialize_entry("noise_floor_pct", &c.noise_floor_pct)?;
        m.serialize_entry("noise_floor_source", &self.noise_floor_source)?;
        m.serialize_entry("floor_runs_needed", &c.floor_runs_needed)?;
        m.serialize_entry("more_runs_held_by_floor_pct", &c.more_runs_held_by_floor_pct)?;
        let why = c.not_applicable.map(report::study::words::not_applicable);
        m.serialize_entry("not_applicable", &why)?;
        if let Some(b) = &c.brackets {
            m.serialize_entry("brackets", b)?;
        }
        if let Some(p) = &c.pooled_groups {
            m.serialize_entry("pooled_groups", p)?;
        }
        if let Some(u) = &c.undecided_because {
            m.serialize_entry("undecided_because", u)?;
        }
        if let Some(d) = &c.derived {
            m.serialize_entry("derived", &report::study::words::group_derived(d))?;
        }
        m.end()
    }
}

/// A group of the study in `compare --json`: the runs it holds and, where
/// its settings hide NUMA, the per-CPU evidence in words
/// (`report::study::words::hidden_numa`).
#[derive(Debug, Serialize)]
struct GroupDoc<'a> {
    #[serde(rename = "ref")]
    reference: &'a str,
    label: &'a str,
    runs: &'a [store::RunId],
    configs: &'a [String],
    machines: &'a [String],
    not_complete: Vec<String>,
    hidden_numa: Option<String>,
    one_node: bool,
}

impl<'a> GroupDoc<'a> {
    fn new(g: &'a analysis::study::StudyGroup) -> GroupDoc<'a> {
        GroupDoc {
            reference: &g.reference,
            label: &g.label,
            runs: &g.runs,
            configs: &g.configs,
            machines: &g.machines,
            not_complete: g.not_complete.iter().map(|(id, s)| format!("run {id} {s}")).collect(),
            hidden_numa: g.hidden_numa.as_ref().map(report::study::words::hidden_numa),
            one_node: g.one_node,
        }
    }
}

/// A profile's recommendation in `compare --json`: the pick and why, its
/// reasoning worded in `text` (`report::study::recommend`).
#[derive(Debug, Serialize)]
struct RecommendationDoc<'a> {
    profile: &'a analysis::study::ForWhom,
    text: String,
    group: Option<usize>,
    decided_by: Option<&'a analysis::catalogue::MetricId>,
    excluded: &'a [usize],
    #[serde(skip_serializing_if = "Option::is_none")]
    no_pick: Option<&'a analysis::study::NoPick>,
}

/// An impossible headline figure of a study's run, in `compare --json`:
/// the figure, the limit it breaks and the likely cause in `text`.
#[derive(Debug, Serialize)]
struct ImpossibleDoc<'a> {
    group: usize,
    run: store::RunId,
    metric: &'a analysis::catalogue::MetricId,
    text: String,
}
