//! The report's Bandwidth section: local per node, whole machine
//! (global, interleave, weighted), the node-to-node matrix with its
//! heatmaps, bandwidth against threads with where it saturates, and the
//! counters recorded beside bandwidth.

use std::collections::BTreeMap;

use results::bw::{self, BwResult};
use results::stats::measured;
use store::LoadedRun;

use crate::chart::{Axis, Chart, RefLine, Series, XyChart};
use crate::doc::{Document, Table};
use crate::figures::{bw_flag, marked};
use crate::fmt::{fig, num, opt};
use analysis::data::RunData;
use analysis::metrics::bw_matrix;

fn pages(p: &BwResult) -> String {
    let pl = &p.placement;
    let f = pl.fraction().map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "?".into());
    if pl.flagged() {
        format!("{f} (flagged)")
    } else {
        f
    }
}

fn bw_row(p: &BwResult, first: String, with_peak: bool) -> Vec<String> {
    let mut row = vec![
        first,
        p.memory(),
        p.kernel.name().into(),
        p.threads.to_string(),
        marked(fig(measured(p.best_gbs), p.noise(), "GB/s"), bw_flag(p).as_ref()),
        fig(measured(p.median_gbs), p.noise(), "GB/s"),
        opt(measured(p.spread_pct), "%"),
        pages(p),
        crate::method::isa_stores(p),
    ];
    if with_peak {
        row.push(crate::method::peak_cell(p));
    }
    row
}

/// The bandwidth tables' header, with `first` as the first column and a
/// "% of peak" column when any figure of the run has a peak.
fn bw_header(first: &'static str, with_peak: bool) -> Vec<&'static str> {
    let mut h = vec![
        first,
        "Memory node(s)",
        "Kernel",
        "Threads",
        "Best GB/s",
        "Median GB/s",
        "Spread %",
        "Pages on target",
        "ISA, stores",
    ];
    if with_peak {
        h.push("% of peak");
    }
    h
}

pub(crate) fn section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    if d.bw.is_empty() {
        return;
    }
    doc.h(2, "Bandwidth");
    doc.p("GB/s = 10^9 bytes per second, counted as STREAM counts them. The figure of a result is its best (fastest) repetition, everywhere in this report: other work can only slow a repetition down, so the fastest is the closest to what the memory can do; the median is shown beside it. Spread is (max - min) / median of the repetitions. Figures keep the digits their noise (robust CV of the repetitions) supports.");

    let with_peak = crate::method::any_peak(d);
    let mut t = Table::with_header(&bw_header("CPU node", with_peak));
    for p in d.bw_mode(bw::Mode::Local) {
        t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string()), with_peak));
    }
    if !t.is_empty() {
        doc.h(3, "Local bandwidth per node");
        doc.table(t);
    }

    let mut t = Table::with_header(&bw_header("Mode", with_peak));
    for mode in [bw::Mode::Global, bw::Mode::Interleave, bw::Mode::Weighted] {
        for p in d.bw_mode(mode) {
            t.push(bw_row(p, mode.name().to_string(), with_peak));
        }
    }
    if !t.is_empty() {
        doc.h(3, "Whole machine");
        doc.table(t);
    }

    package_section(doc, d, with_peak);

    let (kernel, cells) = bw_matrix(d);
    if !cells.is_empty() {
        let kernel = kernel.map_or("", |k| k.name());
        doc.h(3, "Node-to-node bandwidth");
        crate::matrix::charts(
            doc,
            format!("Bandwidth matrix ({kernel}, best GB/s)"),
            "GB/s",
            cells.iter().map(|(k, p)| (*k, measured(p.best_gbs))).collect(),
            "Bandwidth relative to the CPU node's local memory",
        );
        let mut t = Table::with_header(&bw_header("CPU node", with_peak));
        for p in d.bw_mode(bw::Mode::Matrix) {
            t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string()), with_peak));
        }
        doc.table(t);
    }

    let scaling: Vec<&BwResult> =
        d.bw_mode(bw::Mode::Scaling).filter(|p| p.best_gbs.is_finite()).collect();
    if !scaling.is_empty() {
        doc.h(3, "Bandwidth against threads");
        doc.chart(Chart::Xy(scaling_chart(&scaling, crate::glance::node_peak_gbs(run))));
        let mut t = Table::with_header(&bw_header("CPU node", with_peak));
        for p in &scaling {
            t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string()), with_peak));
        }
        doc.table(t);
        for line in saturation_notes(&scaling) {
            doc.p(line);
        }
        for line in crate::figures::contradiction_lines(d) {
            doc.callout(line);
        }
    }
    crate::method::section(doc, d);
    crate::counters::bandwidth(doc, d);
}

/// Bandwidth against threads: one line per kernel and node pair with its
/// min-max band, the ideal linear scaling from the fewest threads, and the
/// theoretical peak of one node's memory channels when known.
fn scaling_chart(scaling: &[&BwResult], node_peak: Option<f64>) -> XyChart {
    type Curve = (Option<u32>, Vec<(f64, f64)>, Vec<(f64, f64, f64)>, Vec<(f64, String)>);
    let mut series: BTreeMap<String, Curve> = BTreeMap::new();
    for p in scaling {
        let name = format!(
            "{}, node {} -> {}",
            p.kernel,
            p.cpu_node.map_or("?".into(), |n| n.to_string()),
            p.memory()
        );
        // coloured by memory node, as in every chart
        let e = series.entry(name).or_insert((p.mem_node.or(p.cpu_node), vec![], vec![], vec![]));
        let (t, best) = (p.threads as f64, p.best_gbs);
        e.1.push((t, best));
        // the hover value as the table writes it
        e.3.push((t, format!("{} GB/s", fig(Some(best), p.noise(), "GB/s"))));
        if let (Some(lo), Some(hi)) = (measured(p.min_gbs), measured(p.max_gbs)) {
            e.2.push((t, lo.min(best), hi.max(best)));
        }
    }
    let mut lines = Vec::new();
    for (name, (node, points, _, _)) in &series {
        let first = points.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0));
        let last = points.iter().map(|p| p.0).fold(0.0, f64::max);
        if let Some((t0, v0)) = first.filter(|f| f.0 > 0.0 && last > f.0) {
            lines.push(RefLine {
                label: format!("ideal linear scaling of {name}"),
                points: vec![(t0, v0), (last, v0 * last / t0)],
                // the axis reaches the ideal: a line cut at the frame
                // hides how far the measurement falls short of it
                in_domain: true,
                color: node.map(|n| n as usize),
            });
        }
    }
    if let Some(peak) = node_peak {
        let (lo, hi) = series
            .values()
            .flat_map(|s| s.1.iter().map(|p| p.0))
            .fold((f64::INFINITY, 0.0f64), |(a, b), t| (a.min(t), b.max(t)));
        if hi > 0.0 {
            lines.push(RefLine {
                label: format!(
                    "theoretical peak of one node's channels, {} GB/s",
                    num(peak, "GB/s")
                ),
                points: vec![(lo, peak), (hi, peak)],
                in_domain: true,
                color: None,
            });
        }
    }
    XyChart {
        title: "Bandwidth against thread count".into(),
        // from the fewest threads measured: no "0 threads" tick
        x: Axis { from_zero: false, ..Axis::integer("threads") },
        y: Axis::linear("bandwidth (GB/s)"),
        band_label: "min-max of the repetitions".into(),
        series: series
            .into_iter()
            .map(|(name, (node, points, band, labels))| {
                Series::line(name, points).with_band(band).with_color(node).with_labels(labels)
            })
            .collect(),
        markers: vec![],
        lines,
    }
}

/// "triad on node 0 reaches 90% of its best with 8 of 28 threads".
fn saturation_notes(scaling: &[&BwResult]) -> Vec<String> {
    type Curve = Vec<(usize, f64)>;
    let mut groups: BTreeMap<(&str, Option<u32>), Curve> = BTreeMap::new();
    for p in scaling {
        groups.entry((p.kernel.name(), p.cpu_node)).or_default().push((p.threads, p.best_gbs));
    }
    let mut out = Vec::new();
    for ((kernel, node), mut pts) in groups {
        pts.sort_by_key(|p| p.0);
        let peak = pts.iter().map(|p| p.1).fold(0.0, f64::max);
        let max_t = pts.last().map(|p| p.0).unwrap_or(0);
        if pts.len() < 3 || peak <= 0.0 {
            continue;
        }
        if let Some((t, _)) = pts.iter().find(|p| p.1 >= 0.9 * peak) {
            out.push(format!(
                "{kernel} on node {} reaches 90% of its best ({} GB/s) with {t} of {max_t} threads.",
                node.map_or("?".into(), |n| n.to_string()),
                num(peak, "GB/s")
            ));
        }
    }
    out
}

/// `run`'s package-scope figures: each package's CPUs all at once, on its
/// own memory or another package's, with the scope in words.
fn package_section(doc: &mut Document, d: &RunData, with_peak: bool) {
    let mut t = Table::with_header(&bw_header("Scope", with_peak));
    for p in d.bw_mode(bw::Mode::Package) {
        let scope = p.scope.as_ref().map_or_else(|| "package".to_string(), |s| s.describe());
        t.push(bw_row(p, scope, with_peak));
    }
    if t.is_empty() && d.step_notes.is_empty() {
        return;
    }
    doc.h(3, "Per package, all of its CPUs at once");
    if !t.is_empty() {
        doc.p("Each package's CPUs measured together, as a program spread over the package runs: a package's figure, not the sum of its nodes' cells (each cell is one node's CPUs measured alone, and cells do not add up to a package).");
        doc.table(t);
    }
    if !d.step_notes.is_empty() {
        let notes: Vec<String> = d.step_notes.iter().map(|n| n.text()).collect();
        doc.p(format!(
            "Package-scope steps that measured nothing: {}. A study derives these runs' package figures from cells measured one at a time, labelled so, and decides nothing on them.",
            notes.join("; ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaling(threads: usize, best: f64) -> BwResult {
        let v = serde_json::json!({"mode": "scaling", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": threads, "best_gbs": best, "min_gbs": best * 0.9,
            "max_gbs": best, "spread_pct": 10.0, "reps": 10});
        match results::upgrade::read("bw", &v).record {
            results::Record::Bw(b) => *b,
            r => panic!("not a bw record: {r:?}"),
        }
    }

    #[test]
    fn the_scaling_chart_shows_the_whole_ideal_line_and_no_zero_threads() {
        let pts = [scaling(1, 10.0), scaling(2, 18.0), scaling(4, 26.0)];
        let refs: Vec<&BwResult> = pts.iter().collect();
        let c = scaling_chart(&refs, None);
        let ideal = c.lines.iter().find(|l| l.label.starts_with("ideal")).unwrap();
        assert_eq!(ideal.points.last(), Some(&(4.0, 40.0)));
        let svg = crate::svg::render(&Chart::Xy(c), 0);
        // y ticks reach the ideal's 40 GB/s, not only the measured 26
        assert!(svg.contains(">40</text>"), "{svg}");
        // x ticks from the fewest threads: 1, 2, 3, 4, never 0
        assert!(svg.contains(">1</text>") && svg.contains(">4</text>"));
        assert!(!svg.contains("text-anchor=\"middle\">0</text>"), "{svg}");
        // a long curve (1 to 16 threads) ticks 2, 4, ... 16: still no 0
        let pts: Vec<BwResult> =
            [1, 2, 4, 8, 16].iter().map(|t| scaling(*t, 10.0 * (*t as f64).sqrt())).collect();
        let refs: Vec<&BwResult> = pts.iter().collect();
        let svg = crate::svg::render(&Chart::Xy(scaling_chart(&refs, None)), 0);
        assert!(svg.contains("text-anchor=\"middle\">16</text>"), "{svg}");
        assert!(!svg.contains("text-anchor=\"middle\">0</text>"), "{svg}");
    }
}
