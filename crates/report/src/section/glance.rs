//! The at-a-glance box at the top of a run's report: machine and BIOS,
//! memory population and its theoretical peak, NUMA mode with its reason,
//! the headline latencies and bandwidths (with % of the peak) and the worst
//! audit findings, each figure rounded to what its noise supports.

use results::audit::Severity;
use results::context::{Bios, Configuration, DimmSummary, Dimms, Machine, Reading, UNREADABLE};
use store::LoadedRun;
use topo::Topology;

use topo::units::binary_size as bytes;

use analysis::data::RunData;
use analysis::metrics::{lat_matrix, MetricKey};

/// The run's headline figures, by metric.
type Headlines = std::collections::BTreeMap<MetricKey, crate::figures::Headline>;
use results::stats::measured;

/// How many audit findings the box lists.
pub const TOP_FINDINGS: usize = 3;

pub use crate::doc::{Glance, GlanceFinding};

/// The theoretical peak bandwidth of the whole machine's memory, GB/s
/// (10^9 B/s): the sum over sockets of populated channels x MT/s x 8 bytes,
/// from the SMBIOS memory records stored with the run. `None` when the
/// records were absent (most VMs) or any socket's peak is unknown.
/// The peak recorded with the run's local bandwidth results (`--peak-gbs`
/// or SMBIOS when measured) wins: it is the one their "% of peak" used.
pub fn machine_peak_gbs(run: &LoadedRun) -> Option<f64> {
    let nodes = cpu_nodes(run.topology.get()).max(1);
    recorded_node_peak(run).map(|p| p * nodes as f64).or_else(|| peak_of(&run.machine_info))
}

/// One node's peak as recorded with a local bandwidth result (one CPU
/// node on one memory node), GB/s.
fn recorded_node_peak(run: &LoadedRun) -> Option<f64> {
    run.results.iter().find_map(|r| match &r.record {
        results::Record::Bw(b) if b.mode == results::bw::Mode::Local && b.mem_node.is_some() => {
            b.peak_gbs.filter(|p| p.is_finite() && *p > 0.0)
        }
        _ => None,
    })
}

fn peak_of(machine: &Machine) -> Option<f64> {
    let per = machine.dimm_summary()?.peak_gbs_per_socket.as_ref()?;
    if per.is_empty() {
        return None;
    }
    per.iter().copied().sum::<Option<f64>>().filter(|p| *p > 0.0)
}

/// One node's even share of the machine's peak (peak / nodes with CPUs):
/// in SNC or NPS modes each node owns a part of its socket's channels.
pub fn node_peak_gbs(run: &LoadedRun) -> Option<f64> {
    let nodes = cpu_nodes(run.topology.get()).max(1);
    recorded_node_peak(run).or_else(|| peak_of(&run.machine_info).map(|p| p / nodes as f64))
}

fn cpu_nodes(topo: Option<&Topology>) -> usize {
    topo.map_or(0, |t| t.nodes.iter().filter(|n| !n.cpus.is_empty()).count())
}

/// `DDR5-4800, 16 of 32 slots (8 of 16 channels), 32 GiB modules, 512 GiB`.
fn memory_text(run: &LoadedRun) -> String {
    let mi = &run.machine_info;
    let total = mi.mem_total_bytes.map(bytes);
    let mut parts = Vec::new();
    let cfg = &run.config;
    let value = |r: &Option<Reading<String>>| r.as_ref().and_then(Reading::value).cloned();
    let summary = mi.dimm_summary();
    let channels = |d: &DimmSummary| match (d.channels_populated, d.channels.filter(|c| *c > 0)) {
        (Some(cp), Some(c)) => Some(format!("{cp} of {c} channels")),
        _ => None,
    };
    if let Some(p) = value(&cfg.dimm_population) {
        // the settings document (SMBIOS): `8 of 16 slots: 8x 32 GiB DDR5`
        parts.push(p);
        if let Some(s) = cfg.memory_speed_mts.as_ref().and_then(Reading::value) {
            parts.push(format!("{s} MT/s"));
        }
        parts.extend(summary.and_then(channels));
    } else {
        match mi.dimms.as_ref() {
            Some(Reading::Value(Dimms::Text(s))) => parts.push(s.clone()),
            Some(Reading::Unreadable) => parts.push(UNREADABLE.into()),
            Some(Reading::Value(Dimms::Summary(d))) if d.unreadable.is_none() => {
                let kind = d.memory_type.clone().filter(|t| !t.is_empty());
                match (kind, d.configured_speed_mts) {
                    (Some(k), Some(s)) => parts.push(format!("{k}-{s}")),
                    (Some(k), None) => parts.push(k),
                    (None, Some(s)) => parts.push(format!("{s} MT/s")),
                    _ => {}
                }
                if let (Some(m), Some(s)) = (d.modules, d.slots) {
                    let mut t = format!("{m} of {s} slots");
                    if let Some(c) = channels(d) {
                        t.push_str(&format!(" ({c})"));
                    }
                    parts.push(t);
                }
                let sizes: Vec<String> =
                    d.module_sizes_bytes.iter().flatten().map(|b| bytes(*b)).collect();
                if !sizes.is_empty() {
                    parts.push(format!("{} modules", sizes.join(" + ")));
                }
            }
            _ => parts.push("no SMBIOS memory records (a VM?)".into()),
        }
    }
    if let Some(t) = total {
        parts.push(format!("{t} in all"));
    }
    parts.join(", ")
}

/// Board and BIOS: the firmware fields of the run's configuration
/// document (`sys_vendor`, `product_name`, `bios_vendor`, `bios_version`,
/// `bios_date`, `microcode`), else the `bios` of an older machine document.
fn bios_text(config: &Configuration, mi: &Machine) -> Option<String> {
    let known = |v: Option<String>| v.filter(|v| !v.is_empty() && v != UNREADABLE);
    let setting = |r: &Option<Reading<String>>| known(r.as_ref().and_then(Reading::text));
    let in_config = |r: &Option<Reading<String>>| r.as_ref().and_then(Reading::text).is_some();
    let [sys_vendor, product_name, bios_vendor, bios_version, bios_date, microcode] =
        if in_config(&config.bios_version) || in_config(&config.product_name) {
            [
                &config.sys_vendor,
                &config.product_name,
                &config.bios_vendor,
                &config.bios_version,
                &config.bios_date,
                &config.microcode,
            ]
            .map(setting)
        } else {
            match mi.bios.as_ref()? {
                Bios::Text(s) => return Some(s.clone()),
                Bios::Fields(f) => [
                    &f.sys_vendor,
                    &f.product_name,
                    &f.bios_vendor,
                    &f.bios_version,
                    &f.bios_date,
                    &f.microcode,
                ]
                .map(|v| known(v.clone())),
            }
        };
    let mut s = [sys_vendor, product_name].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let bios = [bios_vendor, bios_version].into_iter().flatten().collect::<Vec<_>>().join(" ");
    if !bios.is_empty() {
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&format!("BIOS {bios}"));
        if let Some(d) = bios_date {
            s.push_str(&format!(" ({d})"));
        }
    }
    if let Some(m) = microcode {
        s.push_str(&format!(", microcode {m}"));
    }
    (!s.is_empty()).then_some(s)
}

/// `X% of P GB/s`.
fn of_peak(v: f64, peak: Option<f64>, what: &str) -> String {
    match peak {
        Some(p) if p > 0.0 => {
            let flag = if v > p { " (impossible: above the peak)" } else { "" };
            format!(" = {:.0}% of {what} {} GB/s{flag}", v / p * 100.0, crate::fmt::num(p, "GB/s"))
        }
        _ => String::new(),
    }
}

/// The headline tiles of a run's report, before anything else: local and
/// global bandwidth, idle and loaded latency, the remote penalty and the
/// share of the theoretical peak where the memory records give one. Each
/// figure is the one the tables write (rounded to its noise, flagged
/// `(disturbed)` or `(noisy)` as they flag it); a figure the run does not
/// hold gets no tile.
pub fn tiles(run: &LoadedRun, d: &RunData) -> Vec<crate::doc::Tile> {
    let topo = run.topology.get();
    let h = crate::figures::headlines(d);
    let mut out = Vec::new();
    let flag = |x: &crate::figures::Headline| {
        x.flags.first().map(|(_, f)| format!(" ({})", f.word())).unwrap_or_default()
    };
    let spread = |x: &crate::figures::Headline| x.spread_text().unwrap_or_default();
    let mut tile = |name: &str, x: &crate::figures::Headline, note: String| {
        out.push(crate::doc::Tile {
            name: name.into(),
            value: format!("{} {}{}", x.value_text(), x.key.unit(), flag(x)),
            note,
        });
    };
    let nodes = cpu_nodes(topo);
    let peak = machine_peak_gbs(run);
    let taken = |x: &crate::figures::Headline| {
        x.taken.as_ref().map(|t| format!("; {}", t.short())).unwrap_or_default()
    };
    if let Some(x) = h.get(&MetricKey::LocalBw) {
        let mut note = format!("per node, {}", x.detail.clone().unwrap_or_else(|| "best".into()));
        if nodes > 1 {
            if let Some(p) = node_peak_gbs(run).filter(|p| *p > 0.0) {
                note.push_str(&format!(
                    "; {:.0}% of a node's share of the peak",
                    x.value / p * 100.0
                ));
            }
        }
        note.push_str(&taken(x));
        tile("Local bandwidth", x, note);
    }
    if let Some(x) = h.get(&MetricKey::GlobalBw) {
        tile("Global bandwidth", x, format!("every node at once; {}", spread(x)));
    }
    if let Some(x) = h.get(&MetricKey::LocalLat) {
        tile("Idle latency", x, format!("local, median; {}{}", spread(x), taken(x)));
    }
    if let Some(x) = h.get(&MetricKey::LoadedLatPeak) {
        let load = x.detail.clone().unwrap_or_else(|| "at the highest load".into());
        tile("Loaded latency", x, load);
    }
    if let Some(r) = remote_ratio(run, &h) {
        out.push(crate::doc::Tile { name: r.name.into(), value: r.value, note: r.note });
    }
    let best =
        h.get(&MetricKey::GlobalBw).or(if nodes <= 1 { h.get(&MetricKey::LocalBw) } else { None });
    if let (Some(p), Some(x)) = (peak, best) {
        let which = if x.key == MetricKey::GlobalBw { "global" } else { "local" };
        let source = if recorded_node_peak(run).is_some() {
            "the peak its figures were held against: --peak-gbs or SMBIOS"
        } else {
            "SMBIOS"
        };
        let over = analysis::impossible::against_peak(&format!("{which} bandwidth"), x.value, p);
        out.push(crate::doc::Tile {
            name: "Of the peak".into(),
            value: format!(
                "{:.0}%{}",
                x.value / p * 100.0,
                if over.is_some() { " (impossible)" } else { "" }
            ),
            note: match over {
                Some(i) => format!(
                    "{which} of the theoretical {} GB/s ({source}): above the peak, which is \
                     impossible; likely cause: {}",
                    crate::fmt::num(p, "GB/s"),
                    crate::impossible::cause(&i.cause)
                ),
                None => format!(
                    "{which} of the theoretical {} GB/s ({source})",
                    crate::fmt::num(p, "GB/s")
                ),
            },
        });
    }
    out
}

/// The run's remote-latency ratio, one statistic under one name in every
/// output (tile, glance box, brief, summary table): `Remote penalty`,
/// other-package over local latency as comparisons write it, where the
/// run has another package; else `Remote / local latency`, the mean of
/// the remote node pairs over local latency.
pub struct RemoteRatio {
    pub name: &'static str,
    pub ratio: f64,
    /// What over what: `other-package / local`.
    pub of: &'static str,
    /// `1.597x`.
    pub value: String,
    /// What it is made of, in words.
    pub note: String,
}

/// The [`RemoteRatio`] of `run` (`None` without remote and local latency).
pub fn remote_ratio(
    run: &LoadedRun,
    h: &std::collections::BTreeMap<MetricKey, crate::figures::Headline>,
) -> Option<RemoteRatio> {
    let (r, l) =
        (h.get(&MetricKey::RemoteLat)?, h.get(&MetricKey::LocalLat).filter(|l| l.value > 0.0)?);
    let penalty = analysis::catalogue::catalogue(run)
        .into_iter()
        .find(|m| m.def == analysis::catalogue::remote_penalty_def());
    Some(match penalty {
        Some(p) => RemoteRatio {
            name: "Remote penalty",
            ratio: p.value,
            of: "other-package / local",
            value: format!("{}x", crate::fmt::num(p.value, "x")),
            note: "other-package / local latency, as comparisons write it".into(),
        },
        None => RemoteRatio {
            name: "Remote / local latency",
            ratio: r.value / l.value,
            of: "mean of node pairs / local",
            value: format!("{}x", crate::fmt::num(r.value / l.value, "x")),
            note: format!(
                "remote (mean of node pairs) {} ns / local {} ns",
                r.value_text(),
                l.value_text()
            ),
        },
    })
}

/// The at-a-glance box of `run`.
pub fn glance(run: &LoadedRun, d: &RunData) -> Glance {
    let topo = run.topology.get();
    let mut g = Glance::default();
    let peak = machine_peak_gbs(run);
    machine_rows(&mut g, run, peak);
    let h = crate::figures::headlines(d);
    row(&mut g, "Latency", Some(latency_text(run, d, &h)));
    row(&mut g, "Bandwidth", Some(bandwidth_text(run, &h, peak)));
    if let Some(note) = crate::figures::same_placement_note(d, &h, cpu_nodes(topo)) {
        row(&mut g, "Why they differ", Some(note));
    }
    row(&mut g, "Caution", caution_text(&h));
    let taken = crate::figures::taken_lines(&h);
    if !taken.is_empty() {
        row(
            &mut g,
            "Figures taken",
            Some(format!(
                "{} ({}).",
                taken.join(" ").trim_end_matches('.'),
                crate::figures::TAKEN_RULE
            )),
        );
    }
    let contradictions = crate::figures::contradiction_lines(d);
    if !contradictions.is_empty() {
        row(
            &mut g,
            "Contradictions",
            Some(format!(
                "{} pair(s) of figures of this run cannot both be right (listed under Summary): measure again on a quiet machine",
                contradictions.len()
            )),
        );
    }
    findings(&mut g, d);
    g
}

/// Adds the row `k` to the box when `v` says something.
fn row(g: &mut Glance, k: &str, v: Option<String>) {
    if let Some(v) = v.filter(|v| !v.is_empty()) {
        g.rows.push((k.to_string(), v));
    }
}

/// The machine's rows: the machine, board and BIOS, memory (with the
/// theoretical `peak`, GB/s) and NUMA mode.
fn machine_rows(g: &mut Glance, run: &LoadedRun, peak: Option<f64>) {
    let mi = &run.machine_info;
    let topo = run.topology.get();
    let cpu = topo.and_then(|t| t.cpu_model.clone()).or_else(|| mi.cpu_model().map(str::to_string));
    let machine = match (mi.hostname(), &cpu) {
        (Some(h), Some(c)) => {
            let packages = topo.map_or(0, |t| t.packages.len());
            Some(if packages > 1 { format!("{h}: {packages} x {c}") } else { format!("{h}: {c}") })
        }
        _ => Some(run.summary.machine.clone()),
    };
    row(g, "Machine", machine);
    row(
        g,
        "Board and BIOS",
        Some(bios_text(&run.config, mi).unwrap_or_else(|| "not recorded".into())),
    );
    let mut mem = memory_text(run);
    match peak {
        Some(p) => mem.push_str(&format!("; theoretical peak {} GB/s", crate::fmt::num(p, "GB/s"))),
        None => mem.push_str("; theoretical peak unknown"),
    }
    row(g, "Memory", Some(mem));
    row(
        g,
        "NUMA mode",
        topo.and_then(|t| crate::environment::numa_mode_text(&t.numa_mode))
            .or_else(|| run.config.numa_mode.as_ref().and_then(Reading::text)),
    );
}

/// The latency row: local, then remote with the ratio and the worst pair.
fn latency_text(run: &LoadedRun, d: &RunData, h: &Headlines) -> String {
    let mut l = Vec::new();
    if let Some(x) = h.get(&MetricKey::LocalLat) {
        let mut s = format!("local {}", x.text());
        if let Some(t) = &x.taken {
            // inside the figure's own parentheses when it has them
            match s.strip_suffix(')') {
                Some(head) => s = format!("{head}; {})", t.short()),
                None => s.push_str(&format!(" ({})", t.short())),
            }
        }
        l.push(s);
    }
    if let Some(x) = h.get(&MetricKey::RemoteLat) {
        let cells = lat_matrix(d);
        let worst = cells
            .iter()
            .filter(|((c, mn), _)| c != mn)
            .map(|(_, p)| *p)
            .max_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
        let mut s = format!("remote (mean of node pairs) {}", x.text());
        if let Some(ratio) = remote_ratio(run, h) {
            s.push_str(&format!(", {} {}", ratio.name.to_lowercase(), ratio.value));
            if let Some(w) = worst.filter(|w| w.median_ns > x.value * 1.05) {
                // as the summary's worst-pair row writes it
                s.push_str(&format!(
                    ", worst pair {} ns",
                    crate::fmt::fig(measured(w.median_ns), w.noise(), "ns")
                ));
            }
        }
        l.push(s);
    }
    l.join("; ")
}

/// The bandwidth row: local per node and global, each against its peak
/// (GB/s).
fn bandwidth_text(run: &LoadedRun, h: &Headlines, peak: Option<f64>) -> String {
    let topo = run.topology.get();
    let node_peak = node_peak_gbs(run);
    let mut b = Vec::new();
    if let Some(x) = h.get(&MetricKey::LocalBw) {
        b.push(format!(
            "local {} per node{}",
            x.text(),
            of_peak(x.value, node_peak.filter(|_| cpu_nodes(topo) > 1), "a node's share,")
        ));
    }
    if let Some(x) = h.get(&MetricKey::GlobalBw) {
        b.push(format!("global {}{}", x.text(), of_peak(x.value, peak, "the peak")));
    } else if let (Some(x), 1) = (h.get(&MetricKey::LocalBw), cpu_nodes(topo)) {
        if let Some(p) = peak {
            b.push(format!("local{}", of_peak(x.value, Some(p), "the peak")));
        }
    }
    b.join("; ")
}

/// The caution row: what the flags on the headline figures mean; `None`
/// when no figure is flagged.
fn caution_text(h: &Headlines) -> Option<String> {
    let words: Vec<&str> = h.values().flat_map(|x| x.flags.iter().map(|(_, f)| f.word())).collect();
    let mut why = Vec::new();
    if words.contains(&analysis::impossible::Impossible::WORD) {
        why.push("(impossible): above the theoretical peak or below the last-level cache's own latency, a wrong peak or a cache passing for DRAM");
    }
    if words.contains(&"disturbed") {
        why.push("(disturbed): other work kept the measuring thread from its CPU");
    }
    if words.contains(&"noisy") {
        why.push("(noisy): the repetitions never settled");
    }
    if why.is_empty() {
        return None;
    }
    Some(format!(
        "figures marked {}; {}(causes under Summary)",
        why.join("; "),
        if words.iter().any(|w| *w == "disturbed" || *w == "noisy") {
            "measure again on a quiet machine "
        } else {
            ""
        }
    ))
}

/// The worst findings and the audit row.
fn findings(g: &mut Glance, d: &RunData) {
    // Critical and warning findings only: information (and what could
    // not be read) is in the settings audit, not above the fold.
    let bad: Vec<_> = d
        .findings
        .iter()
        .filter(|f| f.severity != Severity::Ok && f.severity.rank() <= 1)
        .collect();
    let quiet =
        d.findings.iter().filter(|f| f.severity != Severity::Ok && f.severity.rank() > 1).count();
    g.more_findings = bad.len().saturating_sub(TOP_FINDINGS);
    g.findings = bad
        .iter()
        .take(TOP_FINDINGS)
        .map(|f| GlanceFinding {
            severity: f.severity.label().to_string(),
            level: match f.severity.rank() {
                0 => "critical",
                1 => "warning",
                2 | 3 => "info",
                _ => "unknown",
            },
            text: match (f.fix.as_str(), crate::recommendations::found_text(f, d)) {
                ("" | "-", found) => format!("{}: {found}", f.id),
                (fix, found) => format!("{}: {found} (fix: {fix})", f.id),
            },
        })
        .collect();
    if d.findings.is_empty() {
        g.rows.push(("Audit".into(), "not run (numaprobe audit adds findings with fixes)".into()));
    } else if bad.is_empty() && quiet == 0 {
        g.rows.push(("Audit".into(), format!("all {} settings as recommended", d.findings.len())));
    } else if bad.is_empty() {
        g.rows.push((
            "Audit".into(),
            format!("no setting to fix; {quiet} informational finding(s) in the settings audit"),
        ));
    } else if quiet > 0 {
        g.rows.push((
            "Audit".into(),
            format!("{quiet} informational finding(s) more in the settings audit"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_needs_every_socket() {
        let j = |v| peak_of(&serde_json::from_value(v).unwrap());
        assert_eq!(
            j(serde_json::json!({"dimms": {"peak_gbs_per_socket": [153.6, 153.6]}})),
            Some(307.2)
        );
        assert_eq!(j(serde_json::json!({"dimms": {"peak_gbs_per_socket": [153.6, null]}})), None);
        assert_eq!(j(serde_json::json!({"dimms": null})), None);
    }

    /// The "Of the peak" tile of a figure above the machine's peak says
    /// why, whole.
    #[test]
    fn the_peak_tile_of_an_impossible_figure_says_why_whole() {
        let mut run: LoadedRun = serde_json::from_value(serde_json::json!({
            "id": 1, "uuid": "u", "label": null, "started": "2026-01-01T00:00:00Z",
            "finished": null, "status": "complete", "complete": true, "message": null,
            "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
            "command_line": "numaprobe run", "result_count": 0, "imported": false,
            "machine_info": {}, "config": {}, "topology": {}, "results": []
        }))
        .unwrap();
        let v = serde_json::json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": 2, "best_gbs": 23.6, "peak_gbs": 1.0,
            "size_rule_ok": true, "array_bytes": 1u64 << 30, "stable": true});
        run.results = vec![results::run::StoredRecord {
            seq: 1,
            recorded: "2026-01-01T00:00:00Z".into(),
            record: results::upgrade::read("bw", &v).record,
            as_stored: None,
        }];
        let tiles = tiles(&run, &RunData::of(&run));
        let t = tiles.iter().find(|t| t.name == "Of the peak").expect("the peak tile");
        assert_eq!(t.value, "2360% (impossible)");
        assert_eq!(
            t.note,
            "local of the theoretical 1.0 GB/s (the peak its figures were held against: \
             --peak-gbs or SMBIOS): above the peak, which is impossible; likely cause: a wrong \
             peak (--peak-gbs or the DIMM table: channels or MT/s too low), or a cache passing \
             for DRAM"
        );
    }
}
