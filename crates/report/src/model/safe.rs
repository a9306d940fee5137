//! Neutralising user and imported text (labels, hostnames, notes, command
//! lines) for the outputs that would otherwise interpret it: Markdown (raw
//! HTML, links), terminals (control characters) and spreadsheets (CSV
//! formulas). HTML has its own escaping in `svg::esc`.

use std::borrow::Cow;

/// Control characters (C0 but tab and line feed, DEL, C1) written visibly
/// as `\xHH` / `\u{HHHH}`, so that an imported label cannot move the
/// cursor, retitle the terminal or hide text. Everything else is kept.
pub fn visible(s: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `c` written as `\xHH` (below 256) or `\u{HHHH}`.
fn escape_into(out: &mut String, c: char) {
    if (c as u32) < 0x100 {
        out.push_str(&format!("\\x{:02x}", c as u32));
    } else {
        out.push_str(&format!("\\u{{{:04x}}}", c as u32));
    }
}

/// Text for one line (a title, a heading, a table cell, a list item):
/// line breaks and tabs become spaces, so an imported label cannot start
/// a Markdown heading or list, or break a table row; other control
/// characters are shown as by [`visible`].
pub fn one_line(s: &str) -> Cow<'_, str> {
    if !s.contains(['\n', '\r', '\t']) {
        return visible(s);
    }
    let flat: String =
        s.chars().map(|c| if matches!(c, '\n' | '\r' | '\t') { ' ' } else { c }).collect();
    Cow::Owned(visible(&flat).into_owned())
}

/// `c`, or as [`visible`] writes it when it is a control character other
/// than tab and line feed, for formats escaped character by character
/// (HTML, OpenMetrics label values).
pub fn visible_push(out: &mut String, c: char) {
    if c.is_control() && !matches!(c, '\n' | '\t') {
        escape_into(out, c);
    } else {
        out.push(c);
    }
}

/// A fence for a Markdown code block holding `body`: backticks, one more
/// than the longest run of backticks in it (at least three), so the body
/// cannot close the block early (CommonMark "fenced code blocks").
pub fn code_fence(body: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// The fence a line opens or closes, as (backtick count, rest of line):
/// up to three spaces, then three or more backticks (CommonMark).
fn fence_of(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let n = rest.len() - rest.trim_start_matches('`').len();
    (n >= 3).then(|| (n, &rest[n..]))
}

/// Markdown with everything that could run or link neutralised, outside
/// fenced code blocks (whose text Markdown never interprets):
/// - `<` before a letter, `/`, `!` or `?` becomes `&lt;`: no raw HTML
///   (`<script>`, `<svg onload=...>`, comments) and no autolinks;
/// - `](` becomes `]\(` and `]:` becomes `\]:`: no inline link or image
///   and no link reference definition, so no `javascript:` target;
/// - control characters are shown as by [`visible`] (in code blocks too).
///
/// The report's own Markdown uses neither raw HTML nor links, so only
/// hostile text changes.
pub fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let line = visible(line);
        match (fence, fence_of(&line)) {
            (None, Some((n, info))) if !info.contains('`') => {
                fence = Some(n);
                out.push_str(&line);
            }
            (Some(open), Some((n, rest))) if n >= open && rest.trim().is_empty() => {
                fence = None;
                out.push_str(&line);
            }
            (Some(_), _) => out.push_str(&line),
            (None, _) => out.push_str(&inline(&line)),
        }
    }
    out
}

/// One line outside code blocks: raw HTML and links neutralised outside
/// code spans; a code span (a run of backticks closed by a run of the same
/// length on the line) keeps its text as typed, since Markdown shows a
/// code span's text literally (`<pmu state='on'/>` stays that, never
/// `&lt;pmu ...`).
fn inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let run = chars[i..].iter().take_while(|&&x| x == '`').count();
            if let Some(close) = closing_run(&chars, i + run, run) {
                out.extend(&chars[i..close + run]);
                i = close + run;
            } else {
                out.extend(&chars[i..i + run]);
                i += run;
            }
            continue;
        }
        let next = chars.get(i + 1).copied();
        match (c, next) {
            ('<', Some(n)) if n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?') => {
                out.push_str("&lt;")
            }
            (']', Some('(')) => {
                out.push_str("]\\(");
                i += 1;
            }
            (']', Some(':')) => out.push_str("\\]"),
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

/// Where a run of exactly `run` backticks starts at or after `from`: the
/// end of a code span opened by such a run (CommonMark).
fn closing_run(chars: &[char], from: usize, run: usize) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '`' {
            let n = chars[j..].iter().take_while(|&&x| x == '`').count();
            if n == run {
                return Some(j);
            }
            j += n;
        } else {
            j += 1;
        }
    }
    None
}

/// A CSV cell that a spreadsheet would run as a formula (it starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return) gets a leading `'`
/// (OWASP "CSV injection"); a cell that is a plain number (`-3.5`) is
/// left as it is, since no spreadsheet reads a number as a formula.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let risky = s.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && s.parse::<f64>().map_or(true, |v| !v.is_finite()) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// `s` with every control character written as an escape (`\n`, `\t`,
/// `\r`, `\x1b`).
pub fn escape_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// JSON `text` with DEL and C1 controls (which serde_json leaves as they
/// are, and can only be inside strings) written as `\u` escapes too, so
/// no control reaches a terminal: serde_json escapes C0 controls itself.
pub fn json_controls(text: &str) -> Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c as u32 >= 0x7f;
    if !text.contains(hidden) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if hidden(c) {
            safe.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            safe.push(c);
        }
    }
    Cow::Owned(safe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A code span shows its text as typed: the entity an escape would
    /// put there shows as `&lt;` to the reader. Outside spans, and in a
    /// backtick run that closes nothing, markup is still neutralised.
    #[test]
    fn code_spans_hold_the_raw_text() {
        assert_eq!(
            markdown("fix: `-cpu host,pmu=on or <pmu state='on'/>` then <b>x</b>\n"),
            "fix: `-cpu host,pmu=on or <pmu state='on'/>` then &lt;b>x&lt;/b>\n"
        );
        assert_eq!(markdown("``a ` <i> b`` <i>\n"), "``a ` <i> b`` &lt;i>\n");
        assert_eq!(markdown("a ` <script> no close\n"), "a ` &lt;script> no close\n");
        assert_eq!(markdown("`x`](javascript:y)\n"), "`x`]\\(javascript:y)\n");
    }

    #[test]
    fn controls_are_escaped_in_flag_values_and_json() {
        assert_eq!(escape_controls("a\n\tb\u{1b}[2J"), "a\\n\\tb\\x1b[2J");
        assert_eq!(json_controls("\"a\u{7f}b\u{85}\""), "\"a\\u007fb\\u0085\"");
        assert!(matches!(json_controls("{\"a\": 1}"), Cow::Borrowed(_)));
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(visible("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
        assert_eq!(visible("a\tb\nc"), "a\tb\nc");
        assert_eq!(visible("\u{9b}31m"), "\\x9b31m");
        assert!(matches!(visible("plain ünïcode"), Cow::Borrowed(_)));
    }

    #[test]
    fn one_line_flattens_breaks_and_shows_controls() {
        assert_eq!(one_line("evil\n# Injected\r\tx\x1b[31m"), "evil # Injected  x\\x1b[31m");
        assert!(matches!(one_line("plain"), Cow::Borrowed(_)));
        let mut s = String::new();
        for c in "a\x07\nb\r".chars() {
            visible_push(&mut s, c);
        }
        assert_eq!(s, "a\\x07\nb\\x0d");
    }

    #[test]
    fn markdown_loses_html_and_links_but_keeps_text() {
        let m = markdown("Run 1 (<script>alert(1)</script>) <svg onload=x> <!-- c -->\n");
        assert_eq!(m, "Run 1 (&lt;script>alert(1)&lt;/script>) &lt;svg onload=x> &lt;!-- c -->\n");
        assert_eq!(markdown("[x](javascript:alert(1))"), "[x]\\(javascript:alert(1))");
        assert_eq!(markdown("[x]: javascript:alert(1)"), "[x\\]: javascript:alert(1)");
        assert_eq!(markdown("<javascript:alert(1)>"), "&lt;javascript:alert(1)>");
        // what the report itself writes is unchanged
        let own = "| Usable GB/s (latency < 2x idle) | **12.5** | `run 1` |\n";
        assert_eq!(markdown(own), own);
    }

    #[test]
    fn fenced_code_is_left_alone_and_cannot_be_escaped_from() {
        let doc = "```text\nnumaprobe exec -- sh -c 'a <b'\n```\n<b>\n";
        assert_eq!(markdown(doc), "```text\nnumaprobe exec -- sh -c 'a <b'\n```\n&lt;b>\n");
        let body = "x\n```\n<script>";
        let f = code_fence(body);
        assert_eq!(f, "````");
        let doc = format!("{f}text\n{body}\n{f}\n<i>\n");
        assert!(markdown(&doc).ends_with("&lt;i>\n"), "{}", markdown(&doc));
    }

    #[test]
    fn formulas_get_a_quote_numbers_do_not() {
        for f in ["=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-1+1", "@SUM(A1)", "\tx", "\rx"] {
            assert_eq!(csv_cell(f), format!("'{f}"));
        }
        for ok in ["-3.5", "+2", "1e3", "label", ""] {
            assert_eq!(csv_cell(ok), ok);
        }
        assert_eq!(csv_cell("-inf"), "'-inf");
    }
}
