//! `lat --per-cpu --sweep`: the working-set sweep repeated from each of
//! several CPUs (an even sample of the usable ones) to one memory node, so
//! per-CPU cache plateaus and DRAM latency stand side by side (what seed
//! 003 did with a shell loop over `taskset` and lmbench).
//!
//! Sizes up to the last-level cache are chased at the cache stride (every
//! cache set used), sizes past it at the DRAM stride, as [`super::sweep`]
//! does; the DRAM column and the CPU groups that compare CPUs at DRAM come
//! only from the largest size past the LLC, never from a cached size.

use std::time::Duration;

use kernels::chase::Ring;
use serde::{Deserialize, Serialize};
use topo::units::binary_size;
use topo::Topology;

use events::{Event, Observer};
use results::lat::{CacheMark, CpuGroup, LatResult, LatSummary, Mode, PerCpuSweepSummary};

use super::{
    arena, cpu_node_of, default_sweep_max, emit, fit_size, group_cpus, lat_result, measure, on_cpu,
    plateau, resolve, spread_sample, usable_cpus, warn_placement, warn_unstable, ChaseOpts, Ctx,
    LatError, Resolved, Timing, Where, MIN_SIZE_BYTES,
};

/// CPUs a per-CPU sweep measures by default (`--max-cpus`): a few, spread
/// evenly, so it takes minutes, not hours.
pub const DEFAULT_MAX_CPUS: usize = 8;

/// What to measure in [`per_cpu_sweep`].
#[derive(Debug, Clone, PartialEq)]
pub struct PerCpuSweepSpec {
    pub mem_node: Option<u32>,
    /// At most this many CPUs, spread evenly over the usable ones.
    pub max_cpus: usize,
    /// The sizes to chase (`--sizes`), bytes, instead of the 4 KiB to
    /// largest-size series: sorted here, the largest bounds the buffer.
    pub sizes: Option<Vec<u64>>,
}

pub use results::lat::{CpuPlateaus, SizeGroups};

/// The plan of a per-CPU sweep, known before anything is allocated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuSweepPlan {
    pub mem_node: Option<u32>,
    pub cpus: Vec<u32>,
    pub sizes: Vec<u64>,
    /// The last-level cache of the first CPU, bytes (0 when unknown).
    pub llc_bytes: u64,
    /// Estimated duration, seconds (samples, sample time and warm-up walk
    /// of every point; ring building not counted).
    pub estimate_s: f64,
}

impl PerCpuSweepPlan {
    /// Points to measure: CPUs x sizes.
    pub fn points(&self) -> usize {
        self.cpus.len() * self.sizes.len()
    }
}

/// Latency against working-set size from each of several CPUs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuSweepReport {
    pub mode: Mode,
    pub mem_node: Option<u32>,
    /// The CPUs chosen (those measured are in `results`).
    pub cpus: Vec<u32>,
    /// The sizes of every CPU's sweep, bytes.
    pub sizes: Vec<u64>,
    /// Data caches of the first CPU chosen.
    pub caches: Vec<CacheMark>,
    /// One chase per CPU and size, CPU by CPU (mode `per-cpu-sweep`).
    pub results: Vec<LatResult>,
    /// The plateaus of each CPU's curve (from each point's fastest sample,
    /// as the single sweep).
    pub plateaus: Vec<CpuPlateaus>,
    /// CPU groups at each size measured from at least two CPUs.
    pub groups_by_size: Vec<SizeGroups>,
    /// The size the DRAM column comes from: the largest size past the
    /// last-level cache, chased at the DRAM stride; absent when no size
    /// passed the LLC (then nothing here is called DRAM).
    pub dram_size_bytes: Option<u64>,
    pub dram_stride_bytes: usize,
    /// The groups at the DRAM size (CPUs that differ beyond the noise).
    pub dram_groups: Vec<CpuGroup>,
    pub dram_noise_ns: f64,
    /// What the reader should know of the groups: the grouping's own note,
    /// or why there is no DRAM column once the front end has worded
    /// `no_dram` ([`PerCpuSweepReport::conclude`]).
    pub note: Option<String>,
    pub estimate_s: f64,
    /// Why nothing is called DRAM, until [`PerCpuSweepReport::conclude`]
    /// words it into `note` (never in a document: `note` is).
    #[serde(skip)]
    pub no_dram: Option<NoDram>,
}

/// Why a per-CPU sweep has no DRAM column. Its own words name no flag: the
/// front end words it with the options that set the sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoDram {
    /// The last-level cache's size is unknown: no size is called DRAM.
    #[error("the last-level cache size is unknown: no size is called DRAM")]
    UnknownLlc,
    /// No size was measured past the last-level cache (`llc_bytes`).
    #[error("no size measured past the last-level cache ({}): no DRAM column", binary_size(*.llc_bytes))]
    NoSizePastLlc { llc_bytes: u64 },
}

/// The per-point time of `timing` for a ring of `elems` elements: the
/// samples plus the warm-up walk at an assumed 100 ns per load (a DRAM
/// load; cached points are faster, so this is an upper figure).
fn point_estimate_s(timing: &Timing, elems: u64) -> f64 {
    let warm = elems.min(timing.max_warmup_loads).max(1) as f64;
    timing.samples as f64 * timing.sample_time.as_secs_f64() + warm * 100e-9
}

/// The plan: which CPUs, which sizes, how long. Validates the request
/// against the topology and the node's spare memory; allocates nothing.
pub fn plan(
    topo: &Topology,
    spec: &PerCpuSweepSpec,
    opts: &ChaseOpts,
    timing: &Timing,
) -> Result<PerCpuSweepPlan, LatError> {
    let first = resolve(topo, &Where { mem_node: spec.mem_node, ..Where::default() })?;
    let usable: Vec<u32> = usable_cpus(topo).iter().collect();
    let cpus = spread_sample(&usable, spec.max_cpus.max(1));
    let llc = topo.caches_of(first.cpu).last().map_or(0, |c| c.size_bytes);
    let sizes = match &spec.sizes {
        Some(list) => listed_sizes(topo, first.mem_node, list, opts, llc)?,
        None => {
            let max =
                opts.size_bytes.unwrap_or_else(|| default_sweep_max((llc > 0).then_some(llc)));
            let max = fit_size(topo, first.mem_node, max, opts.size_bytes.is_some(), opts.pages)?;
            let min = (4096u64).max(2 * opts.cache_stride_bytes.max(opts.stride_bytes) as u64);
            plateau::sweep_sizes(min, max)
        }
    };
    let per_cpu: f64 = sizes
        .iter()
        .map(|&s| {
            let stride = if s <= llc { opts.cache_stride_bytes } else { opts.stride_bytes };
            point_estimate_s(timing, s / stride as u64)
        })
        .sum();
    Ok(PerCpuSweepPlan {
        mem_node: first.mem_node,
        estimate_s: per_cpu * cpus.len() as f64,
        cpus,
        sizes,
        llc_bytes: llc,
    })
}

/// Why a list of sizes to sweep is refused (sizes in bytes).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SizesRefusal {
    #[error("no size given to sweep")]
    Empty,
    #[error("size {} given twice", binary_size(*.0))]
    Twice(u64),
    /// `size` holds fewer than two elements of the `stride` it is chased
    /// at (`min` bytes).
    #[error(
        "size {size} bytes is below the minimum of {min} bytes (two elements of stride {stride})"
    )]
    BelowMinimum { size: u64, min: u64, stride: u64 },
}

/// The sizes of a listed sweep, ascending: none missing, none repeated, each
/// holding two elements of the stride it is chased at, the largest within
/// what the node can spare (the buffer is allocated once at that size).
fn listed_sizes(
    topo: &Topology,
    node: Option<u32>,
    list: &[u64],
    opts: &ChaseOpts,
    llc: u64,
) -> Result<Vec<u64>, LatError> {
    let bad = |r: SizesRefusal| Err(LatError::Sizes(r));
    let mut v = list.to_vec();
    v.sort_unstable();
    if v.is_empty() {
        return bad(SizesRefusal::Empty);
    }
    if let Some(w) = v.windows(2).find(|w| w[0] == w[1]) {
        return bad(SizesRefusal::Twice(w[0]));
    }
    for &s in &v {
        let stride = if s <= llc { opts.cache_stride_bytes } else { opts.stride_bytes } as u64;
        let min = MIN_SIZE_BYTES.max(2 * stride);
        if s < min {
            return bad(SizesRefusal::BelowMinimum { size: s, min, stride });
        }
    }
    let largest = *v.last().unwrap_or(&0);
    fit_size(topo, node, largest, true, opts.pages)?;
    Ok(v)
}

/// The plan in words, for the line printed before measuring.
pub fn plan_text(p: &PerCpuSweepPlan) -> String {
    format!(
        "per-CPU sweep: {} CPU(s) x {} sizes ({} to {}) = {} points to node {}, about {}",
        p.cpus.len(),
        p.sizes.len(),
        p.sizes.first().map_or("-".into(), |s| binary_size(*s)),
        p.sizes.last().map_or("-".into(), |s| binary_size(*s)),
        p.points(),
        p.mem_node.map_or("-".into(), |n| n.to_string()),
        duration_text(p.estimate_s)
    )
}

/// `45 s`, `12 min`, `3.2 h`.
pub fn duration_text(s: f64) -> String {
    if s < 90.0 {
        format!("{:.0} s", s.ceil())
    } else if s < 5400.0 {
        format!("{:.0} min", (s / 60.0).ceil())
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Runs the sweep of `plan` from each of its CPUs, CPU by CPU; a stop
/// (Ctrl-C) keeps what was measured. Each point is reported as it is
/// measured; the summary is reported by the caller, which words the note
/// first ([`PerCpuSweepReport::conclude`]).
pub fn per_cpu_sweep(
    topo: &Topology,
    spec: &PerCpuSweepSpec,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<PerCpuSweepReport, LatError> {
    let plan = plan(topo, spec, opts, &ctx.timing)?;
    let first = *plan.cpus.first().ok_or_else(|| LatError::BadRequest("no usable CPU".into()))?;
    let caches: Vec<CacheMark> = topo
        .caches_of(first)
        .iter()
        .map(|c| CacheMark { level: c.level, size_bytes: c.size_bytes })
        .collect();
    let max = *plan.sizes.last().ok_or_else(|| LatError::BadRequest("no size to sweep".into()))?;
    let llc = plan.llc_bytes;
    let layout = |size: u64| {
        let stride = if size <= llc { opts.cache_stride_bytes } else { opts.stride_bytes };
        opts.with_stride(stride)
    };
    let phase = "lat per-cpu sweep".to_string();
    ctx.observer.event(Event::PhaseStart { phase: phase.clone(), total: plan.points() as u64 });
    let mut a = on_cpu(first, || arena(max, opts, plan.mem_node))?;
    warn_placement(ctx.observer, &a.placement);
    let mut points: Vec<LatResult> = Vec::new();
    let mut done = 0u64;
    'cpus: for &cpu in &plan.cpus {
        let r = Resolved { cpu, cpu_node: cpu_node_of(topo, cpu), mem_node: plan.mem_node };
        for &size in &plan.sizes {
            if ctx.stop.is_stopped() {
                break 'cpus;
            }
            let o = layout(size);
            let map = &mut a.map;
            let s = on_cpu(cpu, || {
                let buf = &mut map.as_mut_slice()[..size as usize];
                let mut ring = Ring::build(buf, o.stride_bytes, o.group_elems(), o.seed ^ size)?;
                Ok(measure::measure_ring(&mut ring, &ctx.timing, ctx.stop))
            })?;
            let Some(s) = s else { break 'cpus };
            if let Some(res) =
                lat_result(Mode::PerCpuSweep, size, &r, &s, &o, &a.page, &a.placement)
            {
                emit(ctx.observer, res.clone());
                points.push(res);
            }
            done += 1;
            ctx.observer.event(Event::Progress {
                phase: phase.clone(),
                done,
                what: format!("CPU {cpu}, {}", binary_size(size)),
            });
        }
    }
    ctx.observer.event(Event::PhaseEnd { phase });
    if points.is_empty() {
        return Err(LatError::Stopped);
    }
    warn_unstable(ctx.observer, "lat per-cpu sweep", &points);
    Ok(summarize(topo, &plan, caches, points, opts.stride_bytes))
}

impl PerCpuSweepReport {
    /// The sweep concluded: why there is no DRAM column worded into `note`
    /// by the front end (`word`), then the summary reported to `obs`, to
    /// be stored after the points (kind `lat-summary`).
    pub fn conclude(&mut self, word: impl Fn(&NoDram) -> String, obs: &dyn Observer) {
        if let Some(why) = &self.no_dram {
            self.note = Some(word(why));
        }
        emit(obs, LatSummary::PerCpuSweep(self.summary()));
    }

    /// What is stored of the sweep besides its points (kind `lat-summary`):
    /// each CPU's plateaus and the CPU groups at each size.
    pub fn summary(&self) -> PerCpuSweepSummary {
        PerCpuSweepSummary {
            mode: Mode::PerCpuSweep,
            mem_node: self.mem_node,
            caches: self.caches.clone(),
            plateaus: self.plateaus.clone(),
            groups_by_size: self.groups_by_size.clone(),
            dram_size_bytes: self.dram_size_bytes,
            note: self.note.clone(),
        }
    }
}

/// The report of measured `points`: plateaus per CPU, groups per size, and
/// the DRAM column (largest size past the LLC at `dram_stride`).
pub fn summarize(
    topo: &Topology,
    plan: &PerCpuSweepPlan,
    caches: Vec<CacheMark>,
    points: Vec<LatResult>,
    dram_stride: usize,
) -> PerCpuSweepReport {
    let levels: Vec<(u8, u64)> = caches.iter().map(|c| (c.level, c.size_bytes)).collect();
    let mut measured_cpus: Vec<u32> = Vec::new();
    for p in &points {
        if !measured_cpus.contains(&p.cpu) {
            measured_cpus.push(p.cpu);
        }
    }
    let plateaus = measured_cpus
        .iter()
        .map(|&cpu| {
            let curve: Vec<(u64, f64)> =
                points.iter().filter(|p| p.cpu == cpu).map(|p| (p.size_bytes, p.min_ns)).collect();
            CpuPlateaus {
                cpu,
                cpu_node: cpu_node_of(topo, cpu),
                plateaus: plateau::plateaus(&curve, &levels),
            }
        })
        .collect();
    let at = |size: u64| -> Vec<LatResult> {
        points.iter().filter(|p| p.size_bytes == size).cloned().collect()
    };
    let groups_by_size: Vec<SizeGroups> = plan
        .sizes
        .iter()
        .filter_map(|&size| {
            let pts = at(size);
            let stride = pts.first()?.stride_bytes;
            if pts.len() < 2 {
                return None;
            }
            let g = group_cpus(topo, plan.mem_node, pts);
            Some(SizeGroups {
                size_bytes: size,
                stride_bytes: stride,
                groups: g.groups,
                noise_ns: g.noise_ns,
            })
        })
        .collect();
    // DRAM: only a size past the last-level cache, chased at the DRAM
    // stride, and measured on at least one CPU.
    let dram_size = plan.sizes.iter().rev().copied().find(|&s| {
        plan.llc_bytes > 0
            && s > plan.llc_bytes
            && points.iter().any(|p| p.size_bytes == s && p.stride_bytes == dram_stride)
    });
    let (dram_groups, dram_noise_ns, note, no_dram) = match dram_size {
        Some(s) => {
            let g = group_cpus(topo, plan.mem_node, at(s));
            (g.groups, g.noise_ns, g.note, None)
        }
        None => (
            Vec::new(),
            f64::NAN,
            None,
            Some(if plan.llc_bytes == 0 {
                NoDram::UnknownLlc
            } else {
                NoDram::NoSizePastLlc { llc_bytes: plan.llc_bytes }
            }),
        ),
    };
    PerCpuSweepReport {
        mode: Mode::PerCpuSweep,
        mem_node: plan.mem_node,
        cpus: plan.cpus.clone(),
        sizes: plan.sizes.clone(),
        caches,
        results: points,
        plateaus,
        groups_by_size,
        dram_size_bytes: dram_size,
        dram_stride_bytes: dram_stride,
        dram_groups,
        dram_noise_ns,
        note,
        estimate_s: plan.estimate_s,
        no_dram,
    }
}

/// Seconds above which a per-CPU sweep is refused unless the caller said
/// yes (`--yes`): an hour.
pub const LONG_SWEEP: Duration = Duration::from_secs(3600);

#[cfg(test)]
mod tests {
    use super::*;

    /// A chase point of a per-CPU sweep as the store reads it.
    fn pt(cpu: u32, size: u64, stride: usize, ns: f64) -> LatResult {
        let v = serde_json::json!({"mode": "per-cpu-sweep", "cpu": cpu, "cpu_node": 0,
            "mem_node": 0, "size_bytes": size, "stride_bytes": stride, "median_ns": ns,
            "min_ns": ns, "noise_pct": 0.5});
        match results::upgrade::read("lat", &v).record {
            results::Record::Lat(l) => match *l {
                results::lat::Lat::Chase(c) => c,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    fn machine() -> Topology {
        use topo::synthetic::Machine;
        Machine::new(topo::Vendor::Amd, "EPYC").package(0, "0-3").node(0, "0-3", 8 << 30).build()
    }

    fn plan_of(sizes: &[u64], llc: u64) -> PerCpuSweepPlan {
        PerCpuSweepPlan {
            mem_node: Some(0),
            cpus: vec![0, 2],
            sizes: sizes.to_vec(),
            llc_bytes: llc,
            estimate_s: 1.0,
        }
    }

    /// The DRAM column is the largest size past the LLC at the DRAM stride
    /// that was measured; a cached size is never called DRAM.
    #[test]
    fn dram_is_the_largest_measured_size_past_the_llc_at_the_dram_stride() {
        let mb = 1u64 << 20;
        let sizes = [mb / 2, mb, 2 * mb, 4 * mb];
        let grid = |upto: u64| {
            let mut v = Vec::new();
            for cpu in [0, 2] {
                for &s in sizes.iter().filter(|&&s| s <= upto) {
                    let stride = if s <= mb { 64 } else { 256 };
                    // CPU 2 is 40 ns slower at DRAM sizes
                    let ns = if s <= mb { 5.0 } else { 100.0 + 20.0 * cpu as f64 };
                    v.push(pt(cpu, s, stride, ns));
                }
            }
            v
        };
        let r = summarize(&machine(), &plan_of(&sizes, mb), vec![], grid(4 * mb), 256);
        assert_eq!(r.dram_size_bytes, Some(4 * mb));
        assert_eq!(r.dram_groups.len(), 2, "{:?}", r.dram_groups);
        assert_eq!(r.plateaus.len(), 2);
        // stopped before 4 MiB: the DRAM column is 2 MiB, still past the LLC
        let r = summarize(&machine(), &plan_of(&sizes, mb), vec![], grid(2 * mb), 256);
        assert_eq!(r.dram_size_bytes, Some(2 * mb));
        // stopped inside the cache: nothing is DRAM, and the note says so
        let r = summarize(&machine(), &plan_of(&sizes, mb), vec![], grid(mb), 256);
        assert_eq!(r.dram_size_bytes, None);
        assert!(r.dram_groups.is_empty());
        assert_eq!(r.no_dram, Some(NoDram::NoSizePastLlc { llc_bytes: mb }));
        assert_eq!(r.note, None, "worded by the front end");
        // an unknown LLC calls nothing DRAM either
        let r = summarize(&machine(), &plan_of(&sizes, 0), vec![], grid(4 * mb), 256);
        assert_eq!(r.dram_size_bytes, None);
        assert_eq!(r.no_dram, Some(NoDram::UnknownLlc));
        // groups at every size measured from both CPUs: one in the cache,
        // two at DRAM sizes
        let r = summarize(&machine(), &plan_of(&sizes, mb), vec![], grid(4 * mb), 256);
        let counts: Vec<usize> = r.groups_by_size.iter().map(|g| g.groups.len()).collect();
        assert_eq!(counts, vec![1, 1, 2, 2]);
    }

    /// `--sizes` is sorted, and refused when empty, repeated or too small
    /// for its stride (a cache size at the cache stride, past the LLC at
    /// the DRAM stride).
    #[test]
    fn listed_sizes_are_sorted_and_checked() {
        let t = machine();
        let o = ChaseOpts { cache_stride_bytes: 64, stride_bytes: 4096, ..ChaseOpts::default() };
        let llc = 32 << 10;
        let k = 1u64 << 10;
        assert_eq!(
            listed_sizes(&t, None, &[64 << 20, 32 * k, 1 << 20], &o, llc).unwrap(),
            vec![32 * k, 1 << 20, 64 << 20]
        );
        let err = |l: &[u64], o: &ChaseOpts| match listed_sizes(&t, None, l, o, llc) {
            Err(LatError::Sizes(r)) => r,
            other => panic!("{other:?}"),
        };
        assert_eq!(err(&[], &o), SizesRefusal::Empty);
        assert_eq!(err(&[32 * k, 4 * k, 32 * k], &o), SizesRefusal::Twice(32 * k));
        // 4 KiB at the cache stride is fine, past the LLC 4 KiB elements need 8 KiB
        assert!(listed_sizes(&t, None, &[4 * k], &o, llc).is_ok());
        let below = SizesRefusal::BelowMinimum { size: 2 * k, min: 4096, stride: 64 };
        assert_eq!(err(&[2 * k], &o), below);
        let big = ChaseOpts { stride_bytes: 64 * k as usize, ..o };
        let below = SizesRefusal::BelowMinimum { size: 96 * k, min: 128 * k, stride: 64 * k };
        assert_eq!(err(&[96 * k], &big), below);
    }

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(duration_text(12.2), "13 s");
        assert_eq!(duration_text(600.0), "10 min");
        assert_eq!(duration_text(4.0 * 3600.0), "4.0 h");
    }

    #[test]
    fn a_point_costs_its_samples_and_its_warm_up() {
        let t =
            Timing { samples: 10, sample_time: Duration::from_millis(10), max_warmup_loads: 1000 };
        // 10 x 10 ms + 1000 loads x 100 ns (capped warm-up)
        assert!((point_estimate_s(&t, 1 << 20) - 0.1001).abs() < 1e-9);
        assert!((point_estimate_s(&t, 10) - (0.1 + 10.0 * 100e-9)).abs() < 1e-12);
    }
}
