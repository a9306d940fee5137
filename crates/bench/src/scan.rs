//! Per-range bandwidth scan of one memory node (like MLC's
//! `--memory_bandwidth_scan`): fill part of what the node can spare in
//! chunks that stay allocated (so each lands on other physical memory),
//! measure read bandwidth of each with a pinned team, and flag chunks
//! below the node's median by more than the noise. A flagged chunk is
//! re-measured in rounds alternating with a reference chunk (the one
//! nearest the median): it is called slow only when it stays slower in
//! every round, so a change of load between the first pass and now is
//! not taken for slow memory. Repetitions during which a reading thread
//! waited to run are discarded ([`crate::disturb`]). With root, each
//! chunk's physical ranges come from `/proc/self/pagemap`, so a slow
//! range can be traced to a channel or DIMM.
//!
//! Units: GB/s = 10^9 bytes per second, bytes read counted once.

use std::time::Instant;

use place::pagemap::PhysRange;
use place::{Buffer, MemPolicy};
use results::disturbance::Disturbance;
use results::pages::PageKind;
use serde::{Deserialize, Serialize};
use topo::units::binary_size;

use crate::disturb::{self, SampleCheck, Tally, ThreadClock};
use crate::team;
use events::{Event, Observer, StopFlag};

/// The phase name of the scan's events.
pub const PHASE: &str = "scan";
/// A chunk is flagged when below the median by more than the noise, and
/// never by less than this (percent).
pub const MIN_MARGIN_PCT: f64 = 2.0;
/// Rounds of the re-measurement of a flagged chunk: each reads the
/// reference chunk and the flagged one once, in alternating order.
pub const RECHECK_ROUNDS: usize = 5;
/// The default chunk: 1 GiB.
pub const DEFAULT_CHUNK: u64 = 1 << 30;

/// The default total's cap: 8 GiB.
pub const DEFAULT_MAX_TOTAL: u64 = 8 << 30;

/// What a scan fills without `--size`: half of what the node can spare,
/// at most [`DEFAULT_MAX_TOTAL`].
pub fn default_total(spare: u64) -> u64 {
    (spare / 2).min(DEFAULT_MAX_TOTAL)
}

/// `--size`: bytes, or everything the node can spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Total {
    Bytes(u64),
    All,
}

/// The nearest node with CPUs to `node` (itself when it has CPUs): the
/// node whose CPUs read a scan of `node` by default.
pub fn nearest_cpu_node(t: &topo::Topology, node: u32) -> Option<u32> {
    let with_cpus: Vec<u32> = t.cpu_nodes().map(|n| n.id).collect();
    if with_cpus.contains(&node) {
        return Some(node);
    }
    with_cpus.into_iter().min_by_key(|&c| (t.distance(c, node).unwrap_or(u32::MAX), c))
}

/// How much of a node a scan fills, in how many chunks ([`sizing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Sizing {
    /// What was asked: `size`, `all` or `default`.
    pub total_from: &'static str,
    pub chunk_bytes: u64,
    pub chunks: usize,
    /// What the node can spare.
    pub spare_bytes: u64,
    /// Said when the default chunk was made smaller to fit the total.
    pub smaller_chunk: Option<String>,
    /// Said when the total is not a whole number of chunks.
    pub left_over: Option<String>,
}

/// A size or chunk the node cannot take, or a chunk too small for the
/// team: the user's mistake, nothing allocated. Sizes in bytes; `mem` is
/// the node's memory, for what it can spare ([`can_spare`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizingError {
    /// A total to scan beyond what the node can spare.
    #[error("{} to scan: {}; nothing was allocated", binary_size(*.total), can_spare(.mem))]
    TotalOverSpare { total: u64, mem: place::NodeMemory },
    /// A chunk larger than the total; `total_from` as in
    /// [`Sizing::total_from`].
    #[error(
        "chunks of {} are larger than the total to scan, {} ({total_from}; {}); nothing was allocated",
        binary_size(*.chunk), binary_size(*.total), can_spare(.mem)
    )]
    ChunkOverTotal { chunk: u64, total: u64, total_from: &'static str, mem: place::NodeMemory },
    /// A chunk that holds less than one page per reading thread.
    #[error(
        "chunks of {}: each of the {threads} reading thread(s) needs at least one page of {}",
        binary_size(*.chunk), binary_size(*.page)
    )]
    ChunkUnderPages { chunk: u64, threads: usize, page: u64 },
}

/// What node `mem.node` can spare, and why: `node N can spare X (A
/// available, R kept free)`.
pub fn can_spare(mem: &place::NodeMemory) -> String {
    format!(
        "node {} can spare {} ({} available, {} kept free)",
        mem.node,
        binary_size(mem.spare_bytes),
        binary_size(mem.available_bytes),
        binary_size(mem.reserve_bytes)
    )
}

/// The chunks to scan on `mem` (node `mem.node`) for `threads` readers
/// with `page`-byte pages: `size` (default: [`default_total`]) in chunks
/// of `chunk` (default: [`DEFAULT_CHUNK`], an eighth of the total when
/// that is more than a quarter of it), each a whole number of pages.
pub fn sizing(
    mem: &place::NodeMemory,
    size: Option<Total>,
    chunk: Option<u64>,
    threads: usize,
    page: u64,
) -> Result<Sizing, SizingError> {
    let spare = mem.spare_bytes;
    let human = binary_size;
    let (total, total_from) = match size {
        Some(Total::Bytes(s)) if s > spare => {
            return Err(SizingError::TotalOverSpare { total: s, mem: *mem })
        }
        Some(Total::Bytes(s)) => (s, "size"),
        Some(Total::All) => (spare, "all"),
        None => (default_total(spare), "default"),
    };
    let page_per_thread = page * threads as u64;
    let mut smaller_chunk = None;
    let asked = match chunk {
        Some(c) => c,
        None if DEFAULT_CHUNK <= total / 4 => DEFAULT_CHUNK,
        None => {
            let c = (total / 8 / page_per_thread * page_per_thread).max(page_per_thread);
            smaller_chunk = Some(format!(
                "chunks of {} instead of the default {}: the total to scan is {}",
                human(c),
                human(DEFAULT_CHUNK),
                human(total)
            ));
            c
        }
    };
    if asked > total {
        return Err(SizingError::ChunkOverTotal { chunk: asked, total, total_from, mem: *mem });
    }
    let chunk = asked / page * page;
    if chunk < page * threads as u64 {
        return Err(SizingError::ChunkUnderPages { chunk: asked, threads, page });
    }
    let chunks = (total / chunk) as usize;
    let left_over = (total % chunk != 0).then(|| {
        format!(
            "scanning {} chunk(s) of {} = {}: the {} left over is not a whole chunk",
            chunks,
            human(chunk),
            human(chunk * chunks as u64),
            human(total - chunk * chunks as u64)
        )
    });
    Ok(Sizing {
        total_from,
        chunk_bytes: chunk,
        chunks,
        spare_bytes: spare,
        smaller_chunk,
        left_over,
    })
}

/// Attempts per wanted repetition while disturbed ones are replaced.
const ATTEMPTS_PER_REP: usize = 3;

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

/// The re-measurement of a flagged chunk against the reference chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recheck {
    /// Index of the reference chunk (the one nearest the median).
    pub reference: usize,
    /// Per round: this chunk's GB/s over the reference's.
    pub ratios: Vec<f64>,
    /// The median of `ratios`.
    pub ratio: f64,
    /// Slower than the reference by more than the margin at the median,
    /// and slower in every round.
    pub slow: bool,
    /// False when the re-measurement was disturbed: then it decides
    /// nothing (the chunk is `unconfirmed`).
    #[serde(default = "results::disturbance::unchecked_is_stable")]
    pub stable: bool,
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
    /// False when too few repetitions were clean or the team waited to
    /// run too long ([`Disturbance::stable`]).
    #[serde(default = "results::disturbance::unchecked_is_stable")]
    pub stable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
    /// The re-measurement, for a chunk the first pass flagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recheck: Option<Recheck>,
}

/// The node's verdict over its chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub median_gbs: f64,
    /// The median of the chunks' spreads (percent), at least
    /// [`MIN_MARGIN_PCT`]: how far below the median counts as slow.
    pub margin_pct: f64,
    /// Chunks below `median * (1 - margin)` that stayed slower than the
    /// reference chunk when re-measured.
    pub slow: Vec<usize>,
    /// Chunks below it on the first pass but not when re-measured (a
    /// change of load, not the memory).
    pub cleared: Vec<usize>,
    /// Chunks below it on the first pass whose re-measurement was
    /// stopped or disturbed: neither slow nor cleared.
    pub unconfirmed: Vec<usize>,
    /// Chunks whose figure is unstable (disturbed).
    pub unstable: Vec<usize>,
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

fn median(v: &[f64]) -> f64 {
    results::stats::median(v).unwrap_or(0.0)
}

/// The first pass's candidates: chunks below the median by more than the
/// noise (median GB/s, margin %, candidates).
fn candidates(chunks: &[Chunk]) -> (f64, f64, Vec<usize>) {
    let median_gbs = median(&chunks.iter().map(|c| c.best_gbs).collect::<Vec<_>>());
    let margin_pct =
        median(&chunks.iter().map(|c| c.spread_pct).collect::<Vec<_>>()).max(MIN_MARGIN_PCT);
    let below = chunks
        .iter()
        .filter(|c| c.best_gbs < median_gbs * (1.0 - margin_pct / 100.0))
        .map(|c| c.index)
        .collect();
    (median_gbs, margin_pct, below)
}

/// Judges a re-measurement: per-round ratios against the margin
/// (`stable`: its reads were not disturbed).
pub fn judge_recheck(reference: usize, ratios: Vec<f64>, margin_pct: f64, stable: bool) -> Recheck {
    let ratio = median(&ratios);
    let slow = stable
        && !ratios.is_empty()
        && ratio < 1.0 - margin_pct / 100.0
        && ratios.iter().all(|&r| r < 1.0);
    Recheck { reference, ratios, ratio, slow, stable }
}

/// Flags the chunks below the median by more than the noise that stayed
/// slow when re-measured.
pub fn verdict(chunks: &[Chunk]) -> Verdict {
    let (median_gbs, margin_pct, below) = candidates(chunks);
    let mut v = Verdict {
        median_gbs,
        margin_pct,
        slow: Vec::new(),
        cleared: Vec::new(),
        unconfirmed: Vec::new(),
        unstable: chunks.iter().filter(|c| !c.stable).map(|c| c.index).collect(),
    };
    for i in below {
        match chunks.iter().find(|c| c.index == i).and_then(|c| c.recheck.as_ref()) {
            Some(r) if r.slow => v.slow.push(i),
            Some(r) if r.stable => v.cleared.push(i),
            _ => v.unconfirmed.push(i),
        }
    }
    v
}

/// GB/s (1e9 B/s) of one read of a chunk: `elems` 8-byte elements read
/// by each of `threads` threads in `secs` seconds, every byte counted once.
pub fn read_gbs(elems: usize, threads: usize, secs: f64) -> f64 {
    (elems * 8 * threads.max(1)) as f64 / secs / 1e9
}

/// How a chunk is cut between the reading threads: each thread's part is
/// whole pages (at least one), so the chunk is what they add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    /// Bytes of the chunk: the parts together.
    pub chunk_bytes: u64,
    /// 8-byte elements of each thread's part.
    pub elems: usize,
}

impl ChunkLayout {
    pub fn of(chunk_bytes: u64, threads: usize, page: u64) -> ChunkLayout {
        let threads = threads.max(1) as u64;
        let per_thread = (chunk_bytes / threads / page).max(1) * page;
        ChunkLayout { chunk_bytes: per_thread * threads, elems: (per_thread / 8) as usize }
    }
}

/// One chunk's buffer and where its threads' parts start.
struct Held {
    buf: Buffer,
    elems: usize,
}

/// One timed read of a chunk by the team: GB/s and each thread's check.
fn read_once(
    spec: &ScanSpec,
    index: usize,
    h: &Held,
    ops: &'static dyn kernels::Ops,
) -> Result<(f64, Vec<SampleCheck>), ScanError> {
    let base = h.buf.as_ptr() as usize;
    let elems = h.elems;
    // Timed from a barrier all workers pass to the last one done; each
    // worker reads its scheduling before the barrier and after its part.
    let got = team::run(&spec.cpus, |w| {
        // SAFETY: each worker reads only its own disjoint part of a live
        // buffer that outlives the team.
        let part = unsafe {
            std::slice::from_raw_parts((base as *const f64).add(w.index() * elems), elems)
        };
        let clock = ThreadClock::open();
        let before = clock.mark();
        let tb = Instant::now();
        w.sync();
        let t0 = Instant::now();
        let sum = ops.sum(part);
        let c = disturb::check(&before, &clock.mark(), tb.elapsed().as_nanos() as u64);
        (sum, t0, c)
    })?;
    let end = Instant::now();
    let start = got.iter().map(|(_, t, _)| *t).min().expect("a team has workers");
    let secs = end.duration_since(start).as_secs_f64().max(1e-9);
    let total: f64 = got.iter().map(|(s, _, _)| s).sum();
    let want = (elems * spec.cpus.len().max(1)) as f64;
    if (total - want).abs() > want * 1e-9 {
        return Err(ScanError::Validation(index, total, want));
    }
    let gbs = read_gbs(elems, spec.cpus.len(), secs);
    Ok((gbs, got.into_iter().map(|(_, _, c)| c).collect()))
}

/// One clean read of a chunk, tried up to [`ATTEMPTS_PER_REP`] times
/// (the last, disturbed, one when none was clean); `None` once stopped.
fn read_clean(
    spec: &ScanSpec,
    index: usize,
    h: &Held,
    ops: &'static dyn kernels::Ops,
    tally: &mut Tally,
    stop: &StopFlag,
) -> Result<Option<(f64, bool)>, ScanError> {
    let mut last = None;
    for _ in 0..ATTEMPTS_PER_REP {
        if stop.is_stopped() {
            break;
        }
        let (gbs, checks) = read_once(spec, index, h, ops)?;
        let clean = tally.add(&checks);
        last = Some((gbs, clean));
        if clean {
            break;
        }
    }
    Ok(last)
}

/// Runs the scan; stops cleanly between repetitions when `stop` is set
/// and returns the chunks measured so far (each reported as a progress
/// event as it is measured), flagged ones re-measured
/// ([`RECHECK_ROUNDS`] against the chunk nearest the median).
pub fn run(spec: &ScanSpec, obs: &dyn Observer, stop: &StopFlag) -> Result<Vec<Chunk>, ScanError> {
    let ops = kernels::select(None)?;
    let (mut out, held) = first_pass(spec, ops, obs, stop)?;
    recheck(spec, &mut out, &held, ops, obs, stop)?;
    drop(held);
    Ok(out)
}

/// Fills and measures every chunk once; the buffers stay allocated for
/// the re-measurement.
fn first_pass(
    spec: &ScanSpec,
    ops: &'static dyn kernels::Ops,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<(Vec<Chunk>, Vec<Held>), ScanError> {
    let ChunkLayout { chunk_bytes, elems } =
        ChunkLayout::of(spec.chunk_bytes, spec.cpus.len(), place::base_page_size() as u64);
    obs.event(Event::PhaseStart { phase: PHASE.into(), total: spec.chunks as u64 });
    let mut held: Vec<Held> = Vec::with_capacity(spec.chunks);
    let mut out = Vec::with_capacity(spec.chunks);
    let node: topo::NodeSet = [spec.mem_node].into_iter().collect();
    let mut unstable = disturb::Unstable::new();
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
        let h = Held { buf, elems };
        let mut rates = Vec::with_capacity(spec.reps);
        let mut tally = Tally::new();
        for _ in 0..spec.reps.max(1) {
            if stop.is_stopped() && !rates.is_empty() {
                break;
            }
            // a chunk begun gets at least one repetition, stopped or not
            let go = if rates.is_empty() { &StopFlag::new() } else { stop };
            let Some((gbs, clean)) = read_clean(spec, index, &h, ops, &mut tally, go)? else {
                break;
            };
            if clean || rates.is_empty() {
                rates.push(gbs);
            }
        }
        let best = rates.iter().copied().fold(0.0, f64::max);
        let worst = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(&rates);
        let phys = if spec.physical {
            place::pagemap::physical_ranges(h.buf.as_ptr(), h.buf.len())?
        } else {
            None
        };
        let d = tally.finish();
        let stable = d.stable(spec.reps.max(1).div_ceil(2));
        unstable.note(stable, Some(&d));
        out.push(Chunk {
            index,
            bytes: chunk_bytes,
            best_gbs: best,
            median_gbs: med,
            spread_pct: if med > 0.0 { (best - worst) / med * 100.0 } else { 0.0 },
            on_node,
            phys,
            stable,
            disturbance: Some(d),
            recheck: None,
        });
        held.push(h);
        obs.event(Event::Progress {
            phase: PHASE.into(),
            done: index as u64 + 1,
            what: format!("chunk {index}: {best:.2} GB/s"),
        });
    }
    obs.event(Event::PhaseEnd { phase: PHASE.into() });
    unstable.warn(obs, "scan");
    Ok((out, held))
}

/// Re-measures the first pass's candidates, each alternating with the
/// reference chunk (the one whose best is nearest the median).
fn recheck(
    spec: &ScanSpec,
    chunks: &mut [Chunk],
    held: &[Held],
    ops: &'static dyn kernels::Ops,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<(), ScanError> {
    let (median_gbs, margin_pct, below) = candidates(chunks);
    let Some(reference) = chunks
        .iter()
        .filter(|c| !below.contains(&c.index))
        .min_by(|a, b| (a.best_gbs - median_gbs).abs().total_cmp(&(b.best_gbs - median_gbs).abs()))
        .map(|c| c.index)
    else {
        return Ok(());
    };
    if below.is_empty() {
        return Ok(());
    }
    let phase = format!("{PHASE} recheck");
    obs.event(Event::PhaseStart { phase: phase.clone(), total: below.len() as u64 });
    for (k, &i) in below.iter().enumerate() {
        let mut ratios = Vec::with_capacity(RECHECK_ROUNDS);
        let mut tally = Tally::new();
        'rounds: for round in 0..RECHECK_ROUNDS {
            // alternate the order, so neither chunk always goes first
            let order = if round % 2 == 0 { [reference, i] } else { [i, reference] };
            let mut gbs = [0.0; 2];
            for (slot, &c) in order.iter().enumerate() {
                match read_clean(spec, c, &held[c], ops, &mut tally, stop)? {
                    Some((g, _)) => gbs[slot] = g,
                    None => break 'rounds,
                }
            }
            let (r, x) = if order[0] == reference { (gbs[0], gbs[1]) } else { (gbs[1], gbs[0]) };
            if r > 0.0 {
                ratios.push(x / r);
            }
        }
        if !ratios.is_empty() {
            let calm = tally.finish().stable(RECHECK_ROUNDS);
            chunks[i].recheck = Some(judge_recheck(reference, ratios, margin_pct, calm));
        }
        obs.event(Event::Progress {
            phase: phase.clone(),
            done: k as u64 + 1,
            what: format!("chunk {i} against chunk {reference}"),
        });
        if stop.is_stopped() {
            break;
        }
    }
    obs.event(Event::PhaseEnd { phase });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_memory(spare_gib: u64) -> place::NodeMemory {
        place::NodeMemory {
            node: 1,
            total_bytes: 64 << 30,
            free_bytes: spare_gib << 30,
            reclaimable_bytes: 0,
            available_bytes: spare_gib << 30,
            reserve_bytes: 0,
            spare_bytes: spare_gib << 30,
        }
    }

    /// The default total is half the spare memory; a default chunk that
    /// is more than a quarter of it becomes an eighth (and says so); a
    /// size past the spare memory or a chunk past the total is refused.
    #[test]
    fn sizing_fits_the_chunks_to_what_the_node_can_spare() {
        let s = sizing(&node_memory(4), None, None, 2, 4096).unwrap();
        assert_eq!((s.total_from, s.chunk_bytes, s.chunks), ("default", 256 << 20, 8));
        assert!(s.smaller_chunk.unwrap().starts_with("chunks of 256 MiB instead of the default"));
        assert_eq!(s.left_over, None);
        let s = sizing(&node_memory(64), Some(Total::Bytes(3 << 29)), None, 2, 4096).unwrap();
        assert_eq!((s.chunk_bytes, s.chunks), (192 << 20, 8));
        assert!(s.smaller_chunk.is_some());
        let s =
            sizing(&node_memory(64), Some(Total::Bytes(3 << 29)), Some(1 << 30), 2, 4096).unwrap();
        assert_eq!(s.chunks, 1);
        assert!(s.left_over.unwrap().contains("512 MiB left over"));
        let mem = node_memory(4);
        let e = sizing(&mem, Some(Total::Bytes(5 << 30)), None, 2, 4096).unwrap_err();
        assert_eq!(e, SizingError::TotalOverSpare { total: 5 << 30, mem });
        assert!(can_spare(&mem).starts_with("node 1 can spare 4 GiB"), "{}", can_spare(&mem));
        let e = sizing(&mem, Some(Total::All), Some(8 << 30), 2, 4096).unwrap_err();
        let want =
            SizingError::ChunkOverTotal { chunk: 8 << 30, total: 4 << 30, total_from: "all", mem };
        assert_eq!(e, want);
    }

    #[test]
    fn the_default_total_is_half_of_what_the_node_can_spare_at_most_8_gib() {
        assert_eq!(default_total(19 << 30), 8 << 30);
        assert_eq!(default_total(4 << 30), 2 << 30);
        assert_eq!(default_total(0), 0);
    }

    fn chunk(index: usize, gbs: f64, spread: f64) -> Chunk {
        Chunk {
            index,
            bytes: 1 << 30,
            best_gbs: gbs,
            median_gbs: gbs,
            spread_pct: spread,
            on_node: 1.0,
            phys: None,
            stable: true,
            disturbance: None,
            recheck: None,
        }
    }

    #[test]
    fn a_chunk_below_the_median_by_more_than_the_noise_is_a_candidate() {
        let c =
            [chunk(0, 100.0, 1.0), chunk(1, 99.0, 1.0), chunk(2, 90.0, 1.0), chunk(3, 101.0, 1.0)];
        let v = verdict(&c);
        assert_eq!(v.median_gbs, 99.5);
        assert_eq!(v.margin_pct, MIN_MARGIN_PCT, "noise below the floor");
        // not re-measured: neither slow nor cleared
        assert_eq!((v.slow.len(), v.cleared.len()), (0, 0));
        assert_eq!(v.unconfirmed, [2]);
        // Noisy repetitions (15%) hide a 10% dip.
        let noisy: Vec<Chunk> = c.iter().map(|x| Chunk { spread_pct: 15.0, ..x.clone() }).collect();
        assert!(verdict(&noisy).unconfirmed.is_empty());
    }

    #[test]
    fn a_candidate_is_slow_only_when_it_stays_slower_than_the_reference() {
        let mut c =
            [chunk(0, 100.0, 1.0), chunk(1, 99.0, 1.0), chunk(2, 90.0, 1.0), chunk(3, 101.0, 1.0)];
        // slower in every round, by ~10%
        c[2].recheck = Some(judge_recheck(1, vec![0.91, 0.9, 0.89, 0.92, 0.9], 2.0, true));
        let v = verdict(&c);
        assert_eq!((v.slow.clone(), v.cleared.clone()), (vec![2], vec![]));
        // the first pass met a burst of load: as fast as the reference now
        c[2].recheck = Some(judge_recheck(1, vec![1.0, 0.99, 1.01, 1.0, 0.995], 2.0, true));
        let v = verdict(&c);
        assert_eq!((v.slow.clone(), v.cleared.clone()), (vec![], vec![2]));
        // a disturbed re-measurement decides nothing
        c[2].recheck = Some(judge_recheck(1, vec![0.9; 5], 2.0, false));
        let v = verdict(&c);
        assert_eq!((v.slow.len(), v.cleared.len(), v.unconfirmed.clone()), (0, 0, vec![2]));
    }

    #[test]
    fn a_recheck_needs_every_round_slower_and_the_median_past_the_margin() {
        assert!(judge_recheck(0, vec![0.9, 0.9, 0.9], 2.0, true).slow);
        assert!(!judge_recheck(0, vec![0.9, 1.01, 0.9], 2.0, true).slow, "one round as fast");
        assert!(!judge_recheck(0, vec![0.99, 0.985, 0.99], 2.0, true).slow, "within the margin");
        assert!(!judge_recheck(0, vec![], 2.0, true).slow);
        assert!(!judge_recheck(0, vec![0.9, 0.9, 0.9], 2.0, false).slow, "disturbed");
        assert_eq!(judge_recheck(0, vec![0.8, 0.95, 0.9], 2.0, true).ratio, 0.9);
    }

    #[test]
    fn a_chunk_is_cut_into_whole_pages_per_thread() {
        let mib4 = 4 << 20;
        assert_eq!(
            ChunkLayout::of(mib4, 1, 4096),
            ChunkLayout { chunk_bytes: mib4, elems: 524_288 }
        );
        assert_eq!(
            ChunkLayout::of(mib4, 2, 4096),
            ChunkLayout { chunk_bytes: mib4, elems: 262_144 }
        );
        // 4 MiB / 3 is 341.33 pages: 341 pages each, 1023 in all
        assert_eq!(
            ChunkLayout::of(mib4, 3, 4096),
            ChunkLayout { chunk_bytes: 3 * 341 * 4096, elems: 341 * 512 }
        );
        // less than a page per thread: one page each
        assert_eq!(
            ChunkLayout::of(5000, 3, 4096),
            ChunkLayout { chunk_bytes: 3 * 4096, elems: 512 }
        );
        assert_eq!(ChunkLayout::of(mib4, 0, 4096), ChunkLayout::of(mib4, 1, 4096));
    }

    #[test]
    fn read_bandwidth_counts_every_threads_bytes_once() {
        // 125 M elements (1 GB) per thread in half a second: 2 GB/s each
        assert_eq!(read_gbs(125_000_000, 1, 0.5), 2.0);
        assert_eq!(read_gbs(125_000_000, 2, 0.5), 4.0);
        assert_eq!(read_gbs(125_000_000, 3, 0.5), 6.0);
        assert_eq!(read_gbs(125_000_000, 3, 0.25), 12.0);
        assert_eq!(read_gbs(341 * 512, 3, 0.5), 3.0 * 341.0 * 4096.0 / 0.5 / 1e9);
    }

    #[test]
    fn a_disturbed_chunk_is_listed_unstable() {
        let mut c = [chunk(0, 100.0, 1.0), chunk(1, 100.0, 1.0)];
        c[1].stable = false;
        assert_eq!(verdict(&c).unstable, [1]);
    }

    /// A burst of load during the first pass made chunks look slow. Re-measured against the reference, the same memory is as
    /// fast: the chunk is not called slow.
    ///
    /// A measurement of this machine's memory: beside the other tests of
    /// this crate, which measure memory on the same cores at the same time,
    /// the re-measurement's rounds differ by up to half (seen in a CI run:
    /// ratios 0.41 to 0.97), which is what this test must not be given. It
    /// runs alone, in `.ci/run`'s step "measurements that run alone".
    #[test]
    #[ignore = "a measurement that runs alone: .ci/run runs it by name with --ignored --test-threads 1"]
    fn a_chunk_slow_only_in_the_first_pass_is_not_called_slow() {
        let spec = ScanSpec {
            mem_node: 0,
            cpus: vec![place::current_cpu().unwrap_or(0)],
            chunks: 3,
            chunk_bytes: 8 << 20,
            reps: 3,
            pages: PageKind::Base,
            physical: false,
        };
        let ops = kernels::select(None).unwrap();
        let stop = StopFlag::new();
        let (mut chunks, held) = first_pass(&spec, ops, &events::Silent, &stop).unwrap();
        // as if a burst of load had hit chunk 1's first pass; a 10% margin
        // (the spread between repetitions) is far below the burst but
        // above what the pages of one node differ by on a shared machine
        let median = chunks[0].best_gbs.max(chunks[2].best_gbs);
        for c in chunks.iter_mut() {
            c.best_gbs = median;
            c.spread_pct = 10.0;
        }
        chunks[1].best_gbs = median * 0.5;
        assert_eq!(verdict(&chunks).unconfirmed, [1], "a candidate before the re-measurement");
        recheck(&spec, &mut chunks, &held, ops, &events::Silent, &stop).unwrap();
        let r = chunks[1].recheck.as_ref().expect("the candidate was re-measured");
        assert_ne!(r.reference, 1);
        assert_eq!(r.ratios.len(), RECHECK_ROUNDS);
        assert!(chunks[0].recheck.is_none() && chunks[2].recheck.is_none());
        let v = verdict(&chunks);
        assert!(v.slow.is_empty(), "the same memory re-measured is as fast: {r:?}");
        assert_eq!(v.cleared.len() + v.unconfirmed.len(), 1, "{v:?}");
    }

    /// On one node every page lands on node 0 whatever the policy, so
    /// where the pages are proves nothing: the policy of every chunk is
    /// read back from the kernel (`get_mempolicy(MPOL_F_ADDR)`).
    #[test]
    fn every_chunk_is_bound_to_the_node_it_scans() {
        let spec = ScanSpec {
            mem_node: 0,
            cpus: vec![place::current_cpu().unwrap_or(0)],
            chunks: 2,
            chunk_bytes: 1 << 20,
            reps: 1,
            pages: PageKind::Base,
            physical: false,
        };
        let ops = kernels::select(None).unwrap();
        let (chunks, held) = first_pass(&spec, ops, &events::Silent, &StopFlag::new()).unwrap();
        assert_eq!(held.len(), 2);
        let node0 = place::MemPolicy::Bind(topo::NodeSet::from_iter([0]));
        for (c, h) in chunks.iter().zip(&held) {
            assert_eq!(c.on_node, 1.0, "{c:?}");
            let last = h.buf.as_ptr().wrapping_add(h.buf.len() - 1);
            for p in [h.buf.as_ptr(), last] {
                assert_eq!(place::policy_at(p).unwrap(), node0, "chunk {}", c.index);
            }
        }
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
            let d = c.disturbance.as_ref().expect("every chunk is checked");
            assert!(d.clean + d.disturbed >= 2, "{d:?}");
        }
        // A stop before the start measures nothing.
        let stop = StopFlag::new();
        stop.stop();
        assert!(run(&spec, &events::Silent, &stop).unwrap().is_empty());
    }
}
