//! `numaprobe fleet`: many hosts' runs (imported from their exports) side
//! by side: grouped by machine model, each host against its peers' median,
//! outliers and configuration drift flagged. The analysis is
//! `analysis::fleet`; docs/fleet.md documents it and the `--json` contract.

use std::collections::BTreeMap;
use std::path::PathBuf;

use analysis::fleet::GroupBy;
use report::Renderer;
use store::{RunSummary, Store};

use crate::cli::Global;
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
    /// One self-contained HTML page with a per-host chart.
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
    /// Output format (default: from the -o file's extension, else text).
    #[arg(long, value_enum)]
    pub format: Option<FleetFormat>,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The runs the fleet needs: per machine (and label with `--group-by
/// label`) the latest complete run, plus the latest run of machines with
/// no complete one (to say they were left out). Loading only these keeps
/// a long history cheap.
fn wanted(summaries: &[RunSummary], by_label: bool, label: Option<&str>) -> Vec<store::RunId> {
    let mut best: BTreeMap<(String, String), &RunSummary> = BTreeMap::new();
    let mut any: BTreeMap<String, &RunSummary> = BTreeMap::new();
    for s in summaries {
        any.insert(s.machine_fingerprint.clone(), s);
        let labelled = label.is_none_or(|l| s.label.as_deref() == Some(l));
        if !s.complete || !labelled {
            continue;
        }
        let sub = if by_label { s.label.clone().unwrap_or_default() } else { String::new() };
        let slot = best.entry((s.machine_fingerprint.clone(), sub)).or_insert(s);
        let key = |r: &RunSummary| (store::util::time_order_key(&r.started), r.id);
        if key(s) > key(slot) {
            *slot = s;
        }
    }
    let mut ids: Vec<store::RunId> = best.values().map(|s| s.id).collect();
    for (fp, s) in any {
        if !best.keys().any(|(f, _)| *f == fp) {
            ids.push(s.id);
        }
    }
    ids.sort();
    ids
}

pub fn run(a: Args, g: &Global) -> anyhow::Result<()> {
    let format = match (a.format, &a.output) {
        (Some(f), _) => f,
        (None, Some(p)) => match report::Format::from_path(p) {
            Some(report::Format::Html) => FleetFormat::Html,
            Some(report::Format::Markdown) => FleetFormat::Md,
            None => FleetFormat::Text,
        },
        (None, None) => FleetFormat::Text,
    };
    if g.json && a.format.is_some() {
        usage!("--json and --format are exclusive: --json prints the fleet as JSON");
    }
    let path = crate::cmd::store::db_path(g)?;
    let db = Store::open_existing(&path)?;
    let summaries = db.list_runs()?;
    if summaries.is_empty() {
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
    let ids = wanted(&summaries, group_by == GroupBy::Label, a.label.as_deref());
    // One run in memory at a time: each is reduced to its metrics and
    // settings as it is read.
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        runs.push(analysis::fleet::HostRun::of(&db.load_run(*id)?));
    }
    let fleet = analysis::fleet::build_from(&runs, group_by, a.threshold, a.label.as_deref());
    if let Some(l) = &a.label {
        if fleet.groups.is_empty() {
            usage!("no complete run is labelled {l:?} (see `numaprobe list`)");
        }
    }
    if g.json {
        let doc = crate::output::Versioned::new(crate::output::schema::FLEET, &fleet);
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        return crate::cmd::store::write_out(a.output.as_deref(), text.as_bytes(), g, "the fleet");
    }
    let doc = report::fleet::document(&fleet);
    let bytes = match format {
        FleetFormat::Text => report::Text.render(&doc),
        FleetFormat::Md => report::Markdown.render(&doc),
        FleetFormat::Html => report::Html.render(&doc),
    };
    crate::cmd::store::write_out(a.output.as_deref(), &bytes, g, "the fleet report")
}
