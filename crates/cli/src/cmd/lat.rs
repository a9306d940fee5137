//! `numaprobe lat`: memory latency by dependent pointer chase (one point,
//! node matrix, size sweep, per-CPU with clustering, loaded, core-to-core).

use std::time::Duration;

use anyhow::Context;

use bench::lat::{self, c2c, ChaseOpts, Ctx, LatError, Timing, Where};
use results::disturbance::Disturbance;
use results::lat::{LatResult, LoadKind, PrefetchCheck};
use results::pages::PageKind;
use results::placement::PlacementStatus;
use serde::Serialize;
use topo::{CpuSet, SysRoot, Topology};

use crate::cli::Global;
use crate::grammar;
use crate::output;
use crate::progress::Bars;
use crate::record::{self, Outcome, Recording, SaveArgs, Saving};
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
    #[arg(long, value_name = "PAGES", value_enum, default_value = "4k")]
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

    /// --per-cpu: measure at most this many CPUs, spread evenly.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = grammar::threads)]
    pub max_cpus: usize,
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
    let declared = args.declare.resolve()?;
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
    let rec = match args.save.saving() || !declared.is_empty() {
        true => Some(Recording::open(
            g,
            &crate::declare::new_run(&root, Some(&topo), args.save.label.clone(), &declared),
        )?),
        false => None,
    };
    let saving = Saving { rec: rec.as_ref(), next: &bars };
    let ctx = Ctx { observer: &saving, stop: &stop, timing };
    let outcome = measure(&args, &topo, &opts, load_cpus, pairs, &ctx);
    let stopped = stop.is_stopped();
    if let Some(rec) = rec {
        rec.finish(Outcome::of(&outcome, stopped))?.tell(g.quiet);
    }
    let measured = outcome?;
    match &measured {
        Measured::Matrix(v) => print_matrix(v, g, stopped),
        Measured::Sweep(r) => print_sweep(r, g, stopped),
        Measured::PerCpu(r) => print_per_cpu(r, g, stopped),
        Measured::Loaded(v) => print_loaded(v, g, stopped),
        Measured::C2c(v) => print_c2c(v, g, stopped),
        Measured::Point(r, check) => print_point(r, check.as_ref(), g, stopped),
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
        Measured::Point(r, _) => vec![r.as_ref()],
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

/// What one `lat` invocation measured.
enum Measured {
    Matrix(Vec<LatResult>),
    Sweep(lat::SweepReport),
    PerCpu(lat::PerCpuReport),
    Loaded(lat::LoadedReport),
    C2c(Vec<results::lat::C2cResult>),
    /// The point and, unless skipped, the prefetch check.
    Point(Box<LatResult>, Option<PrefetchCheck>),
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
            mixes: mixes(args),
            delays_ns: args
                .delays
                .clone()
                .unwrap_or_else(|| lat::loaded::DEFAULT_DELAYS_NS.to_vec()),
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
    let point = lat::point(topo, &at, opts, ctx)?;
    // The prefetch check: short, after the point, skipped when the point
    // itself chases at 64 B or the user said so.
    let check = if args.no_prefetch_check || opts.stride_bytes == lat::CACHE_STRIDE_BYTES {
        None
    } else {
        let quick = Ctx { timing: Timing::quick(), ..*ctx };
        match lat::prefetch_check(topo, &at, opts, &quick) {
            Ok(c) => Some(c),
            Err(LatError::Stopped) => None,
            Err(e) => return Err(e),
        }
    };
    Ok(Measured::Point(Box::new(point), check))
}

fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// A figure in ns, marked ` (disturbed)` when it is not stable.
fn ns_marked(v: f64, stable: bool) -> String {
    if stable {
        ns(v)
    } else {
        format!("{} (disturbed)", ns(v))
    }
}

/// The line under a table when samples were discarded: how many, and why
/// (the figure stands on the clean ones).
fn discarded_line<'a>(ds: impl IntoIterator<Item = Option<&'a Disturbance>>) -> Option<String> {
    let ds: Vec<&Disturbance> = ds.into_iter().flatten().collect();
    let discarded: usize = ds.iter().map(|d| d.disturbed).sum();
    if discarded == 0 {
        return None;
    }
    let all: usize = ds.iter().map(|d| d.clean + d.disturbed).sum();
    let worst = ds.iter().max_by(|a, b| a.lost_pct.total_cmp(&b.lost_pct))?;
    Some(format!(
        "disturbance: {discarded} of {all} samples discarded (the measuring thread waited to run \
         beyond {}% of a sample); up to {:.0}% of the time lost; (disturbed) = too few clean \
         samples or more than {:.0}% of the time lost",
        results::disturbance::SAMPLE_TOLERANCE_PCT,
        worst.lost_pct,
        results::disturbance::LOST_LIMIT_PCT
    ))
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
        output::warn(
            g.quiet,
            &format!("stopped by {}: showing what was measured", crate::signal::cause()),
        );
    }
}

/// The method line under every chase table.
fn method_line(r: &LatResult) -> String {
    format!(
        "method: {}",
        results::lat::method_caption(r.stride_bytes as u64, Some(r.tlb_group_bytes), &r.page_size)
    )
}

fn print_point(
    r: &LatResult,
    check: Option<&PrefetchCheck>,
    g: &Global,
    stopped: bool,
) -> anyhow::Result<()> {
    if g.json {
        #[derive(Serialize)]
        struct PointDoc<'a> {
            #[serde(flatten)]
            doc: Doc<'a, LatResult>,
            /// The stride-64 comparison (absent when skipped).
            #[serde(skip_serializing_if = "Option::is_none")]
            prefetch_check: Option<&'a PrefetchCheck>,
        }
        return output::json(&PointDoc {
            doc: Doc::new("point", std::slice::from_ref(r), stopped),
            prefetch_check: check,
        });
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
    output::emit(&method_line(r))?;
    if let Some(l) = discarded_line([r.disturbance.as_ref()]) {
        output::emit(&l)?;
    }
    if let Some(c) = check {
        output::emit(&format!(
            "prefetch check ({} on node {}): {}",
            topo::units::binary_size(c.size_bytes),
            node(c.mem_node),
            c.note
        ))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn point_row(r: &LatResult) -> Vec<String> {
    vec![
        r.cpu.to_string(),
        node(r.cpu_node),
        node(r.mem_node),
        topo::units::binary_size(r.size_bytes),
        r.page_size.clone(),
        r.stride_bytes.to_string(),
        ns_marked(r.median_ns, r.stable),
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
                    format!("{}{flag}", ns_marked(r.median_ns, r.stable))
                },
            ));
        }
        t.add_row(row);
    }
    output::emit(&t.to_string())?;
    if let Some(r) = v.first() {
        output::emit(&format!(
            "median ns per dependent load; {} per cell (! = pages not all on the node)",
            topo::units::binary_size(r.size_bytes),
        ))?;
        output::emit(&method_line(r))?;
    }
    if let Some(l) = discarded_line(v.iter().map(|r| r.disturbance.as_ref())) {
        output::emit(&l)?;
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
        ["size", "stride B", "median ns", "p90 ns", "spread %", "cache"].map(String::from).to_vec(),
    );
    let mut prev = 0u64;
    for p in &r.results {
        let marks: Vec<String> = r
            .caches
            .iter()
            .filter(|c| c.size_bytes > prev && c.size_bytes <= p.size_bytes)
            .map(|c| format!("L{} = {}", c.level, topo::units::binary_size(c.size_bytes)))
            .collect();
        t.add_row(vec![
            topo::units::binary_size(p.size_bytes),
            p.stride_bytes.to_string(),
            ns_marked(p.median_ns, p.stable),
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
            topo::units::binary_size(p.from_bytes),
            topo::units::binary_size(p.to_bytes),
            ns(p.latency_ns),
            p.cache_bytes.map_or("-".into(), topo::units::binary_size),
        ]);
    }
    output::emit(&pt.to_string())?;
    if let (Some(first), Some(last)) = (r.results.first(), r.results.last()) {
        output::emit(&format!("CPU {}, memory node {}", r.cpu, node(r.mem_node)))?;
        let strides = if first.stride_bytes == last.stride_bytes {
            String::new()
        } else {
            format!(
                " (stride {} B while the ring fits in the last-level cache: every cache set used)",
                first.stride_bytes
            )
        };
        output::emit(&format!("{}{strides}", method_line(last)))?;
    }
    if let Some(l) = discarded_line(r.results.iter().map(|p| p.disturbance.as_ref())) {
        output::emit(&l)?;
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
            ns_marked(p.median_ns, p.stable),
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
    if let Some(p) = r.results.first() {
        output::emit(&method_line(p))?;
    }
    if let Some(l) = discarded_line(r.results.iter().map(|p| p.disturbance.as_ref())) {
        output::emit(&l)?;
    }
    if let Some(n) = &r.note {
        output::emit(&format!("note: {n}"))?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_loaded(r: &lat::LoadedReport, g: &Global, stopped: bool) -> anyhow::Result<()> {
    if g.json {
        #[derive(Serialize)]
        struct LoadedDoc<'a> {
            #[serde(flatten)]
            doc: Doc<'a, results::lat::LoadedPoint>,
            /// One summary per mix: the knee.
            curves: &'a [results::lat::LoadedSummary],
        }
        return output::json(&LoadedDoc {
            doc: Doc::new("loaded", &r.points, stopped),
            curves: &r.curves,
        });
    }
    let mut t = output::table(
        [
            "mix",
            "delay ns",
            "load GB/s",
            "read GB/s",
            "write GB/s",
            "median ns",
            "p90 ns",
            "p99 ns",
            "spread %",
        ]
        .map(String::from)
        .to_vec(),
    );
    let gbs = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    for p in &r.points {
        t.add_row(vec![
            p.load_kind.name().to_string(),
            match (p.idle, p.delay_ns) {
                (true, _) => "idle".into(),
                (false, Some(d)) => format!("{d:.0}"),
                (false, None) => format!("{} it", p.delay),
            },
            format!("{:.2}", p.load_gbs),
            gbs(p.read_gbs),
            gbs(p.write_gbs),
            ns_marked(p.latency_ns, p.stable),
            ns(p.p90_ns),
            ns(p.p99_ns),
            format!("{:.1}", p.spread_pct),
        ]);
    }
    output::emit(&t.to_string())?;
    if !r.curves.is_empty() {
        let mut k = output::table(
            [
                "mix",
                "idle ns",
                &format!("knee GB/s (+{:.0}%)", results::lat::KNEE_PCT),
                "usable GB/s (latency < 2x idle)",
                "peak GB/s",
                "latency at peak ns",
            ]
            .map(String::from)
            .to_vec(),
        );
        for c in &r.curves {
            let kn = &c.knee;
            k.add_row(vec![
                c.load_kind.name().to_string(),
                ns(kn.idle_ns),
                kn.knee_gbs.map_or("not reached".into(), |v| format!("{v:.2}")),
                if kn.doubled {
                    format!("{:.2}", kn.usable_gbs)
                } else {
                    format!("{:.2} (never doubled)", kn.usable_gbs)
                },
                format!("{:.2}", kn.peak_gbs),
                ns(kn.peak_ns),
            ]);
        }
        output::emit(&k.to_string())?;
        for c in &r.curves {
            output::emit(&format!("{}: {}", c.load_kind.name(), c.knee.verdict()))?;
        }
    }
    if let Some(p) = r.points.first() {
        output::emit(&format!(
            "chase on CPU {} to node {} ({}), {} load thread(s) on the same node; \
             waits calibrated in ns; GB/s = 1e9 B/s, measured from the lines moved",
            p.cpu,
            node(p.mem_node),
            topo::units::binary_size(p.size_bytes),
            p.load_threads,
        ))?;
        output::emit(&format!(
            "method: {}",
            results::lat::method_caption(
                p.stride_bytes.unwrap_or(lat::DEFAULT_STRIDE_BYTES) as u64,
                p.tlb_group_bytes,
                &p.page_size
            )
        ))?;
        if let Some(lp) = &p.load_placement {
            if lp.status == PlacementStatus::Mismatch {
                output::warn(g.quiet, "the load threads' buffers are not all on the node");
            }
        }
    }
    if let Some(l) = discarded_line(r.points.iter().map(|p| p.disturbance.as_ref())) {
        output::emit(&l)?;
    }
    stopped_note(g, stopped);
    Ok(())
}

fn print_c2c(v: &[results::lat::C2cResult], g: &Global, stopped: bool) -> anyhow::Result<()> {
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
            ns_marked(p.median_ns, p.stable),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
        ]);
    }
    output::emit(&t.to_string())?;
    output::emit(
        "one-way latency = half the round trip of a cache line bounced between the two CPUs",
    )?;
    if let Some(l) = discarded_line(v.iter().map(|p| p.disturbance.as_ref())) {
        output::emit(&l)?;
    }
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
