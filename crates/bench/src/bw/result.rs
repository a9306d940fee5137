//! One bandwidth figure with everything needed to trust and reproduce it
//! (the `numaprobe bw --json` schema; fields are only ever added).

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet};

/// One kernel measured on one case (a set of CPUs against a placement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BwResult {
    /// `local`, `matrix`, `global`, `interleave`, `weighted` or `scaling`.
    pub mode: String,
    /// `copy`, `scale`, `add`, `triad`, `read`, `write`, `rw3:1`, `rw2:1`,
    /// `rw1:1`.
    pub kernel: String,
    pub threads: usize,
    /// The CPUs the workers were pinned to (cpulist).
    pub cpus: CpuSet,
    /// The node the CPUs belong to; `None` when they span nodes (global,
    /// interleave, weighted).
    pub cpu_node: Option<u32>,
    /// The one memory node the arrays were bound to; `None` when spread
    /// (see `mem_nodes`).
    pub mem_node: Option<u32>,
    /// Every memory node holding the arrays (the interleave set; each
    /// thread's own node for global).
    pub mem_nodes: NodeSet,
    /// Memory policy used: `bind`, `local-per-thread`, `interleave`,
    /// `weighted-interleave`.
    pub policy: String,
    /// Bytes of each array (all threads' chunks together).
    pub array_bytes: u64,
    /// Arrays the kernel touches.
    pub arrays: usize,
    /// Bytes counted per repetition (STREAM's rule, no write-allocate).
    pub bytes_per_rep: u64,
    /// Best, median, worst and highest-but-best figures, GB/s (1e9 B/s).
    pub best_gbs: f64,
    pub median_gbs: f64,
    pub min_gbs: f64,
    pub max_gbs: f64,
    /// Total bytes over total time of all timed repetitions, GB/s: the
    /// average rate, as likwid-bench reports it.
    pub mean_gbs: f64,
    /// `(max - min) / median` of the repetitions, percent.
    pub spread_pct: f64,
    /// Spread of the best `top_k` repetitions, percent: the stopping rule.
    pub top_spread_pct: f64,
    /// Whether `top_spread_pct` reached the target before the budget ran out.
    pub stable: bool,
    /// Timed repetitions (a warm-up repetition is not counted).
    pub reps: usize,
    /// Median seconds per repetition.
    pub median_rep_s: f64,
    /// Fraction (0..=1) of sampled pages found on the intended nodes.
    pub placement: f64,
    /// The full check: per-node shares, sample size, threshold, verdict.
    pub placement_check: place::PlacementCheck,
    /// Instruction-set variant of the kernels (`scalar`, `sse2`, `avx2`,
    /// `avx512`).
    pub isa: String,
    /// `nt` (non-temporal) or `regular`.
    pub stores: String,
    /// Page kind asked for the arrays (`base`, `thp`, `nothp`, `2m`, `1g`).
    pub pages: String,
    /// Last-level cache the team shares, bytes, when known.
    pub llc_bytes: Option<u64>,
    /// Whether each array is at least 4x `llc_bytes` (STREAM's rule).
    pub size_rule_ok: bool,
    /// Theoretical peak of the memory used, GB/s, when known.
    pub peak_gbs: Option<f64>,
    /// `best_gbs / peak_gbs`.
    pub peak_fraction: Option<f64>,
    /// Whether the arrays were checked after the run (always true for an
    /// emitted result: a wrong answer is an error, never a figure).
    pub validated: bool,
    /// True when Ctrl-C cut the repetitions short.
    pub interrupted: bool,
}
