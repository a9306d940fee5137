//! Placement policies for `exec`: their names, parsing, the `all` expansion
//! for a machine, and validation into the CPU and memory masks that the
//! child applies before `exec`.

use std::fmt;
use std::str::FromStr;

use place::SetSpec;
use serde::Serialize;
use topo::{CpuSet, IdSet, NodeSet, SysRoot, Topology};

use super::ExecError;

/// One placement to run the command under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// No change: the kernel's default (first touch, CPUs free).
    Default,
    /// CPUs of node N, memory bound to node N.
    Local(u32),
    /// CPUs of node `cpu`, memory bound to node `mem`.
    Remote { cpu: u32, mem: u32 },
    /// Pages interleaved over these nodes (`None`: every allowed memory node).
    Interleave(Option<NodeSet>),
    /// Weighted interleave (Linux 6.9+) over these nodes (`None`: every
    /// allowed memory node), with the kernel's per-node weights.
    Weighted(Option<NodeSet>),
    /// CPUs of node N, memory policy left alone.
    CpusOnly(u32),
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Policy::Default => f.write_str("default"),
            Policy::Local(n) => write!(f, "local:{n}"),
            Policy::Remote { cpu, mem } => write!(f, "remote:{cpu}/{mem}"),
            Policy::Interleave(None) => f.write_str("interleave"),
            Policy::Interleave(Some(s)) => write!(f, "interleave:{}", s.to_list()),
            Policy::Weighted(None) => f.write_str("weighted"),
            Policy::Weighted(Some(s)) => write!(f, "weighted:{}", s.to_list()),
            Policy::CpusOnly(n) => write!(f, "cpus-only:{n}"),
        }
    }
}

fn node_id(text: &str, whole: &str) -> Result<u32, ExecError> {
    text.trim()
        .parse()
        .map_err(|_| ExecError::BadPolicy(format!("'{whole}': '{text}' is not a node number")))
}

/// The node set of `interleave:SET`/`weighted:SET` in numactl's syntax
/// (see `place::spec`): `all` is `None` (every usable memory node), a list
/// is itself; `!LIST` and `+LIST` depend on the machine, so they are only
/// taken in a policy list ([`parse_list`], resolved by [`Machine::expand`]).
fn node_set(text: &str, whole: &str) -> Result<Option<NodeSet>, ExecError> {
    match SetSpec::parse(text) {
        Ok(SetSpec::All) => Ok(None),
        Ok(SetSpec::List(set)) => Ok(Some(set)),
        Ok(_) => Err(ExecError::BadPolicy(format!(
            "'{whole}': '{text}' is relative to this machine's nodes; give it in --policies"
        ))),
        Err(e) => Err(ExecError::BadPolicy(format!("'{whole}': bad node set: {e}"))),
    }
}

impl FromStr for Policy {
    type Err = ExecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        match (name, arg) {
            ("default", None) => Ok(Policy::Default),
            ("local", Some(a)) => Ok(Policy::Local(node_id(a, s)?)),
            ("cpus-only", Some(a)) => Ok(Policy::CpusOnly(node_id(a, s)?)),
            ("remote", Some(a)) => {
                let (c, m) = a.split_once('/').ok_or_else(|| {
                    ExecError::BadPolicy(format!("'{s}': expected remote:CPU_NODE/MEM_NODE"))
                })?;
                Ok(Policy::Remote { cpu: node_id(c, s)?, mem: node_id(m, s)? })
            }
            ("interleave", None) => Ok(Policy::Interleave(None)),
            ("interleave", Some(a)) => Ok(Policy::Interleave(node_set(a, s)?)),
            ("weighted", None) => Ok(Policy::Weighted(None)),
            ("weighted", Some(a)) => Ok(Policy::Weighted(node_set(a, s)?)),
            ("local" | "cpus-only" | "remote", None) => {
                Err(ExecError::BadPolicy(format!("'{s}' needs a node, e.g. {s}:0")))
            }
            ("default", Some(_)) => {
                Err(ExecError::BadPolicy(format!("'{s}': default takes no argument")))
            }
            _ => Err(ExecError::BadPolicy(format!(
                "unknown policy '{s}' (known: default, local:N, remote:A/B, interleave[:LIST], \
                 weighted[:LIST], cpus-only:N, all)"
            ))),
        }
    }
}

/// A policy list as the user wrote it: policies or `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyItem {
    All,
    One(Policy),
    /// `interleave:!LIST`, `interleave:+LIST` (and `weighted:`): a node set
    /// relative to the usable memory nodes, resolved by [`Machine::expand`].
    Within {
        weighted: bool,
        spec: SetSpec,
        text: String,
    },
}

/// Parses a comma-separated list such as `default,local:0,interleave:0,1,all`.
/// Node lists may hold commas: a piece that starts with a digit continues
/// the `interleave:`/`weighted:` list before it.
pub fn parse_list(text: &str) -> Result<Vec<PolicyItem>, ExecError> {
    let mut pieces: Vec<String> = Vec::new();
    for raw in text.split(',') {
        let piece = raw.trim();
        if piece.is_empty() {
            return Err(ExecError::BadPolicy(format!("empty entry in policy list '{text}'")));
        }
        let continues = piece.starts_with(|c: char| c.is_ascii_digit())
            && pieces
                .last()
                .is_some_and(|p| p.starts_with("interleave:") || p.starts_with("weighted:"));
        match pieces.last_mut() {
            Some(last) if continues => {
                last.push(',');
                last.push_str(piece);
            }
            _ => pieces.push(piece.to_string()),
        }
    }
    pieces
        .iter()
        .map(|p| {
            if p == "all" {
                return Ok(PolicyItem::All);
            }
            let relative = |arg: &str| arg.trim_start().starts_with(['!', '+']);
            for (prefix, weighted) in [("interleave:", false), ("weighted:", true)] {
                if let Some(arg) = p.strip_prefix(prefix).filter(|a| relative(a)) {
                    let spec = SetSpec::parse(arg)
                        .map_err(|e| ExecError::BadPolicy(format!("'{p}': bad node set: {e}")))?;
                    return Ok(PolicyItem::Within { weighted, spec, text: p.clone() });
                }
            }
            p.parse().map(PolicyItem::One)
        })
        .collect()
}

/// What `exec` needs to know about the machine to expand and check policies.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub nodes: Vec<MachineNode>,
    /// CPUs this process may run on (`sched_getaffinity` / `Cpus_allowed_list`).
    pub allowed_cpus: Option<CpuSet>,
    /// Nodes this process may allocate on (`Mems_allowed_list`).
    pub allowed_mems: Option<NodeSet>,
    /// The kernel offers `MPOL_WEIGHTED_INTERLEAVE`
    /// (`/sys/kernel/mm/mempolicy/weighted_interleave` exists).
    pub weighted_interleave: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MachineNode {
    pub id: u32,
    pub cpus: CpuSet,
    pub has_memory: bool,
}

impl Machine {
    /// From a discovered topology plus what this process may use.
    pub fn from_topology(
        t: &Topology,
        allowed_cpus: Option<CpuSet>,
        allowed_mems: Option<NodeSet>,
        weighted_interleave: bool,
    ) -> Self {
        let nodes = t
            .nodes
            .iter()
            .map(|n| MachineNode {
                id: n.id,
                cpus: n.cpus.clone(),
                has_memory: n.mem_total_bytes > 0,
            })
            .collect();
        Machine { nodes, allowed_cpus, allowed_mems, weighted_interleave }
    }

    /// Reads nodes (cpulist, MemTotal), this process's allowed sets and the
    /// weighted-interleave knob under `root`.
    pub fn read(root: &SysRoot) -> Result<Self, ExecError> {
        const NODES: &str = "sys/devices/system/node";
        let mut nodes = Vec::new();
        for id in root.list_ids(NODES, "node")? {
            let cpus = match root.read_optional(&format!("{NODES}/node{id}/cpulist"))? {
                Some(s) => IdSet::parse_list(s.trim()).map_err(|e| {
                    topo::TopoError::malformed(
                        root.path(&format!("{NODES}/node{id}/cpulist")),
                        e.to_string(),
                    )
                })?,
                None => CpuSet::new(),
            };
            let mem = root
                .read_optional(&format!("{NODES}/node{id}/meminfo"))?
                .and_then(|s| meminfo_total_kib(&s))
                .unwrap_or(0);
            nodes.push(MachineNode { id, cpus, has_memory: mem > 0 });
        }
        let (allowed_cpus, allowed_mems) = match root.read_optional("proc/self/status")? {
            Some(s) => allowed_from_status(&s),
            None => (None, None),
        };
        let weighted_interleave = root.path("sys/kernel/mm/mempolicy/weighted_interleave").is_dir();
        Ok(Machine { nodes, allowed_cpus, allowed_mems, weighted_interleave })
    }

    pub fn node(&self, id: u32) -> Option<&MachineNode> {
        self.nodes.iter().find(|n| n.id == id)
    }

    fn node_ids(&self) -> NodeSet {
        self.nodes.iter().map(|n| n.id).collect()
    }

    fn cpu_ok(&self, n: &MachineNode) -> bool {
        !n.cpus.is_empty() && !matches!(&self.allowed_cpus, Some(a) if a.is_disjoint(&n.cpus))
    }

    fn mem_ok(&self, n: &MachineNode) -> bool {
        n.has_memory && !matches!(&self.allowed_mems, Some(a) if !a.contains(n.id))
    }

    /// Nodes whose CPUs this process may use.
    pub fn usable_cpu_nodes(&self) -> Vec<u32> {
        self.nodes.iter().filter(|n| self.cpu_ok(n)).map(|n| n.id).collect()
    }

    /// Nodes with memory this process may allocate on.
    pub fn usable_mem_nodes(&self) -> Vec<u32> {
        self.nodes.iter().filter(|n| self.mem_ok(n)).map(|n| n.id).collect()
    }

    fn cpus_of(&self, id: u32, policy: &Policy) -> Result<CpuSet, ExecError> {
        let n = self.node(id).ok_or_else(|| self.no_node(id, policy))?;
        if n.cpus.is_empty() {
            return Err(ExecError::Refused(format!(
                "{policy}: node {id} has no CPUs (a memory-only node); run CPUs elsewhere, e.g. remote:A/{id}"
            )));
        }
        let cpus = match &self.allowed_cpus {
            Some(a) => a.intersection(&n.cpus),
            None => n.cpus.clone(),
        };
        if cpus.is_empty() {
            return Err(ExecError::Refused(format!(
                "{policy}: node {id}'s CPUs ({}) are outside the CPUs this process may use ({})",
                n.cpus,
                self.allowed_cpus.as_ref().map(|a| a.to_list()).unwrap_or_default()
            )));
        }
        Ok(cpus)
    }

    fn check_mem(&self, id: u32, policy: &Policy) -> Result<(), ExecError> {
        let n = self.node(id).ok_or_else(|| self.no_node(id, policy))?;
        if !n.has_memory {
            return Err(ExecError::Refused(format!(
                "{policy}: node {id} has no memory (a CPU-only node)"
            )));
        }
        if let Some(a) = &self.allowed_mems {
            if !a.contains(id) {
                return Err(ExecError::Refused(format!(
                    "{policy}: node {id} is outside the memory nodes this process may use ({a}; Mems_allowed)"
                )));
            }
        }
        Ok(())
    }

    fn no_node(&self, id: u32, policy: &Policy) -> ExecError {
        let ids = self.node_ids();
        if ids.is_empty() {
            ExecError::Refused(format!("{policy}: this kernel shows no NUMA nodes"))
        } else {
            ExecError::Refused(format!("{policy}: node {id} does not exist (nodes: {ids})"))
        }
    }

    fn interleave_set(&self, set: &Option<NodeSet>, policy: &Policy) -> Result<NodeSet, ExecError> {
        match set {
            Some(s) => {
                for id in s.iter() {
                    self.check_mem(id, policy)?;
                }
                Ok(s.clone())
            }
            None => {
                let all: NodeSet = self.usable_mem_nodes().into_iter().collect();
                if all.is_empty() {
                    return Err(ExecError::Refused(format!(
                        "{policy}: no memory node this process may use"
                    )));
                }
                Ok(all)
            }
        }
    }

    /// Checks `policy` against this machine and what the process may use,
    /// and returns the masks to apply; a refusal names the reason.
    pub fn placement(&self, policy: &Policy) -> Result<Placement, ExecError> {
        Ok(match policy {
            Policy::Default => Placement { cpus: None, mem: None },
            Policy::Local(n) => {
                let cpus = self.cpus_of(*n, policy)?;
                self.check_mem(*n, policy)?;
                Placement {
                    cpus: Some(cpus),
                    mem: Some((MemMode::Bind, [*n].into_iter().collect())),
                }
            }
            Policy::Remote { cpu, mem } => {
                let cpus = self.cpus_of(*cpu, policy)?;
                self.check_mem(*mem, policy)?;
                Placement {
                    cpus: Some(cpus),
                    mem: Some((MemMode::Bind, [*mem].into_iter().collect())),
                }
            }
            Policy::CpusOnly(n) => Placement { cpus: Some(self.cpus_of(*n, policy)?), mem: None },
            Policy::Interleave(set) => Placement {
                cpus: None,
                mem: Some((MemMode::Interleave, self.interleave_set(set, policy)?)),
            },
            Policy::Weighted(set) => {
                if !self.weighted_interleave {
                    return Err(ExecError::Refused(format!(
                        "{policy}: this kernel has no weighted interleave \
                         (needs Linux 6.9+; /sys/kernel/mm/mempolicy/weighted_interleave is absent)"
                    )));
                }
                Placement {
                    cpus: None,
                    mem: Some((MemMode::WeightedInterleave, self.interleave_set(set, policy)?)),
                }
            }
        })
    }

    /// Expands a parsed list: `all` becomes [`Machine::all_policies`],
    /// `interleave:!LIST`/`+LIST` their nodes among the usable memory nodes
    /// (refused when that selects none); duplicates are dropped, first
    /// occurrence kept.
    pub fn expand(&self, items: &[PolicyItem]) -> Result<Vec<Policy>, ExecError> {
        let mut out: Vec<Policy> = Vec::new();
        for item in items {
            let add = match item {
                PolicyItem::All => self.all_policies(),
                PolicyItem::One(p) => vec![p.clone()],
                PolicyItem::Within { weighted, spec, text } => {
                    let usable: NodeSet = self.usable_mem_nodes().into_iter().collect();
                    let set = spec
                        .resolve(&usable, "memory node")
                        .map_err(|e| ExecError::Refused(format!("{text}: {e}")))?;
                    vec![if *weighted {
                        Policy::Weighted(Some(set))
                    } else {
                        Policy::Interleave(Some(set))
                    }]
                }
            };
            for p in add {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        Ok(out)
    }

    /// The useful set for this machine, in this order:
    /// `default`; `local:N` for every node with CPUs and memory that this
    /// process may use; `remote:A/B` from the first such CPU node A to every
    /// other usable memory node B (memory-only nodes included);
    /// `cpus-only:A`; `interleave` over all usable memory nodes when there
    /// are two or more; `interleave:LIST` over the nodes with CPUs and memory
    /// when that differs from all (memory-only nodes present) and has two or
    /// more; `weighted` when the kernel has it and there are two or more
    /// memory nodes.
    pub fn all_policies(&self) -> Vec<Policy> {
        let mut out = vec![Policy::Default];
        let cpu_nodes = self.usable_cpu_nodes();
        let mem_nodes = self.usable_mem_nodes();
        let both: Vec<u32> = cpu_nodes.iter().copied().filter(|n| mem_nodes.contains(n)).collect();
        out.extend(both.iter().map(|&n| Policy::Local(n)));
        let home = both.first().or(cpu_nodes.first()).copied();
        if let Some(a) = home {
            out.extend(
                mem_nodes.iter().filter(|&&b| b != a).map(|&b| Policy::Remote { cpu: a, mem: b }),
            );
            if mem_nodes.len() >= 2 {
                out.push(Policy::CpusOnly(a));
            }
        }
        if mem_nodes.len() >= 2 {
            out.push(Policy::Interleave(None));
            if both.len() >= 2 && both.len() < mem_nodes.len() {
                out.push(Policy::Interleave(Some(both.iter().copied().collect())));
            }
            if self.weighted_interleave {
                out.push(Policy::Weighted(None));
            }
        }
        out
    }
}

fn meminfo_total_kib(text: &str) -> Option<u64> {
    // "Node 0 MemTotal:       32768000 kB"
    text.lines().find_map(|l| {
        let rest = &l[l.find("MemTotal:")? + "MemTotal:".len()..];
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// `Cpus_allowed_list` and `Mems_allowed_list` from `/proc/self/status`.
pub fn allowed_from_status(text: &str) -> (Option<CpuSet>, Option<NodeSet>) {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| IdSet::parse_list(v.trim()).ok())
    };
    (get("Cpus_allowed_list:"), get("Mems_allowed_list:"))
}

/// How memory is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemMode {
    /// `MPOL_BIND`: only these nodes.
    Bind,
    /// `MPOL_INTERLEAVE`: round-robin page by page.
    Interleave,
    /// `MPOL_WEIGHTED_INTERLEAVE`: round-robin by the kernel's node weights.
    WeightedInterleave,
}

impl MemMode {
    /// The `set_mempolicy` mode number.
    pub fn mpol(self) -> i32 {
        match self {
            MemMode::Bind => 2,
            MemMode::Interleave => 3,
            MemMode::WeightedInterleave => 6,
        }
    }
}

/// The masks a policy resolves to on one machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// CPUs the child may run on (`None`: unchanged).
    pub cpus: Option<CpuSet>,
    /// Memory policy and its nodes (`None`: unchanged).
    pub mem: Option<(MemMode, NodeSet)>,
}

impl Placement {
    /// What the placement does, for tables and JSON: "cpus 0-3, bind 1".
    pub fn describe(&self) -> String {
        let cpus = self.cpus.as_ref().map(|c| format!("cpus {c}"));
        let mem = self.mem.as_ref().map(|(m, n)| {
            let mode = match m {
                MemMode::Bind => "bind",
                MemMode::Interleave => "interleave",
                MemMode::WeightedInterleave => "weighted-interleave",
            };
            format!("{mode} {n}")
        });
        match (cpus, mem) {
            (None, None) => "unchanged".into(),
            (Some(c), None) => c,
            (None, Some(m)) => m,
            (Some(c), Some(m)) => format!("{c}, {m}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> IdSet {
        IdSet::parse_list(s).unwrap()
    }

    fn machine(nodes: &[(u32, &str, bool)], weighted: bool) -> Machine {
        Machine {
            nodes: nodes
                .iter()
                .map(|&(id, cpus, mem)| MachineNode { id, cpus: set(cpus), has_memory: mem })
                .collect(),
            allowed_cpus: None,
            allowed_mems: None,
            weighted_interleave: weighted,
        }
    }

    fn names(ps: &[Policy]) -> Vec<String> {
        ps.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn policies_round_trip_through_their_names() {
        for s in [
            "default",
            "local:0",
            "remote:0/1",
            "interleave",
            "interleave:0-1",
            "weighted",
            "weighted:0,2",
            "cpus-only:3",
        ] {
            let p: Policy = s.parse().unwrap();
            assert_eq!(p.to_string().parse::<Policy>().unwrap(), p, "{s}");
        }
        assert_eq!("remote:1/0".parse::<Policy>().unwrap(), Policy::Remote { cpu: 1, mem: 0 });
        assert_eq!("interleave:0,2".parse::<Policy>().unwrap().to_string(), "interleave:0,2");
    }

    #[test]
    fn bad_policies_are_named_in_the_error() {
        for (s, want) in [
            ("local", "needs a node"),
            ("local:x", "'x' is not a node number"),
            ("remote:0", "remote:CPU_NODE/MEM_NODE"),
            ("remote:0/", "not a node number"),
            ("interleave:", "interleave:"),
            ("bogus:1", "unknown policy 'bogus:1'"),
            ("default:1", "takes no argument"),
        ] {
            let err = s.parse::<Policy>().unwrap_err().to_string();
            assert!(err.contains(want), "{s}: {err}");
        }
    }

    #[test]
    fn lists_keep_commas_inside_interleave_node_lists() {
        let items = parse_list("default,interleave:0,1,local:0,weighted:0,2-3,all").unwrap();
        assert_eq!(
            items,
            vec![
                PolicyItem::One(Policy::Default),
                PolicyItem::One(Policy::Interleave(Some(set("0-1")))),
                PolicyItem::One(Policy::Local(0)),
                PolicyItem::One(Policy::Weighted(Some(set("0,2-3")))),
                PolicyItem::All,
            ]
        );
        assert!(parse_list("local:0,,default").unwrap_err().to_string().contains("empty entry"));
        // a bare number after a non-list policy is an error, not a continuation
        assert!(parse_list("local:0,1").is_err());
    }

    #[test]
    fn interleave_sets_take_numactl_syntax() {
        let m = machine(&[(0, "0-3", true), (1, "4-7", true), (2, "", true)], true);
        let expand = |s: &str| names(&m.expand(&parse_list(s).unwrap()).unwrap());
        assert_eq!(expand("interleave:all"), ["interleave"]);
        assert_eq!(expand("interleave:all,interleave"), ["interleave"], "all is the default set");
        assert_eq!(expand("interleave:!0"), ["interleave:1-2"]);
        assert_eq!(expand("weighted:+0-1,interleave:!1,2"), ["weighted:0-1", "interleave:0"]);
        let err = m.expand(&parse_list("interleave:+7").unwrap()).unwrap_err();
        assert!(err.is_usage() && err.to_string().contains("relative index 7"), "{err}");
        let err = m.expand(&parse_list("interleave:!0-2").unwrap()).unwrap_err();
        assert!(err.to_string().contains("selects no memory node"), "{err}");
        let err = parse_list("interleave:!x").unwrap_err().to_string();
        assert!(err.contains("'interleave:!x'") && err.contains("bad node set"), "{err}");
    }

    #[test]
    fn all_on_two_nodes() {
        let m = machine(&[(0, "0-3", true), (1, "4-7", true)], true);
        assert_eq!(
            names(&m.all_policies()),
            [
                "default",
                "local:0",
                "local:1",
                "remote:0/1",
                "cpus-only:0",
                "interleave",
                "weighted"
            ]
        );
        let m = machine(&[(0, "0-3", true), (1, "4-7", true)], false);
        assert!(!names(&m.all_policies()).contains(&"weighted".to_string()));
    }

    #[test]
    fn all_with_a_memory_only_node() {
        // two sockets plus a CPU-less CXL/HBM node 2
        let m = machine(&[(0, "0-3", true), (1, "4-7", true), (2, "", true)], false);
        assert_eq!(
            names(&m.all_policies()),
            [
                "default",
                "local:0",
                "local:1",
                "remote:0/1",
                "remote:0/2",
                "cpus-only:0",
                "interleave",
                "interleave:0-1"
            ]
        );
        let err = m.placement(&Policy::Local(2)).unwrap_err().to_string();
        assert!(err.contains("node 2 has no CPUs"), "{err}");
        let p = m.placement(&Policy::Remote { cpu: 1, mem: 2 }).unwrap();
        assert_eq!(p.cpus, Some(set("4-7")));
        assert_eq!(p.mem, Some((MemMode::Bind, set("2"))));
    }

    #[test]
    fn all_on_four_nodes_and_on_one() {
        let m = machine(
            &[(0, "0-1", true), (1, "2-3", true), (2, "4-5", true), (3, "6-7", true)],
            true,
        );
        assert_eq!(
            names(&m.all_policies()),
            [
                "default",
                "local:0",
                "local:1",
                "local:2",
                "local:3",
                "remote:0/1",
                "remote:0/2",
                "remote:0/3",
                "cpus-only:0",
                "interleave",
                "weighted"
            ]
        );
        let one = machine(&[(0, "0-1", true)], true);
        assert_eq!(names(&one.all_policies()), ["default", "local:0"]);
    }

    #[test]
    fn all_respects_what_the_process_may_use() {
        let mut m = machine(&[(0, "0-3", true), (1, "4-7", true)], false);
        m.allowed_cpus = Some(set("4-5"));
        m.allowed_mems = Some(set("1"));
        assert_eq!(names(&m.all_policies()), ["default", "local:1"]);
        let err = m.placement(&Policy::Local(0)).unwrap_err().to_string();
        assert!(err.contains("outside the CPUs this process may use (4-5)"), "{err}");
        let err = m.placement(&Policy::Remote { cpu: 1, mem: 0 }).unwrap_err().to_string();
        assert!(err.contains("node 0 is outside the memory nodes"), "{err}");
        // the CPU mask is narrowed to what is allowed
        assert_eq!(m.placement(&Policy::CpusOnly(1)).unwrap().cpus, Some(set("4-5")));
    }

    #[test]
    fn placements_and_refusals() {
        let m = machine(&[(0, "0-3", true), (1, "4-7", true), (2, "8-9", false)], false);
        assert_eq!(
            m.placement(&Policy::Interleave(None)).unwrap().mem,
            Some((MemMode::Interleave, set("0-1")))
        );
        assert!(m
            .placement(&Policy::Local(7))
            .unwrap_err()
            .to_string()
            .contains("node 7 does not exist (nodes: 0-2)"));
        assert!(m
            .placement(&Policy::Local(2))
            .unwrap_err()
            .to_string()
            .contains("node 2 has no memory"));
        assert!(m
            .placement(&Policy::Interleave(Some(set("0,2"))))
            .unwrap_err()
            .to_string()
            .contains("node 2 has no memory"));
        assert!(m
            .placement(&Policy::Weighted(None))
            .unwrap_err()
            .to_string()
            .contains("no weighted interleave"));
        assert_eq!(m.placement(&Policy::Default).unwrap().describe(), "unchanged");
        assert_eq!(
            m.placement(&Policy::Remote { cpu: 0, mem: 1 }).unwrap().describe(),
            "cpus 0-3, bind 1"
        );
    }

    #[test]
    fn expand_drops_duplicates_keeping_order() {
        let m = machine(&[(0, "0-3", true)], false);
        let items = parse_list("local:0,all,default").unwrap();
        assert_eq!(names(&m.expand(&items).unwrap()), ["local:0", "default"]);
    }

    #[test]
    fn from_a_synthetic_topology_with_a_cxl_node() {
        // two sockets, one node each, plus a CPU-less 64 GiB node 2
        let t = topo::synthetic::Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-3", 32 << 30)
            .node(1, "4-7", 32 << 30)
            .node(2, "", 64 << 30)
            .build();
        let m = Machine::from_topology(&t, Some(set("0-7")), Some(set("0-2")), true);
        assert_eq!(m.usable_cpu_nodes(), [0, 1]);
        assert_eq!(m.usable_mem_nodes(), [0, 1, 2]);
        assert_eq!(
            names(&m.all_policies()),
            [
                "default",
                "local:0",
                "local:1",
                "remote:0/1",
                "remote:0/2",
                "cpus-only:0",
                "interleave",
                "interleave:0-1",
                "weighted"
            ]
        );
    }

    #[test]
    fn reads_machine_from_a_sysfs_root() {
        let dir = std::env::temp_dir().join(format!("np-exec-machine-{}", std::process::id()));
        let n = dir.join("sys/devices/system/node");
        for (id, cpus, mem) in [(0, "0-1\n", 1024u64), (1, "\n", 2048)] {
            std::fs::create_dir_all(n.join(format!("node{id}"))).unwrap();
            std::fs::write(n.join(format!("node{id}/cpulist")), cpus).unwrap();
            std::fs::write(
                n.join(format!("node{id}/meminfo")),
                format!("Node {id} MemTotal:       {mem} kB\nNode {id} MemFree: 1 kB\n"),
            )
            .unwrap();
        }
        std::fs::create_dir_all(dir.join("proc/self")).unwrap();
        std::fs::write(
            dir.join("proc/self/status"),
            "Name:\tx\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0-1\n",
        )
        .unwrap();
        let m = Machine::read(&SysRoot::new(&dir).unwrap()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(m.nodes.len(), 2);
        assert_eq!(m.nodes[1].cpus, CpuSet::new());
        assert!(m.nodes[1].has_memory);
        assert_eq!(m.allowed_mems, Some(set("0-1")));
        assert!(!m.weighted_interleave);
        assert_eq!(
            names(&m.all_policies()),
            ["default", "local:0", "remote:0/1", "cpus-only:0", "interleave"]
        );
    }
}
