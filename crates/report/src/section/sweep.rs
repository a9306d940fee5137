//! Latency against working-set size in a report: the curve per memory node
//! and page size, with the measuring CPU's caches marked and the plateaus
//! of the sweep's summary drawn, and the plateaus against the cache sizes.

use std::collections::BTreeMap;

use results::lat::{self, LatResult, SweepSummary};
use results::stats::measured;
use store::LoadedRun;
use topo::Topology;

use crate::chart::{Axis, Chart, Marker, RefLine, Series, XyChart};
use crate::doc::{Document, Table};
use topo::units::binary_size as bytes;

use crate::fmt::{num, opt};
use analysis::data::RunData;

/// Latency against working-set size: the curve per memory node and page
/// size, the measuring CPU's caches marked and the plateaus drawn.
pub(crate) fn section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    let sweep: Vec<&LatResult> = d
        .chase_mode(lat::Mode::Sweep)
        .filter(|p| p.size_bytes > 0 && p.median_ns.is_finite())
        .collect();
    if !sweep.is_empty() {
        doc.h(3, "Latency against working-set size");
        type Curve = (Option<u32>, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
        let mut series: BTreeMap<String, Curve> = BTreeMap::new();
        for p in &sweep {
            let e = series.entry(sweep_series(p)).or_insert((p.mem_node, vec![], vec![]));
            let (x, y) = (p.size_bytes as f64, p.median_ns);
            e.1.push((x, y));
            if let (Some(lo), Some(hi)) = (measured(p.min_ns), measured(p.max_ns)) {
                e.2.push((x, lo.min(y), hi.max(y)));
            }
        }
        let names: Vec<String> = series.keys().cloned().collect();
        let has_band = series.values().any(|s| !s.2.is_empty());
        let all_ns = sweep.iter().map(|p| p.median_ns);
        let y = Axis::linear_or_log("latency (ns)", all_ns, 1.0);
        let y_label = if y.scale == crate::chart::Scale::Log10 {
            "latency (ns, log scale)"
        } else {
            "latency (ns)"
        };
        let mut chart = XyChart {
            title: "Latency against working-set size".into(),
            x: Axis::log2_bytes("working-set size (bytes, log scale)"),
            y: Axis { label: y_label.into(), ..y },
            series: series
                .iter()
                .map(|(name, (node, points, band))| {
                    Series::line(name.clone(), points.clone())
                        .with_band(band.clone())
                        .with_color(*node)
                })
                .collect(),
            markers: cache_markers(run.topology.get(), Some(sweep[0].cpu)),
            lines: vec![],
            band_label: if has_band { "min-max of the samples".into() } else { String::new() },
        };
        // The plateaus found, as flat dashed segments over their size range.
        for sum in &d.sweep_summaries {
            for p in sum.plateaus.iter().filter(|p| p.latency_ns.is_finite()) {
                let (a, b, ns) = (p.from_bytes, p.to_bytes, p.latency_ns);
                chart.lines.push(RefLine {
                    label: format!("{} plateau {} ns", p.label, num(ns, "ns")),
                    points: vec![(a as f64, ns), (b as f64, ns)],
                    in_domain: true,
                    color: None,
                });
            }
        }
        doc.chart(Chart::Xy(chart));
        if let Some(t) = strides_text(&sweep) {
            doc.p(t);
        }
        let mut sizes: Vec<u64> = sweep.iter().map(|p| p.size_bytes).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let mut header = vec!["Working set".to_string()];
        header.extend(names.iter().map(|n| format!("{n} (ns)")));
        let mut t = Table::new(header);
        for s in sizes {
            let mut row = vec![bytes(s)];
            for n in &names {
                let v = sweep
                    .iter()
                    .find(|p| p.size_bytes == s && &sweep_series(p) == n)
                    .map(|p| p.median_ns);
                row.push(opt(v, "ns"));
            }
            t.push(row);
        }
        doc.table(t);
    }
}

fn sweep_series(p: &LatResult) -> String {
    let mut s = format!("memory node {}", p.mem_node.map_or("?".into(), |n| n.to_string()));
    if !p.page_size.is_empty() {
        s.push_str(&format!(", {} pages", p.page_size));
    }
    s
}

/// Cache sizes to mark on the sweep, for the CPU the sweep ran on (or
/// CPU 0): one marker per level, from the topology's `caches`.
fn cache_markers(topo: Option<&Topology>, cpu: Option<u32>) -> Vec<Marker> {
    let Some(topo) = topo else { return vec![] };
    let mut best: BTreeMap<(u8, String), (u32, u64)> = BTreeMap::new();
    for c in topo.caches.iter().filter(|c| c.kind != topo::CacheKind::Instruction) {
        // Prefer the instance holding the sweep's CPU, else the lowest CPU.
        let rank = match cpu {
            Some(x) if c.cpus.contains(x) => 0,
            _ => 1 + c.cpus.first().unwrap_or(u32::MAX / 2),
        };
        let e = best
            .entry((c.level, crate::environment::name_of(&c.kind)))
            .or_insert((u32::MAX, c.size_bytes));
        if rank < e.0 {
            *e = (rank, c.size_bytes);
        }
    }
    best.into_iter()
        .map(|((level, kind), (_, size))| Marker {
            x: size as f64,
            label: format!("L{level}{} {}", if kind == "data" { "d" } else { "" }, bytes(size)),
        })
        .collect()
}

/// The plateaus the sweep found, against the measuring CPU's cache sizes.
pub(crate) fn plateau_section(doc: &mut Document, d: &RunData) {
    let sums: Vec<&SweepSummary> = d
        .sweep_summaries
        .iter()
        .filter(|s| !s.plateaus.is_empty() || !s.caches.is_empty())
        .collect();
    if sums.is_empty() {
        return;
    }
    let mut t = Table::with_header(&[
        "Level",
        "Cache size",
        "Plateau from",
        "Plateau to",
        "Points",
        "Latency ns",
    ]);
    let mut missing = Vec::new();
    for s in &sums {
        for p in &s.plateaus {
            let cache = p.cache_bytes.or_else(|| {
                let level: u8 = p.label.trim_start_matches(['L', 'l']).parse().ok()?;
                s.caches.iter().find(|c| c.level == level).map(|c| c.size_bytes)
            });
            t.push(vec![
                p.label.clone(),
                cache.map_or("-".into(), bytes),
                bytes(p.from_bytes),
                bytes(p.to_bytes),
                p.points.to_string(),
                opt(measured(p.latency_ns), "ns"),
            ]);
        }
        for c in &s.caches {
            let name = format!("L{}", c.level);
            if !s.plateaus.iter().any(|p| p.label.eq_ignore_ascii_case(&name)) {
                missing.push(format!("{name} ({})", bytes(c.size_bytes)));
            }
        }
    }
    if t.is_empty() {
        doc.p("The sweep found no latency plateau (the curve never settled over three or more sizes).");
        return;
    }
    doc.table(t.caption("Latency plateaus of the sweep against the cache sizes of its CPU (latency: median over the plateau of each size's fastest sample)"));
    if !missing.is_empty() {
        doc.p(format!(
            "No plateau was found for {}: the sweep's sizes did not settle between the neighbouring levels (a small cache, or too few sizes).",
            missing.join(", ")
        ));
    }
}

/// The strides a sweep's points were chased at, in words: `Chased at
/// stride 64 B up to 32 MiB, 256 B from 48 MiB.`; `None` when no point
/// records its stride.
fn strides_text(sweep: &[&LatResult]) -> Option<String> {
    let mut pts: Vec<(u64, usize)> = sweep
        .iter()
        .filter(|p| p.stride_bytes > 0)
        .map(|p| (p.size_bytes, p.stride_bytes))
        .collect();
    pts.sort_unstable();
    pts.dedup();
    let (first, last) = (*pts.first()?, *pts.last()?);
    if pts.iter().all(|p| p.1 == first.1) {
        return Some(format!("Chased at stride {} B at every size.", first.1));
    }
    // the last size at the first stride and the first at the last one
    let upto = pts.iter().filter(|p| p.1 == first.1).map(|p| p.0).max()?;
    let from = pts.iter().filter(|p| p.1 == last.1).map(|p| p.0).min()?;
    Some(format!(
        "Chased at stride {} B up to {} (every cache set used), {} B from {} (no help from spatial prefetchers).",
        first.1,
        bytes(upto),
        last.1,
        bytes(from)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(size: u64, stride: usize) -> LatResult {
        let v = serde_json::json!({"mode": "sweep", "cpu": 0, "cpu_node": 0, "mem_node": 0,
            "size_bytes": size, "stride_bytes": stride, "median_ns": 5.0});
        match results::upgrade::read("lat", &v).record {
            results::Record::Lat(l) => match *l {
                results::lat::Lat::Chase(c) => c,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_sweeps_strides_are_named_with_where_they_change() {
        let mb = 1u64 << 20;
        let v = [pt(mb, 64), pt(32 * mb, 64), pt(48 * mb, 256), pt(64 * mb, 256)];
        let refs: Vec<&LatResult> = v.iter().collect();
        let t = strides_text(&refs).unwrap();
        assert!(t.starts_with("Chased at stride 64 B up to 32 MiB"), "{t}");
        assert!(t.contains("256 B from 48 MiB"), "{t}");
        let one = [pt(mb, 256), pt(2 * mb, 256)];
        let refs: Vec<&LatResult> = one.iter().collect();
        assert_eq!(strides_text(&refs).unwrap(), "Chased at stride 256 B at every size.");
        let none = [pt(mb, 0)];
        assert_eq!(strides_text(&none.iter().collect::<Vec<_>>()), None);
    }
}
