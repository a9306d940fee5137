//! Experiments: plans, pinned thread teams, timing, statistics and the
//! events they report. Bandwidth lives in [`bw`], latency in [`lat`].
//!
//! Nothing here prints; results are returned and reported through
//! [`events::Observer`].

pub mod bw;
pub mod counting;
pub mod events;
pub mod lat;
pub mod scan;
pub mod suite;
pub mod team;

/// The statistics moved to `results::stats`; this path still works.
pub use results::stats;
