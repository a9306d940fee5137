//! The one error type of the placement layer: every variant names the
//! syscall, node, CPU or path it is about.

use std::io;

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
        "node {node} cannot spare {} ({requested_bytes} bytes): it has {} free and numaprobe \
         keeps {} free there; try a size of at most {}",
        mib(*requested_bytes), mib(*free_bytes), mib(*reserve_bytes), mib(*suggested_bytes)
    )]
    NotEnoughMemory {
        node: u32,
        requested_bytes: u64,
        free_bytes: u64,
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

    /// The raw errno of a failed syscall, when this is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            PlaceError::Syscall { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    pub(crate) fn bad_spec(spec: &str, msg: impl Into<String>) -> Self {
        PlaceError::BadSpec { spec: spec.to_string(), msg: msg.into() }
    }
}

/// Bytes as whole MiB for messages (`2528 MiB`).
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// Result alias of this crate.
pub type Result<T, E = PlaceError> = std::result::Result<T, E>;
