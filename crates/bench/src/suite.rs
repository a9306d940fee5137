//! The plan of `numaprobe run`: which experiments characterise a machine
//! under a time budget, in what order, and how long they should take.
//!
//! Deciding is separate from measuring: [`SuitePlan::for_topology`] is a pure
//! function of the topology and the budget, so what `run` will do can be
//! printed (and tested) before anything is allocated; [`execute`] then runs
//! it step by step, reporting each step and each result as events.

use std::time::Duration;

use kernels::Kernel;
use topo::Topology;

use crate::bw::PackageTarget;
use crate::bw::{BwError, BwMode, BwPlan, RepPolicy, StoreMode};
use crate::lat::{
    C2cSpec, ChaseOpts, Ctx, LatError, LoadedSpec, PackageChase, PerCpuSpec, Timing, Where,
};
use events::{Event, Observer, StopFlag};
use results::lat::LoadKind;
use results::scope::{StepNote, StepStatus};

/// How much time `run` may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Budget {
    /// Triad only, short repetitions, small sweep: about a minute on a
    /// small machine.
    Quick,
    /// STREAM's four kernels and the full latency set: minutes on a
    /// two-socket server.
    Default,
    /// Every kernel and mix, longer repetitions, every CPU to one node.
    Thorough,
}

impl Budget {
    pub fn name(self) -> &'static str {
        match self {
            Budget::Quick => "quick",
            Budget::Default => "default",
            Budget::Thorough => "thorough",
        }
    }
}

/// One step of the plan.
#[derive(Debug, Clone)]
pub enum Step {
    /// Bandwidth: one [`BwPlan`] (one mode) per step, so each has its own
    /// progress bar and estimate.
    Bw { name: StepName, plan: BwPlan },
    /// Idle latency from every CPU node to every memory node.
    LatMatrix { opts: ChaseOpts, timing: Timing },
    /// Idle latency from the first CPU to memory interleaved over the
    /// nodes with memory and CPUs (2+ of them).
    LatInterleave { opts: ChaseOpts, timing: Timing },
    /// Latency from a CPU of each package to memory interleaved over its
    /// own package's DRAM nodes and over each other package's.
    LatPackage { chases: Vec<PackageChase>, opts: ChaseOpts, timing: Timing },
    /// Latency against working-set size on the first CPU.
    LatSweep { at: Where, opts: ChaseOpts, timing: Timing },
    /// Latency from every CPU (or a sample) to one node, grouped.
    LatPerCpu { spec: PerCpuSpec, opts: ChaseOpts, timing: Timing },
    /// Stride 64 B against the default stride on the first CPU's node.
    LatPrefetch { at: Where, opts: ChaseOpts, timing: Timing },
    /// Latency under load, one curve per traffic mix, from no load to full.
    LatLoaded { spec: LoadedSpec, opts: ChaseOpts, timing: Timing },
    /// Core-to-core latency over sampled pairs.
    C2c { spec: C2cSpec, timing: Timing },
}

impl Step {
    /// What `run --only/--skip` call this step.
    pub fn id(&self) -> StepName {
        match self {
            Step::Bw { name, .. } => *name,
            Step::LatMatrix { .. } => StepName::LatMatrix,
            Step::LatInterleave { .. } => StepName::LatInterleave,
            Step::LatPackage { .. } => StepName::LatPackage,
            Step::LatSweep { .. } => StepName::LatSweep,
            Step::LatPerCpu { .. } => StepName::LatPerCpu,
            Step::LatPrefetch { .. } => StepName::LatPrefetch,
            Step::LatLoaded { .. } => StepName::LatLoaded,
            Step::C2c { .. } => StepName::LatC2c,
        }
    }

    /// A short name for plans and progress bars (`bw local`, `lat per-cpu`).
    pub fn name(&self) -> String {
        self.id().as_str().replacen('-', " ", 1)
    }
}

/// The steps a plan can hold, by the names `run --only/--skip` take
/// (`bw-local`, `lat-per-cpu`: [`StepName::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepName {
    BwLocal,
    BwMatrix,
    BwGlobal,
    BwInterleave,
    BwWeighted,
    BwPackage,
    BwCrossPackage,
    BwScaling,
    LatMatrix,
    LatInterleave,
    LatPackage,
    LatSweep,
    LatPrefetch,
    LatPerCpu,
    LatLoaded,
    LatC2c,
}

impl StepName {
    pub const ALL: [StepName; 16] = [
        StepName::BwLocal,
        StepName::BwMatrix,
        StepName::BwGlobal,
        StepName::BwInterleave,
        StepName::BwWeighted,
        StepName::BwPackage,
        StepName::BwCrossPackage,
        StepName::BwScaling,
        StepName::LatMatrix,
        StepName::LatInterleave,
        StepName::LatPackage,
        StepName::LatSweep,
        StepName::LatPrefetch,
        StepName::LatPerCpu,
        StepName::LatLoaded,
        StepName::LatC2c,
    ];

    /// The name as typed (`bw-local`).
    pub fn as_str(self) -> &'static str {
        match self {
            StepName::BwLocal => "bw-local",
            StepName::BwMatrix => "bw-matrix",
            StepName::BwGlobal => "bw-global",
            StepName::BwInterleave => "bw-interleave",
            StepName::BwWeighted => "bw-weighted",
            StepName::BwPackage => "bw-package",
            StepName::BwCrossPackage => "bw-cross-package",
            StepName::BwScaling => "bw-scaling",
            StepName::LatMatrix => "lat-matrix",
            StepName::LatInterleave => "lat-interleave",
            StepName::LatPackage => "lat-package",
            StepName::LatSweep => "lat-sweep",
            StepName::LatPrefetch => "lat-prefetch",
            StepName::LatPerCpu => "lat-per-cpu",
            StepName::LatLoaded => "lat-loaded",
            StepName::LatC2c => "lat-c2c",
        }
    }

    /// The steps that measure at package scope: a package's CPUs all at
    /// once ([`crate::scope`]).
    pub const SCOPE: [StepName; 3] =
        [StepName::BwPackage, StepName::BwCrossPackage, StepName::LatPackage];

    /// Whether the step measures at package scope.
    pub fn is_scope(self) -> bool {
        StepName::SCOPE.contains(&self)
    }

    /// Every name, comma-separated, for messages.
    pub fn all_text() -> String {
        StepName::ALL.map(StepName::as_str).join(", ")
    }
}

/// Why [`SuitePlan::select`] left a planned step out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unselected {
    /// The step is among those named to leave out.
    Skipped,
    /// Steps to keep were named, and this one is not among them.
    NotKept,
}

/// The selection left no step of the plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no step left to run on this machine (steps: {})", StepName::all_text())]
pub struct NoStepLeft;

/// What the plan needs to know about the machine besides its topology;
/// the caller reads it (the kernel's policies, the firmware's memory
/// tables), so planning stays a pure function.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineFacts {
    /// The kernel has weighted interleave (Linux 6.9+): `bw weighted` is
    /// planned.
    pub weighted_interleave: bool,
    /// Theoretical peak of one DRAM node, GB/s (from SMBIOS), given to
    /// every bandwidth step so its results carry their fraction of it
    /// (`run --peak-gbs` when the user gives it).
    pub peak_gbs_per_node: Option<f64>,
    /// The store method of every bandwidth step (`run --stores`, the same
    /// choices as `bw --stores`): regular stores give the figure a gcc
    /// STREAM build gives.
    pub stores: StoreMode,
    /// The declared link between nodes, GB/s (`--set link.gbs=...`):
    /// see [`BwPlan::link_gbs`].
    pub link_gbs: Option<f64>,
}

/// A planned step with what it measures and how long it should take.
#[derive(Debug, Clone)]
pub struct PlannedStep {
    pub step: Step,
    /// What the step measures, for the printed plan.
    pub what: String,
    pub estimate: Duration,
}

/// The whole plan.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    pub budget: Budget,
    pub steps: Vec<PlannedStep>,
    /// Steps this machine cannot run, each with why (the plan prints them).
    pub skipped: Vec<(StepName, String)>,
    /// Package-scope steps `run --only/--skip` left out, with why (not
    /// printed; [`execute`] stores them, so that a study knows why the
    /// run has no package figures).
    pub left_out: Vec<(StepName, String)>,
}

/// How much longer a plan takes on a machine with `load` runnable tasks
/// on average besides it (the 1-minute load average) over `cpus` CPUs:
/// a measuring thread gets its CPU about `cpus / (cpus + load)` of the
/// time, and the samples disturbed meanwhile are measured again, so the
/// time grows by `1 + load / cpus`, at most 4x (a sample is replaced a
/// bounded number of times).
pub fn load_factor(load: f64, cpus: usize) -> f64 {
    if !(load.is_finite() && load > 0.0) {
        return 1.0;
    }
    (1.0 + load / cpus.max(1) as f64).min(4.0)
}

impl SuitePlan {
    /// The time the steps take on an idle machine.
    pub fn estimate(&self) -> Duration {
        self.steps.iter().map(|s| s.estimate).sum()
    }

    /// [`Self::estimate`] on a machine with `load` ([`load_factor`]).
    pub fn estimate_at_load(&self, load: f64, cpus: usize) -> Duration {
        self.estimate().mul_f64(load_factor(load, cpus))
    }

    /// Keeps the steps `only` names (every step when empty) except those
    /// `skip` names; refuses to leave none. A name this machine's plan
    /// lacks (`bw-matrix` on one node) selects nothing. A package-scope
    /// step left out is kept in [`Self::left_out`] with `words` of why,
    /// which the run stores as the step's reason.
    pub fn select(
        &mut self,
        only: &[StepName],
        skip: &[StepName],
        words: impl Fn(Unselected) -> String,
    ) -> Result<(), NoStepLeft> {
        let why = |id: &StepName| -> Option<Unselected> {
            if skip.contains(id) {
                Some(Unselected::Skipped)
            } else if !only.is_empty() && !only.contains(id) {
                Some(Unselected::NotKept)
            } else {
                None
            }
        };
        for s in &self.steps {
            let id = s.step.id();
            if let (true, Some(w)) = (id.is_scope(), why(&id)) {
                if !self.left_out.iter().any(|(n, _)| *n == id) {
                    self.left_out.push((id, words(w)));
                }
            }
        }
        let (kept, gone): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.skipped).into_iter().partition(|(id, _)| why(id).is_none());
        self.skipped = kept;
        self.left_out.extend(gone.into_iter().filter(|(id, _)| id.is_scope()));
        self.steps.retain(|s| why(&s.step.id()).is_none());
        if self.steps.is_empty() {
            return Err(NoStepLeft);
        }
        Ok(())
    }

    /// Builds the whole plan for `topo` under `budget`, with what else it
    /// needs to know about the machine in `facts`.
    pub fn for_topology(topo: &Topology, budget: Budget, facts: &MachineFacts) -> SuitePlan {
        let p = Planner::new(topo, budget, facts);
        let mut out = Steps::default();
        p.bw_node_steps(&mut out);
        p.bw_package_steps(&mut out);
        p.bw_scaling_step(&mut out);
        let l = LatBudget::of(budget);
        p.lat_chase_steps(&l, &mut out);
        p.lat_package_step(&l, &mut out);
        p.lat_sweep_steps(&l, &mut out);
        p.lat_per_cpu_step(&l, &mut out);
        p.lat_loaded_steps(&l, &mut out);
        SuitePlan { budget, steps: out.steps, skipped: out.skipped, left_out: Vec::new() }
    }
}

/// The plan under construction: what every step reads of the machine and
/// the budget, and the steps and skipped steps so far, in order.
struct Planner<'a> {
    topo: &'a Topology,
    budget: Budget,
    facts: &'a MachineFacts,
    cpu_nodes: Vec<&'a topo::Node>,
    mem_nodes: usize,
    ncpus: usize,
    largest_node_cpus: usize,
    kernels: Vec<Kernel>,
    reps: RepPolicy,
    /// Seconds per bandwidth result.
    per_result: f64,
    packages: Vec<crate::scope::PackageMemory>,
    /// Why package scope is not measured, if it is not.
    no_scope: Option<String>,
}

impl<'a> Planner<'a> {
    fn new(topo: &'a Topology, budget: Budget, facts: &'a MachineFacts) -> Planner<'a> {
        let cpu_nodes: Vec<_> = topo.cpu_nodes().collect();
        let mem_nodes = topo.memory_nodes().count();
        let ncpus = topo.cpus.len().max(1);
        let largest_node_cpus = cpu_nodes.iter().map(|n| n.cpus.len()).max().unwrap_or(ncpus);

        let (kernels, rep_budget, min_reps): (Vec<Kernel>, f64, usize) = match budget {
            Budget::Quick => (vec![Kernel::Triad], 2.0, 6),
            Budget::Default => (Kernel::STREAM.to_vec(), 1.5, 5),
            Budget::Thorough => (Kernel::ALL.to_vec(), 3.0, 8),
        };
        let reps = RepPolicy {
            min_reps,
            budget: Duration::from_secs_f64(rep_budget),
            ..RepPolicy::default()
        };
        // Time per result: the repetition budget, plus allocating and
        // first-touching the arrays (a few hundred MiB at a few GB/s).
        let per_result = rep_budget + 0.6;
        Planner {
            topo,
            budget,
            facts,
            cpu_nodes,
            mem_nodes,
            ncpus,
            largest_node_cpus,
            kernels,
            reps,
            per_result,
            packages: crate::scope::packages(topo),
            no_scope: crate::scope::why_none(topo),
        }
    }

    /// A bandwidth plan of one mode and `kernels` under the budget.
    fn bw(&self, mode: BwMode, kernels: Vec<Kernel>) -> BwPlan {
        BwPlan {
            modes: vec![mode],
            kernels,
            reps: self.reps,
            peak_gbs: self.facts.peak_gbs_per_node,
            stores: self.facts.stores,
            link_gbs: self.facts.link_gbs,
            ..BwPlan::default()
        }
    }

    /// Triad on `package`'s CPUs at once, on each of `targets` in turn.
    fn bw_package(&self, package: u32, targets: &[PackageTarget]) -> BwPlan {
        BwPlan {
            modes: targets.iter().map(|&memory| BwMode::Package { package, memory }).collect(),
            ..self.bw(BwMode::Global, vec![Kernel::Triad])
        }
    }

    /// Bandwidth per node, the matrix, global, interleaved and weighted.
    fn bw_node_steps(&self, out: &mut Steps) {
        let weighted_interleave = self.facts.weighted_interleave;
        for n in &self.cpu_nodes {
            let has_mem = n.mem_total_bytes > 0;
            out.push(
                Step::Bw {
                    name: StepName::BwLocal,
                    plan: self.bw(
                        BwMode::Local {
                            cpu_node: Some(n.id),
                            mem_node: if has_mem { Some(n.id) } else { None },
                            cpus: None,
                        },
                        self.kernels.clone(),
                    ),
                },
                format!(
                    "node {} threads on {} memory, {} kernel(s)",
                    n.id,
                    if has_mem { "its own" } else { "the nearest" },
                    self.kernels.len()
                ),
                self.per_result * self.kernels.len() as f64,
            );
        }
        if self.cpu_nodes.len() * self.mem_nodes > 1 {
            let cells = self.cpu_nodes.len() * self.mem_nodes;
            out.push(
                Step::Bw {
                    name: StepName::BwMatrix,
                    plan: self.bw(BwMode::Matrix, vec![Kernel::Triad]),
                },
                format!(
                    "triad, {} CPU node(s) x {} memory node(s)",
                    self.cpu_nodes.len(),
                    self.mem_nodes
                ),
                self.per_result * cells as f64,
            );
        }
        out.push(
            Step::Bw {
                name: StepName::BwGlobal,
                plan: self.bw(BwMode::Global, self.kernels.clone()),
            },
            "every node's threads on their own node's memory".into(),
            self.per_result * self.kernels.len() as f64,
        );
        if self.mem_nodes > 1 {
            out.push(
                Step::Bw {
                    name: StepName::BwInterleave,
                    plan: self.bw(BwMode::Interleave, self.kernels.clone()),
                },
                format!("every thread, memory interleaved over {} nodes", self.mem_nodes),
                self.per_result * self.kernels.len() as f64,
            );
            if weighted_interleave {
                out.push(
                    Step::Bw {
                        name: StepName::BwWeighted,
                        plan: self.bw(BwMode::Weighted { required: false }, self.kernels.clone()),
                    },
                    "every thread, weighted interleave with the kernel's weights".into(),
                    self.per_result * self.kernels.len() as f64,
                );
            }
        }
    }

    /// Package scope: each package's CPUs all at once, triad (as the
    /// matrix), on its own memory bound per node and interleaved, then on
    /// each other package's memory.
    fn bw_package_steps(&self, out: &mut Steps) {
        match &self.no_scope {
            Some(why) => {
                let one = self.packages.len() == 1;
                out.skipped.push((
                    StepName::BwPackage,
                    if one {
                        format!("{why}: `bw global` measures its CPUs on their own nodes at once")
                    } else {
                        why.clone()
                    },
                ));
                out.skipped.push((
                    StepName::BwCrossPackage,
                    if one { format!("{why}: no other package's memory") } else { why.clone() },
                ));
            }
            None => {
                for p in &self.packages {
                    if let Err(why) = crate::scope::own_dram(p) {
                        out.skipped.push((StepName::BwPackage, why));
                        continue;
                    }
                    let mut modes = Vec::new();
                    let mut how = Vec::new();
                    if p.numa_off {
                        modes.push(PackageTarget::BindPerNode);
                        how.push(format!(
                            "on the memory the OS gives (NUMA off: node {} holds every \
                             package's CPUs)",
                            p.dram
                        ));
                    } else {
                        if p.cpu_only_nodes.is_empty() {
                            modes.push(PackageTarget::BindPerNode);
                            how.push(format!("bound per node on nodes {} at once", p.dram));
                        } else {
                            out.skipped.push((
                                StepName::BwPackage,
                                format!(
                                    "package {}: bound per node left out, its node(s) {} hold \
                                     no memory",
                                    p.id, p.cpu_only_nodes
                                ),
                            ));
                        }
                        modes.push(PackageTarget::Interleave);
                        how.push(format!("interleaved over nodes {}", p.dram));
                    }
                    let n = modes.len();
                    out.push(
                        Step::Bw { name: StepName::BwPackage, plan: self.bw_package(p.id, &modes) },
                        format!(
                            "package {}'s CPUs {} at once, triad, {}{}",
                            p.id,
                            p.cpus,
                            if p.numa_off { "" } else { "its own memory " },
                            how.join(", then ")
                        ),
                        self.per_result * n as f64,
                    );
                }
                for p in &self.packages {
                    let mut to = Vec::new();
                    for q in self.packages.iter().filter(|q| q.id != p.id) {
                        match crate::scope::other_dram(p, q) {
                            Ok(nodes) => to.push((q.id, nodes)),
                            Err(why) => out.skipped.push((StepName::BwCrossPackage, why)),
                        }
                    }
                    if to.is_empty() {
                        continue;
                    }
                    let modes: Vec<PackageTarget> =
                        to.iter().map(|(q, _)| PackageTarget::Other(*q)).collect();
                    let whose: Vec<String> = to
                        .iter()
                        .map(|(q, nodes)| format!("package {q}'s nodes {nodes}"))
                        .collect();
                    out.push(
                        Step::Bw {
                            name: StepName::BwCrossPackage,
                            plan: self.bw_package(p.id, &modes),
                        },
                        format!(
                            "package {}'s CPUs {} at once, triad, memory interleaved over {}",
                            p.id,
                            p.cpus,
                            whose.join(", then ")
                        ),
                        self.per_result * modes.len() as f64,
                    );
                }
            }
        }
    }

    /// bw's scaling steps on the first node with CPUs.
    fn bw_scaling_step(&self, out: &mut Steps) {
        if let Some(first) = self.cpu_nodes.first() {
            // bw's scaling steps: every count up to 16, then about 8 more
            let counts = first.cpus.len().min(16) + usize::from(first.cpus.len() > 16) * 9;
            out.push(
                Step::Bw {
                    name: StepName::BwScaling,
                    plan: self.bw(
                        BwMode::Scaling { cpu_node: Some(first.id), mem_node: None },
                        vec![Kernel::Triad],
                    ),
                },
                format!("triad with 1..{} threads of node {}", first.cpus.len(), first.id),
                self.per_result * counts as f64,
            );
        }
    }

    /// The latency matrix and the interleaved chase.
    fn lat_chase_steps(&self, l: &LatBudget, out: &mut Steps) {
        let cells = (self.cpu_nodes.len() * self.mem_nodes).max(1);
        out.push(
            Step::LatMatrix { opts: l.opts, timing: l.timing },
            format!(
                "{} CPU node(s) x {} memory node(s), {} MiB working set{}",
                self.cpu_nodes.len(),
                self.mem_nodes,
                l.lat_size >> 20,
                remote_tiers(self.topo)
            ),
            cells as f64 * (l.ring_secs + l.sample_secs),
        );
        match crate::lat::interleave_nodes(self.topo) {
            Ok(nodes) => out.push(
                Step::LatInterleave { opts: l.opts, timing: l.timing },
                format!("first CPU, {} MiB interleaved over nodes {nodes}", l.lat_size >> 20),
                l.ring_secs + l.sample_secs,
            ),
            Err(why) => out.skipped.push((StepName::LatInterleave, why)),
        }
    }

    /// A CPU of each package to its own and the other packages' memory.
    fn lat_package_step(&self, l: &LatBudget, out: &mut Steps) {
        match &self.no_scope {
            Some(why) => out.skipped.push((
                StepName::LatPackage,
                if self.packages.len() == 1 {
                    format!("{why}: `lat matrix` and `lat interleave` chase its memory")
                } else {
                    why.clone()
                },
            )),
            None => {
                let mut chases = Vec::new();
                for p in &self.packages {
                    match crate::scope::own_dram(p) {
                        Ok(_) => chases.push(PackageChase { package: p.id, other: None }),
                        Err(why) => out.skipped.push((StepName::LatPackage, why)),
                    }
                    for q in self.packages.iter().filter(|q| q.id != p.id) {
                        match crate::scope::other_dram(p, q) {
                            Ok(_) => chases.push(PackageChase { package: p.id, other: Some(q.id) }),
                            Err(why) => {
                                if !out
                                    .skipped
                                    .iter()
                                    .any(|(n, w)| *n == StepName::LatPackage && *w == why)
                                {
                                    out.skipped.push((StepName::LatPackage, why))
                                }
                            }
                        }
                    }
                }
                if !chases.is_empty() {
                    let n = chases.len();
                    let ids: Vec<String> = self.packages.iter().map(|p| p.id.to_string()).collect();
                    let what = if chases.iter().any(|c| c.other.is_some()) {
                        "memory interleaved over its own package's nodes and over the other \
                         package's"
                    } else {
                        "the memory the OS gives (NUMA off)"
                    };
                    out.push(
                        Step::LatPackage { chases, opts: l.opts, timing: l.timing },
                        format!(
                            "a CPU of each package ({}) to {what}, {} MiB working set",
                            ids.join(", "),
                            l.lat_size >> 20
                        ),
                        n as f64 * (l.ring_secs + l.sample_secs),
                    );
                }
            }
        }
    }

    /// The working-set sweep and the prefetcher check.
    fn lat_sweep_steps(&self, l: &LatBudget, out: &mut Steps) {
        let sweep_timing = Timing::quick();
        out.push(
            Step::LatSweep {
                at: Where::default(),
                opts: ChaseOpts { size_bytes: None, ..ChaseOpts::default() },
                timing: sweep_timing,
            },
            {
                let llc = self.topo.caches.iter().map(|c| c.size_bytes).max();
                format!(
                    "working set from 4 KiB up to {} (4x the {} last-level cache), stopping once latency settles past it; at most a quarter of the node's spare memory",
                    topo::units::binary_size(crate::lat::default_sweep_max(llc)),
                    llc.map_or("unknown".into(), topo::units::binary_size)
                )
            },
            // the largest points dominate: about 8 x LLC of ring in total
            {
                let llc = self.topo.caches.iter().map(|c| c.size_bytes).max().unwrap_or(32 << 20) as f64;
                (llc * 8.0) / (64 << 20) as f64 * 0.1
                    + 40.0
                        * sweep_timing.samples as f64
                        * sweep_timing.sample_time.as_secs_f64()
                        * 1.5
            },
        );
        out.push(
            Step::LatPrefetch { at: Where::default(), opts: l.opts, timing: Timing::quick() },
            format!(
                "stride {} B against {} B on the first CPU: the spatial prefetchers' effect",
                crate::lat::CACHE_STRIDE_BYTES,
                l.opts.stride_bytes
            ),
            {
                let llc = self.topo.caches.iter().map(|c| c.size_bytes).max();
                let size = crate::lat::prefetch_check_size(llc) as f64;
                // two rings (64 B and the default stride), both chased in
                // each round
                size / (64 << 20) as f64 * 0.1 * 1.25
                    + (2 * crate::lat::PREFETCH_CHECK_ROUNDS) as f64
                        * Timing::quick().samples as f64
                        * Timing::quick().sample_time.as_secs_f64()
                        * 1.5
            },
        );
    }

    /// Every CPU (up to the budget's number) to the first memory node.
    fn lat_per_cpu_step(&self, l: &LatBudget, out: &mut Steps) {
        let per_cpu_n = self.ncpus.min(l.max_per_cpu);
        out.push(
            Step::LatPerCpu {
                spec: PerCpuSpec {
                    mem_node: self.topo.memory_nodes().next().map(|n| n.id),
                    max_cpus: l.max_per_cpu,
                },
                opts: l.opts,
                timing: l.timing,
            },
            format!(
                "{per_cpu_n} CPU(s) to node {}'s memory, grouped by latency",
                self.topo.memory_nodes().next().map_or(0, |n| n.id)
            ),
            l.ring_secs + per_cpu_n as f64 * l.sample_secs,
        );
    }

    /// Loaded latency and cache-line handoffs (with more than one CPU).
    fn lat_loaded_steps(&self, l: &LatBudget, out: &mut Steps) {
        if self.ncpus > 1 {
            let load_threads = self.largest_node_cpus.saturating_sub(1).max(1);
            out.push(
                Step::LatLoaded {
                    spec: LoadedSpec {
                        at: Where::default(),
                        load_cpus: None,
                        load_node_only: true,
                        mixes: l.mixes.clone(),
                        delays_ns: l.delays.clone(),
                        load_bytes_per_thread: None,
                    },
                    opts: l.opts,
                    timing: l.timing,
                },
                format!(
                    "chase on one CPU, up to {load_threads} load thread(s) on its node's other CPUs, mixes {}, idle + {} delay steps each",
                    l.mixes.iter().map(|m| m.name()).collect::<Vec<_>>().join(", "),
                    l.delays.len()
                ),
                l.ring_secs
                    + (l.mixes.len() * (l.delays.len() + 1)) as f64 * (l.sample_secs + 0.05),
            );
            let pairs = if self.budget == Budget::Quick { 1 } else { 3 };
            out.push(
                Step::C2c {
                    spec: C2cSpec { pairs: Vec::new(), pairs_per_relation: pairs, round_trips: 0 },
                    timing: Timing::quick(),
                },
                format!("up to {pairs} pair(s) per relation (SMT, node, package, cross-package)"),
                4.0 * pairs as f64 * 0.3,
            );
        }
    }
}

/// The steps planned and the steps skipped (with why) so far, in order.
#[derive(Default)]
struct Steps {
    steps: Vec<PlannedStep>,
    skipped: Vec<(StepName, String)>,
}

impl Steps {
    fn push(&mut self, step: Step, what: String, secs: f64) {
        self.steps.push(PlannedStep { step, what, estimate: Duration::from_secs_f64(secs) });
    }
}

/// What the budget gives the latency steps, and the time each point takes.
struct LatBudget {
    lat_size: u64,
    timing: Timing,
    max_per_cpu: usize,
    delays: Vec<u64>,
    mixes: Vec<LoadKind>,
    /// Seconds to build one DRAM ring.
    ring_secs: f64,
    /// Seconds of one point's samples.
    sample_secs: f64,
    opts: ChaseOpts,
}

impl LatBudget {
    fn of(budget: Budget) -> LatBudget {
        // DRAM points use a working set far past the LLC; each needs its
        // ring built (a shuffle of size/64 lines, ~0.1 s per 64 MiB here)
        // before the samples. Loaded latency: read-only and 2:1 by
        // default, every mix when thorough; waits in ns, from light load
        // to none.
        type LatPlan = (u64, Timing, usize, Vec<u64>, Vec<LoadKind>);
        let (lat_size, timing, max_per_cpu, delays, mixes): LatPlan = match budget {
            Budget::Quick => {
                (512 << 20, Timing::quick(), 8, vec![5000, 500, 50, 0], vec![LoadKind::Read])
            }
            Budget::Default => (
                1 << 30,
                Timing::default(),
                32,
                vec![10_000, 5000, 2000, 1000, 500, 200, 50, 0],
                vec![LoadKind::Read, LoadKind::R2W1],
            ),
            Budget::Thorough => (
                1 << 30,
                Timing::default(),
                usize::MAX,
                crate::lat::loaded::DEFAULT_DELAYS_NS.to_vec(),
                LoadKind::ALL.to_vec(),
            ),
        };
        let ring_secs = lat_size as f64 / (64 << 20) as f64 * 0.1;
        let sample_secs = timing.samples as f64 * timing.sample_time.as_secs_f64() * 1.5;
        let opts = ChaseOpts { size_bytes: Some(lat_size), ..ChaseOpts::default() };
        LatBudget { lat_size, timing, max_per_cpu, delays, mixes, ring_secs, sample_secs, opts }
    }
}

/// The remote distance tiers the latency matrix covers, one example pair
/// each, for the plan (`; remote tiers 11 (0->1), 12 (0->2), 32 (0->4)`);
/// empty with fewer than two remote tiers, where "remote" is one figure.
fn remote_tiers(topo: &Topology) -> String {
    let remote: Vec<String> = topo
        .distance_tiers
        .iter()
        .filter(|t| t.example.from != t.example.to)
        .map(|t| format!("{} ({}->{})", t.distance, t.example.from, t.example.to))
        .collect();
    if remote.len() < 2 {
        return String::new();
    }
    format!("; remote latency per distance tier {}", remote.join(", "))
}

/// The phase name [`execute`] reports its steps under.
pub const PHASE: &str = "run";

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Bw(#[from] BwError),
    #[error(transparent)]
    Lat(#[from] LatError),
}

/// A step that failed; the suite went on without it.
#[derive(Debug)]
pub struct StepFailure {
    /// The step's name ([`Step::name`]).
    pub step: String,
    pub error: StepError,
}

impl StepFailure {
    /// The error and its causes on one line (`a: b: c`).
    pub fn error_chain(&self) -> String {
        chain(&self.error)
    }
}

/// What [`execute`] did.
#[derive(Debug, Default)]
pub struct SuiteOutcome {
    /// Steps that ran to their end (failed ones included).
    pub steps_run: usize,
    pub failed: Vec<StepFailure>,
    /// True when the stop flag ended the suite early.
    pub interrupted: bool,
}

/// An error and its causes on one line (`a: b: c`).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let t = c.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = c.source();
    }
    s
}

/// Runs one step; its results go to `obs` as they are measured.
pub fn run_step(
    topo: &Topology,
    step: &Step,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> Result<(), StepError> {
    let ctx = |timing| Ctx { observer: obs, stop, timing };
    match step {
        Step::Bw { plan, .. } => {
            crate::bw::run_plan(topo, plan, obs, stop)?;
        }
        Step::LatMatrix { opts, timing } => {
            crate::lat::matrix(topo, opts, &ctx(*timing))?;
        }
        Step::LatInterleave { opts, timing } => {
            crate::lat::interleaved_point(topo, opts, &ctx(*timing))?;
        }
        Step::LatPackage { chases, opts, timing } => {
            for c in chases {
                if stop.is_stopped() {
                    break;
                }
                crate::lat::package_point(topo, c, opts, &ctx(*timing))?;
            }
        }
        Step::LatSweep { at, opts, timing } => {
            crate::lat::sweep(topo, at, opts, &ctx(*timing))?;
        }
        Step::LatPerCpu { spec, opts, timing } => {
            crate::lat::per_cpu(topo, spec, opts, &ctx(*timing))?;
        }
        Step::LatPrefetch { at, opts, timing } => {
            crate::lat::prefetch_check(topo, at, opts, &ctx(*timing))?;
        }
        Step::LatLoaded { spec, opts, timing } => {
            crate::lat::loaded(topo, spec, opts, &ctx(*timing))?;
        }
        Step::C2c { spec, timing } => {
            crate::lat::c2c(topo, spec, &ctx(*timing))?;
        }
    }
    Ok(())
}

/// Executes the plan in order: a failed step is reported
/// ([`Event::StepEnd`] with its error) and the suite goes on; the stop flag
/// ends it before the next step. Every result reaches `obs` as an
/// [`Event::Record`] the moment it exists, so a caller that saves them
/// loses nothing to a later failure or Ctrl-C.
pub fn execute(
    topo: &Topology,
    plan: &SuitePlan,
    obs: &dyn Observer,
    stop: &StopFlag,
) -> SuiteOutcome {
    let total = plan.steps.len();
    let mut out = SuiteOutcome::default();
    // On two or more packages, every package-scope step that measures
    // nothing is stored with why ([`results::scope::StepNote`]).
    let notes = crate::scope::why_none(topo).is_none();
    let note = |id: StepName, status: StepStatus, reason: String| {
        if notes && id.is_scope() {
            let n = StepNote { step: id.as_str().to_string(), status, reason };
            obs.event(Event::Record(n.into()));
        }
    };
    obs.event(Event::PhaseStart { phase: PHASE.into(), total: total as u64 });
    for (id, why) in plan.skipped.iter().chain(&plan.left_out) {
        note(*id, StepStatus::Skipped, why.clone());
    }
    let mut noted: Vec<StepName> = Vec::new();
    for (index, s) in plan.steps.iter().enumerate() {
        if stop.is_stopped() {
            for later in &plan.steps[index..] {
                let id = later.step.id();
                if !noted.contains(&id) {
                    noted.push(id);
                    note(id, StepStatus::Skipped, "the run was stopped before this step".into());
                }
            }
            break;
        }
        let name = s.step.name();
        obs.event(Event::StepStart { phase: PHASE.into(), index, total, name: name.clone() });
        let error = match run_step(topo, &s.step, obs, stop) {
            Ok(()) => None,
            Err(e) => {
                let text = chain(&e);
                note(s.step.id(), StepStatus::Failed, text.clone());
                out.failed.push(StepFailure { step: name.clone(), error: e });
                Some(text)
            }
        };
        out.steps_run += 1;
        obs.event(Event::StepEnd { phase: PHASE.into(), index, name, error });
    }
    obs.event(Event::PhaseEnd { phase: PHASE.into() });
    out.interrupted = stop.is_stopped();
    out
}

#[cfg(test)]
mod load_tests {
    use super::load_factor;

    #[test]
    fn a_busy_machine_stretches_the_estimate() {
        assert_eq!(load_factor(0.0, 2), 1.0);
        assert_eq!(load_factor(3.0, 2), 2.5);
        assert_eq!(load_factor(50.0, 2), 4.0, "bounded");
        assert_eq!(load_factor(f64::NAN, 2), 1.0);
        assert_eq!(load_factor(2.0, 0), 3.0, "no CPU count: one");
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use topo::synthetic::Machine;
    use topo::Vendor;

    /// The words of a step left out, as the caller gives them.
    fn why(u: Unselected) -> String {
        format!("{u:?}")
    }

    fn names(p: &SuitePlan) -> Vec<String> {
        p.steps.iter().map(|s| s.step.name()).collect()
    }

    fn facts(weighted_interleave: bool) -> MachineFacts {
        MachineFacts { weighted_interleave, ..MachineFacts::default() }
    }

    fn one_node() -> Topology {
        Machine::new(Vendor::Amd, "EPYC").package(0, "0-1").node(0, "0-1", 16 << 30).build()
    }

    /// Two sockets in SNC2 (nodes 0-3) and a CPU-less CXL node 4.
    fn snc2_with_cxl_machine() -> Machine {
        Machine::new(Vendor::Intel, "Intel(R) Xeon(R) Gold 6230")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .node(2, "4-5", 8 << 30)
            .node(3, "6-7", 8 << 30)
            .node(4, "", 64 << 30)
    }

    /// [`snc2_with_cxl_machine`], built (the other modules' tests use it).
    pub(crate) fn snc2_with_cxl() -> Topology {
        snc2_with_cxl_machine().build()
    }

    /// Two packages of four nodes each (NPS4-like), 2 CPUs per node.
    fn nps4() -> Topology {
        let mut m = Machine::new(Vendor::Amd, "AMD EPYC 9654").package(0, "0-7").package(1, "8-15");
        for n in 0..8u32 {
            m = m.node(n, &format!("{}-{}", 2 * n, 2 * n + 1), 16 << 30);
        }
        m.build()
    }

    /// Two packages, one OS node holding every CPU (NUMA off).
    pub(crate) fn numa_off() -> Topology {
        Machine::new(Vendor::Intel, "Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-7", 64 << 30)
            .build()
    }

    /// The package-scope steps of a plan: `(step, package, targets)` for
    /// bandwidth and `(package, other)` chases for latency.
    type Scoped = (Vec<(&'static str, u32, Vec<PackageTarget>)>, Vec<PackageChase>);

    fn scoped(p: &SuitePlan) -> Scoped {
        let mut bw = Vec::new();
        let mut lat = Vec::new();
        for s in &p.steps {
            match &s.step {
                Step::Bw { name, plan } if name.is_scope() => {
                    assert_eq!(plan.kernels, [Kernel::Triad], "{}", s.what);
                    let mut pkg = None;
                    let targets = plan
                        .modes
                        .iter()
                        .map(|m| match m {
                            BwMode::Package { package, memory } => {
                                assert!(pkg.is_none_or(|p| p == *package), "one package a step");
                                pkg = Some(*package);
                                *memory
                            }
                            m => panic!("{m:?} in {}", name.as_str()),
                        })
                        .collect();
                    bw.push((name.as_str(), pkg.expect("a mode"), targets));
                }
                Step::LatPackage { chases, .. } => lat.extend(chases.iter().copied()),
                _ => {}
            }
        }
        (bw, lat)
    }

    fn chase(package: u32, other: Option<u32>) -> PackageChase {
        PackageChase { package, other }
    }

    /// SNC2 on two sockets with a CXL node: each package's CPUs at once
    /// on its own two nodes, bound per node then interleaved; on the other
    /// package's two nodes; latency from a CPU of each package to both.
    /// The CXL node is no package's DRAM.
    #[test]
    fn two_packages_get_package_scope_steps_over_their_own_dram() {
        use PackageTarget::*;
        let p = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Quick, &facts(false));
        let (bw, lat) = scoped(&p);
        assert_eq!(
            bw,
            [
                ("bw-package", 0, vec![BindPerNode, Interleave]),
                ("bw-package", 1, vec![BindPerNode, Interleave]),
                ("bw-cross-package", 0, vec![Other(1)]),
                ("bw-cross-package", 1, vec![Other(0)]),
            ]
        );
        assert_eq!(lat, [chase(0, None), chase(0, Some(1)), chase(1, None), chase(1, Some(0))]);
        assert!(p.skipped.is_empty(), "{:?}", p.skipped);
        let what: Vec<&str> =
            p.steps.iter().filter(|s| s.step.id().is_scope()).map(|s| s.what.as_str()).collect();
        assert_eq!(
            what[..4],
            [
                "package 0's CPUs 0-3 at once, triad, its own memory bound per node on nodes 0-1 \
                 at once, then interleaved over nodes 0-1",
                "package 1's CPUs 4-7 at once, triad, its own memory bound per node on nodes 2-3 \
                 at once, then interleaved over nodes 2-3",
                "package 0's CPUs 0-3 at once, triad, memory interleaved over package 1's nodes 2-3",
                "package 1's CPUs 4-7 at once, triad, memory interleaved over package 0's nodes 0-1",
            ]
        );
        assert!(
            what[4].starts_with("a CPU of each package (0, 1) to memory interleaved"),
            "{what:?}"
        );
        // after the whole-machine steps, before scaling; latency after
        // the interleaved point
        let n = names(&p);
        let at = |x: &str| n.iter().position(|s| s == x).unwrap_or_else(|| panic!("{x}: {n:?}"));
        assert!(
            at("bw interleave") < at("bw package") && at("bw cross-package") < at("bw scaling")
        );
        assert_eq!(at("lat package"), at("lat interleave") + 1);
        // estimates: one result per target, as every bandwidth result
        let est = |name: &str| -> f64 {
            p.steps.iter().filter(|s| s.step.name() == name).map(|s| s.estimate.as_secs_f64()).sum()
        };
        let local_one = est("bw local") / 4.0;
        assert!((est("bw package") - 4.0 * local_one).abs() < 1e-9, "{}", est("bw package"));
        assert!((est("bw cross-package") - 2.0 * local_one).abs() < 1e-9);
    }

    /// NPS4-like: four nodes per package, every one of them its DRAM.
    #[test]
    fn nps4_packages_span_their_four_nodes() {
        let p = SuitePlan::for_topology(&nps4(), Budget::Default, &facts(false));
        let (bw, lat) = scoped(&p);
        assert_eq!(bw.len(), 4, "{bw:?}");
        assert_eq!(lat.len(), 4);
        let what: Vec<&str> =
            p.steps.iter().filter(|s| s.step.id().is_scope()).map(|s| s.what.as_str()).collect();
        assert!(what[0].contains("CPUs 0-7 at once") && what[0].contains("nodes 0-3"), "{what:?}");
        assert!(what[3].contains("package 0's nodes 0-3"), "{what:?}");
        assert!(p.skipped.is_empty(), "{:?}", p.skipped);
    }

    /// NUMA off on two sockets: each package's CPUs on the memory the OS
    /// gives (said so), and no cross-package step (no page can be placed
    /// on the other package), with the reason.
    #[test]
    fn numa_off_measures_each_package_on_the_memory_the_os_gives() {
        let p = SuitePlan::for_topology(&numa_off(), Budget::Quick, &facts(false));
        let (bw, lat) = scoped(&p);
        assert_eq!(
            bw,
            [
                ("bw-package", 0, vec![PackageTarget::BindPerNode]),
                ("bw-package", 1, vec![PackageTarget::BindPerNode]),
            ]
        );
        assert_eq!(lat, [chase(0, None), chase(1, None)]);
        let pkg = p.steps.iter().find(|s| s.step.id() == StepName::BwPackage).unwrap();
        assert!(pkg.what.contains("CPUs 0-3 at once"), "{}", pkg.what);
        assert!(pkg.what.contains("the memory the OS gives (NUMA off"), "{}", pkg.what);
        let lat = p.steps.iter().find(|s| s.step.id() == StepName::LatPackage).unwrap();
        assert!(lat.what.contains("the memory the OS gives (NUMA off)"), "{}", lat.what);
        let scope: Vec<&(StepName, String)> =
            p.skipped.iter().filter(|(n, _)| n.is_scope()).collect();
        let skipped: Vec<&str> = scope.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            skipped,
            ["bw-cross-package", "bw-cross-package", "lat-package", "lat-package"],
            "{:?}",
            p.skipped
        );
        assert!(scope.iter().all(|(_, w)| w.starts_with("NUMA off")), "{:?}", p.skipped);
    }

    /// A package whose only node has no memory has no DRAM of its own:
    /// its own-memory steps are skipped with why, and nobody reads its
    /// memory across the link.
    #[test]
    fn a_package_without_memory_is_skipped_with_its_reason() {
        let t = Machine::new(Vendor::Intel, "Xeon")
            .package(0, "0-1")
            .package(1, "2-3")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 0)
            .build();
        let p = SuitePlan::for_topology(&t, Budget::Quick, &facts(false));
        let (bw, lat) = scoped(&p);
        use PackageTarget::*;
        assert_eq!(
            bw,
            [
                ("bw-package", 0, vec![BindPerNode, Interleave]),
                ("bw-cross-package", 1, vec![Other(0)])
            ]
        );
        assert_eq!(lat, [chase(0, None), chase(1, Some(0))]);
        assert!(
            p.skipped.iter().any(|(n, w)| *n == StepName::BwPackage
                && w == "package 1's nodes (1) hold no memory: it has no DRAM of its own"),
            "{:?}",
            p.skipped
        );
    }

    /// `run --only/--skip`.
    #[test]
    fn only_and_skip_select_steps_by_name() {
        let plan = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Quick, &facts(true));
        let count = |p: &SuitePlan, n: &str| names(p).iter().filter(|x| *x == n).count();
        // one local bandwidth step per node with CPUs
        assert_eq!(count(&plan, "bw local"), 4);
        let mut only = plan.clone();
        only.select(&[StepName::LatC2c, StepName::BwLocal], &[], why).unwrap();
        assert_eq!(names(&only), ["bw local", "bw local", "bw local", "bw local", "lat c2c"]);
        // the package-scope steps left out keep the caller's words of why
        let left: Vec<(&str, &str)> =
            only.left_out.iter().map(|(n, w)| (n.as_str(), w.as_str())).collect();
        assert_eq!(
            left,
            [
                ("bw-package", "NotKept"),
                ("bw-cross-package", "NotKept"),
                ("lat-package", "NotKept")
            ]
        );
        let mut skip = plan.clone();
        skip.select(&[], &[StepName::BwLocal, StepName::LatLoaded], why).unwrap();
        assert_eq!(skip.steps.len(), plan.steps.len() - 4 - count(&plan, "lat loaded"));
        assert!(!names(&skip).iter().any(|n| n == "bw local" || n == "lat loaded"));
        let mut both = plan.clone();
        both.select(&[StepName::BwLocal, StepName::BwGlobal], &[StepName::BwLocal], why).unwrap();
        assert_eq!(names(&both), ["bw global"], "skip wins over only");
        let mut all = plan.clone();
        all.select(&[], &[], why).unwrap();
        assert_eq!(names(&all), names(&plan));
        // Nothing left: refused, naming every step.
        let mut none = SuitePlan::for_topology(&one_node(), Budget::Quick, &facts(true));
        let e = none.select(&[StepName::BwMatrix], &[], why).unwrap_err();
        assert!(e.to_string().contains("no step left") && e.to_string().contains("lat-c2c"), "{e}");
        let mut none = plan;
        assert_eq!(none.select(&[StepName::LatSweep], &[StepName::LatSweep], why), Err(NoStepLeft));
    }

    /// Every step a plan holds has a name, and every name is some plan's
    /// step; the progress name is the typed name with a space.
    #[test]
    fn step_names_are_the_plans() {
        let mut planned = Vec::new();
        for budget in [Budget::Quick, Budget::Default, Budget::Thorough] {
            let plan = SuitePlan::for_topology(&snc2_with_cxl(), budget, &facts(true));
            planned.extend(plan.steps.iter().map(|s| s.step.id()));
        }
        for n in StepName::ALL {
            assert!(planned.contains(&n), "{n:?} names no planned step");
        }
        assert_eq!(StepName::LatPerCpu.as_str(), "lat-per-cpu");
    }

    #[test]
    fn a_single_node_machine_gets_no_matrix_or_interleave() {
        let p = SuitePlan::for_topology(&one_node(), Budget::Quick, &facts(true));
        assert_eq!(
            names(&p),
            [
                "bw local",
                "bw global",
                "bw scaling",
                "lat matrix",
                "lat sweep",
                "lat prefetch",
                "lat per-cpu",
                "lat loaded",
                "lat c2c"
            ]
        );
        // the interleaved latency and the package-scope steps are left
        // out with their reasons, which the plan prints; `--skip` drops a
        // reason too
        let skipped: Vec<(&str, &str)> =
            p.skipped.iter().map(|(n, w)| (n.as_str(), w.as_str())).collect();
        assert_eq!(
            skipped,
            [
                (
                    "bw-package",
                    "one package: `bw global` measures its CPUs on their own nodes at once"
                ),
                ("bw-cross-package", "one package: no other package's memory"),
                (
                    "lat-interleave",
                    "only node 0 has both memory and CPUs: interleaving needs two or more"
                ),
                ("lat-package", "one package: `lat matrix` and `lat interleave` chase its memory"),
            ]
        );
        let mut q = p.clone();
        q.select(&[], &[StepName::LatInterleave], why).unwrap();
        assert_eq!(q.skipped.len(), 3);
        assert!(q.skipped.iter().all(|(n, _)| n.is_scope()));
        // a left-out package-scope step keeps its reason for the run's
        // step note
        assert_eq!(q.left_out, []);
        q.select(&[], &StepName::SCOPE, why).unwrap();
        assert!(q.skipped.is_empty());
        assert_eq!(q.left_out.len(), 3, "{:?}", q.left_out);
    }

    /// Every latency step chases at the DRAM stride, and the
    /// loaded curves cover read-only (quick), read-only and 2:1 (default),
    /// every mix (thorough).
    #[test]
    fn latency_steps_use_the_dram_stride_and_budgets_pick_the_mixes() {
        let mixes = |b| {
            let p = SuitePlan::for_topology(&one_node(), b, &facts(true));
            for s in &p.steps {
                match &s.step {
                    Step::LatMatrix { opts, .. }
                    | Step::LatInterleave { opts, .. }
                    | Step::LatSweep { opts, .. }
                    | Step::LatPerCpu { opts, .. }
                    | Step::LatPrefetch { opts, .. }
                    | Step::LatLoaded { opts, .. } => {
                        assert_eq!(opts.stride_bytes, 256, "{}", s.step.name());
                        assert_eq!(opts.cache_stride_bytes, 64, "{}", s.step.name());
                    }
                    _ => {}
                }
            }
            p.steps
                .iter()
                .find_map(|s| match &s.step {
                    Step::LatLoaded { spec, .. } => Some(spec.mixes.clone()),
                    _ => None,
                })
                .unwrap()
        };
        assert_eq!(mixes(Budget::Quick), [LoadKind::Read]);
        assert_eq!(mixes(Budget::Default), [LoadKind::Read, LoadKind::R2W1]);
        assert_eq!(mixes(Budget::Thorough), LoadKind::ALL);
    }

    #[test]
    fn a_multi_node_machine_gets_every_node_the_matrix_and_interleave() {
        let t = snc2_with_cxl();
        let p = SuitePlan::for_topology(&t, Budget::Default, &facts(false));
        let n = names(&p);
        assert_eq!(n.iter().filter(|s| *s == "bw local").count(), 4, "{n:?}");
        assert!(n.contains(&"bw matrix".to_string()));
        assert!(n.contains(&"bw interleave".to_string()));
        assert!(!n.contains(&"bw weighted".to_string()), "kernel without weighted interleave");
        let with_weighted = SuitePlan::for_topology(&t, Budget::Default, &facts(true));
        assert!(names(&with_weighted).contains(&"bw weighted".to_string()));
        // The matrix covers 4 CPU nodes x 5 memory nodes, the CXL node too.
        let matrix = p.steps.iter().find(|s| s.step.name() == "bw matrix").unwrap();
        assert!(matrix.what.contains("4 CPU node(s) x 5 memory node(s)"), "{}", matrix.what);
        // latency under interleave once, over the 4 nodes with CPUs (not
        // the CPU-less CXL node), right after the matrix
        let i = n.iter().position(|s| s == "lat interleave").expect("planned");
        assert_eq!(n[i - 1], "lat matrix");
        assert_eq!(n.iter().filter(|s| *s == "lat interleave").count(), 1);
        assert!(p.steps[i].what.contains("interleaved over nodes 0-3"), "{}", p.steps[i].what);
        assert!(p.skipped.is_empty(), "{:?}", p.skipped);
    }

    #[test]
    fn the_latency_matrix_names_each_remote_distance_tier() {
        // SNC2 on 2 sockets: 11 inside a socket, 21 across, and the CXL
        // node (4) at 30/40.
        let t = snc2_with_cxl_machine()
            .distances(&[
                &[10, 11, 21, 21, 30],
                &[11, 10, 21, 21, 30],
                &[21, 21, 10, 11, 40],
                &[21, 21, 11, 10, 40],
                &[30, 30, 40, 40, 10],
            ])
            .build();
        let p = SuitePlan::for_topology(&t, Budget::Quick, &facts(false));
        let lat = p.steps.iter().find(|s| s.step.name() == "lat matrix").unwrap();
        assert!(
            lat.what.ends_with(
                "; remote latency per distance tier 11 (0->1), 21 (0->2), 30 (0->4), 40 (2->4)"
            ),
            "{}",
            lat.what
        );
        // Two nodes: one remote distance, nothing to name.
        let two = Machine::new(Vendor::Intel, "Xeon")
            .package(0, "0-1")
            .package(1, "2-3")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .build();
        let p = SuitePlan::for_topology(&two, Budget::Quick, &facts(false));
        let lat = p.steps.iter().find(|s| s.step.name() == "lat matrix").unwrap();
        assert!(!lat.what.contains("tier"), "{}", lat.what);
    }

    #[test]
    fn budgets_grow_in_kernels_and_time() {
        let t = snc2_with_cxl();
        let q = SuitePlan::for_topology(&t, Budget::Quick, &facts(true));
        let d = SuitePlan::for_topology(&t, Budget::Default, &facts(true));
        let th = SuitePlan::for_topology(&t, Budget::Thorough, &facts(true));
        assert!(q.estimate() < d.estimate() && d.estimate() < th.estimate());
        let kernels = |p: &SuitePlan| match &p.steps[0].step {
            Step::Bw { plan, .. } => plan.kernels.len(),
            _ => panic!("the plan starts with bandwidth"),
        };
        assert_eq!((kernels(&q), kernels(&d), kernels(&th)), (1, 4, 9));
    }

    #[test]
    fn a_cpu_less_machine_part_is_never_a_cpu_node() {
        let p = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Quick, &facts(false));
        for s in &p.steps {
            if let Step::Bw { plan, .. } = &s.step {
                if let BwMode::Local { cpu_node, .. } = plan.modes[0] {
                    assert_ne!(cpu_node, Some(4), "node 4 has no CPUs");
                }
            }
        }
    }

    /// The plan comes out complete: a known peak reaches every bandwidth
    /// step, so no caller has to patch the plan after planning.
    #[test]
    fn a_known_peak_reaches_every_bandwidth_step() {
        let peaks = |f: &MachineFacts| -> Vec<Option<f64>> {
            let p = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Default, f);
            p.steps
                .iter()
                .filter_map(|s| match &s.step {
                    Step::Bw { plan, .. } => Some(plan.peak_gbs),
                    _ => None,
                })
                .collect()
        };
        let with = peaks(&MachineFacts {
            weighted_interleave: true,
            peak_gbs_per_node: Some(70.4),
            ..MachineFacts::default()
        });
        assert!(with.len() >= 8, "{with:?}");
        assert!(with.iter().all(|p| *p == Some(70.4)), "{with:?}");
        assert!(peaks(&facts(true)).iter().all(Option::is_none));
    }

    /// `run --stores regular` reaches every bandwidth step; the default
    /// leaves each on `auto` (non-temporal where the ISA has them).
    #[test]
    fn the_store_method_reaches_every_bandwidth_step() {
        let stores = |f: &MachineFacts| -> Vec<StoreMode> {
            let p = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Default, f);
            p.steps
                .iter()
                .filter_map(|s| match &s.step {
                    Step::Bw { plan, .. } => Some(plan.stores),
                    _ => None,
                })
                .collect()
        };
        let regular =
            stores(&MachineFacts { stores: StoreMode::Regular, ..MachineFacts::default() });
        assert!(regular.len() >= 8, "{regular:?}");
        assert!(regular.iter().all(|s| *s == StoreMode::Regular), "{regular:?}");
        assert!(stores(&facts(true)).iter().all(|s| *s == StoreMode::Auto));
    }

    /// Records every event.
    #[derive(Default)]
    struct Log(std::sync::Mutex<Vec<Event>>);

    impl Observer for Log {
        fn event(&self, e: Event) {
            self.0.lock().unwrap().push(e);
        }
    }

    fn failing_plan() -> SuitePlan {
        let bad_bw = BwPlan {
            modes: vec![BwMode::Local { cpu_node: Some(7), mem_node: None, cpus: None }],
            ..BwPlan::default()
        };
        let bad_lat = Step::LatPerCpu {
            spec: PerCpuSpec { mem_node: Some(9), max_cpus: 1 },
            opts: ChaseOpts::default(),
            timing: Timing::quick(),
        };
        let planned = |step| PlannedStep { step, what: String::new(), estimate: Duration::ZERO };
        SuitePlan {
            budget: Budget::Quick,
            steps: vec![
                planned(Step::Bw { name: StepName::BwLocal, plan: bad_bw }),
                planned(bad_lat),
            ],
            skipped: Vec::new(),
            left_out: Vec::new(),
        }
    }

    #[test]
    fn execute_reports_each_step_and_goes_on_after_a_failure() {
        let log = Log::default();
        let out = execute(&one_node(), &failing_plan(), &log, &StopFlag::new());
        assert_eq!(out.steps_run, 2);
        assert!(!out.interrupted);
        let failed: Vec<&str> = out.failed.iter().map(|f| f.step.as_str()).collect();
        assert_eq!(failed, ["bw local", "lat per-cpu"]);
        assert!(matches!(out.failed[0].error, StepError::Bw(_)));
        assert!(matches!(out.failed[1].error, StepError::Lat(_)));
        let events = log.0.into_inner().unwrap();
        let steps: Vec<(bool, usize, String, bool)> = events
            .iter()
            .filter_map(|e| match e {
                Event::StepStart { index, name, total, .. } => {
                    assert_eq!(*total, 2);
                    Some((true, *index, name.clone(), false))
                }
                Event::StepEnd { index, name, error, .. } => {
                    Some((false, *index, name.clone(), error.is_some()))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            steps,
            [
                (true, 0, "bw local".to_string(), false),
                (false, 0, "bw local".to_string(), true),
                (true, 1, "lat per-cpu".to_string(), false),
                (false, 1, "lat per-cpu".to_string(), true),
            ]
        );
        assert!(matches!(&events[0], Event::PhaseStart { total: 2, .. }));
        assert!(matches!(events.last(), Some(Event::PhaseEnd { .. })));
    }

    fn notes(events: &[Event]) -> Vec<(String, StepStatus, String)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Record(results::Record::Step(n)) => {
                    Some((n.step.clone(), n.status, n.reason.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// On two packages, each package-scope step that measures nothing is
    /// stored with why: skipped by the plan, left out by `--only/--skip`,
    /// failed (with its error) or not reached after a stop.
    #[test]
    fn package_scope_steps_that_measure_nothing_are_stored_with_why() {
        let planned = |step| PlannedStep { step, what: String::new(), estimate: Duration::ZERO };
        let bad_bw = BwPlan {
            modes: vec![BwMode::Package { package: 9, memory: PackageTarget::Interleave }],
            ..BwPlan::default()
        };
        let plan = SuitePlan {
            budget: Budget::Quick,
            steps: vec![
                planned(Step::Bw { name: StepName::BwPackage, plan: bad_bw }),
                planned(Step::LatPackage {
                    chases: vec![chase(9, None)],
                    opts: ChaseOpts::default(),
                    timing: Timing::quick(),
                }),
            ],
            skipped: vec![
                (StepName::BwCrossPackage, "NUMA off: no".into()),
                (StepName::LatInterleave, "one node".into()),
            ],
            left_out: vec![(StepName::LatPackage, "left out, as the caller words it".into())],
        };
        let log = Log::default();
        let out = execute(&snc2_with_cxl(), &plan, &log, &StopFlag::new());
        assert_eq!(out.failed.len(), 2);
        let n = notes(&log.0.into_inner().unwrap());
        assert_eq!(n.len(), 4, "{n:?}");
        assert_eq!(n[0], ("bw-cross-package".into(), StepStatus::Skipped, "NUMA off: no".into()));
        assert_eq!(
            n[1],
            ("lat-package".into(), StepStatus::Skipped, "left out, as the caller words it".into())
        );
        assert_eq!((n[2].0.as_str(), n[2].1), ("bw-package", StepStatus::Failed));
        assert!(n[2].2.contains("package 9 has no online CPU"), "{n:?}");
        assert_eq!((n[3].0.as_str(), n[3].1), ("lat-package", StepStatus::Failed));
        // stopped before the first step: each step not reached, once
        let stop = StopFlag::new();
        stop.stop();
        let log = Log::default();
        execute(&snc2_with_cxl(), &plan, &log, &stop);
        let n = notes(&log.0.into_inner().unwrap());
        let reached: Vec<&str> = n[2..].iter().map(|x| x.2.as_str()).collect();
        assert_eq!(reached, ["the run was stopped before this step"; 2]);
        // one package: nothing stored, whatever the plan skipped
        let log = Log::default();
        execute(&one_node(), &plan, &log, &StopFlag::new());
        assert!(notes(&log.0.into_inner().unwrap()).is_empty());
    }

    #[test]
    fn execute_stops_before_the_next_step_when_asked() {
        let stop = StopFlag::new();
        stop.stop();
        let log = Log::default();
        let out = execute(&one_node(), &failing_plan(), &log, &stop);
        assert!(out.interrupted);
        assert_eq!(out.steps_run, 0);
        assert!(log.0.into_inner().unwrap().iter().all(|e| !matches!(e, Event::StepStart { .. })));
    }
}
