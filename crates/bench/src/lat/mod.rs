//! Latency experiments: a dependent pointer chase from chosen CPUs to chosen
//! nodes' memory (one point, node matrix, working-set sweep, every CPU to
//! one node with clustering), the prefetch check, latency under load
//! (curves per traffic mix), and core-to-core latency.
//!
//! Each entry point validates its request against the topology before it
//! allocates, reports progress and every result (`Event::Record`: a chase,
//! loaded point or pair, or a mode's summary) as soon as it is measured,
//! and stops cleanly on the [`StopFlag`], returning what it measured.

pub mod c2c;
pub mod cluster;
pub mod experiment;
pub mod loaded;
pub mod measure;
pub mod per_cpu_sweep;
pub mod plateau;
pub mod sys;

use std::time::Duration;

use kernels::chase::{ChaseError, Ring};
use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet, SysRoot, Topology};

use events::{Event, Observer, StopFlag};
use results::stats::Summary;

pub use c2c::{c2c, C2cSpec};
pub use loaded::{loaded, LoadedReport, LoadedSpec};
pub use measure::Timing;
pub use per_cpu_sweep::{per_cpu_sweep, PerCpuSweepReport, PerCpuSweepSpec};
use results::lat::{
    CacheMark, CpuGroup, LatResult, LatSummary, Mode, PerCpuSummary, Plateau, PrefetchCheck,
    SweepSummary,
};
use results::pages::PageKind;
use results::placement::{Placement, PlacementStatus};
use topo::units::binary_size;

/// Default working set of a point: 1 GiB, far past any last-level cache.
pub const DEFAULT_SIZE_BYTES: u64 = 1 << 30;
/// Default distance between chased elements: 256 B (four lines, as
/// multichase). A 64 B stride puts both lines of every 128 B pair in the
/// ring, and the adjacent-line (spatial) prefetcher turns about half the
/// loads into cache hits: on an AMD EPYC host 1 GiB chased at 64 B gives
/// ~102 ns, at 128-512 B ~150-160 ns (docs/lat.md). 256 B leaves the pair
/// line and the lines either side of every element out of the ring, which
/// also covers up/down and 256 B-region prefetchers; 512 B gains nothing
/// more there.
pub const DEFAULT_STRIDE_BYTES: usize = 256;
/// Stride of the sweep's points that fit in the last-level cache: one
/// line, so every set of the caches is used (a 256 B stride reaches only a
/// quarter of the sets of a cache indexed by address bits and would show
/// L1/L2 four times too small). Points past the LLC use the DRAM stride.
pub const CACHE_STRIDE_BYTES: usize = 64;
/// Base pages per TLB group (multichase's default locality: 64 pages).
pub const DEFAULT_TLB_GROUP_PAGES: usize = 64;
/// Smallest working set accepted.
pub const MIN_SIZE_BYTES: u64 = 4096;

/// Why a latency experiment could not run.
#[derive(Debug, thiserror::Error)]
pub enum LatError {
    /// The request itself is wrong (unknown CPU or node, bad size...).
    #[error("{0}")]
    BadRequest(String),
    /// A list of sizes the per-CPU sweep cannot chase (the values at
    /// fault, for the front end to word against its own flag).
    #[error(transparent)]
    Sizes(#[from] per_cpu_sweep::SizesRefusal),
    /// Placement, memory or page-size trouble (names the node/CPU/size).
    #[error(transparent)]
    Place(#[from] place::PlaceError),
    #[error("pointer chase: {0}")]
    Chase(#[from] ChaseError),
    /// A measuring thread panicked: numaprobe's bug, never the user's
    /// request (the CLI exits with 1 and asks for a report).
    #[error(
        "{0} panicked: this is a bug in numaprobe; please report it with the command line and \
         the output of `numaprobe --version`"
    )]
    Panicked(String),
    /// Stopped (Ctrl-C) before the first result.
    #[error("stopped before anything was measured")]
    Stopped,
}

impl LatError {
    /// True when the user's request is at fault (the CLI exits with 2).
    pub fn is_usage(&self) -> bool {
        match self {
            LatError::BadRequest(_) | LatError::Sizes(_) => true,
            LatError::Place(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// What the caller supplies to every experiment.
pub struct Ctx<'a> {
    pub observer: &'a dyn Observer,
    pub stop: &'a StopFlag,
    pub timing: Timing,
}

/// How the chased buffer is laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChaseOpts {
    /// Working set; `None` = the mode's default (capped by free memory).
    pub size_bytes: Option<u64>,
    pub stride_bytes: usize,
    /// The sweep's stride for sizes up to the last-level cache.
    pub cache_stride_bytes: usize,
    pub pages: PageKind,
    pub tlb_group_pages: usize,
    pub seed: u64,
}

impl Default for ChaseOpts {
    fn default() -> Self {
        ChaseOpts {
            size_bytes: None,
            stride_bytes: DEFAULT_STRIDE_BYTES,
            cache_stride_bytes: CACHE_STRIDE_BYTES,
            // base pages with THP refused: the chase measures DRAM, not
            // the TLB reach of huge pages
            pages: PageKind::NoThp,
            tlb_group_pages: DEFAULT_TLB_GROUP_PAGES,
            seed: 0x6c61_7463_6861_7365,
        }
    }
}

impl ChaseOpts {
    /// The same layout with every stride set to `stride` (what an explicit
    /// `--stride` means).
    pub fn with_stride(self, stride: usize) -> ChaseOpts {
        ChaseOpts { stride_bytes: stride, cache_stride_bytes: stride, ..self }
    }

    /// The method in words, for captions.
    pub fn caption(&self, page: &str) -> String {
        results::lat::method_caption(
            self.stride_bytes as u64,
            Some((self.group_elems() * self.stride_bytes) as u64),
            page,
        )
    }

    /// Elements per TLB group: `tlb_group_pages` base pages, whatever the
    /// page kind (as multichase does): the walk stays inside 256 KiB at a
    /// time, which every level of address translation covers, also a
    /// hypervisor's.
    fn group_elems(&self) -> usize {
        (self.tlb_group_pages * place::base_page_size() / self.stride_bytes).max(1)
    }
}

/// Where to measure one point from and to.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Where {
    pub cpu: Option<u32>,
    pub cpu_node: Option<u32>,
    pub mem_node: Option<u32>,
}

/// One measured chase as a result (`None` for an empty sample).
fn lat_result(
    mode: Mode,
    size: u64,
    w: &Resolved,
    s: &measure::ChaseSamples,
    opts: &ChaseOpts,
    page: &str,
    placement: &Placement,
) -> Option<LatResult> {
    let sum: Summary = s.summary()?;
    Some(LatResult {
        mode,
        size_bytes: size,
        cpu: w.cpu,
        cpu_node: w.cpu_node,
        mem_node: w.mem_node,
        median_ns: sum.median,
        p50_ns: sum.median,
        p90_ns: sum.p90,
        p99_ns: sum.p99,
        min_ns: sum.min,
        max_ns: sum.max,
        spread_pct: sum.spread_pct,
        noise_pct: sum.robust_cv_pct(),
        samples: sum.n,
        loads_per_sample: s.loads_per_sample,
        stride_bytes: opts.stride_bytes,
        tlb_group_bytes: (opts.group_elems() * opts.stride_bytes) as u64,
        page_size: page.to_string(),
        placement: placement.clone(),
        counters: s.counters.clone().map(Box::new),
        histogram: s.histogram(),
        stable: s.stable(),
        disturbance: Some(s.disturbance.clone()),
        min_loads_per_sample: s.min_loads_per_sample,
        interleave: None,
        scope: None,
    })
}

/// A resolved, validated place to measure from and to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resolved {
    pub cpu: u32,
    pub cpu_node: Option<u32>,
    pub mem_node: Option<u32>,
}

/// CPUs that are online and in this process's affinity mask.
pub fn usable_cpus(topo: &Topology) -> CpuSet {
    let online: CpuSet = topo.cpus.iter().map(|c| c.id).collect();
    match place::current_thread_affinity() {
        Ok(allowed) if !allowed.is_empty() => online.intersection(&allowed),
        _ => online,
    }
}

fn cpu_node_of(topo: &Topology, cpu: u32) -> Option<u32> {
    topo.cpu(cpu).and_then(|c| c.node)
}

/// Checks CPU and node choices against the topology (before allocating).
pub fn resolve(topo: &Topology, w: &Where) -> Result<Resolved, LatError> {
    let usable = usable_cpus(topo);
    if usable.is_empty() {
        return Err(LatError::BadRequest(
            "no usable CPU found (affinity mask and online CPUs do not meet)".into(),
        ));
    }
    let cpu = match (w.cpu, w.cpu_node) {
        (Some(c), n) => {
            if topo.cpu(c).is_none() {
                return Err(LatError::BadRequest(format!(
                    "CPU {c} does not exist or is offline (online CPUs: {})",
                    topo.online_cpus
                )));
            }
            if !usable.contains(c) {
                return Err(LatError::BadRequest(format!(
                    "CPU {c} is not allowed for this process (allowed CPUs: {usable})"
                )));
            }
            if let Some(n) = n {
                if cpu_node_of(topo, c) != Some(n) {
                    return Err(LatError::BadRequest(format!("CPU {c} is not on node {n}")));
                }
            }
            c
        }
        (None, Some(n)) => {
            let node = topo.node(n).ok_or_else(|| {
                LatError::BadRequest(format!(
                    "node {n} does not exist (nodes: {})",
                    topo.node_ids()
                ))
            })?;
            if node.cpus.is_empty() {
                return Err(LatError::BadRequest(format!("node {n} has no CPUs to run on")));
            }
            node.cpus.intersection(&usable).first().ok_or_else(|| {
                LatError::BadRequest(format!(
                    "no CPU of node {n} ({}) is allowed for this process",
                    node.cpus
                ))
            })?
        }
        (None, None) => usable.first().expect("checked non-empty"),
    };
    let cpu_node = cpu_node_of(topo, cpu);
    let mem_node = match w.mem_node {
        Some(m) => {
            let node = topo.node(m).ok_or_else(|| {
                LatError::BadRequest(format!(
                    "node {m} does not exist (nodes: {})",
                    topo.node_ids()
                ))
            })?;
            if node.mem_total_bytes == 0 {
                return Err(LatError::BadRequest(format!("node {m} has no memory")));
            }
            if let Ok(mems) = place::mems_allowed() {
                if !mems.contains(m) {
                    return Err(LatError::BadRequest(format!(
                        "node {m} is not allowed for this process's memory (allowed nodes: {mems})"
                    )));
                }
            }
            Some(m)
        }
        None => match cpu_node.and_then(|n| topo.node(n)) {
            Some(n) if n.mem_total_bytes > 0 => Some(n.id),
            _ => topo.memory_nodes().next().map(|n| n.id),
        },
    };
    Ok(Resolved { cpu, cpu_node, mem_node })
}

/// Checks that `node` can spare `size` bytes of `pages` (keeping the
/// reserve of [`place::reserve_bytes`]); `explicit` says whether the user
/// asked for this size (an error when too big) or it is a default (capped
/// to what the node can spare). Returns the size to use, rounded up to the
/// page size.
pub fn fit_size(
    topo: &Topology,
    node: Option<u32>,
    size: u64,
    explicit: bool,
    pages: PageKind,
) -> Result<u64, LatError> {
    let page = sys::page_bytes(pages) as u64;
    if size < MIN_SIZE_BYTES {
        return Err(LatError::BadRequest(format!(
            "size {size} bytes is below the minimum of {MIN_SIZE_BYTES} bytes"
        )));
    }
    let size = size.div_ceil(page) * page;
    let Some(node) = node else { return Ok(size) };
    let root = SysRoot::live();
    if matches!(pages, PageKind::Huge2M | PageKind::Huge1G) {
        place::ensure_hugepages(&root, &NodeSet::from_iter([node]), page, size)?;
        return Ok(size);
    }
    let spare = node_spare_bytes(topo, node).unwrap_or(u64::MAX);
    let spare = spare / page * page;
    if size <= spare {
        return Ok(size);
    }
    if explicit || spare < MIN_SIZE_BYTES.max(page) {
        place::ensure_node_can_spare(&root, node, size)?;
    }
    Ok(spare)
}

/// What node `node` can spare now: its free memory less the reserve the
/// kernel and other processes need (`place::node_memory`), else from the
/// topology where there is no per-node meminfo (NUMA compiled out).
fn node_spare_bytes(topo: &Topology, node: u32) -> Option<u64> {
    match place::node_memory(&SysRoot::live(), node) {
        Ok(m) => Some(m.spare_bytes),
        Err(_) => topo
            .node(node)
            .map(|n| n.mem_free_bytes.saturating_sub(place::reserve_bytes(n.mem_total_bytes))),
    }
}

fn emit(obs: &dyn Observer, record: impl Into<results::Record>) {
    obs.event(Event::Record(record.into()));
}

/// Runs `f` on a thread pinned to `cpu` and returns its value.
pub(crate) fn on_cpu<T: Send>(
    cpu: u32,
    f: impl FnOnce() -> Result<T, LatError> + Send,
) -> Result<T, LatError> {
    std::thread::scope(|s| {
        s.spawn(move || {
            sys::pin_to_cpu(cpu)?;
            crate::test_panic("lat-thread");
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(LatError::Panicked("the measuring thread".into())))
    })
}

/// A mapping of the chase's buffer on a node, with its placement checked.
struct Arena {
    map: sys::Mapping,
    placement: Placement,
    page: String,
}

fn arena(size: u64, opts: &ChaseOpts, node: Option<u32>) -> Result<Arena, LatError> {
    let map = sys::Mapping::new(size as usize, opts.pages, node)?;
    let placement = match node {
        Some(n) => map.check_placement(n, 4096),
        None => Placement::unverified(),
    };
    let (page, _) = map.obtained();
    Ok(Arena { map, placement, page })
}

fn warn_placement(obs: &dyn Observer, p: &Placement) {
    if let (PlacementStatus::Mismatch, Some(c)) = (p.status, &p.check) {
        obs.event(Event::Warning(format!(
            "only {:.1}% of {} sampled pages are on node(s) {} (per node: {:?}); the result is flagged",
            c.fraction * 100.0,
            c.sampled_pages,
            c.expected,
            c.per_node
        )));
    }
}

/// One point: `opts.size_bytes` (default 1 GiB, capped by what the node can
/// spare) chased from one CPU to one node's memory.
pub fn point(
    topo: &Topology,
    w: &Where,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<LatResult, LatError> {
    let r = resolve(topo, w)?;
    let size = fit_size(
        topo,
        r.mem_node,
        opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES),
        opts.size_bytes.is_some(),
        opts.pages,
    )?;
    let phase = "lat point".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: 1 });
    let res = on_cpu(r.cpu, || {
        let mut a = arena(size, opts, r.mem_node)?;
        warn_placement(ctx.observer, &a.placement);
        let mut ring =
            Ring::build(a.map.as_mut_slice(), opts.stride_bytes, opts.group_elems(), opts.seed)?;
        let s = measure::measure_ring(&mut ring, &ctx.timing, ctx.stop).ok_or(LatError::Stopped)?;
        lat_result(Mode::Point, size, &r, &s, opts, &a.page, &a.placement).ok_or(LatError::Stopped)
    });
    ctx.observer.event(Event::PhaseEnd { phase });
    let res = res?;
    warn_unstable(ctx.observer, "lat point", std::slice::from_ref(&res));
    emit(ctx.observer, res.clone());
    Ok(res)
}

/// The nodes an interleaved chase spreads its memory over: those with
/// both memory and CPUs (a memory-only node, CXL or HBM, is left out);
/// with fewer than two, why there is nothing to interleave over.
pub fn interleave_nodes(topo: &Topology) -> Result<NodeSet, String> {
    let nodes: NodeSet = topo.memory_nodes().filter(|n| !n.cpus.is_empty()).map(|n| n.id).collect();
    match nodes.len() {
        0 => Err("no node has both memory and CPUs: nothing to interleave over".into()),
        1 => Err(format!(
            "only node {nodes} has both memory and CPUs: interleaving needs two or more"
        )),
        _ => Ok(nodes),
    }
}

/// One point chased from the first usable CPU through memory interleaved
/// page by page over [`interleave_nodes`] (`MPOL_INTERLEAVE` before the
/// first touch, as `bw interleave`): the latency a program gets under
/// `numactl --interleave`. The working set (default 1 GiB) is split evenly,
/// each node's share capped to what it can spare (as a default size is); the placement is checked with
/// `move_pages` as `bw` checks its interleaved arrays (every node's share
/// within 5 points of an even split), per-node counts kept.
pub fn interleaved_point(
    topo: &Topology,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<LatResult, LatError> {
    let nodes = interleave_nodes(topo).map_err(LatError::BadRequest)?;
    let r = resolve(topo, &Where::default())?;
    chase_interleaved(topo, r, &nodes, opts, ctx, Mode::Point, None)
}

/// A chase of `run`'s package-scope latency step: from the first usable
/// CPU of `package`, through memory interleaved over its own DRAM nodes
/// (`other` `None`) or over package `other`'s ([`crate::scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackageChase {
    pub package: u32,
    pub other: Option<u32>,
}

/// One [`PackageChase`], chased and placed as [`interleaved_point`] is
/// (the same sizing, the same `move_pages` spread check), reported as a
/// chase of mode `package` carrying its scope. Under NUMA off the own
/// memory is the one node the OS shows (`os-given`).
pub fn package_point(
    topo: &Topology,
    chase: &PackageChase,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<LatResult, LatError> {
    use results::scope::{MemoryOf, Scope, ScopePolicy};
    let all = crate::scope::packages(topo);
    let find = |id: u32| {
        all.iter()
            .find(|p| p.id == id)
            .ok_or_else(|| LatError::BadRequest(format!("package {id} has no online CPU")))
    };
    let pkg = find(chase.package)?;
    let (memory, mem_package, nodes, policy) = match chase.other {
        None => {
            let dram = crate::scope::own_dram(pkg).map_err(LatError::BadRequest)?;
            let policy = if pkg.numa_off { ScopePolicy::OsGiven } else { ScopePolicy::Interleave };
            (MemoryOf::OwnPackage, pkg.id, dram, policy)
        }
        Some(q) => {
            let dram = crate::scope::other_dram(pkg, find(q)?).map_err(LatError::BadRequest)?;
            (MemoryOf::OtherPackage, q, dram, ScopePolicy::Interleave)
        }
    };
    let cpu = usable_cpus(topo).intersection(&pkg.cpus).first().ok_or_else(|| {
        LatError::BadRequest(format!(
            "no CPU of package {} ({}) is allowed for this process",
            pkg.id, pkg.cpus
        ))
    })?;
    let r = resolve(topo, &Where { cpu: Some(cpu), ..Where::default() })?;
    let scope = Scope {
        package: pkg.id,
        memory,
        mem_package,
        policy,
        cpus: [cpu].into_iter().collect(),
        cpu_nodes: r.cpu_node.into_iter().collect(),
        mem_nodes: nodes.clone(),
    };
    chase_interleaved(topo, r, &nodes, opts, ctx, Mode::Package, Some(scope))
}

/// One chase from `r.cpu` through `opts.size_bytes` (default 1 GiB)
/// interleaved page by page over `nodes`, each node's share capped to
/// what it can spare; the pages checked as an interleave; reported with
/// `mode` and `scope`.
fn chase_interleaved(
    topo: &Topology,
    r: Resolved,
    nodes: &NodeSet,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
    mode: Mode,
    scope: Option<results::scope::Scope>,
) -> Result<LatResult, LatError> {
    if let Ok(mems) = place::mems_allowed() {
        let denied = nodes.difference(&mems);
        if !denied.is_empty() {
            return Err(LatError::BadRequest(format!(
                "node(s) {denied} are not allowed for this process's memory (allowed nodes: {mems})"
            )));
        }
    }
    let r = Resolved { mem_node: None, ..r };
    let n = nodes.len().max(1) as u64;
    let share = opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES).div_ceil(n).max(MIN_SIZE_BYTES);
    let mut fitted = u64::MAX;
    for node in nodes.iter() {
        let f = fit_size(topo, Some(node), share, false, opts.pages)?;
        fitted = fitted.min(f);
    }
    let size = fitted * n;
    let phase = match &scope {
        Some(s) => format!("lat package {} -> package {}", s.package, s.mem_package),
        None => "lat interleave".to_string(),
    };
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: 1 });
    let res = on_cpu(r.cpu, || {
        let mut map = sys::Mapping::interleaved(size as usize, opts.pages, nodes)?;
        let placement = map.check_interleave(nodes, 4096);
        warn_placement(ctx.observer, &placement);
        let (page, _) = map.obtained();
        let mut ring =
            Ring::build(map.as_mut_slice(), opts.stride_bytes, opts.group_elems(), opts.seed)?;
        let s = measure::measure_ring(&mut ring, &ctx.timing, ctx.stop).ok_or(LatError::Stopped)?;
        let res = lat_result(mode, size, &r, &s, opts, &page, &placement);
        res.map(|res| LatResult { interleave: Some(nodes.clone()), scope: scope.clone(), ..res })
            .ok_or(LatError::Stopped)
    });
    ctx.observer.event(Event::PhaseEnd { phase: phase.clone() });
    let res = res?;
    warn_unstable(ctx.observer, &phase, std::slice::from_ref(&res));
    emit(ctx.observer, res.clone());
    Ok(res)
}

/// One warning line when some of `results` were disturbed
/// ([`crate::disturb::Unstable`]).
fn warn_unstable(obs: &dyn Observer, what: &str, results: &[LatResult]) {
    let mut u = crate::disturb::Unstable::new();
    for r in results {
        u.note(r.stable, r.disturbance.as_ref());
    }
    u.warn(obs, what);
}

/// Working set of the prefetch check: 256 MiB or 4 x the LLC, whichever
/// is larger (far past the caches, a quarter of the default point's ring
/// to build).
pub fn prefetch_check_size(llc: Option<u64>) -> u64 {
    (256u64 << 20).max(llc.unwrap_or(0) * 4)
}

/// Rounds of the prefetch check: each chases both strides once, in turn.
pub const PREFETCH_CHECK_ROUNDS: usize = 3;

/// The prefetch check: two rings side by side on the same node, one with a
/// 64 B stride (neighbouring lines in the ring, so spatial prefetchers help)
/// and one with `opts.stride_bytes`, chased in turn for
/// [`PREFETCH_CHECK_ROUNDS`] rounds of `ctx.timing` each (so a burst of
/// interference hits both), judged on the medians of all their samples
/// against the robust noise of both. Emitted as a `lat-summary` of mode
/// `prefetch-check`.
pub fn prefetch_check(
    topo: &Topology,
    w: &Where,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<PrefetchCheck, LatError> {
    if opts.stride_bytes == CACHE_STRIDE_BYTES {
        return Err(LatError::BadRequest(format!(
            "the prefetch check compares stride {CACHE_STRIDE_BYTES} B with a longer stride; \
             the stride is {} B",
            opts.stride_bytes
        )));
    }
    let r = resolve(topo, w)?;
    let llc = topo.caches_of(r.cpu).last().map(|c| c.size_bytes);
    let want = prefetch_check_size(llc).min(opts.size_bytes.unwrap_or(u64::MAX));
    let page = sys::page_bytes(opts.pages) as u64;
    // one mapping, two rings of `half` each
    let total = fit_size(topo, r.mem_node, 2 * want.div_ceil(page) * page, false, opts.pages)?;
    let half = (total / 2 / page * page).max(page);
    let phase = "lat prefetch check".to_string();
    let steps = (2 * PREFETCH_CHECK_ROUNDS) as u64;
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: steps });
    let res = on_cpu(r.cpu, || {
        let mut a = arena(2 * half, opts, r.mem_node)?;
        warn_placement(ctx.observer, &a.placement);
        let (first, second) = a.map.as_mut_slice().split_at_mut(half as usize);
        let line = opts.with_stride(CACHE_STRIDE_BYTES);
        let mut rings = [
            Ring::build(first, CACHE_STRIDE_BYTES, line.group_elems(), opts.seed)?,
            Ring::build(second, opts.stride_bytes, opts.group_elems(), opts.seed)?,
        ];
        let mut samples: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut parts = Vec::new();
        let mut done = 0;
        for _ in 0..PREFETCH_CHECK_ROUNDS {
            for (k, ring) in rings.iter_mut().enumerate() {
                let s =
                    measure::measure_ring(ring, &ctx.timing, ctx.stop).ok_or(LatError::Stopped)?;
                parts.push((s.disturbance.clone(), s.stable()));
                samples[k].extend(s.ns_per_load);
                done += 1;
                ctx.observer.event(Event::Progress {
                    phase: phase.clone(),
                    done,
                    what: format!("stride {} B", ring.stride()),
                });
            }
        }
        let judged =
            |v: &[f64]| Summary::of(v).map(|s| (s.median, s.robust_cv_pct() / 100.0 * s.median));
        let (Some(l), Some(d)) = (judged(&samples[0]), judged(&samples[1])) else {
            return Err(LatError::Stopped);
        };
        let stable = parts.iter().all(|(_, s)| *s);
        let parts: Vec<_> = parts.into_iter().map(|(d, _)| d).collect();
        let check =
            PrefetchCheck::judge(r.cpu, r.mem_node, half, a.page.clone(), opts.stride_bytes, l, d);
        Ok(check.with_disturbance(crate::disturb::combine(&parts), stable))
    });
    ctx.observer.event(Event::PhaseEnd { phase });
    let res = res?;
    if !res.stable {
        ctx.observer.event(Event::Warning(format!("lat prefetch check: {}", res.note)));
    }
    emit(ctx.observer, LatSummary::PrefetchCheck(res.clone()));
    Ok(res)
}

/// Idle latency from every CPU node (its first usable CPU) to every memory
/// node, memory-only nodes included. Returns what was measured (partial
/// when stopped).
pub fn matrix(
    topo: &Topology,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<Vec<LatResult>, LatError> {
    let usable = usable_cpus(topo);
    let cpu_nodes: Vec<(u32, u32)> = topo
        .cpu_nodes()
        .filter_map(|n| n.cpus.intersection(&usable).first().map(|c| (n.id, c)))
        .collect();
    let mem_nodes: Vec<u32> = topo.memory_nodes().map(|n| n.id).collect();
    let (cpu_nodes, mem_nodes) = if cpu_nodes.is_empty() || mem_nodes.is_empty() {
        // no NUMA information: one cell, local
        let r = resolve(topo, &Where::default())?;
        (vec![(r.cpu_node.unwrap_or(0), r.cpu)], r.mem_node.into_iter().collect::<Vec<_>>())
    } else {
        (cpu_nodes, mem_nodes)
    };
    // validate every node's size before allocating anything
    let want = opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
    let mut sizes = Vec::new();
    for &m in &mem_nodes {
        sizes.push(fit_size(topo, Some(m), want, opts.size_bytes.is_some(), opts.pages)?);
    }
    if mem_nodes.is_empty() {
        sizes.push(fit_size(topo, None, want, opts.size_bytes.is_some(), opts.pages)?);
    }
    let phase = "lat matrix".to_string();
    let total = (cpu_nodes.len() * mem_nodes.len().max(1)) as u64;
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total });
    let mut out = Vec::new();
    let mems: Vec<Option<u32>> = if mem_nodes.is_empty() {
        vec![None]
    } else {
        mem_nodes.iter().map(|&m| Some(m)).collect()
    };
    'outer: for (mi, &m) in mems.iter().enumerate() {
        let size = sizes[mi];
        // fault the pages from a CPU of the memory node when it has one
        let home =
            m.and_then(|m| cpu_nodes.iter().find(|(n, _)| *n == m)).map_or(cpu_nodes[0].1, |x| x.1);
        let mut a = on_cpu(home, || arena(size, opts, m))?;
        warn_placement(ctx.observer, &a.placement);
        let mut ring =
            Ring::build(a.map.as_mut_slice(), opts.stride_bytes, opts.group_elems(), opts.seed)?;
        for &(cn, cpu) in &cpu_nodes {
            if ctx.stop.is_stopped() {
                break 'outer;
            }
            let r = Resolved { cpu, cpu_node: Some(cn), mem_node: m };
            let ring_ref = &mut ring;
            let s = on_cpu(cpu, || Ok(measure::measure_ring(ring_ref, &ctx.timing, ctx.stop)))?;
            let Some(s) = s else { break 'outer };
            if let Some(res) = lat_result(Mode::Matrix, size, &r, &s, opts, &a.page, &a.placement) {
                emit(ctx.observer, res.clone());
                out.push(res);
            }
            ctx.observer.event(Event::Progress {
                phase: phase.clone(),
                done: out.len() as u64,
                what: format!("node {cn} -> node {}", m.map_or("-".into(), |m| m.to_string())),
            });
        }
    }
    ctx.observer.event(Event::PhaseEnd { phase });
    warn_unstable(ctx.observer, "lat matrix", &out);
    Ok(out)
}

/// Latency against working-set size, with the cache levels and plateaus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    pub mode: Mode,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub results: Vec<LatResult>,
    pub caches: Vec<CacheMark>,
    pub plateaus: Vec<Plateau>,
}

/// The sweep's largest size by default: four times the last-level cache
/// rounded up to a power of two, at least 64 MiB.
pub fn default_sweep_max(llc: Option<u64>) -> u64 {
    (llc.unwrap_or(32 << 20) * 4).next_power_of_two().max(64 << 20)
}

/// The share of a node's spare memory a default sweep may take: the run
/// holds other buffers (bandwidth arrays, the loaded-latency threads'),
/// and a sized-by-default sweep must leave the node room for them.
pub const SWEEP_SPARE_DIVISOR: u64 = 4;

/// How many points past the last-level cache must agree before the sweep
/// stops early ([`settled_past`]).
pub const SETTLED_POINTS: usize = 3;

/// Whether a default sweep has measured what it is for and can stop
/// before its largest size: its last [`SETTLED_POINTS`] points are all
/// past the last-level cache `llc` (chased at the DRAM stride, so no
/// cache serves them) and their medians agree within three robust CVs of
/// the noisiest (at least 5%). Sizing from the cache the topology reports
/// alone would chase four times a virtual machine's host-wide L3 (a
/// 480 MiB L3 seen by 2 vCPUs: a 2 GiB ring); the sweep stops where the
/// latency it measures has settled instead. `points`: `(size, median ns,
/// noise %)` in the order measured.
pub fn settled_past(points: &[(u64, f64, f64)], llc: u64) -> bool {
    if points.len() < SETTLED_POINTS {
        return false;
    }
    let last = &points[points.len() - SETTLED_POINTS..];
    if last.iter().any(|(size, ns, _)| *size <= llc || !(ns.is_finite() && *ns > 0.0)) {
        return false;
    }
    let lo = last.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let hi = last.iter().map(|p| p.1).fold(0.0, f64::max);
    let noise = last.iter().map(|p| if p.2.is_finite() { p.2 } else { 0.0 }).fold(0.0, f64::max);
    (hi / lo - 1.0) * 100.0 <= (3.0 * noise).max(5.0)
}

/// Latency from 4 KiB to `opts.size_bytes` (default [`default_sweep_max`])
/// in log steps, on one CPU and node.
pub fn sweep(
    topo: &Topology,
    w: &Where,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<SweepReport, LatError> {
    let r = resolve(topo, w)?;
    let caches: Vec<CacheMark> = topo
        .caches_of(r.cpu)
        .iter()
        .map(|c| CacheMark { level: c.level, size_bytes: c.size_bytes })
        .collect();
    let explicit = opts.size_bytes.is_some();
    let max =
        opts.size_bytes.unwrap_or_else(|| default_sweep_max(caches.last().map(|c| c.size_bytes)));
    let mut max = fit_size(topo, r.mem_node, max, explicit, opts.pages)?;
    if !explicit {
        // A default sweep takes at most a share of what the node can spare.
        if let Some(spare) = r.mem_node.and_then(|n| node_spare_bytes(topo, n)) {
            let page = sys::page_bytes(opts.pages) as u64;
            let share = (spare / SWEEP_SPARE_DIVISOR) / page * page;
            if share >= MIN_SIZE_BYTES.max(64 << 20) {
                max = max.min(share);
            }
        }
    }
    let min = (4096u64).max(2 * opts.cache_stride_bytes.max(opts.stride_bytes) as u64);
    let sizes = plateau::sweep_sizes(min, max);
    // one line per element while the ring fits in the LLC (every cache set
    // used), the DRAM stride past it (no prefetch help)
    let llc = caches.last().map_or(0, |c| c.size_bytes);
    let layout = |size: u64| {
        let stride = if size <= llc { opts.cache_stride_bytes } else { opts.stride_bytes };
        opts.with_stride(stride)
    };
    let phase = "lat sweep".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: sizes.len() as u64 });
    let points = on_cpu(r.cpu, || {
        let mut a = arena(max, opts, r.mem_node)?;
        warn_placement(ctx.observer, &a.placement);
        let mut out = Vec::new();
        for (i, &size) in sizes.iter().enumerate() {
            if ctx.stop.is_stopped() {
                break;
            }
            let buf = &mut a.map.as_mut_slice()[..size as usize];
            let o = layout(size);
            let mut ring = Ring::build(buf, o.stride_bytes, o.group_elems(), o.seed ^ size)?;
            let Some(s) = measure::measure_ring(&mut ring, &ctx.timing, ctx.stop) else { break };
            if let Some(res) = lat_result(Mode::Sweep, size, &r, &s, &o, &a.page, &a.placement) {
                emit(ctx.observer, res.clone());
                out.push(res);
            }
            ctx.observer.event(Event::Progress {
                phase: phase.clone(),
                done: i as u64 + 1,
                what: binary_size(size),
            });
            let seen: Vec<(u64, f64, f64)> =
                out.iter().map(|p| (p.size_bytes, p.median_ns, p.noise_pct)).collect();
            if !explicit && settled_past(&seen, llc) {
                ctx.observer.event(Event::Progress {
                    phase: phase.clone(),
                    done: sizes.len() as u64,
                    what: format!(
                        "settled past the {} cache at {}",
                        binary_size(llc),
                        binary_size(size)
                    ),
                });
                break;
            }
        }
        Ok(out)
    });
    ctx.observer.event(Event::PhaseEnd { phase });
    let points = points?;
    warn_unstable(ctx.observer, "lat sweep", &points);
    // Plateaus from each point's fastest sample: interference (preemption,
    // other tenants) only adds time, so the minimum of samples of 100k+
    // loads shows the cache level best on a busy machine.
    let curve: Vec<(u64, f64)> = points.iter().map(|p| (p.size_bytes, p.min_ns)).collect();
    let levels: Vec<(u8, u64)> = caches.iter().map(|c| (c.level, c.size_bytes)).collect();
    let report = SweepReport {
        mode: Mode::Sweep,
        cpu: r.cpu,
        mem_node: r.mem_node,
        plateaus: plateau::plateaus(&curve, &levels),
        caches,
        results: points,
    };
    emit(ctx.observer, report_summary(&report));
    Ok(report)
}

fn report_summary(r: &SweepReport) -> LatSummary {
    LatSummary::Sweep(SweepSummary {
        mode: Mode::Sweep,
        cpu: r.cpu,
        mem_node: r.mem_node,
        caches: r.caches.clone(),
        plateaus: r.plateaus.clone(),
    })
}

/// What to measure in `per_cpu`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PerCpuSpec {
    pub mem_node: Option<u32>,
    /// At most this many CPUs, spread evenly over the usable ones.
    pub max_cpus: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuReport {
    pub mode: Mode,
    pub mem_node: Option<u32>,
    pub results: Vec<LatResult>,
    pub groups: Vec<CpuGroup>,
    /// Noise used to cluster: median robust standard deviation, ns.
    pub noise_ns: f64,
    /// Nodes with CPUs the OS shows.
    pub os_cpu_nodes: usize,
    /// The OS shows one node but CPUs form separated latency groups.
    pub hidden_numa: bool,
    pub note: Option<String>,
}

/// Evenly spaced sample of `n` items out of `v` (all when `n >= len`).
pub fn spread_sample<T: Copy>(v: &[T], n: usize) -> Vec<T> {
    if n == 0 || v.len() <= n {
        return v.to_vec();
    }
    (0..n).map(|i| v[i * v.len() / n]).collect()
}

/// Latency from every usable CPU (or an even sample) to one node, and the
/// CPUs grouped by it.
pub fn per_cpu(
    topo: &Topology,
    spec: &PerCpuSpec,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<PerCpuReport, LatError> {
    let first = resolve(topo, &Where { mem_node: spec.mem_node, ..Where::default() })?;
    let usable: Vec<u32> = usable_cpus(topo).iter().collect();
    let cpus = spread_sample(&usable, spec.max_cpus);
    let size = fit_size(
        topo,
        first.mem_node,
        opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES),
        opts.size_bytes.is_some(),
        opts.pages,
    )?;
    let phase = "lat per-cpu".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: cpus.len() as u64 });
    let mut a = on_cpu(first.cpu, || arena(size, opts, first.mem_node))?;
    warn_placement(ctx.observer, &a.placement);
    let mut ring =
        Ring::build(a.map.as_mut_slice(), opts.stride_bytes, opts.group_elems(), opts.seed)?;
    let mut points = Vec::new();
    for (i, &cpu) in cpus.iter().enumerate() {
        if ctx.stop.is_stopped() {
            break;
        }
        let r = Resolved { cpu, cpu_node: cpu_node_of(topo, cpu), mem_node: first.mem_node };
        let ring_ref = &mut ring;
        let Some(s) = on_cpu(cpu, || Ok(measure::measure_ring(ring_ref, &ctx.timing, ctx.stop)))?
        else {
            break;
        };
        if let Some(res) = lat_result(Mode::PerCpu, size, &r, &s, opts, &a.page, &a.placement) {
            emit(ctx.observer, res.clone());
            points.push(res);
        }
        ctx.observer.event(Event::Progress {
            phase: phase.clone(),
            done: i as u64 + 1,
            what: format!("CPU {cpu}"),
        });
    }
    ctx.observer.event(Event::PhaseEnd { phase });
    warn_unstable(ctx.observer, "lat per-cpu", &points);
    let report = group_cpus(topo, first.mem_node, points);
    emit(
        ctx.observer,
        LatSummary::PerCpu(PerCpuSummary {
            mode: Mode::PerCpu,
            mem_node: report.mem_node,
            groups: report.groups.clone(),
            hidden_numa: report.hidden_numa,
            note: report.note.clone(),
        }),
    );
    Ok(report)
}

/// Clusters per-CPU results and says whether they reveal hidden NUMA.
pub fn group_cpus(topo: &Topology, mem_node: Option<u32>, points: Vec<LatResult>) -> PerCpuReport {
    let values: Vec<f64> = points.iter().map(|p| p.median_ns).collect();
    let mut sds: Vec<f64> = points.iter().map(|p| p.noise_pct / 100.0 * p.median_ns).collect();
    sds.sort_by(|a, b| a.total_cmp(b));
    let noise = if sds.is_empty() { 0.0 } else { results::stats::percentile_sorted(&sds, 50.0) };
    let groups: Vec<CpuGroup> = cluster::cluster(&values, noise)
        .into_iter()
        .map(|g| CpuGroup {
            cpus: g.members.iter().map(|&i| points[i].cpu).collect(),
            os_nodes: g.members.iter().filter_map(|&i| points[i].cpu_node).collect(),
            median_ns: g.median_ns,
            min_ns: g.min_ns,
            max_ns: g.max_ns,
        })
        .collect();
    let os_cpu_nodes = topo.cpu_nodes().count();
    // Hidden NUMA only on evidence, by the rule every reader applies again
    // to the stored run (`results::hidden`).
    let below_os = results::hidden::numa_below_the_os(
        topo.packages.len() as u64,
        topo.firmware_numa.as_ref().and_then(|f| f.local_domains()).map(|n| n as u64),
    );
    let hidden_numa =
        results::hidden::hides_numa(os_cpu_nodes, below_os, groups.iter().map(|g| g.cpus.len()))
            .is_some();
    let note = if hidden_numa {
        Some(format!(
            "the OS shows {} node(s) with CPUs, but the CPUs fall into {} latency groups ({}): NUMA is probably \
             hidden by numa=off or firmware interleaving",
            os_cpu_nodes,
            groups.len(),
            groups.iter().map(|g| format!("{:.0} ns", g.median_ns)).collect::<Vec<_>>().join(" / ")
        ))
    } else if groups.len() > os_cpu_nodes.max(1) {
        Some(format!(
            "{} latency groups for {} OS node(s) with CPUs: nodes are not uniform inside",
            groups.len(),
            os_cpu_nodes
        ))
    } else {
        None
    };
    PerCpuReport {
        mode: Mode::PerCpu,
        mem_node,
        results: points,
        groups,
        noise_ns: noise,
        os_cpu_nodes,
        hidden_numa,
        note,
    }
}

/// Default per-point timing for a budget in seconds over `points`.
pub fn timing_for(budget: Option<Duration>, points: usize) -> Timing {
    budget.map_or_else(Timing::default, |b| Timing::for_budget(b, points))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep stops once three points past the last-level cache agree:
    /// a VM's 480 MiB host L3 no longer sends it to 2 GiB when DRAM
    /// latency settled at 512 MiB.
    #[test]
    fn the_sweep_stops_once_latency_settles_past_the_llc() {
        let llc = 480 << 20;
        let mib = |m: u64| m << 20;
        // flat DRAM latency past the LLC: stop at the third such point
        let flat = [(mib(256), 40.0, 1.0), (mib(512), 130.0, 1.0), (mib(768), 132.0, 1.0)];
        assert!(!settled_past(&flat[..2], llc), "too few points");
        assert!(!settled_past(&flat, llc), "256 MiB is inside the LLC");
        let past = [(mib(512), 130.0, 1.0), (mib(768), 132.0, 1.0), (mib(1024), 131.0, 1.0)];
        assert!(settled_past(&past, llc));
        // still rising (a cache the topology does not report): go on
        let rising = [(mib(512), 100.0, 1.0), (mib(768), 115.0, 1.0), (mib(1024), 130.0, 1.0)];
        assert!(!settled_past(&rising, llc));
        // noisy points agree within their noise
        let noisy = [(mib(512), 120.0, 6.0), (mib(768), 102.0, 6.0), (mib(1024), 110.0, 6.0)];
        assert!(settled_past(&noisy, llc));
    }

    /// A panic in the measuring thread is numaprobe's bug (exit 1 with a
    /// request for a report), never a usage error (exit 2).
    #[test]
    fn a_panicking_measuring_thread_is_a_bug_not_a_usage_error() {
        let cpu = place::current_cpu().unwrap();
        let e = on_cpu::<()>(cpu, || panic!("deliberate test panic")).unwrap_err();
        assert!(matches!(e, LatError::Panicked(_)), "{e:?}");
        assert!(!e.is_usage());
        assert!(e.to_string().contains("please report"), "{e}");
    }

    /// A per-CPU point as the store reads it.
    fn point_of(cpu: u32, ns: f64) -> LatResult {
        let v = serde_json::json!({"mode": "per-cpu", "cpu": cpu, "cpu_node": 0, "mem_node": 0,
                                   "median_ns": ns, "noise_pct": 0.5});
        match results::upgrade::read("lat", &v).record {
            results::Record::Lat(l) => match *l {
                results::lat::Lat::Chase(c) => c,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn hidden_numa_needs_numa_below_the_os_and_groups_of_two_cpus() {
        use topo::synthetic::Machine;
        use topo::Vendor;
        let one_pkg =
            Machine::new(Vendor::Amd, "EPYC").package(0, "0-3").node(0, "0-3", 8 << 30).build();
        let two_pkg = Machine::new(Vendor::Amd, "EPYC")
            .package(0, "0-1")
            .package(1, "2-3")
            .node(0, "0-3", 8 << 30)
            .build();
        let split =
            || vec![point_of(0, 67.0), point_of(1, 67.2), point_of(2, 100.0), point_of(3, 100.3)];
        // Two packages behind one OS node, two groups of 2 CPUs: hidden.
        assert!(group_cpus(&two_pkg, Some(0), split()).hidden_numa);
        // One package and no firmware NUMA: the same split is no evidence.
        assert!(!group_cpus(&one_pkg, Some(0), split()).hidden_numa);
        // Two single-CPU groups (one noisy CPU of two): no evidence either.
        let two = vec![point_of(0, 317.0), point_of(2, 357.0)];
        let r = group_cpus(&two_pkg, Some(0), two);
        assert_eq!(r.groups.len(), 2);
        assert!(!r.hidden_numa);
    }

    /// The chase's buffer (and the loaded latency's load buffers, made
    /// the same way) carries `MPOL_BIND` to the node it claims: on one
    /// node the pages land on node 0 whatever the policy, so the policy
    /// itself is read back (`get_mempolicy(MPOL_F_ADDR)`), at both ends.
    #[test]
    fn the_chase_buffer_is_bound_to_its_memory_node() {
        let node0 = place::MemPolicy::Bind(NodeSet::from_iter([0]));
        for pages in [PageKind::NoThp, PageKind::Thp] {
            let opts = ChaseOpts { pages, ..ChaseOpts::default() };
            let mut a = arena(4 << 20, &opts, Some(0)).unwrap();
            let len = a.map.len();
            let p = a.map.as_mut_ptr();
            for at in [p as *const u8, p.wrapping_add(len - 1)] {
                assert_eq!(place::policy_at(at).unwrap(), node0, "{pages:?}");
            }
            assert_eq!(a.placement.status, PlacementStatus::Verified, "{pages:?}");
            let c = a.placement.check.as_ref().unwrap();
            assert_eq!((c.fraction, c.expected.clone()), (1.0, NodeSet::from_iter([0])));
        }
        // no node (a machine without NUMA information): no policy, unverified
        let mut a = arena(1 << 20, &ChaseOpts::default(), None).unwrap();
        assert_eq!(place::policy_at(a.map.as_mut_ptr()).unwrap(), place::MemPolicy::Default);
        assert_eq!(a.placement.status, PlacementStatus::Unverified);
    }

    /// The interleaved chase's buffer carries `MPOL_INTERLEAVE` over the
    /// nodes asked (read back at both ends) and its pages are judged as
    /// an interleave, with per-node counts; on this one-node machine the
    /// chase itself is refused with its reason before allocating.
    #[test]
    fn the_interleaved_chase_interleaves_and_needs_two_nodes() {
        let nodes = NodeSet::from_iter([0]);
        let mut m = sys::Mapping::interleaved(4 << 20, PageKind::NoThp, &nodes).unwrap();
        let len = m.len();
        let p = m.as_mut_ptr();
        for at in [p as *const u8, p.wrapping_add(len - 1)] {
            assert_eq!(place::policy_at(at).unwrap(), place::MemPolicy::Interleave(nodes.clone()));
        }
        let pl = m.check_interleave(&nodes, 4096);
        assert_eq!(pl.status, PlacementStatus::Verified);
        let c = pl.check.unwrap();
        assert_eq!(c.per_node.keys().copied().collect::<Vec<_>>(), [0]);
        assert_eq!(c.sampled_pages, (4 << 20) / place::base_page_size() as u64);

        use topo::synthetic::Machine;
        let one =
            Machine::new(topo::Vendor::Amd, "EPYC").package(0, "0-1").node(0, "0-1", 16 << 30);
        let (stop, log) = (StopFlag::new(), events::Silent);
        let ctx = Ctx { observer: &log, stop: &stop, timing: Timing::quick() };
        let e = interleaved_point(&one.build(), &ChaseOpts::default(), &ctx).unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "only node 0 has both memory and CPUs: interleaving needs two or more"
        );
    }

    #[test]
    fn bytes_format_in_binary_units() {
        assert_eq!(binary_size(48 * 1024), "48 KiB");
        assert_eq!(binary_size(3 << 19), "1.5 MiB");
        assert_eq!(binary_size(1 << 30), "1 GiB");
    }

    #[test]
    fn samples_spread_over_the_list() {
        let v: Vec<u32> = (0..100).collect();
        assert_eq!(spread_sample(&v, 4), vec![0, 25, 50, 75]);
        assert_eq!(spread_sample(&v[..3], 4), vec![0, 1, 2]);
    }

    #[test]
    fn sweep_max_is_well_past_the_llc() {
        assert_eq!(default_sweep_max(Some(105 << 20)), 512 << 20);
        assert_eq!(default_sweep_max(Some(1 << 20)), 64 << 20);
    }

    #[test]
    fn page_kinds_keep_the_latency_names_and_sizes() {
        assert_eq!(ChaseOpts::default().pages, PageKind::NoThp, "4k: THP refused");
        let base = place::base_page_size();
        for (k, name, bytes) in [
            (PageKind::NoThp, "4k", base),
            (PageKind::Thp, "thp", 2 << 20),
            (PageKind::Huge2M, "2m", 2 << 20),
            (PageKind::Huge1G, "1g", 1 << 30),
        ] {
            assert_eq!((sys::asked_name(k), sys::page_bytes(k)), (name, bytes), "{k:?}");
        }
    }
}
