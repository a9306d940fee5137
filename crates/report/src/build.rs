//! Builds the report of a run (optionally compared with others) as a
//! [`Document`], section by section: the at-a-glance box
//! ([`crate::glance`]), environment ([`crate::environment`]), commands,
//! summary tables ([`crate::summary`]), bandwidth ([`crate::bandwidth`]),
//! latency ([`crate::latency`]), memory tiers ([`crate::hmat`]), program
//! placements ([`crate::placements`]), the comparison ([`crate::study`]),
//! analysis and recommendations ([`crate::recommendations`]) and the raw
//! figures ([`crate::appendix`]).

use store::{LoadedRun, RunStatus};

use crate::doc::Document;
use crate::placements::{ExecText, ExecView};
use crate::summary::tables_of;
use analysis::data::RunData;
use analysis::study::Study;

/// The report of `run`, compared with `compare` when not empty (`run` is
/// the baseline).
pub fn build_report(run: &LoadedRun, compare: &[LoadedRun]) -> Document {
    build_report_with(run, compare, None)
}

/// The report of `run` with a settings study: `study` when given (groups
/// of runs, `report label:A --compare label:B`), else, when `compare` is not
/// empty, each run as its own group with `run` as the baseline. A study's
/// report opens with the study ([`comparison_report`]).
pub fn build_report_with(
    run: &LoadedRun,
    compare: &[LoadedRun],
    study: Option<&Study>,
) -> Document {
    match study {
        Some(s) => comparison_report(run, compare, s),
        None if !compare.is_empty() => {
            let mut all = vec![run.clone()];
            all.extend(compare.iter().cloned());
            comparison_report(run, compare, &Study::of_runs(&all))
        }
        None => {
            let d = RunData::of(run);
            let mut doc = Document::new(format!("numaprobe report: {}", run.display_name()));
            doc.tiles(crate::glance::tiles(run, &d));
            doc.p(run_line(run));
            doc.glance(crate::glance::glance(run, &d));
            run_sections(&mut doc, run, &d, &[], true);
            doc
        }
    }
}

/// `Run 3 (uuid), complete. Started ..., finished .... Measured with ...`.
fn run_line(run: &LoadedRun) -> String {
    let s = &run.summary;
    let status = match (&s.status, &s.message) {
        (st, Some(m)) if *st != RunStatus::Complete => format!("{st}: {m}"),
        (st, _) => st.to_string(),
    };
    format!(
        "Run {} ({}), {status}. Started {}, finished {}. Measured with numaprobe {} on {}.",
        s.id,
        s.uuid,
        s.started,
        s.finished.as_deref().unwrap_or("-"),
        s.tool_version,
        s.machine
    )
}

/// A settings study's report: the title names the groups, the study's
/// glance box (groups, settings that differ, each metric per group with its
/// verdict, the first recommendations), the comparison, then each group's
/// detail (its glance box and summary tables, from the group's first run),
/// then the full sections of `run` (the baseline group's first run).
pub fn comparison_report(run: &LoadedRun, compare: &[LoadedRun], study: &Study) -> Document {
    let names: Vec<String> =
        (0..study.groups.len()).map(|i| crate::study::group_name(study, i)).collect();
    let mut doc = Document::new(format!("numaprobe comparison: {}", names.join(" vs ")));
    let all: Vec<&LoadedRun> = std::iter::once(run).chain(compare).collect();
    let runs: usize = study.groups.iter().map(|g| g.runs.len()).sum();
    doc.p(format!(
        "A settings study of {} groups ({runs} run{}) against {}: the answer first, then the comparison, each group's figures and the detail of run {} of the baseline group (folded).",
        study.groups.len(),
        if runs == 1 { "" } else { "s" },
        names[study.baseline],
        run.summary.id
    ));
    let noise = crate::study::group_noise(study, &all);
    crate::study::answer(study, &mut doc, &noise);
    crate::study::section_with(study, &mut doc, &noise, &all);

    for (i, g) in study.groups.iter().enumerate() {
        doc.fold(format!("Group {}: {}, its glance box and summary tables", i + 1, names[i]), |doc| {
            doc.h(2, format!("Group {}: {}", i + 1, names[i]));
            let Some(r) = g.runs.first().and_then(|id| all.iter().find(|r| r.summary.id == *id))
            else {
                doc.p("None of this group's runs could be loaded.");
                return;
            };
            let d = RunData::of(r);
            doc.p(format!(
                "Selected by {}; run{} {}. The figures below are those of run {}; the study above uses the median of the group's runs.",
                g.reference,
                if g.runs.len() == 1 { "" } else { "s" },
                g.runs.iter().map(|r| r.to_string()).collect::<Vec<_>>().join(", "),
                r.summary.id
            ));
            doc.p(run_line(r));
            let mut gl = crate::glance::glance(r, &d);
            gl.title = format!("{} at a glance", names[i]);
            doc.glance(gl);
            summary(doc, r, &d, None, 3);
        });
    }

    doc.fold(
        format!("Details of run {} ({}): every measurement", run.summary.id, names[study.baseline]),
        |doc| {
            doc.h(2, format!("Details of run {} ({})", run.summary.id, names[study.baseline]));
            doc.p("Every measurement of the baseline group's first run; the other runs' are in their own reports (numaprobe report RUN).");
            let d = RunData::of(run);
            run_sections(doc, run, &d, compare, false);
        },
    );
    doc
}

/// The summary tables, the hidden-NUMA notes and the marked figures
/// under a heading of `level`.
fn summary(doc: &mut Document, run: &LoadedRun, d: &RunData, exec: Option<&ExecView>, level: u8) {
    let tables = tables_of(run, d);
    let hidden: Vec<String> = d
        .per_cpu_summaries
        .iter()
        .filter(|s| s.hidden_numa && !s.groups.is_empty())
        .map(crate::per_cpu::hidden_numa_text)
        .collect();
    // A run of `numaprobe exec` holds only exec results: no empty summary.
    if tables.is_empty() && hidden.is_empty() && exec.is_some() {
        return;
    }
    doc.h(level, "Summary");
    for h in &hidden {
        doc.callout(h.clone());
    }
    if tables.is_empty() {
        doc.p("This run holds no bandwidth or latency results.");
    }
    for t in tables {
        doc.table(t);
    }
    let taken = crate::figures::taken_lines(&crate::figures::headlines(d));
    if !taken.is_empty() {
        doc.p(format!(
            "Figures taken from another measurement of the same quantity: {}.",
            crate::figures::TAKEN_RULE
        ));
        doc.list(taken);
    }
    let flags = crate::summary::flag_notes(d);
    if !flags.is_empty() {
        doc.p("Marked figures: (disturbed) when samples were discarded because other work kept the measuring thread from its CPU, (noisy) when the repetitions never settled; such a figure can be off by more than its spread; contradicts when two figures of the run cannot both be right. Measure again on a quiet machine before relying on it.");
        doc.list(flags);
    }
}

/// The sections of one run after its glance box: environment, commands
/// (of `run` and `others`), summary (when `with_summary`), bandwidth,
/// latency, tiers, placements, analysis and the raw figures.
fn run_sections(
    doc: &mut Document,
    run: &LoadedRun,
    d: &RunData,
    others: &[LoadedRun],
    with_summary: bool,
) {
    crate::environment::section(doc, run);

    doc.h(2, "Commands");
    let mut cmds = String::new();
    for r in std::iter::once(run).chain(others) {
        // One line each: a line break in an imported label or command
        // line would show a command that never ran.
        if !others.is_empty() {
            let name = r.display_name();
            cmds.push_str(&format!("# run {} ({})\n", r.summary.id, crate::safe::one_line(&name)));
        }
        cmds.push_str(&crate::safe::one_line(&r.summary.command_line));
        cmds.push('\n');
    }
    doc.code(cmds);

    let exec = ExecView::of(run, &d.exec);
    if with_summary {
        summary(doc, run, d, exec.as_ref(), 2);
    }
    crate::bandwidth::section(doc, d, run);
    crate::power::section(doc, d);
    crate::latency::section(doc, d, run);
    crate::hmat::section(doc, run);
    crate::gpu::section(doc, d, run);
    if let Some(e) = &exec {
        e.render(doc);
    }
    crate::validation::section(doc, d, &run.summary.command_line);
    crate::validation::placement_table(doc, d, run.topology.get());
    crate::recommendations::section(doc, run, d, exec.as_ref());
    crate::appendix::section(doc, run);
}
