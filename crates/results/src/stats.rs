//! Summary statistics of repeated measurements.
//!
//! Method: order statistics on the sorted sample. Percentiles use linear
//! interpolation between closest ranks (Hyndman & Fan 1996, definition 7,
//! the default of R and NumPy). Spread is the relative range of the sample,
//! `(max - min) / median`, in percent; noise is judged from the median
//! absolute deviation scaled to a standard deviation (MAD x 1.4826), which
//! one outlier cannot inflate.

use serde::{Deserialize, Serialize};

/// The summary of a sample of one quantity (all in the sample's unit).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub p99: f64,
    /// Robust standard deviation (MAD x 1.4826).
    pub robust_sd: f64,
    /// `(max - min) / median` in percent.
    pub spread_pct: f64,
}

impl Summary {
    /// Summarises `values`; `None` for an empty sample or one holding a NaN.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| v.is_nan()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let median = percentile_sorted(&v, 50.0);
        let mad = mad(&v, median).unwrap_or(0.0);
        let (min, max) = (v[0], v[v.len() - 1]);
        Some(Summary {
            n: v.len(),
            min,
            max,
            mean: v.iter().sum::<f64>() / v.len() as f64,
            median,
            p90: percentile_sorted(&v, 90.0),
            p99: percentile_sorted(&v, 99.0),
            robust_sd: mad * 1.4826,
            spread_pct: if median != 0.0 { (max - min) / median.abs() * 100.0 } else { 0.0 },
        })
    }

    /// Robust coefficient of variation in percent.
    pub fn robust_cv_pct(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            self.robust_sd / self.median.abs() * 100.0
        }
    }
}

/// The arithmetic mean of a sample; `None` for an empty one. The one mean
/// the figures that average (ratios, per-node means) are taken with.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The median of a sample (the mean of the two middle values of an even
/// count); `None` for an empty sample. The one median every figure of
/// numaprobe is taken with.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// Quantile `q` (0..=1) of a sample in any order, interpolated as
/// [`percentile_sorted`]; `None` for an empty sample.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    Some(percentile_sorted(&v, q * 100.0))
}

/// Median absolute deviation of a sample from `center`; `None` for an
/// empty sample.
pub fn mad(values: &[f64], center: f64) -> Option<f64> {
    median(&values.iter().map(|x| (x - center).abs()).collect::<Vec<_>>())
}

/// Percentile `p` (0..=100) of an ascending sample, interpolated
/// (Hyndman & Fan definition 7). Panics on an empty slice.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    assert!(!sorted.is_empty(), "percentile of an empty sample");
    let p = p.clamp(0.0, 100.0) / 100.0;
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// A figure when it was measured: `None` for a figure that is not a number
/// (a stored result that lacked it, or a spread of one sample).
pub fn measured(x: f64) -> Option<f64> {
    Some(x).filter(|x| x.is_finite())
}

/// Noise as a robust coefficient of variation, percent, from a result's
/// spread `(max - min) / median` when it gives no robust CV: the spread
/// divided by the expected range of `n` normal samples in standard
/// deviations (the d2 constant of quality control, ASTM E2587); `n` 0 or
/// unknown counts as 10 (d2 = 3.078). `None` for a spread that is not a
/// number.
pub fn noise_from_spread(spread_pct: f64, n: Option<usize>) -> Option<f64> {
    let n = n.filter(|n| *n > 0).unwrap_or(10);
    spread_pct.is_finite().then(|| spread_pct.abs() / d2(n))
}

/// Expected range of `n` normal samples in standard deviations (ASTM
/// E2587's table of d2), growing slowly past 25.
fn d2(n: usize) -> f64 {
    const D2: [f64; 24] = [
        1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336, 3.407,
        3.472, 3.532, 3.588, 3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931,
    ];
    match n {
        0 | 1 => 1.0,
        2..=25 => D2[n - 2],
        _ => 3.931 + 0.0125 * ((n - 25) as f64).sqrt().min(40.0),
    }
}

/// Spread in percent of the `k` best values of a sample, where "best" is the
/// largest when `higher_is_better`: `(best - kth best) / best`. Used to stop
/// repeating once the top of the distribution is stable (STREAM reports the
/// best; MLC the steady state).
pub fn top_k_spread_pct(values: &[f64], k: usize, higher_is_better: bool) -> Option<f64> {
    if values.len() < k || k == 0 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| if higher_is_better { b.total_cmp(a) } else { a.total_cmp(b) });
    let best = v[0];
    let kth = v[k - 1];
    if best == 0.0 {
        return Some(0.0);
    }
    Some(((best - kth) / best).abs() * 100.0)
}

/// Verdict of comparing a new median against a baseline, given each side's
/// noise as a robust coefficient of variation in percent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Better,
    Worse,
    WithinNoise,
}

/// Change of `new` against `base` in percent.
pub fn change_pct(base: f64, new: f64) -> f64 {
    if base == 0.0 {
        0.0
    } else {
        (new - base) / base.abs() * 100.0
    }
}

/// Decides whether a change is beyond noise: the change must exceed three
/// combined robust standard deviations (in percent, root sum of squares) and
/// at least `floor_pct`, so two identical-looking runs on a quiet machine are
/// not called different over a fraction of a percent.
pub fn verdict(
    base: f64,
    base_noise_pct: f64,
    new: f64,
    new_noise_pct: f64,
    higher_is_better: bool,
    floor_pct: f64,
) -> Verdict {
    let change = change_pct(base, new);
    let noise = 3.0 * (base_noise_pct.powi(2) + new_noise_pct.powi(2)).sqrt();
    if change.abs() <= noise.max(floor_pct) {
        Verdict::WithinNoise
    } else if (change > 0.0) == higher_is_better {
        Verdict::Better
    } else {
        Verdict::Worse
    }
}

/// Smallest change (percent) `exec` calls a difference between placements.
pub const EXEC_FLOOR_PCT: f64 = 2.0;

/// Fewer repetitions than this on either side give no better/worse
/// verdict: with two runs the range and the MAD say nothing about noise.
pub const MIN_RUNS_FOR_VERDICT: usize = 3;

/// Compares two samples of repeated runs (`exec`'s policies): `None` when
/// either has fewer than [`MIN_RUNS_FOR_VERDICT`] values (undecided);
/// otherwise the [`verdict`] on their medians and robust noise (change
/// beyond three combined robust deviations and beyond `floor_pct`), and
/// within noise whenever the ranges of the two samples overlap.
pub fn compare_samples(
    base: &Summary,
    new: &Summary,
    higher_is_better: bool,
    floor_pct: f64,
) -> Option<Verdict> {
    if base.n < MIN_RUNS_FOR_VERDICT || new.n < MIN_RUNS_FOR_VERDICT {
        return None;
    }
    if base.min <= new.max && new.min <= base.max {
        return Some(Verdict::WithinNoise);
    }
    Some(verdict(
        base.median,
        base.robust_cv_pct(),
        new.median,
        new.robust_cv_pct(),
        higher_is_better,
        floor_pct,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_a_sample_and_of_none() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }

    #[test]
    fn median_quantile_and_mad() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25), Some(2.0));
        assert_eq!(quantile(&[10.0], 0.9), Some(10.0));
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0], 3.0), Some(1.0));
        assert_eq!(mad(&[], 0.0), None);
    }

    #[test]
    fn percentiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 50.0), 2.5);
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&v, 100.0), 4.0);
        // numpy.percentile([1,2,3,4], 90) == 3.7
        assert!((percentile_sorted(&v, 90.0) - 3.7).abs() < 1e-12);
        assert_eq!(percentile_sorted(&[7.0], 99.0), 7.0);
    }

    #[test]
    fn summary_of_a_sample() {
        let s = Summary::of(&[10.0, 12.0, 11.0, 13.0, 100.0]).unwrap();
        assert_eq!(s.n, 5);
        assert_eq!(s.min, 10.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.median, 12.0);
        assert_eq!(s.mean, 29.2);
        // deviations 2,0,1,1,88 -> MAD 1 -> robust sd 1.4826: the outlier
        // does not inflate it.
        assert!((s.robust_sd - 1.4826).abs() < 1e-12);
        assert!((s.spread_pct - 750.0).abs() < 1e-9);
    }

    #[test]
    fn summary_rejects_empty_and_nan() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn top_k_spread_looks_at_the_best_values() {
        let v = [50.0, 100.0, 99.0, 98.0, 10.0];
        assert!((top_k_spread_pct(&v, 3, true).unwrap() - 2.0).abs() < 1e-12);
        // lower is better: best 10, third best 98
        assert!((top_k_spread_pct(&v, 3, false).unwrap() - 880.0).abs() < 1e-9);
        assert!(top_k_spread_pct(&v, 6, true).is_none());
    }

    #[test]
    fn verdicts_respect_noise_and_direction() {
        assert_eq!(verdict(100.0, 1.0, 110.0, 1.0, true, 1.0), Verdict::Better);
        assert_eq!(verdict(100.0, 1.0, 110.0, 1.0, false, 1.0), Verdict::Worse);
        // 3 * sqrt(2) * 3% = 12.7% noise band swallows a 10% change
        assert_eq!(verdict(100.0, 3.0, 110.0, 3.0, true, 1.0), Verdict::WithinNoise);
        // the floor keeps tiny changes on quiet machines within noise
        assert_eq!(verdict(100.0, 0.0, 100.5, 0.0, true, 1.0), Verdict::WithinNoise);
        assert_eq!(change_pct(0.0, 5.0), 0.0);
    }

    #[test]
    fn samples_need_three_runs_each_and_separate_ranges() {
        let s = |v: &[f64]| Summary::of(v).unwrap();
        let base = s(&[100.0, 101.0, 99.0]);
        let fast = s(&[120.0, 121.0, 119.0]);
        assert_eq!(compare_samples(&base, &fast, true, 2.0), Some(Verdict::Better));
        assert_eq!(compare_samples(&base, &fast, false, 2.0), Some(Verdict::Worse));
        // two runs each, however far apart: undecided
        let (b2, f2) = (s(&[100.0, 101.0]), s(&[200.0, 201.0]));
        assert_eq!(compare_samples(&b2, &f2, true, 2.0), None);
        assert_eq!(compare_samples(&base, &f2, true, 2.0), None);
        assert_eq!(compare_samples(&b2, &fast, true, 2.0), None);
        // overlapping ranges are within noise even with a 10% median change
        let wide = s(&[100.0, 130.0, 80.0]);
        let near = s(&[110.0, 125.0, 95.0]);
        assert_eq!(compare_samples(&wide, &near, true, 2.0), Some(Verdict::WithinNoise));
    }
}
