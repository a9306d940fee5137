//! The one error type of the placement layer: every variant names the
//! syscall, node, CPU or path it is about.

use std::io;

use topo::units::{binary_size, binary_size_floor};
use topo::{CpuSet, NodeSet, TopoError};

/// Why a placement could not be made, checked or read.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    /// A system call failed; `what` says what it was asked to do.
    #[error("{syscall}({what}) failed: {source}")]
    Syscall { syscall: &'static str, what: String, source: io::Error },
    /// The running kernel lacks a feature (policy mode, page size...).
    #[error("{feature} is not supported by this kernel: {why}")]
    Unsupported { feature: &'static str, why: String },
    /// A CPU outside this process's affinity mask / cgroup cpuset.
    #[error("CPU(s) {asked} not allowed for this process (allowed CPUs: {allowed})")]
    CpuNotAllowed { asked: CpuSet, allowed: CpuSet },
    /// A node outside this process's `Mems_allowed` (cgroup cpuset.mems).
    #[error("node(s) {asked} not allowed for this process's memory (allowed nodes: {allowed})")]
    NodeNotAllowed { asked: NodeSet, allowed: NodeSet },
    /// A node id the machine does not have.
    #[error("node(s) {asked} do not exist (nodes: {existing})")]
    NoSuchNode { asked: NodeSet, existing: NodeSet },
    /// A CPU id the machine does not have online.
    #[error("CPU(s) {asked} do not exist or are offline (online CPUs: {existing})")]
    NoSuchCpu { asked: CpuSet, existing: CpuSet },
    /// A node with no memory asked for as a memory target.
    #[error(
        "node(s) {asked} have no memory and cannot hold pages (nodes with memory: {with_memory})"
    )]
    MemorylessNode { asked: NodeSet, with_memory: NodeSet },
    /// A node with no CPUs asked for as a place to run.
    #[error("node(s) {asked} have no CPUs to run on (nodes with CPUs: {with_cpus})")]
    CpulessNode { asked: NodeSet, with_cpus: NodeSet },
    /// A node cannot spare the memory asked for without eating its reserve.
    #[error(
        "node {node} cannot spare {}: it has {} available (free plus reclaimable cache) and \
         numaprobe keeps {} free there; try a size of at most {}",
        binary_size(*requested_bytes), binary_size(*available_bytes),
        binary_size(*reserve_bytes), binary_size_floor(*suggested_bytes)
    )]
    NotEnoughMemory {
        node: u32,
        requested_bytes: u64,
        available_bytes: u64,
        reserve_bytes: u64,
        suggested_bytes: u64,
    },
    /// Not enough free huge pages of the size asked for.
    #[error("{msg}")]
    NoHugePages { page_size_bytes: u64, msg: String },
    /// A node/CPU spec or size string the user wrote could not be read.
    #[error("'{spec}': {msg}")]
    BadSpec { spec: String, msg: String },
    /// A buffer operation was asked with bad arguments (empty, misaligned...).
    #[error("{0}")]
    InvalidArgument(String),
    /// Reading sysfs/procfs failed (names the file).
    #[error(transparent)]
    Topo(#[from] TopoError),
}

impl PlaceError {
    /// A `Syscall` error from `errno` just after a failed call.
    pub(crate) fn last_os(syscall: &'static str, what: impl Into<String>) -> Self {
        PlaceError::Syscall { syscall, what: what.into(), source: io::Error::last_os_error() }
    }

    /// True when the kernel has no NUMA system calls at all (`ENOSYS` from
    /// `mbind`, `set_mempolicy` or `move_pages`): a kernel built without
    /// `CONFIG_NUMA`, or an emulator that does not pass them through
    /// (qemu-user).
    pub fn no_numa_api(&self) -> bool {
        self.raw_os_error() == Some(libc::ENOSYS)
    }

    /// The raw errno of a failed syscall, when this is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            PlaceError::Syscall { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// True when the error is about what the user asked (a bad spec, a
    /// node or CPU that does not exist, is not allowed or cannot serve, more
    /// memory than a node can spare, huge pages not reserved, a kernel
    /// feature this machine lacks): the CLI's usage error, exit status 2.
    /// False for failures of the machine or of numaprobe (a syscall that
    /// failed, an unreadable file, a bad internal argument). The one
    /// classification bw, lat, exec and the CLI share.
    pub fn is_usage(&self) -> bool {
        match self {
            PlaceError::BadSpec { .. }
            | PlaceError::CpuNotAllowed { .. }
            | PlaceError::NodeNotAllowed { .. }
            | PlaceError::NoSuchNode { .. }
            | PlaceError::NoSuchCpu { .. }
            | PlaceError::MemorylessNode { .. }
            | PlaceError::CpulessNode { .. }
            | PlaceError::NotEnoughMemory { .. }
            | PlaceError::NoHugePages { .. }
            | PlaceError::Unsupported { .. } => true,
            PlaceError::Syscall { .. } | PlaceError::InvalidArgument(_) | PlaceError::Topo(_) => {
                false
            }
        }
    }

    pub(crate) fn bad_spec(spec: &str, msg: impl Into<String>) -> Self {
        PlaceError::BadSpec { spec: spec.to_string(), msg: msg.into() }
    }
}

/// Bytes as whole MiB for messages (`2528 MiB`).
/// Result alias of this crate.
pub type Result<T, E = PlaceError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Only ENOSYS from a system call means no NUMA API at all: a refusal
    /// (EPERM, EINVAL) or another error is not.
    #[test]
    fn no_numa_api_is_enosys_only() {
        let sys = |errno| PlaceError::Syscall {
            syscall: "mbind",
            what: "x".into(),
            source: io::Error::from_raw_os_error(errno),
        };
        assert!(sys(libc::ENOSYS).no_numa_api());
        for errno in [libc::EPERM, libc::EINVAL, libc::EFAULT] {
            assert!(!sys(errno).no_numa_api(), "{errno}");
        }
        assert!(!PlaceError::InvalidArgument("x".into()).no_numa_api());
    }

    #[test]
    fn what_the_user_asked_is_a_usage_error_and_failures_are_not() {
        let set = |s: &str| -> NodeSet { s.parse().unwrap() };
        let usage = [
            PlaceError::bad_spec("x", "bad"),
            PlaceError::NoSuchNode { asked: set("9"), existing: set("0-1") },
            PlaceError::NotEnoughMemory {
                node: 0,
                requested_bytes: 1,
                available_bytes: 0,
                reserve_bytes: 0,
                suggested_bytes: 0,
            },
            PlaceError::NoHugePages { page_size_bytes: 2 << 20, msg: "none".into() },
            PlaceError::Unsupported { feature: "weighted interleave", why: "old".into() },
        ];
        for e in &usage {
            assert!(e.is_usage(), "{e}");
        }
        let failures = [
            PlaceError::Syscall {
                syscall: "mbind",
                what: "x".into(),
                source: io::Error::from_raw_os_error(libc::EIO),
            },
            PlaceError::InvalidArgument("empty".into()),
        ];
        for e in &failures {
            assert!(!e.is_usage(), "{e}");
        }
    }
}
