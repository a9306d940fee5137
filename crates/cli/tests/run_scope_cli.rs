//! `numaprobe run --dry-run --root DIR`: the package-scope steps
//! (`bw-package`, `bw-cross-package`, `lat-package`) `run` plans on
//! machines of two packages, from sysfs trees (the synthetic ones of
//! crates/topo/tests/data, and with the feature `fixtures` the real
//! captures of ../shared/fixtures), in text and in `--json`; each step
//! the machine cannot run is left out with its reason.

use std::path::{Path, PathBuf};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

#[cfg(feature = "fixtures")]
#[path = "../../topo/tests/support/captures.rs"]
#[allow(dead_code)]
mod captures;

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data").join(name)
}

/// `numaprobe [--json] run --quick --dry-run --root DIR ARGS`: its exit
/// code, stdout and stderr (a private database that must stay unmade).
fn dry_run(root: &Path, json: bool, args: &[&str]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut c = std::process::Command::cargo_bin("numaprobe").unwrap();
    c.arg("--db").arg(dir.path().join("results.db"));
    c.env("NUMAPROBE_LOCK", dir.path().join("measure.lock"));
    if json {
        c.arg("--json");
    }
    c.args(["run", "--quick", "--dry-run", "--root"]).arg(root).args(args);
    let out = c.output().unwrap();
    assert!(!dir.path().join("results.db").exists(), "a dry run creates no database");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn plan(root: &Path, args: &[&str]) -> Value {
    let (code, out, err) = dry_run(root, true, args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `(step, measures)` of the plan's package-scope steps.
fn scope_steps(v: &Value) -> Vec<(String, String)> {
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let n = s["step"].as_str().unwrap();
            ["bw package", "bw cross-package", "lat package"].contains(&n)
        })
        .map(|s| (s["step"].as_str().unwrap().into(), s["measures"].as_str().unwrap().into()))
        .collect()
}

/// `(step, reason)` of the package-scope steps the plan leaves out.
fn scope_skipped(v: &Value) -> Vec<(String, String)> {
    v["skipped"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|s| s["step"].as_str().unwrap().contains("package"))
        .map(|s| (s["step"].as_str().unwrap().into(), s["reason"].as_str().unwrap().into()))
        .collect()
}

/// SNC2 on two sockets with a CXL node (node 4): each package's CPUs at
/// once on its own two nodes, then on the other package's; latency from
/// a CPU of each package; the CXL node is in no package's memory.
#[test]
fn two_sockets_in_snc2_plan_every_package_scope_step() {
    let v = plan(&tree("snc2-cxl"), &[]);
    let steps = scope_steps(&v);
    let names: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names,
        ["bw package", "bw package", "bw cross-package", "bw cross-package", "lat package"],
        "{v:#}"
    );
    assert_eq!(
        steps[0].1,
        "package 0's CPUs 0-3 at once, triad, its own memory bound per node on nodes 0-1 at \
         once, then interleaved over nodes 0-1"
    );
    assert_eq!(
        steps[3].1,
        "package 1's CPUs 4-7 at once, triad, memory interleaved over package 0's nodes 0-1"
    );
    assert!(steps.iter().all(|s| !s.1.contains('4') || s.1.contains("4-7")), "{steps:?}");
    assert!(scope_skipped(&v).is_empty(), "{v:#}");
    // the text plan names the same steps
    let (code, text, err) = dry_run(&tree("snc2-cxl"), false, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(text.contains("bw cross-package  package 0's CPUs 0-3 at once"), "{text}");
    assert!(text.contains("lat package       a CPU of each package (0, 1)"), "{text}");
}

/// NPS4-like: four nodes of each package measured at once.
#[test]
fn nps4_plans_each_package_over_its_four_nodes() {
    let v = plan(&tree("epyc-nps4"), &[]);
    let steps = scope_steps(&v);
    assert_eq!(steps.len(), 5, "{v:#}");
    assert!(steps[0].1.contains("bound per node on nodes 0-3 at once"), "{steps:?}");
    assert!(steps[1].1.contains("bound per node on nodes 4-7 at once"), "{steps:?}");
}

/// NUMA off on two sockets: each package on the memory the OS gives, said
/// so; the cross-package figures left out with why.
#[test]
fn numa_off_plans_each_package_on_the_memory_the_os_gives() {
    let v = plan(&tree("two-socket-numa-off"), &[]);
    let steps = scope_steps(&v);
    let names: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["bw package", "bw package", "lat package"], "{v:#}");
    assert!(steps[0].1.contains("on the memory the OS gives (NUMA off"), "{steps:?}");
    let skipped = scope_skipped(&v);
    let names: Vec<&str> = skipped.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["bw-cross-package", "bw-cross-package", "lat-package", "lat-package"]);
    assert!(skipped.iter().all(|s| s.1.starts_with("NUMA off: node(s) 0 hold")), "{skipped:?}");
}

/// `--only/--skip` take the new names; `--root` plans only.
#[test]
fn the_package_steps_are_selected_by_name_and_root_needs_dry_run() {
    let v = plan(&tree("snc2-cxl"), &["--only", "bw-cross-package,lat-package"]);
    let steps: Vec<&str> =
        v["steps"].as_array().unwrap().iter().map(|s| s["step"].as_str().unwrap()).collect();
    assert_eq!(steps, ["bw cross-package", "bw cross-package", "lat package"]);
    let v = plan(&tree("snc2-cxl"), &["--skip", "bw-package,bw-cross-package,lat-package"]);
    assert!(scope_steps(&v).is_empty(), "{v:#}");
    // --root without --dry-run: a usage error, nothing measured
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::cargo_bin("numaprobe")
        .unwrap()
        .arg("--db")
        .arg(dir.path().join("results.db"))
        .args(["run", "--quick", "--root"])
        .arg(tree("snc2-cxl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--dry-run"));
    let (code, _, err) = dry_run(&tree("no-such-tree"), false, &[]);
    assert_eq!(code, Some(2), "{err}");
}

/// The real captures: a Xeon Gold 6230 x2 in SNC2 (memorysidecaches:
/// package 0 holds nodes 0 and 2, package 1 nodes 1 and 3, even and odd
/// CPUs) and a two-socket machine with NUMA off in its firmware
/// (8em64t-2s2ca2c).
#[cfg(feature = "fixtures")]
#[test]
fn real_two_socket_captures_plan_their_package_steps() {
    let snc2 = plan(&captures::unpack("memorysidecaches"), &[]);
    let steps = scope_steps(&snc2);
    assert_eq!(steps.len(), 5, "{snc2:#}");
    assert!(steps[0].1.contains("CPUs 0,2,4,"), "{steps:?}");
    assert!(steps[0].1.contains("bound per node on nodes 0,2 at once"), "{steps:?}");
    assert!(steps[2].1.contains("interleaved over package 1's nodes 1,3"), "{steps:?}");
    let off = plan(&captures::unpack("8em64t-2s2ca2c"), &[]);
    let steps = scope_steps(&off);
    let names: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(names, ["bw package", "bw package", "lat package"], "{off:#}");
    assert!(steps.iter().all(|s| s.1.contains("the memory the OS gives")), "{steps:?}");
    assert!(!scope_skipped(&off).is_empty());
}
