//! The result store's commands: `list`, `show`, `export`, `import` and
//! `report` (`compare` is in `compare.rs`). Documented in docs/store.md and docs/report.md.

use std::path::{Path, PathBuf};

use anyhow::Context;
use comfy_table::CellAlignment;
use serde::Serialize;
use store::{LoadedRun, RunRef, Store, StoreError};

use crate::cli::Global;
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
    /// figure) and FILE's `NAME.runs.parquet` (one row per run); needs -o
    /// FILE (docs/fleet.md).
    Parquet,
}

#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Runs to export (ids, `latest`, UUIDs or labels), or every run of a
    /// group: `label:TEXT`, `config:HASH` (as in `compare`).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: ExportFormat,
    /// Write to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// JSON exports (`numaprobe export RUN --format json`); `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Markdown, in the form engineers file.
    Md,
    /// One self-contained HTML page with SVG charts.
    Html,
}

#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The run to report on (default: the latest).
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
    /// Runs to compare with RUN (RUN is the baseline).
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

/// The database `--db`/`NUMAPROBE_DB` names, else the default path.
pub(crate) fn db_path(g: &Global) -> anyhow::Result<PathBuf> {
    match &g.db {
        Some(p) => Ok(p.clone()),
        None => Ok(Store::default_path()?),
    }
}

pub(crate) fn open_existing(g: &Global) -> anyhow::Result<Store> {
    Ok(Store::open_existing(db_path(g)?)?)
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
pub(crate) fn load_for(g: &Global, flag: &str, text: &str) -> anyhow::Result<LoadedRun> {
    let db = open_existing(g)?;
    match resolve(&db, text) {
        Ok(id) => Ok(db.load_run(id)?),
        Err(e) => match e.downcast_ref::<crate::cli::UsageError>() {
            Some(u) => usage!("{flag} {text}: {}", u.0),
            None => Err(e),
        },
    }
}

/// A report table drawn in the house style.
pub(crate) fn print_table(t: &report::Table) -> anyhow::Result<()> {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        out.push_str(c);
        out.push('\n');
    }
    let mut ct = output::table(t.header.clone());
    for r in &t.rows {
        ct.add_row(r.clone());
    }
    for (i, a) in t.align.iter().enumerate() {
        if *a == report::Align::Right {
            if let Some(col) = ct.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    out.push_str(&ct.to_string());
    output::emit(&out)
}

pub fn list(a: ListArgs, g: &Global) -> anyhow::Result<()> {
    let path = db_path(g)?;
    let runs = match Store::open_existing(&path) {
        Ok(db) => match &a.machine {
            Some(fp) => db.list_runs_for_machine(fp)?,
            None => db.list_runs()?,
        },
        Err(StoreError::Missing { .. } | StoreError::Empty { .. }) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    if g.json {
        return output::json(&output::Versioned::each(output::schema::LIST, &runs));
    }
    if runs.is_empty() {
        return output::emit(&format!("No runs in {}.", path.display()));
    }
    let mut t = output::table(
        ["Id", "Started", "Label", "Machine", "Status", "Results"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    );
    for r in &runs {
        t.add_row(vec![
            r.id.to_string(),
            r.started.clone(),
            r.label.clone().unwrap_or_default(),
            r.machine.clone(),
            r.status.to_string(),
            r.result_count.to_string(),
        ]);
    }
    for i in [0, 5] {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    output::emit(&t.to_string())
}

pub fn show(a: ShowArgs, g: &Global) -> anyhow::Result<()> {
    let db = open_existing(g)?;
    let run = load(&db, &a.run)?;
    if g.json {
        return output::json(&output::Versioned::new(output::schema::SHOW, &run));
    }
    let s = &run.summary;
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in &run.results {
        let k = r.record.kind().to_string();
        match counts.iter_mut().find(|c| c.0 == k) {
            Some(c) => c.1 += 1,
            None => counts.push((k, 1)),
        }
    }
    let mut head = format!(
        "Run {} {}\n",
        s.id,
        s.label.as_deref().map(|l| format!("({l})")).unwrap_or_default()
    );
    let mut line = |k: &str, v: &str| head.push_str(&format!("  {k:<13}{v}\n"));
    line("UUID", &s.uuid);
    let status = match &s.message {
        Some(m) => format!("{} ({m})", s.status),
        None => s.status.to_string(),
    };
    line("Status", &status);
    line("Machine", &format!("{} [{}]", s.machine, s.machine_fingerprint));
    line("Config", &s.config_hash);
    line("Started", &s.started);
    line("Finished", s.finished.as_deref().unwrap_or("-"));
    line("Command", &s.command_line);
    line("numaprobe", &s.tool_version);
    let kinds = counts.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
    line("Results", &if kinds.is_empty() { "none".to_string() } else { kinds });
    if s.imported {
        line("Imported", "yes");
    }
    output::emit(&head)?;
    let tables = report::summary_tables(&run);
    let placements = report::placements_summary(&run);
    if tables.is_empty() && placements.is_none() {
        output::emit("No bandwidth, latency or exec results in this run.")?;
    }
    for t in &tables {
        output::emit("")?;
        print_table(t)?;
    }
    let flags = report::summary_flags(&run);
    if !flags.is_empty() {
        output::emit("\nMarked figures:")?;
        for f in &flags {
            output::emit(&format!("  {f}"))?;
        }
    }
    if let Some((t, best)) = placements {
        output::emit("")?;
        print_table(&t)?;
        output::emit(&best)?;
    }
    Ok(())
}

pub(crate) fn write_out(
    path: Option<&Path>,
    bytes: &[u8],
    g: &Global,
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

pub fn export(a: ExportArgs, g: &Global) -> anyhow::Result<()> {
    if a.format == ExportFormat::Parquet && a.output.as_deref().is_none_or(|p| p == Path::new("-"))
    {
        usage!("--format parquet writes two files: give the figures' file with -o FILE.parquet (the runs go beside it, FILE.runs.parquet)");
    }
    let db = open_existing(g)?;
    let mut ids = Vec::new();
    for r in &a.runs {
        for id in resolve_group(&db, r)? {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    let bytes = match a.format {
        ExportFormat::Json => {
            let mut s = db.export_runs(&ids)?.to_json();
            s.push('\n');
            s.into_bytes()
        }
        ExportFormat::Csv => {
            let runs: Vec<LoadedRun> =
                ids.iter().map(|id| db.load_run(*id)).collect::<Result<_, _>>()?;
            report::csv::runs_csv(&runs).into_bytes()
        }
        ExportFormat::Openmetrics => {
            let runs: Vec<LoadedRun> =
                ids.iter().map(|id| db.load_run(*id)).collect::<Result<_, _>>()?;
            if !g.quiet {
                for w in openmetrics_warnings(&db, &runs)? {
                    eprintln!("numaprobe: warning: {w}");
                }
            }
            report::openmetrics::render(&runs).into_bytes()
        }
        #[cfg(not(feature = "parquet"))]
        ExportFormat::Parquet => {
            usage!("this numaprobe was built without Parquet: build it with `--features parquet` (the release builds have it; docs/fleet.md)")
        }
        #[cfg(feature = "parquet")]
        ExportFormat::Parquet => {
            let path = a.output.as_deref().unwrap_or(Path::new("-"));
            let (figures, runs) = crate::cmd::parquet::export(&db, &ids, path)?;
            let runs_path = crate::cmd::parquet::runs_path(path);
            if g.json {
                let v = serde_json::json!({
                    "figures": {"path": path, "rows": figures},
                    "runs": {"path": runs_path, "rows": runs},
                });
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else if !g.quiet {
                eprintln!(
                    "numaprobe: wrote {figures} figure(s) to {} and {runs} run(s) to {}",
                    path.display(),
                    runs_path.display()
                );
            }
            return Ok(());
        }
    };
    write_out(a.output.as_deref(), &bytes, g, "the export")
}

/// A run without a bandwidth or latency figure exports as its
/// `numaprobe_run_info` alone: say so, and name the latest run of the same
/// machine that has figures.
fn openmetrics_warnings(db: &Store, runs: &[LoadedRun]) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for run in runs.iter().filter(|r| !report::openmetrics::has_figures(r)) {
        let all = db.list_runs_for_machine(&run.summary.machine_fingerprint)?;
        let mut same: Vec<&store::RunSummary> =
            all.iter().filter(|s| s.id != run.summary.id && s.result_count > 0).collect();
        same.sort_by_key(|s| std::cmp::Reverse((store::util::time_order_key(&s.started), s.id)));
        let mut with = None;
        for s in same {
            if report::openmetrics::has_figures(&db.load_run(s.id)?) {
                with = Some(s.id);
                break;
            }
        }
        let what = if run.summary.result_count == 0 {
            "saved no result"
        } else {
            "holds no bandwidth or latency figure (an exec run?)"
        };
        out.push(format!(
            "run {} ({}) {what}: the export has only its numaprobe_run_info; {}",
            run.summary.id,
            run.summary.machine,
            match with {
                Some(id) => format!(
                    "the latest run of this machine with figures is {id} (`numaprobe export --format openmetrics {id}`)"
                ),
                None => "no run of this machine here has any".into(),
            }
        ));
    }
    Ok(out)
}

/// What `import` did with one file: imported (`outcome`) or skipped with
/// a named error (`error`: `unreadable`, `corrupt` or `newer_version`).
#[derive(Serialize)]
struct ImportReport {
    file: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    outcome: Option<store::ImportOutcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// Checks one export file (or stdin for `-`) as a stream, every run,
/// without opening the database; the error's name says why a file is
/// skipped.
fn check_export(f: &Path) -> Result<store::CheckedExport, (String, &'static str, String)> {
    let checked = if f == Path::new("-") {
        store::CheckedExport::from_stdin()
    } else {
        store::CheckedExport::from_file(f)
    };
    checked.map_err(|e| {
        let name = if f == Path::new("-") { "stdin".to_string() } else { f.display().to_string() };
        let kind = match &e {
            StoreError::ExportUnreadable { .. } => "unreadable",
            StoreError::ExportTooNew { .. } => "newer_version",
            _ => "corrupt",
        };
        (name, kind, e.to_string())
    })
}

/// Imports each file in its own transaction, one after the other (memory
/// holds one run at a time). A file that cannot be read, is not a valid
/// export or comes from a newer numaprobe is skipped with a named error and
/// the others are imported; the command then exits 1. Re-importing is
/// idempotent (runs are known by UUID).
pub fn import(a: ImportArgs, g: &Global) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    let path = db_path(g)?;
    // Opened at the first good file: a command that imports nothing leaves
    // no database behind.
    let mut db: Option<Store> = None;
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
    let mut reports = Vec::new();
    let mut failed = 0usize;
    for (i, f) in a.files.iter().enumerate() {
        match check_export(f) {
            Ok(mut checked) => {
                let name = checked.origin().to_string();
                let store = match &mut db {
                    Some(s) => s,
                    None => db.insert(Store::open(&path)?),
                };
                let outcome = match store.import_checked(&mut checked) {
                    Ok(o) => o,
                    Err(e) => {
                        // Each file is one transaction: say what is in
                        // the database and what is not, then stop.
                        bar.finish_and_clear();
                        print_imports(&reports, failed, &path, g)?;
                        let done = reports.iter().filter(|r| r.outcome.is_some()).count();
                        anyhow::bail!(
                            "{name}: not imported: {e}; nothing from it was committed; {done} file(s) before it imported{}{}",
                            if done > 0 { " (above)" } else { "" },
                            match a.files.len() - i - 1 {
                                0 => String::new(),
                                n => format!(", {n} after it not tried"),
                            }
                        );
                    }
                };
                for w in &outcome.warnings {
                    let w = report::safe::one_line(w);
                    bar.suspend(|| eprintln!("numaprobe: warning: {name}: {w}"));
                }
                reports.push(ImportReport {
                    file: name,
                    outcome: Some(outcome),
                    error: None,
                    message: None,
                });
            }
            Err((name, kind, message)) => {
                failed += 1;
                let shown = report::safe::one_line(&message);
                bar.suspend(|| eprintln!("numaprobe: skipped ({kind}): {shown}"));
                reports.push(ImportReport {
                    file: name,
                    outcome: None,
                    error: Some(kind),
                    message: Some(message),
                });
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    print_imports(&reports, failed, &path, g)?;
    if failed > 0 {
        anyhow::bail!(
            "{failed} of {} file(s) skipped (named above); the others were imported",
            a.files.len()
        );
    }
    Ok(())
}

/// What `import` did, file by file (a total past 20 files), or as JSON.
fn print_imports(
    reports: &[ImportReport],
    failed: usize,
    path: &Path,
    g: &Global,
) -> anyhow::Result<()> {
    if g.json {
        output::json(&output::Versioned::each(output::schema::IMPORT, reports))?;
    } else {
        let mut text = String::new();
        let ids = |v: &[store::ImportedRun]| {
            v.iter().map(|i| i.id.to_string()).collect::<Vec<_>>().join(", ")
        };
        let (mut imported, mut skipped) = (0usize, 0usize);
        for r in reports {
            let Some(o) = &r.outcome else { continue };
            imported += o.imported.len();
            skipped += o.skipped.len();
            if reports.len() > 20 {
                continue;
            }
            text.push_str(&format!(
                "{}: imported {} run(s){}, skipped {} already in {}{}\n",
                r.file,
                o.imported.len(),
                if o.imported.is_empty() {
                    String::new()
                } else {
                    format!(" as {}", ids(&o.imported))
                },
                o.skipped.len(),
                path.display(),
                if o.skipped.is_empty() {
                    String::new()
                } else {
                    format!(" (runs {})", ids(&o.skipped))
                },
            ));
        }
        if reports.len() > 20 {
            text.push_str(&format!(
                "{} file(s): imported {imported} run(s), skipped {skipped} already in {}\n",
                reports.len() - failed,
                path.display()
            ));
        }
        if !text.is_empty() {
            output::emit(text.trim_end())?;
        }
    }
    Ok(())
}

pub fn report(a: ReportArgs, g: &Global) -> anyhow::Result<()> {
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
    let db = open_existing(g)?;
    if let Some(bytes) = super::compare::study_report(&db, &a.run, &a.compare, format, a.brief)? {
        return write_out(a.output.as_deref(), &bytes, g, "the report");
    }
    let run = load(&db, &a.run)?;
    let mut others = Vec::new();
    for r in &a.compare {
        let o = load(&db, r)?;
        if o.summary.id != run.summary.id
            && !others.iter().any(|x: &LoadedRun| x.summary.id == o.summary.id)
        {
            others.push(o);
        }
    }
    let bytes = if a.brief {
        report::brief(&run, &others).into_bytes()
    } else {
        report::render_report(format, &run, &others)
    };
    write_out(a.output.as_deref(), &bytes, g, "the report")
}
