//! Latency histograms with logarithmic buckets, the way HdrHistogram lays
//! them out (Tene, HdrHistogram, "log-linear" buckets): every power of two
//! is split into [`SUB_BUCKETS`] equal sub-buckets, so a bucket's width is
//! at most 1/16 (6.25%) of its value whatever the magnitude, and a few
//! dozen buckets cover nanoseconds to milliseconds. Only non-empty buckets
//! are stored.

use serde::{Deserialize, Serialize};

/// Linear sub-buckets per power of two (relative resolution 1/16).
pub const SUB_BUCKETS: u32 = 16;

/// One non-empty bucket: values in `[lo_ns, hi_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub lo_ns: f64,
    pub hi_ns: f64,
    pub count: u64,
}

/// A histogram of latencies in ns (per load), log buckets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Sub-buckets per power of two ([`SUB_BUCKETS`] when written here).
    pub sub_buckets: u32,
    /// What one value is: dependent loads timed together (each value is
    /// their mean ns per load).
    pub loads_per_value: u64,
    /// Values counted (the sum of the counts).
    pub count: u64,
    /// Non-empty buckets, lowest first.
    pub buckets: Vec<Bucket>,
}

/// The bucket of `v` (> 0): its power of two and sub-bucket.
fn index_of(v: f64, sub: u32) -> (i32, u32) {
    let e = v.log2().floor() as i32;
    let base = 2f64.powi(e);
    let frac = (v / base - 1.0).clamp(0.0, 1.0 - f64::EPSILON);
    (e, ((frac * sub as f64).floor() as u32).min(sub - 1))
}

fn bounds(e: i32, s: u32, sub: u32) -> (f64, f64) {
    let base = 2f64.powi(e);
    (base * (1.0 + s as f64 / sub as f64), base * (1.0 + (s + 1) as f64 / sub as f64))
}

impl Histogram {
    /// Counts `values` (ns; non-finite and non-positive values are left
    /// out) into log buckets.
    pub fn of(values: &[f64], loads_per_value: u64) -> Histogram {
        let sub = SUB_BUCKETS;
        let mut counts: std::collections::BTreeMap<(i32, u32), u64> = Default::default();
        for &v in values.iter().filter(|v| v.is_finite() && **v > 0.0) {
            *counts.entry(index_of(v, sub)).or_default() += 1;
        }
        let buckets: Vec<Bucket> = counts
            .into_iter()
            .map(|((e, s), count)| {
                let (lo_ns, hi_ns) = bounds(e, s, sub);
                Bucket { lo_ns, hi_ns, count }
            })
            .collect();
        Histogram {
            sub_buckets: sub,
            loads_per_value,
            count: buckets.iter().map(|b| b.count).sum(),
            buckets,
        }
    }

    /// The value below which `q` percent of the values lie, as the middle
    /// of its bucket (accurate to half a bucket: 3%); `None` when empty.
    pub fn percentile(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for b in &self.buckets {
            seen += b.count;
            if seen >= rank {
                return Some((b.lo_ns + b.hi_ns) / 2.0);
            }
        }
        self.buckets.last().map(|b| (b.lo_ns + b.hi_ns) / 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_log_linear_and_relative_width_is_bounded() {
        let h = Histogram::of(&[1.0, 1.05, 100.0, 101.0, 1500.0], 1000);
        assert_eq!(h.count, 5);
        for b in &h.buckets {
            assert!(b.hi_ns > b.lo_ns);
            assert!((b.hi_ns - b.lo_ns) / b.lo_ns <= 1.0 / 16.0 + 1e-12, "{b:?}");
        }
        // 1.0 and 1.05 share the first bucket of [1, 2) (width 1/16)
        assert_eq!(h.buckets[0], Bucket { lo_ns: 1.0, hi_ns: 1.0625, count: 2 });
        // 100 and 101 both fall in [100, 104): 64 * (1 + 9/16) = 100
        assert_eq!(h.buckets[1], Bucket { lo_ns: 100.0, hi_ns: 104.0, count: 2 });
        // 1500 in [1472, 1536): 1024 * (1 + 7/16)
        assert_eq!(h.buckets[2], Bucket { lo_ns: 1472.0, hi_ns: 1536.0, count: 1 });
        // every value lies inside its bucket
        for v in [1.0, 1.05, 100.0, 101.0, 1500.0, 3.999, 4.0] {
            let h = Histogram::of(&[v], 1);
            let b = h.buckets[0];
            assert!(b.lo_ns <= v && v < b.hi_ns, "{v} not in {b:?}");
        }
    }

    #[test]
    fn bad_values_are_left_out_and_percentiles_follow_the_counts() {
        let mut v: Vec<f64> = (0..90).map(|_| 100.0).collect();
        v.extend((0..10).map(|_| 400.0));
        v.extend([f64::NAN, 0.0, -3.0, f64::INFINITY]);
        let h = Histogram::of(&v, 256);
        assert_eq!(h.count, 100);
        assert_eq!(h.buckets.len(), 2);
        let p50 = h.percentile(50.0).unwrap();
        assert!((100.0..104.0).contains(&p50), "{p50}");
        let p99 = h.percentile(99.0).unwrap();
        assert!((400.0..416.0).contains(&p99), "{p99}");
        assert_eq!(Histogram::of(&[], 1).percentile(50.0), None);
    }

    #[test]
    fn round_trips_through_json() {
        let h = Histogram::of(&[10.0, 20.0, 30.0], 512);
        let v = serde_json::to_value(&h).unwrap();
        assert_eq!(v["sub_buckets"], 16);
        assert_eq!(serde_json::from_value::<Histogram>(v).unwrap(), h);
    }
}
