//! Experiments: plans, pinned thread teams, timing, statistics and the
//! events they report. Bandwidth lives in [`bw`], latency in [`lat`], the
//! measurements behind weighted-interleave advice in [`weights`].
//!
//! Nothing here prints; results are returned and reported through
//! [`events::Observer`] (the `events` crate).

pub mod bw;
pub mod counting;
pub mod disturb;
pub mod lat;
pub mod scan;
pub mod scope;
pub mod suite;
pub mod team;
pub mod weights;

/// Test-only fault injection: panics when `NUMAPROBE_TEST_PANIC` names
/// `site` (`team-worker`: a worker of a bw or scan team; `lat-thread`), so the end-to-end tests can check
/// that a panic in a measuring thread is reported as numaprobe's bug (exit
/// 1). Compiled only with debug assertions: a release build has no hook
/// and never reads the variable.
#[inline]
pub(crate) fn test_panic(site: &str) {
    #[cfg(debug_assertions)]
    if std::env::var_os("NUMAPROBE_TEST_PANIC").is_some_and(|v| v == site) {
        panic!("deliberate test panic in {site} (NUMAPROBE_TEST_PANIC)");
    }
    #[cfg(not(debug_assertions))]
    let _ = site;
}
