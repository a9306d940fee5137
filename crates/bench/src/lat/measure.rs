//! Timing a chase: a monotonic clock calibrated for its own overhead,
//! enough loads per sample that the clock is negligible, several samples,
//! each timed in chunks of about [`CHUNK_NS`] whose per-load times make
//! the latency histogram.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kernels::chase::Ring;

use crate::disturb::{self, Mark, Tally, ThreadClock};
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

/// What a chase walks: a [`Ring`] (or, in tests, a stand-in whose walk
/// advances a fake clock).
pub trait Walk {
    /// Elements in one lap.
    fn elems(&self) -> u64;
    /// Follows `loads` dependent loads.
    fn walk(&mut self, loads: u64);
}

impl Walk for Ring<'_> {
    fn elems(&self) -> u64 {
        Ring::elems(self) as u64
    }
    fn walk(&mut self, loads: u64) {
        Ring::walk(self, loads);
    }
}

/// What a chase measurement reads from outside the ring: the clock, the
/// clock's own cost, and the measuring thread's scheduling around each
/// sample. [`LiveEnv`] is the real one; the tests give a fake clock, so
/// that the arithmetic from loads and time to ns per load is checked
/// exactly.
pub trait ChaseEnv {
    /// Monotonic time, ns, from an origin of the environment's choosing.
    fn now_ns(&mut self) -> u64;
    /// The cost of one pair of [`ChaseEnv::now_ns`] readings, ns: taken
    /// off every timed walk.
    fn overhead_ns(&self) -> f64;
    /// The calling thread's scheduling state (run delay, switches, CPU).
    fn mark(&mut self) -> Mark;
    /// The timed samples begin (event counters are enabled here).
    fn samples_begin(&mut self) {}
    /// The timed samples are over: the counts over them, if counted.
    fn samples_end(&mut self) -> Option<results::counters::Counters> {
        None
    }
}

/// The real environment: `Instant`, [`timer_overhead_ns`], the thread's
/// schedstat and, with `--counters`, its event counts over the samples.
pub struct LiveEnv {
    origin: Instant,
    clock: ThreadClock,
    events: Option<counters::EventSet>,
}

impl LiveEnv {
    /// Opened on the measuring thread (its schedstat and counters).
    pub fn open() -> LiveEnv {
        LiveEnv {
            origin: Instant::now(),
            clock: ThreadClock::open(),
            events: crate::counting::requested()
                .then(|| counters::EventSet::open(counters::Target::ThisThread, "chase thread")),
        }
    }
}

impl ChaseEnv for LiveEnv {
    fn now_ns(&mut self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }
    fn overhead_ns(&self) -> f64 {
        timer_overhead_ns()
    }
    fn mark(&mut self) -> Mark {
        self.clock.mark()
    }
    fn samples_begin(&mut self) {
        if let Some(e) = &mut self.events {
            e.enable();
        }
    }
    fn samples_end(&mut self) -> Option<results::counters::Counters> {
        self.events.as_mut().map(|e| {
            e.disable();
            e.read()
        })
    }
}

/// Times one walk of `loads` loads, minus the timer's own cost, in ns.
fn timed(ring: &mut impl Walk, env: &mut impl ChaseEnv, loads: u64) -> f64 {
    let t0 = env.now_ns();
    ring.walk(loads);
    let dt = env.now_ns().saturating_sub(t0) as f64 - env.overhead_ns();
    dt.max(0.0)
}

/// ns per load of a walk of `loads` loads that took `ns`.
pub fn ns_per_load(ns: f64, loads: u64) -> f64 {
    ns / loads as f64
}

/// The next sample's length after one was disturbed: half, down to
/// `floor`.
pub fn shorter(loads: u64, floor: u64) -> u64 {
    (loads / 2).max(floor).min(loads)
}

/// How a chase's samples are cut, from the probe's ns per load and the
/// planned sample time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplePlan {
    /// Loads of one sample as planned (at least 100 000).
    pub loads: u64,
    /// Loads of one timed chunk (about [`CHUNK_NS`], at least 256).
    pub chunk: u64,
    /// The shortest a disturbed sample's successors may get.
    pub floor: u64,
}

impl SamplePlan {
    pub fn of(probe_ns_per_load: f64, sample_time: Duration) -> SamplePlan {
        let target = sample_time.as_nanos() as f64;
        // at least 100k loads, so the clock's ~20-50 ns is far below 0.1%
        let loads = ((target / probe_ns_per_load) as u64).max(100_000);
        let chunk = ((CHUNK_NS / probe_ns_per_load) as u64).clamp(256, loads);
        let floor = (loads / SHORTEST_SAMPLE_DIVISOR).max(4 * chunk).min(loads);
        SamplePlan { loads, chunk, floor }
    }
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
    measure_with(ring, &mut LiveEnv::open(), timing, stop)
}

/// [`measure_ring`] on any [`Walk`] in any [`ChaseEnv`]: the whole
/// arithmetic, with the clock and the scheduler as inputs.
pub fn measure_with(
    ring: &mut impl Walk,
    env: &mut impl ChaseEnv,
    timing: &Timing,
    stop: &StopFlag,
) -> Option<ChaseSamples> {
    let lap = ring.elems();
    ring.walk(lap.min(timing.max_warmup_loads).max(1));
    if lap <= timing.max_warmup_loads / 4 {
        ring.walk(lap);
    }
    // probe: grow until a walk takes at least 1 ms, then once more at that
    // length (the faster of the two: a preempted probe would shorten the
    // samples)
    let mut probe = 1024u64;
    let probe_ns = loop {
        let t = timed(ring, env, probe);
        if t >= 1e6 || probe >= 1 << 30 {
            let again = timed(ring, env, probe);
            break ns_per_load(t.min(again), probe).max(0.05);
        }
        probe *= 4;
    };
    let SamplePlan { loads, chunk, floor } = SamplePlan::of(probe_ns, timing.sample_time);
    let wanted = timing.samples.max(1);
    let allowance = (timing.sample_time * wanted as u32 * SAMPLE_TIME_ALLOWANCE).as_nanos() as u64;
    let mut tally = Tally::new();
    let mut clean = Vec::with_capacity(wanted);
    let mut disturbed = Vec::new();
    env.samples_begin();
    let mut chunks = Vec::with_capacity(wanted * (loads / chunk + 1) as usize);
    let mut sample_chunks = Vec::with_capacity((loads / chunk + 1) as usize);
    let (mut now, mut shortest) = (loads, loads);
    let started = env.now_ns();
    while clean.len() < wanted {
        if stop.is_stopped()
            || (tally.samples() >= wanted && env.now_ns().saturating_sub(started) > allowance)
        {
            break;
        }
        sample_chunks.clear();
        let before = env.mark();
        let w0 = env.now_ns();
        let (mut left, mut total) = (now, 0.0);
        while left > 0 {
            let n = left.min(chunk);
            let t = timed(ring, env, n);
            if n == chunk {
                sample_chunks.push(ns_per_load(t, n));
            }
            total += t;
            left -= n;
        }
        let wall = env.now_ns().saturating_sub(w0);
        let c = disturb::check(&before, &env.mark(), wall);
        if tally.add(&[c]) {
            clean.push(ns_per_load(total, now));
            chunks.extend_from_slice(&sample_chunks);
            shortest = shortest.min(now);
        } else {
            disturbed.push(ns_per_load(total, now));
            now = shorter(now, floor);
        }
    }
    let counters = env.samples_end();
    let figures = if clean.is_empty() { disturbed } else { clean };
    if figures.is_empty() {
        return None;
    }
    Some(ChaseSamples {
        ns_per_load: figures,
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

    use std::cell::Cell;

    /// A fake ring: each load costs `ns_per_load` ns of the shared fake
    /// time, and it counts the loads walked.
    struct FakeRing<'a> {
        elems: u64,
        ns_per_load: u64,
        time: &'a Cell<u64>,
        walked: u64,
    }

    impl Walk for FakeRing<'_> {
        fn elems(&self) -> u64 {
            self.elems
        }
        fn walk(&mut self, loads: u64) {
            self.time.set(self.time.get() + loads * self.ns_per_load);
            self.walked += loads;
        }
    }

    /// A fake clock: each reading costs `read_ns` (a pair of them is the
    /// overhead it declares); the scheduler's run delay grows by
    /// `waits[k]` ns during sample `k` (counted from the first mark).
    struct FakeEnv<'a> {
        time: &'a Cell<u64>,
        read_ns: u64,
        waits: Vec<u64>,
        marks: usize,
        run_delay: u64,
    }

    impl<'a> FakeEnv<'a> {
        fn new(time: &'a Cell<u64>, read_ns: u64, waits: Vec<u64>) -> Self {
            FakeEnv { time, read_ns, waits, marks: 0, run_delay: 0 }
        }
    }

    impl ChaseEnv for FakeEnv<'_> {
        fn now_ns(&mut self) -> u64 {
            let t = self.time.get();
            self.time.set(t + self.read_ns);
            t
        }
        fn overhead_ns(&self) -> f64 {
            self.read_ns as f64
        }
        fn mark(&mut self) -> Mark {
            // the second mark of a sample closes it: add its wait
            if self.marks % 2 == 1 {
                self.run_delay += self.waits.get(self.marks / 2).copied().unwrap_or(0);
            }
            self.marks += 1;
            Mark { run_delay_ns: Some(self.run_delay), switches: Some(0), cpu: Some(0) }
        }
    }

    fn quick7() -> Timing {
        Timing { samples: 7, sample_time: Duration::from_millis(8), max_warmup_loads: 1 << 21 }
    }

    /// 100 ns per load on the fake clock, the clock's own 30 ns taken
    /// off every chunk: every figure is exactly 100 ns per load.
    #[test]
    fn ns_per_load_is_the_time_over_the_loads_exactly() {
        let time = Cell::new(0);
        let mut ring = FakeRing { elems: 1 << 20, ns_per_load: 100, time: &time, walked: 0 };
        let mut env = FakeEnv::new(&time, 30, vec![]);
        let s = measure_with(&mut ring, &mut env, &quick7(), &StopFlag::new()).unwrap();
        assert_eq!(s.ns_per_load, vec![100.0; 7]);
        // 8 ms at 100 ns is 80 000 loads: raised to the 100 000 minimum;
        // 25 us chunks are 250 loads: raised to 256, so 390 whole chunks
        assert_eq!((s.loads_per_sample, s.loads_per_chunk), (100_000, 256));
        assert_eq!(s.min_loads_per_sample, None);
        assert_eq!(s.chunks.len(), 7 * 390);
        assert!(s.chunks.iter().all(|&c| c == 100.0), "{:?}", &s.chunks[..4]);
        let sum = s.summary().unwrap();
        assert_eq!((sum.median, sum.min, sum.max, sum.n), (100.0, 100.0, 100.0, 7));
        let h = s.histogram().unwrap();
        assert_eq!((h.count, h.loads_per_value), (7 * 390, 256));
        let d = &s.disturbance;
        assert_eq!((d.clean, d.disturbed, d.lost_pct), (7, 0, 0.0));
        assert!(s.stable());
        // warm-up: a full lap at most the cap (1M elements < 2M), then
        // the probe 1024, 4096, 16384 (1.6 ms >= 1 ms) and once again,
        // then the samples
        assert_eq!(ring.walked, (1 << 20) + 1024 + 4096 + 2 * 16384 + 7 * 100_000);
    }

    #[test]
    fn a_slower_ring_gives_longer_chunks_and_fewer_loads() {
        // 250 ns per load: 20 ms is 80 000 loads (100 000), chunks of 100
        // loads raised to 256; at 2 ns, 10 M loads in chunks of 12 500.
        // Walked: a small ring (4096 elements) is lapped twice to warm up,
        // then the probe (at 250 ns 1024 then 4096 twice; at 2 ns up to
        // 1 M loads, twice) and 3 samples
        let probe_2ns: u64 = [1024, 4096, 16_384, 65_536, 262_144, 2 * 1_048_576].iter().sum();
        for (ns, loads, chunk, walked) in [
            (250, 100_000, 256, 2 * 4096 + 1024 + 2 * 4096 + 3 * 100_000),
            (2, 10_000_000, 12_500, 2 * 4096 + probe_2ns + 3 * 10_000_000),
        ] {
            let time = Cell::new(0);
            let mut ring = FakeRing { elems: 4096, ns_per_load: ns, time: &time, walked: 0 };
            let mut env = FakeEnv::new(&time, 25, vec![]);
            let t = Timing { samples: 3, ..Timing::default() };
            let s = measure_with(&mut ring, &mut env, &t, &StopFlag::new()).unwrap();
            assert_eq!(s.ns_per_load, vec![ns as f64; 3], "{ns} ns");
            assert_eq!((s.loads_per_sample, s.loads_per_chunk), (loads, chunk), "{ns} ns");
            assert_eq!(ring.walked, walked, "{ns} ns");
        }
    }

    #[test]
    fn disturbed_samples_are_dropped_and_the_next_one_is_half_as_long() {
        let time = Cell::new(0);
        let mut ring = FakeRing { elems: 1 << 20, ns_per_load: 100, time: &time, walked: 0 };
        // a sample of 100 000 loads lasts 10 ms: 50 us waited is 0.5%
        // (kept), 200 us is 2% (dropped); samples 1 and 2 are dropped
        let waits = vec![50_000, 200_000, 200_000, 0, 0, 0, 0, 0, 0];
        let mut env = FakeEnv::new(&time, 30, waits);
        let s = measure_with(&mut ring, &mut env, &quick7(), &StopFlag::new()).unwrap();
        assert_eq!(s.ns_per_load, vec![100.0; 7], "the kept figures");
        let d = &s.disturbance;
        assert_eq!((d.clean, d.disturbed), (7, 2));
        // 100 000 loads, then 50 000 after the first drop, 25 000 after
        // the second; they stay short
        assert_eq!(s.min_loads_per_sample, Some(25_000));
        assert_eq!(s.loads_per_sample, 100_000);
        // walked: 100 000 (kept), 100 000 and 50 000 (dropped), then six
        // of 25 000 (kept, 97 whole chunks each)
        assert_eq!(s.chunks.len(), 390 + 6 * 97);
        assert_eq!(
            ring.walked,
            (1 << 20) + 1024 + 4096 + 2 * 16384 + 2 * 100_000 + 50_000 + 6 * 25_000
        );
        // 450 us waited over all the samples' time, under 10%: stable
        assert!(s.stable(), "{d:?}");
    }

    #[test]
    fn with_no_clean_sample_the_figure_is_made_of_the_disturbed_ones() {
        let time = Cell::new(0);
        let mut ring = FakeRing { elems: 1 << 20, ns_per_load: 100, time: &time, walked: 0 };
        // every sample waits half its time: none is kept, and the samples
        // stop once they used 3 x their planned 7 x 8 ms
        let mut env = FakeEnv::new(&time, 30, vec![5_000_000; 1000]);
        let s = measure_with(&mut ring, &mut env, &quick7(), &StopFlag::new()).unwrap();
        let d = &s.disturbance;
        assert_eq!(d.clean, 0);
        assert_eq!(s.ns_per_load.len(), d.disturbed);
        assert!(s.ns_per_load.iter().all(|&x| x == 100.0));
        assert!(!s.stable());
        // the floor: 100 000 / 16 = 6 250 loads (4 chunks are 1 024)
        assert_eq!(s.min_loads_per_sample, None, "no kept sample was shortened");
        // 10 + 5 + 2.5 + 1.25 ms, then 0.625 ms each, until the samples
        // have taken 3 x their planned 7 x 8 ms (the clock's own readings,
        // 30 ns each, count too: well under 1 ms in all)
        let planned = 168_000_000u64;
        let spent: u64 = [100_000u64, 50_000, 25_000, 12_500]
            .iter()
            .chain(std::iter::repeat_n(&6_250, d.disturbed - 4))
            .map(|l| l * 100)
            .sum();
        assert!(spent + 1_000_000 > planned, "stopped early, at {spent} ns");
        assert!(spent <= planned + 625_000, "went on past the allowance: {spent} ns");
    }

    #[test]
    fn a_sample_plan_follows_the_probe() {
        let p = SamplePlan::of(100.0, Duration::from_millis(20));
        assert_eq!(p, SamplePlan { loads: 200_000, chunk: 256, floor: 12_500 });
        let p = SamplePlan::of(1.0, Duration::from_millis(8));
        assert_eq!(p, SamplePlan { loads: 8_000_000, chunk: 25_000, floor: 500_000 });
        // the floor is never under four chunks, nor over the sample
        let p = SamplePlan::of(0.5, Duration::from_micros(100));
        assert_eq!(p, SamplePlan { loads: 200_000, chunk: 50_000, floor: 200_000 });
    }

    #[test]
    fn ns_per_load_divides_by_the_loads() {
        assert_eq!(ns_per_load(25_600.0, 256), 100.0);
        assert_eq!(ns_per_load(1.0, 4), 0.25);
    }

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
        // a busy machine may leave fewer than 3 clean samples: they stop
        // at 3 x their planned time; the figure is made of the clean ones
        // (of all, when none was clean)
        let d = &s.disturbance;
        assert!(d.clean <= 3 && d.clean + d.disturbed >= 3, "{d:?}");
        assert_eq!(s.ns_per_load.len(), if d.clean > 0 { d.clean } else { d.disturbed });
        assert!(s.ns_per_load.iter().all(|&x| x > 0.0 && x.is_finite()));
        assert!(s.loads_per_sample >= 100_000);
        // every kept sample is cut into whole chunks that make the histogram
        assert!(s.loads_per_chunk >= 256 && s.loads_per_chunk <= s.loads_per_sample);
        let whole = (s.loads_per_sample / s.loads_per_chunk) as usize;
        match s.min_loads_per_sample {
            None => assert_eq!(s.chunks.len(), d.clean * whole),
            // a busy machine shortened some samples
            Some(short) => {
                assert!(s.chunks.len() >= d.clean * (short / s.loads_per_chunk) as usize)
            }
        }
        match s.histogram() {
            Some(h) => {
                assert_eq!(h.count as usize, s.chunks.len());
                assert_eq!(h.loads_per_value, s.loads_per_chunk);
            }
            None => assert_eq!(d.clean, 0, "kept samples make a histogram"),
        }
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
