//! The sentences of a settings study that the report and `compare`'s text
//! both write: which metrics are left out of the table and why
//! ([`left_out`]), the metrics shown once ([`same_as_line`]), how a
//! bracketed verdict was reached ([`bracketed_text`]) and each profile's
//! recommendation line ([`merged_recommendations`]).

use crate::text::signed_pct;
use analysis::catalogue::{MetricId, PerCpuStat};
use analysis::study::{NoPick, Recommendation, Study};

use super::recommend::{group_names, hides_numa_clause, recommendation_text};

/// Why a metric is left out of the table.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeftOut {
    /// Every group's CPUs form one latency group for this node: the
    /// fastest and slowest groups are the mean, the split is 1.
    OneCpuGroup,
    /// Measured in one group only: nothing to compare it with.
    OneGroupOnly(usize),
    /// The same statistic as the metric of this index on these runs (every
    /// run of every group has the same figure for both): on one package,
    /// a per-package figure is the whole machine's; on one node, the
    /// latency a thread sees is the local latency. Shown once.
    SameAs(usize),
}

/// The metrics of `study` that cannot differ between its groups on this
/// machine, with why; the others are tabled.
pub fn left_out(study: &Study) -> Vec<(usize, LeftOut)> {
    let mut out = Vec::new();
    // Per memory node: does every run of every group see one latency
    // group of CPUs?
    let one_group = |node: Option<u32>| {
        let groups = MetricId::PerCpu { stat: PerCpuStat::Groups, node };
        study.metrics.iter().find(|m| m.metric == groups).is_some_and(|m| {
            m.groups.iter().all(|g| g.values.iter().all(|v| *v == 1.0))
                && m.groups.iter().any(|g| !g.values.is_empty())
        })
    };
    for (k, m) in study.metrics.iter().enumerate() {
        let measured: Vec<usize> =
            (0..m.groups.len()).filter(|&i| m.groups[i].median.is_some()).collect();
        if measured.is_empty() {
            continue;
        }
        // The per-CPU figures beside the mean repeat it under one group.
        let dup = match m.metric {
            MetricId::PerCpu { stat, node } => stat != PerCpuStat::Mean && one_group(node),
            _ => false,
        };
        if dup {
            out.push((k, LeftOut::OneCpuGroup));
        } else if measured.len() == 1 && study.groups.len() > 1 {
            out.push((k, LeftOut::OneGroupOnly(measured[0])));
        }
    }
    // One statistic under two names: the headline figure kept (global
    // bandwidth, not the same figure per package), else the first.
    for k in 0..study.metrics.len() {
        for j in 0..k {
            let gone = |x: usize, out: &Vec<(usize, LeftOut)>| out.iter().any(|(y, _)| *y == x);
            if gone(j, &out) || gone(k, &out) || !same_statistic(study, j, k) {
                continue;
            }
            let headline = |x: usize| study.metrics[x].metric.headline().is_some();
            if headline(k) && !headline(j) {
                out.push((j, LeftOut::SameAs(k)));
            } else {
                out.push((k, LeftOut::SameAs(j)));
            }
        }
    }
    out.sort_by_key(|(k, _)| *k);
    out
}

/// Whether metrics `j` and `k` of `study` are one statistic on these runs:
/// the same unit and the same figure in every run of every group (a value
/// equal to the last bit in every run is no coincidence).
fn same_statistic(study: &Study, j: usize, k: usize) -> bool {
    let (m, o) = (&study.metrics[k], &study.metrics[j]);
    o.unit == m.unit
        && o.groups.len() == m.groups.len()
        && m.groups.iter().any(|g| !g.values.is_empty())
        && o.groups.iter().zip(&m.groups).all(|(a, b)| a.values == b.values)
}

/// The sentence for the metrics left out as [`LeftOut::SameAs`]: `Local
/// bandwidth per package = Global bandwidth here (one package: per package
/// = the whole machine)`; `None` when there are none.
pub fn same_as_line(study: &Study, skipped: &[(usize, LeftOut)]) -> Option<String> {
    let one_package = !study.layouts.is_empty() && study.layouts.iter().all(|l| l.packages <= 1);
    let pairs: Vec<String> = skipped
        .iter()
        .filter_map(|(k, r)| match r {
            LeftOut::SameAs(j) => Some(format!(
                "{} = {}",
                super::words::row_name(study, &study.metrics[*k]),
                super::words::row_name(study, &study.metrics[*j])
            )),
            _ => None,
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let one_node = study.groups.iter().all(|g| g.one_node);
    let mut reasons = Vec::new();
    if one_package {
        reasons.push("one package: per package = the whole machine");
    }
    if one_node {
        reasons.push("one node: the latency a thread sees is the local latency");
    }
    let why = if reasons.is_empty() { String::new() } else { format!(" ({})", reasons.join("; ")) };
    Some(format!("Shown once, the same figure in every run here{why}: {}.", pairs.join("; ")))
}

/// How a bracketed verdict was reached, from the number of bracketed runs
/// and, where the noise was pooled over a study, the groups that gave it.
pub fn bracketed_text(brackets: usize, pooled_groups: Option<usize>) -> String {
    match pooled_groups {
        Some(groups) => {
            let df = brackets.saturating_sub(groups - 1);
            format!(
                "judged by bracketed runs of all {groups} groups at once: the runs alternate, and each of the {brackets} runs with runs of another group on both sides of it was compared with them, so that a drift of the machine cancels; the groups' scatter agrees, so one run-to-run noise serves them all (Student-t interval, {df} degree{} of freedom)",
                if df == 1 { "" } else { "s" }
            )
        }
        None => format!(
            "judged by bracketed runs: the runs alternate, and each of the {brackets} runs with runs of the other group on both sides of it was compared with them, so that a drift of the machine cancels (Student-t interval, {} degree{} of freedom)",
            brackets - 1,
            if brackets == 2 { "" } else { "s" }
        ),
    }
}

/// Why a profile makes no pick, in words.
pub fn no_pick_text(study: &Study, why: &NoPick) -> String {
    let names = |v: &[usize]| group_names(study, v);
    match why {
        NoPick::NothingMeasured => {
            "nothing to compare: no metric this profile needs was measured in two groups".into()
        }
        NoPick::Tie { groups } => format!(
            "no pick: {} tie within ±{}% on every figure it ranks by",
            names(groups),
            study.margin_pct
        ),
        NoPick::Undecided { metric, groups } => {
            let name = study.metrics.iter().find(|m| &m.metric == metric).map_or_else(
                || metric.to_string(),
                |m| lower_first(&super::words::row_name(study, m)),
            );
            format!("no pick: {name} is undecided between {}", names(groups))
        }
        NoPick::AllRuledOut => "no pick: every group is ruled out".into(),
    }
}

/// One line of a recommendation: the pick and the metric that decided it,
/// or the sentence that says why there is none.
pub fn recommendation_line(study: &Study, r: &Recommendation) -> String {
    let mut s = match (r.group, &r.no_pick) {
        (Some(g), _) => {
            let label = &study.groups[g].label;
            let decided = r
                .decided_by
                .as_ref()
                .and_then(|id| study.metrics.iter().find(|m| &m.metric == id))
                .map(|m| {
                    let c = &m.groups[g];
                    match (c.change_pct, g == study.baseline) {
                        (Some(ch), false) => {
                            format!(
                                " ({} {})",
                                lower_first(&super::words::row_name(study, m)),
                                signed_pct(ch)
                            )
                        }
                        _ => format!(" (on {})", lower_first(&super::words::row_name(study, m))),
                    }
                })
                .unwrap_or_default();
            format!("pick {label}{decided}")
        }
        (None, Some(why)) => no_pick_text(study, why),
        // `general`: the setting it names, its first letter lowered.
        (None, None) => {
            let mut p = hides_numa_clause(study, r).unwrap_or_default();
            if let Some(first) = p.get(..1) {
                p = first.to_lowercase() + &p[1..];
            }
            p
        }
    };
    if !r.excluded.is_empty() {
        let names: Vec<&str> = r.excluded.iter().map(|&g| study.groups[g].label.as_str()).collect();
        s.push_str(&format!("; rules out {}", names.join(", ")));
    }
    s
}

/// The recommendations as lines: the profiles that say the same thing
/// (the same pick, or the same reason for none), the line, and each
/// profile's reasoning (`profile: text`, the profile left out when one
/// profile says it, a reasoning said by several profiles once).
pub fn merged_recommendations(study: &Study) -> Vec<(Vec<String>, String, Vec<String>)> {
    // (profiles, line, [(profiles, reasoning)])
    type Said = (Vec<String>, String);
    let mut lines: Vec<(Vec<String>, String, Vec<Said>)> = Vec::new();
    for r in &study.recommendations {
        let line = recommendation_line(study, r);
        let text = recommendation_text(study, r);
        let i = match lines.iter().position(|(_, l, _)| *l == line) {
            Some(i) => i,
            None => {
                lines.push((Vec::new(), line, Vec::new()));
                lines.len() - 1
            }
        };
        let (profiles, _, texts) = &mut lines[i];
        profiles.push(r.profile.to_string());
        match texts.iter_mut().find(|(_, t)| *t == text) {
            Some((ps, _)) => ps.push(r.profile.to_string()),
            None => texts.push((vec![r.profile.to_string()], text)),
        }
    }
    lines
        .into_iter()
        .map(|(profiles, line, texts)| {
            let one = texts.len() == 1;
            let reasons = texts
                .into_iter()
                .map(|(ps, t)| if one { t } else { format!("{}: {t}", ps.join(", ")) })
                .collect();
            (profiles, line, reasons)
        })
        .collect()
}

/// `Local latency` -> `local latency`; a word in capitals (`CPU`) stays.
pub fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match (c.next(), c.next()) {
        (Some(a), Some(b)) if b.is_lowercase() => {
            format!("{}{b}{}", a.to_lowercase(), c.as_str())
        }
        _ => s.to_string(),
    }
}
