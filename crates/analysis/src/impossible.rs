//! Figures that cannot be true of the memory they name: a bandwidth above
//! the theoretical peak it is held against (SMBIOS DIMMs x MT/s x 8 bytes,
//! or `--peak-gbs`), and a DRAM latency below the last-level cache's own
//! (the run's sweep plateau, else the floor no server cache goes under).
//! Each names the likely cause ([`Cause`]): a wrong peak, or a cache (or a
//! prefetcher) passing for DRAM, with the figures that point at it. Every
//! output that shows such a figure shows this flag with it
//! (docs/report.md, "Impossible figures"); `report::impossible` words it.

use std::collections::BTreeMap;

use results::bw::{BwResult, Suspect};
use results::lat::{self, LatResult, LoadedPoint};
use results::stats::measured;
use serde::Serialize;

use crate::data::RunData;
use crate::metrics::{bw_parts, lat_parts, peak_loaded, MetricKey};
use crate::subject::Subject;

/// The last-level cache latency assumed where the run measured none, ns:
/// no server CPU's last-level cache answers a dependent load faster. Its
/// hit latency is at least about 40 core cycles on every current x86 and
/// Arm server design, which at a 5 GHz clock is 8 ns; DRAM behind it is
/// slower still. A DRAM figure under it is a cache (or a prefetcher)
/// measured instead.
pub const TYPICAL_LLC_FLOOR_NS: f64 = 8.0;

/// How many robust standard deviations of a latency figure's own noise it
/// may fall under the last-level cache's plateau before it is called
/// impossible: about 95% of a figure's samples lie within two.
const NOISE_SIGMAS: f64 = 2.0;

/// A figure that cannot be true, with what it was held against and why
/// that probably happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Impossible {
    /// Which result the figure is (`report::subject::flagged` words it:
    /// `bw local triad, 2 thread(s), CPU node 0 -> memory 0`).
    pub what: Subject,
    pub figure: f64,
    /// `GB/s` (10^9 bytes/s) or `ns`.
    pub unit: &'static str,
    /// The limit it breaks, same unit.
    pub limit: f64,
    /// What the limit is (`report::impossible::limit` words it: `the
    /// theoretical peak`, `the L3's own latency (the run's sweep plateau)`).
    pub limit_what: Limit,
    /// figure / limit: above 1 for bandwidth, below 1 for latency.
    pub ratio: f64,
    /// The likely cause, with the figures that point at it.
    pub cause: Cause,
}

/// What limit an impossible figure breaks.
#[derive(Debug, Clone, PartialEq)]
pub enum Limit {
    /// The theoretical peak bandwidth (the DIMM table's or `--peak-gbs`).
    Peak,
    /// The last-level cache's own latency: the cache level the run's
    /// sweep measured (`L3`), else the typical figure of the fastest one.
    LlcLatency { measured: Option<String> },
}

/// Why an impossible figure probably happened: which of the figure and the
/// limit it breaks is wrong, and by what.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// A bandwidth figure's arrays are under 4x the last-level cache, which
    /// served part of the traffic.
    SmallArrays {
        array_bytes: u64,
        /// The last-level cache's size, when known.
        llc_bytes: Option<u64>,
    },
    /// A bandwidth figure's pages were not verified on the memory asked
    /// for: other nodes (or a cache) may have served part of it.
    UnverifiedPages,
    /// DRAM-sized arrays on verified pages: the peak given or read from
    /// the DIMM table is too low (channels or MT/s).
    WrongPeak,
    /// A chase that fits in the cache whose latency it falls under.
    ChaseInCache {
        size_bytes: u64,
        cache_bytes: u64,
        /// The cache level (`L3`), when measured.
        cache: Option<String>,
    },
    /// A chase whose stride (a line or less) lets the adjacent-line
    /// prefetcher serve its loads.
    Prefetcher { stride_bytes: usize, size_bytes: u64 },
    /// Neither: a cache or a prefetcher served the chase;
    /// `plateau_measured`: the floor is the run's own sweep plateau (which
    /// may be misread), else the typical one.
    CacheOrPrefetcher { size_bytes: u64, stride_bytes: usize, plateau_measured: bool },
    /// A loaded-latency point: the chase fits in a cache, or the load
    /// threads' traffic was cached.
    LoadCached,
    /// A machine-wide figure above the machine's peak: a wrong peak or a
    /// cache passing for DRAM.
    PeakOrCache,
}

impl Impossible {
    /// The figure with its unit (`6.7 GB/s`).
    pub fn figure_text(&self) -> String {
        format!("{} {}", num(self.figure), self.unit)
    }

    /// The word written after the figure.
    pub const WORD: &'static str = "impossible";
}

/// A figure as impossible figures write theirs and their limits: whole
/// from 100, else to one decimal.
pub fn num(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// A bandwidth result above the peak it was measured against
/// (`BwResult::peak_check`), with the suspect named: arrays under 4x the
/// LLC or pages not verified where asked let caches or other nodes serve
/// part of it; DRAM-sized arrays on verified pages point at the peak.
pub fn bw(p: &BwResult) -> Option<Impossible> {
    let c = p.peak_check()?;
    let suspect = c.over?;
    let figure = measured(p.best_gbs)?;
    let cause = match suspect {
        Suspect::Figure if !p.size_rule_ok => {
            Cause::SmallArrays { array_bytes: p.array_bytes, llc_bytes: p.llc_bytes }
        }
        Suspect::Figure => Cause::UnverifiedPages,
        Suspect::Peak => Cause::WrongPeak,
    };
    Some(Impossible {
        what: Subject::bw(p),
        figure,
        unit: "GB/s",
        limit: c.peak_gbs,
        limit_what: Limit::Peak,
        ratio: c.fraction,
        cause,
    })
}

/// The last-level cache latency a DRAM figure cannot go under.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlcFloor {
    /// ns: the plateau's latency (its points' fastest samples, so low
    /// rather than high), or [`TYPICAL_LLC_FLOOR_NS`].
    pub ns: f64,
    /// The cache level (`L3`), when measured.
    pub label: Option<String>,
    /// Its size, when known.
    pub cache_bytes: Option<u64>,
    /// True when the run's sweep measured it.
    pub measured: bool,
}

impl LlcFloor {
    /// The floor where nothing was measured.
    pub fn typical() -> LlcFloor {
        LlcFloor { ns: TYPICAL_LLC_FLOOR_NS, label: None, cache_bytes: None, measured: false }
    }

    /// The typical floor, with the last-level cache's size the topology
    /// reports (for the cause a figure is given).
    pub fn typical_of(llc_bytes: Option<u64>) -> LlcFloor {
        LlcFloor { cache_bytes: llc_bytes, ..LlcFloor::typical() }
    }

    /// The limit it is: the cache level the sweep measured, else the
    /// typical figure.
    pub fn limit(&self) -> Limit {
        match (&self.label, self.measured) {
            (Some(l), true) => Limit::LlcLatency { measured: Some(l.clone()) },
            _ => Limit::LlcLatency { measured: None },
        }
    }
}

/// The last-level cache's latency from the run's sweeps: the plateau of
/// the highest cache level they found (`L3`, else `L2`...), the lowest
/// such plateau over the sweeps; else the typical floor.
pub fn llc_floor(d: &RunData) -> LlcFloor {
    let plateaus = d.sweep_summaries.iter().flat_map(|s| &s.plateaus).chain(
        d.per_cpu_sweep_summaries.iter().flat_map(|s| &s.plateaus).flat_map(|c| &c.plateaus),
    );
    let level = |label: &str| label.strip_prefix('L').and_then(|n| n.parse::<u8>().ok());
    let mut best: Option<(u8, f64, &results::lat::Plateau)> = None;
    for p in plateaus {
        let (Some(l), Some(ns)) = (level(&p.label), measured(p.latency_ns)) else { continue };
        if ns <= 0.0 {
            continue;
        }
        best = match best {
            Some((bl, bns, _)) if bl > l || (bl == l && bns <= ns) => best,
            _ => Some((l, ns, p)),
        };
    }
    match best {
        Some((_, ns, p)) => LlcFloor {
            ns,
            label: Some(p.label.clone()),
            cache_bytes: p.cache_bytes,
            measured: true,
        },
        None => LlcFloor::typical(),
    }
}

/// Modes whose chases measure DRAM (the sweep measures caches on purpose,
/// the prefetch check a stride, core-to-core no memory at all).
fn dram_mode(m: lat::Mode) -> bool {
    matches!(m, lat::Mode::Point | lat::Mode::Matrix | lat::Mode::PerCpu | lat::Mode::Loaded)
}

fn lat_cause(size_bytes: u64, stride_bytes: usize, floor: &LlcFloor) -> Cause {
    match floor.cache_bytes.filter(|c| size_bytes > 0 && size_bytes <= *c) {
        Some(cache_bytes) => {
            Cause::ChaseInCache { size_bytes, cache_bytes, cache: floor.label.clone() }
        }
        None if stride_bytes > 0 && stride_bytes <= 64 => {
            Cause::Prefetcher { stride_bytes, size_bytes }
        }
        None => {
            Cause::CacheOrPrefetcher { size_bytes, stride_bytes, plateau_measured: floor.measured }
        }
    }
}

fn below(ns: f64, noise_pct: Option<f64>, floor: &LlcFloor) -> bool {
    let allowance = NOISE_SIGMAS * noise_pct.unwrap_or(0.0) / 100.0;
    ns > 0.0 && ns < floor.ns * (1.0 - allowance)
}

/// A DRAM chase below the last-level cache's latency beyond its own
/// noise ([`NOISE_SIGMAS`] robust standard deviations).
pub fn chase(p: &LatResult, floor: &LlcFloor) -> Option<Impossible> {
    if !dram_mode(p.mode) {
        return None;
    }
    let ns = measured(p.median_ns)?;
    if !below(ns, p.noise(), floor) {
        return None;
    }
    Some(Impossible {
        what: Subject::chase(p),
        figure: ns,
        unit: "ns",
        limit: floor.ns,
        limit_what: floor.limit(),
        ratio: ns / floor.ns,
        cause: lat_cause(p.size_bytes, p.stride_bytes, floor),
    })
}

/// A loaded-latency point below the last-level cache's latency.
pub fn loaded(p: &LoadedPoint, floor: &LlcFloor) -> Option<Impossible> {
    let ns = p.latency()?;
    if !below(ns, p.noise(), floor) {
        return None;
    }
    Some(Impossible {
        what: Subject::loaded(p),
        figure: ns,
        unit: "ns",
        limit: floor.ns,
        limit_what: floor.limit(),
        ratio: ns / floor.ns,
        cause: Cause::LoadCached,
    })
}

/// Every impossible figure of a run: bandwidth results above their peak,
/// DRAM chases and loaded points below the last-level cache's latency.
pub fn of_run(d: &RunData) -> Vec<Impossible> {
    let floor = llc_floor(d);
    let mut out: Vec<Impossible> = d.bw.iter().filter_map(bw).collect();
    out.extend(d.chases.iter().filter_map(|p| chase(p, &floor)));
    out.extend(d.loaded.iter().filter_map(|p| loaded(p, &floor)));
    out
}

/// The headline metrics made of an impossible figure, each with the first
/// such figure: a headline never stands without its flag.
pub fn headlines(d: &RunData) -> BTreeMap<MetricKey, Impossible> {
    let floor = llc_floor(d);
    let mut out = BTreeMap::new();
    for key in MetricKey::ALL {
        let first = bw_parts(d, key)
            .into_iter()
            .find_map(bw)
            .or_else(|| lat_parts(d, key).into_iter().find_map(|p| chase(p, &floor)))
            .or_else(|| match key {
                MetricKey::LoadedLatPeak => peak_loaded(d).and_then(|p| loaded(p, &floor)),
                _ => None,
            });
        if let Some(i) = first {
            out.insert(key, i);
        }
    }
    out
}

/// A machine-wide figure against the machine's peak (the report's "of
/// the peak" headline): impossible above it.
pub fn against_peak(what: &str, gbs: f64, peak_gbs: f64) -> Option<Impossible> {
    if !(gbs.is_finite() && peak_gbs.is_finite() && peak_gbs > 0.0 && gbs > peak_gbs) {
        return None;
    }
    Some(Impossible {
        what: Subject::Named(what.to_string()),
        figure: gbs,
        unit: "GB/s",
        limit: peak_gbs,
        limit_what: Limit::Peak,
        ratio: gbs / peak_gbs,
        cause: Cause::PeakOrCache,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{data, rec};
    use serde_json::json;

    fn local(gbs: f64, peak: Option<f64>, size_rule_ok: bool) -> serde_json::Value {
        json!({"mode": "local", "kernel": "triad", "cpu_node": 0, "mem_node": 0, "threads": 2,
               "best_gbs": gbs, "peak_gbs": peak, "size_rule_ok": size_rule_ok,
               "array_bytes": 1u64 << 30, "llc_bytes": 32u64 << 20,
               "placement": {"fraction": 1.0, "ok": true}, "stable": true})
    }

    /// The case: `bw --peak-gbs 1` against a triad of 23.6 GB/s.
    #[test]
    fn a_bandwidth_above_its_peak_is_impossible_and_blames_the_peak() {
        let d = data(vec![rec("bw", local(23.6, Some(1.0), true))]);
        let all = of_run(&d);
        assert_eq!(all.len(), 1, "{all:?}");
        let i = &all[0];
        assert_eq!(i.ratio, 23.6);
        assert_eq!(i.cause, Cause::WrongPeak);
        assert_eq!(
            i.what,
            Subject::Bw {
                mode: results::bw::Mode::Local,
                kernel: kernels::Kernel::Triad,
                threads: 2,
                cpu_node: Some(0),
                memory: "0".into()
            }
        );
        assert_eq!((i.limit, i.unit, i.figure_text()), (1.0, "GB/s", "23.6 GB/s".into()));
        assert_eq!(headlines(&d)[&MetricKey::LocalBw].figure, 23.6);
    }

    #[test]
    fn small_arrays_above_the_peak_blame_a_cache_and_figures_under_it_pass() {
        let d = data(vec![rec("bw", local(150.0, Some(100.0), false))]);
        let i = &of_run(&d)[0];
        assert_eq!(i.cause, Cause::SmallArrays { array_bytes: 1 << 30, llc_bytes: Some(32 << 20) });
        for ok in [local(99.9, Some(100.0), true), local(500.0, None, true)] {
            assert!(of_run(&data(vec![rec("bw", ok)])).is_empty());
        }
    }

    fn sweep(l3_ns: f64) -> serde_json::Value {
        json!({"mode": "sweep", "cpu": 0, "mem_node": 0, "caches": [],
               "plateaus": [
                   {"label": "L1", "from_bytes": 4096, "to_bytes": 32768, "latency_ns": 1.2,
                    "cache_bytes": 49152, "points": 4},
                   {"label": "L3", "from_bytes": 4194304, "to_bytes": 16777216,
                    "latency_ns": l3_ns, "cache_bytes": 33554432, "points": 5},
                   {"label": "DRAM", "from_bytes": 134217728, "to_bytes": 536870912,
                    "latency_ns": 95.0, "cache_bytes": null, "points": 3}]})
    }

    fn chase_rec(mode: &str, ns: f64, size: u64, noise: f64) -> serde_json::Value {
        json!({"mode": mode, "cpu": 0, "cpu_node": 0, "mem_node": 0, "median_ns": ns,
               "size_bytes": size, "stride_bytes": 256, "noise_pct": noise})
    }

    #[test]
    fn a_dram_latency_under_the_llc_plateau_is_impossible_beyond_its_noise() {
        let d = data(vec![
            rec("lat-summary", sweep(20.0)),
            // a 16 MiB chase in the 32 MiB L3, and a DRAM-sized one
            rec("lat", chase_rec("matrix", 15.0, 16 << 20, 1.0)),
            rec("lat", chase_rec("point", 95.0, 1 << 30, 1.0)),
            // under the plateau by less than its noise allows: not flagged
            rec("lat", chase_rec("per-cpu", 19.0, 1 << 30, 5.0)),
            // the sweep itself measures caches on purpose
            rec("lat", chase_rec("sweep", 1.5, 16 << 10, 1.0)),
        ]);
        let floor = llc_floor(&d);
        assert_eq!((floor.ns, floor.label.as_deref(), floor.measured), (20.0, Some("L3"), true));
        let all = of_run(&d);
        assert_eq!(all.len(), 1, "{all:?}");
        assert_eq!(
            all[0].what,
            Subject::Chase { mode: lat::Mode::Matrix, cpu: 0, mem_node: Some(0), interleave: None }
        );
        assert_eq!(
            all[0].cause,
            Cause::ChaseInCache {
                size_bytes: 16 << 20,
                cache_bytes: 32 << 20,
                cache: Some("L3".into())
            }
        );
        assert_eq!(all[0].limit_what, Limit::LlcLatency { measured: Some("L3".into()) });
        assert_eq!((all[0].limit, all[0].ratio), (20.0, 0.75));
        assert_eq!(headlines(&d)[&MetricKey::LocalLat].figure, 15.0);
    }

    #[test]
    fn without_a_sweep_the_typical_floor_judges() {
        let d = data(vec![
            rec("lat", chase_rec("point", 4.1, 1 << 20, 0.5)),
            rec("lat", chase_rec("point", 12.0, 1 << 20, 0.5)),
        ]);
        assert_eq!(llc_floor(&d), LlcFloor::typical());
        let all = of_run(&d);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].figure, 4.1);
        assert_eq!(all[0].limit_what, Limit::LlcLatency { measured: None });
    }

    #[test]
    fn a_machine_figure_above_the_machine_peak_is_impossible() {
        assert!(against_peak("global bandwidth", 99.0, 100.0).is_none());
        let i = against_peak("global bandwidth", 250.0, 100.0).unwrap();
        assert_eq!(i.ratio, 2.5);
        assert_eq!((i.limit, i.cause), (100.0, Cause::PeakOrCache));
    }
}
