//! The report's appendix of raw figures: every stored result as it was
//! stored, one table per kind and mode, one column per scalar field;
//! measured figures rounded to the result's noise, other fractions to three
//! significant digits, and the full kernel command line when the
//! environment had to cut it.

use std::collections::BTreeMap;

use results::Record;
use serde_json::Value;
use store::LoadedRun;

use crate::doc::{Align, Document, Table};
use results::context::scalar_text;

use crate::fmt::plain;

pub(crate) fn section(doc: &mut Document, run: &LoadedRun) {
    doc.h(2, "Appendix: raw figures");
    if run.results.is_empty() {
        doc.p("No results were stored.");
        return;
    }
    doc.p(format!(
        "Every stored result ({}), as measured, grouped by kind and mode.",
        run.results.len()
    ));
    let raws: Vec<Raw> =
        run.results.iter().map(|r| Raw { json: r.stored_json(), record: &r.record }).collect();
    let mut groups: BTreeMap<(String, &str), Vec<&Raw>> = BTreeMap::new();
    let mut order: Vec<(String, &str)> = Vec::new();
    for raw in &raws {
        let key = (raw.record.kind().to_string(), raw.record.mode().unwrap_or_default());
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(raw);
    }
    // Raw tables are for looking things up: folded, the page stays short.
    doc.fold(
        format!("The {} stored results, one table per kind and mode", run.results.len()),
        |doc| {
            for key in &order {
                let title =
                    if key.1.is_empty() { key.0.clone() } else { format!("{} {}", key.0, key.1) };
                doc.h(3, title);
                doc.table(generic_table(&groups[key], &["mode"]));
            }
        },
    );
    crate::validation::output_appendix(doc, &analysis::data::RunData::of(run));
    let raw = run.topology.get().and_then(|t| t.cmdline.raw.clone());
    if let Some(raw) = raw.filter(|r| r.chars().count() > crate::environment::CMDLINE_MAX) {
        doc.h(3, "Kernel command line");
        doc.code(raw);
    }
}

/// A stored result as the appendix shows it: its JSON as stored, and its
/// record for the noise its figures are rounded to and its placement.
struct Raw<'a> {
    json: Value,
    record: &'a Record,
}

/// A generic table of stored results: one column per scalar field, in
/// order of first appearance.
fn generic_table(rows: &[&Raw], skip: &[&str]) -> Table {
    let mut keys: Vec<String> = Vec::new();
    for p in rows.iter().map(|r| &r.json) {
        if let Some(m) = p.as_object() {
            for (k, v) in m {
                let shown = scalar_text(v).is_some() || k == "placement";
                if shown && !keys.contains(k) && !skip.contains(&k.as_str()) {
                    keys.push(k.clone());
                }
            }
        }
    }
    // The usual fields first, in the order of the CSV export; others after.
    let rank =
        |k: &String| crate::export::csv::FIELDS.iter().position(|f| f == k).unwrap_or(usize::MAX);
    keys.sort_by_key(|k| rank(k));
    let mut t = Table::new(keys.clone());
    t.align = keys
        .iter()
        .map(|k| {
            let numeric = rows.iter().all(|r| {
                matches!(r.json.get(k), None | Some(Value::Number(_)) | Some(Value::Null))
            });
            if numeric {
                Align::Right
            } else {
                Align::Left
            }
        })
        .collect();
    for r in rows {
        t.push(keys.iter().map(|k| cell_of(r, k)).collect());
    }
    t
}

/// A field of a stored result as a cell; `placement` objects (any shape)
/// show the share of pages on target.
fn cell_of(r: &Raw, k: &str) -> String {
    match r.json.get(k) {
        // Measured figures to what the result's noise supports, other
        // fractions to three significant digits: never 17-digit floats.
        Some(Value::Number(n)) if n.is_f64() => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            let measured = ["_gbs", "_ns", "_s", "metric"].iter().any(|s| k.ends_with(s));
            if measured {
                crate::fmt::noisy(v, r.record.noise().unwrap_or(0.0))
            } else {
                crate::fmt::sig(v, 3)
            }
        }
        Some(Value::Object(_)) if k == "placement" => {
            r.record.placement().and_then(|p| p.fraction()).map_or("?".into(), plain)
        }
        Some(v) => scalar_text(v).unwrap_or_else(|| "-".into()),
        None => "-".into(),
    }
}
