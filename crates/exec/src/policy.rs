//! Placement policies for `exec`: their names, parsing, the `all` expansion
//! for a machine, and their resolution, through the placement layer's
//! checks, into the [`ChildPlacement`] the child applies before `exec`.

use std::fmt;
use std::str::FromStr;

use place::{Allowed, ChildPlacement, MemPolicy, PlaceError, SetSpec};
use topo::{NodeSet, SysRoot, Topology};

use crate::ExecError;

/// One placement to run the command under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacementPolicy {
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

impl fmt::Display for PlacementPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlacementPolicy::Default => f.write_str("default"),
            PlacementPolicy::Local(n) => write!(f, "local:{n}"),
            PlacementPolicy::Remote { cpu, mem } => write!(f, "remote:{cpu}/{mem}"),
            PlacementPolicy::Interleave(None) => f.write_str("interleave"),
            PlacementPolicy::Interleave(Some(s)) => write!(f, "interleave:{}", s.to_list()),
            PlacementPolicy::Weighted(None) => f.write_str("weighted"),
            PlacementPolicy::Weighted(Some(s)) => write!(f, "weighted:{}", s.to_list()),
            PlacementPolicy::CpusOnly(n) => write!(f, "cpus-only:{n}"),
        }
    }
}

/// Why a policy, or a list of them, was refused: the policy as written
/// (`policy`), the part at fault, for the front end to word against its
/// own flags.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyRefusal {
    /// No policy to run.
    #[error("list is empty")]
    EmptyList,
    /// A list with an empty entry (`local:0,,default`): the whole list.
    #[error("empty entry in policy list '{list}'")]
    EmptyEntry { list: String },
    /// `local`, `cpus-only` or `remote` without its node.
    #[error("'{policy}' needs a node, e.g. {policy}:0")]
    NeedsNode { policy: String },
    /// A node that is not a number.
    #[error("'{policy}': '{part}' is not a node number")]
    NotANode { policy: String, part: String },
    /// `remote:` without `CPU_NODE/MEM_NODE`.
    #[error("'{policy}': expected remote:CPU_NODE/MEM_NODE")]
    RemoteWithoutSlash { policy: String },
    /// A node set that cannot be read; `why`: the placement layer's words.
    #[error("'{policy}': bad node set: {why}")]
    BadSet { policy: String, why: String },
    /// A node set relative to this machine's nodes (`!LIST`, `+LIST`)
    /// where a policy is read alone: only a list ([`parse_list`]) takes
    /// one, resolved by [`Scope::expand`].
    #[error(
        "'{policy}': '{part}' is relative to this machine's nodes; only a policy list takes it"
    )]
    Relative { policy: String, part: String },
    /// `default` with an argument.
    #[error("'{policy}': default takes no argument")]
    DefaultTakesNone { policy: String },
    /// Not a policy's name.
    #[error(
        "unknown policy '{policy}' (known: default, local:N, remote:A/B, interleave[:LIST], \
         weighted[:LIST], cpus-only:N, all)"
    )]
    Unknown { policy: String },
}

fn refused(r: PolicyRefusal) -> ExecError {
    ExecError::BadPolicy(r)
}

fn node_id(text: &str, whole: &str) -> Result<u32, ExecError> {
    text.trim().parse().map_err(|_| {
        refused(PolicyRefusal::NotANode { policy: whole.to_string(), part: text.to_string() })
    })
}

/// The node set of `interleave:SET`/`weighted:SET` in numactl's syntax
/// (see `place::spec`): `all` is `None` (every usable memory node), a list
/// is itself; `!LIST` and `+LIST` depend on the machine, so they are only
/// taken in a policy list ([`parse_list`], resolved by [`Scope::expand`]).
fn node_set(text: &str, whole: &str) -> Result<Option<NodeSet>, ExecError> {
    match SetSpec::parse(text) {
        Ok(SetSpec::All) => Ok(None),
        Ok(SetSpec::List(set)) => Ok(Some(set)),
        Ok(_) => Err(refused(PolicyRefusal::Relative {
            policy: whole.to_string(),
            part: text.to_string(),
        })),
        Err(e) => Err(bad_set(whole, e)),
    }
}

fn bad_set(policy: &str, e: PlaceError) -> ExecError {
    refused(PolicyRefusal::BadSet { policy: policy.to_string(), why: e.to_string() })
}

impl FromStr for PlacementPolicy {
    type Err = ExecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (name, arg) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        match (name, arg) {
            ("default", None) => Ok(PlacementPolicy::Default),
            ("local", Some(a)) => Ok(PlacementPolicy::Local(node_id(a, s)?)),
            ("cpus-only", Some(a)) => Ok(PlacementPolicy::CpusOnly(node_id(a, s)?)),
            ("remote", Some(a)) => {
                let (c, m) = a.split_once('/').ok_or_else(|| {
                    refused(PolicyRefusal::RemoteWithoutSlash { policy: s.to_string() })
                })?;
                Ok(PlacementPolicy::Remote { cpu: node_id(c, s)?, mem: node_id(m, s)? })
            }
            ("interleave", None) => Ok(PlacementPolicy::Interleave(None)),
            ("interleave", Some(a)) => Ok(PlacementPolicy::Interleave(node_set(a, s)?)),
            ("weighted", None) => Ok(PlacementPolicy::Weighted(None)),
            ("weighted", Some(a)) => Ok(PlacementPolicy::Weighted(node_set(a, s)?)),
            ("local" | "cpus-only" | "remote", None) => {
                Err(refused(PolicyRefusal::NeedsNode { policy: s.to_string() }))
            }
            ("default", Some(_)) => {
                Err(refused(PolicyRefusal::DefaultTakesNone { policy: s.to_string() }))
            }
            _ => Err(refused(PolicyRefusal::Unknown { policy: s.to_string() })),
        }
    }
}

/// A policy list as the user wrote it: policies or `all`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyItem {
    All,
    One(PlacementPolicy),
    /// `interleave:!LIST`, `interleave:+LIST` (and `weighted:`): a node set
    /// relative to the usable memory nodes, resolved by [`Scope::expand`].
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
            return Err(refused(PolicyRefusal::EmptyEntry { list: text.to_string() }));
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
                    let spec = SetSpec::parse(arg).map_err(|e| bad_set(p, e))?;
                    return Ok(PolicyItem::Within { weighted, spec, text: p.clone() });
                }
            }
            p.parse().map(PolicyItem::One)
        })
        .collect()
}

/// What `exec` may use on this machine: the topology [`topo`] discovered,
/// the CPUs and memory nodes this process is allowed ([`place::Allowed`]),
/// and the root whose kernel features (weighted interleave) decide what
/// the kernel can do. Every check is the placement layer's.
#[derive(Debug, Clone)]
pub struct Scope {
    pub topology: Topology,
    pub allowed: Allowed,
    pub root: SysRoot,
}

impl Scope {
    pub fn new(topology: Topology, allowed: Allowed, root: SysRoot) -> Self {
        Scope { topology, allowed, root }
    }

    /// Discovers the topology and reads what this process may use under
    /// `root` (the live machine: [`SysRoot::live`]).
    pub fn read(root: &SysRoot) -> Result<Self, ExecError> {
        let topology = Topology::discover(root)?;
        let allowed = Allowed::current(root)?;
        Ok(Scope { topology, allowed, root: root.clone() })
    }

    /// The kernel offers `MPOL_WEIGHTED_INTERLEAVE` (Linux 6.9+).
    pub fn weighted_interleave(&self) -> bool {
        place::policy::supports_weighted_interleave(&self.root)
    }

    /// Nodes whose CPUs this process may use.
    pub fn usable_cpu_nodes(&self) -> Vec<u32> {
        self.allowed.cpu_nodes(&self.topology).iter().collect()
    }

    /// Nodes with memory this process may allocate on.
    pub fn usable_mem_nodes(&self) -> Vec<u32> {
        self.allowed.memory_nodes(&self.topology).iter().collect()
    }

    fn interleave_set(&self, set: &Option<NodeSet>) -> Result<NodeSet, PlaceError> {
        match set {
            Some(s) => self.allowed.check_mem_nodes(s, &self.topology).map(|()| s.clone()),
            None => {
                let all = self.allowed.memory_nodes(&self.topology);
                if all.is_empty() {
                    return Err(PlaceError::NodeNotAllowed {
                        asked: self.topology.memory_nodes().map(|n| n.id).collect(),
                        allowed: self.allowed.mems.clone(),
                    });
                }
                Ok(all)
            }
        }
    }

    fn resolve(&self, policy: &PlacementPolicy) -> Result<Option<ChildPlacement>, PlaceError> {
        let (a, t) = (&self.allowed, &self.topology);
        let one = |n: u32| -> NodeSet { [n].into_iter().collect() };
        Ok(Some(match policy {
            PlacementPolicy::Default => return Ok(None),
            PlacementPolicy::Local(n) => {
                let cpus = a.check_cpu_node(*n, t)?;
                a.check_mem_nodes(&one(*n), t)?;
                ChildPlacement { cpus: Some(cpus), policy: MemPolicy::Bind(one(*n)) }
            }
            PlacementPolicy::Remote { cpu, mem } => {
                let cpus = a.check_cpu_node(*cpu, t)?;
                a.check_mem_nodes(&one(*mem), t)?;
                ChildPlacement { cpus: Some(cpus), policy: MemPolicy::Bind(one(*mem)) }
            }
            PlacementPolicy::CpusOnly(n) => {
                ChildPlacement { cpus: Some(a.check_cpu_node(*n, t)?), policy: MemPolicy::Default }
            }
            PlacementPolicy::Interleave(set) => ChildPlacement {
                cpus: None,
                policy: MemPolicy::Interleave(self.interleave_set(set)?),
            },
            PlacementPolicy::Weighted(set) => {
                let policy = MemPolicy::WeightedInterleave(self.interleave_set(set)?);
                place::policy::ensure_supported(&policy, &self.root)?;
                ChildPlacement { cpus: None, policy }
            }
        }))
    }

    /// Checks `policy` against this machine and what the process may use
    /// (the placement layer's [`Allowed`] checks) and returns what the
    /// child applies: `None` for `default`, which leaves everything
    /// inherited. A refusal names the policy and keeps the placement
    /// layer's error as its source.
    pub fn placement(&self, policy: &PlacementPolicy) -> Result<Option<ChildPlacement>, ExecError> {
        self.resolve(policy)
            .map_err(|source| ExecError::Placement { policy: policy.to_string(), source })
    }

    /// Expands a parsed list: `all` becomes [`Scope::all_policies`],
    /// `interleave:!LIST`/`+LIST` their nodes among the usable memory nodes
    /// (refused when that selects none); duplicates are dropped, first
    /// occurrence kept.
    pub fn expand(&self, items: &[PolicyItem]) -> Result<Vec<PlacementPolicy>, ExecError> {
        let mut out: Vec<PlacementPolicy> = Vec::new();
        for item in items {
            let add = match item {
                PolicyItem::All => self.all_policies(),
                PolicyItem::One(p) => vec![p.clone()],
                PolicyItem::Within { weighted, spec, text } => {
                    let usable = self.allowed.memory_nodes(&self.topology);
                    let set = spec
                        .resolve(&usable, "memory node")
                        .map_err(|source| ExecError::Placement { policy: text.clone(), source })?;
                    vec![if *weighted {
                        PlacementPolicy::Weighted(Some(set))
                    } else {
                        PlacementPolicy::Interleave(Some(set))
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
    pub fn all_policies(&self) -> Vec<PlacementPolicy> {
        let mut out = vec![PlacementPolicy::Default];
        let cpu_nodes = self.usable_cpu_nodes();
        let mem_nodes = self.usable_mem_nodes();
        let both: Vec<u32> = cpu_nodes.iter().copied().filter(|n| mem_nodes.contains(n)).collect();
        out.extend(both.iter().map(|&n| PlacementPolicy::Local(n)));
        let home = both.first().or(cpu_nodes.first()).copied();
        if let Some(a) = home {
            out.extend(
                mem_nodes
                    .iter()
                    .filter(|&&b| b != a)
                    .map(|&b| PlacementPolicy::Remote { cpu: a, mem: b }),
            );
            if mem_nodes.len() >= 2 {
                out.push(PlacementPolicy::CpusOnly(a));
            }
        }
        if mem_nodes.len() >= 2 {
            out.push(PlacementPolicy::Interleave(None));
            if both.len() >= 2 && both.len() < mem_nodes.len() {
                out.push(PlacementPolicy::Interleave(Some(both.iter().copied().collect())));
            }
            if self.weighted_interleave() {
                out.push(PlacementPolicy::Weighted(None));
            }
        }
        out
    }
}

impl Scope {
    /// What `all` leaves out on this machine and why, one sentence each
    /// (nothing on a machine where it runs every family): `remote:` and
    /// `cpus-only:` with one usable memory node, `interleave` with fewer
    /// than two, `weighted` without the kernel's weighted interleave, and
    /// `local:N` of a node this process may not use (its cpuset).
    pub fn skipped_by_all(&self) -> Vec<String> {
        let cpu_nodes = self.usable_cpu_nodes();
        let mem_nodes = self.usable_mem_nodes();
        let list = |v: &[u32]| v.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",");
        let mut out = Vec::new();
        let barred: Vec<u32> = self
            .topology
            .nodes
            .iter()
            .filter(|n| !n.cpus.is_empty() && n.mem_total_bytes > 0)
            .map(|n| n.id)
            .filter(|id| !(cpu_nodes.contains(id) && mem_nodes.contains(id)))
            .collect();
        if !barred.is_empty() {
            out.push(format!(
                "local:N for node(s) {}: this process may not use their CPUs or memory (its cpuset)",
                list(&barred)
            ));
        }
        if mem_nodes.len() < 2 {
            let why = format!(
                "this process may use one memory node ({})",
                if mem_nodes.is_empty() { "none".to_string() } else { list(&mem_nodes) }
            );
            out.push(format!(
                "remote:A/B and cpus-only:A: no other memory node to place on; {why}"
            ));
            out.push(format!("interleave and weighted: nothing to interleave over; {why}"));
        } else if !self.weighted_interleave() {
            out.push("weighted: this kernel has no weighted interleave (MPOL_WEIGHTED_INTERLEAVE, Linux 6.9+)".into());
        }
        out
    }
}

/// What a placement does, for tables and JSON: "cpus 0-3, bind 1";
/// "unchanged" for `default`.
pub fn describe(placement: Option<&ChildPlacement>) -> String {
    placement.map_or_else(|| "unchanged".into(), |p| p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use topo::{CpuSet, IdSet};

    fn set(s: &str) -> IdSet {
        IdSet::parse_list(s).unwrap()
    }

    /// A root with or without the weighted-interleave directory.
    fn root(weighted: bool) -> SysRoot {
        let dir =
            std::env::temp_dir().join(format!("np-exec-scope-{}-{weighted}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        if weighted {
            std::fs::create_dir_all(dir.join("sys/kernel/mm/mempolicy/weighted_interleave"))
                .unwrap();
        }
        SysRoot::new(&dir).unwrap()
    }

    /// Nodes as (id, cpulist, has memory), one package holding every CPU;
    /// this process may use everything.
    fn scope(nodes: &[(u32, &str, bool)], weighted: bool) -> Scope {
        let cpus = nodes.iter().fold(CpuSet::new(), |acc, (_, c, _)| acc.union(&set(c)));
        let mut m =
            topo::synthetic::Machine::new(topo::Vendor::Intel, "Xeon").package(0, &cpus.to_list());
        for &(id, c, mem) in nodes {
            m = m.node(id, c, if mem { 8 << 30 } else { 0 });
        }
        let topology = m.build();
        let allowed = Allowed { cpus, mems: topology.node_ids() };
        Scope::new(topology, allowed, root(weighted))
    }

    /// `all` says what it leaves out, and only what it leaves out.
    #[test]
    fn all_names_what_it_skipped_and_why() {
        let one = scope(&[(0, "0-3", true)], true);
        assert_eq!(names(&one.all_policies()), ["default", "local:0"]);
        let why = one.skipped_by_all().join("; ");
        assert!(why.contains("remote:A/B and cpus-only:A: no other memory node"), "{why}");
        assert!(why.contains("interleave and weighted: nothing to interleave over"), "{why}");
        assert!(why.contains("one memory node (0)"), "{why}");
        let no_weighted = scope(&[(0, "0-3", true), (1, "4-7", true)], false);
        assert_eq!(
            no_weighted.skipped_by_all(),
            ["weighted: this kernel has no weighted interleave (MPOL_WEIGHTED_INTERLEAVE, Linux 6.9+)"]
        );
        let everything = scope(&[(0, "0-3", true), (1, "4-7", true)], true);
        assert!(everything.skipped_by_all().is_empty());
        // a node this process may not use (its cpuset) is named
        let mut barred = scope(&[(0, "0-3", true), (1, "4-7", true)], true);
        barred.allowed.mems = [0u32].into_iter().collect();
        let why = barred.skipped_by_all().join("; ");
        assert!(why.contains("local:N for node(s) 1: this process may not use"), "{why}");
    }

    fn names(ps: &[PlacementPolicy]) -> Vec<String> {
        ps.iter().map(|p| p.to_string()).collect()
    }

    fn refusal(s: &Scope, p: PlacementPolicy) -> String {
        let e = s.placement(&p).unwrap_err();
        let ExecError::Placement { policy, source } = &e else { panic!("{e}") };
        assert_eq!(policy, &p.to_string());
        source.to_string()
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
            let p: PlacementPolicy = s.parse().unwrap();
            assert_eq!(p.to_string().parse::<PlacementPolicy>().unwrap(), p, "{s}");
        }
        assert_eq!(
            "remote:1/0".parse::<PlacementPolicy>().unwrap(),
            PlacementPolicy::Remote { cpu: 1, mem: 0 }
        );
        assert_eq!(
            "interleave:0,2".parse::<PlacementPolicy>().unwrap().to_string(),
            "interleave:0,2"
        );
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
            let err = s.parse::<PlacementPolicy>().unwrap_err().to_string();
            assert!(err.contains(want), "{s}: {err}");
        }
        // a set relative to the machine's nodes is a list's: refused alone,
        // with the policy and the part at fault
        let Err(ExecError::BadPolicy(r)) = "weighted: +1".parse::<PlacementPolicy>() else {
            panic!("a relative set taken alone")
        };
        assert_eq!(
            r,
            PolicyRefusal::Relative { policy: "weighted: +1".into(), part: " +1".into() }
        );
    }

    #[test]
    fn lists_keep_commas_inside_interleave_node_lists() {
        let items = parse_list("default,interleave:0,1,local:0,weighted:0,2-3,all").unwrap();
        assert_eq!(
            items,
            vec![
                PolicyItem::One(PlacementPolicy::Default),
                PolicyItem::One(PlacementPolicy::Interleave(Some(set("0-1")))),
                PolicyItem::One(PlacementPolicy::Local(0)),
                PolicyItem::One(PlacementPolicy::Weighted(Some(set("0,2-3")))),
                PolicyItem::All,
            ]
        );
        assert!(parse_list("local:0,,default").unwrap_err().to_string().contains("empty entry"));
        // a bare number after a non-list policy is an error, not a continuation
        assert!(parse_list("local:0,1").is_err());
    }

    #[test]
    fn interleave_sets_take_numactl_syntax() {
        let m = scope(&[(0, "0-3", true), (1, "4-7", true), (2, "", true)], true);
        let expand = |s: &str| names(&m.expand(&parse_list(s).unwrap()).unwrap());
        assert_eq!(expand("interleave:all"), ["interleave"]);
        assert_eq!(expand("interleave:all,interleave"), ["interleave"], "all is the default set");
        assert_eq!(expand("interleave:!0"), ["interleave:1-2"]);
        assert_eq!(expand("weighted:+0-1,interleave:!1,2"), ["weighted:0-1", "interleave:0"]);
        let chain = |e: &ExecError| format!("{e}: {}", std::error::Error::source(e).unwrap());
        let err = m.expand(&parse_list("interleave:+7").unwrap()).unwrap_err();
        assert!(err.is_usage() && chain(&err).contains("relative index 7"), "{err}");
        let err = m.expand(&parse_list("interleave:!0-2").unwrap()).unwrap_err();
        assert!(chain(&err).contains("selects no memory node"), "{}", chain(&err));
        let err = parse_list("interleave:!x").unwrap_err().to_string();
        assert!(err.contains("'interleave:!x'") && err.contains("bad node set"), "{err}");
    }

    #[test]
    fn all_on_two_nodes() {
        let s = scope(&[(0, "0-3", true), (1, "4-7", true)], true);
        assert_eq!(
            names(&s.all_policies()),
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
        let s = scope(&[(0, "0-3", true), (1, "4-7", true)], false);
        assert!(!names(&s.all_policies()).contains(&"weighted".to_string()));
    }

    #[test]
    fn all_with_a_memory_only_node() {
        // two sockets plus a CPU-less CXL/HBM node 2
        let s = scope(&[(0, "0-3", true), (1, "4-7", true), (2, "", true)], false);
        assert_eq!(
            names(&s.all_policies()),
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
        let err = refusal(&s, PlacementPolicy::Local(2));
        assert!(err.contains("node(s) 2 have no CPUs"), "{err}");
        let p = s.placement(&PlacementPolicy::Remote { cpu: 1, mem: 2 }).unwrap().unwrap();
        assert_eq!(p.cpus, Some(set("4-7")));
        assert_eq!(p.policy, MemPolicy::Bind(set("2")));
    }

    #[test]
    fn all_on_four_nodes_and_on_one() {
        let s =
            scope(&[(0, "0-1", true), (1, "2-3", true), (2, "4-5", true), (3, "6-7", true)], true);
        assert_eq!(
            names(&s.all_policies()),
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
        let one = scope(&[(0, "0-1", true)], true);
        assert_eq!(names(&one.all_policies()), ["default", "local:0"]);
    }

    #[test]
    fn all_respects_what_the_process_may_use() {
        let mut s = scope(&[(0, "0-3", true), (1, "4-7", true)], false);
        s.allowed = Allowed { cpus: set("4-5"), mems: set("1") };
        assert_eq!(names(&s.all_policies()), ["default", "local:1"]);
        let err = refusal(&s, PlacementPolicy::Local(0));
        assert!(err.contains("CPU(s) 0-3 not allowed") && err.contains("(allowed CPUs: 4-5)"));
        let err = refusal(&s, PlacementPolicy::Remote { cpu: 1, mem: 0 });
        assert!(err.contains("node(s) 0 not allowed for this process's memory"), "{err}");
        // the CPU mask is narrowed to what is allowed
        let p = s.placement(&PlacementPolicy::CpusOnly(1)).unwrap().unwrap();
        assert_eq!((p.cpus, p.policy), (Some(set("4-5")), MemPolicy::Default));
        // nothing allowed to interleave over
        s.allowed.mems = set("5");
        let err = refusal(&s, PlacementPolicy::Interleave(None));
        assert!(err.contains("node(s) 0-1 not allowed") && err.contains("nodes: 5"), "{err}");
    }

    #[test]
    fn placements_and_refusals() {
        let s = scope(&[(0, "0-3", true), (1, "4-7", true), (2, "8-9", false)], false);
        let p = s.placement(&PlacementPolicy::Interleave(None)).unwrap().unwrap();
        assert_eq!((p.cpus, p.policy), (None, MemPolicy::Interleave(set("0-1"))));
        assert!(
            refusal(&s, PlacementPolicy::Local(7)).contains("node(s) 7 do not exist (nodes: 0-2)")
        );
        assert!(refusal(&s, PlacementPolicy::Local(2)).contains("node(s) 2 have no memory"));
        assert!(
            refusal(&s, PlacementPolicy::Interleave(Some(set("0,2")))).contains("2 have no memory")
        );
        let weighted = s.placement(&PlacementPolicy::Weighted(None)).unwrap_err();
        assert!(weighted.is_usage(), "{weighted}");
        let why = std::error::Error::source(&weighted).unwrap().to_string();
        assert!(why.contains("weighted interleave") && why.contains("Linux 6.9"), "{why}");
        assert_eq!(s.placement(&PlacementPolicy::Default).unwrap(), None);
        assert_eq!(describe(s.placement(&PlacementPolicy::Default).unwrap().as_ref()), "unchanged");
        let remote = s.placement(&PlacementPolicy::Remote { cpu: 0, mem: 1 }).unwrap();
        assert_eq!(describe(remote.as_ref()), "cpus 0-3, bind 1");
        let only = s.placement(&PlacementPolicy::CpusOnly(1)).unwrap();
        assert_eq!(describe(only.as_ref()), "cpus 4-7");
    }

    #[test]
    fn weighted_interleave_follows_the_kernel() {
        let s = scope(&[(0, "0-3", true), (1, "4-7", true)], true);
        let p = s.placement(&PlacementPolicy::Weighted(Some(set("0-1")))).unwrap().unwrap();
        assert_eq!(p.policy, MemPolicy::WeightedInterleave(set("0-1")));
        assert_eq!(describe(Some(&p)), "weighted-interleave 0-1");
    }

    #[test]
    fn expand_drops_duplicates_keeping_order() {
        let s = scope(&[(0, "0-3", true)], false);
        let items = parse_list("local:0,all,default").unwrap();
        assert_eq!(names(&s.expand(&items).unwrap()), ["local:0", "default"]);
    }
}
