//! Which inputs of a comparison were marked: for each metric a study
//! compares and each run of each group, the results the run's figure is
//! drawn from that [`crate::trust`] does not trust as they stand
//! (disturbed, noisy, unsettled, stalled). A verdict on such inputs says
//! so: it compares figures that other work may have held back.
//!
//! The results read per metric are the ones the metric is drawn from: the
//! headline's results ([`crate::metrics`], each the most trustworthy
//! measurement of its quantity), the matrix cells for the figures by
//! relation, the per-CPU chases to the node for the per-CPU figures.
//! `exec` and `gpu` figures carry no such mark.

use results::bw::{self, BwResult};
use results::lat::{self, LatResult};
use results::run::{LoadedRun, RunId};
use results::scope::MemoryOf;

use crate::data::RunData;
use crate::metric_id::{Fixed, MetricId};
use crate::metrics::{self, MetricKey};
use crate::subject::Subject;
use crate::trust::{self, Distrust};

/// One marked result behind a compared figure: which result, and why it
/// is not trusted as it stands (`report::trust` words it).
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// Which result (`report::subject::marked` words it: `bw global
    /// triad, 2 thread(s)`).
    pub what: Subject,
    pub distrust: Distrust,
}

impl Mark {
    fn of(what: Subject, distrust: Distrust) -> Mark {
        Mark { what, distrust }
    }
}

/// A run of a group whose figure of a metric rests on marked results.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkedInput {
    /// The study's metric.
    pub metric: MetricId,
    /// The group's index.
    pub group: usize,
    pub run: RunId,
    pub marks: Vec<Mark>,
}

fn bw_mark(p: &BwResult) -> Option<Mark> {
    Some(Mark::of(Subject::bw(p), trust::of_bw(p)?))
}

fn chase_mark(p: &LatResult) -> Option<Mark> {
    Some(Mark::of(Subject::chase(p), trust::of_chase(p)?))
}

/// The results `id`'s figure is drawn from in `d`, those marked.
pub fn marks_of(id: &MetricId, d: &RunData) -> Vec<Mark> {
    let bw_of = |v: Vec<&BwResult>| v.into_iter().filter_map(bw_mark).collect::<Vec<_>>();
    let lat_cells = |diag: Option<bool>| {
        let cells = metrics::lat_matrix(d);
        let mut v: Vec<&LatResult> = cells
            .iter()
            .filter(|((c, m), _)| !matches!(diag, Some(want) if (c == m) != want))
            .map(|(_, p)| *p)
            .collect();
        if cells.is_empty() {
            // no matrix: the points, else the per-CPU chases
            v = d.chase_mode(lat::Mode::Point).collect();
            if v.is_empty() {
                v = d.chase_mode(lat::Mode::PerCpu).collect();
            }
        }
        v.into_iter()
            .map(|p| trust::trusted_chase(d, p).chosen)
            .filter_map(chase_mark)
            .collect::<Vec<_>>()
    };
    let matrix_bw = |diag: bool| -> Vec<&BwResult> {
        metrics::bw_matrix(d)
            .1
            .into_iter()
            .filter(|((c, m), _)| (c == m) == diag)
            .map(|(_, p)| p)
            .collect()
    };
    // Package-scope results (`run`'s bw-package, bw-cross-package and
    // lat-package steps) on `memory`: what the package figures read.
    let pkg_bw = |memory: MemoryOf| -> Vec<&BwResult> {
        d.bw_mode(bw::Mode::Package)
            .filter(|b| b.scope.as_ref().is_some_and(|s| s.memory == memory))
            .collect()
    };
    let pkg_lat = |memory: Option<MemoryOf>| -> Vec<Mark> {
        d.chase_mode(lat::Mode::Package)
            .filter(|c| c.scope.as_ref().is_some_and(|s| memory.is_none_or(|m| s.memory == m)))
            .filter_map(chase_mark)
            .collect()
    };
    match id {
        MetricId::Headline(k) => match k {
            MetricKey::LocalBw => bw_of(metrics::local_points(d).1),
            MetricKey::GlobalBw => {
                bw_of(metrics::best_of_mode(d, bw::Mode::Global).into_iter().collect())
            }
            MetricKey::InterleaveBw => {
                bw_of(metrics::best_of_mode(d, bw::Mode::Interleave).into_iter().collect())
            }
            MetricKey::CrossBw => bw_of(matrix_bw(false)),
            MetricKey::LocalLat => lat_cells(Some(true)),
            MetricKey::RemoteLat => lat_cells(Some(false)),
            MetricKey::LoadedLatPeak => metrics::peak_loaded(d)
                .and_then(|p| Some(Mark::of(Subject::loaded(p), trust::of_loaded(p)?)))
                .into_iter()
                .collect(),
        },
        MetricId::Fixed(f) => match f {
            Fixed::LocalBwPkg if !pkg_bw(MemoryOf::OwnPackage).is_empty() => {
                let mut v = pkg_bw(MemoryOf::OwnPackage);
                v.extend(metrics::best_of_mode(d, bw::Mode::Global));
                bw_of(v)
            }
            Fixed::LocalBwPkg | Fixed::LocalBwPerW => {
                match metrics::best_of_mode(d, bw::Mode::Global) {
                    Some(g) if *f == Fixed::LocalBwPkg => bw_of(vec![g]),
                    _ => bw_of(metrics::local_points(d).1),
                }
            }
            Fixed::PkgInterleaveBw => bw_of(pkg_bw(MemoryOf::OwnPackage)),
            Fixed::CrossPkgBw if !pkg_bw(MemoryOf::OtherPackage).is_empty() => {
                bw_of(pkg_bw(MemoryOf::OtherPackage))
            }
            Fixed::CrossPkgBw | Fixed::NeighbourBw | Fixed::TierBw => bw_of(matrix_bw(false)),
            Fixed::PkgLat => pkg_lat(Some(MemoryOf::OwnPackage)),
            Fixed::CrossPkgLat => pkg_lat(Some(MemoryOf::OtherPackage)),
            Fixed::SpreadLat if !pkg_lat(None).is_empty() => pkg_lat(None),
            Fixed::NeighbourLat | Fixed::TierLat | Fixed::OtherNodeLat => lat_cells(Some(false)),
            Fixed::ThreadLat | Fixed::SpreadLat | Fixed::RemotePenalty => lat_cells(None),
        },
        MetricId::PerCpu { node, .. } => d
            .chase_mode(lat::Mode::PerCpu)
            .filter(|p| node.is_none() || p.mem_node == *node)
            .filter_map(chase_mark)
            .collect(),
        _ => Vec::new(),
    }
}

/// Every run of every group whose figure of one of `metrics` (the
/// study's metrics) rests on marked results: group `i` is `groups[i]`.
pub fn marked_inputs<'a>(
    groups: impl IntoIterator<Item = &'a [LoadedRun]>,
    metrics: &[MetricId],
) -> Vec<MarkedInput> {
    let mut out = Vec::new();
    for (group, runs) in groups.into_iter().enumerate() {
        for r in runs {
            let d = RunData::of(r);
            for metric in metrics {
                let marks = marks_of(metric, &d);
                if !marks.is_empty() {
                    out.push(MarkedInput {
                        metric: metric.clone(),
                        group,
                        run: r.summary.id,
                        marks,
                    });
                }
            }
        }
    }
    out
}
