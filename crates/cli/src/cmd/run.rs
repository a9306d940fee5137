//! `numaprobe run`: the main job. Discovers the machine, audits its
//! settings, measures bandwidth and latency under a time budget, saves every
//! result as it is measured, and writes a report.

use std::path::{Path, PathBuf};
use std::time::Instant;

use bench::suite::{Budget, MachineFacts, StepName, SuitePlan};
use console::run as run_text;
use results::Record;
use store::{RunId, RunStatus};
use topo::{SysRoot, Topology};

use crate::invocation::Invocation;
use crate::output;
use crate::progress::Bars;
use crate::record::{Outcome, Recording, Saving};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// About a minute on a small machine: triad only, short repetitions.
    #[arg(long, conflicts_with = "thorough")]
    pub quick: bool,
    /// Every kernel and mix, longer repetitions, every CPU to one node.
    #[arg(long)]
    pub thorough: bool,
    /// A name for the configuration measured, e.g. "SNC2 on, THP always".
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Workload profile for the settings audit.
    #[arg(long, default_value = "general", value_name = "PROFILE",
          value_parser = crate::grammar::closed::profile())]
    pub profile: audit::Profile,
    /// Print the plan and its time estimate, measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: plan for the machine whose sysfs/procfs is under
    /// DIR (an unpacked capture holding `sys/` and `proc/`, as `topo
    /// --root`) instead of this one.
    #[arg(long, value_name = "DIR", requires = "dry_run")]
    pub root: Option<PathBuf>,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
    /// Run only these steps (comma-separated, as the plan names them).
    #[arg(long, value_delimiter = ',', value_name = "STEPS", value_parser = crate::grammar::closed::step())]
    pub only: Vec<StepName>,
    /// Leave these steps out (same names as --only).
    #[arg(long, value_delimiter = ',', value_name = "STEPS", value_parser = crate::grammar::closed::step())]
    pub skip: Vec<StepName>,
    /// Folder for the reports (default: `reports/` beside the database);
    /// they are named `run-ID-UUID8.html` and `.md`.
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Also write the run's metrics to DIR/numaprobe.prom for
    /// node_exporter's textfile collector (atomically: a temporary file
    /// renamed over the old one).
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// Make N complete runs back to back under one label, each saved as its
    /// own run, so `compare label:TEXT` sees the run-to-run spread.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = crate::grammar::run_repeat)]
    pub repeat: u32,
    /// Stores of the bandwidth kernels: nt (non-temporal), regular, or
    /// auto (nt when available), as `bw --stores`. `regular` gives the
    /// figure a gcc-built STREAM gives.
    #[arg(long, value_name = "STORES", value_parser = crate::grammar::closed::stores(),
          default_value = "auto")]
    pub stores: bench::bw::StoreMode,
    /// Theoretical peak of one memory node in GB/s (channels x MT/s x 8
    /// bytes), recorded with every bandwidth result and shown as "% of
    /// peak" (default: from the SMBIOS DIMM table when readable, which
    /// needs root).
    #[arg(long, value_name = "GB/S", value_parser = crate::grammar::peak_gbs)]
    pub peak_gbs: Option<f64>,
    #[command(flatten)]
    pub declare: crate::declare::DeclareArgs,
}

/// Writes `text` to `dir/numaprobe.prom` ([`report::export::openmetrics::write_textfile`]).
pub fn write_textfile(dir: &Path, text: &str) -> anyhow::Result<PathBuf> {
    if !dir.is_dir() {
        crate::usage!(
            "--textfile {}: not a folder (node_exporter's --collector.textfile.directory)",
            dir.display()
        );
    }
    Ok(report::export::openmetrics::write_textfile(dir, text)?)
}

/// The reports' folder: `--report-dir`, else `reports/` beside the database.
fn report_dir(a: &Args, db_path: &Path) -> PathBuf {
    match &a.report_dir {
        Some(d) => d.clone(),
        None => {
            db_path.parent().map(|p| p.join("reports")).unwrap_or_else(|| PathBuf::from("reports"))
        }
    }
}

/// Whether a file can be created in `dir` (a scratch file, removed again).
fn can_write_in(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".numaprobe-write-check.{}", std::process::id()));
    std::fs::OpenOptions::new().write(true).create_new(true).open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Checks, before anything is measured, that every folder the run writes
/// to at its end can take files: the reports' folder (created now, as
/// writing the reports would) and `--textfile`'s. A folder the user named
/// is a usage error (exit 2); the default beside the database is the
/// environment's (exit 1).
fn check_outputs(a: &Args, g: &Invocation) -> anyhow::Result<()> {
    let db = g.db_path()?;
    // A device or a FIFO named as the database: refused before a reports
    // folder is made beside it.
    store::Store::check_path(&db)?;
    let dir = report_dir(a, &db);
    if let Err(e) = std::fs::create_dir_all(&dir).and_then(|()| can_write_in(&dir)) {
        match &a.report_dir {
            Some(_) => crate::usage!("--report-dir {}: cannot write there: {e}", dir.display()),
            None => anyhow::bail!(
                "{}: cannot write the reports there (beside the database; choose another \
                 folder with --report-dir): {e}",
                dir.display()
            ),
        }
    }
    if let Some(d) = &a.textfile {
        if !d.is_dir() {
            crate::usage!(
                "--textfile {}: not a folder (node_exporter's --collector.textfile.directory)",
                d.display()
            );
        }
        if let Err(e) = can_write_in(d) {
            crate::usage!("--textfile {}: cannot write there: {e}", d.display());
        }
    }
    Ok(())
}

fn budget(a: &Args) -> Budget {
    if a.quick {
        Budget::Quick
    } else if a.thorough {
        Budget::Thorough
    } else {
        Budget::Default
    }
}

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    let declared = a.declare.resolve()?;
    let topo = crate::cmd::topo::discover(a.root.as_deref())?;
    let root = match &a.root {
        Some(dir) => SysRoot::new(dir)?,
        None => SysRoot::live(),
    };
    // The run records the topology, these warnings with it.
    for w in &topo.warnings {
        g.warn(&w.to_string());
    }
    let plan = plan(&a, &root, &topo, &declared)?;
    // The plan goes where the user reads: stdout for people, stderr when
    // stdout carries JSON.
    // The load now: the estimate says what it assumed.
    let load = load_now(&root, &topo);
    let plan_out = run_text::plan(&topo, &plan, load, g.style);
    if a.dry_run {
        let doc = run_text::PlanDoc::of(budget(&a), &plan, load);
        return g.answer_sorted(output::schema::RUN, &doc, |_| plan_out);
    }
    // Said before measuring (and before the plan), not after.
    check_outputs(&a, g)?;
    if g.json {
        if !g.quiet {
            eprint!("{plan_out}");
        }
    } else {
        output::emit(&plan_out)?;
    }
    let stop = crate::signal::stop_flag();
    let _lock = g.take_lock(a.wait, &stop)?;
    let measured = Measure { a: &a, g, root: &root, topo: &topo, plan: &plan, declared: &declared };
    let (summaries, not_complete) = measured.repeat(&stop)?;
    if a.repeat == 1 {
        g.document_sorted(&output::Versioned::new(output::schema::RUN, &summaries[0]))?;
    } else {
        g.document_sorted(&output::Versioned::each(output::schema::RUN, &summaries))?;
    }
    if stop.is_stopped() {
        // Ctrl-C, SIGTERM or SIGHUP: exit 128 + the signal, with what was
        // measured saved and reported.
        return Ok(());
    }
    if !not_complete.is_empty() {
        anyhow::bail!("{}", not_complete.join("; "));
    }
    Ok(())
}

/// The suite the flags ask for on this machine: the budget's steps,
/// then `--only` and `--skip`.
fn plan(
    a: &Args,
    root: &SysRoot,
    topo: &Topology,
    declared: &audit::declared::Declared,
) -> anyhow::Result<SuitePlan> {
    let facts = MachineFacts {
        weighted_interleave: place::policy_support(root).weighted_interleave,
        peak_gbs_per_node: a.peak_gbs.or_else(|| audit::smbios::peak_gbs_per_dram_node(root, topo)),
        stores: a.stores,
        link_gbs: crate::cmd::bw::link_gbs(declared)?,
    };
    let mut plan = SuitePlan::for_topology(topo, budget(a), &facts);
    if let Err(e) = plan.select(&a.only, &a.skip, run_text::left_out_by) {
        crate::usage!("{e}");
    }
    Ok(plan)
}

/// The machine's load now, which the estimate assumed.
fn load_now(root: &SysRoot, topo: &Topology) -> run_text::Load {
    run_text::Load { average: topo::load::load_average(root).ok().flatten(), cpus: topo.cpus.len() }
}

/// What one measured run leaves for the caller.
struct Done {
    id: RunId,
    status: RunStatus,
    message: Option<String>,
    /// The run's `--json` document.
    doc: run_text::RunDoc,
}

/// Everything a run is measured with, for each of `--repeat`'s runs.
struct Measure<'a> {
    a: &'a Args,
    g: &'a Invocation,
    root: &'a SysRoot,
    topo: &'a Topology,
    plan: &'a SuitePlan,
    declared: &'a audit::declared::Declared,
}

impl Measure<'_> {
    /// `--repeat` runs back to back (fewer when stopped): each run's
    /// document, and what each run that did not complete said.
    fn repeat(
        &self,
        stop: &events::StopFlag,
    ) -> anyhow::Result<(Vec<run_text::RunDoc>, Vec<String>)> {
        let (a, g) = (self.a, self.g);
        let mut summaries = Vec::new();
        let mut not_complete = Vec::new();
        for i in 1..=a.repeat {
            if a.repeat > 1 && !g.quiet {
                eprintln!(
                    "numaprobe: run {i} of {}{}",
                    a.repeat,
                    a.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default()
                );
            }
            let done = self.once(stop)?;
            if done.status != RunStatus::Complete {
                not_complete.push(format!(
                    "run {} ended {}{}",
                    done.id,
                    done.status,
                    done.message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
                ));
            }
            summaries.push(done.doc);
            if stop.is_stopped() {
                break;
            }
        }
        Ok((summaries, not_complete))
    }

    /// One complete run: record, audit, measure, report, print the summary.
    fn once(&self, stop: &events::StopFlag) -> anyhow::Result<Done> {
        let Measure { a, g, root, topo, plan, declared } = *self;
        let budget = budget(a);
        // The load before measuring, for the estimate the summary sets beside
        // the time taken.
        let load = load_now(root, topo);
        let settings = audit::Settings::read(root);
        let memory = audit::smbios::read(root);
        let mut new = crate::declare::new_run(root, Some(topo), a.label.clone(), declared);
        // A property of the run, not a setting: outside the config fingerprint.
        new.config.budget = Some(budget.name().to_string());
        let fingerprints = (new.machine.fingerprint.clone(), new.config.fingerprint.clone());
        let rec = Recording::open(g, &new)?;
        let run = rec.run();
        let db_path = rec.path().to_path_buf();

        // Settings audit first: it is instant and its findings belong to the run.
        let findings = audit::Report::from_parts(
            "/".into(),
            topo,
            settings,
            memory,
            audit::Evidence::default(),
            a.profile,
            console::audit::TERMS,
        );
        for f in &findings.findings {
            rec.save(&Record::from(f.clone()));
        }

        let bars = Bars::new(g.quiet);
        let started = Instant::now();
        let outcome =
            bench::suite::execute(topo, plan, &Saving { rec: Some(&rec), next: &bars }, stop);
        let elapsed = started.elapsed();
        // The audit findings were saved through the recording too.
        let done = rec.finish(end_of(&outcome))?;
        let (db, status, message, saved) = (done.db, done.status, done.message, done.saved);

        let loaded = db.load_run(run)?;
        let (html, md, textfile) = write_outputs(a, &loaded, &db_path)?;
        let doc = run_text::RunDoc {
            run,
            id: run,
            uuid: loaded.summary.uuid.clone(),
            label: a.label.clone(),
            declared: declared.clone(),
            status,
            complete: status == RunStatus::Complete,
            message: message.clone(),
            budget,
            machine: loaded.summary.machine.clone(),
            machine_fingerprint: fingerprints.0,
            config_hash: loaded.summary.config_hash.clone(),
            config_fingerprint: fingerprints.1,
            elapsed_s: elapsed.as_secs_f64(),
            estimate_s: plan.estimate().as_secs_f64(),
            results: saved,
            audit: findings.counts.clone(),
            metrics: run_text::metric_docs(&loaded),
            report_html: html,
            report_md: md,
            textfile,
            db: db_path,
            hmat: report::hmat::pairs_of_run(&loaded),
            impossible: console::impossible::docs(&analysis::impossible::of_run(
                &analysis::data::RunData::of(&loaded),
            )),
        };
        if !g.json {
            output::emit(&run_text::summary(&doc, &loaded, elapsed, plan.estimate(), load))?;
        }
        if outcome.interrupted && !g.quiet {
            eprintln!("numaprobe: run {run} is saved as incomplete with what it measured");
        }
        Ok(Done { id: run, status, message, doc })
    }
}

/// How the saved run ends: interrupted, incomplete with the steps that
/// failed, or complete.
fn end_of(outcome: &bench::suite::SuiteOutcome) -> Outcome {
    if outcome.interrupted {
        Outcome::Interrupted
    } else if !outcome.failed.is_empty() {
        let failed: Vec<String> =
            outcome.failed.iter().map(|f| format!("{}: {}", f.step, f.error_chain())).collect();
        Outcome::Incomplete(format!("{} step(s) failed: {}", failed.len(), failed.join("; ")))
    } else {
        Outcome::Complete
    }
}

/// The run's reports (HTML and Markdown) and its `--textfile`, written
/// from the saved run; their paths.
fn write_outputs(
    a: &Args,
    loaded: &store::LoadedRun,
    db_path: &Path,
) -> anyhow::Result<(PathBuf, PathBuf, Option<PathBuf>)> {
    let (html, md) = report::write_run_reports(loaded, &report_dir(a, db_path))?;
    let textfile = match &a.textfile {
        Some(d) => Some(write_textfile(
            d,
            &report::export::openmetrics::render(std::slice::from_ref(loaded)),
        )?),
        None => None,
    };
    Ok((html, md, textfile))
}
