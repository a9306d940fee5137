//! The fleet's sentences: what [`analysis::fleet`] finds (the method, a
//! group's missing peers, the roster's warnings, why a host is left out or
//! a newer run passed over, each host's impossible figures) worded once
//! ([`Words`]). The report draws them; console's `fleet::Doc` writes them
//! into `fleet --json` in the places they have always had
//! (docs/fleet.md).

use std::collections::BTreeMap;

use analysis::fleet::{Fleet, Method, PeersMissing, Skip, Warning, WithoutFigures};
use analysis::metric_id::MetricId;

/// The fleet's sentences, worded from its typed findings. Lists follow the
/// fleet's: `groups[i].hosts[j]` words `fleet.groups[i].hosts[j]`,
/// `skipped[k]` `fleet.skipped[k]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Words {
    /// The method in one sentence.
    pub method: String,
    /// The roster's warnings.
    pub warnings: Vec<String>,
    /// Each host left out: its name and why.
    pub skipped: Vec<(String, String)>,
    pub groups: Vec<GroupWords>,
}

/// A group's sentences.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupWords {
    /// Why nothing was flagged, when peers are missing.
    pub note: Option<String>,
    pub hosts: Vec<HostWords>,
}

/// A host's sentences.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HostWords {
    /// Each impossible headline figure with why, by metric.
    pub impossible: BTreeMap<MetricId, String>,
    /// Why each newer run was passed over, in the host's order.
    pub passed_over: Vec<String>,
}

impl Words {
    /// The sentences of `fleet`.
    pub fn of(fleet: &Fleet) -> Words {
        Words {
            method: method(&fleet.method),
            warnings: fleet.warnings.iter().map(warning).collect(),
            skipped: fleet.skipped.iter().map(|s| (s.host.clone(), skip(&s.reason))).collect(),
            groups: fleet
                .groups
                .iter()
                .map(|g| GroupWords {
                    note: g.note.as_ref().map(peers_missing),
                    hosts: g
                        .hosts
                        .iter()
                        .map(|h| HostWords {
                            impossible: h
                                .impossible
                                .iter()
                                .map(|(k, i)| (k.clone(), crate::impossible::text(i)))
                                .collect(),
                            passed_over: h
                                .passed_over
                                .iter()
                                .map(|p| without_figures(&p.why))
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

impl Words {
    /// Whether these words have `fleet`'s shape: as many groups, hosts in
    /// each and passed-over runs in each host (skipped hosts carry their
    /// names and are not paired). The report
    /// and console's `fleet::Doc` pair words with the fleet by position,
    /// so words made from another fleet would be cut short without a word.
    pub fn fits(&self, fleet: &Fleet) -> bool {
        self.groups.len() == fleet.groups.len()
            && self.groups.iter().zip(&fleet.groups).all(|(gw, g)| {
                gw.hosts.len() == g.hosts.len()
                    && gw
                        .hosts
                        .iter()
                        .zip(&g.hosts)
                        .all(|(hw, h)| hw.passed_over.len() == h.passed_over.len())
            })
    }
}

/// The method in one sentence.
pub fn method(m: &Method) -> String {
    format!(
        "Each host's latest complete run holding the fleet's figures is compared with the median \
         of its peers (same model). \
         A host is flagged on a metric when it is more than {}% worse than the peer \
         median (bandwidth below it, latency above it) and its robust z-score \
         |value - median| / (1.4826 x MAD) exceeds {}, so the spread of normal hosts flags \
         nobody and the outliers do not move the reference. Groups with fewer than {} \
         hosts flag nothing (peers missing). Drift: a setting whose value differs from the one \
         most of the group's hosts hold.",
        m.threshold_pct, m.robust_z, m.min_peers
    )
}

/// Why a group flags nobody.
pub fn peers_missing(p: &PeersMissing) -> String {
    format!(
        "peers missing: {} host(s) of this model; at least {} are needed to tell an odd one out, so nothing is flagged",
        p.hosts, p.min_peers
    )
}

/// A warning of the roster.
pub fn warning(w: &Warning) -> String {
    match w {
        Warning::Future { host, run, ahead_s, started } => format!(
            "{host}: run {run} started {} after this report's time ({started}): a clock is \
             wrong; its age is not known, so it is not counted healthy",
            fmt_age(*ahead_s)
        ),
        Warning::AlsoNamed { host, names } => format!(
            "{host} was also named {}: one machine (same identity), shown by its latest name",
            names.join(", ")
        ),
        Warning::SharedName { name, machine_ids } => format!(
            "host name {name} is used by {} machines (machine ids {}): each is listed on its own",
            machine_ids.len(),
            machine_ids.join(", ")
        ),
        Warning::UnmeasuredNameShared { host, error, machines } => format!(
            "{host} was not measured ({error}), but {machines} machines here are named {host}: \
             which one is not known (the orchestrator gave no machine id), so the runs of each \
             are still compared"
        ),
    }
}

/// Why a host is left out.
pub fn skip(s: &Skip) -> String {
    match s {
        Skip::NotLabelled { label } => format!("no run labelled {label:?}"),
        Skip::NoFigures { latest } => format!(
            "no run holds the fleet's figures (its latest: {})",
            latest.as_ref().map(without_figures).unwrap_or_default()
        ),
    }
}

/// Why a run is passed over (or a host's latest run is no measurement).
pub fn without_figures(w: &WithoutFigures) -> String {
    match w {
        WithoutFigures::Exec => "an exec run: none of the fleet's figures".into(),
        WithoutFigures::ExecEnded { status } => {
            format!("an exec run ({status}): none of the fleet's figures")
        }
        WithoutFigures::Nothing => "none of the fleet's figures".into(),
    }
}

/// When a run was taken, from its age: `12 min ago`, `5.2 h in the
/// future` (a clock ahead), `unknown age`.
pub fn fmt_when(age_s: Option<f64>) -> String {
    match age_s {
        Some(a) if a >= 0.0 => format!("{} ago", fmt_age(Some(a))),
        _ => fmt_age(age_s),
    }
}

/// An age as people read it: `40 s`, `12 min`, `5.2 h`, `3.1 d` (a
/// negative one: `5.2 h in the future`).
pub fn fmt_age(age_s: Option<f64>) -> String {
    match age_s {
        None => "unknown age".into(),
        Some(a) if a < 0.0 => format!("{} in the future", fmt_age(Some(-a))),
        Some(a) if a < 120.0 => format!("{a:.0} s"),
        Some(a) if a < 7200.0 => format!("{:.0} min", a / 60.0),
        Some(a) if a < 2.0 * 86_400.0 => format!("{:.1} h", a / 3600.0),
        Some(a) => format!("{:.1} d", a / 86_400.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sentence, whole; none names a flag.
    #[test]
    fn every_finding_is_worded() {
        let said = [
            peers_missing(&PeersMissing { hosts: 2, min_peers: 3 }),
            warning(&Warning::Future {
                host: "n1".into(),
                run: 4,
                ahead_s: Some(7200.0),
                started: "2026-11-09T13:00:00Z".into(),
            }),
            warning(&Warning::AlsoNamed { host: "n2".into(), names: vec!["a".into(), "b".into()] }),
            warning(&Warning::SharedName {
                name: "clone".into(),
                machine_ids: vec!["c1".into(), "c2".into()],
            }),
            warning(&Warning::UnmeasuredNameShared {
                host: "clone".into(),
                error: "unreachable".into(),
                machines: 2,
            }),
            skip(&Skip::NotLabelled { label: "nightly".into() }),
            skip(&Skip::NoFigures { latest: Some(WithoutFigures::Exec) }),
            skip(&Skip::NoFigures { latest: None }),
            without_figures(&WithoutFigures::ExecEnded { status: "failed".into() }),
            without_figures(&WithoutFigures::Nothing),
        ];
        assert_eq!(
            said,
            [
                "peers missing: 2 host(s) of this model; at least 3 are needed to tell an odd one out, so nothing is flagged",
                "n1: run 4 started 2.0 h after this report's time (2026-11-09T13:00:00Z): a clock is wrong; its age is not known, so it is not counted healthy",
                "n2 was also named a, b: one machine (same identity), shown by its latest name",
                "host name clone is used by 2 machines (machine ids c1, c2): each is listed on its own",
                "clone was not measured (unreachable), but 2 machines here are named clone: which one is not known (the orchestrator gave no machine id), so the runs of each are still compared",
                "no run labelled \"nightly\"",
                "no run holds the fleet's figures (its latest: an exec run: none of the fleet's figures)",
                "no run holds the fleet's figures (its latest: )",
                "an exec run (failed): none of the fleet's figures",
                "none of the fleet's figures",
            ]
        );
        let m = method(&Method::of(7.5));
        assert!(m.contains("more than 7.5% worse") && m.contains("exceeds 3.5"), "{m}");
        assert!(said.iter().chain([&m]).all(|s| !s.contains("--")), "{said:?}");
    }

    #[test]
    fn ages_read_as_people_write_them() {
        assert_eq!(fmt_age(Some(40.0)), "40 s");
        assert_eq!(fmt_age(Some(720.0)), "12 min");
        assert_eq!(fmt_age(Some(5.25 * 3600.0)), "5.2 h");
        assert_eq!(fmt_age(Some(3.1 * 86_400.0)), "3.1 d");
        assert_eq!(fmt_age(None), "unknown age");
        assert_eq!(fmt_when(Some(-7200.0)), "2.0 h in the future");
        assert_eq!(fmt_when(Some(7200.0)), "2.0 h ago");
    }
}
