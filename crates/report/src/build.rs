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
use crate::placements::ExecView;
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
/// empty, each run as its own group with `run` as the baseline.
pub fn build_report_with(
    run: &LoadedRun,
    compare: &[LoadedRun],
    study: Option<&Study>,
) -> Document {
    let d = RunData::of(run);
    let mut doc = Document::new(format!("numaprobe report: {}", run.display_name()));
    let s = &run.summary;
    let status = match (&s.status, &s.message) {
        (st, Some(m)) if *st != RunStatus::Complete => format!("{st}: {m}"),
        (st, _) => st.to_string(),
    };
    doc.p(format!(
        "Run {} ({}), {status}. Started {}, finished {}. Measured with numaprobe {} on {}.",
        s.id,
        s.uuid,
        s.started,
        s.finished.as_deref().unwrap_or("-"),
        s.tool_version,
        s.machine
    ));

    doc.glance(crate::glance::glance(run, &d));
    crate::environment::section(&mut doc, run);

    doc.h(2, "Commands");
    let mut cmds = String::new();
    for r in std::iter::once(run).chain(compare) {
        // One line each: a line break in an imported label or command
        // line would show a command that never ran.
        if !compare.is_empty() {
            let name = r.display_name();
            cmds.push_str(&format!("# run {} ({})\n", r.summary.id, crate::safe::one_line(&name)));
        }
        cmds.push_str(&crate::safe::one_line(&r.summary.command_line));
        cmds.push('\n');
    }
    doc.code(cmds);

    let tables = tables_of(&d);
    let exec = ExecView::of(run, &d.exec);
    let hidden: Vec<String> = d
        .per_cpu_summaries
        .iter()
        .filter(|s| s.hidden_numa && !s.groups.is_empty())
        .map(crate::per_cpu::hidden_numa_text)
        .collect();
    // A run of `numaprobe exec` holds only exec results: no empty summary.
    if !(tables.is_empty() && hidden.is_empty() && exec.is_some()) {
        doc.h(2, "Summary");
        for h in &hidden {
            doc.callout(h.clone());
        }
        if tables.is_empty() {
            doc.p("This run holds no bandwidth or latency results.");
        }
        for t in tables {
            doc.table(t);
        }
    }

    crate::bandwidth::section(&mut doc, &d, run);
    crate::latency::section(&mut doc, &d, run);
    crate::hmat::section(&mut doc, run);
    if let Some(e) = &exec {
        e.render(&mut doc);
    }

    match study {
        Some(s) => crate::study::section(s, &mut doc),
        None if !compare.is_empty() => {
            let mut all = vec![run.clone()];
            all.extend(compare.iter().cloned());
            crate::study::section(&Study::of_runs(&all), &mut doc);
        }
        None => {}
    }

    crate::recommendations::section(&mut doc, run, &d, exec.as_ref());
    crate::appendix::section(&mut doc, run);
    doc
}
