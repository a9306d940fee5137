//! Per-node allocation counters (`/sys/devices/system/node/nodeN/numastat`)
//! and their change across a run. The counters are system-wide: other
//! processes' allocations during the run are counted too.

use std::collections::BTreeMap;

use serde::Serialize;
use topo::SysRoot;

/// Counters of one node, in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NodeStat {
    pub numa_hit: u64,
    pub numa_miss: u64,
    pub numa_foreign: u64,
    pub interleave_hit: u64,
    /// Allocations on this node by a process running on this node.
    pub local_node: u64,
    /// Allocations on this node by a process running on another node.
    pub other_node: u64,
}

/// Counters of every node at one moment.
pub type Snapshot = BTreeMap<u32, NodeStat>;

/// Parses one `numastat` file; unknown keys are ignored, missing ones 0.
pub fn parse(text: &str) -> NodeStat {
    let mut s = NodeStat::default();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next()) else { continue };
        let Ok(v) = v.parse::<u64>() else { continue };
        match k {
            "numa_hit" => s.numa_hit = v,
            "numa_miss" => s.numa_miss = v,
            "numa_foreign" => s.numa_foreign = v,
            "interleave_hit" => s.interleave_hit = v,
            "local_node" => s.local_node = v,
            "other_node" => s.other_node = v,
            _ => {}
        }
    }
    s
}

/// Reads every node's counters under `root`; nodes without the file are
/// left out (an empty snapshot on a kernel without NUMA).
pub fn snapshot(root: &SysRoot) -> Snapshot {
    const NODES: &str = "sys/devices/system/node";
    let mut out = Snapshot::new();
    for id in root.list_ids(NODES, "node").unwrap_or_default() {
        if let Ok(Some(text)) = root.read_optional(&format!("{NODES}/node{id}/numastat")) {
            out.insert(id, parse(&text));
        }
    }
    out
}

/// One node's change across a run, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NodeDelta {
    pub node: u32,
    #[serde(flatten)]
    pub stat: NodeStat,
}

/// `after - before` per node present in both (counters never go down; a
/// wrap or reset gives 0).
pub fn delta(before: &Snapshot, after: &Snapshot) -> Vec<NodeDelta> {
    after
        .iter()
        .filter_map(|(&node, a)| {
            let b = before.get(&node)?;
            let d = |x: u64, y: u64| x.saturating_sub(y);
            Some(NodeDelta {
                node,
                stat: NodeStat {
                    numa_hit: d(a.numa_hit, b.numa_hit),
                    numa_miss: d(a.numa_miss, b.numa_miss),
                    numa_foreign: d(a.numa_foreign, b.numa_foreign),
                    interleave_hit: d(a.interleave_hit, b.interleave_hit),
                    local_node: d(a.local_node, b.local_node),
                    other_node: d(a.other_node, b.other_node),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_subtracts() {
        let before = parse(
            "numa_hit 100\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 5\nlocal_node 90\nother_node 10\n",
        );
        let after = parse(
            "numa_hit 1100\nnuma_miss 3\nnuma_foreign 0\ninterleave_hit 5\nlocal_node 590\nother_node 510\nnew_key 1\n",
        );
        assert_eq!(before.other_node, 10);
        let d = delta(&[(0, before)].into(), &[(0, after), (1, after)].into());
        assert_eq!(d.len(), 1, "node 1 has no before");
        assert_eq!(d[0].stat.numa_hit, 1000);
        assert_eq!(d[0].stat.local_node, 500);
        assert_eq!(d[0].stat.other_node, 500);
        assert_eq!(d[0].stat.numa_miss, 3);
        // a counter that went backwards (reset) is 0, not a wrap
        let d = delta(&[(0, after)].into(), &[(0, before)].into());
        assert_eq!(d[0].stat.numa_hit, 0);
        let json = serde_json::to_value(d[0]).unwrap();
        assert_eq!(json["node"], 0);
        assert_eq!(json["local_node"], 0);
    }
}
