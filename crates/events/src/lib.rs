//! Progress events. Measuring code never prints: it reports what it is doing
//! to an [`Observer`], and the CLI decides how to draw it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Something a long measurement wants its caller to know.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A phase begins: `total` steps are planned (0 when unknown).
    PhaseStart { phase: String, total: u64 },
    /// `done` of the phase's steps are finished; `what` names the last one.
    Progress { phase: String, done: u64, what: String },
    /// The phase is over.
    PhaseEnd { phase: String },
    /// Step `index` (from 0) of `total` in `phase` begins.
    StepStart { phase: String, index: usize, total: usize, name: String },
    /// Step `index` of `phase` ended; `error` (with its causes) when it
    /// failed and the phase went on without it.
    StepEnd { phase: String, index: usize, name: String, error: Option<String> },
    /// Something the user should read (noisy machine, size rule broken...).
    Warning(String),
    /// Bandwidth arrays asked for at `bytes` each, below the `want` bytes
    /// of STREAM's rule (4x the last-level cache the threads share): the
    /// figures may include cache bandwidth. A warning the front end words,
    /// naming the option that asked for the size.
    SmallArrays { bytes: u64, want: u64 },
    /// `marked` of the `figures` figures of `what` (`lat sweep`, `triad
    /// local, node 0`) were disturbed and are marked; `worst` is the cause
    /// of the one that lost the most time. A warning the front end words.
    Disturbed { what: String, figures: usize, marked: usize, worst: results::disturbance::Cause },
    /// A finished result, typed, so callers can save it at once.
    Record(results::Record),
}

/// Receives events; called from the measuring thread between measurements
/// (never inside a timed region).
pub trait Observer: Send + Sync {
    fn event(&self, event: Event);
}

/// An observer that drops everything.
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _event: Event) {}
}

/// A flag a signal handler sets; measurements poll it between repetitions
/// and stop cleanly, keeping what they measured.
#[derive(Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}
