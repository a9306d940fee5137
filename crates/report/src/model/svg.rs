//! Charts drawn as inline SVG: no script, no fonts or files fetched; hover
//! titles give exact values. Every chart is one `<svg class="chart">`.

use std::fmt::Write;

use crate::chart::{Axis, BarChart, Chart, Heatmap, Scale, XyChart};
use topo::units::binary_size as bytes;

use crate::fmt::plain;

/// Series colours (Tableau 10: distinct, colour-blind aware).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Viridis stops for heatmaps (perceptually uniform).
const VIRIDIS: [(u8, u8, u8); 5] =
    [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)];

/// Escapes text for XML content and attributes; control characters (an
/// imported label's ESC or BEL) are written visibly (`\x1b`), never raw.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => crate::safe::visible_push(&mut o, c),
        }
    }
    o
}

/// Draws a chart; `id` makes its element ids unique in the page.
pub fn render(chart: &Chart, id: usize) -> String {
    match chart {
        Chart::Heatmap(h) => heatmap(h, id),
        Chart::Xy(x) => xy(x, id),
        Chart::Bars(b) => bars(b, id),
        Chart::Forest(f) => forest(f, id),
    }
}

/// The colour of a verdict: better green, worse red, same grey, undecided
/// amber (the table's verdict cells use the same).
pub fn verdict_colour(v: &str) -> &'static str {
    match v {
        "better" => "#1b7f3b",
        "worse" => "#b3261e",
        "same" => "#5f6b7a",
        _ => "#a86400",
    }
}

/// The change axis of a forest plot: its half-width, percent, and the rows
/// whose change lies beyond it (drawn at the edge, their value written).
/// The axis fits the changes that matter: every change, the margin and
/// the noise floors, except the few largest (a quarter of the rows at
/// most) when they stand more than three times above all the others (and
/// four margins wide): they would squeeze the others into a few pixels
/// (+191% beside changes of 5-15%). An interval never widens it past
/// twice the changes' extent (one wide interval of too few runs would set
/// the axis to ±600%): its end is clipped and written.
pub fn forest_extent(rows: &[crate::chart::ForestRow], margin_pct: f64) -> (f64, Vec<usize>) {
    let mut by_size: Vec<(f64, usize)> =
        rows.iter().enumerate().map(|(i, r)| (r.change_pct.abs(), i)).collect();
    by_size.sort_by(|a, b| b.0.total_cmp(&a.0));
    let most = (rows.len() / 4).max(1);
    let gap = (0..by_size.len().saturating_sub(1).min(most)).find(|&i| {
        by_size[i].0 > 3.0 * by_size[i + 1].0.max(margin_pct) && by_size[i].0 > 4.0 * margin_pct
    });
    let mut outliers = Vec::new();
    if let Some(i) = gap {
        outliers = by_size.drain(..=i).map(|(_, k)| k).collect();
    }
    let mut ext = margin_pct.abs().max(1.0) * 1.5;
    ext = ext.max(by_size.first().map_or(0.0, |x| x.0));
    for r in rows {
        ext = ext.max(r.floor_pct.unwrap_or(0.0));
    }
    let changes = ext;
    for (i, r) in rows.iter().enumerate() {
        if outliers.contains(&i) {
            continue;
        }
        if let Some((lo, hi)) = r.interval {
            ext = ext.max(lo.abs().min(2.0 * changes)).max(hi.abs().min(2.0 * changes));
        }
    }
    (ext, outliers)
}

/// `s` on one line of at most `px` at `font` px, shortened after a whole
/// word (`…`), never inside one (but a single word longer than the line).
pub fn short_words(s: &str, px: f64, font: f64) -> String {
    wrap_words(s, px, font, 1).concat()
}

/// `s` in lines of at most `px` at `font` px, broken between words; at
/// most `max_lines`, the last ending in `…` (after a whole word) when the
/// text goes on. A word longer than a line is the one thing cut.
pub fn wrap_words(s: &str, px: f64, font: f64, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut words = s.split_whitespace().peekable();
    while let Some(w) = words.next() {
        let cand = if cur.is_empty() { w.to_string() } else { format!("{cur} {w}") };
        if text_width(&cand, font) <= px {
            cur = cand;
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        if lines.len() == max_lines {
            break;
        }
        cur = if text_width(w, font) <= px { w.to_string() } else { fit(w, px, font) };
        if words.peek().is_none() {
            break;
        }
    }
    if !cur.is_empty() && lines.len() < max_lines {
        lines.push(cur);
    }
    let said: usize = lines.iter().map(|l| l.split_whitespace().count()).sum();
    if said < s.split_whitespace().count() {
        if let Some(last) = lines.last_mut() {
            while text_width(&format!("{last} …"), font) > px && last.contains(' ') {
                let cut = last.rfind(' ').unwrap_or(0);
                last.truncate(cut);
            }
            last.push_str(" …");
        }
    }
    lines
}

fn forest(f: &crate::chart::Forest, id: usize) -> String {
    let l = ForestLayout::of(f);
    let mut out = String::new();
    open(&mut out, l.w, l.h, id, &f.title, "forest");
    out.push_str(&l.legend_svg);
    forest_axis(&mut out, f, &l);
    let mut y0 = l.top;
    for (i, r) in f.rows.iter().enumerate() {
        let row_h = l.heights[i];
        let y = y0 + row_h / 2.0;
        y0 += row_h;
        forest_row(&mut out, r, &l.labels[i], &l, y, row_h);
    }
    let (top, plot_bottom) = (l.top, l.plot_bottom);
    let x0 = l.xm.to_px(0.0);
    let _ = write!(
        out,
        r##"<line class="zero" x1="{x0:.1}" x2="{x0:.1}" y1="{top:.1}" y2="{plot_bottom:.1}" stroke="#222"/>"##
    );
    out.push_str("</svg>");
    out
}

/// Where a forest plot's parts go (px), its legend and its rows' labels.
struct ForestLayout {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    plot_bottom: f64,
    label_font: f64,
    verdict_font: f64,
    dot_r: f64,
    line_h: f64,
    cap: f64,
    band_h: f64,
    /// Each row's label, wrapped between words, and its height.
    labels: Vec<Vec<String>>,
    heights: Vec<f64>,
    legend_svg: String,
    clipped_note: bool,
    ticks: Vec<f64>,
    d0: f64,
    d1: f64,
    xm: Map,
}

impl ForestLayout {
    fn of(f: &crate::chart::Forest) -> ForestLayout {
        // Many rows (three groups or more) get a wider plot: it sits under the
        // table, not beside it.
        let wide = f.rows.len() > 16;
        let w = if wide { 860.0 } else { 600.0 };
        let (left, right) = if wide { (360.0, 130.0) } else { (230.0, 120.0) };
        let (label_font, verdict_font, dot_r) = (12.0, 11.0, 5.0);
        let line_h = label_font + 2.0;
        let base_h: f64 = 21.0;
        // Each label wrapped between words, never cut inside one.
        let labels: Vec<Vec<String>> =
            f.rows.iter().map(|r| wrap_words(&r.label, left - 16.0, label_font, 3)).collect();
        let heights: Vec<f64> =
            labels.iter().map(|l| base_h.max(l.len() as f64 * line_h + 5.0)).collect();
        let cap = 5.0;
        let band_h: f64 = 16.0;
        let items = [
            LegendItem { name: "margin", colour: "#4e79a7", swatch: Swatch::Band },
            LegendItem { name: "noise floor", colour: "#e8a33d", swatch: Swatch::Band },
            LegendItem { name: "change, interval", colour: "#333333", swatch: Swatch::ErrorBar },
        ];
        let mut legend_svg = String::new();
        let top = legend(&mut legend_svg, &items, 20.0, w - 20.0, 34.0) + 8.0;
        let plot_bottom = top + heights.iter().sum::<f64>().max(base_h);
        let (ext, outliers) = forest_extent(&f.rows, f.margin_pct);
        let clipped_note = !outliers.is_empty()
            || f.rows
                .iter()
                .any(|r| r.interval.is_some_and(|(lo, hi)| lo < -ext * 1.08 || hi > ext * 1.08));
        let h = plot_bottom + if clipped_note { 62.0 } else { 46.0 };
        let ticks = nice_ticks(-ext * 1.08, ext * 1.08, 6);
        let (d0, d1) = (ticks[0].min(-ext), ticks[ticks.len() - 1].max(ext));
        let xm = Map { scale: Scale::Linear, d0, d1, p0: left, p1: w - right };
        ForestLayout {
            w,
            h,
            left,
            right,
            top,
            plot_bottom,
            label_font,
            verdict_font,
            dot_r,
            line_h,
            cap,
            band_h,
            labels,
            heights,
            legend_svg,
            clipped_note,
            ticks,
            d0,
            d1,
            xm,
        }
    }

    /// A value's x, drawn at the axis's edge when past it.
    fn px(&self, v: f64) -> f64 {
        self.xm.to_px(v.clamp(self.d0, self.d1))
    }
}

/// The forest plot's margin band, axis, ticks and labels.
fn forest_axis(out: &mut String, f: &crate::chart::Forest, l: &ForestLayout) {
    let (top, plot_bottom) = (l.top, l.plot_bottom);
    // the margin band, the whole height
    let (m0, m1) = (l.px(-f.margin_pct), l.px(f.margin_pct));
    let _ = write!(
        out,
        r##"<rect class="margin-band" x="{m0:.1}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="#4e79a7" fill-opacity="0.14"><title>{}</title></rect>"##,
        m1 - m0,
        l.plot_bottom - l.top,
        esc(&format!("equivalence margin ±{}%", f.margin_pct))
    );
    out.push_str(r##"<g class="axis" font-size="11" fill="#333">"##);
    for t in &l.ticks {
        let x = l.xm.to_px(*t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top:.1}" y2="{plot_bottom:.1}" stroke="#e3e3e3"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            l.plot_bottom + 16.0,
            esc(&crate::fmt::plain(*t))
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text></g>"#,
        (l.left + l.w - l.right) / 2.0,
        l.plot_bottom + 34.0,
        esc(&short_words(&f.x_label, l.w - 40.0, 13.0))
    );
    if l.clipped_note {
        let _ = write!(
            out,
            r##"<text class="clip-note" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#555">{}</text>"##,
            (l.left + l.w - l.right) / 2.0,
            l.plot_bottom + 52.0,
            esc("a change or interval past the axis is drawn at its edge (▶ ◀), its value written")
        );
    }
}

/// One row of a forest plot, centred at `y`: its noise floor, interval,
/// change, label lines and verdict.
fn forest_row(
    out: &mut String,
    r: &crate::chart::ForestRow,
    lines: &[String],
    l: &ForestLayout,
    y: f64,
    row_h: f64,
) {
    let (label_font, verdict_font, dot_r) = (l.label_font, l.verdict_font, l.dot_r);
    if let Some(fl) = r.floor_pct.filter(|v| *v > 0.0) {
        let (a, b) = (l.px(-fl), l.px(fl));
        let _ = write!(
            out,
            r##"<rect class="floor-band" x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#e8a33d" fill-opacity="0.35"><title>{}</title></rect>"##,
            y - l.band_h.min(row_h - 5.0) / 2.0,
            (b - a).max(1.0),
            l.band_h.min(row_h - 5.0),
            esc(&format!("noise floor ±{fl:.1}%"))
        );
    }
    let col = verdict_colour(&r.verdict);
    let title = match r.interval {
        Some((lo, hi)) => {
            format!("{}: {:+.1}% [{:+.1}%, {:+.1}%], {}", r.label, r.change_pct, lo, hi, r.verdict)
        }
        None => format!("{}: {:+.1}% (no interval), {}", r.label, r.change_pct, r.verdict),
    };
    let _ = write!(out, r#"<g class="forest-row"><title>{}</title>"#, esc(&title));
    let past = |v: f64| v < l.d0 || v > l.d1;
    if let Some((lo, hi)) = r.interval {
        let (a, b) = (l.px(lo), l.px(hi));
        let _ = write!(
            out,
            r##"<path stroke="#333" stroke-width="1.6" fill="none" d="M{a:.1} {y:.1}H{b:.1}{}{}"/>"##,
            if past(lo) {
                String::new()
            } else {
                format!("M{a:.1} {:.1}V{:.1}", y - l.cap, y + l.cap)
            },
            if past(hi) {
                String::new()
            } else {
                format!("M{b:.1} {:.1}V{:.1}", y - l.cap, y + l.cap)
            },
        );
        // an end past the axis: an arrow at the edge, its value written
        for (v, edge) in [(lo, a), (hi, b)] {
            if past(v) {
                let dir = if v > 0.0 { 1.0 } else { -1.0 };
                let _ = write!(
                    out,
                    r##"<path class="clipped" fill="#333" d="M{:.1} {y:.1}L{:.1} {:.1}L{:.1} {:.1}Z"/>"##,
                    edge + 5.0 * dir,
                    edge,
                    y - 4.0,
                    edge,
                    y + 4.0
                );
            }
        }
    }
    let cx = l.px(r.change_pct);
    if past(r.change_pct) {
        let dir = if r.change_pct > 0.0 { 1.0 } else { -1.0 };
        let _ = write!(
            out,
            r##"<path class="clipped" fill="{col}" d="M{:.1} {y:.1}L{:.1} {:.1}L{:.1} {:.1}Z"/><text x="{:.1}" y="{:.1}" text-anchor="{}" font-size="10" fill="{col}">{}</text>"##,
            cx + 7.0 * dir,
            cx - 3.0 * dir,
            y - 6.0,
            cx - 3.0 * dir,
            y + 6.0,
            cx - 8.0 * dir,
            y - 7.0,
            if dir > 0.0 { "end" } else { "start" },
            esc(&format!("{:+.0}%", r.change_pct))
        );
    } else {
        let _ = write!(
            out,
            r##"<circle cx="{cx:.1}" cy="{y:.1}" r="{dot_r}" fill="{col}" stroke="#ffffff" stroke-width="1"/>"##,
        );
    }
    // the label's lines, each its own text (wrapped between words)
    let first = y - (lines.len() as f64 - 1.0) * l.line_h / 2.0 + l.label_font / 3.0;
    for (k, line) in lines.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text class="row-label" x="{:.1}" y="{:.1}" text-anchor="end" font-size="{label_font}">{}</text>"#,
            l.left - 8.0,
            first + k as f64 * l.line_h,
            esc(line)
        );
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="{verdict_font}" font-weight="600" fill="{col}">{}</text></g>"##,
        l.w - l.right + 8.0,
        y + l.verdict_font / 3.0,
        esc(&short_words(&r.verdict, l.right - 12.0, l.verdict_font))
    );
}

fn open(out: &mut String, w: f64, h: f64, id: usize, title: &str, kind: &str) {
    // A long title gets a smaller font rather than running off the chart.
    let font = (15.0 * (w - 16.0) / (text_width(title, 15.0) * 1.08).max(1.0)).clamp(9.0, 15.0);
    let _ = write!(
        out,
        r##"<svg class="chart {kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h:.0}" width="{w}" height="{h:.0}" role="img" aria-labelledby="chart{id}-title"><title id="chart{id}-title">{t}</title><rect x="0" y="0" width="{w}" height="{h:.0}" fill="#ffffff"/><text class="chart-title" x="{cx}" y="22" text-anchor="middle" font-size="{font:.1}" font-weight="600">{t}</text>"##,
        t = esc(title),
        cx = w / 2.0,
    );
}

/// Evenly spaced "nice" tick values (1, 2, 2.5 or 5 x 10^k) covering
/// `[lo, hi]`, about `target` of them.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo { (lo, hi) } else { (lo - 1.0, lo + 1.0) };
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).floor() * step;
    let last = (hi / step).ceil() * step;
    let n = (((last - first) / step).round() as usize).min(50);
    (0..=n)
        .map(|i| first + i as f64 * step)
        .map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t })
        .collect()
}

fn tick_text(v: f64, axis: &Axis) -> String {
    if !axis.names.is_empty() && v.fract() == 0.0 && v >= 1.0 {
        if let Some(n) = axis.names.get(v as usize - 1) {
            // shortened after a whole word, never inside one
            return wrap_words(n, 130.0, 11.0, 1).concat();
        }
    }
    if axis.bytes {
        return bytes(v.round().max(0.0) as u64);
    }
    if v.abs() >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if v.abs() < 0.1 {
        plain(round3(v))
    } else {
        plain((v * 100.0).round() / 100.0)
    }
}

/// Maps data values to pixels along one axis.
struct Map {
    scale: Scale,
    d0: f64,
    d1: f64,
    p0: f64,
    p1: f64,
}

impl Map {
    fn to_px(&self, v: f64) -> f64 {
        let (a, b, x) = match self.scale {
            Scale::Linear => (self.d0, self.d1, v),
            Scale::Log2 => (self.d0.log2(), self.d1.log2(), v.max(f64::MIN_POSITIVE).log2()),
            Scale::Log10 => (self.d0.log10(), self.d1.log10(), v.max(f64::MIN_POSITIVE).log10()),
        };
        let t = if b > a { (x - a) / (b - a) } else { 0.5 };
        self.p0 + t * (self.p1 - self.p0)
    }
}

/// The domain and ticks of an axis holding `values`.
fn axis_ticks(axis: &Axis, values: &[f64], target: usize) -> (f64, f64, Vec<f64>) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) =
        finite.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(*v), b.max(*v)));
    if finite.is_empty() {
        (lo, hi) = (0.0, 1.0);
    }
    match axis.scale {
        Scale::Log2 => {
            let lo_e = lo.max(1.0).log2().floor() as i32;
            let mut hi_e = hi.max(1.0).log2().ceil() as i32;
            if hi_e <= lo_e {
                hi_e = lo_e + 1;
            }
            let span = (hi_e - lo_e) as usize;
            let every = span.div_ceil(target.max(1)).max(1);
            let ticks = (lo_e..=hi_e).step_by(every).map(|e| 2f64.powi(e)).collect();
            (2f64.powi(lo_e), 2f64.powi(hi_e), ticks)
        }
        Scale::Log10 => {
            let lo = if lo > 0.0 { lo } else { 1.0 };
            let hi = hi.max(lo);
            let lo_e = lo.log10().floor() as i32;
            let hi_e = (hi.log10().ceil() as i32).max(lo_e + 1);
            // 1, 2, 5 per decade over up to three decades, else decades only
            let steps: &[f64] = if hi_e - lo_e <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            let all: Vec<f64> =
                (lo_e..=hi_e).flat_map(|e| steps.iter().map(move |m| m * 10f64.powi(e))).collect();
            let d0 = all.iter().copied().filter(|t| *t <= lo * (1.0 + 1e-9)).fold(all[0], f64::max);
            let d1 = all
                .iter()
                .copied()
                .filter(|t| *t >= hi * (1.0 - 1e-9))
                .fold(f64::INFINITY, f64::min)
                .min(10f64.powi(hi_e));
            let d1 = if d1 > d0 { d1 } else { d0 * 10.0 };
            let ticks = all.into_iter().filter(|t| *t >= d0 * 0.999 && *t <= d1 * 1.001).collect();
            (d0, d1, ticks)
        }
        Scale::Linear => {
            if axis.from_zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            } else if !axis.integer {
                // a little headroom, so that the highest point is not drawn
                // on the frame
                hi += (hi - lo) * 0.03;
            }
            let data_lo = lo;
            let t = if axis.integer && hi - lo <= target as f64 {
                // whole numbers inside the data only: a point drawn beside
                // its number (x + 0.12) does not add a tick of its own
                let (a, b) = match (lo.ceil() as i64, hi.floor() as i64) {
                    (a, b) if a <= b => (a, b),
                    _ => (lo.floor() as i64, hi.ceil() as i64),
                };
                (a..=b).map(|i| i as f64).collect()
            } else {
                let t = nice_ticks(lo, hi, target);
                if axis.integer && t.iter().any(|x| x.fract() != 0.0) {
                    nice_ticks(lo, hi, (target / 2).max(2))
                } else {
                    t
                }
            };
            // a whole-number axis not from zero (threads) has no tick below
            // its data: no "0 threads"
            let t: Vec<f64> = if axis.integer && !axis.from_zero {
                let kept: Vec<f64> = t.iter().copied().filter(|x| *x >= data_lo - 1e-9).collect();
                if kept.is_empty() {
                    t
                } else {
                    kept
                }
            } else {
                t
            };
            let d0 = t.first().copied().unwrap_or(lo).min(lo);
            let d1 = t.last().copied().unwrap_or(hi).max(hi);
            // Whole-number axes (CPU ids, threads) get half a step on each
            // side when short, so that points and their error bars at the
            // ends are not drawn on the frame.
            let pad = if axis.integer && d1 - d0 <= target as f64 { 0.5 } else { 0.0 };
            (d0 - pad, d1 + pad, t)
        }
    }
}

/// Estimated width in pixels of `s` at `font` px (sans-serif: about 0.6 em
/// per character; a little more to stay on the safe side).
pub fn text_width(s: &str, font: f64) -> f64 {
    s.chars().count() as f64 * font * 0.62
}

/// `s` shortened with an ellipsis to fit `px` at `font` px.
pub fn fit(s: &str, px: f64, font: f64) -> String {
    if text_width(s, font) <= px {
        return s.to_string();
    }
    let n = ((px / (font * 0.62)).floor() as usize).saturating_sub(1);
    let mut t: String = s.chars().take(n).collect();
    t.push('…');
    t
}

/// The colour of series number `i` with colour key `key`.
pub fn series_colour(key: Option<usize>, i: usize) -> &'static str {
    PALETTE[key.unwrap_or(i) % PALETTE.len()]
}

/// How a legend entry's swatch looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swatch {
    /// A filled square (a series).
    Box,
    /// A dashed line (a reference line).
    Dashed,
    /// A pale square (a spread band around a line).
    Band,
    /// A vertical bar with caps (the spread of single points).
    ErrorBar,
}

/// One legend entry: a swatch and a name.
pub struct LegendItem<'a> {
    pub name: &'a str,
    pub colour: &'a str,
    pub swatch: Swatch,
}

/// Draws legend entries from `x0` to `x1`, starting at `y0`, wrapping onto
/// new rows so that no entry runs past `x1`; returns the y below the last
/// row.
pub fn legend(out: &mut String, items: &[LegendItem], x0: f64, x1: f64, y0: f64) -> f64 {
    const ROW: f64 = 18.0;
    let (mut x, mut y) = (x0, y0);
    let mut any = false;
    for it in items {
        let name = short_words(it.name, x1 - x0 - 20.0, 12.0);
        let wd = 16.0 + text_width(&name, 12.0) + 16.0;
        if x > x0 && x + wd - 14.0 > x1 {
            x = x0;
            y += ROW;
        }
        let swatch = match it.swatch {
            Swatch::Dashed => format!(
                r#"<line x1="{x:.1}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="{}" stroke-width="2" stroke-dasharray="4 2"/>"#,
                x + 12.0,
                y + 6.0,
                y + 6.0,
                it.colour
            ),
            Swatch::Box => {
                format!(
                    r#"<rect x="{x:.1}" y="{y:.1}" width="12" height="12" fill="{}"/>"#,
                    it.colour
                )
            }
            Swatch::Band => format!(
                r#"<rect x="{x:.1}" y="{y:.1}" width="12" height="12" fill="{}" fill-opacity="0.3"/>"#,
                it.colour
            ),
            Swatch::ErrorBar => format!(
                r#"<path class="swatch-errorbar" stroke="{c}" stroke-width="1.2" fill="none" d="M{:.1} {y:.1}H{:.1}M{:.1} {y:.1}V{:.1}M{:.1} {:.1}H{:.1}"/>"#,
                x + 3.0,
                x + 9.0,
                x + 6.0,
                y + 12.0,
                x + 3.0,
                y + 12.0,
                x + 9.0,
                c = it.colour
            ),
        };
        let _ = write!(
            out,
            r#"<g class="legend">{swatch}<text x="{:.1}" y="{:.1}" font-size="12"><title>{}</title>{}</text></g>"#,
            x + 16.0,
            y + 10.0,
            esc(it.name),
            esc(&name)
        );
        x += wd;
        any = true;
    }
    if any {
        y + ROW
    } else {
        y0
    }
}

/// Marker labels laid out on rows above the plot, each at its marker's x,
/// a label moving to the next row when it would touch the one before it.
/// Returns `(x, row, anchor_end)` per marker and the number of rows.
fn marker_rows(xs: &[(f64, f64)], x_max: f64) -> (Vec<(f64, usize, bool)>, usize) {
    let mut ends: Vec<f64> = Vec::new();
    let mut out = Vec::new();
    for (x, wd) in xs {
        let end_anchor = x + 4.0 + wd > x_max;
        let (a, b) = if end_anchor { (x - 4.0 - wd, x - 4.0) } else { (x + 4.0, x + 4.0 + wd) };
        let row = match ends.iter().position(|e| *e + 6.0 <= a) {
            Some(r) => r,
            None => {
                ends.push(f64::NEG_INFINITY);
                ends.len() - 1
            }
        };
        ends[row] = b;
        out.push((*x, row, end_anchor));
    }
    (out, ends.len())
}

fn xy(c: &XyChart, id: usize) -> String {
    let w = 760.0;
    let (left, right, bottom, plot_h) = (78.0, 24.0, 58.0, 290.0);
    let mut body = String::new();

    let (xs, ys) = xy_values(c);
    let (x0, x1, xt) = axis_ticks(&c.x, &xs, 10);
    let (y0, y1, yt) = axis_ticks(&c.y, &ys, 6);
    let xm = Map { scale: c.x.scale, d0: x0, d1: x1, p0: left, p1: w - right };

    // legend: the series, then the reference lines
    let colours: Vec<&str> =
        c.series.iter().enumerate().map(|(i, s)| series_colour(s.color, i)).collect();
    let line_colours: Vec<&str> =
        c.lines.iter().map(|l| l.color.map_or("#555555", |k| series_colour(Some(k), 0))).collect();
    let items = xy_legend_items(c, &colours, &line_colours);
    let legend_end = legend(&mut body, &items, left, w - right, 34.0);

    // marker labels: on rows above the plot, never over the data
    let mut marks: Vec<(usize, f64, f64)> = c
        .markers
        .iter()
        .enumerate()
        .map(|(i, m)| (i, xm.to_px(m.x), text_width(&m.label, 11.0)))
        .collect();
    marks.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (placed, rows) =
        marker_rows(&marks.iter().map(|m| (m.1, m.2)).collect::<Vec<_>>(), w - 4.0);
    let top = legend_end + 13.0 * rows as f64 + 8.0;
    let h = top + plot_h + bottom;
    let ym = Map { scale: c.y.scale, d0: y0, d1: y1, p0: top + plot_h, p1: top };

    let f = XyFrame { w, left, right, top, plot_h, h };
    xy_axes(&mut body, c, &f, &xm, &ym, &xt, &yt);
    // markers (cache sizes): a dashed line in the plot, the label above it
    for (k, (x, row, end)) in placed.iter().enumerate() {
        let m = &c.markers[marks[k].0];
        xy_marker(&mut body, m, *x, legend_end + 10.0 + 13.0 * *row as f64, *end, top + plot_h);
    }
    xy_reflines(&mut body, c, &f, id, &xm, &ym, &line_colours);
    xy_bands(&mut body, c, &xm, &ym, &colours);
    xy_series(&mut body, c, &xm, &ym, &colours);
    let mut out = String::new();
    open(&mut out, w, h, id, &c.title, "xy");
    out.push_str(&body);
    out.push_str("</svg>");
    out
}

/// Where an xy chart's plot sits (px).
struct XyFrame {
    w: f64,
    left: f64,
    right: f64,
    top: f64,
    plot_h: f64,
    h: f64,
}

/// The values an xy chart's axes must hold: x of every point, marker and
/// reference line in the domain; y of every point and band (positive
/// only on a log axis).
fn xy_values(c: &XyChart) -> (Vec<f64>, Vec<f64>) {
    let xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(c.markers.iter().map(|m| m.x))
        .chain(c.lines.iter().filter(|l| l.in_domain).flat_map(|l| l.points.iter().map(|p| p.0)))
        .collect();
    let ys: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1).chain(s.band.iter().flat_map(|b| [b.1, b.2])))
        .chain(c.lines.iter().filter(|l| l.in_domain).flat_map(|l| l.points.iter().map(|p| p.1)))
        .filter(|v| c.y.scale == Scale::Linear || *v > 0.0)
        .collect();
    (xs, ys)
}

/// The legend's items: the series, the reference lines, then the spread
/// as it is drawn.
fn xy_legend_items<'a>(
    c: &'a XyChart,
    colours: &[&'a str],
    line_colours: &[&'a str],
) -> Vec<LegendItem<'a>> {
    let mut items: Vec<LegendItem> = c
        .series
        .iter()
        .zip(colours)
        .map(|(s, col)| LegendItem { name: &s.name, colour: col, swatch: Swatch::Box })
        .collect();
    items.extend(c.lines.iter().zip(line_colours).map(|(l, col)| LegendItem {
        name: &l.label,
        colour: col,
        swatch: Swatch::Dashed,
    }));
    // the spread as it is drawn: a band around a line, error bars around
    // single points
    let band_name = if c.band_label.is_empty() { "spread" } else { c.band_label.as_str() };
    if c.series.iter().any(|s| s.band_drawn_as_band()) {
        items.push(LegendItem { name: band_name, colour: "#555555", swatch: Swatch::Band });
    }
    if c.series.iter().any(|s| !s.band.is_empty() && !s.band_drawn_as_band()) {
        items.push(LegendItem { name: band_name, colour: "#555555", swatch: Swatch::ErrorBar });
    }
    items
}

/// The grid, the ticks and the axes' labels.
fn xy_axes(
    body: &mut String,
    c: &XyChart,
    f: &XyFrame,
    xm: &Map,
    ym: &Map,
    xt: &[f64],
    yt: &[f64],
) {
    let (left, top) = (f.left, f.top);
    // grid and ticks
    body.push_str(r##"<g class="axis" font-size="11" fill="#333">"##);
    for t in yt {
        let y = ym.to_px(*t);
        let _ = write!(
            body,
            r##"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            f.w - f.right,
            f.left - 6.0,
            y + 4.0,
            esc(&tick_text(*t, &c.y))
        );
    }
    // x tick labels: thinned when they would touch each other
    let spacing = if xt.len() > 1 { (f.w - f.right - f.left) / (xt.len() - 1) as f64 } else { f.w };
    let widest = xt.iter().map(|t| text_width(&tick_text(*t, &c.x), 11.0)).fold(0.0, f64::max);
    let every = ((widest + 6.0) / spacing).ceil().max(1.0) as usize;
    for (k, t) in xt.iter().enumerate() {
        let x = xm.to_px(*t);
        let _ = write!(
            body,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#999"/>"##,
            f.top + f.plot_h,
            f.top + f.plot_h + 5.0,
        );
        if k % every == 0 {
            let _ = write!(
                body,
                r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                f.top + f.plot_h + 18.0,
                esc(&tick_text(*t, &c.x))
            );
        }
    }
    let _ = write!(
        body,
        r##"<line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#333"/><line x1="{left}" x2="{left}" y1="{top}" y2="{:.1}" stroke="#333"/>"##,
        f.w - f.right,
        f.top + f.plot_h,
        f.top + f.plot_h,
        f.top + f.plot_h
    );
    let _ = write!(
        body,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text class="axis-label" transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text></g>"#,
        (f.left + f.w - f.right) / 2.0,
        f.h - 14.0,
        esc(&short_words(&c.x.label, f.w - 40.0, 13.0)),
        f.top + f.plot_h / 2.0,
        esc(&short_words(&c.y.label, f.plot_h + 40.0, 13.0))
    );
}

/// One marker (a cache size): a dashed line from its label at `ly` down
/// to the plot's bottom `bottom`, the label at `x`, ending there when
/// `end`.
fn xy_marker(body: &mut String, m: &crate::chart::Marker, x: f64, ly: f64, end: bool, bottom: f64) {
    let (tx, anchor) = if end { (x - 4.0, "end") } else { (x + 4.0, "start") };
    let _ = write!(
        body,
        r##"<g class="marker"><line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#888" stroke-dasharray="5 4"/><text x="{tx:.1}" y="{ly:.1}" text-anchor="{anchor}" font-size="11" fill="#555">{}</text></g>"##,
        ly + 2.0,
        bottom,
        esc(&m.label)
    );
}

/// The plot's clip opened, then the reference lines in it.
fn xy_reflines(
    body: &mut String,
    c: &XyChart,
    f: &XyFrame,
    id: usize,
    xm: &Map,
    ym: &Map,
    line_colours: &[&str],
) {
    let (left, top, plot_h) = (f.left, f.top, f.plot_h);
    // the plot's clip: lines drawn past the axes (ideal scaling) stop there
    let _ = write!(
        body,
        r#"<defs><clipPath id="chart{id}-clip"><rect x="{left}" y="{top:.1}" width="{:.1}" height="{plot_h:.1}"/></clipPath></defs><g clip-path="url(#chart{id}-clip)">"#,
        f.w - f.right - f.left
    );
    for (l, col) in c.lines.iter().zip(line_colours) {
        let pts: Vec<String> = l
            .points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", xm.to_px(*x), ym.to_px(*y)))
            .collect();
        let _ = write!(
            body,
            r#"<polyline class="refline" fill="none" stroke="{col}" stroke-width="1.5" stroke-dasharray="6 4" points="{}"><title>{}</title></polyline>"#,
            pts.join(" "),
            esc(&l.label)
        );
    }
}

/// The spread bands (drawn before the series, so that every line and point
/// is drawn over them), then the plot's clip closed.
fn xy_bands(body: &mut String, c: &XyChart, xm: &Map, ym: &Map, colours: &[&str]) {
    for (s, col) in c.series.iter().zip(colours) {
        let mut band = s.band.clone();
        band.sort_by(|a, b| a.0.total_cmp(&b.0));
        if band.is_empty() {
            continue;
        }
        if s.band_drawn_as_band() {
            let upper = band.iter().map(|(x, _, hi)| (*x, *hi));
            let lower = band.iter().rev().map(|(x, lo, _)| (*x, *lo));
            let pts: Vec<String> = upper
                .chain(lower)
                .map(|(x, y)| format!("{:.1},{:.1}", xm.to_px(x), ym.to_px(y)))
                .collect();
            let _ = write!(
                body,
                r#"<polygon class="band" fill="{col}" fill-opacity="0.25" stroke="none" points="{}"/>"#,
                pts.join(" ")
            );
        } else {
            for (x, lo, hi) in &band {
                let (px, a, b) = (xm.to_px(*x), ym.to_px(*lo), ym.to_px(*hi));
                let _ = write!(
                    body,
                    r#"<path class="band" stroke="{col}" stroke-width="1.2" fill="none" d="M{:.1} {a:.1}H{:.1}M{px:.1} {a:.1}V{b:.1}M{:.1} {b:.1}H{:.1}"/>"#,
                    px - 3.0,
                    px + 3.0,
                    px - 3.0,
                    px + 3.0
                );
            }
        }
    }
    body.push_str("</g>");
}

/// Each series: its line, then its points with their hover text.
fn xy_series(body: &mut String, c: &XyChart, xm: &Map, ym: &Map, colours: &[&str]) {
    for (s, col) in c.series.iter().zip(colours) {
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let _ = write!(body, r#"<g class="series" data-name="{}">"#, esc(&s.name));
        if s.line && pts.len() > 1 {
            let path: Vec<String> = pts
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", xm.to_px(*x), ym.to_px(*y)))
                .collect();
            let _ = write!(
                body,
                r#"<polyline fill="none" stroke="{col}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
        }
        for (x, y) in &pts {
            let value = s.label_at(*x).map_or_else(|| plain(round3(*y)), str::to_string);
            let spread = s
                .band
                .iter()
                .find(|b| b.0 == *x)
                .map(|b| format!(" (spread {} to {})", plain(round3(b.1)), plain(round3(b.2))))
                .unwrap_or_default();
            let _ = write!(
                body,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{col}"><title>{}: {}, {}{spread}</title></circle>"#,
                xm.to_px(*x),
                ym.to_px(*y),
                esc(&s.name),
                esc(&tick_text(*x, &c.x)),
                esc(&value)
            );
        }
        body.push_str("</g>");
    }
}

/// Three significant digits (hover values).
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = v.abs().log10().floor() as i32;
    let f = 10f64.powi(2 - e);
    (v * f).round() / f
}

fn viridis(t: f64) -> (u8, u8, u8) {
    let t = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (t.floor() as usize).min(VIRIDIS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |x: u8, y: u8| (f64::from(x) + f * (f64::from(y) - f64::from(x))).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

fn heatmap(hm: &Heatmap, id: usize) -> String {
    let nr = hm.rows.len().max(1);
    let nc = hm.cols.len().max(1);
    let cell = (520.0 / nc.max(nr) as f64).clamp(28.0, 90.0);
    let (left, top) = (110.0, 78.0);
    let grid_w = cell * nc as f64;
    let grid_h = cell * nr as f64;
    let legend_x = left + grid_w + 28.0;
    let w = (legend_x + 90.0).max(420.0);
    let h = top + grid_h + 40.0;
    let mut out = String::new();
    open(&mut out, w, h, id, &hm.title, "heatmap");

    let vals: Vec<f64> = hm.values.iter().flatten().flatten().copied().collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let norm = |v: f64| if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
    let font = (cell / 3.6).clamp(9.0, 15.0);

    let _ = write!(
        out,
        r#"<text class="axis-label" x="{:.1}" y="46" text-anchor="middle" font-size="13">{}</text><text class="axis-label" transform="translate(22 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"#,
        left + grid_w / 2.0,
        esc(&hm.x_label),
        top + grid_h / 2.0,
        esc(&hm.y_label)
    );
    for (j, c) in hm.cols.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
            left + cell * (j as f64 + 0.5),
            top - 8.0,
            esc(c)
        );
    }
    for (i, r) in hm.rows.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"#,
            left - 8.0,
            top + cell * (i as f64 + 0.5) + 4.0,
            esc(r)
        );
        for j in 0..hm.cols.len() {
            let v = hm.values.get(i).and_then(|row| row.get(j)).copied().flatten();
            let (x, y) = (left + cell * j as f64, top + cell * i as f64);
            match v {
                Some(v) => {
                    let t = norm(v);
                    let (r, g, b) = viridis(t);
                    let ink = if t < 0.6 { "#ffffff" } else { "#000000" };
                    let dec = cell_decimals(&hm.unit);
                    let _ = write!(
                        out,
                        r##"<g class="cell"><rect x="{x:.1}" y="{y:.1}" width="{cell:.1}" height="{cell:.1}" fill="rgb({r},{g},{b})" stroke="#ffffff"><title>{} -> {}: {v:.dec$} {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{font:.1}" fill="{ink}">{}</text></g>"##,
                        esc(r_name(&hm.rows, i)),
                        esc(r_name(&hm.cols, j)),
                        esc(&hm.unit),
                        x + cell / 2.0,
                        y + cell / 2.0 + font / 3.0,
                        cell_value(v, cell, font, cell_decimals(&hm.unit))
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r##"<rect x="{x:.1}" y="{y:.1}" width="{cell:.1}" height="{cell:.1}" fill="#eeeeee" stroke="#ffffff"><title>not measured</title></rect>"##
                    );
                }
            }
        }
    }
    // colour scale
    let grad = format!("chart{id}-scale");
    let bar_h = grid_h.max(60.0);
    let _ = write!(out, r#"<defs><linearGradient id="{grad}" x1="0" y1="1" x2="0" y2="0">"#);
    for k in 0..=4 {
        let (r, g, b) = viridis(k as f64 / 4.0);
        let _ = write!(out, r#"<stop offset="{}%" stop-color="rgb({r},{g},{b})"/>"#, k * 25);
    }
    let _ = write!(
        out,
        r##"</linearGradient></defs><g class="scale" font-size="11"><rect x="{legend_x:.1}" y="{top:.1}" width="14" height="{bar_h:.1}" fill="url(#{grad})" stroke="#999"/><text x="{:.1}" y="{:.1}">{}</text><text x="{:.1}" y="{:.1}">{}</text><text x="{legend_x:.1}" y="{:.1}" font-size="12">{}</text></g>"##,
        legend_x + 18.0,
        top + 10.0,
        if vals.is_empty() { String::new() } else { format!("{hi:.*}", cell_decimals(&hm.unit)) },
        legend_x + 18.0,
        top + bar_h,
        if vals.is_empty() { String::new() } else { format!("{lo:.*}", cell_decimals(&hm.unit)) },
        top - 8.0,
        esc(&hm.unit)
    );
    out.push_str("</svg>");
    out
}

fn r_name(names: &[String], i: usize) -> &str {
    names.get(i).map(String::as_str).unwrap_or("?")
}

/// Decimals of a heatmap's values: ratios (`x local`) two, others one.
fn cell_decimals(unit: &str) -> usize {
    if unit.starts_with('x') {
        2
    } else {
        1
    }
}

/// The value written in a cell, shortened to fit.
fn cell_value(v: f64, cell: f64, font: f64, decimals: usize) -> String {
    (0..=decimals)
        .rev()
        .map(|d| format!("{v:.d$}"))
        .find(|s| s.len() as f64 * font * 0.62 <= cell - 6.0)
        .unwrap_or_else(|| format!("{v:.0}"))
}

fn bars(b: &BarChart, id: usize) -> String {
    let nser = b.series.len().max(1);
    let bar_h = 16.0;
    let group_h = bar_h * nser as f64 + 18.0;
    let (left, right) = (200.0, 190.0);
    let w = 900.0;
    let mut out = String::new();
    let items: Vec<LegendItem> = b
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendItem {
            name: s,
            colour: PALETTE[i % PALETTE.len()],
            swatch: Swatch::Box,
        })
        .collect();
    let mut legend_svg = String::new();
    let top = legend(&mut legend_svg, &items, 20.0, w - 20.0, 34.0) + 12.0;
    let h = top + group_h * b.groups.len().max(1) as f64 + 50.0;
    open(&mut out, w, h, id, &b.title, "bars");
    out.push_str(&legend_svg);

    let mut vals: Vec<f64> = b
        .groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .collect();
    // Around a reference the axis spans the largest deviation both ways
    // (at least 5 units), so equal values still show a readable axis;
    // a deviation more than three times the next largest (one host at
    // 300% of its peers) is left past the axis, its bar drawn to the edge
    // and its value written, so the others keep their width.
    if let Some(r) = b.reference {
        let mut devs: Vec<f64> = vals.iter().map(|v| (v - r).abs()).collect();
        devs.sort_by(|a, b| b.total_cmp(a));
        while devs.len() > 1 && devs[0] > 3.0 * devs[1].max(5.0) {
            devs.remove(0);
        }
        let m = devs.first().copied().unwrap_or(0.0);
        let m = (m * 1.1).max(5.0);
        let lo = if vals.iter().all(|v| *v >= 0.0) { (r - m).max(0.0) } else { r - m };
        vals = vec![lo, r + m];
    }
    let axis = Axis { from_zero: b.reference.is_none(), ..Axis::linear(b.x_label.clone()) };
    let (x0, x1, ticks) = axis_ticks(&axis, &vals, 8);
    let plot_bottom = h - 50.0;
    let xm = Map { scale: Scale::Linear, d0: x0, d1: x1, p0: left, p1: w - right };
    out.push_str(r##"<g class="axis" font-size="11" fill="#333">"##);
    for t in &ticks {
        let x = xm.to_px(*t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{plot_bottom:.1}" stroke="#e3e3e3"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            plot_bottom + 16.0,
            esc(&tick_text(*t, &axis))
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text></g>"#,
        (left + w - right) / 2.0,
        h - 12.0,
        esc(&b.x_label)
    );
    for (gi, g) in b.groups.iter().enumerate() {
        let gy = top + group_h * gi as f64 + 6.0;
        let _ = write!(
            out,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12" font-weight="600"><title>{}</title>{}</text><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11" fill="#555">{}</text>"##,
            left - 8.0,
            gy + group_h / 2.0 - 6.0,
            esc(&g.name),
            esc(&short_words(&g.name, left - 16.0, 12.0)),
            left - 8.0,
            gy + group_h / 2.0 + 8.0,
            esc(&short_words(&g.note, left - 16.0, 11.0))
        );
        for (si, v) in g.values.iter().enumerate() {
            let y = gy + bar_h * si as f64;
            let label = g.labels.get(si).map(String::as_str).unwrap_or("");
            match v {
                Some(v) => {
                    let col = PALETTE[si % PALETTE.len()];
                    // past the axis: drawn to its edge (the label says
                    // the value)
                    let x_end = xm.to_px(v.clamp(x0, x1));
                    // Bars grow from the reference (100% of the baseline)
                    // when there is one, so gains and losses point apart.
                    let x_start = b.reference.map_or(left, |r| xm.to_px(r));
                    let (x_lo, x_hi) = (x_start.min(x_end), x_start.max(x_end));
                    let _ = write!(
                        out,
                        r##"<g class="bar"><rect x="{x_lo:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{col}"><title>{}: {}</title></rect><text x="{:.1}" y="{:.1}" font-size="11" paint-order="stroke" stroke="#ffffff" stroke-width="3">{}</text></g>"##,
                        (x_hi - x_lo).max(1.0),
                        bar_h - 3.0,
                        esc(b.series.get(si).map(String::as_str).unwrap_or("")),
                        esc(label),
                        x_hi + 4.0,
                        y + bar_h - 5.0,
                        esc(&short_words(label, w - x_hi - 8.0, 11.0))
                    );
                }
                None => {
                    let _ = write!(
                        out,
                        r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#888">not measured</text>"##,
                        left + 4.0,
                        y + bar_h - 5.0
                    );
                }
            }
        }
    }
    if let Some(r) = b.reference {
        let x = xm.to_px(r);
        let _ = write!(
            out,
            r##"<line class="reference" x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{plot_bottom:.1}" stroke="#222" stroke-dasharray="4 3"/>"##,
            top - 6.0
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" x2="{left}" y1="{top}" y2="{plot_bottom:.1}" stroke="#333"/>"##
    );
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::{Marker, Series};

    /// Around a reference, one bar far past the others (a host at 300% of
    /// its peers) is drawn to the axis's edge, its value written, and the
    /// axis fits the others; the axis never reaches 300.
    #[test]
    fn one_far_bar_does_not_set_the_axis() {
        use crate::chart::{BarChart, BarGroup};
        let group = |name: &str, v: f64| BarGroup {
            name: name.into(),
            note: String::new(),
            values: vec![Some(v)],
            labels: vec![format!("{v:.1}%")],
        };
        let b = BarChart {
            title: "hosts".into(),
            x_label: "% of the peer median".into(),
            series: vec!["local bandwidth".into()],
            groups: vec![group("a", 96.0), group("b", 104.0), group("c", 99.0), group("d", 300.0)],
            reference: Some(100.0),
        };
        let svg = bars(&b, 0);
        let ticks: Vec<f64> = svg
            .split("text-anchor=\"middle\">")
            .skip(1)
            .filter_map(|t| t[..t.find('<').unwrap()].parse().ok())
            .collect();
        assert!(!ticks.is_empty() && ticks.iter().all(|t| *t < 150.0), "{ticks:?}");
        assert!(svg.contains(">300.0%</text>"), "the far bar's value is written");
    }

    /// The forest plot draws the margin once, a floor band per row that
    /// has one, an interval per row that has one, and each dot on the
    /// change's side of zero.
    #[test]
    fn forest_plot_draws_bands_intervals_and_dots() {
        use crate::chart::{Forest, ForestRow};
        let f = Forest {
            title: "Change against A".into(),
            x_label: "change against A (%)".into(),
            margin_pct: 3.0,
            rows: vec![
                ForestRow {
                    label: "Local latency (ns)".into(),
                    change_pct: -4.7,
                    interval: Some((-5.0, -3.9)),
                    floor_pct: Some(0.9),
                    verdict: "better".into(),
                },
                ForestRow {
                    label: "Local bandwidth (GB/s)".into(),
                    change_pct: 10.0,
                    interval: None,
                    floor_pct: None,
                    verdict: "undecided".into(),
                },
            ],
        };
        let s = render(&Chart::Forest(f), 0);
        assert_eq!(s.matches("class=\"margin-band\"").count(), 1);
        assert_eq!(s.matches("class=\"floor-band\"").count(), 1);
        assert_eq!(s.matches("<path stroke=\"#333\"").count(), 1, "one interval");
        assert_eq!(s.matches("<circle").count(), 2);
        let cx = |i: usize| -> f64 {
            let c = s.split("<circle cx=\"").nth(i + 1).unwrap();
            c[..c.find('"').unwrap()].parse().unwrap()
        };
        let zero: f64 = {
            let z = s.split("class=\"zero\" x1=\"").nth(1).unwrap();
            z[..z.find('"').unwrap()].parse().unwrap()
        };
        assert!(cx(0) < zero && cx(1) > zero, "{} {} {zero}", cx(0), cx(1));
        assert!(s.contains(">better</text>") && s.contains("fill=\"#1b7f3b\""));
        assert!(s.starts_with("<svg class=\"chart forest\""));
    }

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        assert_eq!(nice_ticks(0.0, 100.0, 5), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(0.0, 9.0, 4), vec![0.0, 2.5, 5.0, 7.5, 10.0]);
        let t = nice_ticks(83.0, 147.0, 6);
        assert!(t[0] <= 83.0 && *t.last().unwrap() >= 147.0, "{t:?}");
        assert_eq!(nice_ticks(5.0, 5.0, 4).len(), 5);
    }

    #[test]
    fn integer_axes_tick_on_whole_numbers() {
        let (_, _, t) = axis_ticks(&Axis::integer("CPU id"), &[0.0, 1.0], 10);
        assert_eq!(t, vec![0.0, 1.0]);
        let (_, _, t) = axis_ticks(&Axis::integer("threads"), &[1.0, 28.0], 10);
        assert!(t.iter().all(|x| x.fract() == 0.0), "{t:?}");
        // the plain linear axis splits [0, 1] into fractions
        let (_, _, t) = axis_ticks(&Axis::linear("x"), &[0.0, 1.0], 10);
        assert!(t.iter().any(|x| x.fract() != 0.0));
    }

    #[test]
    fn bars_grow_from_the_reference() {
        let c = Chart::Bars(crate::chart::BarChart {
            title: "t".into(),
            x_label: "% of baseline".into(),
            series: vec!["a".into()],
            groups: vec![crate::chart::BarGroup {
                name: "g".into(),
                note: String::new(),
                values: vec![Some(90.0)],
                labels: vec!["90".into()],
            }],
            reference: Some(100.0),
        });
        let s = render(&c, 0);
        let rect_x = |s: &str| -> f64 {
            let i = s.find("<g class=\"bar\"><rect x=\"").unwrap() + 24;
            s[i..].split('"').next().unwrap().parse().unwrap()
        };
        let ref_x: f64 = {
            let i = s.find("class=\"reference\" x1=\"").unwrap() + 22;
            s[i..].split('"').next().unwrap().parse().unwrap()
        };
        // a loss: the bar ends at the reference line and starts left of it
        let x = rect_x(&s);
        assert!(x < ref_x, "{x} {ref_x}");
        let w: f64 = {
            let i = s.find("<g class=\"bar\"><rect x=").unwrap();
            let j = s[i..].find("width=\"").unwrap() + i + 7;
            s[j..].split('"').next().unwrap().parse().unwrap()
        };
        assert!((x + w - ref_x).abs() < 0.2, "{x} + {w} vs {ref_x}");
    }

    #[test]
    fn log_axes_tick_on_powers_of_two() {
        let a = Axis::log2_bytes("working set");
        let (lo, hi, t) = axis_ticks(&a, &[4096.0, 3.0 * 1024.0 * 1024.0 * 1024.0], 10);
        assert_eq!(lo, 4096.0);
        assert_eq!(hi, 4.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(t.first(), Some(&4096.0));
        assert!(t.len() <= 11, "{t:?}");
        assert!(t.iter().all(|v| v.log2().fract() == 0.0));
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc(r#"<a & "b">"#), "&lt;a &amp; &quot;b&quot;&gt;");
        let c = Chart::Xy(XyChart {
            title: "x < y".into(),
            x: Axis::linear("threads"),
            y: Axis::linear("GB/s"),
            series: vec![Series::line("n&0", vec![(1.0, 2.0)])],
            markers: vec![Marker { x: 1.0, label: "<L1>".into() }],
            ..XyChart::default()
        });
        let s = render(&c, 0);
        assert!(s.contains("x &lt; y") && s.contains("n&amp;0") && s.contains("&lt;L1&gt;"));
        assert!(!s.contains("<L1>"));
        assert_eq!(s.matches("<svg class=\"chart").count(), 1);
    }

    #[test]
    fn heatmap_colours_follow_values() {
        let h = Heatmap {
            title: "t".into(),
            x_label: "memory node".into(),
            y_label: "CPU node".into(),
            unit: "GB/s".into(),
            cols: vec!["0".into(), "1".into()],
            rows: vec!["0".into(), "1".into()],
            values: vec![vec![Some(100.0), Some(40.0)], vec![None, Some(90.0)]],
        };
        let s = render(&Chart::Heatmap(h), 3);
        // highest value takes the top of the scale, lowest the bottom
        assert!(s.contains("fill=\"rgb(253,231,37)\""));
        assert!(s.contains("fill=\"rgb(68,1,84)\""));
        assert!(s.contains("not measured"));
        assert_eq!(s.matches("class=\"cell\"").count(), 3);
    }

    #[test]
    fn whole_number_ticks_stay_inside_the_data() {
        // dots at groups 1-3 and medians drawn at x + 0.12 beside them
        let (d0, d1, t) = axis_ticks(
            &Axis { from_zero: false, ..Axis::integer("group") },
            &[1.0, 2.0, 3.0, 3.12],
            10,
        );
        assert_eq!(t, vec![1.0, 2.0, 3.0]);
        assert!(d0 <= 0.5 && d1 >= 3.12, "{d0} {d1}");
    }

    #[test]
    fn log10_axes_tick_on_1_2_5_and_cover_decades() {
        let (lo, hi, t) = axis_ticks(&Axis::log10("latency (ns)"), &[1.1, 4.0, 10.6, 97.0], 6);
        assert_eq!(lo, 1.0);
        assert_eq!(hi, 100.0);
        assert_eq!(t, vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
        // L1 and DRAM both get room: 1.1 ns sits low, 97 ns high, 10.6 ns in the middle
        let m = Map { scale: Scale::Log10, d0: lo, d1: hi, p0: 300.0, p1: 0.0 };
        assert!((m.to_px(10.0) - 150.0).abs() < 1e-9);
        let a = Axis::linear_or_log("ns", [1.1, 97.0], 1.0);
        assert_eq!(a.scale, Scale::Log10);
        assert_eq!(Axis::linear_or_log("ns", [80.0, 97.0], 1.0).scale, Scale::Linear);
    }

    #[test]
    fn legends_wrap_instead_of_running_off_the_chart() {
        let names: Vec<String> =
            (0..8).map(|i| format!("memory node {i}, 4k pages, a long name")).collect();
        let items: Vec<LegendItem> = names
            .iter()
            .map(|n| LegendItem { name: n, colour: "#000", swatch: Swatch::Box })
            .collect();
        let mut out = String::new();
        let bottom = legend(&mut out, &items, 78.0, 736.0, 34.0);
        assert!(bottom > 34.0 + 18.0 * 3.0, "several rows: {bottom}");
        // every entry ends inside the chart
        for (k, x) in out.match_indices("<text x=\"") {
            let x: f64 = out[k + x.len()..].split('"').next().unwrap().parse().unwrap();
            let name_len = names[0].chars().count() as f64;
            assert!(x + name_len * 12.0 * 0.62 <= 736.0 + 0.1, "{x}");
        }
    }

    #[test]
    fn marker_labels_take_another_row_rather_than_touch() {
        let (placed, rows) = marker_rows(&[(100.0, 60.0), (130.0, 60.0), (400.0, 60.0)], 700.0);
        assert_eq!(rows, 2);
        assert_eq!(placed[0].1, 0);
        assert_eq!(placed[1].1, 1);
        assert_eq!(placed[2].1, 0);
        // near the right edge a label ends at its line
        let (placed, _) = marker_rows(&[(690.0, 60.0)], 700.0);
        assert!(placed[0].2);
    }

    #[test]
    fn bands_and_reference_lines_are_drawn_and_listed() {
        let c = Chart::Xy(XyChart {
            title: "t".into(),
            x: Axis::integer("threads"),
            y: Axis::linear("GB/s"),
            series: vec![Series::line("a", vec![(1.0, 10.0), (2.0, 19.0)])
                .with_band(vec![(1.0, 9.0, 10.0), (2.0, 12.0, 19.0)])
                .with_color(Some(4))],
            lines: vec![crate::chart::RefLine {
                label: "peak".into(),
                points: vec![(1.0, 30.0), (2.0, 30.0)],
                in_domain: true,
                color: None,
            }],
            band_label: "min-max".into(),
            ..XyChart::default()
        });
        let s = render(&c, 0);
        assert_eq!(s.matches("class=\"band\"").count(), 1);
        assert!(s.contains("class=\"refline\""));
        assert!(s.contains(">peak</text>") && s.contains(">min-max</text>"));
        // colour key 4 picks the fifth colour whatever the series' position
        assert!(s.contains(&format!("stroke=\"{}\"", PALETTE[4])));
        assert!(s.contains("(spread 12 to 19)"));
    }

    #[test]
    fn the_legend_shows_the_spread_as_it_is_drawn() {
        let chart = |line: bool| {
            let mut series = Series::points("cpus", vec![(0.0, 100.0), (1.0, 110.0)])
                .with_band(vec![(0.0, 95.0, 105.0), (1.0, 104.0, 118.0)]);
            series.line = line;
            Chart::Xy(XyChart {
                title: "t".into(),
                x: Axis::integer("CPU id"),
                y: Axis::linear("ns"),
                series: vec![series],
                band_label: "min-max of the samples".into(),
                ..XyChart::default()
            })
        };
        // points: error bars in the plot and in the legend, no band swatch
        let s = render(&chart(false), 0);
        assert_eq!(s.matches("<path class=\"band\"").count(), 2);
        assert!(s.contains("swatch-errorbar"));
        assert!(!s.contains("fill-opacity=\"0.3\""));
        // a line: a shaded band in the plot and in the legend
        let s = render(&chart(true), 0);
        assert!(s.contains("<polygon class=\"band\""));
        assert!(s.contains("fill-opacity=\"0.3\"") && !s.contains("swatch-errorbar"));
    }

    #[test]
    fn hover_titles_write_the_value_as_given() {
        let c = Chart::Xy(XyChart {
            title: "t".into(),
            x: Axis::integer("threads"),
            y: Axis::linear("GB/s"),
            series: vec![Series::line("a", vec![(1.0, 13.61), (2.0, 19.0)])
                .with_labels(vec![(1.0, "10 GB/s".into())])],
            ..XyChart::default()
        });
        let s = render(&c, 0);
        assert!(s.contains("<title>a: 1, 10 GB/s</title>"), "{s}");
        assert!(s.contains("<title>a: 2, 19</title>"), "{s}");
    }
}
