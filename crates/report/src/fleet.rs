//! The fleet ([`analysis::fleet::Fleet`]) as a report: per group the peer
//! medians, each host's deviation (flags marked), a per-host chart of every
//! headline metric and the drifted settings. `numaprobe fleet` renders it as text, Markdown or HTML.

use analysis::fleet::{Fleet, Group, GroupBy, Host, Incomplete, NotMeasured, PeerStat};
use analysis::metric_id::MetricId;

use crate::chart::{BarChart, BarGroup, Chart};
use crate::doc::{Document, Table};

mod words;
pub use words::{
    fmt_age, fmt_when, method, peers_missing, skip, warning, without_figures, GroupWords,
    HostWords, Words,
};

/// The most hosts drawn in a group's chart (the worst ones).
pub const CHART_HOSTS: usize = 40;

/// A host's figure as its run's own tables write it ([`crate::fmt::fig`],
/// rounded to its noise).
fn fmt_value(v: f64, noise_pct: Option<f64>, unit: &str) -> String {
    crate::fmt::fig(Some(v), noise_pct, unit)
}

/// The median noise of `metric` over the group's hosts: what a peer
/// median is rounded to.
fn group_noise(g: &Group, metric: &MetricId) -> Option<f64> {
    let xs: Vec<f64> = g.hosts.iter().filter_map(|h| h.metrics.get(metric)?.noise_pct).collect();
    results::stats::median(&xs)
}

/// `metric`'s noise on host `h`.
fn host_noise(h: &Host, metric: &MetricId) -> Option<f64> {
    h.metrics.get(metric).and_then(|m| m.noise_pct)
}

fn fmt_dev(d: Option<f64>) -> String {
    match d {
        Some(d) => format!("{d:+.1}%"),
        None => "-".into(),
    }
}

/// The fleet report: per group the peer medians, each host's deviation
/// (flags marked), a per-host chart of each headline metric and the
/// drifted settings.
pub fn document(fleet: &Fleet) -> Document {
    document_worded(fleet, &Words::of(fleet))
}

/// [`document`] with the fleet's sentences already worded (`words` is
/// [`Words::of`] the fleet).
pub fn document_worded(fleet: &Fleet, words: &Words) -> Document {
    assert!(words.fits(fleet), "the fleet's words were made from another fleet");
    let mut d = Document::new(format!(
        "Fleet report: {} host(s), {} group(s)",
        fleet.hosts,
        fleet.groups.len()
    ));
    d.p(counts(fleet));
    let passed: usize =
        fleet.groups.iter().flat_map(|g| &g.hosts).filter(|h| !h.passed_over.is_empty()).count();
    if passed > 0 {
        d.p(format!(
            "{passed} host(s) compared on their latest run holding the fleet's figures, with newer \
             runs that hold none (an exec run) passed over: the Run column names them."
        ));
    }
    d.p(words.method.clone());
    callouts(&mut d, fleet, words);
    not_compared(&mut d, fleet, words);
    for (g, gw) in fleet.groups.iter().zip(&words.groups) {
        group(&mut d, g, gw);
    }
    d
}

/// The opening paragraph: how many hosts are healthy, outliers, drifted,
/// stale, from the future, without peers, incomplete and not measured, as
/// of when, and how they were grouped and judged.
fn counts(fleet: &Fleet) -> String {
    format!(
        "{} healthy, {} outlier host(s), {} host(s) with configuration drift, {} stale \
         (run older than {}){}{}, {} with an incomplete or failed latest run, {} not measured. \
         Ages as of {}. Threshold {}% (grouped by {}{}).",
        fleet.healthy,
        fleet.outliers(),
        fleet.drifted(),
        fleet.stale,
        fmt_age(Some(fleet.max_age_s as f64)),
        if fleet.future > 0 {
            format!(", {} from the future (a clock ahead: suspect)", fleet.future)
        } else {
            String::new()
        },
        if fleet.no_peers > 0 {
            format!(", {} without peers (not judged)", fleet.no_peers)
        } else {
            String::new()
        },
        fleet.incomplete.len(),
        fleet.unmeasured.len(),
        fleet.now,
        fleet.threshold_pct,
        match fleet.group_by {
            GroupBy::Model => "model",
            GroupBy::Label => "model and label",
            GroupBy::Config => "model and configuration",
        },
        fleet.label.as_deref().map(|l| format!(", runs labelled {l:?}")).unwrap_or_default()
    )
}

/// What the whole fleet must be warned of: hosts whose declared distances
/// disagree with the measured order, impossible figures, the roster's
/// warnings.
fn callouts(d: &mut Document, fleet: &Fleet, words: &Words) {
    let disagree: Vec<&str> = fleet
        .groups
        .iter()
        .flat_map(|g| &g.hosts)
        .filter(|h| h.declared_order_disagrees == Some(true))
        .map(|h| h.host.as_str())
        .collect();
    if fleet.declared_order_disagree > 0 {
        d.callout(format!(
            "{} host(s) whose declared distances (SLIT, HMAT) order the nodes otherwise than \
             measured: {} (`numaprobe audit --run RUN` on each names the pairs)",
            fleet.declared_order_disagree,
            disagree.join(", ")
        ));
    }
    let impossible: Vec<String> = fleet
        .groups
        .iter()
        .zip(&words.groups)
        .flat_map(|(g, gw)| g.hosts.iter().zip(&gw.hosts))
        .flat_map(|(h, hw)| hw.impossible.values().map(move |t| format!("{}: {t}", h.host)))
        .collect();
    if !impossible.is_empty() {
        d.callout(format!(
            "{} impossible figure(s), marked (impossible) below: not to be compared as they stand",
            impossible.len()
        ));
        d.list(impossible);
    }
    for w in &words.warnings {
        d.callout(format!("warning: {w}"));
    }
}

/// The hosts listed but not compared: not measured, with an incomplete or
/// failed latest run, left out.
fn not_compared(d: &mut Document, fleet: &Fleet, words: &Words) {
    if !fleet.unmeasured.is_empty() {
        d.h(2, format!("Not measured: {} host(s)", fleet.unmeasured.len()));
        d.list(fleet.unmeasured.iter().map(not_measured_item).collect());
    }
    if !fleet.incomplete.is_empty() {
        d.h(2, format!("Latest run incomplete or failed: {} host(s)", fleet.incomplete.len()));
        d.list(fleet.incomplete.iter().map(incomplete_item).collect());
    }
    if !words.skipped.is_empty() {
        d.list(
            words.skipped.iter().map(|(host, why)| format!("{host}: left out ({why})")).collect(),
        );
    }
}

fn not_measured_item(u: &NotMeasured) -> String {
    let last = match &u.last_run {
        Some(r) => format!(
            "; its last run here: {} ({}, {}), not compared",
            r.run,
            r.started,
            fmt_when(r.age_s)
        ),
        None => String::new(),
    };
    let id = match &u.machine_id {
        Some(id) => format!(" [id {}]", &id[..id.len().min(8)]),
        None => String::new(),
    };
    format!("{}{id}: {}{last}", u.host, u.error)
}

fn incomplete_item(i: &Incomplete) -> String {
    let last = match &i.last_complete {
        Some(r) => {
            format!("; its last complete run: {} ({}), not compared", r.run, fmt_when(r.age_s))
        }
        None => "; no complete run".into(),
    };
    format!(
        "{}: run {} {} ({}, {}): {}{last}",
        i.host,
        i.latest.run,
        i.latest.status,
        i.latest.started,
        fmt_when(i.latest.age_s),
        i.reason
    )
}

/// One group of peers: its heading and note, its outliers, the peer
/// medians, the hosts, the charts and the drifted settings.
fn group(d: &mut Document, g: &Group, gw: &GroupWords) {
    let title = match &g.subgroup {
        Some(s) if !s.is_empty() => format!("{} [{s}]", g.model),
        _ => g.model.clone(),
    };
    d.h(2, format!("{title}: {} host(s)", g.hosts.len()));
    if let Some(n) = &gw.note {
        d.callout(n.clone());
    }
    let flagged: Vec<String> = g.hosts.iter().filter(|h| h.outlier).map(|h| flags(g, h)).collect();
    if !flagged.is_empty() {
        d.callout(format!("{} outlier(s): {}", flagged.len(), flagged.join(" | ")));
    }
    d.table(medians_table(g));
    d.table(hosts_table(g, gw));
    for c in charts(g) {
        d.chart(c);
    }
    if !g.drift_settings.is_empty() {
        d.table(drift_table(g));
    }
}

/// An outlier's flags: each metric's deviation, value and peer median.
fn flags(g: &Group, h: &Host) -> String {
    let f: Vec<String> = h
        .flags
        .iter()
        .map(|f| {
            format!(
                "{} {:+.1}% ({} {} vs median {})",
                metric_name(g, &f.metric),
                f.deviation_pct,
                fmt_value(f.value, host_noise(h, &f.metric), f.unit),
                f.unit,
                fmt_value(f.median, group_noise(g, &f.metric), f.unit)
            )
        })
        .collect();
    format!("{}: {}", h.host, f.join("; "))
}

fn medians_table(g: &Group) -> Table {
    let mut med =
        Table::with_header(&["Metric", "Peer median", "MAD", "Hosts"]).caption("Peer medians");
    for m in &g.medians {
        med.push(vec![
            format!("{} ({})", m.name, m.unit),
            fmt_value(m.median, group_noise(g, &m.metric), m.unit),
            crate::fmt::num(m.mad, m.unit),
            m.hosts.to_string(),
        ]);
    }
    med
}

/// Each host of the group: its run, when taken, each metric's value and
/// deviation, its drifted settings.
fn hosts_table(g: &Group, gw: &GroupWords) -> Table {
    let keys: Vec<&PeerStat> = g.medians.iter().collect();
    let mut header = vec!["Host".to_string(), "Run".to_string(), "Taken (age)".to_string()];
    header.extend(keys.iter().map(|m| format!("{} ({})", m.name, m.unit)));
    header.push("Drift".into());
    let mut t = Table::new(header).caption(
        "Hosts: value (deviation from the peer median); ! = flagged; stale = older than the maximum age; Run: the latest holding the fleet's figures",
    );
    for (h, hw) in g.hosts.iter().zip(&gw.hosts) {
        let mut row = vec![
            if h.outlier { format!("{} !", host_name(h)) } else { host_name(h) },
            run_cell(h, hw),
            format!(
                "{} ({}){}{}",
                h.started,
                fmt_when(h.age_s),
                if h.stale { " stale" } else { "" },
                if h.future { " suspect (clock ahead)" } else { "" }
            ),
        ];
        row.extend(keys.iter().map(|m| metric_cell(h, hw, m)));
        row.push(if h.drift.is_empty() { "-".into() } else { h.drift.join(", ") });
        t.push(row);
    }
    t
}

/// A host's value of a metric with its deviation, marked when flagged or
/// impossible.
fn metric_cell(h: &Host, hw: &HostWords, m: &PeerStat) -> String {
    match h.metrics.get(&m.metric) {
        Some(v) => {
            let mut bang =
                if h.flags.iter().any(|f| f.metric == m.metric) { " !" } else { "" }.to_string();
            if hw.impossible.contains_key(&m.metric) {
                bang.push_str(" (impossible)");
            }
            format!(
                "{} ({}){bang}",
                fmt_value(v.value, v.noise_pct, m.unit),
                fmt_dev(v.deviation_pct)
            )
        }
        None => "-".into(),
    }
}

/// The settings on which hosts differ from the group's majority, with the
/// hosts that differ (the first 20 named).
fn drift_table(g: &Group) -> Table {
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
        let values: Vec<String> = s.values.iter().map(|(v, n)| format!("{v} ({n})")).collect();
        t.push(vec![
            s.setting.clone(),
            s.majority.clone().unwrap_or_else(|| format!("none: {}", values.join(", "))),
            shown,
        ]);
    }
    t
}

/// A host's name in the reports: with the start of its machine id when
/// another machine has the same name, with its former names when renamed.
fn host_name(h: &Host) -> String {
    let mut s = h.host.clone();
    if h.duplicate_hostname {
        if let Some(id) = &h.machine_id {
            s.push_str(&format!(" [id {}]", &id[..id.len().min(8)]));
        }
    }
    if !h.also_named.is_empty() {
        s.push_str(&format!(" (was {})", h.also_named.join(", ")));
    }
    s
}

/// A metric's name for people, from the group's medians (its id when the
/// group has no median of it).
fn metric_name(g: &Group, id: &MetricId) -> String {
    g.medians.iter().find(|m| m.metric == *id).map_or_else(|| id.to_string(), |m| m.name.into())
}

/// The run compared, and the newer runs passed over with why.
fn run_cell(h: &Host, hw: &HostWords) -> String {
    if h.passed_over.is_empty() {
        return h.run.to_string();
    }
    let over: Vec<String> = h
        .passed_over
        .iter()
        .zip(&hw.passed_over)
        .map(|(p, why)| format!("newer {}: {why}", p.run.run))
        .collect();
    format!("{} ({}; passed over)", h.run, over.join("; "))
}

/// Per headline metric measured by two hosts or more, each host's value as
/// % of the peer median; the worst [`CHART_HOSTS`] hosts.
fn charts(g: &Group) -> Vec<Chart> {
    g.medians.iter().filter_map(|m| chart(g, m)).collect()
}

fn chart(g: &Group, m: &PeerStat) -> Option<Chart> {
    let mut hosts: Vec<(&Host, f64)> = g
        .hosts
        .iter()
        .filter_map(|h| h.metrics.get(&m.metric).map(|v| (h, v.value / m.median * 100.0)))
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
    let better = if m.higher_is_better { "higher is better" } else { "lower is better" };
    let what = format!("{} ({}, {better}) per host, % of the peer median", m.name, m.unit);
    let title = if total > CHART_HOSTS {
        format!("{}: {what} (the {CHART_HOSTS} worst of {total})", g.model)
    } else {
        format!("{}: {what}", g.model)
    };
    Some(Chart::Bars(BarChart {
        title,
        x_label: format!(
            "% of the peer median, {} {}",
            fmt_value(m.median, group_noise(g, &m.metric), m.unit),
            m.unit
        ),
        series: vec![m.name.to_string()],
        groups: hosts
            .iter()
            .map(|(h, p)| BarGroup {
                name: host_name(h),
                note: if h.flags.iter().any(|f| f.metric == m.metric) {
                    "flagged".into()
                } else {
                    String::new()
                },
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
    use analysis::metrics::MetricKey;
    use std::collections::BTreeMap;

    fn host(name: &str, bw: f64, flagged: bool) -> Host {
        let dev = (bw - 100.0) / 100.0 * 100.0;
        Host {
            host: name.into(),
            machine_id: Some(format!("{name:0>16}")),
            machine_id_source: Some("dmi_product_uuid".into()),
            also_named: vec![],
            duplicate_hostname: false,
            run: 1,
            run_uuid: String::new(),
            label: None,
            started: "2026-11-02T11:00:00Z".into(),
            age_s: Some(7200.0),
            stale: false,
            future: false,
            healthy: !flagged,
            outlier: flagged,
            flags: if flagged {
                vec![Flag {
                    metric: MetricKey::LocalBw.into(),
                    deviation_pct: dev,
                    value: bw,
                    median: 100.0,
                    unit: "GB/s",
                }]
            } else {
                vec![]
            },
            drift: if name == "n3" { vec!["thp".into()] } else { vec![] },
            metrics: BTreeMap::from([
                (
                    MetricKey::LocalBw.into(),
                    HostMetric { value: bw, deviation_pct: Some(dev), noise_pct: Some(1.0) },
                ),
                (
                    MetricKey::LocalLat.into(),
                    HostMetric { value: 100.0, deviation_pct: Some(0.0), noise_pct: None },
                ),
            ]),
            passed_over: vec![],
            declared_order_disagrees: None,
            impossible: Default::default(),
        }
    }

    fn fleet(hosts: Vec<Host>, note: Option<usize>) -> Fleet {
        Fleet {
            group_by: GroupBy::Model,
            threshold_pct: 5.0,
            method: analysis::fleet::Method::of(5.0),
            label: None,
            max_age_s: analysis::fleet::DEFAULT_MAX_AGE_S,
            now: "2026-11-02T13:00:00.000Z".into(),
            hosts: hosts.len(),
            healthy: hosts.iter().filter(|h| h.healthy).count(),
            stale: hosts.iter().filter(|h| h.stale).count(),
            future: hosts.iter().filter(|h| h.future).count(),
            no_peers: if note.is_some() { hosts.len() } else { 0 },
            groups: vec![Group {
                model: "2x Xeon".into(),
                subgroup: None,
                peers_missing: note.is_some(),
                note: note.map(|hosts| analysis::fleet::PeersMissing { hosts, min_peers: 3 }),
                medians: vec![
                    PeerStat {
                        metric: MetricKey::LocalBw.into(),
                        name: "Local bandwidth",
                        unit: "GB/s",
                        higher_is_better: true,
                        median: 100.0,
                        mad: 1.0,
                        hosts: 1,
                    },
                    PeerStat {
                        metric: MetricKey::LocalLat.into(),
                        name: "Local latency",
                        unit: "ns",
                        higher_is_better: false,
                        median: 100.0,
                        mad: 1.0,
                        hosts: 1,
                    },
                ],
                drift_settings: vec![analysis::fleet::DriftSetting {
                    setting: "thp".into(),
                    majority: Some("madvise".into()),
                    values: BTreeMap::from([("always".into(), 1), ("madvise".into(), 4)]),
                }],
                hosts,
            }],
            warnings: vec![],
            incomplete: vec![],
            unmeasured: vec![],
            skipped: vec![],
            declared_order_disagree: 0,
        }
    }

    /// Every host's run time and age; stale runs marked; duplicate names
    /// told apart by machine id, renamed machines by their former names;
    /// hosts not measured and incomplete latest runs listed with why.
    #[test]
    fn ages_identities_and_hosts_left_out_are_shown() {
        let mut stale = host("n2", 100.0, false);
        stale.started = "2026-09-24T13:00:00Z".into();
        stale.age_s = Some(39.0 * 86_400.0);
        stale.stale = true;
        stale.healthy = false;
        let (mut c1, mut c2) = (host("clone", 100.0, false), host("clone", 80.0, true));
        c1.machine_id = Some("aaaa000000000001".into());
        c2.machine_id = Some("bbbb000000000002".into());
        c1.duplicate_hostname = true;
        c2.duplicate_hostname = true;
        let mut renamed = host("new-name", 100.0, false);
        renamed.also_named = vec!["old-name".into()];
        let mut f = fleet(vec![host("n1", 100.0, false), stale, c1, c2, renamed], None);
        f.warnings = vec![analysis::fleet::Warning::SharedName {
            name: "clone".into(),
            machine_ids: vec!["aaaa000000000001".into(), "bbbb000000000002".into()],
        }];
        let run = |run: i64, status: &str, age: f64| analysis::fleet::RunRef {
            run,
            run_uuid: format!("u{run}"),
            label: None,
            started: "2026-11-02T12:00:00Z".into(),
            age_s: Some(age),
            status: status.into(),
        };
        f.incomplete = vec![analysis::fleet::Incomplete {
            host: "n6".into(),
            machine_id: None,
            latest: run(10, "incomplete", 3600.0),
            reason: "interrupted (SIGTERM)".into(),
            last_complete: Some(run(4, "complete", 86_400.0)),
        }];
        f.unmeasured = vec![analysis::fleet::NotMeasured {
            host: "n7".into(),
            machine_id: None,
            error: "timed out after 3600 s".into(),
            last_run: None,
        }];
        let text = String::from_utf8(crate::Text.render(&document(&f))).unwrap();
        assert!(text.contains("2026-09-24T13:00:00Z (39.0 d ago) stale"), "{text}");
        assert!(text.contains("2026-11-02T11:00:00Z (2.0 h ago)"), "{text}");
        assert!(text.contains("1 stale (run older than 8.0 d)"), "{text}");
        let md = String::from_utf8(crate::Markdown.render(&document(&f))).unwrap();
        assert!(md.contains("| clone [id aaaa0000] |"), "{md}");
        assert!(md.contains("| clone [id bbbb0000] ! |"), "the slow clone flagged: {md}");
        assert!(md.contains("new-name (was old-name)"), "{md}");
        assert!(md.contains("warning: host name clone is used by 2 machines"), "{md}");
        assert!(
            md.contains("Not measured: 1 host(s)") && md.contains("n7: timed out after 3600 s")
        );
        // A run from the future: its time, how far ahead, suspect; never
        // "(in the future ago)".
        f.unmeasured[0].machine_id = Some("cccc000000000003".into());
        let mut ahead = host("n8", 100.0, false);
        (ahead.age_s, ahead.future, ahead.healthy) = (Some(-7200.0), true, false);
        f.groups[0].hosts.push(ahead);
        f.future = 1;
        let text = String::from_utf8(crate::Text.render(&document(&f))).unwrap();
        assert!(text.contains("(2.0 h in the future) suspect (clock ahead)"), "{text}");
        assert!(text.contains("1 from the future (a clock ahead: suspect)"), "{text}");
        assert!(!text.contains("future ago"), "{text}");
        assert!(text.contains("n7 [id cccc0000]: timed out"), "{text}");
        assert!(
            md.contains("n6: run 10 incomplete (2026-11-02T12:00:00Z, 60 min ago): interrupted (SIGTERM); its last complete run: 4 (24.0 h ago), not compared"),
            "{md}"
        );
    }

    /// Every headline metric a group measured has its per-host chart,
    /// named as people name it (never its JSON id), flags marked on the
    /// metric flagged.
    #[test]
    fn every_headline_metric_is_charted_by_its_name() {
        let mut hosts = vec![
            host("n1", 100.0, false),
            host("n2", 101.0, false),
            host("n3", 99.0, false),
            host("n4", 85.0, true),
            host("n5", 100.5, false),
        ];
        hosts[1].metrics.get_mut(&MetricKey::LocalLat.into()).unwrap().value = 130.0;
        let d = document(&fleet(hosts, None));
        assert_eq!(d.chart_count(), 2, "local bandwidth and local latency");
        let html = String::from_utf8(crate::Html.render(&d)).unwrap();
        assert_eq!(html.matches("<svg class=\"chart").count(), 2, "both drawn");
        for title in [
            "2x Xeon: Local bandwidth (GB/s, higher is better) per host, % of the peer median",
            "2x Xeon: Local latency (ns, lower is better) per host, % of the peer median",
        ] {
            assert!(html.contains(title), "{title}: {html}");
        }
        assert!(!html.contains("local_bw_gbs") && !html.contains("local_lat_ns"), "{html}");
        let md = String::from_utf8(crate::Markdown.render(&d)).unwrap();
        assert!(md.contains("more than 5% worse than the peer median"), "{md}");
        assert!(md.contains("| thp | madvise | n3 |"), "{md}");
        assert!(md.contains("1 outlier(s): n4: Local bandwidth -15.0%"), "{md}");
        assert!(md.contains("| Local bandwidth (GB/s) | 100 | 1.0 | 1 |"), "{md}");
        assert!(md.contains("| Local latency (ns) |"), "{md}");
    }

    /// A host compared on an older run than its latest says which run and
    /// why the newer one was passed over.
    #[test]
    fn the_run_compared_and_the_runs_passed_over_are_named() {
        let mut h = host("n1", 100.0, false);
        h.run = 4;
        h.passed_over = vec![analysis::fleet::PassedOver {
            run: analysis::fleet::RunRef {
                run: 9,
                run_uuid: "u9".into(),
                label: None,
                started: "2026-11-02T12:00:00Z".into(),
                age_s: Some(3600.0),
                status: "complete".into(),
            },
            why: analysis::fleet::WithoutFigures::Exec,
        }];
        let d = document(&fleet(vec![h, host("n2", 100.0, false)], None));
        let md = String::from_utf8(crate::Markdown.render(&d)).unwrap();
        assert!(
            md.contains(
                "| n1 | 4 (newer 9: an exec run: none of the fleet's figures; passed over) |"
            ),
            "{md}"
        );
        assert!(md.contains("1 host(s) compared on their latest run holding the fleet's figures"));
    }

    #[test]
    fn a_group_without_peers_says_so() {
        let mut alone = host("a", 100.0, false);
        alone.healthy = false;
        let d = document(&fleet(vec![alone], Some(1)));
        let md = String::from_utf8(crate::Markdown.render(&d)).unwrap();
        assert!(md.contains("peers missing: 1 host(s) of this model"), "{md}");
        assert!(md.contains("0 healthy") && md.contains("1 without peers (not judged)"), "{md}");
        assert_eq!(d.chart_count(), 0, "one host: no chart");
    }
}
