//! One `lat` invocation: the experiment its flags chose ([`Experiment`]),
//! run ([`run`]) into what it measured ([`Measured`]).

use results::lat::{C2cResult, LatResult, PrefetchCheck};
use topo::Topology;

use super::{
    c2c, loaded, matrix, per_cpu, per_cpu_sweep, point, prefetch_check, sweep, C2cSpec, ChaseOpts,
    Ctx, LatError, LoadedReport, LoadedSpec, PerCpuReport, PerCpuSpec, PerCpuSweepReport,
    PerCpuSweepSpec, SweepReport, Timing, Where, CACHE_STRIDE_BYTES,
};

/// The experiment to run.
#[derive(Debug, Clone, PartialEq)]
pub enum Experiment {
    /// One point, then (when `prefetch_check` and the point does not
    /// itself chase at 64 B) the short stride-64 comparison.
    Point {
        at: Where,
        prefetch_check: bool,
    },
    Matrix,
    Sweep(Where),
    PerCpu(PerCpuSpec),
    /// The sweep from each of several CPUs (`--per-cpu --sweep`).
    PerCpuSweep(PerCpuSweepSpec),
    Loaded(LoadedSpec),
    C2c(C2cSpec),
}

impl Experiment {
    /// The timing the experiment runs with by default: a single point
    /// takes the full one, every experiment of many points the quick one.
    pub fn default_timing(&self) -> Timing {
        match self {
            Experiment::Point { .. } => Timing::default(),
            _ => Timing::quick(),
        }
    }
}

/// What one experiment measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    Matrix(Vec<LatResult>),
    Sweep(SweepReport),
    PerCpu(PerCpuReport),
    PerCpuSweep(PerCpuSweepReport),
    Loaded(LoadedReport),
    C2c(Vec<C2cResult>),
    /// The point and, unless skipped, the prefetch check.
    Point(Box<LatResult>, Option<PrefetchCheck>),
}

impl Measured {
    /// The pointer-chase points measured, which carry counters
    /// (`--counters`); `None` for loaded latency and core-to-core.
    pub fn chase_points(&self) -> Option<Vec<&LatResult>> {
        match self {
            Measured::Matrix(v) => Some(v.iter().collect()),
            Measured::Point(r, _) => Some(vec![r.as_ref()]),
            Measured::Sweep(r) => Some(r.results.iter().collect()),
            Measured::PerCpu(r) => Some(r.results.iter().collect()),
            Measured::PerCpuSweep(r) => Some(r.results.iter().collect()),
            Measured::Loaded(_) | Measured::C2c(_) => None,
        }
    }
}

/// Runs `exp`. A per-CPU sweep's summary is the caller's to report, once
/// it has worded the sweep's note ([`PerCpuSweepReport::conclude`]).
pub fn run(
    topo: &Topology,
    exp: &Experiment,
    opts: &ChaseOpts,
    ctx: &Ctx<'_>,
) -> Result<Measured, LatError> {
    match exp {
        Experiment::Matrix => matrix(topo, opts, ctx).map(Measured::Matrix),
        Experiment::Sweep(at) => sweep(topo, at, opts, ctx).map(Measured::Sweep),
        Experiment::PerCpu(spec) => per_cpu(topo, spec, opts, ctx).map(Measured::PerCpu),
        Experiment::PerCpuSweep(spec) => {
            per_cpu_sweep(topo, spec, opts, ctx).map(Measured::PerCpuSweep)
        }
        Experiment::Loaded(spec) => loaded(topo, spec, opts, ctx).map(Measured::Loaded),
        Experiment::C2c(spec) => c2c(topo, spec, ctx).map(Measured::C2c),
        Experiment::Point { at, prefetch_check: check } => {
            let p = point(topo, at, opts, ctx)?;
            // Short, after the point; skipped when the point itself chases
            // at 64 B or the caller said so.
            let check = if !check || opts.stride_bytes == CACHE_STRIDE_BYTES {
                None
            } else {
                let quick = Ctx { timing: Timing::quick(), ..*ctx };
                match prefetch_check(topo, at, opts, &quick) {
                    Ok(c) => Some(c),
                    Err(LatError::Stopped) => None,
                    Err(e) => return Err(e),
                }
            };
            Ok(Measured::Point(Box::new(p), check))
        }
    }
}
