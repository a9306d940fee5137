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

use serde::Serialize;

use crate::data::{pick_kernel, Bw, Lat, RunData};

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

    /// The stable name used in JSON.
    pub fn id(self) -> &'static str {
        match self {
            MetricKey::LocalBw => "local_bw_gbs",
            MetricKey::GlobalBw => "global_bw_gbs",
            MetricKey::InterleaveBw => "interleave_bw_gbs",
            MetricKey::CrossBw => "cross_node_bw_gbs",
            MetricKey::LocalLat => "local_lat_ns",
            MetricKey::RemoteLat => "remote_lat_ns",
            MetricKey::LoadedLatPeak => "loaded_lat_at_peak_ns",
        }
    }

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
    /// Robust CV % (see [`crate::data::noise_pct`]); 0 when the results
    /// gave no spread.
    pub noise_pct: f64,
    /// How many results it was computed from.
    pub results: usize,
    /// The kernel for bandwidth metrics, the load for loaded latency.
    pub detail: Option<String>,
}

/// The headline metrics of a run (absent when not measured).
/// Whether a stored result can feed a headline metric: [`metrics`] reads
/// bandwidth results and the latency results of the `matrix`, `point` and
/// `loaded` modes only. A caller that needs only the headline figures (the
/// fleet, over thousands of runs) leaves the rest unread: latency sweeps,
/// per-CPU and core-to-core latency, audit findings, most of a run's bytes.
pub fn feeds_headline(kind: &str, payload: &serde_json::Value) -> bool {
    match kind {
        "bw" => true,
        "lat" => matches!(
            payload.get("mode").and_then(serde_json::Value::as_str),
            Some("matrix" | "point" | "loaded")
        ),
        _ => false,
    }
}

pub fn metrics(d: &RunData) -> BTreeMap<MetricKey, Metric> {
    let mut m = BTreeMap::new();
    for key in MetricKey::ALL {
        let v = match key {
            MetricKey::LocalBw => local_bw(d),
            MetricKey::GlobalBw => single_bw(d, "global"),
            MetricKey::InterleaveBw => single_bw(d, "interleave"),
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

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Per CPU node, the best point of `kernel` with memory on the same node.
pub(crate) fn local_points(d: &RunData) -> (Option<String>, Vec<&Bw>) {
    let is_local =
        |b: &&Bw| b.best_gbs.is_some() && (b.mem_node.is_none() || b.mem_node == b.cpu_node);
    let mut pts: Vec<&Bw> = d.bw_mode("local").filter(is_local).collect();
    if pts.is_empty() {
        pts = d
            .bw_mode("matrix")
            .filter(|b| b.best_gbs.is_some() && b.mem_node == b.cpu_node)
            .collect();
    }
    let Some(kernel) = pick_kernel(pts.iter().copied()) else { return (None, vec![]) };
    let mut best: BTreeMap<i64, &Bw> = BTreeMap::new();
    for p in pts.into_iter().filter(|p| p.kernel == kernel) {
        let node = p.cpu_node.unwrap_or(-1);
        match best.get(&node) {
            Some(b) if b.best_gbs >= p.best_gbs => {}
            _ => {
                best.insert(node, p);
            }
        }
    }
    (Some(kernel), best.into_values().collect())
}

fn local_bw(d: &RunData) -> Option<Metric> {
    let (kernel, pts) = local_points(d);
    let vals: Vec<f64> = pts.iter().filter_map(|p| p.best_gbs).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(pts.iter().map(|p| p.noise_pct)),
        results: pts.len(),
        detail: kernel,
    })
}

/// The best point of the headline kernel in a whole-machine mode.
pub(crate) fn best_of_mode<'a>(d: &'a RunData, mode: &'a str) -> Option<&'a Bw> {
    let kernel = pick_kernel(d.bw_mode(mode))?;
    d.bw_mode(mode)
        .filter(|b| b.kernel == kernel && b.best_gbs.is_some())
        .max_by(|a, b| a.best_gbs.partial_cmp(&b.best_gbs).unwrap_or(std::cmp::Ordering::Equal))
}

fn single_bw(d: &RunData, mode: &str) -> Option<Metric> {
    let p = best_of_mode(d, mode)?;
    Some(Metric {
        value: p.best_gbs?,
        noise_pct: p.noise_pct.unwrap_or(0.0),
        results: 1,
        detail: Some(p.kernel.clone()),
    })
}

/// Matrix cells of the headline kernel: `(cpu_node, mem_node) -> point`.
pub(crate) fn bw_matrix(d: &RunData) -> (Option<String>, BTreeMap<(i64, i64), &Bw>) {
    let Some(kernel) = pick_kernel(d.bw_mode("matrix")) else { return (None, BTreeMap::new()) };
    let mut cells = BTreeMap::new();
    for p in d.bw_mode("matrix").filter(|b| b.kernel == kernel && b.best_gbs.is_some()) {
        if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
            cells.insert((c, m), p);
        }
    }
    (Some(kernel), cells)
}

fn cross_bw(d: &RunData) -> Option<Metric> {
    let (kernel, cells) = bw_matrix(d);
    let off: Vec<&&Bw> = cells.iter().filter(|((c, m), _)| c != m).map(|(_, p)| p).collect();
    let vals: Vec<f64> = off.iter().filter_map(|p| p.best_gbs).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(off.iter().map(|p| p.noise_pct)),
        results: off.len(),
        detail: kernel,
    })
}

/// Latency matrix cells: `(cpu_node, mem_node) -> point`.
pub(crate) fn lat_matrix(d: &RunData) -> BTreeMap<(i64, i64), &Lat> {
    let mut cells = BTreeMap::new();
    for p in d.lat_mode("matrix").filter(|l| l.median_ns.is_some()) {
        if let (Some(c), Some(m)) = (p.cpu_node, p.mem_node) {
            cells.insert((c, m), p);
        }
    }
    cells
}

fn lat_metric(pts: &[&Lat]) -> Option<Metric> {
    let vals: Vec<f64> = pts.iter().filter_map(|p| p.median_ns).collect();
    Some(Metric {
        value: mean(&vals)?,
        noise_pct: noise_of(pts.iter().map(|p| p.noise_pct)),
        results: pts.len(),
        detail: None,
    })
}

fn local_lat(d: &RunData) -> Option<Metric> {
    let cells = lat_matrix(d);
    let mut pts: Vec<&Lat> = cells.iter().filter(|((c, m), _)| c == m).map(|(_, p)| *p).collect();
    if pts.is_empty() {
        pts = d
            .lat_mode("point")
            .filter(|l| l.median_ns.is_some() && l.mem_node.is_some() && l.cpu_node == l.mem_node)
            .collect();
    }
    lat_metric(&pts)
}

fn remote_lat(d: &RunData) -> Option<Metric> {
    let cells = lat_matrix(d);
    let pts: Vec<&Lat> = cells.iter().filter(|((c, m), _)| c != m).map(|(_, p)| *p).collect();
    lat_metric(&pts)
}

/// The loaded-latency point with the highest achieved load.
pub(crate) fn peak_loaded(d: &RunData) -> Option<&Lat> {
    d.lat_mode("loaded")
        .filter(|l| l.load_gbs.is_some() && l.loaded_ns().is_some())
        .max_by(|a, b| a.load_gbs.partial_cmp(&b.load_gbs).unwrap_or(std::cmp::Ordering::Equal))
}

fn loaded_peak(d: &RunData) -> Option<Metric> {
    let p = peak_loaded(d)?;
    Some(Metric {
        value: p.loaded_ns()?,
        noise_pct: p.noise_pct.unwrap_or(0.0),
        results: 1,
        detail: p.load_gbs.map(|g| format!("at {g:.1} GB/s")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Bw, Lat};
    use serde_json::json;

    fn data(bw: Vec<serde_json::Value>, lat: Vec<serde_json::Value>) -> RunData {
        RunData {
            bw: bw.iter().map(Bw::of).collect(),
            lat: lat.iter().map(Lat::of).collect(),
            ..Default::default()
        }
    }

    /// The results `feeds_headline` leaves out change no headline metric of
    /// the fixture's runs (a default run: every kind and mode), so the
    /// fleet's shortcut cannot drift from the metrics.
    #[test]
    fn the_results_left_out_feed_no_headline_metric() {
        let doc = store::ExportDoc::from_json(
            include_str!("../tests/fixtures/synthetic-export.json"),
            "fixture",
        )
        .unwrap();
        for r in &doc.runs {
            let all = RunData::of_results(r.results.iter());
            let kept = RunData::of_results(
                r.results.iter().filter(|x| feeds_headline(x.kind.as_str(), &x.payload)),
            );
            assert_eq!(metrics(&all), metrics(&kept), "run {}", r.uuid);
        }
        // The first run is a default run: every headline metric, most of
        // its results left out.
        let r = &doc.runs[0];
        assert_eq!(metrics(&RunData::of_results(r.results.iter())).len(), MetricKey::ALL.len());
        let left_out =
            r.results.iter().filter(|x| !feeds_headline(x.kind.as_str(), &x.payload)).count();
        assert!(left_out > r.results.len() / 2, "{left_out} of {}", r.results.len());
    }

    #[test]
    fn local_bandwidth_is_the_mean_of_per_node_triad_best() {
        let d = data(
            vec![
                json!({"mode": "local", "kernel": "triad", "cpu_node": 0, "mem_node": 0, "best_gbs": 100.0, "spread_pct": 3.078}),
                json!({"mode": "local", "kernel": "triad", "cpu_node": 1, "mem_node": 1, "best_gbs": 90.0, "spread_pct": 6.156}),
                json!({"mode": "local", "kernel": "copy", "cpu_node": 1, "mem_node": 1, "best_gbs": 500.0}),
                json!({"mode": "local", "kernel": "triad", "cpu_node": 1, "mem_node": 0, "best_gbs": 1.0}),
            ],
            vec![],
        );
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
        let d = data(
            vec![
                json!({"mode": "matrix", "kernel": "read", "cpu_node": 0, "mem_node": 0, "best_gbs": 80.0}),
                json!({"mode": "matrix", "kernel": "read", "cpu_node": 0, "mem_node": 1, "best_gbs": 40.0}),
                json!({"mode": "matrix", "kernel": "read", "cpu_node": 1, "mem_node": 0, "best_gbs": 30.0}),
                json!({"mode": "matrix", "kernel": "read", "cpu_node": 1, "mem_node": 1, "best_gbs": 70.0}),
            ],
            vec![],
        );
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalBw].value, 75.0);
        assert_eq!(m[&MetricKey::CrossBw].value, 35.0);
        assert_eq!(m[&MetricKey::CrossBw].results, 2);
    }

    #[test]
    fn latency_metrics_split_the_matrix() {
        let cell = |c: i64, m: i64, ns: f64| json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns});
        let d = data(
            vec![],
            vec![
                cell(0, 0, 80.0),
                cell(0, 1, 140.0),
                cell(1, 0, 150.0),
                cell(1, 1, 90.0),
                json!({"mode": "loaded", "delay": 0, "latency_ns": 250.0, "load_gbs": 180.0, "spread_pct": 3.0}),
                json!({"mode": "loaded", "delay": 100, "latency_ns": 120.0, "load_gbs": 60.0}),
            ],
        );
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalLat].value, 85.0);
        assert_eq!(m[&MetricKey::RemoteLat].value, 145.0);
        assert_eq!(m[&MetricKey::LoadedLatPeak].value, 250.0);
        assert_eq!(m[&MetricKey::LoadedLatPeak].detail.as_deref(), Some("at 180.0 GB/s"));
    }

    #[test]
    fn a_single_node_run_has_no_remote_figures() {
        let d = data(
            vec![
                json!({"mode": "matrix", "kernel": "triad", "cpu_node": 0, "mem_node": 0, "best_gbs": 30.0}),
            ],
            vec![json!({"mode": "point", "cpu_node": 0, "mem_node": 0, "median_ns": 95.0})],
        );
        let m = metrics(&d);
        assert_eq!(m[&MetricKey::LocalLat].value, 95.0);
        assert!(!m.contains_key(&MetricKey::RemoteLat));
        assert!(!m.contains_key(&MetricKey::CrossBw));
    }
}
