//! Hand-made runs of the `snc2-cxl` test tree (two packages of two nodes
//! with 2 CPUs each, SLIT 10 / 11 within a package, 21 across, 30 and 40
//! to the CPU-less CXL node 4) whose figures come from a hardware model,
//! imported into a test database: what `distances_cli.rs` and
//! `hwloc_real.rs` compare and export.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

use super::tiered;

pub fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

pub fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data").join(name)
}

/// The hardware model's latency from CPU node `c` to memory node `m`, ns:
/// nodes 0-1 and 2-3 share a package; node 4 is CXL behind package 0.
pub fn model_ns(c: u32, m: u32) -> f64 {
    match (c, m) {
        _ if c == m => 90.0,
        (_, 4) if c < 2 => 270.0,
        (_, 4) => 360.0,
        _ if c / 2 == m / 2 => 99.0,
        _ => 189.0,
    }
}

/// Bandwidth, GB/s: 100 local, 90 in the package, 40 across, 30 to CXL.
pub fn model_gbs(c: u32, m: u32) -> f64 {
    match (c, m) {
        _ if c == m => 100.0,
        (_, 4) => 30.0,
        _ if c / 2 == m / 2 => 90.0,
        _ => 40.0,
    }
}

pub fn figures(lat: impl Fn(u32, u32) -> f64) -> tiered::Figures {
    figures_with(lat, model_gbs)
}

/// Every CPU node (0-3) to every memory node (0-4): latency `lat`, ns,
/// and bandwidth `gbs`, GB/s.
pub fn figures_with(
    lat: impl Fn(u32, u32) -> f64,
    gbs: impl Fn(u32, u32) -> f64,
) -> tiered::Figures {
    let pairs: Vec<(u32, u32)> = (0..4).flat_map(|c| (0..5).map(move |m| (c, m))).collect();
    tiered::Figures {
        bw_gbs: pairs.iter().map(|&(c, m)| ((c, m), gbs(c, m))).collect(),
        lat_ns: pairs.iter().map(|&(c, m)| ((c, m), lat(c, m))).collect(),
    }
}

/// The measurement reverses node 0's order: node 2 (declared 21) at 95
/// ns, node 1 (declared 11) at 112 ns, 18% farther.
pub fn reversed(c: u32, m: u32) -> f64 {
    match (c, m) {
        (0, 1) => 112.0,
        (0, 2) => 95.0,
        _ => model_ns(c, m),
    }
}

/// `topo --json` of a test tree, its SLIT taken out when `slit` is false.
pub fn topology(name: &str, slit: bool) -> String {
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .args(["topo", "--json", "--root"])
        .arg(tree(name))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    if !slit {
        for n in v["nodes"].as_array_mut().unwrap() {
            n["distances"] = Value::Array(vec![]);
        }
        v["distance_tiers"] = Value::Array(vec![]);
    }
    v.to_string()
}

/// Imports a run labelled `label` of host `host` (its own machine
/// fingerprint and UUID from `n`) with `f`'s figures on `topo`.
pub fn import(db: &Path, n: u32, label: &str, host: &str, f: &tiered::Figures, topo: &str) {
    let (head, tail) = tiered::export_parts(label, f);
    let head = head
        .replace("feedc0de00000017", &format!("{:016x}", 0xfeed_0000 + n))
        .replace(
            "0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a20",
            &format!("0d6f2a9e-1c4b-4f7e-9a3d-{n:012}"),
        )
        .replace("\"hostname\":\"tiered\"", &format!("\"hostname\":\"{host}\""));
    let file = db.with_file_name(format!("{label}-{n}.json"));
    std::fs::write(&file, format!("{head}{topo}{tail}")).unwrap();
    np(db).arg("import").arg(&file).assert().success();
}
