//! Memory bandwidth experiments: STREAM kernels and read/write mixes run by
//! a team of pinned threads, over one CPU node and one memory node, the
//! node-to-node matrix, the whole machine (local, interleaved, weighted
//! interleave) and thread scaling.
//!
//! Entry point: [`run_plan`] with a [`BwPlan`] built by the caller (the CLI
//! or the `run` command); it validates the whole plan against the topology
//! before allocating anything ([`prepare`]), then measures case by case,
//! reporting each [`BwResult`] as an [`Event::Record`] as soon as it is
//! measured.
//!
//! Units: bytes are counted as STREAM counts them (see
//! [`kernels::stream`]); rates are GB/s = 10^9 bytes per second.

mod measure;
mod plan;

pub(crate) use measure::SPREAD_TOLERANCE;
pub use plan::{
    choose_array_bytes, prepare, BwMode, BwPlan, Case, CaseMemory, PackageTarget, PlanWarning,
    Prepared, Refusal, RepPolicy, Sizing, StoreMode,
};

use std::collections::BTreeMap;

use topo::{SysRoot, Topology};

use events::{Event, Observer, StopFlag};
use results::bw::BwResult;

/// Why a bandwidth plan could not run.
#[derive(Debug, thiserror::Error)]
pub enum BwError {
    /// The plan asks for something impossible (bad node, CPU, size,
    /// thread count...): caught before anything is allocated.
    #[error("{0}")]
    Usage(String),
    /// The plan asks for more than it may have, or for nothing: the values
    /// at fault, for the front end to word against its own flags.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The placement layer refused or failed (it names the node or CPU).
    #[error(transparent)]
    Place(#[from] place::PlaceError),
    /// The instruction set asked for is not available.
    #[error(transparent)]
    Kernel(#[from] kernels::KernelError),
    /// A kernel computed a wrong answer: the measurement is void.
    #[error("{kernel} ({isa}) on CPU {cpu} failed validation: {source}")]
    Validation { kernel: String, isa: String, cpu: u32, source: kernels::ValidationError },
    #[error(transparent)]
    Team(#[from] crate::team::TeamError),
    #[error(transparent)]
    Topo(#[from] topo::TopoError),
}

impl BwError {
    /// True when the user asked for something impossible (exit status 2).
    pub fn is_usage(&self) -> bool {
        match self {
            BwError::Usage(_) | BwError::Refused(_) | BwError::Kernel(_) => true,
            BwError::Place(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// Validates `plan` on `topo`, then measures every case, reporting events
/// to `obs`. Stops cleanly between repetitions when `stop` is set and
/// returns what was measured (each result already reported).
pub fn run_plan(
    topo: &Topology,
    plan: &BwPlan,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<Vec<BwResult>, BwError> {
    let root = SysRoot::live();
    let allowed = place::Allowed::current(&root)?;
    let mut spare = BTreeMap::new();
    for n in topo.memory_nodes() {
        if let Ok(m) = place::node_memory(&root, n.id) {
            spare.insert(n.id, m.spare_bytes);
        }
    }
    let support = place::policy_support(&root);
    let weights = place::weighted_interleave_weights(&root).ok().flatten();
    let prepared = prepare(topo, plan, &allowed, &spare, support.weighted_interleave, weights)?;
    for w in &prepared.warnings {
        obs.event(match *w {
            // typed: the front end names the option that asked for the size
            PlanWarning::SmallArrays { bytes, want } => Event::SmallArrays { bytes, want },
            ref w => Event::Warning(w.to_string()),
        });
    }
    let ops = kernels::select(plan.isa)?;
    let total = (prepared.cases.len() * plan.kernels.len()) as u64;
    obs.event(Event::PhaseStart { phase: "bw".into(), total });
    let mut results = Vec::new();
    let mut done = 0u64;
    for case in &prepared.cases {
        if stop.is_stopped() {
            break;
        }
        let got = measure::run_case(topo, plan, case, ops, obs, stop, &mut done)?;
        results.extend(got);
    }
    obs.event(Event::PhaseEnd { phase: "bw".into() });
    Ok(results)
}
