//! Chart descriptions, independent of how they are drawn (the HTML report
//! draws them as inline SVG, see [`crate::svg`]), and the node-matrix
//! heatmaps the bandwidth and latency sections share.

use std::collections::{BTreeMap, BTreeSet};

/// A chart of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Heatmap(Heatmap),
    Xy(XyChart),
    Bars(BarChart),
    Forest(Forest),
}

impl Chart {
    pub fn title(&self) -> &str {
        match self {
            Chart::Heatmap(h) => &h.title,
            Chart::Xy(x) => &x.title,
            Chart::Bars(b) => &b.title,
            Chart::Forest(f) => &f.title,
        }
    }
}

/// A forest plot: one row per metric (and compared group), its change
/// against the baseline as a dot with its interval as a line, over two
/// bands: the equivalence margin (the whole height) and the row's noise
/// floor (how far groups of identical settings differ on this machine).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Forest {
    pub title: String,
    /// Label of the change axis, e.g. `change against baseline (%)`.
    pub x_label: String,
    /// The equivalence margin, percent (drawn as a band around 0).
    pub margin_pct: f64,
    pub rows: Vec<ForestRow>,
}

/// One row of a [`Forest`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForestRow {
    pub label: String,
    pub change_pct: f64,
    /// The interval on the change, percent; `None` with too few runs.
    pub interval: Option<(f64, f64)>,
    /// The noise floor, percent (drawn as a band around 0 on this row).
    pub floor_pct: Option<f64>,
    /// `better`, `worse`, `same` or `undecided` (written at the right and
    /// colouring the dot).
    pub verdict: String,
}

/// A matrix drawn as coloured cells with their values written in.
#[derive(Debug, Clone, PartialEq)]
pub struct Heatmap {
    pub title: String,
    /// Label of the columns' axis, e.g. `memory node`.
    pub x_label: String,
    /// Label of the rows' axis, e.g. `CPU node`.
    pub y_label: String,
    /// Unit of the values, e.g. `GB/s`.
    pub unit: String,
    pub cols: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][col]`; `None` for a cell not measured.
    pub values: Vec<Vec<Option<f64>>>,
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    #[default]
    Linear,
    /// Base-2 logarithmic (working-set sizes).
    Log2,
    /// Base-10 logarithmic, ticks at 1, 2 and 5 x 10^k (latencies that
    /// span decades: L1 at 1 ns, DRAM at 100 ns).
    Log10,
}

/// An axis of an [`XyChart`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Axis {
    /// Label with its unit, e.g. `latency (ns)`.
    pub label: String,
    pub scale: Scale,
    /// Tick labels as byte sizes (`4 KiB`, `1 MiB`).
    pub bytes: bool,
    /// Start a linear axis at zero.
    pub from_zero: bool,
    /// Ticks only at whole numbers (thread counts, CPU ids).
    pub integer: bool,
    /// Names of the whole numbers 1, 2, ... (the groups of a study): a
    /// tick at `k` is written `names[k - 1]`.
    pub names: Vec<String>,
}

impl Axis {
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            bytes: false,
            from_zero: true,
            integer: false,
            names: Vec::new(),
        }
    }

    /// A linear axis from zero with ticks at whole numbers only.
    pub fn integer(label: impl Into<String>) -> Axis {
        Axis { integer: true, ..Axis::linear(label) }
    }

    /// A base-10 logarithmic axis.
    pub fn log10(label: impl Into<String>) -> Axis {
        Axis { scale: Scale::Log10, from_zero: false, ..Axis::linear(label) }
    }

    /// Logarithmic (base 10) when the positive `values` span more than
    /// `decades` decades (max / min > 10^decades), else linear from zero.
    pub fn linear_or_log(
        label: impl Into<String>,
        values: impl IntoIterator<Item = f64>,
        decades: f64,
    ) -> Axis {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        if hi > 0.0 && (hi / lo).log10() > decades {
            Axis::log10(label)
        } else {
            Axis::linear(label)
        }
    }

    pub fn log2_bytes(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log2,
            bytes: true,
            from_zero: false,
            integer: false,
            names: Vec::new(),
        }
    }
}

/// A named set of points.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    pub name: String,
    /// `(x, y)`, drawn in x order.
    pub points: Vec<(f64, f64)>,
    /// Join the points with a line.
    pub line: bool,
    /// The spread of each point, `(x, low, high)` (min-max or p10-p90):
    /// drawn as a shaded band around a line, as error bars around points.
    pub band: Vec<(f64, f64, f64)>,
    /// A colour key: series with the same key get the same colour in every
    /// chart (the node number for per-node series). `None`: by position.
    pub color: Option<usize>,
    /// The value written in each point's hover title, `(x, text)`, as the
    /// tables write it (rounded to its noise); points without one show
    /// three significant digits.
    pub labels: Vec<(f64, String)>,
}

impl Series {
    /// Points joined by a line.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, line: true, ..Series::default() }
    }

    /// Points only.
    pub fn points(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, line: false, ..Series::default() }
    }

    /// With its spread band.
    pub fn with_band(mut self, band: Vec<(f64, f64, f64)>) -> Series {
        self.band = band;
        self
    }

    /// With the hover text of each point's value, `(x, text)`.
    pub fn with_labels(mut self, labels: Vec<(f64, String)>) -> Series {
        self.labels = labels;
        self
    }

    /// The hover text of the point at `x`, when given.
    pub fn label_at(&self, x: f64) -> Option<&str> {
        self.labels.iter().find(|l| l.0 == x).map(|l| l.1.as_str())
    }

    /// Whether the spread is drawn as a shaded band (a line with two or
    /// more spreads); otherwise as error bars around each point.
    pub fn band_drawn_as_band(&self) -> bool {
        self.line && self.band.len() > 1
    }

    /// With a colour key (a node number).
    pub fn with_color(mut self, key: Option<u32>) -> Series {
        self.color = key.map(|k| k as usize);
        self
    }
}

/// A dashed reference line: ideal linear scaling, a theoretical peak, a
/// plateau. Its label is written in the legend, never over the data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RefLine {
    pub label: String,
    /// Two or more points, joined; clipped to the plot.
    pub points: Vec<(f64, f64)>,
    /// Whether the axes must reach it (a peak, ideal scaling: yes, so that
    /// the line is seen whole; plateaus, drawn within the data: either).
    pub in_domain: bool,
    /// A colour key as [`Series::color`]; `None`: grey.
    pub color: Option<usize>,
}

/// A vertical line at `x` with a label (e.g. a cache size).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// Points and lines against two axes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct XyChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
    /// Reference lines (ideal scaling, theoretical peak, plateaus).
    pub lines: Vec<RefLine>,
    /// What the series' bands show, for the legend (`min-max of the
    /// repetitions`); empty: `spread`.
    pub band_label: String,
}

/// Horizontal grouped bars: one group per item (a metric), one bar per
/// series (a run), each with a text label at its end.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    pub title: String,
    /// Label of the value axis with its unit.
    pub x_label: String,
    pub series: Vec<String>,
    pub groups: Vec<BarGroup>,
    /// A vertical reference line (e.g. 100% = baseline).
    pub reference: Option<f64>,
}

/// One group of bars.
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    pub name: String,
    /// Second line under the name, e.g. `GB/s, higher is better`.
    pub note: String,
    /// One per series; `None` leaves a gap.
    pub values: Vec<Option<f64>>,
    /// Text written after each bar.
    pub labels: Vec<String>,
}

pub(crate) fn matrix_heatmap(
    title: String,
    unit: &str,
    cells: impl Iterator<Item = ((u32, u32), Option<f64>)>,
) -> Heatmap {
    let cells: BTreeMap<(u32, u32), Option<f64>> = cells.collect();
    let rows: BTreeSet<u32> = cells.keys().map(|k| k.0).collect();
    let cols: BTreeSet<u32> = cells.keys().map(|k| k.1).collect();
    Heatmap {
        title,
        x_label: "memory node".into(),
        y_label: "CPU node".into(),
        unit: unit.into(),
        cols: cols.iter().map(|c| c.to_string()).collect(),
        rows: rows.iter().map(|r| r.to_string()).collect(),
        values: rows
            .iter()
            .map(|r| cols.iter().map(|c| cells.get(&(*r, *c)).copied().flatten()).collect())
            .collect(),
    }
}

/// The remote/local view of a node matrix: each cell divided by its row's
/// local cell (CPU node = memory node). `None` when no row has both a local
/// and a remote cell.
pub(crate) fn ratio_heatmap(hm: &Heatmap, title: &str) -> Option<Heatmap> {
    let mut any_remote = false;
    let values: Vec<Vec<Option<f64>>> = hm
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let row = &hm.values[i];
            let local = hm
                .cols
                .iter()
                .position(|c| c == r)
                .and_then(|j| row.get(j).copied().flatten())
                .filter(|v| *v > 0.0);
            row.iter()
                .enumerate()
                .map(|(j, v)| {
                    let l = local?;
                    if hm.cols.get(j) != Some(r) && v.is_some() {
                        any_remote = true;
                    }
                    v.map(|v| v / l)
                })
                .collect()
        })
        .collect();
    any_remote.then(|| Heatmap {
        title: format!("{title} (remote / local)"),
        unit: "x local".into(),
        values,
        ..hm.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_view_divides_by_the_rows_local_cell() {
        let hm = Heatmap {
            title: "t".into(),
            x_label: "memory node".into(),
            y_label: "CPU node".into(),
            unit: "ns".into(),
            cols: vec!["0".into(), "1".into(), "2".into()],
            rows: vec!["0".into(), "1".into()],
            values: vec![
                vec![Some(100.0), Some(150.0), Some(300.0)],
                vec![Some(160.0), Some(80.0), None],
            ],
        };
        let r = ratio_heatmap(&hm, "Latency").unwrap();
        assert_eq!(r.unit, "x local");
        assert_eq!(r.values[0], vec![Some(1.0), Some(1.5), Some(3.0)]);
        assert_eq!(r.values[1], vec![Some(2.0), Some(1.0), None]);
        // a single node has no remote cell: no ratio view
        let one = Heatmap {
            cols: vec!["0".into()],
            rows: vec!["0".into()],
            values: vec![vec![Some(90.0)]],
            ..hm
        };
        assert!(ratio_heatmap(&one, "Latency").is_none());
    }
}
