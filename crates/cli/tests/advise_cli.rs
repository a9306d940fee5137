//! `numaprobe advise interleave` end to end on the real binary, from an
//! injected saved run with known bandwidths (300 and 100 GB/s must give
//! 3:1), and `--apply`/`--restore` on a hand-made weight directory
//! (`--sysfs-root`), plus the refusals: not root, no weight files, a run
//! that does not exist, a weight file that cannot be restored. And the
//! report's HMAT section (declared vs measured, flagged) from such a run.

#[path = "support/tiered.rs"]
mod tiered;
#[path = "support/weights.rs"]
mod weights;
use weights::weight_tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn snc2_cxl() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data/snc2-cxl")
}

/// CPU node 0 sees node 0 at 300 GB/s and the CXL node 4 at 100; CPU
/// node 1 sees them at 150 and 100.
fn figures() -> tiered::Figures {
    let bw_gbs: BTreeMap<(u32, u32), f64> =
        [((0, 0), 300.0), ((0, 4), 100.0), ((1, 0), 150.0), ((1, 4), 100.0)].into();
    let lat_ns = [((0, 0), 90.0), ((0, 4), 400.0)].into();
    tiered::Figures { bw_gbs, lat_ns }
}

/// A database holding the injected run, labelled `tiered`.
fn imported() -> (tempfile::TempDir, PathBuf) {
    imported_with(&figures())
}

fn imported_with(f: &tiered::Figures) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let topo = np(&db).args(["topo", "--json", "--root"]).arg(snc2_cxl()).output().unwrap();
    assert!(topo.status.success(), "{}", String::from_utf8_lossy(&topo.stderr));
    let (head, tail) = tiered::export_parts("tiered", f);
    let doc = format!("{head}{}{tail}", String::from_utf8(topo.stdout).unwrap());
    let file = dir.path().join("run.json");
    std::fs::write(&file, doc).unwrap();
    np(&db).arg("import").arg(&file).assert().success();
    (dir, db)
}

fn json_of(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn weight(root: &Path, file: &str) -> String {
    let p = root.join("sys/kernel/mm/mempolicy/weighted_interleave").join(file);
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

#[test]
fn three_hundred_and_one_hundred_gb_s_give_three_to_one() {
    let (_dir, db) = imported();
    let v = json_of(np(&db).args(["advise", "interleave", "--from-run", "tiered", "--json"]));
    assert_eq!(v["cpu_node"], 0, "{v}");
    assert_eq!(v["kernel"], "triad");
    assert_eq!(v["advice"]["weights"], serde_json::json!({"0": 3, "4": 1}), "{v}");
    assert_eq!(v["advice"]["efficiency"], 1.0, "{v}");
    assert_eq!(v["advice"]["expected_gbs"], 400.0, "{v}");
    assert_eq!(v["commands"]["numactl"], "numactl --weighted-interleave=0,4 PROGRAM");
    assert_eq!(
        v["commands"]["sysfs"][0],
        "echo 3 > /sys/kernel/mm/mempolicy/weighted_interleave/node0"
    );
    // CPU node 1 (150 and 100 GB/s) would want 3:2; 3:1 gives it 200 of
    // 250 GB/s in the model: a 20% loss, stated.
    let o = &v["others"][0];
    assert_eq!(o["cpu_node"], 1, "{v}");
    assert_eq!(o["own_weights"], serde_json::json!({"0": 3, "4": 2}), "{v}");
    assert!((o["loss_pct"].as_f64().unwrap() - 20.0).abs() < 1e-6, "{v}");
    assert!(v["notes"].to_string().contains("weights are global"), "{v}");

    // Node 1's view on request; the text form names the weights.
    let v = json_of(np(&db).args([
        "advise",
        "interleave",
        "--from-run",
        "tiered",
        "--cpu-node",
        "1",
        "--json",
    ]));
    assert_eq!(v["advice"]["weights"], serde_json::json!({"0": 3, "4": 2}), "{v}");
    let out = np(&db).args(["advise", "interleave", "--from-run", "tiered"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("Weights 3:1 (nodes 0,4)"), "{text}");
}

#[test]
fn apply_writes_the_weights_and_restore_puts_the_old_ones_back() {
    let (dir, db) = imported();
    let root = weight_tree(dir.path());
    let backup = dir.path().join("backup.json");
    let v = json_of(
        np(&db)
            .args(["advise", "interleave", "--from-run", "tiered", "--apply", "--json"])
            .arg("--backup")
            .arg(&backup)
            .arg("--sysfs-root")
            .arg(&root),
    );
    assert_eq!((weight(&root, "node0"), weight(&root, "node4")), ("3".into(), "1".into()));
    let cmd = v["applied"]["restore_command"].as_str().unwrap();
    assert!(cmd.contains("--restore") && cmd.contains("backup.json"), "{v}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    assert_eq!(saved["previous"]["auto"], true);
    assert_eq!(saved["previous"]["weights"]["0"], 1);
    // The kernel leaves auto mode when a weight is written.
    std::fs::write(root.join("sys/kernel/mm/mempolicy/weighted_interleave/auto"), "false\n")
        .unwrap();
    np(&db)
        .args(["advise", "interleave", "--restore"])
        .arg(&backup)
        .arg("--sysfs-root")
        .arg(&root)
        .assert()
        .success();
    assert_eq!((weight(&root, "node0"), weight(&root, "auto")), ("1".into(), "true".into()));
}

#[test]
fn a_weight_that_cannot_be_restored_is_said_loudly_with_its_value() {
    let (dir, db) = imported();
    let root = weight_tree(dir.path());
    let backup = dir.path().join("backup.json");
    np(&db)
        .args(["advise", "interleave", "--from-run", "tiered", "--apply"])
        .arg("--backup")
        .arg(&backup)
        .arg("--sysfs-root")
        .arg(&root)
        .assert()
        .success();
    let f = root.join("sys/kernel/mm/mempolicy/weighted_interleave/node4");
    std::fs::remove_file(&f).unwrap();
    std::fs::create_dir(&f).unwrap();
    let out = np(&db)
        .args(["advise", "interleave", "--restore"])
        .arg(&backup)
        .arg("--sysfs-root")
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("COULD NOT RESTORE"), "{err}");
    assert!(err.contains("echo 1 >") && err.contains("node4"), "{err}");
    assert_eq!(weight(&root, "node0"), "1", "the others are restored");
}

/// A weights backup whose `auto_file` climbs out of the weight folder.
fn backup_naming(dir: &Path, auto_file: &str) -> PathBuf {
    let doc = serde_json::json!({
        "format": "numaprobe-weights-backup", "saved": "1700000000",
        "previous": {"weights": {"0": 2}, "auto": true, "auto_file": auto_file},
        "applied": {"0": 3}
    });
    let f = dir.join("evil-backup.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    f
}

/// A restore writes nothing unless every file it names is one of the
/// weight files, and says so in one line (exit 2): a backup saying
/// `"auto_file": "../../../../home/victim"` must not truncate the victim.
#[test]
fn a_restore_naming_a_file_outside_the_weights_is_refused_before_any_write() {
    let (dir, db) = imported();
    let root = weight_tree(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    let up = "../".repeat(6); // from sysroot/sys/kernel/mm/mempolicy/weighted_interleave
    for evil in [format!("{up}victim"), victim.display().to_string()] {
        let backup = backup_naming(dir.path(), &evil);
        let out = np(&db)
            .args(["advise", "interleave", "--restore"])
            .arg(&backup)
            .arg("--sysfs-root")
            .arg(&root)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{evil}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "{err}"
        );
        assert!(err.contains("evil-backup.json") && err.contains("auto_file"), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "{evil}");
        assert_eq!(weight(&root, "node0"), "1", "nothing written");
    }
}

/// `--restore /dev/zero` (which would grow without end) and a FIFO (which
/// would hang) are refused at once, in one line, exit 2.
#[test]
fn a_restore_from_a_device_or_a_fifo_is_refused_at_once() {
    let (dir, db) = imported();
    let root = weight_tree(dir.path());
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (file, what) in [(Path::new("/dev/zero"), "character device"), (fifo.as_path(), "FIFO")] {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numaprobe"))
            .env_remove("NUMAPROBE_DB")
            .arg("--db")
            .arg(&db)
            .args(["advise", "interleave", "--restore"])
            .arg(file)
            .arg("--sysfs-root")
            .arg(&root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > until {
                let _ = child.kill();
                panic!("--restore {} still reading after 30 s", file.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", file.display());
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "{err}"
        );
        assert!(err.contains(&*file.to_string_lossy()) && err.contains(what), "{err}");
    }
}

#[test]
fn apply_without_weight_files_or_without_root_writes_nothing() {
    let (dir, db) = imported();
    let bare = dir.path().join("bare");
    std::fs::create_dir_all(bare.join("sys")).unwrap();
    let out = np(&db)
        .args(["advise", "interleave", "--from-run", "tiered", "--apply", "--sysfs-root"])
        .arg(&bare)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("6.9") && err.contains("nothing was written"), "{err}");

    // Not root: refused before anything is read or written.
    let root = weight_tree(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("numaprobe");
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let mut c = if euid == 0 {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(&bin);
        c
    } else {
        Command::new(&bin)
    };
    let out = c
        .args(["advise", "interleave", "--from-run", "tiered", "--apply", "--sysfs-root"])
        .arg(&root)
        .arg("--db")
        .arg(&db)
        .output()
        .expect("setpriv (util-linux)");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("as root") && err.contains("nothing was written"), "{err}");
    assert_eq!(weight(&root, "node0"), "1");
}

#[test]
fn a_run_that_does_not_exist_or_a_cpu_node_without_figures_is_a_usage_error() {
    let (_dir, db) = imported();
    let out = np(&db).args(["advise", "interleave", "--from-run", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let out = np(&db)
        .args(["advise", "interleave", "--from-run", "tiered", "--cpu-node", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cpu-node 3"));
}

#[test]
fn report_shows_hmat_declared_beside_measured_and_flags_what_is_off() {
    // tests/data/snc2-cxl declares node 4 at 30000 MB/s, 250 ns from
    // initiators 0 and 1 (access0).
    let f = tiered::Figures {
        bw_gbs: [((0, 0), 100.0), ((0, 4), 30.0), ((1, 4), 12.0)].into(),
        lat_ns: [((0, 4), 260.0), ((1, 4), 420.0)].into(),
    };
    let (_dir, db) = imported_with(&f);
    let out = np(&db).args(["report", "tiered"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## Memory tiers and HMAT"), "{md}");
    // Within 25%: ok. 12 GB/s against 30000 MB/s and 420 ns against 250: flagged.
    assert!(md.contains("| 0 -> 4 | 30000 | 30000 | 1.00x | 250 | 260 | 1.04x | ok |"), "{md}");
    assert!(
        md.contains("| 1 -> 4 | 30000 | 12000 | 0.40x | 250 | 420 | 1.68x | off by >25% |"),
        "{md}"
    );
    assert!(md.contains("1 of 2 HMAT pair(s) are off"), "{md}");
    // Node kinds: CPU nodes DRAM; node 4 below DRAM's tier.
    assert!(md.contains("| 4 | CXL-like | 22 |"), "{md}");
    assert!(md.contains("| 0 | DRAM | 4 |"), "{md}");
}
