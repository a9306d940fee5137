//! CSV export of results: one row per result, a fixed set of columns
//! (the fields bandwidth and latency results share) filled from the typed
//! record, the share of pages on target, and the result as stored in a
//! last `payload` column as JSON.

use results::lat::{Lat, LatSummary};
use results::Record;
use store::{LoadedRun, RunId, Store};

/// The columns after `run_id,run_uuid,label,machine,seq,kind`.
pub const FIELDS: [&str; 27] = [
    "mode",
    "kernel",
    "threads",
    "cpu",
    "cpu_node",
    "mem_node",
    "mem_nodes",
    "size_bytes",
    "page_size",
    "best_gbs",
    "median_gbs",
    "min_gbs",
    "max_gbs",
    "median_ns",
    "p90_ns",
    "p99_ns",
    "spread_pct",
    "delay",
    "latency_ns",
    "load_gbs",
    "cpu_a",
    "cpu_b",
    "relation",
    "isa",
    "policy",
    "id",
    "severity",
];

/// A figure as JSON writes it (`101.5`, `1.0`); empty when not measured.
fn figure(x: f64) -> String {
    serde_json::Number::from_f64(x).map(|n| n.to_string()).unwrap_or_default()
}

/// The cells of [`FIELDS`] a record fills, by column name.
fn columns(r: &Record) -> Vec<(&'static str, String)> {
    let node = |n: Option<u32>| n.map(|n| n.to_string()).unwrap_or_default();
    let text = |s: &str| s.to_string();
    match r {
        Record::Bw(b) => vec![
            ("mode", text(b.mode.name())),
            ("kernel", text(b.kernel.name())),
            ("threads", b.threads.to_string()),
            ("cpu_node", node(b.cpu_node)),
            ("mem_node", node(b.mem_node)),
            ("mem_nodes", b.mem_nodes.to_string()),
            ("best_gbs", figure(b.best_gbs)),
            ("median_gbs", figure(b.median_gbs)),
            ("min_gbs", figure(b.min_gbs)),
            ("max_gbs", figure(b.max_gbs)),
            ("spread_pct", figure(b.spread_pct)),
            ("isa", text(b.isa.name())),
            ("policy", text(b.policy.name())),
        ],
        Record::Lat(l) => match l.as_ref() {
            Lat::Chase(c) => vec![
                ("mode", text(c.mode.name())),
                ("cpu", c.cpu.to_string()),
                ("cpu_node", node(c.cpu_node)),
                ("mem_node", node(c.mem_node)),
                ("size_bytes", c.size_bytes.to_string()),
                ("page_size", c.page_size.clone()),
                ("median_ns", figure(c.median_ns)),
                ("p90_ns", figure(c.p90_ns)),
                ("p99_ns", figure(c.p99_ns)),
                ("spread_pct", figure(c.spread_pct)),
            ],
            Lat::Loaded(p) => vec![
                ("mode", text(p.mode.name())),
                ("cpu", p.cpu.to_string()),
                ("mem_node", node(p.mem_node)),
                ("size_bytes", p.size_bytes.to_string()),
                ("page_size", p.page_size.clone()),
                ("median_ns", figure(p.median_ns)),
                ("p90_ns", figure(p.p90_ns)),
                ("p99_ns", figure(p.p99_ns)),
                ("spread_pct", figure(p.spread_pct)),
                ("delay", p.delay.to_string()),
                ("latency_ns", figure(p.latency_ns)),
                ("load_gbs", figure(p.load_gbs)),
            ],
            Lat::C2c(c) => vec![
                ("mode", text(c.mode.name())),
                ("median_ns", figure(c.median_ns)),
                ("p90_ns", figure(c.p90_ns)),
                ("p99_ns", figure(c.p99_ns)),
                ("spread_pct", figure(c.spread_pct)),
                ("cpu_a", c.cpu_a.to_string()),
                ("cpu_b", c.cpu_b.to_string()),
                ("relation", c.relation.map(|r| r.name().to_string()).unwrap_or_default()),
            ],
        },
        Record::LatSummary(s) => match s.as_ref() {
            LatSummary::PerCpu(x) => {
                vec![("mode", text(x.mode.name())), ("mem_node", node(x.mem_node))]
            }
            LatSummary::PerCpuSweep(x) => {
                vec![("mode", text(x.mode.name())), ("mem_node", node(x.mem_node))]
            }
            LatSummary::Sweep(x) => vec![
                ("mode", text(x.mode.name())),
                ("cpu", x.cpu.to_string()),
                ("mem_node", node(x.mem_node)),
            ],
            LatSummary::Loaded(x) => vec![
                ("mode", text(x.mode.name())),
                ("cpu", x.cpu.to_string()),
                ("mem_node", node(x.mem_node)),
            ],
            LatSummary::PrefetchCheck(x) => vec![
                ("mode", text(x.mode.name())),
                ("cpu", x.cpu.to_string()),
                ("mem_node", node(x.mem_node)),
                ("size_bytes", x.size_bytes.to_string()),
                ("page_size", x.page_size.clone()),
            ],
        },
        Record::Exec(e) => vec![
            ("mem_nodes", e.mem_nodes.as_ref().map(|n| n.to_string()).unwrap_or_default()),
            ("policy", e.policy.clone()),
        ],
        Record::Finding(f) => vec![("id", f.id.clone()), ("severity", text(f.severity.label()))],
        Record::Gpu(g) => vec![
            ("gpu", g.gpu.to_string()),
            ("direction", text(g.direction.name())),
            ("mem_node", g.mem_node.to_string()),
            ("size_bytes", g.size_bytes.to_string()),
        ],
        Record::Step(n) => vec![("step", n.step.clone()), ("status", text(n.status.name()))],
        Record::Unknown(_) => vec![],
    }
}

/// Quotes a field when it holds a comma, quote or line break (RFC 4180),
/// after a leading `'` on a cell a spreadsheet would run as a formula
/// ([`crate::safe::csv_cell`]).
pub fn field(s: &str) -> String {
    let s = crate::safe::csv_cell(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The results of `runs` as CSV with a header line.
pub fn runs_csv(runs: &[LoadedRun]) -> String {
    let mut out = String::from("run_id,run_uuid,label,machine,seq,kind,");
    out.push_str(&FIELDS.join(","));
    out.push_str(",placement,payload\n");
    for run in runs {
        let s = &run.summary;
        for r in &run.results {
            let mut row = vec![
                s.id.to_string(),
                s.uuid.clone(),
                s.label.clone().unwrap_or_default(),
                s.machine.clone(),
                r.seq.to_string(),
                r.record.kind().to_string(),
            ];
            let cells = columns(&r.record);
            for f in FIELDS {
                row.push(cells.iter().find(|c| c.0 == f).map(|c| c.1.clone()).unwrap_or_default());
            }
            row.push(
                r.record.placement().and_then(|p| p.fraction()).map(figure).unwrap_or_default(),
            );
            row.push(r.stored_json().to_string());
            out.push_str(&row.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
    }
    out
}

/// [`runs_csv`] as an exporter.
pub struct Csv;

impl super::Exporter for Csv {
    fn export(&self, db: &Store, ids: &[RunId]) -> Result<super::Exported, super::Error> {
        Ok(super::Exported::bytes(runs_csv(&super::load(db, ids)?).into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(field("abc"), "abc");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
