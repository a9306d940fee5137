//! The emulated Arm servers: QEMU's `virt` board (`qemu-system-aarch64`,
//! TCG, `-cpu max`) boots Debian's arm64 kernel with the static aarch64
//! numaprobe inside, and the host checks what it reports against what the
//! guest was given. The NUMA description reaches the kernel as Arm servers
//! without ACPI give it: in the device tree (`numa-node-id`, the
//! `distance-map`, the `cpu-map` with its sockets), which QEMU writes from
//! the same `-numa` options the x86-64 guests use.
//!
//! Gated: `scripts/aarch64-setup.sh && scripts/guest-arm-setup.sh && cargo
//! test -p numaprobe --features guest-arm-tests --test guest_arm --
//! --nocapture`. See docs/aarch64.md. Performance under emulation means
//! nothing: only structure, placement and arithmetic are checked.

#[path = "guest/harness.rs"]
#[allow(dead_code)] // the x86-64 machines' parts (HMAT, SMBIOS, KVM)
mod harness;

use std::collections::BTreeMap;

use harness::{shares, Arch, Boot, Machine, Output};
use serde_json::Value;
use topo::{NodeKind, NumaModeKind, Topology};

const MIB: u64 = 1 << 20;

/// The SLIT of the 2-socket Arm machine: Kunpeng 920's own matrix for the
/// four CPU nodes (two dies per socket: 16 between dies of a socket, 25 to
/// 33 across), and a memory-only node 4 nearer socket 1 (20) than socket 0
/// (30).
const ARM_SLIT: [&[u32]; 5] = [
    &[10, 16, 32, 33, 30],
    &[16, 10, 25, 32, 30],
    &[32, 25, 10, 16, 20],
    &[33, 32, 16, 10, 20],
    &[30, 30, 20, 20, 10],
];

/// Small, quick `bw` figures: structure and placement only, never speed.
const BW_QUICK: &str =
    "--json --kernel triad --size 1M --pages nothp --min-reps 2 --max-reps 2 --budget 0.1";
/// Small, quick `lat` figures.
const LAT_QUICK: &str = "--json --size 1M --samples 3 --sample-ms 5";

/// 2 sockets x 2 cores, a node per core (two nodes per socket, as
/// Kunpeng's dies), 256 MiB each, and a 256 MiB memory-only node 4.
fn arm2s(name: &str) -> Machine {
    Machine::new(name)
        .arch(Arch::Aarch64)
        .sockets(2, 2)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(0, 1)])
        .node(2, 256, &[(1, 0)])
        .node(3, 256, &[(1, 1)])
        .node(4, 256, &[])
        .distances(&ARM_SLIT)
}

/// Every page of a check on `node`.
fn all_on(what: &dyn std::fmt::Display, check: &Value, node: u32) {
    assert_eq!(
        shares(check),
        BTreeMap::from([(node, 1.0)]),
        "pages not all on node {node}\n{what}"
    );
}

/// The (CPU node, memory node) cells of a `--matrix` document, sorted.
fn cells(out: &Output) -> Vec<(u64, u64)> {
    let mut c: Vec<(u64, u64)> = out
        .results()
        .iter()
        .map(|r| (r["cpu_node"].as_u64().unwrap(), r["mem_node"].as_u64().unwrap()))
        .collect();
    c.sort_unstable();
    c
}

fn topo_of(boot: &Boot) -> Topology {
    boot.get("topo").expect_rc(0).parse()
}

/// The 2-socket Arm guest: topology as given, bandwidth and latency with
/// their pages verified, the SVE and NEON kernels validated, the counters
/// that exist under emulation, and `run --quick` to the end.
#[test]
fn arm_two_sockets_topology_placement_and_run() {
    let boot = arm2s("arm2s")
        .run("topo", "numaprobe topo --json")
        .run("topo-text", "numaprobe topo")
        .run("audit", "numaprobe audit --json")
        .run("bw-matrix", &format!("numaprobe bw --matrix {BW_QUICK}"))
        .run("bw-neon", &format!("numaprobe bw --isa neon --cpu-node 2 --mem-node 4 {BW_QUICK}"))
        .run("lat-matrix", &format!("numaprobe lat --matrix {LAT_QUICK}"))
        .run(
            "bw-counters",
            &format!("numaprobe bw --counters --cpu-node 0 --mem-node 0 {BW_QUICK}"),
        )
        .boot();

    // Topology as configured: 2 packages, 5 nodes, the SLIT, node 4
    // memory-only, the CPU nodes in their sockets.
    let t = topo_of(&boot);
    assert_eq!(t.arch.as_deref(), Some("aarch64"));
    assert_eq!(t.packages.len(), 2, "packages");
    let pkg_nodes: Vec<String> = t.packages.iter().map(|p| p.nodes.to_string()).collect();
    assert_eq!(pkg_nodes, ["0-1", "2-3"], "nodes per package");
    assert_eq!(t.nodes.len(), 5, "nodes");
    for (i, node) in t.nodes.iter().enumerate() {
        assert_eq!(node.id, i as u32);
        assert_eq!(node.distances, ARM_SLIT[i], "SLIT row of node {i}");
        let (kind, cpus) = if i < 4 {
            (NodeKind::CpuMemory, vec![i as u32])
        } else {
            (NodeKind::MemoryOnly, vec![])
        };
        assert_eq!(node.kind, kind, "kind of node {i}");
        assert_eq!(node.cpus.iter().collect::<Vec<_>>(), cpus, "CPUs of node {i}");
        assert!(
            node.mem_total_bytes > 128 * MIB && node.mem_total_bytes <= 256 * MIB,
            "node {i} memory {} B, configured 256 MiB",
            node.mem_total_bytes
        );
    }
    assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage, "mode: {:?}", t.numa_mode);
    assert_eq!(t.numa_mode.nodes_per_package, Some(2), "mode: {:?}", t.numa_mode);
    // Arm words: no Intel or AMD setting names a reason on this machine.
    for word in ["SNC", "NPS", "Sub-NUMA", "Cluster-on-Die"] {
        assert!(!t.numa_mode.reason.contains(word), "{word} in {:?}", t.numa_mode);
        assert!(
            t.numa_mode.label.as_deref().is_none_or(|l| !l.contains(word)),
            "{:?}",
            t.numa_mode
        );
    }
    let text = &boot.get("topo-text").expect_rc(0).stdout;
    assert!(text.contains("arch aarch64"), "{text}");

    // bw --matrix: every CPU node against every memory node (the
    // memory-only one included), each cell's pages all on its node, the
    // best variant this CPU has (SVE, qemu's max CPU has it) validated.
    let out = boot.get("bw-matrix").expect_rc(0);
    let want: Vec<(u64, u64)> = (0..4).flat_map(|c| (0..5).map(move |m| (c, m))).collect();
    assert_eq!(cells(out), want, "matrix cells\n{out}");
    for r in &out.results() {
        let m = r["mem_node"].as_u64().unwrap() as u32;
        let what = format!("cell {}->{m}\n{out}", r["cpu_node"]);
        assert_eq!(r["isa"], "sve", "{what}");
        assert_eq!(r["validated"], true, "{what}");
        assert_eq!(r["placement"]["status"], "verified", "{what}");
        all_on(&what, &r["placement"]["check"], m);
    }
    // --isa neon: the NEON kernels, on the memory-only node.
    let out = boot.get("bw-neon").expect_rc(0);
    for r in out.results() {
        assert_eq!(r["isa"], "neon", "{out}");
        assert_eq!(r["validated"], true, "{out}");
        assert_eq!(r["placement"]["status"], "verified", "{out}");
        all_on(out, &r["placement"]["check"], 4);
    }

    // lat --matrix: every CPU node to every memory node, pages verified.
    let out = boot.get("lat-matrix").expect_rc(0);
    assert_eq!(cells(out), want, "lat --matrix cells\n{out}");
    for r in &out.results() {
        let m = r["mem_node"].as_u64().unwrap() as u32;
        assert_eq!(r["placement"]["status"], "verified", "{out}");
        all_on(out, &r["placement"]["check"], m);
        assert!(r["median_ns"].as_f64().is_some_and(|ns| ns > 0.0), "median_ns\n{out}");
    }

    // Counters: the software events count (first touch faults the
    // arrays in); the hardware ones are the emulated PMU's or say why not.
    let out = boot.get("bw-counters").expect_rc(0);
    for r in out.results() {
        let readings = r["counters"]["events"]
            .as_array()
            .unwrap_or_else(|| panic!("no counters.events\n{out}"))
            .clone();
        let by_name = |n: &str| {
            readings
                .iter()
                .find(|x| x["event"] == n)
                .unwrap_or_else(|| panic!("no {n} reading\n{out}"))
                .clone()
        };
        let faults = by_name("page-faults");
        assert!(faults["unavailable"].is_null(), "page-faults: {faults}\n{out}");
        for hw in ["cycles", "instructions"] {
            let x = by_name(hw);
            let why = x["unavailable"].as_str();
            assert!(
                why.is_none() || why.is_some_and(|w| !w.is_empty()),
                "{hw} neither counted nor explained: {x}\n{out}"
            );
        }
    }
}

/// `run --quick` to the end on a small Arm machine (one socket, two nodes
/// of 1 GiB: the 2-socket machine's 20-cell matrices take too long under
/// emulation; the guest's kernel gives no cache sizes, so the working sets
/// are the fallback's, and `lat`'s 512 MiB chase must fit beside what
/// numaprobe keeps free), saved complete, every bandwidth and latency
/// result's pages verified. It needs multi-threaded TCG (the harness):
/// `lat c2c` hands a cache line between two vCPUs.
#[test]
fn arm_run_quick_completes() {
    let boot = Machine::new("arm-run")
        .arch(Arch::Aarch64)
        .sockets(1, 2)
        .node(0, 1024, &[(0, 0)])
        .node(1, 1024, &[(0, 1)])
        .distances(&[&[10, 16], &[16, 10]])
        .run("run", "numaprobe run --quick -q >/dev/null")
        .run("show", "numaprobe show latest --json")
        .boot();
    boot.get("run").expect_rc(0);
    let show = boot.json("show");
    assert_eq!(show["status"], "complete", "{show:#}");
    let results = show["results"].as_array().unwrap();
    let kinds: Vec<&str> = results.iter().filter_map(|r| r["kind"].as_str()).collect();
    for k in ["bw", "lat"] {
        assert!(kinds.contains(&k), "run --quick saved no {k} result: {kinds:?}");
    }
    for r in results.iter().filter(|r| r["kind"] == "bw") {
        let p = &r["payload"];
        assert_eq!(p["validated"], true, "{p:#}");
        assert_eq!(p["isa"], "sve", "{p:#}");
        assert_eq!(p["placement"]["status"], "verified", "{p:#}");
    }
}

/// Debian's 16 KiB-page arm64 kernel: pages are counted in 16 KiB pages
/// (`move_pages` samples, the page report), a transparent huge page is
/// 32 MiB (not 2 MiB), the huge page pools are that kernel's, and `bw`
/// places and validates its arrays there. (No Debian kernel has 64 KiB
/// pages; those are tested on synthetic smaps and sysfs trees.)
#[test]
fn arm_16k_page_kernel_counts_its_own_page_sizes() {
    let boot = Machine::new("arm16k")
        .arch(Arch::Aarch64)
        .kernel("vmlinuz-16k")
        .sockets(1, 2)
        .node(0, 256, &[(0, 0)])
        .node(1, 256, &[(0, 1)])
        .distances(&[&[10, 20], &[20, 10]])
        .run("pmd", "cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .run("bind", "numaprobe place --json --pages nothp --cpu-node 0 --mem-nodes 1 --size 4M")
        .run(
            "thp",
            "echo always > /sys/kernel/mm/transparent_hugepage/enabled && \
             numaprobe place --json --pages thp --cpu-node 0 --mem-nodes 1 --size 64M",
        )
        .run("topo", "numaprobe topo --json")
        .run("bw", &format!("numaprobe bw --cpu-node 0 --mem-node 1 {BW_QUICK}"))
        .boot();
    const KIB16: u64 = 16 << 10;
    let pmd = boot.get("pmd").expect_rc(0).stdout.trim().to_string();
    assert_eq!(pmd, (32 * MIB).to_string(), "hpage_pmd_size of a 16 KiB-page kernel");

    // 4 MiB bound to node 1: 256 pages of 16 KiB, every one on node 1.
    let out = boot.get("bind").expect_rc(0);
    let v = out.json();
    assert_eq!(v["pages"]["obtained"], "base", "{out}");
    assert_eq!(v["pages"]["page_size_bytes"], KIB16, "{out}");
    assert_eq!(v["placement"]["sampled_pages"], 4 * MIB / KIB16, "{out}");
    all_on(out, &v["placement"], 1);

    // THP: 32 MiB pages, reported as such.
    let out = boot.get("thp").expect_rc(0);
    let v = out.json();
    assert_eq!(v["pages"]["obtained"], "thp", "{out}");
    assert_eq!(v["pages"]["page_size_bytes"], 32 * MIB, "{out}");
    all_on(out, &v["placement"], 1);

    // The huge page pools of this kernel: its default is the PMD size.
    let t = topo_of(&boot);
    let mem = t.system_memory.as_ref().expect("system memory");
    assert_eq!(mem.default_hugepage_bytes, Some(32 * MIB), "{mem:?}");
    let sizes: Vec<u64> = mem.hugepages.iter().map(|h| h.page_size_bytes).collect();
    assert!(sizes.contains(&(32 * MIB)), "{sizes:?}");
    assert!(!sizes.contains(&(64 << 10)), "a 4 KiB-page kernel's 64 KiB pool: {sizes:?}");

    // bw: arrays placed on node 1 in 16 KiB pages, validated.
    let out = boot.get("bw").expect_rc(0);
    for r in out.results() {
        assert_eq!(r["validated"], true, "{out}");
        assert_eq!(r["placement"]["status"], "verified", "{out}");
        all_on(out, &r["placement"]["check"], 1);
    }
}
