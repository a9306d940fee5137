//! `numaprobe scan --mem-node N [--chunk 1G]`: read bandwidth of one
//! node chunk by chunk over a bounded part of what it can spare (all of it
//! with `--size all`), chunks below the median by more than the noise
//! re-measured against a reference chunk and flagged when they stay slow,
//! and (as root) each chunk's physical address ranges. The measuring is
//! [`bench::scan`].

use anyhow::Context;
use bench::scan::{self, ScanSpec};
use console::scan as scan_text;
use results::pages::PageKind;
use topo::{SysRoot, Topology};

use crate::grammar;
use crate::invocation::Invocation;
use crate::usage;

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  numaprobe scan --mem-node 0\n  \
    sudo numaprobe scan --mem-node 2 --chunk 512M --size 16G")]
pub struct Args {
    /// The memory node to scan.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub mem_node: u32,
    /// Bytes per chunk (default 1 GiB; an eighth of the total when 1 GiB
    /// is more than a quarter of it, said on stderr).
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub chunk: Option<u64>,
    /// Bytes to fill in all, in whole chunks, or `all`: everything the
    /// node can spare (keeping numaprobe's reserve free). Default: half of
    /// what the node can spare, at most 8 GiB, so a machine others use
    /// keeps its memory. More than the node can spare is refused before
    /// anything is allocated.
    #[arg(long, value_name = "SIZE|all", value_parser = total)]
    pub size: Option<Total>,
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
    #[arg(long, value_name = "PAGES", value_parser = crate::grammar::closed::pages(), default_value = "thp")]
    pub pages: PageKind,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
}

pub use bench::scan::Total;

/// Parses `--size`: `all`, or a size in the common grammar.
pub(crate) fn total(s: &str) -> Result<Total, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        Ok(Total::All)
    } else {
        grammar::size(s).map(Total::Bytes)
    }
}

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    let root = SysRoot::live();
    let t = Topology::discover(&root)?;
    let (spec, sized) = plan(&a, g, &root, &t)?;
    let stop = crate::signal::stop_flag();
    let _lock = g.take_lock(a.wait, &stop)?;
    let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let got = scan::run(&spec, &obs, &stop)?;
    render(g, &spec, &sized, &got, stop.is_stopped())
}

/// The scan the flags ask for on this machine: the nodes checked against
/// what this process may use, the reading CPUs and the chunks sized to
/// what the node can spare (said on stderr when the sizing changed them).
fn plan(
    a: &Args,
    g: &Invocation,
    root: &SysRoot,
    t: &Topology,
) -> anyhow::Result<(ScanSpec, scan::Sizing)> {
    let allowed = place::Allowed::current(root)?;
    let node: topo::NodeSet = [a.mem_node].into_iter().collect();
    if let Err(e) = allowed.check_mem_nodes(&node, t) {
        usage!("--mem-node {}: {e}", a.mem_node);
    }
    let cpu_node = match a.cpu_node.or_else(|| scan::nearest_cpu_node(t, a.mem_node)) {
        Some(n) => n,
        None => usage!("no node with CPUs to read node {} from", a.mem_node),
    };
    let usable = match allowed.check_cpu_node(cpu_node, t) {
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
    let mem = place::node_memory(root, a.mem_node)
        .with_context(|| format!("reading node {}'s free memory", a.mem_node))?;
    let page = place::base_page_size() as u64;
    let sized = match scan::sizing(&mem, a.size, a.chunk, cpus.len(), page) {
        Ok(s) => s,
        Err(e) => usage!("{}", console::scan::refusal(&e)),
    };
    if let Some(w) = &sized.smaller_chunk {
        g.warn(w);
    }
    if let Some(w) = sized.left_over.as_deref().filter(|_| !g.quiet && !g.json) {
        g.warn(w);
    }
    let spec = ScanSpec {
        mem_node: a.mem_node,
        cpus,
        chunks: sized.chunks,
        chunk_bytes: sized.chunk_bytes,
        reps: a.reps,
        pages: a.pages,
        physical: is_root(),
    };
    Ok((spec, sized))
}

/// What was scanned, as the `--json` document or the table.
fn render(
    g: &Invocation,
    spec: &ScanSpec,
    sized: &scan::Sizing,
    got: &[scan::Chunk],
    interrupted: bool,
) -> anyhow::Result<()> {
    let (chunk, chunks) = (sized.chunk_bytes, sized.chunks);
    let cpu_set: topo::CpuSet = spec.cpus.iter().copied().collect();
    let doc = scan_text::Doc {
        unit: "GB/s = 1e9 bytes/s",
        mem_node: spec.mem_node,
        cpus: cpu_set.to_list(),
        chunk_bytes: got.first().map_or(chunk, |c| c.bytes),
        chunks_planned: chunks,
        total_bytes: chunk * chunks as u64,
        spare_bytes: sized.spare_bytes,
        total_from: sized.total_from,
        interrupted,
        physical: got.iter().any(|c| c.phys.is_some()),
        chunks: got,
        verdict: scan::verdict(got),
    };
    g.answer(results::SCHEMA_VERSION, &doc, |style| scan_text::render(&doc, style))?;
    if interrupted && !g.json {
        g.warn(&format!(
            "interrupted: the table holds the chunks measured before {}",
            crate::signal::cause()
        ));
    }
    Ok(())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_takes_all_or_a_size() {
        assert_eq!(total("all"), Ok(Total::All));
        assert_eq!(total("ALL"), Ok(Total::All));
        assert_eq!(total("1G"), Ok(Total::Bytes(1 << 30)));
        assert!(total("lots").is_err());
    }
}
