//! The result store's commands: `list`, `show`, `export`, `import` and
//! `report` (`compare` is in `compare.rs`). Documented in docs/store.md and docs/report.md.

use std::path::{Path, PathBuf};

use anyhow::Context;
use report::export::{self, Exporter};
use store::batch::{Import, Step, Stopped};
use store::{LoadedRun, RunRef, Store, StoreError};

use crate::invocation::Invocation;
use crate::output;
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only runs on the machine with this fingerprint (see `show`).
    #[arg(long, value_name = "FINGERPRINT")]
    pub machine: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The run: an id, `latest`, `latest~N`, a run UUID or a label.
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// The import format: runs with machine, settings, topology and results.
    Json,
    /// One line per result, common fields as columns.
    Csv,
    /// OpenMetrics / Prometheus text: every result, the headline metrics,
    /// the run's timestamp and an info metric (docs/fleet.md).
    Openmetrics,
    /// Parquet tables for DuckDB, Spark, Trino, BigQuery: FILE (one row per
    /// figure), `NAME.runs.parquet` (one row per run) and
    /// `NAME.settings.parquet` (one row per setting) beside it; needs -o
    /// FILE (docs/fleet.md; the fleet's verdicts over them in deploy/sql).
    Parquet,
    /// hwloc XML with the measured Bandwidth and Latency memory
    /// attributes of one machine's runs, on the run's own topology or on
    /// --topology FILE (docs/topo.md).
    Hwloc,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Runs to export (ids, `latest`, UUIDs or labels), or every run of a
    /// group: `label:TEXT`, `config:HASH` (as in `compare`).
    #[arg(required_unless_present = "all", value_name = "RUN")]
    pub runs: Vec<String>,
    /// Every run in the database, in the order they were stored (what
    /// `fleet` reads, for deploy/sql), instead of RUN...
    #[arg(long, conflicts_with = "runs")]
    pub all: bool,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// With --format hwloc: write the measured attributes onto this
    /// topology, the one hwloc discovered (`lstopo --of xml > FILE`),
    /// instead of one built from the run's stored topology.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// JSON exports (`numaprobe export RUN --format json`); `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Markdown, in the form engineers file (also `markdown`, as `--table`
    /// spells it).
    #[value(alias = "markdown")]
    Md,
    /// One self-contained HTML page with SVG charts.
    Html,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run to report on (default: the latest).
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
    /// Runs to compare with RUN: the oldest of the runs is the baseline,
    /// so a change reads forward in time (`report latest --compare
    /// latest~1`); with groups (`label:TEXT`, `config:HASH`), RUN's group.
    #[arg(long, value_name = "RUN", num_args = 1..)]
    pub compare: Vec<String>,
    /// Output format (default: from the -o file's extension, else md).
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A short Markdown brief (at most 60 lines) for tickets and chat.
    #[arg(long)]
    pub brief: bool,
}

/// Resolves a run reference; a reference that names no run is the user's
/// mistake (exit 2).
pub(crate) fn resolve(db: &Store, text: &str) -> anyhow::Result<store::RunId> {
    let r: RunRef = match text.parse() {
        Ok(r) => r,
        Err(e) => usage!("{e}"),
    };
    match db.resolve(&r) {
        Ok(id) => Ok(id),
        Err(e @ (StoreError::NoSuchRun(_) | StoreError::AmbiguousRun { .. })) => usage!("{e}"),
        Err(e) => Err(e.into()),
    }
}

/// Every run a reference selects: all runs of a group reference
/// (`label:TEXT`, `config:HASH`), else the one run it names. Selecting
/// nothing is a usage error, as in `compare`.
pub(crate) fn resolve_group(db: &Store, text: &str) -> anyhow::Result<Vec<store::RunId>> {
    let r: RunRef = match text.parse() {
        Ok(r) => r,
        Err(e) => usage!("{e}"),
    };
    match db.resolve_group(&r) {
        Ok(ids) => Ok(ids),
        Err(StoreError::NoSuchRun(_)) if r.is_group() => usage!("{text:?} selects no run"),
        Err(e @ (StoreError::NoSuchRun(_) | StoreError::AmbiguousRun { .. })) => usage!("{e}"),
        Err(e) => Err(e.into()),
    }
}

fn load(db: &Store, text: &str) -> anyhow::Result<LoadedRun> {
    let id = resolve(db, text)?;
    Ok(db.load_run(id)?)
}

/// Loads the run that option `flag` (e.g. `--from-run`) names from the
/// database; a reference that names no run is a usage error (exit 2)
/// naming the option and the reference.
pub(crate) fn load_for(g: &Invocation, flag: &str, text: &str) -> anyhow::Result<LoadedRun> {
    let db = g.open_existing()?;
    match resolve(&db, text) {
        Ok(id) => Ok(db.load_run(id)?),
        Err(e) => match e.downcast_ref::<crate::error::UsageError>() {
            Some(u) => usage!("{flag} {text}: {}", u.0),
            None => Err(e),
        },
    }
}

/// A report table drawn in the house style.
pub fn list(a: ListArgs, g: &Invocation) -> anyhow::Result<()> {
    let path = g.db_path()?;
    let runs = match Store::open_existing(&path) {
        Ok(db) => match &a.machine {
            Some(fp) => db.list_runs_for_machine(fp)?,
            None => db.list_runs()?,
        },
        // A database named with --db or NUMAPROBE_DB that is not there is
        // a mistyped path: said, as `show` says it. The default one not
        // there yet (nothing measured) lists no runs.
        Err(e @ StoreError::Missing { .. }) if g.db.is_some() => return Err(e.into()),
        Err(StoreError::Missing { .. } | StoreError::Empty { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    g.answer_each(output::schema::LIST, &runs, |style| console::store::runs(&runs, &path, style))
}

pub fn show(a: ShowArgs, g: &Invocation) -> anyhow::Result<()> {
    let db = g.open_existing()?;
    let run = load(&db, &a.run)?;
    g.answer(output::schema::SHOW, &run, |style| console::store::show(&run, style))
}

pub(crate) fn write_out(
    path: Option<&Path>,
    bytes: &[u8],
    g: &Invocation,
    what: &str,
) -> anyhow::Result<()> {
    match path {
        Some(p) if p != Path::new("-") => {
            // Never through a symbolic link to a file (a stream is fine).
            topo::outfile::open_output(p)
                .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
                .with_context(|| format!("{}: cannot write", p.display()))?;
            if !g.quiet {
                eprintln!("numaprobe: wrote {what} to {}", p.display());
            }
            Ok(())
        }
        _ => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()?;
            Ok(())
        }
    }
}

pub fn export(a: ExportArgs, g: &Invocation) -> anyhow::Result<()> {
    if a.format == ExportFormat::Parquet && a.output.as_deref().is_none_or(|p| p == Path::new("-"))
    {
        usage!("--format parquet writes three files: give the figures' file with -o FILE.parquet (the runs and settings go beside it, FILE.runs.parquet and FILE.settings.parquet)");
    }
    if a.topology.is_some() && a.format != ExportFormat::Hwloc {
        usage!("--topology goes with --format hwloc");
    }
    let db = g.open_existing()?;
    let mut ids = Vec::new();
    if a.all {
        ids = db.list_runs()?.iter().map(|s| s.id).collect();
        ids.sort();
    }
    for r in &a.runs {
        for id in resolve_group(&db, r)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let topology = match a.topology.as_deref() {
        Some(p) => Some((read_topology(p)?, p.display().to_string())),
        None => None,
    };
    let exporter: Box<dyn Exporter> = match a.format {
        ExportFormat::Hwloc => Box::new(export::hwloc::Hwloc {
            onto: topology.as_ref().map(|(x, p)| (&x[..], &p[..])),
        }),
        ExportFormat::Json => Box::new(export::json::Json),
        ExportFormat::Csv => Box::new(export::csv::Csv),
        ExportFormat::Openmetrics => Box::new(export::openmetrics::OpenMetrics),
        #[cfg(not(feature = "parquet"))]
        ExportFormat::Parquet => {
            usage!("this numaprobe was built without its default feature `parquet` (cargo's --no-default-features): build it with the default features, as the release archive, .deb and .rpm are (docs/fleet.md)")
        }
        #[cfg(feature = "parquet")]
        ExportFormat::Parquet => {
            let path = a.output.as_deref().unwrap_or(Path::new("-"));
            let w = report::export::parquet::export(&db, &ids, path)?;
            let runs_path = report::export::parquet::runs_path(path);
            let settings_path = report::export::parquet::settings_path(path);
            g.document(&ParquetFiles {
                figures: ParquetFile { path, rows: w.figures },
                runs: ParquetFile { path: &runs_path, rows: w.runs },
                settings: ParquetFile { path: &settings_path, rows: w.settings },
                parquet_schema_version: store::parquet::SCHEMA_VERSION,
            })?;
            // Without --json, what was written is said on stderr.
            if !g.json && !g.quiet {
                eprintln!(
                    "numaprobe: wrote {} figure(s) to {}, {} run(s) to {} and {} setting(s) to {} (Parquet schema version {})",
                    w.figures,
                    path.display(),
                    w.runs,
                    runs_path.display(),
                    w.settings,
                    settings_path.display(),
                    store::parquet::SCHEMA_VERSION
                );
            }
            return Ok(());
        }
    };
    let out = exporter.export(&db, &ids)?;
    if !g.quiet {
        for w in &out.warnings {
            eprintln!("numaprobe: warning: {w}");
        }
    }
    write_out(a.output.as_deref(), &out.bytes, g, "the export")
}

/// `--topology FILE` of `export --format hwloc`: hwloc's XML of the
/// machine (`lstopo --of xml`), as text.
fn read_topology(p: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read(p).with_context(|| format!("--topology {}: cannot read", p.display()))?;
    String::from_utf8(text)
        .map_err(|_| anyhow::anyhow!("{}: not hwloc XML: not UTF-8 text", p.display()))
}

/// `export --format parquet --json`: the three files written, their rows
/// and the tables' Parquet schema version (not a version of this
/// document, which has none: its keys are the contract).
#[cfg(feature = "parquet")]
#[derive(serde::Serialize)]
struct ParquetFiles<'a> {
    figures: ParquetFile<'a>,
    runs: ParquetFile<'a>,
    settings: ParquetFile<'a>,
    parquet_schema_version: i32,
}

#[cfg(feature = "parquet")]
#[derive(serde::Serialize)]
struct ParquetFile<'a> {
    path: &'a Path,
    rows: u64,
}

/// Imports each file in its own transaction ([`store::batch`]); a file
/// skipped with a named error makes the command exit 1 once the others
/// are imported. Re-importing is idempotent (runs are known by UUID).
pub fn import(a: ImportArgs, g: &Invocation) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let path = g.db_path()?;
    let bar = if !g.quiet && a.files.len() > 1 && std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(a.files.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {pos}/{len} files ETA {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_prefix("import");
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let (reports, failed, stopped) =
        store::batch::import_files(&path, &a.files, &mut |step| match step {
            Step::Warning { file, text } => {
                let w = report::safe::one_line(text);
                bar.suspend(|| eprintln!("numaprobe: warning: {file}: {w}"));
            }
            Step::Skipped { kind, message } => {
                let shown = report::safe::one_line(message);
                bar.suspend(|| eprintln!("numaprobe: skipped ({kind}): {shown}"));
            }
            Step::Done => bar.inc(1),
        });
    bar.finish_and_clear();
    match stopped {
        Some(Stopped::Open(e)) => return Err(e.into()),
        // Each file is one transaction: say what is in the database and
        // what is not, then stop.
        Some(Stopped::Import { file, error, left }) => {
            print_imports(&reports, failed, &path, g)?;
            let done = reports.iter().filter(|r| r.outcome.is_some()).count();
            anyhow::bail!(
                "{file}: not imported: {error}; nothing from it was committed; {done} file(s) before it imported{}{}",
                if done > 0 { " (above)" } else { "" },
                match left {
                    0 => String::new(),
                    n => format!(", {n} after it not tried"),
                }
            );
        }
        None => {}
    }
    print_imports(&reports, failed, &path, g)?;
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} file(s) skipped (named above); the others were imported",
            a.files.len()
        );
    }
    Ok(())
}

/// What `import` did, file by file, or as JSON.
fn print_imports(
    reports: &[Import],
    failed: usize,
    path: &Path,
    g: &Invocation,
) -> anyhow::Result<()> {
    // Nothing imported and nothing skipped says nothing.
    g.answer_each(output::schema::IMPORT, reports, |_| {
        console::store::imports(reports, failed, path)
    })
}

/// The order runs are compared in: by their start (an RFC 3339 instant,
/// compared as one), then by id.
fn started_order(a: &LoadedRun, b: &LoadedRun) -> std::cmp::Ordering {
    let at = |r: &LoadedRun| results::time::parse_rfc3339(&r.summary.started);
    match (at(a), at(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => std::cmp::Ordering::Equal,
    }
    .then(a.summary.id.cmp(&b.summary.id))
}

pub fn report(a: ReportArgs, g: &Invocation) -> anyhow::Result<()> {
    if g.json {
        usage!("report writes Markdown or HTML; for JSON use `numaprobe show RUN --json` or `numaprobe compare ... --json`");
    }
    let format = match (a.format, &a.output) {
        (Some(ReportFormat::Md), _) => report::Format::Markdown,
        (Some(ReportFormat::Html), _) => report::Format::Html,
        (None, Some(p)) => match report::Format::from_path(p) {
            Some(f) => f,
            None if p.extension().is_none() || p == Path::new("-") => report::Format::Markdown,
            None => usage!(
                "cannot tell the format from {}: use --format md or --format html",
                p.display()
            ),
        },
        (None, None) => report::Format::Markdown,
    };
    if a.brief && format != report::Format::Markdown {
        usage!("--brief writes Markdown only: drop --format html or use a .md file");
    }
    let db = g.open_existing()?;
    if let Some(bytes) = super::compare::study_report(&db, &a.run, &a.compare, format, a.brief)? {
        return write_out(a.output.as_deref(), &bytes, g, "the report");
    }
    let mut run = load(&db, &a.run)?;
    let mut others = Vec::new();
    for r in &a.compare {
        let o = load(&db, r)?;
        if o.summary.id != run.summary.id
            && !others.iter().any(|x: &LoadedRun| x.summary.id == o.summary.id)
        {
            others.push(o);
        }
    }
    if !others.is_empty() {
        // The oldest run is the baseline: `report latest --compare
        // latest~1` reads forward, from the older run to the newer.
        let mut all = std::iter::once(run).chain(others).collect::<Vec<_>>();
        all.sort_by(started_order);
        run = all.remove(0);
        others = all;
    }
    let bytes = if a.brief {
        report::brief(&run, &others).into_bytes()
    } else {
        report::render_report(format, &run, &others)
    };
    write_out(a.output.as_deref(), &bytes, g, "the report")
}
