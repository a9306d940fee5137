//! The figures the settings audit cites, drawn from a run's records:
//! remote/local latency and bandwidth ratios, the best local bandwidth per
//! node, interleaved bandwidth, latency levels of the per-CPU sweep and the
//! prefetch check. `audit::Evidence` holds them with where they come from;
//! the rules that judge them are the audit's.

use std::collections::BTreeMap;

use results::bw::{self, BwResult};
use results::lat::{self, Lat, LatSummary, PrefetchCheck};
use results::stats::{mean, measured};
use results::Record;

/// The relative gap between neighbouring per-CPU latencies that starts a
/// new latency level (15%).
pub const LATENCY_LEVEL_GAP: f64 = 0.15;

/// What a run's records say for the audit; each figure `None` (or empty)
/// when it was not measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Mean remote idle latency / mean local idle latency.
    pub remote_local_latency_ratio: Option<f64>,
    /// Worst remote pair latency / its CPU node's local latency.
    pub worst_remote_local_latency_ratio: Option<f64>,
    /// Mean remote bandwidth / mean local bandwidth (below 1).
    pub remote_local_bandwidth_ratio: Option<f64>,
    /// Best local bandwidth per node (CPUs and memory on that node), GB/s.
    pub local_best_gbs_per_node: BTreeMap<u32, f64>,
    /// Best interleaved bandwidth, GB/s.
    pub interleave_gbs: Option<f64>,
    /// Interleaved bandwidth / best local bandwidth.
    pub interleave_local_ratio: Option<f64>,
    /// Distinct latency levels from CPUs to memory (per-CPU sweep).
    pub latency_groups: Option<u32>,
    /// The last prefetch check of `lat`.
    pub prefetch: Option<PrefetchCheck>,
}

/// The figures of a run's records. Latency ratios use the `matrix` and
/// `point` chases; latency levels the `per-cpu` chases; bandwidth the best
/// figure (else the median) per (CPU node, memory node) pair over all
/// kernels, and `interleave` results for the interleave figure. Results
/// Ctrl-C cut short or whose answers failed validation are no evidence;
/// figures not measured are skipped.
pub fn figures<'a>(records: impl IntoIterator<Item = &'a Record> + Clone) -> Figures {
    let mut local_lat: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let mut remote_lat: Vec<(u32, f64)> = Vec::new();
    let mut per_cpu_lat: Vec<f64> = Vec::new();
    let mut bw_pair: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    let mut interleave: Option<f64> = None;
    for r in records.clone() {
        match r {
            Record::Lat(l) => {
                // idle node-to-node latency only: not sweeps (cache
                // sizes), loaded latency or core-to-core
                let Lat::Chase(l) = l.as_ref() else { continue };
                let Some(ns) = measured(l.median_ns) else { continue };
                match l.mode {
                    lat::Mode::PerCpu => per_cpu_lat.push(ns),
                    lat::Mode::Matrix | lat::Mode::Point => match (l.cpu_node, l.mem_node) {
                        (Some(c), Some(m)) if c == m => local_lat.entry(c).or_default().push(ns),
                        (Some(c), Some(_)) => remote_lat.push((c, ns)),
                        _ => {}
                    },
                    _ => {}
                }
            }
            Record::Bw(b) if !b.interrupted && b.validated => {
                let b: &BwResult = b;
                let Some(gbs) = measured(b.best_gbs).or(measured(b.median_gbs)) else {
                    continue;
                };
                if b.mode == bw::Mode::Interleave {
                    interleave = Some(interleave.map_or(gbs, |i: f64| i.max(gbs)));
                    continue;
                }
                if let (Some(c), Some(m)) = (b.cpu_node, b.mem_node) {
                    let e = bw_pair.entry((c, m)).or_insert(0.0);
                    *e = e.max(gbs);
                }
            }
            _ => {}
        }
    }
    let mut f = Figures::default();
    let locals: Vec<f64> = local_lat.values().flatten().copied().collect();
    let remotes: Vec<f64> = remote_lat.iter().map(|(_, ns)| *ns).collect();
    if let (Some(l), Some(r)) = (mean(&locals), mean(&remotes)) {
        f.remote_local_latency_ratio = Some(r / l);
        f.worst_remote_local_latency_ratio = remote_lat
            .iter()
            .filter_map(|(c, ns)| Some(ns / mean(local_lat.get(c)?)?))
            .max_by(|a, b| a.total_cmp(b));
    }
    let local_bw: Vec<f64> = bw_pair.iter().filter(|((c, m), _)| c == m).map(|(_, g)| *g).collect();
    let remote_bw: Vec<f64> =
        bw_pair.iter().filter(|((c, m), _)| c != m).map(|(_, g)| *g).collect();
    if let (Some(l), Some(r)) = (mean(&local_bw), mean(&remote_bw)) {
        f.remote_local_bandwidth_ratio = Some(r / l);
    }
    f.local_best_gbs_per_node =
        bw_pair.iter().filter(|((c, m), _)| c == m).map(|((c, _), g)| (*c, *g)).collect();
    f.interleave_gbs = interleave;
    let best_local =
        local_bw.iter().copied().fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    if let (Some(i), Some(l)) = (interleave, best_local) {
        f.interleave_local_ratio = Some(i / l);
    }
    if !per_cpu_lat.is_empty() {
        f.latency_groups = Some(count_groups(&per_cpu_lat, LATENCY_LEVEL_GAP));
    }
    f.prefetch = prefetch_check(records);
    f
}

/// The last prefetch check among a run's records, if any.
pub fn prefetch_check<'a>(records: impl IntoIterator<Item = &'a Record>) -> Option<PrefetchCheck> {
    records
        .into_iter()
        .filter_map(|r| match r {
            Record::LatSummary(s) => match s.as_ref() {
                LatSummary::PrefetchCheck(c) => Some(c.clone()),
                _ => None,
            },
            _ => None,
        })
        .last()
}

/// Groups sorted values whose neighbours differ by more than `gap` (relative).
pub fn count_groups(values: &[f64], gap: f64) -> u32 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
    if v.is_empty() {
        return 0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    1 + v.windows(2).filter(|w| w[1] > w[0] * (1.0 + gap)).count() as u32
}
