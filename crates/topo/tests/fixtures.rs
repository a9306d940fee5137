//! Discovery against real machines' sysfs/procfs captures in
//! `../shared/fixtures/hwloc-sysfs` (hwloc's test suite, BSD-3-Clause),
//! compared with the facts in its `expected.json`, plus the NUMA mode each
//! machine should be inferred to run in.
//!
//! Run with `cargo test -p topo --features fixtures --test fixtures`.

use std::collections::BTreeMap;

use serde_json::Value;
use topo::{Confidence, NodeKind, NumaModeKind, SysRoot, Topology};

#[path = "support/captures.rs"]
mod captures;

/// The mode each capture should give: (kind, nodes per package, label).
fn expected_mode(name: &str) -> (NumaModeKind, Option<u32>, Option<&'static str>) {
    use NumaModeKind::*;
    match name {
        // Kunpeng 920: two dies (SCCLs) per package, a node each.
        "128arm-2pa2n8cluster4co" => (NodesPerPackage, Some(2), Some("per-die")),
        "16amd64-8n2c" | "16amd64-8n2c-cpusets" => (NodePerPackage, Some(1), None),
        "20em64t-hybrid-1p6c2t+2ca4co1t" => (SingleNode, Some(1), None),
        "20s390-2g6s4c" | "2i386-2t-hugepagesizecount" => (Unknown, None, None),
        // Each node is two sockets.
        "256ia64-64n2s2c" => (NodesSpanPackages, None, None),
        "32intel64-2p8co2t+8ve" => (NodePerPackage, Some(1), None),
        // Opteron Magny-Cours / Interlagos: two dies per package.
        "48amd64-4pa2n6c-sparse" | "64amd64-4s2n4ca2co" => {
            (NodesPerPackage, Some(2), Some("per-die"))
        }
        "8em64t-2s2ca2c" | "8em64t-2s2ca2c-buggynuma" => (DisabledByFirmware, None, None),
        // 4 packages x 2 dies, 2 nodes per die.
        "fakecpuid1f-64intel64-2p4d2n2c2t" => (NodesPerPackage, Some(4), Some("SNC2 per die")),
        // Xeon Gold 6230 in SNC2 (the CPU-less nodes come in addition).
        "fakememinitiators-1np2c+1npp+gi" | "memorysidecaches" => {
            (NodesPerPackage, Some(2), Some("SNC2"))
        }
        "nvidiagpunumanodes" => (NodePerPackage, Some(1), None),
        other => panic!("no expected NUMA mode for capture {other}: add it to expected_mode()"),
    }
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_u64().expect("id") as u32).collect())
        .unwrap_or_default()
}

/// Compares one capture; returns the differences found.
fn check(name: &str, exp: &Value, t: &Topology) -> Vec<String> {
    let mut bad = Vec::new();
    macro_rules! eq {
        ($what:expr, $got:expr, $want:expr $(,)?) => {{
            let (got, want): (String, String) = ($got, $want);
            if got != want {
                bad.push(format!("{}: got {got}, expected {want}", $what));
            }
        }};
    }
    let num = |k: &str| exp[k].as_u64().unwrap_or_else(|| panic!("{name}: expected.{k}"));

    eq!("packages", t.packages.len().to_string(), num("packages").to_string());
    eq!("numa_nodes", t.nodes.len().to_string(), num("numa_nodes").to_string());
    eq!(
        "numa_node_ids",
        format!("{:?}", t.nodes.iter().map(|n| n.id).collect::<Vec<_>>()),
        format!("{:?}", ids(&exp["numa_node_ids"])),
    );
    eq!(
        "numa_nodes_with_cpus",
        t.cpu_nodes().count().to_string(),
        num("numa_nodes_with_cpus").to_string(),
    );
    eq!(
        "memory_only_nodes",
        format!("{:?}", t.memory_only_nodes().iter().collect::<Vec<_>>()),
        format!("{:?}", ids(&exp["memory_only_nodes"])),
    );
    eq!(
        "cpu_only_nodes",
        format!("{:?}", t.cpu_only_nodes().iter().collect::<Vec<_>>()),
        format!("{:?}", ids(&exp["cpu_only_nodes"])),
    );
    eq!("pus", t.cpus.len().to_string(), num("pus").to_string());
    eq!("cores", t.core_count().to_string(), num("cores").to_string());
    eq!(
        "smt_threads_per_core",
        t.smt_threads_per_core().to_string(),
        num("smt_threads_per_core").to_string(),
    );
    eq!("online_cpus", t.online_cpus.to_list(), exp["online_cpus"].as_str().unwrap().into());
    eq!("offline_cpus", t.offline_cpus.to_list(), exp["offline_cpus"].as_str().unwrap().into());
    if let Some(d) = exp["dies"].as_u64() {
        eq!("dies", t.die_count().to_string(), d.to_string());
    }
    if let Some(c) = exp["clusters"].as_u64() {
        eq!("clusters", format!("{:?}", t.cluster_count()), format!("{:?}", Some(c as usize)));
    }

    // Per-node cpulists and memory.
    if let Some(m) = exp["node_cpulists"].as_object() {
        for (id, list) in m {
            let id: u32 = id.parse().unwrap();
            let got = t.node(id).map(|n| n.cpus.to_list());
            eq!(&format!("node {id} cpus"), format!("{got:?}"), format!("{:?}", list.as_str()));
        }
    }
    if let Some(m) = exp["node_mem_kib"].as_object() {
        for (id, kib) in m {
            let id: u32 = id.parse().unwrap();
            let got = t.node(id).map(|n| n.mem_total_bytes / 1024);
            eq!(
                &format!("node {id} MemTotal KiB"),
                format!("{got:?}"),
                format!("{:?}", kib.as_u64())
            );
        }
    }
    // Node kinds agree with the lists above.
    for n in &t.nodes {
        let want = match (n.cpus.is_empty(), n.mem_total_bytes == 0) {
            (false, false) => NodeKind::CpuMemory,
            (true, false) => NodeKind::MemoryOnly,
            (false, true) => NodeKind::CpuOnly,
            (true, true) => NodeKind::Neither,
        };
        eq!(&format!("node {} kind", n.id), format!("{:?}", n.kind), format!("{want:?}"));
    }

    // Distance matrix, rows in node-id order.
    let got: Vec<Vec<u32>> = t.nodes.iter().map(|n| n.distances.clone()).collect();
    let want: Vec<Vec<u32>> = exp["distance_matrix"]
        .as_array()
        .map(|rows| rows.iter().map(ids).collect())
        .unwrap_or_default();
    eq!("distance matrix", format!("{got:?}"), format!("{want:?}"));
    for n in &t.nodes {
        for m in &t.nodes {
            let i = t.nodes.iter().position(|x| x.id == m.id).unwrap();
            eq!(
                &format!("distance({},{})", n.id, m.id),
                format!("{:?}", t.distance(n.id, m.id)),
                format!(
                    "{:?}",
                    want.get(t.nodes.iter().position(|x| x.id == n.id).unwrap())
                        .and_then(|r| r.get(i))
                ),
            );
        }
    }

    // HMAT.
    if let Some(h) = exp["hmat_access"].as_object() {
        for (id, acc) in h {
            let id: u32 = id.parse().unwrap();
            let node = t.node(id);
            for key in ["access0", "access1"] {
                let e = &acc[key];
                let g = node.and_then(|n| n.hmat.as_ref()).and_then(|h| {
                    if key == "access0" {
                        h.access0.as_ref()
                    } else {
                        h.access1.as_ref()
                    }
                });
                if e.is_null() {
                    continue;
                }
                let Some(g) = g else {
                    bad.push(format!("node {id} {key}: missing"));
                    continue;
                };
                let w = format!(
                    "{:?} {:?} {:?} {:?} {:?} {:?}",
                    ids(&e["initiators"]),
                    ids(&e["targets"]),
                    e["read_bandwidth"].as_u64(),
                    e["write_bandwidth"].as_u64(),
                    e["read_latency"].as_u64(),
                    e["write_latency"].as_u64()
                );
                let gg = format!(
                    "{:?} {:?} {:?} {:?} {:?} {:?}",
                    g.initiators.iter().collect::<Vec<_>>(),
                    g.targets.iter().collect::<Vec<_>>(),
                    g.read_bandwidth_mbs,
                    g.write_bandwidth_mbs,
                    g.read_latency_ns,
                    g.write_latency_ns
                );
                eq!(&format!("node {id} {key}"), gg, w);
            }
        }
    } else {
        eq!("hmat", t.nodes.iter().any(|n| n.hmat.is_some()).to_string(), "false".into());
    }

    // Memory-side caches.
    let msc = exp["memory_side_caches"].as_object();
    for n in &t.nodes {
        let want: Vec<String> = msc
            .and_then(|m| m.get(&n.id.to_string()))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|c| format!("L{} {} B line {}", c["level"], c["size"], c["line_size"]))
                    .collect()
            })
            .unwrap_or_default();
        let got: Vec<String> = n
            .memory_side_caches
            .iter()
            .map(|c| format!("L{} {} B line {}", c.index, c.size_bytes, c.line_bytes.unwrap_or(0)))
            .collect();
        eq!(&format!("node {} memory-side caches", n.id), format!("{got:?}"), format!("{want:?}"));
    }

    // Huge page sizes: each node's are among the capture's, and together
    // they are all of them (CPU-only nodes may have no hugepages folder).
    let hp = &exp["hugepages"];
    if let Some(sizes) = hp["node_hugepage_sizes"].as_array() {
        let mut want: Vec<u64> = sizes
            .iter()
            .map(|s| s.as_str().unwrap().trim_end_matches("kB").parse::<u64>().unwrap() * 1024)
            .collect();
        want.sort_unstable();
        let mut all = std::collections::BTreeSet::new();
        for n in &t.nodes {
            for h in &n.hugepages {
                all.insert(h.page_size_bytes);
            }
        }
        eq!(
            "huge page sizes",
            format!("{:?}", all.into_iter().collect::<Vec<_>>()),
            format!("{want:?}")
        );
    }
    if let Some(nz) = hp["node_nr_hugepages_nonzero"].as_object() {
        for (id, sizes) in nz {
            let id: u32 = id.parse().unwrap();
            for (size, count) in sizes.as_object().unwrap() {
                let bytes = size.trim_end_matches("kB").parse::<u64>().unwrap() * 1024;
                let got = t
                    .node(id)
                    .and_then(|n| n.hugepages.iter().find(|h| h.page_size_bytes == bytes))
                    .map(|h| h.total);
                eq!(
                    &format!("node {id} {size} pages"),
                    format!("{got:?}"),
                    format!("{:?}", count.as_u64())
                );
            }
        }
    }

    // Machine-wide memory and huge page pools.
    let sm = t.system_memory.as_ref();
    eq!(
        "/proc/meminfo MemTotal KiB",
        format!("{:?}", sm.map(|m| m.total_bytes / 1024)),
        format!("{:?}", exp["proc_memtotal_kib"].as_u64())
    );
    eq!(
        "Hugepagesize KiB",
        format!("{:?}", sm.and_then(|m| m.default_hugepage_bytes).map(|b| b / 1024)),
        format!("{:?}", hp["proc_meminfo_Hugepagesize_kB"].as_u64())
    );
    if let Some(pools) = hp["sys_kernel_mm_hugepages"].as_object() {
        let mut want: Vec<(u64, u64)> = pools
            .iter()
            .map(|(k, v)| {
                (k.trim_end_matches("kB").parse::<u64>().unwrap() * 1024, v.as_u64().unwrap())
            })
            .collect();
        want.sort_unstable();
        let got: Vec<(u64, u64)> = sm
            .map(|m| m.hugepages.iter().map(|h| (h.page_size_bytes, h.total)).collect())
            .unwrap_or_default();
        eq!("huge page pools", format!("{got:?}"), format!("{want:?}"));
    }
    // Package ids (numbered from core_siblings where the kernel says -1).
    if let Some(want) = exp["physical_package_ids"].as_array() {
        let want: Vec<i64> = want.iter().map(|v| v.as_i64().unwrap()).collect();
        if !want.contains(&-1) {
            let got: Vec<i64> = t.packages.iter().map(|p| p.id as i64).collect();
            eq!("package ids", format!("{got:?}"), format!("{want:?}"));
        }
    }

    // Cgroup cpuset limits.
    let cg = &exp["cgroup"];
    if name == "nvidiagpunumanodes" {
        // Known difference: expected.json (like hwloc) reads cpuset.cpus
        // (0-175) and cpuset.mems; the capture's cpuset.effective_cpus
        // (0-87) and effective_mems (0) are narrower, and numaprobe reports
        // what the kernel enforces, with a warning.
        eq!(
            "cgroup cpus",
            format!("{:?}", t.cgroup.cpus.as_ref().map(|c| c.to_list())),
            format!("{:?}", Some("0-87"))
        );
        eq!(
            "cgroup mems",
            format!("{:?}", t.cgroup.mems.as_ref().map(|c| c.to_list())),
            format!("{:?}", Some("0"))
        );
        if !t.warnings.iter().any(|w| w.contains("effective cpus (0-87) differ")) {
            bad.push(format!("no warning about effective vs configured cpus: {:?}", t.warnings));
        }
    } else if cg.is_object() {
        let ty = if cg["cpus"].is_null() && cg["mems"].is_null() {
            "none"
        } else {
            cg["type"].as_str().unwrap_or("none")
        };
        eq!("cgroup version", t.cgroup.version.clone(), ty.into());
        eq!(
            "cgroup cpus",
            format!("{:?}", t.cgroup.cpus.as_ref().map(|c| c.to_list())),
            format!("{:?}", cg["cpus"].as_str()),
        );
        eq!(
            "cgroup mems",
            format!("{:?}", t.cgroup.mems.as_ref().map(|c| c.to_list())),
            format!("{:?}", cg["mems"].as_str()),
        );
        eq!("cgroup restricts", t.cgroup.restricts.to_string(), cg["restricts"].to_string());
    }

    // PCI devices: every device the capture gives a node keeps it; -1 is None.
    let with_node = num("pci_devices_with_numa_node");
    let seen = ids(&exp["pci_numa_nodes_seen"]);
    for d in &t.devices {
        match d.numa_node {
            Some(n) if !seen.contains(&n) => {
                bad.push(format!("device {} on node {n}, not seen", d.address))
            }
            None if with_node == num("pci_devices") && with_node > 0 => {
                bad.push(format!("device {} lost its numa_node", d.address))
            }
            _ => {}
        }
    }
    if with_node == 0 && t.devices.iter().any(|d| d.numa_node.is_some()) {
        bad.push("a device has a node though no capture file gives one".into());
    }

    // Mode.
    let (kind, npp, label) = expected_mode(name);
    eq!(
        "numa_mode",
        format!(
            "{:?} {:?} {:?}",
            t.numa_mode.kind, t.numa_mode.nodes_per_package, t.numa_mode.label
        ),
        format!("{kind:?} {npp:?} {:?}", label.map(str::to_string)),
    );
    if t.numa_mode.reason.is_empty() {
        bad.push("numa_mode.reason is empty".into());
    }
    // An ambiguous mode names its candidates and picks no label.
    if t.numa_mode.confidence == Confidence::Ambiguous
        && (t.numa_mode.alternatives.is_empty() || t.numa_mode.label.is_some())
    {
        bad.push(format!("ambiguous mode with a label or no alternatives: {:?}", t.numa_mode));
    }
    bad
}

#[test]
fn every_capture_matches_expected_json() {
    let text =
        std::fs::read_to_string(captures::dir().join("expected.json")).expect("expected.json");
    let expected: BTreeMap<String, Value> =
        serde_json::from_str(&text).expect("expected.json parses");
    let archives = captures::names();
    for name in expected.keys() {
        assert!(archives.contains(name), "expected.json names {name} but {name}.tar.gz is missing");
    }

    let mut failures = Vec::new();
    for name in &archives {
        let exp = expected
            .get(name)
            .unwrap_or_else(|| panic!("{name}.tar.gz has no entry in expected.json"));
        let root = captures::unpack(name);
        let t = match SysRoot::new(&root).and_then(|r| Topology::discover(&r)) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: discovery failed: {e}"));
                continue;
            }
        };
        // The JSON form must round-trip.
        let json = serde_json::to_string(&t).unwrap();
        let back: Topology = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t, "{name}: JSON round trip");
        for d in check(name, exp, &t) {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{} difference(s):\n{}", failures.len(), failures.join("\n"));
}

fn discover_capture(name: &str) -> Topology {
    let root = captures::unpack(name);
    Topology::discover(&SysRoot::new(&root).unwrap()).unwrap()
}

#[test]
fn buggynuma_warns_about_nodes_listing_the_same_cpus() {
    let t = discover_capture("8em64t-2s2ca2c-buggynuma");
    assert!(
        t.warnings.iter().any(|w| w.contains("list CPUs that node 0 lists too")),
        "{:#?}",
        t.warnings
    );
    assert!(
        t.warnings.iter().any(|w| w.contains("every distance entry is 10")),
        "{:#?}",
        t.warnings
    );
    assert!(t.numa_mode.reason.contains("7 node(s) repeat CPUs"), "{}", t.numa_mode.reason);
}

#[test]
fn numa_off_in_firmware_is_not_blamed_on_the_kernel() {
    let t = discover_capture("8em64t-2s2ca2c");
    assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware);
    assert!(t.numa_mode.reason.contains("2 packages"), "{}", t.numa_mode.reason);
    // The capture has no /proc/cmdline: say that numa=off is not ruled out.
    assert!(t.numa_mode.reason.contains("not ruled out"), "{}", t.numa_mode.reason);
    assert_eq!(t.numa_mode.confidence, Confidence::Ambiguous);
    assert_eq!(t.numa_mode.alternatives[0].kind, NumaModeKind::DisabledByKernel);
}

#[test]
fn cpuset_capture_reports_the_limit_and_the_offline_cpu() {
    let t = discover_capture("16amd64-8n2c-cpusets");
    assert!(t.cgroup.restricts);
    assert_eq!(t.offline_cpus.to_list(), "4");
    assert!(t.cpu(4).is_none());
    assert!(
        t.warnings.iter().any(|w| w.contains("node 2: cpulist (4-5) and cpumap (5)")),
        "{:#?}",
        t.warnings
    );
}

#[test]
fn gpu_memory_nodes_are_memory_only_and_far() {
    let t = discover_capture("nvidiagpunumanodes");
    assert_eq!(t.memory_only_nodes().to_list(), "250-255");
    assert_eq!(t.distance(0, 250), Some(80));
    assert_eq!(t.distance(0, 8), Some(40));
    assert_eq!(t.cpu_vendor, topo::Vendor::Ibm);
    assert_eq!(t.cpu_model.as_deref(), Some("POWER9"));
    assert!(t.numa_mode.reason.contains("250-255"), "{}", t.numa_mode.reason);
    assert!(!t.devices.is_empty() && t.devices.iter().all(|d| d.numa_node.is_none()));
}

#[test]
fn kunpeng_is_hisilicon_arm() {
    let t = discover_capture("128arm-2pa2n8cluster4co");
    assert_eq!(t.cpu_vendor, topo::Vendor::Hisilicon);
    assert_eq!(t.arch.as_deref(), Some("aarch64"));
    assert_eq!(t.distance(0, 3), Some(t.nodes[0].distances[3]));
}

#[test]
fn hmat_memory_side_cache_sizes_and_policies() {
    let t = discover_capture("memorysidecaches");
    let c = &t.nodes[0].memory_side_caches[0];
    assert_eq!(c.size_bytes, 96 << 30);
    assert_eq!(c.indexing.as_deref(), Some("direct-mapped"));
    assert_eq!(c.write_policy.as_deref(), Some("write-back"));
}

#[test]
fn distance_tiers_group_the_itanium_and_kunpeng_matrices() {
    let t = discover_capture("256ia64-64n2s2c");
    let d: Vec<u32> = t.distance_tiers.iter().map(|x| x.distance).collect();
    assert_eq!(d, vec![10, 22, 26, 30, 34]);
    let sizes: Vec<usize> = t.distance_tiers.iter().map(|x| x.groups.len()).collect();
    assert_eq!(sizes, vec![64, 16, 4, 1, 1]);
    assert_eq!(t.distance_tiers[1].groups[1].to_list(), "4-7");
    assert_eq!(t.distance_tiers[2].groups[0].to_list(), "0-15");
    let pairs: u32 = t.distance_tiers.iter().map(|x| x.pairs).sum();
    assert_eq!(pairs, 64 * 64, "every cell in exactly one tier");
    let t = discover_capture("128arm-2pa2n8cluster4co");
    let d: Vec<u32> = t.distance_tiers.iter().map(|x| x.distance).collect();
    assert_eq!(d, vec![10, 16, 25, 32, 33]);
    let g: Vec<String> = t.distance_tiers[1].groups.iter().map(|g| g.to_list()).collect();
    assert_eq!(g, vec!["0-1", "2-3"], "the two dies of each package");
    // No distance matrix, no tiers.
    assert!(discover_capture("20s390-2g6s4c").distance_tiers.is_empty());
}
