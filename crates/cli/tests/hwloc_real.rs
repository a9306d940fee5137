//! `export --format hwloc` read back by Debian's hwloc (feature
//! `hwloc-tests`, run by `.ci/run` after `scripts/hwloc-setup.sh`
//! installed it): `lstopo --input X --memattrs` shows numaprobe's
//! Bandwidth (MiB/s) and Latency (ns) for every initiator (a CPU node's
//! cpuset) and target (every NUMA node, the CPU-less one too), on the
//! run's own topology and on lstopo's; `hwloc-info --best-memattr` picks
//! the target those figures make best; a firmware value already in
//! lstopo's XML is kept apart as `FirmwareBandwidth`; another machine's
//! XML is refused; and this machine's own `lstopo --of xml` takes a run
//! measured here. The runs are the hand-made `snc2-cxl` runs of
//! `support/distances.rs`; the guest suite exports a real run of the
//! 2-socket guest.

#[path = "support/hwloc.rs"]
mod hwloc_support;
#[path = "support/distances.rs"]
mod support;
#[path = "support/tiered.rs"]
mod tiered;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use support::{figures_with, import, model_gbs, model_ns, np, topology};

/// Fails, saying how to get it, when an hwloc program is missing.
fn require() {
    for p in ["lstopo-no-graphics", "hwloc-info", "hwloc-annotate"] {
        let found = Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success());
        assert!(found, "{p} is missing: run scripts/hwloc-setup.sh (Debian's hwloc package)");
    }
}

use hwloc_support::run as hwloc;

/// GB/s as hwloc's MiB/s, computed here apart from the exporter.
fn mib(gbs: f64) -> u64 {
    (gbs * 1_000_000_000.0 / 1_048_576.0).round() as u64
}

/// The CPU node whose cpuset (2 CPUs each) lstopo prints.
fn node_of_cpuset(set: &str) -> u32 {
    match set {
        "0x00000003" => 0,
        "0x0000000c" => 1,
        "0x00000030" => 2,
        "0x000000c0" => 3,
        s => panic!("an initiator cpuset that is no CPU node: {s}"),
    }
}

/// `lstopo --memattrs -p`'s values of attribute `name` by (CPU node,
/// NUMA node).
fn memattr(listing: &str, name: &str) -> BTreeMap<(u32, u32), u64> {
    hwloc_support::memattr(listing, name, node_of_cpuset)
}

/// Every pair's expected values from the model.
fn expected(
    lat: impl Fn(u32, u32) -> f64,
    gbs: impl Fn(u32, u32) -> f64,
) -> [BTreeMap<(u32, u32), u64>; 2] {
    let pairs: Vec<(u32, u32)> = (0..4).flat_map(|c| (0..5).map(move |m| (c, m))).collect();
    [
        pairs.iter().map(|&(c, m)| ((c, m), mib(gbs(c, m)))).collect(),
        pairs.iter().map(|&(c, m)| ((c, m), lat(c, m).round() as u64)).collect(),
    ]
}

/// From node 0's CPUs, node 1 is measured faster than node 0 itself
/// (120 GB/s, 85 ns): the best target hwloc picks is then numaprobe's.
fn node1_best_gbs(c: u32, m: u32) -> f64 {
    if (c, m) == (0, 1) {
        120.0
    } else {
        model_gbs(c, m)
    }
}

fn node1_best_ns(c: u32, m: u32) -> f64 {
    if (c, m) == (0, 1) {
        85.0
    } else {
        model_ns(c, m)
    }
}

fn best(xml: &Path, attr: &str, pu: &str) -> u32 {
    hwloc_support::best(xml.to_str().unwrap(), attr, pu)
}

fn write_export(db: &Path, args: &[&str], to: &Path) {
    let out = np(db)
        .args(["-q", "export", "--format", "hwloc"])
        .args(args)
        .arg("-o")
        .arg(to)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn lstopo_and_hwloc_info_read_every_pair_of_the_export_on_the_runs_own_topology() {
    require();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(
        &db,
        1,
        "x",
        "a",
        &figures_with(node1_best_ns, node1_best_gbs),
        &topology("snc2-cxl", true),
    );
    let xml = dir.path().join("own.xml");
    write_export(&db, &["x"], &xml);
    let listing =
        hwloc("lstopo-no-graphics", &["--input", xml.to_str().unwrap(), "--memattrs", "-p"]);
    let [bw, lat] = expected(node1_best_ns, node1_best_gbs);
    assert_eq!(memattr(&listing, "Bandwidth"), bw, "{listing}");
    assert_eq!(memattr(&listing, "Latency"), lat, "{listing}");
    // hwloc picks node 1 from node 0's CPUs: numaprobe's figures decide
    assert_eq!(best(&xml, "Bandwidth", "pu:0"), 1);
    assert_eq!(best(&xml, "Latency", "pu:0"), 1);
    // and node 2 (its own) from node 2's
    assert_eq!(best(&xml, "Latency", "pu:4"), 2);
    // the Machine's infos say what numaprobe measured
    let root = hwloc("hwloc-info", &["--input", xml.to_str().unwrap(), "machine:0"]);
    assert!(
        root.contains("info numaprobeMeasured = Bandwidth Latency: measured by numaprobe"),
        "{root}"
    );
    assert!(root.contains("info numaprobeBandwidth = STREAM triad kernel, median"), "{root}");
    // the SLIT as hwloc's NUMALatency distances
    let d = hwloc("lstopo-no-graphics", &["--input", xml.to_str().unwrap(), "--distances"]);
    assert!(d.contains("NUMALatency"), "{d}");
}

#[test]
fn the_export_onto_lstopos_xml_of_the_same_machine_keeps_the_firmwares_values_apart() {
    require();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "x", "a", &support::figures(model_ns), &topology("snc2-cxl", true));
    // lstopo's twin of the snc2-cxl tree: 2 packages of 2 groups of 2
    // cores, a node each, node 4 on the Machine
    let twin = dir.path().join("twin.xml");
    let xml = hwloc(
        "lstopo-no-graphics",
        &["-i", "[numa] pack:2 group:2 [numa] core:2 pu:1", "--of", "xml"],
    );
    std::fs::write(&twin, xml).unwrap();
    // a firmware figure, as hwloc's Linux backend would put it
    let t = twin.to_str().unwrap();
    hwloc("hwloc-annotate", &[t, t, "--", "numa:0", "--", "memattr", "Bandwidth", "pu:0", "12345"]);
    let out = dir.path().join("onto.xml");
    write_export(&db, &["x", "--topology", t], &out);
    let listing =
        hwloc("lstopo-no-graphics", &["--input", out.to_str().unwrap(), "--memattrs", "-p"]);
    let [bw, lat] = expected(model_ns, model_gbs);
    assert_eq!(memattr(&listing, "Bandwidth"), bw, "{listing}");
    assert_eq!(memattr(&listing, "Latency"), lat, "{listing}");
    assert!(listing.contains("name `FirmwareBandwidth' flags 5"), "{listing}");
    assert!(listing.contains("NUMANode P#0 = 12345 from"), "{listing}");
    let root = hwloc("hwloc-info", &["--input", out.to_str().unwrap(), "machine:0"]);
    assert!(root.contains("info numaprobeFirmwareValues = the input's Bandwidth values"), "{root}");
}

#[test]
fn another_machines_lstopo_xml_is_refused_naming_what_differs() {
    require();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "x", "a", &support::figures(model_ns), &topology("snc2-cxl", true));
    let other = dir.path().join("other.xml");
    let xml = hwloc("lstopo-no-graphics", &["-i", "pack:2 [numa] core:2 pu:1", "--of", "xml"]);
    std::fs::write(&other, xml).unwrap();
    let out = np(&db)
        .args(["export", "--format", "hwloc", "x", "--topology"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("describes another machine than run 1"), "{err}");
    assert!(err.contains("4 CPU(s) (0-3) against the run's 8 (0-7)"), "{err}");
    assert!(err.contains("NUMA nodes 0-1 against the run's 0-4"), "{err}");
}

#[test]
fn this_machines_own_lstopo_xml_takes_a_run_measured_here() {
    require();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = np(&db)
        .env("NUMAPROBE_LOCK", dir.path().join("lock"))
        .args([
            "-q",
            "lat",
            "--size",
            "64M",
            "--samples",
            "3",
            "--sample-ms",
            "5",
            "--label",
            "here",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let here = dir.path().join("here.xml");
    std::fs::write(&here, hwloc("lstopo-no-graphics", &["--of", "xml"])).unwrap();
    let out = dir.path().join("out.xml");
    write_export(&db, &["here", "--topology", here.to_str().unwrap()], &out);
    let listing = hwloc("lstopo-no-graphics", &["--input", out.to_str().unwrap(), "--memattrs"]);
    let lat: Vec<&str> = listing
        .lines()
        .skip_while(|l| !l.contains("name `Latency'"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(lat.len(), 1, "one node here, one pair: {listing}");
    assert!(lat[0].trim_start().starts_with("NUMANode L#0 = "), "{listing}");
}
