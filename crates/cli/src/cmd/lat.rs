//! `numaprobe lat`: memory latency by dependent pointer chase (one point,
//! node matrix, size sweep, per-CPU with clustering, loaded, core-to-core).

use std::time::Duration;

use anyhow::Context;

use bench::lat::{
    self, c2c, ChaseOpts, Ctx, LatError, LatResult, LoadKind, PageKind, PlacementStatus, Timing,
    Where,
};
use serde::Serialize;
use topo::{CpuSet, SysRoot, Topology};

use crate::cli::Global;
use crate::grammar::{self, Pages};
use crate::output;
use crate::progress::Bars;
use crate::record::{self, Outcome, Recording, SaveArgs, Saving};
use crate::usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Load {
    /// Load threads read.
    Read,
    /// Load threads read and write back (dirty lines).
    Rw,
}

/// Measure memory latency with a dependent pointer chase (ns per load).
///
/// Without a mode flag, measures one point: --size (default 1 GiB, capped by
/// what the node can spare) from --cpu / --cpu-node to --mem-node.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("mode").args(["matrix", "sweep", "per_cpu", "loaded", "c2c"])))]
pub struct Args {
    /// Idle latency from every CPU node to every memory node.
    #[arg(long)]
    pub matrix: bool,
    /// Latency against working-set size, 4 KiB to past the last-level cache.
    #[arg(long)]
    pub sweep: bool,
    /// Latency from every CPU (or --max-cpus of them) to --mem-node, grouped.
    #[arg(long)]
    pub per_cpu: bool,
    /// Latency while the other CPUs load memory, per delay.
    #[arg(long)]
    pub loaded: bool,
    /// Core-to-core latency: a cache line bounced between two CPUs.
    #[arg(long)]
    pub c2c: bool,

    /// Working set, e.g. 64K, 1.5M, 1G. For --sweep: the largest size.
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// CPU that chases.
    #[arg(long, value_name = "CPU", value_parser = grammar::cpu)]
    pub cpu: Option<u32>,
    /// Node whose first usable CPU chases.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub cpu_node: Option<u32>,
    /// Node whose memory is chased (default: the CPU's own node).
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub mem_node: Option<u32>,
    /// Bytes between chased elements: a power of two, 8 to 4096. 128
    /// defeats the adjacent-line prefetcher.
    #[arg(long, value_name = "BYTES", default_value_t = 64)]
    pub stride: usize,
    /// Pages of the chased buffer (default 4k: a known page size, THP
    /// refused, so the TLB grouping below means what it says; `default` is
    /// not taken).
    #[arg(long, value_name = "PAGES", value_enum, default_value = "4k")]
    pub pages: Pages,
    /// Base (4 KiB) pages per TLB group: the chase finishes a group before the next.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub tlb_pages: usize,
    /// Samples per point.
    #[arg(long, value_name = "N")]
    pub samples: Option<usize>,
    /// Length of one sample in milliseconds.
    #[arg(long, value_name = "MS")]
    pub sample_ms: Option<u64>,
    /// Seed of the random chase order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// --per-cpu: measure at most this many CPUs, spread evenly.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub max_cpus: usize,
    /// --loaded: traffic of the load threads.
    #[arg(long, value_enum, default_value = "read")]
    pub load: Load,
    /// --loaded: delays (spin iterations per cache line), comma-separated.
    #[arg(long, value_name = "DELAYS", value_delimiter = ',')]
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
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub pairs_per_relation: usize,
    /// Count events of the chase thread over each point's timed samples
    /// (perf_event_open), recorded with each chase result (point, matrix,
    /// sweep, per-cpu).
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub save: SaveArgs,
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

/// Checks what can be checked without the machine.
fn validate(a: &Args) -> anyhow::Result<Option<u64>> {
    if !a.stride.is_power_of_two() || !(8..=4096).contains(&a.stride) {
        usage!("--stride {} must be a power of two from 8 to 4096 bytes", a.stride);
    }
    if a.tlb_pages == 0 {
        usage!("--tlb-pages must be at least 1");
    }
    if a.samples == Some(0) {
        usage!("--samples must be at least 1");
    }
    if a.sample_ms == Some(0) {
        usage!("--sample-ms must be at least 1");
    }
    if a.max_cpus == 0 {
        usage!("--max-cpus must be at least 1");
    }
    if a.pairs_per_relation == 0 {
        usage!("--pairs-per-relation must be at least 1");
    }
    if a.cpu.is_some() && (a.matrix || a.per_cpu) {
        usage!("--cpu does not apply to --matrix or --per-cpu (they choose their CPUs)");
    }
    if a.delays.as_ref().is_some_and(|d| d.is_empty()) {
        usage!("--delays needs at least one value");
    }
    let size = match a.size {
        Some(v) if v < lat::MIN_SIZE_BYTES => {
            usage!("--size {v} bytes is below the minimum of {} bytes", lat::MIN_SIZE_BYTES)
        }
        Some(v) if v < 2 * a.stride as u64 => {
            usage!("--size {v} bytes holds fewer than two elements of --stride {}", a.stride)
        }
        v => v,
    };
    if a.pages == Pages::Default {
        usage!("--pages default: lat needs a known page size; use 4k (THP refused), thp, 2m or 1g");
    }
    if let Some(p) = &a.pairs {
        if let Err(e) = parse_pairs(p) {
            usage!("--pairs {e}");
        }
    }
    Ok(size)
}

/// The `--json` document.
#[derive(Serialize)]
struct Doc<'a, T: Serialize> {
    /// [`results::SCHEMA_VERSION`].
    schema_version: u32,
    mode: &'a str,
    results: &'a [T],
    /// True when Ctrl-C stopped the measurement early (the first version
    /// called it `stopped`).
    interrupted: bool,
}

impl<'a, T: Serialize> Doc<'a, T> {
    fn new(mode: &'a str, results: &'a [T], interrupted: bool) -> Self {
        Doc { schema_version: results::SCHEMA_VERSION, mode, results, interrupted }
    }
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<()> {
    let size = validate(&args)?;
    let root = SysRoot::live();
    let topo = Topology::discover(&root)?;
    let stop = crate::signal::stop_flag();
    let bars = Bars::new(g.quiet);
    let mut timing = if args.matrix || args.per_cpu || args.sweep || args.loaded || args.c2c {
        Timing::quick()
    } else {
        Timing::default()
    };
    if let Some(n) = args.samples {
        timing.samples = n;
    }
    if let Some(ms) = args.sample_ms {
        timing.sample_time = Duration::from_millis(ms);
    }
    let opts = ChaseOpts {
        size_bytes: size,
        stride_bytes: args.stride,
        pages: args.pages.to_lat().unwrap_or(PageKind::NoThp),
        tlb_group_pages: args.tlb_pages,
        seed: args.seed,
    };
    let load_cpus = match &args.load_cpus {
        Some(spec) => Some(
            place::Allowed::current(&root)?
                .resolve_cpus(&spec.to_string(), &topo)
                .context("--load-cpus")?,
        ),
        None => None,
    };
    let pairs = args.pairs.as_deref().map(parse_pairs).transpose().map_err(anyhow::Error::msg)?;

    bench::counting::request(args.counters);
    let _lock = record::take_lock(args.save.wait, g.quiet, &stop)?;
    let rec = match args.save.saving() {
        true => {
            Some(Recording::open(g, &record::new_run(&root, Some(&topo), args.save.label.clone()))?)
        }
        false => None,
    };
    let saving = Saving { rec: rec.as_ref(), next: &bars };
    let ctx = Ctx { observer: &saving, stop: &stop, timing };
    let outcome = measure(&args, &topo, &opts, load_cpus, pairs, &ctx);
    let stopped = stop.is_stopped();
    if let Some(rec) = rec {
        let end = match &outcome {
            Err(e) => Outcome::Failed(e.to_string()),
            Ok(_) if stopped => Outcome::Interrupted,
            Ok(_) => Outcome::Complete,
        };
        rec.finish(end)?.tell(g.quiet);
    }
    let measured = outcome?;
    match &measured {
        Measured::Matrix(v) => print_matrix(v, g, stopped),
        Measured::Sweep(r) => print_sweep(r, g, stopped),
        Measured::PerCpu(r) => print_per_cpu(r, g, stopped),
        Measured::Loaded(v) => print_loaded(v, g, stopped),
        Measured::C2c(v) => print_c2c(v, g, stopped),
        Measured::Point(r) => print_point(r, g, stopped),
    }?;
    if args.counters && !g.json {
        print_counters(&measured, g)?;
    }
    Ok(())
}

/// The counters of the chase points (`--counters`); loaded latency and
/// core-to-core results carry none, and say so.
fn print_counters(m: &Measured, g: &Global) -> anyhow::Result<()> {
    let points: Vec<&LatResult> = match m {
        Measured::Matrix(v) => v.iter().collect(),
        Measured::Point(r) => vec![r],
        Measured::Sweep(r) => r.results.iter().collect(),
        Measured::PerCpu(r) => r.results.iter().collect(),
        Measured::Loaded(_) | Measured::C2c(_) => {
            output::warn(
                g.quiet,
                "--counters: recorded for chase points (point, matrix, sweep, per-cpu); \
                 loaded latency and core-to-core results carry none",
            );
            return Ok(());
        }
    };
    let rows: Vec<crate::counters::Row> = points
        .iter()
        .filter_map(|r| {
            Some(crate::counters::Row {
                label: format!(
                    "cpu {} -> node {}, {} KiB",
                    r.cpu,
                    node(r.mem_node),
                    r.size_bytes / 1024
                ),
                counters: r.counters.as_ref()?,
                counted_bytes: None,
            })
        })
        .collect();
    output::emit(&crate::counters::render(&rows))
}

/// What one `lat` invocation measured (one value per run: its size does
/// not matter).
#[allow(clippy::large_enum_variant)]
enum Measured {
    Matrix(Vec<LatResult>),
    Sweep(lat::SweepReport),
    PerCpu(lat::PerCpuReport),
    Loaded(Vec<lat::LoadedPoint>),
    C2c(Vec<lat::C2cResult>),
    Point(LatResult),
}

/// Runs the experiment the flags chose.
fn measure(
    args: &Args,
    topo: &Topology,
    opts: &ChaseOpts,
    load_cpus: Option<CpuSet>,
    pairs: Option<Vec<(u32, u32)>>,
    ctx: &Ctx<'_>,
) -> Result<Measured, LatError> {
    let at = Where { cpu: args.cpu, cpu_node: args.cpu_node, mem_node: args.mem_node };
    if args.matrix {
        return lat::matrix(topo, opts, ctx).map(Measured::Matrix);
    }
    if args.sweep {
        return lat::sweep(topo, &at, opts, ctx).map(Measured::Sweep);
    }
    if args.per_cpu {
        let spec = lat::PerCpuSpec { mem_node: args.mem_node, max_cpus: args.max_cpus };
        return lat::per_cpu(topo, &spec, opts, ctx).map(Measured::PerCpu);
    }
    if args.loaded {
        let spec = lat::LoadedSpec {
            at,
            load_cpus,
            kind: match args.load {
                Load::Read => LoadKind::Read,
                Load::Rw => LoadKind::Rw,
            },
            delays: args.delays.clone().unwrap_or_else(|| lat::loaded::DEFAULT_DELAYS.to_vec()),
            load_bytes_per_thread: None,
        };
        return lat::loaded(topo, &spec, opts, ctx).map(Measured::Loaded);
    }
    if args.c2c {
        let spec = c2c::C2cSpec {
            pairs: pairs.unwrap_or_default(),
            pairs_per_relation: args.pairs_per_relation,
            round_trips: 0,
        };
        return lat::c2c(topo, &spec, ctx).map(Measured::C2c);
    }
    lat::point(topo, &at, opts, ctx).map(Measured::Point)
}

fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

fn node(n: Option<u32>) -> String {
    n.map_or("-".into(), |n| n.to_string())
}

fn placement(r: &LatResult) -> String {
    match r.placement.status {
        PlacementStatus::Verified => "verified".into(),
        PlacementStatus::Unverified => "unverified".into(),
        PlacementStatus::Mismatch => {
            format!("MISMATCH ({:.0}% on node)", r.placement.pct_on_node().unwrap_or(0.0))
        }
    }
}

fn stopped_note(g: &Global, stopped: bool) {
    if stopped {
        output::warn(g.quiet, "stopped by Ctrl-C: showing what was measured");
    }
}

fn print_point(r: &LatResult, g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        return output::json(&Doc::new("point", std::slice::from_ref(r), stopped));
    }
    let mut t = output::table(
        [
            "CPU",
            "CPU node",
            "mem node",
            "size",
            "pages",
            "stride B",
            "median ns",
            "p90 ns",
            "p99 ns",
            "min ns",
            "max ns",
            "spread %",
            "placement",
        ]
        .map(String::from)
        .to_vec(),
    );
    t.add_row(point_row(r));
    output::emit(&t.to_string())?;
    stopped_note(g, stopped);
    Ok(())
}

fn point_row(r: &LatResult) -> Vec<String> {
    vec![
        r.cpu.to_string(),
        node(r.cpu_node),
        node(r.mem_node),
        lat::fmt_bytes(r.size_bytes),
        r.page_size.clone(),
        r.stride_bytes.to_string(),
        ns(r.median_ns),
        ns(r.p90_ns),
        ns(r.p99_ns),
        ns(r.min_ns),
        ns(r.max_ns),
        format!("{:.1}", r.spread_pct),
        placement(r),
    ]
}

fn print_matrix(v: &[LatResult], g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        return output::json(&Doc::new("matrix", v, stopped));
    }
    let mut mems: Vec<Option<u32>> = v.iter().map(|r| r.mem_node).collect();
    mems.dedup();
    mems.sort();
    mems.dedup();
    let mut cpus: Vec<Option<u32>> = v.iter().map(|r| r.cpu_node).collect();
    cpus.sort();
    cpus.dedup();
    let mut header = vec!["CPU node \\ mem node (ns)".to_string()];
    header.extend(mems.iter().map(|m| node(*m)));
    let mut t = output::table(header);
    for c in &cpus {
        let mut row = vec![node(*c)];
        for m in &mems {
            row.push(v.iter().find(|r| r.cpu_node == *c && r.mem_node == *m).map_or(
                "-".into(),
                |r| {
                    let flag =
                        if r.placement.status == PlacementStatus::Mismatch { " !" } else { "" };
                    format!("{}{flag}", ns(r.median_ns))
                },
            ));
        }
        t.add_row(row);
    }
    output::emit(&t.to_string())?;
    if let Some(r) = v.first() {
        output::emit(&format!(
            "median ns per dependent load; {} per cell, {} pages, stride {} B (! = pages not all on the node)",
            lat::fmt_bytes(r.size_bytes),
            r.page_size,
            r.stride_bytes
        ))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_sweep(r: &lat::SweepReport, g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        #[derive(Serialize)]
        struct SweepDoc<'a> {
            schema_version: u32,
            #[serde(flatten)]
            report: &'a lat::SweepReport,
            interrupted: bool,
        }
        return output::json(&SweepDoc {
            schema_version: results::SCHEMA_VERSION,
            report: r,
            interrupted: stopped,
        });
    }
    let mut t = output::table(
        ["size", "median ns", "p90 ns", "spread %", "cache"].map(String::from).to_vec(),
    );
    let mut prev = 0u64;
    for p in &r.results {
        let marks: Vec<String> = r
            .caches
            .iter()
            .filter(|c| c.size_bytes > prev && c.size_bytes <= p.size_bytes)
            .map(|c| format!("L{} = {}", c.level, lat::fmt_bytes(c.size_bytes)))
            .collect();
        t.add_row(vec![
            lat::fmt_bytes(p.size_bytes),
            ns(p.median_ns),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
            if marks.is_empty() { String::new() } else { format!("past {}", marks.join(", ")) },
        ]);
        prev = p.size_bytes;
    }
    output::emit(&t.to_string())?;
    let mut pt = output::table(
        ["plateau", "from", "to", "latency ns", "cache size (topology)"].map(String::from).to_vec(),
    );
    for p in &r.plateaus {
        pt.add_row(vec![
            p.label.clone(),
            lat::fmt_bytes(p.from_bytes),
            lat::fmt_bytes(p.to_bytes),
            ns(p.latency_ns),
            p.cache_bytes.map_or("-".into(), lat::fmt_bytes),
        ]);
    }
    output::emit(&pt.to_string())?;
    if let Some(p) = r.results.first() {
        output::emit(&format!(
            "CPU {}, memory node {}, {} pages, stride {} B",
            r.cpu,
            node(r.mem_node),
            p.page_size,
            p.stride_bytes
        ))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_per_cpu(r: &lat::PerCpuReport, g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        #[derive(Serialize)]
        struct PerCpuDoc<'a> {
            schema_version: u32,
            #[serde(flatten)]
            report: &'a lat::PerCpuReport,
            interrupted: bool,
        }
        return output::json(&PerCpuDoc {
            schema_version: results::SCHEMA_VERSION,
            report: r,
            interrupted: stopped,
        });
    }
    let mut t = output::table(
        ["CPU", "CPU node", "median ns", "p90 ns", "spread %", "placement"]
            .map(String::from)
            .to_vec(),
    );
    for p in &r.results {
        t.add_row(vec![
            p.cpu.to_string(),
            node(p.cpu_node),
            ns(p.median_ns),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
            placement(p),
        ]);
    }
    output::emit(&t.to_string())?;
    let mut gt = output::table(
        ["group", "CPUs", "OS nodes", "median ns", "min ns", "max ns"].map(String::from).to_vec(),
    );
    for (i, grp) in r.groups.iter().enumerate() {
        gt.add_row(vec![
            (i + 1).to_string(),
            grp.cpus.to_string(),
            grp.os_nodes.to_string(),
            ns(grp.median_ns),
            ns(grp.min_ns),
            ns(grp.max_ns),
        ]);
    }
    output::emit(&gt.to_string())?;
    output::emit(&format!(
        "memory node {}; {} latency group(s), noise {} ns",
        node(r.mem_node),
        r.groups.len(),
        ns(r.noise_ns)
    ))?;
    if let Some(n) = &r.note {
        output::emit(&format!("note: {n}"))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_loaded(v: &[lat::LoadedPoint], g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        return output::json(&Doc::new("loaded", v, stopped));
    }
    let mut t = output::table(
        ["delay", "latency ns", "p90 ns", "spread %", "load GB/s", "load threads"]
            .map(String::from)
            .to_vec(),
    );
    for p in v {
        t.add_row(vec![
            p.delay.to_string(),
            ns(p.latency_ns),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
            format!("{:.2}", p.load_gbs),
            p.load_threads.to_string(),
        ]);
    }
    output::emit(&t.to_string())?;
    if let Some(p) = v.first() {
        output::emit(&format!(
            "chase on CPU {} to node {} ({}, {} pages); load: {}, GB/s = 1e9 B/s",
            p.cpu,
            node(p.mem_node),
            lat::fmt_bytes(p.size_bytes),
            p.page_size,
            match p.load_kind {
                LoadKind::Read => "read (64 B per line)",
                LoadKind::Rw => "read+write (128 B per line)",
            }
        ))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_c2c(v: &[c2c::C2cResult], g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        return output::json(&Doc::new("c2c", v, stopped));
    }
    let mut t = output::table(
        ["CPU a", "CPU b", "relation", "one-way ns", "p90 ns", "spread %"]
            .map(String::from)
            .to_vec(),
    );
    for p in v {
        t.add_row(vec![
            p.cpu_a.to_string(),
            p.cpu_b.to_string(),
            p.relation.map_or("unknown", |r| r.name()).to_string(),
            ns(p.median_ns),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
        ]);
    }
    output::emit(&t.to_string())?;
    output::emit(
        "one-way latency = half the round trip of a cache line bounced between the two CPUs",
    )?;
    stopped_note(g, stopped);
    Ok(())
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
