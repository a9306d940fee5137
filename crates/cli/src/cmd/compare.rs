//! `compare`: groups of saved runs (one group per setting) side by side
//! against a baseline group: the settings that differ, a verdict per metric
//! from the run-to-run spread, and recommendations per workload profile.
//! Documented in docs/store.md; the study itself is `analysis::study::Study`.

use std::collections::BTreeMap;
use std::fmt;

use analysis::study::{check_group_count, GroupInput, Study, StudyError};
use results::runstats::Criteria;
use store::{LoadedRun, RunId, RunRef, RunStatus, Store, StoreError};

use crate::invocation::Invocation;
use crate::output::{self, TableStyle};
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Groups of runs, 2 to 8: `label:TEXT` (every run with that label),
    /// `config:HASH` (every run of one configuration), or one run (an id,
    /// `latest`, `latest~N`, a UUID or a label naming one run).
    #[arg(required = true, value_name = "GROUP", value_parser = GroupRef::parse)]
    pub groups: Vec<GroupRef>,
    /// The group the others are compared against (default: the first).
    #[arg(long, value_name = "GROUP", value_parser = GroupRef::parse)]
    pub baseline: Option<GroupRef>,
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

/// A group of a study as the user wrote it (the text the study shows)
/// and what it selects, parsed once, when the arguments are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRef {
    text: String,
    run_ref: RunRef,
}

impl GroupRef {
    /// Reads `label:TEXT`, `config:HASH` or one run's reference; a form
    /// that cannot be one says which forms are.
    pub fn parse(text: &str) -> Result<GroupRef, String> {
        match text.parse::<RunRef>() {
            Ok(run_ref) => Ok(GroupRef { text: text.to_string(), run_ref }),
            Err(_) => Err(format!(
                "not a group: expected `label:TEXT`, `config:HASH` (4 or more letters and \
                 digits), a run id, `latest`, `latest~N`, a run UUID or a label, got {text:?}"
            )),
        }
    }

    /// Every run with label `label`.
    pub fn label(label: &str) -> GroupRef {
        GroupRef { text: format!("label:{label}"), run_ref: RunRef::LabelGroup(label.to_string()) }
    }

    /// True for the forms that select several runs (`label:`, `config:`).
    pub fn is_group(&self) -> bool {
        self.run_ref.is_group()
    }
}

impl fmt::Display for GroupRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
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
    let refs: Vec<Result<GroupRef, String>> = std::iter::once(run)
        .chain(compare.iter().map(String::as_str))
        .map(GroupRef::parse)
        .collect();
    if !refs.iter().flatten().any(GroupRef::is_group) || compare.is_empty() {
        return Ok(None);
    }
    let refs = match refs.into_iter().collect::<Result<Vec<_>, _>>() {
        Ok(refs) => refs,
        Err(e) => usage!("{e}"),
    };
    let (study, mut runs) = load_study(db, &refs, None, &Criteria::default())?;
    let first = runs.remove(0);
    if brief {
        return Ok(Some(report::brief_with(&first, &runs, Some(&study)).into_bytes()));
    }
    Ok(Some(report::render_study_report(format, &first, &runs, &study)))
}

/// The study of the groups `refs` select, with every run of its groups in
/// group order (`baseline`: one of `refs`, or another reference, which
/// then becomes the first group; default the first). Each run is read
/// from the store once; the noise floors' pool (every complete run of the
/// machines involved) reuses the groups' runs. The study itself is
/// analysis': it never reads the store.
pub(crate) fn load_study(
    db: &Store,
    refs: &[GroupRef],
    baseline: Option<&GroupRef>,
    policy: &Criteria,
) -> anyhow::Result<(Study, Vec<LoadedRun>)> {
    let mut refs: Vec<GroupRef> = refs.to_vec();
    let mut base = 0;
    if let Some(b) = baseline {
        match refs.iter().position(|r| r.run_ref == b.run_ref) {
            Some(i) => base = i,
            None => refs.insert(0, b.clone()),
        }
    }
    check_group_count(refs.len()).map_err(study_error)?;
    let mut groups = Vec::new();
    let mut loaded: BTreeMap<RunId, LoadedRun> = BTreeMap::new();
    for r in &refs {
        let ids = match db.resolve_group(&r.run_ref) {
            Ok(ids) => ids,
            Err(StoreError::NoSuchRun(_)) => {
                return Err(study_error(StudyError::NoRuns(r.text.clone())))
            }
            Err(e @ StoreError::AmbiguousRun { .. }) => usage!("{e}"),
            Err(e) => return Err(e.into()),
        };
        let mut runs = Vec::new();
        for id in ids {
            let run = match loaded.get(&id) {
                Some(run) => run.clone(),
                None => db.load_run(id)?,
            };
            loaded.insert(id, run.clone());
            runs.push(run);
        }
        groups.push(GroupInput { reference: r.text.clone(), runs });
    }
    let mut pool = Vec::new();
    for fp in &Study::machines_of(&groups) {
        for s in db.list_runs_for_machine(fp)? {
            if s.status == RunStatus::Complete {
                pool.push(match loaded.get(&s.id) {
                    Some(run) => run.clone(),
                    None => db.load_run(s.id)?,
                });
            }
        }
    }
    let study = Study::of_groups(&groups, base, policy, &pool).map_err(study_error)?;
    let runs = groups.into_iter().flat_map(|g| g.runs).collect();
    Ok((study, runs))
}

/// A study the user's groups cannot make: exit 2.
fn study_error(e: StudyError) -> anyhow::Error {
    let text = match e {
        StudyError::GroupCount(_) => {
            format!("{e}; compare needs at least two different runs or groups")
        }
        e => e.to_string(),
    };
    anyhow::Error::new(crate::error::UsageError(text))
}

pub fn run(a: CompareArgs, g: &Invocation) -> anyhow::Result<()> {
    let db = g.open_existing()?;
    let policy = Criteria { confidence: a.confidence, margin_pct: a.margin };
    let (study, runs) = load_study(&db, &a.groups, a.baseline.as_ref(), &policy)?;
    for w in report::study::words::warnings(&study) {
        g.warn(&w);
    }
    let doc = console::study::doc::CompareDoc::new(&study);
    g.answer(output::schema::COMPARE, &doc, |style| compare_text(style, &study, &runs, a.verbose))
}

/// The study as `compare` prints it without `--json`
/// ([`console::study_text::compare_text`]): each group's median rounded as
/// its runs' tables round the same figure (`--json` keeps the values
/// unrounded), every line within the terminal's width.
fn compare_text(style: TableStyle, study: &Study, runs: &[LoadedRun], verbose: bool) -> String {
    let noise = report::study::group_noise(study, &runs.iter().collect::<Vec<_>>());
    let layout = console::study_text::Layout { width: output::text_width(), verbose, style };
    console::study_text::compare_text(study, &noise, &layout)
}

/// [`compare_text`] on stdout, after a study's own text.
pub(crate) fn print_runs(
    g: &Invocation,
    study: &Study,
    runs: &[LoadedRun],
    verbose: bool,
) -> anyhow::Result<()> {
    output::emit(&compare_text(g.style, study, runs, verbose))
}
