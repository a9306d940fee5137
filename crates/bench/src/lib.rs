//! Experiments: plans, pinned thread teams, timing, statistics and the
//! events they report. Bandwidth lives in [`bw`], latency in [`lat`].
//!
//! Nothing here prints; results are returned and reported through
//! [`events::Observer`].

pub mod bw;
pub mod events;
pub mod lat;
pub mod stats;
pub mod suite;
pub mod team;
