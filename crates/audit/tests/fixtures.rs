//! The topology-based rules on real machines' captures in
//! `../shared/fixtures/hwloc-sysfs` (hwloc's test suite, BSD-3-Clause):
//! every capture audits under every profile without error, the rules that
//! depend on the topology fire where the machine calls for it and stay
//! quiet where it does not, and settings the captures lack are reported as
//! not read rather than guessed.
//!
//! Run with `cargo test -p audit --features fixtures --test fixtures`.

use std::path::PathBuf;
use std::sync::OnceLock;

use audit::{Evidence, MemoryPopulation, Profile, Read, Report, Settings};
use results::audit::Severity;
use topo::{SysRoot, Topology};

#[path = "../../topo/tests/support/captures.rs"]
mod captures;
mod support;

/// One capture read once: its root, topology, settings and SMBIOS.
struct Capture {
    name: String,
    root: PathBuf,
    topology: Topology,
    settings: Settings,
    memory: Read<MemoryPopulation>,
}

/// Unpacks and reads every capture once for all tests.
fn captures() -> &'static [Capture] {
    static CAPS: OnceLock<Vec<Capture>> = OnceLock::new();
    CAPS.get_or_init(|| {
        let out: Vec<Capture> = captures::names()
            .into_iter()
            .map(|name| {
                let root = captures::unpack(&name);
                let r = SysRoot::new(&root).unwrap();
                let topology = Topology::discover(&r)
                    .unwrap_or_else(|e| panic!("discover {}: {e}", root.display()));
                let settings = Settings::read(&r);
                let memory = audit::smbios::read(&r);
                Capture { name, root, topology, settings, memory }
            })
            .collect();
        assert!(out.len() >= 16, "expected the 16 hwloc captures, found {}", out.len());
        out
    })
}

fn find(name: &str) -> &'static Capture {
    captures().iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no capture {name}"))
}

fn audit(c: &Capture, p: Profile) -> Report {
    Report::from_parts(
        c.root.display().to_string(),
        &c.topology,
        c.settings.clone(),
        c.memory.clone(),
        Evidence::default(),
        p,
        support::TERMS,
    )
}

fn sev(r: &Report, id: &str) -> Option<Severity> {
    r.finding(id).map(|f| f.severity)
}

#[test]
fn every_capture_audits_under_every_profile() {
    for c in captures() {
        let name = &c.name;
        for p in Profile::ALL {
            let r = audit(c, p);
            assert!(!r.findings.is_empty(), "{name} {p}: no findings");
            for f in &r.findings {
                assert!(!f.found.is_empty() && !f.why.is_empty(), "{name} {p}: {f:#?}");
                if f.severity >= Severity::Warn {
                    assert!(!f.fix.is_empty(), "{name} {p}: {} fires without a fix", f.id);
                }
            }
            serde_json::to_string(&r).unwrap();
            // The captures carry no SMBIOS table: said, not guessed.
            assert_eq!(r.memory, Read::Absent, "{name}");
            assert_eq!(sev(&r, "memory.population"), Some(Severity::Unknown), "{name}");
        }
    }
}

#[test]
fn numa_hidden_by_firmware_fires_and_real_numa_stays_quiet() {
    // 2 sockets, one node, no numa=off: firmware interleaving.
    let r = audit(find("8em64t-2s2ca2c"), Profile::Database);
    assert_eq!(sev(&r, "numa.mode"), Some(Severity::Critical));
    assert!(r.finding("numa.mode").unwrap().fix.contains("Node Interleaving"));
    // Nodes spanning packages (Itanium, 2 sockets per node).
    let r = audit(find("256ia64-64n2s2c"), Profile::General);
    assert_eq!(sev(&r, "numa.mode"), Some(Severity::Warn));
    // No node directory at all: unknown, not "off".
    let r = audit(find("20s390-2g6s4c"), Profile::General);
    assert_eq!(sev(&r, "numa.mode"), Some(Severity::Unknown));
    for quiet in
        ["16amd64-8n2c", "memorysidecaches", "32intel64-2p8co2t+8ve", "128arm-2pa2n8cluster4co"]
    {
        let r = audit(find(quiet), Profile::Database);
        assert_eq!(sev(&r, "numa.mode"), Some(Severity::Ok), "{quiet}");
    }
}

#[test]
fn sub_numa_clustering_on_real_machines() {
    // Xeon Gold 6230 in SNC2: a database wants it off, HPC keeps it.
    let snc = find("memorysidecaches");
    let r = audit(snc, Profile::Database);
    assert_eq!(sev(&r, "numa.sub_numa"), Some(Severity::Warn));
    assert!(r.finding("numa.sub_numa").unwrap().found.contains("SNC2"));
    assert_eq!(sev(&audit(snc, Profile::Hpc), "numa.sub_numa"), Some(Severity::Ok));
    // One node per package: HPC is told about SNC/NPS, a database is not.
    let plain = find("16amd64-8n2c");
    assert_eq!(sev(&audit(plain, Profile::Hpc), "numa.sub_numa"), Some(Severity::Info));
    assert_eq!(sev(&audit(plain, Profile::Database), "numa.sub_numa"), None);
}

#[test]
fn devices_on_real_machines() {
    // POWER9 + V100: the GPUs' numa_node is -1 on a multi-node machine.
    let r = audit(find("nvidiagpunumanodes"), Profile::AiTraining);
    let f = r.finding("devices.locality").unwrap();
    assert!(f.severity >= Severity::Warn && f.found.contains("numa_node -1"), "{f:#?}");
    let f = r.finding("devices.gpu_affinity").unwrap();
    assert!(f.found.contains("CPUs"), "{f:#?}");
    // Every PCI device has a node with CPUs and memory.
    let r = audit(find("32intel64-2p8co2t+8ve"), Profile::AiTraining);
    assert_eq!(sev(&r, "devices.locality"), Some(Severity::Ok));
}

#[test]
fn placement_and_free_memory_on_real_machines() {
    // Multi-node: a recommendation per profile; single node: none.
    let multi = find("128arm-2pa2n8cluster4co");
    for p in Profile::ALL {
        assert_eq!(sev(&audit(multi, p), "placement.profile"), Some(Severity::Info), "{p}");
    }
    let single = find("20em64t-hybrid-1p6c2t+2ca4co1t");
    assert_eq!(sev(&audit(single, Profile::Database), "placement.profile"), None);
    // Kunpeng capture: node 2 has 59% free while the others have over 95%.
    let r = audit(multi, Profile::General);
    let f = r.finding("memory.free").unwrap();
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(f.found.contains("node 2"), "{}", f.found);
    let r = audit(find("32intel64-2p8co2t+8ve"), Profile::General);
    assert_eq!(sev(&r, "memory.free"), Some(Severity::Ok));
}

#[test]
fn missing_settings_are_not_guessed() {
    let r = audit(find("16amd64-8n2c"), Profile::Database);
    for id in ["kernel.numa_balancing", "kernel.zone_reclaim_mode", "kernel.thp_enabled"] {
        let f = r.finding(id).unwrap_or_else(|| panic!("{id} missing"));
        assert_eq!(f.severity, Severity::Unknown, "{f:#?}");
        assert!(f.found.contains("absent"), "{}", f.found);
    }
}

/// The machine and configuration documents of every capture, and of each
/// with its settings unreadable or absent and a DIMM population, are
/// byte-identical to `data/fingerprints.json` (written by the version that
/// built them as `json!` documents): identical machines keep their
/// fingerprints, so existing databases keep grouping their runs.
/// `NUMAPROBE_BLESS=1` rewrites the file (only for a deliberate change).
#[test]
fn fingerprint_documents_of_every_capture_are_unchanged() {
    use std::collections::BTreeMap;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fingerprints.json");
    let mut got: BTreeMap<String, String> = BTreeMap::new();
    let pop = Read::Value(synthetic_population());
    let unrated = Read::Value(unrated_population());
    for c in captures() {
        let r = SysRoot::new(&c.root).unwrap();
        let text = |v: &dyn erased::Doc| v.text();
        got.insert(
            format!("{} machine", c.name),
            text(&audit::fingerprint::machine(&r, &c.topology, &c.memory)),
        );
        got.insert(
            format!("{} machine+dimms", c.name),
            text(&audit::fingerprint::machine(&r, &c.topology, &pop)),
        );
        got.insert(
            format!("{} config", c.name),
            text(&audit::fingerprint::config(&c.topology, &c.settings)),
        );
        got.insert(
            format!("{} config+dimms", c.name),
            text(&audit::fingerprint::config_with_memory(&c.topology, &c.settings, &pop)),
        );
        got.insert(
            format!("{} machine+unrated", c.name),
            text(&audit::fingerprint::machine(&r, &c.topology, &unrated)),
        );
        got.insert(
            format!("{} config+unrated", c.name),
            text(&audit::fingerprint::config_with_memory(&c.topology, &c.settings, &unrated)),
        );
        let mut odd = c.settings.clone();
        odd.kernel = Read::Unreadable("permission denied".into());
        odd.numa_balancing = Read::Absent;
        odd.thp_enabled = Read::Value("never".into());
        odd.firmware.bios_version = Read::Unreadable("EACCES".into());
        got.insert(
            format!("{} config odd", c.name),
            text(&audit::fingerprint::config_with_memory(
                &c.topology,
                &odd,
                &Read::Unreadable("no access".into()),
            )),
        );
    }
    let got_text = serde_json::to_string_pretty(&got).unwrap() + "\n";
    if std::env::var_os("NUMAPROBE_BLESS").is_some() {
        std::fs::write(&path, &got_text).unwrap();
        return;
    }
    let want: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(want.len(), got.len(), "captures added or removed: bless deliberately");
    for (k, w) in &want {
        assert_eq!(got.get(k), Some(w), "{k} changed");
    }
}

/// Two sockets' DIMMs from an SMBIOS table: 3 populated slots of 4, two
/// module sizes, DDR5 configured at 4400 MT/s (so sockets, channels and
/// peaks are inferred).
fn synthetic_population() -> MemoryPopulation {
    use audit::smbios::build::{dimm, end, processor};
    let mut t = Vec::new();
    t.extend(processor(1, "CPU0"));
    t.extend(processor(2, "CPU1"));
    t.extend(dimm(0x10, "CPU0_DIMM_A1", "P0_Node0_Channel0_Dimm0", 32768, 4800, 4400, 0x22));
    t.extend(dimm(0x11, "CPU0_DIMM_B1", "P0_Node0_Channel1_Dimm0", 32768, 4800, 4400, 0x22));
    t.extend(dimm(0x12, "CPU1_DIMM_A1", "P1_Node1_Channel0_Dimm0", 65536, 4800, 4400, 0x22));
    t.extend(dimm(0x13, "CPU1_DIMM_B1", "P1_Node1_Channel1_Dimm0", 0, 0, 0, 0x02));
    t.extend(end());
    MemoryPopulation::from_table(&t, None).unwrap()
}

/// One socket's DIMMs whose records give no speed, of two memory types.
fn unrated_population() -> MemoryPopulation {
    use audit::smbios::build::{dimm, end, processor};
    let mut t = Vec::new();
    t.extend(processor(1, "CPU0"));
    t.extend(dimm(0x10, "DIMM_A1", "P0_Node0_Channel0_Dimm0", 16384, 0, 0, 0x1A));
    t.extend(dimm(0x11, "DIMM_B1", "P0_Node0_Channel1_Dimm0", 16384, 0, 0, 0x22));
    t.extend(end());
    MemoryPopulation::from_table(&t, None).unwrap()
}

/// The documents' text, whatever their Rust type (a JSON value before the
/// typed context, a `results::context` type after).
mod erased {
    pub trait Doc {
        fn text(&self) -> String;
    }
    impl<T: serde::Serialize> Doc for T {
        fn text(&self) -> String {
            serde_json::to_value(self).unwrap().to_string()
        }
    }
}

/// The firmware and power state a run's configuration records, on real
/// captures: the P-state mode where the capture has it, nothing invented
/// where it does not (no capture holds ACPI tables, cpuidle or EDAC).
#[test]
fn firmware_and_power_state_of_the_captures_is_recorded_or_left_out() {
    for c in captures() {
        let mut doc = results::context::Configuration::default();
        audit::firmware_state::fill(&mut doc, &c.topology, &c.settings);
        let fields: Vec<String> = match doc.to_json() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            other => panic!("{other}"),
        };
        let f = c.topology.firmware_numa.as_ref().expect("discovery reads the ACPI tables");
        assert!(matches!(f.srat, topo::acpi::Table::Unknown(_)), "{}: {:?}", c.name, f.srat);
        let has_pstate =
            ["20em64t-hybrid-1p6c2t+2ca4co1t", "32intel64-2p8co2t+8ve"].contains(&c.name.as_str());
        let want: Vec<&str> = if has_pstate { vec!["pstate"] } else { vec![] };
        assert_eq!(fields, want, "{}", c.name);
        if has_pstate {
            assert_eq!(doc.pstate.as_deref(), Some("intel_pstate active"), "{}", c.name);
        }
    }
}

/// The Kunpeng 920 capture (aarch64, one node per die): no finding names
/// an x86 setting to set, under any profile; its nodes are explained as
/// dies; the boost switch it lacks is not an unknown setting, while an x86
/// capture lacking it is.
#[test]
fn kunpeng_is_audited_in_arm_words() {
    let arm = find("128arm-2pa2n8cluster4co");
    assert_eq!(arm.topology.arch.as_deref(), Some("aarch64"));
    for p in Profile::ALL {
        let r = audit(arm, p);
        for f in &r.findings {
            let text = format!("{} {} {} {}", f.title, f.expected, f.why, f.fix);
            for w in ["SNC", "NPS", "intel_pstate", "intel_idle", "VT-d", "skx_edac", "amd64_edac"]
            {
                assert!(!text.contains(w), "{p}: '{w}' on Kunpeng: {f:#?}");
            }
        }
        let f = r.finding("cpu.boost").unwrap();
        assert_eq!(f.severity, Severity::Ok, "{p}: {f:#?}");
    }
    let f = audit(arm, Profile::Database).finding("numa.sub_numa").cloned().unwrap();
    assert!(f.found.contains("per-die") && f.found.contains("die of the package"), "{f:#?}");
    assert_eq!(
        sev(&audit(find("16amd64-8n2c"), Profile::Hpc), "cpu.boost"),
        Some(Severity::Unknown)
    );
}
