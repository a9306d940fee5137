//! `numaprobe topo`: what the machine is. Packages, caches, NUMA nodes,
//! distances, HMAT, memory tiers, devices, CPU/memory limits, the kernel
//! options that matter and the NUMA mode. Documented in docs/topo.md.

use std::path::{Path, PathBuf};

use console::topo::{FromRun, TopoDoc};
use topo::{SysRoot, TopoError, Topology};

use crate::invocation::Invocation;
use crate::output::TableStyle;
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read sysfs/procfs under DIR (an unpacked capture holding `sys/` and
    /// `proc/`) instead of the running machine.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Show a saved run's measured bandwidth and latency beside the
    /// declared HMAT figures, with the ratio and the flag (REF: a run id,
    /// label, `latest` or `latest~N`).
    #[arg(long, value_name = "REF")]
    pub from_run: Option<String>,
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    let t = discover(args.root.as_deref())?;
    let measured = match &args.from_run {
        Some(r) => Some(from_run(&t, args.root.as_deref(), r, g)?),
        None => None,
    };
    let text = |style| topo_text(&t, measured.as_ref(), style, g);
    let doc = TopoDoc::new(&t, measured.as_ref());
    match &measured {
        None => g.answer_own(&doc, text),
        Some(_) => g.answer_own_sorted(&doc, text),
    }
}

/// The topology as text, and the measured figures after it; its warnings
/// go to stderr.
fn topo_text(
    t: &Topology,
    measured: Option<&FromRun>,
    style: TableStyle,
    g: &Invocation,
) -> String {
    // The memory the nodes show against the system's is said once, beside
    // the sizes at the top of the text: not on stderr, not in the text's
    // Warnings section (the other warnings are in both).
    let shown_in_text = t.nodes_short_of_system().is_some();
    for w in &t.warnings {
        if !(shown_in_text && w.problem.starts_with(topo::NODES_SHORT_OF_SYSTEM)) {
            g.warn(&w.to_string());
        }
    }
    let mut s = console::topo::render(t, style);
    if let Some(m) = measured {
        s.push_str(&m.text());
    }
    s
}

/// A saved run's measured figures beside this machine's declared HMAT.
fn from_run(t: &Topology, root: Option<&Path>, r: &str, g: &Invocation) -> anyhow::Result<FromRun> {
    let run = super::store::load_for(g, "--from-run", r)?;
    let sys = match root {
        Some(d) => SysRoot::new(d).map_err(one_line)?,
        None => SysRoot::live(),
    };
    let m = FromRun::new(t, &run, audit::fingerprint::machine_fingerprint(&sys, t));
    if !m.same_machine {
        g.warn(&format!(
            "run {} was measured on another machine (fingerprint {}, this one {}): its \
                 figures may not describe this machine's HMAT",
            m.run_id, m.run_machine_fingerprint, m.machine_fingerprint
        ));
    }
    Ok(m)
}

/// Discovers the machine under `root` (the running one when `None`). A
/// root that does not exist is a usage error (exit 2); a malformed file
/// is a one-line error naming it (exit 1). Other commands may call this.
pub fn discover(root: Option<&Path>) -> anyhow::Result<Topology> {
    let sys = match root {
        None => SysRoot::live(),
        Some(dir) => match SysRoot::new(dir) {
            Ok(r) => r,
            Err(TopoError::NoRoot(p)) => {
                usage!("--root {}: no such directory", p.display())
            }
            Err(e) => return Err(one_line(e)),
        },
    };
    Topology::discover(&sys).map_err(one_line)
}

/// The error as one line (file contents quoted in messages may hold
/// newlines).
fn one_line(e: TopoError) -> anyhow::Error {
    anyhow::anyhow!(e.to_string().replace('\n', "\\n"))
}
