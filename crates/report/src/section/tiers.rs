//! Remote latency per distance tier: the latency matrix's cells grouped by
//! the SLIT distance of their node pair (`topo::tiers`), so that a 4- or
//! 8-socket machine, or SNC inside several sockets, reports "remote" as
//! one figure per tier rather than one mean.

use topo::tiers::tiers_of;
use topo::{NodeSet, Topology};

use crate::doc::Table;
use crate::fmt::num;

/// The stored topology's node ids, distance rows and nodes with CPUs.
fn matrix_of(topo: &Topology) -> (Vec<u32>, Vec<Vec<u32>>, NodeSet) {
    let ids = topo.nodes.iter().map(|n| n.id).collect();
    let rows = topo.nodes.iter().map(|n| n.distances.clone()).collect();
    let with_cpus = topo.nodes.iter().filter(|n| !n.cpus.is_empty()).map(|n| n.id).collect();
    (ids, rows, with_cpus)
}

/// One row per distance tier that holds measured remote cells (CPU node,
/// memory node, median ns): its distance, its node groups, the pairs
/// measured, their mean, min and max, and the mean against local. `None`
/// unless the matrix covers at least two remote tiers (with one, "remote"
/// is one figure already).
pub(crate) fn latency_by_tier(topo: &Topology, cells: &[(u32, u32, f64)]) -> Option<Table> {
    let (ids, rows, with_cpus) = matrix_of(topo);
    let tiers = tiers_of(&ids, &rows, &with_cpus);
    let distance = |c: u32, m: u32| -> Option<u32> {
        let i = ids.iter().position(|&x| x == c)?;
        let j = ids.iter().position(|&x| x == m)?;
        Some(rows[i][j])
    };
    let local: Vec<f64> = cells.iter().filter(|(c, m, _)| c == m).map(|x| x.2).collect();
    let local_mean = (!local.is_empty()).then(|| local.iter().sum::<f64>() / local.len() as f64);
    let mut t = Table::with_header(&[
        "Distance",
        "Node groups within it",
        "Pairs measured",
        "Mean ns",
        "Min ns",
        "Max ns",
        "Mean / local",
    ]);
    let mut remote_tiers = 0;
    for tier in &tiers {
        let v: Vec<f64> = cells
            .iter()
            .filter(|(c, m, _)| c != m && distance(*c, *m) == Some(tier.distance))
            .map(|x| x.2)
            .collect();
        if v.is_empty() {
            continue;
        }
        remote_tiers += 1;
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let min = v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let groups: Vec<String> = tier.groups.iter().map(|g| g.to_list()).collect();
        t.push(vec![
            tier.distance.to_string(),
            groups.join(" | "),
            v.len().to_string(),
            num(mean, "ns"),
            num(min, "ns"),
            num(max, "ns"),
            local_mean.map_or("-".into(), |l| format!("{:.2}x", mean / l)),
        ]);
    }
    (remote_tiers >= 2).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four nodes: 0-1 and 2-3 at 12, the pairs across at 32.
    fn topo() -> Topology {
        let row = |i: usize| -> Vec<u32> {
            (0..4)
                .map(|j| {
                    if i == j {
                        10
                    } else if i / 2 == j / 2 {
                        12
                    } else {
                        32
                    }
                })
                .collect()
        };
        let rows: Vec<Vec<u32>> = (0..4).map(row).collect();
        let rows: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        topo::synthetic::Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0-1")
            .package(1, "2-3")
            .node(0, "0", 1 << 30)
            .node(1, "1", 1 << 30)
            .node(2, "2", 1 << 30)
            .node(3, "3", 1 << 30)
            .distances(&rows)
            .build()
    }

    #[test]
    fn remote_latency_is_one_row_per_tier() {
        let cells = vec![
            (0, 0, 100.0),
            (1, 1, 100.0),
            (0, 1, 120.0),
            (1, 0, 130.0),
            (0, 2, 200.0),
            (0, 3, 220.0),
        ];
        let t = latency_by_tier(&topo(), &cells).expect("two remote tiers");
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0][0], "12");
        assert_eq!(t.rows[0][1], "0-1 | 2-3");
        assert_eq!(t.rows[0][2], "2");
        assert_eq!(t.rows[0][3], num(125.0, "ns"));
        assert_eq!(t.rows[0][6], "1.25x");
        assert_eq!(t.rows[1][0], "32");
        assert_eq!(t.rows[1][3], num(210.0, "ns"));
        assert_eq!(t.rows[1][6], "2.10x");
    }

    #[test]
    fn one_remote_tier_or_no_matrix_gives_no_table() {
        let cells = vec![(0, 0, 100.0), (0, 1, 120.0)];
        assert!(latency_by_tier(&topo(), &cells).is_none());
        let one = topo::synthetic::Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0")
            .node(0, "0", 1 << 30)
            .build();
        assert!(latency_by_tier(&one, &[(0, 0, 1.0), (0, 1, 2.0)]).is_none());
    }
}
