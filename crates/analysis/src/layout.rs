//! Where a run's OS nodes sit in the hardware, so that metrics mean one
//! thing under every NUMA mode. SNC, NPS, COD and `numa=off` change how
//! many OS nodes there are and what each holds: node ids and SLIT values
//! change with them, the packages do not. A latency or bandwidth cell is
//! therefore named by its hardware [`Relation`] (same node, another node
//! of the same package, another package, a memory-only tier), and a
//! figure by its [`Scope`] (one CPU, one node, one package, the whole
//! machine). Two runs' per-node bandwidth figures are the same metric only
//! when their nodes are alike ([`Structure`]).

use std::collections::{BTreeMap, BTreeSet};

use results::run::LoadedRun;
use serde::Serialize;

/// The hardware relation between the CPUs and the memory of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// Threads and memory on the same OS node.
    SameNode,
    /// Memory on another node of the threads' own package (the SNC, NPS
    /// or COD neighbour).
    SamePackage,
    /// Memory on a node of another package (across the socket link).
    OtherPackage,
    /// A package's own memory, interleaved over its nodes (the local node
    /// and its neighbours in proportion).
    OwnPackage,
    /// Memory on a node without CPUs (CXL, HBM, PMEM as RAM).
    MemoryTier,
    /// Another node, where the run stored nothing that says which package
    /// it is on.
    OtherNode,
    /// Every node's threads on their own node's memory at once.
    BoundPerDomain,
    /// Pages interleaved over every node.
    Interleaved,
    /// Memory spread over every node as a node-spanning workload's is:
    /// each memory node in proportion.
    Spread,
    /// Pinned host memory to a device (a GPU) and back, over PCIe or the
    /// socket link (`numaprobe gpu`).
    HostDevice,
    /// Not a memory figure (a program's own score, its wall time).
    Program,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::SameNode => "same node",
            Relation::SamePackage => "same package, other node",
            Relation::OtherPackage => "other package",
            Relation::OwnPackage => "own package, interleaved over its nodes",
            Relation::MemoryTier => "memory-only tier",
            Relation::OtherNode => "other node (package unknown)",
            Relation::BoundPerDomain => "bound per domain",
            Relation::Interleaved => "interleaved",
            Relation::Spread => "spread over every node",
            Relation::HostDevice => "host memory to a device",
            Relation::Program => "program",
        }
    }
}

/// Over what a figure is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// One CPU's figure (averaged or grouped over CPUs).
    Cpu,
    /// One OS node's CPUs (a matrix cell, a node's local figure): its
    /// size is the NUMA mode's.
    Node,
    /// One package's CPUs, whatever its number of nodes.
    Package,
    /// The whole machine.
    Machine,
    /// One device (a GPU).
    Device,
    /// A program run.
    Program,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Cpu => "per CPU",
            Scope::Node => "per node",
            Scope::Package => "per package",
            Scope::Machine => "whole machine",
            Scope::Device => "per device",
            Scope::Program => "per program run",
        }
    }
}

/// What a node of a run is made of: the figures that make two runs'
/// per-node bandwidth the same metric when they are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Structure {
    pub packages: u64,
    /// OS nodes with CPUs.
    pub cpu_nodes: u64,
    pub cpus: u64,
}

impl Structure {
    /// `4 nodes of 20 CPUs on 2 packages`.
    pub fn text(&self) -> String {
        let node = if self.cpu_nodes == 1 { "node" } else { "nodes" };
        let per = self.cpus.checked_div(self.cpu_nodes).unwrap_or(0);
        let pk = if self.packages == 1 { "package" } else { "packages" };
        format!("{} {node} of {per} CPUs on {} {pk}", self.cpu_nodes, self.packages)
    }
}

/// Where each OS node of a run sits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// The package of each node with CPUs, where all its CPUs are on one
    /// package (a node spanning packages, as under `numa=off`, has none).
    pub node_package: BTreeMap<u32, u32>,
    /// Nodes with memory and no CPUs.
    pub memory_only: BTreeSet<u32>,
    /// Nodes with both CPUs and memory (empty without a stored topology).
    pub dram_nodes: BTreeSet<u32>,
    /// The package of each CPU the run's topology lists.
    pub cpu_package: BTreeMap<u32, u32>,
    /// Packages of the machine (0: unknown).
    pub packages: u64,
    /// Nodes the OS showed.
    pub os_nodes: u64,
    /// Nodes with CPUs the OS showed.
    pub cpu_nodes: u64,
    /// Online CPUs (0: unknown).
    pub cpus: u64,
    /// True when the run stored its topology (packages per node known);
    /// else relations are inferred from the counts alone.
    pub from_topology: bool,
}

impl Layout {
    /// The layout of a run: its stored topology, else the counts its
    /// configuration and machine document record.
    pub fn of(run: &LoadedRun, os_nodes: u64) -> Layout {
        let packages_doc = run.machine_info.packages.as_ref().map(|c| c.get()).unwrap_or(0);
        if let Some(t) = run.topology.get().filter(|t| !t.nodes.is_empty() && !t.cpus.is_empty()) {
            let cpu_package: BTreeMap<u32, u32> =
                t.cpus.iter().map(|c| (c.id, c.package)).collect();
            let mut node_package = BTreeMap::new();
            let mut memory_only = BTreeSet::new();
            let mut dram_nodes = BTreeSet::new();
            for n in &t.nodes {
                if !n.cpus.is_empty() && n.mem_total_bytes > 0 {
                    dram_nodes.insert(n.id);
                }
                let pk: BTreeSet<u32> =
                    n.cpus.iter().filter_map(|c| cpu_package.get(&c).copied()).collect();
                if n.cpus.is_empty() {
                    if n.mem_total_bytes > 0 {
                        memory_only.insert(n.id);
                    }
                } else if pk.len() == 1 {
                    node_package.insert(n.id, *pk.iter().next().unwrap_or(&0));
                }
            }
            let packages = if t.packages_unknown { packages_doc } else { t.packages.len() as u64 };
            return Layout {
                node_package,
                memory_only,
                dram_nodes,
                cpu_package,
                packages,
                os_nodes: t.nodes.len() as u64,
                cpu_nodes: t.nodes.iter().filter(|n| !n.cpus.is_empty()).count() as u64,
                cpus: t.cpus.len() as u64,
                from_topology: true,
            };
        }
        let cpu_nodes = run.config.nodes_with_cpus.unwrap_or(os_nodes).max(1);
        Layout {
            packages: packages_doc,
            os_nodes,
            cpu_nodes,
            cpus: run.config.online_cpus.unwrap_or(0),
            ..Layout::default()
        }
    }

    /// The structure of the run's nodes.
    pub fn structure(&self) -> Structure {
        Structure { packages: self.packages, cpu_nodes: self.cpu_nodes, cpus: self.cpus }
    }

    /// The relation of threads on `cpu_node` to memory on `mem_node`.
    /// Without a stored topology it follows from the counts where they
    /// leave one answer: one package (every other node is a neighbour), or
    /// one node per package (every other node is another package).
    pub fn relation(&self, cpu_node: u32, mem_node: u32) -> Relation {
        if cpu_node == mem_node {
            return Relation::SameNode;
        }
        if self.memory_only.contains(&mem_node) {
            return Relation::MemoryTier;
        }
        if self.from_topology {
            return match (self.node_package.get(&cpu_node), self.node_package.get(&mem_node)) {
                (Some(a), Some(b)) if a == b => Relation::SamePackage,
                (Some(_), Some(_)) => Relation::OtherPackage,
                _ => Relation::OtherNode,
            };
        }
        match self.packages {
            1 => Relation::SamePackage,
            p if p > 1 && self.cpu_nodes == p => Relation::OtherPackage,
            _ => Relation::OtherNode,
        }
    }

    /// The package of a CPU node, where one package holds it (inferred
    /// as `node` itself with one node per package and no topology).
    pub fn package_of(&self, node: u32) -> Option<u32> {
        if self.from_topology {
            return self.node_package.get(&node).copied();
        }
        match self.packages {
            1 => Some(0),
            p if p > 1 && self.cpu_nodes == p => Some(node),
            _ => None,
        }
    }

    /// The ids of the packages that hold CPU nodes (ids may be sparse:
    /// `physical_package_id` need not count from 0 without gaps).
    pub fn package_ids(&self) -> Vec<u32> {
        if self.from_topology {
            let ids: BTreeSet<u32> = self.node_package.values().copied().collect();
            return ids.into_iter().collect();
        }
        (0..self.packages as u32).collect()
    }

    /// The CPU nodes of package `pkg`, where the layout says which they
    /// are.
    pub fn cpu_nodes_of(&self, pkg: u32) -> Option<Vec<u32>> {
        if self.from_topology {
            let v: Vec<u32> =
                self.node_package.iter().filter(|(_, p)| **p == pkg).map(|(n, _)| *n).collect();
            return (!v.is_empty()).then_some(v);
        }
        match self.packages {
            1 if self.cpu_nodes == 1 => Some(vec![0]),
            p if p > 1 && self.cpu_nodes == p && u64::from(pkg) < p => Some(vec![pkg]),
            _ => None,
        }
    }

    /// Why a figure of `relation` cannot exist under this layout; `None`
    /// when it can.
    pub fn impossible(&self, relation: Relation) -> Option<NotApplicable> {
        match relation {
            Relation::OtherPackage | Relation::OtherNode if self.os_nodes <= 1 => {
                Some(NotApplicable::NoRemoteMemory)
            }
            Relation::OtherPackage if self.packages == 1 => Some(NotApplicable::OnePackage),
            Relation::SamePackage if self.os_nodes <= 1 => {
                Some(NotApplicable::NoOtherNodeOnOneOsNode)
            }
            Relation::SamePackage if self.packages > 1 && self.cpu_nodes <= self.packages => {
                Some(NotApplicable::NoOtherNodeInPackage)
            }
            Relation::MemoryTier if self.from_topology && self.memory_only.is_empty() => {
                Some(NotApplicable::NoMemoryOnlyNode)
            }
            _ => None,
        }
    }
}

/// Why a figure of a [`Relation`] cannot exist under a [`Layout`]
/// ([`Layout::impossible`]): the front ends word it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotApplicable {
    /// Remote memory (another package's or node's) under one OS node.
    NoRemoteMemory,
    /// Another package's memory on a machine of one package.
    OnePackage,
    /// Another node of the package under one OS node.
    NoOtherNodeOnOneOsNode,
    /// Another node of the package with one node per package.
    NoOtherNodeInPackage,
    /// A memory-only node where the topology shows none.
    NoMemoryOnlyNode,
}
