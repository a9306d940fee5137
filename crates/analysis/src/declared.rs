//! Declared settings held against what the run detected. A declared
//! `bios.smt=on` on a machine whose kernel reports `smt=notsupported`, or a
//! `bios.numa=off` under a firmware that lists two proximity domains, is a
//! mistake in the study's own records: the run is filed under a setting it
//! was not measured with. Each contradiction is said on the run (by the
//! measuring command) and in every comparison that uses it.

use results::context::Configuration;

/// A declared value read as on/off (`on`, `enabled`, `1`, `true`; `off`,
/// `disabled`, `0`, `false`), else `None`.
fn switch(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "enabled" | "enable" | "1" | "true" | "yes" => Some(true),
        "off" | "disabled" | "disable" | "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// Nodes per package a declared SNC/NPS/COD value stands for (`off` is 1,
/// `nps0` interleaves the sockets: not checked).
fn domains_per_package(v: &str) -> Option<u64> {
    let s = v.trim().to_ascii_lowercase();
    let s = s.trim_start_matches("snc").trim_start_matches("nps");
    match switch(s) {
        Some(false) => Some(1),
        Some(true) => None,
        None => s.parse().ok().filter(|n| *n >= 1),
    }
}

/// A declared setting the run's own readings contradict: the run would be
/// filed under a setting it was not measured with. `value` is the value
/// as the user declared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contradiction {
    /// `bios.smt` declared on, and the kernel's SMT control reads
    /// `kernel` (`off`, `forceoff`, `notsupported`, `notimplemented`): the
    /// run measured no SMT siblings.
    SmtAbsent { value: String, kernel: String },
    /// `bios.smt` declared off, and the kernel reports SMT on.
    SmtActive { value: String },
    /// `bios.numa` declared off, and the firmware's SRAT lists `domains`
    /// proximity domains: NUMA is on in the firmware.
    NumaInFirmware { value: String, domains: u64 },
    /// `bios.numa` declared on, and the firmware has no SRAT on a machine
    /// of `packages` packages: NUMA is off in the firmware.
    NoSrat { value: String, packages: u64 },
    /// `key` (`bios.snc`, `bios.nps` or `bios.cod`) declared `value`, that
    /// is `want` nodes per package, and the run saw `nodes` nodes with
    /// CPUs on `packages` packages.
    Domains { key: String, value: String, want: u64, nodes: u64, packages: u64 },
}

/// Every declared setting of `config` that what the run detected
/// contradicts; `packages`: the machine's packages, where known.
pub fn contradictions(config: &Configuration, packages: Option<u64>) -> Vec<Contradiction> {
    let Some(declared) = config.declared.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    let smt = config.smt.as_ref().and_then(|r| r.value()).map(|s| s.to_ascii_lowercase());
    let srat = config.firmware_numa().map(|f| f.domains);
    let nodes = config.nodes_with_cpus.or(config.nodes);
    for (key, value) in declared {
        let value = value.clone();
        match key.as_str() {
            "bios.smt" => match (switch(&value), smt.as_deref()) {
                (
                    Some(true),
                    Some(s @ ("off" | "forceoff" | "notsupported" | "notimplemented")),
                ) => out.push(Contradiction::SmtAbsent { value, kernel: s.to_string() }),
                (Some(false), Some("on")) => out.push(Contradiction::SmtActive { value }),
                _ => {}
            },
            "bios.numa" => match (switch(&value), srat) {
                (Some(false), Some(domains)) if domains > 1 => {
                    out.push(Contradiction::NumaInFirmware { value, domains })
                }
                (Some(true), Some(0)) if packages.unwrap_or(0) > 1 => {
                    out.push(Contradiction::NoSrat { value, packages: packages.unwrap_or(0) })
                }
                _ => {}
            },
            "bios.snc" | "bios.nps" | "bios.cod" => {
                let (Some(want), Some(n), Some(p)) =
                    (domains_per_package(&value), nodes, packages.filter(|p| *p > 0))
                else {
                    continue;
                };
                // numa=off and firmware interleave show one node whatever
                // the SNC/NPS setting: nothing to hold it against.
                if n <= 1 || n % p != 0 {
                    continue;
                }
                if n / p != want {
                    out.push(Contradiction::Domains {
                        key: key.clone(),
                        value,
                        want,
                        nodes: n,
                        packages: p,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> Configuration {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn declared_settings_the_run_contradicts_are_named() {
        let c = config(json!({"smt": "notsupported", "declared": {"bios.smt": "on"}}));
        assert_eq!(
            contradictions(&c, Some(1)),
            [Contradiction::SmtAbsent { value: "on".into(), kernel: "notsupported".into() }]
        );
        let c = config(json!({"smt": "on", "declared": {"bios.smt": "off"}}));
        assert_eq!(contradictions(&c, Some(1)).len(), 1);
        let c = config(json!({"smt": "on", "declared": {"bios.smt": "on"}}));
        assert!(contradictions(&c, Some(1)).is_empty());
        let c = config(
            json!({"nodes": 1, "acpi_srat": "2 proximity domains (2 with CPUs, 2 with memory)",
                              "declared": {"bios.numa": "off"}}),
        );
        assert_eq!(
            contradictions(&c, Some(2)),
            [Contradiction::NumaInFirmware { value: "off".into(), domains: 2 }]
        );
        let c = config(json!({"nodes": 1, "acpi_srat": "none", "declared": {"bios.numa": "off"}}));
        assert!(contradictions(&c, Some(2)).is_empty());
        let c = config(json!({"nodes": 1, "acpi_srat": "none", "declared": {"bios.numa": "on"}}));
        assert_eq!(contradictions(&c, Some(2)).len(), 1);
        // SNC2 declared, the OS shows one node per socket.
        let c = config(json!({"nodes": 2, "nodes_with_cpus": 2, "declared": {"bios.snc": "2"}}));
        let w = contradictions(&c, Some(2));
        assert_eq!(
            w,
            [Contradiction::Domains {
                key: "bios.snc".into(),
                value: "2".into(),
                want: 2,
                nodes: 2,
                packages: 2
            }]
        );
        let c = config(json!({"nodes": 4, "nodes_with_cpus": 4, "declared": {"bios.snc": "2"}}));
        assert!(contradictions(&c, Some(2)).is_empty());
        let c = config(json!({"nodes": 4, "nodes_with_cpus": 4, "declared": {"bios.nps": "NPS4"}}));
        assert!(contradictions(&c, Some(1)).is_empty());
        let c = config(json!({"nodes": 4, "nodes_with_cpus": 4, "declared": {"bios.snc": "off"}}));
        assert_eq!(contradictions(&c, Some(2)).len(), 1);
        // numa=off shows one node whatever SNC says: not held against it.
        let c = config(json!({"nodes": 1, "declared": {"bios.snc": "2"}}));
        assert!(contradictions(&c, Some(2)).is_empty());
    }
}
