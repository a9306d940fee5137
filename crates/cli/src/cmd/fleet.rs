//! `numaprobe fleet`: many hosts' runs (imported from their exports) side
//! by side: grouped by machine model, each host against its peers' median,
//! outliers and configuration drift flagged. The analysis is
//! `analysis::fleet`; docs/fleet.md documents it and the `--json` contract.

use std::path::{Path, PathBuf};

use analysis::fleet::{Fleet, GroupBy, HostRun, UnmeasuredInput};
use report::Renderer;
use store::{RunSummary, Store};

use crate::invocation::Invocation;
use crate::usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupByArg {
    /// Peers are hosts of the same model (CPU, packages, cores, memory).
    Model,
    /// Same model and same run label (each host's latest run per label).
    Label,
    /// Same model and same configuration fingerprint.
    Config,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FleetFormat {
    /// Plain text (the default on stdout).
    Text,
    /// Markdown.
    Md,
    /// One self-contained HTML page with a per-host chart of each headline
    /// metric.
    Html,
}

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  numaprobe import hosts/*.json && numaprobe fleet\n  \
    numaprobe fleet --threshold 10 --format html -o fleet.html\n  \
    numaprobe fleet --label acceptance --json")]
pub struct Args {
    /// What makes hosts peers: always the model, and optionally the label
    /// or the configuration too. Models are never mixed.
    #[arg(long, value_enum, default_value = "model")]
    pub group_by: GroupByArg,
    /// Flag a host this many % worse than its peers' median (bandwidth
    /// below, latency above), when its robust z-score also exceeds 3.5.
    #[arg(long, value_name = "PCT", default_value_t = analysis::fleet::DEFAULT_THRESHOLD_PCT,
          value_parser = crate::grammar::open_percent)]
    pub threshold: f64,
    /// Only runs with this label (each host's latest such run).
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Runs older than this are stale, never counted healthy: a number and
    /// a unit, s, m, h or d.
    #[arg(long, value_name = "DURATION", default_value = "8d",
          value_parser = crate::grammar::max_age)]
    pub max_age: std::time::Duration,
    /// Hosts the orchestrator could not measure, one `HOST<TAB>ERROR` a
    /// line (what deploy/ansible and deploy/slurm write): listed with their
    /// error, their older runs not compared.
    #[arg(long, value_name = "FILE")]
    pub unmeasured: Option<PathBuf>,
    /// Print this host's name and machine identity as a run here records
    /// them (`NUMAPROBE_HOSTNAME`, `NUMAPROBE_MACHINE_ID` included), one
    /// `HOST<TAB>MACHINE_ID` line (with --json an object), and do nothing
    /// else: what an orchestrator writes in `--unmeasured` for a host whose
    /// run failed, so a clone is never mistaken for another machine.
    #[arg(long, exclusive = true)]
    pub this_host: bool,
    /// Output format (default: from the -o file's extension, else text).
    #[arg(long, value_enum)]
    pub format: Option<FleetFormat>,
    /// Write to FILE instead of stdout; repeat it for several formats from
    /// one analysis (each by its extension: .html, .md, .json, else text).
    #[arg(long, short, value_name = "FILE")]
    pub output: Vec<PathBuf>,
}

/// The format of one output: `--json`, else `--format`, else the file's
/// extension.
fn format_of(a: &Args, g: &Invocation, path: Option<&Path>) -> Option<FleetFormat> {
    if g.json {
        return None;
    }
    if let Some(f) = a.format {
        return Some(f);
    }
    let Some(p) = path else { return Some(FleetFormat::Text) };
    if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
        return None;
    }
    Some(match report::Format::from_path(p) {
        Some(report::Format::Html) => FleetFormat::Html,
        Some(report::Format::Markdown) => FleetFormat::Md,
        None => FleetFormat::Text,
    })
}

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    if g.json && a.format.is_some() {
        usage!("--json and --format are exclusive: --json prints the fleet as JSON");
    }
    if a.this_host {
        return this_host(g);
    }
    let unmeasured = read_unmeasured(a.unmeasured.as_deref())?;
    let path = g.db_path()?;
    // Every host of an orchestrated round may have failed: the report then
    // lists them, from no database at all.
    let db = match Store::open_existing(&path) {
        Err(_) if !unmeasured.is_empty() && !path.exists() => None,
        other => Some(other?),
    };
    let summaries = match &db {
        Some(db) => db.list_runs()?,
        None => Vec::new(),
    };
    if summaries.is_empty() && unmeasured.is_empty() {
        anyhow::bail!(
            "{}: no runs yet: import the hosts' exports first (`numaprobe import FILE...`)",
            path.display()
        );
    }
    let group_by = match a.group_by {
        GroupByArg::Model => GroupBy::Model,
        GroupByArg::Label => GroupBy::Label,
        GroupByArg::Config => GroupBy::Config,
    };
    let runs = match &db {
        Some(db) => latest_runs(db, &summaries, group_by, a.label.as_deref())?,
        None => Vec::new(),
    };
    let mut fresh = analysis::fleet::Freshness::now();
    fresh.max_age_s = a.max_age.as_secs();
    fresh.unmeasured = &unmeasured;
    let fleet =
        analysis::fleet::build_fresh(&runs, group_by, a.threshold, a.label.as_deref(), &fresh);
    if let Some(l) = &a.label {
        if !summaries.iter().any(|s| s.label.as_deref() == Some(l.as_str())) {
            usage!("no run is labelled {l:?} (see `numaprobe list`)");
        }
    }
    render(&a, g, &fleet)
}

/// `--unmeasured FILE`: the hosts the orchestrator could not measure.
fn read_unmeasured(path: Option<&Path>) -> anyhow::Result<Vec<UnmeasuredInput>> {
    let Some(p) = path else { return Ok(Vec::new()) };
    match std::fs::read(p) {
        Ok(bytes) => match analysis::fleet::parse_unmeasured(&String::from_utf8_lossy(&bytes)) {
            Ok(u) => Ok(u),
            Err(e) => usage!("--unmeasured {}: {}", p.display(), console::fleet::bad_line(&e)),
        },
        Err(e) => usage!("--unmeasured {}: cannot read it: {e}", p.display()),
    }
}

/// The runs compared: per host its latest measuring run (per label with
/// `--group-by label`, of `label` when given). One run in memory at a
/// time: each is reduced to its metrics and settings as it is read.
fn latest_runs(
    db: &Store,
    summaries: &[RunSummary],
    group_by: GroupBy,
    label: Option<&str>,
) -> anyhow::Result<Vec<HostRun>> {
    let by_label = group_by == GroupBy::Label;
    // Only the kinds of result a HostRun is made of, none written back.
    let kinds = Some(&analysis::fleet::HOST_RUN_KINDS[..]);
    let load = |id| anyhow::Ok(HostRun::of(&db.load_run_records(id, kinds)?));
    let measured = |r: &HostRun| r.complete && !r.metrics.is_empty();
    store::select::latest_per_host(summaries, by_label, label, load, measured)
}

/// Writes the fleet to each output (stdout when none) in its format: the
/// JSON document, else the report drawn once for all the others; both
/// carry the fleet's sentences worded once.
fn render(a: &Args, g: &Invocation, fleet: &Fleet) -> anyhow::Result<()> {
    let words = report::fleet::Words::of(fleet);
    let outputs: Vec<Option<&Path>> = if a.output.is_empty() {
        vec![None]
    } else {
        a.output.iter().map(|p| Some(p.as_path())).collect()
    };
    let mut doc = None;
    for out in outputs {
        let Some(format) = format_of(a, g, out) else {
            let json = console::fleet::Doc::new(fleet, &words);
            let bytes = crate::invocation::document_file(crate::output::schema::FLEET, &json)?;
            crate::cmd::store::write_out(out, &bytes, g, "the fleet")?;
            continue;
        };
        let doc = doc.get_or_insert_with(|| report::fleet::document_worded(fleet, &words));
        let bytes = match format {
            FleetFormat::Text => report::Text.render(doc),
            FleetFormat::Md => report::Markdown.render(doc),
            FleetFormat::Html => report::Html.render(doc),
        };
        crate::cmd::store::write_out(out, &bytes, g, "the fleet report")?;
    }
    Ok(())
}

/// `fleet --this-host --json`: what the fleet playbooks read (no
/// `schema_version`: its three keys are the contract, docs/fleet.md).
#[derive(serde::Serialize)]
struct ThisHost<'a> {
    host: Option<&'a str>,
    machine_id: Option<&'a str>,
    machine_id_source: Option<&'static str>,
}

/// `fleet --this-host`: the name and machine identity a run on this host
/// records.
fn this_host(g: &Invocation) -> anyhow::Result<()> {
    let root = topo::SysRoot::live();
    let host = audit::fingerprint::hostname(&root);
    let id = audit::fingerprint::machine_identity(&root, host.as_deref());
    let doc = ThisHost {
        host: host.as_deref(),
        machine_id: id.as_ref().map(|i| i.id.as_str()),
        machine_id_source: id.as_ref().map(|i| i.source),
    };
    let text = |_| format!("{}\t{}", doc.host.unwrap_or(""), doc.machine_id.unwrap_or(""));
    g.answer_own(&doc, text)
}
