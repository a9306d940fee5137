//! Running any program under a matrix of NUMA placements and comparing,
//! on top of `topo` (the machine) and `place` (checks and child placement):
//! policies ([`policy`]), one run ([`child`]), keeping the command's
//! whole process tree within reach ([`cgroup`], [`tree`]), the processes as procfs
//! shows them, read through `topo::SysRoot` ([`proc`]), page placement
//! ([`numa_maps`]), allocation counters ([`numastat`]), the user's metric
//! ([`metric`]) and the statistics across repetitions ([`run_matrix`]).

pub mod cgroup;
pub mod child;
pub mod metric;
pub mod numa_maps;
pub mod numastat;
pub mod policy;
pub mod proc;
pub mod touch;
pub mod tree;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use place::{ChildPlacement, PlaceError};
use serde::Serialize;
use topo::SysRoot;

pub use child::{OutputSink, ResolvedCommand, Stream};
use events::{Event, Observer, StopFlag};
pub use metric::{Direction, Metric, MetricMiss, MetricRefusal, MetricSet};
pub use policy::{PlacementPolicy, PolicyItem, PolicyRefusal, Scope};
use results::stats::{self, Summary, Verdict};

/// Lines of stderr kept for a failed run.
pub const STDERR_TAIL_LINES: usize = 20;

/// A measured run shorter than this (seconds) is too short to compare.
pub const SHORT_RUN_S: f64 = 0.005;

/// Why `exec` refused or failed. Each error keeps what caused it as its
/// source (the placement layer's refusal, the system call's error), so the
/// whole chain can be printed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("no command given (put it after --)")]
    NoCommand,
    #[error("command not found: '{0}'")]
    CommandNotFound(String),
    #[error("{}: not executable", .0.display())]
    NotExecutable(PathBuf, #[source] std::io::Error),
    #[error("bad policy {0}")]
    BadPolicy(policy::PolicyRefusal),
    /// The placement layer refused a policy on this machine.
    #[error("refused {policy}")]
    Placement { policy: String, source: PlaceError },
    #[error("bad metric: {0}")]
    BadMetric(#[from] metric::MetricRefusal),
    #[error("could not start {} under '{placement}'", program.display())]
    Spawn { program: PathBuf, placement: String, source: std::io::Error },
    #[error("waiting for the command")]
    Wait(#[source] std::io::Error),
    #[error(transparent)]
    Place(#[from] PlaceError),
    #[error(transparent)]
    Topo(#[from] topo::TopoError),
}

impl ExecError {
    /// True for mistakes in what the user asked (exit status 2); a
    /// placement error is the user's when the placement layer says so
    /// ([`PlaceError::is_usage`]).
    pub fn is_usage(&self) -> bool {
        match self {
            ExecError::NoCommand
            | ExecError::CommandNotFound(_)
            | ExecError::NotExecutable(..)
            | ExecError::BadPolicy(_)
            | ExecError::BadMetric(_) => true,
            ExecError::Placement { source: e, .. } | ExecError::Place(e) => e.is_usage(),
            ExecError::Spawn { .. } | ExecError::Wait(_) | ExecError::Topo(_) => false,
        }
    }
}

/// The checked experiment: the command and what each policy applies to
/// the child (`None`: nothing, everything inherited).
#[derive(Debug, Clone)]
pub struct Plan {
    pub command: ResolvedCommand,
    pub policies: Vec<(PlacementPolicy, Option<ChildPlacement>)>,
}

impl Plan {
    /// Checks every policy against `scope` and probes that the kernel
    /// accepts its masks; the first refusal is returned and nothing runs.
    pub fn new(
        command: ResolvedCommand,
        policies: &[PlacementPolicy],
        scope: &Scope,
    ) -> Result<Plan, ExecError> {
        if policies.is_empty() {
            return Err(ExecError::BadPolicy(policy::PolicyRefusal::EmptyList));
        }
        let mut out = Vec::new();
        for p in policies {
            let placement = scope.placement(p)?;
            if let Some(c) = &placement {
                c.probe()
                    .map_err(|source| ExecError::Placement { policy: p.to_string(), source })?;
            }
            out.push((p.clone(), placement));
        }
        Ok(Plan { command, policies: out })
    }
}

/// How to run the plan.
pub struct Options {
    pub repeat: u32,
    pub warmup: u32,
    /// The `--metric`s (none: compared on wall time) and where they are
    /// searched.
    pub metrics: MetricSet,
    pub timeout: Option<Duration>,
    pub fail_fast: bool,
    pub sink: Option<Arc<dyn OutputSink>>,
    /// Smallest change called better or worse, in percent.
    pub floor_pct: f64,
    /// Where `numastat` and procfs are read (the live machine:
    /// `SysRoot::live()`).
    pub root: SysRoot,
    /// Count events of each run (`--counters`).
    pub counters: bool,
    /// Bytes of the end of each stream stored with each run
    /// (`--keep-output`, at most [`MAX_KEEP_OUTPUT_BYTES`]); 0 keeps none.
    pub keep_output_bytes: usize,
}

/// `--keep-output`'s default: 4 KiB of each stream per run.
pub const DEFAULT_KEEP_OUTPUT_BYTES: usize = 4 << 10;
/// `--keep-output`'s bound: 1 MiB per stream, what a run's capture holds
/// of the end of its output.
pub const MAX_KEEP_OUTPUT_BYTES: usize = 1 << 20;

/// The last `max` bytes of `text` (cut forward to a character boundary),
/// control characters other than newline and tab dropped, so a stored
/// tail never carries escape sequences into a terminal or a report.
pub fn output_tail(text: &str, max: usize) -> String {
    let mut start = text.len().saturating_sub(max.min(MAX_KEEP_OUTPUT_BYTES));
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).collect()
}

use results::exec::{
    MetricReading, NamedMetric, PolicyResult, PolicyStats, PolicyVerdict, RunRecord,
};
use results::stats::MIN_RUNS_FOR_VERDICT;

/// The whole experiment.
#[derive(Debug, Clone, Serialize)]
pub struct ExecReport {
    pub command: Vec<String>,
    pub repeat: u32,
    pub warmup: u32,
    /// The unnamed `--metric` pattern, when given.
    pub metric: Option<String>,
    /// "metric" (the unnamed metric), "metric:NAME" (the named metric
    /// first by name, when no unnamed one is given) or "wall_s": what each
    /// policy's `change_pct` and `verdict` compare.
    pub compared_on: String,
    pub direction: Direction,
    /// `--metric-file`: where the metrics were searched instead of the
    /// command's output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metric_file: Option<String>,
    /// Every named metric (`--metric NAME=REGEX`) judged on its own, by
    /// name (per policy: `policies[].metrics[NAME]`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub named_metrics: Vec<NamedJudgement>,
    /// The policy others are compared with: `default` when measured, else
    /// the first policy.
    pub baseline: Option<String>,
    pub floor_pct: f64,
    pub policies: Vec<PolicyResult>,
    /// The policy better than the baseline beyond noise with the best
    /// median; null when none is.
    pub best_policy: Option<String>,
    /// One sentence saying why, as the front end words [`BestReason`]
    /// (`why_best`); the library leaves it empty.
    pub best_reason: String,
    /// Policies within noise of the best one.
    pub tied_with_best: Vec<String>,
    /// Why the matrix stopped early, as the front end words [`Stop`]
    /// (the `--json` document and the saved run carry these words); the
    /// library leaves it `None` and says why in `stop`.
    pub stopped: Option<String>,
    pub failed_runs: usize,
    /// Why the matrix stopped before its last run, if it did.
    #[serde(skip)]
    pub stop: Option<Stop>,
    /// The metrics no successful run gave a number for, in the order they
    /// were given: the caller tells them when the matrix ends.
    #[serde(skip)]
    pub unmatched: Vec<UnmatchedMetric>,
    /// Why `best_policy` is the best, or why no policy is.
    #[serde(skip)]
    pub why_best: BestReason,
}

/// Why a policy is the best on the quantity compared, or why none is.
#[derive(Debug, Clone, PartialEq)]
pub enum BestReason {
    /// No policy was measured.
    NothingMeasured,
    /// The baseline has no successful run giving the quantity compared.
    BaselineUnmeasured { baseline: String, on: Compared },
    /// No policy is better than the baseline beyond noise, and every
    /// policy with data got a verdict.
    NoneBetter { baseline: String },
    /// No policy judged is better than the baseline beyond noise, and some
    /// got no verdict.
    Undecided(Undecided),
    /// `best` is better than `baseline` beyond noise, by `change_pct`
    /// percent, with the best median of those that are; `tied` (better
    /// too) are within noise of it; `undecided`: policies that got no
    /// verdict.
    Best {
        best: String,
        change_pct: f64,
        baseline: String,
        tied: Vec<String>,
        undecided: Option<Undecided>,
    },
}

/// Policies that got no better/worse verdict: too few successful runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undecided {
    /// The successful runs per policy a verdict needs
    /// ([`MIN_RUNS_FOR_VERDICT`]).
    pub needed: usize,
    /// Each policy short of them (those undecided, and the baseline when
    /// it is short), with its count of successful runs giving the quantity.
    pub short: Vec<(String, usize)>,
}

/// The quantity compared, as [`Quantity`] names it, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compared {
    /// The unnamed metric.
    Metric,
    /// A named metric.
    Named(String),
    /// Wall time.
    Wall,
}

/// Why the matrix stopped before its last run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The stop flag was raised (a signal; the caller knows which).
    Interrupted,
    /// A run failed and the matrix was to stop at the first failure;
    /// `what` names the run as progress does (`default run 1/3`).
    FailFast { what: String },
}

/// A metric that no successful run gave a number for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedMetric {
    /// Its name; `None`: the unnamed metric.
    pub name: Option<String>,
    pub pattern: String,
    pub searched: Searched,
}

/// Where a metric was searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Searched {
    /// The metric file each run wrote, as given.
    File(PathBuf),
    /// The runs' output; the last lines of the last run's stdout (`None`
    /// when no run was made).
    Output { last_stdout_tail: Option<Vec<String>> },
}

/// One named metric across the policies: its pattern, direction and the
/// best policy by it.
#[derive(Debug, Clone, Serialize)]
pub struct NamedJudgement {
    pub name: String,
    pub pattern: String,
    pub direction: Direction,
    pub best_policy: Option<String>,
    /// Why, as the front end words `why_best`; the library leaves it empty.
    pub best_reason: String,
    pub tied_with_best: Vec<String>,
    /// Why `best_policy` is the best by this metric, or why no policy is.
    #[serde(skip)]
    pub why_best: BestReason,
}

/// The quantity a verdict compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity<'a> {
    /// The unnamed metric.
    Metric,
    /// A named metric.
    Named(&'a str),
    /// Wall time.
    Wall,
}

impl Quantity<'_> {
    /// This quantity, owned.
    pub fn to_compared(&self) -> Compared {
        match self {
            Quantity::Metric => Compared::Metric,
            Quantity::Named(n) => Compared::Named(n.to_string()),
            Quantity::Wall => Compared::Wall,
        }
    }

    /// What `compared_on` says (`metric`, `metric:NAME`, `wall_s`).
    pub fn id(&self) -> String {
        match self {
            Quantity::Metric => "metric".into(),
            Quantity::Named(n) => format!("metric:{n}"),
            Quantity::Wall => "wall_s".into(),
        }
    }

    /// The summary of this quantity's successful runs under policy `p`.
    pub fn summary(&self, p: &PolicyResult) -> Option<Summary> {
        match self {
            Quantity::Metric => p.stats.metric_summary,
            Quantity::Named(n) => p.metrics.get(*n).and_then(|m| m.summary),
            Quantity::Wall => p.stats.wall_summary,
        }
    }
}

impl ExecReport {
    /// What each policy's `verdict` compares.
    pub fn compared(&self) -> Quantity<'_> {
        match self.compared_on.as_str() {
            "metric" => Quantity::Metric,
            "wall_s" => Quantity::Wall,
            other => Quantity::Named(other.strip_prefix("metric:").unwrap_or(other)),
        }
    }
}

fn record(
    rep: u32,
    o: &child::RunOutcome,
    metrics: &MetricSet,
    file: Option<&Result<String, MetricMiss>>,
    numastat_delta: Vec<results::exec::NodeDelta>,
    keep_output_bytes: usize,
) -> RunRecord {
    let ok = o.exit.success() && !o.timed_out && !o.interrupted;
    let found = metrics.extract(&o.stdout.text, &o.stderr.text, file);
    let (mut value, mut metric_error) = (None, None);
    let mut named = BTreeMap::new();
    for (m, r) in metrics.all().iter().zip(found) {
        let (v, e) = match r {
            Ok(v) => (Some(v), None),
            Err(miss) => (None, Some(miss.to_string())),
        };
        match m.name() {
            None => (value, metric_error) = (v, e),
            Some(n) => {
                named.insert(n.to_string(), MetricReading { value: v, error: e });
            }
        }
    }
    RunRecord {
        rep,
        wall_s: o.wall.as_secs_f64(),
        user_s: o.user.as_secs_f64(),
        sys_s: o.sys.as_secs_f64(),
        max_rss_kib: o.max_rss_kib,
        exit_code: o.exit.code,
        signal: o.exit.signal,
        timed_out: o.timed_out,
        interrupted: o.interrupted,
        ok,
        metric: value,
        metric_error,
        metrics: named,
        numa_pages: (o.numa_samples > 0 && !o.numa.is_empty())
            .then(|| numa_maps::numa_pages(&o.numa, o.numa_samples, o.numa_processes)),
        numastat_delta,
        stderr_tail: (!ok).then(|| o.stderr.tail_lines(STDERR_TAIL_LINES)),
        counters: o.counters.clone(),
        containment: Some(o.containment.describe()),
        output: (keep_output_bytes > 0).then(|| results::exec::KeptOutput {
            stdout_tail: output_tail(&o.stdout.text, keep_output_bytes),
            stdout_bytes: o.stdout.total_bytes,
            stderr_tail: output_tail(&o.stderr.text, keep_output_bytes),
            stderr_bytes: o.stderr.total_bytes,
        }),
        power: None,
    }
}

/// What a run's metrics say went wrong, one line (`None`: every metric
/// has its value).
fn metric_errors(r: &RunRecord) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(e) = &r.metric_error {
        parts.push(e.clone());
    }
    for (n, m) in &r.metrics {
        if let Some(e) = &m.error {
            parts.push(format!("{n}: {e}"));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// One line saying how a run failed, for warnings.
pub fn failure_text(r: &RunRecord) -> String {
    if r.timed_out {
        "timed out (process group killed)".into()
    } else if r.interrupted {
        "interrupted".into()
    } else if let Some(sig) = r.signal {
        format!("killed by signal {sig}")
    } else {
        format!("exited with status {}", r.exit_code.unwrap_or(-1))
    }
}

fn new_result(policy: &PlacementPolicy, placement: Option<&ChildPlacement>) -> PolicyResult {
    let mem = placement.map(|p| &p.policy).filter(|m| **m != place::MemPolicy::Default);
    PolicyResult {
        policy: policy.to_string(),
        placement: policy::describe(placement),
        cpus: placement.and_then(|p| p.cpus.clone()),
        mem_policy: mem.map(|m| m.name().to_string()),
        mem_nodes: mem.map(|m| m.nodes()),
        runs: Vec::new(),
        ok_runs: 0,
        stats: PolicyStats::default(),
        verdict: PolicyVerdict::NoData,
        counters: None,
        metric_higher_is_better: None,
        metrics: BTreeMap::new(),
    }
}

/// Fills the statistics of `r`'s successful runs: wall time, the unnamed
/// metric (when `on_metric`), every named metric already listed in
/// `r.metrics`, and the noise of the quantity `compared`.
fn summarise(r: &mut PolicyResult, on_metric: bool, compared: Quantity) {
    r.ok_runs = r.runs.iter().filter(|x| x.ok).count();
    r.stats.wall_summary = Summary::of(&r.values(false));
    r.stats.median_wall_s = r.stats.wall_summary.map(|s| s.median);
    if on_metric {
        r.stats.metric_summary = Summary::of(&r.values(true));
        r.stats.median_metric = r.stats.metric_summary.map(|s| s.median);
    }
    let names: Vec<String> = r.metrics.keys().cloned().collect();
    for n in names {
        let summary = Summary::of(&r.metric_values(Some(&n)));
        if let Some(m) = r.metrics.get_mut(&n) {
            m.summary = summary;
            m.median = summary.map(|s| s.median);
            m.noise_pct = summary.map(|s| s.robust_cv_pct());
        }
    }
    r.stats.noise_pct = compared.summary(r).map(|s| s.robust_cv_pct());
    let counted: Vec<&results::counters::Counters> =
        r.runs.iter().filter(|x| x.ok).filter_map(|x| x.counters.as_ref()).collect();
    r.counters = results::counters::Counters::median(&counted);
}

/// The verdict of a policy against the baseline: [`stats::compare_samples`]
/// (undecided with fewer than [`MIN_RUNS_FOR_VERDICT`] runs on either side).
fn verdict_of(
    base: &Summary,
    new: &Summary,
    higher_is_better: bool,
    floor_pct: f64,
) -> PolicyVerdict {
    match stats::compare_samples(base, new, higher_is_better, floor_pct) {
        None => PolicyVerdict::Undecided,
        Some(Verdict::Better) => PolicyVerdict::Better,
        Some(Verdict::Worse) => PolicyVerdict::Worse,
        Some(Verdict::WithinNoise) => PolicyVerdict::WithinNoise,
    }
}

/// The policies that got no verdict on `q`, and how many runs would give
/// one; `None` when every policy with data was judged.
fn undecided_of(
    policies: &[PolicyResult],
    verdicts: &[PolicyVerdict],
    q: Quantity,
) -> Option<Undecided> {
    if !verdicts.contains(&PolicyVerdict::Undecided) {
        return None;
    }
    let n = |p: &PolicyResult| q.summary(p).map_or(0, |s| s.n);
    let short = policies
        .iter()
        .zip(verdicts)
        .filter(|(p, v)| {
            **v == PolicyVerdict::Undecided
                || (**v == PolicyVerdict::Baseline && n(p) < MIN_RUNS_FOR_VERDICT)
        })
        .map(|(p, _)| (p.policy.clone(), n(p)))
        .collect();
    Some(Undecided { needed: MIN_RUNS_FOR_VERDICT, short })
}

/// The policies that got no verdict on the quantity compared, and how
/// many runs would give one; `None` when every policy with data was judged.
pub fn undecided(report: &ExecReport) -> Option<Undecided> {
    let verdicts: Vec<PolicyVerdict> = report.policies.iter().map(|p| p.verdict).collect();
    undecided_of(&report.policies, &verdicts, report.compared())
}

/// The verdicts of one quantity across the policies.
struct Decision {
    baseline: Option<String>,
    changes: Vec<Option<f64>>,
    verdicts: Vec<PolicyVerdict>,
    best: Option<String>,
    tied: Vec<String>,
    reason: BestReason,
}

/// Judges quantity `q` of every policy against the baseline (`default`
/// when measured, else the first policy) and names the best one.
fn decide(policies: &[PolicyResult], q: Quantity, hib: bool, floor_pct: f64) -> Decision {
    let base_idx = policies.iter().position(|p| p.policy == "default").unwrap_or(0);
    let baseline = policies.get(base_idx).map(|p| p.policy.clone());
    let mut d = Decision {
        baseline: baseline.clone(),
        changes: vec![None; policies.len()],
        verdicts: vec![PolicyVerdict::NoData; policies.len()],
        best: None,
        tied: Vec::new(),
        reason: BestReason::NothingMeasured,
    };
    let Some(base) = policies.get(base_idx).and_then(|p| q.summary(p)) else {
        if let Some(b) = &baseline {
            d.reason = BestReason::BaselineUnmeasured { baseline: b.clone(), on: q.to_compared() };
        }
        return d;
    };
    for (i, p) in policies.iter().enumerate() {
        let s = q.summary(p);
        d.changes[i] = s.map(|s| stats::change_pct(base.median, s.median));
        d.verdicts[i] = if i == base_idx {
            PolicyVerdict::Baseline
        } else {
            s.map_or(PolicyVerdict::NoData, |s| verdict_of(&base, &s, hib, floor_pct))
        };
    }
    let better: Vec<usize> =
        (0..policies.len()).filter(|&i| d.verdicts[i] == PolicyVerdict::Better).collect();
    let key = |i: usize| q.summary(&policies[i]).map_or(f64::NAN, |s| s.median);
    let best = better.iter().copied().max_by(|&a, &b| {
        let (x, y) = (key(a), key(b));
        if hib {
            x.total_cmp(&y)
        } else {
            y.total_cmp(&x)
        }
    });
    let baseline = baseline.unwrap_or_default();
    let undecided = undecided_of(policies, &d.verdicts, q);
    match best {
        None => {
            d.reason = match undecided {
                Some(u) => BestReason::Undecided(u),
                None => BestReason::NoneBetter { baseline },
            };
        }
        Some(b) => {
            let bs = q.summary(&policies[b]).expect("a better policy has a summary");
            let tied: Vec<String> = better
                .iter()
                .copied()
                .filter(|&o| o != b)
                .filter(|&o| {
                    q.summary(&policies[o]).is_some_and(|os| {
                        verdict_of(&bs, &os, hib, floor_pct) == PolicyVerdict::WithinNoise
                    })
                })
                .map(|o| policies[o].policy.clone())
                .collect();
            d.reason = BestReason::Best {
                best: policies[b].policy.clone(),
                change_pct: d.changes[b].unwrap_or(0.0),
                baseline,
                tied: tied.clone(),
                undecided,
            };
            d.best = Some(policies[b].policy.clone());
            d.tied = tied;
        }
    }
    d
}

/// Fills `change_pct`, `verdict` and the best policy of `report` (on the
/// quantity it is compared on) and why, and each named metric's own; the
/// `best_reason` words are the front end's.
pub fn judge(report: &mut ExecReport) {
    let q = report.compared();
    let d = decide(&report.policies, q, report.direction.higher_is_better(), report.floor_pct);
    for (i, p) in report.policies.iter_mut().enumerate() {
        p.stats.change_pct = d.changes[i];
        p.verdict = d.verdicts[i];
    }
    report.baseline = d.baseline;
    report.best_policy = d.best;
    report.tied_with_best = d.tied;
    report.why_best = d.reason;
    for j in 0..report.named_metrics.len() {
        let name = report.named_metrics[j].name.clone();
        let hib = report.named_metrics[j].direction.higher_is_better();
        let d = decide(&report.policies, Quantity::Named(&name), hib, report.floor_pct);
        for (i, p) in report.policies.iter_mut().enumerate() {
            if let Some(m) = p.metrics.get_mut(&name) {
                m.change_pct = d.changes[i];
                m.verdict = d.verdicts[i];
            }
        }
        let n = &mut report.named_metrics[j];
        n.best_policy = d.best;
        n.tied_with_best = d.tied;
        n.why_best = d.reason;
    }
}

/// A warning when measured runs were too short to compare placements
/// (under [`SHORT_RUN_S`]): process start-up and the clock dominate them.
pub fn short_runs_warning(report: &ExecReport) -> Option<String> {
    let runs: Vec<f64> =
        report.policies.iter().flat_map(|p| &p.runs).filter(|r| r.ok).map(|r| r.wall_s).collect();
    let short: Vec<f64> = runs.iter().copied().filter(|&w| w < SHORT_RUN_S).collect();
    let shortest = short.iter().copied().reduce(f64::min)?;
    Some(format!(
        "{} of {} measured runs took under {:.0} ms (shortest {:.2} ms): too short to compare \
         placements (start-up and timer noise dominate); give the command more work",
        short.len(),
        runs.len(),
        SHORT_RUN_S * 1e3,
        shortest * 1e3
    ))
}

/// The order of the runs: round by round, every policy once per round
/// (`warmup` unrecorded rounds, then `repeat` measured ones), so that
/// slow drift of the machine falls on every policy alike. Each item is
/// `(policy index, round, warmup)`.
pub fn schedule(policies: usize, warmup: u32, repeat: u32) -> Vec<(usize, u32, bool)> {
    (0..warmup + repeat)
        .flat_map(|round| (0..policies).map(move |p| (p, round, round < warmup)))
        .collect()
}

/// Runs every policy `repeat` times (after `warmup` unrecorded runs),
/// alternated: the first run of every policy, then the second of every
/// policy, and so on ([`schedule`]). Reports progress, warnings for failed
/// runs and one `Event::Record(Record::Exec(..))` per policy once the
/// matrix ends. Stops early, keeping what was measured, on `stop` or (with
/// `fail_fast`) at the first failed run, saying why in the report's
/// `stop`. What the end has to tell is the caller's to tell, in this
/// order: the report's `unmatched` metrics, [`undecided`] and
/// [`short_runs_warning`]; and the words of its reasons (`best_reason`).
pub fn run_matrix(
    plan: &Plan,
    opts: &Options,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<ExecReport, ExecError> {
    let metrics = &opts.metrics;
    let on_metric = metrics.unnamed().is_some();
    let (mut report, compared) = empty_report(plan, opts);
    let phase = "exec".to_string();
    let per_policy = (opts.warmup + opts.repeat) as u64;
    obs.event(Event::PhaseStart {
        phase: phase.clone(),
        total: per_policy * plan.policies.len() as u64,
    });
    let run_opts = child::RunOptions {
        timeout: opts.timeout,
        stop,
        sink: opts.sink.clone(),
        sample: true,
        counters: opts.counters,
        root: &opts.root,
    };
    let mut results: Vec<PolicyResult> = plan
        .policies
        .iter()
        .map(|(policy, placement)| new_policy_result(policy, placement.as_ref(), metrics))
        .collect();
    // energy and frequency of each run, over every online CPU (a policy
    // may use any of them)
    let meter = counters::power::Meter::open(&opts.root, &online_cpus(&opts.root));
    let mut started = vec![false; results.len()];
    let mut last_stdout_tail: Option<Vec<String>> = None;
    let order = schedule(plan.policies.len(), opts.warmup, opts.repeat);
    for (done, (pi, round, warm)) in order.into_iter().enumerate() {
        let (policy, placement) = &plan.policies[pi];
        if stop.is_stopped() {
            report.stop = Some(Stop::Interrupted);
            break;
        }
        started[pi] = true;
        let what = if warm {
            format!("{policy} warmup {}/{}", round + 1, opts.warmup)
        } else {
            format!("{policy} run {}/{}", round + 1 - opts.warmup, opts.repeat)
        };
        obs.event(Event::Progress { phase: phase.clone(), done: done as u64, what: what.clone() });
        let (outcome, rec) = measure_run(plan, placement.as_ref(), opts, &run_opts, &meter, round)?;
        last_stdout_tail = Some(outcome.stdout.tail_lines(8));
        warn_of_run(obs, &what, &outcome, &rec);
        if rec.interrupted {
            report.stop = Some(Stop::Interrupted);
            if !warm {
                results[pi].runs.push(rec);
            }
            break;
        }
        let failed = !rec.ok;
        if !warm {
            report.failed_runs += failed as usize;
            results[pi].runs.push(rec);
        }
        if failed && opts.fail_fast {
            report.stop = Some(Stop::FailFast { what });
            break;
        }
    }
    for (mut result, _) in results.into_iter().zip(&started).filter(|(_, s)| **s) {
        summarise(&mut result, on_metric, compared);
        obs.event(Event::Record(result.clone().into()));
        report.policies.push(result);
    }
    obs.event(Event::PhaseEnd { phase });
    report.unmatched = unmatched_metrics(metrics, &report, last_stdout_tail);
    judge(&mut report);
    Ok(report)
}

/// The matrix's report before any run: what is run and compared on
/// (the unnamed metric, else the first named one, else wall time), and
/// in which direction; and that quantity.
fn empty_report<'a>(plan: &Plan, opts: &'a Options) -> (ExecReport, Quantity<'a>) {
    let metrics = &opts.metrics;
    let first_named = metrics.named_metrics().next();
    let (compared, direction) = match (metrics.unnamed(), first_named) {
        (Some(m), _) => (Quantity::Metric, m.direction),
        (None, Some(m)) => (Quantity::Named(m.name().unwrap_or("")), m.direction),
        (None, None) => (Quantity::Wall, Direction::LowerIsBetter),
    };
    let report = ExecReport {
        command: plan.command.display(),
        repeat: opts.repeat,
        warmup: opts.warmup,
        metric: metrics.unnamed().map(|m| m.pattern().to_string()),
        compared_on: compared.id(),
        direction,
        metric_file: metrics.file.as_ref().map(|f| f.display().to_string()),
        named_metrics: metrics
            .named_metrics()
            .map(|m| NamedJudgement {
                name: m.name().unwrap_or("").to_string(),
                pattern: m.pattern().to_string(),
                direction: m.direction,
                best_policy: None,
                best_reason: String::new(),
                tied_with_best: Vec::new(),
                why_best: BestReason::NothingMeasured,
            })
            .collect(),
        baseline: None,
        floor_pct: opts.floor_pct,
        policies: Vec::new(),
        best_policy: None,
        best_reason: String::new(),
        tied_with_best: Vec::new(),
        stopped: None,
        failed_runs: 0,
        stop: None,
        unmatched: Vec::new(),
        why_best: BestReason::NothingMeasured,
    };
    (report, compared)
}

/// A policy's result before its runs, with a place for each named metric.
fn new_policy_result(
    policy: &PlacementPolicy,
    placement: Option<&ChildPlacement>,
    metrics: &MetricSet,
) -> PolicyResult {
    let mut r = new_result(policy, placement);
    r.metric_higher_is_better = metrics.unnamed().map(|m| m.direction.higher_is_better());
    for m in metrics.named_metrics() {
        r.metrics.insert(
            m.name().unwrap_or("").to_string(),
            NamedMetric {
                higher_is_better: m.direction.higher_is_better(),
                median: None,
                summary: None,
                noise_pct: None,
                change_pct: None,
                verdict: PolicyVerdict::NoData,
            },
        );
    }
    r
}

/// The online CPUs under `root` (none when unreadable).
fn online_cpus(root: &SysRoot) -> Vec<u32> {
    root.read_optional("sys/devices/system/cpu/online")
        .ok()
        .flatten()
        .and_then(|s| s.trim().parse::<topo::CpuSet>().ok())
        .map(|c| c.iter().collect())
        .unwrap_or_default()
}

/// One run of the command under `placement` (round `round` of the
/// schedule): its outcome and its record, with the numastat delta, the
/// metric file's figure and the energy over the run.
fn measure_run(
    plan: &Plan,
    placement: Option<&ChildPlacement>,
    opts: &Options,
    run_opts: &child::RunOptions<'_>,
    meter: &counters::power::Meter,
    round: u32,
) -> Result<(child::RunOutcome, RunRecord), ExecError> {
    let metrics = &opts.metrics;
    let stamp = metrics.file.as_deref().and_then(metric::FileStamp::take);
    let before = numastat::snapshot(&opts.root);
    let start = SystemTime::now();
    let power_start = meter.start();
    let outcome = child::run_once(&plan.command, placement, run_opts)?;
    let power = meter.finish(&power_start);
    let after = numastat::snapshot(&opts.root);
    let file =
        metrics.file.as_deref().map(|path| metric::read_metric_file(path, stamp.as_ref(), start));
    let rec = record(
        round.saturating_sub(opts.warmup) + 1,
        &outcome,
        metrics,
        file.as_ref(),
        numastat::delta(&before, &after),
        opts.keep_output_bytes,
    );
    let rec = RunRecord { power: Some(power), ..rec };
    Ok((outcome, rec))
}

/// The warnings of one run (`what`): processes it left running, an
/// output pipe left open, a failure with the end of its stderr, or a
/// metric it did not give (an interrupted run gets only the first two).
fn warn_of_run(obs: &dyn Observer, what: &str, outcome: &child::RunOutcome, rec: &RunRecord) {
    if outcome.leftovers_killed > 0 {
        obs.event(Event::Warning(format!(
            "{what}: the command left {} process(es) running (in its group, or escaped from it with setsid); they were terminated",
            outcome.leftovers_killed
        )));
    }
    if outcome.output_abandoned {
        obs.event(Event::Warning(format!(
            "{what}: an output pipe stayed open after the command exited (a process outside its group holds it); output after that was not read"
        )));
    }
    if rec.interrupted {
        return;
    }
    if !rec.ok {
        let mut msg = format!("{what}: {}", failure_text(rec));
        let tail = rec.stderr_tail.clone().unwrap_or_default();
        if !tail.is_empty() {
            msg.push_str("; stderr ends with:");
            for l in &tail {
                msg.push_str("\n    ");
                msg.push_str(l);
            }
        }
        obs.event(Event::Warning(msg));
    } else if let Some(err) = metric_errors(rec) {
        obs.event(Event::Warning(format!("{what}: metric {err}")));
    }
}

/// Each metric that no successful run gave (none when no run succeeded),
/// with where it was searched: the metric file, or the output, with the
/// end of the last run's stdout.
fn unmatched_metrics(
    metrics: &MetricSet,
    report: &ExecReport,
    last_stdout_tail: Option<Vec<String>>,
) -> Vec<UnmatchedMetric> {
    let runs = || report.policies.iter().flat_map(|p| &p.runs).filter(|r| r.ok);
    let mut out = Vec::new();
    for m in metrics.all() {
        let value = |r: &RunRecord| match m.name() {
            None => r.metric,
            Some(n) => r.metrics.get(n).and_then(|x| x.value),
        };
        if runs().next().is_none() || runs().any(|r| value(r).is_some()) {
            continue;
        }
        out.push(UnmatchedMetric {
            name: m.name().map(str::to_string),
            pattern: m.pattern().to_string(),
            searched: match &metrics.file {
                Some(f) => Searched::File(f.clone()),
                None => Searched::Output { last_stdout_tail: last_stdout_tail.clone() },
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kept tail is the last bytes, cut to a character, without
    /// control characters, never more than the bound.
    #[test]
    fn output_tail_is_the_bounded_end_without_control_characters() {
        assert_eq!(output_tail("abcdef", 3), "def");
        assert_eq!(output_tail("ab", 10), "ab");
        assert_eq!(output_tail("x\u{1b}[31mred\r\nok\tz", 100), "x[31mred\nok\tz");
        // 'é' is two bytes: a cut inside it moves forward
        assert_eq!(output_tail("aé", 1), "");
        assert_eq!(output_tail("aéb", 3), "éb");
        let big = "y".repeat(3 * MAX_KEEP_OUTPUT_BYTES);
        assert_eq!(output_tail(&big, usize::MAX).len(), MAX_KEEP_OUTPUT_BYTES);
    }

    fn run(rep: u32, wall: f64, metric: Option<f64>, ok: bool) -> RunRecord {
        RunRecord {
            rep,
            wall_s: wall,
            user_s: 0.0,
            sys_s: 0.0,
            max_rss_kib: 0,
            exit_code: Some(if ok { 0 } else { 1 }),
            signal: None,
            timed_out: false,
            interrupted: false,
            ok,
            metric,
            metric_error: None,
            numa_pages: None,
            numastat_delta: Vec::new(),
            stderr_tail: None,
            counters: None,
            containment: None,
            metrics: BTreeMap::new(),
            output: None,
            power: None,
        }
    }

    fn policy(name: &str, metrics: &[f64]) -> PolicyResult {
        let mut p = new_result(&name.parse().unwrap(), None);
        p.runs = metrics
            .iter()
            .enumerate()
            .map(|(i, &m)| run(i as u32 + 1, 1.0, Some(m), true))
            .collect();
        summarise(&mut p, true, Quantity::Metric);
        p
    }

    fn report(policies: Vec<PolicyResult>, direction: Direction) -> ExecReport {
        let mut r = ExecReport {
            command: vec!["x".into()],
            repeat: 3,
            warmup: 0,
            metric: Some("(x)".into()),
            compared_on: "metric".into(),
            direction,
            metric_file: None,
            named_metrics: Vec::new(),
            baseline: None,
            floor_pct: results::stats::EXEC_FLOOR_PCT,
            policies,
            best_policy: None,
            best_reason: String::new(),
            tied_with_best: Vec::new(),
            stopped: None,
            failed_runs: 0,
            stop: None,
            unmatched: Vec::new(),
            why_best: BestReason::NothingMeasured,
        };
        judge(&mut r);
        r
    }

    #[test]
    fn best_policy_beats_the_baseline_beyond_noise() {
        let r = report(
            vec![
                policy("default", &[100.0, 101.0, 99.0]),
                policy("local:0", &[120.0, 121.0, 119.0]),
                policy("interleave", &[110.0, 111.0, 109.0]),
                policy("remote:0/1", &[80.0, 81.0, 79.0]),
            ],
            Direction::HigherIsBetter,
        );
        assert_eq!(r.baseline.as_deref(), Some("default"));
        assert_eq!(r.best_policy.as_deref(), Some("local:0"));
        let v: Vec<_> = r.policies.iter().map(|p| p.verdict).collect();
        assert_eq!(
            v,
            [
                PolicyVerdict::Baseline,
                PolicyVerdict::Better,
                PolicyVerdict::Better,
                PolicyVerdict::Worse
            ]
        );
        assert!((r.policies[1].stats.change_pct.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(
            r.why_best,
            BestReason::Best {
                best: "local:0".into(),
                change_pct: r.policies[1].stats.change_pct.unwrap(),
                baseline: "default".into(),
                tied: Vec::new(),
                undecided: None,
            }
        );
        assert!(r.tied_with_best.is_empty());
    }

    #[test]
    fn noise_swallows_a_change_and_no_policy_is_named() {
        // 10% better median, but runs overlap the baseline's range
        let r = report(
            vec![
                policy("default", &[100.0, 130.0, 80.0]),
                policy("local:0", &[110.0, 125.0, 95.0]),
            ],
            Direction::HigherIsBetter,
        );
        assert_eq!(r.policies[1].verdict, PolicyVerdict::WithinNoise);
        assert_eq!(r.best_policy, None);
        assert_eq!(r.why_best, BestReason::NoneBetter { baseline: "default".into() });
    }

    #[test]
    fn lower_is_better_and_ties() {
        let r = report(
            vec![
                policy("default", &[10.0, 10.1, 9.9]),
                policy("local:0", &[8.0, 8.1, 7.9]),
                policy("local:1", &[8.05, 8.15, 7.95]),
            ],
            Direction::LowerIsBetter,
        );
        assert_eq!(r.best_policy.as_deref(), Some("local:0"));
        assert_eq!(r.tied_with_best, vec!["local:1".to_string()]);
        assert!(r.policies[1].stats.change_pct.unwrap() < 0.0);
    }

    #[test]
    fn baseline_is_first_policy_without_default_and_failed_baseline_gives_no_best() {
        let r = report(
            vec![
                policy("local:0", &[100.0, 100.0, 100.0]),
                policy("interleave", &[150.0, 151.0, 152.0]),
            ],
            Direction::HigherIsBetter,
        );
        assert_eq!(r.baseline.as_deref(), Some("local:0"));
        assert_eq!(r.best_policy.as_deref(), Some("interleave"));

        let mut failed = policy("default", &[]);
        failed.runs = vec![run(1, 1.0, None, false)];
        summarise(&mut failed, true, Quantity::Metric);
        let r = report(vec![failed, policy("local:0", &[1.0])], Direction::HigherIsBetter);
        assert_eq!(r.best_policy, None);
        assert_eq!(
            r.why_best,
            BestReason::BaselineUnmeasured { baseline: "default".into(), on: Compared::Metric }
        );
        assert!(r.policies.iter().all(|p| p.verdict == PolicyVerdict::NoData));
    }

    #[test]
    fn failed_runs_and_missing_metrics_are_left_out_of_the_statistics() {
        let mut p = policy("default", &[]);
        p.runs = vec![
            run(1, 1.0, Some(50.0), true),
            run(2, 9.0, Some(500.0), false),
            run(3, 2.0, None, true),
        ];
        summarise(&mut p, true, Quantity::Metric);
        assert_eq!(p.ok_runs, 2);
        assert_eq!(p.stats.median_metric, Some(50.0));
        assert_eq!(p.stats.metric_summary.unwrap().n, 1);
        assert_eq!(p.stats.median_wall_s, Some(1.5));
    }

    #[test]
    fn fewer_than_three_runs_give_no_verdict_and_say_how_many_are_needed() {
        // 2 runs each, 20% apart with tight ranges: the old rule called it better
        let r = report(
            vec![
                policy("default", &[100.0, 101.0]),
                policy("local:0", &[120.0, 121.0]),
                policy("interleave", &[90.0]),
            ],
            Direction::HigherIsBetter,
        );
        let v: Vec<_> = r.policies.iter().map(|p| p.verdict).collect();
        assert_eq!(
            v,
            [PolicyVerdict::Baseline, PolicyVerdict::Undecided, PolicyVerdict::Undecided]
        );
        assert_eq!(r.best_policy, None);
        assert!((r.policies[1].stats.change_pct.unwrap() - 19.9).abs() < 0.1, "change still shown");
        let short = |s: &[(&str, usize)]| Undecided {
            needed: 3,
            short: s.iter().map(|&(p, n)| (p.to_string(), n)).collect(),
        };
        let u = short(&[("default", 2), ("local:0", 2), ("interleave", 1)]);
        assert_eq!(r.why_best, BestReason::Undecided(u.clone()));
        assert_eq!(undecided(&r), Some(u));
        assert_eq!(serde_json::to_value(PolicyVerdict::Undecided).unwrap(), "undecided");

        // a baseline with 3 runs and one policy with 2: only that one is undecided
        let r = report(
            vec![
                policy("default", &[100.0, 101.0, 99.0]),
                policy("local:0", &[120.0, 121.0, 119.0]),
                policy("interleave", &[130.0, 131.0]),
            ],
            Direction::HigherIsBetter,
        );
        assert_eq!(r.best_policy.as_deref(), Some("local:0"));
        assert_eq!(r.policies[2].verdict, PolicyVerdict::Undecided);
        let BestReason::Best { undecided: u, .. } = &r.why_best else { panic!("{:?}", r.why_best) };
        assert_eq!(u.as_ref(), Some(&short(&[("interleave", 2)])));
        // with enough runs everywhere there is nothing to say
        let r = report(
            vec![policy("default", &[1.0, 1.0, 1.0]), policy("local:0", &[1.0, 1.0, 1.0])],
            Direction::HigherIsBetter,
        );
        assert_eq!(undecided(&r), None);
    }

    #[test]
    fn runs_under_five_ms_are_warned_about() {
        let mut r = report(
            vec![policy("default", &[1.0, 1.0, 1.0]), policy("local:0", &[1.0, 1.0, 1.0])],
            Direction::HigherIsBetter,
        );
        assert_eq!(short_runs_warning(&r), None, "1 s runs are long enough");
        r.policies[1].runs[0].wall_s = 0.003;
        r.policies[1].runs[2].wall_s = 0.0049;
        let w = short_runs_warning(&r).unwrap();
        assert!(w.starts_with("2 of 6 measured runs took under 5 ms (shortest 3.00 ms)"), "{w}");
        // a failed run is not measured: it does not count
        r.policies[1].runs[0].ok = false;
        let w = short_runs_warning(&r).unwrap();
        assert!(w.starts_with("1 of 5 measured runs"), "{w}");
        r.policies[1].runs[2].wall_s = SHORT_RUN_S;
        assert_eq!(short_runs_warning(&r), None, "exactly 5 ms is not under 5 ms");
    }

    #[test]
    fn repeats_alternate_across_policies_round_by_round() {
        // 3 policies, 1 warmup, 2 measured: A B C (warm), A B C, A B C; never A A B B
        let order: Vec<(usize, u32, bool)> = schedule(3, 1, 2);
        assert_eq!(
            order,
            [
                (0, 0, true),
                (1, 0, true),
                (2, 0, true),
                (0, 1, false),
                (1, 1, false),
                (2, 1, false),
                (0, 2, false),
                (1, 2, false),
                (2, 2, false),
            ]
        );
        let policies: Vec<usize> = schedule(2, 0, 3).iter().map(|x| x.0).collect();
        assert_eq!(policies, [0, 1, 0, 1, 0, 1]);
    }

    /// A policy whose runs carry named metrics `int` and `fp`.
    fn named(name: &str, int: &[f64], fp: &[f64], fp_higher: bool) -> PolicyResult {
        let mut p = new_result(&name.parse().unwrap(), None);
        for (n, hib) in [("int", true), ("fp", fp_higher)] {
            p.metrics.insert(
                n.into(),
                NamedMetric {
                    higher_is_better: hib,
                    median: None,
                    summary: None,
                    noise_pct: None,
                    change_pct: None,
                    verdict: PolicyVerdict::NoData,
                },
            );
        }
        p.runs = int
            .iter()
            .zip(fp)
            .enumerate()
            .map(|(i, (&a, &b))| {
                let mut r = run(i as u32 + 1, 1.0, None, true);
                let v = |x: f64| MetricReading { value: Some(x), error: None };
                r.metrics.insert("int".into(), v(a));
                r.metrics.insert("fp".into(), v(b));
                r
            })
            .collect();
        summarise(&mut p, false, Quantity::Named("int"));
        p
    }

    #[test]
    fn each_named_metric_is_judged_with_its_own_direction() {
        let judgement = |n: &str, hib: bool| NamedJudgement {
            name: n.into(),
            pattern: "(x)".into(),
            direction: if hib { Direction::HigherIsBetter } else { Direction::LowerIsBetter },
            best_policy: None,
            best_reason: String::new(),
            tied_with_best: Vec::new(),
            why_best: BestReason::NothingMeasured,
        };
        let mut r = report(Vec::new(), Direction::HigherIsBetter);
        r.compared_on = "metric:int".into();
        r.metric = None;
        r.named_metrics = vec![judgement("int", true), judgement("fp", false)];
        // int: +30% under local:0; fp (lower is better): 20% lower there
        r.policies = vec![
            named("default", &[30.0, 30.3, 29.7], &[10.0, 10.1, 9.9], false),
            named("local:0", &[39.0, 39.4, 38.6], &[8.0, 8.1, 7.9], false),
        ];
        judge(&mut r);
        assert_eq!(r.compared(), Quantity::Named("int"));
        assert_eq!(r.policies[1].verdict, PolicyVerdict::Better, "compared on int");
        assert!((r.policies[1].stats.change_pct.unwrap() - 30.0).abs() < 0.01);
        let fp = &r.policies[1].metrics["fp"];
        assert_eq!(fp.verdict, PolicyVerdict::Better, "lower fp is better for fp");
        assert!((fp.change_pct.unwrap() + 20.0).abs() < 0.01);
        assert_eq!(r.named_metrics[0].best_policy.as_deref(), Some("local:0"));
        assert_eq!(r.named_metrics[1].best_policy.as_deref(), Some("local:0"));
        // the same fp values, higher is better: worse, and no best by fp
        r.named_metrics[1] = judgement("fp", true);
        judge(&mut r);
        assert_eq!(r.policies[1].metrics["fp"].verdict, PolicyVerdict::Worse);
        assert_eq!(r.named_metrics[1].best_policy, None);
        assert_eq!(
            r.named_metrics[1].why_best,
            BestReason::NoneBetter { baseline: "default".into() }
        );
    }
}
