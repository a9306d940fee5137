//! A team of worker threads, each pinned to one CPU, that run one job
//! together and meet at a spinning barrier.
//!
//! Used by the bandwidth experiment (one worker per measured CPU) and meant
//! for any measurement that needs threads started at the same instant, such
//! as the load generators of loaded-latency tests:
//!
//! ```no_run
//! use bench::team;
//! let sums = team::run(&[0, 1], |w| {
//!     // every worker is pinned to `w.cpu()` here
//!     w.sync(); // all start together
//!     let t = std::time::Instant::now();
//!     // ... work ...
//!     w.sync(); // all finished
//!     t.elapsed()
//! })
//! .unwrap();
//! assert_eq!(sums.len(), 2);
//! ```
//!
//! The barrier spins (then yields after a while, so an oversubscribed
//! machine still makes progress): waking a sleeping thread would add tens of
//! microseconds of skew between workers. Its counters sit on their own cache
//! lines, so workers never false-share with it or with each other's slots
//! ([`Padded`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// A value alone on its cache line pair (128 bytes: adjacent-line
/// prefetchers fetch pairs), so that workers writing their own slots never
/// false-share.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Padded<T>(pub T);

/// A reusable sense-counting spin barrier for a fixed number of threads.
#[derive(Debug)]
pub struct SpinBarrier {
    n: usize,
    arrived: Padded<AtomicUsize>,
    generation: Padded<AtomicUsize>,
}

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        SpinBarrier {
            n,
            arrived: Padded(AtomicUsize::new(0)),
            generation: Padded(AtomicUsize::new(0)),
        }
    }

    /// Blocks until all `n` threads have called `wait` for this round.
    /// Everything written before `wait` by any thread is visible to every
    /// thread after it returns.
    pub fn wait(&self) {
        let gen = self.generation.0.load(Ordering::Acquire);
        if self.arrived.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.0.store(0, Ordering::Relaxed);
            self.generation.0.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let mut spins = 0u32;
        while self.generation.0.load(Ordering::Acquire) == gen {
            if spins < 1 << 14 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                // More threads than free cores: let the others run.
                std::thread::yield_now();
            }
        }
    }
}

/// Why a team could not run.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("a team needs at least one CPU")]
    Empty,
    #[error("could not pin a worker to CPU {cpu}: {source}")]
    Pin { cpu: u32, source: place::PlaceError },
    #[error("a worker thread could not be started: {0}")]
    Spawn(#[source] std::io::Error),
}

/// What a worker knows about itself and its team.
#[derive(Debug)]
pub struct Worker<'a> {
    index: usize,
    cpu: u32,
    size: usize,
    barrier: &'a SpinBarrier,
}

impl Worker<'_> {
    /// Position in the team, `0..size`, in the order of the CPUs given.
    pub fn index(&self) -> usize {
        self.index
    }
    /// The CPU this worker is pinned to.
    pub fn cpu(&self) -> u32 {
        self.cpu
    }
    /// Number of workers in the team.
    pub fn size(&self) -> usize {
        self.size
    }
    /// Worker 0, which by convention makes the team's decisions between
    /// barriers (the others read them after the next [`sync`](Self::sync)).
    pub fn is_leader(&self) -> bool {
        self.index == 0
    }
    /// Waits for every worker of the team (a spin barrier). Every worker
    /// must call it the same number of times.
    pub fn sync(&self) {
        self.barrier.wait()
    }
}

/// Runs `job` on one thread per CPU of `cpus`, each pinned to its CPU
/// before the job starts, and returns the workers' results in the order of
/// `cpus`. If any worker cannot be pinned, no job runs and the error names
/// the CPU. A panic in a job is propagated (after the others finish, so a
/// job that panics must not leave the others waiting at a barrier).
pub fn run<R, F>(cpus: &[u32], job: F) -> Result<Vec<R>, TeamError>
where
    R: Send,
    F: Fn(&Worker<'_>) -> R + Sync,
{
    if cpus.is_empty() {
        return Err(TeamError::Empty);
    }
    let barrier = SpinBarrier::new(cpus.len());
    let failed = AtomicBool::new(false);
    let pin_errors: std::sync::Mutex<Vec<TeamError>> = std::sync::Mutex::new(Vec::new());
    let results = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(cpus.len());
        for (index, &cpu) in cpus.iter().enumerate() {
            let (barrier, failed, pin_errors, job) = (&barrier, &failed, &pin_errors, &job);
            let h = std::thread::Builder::new()
                .name(format!("numaprobe-w{index}-cpu{cpu}"))
                .spawn_scoped(s, move || {
                    if let Err(source) = place::pin_current_thread(cpu) {
                        failed.store(true, Ordering::SeqCst);
                        pin_errors
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(TeamError::Pin { cpu, source });
                    }
                    let w = Worker { index, cpu, size: cpus.len(), barrier };
                    // Everyone pinned (or someone failed) before any job starts.
                    w.sync();
                    if failed.load(Ordering::SeqCst) {
                        return None;
                    }
                    crate::test_panic("team-worker");
                    Some(job(&w))
                });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Threads already started wait at the first barrier for
                    // workers that will never come: let them through by
                    // marking the team failed and arriving in their place.
                    failed.store(true, Ordering::SeqCst);
                    for _ in index..cpus.len() {
                        barrier.wait_arrive_only();
                    }
                    pin_errors.lock().unwrap_or_else(|e| e.into_inner()).push(TeamError::Spawn(e));
                    break;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect::<Vec<_>>()
    });
    if let Some(e) = pin_errors.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().next() {
        return Err(e);
    }
    Ok(results.into_iter().map(|r| r.expect("no worker failed")).collect())
}

impl SpinBarrier {
    /// Counts an arrival without waiting (stands in for a worker that could
    /// not be started).
    fn wait_arrive_only(&self) {
        if self.arrived.0.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.0.store(0, Ordering::Relaxed);
            self.generation.0.fetch_add(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    fn allowed_cpu() -> u32 {
        place::current_thread_affinity().unwrap().first().unwrap()
    }

    #[test]
    fn workers_are_pinned_and_ordered() {
        let cpu = allowed_cpu();
        let out = run(&[cpu, cpu, cpu], |w| {
            let aff = place::current_thread_affinity().unwrap();
            (w.index(), w.size(), aff.to_list())
        })
        .unwrap();
        assert_eq!(out.len(), 3);
        for (i, (index, size, aff)) in out.into_iter().enumerate() {
            assert_eq!((index, size), (i, 3));
            assert_eq!(aff, cpu.to_string());
        }
    }

    #[test]
    fn barrier_separates_rounds() {
        // Each round every worker adds 1; after the barrier all must see
        // exactly round * n, never a value from the next round.
        let cpu = allowed_cpu();
        let counter = AtomicU64::new(0);
        let n = 4u64;
        let seen = run(&[cpu; 4], |w| {
            let mut bad = 0;
            for round in 1..=50u64 {
                counter.fetch_add(1, Ordering::SeqCst);
                w.sync();
                if counter.load(Ordering::SeqCst) != round * n {
                    bad += 1;
                }
                w.sync();
            }
            bad
        })
        .unwrap();
        assert_eq!(seen, vec![0; 4]);
    }

    #[test]
    fn a_cpu_that_cannot_be_used_fails_before_any_job() {
        let ran = AtomicU64::new(0);
        let err = run(&[allowed_cpu(), 100_000], |_| {
            ran.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap_err();
        assert!(matches!(err, TeamError::Pin { cpu: 100_000, .. }), "{err}");
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        assert!(matches!(run(&[], |_| ()), Err(TeamError::Empty)));
    }
}
