//! The latency parts of a report that issue 14 added: the method caption
//! (stride, TLB groups, pages, as the results record them), the prefetch
//! check, the per-chunk latency histograms of the local and the worst
//! remote pair, and loaded latency against bandwidth, one line per traffic
//! mix with each curve's knee marked. Drawn with the shared chart types.

use std::collections::BTreeMap;

use results::lat::{knee, method_caption, Knee, PrefetchCheck, KNEE_PCT};

use crate::chart::{Axis, Chart, Marker, Series, XyChart};
use crate::doc::{Document, Table};
use crate::fmt::{num, opt, plain};
use analysis::data::{Lat, RunData};
use analysis::metrics::lat_matrix;

/// The method of the chase results of `mode` (the first with a recorded
/// layout), e.g. `random chase, stride 256 B, 64-page TLB groups (256
/// KiB), 4k pages`; `None` when no result says.
pub fn method_of(d: &RunData, mode: &str) -> Option<String> {
    let p = d.lat_mode(mode).find(|p| p.stride_bytes.is_some())?;
    Some(method_caption(p.stride_bytes?, p.tlb_group_bytes, p.page_size.as_deref().unwrap_or("?")))
}

/// The prefetch checks of a run (`lat-summary` of mode `prefetch-check`).
pub fn prefetch_checks(d: &RunData) -> Vec<PrefetchCheck> {
    d.other
        .iter()
        .filter(|(k, v)| {
            k == "lat-summary" && v.get("mode").and_then(|m| m.as_str()) == Some("prefetch-check")
        })
        .filter_map(|(_, v)| serde_json::from_value(v.clone()).ok())
        .collect()
}

/// The paragraph under the latency heading: the method of the DRAM
/// points, and what the prefetch check found.
pub fn method_section(doc: &mut Document, d: &RunData) {
    let method = ["matrix", "point", "per-cpu", "loaded"].iter().find_map(|m| method_of(d, m));
    if let Some(m) = method {
        doc.p(format!("Method: {m}."));
    }
    for c in prefetch_checks(d) {
        doc.p(format!(
            "Prefetch check (CPU {}, {} of node {}): {}.",
            c.cpu,
            crate::fmt::bytes(c.size_bytes),
            c.mem_node.map_or("-".into(), |n| n.to_string()),
            c.note
        ));
    }
}

/// The local and the worst remote pair of the latency matrix that carry
/// a histogram: `(label, result)`.
fn histogram_pairs(d: &RunData) -> Vec<(String, &Lat)> {
    let cells = lat_matrix(d);
    let with = |p: &&Lat| p.histogram.as_ref().is_some_and(|h| h.count > 0);
    let mut out = Vec::new();
    if let Some(((c, m), p)) = cells.iter().find(|((c, m), p)| c == m && with(p)) {
        out.push((format!("local: CPU node {c} -> memory node {m}"), *p));
    }
    let worst = cells
        .iter()
        .filter(|((c, m), p)| c != m && with(p))
        .max_by(|a, b| a.1.median_ns.unwrap_or(0.0).total_cmp(&b.1.median_ns.unwrap_or(0.0)));
    if let Some(((c, m), p)) = worst {
        out.push((format!("worst remote: CPU node {c} -> memory node {m}"), *p));
    }
    if out.is_empty() {
        // no matrix (or no histogram in it): the first point that has one
        if let Some(p) = d.lat_mode("point").find(with) {
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
            opt(h.percentile(50.0), "ns"),
            opt(h.percentile(90.0), "ns"),
            opt(h.percentile(99.0), "ns"),
            opt(h.percentile(99.9), "ns"),
        ]);
    }
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
}

/// The loaded points of a run per mix, in the order measured (`read` for
/// points that name none).
fn curves(d: &RunData) -> BTreeMap<String, Vec<&Lat>> {
    let mut by: BTreeMap<String, Vec<&Lat>> = BTreeMap::new();
    for p in d.lat_mode("loaded").filter(|p| p.load_gbs.is_some() && p.loaded_ns().is_some()) {
        let mix = p.load_kind.clone().unwrap_or_else(|| "read".into());
        let mix = match (p.cpu_node, p.mem_node) {
            (Some(c), Some(m)) if c != m => format!("{mix}, CPU node {c} -> memory node {m}"),
            _ => mix,
        };
        by.entry(mix).or_default().push(p);
    }
    by
}

/// The knee of one curve: in the order measured with its idle point as
/// the no-load latency; curves without an idle point (the first version
/// measured from full load down) in order of bandwidth, the lightest load
/// as idle.
pub fn curve_knee(points: &[&Lat]) -> Option<Knee> {
    let idle = points.iter().find(|p| p.idle).and_then(|p| p.loaded_ns());
    let mut pts: Vec<(f64, f64)> =
        points.iter().filter_map(|p| Some((p.load_gbs?, p.loaded_ns()?))).collect();
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
    if let Some(m) = method_of(d, "loaded") {
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
            pts.iter().filter_map(|p| Some((p.load_gbs?, p.loaded_ns()?))).collect(),
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
                match (p.idle, p.delay_ns, p.delay) {
                    (true, _, _) => "idle".into(),
                    (false, Some(ns), _) => format!("{} ns", plain(ns)),
                    (false, None, Some(it)) => plain(it),
                    _ => "-".into(),
                },
                opt(p.load_gbs, "GB/s"),
                opt(p.loaded_ns(), "ns"),
                opt(p.p99_ns, "ns"),
                p.cpu_node.map_or("-".into(), |n| n.to_string()),
                p.mem_node.map_or("-".into(), |n| n.to_string()),
            ]);
        }
    }
    doc.table(t);
}
