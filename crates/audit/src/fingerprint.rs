//! Fingerprints that let saved runs be grouped by machine and told apart by
//! configuration.
//!
//! The machine fingerprint must not change when a BIOS or OS setting does
//! (SNC on/off changes the node count, SMT off the CPU count, `numa=off`
//! both), so it is built only from what such settings leave alone: host
//! name, CPU model, packages, physical cores and installed memory. Installed
//! memory is the sum of the DIMMs in SMBIOS when readable, else `MemTotal`
//! rounded up coarsely ([`installed_gib`]), so boot-time huge pages, a
//! `crashkernel=` reservation or a slightly smaller `mem=` leave it alone.
//! The configuration document holds exactly the settings that change memory
//! behaviour (and the firmware, microcode, DIMM speed, cgroup restriction and
//! kernel command line), so two runs under different settings differ in it
//! and a report can list what differs. Its `fingerprint` field is the hash
//! of those settings alone: what a writer adds afterwards (the run's budget)
//! does not change it.

use serde_json::{json, Map, Value};
use topo::{SysRoot, Topology};

use crate::read::Read;
use crate::settings::Settings;
use crate::smbios::MemoryPopulation;

fn read_value<T: serde::Serialize>(r: &Read<T>) -> Value {
    match r {
        Read::Value(v) => serde_json::to_value(v).unwrap_or(Value::Null),
        Read::Absent => Value::Null,
        Read::Unreadable(_) => Value::String("unreadable".into()),
    }
}

/// The environment variable that names the host instead of the kernel's
/// host name, on the live machine only: a container's host name is its
/// pod's, and hosts simulated on one machine (the fleet tests) need their
/// own names.
pub const HOSTNAME_ENV: &str = "NUMAPROBE_HOSTNAME";

fn hostname(root: &SysRoot) -> Option<String> {
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

fn identity(hostname: Option<&str>, topo: &Topology, memory: &Read<MemoryPopulation>) -> String {
    let text = format!(
        "{}|{}|{}|{}|{}",
        hostname.unwrap_or(""),
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
    identity(hostname(root).as_deref(), topo, &crate::smbios::read(root))
}

/// The machine's identity document (`fingerprint`, `description` and the
/// facts behind them).
pub fn machine(root: &SysRoot, topo: &Topology, memory: &Read<MemoryPopulation>) -> Value {
    let hostname = hostname(root);
    let mem_gib = mem_gib(topo);
    let cores = topo.core_count();
    let dimms = match memory {
        Read::Value(m) => {
            let populated: Vec<_> = m.dimms.iter().filter(|d| d.populated()).collect();
            let types: std::collections::BTreeSet<&str> =
                populated.iter().filter_map(|d| d.memory_type.as_deref()).collect();
            json!({
                "modules": m.dimms.iter().filter(|d| d.size_bytes.unwrap_or(0) > 0).count(),
                "slots": m.dimms.len(),
                "peak_gbs_per_socket": m.sockets.iter().map(|s| s.peak_gbs).collect::<Vec<_>>(),
                // what the report's at-a-glance box shows
                "memory_type": types.into_iter().collect::<Vec<_>>().join("/"),
                "configured_speed_mts": populated.iter().filter_map(|d| d.configured_speed_mts.or(d.speed_mts)).min(),
                "channels": m.sockets.iter().map(|s| s.channels.len()).sum::<usize>(),
                "channels_populated": m.sockets.iter().map(|s| s.populated_channels.len()).sum::<usize>(),
                "module_sizes_bytes": m.sockets.iter().flat_map(|s| s.module_sizes_bytes.iter().copied()).collect::<std::collections::BTreeSet<u64>>(),
            })
        }
        Read::Absent => Value::Null,
        Read::Unreadable(why) => json!({ "unreadable": why }),
    };
    let description = format!(
        "{}{}x {}, {} cores, {:.0} GiB",
        hostname.as_deref().map(|h| format!("{h}: ")).unwrap_or_default(),
        topo.packages.len(),
        topo.cpu_model.as_deref().unwrap_or("unknown CPU"),
        cores,
        mem_gib
    );
    json!({
        "fingerprint": identity(hostname.as_deref(), topo, memory),
        "installed_gib": installed_gib(topo, memory),
        "description": description,
        "hostname": hostname,
        "cpu_model": topo.cpu_model,
        "cpu_vendor": topo.cpu_vendor,
        "arch": topo.arch,
        "packages": topo.packages.len(),
        "cores": cores,
        "cpus": topo.cpus.len(),
        "nodes": topo.nodes.len(),
        "mem_total_bytes": topo.system_memory.as_ref().map(|m| m.total_bytes).unwrap_or_else(|| topo.mem_total_bytes()),
        "dimms": dimms,
    })
}

/// The configuration document with the memory settings SMBIOS gives
/// (configured speed, DIMM population), and its `fingerprint`.
pub fn config_with_memory(
    topo: &Topology,
    settings: &Settings,
    memory: &Read<MemoryPopulation>,
) -> Value {
    let mut doc = config_settings(topo, settings);
    if let Value::Object(m) = &mut doc {
        let (speed, population) = memory_settings(memory);
        m.insert("memory_speed_mts".into(), speed);
        m.insert("dimm_population".into(), population);
    }
    seal(doc)
}

/// The configuration document without SMBIOS (see [`config_with_memory`]).
pub fn config(topo: &Topology, settings: &Settings) -> Value {
    seal(config_settings(topo, settings))
}

/// Adds `fingerprint`: the hash of the settings (keys sorted), so that
/// fields a writer adds later (`budget`) stay outside it.
fn seal(mut doc: Value) -> Value {
    let hash = format!("{:016x}", topo::hash::fnv1a64(doc.to_string().as_bytes()));
    if let Value::Object(m) = &mut doc {
        m.insert("fingerprint".into(), Value::String(hash));
    }
    doc
}

/// Seals `doc` again (see [`seal`]) after settings were added to it
/// (`declared`); its old `fingerprint` must be gone.
pub(crate) fn seal_in_place(doc: &mut Value) {
    *doc = seal(std::mem::take(doc));
}

/// The DIMMs' configured speed (one value, or `mixed (...)`) and population
/// (`8 of 16 slots: 8x 32 GiB DDR5`), from SMBIOS.
fn memory_settings(memory: &Read<MemoryPopulation>) -> (Value, Value) {
    let m = match memory {
        Read::Value(m) => m,
        Read::Absent => return (Value::Null, Value::Null),
        Read::Unreadable(_) => {
            let u = Value::String("unreadable".into());
            return (u.clone(), u);
        }
    };
    let populated: Vec<_> = m.dimms.iter().filter(|d| d.populated()).collect();
    let mut speeds: Vec<u32> = populated.iter().filter_map(|d| d.configured_speed_mts).collect();
    speeds.sort_unstable();
    speeds.dedup();
    let speed = match speeds.as_slice() {
        [] => Value::Null,
        [one] => json!(one),
        many => Value::String(format!(
            "mixed ({})",
            many.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
        )),
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
    let population = Value::String(format!(
        "{} of {} slots{}",
        populated.len(),
        m.dimms.len(),
        if list.is_empty() { String::new() } else { format!(": {list}") }
    ));
    (speed, population)
}

/// The settings that change what memory does.
fn config_settings(topo: &Topology, settings: &Settings) -> Value {
    let mut m = Map::new();
    m.insert("numa_mode".into(), json!(topo.numa_mode.kind));
    m.insert("numa_mode_label".into(), json!(topo.numa_mode.label));
    m.insert("nodes".into(), json!(topo.nodes.len()));
    m.insert("nodes_with_cpus".into(), json!(topo.cpu_nodes().count()));
    m.insert("online_cpus".into(), json!(topo.online_cpus.len()));
    m.insert("kernel".into(), read_value(&settings.kernel));
    let opts: Map<String, Value> =
        topo.cmdline.options.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    m.insert("cmdline_options".into(), Value::Object(opts));
    m.insert("thp_enabled".into(), read_value(&settings.thp_enabled));
    m.insert("thp_defrag".into(), read_value(&settings.thp_defrag));
    m.insert("numa_balancing".into(), read_value(&settings.numa_balancing));
    m.insert("zone_reclaim_mode".into(), read_value(&settings.zone_reclaim_mode));
    let uniform = |r: &Read<crate::settings::PerCpu>| match r {
        Read::Value(p) => match p.uniform() {
            Some(v) => Value::String(v.to_string()),
            None => Value::String(format!(
                "mixed ({})",
                p.by_value.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        },
        other => read_value(&other.as_ref().map(|_| ())),
    };
    m.insert("cpufreq_driver".into(), uniform(&settings.cpufreq.driver));
    m.insert("governor".into(), uniform(&settings.cpufreq.governor));
    m.insert("epp".into(), uniform(&settings.cpufreq.energy_performance_preference));
    m.insert("boost".into(), read_value(&settings.boost.enabled()));
    m.insert("smt".into(), read_value(&settings.smt.control));
    m.insert("iommu".into(), json!(settings.iommu.mode()));
    m.insert("cmdline".into(), read_value(&settings.cmdline));
    let cg = &topo.cgroup;
    m.insert(
        "cgroup_restriction".into(),
        if cg.restricts {
            let part = |name: &str, v: Option<String>| v.map(|v| format!("{name} {v}"));
            let parts: Vec<String> = [
                part("cpus", cg.cpus.as_ref().map(|c| c.to_list())),
                part("mems", cg.mems.as_ref().map(|n| n.to_list())),
            ]
            .into_iter()
            .flatten()
            .collect();
            Value::String(format!(
                "{}{}",
                parts.join(", "),
                cg.path.as_deref().map(|p| format!(" ({p})")).unwrap_or_default()
            ))
        } else {
            Value::String("none".into())
        },
    );
    let f = &settings.firmware;
    for (k, v) in [
        ("bios_vendor", &f.bios_vendor),
        ("bios_version", &f.bios_version),
        ("bios_date", &f.bios_date),
        ("sys_vendor", &f.sys_vendor),
        ("product_name", &f.product_name),
        ("board_vendor", &f.board_vendor),
        ("board_name", &f.board_name),
        ("board_version", &f.board_version),
        ("microcode", &f.microcode),
    ] {
        m.insert(k.into(), read_value(v));
    }
    m.extend(
        crate::firmware_state::config_fields(topo, settings)
            .into_iter()
            .map(|(k, v)| (k.into(), v)),
    );
    Value::Object(m)
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
        assert_eq!(a["fingerprint"], b["fingerprint"]);
        assert_eq!(a["fingerprint"], machine_fingerprint(&root, &changed));
        let mut other = topo.clone();
        other.cpu_model = Some("Another CPU".into());
        let c = machine(&root, &other, &mem);
        assert_ne!(a["fingerprint"], c["fingerprint"]);
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
        assert_eq!(b["thp_enabled"], "never");
        assert_eq!(b["numa_balancing"], 1);
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
        let fp = |t: &Topology| machine(&root, t, &Read::Absent)["fingerprint"].clone();
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
        });
        assert_eq!(installed_gib(&with_mem_total(&base, 40 * GIB), &pop), 64);
        let with_dimms = |t: &Topology| machine(&root, t, &pop)["fingerprint"].clone();
        assert_eq!(with_dimms(&base), with_dimms(&with_mem_total(&base, 50 * GIB)));
        let c = config_with_memory(&topo, &Settings::read(&root), &pop);
        assert_eq!(c["memory_speed_mts"], 4400);
        assert_eq!(c["dimm_population"], "2 of 3 slots: 2x 32 GiB DDR5");
    }

    #[test]
    fn budget_stays_outside_the_config_fingerprint() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let s = Settings::read(&root);
        let a = config(&topo, &s);
        let mut b = a.clone();
        b["budget"] = json!("quick");
        assert_eq!(a["fingerprint"], b["fingerprint"]);
        let mut s2 = s.clone();
        s2.firmware.bios_version = Read::Value("2.1.0".into());
        assert_ne!(config(&topo, &s2)["fingerprint"], a["fingerprint"]);
        assert_eq!(config(&topo, &s2)["bios_version"], "2.1.0");
    }
}
