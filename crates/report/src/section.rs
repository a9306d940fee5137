//! The report's sections, each reading a run's typed records (and what
//! `analysis` decided of them) into the document model; `build` calls them
//! in order.

pub(crate) mod appendix;
pub(crate) mod bandwidth;
pub mod counters;
pub mod distances;
pub(crate) mod environment;
pub mod figures;
pub mod glance;
pub mod gpu;
pub mod hmat;
pub mod impossible;
pub mod latency;
pub(crate) mod matrix;
pub(crate) mod method;
pub(crate) mod per_cpu;
pub mod placements;
pub(crate) mod power;
pub(crate) mod recommendations;
pub mod study;
pub mod subject;
pub(crate) mod summary;
pub(crate) mod sweep;
pub(crate) mod tiers;
pub mod trust;
pub(crate) mod validation;
