//! NUMA mode inference and firmware consistency checks: pure functions over
//! discovered facts, so that they are tested on synthetic machines.

use std::collections::{BTreeMap, BTreeSet};

use crate::idset::{CpuSet, NodeSet};
use crate::model::*;

/// Each node's CPUs with CPUs already listed by an earlier node removed
/// (inconsistent firmware may list one CPU in several nodes).
fn effective_node_cpus(nodes: &[Node]) -> Vec<(u32, CpuSet)> {
    let mut claimed = CpuSet::new();
    nodes
        .iter()
        .map(|n| {
            let own = n.cpus.difference(&claimed);
            claimed = claimed.union(&n.cpus);
            (n.id, own)
        })
        .collect()
}

/// The mode the machine's nodes, packages, caches and kernel command line
/// imply, with the vendor's name for it and the reason.
pub fn infer_mode(t: &Topology) -> NumaMode {
    let numa_opt = t.cmdline.get("numa");
    let npk = t.packages.len();
    let memory_only: NodeSet = t
        .nodes
        .iter()
        .filter(|n| n.cpus.is_empty() && n.mem_total_bytes > 0)
        .map(|n| n.id)
        .collect();
    let mem_note = if memory_only.is_empty() {
        String::new()
    } else {
        format!(
            "; CPU-less memory nodes {} (CXL, HBM, PMem or GPU memory) come in addition",
            memory_only.to_list()
        )
    };
    let mode = |kind, nodes_per_package, label: Option<&str>, reason: String| NumaMode {
        kind,
        nodes_per_package,
        label: label.map(str::to_string),
        reason,
    };

    if let Some(v) = numa_opt.and_then(|v| v.strip_prefix("fake=")) {
        return mode(
            NumaModeKind::Fake,
            None,
            None,
            format!(
                "numa=fake={v} on the kernel command line: the kernel split memory into emulated \
                 nodes, which say nothing about the hardware"
            ),
        );
    }
    if numa_opt == Some("off") {
        return mode(
            NumaModeKind::DisabledByKernel,
            None,
            None,
            format!(
                "numa=off on the kernel command line: the kernel shows one node for {npk} \
                 package(s), whatever the firmware describes"
            ),
        );
    }
    if t.nodes.is_empty() {
        return mode(
            NumaModeKind::Unknown,
            None,
            None,
            "no NUMA node directory (sys/devices/system/node): the kernel was built without NUMA \
             support or the capture lacks it"
                .into(),
        );
    }

    let cpu_pkg: BTreeMap<u32, u32> = t.cpus.iter().map(|c| (c.id, c.package)).collect();
    let eff = effective_node_cpus(&t.nodes);
    let overlapping = t.nodes.iter().zip(&eff).filter(|(n, (_, e))| n.cpus != *e).count();
    let overlap_note = if overlapping > 0 {
        format!(
            "; firmware lists some CPUs in several nodes ({overlapping} node(s) repeat CPUs of an \
             earlier one), counted once"
        )
    } else {
        String::new()
    };
    // Packages each CPU-bearing node touches (CPUs that are not online are
    // not known to belong to any package and are ignored).
    let mut node_pkgs: Vec<(u32, BTreeSet<u32>)> = Vec::new();
    for (id, cpus) in &eff {
        if cpus.is_empty() {
            continue;
        }
        let pk: BTreeSet<u32> = cpus.iter().filter_map(|c| cpu_pkg.get(&c).copied()).collect();
        node_pkgs.push((*id, pk));
    }
    let cpu_nodes = node_pkgs.len();

    if cpu_nodes <= 1 {
        if npk > 1 {
            let distinct = if overlapping > 0 {
                format!(
                    " when each CPU is counted once ({overlapping} node(s) repeat CPUs that an \
                     earlier node lists)"
                )
            } else {
                String::new()
            };
            let cmd_note = if t.cmdline.raw.is_none() {
                " (the kernel command line could not be read, so numa=off is not ruled out)"
            } else {
                ""
            };
            return mode(
                NumaModeKind::DisabledByFirmware,
                None,
                None,
                format!(
                    "{npk} packages but only one node with CPUs{distinct}, and no numa=off on \
                     the kernel command line{cmd_note}: the firmware interleaves memory across the \
                     sockets (NUMA disabled or node interleaving enabled in the BIOS){mem_note}"
                ),
            );
        }
        return mode(
            NumaModeKind::SingleNode,
            Some(1),
            None,
            format!("one package and one node with CPUs{overlap_note}{mem_note}"),
        );
    }

    let spanning: NodeSet =
        node_pkgs.iter().filter(|(_, p)| p.len() > 1).map(|(id, _)| *id).collect();
    if !spanning.is_empty() {
        return mode(
            NumaModeKind::NodesSpanPackages,
            None,
            None,
            format!(
                "node(s) {} hold CPUs of several packages: a node is a group of sockets (or the \
                 firmware's node boundaries ignore packages){overlap_note}{mem_note}",
                spanning.to_list()
            ),
        );
    }

    let mut per_pkg: BTreeMap<u32, u32> = t.packages.iter().map(|p| (p.id, 0)).collect();
    for (_, p) in &node_pkgs {
        if let Some(&pk) = p.iter().next() {
            *per_pkg.entry(pk).or_insert(0) += 1;
        }
    }
    let counts: BTreeSet<u32> = per_pkg.values().copied().filter(|&c| c > 0).collect();
    if counts.len() > 1 {
        let detail: Vec<String> =
            per_pkg.iter().map(|(p, c)| format!("package {p}: {c}")).collect();
        return mode(
            NumaModeKind::NodesPerPackage,
            None,
            None,
            format!(
                "packages hold different numbers of nodes with CPUs ({}){overlap_note}{mem_note}",
                detail.join(", ")
            ),
        );
    }
    let n = counts.into_iter().next().unwrap_or(1);
    if n == 1 {
        return mode(
            NumaModeKind::NodePerPackage,
            Some(1),
            None,
            format!(
                "each of the {npk} package(s) holds exactly one node with CPUs{overlap_note}{mem_note}"
            ),
        );
    }
    let (label, why) = vendor_label(t, n, &eff);
    mode(
        NumaModeKind::NodesPerPackage,
        Some(n),
        label.as_deref(),
        format!(
            "each of the {npk} package(s) holds {n} nodes with CPUs{why}{overlap_note}{mem_note}"
        ),
    )
}

/// The vendor's name for `n` nodes per package, and why.
fn vendor_label(t: &Topology, n: u32, eff: &[(u32, CpuSet)]) -> (Option<String>, String) {
    let model = t.cpu_model.as_deref().unwrap_or("");
    let dies = t.packages.iter().map(|p| p.dies.len() as u32).max().unwrap_or(1);
    match t.cpu_vendor {
        Vendor::Intel => {
            let haswell_broadwell_ep =
                model.contains("E5-") && (model.contains(" v3") || model.contains(" v4")) && n == 2;
            if haswell_broadwell_ep {
                return (
                    Some("COD".into()),
                    format!(": Cluster-on-Die, as Xeon E5 v3/v4 ({model}) offer"),
                );
            }
            if dies > 1 && n == dies {
                return (
                    Some("per-die".into()),
                    format!(": one node per die ({dies} dies per package)"),
                );
            }
            if dies > 1 && n.is_multiple_of(dies) {
                let k = n / dies;
                return (
                    Some(format!("SNC{k} per die")),
                    format!(": {dies} dies per package, {k} sub-NUMA clusters each"),
                );
            }
            (Some(format!("SNC{n}")), format!(": Intel Sub-NUMA Clustering (SNC{n})"))
        }
        Vendor::Amd => {
            // Before Zen (family 17h) multi-node packages were multi-chip
            // modules with one node per die.
            if model.contains("Opteron") || t.cpu_family.is_some_and(|f| f < 0x17) {
                return (
                    Some("per-die".into()),
                    ": a multi-chip package with one node per die (Opteron Magny-Cours / \
                     Interlagos)"
                        .into(),
                );
            }
            if nodes_match_l3(t, eff) {
                return (
                    Some("L3-as-NUMA".into()),
                    ": each node is exactly one L3 cache domain (the 'L3 as NUMA domain' BIOS \
                     option)"
                        .into(),
                );
            }
            if dies > 1 && n == dies {
                return (
                    Some("per-die".into()),
                    format!(": one node per die ({dies} dies per package)"),
                );
            }
            (Some(format!("NPS{n}")), format!(": the nodes-per-socket BIOS setting NPS{n}"))
        }
        Vendor::Hisilicon => {
            (Some("per-die".into()), ": one node per die (Kunpeng super CPU cluster, SCCL)".into())
        }
        Vendor::Arm if dies > 1 && n == dies => {
            (Some("per-die".into()), format!(": one node per die ({dies} dies per package)"))
        }
        _ => (None, String::new()),
    }
}

/// True when every node with CPUs is exactly the CPUs of one L3 cache.
fn nodes_match_l3(t: &Topology, eff: &[(u32, CpuSet)]) -> bool {
    let l3: Vec<&CpuSet> = t
        .caches
        .iter()
        .filter(|c| c.level == 3 && c.kind != CacheKind::Instruction)
        .map(|c| &c.cpus)
        .collect();
    if l3.is_empty() {
        return false;
    }
    let online = &t.online_cpus;
    eff.iter().filter(|(_, c)| !c.is_empty()).all(|(_, cpus)| {
        let mine = cpus.intersection(online);
        l3.iter().filter(|l| !l.is_disjoint(&mine)).count() == 1
            && l3.iter().any(|l| l.intersection(online) == mine)
    })
}

/// Warnings about firmware tables that contradict themselves: nodes listing
/// the same CPUs, asymmetric or implausible distances, online CPUs in no
/// node. Never fails.
pub fn firmware_warnings(nodes: &[Node], online: &CpuSet) -> Vec<String> {
    let mut w = Vec::new();
    // Nodes listing the same CPUs.
    let mut owner: BTreeMap<u32, u32> = BTreeMap::new();
    let mut overlaps: BTreeMap<u32, NodeSet> = BTreeMap::new();
    for n in nodes {
        for c in n.cpus.iter() {
            match owner.get(&c) {
                Some(&first) if first != n.id => {
                    overlaps.entry(first).or_default().insert(n.id);
                }
                Some(_) => {}
                None => {
                    owner.insert(c, n.id);
                }
            }
        }
    }
    for (first, others) in overlaps {
        w.push(format!(
            "nodes {} list CPUs that node {first} lists too: the firmware is inconsistent; each \
             CPU is taken to belong to the first node listing it",
            others.to_list()
        ));
    }
    if !nodes.is_empty() {
        let in_nodes = nodes.iter().fold(CpuSet::new(), |acc, n| acc.union(&n.cpus));
        let orphans = online.difference(&in_nodes);
        if !orphans.is_empty() {
            w.push(format!("online CPUs {} belong to no node", orphans.to_list()));
        }
    }
    // Distances: only when every row is there and square.
    let k = nodes.len();
    if k == 0 || nodes.iter().any(|n| n.distances.len() != k) {
        return w;
    }
    let mut asym = Vec::new();
    for i in 0..k {
        for j in i + 1..k {
            let (ab, ba) = (nodes[i].distances[j], nodes[j].distances[i]);
            if ab != ba {
                asym.push((nodes[i].id, nodes[j].id, ab, ba));
            }
        }
    }
    if let Some(&(a, b, ab, ba)) = asym.first() {
        w.push(format!(
            "asymmetric distance matrix ({} pair(s), e.g. node {a}->{b} = {ab} but {b}->{a} = \
             {ba}): the firmware SLIT is inconsistent",
            asym.len()
        ));
    }
    for (i, n) in nodes.iter().enumerate() {
        let local = n.distances[i];
        if n.distances.iter().enumerate().any(|(j, &d)| j != i && d < local) {
            w.push(format!(
                "node {}: a remote distance is smaller than the local one ({local}): the firmware \
                 SLIT is suspect",
                n.id
            ));
        }
    }
    if k > 1 {
        let first = nodes[0].distances[0];
        if nodes.iter().all(|n| n.distances.iter().all(|&d| d == first)) {
            w.push(format!(
                "every distance entry is {first}: the firmware reports remote memory as close as \
                 local"
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::Machine;

    const GIB: u64 = 1 << 30;

    fn xeon(model: &str) -> Machine {
        Machine::new(Vendor::Intel, model).family(6)
    }

    #[test]
    fn single_node_and_memory_only_extra() {
        let t = xeon("Xeon").package(0, "0-7").node(0, "0-7", 16 * GIB).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::SingleNode);
        assert_eq!(t.numa_mode.nodes_per_package, Some(1));
        let t =
            xeon("Xeon").package(0, "0-7").node(0, "0-7", 16 * GIB).node(1, "", 64 * GIB).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::SingleNode);
        assert!(t.numa_mode.reason.contains("CPU-less memory nodes 1"), "{}", t.numa_mode.reason);
    }

    #[test]
    fn one_node_per_package() {
        let t = xeon("Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodePerPackage);
        assert_eq!(t.numa_mode.nodes_per_package, Some(1));
        assert_eq!(t.numa_mode.label, None);
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    fn two_by(m: Machine, n: u32) -> Machine {
        // 2 packages of 8 CPUs, n nodes each.
        let per = 8 / n;
        let mut m = m.package(0, "0-7").package(1, "8-15");
        for i in 0..2 * n {
            m = m.node(i, &format!("{}-{}", i * per, i * per + per - 1), GIB);
        }
        m
    }

    #[test]
    fn intel_snc_and_cod() {
        let t = two_by(xeon("Intel(R) Xeon(R) Gold 6230 CPU"), 2).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage);
        assert_eq!(t.numa_mode.nodes_per_package, Some(2));
        assert_eq!(t.numa_mode.label.as_deref(), Some("SNC2"));
        let t = two_by(xeon("Intel(R) Xeon(R) Platinum 8380"), 4).build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("SNC4"));
        let t = two_by(xeon("Intel(R) Xeon(R) CPU E5-2699 v4 @ 2.20GHz"), 2).build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("COD"));
        // Granite Rapids SNC3: 3 nodes of 4 CPUs per 12-CPU package.
        let t = xeon("Intel(R) Xeon(R) 6980P")
            .package(0, "0-11")
            .package(1, "12-23")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .node(2, "8-11", GIB)
            .node(3, "12-15", GIB)
            .node(4, "16-19", GIB)
            .node(5, "20-23", GIB)
            .build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("SNC3"));
        assert_eq!(t.numa_mode.nodes_per_package, Some(3));
    }

    #[test]
    fn amd_nps_and_l3_as_numa() {
        let epyc = || Machine::new(Vendor::Amd, "AMD EPYC 7763 64-Core Processor").family(25);
        // NPS2: each node holds two L3 domains.
        let t = two_by(epyc(), 2)
            .cache(3, 32 << 20, "0-1")
            .cache(3, 32 << 20, "2-3")
            .cache(3, 32 << 20, "4-5")
            .cache(3, 32 << 20, "6-7")
            .cache(3, 32 << 20, "8-9")
            .cache(3, 32 << 20, "10-11")
            .cache(3, 32 << 20, "12-13")
            .cache(3, 32 << 20, "14-15")
            .build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("NPS2"));
        // Nodes equal to L3 domains.
        let t = two_by(epyc(), 4)
            .cache(3, 32 << 20, "0-1")
            .cache(3, 32 << 20, "2-3")
            .cache(3, 32 << 20, "4-5")
            .cache(3, 32 << 20, "6-7")
            .cache(3, 32 << 20, "8-9")
            .cache(3, 32 << 20, "10-11")
            .cache(3, 32 << 20, "12-13")
            .cache(3, 32 << 20, "14-15")
            .build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("L3-as-NUMA"));
        assert!(t.numa_mode.reason.contains("L3"), "{}", t.numa_mode.reason);
        // Pre-Zen multi-chip Opteron.
        let t = two_by(Machine::new(Vendor::Amd, "AMD Opteron(tm) Processor 6174").family(16), 2)
            .build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("per-die"));
    }

    #[test]
    fn kunpeng_per_die() {
        let t = two_by(Machine::new(Vendor::Hisilicon, "HiSilicon Kunpeng 920"), 2).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage);
        assert_eq!(t.numa_mode.label.as_deref(), Some("per-die"));
        let t = Machine::new(Vendor::Arm, "Arm Neoverse-N1")
            .package_dies(0, &["0-3", "4-7"])
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("per-die"));
    }

    #[test]
    fn numa_off_kernel_vs_firmware() {
        let two_pkg_one_node =
            || xeon("Xeon").package(0, "0-3").package(1, "4-7").node(0, "0-7", 2 * GIB);
        let t = two_pkg_one_node().cmdline(Some("ro quiet numa=off")).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByKernel);
        assert!(t.numa_mode.reason.contains("numa=off"), "{}", t.numa_mode.reason);
        let t = two_pkg_one_node().cmdline(Some("ro quiet")).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
        assert!(t.numa_mode.reason.contains("2 packages"), "{}", t.numa_mode.reason);
        assert!(!t.numa_mode.reason.contains("not ruled out"), "{}", t.numa_mode.reason);
        let t = two_pkg_one_node().cmdline(None).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
        assert!(t.numa_mode.reason.contains("not ruled out"), "{}", t.numa_mode.reason);
    }

    #[test]
    fn fake_numa_and_unknown() {
        let t = xeon("Xeon")
            .package(0, "0-3")
            .node(0, "0-1", GIB)
            .node(1, "2-3", GIB)
            .cmdline(Some("numa=fake=2"))
            .build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::Fake);
        assert!(t.numa_mode.reason.contains("fake=2"));
        let t = xeon("Xeon").package(0, "0-3").build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::Unknown);
    }

    #[test]
    fn nodes_spanning_packages() {
        let t = xeon("Itanium")
            .package(0, "0-1")
            .package(1, "2-3")
            .package(2, "4-5")
            .package(3, "6-7")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodesSpanPackages);
        assert!(t.numa_mode.reason.contains("0-1"), "{}", t.numa_mode.reason);
    }

    #[test]
    fn uneven_nodes_per_package() {
        let t = xeon("Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-1", GIB)
            .node(1, "2-3", GIB)
            .node(2, "4-7", GIB)
            .build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage);
        assert_eq!(t.numa_mode.nodes_per_package, None);
        assert!(t.numa_mode.reason.contains("package 0: 2"), "{}", t.numa_mode.reason);
    }

    #[test]
    fn overlapping_nodes_warn_and_count_once() {
        let mut m = xeon("Xeon").package(0, "0-3").package(1, "4-7");
        for i in 0..4 {
            m = m.node(i, "0-7", GIB);
        }
        let t = m.distances(&[&[10; 4], &[10; 4], &[10; 4], &[10; 4]]).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
        assert!(t.numa_mode.reason.contains("3 node(s) repeat CPUs"), "{}", t.numa_mode.reason);
        assert!(
            t.warnings.iter().any(|w| w.contains("nodes 1-3 list CPUs that node 0")),
            "{:?}",
            t.warnings
        );
        assert!(
            t.warnings.iter().any(|w| w.contains("every distance entry is 10")),
            "{:?}",
            t.warnings
        );
    }

    #[test]
    fn asymmetric_and_odd_distances_warn() {
        let t = xeon("Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .distances(&[&[10, 21], &[31, 10]])
            .build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodePerPackage);
        assert!(
            t.warnings.iter().any(|w| w.contains("asymmetric") && w.contains("0->1 = 21")),
            "{:?}",
            t.warnings
        );
        let t = xeon("Xeon")
            .package(0, "0-3")
            .package(1, "4-7")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .distances(&[&[20, 10], &[10, 20]])
            .build();
        assert!(
            t.warnings.iter().any(|w| w.contains("smaller than the local")),
            "{:?}",
            t.warnings
        );
        // A consistent machine gives no warning.
        let t = two_by(xeon("Xeon"), 2).build();
        assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    }

    #[test]
    fn online_cpus_outside_nodes_warn() {
        let t = xeon("Xeon").package(0, "0-3").node(0, "0-1", GIB).build();
        assert!(
            t.warnings.iter().any(|w| w.contains("online CPUs 2-3 belong to no node")),
            "{:?}",
            t.warnings
        );
    }
}
