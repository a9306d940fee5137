//! The metric catalogue: every figure a run holds that a settings study
//! (`compare`, `report --compare`) or a fleet can put side by side, each
//! with a stable id, a unit, a direction and how it is drawn from the
//! run's typed records. Documented for users in docs/store.md.
//!
//! * metrics by hardware relation and scope ([`crate::layout`]), never by
//!   OS node id or SLIT value (both change with SNC, NPS, COD and
//!   `numa=off`): local bandwidth per node and per package, global and
//!   interleaved bandwidth, neighbour-node, cross-package and memory-tier
//!   bandwidth, local, neighbour-node, other-package and memory-tier
//!   latency, the spread-memory latency, loaded latency; latency cells from
//!   the matrix, else points, else the per-CPU results;
//! * the remote penalty (other-package / local latency);
//! * the latency a thread sees (`thread_lat_ns`): the local latency where
//!   the OS shows several nodes (a thread bound to its node gets it), the
//!   mean over CPUs of the per-CPU latency where it shows one (no thread
//!   can be bound to the fast half);
//! * per-CPU latency to each memory node: mean over CPUs, the fastest and
//!   slowest group's median, the split (slowest / fastest) and the number
//!   of groups, regrouped from the per-CPU results when the run holds no
//!   `lat-summary`;
//! * every `exec` policy's program metric and wall time; where every
//!   successful run of the policy has RAPL power, each higher-is-better
//!   program metric per watt and the energy per run;
//! * per GPU (`numaprobe gpu`), the host-to-device bandwidth from its
//!   fastest node and the slowest node's shortfall.
//!
//! A metric that a configuration makes impossible (remote figures with one
//! OS node or one package) is never drawn for it.

use std::collections::BTreeMap;

use results::lat::{self, LatResult};
use results::run::LoadedRun;
use results::stats::mean;
use serde::Serialize;

use crate::data::RunData;
use crate::layout::{Layout, Relation, Scope};
pub use crate::metric_id::{
    Fixed, GpuStat, MetricId, PerCpuStat, EXEC_ENERGY, EXEC_METRIC, EXEC_PER_WATT, EXEC_WALL,
};
use crate::metrics::{lat_matrix, metrics, MetricKey};
use crate::scope;
pub use crate::scope::{DerivedFrom, Missing};

/// One metric of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetricDef {
    /// Stable id (`local_bw_gbs`, `per_cpu_split_to_node0`, `exec_metric`).
    pub id: MetricId,
    pub name: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// The hardware relation of threads to memory the figure measures
    /// ([`Relation`]): never an OS node id or a SLIT value, which change
    /// with the NUMA mode.
    pub relation: Relation,
    /// Over what the figure is taken ([`Scope`]).
    pub scope: Scope,
    /// The `run` step that measures it, when one does.
    #[serde(skip)]
    pub step: Option<&'static str>,
    /// `run` plans that step only where the OS shows two or more nodes:
    /// never asked for where every group saw one.
    #[serde(skip)]
    pub step_needs_nodes: bool,
}

impl MetricDef {
    fn new(
        id: impl Into<MetricId>,
        name: impl Into<String>,
        unit: &str,
        higher: bool,
    ) -> MetricDef {
        MetricDef {
            id: id.into(),
            name: name.into(),
            unit: unit.into(),
            higher_is_better: higher,
            relation: Relation::Program,
            scope: Scope::Program,
            step: None,
            step_needs_nodes: false,
        }
    }

    fn rel(mut self, relation: Relation, scope: Scope) -> MetricDef {
        self.relation = relation;
        self.scope = scope;
        self
    }

    fn step(mut self, s: &'static str) -> MetricDef {
        self.step = Some(s);
        self
    }

    fn step_needs_nodes(mut self) -> MetricDef {
        self.step_needs_nodes = true;
        self
    }

    /// A bandwidth figure of one node's CPUs (a node's local figure, a
    /// matrix cell): its size is the NUMA mode's (half the cores and a
    /// quarter of the channels under SNC2), so two runs' figures are the
    /// same metric only when their nodes are alike ([`Structure`]).
    pub fn sized_by_node(&self) -> bool {
        self.scope == Scope::Node && self.unit == "GB/s"
    }

    /// Why a configuration of this layout cannot have the metric.
    pub fn impossible(&self, layout: &Layout) -> Option<crate::layout::NotApplicable> {
        layout.impossible(self.relation)
    }
}

/// The remote penalty's id.
pub const REMOTE_PENALTY: &str = Fixed::RemotePenalty.as_str();
/// The id of the latency a thread sees.
pub const THREAD_LAT: &str = Fixed::ThreadLat.as_str();
/// The id of the latency a thread sees to memory spread over every node.
pub const SPREAD_LAT: &str = Fixed::SpreadLat.as_str();
/// Local bandwidth per package.
pub const LOCAL_BW_PKG: &str = Fixed::LocalBwPkg.as_str();
/// Cross-package bandwidth, per package.
pub const CROSS_PKG_BW: &str = Fixed::CrossPkgBw.as_str();
/// Bandwidth and latency to the other nodes of the same package.
pub const NEIGHBOUR_BW: &str = Fixed::NeighbourBw.as_str();
pub const NEIGHBOUR_LAT: &str = Fixed::NeighbourLat.as_str();
/// Bandwidth and latency to memory-only nodes.
pub const TIER_BW: &str = Fixed::TierBw.as_str();
pub const TIER_LAT: &str = Fixed::TierLat.as_str();
/// Latency to another node where the run says nothing of its package.
pub const OTHER_NODE_LAT: &str = Fixed::OtherNodeLat.as_str();
/// Local bandwidth per watt of package and DRAM power (RAPL), GB/s per W.
pub const LOCAL_BW_PER_W: &str = Fixed::LocalBwPerW.as_str();

/// The catalogue entry of a headline metric.
pub fn headline_def(k: MetricKey) -> MetricDef {
    let d = MetricDef::new(k, k.name(), k.unit(), k.higher_is_better());
    match k {
        MetricKey::LocalBw => d.rel(Relation::SameNode, Scope::Node).step("bw-local"),
        MetricKey::GlobalBw => d.rel(Relation::BoundPerDomain, Scope::Machine).step("bw-global"),
        // Measured under one OS node too (firmware interleave below
        // it), but `run` plans the step only with two memory nodes.
        MetricKey::InterleaveBw => {
            d.rel(Relation::Interleaved, Scope::Machine).step("bw-interleave").step_needs_nodes()
        }
        MetricKey::CrossBw => MetricDef {
            name: "Cross-node bandwidth (other node, package unknown)".into(),
            ..d.rel(Relation::OtherNode, Scope::Node).step("bw-matrix").step_needs_nodes()
        },
        MetricKey::LocalLat => d.rel(Relation::SameNode, Scope::Node).step("lat-matrix"),
        MetricKey::RemoteLat => MetricDef {
            name: "Remote latency (other package)".into(),
            ..d.rel(Relation::OtherPackage, Scope::Node).step("lat-matrix").step_needs_nodes()
        },
        MetricKey::LoadedLatPeak => d.rel(Relation::SameNode, Scope::Machine).step("lat-loaded"),
    }
}

/// The remote penalty's entry.
pub fn remote_penalty_def() -> MetricDef {
    MetricDef::new(
        Fixed::RemotePenalty,
        "Remote penalty (other-package / local latency)",
        "x",
        false,
    )
    .rel(Relation::OtherPackage, Scope::Node)
    .step("lat-matrix")
    .step_needs_nodes()
}

/// The thread latency's entry.
pub fn thread_lat_def() -> MetricDef {
    MetricDef::new(
        Fixed::ThreadLat,
        "Latency a thread sees (bound locally; CPU mean under one OS node)",
        "ns",
        false,
    )
    .rel(Relation::SameNode, Scope::Cpu)
    .step("lat-matrix")
}

/// The entries of the metrics named by relation (other than the
/// headline ones).
pub fn relation_def(id: Fixed) -> Option<MetricDef> {
    let d = match id {
        Fixed::SpreadLat => MetricDef::new(id, "Spread-memory latency", "ns", false)
            .rel(Relation::Spread, Scope::Machine)
            .step("lat-interleave")
            .step_needs_nodes(),
        Fixed::LocalBwPkg => MetricDef::new(id, "Local bandwidth per package", "GB/s", true)
            .rel(Relation::BoundPerDomain, Scope::Package)
            .step("bw-package"),
        Fixed::PkgInterleaveBw => {
            MetricDef::new(id, "Package bandwidth, interleaved over its own nodes", "GB/s", true)
                .rel(Relation::OwnPackage, Scope::Package)
                .step("bw-package")
        }
        Fixed::CrossPkgBw => MetricDef::new(id, "Cross-package bandwidth", "GB/s", true)
            .rel(Relation::OtherPackage, Scope::Package)
            .step("bw-cross-package")
            .step_needs_nodes(),
        Fixed::PkgLat => {
            MetricDef::new(id, "Package latency, interleaved over its own nodes", "ns", false)
                .rel(Relation::OwnPackage, Scope::Package)
                .step("lat-package")
        }
        Fixed::CrossPkgLat => {
            MetricDef::new(id, "Cross-package latency, interleaved over its nodes", "ns", false)
                .rel(Relation::OtherPackage, Scope::Package)
                .step("lat-package")
                .step_needs_nodes()
        }
        Fixed::NeighbourBw => MetricDef::new(id, "Neighbour-node bandwidth", "GB/s", true)
            .rel(Relation::SamePackage, Scope::Node)
            .step("bw-matrix")
            .step_needs_nodes(),
        Fixed::NeighbourLat => MetricDef::new(id, "Neighbour-node latency", "ns", false)
            .rel(Relation::SamePackage, Scope::Node)
            .step("lat-matrix")
            .step_needs_nodes(),
        Fixed::TierBw => MetricDef::new(id, "Memory-tier bandwidth", "GB/s", true)
            .rel(Relation::MemoryTier, Scope::Node)
            .step("bw-matrix")
            .step_needs_nodes(),
        Fixed::TierLat => MetricDef::new(id, "Memory-tier latency", "ns", false)
            .rel(Relation::MemoryTier, Scope::Node)
            .step("lat-matrix")
            .step_needs_nodes(),
        Fixed::LocalBwPerW => MetricDef::new(
            id,
            "Local bandwidth per watt (package + DRAM, RAPL)",
            "GB/s per W",
            true,
        )
        .rel(Relation::SameNode, Scope::Node)
        .step("bw-local"),
        Fixed::OtherNodeLat => {
            MetricDef::new(id, "Remote latency (other node, package unknown)", "ns", false)
                .rel(Relation::OtherNode, Scope::Node)
                .step("lat-matrix")
                .step_needs_nodes()
        }
        Fixed::RemotePenalty | Fixed::ThreadLat => return None,
    };
    Some(d)
}

/// One metric's value in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricValue {
    pub def: MetricDef,
    pub value: f64,
    /// The samples `value` sums up, when the run holds several whole
    /// measurements of it (each successful repeat of an `exec` policy,
    /// alternated across policies); empty: `value` is the only sample.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<f64>,
    /// How the value was obtained when it was not measured at the
    /// metric's scope ([`DerivedFrom`]): shown, never judged against a
    /// measured value, never deciding a pick.
    #[serde(skip)]
    pub derived: Option<DerivedFrom>,
}

impl MetricValue {
    /// A value that is its own only sample.
    pub fn new(def: MetricDef, value: f64) -> MetricValue {
        MetricValue { def, value, samples: Vec::new(), derived: None }
    }
}

pub use crate::data::os_nodes;

/// Per-CPU latency to one memory node, grouped.
#[derive(Debug, Clone, PartialEq)]
pub struct PerCpuGroups {
    pub mem_node: Option<u32>,
    /// Mean over the CPUs of their median latency, ns.
    pub mean_ns: f64,
    /// Each group's CPUs count and median, fastest first.
    pub groups: Vec<(usize, f64)>,
    /// True when the groups came from the run's own `lat-summary`.
    pub from_summary: bool,
}

/// Relative gap between sorted neighbours that starts a new group when
/// regrouping per-CPU results (the measuring side's relative floor).
const REGROUP_REL_GAP: f64 = 0.08;
/// Gap in robust standard deviations of one CPU's samples that starts a
/// new group (the measuring side's noise factor).
const REGROUP_NOISE_GAP: f64 = 6.0;

/// The per-CPU latency of a run, one entry per memory node measured: the
/// groups of the run's `lat-summary` when it holds one for that node, else
/// regrouped from the per-CPU results by the same rule `lat --per-cpu`
/// uses (sorted latencies split where neighbours differ by more than 6
/// robust standard deviations of one CPU's samples and 8%).
pub fn per_cpu_groups(d: &RunData) -> Vec<PerCpuGroups> {
    let mut by_node: BTreeMap<Option<u32>, Vec<&LatResult>> = BTreeMap::new();
    for c in d.chase_mode(lat::Mode::PerCpu).filter(|c| c.median_ns.is_finite()) {
        by_node.entry(c.mem_node).or_default().push(c);
    }
    let mut out = Vec::new();
    for (node, pts) in by_node {
        let mean_ns = pts.iter().map(|p| p.median_ns).sum::<f64>() / pts.len() as f64;
        let summary =
            d.per_cpu_summaries.iter().find(|s| s.mem_node == node && !s.groups.is_empty());
        let (groups, from_summary) = match summary {
            Some(s) => {
                let mut g: Vec<(usize, f64)> =
                    s.groups.iter().map(|g| (g.cpus.len(), g.median_ns)).collect();
                g.sort_by(|a, b| a.1.total_cmp(&b.1));
                (g, true)
            }
            None => (regroup(&pts), false),
        };
        out.push(PerCpuGroups { mem_node: node, mean_ns, groups, from_summary });
    }
    // A summary without its per-CPU results (an import that kept only the
    // summaries): the mean weighted by each group's CPUs.
    for s in &d.per_cpu_summaries {
        if s.groups.is_empty() || out.iter().any(|p| p.mem_node == s.mem_node) {
            continue;
        }
        let mut groups: Vec<(usize, f64)> =
            s.groups.iter().map(|g| (g.cpus.len(), g.median_ns)).collect();
        groups.sort_by(|a, b| a.1.total_cmp(&b.1));
        let cpus: usize = groups.iter().map(|g| g.0).sum();
        let mean_ns = groups.iter().map(|g| g.0 as f64 * g.1).sum::<f64>() / cpus.max(1) as f64;
        out.push(PerCpuGroups { mem_node: s.mem_node, mean_ns, groups, from_summary: true });
    }
    out
}

/// Groups per-CPU points by gap clustering: `(CPUs, median ns)` per group,
/// fastest first.
fn regroup(pts: &[&LatResult]) -> Vec<(usize, f64)> {
    let mut v: Vec<(f64, f64)> =
        pts.iter().map(|p| (p.median_ns, p.noise_pct.max(0.0) / 100.0 * p.median_ns)).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let noise = results::stats::median(&v.iter().map(|x| x.1).collect::<Vec<_>>()).unwrap_or(0.0);
    let mut cuts: Vec<Vec<f64>> = Vec::new();
    let mut prev: Option<f64> = None;
    for (ns, _) in v {
        let split =
            prev.is_some_and(|p| ns - p > (REGROUP_NOISE_GAP * noise).max(REGROUP_REL_GAP * p));
        match cuts.last_mut() {
            Some(last) if !split => last.push(ns),
            _ => cuts.push(vec![ns]),
        }
        prev = Some(ns);
    }
    cuts.into_iter().map(|c| (c.len(), results::stats::median(&c).unwrap_or(f64::NAN))).collect()
}

fn node_words(n: Option<u32>) -> String {
    n.map_or_else(|| "memory".into(), |n| format!("node {n}"))
}

/// Where a run's latency cells come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellSource {
    /// The `lat` matrix.
    Matrix,
    /// `lat` points that name both nodes.
    Points,
    /// Per-CPU results (`lat --per-cpu`): each CPU node's cell is the mean
    /// over its CPUs measured, what a thread on that node sees.
    PerCpu,
}

/// Figures by `(cpu_node, mem_node)`.
pub type Cells = BTreeMap<(u32, u32), f64>;

/// The run's latency cells `(cpu_node, mem_node) -> ns`: the matrix,
/// else the points that name both nodes, else derived from the per-CPU
/// results (the CPUs of each node to the memory node measured).
pub fn lat_cells(d: &RunData) -> Option<(CellSource, Cells)> {
    let m: BTreeMap<(u32, u32), f64> =
        lat_matrix(d).into_iter().map(|(k, p)| (k, p.median_ns)).collect();
    if !m.is_empty() {
        return Some((CellSource::Matrix, m));
    }
    let mut pts: BTreeMap<(u32, u32), Vec<f64>> = BTreeMap::new();
    for p in d.chase_mode(lat::Mode::Point).filter(|l| l.median_ns.is_finite()) {
        if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
            pts.entry((c, m)).or_default().push(p.median_ns);
        }
    }
    let mut source = CellSource::Points;
    if pts.is_empty() {
        source = CellSource::PerCpu;
        for p in d.chase_mode(lat::Mode::PerCpu).filter(|l| l.median_ns.is_finite()) {
            if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
                pts.entry((c, m)).or_default().push(p.median_ns);
            }
        }
    }
    if pts.is_empty() {
        return None;
    }
    let cells = pts.into_iter().map(|(k, v)| (k, v.iter().sum::<f64>() / v.len() as f64));
    Some((source, cells.collect()))
}

/// Cells grouped by their relation under `layout`.
fn by_relation(cells: &BTreeMap<(u32, u32), f64>, layout: &Layout) -> BTreeMap<Relation, Vec<f64>> {
    let mut out: BTreeMap<Relation, Vec<f64>> = BTreeMap::new();
    for (&(c, m), &v) in cells {
        out.entry(layout.relation(c, m)).or_default().push(v);
    }
    out
}

/// Every catalogue metric the run holds, in catalogue order.
pub fn catalogue(run: &LoadedRun) -> Vec<MetricValue> {
    catalogue_and_missing(run).0
}

/// [`catalogue`], and the figures left out because some of the cells or
/// records they need are not in the run (each saying which).
pub fn catalogue_and_missing(run: &LoadedRun) -> (Vec<MetricValue>, Vec<Missing>) {
    let d = RunData::of(run);
    let mut missing = Vec::new();
    let nodes = os_nodes(run, &d);
    let layout = Layout::of(run, nodes);
    let lat = lat_cells(&d);
    let (_, bw_cells) = crate::metrics::bw_matrix(&d);
    let bw_cells: BTreeMap<(u32, u32), f64> =
        bw_cells.into_iter().map(|(k, p)| (k, p.best_gbs)).collect();
    let cells = ByRelation {
        lat: lat.as_ref().map(|(_, c)| by_relation(c, &layout)).unwrap_or_default(),
        bw: by_relation(&bw_cells, &layout),
        bw_cells,
    };
    let mut c = Collected { layout: &layout, out: Vec::new(), derived: Vec::new() };
    let head = metrics(&d);
    for k in MetricKey::ALL {
        let v = match k {
            // Drawn by relation below.
            MetricKey::CrossBw => continue,
            MetricKey::LocalLat => cells.lat_of(Relation::SameNode),
            MetricKey::RemoteLat => cells.lat_of(Relation::OtherPackage),
            _ => head.get(&k).map(|m| m.value),
        };
        if let Some(v) = v {
            c.push(headline_def(k), v);
        }
        c.after_headline(k, &d, &cells, &mut missing);
    }
    let local = cells.lat_of(Relation::SameNode);
    if let (Some(r), Some(l)) = (cells.lat_of(Relation::OtherPackage), local) {
        if l > 0.0 {
            c.push(remote_penalty_def(), r / l);
        }
    }
    let per_cpu = per_cpu_groups(&d);
    // A thread under one OS node may run on any CPU: the mean over CPUs.
    let thread = if nodes <= 1 { per_cpu.first().map(|p| p.mean_ns).or(local) } else { local };
    if let Some(t) = thread {
        c.push(thread_lat_def(), t);
    }
    // Memory spread over every node ([`scope::spread_lat`]); under one OS
    // node, the latency a thread sees.
    let spread = if nodes <= 1 {
        thread.map(|t| scope::Figure { value: t, derived: None })
    } else {
        scope::spread_lat(&d, lat.as_ref().map(|(_, c)| c), &layout, &mut missing)
    };
    c.push_figure(Fixed::SpreadLat, spread);
    c.per_cpu(&per_cpu);
    if let Some(v) = local_bw_per_watt(&d) {
        c.push_fixed(Fixed::LocalBwPerW, v);
    }
    c.gpu(&d);
    let mut out = c.finish();
    out.extend(exec_values(run, &d));
    (out, missing)
}

/// A run's latency and bandwidth cells, and their means by hardware
/// relation.
struct ByRelation {
    lat: BTreeMap<Relation, Vec<f64>>,
    bw: BTreeMap<Relation, Vec<f64>>,
    bw_cells: BTreeMap<(u32, u32), f64>,
}

impl ByRelation {
    fn lat_of(&self, r: Relation) -> Option<f64> {
        self.lat.get(&r).and_then(|v| mean(v))
    }

    fn bw_of(&self, r: Relation) -> Option<f64> {
        self.bw.get(&r).and_then(|v| mean(v))
    }
}

/// The values drawn from a run so far, each possible under its layout, and
/// the fixed metrics whose figure was derived, with how.
struct Collected<'l> {
    layout: &'l Layout,
    out: Vec<MetricValue>,
    derived: Vec<(Fixed, DerivedFrom)>,
}

impl Collected<'_> {
    fn push(&mut self, def: MetricDef, value: f64) {
        if value.is_finite() && def.impossible(self.layout).is_none() {
            self.out.push(MetricValue::new(def, value));
        }
    }

    fn push_fixed(&mut self, id: Fixed, value: f64) {
        self.push(relation_def(id).expect("known id"), value);
    }

    /// A figure that may be derived instead of measured at its scope.
    fn push_figure(&mut self, id: Fixed, f: Option<scope::Figure>) {
        if let Some(f) = f {
            self.push_fixed(id, f.value);
            self.derived.extend(f.derived.map(|how| (id, how)));
        }
    }

    /// The figures by relation and scope that follow headline `k` in the
    /// catalogue's order.
    fn after_headline(
        &mut self,
        k: MetricKey,
        d: &RunData,
        cells: &ByRelation,
        missing: &mut Vec<Missing>,
    ) {
        let layout = self.layout;
        match k {
            MetricKey::GlobalBw => {
                self.push_figure(
                    Fixed::LocalBwPkg,
                    scope::local_bw_per_package(d, layout, missing),
                );
                if let Some(v) = scope::pkg_interleave_bw(d, layout) {
                    self.push_fixed(Fixed::PkgInterleaveBw, v);
                }
            }
            MetricKey::InterleaveBw => {
                self.push_figure(
                    Fixed::CrossPkgBw,
                    scope::cross_bw_per_package(d, &cells.bw_cells, layout, missing),
                );
                for (id, r) in [
                    (Fixed::NeighbourBw, Relation::SamePackage),
                    (Fixed::TierBw, Relation::MemoryTier),
                ] {
                    if let Some(v) = cells.bw_of(r) {
                        self.push_fixed(id, v);
                    }
                }
                if let Some(v) = cells.bw_of(Relation::OtherNode) {
                    self.push(headline_def(MetricKey::CrossBw), v);
                }
            }
            MetricKey::LocalLat => {
                for (id, r) in [
                    (Fixed::NeighbourLat, Relation::SamePackage),
                    (Fixed::TierLat, Relation::MemoryTier),
                    (Fixed::OtherNodeLat, Relation::OtherNode),
                ] {
                    if let Some(v) = cells.lat_of(r) {
                        self.push_fixed(id, v);
                    }
                }
                if let Some(v) = scope::pkg_lat(d, layout) {
                    self.push_fixed(Fixed::PkgLat, v);
                }
                if let Some(v) = scope::cross_pkg_lat(d, layout) {
                    self.push_fixed(Fixed::CrossPkgLat, v);
                }
            }
            _ => {}
        }
    }

    /// Per memory node of the per-CPU chases: the mean over CPUs, the
    /// fastest and slowest groups, their split and the number of groups.
    fn per_cpu(&mut self, per_cpu: &[PerCpuGroups]) {
        for p in per_cpu {
            let to = node_words(p.mem_node);
            let step = Some("lat-per-cpu");
            let def = |stat: PerCpuStat, name: String, unit: &str| MetricDef {
                step,
                ..MetricDef::new(MetricId::PerCpu { stat, node: p.mem_node }, name, unit, false)
                    .rel(Relation::SameNode, Scope::Cpu)
            };
            self.push(
                def(PerCpuStat::Mean, format!("Per-CPU latency to {to}, mean over CPUs"), "ns"),
                p.mean_ns,
            );
            let (Some(fast), Some(slow)) = (p.groups.first(), p.groups.last()) else { continue };
            self.push(
                def(PerCpuStat::Fast, format!("Per-CPU latency to {to}, fastest group"), "ns"),
                fast.1,
            );
            self.push(
                def(PerCpuStat::Slow, format!("Per-CPU latency to {to}, slowest group"), "ns"),
                slow.1,
            );
            if fast.1 > 0.0 {
                self.push(
                    def(
                        PerCpuStat::Split,
                        format!("Per-CPU latency to {to}, split (slowest / fastest group)"),
                        "x",
                    ),
                    slow.1 / fast.1,
                );
            }
            self.push(
                def(
                    PerCpuStat::Groups,
                    format!("Per-CPU latency to {to}, latency groups of CPUs"),
                    "groups",
                ),
                p.groups.len() as f64,
            );
        }
    }

    /// `numaprobe gpu`: per GPU, what its fastest node feeds it (host to
    /// device, the largest copy) and the shortfall of its slowest node.
    fn gpu(&mut self, d: &RunData) {
        for f in crate::gpu::feeds(&d.gpu) {
            let g = f.gpu;
            let def = |stat: GpuStat, name: String, unit: &str, higher: bool| {
                MetricDef::new(MetricId::Gpu { stat, gpu: g }, name, unit, higher)
                    .rel(Relation::HostDevice, Scope::Device)
            };
            self.push(
                def(
                    GpuStat::H2dBw,
                    format!("Host-to-GPU {g} bandwidth from its fastest node"),
                    "GB/s",
                    true,
                ),
                f.top_gbs,
            );
            if let Some(worst) = f.others.iter().map(|o| o.penalty_pct).max_by(f64::total_cmp) {
                self.push(
                    def(
                        GpuStat::H2dPenalty,
                        format!("Host-to-GPU {g}: slowest node's shortfall against the fastest"),
                        "%",
                        false,
                    ),
                    worst,
                );
            }
        }
    }

    /// The values, each derived figure marked with how it was derived.
    fn finish(mut self) -> Vec<MetricValue> {
        for m in &mut self.out {
            if let MetricId::Fixed(f) = m.def.id {
                if let Some((_, how)) = self.derived.iter().find(|(x, _)| *x == f) {
                    m.derived = Some(*how);
                }
            }
        }
        self.out
    }
}

/// Id prefixes of `numaprobe gpu`'s metrics (`gpu_h2d_gbs_gpu0`).
pub const GPU_H2D_BW: &str = GpuStat::H2dBw.prefix();
pub const GPU_H2D_PENALTY: &str = GpuStat::H2dPenalty.prefix();

/// The local bandwidth figures (the headline's points) over the mean
/// package + DRAM power each was measured at, GB/s per W, the mean over
/// nodes; `None` unless every point has its power (a figure of some
/// nodes only would pass for the machine's).
fn local_bw_per_watt(d: &RunData) -> Option<f64> {
    let (_, pts) = crate::metrics::local_points(d);
    let per_w: Vec<f64> = pts
        .iter()
        .map(|p| {
            let w = p.power.as_ref()?.mean_watts().filter(|w| *w > 0.0)?;
            Some(p.best_gbs / w)
        })
        .collect::<Option<_>>()?;
    mean(&per_w)
}

/// The id of the unnamed program metric under `policy`:
/// `exec_metric[POLICY]`, whatever other policies the run measured (a run
/// of `--policies default` pairs with the default policy of
/// `--policies all`).
pub fn exec_metric_id(name: Option<&str>, policy: &str) -> MetricId {
    MetricId::ExecMetric { name: name.map(str::to_string), policy: Some(policy.to_string()) }
}

/// The name of a named program metric's id (`exec_metric:int[default]`
/// gives `int`); `None` for any other id.
pub fn exec_metric_name(id: &str) -> Option<String> {
    MetricId::parse(id).exec_metric_name().map(str::to_string)
}

/// Every `exec` policy's program metrics (the unnamed one and each named
/// one, `exec --metric NAME=REGEX`) and wall time, with each successful
/// repeat as a sample.
fn exec_values(run: &LoadedRun, d: &RunData) -> Vec<MetricValue> {
    let mut out = Vec::new();
    let mut push = |def: MetricDef, value: Option<f64>, samples: Vec<f64>| {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            out.push(MetricValue { def, value, samples, derived: None });
        }
    };
    let cmdline = run.summary.command_line.as_str();
    for e in &d.exec {
        let policy = &e.policy;
        push(
            MetricDef::new(
                exec_metric_id(None, policy),
                format!("Program metric under {policy}"),
                "program units",
                e.metric_higher_is_better(None, cmdline),
            ),
            e.stats.median_metric,
            e.metric_values(None),
        );
        for (name, m) in &e.metrics {
            let samples = e.metric_values(Some(name));
            push(
                MetricDef::new(
                    exec_metric_id(Some(name), policy),
                    format!("Program metric {name} under {policy}"),
                    "program units",
                    m.higher_is_better,
                ),
                m.median.or_else(|| results::stats::median(&samples)),
                samples,
            );
        }
        let walls: Vec<f64> = e.values(false).into_iter().filter(|v| v.is_finite()).collect();
        push(
            MetricDef::new(
                MetricId::ExecWall { policy: Some(policy.clone()) },
                format!("Program wall time under {policy}"),
                "s",
                false,
            ),
            e.stats.median_wall_s,
            walls,
        );
        if let Some(watts) = run_watts(e) {
            let per_watt = |values: Vec<Option<f64>>| -> Vec<f64> {
                values
                    .iter()
                    .zip(&watts)
                    .filter_map(|(v, (w, _))| Some(v.filter(|v| v.is_finite())? / w))
                    .collect()
            };
            let ok = || e.runs.iter().filter(|r| r.ok);
            let mut metrics: Vec<(Option<&str>, Vec<Option<f64>>)> = Vec::new();
            if e.metric_higher_is_better(None, cmdline) {
                metrics.push((None, ok().map(|r| r.metric).collect()));
            }
            for (n, _) in e.metrics.iter().filter(|(_, m)| m.higher_is_better) {
                let n = n.as_str();
                metrics.push((
                    Some(n),
                    ok().map(|r| r.metrics.get(n).and_then(|m| m.value)).collect(),
                ));
            }
            for (name, values) in metrics {
                let samples = per_watt(values);
                let shown = name.map(|n| format!(" {n}")).unwrap_or_default();
                push(
                    MetricDef::new(
                        MetricId::ExecPerWatt {
                            name: name.map(str::to_string),
                            policy: Some(policy.clone()),
                        },
                        format!(
                            "Program metric{shown} per watt (package + DRAM, RAPL) under {policy}"
                        ),
                        "program units per W",
                        true,
                    ),
                    results::stats::median(&samples),
                    samples,
                );
            }
            let joules: Vec<f64> = watts.iter().map(|(_, j)| *j).collect();
            push(
                MetricDef::new(
                    MetricId::ExecEnergy { policy: Some(policy.clone()) },
                    format!("Program energy per run (package + DRAM, RAPL) under {policy}"),
                    "J",
                    false,
                ),
                results::stats::median(&joules),
                joules,
            );
        }
    }
    // A run of one policy also gives its figures without the policy, so
    // that runs of one policy each (a runner over placements, one `exec`
    // per policy and label) compare across policies.
    if let [only] = d.exec.as_slice() {
        let under = format!(" under {}", only.policy);
        let alias: Vec<MetricValue> = out
            .iter()
            .map(|m| MetricValue {
                def: MetricDef {
                    id: m.def.id.without_policy(),
                    name: format!(
                        "{} under the run's one policy",
                        m.def.name.trim_end_matches(under.as_str())
                    ),
                    ..m.def.clone()
                },
                ..m.clone()
            })
            .collect();
        out.extend(alias);
    }
    out
}

/// Each successful run's mean package + DRAM power (W) and energy (J), in
/// run order; `None` unless every successful run has them (a figure from
/// some runs only would pass for the policy's) or there is no such run.
fn run_watts(e: &results::exec::PolicyResult) -> Option<Vec<(f64, f64)>> {
    let v: Vec<(f64, f64)> = e
        .runs
        .iter()
        .filter(|r| r.ok)
        .map(|r| {
            let p = r.power.as_ref()?;
            let w = p.mean_watts().filter(|w| w.is_finite() && *w > 0.0)?;
            Some((w, w * p.seconds))
        })
        .collect::<Option<_>>()?;
    (!v.is_empty()).then_some(v)
}

/// True for the id of an `exec` figure without its policy (`exec_metric`,
/// `exec_metric:NAME`, `exec_wall_s`: what a run of one policy also
/// gives).
pub fn exec_policy_free(id: &MetricId) -> bool {
    id.is_exec() && id.policy().is_none()
}

/// The memory metrics in table order: bandwidth then latency, each from
/// the nearest memory to the farthest, then the whole machine's.
const ORDER: [MetricId; 18] = [
    MetricId::Headline(MetricKey::LocalBw),
    MetricId::Fixed(Fixed::LocalBwPkg),
    MetricId::Fixed(Fixed::PkgInterleaveBw),
    MetricId::Headline(MetricKey::GlobalBw),
    MetricId::Headline(MetricKey::InterleaveBw),
    MetricId::Fixed(Fixed::NeighbourBw),
    MetricId::Fixed(Fixed::CrossPkgBw),
    MetricId::Fixed(Fixed::TierBw),
    MetricId::Headline(MetricKey::CrossBw),
    MetricId::Headline(MetricKey::LocalLat),
    MetricId::Fixed(Fixed::PkgLat),
    MetricId::Fixed(Fixed::NeighbourLat),
    MetricId::Headline(MetricKey::RemoteLat),
    MetricId::Fixed(Fixed::CrossPkgLat),
    MetricId::Fixed(Fixed::TierLat),
    MetricId::Fixed(Fixed::OtherNodeLat),
    MetricId::Fixed(Fixed::SpreadLat),
    MetricId::Headline(MetricKey::LoadedLatPeak),
];

/// Where a metric sorts in tables: the catalogue's order by kind.
pub fn rank(id: &MetricId) -> usize {
    if let Some(i) = ORDER.iter().position(|k| k == id) {
        return i;
    }
    match id {
        MetricId::Fixed(Fixed::RemotePenalty) => 20,
        MetricId::Fixed(Fixed::ThreadLat) => 21,
        MetricId::PerCpu { .. } => 30,
        MetricId::ExecMetric { .. } => 40,
        MetricId::ExecWall { .. } => 41,
        MetricId::ExecPerWatt { .. } => 42,
        MetricId::ExecEnergy { .. } => 43,
        // An id of another version sorts by its kind's prefix.
        MetricId::Other(s) if s.starts_with("per_cpu_") => 30,
        MetricId::Other(s) if s.starts_with(EXEC_PER_WATT) => 42,
        MetricId::Other(s) if s.starts_with(EXEC_METRIC) => 40,
        MetricId::Other(s) if s.starts_with(EXEC_WALL) => 41,
        _ => 50,
    }
}

/// The catalogue entry of a text id ([`def_of_id`]).
pub fn def_of(id: &str) -> MetricDef {
    def_of_id(&MetricId::parse(id))
}

/// The catalogue entry of an id without the run: an `exec` program
/// metric's direction is the run's, so its entry says higher (the
/// default); ids the catalogue does not draw, and `exec` figures without
/// their policy, get a plain entry named by the id.
pub fn def_of_id(id: &MetricId) -> MetricDef {
    let plain = || {
        let s = id.to_string();
        MetricDef::new(id.clone(), s, "", true)
    };
    match id {
        MetricId::Headline(k) => headline_def(*k),
        MetricId::Fixed(Fixed::RemotePenalty) => remote_penalty_def(),
        MetricId::Fixed(Fixed::ThreadLat) => thread_lat_def(),
        MetricId::Fixed(f) => relation_def(*f).unwrap_or_else(plain),
        MetricId::ExecWall { policy: Some(policy) } => {
            MetricDef::new(id.clone(), format!("Program wall time under {policy}"), "s", false)
        }
        MetricId::ExecPerWatt { name, policy: Some(policy) } => {
            let name = name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
            MetricDef::new(
                id.clone(),
                format!("Program metric{name} per watt (package + DRAM, RAPL) under {policy}"),
                "program units per W",
                true,
            )
        }
        MetricId::ExecEnergy { policy: Some(policy) } => MetricDef::new(
            id.clone(),
            format!("Program energy per run (package + DRAM, RAPL) under {policy}"),
            "J",
            false,
        ),
        MetricId::ExecMetric { name, policy: Some(policy) } => {
            let name = name.as_ref().map(|n| format!(" {n}")).unwrap_or_default();
            MetricDef::new(
                id.clone(),
                format!("Program metric{name} under {policy}"),
                "program units",
                true,
            )
        }
        _ => plain(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::rec;
    use serde_json::json;

    fn run_of(records: Vec<results::Record>, nodes: u64) -> LoadedRun {
        crate::data::tests::run_of(records, Some(nodes))
    }

    fn per_cpu(cpu: u32, ns: f64) -> results::Record {
        rec(
            "lat",
            json!({"mode": "per-cpu", "cpu": cpu, "cpu_node": 0, "mem_node": 0, "median_ns": ns, "noise_pct": 0.5}),
        )
    }

    fn value(c: &[MetricValue], id: &str) -> Option<f64> {
        c.iter().find(|m| m.def.id == id).map(|m| m.value)
    }

    #[test]
    fn local_bandwidth_per_watt_needs_every_node_s_power() {
        let local = |node: u32, gbs: f64, pkg_j: Option<f64>| {
            let mut v = json!({"mode": "local", "kernel": "triad", "cpu_node": node,
                "mem_node": node, "best_gbs": gbs});
            if let Some(j) = pkg_j {
                v["power"] = json!({"seconds": 2.0, "zones": [
                    {"zone": "intel-rapl:0", "name": "package-0", "joules": j, "watts": j / 2.0},
                    {"zone": "intel-rapl:0:0", "name": "dram", "joules": 20.0, "watts": 10.0}]});
            }
            rec("bw", v)
        };
        // 100 GB/s at (180 + 20) J / 2 s = 100 W; 90 GB/s at 50 W
        let c =
            catalogue(&run_of(vec![local(0, 100.0, Some(180.0)), local(1, 90.0, Some(80.0))], 2));
        assert_eq!(value(&c, LOCAL_BW_PER_W), Some((1.0 + 1.8) / 2.0));
        let def = def_of(LOCAL_BW_PER_W);
        assert!(def.higher_is_better);
        assert_eq!(def.unit, "GB/s per W");
        // one node without power: no machine figure
        let c = catalogue(&run_of(vec![local(0, 100.0, Some(180.0)), local(1, 90.0, None)], 2));
        assert_eq!(value(&c, LOCAL_BW_PER_W), None);
    }

    #[test]
    fn per_cpu_results_without_a_summary_are_regrouped() {
        let mut r: Vec<results::Record> =
            (0..8).map(|c| per_cpu(c, 67.0 + c as f64 * 0.1)).collect();
        r.extend((8..16).map(|c| per_cpu(c, 100.0 + c as f64 * 0.1)));
        let c = catalogue(&run_of(r, 1));
        assert_eq!(value(&c, "per_cpu_groups_to_node0"), Some(2.0));
        let split = value(&c, "per_cpu_split_to_node0").unwrap();
        assert!((split - 100.8 / 67.4).abs() < 0.01, "{split}");
        let mean = value(&c, "per_cpu_mean_ns_to_node0").unwrap();
        assert!((mean - 84.25).abs() < 0.01, "{mean}");
        // One OS node: the thread latency is the mean over CPUs.
        assert_eq!(value(&c, THREAD_LAT), Some(mean));
        // Uniform latencies are one group.
        let u: Vec<results::Record> = (0..8).map(|c| per_cpu(c, 87.0 + c as f64 * 0.05)).collect();
        assert_eq!(value(&catalogue(&run_of(u, 1)), "per_cpu_groups_to_node0"), Some(1.0));
    }

    fn lat_cell(c: u32, m: u32, ns: f64) -> results::Record {
        rec("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns}))
    }

    fn bw_cell(c: u32, m: u32, gbs: f64) -> results::Record {
        rec(
            "bw",
            json!({"mode": "matrix", "kernel": "triad", "cpu_node": c, "mem_node": m, "best_gbs": gbs}),
        )
    }

    fn with_packages(mut run: LoadedRun, packages: u32) -> LoadedRun {
        run.machine_info = serde_json::from_value(json!({ "packages": packages })).unwrap();
        run
    }

    #[test]
    fn remote_figures_are_never_drawn_under_one_os_node() {
        let recs = || {
            vec![
                lat_cell(0, 0, 80.0),
                lat_cell(0, 1, 140.0),
                lat_cell(1, 0, 150.0),
                lat_cell(1, 1, 90.0),
            ]
        };
        // Two packages of one node each (no topology stored): every other
        // node is the other package.
        let c = catalogue(&with_packages(run_of(recs(), 2), 2));
        assert_eq!(value(&c, "remote_lat_ns"), Some(145.0));
        assert_eq!(value(&c, REMOTE_PENALTY), Some(145.0 / 85.0));
        assert_eq!(value(&c, THREAD_LAT), Some(85.0));
        assert_eq!(value(&c, SPREAD_LAT), Some(115.0));
        assert_eq!(value(&c, OTHER_NODE_LAT), None);
        // Nothing says which package the other node is on: not called
        // remote (it may be the SNC neighbour), no penalty.
        let unknown = catalogue(&run_of(recs(), 2));
        assert_eq!(value(&unknown, "remote_lat_ns"), None);
        assert_eq!(value(&unknown, REMOTE_PENALTY), None);
        assert_eq!(value(&unknown, OTHER_NODE_LAT), Some(145.0));
        let one = catalogue(&run_of(recs(), 1));
        assert_eq!(value(&one, "remote_lat_ns"), None);
        assert_eq!(value(&one, OTHER_NODE_LAT), None);
        assert_eq!(value(&one, REMOTE_PENALTY), None);
    }

    /// Two packages of two nodes (SNC2-like) and a CXL node: each cell is
    /// named by its relation, never by SLIT value, so the same hardware
    /// under other distances gives the same metrics; per-package figures
    /// sum the package's nodes.
    #[test]
    fn cells_are_named_by_hardware_relation_not_by_distance() {
        use topo::synthetic::Machine;
        let machine = |near: u32, far: u32| {
            Machine::new(topo::Vendor::Intel, "Xeon")
                .package(0, "0-3")
                .package(1, "4-7")
                .node(0, "0-1", 8 << 30)
                .node(1, "2-3", 8 << 30)
                .node(2, "4-5", 8 << 30)
                .node(3, "6-7", 8 << 30)
                .node(4, "", 16 << 30)
                .distances(&[
                    &[10, near, far, far, 40],
                    &[near, 10, far, far, 40],
                    &[far, far, 10, near, 40],
                    &[far, far, near, 10, 40],
                    &[40, 40, 40, 40, 10],
                ])
                .build()
        };
        let pkg = |n: u32| n / 2;
        let mut recs = Vec::new();
        for c in 0..4u32 {
            for m in 0..5u32 {
                let (ns, gbs) = match m {
                    4 => (250.0, 20.0),
                    _ if m == c => (80.0, 100.0),
                    _ if pkg(m) == pkg(c) => (95.0, 70.0),
                    _ => (140.0, 30.0),
                };
                recs.push(lat_cell(c, m, ns));
                recs.push(bw_cell(c, m, gbs));
            }
        }
        for (near, far) in [(11, 20), (12, 32)] {
            let mut run = run_of(recs.clone(), 5);
            run.topology = results::context::RunTopology::of(&machine(near, far));
            let c = catalogue(&run);
            let what = format!("SLIT {near}/{far}");
            assert_eq!(value(&c, "local_lat_ns"), Some(80.0), "{what}");
            assert_eq!(value(&c, NEIGHBOUR_LAT), Some(95.0), "{what}");
            assert_eq!(value(&c, "remote_lat_ns"), Some(140.0), "{what}");
            assert_eq!(value(&c, TIER_LAT), Some(250.0), "{what}");
            assert_eq!(value(&c, REMOTE_PENALTY), Some(140.0 / 80.0), "{what}");
            // Spread over the DRAM nodes: 1 local, 1 neighbour, 2 remote.
            assert_eq!(value(&c, SPREAD_LAT), Some((80.0 + 95.0 + 2.0 * 140.0) / 4.0), "{what}");
            assert_eq!(value(&c, NEIGHBOUR_BW), Some(70.0), "{what}");
            assert_eq!(value(&c, TIER_BW), Some(20.0), "{what}");
            // A package's two nodes each read the other package's nodes at
            // 30 GB/s: 60 GB/s per package.
            assert_eq!(value(&c, CROSS_PKG_BW), Some(60.0), "{what}");
            // Per package, bound per domain, from the nodes' local cells.
            assert_eq!(value(&c, LOCAL_BW_PKG), Some(200.0), "{what}");
            assert_eq!(value(&c, "cross_node_bw_gbs"), None, "{what}");
            assert_eq!(value(&c, OTHER_NODE_LAT), None, "{what}");
            let def = |id: &str| c.iter().find(|m| m.def.id == id).unwrap().def.clone();
            assert!(def("local_bw_gbs").sized_by_node());
            assert!(!def(LOCAL_BW_PKG).sized_by_node());
            assert_eq!(def("remote_lat_ns").relation, Relation::OtherPackage);
        }
    }

    /// Package ids need not count from 0 without gaps: the cross-package
    /// figure pairs the packages that exist.
    #[test]
    fn sparse_package_ids_still_pair() {
        use topo::synthetic::Machine;
        let t = Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0-1")
            .package(2, "2-3")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .distances(&[&[10, 20], &[20, 10]])
            .build();
        let recs = vec![
            bw_cell(0, 0, 100.0),
            bw_cell(0, 1, 40.0),
            bw_cell(1, 0, 40.0),
            bw_cell(1, 1, 100.0),
        ];
        let mut run = run_of(recs, 2);
        run.topology = results::context::RunTopology::of(&t);
        let c = catalogue(&run);
        assert_eq!(value(&c, CROSS_PKG_BW), Some(40.0));
        assert_eq!(value(&c, LOCAL_BW_PKG), Some(100.0));
    }

    /// The seed-003 way: per-CPU latency to one node only. The CPUs on the
    /// memory node give the local latency, the other package's the remote
    /// one, each CPU node's mean a cell.
    #[test]
    fn per_cpu_results_alone_give_latency_by_relation() {
        let pc = |cpu: u32, node: u32, ns: f64| {
            rec(
                "lat",
                json!({"mode": "per-cpu", "cpu": cpu, "cpu_node": node, "mem_node": 0, "median_ns": ns, "noise_pct": 0.5}),
            )
        };
        let mut r: Vec<results::Record> = (0..4).map(|c| pc(c, 0, 67.0 + c as f64)).collect();
        r.extend((4..8).map(|c| pc(c, 1, 100.0)));
        let c = catalogue(&with_packages(run_of(r.clone(), 2), 2));
        assert_eq!(value(&c, "local_lat_ns"), Some(68.5));
        assert_eq!(value(&c, THREAD_LAT), Some(68.5));
        assert_eq!(value(&c, "remote_lat_ns"), Some(100.0));
        // Spread over both nodes needs each CPU node's cell to node 1
        // too: not computed from half the cells, and said so.
        assert_eq!(value(&c, SPREAD_LAT), None);
        let (_, missing) = catalogue_and_missing(&with_packages(run_of(r.clone(), 2), 2));
        assert_eq!(missing.len(), 1, "{missing:?}");
        assert_eq!(missing[0].metric, Fixed::SpreadLat);
        assert_eq!(missing[0].what, crate::scope::Lacking::LatCells(vec![(0, 1), (1, 1)]));
        // A matrix, when there is one, is the source instead.
        r.push(lat_cell(0, 0, 70.0));
        let c = catalogue(&with_packages(run_of(r, 2), 2));
        assert_eq!(value(&c, "local_lat_ns"), Some(70.0));
    }

    /// An `exec` policy whose successful runs had these metric values
    /// (`int` named too, at twice the value) and package + DRAM energy
    /// over 2 s (`None`: no power recorded); one failed run without power.
    fn exec_with_power(
        policy: &str,
        hib: bool,
        runs: &[(f64, Option<(f64, f64)>)],
    ) -> results::Record {
        let mut rs: Vec<serde_json::Value> = runs
            .iter()
            .enumerate()
            .map(|(i, (m, joules))| {
                let mut r = json!({"rep": i + 1, "wall_s": 2.0, "user_s": 1.0, "sys_s": 0.0,
                    "max_rss_kib": 1, "exit_code": 0, "signal": null, "timed_out": false,
                    "interrupted": false, "ok": true, "metric": m, "metric_error": null,
                    "numa_pages": null, "numastat_delta": [], "stderr_tail": null,
                    "metrics": {"int": {"value": m * 2.0}}});
                if let Some((pkg, dram)) = joules {
                    r["power"] = json!({"seconds": 2.0, "zones": [
                        {"zone": "intel-rapl:0", "name": "package-0", "joules": pkg, "watts": pkg / 2.0},
                        {"zone": "intel-rapl:0:0", "name": "dram", "joules": dram, "watts": dram / 2.0}]});
                }
                r
            })
            .collect();
        let mut failed = rs[0].clone();
        failed["ok"] = json!(false);
        failed.as_object_mut().unwrap().remove("power");
        rs.push(failed);
        rec(
            "exec",
            json!({"policy": policy, "placement": "", "runs": rs, "ok_runs": runs.len(),
                   "median_metric": 1.0, "median_wall_s": 2.0, "verdict": "baseline",
                   "metric_higher_is_better": hib,
                   "metrics": {"int": {"higher_is_better": true, "median": 1.0, "summary": null,
                                       "verdict": "baseline"}}}),
        )
    }

    #[test]
    fn exec_score_per_watt_needs_every_successful_run_s_power() {
        // 100 J package + 20 J DRAM over 2 s: 60 W; 140 + 20 over 2 s: 80 W
        let runs = [(120.0, Some((100.0, 20.0))), (240.0, Some((140.0, 20.0)))];
        let c = catalogue(&run_of(
            vec![
                exec_with_power("local:0", true, &runs),
                exec_with_power("remote:0/1", true, &runs[..1]),
            ],
            2,
        ));
        let get = |id: &str| c.iter().find(|m| m.def.id == id).unwrap_or_else(|| panic!("{id}"));
        let pw = get("exec_metric_per_watt[local:0]");
        assert_eq!(pw.samples, [2.0, 3.0]);
        assert_eq!((pw.value, pw.def.higher_is_better), (2.5, true));
        assert_eq!(pw.def.unit, "program units per W");
        assert_eq!(get("exec_metric_per_watt:int[local:0]").samples, [4.0, 6.0]);
        assert_eq!(get("exec_metric_per_watt[remote:0/1]").value, 2.0);
        let j = get("exec_energy_j[local:0]");
        assert_eq!(
            (j.value, j.samples.as_slice(), j.def.higher_is_better),
            (140.0, &[120.0, 160.0][..], false)
        );
        assert_eq!(def_of("exec_energy_j[x]").unit, "J");
        assert!(def_of("exec_metric_per_watt[x]").higher_is_better);
        // One successful run without power: no figure (never 0) for that
        // policy, the other policy's stay.
        let c = catalogue(&run_of(
            vec![
                exec_with_power("local:0", true, &[(120.0, Some((100.0, 20.0))), (240.0, None)]),
                exec_with_power("remote:0/1", true, &runs),
            ],
            2,
        ));
        let ids: Vec<String> = c.iter().map(|m| m.def.id.to_string()).collect();
        assert!(
            !ids.iter().any(|i| i.ends_with("[local:0]")
                && (i.starts_with(EXEC_PER_WATT) || i.starts_with(EXEC_ENERGY))),
            "{ids:?}"
        );
        assert_eq!(value(&c, "exec_energy_j[remote:0/1]"), Some(140.0));
        assert_eq!(value(&c, "exec_metric[local:0]"), Some(1.0));
        // A lower-is-better metric has no per-watt figure (dividing would
        // reward drawing more power), only the energy per run; a named
        // higher-is-better metric keeps its own.
        let c = catalogue(&run_of(vec![exec_with_power("default", false, &runs)], 1));
        assert_eq!(value(&c, "exec_metric_per_watt[default]"), None);
        assert_eq!(value(&c, "exec_metric_per_watt:int[default]"), Some(5.0));
        assert_eq!(value(&c, "exec_energy_j[default]"), Some(140.0));
        // a run of one policy: the same figures without the policy
        assert_eq!(value(&c, "exec_energy_j"), Some(140.0));
        assert_eq!(value(&c, "exec_metric_per_watt:int"), Some(5.0));
    }

    #[test]
    fn every_exec_policy_gives_its_program_metric_and_wall_time() {
        let e = |p: &str, m: f64, hib: Option<bool>| {
            let mut v = json!({"policy": p, "placement": "", "runs": [], "ok_runs": 3,
                               "median_metric": m, "median_wall_s": 2.0, "verdict": "baseline"});
            if let Some(h) = hib {
                v["metric_higher_is_better"] = json!(h);
            }
            rec("exec", v)
        };
        let one = catalogue(&run_of(vec![e("default", 5.0, Some(false))], 1));
        // One policy or several: the same id, so `--policies default` and
        // `--policies all` pair on the default policy.
        let m = one.iter().find(|m| m.def.id == "exec_metric[default]").unwrap();
        assert_eq!((m.value, m.def.higher_is_better), (5.0, false));
        assert_eq!(m.def.name, "Program metric under default");
        assert_eq!(value(&one, "exec_wall_s[default]"), Some(2.0));
        // ... and, a run of one policy, the same figures without it, so
        // that runs of one policy each compare across policies
        let alias = one.iter().find(|m| m.def.id == EXEC_METRIC).unwrap();
        assert_eq!((alias.value, alias.def.higher_is_better), (5.0, false));
        assert_eq!(alias.def.name, "Program metric under the run's one policy");
        assert_eq!(value(&one, EXEC_WALL), Some(2.0));
        let two = catalogue(&run_of(vec![e("local:0", 9.0, None), e("remote:0/1", 6.0, None)], 2));
        assert_eq!(value(&two, "exec_metric[local:0]"), Some(9.0));
        assert_eq!(value(&two, "exec_metric[remote:0/1]"), Some(6.0));
        // Runs stored before the direction was recorded: higher is better.
        assert!(
            two.iter().find(|m| m.def.id == "exec_metric[local:0]").unwrap().def.higher_is_better
        );
        assert_eq!(value(&two, EXEC_METRIC), None);
    }

    #[test]
    fn named_exec_metrics_carry_their_direction_and_every_repeat_as_a_sample() {
        let run = |rep: u32, int: f64, fp: Option<f64>, ok: bool| {
            json!({"rep": rep, "wall_s": rep as f64, "user_s": 0.0, "sys_s": 0.0,
                   "max_rss_kib": 0, "exit_code": 0, "signal": null, "timed_out": false,
                   "interrupted": false, "ok": ok, "metric": null, "metric_error": null,
                   "numa_pages": null, "numastat_delta": [], "stderr_tail": null,
                   "metrics": {"int": {"value": int, "error": null},
                               "fp": {"value": fp, "error": if fp.is_none() { json!("no match") } else { json!(null) }}}})
        };
        let stat = |hib: bool, median: f64| {
            json!({"higher_is_better": hib, "median": median, "summary": null,
                   "noise_pct": null, "change_pct": null, "verdict": "no-data"})
        };
        let e = rec(
            "exec",
            json!({"policy": "default", "placement": "", "ok_runs": 3,
                   "runs": [run(1, 40.0, Some(9.0), true), run(2, 41.0, None, true),
                            run(3, 39.0, Some(9.2), true), run(4, 99.0, Some(1.0), false)],
                   "median_metric": null, "median_wall_s": 1.2, "verdict": "baseline",
                   "metrics": {"int": stat(true, 40.0), "fp": stat(false, 9.1)}}),
        );
        let c = catalogue(&run_of(vec![e], 1));
        let get = |id: &str| c.iter().find(|m| m.def.id == id).unwrap_or_else(|| panic!("{id}"));
        let int = get("exec_metric:int[default]");
        assert_eq!((int.value, int.def.higher_is_better), (40.0, true));
        assert_eq!(int.def.name, "Program metric int under default");
        assert_eq!(int.samples, [40.0, 41.0, 39.0], "successful runs only");
        let fp = get("exec_metric:fp[default]");
        assert_eq!((fp.value, fp.def.higher_is_better), (9.1, false));
        assert_eq!(fp.samples, [9.0, 9.2], "a run without the metric is no sample");
        assert_eq!(get("exec_wall_s[default]").samples, [1.0, 2.0, 3.0]);
        // no unnamed metric: no `exec_metric[default]`
        assert!(c.iter().all(|m| m.def.id != "exec_metric[default]"));
        assert_eq!(exec_metric_name("exec_metric:int[default]").as_deref(), Some("int"));
        assert_eq!(exec_metric_name("exec_metric[default]"), None);
        assert_eq!(def_of("exec_metric:fp[local:0]").name, "Program metric fp under local:0");
        assert!(!def_of("exec_wall_s[default]").higher_is_better);
    }
}
