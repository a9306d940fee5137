//! Writing to stdout: text and tables (a command's `--json` document is
//! written by its [`crate::invocation::Invocation`]). A closed pipe surfaces as
//! an `io::Error` of kind `BrokenPipe`, which `main` treats as success.
//!
//! Tables are drawn by the `console` crate in the invocation's style
//! ([`crate::invocation::Invocation::style`]): light box-drawing lines on
//! a terminal and plain aligned text when stdout is not one (a pipe, a
//! file); `--table` chooses explicitly: `box`, `plain`, `markdown` or `tsv`.

use std::io::{IsTerminal, Write};

pub use console::versioned::{schema, Versioned};
pub use console::TableStyle;

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

/// Writes a warning to stderr unless `quiet`.
pub fn warn(quiet: bool, msg: &str) {
    if !quiet {
        eprintln!("numaprobe: warning: {}", report::safe::visible(msg));
    }
}
