//! `numaprobe scan --mem-node N [--chunk 1G]`: read bandwidth of one
//! node chunk by chunk over most of what it can spare, chunks below the
//! median by more than the noise flagged, and (as root) each chunk's
//! physical address ranges. The measuring is [`bench::scan`].

use anyhow::Context;
use bench::scan::{self, Chunk, ScanSpec, Verdict};
use serde::Serialize;
use topo::{SysRoot, Topology};

use crate::cli::Global;
use crate::grammar::{self, Pages};
use crate::{output, record, usage};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  numaprobe scan --mem-node 0\n  \
    sudo numaprobe scan --mem-node 2 --chunk 512M --size 16G")]
pub struct Args {
    /// The memory node to scan.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub mem_node: u32,
    /// Bytes per chunk.
    #[arg(long, value_name = "SIZE", value_parser = grammar::size, default_value = "1G")]
    pub chunk: u64,
    /// Bytes to fill in all (default: what the node can spare, keeping
    /// numaprobe's reserve free, in whole chunks). More than the node can
    /// spare is refused before anything is allocated.
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// Node whose CPUs read (default: the node itself, or the nearest node
    /// with CPUs for a CPU-less node).
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub cpu_node: Option<u32>,
    /// Reading threads (default: every usable CPU of the CPU node).
    #[arg(long, value_name = "N", value_parser = grammar::threads)]
    pub threads: Option<usize>,
    /// Timed repetitions per chunk (the best is the figure).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = grammar::scan_reps)]
    pub reps: usize,
    /// Pages for the chunks.
    #[arg(long, value_name = "PAGES", value_enum, default_value = "thp")]
    pub pages: Pages,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Serialize)]
struct Doc<'a> {
    schema_version: u32,
    unit: &'static str,
    mem_node: u32,
    cpus: String,
    chunk_bytes: u64,
    chunks_planned: usize,
    /// Ctrl-C stopped the scan: `chunks` holds what was measured.
    interrupted: bool,
    /// Whether physical ranges were readable (root).
    physical: bool,
    chunks: &'a [Chunk],
    verdict: Verdict,
}

/// The nearest node with CPUs to `node` (itself when it has CPUs).
fn nearest_cpu_node(t: &Topology, node: u32) -> Option<u32> {
    let with_cpus: Vec<u32> = t.cpu_nodes().map(|n| n.id).collect();
    if with_cpus.contains(&node) {
        return Some(node);
    }
    with_cpus.into_iter().min_by_key(|&c| (t.distance(c, node).unwrap_or(u32::MAX), c))
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<()> {
    let root = SysRoot::live();
    let t = Topology::discover(&root)?;
    let allowed = place::Allowed::current(&root)?;
    let node: topo::NodeSet = [a.mem_node].into_iter().collect();
    if let Err(e) = allowed.check_mem_nodes(&node, &t) {
        usage!("--mem-node {}: {e}", a.mem_node);
    }
    if a.chunk == 0 {
        usage!("--chunk 0: a chunk needs at least one page");
    }
    let cpu_node = match a.cpu_node.or_else(|| nearest_cpu_node(&t, a.mem_node)) {
        Some(n) => n,
        None => usage!("no node with CPUs to read node {} from", a.mem_node),
    };
    let usable = match allowed.check_cpu_node(cpu_node, &t) {
        Ok(c) => c,
        Err(e) => usage!("--cpu-node {cpu_node}: {e}"),
    };
    let mut cpus: Vec<u32> = usable.iter().collect();
    if let Some(n) = a.threads {
        if n == 0 || n > cpus.len() {
            usage!("--threads {n}: node {cpu_node} has {} usable CPU(s)", cpus.len());
        }
        cpus.truncate(n);
    }
    let mem = place::node_memory(&root, a.mem_node)
        .with_context(|| format!("reading node {}'s free memory", a.mem_node))?;
    let spare = mem.spare_bytes;
    let page = place::base_page_size() as u64;
    let total = match a.size {
        Some(s) if s > spare => usage!(
            "--size {s} bytes: node {} can spare {} MiB ({} MiB available, {} MiB kept free); \
             nothing was allocated",
            a.mem_node,
            spare >> 20,
            mem.available_bytes >> 20,
            mem.reserve_bytes >> 20
        ),
        Some(s) => s,
        None => spare,
    };
    let chunk = a.chunk.min(total) / page * page;
    if chunk < page * cpus.len() as u64 {
        usage!(
            "node {} can spare {} MiB: too little to scan in chunks of {} bytes",
            a.mem_node,
            spare >> 20,
            a.chunk
        );
    }
    let chunks = (total / chunk) as usize;
    let physical = is_root();
    let spec = ScanSpec {
        mem_node: a.mem_node,
        cpus: cpus.clone(),
        chunks,
        chunk_bytes: chunk,
        reps: a.reps,
        pages: a.pages.to_place(),
        physical,
    };
    let stop = crate::signal::stop_flag();
    let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
    let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let got = scan::run(&spec, &obs, &stop)?;
    let interrupted = stop.is_stopped();
    let verdict = scan::verdict(&got);
    let cpu_set: topo::CpuSet = cpus.iter().copied().collect();
    let doc = Doc {
        schema_version: results::SCHEMA_VERSION,
        unit: "GB/s = 1e9 bytes/s",
        mem_node: a.mem_node,
        cpus: cpu_set.to_list(),
        chunk_bytes: got.first().map_or(chunk, |c| c.bytes),
        chunks_planned: chunks,
        interrupted,
        physical: got.iter().any(|c| c.phys.is_some()),
        chunks: &got,
        verdict,
    };
    if g.json {
        return output::json(&doc);
    }
    output::emit(&render(&doc))?;
    if interrupted {
        output::warn(
            g.quiet,
            &format!(
                "interrupted: the table holds the chunks measured before {}",
                crate::signal::cause()
            ),
        );
    }
    Ok(())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn phys_text(c: &Chunk) -> String {
    match &c.phys {
        None => "-".into(),
        Some(r) if r.is_empty() => "none present".into(),
        Some(r) => {
            let first = r.first().expect("not empty");
            let last = r.last().expect("not empty");
            format!("{:#x}-{:#x} ({} range(s))", first.start, last.end - 1, r.len())
        }
    }
}

fn render(d: &Doc) -> String {
    let mut s = format!(
        "Read bandwidth of node {} by chunk of {} MiB, CPUs {} (GB/s = 1e9 B/s)\n\n",
        d.mem_node,
        d.chunk_bytes >> 20,
        d.cpus
    );
    let mut t = output::table(
        ["chunk", "GB/s", "spread", "on node", "physical addresses", "flag"]
            .map(String::from)
            .to_vec(),
    );
    for c in d.chunks {
        let slow = d.verdict.slow.contains(&c.index);
        t.add_row(vec![
            c.index.to_string(),
            format!("{:.2}", c.best_gbs),
            format!("{:.1}%", c.spread_pct),
            format!("{:.0}%", c.on_node * 100.0),
            phys_text(c),
            if slow { "SLOW".into() } else { String::new() },
        ]);
    }
    s.push_str(&format!("{t}\n"));
    s.push_str(&format!(
        "\n{} of {} planned chunk(s) measured; median {:.2} GB/s; flagged below the median by \
         more than {:.1}% (the chunks' median spread, at least {:.0}%): {}\n",
        d.chunks.len(),
        d.chunks_planned,
        d.verdict.median_gbs,
        d.verdict.margin_pct,
        scan::MIN_MARGIN_PCT,
        if d.verdict.slow.is_empty() {
            "none".to_string()
        } else {
            d.verdict.slow.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        }
    ));
    if !d.physical {
        s.push_str("Physical addresses need root (/proc/self/pagemap hides frame numbers).\n");
    }
    s
}
