//! What kind of memory a node holds (DRAM, CXL-like, HBM-like), as far
//! as the system tells: whether the node has CPUs, the kernel's memory
//! tier (`memory_tiering`: a higher tier id is slower memory), and the
//! firmware's HMAT bandwidth against the CPU nodes' DRAM.

use serde::{Deserialize, Serialize};

use crate::model::{HmatAccess, Node, Topology};

/// The kind of a node's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryKind {
    /// Memory of a node with CPUs: the sockets' DRAM.
    Dram,
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
            MemoryKind::CxlLike => "CXL-like",
            MemoryKind::HbmLike => "HBM-like",
            MemoryKind::MemoryOnly => "memory-only",
            MemoryKind::None => "no memory",
        }
    }
}

/// The HMAT figures of a node as a target: `access1` (CPU initiators)
/// when present, else `access0`.
pub fn hmat_of(n: &Node) -> Option<&HmatAccess> {
    let h = n.hmat.as_ref()?;
    h.access1.as_ref().or(h.access0.as_ref())
}

/// A node's kind with the reason, in words.
pub fn memory_kind(t: &Topology, n: &Node) -> (MemoryKind, String) {
    if n.mem_total_bytes == 0 {
        return (MemoryKind::None, "no memory".into());
    }
    if !n.cpus.is_empty() {
        return (MemoryKind::Dram, "a node with CPUs".into());
    }
    let dram: Vec<&Node> =
        t.nodes.iter().filter(|d| !d.cpus.is_empty() && d.mem_total_bytes > 0).collect();
    let dram_bw = dram.iter().filter_map(|d| hmat_of(d)?.read_bandwidth_mbs).max();
    if let (Some(own), Some(d)) = (hmat_of(n).and_then(|h| h.read_bandwidth_mbs), dram_bw) {
        if own > d {
            return (
                MemoryKind::HbmLike,
                format!("CPU-less, HMAT read bandwidth {own} MB/s above DRAM's {d} MB/s"),
            );
        }
        if own < d {
            return (
                MemoryKind::CxlLike,
                format!("CPU-less, HMAT read bandwidth {own} MB/s below DRAM's {d} MB/s"),
            );
        }
    }
    let dram_tier = dram.iter().filter_map(|d| d.memory_tier).min();
    if let (Some(own), Some(d)) = (n.memory_tier, dram_tier) {
        if own > d {
            return (MemoryKind::CxlLike, format!("CPU-less, memory tier {own} below DRAM's {d}"));
        }
    }
    (MemoryKind::MemoryOnly, "CPU-less; no HMAT or tier says more".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Hmat;
    use crate::synthetic::Machine;
    use crate::Vendor;

    fn access(bw: u64) -> Option<Hmat> {
        let a = HmatAccess {
            initiators: "0".parse().unwrap(),
            targets: Default::default(),
            read_bandwidth_mbs: Some(bw),
            write_bandwidth_mbs: Some(bw),
            read_latency_ns: Some(100),
            write_latency_ns: Some(100),
        };
        Some(Hmat { access0: Some(a.clone()), access1: Some(a) })
    }

    fn machine() -> Topology {
        Machine::new(Vendor::Intel, "x")
            .package(0, "0-1")
            .node(0, "0-1", 8 << 30)
            .node(1, "", 8 << 30)
            .build()
    }

    #[test]
    fn kind_from_hmat_bandwidth_then_tiers() {
        let mut t = machine();
        assert_eq!(memory_kind(&t, &t.nodes[0]).0, MemoryKind::Dram);
        assert_eq!(memory_kind(&t, &t.nodes[1]).0, MemoryKind::MemoryOnly);
        t.nodes[0].memory_tier = Some(4);
        t.nodes[1].memory_tier = Some(22);
        assert_eq!(memory_kind(&t, &t.nodes[1]).0, MemoryKind::CxlLike);
        t.nodes[0].hmat = access(20480);
        t.nodes[1].hmat = access(40960);
        let (k, why) = memory_kind(&t, &t.nodes[1]);
        assert_eq!(k, MemoryKind::HbmLike, "HMAT wins over the tier: {why}");
        t.nodes[1].hmat = access(10240);
        assert_eq!(memory_kind(&t, &t.nodes[1]).0, MemoryKind::CxlLike);
    }
}
