//! Charts drawn as inline SVG: no script, no fonts or files fetched; hover
//! titles give exact values. Every chart is one `<svg class="chart">`.

use std::fmt::Write;

use crate::chart::{Axis, BarChart, Chart, Heatmap, Scale, XyChart};
use crate::fmt::{bytes, plain};

/// Series colours (Tableau 10: distinct, colour-blind aware).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Viridis stops for heatmaps (perceptually uniform).
const VIRIDIS: [(u8, u8, u8); 5] =
    [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)];

/// Escapes text for XML content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
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
    }
}

fn open(out: &mut String, w: f64, h: f64, id: usize, title: &str, kind: &str) {
    let _ = write!(
        out,
        r##"<svg class="chart {kind}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-labelledby="chart{id}-title"><title id="chart{id}-title">{t}</title><rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/><text class="chart-title" x="{cx}" y="22" text-anchor="middle" font-size="15" font-weight="600">{t}</text>"##,
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
    if axis.bytes {
        return bytes(v.round().max(0.0) as u64);
    }
    if v.abs() >= 1000.0 || v.fract() == 0.0 {
        format!("{v:.0}")
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
        Scale::Linear => {
            if axis.from_zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            let t = if axis.integer && hi - lo <= target as f64 {
                let (a, b) = (lo.floor() as i64, hi.ceil() as i64);
                (a..=b).map(|i| i as f64).collect()
            } else {
                let t = nice_ticks(lo, hi, target);
                if axis.integer && t.iter().any(|x| x.fract() != 0.0) {
                    nice_ticks(lo, hi, (target / 2).max(2))
                } else {
                    t
                }
            };
            let d0 = t.first().copied().unwrap_or(lo).min(lo);
            let d1 = t.last().copied().unwrap_or(hi).max(hi);
            (d0, d1, t)
        }
    }
}

fn xy(c: &XyChart, id: usize) -> String {
    let (w, h) = (760.0, 400.0);
    let (left, right, top, bottom) = (78.0, 24.0, 64.0, 58.0);
    let mut out = String::new();
    open(&mut out, w, h, id, &c.title, "xy");

    let xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .chain(c.markers.iter().map(|m| m.x))
        .collect();
    let ys: Vec<f64> = c.series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).collect();
    let (x0, x1, xt) = axis_ticks(&c.x, &xs, 10);
    let (y0, y1, yt) = axis_ticks(&c.y, &ys, 6);
    let xm = Map { scale: c.x.scale, d0: x0, d1: x1, p0: left, p1: w - right };
    let ym = Map { scale: c.y.scale, d0: y0, d1: y1, p0: h - bottom, p1: top };

    // legend
    let mut lx = left;
    for (i, s) in c.series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let _ = write!(
            out,
            r#"<g class="legend"><rect x="{lx:.1}" y="36" width="12" height="12" fill="{col}"/><text x="{:.1}" y="46" font-size="12">{}</text></g>"#,
            lx + 16.0,
            esc(&s.name)
        );
        lx += 16.0 + 7.0 * s.name.chars().count() as f64 + 18.0;
    }

    // grid and ticks
    out.push_str(r##"<g class="axis" font-size="11" fill="#333">"##);
    for t in &yt {
        let y = ym.to_px(*t);
        let _ = write!(
            out,
            r##"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0,
            tick_text(*t, &c.y)
        );
    }
    for t in &xt {
        let x = xm.to_px(*t);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{:.1}" y2="{:.1}" stroke="#999"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            h - bottom,
            h - bottom + 5.0,
            h - bottom + 18.0,
            tick_text(*t, &c.x)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#333"/><line x1="{left}" x2="{left}" y1="{top}" y2="{:.1}" stroke="#333"/>"##,
        w - right,
        h - bottom,
        h - bottom,
        h - bottom
    );
    let _ = write!(
        out,
        r#"<text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text class="axis-label" transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text></g>"#,
        (left + w - right) / 2.0,
        h - 14.0,
        esc(&c.x.label),
        (top + h - bottom) / 2.0,
        esc(&c.y.label)
    );

    // markers (cache sizes)
    for (i, m) in c.markers.iter().enumerate() {
        let x = xm.to_px(m.x);
        let ly = top + 12.0 + 14.0 * (i % 3) as f64;
        let _ = write!(
            out,
            r##"<g class="marker"><line x1="{x:.1}" x2="{x:.1}" y1="{top}" y2="{:.1}" stroke="#888" stroke-dasharray="5 4"/><text x="{:.1}" y="{ly:.1}" font-size="11" fill="#555">{}</text></g>"##,
            h - bottom,
            x + 4.0,
            esc(&m.label)
        );
    }

    // series
    for (i, s) in c.series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let mut pts = s.points.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let _ = write!(out, r#"<g class="series" data-name="{}">"#, esc(&s.name));
        if s.line && pts.len() > 1 {
            let path: Vec<String> = pts
                .iter()
                .map(|(x, y)| format!("{:.1},{:.1}", xm.to_px(*x), ym.to_px(*y)))
                .collect();
            let _ = write!(
                out,
                r#"<polyline fill="none" stroke="{col}" stroke-width="2" points="{}"/>"#,
                path.join(" ")
            );
        }
        for (x, y) in &pts {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{col}"><title>{}: {}, {}</title></circle>"#,
                xm.to_px(*x),
                ym.to_px(*y),
                esc(&s.name),
                esc(&tick_text(*x, &c.x)),
                plain((y * 10.0).round() / 10.0)
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
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
                    let _ = write!(
                        out,
                        r##"<g class="cell"><rect x="{x:.1}" y="{y:.1}" width="{cell:.1}" height="{cell:.1}" fill="rgb({r},{g},{b})" stroke="#ffffff"><title>{} -> {}: {} {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{font:.1}" fill="{ink}">{}</text></g>"##,
                        esc(r_name(&hm.rows, i)),
                        esc(r_name(&hm.cols, j)),
                        plain((v * 10.0).round() / 10.0),
                        esc(&hm.unit),
                        x + cell / 2.0,
                        y + cell / 2.0 + font / 3.0,
                        cell_value(v, cell, font)
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
        if vals.is_empty() { String::new() } else { plain((hi * 10.0).round() / 10.0) },
        legend_x + 18.0,
        top + bar_h,
        if vals.is_empty() { String::new() } else { plain((lo * 10.0).round() / 10.0) },
        top - 8.0,
        esc(&hm.unit)
    );
    out.push_str("</svg>");
    out
}

fn r_name(names: &[String], i: usize) -> &str {
    names.get(i).map(String::as_str).unwrap_or("?")
}

/// The value written in a cell, shortened to fit.
fn cell_value(v: f64, cell: f64, font: f64) -> String {
    let full = format!("{v:.1}");
    if full.len() as f64 * font * 0.62 <= cell - 6.0 {
        full
    } else {
        format!("{v:.0}")
    }
}

fn bars(b: &BarChart, id: usize) -> String {
    let nser = b.series.len().max(1);
    let bar_h = 16.0;
    let group_h = bar_h * nser as f64 + 18.0;
    let (left, right, top) = (200.0, 190.0, 64.0);
    let w = 900.0;
    let h = top + group_h * b.groups.len().max(1) as f64 + 50.0;
    let mut out = String::new();
    open(&mut out, w, h, id, &b.title, "bars");

    let mut lx = left;
    for (i, s) in b.series.iter().enumerate() {
        let col = PALETTE[i % PALETTE.len()];
        let _ = write!(
            out,
            r#"<g class="legend"><rect x="{lx:.1}" y="36" width="12" height="12" fill="{col}"/><text x="{:.1}" y="46" font-size="12">{}</text></g>"#,
            lx + 16.0,
            esc(s)
        );
        lx += 16.0 + 7.0 * s.chars().count() as f64 + 18.0;
    }

    let mut vals: Vec<f64> = b
        .groups
        .iter()
        .flat_map(|g| g.values.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .collect();
    // Around a reference the axis spans the largest deviation both ways
    // (at least 5 units), so equal values still show a readable axis.
    if let Some(r) = b.reference {
        let m = vals.iter().map(|v| (v - r).abs()).fold(0.0, f64::max);
        let m = (m * 1.1).max(5.0);
        let lo = if vals.iter().all(|v| *v >= 0.0) { (r - m).max(0.0) } else { r - m };
        vals.extend([lo, r + m]);
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
            tick_text(*t, &axis)
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
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12" font-weight="600">{}</text><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11" fill="#555">{}</text>"##,
            left - 8.0,
            gy + group_h / 2.0 - 6.0,
            esc(&g.name),
            left - 8.0,
            gy + group_h / 2.0 + 8.0,
            esc(&g.note)
        );
        for (si, v) in g.values.iter().enumerate() {
            let y = gy + bar_h * si as f64;
            let label = g.labels.get(si).map(String::as_str).unwrap_or("");
            match v {
                Some(v) => {
                    let col = PALETTE[si % PALETTE.len()];
                    let x_end = xm.to_px(*v);
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
                        esc(label)
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
            series: vec![Series { name: "n&0".into(), points: vec![(1.0, 2.0)], line: true }],
            markers: vec![Marker { x: 1.0, label: "<L1>".into() }],
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
}
