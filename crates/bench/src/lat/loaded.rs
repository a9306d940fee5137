//! Latency under load (like MLC's loaded latency): one thread chases
//! pointers while the other CPUs read (or read and write) their own
//! buffers on the same node, pausing `delay` spin iterations after each
//! cache line. Each delay gives one point: the chase latency and the
//! bandwidth the load reached, so latency can be drawn against bandwidth.

pub use results::lat::{LoadKind, LoadedPoint};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kernels::chase::Ring;
use topo::{CpuSet, Topology};

use super::{
    arena, emit, fit_size, measure, resolve, sys, usable_cpus, warn_placement, ChaseOpts, Ctx,
    LatError, Mode, Where, DEFAULT_SIZE_BYTES,
};
use crate::events::Event;
use crate::stats::Summary;

/// Default delays (spin iterations after each line), none to large.
pub const DEFAULT_DELAYS: [u64; 10] = [0, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSpec {
    pub at: Where,
    /// CPUs generating load; `None` = every other usable CPU.
    pub load_cpus: Option<CpuSet>,
    pub kind: LoadKind,
    pub delays: Vec<u64>,
    /// Buffer of each load thread; `None` = max(64 MiB, 2 x LLC / threads).
    pub load_bytes_per_thread: Option<u64>,
}

/// One load thread's line counter, on its own cache lines.
#[repr(align(128))]
struct Gen {
    lines: AtomicU64,
}

/// Runs the load-generator loop on the calling thread until `quit`.
fn generate(map: &mut sys::Mapping, kind: LoadKind, delay: &AtomicU64, quit: &AtomicBool, g: &Gen) {
    let words = map.len() / 8;
    let base = map.as_mut_ptr().cast::<u64>();
    let mut acc = 0u64;
    let mut i = 0;
    while !quit.load(Ordering::Relaxed) {
        let d = delay.load(Ordering::Relaxed);
        // count often enough that a short sample sees long delays
        let chunk: u64 = if d >= 64 { 1 } else { 256 };
        for _ in 0..chunk {
            // SAFETY: i < words (wrapped below), inside this thread's own
            // mapping.
            unsafe {
                let p = base.add(i);
                let v = p.read_volatile();
                if kind == LoadKind::Rw {
                    p.write_volatile(v.wrapping_add(1));
                }
                acc = acc.wrapping_add(v);
            }
            let mut x = 0u64;
            for k in 0..d {
                x = std::hint::black_box(x.wrapping_add(k));
            }
            acc = acc.wrapping_add(x);
            i += 8; // next 64 B line
            if i >= words {
                i = 0;
            }
        }
        g.lines.fetch_add(chunk, Ordering::Relaxed);
    }
    std::hint::black_box(acc);
}

/// Loaded latency: one point per delay.
pub fn loaded(
    topo: &Topology,
    spec: &LoadedSpec,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<Vec<LoadedPoint>, LatError> {
    let r = resolve(topo, &spec.at)?;
    let usable = usable_cpus(topo);
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
        None => usable.iter().filter(|&c| c != r.cpu).collect(),
    };
    if load_cpus.is_empty() {
        return Err(LatError::BadRequest(format!(
            "loaded latency needs a CPU besides the chasing CPU {} to generate load (usable CPUs: {usable})",
            r.cpu
        )));
    }
    if spec.delays.is_empty() {
        return Err(LatError::BadRequest("no delays given".into()));
    }
    let llc = topo.llc_bytes_for(&usable).unwrap_or(32 << 20);
    let per_thread = spec
        .load_bytes_per_thread
        .unwrap_or_else(|| (2 * llc / load_cpus.len() as u64).max(64 << 20));
    let chase_size = opts.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
    let total = chase_size + per_thread * load_cpus.len() as u64;
    // check the node can spare chase + load buffers together
    let fitted = fit_size(topo, r.mem_node, total, opts.size_bytes.is_some(), opts.pages)?;
    let chase_size = if fitted < total {
        fitted.saturating_sub(per_thread * load_cpus.len() as u64)
    } else {
        chase_size
    };
    if chase_size < super::MIN_SIZE_BYTES {
        return Err(LatError::BadRequest(
            "not enough free memory on the node for the chase and the load buffers".into(),
        ));
    }
    let line_bytes = match spec.kind {
        LoadKind::Read => 64.0,
        LoadKind::Rw => 128.0,
    };

    let phase = "lat loaded".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: spec.delays.len() as u64 });
    let delay = AtomicU64::new(spec.delays[0]);
    let quit = AtomicBool::new(false);
    let gens: Vec<Gen> = load_cpus.iter().map(|_| Gen { lines: AtomicU64::new(0) }).collect();
    let ready = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (k, &cpu) in load_cpus.iter().enumerate() {
            let (delay, quit, g, ready, failed) = (&delay, &quit, &gens[k], &ready, &failed);
            let mem = r.mem_node;
            let kind = spec.kind;
            let pages = opts.pages;
            handles.push(s.spawn(move || -> Result<(), LatError> {
                let res = sys::pin_to_cpu(cpu)
                    .and_then(|_| sys::Mapping::new(per_thread as usize, pages, mem));
                if res.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                ready.fetch_add(1, Ordering::SeqCst);
                let mut map = res?;
                generate(&mut map, kind, delay, quit, g);
                Ok(())
            }));
        }
        let chase = super::on_cpu(r.cpu, || {
            let mut a = arena(chase_size, opts, r.mem_node)?;
            warn_placement(ctx.observer, &a.placement);
            let mut ring = Ring::build(
                a.map.as_mut_slice(),
                opts.stride_bytes,
                opts.group_elems(),
                opts.seed,
            )?;
            while ready.load(Ordering::SeqCst) < load_cpus.len() as u64 {
                std::thread::sleep(Duration::from_millis(5));
            }
            if failed.load(Ordering::SeqCst) {
                return Ok(Vec::new()); // the generator's error is returned below
            }
            // Measure only once every load thread is moving lines (it first
            // faults its buffer in): a point taken before that would be an
            // idle point labelled loaded. Bounded, so an oversubscribed
            // machine still gets its points (and a warning).
            let started = Instant::now();
            while gens.iter().any(|g| g.lines.load(Ordering::Relaxed) == 0) {
                if started.elapsed() > Duration::from_secs(5) {
                    ctx.observer.event(Event::Warning(
                        "a load thread had not started after 5 s (is the machine busy?): \
                         the first loaded points may understate the load"
                            .into(),
                    ));
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut out = Vec::new();
            for (i, &d) in spec.delays.iter().enumerate() {
                if ctx.stop.is_stopped() {
                    break;
                }
                delay.store(d, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(30));
                let l0: u64 = gens.iter().map(|g| g.lines.load(Ordering::Relaxed)).sum();
                let t0 = Instant::now();
                let Some(sm) = measure::measure_ring(&mut ring, &ctx.timing, ctx.stop) else {
                    break;
                };
                let dt = t0.elapsed().as_secs_f64();
                let l1: u64 = gens.iter().map(|g| g.lines.load(Ordering::Relaxed)).sum();
                let Some(sum) = Summary::of(&sm.ns_per_load) else { break };
                let p = LoadedPoint {
                    mode: Mode::Loaded,
                    delay: d,
                    latency_ns: sum.median,
                    median_ns: sum.median,
                    p90_ns: sum.p90,
                    p99_ns: sum.p99,
                    spread_pct: sum.spread_pct,
                    load_gbs: (l1 - l0) as f64 * line_bytes / dt / 1e9,
                    load_threads: load_cpus.len(),
                    load_kind: spec.kind,
                    cpu: r.cpu,
                    mem_node: r.mem_node,
                    size_bytes: chase_size,
                    page_size: a.page.clone(),
                    placement: a.placement.clone(),
                };
                emit(ctx.observer, p.clone());
                out.push(p);
                ctx.observer.event(Event::Progress {
                    phase: phase.clone(),
                    done: i as u64 + 1,
                    what: format!("delay {d}"),
                });
            }
            Ok(out)
        });
        quit.store(true, Ordering::SeqCst);
        let mut gen_err = None;
        for h in handles {
            if let Ok(Err(e)) = h.join() {
                gen_err.get_or_insert(e);
            }
        }
        match (chase, gen_err) {
            (Ok(v), Some(e)) if v.is_empty() => Err(e),
            (r, _) => r,
        }
    });
    ctx.observer.event(Event::PhaseEnd { phase });
    result
}
