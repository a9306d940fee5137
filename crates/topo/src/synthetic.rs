//! Small made-up machines for tests, here and in other crates: describe
//! packages, nodes, caches and a kernel command line, get a [`Topology`] as
//! discovery would have built it (kinds, CPU-to-node links, NUMA mode,
//! firmware warnings).
//!
//! ```
//! use topo::synthetic::Machine;
//! let t = Machine::new(topo::Vendor::Intel, "Intel(R) Xeon(R) Gold 6230")
//!     .package(0, "0-3")
//!     .package(1, "4-7")
//!     .node(0, "0-1", 8 << 30)
//!     .node(1, "2-3", 8 << 30)
//!     .node(2, "4-5", 8 << 30)
//!     .node(3, "6-7", 8 << 30)
//!     .build();
//! assert_eq!(t.numa_mode.label.as_deref(), Some("SNC2"));
//! ```

use crate::idset::{CpuSet, IdSet};
use crate::mode::{firmware_warnings, infer_mode};
use crate::model::*;
use crate::parse::parse_cmdline;
use crate::tiers::distance_tiers;

/// A machine under construction. Panics on malformed cpulists: it is for
/// tests.
#[derive(Debug, Clone)]
pub struct Machine {
    t: Topology,
    explicit_distances: bool,
}

fn set(s: &str) -> CpuSet {
    IdSet::parse_list(s).unwrap_or_else(|e| panic!("bad cpulist '{s}': {e}"))
}

impl Machine {
    pub fn new(vendor: Vendor, model: &str) -> Self {
        Machine {
            t: Topology {
                schema_version: SCHEMA_VERSION,
                root: "synthetic".into(),
                live: false,
                arch: Some("x86_64".into()),
                cpu_vendor: vendor,
                cpu_model: (!model.is_empty()).then(|| model.to_string()),
                cpu_family: None,
                kernel: None,
                online_cpus: CpuSet::new(),
                offline_cpus: CpuSet::new(),
                packages: Vec::new(),
                cpus: Vec::new(),
                caches: Vec::new(),
                nodes: Vec::new(),
                memory_tiers: Vec::new(),
                dax_devices: Vec::new(),
                cxl_regions: Vec::new(),
                memory_kinds: Vec::new(),
                firmware_numa: None,
                system_memory: None,
                devices: Vec::new(),
                cgroup: Cgroup { version: "none".into(), ..Cgroup::default() },
                cmdline: Cmdline { raw: Some(String::new()), options: Vec::new() },
                packages_unknown: false,
                distance_tiers: Vec::new(),
                numa_mode: crate::mode::undetermined(),
                warnings: Vec::new(),
            },
            explicit_distances: false,
        }
    }

    /// x86 `cpu family`.
    pub fn family(mut self, family: u32) -> Self {
        self.t.cpu_family = Some(family);
        self
    }

    /// A package holding `cpus`, one core per CPU, in one die.
    pub fn package(self, id: u32, cpus: &str) -> Self {
        self.package_dies(id, &[cpus])
    }

    /// A package made of dies, each holding the CPUs of one cpulist.
    pub fn package_dies(mut self, id: u32, dies: &[&str]) -> Self {
        let mut all = CpuSet::new();
        for (die, cpus) in dies.iter().enumerate() {
            for c in set(cpus).iter() {
                all.insert(c);
                self.t.cpus.push(Cpu {
                    id: c,
                    package: id,
                    die: Some(die as u32),
                    cluster: None,
                    core: c,
                    node: None,
                    thread_siblings: [c].into_iter().collect(),
                });
            }
        }
        self.t.online_cpus = self.t.online_cpus.union(&all);
        self.t.packages.push(Package {
            id,
            cpus: all,
            dies: (0..dies.len() as u32).collect(),
            nodes: IdSet::new(),
        });
        self
    }

    /// A NUMA node; `cpus` may be empty for a memory-only node.
    pub fn node(mut self, id: u32, cpus: &str, mem_total_bytes: u64) -> Self {
        let cpus = set(cpus);
        let kind = match (cpus.is_empty(), mem_total_bytes == 0) {
            (false, false) => NodeKind::CpuMemory,
            (true, false) => NodeKind::MemoryOnly,
            (false, true) => NodeKind::CpuOnly,
            (true, true) => NodeKind::Neither,
        };
        self.t.nodes.push(Node {
            id,
            cpus,
            mem_total_bytes,
            mem_free_bytes: mem_total_bytes / 2,
            distances: Vec::new(),
            kind,
            hugepages: Vec::new(),
            hmat: None,
            memory_side_caches: Vec::new(),
            memory_tier: None,
        });
        self
    }

    /// The SLIT, rows in node order (default: 10 local, 20 remote).
    pub fn distances(mut self, rows: &[&[u32]]) -> Self {
        for (n, row) in self.t.nodes.iter_mut().zip(rows) {
            n.distances = row.to_vec();
        }
        self.explicit_distances = true;
        self
    }

    /// Package ids unknown (`physical_package_id` -1 everywhere): the
    /// packages given stand for `core_siblings` groups.
    pub fn packages_unknown(mut self) -> Self {
        self.t.packages_unknown = true;
        self
    }

    /// A data/unified cache instance shared by `cpus`.
    pub fn cache(mut self, level: u8, size_bytes: u64, cpus: &str) -> Self {
        self.t.caches.push(Cache {
            level,
            kind: if level == 1 { CacheKind::Data } else { CacheKind::Unified },
            size_bytes,
            line_bytes: Some(64),
            cpus: set(cpus),
        });
        self
    }

    /// The kernel command line (`None` models a capture without one).
    pub fn cmdline(mut self, line: Option<&str>) -> Self {
        self.t.cmdline = match line {
            Some(l) => parse_cmdline(l),
            None => Cmdline::default(),
        };
        self
    }

    /// The firmware's ACPI SRAT/SLIT as discovery would have read them.
    pub fn firmware_numa(mut self, f: crate::acpi::FirmwareNuma) -> Self {
        self.t.firmware_numa = Some(f);
        self
    }

    /// Links CPUs to nodes, infers the mode and collects warnings.
    pub fn build(mut self) -> Topology {
        let t = &mut self.t;
        t.nodes.sort_by_key(|n| n.id);
        t.packages.sort_by_key(|p| p.id);
        t.cpus.sort_by_key(|c| c.id);
        if !self.explicit_distances {
            let k = t.nodes.len();
            for (i, n) in t.nodes.iter_mut().enumerate() {
                n.distances = (0..k).map(|j| if i == j { 10 } else { 20 }).collect();
            }
        }
        for c in &mut t.cpus {
            c.node = t.nodes.iter().find(|n| n.cpus.contains(c.id)).map(|n| n.id);
        }
        for p in &mut t.packages {
            for n in &t.nodes {
                if !n.cpus.is_disjoint(&p.cpus) {
                    p.nodes.insert(n.id);
                }
            }
        }
        t.warnings =
            firmware_warnings(&t.nodes, &t.online_cpus).into_iter().map(Warning::general).collect();
        t.distance_tiers = distance_tiers(&t.nodes);
        t.numa_mode = infer_mode(t);
        self.t
    }
}

/// ACPI tables built byte by byte as the specification lays them out
/// (header with length and checksum, then the structures), for tests of the
/// SRAT/SLIT readers ([`crate::acpi`]).
pub mod acpi {
    /// A table with `signature`, `revision` and `body` after the 36-byte
    /// header, its length and checksum filled in as the spec requires.
    pub fn table(signature: &str, revision: u8, body: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(signature.as_bytes());
        t.extend_from_slice(&((36 + body.len()) as u32).to_le_bytes());
        t.push(revision);
        t.push(0); // checksum, below
        t.extend_from_slice(b"NPROBE");
        t.extend_from_slice(b"TESTTBL ");
        t.extend_from_slice(&1u32.to_le_bytes());
        t.extend_from_slice(b"NPRB");
        t.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(t.len(), 36);
        t.extend_from_slice(body);
        let sum = t.iter().fold(0u8, |s, b| s.wrapping_add(*b));
        t[9] = 0u8.wrapping_sub(sum);
        t
    }

    /// The SRAT's reserved fields, then `structures`.
    pub fn srat(revision: u8, structures: &[Vec<u8>]) -> Vec<u8> {
        let mut body = 1u32.to_le_bytes().to_vec();
        body.extend_from_slice(&0u64.to_le_bytes());
        for s in structures {
            body.extend_from_slice(s);
        }
        table("SRAT", revision, &body)
    }

    /// Type 0: processor local APIC affinity (16 bytes).
    pub fn apic(domain: u32, apic_id: u8, enabled: bool) -> Vec<u8> {
        let mut s = vec![0u8, 16, domain as u8, apic_id];
        s.extend_from_slice(&u32::from(enabled).to_le_bytes());
        s.push(0); // SAPIC EID
        s.extend_from_slice(&(domain >> 8).to_le_bytes()[..3]);
        s.extend_from_slice(&0u32.to_le_bytes()); // clock domain
        s
    }

    /// Type 1: memory affinity (40 bytes); `flags` bit 0 enabled, 1
    /// hot-pluggable, 2 non-volatile.
    pub fn memory(domain: u32, base: u64, length: u64, flags: u32) -> Vec<u8> {
        let mut s = vec![1u8, 40];
        s.extend_from_slice(&domain.to_le_bytes());
        s.extend_from_slice(&[0, 0]);
        s.extend_from_slice(&base.to_le_bytes());
        s.extend_from_slice(&length.to_le_bytes());
        s.extend_from_slice(&0u32.to_le_bytes());
        s.extend_from_slice(&flags.to_le_bytes());
        s.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(s.len(), 40);
        s
    }

    /// A SLIT holding `rows`.
    pub fn slit(rows: &[&[u8]]) -> Vec<u8> {
        let mut body = (rows.len() as u64).to_le_bytes().to_vec();
        for r in rows {
            body.extend_from_slice(r);
        }
        table("SLIT", 1, &body)
    }
}
