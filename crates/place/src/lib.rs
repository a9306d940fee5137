//! Placement: pin threads and children to CPUs, set memory policies,
//! allocate buffers with chosen page sizes, and verify where pages really
//! are (`move_pages`). Raw syscalls through `libc`; no libnuma.
//!
//! Typical use by a measurement:
//! ```no_run
//! use place::*;
//! use results::pages::PageKind;
//! use topo::NodeSet;
//! # fn main() -> Result<(), PlaceError> {
//! pin_current_thread(0)?;
//! let mut buf = Buffer::alloc(64 << 20, PageKind::Base)?;
//! let nodes: NodeSet = "0".parse().unwrap();
//! buf.bind(&MemPolicy::Bind(nodes.clone()))?;
//! buf.touch();
//! let verdict = check(&buf.page_nodes(4096)?, &nodes, DEFAULT_THRESHOLD);
//! assert!(verdict.ok);
//! # Ok(()) }
//! ```

pub mod affinity;
pub mod allowed;
pub mod buffer;
pub mod error;
pub mod memory;
pub mod numastat;
pub mod pagemap;
pub mod policy;
pub mod probe;
pub mod spec;
mod sys;
pub mod verify;
pub mod weights;

pub use affinity::{
    current_cpu, current_cpu_and_node, current_thread_affinity, pin_current_thread,
    set_current_thread_affinity, ChildPlacement, PreparedPlacement,
};
pub use allowed::Allowed;
pub use buffer::{Buffer, PageReport, PageSizes, Pod};
pub use error::{PlaceError, Result};
pub use memory::{
    ensure_hugepages, ensure_node_can_spare, ensure_nodes_can_spare, node_free_hugepages,
    node_memory, numa_balancing, numa_balancing_enabled, reserve_bytes, NodeMemory, NumaBalancing,
    Spread,
};
pub use numastat::{parse_numastat, NumaStat};
pub use policy::{
    bind_range, current_process_policy, ensure_supported, mems_allowed, node_of_address, policy_at,
    policy_support, set_process_policy, weighted_interleave_weights, with_fallback, Existing,
    MemPolicy, PolicySupport,
};
pub use probe::{probe, ExpectSource, Pin, ProbeReport, ProbeSpec, Via};
pub use spec::{parse_size, resolve_set, SetSpec, SIZE_GRAMMAR};
pub use verify::{check, check_interleave, check_spread, page_nodes, PageNodes, DEFAULT_THRESHOLD};

/// The base page size of this machine in bytes (`sysconf(_SC_PAGESIZE)`:
/// 4096 on x86-64, 4, 16 or 64 KiB on arm64).
pub fn base_page_size() -> usize {
    sys::page_size()
}

/// The size of one transparent huge page on this machine in bytes (see
/// [`buffer::thp_size`]: 2 MiB with 4 KiB base pages, 32 MiB with 16 KiB,
/// 512 MiB with 64 KiB).
pub fn thp_page_size() -> usize {
    buffer::thp_size()
}
