//! What this process may use: CPUs from its affinity mask (which the
//! cgroup cpuset bounds) and nodes from `Mems_allowed_list`, with
//! validation that names the allowed set when it refuses.

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet, SysRoot, TopoError, Topology};

use crate::affinity::current_thread_affinity;
use crate::error::{PlaceError, Result};
use crate::spec::SetSpec;

/// CPUs and memory nodes this process may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowed {
    /// `sched_getaffinity` of the calling thread.
    pub cpus: CpuSet,
    /// `Mems_allowed_list` of `/proc/self/status`.
    pub mems: NodeSet,
}

impl Allowed {
    /// Reads the calling thread's affinity and `proc/self/status` under
    /// `root` (use [`SysRoot::live`]).
    pub fn current(root: &SysRoot) -> Result<Allowed> {
        let cpus = current_thread_affinity()?;
        let rel = "proc/self/status";
        let status = root.read(rel)?;
        let mems =
            parse_mems_allowed(&status).map_err(|m| TopoError::malformed(root.path(rel), m))?;
        Ok(Allowed { cpus, mems })
    }

    /// Refuses CPUs outside the allowed set, or offline / absent from
    /// `topo` when given.
    pub fn check_cpus(&self, cpus: &CpuSet, topo: Option<&Topology>) -> Result<()> {
        if let Some(t) = topo {
            let missing = cpus.difference(&t.online_cpus);
            if !missing.is_empty() {
                return Err(PlaceError::NoSuchCpu {
                    asked: missing,
                    existing: t.online_cpus.clone(),
                });
            }
        }
        let bad = cpus.difference(&self.cpus);
        if !bad.is_empty() {
            return Err(PlaceError::CpuNotAllowed { asked: bad, allowed: self.cpus.clone() });
        }
        Ok(())
    }

    /// Refuses nodes as memory targets when they do not exist, have no
    /// memory, or are outside `Mems_allowed`.
    pub fn check_mem_nodes(&self, nodes: &NodeSet, topo: &Topology) -> Result<()> {
        check_exist(nodes, topo)?;
        let with_memory: NodeSet = topo.memory_nodes().map(|n| n.id).collect();
        let bad = nodes.difference(&with_memory);
        if !bad.is_empty() {
            return Err(PlaceError::MemorylessNode { asked: bad, with_memory });
        }
        let bad = nodes.difference(&self.mems);
        if !bad.is_empty() {
            return Err(PlaceError::NodeNotAllowed { asked: bad, allowed: self.mems.clone() });
        }
        Ok(())
    }

    /// Refuses a node as a place to run when it does not exist, has no
    /// CPUs, or none of its CPUs is allowed; returns the allowed CPUs of
    /// the node.
    pub fn check_cpu_node(&self, node: u32, topo: &Topology) -> Result<CpuSet> {
        let one: NodeSet = [node].into_iter().collect();
        check_exist(&one, topo)?;
        let n = topo.node(node).expect("checked above");
        if n.cpus.is_empty() {
            return Err(PlaceError::CpulessNode {
                asked: one,
                with_cpus: topo.cpu_nodes().map(|n| n.id).collect(),
            });
        }
        let usable = n.cpus.intersection(&self.cpus);
        if usable.is_empty() {
            return Err(PlaceError::CpuNotAllowed {
                asked: n.cpus.clone(),
                allowed: self.cpus.clone(),
            });
        }
        Ok(usable)
    }

    /// Resolves a node spec (`0-1`, `all`, `!2`, `+0`; see [`crate::spec`])
    /// to nodes that may hold pages: a plain list is checked node by node
    /// (absent, memory-less, not allowed: each its own error); `all`, `!`
    /// and `+` work within [`memory_nodes`](Self::memory_nodes).
    pub fn resolve_mem_nodes(&self, spec: &str, topo: &Topology) -> Result<NodeSet> {
        match SetSpec::parse(spec)? {
            SetSpec::List(l) => self.check_mem_nodes(&l, topo).map(|()| l),
            s => s.resolve(&self.memory_nodes(topo), "node"),
        }
    }

    /// Resolves a node spec to nodes to run on (each with an allowed CPU):
    /// a plain list is checked node by node, `all`/`!`/`+` work within
    /// [`cpu_nodes`](Self::cpu_nodes).
    pub fn resolve_cpu_nodes(&self, spec: &str, topo: &Topology) -> Result<NodeSet> {
        match SetSpec::parse(spec)? {
            SetSpec::List(l) => {
                for id in l.iter() {
                    self.check_cpu_node(id, topo)?;
                }
                Ok(l)
            }
            s => s.resolve(&self.cpu_nodes(topo), "node"),
        }
    }

    /// Resolves a CPU spec: a plain list must be online and allowed;
    /// `all`/`!`/`+` work within the allowed online CPUs.
    pub fn resolve_cpus(&self, spec: &str, topo: &Topology) -> Result<CpuSet> {
        match SetSpec::parse(spec)? {
            SetSpec::List(l) => self.check_cpus(&l, Some(topo)).map(|()| l),
            s => s.resolve(&self.cpus.intersection(&topo.online_cpus), "CPU"),
        }
    }

    /// Nodes that may hold this process's pages: allowed and with memory.
    pub fn memory_nodes(&self, topo: &Topology) -> NodeSet {
        topo.memory_nodes().map(|n| n.id).filter(|&id| self.mems.contains(id)).collect()
    }

    /// Nodes with at least one CPU this process may run on.
    pub fn cpu_nodes(&self, topo: &Topology) -> NodeSet {
        topo.cpu_nodes().filter(|n| !n.cpus.is_disjoint(&self.cpus)).map(|n| n.id).collect()
    }
}

fn check_exist(nodes: &NodeSet, topo: &Topology) -> Result<()> {
    let existing = topo.node_ids();
    let missing = nodes.difference(&existing);
    if !missing.is_empty() {
        return Err(PlaceError::NoSuchNode { asked: missing, existing });
    }
    Ok(())
}

/// The `Mems_allowed_list` of a `/proc/PID/status` text.
pub fn parse_mems_allowed(status: &str) -> std::result::Result<NodeSet, String> {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Mems_allowed_list:"))
        .ok_or_else(|| "no Mems_allowed_list line".to_string())?;
    NodeSet::parse_list(line).map_err(|e| format!("Mems_allowed_list: {e}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use topo::{Node, NodeKind};

    /// A synthetic topology: node 0 with CPUs 0-1, node 1 with CPUs 2-3,
    /// node 2 memory-only, node 3 CPU-only.
    pub(crate) fn four_nodes() -> Topology {
        let node = |id: u32, cpus: &str, mem: u64, kind| Node {
            id,
            cpus: cpus.parse().unwrap(),
            mem_total_bytes: mem,
            mem_free_bytes: mem / 2,
            distances: vec![],
            kind,
            hugepages: vec![],
            hmat: None,
            memory_side_caches: vec![],
            memory_tier: None,
        };
        let json = serde_json::json!({
            "schema_version": 1, "root": "/", "live": false, "arch": null,
            "cpu_vendor": "unknown", "cpu_model": null, "kernel": null,
            "online_cpus": "0-3,6-7", "offline_cpus": "", "packages": [], "cpus": [],
            "caches": [], "nodes": [], "memory_tiers": [], "devices": [],
            "cgroup": {"version": "none", "path": null, "cpus": null, "mems": null,
                       "affinity": null, "restricts": false},
            "cmdline": {"raw": null, "options": []},
            "numa_mode": {"kind": "unknown", "nodes_per_package": null, "label": null, "reason": ""},
            "warnings": []
        });
        let mut t: Topology = serde_json::from_value(json).unwrap();
        t.nodes = vec![
            node(0, "0-1", 1 << 30, NodeKind::CpuMemory),
            node(1, "2-3", 1 << 30, NodeKind::CpuMemory),
            node(2, "", 1 << 30, NodeKind::MemoryOnly),
            node(3, "6-7", 0, NodeKind::CpuOnly),
        ];
        t
    }

    fn allowed() -> Allowed {
        Allowed { cpus: "0-2,6-7".parse().unwrap(), mems: "0,2-3".parse().unwrap() }
    }

    #[test]
    fn refusals_name_the_allowed_set() {
        let t = four_nodes();
        let a = allowed();
        let e = a.check_cpus(&"3".parse().unwrap(), Some(&t)).unwrap_err().to_string();
        assert!(e.contains("CPU(s) 3 not allowed") && e.contains("0-2,6-7"), "{e}");
        let e = a.check_cpus(&"9".parse().unwrap(), Some(&t)).unwrap_err().to_string();
        assert!(e.contains("9") && e.contains("0-3,6-7"), "{e}");
        assert!(a.check_cpus(&"0-2".parse().unwrap(), Some(&t)).is_ok());

        let e = a.check_mem_nodes(&"1".parse().unwrap(), &t).unwrap_err().to_string();
        assert!(e.contains("node(s) 1 not allowed") && e.contains("0,2-3"), "{e}");
        let e = a.check_mem_nodes(&"3".parse().unwrap(), &t).unwrap_err().to_string();
        assert!(e.contains("3 have no memory") && e.contains("0-2"), "{e}");
        let e = a.check_mem_nodes(&"7".parse().unwrap(), &t).unwrap_err().to_string();
        assert!(e.contains("7 do not exist") && e.contains("0-3"), "{e}");
        assert!(a.check_mem_nodes(&"0,2".parse().unwrap(), &t).is_ok());

        let e = a.check_cpu_node(2, &t).unwrap_err().to_string();
        assert!(e.contains("2 have no CPUs") && e.contains("0-1,3"), "{e}");
        assert_eq!(a.check_cpu_node(1, &t).unwrap().to_list(), "2");
        assert_eq!(a.memory_nodes(&t).to_list(), "0,2");
        assert_eq!(a.cpu_nodes(&t).to_list(), "0-1,3");
    }

    #[test]
    fn specs_resolve_within_what_is_allowed_and_eligible() {
        let t = four_nodes();
        let a = allowed();
        assert_eq!(a.resolve_mem_nodes("all", &t).unwrap().to_list(), "0,2");
        assert_eq!(a.resolve_mem_nodes("!0", &t).unwrap().to_list(), "2");
        assert_eq!(a.resolve_mem_nodes("+1", &t).unwrap().to_list(), "2");
        assert_eq!(a.resolve_mem_nodes("0,2", &t).unwrap().to_list(), "0,2");
        let e = a.resolve_mem_nodes("3", &t).unwrap_err().to_string();
        assert!(e.contains("no memory"), "{e}");
        let e = a.resolve_mem_nodes("+2", &t).unwrap_err().to_string();
        assert!(e.contains("relative index 2") && e.contains("0,2"), "{e}");
        assert_eq!(a.resolve_cpu_nodes("all", &t).unwrap().to_list(), "0-1,3");
        let e = a.resolve_cpu_nodes("0,2", &t).unwrap_err().to_string();
        assert!(e.contains("2 have no CPUs"), "{e}");
        assert_eq!(a.resolve_cpus("all", &t).unwrap().to_list(), "0-2,6-7");
        assert_eq!(a.resolve_cpus("!0-1", &t).unwrap().to_list(), "2,6-7");
        let e = a.resolve_cpus("3", &t).unwrap_err().to_string();
        assert!(e.contains("CPU(s) 3 not allowed"), "{e}");
        assert!(a.resolve_cpus("x", &t).is_err());
    }

    #[test]
    fn reads_this_process() {
        let a = Allowed::current(&SysRoot::live()).unwrap();
        assert!(!a.cpus.is_empty());
        assert!(a.mems.contains(0));
        assert_eq!(a.mems, crate::policy::mems_allowed().unwrap());
        assert!(parse_mems_allowed("Name: x\n").is_err());
        assert_eq!(parse_mems_allowed("Mems_allowed_list:\t0-1,4\n").unwrap().to_list(), "0-1,4");
    }
}
