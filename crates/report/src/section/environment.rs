//! The report's Environment section: the machine, CPU, nodes, NUMA mode,
//! caches, kernel and command line from the run's topology and machine
//! documents, its fingerprints, every setting of its configuration, and
//! the SLIT distance table.

use std::collections::BTreeMap;

use results::context::{Configuration, Reading};
use serde_json::Value;
use store::LoadedRun;
use topo::Topology;

use crate::doc::{Align, Document, Table};
use topo::units::binary_size as bytes;

pub(crate) fn section(doc: &mut Document, run: &LoadedRun) {
    let topo = run.topology.get();
    let mi = &run.machine_info;
    let cfg = &run.config;
    let setting = |r: &Option<Reading<String>>| r.as_ref().and_then(Reading::text);
    doc.h(2, "Environment");
    let mut t = Table::with_header(&["Item", "Value"]);
    t.align = vec![Align::Left, Align::Left];
    let mut row = |k: &str, v: Option<String>| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            t.push(vec![k.to_string(), v]);
        }
    };
    row("Machine", Some(run.summary.machine.clone()));
    row(
        "CPU",
        topo.and_then(|t| t.cpu_model.clone()).or_else(|| mi.cpu_model().map(str::to_string)),
    );
    row("Architecture", topo.and_then(|t| t.arch.clone()));
    row(
        "Packages",
        topo.map(|t| t.packages.len().to_string())
            .or_else(|| mi.packages.as_ref().map(|p| p.to_string())),
    );
    row("NUMA nodes", topo.and_then(nodes_text));
    row(
        "NUMA mode",
        topo.and_then(|t| numa_mode_text(&t.numa_mode)).or_else(|| setting(&cfg.numa_mode)),
    );
    row("Caches", topo.and_then(caches_text));
    row("OS distribution", setting(&cfg.os));
    row("Kernel", topo.and_then(|t| t.kernel.clone()).or_else(|| setting(&cfg.kernel)));
    row(
        "Kernel command line",
        topo.and_then(|t| t.cmdline.raw.clone())
            .or_else(|| setting(&cfg.cmdline))
            .map(|c| cmdline_text(&c)),
    );
    row("Machine fingerprint", Some(run.summary.machine_fingerprint.clone()));
    row("Configuration fingerprint", Some(run.summary.config_hash.clone()));
    row("numaprobe version", Some(run.summary.tool_version.clone()));
    doc.table(t);

    let mut settings =
        Table::with_header(&["Setting", "Value"]).caption("BIOS and OS settings found");
    settings.align = vec![Align::Left, Align::Left];
    for (k, v) in settings_found(cfg) {
        settings.push(vec![k, v]);
    }
    if !settings.is_empty() {
        doc.h(3, "Settings");
        doc.table(settings);
    }

    if let Some(t) = topo.and_then(distance_table) {
        doc.h(3, "Node distances (SLIT)");
        doc.table(t);
    }
}

/// Options of the kernel command line that change how memory behaves
/// (prefixes of the option names).
const MEMORY_OPTIONS: [&str; 24] = [
    "numa",
    "hugepage",
    "default_hugepagesz",
    "transparent_hugepage",
    "iommu",
    "intel_iommu",
    "amd_iommu",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "mem=",
    "memmap",
    "movablecore",
    "kernelcore",
    "memhp",
    "mitigations",
    "init_on_",
    "page_alloc",
    "nosmt",
    "max_cstate",
    "idle",
    "intel_pstate",
    "amd_pstate",
    "cxl",
];

/// Kernel command lines longer than this are cut to their memory options.
pub(crate) const CMDLINE_MAX: usize = 120;

/// The kernel command line, or, when long, the options that matter to
/// memory and the number of the others (the full line is in the appendix).
fn cmdline_text(raw: &str) -> String {
    if raw.chars().count() <= CMDLINE_MAX {
        return raw.to_string();
    }
    format!(
        "{}; the full line is in the appendix)",
        cmdline_memory_options(raw).trim_end_matches(')')
    )
}

/// The options of a kernel command line that matter to memory and the
/// number of its other words: `numa_balancing=0 hugepages=16 (+31 other
/// words)`. The line is read as the kernel reads it
/// ([`topo::parse::cmdline_words`]): a quoted value is one word, `-` in
/// an option's name is `_`, and init's words after a lone `--` are never
/// kernel options. Each option is shown as written.
pub(crate) fn cmdline_memory_options(raw: &str) -> String {
    let words = topo::parse::cmdline_words(raw);
    let init = words.iter().position(|w| w == "--").unwrap_or(words.len());
    let kept: Vec<&str> = words[..init]
        .iter()
        .filter(|w| {
            let w = kernel_name_dashes(w);
            MEMORY_OPTIONS.iter().any(|o| w.starts_with(o) || w.contains(&format!(".{o}")))
        })
        .map(String::as_str)
        .collect();
    let others = words.len() - kept.len();
    let head = if kept.is_empty() { "no memory options".to_string() } else { kept.join(" ") };
    format!("{head} (+{others} other words)")
}

/// `word` with `-` in its name (before any `=`) read as `_`, as the
/// kernel's `parameq` reads it.
fn kernel_name_dashes(word: &str) -> String {
    match word.split_once('=') {
        Some((k, v)) => format!("{}={v}", k.replace('-', "_")),
        None => word.replace('-', "_"),
    }
}

/// The settings of a configuration document as `a.b.c = value` pairs (its
/// scalar leaves, nested objects flattened, values not read left out),
/// without its fingerprint.
pub(crate) fn settings_found(cfg: &Configuration) -> Vec<(String, String)> {
    cfg.settings()
        .filter(|s| s.name != "fingerprint")
        .filter_map(|s| Some((s.name, s.value.shown_text()?)))
        .collect()
}

/// The name serde writes for a topology enum (`cpu+memory`,
/// `nodes-per-package`, `data`).
pub(crate) fn name_of(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => "?".into(),
    }
}

fn nodes_text(topo: &Topology) -> Option<String> {
    let parts: Vec<String> = topo
        .nodes
        .iter()
        .map(|n| {
            let mut s = format!("node {}", n.id);
            let mut bits = Vec::new();
            if !n.cpus.is_empty() {
                bits.push(format!("CPUs {}", n.cpus));
            }
            bits.push(bytes(n.mem_total_bytes));
            bits.push(name_of(&n.kind));
            s.push_str(&format!(" ({})", bits.join(", ")));
            s
        })
        .collect();
    Some(format!("{}: {}", topo.nodes.len(), parts.join("; ")))
}

/// The mode's label, or its candidates when the label is not known
/// (`NPS4 or L3-as-NUMA (ambiguous)`), then the reason.
pub(crate) fn numa_mode_text(m: &topo::NumaMode) -> Option<String> {
    let candidates: Vec<String> = m.alternatives.iter().filter_map(|a| a.label.clone()).collect();
    let name = m
        .label
        .clone()
        .or_else(|| (!candidates.is_empty()).then(|| candidates.join(" or ")))
        .unwrap_or_else(|| name_of(&m.kind));
    let name = match m.confidence {
        topo::Confidence::Ambiguous => format!("{name} (ambiguous)"),
        _ => name,
    };
    Some(format!("{name}: {}", m.reason))
}

/// `L1d 48 KiB x 2, L2 2 MiB x 2, L3 105 MiB x 1`: distinct caches per level.
fn caches_text(topo: &Topology) -> Option<String> {
    let mut by: BTreeMap<(u8, String), (u64, usize)> = BTreeMap::new();
    for c in topo.caches.iter().filter(|c| c.kind != topo::CacheKind::Instruction) {
        let e = by.entry((c.level, name_of(&c.kind))).or_insert((c.size_bytes, 0));
        e.1 += 1;
    }
    if by.is_empty() {
        return None;
    }
    Some(
        by.iter()
            .map(|((l, k), (size, n))| {
                let name = if k == "data" { format!("L{l}d") } else { format!("L{l}") };
                format!("{name} {} x {n}", bytes(*size))
            })
            .collect::<Vec<_>>()
            .join(", "),
    )
}

fn distance_table(topo: &Topology) -> Option<Table> {
    let nodes = &topo.nodes;
    if nodes.len() < 2 {
        return None;
    }
    let ids: Vec<String> = nodes.iter().map(|n| n.id.to_string()).collect();
    let mut header = vec!["node".to_string()];
    header.extend(ids.iter().cloned());
    let mut t = Table::new(header);
    for (n, id) in nodes.iter().zip(&ids) {
        if n.distances.is_empty() {
            return None;
        }
        let mut row = vec![id.clone()];
        row.extend(n.distances.iter().map(|x| x.to_string()));
        t.push(row);
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn numa_mode_text(v: serde_json::Value) -> Option<String> {
        super::numa_mode_text(&serde_json::from_value(v).unwrap())
    }

    #[test]
    fn an_ambiguous_mode_names_its_candidates() {
        let t = json!({"kind": "nodes-per-package", "label": null, "reason": "r",
            "confidence": "ambiguous",
            "alternatives": [{"kind": "nodes-per-package", "label": "NPS4", "tell": "a"},
                             {"kind": "nodes-per-package", "label": "L3-as-NUMA", "tell": "b"}]});
        assert_eq!(numa_mode_text(t).unwrap(), "NPS4 or L3-as-NUMA (ambiguous): r");
        // A topology stored before confidence existed reads as before.
        let old = json!({"kind": "nodes-per-package", "label": "SNC2", "reason": "r"});
        assert_eq!(numa_mode_text(old).unwrap(), "SNC2: r");
        let fw = json!({"kind": "disabled-by-firmware", "label": null, "reason": "r",
            "confidence": "ambiguous", "alternatives": [{"kind": "disabled-by-kernel", "label": null, "tell": "t"}]});
        assert_eq!(numa_mode_text(fw).unwrap(), "disabled-by-firmware (ambiguous): r");
    }

    #[test]
    fn settings_flatten_without_the_fingerprint() {
        let cfg = serde_json::from_value(json!({"fingerprint": "x", "thp": "always",
            "cmdline_options": {"numa": "off"}, "boost": null}));
        let f = super::settings_found(&cfg.unwrap());
        let want = [("cmdline_options.numa", "off"), ("thp", "always")];
        assert_eq!(f, want.map(|(k, v)| (k.to_string(), v.to_string())));
    }

    #[test]
    fn long_kernel_command_lines_keep_their_memory_options() {
        let raw = format!(
            "{} numa_balancing=disable transparent_hugepage=never quiet",
            "console=ttyS0 ".repeat(12)
        );
        let t = super::cmdline_text(&raw);
        assert!(
            t.starts_with("numa_balancing=disable transparent_hugepage=never (+13 other words"),
            "{t}"
        );
        assert_eq!(super::cmdline_text("ro quiet"), "ro quiet");
    }

    #[test]
    fn memory_options_are_read_as_the_kernel_reads_the_line() {
        // A quoted value is one word, `-` in a name is `_`, and init's
        // words after `--` are words but never options.
        let raw = r#"ro dyndbg="file numa.c +p" transparent-hugepage=never -- hugepages=4"#;
        assert_eq!(
            super::cmdline_memory_options(raw),
            "transparent-hugepage=never (+4 other words)"
        );
    }
}
