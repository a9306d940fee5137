//! "Degrade, don't abort", through the binary: `audit` on a tree where a
//! file discovery reads and files the audit reads itself are spoiled
//! finishes (docs/audit.md), names the discovery file in `warnings` and
//! gives an `unknown` finding naming each audit file, rather than stopping
//! at the discovery error.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

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

#[test]
fn audit_of_a_spoiled_tree_warns_and_gives_unknown_findings_naming_the_files() {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/data/untuned");
    copy(&src, tmp.path());
    let p = |rel: &str| tmp.path().join(rel);
    let hp = "sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages";
    std::fs::write(p(hp), "zz\n").unwrap();
    std::fs::write(p("proc/sys/kernel/numa_balancing"), "\u{1}\u{2}garbage\n").unwrap();
    std::fs::remove_file(p("proc/sys/vm/swappiness")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", p("proc/sys/vm/swappiness")).unwrap();

    let db = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", db.path().join("none.db"))
        .args(["audit", "--json", "--no-evidence", "--profile", "database", "--root"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let named = |v: &Value, rel: &str| v.to_string().contains(&p(rel).display().to_string());
    let w = r["warnings"].as_array().unwrap();
    assert!(w.iter().any(|w| named(&w["path"], hp) && w["assumed"] == "0 pages"), "{w:?}");
    for (id, rel) in [
        ("kernel.numa_balancing", "proc/sys/kernel/numa_balancing"),
        ("kernel.swappiness", "proc/sys/vm/swappiness"),
    ] {
        let f = r["findings"].as_array().unwrap().iter().find(|f| f["id"] == id).unwrap();
        assert_eq!(f["severity"], "unknown", "{f}");
        assert!(named(&f["found"], rel), "{f}");
    }
}
