//! The discovered machine: the topology record every run saves (and
//! `numaprobe topo --json` writes).
//!
//! The JSON form is versioned by [`SCHEMA_VERSION`]; fields may be added in
//! a minor change, never renamed or removed without bumping it.

use serde::{Deserialize, Serialize};

use crate::idset::{CpuSet, NodeSet};
pub use crate::memdev::{CxlRegion, DaxDevice};
pub use crate::warning::Warning;

/// Version of the JSON schema of [`Topology`].
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Topology {
    pub schema_version: u32,
    /// The root the files were read under (`/` when live).
    pub root: String,
    /// True when read from the running machine (affinity mask, live cgroup).
    pub live: bool,
    pub arch: Option<String>,
    pub cpu_vendor: Vendor,
    pub cpu_model: Option<String>,
    /// x86 `cpu family` (e.g. 25 = AMD Zen 3/4, 6 = Intel Core/Xeon).
    #[serde(default)]
    pub cpu_family: Option<u32>,
    pub kernel: Option<String>,
    pub online_cpus: CpuSet,
    pub offline_cpus: CpuSet,
    pub packages: Vec<Package>,
    /// Online CPUs in id order.
    pub cpus: Vec<Cpu>,
    pub caches: Vec<Cache>,
    /// NUMA nodes in id order (ids may be sparse).
    pub nodes: Vec<Node>,
    pub memory_tiers: Vec<MemoryTier>,
    /// Machine-wide memory from `/proc/meminfo` and the huge page pools of
    /// `/sys/kernel/mm/hugepages` (also there when no node directory is).
    #[serde(default)]
    pub system_memory: Option<SystemMemory>,
    pub devices: Vec<PciDevice>,
    pub cgroup: Cgroup,
    pub cmdline: Cmdline,
    /// True when the kernel gave no package id for some CPU
    /// (`physical_package_id` is -1, as on POWER7 or s390) or no CPU
    /// topology at all: `packages` are then numbered from the
    /// `core_siblings` lists and say nothing about sockets, and the NUMA
    /// mode infers nothing from them.
    #[serde(default)]
    pub packages_unknown: bool,
    /// Nodes grouped by SLIT distance level (empty without a distance
    /// matrix): see [`DistanceTier`].
    #[serde(default)]
    pub distance_tiers: Vec<DistanceTier>,
    pub numa_mode: NumaMode,
    /// DAX devices (`/sys/bus/dax/devices`): what backs CXL, soft-reserved
    /// and persistent memory onlined as NUMA nodes.
    #[serde(default)]
    pub dax_devices: Vec<DaxDevice>,
    /// CXL regions (`/sys/bus/cxl/devices/regionZ`) with their nodes.
    #[serde(default)]
    pub cxl_regions: Vec<CxlRegion>,
    /// Each node's memory kind with the evidence it rests on, as found at
    /// discovery (from its CPUs, DAX devices, CXL regions and HMAT figures);
    /// empty in topologies
    /// stored by versions that did not record it.
    #[serde(default)]
    pub memory_kinds: Vec<NodeMemoryKind>,
    /// The firmware's own NUMA description (ACPI SRAT and SLIT, readable by
    /// root only): `None` where nothing was read (synthetic machines, and
    /// topologies stored by versions that did not read it).
    #[serde(default)]
    pub firmware_numa: Option<crate::acpi::FirmwareNuma>,
    /// What discovery noticed and worked around: inconsistent firmware
    /// tables (no `path`), and files it could not use (schema 2; schema 1
    /// had plain strings, still read as `problem`).
    pub warnings: Vec<Warning>,
}

/// The kind of a node's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryKind {
    /// Memory of a node with CPUs: the sockets' DRAM.
    Dram,
    /// Reached by a CXL region (or a DAX device of one): CXL memory.
    Cxl,
    /// Reached by a DAX device of an NVDIMM namespace onlined by `kmem`:
    /// persistent memory used as RAM.
    PmemAsRam,
    /// A CPU-less node slower than DRAM (lower tier or less HMAT
    /// bandwidth): CXL expanders, persistent memory as RAM.
    CxlLike,
    /// A CPU-less node faster than DRAM by HMAT bandwidth (HBM in flat
    /// mode, e.g. Xeon Max).
    HbmLike,
    /// A CPU-less node the system says nothing more about.
    MemoryOnly,
    /// No memory.
    None,
}

impl MemoryKind {
    pub fn name(self) -> &'static str {
        match self {
            MemoryKind::Dram => "DRAM",
            MemoryKind::Cxl => "CXL",
            MemoryKind::PmemAsRam => "PMEM-as-RAM",
            MemoryKind::CxlLike => "CXL-like",
            MemoryKind::HbmLike => "HBM-like",
            MemoryKind::MemoryOnly => "memory-only",
            MemoryKind::None => "no memory",
        }
    }
}

/// A node's memory kind and why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NodeMemoryKind {
    pub node: u32,
    pub kind: MemoryKind,
    /// The evidence, in words (`dax0.0 target_node=2 (kmem), region0
    /// mode=ram ...`).
    pub evidence: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Intel,
    Amd,
    /// Arm-designed or Arm-architecture CPUs other than HiSilicon.
    Arm,
    /// HiSilicon (Kunpeng).
    Hisilicon,
    Ibm,
    Other,
    Unknown,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Package {
    pub id: u32,
    pub cpus: CpuSet,
    /// Die ids within the package (one entry when the kernel has no dies).
    pub dies: Vec<u32>,
    /// Nodes whose CPUs lie in this package.
    pub nodes: NodeSet,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cpu {
    pub id: u32,
    pub package: u32,
    pub die: Option<u32>,
    pub cluster: Option<u32>,
    pub core: u32,
    /// The node whose cpulist holds this CPU (`None` when no node does).
    pub node: Option<u32>,
    /// SMT siblings, this CPU included.
    pub thread_siblings: CpuSet,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CacheKind {
    Data,
    Instruction,
    Unified,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cache {
    pub level: u8,
    pub kind: CacheKind,
    pub size_bytes: u64,
    pub line_bytes: Option<u32>,
    /// CPUs that share this cache instance.
    pub cpus: CpuSet,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum NodeKind {
    #[serde(rename = "cpu+memory")]
    CpuMemory,
    #[serde(rename = "memory-only")]
    MemoryOnly,
    #[serde(rename = "cpu-only")]
    CpuOnly,
    #[serde(rename = "neither")]
    Neither,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Node {
    pub id: u32,
    pub cpus: CpuSet,
    pub mem_total_bytes: u64,
    pub mem_free_bytes: u64,
    /// SLIT row in the order of `Topology::nodes` (empty when unknown).
    pub distances: Vec<u32>,
    pub kind: NodeKind,
    pub hugepages: Vec<HugePages>,
    pub hmat: Option<Hmat>,
    pub memory_side_caches: Vec<MemorySideCache>,
    /// Memory tier id (`memory_tiering/memory_tierN`) when present.
    pub memory_tier: Option<u32>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SystemMemory {
    pub total_bytes: u64,
    pub free_bytes: Option<u64>,
    /// `MemAvailable` (kernels since 3.14).
    pub available_bytes: Option<u64>,
    /// The default huge page size (`Hugepagesize`).
    pub default_hugepage_bytes: Option<u64>,
    /// Machine-wide huge page pools per size.
    pub hugepages: Vec<HugePages>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HugePages {
    pub page_size_bytes: u64,
    pub total: u64,
    pub free: u64,
}

/// ACPI HMAT performance seen from this memory node's best initiators.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hmat {
    /// `access0`: from any initiator (CPUs or generic initiators).
    pub access0: Option<HmatAccess>,
    /// `access1`: from CPU initiators only.
    pub access1: Option<HmatAccess>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HmatAccess {
    /// Nodes whose initiators get these figures (`accessN/initiators/nodeM`).
    pub initiators: NodeSet,
    /// For an initiator node: the memory nodes it is a best initiator of
    /// (`accessN/targets/nodeM`); empty on memory nodes.
    #[serde(default)]
    pub targets: NodeSet,
    /// MB/s as the kernel reports it.
    pub read_bandwidth_mbs: Option<u64>,
    pub write_bandwidth_mbs: Option<u64>,
    /// Nanoseconds.
    pub read_latency_ns: Option<u64>,
    pub write_latency_ns: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemorySideCache {
    pub index: u32,
    pub size_bytes: u64,
    pub line_bytes: Option<u32>,
    pub indexing: Option<String>,
    pub write_policy: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MemoryTier {
    pub id: u32,
    pub nodes: NodeSet,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceClass {
    Gpu,
    Nic,
    Infiniband,
    Nvme,
    Storage,
    Accelerator,
    Other,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PciDevice {
    /// PCI address, e.g. `0000:3b:00.0`.
    pub address: String,
    pub class: DeviceClass,
    /// Raw class code, e.g. `0x030200`.
    pub class_code: String,
    pub vendor_id: Option<String>,
    pub device_id: Option<String>,
    /// `None` when the kernel says -1 (unknown).
    pub numa_node: Option<u32>,
    pub local_cpus: Option<CpuSet>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Cgroup {
    /// `cgroup1`, `cgroup2` or `none`.
    pub version: String,
    pub path: Option<String>,
    pub cpus: Option<CpuSet>,
    pub mems: Option<NodeSet>,
    /// `sched_getaffinity` of this process (live only).
    pub affinity: Option<CpuSet>,
    /// True when the allowed CPUs or nodes are fewer than the machine has.
    pub restricts: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Cmdline {
    pub raw: Option<String>,
    /// NUMA-relevant options found, as `(key, value)`; value empty for flags.
    pub options: Vec<(String, String)>,
}

impl Cmdline {
    /// The value of an option such as `numa` or `numa_balancing`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.options.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum NumaModeKind {
    /// Only one package and one node: nothing to infer.
    SingleNode,
    /// One node per package.
    NodePerPackage,
    /// Several nodes per package (SNC, NPS, COD, per-die nodes).
    NodesPerPackage,
    /// Several packages, one node, and `numa=off` on the kernel line.
    DisabledByKernel,
    /// Several packages, one node, no kernel option: firmware interleaving.
    DisabledByFirmware,
    /// `numa=fake=` on the kernel command line.
    Fake,
    /// Nodes that span several packages.
    NodesSpanPackages,
    /// No NUMA information at all (no node directory).
    Unknown,
    /// Several nodes with CPUs, but the kernel gives no package ids: how
    /// nodes relate to sockets is unknown.
    PackagesUnknown,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NumaMode {
    pub kind: NumaModeKind,
    /// Nodes with CPUs per package, when uniform.
    pub nodes_per_package: Option<u32>,
    /// The vendor's name for the mode when it can be told, e.g. `SNC2`,
    /// `NPS4`, `COD`, `L3-as-NUMA`, `per-die`; `None` when it cannot
    /// (then `alternatives` names the candidates).
    pub label: Option<String>,
    /// Why numaprobe concluded this, in one or two sentences, saying how
    /// it told the mode from the others where it could.
    pub reason: String,
    /// How sure the inference is of `kind` and `label`.
    #[serde(default)]
    pub confidence: Confidence,
    /// Other readings the evidence fits, each with what would tell it
    /// apart. Never empty when `confidence` is `ambiguous`.
    #[serde(default)]
    pub alternatives: Vec<Alternative>,
}

/// How sure a NUMA-mode inference is.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The files rule out every other reading (the reason says how).
    Certain,
    /// The pattern fits this mode and no other known one, but it rests on
    /// the CPU model or vendor rather than on the files alone. Topologies
    /// stored by versions that did not say are read as `likely`.
    #[default]
    Likely,
    /// The evidence fits several modes equally: `alternatives` names them.
    Ambiguous,
}

/// A mode the evidence also fits.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Alternative {
    pub kind: NumaModeKind,
    /// The vendor's name, e.g. `NPS4`, `L3-as-NUMA`.
    pub label: Option<String>,
    /// What would tell this reading from the others (a BIOS setting to
    /// check, a file to read, a count to make).
    pub tell: String,
}

impl NumaMode {
    /// The label, or the candidates joined by " or " when the label is not
    /// known (`NPS4 or L3-as-NUMA`); `None` when neither says anything.
    pub fn label_text(&self) -> Option<String> {
        if let Some(l) = &self.label {
            return Some(l.clone());
        }
        let c: Vec<&str> = self.alternatives.iter().filter_map(|a| a.label.as_deref()).collect();
        (!c.is_empty()).then(|| c.join(" or "))
    }
}

/// One distance level of the SLIT: every ordered node pair at exactly
/// `distance`, and the groups that nodes form when joined by every
/// distance up to this one (single-linkage, as hwloc groups nodes by
/// distance). The first tier is the local one (each node alone, 10); the
/// last joins every node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DistanceTier {
    /// SLIT distance (10 = local).
    pub distance: u32,
    /// Ordered node pairs (from, to) at exactly this distance, the
    /// diagonal included.
    pub pairs: u32,
    /// One pair at this distance, from a node with CPUs when there is one:
    /// the pair `run` measures for the tier when it does not measure them
    /// all.
    pub example: NodePair,
    /// Groups of nodes that reach each other within `distance` (a
    /// pair's larger direction counts when the matrix is asymmetric).
    pub groups: Vec<NodeSet>,
}

/// A directed node pair.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct NodePair {
    pub from: u32,
    pub to: u32,
}

impl Topology {
    pub fn node(&self, id: u32) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    pub fn node_ids(&self) -> NodeSet {
        self.nodes.iter().map(|n| n.id).collect()
    }

    /// Nodes that have CPUs.
    pub fn cpu_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| !n.cpus.is_empty())
    }

    /// Nodes that have memory.
    pub fn memory_nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().filter(|n| n.mem_total_bytes > 0)
    }

    pub fn cpu(&self, id: u32) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// SLIT distance from node `a` to node `b`, when known.
    pub fn distance(&self, a: u32, b: u32) -> Option<u32> {
        let j = self.nodes.iter().position(|n| n.id == b)?;
        self.node(a)?.distances.get(j).copied()
    }

    /// The largest cache that any CPU of `cpus` uses (the last-level cache),
    /// summed over the distinct instances those CPUs share: what a team of
    /// threads on `cpus` can hold on chip.
    pub fn llc_bytes_for(&self, cpus: &CpuSet) -> Option<u64> {
        let top = self
            .caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction && !c.cpus.is_disjoint(cpus))
            .map(|c| c.level)
            .max()?;
        Some(
            self.caches
                .iter()
                .filter(|c| {
                    c.level == top && c.kind != CacheKind::Instruction && !c.cpus.is_disjoint(cpus)
                })
                .map(|c| c.size_bytes)
                .sum(),
        )
    }

    /// Cores, counted as hwloc counts them: CPUs sharing a
    /// `thread_siblings` set are one core, unless their `core_id`s differ
    /// (AMD Bulldozer compute units are two cores).
    pub fn core_count(&self) -> usize {
        let mut seen = std::collections::BTreeSet::new();
        for c in &self.cpus {
            seen.insert((c.package, c.thread_siblings.first(), c.core));
        }
        seen.len()
    }

    /// The most hardware threads sharing one `thread_siblings` set (1
    /// without SMT; 2 on Bulldozer compute units).
    pub fn smt_threads_per_core(&self) -> usize {
        self.cpus.iter().map(|c| c.thread_siblings.len()).max().unwrap_or(0)
    }

    /// Dies over all packages (distinct `(package, die)` pairs).
    pub fn die_count(&self) -> usize {
        self.packages.iter().map(|p| p.dies.len()).sum()
    }

    /// Clusters over all packages, when the kernel reports them.
    pub fn cluster_count(&self) -> Option<usize> {
        let set: std::collections::BTreeSet<(u32, u32)> =
            self.cpus.iter().filter_map(|c| Some((c.package, c.cluster?))).collect();
        (!set.is_empty()).then_some(set.len())
    }

    /// Nodes without CPUs but with memory (CXL, HBM, PMem, GPU memory).
    pub fn memory_only_nodes(&self) -> NodeSet {
        self.nodes.iter().filter(|n| n.kind == NodeKind::MemoryOnly).map(|n| n.id).collect()
    }

    /// Nodes with CPUs but no memory.
    pub fn cpu_only_nodes(&self) -> NodeSet {
        self.nodes.iter().filter(|n| n.kind == NodeKind::CpuOnly).map(|n| n.id).collect()
    }

    /// Total memory over all nodes, in bytes (from `/proc/meminfo` when
    /// there are no nodes).
    pub fn mem_total_bytes(&self) -> u64 {
        if self.nodes.is_empty() {
            return self.system_memory.as_ref().map_or(0, |m| m.total_bytes);
        }
        self.nodes.iter().map(|n| n.mem_total_bytes).sum()
    }

    /// The nodes' memory added up and the system's (`/proc/meminfo`
    /// MemTotal), when the nodes hold less than 90% of it: memory the
    /// kernel counts but no node shows yet. Seen in a Firecracker guest
    /// with virtio-mem: one node of 4.3 GiB in a 126 GiB system, growing
    /// as memory was used.
    pub fn nodes_short_of_system(&self) -> Option<(u64, u64)> {
        let system = self.system_memory.as_ref()?.total_bytes;
        if self.nodes.is_empty() || system == 0 {
            return None;
        }
        let nodes: u64 = self.nodes.iter().map(|n| n.mem_total_bytes).sum();
        ((nodes as f64) < 0.9 * system as f64).then_some((nodes, system))
    }

    /// A one-line description, e.g. `2 packages, 40 cores, 80 CPUs, 4 NUMA
    /// nodes (SNC2, 2 per package), 384.0 GiB node memory; Intel(R) Xeon(R)
    /// Gold 6230`: the memory the nodes hold, and the system's
    /// (`/proc/meminfo`) beside it when the nodes hold less
    /// ([`Self::nodes_short_of_system`]).
    pub fn summary_line(&self) -> String {
        let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
        let mut s = format!(
            "{}, {}, {}",
            plural(self.packages.len(), "package"),
            plural(self.core_count(), "core"),
            plural(self.cpus.len(), "CPU")
        );
        if self.nodes.is_empty() {
            s.push_str(", no NUMA information");
            if self.system_memory.is_some() {
                s.push_str(&format!(
                    ", {:.1} GiB",
                    self.mem_total_bytes() as f64 / (1u64 << 30) as f64
                ));
            }
        } else {
            s.push_str(&format!(", {}", plural(self.nodes.len(), "NUMA node")));
            let mo = self.memory_only_nodes();
            let mut extra = Vec::new();
            if let Some(l) = self.numa_mode.label_text() {
                extra.push(l);
            }
            if let Some(n) = self.numa_mode.nodes_per_package.filter(|&n| n > 1) {
                extra.push(format!("{n} per package"));
            }
            if !mo.is_empty() {
                extra.push(format!("{} memory-only", mo.len()));
            }
            if !extra.is_empty() {
                s.push_str(&format!(" ({})", extra.join(", ")));
            }
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            match self.nodes_short_of_system() {
                Some((nodes, system)) => s.push_str(&format!(
                    ", {:.1} GiB node memory of {:.1} GiB system memory",
                    gib(nodes),
                    gib(system)
                )),
                None => {
                    s.push_str(&format!(", {:.1} GiB node memory", gib(self.mem_total_bytes())))
                }
            }
        }
        if let Some(m) = &self.cpu_model {
            s.push_str(&format!("; {m}"));
        }
        s
    }

    /// Data or unified caches seen by one CPU, from L1 upwards.
    pub fn caches_of(&self, cpu: u32) -> Vec<&Cache> {
        let mut v: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.kind != CacheKind::Instruction && c.cpus.contains(cpu))
            .collect();
        v.sort_by_key(|c| c.level);
        v
    }
}
