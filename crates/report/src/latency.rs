//! Parts of a report's latency section: the method caption (stride, TLB
//! groups, pages, as the results record them), the prefetch check, the
//! per-chunk latency histograms of the local and the worst remote pair, and
//! loaded latency against bandwidth, one line per traffic mix with each
//! curve's knee marked. Drawn with the shared chart types.

use std::collections::BTreeMap;

use results::lat::{self, knee, method_caption, Knee, LatResult, LoadedPoint, KNEE_PCT};
use results::stats::measured;

use crate::chart::{Axis, Chart, Marker, Series, XyChart};
use crate::doc::{Document, Table};
use crate::fmt::{num, opt, plain};
use analysis::data::RunData;
use analysis::metrics::lat_matrix;

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
            crate::fmt::bytes(c.size_bytes),
            c.mem_node.map_or("-".into(), |n| n.to_string()),
            c.note
        ));
    }
}

/// The local and the worst remote pair of the latency matrix that carry
/// a histogram: `(label, result)`.
fn histogram_pairs(d: &RunData) -> Vec<(String, &LatResult)> {
    let cells = lat_matrix(d);
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
                opt(p.latency(), "ns"),
                opt(measured(p.p99_ns), "ns"),
                // the chase's CPU node is not recorded with a loaded point
                "-".into(),
                p.mem_node.map_or("-".into(), |n| n.to_string()),
            ]);
        }
    }
    doc.table(t);
}
