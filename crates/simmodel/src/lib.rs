//! A NUMA machine modelled from hardware limits, for tests: the
//! simulated truth the analysis is checked against (docs/testing.md, "The
//! simulated truth").
//!
//! * [`facts`]: what a machine is (packages, cores, channels and their
//!   DIMM rate, lines in flight per core, socket link, latencies by
//!   relation) and the NUMA settings its firmware and kernel offer;
//! * [`physics`]: what a measurement reaches on it: each team of cores
//!   pulls what Little's law allows until a channel, a mesh or a link is
//!   full, alone or together with others;
//! * [`view`]: what the OS shows under a setting (nodes, SLIT, SRAT,
//!   where pages land) and the documents a run stores;
//! * [`runs`]: the runs `numaprobe run` would store, every step of its
//!   plan, with noise, drift and a disturbed run, and their export;
//! * [`truth`]: the true best setting per workload profile, from the
//!   premises and the model's own figures;
//! * [`studies`]: the published studies' machines (`../shared/STUDIES.md`).
//!
//! It knows the stored format (the `results` records, the `topo` document)
//! and nothing of how numaprobe measures or judges: it never calls
//! `bench` or `analysis`.

pub mod facts;
pub mod physics;
pub mod random;
pub mod rng;
pub mod runs;
pub mod studies;
pub mod truth;
pub mod view;
