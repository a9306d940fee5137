//! Never take a machine's memory away: how much a node can spare, and the
//! refusal (with a smaller size suggested) when a request is too big.
//!
//! The reserve numaprobe leaves free on a node is
//! `max(5% of MemTotal, min(1 GiB, 25% of MemTotal))`: 1 GiB on nodes of
//! 4 GiB or more (5% on nodes above 20 GiB), a quarter of the node on small
//! ones (an emulated 256 MiB node keeps 64 MiB).
//!
//! What a node has available counts reclaimable memory as well as free
//! memory, like the kernel's `MemAvailable` (mm/show_mem.c
//! `si_mem_available`): a server that has run for a while keeps most of its
//! memory as page cache, which an allocation bound to the node reclaims. Per
//! node: `MemFree + file - min(file / 2, reserve) + SReclaimable -
//! min(SReclaimable / 2, reserve)`, where `file = Active(file) +
//! Inactive(file)` (numaprobe's reserve stands in for the low watermark).

use std::io;

use serde::{Deserialize, Serialize};
use topo::{NodeSet, SysRoot, TopoError};

use crate::error::{PlaceError, Result};

const GIB: u64 = 1 << 30;

/// One node's memory as `nodeN/meminfo` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeMemory {
    pub node: u32,
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// Page cache and slab the kernel can reclaim, as it estimates for
    /// `MemAvailable` (module docs); 0 when meminfo lacks the fields.
    pub reclaimable_bytes: u64,
    /// `free + reclaimable`.
    pub available_bytes: u64,
    /// What numaprobe keeps free ([`reserve_bytes`]).
    pub reserve_bytes: u64,
    /// `available - reserve`, at least 0.
    pub spare_bytes: u64,
}

/// The bytes numaprobe leaves free on a node of `total` bytes.
pub fn reserve_bytes(total: u64) -> u64 {
    (total / 20).max(GIB.min(total / 4))
}

/// Reads `MemTotal` and `MemFree` of `nodeN/meminfo` under `root`
/// ([`topo::read::node_meminfo`]); a node without the file is an error.
pub fn node_memory(root: &SysRoot, node: u32) -> Result<NodeMemory> {
    let rel = topo::read::node_meminfo_rel(node);
    let Some(m) = topo::read::node_meminfo(root, node)? else {
        return Err(TopoError::Io {
            path: root.path(&rel),
            source: io::ErrorKind::NotFound.into(),
        }
        .into());
    };
    let get = |k: &str| {
        m.get(k)
            .copied()
            .ok_or_else(|| TopoError::malformed(root.path(&rel), format!("no {k} line")))
    };
    let (total, free) = (get("MemTotal")?, get("MemFree")?);
    let reserve = reserve_bytes(total);
    let field = |k: &str| m.get(k).copied().unwrap_or(0);
    let reclaimable = reclaimable_bytes(
        field("Active(file)").saturating_add(field("Inactive(file)")),
        field("SReclaimable"),
        reserve,
    );
    let available = free.saturating_add(reclaimable).min(total);
    Ok(NodeMemory {
        node,
        total_bytes: total,
        free_bytes: free,
        reclaimable_bytes: reclaimable,
        available_bytes: available,
        reserve_bytes: reserve,
        spare_bytes: available.saturating_sub(reserve),
    })
}

/// What of a node's page cache (`file`) and reclaimable slab the kernel can
/// give back, as `si_mem_available` estimates it, with `reserve` in place
/// of the low watermark: half of each is always counted, more as it grows
/// beyond the reserve.
pub fn reclaimable_bytes(file: u64, slab: u64, reserve: u64) -> u64 {
    let part = |x: u64| x - (x / 2).min(reserve);
    part(file) + part(slab)
}

/// Refuses when `node` cannot spare `bytes` while keeping its reserve; the
/// error says how much it could spare (rounded down to MiB).
pub fn ensure_node_can_spare(root: &SysRoot, node: u32, bytes: u64) -> Result<NodeMemory> {
    let m = node_memory(root, node)?;
    if bytes > m.spare_bytes {
        return Err(PlaceError::NotEnoughMemory {
            node,
            requested_bytes: bytes,
            available_bytes: m.available_bytes,
            reserve_bytes: m.reserve_bytes,
            suggested_bytes: m.spare_bytes / (1 << 20) * (1 << 20),
        });
    }
    Ok(m)
}

/// How the bytes of an allocation spread over the nodes of a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Evenly (interleave): each node must spare `bytes / n` (rounded up).
    Even,
    /// All of it may land on any one node (bind / preferred fill the nearest
    /// node first): each node must spare all of it.
    AnyOne,
}

/// [`ensure_node_can_spare`] for each node of `nodes` under `spread`.
pub fn ensure_nodes_can_spare(
    root: &SysRoot,
    nodes: &NodeSet,
    bytes: u64,
    spread: Spread,
) -> Result<Vec<NodeMemory>> {
    let n = nodes.len().max(1) as u64;
    let each = match spread {
        Spread::Even => bytes.div_ceil(n),
        Spread::AnyOne => bytes,
    };
    nodes.iter().map(|id| ensure_node_can_spare(root, id, each)).collect()
}

/// Free hugetlb pages of `page_size` bytes on `node`
/// (`nodeN/hugepages/hugepages-<kB>kB/free_hugepages`); 0 when the pool
/// or the page size does not exist.
pub fn node_free_hugepages(root: &SysRoot, node: u32, page_size: u64) -> Result<u64> {
    let rel = format!(
        "sys/devices/system/node/node{node}/hugepages/hugepages-{}kB/free_hugepages",
        page_size / 1024
    );
    Ok(root.read_u64(&rel)?.unwrap_or(0))
}

/// Refuses when `nodes` together have fewer free hugetlb pages of
/// `page_size` than `bytes` needs: touching hugetlb memory that a node
/// cannot supply kills the process with SIGBUS, so check first.
pub fn ensure_hugepages(root: &SysRoot, nodes: &NodeSet, page_size: u64, bytes: u64) -> Result<()> {
    let need = bytes.div_ceil(page_size);
    let mut free = Vec::new();
    let mut sum = 0;
    for id in nodes.iter() {
        let f = node_free_hugepages(root, id, page_size)?;
        sum += f;
        free.push(format!("node {id}: {f}"));
    }
    if sum < need {
        let kb = page_size / 1024;
        return Err(PlaceError::NoHugePages {
            page_size_bytes: page_size,
            msg: format!(
                "{bytes} bytes need {need} free {kb} kB huge pages on nodes {nodes}, found {sum} ({}); \
                 reserve them, e.g. echo {need} > /sys/devices/system/node/nodeN/hugepages/hugepages-{kb}kB/nr_hugepages",
                free.join(", ")
            ),
        });
    }
    Ok(())
}

/// The kernel's automatic NUMA balancing (`/proc/sys/kernel/numa_balancing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumaBalancing {
    /// 0: off.
    Disabled,
    /// 1: pages migrate towards the CPUs that use them.
    Normal,
    /// 2: memory tiering mode (promote hot pages from slow tiers).
    MemoryTiering,
    /// 3: both.
    NormalAndTiering,
    /// Any other value.
    Other(u64),
}

impl NumaBalancing {
    /// Whether balancing may migrate pages during a run.
    pub fn enabled(self) -> bool {
        self != NumaBalancing::Disabled
    }
}

/// The NUMA balancing mode; `None` when the file is absent (kernel without
/// `CONFIG_NUMA_BALANCING`).
pub fn numa_balancing(root: &SysRoot) -> Result<Option<NumaBalancing>> {
    Ok(root.read_u64("proc/sys/kernel/numa_balancing")?.map(|v| match v {
        0 => NumaBalancing::Disabled,
        1 => NumaBalancing::Normal,
        2 => NumaBalancing::MemoryTiering,
        3 => NumaBalancing::NormalAndTiering,
        v => NumaBalancing::Other(v),
    }))
}

/// True when NUMA balancing is on, `None` when unknown or unreadable.
pub fn numa_balancing_enabled(root: &SysRoot) -> Option<bool> {
    numa_balancing(root).ok().flatten().map(NumaBalancing::enabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(
        tag: &str,
        meminfo: &str,
        balancing: Option<&str>,
    ) -> (std::path::PathBuf, SysRoot) {
        let dir = std::env::temp_dir().join(format!("np-place-mem-{tag}-{}", std::process::id()));
        let nd = dir.join("sys/devices/system/node/node0");
        std::fs::create_dir_all(&nd).unwrap();
        std::fs::create_dir_all(dir.join("proc/sys/kernel")).unwrap();
        std::fs::write(nd.join("meminfo"), meminfo).unwrap();
        if let Some(b) = balancing {
            std::fs::write(dir.join("proc/sys/kernel/numa_balancing"), b).unwrap();
        }
        let root = SysRoot::new(&dir).unwrap();
        (dir, root)
    }

    #[test]
    fn reserve_scales_with_node_size() {
        assert_eq!(reserve_bytes(256 << 20), 64 << 20);
        assert_eq!(reserve_bytes(8 * GIB), GIB);
        assert_eq!(reserve_bytes(100 * GIB), 5 * GIB);
    }

    #[test]
    fn refuses_with_a_smaller_size_suggested() {
        // 256 MiB node with 200 MiB free: reserve 64 MiB, spare 136 MiB.
        let (dir, root) = fake_root(
            "refuse",
            "Node 0 MemTotal:  262144 kB\nNode 0 MemFree:   204800 kB\nNode 0 MemUsed: 1 kB\n",
            Some("1\n"),
        );
        let m = ensure_node_can_spare(&root, 0, 100 << 20).unwrap();
        assert_eq!(m.spare_bytes, 136 << 20);
        let e = ensure_node_can_spare(&root, 0, 200 << 20).unwrap_err();
        match &e {
            PlaceError::NotEnoughMemory { suggested_bytes, .. } => {
                assert_eq!(*suggested_bytes, 136 << 20)
            }
            other => panic!("{other}"),
        }
        assert!(e.to_string().contains("node 0 cannot spare"));
        let e = ensure_node_can_spare(&root, 5, 1).unwrap_err().to_string();
        assert!(e.contains("node5/meminfo"), "{e}");
        assert!(
            ensure_nodes_can_spare(&root, &"0".parse().unwrap(), 200 << 20, Spread::Even).is_err()
        );
        assert_eq!(numa_balancing(&root).unwrap(), Some(NumaBalancing::Normal));
        let e = ensure_hugepages(&root, &"0".parse().unwrap(), 2 << 20, 4 << 20).unwrap_err();
        assert!(
            e.to_string().contains("need 2 free 2048 kB huge pages on nodes 0, found 0"),
            "{e}"
        );
        let hp = dir.join("sys/devices/system/node/node0/hugepages/hugepages-2048kB");
        std::fs::create_dir_all(&hp).unwrap();
        std::fs::write(hp.join("free_hugepages"), "2\n").unwrap();
        ensure_hugepages(&root, &"0".parse().unwrap(), 2 << 20, 4 << 20).unwrap();
        assert!(ensure_hugepages(&root, &"0".parse().unwrap(), 2 << 20, (4 << 20) + 1).is_err());
        assert_eq!(numa_balancing_enabled(&root), Some(true));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn page_cache_counts_as_available_like_mem_available() {
        // 8 GiB node, 0.5 GiB free, 6 GiB page cache, 1 GiB reclaimable
        // slab: reserve 1 GiB; file gives 6 - min(3, 1) = 5 GiB, slab
        // 1 - min(0.5, 1) = 0.5 GiB; available 6 GiB, spare 5 GiB.
        let (dir, root) = fake_root(
            "cache",
            "Node 0 MemTotal: 8388608 kB\nNode 0 MemFree: 524288 kB\n\
             Node 0 Active(file): 2097152 kB\nNode 0 Inactive(file): 4194304 kB\n\
             Node 0 SReclaimable: 1048576 kB\n",
            None,
        );
        let m = ensure_node_can_spare(&root, 0, 4 * GIB).unwrap();
        assert_eq!(m.reclaimable_bytes, 5 * GIB + GIB / 2);
        assert_eq!(m.available_bytes, 6 * GIB);
        assert_eq!(m.spare_bytes, 5 * GIB);
        // MemFree alone (0.5 GiB) is below the reserve: only the cache lets
        // this node hold 4 GiB, and never more than it can reclaim.
        assert!(ensure_node_can_spare(&root, 0, 5 * GIB + 1).is_err());
        assert_eq!(reclaimable_bytes(100, 0, 1000), 50);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_meminfo_names_the_file() {
        let (dir, root) = fake_root("bad", "Node 0 MemTotal: lots kB\n", None);
        let e = node_memory(&root, 0).unwrap_err().to_string();
        assert!(e.contains("node0/meminfo") && e.contains("MemTotal"), "{e}");
        assert_eq!(numa_balancing(&root).unwrap(), None);
        assert_eq!(numa_balancing_enabled(&root), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn live_node_zero_has_memory() {
        let m = node_memory(&SysRoot::live(), 0).unwrap();
        assert!(m.total_bytes > 0 && m.free_bytes <= m.total_bytes);
    }
}
