//! `numaprobe topo` end to end: this machine (text and JSON, checked
//! against what sysfs says), the project's hand-made trees, and bad input
//! (missing root, not a sysfs root, malformed files): one-line errors,
//! exit 2 for usage errors and 1 for failures, never a panic.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::str::contains;
use serde_json::Value;

#[path = "support/tree.rs"]
mod tree;

fn topo() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.arg("topo");
    c
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data").join(name)
}

fn json_of(args: &[&str]) -> Value {
    let out = topo().args(args).arg("--json").output().unwrap();
    assert!(out.status.success(), "topo {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Parses a cpulist such as `0-3,8` (the test's own reading, independent
/// of the topo crate).
fn count_list(s: &str) -> usize {
    s.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

fn assert_one_line_error(stderr: &[u8]) -> String {
    let s = String::from_utf8_lossy(stderr).to_string();
    assert_eq!(s.trim_end().lines().count(), 1, "one line expected: {s}");
    assert!(!s.contains("panicked"), "{s}");
    s
}

#[test]
fn json_on_this_machine_matches_sysfs() {
    let v = json_of(&[]);
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["live"], true);
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    assert_eq!(v["cpus"].as_array().unwrap().len(), count_list(&online));
    assert_eq!(v["online_cpus"].as_str().unwrap(), online.trim());
    let node_dirs = std::fs::read_dir("/sys/devices/system/node")
        .map(|rd| {
            rd.filter_map(|e| {
                let n = e.ok()?.file_name().to_string_lossy().into_owned();
                n.strip_prefix("node")?.parse::<u32>().ok()
            })
            .count()
        })
        .unwrap_or(0);
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), node_dirs);
    // The fields docs/topo promises for every node.
    for n in nodes {
        for k in ["id", "cpus", "mem_total_bytes", "mem_free_bytes", "distances", "kind", "hmat"] {
            assert!(n.get(k).is_some(), "node lacks {k}: {n}");
        }
        assert!(n["cpus"].is_string());
        assert_eq!(n["distances"].as_array().unwrap().len(), nodes.len());
        let kind = n["kind"].as_str().unwrap();
        assert!(["cpu+memory", "memory-only", "cpu-only", "neither"].contains(&kind), "{kind}");
        let id = n["id"].as_u64().unwrap();
        let meminfo =
            std::fs::read_to_string(format!("/sys/devices/system/node/node{id}/meminfo")).unwrap();
        let kib: u64 = meminfo
            .lines()
            .find(|l| l.contains("MemTotal:"))
            .and_then(|l| l.split_whitespace().rev().nth(1))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(n["mem_total_bytes"].as_u64().unwrap(), kib * 1024);
    }
    for p in v["packages"].as_array().unwrap() {
        assert!(p["id"].is_u64() && p["cpus"].is_string(), "{p}");
    }
    for c in v["cpus"].as_array().unwrap() {
        for k in ["id", "package", "core", "node"] {
            assert!(c.get(k).is_some(), "cpu lacks {k}: {c}");
        }
    }
    for k in ["kind", "nodes_per_package", "reason"] {
        assert!(v["numa_mode"].get(k).is_some(), "numa_mode lacks {k}");
    }
    assert!(!v["numa_mode"]["reason"].as_str().unwrap().is_empty());
    assert!(v["devices"].is_array() && v["warnings"].is_array());
    assert!(v["cgroup"]["affinity"].is_string(), "live run reads sched_getaffinity");
    assert!(v["cmdline"]["raw"].is_string());
}

#[test]
fn text_on_this_machine_has_every_section() {
    let out = topo().output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8(out.stdout).unwrap();
    for section in
        ["NUMA mode:", "Packages", "Caches", "CPU and memory limits", "sched_getaffinity"]
    {
        assert!(s.contains(section), "missing {section}:\n{s}");
    }
    // Either a node table with a distance matrix, or a plain statement.
    assert!(
        (s.contains("NUMA nodes (GiB") && s.contains("Node distances"))
            || s.contains("NUMA nodes: none reported"),
        "{s}"
    );
}

#[test]
fn hand_made_snc2_capture_in_text() {
    let root = data("snc2-cxl");
    let out = topo().arg("--root").arg(&root).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8(out.stdout).unwrap();
    assert!(s.contains("NUMA mode: nodes-per-package (SNC2)"), "{s}");
    assert!(s.contains("memory-only"), "{s}");
    // Distance rows like numactl --hardware.
    assert!(s.contains("node   0   1   2   3   4\n  0:  10  11  21  21  30\n"), "{s}");
    assert!(s.contains("  4:  30  30  40  40  10\n"), "{s}");
    // The NIC's node is unknown (-1), said plainly.
    let nic = s.lines().find(|l| l.contains("0000:31:00.0")).expect("NIC row");
    assert!(nic.contains("unknown"), "{nic}");
    assert!(
        s.contains("cgroup (cgroup2 /user.slice/job.scope): CPUs 0-3, memory nodes 0-1"),
        "{s}"
    );
    assert!(s.contains("numa_balancing=disable"), "{s}");
    assert!(s.contains("HMAT"), "{s}");
    assert!(s.contains("tier 22: nodes 4"), "{s}");
    assert!(!s.contains("sched_getaffinity"), "not live: {s}");
}

#[test]
fn hand_made_numa_off_capture_in_json() {
    let root = data("two-socket-numa-off");
    let v = json_of(&["--root", root.to_str().unwrap()]);
    assert_eq!(v["live"], false);
    assert_eq!(v["numa_mode"]["kind"], "disabled-by-kernel");
    assert_eq!(v["packages"].as_array().unwrap().len(), 2);
    assert_eq!(v["packages"][1]["cpus"], "4-7");
    assert_eq!(v["nodes"][0]["cpus"], "0-7");
    assert_eq!(v["nodes"][0]["kind"], "cpu+memory");
    assert!(v["cgroup"]["affinity"].is_null());
}

/// Copies the tree `name` into a new folder (to add files to it).
fn copy_tree(name: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    tree::copy(&data(name), d.path());
    d
}

/// The `numa=off` tree with the firmware's ACPI tables added: text and
/// JSON show the SRAT's domains and the SLIT, and the mode's reason says
/// the firmware describes what the kernel hides.
#[test]
fn the_firmware_srat_and_slit_are_shown() {
    use topo::synthetic::acpi::{apic, memory, slit, srat};
    let d = copy_tree("two-socket-numa-off");
    let tables = d.path().join("sys/firmware/acpi/tables");
    std::fs::create_dir_all(&tables).unwrap();
    let gib = 1u64 << 30;
    let structures: Vec<Vec<u8>> = (0..8u32)
        .map(|c| apic(c / 4, c as u8, true))
        .chain([memory(0, 0, 8 * gib, 1), memory(1, 8 * gib, 8 * gib, 1)])
        .collect();
    std::fs::write(tables.join("SRAT"), srat(3, &structures)).unwrap();
    std::fs::write(tables.join("SLIT"), slit(&[&[10, 21], &[21, 10]])).unwrap();
    std::fs::write(tables.join("APIC"), b"APIC").unwrap();
    let root = d.path().to_str().unwrap();
    let out = topo().args(["--root", root]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("  firmware NUMA (ACPI SRAT): 2 proximity domains: 0 (4 CPUs, 8 GiB), 1 (4 CPUs, 8 GiB)\n"),
        "{text}"
    );
    assert!(text.contains("  firmware distances (ACPI SLIT): 10 21 / 21 10\n"), "{text}");
    assert!(text.contains("the firmware describes 2 proximity domain(s)"), "{text}");
    let v = json_of(&["--root", root]);
    assert_eq!(v["firmware_numa"]["srat"]["status"], "found");
    assert_eq!(v["firmware_numa"]["srat"]["value"]["domains"][1]["cpus"], 4);
    assert_eq!(
        v["firmware_numa"]["slit"]["value"]["distances"],
        serde_json::json!([[10, 21], [21, 10]])
    );
    // Without the tables folder (the tree as it is): unknown in JSON, no
    // line in the text of a capture.
    let plain = data("two-socket-numa-off");
    let v = json_of(&["--root", plain.to_str().unwrap()]);
    assert_eq!(v["firmware_numa"]["srat"]["status"], "unknown");
    let out = topo().args(["--root", plain.to_str().unwrap()]).output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("firmware NUMA"));
}

#[test]
fn missing_root_is_a_usage_error_naming_it() {
    let out = topo().args(["--root", "/no/such/numaprobe-root"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let e = assert_one_line_error(&out.stderr);
    assert!(e.contains("/no/such/numaprobe-root"), "{e}");
    // Also with --json: errors never go to stdout.
    topo()
        .args(["--root", "/no/such/numaprobe-root", "--json"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(contains("/no/such/numaprobe-root"));
}

#[test]
fn a_file_as_root_is_a_usage_error() {
    let f = tempfile::NamedTempFile::new().unwrap();
    topo().arg("--root").arg(f.path()).assert().code(2).stderr(contains("no such directory"));
}

#[test]
fn a_folder_without_sysfs_fails_naming_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = topo().arg("--root").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = assert_one_line_error(&out.stderr);
    assert!(e.contains("sys/devices/system/cpu"), "{e}");
}

/// The JSON warning about the file ending in `rel`; fails when none.
fn json_warning(out: &std::process::Output, rel: &str) -> Value {
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = v["warnings"].as_array().unwrap();
    w.iter()
        .find(|w| w["path"].as_str().is_some_and(|p| p.ends_with(rel)))
        .unwrap_or_else(|| panic!("no warning naming {rel}: {w:?}"))
        .clone()
}

/// A malformed non-essential file is a warning naming it and what was
/// assumed, after the tables (and on stderr), not a failure.
#[test]
fn malformed_distance_is_a_warning_naming_the_file() {
    let out = topo().arg("--root").arg(data("bad-distance")).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let (tables, warnings) = text.split_once("\nWarnings\n").expect("a Warnings section");
    assert!(tables.contains("NUMA nodes") && tables.contains("Packages"), "{tables}");
    assert!(
        warnings.contains("node0/distance: ") && warnings.contains("assumed no distance row"),
        "{warnings}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("node0/distance"));
    let out = topo().arg("--root").arg(data("bad-distance")).arg("--json").output().unwrap();
    let w = json_warning(&out, "node0/distance");
    assert!(w["problem"].as_str().unwrap().contains("twenty"), "{w}");
    assert_eq!(w["assumed"], "no distance row for node 0");
}

/// `/dev/zero` as a node's `distance` is refused, and a warning names it
/// (read whole, it would grow `topo` until killed).
#[test]
fn a_device_in_the_tree_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("sys/devices/system/cpu/online", "0\n");
    w("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
    w("sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
    w("sys/devices/system/node/node0/cpulist", "0\n");
    w(
        "sys/devices/system/node/node0/meminfo",
        "Node 0 MemTotal: 1024 kB\nNode 0 MemFree: 512 kB\n",
    );
    std::os::unix::fs::symlink(
        "/dev/zero",
        dir.path().join("sys/devices/system/node/node0/distance"),
    )
    .unwrap();
    let out = topo().arg("--root").arg(dir.path()).arg("--json").output().unwrap();
    let w = json_warning(&out, "node0/distance");
    assert!(w["problem"].as_str().unwrap().contains("a character device"), "{w}");
}

/// A capture built here with a malformed meminfo and a cpulist holding a
/// newline inside a token: warnings naming each (they were exit 1).
#[test]
fn malformed_capture_made_here_warns_naming_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w("sys/devices/system/cpu/online", "0\n");
    w("sys/devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
    w("sys/devices/system/cpu/cpu0/topology/core_id", "0\n");
    w("sys/devices/system/node/node0/cpulist", "0\n");
    w("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: many kB\n");
    let out = topo().arg("--root").arg(dir.path()).arg("--json").output().unwrap();
    let warning = json_warning(&out, "node0/meminfo");
    assert!(warning["problem"].as_str().unwrap().contains("many"), "{warning}");
    assert_eq!(warning["assumed"], "node 0 memory taken as 0");

    w("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: 1024 kB\n");
    w("sys/devices/system/node/node0/cpulist", "0,1\n2x\n");
    let out = topo().arg("--root").arg(dir.path()).arg("--json").output().unwrap();
    assert_eq!(json_warning(&out, "node0/cpulist")["assumed"], "the cpumap");

    // Fixed, it works; with --quiet nothing goes to stderr.
    w("sys/devices/system/node/node0/cpulist", "0\n");
    topo().arg("--root").arg(dir.path()).assert().success().stdout(contains("single-node"));
    topo().arg("--root").arg(dir.path()).arg("--quiet").assert().success().stderr("");
}

/// The text layout, pinned (update with `INSTA_UPDATE=always` after a
/// deliberate change). The root is given relative to crates/cli, where
/// cargo runs tests, so the snapshot does not depend on the checkout path.
#[test]
fn text_layout_snapshot_of_the_snc2_tree() {
    let out = topo()
        .args(["--root", "../topo/tests/data/snc2-cxl", "--quiet", "--table", "box"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

/// NPS4 with one L3 per node: the label is left null, both candidates are
/// named with what tells them apart, in JSON and in text; the tiers follow
/// the quadrant SLIT.
#[test]
fn nps4_like_epyc_tree_is_ambiguous_in_json_and_text() {
    let root = data("epyc-nps4");
    let root = root.to_str().unwrap();
    let v = json_of(&["--root", root]);
    let m = &v["numa_mode"];
    assert_eq!(m["kind"], "nodes-per-package");
    assert_eq!(m["nodes_per_package"], 4);
    assert!(m["label"].is_null(), "{m}");
    assert_eq!(m["confidence"], "ambiguous");
    let labels: Vec<&str> = m["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["NPS4", "L3-as-NUMA"]);
    assert!(m["alternatives"][1]["tell"].as_str().unwrap().contains("LLC as NUMA node"));
    let tiers: Vec<(u64, u64)> = v["distance_tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["distance"].as_u64().unwrap(), t["groups"].as_array().unwrap().len() as u64))
        .collect();
    assert_eq!(tiers, [(10, 8), (11, 4), (12, 2), (32, 1)]);
    assert_eq!(v["distance_tiers"][3]["example"]["to"], 4);
    assert_eq!(v["packages_unknown"], false);

    let out = topo().args(["--root", root, "--quiet"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("NUMA mode: nodes-per-package (NPS4 or L3-as-NUMA), ambiguous"),
        "{text}"
    );
    assert!(text.contains("candidates, and what tells them apart:"), "{text}");
    assert!(text.contains("  - NPS4: the BIOS shows"), "{text}");
    assert!(text.contains("12: 16 pair(s), e.g. 0->2; groups 0-3 | 4-7"), "{text}");
}
