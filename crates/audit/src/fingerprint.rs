//! Fingerprints that let saved runs be grouped by machine and told apart by
//! configuration.
//!
//! The machine fingerprint must not change when a BIOS or OS setting does
//! (SNC on/off changes the node count, SMT off the CPU count, `numa=off`
//! both), so it is built only from what such settings leave alone: host
//! name, CPU model, packages, physical cores and installed memory (rounded
//! to GiB). The configuration document holds exactly the settings that
//! change memory behaviour, so two runs under different settings differ in
//! it and a report can list what differs.

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
    topo.system_memory.as_ref().map(|m| m.total_bytes).unwrap_or_else(|| topo.mem_total_bytes())
        as f64
        / (1u64 << 30) as f64
}

fn identity(hostname: Option<&str>, topo: &Topology) -> String {
    let text = format!(
        "{}|{}|{}|{}|{}",
        hostname.unwrap_or(""),
        topo.cpu_model.as_deref().unwrap_or(""),
        topo.packages.len(),
        topo.core_count(),
        mem_gib(topo).round() as u64
    );
    format!("{:016x}", topo::hash::fnv1a64(text.as_bytes()))
}

/// The machine fingerprint alone (the `fingerprint` field of [`machine`]):
/// the key the store groups a machine's runs by, whatever its settings.
pub fn machine_fingerprint(root: &SysRoot, topo: &Topology) -> String {
    identity(hostname(root).as_deref(), topo)
}

/// The machine's identity document (`fingerprint`, `description` and the
/// facts behind them).
pub fn machine(root: &SysRoot, topo: &Topology, memory: &Read<MemoryPopulation>) -> Value {
    let hostname = hostname(root);
    let mem_gib = mem_gib(topo);
    let cores = topo.core_count();
    let dimms = match memory {
        Read::Value(m) => json!({
            "modules": m.dimms.iter().filter(|d| d.size_bytes.unwrap_or(0) > 0).count(),
            "slots": m.dimms.len(),
            "peak_gbs_per_socket": m.sockets.iter().map(|s| s.peak_gbs).collect::<Vec<_>>(),
        }),
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
        "fingerprint": identity(hostname.as_deref(), topo),
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

/// The configuration document: the settings that change what memory does.
pub fn config(topo: &Topology, settings: &Settings) -> Value {
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
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_fingerprint_ignores_settings_and_tracks_the_machine() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        let a = machine(&root, &topo, &Read::Absent);
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
        let b = machine(&root, &changed, &Read::Absent);
        assert_eq!(a["fingerprint"], b["fingerprint"]);
        assert_eq!(a["fingerprint"], machine_fingerprint(&root, &changed));
        let mut other = topo.clone();
        other.cpu_model = Some("Another CPU".into());
        let c = machine(&root, &other, &Read::Absent);
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
}
