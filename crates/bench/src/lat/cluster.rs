//! Grouping CPUs by their latency to one node's memory.
//!
//! Method: one-dimensional gap clustering (single linkage cut at a
//! threshold). Sort the latencies and split wherever two neighbours differ
//! by more than `max(k x noise, rel x lower value)`: `noise` is the
//! measurement's own robust standard deviation (so a split needs a gap far
//! beyond what repeating one CPU gives), and the relative floor keeps a
//! quiet machine's sub-percent differences in one group. Uniform latencies
//! give one group.

use serde::{Deserialize, Serialize};

/// Gap, in robust standard deviations of the noise, that splits groups.
pub const GAP_NOISE_FACTOR: f64 = 6.0;
/// Gap, relative to the lower latency, below which nothing is split.
pub const GAP_REL_FLOOR: f64 = 0.08;

/// One group of CPUs with similar latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Indices into the input, in input order.
    pub members: Vec<usize>,
    pub min_ns: f64,
    pub max_ns: f64,
    pub median_ns: f64,
}

/// Clusters `values` (ns). `noise_ns` is the typical robust standard
/// deviation of one value. Groups come out from fastest to slowest.
pub fn cluster(values: &[f64], noise_ns: f64) -> Vec<Group> {
    let mut idx: Vec<usize> = (0..values.len()).filter(|&i| values[i].is_finite()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (k, &i) in idx.iter().enumerate() {
        let split = k > 0 && {
            let prev = values[idx[k - 1]];
            let gap = values[i] - prev;
            gap > (GAP_NOISE_FACTOR * noise_ns.max(0.0)).max(GAP_REL_FLOOR * prev.abs())
        };
        if split || groups.is_empty() {
            groups.push(Vec::new());
        }
        groups.last_mut().expect("pushed above").push(i);
    }
    groups
        .into_iter()
        .map(|mut members| {
            let mut v: Vec<f64> = members.iter().map(|&i| values[i]).collect();
            v.sort_by(|a, b| a.total_cmp(b));
            members.sort_unstable();
            Group {
                members,
                min_ns: v[0],
                max_ns: v[v.len() - 1],
                median_ns: results::stats::percentile_sorted(&v, 50.0),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::chase::Rng;

    /// Values around each centre with uniform noise of +-`amp`.
    fn synth(centres: &[(f64, usize)], amp: f64, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        let mut v = Vec::new();
        for &(c, n) in centres {
            for _ in 0..n {
                let u = rng.next_u64() as f64 / u64::MAX as f64; // 0..1
                v.push(c + (2.0 * u - 1.0) * amp);
            }
        }
        // interleave so groups are not contiguous in input order
        rng.shuffle(&mut v);
        v
    }

    #[test]
    fn two_groups_like_a_hidden_two_socket_machine() {
        // half the cores see ~68 ns, half ~100 ns (Xeon 8163, numa=off)
        let v = synth(&[(68.0, 24), (100.0, 24)], 2.0, 1);
        let g = cluster(&v, 1.0);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].members.len(), 24);
        assert_eq!(g[1].members.len(), 24);
        assert!(g[0].members.iter().all(|&i| v[i] < 80.0));
        assert!(g[1].members.iter().all(|&i| v[i] > 80.0));
        assert!((g[0].median_ns - 68.0).abs() < 2.0);
    }

    #[test]
    fn three_groups_with_noise() {
        let v = synth(&[(80.0, 10), (120.0, 7), (180.0, 5)], 3.0, 2);
        let g = cluster(&v, 1.5);
        let sizes: Vec<usize> = g.iter().map(|g| g.members.len()).collect();
        assert_eq!(sizes, vec![10, 7, 5]);
    }

    #[test]
    fn uniform_latencies_are_one_group() {
        let v = synth(&[(90.0, 64)], 2.0, 3);
        let g = cluster(&v, 1.0);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].members.len(), 64);
    }

    #[test]
    fn noise_larger_than_the_gap_keeps_one_group() {
        // 12% apart, but a noise of 3 ns (18 ns to split) hides it
        let v = synth(&[(90.0, 8), (101.0, 8)], 1.0, 4);
        assert_eq!(cluster(&v, 3.0).len(), 1);
        assert_eq!(cluster(&v, 0.5).len(), 2);
    }

    #[test]
    fn empty_and_single() {
        assert!(cluster(&[], 1.0).is_empty());
        assert_eq!(cluster(&[5.0], 1.0).len(), 1);
    }
}
