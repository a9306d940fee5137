//! Declared distances held against measured latency. The firmware's SLIT
//! (as the kernel shows it in `nodeN/distance`) and, where present, its
//! HMAT read latencies say which memory is nearer to which CPUs; the run's
//! latency matrix (pointer chase, median per CPU node -> memory node)
//! says what it is. Two things are compared, for every CPU node:
//!
//! * the **order** of distances from it, nearest first: a pair of targets
//!   the firmware orders one way that measure the other way beyond the
//!   noise is a contradiction; a pair it calls equally near that measure
//!   apart by more than one SLIT step (a tenth of the local latency) and
//!   the noise is one too;
//! * the **ratios**: remote/local distance (21/10 = 2.1x) against
//!   remote/local latency, within a tolerance made of the SLIT's rounding
//!   (its values are whole numbers: ±0.5 on each of the two) and the two
//!   figures' noise.
//!
//! The noise of a figure is the robust CV of its samples (not the standard
//! error of its median: run-to-run variation is larger than the spread
//! inside one run, so the width of one sample is the honest one), and two
//! figures' noise adds in quadrature; [`SIGMAS`] of it are allowed. Order
//! contradictions mislead the kernel, hwloc and MPI runtimes into picking
//! the farther node; ratio mismatches mislead what weighs distances
//! (the kernel's reclaim distance, hwloc's grouping by distance). Which
//! declared matrix is meant, and the tolerance's derivation: docs/topo.md
//! "Declared against measured".

use std::collections::BTreeMap;

use results::lat::LatResult;
use results::run::{LoadedRun, RunId};
use results::stats::measured;
use serde::{Deserialize, Serialize};

use crate::data::RunData;
use crate::metrics::lat_matrix;

/// Robust standard deviations of the difference of two figures allowed
/// before they are called different: about 95% of pairs of identical
/// figures lie within two.
pub const SIGMAS: f64 = 2.0;

/// The noise assumed for a cell whose record carries none (records from
/// before the noise was stored, and without a spread), robust CV percent:
/// the run-to-run variation of idle latency medians measured on a busy
/// development VM (docs/topo.md), so that such a record never decides
/// an order on its own.
pub const UNKNOWN_NOISE_PCT: f64 = 15.0;

/// A cell whose slowest sample took more than this many times its
/// fastest is unsettled and left out: the samples of one chase run the
/// same loads over the same pages, and on a quiet machine agree within a
/// few percent; apart by half, something else set their time (a busy
/// machine, a virtual machine's host). The emulated guests of the test
/// suite, on a shared host, gave cells from 1.1x to 6.9x (docs/topo.md).
pub const UNSETTLED_RATIO: f64 = 1.5;

/// One measured cell: the chase's median and its noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cell {
    pub ns: f64,
    /// Robust CV of the samples, percent.
    pub noise_pct: f64,
    /// Its samples agree within [`UNSETTLED_RATIO`] (or the record does
    /// not say).
    pub settled: bool,
}

impl Cell {
    /// The cell of a chase (`None` without a median).
    pub fn of(p: &LatResult) -> Option<Cell> {
        let noise = p
            .noise()
            .or_else(|| results::stats::noise_from_spread(p.spread_pct, Some(p.samples)))
            .unwrap_or(UNKNOWN_NOISE_PCT);
        let settled = match (measured(p.min_ns), measured(p.max_ns)) {
            (Some(lo), Some(hi)) if lo > 0.0 => hi / lo <= UNSETTLED_RATIO,
            _ => true,
        };
        Some(Cell { ns: measured(p.median_ns)?, noise_pct: noise, settled })
    }
}

/// The measured matrix of a run: `(CPU node, memory node) -> cell`.
pub fn measured_cells(d: &RunData) -> BTreeMap<(u32, u32), Cell> {
    lat_matrix(d).into_iter().filter_map(|(k, p)| Some((k, Cell::of(p)?))).collect()
}

/// What the firmware declares.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Declared {
    /// Node ids, in the order of `rows`.
    pub nodes: Vec<u32>,
    /// The distance matrix as the kernel gives it (`nodeN/distance`).
    pub rows: Vec<Vec<u32>>,
    /// The firmware's own SLIT was read and differs from the kernel's
    /// matrix: the kernel refused it (Linux ignores a SLIT whose remote
    /// distances are not above 10) and uses its defaults (10 local, 20
    /// remote).
    pub kernel_defaults: bool,
    /// HMAT read latency, ns, per (initiator node, target node) (not
    /// written: the topology's `hmat` holds it).
    #[serde(skip)]
    pub hmat_ns: BTreeMap<(u32, u32), u64>,
}

impl Declared {
    fn distance(&self, from: u32, to: u32) -> Option<u32> {
        let i = self.nodes.iter().position(|n| *n == from)?;
        let j = self.nodes.iter().position(|n| *n == to)?;
        self.rows.get(i)?.get(j).copied()
    }

    /// Whose distances these are: the firmware's, or the kernel's
    /// defaults in place of a SLIT it refused.
    pub fn source(&self) -> Source {
        if self.kernel_defaults {
            Source::KernelDefaults
        } else {
            Source::Firmware
        }
    }

    /// The declared distances of a stored run's topology, or why there
    /// are none.
    pub fn of_run(run: &LoadedRun) -> Result<Declared, Unchecked> {
        let Some(t) = run.topology.get() else {
            return Err(Unchecked::NoTopology { run: run.summary.id });
        };
        let nodes: Vec<u32> = t.nodes.iter().map(|n| n.id).collect();
        let rows: Vec<Vec<u32>> = t.nodes.iter().map(|n| n.distances.clone()).collect();
        if nodes.len() < 2 {
            return Err(Unchecked::OneNode);
        }
        if rows.iter().any(|r| r.len() != nodes.len()) {
            return Err(Unchecked::NoSlit { run: run.summary.id });
        }
        let kernel_defaults =
            t.firmware_numa.as_ref().and_then(|f| f.slit.found()).is_some_and(|s| {
                s.distances.len() == rows.len()
                    && s.distances.iter().zip(&rows).any(|(a, b)| {
                        a.len() != b.len() || a.iter().zip(b).any(|(x, y)| u32::from(*x) != *y)
                    })
            });
        let mut hmat_ns = BTreeMap::new();
        for n in &t.nodes {
            let Some(h) = &n.hmat else { continue };
            let Some(a) = h.access1.as_ref().or(h.access0.as_ref()) else { continue };
            let Some(ns) = a.read_latency_ns.filter(|ns| *ns > 0) else { continue };
            for i in a.initiators.iter() {
                hmat_ns.insert((i, n.id), ns);
            }
        }
        Ok(Declared { nodes, rows, kernel_defaults, hmat_ns })
    }
}

/// Which claim of the firmware a contradiction is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The SLIT orders two targets one way, the measurement the other.
    Order,
    /// The SLIT calls two targets equally near; they measure apart.
    Tie,
    /// The HMAT's read latencies order two targets one way, the
    /// measurement the other.
    HmatOrder,
    /// A remote/local distance ratio against the remote/local latency.
    Ratio,
}

/// Whose distances a contradiction holds against the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The firmware's: its SLIT (as the kernel shows it) or its HMAT.
    Firmware,
    /// The kernel's default distances (10 local, 20 remote), in place of
    /// the firmware's SLIT, which the kernel refused.
    KernelDefaults,
}

/// What was declared, with the figures at fault (the measured ones are
/// the contradiction's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "declared", rename_all = "kebab-case")]
pub enum Claim {
    /// The SLIT's distances from the CPU node to the target declared
    /// nearer and to the other ([`Kind::Order`]).
    Distances { near: u32, far: u32 },
    /// The one distance of two targets the SLIT calls equally near
    /// ([`Kind::Tie`]).
    Equal { distance: u32 },
    /// The HMAT's read latencies, ns, of the target declared nearer and of
    /// the other ([`Kind::HmatOrder`]).
    HmatNs { near: u64, far: u64 },
    /// A remote distance and the local one, and the remote/local latency
    /// measured ([`Kind::Ratio`]).
    Ratio { remote: u32, local: u32, measured: f64 },
}

impl Claim {
    /// The remote/local ratio the distances declare (`None` but for a
    /// ratio).
    pub fn declared_ratio(&self) -> Option<f64> {
        match *self {
            Claim::Ratio { remote, local, .. } => Some(f64::from(remote) / f64::from(local.max(1))),
            _ => None,
        }
    }
}

/// What a declared pair says against what was measured, with the values
/// at fault (`report::distances::contradiction` words it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contradiction {
    pub kind: Kind,
    /// Whose distances (for an HMAT order, always the firmware's).
    pub source: Source,
    /// What they declare.
    pub claim: Claim,
    /// The CPU node the distances are from.
    pub from: u32,
    /// The two targets: the one declared nearer (for a tie or a ratio,
    /// the first) and the other.
    pub a: u32,
    pub b: u32,
    /// How far apart the measurement puts them, percent: for an order,
    /// how much nearer the declared-farther target measured; for a ratio,
    /// how far the measured ratio is from the declared one.
    pub measured_pct: f64,
    /// What the rounding and the noise allowed, percent.
    pub allowed_pct: f64,
}

/// One CPU node's row, declared and measured, for tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub from: u32,
    /// Targets nearest first by the SLIT (ties in node order).
    pub declared_order: Vec<u32>,
    /// Targets nearest first as measured.
    pub measured_order: Vec<u32>,
}

/// Why a run's declared distances were not held against its latency
/// matrix (`report::distances::unchecked` words it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Unchecked {
    /// The run holds no topology (imported without one).
    NoTopology { run: RunId },
    /// One NUMA node: no distances to order.
    OneNode,
    /// The run's topology has no complete distance matrix (no SLIT: the
    /// firmware gave none, or the run was imported from a machine or
    /// version that did not record it).
    NoSlit { run: RunId },
    /// The run measured no latency matrix.
    NoMatrix,
    /// Every CPU node is left fewer than two settled cells: `unsettled` of
    /// the matrix's `cells` have samples more than [`UNSETTLED_RATIO`]
    /// apart.
    Undecided { unsettled: usize, cells: usize },
}

/// The comparison of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Check {
    /// Nothing to compare, and why.
    NotChecked { reason: Unchecked },
    Checked {
        /// Ordered pairs of targets compared (SLIT and HMAT).
        pairs: usize,
        /// Remote/local ratios compared.
        ratios: usize,
        /// Order contradictions (SLIT `order` and `tie`, `hmat-order`).
        order: Vec<Contradiction>,
        /// Ratio mismatches.
        ratio: Vec<Contradiction>,
        /// Every CPU node measured all its targets within the noise of
        /// its local figure: memory is flat here (a virtual machine whose
        /// memory is one host node, or interleaving), so no declared order
        /// can be confirmed.
        flat: bool,
        rows: Vec<Row>,
        /// The cells left out, `[CPU node, memory node]`: their samples
        /// were more than [`UNSETTLED_RATIO`] apart.
        unsettled: Vec<[u32; 2]>,
    },
}

impl Check {
    /// True when the declared and measured orders disagree.
    pub fn order_disagrees(&self) -> bool {
        matches!(self, Check::Checked { order, .. } if !order.is_empty())
    }

    /// The reason nothing was compared.
    pub fn not_checked(&self) -> Option<&Unchecked> {
        match self {
            Check::NotChecked { reason } => Some(reason),
            Check::Checked { .. } => None,
        }
    }
}

/// Half a unit on each of two whole-number distances, relative to the
/// ratio they make: the SLIT's rounding.
fn rounding(d_remote: u32, d_local: u32) -> f64 {
    0.5 / f64::from(d_remote.max(1)) + 0.5 / f64::from(d_local.max(1))
}

/// [`SIGMAS`] x the two figures' noise in quadrature, as a fraction.
fn noise(a: Cell, b: Cell) -> f64 {
    SIGMAS * (a.noise_pct.powi(2) + b.noise_pct.powi(2)).sqrt() / 100.0
}

/// An order contradiction from node `from`: `near` declared nearer than
/// `far` (by `source`'s `claim`), measured farther beyond the two
/// figures' noise; `None` when the measurement does not reverse them.
fn reversed(
    (kind, source, claim): (Kind, Source, Claim),
    from: u32,
    (near, cn): (u32, Cell),
    (far, cf): (u32, Cell),
) -> Option<Contradiction> {
    let allowed = noise(cn, cf);
    let over = cn.ns / cf.ns - 1.0;
    (over > allowed).then_some(Contradiction {
        kind,
        source,
        claim,
        from,
        a: near,
        b: far,
        measured_pct: over * 100.0,
        allowed_pct: allowed * 100.0,
    })
}

/// Compares `decl` with the measured cells, the unsettled ones left out.
pub fn check(decl: &Declared, all: &BTreeMap<(u32, u32), Cell>) -> Check {
    if all.is_empty() {
        return Check::NotChecked { reason: Unchecked::NoMatrix };
    }
    let unsettled: Vec<[u32; 2]> =
        all.iter().filter(|(_, c)| !c.settled).map(|((c, m), _)| [*c, *m]).collect();
    let cells: BTreeMap<(u32, u32), Cell> =
        all.iter().filter(|(_, c)| c.settled).map(|(k, c)| (*k, *c)).collect();
    let rows_of = |i: u32| cells.keys().filter(|(c, _)| *c == i).count();
    if cells.keys().all(|(i, _)| rows_of(*i) < 2) {
        return Check::NotChecked {
            reason: Unchecked::Undecided { unsettled: unsettled.len(), cells: all.len() },
        };
    }
    let cells = &cells;
    let source = decl.source();
    let mut order = Vec::new();
    let mut ratio = Vec::new();
    let (mut pairs, mut ratios) = (0, 0);
    let mut flat = true;
    let mut rows = Vec::new();
    let sources: Vec<u32> = {
        let mut v: Vec<u32> = all.keys().map(|(c, _)| *c).collect();
        v.dedup();
        v
    };
    for &i in &sources {
        // Every measured target in the row shown; the settled ones judged.
        let shown: Vec<(u32, Cell)> = all
            .iter()
            .filter(|((c, m), _)| *c == i && decl.distance(i, *m).is_some())
            .map(|((_, m), cell)| (*m, *cell))
            .collect();
        let targets: Vec<(u32, Cell)> = shown.iter().filter(|(_, c)| c.settled).copied().collect();
        let local = cells.get(&(i, i)).copied();
        let d = |m: u32| decl.distance(i, m).unwrap_or(0);
        let mut by_decl: Vec<u32> = shown.iter().map(|(m, _)| *m).collect();
        by_decl.sort_by_key(|m| (d(*m), *m));
        let mut by_meas: Vec<(u32, f64)> = shown.iter().map(|(m, c)| (*m, c.ns)).collect();
        by_meas.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        rows.push(Row {
            from: i,
            declared_order: by_decl,
            measured_order: by_meas.iter().map(|(m, _)| *m).collect(),
        });
        if let Some(l) = local {
            for (_, c) in &targets {
                if (c.ns / l.ns - 1.0).abs() > noise(l, *c) {
                    flat = false;
                }
            }
        }
        for (x, &(j, cj)) in targets.iter().enumerate() {
            for &(k, ck) in &targets[x + 1..] {
                let (dj, dk) = (d(j), d(k));
                pairs += 1;
                let allowed = noise(cj, ck);
                if dj == dk {
                    // Equal on the SLIT: apart by more than one SLIT step
                    // (1/d_local of the local latency) and the noise.
                    let (Some(l), Some(dl)) = (local, decl.distance(i, i)) else { continue };
                    let step = l.ns / f64::from(dl.max(1));
                    let (near, far, cn, cf) =
                        if cj.ns <= ck.ns { (j, k, cj, ck) } else { (k, j, ck, cj) };
                    let gap = cf.ns - cn.ns;
                    if gap > step + allowed * cn.ns {
                        let pct = (cf.ns / cn.ns - 1.0) * 100.0;
                        order.push(Contradiction {
                            kind: Kind::Tie,
                            source,
                            claim: Claim::Equal { distance: dj },
                            from: i,
                            a: near,
                            b: far,
                            measured_pct: pct,
                            allowed_pct: (step / cn.ns + allowed) * 100.0,
                        });
                    }
                    continue;
                }
                let (near, far) = if dj < dk { ((j, cj), (k, ck)) } else { ((k, ck), (j, cj)) };
                let claim = Claim::Distances { near: dj.min(dk), far: dj.max(dk) };
                order.extend(reversed((Kind::Order, source, claim), i, near, far));
            }
        }
        // HMAT: the targets this node is a declared best initiator of.
        let hmat: Vec<(u32, u64, Cell)> = cells
            .iter()
            .filter(|((c, _), _)| *c == i)
            .filter_map(|((_, m), cell)| Some((*m, *decl.hmat_ns.get(&(i, *m))?, *cell)))
            .collect();
        for (x, &(j, lj, cj)) in hmat.iter().enumerate() {
            for &(k, lk, ck) in &hmat[x + 1..] {
                if lj == lk {
                    continue;
                }
                pairs += 1;
                let (near, far) = if lj < lk { ((j, cj), (k, ck)) } else { ((k, ck), (j, cj)) };
                let claim = Claim::HmatNs { near: lj.min(lk), far: lj.max(lk) };
                let kind = (Kind::HmatOrder, Source::Firmware, claim);
                order.extend(reversed(kind, i, near, far));
            }
        }
        // Ratios against the local figure.
        let (Some(l), Some(dl)) = (local, decl.distance(i, i)) else { continue };
        for &(j, cj) in targets.iter().filter(|(j, _)| *j != i) {
            let dj = d(j);
            let declared = f64::from(dj) / f64::from(dl.max(1));
            let meas = cj.ns / l.ns;
            let allowed = rounding(dj, dl) + noise(l, cj);
            let off = meas / declared - 1.0;
            ratios += 1;
            if off.abs() > allowed {
                ratio.push(Contradiction {
                    kind: Kind::Ratio,
                    source,
                    claim: Claim::Ratio { remote: dj, local: dl, measured: meas },
                    from: i,
                    a: j,
                    b: i,
                    measured_pct: off * 100.0,
                    allowed_pct: allowed * 100.0,
                });
            }
        }
    }
    Check::Checked { pairs, ratios, order, ratio, flat, rows, unsettled }
}

/// The comparison of a stored run: its topology's declared distances
/// against its latency matrix; `None` for a machine of one node, where
/// there is nothing to order.
pub fn of_run(run: &LoadedRun, d: &RunData) -> Option<Check> {
    if run.topology.get().is_some_and(|t| t.nodes.len() < 2) {
        return None;
    }
    let cells = measured_cells(d);
    Some(match Declared::of_run(run) {
        Err(reason) => Check::NotChecked { reason },
        Ok(decl) => check(&decl, &cells),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(rows: &[&[u32]]) -> Declared {
        Declared {
            nodes: (0..rows.len() as u32).collect(),
            rows: rows.iter().map(|r| r.to_vec()).collect(),
            ..Declared::default()
        }
    }

    /// Cells from a latency model: `ns(i, j)` with the same noise for all.
    fn cells(n: u32, noise_pct: f64, ns: impl Fn(u32, u32) -> f64) -> BTreeMap<(u32, u32), Cell> {
        (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .map(|(i, j)| ((i, j), Cell { ns: ns(i, j), noise_pct, settled: true }))
            .collect()
    }

    /// Two sockets of two nodes each (SNC2): the hardware's latency is
    /// 90 ns local, 100 ns to the other node of the socket, 150 ns across.
    fn snc2_ns(i: u32, j: u32) -> f64 {
        match (i, j) {
            _ if i == j => 90.0,
            _ if i / 2 == j / 2 => 100.0,
            _ => 150.0,
        }
    }

    #[test]
    fn a_slit_that_orders_and_scales_like_the_machine_agrees() {
        // 10 / 11 / 17: 1.1x and 1.7x, measured 1.11x and 1.67x.
        let d = decl(&[&[10, 11, 17, 17], &[11, 10, 17, 17], &[17, 17, 10, 11], &[17, 17, 11, 10]]);
        let c = check(&d, &cells(4, 1.0, snc2_ns));
        let Check::Checked { pairs, ratios, order, ratio, flat, rows, .. } = c else {
            panic!("{c:?}")
        };
        assert!(order.is_empty() && ratio.is_empty(), "{order:?} {ratio:?}");
        assert_eq!((pairs, ratios), (4 * 6, 4 * 3));
        assert!(!flat);
        assert_eq!(rows[0].declared_order, [0, 1, 2, 3]);
        assert_eq!(rows[0].measured_order, [0, 1, 2, 3]);
    }

    #[test]
    fn a_reversed_order_is_a_contradiction_in_the_issues_words() {
        // The firmware puts node 1 nearer to node 0 than node 2; measured,
        // node 2 is 18% nearer (118 vs 100 ns).
        let d = decl(&[&[10, 12, 21], &[12, 10, 21], &[21, 21, 10]]);
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 0) => 80.0,
            (0, 1) => 118.0,
            (0, 2) => 100.0,
            _ if i == j => 80.0,
            _ => 130.0,
        };
        let c = check(&d, &cells(3, 1.0, ns));
        assert!(c.order_disagrees());
        let Check::Checked { order, .. } = &c else { unreachable!() };
        let o: Vec<&Contradiction> = order.iter().filter(|o| o.from == 0).collect();
        assert_eq!(o.len(), 1, "{order:?}");
        assert_eq!(o[0].kind, Kind::Order);
        // node 1 declared nearer (12 against 21); node 2 measured nearer by 18%
        assert_eq!(
            (o[0].source, o[0].claim, o[0].a, o[0].b, o[0].measured_pct.round()),
            (Source::Firmware, Claim::Distances { near: 12, far: 21 }, 1, 2, 18.0)
        );
    }

    #[test]
    fn noise_and_one_slit_step_are_allowed() {
        // Reversed by 4% with 3% noise on each figure: 2 x 4.2% = 8.5% is
        // allowed, no contradiction.
        let d = decl(&[&[10, 12, 13], &[12, 10, 21], &[13, 21, 10]]);
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 1) => 104.0,
            (0, 2) => 100.0,
            _ if i == j => 80.0,
            _ => 160.0,
        };
        let c = check(&d, &cells(3, 3.0, ns));
        assert!(!c.order_disagrees(), "{c:?}");
        // SNC2 declared as one level (10/21/21/21): nodes 1 and 2 measured
        // 100 vs 150 ns from node 0, far more than one SLIT step (9 ns):
        // a tie contradiction.
        let d = decl(&[&[10, 21, 21, 21], &[21, 10, 21, 21], &[21, 21, 10, 21], &[21, 21, 21, 10]]);
        let c = check(&d, &cells(4, 1.0, snc2_ns));
        let Check::Checked { order, .. } = &c else { unreachable!() };
        let t = order.iter().find(|o| o.from == 0 && o.kind == Kind::Tie).unwrap();
        // nodes 1 and 2 both at 21; node 1 measured nearer by 50%
        assert_eq!(
            (t.claim, t.a, t.b, t.measured_pct.round()),
            (Claim::Equal { distance: 21 }, 1, 2, 50.0)
        );
    }

    #[test]
    fn flat_memory_under_a_non_flat_slit_is_a_ratio_mismatch_not_an_order() {
        // A guest whose memory is all one host node: every cell ~100 ns.
        let d = decl(&[&[10, 21], &[21, 10]]);
        let c = check(&d, &cells(2, 2.0, |i, j| if i == j { 100.0 } else { 101.0 }));
        let Check::Checked { order, ratio, flat, .. } = &c else { unreachable!() };
        assert!(order.is_empty(), "{order:?}");
        assert!(*flat);
        assert_eq!(ratio.len(), 2);
        // declared 21/10 = 2.1x, measured 1.01x: off by 52%
        let r = &ratio[0];
        assert_eq!(
            (r.from, r.a, r.claim, r.measured_pct.round()),
            (0, 1, Claim::Ratio { remote: 21, local: 10, measured: 1.01 }, -52.0)
        );
        assert_eq!(r.claim.declared_ratio(), Some(2.1));
    }

    #[test]
    fn hmat_orders_are_checked_too() {
        let mut d = decl(&[&[10, 17, 17], &[17, 10, 17], &[17, 17, 10]]);
        // node 0 is the declared best initiator of 1 (150 ns) and 2 (300 ns)
        d.hmat_ns = [((0, 1), 150), ((0, 2), 300)].into();
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 1) => 170.0,
            (0, 2) => 160.0,
            _ if i == j => 100.0,
            _ => 165.0,
        };
        let c = check(&d, &cells(3, 0.5, ns));
        let Check::Checked { order, .. } = &c else { unreachable!() };
        let h: Vec<&Contradiction> = order.iter().filter(|o| o.kind == Kind::HmatOrder).collect();
        assert_eq!(h.len(), 1, "{order:?}");
        // node 1 declared nearer (150 against 300 ns); node 2 measured nearer by 6%
        assert_eq!(
            (h[0].source, h[0].claim, h[0].a, h[0].b, h[0].measured_pct.round()),
            (Source::Firmware, Claim::HmatNs { near: 150, far: 300 }, 1, 2, 6.0)
        );
    }

    #[test]
    fn cells_whose_samples_disagree_are_left_out() {
        // The reversal of the issue's case, but node 1's cell has samples
        // from 40 to 160 ns (a busy host): left out, nothing contradicted.
        let d = decl(&[&[10, 12, 21], &[12, 10, 21], &[21, 21, 10]]);
        let mut c = cells(3, 1.0, |i, j| match (i, j) {
            (0, 1) => 118.0,
            (0, 2) => 100.0,
            _ if i == j => 80.0,
            _ => 130.0,
        });
        c.get_mut(&(0, 1)).unwrap().settled = false;
        let r = check(&d, &c);
        let Check::Checked { order, unsettled, .. } = &r else { panic!("{r:?}") };
        assert!(order.iter().all(|o| o.from != 0 || (o.a != 1 && o.b != 1)), "{order:?}");
        assert_eq!(unsettled, &[[0, 1]]);
        // every cell unsettled: undecided, said
        for v in c.values_mut() {
            v.settled = false;
        }
        assert_eq!(
            check(&d, &c).not_checked(),
            Some(&Unchecked::Undecided { unsettled: 9, cells: 9 }),
            "{r:?}"
        );
    }

    #[test]
    fn no_matrix_and_no_slit_say_why() {
        let c = check(&decl(&[&[10, 21], &[21, 10]]), &BTreeMap::new());
        assert_eq!(c.not_checked(), Some(&Unchecked::NoMatrix), "{c:?}");
    }
}
