//! What to measure: the user's plan ([`BwPlan`]), checked against the
//! topology and turned into concrete cases (CPUs, placement, array size)
//! before anything is allocated ([`prepare`]).

use std::collections::BTreeMap;
use std::time::Duration;

use kernels::{Isa, Kernel};
use place::Allowed;
use results::bw::{ArrayPolicy, Mode};
use results::pages::PageKind;
use topo::units::{binary_size, binary_size_floor};
use topo::{CpuSet, NodeSet, Topology};

use super::BwError;

/// Arrays are sized from this when the topology reports no cache.
const FALLBACK_LLC_BYTES: u64 = 64 << 20;
/// STREAM's rule: each array at least this many times the LLC.
pub const LLC_FACTOR: u64 = 4;
/// The smallest base page (x86-64's, and arm64's 4 KiB granule); the
/// machine's own comes from `place::base_page_size`.
const PAGE: u64 = 4096;
const MIB2: u64 = 2 << 20;

/// One kind of measurement the user asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum BwMode {
    /// One CPU node (or explicit CPUs) against one memory node. Missing
    /// nodes default to the first CPU node and its own memory (or the
    /// nearest memory node).
    Local { cpu_node: Option<u32>, mem_node: Option<u32>, cpus: Option<CpuSet> },
    /// Every CPU node against every memory node (memory-only ones too).
    Matrix,
    /// Every CPU node's threads on their own node's memory.
    Global,
    /// Every CPU node's threads, memory interleaved over all memory nodes.
    Interleave,
    /// As `Interleave` with the kernel's weighted interleave; when
    /// `required` is false it is skipped (with a warning) on kernels
    /// without `MPOL_WEIGHTED_INTERLEAVE`.
    Weighted { required: bool },
    /// 1..N threads of one CPU node against one memory node.
    Scaling { cpu_node: Option<u32>, mem_node: Option<u32> },
    /// Every usable CPU of one package at once (`--threads` per node), on
    /// its own DRAM or another package's ([`crate::scope`]).
    Package { package: u32, memory: PackageTarget },
}

/// Whose memory a package-scope case uses, and how it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageTarget {
    /// Its own DRAM nodes, each thread's pages on its own node, every node
    /// at once (under NUMA off: the memory the OS gives).
    BindPerNode,
    /// Its own DRAM nodes, pages interleaved over them.
    Interleave,
    /// Package N's DRAM nodes, pages interleaved over them.
    Other(u32),
}

/// How the kernels store (`bw --stores` takes the names [`StoreMode::parse`]
/// takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StoreMode {
    /// Non-temporal stores when the instruction set has them (what the
    /// STREAM figures of vendors use), else regular.
    #[default]
    Auto,
    /// Non-temporal (streaming) stores.
    Nt,
    /// Regular stores (through the caches).
    Regular,
}

impl StoreMode {
    pub fn parse(s: &str) -> Option<StoreMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(StoreMode::Auto),
            "nt" | "non-temporal" | "streaming" => Some(StoreMode::Nt),
            "regular" | "normal" | "temporal" => Some(StoreMode::Regular),
            _ => None,
        }
    }
}

/// When to stop repeating a kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepPolicy {
    /// At least this many timed repetitions (time permitting: at least 2
    /// are always taken, and 1 when interrupted).
    pub min_reps: usize,
    pub max_reps: usize,
    /// Stable when the best `top_k` repetitions are within
    /// `target_spread_pct` of the best.
    pub top_k: usize,
    pub target_spread_pct: f64,
    /// Time allowed per result (one kernel on one case).
    pub budget: Duration,
}

impl Default for RepPolicy {
    fn default() -> Self {
        RepPolicy {
            min_reps: 5,
            max_reps: 500,
            top_k: 3,
            target_spread_pct: 1.0,
            budget: Duration::from_secs(2),
        }
    }
}

/// Everything a bandwidth run needs to know.
#[derive(Debug, Clone, PartialEq)]
pub struct BwPlan {
    pub modes: Vec<BwMode>,
    pub kernels: Vec<Kernel>,
    /// Threads per CPU node (all allowed CPUs of the node when `None`);
    /// for scaling, the largest count.
    pub threads: Option<usize>,
    /// Forced instruction set (`None`: the best available).
    pub isa: Option<Isa>,
    pub stores: StoreMode,
    /// Bytes per array (`None`: from the LLC, STREAM's rule).
    pub array_bytes: Option<u64>,
    pub pages: PageKind,
    pub reps: RepPolicy,
    /// Theoretical peak of one memory node, GB/s (from SMBIOS or the user);
    /// cases over k nodes compare against k times it.
    pub peak_gbs: Option<f64>,
    /// Theoretical bandwidth of the link between two nodes (UPI, xGMI,
    /// QPI), GB/s, when the user declared it (`--set link.gbs=...`): a
    /// remote case (CPUs on one node, memory on another) is held against
    /// the smaller of it and the memory node's peak.
    pub link_gbs: Option<f64>,
}

impl Default for BwPlan {
    fn default() -> Self {
        BwPlan {
            modes: vec![BwMode::Local { cpu_node: None, mem_node: None, cpus: None }],
            kernels: Kernel::STREAM.to_vec(),
            threads: None,
            isa: None,
            stores: StoreMode::Auto,
            array_bytes: None,
            pages: PageKind::Thp,
            reps: RepPolicy::default(),
            peak_gbs: None,
            link_gbs: None,
        }
    }
}

/// Where a case's pages go.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseMemory {
    /// All arrays bound to one node.
    Bind(u32),
    /// Each thread's chunk bound to the thread's own node (`None` for a
    /// thread on a node without memory: local allocation, unchecked).
    LocalPerThread,
    /// Interleaved page by page over the set.
    Interleave(NodeSet),
    /// Weighted interleave over the set, with the kernel's weights.
    Weighted(NodeSet, BTreeMap<u32, f64>),
}

impl CaseMemory {
    pub fn policy(&self) -> ArrayPolicy {
        match self {
            CaseMemory::Bind(_) => ArrayPolicy::Bind,
            CaseMemory::LocalPerThread => ArrayPolicy::LocalPerThread,
            CaseMemory::Interleave(_) => ArrayPolicy::Interleave,
            CaseMemory::Weighted(..) => ArrayPolicy::WeightedInterleave,
        }
    }

    pub fn policy_name(&self) -> &'static str {
        self.policy().name()
    }
}

/// How big the arrays are and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Bytes per array (a whole number of chunks).
    pub array_bytes: u64,
    /// Elements of each array per thread (a whole number of pages).
    pub chunk_elems: usize,
    pub llc_bytes: Option<u64>,
    /// Each array at least [`LLC_FACTOR`] x the LLC.
    pub rule_ok: bool,
}

/// A set of CPUs against a placement: measured once per kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub mode: Mode,
    pub cpus: Vec<u32>,
    /// The node of each CPU (same order).
    pub cpu_nodes_of: Vec<Option<u32>>,
    /// The one node the CPUs share, if they do.
    pub cpu_node: Option<u32>,
    pub memory: CaseMemory,
    /// Nodes expected to hold the pages.
    pub mem_nodes: NodeSet,
    pub sizing: Sizing,
    /// Arrays allocated (`[a, b, c, d]`): the union of the kernels' needs.
    pub arrays: [bool; 4],
    /// A package-scope case's scope (mode `package`), carried into its
    /// results.
    pub scope: Option<results::scope::Scope>,
}

/// A checked plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub cases: Vec<Case>,
    pub warnings: Vec<PlanWarning>,
}

/// What a plan warns about before measuring, with the sizes in bytes. Its
/// own words name no flag: [`run_plan`](super::run_plan) reports
/// `SmallArrays` as its typed event, which the front end words with the
/// option that asked for the size.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanWarning {
    /// The arrays asked for (`bytes` each) are below STREAM's rule
    /// (`want`: 4x the last-level cache the threads share).
    #[error(
        "{} per array is below {}x the last-level cache the threads share ({}): figures may \
         include cache bandwidth",
        binary_size(*.bytes), LLC_FACTOR, binary_size(*.want)
    )]
    SmallArrays { bytes: u64, want: u64 },
    /// STREAM's size (`want`) did not fit what the nodes can spare
    /// (`spare`): arrays of `bytes` each instead.
    #[error(
        "arrays capped at {} each by the memory the node(s) can spare ({}): below {}x the \
         last-level cache ({})",
        binary_size(*.bytes), binary_size(*.spare), LLC_FACTOR, binary_size(*.want)
    )]
    Capped { bytes: u64, spare: u64, want: u64 },
    /// The last-level cache's size is unknown: arrays sized as if it were
    /// `assumed` bytes.
    #[error("the last-level cache size is unknown: arrays sized as if it were {} MiB", *.assumed >> 20)]
    UnknownLlc { assumed: u64 },
    /// Weighted interleave was asked for where the kernel lacks it.
    #[error(
        "weighted interleave needs Linux 6.9+ (MPOL_WEIGHTED_INTERLEAVE): this kernel does not \
         have it; skipped"
    )]
    NoWeightedInterleave,
    /// Global mode: threads on nodes without usable memory allocate
    /// locally, unchecked.
    #[error(
        "global: threads on nodes without usable memory allocate locally (nearest node); their \
         pages are not checked"
    )]
    GlobalUnchecked,
}

/// A plan refused before anything is allocated, with the values at fault
/// (sizes in bytes). Its own words name no flag: the front end words it
/// against the flag that gave the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    #[error("0 threads: at least one thread is needed")]
    NoThreads,
    #[error("arrays of 0 bytes: arrays need at least one page")]
    EmptyArrays,
    #[error("the {isa} kernels have no non-temporal stores")]
    NoNtStores { isa: Isa },
    #[error("the CPU list is empty")]
    NoCpus,
    #[error("{threads} threads are more than the {given} CPU(s) given")]
    ThreadsOverCpus { threads: usize, given: usize },
    #[error("CPUs {cpus} are not all on node {node}")]
    CpusOffNode { cpus: CpuSet, node: u32 },
    /// `usable`: the node's CPUs this process may use.
    #[error("{threads} threads: node {node} has only {} usable CPU(s) ({usable})", .usable.len())]
    ThreadsOverNode { threads: usize, node: u32, usable: CpuSet },
    #[error("{threads} threads: node {node} of package {package} has only {usable} usable CPU(s)")]
    ThreadsOverPackageNode { threads: usize, node: u32, package: u32, usable: usize },
    /// `asked` per array, `needs` for all `arrays` (rounded up to whole
    /// chunks), `spare` what the memory node(s) can spare and `most` the
    /// largest array that fits.
    #[error(
        "{} per array x {arrays} arrays needs {}, more than the memory node(s) can spare ({}); \
         {} per array at most",
        binary_size(*.asked), binary_size(*.needs), binary_size(*.spare), binary_size_floor(*.most)
    )]
    ArraysOverSpare { asked: u64, arrays: u64, needs: u64, spare: u64, most: u64 },
}

fn usage(msg: impl Into<String>) -> BwError {
    BwError::Usage(msg.into())
}

/// Picks the array size for a team: each array `LLC_FACTOR` x the LLC the
/// team shares (or `requested`), split into equal per-thread chunks of whole
/// `granule`s, within `cap_bytes` for all `narrays` arrays together.
/// Returns the sizing and a warning when STREAM's rule is broken.
pub fn choose_array_bytes(
    llc_bytes: Option<u64>,
    requested: Option<u64>,
    cap_bytes: u64,
    narrays: usize,
    threads: usize,
    granule: u64,
) -> Result<(Sizing, Option<PlanWarning>), BwError> {
    let narrays = narrays.max(1) as u64;
    let threads_u = threads.max(1) as u64;
    let want = LLC_FACTOR * llc_bytes.unwrap_or(FALLBACK_LLC_BYTES);
    let per_chunk_granules = |bytes: u64, round_up: bool| {
        let per = bytes as f64 / threads_u as f64 / granule as f64;
        (if round_up { per.ceil() } else { per.floor() }).max(1.0) as u64
    };
    let fit = |bytes: u64, round_up: bool| {
        let g = per_chunk_granules(bytes, round_up);
        (g * granule * threads_u, (g * granule / 8) as usize)
    };
    let mut warning = None;
    let (array_bytes, chunk_elems) = match requested {
        Some(req) => {
            let (bytes, chunk) = fit(req, true);
            if bytes.saturating_mul(narrays) > cap_bytes {
                return Err(Refusal::ArraysOverSpare {
                    asked: req,
                    arrays: narrays,
                    needs: bytes * narrays,
                    spare: cap_bytes,
                    most: cap_bytes / narrays / PAGE * PAGE,
                }
                .into());
            }
            if bytes < want {
                warning = Some(PlanWarning::SmallArrays { bytes, want });
            }
            (bytes, chunk)
        }
        None => {
            let (bytes, chunk) = fit(want, true);
            if bytes.saturating_mul(narrays) > cap_bytes {
                let (b, c) = fit(cap_bytes / narrays, false);
                if b.saturating_mul(narrays) > cap_bytes {
                    return Err(usage(format!(
                        "the memory node(s) can spare only {}, too little for {narrays} \
                         arrays of {threads} thread chunks",
                        binary_size(cap_bytes)
                    )));
                }
                warning = Some(PlanWarning::Capped { bytes: b, spare: cap_bytes, want });
                (b, c)
            } else {
                (bytes, chunk)
            }
        }
    };
    if llc_bytes.is_none() && warning.is_none() {
        warning = Some(PlanWarning::UnknownLlc { assumed: FALLBACK_LLC_BYTES });
    }
    Ok((Sizing { array_bytes, chunk_elems, llc_bytes, rule_ok: array_bytes >= want }, warning))
}

/// Allowed CPUs of a node, one per core first (then SMT siblings), the first
/// `n` of them.
fn node_cpus(
    topo: &Topology,
    allowed: &Allowed,
    node: u32,
    n: Option<usize>,
) -> Result<Vec<u32>, BwError> {
    let usable = allowed.check_cpu_node(node, topo)?;
    let mut cpus: Vec<(usize, u32)> = usable
        .iter()
        .map(|c| {
            let rank = topo
                .cpu(c)
                .map(|cpu| cpu.thread_siblings.iter().position(|s| s == c).unwrap_or(0))
                .unwrap_or(0);
            (rank, c)
        })
        .collect();
    cpus.sort();
    let all: Vec<u32> = cpus.into_iter().map(|(_, c)| c).collect();
    match n {
        Some(n) if n > all.len() => {
            Err(Refusal::ThreadsOverNode { threads: n, node, usable }.into())
        }
        Some(n) => Ok(all[..n].to_vec()),
        None => Ok(all),
    }
}

fn default_cpu_node(topo: &Topology, allowed: &Allowed) -> Result<u32, BwError> {
    allowed
        .cpu_nodes(topo)
        .first()
        .ok_or_else(|| usage("no NUMA node has a CPU this process may use"))
}

/// The CPU node's own memory, or the nearest memory node by distance.
fn default_mem_node(topo: &Topology, allowed: &Allowed, cpu_node: u32) -> Result<u32, BwError> {
    let mems = allowed.memory_nodes(topo);
    if mems.contains(cpu_node) {
        return Ok(cpu_node);
    }
    mems.iter()
        .min_by_key(|&m| topo.distance(cpu_node, m).unwrap_or(u32::MAX))
        .ok_or_else(|| usage("no NUMA node has memory this process may use"))
}

/// The unit each thread's chunk is a multiple of, so that no page is
/// shared by two threads' chunks: this machine's base page (4 KiB on
/// x86-64, up to 64 KiB on arm64), its transparent huge page for `thp`
/// chunks of at least four of them, the hugetlb page.
fn granule(pages: PageKind, per_thread_bytes: u64) -> u64 {
    let base = (place::base_page_size() as u64).max(PAGE);
    let thp = place::thp_page_size() as u64;
    match pages {
        PageKind::Thp if per_thread_bytes >= 4 * thp => thp,
        PageKind::Huge2M => MIB2,
        PageKind::Huge1G => 1 << 30,
        _ => base,
    }
}

/// Checks `plan` against the machine and builds its cases; nothing is
/// allocated. `spare` maps memory nodes to the bytes they can spare;
/// `weighted_ok` says whether the kernel has weighted interleave, whose
/// sysfs weights are `weights`.
pub fn prepare(
    topo: &Topology,
    plan: &BwPlan,
    allowed: &Allowed,
    spare: &BTreeMap<u32, u64>,
    weighted_ok: bool,
    weights: Option<BTreeMap<u32, u32>>,
) -> Result<Prepared, BwError> {
    let arrays = check_plan(plan)?;
    let mut p = Planner {
        topo,
        plan,
        allowed,
        spare,
        weights,
        arrays,
        narrays: arrays.iter().filter(|&&u| u).count(),
        cases: Vec::new(),
        warnings: Vec::new(),
    };
    for mode in &plan.modes {
        match mode {
            BwMode::Local { cpu_node, mem_node, cpus } => p.local(*cpu_node, *mem_node, cpus)?,
            BwMode::Matrix => p.matrix()?,
            BwMode::Global => p.global()?,
            BwMode::Interleave => p.interleave(None)?,
            BwMode::Weighted { required } => {
                if !weighted_ok {
                    if *required {
                        return Err(usage(
                            "weighted interleave needs Linux 6.9+ (MPOL_WEIGHTED_INTERLEAVE): \
                             this kernel does not have it",
                        ));
                    }
                    p.warnings.push(PlanWarning::NoWeightedInterleave);
                    continue;
                }
                let w = p.weights.clone().unwrap_or_default();
                p.interleave(Some(w))?;
            }
            BwMode::Scaling { cpu_node, mem_node } => p.scaling(*cpu_node, *mem_node)?,
            BwMode::Package { package, memory } => p.package(*package, *memory)?,
        }
    }
    Ok(Prepared { cases: p.cases, warnings: p.warnings })
}

/// The checks that need no machine; returns the arrays the kernels use
/// (`[a, b, c, d]`).
fn check_plan(plan: &BwPlan) -> Result<[bool; 4], BwError> {
    if plan.threads == Some(0) {
        return Err(Refusal::NoThreads.into());
    }
    if plan.kernels.is_empty() {
        return Err(usage("no kernel given (expected some of copy, scale, add, triad, read, write, rw3:1, rw2:1, rw1:1)"));
    }
    if plan.array_bytes == Some(0) {
        return Err(Refusal::EmptyArrays.into());
    }
    let ops = kernels::select(plan.isa)?;
    if plan.stores == StoreMode::Nt && !ops.has_nt() {
        return Err(Refusal::NoNtStores { isa: ops.isa() }.into());
    }
    let mut arrays = [false; 4];
    for k in &plan.kernels {
        for (i, u) in k.uses().into_iter().enumerate() {
            arrays[i] |= u;
        }
    }
    Ok(arrays)
}

fn one(n: u32) -> NodeSet {
    [n].into_iter().collect()
}

/// What [`prepare`] works with: the machine, the plan, and the cases and
/// warnings built so far. One method per mode.
struct Planner<'a> {
    topo: &'a Topology,
    plan: &'a BwPlan,
    allowed: &'a Allowed,
    spare: &'a BTreeMap<u32, u64>,
    weights: Option<BTreeMap<u32, u32>>,
    arrays: [bool; 4],
    narrays: usize,
    cases: Vec<Case>,
    warnings: Vec<PlanWarning>,
}

impl Planner<'_> {
    fn node_of(&self, c: u32) -> Option<u32> {
        self.topo.cpu(c).and_then(|cpu| cpu.node)
    }

    /// The most every node of `nodes` can spare.
    fn cap_of(&self, nodes: &NodeSet) -> u64 {
        nodes
            .iter()
            .map(|n| self.spare.get(&n).copied().unwrap_or(u64::MAX))
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Array sizes for a team on `cpus` within `cap` bytes per array set;
    /// a broken STREAM rule is warned about once.
    fn sizing(&mut self, cpus: &[u32], cap: u64) -> Result<Sizing, BwError> {
        let set: CpuSet = cpus.iter().copied().collect();
        let llc = self.topo.llc_bytes_for(&set);
        let want = self.plan.array_bytes.unwrap_or(LLC_FACTOR * llc.unwrap_or(FALLBACK_LLC_BYTES));
        let g = granule(self.plan.pages, want / cpus.len().max(1) as u64);
        let (s, w) =
            choose_array_bytes(llc, self.plan.array_bytes, cap, self.narrays, cpus.len(), g)?;
        if let Some(w) = w {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
        Ok(s)
    }

    /// Every allowed CPU node's threads (`--threads` per node).
    fn machine_cpus(&self) -> Result<Vec<u32>, BwError> {
        let mut all = Vec::new();
        for n in self.allowed.cpu_nodes(self.topo).iter() {
            all.extend(node_cpus(self.topo, self.allowed, n, self.plan.threads)?);
        }
        Ok(all)
    }

    fn push(
        &mut self,
        mode: Mode,
        cpus: Vec<u32>,
        cpu_node: Option<u32>,
        memory: CaseMemory,
        mem_nodes: NodeSet,
        sizing: Sizing,
    ) {
        let cpu_nodes_of = cpus.iter().map(|&c| self.node_of(c)).collect();
        self.cases.push(Case {
            mode,
            cpus,
            cpu_nodes_of,
            cpu_node,
            memory,
            mem_nodes,
            sizing,
            arrays: self.arrays,
            scope: None,
        });
    }

    /// `--cpus`: the first `--threads` of them and the one node they share.
    fn given_cpus(
        &self,
        set: &CpuSet,
        cpu_node: Option<u32>,
    ) -> Result<(Vec<u32>, Option<u32>), BwError> {
        if set.is_empty() {
            return Err(Refusal::NoCpus.into());
        }
        self.allowed.check_cpus(set, Some(self.topo))?;
        let list: Vec<u32> = set.iter().collect();
        let list = match self.plan.threads {
            Some(n) if n > list.len() => {
                return Err(Refusal::ThreadsOverCpus { threads: n, given: list.len() }.into())
            }
            Some(n) => list[..n].to_vec(),
            None => list,
        };
        let nodes: NodeSet = list.iter().filter_map(|&c| self.node_of(c)).collect();
        let node = if nodes.len() == 1 { nodes.first() } else { None };
        if let Some(n) = cpu_node {
            if node != Some(n) {
                return Err(Refusal::CpusOffNode { cpus: set.clone(), node: n }.into());
            }
        }
        Ok((list, node))
    }

    /// One team against one memory node.
    fn local(
        &mut self,
        cpu_node: Option<u32>,
        mem_node: Option<u32>,
        cpus: &Option<CpuSet>,
    ) -> Result<(), BwError> {
        let (topo, allowed) = (self.topo, self.allowed);
        let (cpus, cpu_node) = match cpus {
            Some(set) => self.given_cpus(set, cpu_node)?,
            None => {
                let node = match cpu_node {
                    Some(n) => n,
                    None => default_cpu_node(topo, allowed)?,
                };
                (node_cpus(topo, allowed, node, self.plan.threads)?, Some(node))
            }
        };
        let mem = match (mem_node, cpu_node) {
            (Some(m), _) => m,
            (None, Some(c)) => default_mem_node(topo, allowed, c)?,
            (None, None) => default_mem_node(topo, allowed, self.node_of(cpus[0]).unwrap_or(0))?,
        };
        allowed.check_mem_nodes(&one(mem), topo)?;
        let s = self.sizing(&cpus, self.cap_of(&one(mem)))?;
        self.push(Mode::Local, cpus, cpu_node, CaseMemory::Bind(mem), one(mem), s);
        Ok(())
    }

    /// Every CPU node against every memory node.
    fn matrix(&mut self) -> Result<(), BwError> {
        let (topo, allowed) = (self.topo, self.allowed);
        let mems = allowed.memory_nodes(topo);
        if mems.is_empty() {
            return Err(usage("no memory node this process may use"));
        }
        for c in allowed.cpu_nodes(topo).iter() {
            let cpus = node_cpus(topo, allowed, c, self.plan.threads)?;
            for m in mems.iter() {
                let s = self.sizing(&cpus, self.cap_of(&one(m)))?;
                self.push(Mode::Matrix, cpus.clone(), Some(c), CaseMemory::Bind(m), one(m), s);
            }
        }
        Ok(())
    }

    /// Every node's threads on their own node's memory.
    fn global(&mut self) -> Result<(), BwError> {
        let cpus = self.machine_cpus()?;
        let mems = self.allowed.memory_nodes(self.topo);
        let of: Vec<Option<u32>> = cpus.iter().map(|&c| self.node_of(c)).collect();
        let used: NodeSet = of.iter().flatten().copied().filter(|n| mems.contains(*n)).collect();
        // Each node holds its threads' share.
        let mut cap = u64::MAX;
        for n in used.iter() {
            let k = of.iter().filter(|&&o| o == Some(n)).count() as u64;
            let sp = self.spare.get(&n).copied().unwrap_or(u64::MAX);
            cap = cap.min(sp.saturating_mul(cpus.len() as u64) / k.max(1));
        }
        if of.iter().any(|o| o.is_none_or(|n| !mems.contains(n))) {
            self.warnings.push(PlanWarning::GlobalUnchecked);
        }
        let s = self.sizing(&cpus, cap)?;
        self.push(Mode::Global, cpus, None, CaseMemory::LocalPerThread, used, s);
        Ok(())
    }

    /// Every thread, memory interleaved over every memory node (with the
    /// kernel's `weights`: weighted interleave).
    fn interleave(&mut self, weights: Option<BTreeMap<u32, u32>>) -> Result<(), BwError> {
        let cpus = self.machine_cpus()?;
        let mems = self.allowed.memory_nodes(self.topo);
        if mems.is_empty() {
            return Err(usage("no memory node this process may use"));
        }
        let cap = self.cap_of(&mems).saturating_mul(mems.len() as u64);
        let s = self.sizing(&cpus, cap)?;
        let (mode, memory) = match weights {
            Some(w) => {
                let wmap: BTreeMap<u32, f64> =
                    mems.iter().map(|n| (n, w.get(&n).copied().unwrap_or(1) as f64)).collect();
                (Mode::Weighted, CaseMemory::Weighted(mems.clone(), wmap))
            }
            None => (Mode::Interleave, CaseMemory::Interleave(mems.clone())),
        };
        self.push(mode, cpus, None, memory, mems, s);
        Ok(())
    }

    /// Every usable CPU of package `id` (`--threads` per node) against
    /// `target`: its own DRAM bound per node or interleaved, or another
    /// package's interleaved; under NUMA off, its own memory is what the
    /// OS gives (bound to the one node).
    fn package(&mut self, id: u32, target: PackageTarget) -> Result<(), BwError> {
        use results::scope::{MemoryOf, Scope, ScopePolicy};
        let (topo, allowed) = (self.topo, self.allowed);
        let all = crate::scope::packages(topo);
        let find = |id: u32| {
            all.iter().find(|p| p.id == id).ok_or_else(|| {
                let ids: Vec<String> = all.iter().map(|p| p.id.to_string()).collect();
                usage(format!("package {id} has no online CPU (packages: {})", ids.join(", ")))
            })
        };
        let pkg = find(id)?;
        let mut cpus = Vec::new();
        for n in pkg.cpu_nodes.iter() {
            let of_node: Vec<u32> = node_cpus(topo, allowed, n, None)?
                .into_iter()
                .filter(|c| pkg.cpus.contains(*c))
                .collect();
            let take = self.plan.threads.unwrap_or(of_node.len());
            if take > of_node.len() {
                return Err(Refusal::ThreadsOverPackageNode {
                    threads: take,
                    node: n,
                    package: id,
                    usable: of_node.len(),
                }
                .into());
            }
            cpus.extend_from_slice(&of_node[..take]);
        }
        let (memory, mem_package, nodes, policy) = match target {
            PackageTarget::BindPerNode | PackageTarget::Interleave => {
                let dram = crate::scope::own_dram(pkg).map_err(usage)?;
                let policy = match target {
                    _ if pkg.numa_off => ScopePolicy::OsGiven,
                    PackageTarget::BindPerNode => ScopePolicy::BindPerNode,
                    _ => ScopePolicy::Interleave,
                };
                if policy == ScopePolicy::BindPerNode && !pkg.cpu_only_nodes.is_empty() {
                    return Err(usage(format!(
                        "package {id}'s node(s) {} hold no memory: its threads there cannot be \
                         bound to their own node",
                        pkg.cpu_only_nodes
                    )));
                }
                (MemoryOf::OwnPackage, id, dram, policy)
            }
            PackageTarget::Other(q) => {
                if q == id {
                    return Err(usage(format!("package {id} is its own package, not another")));
                }
                let dram = crate::scope::other_dram(pkg, find(q)?).map_err(usage)?;
                (MemoryOf::OtherPackage, q, dram, ScopePolicy::Interleave)
            }
        };
        allowed.check_mem_nodes(&nodes, topo)?;
        let (case_memory, cap) = match policy {
            ScopePolicy::BindPerNode => {
                // Each node holds its own threads' share.
                let of: Vec<Option<u32>> = cpus.iter().map(|&c| self.node_of(c)).collect();
                let mut cap = u64::MAX;
                for n in nodes.iter() {
                    let k = of.iter().filter(|&&o| o == Some(n)).count() as u64;
                    let sp = self.spare.get(&n).copied().unwrap_or(u64::MAX);
                    cap = cap.min(sp.saturating_mul(cpus.len() as u64) / k.max(1));
                }
                (CaseMemory::LocalPerThread, cap)
            }
            ScopePolicy::Interleave => (
                CaseMemory::Interleave(nodes.clone()),
                self.cap_of(&nodes).saturating_mul(nodes.len() as u64),
            ),
            ScopePolicy::OsGiven => {
                let cap = self.cap_of(&nodes).saturating_mul(nodes.len() as u64);
                match nodes.first().filter(|_| nodes.len() == 1) {
                    Some(n) => (CaseMemory::Bind(n), cap),
                    None => (CaseMemory::Interleave(nodes.clone()), cap),
                }
            }
        };
        let sizing = self.sizing(&cpus, cap)?;
        let cpu_set: CpuSet = cpus.iter().copied().collect();
        let cpu_nodes: NodeSet = cpus.iter().filter_map(|&c| self.node_of(c)).collect();
        let cpu_node = cpu_nodes.first().filter(|_| cpu_nodes.len() == 1);
        let scope = Scope {
            package: id,
            memory,
            mem_package,
            policy,
            cpus: cpu_set,
            cpu_nodes,
            mem_nodes: nodes.clone(),
        };
        self.push(Mode::Package, cpus, cpu_node, case_memory, nodes, sizing);
        if let Some(c) = self.cases.last_mut() {
            c.scope = Some(scope);
        }
        Ok(())
    }

    /// Thread counts 1..N of one node against one memory node.
    fn scaling(&mut self, cpu_node: Option<u32>, mem_node: Option<u32>) -> Result<(), BwError> {
        let (topo, allowed) = (self.topo, self.allowed);
        let node = match cpu_node {
            Some(n) => n,
            None => default_cpu_node(topo, allowed)?,
        };
        let all = node_cpus(topo, allowed, node, self.plan.threads)?;
        let mem = match mem_node {
            Some(m) => m,
            None => default_mem_node(topo, allowed, node)?,
        };
        allowed.check_mem_nodes(&one(mem), topo)?;
        // Arrays sized once for the largest team, so every count moves the
        // same bytes.
        let full = self.sizing(&all, self.cap_of(&one(mem)))?;
        for n in scaling_counts(all.len()) {
            let cpus = all[..n].to_vec();
            let g = granule(self.plan.pages, full.array_bytes / n as u64);
            let (s, _) = choose_array_bytes(
                full.llc_bytes,
                Some(full.array_bytes),
                u64::MAX,
                self.narrays,
                n,
                g,
            )?;
            let sizing = Sizing { rule_ok: full.rule_ok, ..s };
            self.push(Mode::Scaling, cpus, Some(node), CaseMemory::Bind(mem), one(mem), sizing);
        }
        Ok(())
    }
}

/// Thread counts for a scaling run up to `n`: every count up to 16, then
/// about 16 evenly spaced counts ending at `n`.
pub fn scaling_counts(n: usize) -> Vec<usize> {
    if n <= 16 {
        return (1..=n).collect();
    }
    let mut v: Vec<usize> = (1..=8).collect();
    let step = (n - 8).div_ceil(8);
    let mut k = 8 + step;
    while k < n {
        v.push(k);
        k += step;
    }
    v.push(n);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn arrays_are_four_times_the_llc() {
        let (s, w) = choose_array_bytes(Some(32 * MIB), None, u64::MAX, 3, 2, PAGE).unwrap();
        assert_eq!(s.array_bytes, 128 * MIB);
        assert_eq!(s.chunk_elems as u64 * 8 * 2, s.array_bytes);
        assert!(s.rule_ok);
        assert!(w.is_none());
        // odd thread counts round each chunk up to whole pages
        let (s, _) = choose_array_bytes(Some(32 * MIB), None, u64::MAX, 3, 3, PAGE).unwrap();
        assert!(s.array_bytes >= 128 * MIB && s.array_bytes < 128 * MIB + 3 * PAGE);
        assert_eq!(s.chunk_elems as u64 * 8 % PAGE, 0);
    }

    #[test]
    fn small_size_is_allowed_with_a_warning() {
        let (s, w) = choose_array_bytes(Some(32 * MIB), Some(MIB), u64::MAX, 3, 1, PAGE).unwrap();
        assert_eq!(s.array_bytes, MIB);
        assert!(!s.rule_ok);
        let w = w.unwrap();
        assert_eq!(w, PlanWarning::SmallArrays { bytes: MIB, want: 128 * MIB });
        // its own words name no flag: console's bw::small_arrays adds it
        assert_eq!(
            w.to_string(),
            "1 MiB per array is below 4x the last-level cache the threads share (128 MiB): \
             figures may include cache bandwidth"
        );
    }

    #[test]
    fn size_beyond_what_the_node_can_spare_is_refused() {
        let err = choose_array_bytes(Some(32 * MIB), Some(1024 * MIB), 2048 * MIB, 3, 1, PAGE)
            .unwrap_err();
        let want = Refusal::ArraysOverSpare {
            asked: 1024 * MIB,
            arrays: 3,
            needs: 3072 * MIB,
            spare: 2048 * MIB,
            most: 2048 * MIB / 3 / PAGE * PAGE,
        };
        assert!(matches!(&err, BwError::Refused(r) if *r == want), "{err:?}");
        assert!(err.is_usage());
    }

    #[test]
    fn default_size_is_capped_by_spare_memory() {
        let (s, w) = choose_array_bytes(Some(512 * MIB), None, 1200 * MIB, 3, 2, PAGE).unwrap();
        assert!(s.array_bytes * 3 <= 1200 * MIB);
        assert!(s.array_bytes > 390 * MIB);
        assert!(!s.rule_ok);
        assert!(matches!(w, Some(PlanWarning::Capped { want, .. }) if want == 2048 * MIB));
    }

    mod package {
        use super::super::*;
        use results::scope::{MemoryOf, ScopePolicy};

        fn all(t: &Topology) -> Allowed {
            Allowed { cpus: t.online_cpus.clone(), mems: t.node_ids() }
        }

        fn cases(t: &Topology, package: u32, memory: PackageTarget) -> Result<Vec<Case>, BwError> {
            let plan = BwPlan {
                modes: vec![BwMode::Package { package, memory }],
                kernels: vec![Kernel::Triad],
                ..BwPlan::default()
            };
            prepare(t, &plan, &all(t), &BTreeMap::new(), false, None).map(|p| p.cases)
        }

        /// Every CPU of the package in one team; its own nodes bound per
        /// thread's node or interleaved, the other package's interleaved;
        /// the CXL node in none; the scope says which.
        #[test]
        fn a_package_case_is_every_cpu_of_it_on_the_memory_asked() {
            let t = crate::suite::tests::snc2_with_cxl();
            let c = cases(&t, 1, PackageTarget::BindPerNode).unwrap();
            assert_eq!(c.len(), 1);
            let c = &c[0];
            assert_eq!(c.mode, Mode::Package);
            let mut cpus = c.cpus.clone();
            cpus.sort_unstable();
            assert_eq!(cpus, [4, 5, 6, 7]);
            assert_eq!(c.memory, CaseMemory::LocalPerThread);
            assert_eq!(c.mem_nodes.to_string(), "2-3");
            assert_eq!(c.cpu_node, None, "the team spans two nodes");
            let s = c.scope.as_ref().unwrap();
            assert_eq!((s.package, s.memory, s.mem_package), (1, MemoryOf::OwnPackage, 1));
            assert_eq!(s.policy, ScopePolicy::BindPerNode);
            assert_eq!((s.cpus.to_string(), s.cpu_nodes.to_string()), ("4-7".into(), "2-3".into()));

            let c = &cases(&t, 0, PackageTarget::Interleave).unwrap()[0];
            assert_eq!(c.memory, CaseMemory::Interleave(NodeSet::parse_list("0-1").unwrap()));
            assert_eq!(c.scope.as_ref().unwrap().policy, ScopePolicy::Interleave);

            let c = &cases(&t, 0, PackageTarget::Other(1)).unwrap()[0];
            assert_eq!(c.memory, CaseMemory::Interleave(NodeSet::parse_list("2-3").unwrap()));
            let s = c.scope.as_ref().unwrap();
            assert_eq!((s.memory, s.mem_package), (MemoryOf::OtherPackage, 1));
            assert_eq!(s.mem_nodes.to_string(), "2-3");

            let e = cases(&t, 0, PackageTarget::Other(0)).unwrap_err();
            assert!(e.to_string().contains("its own package"), "{e}");
            let e = cases(&t, 7, PackageTarget::Interleave).unwrap_err();
            assert!(e.to_string().contains("package 7 has no online CPU"), "{e}");
        }

        /// NUMA off: the package's CPUs only, bound to the one node (the
        /// memory the OS gives); the other package's memory is refused.
        #[test]
        fn under_numa_off_a_package_uses_the_memory_the_os_gives() {
            let t = crate::suite::tests::numa_off();
            let c = &cases(&t, 1, PackageTarget::BindPerNode).unwrap()[0];
            let mut cpus = c.cpus.clone();
            cpus.sort_unstable();
            assert_eq!(cpus, [4, 5, 6, 7]);
            assert_eq!(c.memory, CaseMemory::Bind(0));
            assert_eq!(c.cpu_node, Some(0));
            assert_eq!(c.scope.as_ref().unwrap().policy, ScopePolicy::OsGiven);
            let e = cases(&t, 0, PackageTarget::Other(1)).unwrap_err();
            assert!(e.is_usage() && e.to_string().starts_with("NUMA off"), "{e}");
        }
    }

    #[test]
    fn scaling_counts_end_at_n() {
        assert_eq!(scaling_counts(1), vec![1]);
        assert_eq!(scaling_counts(4), vec![1, 2, 3, 4]);
        let v = scaling_counts(96);
        assert_eq!(*v.last().unwrap(), 96);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert!(v.len() <= 20);
    }
}
