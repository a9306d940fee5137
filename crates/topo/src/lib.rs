//! Discovery of a machine's topology from sysfs and procfs under a
//! configurable root: packages, cores, caches, NUMA nodes, distances, HMAT,
//! devices, cgroup limits and the NUMA mode they imply.
//!
//! Nothing here prints; every reader takes the root it reads under, so tests
//! point it at captures of real machines.

pub mod acpi;
mod discover;
pub mod fs;
pub mod hash;
pub mod idset;
pub mod load;
pub mod memdev;
pub mod memkind;
pub mod mode;
pub mod model;
pub mod outfile;
pub mod parse;
pub mod read;
pub mod synthetic;
pub mod tiers;
pub mod units;
mod warning;

pub use fs::{SysRoot, TopoError};
pub use idset::{CpuSet, IdSet, IdSetError, NodeSet};
pub use mode::{firmware_warnings, infer_mode};
pub use model::*;
pub use parse::{parse_numastat, ParseError};

/// How the warning starts that the NUMA nodes hold less memory than the
/// system counts (`Topology::nodes_short_of_system`): `topo`'s text says
/// that fact beside the sizes, so it does not list the warning again.
pub const NODES_SHORT_OF_SYSTEM: &str = "the NUMA nodes hold";
