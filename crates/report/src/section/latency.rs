//! The report's Latency section: the method caption (stride, TLB groups,
//! pages, as the results record them) and the prefetch check, single
//! points, the node-to-node matrix with its heatmaps and distance tiers,
//! the per-chunk latency histograms of the local and the worst remote pair,
//! loaded latency against bandwidth (one line per traffic mix, each knee
//! marked) and core-to-core latency. The sweep and the per-CPU latency are
//! [`crate::sweep`] and [`crate::per_cpu`].

use std::collections::{BTreeMap, BTreeSet};

use results::lat::{self, knee, method_caption, C2cResult, Knee, LatResult, LoadedPoint, KNEE_PCT};
use results::stats::measured;
use store::LoadedRun;

use crate::chart::{matrix_heatmap, Axis, Chart, Marker, Series, XyChart};
use crate::doc::{Document, Table};
use topo::units::binary_size as bytes;

use crate::figures::{chase_flag, loaded_flag, marked};
use crate::fmt::{fig, min_median_max, num, opt, plain};
use analysis::data::RunData;
use analysis::metrics::measured_lat_matrix;

pub(crate) fn section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    if d.chases.is_empty() && d.loaded.is_empty() && d.c2c.is_empty() {
        return;
    }
    doc.h(2, "Latency");
    doc.p("Dependent loads of a random pointer chase; ns per load, median of the samples unless said otherwise.");
    method_section(doc, d);
    lat_points_section(doc, d);
    lat_matrix_section(doc, d, run);
    lat_package_section(doc, d);
    histogram_section(doc, d);
    crate::sweep::section(doc, d, run);
    crate::sweep::plateau_section(doc, d);
    crate::per_cpu::section(doc, d);
    crate::per_cpu::sweep_section(doc, d);
    loaded_section(doc, d);
    c2c_section(doc, d);
}

/// Single measurements (mode `point`).
fn lat_points_section(doc: &mut Document, d: &RunData) {
    let point: Vec<&LatResult> = d.chase_mode(lat::Mode::Point).collect();
    if !point.is_empty() {
        doc.h(3, "Single measurements");
        let mut header = vec!["CPU"];
        header.extend(CHASE_COLUMNS);
        let mut t = Table::with_header(&header);
        for p in point {
            let mut row = vec![p.cpu.to_string()];
            row.extend(chase_cells(p, "-", d));
            t.push(row);
        }
        doc.table(t);
    }
}

/// `run`'s package-scope chases: from a CPU of each package to its own
/// package's memory and the other package's, each interleaved over the
/// package's nodes.
fn lat_package_section(doc: &mut Document, d: &RunData) {
    let chases: Vec<&LatResult> = d.chase_mode(lat::Mode::Package).collect();
    if chases.is_empty() {
        return;
    }
    doc.h(3, "Per package, memory interleaved over a package's nodes");
    let mut header = vec!["Scope"];
    header.extend(CHASE_COLUMNS);
    let mut t = Table::with_header(&header);
    for p in chases {
        let mut row = vec![p.scope.as_ref().map_or_else(|| "package".into(), |s| s.describe())];
        row.extend(chase_cells(p, "-", d));
        t.push(row);
    }
    doc.table(t);
}

/// The node-to-node matrix: heatmap and table, then remote latency per
/// distance tier of the run's topology.
fn lat_matrix_section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    let cells = measured_lat_matrix(d);
    if !cells.is_empty() {
        doc.h(3, "Node-to-node latency");
        crate::matrix::charts(
            doc,
            "Latency matrix (median ns)".into(),
            "ns",
            cells.iter().map(|(k, p)| (*k, measured(p.median_ns))).collect(),
            "Latency relative to the CPU node's local memory",
        );
        doc.table(lat_matrix_table(d));
        // Where the run measured a cell's quantity again (the sweep, the
        // per-CPU latency) and the headlines took that measurement, or
        // the figures disagree beyond their noise: said here, where the
        // cell is shown.
        let taken = crate::figures::taken_lines(&crate::figures::headlines(d));
        let contradictions = crate::figures::lat_contradiction_lines(d);
        if !taken.is_empty() || !contradictions.is_empty() {
            doc.list(taken.into_iter().chain(contradictions).collect());
        }
        let tier_cells: Vec<(u32, u32, f64)> =
            cells.iter().map(|((c, m), p)| (*c, *m, p.median_ns)).collect();
        if let Some(t) =
            run.topology.get().and_then(|t| crate::tiers::latency_by_tier(t, &tier_cells))
        {
            doc.h(3, "Remote latency by distance tier");
            doc.p("Node pairs grouped by their SLIT distance (the topology's distance tiers): one figure per tier, since a machine with several remote distances has several remote latencies.");
            doc.table(t);
        }
    }
}

fn lat_matrix_table(d: &RunData) -> Table {
    let mut t = Table::with_header(&CHASE_COLUMNS);
    for p in d.chase_mode(lat::Mode::Matrix) {
        t.push(chase_cells(p, "?", d));
    }
    t
}

/// The columns of a pointer-chase result, in [`chase_cells`]'s order.
const CHASE_COLUMNS: [&str; 8] =
    ["CPU node", "Memory node", "Size", "Page size", "Median ns", "p90 ns", "p99 ns", "Spread %"];

/// One pointer-chase result's cells under [`CHASE_COLUMNS`]; `unknown`
/// stands for a node the record does not name.
fn chase_cells(p: &LatResult, unknown: &str, d: &RunData) -> Vec<String> {
    vec![
        p.cpu_node.map_or(unknown.into(), |n| n.to_string()),
        match (&p.interleave, p.mem_node) {
            (Some(nodes), _) => format!("interleaved {nodes}"),
            (None, m) => m.map_or(unknown.into(), |n| n.to_string()),
        },
        size_text(p),
        page_size_text(&p.page_size),
        marked(fig(measured(p.median_ns), p.noise(), "ns"), chase_flag(p, d).as_ref()),
        fig(measured(p.p90_ns), p.noise(), "ns"),
        fig(measured(p.p99_ns), p.noise(), "ns"),
        opt(measured(p.spread_pct), "%"),
    ]
}

/// Core-to-core latency: heatmap (3 to 64 CPUs) and a table per relation.
fn c2c_section(doc: &mut Document, d: &RunData) {
    let c2c: Vec<&C2cResult> = d.c2c.iter().filter(|p| p.median_ns.is_finite()).collect();
    if !c2c.is_empty() {
        doc.h(3, "Core-to-core latency");
        let cpus: BTreeSet<u32> = c2c.iter().flat_map(|p| [p.cpu_a, p.cpu_b]).collect();
        if cpus.len() < 3 {
            doc.p("One CPU pair only: its figure is in the table below, no heatmap is drawn.");
        } else if cpus.len() <= 64 {
            let mut cells: BTreeMap<(u32, u32), Option<f64>> = BTreeMap::new();
            for p in &c2c {
                let (a, b) = (p.cpu_a, p.cpu_b);
                cells.insert((a, b), Some(p.median_ns));
                cells.entry((b, a)).or_insert(Some(p.median_ns));
            }
            let mut hm = matrix_heatmap(
                "Core-to-core latency (median ns, one way)".into(),
                "ns",
                cells.into_iter(),
            );
            hm.x_label = "CPU".into();
            hm.y_label = "CPU".into();
            doc.chart(Chart::Heatmap(hm));
        }
        let mut by: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for p in &c2c {
            by.entry(p.relation.map_or("unknown", |r| r.name())).or_default().push(p.median_ns);
        }
        let mut t = Table::with_header(&["Relation", "Pairs", "Min ns", "Median ns", "Max ns"]);
        for (rel, v) in by {
            let mut row = vec![rel.to_string(), v.len().to_string()];
            row.extend(min_median_max(&v));
            t.push(row);
        }
        doc.table(t);
    }
}

/// A chase's working-set size, `-` when not recorded.
pub(crate) fn size_text(p: &LatResult) -> String {
    if p.size_bytes > 0 {
        bytes(p.size_bytes)
    } else {
        "-".into()
    }
}

/// A page size as recorded, `-` when not.
pub(crate) fn page_size_text(page: &str) -> String {
    if page.is_empty() {
        "-".into()
    } else {
        page.to_string()
    }
}

/// A page size as recorded, `?` when the result gave none.
fn page_text(page: &str) -> &str {
    if page.is_empty() {
        "?"
    } else {
        page
    }
}

/// The method of the chases of `mode` (the first with a recorded layout),
/// e.g. `random chase, stride 256 B, 64-page TLB groups (256 KiB), 4k
/// pages`; `None` when no result says.
pub fn method_of(d: &RunData, mode: lat::Mode) -> Option<String> {
    let p = d.chase_mode(mode).find(|p| p.stride_bytes > 0)?;
    Some(method_caption(p.stride_bytes as u64, Some(p.tlb_group_bytes), page_text(&p.page_size)))
}

/// The method of the loaded points' chase (the first that records it).
fn loaded_method(d: &RunData) -> Option<String> {
    let p = d.loaded.iter().find(|p| p.stride_bytes.is_some_and(|s| s > 0))?;
    Some(method_caption(p.stride_bytes? as u64, p.tlb_group_bytes, page_text(&p.page_size)))
}

/// The paragraph under the latency heading: the method of the DRAM
/// points, and what the prefetch check found.
pub fn method_section(doc: &mut Document, d: &RunData) {
    let method = [lat::Mode::Matrix, lat::Mode::Point, lat::Mode::PerCpu]
        .into_iter()
        .find_map(|m| method_of(d, m))
        .or_else(|| loaded_method(d));
    if let Some(m) = method {
        doc.p(format!("Method: {m}."));
    }
    for c in &d.prefetch_checks {
        doc.p(format!(
            "Prefetch check (CPU {}, {} of node {}): {}.",
            c.cpu,
            bytes(c.size_bytes),
            c.mem_node.map_or("-".into(), |n| n.to_string()),
            c.note
        ));
    }
}

/// The local and the worst remote pair of the latency matrix that carry
/// a histogram: `(label, result)`.
fn histogram_pairs(d: &RunData) -> Vec<(String, &LatResult)> {
    let cells = measured_lat_matrix(d);
    let with = |p: &&LatResult| p.histogram.as_ref().is_some_and(|h| h.count > 0);
    let mut out = Vec::new();
    if let Some(((c, m), p)) = cells.iter().find(|((c, m), p)| c == m && with(p)) {
        out.push((format!("local: CPU node {c} -> memory node {m}"), *p));
    }
    let worst = cells
        .iter()
        .filter(|((c, m), p)| c != m && with(p))
        .max_by(|a, b| a.1.median_ns.total_cmp(&b.1.median_ns));
    if let Some(((c, m), p)) = worst {
        out.push((format!("worst remote: CPU node {c} -> memory node {m}"), *p));
    }
    if out.is_empty() {
        // no matrix (or no histogram in it): the first point that has one
        if let Some(p) = d.chase_mode(lat::Mode::Point).find(with) {
            out.push(("single point".into(), p));
        }
    }
    out
}

/// Latency distribution: the share of timed chunks per log bucket, one
/// line per pair (local and worst remote), and their percentiles.
pub fn histogram_section(doc: &mut Document, d: &RunData) {
    let pairs = histogram_pairs(d);
    if pairs.is_empty() {
        return;
    }
    doc.h(3, "Latency distribution");
    let loads = pairs[0].1.histogram.as_ref().map_or(0, |h| h.loads_per_value);
    doc.p(format!(
        "Each value is the mean latency of {loads} dependent loads timed together (about 25 µs), counted in log buckets of 1/16 of a power of two (HdrHistogram-style); a long tail means interference or slow pages."
    ));
    let mut series = Vec::new();
    let mut t = Table::with_header(&["Pair", "Values", "p50 ns", "p90 ns", "p99 ns", "p99.9 ns"]);
    for (label, p) in &pairs {
        let Some(h) = &p.histogram else { continue };
        let total = h.count.max(1) as f64;
        series.push(Series::line(
            label.clone(),
            h.buckets
                .iter()
                .map(|b| ((b.lo_ns + b.hi_ns) / 2.0, b.count as f64 / total * 100.0))
                .collect(),
        ));
        t.push(vec![
            label.clone(),
            h.count.to_string(),
            fig(h.percentile(50.0), p.noise(), "ns"),
            fig(h.percentile(90.0), p.noise(), "ns"),
            fig(h.percentile(99.0), p.noise(), "ns"),
            fig(h.percentile(99.9), p.noise(), "ns"),
        ]);
    }
    let differ: Vec<String> = pairs
        .iter()
        .filter_map(|(label, p)| {
            let p50 = p.histogram.as_ref()?.percentile(50.0)?;
            let med = measured(p.median_ns)?;
            let (a, b) = (fig(Some(med), p.noise(), "ns"), fig(Some(p50), p.noise(), "ns"));
            (a != b).then(|| format!("{label}: median {a} ns, p50 {b} ns"))
        })
        .collect();
    doc.chart(Chart::Xy(XyChart {
        title: "Latency distribution (share of timed chunks per bucket)".into(),
        // log-10 when the tail reaches decades past the median (preemption)
        x: {
            let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect::<Vec<_>>();
            let a = Axis::linear_or_log("latency (ns per load)", xs, 1.0);
            Axis { from_zero: false, ..a }
        },
        y: Axis::linear("share of values (%)"),
        series,
        ..XyChart::default()
    }));
    doc.table(t);
    if !differ.is_empty() {
        doc.p(format!(
            "Why the p50 here differs from the median in the tables ({}): the tables' figure is the median of whole samples, each the mean of many thousand loads, so every slow load and every stall of the thread within a sample counts in it; the p50 is the middle of values of {loads} loads each, which short stalls and slow pages leave out.",
            differ.join("; ")
        ));
    }
}

/// The loaded points of a run per mix, in the order measured.
fn curves(d: &RunData) -> BTreeMap<String, Vec<&LoadedPoint>> {
    let mut by: BTreeMap<String, Vec<&LoadedPoint>> = BTreeMap::new();
    for p in d.loaded.iter().filter(|p| p.load_gbs.is_finite() && p.latency().is_some()) {
        by.entry(p.load_kind.name().to_string()).or_default().push(p);
    }
    by
}

/// The knee of one curve: in the order measured with its idle point as
/// the no-load latency; curves without an idle point (the first version
/// measured from full load down) in order of bandwidth, the lightest load
/// as idle.
pub fn curve_knee(points: &[&LoadedPoint]) -> Option<Knee> {
    let idle = points.iter().find(|p| p.idle).and_then(|p| p.latency());
    let mut pts: Vec<(f64, f64)> =
        points.iter().filter_map(|p| Some((measured(p.load_gbs)?, p.latency()?))).collect();
    if idle.is_none() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    knee(&pts, idle)
}

/// Loaded latency against the load's bandwidth: one line per traffic mix,
/// each knee marked, then the knees and the points.
pub fn loaded_section(doc: &mut Document, d: &RunData) {
    let by = curves(d);
    if by.is_empty() {
        return;
    }
    doc.h(3, "Loaded latency");
    doc.p(format!(
        "Chase latency while load threads on the other CPUs move lines of their own buffers on the same node, one curve per traffic mix (read:write lines), from no load to full load (waits between lines calibrated in ns). The knee is where latency first stays more than {KNEE_PCT:.0}% above idle; usable bandwidth is what the load reaches before latency doubles."
    ));
    if let Some(m) = loaded_method(d) {
        doc.p(format!("Method of the chase: {m}."));
    }
    let mut series = Vec::new();
    let mut markers = Vec::new();
    let mut verdicts = Vec::new();
    let mut kt = Table::with_header(&[
        "Mix",
        "Idle ns",
        "Knee GB/s",
        "Usable GB/s (latency < 2x idle)",
        "Peak GB/s",
        "Latency at peak ns",
    ]);
    for (mix, pts) in &by {
        series.push(Series::line(
            mix.clone(),
            pts.iter().filter_map(|p| Some((measured(p.load_gbs)?, p.latency()?))).collect(),
        ));
        if let Some(k) = curve_knee(pts) {
            verdicts.push(format!("{mix}: {}.", k.verdict()));
            if let Some(g) = k.knee_gbs {
                markers.push(Marker { x: g, label: format!("{mix} knee {}", num(g, "GB/s")) });
            }
            kt.push(vec![
                mix.clone(),
                num(k.idle_ns, "ns"),
                k.knee_gbs.map_or("not reached".into(), |g| num(g, "GB/s")),
                if k.doubled {
                    num(k.usable_gbs, "GB/s")
                } else {
                    format!("{} (never doubled)", num(k.usable_gbs, "GB/s"))
                },
                num(k.peak_gbs, "GB/s"),
                num(k.peak_ns, "ns"),
            ]);
        }
    }
    doc.chart(Chart::Xy(XyChart {
        title: "Loaded latency against bandwidth, per traffic mix".into(),
        x: Axis::linear("bandwidth of the load (GB/s)"),
        y: Axis::linear("latency (ns)"),
        series,
        markers,
        ..XyChart::default()
    }));
    doc.table(kt);
    for v in verdicts {
        doc.p(v);
    }
    // A load never makes memory faster: said beside the curve too.
    let below: Vec<String> = crate::figures::lat_contradiction_lines(d)
        .into_iter()
        .filter(|l| l.starts_with("lat loaded"))
        .collect();
    if !below.is_empty() {
        doc.list(below);
    }
    let mut t = Table::with_header(&[
        "Mix",
        "Delay",
        "Load GB/s",
        "Latency ns",
        "p99 ns",
        "CPU node",
        "Memory node",
    ]);
    for (mix, pts) in &by {
        for p in pts {
            t.push(vec![
                mix.clone(),
                match (p.idle, p.delay_ns.and_then(measured)) {
                    (true, _) => "idle".into(),
                    (false, Some(ns)) => format!("{} ns", plain(ns)),
                    (false, None) => plain(p.delay as f64),
                },
                opt(measured(p.load_gbs), "GB/s"),
                marked(fig(p.latency(), p.noise(), "ns"), loaded_flag(p, d).as_ref()),
                fig(measured(p.p99_ns), p.noise(), "ns"),
                // the chase's CPU node is not recorded with a loaded point
                "-".into(),
                p.mem_node.map_or("-".into(), |n| n.to_string()),
            ]);
        }
    }
    doc.table(t);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run`'s interleaved point names its nodes where a point names its
    /// memory node, never "-".
    #[test]
    fn an_interleaved_point_names_its_nodes_as_its_memory() {
        let v = serde_json::json!({"mode": "point", "cpu": 0, "cpu_node": 0,
            "median_ns": 120.0, "interleave": "0-3"});
        let p = match results::upgrade::read("lat", &v).record {
            results::Record::Lat(l) => match *l {
                lat::Lat::Chase(c) => c,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert_eq!(
            chase_cells(&p, "-", &RunData::default())[..2],
            ["0".to_string(), "interleaved 0-3".to_string()]
        );
        let bound = LatResult { interleave: None, mem_node: Some(1), ..p };
        assert_eq!(chase_cells(&bound, "-", &RunData::default())[1], "1");
    }
}
