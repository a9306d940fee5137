//! `numaprobe bw`: memory bandwidth of one CPU node against one memory node,
//! the node matrix, the whole machine (local, interleaved, weighted) and
//! thread scaling. Flags are checked first, then turned into a
//! [`bench::bw::BwPlan`] once the topology is known.

use std::time::Duration;

use anyhow::Context;

use bench::bw::{self, BwMode, BwPlan, RepPolicy, StoreMode};
use kernels::{Isa, Kernel};
use results::bw::BwResult;
use results::pages::PageKind;
use serde::Serialize;
use topo::{SysRoot, Topology};

use crate::grammar;
use crate::invocation::Invocation;
use crate::record::{Outcome, SaveArgs, Saving};
use crate::{output, usage};

/// The modes that choose their own nodes: one case's flags (`--cpu-node`,
/// `--mem-node`, `--cpus`) conflict with them.
const WHOLE_MACHINE: [&str; 4] = ["matrix", "global", "interleave", "weighted"];

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Node whose CPUs run the threads (default: the first node with CPUs).
    #[arg(long, value_name = "NODE", value_parser = grammar::node,
          conflicts_with_all = WHOLE_MACHINE)]
    pub cpu_node: Option<u32>,
    /// Node holding the arrays (default: the CPU node's own memory, or the
    /// nearest memory node).
    #[arg(long, value_name = "NODE", value_parser = grammar::node,
          conflicts_with_all = WHOLE_MACHINE)]
    pub mem_node: Option<u32>,
    /// Run on exactly these CPUs instead of a node's: a set such as 0-3,8,
    /// all, !0 (all allowed CPUs but 0) or +0-3 (the first four allowed).
    #[arg(long, value_name = "CPUS", value_parser = grammar::set,
          conflicts_with_all = ["cpu_node", "matrix", "global", "interleave", "weighted", "scaling"])]
    pub cpus: Option<place::SetSpec>,
    /// Threads per CPU node (default: every CPU of the node, one per core
    /// first); with --scaling, the largest count.
    #[arg(long, value_name = "N", value_parser = grammar::threads)]
    pub threads: Option<usize>,
    /// Every CPU node against every memory node (memory-only nodes too).
    #[arg(long, conflicts_with_all = ["global", "interleave", "weighted", "scaling"])]
    pub matrix: bool,
    /// Whole machine: every node's threads on their own memory, then
    /// interleaved over all nodes, then weighted interleave when the kernel
    /// has it.
    #[arg(long, conflicts_with_all = ["interleave", "weighted", "scaling"])]
    pub global: bool,
    /// Whole machine with memory interleaved over all memory nodes.
    #[arg(long)]
    pub interleave: bool,
    /// Whole machine with weighted interleave (Linux 6.9+).
    #[arg(long)]
    pub weighted: bool,
    /// Bandwidth against thread count 1..N on one node.
    #[arg(long, conflicts_with_all = ["interleave", "weighted"])]
    pub scaling: bool,
    /// Kernels, comma-separated (read/write also as load/store).
    #[arg(
        long,
        value_name = "KERNELS",
        value_parser = grammar::closed::kernel(),
        value_delimiter = ',',
        default_value = "copy,scale,add,triad"
    )]
    pub kernel: Vec<Kernel>,
    /// Force an instruction set (default: the best this CPU runs).
    #[arg(long, value_name = "ISA", value_parser = grammar::closed::isa())]
    pub isa: Option<Isa>,
    /// Stores: nt (non-temporal), regular, or auto (nt when available).
    #[arg(long, value_name = "STORES", value_parser = grammar::closed::stores(), default_value = "auto")]
    pub stores: StoreMode,
    /// Bytes per array, e.g. 512M, 1.5G (default: 4x the last-level cache
    /// the threads share, capped by what the memory node can spare).
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// Pages for the arrays (default thp: bandwidth of memory, not of the
    /// TLB; the share of huge pages obtained is reported).
    #[arg(long, value_name = "PAGES", value_parser = grammar::closed::pages(), default_value = "thp")]
    pub pages: PageKind,
    /// Seconds allowed per result before settling for an unstable figure.
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = grammar::budget)]
    pub budget: Duration,
    /// Minimum timed repetitions per result.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = grammar::reps)]
    pub min_reps: usize,
    /// Maximum timed repetitions per result.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = grammar::reps)]
    pub max_reps: usize,
    /// Stop when the best 3 repetitions are within this many percent.
    #[arg(long, value_name = "PCT", default_value_t = 1.0, value_parser = grammar::percent)]
    pub target_spread: f64,
    /// Theoretical peak of one memory node in GB/s (DIMMs x MT/s x 8 bytes),
    /// to show the measured fraction of it (default: from the SMBIOS DIMM
    /// table when it is readable, which needs root).
    #[arg(long, value_name = "GB/S", value_parser = grammar::peak_gbs)]
    pub peak_gbs: Option<f64>,
    /// Count events of the team over each kernel's timed repetitions
    /// (perf_event_open per thread), and the memory controllers' bytes
    /// per socket where the kernel exposes them; recorded with each result.
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub declare: crate::declare::DeclareArgs,
}

/// Checks the flags and builds the plan. `--cpus` is resolved against the
/// machine: a plain list is checked CPU by CPU; `all`, `!` and `+` work
/// within the allowed online CPUs.
pub fn plan_from_args(
    a: &Args,
    allowed: &place::Allowed,
    topo: &Topology,
) -> anyhow::Result<BwPlan> {
    let mut kernels = Vec::new();
    for k in a.kernel.iter().copied() {
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    if kernels.is_empty() {
        usage!("--kernel: no kernel given");
    }
    let isa = a.isa;
    let stores = a.stores;
    let array_bytes = a.size;
    let pages = a.pages;
    if a.max_reps < a.min_reps {
        usage!("--min-reps {} / --max-reps {}: need min <= max", a.min_reps, a.max_reps);
    }
    let cpus = match &a.cpus {
        Some(spec) => Some(allowed.resolve_cpus(&spec.to_string(), topo).context("--cpus")?),
        None => None,
    };
    let mut modes = Vec::new();
    if a.matrix {
        modes.push(BwMode::Matrix);
    }
    if a.global {
        modes.push(BwMode::Global);
        modes.push(BwMode::Interleave);
        modes.push(BwMode::Weighted { required: false });
    }
    if a.interleave {
        modes.push(BwMode::Interleave);
    }
    if a.weighted {
        modes.push(BwMode::Weighted { required: true });
    }
    if a.scaling {
        modes.push(BwMode::Scaling { cpu_node: a.cpu_node, mem_node: a.mem_node });
    }
    // The flags of one case conflict with every other mode (clap), so no
    // mode means one case.
    if modes.is_empty() {
        modes.push(BwMode::Local { cpu_node: a.cpu_node, mem_node: a.mem_node, cpus });
    }
    Ok(BwPlan {
        modes,
        kernels,
        threads: a.threads,
        isa,
        stores,
        array_bytes,
        pages,
        reps: RepPolicy {
            min_reps: a.min_reps,
            max_reps: a.max_reps,
            top_k: 3,
            target_spread_pct: a.target_spread,
            budget: a.budget,
        },
        peak_gbs: a.peak_gbs,
        link_gbs: None,
    })
}

/// The link between nodes declared with `--set link.gbs=GB/S` (UPI, xGMI,
/// QPI: numaprobe cannot read it), checked as `--peak-gbs` is: remote
/// bandwidth figures are held against it.
pub(crate) fn link_gbs(declared: &audit::declared::Declared) -> anyhow::Result<Option<f64>> {
    match declared.get("link.gbs") {
        None => Ok(None),
        Some(v) => match grammar::peak_gbs(v) {
            Ok(g) => Ok(Some(g)),
            Err(e) => usage!("--set link.gbs={v}: {e}"),
        },
    }
}

/// Progress bars, plus warnings printed directly when stderr is not a
/// terminal (a hidden bar would swallow them).
pub(crate) struct Obs {
    pub(crate) bars: crate::progress::Bars,
    pub(crate) quiet: bool,
}

impl events::Observer for Obs {
    fn event(&self, event: events::Event) {
        use std::io::IsTerminal;
        match event {
            events::Event::Warning(msg) if !std::io::stderr().is_terminal() => {
                output::warn(self.quiet, &msg)
            }
            events::Event::SmallArrays { bytes, want } if !std::io::stderr().is_terminal() => {
                output::warn(self.quiet, &console::bw::small_arrays(bytes, want))
            }
            events::Event::Disturbed { what, figures, marked, worst }
                if !std::io::stderr().is_terminal() =>
            {
                output::warn(
                    self.quiet,
                    &console::progress::disturbed(&what, figures, marked, &worst),
                )
            }
            e => self.bars.event(e),
        }
    }
}

/// The `--json` document (versioned by [`results::SCHEMA_VERSION`]).
#[derive(Serialize)]
struct Doc<'a> {
    /// Always `GB/s = 1e9 bytes/s` (bytes counted as STREAM does).
    unit: &'static str,
    /// True when Ctrl-C stopped the run early.
    interrupted: bool,
    results: &'a [BwResult],
    /// The figures above their theoretical peak, with the likely cause
    /// (`analysis::impossible`; empty when none).
    impossible: Vec<console::impossible::Doc>,
}

/// A bandwidth error as the user reads it (and a saved run keeps it): a
/// refused plan worded with bw's flags, a usage error (exit status 2);
/// anything else as the library says it.
pub fn worded(e: bw::BwError) -> anyhow::Error {
    match e {
        bw::BwError::Refused(r) => {
            anyhow::Error::new(crate::error::UsageError(console::bw::refusal(&r)))
        }
        e => e.into(),
    }
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    let declared = args.declare.resolve()?;
    let root = SysRoot::live();
    let topo = Topology::discover(&root)?;
    let allowed = place::Allowed::current(&root)?;
    let mut plan = plan_from_args(&args, &allowed, &topo)?;
    plan.link_gbs = link_gbs(&declared)?;
    // The theoretical peak from the DIMMs when the user gave none (SMBIOS
    // needs root; without it the fraction is simply not shown).
    if plan.peak_gbs.is_none() {
        plan.peak_gbs = audit::smbios::peak_gbs_per_dram_node(&root, &topo);
    }
    let stop = crate::signal::stop_flag();
    bench::counting::request(args.counters);
    let _lock = g.take_lock(args.save.wait, &stop)?;
    let rec = g.record(args.save.saving() || !declared.is_empty(), || {
        crate::declare::new_run(&root, Some(&topo), args.save.label, &declared)
    })?;
    let obs = Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let outcome = bw::run_plan(&topo, &plan, &Saving { rec: rec.as_ref(), next: &obs }, &stop)
        .map_err(worded);
    let interrupted = stop.is_stopped();
    if let Some(rec) = rec {
        rec.finish(Outcome::of(&outcome, interrupted))?.tell(g.quiet);
    }
    let results = outcome?;
    let impossible =
        results.iter().filter_map(analysis::impossible::bw).map(|i| (&i).into()).collect();
    let doc = Doc { unit: "GB/s = 1e9 bytes/s", interrupted, results: &results, impossible };
    g.answer(results::SCHEMA_VERSION, &doc, |style| console::bw::text(&results, style))?;
    // With --json the document says `interrupted` itself.
    if interrupted && !g.json {
        g.warn(&format!(
            "interrupted: the table holds what was measured before {}",
            crate::signal::cause()
        ));
    }
    Ok(())
}
