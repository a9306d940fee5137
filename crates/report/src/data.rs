//! What a report reads from one run: the typed views of its stored results
//! (made by `results::view`, which reads today's records and the first
//! version's payloads alike), grouped by kind and mode.

use results::view::Stored;
use serde_json::Value;
use store::LoadedRun;

pub use results::view::{
    int, noise_pct, num, scalar_text, text, Bw, ExecPolicy, Finding, Lat, LatGroup, PerCpuSummary,
    Placement, Plateau, SweepSummary,
};

/// Everything a report reads from one run, by mode.
#[derive(Debug, Clone, Default)]
pub struct RunData {
    pub bw: Vec<Bw>,
    pub lat: Vec<Lat>,
    pub findings: Vec<Finding>,
    pub exec: Vec<ExecPolicy>,
    /// `lat-summary` results of mode `per-cpu`.
    pub per_cpu_summaries: Vec<PerCpuSummary>,
    /// `lat-summary` results of mode `sweep`.
    pub sweep_summaries: Vec<SweepSummary>,
    /// Payloads of kinds this version does not know.
    pub other: Vec<(String, Value)>,
}

impl RunData {
    pub fn of(run: &LoadedRun) -> RunData {
        RunData::of_results(run.results.iter())
    }

    /// [`RunData::of`] from some of a run's results.
    pub fn of_results<'a>(results: impl Iterator<Item = &'a store::StoredResult>) -> RunData {
        let mut d = RunData::default();
        for r in results {
            match results::view::read(r.kind.as_str(), &r.payload) {
                Stored::Bw(b) => d.bw.push(b),
                Stored::Lat(l) => d.lat.push(l),
                Stored::Finding(f) => d.findings.push(f),
                Stored::Exec(v) => d.exec.push(v),
                Stored::PerCpu(s) => d.per_cpu_summaries.push(s),
                Stored::Sweep(s) => d.sweep_summaries.push(s),
                Stored::Other => d.other.push((r.kind.to_string(), r.payload.clone())),
            }
        }
        d.findings.sort_by_key(Finding::rank);
        d
    }

    pub fn bw_mode<'a>(&'a self, mode: &'a str) -> impl Iterator<Item = &'a Bw> + 'a {
        self.bw.iter().filter(move |b| b.mode == mode)
    }

    pub fn lat_mode<'a>(&'a self, mode: &'a str) -> impl Iterator<Item = &'a Lat> + 'a {
        self.lat.iter().filter(move |l| l.mode == mode)
    }
}

/// The kernel a headline figure uses among `points`: `triad` when present
/// (STREAM's headline), else the most frequent kernel (first seen on ties).
pub fn pick_kernel<'a>(points: impl IntoIterator<Item = &'a Bw>) -> Option<String> {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for p in points {
        if p.best_gbs.is_none() {
            continue;
        }
        if p.kernel == "triad" {
            return Some("triad".into());
        }
        match counts.iter_mut().find(|(k, _)| *k == p.kernel) {
            Some(c) => c.1 += 1,
            None => counts.push((p.kernel.clone(), 1)),
        }
    }
    let max = counts.iter().map(|c| c.1).max()?;
    counts.into_iter().find(|c| c.1 == max).map(|c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn triad_is_the_headline_kernel() {
        let b = |k: &str| Bw::of(&json!({"kernel": k, "best_gbs": 1.0}));
        let pts = [b("copy"), b("read"), b("read"), b("triad")];
        assert_eq!(pick_kernel(&pts).as_deref(), Some("triad"));
        assert_eq!(pick_kernel(&pts[..3]).as_deref(), Some("read"));
        assert_eq!(pick_kernel(&pts[..0]), None);
    }
}
