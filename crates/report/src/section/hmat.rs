//! Memory tiers and HMAT in reports: each node's kind and tier, the
//! firmware's declared latency and bandwidth (ACPI HMAT, as the kernel
//! exposes it in `nodeN/access0|1/initiators/`) beside the measured
//! figures with their ratio, and a flag on pairs off by more than
//! [`MARGIN_PCT`] — tables that mislead the kernel's tiering and its
//! `auto` interleave weights. Memory-side caches are listed with their
//! size.

use std::collections::BTreeMap;

use results::lat::{self, Lat};
use results::{bw, Record};
use serde::Serialize;
use store::LoadedRun;
use topo::memkind::{hmat_of, memory_kind};
use topo::Topology;

use crate::doc::{Document, Table};

/// A measured figure further than this from the declared one (either
/// way, percent of declared) is flagged.
pub const MARGIN_PCT: f64 = 25.0;

/// One initiator -> target pair the firmware declares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HmatPair {
    pub initiator: u32,
    pub target: u32,
    /// `access1` (CPU initiators) or `access0` (any initiator).
    pub access: &'static str,
    pub declared_read_mbs: Option<u64>,
    pub declared_read_ns: Option<u64>,
    /// Measured bandwidth, MB/s (GB/s x 1000), and the kernel it is from.
    pub measured_mbs: Option<f64>,
    pub measured_kernel: Option<String>,
    /// Measured idle latency (pointer chase, median), ns.
    pub measured_ns: Option<f64>,
    /// measured / declared.
    pub bw_ratio: Option<f64>,
    pub lat_ratio: Option<f64>,
    /// Off by more than [`MARGIN_PCT`] in bandwidth or latency.
    pub flagged: bool,
}

fn off(r: Option<f64>) -> bool {
    r.is_some_and(|r| (r - 1.0).abs() * 100.0 > MARGIN_PCT)
}

/// Measured figures per (CPU node, memory node).
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// GB/s and the kernel.
    pub bw_gbs: BTreeMap<(u32, u32), (f64, String)>,
    /// ns.
    pub lat_ns: BTreeMap<(u32, u32), f64>,
}

impl Measured {
    /// From a run's stored results: bandwidth of the `read` kernel where
    /// measured, else `triad`, else the best of the others (matrix and
    /// local results with one CPU node and one memory node); latency from
    /// the `matrix` latency results.
    pub fn of_run(run: &LoadedRun) -> Measured {
        let mut m = Measured::default();
        let rank = |k: &str| match k {
            "read" => 0,
            "triad" => 1,
            _ => 2,
        };
        for r in run.records() {
            match r {
                Record::Bw(b) if matches!(b.mode, bw::Mode::Matrix | bw::Mode::Local) => {
                    let (Some(c), Some(n)) = (b.cpu_node, b.mem_node) else { continue };
                    let g = b.best_gbs;
                    if !g.is_finite() {
                        continue;
                    }
                    let k = b.kernel.name();
                    let e = m.bw_gbs.entry((c, n)).or_insert((g, k.to_string()));
                    let better = rank(k) < rank(&e.1) || (rank(k) == rank(&e.1) && g > e.0);
                    if better {
                        *e = (g, k.to_string());
                    }
                }
                Record::Lat(l) => {
                    let Lat::Chase(l) = l.as_ref() else { continue };
                    if l.mode != lat::Mode::Matrix || !l.median_ns.is_finite() {
                        continue;
                    }
                    let (Some(c), Some(n)) = (l.cpu_node, l.mem_node) else { continue };
                    m.lat_ns.entry((c, n)).or_insert(l.median_ns);
                }
                _ => {}
            }
        }
        m
    }
}

/// Every declared pair (each initiator of each memory node's HMAT entry)
/// with the measured figures beside it.
pub fn compare(t: &Topology, m: &Measured) -> Vec<HmatPair> {
    let mut out = Vec::new();
    for n in &t.nodes {
        let Some(h) = n.hmat.as_ref() else { continue };
        let (access, a) = match (&h.access1, &h.access0) {
            (Some(a), _) => ("access1", a),
            (None, Some(a)) => ("access0", a),
            _ => continue,
        };
        for i in a.initiators.iter() {
            let bw = m.bw_gbs.get(&(i, n.id));
            let measured_mbs = bw.map(|(g, _)| g * 1000.0);
            let measured_ns = m.lat_ns.get(&(i, n.id)).copied();
            let ratio = |meas: Option<f64>, decl: Option<u64>| match (meas, decl) {
                (Some(x), Some(d)) if d > 0 => Some(x / d as f64),
                _ => None,
            };
            let bw_ratio = ratio(measured_mbs, a.read_bandwidth_mbs);
            let lat_ratio = ratio(measured_ns, a.read_latency_ns);
            out.push(HmatPair {
                initiator: i,
                target: n.id,
                access,
                declared_read_mbs: a.read_bandwidth_mbs,
                declared_read_ns: a.read_latency_ns,
                measured_mbs,
                measured_kernel: bw.map(|(_, k)| k.clone()),
                measured_ns,
                bw_ratio,
                lat_ratio,
                flagged: off(bw_ratio) || off(lat_ratio),
            });
        }
    }
    out
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

fn ratio(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}x"))
}

/// The node table: kind (with why), tier, memory, HMAT as a target,
/// memory-side caches.
pub fn nodes_table(t: &Topology) -> Table {
    let mut tab = Table::with_header(&[
        "node",
        "kind",
        "tier",
        "memory (GiB)",
        "HMAT read (MB/s, ns)",
        "memory-side cache",
        "why this kind",
    ]);
    for n in &t.nodes {
        let (k, why) = memory_kind(t, n);
        let h = hmat_of(n)
            .map(|a| format!("{}, {}", opt(a.read_bandwidth_mbs), opt(a.read_latency_ns)))
            .unwrap_or_else(|| "-".into());
        let msc: Vec<String> = n
            .memory_side_caches
            .iter()
            .map(|c| format!("L{} {} MiB", c.index, c.size_bytes >> 20))
            .collect();
        tab.push(vec![
            n.id.to_string(),
            k.name().to_string(),
            opt(n.memory_tier),
            format!("{:.1}", n.mem_total_bytes as f64 / (1u64 << 30) as f64),
            h,
            if msc.is_empty() { "-".into() } else { msc.join(", ") },
            why,
        ]);
    }
    tab
}

/// The declared-vs-measured table.
pub fn pairs_table(pairs: &[HmatPair]) -> Table {
    let mut tab = Table::with_header(&[
        "initiator -> target",
        "declared MB/s",
        "measured MB/s",
        "ratio",
        "declared ns",
        "measured ns",
        "ratio",
        "flag",
    ]);
    for p in pairs {
        tab.push(vec![
            format!("{} -> {}", p.initiator, p.target),
            opt(p.declared_read_mbs),
            p.measured_mbs.map_or("-".into(), |x| format!("{x:.0}")),
            ratio(p.bw_ratio),
            opt(p.declared_read_ns),
            p.measured_ns.map_or("-".into(), |x| format!("{x:.0}")),
            ratio(p.lat_ratio),
            if p.flagged { format!("off by >{MARGIN_PCT:.0}%") } else { "ok".into() },
        ]);
    }
    tab
}

/// Whether a machine has anything for this section: several memory
/// tiers, HMAT, memory-side caches, or a CPU-less memory node (a machine
/// whose memory is all one tier of DRAM has nothing to say here).
fn worth_showing(t: &Topology) -> bool {
    t.memory_tiers.len() > 1
        || t.nodes.iter().any(|n| {
            n.hmat.is_some()
                || !n.memory_side_caches.is_empty()
                || (n.cpus.is_empty() && n.mem_total_bytes > 0)
        })
}

fn topology_of(run: &LoadedRun) -> Option<Topology> {
    run.topology.get().cloned()
}

fn caption() -> String {
    format!(
        "Declared = ACPI HMAT read figures as the kernel exposes them (access1: CPU initiators, else \
         access0); measured = this run's bandwidth (MB/s = GB/s x 1000; read kernel when measured, \
         else triad: HMAT counts reads only, so triad reads lower) and idle latency (pointer chase, \
         median; it includes the cache-miss path HMAT leaves out). Flagged when off by more than \
         {MARGIN_PCT:.0}% either way: such tables mislead the kernel's memory tiering and its `auto` \
         interleave weights."
    )
}

/// Adds the "Memory tiers and HMAT" section to a report (nothing on a
/// machine without tiers, HMAT or CPU-less nodes).
pub fn section(doc: &mut Document, run: &LoadedRun) {
    let Some(t) = topology_of(run) else { return };
    if !worth_showing(&t) {
        return;
    }
    doc.h(2, "Memory tiers and HMAT");
    doc.p("Each node's kind as far as the system tells, with the evidence (CPU nodes hold DRAM; \
         a CPU-less node is CXL when a CXL region or its DAX device reaches it, PMEM-as-RAM when an \
         NVDIMM namespace's DAX device is onlined by kmem, else HBM-like or CXL-like by its HMAT \
         bandwidth against DRAM's, CXL-like when a DAX device onlined by kmem backs it, else by \
         its memory tier: a higher tier id is slower memory).");
    doc.table(nodes_table(&t));
    let pairs = compare(&t, &Measured::of_run(run));
    if !pairs.is_empty() {
        let flagged = pairs.iter().filter(|p| p.flagged).count();
        if flagged > 0 {
            doc.callout(format!(
                "{flagged} of {} HMAT pair(s) are off from what was measured by more than \
                 {MARGIN_PCT:.0}%: the firmware's table does not describe this machine.",
                pairs.len()
            ));
        }
        doc.table(pairs_table(&pairs).caption(caption()));
    }
}

/// Plain-text tables for the end of `run` (empty when there is nothing
/// to show).
pub fn summary_text(run: &LoadedRun) -> String {
    let Some(t) = topology_of(run) else { return String::new() };
    if !worth_showing(&t) {
        return String::new();
    }
    let mut s = String::from("\nMemory tiers and HMAT\n");
    s.push_str(&nodes_table(&t).to_text());
    let pairs = compare(&t, &Measured::of_run(run));
    if !pairs.is_empty() {
        s.push_str(&format!(
            "\nHMAT declared vs measured (flag: off by more than {MARGIN_PCT:.0}%)\n"
        ));
        s.push_str(&pairs_table(&pairs).to_text());
    }
    s
}

/// The JSON form of the comparison for a stored run (`None` without a
/// readable topology).
pub fn pairs_of_run(run: &LoadedRun) -> Option<Vec<HmatPair>> {
    topology_of(run).map(|t| compare(&t, &Measured::of_run(run)))
}
