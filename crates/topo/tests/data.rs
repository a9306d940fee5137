//! Discovery on the project's own small hand-made trees in `tests/data/`
//! (each folder has a README saying what it models).

use std::path::PathBuf;

use topo::{DeviceClass, NodeKind, NumaModeKind, SysRoot, TopoError, Topology};

fn data(name: &str) -> SysRoot {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    SysRoot::new(&dir).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn two_sockets_with_numa_off_on_the_kernel_line() {
    let t = Topology::discover(&data("two-socket-numa-off")).unwrap();
    assert_eq!(t.packages.len(), 2);
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.numa_mode.kind, NumaModeKind::DisabledByKernel);
    assert!(t.numa_mode.reason.contains("numa=off"), "{}", t.numa_mode.reason);
    assert!(t.numa_mode.reason.contains("2 package"), "{}", t.numa_mode.reason);
    assert_eq!(t.cmdline.get("numa"), Some("off"));
    assert_eq!(t.cpu_model.as_deref(), Some("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz"));
    assert_eq!(t.core_count(), 8);
    // One L3 per package, shared by its 4 CPUs.
    let l3: Vec<String> =
        t.caches.iter().filter(|c| c.level == 3).map(|c| c.cpus.to_list()).collect();
    assert_eq!(l3, vec!["0-3", "4-7"]);
    assert_eq!(t.llc_bytes_for(&"0-7".parse().unwrap()), Some(32 << 20));
    assert_eq!(t.nodes[0].mem_total_bytes, 33554432 * 1024);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
}

/// A malformed non-essential file is a warning naming it and what was
/// assumed; discovery goes on, so one bad file does not cost the whole
/// topology.
#[test]
fn malformed_distance_file_is_a_warning_naming_it() {
    let t = Topology::discover(&data("bad-distance")).unwrap();
    let w = t.warnings.iter().find(|w| w.contains("node0/distance")).expect("a warning");
    assert!(w.path.as_deref().unwrap().ends_with("node0/distance"), "{w:?}");
    assert!(w.problem.contains("twenty"), "{w:?}");
    assert_eq!(w.assumed.as_deref(), Some("no distance row for node 0"));
    assert!(t.nodes.iter().all(|n| n.distances.is_empty()), "no matrix from a broken row");
}

#[test]
fn missing_files_degrade_with_warnings() {
    let t = Topology::discover(&data("missing-files")).unwrap();
    assert_eq!(t.cpus.len(), 1, "cpu1 has no topology directory");
    assert_eq!(t.online_cpus.to_list(), "0-1");
    assert_eq!(t.nodes.len(), 1);
    assert_eq!(t.nodes[0].mem_total_bytes, 0);
    assert_eq!(t.nodes[0].kind, NodeKind::CpuOnly);
    assert!(t.nodes[0].distances.is_empty());
    assert!(t.warnings.iter().any(|w| w.contains("node 0: no meminfo")), "{:?}", t.warnings);
    assert!(t.warnings.iter().any(|w| w.contains("CPUs 1 have no topology")), "{:?}", t.warnings);
    assert_eq!(t.cpu_model, None);
    assert_eq!(t.cmdline.raw, None);
    assert_eq!(t.cgroup.version, "none");
    assert_eq!(t.numa_mode.kind, NumaModeKind::SingleNode);
}

#[test]
fn a_folder_that_is_not_sysfs_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = Topology::discover(&SysRoot::new(dir.path()).unwrap()).unwrap_err().to_string();
    assert!(err.contains("sys/devices/system/cpu"), "{err}");
    assert!(matches!(
        SysRoot::new(dir.path().join("nope")),
        Err(TopoError::NoRoot(p)) if p.ends_with("nope")
    ));
}

#[test]
fn snc2_with_cxl_hmat_tiers_devices_and_cgroup2() {
    let t = Topology::discover(&data("snc2-cxl")).unwrap();
    assert_eq!(t.numa_mode.kind, NumaModeKind::NodesPerPackage);
    assert_eq!(t.numa_mode.label.as_deref(), Some("SNC2"));
    assert_eq!(t.numa_mode.nodes_per_package, Some(2));
    assert!(t.numa_mode.reason.contains("CPU-less memory nodes 4"), "{}", t.numa_mode.reason);
    assert_eq!(t.memory_only_nodes().to_list(), "4");
    assert_eq!(t.node(4).unwrap().kind, NodeKind::MemoryOnly);
    assert_eq!(t.distance(0, 1), Some(11));
    assert_eq!(t.distance(3, 4), Some(40));
    assert_eq!(t.kernel.as_deref(), Some("6.8.0-test"));

    // Caches: 48K L1d per CPU, 105M L3 per package.
    let l1d: Vec<u64> = t.caches_of(0).iter().map(|c| c.size_bytes).collect();
    assert_eq!(l1d, vec![48 << 10, 2 << 20, 105 << 20]);

    // Huge pages per node and size.
    let hp = &t.node(0).unwrap().hugepages;
    assert_eq!(hp.len(), 2);
    assert_eq!((hp[0].page_size_bytes, hp[0].total, hp[0].free), (2 << 20, 512, 500));
    assert_eq!((hp[1].page_size_bytes, hp[1].total), (1 << 30, 2));

    // HMAT: node 4 seen from initiators 0-1.
    let a0 = t.node(4).unwrap().hmat.as_ref().unwrap().access0.as_ref().unwrap();
    assert_eq!(a0.initiators.to_list(), "0-1");
    assert_eq!(a0.read_bandwidth_mbs, Some(30000));
    assert_eq!(a0.write_latency_ns, Some(300));
    let a0_init = t.node(0).unwrap().hmat.as_ref().unwrap().access0.as_ref().unwrap();
    assert_eq!(a0_init.targets.to_list(), "0");
    assert!(t.node(0).unwrap().hmat.as_ref().unwrap().access1.is_none());
    let msc = &t.node(0).unwrap().memory_side_caches;
    assert_eq!(msc.len(), 1);
    assert_eq!(msc[0].size_bytes, 16 << 30);

    // Tiers.
    assert_eq!(t.memory_tiers.len(), 2);
    assert_eq!(t.node(4).unwrap().memory_tier, Some(22));
    assert_eq!(t.node(1).unwrap().memory_tier, Some(4));

    // Devices: the host bridge is left out; -1 is unknown.
    let classes: Vec<(&str, DeviceClass, Option<u32>)> =
        t.devices.iter().map(|d| (d.address.as_str(), d.class, d.numa_node)).collect();
    assert_eq!(
        classes,
        vec![
            ("0000:17:00.0", DeviceClass::Gpu, Some(0)),
            ("0000:31:00.0", DeviceClass::Nic, None),
            ("0000:4b:00.0", DeviceClass::Nvme, Some(2)),
        ]
    );
    assert_eq!(t.devices[2].local_cpus.as_ref().unwrap().to_list(), "4-5");
    assert_eq!(t.devices[0].class_code, "0x030200");

    // cgroup v2 limits the job.
    assert_eq!(t.cgroup.version, "cgroup2");
    assert_eq!(t.cgroup.path.as_deref(), Some("/user.slice/job.scope"));
    assert_eq!(t.cgroup.cpus.as_ref().unwrap().to_list(), "0-3");
    assert_eq!(t.cgroup.mems.as_ref().unwrap().to_list(), "0-1");
    assert!(t.cgroup.restricts);

    // Command line options.
    assert_eq!(t.cmdline.get("numa_balancing"), Some("disable"));
    assert_eq!(t.cmdline.get("isolcpus"), Some("6-7"));
    assert_eq!(t.cmdline.get("root"), None);
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    assert!(
        t.summary_line().starts_with(
            "2 packages, 8 cores, 8 CPUs, 5 NUMA nodes (SNC2, 2 per package, 1 memory-only)"
        ),
        "{}",
        t.summary_line()
    );
}

#[test]
fn live_machine_discovers() {
    // Whatever this machine is, discovery must succeed and be coherent.
    let t = Topology::discover(&SysRoot::live()).unwrap();
    assert!(t.live);
    assert!(!t.cpus.is_empty());
    assert_eq!(t.cpus.len(), t.online_cpus.len());
    assert!(t.cgroup.affinity.as_ref().is_some_and(|a| !a.is_empty()));
    for c in &t.cpus {
        assert!(t.packages.iter().any(|p| p.id == c.package && p.cpus.contains(c.id)));
    }
}

/// Copies a tree so that a test may spoil it.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let dest = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).unwrap();
        }
    }
}

fn files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every file of a tree replaced in turn by garbage: discovery returns a
/// topology (no file here is essential), never panics, and warns naming
/// the file when the garbage cannot be used.
#[test]
fn garbage_in_any_file_never_panics() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/snc2-cxl");
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&src, tmp.path());
    let mut all = Vec::new();
    files(tmp.path(), &mut all);
    // Cache files of CPUs 1-7 are copies of CPU 0's: spoil CPU 0's only.
    all.retain(|p| {
        let s = p.to_string_lossy();
        !s.contains("/cache/") || s.contains("/cpu0/")
    });
    let root = SysRoot::new(tmp.path()).unwrap();
    let garbage = [
        "",
        "\0\0",
        "-1\n",
        "99999999999999999999999\n",
        "x y\n1:2\n",
        "0-4294967295\n",
        "\u{feff}10",
    ];
    let mut warned = 0;
    for f in &all {
        let original = std::fs::read(f).unwrap();
        for g in garbage {
            std::fs::write(f, g).unwrap();
            let t = Topology::discover(&root).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(!t.numa_mode.reason.is_empty());
            if t.warnings.iter().any(|w| w.path.as_deref() == f.to_str()) {
                warned += 1;
            }
        }
        std::fs::write(f, original).unwrap();
    }
    // Some garbage must be noticed (malformed files are warnings, not silence).
    assert!(warned > 0);
    assert!(Topology::discover(&root).unwrap().warnings.is_empty());
}

#[test]
fn offline_node_zero_keeps_the_online_nodes_matrix() {
    let t = Topology::discover(&data("offline-node0")).unwrap();
    assert_eq!(t.node_ids().to_list(), "1-2");
    assert_eq!(t.distance(1, 1), Some(10), "node 1's self distance, read at index 1");
    assert_eq!(t.distance(1, 2), Some(31));
    assert_eq!(t.distance(2, 1), Some(31));
    assert_eq!(t.distance(2, 2), Some(10));
    assert!(t.warnings.iter().all(|w| !w.contains("distance")), "{:?}", t.warnings);
    let d: Vec<u32> = t.distance_tiers.iter().map(|x| x.distance).collect();
    assert_eq!(d, vec![10, 31]);
    assert_eq!(t.distance_tiers[1].example, topo::NodePair { from: 1, to: 2 });
}

/// Node kinds from DAX devices and CXL regions, each with the
/// evidence; odd files are warnings, never a failure.
#[test]
fn dax_devices_and_cxl_regions_give_node_kinds_with_evidence() {
    use topo::memkind::MemoryKind;
    let t = Topology::discover(&data("cxl-dax")).unwrap();
    let dax: Vec<String> = t
        .dax_devices
        .iter()
        .map(|x| format!("{} {:?} {:?} {:?}", x.name, x.target_node, x.driver, x.provider))
        .collect();
    assert_eq!(
        dax,
        vec![
            r#"dax0.0 Some(1) Some("kmem") Some("cxl")"#,
            r#"dax1.0 Some(2) Some("kmem") Some("hmem")"#,
            r#"dax2.0 Some(3) Some("kmem") Some("pmem")"#,
            r#"dax3.0 None None Some("hmem")"#,
            r#"dax4.0 None None Some("hmem")"#,
        ]
    );
    assert_eq!(t.dax_devices[0].region.as_deref(), Some("region0"));
    assert_eq!(t.dax_devices[0].resource, Some(0x4000_0000));
    assert_eq!(t.dax_devices[0].size_bytes, Some(4 << 30));
    let r0 = &t.cxl_regions[0];
    assert_eq!(
        (r0.name.as_str(), r0.mode.as_deref(), r0.size_bytes, r0.interleave_ways),
        ("region0", Some("ram"), Some(4 << 30), Some(2))
    );
    assert_eq!(r0.targets, vec!["decoder2.0", "decoder3.0"]);
    assert_eq!(r0.dax_devices, vec!["dax0.0"]);
    // Node 1 from dax0.0; the range's memory block 4 says node 1 too.
    assert_eq!(r0.nodes.to_list(), "1");
    // region1 has no DAX device: its memory block (24) says node 4.
    assert_eq!(t.cxl_regions[1].nodes.to_list(), "4");
    assert_eq!(t.cxl_regions[2].size_bytes, None);
    assert!(t.cxl_regions[2].targets.is_empty());

    let kinds: Vec<(u32, MemoryKind)> = t.memory_kinds.iter().map(|k| (k.node, k.kind)).collect();
    assert_eq!(
        kinds,
        vec![
            (0, MemoryKind::Dram),
            (1, MemoryKind::Cxl),
            (2, MemoryKind::CxlLike),
            (3, MemoryKind::PmemAsRam),
            (4, MemoryKind::Cxl),
        ]
    );
    let ev = |n: usize| t.memory_kinds[n].evidence.as_str();
    assert!(ev(1).contains("dax0.0 target_node=1 (kmem, cxl)"), "{}", ev(1));
    assert!(ev(1).contains("region0 mode=ram size 4 GiB ways 2 targets decoder2.0,decoder3.0"));
    assert!(
        ev(2).contains("dax1.0 target_node=2 (kmem, hmem)") && ev(2).contains("onlined by kmem")
    );
    assert!(ev(3).contains("dax2.0 target_node=3 (kmem, pmem)"), "{}", ev(3));
    assert!(ev(4).contains("region1 mode=ram size 256 MiB"), "{}", ev(4));

    let w = t.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>().join("\n");
    assert!(w.contains("dax3.0/target_node: expected a number, found 'two'"), "{w}");
    assert!(w.contains("region2/size: expected a number, found 'huge'"), "{w}");
    assert!(w.contains("region2/mode: refusing to read it: a directory"), "{w}");
    assert_eq!(t.cxl_regions[2].mode, None);
    assert_eq!(t.warnings.len(), 3, "{w}");
    // Each names its file as a path of its own (JSON `path`), with what
    // was assumed, like every other discovery warning.
    for x in &t.warnings {
        let path = x.path.as_deref().unwrap_or_else(|| panic!("no path: {x}"));
        assert!(path.contains("/sys/bus/"), "{x}");
        assert!(x.assumed.is_some(), "{x}");
    }
}

/// A topology stored before DAX/CXL were read has none: kinds fall back
/// to CPUs, HMAT and tiers.
#[test]
fn topologies_stored_without_dax_fields_still_load() {
    let t = Topology::discover(&data("cxl-dax")).unwrap();
    let mut v = serde_json::to_value(&t).unwrap();
    for f in ["dax_devices", "cxl_regions", "memory_kinds"] {
        v.as_object_mut().unwrap().remove(f);
    }
    let old: Topology = serde_json::from_value(v).unwrap();
    assert!(old.dax_devices.is_empty() && old.memory_kinds.is_empty());
    let (k, _) = topo::memkind::memory_kind(&old, &old.nodes[1]);
    assert_eq!(k, topo::memkind::MemoryKind::MemoryOnly);
}
