//! Measurement behind weighted-interleave advice: the bandwidth matrix the
//! weights are computed from (measured now, or taken from a saved run's
//! figures) and the verification of applied weights (whole-machine triad
//! with weighted interleave, plain interleave and local-only, compared
//! with their noise). The weights themselves are `place::weights`'.

use std::collections::BTreeMap;
use std::time::Duration;

use events::{Observer, StopFlag};
use kernels::Kernel;
use place::weights::Matrix;
use serde::Serialize;
use topo::Topology;

use crate::bw::{self, BwError, BwMode, BwPlan, RepPolicy};
use results::bw::{BwResult, Mode};

/// How long and how large each bandwidth figure is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Bytes per array (`None`: bw's rule, 4x the LLC).
    pub array_bytes: Option<u64>,
    /// Time per figure.
    pub budget: Duration,
}

/// Triad, at least three repetitions, in `modes`.
fn plan(sizing: &Sizing, modes: Vec<BwMode>) -> BwPlan {
    BwPlan {
        modes,
        kernels: vec![Kernel::Triad],
        array_bytes: sizing.array_bytes,
        reps: RepPolicy { min_reps: 3, budget: sizing.budget, ..RepPolicy::default() },
        ..BwPlan::default()
    }
}

/// Measures triad from every CPU node to every memory node (best GB/s of
/// each cell). `None` when `stop` cut the matrix short: a partial matrix
/// gives no advice.
pub fn measure_matrix(
    topo: &Topology,
    sizing: &Sizing,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<Option<Matrix>, BwError> {
    let rs = bw::run_plan(topo, &plan(sizing, vec![BwMode::Matrix]), obs, stop)?;
    if stop.is_stopped() {
        return Ok(None);
    }
    let mut m: Matrix = BTreeMap::new();
    for r in &rs {
        if let (Some(c), Some(n)) = (r.cpu_node, r.mem_node) {
            m.entry(c).or_default().insert(n, r.best_gbs);
        }
    }
    Ok(Some(m))
}

/// One saved bandwidth figure between a CPU node and one memory node (a
/// matrix cell or a local result).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellFigure {
    pub kernel: Kernel,
    pub cpu_node: u32,
    pub mem_node: u32,
    /// Best GB/s (absent in figures that lost it).
    pub best_gbs: Option<f64>,
}

impl CellFigure {
    /// The figures of a saved run's records: its `bw` results with a CPU
    /// node and one memory node (the matrix, or local runs).
    pub fn of_records<'a>(records: impl IntoIterator<Item = &'a results::Record>) -> Vec<Self> {
        records
            .into_iter()
            .filter_map(|r| match r {
                results::Record::Bw(b) => Some(b.as_ref()),
                _ => None,
            })
            .filter(|b| matches!(b.mode, Mode::Matrix | Mode::Local))
            .filter_map(|b| {
                Some(CellFigure {
                    kernel: b.kernel,
                    cpu_node: b.cpu_node?,
                    mem_node: b.mem_node?,
                    best_gbs: results::stats::measured(b.best_gbs),
                })
            })
            .collect()
    }
}

/// The matrix of saved figures: of the kernel present in most of them
/// (triad whenever present), the best figure of each cell. `None` when
/// there is no figure.
pub fn saved_matrix(figures: &[CellFigure]) -> Option<(Kernel, Matrix)> {
    let mut counts: BTreeMap<&str, (Kernel, usize)> = BTreeMap::new();
    for f in figures {
        counts.entry(f.kernel.name()).or_insert((f.kernel, 0)).1 += 1;
    }
    let kernel = if counts.contains_key(Kernel::Triad.name()) {
        Kernel::Triad
    } else {
        counts.values().max_by_key(|(_, c)| *c)?.0
    };
    let mut m: Matrix = BTreeMap::new();
    for f in figures.iter().filter(|f| f.kernel == kernel) {
        let Some(b) = f.best_gbs else { continue };
        let cell = m.entry(f.cpu_node).or_default().entry(f.mem_node).or_insert(0.0);
        *cell = cell.max(b);
    }
    Some((kernel, m))
}

/// One policy's figure in a verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyFigure {
    /// `weighted`, `interleave` or `local-only`.
    pub policy: &'static str,
    pub best_gbs: f64,
    pub noise_pct: Option<f64>,
}

/// Weighted interleave against plain interleave and local-only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verify {
    pub kernel: &'static str,
    pub figures: Vec<VerifyFigure>,
    /// `weighted / interleave - 1`, percent.
    pub gain_vs_interleave_pct: Option<f64>,
    /// `weighted / local-only - 1`, percent.
    pub gain_vs_local_pct: Option<f64>,
    /// Combined noise of the two figures compared, percent.
    pub noise_pct: Option<f64>,
    pub verdict: String,
}

/// Measures whole-machine triad with weighted interleave (the kernel's
/// weights, as they are now), plain interleave and local-only, and states
/// the gain with its noise.
pub fn verify(
    topo: &Topology,
    sizing: &Sizing,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<Verify, BwError> {
    let modes = vec![BwMode::Weighted { required: true }, BwMode::Interleave, BwMode::Global];
    let rs = bw::run_plan(topo, &plan(sizing, modes), obs, stop)?;
    let noise = |r: &BwResult| r.noise();
    let fig = |m: Mode| {
        rs.iter()
            .find(|r| r.mode == m)
            .map(|r| Figure { best_gbs: r.best_gbs, noise_pct: noise(r) })
    };
    Ok(judge(fig(Mode::Weighted), fig(Mode::Interleave), fig(Mode::Global)))
}

/// One measured policy: its best GB/s and noise (percent).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Figure {
    best_gbs: f64,
    noise_pct: Option<f64>,
}

/// The verdict on weighted interleave from the three figures: a gain
/// within the combined noise of weighted and interleave (root of the sum
/// of squares), or within 1%, is no difference.
fn judge(weighted: Option<Figure>, interleave: Option<Figure>, local: Option<Figure>) -> Verify {
    let figures = [(weighted, "weighted"), (interleave, "interleave"), (local, "local-only")]
        .into_iter()
        .filter_map(|(f, policy)| {
            f.map(|f| VerifyFigure { policy, best_gbs: f.best_gbs, noise_pct: f.noise_pct })
        })
        .collect();
    let gain = |x: Option<Figure>| match (weighted, x) {
        (Some(w), Some(x)) if x.best_gbs > 0.0 => Some((w.best_gbs / x.best_gbs - 1.0) * 100.0),
        _ => None,
    };
    let noise_pct = match (weighted.and_then(|f| f.noise_pct), interleave.and_then(|f| f.noise_pct))
    {
        (Some(a), Some(b)) => Some((a * a + b * b).sqrt()),
        _ => None,
    };
    let gi = gain(interleave);
    let verdict = match (gi, noise_pct) {
        (Some(gn), Some(nz)) if gn.abs() <= nz.max(1.0) => format!(
            "no difference beyond the noise: weighted {gn:+.1}% against interleave, noise {nz:.1}%"
        ),
        (Some(gn), Some(nz)) if gn > 0.0 => {
            format!("weighted is {gn:.1}% faster than plain interleave (noise {nz:.1}%)")
        }
        (Some(gn), Some(nz)) => {
            format!("weighted is {:.1}% slower than plain interleave (noise {nz:.1}%)", -gn)
        }
        _ => "not enough figures to compare".to_string(),
    };
    Verify {
        kernel: "triad",
        figures,
        gain_vs_interleave_pct: gi,
        gain_vs_local_pct: gain(local),
        noise_pct,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(kernel: Kernel, c: u32, m: u32, gbs: f64) -> CellFigure {
        CellFigure { kernel, cpu_node: c, mem_node: m, best_gbs: Some(gbs) }
    }

    #[test]
    fn a_saved_matrix_prefers_triad_and_keeps_each_cells_best() {
        let figs = [
            cell(Kernel::Copy, 0, 0, 500.0),
            cell(Kernel::Copy, 0, 1, 500.0),
            cell(Kernel::Triad, 0, 0, 300.0),
            cell(Kernel::Triad, 0, 0, 310.0),
            cell(Kernel::Triad, 1, 1, 150.0),
            CellFigure { kernel: Kernel::Triad, cpu_node: 1, mem_node: 0, best_gbs: None },
        ];
        let (k, m) = saved_matrix(&figs).unwrap();
        assert_eq!(k, Kernel::Triad, "triad wins although copy has as many figures");
        assert_eq!(m[&0], BTreeMap::from([(0, 310.0)]));
        assert_eq!(m[&1], BTreeMap::from([(1, 150.0)]), "a figure without GB/s is no cell");
    }

    #[test]
    fn without_triad_the_most_common_kernel_is_used() {
        let figs = [
            cell(Kernel::Copy, 0, 0, 500.0),
            cell(Kernel::Scale, 0, 0, 400.0),
            cell(Kernel::Scale, 0, 1, 100.0),
        ];
        let (k, m) = saved_matrix(&figs).unwrap();
        assert_eq!(k, Kernel::Scale);
        assert_eq!(m[&0], BTreeMap::from([(0, 400.0), (1, 100.0)]));
        assert_eq!(saved_matrix(&[]), None);
    }

    fn fig(best_gbs: f64, noise: f64) -> Option<Figure> {
        Some(Figure { best_gbs, noise_pct: Some(noise) })
    }

    #[test]
    fn a_gain_inside_the_noise_is_no_difference() {
        // +2% against noise sqrt(3^2 + 4^2) = 5%.
        let v = judge(fig(102.0, 3.0), fig(100.0, 4.0), fig(80.0, 1.0));
        assert!((v.noise_pct.unwrap() - 5.0).abs() < 1e-9, "{v:?}");
        assert!((v.gain_vs_interleave_pct.unwrap() - 2.0).abs() < 1e-9, "{v:?}");
        assert!((v.gain_vs_local_pct.unwrap() - 27.5).abs() < 1e-9, "{v:?}");
        assert!(v.verdict.starts_with("no difference beyond the noise"), "{}", v.verdict);
        let names: Vec<_> = v.figures.iter().map(|f| f.policy).collect();
        assert_eq!(names, ["weighted", "interleave", "local-only"]);
    }

    #[test]
    fn gains_beyond_the_noise_are_called_faster_or_slower() {
        let v = judge(fig(120.0, 1.0), fig(100.0, 1.0), None);
        assert!(v.verdict.starts_with("weighted is 20.0% faster"), "{}", v.verdict);
        assert_eq!(v.gain_vs_local_pct, None);
        let v = judge(fig(90.0, 1.0), fig(100.0, 1.0), None);
        assert!(v.verdict.starts_with("weighted is 10.0% slower"), "{}", v.verdict);
        // A 0.5% noise still needs more than 1% to call a difference.
        let v = judge(fig(100.9, 0.3), fig(100.0, 0.3), None);
        assert!(v.verdict.starts_with("no difference"), "{}", v.verdict);
    }

    #[test]
    fn a_missing_figure_or_noise_gives_no_verdict() {
        let v = judge(fig(120.0, 1.0), None, fig(80.0, 1.0));
        assert_eq!(v.verdict, "not enough figures to compare");
        assert_eq!(v.figures.len(), 2);
        let v = judge(Some(Figure { best_gbs: 120.0, noise_pct: None }), fig(100.0, 1.0), None);
        assert_eq!(v.verdict, "not enough figures to compare");
        assert_eq!(v.noise_pct, None);
    }
}
