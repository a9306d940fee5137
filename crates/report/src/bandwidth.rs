//! The report's Bandwidth section: local per node, whole machine
//! (global, interleave, weighted), the node-to-node matrix with its
//! heatmaps, bandwidth against threads with where it saturates, and the
//! counters recorded beside bandwidth.

use std::collections::BTreeMap;

use results::bw::{self, BwResult};
use results::stats::measured;
use store::LoadedRun;

use crate::chart::{matrix_charts, Axis, Chart, RefLine, Series, XyChart};
use crate::doc::{Document, Table};
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

fn bw_row(p: &BwResult, first: String) -> Vec<String> {
    vec![
        first,
        p.memory(),
        p.kernel.name().into(),
        p.threads.to_string(),
        fig(measured(p.best_gbs), p.noise(), "GB/s"),
        fig(measured(p.median_gbs), p.noise(), "GB/s"),
        opt(measured(p.spread_pct), "%"),
        pages(p),
        p.isa.name().into(),
    ]
}

const BW_HEADER: [&str; 9] = [
    "CPU node",
    "Memory node(s)",
    "Kernel",
    "Threads",
    "Best GB/s",
    "Median GB/s",
    "Spread %",
    "Pages on target",
    "ISA",
];

pub(crate) fn section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    if d.bw.is_empty() {
        return;
    }
    doc.h(2, "Bandwidth");
    doc.p("GB/s = 10^9 bytes per second, counted as STREAM counts them. Best is the fastest repetition, spread is (max - min) / median. Figures keep the digits their noise (robust CV of the repetitions) supports.");

    let mut t = Table::with_header(&BW_HEADER);
    for p in d.bw_mode(bw::Mode::Local) {
        t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string())));
    }
    if !t.is_empty() {
        doc.h(3, "Local bandwidth per node");
        doc.table(t);
    }

    let mut t = Table::with_header(&[
        "Mode",
        "Memory node(s)",
        "Kernel",
        "Threads",
        "Best GB/s",
        "Median GB/s",
        "Spread %",
        "Pages on target",
        "ISA",
    ]);
    for mode in [bw::Mode::Global, bw::Mode::Interleave, bw::Mode::Weighted] {
        for p in d.bw_mode(mode) {
            t.push(bw_row(p, mode.name().to_string()));
        }
    }
    if !t.is_empty() {
        doc.h(3, "Whole machine");
        doc.table(t);
    }

    let (kernel, cells) = bw_matrix(d);
    if !cells.is_empty() {
        let kernel = kernel.map_or("", |k| k.name());
        doc.h(3, "Node-to-node bandwidth");
        matrix_charts(
            doc,
            format!("Bandwidth matrix ({kernel}, best GB/s)"),
            "GB/s",
            cells.iter().map(|(k, p)| (*k, measured(p.best_gbs))).collect(),
            "Bandwidth relative to the CPU node's local memory",
        );
        let mut t = Table::with_header(&BW_HEADER);
        for p in d.bw_mode(bw::Mode::Matrix) {
            t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string())));
        }
        doc.table(t);
    }

    let scaling: Vec<&BwResult> =
        d.bw_mode(bw::Mode::Scaling).filter(|p| p.best_gbs.is_finite()).collect();
    if !scaling.is_empty() {
        doc.h(3, "Bandwidth against threads");
        doc.chart(Chart::Xy(scaling_chart(&scaling, crate::glance::node_peak_gbs(run))));
        let mut t = Table::with_header(&BW_HEADER);
        for p in &scaling {
            t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string())));
        }
        doc.table(t);
        for line in saturation_notes(&scaling) {
            doc.p(line);
        }
    }
    crate::counters::bandwidth(doc, d);
}

/// Bandwidth against threads: one line per kernel and node pair with its
/// min-max band, the ideal linear scaling from the fewest threads, and the
/// theoretical peak of one node's memory channels when known.
fn scaling_chart(scaling: &[&BwResult], node_peak: Option<f64>) -> XyChart {
    type Curve = (Option<u32>, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
    let mut series: BTreeMap<String, Curve> = BTreeMap::new();
    for p in scaling {
        let name = format!(
            "{}, node {} -> {}",
            p.kernel,
            p.cpu_node.map_or("?".into(), |n| n.to_string()),
            p.memory()
        );
        // coloured by memory node, as in every chart
        let e = series.entry(name).or_insert((p.mem_node.or(p.cpu_node), vec![], vec![]));
        let (t, best) = (p.threads as f64, p.best_gbs);
        e.1.push((t, best));
        if let (Some(lo), Some(hi)) = (measured(p.min_gbs), measured(p.max_gbs)) {
            e.2.push((t, lo.min(best), hi.max(best)));
        }
    }
    let mut lines = Vec::new();
    for (name, (node, points, _)) in &series {
        let first = points.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0));
        let last = points.iter().map(|p| p.0).fold(0.0, f64::max);
        if let Some((t0, v0)) = first.filter(|f| f.0 > 0.0 && last > f.0) {
            lines.push(RefLine {
                label: format!("ideal linear scaling of {name}"),
                points: vec![(t0, v0), (last, v0 * last / t0)],
                in_domain: false,
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
        x: Axis::integer("threads"),
        y: Axis::linear("bandwidth (GB/s)"),
        band_label: "min-max of the repetitions".into(),
        series: series
            .into_iter()
            .map(|(name, (node, points, band))| {
                Series::line(name, points).with_band(band).with_color(node)
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
