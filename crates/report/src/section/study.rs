//! The settings study ([`analysis::study::Study`]) as a report section,
//! tables and charts: what `compare` prints and the reports draw.

pub mod recommend;
pub mod sentences;
pub mod words;

use crate::text::{clip_words, signed_pct};
use analysis::catalogue::MetricId;
use analysis::study::{Study, StudyMetric};
use results::runstats::{Basis, GroupVerdict, MAX_RUNS_SUGGESTED};

use crate::chart::{Axis, Chart, Marker, Series, XyChart};
use crate::doc::{Align, Document, Table};
use std::collections::BTreeMap;

use analysis::data::RunData;
use analysis::metrics::MetricKey;
use store::LoadedRun;

use crate::fmt::fig;
use crate::glance::Glance;

/// The report's comparison section: groups, settings that differ, the
/// metrics with verdicts, one chart per metric (dots per run, median
/// marked, best group named), and the analysis and recommendations.
pub fn section(study: &Study, doc: &mut Document) {
    section_with(study, doc, &GroupNoise::new(), &[]);
}

/// How many settings that differ and recommendations the study's glance
/// box lists (the others are counted; all are in the comparison section).
const GLANCE_SETTINGS: usize = 6;
const GLANCE_RECOMMENDATIONS: usize = 3;

/// The study's glance box: the groups, the settings that differ, each
/// metric per group (the median, rounded as the groups' tables round it,
/// with the change and verdict against the baseline), warnings and the
/// first recommendations.
pub fn study_glance(study: &Study, noise: &GroupNoise) -> Glance {
    let mut g = Glance { title: "The study at a glance".into(), ..Glance::default() };
    let groups: Vec<String> = study
        .groups
        .iter()
        .enumerate()
        .map(|(i, gr)| {
            format!(
                "{}. {}: run{} {}",
                i + 1,
                group_name(study, i),
                if gr.runs.len() == 1 { "" } else { "s" },
                gr.runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    g.rows.push(("Groups".into(), groups.join("; ")));
    if study.across_machines {
        g.rows.push((
            "Machines".into(),
            "the groups ran on different machines: differences include the hardware".into(),
        ));
    }
    let diff = if study.settings_diff.is_empty() {
        "none recorded: the groups differ in nothing numaprobe reads".to_string()
    } else {
        let mut v: Vec<String> = study
            .settings_diff
            .iter()
            .take(GLANCE_SETTINGS)
            .map(|d| {
                format!(
                    "{}: {}",
                    d.setting,
                    d.values
                        .iter()
                        .map(|v| clip_words(&words::setting_value(v), 40))
                        .collect::<Vec<_>>()
                        .join(" | ")
                )
            })
            .collect();
        if study.settings_diff.len() > GLANCE_SETTINGS {
            v.push(format!("and {} more", study.settings_diff.len() - GLANCE_SETTINGS));
        }
        v.join("; ")
    };
    g.rows.push(("Settings that differ".into(), diff));
    for m in &study.metrics {
        if m.groups.iter().all(|c| c.median.is_none()) {
            continue;
        }
        let figs = row_figs(study, m, noise);
        let cells: Vec<String> = m
            .groups
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let label = &study.groups[i].label;
                if c.median.is_none() {
                    return format!("{label} -");
                }
                let mut s = format!("{label} {}", figs[i]);
                if study.impossible_in(i, &m.metric) {
                    s.push_str(" (impossible)");
                }
                if let (Some(ch), Some(vd)) = (c.change_pct, c.verdict) {
                    s.push_str(&format!(" ({}, {})", signed_pct(ch), vd.as_str()));
                }
                if m.best_group == Some(i) {
                    s.push_str(" best");
                }
                s
            })
            .collect();
        g.rows.push((format!("{} ({})", words::row_name(study, m), m.unit), cells.join("; ")));
    }
    for w in words::warnings(study) {
        g.rows.push(("Warning".into(), w));
    }
    if let Some(line) = marked_inputs_line(study) {
        g.rows.push(("Disturbed inputs".into(), line));
    }
    for r in study.recommendations.iter().take(GLANCE_RECOMMENDATIONS) {
        g.rows.push((
            format!("Recommendation ({})", r.profile),
            recommend::recommendation_text(study, r),
        ));
    }
    if study.recommendations.len() > GLANCE_RECOMMENDATIONS {
        g.rows.push((
            "More".into(),
            format!(
                "{} more recommendations under Analysis and recommendations below",
                study.recommendations.len() - GLANCE_RECOMMENDATIONS
            ),
        ));
    }
    g
}

/// The comparison report's first screen, the answer: the settings that
/// differ in one line, one table (a column per group with its median and
/// n, then per compared group the change, its interval and the verdict,
/// coloured), the forest plot of every change with its interval over the
/// margin and noise-floor bands, and one line per profile's
/// recommendation (profiles that say the same thing merged) with its
/// reasoning folded under it. The metrics that cannot differ here are
/// left out and counted, as `compare` does.
pub fn answer(study: &Study, doc: &mut Document, noise: &GroupNoise) {
    let conf = (study.confidence * 100.0).round();
    let base = &study.groups[study.baseline].label;
    answer_heading(study, doc);
    let skipped = crate::study::sentences::left_out(study);
    let shape = AnswerShape::of(study, &skipped);
    let mut t = Table::new(shape.header(study));
    t.never_fold = true;
    let mut rows = Vec::new();
    for (k, m) in study.metrics.iter().enumerate() {
        if m.groups.iter().all(|c| c.median.is_none()) || skipped.iter().any(|(s, _)| *s == k) {
            continue;
        }
        t.push(shape.row(study, m, noise, &mut rows));
    }
    let forest = (!rows.is_empty()).then(|| {
        crate::chart::Chart::Forest(crate::chart::Forest {
            title: format!("Change against {base}, {conf}% interval"),
            x_label: format!("change against {base} (%)"),
            margin_pct: study.margin_pct,
            rows,
        })
    });
    // Two groups: the table and the forest plot side by side on a wide
    // window. More: the table the page's width, the plot under it.
    doc.boxed(if shape.two { "answer" } else { "answer many" }, |doc| {
        doc.table(t);
        if let Some(f) = forest {
            doc.chart(f);
        }
    });
    if let Some(line) = crate::study::sentences::same_as_line(study, &skipped) {
        doc.p(line);
    }
    let others_left = skipped
        .iter()
        .filter(|(_, r)| !matches!(r, crate::study::sentences::LeftOut::SameAs(_)))
        .count();
    if others_left > 0 {
        doc.p(format!(
            "Left out here ({others_left}; the comparison below lists them): the per-CPU rows that cannot differ (every group's CPUs form one latency group) and the metrics measured in one group only.",
        ));
    }
}

/// The answer's heading: the settings that differ in one line, the
/// warnings and marked inputs, then one line per profile's recommendation
/// (profiles that say the same thing merged), the reasoning folded.
fn answer_heading(study: &Study, doc: &mut Document) {
    let conf = (study.confidence * 100.0).round();
    let base = &study.groups[study.baseline].label;
    doc.h(2, "The answer");
    let diff = if study.settings_diff.is_empty() {
        "none recorded".to_string()
    } else {
        study
            .settings_diff
            .iter()
            .take(GLANCE_SETTINGS)
            .map(|d| {
                format!(
                    "{} ({})",
                    d.setting,
                    d.values
                        .iter()
                        .map(|v| clip_words(&words::setting_value(v), 30))
                        .collect::<Vec<_>>()
                        .join(" | ")
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
            + &if study.settings_diff.len() > GLANCE_SETTINGS {
                format!(" and {} more", study.settings_diff.len() - GLANCE_SETTINGS)
            } else {
                String::new()
            }
    };
    doc.p(format!(
        "**Settings that differ:** {diff}. Each group's figure is the median of its runs; the change is against {base} with its {conf}% interval; margin ±{}%.",
        study.margin_pct
    ));
    for w in words::warnings(study) {
        doc.callout(format!("Warning: {w}."));
    }
    if let Some(line) = marked_inputs_line(study) {
        doc.callout(line);
    }
    let lines = crate::study::sentences::merged_recommendations(study);
    if !lines.is_empty() {
        doc.h(3, "Recommendations");
        for (profiles, line, reasons) in lines {
            doc.details(format!("**{}**: {line}", profiles.join(", ")), reasons);
        }
    }
}

/// How the answer's table is laid out: two groups, a column per group,
/// the change, its interval and the verdict, beside the forest plot;
/// three or more, the baseline's column, then one column block per
/// compared group holding its figure, change and verdict, so the table
/// fits the window whatever the number of groups (the intervals are the
/// forest plot's, under it).
struct AnswerShape {
    /// The groups judged against the baseline.
    others: Vec<usize>,
    two: bool,
    /// One n per group when every tabled metric has the same: in the
    /// header.
    one_n: Vec<Option<usize>>,
}

impl AnswerShape {
    fn of(study: &Study, skipped: &[(usize, crate::study::sentences::LeftOut)]) -> AnswerShape {
        let others: Vec<usize> = (0..study.groups.len()).filter(|&i| i != study.baseline).collect();
        let tabled: Vec<&analysis::study::StudyMetric> = study
            .metrics
            .iter()
            .enumerate()
            .filter(|(k, m)| {
                m.groups.iter().any(|c| c.median.is_some()) && !skipped.iter().any(|(s, _)| s == k)
            })
            .map(|(_, m)| m)
            .collect();
        let one_n: Vec<Option<usize>> = (0..study.groups.len())
            .map(|i| {
                let ns: Vec<usize> = tabled
                    .iter()
                    .filter(|m| m.groups[i].median.is_some())
                    .map(|m| m.groups[i].n)
                    .collect();
                ns.first().copied().filter(|n| ns.iter().all(|x| x == n))
            })
            .collect();
        AnswerShape { two: others.len() == 1, others, one_n }
    }

    fn name_n(&self, study: &Study, i: usize) -> String {
        match self.one_n[i] {
            Some(n) => format!("{} (n={n})", group_name(study, i)),
            None => group_name(study, i),
        }
    }

    fn header(&self, study: &Study) -> Vec<String> {
        let conf = (study.confidence * 100.0).round();
        let base = &study.groups[study.baseline].label;
        let mut header = vec!["Metric".to_string()];
        if self.two {
            header.extend((0..study.groups.len()).map(|i| self.name_n(study, i)));
            header.extend([
                "Change".to_string(),
                format!("{conf}% interval"),
                "Verdict".to_string(),
            ]);
        } else {
            header.push(self.name_n(study, study.baseline));
            header.extend(
                self.others.iter().map(|&i| format!("{} against {base}", self.name_n(study, i))),
            );
        }
        header
    }

    /// One metric's row; each compared group's change joins the forest
    /// plot's `forest` rows.
    fn row(
        &self,
        study: &Study,
        m: &analysis::study::StudyMetric,
        noise: &GroupNoise,
        forest: &mut Vec<crate::chart::ForestRow>,
    ) -> Vec<String> {
        let two = self.two;
        let marked =
            (0..study.groups.len()).any(|i| marked_runs(study, &m.metric, i).next().is_some());
        let mut row = vec![format!(
            "{} ({}){}",
            words::row_name(study, m),
            m.unit,
            if marked { " !" } else { "" }
        )];
        let figs = row_figs(study, m, noise);
        let fig_n = |i: usize| {
            let f = match (&m.groups[i].median, self.one_n[i]) {
                (None, _) => return "-".to_string(),
                (Some(_), Some(_)) => figs[i].clone(),
                (Some(_), None) => format!("{} (n={})", figs[i], m.groups[i].n),
            };
            if study.impossible_in(i, &m.metric) {
                format!("{f} (impossible)")
            } else {
                f
            }
        };
        let verdict_of = |i: usize, v: &str| {
            if verdict_on_marked(study, &m.metric, i) {
                format!("{v} (disturbed inputs)")
            } else {
                v.to_string()
            }
        };
        if two {
            row.extend((0..study.groups.len()).map(fig_n));
        } else {
            row.push(fig_n(study.baseline));
        }
        for &i in &self.others {
            let c = &m.groups[i];
            let (Some(ch), Some(v)) = (c.change_pct, c.verdict) else {
                if two {
                    row.extend(["-".into(), "-".into(), "not compared".into()]);
                } else {
                    row.push(format!("{} not compared", fig_n(i)));
                }
                continue;
            };
            if two {
                row.push(signed_pct(ch));
                row.push(match (c.ci_low_pct, c.ci_high_pct) {
                    (Some(lo), Some(hi)) => format!("{} to {}", signed_pct(lo), signed_pct(hi)),
                    _ => "too few runs".into(),
                });
                row.push(verdict_of(i, v.as_str()));
            } else {
                row.push(format!("{} {} {}", fig_n(i), signed_pct(ch), verdict_of(i, v.as_str())));
            }
            let label = if two {
                format!("{} ({})", chart_name(m), m.unit)
            } else {
                format!("{}, {}", chart_name(m), study.groups[i].label)
            };
            forest.push(crate::chart::ForestRow {
                label,
                change_pct: ch,
                interval: c.ci_low_pct.zip(c.ci_high_pct),
                floor_pct: c.noise_floor_pct,
                verdict: v.as_str().to_string(),
            });
        }
        row
    }
}

/// [`section`] with each group's median rounded to its noise, and the
/// groups' curves overlaid ([`curves`]) from `runs` (the study's loaded
/// runs; none: no curves).
pub fn section_with(study: &Study, doc: &mut Document, noise: &GroupNoise, runs: &[&LoadedRun]) {
    doc.h(2, "Comparison");
    doc.h(3, "Settings that differ");
    if study.settings_diff.is_empty() {
        doc.p("No recorded setting differs between the groups.");
    } else {
        doc.table(settings_table(study));
    }
    doc.p(settings_same_line(study));
    for w in words::warnings(study) {
        doc.callout(format!("Warning: {w}."));
    }
    if let Some(line) = marked_inputs_line(study) {
        doc.callout(line);
    }
    for n in words::notes(study) {
        doc.callout(format!("Note: {n}."));
    }
    for i in &study.impossible {
        let g = &study.groups[i.group].label;
        doc.callout(format!(
            "Impossible in {g} (run {}): {}.",
            i.run,
            crate::impossible::text(&i.figure)
        ));
    }
    for g in &study.groups {
        if let Some(h) = &g.hidden_numa {
            doc.callout(format!("Hidden NUMA in {}: {}.", g.label, words::hidden_numa(h)));
        }
    }
    doc.h(3, "Groups");
    doc.table(groups_table(study));
    doc.h(3, "Metrics");
    doc.p(format!(
        "Groups of runs against the baseline, {}. Each group's figure is the median of its runs; a change whose {}% interval (from the spread between runs, not the repetitions inside a run) lies within the ±{}% margin is same; otherwise it counts as better or worse when that interval excludes no change and the change is larger than the spread seen between repeated runs of identical settings on this machine, and as undecided when not. See docs/store.md.",
        group_name(study, study.baseline),
        (study.confidence * 100.0).round(),
        study.margin_pct
    ));
    doc.table(metrics_table_with(study, noise));
    doc.multiples(charts(study));
    let curves = curves(study, runs);
    if !curves.is_empty() {
        doc.h(3, "Curves of every group");
        doc.p("The latency sweep, the loaded latency and the thread scaling of each group overlaid, one colour per group (the same in every chart): each group's curve is that of its first run holding it, the run its detail below shows.");
        for c in curves {
            doc.chart(c);
        }
    }
    doc.fold("How each verdict was reached", |doc| doc.list(verdict_lines(study)));
    doc.h(3, "Analysis and recommendations");
    doc.list(
        study
            .recommendations
            .iter()
            .map(|r| format!("{}: {}", r.profile, recommend::recommendation_text(study, r)))
            .collect(),
    );
}

/// The runs of group `group` whose figure of `metric` rests on marked
/// (disturbed or noisy) results ([`Study::marked_inputs`]).
pub fn marked_runs<'a>(
    study: &'a Study,
    metric: &'a MetricId,
    group: usize,
) -> impl Iterator<Item = &'a analysis::inputs::MarkedInput> + 'a {
    study.marked_inputs.iter().filter(move |m| *metric == m.metric && m.group == group)
}

/// Whether a verdict of group `i` on `metric` rests on marked inputs: its
/// own runs' or the baseline's.
pub fn verdict_on_marked(study: &Study, metric: &MetricId, i: usize) -> bool {
    marked_runs(study, metric, i).next().is_some()
        || marked_runs(study, metric, study.baseline).next().is_some()
}

/// The words a verdict on marked inputs carries: `on disturbed inputs:
/// run 3 (THP always), run 1 (baseline)`; `None` when its inputs are
/// clean.
pub fn verdict_mark_text(study: &Study, metric: &MetricId, i: usize) -> Option<String> {
    let runs: Vec<String> = [i, study.baseline]
        .into_iter()
        .flat_map(|g| marked_runs(study, metric, g))
        .map(|m| {
            let states: std::collections::BTreeSet<&str> =
                m.marks.iter().map(|k| crate::trust::word(&k.distrust)).collect();
            format!(
                "run {} of {} ({})",
                m.run,
                study.groups[m.group].label,
                states.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect();
    if runs.is_empty() {
        return None;
    }
    Some(format!(
        "on marked inputs: {}: the figures compared may have been held back by other work; measure those runs again on a quiet machine",
        runs.join(", ")
    ))
}

/// The line a comparison's header carries when any of its inputs were
/// marked: how many runs, which, and that the verdicts on them say so.
pub fn marked_inputs_line(study: &Study) -> Option<String> {
    if study.marked_inputs.is_empty() {
        return None;
    }
    let mut runs: Vec<(usize, results::run::RunId)> =
        study.marked_inputs.iter().map(|m| (m.group, m.run)).collect();
    runs.sort();
    runs.dedup();
    let states: std::collections::BTreeSet<&str> = study
        .marked_inputs
        .iter()
        .flat_map(|m| m.marks.iter().map(|k| crate::trust::word(&k.distrust)))
        .collect();
    let metrics: std::collections::BTreeSet<String> =
        study.marked_inputs.iter().map(|m| m.metric.to_string()).collect();
    let each: Vec<String> =
        runs.iter().map(|(g, r)| format!("run {r} ({})", study.groups[*g].label)).collect();
    Some(format!(
        "Disturbed inputs: {} run{} figures marked {} behind {} metric{}: {}. The rows and verdicts that rest on them say so (!); measure those runs again on a quiet machine before trusting them.",
        runs.len(),
        if runs.len() == 1 { " holds" } else { "s hold" },
        states.into_iter().collect::<Vec<_>>().join(" or "),
        metrics.len(),
        if metrics.len() == 1 { "" } else { "s" },
        each.join(", ")
    ))
}

/// The name of group `i` for tables: its label, `(baseline)` marked.
pub fn group_name(study: &Study, i: usize) -> String {
    let g = &study.groups[i];
    format!("{}{}", g.label, if i == study.baseline { " (baseline)" } else { "" })
}

/// The groups: reference, label, runs, configuration, machine.
pub fn groups_table(study: &Study) -> Table {
    let mut t = Table::with_header(&["#", "Group", "Selected by", "Runs", "Config"]);
    t.align = vec![Align::Right, Align::Left, Align::Left, Align::Left, Align::Left];
    for (i, g) in study.groups.iter().enumerate() {
        t.push(vec![
            (i + 1).to_string(),
            group_name(study, i),
            g.reference.clone(),
            g.runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", "),
            g.configs.iter().map(|c| short(c)).collect::<Vec<_>>().join(", "),
        ]);
    }
    t
}

/// Every setting that differs, one column per group.
pub fn settings_table(study: &Study) -> Table {
    let mut header = vec!["Setting".to_string()];
    header.extend((0..study.groups.len()).map(|i| group_name(study, i)));
    let mut t = Table::new(header);
    for d in &study.settings_diff {
        let mut row = vec![d.setting.clone()];
        row.extend(d.values.iter().map(|v| clip_words(&words::setting_value(v), 60)));
        t.rows.push(row);
    }
    t
}

/// The one line listing the settings every group shares, each shortened
/// ([`same_setting_text`]).
pub fn settings_same_line(study: &Study) -> String {
    if study.settings_same.is_empty() {
        "No setting is the same in every group.".into()
    } else {
        let each: Vec<String> = study
            .settings_same
            .iter()
            .map(|(k, v)| same_setting_text(k, &words::setting_value(v)))
            .collect();
        format!("Same in every group: {}.", each.join(", "))
    }
}

/// A shared setting and its value as the "same in every group" line
/// writes them (`name=value`): the kernel command line cut to its memory options, any
/// other value to 60 characters; the full values are in each run's
/// environment.
pub fn same_setting_text(setting: &str, value: &str) -> String {
    if setting == "cmdline" && value.chars().count() > 60 {
        return format!("cmdline={}", crate::environment::cmdline_memory_options(value));
    }
    format!("{setting}={}", clip_words(value, 60))
}

/// The noise (robust CV %) of each group's figure of each metric: the
/// largest of its runs' ([`crate::figures::headlines`]), keyed by group
/// index and metric id; the runs are looked up among `runs`.
pub type GroupNoise = BTreeMap<(usize, String), f64>;

/// [`GroupNoise`] of `study` from its loaded runs.
pub fn group_noise(study: &Study, runs: &[&LoadedRun]) -> GroupNoise {
    let mut out = GroupNoise::new();
    for (i, g) in study.groups.iter().enumerate() {
        for id in &g.runs {
            let Some(r) = runs.iter().find(|r| r.summary.id == *id) else { continue };
            for (k, h) in crate::figures::headlines(&RunData::of(r)) {
                // The catalogue's figures drawn from this headline's
                // results carry its noise.
                let drawn: &[&str] = match k {
                    MetricKey::GlobalBw => &[analysis::catalogue::LOCAL_BW_PKG],
                    MetricKey::CrossBw => {
                        &[analysis::catalogue::CROSS_PKG_BW, analysis::catalogue::NEIGHBOUR_BW]
                    }
                    _ => &[],
                };
                for id in std::iter::once(k.id()).chain(drawn.iter().copied()) {
                    let e = out.entry((i, id.to_string())).or_insert(0.0);
                    *e = e.max(h.noise_pct);
                }
            }
        }
    }
    out
}

/// The groups' medians of one metric as one row writes them: with one
/// precision, the coarsest the groups' noise supports
/// ([`crate::fmt::fig`]), refined one decimal at a time (up to what
/// [`crate::fmt::num`] gives the unit) until every compared group's
/// written figures show its change against the baseline: the same sign,
/// and within a factor of two of it when it is 1% or more (`10` beside
/// `9` next to -4.3% would read as -10%). `-` for a group without it.
pub fn row_figs(
    study: &Study,
    m: &analysis::study::StudyMetric,
    noise: &GroupNoise,
) -> Vec<String> {
    let medians: Vec<Option<f64>> = m.groups.iter().map(|c| c.median).collect();
    let noises: Vec<Option<f64>> =
        (0..m.groups.len()).map(|i| noise.get(&(i, m.metric.to_string())).copied()).collect();
    row_digits(&medians, &noises, &m.unit, study.baseline)
}

/// [`row_figs`] of bare figures: each group's median (`None`: not
/// measured), its noise, the unit and the baseline's index.
pub fn row_digits(
    medians: &[Option<f64>],
    noises: &[Option<f64>],
    unit: &str,
    baseline: usize,
) -> Vec<String> {
    let dec = |s: &str| s.split('.').nth(1).map_or(0, str::len);
    let max_dec = medians.iter().flatten().map(|v| dec(&crate::fmt::num(*v, unit))).max();
    let Some(max_dec) = max_dec else { return vec!["-".into(); medians.len()] };
    // the coarsest precision the groups' own rounding gives
    let mut d = medians
        .iter()
        .zip(noises)
        .filter_map(|(v, n)| Some(dec(&fig(Some((*v)?), *n, unit))))
        .min()
        .unwrap_or(max_dec);
    // as `fmt::noisy` rounds, so a row's figure is the runs' tables' one
    let round = |v: f64, d: usize| {
        let step = 10f64.powi(-(d as i32));
        (v / step).round() * step
    };
    let base = medians.get(baseline).copied().flatten();
    while d < max_dec {
        let Some(b) = base.filter(|b| *b != 0.0) else { break };
        let rb = round(b, d);
        let off = medians.iter().flatten().any(|v| {
            let change = v / b - 1.0;
            if change.abs() < 1e-12 {
                return false;
            }
            let shown = if rb == 0.0 { f64::INFINITY } else { round(*v, d) / rb - 1.0 };
            shown.signum() != change.signum()
                || (change.abs() >= 0.01
                    && (shown.abs() > 2.0 * change.abs() || shown.abs() < change.abs() / 2.0))
        });
        if !off {
            break;
        }
        d += 1;
    }
    medians
        .iter()
        .map(|v| v.map_or_else(|| "-".into(), |v| format!("{:.d$}", round(v, d))))
        .collect()
}

/// Metrics as rows, groups as columns: the median (n runs) and, for the
/// other groups, the change with its interval and the verdict.
pub fn metrics_table(study: &Study) -> Table {
    metrics_table_with(study, &GroupNoise::new())
}

/// [`metrics_table`] with each group's median rounded to its noise, as the
/// run's own tables round the same figure.
pub fn metrics_table_with(study: &Study, noise: &GroupNoise) -> Table {
    let mut header = vec!["Metric".to_string()];
    header.extend((0..study.groups.len()).map(|i| group_name(study, i)));
    let mut t = Table::new(header);
    for m in &study.metrics {
        let marked =
            (0..study.groups.len()).any(|i| marked_runs(study, &m.metric, i).next().is_some());
        let mut row = vec![format!(
            "{} ({}){}",
            words::row_name(study, m),
            m.unit,
            if marked { " !" } else { "" }
        )];
        let figs = row_figs(study, m, noise);
        for (i, c) in m.groups.iter().enumerate() {
            let mut s = match c.median {
                None => "-".to_string(),
                Some(_) => format!(
                    "{} (n={}){}",
                    figs[i],
                    c.n,
                    if study.impossible_in(i, &m.metric) { " (impossible)" } else { "" }
                ),
            };
            if let (Some(ch), Some(v)) = (c.change_pct, c.verdict) {
                s.push_str(&format!(" {} {}", signed_pct(ch), v.as_str()));
                if verdict_on_marked(study, &m.metric, i) {
                    s.push_str(" (disturbed inputs)");
                }
                if let (Some(lo), Some(hi)) = (c.ci_low_pct, c.ci_high_pct) {
                    s.push_str(&format!(" [{}, {}]", signed_pct(lo), signed_pct(hi)));
                }
            }
            if m.best_group == Some(i) {
                s.push_str(" *best");
            }
            row.push(s);
        }
        t.rows.push(row);
    }
    t
}

/// [`metrics_table_with`] without the rows of `skipped` (as
/// [`crate::study::sentences::left_out`] gives them).
pub fn metrics_table_without(
    study: &Study,
    noise: &GroupNoise,
    skipped: &[(usize, crate::study::sentences::LeftOut)],
) -> Table {
    let mut t = metrics_table_with(study, noise);
    let mut k = 0;
    t.rows.retain(|_| {
        let keep = !skipped.iter().any(|(s, _)| *s == k);
        k += 1;
        keep
    });
    t
}

/// One line per metric and group explaining the verdict.
pub fn verdict_lines(study: &Study) -> Vec<String> {
    let conf = (study.confidence * 100.0).round();
    let mut out = Vec::new();
    for m in &study.metrics {
        for (i, c) in m.groups.iter().enumerate() {
            if i == study.baseline {
                continue;
            }
            let (Some(ch), Some(v)) = (c.change_pct, c.verdict) else {
                let base = group_name(study, study.baseline);
                let na = match (c.not_applicable, m.groups[study.baseline].not_applicable) {
                    (Some(w), _) => Some(words::not_applicable(w).to_string()),
                    (None, Some(w)) => Some(format!(
                        "the baseline {} cannot have it: {}",
                        study.groups[study.baseline].label,
                        words::not_applicable(w)
                    )),
                    _ => None,
                };
                let layouts = (study.layouts.get(i), study.layouts.get(study.baseline));
                let sized = analysis::catalogue::def_of_id(&m.metric).sized_by_node();
                out.push(match (na, layouts) {
                    (Some(w), _) => {
                        format!(
                            "{}: {} not comparable ({w}).",
                            words::row_name(study, m),
                            group_name(study, i)
                        )
                    }
                    (None, (Some(a), Some(b)))
                        if sized && c.n > 0 && a.structure() != b.structure() =>
                    {
                        format!(
                            "{}: {} not judged against {base}: its nodes ({}) are not the baseline's ({}), and a per-node figure follows the node's size (see the per-package figures).",
                            words::row_name(study, m),
                            group_name(study, i),
                            a.structure().text(),
                            b.structure().text()
                        )
                    }
                    (None, _) => {
                        format!("{}: {}.", words::row_name(study, m), not_measured(study, m, i))
                    }
                });
                continue;
            };
            let n_base = m.groups[study.baseline].n;
            let mut s = format!(
                "{}: {} {} against {}, {} (runs {} vs {}",
                words::row_name(study, m),
                study.groups[i].label,
                signed_pct(ch),
                study.groups[study.baseline].label,
                v.as_str(),
                c.n,
                n_base
            );
            match (c.ci_low_pct, c.ci_high_pct, c.basis) {
                (Some(lo), Some(hi), basis) => {
                    s.push_str(&format!(
                        "; {conf}% interval {} to {}; margin ±{}%",
                        signed_pct(lo),
                        signed_pct(hi),
                        study.margin_pct
                    ));
                    if basis == Some(Basis::NoiseFloor) {
                        s.push_str(&format!(
                            "; within the {:.1}% by which groups of identical settings can differ on this machine ({conf}% prediction bound)",
                            c.noise_floor_pct.unwrap_or(0.0)
                        ));
                    }
                    if let (Some(Basis::Bracketed), Some(n)) = (basis, c.brackets) {
                        let why = crate::study::sentences::bracketed_text(n, c.pooled_groups);
                        s.push_str(&format!("; {why}"));
                    }
                }
                (_, _, Some(Basis::NoiseFloor)) => s.push_str(&format!(
                    "; too few runs for an interval, judged against a distribution-free noise floor of {:.1}%",
                    c.noise_floor_pct.unwrap_or(0.0)
                )),
                _ => match c.floor_runs_needed {
                    Some(more) if more > 0 => s.push_str(&format!(
                        "; too few runs for an interval, and a noise floor needs {more} more run{} of identical settings",
                        if more == 1 { "" } else { "s" }
                    )),
                    _ => s.push_str(
                        "; too few runs for an interval and no noise floor measured on this machine",
                    ),
                },
            }
            match (c.noise_floor_pct, c.basis) {
                (Some(f), Some(b)) if b != Basis::NoiseFloor => {
                    s.push_str(&format!("; noise floor {f:.1}%"));
                }
                (None, Some(Basis::Interval)) => s.push_str(
                    "; no noise floor: no configuration of this machine has two blocks of repeated runs of identical settings",
                ),
                _ => {}
            }
            if let Some(why) = c.undecided_because {
                s.push_str(&format!("; {}", why.text()));
            }
            s.push(')');
            if let Some(t) = verdict_mark_text(study, &m.metric, i) {
                s.push_str(&format!("; {t}"));
            }
            if let Some(f) = c.more_runs_held_by_floor_pct {
                s.push_str(&format!(
                    "; more runs per group would not decide: the {f:.1}% noise floor for groups that size is larger than the change, so alternate the settings' runs over time (A, B, A, B)"
                ));
            } else if let Some(n) = c.runs_needed {
                s.push_str(&format!("; about {n} runs per group would decide"));
            } else if v == GroupVerdict::Undecided && c.basis == Some(Basis::NoiseFloor) {
                s.push_str("; alternate the settings' runs over time (A, B, A, B) so that the machine's drift falls on both");
            } else if v == GroupVerdict::Undecided {
                s.push_str(&format!(
                    "; more than {MAX_RUNS_SUGGESTED} runs per group would be needed: this machine's run-to-run noise is large for a change this size"
                ));
            }
            s.push('.');
            out.push(s);
        }
        // Where the floors of this metric came from, once.
        let sources: Vec<String> = m
            .groups
            .iter()
            .filter_map(|c| c.noise_floor_source.as_ref())
            .map(|s| words::floor_source(study.confidence, s))
            .fold(Vec::new(), |mut v, x| {
                if !v.contains(&x) {
                    v.push(x);
                }
                v
            });
        for src in sources {
            out.push(format!("{}: the noise floor is the {src}.", words::row_name(study, m)));
        }
    }
    out
}

/// `not measured in GROUP` for a metric group `i` and the baseline cannot
/// be compared on: the group(s) of the two without it named.
fn not_measured(study: &Study, m: &analysis::study::StudyMetric, i: usize) -> String {
    let lacking: Vec<String> = [i, study.baseline]
        .into_iter()
        .filter(|&g| m.groups[g].n == 0)
        .map(|g| group_name(study, g))
        .collect();
    match lacking.as_slice() {
        [] => format!("{} cannot be compared with the baseline", group_name(study, i)),
        [one] => format!("not measured in {one}"),
        _ => format!("measured in neither {}", lacking.join(" nor ")),
    }
}

/// Per headline metric, the runs of each group as dots with the median
/// marked (an [`XyChart`]: x is the group number, the markers name the
/// groups and the best one).
pub fn charts(study: &Study) -> Vec<Chart> {
    let mut out = Vec::new();
    for m in &study.metrics {
        let mut runs = Vec::new();
        let mut medians = Vec::new();
        for (i, c) in m.groups.iter().enumerate() {
            let x = (i + 1) as f64;
            runs.extend(c.values.iter().map(|v| (x, *v)));
            if let Some(med) = c.median {
                // Beside the dots, so the run it often equals stays visible.
                medians.push((x + 0.12, med));
            }
        }
        if runs.is_empty() {
            continue;
        }
        let markers = (0..study.groups.len())
            .map(|i| Marker {
                x: (i + 1) as f64,
                label: format!(
                    "{}{}",
                    group_name(study, i),
                    if m.best_group == Some(i) { " (best)" } else { "" }
                ),
            })
            .collect();
        out.push(Chart::Xy(XyChart {
            title: format!(
                "{} per group ({}, {}): one dot per run, median marked",
                chart_name(m),
                m.unit,
                if m.higher_is_better { "higher is better" } else { "lower is better" }
            ),
            x: Axis {
                from_zero: false,
                names: (0..study.groups.len()).map(|i| study.groups[i].label.clone()).collect(),
                ..Axis::integer("group")
            },
            // Zoomed on the data: 150.1 and 149.9 must not look the same.
            y: Axis { from_zero: false, ..Axis::linear(format!("{} ({})", chart_name(m), m.unit)) },
            series: vec![Series::points("runs", runs), Series::points("median", medians)],
            markers,
            lines: Vec::new(),
            band_label: String::new(),
        }));
    }
    out
}

/// The first run of group `i` (in the study's order) that `has` accepts.
fn first_run_with<'a>(
    study: &Study,
    runs: &[&'a LoadedRun],
    i: usize,
    has: impl Fn(&RunData) -> bool,
) -> Option<(&'a LoadedRun, RunData)> {
    study.groups[i].runs.iter().find_map(|id| {
        let r = runs.iter().find(|r| r.summary.id == *id)?;
        let d = RunData::of(r);
        has(&d).then_some((*r, d))
    })
}

/// The sweep, loaded-latency and scaling curves of every group overlaid,
/// one colour per group (the group's index, so a group has the same colour
/// in every chart): each group's curve is that of its first run holding
/// it. A chart only where two or more groups have the curve.
pub fn curves(study: &Study, runs: &[&LoadedRun]) -> Vec<Chart> {
    use results::lat::Mode as LatMode;
    let n = study.groups.len();
    let name = |i: usize| group_name(study, i);
    let series_of = |i: usize, pts: Vec<(f64, f64)>| {
        let mut s = Series::line(name(i), pts);
        s.color = Some(i);
        s
    };
    let mut out = Vec::new();

    // Latency against the working set: the first (CPU, memory node) swept.
    let mut sweep = Vec::new();
    for i in 0..n {
        let Some((_, d)) =
            first_run_with(study, runs, i, |d| d.chase_mode(LatMode::Sweep).next().is_some())
        else {
            continue;
        };
        let first = d.chase_mode(LatMode::Sweep).map(|p| (p.cpu, p.mem_node)).min();
        let mut pts: Vec<(f64, f64)> = d
            .chase_mode(LatMode::Sweep)
            .filter(|p| Some((p.cpu, p.mem_node)) == first)
            .filter(|p| p.size_bytes > 0 && p.median_ns.is_finite() && p.median_ns > 0.0)
            .map(|p| (p.size_bytes as f64, p.median_ns))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !pts.is_empty() {
            sweep.push(series_of(i, pts));
        }
    }
    if sweep.len() >= 2 {
        let ys = sweep.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect::<Vec<_>>();
        out.push(Chart::Xy(XyChart {
            title: "Latency against the working set, every group (median ns of each size)".into(),
            x: Axis::log2_bytes("working set"),
            y: crate::chart::Axis::linear_or_log("latency (ns)", ys, 1.0),
            series: sweep,
            ..XyChart::default()
        }));
    }

    // Loaded latency against the load's bandwidth: one traffic mix, read
    // when every group measured it.
    let mix_of = |d: &RunData| {
        let mixes: Vec<String> = d.loaded.iter().map(|p| p.load_kind.name().to_string()).collect();
        if mixes.iter().any(|m| m == "read") {
            Some("read".to_string())
        } else {
            mixes.into_iter().min()
        }
    };
    let mut loaded = Vec::new();
    let mut mixes = std::collections::BTreeSet::new();
    for i in 0..n {
        let Some((_, d)) = first_run_with(study, runs, i, |d| !d.loaded.is_empty()) else {
            continue;
        };
        let Some(mix) = mix_of(&d) else { continue };
        // One chase: the first (CPU, memory node), in the order measured.
        let first = d
            .loaded
            .iter()
            .filter(|p| p.load_kind.name() == mix)
            .map(|p| (p.cpu, p.mem_node))
            .min();
        let pts: Vec<(f64, f64)> = d
            .loaded
            .iter()
            .filter(|p| p.load_kind.name() == mix && Some((p.cpu, p.mem_node)) == first)
            .filter_map(|p| Some((results::stats::measured(p.load_gbs)?, p.latency()?)))
            .collect();
        if !pts.is_empty() {
            mixes.insert(mix);
            loaded.push(series_of(i, pts));
        }
    }
    if loaded.len() >= 2 {
        let mixes: Vec<String> = mixes.into_iter().collect();
        out.push(Chart::Xy(XyChart {
            title: format!(
                "Loaded latency against bandwidth, every group ({} traffic, the first CPU on its memory)",
                mixes.join("/")
            ),
            x: Axis::linear("bandwidth of the load (GB/s)"),
            y: Axis { from_zero: false, ..Axis::linear("latency (ns)") },
            series: loaded,
            ..XyChart::default()
        }));
    }

    // Bandwidth against threads: the headline kernel on the first node.
    let mut scaling = Vec::new();
    let mut kernels = std::collections::BTreeSet::new();
    for i in 0..n {
        let has = |d: &RunData| d.bw_mode(results::bw::Mode::Scaling).next().is_some();
        let Some((_, d)) = first_run_with(study, runs, i, has) else { continue };
        let pts: Vec<&results::bw::BwResult> =
            d.bw_mode(results::bw::Mode::Scaling).filter(|p| p.best_gbs.is_finite()).collect();
        let Some(k) = analysis::data::pick_kernel(pts.iter().copied()) else { continue };
        // The first CPU node on its first memory node (a CXL node swept
        // too is another curve).
        let first = pts.iter().filter(|p| p.kernel == k).map(|p| (p.cpu_node, p.mem_node)).min();
        let mut xy: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.kernel == k && Some((p.cpu_node, p.mem_node)) == first)
            .map(|p| (p.threads as f64, p.best_gbs))
            .collect();
        xy.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !xy.is_empty() {
            kernels.insert(k.name());
            scaling.push(series_of(i, xy));
        }
    }
    if scaling.len() >= 2 {
        let kernels: Vec<&str> = kernels.into_iter().collect();
        out.push(Chart::Xy(XyChart {
            title: format!(
                "Bandwidth against threads, every group ({}, best GB/s of the first node on its memory)",
                kernels.join("/")
            ),
            x: Axis::integer("threads"),
            y: Axis::linear("bandwidth (GB/s)"),
            series: scaling,
            ..XyChart::default()
        }));
    }
    out
}

fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

/// A metric's name in a chart: a derived row keeps the word "derived",
/// not its whole derivation (the table beside it and the notes say how),
/// so that a title fits its chart and a forest label its row.
fn chart_name(m: &StudyMetric) -> String {
    match &m.derived {
        Some(_) => format!("{} (derived)", m.name),
        None => m.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One precision per row: the coarsest the groups' noise gives (136
    /// beside 133.6 becomes 136 beside 134), one more decimal where the
    /// written figures would not show the change beside them (9.6 and
    /// 9.19 at 12% noise are `10` and `9`, a -10% step beside -4.3%).
    #[test]
    fn a_row_has_one_precision_that_shows_its_change() {
        assert_eq!(
            row_digits(&[Some(136.2), Some(133.6)], &[Some(2.0), Some(0.3)], "ns", 0),
            ["136", "134"]
        );
        assert_eq!(
            row_digits(&[Some(9.6), Some(9.19)], &[Some(12.0), Some(12.0)], "ns", 0),
            ["9.6", "9.2"]
        );
        // a change within rounding (0.02%) needs no more digits than the unit's
        assert_eq!(
            row_digits(&[Some(100.71), Some(100.69)], &[Some(3.0), Some(3.0)], "GB/s", 0),
            ["100.7", "100.7"]
        );
        assert_eq!(row_digits(&[None, Some(5.0)], &[None, None], "GB/s", 0), ["-", "5.0"]);
    }

    /// The kernel command line in the "same in every group" line is cut to
    /// its memory options; other long values after a whole word.
    #[test]
    fn a_long_shared_setting_is_shortened() {
        let cmdline = format!(
            "BOOT_IMAGE=/vmlinuz root=UUID=1234 {} transparent_hugepage=madvise quiet",
            "rd.lvm.lv=rhel/root ".repeat(10)
        );
        let t = same_setting_text("cmdline", &cmdline);
        assert_eq!(t, "cmdline=transparent_hugepage=madvise (+13 other words)");
        assert_eq!(same_setting_text("thp_enabled", "madvise"), "thp_enabled=madvise");
        let long = "two proximity domains ".repeat(5);
        let t = same_setting_text("acpi_srat", &long);
        assert!(t.starts_with("acpi_srat=two") && t.ends_with(" …") && t.len() < 80, "{t}");
    }
}
