//! Per-node allocation counters across a run, as exec reports them: a flat
//! list of `{node, numa_hit, ...}`. Reading and subtracting is the placement
//! layer's ([`place::NumaStat`]); the counters are system-wide, so other
//! processes' allocations during the run are counted too.

use place::NumaStat;
use results::exec::NodeDelta;
use topo::SysRoot;

/// Reads every node's counters under `root`; empty on a kernel without
/// NUMA or when the files cannot be read (the run goes on without them).
pub fn snapshot(root: &SysRoot) -> NumaStat {
    NumaStat::read(root).unwrap_or_default()
}

/// `after - before` per node present in both (counters never go down; a
/// reset gives 0, not a wrap).
pub fn delta(before: &NumaStat, after: &NumaStat) -> Vec<NodeDelta> {
    after.since(before).nodes.into_iter().map(|(node, stat)| NodeDelta { node, stat }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(nodes: &[(u32, &str)]) -> NumaStat {
        NumaStat {
            nodes: nodes.iter().map(|&(n, t)| (n, place::parse_numastat(t).unwrap())).collect(),
        }
    }

    #[test]
    fn deltas_per_node_flatten_into_one_record() {
        let b = "numa_hit 100\nnuma_miss 0\nnuma_foreign 0\ninterleave_hit 5\nlocal_node 90\nother_node 10\n";
        let a = "numa_hit 1100\nnuma_miss 3\nnuma_foreign 0\ninterleave_hit 5\nlocal_node 590\nother_node 510\nnew_key 1\n";
        let d = delta(&snap(&[(0, b)]), &snap(&[(0, a), (1, a)]));
        assert_eq!(d.len(), 1, "node 1 has no before");
        assert_eq!(
            (d[0].stat.numa_hit, d[0].stat.local_node, d[0].stat.other_node),
            (1000, 500, 500)
        );
        assert_eq!(d[0].stat.numa_miss, 3);
        // a counter that went backwards (reset) is 0, not a wrap
        let d = delta(&snap(&[(0, a)]), &snap(&[(0, b)]));
        assert_eq!(d[0].stat.numa_hit, 0);
        let json = serde_json::to_value(d[0]).unwrap();
        assert_eq!(json["node"], 0);
        assert_eq!(json["local_node"], 0);
    }
}
