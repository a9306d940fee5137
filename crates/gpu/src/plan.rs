//! The plan a `numaprobe gpu` run hands the helper, from what was asked:
//! the defaults for what was not, each node's usable CPUs for the helper's
//! copying thread, sizes ascending once each.

use place::Allowed;
use topo::Topology;

use crate::protocol::{default_sizes, Direction, Plan, PlanNode, PROTOCOL_VERSION};

/// What was asked; an empty list means the default (every direction,
/// [`default_sizes`]).
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub gpus: Vec<u32>,
    pub nodes: Vec<u32>,
    pub directions: Vec<Direction>,
    pub sizes: Vec<u64>,
    pub reps: u32,
    /// Skip the all-GPUs-at-once step.
    pub no_together: bool,
}

impl Plan {
    /// The plan of `r` on this machine (a node without usable CPUs copies
    /// from a thread the helper does not pin).
    pub fn of(r: &Request, allowed: &Allowed, t: &Topology) -> Plan {
        let mut sizes = if r.sizes.is_empty() { default_sizes() } else { r.sizes.clone() };
        sizes.sort_unstable();
        sizes.dedup();
        Plan {
            protocol: PROTOCOL_VERSION,
            gpus: r.gpus.clone(),
            nodes: r
                .nodes
                .iter()
                .map(|&n| PlanNode {
                    node: n,
                    cpus: allowed.check_cpu_node(n, t).map(|c| c.to_list()).unwrap_or_default(),
                })
                .collect(),
            directions: if r.directions.is_empty() {
                Direction::ALL.to_vec()
            } else {
                r.directions.clone()
            },
            sizes,
            reps: r.reps,
            together: !r.no_together && r.gpus.len() > 1,
        }
    }

    /// How many points the helper reports: one per node, GPU, direction
    /// and size, and one per node, GPU and direction all at once.
    pub fn points(&self) -> usize {
        let pairs = self.nodes.len() * self.gpus.len() * self.directions.len();
        pairs * self.sizes.len() + if self.together { pairs } else { 0 }
    }
}
