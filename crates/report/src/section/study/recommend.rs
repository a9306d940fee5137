//! A study's recommendations in words: each profile's reasoning as one
//! paragraph ([`recommendation_text`]) and the `general` line that names a
//! setting hiding NUMA ([`hides_numa_clause`]), from the typed reasons
//! `analysis` finds ([`analysis::study::Reason`]).

use crate::text::{clip, signed_pct};
use analysis::catalogue::{self, MetricId};
use analysis::study::{Against, Change, Missing, Next, Reason, Recommendation, Study};
use results::runstats::MAX_RUNS_SUGGESTED;

/// A recommendation's reasoning: the reasons as one sentence, the pick
/// (or the groups left without one), what the runs cannot hold and what
/// to measure next. `general` names a setting that hides NUMA.
pub fn recommendation_text(study: &Study, r: &Recommendation) -> String {
    if let Some(clause) = hides_numa_clause(study, r) {
        return format!(
            "{clause}. Placement still matters under it but the OS cannot manage it; prefer a setting that shows the nodes."
        );
    }
    let parts: Vec<String> = r.reasons.iter().map(|x| reason_text(study, x)).collect();
    let mut text = if parts.is_empty() {
        String::new()
    } else {
        format!("{}.", capitalise(&parts.join("; ")))
    };
    if let Some(g) = r.group {
        let verb = if g == study.baseline { "Keep" } else { "Pick" };
        text.push_str(&format!(" {verb} {}.", label(study, g)));
        if let Some(a) = &r.against {
            text.push_str(&against_text(study, g, a));
        }
    } else if !r.no_pick_between.is_empty() {
        text.push_str(&format!(" No pick between {}.", group_names(study, &r.no_pick_between)));
    }
    if let Some(m) = r.missing {
        text.push_str(&format!(" Not decided by these runs: {}.", missing_text(m)));
    }
    if !r.next.is_empty() {
        let next: Vec<String> = r.next.iter().map(|n| next_text(study, n)).collect();
        text.push_str(&format!(" Measure next: {}.", next.join("; ")));
    }
    text.trim().to_string()
}

/// `general`'s clause: `G hides NUMA: <the per-CPU evidence>`; `None` for
/// any other recommendation.
pub fn hides_numa_clause(study: &Study, r: &Recommendation) -> Option<String> {
    match r.reasons.as_slice() {
        [Reason::HidesNuma { group }] => {
            let g = study.groups.get(*group)?;
            let evidence =
                g.hidden_numa.as_ref().map(super::words::hidden_numa).unwrap_or_default();
            Some(format!("{} hides NUMA: {evidence}", g.label))
        }
        _ => None,
    }
}

/// One reason, a clause of the recommendation's first sentence.
fn reason_text(study: &Study, reason: &Reason) -> String {
    let conf = (study.confidence * 100.0).round();
    match reason {
        Reason::RuledOut { group } => format!(
            "{} is ruled out: the OS shows one node while per-CPU latency splits (see below), so it hides the split and threads land on the slow CPUs unseen",
            label(study, *group)
        ),
        Reason::LosesOn { metric, group, beaten_by, change } => format!(
            "{} loses on {}: {} is {} against it",
            label(study, *group),
            row_name(study, metric),
            label(study, *beaten_by),
            change_text(change, conf)
        ),
        Reason::WinsOn { metric, group, rival, change } => format!(
            "{} wins on {}: {} against {}, the closest of the others",
            label(study, *group),
            row_name(study, metric),
            change_text(change, conf),
            label(study, *rival)
        ),
        Reason::Tie { metric, groups } => format!(
            "{} tie on {} (within ±{}% of each other)",
            group_names(study, groups),
            row_name(study, metric),
            study.margin_pct
        ),
        Reason::Undecided { metric, groups } => format!(
            "{} is undecided between {}",
            row_name(study, metric),
            group_names(study, groups)
        ),
        Reason::MayLoseOn { metric, group, rivals } => format!(
            "{} may lose on {}, which is undecided between it and {}",
            label(study, *group),
            row_name(study, metric),
            group_names(study, rivals)
        ),
        Reason::DecidesNothing { metric, how } => format!(
            "{} decides nothing: {}",
            catalogue_name(metric),
            super::words::row_derived(study, how)
        ),
        Reason::NotMeasured { metric } => format!("{} was not measured", catalogue_name(metric)),
        Reason::NothingToCompare => {
            "nothing to compare: no metric this profile needs was measured in two groups".into()
        }
        Reason::HidesNuma { group } => {
            format!("{} hides NUMA", label(study, *group))
        }
    }
}

/// What to measure next, one item.
fn next_text(study: &Study, next: &Next) -> String {
    match next {
        Next::Runs { metric, runs, held_by_floor_pct } => {
            let name = row_name(study, metric);
            match (runs, held_by_floor_pct) {
                (_, Some(pct)) => format!(
                    "{name}: more runs per group would not decide (the {pct:.1}% noise floor for groups that size is larger than the change): runs of the settings alternated over time, or a quieter machine"
                ),
                (Some(n), None) => format!("{n} runs per group for {name}"),
                (None, None) => format!(
                    "{name}: more than {MAX_RUNS_SUGGESTED} runs per group, or a quieter machine, or runs of the settings alternated over time"
                ),
            }
        }
        Next::StepAtScope { step } => format!(
            "the `{step}` step in every group, to measure it at its scope (`numaprobe run --only {step}`)"
        ),
        Next::Step { step } => format!("the `{step}` step (`numaprobe run --only {step}`)"),
    }
}

fn missing_text(m: Missing) -> &'static str {
    match m {
        Missing::GpuH2d => {
            "host-to-GPU bandwidth from each node was not measured: `numaprobe gpu --label ...` in each configuration"
        }
    }
}

/// ` What differs from A: setting (value in A -> value in G), ...` for the
/// pick `g` judged against `a`, or that nothing recorded differs.
fn against_text(study: &Study, g: usize, a: &Against) -> String {
    let diffs: Vec<String> = a
        .differs
        .iter()
        .filter_map(|&i| study.settings_diff.get(i))
        .map(|d| {
            let value = |k: usize| {
                clip(&d.values.get(k).map(super::words::setting_value).unwrap_or_default(), 30)
            };
            format!("{} ({} -> {})", d.setting, value(a.group), value(g))
        })
        .collect();
    let against = label(study, a.group);
    if diffs.is_empty() {
        format!(" No recorded or declared setting differs from {against}: the change comes from something not recorded (declare it with `--set`), or the machine changed between the runs.")
    } else {
        format!(" What differs from {against}: {}.", diffs.join(", "))
    }
}

/// `+4.3% (90% interval +2.0% to +6.5%)`.
fn change_text(c: &Change, conf: f64) -> String {
    match c.interval {
        Some((lo, hi)) => format!(
            "{} ({conf}% interval {} to {})",
            signed_pct(c.change_pct),
            signed_pct(lo),
            signed_pct(hi)
        ),
        None => format!("{} (beyond this machine's noise floor)", signed_pct(c.change_pct)),
    }
}

fn label(study: &Study, g: usize) -> &str {
    study.groups.get(g).map_or("?", |g| g.label.as_str())
}

/// `A`, `A and B`, `A, B and C`.
pub(crate) fn group_names(study: &Study, v: &[usize]) -> String {
    let n: Vec<&str> =
        v.iter().filter_map(|&g| study.groups.get(g)).map(|g| g.label.as_str()).collect();
    match n.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The study row's name inside a sentence (its id where the study has no
/// such row).
fn row_name(study: &Study, id: &MetricId) -> String {
    study
        .metrics
        .iter()
        .find(|m| &m.metric == id)
        .map_or_else(|| id.to_string(), |m| lower_initial(&super::words::row_name(study, m)))
}

/// The catalogue's name of a metric the study may not hold.
fn catalogue_name(id: &MetricId) -> String {
    lower_initial(&catalogue::def_of_id(id).name)
}

/// `s` with its first letter in lower case, whatever follows (unlike
/// [`super::sentences::lower_first`], which keeps a leading acronym: the
/// reasoning has always been worded this way).
fn lower_initial(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
