//! What the OS shows of the modelled machine under a setting: its nodes,
//! the memory each node's pages physically land on, and the documents a
//! run stores (`topo --json`, the configuration, the machine).
//!
//! CPUs are numbered package by package, domain by domain; node `i` is
//! domain `i` under NUMA on. With one OS node, the memory the kernel
//! gives: under BIOS NUMA off the firmware's interleave over every
//! package; under `numa=off` the first physical domain (the kernel hands
//! out free memory in physical address order, and a freshly booted
//! machine has the first domain's free: STUDIES.md's study 5 sees per-CPU
//! latency to "node 0" split by socket).

use std::collections::BTreeMap;

use results::context::{AcpiSrat, Configuration, FirmwareNuma, Machine as MachineDoc, Reading};
use topo::acpi::{Domain, Slit, Srat, Table};
use topo::Topology;

use crate::facts::{Firmware, Machine, Setting};
use crate::physics::{Hardware, Spread, Team};

/// One node the OS shows.
#[derive(Debug, Clone)]
pub struct OsNode {
    pub id: u32,
    /// Its CPUs, in id order.
    pub cpus: Vec<u32>,
    pub mem_bytes: u64,
}

/// The machine under one setting, as the OS and the hardware see it.
#[derive(Debug, Clone)]
pub struct View {
    pub hw: Hardware,
    pub nodes: Vec<OsNode>,
}

impl View {
    pub fn new(machine: &Machine, setting: Setting) -> View {
        let hw = Hardware::new(machine, setting);
        let n = setting.os_nodes(machine);
        let per = machine.cpus() / n;
        let mem = machine.mem_per_package_bytes * u64::from(machine.packages) / u64::from(n);
        let nodes = (0..n)
            .map(|i| OsNode { id: i, cpus: (i * per..(i + 1) * per).collect(), mem_bytes: mem })
            .collect();
        View { hw, nodes }
    }

    pub fn machine(&self) -> &Machine {
        &self.hw.machine
    }

    pub fn setting(&self) -> Setting {
        self.hw.setting
    }

    /// Where pages bound to OS node `node` physically lie.
    pub fn memory_of(&self, node: u32) -> Spread {
        let s = self.hw.setting;
        match (s.firmware, s.numa_off) {
            (Firmware::Domains(_), false) => self.hw.on(node as usize),
            (Firmware::Interleave, _) => self.hw.even(0..self.hw.domains()),
            (Firmware::Domains(_), true) => self.hw.on(0),
        }
    }

    /// Pages interleaved over every OS node.
    pub fn interleaved(&self) -> Spread {
        let mut all: BTreeMap<usize, f64> = BTreeMap::new();
        let k = self.nodes.len() as f64;
        for n in &self.nodes {
            for (d, f) in self.memory_of(n.id) {
                *all.entry(d).or_default() += f / k;
            }
        }
        all.into_iter().collect()
    }

    /// The teams of `cpus` (one per physical domain they sit on), each
    /// reading `memory`.
    pub fn teams(&self, cpus: &[u32], memory: &Spread) -> Vec<Team> {
        let mut by: BTreeMap<usize, f64> = BTreeMap::new();
        for &c in cpus {
            *by.entry(self.hw.domain_of_cpu(c)).or_default() += 1.0;
        }
        by.into_iter().map(|(d, k)| Team::new(d, k, memory.clone())).collect()
    }

    /// Idle latency from `cpu` to `memory`, ns.
    pub fn latency(&self, cpu: u32, memory: &Spread) -> f64 {
        self.hw.latency_to(self.hw.domain_of_cpu(cpu), memory)
    }

    /// The OS node of CPU `cpu`.
    pub fn node_of(&self, cpu: u32) -> u32 {
        self.nodes.iter().find(|n| n.cpus.contains(&cpu)).map_or(0, |n| n.id)
    }

    /// The package of CPU `cpu`.
    pub fn package_of_cpu(&self, cpu: u32) -> u32 {
        cpu / self.machine().cores_per_package
    }

    /// The firmware's SLIT over its domains (`None` under BIOS NUMA off).
    pub fn firmware_slit(&self) -> Option<Vec<Vec<u8>>> {
        let m = self.machine();
        let d = match self.setting().firmware {
            Firmware::Domains(d) => d,
            Firmware::Interleave => return None,
        };
        let n = m.packages * d;
        Some(
            (0..n)
                .map(|a| {
                    (0..n)
                        .map(|b| {
                            if a == b {
                                10
                            } else if a / d == b / d {
                                m.family.near_distance(d, a % d, b % d)
                            } else {
                                m.family.far_distance(d)
                            }
                        })
                        .collect()
                })
                .collect(),
        )
    }

    /// The `topo --json` document a run stores on this setting.
    pub fn topology(&self) -> Topology {
        let m = self.machine();
        let c = m.cores_per_package;
        let mut t = topo::synthetic::Machine::new(m.family.vendor(), &m.model).family(
            match m.family.vendor() {
                topo::Vendor::Amd => 25,
                _ => 6,
            },
        );
        for p in 0..m.packages {
            t = t.package(p, &format!("{}-{}", p * c, (p + 1) * c - 1));
            t = t.cache(3, m.llc_per_package_bytes, &format!("{}-{}", p * c, (p + 1) * c - 1));
        }
        for n in &self.nodes {
            let list = format!("{}-{}", n.cpus[0], n.cpus[n.cpus.len() - 1]);
            t = t.node(n.id, &list, n.mem_bytes);
        }
        if self.nodes.len() > 1 {
            let slit = self.firmware_slit().expect("several nodes: a SLIT");
            let rows: Vec<Vec<u32>> =
                slit.iter().map(|r| r.iter().map(|&x| u32::from(x)).collect()).collect();
            let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
            t = t.distances(&refs);
        }
        t = t.cmdline(Some(&self.cmdline()));
        t = t.firmware_numa(self.firmware_numa());
        let mut topo = t.build();
        topo.kernel = Some(KERNEL.into());
        topo
    }

    /// The kernel command line.
    pub fn cmdline(&self) -> String {
        let base = "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=/dev/sda2 ro quiet";
        if self.setting().numa_off {
            format!("{base} numa=off")
        } else {
            base.into()
        }
    }

    /// The firmware's ACPI SRAT and SLIT.
    pub fn firmware_numa(&self) -> topo::acpi::FirmwareNuma {
        let m = self.machine();
        match self.setting().firmware {
            Firmware::Interleave => {
                topo::acpi::FirmwareNuma { srat: Table::NotInFirmware, slit: Table::NotInFirmware }
            }
            Firmware::Domains(d) => {
                let n = m.packages * d;
                let domains = (0..n)
                    .map(|id| Domain {
                        id,
                        cpus: m.cores_per_package / d,
                        memory_bytes: m.mem_per_package_bytes / u64::from(d),
                        hotplug_bytes: 0,
                        nonvolatile_bytes: 0,
                        generic_initiators: 0,
                    })
                    .collect();
                topo::acpi::FirmwareNuma {
                    srat: Table::Found(Srat {
                        revision: 3,
                        checksum_ok: true,
                        domains,
                        disabled_processors: 0,
                        other_structures: 0,
                    }),
                    slit: Table::Found(Slit {
                        revision: 1,
                        checksum_ok: true,
                        distances: self.firmware_slit().expect("domains: a SLIT"),
                    }),
                }
            }
        }
    }

    /// The settings the user declares with `--set` (BIOS switches Linux
    /// cannot see).
    pub fn declared(&self) -> BTreeMap<String, String> {
        let m = self.machine();
        let mut v = BTreeMap::new();
        match self.setting().firmware {
            Firmware::Interleave => {
                v.insert("bios.numa".into(), "off".into());
            }
            Firmware::Domains(d) => {
                v.insert("bios.numa".into(), "on".into());
                let (k, val) = m.family.declared(d);
                v.insert(k.into(), val);
            }
        }
        v
    }

    /// The configuration document a run stores (fingerprint included,
    /// `budget` outside it).
    pub fn configuration(&self, topo: &Topology, budget: &str) -> Configuration {
        let fw = self.firmware_numa();
        let text = |v: serde_json::Value| v.as_str().map(str::to_string);
        let mut c = Configuration {
            numa_mode: Some(
                text(serde_json::to_value(topo.numa_mode.kind).unwrap_or_default())
                    .map_or(Reading::Absent, Reading::Value),
            ),
            numa_mode_label: Some(
                topo.numa_mode.label.clone().map_or(Reading::Absent, Reading::Value),
            ),
            nodes: Some(topo.nodes.len() as u64),
            nodes_with_cpus: Some(topo.cpu_nodes().count() as u64),
            online_cpus: Some(topo.online_cpus.len() as u64),
            kernel: Some(Reading::Value(KERNEL.into())),
            os: Some(Reading::Value("Ubuntu 24.04.1 LTS".into())),
            cmdline: Some(Reading::Value(self.cmdline())),
            cmdline_options: Some(topo.cmdline.options.iter().cloned().collect()),
            thp_enabled: Some(Reading::Value("madvise".into())),
            thp_defrag: Some(Reading::Value("madvise".into())),
            numa_balancing: Some(Reading::Value(u64::from(self.nodes.len() > 1))),
            zone_reclaim_mode: Some(Reading::Value(0)),
            cpufreq_driver: Some(Reading::Value(
                match m_vendor(self) {
                    topo::Vendor::Amd => "acpi-cpufreq",
                    _ => "intel_pstate",
                }
                .into(),
            )),
            governor: Some(Reading::Value("performance".into())),
            epp: Some(Reading::Value("performance".into())),
            boost: Some(Reading::Value(true)),
            smt: Some(Reading::Value("off".into())),
            iommu: Some(Reading::Value("passthrough".into())),
            cgroup_restriction: Some(Reading::Value("none".into())),
            bios_vendor: Some(Reading::Value("American Megatrends International, LLC.".into())),
            bios_version: Some(Reading::Value("2.4.1".into())),
            bios_date: Some(Reading::Value("06/12/2024".into())),
            sys_vendor: Some(Reading::Value("Supermicro".into())),
            product_name: Some(Reading::Value("SYS-2029U".into())),
            microcode: Some(Reading::Value("0xd0003b9".into())),
            acpi_srat: Some(match &fw.srat {
                Table::Found(s) => AcpiSrat::Domains(FirmwareNuma::of(s)),
                _ => AcpiSrat::NotInFirmware,
            }),
            acpi_slit: Some(match &fw.slit {
                Table::Found(s) => s.describe(),
                _ => "none".into(),
            }),
            declared: Some(self.declared()),
            ..Default::default()
        };
        c.fingerprint = Some(c.settings_hash());
        c.budget = Some(budget.into());
        c
    }

    /// The machine document (the same whatever the setting).
    pub fn machine_doc(&self) -> MachineDoc {
        let m = self.machine();
        let desc = format!(
            "{}: {}x {}, {} cores, {} GiB",
            m.hostname,
            m.packages,
            m.model,
            m.cpus(),
            (m.mem_per_package_bytes * u64::from(m.packages)) >> 30
        );
        MachineDoc {
            fingerprint: Some(machine_fingerprint(m)),
            machine_id: Some(format!("{:016x}", topo::hash::fnv1a64(m.hostname.as_bytes()))),
            machine_id_source: Some("dmi_product_uuid".into()),
            description: Some(desc),
            installed_gib: Some((m.mem_per_package_bytes * u64::from(m.packages)) >> 30),
            hostname: Some(Reading::Value(m.hostname.clone())),
            cpu_model: Some(Reading::Value(m.model.clone())),
            cpu_vendor: Some(
                match m.family.vendor() {
                    topo::Vendor::Amd => "amd",
                    _ => "intel",
                }
                .into(),
            ),
            arch: Some(Reading::Value("x86_64".into())),
            packages: Some(results::context::Count::Number(u64::from(m.packages))),
            cores: Some(u64::from(m.cpus())),
            cpus: Some(results::context::Count::Number(u64::from(m.cpus()))),
            nodes: Some(results::context::Count::Number(u64::from(self.setting().os_nodes(m)))),
            mem_total_bytes: Some(m.mem_per_package_bytes * u64::from(m.packages)),
            dimms: Some(Reading::Absent),
            ..Default::default()
        }
    }
}

/// The kernel every modelled run was taken under.
pub const KERNEL: &str = "6.8.0-45-generic";

fn m_vendor(v: &View) -> topo::Vendor {
    v.machine().family.vendor()
}

/// The machine's fingerprint: its identity, never its settings.
pub fn machine_fingerprint(m: &Machine) -> String {
    let id = format!("{}|{}|{}|{}", m.hostname, m.model, m.packages, m.cores_per_package);
    format!("{:016x}", topo::hash::fnv1a64(id.as_bytes()))
}
