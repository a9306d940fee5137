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

/// A mode under construction: certain and without alternatives until said
/// otherwise.
fn mode(
    kind: NumaModeKind,
    nodes_per_package: Option<u32>,
    label: Option<&str>,
    reason: String,
) -> NumaMode {
    NumaMode {
        kind,
        nodes_per_package,
        label: label.map(str::to_string),
        reason,
        confidence: Confidence::Certain,
        alternatives: Vec::new(),
    }
}

/// The mode before inference: unknown, with nothing said.
pub fn undetermined() -> NumaMode {
    mode(NumaModeKind::Unknown, None, None, String::new())
}

fn alt(kind: NumaModeKind, label: Option<&str>, tell: String) -> Alternative {
    Alternative { kind, label: label.map(str::to_string), tell }
}

impl NumaMode {
    fn with(mut self, confidence: Confidence, alternatives: Vec<Alternative>) -> NumaMode {
        self.confidence = confidence;
        self.alternatives = alternatives;
        self
    }
}

/// The mode the machine's nodes, packages, caches and kernel command line
/// imply, with the vendor's name for it, the reason, how sure that is and
/// what else the evidence fits.
pub fn infer_mode(t: &Topology) -> NumaMode {
    // The firmware's own description (ACPI SRAT), where it was read.
    let fw_domains = t.firmware_numa.as_ref().and_then(|f| f.local_domains());
    if let Some(m) = before_nodes(t, fw_domains) {
        return m;
    }
    let e = Evidence::of(t);
    if t.packages_unknown {
        return packages_unknown(&e);
    }
    if e.node_pkgs.len() <= 1 {
        return one_cpu_node(t, &e, fw_domains);
    }
    by_packages(t, &e)
}

/// What every inference past the command line reads: the nodes' CPUs
/// (each counted once), the packages they touch, and the notes every
/// reason ends with.
struct Evidence {
    npk: usize,
    /// `; CPU-less memory nodes ...`, or empty.
    mem_note: String,
    /// `; firmware lists some CPUs in several nodes ...`, or empty.
    overlap_note: String,
    /// Nodes that repeat CPUs of an earlier node.
    overlapping: usize,
    eff: Vec<(u32, CpuSet)>,
    /// Each node with CPUs and the packages its CPUs belong to.
    node_pkgs: Vec<(u32, BTreeSet<u32>)>,
}

impl Evidence {
    fn of(t: &Topology) -> Evidence {
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
        Evidence { npk, mem_note, overlap_note, overlapping, eff, node_pkgs }
    }
}

/// The mode the kernel command line settles (`numa=fake=`, `numa=off`),
/// or the lack of any node directory; `None` when the nodes must be read.
fn before_nodes(t: &Topology, fw_domains: Option<usize>) -> Option<NumaMode> {
    let numa_opt = t.cmdline.get("numa");
    let npk = t.packages.len();
    if let Some(v) = numa_opt.and_then(|v| v.strip_prefix("fake=")) {
        return Some(mode(
            NumaModeKind::Fake,
            None,
            None,
            format!(
                "numa=fake={v} on the kernel command line: the kernel split memory into emulated \
                 nodes, which say nothing about the hardware"
            ),
        ));
    }
    if numa_opt == Some("off") {
        let fw = match fw_domains {
            Some(0) => "; the firmware describes no NUMA domains either (no ACPI SRAT)".to_string(),
            Some(n) => format!(
                "; the firmware describes {n} proximity domain(s) with CPUs and memory (ACPI \
                 SRAT), which the kernel does not use"
            ),
            None => String::new(),
        };
        return Some(mode(
            NumaModeKind::DisabledByKernel,
            None,
            None,
            format!(
                "numa=off on the kernel command line: the kernel shows one node for {npk} \
                 package(s), whatever the firmware describes{fw}"
            ),
        ));
    }
    if t.nodes.is_empty() {
        return Some(mode(
            NumaModeKind::Unknown,
            None,
            None,
            "no NUMA node directory (sys/devices/system/node): the kernel was built without NUMA \
             support or the capture lacks it"
                .into(),
        ));
    }
    None
}

/// The kernel gives no package ids: one node, or no mode at all.
fn packages_unknown(e: &Evidence) -> NumaMode {
    let Evidence { overlap_note, mem_note, .. } = e;
    let cpu_nodes = e.node_pkgs.len();
    let unknown = "the kernel gives no package ids (physical_package_id is -1), so the \
                   packages listed are numbered from core_siblings and say nothing about \
                   sockets";
    let count = "count the sockets (the machine's documentation, or lscpu/dmidecode on a \
                 kernel that reports them)";
    if cpu_nodes <= 1 {
        return mode(
            NumaModeKind::SingleNode,
            None,
            None,
            format!("one node with CPUs; {unknown}{overlap_note}{mem_note}"),
        )
        .with(
            Confidence::Likely,
            vec![alt(
                NumaModeKind::DisabledByFirmware,
                None,
                format!(
                    "several sockets whose memory the firmware interleaves show one node \
                     too: {count}"
                ),
            )],
        );
    }
    mode(
        NumaModeKind::PackagesUnknown,
        None,
        None,
        format!(
            "{cpu_nodes} nodes with CPUs, but {unknown}: whether a node is a socket, part of \
             one or several is not known, so no mode is inferred{overlap_note}{mem_note}"
        ),
    )
    .with(
        Confidence::Ambiguous,
        vec![
            alt(
                NumaModeKind::NodePerPackage,
                None,
                format!("{count}: {cpu_nodes} sockets give one node each"),
            ),
            alt(
                NumaModeKind::NodesPerPackage,
                None,
                format!("{count}: fewer sockets than nodes means several nodes per socket"),
            ),
            alt(
                NumaModeKind::NodesSpanPackages,
                None,
                format!("{count}: more sockets than nodes means nodes hold several sockets"),
            ),
        ],
    )
}

/// One node with CPUs: NUMA off in the kernel or the firmware, or one
/// package.
fn one_cpu_node(t: &Topology, e: &Evidence, fw_domains: Option<usize>) -> NumaMode {
    let Evidence { npk, overlap_note, mem_note, overlapping, .. } = e;
    if let Some(n) = fw_domains.filter(|n| *n > 1) {
        // The firmware describes NUMA domains and the kernel made one
        // node without numa=off: it ignored the SRAT.
        return mode(
            NumaModeKind::DisabledByKernel,
            None,
            None,
            format!(
                "the firmware describes {n} proximity domains with CPUs and memory (ACPI SRAT) but the \
                 kernel shows one node with CPUs for {npk} package(s): the kernel ignores \
                 the firmware's NUMA description (numa=off, numa=noacpi, acpi=off, or a \
                 kernel without NUMA support){overlap_note}{mem_note}"
            ),
        );
    }
    if *npk > 1 {
        let distinct = if *overlapping > 0 {
            format!(
                " when each CPU is counted once ({overlapping} node(s) repeat CPUs that an \
                 earlier node lists)"
            )
        } else {
            String::new()
        };
        // No SRAT (or one domain) settles it without the command line.
        let fw_says = fw_domains.is_some();
        let unread = t.cmdline.raw.is_none() && !fw_says;
        let fw_note = match fw_domains {
            Some(0) => ", and the firmware has no ACPI SRAT",
            Some(_) => ", and the firmware's ACPI SRAT has one domain with CPUs and memory",
            None => "",
        };
        let cmd_note = if unread {
            " (the kernel command line could not be read, so numa=off is not ruled out)"
        } else {
            ""
        };
        let m = mode(
            NumaModeKind::DisabledByFirmware,
            None,
            None,
            format!(
                "{npk} packages but only one node with CPUs{distinct}, and no numa=off on \
                 the kernel command line{cmd_note}{fw_note}: the firmware interleaves memory across the \
                 sockets (NUMA disabled or node interleaving enabled in the BIOS){mem_note}"
            ),
        );
        return if unread {
            m.with(
                Confidence::Ambiguous,
                vec![alt(
                    NumaModeKind::DisabledByKernel,
                    None,
                    "numa=off on the kernel command line gives the same single node: read \
                     /proc/cmdline"
                        .into(),
                )],
            )
        } else {
            m
        };
    }
    mode(
        NumaModeKind::SingleNode,
        Some(1),
        None,
        format!("one package and one node with CPUs{overlap_note}{mem_note}"),
    )
}

/// Several nodes with CPUs: nodes spanning packages, or how many nodes
/// each package holds (and the vendor's name for it).
fn by_packages(t: &Topology, e: &Evidence) -> NumaMode {
    let Evidence { npk, overlap_note, mem_note, node_pkgs, eff, .. } = e;
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
    for (_, p) in node_pkgs {
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
    let v = vendor_label(t, n, eff);
    let mut m = mode(
        NumaModeKind::NodesPerPackage,
        Some(n),
        v.label.as_deref(),
        format!(
            "each of the {npk} package(s) holds {n} nodes with CPUs{}{overlap_note}{mem_note}",
            v.why
        ),
    );
    m.confidence = v.confidence;
    m.alternatives = v.alternatives;
    m
}

/// What [`vendor_label`] concludes.
struct VendorLabel {
    label: Option<String>,
    /// Appended to the reason, starting with ": ".
    why: String,
    confidence: Confidence,
    alternatives: Vec<Alternative>,
}

fn said(label: Option<String>, why: String, confidence: Confidence) -> VendorLabel {
    VendorLabel { label, why, confidence, alternatives: Vec::new() }
}

/// The nodes-per-socket values AMD's BIOS offers (NPS0 is one node for the
/// whole machine, which shows as firmware interleaving).
const NPS_VALUES: [u32; 2] = [2, 4];

/// The vendor's name for `n` nodes per package, how sure, and why.
fn vendor_label(t: &Topology, n: u32, eff: &[(u32, CpuSet)]) -> VendorLabel {
    let model = t.cpu_model.as_deref().unwrap_or("");
    let dies = t.packages.iter().map(|p| p.dies.len() as u32).max().unwrap_or(1);
    match t.cpu_vendor {
        Vendor::Intel => {
            let haswell_broadwell_ep =
                model.contains("E5-") && (model.contains(" v3") || model.contains(" v4")) && n == 2;
            if haswell_broadwell_ep {
                return said(
                    Some("COD".into()),
                    format!(": Cluster-on-Die, as Xeon E5 v3/v4 ({model}) offer"),
                    Confidence::Likely,
                );
            }
            if dies > 1 && n == dies {
                return said(
                    Some("per-die".into()),
                    format!(": one node per die ({dies} dies per package)"),
                    Confidence::Certain,
                );
            }
            if dies > 1 && n.is_multiple_of(dies) {
                let k = n / dies;
                return said(
                    Some(format!("SNC{k} per die")),
                    format!(": {dies} dies per package, {k} sub-NUMA clusters each"),
                    Confidence::Likely,
                );
            }
            said(
                Some(format!("SNC{n}")),
                format!(": Intel Sub-NUMA Clustering (SNC{n})"),
                Confidence::Likely,
            )
        }
        Vendor::Amd => amd_label(t, n, dies, eff),
        Vendor::Hisilicon => said(
            Some("per-die".into()),
            ": one node per die (Kunpeng super CPU cluster, SCCL)".into(),
            Confidence::Likely,
        ),
        Vendor::Arm if dies > 1 && n == dies => said(
            Some("per-die".into()),
            format!(": one node per die ({dies} dies per package)"),
            Confidence::Certain,
        ),
        Vendor::Arm => said(
            None,
            format!(
                ": the firmware divides each package's memory into {n} nodes (an Arm server's \
                 NUMA mode, as Ampere Altra's firmware offers)"
            ),
            Confidence::Certain,
        ),
        _ => said(None, String::new(), Confidence::Certain),
    }
}

/// AMD: per-die before Zen; from Zen on, NPS2/NPS4 or "L3 as NUMA domain",
/// told apart by the number of nodes per package and the L3 caches each
/// node holds, and said to be ambiguous where the files fit both.
fn amd_label(t: &Topology, n: u32, dies: u32, eff: &[(u32, CpuSet)]) -> VendorLabel {
    let model = t.cpu_model.as_deref().unwrap_or("");
    // Before Zen (family 17h) multi-node packages were multi-chip modules
    // with one node per die.
    if model.contains("Opteron") || t.cpu_family.is_some_and(|f| f < 0x17) {
        return said(
            Some("per-die".into()),
            ": a multi-chip package with one node per die (Opteron Magny-Cours / Interlagos)"
                .into(),
            Confidence::Likely,
        );
    }
    let nps_value = NPS_VALUES.contains(&n);
    let l3 = l3_per_node(t, eff);
    let nps_alt = |tell: String| alt(NumaModeKind::NodesPerPackage, Some(&format!("NPS{n}")), tell);
    let l3_alt = |tell: String| alt(NumaModeKind::NodesPerPackage, Some("L3-as-NUMA"), tell);
    match l3 {
        L3Fit::OnePerNode if !nps_value => said(
            Some("L3-as-NUMA".into()),
            format!(
                ": each node is exactly one L3 cache domain, and {n} nodes per package is not a \
                 nodes-per-socket setting (NPS1, NPS2 or NPS4), so it is the 'L3 as NUMA domain' \
                 BIOS option"
            ),
            Confidence::Certain,
        ),
        L3Fit::OnePerNode => {
            let slit = intra_package_levels(t);
            let slit_note = match slit.len() {
                0 => String::new(),
                1 => format!(
                    "; inside a package every remote distance is {}, which does not tell them \
                     apart either",
                    slit[0]
                ),
                _ => format!(
                    "; the SLIT inside a package has several levels ({}), the quadrant pattern \
                     NPS{n} firmware writes, which 'L3 as NUMA' on the same part writes too",
                    slit.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                ),
            };
            VendorLabel {
                label: None,
                why: format!(
                    ": each node is exactly one L3 cache domain and each package has {n} of \
                     them, which NPS{n} and the 'L3 as NUMA domain' BIOS option both give \
                     (sysfs cannot tell them apart){slit_note}"
                ),
                confidence: Confidence::Ambiguous,
                alternatives: vec![
                    nps_alt(format!(
                        "the BIOS shows 'NUMA nodes per socket' = NPS{n} and 'LLC as NUMA node' \
                         disabled"
                    )),
                    l3_alt(format!(
                        "the BIOS shows 'LLC as NUMA node' (L3 as NUMA domain) enabled; counting \
                         L3s cannot tell, since this part has {n} per socket, one per node either \
                         way (in a virtual machine the L3s are the hypervisor's: on a host part \
                         with more L3s per socket, e.g. 8 CCDs, an NPS{n} node holds several)"
                    )),
                ],
            }
        }
        L3Fit::Several(_) | L3Fit::Split if nps_value => said(
            Some(format!("NPS{n}")),
            format!(
                ": the nodes-per-socket BIOS setting NPS{n}; not 'L3 as NUMA domain', {}",
                l3.why_not()
            ),
            Confidence::Certain,
        ),
        _ if dies > 1 && n == dies => said(
            Some("per-die".into()),
            format!(": one node per die ({dies} dies per package)"),
            Confidence::Likely,
        ),
        L3Fit::Unknown if nps_value => VendorLabel {
            label: None,
            why: format!(
                ": NPS{n} or the 'L3 as NUMA domain' BIOS option; the L3 caches are not known \
                 (no cache/index3), so the two cannot be told apart"
            ),
            confidence: Confidence::Ambiguous,
            alternatives: vec![
                nps_alt(format!("the BIOS shows 'NUMA nodes per socket' = NPS{n}")),
                l3_alt(
                    "the BIOS shows 'LLC as NUMA node' enabled, or each node's CPUs share one \
                     L3 (cpuN/cache/index3/shared_cpu_list)"
                        .into(),
                ),
            ],
        },
        L3Fit::Unknown => VendorLabel {
            label: Some("L3-as-NUMA".into()),
            why: format!(
                ": {n} nodes per package is not a nodes-per-socket setting (NPS1, NPS2 or NPS4), \
                 which leaves the 'L3 as NUMA domain' BIOS option; the L3 caches are not known \
                 (no cache/index3) to confirm it"
            ),
            confidence: Confidence::Likely,
            alternatives: Vec::new(),
        },
        L3Fit::Several(_) | L3Fit::Split => said(
            None,
            format!(
                ": {n} nodes per package is not a nodes-per-socket setting (NPS1, NPS2 or NPS4), \
                 and not 'L3 as NUMA domain' either, {}",
                l3.why_not()
            ),
            Confidence::Certain,
        ),
    }
}

/// How nodes relate to L3 cache domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum L3Fit {
    /// No L3 cache is known.
    Unknown,
    /// Every node with CPUs is exactly the online CPUs of one L3.
    OnePerNode,
    /// Some node touches several L3s (the most any node touches).
    Several(usize),
    /// Nodes are smaller than their L3 (several nodes share one).
    Split,
}

impl L3Fit {
    /// Why nodes are not L3 domains, for a reason.
    fn why_not(self) -> String {
        match self {
            L3Fit::Several(k) => format!("since a node holds up to {k} L3 cache domains"),
            _ => "since several nodes share one L3 cache".into(),
        }
    }
}

fn l3_per_node(t: &Topology, eff: &[(u32, CpuSet)]) -> L3Fit {
    let l3: Vec<&CpuSet> = t
        .caches
        .iter()
        .filter(|c| c.level == 3 && c.kind != CacheKind::Instruction)
        .map(|c| &c.cpus)
        .collect();
    if l3.is_empty() {
        return L3Fit::Unknown;
    }
    let online = &t.online_cpus;
    let mut most = 0;
    let mut exact = true;
    for (_, cpus) in eff.iter().filter(|(_, c)| !c.is_empty()) {
        let mine = cpus.intersection(online);
        let touched = l3.iter().filter(|l| !l.is_disjoint(&mine)).count();
        most = most.max(touched);
        exact &= touched == 1 && l3.iter().any(|l| l.intersection(online) == mine);
    }
    if exact {
        L3Fit::OnePerNode
    } else if most > 1 {
        L3Fit::Several(most)
    } else {
        L3Fit::Split
    }
}

/// The distinct remote distances between nodes of the same package (empty
/// without a distance matrix).
fn intra_package_levels(t: &Topology) -> Vec<u32> {
    let mut levels = BTreeSet::new();
    for p in &t.packages {
        for a in p.nodes.iter() {
            for b in p.nodes.iter() {
                if a != b {
                    if let Some(d) = t.distance(a, b) {
                        levels.insert(d);
                    }
                }
            }
        }
    }
    levels.into_iter().collect()
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
        assert_eq!(t.numa_mode.confidence, Confidence::Certain);
        // Nodes equal to L3 domains, 4 per package: NPS4 and L3-as-NUMA
        // give the same files.
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
        assert_eq!(t.numa_mode.label, None);
        assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
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

    /// An Arm package of one die holding two nodes: the firmware's NUMA
    /// mode, in words that name no x86 setting.
    #[test]
    fn arm_nodes_per_package_are_the_firmwares_mode() {
        let t = Machine::new(Vendor::Arm, "Arm Neoverse-N1")
            .package(0, "0-7")
            .node(0, "0-3", GIB)
            .node(1, "4-7", GIB)
            .build();
        let m = &t.numa_mode;
        assert_eq!(
            (m.kind, m.nodes_per_package, m.label.as_deref()),
            (NumaModeKind::NodesPerPackage, Some(2), None)
        );
        assert!(m.reason.contains("firmware divides each package's memory into 2 nodes"), "{m:?}");
        for w in ["SNC", "NPS", "Sub-NUMA", "Cluster-on-Die"] {
            assert!(!m.reason.contains(w), "{w}: {m:?}");
        }
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
        assert_eq!(t.numa_mode.confidence, Confidence::Certain);
        let t = two_pkg_one_node().cmdline(None).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
        assert!(t.numa_mode.reason.contains("not ruled out"), "{}", t.numa_mode.reason);
        assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
        assert_eq!(t.numa_mode.alternatives[0].kind, NumaModeKind::DisabledByKernel);
    }

    /// The firmware's SRAT tells `numa=off` over a NUMA firmware from
    /// firmware interleaving, also where the command line is unknown.
    #[test]
    fn the_srat_tells_numa_off_from_firmware_interleave() {
        use crate::acpi::{parse_srat, FirmwareNuma, Table};
        use crate::synthetic::acpi as t;
        let two_pkg_one_node =
            || xeon("Xeon").package(0, "0-3").package(1, "4-7").node(0, "0-7", 2 * GIB);
        let two_domains = || FirmwareNuma {
            srat: Table::Found(
                parse_srat(&t::srat(
                    3,
                    &[t::apic(0, 0, true), t::apic(1, 4, true), t::memory(0, 0, GIB, 1), {
                        t::memory(1, 4 * GIB, GIB, 1)
                    }],
                ))
                .unwrap(),
            ),
            slit: Table::NotInFirmware,
        };
        let none = || FirmwareNuma { srat: Table::NotInFirmware, slit: Table::NotInFirmware };
        // BIOS NUMA on + numa=off vs BIOS NUMA off + numa=off: the same
        // kind (the kernel option), the firmware named in the reason.
        let on = two_pkg_one_node().cmdline(Some("numa=off")).firmware_numa(two_domains()).build();
        assert_eq!(on.numa_mode.kind, NumaModeKind::DisabledByKernel);
        assert!(
            on.numa_mode.reason.contains("describes 2 proximity domain(s)"),
            "{}",
            on.numa_mode.reason
        );
        let off = two_pkg_one_node().cmdline(Some("numa=off")).firmware_numa(none()).build();
        assert!(
            off.numa_mode.reason.contains("no NUMA domains either"),
            "{}",
            off.numa_mode.reason
        );
        // Without the command line, the SRAT decides, with certainty.
        let t = two_pkg_one_node().cmdline(None).firmware_numa(two_domains()).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByKernel);
        assert_eq!(t.numa_mode.confidence, Confidence::Certain);
        assert!(
            t.numa_mode.reason.contains("ignores the firmware's NUMA"),
            "{}",
            t.numa_mode.reason
        );
        let t = two_pkg_one_node().cmdline(None).firmware_numa(none()).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
        assert_eq!(t.numa_mode.confidence, Confidence::Certain);
        assert!(t.numa_mode.alternatives.is_empty());
        assert!(t.numa_mode.reason.contains("no ACPI SRAT"), "{}", t.numa_mode.reason);
        // An SRAT that could not be read changes nothing.
        let unknown = FirmwareNuma {
            srat: Table::Unknown("needs root".into()),
            slit: Table::Unknown("needs root".into()),
        };
        let t = two_pkg_one_node().cmdline(None).firmware_numa(unknown).build();
        assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
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

    /// 2 sockets x `per` nodes of 2 CPUs, one L3 per node, the SLIT given
    /// by `d(i, j)` for nodes i, j.
    fn epyc_one_l3_per_node(per: u32, d: impl Fn(u32, u32) -> u32) -> Machine {
        let mut m = Machine::new(Vendor::Amd, "AMD EPYC 7543 32-Core Processor")
            .family(25)
            .package(0, &format!("0-{}", 2 * per - 1))
            .package(1, &format!("{}-{}", 2 * per, 4 * per - 1));
        for i in 0..2 * per {
            let cpus = format!("{}-{}", 2 * i, 2 * i + 1);
            m = m.node(i, &cpus, GIB).cache(3, 32 << 20, &cpus);
        }
        let rows: Vec<Vec<u32>> =
            (0..2 * per).map(|i| (0..2 * per).map(|j| d(i, j)).collect()).collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        m.distances(&refs)
    }

    /// The NPS4 SLIT: 10 local, 11 to the neighbouring quadrant, 12
    /// across the socket, 32 to the other socket (`per` nodes a socket).
    fn quadrants(per: u32) -> impl Fn(u32, u32) -> u32 {
        move |i, j| {
            if i == j {
                10
            } else if i / per != j / per {
                32
            } else if i / 2 == j / 2 {
                11
            } else {
                12
            }
        }
    }

    fn labels(m: &NumaMode) -> Vec<Option<&str>> {
        m.alternatives.iter().map(|a| a.label.as_deref()).collect()
    }

    #[test]
    fn nps4_with_one_l3_per_quadrant_is_ambiguous_with_l3_as_numa() {
        let t = epyc_one_l3_per_node(4, quadrants(4)).build();
        let m = &t.numa_mode;
        assert_eq!(m.kind, NumaModeKind::NodesPerPackage);
        assert_eq!(m.nodes_per_package, Some(4));
        assert_eq!(m.label, None, "must not pick one: {m:?}");
        assert_eq!(m.confidence, Confidence::Ambiguous);
        assert_eq!(labels(m), vec![Some("NPS4"), Some("L3-as-NUMA")]);
        assert!(m.alternatives.iter().all(|a| a.tell.contains("BIOS")), "{m:?}");
        assert!(m.reason.contains("sysfs cannot tell"), "{}", m.reason);
        assert!(m.reason.contains("several levels (11, 12)"), "{}", m.reason);
        assert_eq!(m.label_text().as_deref(), Some("NPS4 or L3-as-NUMA"));
        assert!(t.summary_line().contains("(NPS4 or L3-as-NUMA, 4 per package)"));
        // Uniform distances inside a socket do not tell them apart either.
        let t = epyc_one_l3_per_node(4, |i, j| match (i == j, i / 4 == j / 4) {
            (true, _) => 10,
            (false, true) => 12,
            (false, false) => 32,
        })
        .build();
        assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
        assert!(
            t.numa_mode.reason.contains("every remote distance is 12"),
            "{}",
            t.numa_mode.reason
        );
    }

    #[test]
    fn eight_nodes_per_socket_is_l3_as_numa_because_no_nps_gives_eight() {
        let t = epyc_one_l3_per_node(8, quadrants(8)).build();
        let m = &t.numa_mode;
        assert_eq!(m.nodes_per_package, Some(8));
        assert_eq!(m.label.as_deref(), Some("L3-as-NUMA"));
        assert_eq!(m.confidence, Confidence::Certain);
        assert!(m.alternatives.is_empty(), "{m:?}");
        assert!(m.reason.contains("8 nodes per package is not a nodes-per-socket"), "{}", m.reason);
    }

    #[test]
    fn nps2_with_two_l3_per_node_is_not_l3_as_numa() {
        let mut m = Machine::new(Vendor::Amd, "AMD EPYC 7763 64-Core Processor")
            .family(25)
            .package(0, "0-7")
            .package(1, "8-15");
        for i in 0..4 {
            m = m.node(i, &format!("{}-{}", 4 * i, 4 * i + 3), GIB);
        }
        for i in 0..8 {
            m = m.cache(3, 32 << 20, &format!("{}-{}", 2 * i, 2 * i + 1));
        }
        let t = m.build();
        assert_eq!(t.numa_mode.label.as_deref(), Some("NPS2"));
        assert_eq!(t.numa_mode.confidence, Confidence::Certain);
        assert!(t.numa_mode.alternatives.is_empty());
        assert!(
            t.numa_mode.reason.contains("not 'L3 as NUMA domain', since a node holds up to 2 L3"),
            "{}",
            t.numa_mode.reason
        );
    }

    #[test]
    fn amd_without_l3_information_names_both_readings() {
        let t = two_by(Machine::new(Vendor::Amd, "AMD EPYC 7543").family(25), 4).build();
        assert_eq!(t.numa_mode.label, None);
        assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
        assert_eq!(labels(&t.numa_mode), vec![Some("NPS4"), Some("L3-as-NUMA")]);
        assert!(t.numa_mode.reason.contains("no cache/index3"), "{}", t.numa_mode.reason);
    }

    #[test]
    fn unknown_packages_infer_nothing_from_packages() {
        // POWER7-like: physical_package_id -1, one "package" per core
        // rebuilt from core_siblings, 2 cores per node.
        let t = Machine::new(Vendor::Ibm, "POWER7")
            .package(0, "0-3")
            .package(1, "4-7")
            .package(2, "8-11")
            .package(3, "12-15")
            .node(0, "0-7", GIB)
            .node(1, "8-15", GIB)
            .packages_unknown()
            .build();
        let m = &t.numa_mode;
        assert_eq!(m.kind, NumaModeKind::PackagesUnknown);
        assert_eq!(m.label, None);
        assert_eq!(m.nodes_per_package, None);
        assert_eq!(m.confidence, Confidence::Ambiguous);
        assert!(m.reason.contains("physical_package_id is -1"), "{}", m.reason);
        assert!(!m.reason.contains("several packages"), "{}", m.reason);
        assert_eq!(m.alternatives.len(), 3);
        // The same tree with known package ids: nodes do span packages.
        let known = || {
            Machine::new(Vendor::Ibm, "POWER7")
                .package(0, "0-3")
                .package(1, "4-7")
                .package(2, "8-11")
                .package(3, "12-15")
        };
        let t = known().node(0, "0-7", GIB).node(1, "8-15", GIB).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::NodesSpanPackages);
        // One node and unknown packages: one node, perhaps several
        // sockets interleaved.
        let t = known().node(0, "0-15", GIB).packages_unknown().build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::SingleNode);
        assert_eq!(t.numa_mode.confidence, Confidence::Likely);
        assert_eq!(t.numa_mode.alternatives[0].kind, NumaModeKind::DisabledByFirmware);
        let t = known().node(0, "0-15", GIB).build();
        assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
    }
}
