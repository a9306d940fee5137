//! Per-CPU latency in a report: the chart coloured by latency group, the
//! groups the `lat-summary` found (else the points grouped by CPU node),
//! and the hidden-NUMA note.

use std::collections::{BTreeMap, BTreeSet};

use results::lat::{self, LatResult, PerCpuSummary};
use results::stats::measured;

use crate::chart::{Axis, Chart, Heatmap, Series, XyChart};
use crate::doc::{Document, Table};
use crate::fmt::opt;
use analysis::data::RunData;

/// Per-CPU latency: the chart coloured by latency group, the groups the
/// `lat-summary` found (else the points grouped by CPU node), and the
/// hidden-NUMA note.
pub(crate) fn section(doc: &mut Document, d: &RunData) {
    let per_cpu: Vec<&LatResult> =
        d.chase_mode(lat::Mode::PerCpu).filter(|p| p.median_ns.is_finite()).collect();
    let summaries: Vec<&PerCpuSummary> =
        d.per_cpu_summaries.iter().filter(|s| !s.groups.is_empty()).collect();
    if per_cpu.is_empty() && summaries.is_empty() {
        return;
    }
    doc.h(3, "Latency from each CPU");
    for s in summaries.iter().filter(|s| s.hidden_numa) {
        doc.callout(hidden_numa_text(s));
    }
    if !per_cpu.is_empty() {
        type Pts = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
        let mut series: BTreeMap<(usize, String), Pts> = BTreeMap::new();
        for p in &per_cpu {
            let found = summaries.iter().find_map(|s| {
                let matches_node = s.mem_node.is_none() || s.mem_node == p.mem_node;
                let i = s.group_of(p.cpu).filter(|_| matches_node)?;
                let g = &s.groups[i];
                let ns = opt(measured(g.median_ns), "ns");
                Some((i, format!("group {} (CPUs {}, {ns} ns)", i + 1, g.cpus)))
            });
            let key = found.unwrap_or_else(|| {
                let node = p.mem_node.map_or("?".into(), |n| n.to_string());
                (usize::MAX, format!("to memory node {node}"))
            });
            let (x, y) = (p.cpu as f64, p.median_ns);
            let e = series.entry(key).or_default();
            e.0.push((x, y));
            if let (Some(lo), Some(hi)) = (measured(p.min_ns), measured(p.max_ns)) {
                e.1.push((x, lo.min(y), hi.max(y)));
            }
        }
        let banded = series.values().any(|s| !s.1.is_empty());
        doc.chart(Chart::Xy(XyChart {
            title: "Latency from each CPU to one node's memory".into(),
            x: Axis::integer("CPU id"),
            y: Axis::linear("latency (ns)"),
            band_label: if banded { "min-max of the samples".into() } else { String::new() },
            series: series
                .into_iter()
                .map(|((_, name), (points, band))| Series::points(name, points).with_band(band))
                .collect(),
            ..XyChart::default()
        }));
    }
    if !summaries.is_empty() {
        let mut t = Table::with_header(&[
            "Group",
            "CPUs",
            "Count",
            "OS node(s)",
            "Memory node",
            "Min ns",
            "Median ns",
            "Max ns",
        ]);
        for s in &summaries {
            for (i, g) in s.groups.iter().enumerate() {
                t.push(vec![
                    (i + 1).to_string(),
                    g.cpus.to_string(),
                    g.cpus.len().to_string(),
                    if g.os_nodes.is_empty() { "-".into() } else { g.os_nodes.to_string() },
                    s.mem_node.map_or("-".into(), |n| n.to_string()),
                    opt(measured(g.min_ns), "ns"),
                    opt(measured(g.median_ns), "ns"),
                    opt(measured(g.max_ns), "ns"),
                ]);
            }
        }
        // the working set and stride the CPUs chased, when the points say
        let method = per_cpu.iter().find(|p| p.size_bytes > 0 && p.stride_bytes > 0).map_or(
            String::new(),
            |p| {
                format!(
                    "; {} working set, stride {} B",
                    topo::units::binary_size(p.size_bytes),
                    p.stride_bytes
                )
            },
        );
        doc.table(t.caption(format!("CPUs grouped by their latency to the memory node (groups separated by more than the measured noise{method})")));
        for s in &summaries {
            match (s.note.as_deref().filter(|n| !n.is_empty()), s.hidden_numa) {
                (Some(n), false) => doc.p(format!("Note: {n}.")),
                (None, false) if s.groups.len() == 1 => doc.p(format!(
                    "All {} measured CPUs have the same latency within noise: one latency group.",
                    s.groups[0].cpus.len()
                )),
                _ => {}
            }
        }
        return;
    }
    let mut groups: BTreeMap<String, Vec<&LatResult>> = BTreeMap::new();
    for p in &per_cpu {
        let key = format!("CPU node {}", p.cpu_node.map_or("?".into(), |n| n.to_string()));
        groups.entry(key).or_default().push(p);
    }
    let mut t =
        Table::with_header(&["CPUs", "Memory node", "Count", "Min ns", "Median ns", "Max ns"]);
    for (k, ps) in groups {
        let v: Vec<f64> = ps.iter().map(|p| p.median_ns).collect();
        let cpus: topo::CpuSet = ps.iter().map(|p| p.cpu).collect();
        let mem: BTreeSet<String> =
            ps.iter().map(|p| p.mem_node.map_or("?".into(), |n| n.to_string())).collect();
        let mut row = vec![
            format!("{k}: {}", cpus.to_list()),
            mem.into_iter().collect::<Vec<_>>().join(","),
            v.len().to_string(),
        ];
        row.extend(crate::fmt::min_median_max(&v));
        t.push(row);
    }
    doc.table(t);
}

/// "Hidden NUMA: the OS shows one node, but the CPUs fall into 2 latency
/// groups: CPUs 0-15 at 80 ns, CPUs 16-31 at 131 ns. ..."
pub(crate) fn hidden_numa_text(s: &PerCpuSummary) -> String {
    format!(
        "Hidden NUMA: the OS shows one node, but the CPUs fall into {} latency groups to memory node {}: {}. NUMA is probably hidden by numa=off, a NUMA-per-socket setting of 0 (NPS0) or firmware interleaving; the machine behaves as several nodes, so placement matters although the OS cannot manage it.",
        s.groups.len(),
        s.mem_node.map_or("?".into(), |n| n.to_string()),
        s.groups_text()
    )
}

/// The per-CPU sweep (`lat --per-cpu --sweep`, mode `per-cpu-sweep`): a
/// heat map of CPUs by working-set size, then per size the spread over
/// the CPUs, with the stride each size was chased at.
pub(crate) fn sweep_section(doc: &mut Document, d: &RunData) {
    let pts: Vec<&LatResult> =
        d.chase_mode(lat::Mode::PerCpuSweep).filter(|p| p.median_ns.is_finite()).collect();
    if pts.is_empty() {
        return;
    }
    doc.h(3, "Latency from each CPU against working-set size");
    let sizes: BTreeSet<u64> = pts.iter().map(|p| p.size_bytes).collect();
    let cpus: BTreeSet<u32> = pts.iter().map(|p| p.cpu).collect();
    let at = |cpu: u32, size: u64| {
        pts.iter().find(|p| p.cpu == cpu && p.size_bytes == size).map(|p| p.median_ns)
    };
    doc.chart(Chart::Heatmap(Heatmap {
        title: "Latency from each CPU against working-set size (median ns)".into(),
        x_label: "working set".into(),
        y_label: "CPU".into(),
        unit: "ns".into(),
        cols: sizes.iter().map(|s| topo::units::binary_size(*s)).collect(),
        rows: cpus.iter().map(|c| c.to_string()).collect(),
        values: cpus.iter().map(|&c| sizes.iter().map(|&s| at(c, s)).collect()).collect(),
    }));
    let mut t = Table::with_header(&["Size", "Stride B", "CPUs", "Min ns", "Median ns", "Max ns"]);
    for &s in &sizes {
        let here: Vec<&&LatResult> = pts.iter().filter(|p| p.size_bytes == s).collect();
        let v: Vec<f64> = here.iter().map(|p| p.median_ns).collect();
        let strides: BTreeSet<usize> = here.iter().map(|p| p.stride_bytes).collect();
        let mut row = vec![
            topo::units::binary_size(s),
            strides.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(","),
            v.len().to_string(),
        ];
        row.extend(crate::fmt::min_median_max(&v));
        t.push(row);
    }
    doc.table(t.caption(
        "Each size's median latency over the CPUs measured (lowest, median, highest), with the stride it was chased at (by default one line, 64 B, while the ring fits the last-level cache, the DRAM stride past it)",
    ));
    for s in &d.per_cpu_sweep_summaries {
        sweep_summary(doc, s);
    }
}

/// A stored per-CPU sweep summary: each CPU's plateaus (one column per
/// level, in the order the curves reach them), then the CPUs grouped at
/// each size, the DRAM size marked.
fn sweep_summary(doc: &mut Document, s: &lat::PerCpuSweepSummary) {
    let mem = s.mem_node.map_or("-".into(), |n| n.to_string());
    let mut labels: Vec<(u64, String)> = Vec::new();
    for p in s.plateaus.iter().flat_map(|c| &c.plateaus) {
        match labels.iter_mut().find(|(_, l)| *l == p.label) {
            Some(e) => e.0 = e.0.min(p.from_bytes),
            None => labels.push((p.from_bytes, p.label.clone())),
        }
    }
    labels.sort();
    if !labels.is_empty() {
        let mut head = vec!["CPU".to_string(), "OS node".into()];
        head.extend(labels.iter().map(|(_, l)| format!("{l} ns (sizes)")));
        let mut t = Table::new(head);
        for c in &s.plateaus {
            let mut row = vec![c.cpu.to_string(), c.cpu_node.map_or("-".into(), |n| n.to_string())];
            for (_, l) in &labels {
                row.push(c.plateaus.iter().find(|p| p.label == *l).map_or("-".into(), |p| {
                    format!(
                        "{} ({}-{})",
                        opt(measured(p.latency_ns), "ns"),
                        topo::units::binary_size(p.from_bytes),
                        topo::units::binary_size(p.to_bytes)
                    )
                }));
            }
            t.push(row);
        }
        doc.table(t.caption(format!(
            "The plateaus of each CPU's curve to memory node {mem}: the median of each point's fastest sample over the sizes the plateau spans; '-' where that CPU's curve has no such plateau"
        )));
    }
    if !s.groups_by_size.is_empty() {
        let mut t = Table::with_header(&[
            "Size",
            "Stride B",
            "Group",
            "CPUs",
            "Count",
            "OS node(s)",
            "Min ns",
            "Median ns",
            "Max ns",
            "Noise ns",
        ]);
        for g in &s.groups_by_size {
            let dram = s.dram_size_bytes == Some(g.size_bytes);
            for (i, c) in g.groups.iter().enumerate() {
                t.push(vec![
                    format!(
                        "{}{}",
                        topo::units::binary_size(g.size_bytes),
                        if dram { " (DRAM)" } else { "" }
                    ),
                    g.stride_bytes.to_string(),
                    format!("{} of {}", i + 1, g.groups.len()),
                    c.cpus.to_string(),
                    c.cpus.len().to_string(),
                    if c.os_nodes.is_empty() { "-".into() } else { c.os_nodes.to_string() },
                    opt(measured(c.min_ns), "ns"),
                    opt(measured(c.median_ns), "ns"),
                    opt(measured(c.max_ns), "ns"),
                    opt(measured(g.noise_ns), "ns"),
                ]);
            }
        }
        doc.table(t.caption(format!(
            "The CPUs grouped by their latency to memory node {mem} at each size (groups separated by more than the noise); one group at a size means every CPU measured the same there"
        )));
    }
    if let Some(n) = s.note.as_deref().filter(|n| !n.is_empty()) {
        doc.p(format!("Note: {n}."));
    }
}
