//! The kernel rules: NUMA balancing, zone reclaim, transparent and
//! reserved huge pages, swappiness.

use super::*;

pub(super) fn numa_balancing(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let want_on = matches!(i.profile, Profile::General | Profile::Virtualization);
    let expected = if want_on {
        "1 (unless every process is bound)"
    } else {
        "0 (processes are bound explicitly)"
    };
    let v = match &i.settings.numa_balancing {
        Read::Value(v) => *v,
        other => {
            if !multi_node(i.topology) {
                return Vec::new();
            }
            return rule.not_read(i.terms, "kernel.numa_balancing", other, expected);
        }
    };
    let found = format!("kernel.numa_balancing = {v}");
    if !multi_node(i.topology) {
        return rule
            .finding(Severity::Ok)
            .found(format!("{found} (single node: no effect)"))
            .expected("anything: one node")
            .why("With one node there is nothing to balance.")
            .done();
    }
    let ev = latency_evidence(i.evidence);
    match (v != 0, want_on) {
        (true, false) => rule.finding(Severity::Warn)
            .found(found)
            .expected(expected)
            .why("NUMA balancing unmaps pages to sample accesses and migrates them, which adds latency spikes to workloads that are already bound to nodes.")
            .fix("sysctl -w kernel.numa_balancing=0 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
            .evidence(ev)
            .done(),
        (false, true) => rule.finding(Severity::Info)
            .found(found)
            .expected(expected)
            .why("Without NUMA balancing, unbound processes keep their pages where they were first touched, often on a remote node.")
            .fix("sysctl -w kernel.numa_balancing=1 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
            .evidence(ev)
            .done(),
        _ => rule.finding(Severity::Ok)
            .found(found)
            .expected(expected)
            .why(if want_on {
                "Unbound processes get their pages migrated towards the CPUs that use them."
            } else {
                "Bound workloads are not disturbed by page sampling and migration."
            })
            .done(),
    }
}

pub(super) fn zone_reclaim(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let expected = if i.profile == Profile::Hpc {
        "0 (1 acceptable for strictly node-local HPC jobs)"
    } else {
        "0"
    };
    let v = match &i.settings.zone_reclaim_mode {
        Read::Value(v) => *v,
        other => {
            if !multi_node(i.topology) {
                return Vec::new();
            }
            return rule.not_read(i.terms, "vm.zone_reclaim_mode", other, expected);
        }
    };
    let found = format!("vm.zone_reclaim_mode = {v}");
    if v == 0 || !multi_node(i.topology) || i.profile == Profile::Hpc {
        return rule
            .finding(Severity::Ok)
            .found(found)
            .expected(expected)
            .why("Allocations fall back to another node instead of reclaiming the local one.")
            .done();
    }
    let sev = if i.profile == Profile::Database { Severity::Critical } else { Severity::Warn };
    rule.finding(sev)
        .found(found)
        .expected(expected)
        .why("zone_reclaim_mode makes the kernel drop page cache (and possibly write back) on the local node before allocating remotely, which stalls database and file-serving workloads.")
        .fix("sysctl -w vm.zone_reclaim_mode=0 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
        .done()
}

pub(super) fn thp_enabled(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    let p = i.profile;
    // A transparent huge page above 2 MiB (16 KiB or 64 KiB base pages):
    // `madvise` is as good as `always` for the profiles that want huge
    // pages (docs/audit.md, "Arm servers").
    let big = i.settings.thp_pmd_size_bytes.value().copied().filter(|&b| b > 2 << 20);
    let (expected, ok): (&str, &[&str]) = match p {
        Profile::Hpc | Profile::AiTraining | Profile::Virtualization if big.is_some() => {
            ("always or madvise", &["always", "madvise"])
        }
        Profile::Hpc | Profile::AiTraining | Profile::Virtualization => ("always", &["always"]),
        Profile::Database | Profile::Latency => ("madvise or never", &["madvise", "never"]),
        Profile::General => ("madvise or always", &["madvise", "always"]),
    };
    match &i.settings.thp_enabled {
        Read::Value(v) => {
            let size = big.map(|b| format!(" (huge pages of {} MiB)", b >> 20)).unwrap_or_default();
            let found = format!("transparent_hugepage/enabled = {v}{size}");
            if ok.contains(&v.as_str()) {
                let why = match big {
                    Some(_) if matches!(p, Profile::Hpc | Profile::AiTraining | Profile::Virtualization) => "With huge pages this large, each fault zeroes and compaction must find that much contiguous memory, and the larger base pages already reach further in the TLB: madvise (huge pages where the program asks) serves as well as always.",
                    _ => "Huge pages are used where this workload benefits from them.",
                };
                out.extend(
                    rule.finding(Severity::Ok).found(found).expected(expected).why(why).done(),
                );
            } else {
                let (sev, why) = match p {
                    Profile::Database | Profile::Latency => (Severity::Warn, "With THP always, page faults may stall on compaction and khugepaged collapses pages in the background, which shows as latency spikes (most database vendors advise madvise or never)."),
                    _ => (Severity::Info, "Large heaps and arrays touched sequentially get fewer TLB misses with huge pages, which THP always provides without code changes."),
                };
                out.extend(
                    rule.finding(sev)
                        .found(found)
                        .expected(expected)
                        .why(why)
                        .fix(format!("echo {} > /sys/kernel/mm/transparent_hugepage/enabled (persist: transparent_hugepage={} on the kernel line)", expected.split(' ').next().unwrap_or("madvise"), expected.split(' ').next().unwrap_or("madvise")), Needs::Runtime)
                        .done(),
                );
            }
        }
        other => {
            out.extend(rule.not_read(i.terms, "transparent_hugepage/enabled", other, expected))
        }
    }
    out
}

pub(super) fn thp_defrag(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    let p = i.profile;
    let expected = "defer, defer+madvise or madvise (not always)";
    match &i.settings.thp_defrag {
        Read::Value(v) if v == "always" => {
            let sev = match p {
                Profile::Database | Profile::Latency | Profile::Virtualization => Severity::Warn,
                _ => Severity::Info,
            };
            out.extend(
                rule.finding(sev)
                    .found(format!("transparent_hugepage/defrag = {v}"))
                    .expected(expected)
                    .why("defrag=always makes page faults compact memory synchronously when no huge page is free, which stalls the faulting thread for milliseconds.")
                    .fix("echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag", Needs::Runtime)
                    .done(),
            );
        }
        Read::Value(v) => out.extend(
            rule.finding(Severity::Ok)
                .found(format!("transparent_hugepage/defrag = {v}"))
                .expected(expected)
                .why("Page faults do not stall on synchronous compaction.")
                .done(),
        ),
        other => out.extend(rule.not_read(i.terms, "transparent_hugepage/defrag", other, expected)),
    }
    out
}

pub(super) fn hugepages(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let wants = matches!(i.profile, Profile::Database | Profile::Virtualization);
    let expected = if wants {
        "reserved on every node the instances or guests are bound to, evenly"
    } else {
        "none needed; if reserved, evenly across nodes"
    };
    let hp = match &i.settings.hugepages {
        Read::Value(v) => v,
        other => {
            return if wants {
                rule.not_read(i.terms, "per-node huge page counts", other, expected)
            } else {
                Vec::new()
            }
        }
    };
    let mem_nodes: Vec<u32> = i.topology.memory_nodes().map(|n| n.id).collect();
    let mut sizes: Vec<u64> = hp.iter().map(|h| h.page_size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut reserved_any = false;
    let mut uneven = Vec::new();
    let mut parts = Vec::new();
    for size in sizes {
        let per: Vec<(u32, u64, u64)> = hp
            .iter()
            .filter(|h| {
                h.page_size_bytes == size && (mem_nodes.is_empty() || mem_nodes.contains(&h.node))
            })
            .map(|h| (h.node, h.total, h.free))
            .collect();
        let total: u64 = per.iter().map(|p| p.1).sum();
        if total == 0 {
            continue;
        }
        reserved_any = true;
        let size_s = if size >= 1 << 30 {
            format!("{} GiB", size >> 30)
        } else {
            format!("{} MiB", size >> 20)
        };
        parts.push(format!(
            "{size_s}: {}",
            per.iter()
                .map(|(n, t, f)| format!("node {n} {t} ({f} free)"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let max = per.iter().map(|p| p.1).max().unwrap_or(0);
        let min = per.iter().map(|p| p.1).min().unwrap_or(0);
        if per.len() > 1 && (min == 0 || max as f64 > 1.5 * min as f64) {
            uneven.push(size_s);
        }
    }
    if !reserved_any {
        return if wants {
            rule.finding(Severity::Info)
                .found("no huge pages reserved")
                .expected(expected)
                .why("Reserved huge pages on the right node back a buffer pool or guest memory with no TLB pressure and no fragmentation risk at start-up.")
                .fix(reserve_fix(i.topology), Needs::Runtime)
                .done()
        } else {
            rule.finding(Severity::Ok)
                .found("no huge pages reserved")
                .expected(expected)
                .why("Nothing is withheld from normal allocations.")
                .done()
        };
    }
    if !uneven.is_empty() {
        let sev = if wants { Severity::Warn } else { Severity::Info };
        return rule.finding(sev)
            .found(format!("uneven reservation ({}): {}", uneven.join(", "), parts.join("; ")))
            .expected(expected)
            .why("An instance bound to a node with few reserved huge pages falls back to small pages or to another node's huge pages, which are remote.")
            .fix("set each node's count: echo N > /sys/devices/system/node/nodeX/hugepages/hugepages-<size>kB/nr_hugepages", Needs::Runtime)
            .done();
    }
    rule.finding(Severity::Ok)
        .found(parts.join("; "))
        .expected(expected)
        .why("Each node holds its share of huge pages.")
        .done()
}

/// How to reserve huge pages here: the machine's default size per node
/// (`Hugepagesize`: 2 MiB on x86-64 and 4 KiB-page arm64, 512 MiB on a
/// 64 KiB-page kernel), and its largest pool size on the kernel line.
fn reserve_fix(t: &Topology) -> String {
    let mem = t.system_memory.as_ref();
    let default = mem.and_then(|m| m.default_hugepage_bytes).unwrap_or(2 << 20);
    let largest = mem
        .and_then(|m| m.hugepages.iter().map(|h| h.page_size_bytes).max())
        .filter(|&b| b > default)
        .unwrap_or(1 << 30);
    let kernel_size = if largest >= 1 << 30 && largest.is_multiple_of(1 << 30) {
        format!("{}G", largest >> 30)
    } else {
        format!("{}M", largest >> 20)
    };
    format!(
        "echo N > /sys/devices/system/node/nodeX/hugepages/hugepages-{}kB/nr_hugepages for each node X (or hugepagesz={kernel_size} hugepages=N on the kernel line)",
        default >> 10
    )
}

pub(super) fn swappiness(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let cares = matches!(i.profile, Profile::Database | Profile::Latency);
    if !cares {
        return Vec::new();
    }
    let expected = "1 to 10 when swap is present";
    let v = match &i.settings.swappiness {
        Read::Value(v) => *v,
        other => return rule.not_read(i.terms, "vm.swappiness", other, expected),
    };
    let swap = i.settings.swap_total_bytes.value().copied();
    let found = format!(
        "vm.swappiness = {v}, swap {}",
        swap.map(gib).unwrap_or_else(|| "size unknown".to_string())
    );
    if v <= 10 || swap == Some(0) {
        return rule
            .finding(Severity::Ok)
            .found(found)
            .expected(expected)
            .why("The kernel prefers dropping page cache to swapping the workload's memory.")
            .done();
    }
    let sev = if i.profile == Profile::Database { Severity::Warn } else { Severity::Info };
    rule.finding(sev)
        .found(found)
        .expected(expected)
        .why("With swap present, a high swappiness lets the kernel swap out cold parts of a buffer pool or heap, and the next access waits on disk.")
        .fix("sysctl -w vm.swappiness=1 (persist in /etc/sysctl.d/)", Needs::Runtime)
        .done()
}
