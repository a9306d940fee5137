//! Every command's `--json` carries `schema_version` as an integer. The
//! commands are read from the binary's own `--help` (clap's one
//! definition), subcommands included, so a new command without a case
//! here fails this test instead of being forgotten. Each command runs on
//! the real binary with small inputs: a database holding the synthetic
//! fixture's runs and a hand-made tiered run, tiny measurements on this
//! machine, a hand-made weight directory for `advise interleave --restore`.
//!
//! Two kinds of command are held to another rule, named below: those that
//! print no JSON refuse `--json` (exit 2, nothing on stdout), and `export`
//! prints the export file format, versioned by its own `version` field
//! (docs/store.md), which `import` reads back.

#[path = "support/gpu.rs"]
mod gpu_support;
#[path = "support/tiered.rs"]
mod tiered;
#[path = "support/weights.rs"]
mod weights;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// Commands that print no JSON (a report, a script, a manual page).
const NO_JSON: [&str; 3] = ["report", "completions", "man"];

/// The export file format, versioned by `version`.
const EXPORT: &str = "export";

/// Small and fast repetitions for `lat`.
const LAT_QUICK: [&str; 4] = ["--samples", "3", "--sample-ms", "2"];

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn np(&self) -> Command {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env_remove("NUMAPROBE_DB")
            .env("NUMAPROBE_LOCK", self.path("measure.lock"))
            // `gpu` against the driver library's double (gpu_cli.rs).
            .env("NUMAPROBE_CUDA_LIBRARY", gpu_support::double())
            .env("NUMAPROBE_GPU_HELPER", gpu_support::helper())
            .env("CUDA_DOUBLE", "devices=2")
            .arg("--db")
            .arg(self.path("results.db"));
        c
    }

    fn ok(&self, args: &[&str]) -> Vec<u8> {
        let out = self.np().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }
}

fn snc2_cxl() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../topo/tests/data/snc2-cxl")
}

/// A database with the synthetic fixture's three runs (ids 1-3) and the
/// tiered run (id 4, label `tiered`), and a weight directory of Linux 6.16.
fn env() -> Env {
    let env = Env { dir: tempfile::tempdir().unwrap() };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../report/tests/fixtures/synthetic-export.json");
    env.ok(&["import", "-q", fixture.to_str().unwrap()]);
    let topo = env.ok(&["topo", "--json", "--root", snc2_cxl().to_str().unwrap()]);
    let figures = tiered::Figures {
        bw_gbs: [((0, 0), 300.0), ((0, 4), 100.0), ((1, 0), 150.0), ((1, 4), 100.0)].into(),
        lat_ns: [((0, 0), 90.0), ((0, 4), 400.0)].into(),
    };
    let (head, tail) = tiered::export_parts("tiered", &figures);
    let run = env.path("tiered.json");
    std::fs::write(&run, format!("{head}{}{tail}", String::from_utf8(topo).unwrap())).unwrap();
    env.ok(&["import", "-q", run.to_str().unwrap()]);
    weights::weight_tree(env.dir.path());
    env
}

/// The command paths of `numaprobe` (`advise interleave` for a command
/// with subcommands), from the `Commands:` section of each `--help`.
fn commands(prefix: &[String]) -> Vec<Vec<String>> {
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .args(prefix)
        .arg("--help")
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(out.status.success(), "{prefix:?} --help");
    let help = String::from_utf8(out.stdout).unwrap();
    let Some((_, section)) = help.split_once("\nCommands:\n") else { return Vec::new() };
    let mut paths = Vec::new();
    for line in section.lines().take_while(|l| !l.trim().is_empty()) {
        // A command's line is indented by two spaces; wrapped text by more.
        let Some(rest) = line.strip_prefix("  ").filter(|r| !r.starts_with(' ')) else { continue };
        let name = rest.split_whitespace().next().unwrap().to_string();
        if name == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(name);
        match commands(&path) {
            sub if sub.is_empty() => paths.push(path),
            sub => paths.extend(sub),
        }
    }
    paths
}

/// The arguments each command runs with (one or more invocations), after
/// `--json --quiet`.
fn cases(env: &Env) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let root = snc2_cxl();
    let root = root.to_str().unwrap();
    let sysroot = env.path("sysroot");
    let sysroot = sysroot.to_str().unwrap();
    let backup = env.path("weights-backup.json");
    let backup = backup.to_str().unwrap();
    let fixture = env.path("tiered.json");
    let lat = |mode: &[&str]| -> Vec<String> {
        ["lat"].iter().chain(mode).chain(&LAT_QUICK).map(|x| x.to_string()).collect()
    };
    BTreeMap::from([
        (
            "topo",
            vec![
                s(&["topo", "--root", root]),
                s(&["topo", "--root", root, "--from-run", "tiered"]),
            ],
        ),
        ("place", vec![s(&["place", "--size", "1M"])]),
        (
            "bw",
            vec![s(&[
                "bw",
                "--size",
                "1M",
                "--kernel",
                "triad",
                "--threads",
                "1",
                "--budget",
                "0.05",
            ])],
        ),
        (
            "lat",
            vec![
                lat(&["--size", "1M"]),
                lat(&["--matrix", "--size", "1M"]),
                lat(&["--sweep", "--size", "256K"]),
                lat(&["--per-cpu", "--size", "1M", "--max-cpus", "1"]),
                lat(&["--loaded", "--size", "1M", "--mix", "read", "--delays", "1000"]),
            ],
        ),
        ("audit", vec![s(&["audit"])]),
        ("exec", vec![s(&["exec", "--no-save", "-p", "default", "-r", "1", "--", "true"])]),
        (
            "run",
            vec![
                s(&["run", "--quick", "--dry-run"]),
                s(&["run", "--quick", "--only", "lat-matrix"]),
            ],
        ),
        (
            "advise interleave",
            vec![
                s(&["advise", "interleave", "--from-run", "tiered"]),
                s(&[
                    "advise",
                    "interleave",
                    "--from-run",
                    "tiered",
                    "--apply",
                    "--backup",
                    backup,
                    "--sysfs-root",
                    sysroot,
                ]),
                s(&["advise", "interleave", "--restore", backup, "--sysfs-root", sysroot]),
            ],
        ),
        (
            "scan",
            vec![s(&[
                "scan",
                "--mem-node",
                "0",
                "--chunk",
                "4M",
                "--size",
                "8M",
                "--reps",
                "2",
                "--pages",
                "nothp",
            ])],
        ),
        (
            "gpu",
            vec![
                s(&["gpu", "--probe"]),
                s(&["gpu", "--sizes", "64K", "--reps", "1", "--directions", "h2d"]),
            ],
        ),
        ("list", vec![s(&["list"])]),
        ("show", vec![s(&["show", "latest"]), s(&["show", "tiered"])]),
        ("export", vec![s(&["export", "1", "tiered"])]),
        ("import", vec![s(&["import", fixture.to_str().unwrap()])]),
        ("compare", vec![s(&["compare", "2", "3", "--baseline", "1"])]),
        // The dry run: every check, nothing changed (the study itself
        // changes THP: the guest suite runs it).
        (
            "study",
            vec![s(&[
                "study",
                "--vary",
                "thp_enabled=madvise,always",
                "--dry-run",
                "--",
                "--quick",
            ])],
        ),
        ("report", vec![s(&["report", "latest"])]),
        ("fleet", vec![s(&["fleet"])]),
        ("completions", vec![s(&["completions", "bash"])]),
        ("man", vec![s(&["man"])]),
    ])
}

/// Why `doc` is not a versioned document (`None`: it is): an object with
/// an integer `schema_version`, or a non-empty array of them.
fn unversioned(doc: &Value) -> Option<String> {
    let one = |v: &Value| match v.get("schema_version") {
        Some(n) if n.is_u64() => None,
        Some(other) => Some(format!("schema_version is {other}, not an integer")),
        None => Some("no schema_version".to_string()),
    };
    match doc {
        Value::Object(_) => one(doc),
        Value::Array(a) if a.is_empty() => Some("an empty array shows nothing".into()),
        Value::Array(a) => a.iter().find_map(|v| one(v).map(|why| format!("an element: {why}"))),
        _ => Some("neither an object nor an array".into()),
    }
}

#[test]
fn every_commands_json_carries_an_integer_schema_version() {
    let env = env();
    let cases = cases(&env);
    let found = commands(&[]);
    let names: Vec<String> = found.iter().map(|p| p.join(" ")).collect();
    assert!(names.contains(&"advise interleave".to_string()), "subcommands are found: {names:?}");
    assert!(names.len() >= 18, "every command is found: {names:?}");
    let mut failures = Vec::new();
    for name in &names {
        let Some(runs) = cases.get(name.as_str()) else {
            failures.push(format!("`{name}` has no --json case in tests/json_cli.rs: add one"));
            continue;
        };
        for args in runs {
            let out = env.np().args(["--json", "--quiet"]).args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            if NO_JSON.contains(&name.as_str()) {
                if out.status.code() != Some(2) || !out.stdout.is_empty() {
                    failures.push(format!("{args:?} prints no JSON, so --json must be refused with exit 2 and nothing on stdout: {:?} {stderr}", out.status.code()));
                }
                continue;
            }
            if !out.status.success() {
                failures.push(format!("{args:?} failed: {stderr}"));
                continue;
            }
            let doc: Value = match serde_json::from_slice(&out.stdout) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{args:?}: stdout is not JSON ({e})"));
                    continue;
                }
            };
            let why = if name == EXPORT {
                (doc["format"] != "numaprobe-export" || !doc["version"].is_u64())
                    .then(|| "not an export document with an integer version".to_string())
            } else {
                unversioned(&doc)
            };
            if let Some(why) = why {
                failures.push(format!("{args:?}: {why}"));
            }
        }
    }
    for k in cases.keys().filter(|k| !names.iter().any(|n| n == *k)) {
        failures.push(format!("a case for `{k}`, which is no command"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn an_unversioned_document_is_told_apart() {
    let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
    assert_eq!(unversioned(&v(r#"{"schema_version": 1, "x": 2}"#)), None);
    assert_eq!(unversioned(&v(r#"[{"schema_version": 2}, {"schema_version": 1}]"#)), None);
    assert!(unversioned(&v(r#"{"x": 2}"#)).is_some());
    assert!(unversioned(&v(r#"{"schema_version": "1"}"#)).is_some());
    assert!(unversioned(&v(r#"{"schema_version": 1.5}"#)).is_some());
    assert!(unversioned(&v(r#"[{"schema_version": 1}, {}]"#)).is_some());
    assert!(unversioned(&v("[]")).is_some());
    assert!(unversioned(&v("3")).is_some());
}
