//! Comparing runs against a baseline, metric by metric, with a verdict that
//! takes the noise both runs measured into account
//! ([`results::stats::verdict`]).

use results::stats::{change_pct, verdict, Verdict};
use serde::Serialize;
use store::{LoadedRun, RunId, RunStatus};

use crate::data::RunData;
use crate::doc::{Align, Table};
use crate::fmt::{num, signed_pct};
use crate::metrics::{metrics, MetricKey};

/// A change smaller than this is always within noise, however quiet the
/// runs were (percent).
pub const FLOOR_PCT: f64 = 1.0;

/// One compared run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    pub id: RunId,
    pub uuid: String,
    pub label: Option<String>,
    /// The label, or `run N`.
    pub name: String,
    pub machine: String,
    pub machine_fingerprint: String,
    pub started: String,
    pub status: RunStatus,
    pub complete: bool,
}

impl RunInfo {
    pub fn of(run: &LoadedRun) -> RunInfo {
        let s = &run.summary;
        RunInfo {
            id: s.id,
            uuid: s.uuid.clone(),
            label: s.label.clone(),
            name: run.display_name(),
            machine: s.machine.clone(),
            machine_fingerprint: s.machine_fingerprint.clone(),
            started: s.started.clone(),
            status: s.status,
            complete: s.complete,
        }
    }
}

/// One metric across the runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricRow {
    /// Stable id, e.g. `local_bw_gbs`.
    pub metric: &'static str,
    pub name: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// One cell per run, in the order of [`Comparison::runs`].
    pub runs: Vec<Cell>,
}

/// A metric in one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub run: RunId,
    /// `None` when the run did not measure it.
    pub value: Option<f64>,
    pub noise_pct: Option<f64>,
    /// Change against the baseline in percent (`None` for the baseline and
    /// when either side is missing).
    pub change_pct: Option<f64>,
    /// `better`, `worse` or `within-noise` against the baseline.
    pub verdict: Option<Verdict>,
    /// Half-width of the band a change must leave to count, in percent.
    pub noise_band_pct: Option<f64>,
}

/// Runs side by side against a baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Index of the baseline in `runs`.
    pub baseline: usize,
    pub runs: Vec<RunInfo>,
    pub metrics: Vec<MetricRow>,
    /// See [`FLOOR_PCT`].
    pub floor_pct: f64,
    /// True when the runs come from more than one machine.
    pub across_machines: bool,
}

impl Comparison {
    /// Compares `runs` against `runs[baseline]`.
    ///
    /// # Panics
    /// When `baseline` is out of range.
    pub fn build(runs: &[LoadedRun], baseline: usize) -> Comparison {
        assert!(baseline < runs.len(), "baseline index out of range");
        let all: Vec<_> = runs.iter().map(|r| metrics(&RunData::of(r))).collect();
        let base = &all[baseline];
        let rows = MetricKey::ALL
            .iter()
            .map(|&key| {
                let b = base.get(&key);
                let cells = runs
                    .iter()
                    .zip(&all)
                    .enumerate()
                    .map(|(i, (run, m))| {
                        let v = m.get(&key);
                        let mut cell = Cell {
                            run: run.summary.id,
                            value: v.map(|x| x.value),
                            noise_pct: v.map(|x| x.noise_pct),
                            change_pct: None,
                            verdict: None,
                            noise_band_pct: None,
                        };
                        if let (Some(b), Some(v), false) = (b, v, i == baseline) {
                            cell.change_pct = Some(change_pct(b.value, v.value));
                            cell.verdict = Some(verdict(
                                b.value,
                                b.noise_pct,
                                v.value,
                                v.noise_pct,
                                key.higher_is_better(),
                                FLOOR_PCT,
                            ));
                            cell.noise_band_pct = Some(
                                (3.0 * (b.noise_pct.powi(2) + v.noise_pct.powi(2)).sqrt())
                                    .max(FLOOR_PCT),
                            );
                        }
                        cell
                    })
                    .collect();
                MetricRow {
                    metric: key.id(),
                    name: key.name(),
                    unit: key.unit(),
                    higher_is_better: key.higher_is_better(),
                    runs: cells,
                }
            })
            .collect();
        let infos: Vec<RunInfo> = runs.iter().map(RunInfo::of).collect();
        let across_machines =
            infos.iter().any(|r| r.machine_fingerprint != infos[0].machine_fingerprint);
        Comparison { baseline, runs: infos, metrics: rows, floor_pct: FLOOR_PCT, across_machines }
    }

    /// The compared runs: id, name, machine, start, status.
    pub fn runs_table(&self) -> Table {
        let mut t = Table::with_header(&["Run", "Label", "Machine", "Started", "Status"]);
        t.align = vec![Align::Right, Align::Left, Align::Left, Align::Left, Align::Left];
        for (i, r) in self.runs.iter().enumerate() {
            let base = if i == self.baseline { " (baseline)" } else { "" };
            t.push(vec![
                r.id.to_string(),
                format!("{}{base}", r.label.as_deref().unwrap_or("-")),
                r.machine.clone(),
                r.started.clone(),
                r.status.to_string(),
            ]);
        }
        t
    }

    /// The comparison table: metrics as rows, runs as columns, each cell
    /// the value and, for the other runs, the change and verdict.
    pub fn table(&self) -> Table {
        let mut header = vec!["Metric".to_string()];
        for (i, r) in self.runs.iter().enumerate() {
            let base = if i == self.baseline { ", baseline" } else { "" };
            header.push(format!("{} [run {}{base}]", r.name, r.id));
        }
        let mut t = Table::new(header);
        for m in &self.metrics {
            let mut row = vec![format!("{} ({})", m.name, m.unit)];
            for c in &m.runs {
                row.push(cell_text(c, m.unit));
            }
            t.rows.push(row);
        }
        t
    }

    /// One line per metric saying, for each run, the change against the
    /// baseline and whether it is beyond noise.
    pub fn verdict_lines(&self) -> Vec<String> {
        let base = &self.runs[self.baseline];
        let mut out = Vec::new();
        for m in &self.metrics {
            let dir = if m.higher_is_better { "higher is better" } else { "lower is better" };
            let b = &m.runs[self.baseline];
            let Some(bv) = b.value else {
                out.push(format!("{}: not measured in the baseline ({}).", m.name, base.name));
                continue;
            };
            let mut parts = Vec::new();
            for (i, c) in m.runs.iter().enumerate() {
                if i == self.baseline {
                    continue;
                }
                let name = &self.runs[i].name;
                match (c.change_pct, c.verdict, c.noise_band_pct) {
                    (Some(ch), Some(v), Some(band)) => parts.push(format!(
                        "{name} {} {} (noise band ±{band:.1}%)",
                        signed_pct(ch),
                        verdict_word(v)
                    )),
                    _ => parts.push(format!("{name} not measured")),
                }
            }
            out.push(format!(
                "{} ({}, {dir}; baseline {} {}): {}.",
                m.name,
                m.unit,
                num(bv, m.unit),
                m.unit,
                if parts.is_empty() { "no other run".to_string() } else { parts.join("; ") }
            ));
        }
        out
    }
}

pub(crate) fn verdict_word(v: Verdict) -> &'static str {
    match v {
        Verdict::Better => "better",
        Verdict::Worse => "worse",
        Verdict::WithinNoise => "within noise",
    }
}

fn cell_text(c: &Cell, unit: &str) -> String {
    match (c.value, c.change_pct, c.verdict) {
        (None, ..) => "-".into(),
        (Some(v), Some(ch), Some(verdict)) => {
            format!("{} ({}, {})", num(v, unit), signed_pct(ch), verdict_word(verdict))
        }
        (Some(v), ..) => num(v, unit),
    }
}
