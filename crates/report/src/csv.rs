//! CSV export of results: one row per result, a fixed set of columns
//! (the fields bandwidth and latency results share), the share of pages on
//! target flattened from `placement`, the rest of the payload in a last
//! `payload` column as JSON.

use serde_json::Value;
use store::LoadedRun;

use analysis::data::scalar_text;

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

/// The share of a result's pages on target, whatever shape its
/// `placement` has (today's `{status, check}`, the first version's number,
/// the alias objects `results::view` reads): flattened for CSV and the
/// report's appendix.
pub fn placement_fraction(payload: &Value) -> Option<String> {
    match payload.get("placement")? {
        v @ Value::Number(_) => scalar_text(v),
        _ => results::view::Placement::of(payload)?
            .fraction
            .map(Value::from)
            .and_then(|v| scalar_text(&v)),
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
                r.kind.to_string(),
            ];
            for f in FIELDS {
                row.push(r.payload.get(f).and_then(scalar_text).unwrap_or_default());
            }
            row.push(placement_fraction(&r.payload).unwrap_or_default());
            row.push(r.payload.to_string());
            out.push_str(&row.iter().map(|c| field(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
    }
    out
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
