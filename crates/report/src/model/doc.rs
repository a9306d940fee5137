//! The document model every report format renders: headings, paragraphs,
//! lists, tables, code and charts. Reports are built once as a
//! [`Document`]; Markdown, HTML and plain text share its layout and differ
//! only in how they draw each block.

use crate::chart::Chart;

/// Column alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// A table of text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub caption: Option<String>,
    pub header: Vec<String>,
    pub align: Vec<Align>,
    pub rows: Vec<Vec<String>>,
    /// Shown whatever its length (the answer's table): an HTML report
    /// folds other long tables of figures.
    pub never_fold: bool,
}

impl Table {
    /// A table whose first column is left-aligned and the others right
    /// (labels then figures).
    pub fn new(header: Vec<String>) -> Table {
        let align =
            (0..header.len()).map(|i| if i == 0 { Align::Left } else { Align::Right }).collect();
        Table { caption: None, header, align, rows: Vec::new(), never_fold: false }
    }

    /// Builds from string slices.
    pub fn with_header(header: &[&str]) -> Table {
        Table::new(header.iter().map(|s| s.to_string()).collect())
    }

    pub fn caption(mut self, c: impl Into<String>) -> Table {
        self.caption = Some(c.into());
        self
    }

    /// Aligns right the columns (after the first) whose cells all start
    /// with a number (`101.2`, `96.2% (flagged)`, `1 GiB`, `-`), left the
    /// others.
    pub fn auto_align(mut self) -> Table {
        let numeric = |c: &str| {
            let first = c.split_whitespace().next().unwrap_or("");
            let first = first.trim_end_matches(['%', 'x', ',']);
            c == "-" || c.is_empty() || first.parse::<f64>().is_ok()
        };
        self.align = (0..self.header.len())
            .map(|i| {
                if i > 0
                    && self.rows.iter().all(|r| numeric(r.get(i).map(String::as_str).unwrap_or("")))
                {
                    Align::Right
                } else {
                    Align::Left
                }
            })
            .collect();
        self
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn align_of(&self, col: usize) -> Align {
        self.align.get(col).copied().unwrap_or(Align::Left)
    }

    /// The table as plain text: columns padded with two spaces between
    /// them, the header underlined, the caption above.
    pub fn to_text(&self) -> String {
        let ncol = self.header.len().max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let width = |s: &str| s.chars().count();
        let mut w = vec![0; ncol];
        for row in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in row.iter().enumerate() {
                w[i] = w[i].max(width(c));
            }
        }
        let line = |row: &[String]| {
            let mut s = String::new();
            for (i, wi) in w.iter().enumerate() {
                let c = row.get(i).map(String::as_str).unwrap_or("");
                let pad = " ".repeat(wi - width(c));
                if i > 0 {
                    s.push_str("  ");
                }
                match self.align_of(i) {
                    Align::Left => {
                        s.push_str(c);
                        s.push_str(&pad);
                    }
                    Align::Right => {
                        s.push_str(&pad);
                        s.push_str(c);
                    }
                }
            }
            s.trim_end().to_string()
        };
        let mut out = String::new();
        if let Some(c) = &self.caption {
            out.push_str(c);
            out.push('\n');
        }
        out.push_str(&line(&self.header));
        out.push('\n');
        let total = w.iter().sum::<usize>() + 2 * ncol.saturating_sub(1);
        out.push_str(&"-".repeat(total));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }
}

/// A piece of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A heading of level 1 (the title) to 4.
    Heading(u8, String),
    Para(String),
    /// A paragraph to stand out (a finding the reader must not miss).
    Callout(String),
    List(Vec<String>),
    Table(Table),
    /// Preformatted text (commands).
    Code(String),
    Chart(Chart),
    /// The at-a-glance box at the top of a run's report.
    Glance(Glance),
    /// A line the reader sees and its reasoning folded under it (HTML
    /// `<details>`; Markdown and text write both).
    Details(String, Vec<String>),
    /// The blocks up to the matching [`Block::EndFold`] folded under this
    /// summary (HTML `<details>`, closed, so not printed either; Markdown
    /// and text write them as they are).
    Fold(String),
    EndFold,
    /// The blocks up to the matching [`Block::Close`] in a box of this
    /// class (HTML `<div class>`: the answer's table and forest plot side
    /// by side); other formats write the blocks as they are.
    Open(String),
    Close,
    /// Charts drawn side by side, each smaller (small multiples).
    Multiples(Vec<Chart>),
    /// Headline figures as tiles: `(name, value with unit, note)`.
    Tiles(Vec<Tile>),
}

/// A headline tile: what it is, the figure with its unit, and a note
/// (what it was measured on, its spread, a flag).
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    pub name: String,
    pub value: String,
    pub note: String,
}

/// The at-a-glance box of a run's report (drawn by `glance`):
/// labelled facts, then the worst findings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Glance {
    /// The box's heading; empty: `At a glance`.
    pub title: String,
    /// `(label, value)`, in order.
    pub rows: Vec<(String, String)>,
    /// The worst findings, worst first.
    pub findings: Vec<GlanceFinding>,
    /// Findings not listed (beyond the box's few, `glance::TOP_FINDINGS`).
    pub more_findings: usize,
}

impl Glance {
    /// The heading to write.
    pub fn heading(&self) -> &str {
        if self.title.is_empty() {
            "At a glance"
        } else {
            &self.title
        }
    }
}

/// A finding as the box shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct GlanceFinding {
    /// As the audit wrote it (`warn`, `critical`, ...).
    pub severity: String,
    /// The colour class: `critical`, `warning`, `info` or `unknown`.
    pub level: &'static str,
    pub text: String,
}

/// A report: a title and its blocks.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Document {
    pub title: String,
    pub blocks: Vec<Block>,
}

impl Document {
    pub fn new(title: impl Into<String>) -> Document {
        Document { title: title.into(), blocks: Vec::new() }
    }

    pub fn h(&mut self, level: u8, text: impl Into<String>) {
        self.blocks.push(Block::Heading(level, text.into()));
    }

    pub fn p(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Para(text.into()));
    }

    pub fn callout(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Callout(text.into()));
    }

    pub fn list(&mut self, items: Vec<String>) {
        if !items.is_empty() {
            self.blocks.push(Block::List(items));
        }
    }

    /// Adds a table unless it has no rows, aligned by its content
    /// ([`Table::auto_align`]).
    pub fn table(&mut self, t: Table) {
        if !t.is_empty() {
            self.blocks.push(Block::Table(t.auto_align()));
        }
    }

    pub fn code(&mut self, text: impl Into<String>) {
        self.blocks.push(Block::Code(text.into()));
    }

    pub fn glance(&mut self, g: Glance) {
        self.blocks.push(Block::Glance(g));
    }

    pub fn chart(&mut self, c: Chart) {
        self.blocks.push(Block::Chart(c));
    }

    /// Charts side by side (small multiples); none: nothing added.
    pub fn multiples(&mut self, c: Vec<Chart>) {
        if !c.is_empty() {
            self.blocks.push(Block::Multiples(c));
        }
    }

    pub fn details(&mut self, summary: impl Into<String>, body: Vec<String>) {
        self.blocks.push(Block::Details(summary.into(), body));
    }

    /// Folds the blocks `f` adds under `summary`.
    pub fn fold(&mut self, summary: impl Into<String>, f: impl FnOnce(&mut Document)) {
        self.blocks.push(Block::Fold(summary.into()));
        f(self);
        self.blocks.push(Block::EndFold);
    }

    /// The blocks `f` adds in a box of `class` (HTML only).
    pub fn boxed(&mut self, class: &str, f: impl FnOnce(&mut Document)) {
        self.blocks.push(Block::Open(class.into()));
        f(self);
        self.blocks.push(Block::Close);
    }

    pub fn tiles(&mut self, t: Vec<Tile>) {
        if !t.is_empty() {
            self.blocks.push(Block::Tiles(t));
        }
    }

    /// Number of charts (what the HTML draws as `<svg class="chart">`).
    pub fn chart_count(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| match b {
                Block::Chart(_) => 1,
                Block::Multiples(c) => c.len(),
                _ => 0,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_tables_align_columns() {
        let mut t = Table::with_header(&["Node", "GB/s"]).caption("Local bandwidth");
        t.push(vec!["0".into(), "101.2".into()]);
        t.push(vec!["node 1".into(), "9.5".into()]);
        assert_eq!(
            t.to_text(),
            "Local bandwidth\nNode     GB/s\n-------------\n0       101.2\nnode 1    9.5\n"
        );
    }
}
