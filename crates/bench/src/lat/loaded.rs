//! Latency under load (like MLC's `--loaded_latency` and the Mess
//! benchmark): one thread chases pointers while the other CPUs move cache
//! lines of their own buffers on the same node in a traffic mix (read-only,
//! 3:1, 2:1, 1:1 read:write, non-temporal writes), waiting a delay
//! calibrated in nanoseconds after each line. Each mix gives a curve from no
//! load (load threads paused) to full load (no wait): per point the chase
//! latency (median, p90, p99) and the bandwidth the load reached (measured),
//! and per curve its knee ([`results::lat::knee`]).

use results::lat::{LoadKind, LoadedPoint, LoadedSummary};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kernels::chase::Ring;
use kernels::load::{self as gen_loop, Cursor, Op};
use results::lat::LineOp;
use topo::{CpuSet, Topology};

use super::{
    arena, emit, fit_size, measure, resolve, sys, usable_cpus, warn_placement, ChaseOpts, Ctx,
    LatError, Resolved, Where, DEFAULT_SIZE_BYTES,
};
use events::Event;
use results::lat::{LatSummary, Mode};
use results::placement::{Placement, PlacementStatus};
use results::stats::Summary;

/// Default waits after each line, ns, from light load to full load (the
/// idle point, load threads paused, comes first).
pub const DEFAULT_DELAYS_NS: [u64; 10] =
    [20_000, 10_000, 5_000, 2_000, 1_000, 500, 200, 100, 50, 0];

/// The `wait` value that pauses the load threads.
const PAUSED: u64 = u64::MAX;
/// How many times a loaded point is chased while a load thread moves no
/// line in its window, before it is kept and marked unstable.
const STARVED_TRIES: u32 = 3;

#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSpec {
    pub at: Where,
    /// CPUs generating load; `None` = every other usable CPU (of the
    /// chasing CPU's node with `load_node_only`).
    pub load_cpus: Option<CpuSet>,
    /// With `load_cpus` `None`: load from the chasing CPU's node's other
    /// usable CPUs only (a service bound to a node, its other threads
    /// loading that node's memory), or from every other usable CPU when
    /// the node has none.
    pub load_node_only: bool,
    /// Traffic mixes, one curve each, in this order.
    pub mixes: Vec<LoadKind>,
    /// Waits after each line, ns; measured from the longest to none.
    pub delays_ns: Vec<u64>,
    /// Buffer of each load thread; `None` = max(64 MiB, 2 x LLC / threads).
    pub load_bytes_per_thread: Option<u64>,
}

/// What [`loaded`] measured: every point, and one summary per curve.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoadedReport {
    pub points: Vec<LoadedPoint>,
    pub curves: Vec<LoadedSummary>,
}

/// One load thread's line counter, on its own cache lines.
#[repr(align(128))]
struct Gen {
    lines: AtomicU64,
}

fn ops_of(kind: LoadKind) -> Vec<Op> {
    kind.pattern()
        .iter()
        .map(|op| match op {
            LineOp::Read => Op::Read,
            LineOp::Modify => Op::Modify,
            LineOp::NtWrite => Op::NtWrite,
        })
        .collect()
}

/// What the load threads are told: the mix (index into [`LoadKind::ALL`])
/// and the wait in spin iterations ([`PAUSED`] = no load).
struct Control {
    mix: AtomicU8,
    wait: AtomicU64,
    quit: AtomicBool,
    /// ns of one spin iteration (lines per chunk are chosen from it).
    spin_ns: f64,
}

/// Runs the load-generator loop on the calling thread until `quit`.
fn generate(map: &mut sys::Mapping, ctl: &Control, g: &Gen) {
    // SAFETY: the mapping is page-aligned and `len` bytes long; viewed as
    // whole u64 words it stays inside it, and it is borrowed mutably.
    let words =
        unsafe { std::slice::from_raw_parts_mut(map.as_mut_ptr().cast::<u64>(), map.len() / 8) };
    let patterns: Vec<Vec<Op>> = LoadKind::ALL.iter().map(|&k| ops_of(k)).collect();
    let mut cur = Cursor::default();
    let mut acc = 0u64;
    while !ctl.quit.load(Ordering::Relaxed) {
        let wait = ctl.wait.load(Ordering::Relaxed);
        if wait == PAUSED {
            std::thread::sleep(Duration::from_micros(200));
            continue;
        }
        let pattern = &patterns[usize::from(ctl.mix.load(Ordering::Relaxed)) % patterns.len()];
        // about 10 us of work between looks at the controls, a multiple of
        // every pattern's length (1, 2, 3)
        let line_ns = wait as f64 * ctl.spin_ns + 20.0;
        let chunk = ((10_000.0 / line_ns) as u64 / 6 * 6).clamp(6, 600);
        acc = acc.wrapping_add(gen_loop::touch_lines(words, &mut cur, pattern, chunk, wait));
        g.lines.fetch_add(chunk, Ordering::Relaxed);
    }
    std::hint::black_box(acc);
}

/// The bandwidth the load threads reached at one point: GB/s (1e9 B/s)
/// from the lines they moved while the chase ran, in `secs` seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadRates {
    pub load_gbs: f64,
    pub read_gbs: f64,
    pub write_gbs: f64,
}

impl LoadRates {
    pub fn of(mix: LoadKind, lines: u64, secs: f64) -> LoadRates {
        let (rb, wb) = mix.bytes_of(lines);
        LoadRates {
            load_gbs: (rb + wb) / secs / 1e9,
            read_gbs: rb / secs / 1e9,
            write_gbs: wb / secs / 1e9,
        }
    }
}

/// The worst of the load buffers' placements (lowest share on the node).
fn worst_placement(v: &[Placement]) -> Option<Placement> {
    let frac = |p: &Placement| p.check.as_ref().map_or(2.0, |c| c.fraction);
    v.iter()
        .min_by(|a, b| {
            let bad = |p: &Placement| p.status != PlacementStatus::Mismatch;
            bad(a).cmp(&bad(b)).then(frac(a).total_cmp(&frac(b)))
        })
        .cloned()
}

/// Loaded latency: per mix, an idle point, then one point per delay.
pub fn loaded(
    topo: &Topology,
    spec: &LoadedSpec,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<LoadedReport, LatError> {
    let r = resolve(topo, &spec.at)?;
    let usable = usable_cpus(topo);
    let load_cpus = load_cpus_of(topo, spec, &r, &usable)?;
    if spec.delays_ns.is_empty() {
        return Err(LatError::BadRequest("no delays given".into()));
    }
    if spec.mixes.is_empty() {
        return Err(LatError::BadRequest("no traffic mix given".into()));
    }
    let mut delays = spec.delays_ns.clone();
    delays.sort_unstable_by(|a, b| b.cmp(a));
    delays.dedup();
    let (chase_size, per_thread) = buffer_sizes(topo, spec, opts, &r, &usable, load_cpus.len())?;

    let phase = "lat loaded".to_string();
    let per_curve = delays.len() as u64 + 1;
    ctx.observer.event(Event::PhaseStart {
        phase: phase.clone(),
        total: per_curve * spec.mixes.len() as u64,
    });
    // calibrate the wait on the chasing CPU before any load runs
    let spin_ns = super::on_cpu(r.cpu, || Ok(gen_loop::spin_ns_per_iter()))?;
    let ctl = Control {
        mix: AtomicU8::new(0),
        wait: AtomicU64::new(PAUSED),
        quit: AtomicBool::new(false),
        spin_ns,
    };
    let gens: Vec<Gen> = load_cpus.iter().map(|_| Gen { lines: AtomicU64::new(0) }).collect();
    let ready = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let load_placements: Mutex<Vec<Placement>> = Mutex::new(Vec::new());
    let meter = {
        let mut cpus = load_cpus.clone();
        cpus.insert(0, r.cpu);
        counters::power::Meter::open(&topo::SysRoot::live(), &cpus)
    };
    let result = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (k, &cpu) in load_cpus.iter().enumerate() {
            let (ctl, g, ready, failed, lp) = (&ctl, &gens[k], &ready, &failed, &load_placements);
            let mem = r.mem_node;
            let pages = opts.pages;
            handles.push(s.spawn(move || -> Result<(), LatError> {
                let res = sys::pin_to_cpu(cpu)
                    .and_then(|_| sys::Mapping::new(per_thread as usize, pages, mem));
                match (&res, mem) {
                    (Err(_), _) => failed.store(true, Ordering::SeqCst),
                    (Ok(m), Some(n)) => {
                        let p = m.check_placement(n, 1024);
                        lp.lock().unwrap_or_else(|e| e.into_inner()).push(p);
                    }
                    (Ok(_), None) => {}
                }
                ready.fetch_add(1, Ordering::SeqCst);
                let mut map = res?;
                generate(&mut map, ctl, g);
                Ok(())
            }));
        }
        let chase = super::on_cpu(r.cpu, || {
            chase_curves(&Chase {
                spec,
                opts,
                ctx,
                r: &r,
                load_cpus: &load_cpus,
                delays: &delays,
                chase_size,
                spin_ns,
                phase: &phase,
                ctl: &ctl,
                gens: &gens,
                ready: &ready,
                failed: &failed,
                load_placements: &load_placements,
                meter: &meter,
            })
        });
        ctl.quit.store(true, Ordering::SeqCst);
        match (chase, join_generators(handles)) {
            (Ok(v), Some(e)) if v.points.is_empty() => Err(e),
            (r, _) => r,
        }
    });
    ctx.observer.event(Event::PhaseEnd { phase });
    result
}

/// The load CPUs: those asked for (usable, not the chasing CPU), else the
/// chasing CPU's node's other usable CPUs (with `load_node_only`), else
/// every other usable CPU.
fn load_cpus_of(
    topo: &Topology,
    spec: &LoadedSpec,
    r: &Resolved,
    usable: &CpuSet,
) -> Result<Vec<u32>, LatError> {
    let load_cpus: Vec<u32> = match &spec.load_cpus {
        Some(set) => {
            for c in set.iter() {
                if !usable.contains(c) {
                    return Err(LatError::BadRequest(format!(
                        "load CPU {c} is not online or not allowed (usable CPUs: {usable})"
                    )));
                }
                if c == r.cpu {
                    return Err(LatError::BadRequest(format!("load CPU {c} is the chasing CPU")));
                }
            }
            set.iter().collect()
        }
        None => {
            let others: Vec<u32> = usable.iter().filter(|&c| c != r.cpu).collect();
            let node = r.cpu_node.and_then(|n| topo.node(n));
            let near: Vec<u32> = match node {
                Some(n) if spec.load_node_only => {
                    others.iter().copied().filter(|&c| n.cpus.contains(c)).collect()
                }
                _ => Vec::new(),
            };
            if near.is_empty() {
                others
            } else {
                near
            }
        }
    };
    if load_cpus.is_empty() {
        return Err(LatError::BadRequest(format!(
            "loaded latency needs a CPU besides the chasing CPU {} to generate load (usable CPUs: {usable})",
            r.cpu
        )));
    }
    Ok(load_cpus)
}

/// The chase's working set and each load thread's buffer (bytes), fitted
/// together into what the node can spare.
fn buffer_sizes(
    topo: &Topology,
    spec: &LoadedSpec,
    opts: &ChaseOpts,
    r: &Resolved,
    usable: &CpuSet,
    threads: usize,
) -> Result<(u64, u64), LatError> {
    let llc = topo.llc_bytes_for(usable).unwrap_or(32 << 20);
    let per_thread =
        spec.load_bytes_per_thread.unwrap_or_else(|| (2 * llc / threads as u64).max(64 << 20));
    let chase_size = opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
    let total = chase_size + per_thread * threads as u64;
    // check the node can spare chase + load buffers together
    let fitted = fit_size(topo, r.mem_node, total, opts.size_bytes.is_some(), opts.pages)?;
    let chase_size = if fitted < total {
        fitted.saturating_sub(per_thread * threads as u64)
    } else {
        chase_size
    };
    if chase_size < super::MIN_SIZE_BYTES {
        return Err(LatError::BadRequest(
            "not enough free memory on the node for the chase and the load buffers".into(),
        ));
    }
    Ok((chase_size, per_thread))
}

/// What the chasing thread reads: the request, the load threads' controls
/// and counters, and the sizes decided before the threads started.
struct Chase<'a> {
    spec: &'a LoadedSpec,
    opts: &'a ChaseOpts,
    ctx: &'a Ctx<'a>,
    r: &'a Resolved,
    load_cpus: &'a [u32],
    /// Waits, ns, longest first.
    delays: &'a [u64],
    chase_size: u64,
    spin_ns: f64,
    phase: &'a str,
    ctl: &'a Control,
    gens: &'a [Gen],
    ready: &'a AtomicU64,
    failed: &'a AtomicBool,
    load_placements: &'a Mutex<Vec<Placement>>,
    meter: &'a counters::power::Meter,
}

/// The chasing thread: builds its ring, waits for the load threads, then
/// measures each mix's curve, an idle point then one per delay.
fn chase_curves(c: &Chase<'_>) -> Result<LoadedReport, LatError> {
    let Chase {
        spec,
        opts,
        ctx,
        r,
        load_cpus,
        delays,
        chase_size,
        spin_ns,
        phase,
        ctl,
        gens,
        ready,
        failed,
        load_placements,
        meter,
    } = *c;
    let mut a = arena(chase_size, opts, r.mem_node)?;
    warn_placement(ctx.observer, &a.placement);
    let mut ring =
        Ring::build(a.map.as_mut_slice(), opts.stride_bytes, opts.group_elems(), opts.seed)?;
    while ready.load(Ordering::SeqCst) < load_cpus.len() as u64 {
        std::thread::sleep(Duration::from_millis(5));
    }
    if failed.load(Ordering::SeqCst) {
        return Ok(LoadedReport::default()); // the generator's error is returned below
    }
    let load_placement = {
        let v = load_placements.lock().unwrap_or_else(|e| e.into_inner());
        worst_placement(&v)
    };
    if let Some(p) = &load_placement {
        warn_placement(ctx.observer, p);
    }
    let lines = || -> u64 { gens.iter().map(|g| g.lines.load(Ordering::Relaxed)).sum() };
    let mut out = LoadedReport::default();
    let mut unstable = crate::disturb::Unstable::new();
    let mut done = 0u64;
    'mixes: for &mix in &spec.mixes {
        let mix_idx = LoadKind::ALL.iter().position(|&k| k == mix).unwrap_or(0);
        ctl.mix.store(mix_idx as u8, Ordering::Relaxed);
        let mut curve: Vec<LoadedPoint> = Vec::new();
        for d in std::iter::once(None).chain(delays.iter().map(|&d| Some(d))) {
            if ctx.stop.is_stopped() {
                break 'mixes;
            }
            let iters = d.map_or(PAUSED, |ns| (ns as f64 / spin_ns).round() as u64);
            let before: Vec<u64> = gens.iter().map(|g| g.lines.load(Ordering::Relaxed)).collect();
            ctl.wait.store(iters, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(30));
            if d.is_some() {
                wait_for_load(gens, &before, ctx.observer);
            }
            // A loaded point whose window saw a load thread move no
            // line (descheduled on a busy machine) measured less
            // load than it says: chase again, a bounded number of
            // times, and mark it unstable if it stays so.
            let mut tries = 0;
            let (sm, power, dt, moved, starved) = loop {
                tries += 1;
                let per0: Vec<u64> = gens.iter().map(|g| g.lines.load(Ordering::Relaxed)).collect();
                let l0 = lines();
                let t0 = Instant::now();
                let power_start = meter.start();
                let Some(sm) = measure::measure_ring(&mut ring, &ctx.timing, ctx.stop) else {
                    break 'mixes;
                };
                let power = meter.finish(&power_start);
                let dt = t0.elapsed().as_secs_f64();
                let moved = lines() - l0;
                let starved = d.is_some()
                    && gens.iter().zip(&per0).any(|(g, b)| g.lines.load(Ordering::Relaxed) == *b);
                if !starved || tries >= STARVED_TRIES || ctx.stop.is_stopped() {
                    break (sm, power, dt, moved, starved);
                }
            };
            if starved {
                ctx.observer.event(Event::Warning(format!(
                    "a load thread moved no line while latency was chased, {tries} times \
                     (is the machine busy?): this point understates the load and is \
                     marked unstable"
                )));
            }
            let Some(sum) = Summary::of(&sm.ns_per_load) else { break 'mixes };
            let rates = LoadRates::of(mix, moved, dt);
            let m = Measured { mix, d, iters, sum, rates, sm: &sm, starved, power };
            let p = loaded_point(m, c, (&a.page, &a.placement), &load_placement);
            unstable.note(p.stable, p.disturbance.as_ref());
            emit(ctx.observer, p.clone());
            curve.push(p);
            done += 1;
            ctx.observer.event(Event::Progress {
                phase: phase.to_string(),
                done,
                what: match d {
                    None => format!("{} idle", mix.name()),
                    Some(d) => format!("{} delay {d} ns", mix.name()),
                },
            });
        }
        ctl.wait.store(PAUSED, Ordering::Relaxed);
        if let Some(c) = curve_summary(&curve) {
            emit(ctx.observer, LatSummary::Loaded(c.clone()));
            out.curves.push(c);
        }
        out.points.extend(curve);
    }
    unstable.warn(ctx.observer, "lat loaded");
    Ok(out)
}

/// Waits until every load thread moved a line since `before` (the first
/// time, each faults its buffer in first); at most 5 s, then warns.
fn wait_for_load(gens: &[Gen], before: &[u64], observer: &dyn events::Observer) {
    let started = Instant::now();
    while gens.iter().zip(before).any(|(g, b)| g.lines.load(Ordering::Relaxed) == *b) {
        if started.elapsed() > Duration::from_secs(5) {
            observer.event(Event::Warning(
                "a load thread moved no line for 5 s (is the machine busy?): \
                 this point may understate the load"
                    .into(),
            ));
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What one loaded point measured.
struct Measured<'a> {
    mix: LoadKind,
    /// The wait, ns; `None` for the idle point.
    d: Option<u64>,
    /// The wait in spin iterations.
    iters: u64,
    sum: Summary,
    rates: LoadRates,
    sm: &'a measure::ChaseSamples,
    /// A load thread moved no line in the window.
    starved: bool,
    power: results::power::Power,
}

/// The record of one loaded point.
fn loaded_point(
    m: Measured<'_>,
    c: &Chase<'_>,
    (page, placement): (&str, &Placement),
    load_placement: &Option<Placement>,
) -> LoadedPoint {
    let Measured { mix, d, iters, sum, rates, sm, starved, power } = m;
    let opts = c.opts;
    LoadedPoint {
        mode: Mode::Loaded,
        delay: if d.is_some() { iters } else { 0 },
        delay_ns: d.map(|d| d as f64),
        idle: d.is_none(),
        latency_ns: sum.median,
        median_ns: sum.median,
        p90_ns: sum.p90,
        p99_ns: sum.p99,
        spread_pct: sum.spread_pct,
        load_gbs: rates.load_gbs,
        read_gbs: Some(rates.read_gbs),
        write_gbs: Some(rates.write_gbs),
        load_threads: c.load_cpus.len(),
        load_kind: mix,
        cpu: c.r.cpu,
        mem_node: c.r.mem_node,
        size_bytes: c.chase_size,
        page_size: page.to_string(),
        placement: placement.clone(),
        load_placement: load_placement.clone(),
        stride_bytes: Some(opts.stride_bytes),
        tlb_group_bytes: Some((opts.group_elems() * opts.stride_bytes) as u64),
        stable: sm.stable() && !starved,
        disturbance: Some(sm.disturbance.clone()),
        power: Some(Box::new(power)),
    }
}

/// Joins the load threads; the first error one returned (or its panic).
fn join_generators(
    handles: Vec<std::thread::ScopedJoinHandle<'_, Result<(), LatError>>>,
) -> Option<LatError> {
    let mut gen_err = None;
    for h in handles {
        match h.join() {
            Ok(Err(e)) => {
                gen_err.get_or_insert(e);
            }
            Err(_) => {
                gen_err.get_or_insert(LatError::Panicked("a load thread".into()));
            }
            Ok(Ok(())) => {}
        }
    }
    gen_err
}

/// The knee of one mix's curve (points in the order measured, the idle
/// point first when there is one).
pub fn curve_summary(curve: &[LoadedPoint]) -> Option<LoadedSummary> {
    let first = curve.first()?;
    let idle = curve.iter().find(|p| p.idle).map(|p| p.latency_ns);
    let pts: Vec<(f64, f64)> = curve.iter().map(|p| (p.load_gbs, p.latency_ns)).collect();
    Some(LoadedSummary {
        mode: Mode::Loaded,
        load_kind: first.load_kind,
        cpu: first.cpu,
        mem_node: first.mem_node,
        load_threads: first.load_threads,
        points: curve.len(),
        knee: results::lat::knee(&pts, idle)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::placement::PlacementCheck;

    fn placement(status: PlacementStatus, fraction: f64) -> Placement {
        Placement {
            status,
            check: Some(PlacementCheck {
                expected: topo::NodeSet::from_iter([0]),
                fraction,
                per_node: Default::default(),
                sampled_pages: 10,
                total_pages: 10,
                not_present_pages: 0,
                threshold: 0.99,
                ok: fraction >= 0.99,
                spread: None,
            }),
        }
    }

    #[test]
    fn the_worst_load_buffer_placement_is_reported() {
        let v = [
            placement(PlacementStatus::Verified, 1.0),
            placement(PlacementStatus::Mismatch, 0.7),
            placement(PlacementStatus::Verified, 0.995),
        ];
        let w = worst_placement(&v).unwrap();
        assert_eq!(w.status, PlacementStatus::Mismatch);
        assert_eq!(w.check.unwrap().fraction, 0.7);
        assert_eq!(worst_placement(&[]), None);
    }

    #[test]
    fn load_bandwidth_comes_from_the_lines_moved_and_the_time() {
        // 3 M lines of 64 B in half a second; (read, write) GB/s
        for (mix, r, w) in [
            (LoadKind::Read, 0.384, 0.0),    // every line read: 192 MB
            (LoadKind::Rw, 0.384, 0.384),    // every line read and written back
            (LoadKind::R2W1, 0.384, 0.192),  // both read, one of two written back
            (LoadKind::R3W1, 0.384, 0.128),  // all read, one of three written back
            (LoadKind::NtWrite, 0.0, 0.384), // written only
        ] {
            let got = LoadRates::of(mix, 3_000_000, 0.5);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12;
            assert!(
                close(got.read_gbs, r) && close(got.write_gbs, w) && close(got.load_gbs, r + w),
                "{mix:?}: {got:?}"
            );
        }
    }

    #[test]
    fn every_mix_maps_to_its_line_ops() {
        assert_eq!(ops_of(LoadKind::Read), [Op::Read]);
        assert_eq!(ops_of(LoadKind::R3W1), [Op::Read, Op::Read, Op::Modify]);
        assert_eq!(ops_of(LoadKind::R2W1), [Op::Read, Op::Modify]);
        assert_eq!(ops_of(LoadKind::Rw), [Op::Modify]);
        assert_eq!(ops_of(LoadKind::NtWrite), [Op::NtWrite]);
    }
}
