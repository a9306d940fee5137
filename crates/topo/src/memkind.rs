//! What kind of memory a node holds (DRAM, CXL, PMEM as RAM, CXL-like,
//! HBM-like), as far as the system tells, with the evidence: whether the
//! node has CPUs, the CXL regions and DAX devices that reach it
//! ([`crate::memdev`]), the firmware's HMAT bandwidth against the CPU
//! nodes' DRAM, and the kernel's memory tier (`memory_tiering`: a higher
//! tier id is slower memory).

pub use crate::model::MemoryKind;
use crate::model::{HmatAccess, Node, Topology};

/// The HMAT figures of a node as a target: `access1` (CPU initiators)
/// when present, else `access0`.
pub fn hmat_of(n: &Node) -> Option<&HmatAccess> {
    let h = n.hmat.as_ref()?;
    h.access1.as_ref().or(h.access0.as_ref())
}

/// The CXL regions and DAX devices that reach node `id`, in words
/// (`region0 mode=ram size 4 GiB ways 1 targets decoder2.0`, `dax0.0
/// target_node=2 (kmem, cxl)`), with what they say of its kind:
/// `Some(Cxl)` for a CXL region or a DAX device of one, `Some(PmemAsRam)`
/// for an NVDIMM namespace's DAX device onlined by `kmem`, `None` when
/// they only say "onlined from a DAX device" (soft-reserved memory: CXL
/// or PMEM as RAM typically, HBM sometimes) or nothing.
fn device_evidence(t: &Topology, id: u32) -> (Option<MemoryKind>, Vec<String>) {
    let mut kind = None;
    let mut ev = Vec::new();
    for x in t.dax_devices.iter().filter(|x| x.target_node == Some(id)) {
        let mut how: Vec<&str> = Vec::new();
        if let Some(d) = &x.driver {
            how.push(d);
        }
        if let Some(p) = &x.provider {
            how.push(p);
        }
        let mut s = format!("{} target_node={id}", x.name);
        if !how.is_empty() {
            s.push_str(&format!(" ({})", how.join(", ")));
        }
        if let Some(b) = x.size_bytes {
            s.push_str(&format!(" {}", crate::units::binary_size(b)));
        }
        ev.push(s);
        match x.provider.as_deref() {
            Some("cxl") => kind = Some(MemoryKind::Cxl),
            Some("pmem") if x.driver.as_deref() == Some("kmem") && kind.is_none() => {
                kind = Some(MemoryKind::PmemAsRam)
            }
            _ => {}
        }
    }
    for g in t.cxl_regions.iter().filter(|g| g.nodes.contains(id)) {
        let mut s = g.name.clone();
        s.push_str(&format!(" mode={}", g.mode.as_deref().unwrap_or("unknown")));
        if let Some(b) = g.size_bytes {
            s.push_str(&format!(" size {}", crate::units::binary_size(b)));
        }
        if let Some(w) = g.interleave_ways {
            s.push_str(&format!(" ways {w}"));
        }
        if !g.targets.is_empty() {
            s.push_str(&format!(" targets {}", g.targets.join(",")));
        }
        ev.push(s);
        kind = Some(MemoryKind::Cxl);
    }
    (kind, ev)
}

/// A node's kind with the reason (the evidence), in words.
pub fn memory_kind(t: &Topology, n: &Node) -> (MemoryKind, String) {
    if n.mem_total_bytes == 0 {
        return (MemoryKind::None, "no memory".into());
    }
    if !n.cpus.is_empty() {
        return (MemoryKind::Dram, "a node with CPUs".into());
    }
    let (dev_kind, dev) = device_evidence(t, n.id);
    let with_dev = |s: String| {
        if dev.is_empty() {
            s
        } else {
            format!("{}; {s}", dev.join(", "))
        }
    };
    if let Some(k) = dev_kind {
        return (k, format!("CPU-less, {}", dev.join(", ")));
    }
    let onlined = t
        .dax_devices
        .iter()
        .any(|x| x.target_node == Some(n.id) && x.driver.as_deref() == Some("kmem"));
    let dram: Vec<&Node> =
        t.nodes.iter().filter(|d| !d.cpus.is_empty() && d.mem_total_bytes > 0).collect();
    let dram_bw = dram.iter().filter_map(|d| hmat_of(d)?.read_bandwidth_mbs).max();
    if let (Some(own), Some(d)) = (hmat_of(n).and_then(|h| h.read_bandwidth_mbs), dram_bw) {
        if own > d {
            return (
                MemoryKind::HbmLike,
                with_dev(format!("CPU-less, HMAT read bandwidth {own} MB/s above DRAM's {d} MB/s")),
            );
        }
        if own < d {
            return (
                MemoryKind::CxlLike,
                with_dev(format!("CPU-less, HMAT read bandwidth {own} MB/s below DRAM's {d} MB/s")),
            );
        }
    }
    if onlined {
        return (
            MemoryKind::CxlLike,
            format!(
                "CPU-less, {}: a DAX device onlined by kmem (typically CXL or PMEM as RAM)",
                dev.join(", ")
            ),
        );
    }
    let dram_tier = dram.iter().filter_map(|d| d.memory_tier).min();
    if let (Some(own), Some(d)) = (n.memory_tier, dram_tier) {
        if own > d {
            return (
                MemoryKind::CxlLike,
                with_dev(format!("CPU-less, memory tier {own} below DRAM's {d}")),
            );
        }
    }
    (
        MemoryKind::MemoryOnly,
        with_dev("CPU-less; no CXL region, kmem DAX device, HMAT or tier says more".into()),
    )
}

/// Every node's kind with its evidence.
pub fn memory_kinds(t: &Topology) -> Vec<crate::model::NodeMemoryKind> {
    t.nodes
        .iter()
        .map(|n| {
            let (kind, evidence) = memory_kind(t, n);
            crate::model::NodeMemoryKind { node: n.id, kind, evidence }
        })
        .collect()
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
