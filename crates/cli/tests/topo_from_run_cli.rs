//! End to end on the real binary: `topo --from-run
//! REF` shows a saved run's measured figures beside the declared HMAT
//! (ratio and flag, the same comparison as `run` and the report), warns
//! when the run is from another machine, and refuses a bad reference
//! with one line and exit 2; `topo` names each CPU-less node's kind with
//! the DAX/CXL evidence it rests on.

#[path = "support/tiered.rs"]
mod tiered;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

const UUID: &str = "0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a20";
const RUN_FINGERPRINT: &str = "feedc0de00000017";

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data").join(name)
}

/// tests/data/snc2-cxl declares node 4 at 30000 MB/s, 250 ns from
/// initiators 0 and 1 (access0). Measured: 30 GB/s / 260 ns from node 0
/// (within 25%), 12 GB/s / 420 ns from node 1 (off).
fn figures() -> tiered::Figures {
    tiered::Figures {
        bw_gbs: [((0, 0), 100.0), ((0, 4), 30.0), ((1, 4), 12.0)].into(),
        lat_ns: [((0, 4), 260.0), ((1, 4), 420.0)].into(),
    }
}

/// Imports a hand-made run labelled `label` with the snc2-cxl topology,
/// from the machine `fingerprint`, with its own `uuid`.
fn import(db: &Path, dir: &Path, label: &str, fingerprint: &str, uuid: &str) {
    import_tree(db, dir, "snc2-cxl", label, fingerprint, uuid)
}

fn import_tree(db: &Path, dir: &Path, name: &str, label: &str, fingerprint: &str, uuid: &str) {
    let topo = np(db).args(["topo", "--json", "--root"]).arg(tree(name)).output().unwrap();
    assert!(topo.status.success(), "{}", String::from_utf8_lossy(&topo.stderr));
    let (head, tail) = tiered::export_parts(label, &figures());
    let head = head.replace(RUN_FINGERPRINT, fingerprint).replace(UUID, uuid);
    let doc = format!("{head}{}{tail}", String::from_utf8(topo.stdout).unwrap());
    let file = dir.join(format!("{label}.json"));
    std::fs::write(&file, doc).unwrap();
    np(db).arg("import").arg(&file).assert().success();
}

fn topo_from_run(db: &Path, r: &str, json: bool) -> std::process::Output {
    let mut c = np(db);
    c.args(["topo", "--root"]).arg(tree("snc2-cxl")).args(["--from-run", r]);
    if json {
        c.arg("--json");
    }
    c.output().unwrap()
}

#[test]
fn measured_figures_stand_beside_declared_hmat_with_ratio_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, dir.path(), "tiered", RUN_FINGERPRINT, UUID);

    let out = topo_from_run(&db, "tiered", true);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run 1 was measured on another machine (fingerprint feedc0de00000017"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["from_run"];
    assert_eq!(f["run_id"], 1, "{f}");
    assert_eq!(f["label"], "tiered");
    assert_eq!(f["same_machine"], false);
    assert_eq!(f["margin_pct"], 25.0);
    let pairs = f["hmat"].as_array().unwrap();
    assert_eq!(pairs.len(), 2, "{f}");
    let p0 = &pairs[0];
    assert_eq!((p0["initiator"].as_u64(), p0["target"].as_u64()), (Some(0), Some(4)));
    assert_eq!(p0["declared_read_mbs"], 30000);
    assert_eq!(p0["measured_mbs"], 30000.0);
    assert_eq!(p0["bw_ratio"], 1.0);
    assert!((p0["lat_ratio"].as_f64().unwrap() - 1.04).abs() < 1e-9, "{p0}");
    assert_eq!(p0["flagged"], false);
    let p1 = &pairs[1];
    assert_eq!(p1["initiator"], 1);
    assert!((p1["bw_ratio"].as_f64().unwrap() - 0.4).abs() < 1e-9, "{p1}");
    assert!((p1["lat_ratio"].as_f64().unwrap() - 1.68).abs() < 1e-9, "{p1}");
    assert_eq!(p1["flagged"], true);
    // The topology is all still there.
    assert_eq!(v["nodes"].as_array().unwrap().len(), 5);

    // The text form: the same rows as the report's table.
    let out = topo_from_run(&db, "latest", false);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("HMAT declared vs measured by run 1 (2026-11-20T10:00:00Z, tiered)"),
        "{text}"
    );
    assert!(text.contains("1 of 2 pair(s) flagged"), "{text}");
    let row = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let rows: Vec<String> = text.lines().map(row).collect();
    assert!(rows.contains(&"0 -> 4 30000 30000 1.00x 250 260 1.04x ok".to_string()), "{text}");
    assert!(
        rows.contains(&"1 -> 4 30000 12000 0.40x 250 420 1.68x off by >25%".to_string()),
        "{text}"
    );
}

#[test]
fn a_run_of_this_machine_gives_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, dir.path(), "other", RUN_FINGERPRINT, UUID);
    let v: Value = serde_json::from_slice(&topo_from_run(&db, "other", true).stdout).unwrap();
    let me = v["from_run"]["machine_fingerprint"].as_str().unwrap().to_string();
    assert_ne!(me, RUN_FINGERPRINT);
    import(&db, dir.path(), "mine", &me, "5a1e8f3c-7b2d-4c9e-8f10-2d3b4c5d6e7f");
    let out = topo_from_run(&db, "mine", true);
    assert!(out.status.success());
    // Warnings about this machine's state (memory the nodes do not show
    // yet) may come; none about the run.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.lines().all(|l| l.starts_with("numaprobe: warning:")), "{err}");
    assert!(!err.contains("another machine"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["from_run"]["same_machine"], true);
    assert_eq!(v["from_run"]["run_id"], 2);
    // latest~1 is the first run again: the warning comes back.
    let out = topo_from_run(&db, "latest~1", false);
    assert!(String::from_utf8_lossy(&out.stderr).contains("another machine"));
}

#[test]
fn a_bad_reference_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, dir.path(), "tiered", RUN_FINGERPRINT, UUID);
    for r in ["nosuch", "latest~7", "42", "latest~x"] {
        let out = topo_from_run(&db, r, false);
        assert_eq!(out.status.code(), Some(2), "{r}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{r}: {err}");
        assert!(err.contains(&format!("--from-run {r}")), "{r}: {err}");
        assert!(out.stdout.is_empty(), "{r}");
    }
}

#[test]
fn a_machine_without_hmat_says_there_is_nothing_to_compare() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, dir.path(), "tiered", RUN_FINGERPRINT, UUID);
    let out = np(&db)
        .args(["topo", "--root"])
        .arg(tree("cxl-dax"))
        .args(["--from-run", "tiered"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nothing to compare; this machine declares no HMAT"), "{text}");
}

#[test]
fn cpu_less_nodes_name_their_kind_with_dax_and_cxl_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let out = np(&db).args(["topo", "--json", "--root"]).arg(tree("cxl-dax")).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<(u64, String)> = v["memory_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["node"].as_u64().unwrap(), k["kind"].as_str().unwrap().to_string()))
        .collect();
    let want = [(0, "dram"), (1, "cxl"), (2, "cxl-like"), (3, "pmem-as-ram"), (4, "cxl")];
    assert_eq!(kinds, want.map(|(n, k)| (n, k.to_string())).to_vec());
    assert_eq!(v["cxl_regions"][0]["targets"], serde_json::json!(["decoder2.0", "decoder3.0"]));
    assert_eq!(v["dax_devices"][0]["target_node"], 1);

    let out = np(&db).args(["topo", "--root"]).arg(tree("cxl-dax")).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "node 1: kind CXL: CPU-less, dax0.0 target_node=1 (kmem, cxl) 4 GiB, region0 mode=ram"
        ),
        "{text}"
    );
    assert!(text.contains("node 3: kind PMEM-as-RAM"), "{text}");
    assert!(text.contains("memory-only (CXL)"), "{text}");
    // The odd files are warnings; the command still succeeds.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dax3.0/target_node: expected a number, found 'two'"), "{err}");
}

/// The report and `run`'s end summary build their node table from the
/// stored topology: the DAX/CXL evidence travels with the run.
#[test]
fn the_report_names_kinds_with_their_dax_and_cxl_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import_tree(&db, dir.path(), "cxl-dax", "dax", RUN_FINGERPRINT, UUID);
    let out = np(&db).args(["report", "dax"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## Memory tiers and HMAT"), "{md}");
    assert!(
        md.contains(
            "| 1 | CXL | - | 4.0 | - | - | CPU-less, dax0.0 target_node=1 (kmem, cxl) 4 GiB, \
             region0 mode=ram size 4 GiB ways 2 targets decoder2.0,decoder3.0 |"
        ),
        "{md}"
    );
    assert!(md.contains("| 3 | PMEM-as-RAM |"), "{md}");
    assert!(md.contains("| 4 | CXL | - | 0.2 |"), "{md}");
}
