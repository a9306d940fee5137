//! `report --brief`: a Markdown page of at most [`MAX_LINES`] lines for
//! tickets and chat: machine and settings, the headline figures with their
//! noise, the worst findings, and for a comparison the settings that differ
//! and the verdicts. Figures are rounded to what their noise supports.

use std::collections::BTreeMap;
use std::fmt::Write;

use results::audit::Severity;
use store::LoadedRun;

use crate::fmt::num;
use crate::glance::glance;
use crate::render::md_table;
use analysis::data::RunData;
use analysis::metrics::MetricKey;
use analysis::study::Study;

/// The longest brief, in lines.
pub const MAX_LINES: usize = 60;

/// Findings listed (the others are counted).
const MAX_FINDINGS: usize = 5;

/// Settings rows of a comparison (the others are counted).
const MAX_SETTINGS: usize = 10;

/// Recommendations of a comparison (the study's first ones).
const MAX_RECOMMENDATIONS: usize = 4;

/// Settings worth a line in a brief, in this order, when the run recorded
/// them.
const KEY_SETTINGS: [&str; 10] = [
    "thp_enabled",
    "thp",
    "numa_balancing",
    "governor",
    "boost",
    "smt",
    "zone_reclaim_mode",
    "epp",
    "iommu",
    "kernel",
];

/// `a.b = v` pairs of a settings document's scalar leaves (fingerprint
/// left out).
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The brief of `run`, compared with `compare` when not empty (`run` is the
/// baseline), as Markdown.
pub fn brief(run: &LoadedRun, compare: &[LoadedRun]) -> String {
    brief_with(run, compare, None)
}

/// The brief of `run` with a settings study of groups of runs (`others`:
/// the other runs of the study); without `study`, each compared run is its
/// own group.
pub fn brief_with(run: &LoadedRun, compare: &[LoadedRun], study: Option<&Study>) -> String {
    let d = RunData::of(run);
    let s = &run.summary;
    let mut out = String::new();
    let _ = writeln!(out, "### numaprobe brief: {}", md(&run.display_name()));
    let _ = writeln!(
        out,
        "\nRun {} ({}), {}, started {}; numaprobe {}: `{}`\n",
        s.id,
        &s.uuid[..s.uuid.len().min(8)],
        s.status,
        s.started.get(..16).unwrap_or(&s.started).replace('T', " "),
        s.tool_version,
        s.command_line.replace('`', "'")
    );

    let g = glance(run, &d);
    for (k, v) in &g.rows {
        if k == "Latency" || k == "Bandwidth" {
            continue; // in the figures table below
        }
        let _ = writeln!(out, "- **{k}:** {}", md(v));
    }
    let settings: BTreeMap<String, String> =
        crate::environment::settings_found(&run.config).into_iter().collect();
    let picked: Vec<String> =
        KEY_SETTINGS.iter().filter_map(|k| settings.get(*k).map(|v| format!("{k}={v}"))).collect();
    if !picked.is_empty() {
        let _ = writeln!(out, "- **Settings:** {}", md(&picked.join(", ")));
    }

    // Headline figures as the report's tables write them.
    let m = crate::figures::headlines(&d);
    if !m.is_empty() {
        out.push_str(
            "\n| Figure | Value | Spread of its repetitions | From |\n|---|---:|---:|---|\n",
        );
        for k in MetricKey::ALL {
            let Some(x) = m.get(&k) else { continue };
            let value = match x.flags.first() {
                Some((_, f)) => format!("{} {} ({})", x.value_text(), k.unit(), f.word()),
                None => format!("{} {}", x.value_text(), k.unit()),
            };
            let spread = x
                .spread_pct
                .map(|s| format!("{}{}%", if x.results > 1 { "up to " } else { "" }, num(s, "%")))
                .unwrap_or_else(|| "-".into());
            let mut from = match &x.detail {
                Some(det) => format!("{} result(s), {det}", x.results),
                None => format!("{} result(s)", x.results),
            };
            if let Some(t) = &x.taken {
                from.push_str(&format!(", {}", t.short()));
            }
            let _ = writeln!(out, "| {} | {value} | {spread} | {} |", k.name(), md(&from));
        }
        if let Some(r) = crate::glance::remote_ratio(run, &m) {
            let _ = writeln!(out, "\n{}: {} ({}).", r.name, r.value, md(&r.note));
        }
        let taken = crate::figures::taken_lines(&m);
        if !taken.is_empty() {
            let _ = writeln!(
                out,
                "\nFigures taken from another measurement; {}:\n",
                crate::figures::TAKEN_RULE
            );
            for t in taken {
                let _ = writeln!(out, "- {}", md(&t));
            }
        }
        let flags = crate::summary::flag_notes(&d);
        if !flags.is_empty() {
            let _ = writeln!(out, "\nMarked figures (measure again on a quiet machine):\n");
            for f in flags.iter().take(3) {
                let _ = writeln!(out, "- {}", md(f));
            }
            if flags.len() > 3 {
                let _ = writeln!(out, "- and {} more", flags.len() - 3);
            }
        }
    } else {
        out.push_str("\nNo bandwidth or latency figures in this run.\n");
    }

    // Findings
    let bad: Vec<_> = d.findings.iter().filter(|f| f.severity != Severity::Ok).collect();
    if !d.findings.is_empty() {
        let mut counts: BTreeMap<u8, (&str, usize)> = BTreeMap::new();
        for f in &bad {
            counts.entry(f.severity.rank()).or_insert((f.severity.label(), 0)).1 += 1;
        }
        let summary: Vec<String> = counts.values().map(|(s, n)| format!("{n} {s}")).collect();
        if bad.is_empty() {
            let _ = writeln!(out, "\n**Audit:** all {} settings as recommended.", d.findings.len());
        } else {
            let _ = writeln!(out, "\n**Audit findings** ({}):\n", summary.join(", "));
            for f in bad.iter().take(MAX_FINDINGS) {
                let fix = Some(f.fix.as_str()).filter(|x| !x.is_empty() && *x != "-");
                let _ = writeln!(
                    out,
                    "- **{}** {}: {}{}",
                    f.severity.label().to_uppercase(),
                    f.id,
                    md(&crate::recommendations::found_text(f, &d)),
                    fix.map(|x| format!(" (fix: `{}`)", x.replace('`', "'"))).unwrap_or_default()
                );
            }
            if bad.len() > MAX_FINDINGS {
                let _ = writeln!(out, "- and {} more", bad.len() - MAX_FINDINGS);
            }
        }
    }

    if !compare.is_empty() {
        comparison(&mut out, run, compare, study);
    }
    // No raw HTML, links or control characters from labels and hostnames.
    crate::safe::markdown(&cap(out))
}

/// The settings that differ between the groups and the metric verdicts
/// (the settings study, `analysis::study`).
fn comparison(out: &mut String, run: &LoadedRun, compare: &[LoadedRun], study: Option<&Study>) {
    let owned;
    let s = match study {
        Some(s) => s,
        None => {
            let mut all = vec![run.clone()];
            all.extend(compare.iter().cloned());
            owned = Study::of_runs(&all);
            &owned
        }
    };
    let _ =
        writeln!(out, "\n**Comparison** against {}:", md(&crate::study::group_name(s, s.baseline)));
    // said first: the 60 lines may end before the table's notes
    if let Some(line) = crate::study::marked_inputs_line(s) {
        let _ = writeln!(out, "\n{}", md(&line));
    }
    if s.across_machines {
        out.push_str(
            "\nThese runs come from different machines: differences include the hardware.\n",
        );
    }
    if s.settings_diff.is_empty() {
        out.push_str("\nSettings: the same in every group.\n");
    } else {
        let mut t = crate::study::settings_table(s);
        t.rows.truncate(MAX_SETTINGS);
        t.align = vec![crate::doc::Align::Left; t.header.len()];
        out.push('\n');
        out.push_str(&md_table(&t));
        if s.settings_diff.len() > MAX_SETTINGS {
            let _ = writeln!(
                out,
                "\nand {} more settings differ.",
                s.settings_diff.len() - MAX_SETTINGS
            );
        }
    }
    out.push('\n');
    let runs: Vec<&LoadedRun> = std::iter::once(run).chain(compare).collect();
    let noise = crate::study::group_noise(s, &runs);
    // The rows `compare` shows: not the per-CPU rows that cannot differ,
    // a figure measured in one group only, or one statistic twice.
    let skipped = crate::study::sentences::left_out(s);
    out.push_str(&md_table(&crate::study::metrics_table_without(s, &noise, &skipped)));
    if let Some(line) = crate::study::sentences::same_as_line(s, &skipped) {
        let _ = writeln!(out, "\n{}", md(&line));
    }
    let left = skipped
        .iter()
        .filter(|(_, r)| !matches!(r, crate::study::sentences::LeftOut::SameAs(_)))
        .count();
    if left > 0 {
        let _ = writeln!(
            out,
            "\n{left} metric(s) left out as `compare` leaves them out: per-CPU rows that cannot differ, or measured in one group only."
        );
    }

    let _ = writeln!(
        out,
        "\nVerdicts from the spread between runs: better/worse only when the {}% interval excludes no change, the change exceeds ±{}% and this machine's noise floor; one run per side is undecided unless {} runs of identical settings give a floor (docs/store.md).",
        (s.confidence * 100.0).round(),
        s.margin_pct,
        s.runs_for_one_run_floor()
    );
    for w in crate::study::words::warnings(s).iter().take(2) {
        let _ = writeln!(out, "\nWarning: {}.", md(w));
    }
    if !s.recommendations.is_empty() {
        out.push('\n');
        for r in s.recommendations.iter().take(MAX_RECOMMENDATIONS) {
            let _ = writeln!(
                out,
                "- {}: {}",
                md(&r.profile.to_string()),
                md(&crate::study::recommend::recommendation_text(s, r))
            );
        }
    }
}

/// At most [`MAX_LINES`] lines: a longer brief is cut, and says so.
fn cap(out: String) -> String {
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() <= MAX_LINES {
        return out;
    }
    let mut s = lines[..MAX_LINES - 2].join("\n");
    let _ = write!(
        s,
        "\n\n_{} more lines cut: `numaprobe report` has everything._\n",
        lines.len() - (MAX_LINES - 2)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_brief_is_cut_to_the_limit() {
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let c = cap(long);
        assert_eq!(c.lines().count(), MAX_LINES);
        assert!(c.ends_with("`numaprobe report` has everything._\n"));
        let short = "a\nb\n".to_string();
        assert_eq!(cap(short.clone()), short);
    }
}
