//! `numaprobe lat`: memory latency by dependent pointer chase (one point,
//! node matrix, size sweep, per-CPU with clustering, loaded, core-to-core).

use std::time::Duration;

use anyhow::Context;

use bench::lat::experiment::{Experiment, Measured};
use bench::lat::{self, c2c, ChaseOpts, Ctx, Where};
use results::lat::{LoadKind, PrefetchCheck};
use results::pages::PageKind;
use results::placement::PlacementStatus;
use serde::Serialize;
use topo::{CpuSet, SysRoot, Topology};

use crate::grammar;
use crate::invocation::Invocation;
use crate::output;
use crate::progress::Bars;
use crate::record::{Outcome, SaveArgs, Saving};
use crate::usage;

/// `--load` (the first version's flag, kept hidden): one mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Load {
    /// Load threads read.
    Read,
    /// Load threads read and write back (dirty lines): the 1:1 mix.
    Rw,
}

/// `--mix`: one traffic mix, or `all`.
fn mix(s: &str) -> Result<Vec<LoadKind>, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(LoadKind::ALL.to_vec());
    }
    LoadKind::parse(s)
        .map(|m| vec![m])
        .ok_or_else(|| format!("'{s}' is not a traffic mix (read, 3:1, 2:1, 1:1, nt-write or all)"))
}

/// Measure memory latency with a dependent pointer chase (ns per load).
///
/// Without a mode flag, measures one point: --size (default 1 GiB, capped by
/// what the node can spare) from --cpu / --cpu-node to --mem-node.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("mode").args(["matrix", "per_cpu", "loaded", "c2c"])))]
pub struct Args {
    /// Idle latency from every CPU node to every memory node.
    #[arg(long)]
    pub matrix: bool,
    /// Latency against working-set size, 4 KiB to past the last-level cache
    /// (with --per-cpu: from each of --max-cpus CPUs).
    #[arg(long, conflicts_with_all = ["matrix", "loaded", "c2c"])]
    pub sweep: bool,
    /// Latency from every CPU (or --max-cpus of them) to --mem-node, grouped;
    /// with --sweep, the working-set sweep from each CPU.
    #[arg(long)]
    pub per_cpu: bool,
    /// Latency against bandwidth while the other CPUs load memory: one
    /// curve per --mix, from no load to full load, with its knee.
    #[arg(long)]
    pub loaded: bool,
    /// Core-to-core latency: a cache line bounced between two CPUs.
    #[arg(long)]
    pub c2c: bool,

    /// Working set, e.g. 64K, 1.5M, 1G. For --sweep: the largest size.
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// CPU that chases (not with --cpu-node; --matrix and --per-cpu choose
    /// their CPUs).
    #[arg(long, value_name = "CPU", value_parser = grammar::cpu,
          conflicts_with_all = ["cpu_node", "matrix", "per_cpu"])]
    pub cpu: Option<u32>,
    /// Node whose first usable CPU chases.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub cpu_node: Option<u32>,
    /// Node whose memory is chased (default: the CPU's own node).
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub mem_node: Option<u32>,
    /// Bytes between chased elements: a power of two, 8 to 4096 (default
    /// 256: no help from spatial prefetchers, the DRAM figure; the sweep
    /// uses 64 up to the LLC). 64 gives the cache-assisted figure.
    #[arg(long, value_name = "BYTES", value_parser = grammar::stride)]
    pub stride: Option<usize>,
    /// One point: skip the short stride-64 check of the prefetchers.
    #[arg(long)]
    pub no_prefetch_check: bool,
    /// Pages of the chased buffer (default 4k: a known page size, THP
    /// refused, so the TLB grouping below means what it says; `default` is
    /// not taken).
    #[arg(long, value_name = "PAGES", value_parser = grammar::closed::pages(), default_value = "4k")]
    pub pages: PageKind,
    /// Base (4 KiB) pages per TLB group: the chase finishes a group before the next.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = grammar::tlb_pages)]
    pub tlb_pages: usize,
    /// Clean samples per point (a sample during which the chasing thread
    /// waited to run is dropped and replaced by a shorter one).
    #[arg(long, value_name = "N", value_parser = grammar::samples)]
    pub samples: Option<usize>,
    /// Length of one sample in milliseconds (a first Ctrl-C waits for the
    /// sample under way).
    #[arg(long, value_name = "MS", value_parser = grammar::sample_ms)]
    pub sample_ms: Option<Duration>,
    /// Seed of the random chase order.
    #[arg(long, default_value_t = 1, value_parser = grammar::seed)]
    pub seed: u64,

    /// --per-cpu --sweep: the sizes to chase, comma-separated (e.g.
    /// 32K,1M,64M), instead of the series up to --size.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = grammar::size,
          conflicts_with = "size")]
    pub sizes: Option<Vec<u64>>,
    /// --per-cpu: measure at most this many CPUs, spread evenly (default
    /// 64; 8 with --sweep).
    #[arg(long, value_name = "N", value_parser = grammar::threads)]
    pub max_cpus: Option<usize>,
    /// --per-cpu --sweep: run even when the estimate is over an hour.
    #[arg(long)]
    pub yes: bool,
    /// --loaded: traffic mixes of the load threads, comma-separated: read,
    /// 3:1, 2:1, 1:1 (read:write), nt-write, or all (the default).
    #[arg(long, value_name = "MIXES", value_delimiter = ',', value_parser = mix)]
    pub mix: Option<Vec<Vec<LoadKind>>>,
    /// The first version's --load read|rw (rw = --mix 1:1).
    #[arg(long, value_enum, hide = true, conflicts_with = "mix")]
    pub load: Option<Load>,
    /// --loaded: waits after each cache line in ns, comma-separated
    /// (default 20000,10000,5000,2000,1000,500,200,100,50,0); an idle
    /// point (load paused) is always measured first.
    #[arg(long, value_name = "NS", value_delimiter = ',', value_parser = grammar::delay_ns)]
    pub delays: Option<Vec<u64>>,
    /// --loaded: CPUs that generate load, a set such as 0-7, all or !0
    /// (default: all but the chasing CPU).
    #[arg(long, value_name = "CPUS", value_parser = grammar::set)]
    pub load_cpus: Option<place::SetSpec>,
    /// --c2c: pairs to measure, e.g. 0:1,0:8 (default: chosen per relation).
    #[arg(long, value_name = "PAIRS")]
    pub pairs: Option<String>,
    /// --c2c: pairs per relation (SMT, node, package, cross-package) when
    /// choosing.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = grammar::pairs_per_relation)]
    pub pairs_per_relation: usize,
    /// Count events of the chase thread over each point's timed samples
    /// (perf_event_open), recorded with each chase result (point, matrix,
    /// sweep, per-cpu).
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub declare: crate::declare::DeclareArgs,
}

fn parse_pairs(s: &str) -> Result<Vec<(u32, u32)>, String> {
    s.split(',')
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            let (a, b) = p.split_once(':').ok_or_else(|| format!("pair '{p}' is not A:B"))?;
            let a =
                a.trim().parse().map_err(|_| format!("pair '{p}': '{a}' is not a CPU number"))?;
            let b =
                b.trim().parse().map_err(|_| format!("pair '{p}': '{b}' is not a CPU number"))?;
            Ok((a, b))
        })
        .collect()
}

/// CPUs the plain `--per-cpu` measures at most by default.
const DEFAULT_PER_CPU_MAX: usize = 64;

/// The stride of DRAM points: `--stride`, else the default.
fn stride(a: &Args) -> usize {
    a.stride.unwrap_or(lat::DEFAULT_STRIDE_BYTES)
}

/// The mixes `--mix` (or the hidden `--load`) chose; every mix by default.
fn mixes(a: &Args) -> Vec<LoadKind> {
    match (&a.mix, a.load) {
        (Some(m), _) => {
            let mut v: Vec<LoadKind> = Vec::new();
            for k in m.iter().flatten() {
                if !v.contains(k) {
                    v.push(*k);
                }
            }
            v
        }
        (None, Some(Load::Read)) => vec![LoadKind::Read],
        (None, Some(Load::Rw)) => vec![LoadKind::Rw],
        (None, None) => LoadKind::ALL.to_vec(),
    }
}

/// Checks what can be checked without the machine.
fn validate(a: &Args) -> anyhow::Result<Option<u64>> {
    if !a.loaded && (a.mix.is_some() || a.load.is_some()) {
        usage!("--mix applies to --loaded only");
    }
    if a.delays.as_ref().is_some_and(|d| d.is_empty()) {
        usage!("--delays needs at least one value");
    }
    let size = match a.size {
        Some(v) if v < lat::MIN_SIZE_BYTES => {
            usage!("--size {v} bytes is below the minimum of {} bytes", lat::MIN_SIZE_BYTES)
        }
        Some(v) if v < 2 * stride(a) as u64 => {
            usage!("--size {v} bytes holds fewer than two elements of --stride {}", stride(a))
        }
        v => v,
    };
    if a.max_cpus.is_some() && !a.per_cpu {
        usage!("--max-cpus applies to --per-cpu only");
    }
    if a.sizes.is_some() && !(a.per_cpu && a.sweep) {
        usage!("--sizes applies to --per-cpu --sweep only");
    }
    if let Some(list) = &a.sizes {
        for (i, s) in list.iter().enumerate() {
            if list[..i].contains(s) {
                usage!("--sizes: {} given twice", topo::units::binary_size(*s));
            }
        }
    }
    if a.yes && !(a.per_cpu && a.sweep) {
        usage!("--yes applies to --per-cpu --sweep only");
    }
    if a.pages == PageKind::Base {
        usage!("--pages default: lat needs a known page size; use 4k (THP refused), thp, 2m or 1g");
    }
    if let Some(p) = &a.pairs {
        if let Err(e) = parse_pairs(p) {
            usage!("--pairs {e}");
        }
    }
    Ok(size)
}

/// The `--json` document of the chase modes, c2c and loaded latency
/// (versioned by [`results::SCHEMA_VERSION`]).
#[derive(Serialize)]
struct Doc<'a, T: Serialize> {
    mode: &'a str,
    results: &'a [T],
    /// True when Ctrl-C stopped the measurement early.
    interrupted: bool,
    /// A point's stride-64 comparison (absent when skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    prefetch_check: Option<&'a PrefetchCheck>,
    /// Loaded latency: one summary per mix, the knee.
    #[serde(skip_serializing_if = "Option::is_none")]
    curves: Option<&'a [results::lat::LoadedSummary]>,
    /// The DRAM figures below the last-level cache's latency, with the
    /// likely cause (`console::lat::impossible`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    impossible: Vec<console::impossible::Doc>,
}

impl<'a, T: Serialize> Doc<'a, T> {
    fn new(mode: &'a str, results: &'a [T], interrupted: bool) -> Self {
        Doc { mode, results, interrupted, prefetch_check: None, curves: None, impossible: vec![] }
    }
}

/// The `--json` document of the sweep and per-CPU modes: the report's own
/// fields (`mode` among them), then whether Ctrl-C stopped it.
#[derive(Serialize)]
struct ReportDoc<'a, R: Serialize> {
    #[serde(flatten)]
    report: &'a R,
    interrupted: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    impossible: Vec<console::impossible::Doc>,
}

/// A latency error as the user reads it (and a saved run keeps it): a
/// refused `--sizes` list worded with the flag, a usage error (exit status
/// 2); anything else as the library says it.
fn worded(e: lat::LatError) -> anyhow::Error {
    match e {
        lat::LatError::Sizes(r) => {
            anyhow::Error::new(crate::error::UsageError(console::lat::sizes_refusal(&r)))
        }
        e => e.into(),
    }
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    let size = validate(&args)?;
    let declared = args.declare.resolve()?;
    let root = SysRoot::live();
    let topo = Topology::discover(&root)?;
    let stop = crate::signal::stop_flag();
    let bars = Bars::new(g.quiet);
    let (exp, timing, opts) = plan(&args, size, &root, &topo)?;
    if let Experiment::PerCpuSweep(spec) = &exp {
        check_sweep(&args, g, &topo, spec, &opts, &timing)?;
    }
    bench::counting::request(args.counters);
    let _lock = g.take_lock(args.save.wait, &stop)?;
    let rec = g.record(args.save.saving() || !declared.is_empty(), || {
        crate::declare::new_run(&root, Some(&topo), args.save.label.clone(), &declared)
    })?;
    let saving = Saving { rec: rec.as_ref(), next: &bars };
    let ctx = Ctx { observer: &saving, stop: &stop, timing };
    let mut outcome = lat::experiment::run(&topo, &exp, &opts, &ctx).map_err(worded);
    if let Ok(Measured::PerCpuSweep(report)) = &mut outcome {
        // Its note may name --size: worded here, then the summary saved.
        report.conclude(console::lat::no_dram, &saving);
    }
    let stopped = stop.is_stopped();
    if let Some(rec) = rec {
        rec.finish(Outcome::of(&outcome, stopped))?.tell(g.quiet);
    }
    render(&args, g, &topo, &outcome?, stopped)
}

/// The experiment the flags chose on this machine, its timing and the
/// chase's options.
fn plan(
    args: &Args,
    size: Option<u64>,
    root: &SysRoot,
    topo: &Topology,
) -> anyhow::Result<(Experiment, lat::Timing, ChaseOpts)> {
    let load_cpus = match &args.load_cpus {
        Some(spec) => Some(
            place::Allowed::current(root)?
                .resolve_cpus(&spec.to_string(), topo)
                .context("--load-cpus")?,
        ),
        None => None,
    };
    let pairs = args.pairs.as_deref().map(parse_pairs).transpose().map_err(anyhow::Error::msg)?;
    let exp = experiment(args, load_cpus, pairs);
    let mut timing = exp.default_timing();
    if let Some(n) = args.samples {
        timing.samples = n;
    }
    if let Some(t) = args.sample_ms {
        timing.sample_time = t;
    }
    let opts = ChaseOpts {
        size_bytes: size,
        pages: args.pages,
        tlb_group_pages: args.tlb_pages,
        seed: args.seed,
        ..ChaseOpts::default()
    };
    // an explicit --stride is used everywhere, the sweep's cache sizes too
    let opts = args.stride.map_or(opts, |s| opts.with_stride(s));
    Ok((exp, timing, opts))
}

/// The per-CPU sweep's plan first: how many points and how long, refused
/// past an hour unless --yes, else said on stderr.
fn check_sweep(
    args: &Args,
    g: &Invocation,
    topo: &Topology,
    spec: &lat::PerCpuSweepSpec,
    opts: &ChaseOpts,
    timing: &lat::Timing,
) -> anyhow::Result<()> {
    let plan = lat::per_cpu_sweep::plan(topo, spec, opts, timing).map_err(worded)?;
    let text = lat::per_cpu_sweep::plan_text(&plan);
    if plan.estimate_s > lat::per_cpu_sweep::LONG_SWEEP.as_secs_f64() && !args.yes {
        usage!("{text}: over an hour; lower --max-cpus, --size or --sizes, or give --yes");
    }
    if !g.quiet {
        eprintln!("{text}");
    }
    Ok(())
}

/// What was measured: the `--json` document, or the table with the
/// warnings it needs and the counters asked for.
fn render(
    args: &Args,
    g: &Invocation,
    topo: &Topology,
    measured: &Measured,
    stopped: bool,
) -> anyhow::Result<()> {
    let llc_bytes = topo.llc_bytes_for(&topo.online_cpus);
    let doc = LatDoc { measured, llc_bytes, interrupted: stopped };
    g.answer(results::SCHEMA_VERSION, &doc, |style| {
        console::lat::measured(measured, llc_bytes, style)
    })?;
    if g.json {
        // The warnings and the counters are said beside the table only.
        return Ok(());
    }
    if let Measured::Loaded(r) = measured {
        let misplaced = |p: &results::lat::LoadedPoint| {
            p.load_placement.as_ref().is_some_and(|l| l.status == PlacementStatus::Mismatch)
        };
        if r.points.first().is_some_and(misplaced) {
            g.warn("the load threads' buffers are not all on the node");
        }
    }
    if stopped {
        g.warn(&format!("stopped by {}: showing what was measured", crate::signal::cause()));
    }
    if args.counters {
        print_counters(measured, g)?;
    }
    Ok(())
}

/// What was measured, as the `--json` document (versioned by the
/// invocation): each mode's own document.
struct LatDoc<'a> {
    measured: &'a Measured,
    llc_bytes: Option<u64>,
    interrupted: bool,
}

impl Serialize for LatDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (m, interrupted) = (self.measured, self.interrupted);
        let impossible = console::impossible::docs(&console::lat::impossible(m, self.llc_bytes));
        match m {
            Measured::Point(r, check) => Doc {
                prefetch_check: check.as_ref(),
                impossible,
                ..Doc::new("point", std::slice::from_ref(r.as_ref()), interrupted)
            }
            .serialize(s),
            Measured::Matrix(v) => {
                Doc { impossible, ..Doc::new("matrix", v, interrupted) }.serialize(s)
            }
            Measured::Sweep(report) => ReportDoc { report, interrupted, impossible }.serialize(s),
            Measured::PerCpu(report) => ReportDoc { report, interrupted, impossible }.serialize(s),
            Measured::PerCpuSweep(report) => {
                ReportDoc { report, interrupted, impossible }.serialize(s)
            }
            Measured::Loaded(r) => Doc {
                curves: Some(&r.curves),
                impossible,
                ..Doc::new("loaded", &r.points, interrupted)
            }
            .serialize(s),
            Measured::C2c(v) => Doc::new("c2c", v, interrupted).serialize(s),
        }
    }
}

/// The counters of the chase points (`--counters`); loaded latency and
/// core-to-core results carry none, and say so.
fn print_counters(m: &Measured, g: &Invocation) -> anyhow::Result<()> {
    let Some(points) = m.chase_points() else {
        g.warn(
            "--counters: recorded for chase points (point, matrix, sweep, per-cpu); \
             loaded latency and core-to-core results carry none",
        );
        return Ok(());
    };
    output::emit(&console::lat::counters(&points, g.style))
}

/// The experiment the flags chose.
fn experiment(
    args: &Args,
    load_cpus: Option<CpuSet>,
    pairs: Option<Vec<(u32, u32)>>,
) -> Experiment {
    let at = Where { cpu: args.cpu, cpu_node: args.cpu_node, mem_node: args.mem_node };
    if args.matrix {
        Experiment::Matrix
    } else if args.per_cpu && args.sweep {
        Experiment::PerCpuSweep(lat::PerCpuSweepSpec {
            mem_node: args.mem_node,
            max_cpus: args.max_cpus.unwrap_or(lat::per_cpu_sweep::DEFAULT_MAX_CPUS),
            sizes: args.sizes.clone(),
        })
    } else if args.sweep {
        Experiment::Sweep(at)
    } else if args.per_cpu {
        Experiment::PerCpu(lat::PerCpuSpec {
            mem_node: args.mem_node,
            max_cpus: args.max_cpus.unwrap_or(DEFAULT_PER_CPU_MAX),
        })
    } else if args.loaded {
        Experiment::Loaded(lat::LoadedSpec {
            at,
            load_cpus,
            load_node_only: false,
            mixes: mixes(args),
            delays_ns: args
                .delays
                .clone()
                .unwrap_or_else(|| lat::loaded::DEFAULT_DELAYS_NS.to_vec()),
            load_bytes_per_thread: None,
        })
    } else if args.c2c {
        Experiment::C2c(c2c::C2cSpec {
            pairs: pairs.unwrap_or_default(),
            pairs_per_relation: args.pairs_per_relation,
            round_trips: 0,
        })
    } else {
        Experiment::Point { at, prefetch_check: !args.no_prefetch_check }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse() {
        assert_eq!(parse_pairs("0:1,2:3").unwrap(), vec![(0, 1), (2, 3)]);
        assert!(parse_pairs("0-1").is_err());
        assert!(parse_pairs("a:1").is_err());
    }
}
