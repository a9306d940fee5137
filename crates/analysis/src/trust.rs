//! Whether a figure can be trusted as it stands: a record that says
//! `stable: false` was either disturbed (samples or repetitions discarded
//! because the thread waited for its CPU) or noisy (the repetitions never
//! settled). The report marks such figures `(disturbed)` or `(noisy)`
//! (`report::trust` words them).
//!
//! Figures of one run can also contradict each other: a thread-scaling
//! point on some CPUs cannot beat, beyond the noise, what local bandwidth
//! reached with the same kernel on those CPUs and more
//! ([`contradictions`]). One of the two was held back (by other work, or
//! a repetition the stopping rule took as settled), so both are flagged.

use results::bw::{BwResult, Mode};
use results::disturbance::{Cause, Disturbance};
use results::lat::{self, LatResult, LoadedPoint};

use crate::data::RunData;

/// Why a figure is not to be trusted as it stands: samples discarded or a
/// busy CPU (disturbed), repetitions that never settled (noisy), samples
/// that spread with nothing lost (unsettled), a load that stalled
/// (stalled). `report::trust` words it (`disturbed` or `noisy`, and the
/// cause).
#[derive(Debug, Clone, PartialEq)]
pub enum Distrust {
    /// Samples or repetitions were discarded, or the thread waited for its
    /// CPU (the CPU and the share of time lost), or too few clean samples
    /// were kept.
    Disturbed(Cause),
    /// The best repetitions still spread this much (%) when the time ran
    /// out.
    Noisy { top_spread_pct: f64 },
    /// Nothing was discarded and the CPU was not busy, yet the figure was
    /// marked: its samples spread this much (%).
    Unsettled { spread_pct: f64 },
    /// A loaded point with nothing lost by its chase: a load thread moved
    /// no line while latency was chased, so the point understates its load.
    Stalled,
}

/// The distrust of a bandwidth result (`stable: false`): disturbed when
/// it lost samples to other work, else noisy.
pub fn of_bw(p: &BwResult) -> Option<Distrust> {
    if p.stable {
        return None;
    }
    match &p.disturbance {
        Some(d) if d.lost_anything() => Some(Distrust::Disturbed(d.cause())),
        _ => Some(Distrust::Noisy { top_spread_pct: p.top_spread_pct }),
    }
}

/// The distrust of a latency figure from its `stable`, `disturbance` and
/// spread: disturbed when it lost samples or time to other work (or kept
/// too few samples), else unsettled at its spread.
pub fn of_lat(stable: bool, d: Option<&Disturbance>, spread_pct: f64) -> Option<Distrust> {
    if stable {
        return None;
    }
    Some(match d {
        Some(d) if d.lost_anything() => Distrust::Disturbed(d.cause()),
        Some(_) => Distrust::Unsettled { spread_pct },
        None => Distrust::Disturbed(Cause::TooFewClean),
    })
}

/// The distrust of a chase.
pub fn of_chase(p: &LatResult) -> Option<Distrust> {
    of_lat(p.stable, p.disturbance.as_ref(), p.spread_pct)
}

/// The distrust of a loaded-latency point: a loaded point whose chase lost
/// nothing was marked because its load stalled.
pub fn of_loaded(p: &LoadedPoint) -> Option<Distrust> {
    match of_lat(p.stable, p.disturbance.as_ref(), p.spread_pct)? {
        Distrust::Unsettled { .. } if !p.idle => Some(Distrust::Stalled),
        other => Some(other),
    }
}

/// How much tighter another measurement's spread must be to be taken in
/// place of the one that defines a figure (both clean, or both marked):
/// at most half of it, and this many percentage points less. Spreads of
/// 1.0% and 1.1% are the same spread; 3% against 63.7% is not.
pub const TIGHTER_MIN_POINTS: f64 = 5.0;

/// Whether measurement `c` (clean or not, its spread %) is to be trusted
/// more than `b`: clean where `b` is marked, or as clean with a spread at
/// most half of `b`'s and [`TIGHTER_MIN_POINTS`] less.
fn more_trusted(c_stable: bool, c_spread: f64, b_stable: bool, b_spread: f64) -> bool {
    let spread = |s: f64| if s.is_finite() && s >= 0.0 { s } else { f64::INFINITY };
    let (c_spread, b_spread) = (spread(c_spread), spread(b_spread));
    if c_stable != b_stable {
        return c_stable;
    }
    c_spread <= b_spread / 2.0 && b_spread - c_spread >= TIGHTER_MIN_POINTS
}

/// The most trustworthy of `all` (the defining measurement first): each
/// other one taken in its place when [`more_trusted`] than the one held.
fn pick<'a, T>(all: &[&'a T], stable: impl Fn(&T) -> bool, spread: impl Fn(&T) -> f64) -> &'a T {
    let mut best = all[0];
    for c in &all[1..] {
        if more_trusted(stable(c), spread(c), stable(best), spread(best)) {
            best = c;
        }
    }
    best
}

/// Whether two chases measure the same quantity: the same CPU, memory
/// node, working-set size, stride and page kind. The mode (matrix, point,
/// per-CPU, sweep) is only how the run reached it; the stride keeps a
/// prefetch-assisted figure (the cache stride) apart from a DRAM one.
pub fn same_chase(a: &LatResult, b: &LatResult) -> bool {
    a.cpu == b.cpu
        && a.mem_node == b.mem_node
        && a.interleave == b.interleave
        && a.size_bytes == b.size_bytes
        && a.stride_bytes == b.stride_bytes
        && a.page_size == b.page_size
}

/// A figure taken for a quantity, and the other measurements of the same
/// quantity in the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Taken<'a, T> {
    /// The measurement the figure takes.
    pub chosen: &'a T,
    /// The measurement the figure is defined by (the matrix cell, the
    /// local result), when another was taken in its place.
    pub instead_of: Option<&'a T>,
    /// Every other measurement of the same quantity, in the order measured.
    pub others: Vec<&'a T>,
}

/// The measurements of `p`'s quantity in the run (matrix, point, per-CPU
/// and sweep chases: [`same_chase`]), `p` first.
pub fn chase_candidates<'a>(d: &'a RunData, p: &'a LatResult) -> Vec<&'a LatResult> {
    let mut v = vec![p];
    v.extend(d.chases.iter().filter(|c| {
        !std::ptr::eq(*c, p)
            && c.mode != lat::Mode::C2c
            && c.median_ns.is_finite()
            && c.median_ns > 0.0
            && same_chase(c, p)
    }));
    v
}

/// The most trustworthy measurement of `p`'s quantity ([`chase_candidates`],
/// [`more_trusted`]): `p` itself unless another is clean where it is not,
/// or as clean with a much tighter spread.
pub fn trusted_chase<'a>(d: &'a RunData, p: &'a LatResult) -> Taken<'a, LatResult> {
    let all = chase_candidates(d, p);
    let best = pick(&all, |c| c.stable, |c| c.spread_pct);
    let others = all.iter().copied().filter(|c| !std::ptr::eq(*c, best)).collect();
    Taken { chosen: best, instead_of: (!std::ptr::eq(best, p)).then_some(p), others }
}

/// Whether two bandwidth results measure the same quantity: the same
/// kernel, stores, instruction set, threads on the same CPUs (and CPU node:
/// a hand-made record may name no CPUs), memory node and array size,
/// whatever mode reached it (local, matrix diagonal, scaling).
pub fn same_bw(a: &BwResult, b: &BwResult) -> bool {
    a.kernel == b.kernel
        && a.stores == b.stores
        && a.isa == b.isa
        && a.threads == b.threads
        && a.cpus == b.cpus
        && a.cpu_node == b.cpu_node
        && a.mem_node == b.mem_node
        && a.mem_nodes == b.mem_nodes
        && a.array_bytes == b.array_bytes
        && a.pages == b.pages
}

/// The most trustworthy measurement of `p`'s bandwidth quantity among the
/// run's local, matrix and scaling results ([`same_bw`], [`more_trusted`]
/// on the spread of the repetitions).
pub fn trusted_bw<'a>(d: &'a RunData, p: &'a BwResult) -> Taken<'a, BwResult> {
    let mut all = vec![p];
    all.extend(d.bw.iter().filter(|b| {
        !std::ptr::eq(*b, p)
            && matches!(b.mode, Mode::Local | Mode::Matrix | Mode::Scaling)
            && b.best_gbs.is_finite()
            && b.best_gbs > 0.0
            && same_bw(b, p)
    }));
    let best = pick(&all, |c| c.stable, |c| c.spread_pct);
    let others = all.iter().copied().filter(|c| !std::ptr::eq(*c, best)).collect();
    Taken { chosen: best, instead_of: (!std::ptr::eq(best, p)).then_some(p), others }
}

/// The least excess, %, called a contradiction whatever the noise: two
/// bests of the same work on the same CPUs differ by a few % from turbo
/// and timer granularity alone.
pub const CONTRADICTION_MIN_PCT: f64 = 5.0;

/// A scaling point above the local figure of the same CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Contradiction<'a> {
    /// The thread-scaling point.
    pub scaling: &'a BwResult,
    /// The local result on a superset of its CPUs, same kernel, stores and
    /// memory node (the best of such, when there are several).
    pub local: &'a BwResult,
    /// How far the scaling point's best is above the local best, %.
    pub excess_pct: f64,
    /// What the noise allows, %: the two results' noise of their best
    /// repetitions added, at least [`CONTRADICTION_MIN_PCT`].
    pub allowed_pct: f64,
}

/// The noise of a best repetition, %: the spread of the best repetitions
/// (what the stopping rule settles), else three robust CVs of the spread
/// of all (records without the top spread).
pub fn best_noise_pct(p: &BwResult) -> f64 {
    if p.top_spread_pct.is_finite() && p.top_spread_pct > 0.0 {
        return p.top_spread_pct;
    }
    p.noise().map_or(0.0, |n| 3.0 * n)
}

/// Scaling points that beat, beyond the noise, the local figure measured
/// with the same kernel and stores on a superset of their CPUs and the same
/// memory node: more threads on the same memory never lose that much, so
/// one of the two figures is wrong.
pub fn contradictions(d: &RunData) -> Vec<Contradiction<'_>> {
    let mut out = Vec::new();
    for s in d.bw_mode(Mode::Scaling) {
        if !(s.best_gbs.is_finite() && s.best_gbs > 0.0) || s.cpus.is_empty() {
            continue;
        }
        let local = d
            .bw_mode(Mode::Local)
            .filter(|l| {
                l.kernel == s.kernel
                    && l.stores == s.stores
                    && l.mem_node == s.mem_node
                    && l.best_gbs.is_finite()
                    && l.best_gbs > 0.0
                    && s.cpus.is_subset(&l.cpus)
            })
            .max_by(|a, b| a.best_gbs.total_cmp(&b.best_gbs));
        let Some(l) = local else { continue };
        let excess_pct = (s.best_gbs / l.best_gbs - 1.0) * 100.0;
        let allowed_pct = (best_noise_pct(s) + best_noise_pct(l)).max(CONTRADICTION_MIN_PCT);
        if excess_pct > allowed_pct {
            out.push(Contradiction { scaling: s, local: l, excess_pct, allowed_pct });
        }
    }
    out
}

/// The noise of a latency figure, %: three robust CVs of its samples
/// (most of a normal sample's range), 0 when none was recorded.
pub fn lat_noise_pct(noise_pct: f64) -> f64 {
    if noise_pct.is_finite() && noise_pct > 0.0 {
        3.0 * noise_pct
    } else {
        0.0
    }
}

/// Latency figures of one run that contradict each other beyond their
/// noise.
#[derive(Debug, Clone, PartialEq)]
pub enum LatContradiction<'a> {
    /// A loaded point's latency below the idle latency of the same chase
    /// (the run's trusted measurement of that CPU, memory and size, else
    /// the curve's own idle point): a load never makes memory faster, so
    /// one of the two was held back.
    LoadedBelowIdle {
        loaded: &'a LoadedPoint,
        idle_ns: f64,
        /// Where the idle figure came from: a chase's mode (the matrix,
        /// the sweep...) or the curve's own idle point.
        idle_from: IdleFrom,
        below_pct: f64,
        allowed_pct: f64,
    },
    /// A figure outside every other measurement of its quantity (two at
    /// least), beyond their noise.
    Outside {
        figure: &'a LatResult,
        /// The other measurements' lowest and highest medians, ns.
        others: (f64, f64),
        count: usize,
        off_pct: f64,
        allowed_pct: f64,
    },
}

/// Where the idle figure a loaded point is held against came from
/// (`report::trust::idle_from` words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleFrom {
    /// The run's trusted chase of the same CPU, memory and size, by its
    /// mode (`report::trust::chase_source`: `the matrix`, `the sweep`...).
    Chase(lat::Mode),
    /// The loaded curve's own idle point.
    CurveIdle,
}

/// Latency figures that contradict each other: loaded points below the
/// idle latency of their chase, and figures of the matrix or a point
/// (what the headlines and their tables show) outside every other
/// measurement of the same quantity. Each beyond the two figures' noise
/// ([`lat_noise_pct`] added, at least [`CONTRADICTION_MIN_PCT`]).
pub fn lat_contradictions(d: &RunData) -> Vec<LatContradiction<'_>> {
    let mut out = Vec::new();
    // The highest load of each curve (CPU, memory, mix): what its
    // "at peak" figure shows.
    let mut peaks: Vec<&LoadedPoint> = Vec::new();
    for p in d.loaded.iter().filter(|p| !p.idle && p.latency().is_some() && p.load_gbs > 0.0) {
        match peaks
            .iter_mut()
            .find(|q| q.cpu == p.cpu && q.mem_node == p.mem_node && q.load_kind == p.load_kind)
        {
            Some(q) if q.load_gbs >= p.load_gbs => {}
            Some(q) => *q = p,
            None => peaks.push(p),
        }
    }
    for p in peaks {
        let Some(ns) = p.latency() else { continue };
        let chase = d.chases.iter().find(|c| {
            c.cpu == p.cpu
                && c.mem_node == p.mem_node
                && c.size_bytes == p.size_bytes
                && Some(c.stride_bytes) == p.stride_bytes
                && c.page_size == p.page_size
                && c.interleave.is_none()
                && c.median_ns.is_finite()
        });
        let idle = match chase {
            Some(c) => {
                let t = trusted_chase(d, c).chosen;
                Some((t.median_ns, IdleFrom::Chase(t.mode), t.noise_pct))
            }
            None => d
                .loaded
                .iter()
                .find(|q| {
                    q.idle
                        && q.cpu == p.cpu
                        && q.mem_node == p.mem_node
                        && q.load_kind == p.load_kind
                })
                .and_then(|q| Some((q.latency()?, IdleFrom::CurveIdle, q.spread_pct / 3.0))),
        };
        let Some((idle_ns, idle_from, idle_noise)) = idle else { continue };
        if idle_ns.is_nan() || idle_ns <= 0.0 {
            continue;
        }
        let below_pct = (1.0 - ns / idle_ns) * 100.0;
        let own = p.noise().unwrap_or(0.0);
        let allowed_pct =
            (lat_noise_pct(own) + lat_noise_pct(idle_noise)).max(CONTRADICTION_MIN_PCT);
        if below_pct > allowed_pct {
            out.push(LatContradiction::LoadedBelowIdle {
                loaded: p,
                idle_ns,
                idle_from,
                below_pct,
                allowed_pct,
            });
        }
    }
    // Figures outside the others of their quantity.
    let mut seen: Vec<*const LatResult> = Vec::new();
    for c in d.chases.iter().filter(|c| matches!(c.mode, lat::Mode::Matrix | lat::Mode::Point)) {
        let taken = trusted_chase(d, c);
        for x in [Some(c), (!std::ptr::eq(taken.chosen, c)).then_some(taken.chosen)]
            .into_iter()
            .flatten()
        {
            if seen.contains(&(x as *const LatResult)) || !x.median_ns.is_finite() {
                continue;
            }
            seen.push(x);
            let rest: Vec<&LatResult> =
                chase_candidates(d, c).into_iter().filter(|o| !std::ptr::eq(*o, x)).collect();
            if rest.len() < 2 {
                continue;
            }
            let lo = rest.iter().map(|o| o.median_ns).fold(f64::INFINITY, f64::min);
            let hi = rest.iter().map(|o| o.median_ns).fold(f64::NEG_INFINITY, f64::max);
            let (off_pct, near) = if x.median_ns > hi {
                ((x.median_ns / hi - 1.0) * 100.0, hi)
            } else if x.median_ns < lo {
                ((1.0 - x.median_ns / lo) * 100.0, lo)
            } else {
                continue;
            };
            let near_noise = rest
                .iter()
                .filter(|o| o.median_ns == near)
                .map(|o| o.noise_pct)
                .fold(0.0, f64::max);
            let allowed_pct =
                (lat_noise_pct(x.noise_pct) + lat_noise_pct(near_noise)).max(CONTRADICTION_MIN_PCT);
            if off_pct > allowed_pct {
                out.push(LatContradiction::Outside {
                    figure: x,
                    others: (lo, hi),
                    count: rest.len(),
                    off_pct,
                    allowed_pct,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
    use results::Record;
    use serde_json::json;

    #[test]
    fn unstable_bandwidth_is_disturbed_when_it_lost_samples_else_noisy() {
        let d = data(vec![
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": true}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": false,
                "disturbance": {"clean": 2, "disturbed": 9, "lost_pct": 48.2, "busiest_cpu": 0,
                "involuntary_switches": 3, "migrations": 0, "source": "run-delay"}}),
            ),
            rec(
                "bw",
                json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0, "stable": false,
                "top_spread_pct": 7.5}),
            ),
        ]);
        assert_eq!(of_bw(&d.bw[0]), None);
        assert_eq!(
            of_bw(&d.bw[1]),
            Some(Distrust::Disturbed(Cause::Lost {
                waited: Some(results::disturbance::Waited::Busy { cpu: Some(0), lost_pct: 48.2 }),
                migrations: 0,
                discarded: 9,
                samples: 11
            }))
        );
        assert_eq!(of_bw(&d.bw[2]), Some(Distrust::Noisy { top_spread_pct: 7.5 }));
        assert_eq!(of_lat(true, None, 5.0), None);
        assert_eq!(of_lat(false, None, 5.0), Some(Distrust::Disturbed(Cause::TooFewClean)));
    }

    /// A chase of CPU 0 to node 0, 512 MiB at stride `stride`.
    fn chase(mode: &str, ns: f64, spread: f64, stable: bool, stride: usize) -> Record {
        let disturbance = if stable {
            json!({"clean": 11, "disturbed": 0, "lost_pct": 0.0, "involuntary_switches": 0,
                   "migrations": 0, "source": "run-delay"})
        } else {
            json!({"clean": 5, "disturbed": 7, "lost_pct": 66.0, "busiest_cpu": 0,
                   "involuntary_switches": 9, "migrations": 0, "source": "run-delay"})
        };
        rec(
            "lat",
            json!({"mode": mode, "cpu": 0, "cpu_node": 0, "mem_node": 0, "median_ns": ns,
                   "size_bytes": 536870912u64, "stride_bytes": stride, "page_size": "4k",
                   "spread_pct": spread, "noise_pct": 1.0, "stable": stable,
                   "disturbance": disturbance}),
        )
    }

    /// The run: the matrix cell at 294 ns, disturbed, 63.7%
    /// spread; the per-CPU chase and the sweep's 512 MiB point of the same
    /// CPU, memory and stride clean at 137 and 144 ns; the sweep's
    /// cache-stride point (prefetch-assisted) at 100 ns. The headline takes
    /// the clean per-CPU chase, never the prefetch-assisted one, and says
    /// what it took it in place of; the matrix cell, outside both other
    /// measurements, contradicts them.
    #[test]
    fn the_headline_takes_the_most_trustworthy_measurement_of_its_quantity() {
        let d = data(vec![
            chase("matrix", 294.0, 63.7, false, 256),
            chase("sweep", 100.0, 1.0, true, 64),
            chase("per-cpu", 137.0, 3.0, true, 256),
            chase("sweep", 144.0, 2.0, true, 256),
        ]);
        let m = crate::metrics::metrics(&d);
        assert_eq!(m[&crate::metrics::MetricKey::LocalLat].value, 137.0);
        let t = trusted_chase(&d, &d.chases[0]);
        assert_eq!(t.chosen.median_ns, 137.0);
        assert_eq!(t.instead_of.map(|p| p.median_ns), Some(294.0));
        assert_eq!(t.others.len(), 2, "the matrix and the 512 MiB sweep point, not the 64 B one");
        let c = lat_contradictions(&d);
        assert!(
            c.iter()
                .any(|c| matches!(c, LatContradiction::Outside { figure, others, count: 2, .. }
                if figure.median_ns == 294.0 && *others == (137.0, 144.0))),
            "{c:?}"
        );
    }

    /// Among measurements equally clean, only a much tighter spread (at
    /// most half, 5 points less) takes the figure: 1.0% against 1.1% is
    /// the same spread.
    #[test]
    fn only_a_much_tighter_spread_takes_the_place_of_the_defining_measurement() {
        let same = data(vec![
            chase("matrix", 90.0, 1.1, true, 256),
            chase("per-cpu", 91.0, 1.0, true, 256),
        ]);
        assert_eq!(trusted_chase(&same, &same.chases[0]).chosen.median_ns, 90.0);
        let wide = data(vec![
            chase("matrix", 90.0, 30.0, true, 256),
            chase("per-cpu", 91.0, 4.0, true, 256),
        ]);
        assert_eq!(trusted_chase(&wide, &wide.chases[0]).chosen.median_ns, 91.0);
        // a clean one wins over a marked one whatever the spreads
        let marked = data(vec![
            chase("matrix", 90.0, 1.0, false, 256),
            chase("per-cpu", 91.0, 9.0, true, 256),
        ]);
        assert_eq!(trusted_chase(&marked, &marked.chases[0]).chosen.median_ns, 91.0);
    }

    /// A matrix cell of another CPU node is another quantity, even where the
    /// records name no CPUs (hand-made or imported payloads): the local
    /// figure of node 0 never takes node 1's cell into node 0.
    #[test]
    fn another_cpu_node_is_another_bandwidth_quantity() {
        let b = |mode: &str, c: u32, m: u32, best: f64, spread: f64| {
            rec(
                "bw",
                json!({"mode": mode, "kernel": "triad", "cpu_node": c, "mem_node": m,
                       "threads": 16, "best_gbs": best, "spread_pct": spread}),
            )
        };
        let d = data(vec![
            b("local", 0, 0, 65.9, 80.0),
            b("matrix", 1, 0, 57.9, 1.4),
            b("matrix", 0, 0, 101.3, 1.4),
        ]);
        let t = trusted_bw(&d, &d.bw[0]);
        assert_eq!(t.chosen.best_gbs, 101.3, "the same node's diagonal, much tighter");
        assert_eq!(t.others.len(), 1);
    }

    /// A load never makes memory faster: the loaded curve's peak below the
    /// idle latency of its chase, beyond the noise, is a contradiction.
    #[test]
    fn loaded_latency_below_idle_is_a_contradiction() {
        let loaded = |ns: f64, gbs: f64, idle: bool| {
            rec(
                "lat",
                json!({"mode": "loaded", "cpu": 0, "mem_node": 0, "idle": idle, "delay": 0,
                       "latency_ns": ns, "median_ns": ns, "load_gbs": gbs, "spread_pct": 2.0,
                       "size_bytes": 536870912u64, "stride_bytes": 256, "page_size": "4k",
                       "load_kind": "read", "stable": true}),
            )
        };
        let d = data(vec![
            chase("matrix", 294.0, 2.0, true, 256),
            loaded(140.0, 0.0, true),
            loaded(137.0, 9.5, false),
        ]);
        let c = lat_contradictions(&d);
        assert!(
            c.iter().any(|c| matches!(c, LatContradiction::LoadedBelowIdle { idle_ns, idle_from: IdleFrom::Chase(lat::Mode::Matrix), .. } if *idle_ns == 294.0)),
            "{c:?}"
        );
        // Above idle: none.
        let d = data(vec![chase("matrix", 130.0, 2.0, true, 256), loaded(137.0, 9.5, false)]);
        assert!(lat_contradictions(&d).is_empty());
    }

    /// The words follow the cause: a chase marked with nothing discarded
    /// and no time lost is unsettled (noisy), a loaded point so marked
    /// stalled; one that lost samples is disturbed.
    #[test]
    fn a_flag_says_what_caused_it() {
        let quiet = json!({"clean": 20, "disturbed": 0, "lost_pct": 0.3, "busiest_cpu": 0,
                           "involuntary_switches": 2, "migrations": 0, "source": "run-delay"});
        let d = data(vec![
            rec(
                "lat",
                json!({"mode": "matrix", "cpu": 0, "mem_node": 0, "median_ns": 294.0,
                               "spread_pct": 64.0, "stable": false, "disturbance": quiet}),
            ),
            rec(
                "lat",
                json!({"mode": "loaded", "cpu": 0, "mem_node": 0, "idle": false,
                               "delay": 10, "latency_ns": 150.0, "load_gbs": 5.0,
                               "stable": false, "disturbance": quiet}),
            ),
        ]);
        let c = of_chase(&d.chases[0]).unwrap();
        assert_eq!(c, Distrust::Unsettled { spread_pct: 64.0 });
        assert_eq!(of_loaded(&d.loaded[0]), Some(Distrust::Stalled));
    }

    fn bw_at(mode: &str, cpus: &str, threads: usize, best: f64, top: f64) -> Record {
        rec(
            "bw",
            json!({"mode": mode, "kernel": "triad", "stores": "nt", "cpus": cpus,
                "threads": threads, "cpu_node": 0, "mem_node": 0, "best_gbs": best,
                "spread_pct": 3.0, "top_spread_pct": top, "reps": 20, "stable": true}),
        )
    }

    /// The run: 2-thread scaling at 103 GB/s where local triad on
    /// the same CPUs reached 53.6.
    #[test]
    fn scaling_above_local_on_the_same_cpus_is_a_contradiction() {
        let d = data(vec![
            bw_at("local", "0-1", 2, 53.6, 2.0),
            bw_at("scaling", "0", 1, 50.0, 2.0),
            bw_at("scaling", "0-1", 2, 103.0, 2.0),
        ]);
        let c = contradictions(&d);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].scaling.threads, c[0].local.best_gbs), (2, 53.6));
        assert!((c[0].excess_pct - (103.0 / 53.6 - 1.0) * 100.0).abs() < 1e-9);
        assert_eq!(c[0].allowed_pct, 5.0);
    }

    /// Within the noise, on other CPUs, another kernel or other stores:
    /// no contradiction.
    #[test]
    fn what_the_noise_allows_or_other_work_is_no_contradiction() {
        // 8% above, but the two bests wobble 6% + 4%.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 6.0), bw_at("scaling", "0-1", 2, 54.0, 4.0)]);
        assert!(contradictions(&d).is_empty());
        // The same 8% with settled bests is one.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), bw_at("scaling", "0-1", 2, 54.0, 1.0)]);
        assert_eq!(contradictions(&d).len(), 1);
        // CPUs 2-3 were not part of the local run.
        let d =
            data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), bw_at("scaling", "2-3", 2, 90.0, 1.0)]);
        assert!(contradictions(&d).is_empty());
        // Regular stores against nt stores: different work.
        let mut other = bw_at("scaling", "0-1", 2, 90.0, 1.0);
        if let Record::Bw(b) = &mut other {
            b.stores = results::bw::Stores::Regular;
        }
        let d = data(vec![bw_at("local", "0-1", 2, 50.0, 1.0), other]);
        assert!(contradictions(&d).is_empty());
    }
}
