//! The rules: each reads the topology, settings, memory population and
//! evidence, and says what is set, what the profile expects, why, and how
//! to change it.

use topo::{DeviceClass, NumaModeKind, Topology, Vendor};

use crate::evidence::Evidence;
use crate::profile::Profile;
use crate::read::Read;
use crate::settings::{IommuMode, Settings};
use crate::smbios::MemoryPopulation;

mod cpu;
mod devices;
mod kernel;
mod memory;
mod numa;
mod perf;
mod prefetch;

pub use cpu::DEEP_CSTATE_US;
pub use memory::{IMBALANCE, LOW_PEAK_FRACTION, NEARLY_FULL};

/// The record of the audit (severity, what a fix needs, one finding) lives
/// in `results`, where the store and reports read it back.
use results::audit::{Finding, Needs, Severity};

/// What the rules look at.
pub struct Inputs<'a> {
    pub topology: &'a Topology,
    pub settings: &'a Settings,
    pub memory: &'a Read<MemoryPopulation>,
    /// EDAC memory controllers (absent without an EDAC driver).
    pub edac: &'a Read<crate::edac::Edac>,
    pub evidence: &'a Evidence,
    pub profile: Profile,
    /// The front end's names for what a finding tells the user to use.
    pub terms: Terms,
}

/// What the findings (and the report's memory notes) call the front end's
/// commands and options, and the words of what they quote from analysis
/// (a distances contradiction). A finding is kept as text (in `audit
/// --json` and in a run's stored findings), so the front end that runs the
/// audit gives its words here (console's `audit::TERMS`); the rules name
/// no command or flag of their own.
#[derive(Debug, Clone, Copy)]
pub struct Terms {
    /// The option that counts hardware and software events while
    /// measuring.
    pub counters: &'static str,
    /// The command that measures latency (and saves the prefetch check).
    pub lat: &'static str,
    /// The command that measures and saves a whole run.
    pub run: &'static str,
    /// The command that audits this machine.
    pub audit: &'static str,
    /// The command line that writes a saved run (`RUN`) as hwloc XML to
    /// `topo.xml`.
    pub export_hwloc: &'static str,
    /// The option that gives the theoretical peak bandwidth.
    pub peak_gbs: &'static str,
    /// A contradiction between the declared distances and the measured
    /// latency in words (report's `distances::contradiction`, which
    /// `topo --from-run` and the report say too).
    pub contradiction: fn(&analysis::distances::Contradiction) -> String,
}

/// One rule: the id and title of the findings it gives, and its check.
pub struct Rule {
    /// Stable identifier, e.g. `kernel.zone_reclaim_mode`.
    pub id: &'static str,
    /// Short name for tables.
    pub title: &'static str,
    check: fn(&Rule, &Inputs) -> Vec<Finding>,
}

impl Rule {
    /// Runs the rule.
    pub fn check(&self, i: &Inputs) -> Vec<Finding> {
        (self.check)(self, i)
    }

    /// A finding of this rule, to be filled in.
    fn finding(&self, severity: Severity) -> F {
        F {
            f: Finding {
                id: self.id.to_string(),
                severity,
                title: self.title.to_string(),
                found: String::new(),
                expected: String::new(),
                why: String::new(),
                fix: String::new(),
                needs: Needs::Nothing,
                evidence: None,
            },
        }
    }

    /// The finding for a setting that is absent or could not be read.
    fn not_read<T>(&self, terms: Terms, what: &str, r: &Read<T>, expected: &str) -> Vec<Finding> {
        let found = match r {
            Read::Unreadable(reason) => format!("could not read {what}: {reason}"),
            _ => format!(
                "{what} is absent (this kernel does not have it, or the capture did not record it)"
            ),
        };
        let fix = match r {
            Read::Unreadable(reason) if reason.contains("ermission") => {
                format!("run {} as root", terms.audit)
            }
            _ => String::new(),
        };
        let needs = if fix.is_empty() { Needs::Nothing } else { Needs::Runtime };
        self.finding(Severity::Unknown)
            .found(found)
            .expected(expected)
            .why("numaprobe does not guess a setting it could not read.")
            .fix(fix, needs)
            .done()
    }
}

/// Every rule, in report order: each finding's `id` and `title` come from
/// its rule's entry here, never from the rule's code.
pub const RULES: &[Rule] = &[
    Rule { id: "numa.mode", title: "NUMA visibility", check: numa::numa_mode },
    Rule { id: "numa.sub_numa", title: "Nodes per package", check: numa::sub_numa },
    Rule { id: "numa.remote_penalty", title: "Remote access penalty", check: numa::remote_penalty },
    Rule {
        id: "numa.declared_distances",
        title: "Declared distances vs measured",
        check: numa::declared_distances,
    },
    Rule { id: "placement.profile", title: "Placement for this profile", check: numa::placement },
    Rule {
        id: "kernel.numa_balancing",
        title: "Automatic NUMA balancing",
        check: kernel::numa_balancing,
    },
    Rule { id: "kernel.zone_reclaim_mode", title: "Zone reclaim", check: kernel::zone_reclaim },
    Rule { id: "kernel.thp_enabled", title: "Transparent huge pages", check: kernel::thp_enabled },
    Rule { id: "kernel.thp_defrag", title: "THP defrag", check: kernel::thp_defrag },
    Rule { id: "kernel.hugepages", title: "Huge pages per node", check: kernel::hugepages },
    Rule { id: "kernel.swappiness", title: "Swappiness", check: kernel::swappiness },
    Rule { id: "cpu.governor", title: "CPU frequency governor", check: cpu::governor },
    Rule { id: "cpu.epp", title: "Energy performance preference", check: cpu::epp },
    Rule { id: "cpu.boost", title: "Turbo / boost", check: cpu::boost },
    Rule { id: "cpu.cstates", title: "C-states", check: cpu::cstates },
    Rule { id: "cpu.smt", title: "SMT (Hyper-Threading)", check: cpu::smt },
    Rule { id: "cpu.isolation", title: "CPU isolation", check: cpu::isolation },
    Rule { id: "iommu.mode", title: "IOMMU mode", check: cpu::iommu },
    Rule {
        id: "cpu.prefetchers",
        title: "Hardware prefetchers (measured)",
        check: prefetch::prefetchers,
    },
    Rule { id: "memory.population", title: "DIMM population", check: memory::population },
    Rule {
        id: "memory.peak_fraction",
        title: "Measured vs theoretical bandwidth",
        check: memory::peak_fraction,
    },
    Rule { id: "memory.speed", title: "DIMM speed vs rating", check: memory::speed },
    Rule { id: DIMM_ERRORS, title: "DIMM errors (EDAC)", check: memory::dimm_errors },
    Rule { id: "memory.free", title: "Free memory per node", check: memory::free_memory },
    Rule { id: "devices.locality", title: "Device locality", check: devices::device_locality },
    Rule {
        id: "devices.gpu_affinity",
        title: "CPUs nearest each GPU",
        check: devices::gpu_affinity,
    },
    Rule { id: "kernel.perf_counters", title: "Performance counters", check: perf::counters },
];

/// The id of the DIMM-error finding (EDAC), which [`crate::Report::set_edac`]
/// recomputes.
pub const DIMM_ERRORS: &str = "memory.dimm_errors";

/// The findings of the DIMM-error rule alone.
pub fn dimm_errors(i: &Inputs) -> Vec<Finding> {
    RULES.iter().filter(|r| r.id == DIMM_ERRORS).flat_map(|r| r.check(i)).collect()
}

/// Runs every rule; findings sorted most severe first, stable within a severity.
pub fn check_all(i: &Inputs) -> Vec<Finding> {
    let mut all: Vec<Finding> = RULES.iter().flat_map(|r| r.check(i)).collect();
    all.sort_by_key(|f| std::cmp::Reverse(f.severity));
    all
}

struct F {
    f: Finding,
}

impl F {
    fn found(mut self, s: impl Into<String>) -> Self {
        self.f.found = s.into();
        self
    }
    fn expected(mut self, s: impl Into<String>) -> Self {
        self.f.expected = s.into();
        self
    }
    fn why(mut self, s: impl Into<String>) -> Self {
        self.f.why = s.into();
        self
    }
    fn fix(mut self, s: impl Into<String>, needs: Needs) -> Self {
        self.f.fix = s.into();
        self.f.needs = needs;
        self
    }
    fn evidence(mut self, e: Option<String>) -> Self {
        self.f.evidence = e;
        self
    }
    fn done(self) -> Vec<Finding> {
        vec![self.f]
    }
}

/// An Arm machine: the x86 settings (SNC, NPS, `intel_pstate`, the AMD
/// boost switch, `intel_idle`, VT-d) do not exist there (docs/audit.md,
/// "Arm servers").
fn arm(t: &Topology) -> bool {
    t.arch.as_deref() == Some("aarch64") || matches!(t.cpu_vendor, Vendor::Arm | Vendor::Hisilicon)
}

fn multi_node(t: &Topology) -> bool {
    t.cpu_nodes().count() > 1 || t.memory_nodes().count() > 1
}

fn latency_evidence(ev: &Evidence) -> Option<String> {
    ev.remote_local_latency_ratio.map(|r| {
        let worst = ev
            .worst_remote_local_latency_ratio
            .map(|w| format!(" (worst pair {w:.1}x)"))
            .unwrap_or_default();
        let bw = ev
            .remote_local_bandwidth_ratio
            .map(|b| format!("; remote bandwidth {:.0}% of local", b * 100.0))
            .unwrap_or_default();
        format!("measured remote latency {r:.1}x local{worst}{bw}")
    })
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}
