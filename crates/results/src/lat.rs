//! Latency records: one chase (point, matrix cell, sweep point, per-CPU
//! point), a loaded-latency step, a core-to-core pair, and the summaries of
//! a sweep (plateaus) and of a per-CPU measurement (latency groups). Times
//! are ns per dependent load.

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet};

use crate::placement::Placement;

/// Which experiment produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Point,
    Matrix,
    Sweep,
    PerCpu,
    Loaded,
    C2c,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Point => "point",
            Mode::Matrix => "matrix",
            Mode::Sweep => "sweep",
            Mode::PerCpu => "per-cpu",
            Mode::Loaded => "loaded",
            Mode::C2c => "c2c",
        }
    }
}

/// One measured chase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatResult {
    pub mode: Mode,
    pub size_bytes: u64,
    pub cpu: u32,
    pub cpu_node: Option<u32>,
    pub mem_node: Option<u32>,
    pub median_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// `(max - min) / median` of the samples, percent.
    pub spread_pct: f64,
    /// Robust coefficient of variation of the samples, percent.
    pub noise_pct: f64,
    pub samples: usize,
    pub loads_per_sample: u64,
    pub stride_bytes: usize,
    pub tlb_group_bytes: u64,
    /// Page kind obtained: `4k`, `thp`, `thp-partial (N%)`, `2m`, `1g`.
    pub page_size: String,
    pub placement: Placement,
    /// Event counts of the chase thread over the timed samples
    /// (`--counters`; absent otherwise and in older records). Boxed: most
    /// results have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Box<crate::counters::Counters>>,
}

/// Traffic of the load threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadKind {
    /// Read one word per line: 64 B of traffic per line.
    Read,
    /// Read and write one word per line: the line comes in and goes back
    /// dirty, 128 B of traffic per line.
    Rw,
}

/// One delay step of loaded latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedPoint {
    pub mode: Mode,
    /// Spin iterations each load thread waits after each cache line.
    pub delay: u64,
    /// Median chase latency under this load, ns.
    pub latency_ns: f64,
    pub median_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub spread_pct: f64,
    /// Bandwidth of the load threads while the chase ran, GB/s (1e9 B/s).
    pub load_gbs: f64,
    pub load_threads: usize,
    pub load_kind: LoadKind,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub size_bytes: u64,
    pub page_size: String,
    pub placement: Placement,
}

/// How two CPUs relate in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// SMT siblings of one core.
    Smt,
    /// Different cores of one NUMA node.
    Node,
    /// Different nodes of one package.
    Package,
    /// Different packages.
    CrossPackage,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Smt => "smt",
            Relation::Node => "node",
            Relation::Package => "package",
            Relation::CrossPackage => "cross-package",
        }
    }
}

/// One pair's core-to-core latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cResult {
    pub mode: Mode,
    pub cpu_a: u32,
    pub cpu_b: u32,
    pub relation: Option<Relation>,
    /// One-way latency (half a round trip), ns.
    pub median_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub spread_pct: f64,
    pub samples: usize,
    pub round_trips_per_sample: u64,
}

/// One flat stretch of a sweep's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// `L1`, `L2`, `L3`... or `DRAM`.
    pub label: String,
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Median over the plateau's points of the latency given (the sweep
    /// gives each point's fastest sample, `min_ns`).
    pub latency_ns: f64,
    /// Size of the cache level the label names, as the topology reports.
    pub cache_bytes: Option<u64>,
    /// Sweep points on the plateau.
    pub points: usize,
}

/// A data cache of the measuring CPU, marked on a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheMark {
    pub level: u8,
    pub size_bytes: u64,
}

/// CPUs grouped by latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuGroup {
    pub cpus: CpuSet,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Nodes the OS puts these CPUs in.
    pub os_nodes: NodeSet,
}

/// The summary of a sweep (kind `lat-summary`, mode `sweep`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub mode: Mode,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub caches: Vec<CacheMark>,
    pub plateaus: Vec<Plateau>,
}

/// The summary of a per-CPU measurement (kind `lat-summary`, mode
/// `per-cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuSummary {
    pub mode: Mode,
    pub mem_node: Option<u32>,
    pub groups: Vec<CpuGroup>,
    /// The OS shows one node but CPUs form separated latency groups.
    pub hidden_numa: bool,
    pub note: Option<String>,
}

/// A result of kind `lat`: its shape follows its mode (`loaded`, `c2c`,
/// else one chase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[serde(try_from = "serde_json::Value")]
pub enum Lat {
    Chase(LatResult),
    Loaded(LoadedPoint),
    C2c(C2cResult),
}

/// A result of kind `lat-summary`, by mode (`sweep`, `per-cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[serde(try_from = "serde_json::Value")]
pub enum LatSummary {
    Sweep(SweepSummary),
    PerCpu(PerCpuSummary),
}

/// The `mode` of a record.
fn mode_of(v: &serde_json::Value) -> Result<Mode, serde_json::Error> {
    Mode::deserialize(v.get("mode").unwrap_or(&serde_json::Value::Null))
}

// Dispatch on `mode` rather than trying each shape: serde's untagged
// buffering cannot read the integer keys of `placement.check.per_node`.
impl TryFrom<serde_json::Value> for Lat {
    type Error = serde_json::Error;

    fn try_from(v: serde_json::Value) -> Result<Self, Self::Error> {
        Ok(match mode_of(&v)? {
            Mode::Loaded => Lat::Loaded(serde_json::from_value(v)?),
            Mode::C2c => Lat::C2c(serde_json::from_value(v)?),
            _ => Lat::Chase(serde_json::from_value(v)?),
        })
    }
}

impl TryFrom<serde_json::Value> for LatSummary {
    type Error = serde_json::Error;

    fn try_from(v: serde_json::Value) -> Result<Self, Self::Error> {
        match mode_of(&v)? {
            Mode::Sweep => Ok(LatSummary::Sweep(serde_json::from_value(v)?)),
            Mode::PerCpu => Ok(LatSummary::PerCpu(serde_json::from_value(v)?)),
            m => Err(serde::de::Error::custom(format!("no lat-summary of mode {}", m.name()))),
        }
    }
}
