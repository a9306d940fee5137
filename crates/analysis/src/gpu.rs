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
use results::lat::LatResult;

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
        let Some(size) = alone(points).filter(|p| p.direction == dir).map(|p| p.size_bytes).max()
        else {
            continue;
        };
        out.extend(
            alone(points)
                .filter(|p| p.direction == dir && p.size_bytes == size)
                .filter_map(Cell::of),
        );
    }
    out.sort_by_key(|c| (c.direction, c.node, c.gpu));
    out
}

/// The points of GPUs copying alone (the matrix), not those of the
/// all-GPUs-at-once step.
pub fn alone(points: &[GpuCopy]) -> impl Iterator<Item = &GpuCopy> {
    points.iter().filter(|p| p.together.is_empty())
}

/// One GPU in the all-GPUs-at-once step, against itself alone at the same
/// size from the same node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub gpu: u32,
    /// While every GPU of the step copied (GB/s = 10^9 bytes/s).
    pub together: Cell,
    /// Alone, at the same size (absent if that size was not measured alone).
    pub alone: Option<Cell>,
    /// How much slower than alone, in % of alone's median.
    pub drop_pct: Option<f64>,
    /// True when every copy alone beat every copy together.
    pub separated: bool,
}

/// What sharing did to the GPUs fed from one node in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sharing {
    /// Every GPU was slower together than alone beyond the spread of the
    /// copies, by more than 10%: something on the way is shared.
    Bottleneck,
    /// No GPU's median lost more than 10%.
    NoBottleneck,
    /// Anything between (some fell, or a loss within the spread), or a GPU
    /// was not measured alone at this size: no call.
    Undecided,
}

/// The all-GPUs-at-once step for one node and direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Together {
    pub node: u32,
    pub direction: Direction,
    pub size_bytes: u64,
    pub gpus: Vec<u32>,
    pub members: Vec<Member>,
    /// The GPUs' medians together, added up: what the node delivered to
    /// all of them at once (the copies start within microseconds of each
    /// other).
    pub aggregate_gbs: f64,
    /// The same GPUs' medians alone, added up (absent if one is missing).
    pub alone_sum_gbs: Option<f64>,
    pub sharing: Sharing,
}

/// The loss, in %, below which a GPU together counts as unchanged.
pub const SHARING_FLOOR_PCT: f64 = 10.0;

/// The all-GPUs-at-once steps found in `points`, per node and direction.
pub fn together(points: &[GpuCopy]) -> Vec<Together> {
    let mut keys: Vec<(u32, Direction, u64)> = points
        .iter()
        .filter(|p| !p.together.is_empty())
        .map(|p| (p.mem_node, p.direction, p.size_bytes))
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (node, direction, size) in keys {
        let step: Vec<&GpuCopy> = points
            .iter()
            .filter(|p| {
                !p.together.is_empty()
                    && p.mem_node == node
                    && p.direction == direction
                    && p.size_bytes == size
            })
            .collect();
        let gpus = step[0].together.clone();
        let mut members = Vec::new();
        for p in &step {
            let Some(t) = Cell::of(p) else { continue };
            let a = alone(points)
                .find(|q| {
                    q.gpu == p.gpu
                        && q.mem_node == node
                        && q.direction == direction
                        && q.size_bytes == size
                })
                .and_then(Cell::of);
            let drop_pct = a.as_ref().map(|a| (1.0 - t.median_gbs / a.median_gbs) * 100.0);
            let separated = a.as_ref().is_some_and(|a| a.min_gbs > t.max_gbs);
            members.push(Member { gpu: p.gpu, together: t, alone: a, drop_pct, separated });
        }
        members.sort_by_key(|m| m.gpu);
        let aggregate_gbs = members.iter().map(|m| m.together.median_gbs).sum();
        let alone_sum_gbs =
            members.iter().map(|m| m.alone.as_ref().map(|a| a.median_gbs)).sum::<Option<f64>>();
        let fell = |m: &Member| m.separated && m.drop_pct.is_some_and(|d| d > SHARING_FLOOR_PCT);
        // Unchanged: the median lost no more than the floor (a wider
        // spread alone is no evidence of sharing).
        let kept = |m: &Member| m.drop_pct.is_some_and(|d| d <= SHARING_FLOOR_PCT);
        let sharing = if members.is_empty() || members.iter().any(|m| m.alone.is_none()) {
            Sharing::Undecided
        } else if members.iter().all(fell) {
            Sharing::Bottleneck
        } else if members.iter().all(kept) {
            Sharing::NoBottleneck
        } else {
            Sharing::Undecided
        };
        out.push(Together {
            node,
            direction,
            size_bytes: size,
            gpus,
            members,
            aggregate_gbs,
            alone_sum_gbs,
            sharing,
        });
    }
    out
}

/// A CPU's memory latency idle and while GPUs copy from the same node
/// (DMA contention).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contention {
    pub node: u32,
    /// The chasing CPU (the GPUs' feeding thread runs on the node's others).
    pub cpu: u32,
    pub direction: Direction,
    pub gpus: Vec<u32>,
    /// The chase's working set.
    pub chase_bytes: u64,
    /// Idle: the mean of the two idle chases' medians (one just before,
    /// one just after the copies), and the lowest and highest sample of
    /// either; ns per load.
    pub idle_ns: [f64; 3],
    /// During the copies: median, min and max of the chase's samples.
    pub during_ns: [f64; 3],
    /// The idle chases' medians, before and after (ns): how far the
    /// machine drifted on its own meanwhile.
    pub idle_before_after_ns: [f64; 2],
    /// Median during against idle, in % (positive: slower).
    pub change_pct: f64,
    /// True when every sample during the copies was slower than every
    /// sample of both idle chases (or every one faster): the change is
    /// beyond both the spread and the drift around it.
    pub beyond_spread: bool,
    /// Each GPU's median GB/s (10^9 bytes/s) while the CPU chased.
    pub gpu_gbs: Vec<(u32, f64)>,
}

impl Contention {
    /// `before`, `during` and `after`: one chase each, same CPU, node and
    /// method, the copies running only during the second; `copies`: what
    /// each GPU moved meanwhile. Idle on both sides of the copies, so that
    /// a machine drifting on its own (a shared host) is not taken for the
    /// copies' effect.
    pub fn of(
        direction: Direction,
        before: &LatResult,
        during: &LatResult,
        after: &LatResult,
        copies: &[GpuCopy],
    ) -> Contention {
        let idle_min = before.min_ns.min(after.min_ns);
        let idle_max = before.max_ns.max(after.max_ns);
        let idle_mid = (before.median_ns + after.median_ns) / 2.0;
        let beyond_spread = during.min_ns > idle_max || during.max_ns < idle_min;
        let idle = before;
        let mut gpus: Vec<u32> = copies.iter().map(|c| c.gpu).collect();
        gpus.sort_unstable();
        Contention {
            node: idle.mem_node.unwrap_or(0),
            cpu: idle.cpu,
            direction,
            gpus,
            chase_bytes: idle.size_bytes,
            idle_ns: [idle_mid, idle_min, idle_max],
            during_ns: [during.median_ns, during.min_ns, during.max_ns],
            idle_before_after_ns: [before.median_ns, after.median_ns],
            change_pct: (during.median_ns / idle_mid - 1.0) * 100.0,
            beyond_spread,
            gpu_gbs: copies
                .iter()
                .filter_map(|c| Cell::of(c).map(|cell| (c.gpu, cell.median_gbs)))
                .collect(),
        }
    }

    /// What the copies did to the latency (console's `gpu::change` words
    /// it).
    pub fn change(&self) -> Change {
        match (self.beyond_spread, self.change_pct >= 0.0) {
            (true, true) => Change::Slower { pct: self.change_pct },
            (true, false) => Change::Faster { pct: -self.change_pct },
            (false, _) => Change::Within,
        }
    }
}

/// A CPU's latency while the GPUs copy against idle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Slower by `pct`% of idle, beyond the spread of the idle chases
    /// before and after.
    Slower { pct: f64 },
    /// Faster by `pct`% (positive), beyond that spread: the copies cannot
    /// speed a chase up, so something else changed (the machine's load).
    Faster { pct: f64 },
    /// No change beyond that spread.
    Within,
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
    /// How to place a data loader on the best node (`None` when no node is
    /// measurably best). `memory_only` says whether the node has no CPUs
    /// (then only the memory is bound). `report::gpu::advice` words it as
    /// the `numactl` line.
    pub fn advice(&self, memory_only: bool) -> Option<Advice> {
        let node = self.best_node?;
        Some(if memory_only { Advice::MemOnly { node } } else { Advice::Both { node } })
    }
}

/// Where a data loader should run and keep its memory: bound to `node`'s
/// memory only (a node without CPUs), or to its CPUs and its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Advice {
    MemOnly { node: u32 },
    Both { node: u32 },
}

/// For each GPU: the host-to-device feed (what a data loader does) at the
/// largest size measured.
pub fn feeds(points: &[GpuCopy]) -> Vec<Feed> {
    let cells: Vec<Cell> =
        headline(points).into_iter().filter(|c| c.direction == Direction::H2d).collect();
    // The cells are sorted by node first: sort the GPUs before dropping
    // repeats, so each GPU gets one feed however many nodes were measured.
    let mut gpus: Vec<u32> = cells.iter().map(|c| c.gpu).collect();
    gpus.sort_unstable();
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

    fn t(node: u32, gpu: u32, size: u64, gbs: &[f64], gpus: &[u32]) -> GpuCopy {
        GpuCopy { together: gpus.to_vec(), ..p(node, gpu, size, gbs) }
    }

    #[test]
    fn together_points_stay_out_of_the_matrix_and_feeds() {
        let pts = vec![p(0, 0, 1 << 30, &[20.0, 21.0]), t(0, 0, 1 << 30, &[5.0, 6.0], &[0, 1])];
        let h = headline(&pts);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].median_gbs, 20.5);
        assert_eq!(feeds(&pts)[0].top_gbs, 20.5);
    }

    #[test]
    fn every_gpu_slower_together_beyond_its_spread_is_a_shared_bottleneck() {
        let m = 256 << 20;
        let pts = vec![
            p(0, 0, m, &[20.0, 20.5, 21.0]),
            p(0, 1, m, &[19.0, 20.0, 20.2]),
            t(0, 0, m, &[10.0, 10.4, 10.1], &[0, 1]),
            t(0, 1, m, &[9.8, 10.2, 10.0], &[0, 1]),
        ];
        let got = together(&pts);
        assert_eq!(got.len(), 1);
        let s = &got[0];
        assert_eq!(s.sharing, Sharing::Bottleneck);
        assert_eq!(s.gpus, vec![0, 1]);
        assert!((s.aggregate_gbs - 20.1).abs() < 1e-9, "{}", s.aggregate_gbs);
        assert!((s.alone_sum_gbs.unwrap() - 40.5).abs() < 1e-9);
        let d0 = s.members[0].drop_pct.unwrap();
        assert!((d0 - (1.0 - 10.1 / 20.5) * 100.0).abs() < 1e-9, "{d0}");
    }

    #[test]
    fn overlapping_ranges_or_a_small_loss_are_no_bottleneck_and_a_mix_is_undecided() {
        let m = 256 << 20;
        let alone = [p(0, 0, m, &[20.0, 20.5, 21.0]), p(0, 1, m, &[20.0, 20.5, 21.0])];
        let mut pts = alone.to_vec();
        pts.push(t(0, 0, m, &[19.5, 20.4, 20.1], &[0, 1]));
        pts.push(t(0, 1, m, &[19.0, 19.2, 19.1], &[0, 1])); // separated, but 6.8% < floor
        assert_eq!(together(&pts)[0].sharing, Sharing::NoBottleneck);
        let mut mixed = alone.to_vec();
        mixed.push(t(0, 0, m, &[10.0, 10.1, 10.2], &[0, 1]));
        mixed.push(t(0, 1, m, &[20.2, 20.4, 20.3], &[0, 1]));
        assert_eq!(together(&mixed)[0].sharing, Sharing::Undecided);
        let missing =
            vec![alone[0].clone(), t(0, 0, m, &[5.0], &[0, 1]), t(0, 1, m, &[5.0], &[0, 1])];
        assert_eq!(together(&missing)[0].sharing, Sharing::Undecided, "GPU 1 not measured alone");
    }

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
            together: vec![],
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

    /// docs/gpu.md: "For each GPU, numaprobe names the node whose pinned
    /// memory feeds it fastest": one feed per GPU, with two nodes and two
    /// GPUs as with one.
    #[test]
    fn each_gpu_has_one_feed_however_many_nodes_fed_it() {
        let pts = [
            p(0, 0, 1 << 30, &[24.0]),
            p(0, 1, 1 << 30, &[11.0]),
            p(1, 0, 1 << 30, &[12.0]),
            p(1, 1, 1 << 30, &[23.0]),
        ];
        let f = feeds(&pts);
        let gpus: Vec<(u32, u32)> = f.iter().map(|f| (f.gpu, f.top_node)).collect();
        assert_eq!(gpus, [(0, 0), (1, 1)]);
        assert!(f.iter().all(|f| f.others.len() == 1));
    }

    #[test]
    fn a_separated_node_is_named_best_with_its_penalty() {
        let pts = [p(0, 0, 1 << 30, &[24.0, 25.0, 24.5]), p(1, 0, 1 << 30, &[12.0, 12.5, 12.2])];
        let f = &feeds(&pts)[0];
        assert_eq!(f.best_node, Some(0));
        assert!((f.others[0].penalty_pct - (1.0 - 12.2 / 24.5) * 100.0).abs() < 1e-9);
        assert_eq!(f.advice(false), Some(Advice::Both { node: 0 }));
        assert_eq!(f.advice(true), Some(Advice::MemOnly { node: 0 }));
    }

    #[test]
    fn overlapping_ranges_name_no_best_node() {
        // Node 1 has the higher median, but one of node 0's copies beat one
        // of node 1's: within the spread.
        let pts = [p(0, 0, 1 << 30, &[20.0, 24.0, 21.0]), p(1, 0, 1 << 30, &[22.0, 23.0, 22.5])];
        let f = &feeds(&pts)[0];
        assert_eq!(f.top_node, 1);
        assert_eq!(f.best_node, None);
        assert!(f.advice(false).is_none() && f.advice(true).is_none());
    }
}
