//! Settings audit: OS, firmware and hardware settings checked against a
//! workload profile, each finding with what was found, what the profile
//! expects, why, the exact fix and, where measured, the evidence.
//!
//! Nothing here prints. Every file is read through a [`topo::SysRoot`], so
//! the audit runs on captures and fixture trees as on the live machine.

pub mod declared;
pub mod edac;
pub mod evidence;
pub mod fingerprint;
pub mod firmware_state;
pub mod profile;
pub mod read;
pub mod rules;
pub mod runtime;
pub mod settings;
pub mod smbios;

use results::audit::{Finding, Severity};
use serde::{Deserialize, Serialize};
use topo::{SysRoot, Topology};

pub use evidence::Evidence;
pub use profile::{Profile, UnknownProfile};
pub use read::Read;
pub use rules::{Inputs, Terms};
pub use settings::{PerfCounters, Settings};
pub use smbios::MemoryPopulation;

/// The audit of one machine for one profile (`numaprobe audit --json`
/// writes it after console's `schema_version`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub profile: Profile,
    /// The root read (`/` when live).
    pub root: String,
    /// Findings, most severe first.
    pub findings: Vec<Finding>,
    /// Count of findings per severity.
    pub counts: Counts,
    pub settings: Settings,
    pub memory: Read<MemoryPopulation>,
    /// EDAC memory controllers and their DIMMs' error counts.
    #[serde(default = "absent")]
    pub edac: Read<edac::Edac>,
    pub evidence: Evidence,
    /// What topology discovery could not use and what it assumed instead
    /// (the topology's `warnings`): files it read are named here, files
    /// the audit reads itself in `settings` and `unknown` findings.
    #[serde(default)]
    pub warnings: Vec<topo::Warning>,
}

fn absent<T>() -> Read<T> {
    Read::Absent
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub ok: u32,
    pub info: u32,
    pub unknown: u32,
    pub warn: u32,
    pub critical: u32,
}

impl Counts {
    fn add(&mut self, s: Severity) {
        *match s {
            Severity::Ok => &mut self.ok,
            Severity::Info => &mut self.info,
            Severity::Unknown => &mut self.unknown,
            Severity::Warn => &mut self.warn,
            Severity::Critical => &mut self.critical,
        } += 1;
    }
}

impl Report {
    /// Reads settings and SMBIOS under `root` and runs every rule against
    /// `topology` (discovered under the same root) and `evidence`, the
    /// findings naming the front end's options in its `terms`.
    pub fn build(
        root: &SysRoot,
        topology: &Topology,
        profile: Profile,
        evidence: Evidence,
        terms: Terms,
    ) -> Report {
        let settings = Settings::read(root);
        let memory = smbios::read(root);
        let mut r = Report::from_parts(
            root.dir().display().to_string(),
            topology,
            settings,
            memory,
            evidence,
            profile,
            terms,
        );
        r.set_edac(topology, edac::read(root), terms);
        r
    }

    /// Replaces the EDAC reading and its findings (`from_parts` takes
    /// none: EDAC absent).
    pub fn set_edac(&mut self, topology: &Topology, edac: Read<edac::Edac>, terms: Terms) {
        self.edac = edac;
        let inputs = Inputs {
            topology,
            settings: &self.settings,
            memory: &self.memory,
            edac: &self.edac,
            evidence: &self.evidence,
            profile: self.profile,
            terms,
        };
        self.findings.retain(|f| f.id != rules::DIMM_ERRORS);
        self.findings.extend(rules::dimm_errors(&inputs));
        self.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        self.counts = Counts::default();
        for f in &self.findings {
            self.counts.add(f.severity);
        }
    }

    /// Runs every rule on inputs already read (tests, the `run` report).
    pub fn from_parts(
        root: String,
        topology: &Topology,
        settings: Settings,
        memory: Read<MemoryPopulation>,
        evidence: Evidence,
        profile: Profile,
        terms: Terms,
    ) -> Report {
        let mut memory = memory;
        if let Read::Value(m) = &mut memory {
            m.say_assumed(terms.peak_gbs);
        }
        let edac = Read::Absent;
        let findings = rules::check_all(&Inputs {
            topology,
            settings: &settings,
            memory: &memory,
            edac: &edac,
            evidence: &evidence,
            profile,
            terms,
        });
        let mut counts = Counts::default();
        for f in &findings {
            counts.add(f.severity);
        }
        Report {
            profile,
            root,
            findings,
            counts,
            settings,
            memory,
            edac,
            evidence,
            warnings: topology.warnings.clone(),
        }
    }

    /// The most severe finding's severity (`Ok` when there is none).
    pub fn worst(&self) -> Severity {
        self.findings.iter().map(|f| f.severity).max().unwrap_or(Severity::Ok)
    }

    pub fn finding(&self, id: &str) -> Option<&Finding> {
        self.findings.iter().find(|f| f.id == id)
    }
}
