//! Telling disturbed samples apart: before and after each sample (outside
//! the timed region) a measuring thread reads its run delay (ns spent
//! runnable but not running, the second field of
//! `/proc/thread-self/schedstat`, opened once and read with `pread`), its
//! involuntary context switches (`getrusage(RUSAGE_THREAD)`) and the CPU
//! it is on (`sched_getcpu`). [`check`] turns two readings into a
//! verdict on the sample, and a [`Tally`] adds a figure's samples up into
//! the [`Disturbance`] its record carries. The rule and the record are
//! `results::disturbance`'s.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use results::disturbance::{Disturbance, Source, SAMPLE_TOLERANCE_PCT};

use events::{Event, Observer};

/// One reading of a thread's scheduling state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mark {
    /// Total run delay, ns (`None`: no schedstat to read).
    pub run_delay_ns: Option<u64>,
    /// Involuntary context switches so far (`None`: unknown, e.g. for
    /// another thread, whose switches `getrusage` cannot give).
    pub switches: Option<u64>,
    /// The CPU the thread ran on (`None` when unknown).
    pub cpu: Option<u32>,
}

/// What happened to one thread during one sample.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SampleCheck {
    /// The thread's CPU at the start of the sample.
    pub cpu: Option<u32>,
    /// Wall time from the first reading to the second, ns.
    pub wall_ns: u64,
    /// Run delay accrued in between, ns (`None`: unknown).
    pub waited_ns: Option<u64>,
    /// Involuntary switches in between (0 when unknown).
    pub switches: u64,
    /// The thread was on another CPU at the end.
    pub migrated: bool,
}

impl SampleCheck {
    /// Whether the sample is disturbed: the thread waited more than
    /// [`SAMPLE_TOLERANCE_PCT`] of the wall time, or moved CPU; without a
    /// run delay, any involuntary switch.
    pub fn disturbed(&self) -> bool {
        self.migrated
            || match self.waited_ns {
                Some(w) => w as f64 * 100.0 > SAMPLE_TOLERANCE_PCT * self.wall_ns as f64,
                None => self.switches > 0,
            }
    }
}

/// The check of one sample from the readings around it; `wall_ns` is the
/// wall time between them.
pub fn check(before: &Mark, after: &Mark, wall_ns: u64) -> SampleCheck {
    let waited_ns = match (before.run_delay_ns, after.run_delay_ns) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let switches = match (before.switches, after.switches) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => 0,
    };
    let migrated = matches!((before.cpu, after.cpu), (Some(a), Some(b)) if a != b);
    SampleCheck { cpu: before.cpu, wall_ns, waited_ns, switches, migrated }
}

/// Parses `/proc/<pid>/task/<tid>/schedstat`: `run_ns wait_ns slices`;
/// returns the wait (run delay) and the time slices.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_ascii_whitespace();
    let _run: u64 = f.next()?.parse().ok()?;
    let wait = f.next()?.parse().ok()?;
    let slices = f.next()?.parse().ok()?;
    Some((wait, slices))
}

/// A thread's schedstat file, opened once; each reading is one `pread`
/// of at most 96 bytes.
#[derive(Debug)]
pub struct SchedStat {
    file: Option<File>,
}

impl SchedStat {
    /// The calling thread's (`/proc/thread-self/schedstat`: the file
    /// stays the opener's even when read from another thread).
    pub fn this_thread() -> SchedStat {
        SchedStat::open("proc/thread-self/schedstat")
    }

    /// Thread `tid` of this process.
    pub fn of_thread(tid: i32) -> SchedStat {
        SchedStat::open(&format!("proc/self/task/{tid}/schedstat"))
    }

    fn open(rel: &str) -> SchedStat {
        SchedStat { file: File::open(topo::SysRoot::live().path(rel)).ok() }
    }

    /// Run delay and time slices so far (`None` without the file).
    pub fn read(&self) -> Option<(u64, u64)> {
        let f = self.file.as_ref()?;
        let mut buf = [0u8; 96];
        let n = f.read_at(&mut buf, 0).ok()?;
        parse_schedstat(std::str::from_utf8(&buf[..n]).ok()?)
    }
}

/// Involuntary context switches of the calling thread.
fn own_switches() -> Option<u64> {
    // SAFETY: an all-zero rusage is a valid value; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_THREAD with a valid pointer to a rusage.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    (rc == 0).then_some(ru.ru_nivcsw as u64)
}

/// The CPU the calling thread runs on.
fn own_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    u32::try_from(c).ok()
}

/// The calling thread's readings: open on the measuring thread, then
/// [`ThreadClock::mark`] around each sample.
#[derive(Debug)]
pub struct ThreadClock {
    stat: SchedStat,
}

impl Default for ThreadClock {
    fn default() -> Self {
        ThreadClock::open()
    }
}

impl ThreadClock {
    pub fn open() -> ThreadClock {
        ThreadClock { stat: SchedStat::this_thread() }
    }

    /// Reads the calling thread's state (three cheap system calls).
    pub fn mark(&self) -> Mark {
        Mark {
            run_delay_ns: self.stat.read().map(|(w, _)| w),
            switches: own_switches(),
            cpu: own_cpu(),
        }
    }

    /// Runs `f` between two readings and returns its value with the check.
    pub fn around<T>(&self, f: impl FnOnce() -> T) -> (T, SampleCheck) {
        let before = self.mark();
        let t0 = Instant::now();
        let v = f();
        let wall = t0.elapsed().as_nanos() as u64;
        (v, check(&before, &self.mark(), wall))
    }
}

/// Another thread's readings, taken from the measuring thread: its run
/// delay, and its time slices as switches (a spinning thread never
/// yields, so each new slice follows a switch it did not ask for).
#[derive(Debug)]
pub struct OtherThread {
    stat: SchedStat,
    cpu: u32,
}

impl OtherThread {
    pub fn open(tid: i32, cpu: u32) -> OtherThread {
        OtherThread { stat: SchedStat::of_thread(tid), cpu }
    }

    pub fn mark(&self) -> Mark {
        let r = self.stat.read();
        Mark { run_delay_ns: r.map(|(w, _)| w), switches: r.map(|(_, s)| s), cpu: Some(self.cpu) }
    }
}

/// The calling thread's id (for [`OtherThread::open`]).
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// One thread's share of a figure's time.
#[derive(Debug, Clone, Copy, Default)]
struct ThreadTime {
    cpu: Option<u32>,
    waited_ns: u64,
    wall_ns: u64,
}

/// A figure's samples added up: which were clean, and how much time each
/// thread lost.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    clean: usize,
    disturbed: usize,
    threads: Vec<ThreadTime>,
    switches: u64,
    migrations: u64,
    /// A thread's run delay could not be read.
    no_run_delay: bool,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Adds one sample: the check of each of its threads (always in the
    /// same order). Returns true when the sample is clean.
    pub fn add(&mut self, checks: &[SampleCheck]) -> bool {
        if self.threads.len() < checks.len() {
            self.threads.resize(checks.len(), ThreadTime::default());
        }
        let mut disturbed = false;
        let mut migrated = false;
        for (t, c) in self.threads.iter_mut().zip(checks) {
            t.cpu = t.cpu.or(c.cpu);
            t.wall_ns += c.wall_ns;
            t.waited_ns += c.waited_ns.unwrap_or(0);
            self.switches += c.switches;
            disturbed |= c.disturbed();
            migrated |= c.migrated;
            self.no_run_delay |= c.waited_ns.is_none();
        }
        self.migrations += u64::from(migrated);
        if disturbed {
            self.disturbed += 1;
        } else {
            self.clean += 1;
        }
        !disturbed
    }

    pub fn clean(&self) -> usize {
        self.clean
    }

    pub fn samples(&self) -> usize {
        self.clean + self.disturbed
    }

    /// The record: the most delayed thread names the share lost.
    pub fn finish(&self) -> Disturbance {
        let share = |t: &ThreadTime| {
            if t.wall_ns == 0 {
                0.0
            } else {
                t.waited_ns as f64 / t.wall_ns as f64 * 100.0
            }
        };
        let worst = self
            .threads
            .iter()
            .filter(|t| t.waited_ns > 0)
            .max_by(|a, b| share(a).total_cmp(&share(b)));
        Disturbance {
            clean: self.clean,
            disturbed: self.disturbed,
            lost_pct: worst.map_or(0.0, |t| share(t).min(100.0)),
            busiest_cpu: worst.and_then(|t| t.cpu),
            involuntary_switches: self.switches,
            migrations: self.migrations,
            source: if self.no_run_delay { Source::Switches } else { Source::RunDelay },
        }
    }
}

/// One figure's disturbance from those of its parts (measured one after
/// the other): the counts add up, the share lost is the worst part's.
pub fn combine(parts: &[Disturbance]) -> Disturbance {
    let worst = parts.iter().max_by(|a, b| a.lost_pct.total_cmp(&b.lost_pct));
    Disturbance {
        clean: parts.iter().map(|d| d.clean).sum(),
        disturbed: parts.iter().map(|d| d.disturbed).sum(),
        lost_pct: worst.map_or(0.0, |d| d.lost_pct),
        busiest_cpu: worst.and_then(|d| d.busiest_cpu),
        involuntary_switches: parts.iter().map(|d| d.involuntary_switches).sum(),
        migrations: parts.iter().map(|d| d.migrations).sum(),
        source: if parts.iter().any(|d| d.source == Source::Switches) {
            Source::Switches
        } else {
            Source::RunDelay
        },
    }
}

/// Disturbed figures of one phase, told in one warning line at its end
/// (a sweep has dozens of points).
#[derive(Debug, Default)]
pub struct Unstable {
    figures: usize,
    unstable: usize,
    worst: Option<Disturbance>,
}

impl Unstable {
    pub fn new() -> Unstable {
        Unstable::default()
    }

    /// Notes one figure.
    pub fn note(&mut self, stable: bool, d: Option<&Disturbance>) {
        self.figures += 1;
        if stable {
            return;
        }
        self.unstable += 1;
        if let Some(d) = d {
            if self.worst.as_ref().is_none_or(|w| d.lost_pct > w.lost_pct) {
                self.worst = Some(d.clone());
            }
        }
    }

    /// The warning for `what` (e.g. "lat sweep"), when a figure was
    /// unstable: how many were, and the worst one's cause
    /// ([`Event::Disturbed`], which the front end words).
    pub fn warning(&self, what: &str) -> Option<Event> {
        if self.unstable == 0 {
            return None;
        }
        Some(Event::Disturbed {
            what: what.to_string(),
            figures: self.figures,
            marked: self.unstable,
            worst: results::disturbance::Cause::of(self.worst.as_ref()),
        })
    }

    /// Sends [`Unstable::warning`] to `obs`.
    pub fn warn(&self, obs: &dyn Observer, what: &str) {
        if let Some(w) = self.warning(what) {
            obs.event(w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(delay: u64, switches: u64, cpu: u32) -> Mark {
        Mark { run_delay_ns: Some(delay), switches: Some(switches), cpu: Some(cpu) }
    }

    #[test]
    fn schedstat_gives_the_run_delay_and_the_slices() {
        assert_eq!(parse_schedstat("42173096 24702276 22\n"), Some((24_702_276, 22)));
        assert_eq!(parse_schedstat("1 2"), None);
        assert_eq!(parse_schedstat("a b c"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn a_wait_within_the_tolerance_keeps_the_sample() {
        // 20 ms sample: 150 us waited (0.75%) is clean, 250 us (1.25%) is not
        let c = check(&mark(1_000, 3, 0), &mark(151_000, 4, 0), 20_000_000);
        assert_eq!(c.waited_ns, Some(150_000));
        assert_eq!(c.switches, 1);
        assert!(!c.disturbed(), "{c:?}");
        let c = check(&mark(1_000, 3, 0), &mark(251_000, 4, 0), 20_000_000);
        assert!(c.disturbed(), "{c:?}");
    }

    #[test]
    fn a_busy_cpu_half_the_time_disturbs_the_sample() {
        let c = check(&mark(0, 0, 0), &mark(10_000_000, 3, 0), 20_000_000);
        assert!(c.disturbed());
        assert!(!c.migrated);
    }

    #[test]
    fn a_move_to_another_cpu_disturbs_the_sample() {
        let c = check(&mark(5, 0, 0), &mark(5, 0, 1), 20_000_000);
        assert!(c.migrated && c.disturbed());
    }

    #[test]
    fn without_run_delay_any_involuntary_switch_disturbs() {
        let no_delay = |s: u64| Mark { run_delay_ns: None, switches: Some(s), cpu: Some(0) };
        let c = check(&no_delay(2), &no_delay(2), 1_000_000);
        assert!(!c.disturbed() && c.waited_ns.is_none());
        assert!(check(&no_delay(2), &no_delay(3), 1_000_000).disturbed());
    }

    #[test]
    fn a_tally_counts_samples_and_names_the_busiest_thread() {
        let mut t = Tally::new();
        let quiet = |cpu| SampleCheck {
            cpu: Some(cpu),
            wall_ns: 10_000_000,
            waited_ns: Some(0),
            ..Default::default()
        };
        let busy = |cpu, w| SampleCheck {
            cpu: Some(cpu),
            wall_ns: 10_000_000,
            waited_ns: Some(w),
            switches: 2,
            ..Default::default()
        };
        assert!(t.add(&[quiet(0), quiet(1)]));
        // CPU 1 waited 60% of one sample: the whole sample goes
        assert!(!t.add(&[quiet(0), busy(1, 6_000_000)]));
        assert!(!t.add(&[busy(0, 2_000_000), busy(1, 6_000_000)]));
        assert!(t.add(&[quiet(0), quiet(1)]));
        let d = t.finish();
        assert_eq!((d.clean, d.disturbed), (2, 2));
        assert_eq!(d.busiest_cpu, Some(1));
        assert!((d.lost_pct - 30.0).abs() < 1e-9, "{d:?}");
        assert_eq!(d.involuntary_switches, 6);
        assert_eq!(d.source, Source::RunDelay);
        assert!(!d.stable(2), "30% of the time lost");
    }

    #[test]
    fn a_quiet_tally_is_stable_and_names_no_cpu() {
        let mut t = Tally::new();
        for _ in 0..11 {
            t.add(&[SampleCheck {
                cpu: Some(3),
                wall_ns: 20_000_000,
                waited_ns: Some(1_000),
                ..Default::default()
            }]);
        }
        let d = t.finish();
        assert_eq!((d.clean, d.disturbed, d.migrations), (11, 0, 0));
        assert!(d.lost_pct < 0.01);
        assert!(d.stable(6));
    }

    #[test]
    fn parts_combine_into_one_figure() {
        let a = Disturbance { clean: 7, disturbed: 0, lost_pct: 0.5, ..Default::default() };
        let b = Disturbance {
            clean: 5,
            disturbed: 3,
            lost_pct: 30.0,
            busiest_cpu: Some(1),
            involuntary_switches: 4,
            migrations: 1,
            ..Default::default()
        };
        let c = combine(&[a, b]);
        assert_eq!((c.clean, c.disturbed, c.involuntary_switches, c.migrations), (12, 3, 4, 1));
        assert_eq!((c.lost_pct, c.busiest_cpu), (30.0, Some(1)));
        assert_eq!(combine(&[]), Disturbance::default());
    }

    #[test]
    fn one_warning_per_phase_names_the_worst_figure() {
        let mut u = Unstable::new();
        u.note(true, None);
        assert_eq!(u.warning("lat sweep"), None);
        let d = |lost| Disturbance {
            clean: 3,
            disturbed: 8,
            lost_pct: lost,
            busiest_cpu: Some(0),
            ..Default::default()
        };
        u.note(false, Some(&d(20.0)));
        u.note(false, Some(&d(48.0)));
        assert_eq!(
            u.warning("lat sweep"),
            Some(Event::Disturbed {
                what: "lat sweep".into(),
                figures: 3,
                marked: 2,
                worst: d(48.0).cause()
            })
        );
        let mut one = Unstable::new();
        one.note(false, None);
        assert_eq!(
            one.warning("lat"),
            Some(Event::Disturbed {
                what: "lat".into(),
                figures: 1,
                marked: 1,
                worst: results::disturbance::Cause::TooFewClean
            })
        );
    }

    #[test]
    fn the_calling_threads_readings_are_real() {
        let clock = ThreadClock::open();
        let (_, c) = clock.around(|| std::hint::black_box((0..100_000u64).sum::<u64>()));
        assert!(c.wall_ns > 0);
        assert!(c.cpu.is_some());
        // schedstat exists on the kernels numaprobe supports (CONFIG_SCHED_INFO)
        assert!(c.waited_ns.is_some(), "no /proc/thread-self/schedstat");
    }
}
