//! Every rule fires on a case built for it and stays quiet on one that
//! should not trigger it. Settings come from the fixture trees in
//! tests/data (untuned/ and tuned/); topologies are built here.

use std::path::PathBuf;

use audit::{Evidence, MemoryPopulation, Profile, Read, Report, Settings};
use results::audit::{Needs, Severity};
use results::Record;
use serde_json::json;
use topo::*;

mod support;
use support::TERMS;

/// A result read from stored JSON, as the store reads it.
fn read(kind: &str, v: serde_json::Value) -> Record {
    results::upgrade::read(kind, &v).record
}

/// A local bandwidth result of `node`.
fn local_bw(node: u32, gbs: f64) -> Record {
    let v = json!({"mode": "local", "kernel": "triad", "cpu_node": node, "mem_node": node,
                   "best_gbs": gbs});
    read("bw", v)
}

fn data(name: &str) -> SysRoot {
    SysRoot::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap()
}

fn set(s: &str) -> CpuSet {
    CpuSet::parse_list(s).unwrap()
}

const GIB: u64 = 1 << 30;

/// The 2-socket, 2-node, 8-CPU machine of tests/data/tuned, discovered by
/// the topo crate (so the tests follow its model as it grows).
fn two_node() -> Topology {
    let t = Topology::discover(&data("tuned")).unwrap();
    assert_eq!((t.packages.len(), t.cpu_nodes().count(), t.cpus.len()), (2, 2, 8), "{t:#?}");
    assert_eq!(t.numa_mode.kind, NumaModeKind::NodePerPackage);
    t
}

/// The same machine with another NUMA mode reported.
fn machine(nodes_per_pkg: u32, kind: NumaModeKind) -> Topology {
    let mut t = two_node();
    t.numa_mode.kind = kind;
    t.numa_mode.nodes_per_package = Some(nodes_per_pkg);
    t.numa_mode.label = (nodes_per_pkg > 1).then(|| format!("SNC{nodes_per_pkg}"));
    if matches!(kind, NumaModeKind::DisabledByFirmware | NumaModeKind::DisabledByKernel) {
        t.nodes.truncate(1);
        t.nodes[0].cpus = set("0-7");
        t.nodes[0].distances = vec![10];
    }
    t
}

fn single_node() -> Topology {
    let mut t = two_node();
    t.nodes.truncate(1);
    t.nodes[0].distances = vec![10];
    t.packages.truncate(1);
    t.cpus.truncate(4);
    t.numa_mode.kind = NumaModeKind::SingleNode;
    t
}

fn report(
    t: &Topology,
    s: &Settings,
    mem: Read<MemoryPopulation>,
    ev: Evidence,
    p: Profile,
) -> Report {
    Report::from_parts("test".into(), t, s.clone(), mem, ev, p, TERMS)
}

fn untuned() -> Settings {
    Settings::read(&data("untuned"))
}
fn tuned() -> Settings {
    Settings::read(&data("tuned"))
}

fn sev(r: &Report, id: &str) -> Option<Severity> {
    r.finding(id).map(|f| f.severity)
}

/// Fires: a finding at `min` severity or above. Quiet: absent or `Ok`.
#[track_caller]
fn fires(r: &Report, id: &str, min: Severity) {
    let f = r.finding(id).unwrap_or_else(|| panic!("no finding {id}: {:#?}", r.findings));
    assert!(f.severity >= min, "{id}: {:?} < {min:?}: {f:#?}", f.severity);
    assert!(!f.found.is_empty() && !f.expected.is_empty() && !f.why.is_empty(), "{f:#?}");
    if f.severity >= Severity::Warn {
        assert!(!f.fix.is_empty(), "{id} fires without a fix: {f:#?}");
    }
}

#[track_caller]
fn quiet(r: &Report, id: &str) {
    match r.finding(id) {
        None => {}
        Some(f) => assert_eq!(f.severity, Severity::Ok, "{id} should be quiet: {f:#?}"),
    }
}

fn nomem() -> Read<MemoryPopulation> {
    Read::Absent
}

// ------------------------------------------------------------ settings read

#[test]
fn settings_are_read_from_the_fixture_trees() {
    let s = untuned();
    assert_eq!(s.thp_enabled, Read::Value("always".into()));
    assert_eq!(s.thp_defrag, Read::Value("always".into()));
    assert_eq!(s.numa_balancing, Read::Value(1));
    assert_eq!(s.zone_reclaim_mode, Read::Value(1));
    assert_eq!(s.swappiness, Read::Value(60));
    assert_eq!(s.swap_total_bytes, Read::Value(8 * GIB));
    assert_eq!(s.kernel, Read::Value("6.1.0-test".into()));
    let g = s.cpufreq.governor.value().unwrap();
    assert_eq!(g.uniform(), None);
    assert_eq!(g.by_value["powersave"], set("0-3"));
    assert_eq!(s.boost.enabled(), Read::Value(false));
    let states = s.cpuidle.states.value().unwrap();
    assert_eq!(states.len(), 4);
    assert_eq!((states[3].name.as_str(), states[3].exit_latency_us), ("C6", 133));
    assert_eq!(s.smt.control, Read::Value("on".into()));
    assert_eq!(s.iommu.mode(), audit::settings::IommuMode::Translated);
    assert_eq!(s.isolcpus, Read::Absent);
    let hp = s.hugepages.value().unwrap();
    assert!(hp.iter().any(|h| h.node == 0 && h.page_size_bytes == 2 << 20 && h.total == 1024));

    let t = tuned();
    assert_eq!(t.isolcpus, Read::Value("managed_irq,domain,2-3,6-7".into()));
    assert_eq!(t.nohz_full, Read::Value("2-3,6-7".into()));
    assert_eq!(t.iommu.mode(), audit::settings::IommuMode::Passthrough);
    assert_eq!(t.iommu.cmdline.len(), 2);
    assert_eq!(t.cpuidle.states.value().unwrap()[3].disabled_on, set("0-7"));
    assert_eq!(t.boost.enabled(), Read::Value(true));
}

#[test]
fn empty_root_gives_absent_not_values() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings::read(&SysRoot::new(dir.path()).unwrap());
    assert_eq!(s.numa_balancing, Read::Absent);
    assert_eq!(s.cpufreq.governor, Read::Absent);
    assert_eq!(s.cpuidle.states, Read::Absent);
    assert_eq!(s.cmdline, Read::Absent);
    assert_eq!(s.hugepages, Read::Absent);
    assert_eq!(audit::smbios::read(&SysRoot::new(dir.path()).unwrap()), Read::Absent);
    // The rules say so instead of guessing.
    let r = report(&two_node(), &s, nomem(), Evidence::default(), Profile::Database);
    for id in [
        "kernel.numa_balancing",
        "kernel.zone_reclaim_mode",
        "kernel.thp_enabled",
        "cpu.governor",
        "memory.population",
    ] {
        let f = r.finding(id).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(f.severity, Severity::Unknown, "{f:#?}");
    }
}

#[test]
fn unreadable_files_say_could_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("proc/sys/vm");
    std::fs::create_dir_all(&p).unwrap();
    // A directory where a file is expected: reading it fails (EISDIR), even as root.
    std::fs::create_dir_all(p.join("zone_reclaim_mode")).unwrap();
    std::fs::create_dir_all(dir.path().join("sys/firmware/dmi/tables/DMI")).unwrap();
    let root = SysRoot::new(dir.path()).unwrap();
    let s = Settings::read(&root);
    assert!(matches!(s.zone_reclaim_mode, Read::Unreadable(_)), "{:?}", s.zone_reclaim_mode);
    let mem = audit::smbios::read(&root);
    assert!(matches!(mem, Read::Unreadable(_)), "{mem:?}");
    let r = report(&two_node(), &s, mem, Evidence::default(), Profile::General);
    let f = r.finding("kernel.zone_reclaim_mode").unwrap();
    assert_eq!(f.severity, Severity::Unknown);
    assert!(f.found.starts_with("could not read"), "{}", f.found);
    let f = r.finding("memory.population").unwrap();
    assert!(f.found.starts_with("could not read") && f.found.contains("DMI"), "{}", f.found);
    // refused for want of permission: the fix says to audit as root
    let mut s = s;
    s.zone_reclaim_mode = Read::Unreadable("Permission denied (os error 13)".into());
    let r = report(&two_node(), &s, nomem(), Evidence::default(), Profile::General);
    let f = r.finding("kernel.zone_reclaim_mode").unwrap();
    assert_eq!(f.fix, "run numaprobe audit as root");
    assert_eq!(f.needs, results::audit::Needs::Runtime);
}

// ------------------------------------------------------------ NUMA

#[test]
fn numa_mode_firmware_interleave_vs_numa_off() {
    let s = tuned();
    let fw = machine(1, NumaModeKind::DisabledByFirmware);
    let ev = Evidence { latency_groups: Some(2), ..Default::default() };
    let r = report(&fw, &s, nomem(), ev, Profile::Database);
    fires(&r, "numa.mode", Severity::Critical);
    let f = r.finding("numa.mode").unwrap();
    assert!(f.fix.contains("Node Interleaving") && f.needs == Needs::Bios, "{f:#?}");
    assert!(f.evidence.as_deref().unwrap().contains("2 distinct latency groups"));

    // Without the kernel command line, numa=off is not ruled out: said, not guessed.
    let mut nocmd = s.clone();
    nocmd.cmdline = Read::Absent;
    let r = report(&fw, &nocmd, nomem(), Evidence::default(), Profile::Database);
    let f = r.finding("numa.mode").unwrap();
    assert!(f.found.contains("numa=off is not ruled out"), "{}", f.found);
    assert!(f.fix.contains("/proc/cmdline") && f.fix.contains("Node Interleaving"), "{}", f.fix);

    let k = machine(1, NumaModeKind::DisabledByKernel);
    let r = report(&k, &s, nomem(), Evidence::default(), Profile::General);
    fires(&r, "numa.mode", Severity::Warn);
    let f = r.finding("numa.mode").unwrap();
    assert!(f.fix.contains("numa=off") && f.needs == Needs::Reboot, "{f:#?}");

    let mut fake = two_node();
    fake.numa_mode.kind = NumaModeKind::Fake;
    fires(
        &report(&fake, &s, nomem(), Evidence::default(), Profile::General),
        "numa.mode",
        Severity::Warn,
    );

    quiet(&report(&two_node(), &s, nomem(), Evidence::default(), Profile::Database), "numa.mode");
    quiet(
        &report(&single_node(), &s, nomem(), Evidence::default(), Profile::Database),
        "numa.mode",
    );
}

#[test]
fn sub_numa_clustering_depends_on_profile() {
    let s = tuned();
    let snc = machine(2, NumaModeKind::NodesPerPackage);
    fires(
        &report(&snc, &s, nomem(), Evidence::default(), Profile::Database),
        "numa.sub_numa",
        Severity::Warn,
    );
    quiet(&report(&snc, &s, nomem(), Evidence::default(), Profile::Hpc), "numa.sub_numa");
    fires(
        &report(&two_node(), &s, nomem(), Evidence::default(), Profile::Hpc),
        "numa.sub_numa",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &s, nomem(), Evidence::default(), Profile::Database),
        "numa.sub_numa",
    );
}

#[test]
fn remote_penalty_needs_evidence() {
    let s = tuned();
    let ev = Evidence::from_records(&[
        read("lat", json!({"mode":"matrix","cpu_node":0,"mem_node":0,"median_ns":100.0})),
        read("lat", json!({"mode":"matrix","cpu_node":0,"mem_node":1,"median_ns":180.0})),
    ]);
    let r = report(&two_node(), &s, nomem(), ev, Profile::Database);
    fires(&r, "numa.remote_penalty", Severity::Warn);
    assert!(r
        .finding("numa.remote_penalty")
        .unwrap()
        .found
        .contains("remote latency 1.8x local: bind instances to nodes"));
    quiet(
        &report(&two_node(), &s, nomem(), Evidence::default(), Profile::Database),
        "numa.remote_penalty",
    );
    let small = Evidence { remote_local_latency_ratio: Some(1.1), ..Default::default() };
    quiet(&report(&two_node(), &s, nomem(), small, Profile::Database), "numa.remote_penalty");
}

#[test]
fn every_profile_gives_its_placement_recommendation() {
    let s = tuned();
    let mut fixes = std::collections::BTreeSet::new();
    for p in Profile::ALL {
        let r = report(&two_node(), &s, nomem(), Evidence::default(), p);
        fires(&r, "placement.profile", Severity::Info);
        fixes.insert(r.finding("placement.profile").unwrap().fix.clone());
    }
    assert_eq!(fixes.len(), Profile::ALL.len(), "profiles share a recommendation");
    quiet(
        &report(&single_node(), &s, nomem(), Evidence::default(), Profile::Database),
        "placement.profile",
    );
}

// ------------------------------------------------------------ kernel

#[test]
fn numa_balancing_rule() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database);
    fires(&r, "kernel.numa_balancing", Severity::Warn);
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.numa_balancing",
    );
    quiet(
        &report(&single_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.numa_balancing",
    );
    fires(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::General),
        "kernel.numa_balancing",
        Severity::Info,
    );
}

#[test]
fn zone_reclaim_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.zone_reclaim_mode",
        Severity::Critical,
    );
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::General),
        "kernel.zone_reclaim_mode",
        Severity::Warn,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.zone_reclaim_mode",
    );
    quiet(
        &report(&single_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.zone_reclaim_mode",
    );
}

#[test]
fn thp_rules() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency);
    fires(&r, "kernel.thp_enabled", Severity::Warn);
    fires(&r, "kernel.thp_defrag", Severity::Warn);
    let r = report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Latency);
    quiet(&r, "kernel.thp_enabled");
    quiet(&r, "kernel.thp_defrag");
    // HPC wants THP always: the tuned (madvise) tree is a recommendation there.
    fires(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Hpc),
        "kernel.thp_enabled",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Hpc),
        "kernel.thp_enabled",
    );
}

#[test]
fn hugepages_rule() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database);
    fires(&r, "kernel.hugepages", Severity::Warn);
    assert!(r.finding("kernel.hugepages").unwrap().found.contains("uneven"));
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.hugepages",
    );
    let mut none = tuned();
    none.hugepages = Read::Value(vec![]);
    fires(
        &report(&two_node(), &none, nomem(), Evidence::default(), Profile::Virtualization),
        "kernel.hugepages",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &none, nomem(), Evidence::default(), Profile::Hpc),
        "kernel.hugepages",
    );
}

#[test]
fn swappiness_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.swappiness",
        Severity::Warn,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Database),
        "kernel.swappiness",
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Hpc),
        "kernel.swappiness",
    );
    let mut noswap = untuned();
    noswap.swap_total_bytes = Read::Value(0);
    quiet(
        &report(&two_node(), &noswap, nomem(), Evidence::default(), Profile::Database),
        "kernel.swappiness",
    );
}

// ------------------------------------------------------------ CPU

#[test]
fn governor_and_epp_rules() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency);
    fires(&r, "cpu.governor", Severity::Warn);
    assert!(r.finding("cpu.governor").unwrap().found.contains("powersave on CPUs 0-3"));
    // The P-state driver's mode and the energy bias are shown beside them.
    let gov = &r.finding("cpu.governor").unwrap().found;
    assert!(gov.contains("driver intel_pstate, mode active"), "{gov}");
    fires(&r, "cpu.epp", Severity::Warn);
    let epp = &r.finding("cpu.epp").unwrap().found;
    assert_eq!(epp, "balance_power; energy_perf_bias 8");
    let r = report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Latency);
    quiet(&r, "cpu.governor");
    quiet(&r, "cpu.epp");
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::General),
        "cpu.governor",
    );
}

#[test]
fn boost_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Hpc),
        "cpu.boost",
        Severity::Info,
    );
    quiet(&report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Hpc), "cpu.boost");
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.boost",
    );
}

#[test]
fn cstate_rule() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency);
    fires(&r, "cpu.cstates", Severity::Warn);
    assert!(r.finding("cpu.cstates").unwrap().found.contains("C6 (133 us)"));
    // C6 disabled on every CPU in the tuned tree.
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.cstates",
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Hpc),
        "cpu.cstates",
    );
    let mut poll = tuned();
    poll.cmdline = Read::Value("ro idle=poll".into());
    fires(
        &report(&two_node(), &poll, nomem(), Evidence::default(), Profile::General),
        "cpu.cstates",
        Severity::Info,
    );
}

#[test]
fn smt_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.smt",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.smt",
    );
    fires(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Database),
        "cpu.smt",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "cpu.smt",
    );
}

#[test]
fn isolation_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.isolation",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::Latency),
        "cpu.isolation",
    );
    fires(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::General),
        "cpu.isolation",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::General),
        "cpu.isolation",
    );
}

#[test]
fn iommu_rule() {
    fires(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::AiTraining),
        "iommu.mode",
        Severity::Warn,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::AiTraining),
        "iommu.mode",
    );
    quiet(
        &report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database),
        "iommu.mode",
    );
    let mut off = tuned();
    off.iommu.units = Read::Absent;
    off.iommu.group_types = Read::Absent;
    fires(
        &report(&two_node(), &off, nomem(), Evidence::default(), Profile::Virtualization),
        "iommu.mode",
        Severity::Warn,
    );
}

// ------------------------------------------------------------ memory

fn dmi(populated_per_socket: usize, mixed: bool) -> MemoryPopulation {
    use audit::smbios::build::*;
    let mut t = processor(1, "CPU1");
    t.extend(processor(2, "CPU2"));
    let mut h = 0x20;
    for cpu in 1..=2 {
        for (i, ch) in ["A", "B", "C", "D", "E", "F", "G", "H"].iter().enumerate() {
            let size = if i >= populated_per_socket {
                0
            } else if mixed && i == 0 {
                16384
            } else {
                32768
            };
            t.extend(dimm(h, &format!("CPU{cpu}_DIMM_{ch}1"), "BANK 0", size, 3200, 3200, 0x1A));
            h += 1;
        }
    }
    t.extend(end());
    MemoryPopulation::from_table(&t, None).unwrap()
}

/// Slot-numbered locators (Dell's `A1`..`A12`, `B1`..`B12`): the layout
/// assumed is said in the report's notes and in the population finding,
/// with the option that overrides the peak.
#[test]
fn an_assumed_channel_layout_is_said_with_the_peak_option() {
    use audit::smbios::build::*;
    let mut t = processor(1, "CPU1");
    t.extend(processor(2, "CPU2"));
    let mut h = 0x100;
    for l in ["A", "B"] {
        for n in 1..=12 {
            let size = if n <= 6 { 32768 } else { 0 };
            t.extend(dimm(h, &format!("{l}{n}"), "Not Specified", size, 3200, 2933, 0x1A));
            h += 1;
        }
    }
    t.extend(end());
    let m = MemoryPopulation::from_table(&t, None).unwrap();
    let note = "channels inferred from slot positions (12 slots per processor taken as 6 \
                channel(s) of 2 slot(s), the vendor's usual layout); give --peak-gbs if this \
                board differs";
    let r = report(&two_node(), &tuned(), Read::Value(m), Evidence::default(), Profile::Hpc);
    // the report's memory, as `audit --json` writes it
    assert_eq!(r.memory.value().unwrap().notes, vec![note.to_string()]);
    let f = r.finding("memory.population").unwrap();
    assert_eq!(
        f.found,
        format!(
            "12 of 24 slots populated (DDR4), sizes 32.0 GiB, configured 2933 MT/s; socket 0: 6 \
             of 6 channels, 192.0 GiB, peak 140.8 GB/s; socket 1: 6 of 6 channels, 192.0 GiB, \
             peak 140.8 GB/s; {note}; 12 DIMM(s) run below their rating (e.g. 3200 MT/s rated, \
             2933 configured: CPU limit or two DIMMs per channel)"
        )
    );
}

#[test]
fn population_rule() {
    let s = tuned();
    let r = report(&two_node(), &s, Read::Value(dmi(4, false)), Evidence::default(), Profile::Hpc);
    fires(&r, "memory.population", Severity::Critical);
    let f = r.finding("memory.population").unwrap();
    assert!(f.found.contains("socket 0: 4 of 8 channels empty (E, F, G, H)"), "{}", f.found);
    assert!(f.found.contains("peak 102.4 GB/s"), "{}", f.found);
    let r =
        report(&two_node(), &s, Read::Value(dmi(8, true)), Evidence::default(), Profile::General);
    fires(&r, "memory.population", Severity::Warn);
    assert!(r.finding("memory.population").unwrap().found.contains("mixed DIMM sizes"));
    quiet(
        &report(&two_node(), &s, Read::Value(dmi(8, false)), Evidence::default(), Profile::Hpc),
        "memory.population",
    );
}

#[test]
fn peak_fraction_rule_uses_measurements() {
    let s = tuned();
    // 8 channels x 3200 MT/s x 8 B = 204.8 GB/s per socket; one node per socket.
    let low = Evidence::from_records(&[local_bw(0, 118.8)]);
    let r = report(&two_node(), &s, Read::Value(dmi(8, false)), low.clone(), Profile::Hpc);
    fires(&r, "memory.peak_fraction", Severity::Warn);
    let f = r.finding("memory.peak_fraction").unwrap();
    assert!(
        f.found.contains("measured 58% of theoretical peak: check DIMM population"),
        "{}",
        f.found
    );
    let good = Evidence::from_records(&[local_bw(1, 160.0)]);
    quiet(
        &report(&two_node(), &s, Read::Value(dmi(8, false)), good, Profile::Hpc),
        "memory.peak_fraction",
    );
    // No peak known: no finding, no guess.
    quiet(&report(&two_node(), &s, nomem(), low, Profile::Hpc), "memory.peak_fraction");
    // The population finding cites the measured fraction too.
    let low4 = Evidence::from_records(&[local_bw(0, 59.4)]);
    let r = report(&two_node(), &s, Read::Value(dmi(4, false)), low4, Profile::Hpc);
    let ev = r.finding("memory.population").unwrap().evidence.clone().unwrap();
    assert!(ev.contains("58% of theoretical peak (59.4 of 102.4 GB/s)"), "{ev}");
}

#[test]
fn free_memory_rule() {
    let mut t = two_node();
    t.nodes[0].mem_free_bytes = 2 * GIB;
    let r = report(&t, &tuned(), nomem(), Evidence::default(), Profile::General);
    fires(&r, "memory.free", Severity::Warn);
    assert!(r.finding("memory.free").unwrap().found.contains("node(s) 0 nearly full"));
    let mut t = two_node();
    t.nodes[0].mem_free_bytes = 60 * GIB;
    t.nodes[1].mem_free_bytes = 12 * GIB;
    fires(
        &report(&t, &tuned(), nomem(), Evidence::default(), Profile::General),
        "memory.free",
        Severity::Info,
    );
    quiet(
        &report(&two_node(), &tuned(), nomem(), Evidence::default(), Profile::General),
        "memory.free",
    );
}

// ------------------------------------------------------------ devices

fn gpu(addr: &str, node: Option<u32>, local: Option<&str>) -> PciDevice {
    serde_json::from_value(json!({
        "address": addr,
        "class": "gpu",
        "class_code": "0x030200",
        "vendor_id": "0x10de",
        "device_id": null,
        "numa_node": node,
        "local_cpus": local,
    }))
    .unwrap()
}

#[test]
fn device_locality_rule() {
    let mut t = two_node();
    let mut gpu_mem = t.nodes[0].clone();
    gpu_mem.id = 2;
    gpu_mem.cpus = CpuSet::new();
    gpu_mem.kind = NodeKind::MemoryOnly;
    t.nodes.push(gpu_mem);
    t.devices = vec![gpu("0000:3b:00.0", Some(2), None)];
    let r = report(&t, &tuned(), nomem(), Evidence::default(), Profile::AiTraining);
    fires(&r, "devices.locality", Severity::Critical);
    assert!(r.finding("devices.locality").unwrap().found.contains("node 2, which has no CPUs"));
    t.devices = vec![gpu("0000:3b:00.0", None, None)];
    fires(
        &report(&t, &tuned(), nomem(), Evidence::default(), Profile::General),
        "devices.locality",
        Severity::Warn,
    );
    t.devices = vec![gpu("0000:3b:00.0", Some(1), Some("4-7"))];
    quiet(
        &report(&t, &tuned(), nomem(), Evidence::default(), Profile::General),
        "devices.locality",
    );
    // One node: an unknown device node is no problem.
    let mut s = single_node();
    s.devices = vec![gpu("0000:3b:00.0", None, None)];
    quiet(
        &report(&s, &tuned(), nomem(), Evidence::default(), Profile::General),
        "devices.locality",
    );
}

#[test]
fn gpu_affinity_rule() {
    let mut t = two_node();
    t.devices =
        vec![gpu("0000:3b:00.0", Some(0), Some("0-3")), gpu("0000:af:00.0", Some(1), Some("4-7"))];
    t.cgroup.cpus = Some(set("0-3"));
    let r = report(&t, &tuned(), nomem(), Evidence::default(), Profile::AiTraining);
    fires(&r, "devices.gpu_affinity", Severity::Warn);
    let f = r.finding("devices.gpu_affinity").unwrap();
    assert!(
        f.found.contains("GPU 0000:af:00.0: CPUs 4-7 not in the allowed set 0-3"),
        "{}",
        f.found
    );
    assert!(f.fix.contains("numactl --cpunodebind=1 --membind=1"), "{}", f.fix);
    t.cgroup.cpus = None;
    let r = report(&t, &tuned(), nomem(), Evidence::default(), Profile::AiTraining);
    assert_eq!(sev(&r, "devices.gpu_affinity"), Some(Severity::Info));
    quiet(
        &report(&t, &tuned(), nomem(), Evidence::default(), Profile::Database),
        "devices.gpu_affinity",
    );
}

#[test]
fn gpu_affinity_cites_the_measured_feed_and_flags_a_node_sysfs_gets_wrong() {
    use audit::evidence::GpuFeedEvidence;
    let mut t = two_node();
    t.devices =
        vec![gpu("0000:3b:00.0", Some(0), Some("0-3")), gpu("0000:af:00.0", Some(1), Some("4-7"))];
    let feed = |addr: &str, gpu: u32, best: Option<u32>, top: u32| GpuFeedEvidence {
        pci_address: addr.into(),
        gpu,
        best_node: best,
        top_node: top,
        top_gbs: 24.5,
        worst_penalty_pct: Some(51.0),
        source: Some("run 7 (2026-11-27, gpu)".into()),
    };
    // GPU 0 agrees with sysfs; GPU 1 is fed fastest from node 0, not its
    // sysfs node 1.
    let ev = Evidence {
        gpu_feeds: vec![feed("0000:3b:00.0", 0, Some(0), 0), feed("0000:af:00.0", 1, Some(0), 0)],
        ..Evidence::default()
    };
    let r = report(&t, &tuned(), nomem(), ev, Profile::AiTraining);
    fires(&r, "devices.gpu_affinity", Severity::Warn);
    let f = r.finding("devices.gpu_affinity").unwrap();
    assert!(
        f.found
            .contains("0000:af:00.0: sysfs says node 1, pinned memory on node 0 feeds it fastest"),
        "{}",
        f.found
    );
    assert!(!f.found.contains("0000:3b:00.0: sysfs says"), "{}", f.found);
    assert!(
        f.found.contains("measured: 0000:3b:00.0 fed fastest from node 0 (24.5 GB/s host to device; other nodes up to 51% less, run 7"),
        "{}",
        f.found
    );
    assert!(
        f.fix.contains("loaders for 0000:af:00.0: numactl --cpunodebind=0 --membind=0"),
        "{}",
        f.fix
    );
    // Agreeing measurements are cited in the Info finding.
    let ev =
        Evidence { gpu_feeds: vec![feed("0000:af:00.0", 1, Some(1), 1)], ..Evidence::default() };
    let r = report(&t, &tuned(), nomem(), ev, Profile::AiTraining);
    assert_eq!(sev(&r, "devices.gpu_affinity"), Some(Severity::Info));
    assert!(r.finding("devices.gpu_affinity").unwrap().found.contains("fed fastest from node 1"));
    // Undecided: said so, never a mismatch.
    let ev = Evidence { gpu_feeds: vec![feed("0000:af:00.0", 1, None, 0)], ..Evidence::default() };
    let r = report(&t, &tuned(), nomem(), ev, Profile::AiTraining);
    assert_eq!(sev(&r, "devices.gpu_affinity"), Some(Severity::Info));
    assert!(r
        .finding("devices.gpu_affinity")
        .unwrap()
        .found
        .contains("no node feeds 0000:af:00.0 faster"));
}

#[test]
fn report_counts_and_json_fields() {
    let r = report(&two_node(), &untuned(), nomem(), Evidence::default(), Profile::Database);
    let c = &r.counts;
    assert_eq!((c.ok + c.info + c.unknown + c.warn + c.critical) as usize, r.findings.len());
    assert_eq!(r.worst(), Severity::Critical);
    assert!(r.findings.windows(2).all(|w| w[0].severity >= w[1].severity));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["profile"], "database");
    let f = &v["findings"][0];
    for k in ["id", "severity", "title", "found", "expected", "why", "fix", "needs", "evidence"] {
        assert!(f.get(k).is_some(), "finding lacks {k}: {f}");
    }
    assert_eq!(v["settings"]["numa_balancing"]["value"], 1);
}

#[test]
fn every_finding_id_and_title_comes_from_the_rules_table() {
    let ids: Vec<&str> = audit::rules::RULES.iter().map(|r| r.id).collect();
    let mut dedup = ids.clone();
    dedup.sort_unstable();
    dedup.dedup();
    assert_eq!(dedup.len(), ids.len(), "duplicate rule ids: {ids:?}");
    let mut seen = std::collections::BTreeSet::new();
    for p in Profile::ALL {
        for s in [untuned(), tuned()] {
            let r = report(&two_node(), &s, Read::Absent, Evidence::default(), p);
            for f in &r.findings {
                let rule = audit::rules::RULES.iter().find(|r| r.id == f.id);
                let rule = rule.unwrap_or_else(|| panic!("{} is not in RULES", f.id));
                assert_eq!(f.title, rule.title, "{}", f.id);
                seen.insert(f.id.clone());
            }
        }
    }
    assert!(seen.contains("kernel.thp_enabled") && seen.contains("kernel.thp_defrag"), "{seen:?}");
}

#[test]
fn unknown_packages_are_an_unknown_numa_finding() {
    let mut t = two_node();
    t.numa_mode.kind = NumaModeKind::PackagesUnknown;
    t.numa_mode.nodes_per_package = None;
    let r = report(&t, &tuned(), Read::Absent, Evidence::default(), Profile::Hpc);
    assert_eq!(sev(&r, "numa.mode"), Some(Severity::Unknown));
    assert!(r.finding("numa.mode").unwrap().found.contains("packages unknown"));
    assert_eq!(sev(&r, "numa.sub_numa"), None, "no SNC/NPS advice without packages");
}

#[test]
fn an_ambiguous_mode_is_reported_with_its_candidates() {
    let mut t = machine(2, NumaModeKind::NodesPerPackage);
    t.numa_mode.label = None;
    t.numa_mode.confidence = Confidence::Ambiguous;
    t.numa_mode.alternatives = ["NPS2", "L3-as-NUMA"]
        .map(|l| Alternative {
            kind: NumaModeKind::NodesPerPackage,
            label: Some(l.into()),
            tell: "the BIOS".into(),
        })
        .to_vec();
    let r = report(&t, &tuned(), Read::Absent, Evidence::default(), Profile::Database);
    let f = r.finding("numa.mode").unwrap();
    assert!(f.found.contains("(NPS2 or L3-as-NUMA: ambiguous)"), "{}", f.found);
    let f = r.finding("numa.sub_numa").unwrap();
    assert!(f.found.starts_with("NPS2 or L3-as-NUMA: "), "{}", f.found);
}

// ------------------------------------------------------------ DIMM speed and EDAC

/// Two sockets, channels A-D: `two_dpc` puts DIMM 1 and DIMM 2 on each
/// channel; every DIMM rated 4800 MT/s, configured at `configured`.
fn dmi_speed(configured: u16, two_dpc: bool) -> MemoryPopulation {
    use audit::smbios::build::*;
    let mut t = processor(1, "CPU1");
    t.extend(processor(2, "CPU2"));
    let mut h = 0x20;
    for cpu in 1..=2 {
        for ch in ["A", "B", "C", "D"] {
            for slot in 1..=(if two_dpc { 2 } else { 1 }) {
                let loc = format!("CPU{cpu}_DIMM_{ch}{slot}");
                t.extend(dimm(h, &loc, "BANK 0", 32768, 4800, configured, 0x22));
                h += 1;
            }
        }
    }
    t.extend(end());
    MemoryPopulation::from_table(&t, None).unwrap()
}

#[test]
fn speed_rule_flags_configured_below_rated_and_names_two_dimms_per_channel() {
    let s = tuned();
    let t = two_node();
    let r = report(&t, &s, Read::Value(dmi_speed(4400, true)), Evidence::default(), Profile::Hpc);
    fires(&r, "memory.speed", Severity::Warn);
    let f = r.finding("memory.speed").unwrap();
    assert!(f.found.contains("16 of 16 DIMM(s) below their rating"), "{}", f.found);
    assert!(f.found.contains("4800 MT/s rated, 4400 configured"), "{}", f.found);
    assert!(f.found.contains("2DPC downclock"), "{}", f.found);
    let r = report(&t, &s, Read::Value(dmi_speed(4400, false)), Evidence::default(), Profile::Hpc);
    let f = r.finding("memory.speed").unwrap();
    assert!(!f.found.contains("2DPC"), "one DIMM per channel: {}", f.found);
    assert_eq!(f.needs, Needs::Bios);
    quiet(
        &report(&t, &s, Read::Value(dmi_speed(4800, true)), Evidence::default(), Profile::Hpc),
        "memory.speed",
    );
    // No SMBIOS: memory.population says so; no speed finding.
    assert!(report(&t, &s, Read::Absent, Evidence::default(), Profile::Hpc)
        .finding("memory.speed")
        .is_none());
}

/// A root holding only `edac/mc` files (relative path, content).
fn edac_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("sys")).unwrap();
    for (rel, content) in files {
        let p = d.path().join("sys/devices/system/edac/mc").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{content}\n")).unwrap();
    }
    let root = SysRoot::new(d.path()).unwrap();
    (d, root)
}

fn with_edac(files: &[(&str, &str)]) -> Report {
    let (_d, root) = edac_tree(files);
    let t = two_node();
    let mut r = report(&t, &tuned(), Read::Absent, Evidence::default(), Profile::General);
    r.set_edac(&t, audit::edac::read(&root), TERMS);
    r
}

#[test]
fn dimm_errors_rule_on_hand_made_edac_trees() {
    let clean = [
        ("mc0/ce_count", "0"),
        ("mc0/ue_count", "0"),
        ("mc0/dimm0/dimm_label", "CPU_SrcID#0_MC#0_Chan#0_DIMM#0"),
        ("mc0/dimm0/dimm_ce_count", "0"),
        ("mc0/dimm0/dimm_ue_count", "0"),
    ];
    let r = with_edac(&clean);
    quiet(&r, "memory.dimm_errors");
    assert!(r.finding("memory.dimm_errors").unwrap().found.contains("1 DIMM(s)/rank(s)"));

    // Corrected errors on one DIMM: warn, naming its label and location.
    let r = with_edac(&[
        ("mc0/ce_count", "37"),
        ("mc0/ue_count", "0"),
        ("mc0/dimm0/dimm_label", "CPU_SrcID#0_MC#0_Chan#0_DIMM#0"),
        ("mc0/dimm0/dimm_ce_count", "0"),
        ("mc0/dimm0/dimm_ue_count", "0"),
        ("mc0/dimm1/dimm_label", "CPU_SrcID#0_MC#0_Chan#1_DIMM#0"),
        ("mc0/dimm1/dimm_location", "channel 1 slot 0"),
        ("mc0/dimm1/dimm_ce_count", "37"),
        ("mc0/dimm1/dimm_ue_count", "0"),
    ]);
    fires(&r, "memory.dimm_errors", Severity::Warn);
    let f = r.finding("memory.dimm_errors").unwrap();
    assert_eq!(f.severity, Severity::Warn);
    assert!(f.found.contains("mc0/dimm1 CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel 1 slot 0): 37 corrected, 0 uncorrected"), "{}", f.found);
    assert!(!f.found.contains("dimm0"), "{}", f.found);
    assert_eq!(
        r.counts.warn as usize,
        r.findings.iter().filter(|f| f.severity == Severity::Warn).count()
    );

    // An uncorrected error on a rank: critical.
    let r = with_edac(&[
        ("mc1/ue_count", "1"),
        ("mc1/rank3/dimm_label", "B1"),
        ("mc1/rank3/dimm_ue_count", "1"),
    ]);
    fires(&r, "memory.dimm_errors", Severity::Critical);
    assert!(r.finding("memory.dimm_errors").unwrap().found.contains("mc1/rank3 B1"));

    // No EDAC: unknown, saying why; a malformed count: unknown naming the file.
    let r = with_edac(&[]);
    assert_eq!(sev(&r, "memory.dimm_errors"), Some(Severity::Unknown));
    assert!(r.finding("memory.dimm_errors").unwrap().found.contains("no EDAC"));
    let r = with_edac(&[("mc0/dimm0/dimm_ce_count", "many")]);
    assert_eq!(sev(&r, "memory.dimm_errors"), Some(Severity::Unknown));
    assert!(r.finding("memory.dimm_errors").unwrap().found.contains("dimm_ce_count"));
}

// ------------------------------------------------------------ Arm servers

/// The 2-socket machine as a HiSilicon Kunpeng: aarch64, one node per die
/// (two per package), the x86 switches absent.
fn kunpeng() -> (Topology, Settings) {
    let mut t = two_node();
    t.arch = Some("aarch64".into());
    t.cpu_vendor = Vendor::Hisilicon;
    t.cpu_model = Some("HiSilicon Kunpeng 920 (TaiShan v110)".into());
    t.numa_mode.kind = NumaModeKind::NodesPerPackage;
    t.numa_mode.nodes_per_package = Some(2);
    t.numa_mode.label = Some("per-die".into());
    let mut s = untuned();
    s.boost.intel_no_turbo = Read::Absent;
    s.boost.cpufreq_boost = Read::Absent;
    s.boost.amd_pstate_status = Read::Absent;
    s.boost.intel_pstate_status = Read::Absent;
    s.boost.policy_boost = Read::Absent;
    // Arm's cpufreq driver (ACPI CPPC) and no energy preference file.
    let all = [("cppc_cpufreq".to_string(), set("0-7"))].into_iter().collect();
    s.cpufreq.driver = Read::Value(audit::settings::PerCpu { by_value: all });
    s.cpufreq.energy_performance_preference = Read::Absent;
    s.cpufreq.energy_perf_bias = Read::Absent;
    s.cpuidle.driver = Read::Value("psci_idle".into());
    (t, s)
}

/// No finding on an Arm machine names an x86 setting, driver or kernel
/// option as something to set, whatever the profile (the boost finding
/// names the x86 switches only to say they do not exist there); the same
/// settings on an x86 machine do (so the words are really there to leave
/// out).
#[test]
fn arm_findings_name_no_x86_setting() {
    let x86_words = [
        "SNC",
        "NPS",
        "Sub-NUMA",
        "intel_pstate",
        "intel_idle",
        "processor.max_cstate",
        "intel_iommu",
        "iommu=pt",
        "VT-d",
        "AMD-Vi",
        "skx_edac",
        "amd64_edac",
        "Turbo Boost",
    ];
    let (arm, s) = kunpeng();
    let mut x86 = arm.clone();
    x86.arch = Some("x86_64".into());
    x86.cpu_vendor = Vendor::Intel;
    x86.numa_mode.label = Some("SNC2".into());
    let mut s = s;
    s.iommu.group_types = Read::Value([("DMA".to_string(), 4)].into_iter().collect());
    s.iommu.units = Read::Value(vec!["smmu3.0x0000000140000000".into()]);
    let mut seen_on_x86: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
    for p in Profile::ALL {
        let r = report(&arm, &s, nomem(), Evidence::default(), p);
        for f in &r.findings {
            // The boost finding says that the x86 switches do not exist
            // here, by name; nothing else names them.
            let found = if f.id == "cpu.boost" {
                assert!(f.found.contains("are x86's"), "{f:#?}");
                ""
            } else {
                f.found.as_str()
            };
            let text = format!("{} {found} {} {} {} {}", f.title, f.expected, f.why, f.fix, f.id);
            for w in x86_words {
                assert!(!text.contains(w), "{p:?}: '{w}' on an Arm machine: {f:#?}");
            }
        }
        let r = report(&x86, &s, nomem(), Evidence::default(), p);
        for f in &r.findings {
            let text = format!("{} {} {} {}", f.found, f.expected, f.why, f.fix);
            seen_on_x86.extend(x86_words.iter().copied().filter(|w| text.contains(*w)));
        }
    }
    for w in ["SNC", "NPS", "intel_iommu", "skx_edac"] {
        assert!(seen_on_x86.contains(w), "'{w}' never appears on x86 either: {seen_on_x86:?}");
    }
}

/// The x86 boost switch missing on Arm is no unknown setting: ok, n/a;
/// on an x86 machine the same absence stays unknown.
#[test]
fn arm_without_a_boost_switch_is_not_flagged() {
    let (arm, s) = kunpeng();
    let r = report(&arm, &s, nomem(), Evidence::default(), Profile::Hpc);
    let f = r.finding("cpu.boost").unwrap();
    assert_eq!(f.severity, Severity::Ok, "{f:#?}");
    assert!(f.expected.starts_with("n/a"), "{f:#?}");
    let mut x86 = arm.clone();
    x86.arch = Some("x86_64".into());
    x86.cpu_vendor = Vendor::Intel;
    let r = report(&x86, &s, nomem(), Evidence::default(), Profile::Hpc);
    assert_eq!(sev(&r, "cpu.boost"), Some(Severity::Unknown));
}

/// Kunpeng's per-die nodes are explained as dies (hardware), with a
/// binding fix, and a database is still warned.
#[test]
fn arm_per_die_nodes_are_explained_as_dies() {
    let (arm, s) = kunpeng();
    let r = report(&arm, &s, nomem(), Evidence::default(), Profile::Database);
    let f = r.finding("numa.sub_numa").unwrap();
    assert_eq!(f.severity, Severity::Warn, "{f:#?}");
    assert_eq!(f.title, "Nodes per package");
    assert!(f.found.contains("die") && f.found.contains("hardware"), "{f:#?}");
    assert!(f.fix.contains("numactl --cpunodebind"), "{f:#?}");
    // HPC keeps them, and one node per package gets no advice to split.
    let r = report(&arm, &s, nomem(), Evidence::default(), Profile::Hpc);
    assert_eq!(sev(&r, "numa.sub_numa"), Some(Severity::Ok));
    let mut one = arm.clone();
    one.numa_mode.kind = NumaModeKind::NodePerPackage;
    one.numa_mode.nodes_per_package = Some(1);
    one.numa_mode.label = None;
    let r = report(&one, &s, nomem(), Evidence::default(), Profile::Hpc);
    assert_eq!(sev(&r, "numa.sub_numa"), None);
}

/// With 64 KiB base pages a transparent huge page is 512 MiB: madvise is
/// accepted for the profiles that want always on 2 MiB machines, and the
/// finding names the size; with 2 MiB huge pages madvise still fires.
#[test]
fn thp_of_512_mib_accepts_madvise() {
    let t = two_node();
    let mut s = tuned();
    s.thp_enabled = Read::Value("madvise".into());
    for p in [Profile::Hpc, Profile::AiTraining, Profile::Virtualization] {
        s.thp_pmd_size_bytes = Read::Value(512 << 20);
        let r = report(&t, &s, nomem(), Evidence::default(), p);
        let f = r.finding("kernel.thp_enabled").unwrap();
        assert_eq!(f.severity, Severity::Ok, "{p:?}: {f:#?}");
        assert!(f.found.contains("512 MiB"), "{f:#?}");
        s.thp_pmd_size_bytes = Read::Value(2 << 20);
        let r = report(&t, &s, nomem(), Evidence::default(), p);
        fires(&r, "kernel.thp_enabled", Severity::Info);
    }
    // A database still wants madvise or never, whatever the size.
    s.thp_enabled = Read::Value("always".into());
    s.thp_pmd_size_bytes = Read::Value(512 << 20);
    let r = report(&t, &s, nomem(), Evidence::default(), Profile::Database);
    fires(&r, "kernel.thp_enabled", Severity::Warn);
}

/// On a 64 KiB-page kernel (default huge page 512 MiB, pools 2 MiB,
/// 512 MiB and 16 GiB) the reservation fix names that machine's sizes;
/// on the 2 MiB machine it names 2048kB and 1G.
#[test]
fn hugepage_fix_uses_the_machines_own_sizes() {
    let mut s = tuned();
    s.hugepages = Read::Value(Vec::new());
    let t = two_node();
    let r = report(&t, &s, nomem(), Evidence::default(), Profile::Database);
    let f = r.finding("kernel.hugepages").unwrap();
    assert!(f.fix.contains("hugepages-2048kB") && f.fix.contains("hugepagesz=1G"), "{f:#?}");
    let mut k64 = two_node();
    let mem = k64.system_memory.get_or_insert(SystemMemory {
        total_bytes: 64 * GIB,
        free_bytes: None,
        available_bytes: None,
        default_hugepage_bytes: None,
        hugepages: Vec::new(),
    });
    mem.default_hugepage_bytes = Some(512 << 20);
    mem.hugepages = [2 << 20, 512 << 20, 16 * GIB]
        .into_iter()
        .map(|b| HugePages { page_size_bytes: b, total: 0, free: 0 })
        .collect();
    let r = report(&k64, &s, nomem(), Evidence::default(), Profile::Database);
    let f = r.finding("kernel.hugepages").unwrap();
    assert!(f.fix.contains("hugepages-524288kB") && f.fix.contains("hugepagesz=16G"), "{f:#?}");
    assert!(!f.fix.contains("2048kB"), "{f:#?}");
}

/// The declared-distances finding, whole: the contradictions' words in
/// `found` (the first, and how many more) and in the evidence (all of
/// them after each node's orders), as a run stores them.
#[test]
fn declared_distances_words_each_contradiction_whole() {
    use analysis::distances::{check, Cell, Declared};
    let t = two_node();
    let decl = |rows: &[&[u32]], kernel_defaults| Declared {
        nodes: (0..rows.len() as u32).collect(),
        rows: rows.iter().map(|r| r.to_vec()).collect(),
        kernel_defaults,
        ..Declared::default()
    };
    let cells = |ns: &dyn Fn(u32, u32) -> f64| {
        (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| ((i, j), Cell { ns: ns(i, j), noise_pct: 1.0, settled: true }))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let finding = |d: &Declared, ns: &dyn Fn(u32, u32) -> f64| {
        let ev = Evidence {
            source: Some("run 7 (x)".into()),
            distances: Some(check(d, &cells(ns))),
            ..Evidence::default()
        };
        let r = report(&t, &tuned(), Read::Absent, ev, Profile::General);
        let f = r.finding("numa.declared_distances").unwrap().clone();
        (f.severity, f.found, f.evidence.unwrap_or_default())
    };
    // Two orders reversed from node 0 (its own memory, and a tie).
    let ns = |i: u32, j: u32| match (i, j) {
        (0, 0) => 100.0,
        (0, 1) => 80.0,
        (0, 2) => 200.0,
        _ if i == j => 100.0,
        _ => 200.0,
    };
    let rows: &[&[u32]] = &[&[10, 20, 20], &[20, 10, 20], &[20, 20, 10]];
    let who = "the kernel's default distances (the firmware's SLIT was refused) says";
    let own = format!(
        "{who} node 0's own memory is nearer to node 0 than node 1 (distance 10 vs 20); \
         measured, node 1 is nearer by 25%"
    );
    let tie = format!(
        "{who} node 1 and node 2 are equally near node 0 (distance 20); measured, node 1 is \
         nearer by 150%"
    );
    assert_eq!(
        finding(&decl(rows, true), &ns),
        (
            Severity::Warn,
            format!("{own} (and 1 more)"),
            format!(
                "run 7 (x): nearest first from node 0: declared 0 1 2, measured 1 0 2; from node \
                 1: declared 1 0 2, measured 1 0 2; from node 2: declared 2 0 1, measured 2 0 1; \
                 {own}; {tie}"
            )
        )
    );
    // A flat memory under a SLIT of 21: ratios off, no order.
    let rows: &[&[u32]] = &[&[10, 21, 21], &[21, 10, 21], &[21, 21, 10]];
    let flat = |i: u32, j: u32| if i == j { 100.0 } else { 101.0 };
    let ratio = |j: u32, i: u32| {
        format!(
            "the firmware says node {j} is 2.1x as far from node {i} as its own memory (21/10); \
             measured, 1.01x: off by 52%, beyond the 10% the SLIT's rounding and the run's noise \
             allow"
        )
    };
    let all: Vec<String> =
        [(1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2)].map(|(j, i)| ratio(j, i)).to_vec();
    assert_eq!(
        finding(&decl(rows, false), &flat),
        (
            Severity::Info,
            format!("{} (and 5 more)", all[0]),
            format!(
                "run 7 (x): nearest first from node 0: declared 0 1 2, measured 0 1 2; from node \
                 1: declared 1 0 2, measured 1 0 2; from node 2: declared 2 0 1, measured 2 0 1; \
                 the measured memory is flat (every node within the noise of local: a virtual \
                 machine whose memory is one host node?), so no declared order can be confirmed; \
                 {}",
                all.join("; ")
            )
        )
    );
}
