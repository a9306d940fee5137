//! The scope a figure was measured at when it is a package's, not one
//! node's: which package's CPUs ran, whose memory they used, over which
//! nodes and how the pages were placed (`scope` on a bandwidth result or a
//! chase of mode `package`); and the note `run` stores for a package-scope
//! step it did not measure (kind `step`), so that a reader knows why a
//! run's package figures are missing.
//!
//! A package's figure is measured with all of its CPUs at once: what the
//! package moves is bound by its cores' outstanding misses, its channels
//! and the socket link together, so the cells of a matrix, each measured
//! alone, do not add up to it.

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet};

/// Whose memory a package-scope figure used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryOf {
    /// The package's own DRAM: the nodes whose CPUs are all on the
    /// package and that hold memory (memory-only nodes, CXL or HBM, are
    /// never a package's own DRAM here).
    OwnPackage,
    /// Another package's own DRAM, across the socket link.
    OtherPackage,
}

impl MemoryOf {
    pub fn name(self) -> &'static str {
        match self {
            MemoryOf::OwnPackage => "own-package",
            MemoryOf::OtherPackage => "other-package",
        }
    }
}

/// How a package-scope figure's pages were placed over its memory nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScopePolicy {
    /// Each thread's pages bound to its own node, every node of the
    /// package at once (`MPOL_BIND` per thread's chunk).
    BindPerNode,
    /// Pages interleaved over the memory nodes (`MPOL_INTERLEAVE`).
    Interleave,
    /// The OS shows one node for several packages (NUMA off in the
    /// firmware, `numa=off`): the pages are on the memory the OS gives,
    /// which no policy can keep on one package.
    OsGiven,
}

impl ScopePolicy {
    pub fn name(self) -> &'static str {
        match self {
            ScopePolicy::BindPerNode => "bind-per-node",
            ScopePolicy::Interleave => "interleave",
            ScopePolicy::OsGiven => "os-given",
        }
    }

    /// The policy in words, for plans and tables.
    pub fn describe(self) -> &'static str {
        match self {
            ScopePolicy::BindPerNode => "bound per node, every node at once",
            ScopePolicy::Interleave => "interleaved over the nodes",
            ScopePolicy::OsGiven => "on the memory the OS gives (NUMA off: one OS node)",
        }
    }
}

/// Where a package-scope figure was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// The package whose CPUs ran (its `physical_package_id`).
    pub package: u32,
    /// Whose memory they used.
    pub memory: MemoryOf,
    /// The package whose nodes held the memory (`package` itself for
    /// `own-package`).
    pub mem_package: u32,
    pub policy: ScopePolicy,
    /// The CPUs that ran: every usable CPU of the package for bandwidth,
    /// the one chasing CPU for latency.
    pub cpus: CpuSet,
    /// The OS nodes of those CPUs.
    pub cpu_nodes: NodeSet,
    /// The nodes the pages were placed on (interleaved over, or bound to
    /// per thread).
    pub mem_nodes: NodeSet,
}

impl Scope {
    /// True when the OS showed one node for several packages: the
    /// figure is the package's CPUs on whatever memory the OS gave.
    pub fn numa_off(&self) -> bool {
        self.policy == ScopePolicy::OsGiven
    }

    /// `package 0's CPUs 0-19 on package 1's nodes 2-3, interleaved over
    /// the nodes`.
    pub fn describe(&self) -> String {
        let whose = match self.memory {
            MemoryOf::OwnPackage => "its own".to_string(),
            MemoryOf::OtherPackage => format!("package {}'s", self.mem_package),
        };
        format!(
            "package {}'s CPUs {} on {whose} node(s) {}, {}",
            self.package,
            self.cpus,
            self.mem_nodes,
            self.policy.describe()
        )
    }
}

/// What became of a planned step that measured nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    /// Not run: this machine cannot run it, `--only`/`--skip` left it
    /// out, or the run was interrupted before it.
    Skipped,
    /// Run, and it failed.
    Failed,
}

impl StepStatus {
    pub fn name(self) -> &'static str {
        match self {
            StepStatus::Skipped => "skipped",
            StepStatus::Failed => "failed",
        }
    }
}

/// A package-scope step of `run` that measured nothing, and why (kind
/// `step`): stored so that a study can say why a run's package figures
/// are derived from cells instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepNote {
    /// The step as `run --only/--skip` name it (`bw-package`).
    pub step: String,
    pub status: StepStatus,
    /// Why, in the user's words (the error chain of a failed step).
    pub reason: String,
}

impl StepNote {
    /// `bw-package skipped: one package`.
    pub fn text(&self) -> String {
        format!("{} {}: {}", self.step, self.status.name(), self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_stored_ones() {
        for p in [ScopePolicy::BindPerNode, ScopePolicy::Interleave, ScopePolicy::OsGiven] {
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        for m in [MemoryOf::OwnPackage, MemoryOf::OtherPackage] {
            assert_eq!(serde_json::to_value(m).unwrap(), m.name());
        }
        for s in [StepStatus::Skipped, StepStatus::Failed] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
        }
    }

    #[test]
    fn a_scope_says_whose_memory_and_how() {
        let s = Scope {
            package: 0,
            memory: MemoryOf::OtherPackage,
            mem_package: 1,
            policy: ScopePolicy::Interleave,
            cpus: CpuSet::parse_list("0-3").unwrap(),
            cpu_nodes: NodeSet::parse_list("0-1").unwrap(),
            mem_nodes: NodeSet::parse_list("2-3").unwrap(),
        };
        assert_eq!(
            s.describe(),
            "package 0's CPUs 0-3 on package 1's node(s) 2-3, interleaved over the nodes"
        );
        assert!(!s.numa_off());
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["cpus"], "0-3");
        assert_eq!(v["mem_nodes"], "2-3");
        assert_eq!(serde_json::from_value::<Scope>(v).unwrap(), s);
    }
}

#[cfg(test)]
mod stored {
    use crate::lat::Lat;
    use crate::Record;
    use serde_json::{json, Value};

    /// A bandwidth result of `run`'s `bw-package` step as the store keeps
    /// it (the example of docs/store.md's record shapes).
    fn bw_package() -> Value {
        json!({
            "mode": "package", "kernel": "triad", "threads": 4, "cpus": "0-3",
            "cpu_node": null, "mem_node": null, "mem_nodes": "0-1",
            "policy": "local-per-thread", "array_bytes": 268435456, "arrays": 3,
            "bytes_per_rep": 805306368, "best_gbs": 182.4, "median_gbs": 180.9,
            "min_gbs": 176.2, "max_gbs": 182.4, "mean_gbs": 180.1, "spread_pct": 3.4,
            "top_spread_pct": 0.6, "stable": true, "reps": 9, "median_rep_s": 0.00445,
            "placement": {"status": "verified", "check": {"expected": "0-1", "fraction": 1.0,
                "per_node": {"0": 0.5, "1": 0.5}, "sampled_pages": 4096, "total_pages": 196608,
                "not_present_pages": 0, "threshold": 0.99, "ok": true, "spread": null}},
            "isa": "avx2", "stores": "nt", "pages": "thp", "llc_bytes": 62914560,
            "size_rule_ok": true, "peak_gbs": null, "peak_fraction": null, "validated": true,
            "interrupted": false,
            "scope": {"package": 0, "memory": "own-package", "mem_package": 0,
                "policy": "bind-per-node", "cpus": "0-3", "cpu_nodes": "0-1", "mem_nodes": "0-1"}
        })
    }

    /// A chase of `run`'s `lat-package` step as the store keeps it.
    fn lat_package() -> Value {
        json!({
            "mode": "package", "size_bytes": 536870912, "cpu": 0, "cpu_node": 0,
            "mem_node": null, "median_ns": 141.2, "p50_ns": 141.2, "p90_ns": 143.0,
            "p99_ns": 144.9, "min_ns": 139.8, "max_ns": 145.1, "spread_pct": 3.8,
            "noise_pct": 0.9, "samples": 7, "loads_per_sample": 60000, "stride_bytes": 256,
            "tlb_group_bytes": 262144, "page_size": "4k",
            "placement": {"status": "verified", "check": {"expected": "2-3", "fraction": 1.0,
                "per_node": {"2": 0.5, "3": 0.5}, "sampled_pages": 4096, "total_pages": 131072,
                "not_present_pages": 0, "threshold": 0.99, "ok": true,
                "spread": {"expected_share": {"2": 0.5, "3": 0.5}, "max_deviation": 0.0,
                    "tolerance": 0.05, "ok": true}}},
            "stable": true, "interleave": "2-3",
            "scope": {"package": 0, "memory": "other-package", "mem_package": 1,
                "policy": "interleave", "cpus": "0", "cpu_nodes": "0", "mem_nodes": "2-3"}
        })
    }

    /// Package-scope records read back as themselves (nothing upgraded),
    /// carrying their scope; a step note too.
    #[test]
    fn package_scope_records_read_back_as_stored() {
        let up = crate::upgrade::read("bw", &bw_package());
        assert_eq!(up.as_stored, None, "read as today's shape");
        let Record::Bw(b) = up.record else { panic!("not bw") };
        assert_eq!(b.mode, crate::bw::Mode::Package);
        let s = b.scope.as_ref().expect("scope");
        assert_eq!((s.package, s.policy), (0, super::ScopePolicy::BindPerNode));
        assert_eq!(Record::Bw(b).to_json(), bw_package());
        let up = crate::upgrade::read("lat", &lat_package());
        assert_eq!(up.as_stored, None, "read as today's shape");
        let Record::Lat(l) = &up.record else { panic!("not lat") };
        let Lat::Chase(c) = l.as_ref() else { panic!("not a chase") };
        assert_eq!(c.scope.as_ref().map(|s| s.memory), Some(super::MemoryOf::OtherPackage));
        let note = json!({"step": "bw-cross-package", "status": "skipped",
            "reason": "left out by --skip"});
        let up = crate::upgrade::read("step", &note);
        assert_eq!(up.as_stored, None);
        assert_eq!(up.record.kind(), "step");
        assert_eq!(up.record.to_json(), note);
    }

    /// Every other record writes no `scope` key: stored JSON of older
    /// kinds is unchanged.
    #[test]
    fn records_without_a_scope_write_none() {
        let mut v = bw_package();
        v.as_object_mut().unwrap().remove("scope");
        v["mode"] = json!("global");
        let r = crate::upgrade::read("bw", &v).record;
        assert!(r.to_json().get("scope").is_none());
        let mut l = lat_package();
        l.as_object_mut().unwrap().remove("scope");
        l["mode"] = json!("point");
        let r = crate::upgrade::read("lat", &l).record;
        assert!(r.to_json().get("scope").is_none());
    }
}
