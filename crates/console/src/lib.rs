//! The front end: everything that speaks to a terminal, a flag or a
//! `--json` document, so that no library crate knows one.
//!
//! - What the commands print on a terminal: tables in the style `--table`
//!   chooses ([`TableStyle`]), and the text of the commands that show a
//!   measurement or the machine as they find it ([`topo`], [`lat`]), of
//!   `compare` ([`study_text`]) and of `study` ([`study`], with its
//!   `--json` documents). Every function returns the text; the
//!   command line writes it. The exception is [`progress`], an events
//!   observer that draws a measurement's progress bars on stderr as its
//!   events come.
//! - The grammar of flag values ([`grammar`]: numbers with bounds, and
//!   [`grammar::placement`]: sizes, nodes, CPUs and sets).
//! - The `--json` documents' envelope ([`versioned`]) and the manual pages
//!   ([`man`]).
//!
//! Tables are drawn with light box-drawing lines on a terminal and as plain
//! aligned text elsewhere (a pipe, a file); Markdown and tab-separated
//! values on request.

pub mod advise;
pub mod audit;
pub mod bw;
pub mod counters;
pub mod exec;
pub mod fleet;
pub mod gpu;
pub mod grammar;
pub mod impossible;
pub mod lat;
pub mod man;
pub mod place;
pub mod progress;
pub mod run;
pub mod scan;
pub mod store;
pub mod study;
pub mod study_text;
pub mod topo;
pub mod versioned;

use std::fmt;

use comfy_table::{presets, CellAlignment, ContentArrangement};

/// How tables are written (`--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableStyle {
    /// Light box-drawing lines (the default on a terminal).
    Box,
    /// Aligned columns, no lines (the default when stdout is not a terminal).
    Plain,
    /// A Markdown (GitHub) table.
    Markdown,
    /// Tab-separated values, header first, no alignment.
    Tsv,
}

/// A table in the house style; derefs to the `comfy_table::Table` it
/// builds (add rows, align columns), and displays in its [`TableStyle`].
pub struct Table {
    inner: comfy_table::Table,
    style: TableStyle,
}

impl Table {
    /// A new table with this header in `style`. A box table is wrapped to
    /// the terminal's width; a console that reports no usable width (a
    /// serial line reports 0) would squeeze every column to one
    /// character, so there it is not wrapped.
    pub fn new(header: Vec<String>, style: TableStyle) -> Table {
        let mut t = comfy_table::Table::new();
        let preset = match style {
            TableStyle::Box => presets::UTF8_FULL_CONDENSED,
            _ => presets::NOTHING,
        };
        t.load_preset(preset).set_header(header);
        let arrangement = if style == TableStyle::Box && t.width().is_some_and(|w| w >= 60) {
            ContentArrangement::Dynamic
        } else {
            ContentArrangement::Disabled
        };
        t.set_content_arrangement(arrangement);
        Table { inner: t, style }
    }

    /// A table from string slices.
    pub fn with_header(header: &[&str], style: TableStyle) -> Table {
        Table::new(header.iter().map(|h| h.to_string()).collect(), style)
    }

    /// Aligns these columns to the right (figures).
    pub fn right(&mut self, cols: &[usize]) {
        for &c in cols {
            if let Some(col) = self.inner.column_mut(c) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
}

impl std::ops::Deref for Table {
    type Target = comfy_table::Table;
    fn deref(&self) -> &Self::Target {
        &self.inner
    }
}

impl std::ops::DerefMut for Table {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.inner
    }
}

/// The table's cells, header first, as text.
fn cells(t: &comfy_table::Table) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    if let Some(h) = t.header() {
        rows.push(h.cell_iter().map(|c| c.content()).collect());
    }
    rows.extend(t.row_iter().map(|r| r.cell_iter().map(|c| c.content()).collect()));
    rows
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.style {
            TableStyle::Box => write!(f, "{}", self.inner),
            TableStyle::Plain => {
                // Lines without the padding comfy-table leaves at both ends.
                let text = self.inner.to_string();
                let lines: Vec<&str> =
                    text.lines().map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end()).collect();
                f.write_str(&lines.join("\n"))
            }
            TableStyle::Markdown => {
                let rows = cells(&self.inner);
                // One line per row: a line break or tab in a label is a space
                // (docs/report.md), never markup.
                let cell = |s: &str| s.replace('|', "\\|").replace(['\n', '\r', '\t'], " ");
                for (i, row) in rows.iter().enumerate() {
                    let line: Vec<String> = row.iter().map(|c| cell(c)).collect();
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    let line = format!("| {} |", line.join(" | "));
                    f.write_str(&report::safe::markdown(&line))?;
                    if i == 0 {
                        let rule = vec!["---"; row.len()].join(" | ");
                        write!(f, "\n| {rule} |")?;
                    }
                }
                Ok(())
            }
            TableStyle::Tsv => {
                let rows = cells(&self.inner);
                let cell = |s: &str| s.replace(['\t', '\n'], " ");
                let lines: Vec<String> = rows
                    .iter()
                    .map(|r| r.iter().map(|c| cell(c)).collect::<Vec<_>>().join("\t"))
                    .collect();
                f.write_str(&lines.join("\n"))
            }
        }
    }
}

/// Text written as the command line writes it: each piece on its own
/// line(s), a newline added where a piece does not end with one.
#[derive(Debug, Default)]
pub struct Lines(String);

impl Lines {
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Adds `piece`, then a newline unless it ends with one.
    pub fn push(&mut self, piece: impl fmt::Display) {
        let piece = piece.to_string();
        self.0.push_str(&piece);
        if !piece.ends_with('\n') {
            self.0.push('\n');
        }
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(style: TableStyle) -> String {
        let mut t = Table::with_header(&["node", "CPUs"], style);
        // Not wrapped, whatever terminal runs the test.
        t.set_content_arrangement(ContentArrangement::Disabled);
        t.add_row(vec!["0", "0-3 | 8"]);
        t.add_row(vec!["1", "4-7"]);
        t.to_string()
    }

    #[test]
    fn each_style_draws_its_own_way() {
        assert!(sample(TableStyle::Box).contains('┆'));
        let plain = sample(TableStyle::Plain);
        assert!(!plain.chars().any(|c| ('\u{2500}'..='\u{257f}').contains(&c)), "{plain}");
        assert_eq!(plain.lines().next().unwrap(), "node  CPUs");
        assert_eq!(
            sample(TableStyle::Markdown),
            "| node | CPUs |\n| --- | --- |\n| 0 | 0-3 \\| 8 |\n| 1 | 4-7 |"
        );
        assert_eq!(sample(TableStyle::Tsv), "node\tCPUs\n0\t0-3 | 8\n1\t4-7");
    }

    /// Guards issue 37 cause 7: a label `line1\nline2` showed as
    /// `line1&lt;br>line2` in `list --table markdown`.
    #[test]
    fn a_line_break_in_a_markdown_cell_is_a_space() {
        let mut t = Table::with_header(&["label"], TableStyle::Markdown);
        t.set_content_arrangement(ContentArrangement::Disabled);
        t.add_row(vec!["line1\nline2\tend"]);
        assert_eq!(t.to_string(), "| label |\n| --- |\n| line1 line2 end |");
    }

    #[test]
    fn pieces_end_with_one_newline_each() {
        let mut l = Lines::new();
        l.push("a");
        l.push("b\n");
        l.push(format_args!("{}", 3));
        assert_eq!(l.into_string(), "a\nb\n3\n");
    }
}
