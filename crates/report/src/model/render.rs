//! Output formats behind one trait that returns bytes: Markdown, a single
//! self-contained HTML page with inline SVG charts, and plain text. All
//! three draw the same [`Document`], so their layout is shared.

use std::fmt::Write;

use crate::doc::{Align, Block, Document, Table};
use crate::glance::Glance;
use crate::safe::one_line;
use crate::svg;

/// A format a document can be written in.
pub trait Renderer {
    /// The document as the bytes of a file.
    fn render(&self, doc: &Document) -> Vec<u8>;
}

/// GitHub-flavoured Markdown. Charts are left out (their figures are in the
/// tables beside them).
pub struct Markdown;

/// One HTML file: inline CSS and SVG, no script, no network (a
/// Content-Security-Policy forbids fetching anything).
pub struct Html;

/// Plain text for terminals: headings underlined, tables padded.
pub struct Text;

fn md_cell(s: &str) -> String {
    crate::safe::one_line(s).replace('|', "\\|")
}

/// A table in Markdown (pipe table with alignment row).
pub fn md_table(t: &Table) -> String {
    let mut out = String::new();
    if let Some(c) = &t.caption {
        let _ = writeln!(out, "*{}*\n", md_cell(c));
    }
    let ncol = t.header.len();
    let _ = writeln!(
        out,
        "| {} |",
        t.header.iter().map(|h| md_cell(h)).collect::<Vec<_>>().join(" | ")
    );
    let seps: Vec<&str> = (0..ncol)
        .map(|i| match t.align.get(i) {
            Some(Align::Right) => "---:",
            _ => "---",
        })
        .collect();
    let _ = writeln!(out, "|{}|", seps.join("|"));
    for r in &t.rows {
        let cells: Vec<String> =
            (0..ncol).map(|i| md_cell(r.get(i).map(String::as_str).unwrap_or(""))).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// The at-a-glance box in Markdown: a two-column table, then the findings
/// with their severity in capitals.
pub fn md_glance(g: &Glance) -> String {
    let mut out = format!("**{}**\n\n| | |\n|---|---|\n", md_cell(g.heading()));
    for (k, v) in &g.rows {
        let _ = writeln!(out, "| **{}** | {} |", md_cell(k), md_cell(v));
    }
    if !g.findings.is_empty() {
        out.push('\n');
        for f in &g.findings {
            let _ = writeln!(out, "- **{}** {}", f.severity.to_uppercase(), one_line(&f.text));
        }
        if g.more_findings > 0 {
            let _ = writeln!(out, "- and {} more in the settings audit below", g.more_findings);
        }
    }
    out
}

/// The at-a-glance box in HTML: a definition grid, findings coloured by
/// severity.
pub fn html_glance(g: &Glance) -> String {
    let mut out = format!(
        "<section class=\"glance\"><h2 class=\"glance-title\">{}</h2><dl>",
        svg::esc(&one_line(g.heading()))
    );
    for (k, v) in &g.rows {
        let _ = write!(out, "<dt>{}</dt><dd>{}</dd>", svg::esc(k), inline(v));
    }
    out.push_str("</dl>");
    if !g.findings.is_empty() {
        out.push_str("<ul class=\"findings\">");
        for f in &g.findings {
            let _ = write!(
                out,
                "<li class=\"sev-{}\"><span class=\"sev\">{}</span> {}</li>",
                f.level,
                svg::esc(&f.severity),
                inline(&f.text)
            );
        }
        if g.more_findings > 0 {
            let _ = write!(
                out,
                "<li class=\"more\">and {} more in the settings audit below</li>",
                g.more_findings
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>\n");
    out
}

impl Renderer for Markdown {
    fn render(&self, doc: &Document) -> Vec<u8> {
        // Titles, headings, paragraphs and items on one line each: a line
        // break in a label (an import's) would start a heading or a list.
        let mut out = format!("# {}\n", one_line(&doc.title));
        for b in &doc.blocks {
            out.push('\n');
            match b {
                Block::Heading(l, t) => {
                    let hashes = "#".repeat(usize::from((*l).clamp(1, 6)));
                    let _ = writeln!(out, "{hashes} {}", one_line(t));
                }
                Block::Para(t) => {
                    let _ = writeln!(out, "{}", one_line(t));
                }
                Block::Callout(t) => {
                    let _ = writeln!(out, "> **{}**", one_line(t));
                }
                Block::List(items) => {
                    for i in items {
                        let _ = writeln!(out, "- {}", one_line(i));
                    }
                }
                Block::Table(t) => out.push_str(&md_table(t)),
                Block::Code(c) => {
                    let body = c.trim_end();
                    let fence = crate::safe::code_fence(body);
                    let _ = writeln!(out, "{fence}text\n{body}\n{fence}");
                }
                Block::Chart(_) => {
                    // Not drawn in Markdown; undo the blank line.
                    out.pop();
                }
                Block::Glance(g) => out.push_str(&md_glance(g)),
                Block::Details(summary, body) => {
                    let _ = writeln!(out, "- {}", one_line(summary));
                    for b in body {
                        let _ = writeln!(out, "  - {}", one_line(b));
                    }
                }
                Block::Fold(summary) => {
                    let _ = writeln!(out, "*{}*", one_line(summary));
                }
                Block::EndFold | Block::Multiples(_) | Block::Open(_) | Block::Close => {
                    out.pop();
                }
                Block::Tiles(tiles) => {
                    out.push_str("| | | |\n|---|---:|---|\n");
                    for t in tiles {
                        let _ = writeln!(
                            out,
                            "| **{}** | {} | {} |",
                            md_cell(&t.name),
                            md_cell(&t.value),
                            md_cell(&t.note)
                        );
                    }
                }
            }
        }
        // Labels, hostnames and command lines are the user's (or an
        // import's): no raw HTML, links or control characters get through.
        crate::safe::markdown(&out).into_bytes()
    }
}

const CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d1d1f; background: #f6f7f9; margin: 0; }
main { max-width: 1680px; margin: 0 auto; padding: 24px 40px 64px; background: #ffffff; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.4em; }
h2 { font-size: 1.35em; border-bottom: 2px solid #e3e6ea; padding-bottom: 4px; margin-top: 1.8em; }
h3 { font-size: 1.1em; margin-top: 1.4em; }
div.table-wrap { overflow-x: auto; max-width: 100%; margin: 0.6em 0 1.2em; }
table { border-collapse: collapse; font-size: 0.9em; }
caption { text-align: left; font-style: italic; color: #444; padding-bottom: 4px; }
th, td { border: 1px solid #d6d9de; padding: 4px 9px; vertical-align: top; }
th { background: #eef1f5; text-align: left; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
table.prose { width: 100%; }
table.prose td { overflow-wrap: anywhere; }
table.prose td.r { overflow-wrap: normal; }
table.prose td.r.id { white-space: nowrap; }
td.id, table.prose td.id { overflow-wrap: normal; word-break: keep-all; hyphens: none; }
code { font-size: 0.92em; background: #f0f2f5; padding: 0 3px; border-radius: 3px; }
tbody tr:nth-child(even) { background: #fafbfc; }
p.callout { background: #fff4d6; border-left: 5px solid #e0a800; padding: 10px 14px; font-weight: 600; }
pre { background: #f0f2f5; padding: 10px 12px; overflow-x: auto; border-radius: 4px; }
figure.chart-figure { margin: 1em 0 1.6em; overflow-x: auto; }
svg.chart { max-width: 100%; height: auto; font-family: inherit; border: 1px solid #e3e6ea; }
ul li { margin: 0.25em 0; }
section.glance { border: 1px solid #cfd6de; border-left: 6px solid #4e79a7; border-radius: 6px; background: #f7f9fc; padding: 8px 18px 12px; margin: 0.8em 0 1.4em; }
section.glance h2.glance-title { border: none; margin: 0.2em 0 0.4em; font-size: 1.15em; }
section.glance dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
section.glance dt { font-weight: 600; color: #333; }
section.glance dd { margin: 0; overflow-wrap: anywhere; }
ul.findings { list-style: none; padding: 0; margin: 10px 0 0; }
ul.findings li { padding: 3px 0; }
span.sev { display: inline-block; min-width: 5.5em; text-align: center; border-radius: 3px; padding: 1px 6px; margin-right: 6px; font-size: 0.85em; font-weight: 700; text-transform: uppercase; color: #ffffff; background: #6b7280; }
li.sev-critical span.sev { background: #b3261e; }
li.sev-warning span.sev { background: #b86e00; }
li.sev-info span.sev { background: #3b6ea5; }
li.more { color: #555; font-style: italic; }
td.verdict { font-weight: 700; text-align: center; white-space: nowrap; }
div.answer { display: grid; grid-template-columns: minmax(0, 1.15fr) minmax(0, 1fr); gap: 0 20px; align-items: start; }
div.answer div.table-wrap { margin-top: 0; }
div.answer.many { grid-template-columns: minmax(0, 1fr); }
div.answer.many svg.chart.forest { max-width: 900px; }
td.verdict-cell { font-variant-numeric: tabular-nums; text-align: right; }
div.answer table { font-size: 0.84em; }
div.answer th, div.answer td { padding: 3px 6px; }
div.answer figure.chart-figure { margin-top: 0; }
div.answer svg.chart { box-sizing: border-box; }
@media (max-width: 1100px) { div.answer, div.answer.many { grid-template-columns: 1fr; } }
td.v-better { background: #dcf2e3; color: #1b7f3b; }
td.v-worse { background: #fbe0de; color: #b3261e; }
td.v-same { background: #eceff3; color: #4a5563; }
td.v-undecided { background: #fdf0d5; color: #8a5200; }
details.fold { border: 1px solid #dfe3e8; border-radius: 6px; padding: 2px 14px; margin: 1em 0; }
details.fold > summary { cursor: pointer; font-weight: 600; padding: 6px 0; color: #2b4a6f; }
details.why { margin: 0.25em 0; }
details.why > summary { cursor: pointer; }
details.why p { margin: 0.3em 0 0.3em 1.4em; color: #333; }
details.long { margin: 0.5em 0 1em; }
details.long > summary { cursor: pointer; color: #2b4a6f; }
div.multiples { display: grid; grid-template-columns: repeat(auto-fill, minmax(400px, 1fr)); gap: 6px 16px; }
div.multiples figure.chart-figure { margin: 0.4em 0; }
div.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 10px; margin: 0.8em 0 1.2em; }
div.tile { border: 1px solid #cfd6de; border-top: 4px solid #4e79a7; border-radius: 6px; padding: 8px 12px; background: #f7f9fc; }
div.tile-name { font-size: 0.85em; color: #333; font-weight: 600; }
div.tile-value { font-size: 1.7em; font-weight: 700; font-variant-numeric: tabular-nums; margin: 2px 0; }
div.tile-note { font-size: 0.8em; color: #555; }
@page { size: A4; margin: 12mm; }
@media print {
  body { background: #ffffff; font-size: 9.5pt; }
  main { max-width: none; padding: 0; }
  h2 { margin-top: 1em; break-after: avoid; }
  h3 { break-after: avoid; }
  figure.chart-figure, div.tile, section.glance, tr, details.why { break-inside: avoid; }
  div.multiples { grid-template-columns: repeat(3, 1fr); }
  div.answer, div.answer.many { grid-template-columns: 1fr; }
  svg.chart { max-height: 7.5cm; width: auto; max-width: 100%; }
  main > figure.chart-figure { display: inline-block; width: 49%; vertical-align: top; margin: 0.2em 0; }
  div.table-wrap { overflow: visible; }
  details.fold { border: none; padding: 0; margin: 0.3em 0; }
  details.fold > summary { font-weight: 400; font-style: italic; color: #555; }
  details.fold > summary::after { content: " (folded: open it on screen to print it)"; }
  details.fold[open] > summary::after { content: ""; }
}
"#;

/// Tables longer than this many rows are folded in HTML (unless they hold
/// sentences).
const LONG_TABLE: usize = 12;

/// Text for HTML: escaped, then the inline Markdown the report's own
/// sentences use turned into markup (`` `code` `` into `<code>`,
/// `**bold**` into `<strong>`), so no backtick or asterisk pair shows.
/// Markup is only added between pairs; an unpaired mark stays as typed.
pub fn inline(text: &str) -> String {
    let e = svg::esc(text);
    let e = pairs(&e, "`", "<code>", "</code>");
    pairs(&e, "**", "<strong>", "</strong>")
}

fn pairs(s: &str, mark: &str, open: &str, close: &str) -> String {
    let parts: Vec<&str> = s.split(mark).collect();
    if parts.len() < 3 {
        return s.to_string();
    }
    let mut out = String::new();
    let paired = (parts.len() - 1) / 2 * 2;
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            if i <= paired {
                out.push_str(if i % 2 == 1 { open } else { close });
            } else {
                out.push_str(mark);
            }
        }
        out.push_str(p);
    }
    out
}

/// Tables with sentences in their cells (the audit's found, why and fix)
/// wrap them anywhere, so that every column fits the page without a
/// horizontal scrollbar; numeric tables keep their figures whole.
fn prose(t: &Table) -> bool {
    t.rows.iter().any(|r| r.iter().any(|c| c.chars().count() > 60 && c.contains(' ')))
        && t.header.len() <= 8
}

/// The verdict a study's cell shows: the cell is a verdict (`better`), or
/// a figure, a change and a verdict (`585 +6.4% better`), either followed
/// by `(disturbed inputs)`.
fn verdict_of_cell(c: &str) -> Option<&'static str> {
    let c = c.strip_suffix(" (disturbed inputs)").unwrap_or(c);
    let words: Vec<&str> = c.split_whitespace().collect();
    let v = match *words.last()? {
        "better" => "better",
        "worse" => "worse",
        "same" => "same",
        "undecided" => "undecided",
        _ => return None,
    };
    let change = |w: &str| {
        w.strip_suffix('%').is_some_and(|n| n.trim_start_matches(['+', '-']).parse::<f64>().is_ok())
    };
    match words.len() {
        1 => Some(v),
        n if n >= 3 && change(words[n - 2]) => Some(v),
        _ => None,
    }
}

pub fn html_table(t: &Table) -> String {
    let cls = |i: usize| if t.align.get(i) == Some(&Align::Right) { " class=\"r\"" } else { "" };
    let mut out = String::from(if prose(t) {
        "<div class=\"table-wrap\"><table class=\"prose\">"
    } else {
        "<div class=\"table-wrap\"><table>"
    });
    if let Some(c) = &t.caption {
        let _ = write!(out, "<caption>{}</caption>", svg::esc(c));
    }
    out.push_str("<thead><tr>");
    for (i, h) in t.header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", cls(i), svg::esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        out.push_str("<tr>");
        for i in 0..t.header.len() {
            let c = r.get(i).map(String::as_str).unwrap_or("");
            // A verdict alone in its cell is coloured (the study's table),
            // and so is a compared group's cell that ends with one
            // (`585 +6.4% better`).
            if let Some(v) = verdict_of_cell(c) {
                let cl = if matches!(c, "better" | "worse" | "same" | "undecided") {
                    "verdict"
                } else {
                    "verdict-cell"
                };
                let _ = write!(out, "<td class=\"{cl} v-{v}\">{}</td>", svg::esc(c));
                continue;
            }
            // An identifier (one token: a setting, a path, a device) is
            // never broken inside a word.
            if !c.is_empty() && !c.contains(char::is_whitespace) && c.chars().count() <= 48 {
                let cl = if t.align.get(i) == Some(&Align::Right) { "r id" } else { "id" };
                let _ = write!(out, "<td class=\"{cl}\">{}</td>", inline(c));
                continue;
            }
            let _ = write!(out, "<td{}>{}</td>", cls(i), inline(c));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

impl Renderer for Html {
    fn render(&self, doc: &Document) -> Vec<u8> {
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"numaprobe\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n",
            svg::esc(&one_line(&doc.title)),
            svg::esc(&one_line(&doc.title))
        );
        let mut charts = 0;
        for b in &doc.blocks {
            match b {
                Block::Heading(l, t) => {
                    let l = (*l).clamp(1, 6);
                    let _ = writeln!(out, "<h{l}>{}</h{l}>", svg::esc(&one_line(t)));
                }
                // How a figure was measured is folded: the figures first.
                Block::Para(t) if t.starts_with("Method") => {
                    let _ = writeln!(
                        out,
                        "<details class=\"why\"><summary>Method</summary><p>{}</p></details>",
                        inline(t)
                    );
                }
                Block::Para(t) => {
                    let _ = writeln!(out, "<p>{}</p>", inline(t));
                }
                Block::Callout(t) => {
                    let _ = writeln!(out, "<p class=\"callout\">{}</p>", inline(t));
                }
                Block::List(items) => {
                    out.push_str("<ul>");
                    for i in items {
                        let _ = write!(out, "<li>{}</li>", inline(i));
                    }
                    out.push_str("</ul>\n");
                }
                // A long table of figures (a sweep's sizes, raw results)
                // is folded under a line that says what it holds; tables of
                // sentences (the audit) stay open.
                Block::Table(t) if t.rows.len() > LONG_TABLE && !prose(t) && !t.never_fold => {
                    let what = t.caption.clone().unwrap_or_else(|| t.header.join(", "));
                    let _ = write!(
                        out,
                        "<details class=\"long\"><summary>{} ({} rows)</summary>",
                        svg::esc(&crate::safe::one_line(&what)),
                        t.rows.len()
                    );
                    out.push_str(&html_table(t));
                    out.push_str("</details>\n");
                }
                Block::Table(t) => out.push_str(&html_table(t)),
                Block::Code(c) => {
                    let _ = writeln!(out, "<pre><code>{}</code></pre>", svg::esc(c.trim_end()));
                }
                Block::Chart(c) => {
                    let _ = writeln!(
                        out,
                        "<figure class=\"chart-figure\">{}</figure>",
                        svg::render(c, charts)
                    );
                    charts += 1;
                }
                Block::Glance(g) => out.push_str(&html_glance(g)),
                Block::Details(summary, body) => {
                    let _ = write!(
                        out,
                        "<details class=\"why\"><summary>{}</summary>",
                        inline(summary)
                    );
                    for b in body {
                        let _ = write!(out, "<p>{}</p>", inline(b));
                    }
                    out.push_str("</details>\n");
                }
                Block::Fold(summary) => {
                    let _ = writeln!(
                        out,
                        "<details class=\"fold\"><summary>{}</summary>",
                        inline(summary)
                    );
                }
                Block::EndFold => out.push_str("</details>\n"),
                Block::Open(class) => {
                    let _ = writeln!(out, "<div class=\"{}\">", svg::esc(class));
                }
                Block::Close => out.push_str("</div>\n"),
                Block::Multiples(cs) => {
                    out.push_str("<div class=\"multiples\">");
                    for c in cs {
                        let _ = write!(
                            out,
                            "<figure class=\"chart-figure\">{}</figure>",
                            svg::render(c, charts)
                        );
                        charts += 1;
                    }
                    out.push_str("</div>\n");
                }
                Block::Tiles(tiles) => {
                    out.push_str("<div class=\"tiles\">");
                    for t in tiles {
                        let _ = write!(
                            out,
                            "<div class=\"tile\"><div class=\"tile-name\">{}</div><div class=\"tile-value\">{}</div><div class=\"tile-note\">{}</div></div>",
                            svg::esc(&t.name),
                            svg::esc(&t.value),
                            inline(&t.note)
                        );
                    }
                    out.push_str("</div>\n");
                }
            }
        }
        out.push_str("</main>\n</body>\n</html>\n");
        out.into_bytes()
    }
}

impl Renderer for Text {
    fn render(&self, doc: &Document) -> Vec<u8> {
        let mut out = String::new();
        if !doc.title.is_empty() {
            let title = one_line(&doc.title);
            let _ = writeln!(out, "{title}\n{}", "=".repeat(title.chars().count()));
        }
        for b in &doc.blocks {
            if !out.is_empty() {
                out.push('\n');
            }
            match b {
                Block::Heading(_, t) => {
                    let t = one_line(t);
                    let _ = writeln!(out, "{t}\n{}", "-".repeat(t.chars().count()));
                }
                Block::Para(t) => {
                    let _ = writeln!(out, "{t}");
                }
                Block::Callout(t) => {
                    let _ = writeln!(out, "!! {t}");
                }
                Block::List(items) => {
                    for i in items {
                        let _ = writeln!(out, "* {i}");
                    }
                }
                Block::Table(t) => out.push_str(&t.to_text()),
                Block::Code(c) => {
                    for l in c.lines() {
                        let _ = writeln!(out, "    {l}");
                    }
                }
                Block::Chart(_) => {
                    out.pop();
                }
                Block::Glance(g) => {
                    let _ = writeln!(out, "At a glance");
                    let w = g.rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
                    for (k, v) in &g.rows {
                        let _ = writeln!(out, "  {k:<w$}  {v}");
                    }
                    for f in &g.findings {
                        let _ = writeln!(out, "  [{}] {}", f.severity.to_uppercase(), f.text);
                    }
                }
                Block::Details(summary, body) => {
                    let _ = writeln!(out, "* {summary}");
                    for b in body {
                        let _ = writeln!(out, "    {b}");
                    }
                }
                Block::Fold(summary) => {
                    let _ = writeln!(out, "{summary}");
                }
                Block::EndFold | Block::Multiples(_) | Block::Open(_) | Block::Close => {
                    out.pop();
                }
                Block::Tiles(tiles) => {
                    let w = tiles.iter().map(|t| t.name.chars().count()).max().unwrap_or(0);
                    for t in tiles {
                        let _ = writeln!(out, "  {:<w$}  {}  {}", t.name, t.value, t.note);
                    }
                }
            }
        }
        // For a terminal: no control character from a label gets through.
        crate::safe::visible(&out).into_owned().into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Axis, Chart, Series, XyChart};

    fn doc() -> Document {
        let mut d = Document::new("Report <1>");
        d.h(2, "Results");
        d.p("a | b & c");
        let mut t = Table::with_header(&["Node", "GB/s"]);
        t.push(vec!["0|1".into(), "9.5".into()]);
        d.table(t);
        d.chart(Chart::Xy(XyChart {
            title: "bw".into(),
            x: Axis::linear("threads"),
            y: Axis::linear("bandwidth (GB/s)"),
            series: vec![Series::line("triad", vec![(1.0, 10.0), (2.0, 19.0)])],
            markers: vec![],
            ..XyChart::default()
        }));
        d.code("numaprobe run");
        d
    }

    #[test]
    fn markdown_escapes_pipes_and_skips_charts() {
        let md = String::from_utf8(Markdown.render(&doc())).unwrap();
        assert_eq!(
            md,
            "# Report <1>\n\n## Results\n\na | b & c\n\n| Node | GB/s |\n|---|---:|\n| 0\\|1 | 9.5 |\n\n```text\nnumaprobe run\n```\n"
        );
    }

    #[test]
    fn html_is_self_contained_and_escaped() {
        let html = String::from_utf8(Html.render(&doc())).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<title>Report &lt;1&gt;</title>"));
        assert!(html.contains("<p>a | b &amp; c</p>"));
        assert_eq!(html.matches("<svg class=\"chart").count(), 1);
        assert!(!html.contains("<script"));
        assert!(
            !html.contains("http://")
                || html.matches("http://").count()
                    == html.matches("http://www.w3.org/2000/svg").count()
        );
        assert!(!html.contains("https://"));
    }
}
