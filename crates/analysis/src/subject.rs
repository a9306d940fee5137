//! Which result a flag or a mark is about, typed: the values that name a
//! bandwidth result, a chase or a loaded-latency point. An impossible
//! figure ([`crate::impossible::Impossible`]) and a marked input
//! ([`crate::inputs::Mark`]) carry one; `report::subject` words it.

use kernels::Kernel;
use results::bw::{self, BwResult};
use results::lat::{self, LatResult, LoadKind, LoadedPoint};

/// The result a flag or a mark names.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// A bandwidth result: its mode, kernel, thread count, the CPU node
    /// of its threads (`None` for the whole-machine modes) and where its
    /// memory was, as the record says it ([`BwResult::memory`]: a node,
    /// else the node list, else `?`).
    Bw { mode: bw::Mode, kernel: Kernel, threads: usize, cpu_node: Option<u32>, memory: String },
    /// A chase: its mode, CPU and memory (a node, unknown, or the nodes
    /// it was interleaved over, as a node list).
    Chase { mode: lat::Mode, cpu: u32, mem_node: Option<u32>, interleave: Option<String> },
    /// A loaded-latency point: its chasing CPU and its load's kind.
    Loaded { cpu: u32, load: LoadKind },
    /// A figure its caller names (a machine-wide headline).
    Named(String),
}

impl Subject {
    /// The bandwidth result `p`.
    pub fn bw(p: &BwResult) -> Subject {
        Subject::Bw {
            mode: p.mode,
            kernel: p.kernel,
            threads: p.threads,
            cpu_node: p.cpu_node,
            memory: p.memory(),
        }
    }

    /// The chase `p`.
    pub fn chase(p: &LatResult) -> Subject {
        Subject::Chase {
            mode: p.mode,
            cpu: p.cpu,
            mem_node: p.mem_node,
            interleave: p.interleave.as_ref().map(ToString::to_string),
        }
    }

    /// The loaded-latency point `p`.
    pub fn loaded(p: &LoadedPoint) -> Subject {
        Subject::Loaded { cpu: p.cpu, load: p.load_kind }
    }
}
