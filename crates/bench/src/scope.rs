//! What `run`'s package-scope steps measure on a machine: each package's
//! CPUs and its own DRAM nodes, read once from the topology, so that the
//! plan ([`crate::suite`]), the bandwidth cases ([`crate::bw`]) and the
//! latency chases ([`crate::lat`]) agree on them.
//!
//! A package's own DRAM is the nodes whose CPUs all lie in the package
//! and that hold memory. A memory-only node (CXL, HBM in flat mode, no
//! CPUs) is never part of it: it is a tier of its own, measured by the
//! matrix. Where the OS shows nodes that span packages (NUMA off in the
//! firmware, `numa=off`), no policy can keep pages on one package: the
//! package's figures are then taken on the memory the OS gives, and say
//! so.

use results::scope::ScopePolicy;
use topo::{CpuSet, NodeSet, Topology};

/// One package as the package-scope steps see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageMemory {
    /// `physical_package_id`.
    pub id: u32,
    /// Its online CPUs.
    pub cpus: CpuSet,
    /// The OS nodes holding its CPUs.
    pub cpu_nodes: NodeSet,
    /// Its own DRAM nodes; under NUMA off, the node(s) its CPUs are on
    /// (the memory the OS gives).
    pub dram: NodeSet,
    /// The OS nodes of its CPUs also hold other packages' CPUs (NUMA off
    /// in the firmware, `numa=off`, nodes spanning packages).
    pub numa_off: bool,
    /// Its CPU nodes without memory: each thread cannot be bound to its
    /// own node's memory.
    pub cpu_only_nodes: NodeSet,
}

impl PackageMemory {
    /// The policy of its own-memory figure bound per node: `os-given`
    /// under NUMA off.
    pub fn own_policy(&self) -> ScopePolicy {
        if self.numa_off {
            ScopePolicy::OsGiven
        } else {
            ScopePolicy::BindPerNode
        }
    }
}

/// The packages of `topo` that hold CPUs, by id.
pub fn packages(topo: &Topology) -> Vec<PackageMemory> {
    let mut out = Vec::new();
    for p in &topo.packages {
        let cpus = p.cpus.intersection(&topo.online_cpus);
        if cpus.is_empty() {
            continue;
        }
        let nodes: Vec<&topo::Node> =
            topo.cpu_nodes().filter(|n| !n.cpus.is_disjoint(&cpus)).collect();
        let numa_off = nodes.iter().any(|n| !n.cpus.is_subset(&p.cpus));
        let dram: NodeSet = nodes.iter().filter(|n| n.mem_total_bytes > 0).map(|n| n.id).collect();
        let cpu_only_nodes: NodeSet =
            nodes.iter().filter(|n| n.mem_total_bytes == 0).map(|n| n.id).collect();
        out.push(PackageMemory {
            id: p.id,
            cpus,
            cpu_nodes: nodes.iter().map(|n| n.id).collect(),
            dram,
            numa_off,
            cpu_only_nodes,
        });
    }
    out.sort_by_key(|p| p.id);
    out
}

/// Why `topo` has no package-scope figures at all (one package, no
/// package ids); `None` when it has two or more packages with CPUs.
pub fn why_none(topo: &Topology) -> Option<String> {
    if topo.packages_unknown {
        return Some(
            "the kernel gives no package ids: which CPUs form a package is unknown".into(),
        );
    }
    match packages(topo).len() {
        0 => Some("no package with online CPUs".into()),
        1 => Some("one package".into()),
        _ => None,
    }
}

/// The nodes a package's own-memory figure interleaves over, or why it
/// has none.
pub fn own_dram(p: &PackageMemory) -> Result<NodeSet, String> {
    if p.dram.is_empty() {
        return Err(format!(
            "package {}'s nodes ({}) hold no memory: it has no DRAM of its own",
            p.id, p.cpu_nodes
        ));
    }
    Ok(p.dram.clone())
}

/// The nodes package `to`'s memory is placed on when another package
/// reads it, or why none can be.
pub fn other_dram(from: &PackageMemory, to: &PackageMemory) -> Result<NodeSet, String> {
    if from.numa_off || to.numa_off {
        return Err(format!(
            "NUMA off: node(s) {} hold several packages' CPUs, so no page can be placed on \
             package {}'s memory",
            to.cpu_nodes, to.id
        ));
    }
    own_dram(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_only_nodes_are_no_package_s_dram() {
        let t = crate::suite::tests::snc2_with_cxl();
        let p = packages(&t);
        let dram: Vec<String> = p.iter().map(|p| p.dram.to_string()).collect();
        assert_eq!(dram, ["0-1", "2-3"]);
        assert!(p.iter().all(|p| !p.numa_off && p.cpu_only_nodes.is_empty()));
        assert_eq!(why_none(&t), None);
        assert_eq!(other_dram(&p[0], &p[1]).unwrap().to_string(), "2-3");
    }

    #[test]
    fn one_node_over_two_packages_is_numa_off() {
        let t = crate::suite::tests::numa_off();
        let p = packages(&t);
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|p| p.numa_off && p.dram.to_string() == "0"));
        assert_eq!(p[1].own_policy(), ScopePolicy::OsGiven);
        let why = other_dram(&p[0], &p[1]).unwrap_err();
        assert!(why.starts_with("NUMA off"), "{why}");
    }
}
