//! "Degrade, don't abort": one bad non-essential file in a tree
//! (`tests/data/snc2-cxl` copied and spoiled) gives a warning naming the
//! file and what was assumed, and discovery goes on: neither an abort
//! (exit 1, nothing shown) nor silence.

use std::path::{Path, PathBuf};

use topo::{NodeKind, SysRoot, Topology, Warning};

const CPU: &str = "sys/devices/system/cpu";
const NODE: &str = "sys/devices/system/node";

/// A copy of `tests/data/snc2-cxl` to spoil.
fn tree() -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let (src, dst) = (e.path(), to.join(e.file_name()));
            if e.file_type().unwrap().is_dir() {
                copy(&src, &dst);
            } else {
                std::fs::copy(&src, &dst).unwrap();
            }
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    copy(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/snc2-cxl"), tmp.path());
    tmp
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    std::fs::write(dir.join(rel), bytes).unwrap();
}

/// Discovers the tree; it must succeed.
fn discover(dir: &Path) -> Topology {
    Topology::discover(&SysRoot::new(dir).unwrap()).unwrap_or_else(|e| panic!("aborted: {e}"))
}

/// The warning about `rel`; fails listing the warnings when there is none.
fn warning<'a>(t: &'a Topology, dir: &Path, rel: &str) -> &'a Warning {
    let path = dir.join(rel).display().to_string();
    t.warnings
        .iter()
        .find(|w| w.path.as_deref() == Some(path.as_str()))
        .unwrap_or_else(|| panic!("no warning naming {path}: {:#?}", t.warnings))
}

#[test]
fn one_cpus_l3_size_empty_or_garbage_drops_that_cache_only() {
    for bad in [&b""[..], b"lots\n", b"\xff\xfe\n"] {
        let d = tree();
        let rel = format!("{CPU}/cpu0/cache/index3/size");
        write(d.path(), &rel, bad);
        let t = discover(d.path());
        let w = warning(&t, d.path(), &rel);
        assert_eq!(w.assumed.as_deref(), Some("cache index3 of CPU 0 left out"), "{w:?}");
        // The other CPUs' L3 and CPU 0's L1/L2 are still there.
        assert!(t.caches.iter().any(|c| c.level == 3 && c.cpus.contains(4)), "{:?}", t.caches);
        assert!(t.caches.iter().any(|c| c.level == 1 && c.cpus.contains(0)));
        assert_eq!(t.cpus.len(), 8);
    }
}

#[test]
fn one_cpus_cache_level_empty_or_garbage_is_a_warning() {
    for bad in [&b""[..], b"three\n", b"300\n"] {
        let d = tree();
        let rel = format!("{CPU}/cpu0/cache/index3/level");
        write(d.path(), &rel, bad);
        let t = discover(d.path());
        let w = warning(&t, d.path(), &rel);
        assert!(w.problem.contains("expected a number") || w.problem.contains("cache level"));
        assert!(t.caches.iter().any(|c| c.level == 2 && c.cpus.contains(0)));
    }
}

#[test]
fn cache_replaced_by_a_file_is_a_warning() {
    let d = tree();
    let rel = format!("{CPU}/cpu0/cache");
    std::fs::remove_dir_all(d.path().join(&rel)).unwrap();
    write(d.path(), &rel, b"not a directory\n");
    let t = discover(d.path());
    assert_eq!(warning(&t, d.path(), &rel).assumed.as_deref(), Some("no caches known for CPU 0"));
    assert!(t.caches.iter().any(|c| c.level == 3), "other CPUs' caches stay");
}

#[test]
fn nr_hugepages_zz_is_a_warning_and_zero_pages() {
    let d = tree();
    let rel = format!("{NODE}/node0/hugepages/hugepages-2048kB/nr_hugepages");
    write(d.path(), &rel, b"zz\n");
    let t = discover(d.path());
    let w = warning(&t, d.path(), &rel);
    assert_eq!(
        (w.problem.as_str(), w.assumed.as_deref()),
        ("expected a number, found 'zz'", Some("0 pages"))
    );
    let h = t.nodes[0].hugepages.iter().find(|h| h.page_size_bytes == 2 << 20).unwrap();
    assert_eq!(h.total, 0);
}

#[test]
fn non_utf8_cgroup_and_cmdline_are_warnings() {
    let d = tree();
    write(d.path(), "proc/self/cgroup", b"0::/user.slice/\xff\xfe\n");
    write(d.path(), "proc/cmdline", b"BOOT_IMAGE=/vmlinuz numa=\xff\n");
    let t = discover(d.path());
    assert!(warning(&t, d.path(), "proc/self/cgroup").problem.contains("UTF-8"));
    assert_eq!(
        warning(&t, d.path(), "proc/cmdline").assumed.as_deref(),
        Some("an empty kernel command line")
    );
    assert_eq!(t.cgroup.version, "none");
    assert_eq!(t.nodes.len(), 5);
}

/// The held-out 17-node Itanium capture: no `cpu/online`, and
/// `cpu0/online` empty. It stopped with "expected a number, found ''".
#[test]
fn an_empty_cpu0_online_is_a_warning_and_cpu0_online() {
    let d = tree();
    std::fs::remove_file(d.path().join(format!("{CPU}/online"))).unwrap();
    let rel = format!("{CPU}/cpu0/online");
    write(d.path(), &rel, b"");
    write(d.path(), &format!("{CPU}/cpu1/online"), b"0\n");
    let t = discover(d.path());
    let w = warning(&t, d.path(), &rel);
    assert_eq!(w.problem, "expected a number, found ''");
    assert_eq!(w.assumed.as_deref(), Some("CPU 0 online"));
    assert_eq!(t.online_cpus.to_list(), "0,2-7");
}

#[test]
fn an_empty_cpu_online_uses_the_nodes_lists_with_a_warning() {
    let d = tree();
    let rel = format!("{CPU}/online");
    write(d.path(), &rel, b"\n");
    let t = discover(d.path());
    let w = warning(&t, d.path(), &rel);
    assert!(w.problem.contains("lists no CPU"), "{w:?}");
    assert_eq!(t.online_cpus.to_list(), "0-7", "not 0 CPUs");
    assert_eq!(t.cpus.len(), 8);
}

#[test]
fn an_empty_node_meminfo_is_a_warning() {
    let d = tree();
    let rel = format!("{NODE}/node1/meminfo");
    write(d.path(), &rel, b"");
    let t = discover(d.path());
    let w = warning(&t, d.path(), &rel);
    assert_eq!(
        (w.problem.as_str(), w.assumed.as_deref()),
        ("no MemTotal line", Some("node 1 memory taken as 0"))
    );
    assert_eq!(t.nodes[1].mem_total_bytes, 0);
    assert_eq!(t.nodes[1].kind, NodeKind::CpuOnly);
}

#[test]
fn devices_dangling_links_and_directories_are_warnings() {
    let d = tree();
    let dangling = format!("{NODE}/node0/distance");
    std::fs::remove_file(d.path().join(&dangling)).unwrap();
    std::os::unix::fs::symlink(d.path().join("nowhere"), d.path().join(&dangling)).unwrap();
    let zero = "proc/meminfo";
    std::os::unix::fs::symlink("/dev/zero", d.path().join(zero)).unwrap();
    let dir = format!("{NODE}/node4/access0/initiators/read_latency");
    std::fs::remove_file(d.path().join(&dir)).unwrap();
    std::fs::create_dir(d.path().join(&dir)).unwrap();
    let t = discover(d.path());
    assert!(warning(&t, d.path(), &dangling).problem.contains("dangling"));
    assert!(warning(&t, d.path(), zero).problem.contains("a character device"));
    assert!(warning(&t, d.path(), &dir).problem.contains("a directory"));
    assert_eq!(t.system_memory, None);
}

/// Without the `cpu` directory's listing nothing can be said: that stays
/// a one-line error naming it.
#[test]
fn the_node_directory_as_a_file_is_an_error_naming_it() {
    let d = tree();
    std::fs::remove_dir_all(d.path().join(NODE)).unwrap();
    write(d.path(), NODE, b"x\n");
    let e = Topology::discover(&SysRoot::new(d.path()).unwrap()).unwrap_err().to_string();
    assert!(e.contains(NODE) && !e.contains('\n'), "{e}");
}

/// Old stores hold schema-1 topologies whose warnings are strings.
#[test]
fn schema_1_string_warnings_still_read() {
    let w: Vec<Warning> = serde_json::from_str(
        r#"["node 0: no meminfo", {"path": "/x", "problem": "p", "assumed": "a"}]"#,
    )
    .unwrap();
    assert_eq!(w[0], Warning::general("node 0: no meminfo"));
    assert_eq!(w[1].to_string(), "/x: p; assumed a");
}

/// A Firecracker guest with virtio-mem showed one node of 4.3 GiB in a
/// 126 GiB system (the node grew as memory was used): the summary and a
/// warning say so, instead of calling it a 4.3 GiB machine. Nodes that
/// hold the system's memory say nothing.
#[test]
fn nodes_holding_far_less_than_the_system_are_said_to() {
    let d = tree();
    // The tree's nodes: 4 x 8 GiB + 64 GiB = 96 GiB.
    write(
        d.path(),
        "proc/meminfo",
        b"MemTotal:       104857600 kB\nMemFree:        100000000 kB\n",
    );
    let t = discover(d.path());
    assert!(
        t.nodes_short_of_system().is_none(),
        "100 GiB against 96: {:?}",
        t.nodes_short_of_system()
    );
    assert!(t.summary_line().contains(", 96.0 GiB"), "{}", t.summary_line());
    assert!(!t.warnings.iter().any(|w| w.problem.contains("NUMA nodes hold")), "{:#?}", t.warnings);
    write(
        d.path(),
        "proc/meminfo",
        b"MemTotal:       1048576000 kB\nMemFree:        1000000000 kB\n",
    );
    let t = discover(d.path());
    assert_eq!(t.nodes_short_of_system(), Some((96 << 30, 1000 << 30)));
    assert!(
        t.summary_line().contains(", 96.0 GiB node memory of 1000.0 GiB system memory"),
        "{}",
        t.summary_line()
    );
    let w = t
        .warnings
        .iter()
        .find(|w| w.problem.contains("NUMA nodes hold"))
        .unwrap_or_else(|| panic!("{:#?}", t.warnings));
    assert!(w.problem.contains("96.0 GiB of the system's 1000.0 GiB"), "{w:?}");
}
