//! A run's package-scope figures: what `run`'s `bw-package`,
//! `bw-cross-package` and `lat-package` steps measured (records of mode
//! `package`, each with its [`results::scope::Scope`]), and, for runs
//! without them, the figures derived from cells measured one at a time,
//! each labelled so ([`DerivedFrom::Cells`]).
//!
//! A package's bandwidth is what its CPUs move all at once: the cores'
//! outstanding misses, the channels and the socket link bind together, so
//! matrix cells, each measured with one node's CPUs while the rest of the
//! machine idles, do not add up to it. A derived figure is shown, never
//! judged against a measured one, and never decides a pick.
//!
//! A figure that needs every node's cell (or every package's record) is
//! not computed from a subset: [`Missing`] says which are absent.

use std::collections::{BTreeMap, BTreeSet};

use results::bw::{self, BwResult};
use results::lat::{self, LatResult};
use results::scope::{MemoryOf, Scope, ScopePolicy};
use results::stats::mean;

use crate::data::{pick_kernel, RunData};
use crate::layout::Layout;
use crate::metric_id::Fixed;

/// How a figure not measured at its metric's scope was derived: the
/// front ends word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DerivedFrom {
    /// Summed or averaged from matrix cells (or a node's local figures),
    /// each measured alone.
    Cells,
    /// A per-package figure measured with one package's CPUs alone on
    /// memory the other packages' CPUs also read.
    PackageAlone,
    /// A per-package figure taken as the whole machine's figure divided by
    /// its packages.
    Machine,
}

/// A figure of a run and, when it was not measured at its metric's
/// scope, how it was derived.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub derived: Option<DerivedFrom>,
}

impl Figure {
    fn measured(value: f64) -> Figure {
        Figure { value, derived: None }
    }

    fn derived(value: f64, how: DerivedFrom) -> Figure {
        Figure { value, derived: Some(how) }
    }
}

/// A figure not computed because some of the cells (or records) it needs
/// are not in the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub metric: Fixed,
    /// What is missing.
    pub what: Lacking,
}

/// What a figure derived from cells lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lacking {
    /// The local bandwidth of these nodes.
    LocalBw(Vec<u32>),
    /// These cells of the bandwidth matrix, `(CPU node, memory node)`.
    BwCells(Vec<(u32, u32)>),
    /// These cells of the latency matrix, `(CPU node, memory node)`.
    LatCells(Vec<(u32, u32)>),
}

/// The run's package-scope bandwidth results of the headline kernel
/// (triad when measured), each with its scope.
fn package_bw(d: &RunData) -> Vec<(&Scope, &BwResult)> {
    let rs: Vec<&BwResult> =
        d.bw_mode(bw::Mode::Package).filter(|b| b.best_gbs.is_finite()).collect();
    let Some(kernel) = pick_kernel(rs.iter().copied()) else { return Vec::new() };
    rs.into_iter()
        .filter(|b| b.kernel == kernel)
        .filter_map(|b| Some((b.scope.as_ref()?, b)))
        .collect()
}

/// The run's package-scope chases, each with its scope.
fn package_chases(d: &RunData) -> Vec<(&Scope, &LatResult)> {
    d.chase_mode(lat::Mode::Package)
        .filter(|c| c.median_ns.is_finite())
        .filter_map(|c| Some((c.scope.as_ref()?, c)))
        .collect()
}

/// The best of `items` per `(package, mem_package)` (`keep`: the higher
/// bandwidth, the lower latency) among those on `memory` under one of
/// `policies`.
fn best_by_pair(
    items: impl Iterator<Item = (Scope, f64)>,
    memory: MemoryOf,
    policies: &[ScopePolicy],
    keep: fn(f64, f64) -> f64,
) -> BTreeMap<(u32, u32), f64> {
    let mut out = BTreeMap::new();
    for (s, v) in items.filter(|(s, _)| s.memory == memory && policies.contains(&s.policy)) {
        out.entry((s.package, s.mem_package))
            .and_modify(|x: &mut f64| *x = keep(*x, v))
            .or_insert(v);
    }
    out
}

/// The best bandwidth per `(package, mem_package)` ([`best_by_pair`]).
fn bw_by_pair(
    d: &RunData,
    memory: MemoryOf,
    policies: &[ScopePolicy],
) -> BTreeMap<(u32, u32), f64> {
    let items = package_bw(d).into_iter().map(|(s, b)| (s.clone(), b.best_gbs));
    best_by_pair(items, memory, policies, f64::max)
}

/// The lowest latency per `(package, mem_package)` ([`best_by_pair`]).
fn lat_by_pair(
    d: &RunData,
    memory: MemoryOf,
    policies: &[ScopePolicy],
) -> BTreeMap<(u32, u32), f64> {
    let items = package_chases(d).into_iter().map(|(s, c)| (s.clone(), c.median_ns));
    best_by_pair(items, memory, policies, f64::min)
}

/// The mean of `by` when it holds every package's own figure.
fn own_mean(by: &BTreeMap<(u32, u32), f64>, layout: &Layout) -> Option<f64> {
    let found: BTreeSet<u32> = by.keys().map(|k| k.0).collect();
    every_package(&found, layout).then(|| mean(&by.values().copied().collect::<Vec<_>>())).flatten()
}

/// The mean of `by` when it holds every ordered pair of packages.
fn pair_mean(by: &BTreeMap<(u32, u32), f64>, layout: &Layout) -> Option<f64> {
    every_pair(&by.keys().copied().collect(), layout)
        .then(|| mean(&by.values().copied().collect::<Vec<_>>()))
        .flatten()
}

const OWN_BOUND: [ScopePolicy; 2] = [ScopePolicy::BindPerNode, ScopePolicy::OsGiven];
const OWN_SPREAD: [ScopePolicy; 2] = [ScopePolicy::Interleave, ScopePolicy::OsGiven];
const ANY: [ScopePolicy; 3] =
    [ScopePolicy::BindPerNode, ScopePolicy::Interleave, ScopePolicy::OsGiven];

/// Whether `found` covers every package of the run: the stored
/// topology's, else as many as the run's machine document counts (a run
/// that says nothing of its packages is taken at its word).
fn every_package(found: &BTreeSet<u32>, layout: &Layout) -> bool {
    if found.is_empty() {
        return false;
    }
    if layout.from_topology {
        return layout.package_ids().iter().all(|p| found.contains(p));
    }
    layout.packages == 0 || found.len() as u64 >= layout.packages
}

/// Whether `found` holds every ordered pair of two different packages.
fn every_pair(found: &BTreeSet<(u32, u32)>, layout: &Layout) -> bool {
    let from: BTreeSet<u32> = found.iter().map(|p| p.0).collect();
    if !every_package(&from, layout) {
        return false;
    }
    let ids: Vec<u32> =
        if layout.from_topology { layout.package_ids() } else { from.into_iter().collect() };
    let pairs = ids.iter().flat_map(|&p| ids.iter().map(move |&q| (p, q))).filter(|(p, q)| p != q);
    let need: Vec<(u32, u32)> = pairs.collect();
    !need.is_empty() && need.iter().all(|p| found.contains(p))
}

/// Per package, its CPUs on its own memory, each thread's pages on its
/// own node, every package at once: the mean over packages of
/// `bw-package`'s figures, every package measured (with NUMA on a
/// package's own memory serves no other package, so a package measured
/// alone moves what it moves beside the others). Under one OS node on two
/// or more packages every package reads the same memory (the firmware's
/// interleave over every package, or under `numa=off` the first domain's),
/// so a package alone also takes what the idle packages' channels and
/// links would give the others: the figure is then `bw global` (every
/// CPU at once, each thread on the memory the OS gives) divided by the
/// packages, which is the mean over packages of what each moves while
/// all stream, and the package records are only a fallback
/// ([`DerivedFrom::PackageAlone`]). Without package records: one
/// package's `bw global` (the same measurement), else the whole machine's
/// figure divided by the packages ([`DerivedFrom::Machine`]), else the sum
/// of each package's nodes' local figures ([`DerivedFrom::Cells`], every
/// node measured).
pub fn local_bw_per_package(
    d: &RunData,
    layout: &Layout,
    missing: &mut Vec<Missing>,
) -> Option<Figure> {
    let own = own_mean(&bw_by_pair(d, MemoryOf::OwnPackage, &OWN_BOUND), layout);
    if layout.packages > 1 && layout.cpu_nodes == 1 {
        if let Some(g) = crate::metrics::best_of_mode(d, bw::Mode::Global) {
            return Some(Figure::measured(g.best_gbs / layout.packages as f64));
        }
        if let Some(v) = own {
            return Some(Figure::derived(v, DerivedFrom::PackageAlone));
        }
    }
    if let Some(v) = own {
        return Some(Figure::measured(v));
    }
    if let Some(g) = crate::metrics::best_of_mode(d, bw::Mode::Global) {
        match layout.packages {
            1 => return Some(Figure::measured(g.best_gbs)),
            p if p > 1 => {
                return Some(Figure::derived(g.best_gbs / p as f64, DerivedFrom::Machine))
            }
            _ => {}
        }
    }
    let (_, pts) = crate::metrics::local_points(d);
    let per_node: BTreeMap<u32, f64> =
        pts.iter().filter_map(|p| Some((p.cpu_node?, p.best_gbs))).collect();
    if per_node.is_empty() {
        return None;
    }
    let mut sums = Vec::new();
    let mut absent = Vec::new();
    for pkg in layout.package_ids() {
        let nodes = layout.cpu_nodes_of(pkg)?;
        let mut sum = 0.0;
        for n in nodes {
            match per_node.get(&n) {
                Some(v) => sum += v,
                None => absent.push(n),
            }
        }
        sums.push(sum);
    }
    if !absent.is_empty() {
        missing.push(Missing { metric: Fixed::LocalBwPkg, what: Lacking::LocalBw(absent) });
        return None;
    }
    mean(&sums).map(|v| Figure::derived(v, DerivedFrom::Cells))
}

/// Per package, its CPUs on its own memory interleaved over its own
/// nodes (under NUMA off, the memory the OS gives): the mean over
/// packages of `bw-package`'s interleaved figures, every package
/// measured. No fallback: nothing in other steps measures it.
pub fn pkg_interleave_bw(d: &RunData, layout: &Layout) -> Option<f64> {
    own_mean(&bw_by_pair(d, MemoryOf::OwnPackage, &OWN_SPREAD), layout)
}

/// One package's CPUs, all at once, reading another package's memory
/// interleaved over its nodes: the mean over ordered pairs of packages of
/// `bw-cross-package`'s figures, every pair measured. Without them, for
/// each ordered pair the sum over the first package's CPU nodes of each
/// node's mean cell into the second package's nodes, the mean over pairs
/// ([`DerivedFrom::Cells`]; every such cell measured).
pub fn cross_bw_per_package(
    d: &RunData,
    cells: &BTreeMap<(u32, u32), f64>,
    layout: &Layout,
    missing: &mut Vec<Missing>,
) -> Option<Figure> {
    if let Some(v) = pair_mean(&bw_by_pair(d, MemoryOf::OtherPackage, &ANY), layout) {
        return Some(Figure::measured(v));
    }
    let ids = layout.package_ids();
    let mut pairs = Vec::new();
    let mut absent = Vec::new();
    let mut any = false;
    for &p in &ids {
        for &q in ids.iter().filter(|&&q| q != p) {
            let (Some(from), Some(to)) = (layout.cpu_nodes_of(p), layout.cpu_nodes_of(q)) else {
                continue;
            };
            let mut sum = 0.0;
            for &c in &from {
                let row: Vec<f64> = to
                    .iter()
                    .filter_map(|&m| match cells.get(&(c, m)) {
                        Some(v) => {
                            any = true;
                            Some(*v)
                        }
                        None => {
                            absent.push((c, m));
                            None
                        }
                    })
                    .collect();
                sum += mean(&row).unwrap_or(0.0);
            }
            pairs.push(sum);
        }
    }
    if !any {
        return None;
    }
    if !absent.is_empty() {
        missing.push(Missing { metric: Fixed::CrossPkgBw, what: Lacking::BwCells(absent) });
        return None;
    }
    mean(&pairs).map(|v| Figure::derived(v, DerivedFrom::Cells))
}

/// From a CPU of each package, the latency to memory interleaved over its
/// own package's nodes (under NUMA off, the memory the OS gives): the
/// mean over packages of `lat-package`'s chases, every package measured.
pub fn pkg_lat(d: &RunData, layout: &Layout) -> Option<f64> {
    own_mean(&lat_by_pair(d, MemoryOf::OwnPackage, &ANY), layout)
}

/// From a CPU of each package, the latency to another package's memory
/// interleaved over its nodes: the mean over ordered pairs of packages
/// of `lat-package`'s chases, every pair measured.
pub fn cross_pkg_lat(d: &RunData, layout: &Layout) -> Option<f64> {
    pair_mean(&lat_by_pair(d, MemoryOf::OtherPackage, &ANY), layout)
}

/// Memory spread over every DRAM node as a node-spanning workload's is,
/// seen from the CPUs (memory-only tiers hold what is put there, not a
/// spread buffer pool); for runs whose OS shows two or more nodes:
///
/// 1. from `lat-package`'s chases: per package, its chases to its own and
///    every other package's memory weighted by their nodes, the mean over
///    packages (every package to every package measured);
/// 2. else `lat interleave`'s chase over every node with CPUs and memory
///    (one CPU, measured directly);
/// 3. else from the cells ([`DerivedFrom::Cells`]): each CPU node's mean
///    cell over the DRAM nodes, the mean over CPU nodes, every such cell
///    measured; nothing with only local cells (it would pass the local
///    latency for the spread one).
pub fn spread_lat(
    d: &RunData,
    cells: Option<&BTreeMap<(u32, u32), f64>>,
    layout: &Layout,
    missing: &mut Vec<Missing>,
) -> Option<Figure> {
    let chases: BTreeMap<(u32, u32), (f64, usize)> = {
        let mut m: BTreeMap<(u32, u32), (f64, usize)> = BTreeMap::new();
        for (s, c) in package_chases(d) {
            let e = m.entry((s.package, s.mem_package)).or_insert((c.median_ns, s.mem_nodes.len()));
            e.0 = e.0.min(c.median_ns);
        }
        m
    };
    let from: BTreeSet<u32> = chases.keys().map(|k| k.0).collect();
    if every_package(&from, layout) {
        let ids: Vec<u32> = if layout.from_topology {
            layout.package_ids()
        } else {
            from.iter().copied().collect()
        };
        let per: Option<Vec<f64>> = ids
            .iter()
            .map(|&p| {
                let mut sum = 0.0;
                let mut weight = 0usize;
                for &q in &ids {
                    let (ns, w) = chases.get(&(p, q))?;
                    sum += ns * *w as f64;
                    weight += w;
                }
                (weight > 0).then(|| sum / weight as f64)
            })
            .collect();
        if let Some(v) = per.and_then(|v| mean(&v)) {
            return Some(Figure::measured(v));
        }
    }
    let interleaved: Vec<f64> = d
        .chase_mode(lat::Mode::Point)
        .filter(|c| c.interleave.as_ref().is_some_and(|n| n.len() > 1) && c.median_ns.is_finite())
        .map(|c| c.median_ns)
        .collect();
    if let Some(v) = mean(&interleaved) {
        return Some(Figure::measured(v));
    }
    let cells = cells?;
    let spans = cells.keys().any(|(c, m)| c != m && !layout.memory_only.contains(m));
    if !spans {
        return None;
    }
    let mut rows: BTreeSet<u32> = cells.keys().map(|k| k.0).collect();
    rows.extend(layout.node_package.keys().copied());
    let dram: BTreeSet<u32> = if layout.dram_nodes.is_empty() {
        cells
            .keys()
            .flat_map(|&(c, m)| [c, m])
            .filter(|n| !layout.memory_only.contains(n))
            .collect()
    } else {
        layout.dram_nodes.clone()
    };
    let mut means = Vec::new();
    let mut absent = Vec::new();
    for &c in &rows {
        let mut row = Vec::new();
        for &m in &dram {
            match cells.get(&(c, m)) {
                Some(v) => row.push(*v),
                None => absent.push((c, m)),
            }
        }
        means.extend(mean(&row));
    }
    if !absent.is_empty() {
        missing.push(Missing { metric: Fixed::SpreadLat, what: Lacking::LatCells(absent) });
        return None;
    }
    mean(&means).map(|v| Figure::derived(v, DerivedFrom::Cells))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{catalogue_and_missing, MetricValue};
    use crate::data::tests::{rec, run_of};
    use crate::study::{Floors, GroupDerived, GroupInput, RowDerived, Study, StudyNote};
    use results::run::{LoadedRun, RunId};
    use results::runstats::{Criteria, GroupVerdict};
    use serde_json::json;
    use topo::synthetic::Machine;

    /// Two sockets of `per` nodes of 2 CPUs each (node n on package
    /// n / per), 8 GiB a node, and a CXL node after them when `cxl`.
    fn machine(per: u32, cxl: bool) -> topo::Topology {
        let mut m = Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, &format!("0-{}", 2 * per - 1))
            .package(1, &format!("{}-{}", 2 * per, 4 * per - 1));
        for n in 0..2 * per {
            m = m.node(n, &format!("{}-{}", 2 * n, 2 * n + 1), 8 << 30);
        }
        if cxl {
            m = m.node(2 * per, "", 64 << 30);
        }
        m.build()
    }

    fn run(t: &topo::Topology, records: Vec<results::Record>) -> LoadedRun {
        let mut r = run_of(records, Some(t.nodes.len() as u64));
        r.topology = results::context::RunTopology::of(t);
        r.machine_info = serde_json::from_value(json!({ "packages": 2 })).unwrap();
        r
    }

    fn bw_cell(c: u32, m: u32, gbs: f64) -> results::Record {
        rec(
            "bw",
            json!({"mode": "matrix", "kernel": "triad", "cpu_node": c, "mem_node": m, "best_gbs": gbs}),
        )
    }

    fn bw_local(c: u32, gbs: f64) -> results::Record {
        rec(
            "bw",
            json!({"mode": "local", "kernel": "triad", "cpu_node": c, "mem_node": c, "best_gbs": gbs}),
        )
    }

    fn lat_cell(c: u32, m: u32, ns: f64) -> results::Record {
        rec("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns}))
    }

    fn scope(p: u32, to: u32, policy: &str, nodes: &str) -> serde_json::Value {
        let memory = if p == to { "own-package" } else { "other-package" };
        json!({"package": p, "memory": memory, "mem_package": to, "policy": policy,
               "cpus": "0", "cpu_nodes": "0", "mem_nodes": nodes})
    }

    fn bw_pkg(p: u32, to: u32, policy: &str, nodes: &str, gbs: f64) -> results::Record {
        rec(
            "bw",
            json!({"mode": "package", "kernel": "triad", "best_gbs": gbs,
                   "scope": scope(p, to, policy, nodes)}),
        )
    }

    fn lat_pkg(p: u32, to: u32, nodes: &str, ns: f64) -> results::Record {
        rec(
            "lat",
            json!({"mode": "package", "cpu": 0, "median_ns": ns, "interleave": nodes,
                   "scope": scope(p, to, "interleave", nodes)}),
        )
    }

    fn get<'a>(c: &'a [MetricValue], id: &str) -> Option<&'a MetricValue> {
        c.iter().find(|m| m.def.id == id)
    }

    /// SNC2 on two sockets: cells of 100 GB/s local and 30 GB/s across
    /// (which sum to 200 and 60 per package), package records of 150/160
    /// and 45/47 (what the packages move at once, not the sums): the
    /// metrics read the records and are not labelled derived.
    #[test]
    fn package_figures_are_the_package_records_not_the_sums_of_cells() {
        let t = machine(2, true);
        let mut recs = Vec::new();
        for c in 0..4u32 {
            recs.push(bw_local(c, 100.0));
            for m in 0..5u32 {
                let gbs = match m {
                    4 => 20.0,
                    _ if m == c => 100.0,
                    _ if m / 2 == c / 2 => 70.0,
                    _ => 30.0,
                };
                recs.push(bw_cell(c, m, gbs));
            }
        }
        let (c, _) = catalogue_and_missing(&run(&t, recs.clone()));
        let derived = |c: &[MetricValue], id: &str| get(c, id).and_then(|m| m.derived);
        // without package records: the sums of cells, labelled
        assert_eq!(get(&c, "local_bw_pkg_gbs").map(|m| m.value), Some(200.0));
        assert_eq!(derived(&c, "local_bw_pkg_gbs"), Some(DerivedFrom::Cells));
        assert_eq!(get(&c, "cross_pkg_bw_gbs").map(|m| m.value), Some(60.0));
        assert_eq!(derived(&c, "cross_pkg_bw_gbs"), Some(DerivedFrom::Cells));
        assert!(get(&c, "pkg_interleave_bw_gbs").is_none());
        recs.extend([
            bw_pkg(0, 0, "bind-per-node", "0-1", 150.0),
            bw_pkg(0, 0, "interleave", "0-1", 120.0),
            bw_pkg(1, 1, "bind-per-node", "2-3", 160.0),
            bw_pkg(1, 1, "interleave", "2-3", 124.0),
            bw_pkg(0, 1, "interleave", "2-3", 45.0),
            bw_pkg(1, 0, "interleave", "0-1", 47.0),
        ]);
        let (c, missing) = catalogue_and_missing(&run(&t, recs));
        assert!(missing.is_empty(), "{missing:?}");
        assert_eq!(get(&c, "local_bw_pkg_gbs").map(|m| m.value), Some(155.0));
        assert_eq!(derived(&c, "local_bw_pkg_gbs"), None);
        assert_eq!(get(&c, "pkg_interleave_bw_gbs").map(|m| m.value), Some(122.0));
        assert_eq!(get(&c, "cross_pkg_bw_gbs").map(|m| m.value), Some(46.0));
        assert_eq!(derived(&c, "cross_pkg_bw_gbs"), None);
        // the node-scope neighbour figure stays the cells'
        assert_eq!(get(&c, "neighbour_bw_gbs").map(|m| m.value), Some(70.0));
    }

    /// One package's records are not the machine's: with package 1's
    /// missing, the figure falls back (labelled), never the mean of one.
    #[test]
    fn records_of_some_packages_only_are_not_used() {
        let t = machine(1, false);
        let recs = vec![
            bw_local(0, 100.0),
            bw_local(1, 90.0),
            bw_pkg(0, 0, "bind-per-node", "0", 97.0),
            bw_pkg(0, 1, "interleave", "1", 40.0),
            lat_pkg(0, 0, "0", 80.0),
            lat_pkg(0, 1, "1", 130.0),
        ];
        let (c, _) = catalogue_and_missing(&run(&t, recs));
        let m = get(&c, "local_bw_pkg_gbs").unwrap();
        assert_eq!((m.value, m.derived), (95.0, Some(DerivedFrom::Cells)));
        assert!(get(&c, "cross_pkg_bw_gbs").is_none());
        assert!(get(&c, "pkg_lat_ns").is_none());
        assert!(get(&c, "cross_pkg_lat_ns").is_none());
        assert!(get(&c, "spread_lat_ns").is_none());
    }

    /// The spread latency from the package chases: per package its own
    /// and the other package's latency weighted by their nodes (2 and 2);
    /// the cells (which would give 120) are not used.
    #[test]
    fn the_spread_latency_weighs_the_package_chases_by_their_nodes() {
        let t = machine(2, false);
        let mut recs = Vec::new();
        for c in 0..4u32 {
            for m in 0..4u32 {
                recs.push(lat_cell(c, m, if m / 2 == c / 2 { 100.0 } else { 140.0 }));
            }
        }
        recs.extend([
            lat_pkg(0, 0, "0-1", 80.0),
            lat_pkg(0, 1, "2-3", 140.0),
            lat_pkg(1, 1, "2-3", 84.0),
            lat_pkg(1, 0, "0-1", 136.0),
        ]);
        let (c, _) = catalogue_and_missing(&run(&t, recs));
        let s = get(&c, "spread_lat_ns").unwrap();
        assert_eq!((s.value, s.derived), (110.0, None));
        assert_eq!(get(&c, "pkg_lat_ns").map(|m| m.value), Some(82.0));
        assert_eq!(get(&c, "cross_pkg_lat_ns").map(|m| m.value), Some(138.0));
        // `lat interleave`'s point when there are no chases
        let point = rec(
            "lat",
            json!({"mode": "point", "cpu": 0, "cpu_node": 0, "median_ns": 117.0,
                   "interleave": "0-3"}),
        );
        let mut cells: Vec<results::Record> = (0..4u32)
            .flat_map(|c| (0..4u32).map(move |m| lat_cell(c, m, 100.0 + 10.0 * m as f64)))
            .collect();
        cells.push(point);
        let (c, _) = catalogue_and_missing(&run(&t, cells));
        let s = get(&c, "spread_lat_ns").unwrap();
        assert_eq!((s.value, s.derived), (117.0, None));
    }

    /// SNC4 on two sockets (8 nodes): node 0's row holds 5 of its 8
    /// cells (its same-package cells missing). No spread latency from the
    /// 5, and the 3 missing cells are named; the full matrix gives the
    /// derived figure.
    #[test]
    fn a_spread_latency_is_never_computed_from_part_of_a_row() {
        let t = machine(4, false);
        let ns = |c: u32, m: u32| match (c == m, c / 4 == m / 4) {
            (true, _) => 80.0,
            (false, true) => 95.0,
            _ => 140.0,
        };
        let full: Vec<results::Record> =
            (0..8u32).flat_map(|c| (0..8u32).map(move |m| lat_cell(c, m, ns(c, m)))).collect();
        let (c, missing) = catalogue_and_missing(&run(&t, full.clone()));
        assert!(missing.is_empty());
        let s = get(&c, "spread_lat_ns").unwrap();
        assert_eq!(s.derived, Some(DerivedFrom::Cells));
        assert!((s.value - (80.0 + 3.0 * 95.0 + 4.0 * 140.0) / 8.0).abs() < 1e-9, "{}", s.value);
        let part: Vec<results::Record> = (0..8u32)
            .flat_map(|c| (0..8u32).map(move |m| (c, m)))
            .filter(|&(c, m)| !(c == 0 && (1..4).contains(&m)))
            .map(|(c, m)| lat_cell(c, m, ns(c, m)))
            .collect();
        let (c, missing) = catalogue_and_missing(&run(&t, part));
        assert!(get(&c, "spread_lat_ns").is_none(), "from 5 of node 0's 8 cells");
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert_eq!(missing[0].metric, Fixed::SpreadLat);
        assert_eq!(missing[0].what, Lacking::LatCells(vec![(0, 1), (0, 2), (0, 3)]));
    }

    /// What a package figure derived from cells lacks: the local
    /// bandwidth of nodes, cells of the bandwidth matrix (two sockets in
    /// SNC2, nothing measured at package scope).
    #[test]
    fn what_a_derived_package_figure_lacks_is_named() {
        let t = machine(2, false);
        let recs = vec![bw_local(0, 100.0), bw_local(3, 100.0), bw_cell(0, 2, 30.0)];
        let (_, missing) = catalogue_and_missing(&run(&t, recs));
        let said: Vec<(Fixed, Lacking)> =
            missing.iter().map(|m| (m.metric, m.what.clone())).collect();
        let cells = vec![(0, 3), (1, 2), (1, 3), (2, 0), (2, 1), (3, 0), (3, 1)];
        assert_eq!(
            said,
            [
                (Fixed::LocalBwPkg, Lacking::LocalBw(vec![1, 2])),
                (Fixed::CrossPkgBw, Lacking::BwCells(cells))
            ]
        );
    }

    /// NUMA off on two sockets: each package on the memory the OS gives
    /// (`os-given`) is its own-memory interleaved figure; nothing across
    /// the packages. Every package shares that memory, so the bound figure
    /// per package is the whole machine's (every CPU at once) shared by
    /// the packages, and a package measured alone (which also takes what
    /// the idle package would) is only a labelled fallback.
    #[test]
    fn numa_off_package_figures_are_on_the_memory_the_os_gives() {
        let t = Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-7", 64 << 30)
            .build();
        let alone = vec![bw_pkg(0, 0, "os-given", "0", 70.0), bw_pkg(1, 1, "os-given", "0", 72.0)];
        let global = rec("bw", json!({"mode": "global", "kernel": "triad", "best_gbs": 100.0}));
        let mut recs = alone.clone();
        recs.push(global);
        let (c, _) = catalogue_and_missing(&run(&t, recs));
        let m = get(&c, "local_bw_pkg_gbs").unwrap();
        assert_eq!((m.value, m.derived), (50.0, None));
        assert_eq!(get(&c, "pkg_interleave_bw_gbs").map(|m| m.value), Some(71.0));
        assert!(get(&c, "cross_pkg_bw_gbs").is_none());

        let (c, _) = catalogue_and_missing(&run(&t, alone));
        let m = get(&c, "local_bw_pkg_gbs").unwrap();
        assert_eq!((m.value, m.derived), (71.0, Some(DerivedFrom::PackageAlone)));
    }

    fn study_run(id: i64, label: &str, pkg: Option<(f64, f64)>, cells: (f64, f64)) -> LoadedRun {
        let t = machine(2, false);
        let mut recs = Vec::new();
        for c in 0..4u32 {
            recs.push(bw_local(c, cells.0));
            for m in 0..4u32 {
                let gbs = if m / 2 == c / 2 { cells.0 } else { cells.1 };
                recs.push(bw_cell(c, m, gbs));
            }
        }
        if let Some((own, cross)) = pkg {
            recs.extend([
                bw_pkg(0, 0, "bind-per-node", "0-1", own),
                bw_pkg(1, 1, "bind-per-node", "2-3", own),
                bw_pkg(0, 1, "interleave", "2-3", cross),
                bw_pkg(1, 0, "interleave", "0-1", cross),
            ]);
        } else {
            recs.push(rec(
                "step",
                json!({"step": "bw-cross-package", "status": "skipped",
                                         "reason": "left out by --skip"}),
            ));
        }
        let mut r = run(&t, recs);
        r.summary.id = RunId(id);
        r.summary.label = Some(label.into());
        r.config =
            serde_json::from_value(json!({"nodes": 4, "declared": {"bios.x": label}})).unwrap();
        r
    }

    fn group(label: &str, runs: Vec<LoadedRun>) -> GroupInput {
        GroupInput { reference: format!("label:{label}"), runs }
    }

    /// Group A measured its package figures, group B only has cells (the
    /// cross-package figure derived, 20% above A's measured one): both
    /// shown, the derived one labelled, no verdict between them, a note
    /// naming each side and B's runs with why; nothing picked on it.
    #[test]
    fn a_study_never_judges_a_derived_figure_against_a_measured_one() {
        let a: Vec<LoadedRun> =
            (0..3).map(|i| study_run(1 + i, "A", Some((150.0, 50.0)), (100.0, 30.0))).collect();
        let b: Vec<LoadedRun> =
            (0..3).map(|i| study_run(4 + i, "B", None, (100.0, 30.0 + i as f64 * 0.1))).collect();
        let s = Study::build(
            &[group("A", a), group("B", b)],
            0,
            &Criteria::default(),
            &Floors::default(),
        );
        let m = s.metrics.iter().find(|m| m.metric == "cross_pkg_bw_gbs").unwrap();
        assert_eq!(m.groups[0].derived, None);
        let cells = GroupDerived { from: vec![DerivedFrom::Cells], runs: None };
        assert_eq!(m.groups[1].derived, Some(cells.clone()));
        assert_eq!(m.groups[1].verdict, None, "no verdict across measured and derived");
        assert!(m.pairs[0][1].is_none() && m.pairs[1][0].is_none());
        assert_eq!(m.derived, Some(RowDerived { how: vec![cells], named: Some(vec![1]) }));
        assert!(
            s.notes.iter().any(|n| matches!(n, StudyNote::MixedScope { metric, measured, derived }
                if *metric == "cross_pkg_bw_gbs" && measured == &[0] && derived == &[1])),
            "{:?}",
            s.notes
        );
        let b_runs = vec![(1, vec![Some(RunId(4)), Some(RunId(5)), Some(RunId(6))])];
        let why = s
            .notes
            .iter()
            .find_map(|n| match n {
                StudyNote::Derived { runs, steps, .. } if *runs == b_runs => Some(steps),
                _ => None,
            })
            .expect("runs named");
        assert!(
            why.iter().any(|n| n.text().contains("bw-cross-package skipped: left out by --skip")),
            "{why:?}"
        );
        for r in &s.recommendations {
            assert_ne!(
                r.decided_by.as_ref().map(ToString::to_string).as_deref(),
                Some("cross_pkg_bw_gbs"),
                "{r:?}"
            );
            assert_ne!(
                r.decided_by.as_ref().map(ToString::to_string).as_deref(),
                Some("local_bw_pkg_gbs"),
                "{r:?}"
            );
        }
    }

    /// Two groups with the same cells, one group's package records 10%
    /// higher: the measured figures decide (better), where the derived
    /// ones of the same runs would have called them the same.
    #[test]
    fn measured_package_figures_are_judged() {
        let a: Vec<LoadedRun> = (0..3)
            .map(|i| study_run(1 + i, "A", Some((150.0 + i as f64 * 0.2, 50.0)), (100.0, 30.0)))
            .collect();
        let b: Vec<LoadedRun> = (0..3)
            .map(|i| study_run(4 + i, "B", Some((165.0 + i as f64 * 0.2, 50.0)), (100.0, 30.0)))
            .collect();
        let s = Study::build(
            &[group("A", a), group("B", b)],
            0,
            &Criteria::default(),
            &Floors::default(),
        );
        let m = s.metrics.iter().find(|m| m.metric == "local_bw_pkg_gbs").unwrap();
        assert_eq!(m.derived, None);
        assert_eq!(m.groups[1].verdict, Some(GroupVerdict::Better));
        assert!(
            s.notes
                .iter()
                .all(|n| !matches!(n, StudyNote::Derived { .. } | StudyNote::MixedScope { .. })),
            "{:?}",
            s.notes
        );
    }
}
