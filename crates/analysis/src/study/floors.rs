//! The noise floors of a study: repeated runs of identical settings per
//! metric, and the series that split into two levels instead of repeating.

use std::collections::BTreeMap;

use results::run::{LoadedRun, RunId, RunStatus};
use results::runstats::{
    guard_floor, interval_rank, range_floor, Criteria, NoiseFloor, DEFAULT_MARGIN_PCT,
};

use super::{settings_of, FloorSource};
use crate::catalogue::{self, MetricId};

/// Repeated runs of identical settings (same machine, same detected and
/// declared settings, same label, complete) per metric, from which the noise floor of
/// each comparison is predicted ([`Floors::for_sizes`]).
#[derive(Debug, Clone, Default)]
pub struct Floors {
    /// Per metric id: one series of values per configuration, in
    /// start-time order.
    pub by_metric: BTreeMap<MetricId, Vec<Vec<f64>>>,
    /// Series of one configuration that split into two levels far apart
    /// beyond their own spread: not repeats, left out of `by_metric`.
    pub level_shifts: Vec<LevelShift>,
}

/// Runs of identical recorded settings and label whose values of a metric
/// sit at two levels, the gap between them more than [`SHIFT_FACTOR`]
/// times the spread inside either level and beyond the margin: something
/// the runs do not record changed between them.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelShift {
    pub metric: MetricId,
    pub label: Option<String>,
    /// The runs of the lower level and of the upper one, with each level's
    /// median.
    pub low: (Vec<RunId>, f64),
    pub high: (Vec<RunId>, f64),
}

/// How many times the spread inside each level the gap between two levels
/// must be for a series not to count as repeats.
const SHIFT_FACTOR: f64 = 4.0;

/// The fewest runs of each level: two runs that happen to agree are not a
/// level (and leaving a bimodal configuration out of the floor would make
/// the floor less cautious on the evidence of four runs).
const MIN_LEVEL: usize = 3;

/// The two levels of a series of `(run, value)`, when it has them
/// ([`LevelShift`]): split at the widest gap between sorted values, each
/// level of at least [`MIN_LEVEL`] runs.
fn level_shift(
    metric: &MetricId,
    label: &Option<String>,
    s: &[(RunId, f64)],
) -> Option<LevelShift> {
    let mut v: Vec<(RunId, f64)> =
        s.iter().copied().filter(|x| x.1.is_finite() && x.1 > 0.0).collect();
    if v.len() < 2 * MIN_LEVEL {
        return None;
    }
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    let logs: Vec<f64> = v.iter().map(|x| x.1.ln()).collect();
    let (k, gap) =
        (1..logs.len()).map(|i| (i, logs[i] - logs[i - 1])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    if k < MIN_LEVEL || logs.len() - k < MIN_LEVEL {
        return None;
    }
    let spread = (logs[k - 1] - logs[0]).max(logs[logs.len() - 1] - logs[k]);
    if gap <= SHIFT_FACTOR * spread || gap <= (1.0 + DEFAULT_MARGIN_PCT / 100.0).ln() {
        return None;
    }
    let level = |x: &[(RunId, f64)]| {
        let mut ids: Vec<RunId> = x.iter().map(|r| r.0).collect();
        ids.sort();
        let vals: Vec<f64> = x.iter().map(|r| r.1).collect();
        (ids, results::stats::median(&vals).unwrap_or(f64::NAN))
    };
    Some(LevelShift {
        metric: metric.clone(),
        label: label.clone(),
        low: level(&v[..k]),
        high: level(&v[k..]),
    })
}

impl Floors {
    /// Collects the series from `runs` (any set: they are grouped by
    /// machine and by every setting, declared ones and `exec`'s placement
    /// included, here, in start-time order).
    pub fn from_runs(runs: &[LoadedRun]) -> Floors {
        let mut by_cfg: BTreeMap<(String, String, Option<String>), Vec<&LoadedRun>> =
            BTreeMap::new();
        for r in runs.iter().filter(|r| r.summary.status == RunStatus::Complete) {
            // Every setting the study compares (detected, declared, and the
            // placement `exec` ran the program under), not only the hash
            // stored with the run; and the label: a label is the user's
            // statement that something differs, so runs of two labels are
            // never repeats of one configuration, whatever the OS saw.
            let settings = serde_json::to_string(&settings_of(r)).unwrap_or_default();
            let key = (r.summary.machine_fingerprint.clone(), settings, r.summary.label.clone());
            by_cfg.entry(key).or_default().push(r);
        }
        let mut by_metric: BTreeMap<MetricId, Vec<Vec<f64>>> = BTreeMap::new();
        let mut level_shifts = Vec::new();
        for ((_, _, label), v) in by_cfg.iter_mut() {
            // By the instant each start names (offsets differ between
            // machines and imports), not by its text.
            v.sort_by_cached_key(|r| {
                (results::time::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN), r.summary.id)
            });
            let mut series: BTreeMap<MetricId, Vec<(RunId, f64)>> = BTreeMap::new();
            for r in v.iter() {
                for mv in catalogue::catalogue(r) {
                    series.entry(mv.def.id).or_default().push((r.summary.id, mv.value));
                }
            }
            // By their text ids: the warnings name a split's metrics in
            // that order.
            let mut series: Vec<_> = series.into_iter().collect();
            series.sort_by_cached_key(|(id, _)| id.to_string());
            for (id, s) in series {
                // Two levels far apart are not the spread of repeats: left
                // out, so that an unrecorded change never widens the floor.
                if let Some(shift) = level_shift(&id, label, &s) {
                    level_shifts.push(shift);
                    continue;
                }
                by_metric.entry(id).or_default().push(s.into_iter().map(|x| x.1).collect());
            }
        }
        Floors { by_metric, level_shifts }
    }

    /// The floor a comparison of groups of `m` and `n` runs is held to.
    /// With an interval (groups large enough at the confidence asked): the
    /// Student-t guard on medians of `min(m, n)` consecutive runs, else of
    /// the largest smaller block measured (wider, so more cautious); `None`
    /// when no configuration has two blocks. Without an interval: the
    /// distribution-free range floor for `m + n` runs, or `Err((have,
    /// need))` when no configuration has the runs it needs.
    pub fn for_sizes(
        &self,
        metric: &MetricId,
        m: usize,
        n: usize,
        policy: &Criteria,
    ) -> Result<Option<NoiseFloor>, (usize, usize)> {
        let empty = Vec::new();
        let series = self.by_metric.get(metric).unwrap_or(&empty);
        if interval_rank(m, n, policy.confidence).is_some() {
            let k = m.min(n).clamp(1, MAX_BLOCK);
            Ok((1..=k).rev().find_map(|k| guard_floor(series, k, policy.confidence)))
        } else {
            range_floor(series, m + n, policy.confidence).map(Some)
        }
    }

    /// Where `floor`, one of `metric`'s ([`Floors::for_sizes`]), came from:
    /// its kind and the runs and configurations of the metric's floors.
    pub fn source(&self, metric: &MetricId, floor: &NoiseFloor) -> FloorSource {
        let series = self.by_metric.get(metric).map_or(&[][..], Vec::as_slice);
        FloorSource {
            kind: floor.kind,
            runs: series.iter().map(Vec::len).sum(),
            configurations: series.len(),
        }
    }
}

/// The largest block size floors are computed for.
const MAX_BLOCK: usize = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use results::runstats::FloorKind;

    /// Each configuration's runs of one metric (values spread by a few
    /// percent, no level shift).
    fn floors(runs: &[usize]) -> Floors {
        let series = runs
            .iter()
            .enumerate()
            .map(|(c, &n)| (0..n).map(|i| 100.0 / (c + 1) as f64 + (i % 7) as f64 * 0.6).collect())
            .collect();
        Floors { by_metric: [("local_bw_gbs".into(), series)].into(), level_shifts: vec![] }
    }

    /// Every kind of floor, with the runs and configurations it rests on:
    /// the distribution-free range floor (groups too small for an
    /// interval), the Student-t bound on medians of blocks of runs and on
    /// single runs (report words them: `report::study::words::floor_source`).
    #[test]
    fn a_floors_source_says_what_it_is_and_how_many_runs_it_rests_on() {
        let id: MetricId = "local_bw_gbs".into();
        let p = Criteria::default();
        let source =
            |f: &Floors, m, n| f.source(&id, &f.for_sizes(&id, m, n, &p).unwrap().unwrap());
        let many = floors(&[40, 9]);
        let s = source(&many, 1, 1);
        assert!(matches!(s.kind, FloorKind::Range { runs: 40, new: 2, .. }), "{s:?}");
        assert_eq!((s.runs, s.configurations), (49, 2));
        let s = source(&many, 3, 3);
        assert_eq!(s.kind, FloorKind::Guard { k: 3, blocks: 16, df: 14 });
        assert_eq!((s.runs, s.configurations), (49, 2));
        let s = source(&floors(&[3, 3]), 3, 3);
        assert_eq!(s.kind, FloorKind::Guard { k: 1, blocks: 6, df: 4 });
        assert_eq!((s.runs, s.configurations), (6, 2));
    }
}
