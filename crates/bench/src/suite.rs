//! The plan of `numaprobe run`: which experiments characterise a machine
//! under a time budget, in what order, and how long they should take.
//!
//! Deciding is separate from measuring: [`SuitePlan::for_topology`] is a pure
//! function of the topology and the budget, so what `run` will do can be
//! printed (and tested) before anything is allocated.

use std::time::Duration;

use kernels::Kernel;
use topo::Topology;

use crate::bw::{BwMode, BwPlan, RepPolicy};
use crate::lat::{C2cSpec, ChaseOpts, LoadKind, LoadedSpec, PerCpuSpec, Timing, Where};

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
    Bw { name: &'static str, plan: BwPlan },
    /// Idle latency from every CPU node to every memory node.
    LatMatrix { opts: ChaseOpts, timing: Timing },
    /// Latency against working-set size on the first CPU.
    LatSweep { at: Where, opts: ChaseOpts, timing: Timing },
    /// Latency from every CPU (or a sample) to one node, grouped.
    LatPerCpu { spec: PerCpuSpec, opts: ChaseOpts, timing: Timing },
    /// Latency under load, delay stepped from none to large.
    LatLoaded { spec: LoadedSpec, opts: ChaseOpts, timing: Timing },
    /// Core-to-core latency over sampled pairs.
    C2c { spec: C2cSpec, timing: Timing },
}

impl Step {
    /// A short name for plans and progress bars.
    pub fn name(&self) -> String {
        match self {
            Step::Bw { name, .. } => format!("bw {name}"),
            Step::LatMatrix { .. } => "lat matrix".into(),
            Step::LatSweep { .. } => "lat sweep".into(),
            Step::LatPerCpu { .. } => "lat per-cpu".into(),
            Step::LatLoaded { .. } => "lat loaded".into(),
            Step::C2c { .. } => "lat c2c".into(),
        }
    }
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
}

impl SuitePlan {
    pub fn estimate(&self) -> Duration {
        self.steps.iter().map(|s| s.estimate).sum()
    }

    /// Builds the plan for `topo` (`allowed_cpus` = CPUs this process may
    /// use; `weighted_interleave` = the kernel has it).
    pub fn for_topology(topo: &Topology, budget: Budget, weighted_interleave: bool) -> SuitePlan {
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
        let bw = |mode: BwMode, kernels: Vec<Kernel>| BwPlan {
            modes: vec![mode],
            kernels,
            reps,
            ..BwPlan::default()
        };
        // Time per result: the repetition budget, plus allocating and
        // first-touching the arrays (a few hundred MiB at a few GB/s).
        let per_result = rep_budget + 0.6;
        let mut steps = Vec::new();
        let mut push = |step: Step, what: String, secs: f64| {
            steps.push(PlannedStep { step, what, estimate: Duration::from_secs_f64(secs) });
        };

        // Bandwidth.
        for n in &cpu_nodes {
            let has_mem = n.mem_total_bytes > 0;
            push(
                Step::Bw {
                    name: "local",
                    plan: bw(
                        BwMode::Local {
                            cpu_node: Some(n.id),
                            mem_node: if has_mem { Some(n.id) } else { None },
                            cpus: None,
                        },
                        kernels.clone(),
                    ),
                },
                format!(
                    "node {} threads on {} memory, {} kernel(s)",
                    n.id,
                    if has_mem { "its own" } else { "the nearest" },
                    kernels.len()
                ),
                per_result * kernels.len() as f64,
            );
        }
        if cpu_nodes.len() * mem_nodes > 1 {
            let cells = cpu_nodes.len() * mem_nodes;
            push(
                Step::Bw { name: "matrix", plan: bw(BwMode::Matrix, vec![Kernel::Triad]) },
                format!("triad, {} CPU node(s) x {} memory node(s)", cpu_nodes.len(), mem_nodes),
                per_result * cells as f64,
            );
        }
        push(
            Step::Bw { name: "global", plan: bw(BwMode::Global, kernels.clone()) },
            "every node's threads on their own node's memory".into(),
            per_result * kernels.len() as f64,
        );
        if mem_nodes > 1 {
            push(
                Step::Bw { name: "interleave", plan: bw(BwMode::Interleave, kernels.clone()) },
                format!("every thread, memory interleaved over {mem_nodes} nodes"),
                per_result * kernels.len() as f64,
            );
            if weighted_interleave {
                push(
                    Step::Bw {
                        name: "weighted",
                        plan: bw(BwMode::Weighted { required: false }, kernels.clone()),
                    },
                    "every thread, weighted interleave with the kernel's weights".into(),
                    per_result * kernels.len() as f64,
                );
            }
        }
        if let Some(first) = cpu_nodes.first() {
            // bw's scaling steps: every count up to 16, then about 8 more
            let counts = first.cpus.len().min(16) + usize::from(first.cpus.len() > 16) * 9;
            push(
                Step::Bw {
                    name: "scaling",
                    plan: bw(
                        BwMode::Scaling { cpu_node: Some(first.id), mem_node: None },
                        vec![Kernel::Triad],
                    ),
                },
                format!("triad with 1..{} threads of node {}", first.cpus.len(), first.id),
                per_result * counts as f64,
            );
        }

        // Latency. DRAM points use a working set far past the LLC; each
        // needs its ring built (a shuffle of size/64 lines, ~0.1 s per
        // 64 MiB here) before the samples.
        let (lat_size, timing, max_per_cpu, delays): (u64, Timing, usize, Vec<u64>) = match budget {
            Budget::Quick => (512 << 20, Timing::quick(), 8, vec![0, 50, 500, 5000]),
            Budget::Default => {
                (1 << 30, Timing::default(), 32, vec![0, 20, 50, 100, 200, 500, 1000, 5000])
            }
            Budget::Thorough => (
                1 << 30,
                Timing::default(),
                usize::MAX,
                crate::lat::loaded::DEFAULT_DELAYS.to_vec(),
            ),
        };
        let ring_secs = lat_size as f64 / (64 << 20) as f64 * 0.1;
        let sample_secs = timing.samples as f64 * timing.sample_time.as_secs_f64() * 1.5;
        let opts = ChaseOpts { size_bytes: Some(lat_size), ..ChaseOpts::default() };
        let cells = (cpu_nodes.len() * mem_nodes).max(1);
        push(
            Step::LatMatrix { opts, timing },
            format!(
                "{} CPU node(s) x {} memory node(s), {} MiB working set{}",
                cpu_nodes.len(),
                mem_nodes,
                lat_size >> 20,
                remote_tiers(topo)
            ),
            cells as f64 * (ring_secs + sample_secs),
        );
        let sweep_timing = Timing::quick();
        push(
            Step::LatSweep {
                at: Where::default(),
                opts: ChaseOpts { size_bytes: None, ..ChaseOpts::default() },
                timing: sweep_timing,
            },
            "working set from 4 KiB to past the last-level cache".into(),
            // the largest points dominate: about 8 x LLC of ring in total
            {
                let llc = topo.caches.iter().map(|c| c.size_bytes).max().unwrap_or(32 << 20) as f64;
                (llc * 8.0) / (64 << 20) as f64 * 0.1
                    + 40.0
                        * sweep_timing.samples as f64
                        * sweep_timing.sample_time.as_secs_f64()
                        * 1.5
            },
        );
        let per_cpu_n = ncpus.min(max_per_cpu);
        push(
            Step::LatPerCpu {
                spec: PerCpuSpec {
                    mem_node: topo.memory_nodes().next().map(|n| n.id),
                    max_cpus: max_per_cpu,
                },
                opts,
                timing,
            },
            format!(
                "{per_cpu_n} CPU(s) to node {}'s memory, grouped by latency",
                topo.memory_nodes().next().map_or(0, |n| n.id)
            ),
            ring_secs + per_cpu_n as f64 * sample_secs,
        );
        if ncpus > 1 {
            let load_threads = largest_node_cpus.saturating_sub(1).max(1);
            push(
                Step::LatLoaded {
                    spec: LoadedSpec {
                        at: Where::default(),
                        load_cpus: None,
                        kind: LoadKind::Read,
                        delays: delays.clone(),
                        load_bytes_per_thread: None,
                    },
                    opts,
                    timing,
                },
                format!(
                    "chase on one CPU, {load_threads}+ load thread(s), {} delay steps",
                    delays.len()
                ),
                ring_secs + delays.len() as f64 * (sample_secs + 0.3),
            );
            let pairs = if budget == Budget::Quick { 1 } else { 3 };
            push(
                Step::C2c {
                    spec: C2cSpec { pairs: Vec::new(), pairs_per_relation: pairs, round_trips: 0 },
                    timing: Timing::quick(),
                },
                format!("up to {pairs} pair(s) per relation (SMT, node, package, cross-package)"),
                4.0 * pairs as f64 * 0.3,
            );
        }
        SuitePlan { budget, steps }
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

#[cfg(test)]
mod tests {
    use super::*;
    use topo::synthetic::Machine;
    use topo::Vendor;

    fn names(p: &SuitePlan) -> Vec<String> {
        p.steps.iter().map(|s| s.step.name()).collect()
    }

    fn one_node() -> Topology {
        Machine::new(Vendor::Amd, "EPYC").package(0, "0-1").node(0, "0-1", 16 << 30).build()
    }

    fn snc2_with_cxl() -> Topology {
        Machine::new(Vendor::Intel, "Intel(R) Xeon(R) Gold 6230")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .node(2, "4-5", 8 << 30)
            .node(3, "6-7", 8 << 30)
            .node(4, "", 64 << 30)
            .build()
    }

    #[test]
    fn a_single_node_machine_gets_no_matrix_or_interleave() {
        let p = SuitePlan::for_topology(&one_node(), Budget::Quick, true);
        assert_eq!(
            names(&p),
            [
                "bw local",
                "bw global",
                "bw scaling",
                "lat matrix",
                "lat sweep",
                "lat per-cpu",
                "lat loaded",
                "lat c2c"
            ]
        );
    }

    #[test]
    fn a_multi_node_machine_gets_every_node_the_matrix_and_interleave() {
        let t = snc2_with_cxl();
        let p = SuitePlan::for_topology(&t, Budget::Default, false);
        let n = names(&p);
        assert_eq!(n.iter().filter(|s| *s == "bw local").count(), 4, "{n:?}");
        assert!(n.contains(&"bw matrix".to_string()));
        assert!(n.contains(&"bw interleave".to_string()));
        assert!(!n.contains(&"bw weighted".to_string()), "kernel without weighted interleave");
        let with_weighted = SuitePlan::for_topology(&t, Budget::Default, true);
        assert!(names(&with_weighted).contains(&"bw weighted".to_string()));
        // The matrix covers 4 CPU nodes x 5 memory nodes, the CXL node too.
        let matrix = p.steps.iter().find(|s| s.step.name() == "bw matrix").unwrap();
        assert!(matrix.what.contains("4 CPU node(s) x 5 memory node(s)"), "{}", matrix.what);
    }

    #[test]
    fn the_latency_matrix_names_each_remote_distance_tier() {
        // SNC2 on 2 sockets: 11 inside a socket, 21 across, and the CXL
        // node (4) at 30/40.
        let t = Machine::new(Vendor::Intel, "Intel(R) Xeon(R) Gold 6230")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .node(2, "4-5", 8 << 30)
            .node(3, "6-7", 8 << 30)
            .node(4, "", 64 << 30)
            .distances(&[
                &[10, 11, 21, 21, 30],
                &[11, 10, 21, 21, 30],
                &[21, 21, 10, 11, 40],
                &[21, 21, 11, 10, 40],
                &[30, 30, 40, 40, 10],
            ])
            .build();
        let p = SuitePlan::for_topology(&t, Budget::Quick, false);
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
        let p = SuitePlan::for_topology(&two, Budget::Quick, false);
        let lat = p.steps.iter().find(|s| s.step.name() == "lat matrix").unwrap();
        assert!(!lat.what.contains("tier"), "{}", lat.what);
    }

    #[test]
    fn budgets_grow_in_kernels_and_time() {
        let t = snc2_with_cxl();
        let q = SuitePlan::for_topology(&t, Budget::Quick, true);
        let d = SuitePlan::for_topology(&t, Budget::Default, true);
        let th = SuitePlan::for_topology(&t, Budget::Thorough, true);
        assert!(q.estimate() < d.estimate() && d.estimate() < th.estimate());
        let kernels = |p: &SuitePlan| match &p.steps[0].step {
            Step::Bw { plan, .. } => plan.kernels.len(),
            _ => panic!("the plan starts with bandwidth"),
        };
        assert_eq!((kernels(&q), kernels(&d), kernels(&th)), (1, 4, 9));
    }

    #[test]
    fn a_cpu_less_machine_part_is_never_a_cpu_node() {
        let p = SuitePlan::for_topology(&snc2_with_cxl(), Budget::Quick, false);
        for s in &p.steps {
            if let Step::Bw { plan, .. } = &s.step {
                if let BwMode::Local { cpu_node, .. } = plan.modes[0] {
                    assert_ne!(cpu_node, Some(4), "node 4 has no CPUs");
                }
            }
        }
    }
}
