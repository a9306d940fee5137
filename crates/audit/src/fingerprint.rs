//! Fingerprints that let saved runs be grouped by machine and told apart by
//! configuration.
//!
//! The machine fingerprint must not change when a BIOS or OS setting does
//! (SNC on/off changes the node count, SMT off the CPU count, `numa=off`
//! both), so it is built only from what such settings leave alone: the
//! machine's identity ([`machine_identity`]: its DMI UUID, else its
//! machine-id, else its host name), CPU model, packages, physical cores and
//! installed memory. Installed
//! memory is the sum of the DIMMs in SMBIOS when readable, else `MemTotal`
//! rounded up coarsely ([`installed_gib`]), so boot-time huge pages, a
//! `crashkernel=` reservation or a slightly smaller `mem=` leave it alone.
//! The configuration document holds exactly the settings that change memory
//! behaviour (and the firmware, microcode, DIMM speed, cgroup restriction and
//! kernel command line), so two runs under different settings differ in it
//! and a report can list what differs. Its `fingerprint` field is the hash
//! of those settings alone: what a writer adds afterwards (the run's budget)
//! does not change it.

use results::context::{Configuration, Count, DimmSummary, Dimms, Machine, Reading, Scalar};
use topo::{SysRoot, Topology};

use crate::read::Read;
use crate::settings::Settings;
use crate::smbios::MemoryPopulation;

/// A setting as the configuration document holds it.
fn reading<T: Clone>(r: &Read<T>) -> Reading<T> {
    match r {
        Read::Value(v) => Reading::Value(v.clone()),
        Read::Absent => Reading::Absent,
        Read::Unreadable(_) => Reading::Unreadable,
    }
}

/// The environment variable that names the host instead of the kernel's
/// host name, on the live machine only: a container's host name is its
/// pod's, and hosts simulated on one machine (the fleet tests) need their
/// own names.
pub const HOSTNAME_ENV: &str = "NUMAPROBE_HOSTNAME";

/// The host name a run records: `NUMAPROBE_HOSTNAME` on the live machine,
/// else the kernel's.
pub fn hostname(root: &SysRoot) -> Option<String> {
    if root.is_live() {
        if let Some(h) = std::env::var(HOSTNAME_ENV).ok().map(|h| h.trim().to_string()) {
            if !h.is_empty() {
                return Some(h);
            }
        }
    }
    root.read_optional("proc/sys/kernel/hostname")
        .ok()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The environment variable that names the machine's identity instead of
/// the one read from the machine, on the live machine only: hosts
/// simulated on one machine (the fleet tests) share its DMI UUID and
/// machine-id, and a container image's `/etc/machine-id` is the same in
/// every pod made from it.
pub const MACHINE_ID_ENV: &str = "NUMAPROBE_MACHINE_ID";

/// What tells one machine from another, whatever it is called: the DMI
/// (SMBIOS) product UUID when readable (as root) and real, else
/// `/etc/machine-id`, else the host name. `id` is a keyed FNV-1a 64 hash of
/// the value (16 hex digits), never the value itself: systemd asks that the
/// machine-id not be exposed, and a hash is enough to tell machines apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineIdentity {
    pub id: String,
    /// `NUMAPROBE_MACHINE_ID`, `dmi_product_uuid`, `machine_id` or
    /// `hostname`.
    pub source: &'static str,
}

/// Product UUIDs firmware writes when it has none of its own: every
/// machine with that board would be one machine.
const PLACEHOLDER_UUIDS: [&str; 3] = [
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "03000200-0400-0500-0006-000700080009",
];

/// A DMI product UUID when it is one (8-4-4-4-12 hex digits) and not a
/// placeholder, lower-cased.
fn real_uuid(text: &str) -> Option<String> {
    let u = text.trim().to_ascii_lowercase();
    let groups: Vec<&str> = u.split('-').collect();
    let shape = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    (shape && !PLACEHOLDER_UUIDS.contains(&u.as_str())).then_some(u)
}

/// A machine-id: 32 hex digits, not all zero.
fn real_machine_id(text: &str) -> Option<String> {
    let t = text.trim().to_ascii_lowercase();
    (t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit()) && t.bytes().any(|b| b != b'0'))
        .then_some(t)
}

fn keyed(source: &'static str, value: &str) -> MachineIdentity {
    let text = format!("numaprobe machine identity\0{source}\0{value}");
    MachineIdentity { id: format!("{:016x}", topo::hash::fnv1a64(text.as_bytes())), source }
}

/// The machine's identity (see [`MachineIdentity`]); `None` only when not
/// even a host name is known.
pub fn machine_identity(root: &SysRoot, hostname: Option<&str>) -> Option<MachineIdentity> {
    if root.is_live() {
        if let Some(v) = std::env::var(MACHINE_ID_ENV).ok().map(|v| v.trim().to_string()) {
            if !v.is_empty() {
                return Some(keyed(MACHINE_ID_ENV, &v));
            }
        }
    }
    // Unreadable (not root) or absent: the next source.
    let read = |rel: &str| root.read_optional(rel).ok().flatten();
    if let Some(u) = read("sys/class/dmi/id/product_uuid").as_deref().and_then(real_uuid) {
        return Some(keyed("dmi_product_uuid", &u));
    }
    if let Some(m) = read("etc/machine-id").as_deref().and_then(real_machine_id) {
        return Some(keyed("machine_id", &m));
    }
    hostname.map(|h| keyed("hostname", h))
}

fn mem_gib(topo: &Topology) -> f64 {
    mem_total_bytes(topo) as f64 / (1u64 << 30) as f64
}

fn mem_total_bytes(topo: &Topology) -> u64 {
    topo.system_memory.as_ref().map(|m| m.total_bytes).unwrap_or_else(|| topo.mem_total_bytes())
}

/// `MemTotal` rounded up to a step of one eighth of its leading power of
/// two (4 GiB steps from 32 to 64 GiB, 64 GiB steps from 512 GiB to 1 TiB),
/// in GiB. `MemTotal` is always a little below the installed memory (the
/// firmware, the kernel image, `crashkernel=` take their share), so this
/// lands on the installed size for the usual DIMM populations and does not
/// move when a reservation of a few percent comes or goes.
pub fn coarse_gib(mem_total_bytes: u64) -> u64 {
    let gib = (1u64 << 30) as f64;
    let g = mem_total_bytes as f64 / gib;
    if g <= 0.0 {
        return 0;
    }
    let lead = 2f64.powi(g.log2().floor() as i32);
    let step = (lead / 8.0).max(0.125);
    let rounded = (g / step - 1e-9).ceil() * step;
    rounded.ceil() as u64
}

/// Installed memory in GiB for the fingerprint: the DIMMs SMBIOS lists when
/// readable, else [`coarse_gib`] of `MemTotal`.
pub fn installed_gib(topo: &Topology, memory: &Read<MemoryPopulation>) -> u64 {
    if let Read::Value(m) = memory {
        let sum: u64 = m.dimms.iter().filter_map(|d| d.size_bytes).sum();
        if sum > 0 {
            return (sum as f64 / (1u64 << 30) as f64).round() as u64;
        }
    }
    coarse_gib(mem_total_bytes(topo))
}

/// The machine fingerprint: the machine's identity and its model. A machine
/// known only by its host name hashes that name (as fingerprints always
/// did), so two machines with one host name differ whenever a DMI UUID or
/// machine-id tells them apart, and a renamed machine keeps its fingerprint.
fn identity(
    hostname: Option<&str>,
    id: Option<&MachineIdentity>,
    topo: &Topology,
    memory: &Read<MemoryPopulation>,
) -> String {
    let who = match id {
        Some(i) if i.source != "hostname" => format!("{}:{}", i.source, i.id),
        _ => hostname.unwrap_or("").to_string(),
    };
    let text = format!(
        "{}|{}|{}|{}|{}",
        who,
        topo.cpu_model.as_deref().unwrap_or(""),
        topo.packages.len(),
        topo.core_count(),
        installed_gib(topo, memory)
    );
    format!("{:016x}", topo::hash::fnv1a64(text.as_bytes()))
}

/// The machine fingerprint alone (the `fingerprint` field of [`machine`]):
/// the key the store groups a machine's runs by, whatever its settings.
/// Reads SMBIOS itself (readable as root) so it agrees with [`machine`].
pub fn machine_fingerprint(root: &SysRoot, topo: &Topology) -> String {
    let hostname = hostname(root);
    let id = machine_identity(root, hostname.as_deref());
    identity(hostname.as_deref(), id.as_ref(), topo, &crate::smbios::read(root))
}

/// The machine's identity document (`fingerprint`, `description` and the
/// facts behind them).
pub fn machine(root: &SysRoot, topo: &Topology, memory: &Read<MemoryPopulation>) -> Machine {
    let hostname = hostname(root);
    let id = machine_identity(root, hostname.as_deref());
    let mem_gib = mem_gib(topo);
    let cores = topo.core_count();
    let dimms = match memory {
        Read::Value(m) => {
            let populated: Vec<_> = m.dimms.iter().filter(|d| d.populated()).collect();
            let types: std::collections::BTreeSet<&str> =
                populated.iter().filter_map(|d| d.memory_type.as_deref()).collect();
            let speed =
                populated.iter().filter_map(|d| d.configured_speed_mts.or(d.speed_mts)).min();
            // `null` where unknown, as the store has always written it
            let mut extra = results::context::Extra::new();
            if speed.is_none() {
                extra.insert("configured_speed_mts".into(), serde_json::Value::Null);
            }
            Reading::Value(Dimms::Summary(DimmSummary {
                modules: Some(
                    m.dimms.iter().filter(|d| d.size_bytes.unwrap_or(0) > 0).count() as u64
                ),
                slots: Some(m.dimms.len() as u64),
                peak_gbs_per_socket: Some(m.sockets.iter().map(|s| s.peak_gbs).collect()),
                // what the report's at-a-glance box shows
                memory_type: Some(types.into_iter().collect::<Vec<_>>().join("/")),
                configured_speed_mts: speed.map(u64::from),
                channels: Some(m.sockets.iter().map(|s| s.channels.len() as u64).sum()),
                channels_populated: Some(
                    m.sockets.iter().map(|s| s.populated_channels.len() as u64).sum(),
                ),
                module_sizes_bytes: Some(
                    m.sockets
                        .iter()
                        .flat_map(|s| s.module_sizes_bytes.iter().copied())
                        .collect::<std::collections::BTreeSet<u64>>()
                        .into_iter()
                        .collect(),
                ),
                extra,
                ..Default::default()
            }))
        }
        Read::Absent => Reading::Absent,
        Read::Unreadable(why) => Reading::Value(Dimms::Summary(DimmSummary {
            unreadable: Some(why.clone()),
            ..Default::default()
        })),
    };
    let description = format!(
        "{}{}x {}, {} cores, {:.0} GiB",
        hostname.as_deref().map(|h| format!("{h}: ")).unwrap_or_default(),
        topo.packages.len(),
        topo.cpu_model.as_deref().unwrap_or("unknown CPU"),
        cores,
        mem_gib
    );
    let or_absent = |v: Option<&String>| v.map_or(Reading::Absent, |v| Reading::Value(v.clone()));
    Machine {
        fingerprint: Some(identity(hostname.as_deref(), id.as_ref(), topo, memory)),
        machine_id: id.as_ref().map(|i| i.id.clone()),
        machine_id_source: id.as_ref().map(|i| i.source.to_string()),
        installed_gib: Some(installed_gib(topo, memory)),
        description: Some(description),
        hostname: Some(or_absent(hostname.as_ref())),
        cpu_model: Some(or_absent(topo.cpu_model.as_ref())),
        cpu_vendor: serde_json::to_value(topo.cpu_vendor)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string)),
        arch: Some(or_absent(topo.arch.as_ref())),
        packages: Some(Count::Number(topo.packages.len() as u64)),
        cores: Some(cores as u64),
        cpus: Some(Count::Number(topo.cpus.len() as u64)),
        nodes: Some(Count::Number(topo.nodes.len() as u64)),
        mem_total_bytes: Some(mem_total_bytes(topo)),
        dimms: Some(dimms),
        ..Default::default()
    }
}

/// The configuration document with the memory settings SMBIOS gives
/// (configured speed, DIMM population), and its `fingerprint`.
pub fn config_with_memory(
    topo: &Topology,
    settings: &Settings,
    memory: &Read<MemoryPopulation>,
) -> Configuration {
    let mut doc = config_settings(topo, settings);
    let (speed, population) = memory_settings(memory);
    doc.memory_speed_mts = Some(speed);
    doc.dimm_population = Some(population);
    seal(doc)
}

/// The configuration document without SMBIOS (see [`config_with_memory`]).
pub fn config(topo: &Topology, settings: &Settings) -> Configuration {
    seal(config_settings(topo, settings))
}

/// Adds `fingerprint`: the hash of the settings (keys sorted), so that
/// fields a writer adds later (`budget`) stay outside it.
fn seal(mut doc: Configuration) -> Configuration {
    doc.fingerprint = Some(doc.settings_hash());
    doc
}

/// The DIMMs' configured speed (one value, or `mixed (...)`) and population
/// (`8 of 16 slots: 8x 32 GiB DDR5`), from SMBIOS.
fn memory_settings(memory: &Read<MemoryPopulation>) -> (Reading<Scalar>, Reading<String>) {
    let m = match memory {
        Read::Value(m) => m,
        Read::Absent => return (Reading::Absent, Reading::Absent),
        Read::Unreadable(_) => return (Reading::Unreadable, Reading::Unreadable),
    };
    let populated: Vec<_> = m.dimms.iter().filter(|d| d.populated()).collect();
    let mut speeds: Vec<u32> = populated.iter().filter_map(|d| d.configured_speed_mts).collect();
    speeds.sort_unstable();
    speeds.dedup();
    let speed = match speeds.as_slice() {
        [] => Reading::Absent,
        [one] => Reading::Value(Scalar::Int(i64::from(*one))),
        many => Reading::Value(Scalar::Text(format!(
            "mixed ({})",
            many.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
        ))),
    };
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for d in &populated {
        let size = d
            .size_bytes
            .map(|b| format!("{} GiB", b / (1u64 << 30)))
            .unwrap_or_else(|| "unknown size".into());
        let key = format!("{size} {}", d.memory_type.as_deref().unwrap_or("")).trim().to_string();
        *kinds.entry(key).or_default() += 1;
    }
    let list = kinds.iter().map(|(k, n)| format!("{n}x {k}")).collect::<Vec<_>>().join(", ");
    let population = Reading::Value(format!(
        "{} of {} slots{}",
        populated.len(),
        m.dimms.len(),
        if list.is_empty() { String::new() } else { format!(": {list}") }
    ));
    (speed, population)
}

/// How much of the machine the run was allowed, in counts only
/// (`1 of 64 CPUs, 2 of 2 memory nodes`; `none` when nothing is withheld):
/// the cgroup's path and CPU numbers name the node and the job (Slurm's
/// `/slurm_NODE/uid_U/job_J`), so every node of one job would differ from
/// every other. The topology's `cgroup` section keeps them.
fn cgroup_restriction(topo: &Topology) -> String {
    let cg = &topo.cgroup;
    if !cg.restricts {
        return "none".into();
    }
    let online = &topo.online_cpus;
    let cpus = online
        .iter()
        .filter(|c| cg.cpus.as_ref().is_none_or(|s| s.contains(*c)))
        .filter(|c| cg.affinity.as_ref().is_none_or(|s| s.contains(*c)))
        .count();
    let mem_nodes: Vec<u32> =
        topo.nodes.iter().filter(|n| n.mem_total_bytes > 0).map(|n| n.id).collect();
    let mems =
        mem_nodes.iter().filter(|n| cg.mems.as_ref().is_none_or(|s| s.contains(**n))).count();
    format!("{cpus} of {} CPUs, {mems} of {} memory nodes", online.len(), mem_nodes.len())
}

/// The settings that change what memory does.
fn config_settings(topo: &Topology, settings: &Settings) -> Configuration {
    let uniform = |r: &Read<crate::settings::PerCpu>| match r {
        Read::Value(p) => Reading::Value(match p.uniform() {
            Some(v) => v.to_string(),
            None => {
                format!("mixed ({})", p.by_value.keys().cloned().collect::<Vec<_>>().join(", "))
            }
        }),
        Read::Absent => Reading::Absent,
        Read::Unreadable(_) => Reading::Unreadable,
    };
    let text = |v: serde_json::Result<serde_json::Value>| {
        v.ok().and_then(|v| v.as_str().map(str::to_string)).map_or(Reading::Absent, Reading::Value)
    };
    let cgroup_restriction = cgroup_restriction(topo);
    let f = &settings.firmware;
    let mut c = Configuration {
        numa_mode: Some(text(serde_json::to_value(topo.numa_mode.kind))),
        numa_mode_label: Some(topo.numa_mode.label.clone().map_or(Reading::Absent, Reading::Value)),
        nodes: Some(topo.nodes.len() as u64),
        nodes_with_cpus: Some(topo.cpu_nodes().count() as u64),
        online_cpus: Some(topo.online_cpus.len() as u64),
        kernel: Some(reading(&settings.kernel)),
        // written only where read, so configurations of roots without
        // os-release (older captures) keep their fingerprint
        os: match reading(&settings.os) {
            Reading::Absent => None,
            r => Some(r),
        },
        cmdline_options: Some(topo.cmdline.options.iter().cloned().collect()),
        thp_enabled: Some(reading(&settings.thp_enabled)),
        thp_defrag: Some(reading(&settings.thp_defrag)),
        numa_balancing: Some(reading(&settings.numa_balancing)),
        zone_reclaim_mode: Some(reading(&settings.zone_reclaim_mode)),
        cpufreq_driver: Some(uniform(&settings.cpufreq.driver)),
        governor: Some(uniform(&settings.cpufreq.governor)),
        epp: Some(uniform(&settings.cpufreq.energy_performance_preference)),
        boost: Some(reading(&settings.boost.enabled())),
        smt: Some(reading(&settings.smt.control)),
        iommu: Some(text(serde_json::to_value(settings.iommu.mode()))),
        cmdline: Some(reading(&settings.cmdline)),
        cgroup_restriction: Some(Reading::Value(cgroup_restriction)),
        bios_vendor: Some(reading(&f.bios_vendor)),
        bios_version: Some(reading(&f.bios_version)),
        bios_date: Some(reading(&f.bios_date)),
        sys_vendor: Some(reading(&f.sys_vendor)),
        product_name: Some(reading(&f.product_name)),
        board_vendor: Some(reading(&f.board_vendor)),
        board_name: Some(reading(&f.board_name)),
        board_version: Some(reading(&f.board_version)),
        microcode: Some(reading(&f.microcode)),
        ..Default::default()
    };
    crate::firmware_state::fill(&mut c, topo, settings);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_fingerprint_ignores_settings_and_tracks_the_machine() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let mem = crate::smbios::read(&root);
        let a = machine(&root, &topo, &mem);
        // SMT on (a sibling thread of CPU 0's core appears) and a different
        // NUMA mode: CPUs and nodes change, the machine does not.
        let mut changed = topo.clone();
        let mut sibling = changed.cpus[0].clone();
        sibling.id = 999;
        sibling.thread_siblings.insert(999);
        changed.cpus[0].thread_siblings.insert(999);
        changed.cpus.push(sibling);
        changed.nodes.push(changed.nodes[0].clone());
        assert_eq!(changed.core_count(), topo.core_count());
        let b = machine(&root, &changed, &mem);
        assert_eq!(a.fingerprint, b.fingerprint);
        assert_eq!(a.fingerprint.as_deref(), Some(machine_fingerprint(&root, &changed).as_str()));
        let mut other = topo.clone();
        other.cpu_model = Some("Another CPU".into());
        let c = machine(&root, &other, &mem);
        assert_ne!(a.fingerprint, c.fingerprint);
    }

    /// A root holding only the given files (relative path, contents).
    fn root_with(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let root = SysRoot::new(dir.path()).unwrap();
        (dir, root)
    }

    const UUID: (&str, &str) =
        ("sys/class/dmi/id/product_uuid", "4C4C4544-0042-3510-8052-B4C04F4A4E32\n");
    const MID: (&str, &str) = ("etc/machine-id", "0f6a5c2e9b1d4e7f8a3b2c1d0e9f8a7b\n");

    #[test]
    fn identity_is_the_dmi_uuid_else_the_machine_id_else_the_host_name() {
        let (_d, both) = root_with(&[UUID, MID]);
        let a = machine_identity(&both, Some("clone")).unwrap();
        assert_eq!(a.source, "dmi_product_uuid");
        assert_eq!(a.id.len(), 16);
        assert!(!a.id.contains("4c4c4544"), "a hash, never the value");
        // The same UUID in lower case is the same machine.
        let (_d, lower) = root_with(&[(UUID.0, "4c4c4544-0042-3510-8052-b4c04f4a4e32")]);
        assert_eq!(machine_identity(&lower, None).unwrap(), a);
        // A placeholder UUID (or not a UUID) does not count: the machine-id does.
        for junk in ["03000200-0400-0500-0006-000700080009", "Not Settable", ""] {
            let (_d, r) = root_with(&[(UUID.0, junk), MID]);
            assert_eq!(machine_identity(&r, Some("clone")).unwrap().source, "machine_id", "{junk}");
        }
        let (_d, mid) = root_with(&[MID]);
        let m = machine_identity(&mid, Some("clone")).unwrap();
        assert_eq!(m.source, "machine_id");
        assert_ne!(m.id, a.id);
        let (_d, none) = root_with(&[("etc/machine-id", "00000000000000000000000000000000")]);
        let h = machine_identity(&none, Some("clone")).unwrap();
        assert_eq!(h.source, "hostname");
        assert_eq!(machine_identity(&none, Some("other")).unwrap().source, "hostname");
        assert_ne!(machine_identity(&none, Some("other")).unwrap().id, h.id);
        assert_eq!(machine_identity(&none, None), None);
    }

    /// Cloned images share a host name: their fingerprints still differ
    /// when their DMI UUIDs do, and a renamed machine keeps its own.
    #[test]
    fn the_fingerprint_follows_the_identity_not_the_host_name() {
        let topo = Topology::discover(&SysRoot::live()).unwrap();
        let fp = |root: &SysRoot, host: &str| {
            let id = machine_identity(root, Some(host));
            identity(Some(host), id.as_ref(), &topo, &Read::Absent)
        };
        let (_d, one) = root_with(&[UUID]);
        let (_d, two) = root_with(&[(UUID.0, "4c4c4544-0042-3510-8052-b4c04f4a4e33")]);
        assert_ne!(fp(&one, "clone"), fp(&two, "clone"));
        assert_eq!(fp(&one, "old-name"), fp(&one, "new-name"));
        // Known by its host name only: the name is the identity.
        let (_d, bare) = root_with(&[]);
        assert_ne!(fp(&bare, "a"), fp(&bare, "b"));
    }

    #[test]
    fn the_cgroup_restriction_names_no_node_or_job() {
        let root = SysRoot::live();
        let mut topo = Topology::discover(&root).unwrap();
        let first = topo.online_cpus.iter().next().unwrap();
        topo.cgroup.restricts = true;
        topo.cgroup.path = Some("/slurm_node17/uid_0/job_4242/step_0".into());
        topo.cgroup.cpus = Some(std::iter::once(first).collect());
        topo.cgroup.affinity = None;
        topo.cgroup.mems = None;
        let text = cgroup_restriction(&topo);
        let nodes = topo.nodes.iter().filter(|n| n.mem_total_bytes > 0).count();
        assert_eq!(
            text,
            format!("1 of {} CPUs, {nodes} of {nodes} memory nodes", topo.online_cpus.len())
        );
        // Another node of the same job, another CPU number: equal.
        let mut other = topo.clone();
        other.cgroup.path = Some("/slurm_node18/uid_0/job_4242/step_0".into());
        other.cgroup.cpus = Some(std::iter::once(first + 1).collect());
        other.online_cpus = topo.online_cpus.iter().chain([first + 1]).collect();
        topo.online_cpus = other.online_cpus.clone();
        assert_eq!(cgroup_restriction(&topo), cgroup_restriction(&other));
        topo.cgroup.restricts = false;
        assert_eq!(cgroup_restriction(&topo), "none");
    }

    #[test]
    fn config_tells_settings_apart() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let s = Settings::read(&root);
        let a = config(&topo, &s);
        let mut s2 = s.clone();
        s2.thp_enabled = Read::Value("never".into());
        s2.numa_balancing = Read::Value(1);
        let b = config(&topo, &s2);
        assert_ne!(a, b);
        assert_eq!(b.thp_enabled, Some(Reading::Value("never".into())));
        assert_eq!(b.numa_balancing, Some(Reading::Value(1)));
    }

    fn with_mem_total(topo: &Topology, bytes: u64) -> Topology {
        let mut t = topo.clone();
        match &mut t.system_memory {
            Some(m) => m.total_bytes = bytes,
            None => panic!("the live topology has MemTotal"),
        }
        t
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn coarse_rounding_lands_on_installed_sizes() {
        // MemTotal a few percent under the installed size -> the installed size.
        for (mem_total_mib, installed) in [
            (62 * 1024 + 300, 64),
            (63 * 1024 + 900, 64),
            (61 * 1024 + 512, 64),
            (94 * 1024, 96),
            (188 * 1024, 192),
            (377 * 1024, 384),
            (755 * 1024, 768),
            (1510 * 1024, 1536),
            (1430, 2),
            (15 * 1024 + 600, 16),
        ] {
            assert_eq!(coarse_gib(mem_total_mib << 20), installed, "{mem_total_mib} MiB");
        }
        // A real change of memory moves it.
        assert_eq!(coarse_gib(31 << 30), 32);
        assert_eq!(coarse_gib(46 << 30), 48);
        assert_eq!(coarse_gib(0), 0);
    }

    /// Boot-time huge pages, `crashkernel=` and a slightly smaller `mem=`
    /// change MemTotal by a little: the machine fingerprint must not move.
    #[test]
    fn machine_fingerprint_survives_small_memtotal_changes() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let base = with_mem_total(&topo, 62 * GIB + 700 * (1 << 20));
        let fp = |t: &Topology| machine(&root, t, &Read::Absent).fingerprint;
        let a = fp(&base);
        for delta_mib in [-2048i64, -512, -128, 256, 1000] {
            let t = with_mem_total(
                &base,
                (62 * GIB as i64 + 700 * (1 << 20) + (delta_mib << 20)) as u64,
            );
            assert_eq!(fp(&t), a, "MemTotal changed by {delta_mib} MiB");
        }
        // Half the memory gone is another machine.
        assert_ne!(fp(&with_mem_total(&base, 31 * GIB)), a);
        // With SMBIOS readable, the DIMMs decide, whatever MemTotal says.
        let dimm = |size: Option<u64>| crate::smbios::Dimm {
            handle: 0,
            locator: Some("DIMM_A1".into()),
            bank_locator: None,
            size_bytes: size,
            size_unknown: false,
            memory_type: Some("DDR5".into()),
            speed_mts: Some(4800),
            configured_speed_mts: Some(4400),
            manufacturer: None,
            part_number: None,
            rank: None,
            socket: None,
            channel: None,
        };
        let pop = Read::Value(MemoryPopulation {
            smbios_version: None,
            processor_sockets: 1,
            dimms: vec![dimm(Some(32 * GIB)), dimm(Some(32 * GIB)), dimm(None)],
            locator_scheme_known: false,
            sockets: vec![],
            notes: vec![],
            assumed: vec![],
        });
        assert_eq!(installed_gib(&with_mem_total(&base, 40 * GIB), &pop), 64);
        let with_dimms = |t: &Topology| machine(&root, t, &pop).fingerprint;
        assert_eq!(with_dimms(&base), with_dimms(&with_mem_total(&base, 50 * GIB)));
        let c = config_with_memory(&topo, &Settings::read(&root), &pop);
        assert_eq!(c.memory_speed_mts, Some(Reading::Value(Scalar::Int(4400))));
        assert_eq!(c.dimm_population, Some(Reading::Value("2 of 3 slots: 2x 32 GiB DDR5".into())));
    }

    #[test]
    fn budget_stays_outside_the_config_fingerprint() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let s = Settings::read(&root);
        let a = config(&topo, &s);
        let mut b = a.clone();
        b.budget = Some("quick".into());
        assert_eq!(b.settings_hash(), a.fingerprint.clone().unwrap());
        let mut s2 = s.clone();
        s2.firmware.bios_version = Read::Value("2.1.0".into());
        assert_ne!(config(&topo, &s2).fingerprint, a.fingerprint);
        assert_eq!(config(&topo, &s2).bios_version, Some(Reading::Value("2.1.0".into())));
    }

    /// The OS distribution is read under the root into the configuration
    /// (and its fingerprint); a root without os-release writes nothing, so
    /// older captures keep their fingerprint.
    #[test]
    fn the_os_distribution_is_part_of_the_configuration() {
        let topo = Topology::discover(&SysRoot::live()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        let none = config(&topo, &Settings::read(&root));
        assert_eq!(none.os, None);
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(dir.path().join("etc/os-release"), "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n")
            .unwrap();
        let with = config(&topo, &Settings::read(&root));
        assert_eq!(with.os, Some(Reading::Value("Ubuntu 24.04.1 LTS".into())));
        assert_ne!(with.fingerprint, none.fingerprint);
    }
}
