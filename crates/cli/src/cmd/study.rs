//! `numaprobe study --vary KEY=A,B[,C] --rounds N [-- RUN OPTIONS]`. The
//! study is the `vary` crate's (plan, loop, child runs and their cgroup,
//! journal, documents, text); this command checks what the user wrote,
//! takes the locks, calls it, prints what it tells and the comparison.

use anyhow::Context;
use audit::runtime::Knob;
use clap::Parser;
use results::runstats::Criteria;
use topo::SysRoot;
use vary::child::{FnRelay, Launch, RunCommand};
use vary::journal::{self, StateDir};
use vary::Plan;

use crate::cmd::compare::{load_study, print_runs, GroupRef};
use crate::invocation::Invocation;
use crate::{output, signal, usage};

#[derive(Debug, clap::Args)]
#[command(after_help = "Keys: thp_enabled, thp_defrag, numa_balancing, zone_reclaim_mode, \
governor, epp, boost, weighted_interleave (a weight per node, e.g. 3:1). Needs root; every value \
is put back at the end (see docs/store.md).\n\nExample:\n  sudo numaprobe study --vary \
thp_enabled=madvise,always --rounds 3 -- --quick")]
pub struct Args {
    /// The setting and the values to compare, the first the baseline:
    /// KEY=A,B[,C...] (2 to 8 values), e.g. thp_enabled=madvise,always.
    #[arg(long, value_name = "KEY=A,B[,C]", required_unless_present = "restore")]
    pub vary: Option<String>,
    /// Put back what a study that was killed left changed (from its
    /// journal, /var/lib/numaprobe/study.journal), and clear the journal.
    #[arg(long, conflicts_with_all = ["vary", "dry_run", "label"])]
    pub restore: bool,
    /// Runs of each value: rounds of every value, the order reversed each
    /// round (A B, B A, A B...).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = crate::grammar::study_rounds)]
    pub rounds: u32,
    /// The start of every run's label, then `: KEY=VALUE` (default:
    /// `study` and the start time).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
    /// Check everything and print the plan (the order, the labels, the
    /// value in force and how it is restored), change and measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Options of every `numaprobe run` (after --), e.g. -- --quick --only bw-local.
    #[arg(last = true, value_name = "RUN OPTIONS")]
    pub run: Vec<String>,
}

/// `numaprobe run`'s own options, to check those given after `--`.
#[derive(Debug, Parser)]
#[command(name = "numaprobe run")]
struct RunLine {
    #[command(flatten)]
    args: crate::cmd::run::Args,
}

/// Checks the options meant for `run`: they must parse, and leave the
/// labels, the repetition and the varied setting to the study.
fn check_run_options(a: &Args, knob: Knob) -> anyhow::Result<()> {
    let line = std::iter::once("run".to_string()).chain(a.run.iter().cloned());
    let r = match RunLine::try_parse_from(line) {
        Ok(r) => r.args,
        Err(e) => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default().trim_start_matches("error: ");
            usage!("study: the run options after --: {first} (global options such as --json and --db go before `study`)");
        }
    };
    let owned = [
        (r.label.is_some(), "--label after --: the study labels every run (give study --label TEXT for the start of the labels)"),
        (r.repeat != 1, "--repeat after --: the study repeats the runs itself (--rounds N)"),
        (r.dry_run, "--dry-run after --: a study measures; see one run's plan with `numaprobe run --dry-run`"),
    ];
    if let Some((_, why)) = owned.iter().find(|(given, _)| *given) {
        usage!("study: {why}");
    }
    if let Some(v) = r.declare.resolve()?.get(knob.key()) {
        usage!("study: --set {}={v} after --: that is the setting the study varies", knob.key());
    }
    Ok(())
}

fn must_be_root(why: &str) -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        usage!("{why}");
    }
    Ok(())
}

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    if a.restore {
        return restore(g);
    }
    // Everything the user wrote is checked before anything is changed.
    let vary_text = a.vary.clone().unwrap_or_default();
    let (knob, written) = vary::parse_vary(&vary_text)
        .or_else(|e| usage!("{}", console::study::refusal::vary(&e)))?;
    check_run_options(&a, knob)?;
    must_be_root(&format!(
        "study --vary changes {} for the whole machine: run it as root (e.g. sudo numaprobe study ...)",
        knob.key()
    ))?;
    let root = SysRoot::live();
    let prefix =
        a.label.clone().unwrap_or_else(|| vary::default_prefix(&store::util::now_rfc3339()));
    let plan = match Plan::new(&root, knob, &written, a.rounds, &prefix) {
        Ok(p) => p,
        Err(e) if e.is_usage() => usage!("{}", console::study::refusal::plan(&e, &vary_text)),
        Err(e) => return Err(e.into()),
    };
    let exe = std::env::current_exe().context("finding the numaprobe binary")?;
    let flags = console::study::child::ChildFlags {
        db: g.db.clone(),
        quiet: g.quiet,
        json: g.json,
        options: a.run.clone(),
    };
    let launch = Launch { exe, json: g.json, argv: std::sync::Arc::new(flags) };
    if a.dry_run {
        let dry = vary::DryRun::of(&root, &plan, launch.estimate())?;
        if let Some(t) = &dry.undecidable {
            g.warn(&console::study::refusal::too_few_rounds(t));
        }
        let doc = console::study::doc::PlanDoc::new(&plan, &dry, &a.run);
        return g.answer_sorted(output::schema::STUDY, &doc, |_| {
            console::study::text::plan(&plan, &dry, &a.run)
        });
    }

    measure(&a, g, &root, &plan, launch)
}

/// The study measured, then what it found: the comparison of its runs,
/// or why it stopped and what it kept.
fn measure(
    a: &Args,
    g: &Invocation,
    root: &SysRoot,
    plan: &Plan,
    launch: Launch,
) -> anyhow::Result<()> {
    let state = StateDir::ensure(&journal::default_path())?;
    let _study_lock = state.begin_study()?;
    let stop = signal::patient_stop_flag();
    let _lock = g.take_lock(a.wait, &stop)?;
    let told =
        console::study::text::Lines { plan, quiet: g.quiet, sink: |l: &str| eprintln!("{l}") };
    let relay = FnRelay { presses: signal::presses, signal: signal::first_signal };
    let mut child =
        RunCommand::new(launch, plan.knob, &stop, &relay, &told).map_err(anyhow::Error::msg)?;
    let outcome = vary::execute(root, &state, plan, &mut child, &told, &stop)?;

    if let Some(why) = outcome.stop_reason(plan, stop.is_stopped()) {
        let interrupted = stop.is_stopped() && outcome.failure.is_none();
        let by = interrupted.then(signal::cause);
        let line =
            console::study::text::stopped(plan, &outcome, &why, by, g.db.as_deref(), |label| {
                let Ok(db) = g.open_existing() else { return 0 };
                db.resolve_group(&store::RunRef::LabelGroup(label.into()))
                    .map_or(0, |ids| ids.len())
            });
        let doc = console::study::doc::StudyDoc::<()>::new(plan, &outcome, None, Some(&why));
        g.document_sorted(&output::Versioned::new(output::schema::STUDY, &doc))?;
        if interrupted {
            eprintln!("numaprobe: {line}");
            return Err(signal::Interrupted.into());
        }
        anyhow::bail!("{line}");
    }
    let db = g.open_existing()?;
    let refs: Vec<GroupRef> = plan.labels.iter().map(|l| GroupRef::label(l)).collect();
    let (study, runs) = load_study(&db, &refs, None, &Criteria::default())?;
    for w in report::study::words::warnings(&study) {
        g.warn(&w);
    }
    if g.json {
        let comparison = console::study::doc::CompareDoc::new(&study);
        let doc = console::study::doc::StudyDoc::new(plan, &outcome, Some(&comparison), None);
        return g.document_sorted(&output::Versioned::new(output::schema::STUDY, &doc));
    }
    output::emit(&console::study::text::finished(plan, &outcome))?;
    print_runs(g, &study, &runs, false)
}

/// `study --restore`: the journaled values put back, read back, and the
/// journal cleared; nothing journaled is a no-op (exit 0).
fn restore(g: &Invocation) -> anyhow::Result<()> {
    must_be_root("study --restore writes system settings: run it as root (e.g. sudo numaprobe study --restore)")?;
    let done = match StateDir::existing(&journal::default_path())? {
        None => None,
        Some(state) => {
            let _study_lock = state.take_study_lock()?;
            journal::restore(&SysRoot::live(), &state)?
        }
    };
    let (entry, was) =
        (done.as_ref().map(|r| &r.entry), done.as_ref().and_then(|r| r.was.as_deref()));
    let doc = console::study::doc::RestoreDoc::new(entry, was);
    g.answer_sorted(output::schema::STUDY, &doc, |_| console::study::text::restored(entry, was))
}

/// Said on stderr by every command (but `study`, which refuses to start
/// or restores): a study was killed before it put its setting back.
pub fn warn_unfinished() {
    if let Some(entry) = journal::left_over() {
        eprintln!(
            "numaprobe: warning: a study (PID {}) was killed before it put {} back to {}; restore it with: sudo numaprobe study --restore",
            entry.pid,
            report::safe::one_line(&entry.key),
            report::safe::one_line(&entry.shown)
        );
    }
}
