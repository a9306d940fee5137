//! Whether measurements record event counts (`--counters`): one switch for
//! the process, set by the CLI before measuring. When on, each bandwidth
//! result carries its team's counts over the timed repetitions (and the
//! memory controllers' bytes where the kernel exposes them) and each chase
//! its thread's counts over the timed samples.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Turns recording of event counts on or off for the measurements that
/// follow.
pub fn request(on: bool) {
    REQUESTED.store(on, Ordering::SeqCst);
}

/// Whether measurements record event counts.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
