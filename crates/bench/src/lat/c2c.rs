//! Core-to-core latency: one cache line bounced between two pinned threads.
//!
//! Thread A writes an odd value and spins until it reads the next even
//! value, which thread B writes as soon as it sees the odd one. One round
//! trip moves the line twice, so the one-way latency is half a round trip.

use results::lat::{C2cResult, Relation};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Instant;

use topo::Topology;

use super::{emit, measure, sys, usable_cpus, LatError};
use crate::disturb;
use events::{Event, StopFlag};
use results::lat::Mode;
use results::stats::Summary;

/// The relation of two CPUs; `None` when either is unknown.
pub fn relation(topo: &Topology, a: u32, b: u32) -> Option<Relation> {
    let (ca, cb) = (topo.cpu(a)?, topo.cpu(b)?);
    Some(if ca.thread_siblings.contains(b) {
        Relation::Smt
    } else if ca.package != cb.package {
        Relation::CrossPackage
    } else if ca.node == cb.node {
        Relation::Node
    } else {
        Relation::Package
    })
}

/// Which pairs to measure.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct C2cSpec {
    /// Pairs to measure; empty = choose (see `pairs_per_relation`).
    pub pairs: Vec<(u32, u32)>,
    /// When choosing: at most this many pairs of each relation, all with
    /// the first usable CPU of the first package as one end.
    pub pairs_per_relation: usize,
    /// Round trips per sample (0 = 20 000).
    pub round_trips: u64,
}

/// Picks pairs: for each relation, up to `per` partners of one anchor CPU,
/// spread over the candidates.
pub fn choose_pairs(topo: &Topology, usable: &[u32], per: usize) -> Vec<(u32, u32)> {
    let Some(&a) = usable.first() else { return Vec::new() };
    let mut out = Vec::new();
    for rel in [Relation::Smt, Relation::Node, Relation::Package, Relation::CrossPackage] {
        let cands: Vec<u32> = usable
            .iter()
            .copied()
            .filter(|&b| b != a && relation(topo, a, b) == Some(rel))
            .collect();
        for b in super::spread_sample(&cands, per.max(1)) {
            out.push((a, b));
        }
    }
    if out.is_empty() {
        // relations unknown: take any partners
        for &b in usable.iter().filter(|&&b| b != a).take(per.max(1)) {
            out.push((a, b));
        }
    }
    out
}

#[repr(align(128))]
struct Line(AtomicU64);

/// One-way latency from `round_trips` round trips that took `elapsed_ns`
/// on a clock whose pair of readings costs `overhead_ns`: a round trip
/// moves the line twice.
pub fn one_way_ns(elapsed_ns: f64, overhead_ns: f64, round_trips: u64) -> f64 {
    (elapsed_ns - overhead_ns) / round_trips as f64 / 2.0
}

/// What [`bounce`] measured: one-way ns of the kept samples (of all
/// when none was clean) and the disturbance of both threads.
struct Bounced {
    ns: Vec<f64>,
    disturbance: results::disturbance::Disturbance,
    stable: bool,
}

/// Bounces a line between `a` and `b` until `samples` samples of `trips`
/// round trips are clean (both threads count: a preempted responder
/// stalls the round trip as much as a preempted measurer); a disturbed
/// sample is discarded and the next one is half as long, within
/// [`measure::SAMPLE_TIME_ALLOWANCE`] x `samples` samples.
fn bounce(
    a: u32,
    b: u32,
    samples: usize,
    trips: u64,
    stop: &StopFlag,
) -> Result<Bounced, LatError> {
    let line = Line(AtomicU64::new(0));
    let quit = AtomicBool::new(false);
    let responder_tid = AtomicI32::new(0);
    std::thread::scope(|s| {
        let responder = s.spawn(|| -> Result<(), LatError> {
            let r = sys::pin_to_cpu(b);
            if r.is_err() {
                quit.store(true, Ordering::SeqCst);
                return r;
            }
            responder_tid.store(disturb::gettid(), Ordering::SeqCst);
            let mut last = 0u64;
            loop {
                let v = line.0.load(Ordering::Acquire);
                if v != last && v % 2 == 1 {
                    line.0.store(v + 1, Ordering::Release);
                    last = v + 1;
                } else if quit.load(Ordering::Relaxed) {
                    return Ok(());
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        // The measuring side runs on a thread of its own too: pinning the
        // caller would confine every later step of the process (a second
        // `run --repeat` found one usable CPU and refused loaded latency).
        let measurer = s.spawn(|| -> Result<Bounced, LatError> {
            sys::pin_to_cpu(a)?;
            let mut v = 1u64;
            let mut trip = |n: u64| {
                let t0 = Instant::now();
                for _ in 0..n {
                    line.0.store(v, Ordering::Release);
                    while line.0.load(Ordering::Acquire) != v + 1 {
                        std::hint::spin_loop();
                    }
                    v += 2;
                }
                one_way_ns(t0.elapsed().as_nanos() as f64, measure::timer_overhead_ns(), n)
            };
            // warm-up: a few hundred trips, also waits for the responder
            if stop.is_stopped() || quit.load(Ordering::Relaxed) {
                return Ok(Bounced {
                    ns: Vec::new(),
                    disturbance: Default::default(),
                    stable: false,
                });
            }
            trip(500);
            let own = disturb::ThreadClock::open();
            let other = disturb::OtherThread::open(responder_tid.load(Ordering::SeqCst), b);
            let mut tally = disturb::Tally::new();
            let (mut clean, mut disturbed) = (Vec::new(), Vec::new());
            let floor = (trips / measure::SHORTEST_SAMPLE_DIVISOR).max(100).min(trips);
            let mut now = trips;
            let attempts = samples * measure::SAMPLE_TIME_ALLOWANCE as usize;
            while clean.len() < samples && tally.samples() < attempts {
                if stop.is_stopped() || quit.load(Ordering::Relaxed) {
                    break;
                }
                let theirs = other.mark();
                let (ns, mine) = own.around(|| trip(now));
                let theirs = disturb::check(&theirs, &other.mark(), mine.wall_ns);
                if tally.add(&[mine, theirs]) {
                    clean.push(ns);
                } else {
                    disturbed.push(ns);
                    now = measure::shorter(now, floor);
                }
            }
            let disturbance = tally.finish();
            let stable = disturbance.stable(measure::min_clean(samples));
            let ns = if clean.is_empty() { disturbed } else { clean };
            Ok(Bounced { ns, disturbance, stable })
        });
        let run = measurer
            .join()
            .unwrap_or_else(|_| Err(LatError::Panicked("the c2c measuring thread".into())));
        quit.store(true, Ordering::SeqCst);
        let resp = responder
            .join()
            .unwrap_or_else(|_| Err(LatError::Panicked("the c2c responder thread".into())));
        let out = run?;
        resp?;
        Ok(out)
    })
}

/// Core-to-core latency for the chosen or given pairs.
pub fn c2c(
    topo: &Topology,
    spec: &C2cSpec,
    ctx: &super::Ctx<'_>,
) -> Result<Vec<C2cResult>, LatError> {
    let usable: Vec<u32> = usable_cpus(topo).iter().collect();
    if usable.len() < 2 {
        return Err(LatError::BadRequest(format!(
            "core-to-core latency needs two usable CPUs; this process may use {}",
            usable.len()
        )));
    }
    let pairs = if spec.pairs.is_empty() {
        choose_pairs(topo, &usable, spec.pairs_per_relation)
    } else {
        spec.pairs.clone()
    };
    for &(a, b) in &pairs {
        for c in [a, b] {
            if !usable.contains(&c) {
                return Err(LatError::BadRequest(format!(
                    "CPU {c} is not online or not allowed for this process (usable CPUs: {})",
                    usable_cpus(topo)
                )));
            }
        }
        if a == b {
            return Err(LatError::BadRequest(format!(
                "a pair needs two different CPUs, got {a},{b}"
            )));
        }
    }
    let trips = if spec.round_trips == 0 { 20_000 } else { spec.round_trips };
    let phase = "lat c2c".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: pairs.len() as u64 });
    let mut out = Vec::new();
    let mut unstable = disturb::Unstable::new();
    for (i, &(a, b)) in pairs.iter().enumerate() {
        if ctx.stop.is_stopped() {
            break;
        }
        let got = bounce(a, b, ctx.timing.samples.max(3), trips, ctx.stop)?;
        let Some(s) = Summary::of(&got.ns) else { break };
        let r = C2cResult {
            mode: Mode::C2c,
            cpu_a: a,
            cpu_b: b,
            relation: relation(topo, a, b),
            median_ns: s.median,
            p90_ns: s.p90,
            p99_ns: s.p99,
            min_ns: s.min,
            max_ns: s.max,
            spread_pct: s.spread_pct,
            samples: s.n,
            round_trips_per_sample: trips,
            stable: got.stable,
            disturbance: Some(got.disturbance),
        };
        unstable.note(r.stable, r.disturbance.as_ref());
        emit(ctx.observer, r.clone());
        out.push(r);
        ctx.observer.event(Event::Progress {
            phase: phase.clone(),
            done: i as u64 + 1,
            what: format!("CPU {a} <-> CPU {b}"),
        });
    }
    ctx.observer.event(Event::PhaseEnd { phase });
    unstable.warn(ctx.observer, "lat c2c");
    if out.is_empty() && ctx.stop.is_stopped() {
        return Err(LatError::Stopped);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_way_is_half_a_round_trip_after_the_clock() {
        // 20 000 round trips in 4 ms and 40 ns: 200 ns a trip, 100 one way
        assert_eq!(one_way_ns(4_000_040.0, 40.0, 20_000), 100.0);
        assert_eq!(one_way_ns(300.0, 0.0, 1), 150.0);
    }

    /// `bounce` leaves the calling thread's affinity as it found it: left
    /// pinned to CPU `a`, every later step of the process (the next run of
    /// `run --repeat`) would see one usable CPU.
    #[test]
    fn bouncing_leaves_the_callers_affinity_alone() {
        let before = place::current_thread_affinity().unwrap();
        let cpus: Vec<u32> = before.iter().collect();
        assert!(cpus.len() >= 2, "this test needs two CPUs to tell a pin: {before}");
        let (a, b) = (cpus[0], cpus[cpus.len() - 1]);
        let v = bounce(a, b, 2, 100, &StopFlag::new()).unwrap();
        let d = &v.disturbance;
        assert_eq!(v.ns.len(), if d.clean > 0 { d.clean } else { d.disturbed });
        assert!(d.clean <= 2);
        assert_eq!(place::current_thread_affinity().unwrap(), before, "pinned to CPU {a}");
    }
}
