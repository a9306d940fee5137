//! What `compare` prints: the study ([`analysis::study::Study`]) as one
//! table (a column per group, the change with its interval, the noise
//! floor and the verdict), each explanation once as a numbered note under
//! it, one recommendation line per profile (profiles that say the same
//! thing merged), the shared settings counted, and every line within the
//! width it is given. The metrics that cannot differ here are left out and
//! counted ([`report::study::sentences::left_out`]).

use std::collections::BTreeSet;

use analysis::study::{GroupMetric, Study, StudyMetric};
use comfy_table::ContentArrangement;
use report::study::sentences::{
    bracketed_text, left_out, merged_recommendations, same_as_line, LeftOut,
};
use report::study::words::{not_applicable, row_name, setting_value};
use report::study::{group_name, GroupNoise};
use report::text::{clip, clip_words, signed_pct, wrap};
use results::runstats::{Basis, GroupVerdict, MAX_RUNS_SUGGESTED};

use crate::{Table, TableStyle};

/// How `compare` lays its text out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Columns every line fits in (the terminal's, else 100).
    pub width: usize,
    /// List the settings every group shares and each profile's reasoning.
    pub verbose: bool,
    pub style: TableStyle,
}

/// Numbered notes, each text once.
#[derive(Default)]
struct Notes(Vec<String>);

impl Notes {
    /// The number of `text`, added when new.
    fn add(&mut self, text: String) -> usize {
        match self.0.iter().position(|t| *t == text) {
            Some(i) => i + 1,
            None => {
                self.0.push(text);
                self.0.len()
            }
        }
    }
}

/// `[1,3]` for notes 1 and 3; empty for none.
fn marks(ns: &BTreeSet<usize>) -> String {
    if ns.is_empty() {
        return String::new();
    }
    format!("[{}]", ns.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(","))
}

/// What explains group `i`'s verdict on `m`, beyond the figures the table
/// shows (change, interval, floor, verdict): each piece a note.
fn explanations(study: &Study, m: &StudyMetric, i: usize) -> Vec<String> {
    let c = &m.groups[i];
    let conf = (study.confidence * 100.0).round();
    let mut out = Vec::new();
    let Some(v) = c.verdict else {
        let base = &study.groups[study.baseline].label;
        let na = match (c.not_applicable, m.groups[study.baseline].not_applicable) {
            (Some(w), _) => Some(format!("not comparable: {}", not_applicable(w))),
            (None, Some(w)) => Some(format!(
                "not comparable: the baseline {base} cannot have it: {}",
                not_applicable(w)
            )),
            _ => None,
        };
        let layouts = (study.layouts.get(i), study.layouts.get(study.baseline));
        let sized = analysis::catalogue::def_of_id(&m.metric).sized_by_node();
        out.push(match (na, layouts) {
            (Some(w), _) => w,
            (None, (Some(a), Some(b))) if sized && c.n > 0 && a.structure() != b.structure() => {
                format!(
                    "not judged: the nodes of {} ({}) are not the baseline's ({}), and a per-node figure follows the node's size (see the per-package figures)",
                    study.groups[i].label,
                    a.structure().text(),
                    b.structure().text()
                )
            }
            (None, _) => "not measured in both groups".to_string(),
        });
        return out;
    };
    match (c.ci_low_pct, c.ci_high_pct, c.basis) {
        (Some(_), Some(_), Some(Basis::NoiseFloor)) => out.push(format!(
            "within the noise floor: groups of identical settings differ by that much on this machine ({conf}% prediction bound)"
        )),
        (Some(_), Some(_), Some(Basis::Bracketed)) => {
            if let Some(n) = c.brackets {
                out.push(bracketed_text(n, c.pooled_groups));
            }
        }
        (Some(_), Some(_), _) => {}
        (_, _, Some(Basis::NoiseFloor)) => out.push(
            "too few runs for an interval: judged against a distribution-free noise floor".into(),
        ),
        _ => out.push(match c.floor_runs_needed {
            Some(more) if more > 0 => format!(
                "too few runs for an interval, and a noise floor needs {more} more run{} of identical settings",
                if more == 1 { "" } else { "s" }
            ),
            _ => "too few runs for an interval and no noise floor measured on this machine".into(),
        }),
    }
    if let Some(why) = c.undecided_because {
        out.push(why.text());
    }
    if c.noise_floor_pct.is_none() && c.basis == Some(Basis::Interval) {
        out.push("no noise floor: no configuration of this machine has two blocks of repeated runs of identical settings".into());
    }
    if let Some(f) = c.more_runs_held_by_floor_pct {
        out.push(format!(
            "more runs per group would not decide: the {f:.1}% noise floor for groups that size is larger than the change, so alternate the settings' runs over time (A, B, A, B)"
        ));
    } else if let Some(n) = c.runs_needed {
        out.push(format!("about {n} runs per group would decide"));
    } else if v == GroupVerdict::Undecided && c.basis == Some(Basis::NoiseFloor) {
        out.push("alternate the settings' runs over time (A, B, A, B) so that the machine's drift falls on both".into());
    } else if v == GroupVerdict::Undecided {
        out.push(format!(
            "more than {MAX_RUNS_SUGGESTED} runs per group would be needed: this machine's run-to-run noise is large for a change this size"
        ));
    }
    if let Some(src) = &c.noise_floor_source {
        let src = report::study::words::floor_source(study.confidence, src);
        out.push(format!("the noise floor is the {src}"));
    }
    if let Some(t) = report::study::verdict_mark_text(study, &m.metric, i) {
        out.push(t);
    }
    out
}

fn table(header: Vec<String>, layout: &Layout) -> Table {
    let mut t = Table::new(header, layout.style);
    if matches!(layout.style, TableStyle::Box | TableStyle::Plain) {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(layout.width.min(u16::MAX as usize) as u16);
    }
    t
}

/// The table's text, its lines cut to the width where the table could not
/// be narrowed enough (a very narrow terminal).
fn fitted(t: &Table, layout: &Layout) -> String {
    let text = t.to_string();
    if !matches!(layout.style, TableStyle::Box | TableStyle::Plain) {
        return text;
    }
    text.lines().map(|l| clip(l, layout.width)).collect::<Vec<_>>().join("\n")
}

/// `compare`'s text (see the module's doc).
pub fn compare_text(study: &Study, noise: &GroupNoise, layout: &Layout) -> String {
    let w = layout.width.max(40);
    let mut out: Vec<String> = Vec::new();
    heading(study, w, &mut out);
    settings_and_notes(study, layout, w, &mut out);
    // The metrics.
    let skipped = left_out(study);
    let rows = metric_rows(study, noise, &skipped);
    metric_tables(study, layout, &rows, &mut out);
    if rows.any_best {
        out.push("* the best group: better than every other group that has the metric.".into());
    }
    left_out_lines(study, &skipped, w, &mut out);
    notes_lines(&rows, w, &mut out);
    recommendation_lines(study, layout, w, &mut out);
    if !study.warnings.is_empty() {
        out.push(String::new());
        out.push("Warnings:".into());
        for x in report::study::words::warnings(study) {
            out.push(wrap(&x, w, "  ", "    "));
        }
    }
    // In Markdown, the lines around the tables are Markdown too: a label's
    // markup and links neutralised as in the tables (which did theirs).
    if matches!(layout.style, TableStyle::Markdown) {
        for part in out.iter_mut().filter(|p| !p.starts_with("| ")) {
            *part = report::safe::markdown(part);
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// What the table shows, then each group: its reference, runs and
/// configurations; then the machines and the marked inputs.
fn heading(study: &Study, w: usize, out: &mut Vec<String>) {
    let conf = (study.confidence * 100.0).round();
    let base = group_name(study, study.baseline);
    out.push(wrap(
        &format!(
            "{} groups against {base}: each group's median of its runs (n runs), the change against the baseline with its {conf}% interval, the noise floor (how far groups of identical settings differ on this machine) and the verdict; margin ±{}%.",
            study.groups.len(),
            study.margin_pct
        ),
        w,
        "",
        "",
    ));
    for (i, g) in study.groups.iter().enumerate() {
        let configs: Vec<String> = g.configs.iter().map(|c| c.chars().take(12).collect()).collect();
        out.push(wrap(
            &format!(
                "{}: {}; run{} {}; config {}",
                group_name(study, i),
                g.reference,
                if g.runs.len() == 1 { "" } else { "s" },
                g.runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", "),
                configs.join(", ")
            ),
            w,
            &format!("  {}. ", i + 1),
            "     ",
        ));
    }
    if study.across_machines {
        out.push(wrap(
            "The groups ran on different machines: the differences include the hardware.",
            w,
            "",
            "",
        ));
    }
    if let Some(line) = report::study::marked_inputs_line(study) {
        out.push(wrap(&line, w, "", "  "));
    }
    out.push(String::new());
}

/// Settings: those that differ as a table, the shared ones counted (listed
/// with --verbose); then the study's notes, impossible figures and hidden
/// NUMA.
fn settings_and_notes(study: &Study, layout: &Layout, w: usize, out: &mut Vec<String>) {
    if study.settings_diff.is_empty() {
        out.push("Settings that differ: none recorded.".into());
    } else {
        out.push("Settings that differ:".into());
        let mut header = vec!["Setting".to_string()];
        header.extend((0..study.groups.len()).map(|i| study.groups[i].label.clone()));
        let mut t = table(header, layout);
        for d in &study.settings_diff {
            let mut row = vec![d.setting.clone()];
            row.extend(d.values.iter().map(|v| clip_words(&setting_value(v), 60)));
            t.add_row(row);
        }
        out.push(fitted(&t, layout));
    }
    let same = study.settings_same.len();
    if same == 0 {
        out.push("No setting is the same in every group.".into());
    } else if layout.verbose {
        out.push(wrap(
            &format!(
                "Same in every group ({same}): {}.",
                study
                    .settings_same
                    .iter()
                    .map(|(k, v)| report::study::same_setting_text(k, &setting_value(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            w,
            "",
            "  ",
        ));
    } else {
        out.push(wrap(
            &format!(
                "{same} setting{} the same in every group (--verbose lists them).",
                if same == 1 { " is" } else { "s are" }
            ),
            w,
            "",
            "",
        ));
    }
    for n in report::study::words::notes(study) {
        out.push(wrap(&format!("Note: {n}."), w, "", "  "));
    }
    for i in &study.impossible {
        out.push(wrap(
            &format!(
                "Impossible in {} (run {}): {}.",
                study.groups[i.group].label,
                i.run,
                report::impossible::text(&i.figure)
            ),
            w,
            "",
            "  ",
        ));
    }
    for g in &study.groups {
        if let Some(h) = &g.hidden_numa {
            let h = report::study::words::hidden_numa(h);
            out.push(wrap(&format!("Hidden NUMA in {}: {h}.", g.label), w, "", "  "));
        }
    }
    out.push(String::new());
}

/// A verdict cell and the numbers of the notes that explain it.
type Verdict = (String, BTreeSet<usize>);

/// The metric rows: every row's cells with its verdict cells in place,
/// and the notes the verdicts refer to.
struct Rows {
    /// The groups judged against the baseline.
    others: Vec<usize>,
    /// One compared group: one table with every column.
    two: bool,
    any_best: bool,
    /// Per row: the metric, each group's figure, then per compared group
    /// its change, floor and verdict.
    full: Vec<Vec<String>>,
    notes: Notes,
    /// The notes every verdict shares (said once, unnumbered).
    common: BTreeSet<usize>,
    /// The other notes, in the order they are numbered.
    numbered: Vec<usize>,
}

/// Rows first, the verdict cells' note numbers kept apart: a note that
/// explains every verdict is said once above the others, unnumbered.
fn metric_rows(study: &Study, noise: &GroupNoise, skipped: &[(usize, LeftOut)]) -> Rows {
    let others: Vec<usize> = (0..study.groups.len()).filter(|&i| i != study.baseline).collect();
    let two = others.len() == 1;
    let mut notes = Notes::default();
    let mut any_best = false;
    // (cells, [(verdict, its notes)] per compared group)
    let mut rows: Vec<(Vec<String>, Vec<Verdict>)> = Vec::new();
    for (k, m) in study.metrics.iter().enumerate() {
        if m.groups.iter().all(|c| c.median.is_none()) || skipped.iter().any(|(s, _)| *s == k) {
            continue;
        }
        let (row, best) = figure_cells(study, m, noise, two);
        any_best |= best;
        let mut row = row;
        let mut verdicts = Vec::new();
        for &i in &others {
            let ns: BTreeSet<usize> =
                explanations(study, m, i).into_iter().map(|e| notes.add(e)).collect();
            verdicts.push(change_cells(&m.groups[i], ns, &mut row));
        }
        rows.push((row, verdicts));
    }
    let common = common_notes(&rows);
    // Notes renumbered: the common ones out, the others in order.
    let numbered: Vec<usize> = (1..=notes.0.len()).filter(|n| !common.contains(n)).collect();
    let renumber = |ns: &BTreeSet<usize>| -> BTreeSet<usize> {
        ns.iter()
            .filter(|n| !common.contains(n))
            .map(|n| numbered.iter().position(|x| x == n).unwrap() + 1)
            .collect()
    };
    let ng = study.groups.len();
    let mut full: Vec<Vec<String>> = Vec::new();
    for (mut row, verdicts) in rows {
        for (j, (v, ns)) in verdicts.iter().enumerate() {
            let cell = format!("{v} {}", marks(&renumber(ns))).trim_end().to_string();
            // after the groups' columns, three per compared group
            row.insert(1 + ng + j * 3 + 2, cell);
        }
        full.push(row);
    }
    Rows { others, two, any_best, full, notes, common, numbered }
}

/// A row's metric cell and each group's figure; true when a best group is
/// starred.
fn figure_cells(
    study: &Study,
    m: &StudyMetric,
    noise: &GroupNoise,
    two: bool,
) -> (Vec<String>, bool) {
    let marked = (0..study.groups.len())
        .any(|i| report::study::marked_runs(study, &m.metric, i).next().is_some());
    let mut row =
        vec![format!("{} ({}){}", row_name(study, m), m.unit, if marked { " !" } else { "" })];
    let mut any_best = false;
    let figs = report::study::row_figs(study, m, noise);
    for (i, c) in m.groups.iter().enumerate() {
        row.push(match c.median {
            None => "-".to_string(),
            Some(_) => {
                let f = figs[i].clone();
                let best = if m.best_group == Some(i) && !two {
                    any_best = true;
                    "*"
                } else {
                    ""
                };
                let flag = if study.impossible_in(i, &m.metric) { " (impossible)" } else { "" };
                format!("{f}{best} (n={}){flag}", c.n)
            }
        });
    }
    (row, any_best)
}

/// A compared group's change and floor cells, pushed to `row`, and its
/// verdict with the notes `ns` that explain it.
fn change_cells(c: &GroupMetric, ns: BTreeSet<usize>, row: &mut Vec<String>) -> Verdict {
    match (c.change_pct, c.verdict) {
        (Some(ch), Some(v)) => {
            let mut s = signed_pct(ch);
            if let (Some(lo), Some(hi)) = (c.ci_low_pct, c.ci_high_pct) {
                s.push_str(&format!(" [{}, {}]", signed_pct(lo), signed_pct(hi)));
            }
            row.push(s);
            row.push(c.noise_floor_pct.map_or("-".into(), |f| format!("{f:.1}%")));
            (v.as_str().to_string(), ns)
        }
        _ => {
            row.push("-".into());
            row.push("-".into());
            ("-".to_string(), ns)
        }
    }
}

/// The notes every verdict cell refers to.
fn common_notes(rows: &[(Vec<String>, Vec<Verdict>)]) -> BTreeSet<usize> {
    rows.iter()
        .flat_map(|(_, v)| v.iter().map(|(_, ns)| ns))
        .fold(None::<BTreeSet<usize>>, |acc, ns| {
            Some(match acc {
                None => ns.clone(),
                Some(a) => a.intersection(ns).copied().collect(),
            })
        })
        .unwrap_or_default()
}

/// The metric table: one with every column for one compared group, else
/// one per compared group (a table with every group's columns does not
/// fit a terminal): the metric, the baseline, the group, then its change,
/// floor and verdict.
fn metric_tables(study: &Study, layout: &Layout, rows: &Rows, out: &mut Vec<String>) {
    let conf = (study.confidence * 100.0).round();
    let ng = study.groups.len();
    if rows.two {
        let mut header = vec!["Metric".to_string()];
        header.extend((0..ng).map(|i| study.groups[i].label.clone()));
        header.push(format!("Change [{conf}% interval]"));
        header.push("Floor".into());
        header.push("Verdict".into());
        let mut t = table(header, layout);
        for row in &rows.full {
            t.add_row(row.clone());
        }
        t.right(&(1..=ng + 2).collect::<Vec<_>>());
        out.push(fitted(&t, layout));
        return;
    }
    for (j, &g) in rows.others.iter().enumerate() {
        out.push(format!(
            "{} against {}:",
            study.groups[g].label, study.groups[study.baseline].label
        ));
        let header = vec![
            "Metric".to_string(),
            study.groups[study.baseline].label.clone(),
            study.groups[g].label.clone(),
            format!("Change [{conf}% interval]"),
            "Floor".into(),
            "Verdict".into(),
        ];
        let mut tj = table(header, layout);
        for row in &rows.full {
            let at = 1 + ng + j * 3;
            tj.add_row(vec![
                row[0].clone(),
                row[1 + study.baseline].clone(),
                row[1 + g].clone(),
                row[at].clone(),
                row[at + 1].clone(),
                row[at + 2].clone(),
            ]);
        }
        tj.right(&[1, 2, 3, 4]);
        out.push(fitted(&tj, layout));
        out.push(String::new());
    }
    out.pop();
}

/// The metrics left out, counted: per-CPU figures of one latency group,
/// one statistic under two names, metrics of one group only.
fn left_out_lines(study: &Study, skipped: &[(usize, LeftOut)], w: usize, out: &mut Vec<String>) {
    let dup = skipped.iter().filter(|(_, r)| *r == LeftOut::OneCpuGroup).count();
    if dup > 0 {
        out.push(wrap(
            &format!(
                "{dup} per-CPU metric{} left out: every group's CPUs form one latency group, so its fastest and slowest groups are its mean and the split is 1.",
                if dup == 1 { "" } else { "s" }
            ),
            w,
            "",
            "  ",
        ));
    }
    if let Some(line) = same_as_line(study, skipped) {
        out.push(wrap(&line, w, "", "  "));
    }
    for g in 0..study.groups.len() {
        let only: Vec<String> = skipped
            .iter()
            .filter(|(_, r)| *r == LeftOut::OneGroupOnly(g))
            .map(|(k, _)| row_name(study, &study.metrics[*k]))
            .collect();
        if !only.is_empty() {
            out.push(wrap(
                &format!(
                    "{} metric{} measured in {} only, so not compared: {}.",
                    only.len(),
                    if only.len() == 1 { "" } else { "s" },
                    study.groups[g].label,
                    only.join("; ")
                ),
                w,
                "",
                "  ",
            ));
        }
    }
}

/// The verdicts' notes: those every verdict shares first, unnumbered,
/// then the numbered ones.
fn notes_lines(rows: &Rows, w: usize, out: &mut Vec<String>) {
    if rows.notes.0.is_empty() {
        return;
    }
    out.push(String::new());
    out.push("Notes:".into());
    for n in &rows.common {
        let text = &rows.notes.0[n - 1];
        out.push(wrap(&format!("Every verdict: {text}."), w, "  ", "    "));
    }
    let width = rows.numbered.len().to_string().len();
    for (k, n) in rows.numbered.iter().enumerate() {
        let mark = format!("[{}]", k + 1);
        let first = format!("  {mark:<w$} ", w = width + 2);
        let rest = " ".repeat(first.chars().count());
        out.push(wrap(&capitalised(&rows.notes.0[n - 1]), w, &first, &rest));
    }
}

/// Recommendations: one line per profile, identical ones merged; each
/// profile's reasoning with --verbose.
fn recommendation_lines(study: &Study, layout: &Layout, w: usize, out: &mut Vec<String>) {
    if study.recommendations.is_empty() {
        return;
    }
    out.push(String::new());
    out.push("Recommendations:".into());
    for (profiles, line, reasons) in merged_recommendations(study) {
        let first = format!("  {}: ", profiles.join(", "));
        out.push(wrap(&line, w, &first, "      "));
        if layout.verbose {
            for t in reasons {
                out.push(wrap(&t, w, "      ", "        "));
            }
        }
    }
    if !layout.verbose {
        out.push(wrap("The reasoning of each profile: --verbose.", w, "", ""));
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => format!("{}{}.", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}
