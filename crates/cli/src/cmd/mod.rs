//! One module per command; each has `Args` (clap) and `run`, which takes
//! them and the [`crate::invocation::Invocation`].

pub mod advise;
pub mod audit;
pub mod bw;
pub mod compare;
pub mod exec;
pub mod fleet;
pub mod gpu;
pub mod lat;
pub mod place;
pub mod run;
pub mod scan;
pub mod store;
pub mod study;
pub mod topo;
