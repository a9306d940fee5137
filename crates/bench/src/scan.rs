//! Per-range bandwidth scan of one memory node (like MLC's
//! `--memory_bandwidth_scan`): fill most of what the node can spare in
//! chunks that stay allocated (so each lands on other physical memory),
//! measure read bandwidth of each with a pinned team, and flag chunks
//! below the node's median by more than the noise. With root, each
//! chunk's physical ranges come from `/proc/self/pagemap`, so a slow
//! range can be traced to a channel or DIMM.
//!
//! Units: GB/s = 10^9 bytes per second, bytes read counted once.

use std::time::Instant;

use place::pagemap::PhysRange;
use place::{Buffer, MemPolicy, PageKind};
use serde::{Deserialize, Serialize};

use crate::team;
use events::{Event, Observer, StopFlag};

/// The phase name of the scan's events.
pub const PHASE: &str = "scan";
/// A chunk is flagged when below the median by more than the noise, and
/// never by less than this (percent).
pub const MIN_MARGIN_PCT: f64 = 2.0;

/// What to scan.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanSpec {
    pub mem_node: u32,
    /// The CPUs of the reading team.
    pub cpus: Vec<u32>,
    /// Chunks x chunk bytes: what is filled.
    pub chunks: usize,
    pub chunk_bytes: u64,
    /// Timed repetitions per chunk (the best is the figure).
    pub reps: usize,
    pub pages: PageKind,
    /// Read `/proc/self/pagemap` for physical ranges.
    pub physical: bool,
}

/// One chunk measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub index: usize,
    pub bytes: u64,
    pub best_gbs: f64,
    pub median_gbs: f64,
    /// `(max - min) / median` of the repetitions, percent.
    pub spread_pct: f64,
    /// Share of sampled pages on the node.
    pub on_node: f64,
    /// Physical ranges (`None` without root or when not asked).
    pub phys: Option<Vec<PhysRange>>,
}

/// The node's verdict over its chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub median_gbs: f64,
    /// The median of the chunks' spreads (percent), at least
    /// [`MIN_MARGIN_PCT`]: how far below the median counts as slow.
    pub margin_pct: f64,
    /// Indexes of the chunks below `median * (1 - margin)`.
    pub slow: Vec<usize>,
}

/// Why a scan could not run.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Place(#[from] place::PlaceError),
    #[error(transparent)]
    Team(#[from] team::TeamError),
    #[error(transparent)]
    Kernel(#[from] kernels::KernelError),
    #[error("chunk {0}: the read kernel summed {1}, expected {2}: the measurement is void")]
    Validation(usize, f64, f64),
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Flags the chunks below the median by more than the noise.
pub fn verdict(chunks: &[Chunk]) -> Verdict {
    let median_gbs = median(&mut chunks.iter().map(|c| c.best_gbs).collect::<Vec<_>>());
    let margin_pct =
        median(&mut chunks.iter().map(|c| c.spread_pct).collect::<Vec<_>>()).max(MIN_MARGIN_PCT);
    let slow = chunks
        .iter()
        .filter(|c| c.best_gbs < median_gbs * (1.0 - margin_pct / 100.0))
        .map(|c| c.index)
        .collect();
    Verdict { median_gbs, margin_pct, slow }
}

/// Runs the scan; stops cleanly between chunks when `stop` is set and
/// returns the chunks measured so far (each reported as a progress
/// event as it is measured).
pub fn run(spec: &ScanSpec, obs: &dyn Observer, stop: &StopFlag) -> Result<Vec<Chunk>, ScanError> {
    let ops = kernels::select(None)?;
    let threads = spec.cpus.len().max(1);
    let page = place::base_page_size() as u64;
    // Per-thread parts of whole pages.
    let per_thread = (spec.chunk_bytes / threads as u64 / page).max(1) * page;
    let chunk_bytes = per_thread * threads as u64;
    let elems = (per_thread / 8) as usize;
    obs.event(Event::PhaseStart { phase: PHASE.into(), total: spec.chunks as u64 });
    let mut held: Vec<Buffer> = Vec::with_capacity(spec.chunks);
    let mut out = Vec::with_capacity(spec.chunks);
    let node: topo::NodeSet = [spec.mem_node].into_iter().collect();
    for index in 0..spec.chunks {
        if stop.is_stopped() {
            break;
        }
        let buf = Buffer::alloc(chunk_bytes as usize, spec.pages)?;
        buf.bind(&MemPolicy::Bind(node.clone()))?;
        let base = buf.as_ptr() as usize;
        // First touch from the team, each thread its own part.
        team::run(&spec.cpus, |w| {
            // SAFETY: each worker writes only its own disjoint part of a
            // live buffer that outlives the team.
            let part = unsafe {
                std::slice::from_raw_parts_mut((base as *mut f64).add(w.index() * elems), elems)
            };
            part.fill(1.0);
        })?;
        let on_node = buf.page_nodes(4096)?.fraction_on(&node);
        let mut rates = Vec::with_capacity(spec.reps);
        for _ in 0..spec.reps.max(1) {
            if stop.is_stopped() && !rates.is_empty() {
                break;
            }
            // Timed from a barrier all workers pass to the last one done.
            let got = team::run(&spec.cpus, |w| {
                // SAFETY: as above; reads only.
                let part = unsafe {
                    std::slice::from_raw_parts((base as *const f64).add(w.index() * elems), elems)
                };
                w.sync();
                let t0 = Instant::now();
                let sum = ops.sum(part);
                (sum, t0)
            })?;
            let end = Instant::now();
            let start = got.iter().map(|(_, t)| *t).min().expect("a team has workers");
            let secs = end.duration_since(start).as_secs_f64().max(1e-9);
            let total: f64 = got.iter().map(|(s, _)| s).sum();
            let want = (elems * threads) as f64;
            if (total - want).abs() > want * 1e-9 {
                return Err(ScanError::Validation(index, total, want));
            }
            rates.push(chunk_bytes as f64 / secs / 1e9);
        }
        let best = rates.iter().copied().fold(0.0, f64::max);
        let worst = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(&mut rates.clone());
        let phys = if spec.physical {
            place::pagemap::physical_ranges(buf.as_ptr(), buf.len())?
        } else {
            None
        };
        out.push(Chunk {
            index,
            bytes: chunk_bytes,
            best_gbs: best,
            median_gbs: med,
            spread_pct: if med > 0.0 { (best - worst) / med * 100.0 } else { 0.0 },
            on_node,
            phys,
        });
        held.push(buf);
        obs.event(Event::Progress {
            phase: PHASE.into(),
            done: index as u64 + 1,
            what: format!("chunk {index}: {best:.2} GB/s"),
        });
    }
    obs.event(Event::PhaseEnd { phase: PHASE.into() });
    drop(held);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(index: usize, gbs: f64, spread: f64) -> Chunk {
        Chunk {
            index,
            bytes: 1 << 30,
            best_gbs: gbs,
            median_gbs: gbs,
            spread_pct: spread,
            on_node: 1.0,
            phys: None,
        }
    }

    #[test]
    fn a_chunk_below_the_median_by_more_than_the_noise_is_flagged() {
        let c =
            [chunk(0, 100.0, 1.0), chunk(1, 99.0, 1.0), chunk(2, 90.0, 1.0), chunk(3, 101.0, 1.0)];
        let v = verdict(&c);
        assert_eq!(v.median_gbs, 99.5);
        assert_eq!(v.margin_pct, MIN_MARGIN_PCT, "noise below the floor");
        assert_eq!(v.slow, [2]);
        // Noisy repetitions (15%) hide a 10% dip.
        let noisy: Vec<Chunk> = c.iter().map(|x| Chunk { spread_pct: 15.0, ..x.clone() }).collect();
        assert!(verdict(&noisy).slow.is_empty());
    }

    #[test]
    fn a_small_scan_measures_every_chunk_on_the_node() {
        let spec = ScanSpec {
            mem_node: 0,
            cpus: vec![place::current_cpu().unwrap_or(0)],
            chunks: 3,
            chunk_bytes: 4 << 20,
            reps: 2,
            pages: PageKind::Base,
            physical: true,
        };
        let got = run(&spec, &events::Silent, &StopFlag::new()).unwrap();
        assert_eq!(got.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2]);
        for c in &got {
            assert_eq!(c.bytes, 4 << 20);
            assert!(c.best_gbs > 0.0 && c.on_node == 1.0, "{c:?}");
        }
        // A stop before the start measures nothing.
        let stop = StopFlag::new();
        stop.stop();
        assert!(run(&spec, &events::Silent, &stop).unwrap().is_empty());
    }
}
