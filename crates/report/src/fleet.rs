//! The fleet ([`analysis::fleet::Fleet`]) as a report: per group the peer
//! medians, each host's deviation (flags marked), a per-host chart and the
//! drifted settings. `numaprobe fleet` renders it as text, Markdown or HTML.

use analysis::fleet::{Fleet, Group, GroupBy, Host, PeerStat};

use crate::chart::{BarChart, BarGroup, Chart};
use crate::doc::{Document, Table};

/// The most hosts drawn in a group's chart (the worst ones).
pub const CHART_HOSTS: usize = 40;

fn fmt_value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fmt_dev(d: Option<f64>) -> String {
    match d {
        Some(d) => format!("{d:+.1}%"),
        None => "-".into(),
    }
}

/// The fleet report: per group the peer medians, each host's deviation
/// (flags marked), a per-host chart and the drifted settings.
pub fn document(fleet: &Fleet) -> Document {
    let mut d = Document::new(format!(
        "Fleet report: {} host(s), {} group(s)",
        fleet.hosts,
        fleet.groups.len()
    ));
    d.p(format!(
        "{} outlier host(s), {} host(s) with configuration drift. Threshold {}% (grouped by {}{}).",
        fleet.outliers(),
        fleet.drifted(),
        fleet.threshold_pct,
        match fleet.group_by {
            GroupBy::Model => "model",
            GroupBy::Label => "model and label",
            GroupBy::Config => "model and configuration",
        },
        fleet.label.as_deref().map(|l| format!(", runs labelled {l:?}")).unwrap_or_default()
    ));
    d.p(fleet.method.clone());
    if !fleet.skipped.is_empty() {
        d.list(
            fleet.skipped.iter().map(|s| format!("{}: left out ({})", s.host, s.reason)).collect(),
        );
    }
    for g in &fleet.groups {
        let title = match &g.subgroup {
            Some(s) if !s.is_empty() => format!("{} [{s}]", g.model),
            _ => g.model.clone(),
        };
        d.h(2, format!("{title}: {} host(s)", g.hosts.len()));
        if let Some(n) = &g.note {
            d.callout(n.clone());
        }
        let flagged: Vec<String> = g
            .hosts
            .iter()
            .filter(|h| h.outlier)
            .map(|h| {
                let f: Vec<String> = h
                    .flags
                    .iter()
                    .map(|f| {
                        format!(
                            "{} {:+.1}% ({} {} vs median {})",
                            f.metric,
                            f.deviation_pct,
                            fmt_value(f.value),
                            f.unit,
                            fmt_value(f.median)
                        )
                    })
                    .collect();
                format!("{}: {}", h.host, f.join("; "))
            })
            .collect();
        if !flagged.is_empty() {
            d.callout(format!("{} outlier(s): {}", flagged.len(), flagged.join(" | ")));
        }
        let mut med =
            Table::with_header(&["Metric", "Peer median", "MAD", "Hosts"]).caption("Peer medians");
        for m in &g.medians {
            med.push(vec![
                format!("{} ({})", m.metric, m.unit),
                fmt_value(m.median),
                fmt_value(m.mad),
                m.hosts.to_string(),
            ]);
        }
        d.table(med);
        let keys: Vec<&PeerStat> = g.medians.iter().collect();
        let mut header = vec!["Host".to_string(), "Run".to_string()];
        header.extend(keys.iter().map(|m| format!("{} ({})", m.metric, m.unit)));
        header.push("Drift".into());
        let mut t = Table::new(header)
            .caption("Hosts: value (deviation from the peer median); ! = flagged");
        for h in &g.hosts {
            let mut row = vec![
                if h.outlier { format!("{} !", h.host) } else { h.host.clone() },
                h.run.to_string(),
            ];
            for m in &keys {
                row.push(match h.metrics.get(m.metric) {
                    Some(v) => {
                        let bang =
                            if h.flags.iter().any(|f| f.metric == m.metric) { " !" } else { "" };
                        format!("{} ({}){bang}", fmt_value(v.value), fmt_dev(v.deviation_pct))
                    }
                    None => "-".into(),
                });
            }
            row.push(if h.drift.is_empty() { "-".into() } else { h.drift.join(", ") });
            t.push(row);
        }
        d.table(t);
        if let Some(c) = chart(g) {
            d.chart(c);
        }
        if !g.drift_settings.is_empty() {
            let mut t = Table::with_header(&["Setting", "Majority", "Hosts that differ"])
                .caption("Configuration drift");
            for s in &g.drift_settings {
                let differ: Vec<String> = g
                    .hosts
                    .iter()
                    .filter(|h| h.drift.contains(&s.setting))
                    .map(|h| h.host.clone())
                    .collect();
                let shown = if differ.len() > 20 {
                    format!("{} and {} more", differ[..20].join(", "), differ.len() - 20)
                } else {
                    differ.join(", ")
                };
                let values: Vec<String> =
                    s.values.iter().map(|(v, n)| format!("{v} ({n})")).collect();
                t.push(vec![
                    s.setting.clone(),
                    s.majority.clone().unwrap_or_else(|| format!("none: {}", values.join(", "))),
                    shown,
                ]);
            }
            d.table(t);
        }
    }
    d
}

/// Per host, the first headline metric measured (local bandwidth when
/// there), as % of the peer median; the worst [`CHART_HOSTS`] hosts.
fn chart(g: &Group) -> Option<Chart> {
    let m = g.medians.first()?;
    let mut hosts: Vec<(&Host, f64)> = g
        .hosts
        .iter()
        .filter_map(|h| h.metrics.get(m.metric).map(|v| (h, v.value / m.median * 100.0)))
        .filter(|(_, p)| p.is_finite())
        .collect();
    if hosts.len() < 2 {
        return None;
    }
    // Worst first: lowest bandwidth, highest latency.
    hosts.sort_by(|a, b| {
        let (x, y) = if m.higher_is_better { (a.1, b.1) } else { (b.1, a.1) };
        x.total_cmp(&y).then_with(|| a.0.host.cmp(&b.0.host))
    });
    let total = hosts.len();
    hosts.truncate(CHART_HOSTS);
    let title = if total > CHART_HOSTS {
        format!(
            "{}: {} per host, % of the peer median (the {CHART_HOSTS} worst of {total})",
            g.model, m.metric
        )
    } else {
        format!("{}: {} per host, % of the peer median", g.model, m.metric)
    };
    Some(Chart::Bars(BarChart {
        title,
        x_label: format!("% of the peer median {} ({})", fmt_value(m.median), m.unit),
        series: vec![m.metric.to_string()],
        groups: hosts
            .iter()
            .map(|(h, p)| BarGroup {
                name: h.host.clone(),
                note: if h.outlier { "flagged".into() } else { String::new() },
                values: vec![Some(*p)],
                labels: vec![format!("{p:.1}%")],
            })
            .collect(),
        reference: Some(100.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Renderer;
    use analysis::fleet::{Flag, HostMetric};
    use std::collections::BTreeMap;

    fn host(name: &str, bw: f64, flagged: bool) -> Host {
        let dev = (bw - 100.0) / 100.0 * 100.0;
        Host {
            host: name.into(),
            run: 1,
            run_uuid: String::new(),
            label: None,
            started: "2026-11-02T11:00:00Z".into(),
            outlier: flagged,
            flags: if flagged {
                vec![Flag {
                    metric: "local_bw_gbs",
                    deviation_pct: dev,
                    value: bw,
                    median: 100.0,
                    unit: "GB/s",
                }]
            } else {
                vec![]
            },
            drift: if name == "n3" { vec!["thp".into()] } else { vec![] },
            metrics: BTreeMap::from([(
                "local_bw_gbs",
                HostMetric { value: bw, deviation_pct: Some(dev) },
            )]),
        }
    }

    fn fleet(hosts: Vec<Host>, note: Option<&str>) -> Fleet {
        Fleet {
            group_by: GroupBy::Model,
            threshold_pct: 5.0,
            method: analysis::fleet::method_text(5.0),
            label: None,
            hosts: hosts.len(),
            groups: vec![Group {
                model: "2x Xeon".into(),
                subgroup: None,
                peers_missing: note.is_some(),
                note: note.map(str::to_string),
                medians: vec![PeerStat {
                    metric: "local_bw_gbs",
                    unit: "GB/s",
                    higher_is_better: true,
                    median: 100.0,
                    mad: 1.0,
                    hosts: 1,
                }],
                drift_settings: vec![analysis::fleet::DriftSetting {
                    setting: "thp".into(),
                    majority: Some("madvise".into()),
                    values: BTreeMap::from([("always".into(), 1), ("madvise".into(), 4)]),
                }],
                hosts,
            }],
            skipped: vec![],
        }
    }

    #[test]
    fn the_report_has_a_per_host_chart_and_names_the_method() {
        let hosts = vec![
            host("n1", 100.0, false),
            host("n2", 101.0, false),
            host("n3", 99.0, false),
            host("n4", 85.0, true),
            host("n5", 100.5, false),
        ];
        let d = document(&fleet(hosts, None));
        assert_eq!(d.chart_count(), 1);
        let html = String::from_utf8(crate::Html.render(&d)).unwrap();
        assert!(html.contains("<svg class=\"chart"), "chart drawn");
        assert!(html.contains("n4"));
        let md = String::from_utf8(crate::Markdown.render(&d)).unwrap();
        assert!(md.contains("more than 5% worse than the peer median"), "{md}");
        assert!(md.contains("| thp | madvise | n3 |"), "{md}");
        assert!(md.contains("1 outlier(s): n4: local_bw_gbs -15.0%"), "{md}");
    }

    #[test]
    fn a_group_without_peers_says_so() {
        let note = "peers missing: 1 host(s) of this model; at least 3 are needed";
        let d = document(&fleet(vec![host("a", 100.0, false)], Some(note)));
        let md = String::from_utf8(crate::Markdown.render(&d)).unwrap();
        assert!(md.contains("peers missing: 1 host(s) of this model"), "{md}");
        assert_eq!(d.chart_count(), 0, "one host: no chart");
    }
}
