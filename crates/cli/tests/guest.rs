//! Emulated multi-node machines: boots Debian's kernel under QEMU with the
//! NUMA topologies below, runs the static numaprobe inside and checks, from
//! the host, what it reports against what was configured.
//!
//! Gated: `scripts/guest-setup.sh && cargo test -p numaprobe --features
//! guest-tests --test guest -- --nocapture`. See docs/testing.md (how to add
//! a machine or a command) and guest/harness.rs (how a boot works).

#[path = "support/gpu.rs"]
mod gpu_support;
#[path = "guest/harness.rs"]
mod harness;
#[path = "support/hwloc.rs"]
mod hwloc_support;
#[path = "support/tiered.rs"]
mod tiered;

use std::collections::BTreeMap;

use harness::{shares, Boot, Machine, Output};
use serde_json::Value;
use topo::{NodeKind, NumaModeKind, Topology};

const MIB: u64 = 1 << 20;

/// SLIT of the SNC2-like machine: 12 between the two nodes of a socket,
/// 21 across sockets.
const SNC2_SLIT: [&[u32]; 4] =
    [&[10, 12, 21, 21], &[12, 10, 21, 21], &[21, 21, 10, 12], &[21, 21, 12, 10]];

/// 2 sockets x 2 cores, one node per core (SNC2-like), 256 MiB per node.
/// QEMU numbers CPUs socket by socket, so node N holds CPU N.
fn snc2(name: &str) -> Machine {
    Machine::new(name)
        .sockets(2, 2)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(0, 1)])
        .node(2, 256, &[(1, 0)])
        .node(3, 256, &[(1, 1)])
        .distances(&SNC2_SLIT)
}

/// `numaprobe place --json` with small 4 KiB-page buffers (THP off, so
/// pages are counted exactly).
fn place(args: &str) -> String {
    format!("numaprobe place --json --pages nothp {args}")
}

/// Asserts the shares of a `PlacementCheck` (nodes exactly, shares within
/// `tolerance`); `what` names the result in the message.
fn assert_check(what: &dyn std::fmt::Display, check: &Value, want: &[(u32, f64)], tolerance: f64) {
    let got = shares(check);
    let nodes: Vec<u32> = got.keys().copied().collect();
    let want_nodes: Vec<u32> = want.iter().map(|(n, _)| *n).collect();
    assert_eq!(nodes, want_nodes, "pages on unexpected nodes: {check}\n{what}");
    for (n, share) in want {
        assert!(
            (got[n] - share).abs() <= tolerance,
            "node {n}: share {} != {share}: {check}\n{what}",
            got[n]
        );
    }
}

fn assert_shares(out: &Output, v: &Value, want: &[(u32, f64)], tolerance: f64) {
    assert_check(out, &v["placement"], want, tolerance);
}

/// Small, quick `bw` figures: structure and placement only, never speed.
const BW_QUICK: &str =
    "--json --kernel triad --size 1M --pages nothp --min-reps 2 --max-reps 2 --budget 0.1";
/// Small, quick `lat` figures.
const LAT_QUICK: &str = "--json --size 1M --samples 3 --sample-ms 5";

/// Checks `bw --matrix`: one bound result per (CPU node, memory node),
/// run on that CPU node's CPUs, with every page on the memory node.
fn check_bw_matrix(out: &Output, cpu_nodes: &[u32], mem_nodes: &[u32]) {
    out.expect_rc(0);
    let rs = out.results();
    let mut pairs: Vec<(u64, u64)> = rs
        .iter()
        .map(|r| (r["cpu_node"].as_u64().unwrap(), r["mem_node"].as_u64().unwrap()))
        .collect();
    pairs.sort_unstable();
    let want: Vec<(u64, u64)> = cpu_nodes
        .iter()
        .flat_map(|c| mem_nodes.iter().map(move |m| (u64::from(*c), u64::from(*m))))
        .collect();
    assert_eq!(pairs, want, "matrix cells\n{out}");
    for r in &rs {
        let (c, m) = (r["cpu_node"].as_u64().unwrap(), r["mem_node"].as_u64().unwrap());
        let what = format!("bw --matrix cell {c}->{m}\n{out}");
        assert_eq!(r["mode"], "matrix", "{what}");
        assert_eq!(r["policy"], "bind", "{what}");
        assert_eq!(r["mem_nodes"], m.to_string(), "{what}");
        assert_eq!(r["cpus"], c.to_string(), "node N holds CPU N: {what}");
        assert_eq!(r["validated"], true, "{what}");
        assert_eq!(r["placement"]["status"], "verified", "{what}");
        assert_check(&what, &r["placement"]["check"], &[(m as u32, 1.0)], 0.0);
    }
}
fn topo_of(boot: &Boot) -> Topology {
    boot.get("topo").expect_rc(0).parse()
}

/// QEMU's SRAT leaves the PC's legacy hole (640 KiB to 1 MiB) out of the
/// first node's memory ranges: 384 KiB.
const LEGACY_HOLE: u64 = 384 << 10;

/// Per SRAT proximity domain: `(id, CPUs, memory bytes without hot-plug
/// ranges)`.
type Domains = Vec<(u32, u32, u64)>;

/// The firmware's NUMA description the guest read (its init runs as root):
/// the SRAT's domains and the SLIT rows; panics when a table could not be
/// read at all.
fn firmware_of(t: &Topology) -> (Domains, Option<Vec<Vec<u8>>>) {
    use topo::acpi::Table;
    let f = t.firmware_numa.as_ref().expect("topo --json has firmware_numa");
    let domains = match &f.srat {
        Table::Found(s) => s.domains.iter().map(|d| (d.id, d.cpus, d.memory_bytes)).collect(),
        Table::NotInFirmware => Vec::new(),
        Table::Unknown(why) => panic!("the guest could not read its SRAT: {why}"),
    };
    let slit = match &f.slit {
        Table::Found(s) => Some(s.distances.clone()),
        Table::NotInFirmware => None,
        Table::Unknown(why) => panic!("the guest could not read its SLIT: {why}"),
    };
    (domains, slit)
}

// --- 1 + 4: SNC2-like machine, topology and placement self-test ---

#[test]
fn snc2_two_sockets_four_nodes_topology_and_placement() {
    let mut m = snc2("snc2").run("topo", "numaprobe topo --json");
    // Bind a buffer to each node from a CPU on the other socket.
    for n in 0..4 {
        m = m.run(
            &format!("bind-{n}"),
            &place(&format!("--cpu-node {} --mem-nodes {n} --size 4M", (n + 2) % 4)),
        );
    }
    let boot = m
        .run("interleave", &place("--cpu-node 0 --policy interleave --mem-nodes all --size 8M"))
        // Weights 3:1 on nodes 0:1 where the kernel has weighted interleave.
        .run(
            "weighted",
            &format!(
                "W=/sys/kernel/mm/mempolicy/weighted_interleave; \
                 if [ -d $W ]; then echo 3 > $W/node0 && echo 1 > $W/node1 || exit 99; fi; {}",
                place("--cpu-node 3 --policy weighted --mem-nodes 0-1 --size 8M")
            ),
        )
        .run("has-weighted", "test -d /sys/kernel/mm/mempolicy/weighted_interleave")
        // Bound to node 1 but expected on node 3: the check must catch it.
        .run("wrong-expect", &place("--cpu-node 0 --mem-nodes 1 --expect 3 --size 4M"))
        // Measurements: structure and placement only.
        .run("bw-matrix", &format!("numaprobe bw --matrix {BW_QUICK}"))
        .run("bw-interleave", &format!("numaprobe bw --interleave {BW_QUICK}"))
        .run("lat-matrix", &format!("numaprobe lat --matrix {LAT_QUICK}"))
        .run("lat-per-cpu", &format!("numaprobe lat --per-cpu --mem-node 0 {LAT_QUICK}"))
        .run(
            "lat-per-cpu-sweep",
            &format!("numaprobe lat --per-cpu --sweep --mem-node 2 --max-cpus 4 {LAT_QUICK}"),
        )
        // exec's hidden --touch helper writes 32 MiB under the inherited policy.
        .run(
            "exec",
            "numaprobe exec --no-save --json --repeat 1 --policies local:1,remote:0/3,interleave \
             -- numaprobe exec --touch 32M --touch-hold-ms 500",
        )
        .boot();

    // Topology as configured.
    let t = topo_of(&boot);
    assert_eq!(t.packages.len(), 2, "packages");
    assert_eq!(t.nodes.len(), 4, "nodes");
    for (i, node) in t.nodes.iter().enumerate() {
        assert_eq!(node.id, i as u32);
        assert_eq!(node.distances, SNC2_SLIT[i], "SLIT row of node {i}");
        assert_eq!(node.cpus.iter().collect::<Vec<_>>(), vec![i as u32], "CPUs of node {i}");
        assert_eq!(node.kind, NodeKind::CpuMemory, "kind of node {i}");
        assert!(
            node.mem_total_bytes > 128 * MIB && node.mem_total_bytes <= 256 * MIB,
            "node {i} memory {} B, configured 256 MiB",
            node.mem_total_bytes
        );
    }
    let pkg_nodes: Vec<String> = t.packages.iter().map(|p| p.nodes.to_string()).collect();
    assert_eq!(pkg_nodes, ["0-1", "2-3"], "nodes per package");
    // The firmware's own tables (QEMU's ACPI SRAT and SLIT) say the same.
    let (domains, slit) = firmware_of(&t);
    assert_eq!(
        domains,
        [(0, 1, 256 * MIB - LEGACY_HOLE), (1, 1, 256 * MIB), (2, 1, 256 * MIB), (3, 1, 256 * MIB)]
    );
    let want: Vec<Vec<u8>> =
        SNC2_SLIT.iter().map(|r| r.iter().map(|&d| d as u8).collect()).collect();
    assert_eq!(slit, Some(want), "SLIT as the firmware gave it");
    assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage, "mode: {:?}", t.numa_mode);
    assert_eq!(t.numa_mode.nodes_per_package, Some(2), "mode: {:?}", t.numa_mode);

    // Each bind landed entirely on its node, touched from the other socket.
    for n in 0..4u32 {
        let out = boot.get(&format!("bind-{n}")).expect_rc(0);
        let v = out.json();
        assert_eq!(v["ok"], true, "{out}");
        assert_eq!(v["policy"]["mode"], "bind", "{out}");
        assert_eq!(v["policy"]["nodes"], n.to_string(), "{out}");
        assert_eq!(v["cpu"]["ran_on_node"], (n + 2) % 4, "ran on the wrong node\n{out}");
        assert_eq!(v["placement"]["sampled_pages"], 1024, "4 MiB of 4 KiB pages\n{out}");
        assert_shares(out, &v, &[(n, 1.0)], 0.0);
    }

    // Interleave over all nodes: a quarter of the pages on each.
    let out = boot.get("interleave").expect_rc(0);
    let v = out.json();
    assert_eq!(v["policy"]["mode"], "interleave", "{out}");
    assert_shares(out, &v, &[(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)], 0.01);

    // Weighted interleave 3:1, or a clear fallback on kernels before 6.9.
    let out = boot.get("weighted");
    let v = out.json();
    if boot.get("has-weighted").rc == 0 {
        out.expect_rc(0);
        assert_eq!(v["policy"]["mode"], "weighted-interleave", "{out}");
        assert_eq!(v["fallback"], Value::Null, "{out}");
        assert_shares(out, &v, &[(0, 0.75), (1, 0.25)], 0.01);
    } else {
        assert_eq!(v["policy_requested"]["mode"], "weighted-interleave", "{out}");
        assert_eq!(v["policy"]["mode"], "interleave", "{out}");
        let why = v["fallback"].as_str().unwrap_or_else(|| panic!("no fallback reason\n{out}"));
        assert!(why.contains("6.9"), "fallback reason should name Linux 6.9: {why}");
    }

    // The deliberately wrong expectation is caught (exit 1), and the report
    // still says where the pages really are.
    let out = boot.get("wrong-expect").expect_rc(1);
    let v = out.json();
    assert_eq!(v["ok"], false, "{out}");
    assert_eq!(v["placement"]["expected"], "3", "{out}");
    assert_eq!(v["placement"]["fraction"], 0.0, "{out}");
    assert_shares(out, &v, &[(1, 1.0)], 0.0);
    assert!(out.stderr.contains("placement check failed"), "{out}");

    check_bw_matrix(boot.get("bw-matrix"), &[0, 1, 2, 3], &[0, 1, 2, 3]);

    // bw --interleave: the whole machine, pages a quarter on each node.
    let out = boot.get("bw-interleave").expect_rc(0);
    let rs = out.results();
    assert!(!rs.is_empty(), "no results\n{out}");
    for r in &rs {
        assert_eq!(r["policy"], "interleave", "{out}");
        assert_eq!(r["mem_nodes"], "0-3", "{out}");
        assert_eq!(r["cpus"], "0-3", "{out}");
        assert_eq!(r["placement"]["status"], "verified", "{out}");
        assert_check(
            out,
            &r["placement"]["check"],
            &[(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)],
            0.02,
        );
    }

    // lat --matrix: every CPU node to every memory node, pages verified.
    let out = boot.get("lat-matrix").expect_rc(0);
    let rs = out.results();
    let mut cells: Vec<(u64, u64, u64)> = rs
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} missing\n{out}"));
            (n("cpu_node"), n("mem_node"), n("cpu"))
        })
        .collect();
    cells.sort_unstable();
    let want: Vec<(u64, u64, u64)> = (0..4).flat_map(|c| (0..4).map(move |m| (c, m, c))).collect();
    assert_eq!(cells, want, "lat --matrix cells (cpu node, mem node, cpu)\n{out}");
    for r in &rs {
        let m = r["mem_node"].as_u64().unwrap() as u32;
        assert_eq!(r["mode"], "matrix", "{out}");
        assert_eq!(r["placement"]["status"], "verified", "{out}");
        assert_check(out, &r["placement"]["check"], &[(m, 1.0)], 0.0);
        assert!(r["median_ns"].as_f64().is_some_and(|ns| ns > 0.0), "median_ns\n{out}");
    }

    // lat --per-cpu: one result per CPU, all on node 0's memory, and groups
    // that cover the CPUs once.
    let out = boot.get("lat-per-cpu").expect_rc(0);
    let v = out.json();
    assert_eq!(v["mode"], "per-cpu", "{out}");
    assert_eq!(v["mem_node"], 0, "{out}");
    assert_eq!(v["os_cpu_nodes"], 4, "{out}");
    let rs = out.results();
    let cpus: Vec<u64> = rs.iter().map(|r| r["cpu"].as_u64().unwrap()).collect();
    assert_eq!(cpus, [0, 1, 2, 3], "{out}");
    for r in &rs {
        assert_eq!(r["cpu_node"], r["cpu"], "node N holds CPU N\n{out}");
        assert_check(out, &r["placement"]["check"], &[(0, 1.0)], 0.0);
    }
    let groups = v["groups"].as_array().unwrap_or_else(|| panic!("no groups\n{out}"));
    let mut grouped: Vec<u32> = groups
        .iter()
        .flat_map(|g| {
            let set: topo::CpuSet = serde_json::from_value(g["cpus"].clone()).expect("cpulist");
            set.iter().collect::<Vec<_>>()
        })
        .collect();
    grouped.sort_unstable();
    assert_eq!(grouped, [0, 1, 2, 3], "groups cover each CPU once\n{out}");

    // lat --per-cpu --sweep: every CPU (one per node) sweeps the same sizes
    // in node 2's memory, pages verified there.
    let out = boot.get("lat-per-cpu-sweep").expect_rc(0);
    let v = out.json();
    assert_eq!(v["mode"], "per-cpu-sweep", "{out}");
    assert_eq!(v["mem_node"], 2, "{out}");
    let sizes = v["sizes"].as_array().unwrap_or_else(|| panic!("no sizes\n{out}")).len();
    let rs = out.results();
    assert_eq!(rs.len(), 4 * sizes, "CPUs x sizes\n{out}");
    for cpu in 0..4u64 {
        assert_eq!(rs.iter().filter(|r| r["cpu"] == cpu).count(), sizes, "CPU {cpu}\n{out}");
    }
    for r in &rs {
        assert_eq!(r["cpu_node"], r["cpu"], "node N holds CPU N\n{out}");
        assert_eq!(r["mem_node"], 2, "{out}");
        assert_check(out, &r["placement"]["check"], &[(2, 1.0)], 0.0);
    }

    check_exec(boot.get("exec"));
}

/// `exec` under local:1, remote:0/3 and interleave, each run of the
/// `--touch 32M` helper: where its pages were matches the policy (the
/// criteria of docs/exec.md).
fn check_exec(out: &Output) {
    out.expect_rc(0);
    let v = out.json();
    let policies = v["policies"].as_array().unwrap_or_else(|| panic!("no policies\n{out}"));
    let by_name: BTreeMap<&str, &Value> =
        policies.iter().map(|p| (p["policy"].as_str().unwrap_or("?"), p)).collect();
    let names: Vec<&str> = by_name.keys().copied().collect();
    assert_eq!(names, ["interleave", "local:1", "remote:0/3"], "{out}");
    // (node, anon KiB, anon fraction) of the one run of policy `p`.
    let nodes = |p: &str| -> BTreeMap<u64, (u64, f64)> {
        let run = &by_name[p]["runs"][0];
        assert_eq!(run["ok"], true, "{p}: run failed\n{out}");
        let pages = run["numa_pages"]["nodes"]
            .as_array()
            .unwrap_or_else(|| panic!("{p}: no numa_pages\n{out}"));
        pages
            .iter()
            .map(|n| {
                let (node, kib, frac) = (&n["node"], &n["anon_kib"], &n["anon_fraction"]);
                (node.as_u64().unwrap(), (kib.as_u64().unwrap(), frac.as_f64().unwrap()))
            })
            .collect()
    };
    for (p, cpus, node) in [("local:1", "1", 1u64), ("remote:0/3", "0", 3)] {
        assert_eq!(by_name[p]["cpus"], cpus, "{p}\n{out}");
        assert_eq!(by_name[p]["mem_nodes"], node.to_string(), "{p}\n{out}");
        let (kib, frac) = nodes(p).get(&node).copied().unwrap_or_default();
        assert!(kib >= 32 * 1024 && frac >= 0.95, "{p}: {kib} KiB, {frac} on node {node}\n{out}");
    }
    let il = nodes("interleave");
    assert_eq!(il.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3], "interleave nodes\n{out}");
    for (n, (_, frac)) in &il {
        assert!((frac - 0.25).abs() <= 0.1, "interleave: node {n} has {frac}\n{out}");
    }
}

// --- declared distances against measured, and the hwloc export ---

/// The SNC2-like machine's SLIT with the order reversed: each node's
/// twin on the other socket declared nearer (12) than the other node of
/// its own socket (21).
const REVERSED_SLIT: [&[u32]; 4] =
    [&[10, 21, 12, 21], &[21, 10, 21, 12], &[12, 21, 10, 21], &[21, 12, 21, 10]];

/// hwloc's twin of the SNC2-like guest, as lstopo builds it: 2 packages
/// of 2 groups, each group a node with one core.
const GUEST_TWIN: &str = "pack:2 group:2 [numa] core:1 pu:1";

use hwloc_support::run as hwloc;

/// The guest's figures as its JSON export holds them, in hwloc's units:
/// (CPU node, memory node) -> (MiB/s of the triad matrix's median, ns of
/// the latency matrix's median).
fn guest_figures(export: &Value) -> BTreeMap<(u64, u64), (u64, u64)> {
    let mut out: BTreeMap<(u64, u64), (u64, u64)> = BTreeMap::new();
    for run in export["runs"].as_array().expect("runs[]") {
        for r in run["results"].as_array().expect("results[]") {
            let p = &r["payload"];
            if p["mode"] != "matrix" {
                continue;
            }
            let key = (p["cpu_node"].as_u64().unwrap(), p["mem_node"].as_u64().unwrap());
            let e = out.entry(key).or_default();
            match r["kind"].as_str() {
                Some("bw") => {
                    let gbs = p["median_gbs"].as_f64().unwrap();
                    e.0 = (gbs * 1e9 / 1_048_576.0).round() as u64;
                }
                Some("lat") => e.1 = p["median_ns"].as_f64().unwrap().round() as u64,
                _ => {}
            }
        }
    }
    out
}

/// `lstopo --memattrs -p`'s values of attribute `name` by (CPU node,
/// NUMA node): the guest's node N holds CPU N, so its initiator cpuset is
/// 1 << N.
fn lstopo_values(listing: &str, name: &str) -> BTreeMap<(u64, u64), u64> {
    let node = |set: &str| u32::from_str_radix(set.trim_start_matches("0x"), 16).unwrap();
    hwloc_support::memattr(listing, name, |s| node(s).trailing_zeros())
        .into_iter()
        .map(|((c, m), v)| ((u64::from(c), u64::from(m)), v))
        .collect()
}

/// The 2-socket guest with its declared order reversed: `bw --matrix`
/// and `lat --matrix` saved under one label; the hwloc export written in
/// the guest from its own discovery is read on the host by Debian's
/// lstopo and hwloc-info (every initiator/target pair, the best target),
/// and the guest's runs, exported and imported here, go onto lstopo's
/// twin of the guest. Its memory is all one host node, so what its
/// matrix shows is the host's load, not a distance: the comparison of the
/// reversed SLIT with it is checked to run on the guest's own run (its
/// declared orders, the report's section, `topo --from-run`'s matrices),
/// never for a verdict (the verdicts are tested on hand-made runs,
/// distances_cli.rs).
#[test]
fn declared_distances_and_the_hwloc_export_of_the_two_socket_guest() {
    let boot = snc2("hwloc")
        .distances(&REVERSED_SLIT)
        .run(
            "bw",
            "numaprobe -q bw --matrix --label g --kernel triad --size 1M --pages nothp \
             --min-reps 2 --max-reps 2 --budget 0.1 >/dev/null",
        )
        .run(
            "lat",
            "numaprobe -q lat --matrix --label g --size 8M --samples 5 --sample-ms 5 >/dev/null",
        )
        .run("hwloc", "numaprobe -q export --format hwloc label:g")
        .run("export", "numaprobe export label:g")
        .run("audit", "numaprobe audit --json --run latest")
        .run("report", "numaprobe report latest")
        .run("topo-from-run", "numaprobe topo --from-run latest")
        .boot();
    boot.get("bw").expect_rc(0);
    boot.get("lat").expect_rc(0);
    let figures = guest_figures(&boot.json("export"));
    assert_eq!(figures.len(), 16, "4 CPU nodes x 4 nodes: {figures:?}");

    // The export written in the guest, read by hwloc on the host.
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("guest.xml");
    std::fs::write(&xml, &boot.get("hwloc").expect_rc(0).stdout).unwrap();
    let x = xml.to_str().unwrap();
    let listing = hwloc("lstopo-no-graphics", &["--input", x, "--memattrs", "-p"]);
    let want_bw: BTreeMap<(u64, u64), u64> = figures.iter().map(|(k, v)| (*k, v.0)).collect();
    let want_lat: BTreeMap<(u64, u64), u64> = figures.iter().map(|(k, v)| (*k, v.1)).collect();
    assert_eq!(lstopo_values(&listing, "Bandwidth"), want_bw, "{listing}");
    assert_eq!(lstopo_values(&listing, "Latency"), want_lat, "{listing}");
    // hwloc-info: node 2's values as hwloc reads them, and the best
    // target from CPU 0 is one of the lowest latency from node 0
    let n2 = hwloc("hwloc-info", &["--input", x, "-p", "numa:2"]);
    for c in 0..4u64 {
        let line = format!(
            "memory attribute Latency from initiator 0x{:08x} = {}",
            1 << c,
            want_lat[&(c, 2)]
        );
        assert!(n2.contains(&line), "{line}\n{n2}");
    }
    let os = u64::from(hwloc_support::best(x, "Latency", "pu:0"));
    let lowest = (0..4).map(|m| want_lat[&(0, m)]).min().unwrap();
    assert_eq!(want_lat[&(0, os)], lowest, "best target {os}: {want_lat:?}");

    // The guest's runs on lstopo's twin of the guest, here.
    let db = dir.path().join("host.db");
    let json = dir.path().join("guest.json");
    std::fs::write(&json, &boot.get("export").stdout).unwrap();
    let np = |args: &[&str]| {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("numaprobe"))
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    np(&["-q", "import", json.to_str().unwrap()]);
    let twin = dir.path().join("twin.xml");
    std::fs::write(&twin, hwloc("lstopo-no-graphics", &["-i", GUEST_TWIN, "--of", "xml"])).unwrap();
    let onto = dir.path().join("onto.xml");
    np(&[
        "-q",
        "export",
        "--format",
        "hwloc",
        "label:g",
        "--topology",
        twin.to_str().unwrap(),
        "-o",
        onto.to_str().unwrap(),
    ]);
    let listing =
        hwloc("lstopo-no-graphics", &["--input", onto.to_str().unwrap(), "--memattrs", "-p"]);
    assert_eq!(lstopo_values(&listing, "Latency"), want_lat, "{listing}");

    // Declared against measured. The guest's memory is all one host node,
    // and its cells, measured seconds apart under TCG on a shared host,
    // differ by the host's load alone (docs/topo.md): no verdict is
    // asserted, only that the run's own declared distances were compared
    // (or, with every row's cells unsettled, that it says why not).
    let audit = boot.json("audit");
    let d = &audit["evidence"]["distances"];
    match d["status"].as_str() {
        Some("checked") => {
            let declared: Vec<&Value> =
                d["rows"].as_array().unwrap().iter().map(|r| &r["declared_order"]).collect();
            let want = [[0, 2, 1, 3], [1, 3, 0, 2], [2, 0, 1, 3], [3, 1, 0, 2]]
                .map(|o| serde_json::json!(o));
            assert_eq!(declared, want.iter().collect::<Vec<_>>(), "{d:#}");
            let f = audit["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["id"] == "numa.declared_distances")
                .unwrap_or_else(|| panic!("no finding: {audit:#}"));
            assert!(
                f["evidence"].as_str().unwrap().contains("from node 0: declared 0 2 1 3"),
                "{f:#}"
            );
        }
        Some("not-checked") => {
            let why = d["reason"].as_str().unwrap();
            assert!(why.starts_with("undecided: "), "{d:#}");
        }
        _ => panic!("no comparison: {audit:#}"),
    }
    let md = &boot.get("report").expect_rc(0).stdout;
    assert!(md.contains("## Declared distances against measured"), "{md}");
    let text = &boot.get("topo-from-run").expect_rc(0).stdout;
    let rows: Vec<String> =
        text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    assert!(rows.iter().any(|r| r.starts_with("0: 10 21 12 21 0: ")), "{text}");
}

// --- 2: a CPU-less memory node with HMAT ---

/// HMAT entries: CPU nodes see their own node at 100 ns / 20480 MB/s, the
/// other node of their socket at 120 ns, the other socket at 200 ns /
/// 15360 MB/s; node 4 (CXL-like) at 250 ns / 10240 MB/s from socket 0 and
/// 400 ns / 5120 MB/s from socket 1. Node 4 has a 64 MiB memory-side cache.
fn hmat_entries() -> Vec<String> {
    let mut e = Vec::new();
    for i in 0..4u32 {
        for t in 0..5u32 {
            let (lat, bw) = match (t, i / 2 == t / 2) {
                (4, _) if i < 2 => (250, 10240),
                (4, _) => (400, 5120),
                _ if i == t => (100, 20480),
                (_, true) => (120, 20480),
                (_, false) => (200, 15360),
            };
            e.push(format!(
                "hmat-lb,initiator={i},target={t},hierarchy=memory,data-type=access-latency,latency={lat}"
            ));
            e.push(format!(
                "hmat-lb,initiator={i},target={t},hierarchy=memory,data-type=access-bandwidth,bandwidth={bw}M"
            ));
        }
    }
    e.push(
        "hmat-cache,node-id=4,size=64M,level=1,associativity=direct,policy=write-through,line=64"
            .into(),
    );
    e
}

#[test]
fn memory_only_node_with_hmat() {
    let m = Machine::new("cxl")
        .sockets(2, 2)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(0, 1)])
        .node(2, 256, &[(1, 0)])
        .node(3, 256, &[(1, 1)])
        .node(4, 256, &[])
        .distances(&[
            &[10, 12, 21, 21, 30],
            &[12, 10, 21, 21, 30],
            &[21, 21, 10, 12, 40],
            &[21, 21, 12, 10, 40],
            &[30, 30, 40, 40, 10],
        ])
        .hmat(&[(4, 0)], &hmat_entries())
        .run("topo", "numaprobe topo --json > /tmp/topo.json && cat /tmp/topo.json")
        .run(
            "tiers",
            "for d in /sys/devices/virtual/memory_tiering/memory_tier*; do \
             [ -d $d ] && echo ${d##*memory_tier} $(cat $d/nodelist); done; true",
        )
        .run("bind-cxl", &place("--cpu-node 0 --mem-nodes 4 --size 4M"))
        .run("cpus-of-cxl", &place("--cpu-node 4 --mem-nodes 0 --size 4M"))
        .run("bw-matrix", &format!("numaprobe bw --matrix {BW_QUICK}"));
    let boot = tiering_commands(m).boot();

    let t = topo_of(&boot);
    assert_eq!(t.packages.len(), 2, "packages");
    assert_eq!(t.nodes.len(), 5, "nodes");
    assert_eq!(t.memory_only_nodes().to_string(), "4", "memory-only nodes");
    let cxl = t.node(4).expect("node 4");
    assert_eq!(cxl.kind, NodeKind::MemoryOnly);
    assert!(cxl.cpus.is_empty());
    assert!(cxl.mem_total_bytes > 128 * MIB && cxl.mem_total_bytes <= 256 * MIB, "node 4 memory");
    assert_eq!(cxl.distances, [30, 30, 40, 40, 10], "SLIT row of node 4");
    // Still 2 nodes with CPUs per package: the memory-only node adds none.
    assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage, "mode: {:?}", t.numa_mode);
    assert_eq!(t.numa_mode.nodes_per_package, Some(2), "mode: {:?}", t.numa_mode);

    // HMAT as configured: node 4's initiator is node 0 (`initiator=0`; the
    // kernel links only that one when the firmware names it).
    let hmat = cxl.hmat.as_ref().expect("HMAT on node 4");
    for (name, access) in [("access0", &hmat.access0), ("access1", &hmat.access1)] {
        let a = access.as_ref().unwrap_or_else(|| panic!("node 4 {name} missing"));
        assert_eq!(a.initiators.to_string(), "0", "node 4 {name} initiators");
        assert_eq!(a.read_latency_ns, Some(250), "node 4 {name}");
        assert_eq!(a.write_latency_ns, Some(250), "node 4 {name}");
        assert_eq!(a.read_bandwidth_mbs, Some(10240), "node 4 {name}");
        assert_eq!(a.write_bandwidth_mbs, Some(10240), "node 4 {name}");
    }
    let local = t
        .node(0)
        .and_then(|n| n.hmat.as_ref())
        .and_then(|h| h.access0.as_ref())
        .expect("node 0 access0");
    assert_eq!(local.initiators.to_string(), "0");
    assert_eq!(
        (local.read_latency_ns, local.read_bandwidth_mbs),
        (Some(100), Some(20480)),
        "node 0 access0"
    );
    assert_eq!(cxl.memory_side_caches.len(), 1, "memory-side caches of node 4");
    let c = &cxl.memory_side_caches[0];
    assert_eq!((c.index, c.size_bytes, c.line_bytes), (1, 64 * MIB, Some(64)));
    assert_eq!(c.indexing.as_deref(), Some("direct-mapped"));
    assert_eq!(c.write_policy.as_deref(), Some("write-through"));

    // Memory tiers as the kernel lists them in sysfs.
    let tiers = boot.get("tiers").expect_rc(0);
    let mut from_sysfs: Vec<(u32, String)> = tiers
        .stdout
        .lines()
        .map(|l| {
            let (id, nodes) = l.split_once(' ').unwrap_or_else(|| panic!("tier line {l:?}"));
            (id.parse().expect("tier id"), nodes.to_string())
        })
        .collect();
    from_sysfs.sort_unstable(); // the glob lists memory_tier22 before memory_tier4
    let from_topo: Vec<(u32, String)> =
        t.memory_tiers.iter().map(|m| (m.id, m.nodes.to_string())).collect();
    assert_eq!(from_topo, from_sysfs, "memory tiers");

    // Pages bound to the memory-only node land there.
    let out = boot.get("bind-cxl").expect_rc(0);
    let v = out.json();
    assert_eq!(v["ok"], true, "{out}");
    assert_shares(out, &v, &[(4, 1.0)], 0.0);
    // A CPU-less node asked for as CPUs is refused as a usage error.
    let out = boot.get("cpus-of-cxl").expect_rc(2);
    assert!(out.stdout.is_empty(), "no report on refusal\n{out}");
    assert!(out.stderr.contains('4'), "the refusal names node 4\n{out}");
    // The bandwidth matrix has a column for the memory-only node.
    check_bw_matrix(boot.get("bw-matrix"), &[0, 1, 2, 3], &[0, 1, 2, 3, 4]);
    check_tiering(&boot);
}

/// Injected figures for the CXL machine (GB/s and ns; not the guest's):
/// CPU node 1 sees node 1 at 300 GB/s and node 4 at 100 (the advisor must
/// give 3:1); against the declared HMAT (20480 MB/s and 100 ns local,
/// 10240 MB/s and 250 ns from node 0 to node 4), 0->0, 2->2 and 3->3
/// agree, 0->4 (6.8 GB/s) and 1->1 (300 GB/s) are off by more than 25%.
fn tiering_figures() -> tiered::Figures {
    tiered::Figures {
        bw_gbs: [
            ((0, 0), 20.0),
            ((0, 4), 6.8),
            ((1, 1), 300.0),
            ((1, 4), 100.0),
            ((2, 2), 20.0),
            ((3, 3), 20.0),
        ]
        .into(),
        lat_ns: [
            ((0, 0), 105.0),
            ((0, 4), 260.0),
            ((1, 1), 110.0),
            ((2, 2), 100.0),
            ((3, 3), 100.0),
        ]
        .into(),
    }
}

const WEIGHTS: &str = "/sys/kernel/mm/mempolicy/weighted_interleave";

/// In the guest: a saved run with known figures injected (the
/// guest's own topology spliced in), the advisor from it, `--apply` writing
/// sysfs and `--restore` putting the old values back, a weighted buffer's
/// pages in the advised ratio, the report's HMAT table, and `scan`.
fn tiering_commands(m: Machine) -> Machine {
    let (head, tail) = tiered::export_parts("tiered", &tiering_figures());
    let weights = format!("for n in 0 1 2 3 4; do printf \"%s \" $(cat {WEIGHTS}/node$n); done");
    m.run(
        "inject",
        &format!(
            "{{ printf %s '{head}'; cat /tmp/topo.json; printf %s '{tail}'; }} > /tmp/run.json \
             && numaprobe import /tmp/run.json"
        ),
    )
    .run("advise", "numaprobe advise interleave --from-run tiered --cpu-node 1 --nodes 1,4 --json")
    .run("has-weighted-tiers", &format!("test -d {WEIGHTS}"))
    .run("weights-before", &weights)
    .run(
        "apply",
        "numaprobe advise interleave --from-run tiered --cpu-node 1 --nodes 1,4 --apply \
         --backup /tmp/wb.json --verify --budget 0.05 --size 2M --json",
    )
    .run("weights-applied", &weights)
    .run("weighted-pages", &place("--cpu-node 0 --policy weighted --mem-nodes 1,4 --size 8M"))
    .run("restore", "numaprobe advise interleave --restore /tmp/wb.json")
    .run("weights-restored", &weights)
    .run("report", "numaprobe report tiered")
    .run("topo-from-run", "numaprobe topo --from-run tiered --json")
    .run("scan", "numaprobe scan --mem-node 4 --chunk 4M --size 16M --reps 1 --pages nothp --json")
}

fn check_tiering(boot: &Boot) {
    boot.get("inject").expect_rc(0);
    let out = boot.get("advise").expect_rc(0);
    let v = out.json();
    assert_eq!(v["advice"]["weights"], serde_json::json!({"1": 3, "4": 1}), "{out}");
    assert_eq!(v["commands"]["numactl"], "numactl --weighted-interleave=1,4 PROGRAM", "{out}");
    let has_weighted = boot.get("has-weighted-tiers").rc == 0;
    assert_eq!(v["kernel_supported"], has_weighted, "{out}");
    if !has_weighted {
        // Linux before 6.9: the advice with a note, --apply refused, nothing written.
        assert!(v["notes"].to_string().contains("6.9"), "{out}");
        let out = boot.get("apply").expect_rc(1);
        assert!(out.stderr.contains("6.9") && out.stderr.contains("nothing was written"), "{out}");
        assert!(out.stdout.is_empty(), "{out}");
        check_hmat_report_and_scan(boot);
        return;
    }

    // --apply writes node1 = 3 and node4 = 1; --restore puts back what was there.
    let before = boot.get("weights-before").expect_rc(0).stdout.trim().to_string();
    let out = boot.get("apply").expect_rc(0);
    let v = out.json();
    assert_eq!(v["applied"]["backup"], "/tmp/wb.json", "{out}");
    // --verify measured the three placements (figures not judged: TCG).
    let policies: Vec<&str> = v["verify"]["figures"]
        .as_array()
        .unwrap_or_else(|| panic!("no verify figures\n{out}"))
        .iter()
        .map(|f| f["policy"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(policies, ["weighted", "interleave", "local-only"], "{out}");
    assert!(v["verify"]["gain_vs_interleave_pct"].is_number(), "{out}");
    let applied = boot.get("weights-applied").expect_rc(0).stdout.trim().to_string();
    let want: Vec<String> = before
        .split(' ')
        .enumerate()
        .map(|(n, w)| match n {
            1 => "3".into(),
            4 => "1".into(),
            _ => w.to_string(),
        })
        .collect();
    assert_eq!(applied, want.join(" "), "weights after --apply (before: {before})");
    boot.get("restore").expect_rc(0);
    let restored = boot.get("weights-restored").expect_rc(0).stdout.trim().to_string();
    assert_eq!(restored, before, "--restore puts the old weights back");

    // A weighted buffer's pages land 3:1 on nodes 1 and 4 (move_pages).
    let out = boot.get("weighted-pages").expect_rc(0);
    let v = out.json();
    assert_eq!(v["policy"]["mode"], "weighted-interleave", "{out}");
    assert_shares(out, &v, &[(1, 0.75), (4, 0.25)], 0.01);
    check_hmat_report_and_scan(boot);
}

fn check_hmat_report_and_scan(boot: &Boot) {
    // HMAT declared beside the injected measurements, flagged past 25%.
    let out = boot.get("report").expect_rc(0);
    let md = &out.stdout;
    for row in [
        "| 0 -> 0 | 20480 | 20000 | 0.98x | 100 | 105 | 1.05x | ok |",
        "| 0 -> 4 | 10240 | 6800 | 0.66x | 250 | 260 | 1.04x | off by >25% |",
        "| 1 -> 1 | 20480 | 300000 | 14.65x | 100 | 110 | 1.10x | off by >25% |",
        "| 2 -> 2 | 20480 | 20000 | 0.98x | 100 | 100 | 1.00x | ok |",
    ] {
        assert!(md.contains(row), "report row {row}\n{out}");
    }
    assert!(md.contains("2 of 5 HMAT pair(s) are off"), "{out}");
    assert!(md.contains("| 4 | CXL-like |"), "node 4's kind\n{out}");

    // topo --from-run: the guest's own HMAT beside the same run, the same
    // comparison as the report (2 of 5 off); the run's fingerprint is the
    // hand-made one, so a warning says it is from another machine.
    let out = boot.get("topo-from-run").expect_rc(0);
    let v = out.json();
    let f = &v["from_run"];
    let pairs = f["hmat"].as_array().unwrap_or_else(|| panic!("no from_run.hmat\n{out}"));
    assert_eq!(pairs.len(), 5, "{out}");
    assert_eq!(pairs.iter().filter(|p| p["flagged"] == true).count(), 2, "{out}");
    let p04 = pairs.iter().find(|p| p["initiator"] == 0 && p["target"] == 4).expect("0 -> 4");
    assert_eq!(
        (p04["declared_read_mbs"].as_u64(), p04["measured_mbs"].as_f64()),
        (Some(10240), Some(6800.0)),
        "{out}"
    );
    assert_eq!(f["same_machine"], false, "{out}");
    assert!(out.stderr.contains("measured on another machine"), "{out}");
    assert!(v["memory_kinds"].to_string().contains("cxl-like"), "{out}");

    // scan runs on the CXL node: 4 chunks, every page on node 4, and (root
    // in the guest) physical ranges covering each chunk.
    let out = boot.get("scan").expect_rc(0);
    let v = out.json();
    let chunks = v["chunks"].as_array().unwrap_or_else(|| panic!("no chunks\n{out}"));
    assert_eq!(chunks.len(), 4, "{out}");
    for c in chunks {
        assert_eq!(c["on_node"], 1.0, "{out}");
        let ranges = c["phys"].as_array().unwrap_or_else(|| panic!("no ranges\n{out}"));
        let sum: u64 =
            ranges.iter().map(|r| r["end"].as_u64().unwrap() - r["start"].as_u64().unwrap()).sum();
        assert_eq!(sum, c["bytes"].as_u64().unwrap(), "{out}");
    }
}

// --- 3: NUMA turned off by the kernel option, and by "firmware" ---

/// The two-socket machine with two nodes in its SRAT (2 CPUs and 512 MiB
/// each, SLIT 10/21), booted with `numa=off`.
fn numa_off_over_numa_firmware(name: &str) -> Machine {
    Machine::new(name)
        .sockets(2, 2)
        .node(0, 512, &[(0, 0), (0, 1)])
        .node(1, 512, &[(1, 0), (1, 1)])
        .distances(&[&[10, 21], &[21, 10]])
        .kernel_arg("numa=off")
}

#[test]
fn numa_off_on_kernel_command_line() {
    // The firmware describes two nodes; the kernel is told to ignore them.
    let boot = numa_off_over_numa_firmware("numa-off").run("topo", "numaprobe topo --json").boot();
    let t = topo_of(&boot);
    assert_eq!(t.packages.len(), 2, "packages");
    assert_eq!(t.nodes.len(), 1, "nodes");
    assert_eq!(t.nodes[0].cpus.to_string(), "0-3");
    assert_eq!(t.cmdline.get("numa"), Some("off"), "cmdline: {:?}", t.cmdline);
    assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByKernel, "mode: {:?}", t.numa_mode);
    // The firmware still describes the two nodes: the kernel hides them.
    let (domains, slit) = firmware_of(&t);
    assert_eq!(domains, [(0, 2, 512 * MIB - LEGACY_HOLE), (1, 2, 512 * MIB)], "SRAT domains");
    assert_eq!(slit, Some(vec![vec![10, 21], vec![21, 10]]), "SLIT");
    assert!(
        t.numa_mode.reason.contains("the firmware describes 2 proximity domain(s)"),
        "{}",
        t.numa_mode.reason
    );
}

#[test]
fn two_sockets_without_srat_is_firmware_interleave() {
    // No -numa options: no SRAT, so one node and no kernel option.
    let boot = Machine::new("no-srat").sockets(2, 2).run("topo", "numaprobe topo --json").boot();
    let t = topo_of(&boot);
    assert_eq!(t.packages.len(), 2, "packages");
    assert_eq!(t.nodes.len(), 1, "nodes");
    assert_eq!(t.cmdline.get("numa"), None, "cmdline: {:?}", t.cmdline);
    assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByFirmware, "mode: {:?}", t.numa_mode);
    // No SRAT and no SLIT in the firmware: said, not unknown.
    assert_eq!(firmware_of(&t), (vec![], None));
    assert!(t.numa_mode.reason.contains("no ACPI SRAT"), "{}", t.numa_mode.reason);
}

/// `numa=off` over a NUMA firmware and `numa=off` over a firmware without
/// NUMA show the kernel the same single node and the same command line:
/// their runs differ in configuration (fingerprint and settings diff)
/// by the firmware's SRAT and SLIT, and only by what the firmware says.
#[test]
fn numa_off_over_numa_firmware_and_over_none_differ_in_configuration() {
    let cmds = |m: Machine| {
        m.run("topo", "numaprobe topo --json")
            .run(
                "bw",
                "numaprobe bw --set bios.note=same --kernel triad --size 1M --min-reps 2 \
                 --max-reps 2 --budget 0.1 --threads 1 -q >/dev/null",
            )
            .run("show", "numaprobe show latest --json")
    };
    let on = cmds(numa_off_over_numa_firmware("numa-off-srat")).boot();
    let off = cmds(Machine::new("numa-off-no-srat").sockets(2, 2).kernel_arg("numa=off")).boot();
    on.get("bw").expect_rc(0);
    off.get("bw").expect_rc(0);
    let (ton, toff) = (topo_of(&on), topo_of(&off));
    assert_eq!(ton.numa_mode.kind, NumaModeKind::DisabledByKernel);
    assert_eq!(toff.numa_mode.kind, NumaModeKind::DisabledByKernel);
    let config = |b: &Boot| b.json("show")["config"].clone();
    let (a, b) = (config(&on), config(&off));
    let two = serde_json::json!({"domains": 2, "with_cpus": 2, "with_memory": 2});
    assert_eq!(a["acpi_srat"], two, "{a:#}");
    assert_eq!(b["acpi_srat"], "none", "{b:#}");
    assert_eq!(a["acpi_slit"], "10 21 / 21 10");
    assert_eq!(b["acpi_slit"], "none");
    assert_ne!(a["fingerprint"], b["fingerprint"]);
    // Everything else the configuration records is the same.
    let differ: Vec<&String> = a
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, v)| k.as_str() != "fingerprint" && b.get(k.as_str()) != Some(v))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(differ, ["acpi_slit", "acpi_srat"], "{a:#}\n{b:#}");
}

// --- run at package scope: each socket's CPUs at once, placement verified ---

/// The payloads of the records of `kind` (and `mode`, when given) in a
/// `show --json` document.
fn payloads<'a>(show: &'a Value, kind: &str, mode: Option<&str>) -> Vec<&'a Value> {
    show["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results[]: {show:#}"))
        .iter()
        .filter(|r| r["kind"] == kind)
        .map(|r| &r["payload"])
        .filter(|p| mode.is_none_or(|m| p["mode"] == m))
        .collect()
}

/// The package-scope record of `package` on `mem_package`'s memory under
/// `policy` among `records`.
fn scoped<'a>(records: &[&'a Value], package: u64, mem_package: u64, policy: &str) -> &'a Value {
    let found: Vec<&&Value> = records
        .iter()
        .filter(|r| {
            let s = &r["scope"];
            s["package"] == package && s["mem_package"] == mem_package && s["policy"] == policy
        })
        .collect();
    assert_eq!(found.len(), 1, "package {package} -> {mem_package} {policy}: {records:#?}");
    found[0]
}

/// `run --quick` with only the package-scope steps on the SNC2-like
/// machine (2 sockets x 2 nodes of one CPU): per socket, both of its CPUs
/// at once, bound per node (each thread's pages on its own node: half on
/// each) and interleaved over its two nodes; each socket on the other's
/// two nodes; a chase from a CPU of each socket through its own and the
/// other socket's memory. Every placement is checked with `move_pages`
/// and verified; no step is skipped.
#[test]
fn run_measures_each_package_at_once_with_verified_placement() {
    let boot = snc2("package-scope")
        .run(
            "run",
            "numaprobe --json run --quick --only bw-package,bw-cross-package,lat-package -q",
        )
        .run("show", "numaprobe show latest --json")
        .boot();
    let run = boot.get("run").expect_rc(0);
    assert_eq!(run.json()["status"], "complete", "{run}");
    let show = boot.json("show");
    let bw = payloads(&show, "bw", Some("package"));
    assert_eq!(bw.len(), 6, "2 packages x (bound, interleaved) + 2 cross: {show:#}");
    let half = [(0, 0.5), (1, 0.5)];
    let other_half = [(2, 0.5), (3, 0.5)];
    for (p, cpus, own, other, own_half, far_half) in [
        (0u64, "0-1", "0-1", "2-3", &half, &other_half),
        (1, "2-3", "2-3", "0-1", &other_half, &half),
    ] {
        for policy in ["bind-per-node", "interleave"] {
            let r = scoped(&bw, p, p, policy);
            let what = format!("package {p} {policy}: {r:#}");
            assert_eq!(r["kernel"], "triad", "{what}");
            assert_eq!(r["cpus"], cpus, "{what}");
            assert_eq!(r["threads"], 2, "{what}");
            assert_eq!(r["mem_nodes"], own, "{what}");
            assert_eq!(r["scope"]["memory"], "own-package", "{what}");
            assert_eq!(r["scope"]["cpu_nodes"], own, "{what}");
            let want = if policy == "bind-per-node" { "local-per-thread" } else { "interleave" };
            assert_eq!(r["policy"], want, "{what}");
            assert_eq!(r["placement"]["status"], "verified", "{what}");
            assert_check(&what, &r["placement"]["check"], own_half, 0.05);
        }
        let r = scoped(&bw, p, 1 - p, "interleave");
        let what = format!("package {p} -> {}: {r:#}", 1 - p);
        assert_eq!(
            (r["cpus"].as_str(), r["mem_nodes"].as_str()),
            (Some(cpus), Some(other)),
            "{what}"
        );
        assert_eq!(r["scope"]["memory"], "other-package", "{what}");
        assert_eq!(r["placement"]["status"], "verified", "{what}");
        assert_check(&what, &r["placement"]["check"], far_half, 0.05);
    }
    let lat = payloads(&show, "lat", Some("package"));
    assert_eq!(lat.len(), 4, "2 packages x (own, other): {show:#}");
    for (p, cpu, own, other) in [(0u64, 0u64, "0-1", "2-3"), (1, 2, "2-3", "0-1")] {
        for (to, nodes) in [(p, own), (1 - p, other)] {
            let r = scoped(&lat, p, to, "interleave");
            let what = format!("chase {p} -> {to}: {r:#}");
            assert_eq!(r["cpu"], cpu, "the package's first CPU: {what}");
            assert_eq!(r["interleave"], nodes, "{what}");
            assert!(r["median_ns"].as_f64().is_some_and(|ns| ns > 0.0), "{what}");
            assert_eq!(r["placement"]["status"], "verified", "{what}");
            let n: Vec<u32> = topo::NodeSet::parse_list(nodes).unwrap().iter().collect();
            assert_check(&what, &r["placement"]["check"], &[(n[0], 0.5), (n[1], 0.5)], 0.05);
        }
    }
    assert!(payloads(&show, "step", None).is_empty(), "nothing skipped: {show:#}");
}

/// `numa=off` over a two-socket firmware: each socket's CPUs at once on
/// the memory the OS gives (its one node, verified there); no page can be
/// placed on the other socket, so the cross-package figures are skipped,
/// the reason stored with the run.
#[test]
fn run_under_numa_off_measures_each_package_on_the_memory_the_os_gives() {
    let boot = numa_off_over_numa_firmware("package-scope-numa-off")
        .run("run", "numaprobe run --quick --only bw-package,bw-cross-package,lat-package -q")
        .run("show", "numaprobe show latest --json")
        .boot();
    boot.get("run").expect_rc(0);
    let show = boot.json("show");
    let bw = payloads(&show, "bw", Some("package"));
    assert_eq!(bw.len(), 2, "one per package: {show:#}");
    for (p, cpus) in [(0u64, "0-1"), (1, "2-3")] {
        let r = scoped(&bw, p, p, "os-given");
        let what = format!("package {p}: {r:#}");
        assert_eq!((r["cpus"].as_str(), r["mem_node"].as_u64()), (Some(cpus), Some(0)), "{what}");
        assert_eq!(r["policy"], "bind", "{what}");
        assert_eq!(r["placement"]["status"], "verified", "{what}");
        assert_check(&what, &r["placement"]["check"], &[(0, 1.0)], 0.0);
    }
    let lat = payloads(&show, "lat", Some("package"));
    assert_eq!(lat.len(), 2, "{show:#}");
    for p in [0u64, 1] {
        let r = scoped(&lat, p, p, "os-given");
        assert_eq!(r["placement"]["status"], "verified", "{r:#}");
    }
    let steps = payloads(&show, "step", None);
    let names: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert_eq!(names, ["bw-cross-package", "bw-cross-package", "lat-package", "lat-package"]);
    for s in &steps {
        assert_eq!(s["status"], "skipped", "{s}");
        assert!(s["reason"].as_str().unwrap().starts_with("NUMA off: node(s) 0 hold"), "{s}");
    }
}

/// `run --quick` on an SNC2-like guest with 1.5 GiB per node (the default
/// 256 MiB cannot hold `--quick`'s 512 MiB latency matrix, nor 1 GiB its
/// loaded latency's 704 MiB beside the reserve), every step,
/// timed in the guest (`/proc/uptime` around the command; the run's own
/// `elapsed_s` and estimate beside it), and once more without the
/// package-scope steps (what `run --quick` measured before them). The
/// guest is emulated, so the times say what the steps cost under
/// emulation, not on hardware. A measurement (minutes under TCG), not a
/// check: run it by name with `--ignored`. With
/// `NUMAPROBE_GUEST_TIMED_PLAIN=1` only the plain `run --quick` is timed:
/// for a binary without the package steps (`NUMAPROBE_GUEST_BIN` set to an
/// older build), to time what `--quick` cost before them.
#[test]
#[ignore = "measures run --quick (minutes under TCG): -- --ignored run_quick_on_two_sockets"]
fn run_quick_on_two_sockets_with_and_without_the_package_steps() {
    let timed = |args: &str| {
        format!(
            "echo \"start $(cut -d\" \" -f1 /proc/uptime)\" >&2; \
             numaprobe --json run --quick -q {args}; rc=$?; \
             echo \"end $(cut -d\" \" -f1 /proc/uptime)\" >&2; exit $rc"
        )
    };
    let mut m = Machine::new("quick-timed").sockets(2, 2);
    for n in 0..4u32 {
        m = m.node(n, 1536, &[(n / 2, n % 2)]);
    }
    let plain = std::env::var_os("NUMAPROBE_GUEST_TIMED_PLAIN").is_some();
    let mut m = m.distances(&SNC2_SLIT).run("with", &timed(""));
    if !plain {
        m = m.run("without", &timed("--skip bw-package,bw-cross-package,lat-package"));
    }
    let boot = m.boot();
    let names: &[&str] = if plain { &["with"] } else { &["with", "without"] };
    for &name in names {
        let out = boot.get(name).expect_rc(0);
        let doc = out.json();
        let at = |what: &str| -> f64 {
            out.stderr
                .lines()
                .find_map(|l| l.strip_prefix(what))
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {what}in the guest's stderr\n{out}"))
        };
        let label = match (plain, name) {
            (true, _) => "with every step the binary plans",
            (false, "with") => "with the package steps",
            _ => "without the package steps",
        };
        eprintln!(
            "guest run --quick {label}: wall {:.1} s, measuring {:.1} s, estimate {:.0} s, {} results",
            at("end ") - at("start "),
            doc["elapsed_s"].as_f64().unwrap_or(f64::NAN),
            doc["estimate_s"].as_f64().unwrap_or(f64::NAN),
            doc["results"]
        );
        assert_eq!(doc["status"], "complete", "{out}");
    }
}

// --- study --vary: a runtime setting alternated and restored, for real ---

const THP_FILE: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The runs of `list --json` labelled with `prefix`: (label, status).
fn runs_labelled(list: &Value, prefix: &str) -> Vec<(String, String)> {
    list.as_array()
        .expect("list --json is an array")
        .iter()
        .filter_map(|r| {
            let l = r["label"].as_str()?;
            l.starts_with(prefix)
                .then(|| (l.to_string(), r["status"].as_str().unwrap().to_string()))
        })
        .collect()
}

/// In a guest, where changing THP disturbs nobody: `study --vary` changes
/// THP for each run in alternated order, labels the runs (their detected
/// THP differs), puts THP back and ends with the comparison; interrupted
/// part-way (SIGINT), it restores THP, keeps the runs so far, labelled, and
/// exits 130; and when a run fails, restores THP and fails (exit 1).
#[test]
fn study_alternates_restores_and_compares() {
    let study = |label: &str, rounds: u32| {
        format!(
            "study --vary thp_enabled=never,always --rounds {rounds} --label {label} \
             -- --quick --only bw-local"
        )
    };
    let boot = Machine::new("study")
        .run("thp-before", &format!("cat {THP_FILE}"))
        .run("study", &format!("numaprobe --json {}", study("s1", 2)))
        .run("thp-after", &format!("cat {THP_FILE}"))
        .run("list", "numaprobe list --json")
        .run(
            "interrupted",
            // The study in the background, SIGINT while its second run
            // measures, then its exit status.
            &format!(
                "numaprobe {} & p=$!; while [ $(ls /tmp/reports 2>/dev/null | grep -c md) -lt 5 ]; do \
                 sleep 0.2; done; sleep 1; kill -INT $p; wait $p; echo rc=$?",
                study("s2", 2)
            ),
        )
        .run("thp-end", &format!("cat {THP_FILE}"))
        .run("list-end", "numaprobe list --json")
        // A run that fails after THP was changed (its report folder cannot
        // be written): the study stops, restores, and fails.
        .run(
            "failing",
            "numaprobe study --vary thp_enabled=never,always --label s3 -- --quick \
             --only bw-local --report-dir /proc/nope",
        )
        .run("thp-failed", &format!("cat {THP_FILE}"))
        .boot();
    let before = boot.get("thp-before").expect_rc(0).stdout.trim().to_string();
    let chosen =
        |s: &str| s.split('[').nth(1).and_then(|r| r.split(']').next()).map(str::to_string);
    let was = chosen(&before).unwrap_or_else(|| panic!("THP: {before}"));

    let out = boot.get("study").expect_rc(0);
    let v = out.json();
    assert_eq!(v["key"], "thp_enabled", "{out}");
    assert_eq!(v["order"], serde_json::json!(["never", "always", "always", "never"]), "{out}");
    assert_eq!(v["restored"], was.as_str(), "{out}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "{out}");
    assert!(runs.iter().all(|r| r["status"] == "complete"), "{out}");
    let cmp = &v["comparison"];
    let groups: Vec<usize> = cmp["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["runs"].as_array().unwrap().len())
        .collect();
    assert_eq!(groups, [2, 2], "{out}");
    let diff: Vec<&Value> = cmp["settings_diff"].as_array().unwrap().iter().collect();
    assert!(
        diff.iter().any(|d| d["setting"] == "thp_enabled"
            && d["values"] == serde_json::json!(["never", "always"])),
        "the runs differ in their detected THP: {out}"
    );
    assert!(!cmp["metrics"].as_array().unwrap().is_empty(), "{out}");
    assert_eq!(boot.get("thp-after").expect_rc(0).stdout.trim(), before, "THP restored");
    let labelled = runs_labelled(&boot.json("list"), "s1: ");
    let count = |l: &str| labelled.iter().filter(|(x, s)| x == l && s == "complete").count();
    assert_eq!(
        (count("s1: thp_enabled=never"), count("s1: thp_enabled=always")),
        (2, 2),
        "{labelled:?}"
    );

    let out = boot.get("interrupted").expect_rc(0);
    assert!(out.stdout.contains("rc=130"), "interrupted study exits 130\n{out}");
    assert!(out.stderr.contains("study interrupted after"), "{out}");
    // A command that works as printed: the study's database (NUMAPROBE_DB
    // in the guest) named with --db.
    assert!(
        out.stderr
            .contains("compare them with: numaprobe --db '/tmp/results.db' compare 'label:s2: "),
        "{out}"
    );
    assert_eq!(boot.get("thp-end").expect_rc(0).stdout.trim(), before, "THP restored\n{out}");
    let kept = runs_labelled(&boot.json("list-end"), "s2: ");
    assert!(kept.len() >= 2 && kept.len() < 4, "runs so far kept: {kept:?}\n{out}");
    assert_eq!(kept[0].0, "s2: thp_enabled=never", "{kept:?}");
    assert_eq!(kept[1].0, "s2: thp_enabled=always", "{kept:?}");
    assert_eq!(kept.last().unwrap().1, "incomplete", "the run stopped part-way is kept: {kept:?}");

    let out = boot.get("failing").expect_rc(1);
    assert!(
        out.stderr
            .contains("study stopped: run 1 of 6 (thp_enabled=never) ended with exit status 2"),
        "{out}"
    );
    // That run saved nothing (it stopped before measuring): none is counted.
    assert!(out.stderr.contains("kept 0 run(s) labelled \"s3: thp_enabled=never\""), "{out}");
    assert_eq!(boot.get("thp-failed").expect_rc(0).stdout.trim(), before, "THP restored\n{out}");
}

// --- AMD EPYC (QEMU `-cpu EPYC`): NPS4 vs L3-as-NUMA ---

/// 2 sockets of QEMU's `EPYC` CPU model with `per_socket` cores, one node
/// per core, `mem_mib` each, and a SLIT from `d(i, j)`. Besides
/// `topo --json` it prints each CPU's L3 sharing (`l3`): what the guest
/// kernel derives from the model's CPUID cache leaves.
fn epyc(name: &str, per_socket: u32, mem_mib: u32, d: impl Fn(u32, u32) -> u32) -> Machine {
    let mut m = Machine::new(name).cpu_model("EPYC").sockets(2, per_socket);
    for n in 0..2 * per_socket {
        m = m.node(n, mem_mib, &[(n / per_socket, n % per_socket)]);
    }
    let rows: Vec<Vec<u32>> =
        (0..2 * per_socket).map(|i| (0..2 * per_socket).map(|j| d(i, j)).collect()).collect();
    let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
    m.distances(&refs)
        .run(
            "l3",
            "for c in /sys/devices/system/cpu/cpu[0-9]*; do \
             echo \"${c##*/} $(cat $c/cache/index3/shared_cpu_list)\"; done",
        )
        .run("topo", "numaprobe topo --json")
}

/// The NPS4 SLIT: 10 local, 11 to the neighbouring quadrant, 12 across
/// the socket, 32 to the other socket (`per` nodes a socket).
fn quadrant_slit(per: u32) -> impl Fn(u32, u32) -> u32 {
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

/// Asserts what these scenarios rest on: QEMU's `EPYC` model (QEMU 7.2)
/// makes each vCPU's L3 the vCPUs of its NUMA node (the guest kernel reads
/// the sharing from CPUID 0x8000001D), so with one core per node every
/// vCPU has its own L3 and a node is exactly one L3 domain.
fn assert_l3_per_cpu(boot: &Boot, cpus: u32) {
    let out = boot.get("l3").expect_rc(0);
    let want: String = (0..cpus).map(|c| format!("cpu{c} {c}\n")).collect();
    let mut got: Vec<&str> = out.stdout.lines().collect();
    got.sort_by_key(|l| l[3..].split(' ').next().and_then(|n| n.parse::<u32>().ok()));
    assert_eq!(got.join("\n") + "\n", want, "L3 sharing in the guest\n{out}");
}

/// Labels of `numa_mode.alternatives` in `topo --json`.
fn alternative_labels(v: &Value) -> Vec<String> {
    v["numa_mode"]["alternatives"]
        .as_array()
        .unwrap_or_else(|| panic!("no alternatives: {}", v["numa_mode"]))
        .iter()
        .map(|a| a["label"].as_str().unwrap_or("-").to_string())
        .collect()
}

#[test]
fn epyc_nps4_slit_with_one_l3_per_node_is_ambiguous() {
    // An EPYC in NPS4: 2 sockets x 4 nodes, SLIT 10/11/12 inside a
    // socket and 32 across, one L3 per node: NPS4 and L3-as-NUMA alike.
    let boot = epyc("epyc-nps4", 4, 256, quadrant_slit(4)).boot();
    assert_l3_per_cpu(&boot, 8);
    let v = boot.json("topo");
    let m = &v["numa_mode"];
    assert_eq!(v["cpu_vendor"], "amd", "{m}");
    assert_eq!(m["kind"], "nodes-per-package", "{m}");
    assert_eq!(m["nodes_per_package"], 4, "{m}");
    assert!(m["label"].is_null(), "the label must not pick one: {m}");
    assert_eq!(m["confidence"], "ambiguous", "{m}");
    assert_eq!(alternative_labels(&v), ["NPS4", "L3-as-NUMA"], "{m}");
    assert!(m["reason"].as_str().unwrap().contains("sysfs cannot tell"), "{m}");
    let tiers: Vec<(u64, Vec<String>)> = v["distance_tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let g = t["groups"].as_array().unwrap();
            (
                t["distance"].as_u64().unwrap(),
                g.iter().map(|x| x.as_str().unwrap().into()).collect(),
            )
        })
        .collect();
    let d: Vec<u64> = tiers.iter().map(|t| t.0).collect();
    assert_eq!(d, [10, 11, 12, 32], "{}", v["distance_tiers"]);
    assert_eq!(tiers[1].1, ["0-1", "2-3", "4-5", "6-7"]);
    assert_eq!(tiers[2].1, ["0-3", "4-7"]);
}

#[test]
fn epyc_eight_nodes_per_socket_is_l3_as_numa() {
    // 8 nodes of one L3 each per socket: no NPS setting gives 8.
    let boot = epyc("epyc-l3-numa", 8, 128, quadrant_slit(8)).boot();
    assert_l3_per_cpu(&boot, 16);
    let v = boot.json("topo");
    let m = &v["numa_mode"];
    assert_eq!(m["nodes_per_package"], 8, "{m}");
    assert_eq!(m["label"], "L3-as-NUMA", "{m}");
    assert_eq!(m["confidence"], "certain", "{m}");
    assert!(
        m["reason"].as_str().unwrap().contains("8 nodes per package is not a nodes-per-socket"),
        "{m}"
    );
}

#[test]
fn epyc_two_nodes_per_socket_with_the_l3_following_the_node_is_ambiguous() {
    // 2 nodes of 2 cores per socket. QEMU makes the L3 follow the node, so
    // the guest cannot show "NPS2 with two L3s per node" (the synthetic
    // tests in topo cover that): each node is one L3 of 2 vCPUs, which
    // NPS2 and L3-as-NUMA both give.
    let m = Machine::new("epyc-nps2").cpu_model("EPYC").sockets(2, 4);
    let m =
        (0..4).fold(m, |m, n| m.node(n, 256, &[(n / 2, 2 * (n % 2)), (n / 2, 2 * (n % 2) + 1)]));
    let boot = m
        .distances(&[&[10, 12, 32, 32], &[12, 10, 32, 32], &[32, 32, 10, 12], &[32, 32, 12, 10]])
        .run("topo", "numaprobe topo --json")
        .boot();
    let t = topo_of(&boot);
    let l3: Vec<String> =
        t.caches.iter().filter(|c| c.level == 3).map(|c| c.cpus.to_list()).collect();
    assert_eq!(l3, ["0-1", "2-3", "4-5", "6-7"], "the L3 follows the node");
    let v = boot.json("topo");
    let m = &v["numa_mode"];
    assert_eq!(m["nodes_per_package"], 2, "{m}");
    assert!(m["label"].is_null(), "{m}");
    assert_eq!(m["confidence"], "ambiguous", "{m}");
    assert_eq!(alternative_labels(&v), ["NPS2", "L3-as-NUMA"], "{m}");
    assert!(m["reason"].as_str().unwrap().contains("every remote distance is 12"), "{m}");
}

// --- the harness itself (no QEMU needed) ---

#[test]
fn harness_parses_markers_between_kernel_noise() {
    let log = "[    0.1] booting\n@@READY 6.12.0@@\n@@BEGIN a@@\n{\"x\": 1}\n@@STDERR a@@\nwarn\n\
               @@END a rc=0@@\n[  1.0] noise\n@@BEGIN b@@\n@@STDERR b@@\n@@END b rc=2@@\n\
               @@BEGIN c@@\ncut off\n@@DONE@@\n";
    let b = Boot::parse("t", log);
    assert_eq!(b.kernel, "6.12.0");
    assert!(b.done);
    assert_eq!(b.json("a")["x"], 1);
    assert_eq!(b.get("a").stderr, "warn\n");
    assert_eq!((b.get("b").rc, b.get("b").stdout.as_str()), (2, ""));
    assert!(!b.outputs.contains_key("c"), "an unterminated block is not an output");
}

#[test]
fn harness_initramfs_is_a_cpio_archive_the_cpio_tool_reads() {
    let dir = std::env::temp_dir().join(format!("numaprobe-guest-cpio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (bb, np) = (dir.join("bb"), dir.join("np"));
    std::fs::write(&bb, b"busybox!").unwrap(); // odd lengths exercise the padding
    std::fs::write(&np, b"numaprobe").unwrap();
    let archive = harness::initramfs("#!/bin/sh\n", &bb, &np).unwrap();
    std::fs::write(dir.join("a.cpio"), &archive).unwrap();
    let out = std::process::Command::new("cpio")
        .args(["-it", "--quiet", "-F"])
        .arg(dir.join("a.cpio"))
        .output()
        .expect("cpio (apt-get install cpio)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "cpio -t: {}", String::from_utf8_lossy(&out.stderr));
    let names = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(
        names,
        [
            "bin",
            "dev",
            "proc",
            "sys",
            "tmp",
            "root",
            "lib64",
            "dev/console",
            "bin/busybox",
            "bin/sh",
            "bin/numaprobe",
            "init"
        ]
    );
}

/// The shared libraries the dynamically linked GPU helper and the driver
/// double need, from this machine (the guest runs the same glibc).
fn glibc_files() -> Vec<(String, std::path::PathBuf)> {
    let dir = std::path::Path::new("/lib/x86_64-linux-gnu");
    ["ld-linux-x86-64.so.2", "libc.so.6", "libm.so.6", "libgcc_s.so.1"]
        .iter()
        .map(|f| {
            let p = dir.join(f);
            assert!(p.exists(), "{} is missing (glibc, libgcc-s1)", p.display());
            (format!("lib64/{f}"), p)
        })
        .collect()
}

/// `numaprobe gpu` on two real NUMA nodes, through the shipped pair
/// (static numaprobe, dynamic helper beside it) and the driver double,
/// whose copy rate depends on the node the kernel reports for the pinned
/// buffer: node 0 feeds GPU 0 at 24 GB/s, node 1 at 12. The matrix must
/// show each node's rate, so each buffer was on the node its row names.
#[test]
fn guest_gpu_matrix_rows_are_the_nodes_the_pinned_buffers_are_on() {
    let mut m = Machine::new("gpu-two-nodes")
        .sockets(2, 1)
        .node(0, 512, &[(0, 0)])
        .node(1, 512, &[(1, 0)])
        .distances(&[&[10, 21], &[21, 10]])
        .file("bin/numaprobe-gpu", gpu_support::helper())
        .file("lib64/libcuda_double.so", &gpu_support::double());
    for (guest, host) in glibc_files() {
        m = m.file(&guest, &host);
    }
    let boot = m
        .run(
            "gpu",
            "LD_LIBRARY_PATH=/lib64 NUMAPROBE_CUDA_LIBRARY=/lib64/libcuda_double.so \
             CUDA_DOUBLE=\"devices=1;rate=0:0:24;rate=1:0:12\" \
             numaprobe gpu --sizes 1M --reps 2 --directions h2d --json --quiet",
        )
        .boot();
    let out = boot.get("gpu");
    out.expect_rc(0);
    let v = out.json();
    let modelled = |gbs: f64| 1048576.0 / (5e-6 + 1048576.0 / (gbs * 1e9)) / 1e9;
    let cells = v["matrix"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(cells.len(), 2, "{v}");
    for (node, gbs) in [(0, 24.0), (1, 12.0)] {
        let c =
            cells.iter().find(|c| c["node"] == node).unwrap_or_else(|| panic!("node {node}: {v}"));
        let got = c["median_gbs"].as_f64().unwrap();
        assert!((got / modelled(gbs) - 1.0).abs() < 1e-3, "node {node}: {got} GB/s: {v}");
    }
    for p in v["points"].as_array().unwrap() {
        assert_eq!(p["on_node"], 1.0, "{p}");
    }
    assert_eq!(v["feeds"][0]["best_node"], 0, "{v}");
    assert_eq!(v["feeds"][0]["command"], "numactl --cpunodebind=0 --membind=0 <data loader>");
}

// --- SMBIOS DIMM locators from the firmware's real table ---

/// One socket, two cores, one node per core (256 MiB each), with the
/// firmware's Memory Device records set through QEMU's `-smbios type=17`.
fn dimm_machine(name: &str, dimms: &harness::Dimms) -> Machine {
    Machine::new(name)
        .sockets(1, 2)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(0, 1)])
        .distances(&[&[10, 12], &[12, 10]])
        .dimms(dimms)
        .run("audit", "numaprobe audit --json")
        .run("bw", &format!("numaprobe bw {BW_QUICK}"))
}

/// `memory.value` of `audit --json`: the guest read its table (init runs as root).
fn memory_of(boot: &Boot) -> Value {
    let v = boot.json("audit");
    assert_eq!(v["memory"]["status"], "value", "the guest's DMI table: {}", v["memory"]);
    v["memory"]["value"].clone()
}

/// The AMD EPYC boards' convention (bank `P0 CHANNEL A`, locator `DIMM 0`)
/// in the guest's real `/sys/firmware/dmi/tables/DMI`: numaprobe places the
/// one module QEMU describes (512 MiB, all the guest's RAM) on socket 0,
/// channel A, at the configured 4800 MT/s, so the socket's peak is
/// 1 channel x 4800 MT/s x 8 B = 38.4 GB/s, shared by its two nodes: `bw`
/// states 19.2 GB/s per node. QEMU's HPE-like `PROC 1 DIMM 0` is the other
/// half: HPE counts slots from 1, QEMU from 0, so slot 0 is no HPE slot and
/// numaprobe says the scheme is unknown instead of guessing a channel.
#[test]
fn smbios_dimm_locators_give_channels_and_peak_from_the_guest_table() {
    let amd = harness::Dimms {
        loc_pfx: "DIMM",
        bank: Some("P0 CHANNEL A"),
        manufacturer: Some("Samsung"),
        part: Some("M321R4GA3BB6-CQKET"),
        speed_mts: Some(4800),
    };
    let boot = dimm_machine("smbios-amd", &amd).boot();
    let m = memory_of(&boot);
    assert_eq!(m["processor_sockets"], 1, "{m}");
    assert_eq!(m["locator_scheme_known"], true, "{m}");
    let dimms = m["dimms"].as_array().unwrap_or_else(|| panic!("no dimms: {m}"));
    assert_eq!(dimms.len(), 1, "QEMU: one type 17 record per 16 GiB of RAM: {m}");
    let d = &dimms[0];
    assert_eq!(d["locator"], "DIMM 0", "{d}");
    assert_eq!(d["bank_locator"], "P0 CHANNEL A", "{d}");
    assert_eq!(d["size_bytes"], 512 * MIB, "{d}");
    assert_eq!(d["speed_mts"], 4800, "{d}");
    assert_eq!(d["configured_speed_mts"], 4800, "{d}");
    assert_eq!(d["manufacturer"], "Samsung", "{d}");
    assert_eq!(d["part_number"], "M321R4GA3BB6-CQKET", "{d}");
    assert_eq!(d["memory_type"], Value::Null, "QEMU writes type RAM (0x07), not a DDR: {d}");
    assert_eq!(d["socket"], 0, "{d}");
    assert_eq!(d["channel"], "A", "{d}");
    let sockets = m["sockets"].as_array().unwrap_or_else(|| panic!("no sockets: {m}"));
    assert_eq!(sockets.len(), 1, "{m}");
    let s = &sockets[0];
    assert_eq!(s["socket"], 0, "{s}");
    assert_eq!(s["slots"], 1, "{s}");
    assert_eq!(s["populated_slots"], 1, "{s}");
    assert_eq!(s["total_bytes"], 512 * MIB, "{s}");
    assert_eq!(s["channels"], serde_json::json!(["A"]), "{s}");
    assert_eq!(s["populated_channels"], serde_json::json!(["A"]), "{s}");
    assert_eq!(s["configured_speed_mts"], 4800, "{s}");
    let peak = s["peak_gbs"].as_f64().unwrap_or_else(|| panic!("no peak: {s}"));
    assert!((peak - 38.4).abs() < 1e-9, "1 x 4800 MT/s x 8 B = 38.4 GB/s, got {peak}: {s}");
    // bw sets each node's figure against its share of the socket's peak.
    let out = boot.get("bw");
    out.expect_rc(0);
    let rs = out.results();
    assert!(!rs.is_empty(), "{out}");
    for r in &rs {
        let p = r["peak_gbs"].as_f64().unwrap_or_else(|| panic!("no peak_gbs: {r}\n{out}"));
        assert!((p - 19.2).abs() < 1e-9, "38.4 GB/s over 2 nodes, got {p}: {r}");
    }

    let hpe = harness::Dimms {
        loc_pfx: "PROC 1 DIMM",
        bank: None,
        manufacturer: Some("HPE"),
        part: Some("P43328-B21"),
        speed_mts: Some(4800),
    };
    let boot = dimm_machine("smbios-hpe", &hpe).boot();
    let m = memory_of(&boot);
    let d = &m["dimms"][0];
    assert_eq!(d["locator"], "PROC 1 DIMM 0", "QEMU numbers from 0: {m}");
    assert_eq!(d["configured_speed_mts"], 4800, "{d}");
    assert_eq!(d["channel"], Value::Null, "slot 0 is no HPE slot: {d}");
    assert_eq!(m["locator_scheme_known"], false, "{m}");
    assert_eq!(m["sockets"], serde_json::json!([]), "{m}");
    let notes = m["notes"].to_string();
    assert!(notes.contains("'PROC 1 DIMM 0'") && notes.contains("does not know"), "{notes}");
    for r in boot.get("bw").expect_rc(0).results() {
        assert_eq!(r["peak_gbs"], Value::Null, "no peak without channels: {r}");
    }
}

// --- run's latency under interleave: the chase's pages over every node ---

/// `run --only lat-interleave` on the SNC2-like machine (4 nodes with
/// memory and CPUs): one chase point, marked as interleaved over nodes
/// 0-3 with no memory node, whose pages (`move_pages`) lie on each of the
/// four nodes about a quarter each, the check verified.
#[test]
fn run_chases_memory_interleaved_over_every_node() {
    let boot = snc2("lat-interleave")
        .run("run", "numaprobe run --quick --only lat-interleave -q >/dev/null")
        .run("show", "numaprobe show latest --json")
        .boot();
    boot.get("run").expect_rc(0);
    let show = boot.json("show");
    let chases: Vec<&Value> = show["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results[]: {show:#}"))
        .iter()
        .filter(|r| r["kind"] == "lat")
        .map(|r| &r["payload"])
        .collect();
    assert_eq!(chases.len(), 1, "one interleaved point: {show:#}");
    let p = chases[0];
    assert_eq!(p["mode"], "point", "{p:#}");
    assert_eq!(p["interleave"], "0-3", "{p:#}");
    assert!(p.get("mem_node").is_none_or(Value::is_null), "{p:#}");
    assert!(p["median_ns"].as_f64().is_some_and(|ns| ns > 0.0), "{p:#}");
    assert_eq!(p["placement"]["status"], "verified", "{p:#}");
    let quarter = [(0, 0.25), (1, 0.25), (2, 0.25), (3, 0.25)];
    assert_check(&format!("{p:#}"), &p["placement"]["check"], &quarter, 0.05);
}
