//! Writing to stdout: JSON documents and tables. A closed pipe surfaces as
//! an `io::Error` of kind `BrokenPipe`, which `main` treats as success.

use std::io::Write;

use comfy_table::{presets, ContentArrangement, Table};
use serde::Serialize;

/// Writes `text` to stdout.
pub fn emit(text: &str) -> anyhow::Result<()> {
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
    emit(&text)
}

/// A table in the house style: light borders, wrapped to the terminal's
/// width. A console that reports no usable width (a serial line reports 0)
/// would squeeze every column to one character, so there it is not wrapped.
pub fn table(header: Vec<String>) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::UTF8_FULL_CONDENSED).set_header(header);
    let arrangement = if t.width().is_some_and(|w| w >= 60) {
        ContentArrangement::Dynamic
    } else {
        ContentArrangement::Disabled
    };
    t.set_content_arrangement(arrangement);
    t
}

/// Writes a warning to stderr unless `quiet`.
pub fn warn(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("numaprobe: warning: {msg}");
    }
}
