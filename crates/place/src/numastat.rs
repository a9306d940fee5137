//! Per-node allocation counters (`/sys/devices/system/node/nodeN/numastat`):
//! snapshots before and after a piece of work, and their difference.
//!

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use topo::{SysRoot, TopoError};

use crate::error::Result;

use results::exec::NodeCounters;

/// Parses a `numastat` file (`numa_hit 123` lines) with
/// [`topo::parse_numastat`]; unknown keys are ignored, absent ones are 0.
pub fn parse_numastat(text: &str) -> std::result::Result<NodeCounters, topo::ParseError> {
    let m = topo::parse_numastat(text)?;
    let get = |k: &str| m.get(k).copied().unwrap_or(0);
    Ok(NodeCounters {
        numa_hit: get("numa_hit"),
        numa_miss: get("numa_miss"),
        numa_foreign: get("numa_foreign"),
        interleave_hit: get("interleave_hit"),
        local_node: get("local_node"),
        other_node: get("other_node"),
    })
}

/// Counters of every node at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NumaStat {
    pub nodes: BTreeMap<u32, NodeCounters>,
}

impl NumaStat {
    /// Reads every `nodeN/numastat` under `root` (empty when the machine
    /// has no node directory).
    pub fn read(root: &SysRoot) -> Result<NumaStat> {
        const DIR: &str = "sys/devices/system/node";
        let mut nodes = BTreeMap::new();
        for id in root.list_ids(DIR, "node")? {
            let rel = format!("{DIR}/node{id}/numastat");
            if let Some(text) = root.read_optional(&rel)? {
                let c = parse_numastat(&text)
                    .map_err(|m| TopoError::malformed(root.path(&rel), m.to_string()))?;
                nodes.insert(id, c);
            }
        }
        Ok(NumaStat { nodes })
    }

    /// Per-node change from `before` to `self` (nodes in both).
    pub fn since(&self, before: &NumaStat) -> NumaStat {
        NumaStat {
            nodes: self
                .nodes
                .iter()
                .filter_map(|(id, now)| Some((*id, now.since(before.nodes.get(id)?))))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_subtracts() {
        let a = parse_numastat("numa_hit 10\nnuma_miss 1\nnuma_foreign 2\ninterleave_hit 3\nlocal_node 9\nother_node 1\n")
            .unwrap();
        assert_eq!(a.numa_hit, 10);
        assert_eq!(a.other_node, 1);
        let b = parse_numastat("numa_hit 25\nnuma_miss 1\nnuma_foreign 2\ninterleave_hit 7\nlocal_node 20\nother_node 5\nnew_counter 4\n")
            .unwrap();
        let d = b.since(&a);
        assert_eq!((d.numa_hit, d.interleave_hit, d.local_node, d.other_node), (15, 4, 11, 4));
        assert!(parse_numastat("numa_hit x\n").unwrap_err().to_string().contains("line 1"));
        assert!(parse_numastat("numa_hit\n").is_err());
    }

    #[test]
    fn live_counters_grow_when_memory_is_touched() {
        let root = SysRoot::live();
        let before = NumaStat::read(&root).unwrap();
        assert!(before.nodes.contains_key(&0));
        let mut b = crate::Buffer::alloc(8 << 20, results::pages::PageKind::NoThp).unwrap();
        b.touch();
        let d = NumaStat::read(&root).unwrap().since(&before);
        // 2048 pages were faulted in on node 0 (other activity only adds).
        assert!(d.nodes[&0].numa_hit >= 2048, "{d:?}");
    }
}
