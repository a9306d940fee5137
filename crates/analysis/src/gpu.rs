//! `numaprobe gpu`'s figures: the node x GPU matrix from its copy points, and the data-loader
//! recommendation it supports: for each GPU, the node whose pinned memory
//! feeds it fastest and what the other nodes cost.
//!
//! A node is called faster only when every one of its timed copies beat
//! every one of the other node's (the ranges do not overlap): anything
//! less is within the run-to-run spread and the answer is "no node
//! measurably faster".

use serde::{Deserialize, Serialize};

use results::gpu::{Direction, GpuCopy};

/// One cell: a node x GPU pair in one direction at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub node: u32,
    pub gpu: u32,
    pub direction: Direction,
    pub size_bytes: u64,
    /// GB/s (10^9 bytes/s).
    pub median_gbs: f64,
    pub min_gbs: f64,
    pub max_gbs: f64,
    pub copies: usize,
}

impl Cell {
    pub fn of(p: &GpuCopy) -> Option<Cell> {
        let mut v: Vec<f64> = p.gbs.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let median = results::stats::median(&v)?;
        Some(Cell {
            node: p.mem_node,
            gpu: p.gpu,
            direction: p.direction,
            size_bytes: p.size_bytes,
            median_gbs: median,
            min_gbs: v[0],
            max_gbs: v[v.len() - 1],
            copies: v.len(),
        })
    }
}

/// The cells of the largest size measured in each direction: the figure
/// the matrix shows (small copies measure the per-copy overhead, not the
/// link).
pub fn headline(points: &[GpuCopy]) -> Vec<Cell> {
    let mut out = Vec::new();
    for dir in Direction::ALL {
        let Some(size) = points.iter().filter(|p| p.direction == dir).map(|p| p.size_bytes).max()
        else {
            continue;
        };
        out.extend(
            points
                .iter()
                .filter(|p| p.direction == dir && p.size_bytes == size)
                .filter_map(Cell::of),
        );
    }
    out.sort_by_key(|c| (c.direction, c.node, c.gpu));
    out
}

/// Another node's figure against the best node's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Other {
    pub node: u32,
    pub median_gbs: f64,
    /// How much slower than the best node, in % of the best's median.
    pub penalty_pct: f64,
    /// True when every copy from the best node beat every copy from this one.
    pub separated: bool,
}

/// Where a data loader feeding one GPU should keep its pinned memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Feed {
    pub gpu: u32,
    pub direction: Direction,
    pub size_bytes: u64,
    /// The fastest node, when it is faster than every other beyond the
    /// spread of the copies (or is the only node measured).
    pub best_node: Option<u32>,
    /// The node with the highest median, separated or not.
    pub top_node: u32,
    pub top_gbs: f64,
    pub others: Vec<Other>,
}

impl Feed {
    /// The line that places a data loader on the best node (`None` when no
    /// node is measurably best). `memory_only` says whether the node has no
    /// CPUs (then only the memory is bound).
    pub fn command(&self, memory_only: bool) -> Option<String> {
        let n = self.best_node?;
        Some(if memory_only {
            format!("numactl --membind={n} <data loader>")
        } else {
            format!("numactl --cpunodebind={n} --membind={n} <data loader>")
        })
    }
}

/// For each GPU: the host-to-device feed (what a data loader does) at the
/// largest size measured.
pub fn feeds(points: &[GpuCopy]) -> Vec<Feed> {
    let cells: Vec<Cell> =
        headline(points).into_iter().filter(|c| c.direction == Direction::H2d).collect();
    let mut gpus: Vec<u32> = cells.iter().map(|c| c.gpu).collect();
    gpus.dedup();
    let mut out = Vec::new();
    for gpu in gpus {
        let row: Vec<&Cell> = cells.iter().filter(|c| c.gpu == gpu).collect();
        let top = row
            .iter()
            .max_by(|a, b| a.median_gbs.total_cmp(&b.median_gbs))
            .expect("a GPU has a cell");
        let others: Vec<Other> = row
            .iter()
            .filter(|c| c.node != top.node)
            .map(|c| Other {
                node: c.node,
                median_gbs: c.median_gbs,
                penalty_pct: (1.0 - c.median_gbs / top.median_gbs) * 100.0,
                separated: top.min_gbs > c.max_gbs,
            })
            .collect();
        let best_node = others.iter().all(|o| o.separated).then_some(top.node);
        out.push(Feed {
            gpu,
            direction: Direction::H2d,
            size_bytes: top.size_bytes,
            best_node,
            top_node: top.node,
            top_gbs: top.median_gbs,
            others,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(node: u32, gpu: u32, size: u64, gbs: &[f64]) -> GpuCopy {
        GpuCopy {
            gpu,
            device: "d".into(),
            pci_address: "0000:01:00.0".into(),
            mem_node: node,
            direction: Direction::H2d,
            size_bytes: size,
            gbs: gbs.to_vec(),
            median_gbs: f64::NAN,
            timer: "device events".into(),
            on_node: 1.0,
        }
    }

    #[test]
    fn cell_takes_the_median_and_range() {
        let c = Cell::of(&p(0, 0, 1, &[3.0, 1.0, 2.0, 10.0])).unwrap();
        assert_eq!((c.median_gbs, c.min_gbs, c.max_gbs, c.copies), (2.5, 1.0, 10.0, 4));
        assert!(Cell::of(&p(0, 0, 1, &[f64::NAN, 0.0])).is_none());
    }

    #[test]
    fn headline_keeps_only_the_largest_size() {
        let pts = [p(0, 0, 1 << 16, &[1.0]), p(0, 0, 1 << 30, &[20.0]), p(1, 0, 1 << 30, &[10.0])];
        let h = headline(&pts);
        assert_eq!(h.len(), 2);
        assert!(h.iter().all(|c| c.size_bytes == 1 << 30));
    }

    #[test]
    fn a_separated_node_is_named_best_with_its_penalty() {
        let pts = [p(0, 0, 1 << 30, &[24.0, 25.0, 24.5]), p(1, 0, 1 << 30, &[12.0, 12.5, 12.2])];
        let f = &feeds(&pts)[0];
        assert_eq!(f.best_node, Some(0));
        assert!((f.others[0].penalty_pct - (1.0 - 12.2 / 24.5) * 100.0).abs() < 1e-9);
        assert_eq!(f.command(false).unwrap(), "numactl --cpunodebind=0 --membind=0 <data loader>");
    }

    #[test]
    fn overlapping_ranges_name_no_best_node() {
        // Node 1 has the higher median, but one of node 0's copies beat one
        // of node 1's: within the spread.
        let pts = [p(0, 0, 1 << 30, &[20.0, 24.0, 21.0]), p(1, 0, 1 << 30, &[22.0, 23.0, 22.5])];
        let f = &feeds(&pts)[0];
        assert_eq!(f.top_node, 1);
        assert_eq!(f.best_node, None);
        assert!(f.command(false).is_none());
    }
}
