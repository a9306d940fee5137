//! Builds the report of a run (optionally compared with others) as a
//! [`Document`]: environment, commands, results, comparison, analysis and
//! recommendations, appendix of raw figures.

use std::collections::{BTreeMap, BTreeSet};

use results::context::{Configuration, Reading};
use serde_json::Value;
use store::{LoadedRun, RunStatus};
use topo::Topology;

use crate::chart::{Axis, Chart, Heatmap, Marker, RefLine, Series, XyChart};
use crate::doc::{Align, Document, Table};
use crate::fmt::{bytes, fig, num, opt, plain};
use crate::placements::ExecView;
use crate::summary::tables_of;
use analysis::data::{
    scalar_text, text as field_text, Bw, Finding, Lat, PerCpuSummary, RunData, SweepSummary,
};
use analysis::metrics::{bw_matrix, lat_matrix, metrics, MetricKey};
use analysis::study::Study;

/// Results whose spread is above this are called noisy (percent).
pub const NOISY_SPREAD_PCT: f64 = 5.0;

/// The report of `run`, compared with `compare` when not empty (`run` is
/// the baseline).
pub fn build_report(run: &LoadedRun, compare: &[LoadedRun]) -> Document {
    build_report_with(run, compare, None)
}

/// The report of `run` with a settings study: `study` when given (groups
/// of runs, `report label:A --compare label:B`), else, when `compare` is not
/// empty, each run as its own group with `run` as the baseline.
pub fn build_report_with(
    run: &LoadedRun,
    compare: &[LoadedRun],
    study: Option<&Study>,
) -> Document {
    let d = RunData::of(run);
    let mut doc = Document::new(format!("numaprobe report: {}", run.display_name()));
    let s = &run.summary;
    let status = match (&s.status, &s.message) {
        (st, Some(m)) if *st != RunStatus::Complete => format!("{st}: {m}"),
        (st, _) => st.to_string(),
    };
    doc.p(format!(
        "Run {} ({}), {status}. Started {}, finished {}. Measured with numaprobe {} on {}.",
        s.id,
        s.uuid,
        s.started,
        s.finished.as_deref().unwrap_or("-"),
        s.tool_version,
        s.machine
    ));

    doc.glance(crate::glance::glance(run, &d));
    environment(&mut doc, run);

    doc.h(2, "Commands");
    let mut cmds = String::new();
    for r in std::iter::once(run).chain(compare) {
        if !compare.is_empty() {
            cmds.push_str(&format!("# run {} ({})\n", r.summary.id, r.display_name()));
        }
        cmds.push_str(&r.summary.command_line);
        cmds.push('\n');
    }
    doc.code(cmds);

    let tables = tables_of(&d);
    let exec = ExecView::of(run, &d.exec);
    let hidden: Vec<String> = d
        .per_cpu_summaries
        .iter()
        .filter(|s| s.hidden_numa && !s.groups.is_empty())
        .map(hidden_numa_text)
        .collect();
    // A run of `numaprobe exec` holds only exec results: no empty summary.
    if !(tables.is_empty() && hidden.is_empty() && exec.is_some()) {
        doc.h(2, "Summary");
        for h in &hidden {
            doc.callout(h.clone());
        }
        if tables.is_empty() {
            doc.p("This run holds no bandwidth or latency results.");
        }
        for t in tables {
            doc.table(t);
        }
    }

    bandwidth(&mut doc, &d, run);
    latency(&mut doc, &d, run);
    crate::hmat::section(&mut doc, run);
    if let Some(e) = &exec {
        e.render(&mut doc);
    }

    match study {
        Some(s) => crate::study::section(s, &mut doc),
        None if !compare.is_empty() => {
            let mut all = vec![run.clone()];
            all.extend(compare.iter().cloned());
            crate::study::section(&Study::of_runs(&all), &mut doc);
        }
        None => {}
    }

    analysis(&mut doc, run, &d, exec.as_ref());
    appendix(&mut doc, run);
    doc
}

fn environment(doc: &mut Document, run: &LoadedRun) {
    let topo = run.topology.get();
    let mi = &run.machine_info;
    let cfg = &run.config;
    let setting = |r: &Option<Reading<String>>| r.as_ref().and_then(Reading::text);
    doc.h(2, "Environment");
    let mut t = Table::with_header(&["Item", "Value"]);
    t.align = vec![Align::Left, Align::Left];
    let mut row = |k: &str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            t.push(vec![k.to_string(), v]);
        }
    };
    row("Machine", Some(run.summary.machine.clone()));
    row(
        "CPU",
        topo.and_then(|t| t.cpu_model.clone()).or_else(|| mi.cpu_model().map(str::to_string)),
    );
    row("Architecture", topo.and_then(|t| t.arch.clone()));
    row(
        "Packages",
        topo.map(|t| t.packages.len().to_string())
            .or_else(|| mi.packages.as_ref().map(|p| p.to_string())),
    );
    row("NUMA nodes", topo.and_then(nodes_text));
    row(
        "NUMA mode",
        topo.and_then(|t| numa_mode_text(&t.numa_mode)).or_else(|| setting(&cfg.numa_mode)),
    );
    row("Caches", topo.and_then(caches_text));
    row("Kernel", topo.and_then(|t| t.kernel.clone()).or_else(|| setting(&cfg.kernel)));
    row(
        "Kernel command line",
        topo.and_then(|t| t.cmdline.raw.clone())
            .or_else(|| setting(&cfg.cmdline))
            .map(|c| cmdline_text(&c)),
    );
    row("Machine fingerprint", Some(run.summary.machine_fingerprint.clone()));
    row("Configuration fingerprint", Some(run.summary.config_hash.clone()));
    row("numaprobe version", Some(run.summary.tool_version.clone()));
    doc.table(t);

    let mut settings =
        Table::with_header(&["Setting", "Value"]).caption("BIOS and OS settings found");
    settings.align = vec![Align::Left, Align::Left];
    for (k, v) in settings_found(cfg) {
        settings.push(vec![k, v]);
    }
    if !settings.is_empty() {
        doc.h(3, "Settings");
        doc.table(settings);
    }

    if let Some(t) = topo.and_then(distance_table) {
        doc.h(3, "Node distances (SLIT)");
        doc.table(t);
    }
}

/// Options of the kernel command line that change how memory behaves
/// (prefixes of the option names).
const MEMORY_OPTIONS: [&str; 24] = [
    "numa",
    "hugepage",
    "default_hugepagesz",
    "transparent_hugepage",
    "iommu",
    "intel_iommu",
    "amd_iommu",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "mem=",
    "memmap",
    "movablecore",
    "kernelcore",
    "memhp",
    "mitigations",
    "init_on_",
    "page_alloc",
    "nosmt",
    "max_cstate",
    "idle",
    "intel_pstate",
    "amd_pstate",
    "cxl",
];

/// Kernel command lines longer than this are cut to their memory options.
const CMDLINE_MAX: usize = 120;

/// The kernel command line, or, when long, the options that matter to
/// memory and the number of the others (the full line is in the appendix).
fn cmdline_text(raw: &str) -> String {
    if raw.chars().count() <= CMDLINE_MAX {
        return raw.to_string();
    }
    let words: Vec<&str> = raw.split_whitespace().collect();
    let kept: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| MEMORY_OPTIONS.iter().any(|o| w.starts_with(o) || w.contains(&format!(".{o}"))))
        .collect();
    let others = words.len() - kept.len();
    let head = if kept.is_empty() { "no memory options".to_string() } else { kept.join(" ") };
    format!("{head} (+{others} other words; the full line is in the appendix)")
}

/// The settings of a configuration document as `a.b.c = value` pairs (its
/// scalar leaves, nested objects flattened, `null` left out), without its
/// fingerprint.
pub(crate) fn settings_found(cfg: &Configuration) -> Vec<(String, String)> {
    let mut flat = Vec::new();
    flatten("", &cfg.to_json(), &mut flat);
    flat.retain(|(k, _)| k != "fingerprint");
    flat
}

/// `a.b.c = value` pairs of the scalar leaves of a JSON document.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        Value::Null => {}
        other => match scalar_text(other) {
            Some(s) => out.push((prefix.to_string(), s)),
            None => out.push((prefix.to_string(), other.to_string())),
        },
    }
}

/// The name serde writes for a topology enum (`cpu+memory`,
/// `nodes-per-package`, `data`).
fn name_of(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => "?".into(),
    }
}

fn nodes_text(topo: &Topology) -> Option<String> {
    let parts: Vec<String> = topo
        .nodes
        .iter()
        .map(|n| {
            let mut s = format!("node {}", n.id);
            let mut bits = Vec::new();
            if !n.cpus.is_empty() {
                bits.push(format!("CPUs {}", n.cpus));
            }
            bits.push(bytes(n.mem_total_bytes));
            bits.push(name_of(&n.kind));
            s.push_str(&format!(" ({})", bits.join(", ")));
            s
        })
        .collect();
    Some(format!("{}: {}", topo.nodes.len(), parts.join("; ")))
}

/// The mode's label, or its candidates when the label is not known
/// (`NPS4 or L3-as-NUMA (ambiguous)`), then the reason.
pub(crate) fn numa_mode_text(m: &topo::NumaMode) -> Option<String> {
    let candidates: Vec<String> = m.alternatives.iter().filter_map(|a| a.label.clone()).collect();
    let name = m
        .label
        .clone()
        .or_else(|| (!candidates.is_empty()).then(|| candidates.join(" or ")))
        .unwrap_or_else(|| name_of(&m.kind));
    let name = match m.confidence {
        topo::Confidence::Ambiguous => format!("{name} (ambiguous)"),
        _ => name,
    };
    Some(format!("{name}: {}", m.reason))
}

/// `L1d 48 KiB x 2, L2 2 MiB x 2, L3 105 MiB x 1`: distinct caches per level.
fn caches_text(topo: &Topology) -> Option<String> {
    let mut by: BTreeMap<(u8, String), (u64, usize)> = BTreeMap::new();
    for c in topo.caches.iter().filter(|c| c.kind != topo::CacheKind::Instruction) {
        let e = by.entry((c.level, name_of(&c.kind))).or_insert((c.size_bytes, 0));
        e.1 += 1;
    }
    if by.is_empty() {
        return None;
    }
    Some(
        by.iter()
            .map(|((l, k), (size, n))| {
                let name = if k == "data" { format!("L{l}d") } else { format!("L{l}") };
                format!("{name} {} x {n}", bytes(*size))
            })
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn distance_table(topo: &Topology) -> Option<Table> {
    let nodes = &topo.nodes;
    if nodes.len() < 2 {
        return None;
    }
    let ids: Vec<String> = nodes.iter().map(|n| n.id.to_string()).collect();
    let mut header = vec!["node".to_string()];
    header.extend(ids.iter().cloned());
    let mut t = Table::new(header);
    for (n, id) in nodes.iter().zip(&ids) {
        if n.distances.is_empty() {
            return None;
        }
        let mut row = vec![id.clone()];
        row.extend(n.distances.iter().map(|x| x.to_string()));
        t.push(row);
    }
    Some(t)
}

fn pages(p: &Bw) -> String {
    match &p.placement {
        Some(pl) => {
            let f = pl.fraction.map(|f| format!("{:.1}%", f * 100.0)).unwrap_or_else(|| "?".into());
            if pl.flagged {
                format!("{f} (flagged)")
            } else {
                f
            }
        }
        None => "-".into(),
    }
}

fn bw_row(p: &Bw, first: String) -> Vec<String> {
    vec![
        first,
        p.memory(),
        p.kernel.clone(),
        p.threads.map_or("-".into(), |t| t.to_string()),
        fig(p.best_gbs, p.noise_pct, "GB/s"),
        fig(p.median_gbs, p.noise_pct, "GB/s"),
        opt(p.spread_pct, "%"),
        pages(p),
        p.isa.clone().unwrap_or_else(|| "-".into()),
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

fn bandwidth(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    if d.bw.is_empty() {
        return;
    }
    doc.h(2, "Bandwidth");
    doc.p("GB/s = 10^9 bytes per second, counted as STREAM counts them. Best is the fastest repetition, spread is (max - min) / median. Figures keep the digits their noise (robust CV of the repetitions) supports.");

    let mut t = Table::with_header(&BW_HEADER);
    for p in d.bw_mode("local") {
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
    for mode in ["global", "interleave", "weighted"] {
        for p in d.bw_mode(mode) {
            t.push(bw_row(p, mode.to_string()));
        }
    }
    if !t.is_empty() {
        doc.h(3, "Whole machine");
        doc.table(t);
    }

    let (kernel, cells) = bw_matrix(d);
    if !cells.is_empty() {
        let kernel = kernel.unwrap_or_default();
        doc.h(3, "Node-to-node bandwidth");
        if cells.len() > 1 {
            let hm = matrix_heatmap(
                format!("Bandwidth matrix ({kernel}, best GB/s)"),
                "GB/s",
                cells.iter().map(|(k, p)| (*k, p.best_gbs)),
            );
            let ratio = ratio_heatmap(&hm, "Bandwidth relative to the CPU node's local memory");
            doc.chart(Chart::Heatmap(hm));
            if let Some(r) = ratio {
                doc.chart(Chart::Heatmap(r));
            }
        } else {
            doc.p("One node pair only (a single-node machine): the matrix is the table below, no heatmap is drawn.");
        }
        let mut t = Table::with_header(&BW_HEADER);
        for p in d.bw_mode("matrix") {
            t.push(bw_row(p, p.cpu_node.map_or("?".into(), |n| n.to_string())));
        }
        doc.table(t);
    }

    let scaling: Vec<&Bw> =
        d.bw_mode("scaling").filter(|p| p.threads.is_some() && p.best_gbs.is_some()).collect();
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
fn scaling_chart(scaling: &[&Bw], node_peak: Option<f64>) -> XyChart {
    type Curve = (Option<i64>, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
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
        let (t, best) = (p.threads.unwrap_or(0) as f64, p.best_gbs.unwrap_or(0.0));
        e.1.push((t, best));
        if let (Some(lo), Some(hi)) = (p.min_gbs, p.max_gbs) {
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
                color: node.and_then(|n| usize::try_from(n).ok()),
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
fn saturation_notes(scaling: &[&Bw]) -> Vec<String> {
    type Curve = Vec<(i64, f64)>;
    let mut groups: BTreeMap<(String, Option<i64>), Curve> = BTreeMap::new();
    for p in scaling {
        if let (Some(t), Some(g)) = (p.threads, p.best_gbs) {
            groups.entry((p.kernel.clone(), p.cpu_node)).or_default().push((t, g));
        }
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

fn matrix_heatmap(
    title: String,
    unit: &str,
    cells: impl Iterator<Item = ((i64, i64), Option<f64>)>,
) -> Heatmap {
    let cells: BTreeMap<(i64, i64), Option<f64>> = cells.collect();
    let rows: BTreeSet<i64> = cells.keys().map(|k| k.0).collect();
    let cols: BTreeSet<i64> = cells.keys().map(|k| k.1).collect();
    Heatmap {
        title,
        x_label: "memory node".into(),
        y_label: "CPU node".into(),
        unit: unit.into(),
        cols: cols.iter().map(|c| c.to_string()).collect(),
        rows: rows.iter().map(|r| r.to_string()).collect(),
        values: rows
            .iter()
            .map(|r| cols.iter().map(|c| cells.get(&(*r, *c)).copied().flatten()).collect())
            .collect(),
    }
}

/// The remote/local view of a node matrix: each cell divided by its row's
/// local cell (CPU node = memory node). `None` when no row has both a local
/// and a remote cell.
fn ratio_heatmap(hm: &Heatmap, title: &str) -> Option<Heatmap> {
    let mut any_remote = false;
    let values: Vec<Vec<Option<f64>>> = hm
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let row = &hm.values[i];
            let local = hm
                .cols
                .iter()
                .position(|c| c == r)
                .and_then(|j| row.get(j).copied().flatten())
                .filter(|v| *v > 0.0);
            row.iter()
                .enumerate()
                .map(|(j, v)| {
                    let l = local?;
                    if hm.cols.get(j) != Some(r) && v.is_some() {
                        any_remote = true;
                    }
                    v.map(|v| v / l)
                })
                .collect()
        })
        .collect();
    any_remote.then(|| Heatmap {
        title: format!("{title} (remote / local)"),
        unit: "x local".into(),
        values,
        ..hm.clone()
    })
}

fn lat_matrix_table(d: &RunData) -> Table {
    let mut t = Table::with_header(&[
        "CPU node",
        "Memory node",
        "Size",
        "Page size",
        "Median ns",
        "p90 ns",
        "p99 ns",
        "Spread %",
    ]);
    for p in d.lat_mode("matrix") {
        t.push(vec![
            p.cpu_node.map_or("?".into(), |n| n.to_string()),
            p.mem_node.map_or("?".into(), |n| n.to_string()),
            p.size_bytes.map_or("-".into(), bytes),
            p.page_size.clone().unwrap_or_else(|| "-".into()),
            fig(p.median_ns, p.noise_pct, "ns"),
            fig(p.p90_ns, p.noise_pct, "ns"),
            fig(p.p99_ns, p.noise_pct, "ns"),
            opt(p.spread_pct, "%"),
        ]);
    }
    t
}

/// Cache sizes to mark on the sweep, for the CPU the sweep ran on (or
/// CPU 0): one marker per level, from the topology's `caches`.
fn cache_markers(topo: Option<&Topology>, cpu: Option<i64>) -> Vec<Marker> {
    let Some(topo) = topo else { return vec![] };
    let cpu = cpu.and_then(|c| u32::try_from(c).ok());
    let mut best: BTreeMap<(u8, String), (u32, u64)> = BTreeMap::new();
    for c in topo.caches.iter().filter(|c| c.kind != topo::CacheKind::Instruction) {
        // Prefer the instance holding the sweep's CPU, else the lowest CPU.
        let rank = match cpu {
            Some(x) if c.cpus.contains(x) => 0,
            _ => 1 + c.cpus.first().unwrap_or(u32::MAX / 2),
        };
        let e = best.entry((c.level, name_of(&c.kind))).or_insert((u32::MAX, c.size_bytes));
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

fn latency(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    if d.lat.is_empty() {
        return;
    }
    doc.h(2, "Latency");
    doc.p("Dependent loads of a random pointer chase; ns per load, median of the samples unless said otherwise.");
    crate::latency::method_section(doc, d);
    lat_points_section(doc, d);
    lat_matrix_section(doc, d, run);
    crate::latency::histogram_section(doc, d);
    sweep_section(doc, d, run);
    plateau_section(doc, d);
    per_cpu_section(doc, d);
    crate::latency::loaded_section(doc, d);
    c2c_section(doc, d);
}

/// Single measurements (mode `point`).
fn lat_points_section(doc: &mut Document, d: &RunData) {
    let point: Vec<&Lat> = d.lat_mode("point").collect();
    if !point.is_empty() {
        doc.h(3, "Single measurements");
        let mut t = Table::with_header(&[
            "CPU",
            "CPU node",
            "Memory node",
            "Size",
            "Page size",
            "Median ns",
            "p90 ns",
            "p99 ns",
            "Spread %",
        ]);
        for p in point {
            t.push(vec![
                p.cpu.map_or("-".into(), |c| c.to_string()),
                p.cpu_node.map_or("-".into(), |c| c.to_string()),
                p.mem_node.map_or("-".into(), |c| c.to_string()),
                p.size_bytes.map_or("-".into(), bytes),
                p.page_size.clone().unwrap_or_else(|| "-".into()),
                fig(p.median_ns, p.noise_pct, "ns"),
                fig(p.p90_ns, p.noise_pct, "ns"),
                fig(p.p99_ns, p.noise_pct, "ns"),
                opt(p.spread_pct, "%"),
            ]);
        }
        doc.table(t);
    }
}

/// The node-to-node matrix: heatmap and table, then remote latency per
/// distance tier of the run's topology.
fn lat_matrix_section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    let cells = lat_matrix(d);
    if !cells.is_empty() {
        doc.h(3, "Node-to-node latency");
        if cells.len() > 1 {
            let hm = matrix_heatmap(
                "Latency matrix (median ns)".into(),
                "ns",
                cells.iter().map(|(k, p)| (*k, p.median_ns)),
            );
            let ratio = ratio_heatmap(&hm, "Latency relative to the CPU node's local memory");
            doc.chart(Chart::Heatmap(hm));
            if let Some(r) = ratio {
                doc.chart(Chart::Heatmap(r));
            }
        } else {
            doc.p("One node pair only (a single-node machine): the matrix is the table below, no heatmap is drawn.");
        }
        doc.table(lat_matrix_table(d));
        let tier_cells: Vec<(i64, i64, f64)> =
            cells.iter().filter_map(|((c, m), p)| Some((*c, *m, p.median_ns?))).collect();
        if let Some(t) =
            run.topology.get().and_then(|t| crate::tiers::latency_by_tier(t, &tier_cells))
        {
            doc.h(3, "Remote latency by distance tier");
            doc.p("Node pairs grouped by their SLIT distance (the topology's distance tiers): one figure per tier, since a machine with several remote distances has several remote latencies.");
            doc.table(t);
        }
    }
}

/// Latency against working-set size: the curve per memory node and page
/// size, the measuring CPU's caches marked and the plateaus drawn.
fn sweep_section(doc: &mut Document, d: &RunData, run: &LoadedRun) {
    let sweep: Vec<&Lat> =
        d.lat_mode("sweep").filter(|p| p.size_bytes.is_some() && p.median_ns.is_some()).collect();
    if !sweep.is_empty() {
        doc.h(3, "Latency against working-set size");
        type Curve = (Option<i64>, Vec<(f64, f64)>, Vec<(f64, f64, f64)>);
        let mut series: BTreeMap<String, Curve> = BTreeMap::new();
        for p in &sweep {
            let e = series.entry(sweep_series(p)).or_insert((p.mem_node, vec![], vec![]));
            let (x, y) = (p.size_bytes.unwrap_or(0) as f64, p.median_ns.unwrap_or(0.0));
            e.1.push((x, y));
            if let (Some(lo), Some(hi)) = (p.min_ns, p.max_ns) {
                e.2.push((x, lo.min(y), hi.max(y)));
            }
        }
        let names: Vec<String> = series.keys().cloned().collect();
        let has_band = series.values().any(|s| !s.2.is_empty());
        let all_ns = sweep.iter().filter_map(|p| p.median_ns);
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
            markers: cache_markers(run.topology.get(), sweep[0].cpu),
            lines: vec![],
            band_label: if has_band { "min-max of the samples".into() } else { String::new() },
        };
        // The plateaus found, as flat dashed segments over their size range.
        for sum in &d.sweep_summaries {
            for p in &sum.plateaus {
                if let (Some(a), Some(b), Some(ns)) = (p.from_bytes, p.to_bytes, p.latency_ns) {
                    chart.lines.push(RefLine {
                        label: format!("{} plateau {} ns", p.label, num(ns, "ns")),
                        points: vec![(a as f64, ns), (b as f64, ns)],
                        in_domain: true,
                        color: None,
                    });
                }
            }
        }
        doc.chart(Chart::Xy(chart));
        let mut sizes: Vec<u64> = sweep.iter().filter_map(|p| p.size_bytes).collect();
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
                    .find(|p| p.size_bytes == Some(s) && &sweep_series(p) == n)
                    .and_then(|p| p.median_ns);
                row.push(opt(v, "ns"));
            }
            t.push(row);
        }
        doc.table(t);
    }
}

/// Core-to-core latency: heatmap (3 to 64 CPUs) and a table per relation.
fn c2c_section(doc: &mut Document, d: &RunData) {
    let c2c: Vec<&Lat> = d
        .lat_mode("c2c")
        .filter(|p| p.cpu_a.is_some() && p.cpu_b.is_some() && p.median_ns.is_some())
        .collect();
    if !c2c.is_empty() {
        doc.h(3, "Core-to-core latency");
        let cpus: BTreeSet<i64> =
            c2c.iter().flat_map(|p| [p.cpu_a.unwrap_or(0), p.cpu_b.unwrap_or(0)]).collect();
        if cpus.len() < 3 {
            doc.p("One CPU pair only: its figure is in the table below, no heatmap is drawn.");
        } else if cpus.len() <= 64 {
            let mut cells: BTreeMap<(i64, i64), Option<f64>> = BTreeMap::new();
            for p in &c2c {
                let (a, b) = (p.cpu_a.unwrap_or(0), p.cpu_b.unwrap_or(0));
                cells.insert((a, b), p.median_ns);
                cells.entry((b, a)).or_insert(p.median_ns);
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
        let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for p in &c2c {
            by.entry(p.relation.clone().unwrap_or_else(|| "unknown".into()))
                .or_default()
                .push(p.median_ns.unwrap_or(0.0));
        }
        let mut t = Table::with_header(&["Relation", "Pairs", "Min ns", "Median ns", "Max ns"]);
        for (rel, mut v) in by {
            v.sort_by(f64::total_cmp);
            t.push(vec![
                rel,
                v.len().to_string(),
                num(v[0], "ns"),
                num(results::stats::percentile_sorted(&v, 50.0), "ns"),
                num(v[v.len() - 1], "ns"),
            ]);
        }
        doc.table(t);
    }
}

/// The plateaus the sweep found, against the measuring CPU's cache sizes.
fn plateau_section(doc: &mut Document, d: &RunData) {
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
                let level: i64 = p.label.trim_start_matches(['L', 'l']).parse().ok()?;
                s.caches.iter().find(|c| c.0 == level).map(|c| c.1)
            });
            t.push(vec![
                p.label.clone(),
                cache.map_or("-".into(), bytes),
                p.from_bytes.map_or("-".into(), bytes),
                p.to_bytes.map_or("-".into(), bytes),
                p.points.map_or("-".into(), |n| n.to_string()),
                opt(p.latency_ns, "ns"),
            ]);
        }
        for (level, size) in &s.caches {
            let name = format!("L{level}");
            if !s.plateaus.iter().any(|p| p.label.eq_ignore_ascii_case(&name)) {
                missing.push(format!("{name} ({})", bytes(*size)));
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

/// Per-CPU latency: the chart coloured by latency group, the groups the
/// `lat-summary` found (else the points grouped by their `group` field or
/// CPU node), and the hidden-NUMA note.
fn per_cpu_section(doc: &mut Document, d: &RunData) {
    let per_cpu: Vec<&Lat> =
        d.lat_mode("per-cpu").filter(|p| p.cpu.is_some() && p.median_ns.is_some()).collect();
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
            let cpu = p.cpu.unwrap_or(0);
            let found = summaries.iter().find_map(|s| {
                let matches_node = s.mem_node.is_none() || s.mem_node == p.mem_node;
                let i = s.group_of(cpu).filter(|_| matches_node)?;
                let g = &s.groups[i];
                Some((
                    i,
                    format!("group {} (CPUs {}, {} ns)", i + 1, g.cpus, opt(g.median_ns, "ns")),
                ))
            });
            let key = match (found, &p.group) {
                (Some(k), _) => k,
                (None, Some(g)) => (usize::MAX, format!("group {g}")),
                (None, None) => (
                    usize::MAX,
                    format!("to memory node {}", p.mem_node.map_or("?".into(), |n| n.to_string())),
                ),
            };
            let (x, y) = (cpu as f64, p.median_ns.unwrap_or(0.0));
            let e = series.entry(key).or_default();
            e.0.push((x, y));
            if let (Some(lo), Some(hi)) = (p.min_ns, p.max_ns) {
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
                    g.cpus.clone(),
                    g.count.to_string(),
                    g.os_nodes.clone().unwrap_or_else(|| "-".into()),
                    s.mem_node.map_or("-".into(), |n| n.to_string()),
                    opt(g.min_ns, "ns"),
                    opt(g.median_ns, "ns"),
                    opt(g.max_ns, "ns"),
                ]);
            }
        }
        doc.table(t.caption("CPUs grouped by their latency to the memory node (groups separated by more than the measured noise)"));
        for s in &summaries {
            match (&s.note, s.hidden_numa) {
                (Some(n), false) => doc.p(format!("Note: {n}.")),
                (None, false) if s.groups.len() == 1 => doc.p(format!(
                    "All {} measured CPUs have the same latency within noise: one latency group.",
                    s.groups[0].count
                )),
                _ => {}
            }
        }
        return;
    }
    let mut groups: BTreeMap<String, Vec<&Lat>> = BTreeMap::new();
    for p in &per_cpu {
        let key = match &p.group {
            Some(g) => format!("group {g}"),
            None => format!("CPU node {}", p.cpu_node.map_or("?".into(), |n| n.to_string())),
        };
        groups.entry(key).or_default().push(p);
    }
    let mut t =
        Table::with_header(&["CPUs", "Memory node", "Count", "Min ns", "Median ns", "Max ns"]);
    for (k, ps) in groups {
        let mut v: Vec<f64> = ps.iter().filter_map(|p| p.median_ns).collect();
        v.sort_by(f64::total_cmp);
        let cpus: topo::CpuSet =
            ps.iter().filter_map(|p| p.cpu.and_then(|c| u32::try_from(c).ok())).collect();
        let mem: BTreeSet<String> =
            ps.iter().map(|p| p.mem_node.map_or("?".into(), |n| n.to_string())).collect();
        t.push(vec![
            format!("{k}: {}", cpus.to_list()),
            mem.into_iter().collect::<Vec<_>>().join(","),
            v.len().to_string(),
            num(v[0], "ns"),
            num(results::stats::percentile_sorted(&v, 50.0), "ns"),
            num(v[v.len() - 1], "ns"),
        ]);
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

fn sweep_series(p: &Lat) -> String {
    let mut s = format!("memory node {}", p.mem_node.map_or("?".into(), |n| n.to_string()));
    if let Some(ps) = &p.page_size {
        s.push_str(&format!(", {ps} pages"));
    }
    s
}

/// A generic table of payloads: one column per scalar field, in order of
/// first appearance.
fn generic_table(payloads: &[&Value], skip: &[&str]) -> Table {
    let mut keys: Vec<String> = Vec::new();
    for p in payloads {
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
    let rank = |k: &String| crate::csv::FIELDS.iter().position(|f| f == k).unwrap_or(usize::MAX);
    keys.sort_by_key(|k| rank(k));
    let mut t = Table::new(keys.clone());
    t.align = keys
        .iter()
        .map(|k| {
            let numeric = payloads
                .iter()
                .all(|p| matches!(p.get(k), None | Some(Value::Number(_)) | Some(Value::Null)));
            if numeric {
                Align::Right
            } else {
                Align::Left
            }
        })
        .collect();
    for p in payloads {
        t.push(keys.iter().map(|k| cell_of(p, k)).collect());
    }
    t
}

/// A payload field as a cell; `placement` objects (any shape) show their
/// fraction.
fn cell_of(p: &Value, k: &str) -> String {
    match p.get(k) {
        // Measured figures to what the result's noise supports, other
        // fractions to three significant digits: never 17-digit floats.
        Some(Value::Number(n)) if n.is_f64() => {
            let v = n.as_f64().unwrap_or(f64::NAN);
            let measured = ["_gbs", "_ns", "_s", "metric"].iter().any(|s| k.ends_with(s));
            if measured {
                crate::fmt::noisy(v, analysis::data::noise_pct(p).unwrap_or(0.0))
            } else {
                crate::fmt::sig(v, 3)
            }
        }
        Some(Value::Object(_)) if k == "placement" => {
            analysis::data::Placement::of(p).and_then(|pl| pl.fraction).map_or("?".into(), plain)
        }
        Some(v) => scalar_text(v).unwrap_or_else(|| "-".into()),
        None => "-".into(),
    }
}

fn analysis(doc: &mut Document, run: &LoadedRun, d: &RunData, exec: Option<&ExecView>) {
    doc.h(2, "Analysis and recommendations");
    let m = metrics(d);
    let mut notes = Vec::new();
    match run.summary.status {
        RunStatus::Complete => {}
        s => notes.push(format!(
            "The run is {s}{}; the figures cover only what was measured.",
            run.summary.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default()
        )),
    }
    if let (Some(l), Some(r)) = (m.get(&MetricKey::LocalLat), m.get(&MetricKey::RemoteLat)) {
        let ratio = r.value / l.value;
        let advice = if ratio >= 1.5 {
            "keep latency-sensitive processes and their memory on one node (numactl --cpunodebind=N --membind=N, or numaprobe exec to compare placements)"
        } else if ratio >= 1.2 {
            "binding processes to nodes helps latency-bound work"
        } else {
            "the penalty is small; interleaving costs little latency here"
        };
        notes.push(format!(
            "Remote memory is {ratio:.2}x as slow as local ({} ns against {} ns): {advice}.",
            num(r.value, "ns"),
            num(l.value, "ns")
        ));
    }
    if let (Some(l), Some(x)) = (m.get(&MetricKey::LocalBw), m.get(&MetricKey::CrossBw)) {
        notes.push(format!(
            "Cross-node bandwidth is {:.0}% of local ({} against {} GB/s): bandwidth-bound programs should allocate on the node they run on.",
            x.value / l.value * 100.0,
            num(x.value, "GB/s"),
            num(l.value, "GB/s")
        ));
    }
    if let (Some(g), Some(i)) = (m.get(&MetricKey::GlobalBw), m.get(&MetricKey::InterleaveBw)) {
        notes.push(format!(
            "Interleaving memory over all nodes gives {:.0}% of the bandwidth of node-local placement ({} against {} GB/s); programs that are not NUMA-aware get roughly the interleaved figure.",
            i.value / g.value * 100.0,
            num(i.value, "GB/s"),
            num(g.value, "GB/s")
        ));
    }
    let flagged =
        d.bw.iter()
            .filter_map(|b| b.placement.as_ref())
            .chain(d.lat.iter().filter_map(|l| l.placement.as_ref()))
            .filter(|p| p.flagged)
            .count();
    if flagged > 0 {
        notes.push(format!(
            "{flagged} result(s) had pages away from the node asked for (placement flagged): their figures mix nodes. Check free memory per node and numa_balancing."
        ));
    }
    let noisy =
        d.bw.iter()
            .filter_map(|b| b.spread_pct)
            .chain(d.lat.iter().filter_map(|l| l.spread_pct))
            .filter(|s| *s > NOISY_SPREAD_PCT)
            .count();
    if noisy > 0 {
        notes.push(format!(
            "{noisy} result(s) varied by more than {NOISY_SPREAD_PCT:.0}% between repetitions: the machine was busy or its frequency moved; repeat on a quiet machine before drawing conclusions from small differences."
        ));
    }
    for s in d.per_cpu_summaries.iter().filter(|s| s.hidden_numa && !s.groups.is_empty()) {
        notes.push(format!(
            "{} Check the BIOS NUMA settings (NUMA per socket, sub-NUMA clustering, node interleaving) and the kernel command line for numa=off, then measure again.",
            hidden_numa_text(s)
        ));
    }
    if let Some(e) = exec {
        notes.push(e.best_sentence());
    }
    if notes.is_empty() {
        notes.push("Nothing stands out in the measured figures.".into());
    }
    doc.list(notes);

    let findings: Vec<&Finding> = d.findings.iter().filter(|f| !f.is_ok()).collect();
    if !d.findings.is_empty() {
        doc.h(3, "Settings audit");
        if findings.is_empty() {
            doc.p(format!("All {} audited settings are as recommended.", d.findings.len()));
        }
        let mut t = Table::with_header(&[
            "Severity", "Finding", "Found", "Expected", "Why", "Fix", "Needs",
        ]);
        t.align = vec![Align::Left; 7];
        for f in &findings {
            t.push(vec![
                f.severity.clone(),
                f.id.clone(),
                f.found.clone(),
                f.expected.clone().unwrap_or_else(|| "-".into()),
                f.why.clone().unwrap_or_else(|| "-".into()),
                f.fix.clone().unwrap_or_else(|| "-".into()),
                f.needs.clone().unwrap_or_else(|| "-".into()),
            ]);
        }
        doc.table(t);
    } else if !d.bw.is_empty() || !d.lat.is_empty() {
        doc.p("No settings audit in this run (numaprobe audit adds findings with fixes).");
    }
}

fn appendix(doc: &mut Document, run: &LoadedRun) {
    doc.h(2, "Appendix: raw figures");
    if run.results.is_empty() {
        doc.p("No results were stored.");
        return;
    }
    doc.p(format!(
        "Every stored result ({}), as measured, grouped by kind and mode.",
        run.results.len()
    ));
    let mut groups: BTreeMap<(String, String), Vec<&Value>> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for r in &run.results {
        let key = (r.kind.to_string(), field_text(&r.payload, "mode").unwrap_or_default());
        if !groups.contains_key(&key) {
            order.push(key.clone());
        }
        groups.entry(key).or_default().push(&r.payload);
    }
    for key in order {
        let title = if key.1.is_empty() { key.0.clone() } else { format!("{} {}", key.0, key.1) };
        doc.h(3, title);
        doc.table(generic_table(&groups[&key], &["mode"]));
    }
    let raw = run.topology.get().and_then(|t| t.cmdline.raw.clone());
    if let Some(raw) = raw.filter(|r| r.chars().count() > CMDLINE_MAX) {
        doc.h(3, "Kernel command line");
        doc.code(raw);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn numa_mode_text(v: serde_json::Value) -> Option<String> {
        super::numa_mode_text(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn an_ambiguous_mode_names_its_candidates() {
        let t = json!({"kind": "nodes-per-package", "label": null, "reason": "r",
            "confidence": "ambiguous",
            "alternatives": [{"kind": "nodes-per-package", "label": "NPS4", "tell": "a"},
                             {"kind": "nodes-per-package", "label": "L3-as-NUMA", "tell": "b"}]});
        assert_eq!(numa_mode_text(t).unwrap(), "NPS4 or L3-as-NUMA (ambiguous): r");
        // A topology stored before confidence existed reads as before.
        let old = json!({"kind": "nodes-per-package", "label": "SNC2", "reason": "r"});
        assert_eq!(numa_mode_text(old).unwrap(), "SNC2: r");
        let fw = json!({"kind": "disabled-by-firmware", "label": null, "reason": "r",
            "confidence": "ambiguous", "alternatives": [{"kind": "disabled-by-kernel", "label": null, "tell": "t"}]});
        assert_eq!(numa_mode_text(fw).unwrap(), "disabled-by-firmware (ambiguous): r");
    }

    #[test]
    fn settings_flatten_without_the_fingerprint() {
        let cfg = serde_json::from_value(json!({"fingerprint": "x", "thp": "always",
            "cmdline_options": {"numa": "off"}, "boost": null}));
        let f = super::settings_found(&cfg.unwrap());
        let want = [("cmdline_options.numa", "off"), ("thp", "always")];
        assert_eq!(f, want.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    #[test]
    fn ratio_view_divides_by_the_rows_local_cell() {
        let hm = super::Heatmap {
            title: "t".into(),
            x_label: "memory node".into(),
            y_label: "CPU node".into(),
            unit: "ns".into(),
            cols: vec!["0".into(), "1".into(), "2".into()],
            rows: vec!["0".into(), "1".into()],
            values: vec![
                vec![Some(100.0), Some(150.0), Some(300.0)],
                vec![Some(160.0), Some(80.0), None],
            ],
        };
        let r = super::ratio_heatmap(&hm, "Latency").unwrap();
        assert_eq!(r.unit, "x local");
        assert_eq!(r.values[0], vec![Some(1.0), Some(1.5), Some(3.0)]);
        assert_eq!(r.values[1], vec![Some(2.0), Some(1.0), None]);
        // a single node has no remote cell: no ratio view
        let one = super::Heatmap {
            cols: vec!["0".into()],
            rows: vec!["0".into()],
            values: vec![vec![Some(90.0)]],
            ..hm
        };
        assert!(super::ratio_heatmap(&one, "Latency").is_none());
    }

    #[test]
    fn long_kernel_command_lines_keep_their_memory_options() {
        let raw = format!(
            "{} numa_balancing=disable transparent_hugepage=never quiet",
            "console=ttyS0 ".repeat(12)
        );
        let t = super::cmdline_text(&raw);
        assert!(
            t.starts_with("numa_balancing=disable transparent_hugepage=never (+13 other words"),
            "{t}"
        );
        assert_eq!(super::cmdline_text("ro quiet"), "ro quiet");
    }
}
