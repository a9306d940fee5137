//! The tables users expect at the end of a run: local and global
//! bandwidth, local and remote latency, cross-node bandwidth (and the
//! latency matrix). Used by `numaprobe run`, `show` and the reports.

use std::collections::{BTreeMap, BTreeSet};

use results::bw::Mode;
use results::stats::measured;
use store::LoadedRun;

use crate::doc::Table;
use crate::figures::{
    bw_flag, chase_flag, flag_lines, headlines, loaded_flag, marked, Flag, Headline,
};
use crate::fmt::{fig, opt};
use analysis::data::RunData;
use analysis::metrics::{
    best_of_mode, bw_matrix, lat_matrix, local_points, peak_loaded, MetricKey,
};
use results::lat::LatResult;

/// The summary tables of a run (only those with something to show).
pub fn summary_tables(run: &LoadedRun) -> Vec<Table> {
    tables_of(run, &RunData::of(run))
}

/// The summary tables as plain text, separated by blank lines; a sentence
/// when the run has no bandwidth or latency results.
pub fn summary_text(run: &LoadedRun) -> String {
    let tables = summary_tables(run);
    if tables.is_empty() {
        return "No bandwidth or latency results in this run.\n".to_string();
    }
    let mut out = tables.iter().map(Table::to_text).collect::<Vec<_>>().join("\n");
    let taken = summary_taken(run);
    if !taken.is_empty() {
        out.push_str(&format!(
            "\nFigures taken from another measurement of the same quantity; {}:\n",
            crate::figures::TAKEN_RULE
        ));
        for f in taken {
            out.push_str(&format!("  {f}\n"));
        }
    }
    let flags = summary_flags(run);
    if !flags.is_empty() {
        out.push_str("\nMarked figures:\n");
        for f in flags {
            out.push_str(&format!("  {f}\n"));
        }
    }
    out
}

/// One line per headline that took another measurement of its quantity
/// than the one defining it, with why ([`crate::figures::taken_lines`]).
pub fn summary_taken(run: &LoadedRun) -> Vec<String> {
    crate::figures::taken_lines(&headlines(&RunData::of(run)))
}

/// The policy table of an `exec` run and the sentence naming the best
/// placement (what the report's "Program under placements" shows); `None`
/// when the run holds no exec results.
pub fn placements_summary(run: &LoadedRun) -> Option<(Table, String)> {
    let d = RunData::of(run);
    use crate::placements::ExecText;
    let e = crate::placements::ExecView::of(run, &d.exec)?;
    let what = if e.on_metric { "the --metric figure" } else { "wall time" };
    let t = e.table().caption(format!(
        "Program under placements (compared on {what}, against '{}')",
        e.baseline.as_deref().unwrap_or("?")
    ));
    Some((t.auto_align(), e.best_sentence()))
}

/// A chase's median as every table writes it, marked when impossible
/// or disturbed.
fn chase_fig(p: &LatResult, d: &RunData) -> String {
    marked(fig(measured(p.median_ns), p.noise(), "ns"), chase_flag(p, d).as_ref())
}

/// One line per flagged result behind the summary's figures (what it is,
/// `disturbed` or `noisy`, and why), every flagged result once.
pub fn summary_flags(run: &LoadedRun) -> Vec<String> {
    flag_notes(&RunData::of(run))
}

pub(crate) fn flag_notes(d: &RunData) -> Vec<String> {
    let mut seen: Vec<(String, Flag)> = Vec::new();
    for h in headlines(d).into_values() {
        for f in h.flags {
            if !seen.contains(&f) {
                seen.push(f);
            }
        }
    }
    let mut out = flag_lines(seen.iter().map(|(w, f)| (w.as_str(), f)));
    out.extend(crate::figures::contradiction_lines(d));
    out
}

/// The run's headline figures, by metric.
type Headlines = BTreeMap<MetricKey, Headline>;

/// The latency matrix's chosen chase per (CPU node, memory node).
type LatMatrix<'a> = BTreeMap<(u32, u32), &'a LatResult>;

pub(crate) fn tables_of(run: &LoadedRun, d: &RunData) -> Vec<Table> {
    let m = headlines(d);
    let lm = lat_matrix(d);
    let out = [
        Some(bandwidth_table(d, &m)),
        Some(latency_table(run, d, &m, &lm)),
        cross_node_table(d),
        latency_matrix_table(d, &lm),
    ];
    out.into_iter().flatten().filter(|t| !t.is_empty()).map(Table::auto_align).collect()
}

/// Local, mean-of-nodes, global, interleaved and weighted bandwidth.
fn bandwidth_table(d: &RunData, m: &Headlines) -> Table {
    let mut t = Table::with_header(&["Bandwidth", "Kernel", "Threads", "Best GB/s", "Spread %"])
        .caption("Bandwidth (GB/s = 10^9 bytes/s, best of the repetitions)");
    let (_, local) = local_points(d);
    for p in &local {
        t.push(vec![
            format!("local, node {}", p.cpu_node.map_or("?".into(), |n| n.to_string())),
            crate::method::kernel_stores(p),
            p.threads.to_string(),
            marked(fig(measured(p.best_gbs), p.noise(), "GB/s"), bw_flag(p).as_ref()),
            opt(measured(p.spread_pct), "%"),
        ]);
    }
    if local.len() > 1 {
        if let Some(l) = m.get(&MetricKey::LocalBw) {
            t.push(vec![
                "local, mean of nodes".into(),
                l.detail.clone().unwrap_or_default(),
                "-".into(),
                l.value_text(),
                "-".into(),
            ]);
        }
    }
    for (mode, name) in [
        (Mode::Global, "global (every node, own memory)"),
        (Mode::Interleave, "interleaved over all nodes"),
        (Mode::Weighted, "weighted interleave"),
    ] {
        if let Some(p) = best_of_mode(d, mode) {
            t.push(vec![
                name.into(),
                crate::method::kernel_stores(p),
                p.threads.to_string(),
                marked(fig(measured(p.best_gbs), p.noise(), "GB/s"), bw_flag(p).as_ref()),
                opt(measured(p.spread_pct), "%"),
            ]);
        }
    }
    t
}

/// Local and remote latency, the worst pair, the remote ratio and the
/// loaded latency at peak load.
fn latency_table(run: &LoadedRun, d: &RunData, m: &Headlines, lm: &LatMatrix<'_>) -> Table {
    let taken = analysis::metrics::lat_matrix_taken(d);
    // Where a cell was measured more than once: which measurement the
    // figure is, the most trustworthy of them.
    let several = taken.values().any(|t| !t.others.is_empty());
    let from = |k: &(u32, u32)| -> String {
        taken.get(k).map_or_else(String::new, |t| {
            if t.others.is_empty() {
                crate::trust::chase_source(t.chosen.mode).to_string()
            } else {
                format!(
                    "{}, the most trustworthy of {}",
                    crate::trust::chase_source(t.chosen.mode),
                    t.others.len() + 1
                )
            }
        })
    };
    let mut header = vec!["Latency", "Median ns"];
    if several {
        header.push("Measured by");
    }
    let mut t = Table::with_header(&header).caption("Latency (ns, median of the clean samples)");
    let mut push = |mut row: Vec<String>, by: String| {
        if several {
            row.push(by);
        }
        t.push(row);
    };
    for (k @ (c, mnode), p) in lm {
        if c == mnode {
            push(vec![format!("local, node {c}"), chase_fig(p, d)], from(k));
        }
    }
    if let Some(l) = m.get(&MetricKey::LocalLat) {
        if lm.is_empty() || l.results > 1 {
            push(vec!["local, mean of nodes".into(), l.value_text()], String::new());
        }
    }
    if let Some(r) = m.get(&MetricKey::RemoteLat) {
        push(vec!["remote, mean of node pairs".into(), r.value_text()], String::new());
        let worst = lm
            .iter()
            .filter(|((c, mn), _)| c != mn)
            .max_by(|a, b| a.1.median_ns.total_cmp(&b.1.median_ns));
        if let Some((k @ (c, mn), p)) = worst {
            push(
                vec![format!("remote, worst (CPU node {c} -> memory node {mn})"), chase_fig(p, d)],
                from(k),
            );
        }
        if let (Some(l), Some(ratio)) =
            (m.get(&MetricKey::LocalLat), crate::glance::remote_ratio(run, m))
        {
            // the ratio alone hides the size: 1.5x of 80 ns is not 1.5x of 150 ns
            push(
                vec![format!("{} ({}), difference", ratio.name.to_lowercase(), ratio.of), {
                    let diff = r.value - l.value;
                    let noise = Some(l.noise_pct.max(r.noise_pct));
                    let sign = if diff >= 0.0 { "+" } else { "" };
                    format!("{}, {sign}{} ns", ratio.value, fig(Some(diff), noise, "ns"))
                }],
                String::new(),
            );
        }
    }
    if let Some(p) = peak_loaded(d) {
        push(
            vec![
                format!("loaded, at peak load {} GB/s", opt(measured(p.load_gbs), "GB/s")),
                marked(fig(p.latency(), p.noise(), "ns"), loaded_flag(p, d).as_ref()),
            ],
            "loaded latency".into(),
        );
    }
    t
}

/// The cross-node bandwidth matrix; `None` without matrix results.
fn cross_node_table(d: &RunData) -> Option<Table> {
    let (kernel, cells) = bw_matrix(d);
    if cells.is_empty() {
        return None;
    }
    let mem: BTreeSet<u32> = cells.keys().map(|k| k.1).collect();
    let cpu: BTreeSet<u32> = cells.keys().map(|k| k.0).collect();
    let mut header = vec!["CPU node \\ memory node".to_string()];
    header.extend(mem.iter().map(|n| n.to_string()));
    let kernel = kernel.map_or("", |k| k.name());
    let mut t = Table::new(header).caption(format!("Cross-node bandwidth (GB/s, {kernel}, best)"));
    for c in &cpu {
        let mut row = vec![c.to_string()];
        row.extend(mem.iter().map(|mn| match cells.get(&(*c, *mn)) {
            Some(p) => marked(fig(measured(p.best_gbs), p.noise(), "GB/s"), bw_flag(p).as_ref()),
            None => "-".into(),
        }));
        t.push(row);
    }
    Some(t)
}

/// The latency matrix; `None` with fewer than two cells.
fn latency_matrix_table(d: &RunData, lm: &LatMatrix<'_>) -> Option<Table> {
    if lm.len() < 2 {
        return None;
    }
    let mem: BTreeSet<u32> = lm.keys().map(|k| k.1).collect();
    let cpu: BTreeSet<u32> = lm.keys().map(|k| k.0).collect();
    let mut header = vec!["CPU node \\ memory node".to_string()];
    header.extend(mem.iter().map(|n| n.to_string()));
    let mut t = Table::new(header).caption("Latency matrix (ns, median of the clean samples)");
    for c in &cpu {
        let mut row = vec![c.to_string()];
        row.extend(mem.iter().map(|mn| lm.get(&(*c, *mn)).map_or("-".into(), |p| chase_fig(p, d))));
        t.push(row);
    }
    Some(t)
}
