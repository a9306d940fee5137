//! Firmware and power state that a run's configuration records besides the
//! OS settings: the firmware's NUMA description (ACPI SRAT domains and SLIT
//! distances), the enabled cpuidle states, the P-state driver's mode, the
//! energy performance bias and the memory controllers EDAC sees. BIOS
//! switches that Linux can see only this way (NUMA on under `numa=off`,
//! C-states, SNC/NPS with the same node count) then tell two
//! configurations apart.
//!
//! A field enters the configuration only when it was read: one that is
//! absent or unreadable is left out (the settings diff shows `-`), never
//! guessed, and a machine where none of them can be read keeps the
//! configuration fingerprint it had before they were recorded.

use results::context::{AcpiSrat, Configuration, FirmwareNuma};
use topo::acpi::Table;
use topo::Topology;

use crate::read::Read;
use crate::settings::{IdleState, Settings};

/// Writes the fields that were read into `doc` (`acpi_srat` as its counts, `acpi_slit`,
/// `cpuidle`, `pstate`, `epb`, `edac_memory`); the others stay unset.
pub fn fill(doc: &mut Configuration, topo: &Topology, settings: &Settings) {
    let table = |t: &Table<String>| match t {
        Table::Found(s) => Some(s.clone()),
        Table::NotInFirmware => Some("none".to_string()),
        Table::Unknown(_) => None,
    };
    if let Some(f) = &topo.firmware_numa {
        doc.acpi_srat = match &f.srat {
            Table::Found(s) => Some(AcpiSrat::Domains(FirmwareNuma::of(s))),
            Table::NotInFirmware => Some(AcpiSrat::NotInFirmware),
            Table::Unknown(_) => None,
        };
        doc.acpi_slit = table(&as_text(&f.slit, |s| s.describe()));
    }
    if let Read::Value(states) = &settings.cpuidle.states {
        let driver = settings.cpuidle.driver.value().map(|d| format!("{d}: ")).unwrap_or_default();
        doc.cpuidle = Some(format!("{driver}{}", idle_text(states, topo)));
    }
    let pstate: Vec<String> = [
        ("amd_pstate", &settings.boost.amd_pstate_status),
        ("intel_pstate", &settings.boost.intel_pstate_status),
    ]
    .into_iter()
    .filter_map(|(name, r)| r.value().map(|v| format!("{name} {v}")))
    .collect();
    if !pstate.is_empty() {
        doc.pstate = Some(pstate.join(", "));
    }
    if let Read::Value(epb) = &settings.cpufreq.energy_perf_bias {
        doc.epb = Some(epb.summary());
    }
    if let Read::Value(m) = &settings.memory_controllers {
        doc.edac_memory = Some(m.describe());
    }
}

/// A table's text form, keeping whether it was found.
fn as_text<T>(t: &Table<T>, text: impl Fn(&T) -> String) -> Table<String> {
    match t {
        Table::Found(v) => Table::Found(text(v)),
        Table::NotInFirmware => Table::NotInFirmware,
        Table::Unknown(why) => Table::Unknown(why.clone()),
    }
}

/// `POLL, C1, C6 (off)`, `C6 (off on CPUs 0-3)`: every state, with where
/// it is disabled (everywhere: `off`).
fn idle_text(states: &[IdleState], topo: &Topology) -> String {
    if states.is_empty() {
        return "no idle states".into();
    }
    let online = &topo.online_cpus;
    states
        .iter()
        .map(|s| {
            if s.disabled_on.is_empty() {
                s.name.clone()
            } else if !online.is_empty() && online.iter().all(|c| s.disabled_on.contains(c)) {
                format!("{} (off)", s.name)
            } else {
                format!("{} (off on CPUs {})", s.name, s.disabled_on.to_list())
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use topo::SysRoot;

    fn write(dir: &std::path::Path, rel: &str, v: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{v}\n")).unwrap();
    }

    /// A two-CPU tree with cpuidle, P-state and EPB files; `extra` adds more.
    fn tree(extra: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().unwrap();
        let cpu = "sys/devices/system/cpu";
        write(d.path(), &format!("{cpu}/online"), "0-1");
        for c in 0..2 {
            write(d.path(), &format!("{cpu}/cpu{c}/topology/core_id"), &c.to_string());
            write(d.path(), &format!("{cpu}/cpu{c}/topology/physical_package_id"), "0");
            for (i, (name, lat)) in [("POLL", "0"), ("C1", "2"), ("C6", "120")].iter().enumerate() {
                let st = format!("{cpu}/cpu{c}/cpuidle/state{i}");
                write(d.path(), &format!("{st}/name"), name);
                write(d.path(), &format!("{st}/latency"), lat);
                // C6 off on both CPUs, C1 off on CPU 1 only.
                let off = (i == 2) || (i == 1 && c == 1);
                write(d.path(), &format!("{st}/disable"), if off { "1" } else { "0" });
            }
            write(d.path(), &format!("{cpu}/cpu{c}/power/energy_perf_bias"), "6");
        }
        write(d.path(), &format!("{cpu}/cpuidle/current_driver"), "intel_idle");
        for (rel, v) in extra {
            write(d.path(), rel, v);
        }
        let root = SysRoot::new(d.path()).unwrap();
        (d, root)
    }

    /// The fields `fill` writes, as the stored document has them.
    fn fields(root: &SysRoot) -> serde_json::Map<String, serde_json::Value> {
        let topo = Topology::discover(root).unwrap();
        let mut doc = Configuration::default();
        fill(&mut doc, &topo, &Settings::read(root));
        match doc.to_json() {
            serde_json::Value::Object(m) => m,
            other => panic!("{other}"),
        }
    }

    #[test]
    fn idle_states_pstate_epb_and_edac_are_recorded_when_read() {
        let (_d, root) = tree(&[
            ("sys/devices/system/cpu/intel_pstate/status", "passive"),
            ("sys/devices/system/edac/mc/mc0/dimm0/dimm_location", "channel 0 slot 0"),
            ("sys/devices/system/edac/mc/mc0/dimm1/dimm_location", "channel 1 slot 0"),
        ]);
        let f = fields(&root);
        assert_eq!(f["cpuidle"], "intel_idle: POLL, C1 (off on CPUs 1), C6 (off)");
        assert_eq!(f["pstate"], "intel_pstate passive");
        assert_eq!(f["epb"], "6");
        assert_eq!(f["edac_memory"], "1 memory controller, 2 DIMMs in 2 channels");
        // No ACPI tables folder in the tree: the firmware's NUMA is unknown
        // and left out, not guessed.
        assert!(!f.contains_key("acpi_srat") && !f.contains_key("acpi_slit"), "{f:?}");
        assert_eq!(f.len(), 4, "{f:?}");
    }

    #[test]
    fn absent_state_is_left_out_and_no_srat_is_said() {
        let (d, _) = tree(&[]);
        std::fs::remove_dir_all(d.path().join("sys/devices/system/cpu/cpu0/cpuidle")).unwrap();
        std::fs::remove_dir_all(d.path().join("sys/devices/system/cpu/cpu1/cpuidle")).unwrap();
        std::fs::remove_dir_all(d.path().join("sys/devices/system/cpu/cpu0/power")).unwrap();
        std::fs::remove_dir_all(d.path().join("sys/devices/system/cpu/cpu1/power")).unwrap();
        write(d.path(), "sys/firmware/acpi/tables/APIC", "APIC");
        let root = SysRoot::new(d.path()).unwrap();
        let f = fields(&root);
        assert_eq!(
            f.keys().map(String::as_str).collect::<Vec<_>>(),
            ["acpi_slit", "acpi_srat"],
            "{f:?}"
        );
        assert_eq!(f["acpi_srat"], "none");
    }

    /// A firmware SRAT is stored as its counts, not as a sentence.
    #[test]
    fn the_srat_is_stored_as_its_counts() {
        use topo::synthetic::acpi as t;
        let (d, _) = tree(&[]);
        let srat = t::srat(
            3,
            &[
                t::apic(0, 0, true),
                t::apic(1, 1, true),
                t::memory(0, 0, 1 << 30, 1),
                t::memory(1, 4 << 30, 1 << 30, 1),
                t::memory(2, 8 << 30, 1 << 30, 1),
            ],
        );
        let dir = d.path().join("sys/firmware/acpi/tables");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SRAT"), srat).unwrap();
        let f = fields(&SysRoot::new(d.path()).unwrap());
        assert_eq!(
            f["acpi_srat"],
            serde_json::json!({"domains": 3, "with_cpus": 2, "with_memory": 3}),
            "{f:?}"
        );
    }
}
