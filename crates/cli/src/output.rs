//! Writing to stdout: JSON documents and tables. A closed pipe surfaces as
//! an `io::Error` of kind `BrokenPipe`, which `main` treats as success.
//!
//! Tables are drawn by `report::console` in the process's style: light
//! box-drawing lines on a terminal and plain aligned text when stdout is
//! not one (a pipe, a file); `--table` chooses explicitly: `box`, `plain`,
//! `markdown` or `tsv`.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;

use serde::Serialize;

pub use report::console::TableStyle;

static STYLE: OnceLock<TableStyle> = OnceLock::new();

/// Sets the table style for this process: `asked`, else box on a terminal
/// and plain text otherwise. The first call wins.
pub fn set_table_style(asked: Option<TableStyle>) {
    let style = asked.unwrap_or_else(|| {
        if std::io::stdout().is_terminal() {
            TableStyle::Box
        } else {
            TableStyle::Plain
        }
    });
    let _ = STYLE.set(style);
}

/// The process's table style (plain until [`set_table_style`]).
pub fn table_style() -> TableStyle {
    *STYLE.get().unwrap_or(&TableStyle::Plain)
}

/// The width text is laid out to: `COLUMNS` when set to a number, else
/// the terminal's when stdout is one, else 100 (a pipe, a file).
pub fn text_width() -> usize {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse::<usize>().ok()) {
        if c > 0 {
            return c;
        }
    }
    if std::io::stdout().is_terminal() {
        let probe = comfy_table::Table::new();
        if let Some(w) = probe.width().filter(|w| *w >= 20) {
            return usize::from(w);
        }
    }
    100
}

/// Writes `text` to stdout.
/// Control characters (from imported labels, hostnames) are written
/// visibly (`\x1b`), never sent to the terminal.
pub fn emit(text: &str) -> anyhow::Result<()> {
    let text = report::safe::visible(text);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// Writes `value` as pretty JSON to stdout.
pub fn json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    // serde_json escapes C0 controls; DEL and C1 (which can only be inside
    // strings here) get a JSON escape too, so no control reaches a terminal.
    let hidden = |c: char| c.is_control() && c as u32 >= 0x7f;
    if !text.contains(hidden) {
        return emit(&text);
    }
    let mut safe = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            safe.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            safe.push(c);
        }
    }
    emit(&safe)
}

/// Writes `value` as pretty JSON with the keys of every object, at every
/// level, in alphabetical order: the order the documents of `run`, `study`
/// and `topo --from-run` have always had, which their readers see.
pub fn json_sorted<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<()> {
    // A `serde_json::Value` keeps its objects' keys sorted.
    json(&serde_json::to_value(value)?)
}

/// The `schema_version` of each `--json` document whose type does not
/// carry its own; the command writes it through [`Versioned`]. The others
/// carry theirs: `topo` ([`topo::SCHEMA_VERSION`]), `audit`
/// ([`audit::SCHEMA_VERSION`]), `place`
/// ([`place::probe::PROBE_SCHEMA_VERSION`]). `bw`, `lat`, `scan` and
/// `advise interleave` are versioned by [`results::SCHEMA_VERSION`]. A
/// version goes up when a field of its document changes meaning or goes
/// away; an added field keeps it. docs/cli.md lists them all.
pub mod schema {
    /// `run` (each run's object) and `run --dry-run`.
    pub const RUN: u32 = 1;
    /// `exec`.
    pub const EXEC: u32 = 1;
    /// `compare`.
    pub const COMPARE: u32 = 1;
    /// `fleet`: hosts are machine identities, a host whose latest run is
    /// incomplete is listed in `incomplete`, `skipped` only for `--label`.
    pub const FLEET: u32 = 2;
    /// `list` (each run of the array).
    pub const LIST: u32 = 1;
    /// `show`.
    pub const SHOW: u32 = 1;
    /// `import` (each file of the array).
    pub const IMPORT: u32 = 1;
    /// `advise interleave --restore`.
    pub const RESTORE: u32 = 1;
    /// `study` and `study --dry-run`.
    pub const STUDY: u32 = 1;
    /// `gpu` and `gpu --probe`.
    pub const GPU: u32 = 1;
}

/// A `--json` document with `schema_version` first and then every field of
/// `doc` (a struct or a map), for documents whose type does not carry a
/// version (see [`schema`]).
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize + ?Sized> {
    schema_version: u32,
    #[serde(flatten)]
    doc: &'a T,
}

impl<'a, T: Serialize + ?Sized> Versioned<'a, T> {
    pub fn new(schema_version: u32, doc: &'a T) -> Self {
        Versioned { schema_version, doc }
    }
}

impl<'a, T: Serialize> Versioned<'a, T> {
    /// Each element of a list versioned, for commands whose document is
    /// an array (`list`, `import`).
    pub fn each(schema_version: u32, docs: &'a [T]) -> Vec<Self> {
        docs.iter().map(|doc| Versioned { schema_version, doc }).collect()
    }
}

/// Writes a warning to stderr unless `quiet`.
pub fn warn(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("numaprobe: warning: {}", report::safe::visible(msg));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_versioned_document_keeps_its_fields_after_the_version() {
        #[derive(Serialize)]
        struct Doc {
            b: u32,
            a: &'static str,
        }
        let text = serde_json::to_string(&Versioned::new(3, &Doc { b: 1, a: "x" })).unwrap();
        assert_eq!(text, r#"{"schema_version":3,"b":1,"a":"x"}"#);
        let list = serde_json::to_string(&Versioned::each(1, &[Doc { b: 2, a: "y" }])).unwrap();
        assert_eq!(list, r#"[{"schema_version":1,"b":2,"a":"y"}]"#);
    }
}
