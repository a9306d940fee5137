//! Distance tiers: the SLIT's distinct distance levels, each with the
//! groups of nodes it joins (single-linkage clustering, as hwloc groups
//! NUMA nodes by distance), so that "remote" on a 4- or 8-socket machine,
//! or with SNC inside several sockets, is several figures and not one.

use std::collections::BTreeSet;

use crate::idset::NodeSet;
use crate::model::{DistanceTier, Node, NodePair};

/// The tiers of a machine's nodes (empty unless every node has a full
/// distance row).
pub fn distance_tiers(nodes: &[Node]) -> Vec<DistanceTier> {
    let ids: Vec<u32> = nodes.iter().map(|n| n.id).collect();
    let rows: Vec<Vec<u32>> = nodes.iter().map(|n| n.distances.clone()).collect();
    let with_cpus: NodeSet = nodes.iter().filter(|n| !n.cpus.is_empty()).map(|n| n.id).collect();
    tiers_of(&ids, &rows, &with_cpus)
}

/// The tiers of a matrix given as node ids and rows in the same order
/// (`rows[i][j]` = distance from `ids[i]` to `ids[j]`); `with_cpus` picks
/// each tier's example pair. Empty when the matrix is not square.
pub fn tiers_of(ids: &[u32], rows: &[Vec<u32>], with_cpus: &NodeSet) -> Vec<DistanceTier> {
    let k = ids.len();
    if k == 0 || rows.len() != k || rows.iter().any(|r| r.len() != k) {
        return Vec::new();
    }
    let levels: BTreeSet<u32> = rows.iter().flatten().copied().collect();
    let mut out = Vec::with_capacity(levels.len());
    for d in levels {
        let mut pairs = 0u32;
        let mut example: Option<NodePair> = None;
        let mut cpu_example: Option<NodePair> = None;
        for (i, row) in rows.iter().enumerate() {
            for (j, &dij) in row.iter().enumerate() {
                if dij != d {
                    continue;
                }
                pairs += 1;
                let p = NodePair { from: ids[i], to: ids[j] };
                example.get_or_insert(p);
                if with_cpus.contains(ids[i]) {
                    cpu_example.get_or_insert(p);
                }
            }
        }
        // Union-find over pairs within d (both directions).
        let mut parent: Vec<usize> = (0..k).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for (i, row) in rows.iter().enumerate() {
            for (j, &dij) in row.iter().enumerate().skip(i + 1) {
                if dij.max(rows[j][i]) <= d {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
        let mut groups: Vec<NodeSet> = Vec::new();
        let mut root_of: Vec<(usize, usize)> = Vec::new();
        for (i, &id) in ids.iter().enumerate() {
            let r = find(&mut parent, i);
            match root_of.iter().find(|(x, _)| *x == r) {
                Some(&(_, g)) => {
                    groups[g].insert(id);
                }
                None => {
                    root_of.push((r, groups.len()));
                    groups.push([id].into_iter().collect());
                }
            }
        }
        out.push(DistanceTier {
            distance: d,
            pairs,
            example: cpu_example.or(example).expect("a level comes from some pair"),
            groups,
        });
    }
    out
}

/// The tier a distance belongs to, by its position in `tiers`.
pub fn tier_index(tiers: &[DistanceTier], distance: u32) -> Option<usize> {
    tiers.iter().position(|t| t.distance == distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(t: &DistanceTier) -> Vec<String> {
        t.groups.iter().map(|g| g.to_list()).collect()
    }

    #[test]
    fn nps4_like_two_sockets_give_four_tiers() {
        // 2 sockets x 4 nodes: 11 to the neighbouring quadrant, 12 across
        // the socket, 32 to the other socket.
        let q = |i: usize, j: usize| -> u32 {
            if i == j {
                10
            } else if i / 4 != j / 4 {
                32
            } else if i / 2 == j / 2 {
                11
            } else {
                12
            }
        };
        let rows: Vec<Vec<u32>> = (0..8).map(|i| (0..8).map(|j| q(i, j)).collect()).collect();
        let ids: Vec<u32> = (0..8).collect();
        let all: NodeSet = ids.iter().copied().collect();
        let t = tiers_of(&ids, &rows, &all);
        let d: Vec<u32> = t.iter().map(|t| t.distance).collect();
        assert_eq!(d, vec![10, 11, 12, 32]);
        assert_eq!(t[0].pairs, 8);
        assert_eq!(lists(&t[0]).len(), 8);
        assert_eq!(lists(&t[1]), vec!["0-1", "2-3", "4-5", "6-7"]);
        assert_eq!(t[1].pairs, 8);
        assert_eq!(lists(&t[2]), vec!["0-3", "4-7"]);
        assert_eq!(t[2].pairs, 16);
        assert_eq!(lists(&t[3]), vec!["0-7"]);
        assert_eq!(t[3].pairs, 32);
        assert_eq!(t[3].example, NodePair { from: 0, to: 4 });
    }

    #[test]
    fn four_sockets_with_snc2_give_socket_then_ring_tiers() {
        use crate::synthetic::Machine;
        // 4 sockets in a ring, SNC2: 12 inside a socket, 21 to the two
        // neighbouring sockets, 31 to the opposite one.
        let d = |i: u32, j: u32| -> u32 {
            let (a, b) = (i / 2, j / 2);
            match (i == j, a == b, (a + 4 - b) % 4) {
                (true, _, _) => 10,
                (_, true, _) => 12,
                (_, _, 2) => 31,
                _ => 21,
            }
        };
        let rows: Vec<Vec<u32>> = (0..8).map(|i| (0..8).map(|j| d(i, j)).collect()).collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        let mut m = Machine::new(crate::Vendor::Intel, "Intel(R) Xeon(R) Platinum 8380H");
        for p in 0..4 {
            m = m.package(p, &format!("{}-{}", 4 * p, 4 * p + 3));
        }
        for n in 0..8 {
            m = m.node(n, &format!("{}-{}", 2 * n, 2 * n + 1), 1 << 30);
        }
        let t = m.distances(&refs).build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("SNC2"));
        let got: Vec<(u32, u32, Vec<String>)> =
            t.distance_tiers.iter().map(|x| (x.distance, x.pairs, lists(x))).collect();
        assert_eq!(got[0].0, 10);
        assert_eq!(got[1], (12, 8, vec!["0-1".into(), "2-3".into(), "4-5".into(), "6-7".into()]));
        assert_eq!(got[2], (21, 32, vec!["0-7".to_string()]));
        assert_eq!(got[3], (31, 16, vec!["0-7".to_string()]));
        assert_eq!(t.distance_tiers[3].example, NodePair { from: 0, to: 4 });
    }

    #[test]
    fn example_pairs_start_at_a_node_with_cpus() {
        // Node 0 is memory-only; 1 and 2 have CPUs.
        let rows = vec![vec![10, 20, 30], vec![20, 10, 30], vec![30, 30, 10]];
        let with: NodeSet = [1, 2].into_iter().collect();
        let t = tiers_of(&[0, 1, 2], &rows, &with);
        assert_eq!(t[1].distance, 20);
        assert_eq!(t[1].example, NodePair { from: 1, to: 0 });
        assert_eq!(t[2].example, NodePair { from: 1, to: 2 });
        assert_eq!(lists(&t[1]), vec!["0-1", "2"]);
    }

    #[test]
    fn a_ragged_matrix_has_no_tiers() {
        let none = NodeSet::new();
        assert!(tiers_of(&[0, 1], &[vec![10, 20], vec![10]], &none).is_empty());
        assert!(tiers_of(&[], &[], &none).is_empty());
    }

    #[test]
    fn asymmetric_pairs_join_at_their_larger_distance() {
        let rows = vec![vec![10, 20], vec![30, 10]];
        let none = NodeSet::new();
        let t = tiers_of(&[0, 1], &rows, &none);
        assert_eq!(t.iter().map(|t| t.distance).collect::<Vec<_>>(), vec![10, 20, 30]);
        assert_eq!(lists(&t[1]), vec!["0", "1"]);
        assert_eq!(lists(&t[2]), vec!["0-1"]);
    }
}
