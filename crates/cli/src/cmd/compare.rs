//! `compare`: groups of saved runs (one group per setting) side by side
//! against a baseline group: the settings that differ, a verdict per metric
//! from the run-to-run spread, and recommendations per workload profile.
//! Documented in docs/store.md; the study itself is `analysis::study::Study`.

use analysis::study::{Study, StudyError};
use results::runstats::Criteria;
use store::{LoadedRun, RunRef, Store};

use super::store::open_existing;
use crate::cli::Global;
use crate::output;
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Groups of runs, 2 to 8: `label:TEXT` (every run with that label),
    /// `config:HASH` (every run of one configuration), or one run (an id,
    /// `latest`, `latest~N`, a UUID or a label naming one run).
    #[arg(required = true, value_name = "GROUP")]
    pub groups: Vec<String>,
    /// The group the others are compared against (default: the first).
    #[arg(long, value_name = "GROUP")]
    pub baseline: Option<String>,
    /// Equivalence margin in percent: smaller changes do not matter.
    #[arg(long, value_name = "PCT", default_value_t = results::runstats::DEFAULT_MARGIN_PCT,
          value_parser = crate::grammar::open_percent)]
    pub margin: f64,
    /// Two-sided confidence of the intervals (0.5 to 0.999).
    #[arg(long, value_name = "P", default_value_t = results::runstats::DEFAULT_CONFIDENCE,
          value_parser = crate::grammar::confidence)]
    pub confidence: f64,
    /// List the settings every group shares and each profile's reasoning
    /// (the text otherwise counts the one and gives the other a line).
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// The report (or `--brief`) for `report RUN --compare ...` when a
/// reference selects a group (`label:`, `config:`); `None` when every
/// reference names one run (the report then compares those runs, each its
/// own group).
pub fn study_report(
    db: &Store,
    run: &str,
    compare: &[String],
    format: report::Format,
    brief: bool,
) -> anyhow::Result<Option<Vec<u8>>> {
    let is_group = |t: &str| t.parse::<RunRef>().is_ok_and(|r| r.is_group());
    if !(is_group(run) || compare.iter().any(|c| is_group(c))) || compare.is_empty() {
        return Ok(None);
    }
    let mut refs = vec![run.to_string()];
    refs.extend(compare.iter().cloned());
    let study = study_of(db, &refs, None, &Criteria::default())?;
    let mut runs = runs_of(db, &study)?;
    let first = runs.remove(0);
    if brief {
        return Ok(Some(report::brief_with(&first, &runs, Some(&study)).into_bytes()));
    }
    Ok(Some(report::render_study_report(format, &first, &runs, &study)))
}

/// Every run of the study's groups, in group order.
fn runs_of(db: &Store, study: &Study) -> anyhow::Result<Vec<LoadedRun>> {
    let mut runs = Vec::new();
    for g in &study.groups {
        for id in &g.runs {
            runs.push(db.load_run(*id)?);
        }
    }
    Ok(runs)
}

pub(crate) fn study_of(
    db: &Store,
    refs: &[String],
    baseline: Option<&str>,
    policy: &Criteria,
) -> anyhow::Result<Study> {
    match Study::from_store(db, refs, baseline, policy) {
        Ok(s) => Ok(s),
        Err(e @ StudyError::GroupCount(_)) => {
            usage!("{e}; compare needs at least two different runs or groups")
        }
        Err(e) if e.is_usage() => usage!("{e}"),
        Err(e) => Err(e.into()),
    }
}

pub fn run(a: CompareArgs, g: &Global) -> anyhow::Result<()> {
    let db = open_existing(g)?;
    let policy = Criteria { confidence: a.confidence, margin_pct: a.margin };
    let study = study_of(&db, &a.groups, a.baseline.as_deref(), &policy)?;
    if !g.quiet {
        for w in &study.warnings {
            eprintln!("numaprobe: warning: {}", report::safe::visible(w));
        }
    }
    if g.json {
        return output::json(&output::Versioned::new(output::schema::COMPARE, &study));
    }
    print_with(&db, &study, a.verbose)
}

/// The study as `compare` prints it without `--json`
/// ([`report::study_text::compare_text`]): each group's median rounded as
/// its runs' tables round the same figure (`--json` keeps the values
/// unrounded), every line within the terminal's width.
pub(crate) fn print(db: &Store, study: &Study) -> anyhow::Result<()> {
    print_with(db, study, false)
}

pub(crate) fn print_with(db: &Store, study: &Study, verbose: bool) -> anyhow::Result<()> {
    let runs = runs_of(db, study)?;
    let noise = report::study::group_noise(study, &runs.iter().collect::<Vec<_>>());
    let layout = report::study_text::Layout {
        width: output::text_width(),
        verbose,
        style: output::table_style(),
    };
    output::emit(&report::study_text::compare_text(study, &noise, &layout))
}
