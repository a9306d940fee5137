//! Declared settings held against what the run detected. A `--set
//! bios.smt=on` on a machine whose kernel reports `smt=notsupported`, or a
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

/// Every declared setting of `config` that what the run detected
/// contradicts, in the user's words; `packages`: the machine's packages,
/// where known.
pub fn contradictions(config: &Configuration, packages: Option<u64>) -> Vec<String> {
    let Some(declared) = config.declared.as_ref() else { return Vec::new() };
    let mut out = Vec::new();
    let smt = config.smt.as_ref().and_then(|r| r.value()).map(|s| s.to_ascii_lowercase());
    let srat = config.firmware_numa().map(|f| f.domains);
    let nodes = config.nodes_with_cpus.or(config.nodes);
    for (key, value) in declared {
        match key.as_str() {
            "bios.smt" => match (switch(value), smt.as_deref()) {
                (Some(true), Some(s @ ("off" | "forceoff" | "notsupported" | "notimplemented"))) => {
                    out.push(format!(
                        "declared bios.smt={value}, but the kernel reports smt={s}: the run measured no SMT siblings"
                    ))
                }
                (Some(false), Some("on")) => out.push(format!(
                    "declared bios.smt={value}, but the kernel reports smt=on: SMT siblings were active"
                )),
                _ => {}
            },
            "bios.numa" => match (switch(value), srat) {
                (Some(false), Some(d)) if d > 1 => out.push(format!(
                    "declared bios.numa={value}, but the firmware's SRAT lists {d} proximity domains: NUMA is on in the firmware (numa=off on the kernel command line only hides it)"
                )),
                (Some(true), Some(0)) if packages.unwrap_or(0) > 1 => out.push(format!(
                    "declared bios.numa={value}, but the firmware has no SRAT on a machine of {} packages: NUMA is off (node interleave) in the firmware",
                    packages.unwrap_or(0)
                )),
                _ => {}
            },
            "bios.snc" | "bios.nps" | "bios.cod" => {
                let (Some(want), Some(n), Some(p)) =
                    (domains_per_package(value), nodes, packages.filter(|p| *p > 0))
                else {
                    continue;
                };
                // numa=off and firmware interleave show one node whatever
                // the SNC/NPS setting: nothing to hold it against.
                if n <= 1 || n % p != 0 {
                    continue;
                }
                let have = n / p;
                if have != want {
                    out.push(format!(
                        "declared {key}={value} ({want} node{} per package), but the run saw {n} nodes with CPUs on {p} package{}: {have} per package",
                        if want == 1 { "" } else { "s" },
                        if p == 1 { "" } else { "s" }
                    ));
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
        let w = contradictions(&c, Some(1));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("bios.smt=on") && w[0].contains("smt=notsupported"), "{w:?}");
        let c = config(json!({"smt": "on", "declared": {"bios.smt": "off"}}));
        assert_eq!(contradictions(&c, Some(1)).len(), 1);
        let c = config(json!({"smt": "on", "declared": {"bios.smt": "on"}}));
        assert!(contradictions(&c, Some(1)).is_empty());
        let c = config(
            json!({"nodes": 1, "acpi_srat": "2 proximity domains (2 with CPUs, 2 with memory)",
                              "declared": {"bios.numa": "off"}}),
        );
        let w = contradictions(&c, Some(2));
        assert!(w.len() == 1 && w[0].contains("2 proximity domains"), "{w:?}");
        let c = config(json!({"nodes": 1, "acpi_srat": "none", "declared": {"bios.numa": "off"}}));
        assert!(contradictions(&c, Some(2)).is_empty());
        let c = config(json!({"nodes": 1, "acpi_srat": "none", "declared": {"bios.numa": "on"}}));
        assert_eq!(contradictions(&c, Some(2)).len(), 1);
        // SNC2 declared, the OS shows one node per socket.
        let c = config(json!({"nodes": 2, "nodes_with_cpus": 2, "declared": {"bios.snc": "2"}}));
        let w = contradictions(&c, Some(2));
        assert!(w.len() == 1 && w[0].contains("1 per package"), "{w:?}");
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
