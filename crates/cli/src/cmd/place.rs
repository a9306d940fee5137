//! `numaprobe place`: try the placement layer. Parses the flags, runs
//! [`place::probe`] (pin, set a memory policy, allocate and first-touch a
//! buffer, ask the kernel where the pages are with `move_pages`, judge that
//! against an expectation) and prints its report. Documented in
//! docs/place.md.

use anyhow::Context;
use place::{Allowed, MemPolicy, Pin, PlaceError, ProbeSpec};
use results::pages::PageKind;
use topo::NodeSet;
use topo::{SysRoot, Topology};

use crate::grammar;
use crate::invocation::Invocation;
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Pin to this CPU (default: the CPU numaprobe starts on).
    #[arg(long, value_name = "CPU", conflicts_with = "cpu_node", value_parser = grammar::cpu)]
    pub cpu: Option<u32>,
    /// Run on the (allowed) CPUs of this node.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub cpu_node: Option<u32>,
    /// Memory policy (default: bind when --mem-nodes is given, else local).
    #[arg(long, value_name = "POLICY", value_enum)]
    pub policy: Option<MemPolicyKind>,
    /// Nodes for the policy: `0-3,8`, `all`, `!2` (all but 2), `+0` (first
    /// allowed node).
    #[arg(long, value_name = "NODES")]
    pub mem_nodes: Option<String>,
    /// Buffer size, e.g. 64M, 1.5G, 2GB (64M = 64 MiB; GB = 10^9 bytes).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = grammar::size)]
    pub size: u64,
    /// Pages of the buffer (default: what the kernel gives, which is what
    /// this command shows).
    #[arg(long, value_name = "PAGES", value_parser = crate::grammar::closed::pages(), default_value = "default")]
    pub pages: PageKind,
    /// How the policy is applied: `range` (mbind on the buffer) or
    /// `thread` (set_mempolicy on the touching thread).
    #[arg(long, value_name = "HOW", value_enum, default_value = "range")]
    pub via: Via,
    /// Nodes the pages must be on (a set as for --mem-nodes). Default: the
    /// policy's nodes (local/default: the node of the CPU).
    #[arg(long, value_name = "NODES")]
    pub expect: Option<String>,
    /// Share of pages that must be on the expected nodes (0..1).
    #[arg(long, value_name = "FRACTION", default_value_t = place::DEFAULT_THRESHOLD,
          value_parser = grammar::fraction)]
    pub threshold: f64,
    /// For interleave policies: largest allowed deviation of a node's share
    /// from its expected share (absolute, 0..1).
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05, value_parser = grammar::fraction)]
    pub spread_tolerance: f64,
    /// Pages to ask the kernel about (0 = every page).
    #[arg(long, value_name = "N", default_value_t = 65536, value_parser = grammar::page_samples)]
    pub samples: usize,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
}

/// `--policy`: the memory policies `place` can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemPolicyKind {
    /// Only these nodes (MPOL_BIND).
    #[value(alias = "membind")]
    Bind,
    /// One node first, others when it is full (MPOL_PREFERRED).
    Preferred,
    /// These nodes first (MPOL_PREFERRED_MANY, Linux 5.15+).
    PreferredMany,
    /// Round-robin page by page (MPOL_INTERLEAVE).
    Interleave,
    /// Weighted interleave (MPOL_WEIGHTED_INTERLEAVE, Linux 6.9+).
    #[value(alias = "weighted-interleave")]
    Weighted,
    /// The node of the CPU that touches (MPOL_LOCAL).
    Local,
    /// The process's default policy.
    Default,
}

impl MemPolicyKind {
    /// The name as typed, which `MemPolicy::from_name` reads.
    fn name(self) -> &'static str {
        match self {
            MemPolicyKind::Bind => "bind",
            MemPolicyKind::Preferred => "preferred",
            MemPolicyKind::PreferredMany => "preferred-many",
            MemPolicyKind::Interleave => "interleave",
            MemPolicyKind::Weighted => "weighted",
            MemPolicyKind::Local => "local",
            MemPolicyKind::Default => "default",
        }
    }
}

/// `--via`: how the policy is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Via {
    /// `mbind` on the buffer.
    Range,
    /// `set_mempolicy` on the touching thread.
    Thread,
}

/// A library error, kept whole: `main` classifies it
/// ([`PlaceError::is_usage`]: exit 2 when it is the user's request).
fn lift(e: PlaceError) -> anyhow::Error {
    anyhow::Error::new(e)
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    // Flags first (ripgrep's low-level args), then the plan once the
    // machine is known.
    let policy_name = validate(&args)?;
    let _lock = g.take_lock(args.wait, &crate::signal::stop_flag())?;
    let root = SysRoot::live();
    let topo = Topology::discover(&root).context("reading the machine's topology")?;
    let allowed = Allowed::current(&root).map_err(lift)?;
    let spec = plan(&args, policy_name, &topo, &allowed)?;
    let report = place::probe(&root, &topo, allowed, &spec).map_err(lift)?;
    render(g, &report)
}

/// Checks the flags against each other; returns the policy's name.
fn validate(args: &Args) -> anyhow::Result<&'static str> {
    let policy_name = match (&args.policy, &args.mem_nodes) {
        (Some(p), _) => p.name(),
        (None, Some(_)) => "bind",
        (None, None) => "local",
    };
    let needs_nodes = !matches!(policy_name, "local" | "default");
    if needs_nodes && args.mem_nodes.is_none() {
        usage!("--policy {policy_name} needs --mem-nodes (e.g. --mem-nodes 0 or all)");
    }
    if !needs_nodes && args.mem_nodes.is_some() {
        usage!("--policy {policy_name} takes no --mem-nodes");
    }
    if usize::try_from(args.size).is_err() {
        usage!("--size {}: too large for this machine's address space", args.size);
    }
    Ok(policy_name)
}

/// The probe the flags ask for, with the flags that need the machine
/// resolved: nodes, policy, expectation.
fn plan(
    args: &Args,
    policy_name: &str,
    topo: &Topology,
    allowed: &Allowed,
) -> anyhow::Result<ProbeSpec> {
    let pin = match (args.cpu, args.cpu_node) {
        (Some(cpu), _) => Pin::Cpu(cpu),
        (None, Some(node)) => Pin::CpuNode(node),
        (None, None) => Pin::Current,
    };
    let nodes = match &args.mem_nodes {
        Some(spec) => {
            allowed.resolve_mem_nodes(spec, topo).map_err(|e| lift_flag("--mem-nodes", e))?
        }
        None => NodeSet::new(),
    };
    let policy = MemPolicy::from_name(policy_name, &nodes).map_err(|e| lift_flag("--policy", e))?;
    let expect = match &args.expect {
        // A plain list is a claim to test, even about nodes this machine
        // lacks (the check then fails); all/!/+ resolve against the nodes.
        Some(spec) => {
            Some(match place::SetSpec::parse(spec).map_err(|e| lift_flag("--expect", e))? {
                place::SetSpec::List(l) => l,
                s => s.resolve(&topo.node_ids(), "node").map_err(|e| lift_flag("--expect", e))?,
            })
        }
        None => None,
    };
    Ok(ProbeSpec {
        pin,
        policy,
        size_bytes: args.size,
        pages: args.pages,
        via: match args.via {
            Via::Range => place::Via::Range,
            Via::Thread => place::Via::Thread,
        },
        expect,
        threshold: args.threshold,
        spread_tolerance: args.spread_tolerance,
        samples: args.samples,
    })
}

/// The probe's report with its warnings; a failed check fails the command.
fn render(g: &Invocation, report: &place::ProbeReport) -> anyhow::Result<()> {
    if let Some(note) = &report.fallback {
        g.warn(note);
    }
    if report.numa_balancing_enabled == Some(true) {
        g.warn(
            "numa_balancing is on: the kernel may migrate pages during the run \
             (bind is not migrated off-node; the check below sees the result)",
        );
    }
    let doc = console::place::PlaceDoc::of(report);
    g.answer(crate::output::schema::PLACE, &doc, |style| console::place::render(report, style))?;
    if !report.ok {
        anyhow::bail!(
            "placement check failed: {}",
            console::place::failure_line(&report.placement)
        );
    }
    Ok(())
}

/// A library error about one flag, naming the flag (the error keeps its
/// chain; `main` classifies it).
fn lift_flag(flag: &str, e: PlaceError) -> anyhow::Error {
    anyhow::Error::new(e).context(flag.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Every policy name (and alias) the flag accepts is one the placement
    /// layer reads as the same policy.
    #[test]
    fn policy_names_are_the_placement_layers() {
        let nodes: NodeSet = "0".parse().unwrap();
        for p in MemPolicyKind::value_variants() {
            let want = MemPolicy::from_name(p.name(), &nodes).unwrap();
            for n in p.to_possible_value().unwrap().get_name_and_aliases() {
                assert_eq!(MemPolicy::from_name(n, &nodes).unwrap(), want, "{n}");
            }
        }
    }
}
