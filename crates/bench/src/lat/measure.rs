//! Timing a chase: a monotonic clock calibrated for its own overhead,
//! enough loads per sample that the clock is negligible, several samples,
//! each timed in chunks of about [`CHUNK_NS`] whose per-load times make
//! the latency histogram.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kernels::chase::Ring;

use crate::disturb::{Tally, ThreadClock};
use events::StopFlag;
use results::disturbance::Disturbance;
use results::stats::Summary;

/// How long to measure each point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Samples per point (each one a timed run of many dependent loads).
    pub samples: usize,
    /// Target length of one sample; the loads per sample are chosen from a
    /// probe so each sample lasts about this long.
    pub sample_time: Duration,
    /// Loads of the untimed warm-up walk at most (a full lap when smaller).
    pub max_warmup_loads: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing { samples: 11, sample_time: Duration::from_millis(20), max_warmup_loads: 1 << 22 }
    }
}

impl Timing {
    /// A quick setting for sweeps, matrices and tests.
    pub fn quick() -> Self {
        Timing { samples: 7, sample_time: Duration::from_millis(8), max_warmup_loads: 1 << 21 }
    }

    /// Chooses samples and sample length so that `points` measurements fit
    /// in `budget` (roughly; ring building is not counted).
    pub fn for_budget(budget: Duration, points: usize) -> Self {
        let per_point = budget.as_secs_f64() / points.max(1) as f64;
        let samples = if per_point > 0.5 {
            11
        } else if per_point > 0.1 {
            7
        } else {
            5
        };
        let t = (per_point / (samples as f64 * 1.5)).clamp(0.002, 0.05);
        Timing { samples, sample_time: Duration::from_secs_f64(t), max_warmup_loads: 1 << 21 }
    }
}

/// The cost of one `Instant::now()` pair, in ns: the median of many
/// back-to-back readings, measured once per process.
pub fn timer_overhead_ns() -> f64 {
    static CAL: OnceLock<f64> = OnceLock::new();
    *CAL.get_or_init(|| {
        let mut v: Vec<f64> = (0..2001)
            .map(|_| {
                let a = Instant::now();
                let b = Instant::now();
                (b - a).as_nanos() as f64
            })
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    })
}

/// Target length of one timed chunk of a sample, ns: long enough that the
/// clock (20-50 ns) stays near 0.1%, short enough that a sample gives
/// hundreds of values for the histogram.
pub const CHUNK_NS: f64 = 25_000.0;

/// Per-load times of the samples of one chase, in ns.
#[derive(Debug, Clone)]
pub struct ChaseSamples {
    /// The clean samples (every sample when none was clean).
    pub ns_per_load: Vec<f64>,
    /// The planned length of a sample.
    pub loads_per_sample: u64,
    /// The shortest kept sample, when disturbed samples made the later
    /// ones shorter.
    pub min_loads_per_sample: Option<u64>,
    /// Counts of the chase thread over the timed samples (`--counters`).
    pub counters: Option<results::counters::Counters>,
    /// ns per load of every whole chunk of every kept sample.
    pub chunks: Vec<f64>,
    pub loads_per_chunk: u64,
    /// Samples kept and discarded, time lost to other work.
    pub disturbance: Disturbance,
    /// Samples asked for: fewer than half of them clean makes the figure
    /// unstable.
    pub wanted: usize,
}

impl ChaseSamples {
    pub fn summary(&self) -> Option<Summary> {
        Summary::of(&self.ns_per_load)
    }

    /// The chunks' latencies in log buckets (`None` when there are none).
    pub fn histogram(&self) -> Option<results::hist::Histogram> {
        let h = results::hist::Histogram::of(&self.chunks, self.loads_per_chunk);
        (h.count > 0).then_some(h)
    }

    /// Whether the figure can be trusted ([`Disturbance::stable`] with
    /// half the samples asked for).
    pub fn stable(&self) -> bool {
        self.disturbance.stable(min_clean(self.wanted))
    }
}

/// Clean samples a figure needs: half of those asked for, rounded up.
pub fn min_clean(wanted: usize) -> usize {
    wanted.div_ceil(2).max(1)
}

/// Disturbed samples may shorten the next ones down to this fraction of
/// the planned length (and never below four chunks).
pub const SHORTEST_SAMPLE_DIVISOR: u64 = 16;
/// Wall time the samples of one figure may take, as a multiple of the
/// planned time, while disturbed ones are replaced.
pub const SAMPLE_TIME_ALLOWANCE: u32 = 3;

/// Times one walk of `loads` loads, minus the timer's own cost, in ns.
fn timed(ring: &mut Ring<'_>, loads: u64) -> f64 {
    let t0 = Instant::now();
    ring.walk(loads);
    let dt = t0.elapsed().as_nanos() as f64 - timer_overhead_ns();
    dt.max(0.0)
}

/// The next sample's length after one was disturbed: half, down to
/// `floor`.
pub fn shorter(loads: u64, floor: u64) -> u64 {
    (loads / 2).max(floor).min(loads)
}

/// Measures a ring: an untimed warm-up (a full lap when the ring is
/// small, so caches hold it), a probe to size the samples, then samples
/// until `timing.samples` are clean. Each sample is checked for
/// disturbance ([`crate::disturb`]): a disturbed one is discarded and the
/// next is half as long (down to 1/[`SHORTEST_SAMPLE_DIVISOR`]), within
/// [`SAMPLE_TIME_ALLOWANCE`] x the planned time. Stops early (keeping
/// what it has) when `stop` is set; `None` when stopped before the first
/// sample.
pub fn measure_ring(ring: &mut Ring<'_>, timing: &Timing, stop: &StopFlag) -> Option<ChaseSamples> {
    let lap = ring.elems() as u64;
    ring.walk(lap.min(timing.max_warmup_loads).max(1));
    if lap <= timing.max_warmup_loads / 4 {
        ring.walk(lap);
    }
    // probe: grow until a walk takes at least 1 ms, then once more at that
    // length (the faster of the two: a preempted probe would shorten the
    // samples)
    let mut probe = 1024u64;
    let ns_per_load = loop {
        let t = timed(ring, probe);
        if t >= 1e6 || probe >= 1 << 30 {
            let again = timed(ring, probe);
            break (t.min(again) / probe as f64).max(0.05);
        }
        probe *= 4;
    };
    let target = timing.sample_time.as_nanos() as f64;
    // at least 100k loads, so the clock's ~20-50 ns is far below 0.1%
    let loads = ((target / ns_per_load) as u64).max(100_000);
    let chunk = ((CHUNK_NS / ns_per_load) as u64).clamp(256, loads);
    let floor = (loads / SHORTEST_SAMPLE_DIVISOR).max(4 * chunk).min(loads);
    let wanted = timing.samples.max(1);
    let allowance = timing.sample_time * wanted as u32 * SAMPLE_TIME_ALLOWANCE;
    let clock = ThreadClock::open();
    let mut tally = Tally::new();
    let mut clean = Vec::with_capacity(wanted);
    let mut disturbed = Vec::new();
    let mut events = crate::counting::requested()
        .then(|| counters::EventSet::open(counters::Target::ThisThread, "chase thread"));
    if let Some(e) = &mut events {
        e.enable();
    }
    let mut chunks = Vec::with_capacity(wanted * (loads / chunk + 1) as usize);
    let mut sample_chunks = Vec::with_capacity((loads / chunk + 1) as usize);
    let (mut now, mut shortest) = (loads, loads);
    let started = Instant::now();
    while clean.len() < wanted {
        if stop.is_stopped() || (tally.samples() >= wanted && started.elapsed() > allowance) {
            break;
        }
        sample_chunks.clear();
        let (total, c) = clock.around(|| {
            let (mut left, mut total) = (now, 0.0);
            while left > 0 {
                let n = left.min(chunk);
                let t = timed(ring, n);
                if n == chunk {
                    sample_chunks.push(t / n as f64);
                }
                total += t;
                left -= n;
            }
            total
        });
        if tally.add(&[c]) {
            clean.push(total / now as f64);
            chunks.extend_from_slice(&sample_chunks);
            shortest = shortest.min(now);
        } else {
            disturbed.push(total / now as f64);
            now = shorter(now, floor);
        }
    }
    let counters = events.as_mut().map(|e| {
        e.disable();
        e.read()
    });
    let ns_per_load = if clean.is_empty() { disturbed } else { clean };
    if ns_per_load.is_empty() {
        return None;
    }
    Some(ChaseSamples {
        ns_per_load,
        loads_per_sample: loads,
        min_loads_per_sample: (shortest < loads).then_some(shortest),
        chunks,
        loads_per_chunk: chunk,
        counters,
        disturbance: tally.finish(),
        wanted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_gives_fewer_shorter_samples_when_tight() {
        let loose = Timing::for_budget(Duration::from_secs(60), 10);
        let tight = Timing::for_budget(Duration::from_secs(1), 100);
        assert!(loose.samples > tight.samples);
        assert!(loose.sample_time > tight.sample_time);
    }

    #[test]
    fn a_short_real_chase_gives_positive_samples() {
        let mut v = vec![0u64; 32 * 1024 / 8];
        // SAFETY: a u64 vector viewed as bytes.
        let buf =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 8) };
        let mut ring = Ring::build(buf, 64, 64, 1).unwrap();
        let t =
            Timing { samples: 3, sample_time: Duration::from_millis(1), max_warmup_loads: 1 << 16 };
        let s = measure_ring(&mut ring, &t, &StopFlag::new()).unwrap();
        assert_eq!(s.ns_per_load.len(), 3);
        assert!(s.ns_per_load.iter().all(|&x| x > 0.0 && x.is_finite()));
        assert!(s.loads_per_sample >= 100_000);
        // every sample is cut into whole chunks that make the histogram
        assert!(s.loads_per_chunk >= 256 && s.loads_per_chunk <= s.loads_per_sample);
        let whole = (s.loads_per_sample / s.loads_per_chunk) as usize;
        match s.min_loads_per_sample {
            None => assert_eq!(s.chunks.len(), 3 * whole),
            // a busy machine shortened some samples
            Some(short) => assert!(s.chunks.len() >= 3 * (short / s.loads_per_chunk) as usize),
        }
        // the figure is made of the clean samples (of all, when none was clean)
        let d = &s.disturbance;
        assert_eq!(s.ns_per_load.len(), if d.clean > 0 { d.clean } else { d.disturbed });
        let h = s.histogram().unwrap();
        assert_eq!(h.count as usize, s.chunks.len());
        assert_eq!(h.loads_per_value, s.loads_per_chunk);
    }

    #[test]
    fn disturbed_samples_halve_the_next_down_to_the_floor() {
        assert_eq!(shorter(1_000_000, 62_500), 500_000);
        assert_eq!(shorter(100_000, 62_500), 62_500);
        assert_eq!(shorter(62_500, 62_500), 62_500);
        // a floor above the length never lengthens it
        assert_eq!(shorter(1_000, 4_000), 1_000);
    }

    #[test]
    fn half_the_samples_asked_for_must_be_clean() {
        assert_eq!(min_clean(11), 6);
        assert_eq!(min_clean(7), 4);
        assert_eq!(min_clean(1), 1);
        assert_eq!(min_clean(0), 1);
    }

    #[test]
    fn a_stopped_measurement_keeps_nothing_it_did_not_take() {
        let mut v = vec![0u64; 4096 / 8];
        // SAFETY: a u64 vector viewed as bytes.
        let buf =
            unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), v.len() * 8) };
        let mut ring = Ring::build(buf, 64, 64, 1).unwrap();
        let stop = StopFlag::new();
        stop.stop();
        assert!(measure_ring(&mut ring, &Timing::quick(), &stop).is_none());
    }
}
