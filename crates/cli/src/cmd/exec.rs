//! `numaprobe exec`: run a program under a matrix of NUMA placements,
//! compare them, and save each policy's result as it is measured.
//!
//! A hidden `--touch SIZE` turns the command into a tiny memory-touching
//! workload for checking placements where nothing else is installed (the
//! busybox guest).

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use events::{Event, Observer};
use exec::{
    ExecError, ExecReport, MetricSet, OutputSink, Plan, ResolvedCommand, Scope, Stop, Stream,
};
use topo::SysRoot;

use crate::invocation::Invocation;
use crate::output;
use crate::progress::Bars;
use crate::record::{Outcome, Recording, Saving};
use crate::usage;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Policies: default, local:N (CPUs and memory on node N), remote:A/B (CPUs on A, \
memory on B), interleave or interleave:LIST, weighted or weighted:LIST (weighted interleave, \
Linux 6.9+), cpus-only:N, all (see docs/exec.md).\n\nRepeats alternate across policies (run 1 of \
every policy, then run 2...); each is a whole run of the program.\n\nExamples:\n  numaprobe exec \
--policies all --repeat 3 --metric '\\(([0-9.]+) MiB/sec\\)' -- sysbench memory run --time=2\n  \
numaprobe exec --policies default --repeat 5 --label 'SMT on' --metric 'int=int: ([0-9.]+)' \
--metric 'fp=fp: ([0-9.]+)' -- ./bench\n  numaprobe exec -p default --metric-file result.json \
--metric 'time=\"seconds\": ([0-9.]+)' --metric-lower-is-better time -- ./bench --out result.json"
)]
pub struct Args {
    /// Placements, comma-separated (may be repeated).
    #[arg(long, short = 'p', value_name = "POLICIES", default_value = "all")]
    pub policies: Vec<String>,
    /// Measured runs per policy.
    #[arg(long, short = 'r', value_name = "N", default_value_t = 3,
          value_parser = crate::grammar::exec_repeat)]
    pub repeat: u32,
    /// Unrecorded runs per policy before the measured ones.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::grammar::warmup)]
    pub warmup: u32,
    /// Regular expression whose first capture group is the figure of merit,
    /// searched in stdout, then stderr (last match wins). NAME=REGEX names
    /// a metric; repeat the flag for several (e.g. --metric 'int=int: ([0-9.]+)'
    /// --metric 'fp=fp: ([0-9.]+)'); a bare REGEX is the unnamed metric.
    #[arg(long, short = 'm', value_name = "[NAME=]REGEX")]
    pub metric: Vec<String>,
    /// Search every --metric in this file, read after each run (the program
    /// writes it: a result CSV, a JSON report), instead of the output. A
    /// file the run did not write gives no score.
    #[arg(long, value_name = "PATH")]
    pub metric_file: Option<PathBuf>,
    /// The unnamed metric: a larger value is better (the default), recorded
    /// with the run so that `compare` judges the metric the same way.
    #[arg(long, conflicts_with = "lower_is_better")]
    pub higher_is_better: bool,
    /// The unnamed metric: a smaller value is better (e.g. a run time the
    /// program prints), recorded with the run for `compare`.
    #[arg(long)]
    pub lower_is_better: bool,
    /// A smaller value of metric NAME is better (repeatable); without NAME,
    /// the unnamed metric's (as --lower-is-better).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "",
          action = clap::ArgAction::Append)]
    pub metric_lower_is_better: Vec<String>,
    /// A larger value of metric NAME is better (the default; repeatable);
    /// without NAME, the unnamed metric's (as --higher-is-better).
    #[arg(long, value_name = "NAME", num_args = 0..=1, default_missing_value = "",
          action = clap::ArgAction::Append)]
    pub metric_higher_is_better: Vec<String>,
    /// Kill the command's process group after this many seconds
    /// (SIGTERM, then SIGKILL 1 s later).
    #[arg(long, value_name = "SECONDS", value_parser = crate::grammar::timeout)]
    pub timeout: Option<Duration>,
    /// Stop the matrix at the first failed run.
    #[arg(long)]
    pub fail_fast: bool,
    /// Also copy the command's stdout and stderr to numaprobe's stderr as
    /// they arrive (output is always captured).
    #[arg(long)]
    pub show_output: bool,
    /// KiB of the end of each run's stdout and of its stderr stored with
    /// the run and shown in the report's appendix (0 to 1024; 0 keeps
    /// none). Output past that is counted, never stored whole.
    #[arg(long, value_name = "KIB", default_value_t = exec::DEFAULT_KEEP_OUTPUT_BYTES >> 10,
          value_parser = keep_output_kib)]
    pub keep_output: usize,
    /// Do not save the results into the results database.
    #[arg(long, conflicts_with = "label")]
    pub no_save: bool,
    /// A name for the configuration measured, saved with the run (e.g.
    /// "SMT on, boost off"): `compare label:TEXT` groups such runs.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    #[command(flatten)]
    pub declare: crate::declare::DeclareArgs,
    /// Count events of each run with perf_event_open (the command and its
    /// children): cycles, instructions, LLC and NUMA node loads where the
    /// PMU has them, page faults, migrations and context switches always.
    #[arg(long)]
    pub counters: bool,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
    /// Touch SIZE bytes of memory (e.g. 32M) and print where the pages
    /// are, instead of running a command (for guests).
    #[arg(long, hide = true, value_name = "SIZE", value_parser = crate::grammar::size,
          conflicts_with = "command")]
    pub touch: Option<u64>,
    /// With --touch: keep the memory this long so `exec` can sample it.
    #[arg(long, hide = true, value_name = "MS", default_value = "300",
          value_parser = crate::grammar::hold_ms)]
    pub touch_hold_ms: Duration,
    /// The command and its arguments (after --); run directly, no shell.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD",
        required_unless_present = "touch"
    )]
    pub command: Vec<OsString>,
}

fn touch(size: u64, hold: Duration) -> anyhow::Result<()> {
    // Never take the machine's memory away (an allocation past it aborts
    // the process): the memory nodes this process may use must spare it.
    let root = SysRoot::live();
    let topo = topo::Topology::discover(&root)?;
    let mut spare = 0u64;
    for node in place::Allowed::current(&root)?.memory_nodes(&topo).iter() {
        spare = spare.saturating_add(place::memory::node_memory(&root, node)?.spare_bytes);
    }
    let bytes = match usize::try_from(size) {
        Ok(b) if size <= spare => b,
        _ => usage!(
            "--touch {}: more than the memory nodes this process may use can spare ({}, keeping \
             numaprobe's reserve free on each)",
            topo::units::binary_size(size),
            topo::units::binary_size_floor(spare)
        ),
    };
    let r = exec::touch::touch(&root, bytes, hold);
    let nodes: Vec<String> =
        r.own_pages.iter().map(|(n, k)| format!("N{n}={}", k.anon_kib)).collect();
    output::emit(&format!(
        "touch: {} bytes in {:.6} s, {:.3} GB/s, checksum {}\ntouch anon KiB per node: {}",
        r.bytes,
        r.seconds,
        r.gb_per_s,
        r.checksum,
        nodes.join(" ")
    ))
}

/// Copies the command's output to stderr (`--show-output`).
struct StderrSink;

impl OutputSink for StderrSink {
    fn chunk(&self, _stream: Stream, bytes: &[u8]) {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(bytes);
        let _ = e.flush();
    }
}

/// Draws progress; warnings are printed directly when stderr is not a
/// terminal (failed runs must still be told).
struct Draw<'a> {
    bars: &'a Bars,
    quiet: bool,
}

impl Observer for Draw<'_> {
    fn event(&self, event: Event) {
        match event {
            Event::Warning(msg) if !std::io::stderr().is_terminal() => {
                output::warn(self.quiet, &msg)
            }
            e => self.bars.event(e),
        }
    }
}

/// A library error, kept whole: `main` classifies it
/// ([`ExecError::is_usage`]: exit 2 when it is the user's request); refused
/// metric flags and policies worded with the flags, a usage error.
fn to_usage(e: ExecError) -> anyhow::Error {
    let usage = |text| anyhow::Error::new(crate::error::UsageError(text));
    match e {
        ExecError::BadMetric(r) => usage(console::exec::metric_refusal(&r)),
        ExecError::BadPolicy(r) => usage(console::exec::policy_refusal(&r)),
        e => anyhow::Error::new(e),
    }
}

/// `--keep-output KIB`: a whole number of KiB, 0 to
/// [`exec::MAX_KEEP_OUTPUT_BYTES`] / 1024.
pub(crate) fn keep_output_kib(s: &str) -> Result<usize, String> {
    let max = exec::MAX_KEEP_OUTPUT_BYTES >> 10;
    match s.trim().parse::<usize>() {
        Ok(v) if v <= max => Ok(v),
        Ok(v) => Err(format!("{v} KiB is over the bound of {max} KiB per stream")),
        Err(_) => Err(format!("'{s}' is not a whole number of KiB (0 to {max})")),
    }
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    if let Some(size) = args.touch {
        return touch(size, args.touch_hold_ms);
    }
    // Check everything the user wrote before anything runs.
    let planned = plan(&args, g)?;
    let stop = crate::signal::stop_flag();
    let _lock = g.take_lock(args.wait, &stop)?;
    let rec = open_recording(&args, g, &planned);
    let bars = Bars::new(g.quiet);
    let draw = Draw { bars: &bars, quiet: g.quiet };
    let opts = exec::Options {
        repeat: args.repeat,
        warmup: args.warmup,
        metrics: planned.metrics,
        timeout: args.timeout,
        fail_fast: args.fail_fast,
        sink: args.show_output.then(|| Arc::new(StderrSink) as Arc<dyn OutputSink>),
        floor_pct: results::stats::EXEC_FLOOR_PCT,
        root: SysRoot::live(),
        counters: args.counters,
        keep_output_bytes: args.keep_output << 10,
    };
    let mut outcome =
        exec::run_matrix(&planned.plan, &opts, &Saving { rec: rec.as_ref(), next: &draw }, &stop);
    // The library says why it stopped, why a policy is the best and what
    // its end has to tell; the words are said here (the signal that
    // stopped it, Ctrl-C, SIGTERM or SIGHUP, named), in the output, the
    // `--json` document and the saved run.
    if let Ok(r) = &mut outcome {
        r.stopped = r.stop.as_ref().map(|s| console::exec::stop_reason(s, crate::signal::cause()));
        console::exec::word_reasons(r);
        for w in console::exec::end_warnings(r) {
            draw.event(Event::Warning(w));
        }
    }
    if let Some(rec) = rec {
        let end = match &outcome {
            Err(e) => Outcome::Failed(e.to_string()),
            Ok(r) => stored_outcome(r),
        };
        if let Err(e) = rec.finish(end) {
            g.warn(&format!("could not close the saved run: {}", crate::error::error_line(&e)));
        }
    }
    render(g, &outcome.map_err(to_usage)?)
}

/// What the flags ask for, checked against each other and this machine
/// before anything runs.
struct Planned {
    declared: audit::declared::Declared,
    metrics: MetricSet,
    scope: Scope,
    plan: Plan,
}

fn plan(args: &Args, g: &Invocation) -> anyhow::Result<Planned> {
    if args.command.first().is_some_and(|p| p.is_empty()) {
        usage!("exec: the program name (the first word after --) is empty");
    }
    let declared = args.declare.resolve()?;
    if args.no_save && !declared.is_empty() {
        usage!("--set/--set-file declare settings of the saved run: they cannot go with --no-save");
    }
    let mut items = Vec::new();
    for list in &args.policies {
        items.extend(exec::policy::parse_list(list).map_err(to_usage)?);
    }
    let mut lower = args.metric_lower_is_better.clone();
    let mut higher = args.metric_higher_is_better.clone();
    if args.lower_is_better {
        lower.push(String::new());
    }
    if args.higher_is_better {
        higher.push(String::new());
    }
    let metrics = MetricSet::parse(&args.metric, &lower, &higher, args.metric_file.clone())
        .map_err(to_usage)?;
    let command = ResolvedCommand::resolve(&args.command, std::env::var_os("PATH").as_deref())
        .map_err(to_usage)?;
    let scope = Scope::read(&SysRoot::live()).context("reading this machine's NUMA nodes")?;
    let policies = scope.expand(&items).map_err(to_usage)?;
    // `all` is what this machine can take: say what it left out, and why.
    if items.iter().any(|i| matches!(i, exec::policy::PolicyItem::All)) && !g.quiet {
        let skipped = scope.skipped_by_all();
        if !skipped.is_empty() {
            let ran: Vec<String> = scope.all_policies().iter().map(|p| p.to_string()).collect();
            eprintln!(
                "numaprobe: --policies all on this machine is {}; left out: {}.",
                ran.join(","),
                report::safe::visible(&skipped.join("; "))
            );
        }
    }
    let plan = Plan::new(command, &policies, &scope).map_err(to_usage)?;
    Ok(Planned { declared, metrics, scope, plan })
}

/// The saved run, unless `--no-save`; a database that cannot be opened
/// is warned about and the matrix runs unsaved.
fn open_recording(args: &Args, g: &Invocation, planned: &Planned) -> Option<Recording> {
    if args.no_save {
        return None;
    }
    let new = crate::declare::new_run(
        &SysRoot::live(),
        Some(&planned.scope.topology),
        args.label.clone(),
        &planned.declared,
    );
    match Recording::open(g, &new) {
        Ok(r) => Some(r),
        Err(e) => {
            g.warn(&format!("results will not be saved: {}", crate::error::error_line(&e)));
            None
        }
    }
}

/// The matrix's report; a failed run, `--fail-fast` or a signal fails the
/// command after it.
fn render(g: &Invocation, report: &ExecReport) -> anyhow::Result<()> {
    g.answer(output::schema::EXEC, report, |style| console::exec::render(report, style))?;
    if report.stop == Some(Stop::Interrupted) {
        return Err(crate::signal::Interrupted.into());
    }
    let total: usize = report.policies.iter().map(|p| p.runs.len()).sum();
    let fail_fast = matches!(report.stop, Some(Stop::FailFast { .. }));
    if report.failed_runs > 0 || fail_fast {
        let stopped = report.stopped.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
        anyhow::bail!("{} of {} runs failed{stopped}", report.failed_runs, total);
    }
    Ok(())
}

/// How the saved run ends: `incomplete` when a signal stopped it (what
/// was measured is kept), `failed` when every run of the program failed
/// (nothing was measured), `incomplete` when some did or the matrix
/// stopped early (`--fail-fast`), else `complete`.
fn stored_outcome(r: &ExecReport) -> Outcome {
    let total: usize = r.policies.iter().map(|p| p.runs.len()).sum();
    let why = r.stopped.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
    if let Some(s) = r.stopped.as_deref().filter(|_| r.stop == Some(Stop::Interrupted)) {
        Outcome::Incomplete(s.to_string())
    } else if total > 0 && r.failed_runs == total {
        Outcome::Failed(format!("all {total} runs of the program failed{why}"))
    } else if r.failed_runs > 0 {
        Outcome::Incomplete(format!("{} of {total} runs failed{why}", r.failed_runs))
    } else {
        match &r.stopped {
            Some(s) => Outcome::Incomplete(s.clone()),
            None => Outcome::Complete,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node set relative to this machine's nodes where a policy is read
    /// alone (only a `--policies` list resolves it): the whole line as
    /// `main` prints it after `numaprobe: error: `, a usage error. The
    /// command line cannot reach it (a list takes these sets).
    #[test]
    fn a_relative_node_set_outside_a_list_is_refused_naming_policies() {
        for (spec, part) in [("interleave:!1", "!1"), ("weighted:+0", "+0")] {
            let e = to_usage(spec.parse::<exec::PlacementPolicy>().unwrap_err());
            let want = format!(
                "bad policy '{spec}': '{part}' is relative to this machine's nodes; give it in \
                 --policies"
            );
            assert_eq!(crate::error::error_line(&e), want);
            assert!(crate::error::is_usage(&e));
        }
    }
}
