//! Chart descriptions, independent of how they are drawn (the HTML report
//! draws them as inline SVG, see [`crate::svg`]).

/// A chart of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Heatmap(Heatmap),
    Xy(XyChart),
    Bars(BarChart),
}

impl Chart {
    pub fn title(&self) -> &str {
        match self {
            Chart::Heatmap(h) => &h.title,
            Chart::Xy(x) => &x.title,
            Chart::Bars(b) => &b.title,
        }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base-2 logarithmic (working-set sizes).
    Log2,
}

/// An axis of an [`XyChart`].
#[derive(Debug, Clone, PartialEq)]
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
}

impl Axis {
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            bytes: false,
            from_zero: true,
            integer: false,
        }
    }

    /// A linear axis from zero with ticks at whole numbers only.
    pub fn integer(label: impl Into<String>) -> Axis {
        Axis { integer: true, ..Axis::linear(label) }
    }

    pub fn log2_bytes(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log2,
            bytes: true,
            from_zero: false,
            integer: false,
        }
    }
}

/// A named set of points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    /// `(x, y)`, drawn in x order.
    pub points: Vec<(f64, f64)>,
    /// Join the points with a line.
    pub line: bool,
}

/// A vertical line at `x` with a label (e.g. a cache size).
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

/// Points and lines against two axes.
#[derive(Debug, Clone, PartialEq)]
pub struct XyChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub markers: Vec<Marker>,
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
