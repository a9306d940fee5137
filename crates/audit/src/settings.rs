//! OS and firmware-visible settings that change memory and CPU behaviour,
//! read under a [`SysRoot`]. Cheap to read; serialisable, so that a run can
//! record it as its configuration fingerprint.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use topo::parse::kernel_params;
use topo::{CpuSet, SysRoot};

use crate::read::{bracketed, read_string, read_text, read_u64, read_with, Read};

/// Everything the audit reads besides the topology and SMBIOS.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Kernel release (`/proc/sys/kernel/osrelease`, else `/proc/version`).
    pub kernel: Read<String>,
    /// The kernel command line, all of it.
    pub cmdline: Read<String>,
    /// The OS distribution (`os-release` `PRETTY_NAME`; absent in older
    /// records).
    #[serde(default = "absent")]
    pub os: Read<String>,
    /// `transparent_hugepage/enabled`: the bracketed value.
    pub thp_enabled: Read<String>,
    /// `transparent_hugepage/defrag`: the bracketed value.
    pub thp_defrag: Read<String>,
    /// `transparent_hugepage/hpage_pmd_size`: the size of one transparent
    /// huge page, bytes (2 MiB with 4 KiB base pages, 32 MiB with 16 KiB,
    /// 512 MiB with arm64's 64 KiB); absent in older records.
    #[serde(default = "absent")]
    pub thp_pmd_size_bytes: Read<u64>,
    pub numa_balancing: Read<u64>,
    pub zone_reclaim_mode: Read<u64>,
    pub swappiness: Read<u64>,
    /// `SwapTotal` from `/proc/meminfo`, bytes.
    pub swap_total_bytes: Read<u64>,
    pub cpufreq: Cpufreq,
    pub boost: Boost,
    pub cpuidle: Cpuidle,
    pub smt: Smt,
    pub iommu: Iommu,
    /// `isolcpus=` from the command line (`Absent` when not given).
    pub isolcpus: Read<String>,
    /// `nohz_full=` from the command line.
    pub nohz_full: Read<String>,
    /// Huge pages reserved per node and size.
    pub hugepages: Read<Vec<NodeHugePages>>,
    /// `kernel.perf_event_paranoid` (absent in older records).
    #[serde(default = "absent")]
    pub perf_event_paranoid: Read<i64>,
    /// What `--counters` can count here, from opening the events (the live
    /// machine only; absent for captures and older records).
    #[serde(default = "absent")]
    pub perf_counters: Read<PerfCounters>,
    /// Firmware and board identity (DMI) and CPU microcode: settings a BIOS
    /// update changes. Absent in documents written before they were read.
    #[serde(default = "Firmware::absent")]
    pub firmware: Firmware,
    /// The memory controllers, channels and DIMMs EDAC sees (no error
    /// counts: those are the audit's `edac`); absent in older records.
    #[serde(default = "absent")]
    pub memory_controllers: Read<crate::edac::MemoryControllers>,
}

fn absent<T>() -> Read<T> {
    Read::Absent
}

/// Whether hardware and software events could be opened on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerfCounters {
    /// Why cycles could not be counted; `None` when they could.
    pub hardware_unavailable: Option<String>,
    /// Why page faults could not be counted; `None` when they could.
    pub software_unavailable: Option<String>,
    /// Only user space could be counted.
    pub user_only: bool,
    /// Effective user id 0.
    pub root: bool,
}

/// What the firmware says about itself (`/sys/class/dmi/id`, world-readable
/// fields only) and the CPU microcode revision (`/proc/cpuinfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Firmware {
    pub bios_vendor: Read<String>,
    pub bios_version: Read<String>,
    pub bios_date: Read<String>,
    pub sys_vendor: Read<String>,
    pub product_name: Read<String>,
    pub board_vendor: Read<String>,
    pub board_name: Read<String>,
    pub board_version: Read<String>,
    /// The `microcode` revision of every CPU when they agree, else
    /// `mixed (a, b)`; `Absent` where the architecture does not report one.
    pub microcode: Read<String>,
}

impl Firmware {
    fn absent() -> Firmware {
        Firmware {
            bios_vendor: Read::Absent,
            bios_version: Read::Absent,
            bios_date: Read::Absent,
            sys_vendor: Read::Absent,
            product_name: Read::Absent,
            board_vendor: Read::Absent,
            board_name: Read::Absent,
            board_version: Read::Absent,
            microcode: Read::Absent,
        }
    }

    /// Reads the DMI identity and the microcode revision under `root`.
    pub fn read(root: &SysRoot) -> Firmware {
        let dmi = |f: &str| read_text(root, &format!("sys/class/dmi/id/{f}"));
        Firmware {
            bios_vendor: dmi("bios_vendor"),
            bios_version: dmi("bios_version"),
            bios_date: dmi("bios_date"),
            sys_vendor: dmi("sys_vendor"),
            product_name: dmi("product_name"),
            board_vendor: dmi("board_vendor"),
            board_name: dmi("board_name"),
            board_version: dmi("board_version"),
            microcode: match root.read_optional("proc/cpuinfo") {
                Ok(Some(text)) => microcode_of(&text).map_or(Read::Absent, Read::Value),
                Ok(None) => Read::Absent,
                Err(e) => Read::Unreadable(e.to_string()),
            },
        }
    }
}

/// The microcode revision(s) in a `/proc/cpuinfo` text: one value when every
/// CPU agrees, else `mixed (a, b)`; `None` when no CPU lists one.
pub fn microcode_of(cpuinfo: &str) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for line in cpuinfo.lines() {
        if let Some((k, v)) = line.split_once(':') {
            if k.trim() == "microcode" {
                let v = v.trim();
                if !seen.contains(&v) {
                    seen.push(v);
                }
            }
        }
    }
    match seen.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => Some(format!("mixed ({})", many.join(", "))),
    }
}

/// A per-CPU value summarised: each distinct value with the CPUs that have it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpu {
    pub by_value: BTreeMap<String, CpuSet>,
}

impl PerCpu {
    /// The value when every CPU has the same one.
    pub fn uniform(&self) -> Option<&str> {
        if self.by_value.len() == 1 {
            self.by_value.keys().next().map(String::as_str)
        } else {
            None
        }
    }

    /// `performance` or `performance on 0-3, powersave on 4-7`.
    pub fn describe(&self) -> String {
        match self.uniform() {
            Some(v) => v.to_string(),
            None => self
                .by_value
                .iter()
                .map(|(v, cpus)| format!("{v} on CPUs {}", cpus.to_list()))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The value when every CPU agrees, else `mixed (a, b)` (for a run's
    /// configuration).
    pub fn summary(&self) -> String {
        match self.uniform() {
            Some(v) => v.to_string(),
            None => {
                format!("mixed ({})", self.by_value.keys().cloned().collect::<Vec<_>>().join(", "))
            }
        }
    }

    pub fn has(&self, value: &str) -> bool {
        self.by_value.contains_key(value)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpufreq {
    pub driver: Read<PerCpu>,
    pub governor: Read<PerCpu>,
    pub energy_performance_preference: Read<PerCpu>,
    /// Energy performance bias (`cpuN/power/energy_perf_bias`, Intel:
    /// 0 = performance to 15 = power saving); absent in older records.
    #[serde(default = "absent")]
    pub energy_perf_bias: Read<PerCpu>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boost {
    /// `intel_pstate/no_turbo` (1 = turbo off).
    pub intel_no_turbo: Read<bool>,
    /// `cpufreq/boost` (1 = boost on).
    pub cpufreq_boost: Read<bool>,
    /// `amd_pstate/status` (active, passive, guided, disable).
    pub amd_pstate_status: Read<String>,
    /// `intel_pstate/status` (active, passive, off); absent in older records.
    #[serde(default = "absent")]
    pub intel_pstate_status: Read<String>,
    /// Per-policy `cpufreq/policyN/boost` (newer amd-pstate), summarised.
    pub policy_boost: Read<PerCpu>,
}

impl Boost {
    /// Whether turbo/boost is enabled, from whichever source exists.
    pub fn enabled(&self) -> Read<bool> {
        if let Read::Value(off) = self.intel_no_turbo {
            return Read::Value(!off);
        }
        if let Read::Value(on) = self.cpufreq_boost {
            return Read::Value(on);
        }
        if let Read::Value(p) = &self.policy_boost {
            if let Some(u) = p.uniform() {
                return Read::Value(u == "1");
            }
            return Read::Value(p.has("1"));
        }
        for r in [&self.intel_no_turbo, &self.cpufreq_boost] {
            if let Read::Unreadable(m) = r {
                return Read::Unreadable(m.clone());
            }
        }
        Read::Absent
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpuidle {
    pub driver: Read<String>,
    pub governor: Read<String>,
    /// Idle states of the first CPU that has them, with the CPUs where each
    /// is disabled.
    pub states: Read<Vec<IdleState>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleState {
    /// `stateN` index.
    pub index: u32,
    pub name: String,
    /// Exit latency, microseconds (as the kernel reports it).
    pub exit_latency_us: u64,
    /// CPUs on which this state is disabled.
    pub disabled_on: CpuSet,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Smt {
    /// `smt/control`: on, off, forceoff, notsupported, notimplemented.
    pub control: Read<String>,
    /// `smt/active`.
    pub active: Read<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IommuMode {
    /// No IOMMU registered with the kernel.
    Off,
    /// Identity (pass-through) default domains: `iommu=pt`.
    Passthrough,
    /// Translated DMA (`DMA`, `DMA-FQ`) default domains.
    Translated,
    /// An IOMMU is present but the domain type could not be told.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iommu {
    /// IOMMU-related command-line options (`iommu`, `intel_iommu`, `amd_iommu`).
    pub cmdline: Vec<(String, String)>,
    /// Entries of `/sys/class/iommu` (e.g. `dmar0`, `ivhd0`).
    pub units: Read<Vec<String>>,
    /// Count of IOMMU groups per default domain type.
    pub group_types: Read<BTreeMap<String, u32>>,
}

impl Iommu {
    pub fn mode(&self) -> IommuMode {
        let opt = |k: &str| self.cmdline.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let types = self.group_types.value();
        if let Some(t) = types.filter(|t| !t.is_empty()) {
            let identity = t.get("identity").copied().unwrap_or(0);
            let dma: u32 = t.iter().filter(|(k, _)| k.starts_with("DMA")).map(|(_, v)| v).sum();
            return if dma > identity {
                IommuMode::Translated
            } else if identity > 0 {
                IommuMode::Passthrough
            } else {
                IommuMode::Unknown
            };
        }
        let units = self.units.value().map(|u| !u.is_empty()).unwrap_or(false);
        if !units {
            return IommuMode::Off;
        }
        if opt("iommu") == Some("pt") {
            IommuMode::Passthrough
        } else {
            IommuMode::Unknown
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeHugePages {
    pub node: u32,
    pub page_size_bytes: u64,
    pub total: u64,
    pub free: u64,
}

const CPU: &str = "sys/devices/system/cpu";

impl Settings {
    /// Reads every setting under `root`. Never fails: each value says
    /// whether it was read, absent or unreadable.
    pub fn read(root: &SysRoot) -> Settings {
        let cmdline = read_text(root, "proc/cmdline");
        let opts = cmdline.value().map(|c| kernel_params(c)).unwrap_or_default();
        let cmd_opt = |key: &str| -> Read<String> {
            match &cmdline {
                Read::Value(_) => opts
                    .iter()
                    .rev()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| Read::Value(v.clone()))
                    .unwrap_or(Read::Absent),
                Read::Absent => Read::Absent,
                Read::Unreadable(r) => Read::Unreadable(r.clone()),
            }
        };
        let kernel = match topo::read::kernel_release(root) {
            Ok(Some(k)) => Read::Value(k),
            Ok(None) => Read::Absent,
            Err(e) => Read::Unreadable(e.to_string()),
        };
        let cpus = root.list_ids(CPU, "cpu").unwrap_or_default();
        let bool01 = |s: &str| match s {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(format!("expected 0 or 1, found '{s}'")),
        };
        let perf_event_paranoid =
            read_with(root, "proc/sys/kernel/perf_event_paranoid", |s: &str| {
                s.parse::<i64>().map_err(|e| format!("'{s}': {e}"))
            });
        let perf_counters = if root.is_live() {
            let a = counters::probe(root);
            Read::Value(PerfCounters {
                hardware_unavailable: a.hardware,
                software_unavailable: a.software,
                user_only: a.user_only,
                root: a.root,
            })
        } else {
            Read::Absent
        };
        let os = match topo::read::os_release(root) {
            Ok(Some(k)) => Read::Value(k),
            Ok(None) => Read::Absent,
            Err(e) => Read::Unreadable(e.to_string()),
        };
        Settings {
            kernel,
            os,
            thp_enabled: read_with(root, "sys/kernel/mm/transparent_hugepage/enabled", bracketed),
            thp_defrag: read_with(root, "sys/kernel/mm/transparent_hugepage/defrag", bracketed),
            thp_pmd_size_bytes: read_u64(root, "sys/kernel/mm/transparent_hugepage/hpage_pmd_size"),
            numa_balancing: read_u64(root, "proc/sys/kernel/numa_balancing"),
            zone_reclaim_mode: read_u64(root, "proc/sys/vm/zone_reclaim_mode"),
            swappiness: read_u64(root, "proc/sys/vm/swappiness"),
            swap_total_bytes: swap_total_bytes(root),
            cpufreq: Cpufreq {
                driver: per_cpu(root, &cpus, "cpufreq/scaling_driver"),
                governor: per_cpu(root, &cpus, "cpufreq/scaling_governor"),
                energy_performance_preference: per_cpu(
                    root,
                    &cpus,
                    "cpufreq/energy_performance_preference",
                ),
                energy_perf_bias: per_cpu(root, &cpus, "power/energy_perf_bias"),
            },
            boost: Boost {
                intel_no_turbo: read_with(root, &format!("{CPU}/intel_pstate/no_turbo"), bool01),
                cpufreq_boost: read_with(root, &format!("{CPU}/cpufreq/boost"), bool01),
                amd_pstate_status: read_string(root, &format!("{CPU}/amd_pstate/status")),
                intel_pstate_status: read_string(root, &format!("{CPU}/intel_pstate/status")),
                policy_boost: per_cpu(root, &cpus, "cpufreq/boost"),
            },
            cpuidle: Cpuidle {
                driver: read_string(root, &format!("{CPU}/cpuidle/current_driver")),
                governor: match read_string(root, &format!("{CPU}/cpuidle/current_governor")) {
                    Read::Absent => {
                        read_string(root, &format!("{CPU}/cpuidle/current_governor_ro"))
                    }
                    other => other,
                },
                states: idle_states(root, &cpus),
            },
            smt: Smt {
                control: read_string(root, &format!("{CPU}/smt/control")),
                active: read_with(root, &format!("{CPU}/smt/active"), bool01),
            },
            iommu: Iommu {
                cmdline: opts
                    .iter()
                    .filter(|(k, _)| matches!(k.as_str(), "iommu" | "intel_iommu" | "amd_iommu"))
                    .cloned()
                    .collect(),
                units: list(root, "sys/class/iommu"),
                group_types: iommu_groups(root),
            },
            isolcpus: cmd_opt("isolcpus"),
            nohz_full: cmd_opt("nohz_full"),
            hugepages: hugepages(root),
            firmware: Firmware::read(root),
            memory_controllers: crate::edac::read(root).map(|e| e.controllers_summary()),
            cmdline,
            perf_event_paranoid,
            perf_counters,
        }
    }

    /// A command-line option's value (`""` for a flag), when the command line
    /// was read; read as the kernel reads it ([`kernel_params`]: quoted values
    /// whole, `-` and `_` alike in names), the last occurrence winning.
    pub fn cmdline_option(&self, key: &str) -> Option<String> {
        let c = self.cmdline.value()?;
        kernel_params(c).into_iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// `SwapTotal` of `/proc/meminfo` ([`topo::read::meminfo`]), bytes.
fn swap_total_bytes(root: &SysRoot) -> Read<u64> {
    let rel = "proc/meminfo";
    match topo::read::meminfo(root, rel) {
        Ok(None) => Read::Absent,
        Ok(Some(m)) => match m.get("SwapTotal") {
            Some(&b) => Read::Value(b),
            None => Read::Unreadable(format!("{}: no SwapTotal line", root.path(rel).display())),
        },
        Err(e) => Read::Unreadable(e.to_string()),
    }
}

fn list(root: &SysRoot, rel: &str) -> Read<Vec<String>> {
    if !root.path(rel).exists() {
        return Read::Absent;
    }
    match root.list_dir(rel) {
        Ok(v) => Read::Value(v),
        Err(e) => Read::Unreadable(e.to_string()),
    }
}

fn per_cpu(root: &SysRoot, cpus: &[u32], file: &str) -> Read<PerCpu> {
    let mut by_value: BTreeMap<String, CpuSet> = BTreeMap::new();
    for &c in cpus {
        match read_string(root, &format!("{CPU}/cpu{c}/{file}")) {
            Read::Value(v) => {
                by_value.entry(v).or_default().insert(c);
            }
            Read::Absent => {}
            Read::Unreadable(r) => return Read::Unreadable(r),
        }
    }
    if by_value.is_empty() {
        Read::Absent
    } else {
        Read::Value(PerCpu { by_value })
    }
}

fn idle_states(root: &SysRoot, cpus: &[u32]) -> Read<Vec<IdleState>> {
    let Some(&first) = cpus.iter().find(|c| root.path(&format!("{CPU}/cpu{c}/cpuidle")).is_dir())
    else {
        return Read::Absent;
    };
    let ids = match root.list_ids(&format!("{CPU}/cpu{first}/cpuidle"), "state") {
        Ok(ids) => ids,
        Err(e) => return Read::Unreadable(e.to_string()),
    };
    let mut states = Vec::new();
    for i in ids {
        let dir = format!("{CPU}/cpu{first}/cpuidle/state{i}");
        let name = match read_string(root, &format!("{dir}/name")) {
            Read::Value(n) => n,
            Read::Absent => format!("state{i}"),
            Read::Unreadable(r) => return Read::Unreadable(r),
        };
        let exit_latency_us = match read_u64(root, &format!("{dir}/latency")) {
            Read::Value(v) => v,
            Read::Absent => 0,
            Read::Unreadable(r) => return Read::Unreadable(r),
        };
        let mut disabled_on = CpuSet::new();
        for &c in cpus {
            if let Read::Value(1) =
                read_u64(root, &format!("{CPU}/cpu{c}/cpuidle/state{i}/disable"))
            {
                disabled_on.insert(c);
            }
        }
        states.push(IdleState { index: i, name, exit_latency_us, disabled_on });
    }
    Read::Value(states)
}

fn iommu_groups(root: &SysRoot) -> Read<BTreeMap<String, u32>> {
    let rel = "sys/kernel/iommu_groups";
    let groups = match list(root, rel) {
        Read::Value(g) => g,
        Read::Absent => return Read::Absent,
        Read::Unreadable(r) => return Read::Unreadable(r),
    };
    let mut types = BTreeMap::new();
    for g in groups {
        match read_string(root, &format!("{rel}/{g}/type")) {
            Read::Value(t) => *types.entry(t).or_insert(0) += 1,
            Read::Absent => {}
            Read::Unreadable(r) => return Read::Unreadable(r),
        }
    }
    Read::Value(types)
}

fn hugepages(root: &SysRoot) -> Read<Vec<NodeHugePages>> {
    let base = "sys/devices/system/node";
    let nodes = match root.list_ids(base, "node") {
        Ok(n) if n.is_empty() => return Read::Absent,
        Ok(n) => n,
        Err(e) => return Read::Unreadable(e.to_string()),
    };
    let mut out = Vec::new();
    for n in nodes {
        let dir = format!("{base}/node{n}/hugepages");
        let sizes = match root.list_dir(&dir) {
            Ok(s) => s,
            Err(e) => return Read::Unreadable(e.to_string()),
        };
        for s in sizes {
            let Some(kib) = s
                .strip_prefix("hugepages-")
                .and_then(|r| r.strip_suffix("kB"))
                .and_then(|k| k.parse::<u64>().ok())
            else {
                continue;
            };
            let total = read_u64(root, &format!("{dir}/{s}/nr_hugepages"));
            let free = read_u64(root, &format!("{dir}/{s}/free_hugepages"));
            match (total, free) {
                (Read::Value(total), free) => out.push(NodeHugePages {
                    node: n,
                    page_size_bytes: kib * 1024,
                    total,
                    free: free.value().copied().unwrap_or(0),
                }),
                (Read::Unreadable(r), _) => return Read::Unreadable(r),
                (Read::Absent, _) => {}
            }
        }
    }
    Read::Value(out)
}

#[cfg(test)]
mod firmware_tests {
    use super::*;

    #[test]
    fn microcode_is_one_value_or_mixed() {
        let two =
            "processor\t: 0\nmicrocode\t: 0x2b000603\n\nprocessor\t: 1\nmicrocode\t: 0x2b000603\n";
        assert_eq!(microcode_of(two).as_deref(), Some("0x2b000603"));
        let mixed = "microcode\t: 0x1\nmicrocode\t: 0x2\nmicrocode : 0x1\n";
        assert_eq!(microcode_of(mixed).as_deref(), Some("mixed (0x1, 0x2)"));
        assert_eq!(microcode_of("processor\t: 0\nBogoMIPS\t: 50.00\n"), None);
    }

    #[test]
    fn firmware_reads_dmi_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let dmi = dir.path().join("sys/class/dmi/id");
        std::fs::create_dir_all(&dmi).unwrap();
        std::fs::write(dmi.join("bios_vendor"), "American Megatrends\n").unwrap();
        std::fs::write(dmi.join("bios_version"), "2.4b\n").unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(dir.path().join("proc/cpuinfo"), "microcode\t: 0xd0003a5\n").unwrap();
        let f = Firmware::read(&SysRoot::new(dir.path()).unwrap());
        assert_eq!(f.bios_vendor, Read::Value("American Megatrends".into()));
        assert_eq!(f.bios_version, Read::Value("2.4b".into()));
        assert_eq!(f.board_name, Read::Absent);
        assert_eq!(f.microcode, Read::Value("0xd0003a5".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_read_as_the_kernel_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/cmdline"),
            "BOOT_IMAGE=/vmlinuz ro dyndbg=\"file mm/mempolicy.c -- +p\" numa_balancing=disable \
             idle=\"poll\" isolcpus=2-3 nohz-full=2-3 -- single isolcpus=1\n",
        )
        .unwrap();
        let s = Settings::read(&SysRoot::new(dir.path()).unwrap());
        // The quoted value is one parameter, its `--` not the end of the kernel's part.
        assert_eq!(s.cmdline_option("dyndbg").as_deref(), Some("file mm/mempolicy.c -- +p"));
        assert_eq!(s.cmdline_option("numa_balancing").as_deref(), Some("disable"));
        assert_eq!(s.cmdline_option("idle").as_deref(), Some("poll"));
        assert_eq!(s.isolcpus, Read::Value("2-3".into()));
        assert_eq!(s.nohz_full, Read::Value("2-3".into()));
        assert_eq!(s.cmdline_option("single"), None);
    }

    #[test]
    fn per_cpu_summary_describes_mixes() {
        let mut by_value = BTreeMap::new();
        by_value.insert("performance".to_string(), CpuSet::parse_list("0-3").unwrap());
        by_value.insert("powersave".to_string(), CpuSet::parse_list("4-7").unwrap());
        let p = PerCpu { by_value };
        assert_eq!(p.uniform(), None);
        assert_eq!(p.describe(), "performance on CPUs 0-3, powersave on CPUs 4-7");
    }

    #[test]
    fn boost_from_each_source() {
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, v: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, v).unwrap();
        };
        w("sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
        w("sys/devices/system/cpu/cpu1/topology/core_id", "1\n");
        let root = SysRoot::new(dir.path()).unwrap();
        assert_eq!(Settings::read(&root).boost.enabled(), Read::Absent);
        // amd-pstate with per-policy boost, on for one CPU only.
        w("sys/devices/system/cpu/amd_pstate/status", "active\n");
        w("sys/devices/system/cpu/cpu0/cpufreq/boost", "1\n");
        w("sys/devices/system/cpu/cpu1/cpufreq/boost", "0\n");
        let s = Settings::read(&root);
        assert_eq!(s.boost.amd_pstate_status, Read::Value("active".into()));
        assert_eq!(s.boost.enabled(), Read::Value(true));
        // The global switch wins over per-policy files.
        w("sys/devices/system/cpu/cpufreq/boost", "0\n");
        assert_eq!(Settings::read(&root).boost.enabled(), Read::Value(false));
        w("sys/devices/system/cpu/intel_pstate/no_turbo", "0\n");
        assert_eq!(Settings::read(&root).boost.enabled(), Read::Value(true));
        w("sys/devices/system/cpu/intel_pstate/no_turbo", "maybe\n");
        assert!(matches!(Settings::read(&root).boost.intel_no_turbo, Read::Unreadable(_)));
    }

    #[test]
    fn iommu_mode_from_group_types() {
        let mut t = BTreeMap::new();
        t.insert("DMA-FQ".to_string(), 30);
        t.insert("identity".to_string(), 2);
        let i = Iommu {
            cmdline: vec![],
            units: Read::Value(vec!["dmar0".into()]),
            group_types: Read::Value(t),
        };
        assert_eq!(i.mode(), IommuMode::Translated);
        let mut t = BTreeMap::new();
        t.insert("identity".to_string(), 30);
        let i = Iommu {
            cmdline: vec![],
            units: Read::Value(vec!["dmar0".into()]),
            group_types: Read::Value(t),
        };
        assert_eq!(i.mode(), IommuMode::Passthrough);
        let i = Iommu { cmdline: vec![], units: Read::Value(vec![]), group_types: Read::Absent };
        assert_eq!(i.mode(), IommuMode::Off);
    }
}
