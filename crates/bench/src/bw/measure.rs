//! Measuring one case: allocate and place the arrays, first-touch them from
//! the pinned team, verify where the pages landed, then run each kernel
//! until its figure is stable, validating the arrays after each kernel.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kernels::{Arrays, Expected, Kernel, Ops, Stores};
use place::{Buffer, MemPolicy, PageNodes};
use results::pages::PageKind;
use results::placement::{Placement, PlacementCheck};
use topo::{NodeSet, Topology};

use super::plan::{BwPlan, Case, CaseMemory, RepPolicy, StoreMode};
use super::BwError;
use crate::disturb::{self, SampleCheck, Tally, ThreadClock};
use crate::team::{self, Padded};
use events::{Event, Observer, StopFlag};
use results::bw::BwResult;
use results::stats::{top_k_spread_pct, Summary};

const RUN: u8 = 0;
const STOP: u8 = 1;
const ABORT: u8 = 2;
/// Pages sampled per array for the placement check.
const SAMPLES_PER_ARRAY: usize = 4096;
/// Largest deviation of a node's share from its interleave share.
/// (The interleaved latency chase judges its pages by it too.)
pub(crate) const SPREAD_TOLERANCE: f64 = 0.05;

/// Base pointers of the four arrays (null when not allocated).
struct Bases([*mut f64; 4]);
// SAFETY: the pointers are only turned into slices over disjoint per-worker
// chunks while the buffers they point into are alive (see `run_case`).
unsafe impl Sync for Bases {}
// SAFETY: as above.
unsafe impl Send for Bases {}

/// What the team shares while measuring one case.
struct Shared {
    epoch: Instant,
    starts: Vec<Padded<AtomicU64>>,
    ends: Vec<Padded<AtomicU64>>,
    control: Padded<AtomicU8>,
    error: Mutex<Option<BwError>>,
    results: Mutex<Vec<BwResult>>,
    /// Each worker's counts of the kernel just measured (`--counters`).
    counts: Mutex<Vec<Option<results::counters::Counters>>>,
    /// Memory-controller counters (`--counters`), or why there are none.
    uncore: Mutex<Option<Result<counters::uncore::Uncore, String>>>,
    /// Energy (RAPL) and frequency of the team's CPUs over each kernel's
    /// timed repetitions, read by the leader.
    power: counters::power::Meter,
    /// Each worker's scheduling over the repetition just timed.
    checks: Mutex<Vec<SampleCheck>>,
}

impl Shared {
    fn fail(&self, e: BwError) {
        let mut g = self.error.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert(e);
    }
    fn failed(&self) -> bool {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
    /// The team's results once it is done, or the first error.
    fn into_results(self) -> Result<Vec<BwResult>, BwError> {
        if let Some(e) = self.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        Ok(self.results.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

/// The store mode a plan resolves to with `ops`.
pub(super) fn resolve_stores(mode: StoreMode, ops: &dyn Ops) -> Stores {
    match mode {
        StoreMode::Nt => Stores::NonTemporal,
        StoreMode::Regular => Stores::Regular,
        StoreMode::Auto if ops.has_nt() => Stores::NonTemporal,
        StoreMode::Auto => Stores::Regular,
    }
}

fn describe(case: &Case) -> String {
    let cpus: topo::CpuSet = case.cpus.iter().copied().collect();
    format!(
        "{} {} thread(s) on CPUs {} -> {} {}",
        case.mode,
        case.cpus.len(),
        cpus,
        case.memory.policy_name(),
        case.mem_nodes
    )
}

/// Places the (untouched) buffers as the case asks.
fn place_buffers(case: &Case, bufs: &[Option<Buffer>; 4]) -> Result<(), BwError> {
    let chunk_bytes = case.sizing.chunk_elems * 8;
    for buf in bufs.iter().flatten() {
        match &case.memory {
            CaseMemory::Bind(m) => buf.bind(&MemPolicy::Bind([*m].into_iter().collect()))?,
            CaseMemory::Interleave(set) => buf.bind(&MemPolicy::Interleave(set.clone()))?,
            CaseMemory::Weighted(set, _) => {
                buf.bind(&MemPolicy::WeightedInterleave(set.clone()))?
            }
            CaseMemory::LocalPerThread => {
                for (i, node) in case.cpu_nodes_of.iter().enumerate() {
                    let policy = match node {
                        Some(n) if case.mem_nodes.contains(*n) => {
                            MemPolicy::Bind([*n].into_iter().collect())
                        }
                        _ => MemPolicy::Local,
                    };
                    // SAFETY: the range is the i-th chunk of a buffer this
                    // function's caller owns; chunks are whole pages.
                    unsafe {
                        place::bind_range(
                            (buf.as_ptr() as *mut u8).add(i * chunk_bytes),
                            chunk_bytes,
                            &policy,
                            place::Existing::Leave,
                        )?
                    };
                }
            }
        }
    }
    Ok(())
}

/// The case's arrays, allocated and placed (untouched: the team's first
/// touch puts the pages where the policy says), and whether they were left
/// unbound: a kernel without NUMA system calls ([`place::PlaceError::no_numa_api`])
/// on a machine with one memory node, where the pages can only land on
/// that node; anywhere else that is an error.
fn alloc_placed(
    topo: &Topology,
    case: &Case,
    pages: PageKind,
) -> Result<([Option<Buffer>; 4], bool), BwError> {
    let mut bufs: [Option<Buffer>; 4] = [None, None, None, None];
    for (i, used) in case.arrays.iter().enumerate() {
        if *used {
            bufs[i] = Some(Buffer::alloc(case.sizing.array_bytes as usize, pages)?);
        }
    }
    match place_buffers(case, &bufs) {
        Ok(()) => Ok((bufs, false)),
        Err(BwError::Place(e)) if e.no_numa_api() && topo.memory_nodes().count() == 1 => {
            Ok((bufs, true))
        }
        Err(e) => Err(e),
    }
}

/// Bytes one repetition of `kernel` moves over the case: STREAM's count
/// per element ([`Kernel::bytes_per_element`]) times every thread's
/// chunk.
pub(super) fn bytes_per_rep(kernel: Kernel, case: &Case) -> u64 {
    kernel.bytes_per_element() * (case.sizing.chunk_elems * case.cpus.len()) as u64
}

/// GB/s (10^9 bytes per second) of `bytes` moved in `secs` seconds.
pub(super) fn gbs(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs / 1e9
}

/// A repetition of the team, in seconds: from the first thread's start to
/// the last one's end (ns on the case's clock), never under 1 ns.
fn rep_seconds(starts: &[u64], ends: &[u64]) -> f64 {
    let start = starts.iter().copied().min().unwrap_or(0);
    let end = ends.iter().copied().max().unwrap_or(0);
    (end.saturating_sub(start) as f64 / 1e9).max(1e-9)
}

/// One kernel's repetitions as the leader keeps them: the clean ones'
/// times make the figure; those the disturbance rule dropped
/// ([`crate::disturb`]) are set aside, and used only when none was clean.
#[derive(Debug, Default)]
struct Reps {
    kept: Vec<f64>,
    dropped: Vec<f64>,
    tally: Tally,
}

impl Reps {
    /// Adds a repetition of `secs` with each thread's check; true when kept.
    fn add(&mut self, secs: f64, checks: &[SampleCheck]) -> bool {
        let clean = self.tally.add(checks);
        if clean {
            self.kept.push(secs);
        } else {
            self.dropped.push(secs);
        }
        clean
    }

    /// GB/s of the kept repetitions, `bytes` each.
    fn gbs(&self, bytes: u64) -> Vec<f64> {
        self.kept.iter().map(|&t| gbs(bytes, t)).collect()
    }

    /// Repetitions so far, dropped ones included.
    fn all(&self) -> usize {
        self.tally.samples()
    }

    /// The times the figure is made of: the kept ones, or every one when
    /// none was clean (the figure is then marked unstable).
    fn figure_times(&mut self) -> Vec<f64> {
        if self.kept.is_empty() {
            std::mem::take(&mut self.dropped)
        } else {
            std::mem::take(&mut self.kept)
        }
    }
}

/// Asks the kernel where each chunk's pages are and judges the placement.
fn verify(case: &Case, bases: &Bases) -> Result<PlacementCheck, BwError> {
    let chunk_bytes = case.sizing.chunk_elems * 8;
    let threads = case.cpus.len();
    let per_chunk = (SAMPLES_PER_ARRAY / threads).max(16);
    let mut merged = PageNodes::default();
    let (mut on, mut judged) = (0u64, 0u64);
    for base in bases.0.iter().filter(|p| !p.is_null()) {
        for i in 0..threads {
            let p = (*base as *const u8).wrapping_add(i * chunk_bytes);
            let pn = place::page_nodes(p, chunk_bytes, per_chunk)?;
            let expected: Option<NodeSet> = match &case.memory {
                CaseMemory::LocalPerThread => match case.cpu_nodes_of[i] {
                    Some(n) if case.mem_nodes.contains(n) => Some([n].into_iter().collect()),
                    _ => None,
                },
                _ => Some(case.mem_nodes.clone()),
            };
            if let Some(e) = expected {
                on += (pn.fraction_on(&e) * pn.sampled_pages as f64).round() as u64;
                judged += pn.sampled_pages;
            }
            merged.total_pages += pn.total_pages;
            merged.sampled_pages += pn.sampled_pages;
            merged.not_present += pn.not_present;
            merged.faulted += pn.faulted;
            for (n, c) in pn.per_node {
                *merged.per_node.entry(n).or_insert(0) += c;
            }
            for (e, c) in pn.other_errors {
                *merged.other_errors.entry(e).or_insert(0) += c;
            }
        }
    }
    let t = place::DEFAULT_THRESHOLD;
    Ok(match &case.memory {
        CaseMemory::Interleave(set) => place::check_interleave(&merged, set, t, SPREAD_TOLERANCE),
        CaseMemory::Weighted(_, w) => place::check_spread(&merged, w, t, SPREAD_TOLERANCE),
        CaseMemory::Bind(_) => place::check(&merged, &case.mem_nodes, t),
        CaseMemory::LocalPerThread => {
            let mut c = place::check(&merged, &case.mem_nodes, t);
            c.fraction = if judged == 0 { 1.0 } else { on as f64 / judged as f64 };
            c.ok = merged.sampled_pages > 0 && c.fraction >= t;
            c
        }
    })
}

/// Whether the best `top_k` of the figures so far (GB/s, one per timed
/// repetition) agree within the target after at least `min_reps`.
fn settled(r: &RepPolicy, gbs: &[f64]) -> bool {
    let k = r.top_k.max(1);
    gbs.len() >= r.min_reps.max(k)
        && top_k_spread_pct(gbs, k, true).is_some_and(|s| s <= r.target_spread_pct)
}

/// The stopping rule of one kernel's repetitions: stop once the clean
/// ones (`gbs`) settled ([`settled`]), at `max_reps` repetitions in all
/// (`reps`, disturbed ones included), or when the budget is spent (after
/// at least two clean repetitions, so a figure has a spread, or
/// `min_reps` in all when they were disturbed).
fn enough(r: &RepPolicy, gbs: &[f64], reps: usize, elapsed: Duration) -> bool {
    settled(r, gbs)
        || reps >= r.max_reps.max(1)
        || (elapsed >= r.budget && (gbs.len() >= 2 || reps >= r.min_reps.max(2)))
}

/// Measures every kernel of the plan on one case; reports each result as
/// soon as it is validated.
pub(super) fn run_case(
    topo: &Topology,
    plan: &BwPlan,
    case: &Case,
    ops: &'static dyn Ops,
    obs: &dyn Observer,
    stop: &StopFlag,
    done: &mut u64,
) -> Result<Vec<BwResult>, BwError> {
    let chunk = case.sizing.chunk_elems;
    let (mut bufs, unbound) = alloc_case(topo, case, plan.pages, obs)?;
    let bases = bases_of(&mut bufs);
    let stores = resolve_stores(plan.stores, ops);
    let what = describe(case);
    let shared = shared_for(case);
    let done_at_start = *done;
    let run = CaseRun {
        plan,
        case,
        ops,
        stores,
        obs,
        stop,
        unbound,
        what: &what,
        done_at_start,
        shared: &shared,
    };
    team::run(&case.cpus, |w| {
        let i = w.index();
        let slice = |k: usize| -> &mut [f64] {
            let p = bases.0[k];
            if p.is_null() {
                &mut []
            } else {
                // SAFETY: worker i owns elements [i*chunk, (i+1)*chunk) of
                // each buffer, which hold `chunk * threads` elements; the
                // buffers outlive the team (dropped after `team::run`).
                unsafe { std::slice::from_raw_parts_mut(p.add(i * chunk), chunk) }
            }
        };
        let mut arr = Arrays { a: slice(0), b: slice(1), c: slice(2), d: slice(3) };
        // This worker's own counters (`--counters`), enabled around each
        // kernel's timed repetitions.
        let mut events = crate::counting::requested()
            .then(|| counters::EventSet::open(counters::Target::ThisThread, "team thread"));
        // This worker's run delay, switches and CPU around each repetition.
        let clock = ThreadClock::open();
        // First touch, from the pinned thread: pages follow the policy set
        // on the range (or land on this thread's node).
        arr.init();
        let mut expected = Expected::new();
        w.sync();
        let placement = if w.is_leader() && !unbound { run.leader_placement(&bases) } else { None };
        w.sync();
        if shared.control.0.load(Ordering::SeqCst) == ABORT {
            return;
        }
        for (ki, &kernel) in plan.kernels.iter().enumerate() {
            // Warm-up repetition, untimed (also faults in anything left).
            let s = arr.run(ops, kernel, stores);
            if kernel == Kernel::Read {
                if let Err(e) = expected.check_sum(s, chunk) {
                    shared.fail(validation(kernel, ops, w.cpu(), e));
                }
            }
            // the leader's: the repetitions, kept and dropped
            let mut reps = Reps::default();
            let bytes = bytes_per_rep(kernel, case);
            if let Some(e) = &mut events {
                e.reset();
                e.enable();
            }
            if w.is_leader() {
                if let Some(Ok(u)) = &mut *shared.uncore.lock().unwrap_or_else(|p| p.into_inner()) {
                    u.reset();
                    u.enable();
                }
            }
            let power_start = w.is_leader().then(|| shared.power.start());
            let started = Instant::now();
            loop {
                // read before the barrier: a wait between it and the
                // start delays the repetition too
                let before = clock.mark();
                let tb = Instant::now();
                w.sync();
                if shared.control.0.load(Ordering::SeqCst) != RUN {
                    break;
                }
                let t0 = shared.epoch.elapsed().as_nanos() as u64;
                let s = arr.run(ops, kernel, stores);
                let t1 = shared.epoch.elapsed().as_nanos() as u64;
                let c = disturb::check(&before, &clock.mark(), tb.elapsed().as_nanos() as u64);
                shared.checks.lock().unwrap_or_else(|p| p.into_inner())[i] = c;
                shared.starts[i].0.store(t0, Ordering::Relaxed);
                shared.ends[i].0.store(t1, Ordering::Relaxed);
                if kernel == Kernel::Read {
                    if let Err(e) = expected.check_sum(s, chunk) {
                        shared.fail(validation(kernel, ops, w.cpu(), e));
                    }
                }
                w.sync();
                if w.is_leader() {
                    // A repetition lasts from the first start to the last end.
                    let load = |v: &[Padded<AtomicU64>]| -> Vec<u64> {
                        v.iter().map(|s| s.0.load(Ordering::Relaxed)).collect()
                    };
                    let secs = rep_seconds(&load(&shared.starts), &load(&shared.ends));
                    let checks = shared.checks.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    reps.add(secs, &checks);
                    let next = if shared.failed() {
                        ABORT
                    } else if stop.is_stopped()
                        || enough(&plan.reps, &reps.gbs(bytes), reps.all(), started.elapsed())
                    {
                        STOP
                    } else {
                        RUN
                    };
                    shared.control.0.store(next, Ordering::SeqCst);
                }
            }
            let power = power_start.map(|s| shared.power.finish(&s));
            if let Some(e) = &mut events {
                e.disable();
                shared.counts.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(e.read());
            }
            expected.apply(kernel);
            if let Err(e) = arr.validate(&expected) {
                shared.fail(validation(kernel, ops, w.cpu(), e));
            }
            w.sync();
            if w.is_leader() {
                let next = run.finish_kernel(kernel, ki, &mut reps, &placement, power);
                shared.control.0.store(next, Ordering::SeqCst);
            }
            w.sync();
            if shared.control.0.load(Ordering::SeqCst) == ABORT {
                break;
            }
        }
    })?;
    drop(bufs);
    let results = shared.into_results()?;
    *done = done_at_start + results.len() as u64;
    Ok(results)
}

/// The case's arrays, placed ([`alloc_placed`]); warns when they are
/// measured unbound.
fn alloc_case(
    topo: &Topology,
    case: &Case,
    pages: PageKind,
    obs: &dyn Observer,
) -> Result<([Option<Buffer>; 4], bool), BwError> {
    let (bufs, unbound) = alloc_placed(topo, case, pages)?;
    if unbound {
        obs.event(Event::Warning(format!(
            "{}: the kernel has no NUMA system calls (mbind: ENOSYS; a kernel without \
             CONFIG_NUMA, or an emulator such as qemu-user): on this one-memory-node machine \
             the arrays are measured unbound and their placement is unverified",
            describe(case)
        )));
    }
    Ok((bufs, unbound))
}

/// The arrays' base pointers (null where an array is not used).
fn bases_of(bufs: &mut [Option<Buffer>; 4]) -> Bases {
    let mut ptrs = [std::ptr::null_mut(); 4];
    for (i, b) in bufs.iter_mut().enumerate() {
        if let Some(b) = b {
            ptrs[i] = b.as_mut_ptr() as *mut f64;
        }
    }
    Bases(ptrs)
}

/// The team's shared state for one case, a slot per worker.
fn shared_for(case: &Case) -> Shared {
    let threads = case.cpus.len();
    Shared {
        epoch: Instant::now(),
        starts: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
        ends: (0..threads).map(|_| Padded(AtomicU64::new(0))).collect(),
        control: Padded(AtomicU8::new(RUN)),
        error: Mutex::new(None),
        results: Mutex::new(Vec::new()),
        counts: Mutex::new(vec![None; threads]),
        uncore: Mutex::new(
            crate::counting::requested()
                .then(|| counters::uncore::Uncore::open(&topo::SysRoot::live())),
        ),
        checks: Mutex::new(vec![SampleCheck::default(); threads]),
        power: counters::power::Meter::open(&topo::SysRoot::live(), &case.cpus),
    }
}

/// What the leader's bookkeeping around the timed repetitions reads.
struct CaseRun<'a> {
    plan: &'a BwPlan,
    case: &'a Case,
    ops: &'static dyn Ops,
    stores: Stores,
    obs: &'a dyn Observer,
    stop: &'a StopFlag,
    /// The arrays are measured unbound (no NUMA system calls).
    unbound: bool,
    what: &'a str,
    done_at_start: u64,
    shared: &'a Shared,
}

impl CaseRun<'_> {
    /// The leader's placement check of the arrays after first touch;
    /// `None` (and the team told to abort) when it failed.
    fn leader_placement(&self, bases: &Bases) -> Option<PlacementCheck> {
        let (case, obs, what, shared) = (self.case, self.obs, self.what, self.shared);
        match verify(case, bases) {
            Ok(p) => {
                if !p.ok {
                    obs.event(Event::Warning(format!(
                        "{what}: only {:.1}% of sampled pages are on the intended node(s) {} \
                             (per node: {:?}); results are flagged",
                        p.fraction * 100.0,
                        p.expected,
                        p.per_node
                    )));
                }
                Some(p)
            }
            Err(e) => {
                shared.fail(e);
                shared.control.0.store(ABORT, Ordering::SeqCst);
                None
            }
        }
    }

    /// The leader's figure of `kernel` (the `ki`th) from its repetitions:
    /// recorded, reported and kept; returns what the team does next.
    fn finish_kernel(
        &self,
        kernel: Kernel,
        ki: usize,
        reps: &mut Reps,
        placement: &Option<PlacementCheck>,
        power: Option<results::power::Power>,
    ) -> u8 {
        let (plan, case, ops, stores, obs, stop) =
            (self.plan, self.case, self.ops, self.stores, self.obs, self.stop);
        let (unbound, what, done_at_start, shared) =
            (self.unbound, self.what, self.done_at_start, self.shared);
        // no clean repetition: the figure comes from all of them,
        // marked unstable
        let times = reps.figure_times();
        if shared.failed() || times.is_empty() {
            ABORT
        } else {
            let mut r = result(
                plan,
                case,
                kernel,
                ops,
                stores,
                &times,
                placement.clone(),
                stop.is_stopped(),
            );
            if unbound {
                r.placement = Placement::unverified();
            }
            r.counters = team_counts(shared);
            r.power = power;
            let d = reps.tally.finish();
            let calm = d.stable(plan.reps.min_reps.max(plan.reps.top_k));
            r.stable &= calm;
            r.disturbance = Some(d);
            if !calm && !r.interrupted {
                let d = r.disturbance.as_ref().expect("just set");
                obs.event(Event::Disturbed {
                    what: format!("{kernel} {what}"),
                    figures: 1,
                    marked: 1,
                    worst: d.cause(),
                });
            } else if !r.stable && !r.interrupted {
                obs.event(Event::Warning(format!(
                    "{} {what}: not stable within the budget (best {} runs spread {:.1}%, \
                     target {:.1}%; {} runs): the machine may be busy",
                    kernel, plan.reps.top_k, r.top_spread_pct, plan.reps.target_spread_pct, r.reps
                )));
            }
            obs.event(Event::Record(r.clone().into()));
            obs.event(Event::Progress {
                phase: "bw".into(),
                done: done_at_start + ki as u64 + 1,
                what: format!("{kernel} {what}: {:.2} GB/s", r.best_gbs),
            });
            shared.results.lock().unwrap_or_else(|p| p.into_inner()).push(r);
            if stop.is_stopped() {
                ABORT
            } else {
                RUN
            }
        }
    }
}

/// The team's counts of the kernel just measured, summed over the
/// workers, with the memory controllers' bytes (`None` unless
/// `--counters`).
fn team_counts(shared: &Shared) -> Option<results::counters::Counters> {
    let mut counts = shared.counts.lock().unwrap_or_else(|p| p.into_inner());
    let parts: Vec<results::counters::Counters> =
        counts.iter_mut().filter_map(Option::take).collect();
    if parts.is_empty() {
        return None;
    }
    let mut c = results::counters::Counters::sum(format!("{} team thread(s)", parts.len()), &parts);
    match &mut *shared.uncore.lock().unwrap_or_else(|p| p.into_inner()) {
        Some(Ok(u)) => {
            u.disable();
            c.uncore = u.read();
        }
        Some(Err(why)) => c.uncore_unavailable = Some(why.clone()),
        None => {}
    }
    Some(c)
}

fn validation(kernel: Kernel, ops: &dyn Ops, cpu: u32, e: kernels::ValidationError) -> BwError {
    BwError::Validation {
        kernel: kernel.name().into(),
        isa: ops.isa().name().into(),
        cpu,
        source: e,
    }
}

/// The average rate over the repetitions of `times`: every byte over all
/// the time (likwid-bench's definition), GB/s.
fn gbs_over(bytes: u64, times: &[f64]) -> f64 {
    bytes as f64 * times.len() as f64 / times.iter().sum::<f64>() / 1e9
}

#[allow(clippy::too_many_arguments)]
fn result(
    plan: &BwPlan,
    case: &Case,
    kernel: Kernel,
    ops: &dyn Ops,
    stores: Stores,
    times: &[f64],
    placement: Option<PlacementCheck>,
    interrupted: bool,
) -> BwResult {
    let bytes = bytes_per_rep(kernel, case);
    let gbs: Vec<f64> = times.iter().map(|&t| gbs(bytes, t)).collect();
    let s = Summary::of(&gbs).expect("at least one finite figure");
    let t = Summary::of(times).expect("at least one time");
    let k = plan.reps.top_k.max(1).min(gbs.len());
    let top = top_k_spread_pct(&gbs, k, true).unwrap_or(0.0);
    let stable = settled(&plan.reps, &gbs);
    let placement_check = placement.unwrap_or_else(|| PlacementCheck {
        expected: case.mem_nodes.clone(),
        fraction: 0.0,
        per_node: BTreeMap::new(),
        sampled_pages: 0,
        total_pages: 0,
        not_present_pages: 0,
        threshold: place::DEFAULT_THRESHOLD,
        ok: false,
        spread: None,
    });
    let peak_gbs = case_peak_gbs(plan, case);
    BwResult {
        mode: case.mode,
        kernel,
        threads: case.cpus.len(),
        cpus: case.cpus.iter().copied().collect(),
        cpu_node: case.cpu_node,
        mem_node: match case.memory {
            CaseMemory::Bind(m) => Some(m),
            _ => None,
        },
        mem_nodes: case.mem_nodes.clone(),
        policy: case.memory.policy(),
        array_bytes: case.sizing.array_bytes,
        arrays: kernel.uses().iter().filter(|&&u| u).count(),
        bytes_per_rep: bytes,
        best_gbs: s.max,
        median_gbs: s.median,
        min_gbs: s.min,
        mean_gbs: gbs_over(bytes, times),
        max_gbs: s.max,
        spread_pct: s.spread_pct,
        top_spread_pct: top,
        stable,
        reps: gbs.len(),
        median_rep_s: t.median,
        placement: Placement::of_check(placement_check),
        isa: ops.isa(),
        stores: match (kernel.stores(), stores) {
            (false, _) => results::bw::Stores::None,
            (true, Stores::NonTemporal) => results::bw::Stores::Nt,
            (true, Stores::Regular) => results::bw::Stores::Regular,
        },
        pages: plan.pages,
        llc_bytes: case.sizing.llc_bytes,
        size_rule_ok: case.sizing.rule_ok,
        peak_gbs,
        peak_fraction: peak_gbs.filter(|p| *p > 0.0).map(|p| s.max / p),
        validated: true,
        interrupted,
        counters: None,
        power: None,
        disturbance: None,
        scope: case.scope.clone(),
    }
}

/// The theoretical peak a case is held against, GB/s: the memory's
/// channels (one node's peak times the nodes holding the arrays), and for
/// a remote case (the CPUs' one node is not the memory's one node) also
/// the declared link, whichever is smaller.
fn case_peak_gbs(plan: &BwPlan, case: &Case) -> Option<f64> {
    let channels = plan.peak_gbs.map(|p| p * case.mem_nodes.len().max(1) as f64);
    let mem = (case.mem_nodes.len() == 1).then(|| case.mem_nodes.iter().next()).flatten();
    let remote = matches!((case.cpu_node, mem), (Some(c), Some(m)) if c != m);
    match plan.link_gbs.filter(|l| remote && l.is_finite() && *l > 0.0) {
        Some(link) => Some(channels.map_or(link, |c| c.min(link))),
        None => channels,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps() -> RepPolicy {
        RepPolicy {
            min_reps: 3,
            max_reps: 10,
            top_k: 3,
            target_spread_pct: 1.0,
            budget: Duration::from_secs(2),
        }
    }

    use crate::disturb::SampleCheck;
    use kernels::counting::Counting;
    use kernels::Isa;
    use results::bw::Mode;
    use topo::NodeSet;

    use super::super::plan::Sizing;

    fn node0() -> NodeSet {
        NodeSet::from_iter([0])
    }

    /// A case of `threads` threads of `chunk` elements each, bound to node 0.
    fn case(threads: usize, chunk: usize) -> Case {
        Case {
            mode: Mode::Local,
            cpus: (0..threads as u32).collect(),
            cpu_nodes_of: vec![Some(0); threads],
            cpu_node: Some(0),
            memory: CaseMemory::Bind(0),
            mem_nodes: node0(),
            sizing: Sizing {
                array_bytes: (chunk * threads * 8) as u64,
                chunk_elems: chunk,
                llc_bytes: None,
                rule_ok: false,
            },
            arrays: [true; 4],
            scope: None,
        }
    }

    /// The bytes counted per repetition are the bytes the team's loops
    /// touch: every kernel and store method, 1, 2 and 3 threads, odd
    /// chunks, each thread's loops run through a counting variant.
    #[test]
    fn bytes_per_repetition_are_what_every_thread_moves() {
        let scalar = kernels::select(Some(Isa::Scalar)).unwrap();
        for threads in 1..=3 {
            for chunk in [1, 7, 513, 1001] {
                let c = case(threads, chunk);
                for k in Kernel::ALL {
                    for stores in [Stores::Regular, Stores::NonTemporal] {
                        let ops = Counting::new(scalar);
                        for _ in 0..threads {
                            let mut v: [Vec<f64>; 4] = std::array::from_fn(|_| vec![1.0; chunk]);
                            let [a, b, cc, d] = &mut v;
                            Arrays { a, b, c: cc, d }.run(&ops, k, stores);
                        }
                        assert_eq!(
                            bytes_per_rep(k, &c),
                            ops.bytes(),
                            "{k} {} {threads} thread(s) x {chunk}",
                            stores.name()
                        );
                    }
                }
            }
        }
        // and by hand: triad is 24 B per element, 3 x 1001 elements
        assert_eq!(bytes_per_rep(Kernel::Triad, &case(3, 1001)), 24 * 3003);
        assert_eq!(bytes_per_rep(Kernel::Read, &case(2, 513)), 8 * 1026);
    }

    #[test]
    fn gigabytes_per_second_are_bytes_over_seconds_over_1e9() {
        assert_eq!(gbs(3_000_000_000, 0.5), 6.0);
        assert_eq!(gbs(48_048, 0.25), 48_048.0 * 4.0 / 1e9);
        // the average rate: all the bytes over all the time
        assert_eq!(gbs_over(1_000_000_000, &[0.25, 0.5, 0.25]), 3.0);
    }

    #[test]
    fn a_repetition_runs_from_the_first_start_to_the_last_end() {
        // ns on the case's clock: thread 1 started first, thread 2 ended last
        assert_eq!(rep_seconds(&[2_000, 1_000, 3_000], &[501_000, 400_000, 751_000]), 0.00075);
        assert_eq!(rep_seconds(&[5], &[250_000_005]), 0.25);
        // a clock that did not move is never a zero time
        assert_eq!(rep_seconds(&[7, 7], &[7, 7]), 1e-9);
        assert_eq!(rep_seconds(&[], &[]), 1e-9);
    }

    /// The figures of a result from known times, exactly: 3 threads of
    /// 1001 elements (odd), copy (16 B per element), repetitions of 0.5,
    /// 0.25 and 1 s.
    #[test]
    fn a_result_is_the_exact_arithmetic_of_its_bytes_and_times() {
        let scalar = kernels::select(Some(Isa::Scalar)).unwrap();
        let plan = BwPlan { peak_gbs: Some(0.0001), ..BwPlan::default() };
        let c = case(3, 1001);
        let times = [0.5, 0.25, 1.0];
        let r = result(&plan, &c, Kernel::Copy, scalar, Stores::Regular, &times, None, false);
        let bytes = 16 * 3 * 1001;
        assert_eq!(r.bytes_per_rep, bytes);
        let b = bytes as f64;
        assert_eq!(r.best_gbs, b * 4.0 / 1e9);
        assert_eq!(r.max_gbs, b * 4.0 / 1e9);
        assert_eq!(r.median_gbs, b * 2.0 / 1e9);
        assert_eq!(r.min_gbs, b / 1e9);
        assert_eq!(r.mean_gbs, b * 3.0 / 1.75 / 1e9);
        assert_eq!((r.reps, r.median_rep_s), (3, 0.5));
        assert_eq!((r.threads, r.arrays, r.array_bytes), (3, 2, 3 * 1001 * 8));
        assert_eq!(r.peak_gbs, Some(0.0001));
        assert_eq!(r.peak_fraction, Some(b * 4.0 / 1e9 / 0.0001));
        assert_eq!(r.mem_node, Some(0));
        // no placement check: flagged, never a pass
        assert_eq!(r.placement.status, results::placement::PlacementStatus::Mismatch);
        // the same times over one thread's chunk are a third of the figure
        let one = result(
            &plan,
            &case(1, 1001),
            Kernel::Copy,
            scalar,
            Stores::Regular,
            &times,
            None,
            false,
        );
        assert_eq!(one.bytes_per_rep * 3, r.bytes_per_rep);
        assert!((one.best_gbs * 3.0 - r.best_gbs).abs() < 1e-15);
    }

    #[test]
    fn a_peak_is_shared_by_the_nodes_and_an_unknown_one_gives_no_fraction() {
        let scalar = kernels::select(Some(Isa::Scalar)).unwrap();
        let mut c = case(2, 512);
        // interleaved over two nodes: twice one node's peak
        c.memory = CaseMemory::Interleave(NodeSet::from_iter([0, 1]));
        c.mem_nodes = NodeSet::from_iter([0, 1]);
        let plan = BwPlan { peak_gbs: Some(0.5), ..BwPlan::default() };
        let r = result(&plan, &c, Kernel::Read, scalar, Stores::Regular, &[0.5], None, false);
        assert_eq!((r.peak_gbs, r.mem_node), (Some(1.0), None));
        assert_eq!(r.peak_fraction, Some(r.best_gbs));
        // a peak of 0 is no peak to compare with
        let plan = BwPlan { peak_gbs: Some(0.0), ..BwPlan::default() };
        let r = result(&plan, &c, Kernel::Read, scalar, Stores::Regular, &[0.5], None, false);
        assert_eq!((r.peak_gbs, r.peak_fraction), (Some(0.0), None));
    }

    #[test]
    fn a_remote_case_is_held_against_the_declared_link() {
        let scalar = kernels::select(Some(Isa::Scalar)).unwrap();
        let mut remote = case(2, 512);
        remote.memory = CaseMemory::Bind(1);
        remote.mem_nodes = NodeSet::from_iter([1]);
        let peak = |plan: &BwPlan, c: &Case| {
            result(plan, c, Kernel::Read, scalar, Stores::Regular, &[0.5], None, false).peak_gbs
        };
        // no link declared: the memory node's channels
        let plan = BwPlan { peak_gbs: Some(100.0), ..BwPlan::default() };
        assert_eq!(peak(&plan, &remote), Some(100.0));
        // a slower link bounds it; a faster one does not
        let plan = BwPlan { peak_gbs: Some(100.0), link_gbs: Some(41.6), ..BwPlan::default() };
        assert_eq!(peak(&plan, &remote), Some(41.6));
        let fast = BwPlan { peak_gbs: Some(100.0), link_gbs: Some(400.0), ..BwPlan::default() };
        assert_eq!(peak(&fast, &remote), Some(100.0));
        // the link alone when the channels are unknown
        let only = BwPlan { link_gbs: Some(41.6), ..BwPlan::default() };
        assert_eq!(peak(&only, &remote), Some(41.6));
        // a local case never crosses the link
        assert_eq!(peak(&plan, &case(2, 512)), Some(100.0));
        assert_eq!(peak(&only, &case(2, 512)), None);
    }

    #[test]
    fn every_store_method_is_recorded_as_used() {
        let scalar = kernels::select(Some(Isa::Scalar)).unwrap();
        let plan = BwPlan::default();
        for k in Kernel::ALL {
            for (stores, want) in [
                (Stores::Regular, results::bw::Stores::Regular),
                (Stores::NonTemporal, results::bw::Stores::Nt),
            ] {
                let r = result(&plan, &case(2, 513), k, scalar, stores, &[1.0], None, false);
                let want = if k == Kernel::Read { results::bw::Stores::None } else { want };
                assert_eq!(r.stores, want, "{k}");
                assert_eq!(r.bytes_per_rep, k.bytes_per_element() * 1026, "{k}");
                assert_eq!(r.arrays, k.uses().iter().filter(|&&u| u).count(), "{k}");
            }
        }
    }

    fn rep_check(waited_ns: u64) -> SampleCheck {
        SampleCheck {
            cpu: Some(0),
            wall_ns: 1_000_000,
            waited_ns: Some(waited_ns),
            ..Default::default()
        }
    }

    /// A repetition during which any thread waited more than 1% of the
    /// time is dropped; the figure is the kept ones', or every one's
    /// when none was kept.
    #[test]
    fn disturbed_repetitions_are_dropped_from_the_figure() {
        let mut reps = Reps::default();
        assert!(reps.add(0.5, &[rep_check(0), rep_check(10_000)]), "1% exactly is kept");
        assert!(!reps.add(0.25, &[rep_check(0), rep_check(10_001)]), "over 1% on one thread");
        assert!(reps.add(1.0, &[rep_check(5_000), rep_check(0)]));
        assert_eq!(reps.all(), 3);
        assert_eq!(reps.gbs(1_000_000_000), [2.0, 1.0]);
        let d = reps.tally.finish();
        assert_eq!((d.clean, d.disturbed), (2, 1));
        assert_eq!(reps.figure_times(), [0.5, 1.0]);
        // none kept: the dropped ones make the figure
        let mut reps = Reps::default();
        reps.add(0.5, &[rep_check(500_000)]);
        reps.add(0.25, &[rep_check(500_000)]);
        assert!(reps.gbs(8).is_empty());
        assert_eq!(reps.figure_times(), [0.5, 0.25]);
        assert!(!reps.tally.finish().stable(1));
    }

    /// Every array carries the memory policy its case claims, read back
    /// from the kernel (`get_mempolicy(MPOL_F_ADDR)`) chunk by chunk: on
    /// one node the pages land on node 0 whatever the policy, so where
    /// they are cannot tell a bound array from an unbound one.
    #[test]
    fn every_array_carries_the_policy_its_case_claims() {
        let root = topo::SysRoot::live();
        let mut memories = vec![
            (CaseMemory::Bind(0), [MemPolicy::Bind(node0()), MemPolicy::Bind(node0())]),
            (
                CaseMemory::Interleave(node0()),
                [MemPolicy::Interleave(node0()), MemPolicy::Interleave(node0())],
            ),
            // thread 1 on a node whose memory is not the case's (or that
            // has none): local allocation, never a bind to its node
            (CaseMemory::LocalPerThread, [MemPolicy::Bind(node0()), MemPolicy::Local]),
        ];
        if place::policy_support(&root).weighted_interleave {
            memories.push((
                CaseMemory::Weighted(node0(), [(0, 1.0)].into_iter().collect()),
                [MemPolicy::WeightedInterleave(node0()), MemPolicy::WeightedInterleave(node0())],
            ));
        }
        for (memory, want) in memories {
            let mut c = case(2, 512); // a page per thread
            c.cpu_nodes_of = vec![Some(0), Some(1)];
            c.memory = memory.clone();
            c.arrays = [true, false, true, false];
            let t = Topology::discover(&root).unwrap();
            let (bufs, unbound) = alloc_placed(&t, &c, PageKind::Base).unwrap();
            assert!(!unbound, "this kernel has NUMA system calls");
            assert!(bufs[1].is_none() && bufs[3].is_none(), "only the arrays used");
            for b in bufs.iter().flatten() {
                for (i, want) in want.iter().enumerate() {
                    let at = b.as_ptr().wrapping_add(i * 4096);
                    assert_eq!(&place::policy_at(at).unwrap(), want, "{memory:?} chunk {i}");
                }
            }
            // first touch, then where the pages are: all on node 0
            let mut bufs = bufs;
            let ptrs: [*mut f64; 4] = std::array::from_fn(|i| {
                bufs[i].as_mut().map_or(std::ptr::null_mut(), |b| {
                    b.touch();
                    b.as_mut_ptr() as *mut f64
                })
            });
            let p = verify(&c, &Bases(ptrs)).unwrap();
            assert!(p.ok && p.fraction == 1.0, "{memory:?}: {p:?}");
            assert_eq!(p.sampled_pages, 4, "2 arrays x 2 chunks of one page");
        }
    }

    #[test]
    fn repetitions_stop_once_the_best_three_agree() {
        let r = reps();
        assert!(!enough(&r, &[10.0, 10.0], 2, Duration::ZERO), "under min_reps");
        assert!(enough(&r, &[10.0, 5.0, 10.0, 9.95], 4, Duration::ZERO));
        assert!(!enough(&r, &[10.0, 9.0, 8.0], 3, Duration::ZERO), "best three spread 20%");
    }

    #[test]
    fn repetitions_stop_at_the_cap_or_when_the_budget_is_spent() {
        let r = reps();
        let wild: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!(enough(&r, &wild, 10, Duration::ZERO), "max_reps reached");
        assert!(!enough(&r, &wild[..9], 9, Duration::ZERO));
        assert!(enough(&r, &[1.0, 2.0], 2, Duration::from_secs(2)), "budget spent");
        assert!(!enough(&r, &[1.0], 1, Duration::from_secs(5)), "one repetition has no spread");
    }

    #[test]
    fn disturbed_repetitions_do_not_settle_a_figure_but_count_towards_the_cap() {
        let r = reps();
        // three clean repetitions agree; the others were disturbed
        assert!(enough(&r, &[10.0, 10.0, 10.0], 9, Duration::ZERO));
        // one clean of nine: settled needs three
        assert!(!enough(&r, &[10.0], 9, Duration::ZERO));
        assert!(enough(&r, &[10.0], 10, Duration::ZERO), "max_reps counts every repetition");
        // the budget is spent with no clean repetition: stop after a few
        assert!(!enough(&r, &[], 2, Duration::from_secs(3)));
        assert!(enough(&r, &[], 3, Duration::from_secs(3)));
    }
}
