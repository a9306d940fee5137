//! The text of the store's commands: `list` (the runs' table), `show` (a
//! run's summary, its figures' tables and marked figures) and `import`
//! (what each file brought in).

use std::path::Path;

use store::{ImportedRun, LoadedRun, RunSummary};

use super::{Lines, Table, TableStyle};

/// No default database ([`store::StoreError::NoDataDir`]), with the flag
/// that names one.
pub fn no_data_dir() -> String {
    format!("{} (use --db PATH)", store::StoreError::NoDataDir)
}

/// A report table ([`report::Table`]) as terminal text: its caption, then
/// the table in `style` with its right-aligned columns.
pub fn table(t: &report::Table, style: TableStyle) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        out.push_str(c);
        out.push('\n');
    }
    let mut ct = Table::new(t.header.clone(), style);
    for r in &t.rows {
        ct.add_row(r.clone());
    }
    let right: Vec<usize> =
        (0..t.align.len()).filter(|i| t.align[*i] == report::Align::Right).collect();
    ct.right(&right);
    out.push_str(&ct.to_string());
    out
}

/// `list`: one row per run; `path` is the database, named when it holds
/// no run.
pub fn runs(runs: &[RunSummary], path: &Path, style: TableStyle) -> String {
    if runs.is_empty() {
        return format!("No runs in {}.", path.display());
    }
    let mut t = Table::with_header(
        &["Id", "Started", "Label", "Machine (system memory)", "Status", "Results"],
        style,
    );
    for r in runs {
        t.add_row(vec![
            r.id.to_string(),
            r.started.clone(),
            r.label.clone().unwrap_or_default(),
            r.machine.clone(),
            r.status.to_string(),
            r.result_count.to_string(),
        ]);
    }
    t.right(&[0, 5]);
    t.to_string()
}

/// `show`: the run's summary, the tables of its figures, the marked
/// figures and the placements' table with the best policy.
pub fn show(run: &LoadedRun, style: TableStyle) -> String {
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
    let mut out = Lines::new();
    out.push(head);
    let tables = report::summary_tables(run);
    let placements = report::placements_summary(run);
    if tables.is_empty() && placements.is_none() {
        out.push("No bandwidth, latency or exec results in this run.");
    }
    for t in &tables {
        out.push("");
        out.push(table(t, style));
    }
    let taken = report::summary_taken(run);
    if !taken.is_empty() {
        out.push(format_args!(
            "\nFigures taken from another measurement of the same quantity; {}:",
            report::figures::TAKEN_RULE
        ));
        for f in &taken {
            out.push(format_args!("  {f}"));
        }
    }
    let flags = report::summary_flags(run);
    if !flags.is_empty() {
        out.push("\nMarked figures:");
        for f in &flags {
            out.push(format_args!("  {f}"));
        }
    }
    if let Some((t, best)) = placements {
        out.push("");
        out.push(table(&t, style));
        out.push(best);
    }
    out.into_string()
}

pub use store::batch::Import;

/// What `import` did, file by file (a total past 20 files) into the
/// database at `path`; `failed` files were skipped. Empty when no file
/// imported.
pub fn imports(reports: &[Import], failed: usize, path: &Path) -> String {
    let mut text = String::new();
    let ids = |v: &[ImportedRun]| v.iter().map(|i| i.id.to_string()).collect::<Vec<_>>().join(", ");
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
            if o.imported.is_empty() { String::new() } else { format!(" as {}", ids(&o.imported)) },
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
    text.trim_end().to_string()
}
