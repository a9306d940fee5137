//! The placement probe behind `numaprobe place`: pin the calling thread,
//! set a memory policy, allocate and first-touch a buffer, ask the kernel
//! where its pages are (`move_pages`) and judge that against an
//! expectation, returning everything as one typed [`ProbeReport`].

use std::collections::BTreeMap;

use serde::Serialize;
use topo::{SysRoot, Topology};

use results::exec::NodeCounters;
use results::pages::PageKind;
use results::placement::PlacementCheck;
use topo::{CpuSet, NodeSet};

use crate::{
    Allowed, Buffer, MemPolicy, NodeMemory, NumaBalancing, NumaStat, PageNodes, PageReport, Result,
    Spread,
};

/// Where the probe runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    /// This CPU (it must be allowed).
    Cpu(u32),
    /// The allowed CPUs of this node.
    CpuNode(u32),
    /// The CPU the thread is on now, so that "local" means one node.
    Current,
}

/// How the policy is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Via {
    /// `mbind(2)` on the buffer.
    #[serde(rename = "mbind")]
    Range,
    /// `set_mempolicy(2)` on the touching thread (reset afterwards).
    #[serde(rename = "set_mempolicy")]
    Thread,
}

/// Where the expectation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectSource {
    /// The policy's nodes.
    Policy,
    /// `local`/`default`: the node of the pinned CPU.
    LocalCpu,
    /// Given by the caller ([`ProbeSpec::expect`]).
    Given,
}

/// What to try.
#[derive(Debug, Clone)]
pub struct ProbeSpec {
    pub pin: Pin,
    /// The policy asked for (a fallback may apply, see
    /// [`crate::with_fallback`]).
    pub policy: MemPolicy,
    pub size_bytes: u64,
    pub pages: PageKind,
    pub via: Via,
    /// Nodes the pages must be on; `None`: the policy's nodes (local and
    /// default: the node of the pinned CPU).
    pub expect: Option<NodeSet>,
    /// Share of sampled pages that must be on the expected nodes (0..1).
    pub threshold: f64,
    /// Interleave policies: largest deviation of a node's share (0..1).
    pub spread_tolerance: f64,
    /// Pages to ask the kernel about (0 = every page).
    pub samples: usize,
}

/// Where the thread ran.
#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    /// CPUs the thread was restricted to.
    pub pinned_to: CpuSet,
    /// CPU and node `getcpu` reported after touching.
    pub ran_on_cpu: u32,
    pub ran_on_node: u32,
}

/// Everything the probe found (`place --json` writes it as console's
/// document, docs/place.md).
#[derive(Debug, Clone)]
pub struct ProbeReport {
    pub kernel: Option<String>,
    pub allowed: Allowed,
    pub cpu: CpuReport,
    /// The policy asked for.
    pub policy_requested: MemPolicy,
    /// The policy applied (differs when the kernel needed a fallback).
    pub policy: MemPolicy,
    /// Why the applied policy differs from the requested one.
    pub fallback: Option<String>,
    /// `mbind` or `set_mempolicy`.
    pub applied_with: Via,
    /// What the kernel reports for the buffer's first page afterwards
    /// (`get_mempolicy(MPOL_F_ADDR)`; `default` when applied per thread).
    pub policy_read_back: MemPolicy,
    pub size_bytes: u64,
    pub pages: PageReport,
    pub expect_source: ExpectSource,
    pub placement: PlacementCheck,
    /// Pages per node among the sampled ones (counts, not shares).
    pub page_counts: BTreeMap<u32, u64>,
    /// Weighted-interleave weights used for the spread check.
    pub weights: Option<BTreeMap<u32, u32>>,
    /// Memory of the target nodes before allocating.
    pub memory: Vec<NodeMemory>,
    /// System-wide per-node counters, after minus before (pages).
    pub numastat_delta: BTreeMap<u32, NodeCounters>,
    pub numa_balancing: Option<NumaBalancing>,
    pub numa_balancing_enabled: Option<bool>,
    pub ok: bool,
    /// The sampled pages (counts of present, absent and unreadable ones).
    pub sampled: PageNodes,
}

/// Runs the probe on the calling thread (it stays pinned afterwards).
///
/// Refuses before allocating what the machine cannot give: CPUs or nodes
/// outside `allowed`, more memory than the target nodes can spare, huge
/// pages that are not reserved (errors about the request, such as
/// [`crate::PlaceError::NotEnoughMemory`]).
pub fn probe(
    root: &SysRoot,
    topo: &Topology,
    allowed: Allowed,
    spec: &ProbeSpec,
) -> Result<ProbeReport> {
    // Where to run.
    let pin: CpuSet = match spec.pin {
        Pin::Cpu(cpu) => {
            let set: CpuSet = [cpu].into_iter().collect();
            allowed.check_cpus(&set, Some(topo))?;
            set
        }
        Pin::CpuNode(node) => allowed.check_cpu_node(node, topo)?,
        Pin::Current => [crate::current_cpu()?].into_iter().collect(),
    };
    crate::set_current_thread_affinity(&pin)?;
    let (_, start_node) = crate::current_cpu_and_node()?;

    let requested = spec.policy.clone();
    let (policy, fallback) = crate::with_fallback(&requested, root);

    // Never take the machine's memory away.
    let (targets, spread) = match &policy {
        MemPolicy::Default | MemPolicy::Local => {
            ([start_node].into_iter().collect(), Spread::AnyOne)
        }
        MemPolicy::Interleave(s) | MemPolicy::WeightedInterleave(s) => (s.clone(), Spread::Even),
        p => (p.nodes(), Spread::AnyOne),
    };
    let memory = crate::ensure_nodes_can_spare(root, &targets, spec.size_bytes, spread)?;
    if let Some(h) = spec.pages.hugetlb_bytes() {
        crate::ensure_hugepages(root, &targets, h as u64, spec.size_bytes)?;
    }
    let balancing = crate::numa_balancing(root).ok().flatten();
    let size = usize::try_from(spec.size_bytes).map_err(|_| crate::PlaceError::BadSpec {
        spec: spec.size_bytes.to_string(),
        msg: "too large for this machine's address space".into(),
    })?;

    // Place, touch, look.
    let before = NumaStat::read(root)?;
    let mut buf = Buffer::alloc(size, spec.pages)?;
    match spec.via {
        Via::Thread => crate::set_process_policy(&policy)?,
        Via::Range => buf.bind(&policy)?,
    }
    buf.touch();
    if spec.via == Via::Thread {
        crate::set_process_policy(&MemPolicy::Default)?;
    }
    let after = NumaStat::read(root)?;
    let (ran_on_cpu, ran_on_node) = crate::current_cpu_and_node()?;
    let policy_read_back = crate::policy_at(buf.as_ptr())?;
    let pages = buf.page_nodes(spec.samples)?;
    let page_report = buf.page_report()?;
    drop(buf);

    // Judge.
    let (expected, expect_source) = match (&spec.expect, &policy) {
        (Some(e), _) => (e.clone(), ExpectSource::Given),
        (None, MemPolicy::Default | MemPolicy::Local) => {
            ([start_node].into_iter().collect(), ExpectSource::LocalCpu)
        }
        (None, p) => (p.nodes(), ExpectSource::Policy),
    };
    let mut weights = None;
    let placement = match &policy {
        MemPolicy::Interleave(_) => {
            crate::check_interleave(&pages, &expected, spec.threshold, spec.spread_tolerance)
        }
        MemPolicy::WeightedInterleave(_) => {
            let w = crate::weighted_interleave_weights(root)?.unwrap_or_default();
            let wf: BTreeMap<u32, f64> =
                expected.iter().map(|n| (n, w.get(&n).copied().unwrap_or(1) as f64)).collect();
            weights = Some(w.into_iter().filter(|(n, _)| expected.contains(*n)).collect());
            crate::check_spread(&pages, &wf, spec.threshold, spec.spread_tolerance)
        }
        _ => crate::check(&pages, &expected, spec.threshold),
    };

    Ok(ProbeReport {
        kernel: topo.kernel.clone(),
        allowed,
        cpu: CpuReport { pinned_to: pin, ran_on_cpu, ran_on_node },
        policy_requested: requested,
        policy,
        fallback,
        applied_with: spec.via,
        policy_read_back,
        size_bytes: spec.size_bytes,
        pages: page_report,
        expect_source,
        ok: placement.ok,
        placement,
        page_counts: pages.per_node.clone(),
        weights,
        memory,
        numastat_delta: after.since(&before).nodes,
        numa_balancing: balancing,
        numa_balancing_enabled: balancing.map(NumaBalancing::enabled),
        sampled: pages,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pin: Pin, policy: MemPolicy) -> ProbeSpec {
        ProbeSpec {
            pin,
            policy,
            size_bytes: 4 << 20,
            pages: PageKind::Base,
            via: Via::Range,
            expect: None,
            threshold: crate::DEFAULT_THRESHOLD,
            spread_tolerance: 0.05,
            samples: 0,
        }
    }

    fn machine() -> (SysRoot, Topology, Allowed) {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let allowed = Allowed::current(&root).unwrap();
        (root, topo, allowed)
    }

    #[test]
    fn local_pages_land_on_the_node_of_the_pinned_cpu() {
        let (root, topo, allowed) = machine();
        let r = probe(&root, &topo, allowed, &spec(Pin::Current, MemPolicy::Local)).unwrap();
        assert!(r.ok, "{:?}", r.placement);
        assert_eq!(r.expect_source, ExpectSource::LocalCpu);
        assert_eq!(r.placement.expected, [r.cpu.ran_on_node].into_iter().collect::<NodeSet>());
        assert_eq!(r.cpu.pinned_to.len(), 1);
        // every page was asked about, and each one counted once
        assert_eq!(r.sampled.sampled_pages, r.sampled.total_pages);
        let counted: u64 = r.page_counts.values().sum();
        assert!(counted > 0 && counted <= r.sampled.sampled_pages);
    }

    #[test]
    fn an_expectation_the_pages_miss_is_judged_not_ok() {
        let (root, topo, allowed) = machine();
        let mut s = spec(Pin::Current, MemPolicy::Local);
        s.expect = Some([4000].into_iter().collect());
        let r = probe(&root, &topo, allowed, &s).unwrap();
        assert_eq!(r.expect_source, ExpectSource::Given);
        assert!(!r.ok);
        assert_eq!(r.placement.fraction, 0.0);
    }

    #[test]
    fn a_cpu_the_machine_lacks_is_refused_before_allocating() {
        let (root, topo, allowed) = machine();
        let e = probe(&root, &topo, allowed, &spec(Pin::Cpu(100_000), MemPolicy::Local));
        assert!(
            matches!(
                e,
                Err(crate::PlaceError::NoSuchCpu { .. } | crate::PlaceError::CpuNotAllowed { .. })
            ),
            "{e:?}"
        );
    }
}
