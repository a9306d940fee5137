//! `numaprobe gpu`: host<->device copy bandwidth from pinned memory on every
//! NUMA node to every GPU, and where a data loader should keep its pinned
//! memory. The measuring runs in the `numaprobe-gpu` helper ([`gpu`]).

use std::io::IsTerminal;

use analysis::gpu::{self as matrix, Cell, Contention};
use console::gpu::{self as gpu_text, Doc, FeedDoc, GpuNode};
use gpu::plan::Request;
use gpu::protocol::{Direction, Message, Plan, PlanNode, Point, Probe};
use results::gpu::GpuCopy;
use topo::{NodeSet, SysRoot, Topology};

use crate::invocation::Invocation;
use crate::record::{Outcome, Recording};
use crate::{grammar, output, record, usage};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  numaprobe gpu\n  \
    numaprobe gpu --gpus 0,1 --sizes 64M,1G --directions h2d\n\n\
    Needs the NVIDIA driver (libcuda.so.1) and the numaprobe-gpu helper beside numaprobe.")]
pub struct Args {
    /// GPUs to measure, by driver ordinal (default: all).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = grammar::gpu)]
    pub gpus: Vec<u32>,
    /// Host nodes to copy from (default: every node with memory you may use).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = grammar::node)]
    pub nodes: Vec<u32>,
    /// Copy sizes (default: 64K,256K,1M,4M,16M,64M,256M,1G).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = grammar::size)]
    pub sizes: Vec<u64>,
    /// Directions: h2d, d2h, bidir (default: all three).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = direction)]
    pub directions: Vec<Direction>,
    /// Timed copies per point, after one warm-up copy.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = grammar::scan_reps)]
    pub reps: usize,
    /// Only describe the driver and its devices; measure nothing.
    #[arg(long)]
    pub probe: bool,
    /// Skip the all-GPUs-at-once step (run by default with two GPUs or
    /// more: every GPU copies from each node at the same time, which shows
    /// a shared PCIe switch or socket link).
    #[arg(long)]
    pub no_together: bool,
    /// Also measure a CPU's memory latency on each node while all the GPUs
    /// copy from that node, against the same chase idle (DMA contention;
    /// a few seconds per node and direction).
    #[arg(long)]
    pub contention: bool,
    #[command(flatten)]
    pub save: record::SaveArgs,
}

fn direction(s: &str) -> Result<Direction, String> {
    Direction::parse(s.trim()).ok_or_else(|| format!("'{s}' is not a direction: h2d, d2h or bidir"))
}

/// The largest copy accepted: 16 GiB (the helper pins twice that per node).
const MAX_SIZE: u64 = 16 << 30;

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    if let Some(&s) = a.sizes.iter().find(|&&s| s == 0 || s > MAX_SIZE) {
        usage!("--sizes: {s} bytes is outside 1 B..16 GiB");
    }
    let root = SysRoot::live();
    let t = Topology::discover(&root)?;
    let allowed = place::Allowed::current(&root)?;
    let nodes = nodes(&a, &allowed, &t)?;
    let stop = crate::signal::stop_flag();
    let (probe, gpus, gpu_nodes) = probe(&a, &t)?;
    if a.probe {
        let none = Measured { points: &[], contention: &[], warnings: &[], stopped: None };
        return finish(g, &t, Some(&probe), &gpu_nodes, &none);
    }
    let _lock = g.take_lock(a.save.wait, &stop)?;
    let rec =
        g.record(a.save.saving(), || record::new_run(&root, Some(&t), a.save.label.clone()))?;
    let request = Request {
        gpus,
        nodes,
        directions: a.directions.clone(),
        sizes: a.sizes.clone(),
        reps: a.reps as u32,
        no_together: a.no_together,
    };
    let plan = Plan::of(&request, &allowed, &t);
    let s = match measure(g, &plan, &probe, rec.as_ref()) {
        Ok(s) => s,
        Err(e) => {
            if let Some(rec) = rec {
                rec.finish(Outcome::Failed(e.to_string()))?;
            }
            return Err(e.into());
        }
    };
    let mut stopped = match stop.is_stopped() {
        true => Some("interrupted (Ctrl-C)".to_string()),
        false => s.stopped.clone(),
    };
    if let Some(rec) = rec {
        rec.finish(outcome(stopped.as_deref(), stop.is_stopped(), s.points.is_empty()))?
            .tell(g.quiet);
    }
    let copies: Vec<GpuCopy> = s.points.iter().map(|p| stored(p, &probe)).collect();
    let mut contention = Vec::new();
    if a.contention && stopped.is_none() {
        if let Err(e) = measure_contention(&t, &allowed, &plan, &probe, g, &stop, &mut contention) {
            stopped = Some(format!("contention: {e}"));
        }
    }
    let measured = Measured {
        points: &copies,
        contention: &contention,
        warnings: &s.warnings,
        stopped: stopped.as_deref(),
    };
    finish(g, &t, s.probe.as_ref().or(Some(&probe)), &gpu_nodes, &measured)?;
    match stopped {
        Some(why) if s.points.is_empty() => anyhow::bail!("gpu: {why}"),
        Some(why) => {
            anyhow::bail!(
                "gpu: stopped after {} of {} points: {why}",
                s.points.len(),
                plan.points()
            )
        }
        None => Ok(()),
    }
}

/// The host nodes to copy from: `--nodes`, else every node with memory
/// this process may use; each checked.
fn nodes(a: &Args, allowed: &place::Allowed, t: &Topology) -> anyhow::Result<Vec<u32>> {
    let nodes: Vec<u32> = match a.nodes.is_empty() {
        true => allowed.memory_nodes(t).iter().collect(),
        false => a.nodes.clone(),
    };
    for &n in &nodes {
        let set: NodeSet = [n].into_iter().collect();
        if let Err(e) = allowed.check_mem_nodes(&set, t) {
            usage!("--nodes {n}: {e}");
        }
    }
    Ok(nodes)
}

/// What the helper says of the driver and its devices; the GPUs to
/// measure (`--gpus`, checked against them, else all) and the node each
/// sits on.
fn probe(a: &Args, t: &Topology) -> anyhow::Result<(Probe, Vec<u32>, Vec<GpuNode>)> {
    let probed = gpu::launch::run("probe", None, |_| {})?;
    let Some(probe) = probed.probe else {
        anyhow::bail!(
            "{}",
            probed.stopped.unwrap_or_else(|| "the GPU helper described no device".into())
        );
    };
    let count = probe.devices.len() as u32;
    let gpus: Vec<u32> = if a.gpus.is_empty() { (0..count).collect() } else { a.gpus.clone() };
    if let Some(bad) = gpus.iter().find(|&&x| x >= count) {
        usage!(
            "--gpus {bad}: the driver shows {count} GPU(s), numbered 0-{}",
            count.saturating_sub(1)
        );
    }
    let gpu_nodes: Vec<GpuNode> = probe
        .devices
        .iter()
        .filter(|d| gpus.contains(&d.ordinal))
        .map(|d| GpuNode {
            gpu: d.ordinal,
            pci_address: d.pci_address.clone(),
            node: t.devices.iter().find(|p| p.address == d.pci_address).and_then(|p| p.numa_node),
        })
        .collect();
    Ok((probe, gpus, gpu_nodes))
}

/// Runs the plan in the helper: each point saved as it arrives and told
/// on a terminal, the helper's warnings passed on.
fn measure(
    g: &Invocation,
    plan: &Plan,
    probe: &Probe,
    rec: Option<&Recording>,
) -> Result<gpu::launch::Session, gpu::GpuError> {
    let total = plan.points();
    let verbose = !g.quiet && std::io::stderr().is_terminal();
    let mut done = 0usize;
    gpu::launch::run("measure", Some(plan), |m| match m {
        Message::Point(p) => {
            done += 1;
            if let Some(rec) = rec {
                rec.save(&stored(p, probe).into());
            }
            if verbose {
                let with = match p.together.len() {
                    0 => String::new(),
                    n => format!(" (all {n} GPUs at once)"),
                };
                eprintln!(
                    "gpu: {done}/{total} node {} -> GPU {}{with} {} {}: {:.1} GB/s",
                    p.node,
                    p.gpu,
                    p.direction.name(),
                    topo::units::binary_size(p.size_bytes),
                    p.gbs.iter().copied().fold(0.0, f64::max)
                );
            }
        }
        Message::Warning { text } => g.warn(&format!("gpu: {text}")),
        _ => {}
    })
}

/// How the saved run ends: interrupted by a signal, incomplete when the
/// helper stopped after some points, failed when before any.
fn outcome(stopped: Option<&str>, by_signal: bool, no_points: bool) -> Outcome {
    match (stopped, by_signal) {
        (_, true) => Outcome::Interrupted,
        (Some(why), _) if !no_points => Outcome::Incomplete(why.to_string()),
        (Some(why), _) => Outcome::Failed(why.to_string()),
        (None, _) => Outcome::Complete,
    }
}

/// The stored form of a measured point.
fn stored(p: &Point, probe: &Probe) -> GpuCopy {
    let dev = probe.devices.iter().find(|d| d.ordinal == p.gpu);
    let mut c = GpuCopy {
        gpu: p.gpu,
        device: dev.map(|d| d.name.clone()).unwrap_or_default(),
        pci_address: dev.map(|d| d.pci_address.clone()).unwrap_or_default(),
        mem_node: p.node,
        direction: p.direction,
        size_bytes: p.size_bytes,
        gbs: p.gbs.clone(),
        median_gbs: f64::NAN,
        timer: p.timer.clone(),
        on_node: p.on_node,
        together: p.together.clone(),
    };
    c.median_gbs = Cell::of(&c).map_or(f64::NAN, |cell| cell.median_gbs);
    c
}

/// What a run measured, for [`finish`].
#[derive(Clone, Copy)]
struct Measured<'a> {
    points: &'a [GpuCopy],
    contention: &'a [Contention],
    warnings: &'a [String],
    /// Why it stopped early.
    stopped: Option<&'a str>,
}

fn finish(
    g: &Invocation,
    t: &Topology,
    probe: Option<&Probe>,
    gpu_nodes: &[GpuNode],
    m: &Measured<'_>,
) -> anyhow::Result<()> {
    let Measured { points, contention, warnings, stopped } = *m;
    let memory_only =
        |n: u32| t.nodes.iter().find(|x| x.id == n).is_some_and(|x| x.cpus.is_empty());
    let feeds: Vec<FeedDoc> =
        matrix::feeds(points).into_iter().map(|f| FeedDoc::of(f, memory_only)).collect();
    let cells = matrix::headline(points);
    let together = matrix::together(points);
    let doc = Doc {
        unit: "GB/s (10^9 bytes/s)",
        probe,
        gpu_nodes,
        points,
        matrix: cells,
        feeds,
        together,
        contention,
        warnings,
        stopped,
    };
    g.answer(output::schema::GPU, &doc, |style| gpu_text::render(&doc, style))
}

/// `--contention`: for each node with CPUs and each direction, one chase
/// on the node's first CPU idle, the same chase while every planned GPU
/// copies from the node (the helper's thread on the node's other CPUs),
/// and idle again.
fn measure_contention(
    t: &Topology,
    allowed: &place::Allowed,
    plan: &Plan,
    probe: &Probe,
    g: &Invocation,
    stop: &events::StopFlag,
    out: &mut Vec<Contention>,
) -> anyhow::Result<()> {
    use bench::lat::{self, ChaseOpts, Ctx, Where};
    let observer = events::Silent;
    let ctx = Ctx { observer: &observer, stop, timing: lat::timing_for(None, 1) };
    let opts = ChaseOpts::default();
    for node in &plan.nodes {
        let Ok(cpus) = allowed.check_cpu_node(node.node, t) else {
            g.warn(&format!(
                "gpu: contention: node {} has no CPU you may use: left out",
                node.node
            ));
            continue;
        };
        let list: Vec<u32> = cpus.iter().collect();
        let chase_cpu = list[0];
        let feeder: Vec<u32> = if list.len() > 1 { list[1..].to_vec() } else { list.clone() };
        let at = Where { cpu: Some(chase_cpu), cpu_node: None, mem_node: Some(node.node) };
        for &dir in &plan.directions {
            if stop.is_stopped() {
                return Ok(());
            }
            if !g.quiet && std::io::stderr().is_terminal() {
                eprintln!(
                    "gpu: contention: node {} CPU {chase_cpu}, {}: chase idle, while the GPUs copy, idle again",
                    node.node,
                    dir.name()
                );
            }
            let idle = lat::point(t, &at, &opts, &ctx)?;
            let stream_plan = Plan {
                nodes: vec![PlanNode {
                    node: node.node,
                    cpus: feeder.iter().map(u32::to_string).collect::<Vec<_>>().join(","),
                }],
                directions: vec![dir],
                ..plan.clone()
            };
            let (s, during) =
                gpu::launch::stream(&stream_plan, || lat::point(t, &at, &opts, &ctx))?;
            for w in &s.warnings {
                g.warn(&format!("gpu: {w}"));
            }
            if let Some(why) = s.stopped {
                anyhow::bail!("the GPUs stopped copying: {why}");
            }
            let Some(during) = during else {
                anyhow::bail!("the GPU helper never said it was copying");
            };
            let during = during?;
            let after = lat::point(t, &at, &opts, &ctx)?;
            let copies: Vec<GpuCopy> = s.points.iter().map(|p| stored(p, probe)).collect();
            out.push(Contention::of(dir, &idle, &during, &after, &copies));
        }
    }
    Ok(())
}
