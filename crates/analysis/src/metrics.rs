//! The headline metrics of a run, the ones `compare` puts side by side and
//! published BIOS tuning studies tabulate. Definitions (also in
//! `docs/report.md`):
//!
//! * local bandwidth: mean over CPU nodes of the best GB/s of the headline
//!   kernel (triad when measured) with threads and memory on that node
//!   (`bw` mode `local`; the diagonal of mode `matrix` when there is none);
//! * global bandwidth: best GB/s of mode `global` (every node's threads on
//!   their own node's memory, whole machine);
//! * interleaved bandwidth: best GB/s of mode `interleave` (all CPUs, pages
//!   interleaved over all nodes);
//! * cross-node bandwidth: mean of the off-diagonal cells of mode `matrix`;
//! * local latency: mean over nodes of the diagonal of the `lat` matrix
//!   (`median_ns`; mode `point` results with cpu_node = mem_node when there
//!   is no matrix);
//! * remote latency: mean of the off-diagonal cells of the `lat` matrix;
//! * loaded latency at peak: the latency of the `loaded` point that reached
//!   the highest `load_gbs`.
//!
//! A metric's noise is the largest noise (robust CV %) of the results it is
//! made of, so a verdict is never more confident than its noisiest part.

use std::collections::BTreeMap;

use kernels::Kernel;
use results::bw::{self, BwResult};
use results::lat::{self, Lat, LatResult, LoadedPoint};
use results::stats::{mean, measured};
use results::Record;
use serde::Serialize;

use crate::data::{pick_kernel, RunData};
use crate::trust::Taken;

/// One of the headline metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetricKey {
    LocalBw,
    GlobalBw,
    InterleaveBw,
    CrossBw,
    LocalLat,
    RemoteLat,
    LoadedLatPeak,
}

impl MetricKey {
    pub const ALL: [MetricKey; 7] = [
        MetricKey::LocalBw,
        MetricKey::GlobalBw,
        MetricKey::InterleaveBw,
        MetricKey::CrossBw,
        MetricKey::LocalLat,
        MetricKey::RemoteLat,
        MetricKey::LoadedLatPeak,
    ];

    /// A name for tables.
    pub fn name(self) -> &'static str {
        match self {
            MetricKey::LocalBw => "Local bandwidth",
            MetricKey::GlobalBw => "Global bandwidth",
            MetricKey::InterleaveBw => "Interleaved bandwidth",
            MetricKey::CrossBw => "Cross-node bandwidth",
            MetricKey::LocalLat => "Local latency",
            MetricKey::RemoteLat => "Remote latency",
            MetricKey::LoadedLatPeak => "Loaded latency at peak",
        }
    }

    pub fn unit(self) -> &'static str {
        if self.higher_is_better() {
            "GB/s"
        } else {
            "ns"
        }
    }

    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            MetricKey::LocalBw | MetricKey::GlobalBw | MetricKey::InterleaveBw | MetricKey::CrossBw
        )
    }
}

/// A metric's value in a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    pub value: f64,
    /// Robust CV % (each record's `noise()`); 0 when the results gave no
    /// spread.
    pub noise_pct: f64,
    /// How many results it was computed from.
    pub results: usize,
    /// The kernel for bandwidth metrics, the load for loaded latency.
    pub detail: Option<String>,
}

/// The cache-line stride the sweep chases caches with: a figure the
/// adjacent-line prefetcher helps, never a DRAM latency.
const CACHE_LINE_BYTES: usize = 64;

/// Whether a record can feed a headline metric: [`metrics`] reads
/// bandwidth results, the pointer chases of the matrix and point modes,
/// the loaded-latency steps, and the per-CPU and sweep chases that may
/// measure a matrix cell's quantity again (past the cache stride: a
/// headline takes the most trustworthy of them). A caller that needs only
/// the headline figures (the fleet, over thousands of runs) leaves the
/// rest unread: the sweep's cache sizes, core-to-core latency, audit
/// findings, most of a run's records.
pub fn feeds_headline(r: &Record) -> bool {
    match r {
        Record::Bw(_) => true,
        Record::Lat(l) => match l.as_ref() {
            Lat::Chase(c) => match c.mode {
                lat::Mode::Matrix | lat::Mode::Point | lat::Mode::PerCpu => true,
                lat::Mode::Sweep => c.stride_bytes > CACHE_LINE_BYTES,
                _ => false,
            },
            Lat::Loaded(_) => true,
            Lat::C2c(_) => false,
        },
        _ => false,
    }
}

/// The headline metrics of a run (absent when not measured).
pub fn metrics(d: &RunData) -> BTreeMap<MetricKey, Metric> {
    let mut m = BTreeMap::new();
    for key in MetricKey::ALL {
        let v = match key {
            MetricKey::LocalBw => local_bw(d),
            MetricKey::GlobalBw => single_bw(d, bw::Mode::Global),
            MetricKey::InterleaveBw => single_bw(d, bw::Mode::Interleave),
            MetricKey::CrossBw => cross_bw(d),
            MetricKey::LocalLat => local_lat(d),
            MetricKey::RemoteLat => remote_lat(d),
            MetricKey::LoadedLatPeak => loaded_peak(d),
        };
        if let Some(v) = v {
            m.insert(key, v);
        }
    }
    m
}

fn noise_of(it: impl Iterator<Item = Option<f64>>) -> f64 {
    it.flatten().fold(0.0, f64::max)
}

/// Per CPU node, the best point of the headline kernel with memory on the
/// same node: mode `local`, else the diagonal of the matrix. Each point is
/// the most trustworthy measurement of its quantity in the run
/// ([`crate::trust::trusted_bw`]: a clean scaling point or matrix cell of
/// the same threads, CPUs and memory in place of a disturbed one).
pub fn local_points(d: &RunData) -> (Option<Kernel>, Vec<&BwResult>) {
    let (kernel, taken) = local_taken(d);
    (kernel, taken.into_iter().map(|t| t.chosen).collect())
}

/// [`local_points`] with, for each, what it was chosen among.
pub fn local_taken(d: &RunData) -> (Option<Kernel>, Vec<Taken<'_, BwResult>>) {
    let measured = |b: &&BwResult| b.best_gbs.is_finite();
    let mut pts: Vec<&BwResult> = d
        .bw_mode(bw::Mode::Local)
        .filter(measured)
        .filter(|b| b.mem_node.is_none() || b.mem_node == b.cpu_node)
        .collect();
    if pts.is_empty() {
        pts = d
            .bw_mode(bw::Mode::Matrix)
            .filter(measured)
            .filter(|b| b.mem_node == b.cpu_node)
            .collect();
    }
    let Some(kernel) = pick_kernel(pts.iter().copied()) else { return (None, vec![]) };
    let mut best: BTreeMap<Option<u32>, Taken<'_, BwResult>> = BTreeMap::new();
    for p in pts.into_iter().filter(|p| p.kernel == kernel) {
        let t = crate::trust::trusted_bw(d, p);
        match best.get(&p.cpu_node) {
            Some(b) if b.chosen.best_gbs >= t.chosen.best_gbs => {}
            _ => {
                best.insert(p.cpu_node, t);
            }
        }
    }
    (Some(kernel), best.into_values().collect())
}

fn local_bw(d: &RunData) -> Option<Metric> {
    let (kernel, pts) = local_points(d);
    let vals: Vec<f64> = pts.iter().map(|p| p.best_gbs).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(pts.iter().map(|p| p.noise())),
        results: pts.len(),
        detail: kernel.map(|k| k.name().to_string()),
    })
}

/// The best point of the headline kernel in a whole-machine mode.
pub fn best_of_mode(d: &RunData, mode: bw::Mode) -> Option<&BwResult> {
    let kernel = pick_kernel(d.bw_mode(mode))?;
    d.bw_mode(mode)
        .filter(|b| b.kernel == kernel && b.best_gbs.is_finite())
        .max_by(|a, b| a.best_gbs.total_cmp(&b.best_gbs))
}

fn single_bw(d: &RunData, mode: bw::Mode) -> Option<Metric> {
    let p = best_of_mode(d, mode)?;
    Some(Metric {
        value: p.best_gbs,
        noise_pct: p.noise().unwrap_or(0.0),
        results: 1,
        detail: Some(p.kernel.name().to_string()),
    })
}

/// Matrix cells of the headline kernel: `(cpu_node, mem_node) -> point`.
pub fn bw_matrix(d: &RunData) -> (Option<Kernel>, BTreeMap<(u32, u32), &BwResult>) {
    let Some(kernel) = pick_kernel(d.bw_mode(bw::Mode::Matrix)) else {
        return (None, BTreeMap::new());
    };
    let mut cells = BTreeMap::new();
    for p in d.bw_mode(bw::Mode::Matrix).filter(|b| b.kernel == kernel && b.best_gbs.is_finite()) {
        if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
            cells.insert((c, m), p);
        }
    }
    (Some(kernel), cells)
}

fn cross_bw(d: &RunData) -> Option<Metric> {
    let (kernel, cells) = bw_matrix(d);
    let off: Vec<&&BwResult> = cells.iter().filter(|((c, m), _)| c != m).map(|(_, p)| p).collect();
    let vals: Vec<f64> = off.iter().map(|p| p.best_gbs).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(off.iter().map(|p| p.noise())),
        results: off.len(),
        detail: kernel.map(|k| k.name().to_string()),
    })
}

/// Latency matrix cells as the headlines take them: `(cpu_node, mem_node)
/// -> point`, each cell the most trustworthy measurement of its quantity
/// in the run ([`crate::trust::trusted_chase`]: the same CPU, memory,
/// size and stride measured clean by the sweep or per-CPU latency in
/// place of a disturbed matrix cell). [`measured_lat_matrix`] is the
/// matrix as measured.
pub fn lat_matrix(d: &RunData) -> BTreeMap<(u32, u32), &LatResult> {
    lat_matrix_taken(d).into_iter().map(|(k, t)| (k, t.chosen)).collect()
}

/// [`lat_matrix`] with, for each cell, what it was chosen among.
pub fn lat_matrix_taken(d: &RunData) -> BTreeMap<(u32, u32), Taken<'_, LatResult>> {
    measured_lat_matrix(d)
        .into_iter()
        .map(|(k, p)| (k, crate::trust::trusted_chase(d, p)))
        .collect()
}

/// The `lat` matrix's cells as measured: `(cpu_node, mem_node) -> point`.
pub fn measured_lat_matrix(d: &RunData) -> BTreeMap<(u32, u32), &LatResult> {
    let mut cells = BTreeMap::new();
    for p in d.chase_mode(lat::Mode::Matrix).filter(|l| l.median_ns.is_finite()) {
        if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
            cells.insert((c, m), p);
        }
    }
    cells
}

fn lat_metric(pts: &[&LatResult]) -> Option<Metric> {
    let vals: Vec<f64> = pts.iter().map(|p| p.median_ns).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(pts.iter().map(|p| p.noise())),
        results: pts.len(),
        detail: None,
    })
}

fn local_lat(d: &RunData) -> Option<Metric> {
    let cells = lat_matrix(d);
    let mut pts: Vec<&LatResult> =
        cells.iter().filter(|((c, m), _)| c == m).map(|(_, p)| *p).collect();
    if pts.is_empty() {
        pts = local_lat_points(d);
    }
    lat_metric(&pts)
}

/// Without a matrix, the `point` chases with CPU and memory on one node,
/// each the most trustworthy measurement of its quantity.
pub fn local_lat_points(d: &RunData) -> Vec<&LatResult> {
    local_lat_points_taken(d).into_iter().map(|t| t.chosen).collect()
}

/// [`local_lat_points`] with, for each, what it was chosen among.
pub fn local_lat_points_taken(d: &RunData) -> Vec<Taken<'_, LatResult>> {
    d.chase_mode(lat::Mode::Point)
        .filter(|l| l.median_ns.is_finite() && l.mem_node.is_some())
        .filter(|l| l.cpu_node == l.mem_node)
        .map(|p| crate::trust::trusted_chase(d, p))
        .collect()
}

fn remote_lat(d: &RunData) -> Option<Metric> {
    let cells = lat_matrix(d);
    let pts: Vec<&LatResult> = cells.iter().filter(|((c, m), _)| c != m).map(|(_, p)| *p).collect();
    lat_metric(&pts)
}

/// The loaded-latency point with the highest achieved load.
pub fn peak_loaded(d: &RunData) -> Option<&LoadedPoint> {
    d.loaded
        .iter()
        .filter(|l| l.load_gbs.is_finite() && l.latency().is_some())
        .max_by(|a, b| a.load_gbs.total_cmp(&b.load_gbs))
}

fn loaded_peak(d: &RunData) -> Option<Metric> {
    let p = peak_loaded(d)?;
    Some(Metric {
        value: p.latency()?,
        noise_pct: p.noise().unwrap_or(0.0),
        results: 1,
        detail: measured(p.load_gbs).map(|g| format!("at {g:.1} GB/s")),
    })
}

/// The bandwidth results a bandwidth metric is made of (empty for a
/// latency metric): what its figure is drawn from, so that a flag on any
/// of them reaches the headline.
pub fn bw_parts(d: &RunData, key: MetricKey) -> Vec<&BwResult> {
    match key {
        MetricKey::LocalBw => local_points(d).1,
        MetricKey::GlobalBw => best_of_mode(d, bw::Mode::Global).into_iter().collect(),
        MetricKey::InterleaveBw => best_of_mode(d, bw::Mode::Interleave).into_iter().collect(),
        MetricKey::CrossBw => {
            bw_matrix(d).1.into_iter().filter(|((c, m), _)| c != m).map(|(_, p)| p).collect()
        }
        _ => Vec::new(),
    }
}

/// The chases a latency metric is made of, as [`metrics`] picks them
/// (empty for a bandwidth metric and for the loaded latency, which is
/// [`peak_loaded`]).
pub fn lat_parts(d: &RunData, key: MetricKey) -> Vec<&LatResult> {
    let cells = lat_matrix(d);
    match key {
        MetricKey::LocalLat => {
            let diag: Vec<&LatResult> =
                cells.iter().filter(|((c, m), _)| c == m).map(|(_, p)| *p).collect();
            if !diag.is_empty() {
                return diag;
            }
            local_lat_points(d)
        }
        MetricKey::RemoteLat => {
            cells.iter().filter(|((c, m), _)| c != m).map(|(_, p)| *p).collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
    use serde_json::json;

    /// The records `feeds_headline` leaves out change no headline metric
    /// of the fixture's runs (a default run: every kind and mode), so the
    /// fleet's shortcut cannot drift from the metrics.
    #[test]
    fn the_records_left_out_feed_no_headline_metric() {
        let runs = crate::data::export::runs_of_export(include_str!(
            "../../report/tests/fixtures/synthetic-export.json"
        ));
        for r in &runs {
            let all = RunData::of_records(r.results.iter().map(|x| &x.record));
            let kept = RunData::of_records(
                r.results.iter().map(|x| &x.record).filter(|x| feeds_headline(x)),
            );
            assert_eq!(metrics(&all), metrics(&kept), "run {}", r.summary.uuid);
        }
        // The first run is a default run: every headline metric, and a
        // third of its records (findings, core-to-core pairs, the sweep's
        // cache-stride points, summaries) left out; the per-CPU and DRAM
        // sweep chases are read, as a headline may take one of them.
        let r = &runs[0];
        let all = RunData::of_records(r.results.iter().map(|x| &x.record));
        assert_eq!(metrics(&all).len(), MetricKey::ALL.len());
        let left_out = r.results.iter().filter(|x| !feeds_headline(&x.record)).count();
        assert!(left_out * 3 >= r.results.len(), "{left_out} of {}", r.results.len());
    }

    #[test]
    fn local_bandwidth_is_the_mean_of_per_node_triad_best() {
        let d = data(vec![
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "cpu_node": 0, "mem_node": 0, "best_gbs": 100.0, "spread_pct": 3.078}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "cpu_node": 1, "mem_node": 1, "best_gbs": 90.0, "spread_pct": 6.156}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "copy", "cpu_node": 1, "mem_node": 1, "best_gbs": 500.0}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "cpu_node": 1, "mem_node": 0, "best_gbs": 1.0}),
            ),
        ]);
        let m = metrics(&d);
        let l = &m[&MetricKey::LocalBw];
        assert_eq!(l.value, 95.0);
        assert_eq!(l.results, 2);
        assert!((l.noise_pct - 2.0).abs() < 1e-9);
        assert_eq!(l.detail.as_deref(), Some("triad"));
        assert!(!m.contains_key(&MetricKey::GlobalBw));
    }

    #[test]
    fn local_bandwidth_falls_back_to_the_matrix_diagonal() {
        let cell = |c: u32, m: u32, g: f64| {
            rec(
                "bw",
                json!({"mode": "matrix", "kernel": "read", "cpu_node": c, "mem_node": m, "best_gbs": g}),
            )
        };
        let d = data(vec![cell(0, 0, 80.0), cell(0, 1, 40.0), cell(1, 0, 30.0), cell(1, 1, 70.0)]);
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalBw].value, 75.0);
        assert_eq!(m[&MetricKey::CrossBw].value, 35.0);
        assert_eq!(m[&MetricKey::CrossBw].results, 2);
    }

    #[test]
    fn latency_metrics_split_the_matrix() {
        let cell = |c: u32, m: u32, ns: f64| {
            rec("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns}))
        };
        let d = data(vec![
            cell(0, 0, 80.0),
            cell(0, 1, 140.0),
            cell(1, 0, 150.0),
            cell(1, 1, 90.0),
            rec(
                "lat",
                json!({"mode": "loaded", "delay": 0, "latency_ns": 250.0, "load_gbs": 180.0, "spread_pct": 3.0}),
            ),
            rec(
                "lat",
                json!({"mode": "loaded", "delay": 100, "latency_ns": 120.0, "load_gbs": 60.0}),
            ),
        ]);
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalLat].value, 85.0);
        assert_eq!(m[&MetricKey::RemoteLat].value, 145.0);
        assert_eq!(m[&MetricKey::LoadedLatPeak].value, 250.0);
        assert_eq!(m[&MetricKey::LoadedLatPeak].detail.as_deref(), Some("at 180.0 GB/s"));
    }

    #[test]
    fn a_single_node_run_has_no_remote_figures() {
        let d = data(vec![
            rec(
                "bw",
                json!({"mode": "matrix", "kernel": "triad", "cpu_node": 0, "mem_node": 0, "best_gbs": 30.0}),
            ),
            rec("lat", json!({"mode": "point", "cpu_node": 0, "mem_node": 0, "median_ns": 95.0})),
        ]);
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalLat].value, 95.0);
        assert!(!m.contains_key(&MetricKey::RemoteLat));
        assert!(!m.contains_key(&MetricKey::CrossBw));
    }
}
