//! The exact answer (whole stdout and exit status, with `--json` and
//! without) of the commands that need no measurement: `topo` on a tree
//! (and with `--from-run`), `audit` on a tree, `import`, `list` and
//! `export --format parquet --json` on a store of hand-made runs, and
//! `advise interleave --restore` on a hand-made weight folder. Each stdout
//! is compared with its golden file under tests/golden/answer_pins, the
//! test's temporary folder written `{DIR}`; `NUMAPROBE_BLESS=1` rewrites
//! them (only for a deliberate change of an answer). stderr is never
//! compared whole: the machine's memory warning can join it.

#[path = "support/hand_made.rs"]
mod hand_made;
#[path = "support/tiered.rs"]
mod tiered;
#[path = "support/weights.rs"]
mod weights;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hand_made::Made;

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").env_remove("COLUMNS").arg("--db").arg(db);
    c
}

fn tree(crate_dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(crate_dir).join("tests/data").join(name)
}

/// Runs `c`, checks its exit status is `code` and compares its stdout
/// (`dir` written `{DIR}`) with the golden file `name`.
fn pin(c: &mut Command, code: i32, dir: &Path, name: &str) {
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(code), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    // The temporary folder as `{DIR}`, this crate's folder (trees are
    // named under it) as `{CRATE}`: the goldens hold neither checkout's
    // path.
    let got = String::from_utf8(out.stdout)
        .unwrap()
        .replace(dir.to_str().unwrap(), "{DIR}")
        .replace(env!("CARGO_MANIFEST_DIR"), "{CRATE}");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/answer_pins");
    let path = golden.join(name);
    if std::env::var_os("NUMAPROBE_BLESS").is_some() {
        std::fs::create_dir_all(&golden).unwrap();
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(want == got, "{name} differs from its golden file:\n--- want\n{want}\n--- got\n{got}");
}

/// A run labelled `tiered` with `figures` on the snc2-cxl tree's topology
/// (as `topo --json` writes it), imported into `db`.
fn import_tiered(d: &Path, db: &Path, figures: &tiered::Figures) {
    let topo = np(db).args(["topo", "--json", "--root"]).arg(tree("topo", "snc2-cxl")).output();
    let topo = topo.unwrap();
    assert!(topo.status.success(), "{}", String::from_utf8_lossy(&topo.stderr));
    let (head, tail) = tiered::export_parts("tiered", figures);
    let file = d.join("run.json");
    std::fs::write(&file, format!("{head}{}{tail}", String::from_utf8(topo.stdout).unwrap()))
        .unwrap();
    np(db).arg("import").arg(&file).assert().success();
}

#[test]
fn topo_of_a_tree_and_beside_a_saved_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let db = d.join("results.db");
    let root = tree("topo", "snc2-cxl");
    pin(np(&db).arg("topo").arg("--root").arg(&root), 0, d, "topo.txt");
    pin(np(&db).args(["topo", "--json", "--root"]).arg(&root), 0, d, "topo.json");
    let figures = tiered::Figures {
        bw_gbs: [((0, 0), 100.0), ((0, 4), 30.0), ((1, 4), 12.0)].into(),
        lat_ns: [((0, 4), 260.0), ((1, 4), 420.0)].into(),
    };
    import_tiered(d, &db, &figures);
    let from_run = |json: bool| {
        let mut c = np(&db);
        c.args(["topo", "--from-run", "tiered", "--root"]).arg(&root);
        if json {
            c.arg("--json");
        }
        c
    };
    pin(&mut from_run(false), 0, d, "topo-from-run.txt");
    pin(&mut from_run(true), 0, d, "topo-from-run.json");
}

#[test]
fn audit_of_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("results.db"));
    let root = tree("audit", "untuned");
    pin(np(&db).arg("audit").arg("--root").arg(&root), 0, d, "audit.txt");
    pin(np(&db).args(["audit", "--all", "--root"]).arg(&root), 0, d, "audit-all.txt");
    pin(np(&db).args(["audit", "--json", "--root"]).arg(&root), 0, d, "audit.json");
    let failing = ["audit", "--json", "--fail-on", "warn", "--root"];
    pin(np(&db).args(failing).arg(&root), 1, d, "audit-fail-on.json");
}

/// Two hand-made runs of two hosts, as `import` reads them.
fn export_file(d: &Path) -> PathBuf {
    let made = |n, host, label, gbs| {
        hand_made::run(&Made {
            n,
            host,
            label,
            machine: n,
            config: ("c1", "madvise"),
            status: "complete",
            gbs,
            lat_ns: 90.0,
        })
    };
    let file = d.join("runs.json");
    let runs = vec![made(1, "alpha", "first", 8.0), made(2, "beta", "second", 9.5)];
    std::fs::write(&file, hand_made::export(runs)).unwrap();
    file
}

#[test]
fn import_list_and_export_of_a_hand_made_store() {
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("results.db"));
    let file = export_file(d);
    pin(np(&db).args(["import", "--json"]).arg(&file), 0, d, "import.json");
    pin(np(&db).arg("import").arg(&file), 0, d, "import-again.txt");
    let other = d.join("other.db");
    pin(np(&other).arg("import").arg(&file), 0, d, "import.txt");
    pin(np(&db).args(["import", "--json"]).arg(&file), 0, d, "import-again.json");
    let missing = d.join("missing.json");
    pin(np(&db).args(["import", "--json"]).arg(&file).arg(&missing), 1, d, "import-skipped.json");
    pin(np(&db).arg("list"), 0, d, "list.txt");
    pin(np(&db).args(["list", "--json"]), 0, d, "list.json");
    pin(np(&d.join("none.db")).args(["list", "--json"]), 1, d, "list-missing.json");
    #[cfg(feature = "parquet")]
    pin(
        np(&db)
            .args(["export", "--all", "--format", "parquet", "--json", "-o"])
            .arg(d.join("f.parquet")),
        0,
        d,
        "export-parquet.json",
    );
}

/// The weight folder of Linux 6.16 (nodes 0-4 at 1, auto on), the
/// weights of a saved run applied to it with a backup: (root, backup).
fn applied(d: &Path, db: &Path) -> (PathBuf, PathBuf) {
    let figures = tiered::Figures {
        bw_gbs: [((0, 0), 300.0), ((0, 4), 100.0), ((1, 0), 150.0), ((1, 4), 100.0)].into(),
        lat_ns: [((0, 0), 90.0), ((0, 4), 400.0)].into(),
    };
    import_tiered(d, db, &figures);
    let root = weights::weight_tree(d);
    let backup = d.join("backup.json");
    np(db)
        .args(["advise", "interleave", "--from-run", "tiered", "--apply", "--backup"])
        .arg(&backup)
        .arg("--sysfs-root")
        .arg(&root)
        .assert()
        .success();
    (root, backup)
}

#[test]
fn advise_restore_as_text_json_and_failing() {
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("results.db"));
    let (root, backup) = applied(d, &db);
    let restore = |json: bool| {
        let mut c = np(&db);
        c.args(["advise", "interleave", "--restore"]).arg(&backup).arg("--sysfs-root").arg(&root);
        if json {
            c.arg("--json");
        }
        c
    };
    pin(&mut restore(false), 0, d, "restore.txt");
    pin(&mut restore(true), 0, d, "restore.json");
    let f = root.join("sys/kernel/mm/mempolicy/weighted_interleave/node4");
    std::fs::remove_file(&f).unwrap();
    std::fs::create_dir(&f).unwrap();
    pin(&mut restore(false), 1, d, "restore-failed.txt");
    pin(&mut restore(true), 1, d, "restore-failed.json");
}

/// `fleet --json` (its figures' ages follow the clock, so no golden): the
/// same bytes on stdout as in `-o FILE.json` but for the clock's, pretty JSON beginning with
/// its version and ending with a line end.
#[test]
fn fleet_document_on_stdout_and_in_a_file_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (d, db) = (dir.path(), dir.path().join("results.db"));
    np(&db).arg("import").arg(export_file(d)).assert().success();
    let out = np(&db).args(["fleet", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let file = d.join("fleet.json");
    np(&db).args(["fleet", "-o"]).arg(&file).assert().success();
    let text = String::from_utf8(out.stdout).unwrap();
    // The clock's lines (`now`, each host's `age_s`) differ between them.
    let timeless = |t: &str| {
        let kept = t.lines().filter(|l| !l.contains("\"now\": ") && !l.contains("\"age_s\": "));
        kept.map(|l| format!("{l}\n")).collect::<String>()
    };
    assert_eq!(timeless(&std::fs::read_to_string(&file).unwrap()), timeless(&text));
    assert_eq!(text.matches("\"age_s\": ").count(), 2, "{text}");
    assert!(text.starts_with("{\n  \"schema_version\": 2,\n"), "{text}");
    assert!(text.ends_with("\n}\n") && !text.ends_with("\n}\n\n"), "{text}");
}
