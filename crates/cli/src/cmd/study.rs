//! `numaprobe study --vary KEY=A,B[,C] --rounds N [-- RUN OPTIONS]`: a
//! settings study of a setting Linux can change at run time
//! (`audit::runtime`), done the careful way: each value measured by a full
//! `numaprobe run` per round, the values alternated (A B, B A, A B, ...)
//! so that the machine's drift falls on every side, every run labelled
//! with its value, the setting put back as it was (also on Ctrl-C and on
//! failure; the commands that restore it by hand are printed before
//! anything is changed), and the comparison `compare` makes at the end.
//!
//! The study itself (the plan, the setting applied and restored, the loop)
//! is `vary::execute`; this command checks what the user wrote, measures
//! each run as a child `numaprobe run` (its own process group, so a Ctrl-C
//! reaches the study, which passes it on once and restores after the child
//! has saved what it measured; killed by the kernel should the study die,
//! `PR_SET_PDEATHSIG`), prints the progress and the comparison.
//! The study holds the machine-wide study lock (one study per machine,
//! whatever `--lock` says) and the machine's measuring lock for its whole
//! length; its children take a private one. The values found are
//! journaled before the first change (`vary::journal`): a study killed
//! with `kill -9` leaves the journal, every numaprobe command then says
//! so, and `numaprobe study --restore` puts them back.

use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use anyhow::Context;
use audit::runtime::{self, Knob};
use clap::Parser;
use results::runstats::Criteria;
use serde::Serialize;
use topo::SysRoot;
use vary::journal::{self, StateDir};
use vary::Ended;

use crate::cli::Global;
use crate::{output, record, signal, usage};

/// The most values one study compares (`compare`'s most groups).
const MAX_VALUES: usize = 8;

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

/// `KEY=A,B,...` into the knob and its values as written.
fn parse_vary(s: &str) -> anyhow::Result<(Knob, Vec<String>)> {
    let Some((key, list)) = s.split_once('=') else {
        usage!("--vary {s:?}: expected KEY=A,B (e.g. thp_enabled=madvise,always)");
    };
    let knob = match Knob::parse(key) {
        Ok(k) => k,
        Err(e) => usage!("--vary: {e}"),
    };
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        usage!("--vary {s:?}: an empty value");
    }
    if !(2..=MAX_VALUES).contains(&values.len()) {
        usage!("--vary {s:?}: give 2 to {MAX_VALUES} values to compare (got {})", values.len());
    }
    Ok((knob, values))
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
            usage!(
                "study: the run options after --: {first} (global options such as --json and --db go before `study`)"
            );
        }
    };
    if r.label.is_some() {
        usage!("study: --label after --: the study labels every run (give study --label TEXT for the start of the labels)");
    }
    if r.repeat != 1 {
        usage!("study: --repeat after --: the study repeats the runs itself (--rounds N)");
    }
    if r.dry_run {
        usage!("study: --dry-run after --: a study measures; see one run's plan with `numaprobe run --dry-run`");
    }
    let declared = r.declare.resolve()?;
    if let Some(v) = declared.get(knob.key()) {
        usage!("study: --set {}={v} after --: that is the setting the study varies", knob.key());
    }
    Ok(())
}

/// A folder only this process uses (the children's lock), removed on drop.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> anyhow::Result<PrivateDir> {
        let base = std::env::temp_dir();
        for i in 0..1000 {
            let p = base.join(format!("numaprobe-study-{}-{i}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(PrivateDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(anyhow::Error::new(e)
                        .context(format!("{}: cannot make a private folder", p.display())))
                }
            }
        }
        anyhow::bail!("{}: no free name for a private folder", base.display())
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Waits for `child`, passing each stopping signal the study receives on
/// to it (the first asks it to stop after the current measurement and
/// save; a second makes it quit at once).
fn wait(child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
    let mut passed = signal::presses();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        let presses = signal::presses();
        if presses > passed {
            let sig = match signal::first_signal() {
                0 => libc::SIGINT,
                s => s,
            };
            // SAFETY: kill(2) on our own child's PID (not yet reaped, so
            // the PID cannot have been reused).
            unsafe { libc::kill(child.id() as libc::pid_t, sig) };
            passed = presses;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `study --json` (keys sorted, [`output::json_sorted`]).
#[derive(Serialize)]
struct StudyDoc<'a> {
    key: &'a str,
    values: &'a [String],
    baseline: &'a str,
    rounds: u32,
    order: Vec<&'a str>,
    /// The value the setting was put back to.
    restored: &'a str,
    labels: &'a [String],
    runs: Vec<RunDoc<'a>>,
    /// The comparison of the runs (`null` when the study stopped early).
    comparison: Option<&'a analysis::study::Study>,
    /// Why the study stopped before its end (`null`: it did not).
    stopped: Option<&'a str>,
}

/// One run of the study, in the order measured.
#[derive(Serialize)]
struct RunDoc<'a> {
    value: &'a str,
    label: &'a str,
    /// The run's id and status (`null` when it wrote no document).
    run: Option<store::RunId>,
    status: Option<store::RunStatus>,
}

/// `study --dry-run --json` (keys sorted, [`output::json_sorted`]).
#[derive(Serialize)]
struct PlanDoc<'a> {
    dry_run: bool,
    key: &'a str,
    /// The value in force now.
    current: &'a str,
    values: &'a [String],
    baseline: &'a str,
    rounds: u32,
    order: Vec<&'a str>,
    labels: &'a [String],
    run_options: &'a [String],
    restore_commands: &'a [String],
    /// The whole study's estimated seconds of measuring (`null`: unknown).
    estimate_s: Option<f64>,
    /// False when the rounds are too few for any verdict but undecided.
    decidable: bool,
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<()> {
    if a.restore {
        return restore(a, g);
    }
    let vary_text = a.vary.clone().unwrap_or_default();
    // Everything the user wrote is checked before anything is changed.
    let (knob, written) = parse_vary(&vary_text)?;
    check_run_options(&a, knob)?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        usage!(
            "study --vary changes {} for the whole machine: run it as root (e.g. sudo numaprobe study ...)",
            knob.key()
        );
    }
    let root = SysRoot::live();
    let prefix = a.label.clone().unwrap_or_else(|| {
        let now = store::util::now_rfc3339();
        format!("study {}Z", now.split('.').next().unwrap_or(&now))
    });
    let plan = match vary::Plan::new(&root, knob, &written, a.rounds, &prefix) {
        Ok(p) => p,
        Err(e @ vary::PlanError::Twice(_)) => usage!("--vary {vary_text}: {e}"),
        Err(e) if e.is_usage() => usage!("--vary: {e}"),
        Err(e) => return Err(e.into()),
    };
    if prefix.trim().is_empty() {
        usage!("study --label: empty");
    }
    if a.dry_run {
        return dry_run(&a, g, &root, &plan);
    }

    let state = StateDir::ensure(&journal::default_path())?;
    let _study_lock = take_study_lock(&state)?;
    if let Some(left) = state.read()? {
        anyhow::bail!(
            "a study killed earlier left {} changed (it was {} before; study PID {}): put it back first with `numaprobe study --restore`",
            left.key,
            left.shown,
            left.pid
        );
    }
    let stop = signal::patient_stop_flag();
    let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
    let private = PrivateDir::new()?;
    let mut child = Child { a: &a, g, knob, private: &private.0, stop: &stop };
    let told = Told { g, plan: &plan };
    let outcome = vary::execute(&root, &state, &plan, &mut child, &told, &stop)?;
    conclude(&a, g, &plan, &outcome, &stop)
}

/// The machine-wide study lock beside the journal: one study at a time on
/// this machine, whichever measuring lock each was given.
fn take_study_lock(state: &StateDir) -> anyhow::Result<lock::MeasureLock> {
    let path = state.lock();
    lock::MeasureLock::acquire_at(&path).map_err(|e| match e {
        lock::LockError::Busy { pid, .. } => anyhow::anyhow!(
            "another study is running on this machine ({}; study lock {}): one study at a time, whatever --lock says",
            pid.map_or("holder PID unknown".into(), |p| format!("PID {p}")),
            path.display()
        ),
        e => anyhow::Error::new(e),
    })
}

/// `study --restore --json` (keys sorted, [`output::json_sorted`]).
#[derive(Serialize)]
struct RestoreDoc<'a> {
    /// Whether a journal was found (false: nothing to restore).
    journal: bool,
    key: Option<&'a str>,
    /// The value put back.
    restored: Option<&'a str>,
    /// The value in force before the restore.
    was: Option<String>,
    study_pid: Option<u32>,
}

/// `study --restore`: the journaled values put back, read back, and the
/// journal cleared; nothing journaled is a no-op (exit 0).
fn restore(_a: Args, g: &Global) -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        usage!("study --restore writes system settings: run it as root (e.g. sudo numaprobe study --restore)");
    }
    let path = journal::default_path();
    let Some(state) = StateDir::existing(&path)? else {
        return restore_said(g, None, None);
    };
    let _study_lock = take_study_lock(&state)?;
    let Some(entry) = state.read()? else {
        return restore_said(g, None, None);
    };
    let root = SysRoot::live();
    let snap = journal::snapshot_of(&root, &entry)
        .map_err(|e| anyhow::anyhow!("study journal {}: {e}", state.journal().display()))?;
    let was = runtime::current(&root, snap.knob).ok();
    let left = runtime::restore(&root, &snap);
    let commands = runtime::restore_commands(&root, &snap).join("; ");
    if !left.is_empty() {
        let files: Vec<String> =
            left.iter().map(|f| format!("{} ({}: {})", f.path, f.value, f.error)).collect();
        anyhow::bail!(
            "{} could not be put back to {}: {}; the journal is kept; restore by hand: {commands}",
            entry.key,
            entry.shown,
            files.join(", ")
        );
    }
    let now = runtime::current(&root, snap.knob)?;
    if now != entry.shown {
        anyhow::bail!(
            "{} reads {now} after being put back to {}; the journal is kept; restore by hand: {commands}",
            entry.key,
            entry.shown
        );
    }
    state.clear()?;
    restore_said(g, Some(&entry), was)
}

fn restore_said(
    g: &Global,
    entry: Option<&journal::Entry>,
    was: Option<String>,
) -> anyhow::Result<()> {
    if g.json {
        let doc = RestoreDoc {
            journal: entry.is_some(),
            key: entry.map(|e| e.key.as_str()),
            restored: entry.map(|e| e.shown.as_str()),
            was,
            study_pid: entry.map(|e| e.pid),
        };
        return output::json_sorted(&output::Versioned::new(output::schema::STUDY, &doc));
    }
    match entry {
        None => output::emit("No unfinished study: nothing to restore."),
        Some(e) => output::emit(&format!(
            "{} put back to {} (it was {}; left by study PID {}); journal cleared.",
            e.key,
            e.shown,
            was.as_deref().unwrap_or("unreadable"),
            e.pid
        )),
    }
}

/// Said on stderr by every command (but `study`, which refuses to start
/// or restores): a study was killed before it put its setting back.
pub fn warn_unfinished() {
    let Ok(Some(state)) = StateDir::existing(&journal::default_path()) else { return };
    let Ok(Some(entry)) = state.read() else { return };
    if lock::held_by(&state.lock()).is_some() {
        return; // the study is running: its journal is not left over
    }
    eprintln!(
        "numaprobe: warning: a study (PID {}) was killed before it put {} back to {}; restore it with: sudo numaprobe study --restore",
        entry.pid,
        report::safe::one_line(&entry.key),
        report::safe::one_line(&entry.shown)
    );
}

/// After the study: what was kept and why it stopped when it stopped
/// early (with `--json`, the document too, its comparison `null`), else
/// the comparison of its runs.
fn conclude(
    a: &Args,
    g: &Global,
    plan: &vary::Plan,
    outcome: &vary::Outcome<Option<crate::cmd::run::RunOutcome>>,
    stop: &events::StopFlag,
) -> anyhow::Result<()> {
    let (knob, values, labels) = (plan.knob, &plan.values, &plan.labels);
    let complete = outcome.runs.iter().filter(|d| d.ended == Ended::Complete).count();
    let why = match (&outcome.failure, stop.is_stopped()) {
        (Some(f), _) => Some(format!("study stopped: {f}")),
        (None, true) => Some("study interrupted".to_string()),
        (None, false) if complete < plan.order.len() => Some(format!(
            "study stopped: run {} of {} did not complete",
            outcome.runs.len(),
            plan.order.len()
        )),
        (None, false) => None,
    };
    let runs = || {
        outcome
            .runs
            .iter()
            .map(|d| RunDoc {
                value: &values[d.value],
                label: &d.label,
                run: d.output.as_ref().map(|o| o.id),
                status: d.output.as_ref().map(|o| o.status),
            })
            .collect::<Vec<_>>()
    };
    if let Some(why) = why {
        let saved: Vec<(String, usize)> =
            labels.iter().map(|l| (l.clone(), saved_runs(g, l))).collect();
        let kept: Vec<String> =
            saved.iter().map(|(l, n)| format!("{n} run(s) labelled {l:?}")).collect();
        let with_runs: Vec<&str> =
            saved.iter().filter(|(_, n)| *n > 0).map(|(l, _)| l.as_str()).collect();
        let next = next_step(g, &with_runs);
        let by = if stop.is_stopped() && outcome.failure.is_none() {
            format!(" ({})", signal::cause())
        } else {
            String::new()
        };
        let line = format!(
            "{why} after {complete} of {} runs{by}; {} restored; kept {}; {next}",
            plan.order.len(),
            outcome.restored,
            kept.join(", ")
        );
        if g.json {
            let doc = StudyDoc {
                key: knob.key(),
                values,
                baseline: &values[0],
                rounds: a.rounds,
                order: plan.sequence(),
                restored: &outcome.restored,
                labels,
                runs: runs(),
                comparison: None,
                stopped: Some(&why),
            };
            output::json_sorted(&output::Versioned::new(output::schema::STUDY, &doc))?;
        }
        if stop.is_stopped() && outcome.failure.is_none() {
            eprintln!("numaprobe: {line}");
            return Err(signal::Interrupted.into());
        }
        anyhow::bail!("{line}");
    }

    let db = crate::cmd::store::open_existing(g)?;
    let refs: Vec<String> = labels.iter().map(|l| format!("label:{l}")).collect();
    let study = crate::cmd::compare::study_of(&db, &refs, None, &Criteria::default())?;
    if !g.quiet {
        for w in &study.warnings {
            eprintln!("numaprobe: warning: {w}");
        }
    }
    if g.json {
        let doc = StudyDoc {
            key: knob.key(),
            values,
            baseline: &values[0],
            rounds: a.rounds,
            order: plan.sequence(),
            restored: &outcome.restored,
            labels,
            runs: runs(),
            comparison: Some(&study),
            stopped: None,
        };
        return output::json_sorted(&output::Versioned::new(output::schema::STUDY, &doc));
    }
    output::emit(&format!(
        "\nStudy of {}: {} against {} ({} run(s) each, alternated; {} restored)\n",
        knob.key(),
        values[1..].join(", "),
        values[0],
        a.rounds,
        outcome.restored
    ))?;
    crate::cmd::compare::print(&db, &study)
}

/// What to do with the runs an unfinished study kept: a command that
/// works with them (never a comparison naming a label without runs).
fn next_step(g: &Global, with_runs: &[&str]) -> String {
    let db = g.db.as_ref().map(|p| format!("--db '{}' ", p.display())).unwrap_or_default();
    match with_runs {
        [] => "no run was saved, nothing to compare".to_string(),
        [one] => {
            format!("only {one:?} has runs, nothing to compare; see them with: numaprobe {db}list")
        }
        many => format!(
            "compare them with: numaprobe {db}compare {}",
            many.iter()
                .map(|l| format!("'label:{}'", l.replace('\'', "'\\''")))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// Each run of the study: a child `numaprobe run`.
struct Child<'a> {
    a: &'a Args,
    g: &'a Global,
    knob: Knob,
    /// The children's measuring lock and `--json` documents.
    private: &'a Path,
    stop: &'a events::StopFlag,
}

impl vary::Runner for Child<'_> {
    /// The run's id and status from its `--json` document (with `--json`).
    type Output = Option<crate::cmd::run::RunOutcome>;

    fn run(&mut self, n: usize, value: &str, label: &str) -> Result<(Ended, Self::Output), String> {
        let out = self.private.join(format!("run-{n}.json"));
        let status = spawn_run(self.a, self.g, self.knob, value, label, self.private, &out)
            .and_then(|mut c| wait(&mut c).map_err(Into::into))
            .map_err(|e| crate::cli::error_line(&e))?;
        // Interrupted only when the study was asked to stop: a run that
        // ends with 130 on its own is a failure, said as one.
        let ended = if status.success() {
            Ended::Complete
        } else if self.stop.is_stopped() {
            Ended::Interrupted
        } else {
            Ended::Failed(status.code())
        };
        let outcome = self
            .g
            .json
            .then(|| std::fs::read(&out).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok());
        Ok((ended, outcome))
    }
}

/// The study's progress on stderr.
struct Told<'a> {
    g: &'a Global,
    plan: &'a vary::Plan,
}

impl vary::Observer for Told<'_> {
    fn event(&self, e: vary::Event<'_>) {
        let key = self.plan.knob.key();
        let quiet = self.g.quiet;
        match e {
            vary::Event::Started { now, restore_commands } => {
                if !quiet {
                    eprintln!(
                        "numaprobe: study of {key} (now {now}): {}; {} round(s), {} runs in the order {}",
                        self.plan.values.join(", "),
                        self.plan.rounds,
                        self.plan.order.len(),
                        self.plan.sequence().join(" ")
                    );
                }
                // Said before any change, and whatever --quiet says: the
                // way back if this process is killed before it restores.
                eprintln!(
                    "numaprobe: {key} is put back to {now} at the end (also on Ctrl-C or failure); if numaprobe is killed first, restore it with `numaprobe study --restore` (or by hand: {})",
                    restore_commands.join("; ")
                );
            }
            vary::Event::Run { n, total, value, label } if !quiet => {
                eprintln!("numaprobe: run {} of {total}: {key}={value} (label {label:?})", n + 1);
            }
            vary::Event::Restored { now } if !quiet => {
                eprintln!("numaprobe: {key} is {now} again");
            }
            vary::Event::RestoreFailed(message) => {
                eprintln!("numaprobe: error: {message}");
            }
            vary::Event::JournalLeft(message) => {
                eprintln!(
                    "numaprobe: warning: {key} is back, but the study journal is left: {message}"
                );
            }
            _ => {}
        }
    }
}

/// `--dry-run`: the plan, after every check the study makes, with nothing
/// changed or measured: the time it would take (each run's own estimate,
/// from `numaprobe run --dry-run`, times the runs) and a warning when the
/// rounds are too few for any verdict.
fn dry_run(a: &Args, g: &Global, root: &SysRoot, plan: &vary::Plan) -> anyhow::Result<()> {
    let (knob, values, labels) = (plan.knob, &plan.values, &plan.labels);
    let snap = runtime::snapshot(root, knob)?;
    let restore = runtime::restore_commands(root, &snap);
    let per_run = run_estimate(a, g);
    let estimate = per_run.map(|s| s * plan.order.len() as f64);
    let need = results::runstats::min_runs_for_interval(Criteria::default().confidence);
    let undecidable = (a.rounds < need).then(|| {
        format!(
            "--rounds {} gives {} run(s) per value: a comparison needs {need} per value for an interval at {:.0}% confidence, so every verdict would be undecided (use --rounds {need} or more)",
            a.rounds,
            a.rounds,
            Criteria::default().confidence * 100.0
        )
    });
    if let Some(w) = &undecidable {
        output::warn(g.quiet, w);
    }
    if g.json {
        let doc = PlanDoc {
            dry_run: true,
            key: knob.key(),
            current: &snap.shown,
            values,
            baseline: &values[0],
            rounds: a.rounds,
            order: plan.sequence(),
            labels,
            run_options: &a.run,
            restore_commands: &restore,
            estimate_s: estimate,
            decidable: undecidable.is_none(),
        };
        return output::json_sorted(&output::Versioned::new(output::schema::STUDY, &doc));
    }
    let runs: Vec<String> = plan
        .order
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            format!("  {:>3}. {}={}  (label {:?})", n + 1, knob.key(), values[i], labels[i])
        })
        .collect();
    let time = match (per_run, estimate) {
        (Some(one), Some(all)) => format!(
            "Estimated time: about {} ({} runs of about {} each, measuring only; the machine's load changes it)",
            human_time(all),
            plan.order.len(),
            human_time(one)
        ),
        _ => "Estimated time: unknown (`numaprobe run --dry-run` with these options gave none)".into(),
    };
    output::emit(&format!(
        "Study of {} (now {}): {} against {}, {} round(s); nothing changed (--dry-run)
         Runs, each `numaprobe run {}`:
{}
{time}
Restored at the end with: {}",
        knob.key(),
        snap.shown,
        values[1..].join(", "),
        values[0],
        a.rounds,
        a.run.join(" "),
        runs.join("\n"),
        restore.join("; ")
    ))
}

/// One run's estimated seconds: `numaprobe --json run OPTIONS --dry-run`'s
/// `estimate_s` (`None` when it gives none).
fn run_estimate(a: &Args, g: &Global) -> Option<f64> {
    let exe = std::env::current_exe().ok()?;
    let mut cmd = Command::new(exe);
    if let Some(db) = &g.db {
        cmd.arg("--db").arg(db);
    }
    cmd.args(["--json", "--quiet", "run"]).args(&a.run).arg("--dry-run");
    let out = cmd.stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    doc.get("estimate_s")?.as_f64().filter(|s| s.is_finite() && *s >= 0.0)
}

/// Seconds as people read them: `40 s`, `12 min`, `1.5 h`.
fn human_time(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// How many runs labelled `label` the database holds (0 when there is no
/// database yet: a run can fail before it saves anything).
fn saved_runs(g: &Global, label: &str) -> usize {
    let Ok(db) = crate::cmd::store::open_existing(g) else { return 0 };
    db.resolve_group(&store::RunRef::LabelGroup(label.to_string())).map_or(0, |ids| ids.len())
}

/// Starts `numaprobe run RUN-OPTIONS --label LABEL` (and `--set` for a
/// setting the configuration does not show) in its own process group,
/// with a private measuring lock (the study holds the machine's).
fn spawn_run(
    a: &Args,
    g: &Global,
    knob: Knob,
    value: &str,
    label: &str,
    private: &Path,
    json_out: &Path,
) -> anyhow::Result<std::process::Child> {
    let exe = std::env::current_exe().context("finding the numaprobe binary")?;
    let mut cmd = Command::new(exe);
    if let Some(db) = &g.db {
        cmd.arg("--db").arg(db);
    }
    if g.quiet {
        cmd.arg("--quiet");
    }
    if g.json {
        cmd.arg("--json");
        let f = std::fs::File::create(json_out)
            .with_context(|| format!("{}: cannot create", json_out.display()))?;
        cmd.stdout(Stdio::from(f));
    }
    cmd.arg("run").args(&a.run).arg("--label").arg(label);
    if !knob.detected() {
        cmd.arg("--set").arg(format!("{}={value}", knob.key()));
    }
    cmd.env("NUMAPROBE_LOCK", private.join("measure.lock"));
    cmd.process_group(0);
    // The child must not outlive the study (a `kill -9` of the study
    // would leave it measuring under a setting nobody restores): the
    // kernel kills it when the study's thread ends. If the study died
    // before prctl took effect, the child's parent is already another.
    let study = std::process::id();
    // SAFETY: the closure runs in the child between fork and exec and
    // calls only async-signal-safe functions (prctl, getppid).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() as u32 != study {
                return Err(std::io::Error::other("the study ended before its run started"));
            }
            Ok(())
        });
    }
    Ok(cmd.spawn()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Guards issue 37 cause 3: with no run of a value kept, the suggested
    /// `compare` named an empty label and itself exited 2.
    #[test]
    fn the_next_step_names_only_labels_with_runs() {
        let g = crate::cli::Cli::try_parse_from(["numaprobe", "list"]).unwrap().global;
        assert_eq!(next_step(&g, &[]), "no run was saved, nothing to compare");
        let one = next_step(&g, &["s: thp_enabled=never"]);
        assert!(one.contains("numaprobe list") && !one.contains("compare '"), "{one}");
        let two = next_step(&g, &["s: a=1", "it's: a=2"]);
        assert_eq!(
            two,
            "compare them with: numaprobe compare 'label:s: a=1' 'label:it'\\''s: a=2'"
        );
    }

    #[test]
    fn vary_is_parsed_and_bad_forms_are_refused() {
        let (k, v) = parse_vary("thp_enabled=madvise, always").unwrap();
        assert_eq!((k, v), (Knob::ThpEnabled, vec!["madvise".to_string(), "always".into()]));
        for (bad, why) in [
            ("thp_enabled", "expected KEY=A,B"),
            ("thp=always,never", "not a setting"),
            ("thp_enabled=always", "2 to 8 values"),
            ("thp_enabled=always,,never", "an empty value"),
            ("boost=on,off,on,off,on,off,on,off,on", "2 to 8 values"),
        ] {
            let e = parse_vary(bad).unwrap_err();
            assert!(crate::cli::is_usage(&e), "{bad}");
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
