//! Shared by the measuring commands' end-to-end tests: a lock file of each
//! test's own (so parallel tests never refuse each other) and the check that
//! a held lock is refused the same way by every measuring command.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A lock path no other test (or test binary) uses.
#[allow(dead_code)]
pub fn private_lock(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{tag}-{}-{n}.lock", std::process::id()))
}

/// A measuring command refused by a lock this test process
/// holds says so in one line naming the holder's PID.
#[allow(dead_code)]
pub fn assert_refused_by_our_lock(stderr: &str) {
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&format!("held by PID {}", std::process::id())), "{stderr}");
}
