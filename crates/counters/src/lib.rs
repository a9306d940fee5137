//! Counting with `perf_event_open(2)`: hardware events (cycles,
//! instructions, LLC references and misses), the kernel's generic NUMA
//! cache events (`node-loads`, `node-load-misses`, `node-stores`,
//! `node-store-misses`) and software events (page faults, CPU migrations,
//! context switches), for a command with its children ([`Target::Child`])
//! or for one thread of a team ([`Target::ThisThread`]); memory-controller
//! traffic per socket from the uncore PMUs the kernel exposes
//! ([`uncore`]); and whether counting is allowed here ([`access`]).
//!
//! Opening and reading go through the `perf-event2` crate (attribute
//! layout, `ioctl`s, `read_format` decoding); the readings become
//! [`results::counters`] records, where the multiplexing arithmetic and the
//! derived figures live. An event that cannot be counted is recorded as
//! unavailable with the kernel's reason; nothing is estimated.
//!
//! Power and frequency are read beside the events, without
//! `perf_event_open` ([`power`]): the energy of each powercap RAPL zone
//! (package, DRAM, core, psys; AMD's `amd_energy` sockets where no zone
//! exists) and the mean core frequency (APERF/MPERF, else cpufreq) over a
//! measured interval, by a [`power::Meter`] opened on the CPUs measured,
//! started before and finished after. Its reading is a
//! [`results::power::Power`], which the bandwidth, latency and `exec`
//! records carry; a zone or figure that cannot be read is unavailable with
//! its reason.

pub mod access;
mod paranoid;
pub mod power;
pub mod set;
pub mod uncore;

pub use access::{paranoid, probe, Access};
pub use set::{EventSet, Target};
