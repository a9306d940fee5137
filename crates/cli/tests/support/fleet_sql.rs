//! Shared by the suites that run deploy/sql on the Parquet export with a
//! real engine (fleet_sql and fleet_sql_scale with DuckDB, fleet_spark
//! with Spark): a synthetic fleet made from a real-shaped export
//! (scripts/fleet-synth.py --varied) imported into a database, its
//! `fleet --json`, its Parquet export, the SQL's verdicts
//! (scripts/fleet-sql.py) and the comparison of the two, host by host.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The numaprobe under test: `NUMAPROBE_BIN` (a release build, for the
/// large fleets), else this build's. `NUMAPROBE_BIN` must be built from
/// this build's code: its `--version` names this build's commit, or one
/// whose sources (`crates/*/src`, build scripts, manifests, Cargo.lock)
/// git finds identical to this checkout's.
pub fn bin() -> PathBuf {
    static BIN: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| {
        let debug = PathBuf::from(env!("CARGO_BIN_EXE_numaprobe"));
        let Some(b) = std::env::var_os("NUMAPROBE_BIN").map(PathBuf::from) else {
            return debug;
        };
        let version = |p: &Path| run_ok(Command::new(p).arg("--version"));
        let (theirs, ours) = (version(&b), version(&debug));
        if theirs != ours {
            let commit = theirs.split(['(', ' ']).find(|w| w.len() == 12).unwrap_or_default();
            let same = Command::new("git")
                .args(["diff", "--quiet", commit, "--"])
                .args(["crates/*/src", "crates/*/build.rs", "crates/*/Cargo.toml"])
                .args(["Cargo.toml", "Cargo.lock"])
                .current_dir(repo())
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                !commit.is_empty() && same,
                "NUMAPROBE_BIN={} ({}) is not built from this checkout's code ({})",
                b.display(),
                theirs.trim(),
                ours.trim()
            );
        }
        b
    })
    .clone()
}

/// The Python with DuckDB and pyspark (scripts/duckdb-setup.sh,
/// scripts/spark-setup.sh).
pub fn python() -> PathBuf {
    std::env::var_os("NUMAPROBE_SQL_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/numaprobe-fleet-py/bin/python3"))
}

pub fn np(db: &Path) -> Command {
    let mut c = Command::new(bin());
    c.arg("--db").arg(db);
    c
}

/// Runs `c` to its end: its stdout, or a panic with what it said.
pub fn run_ok(c: &mut Command) -> String {
    let out = c.output().unwrap_or_else(|e| panic!("{c:?}: {e}"));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{c:?}: {:?}\n{said}", out.status);
    String::from_utf8(out.stdout).unwrap()
}

/// The time a step took, printed (the suites print their figures).
pub fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    eprintln!("fleet-sql: {what}: {:.1} s", t.elapsed().as_secs_f64());
    v
}

const GNU_TIME: &str = "/usr/bin/time";

/// `c` run under GNU time when it is installed (wall time, CPU time of
/// the command and its children, peak RSS, printed as `what`'s figures
/// by [`said_time`]); as it is otherwise. `out` is where time writes.
fn under_time(c: &Command, out: &Path) -> Command {
    let mut t = if Path::new(GNU_TIME).is_file() {
        let mut t = Command::new(GNU_TIME);
        t.args(["-f", "%e %U %S %M", "-o"]).arg(out).arg(c.get_program());
        t
    } else {
        Command::new(c.get_program())
    };
    t.args(c.get_args());
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    t
}

/// Prints what GNU time wrote to `out` for `what` (nothing without it).
fn said_time(what: &str, out: &Path) {
    let Ok(text) = std::fs::read_to_string(out) else { return };
    let v: Vec<f64> = text.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    if let [wall, user, sys, rss] = v[..] {
        eprintln!(
            "fleet-sql: {what}: {wall:.2} s wall, {:.2} s CPU (user + system), {:.0} MiB peak RSS (load {})",
            user + sys,
            rss / 1024.0,
            std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').take(3).collect::<Vec<_>>().join(" ")
        );
    }
    let _ = std::fs::remove_file(out);
}

/// [`run_ok`] of `c`, measured ([`under_time`]) and its figures printed.
pub fn measured_ok(what: &str, c: &mut Command) -> String {
    let out = std::env::temp_dir().join(format!("fleet-sql-time-{}", std::process::id()));
    let text = timed(what, || run_ok(&mut under_time(c, &out)));
    said_time(what, &out);
    text
}

/// A synthetic fleet in a database.
pub struct Fleet {
    pub dir: PathBuf,
    pub db: PathBuf,
    pub unmeasured: PathBuf,
    /// The figures table of `export --format parquet --all`.
    pub parquet: PathBuf,
}

/// Writes `hosts` varied hosts (scripts/fleet-synth.py --varied, from the
/// synthetic fixture's baseline run, `per_file` runs an export, their ages
/// from now), imports them into `d/fleet.db` and exports every run as
/// Parquet. `fleet` runs later than the hosts were written: the SQL is
/// given `fleet --json`'s `now` ([`now_arg`]).
pub fn make(d: &Path, hosts: usize, per_file: usize) -> Fleet {
    let exports = d.join("exports");
    let unmeasured = d.join("unmeasured.tsv");
    measured_ok(
        &format!("{hosts} hosts written"),
        Command::new("python3")
            .arg(repo().join("scripts/fleet-synth.py"))
            .args(["--varied", "--compact", "--hosts", &hosts.to_string()])
            .args(["--per-file", &per_file.to_string(), "--out"])
            .arg(&exports)
            .arg("--unmeasured-out")
            .arg(&unmeasured),
    );
    let db = d.join("fleet.db");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&exports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for (i, chunk) in files.chunks(500).enumerate() {
        measured_ok(
            &format!("import ({} files from {})", chunk.len(), i * 500),
            np(&db).args(["--quiet", "import"]).args(chunk),
        );
    }
    std::fs::remove_dir_all(&exports).unwrap();
    let f = Fleet { dir: d.to_path_buf(), db, unmeasured, parquet: d.join("fleet.parquet") };
    export_parquet(&f, hosts);
    f
}

/// `export --format parquet --all` of `f`'s database to `f.parquet`.
pub fn export_parquet(f: &Fleet, hosts: usize) {
    measured_ok(
        &format!("export --format parquet --all ({hosts} hosts)"),
        np(&f.db).args(["--quiet", "export", "--format", "parquet", "--all", "-o"]).arg(&f.parquet),
    );
}

/// Adds `copies` copies of every host of `f`'s database inside it
/// (scripts/fleet-copy.py: each a distinct host, half of them in peer
/// groups of their own), then exports the grown fleet as Parquet again.
pub fn grow(f: &Fleet, copies: usize, hosts: usize) {
    let said = measured_ok(
        &format!("{copies} copies of each host ({hosts} hosts)"),
        Command::new("python3")
            .arg(repo().join("scripts/fleet-copy.py"))
            .args(["--copies", &copies.to_string()])
            .arg(&f.db),
    );
    eprintln!("fleet-sql: grown: {}", said.trim());
    export_parquet(f, hosts);
}

/// `fleet --json` with `args`, its numbers exact ([`exact`]).
pub fn fleet_json(f: &Fleet, args: &[&str]) -> Value {
    let text = measured_ok("fleet --json", np(&f.db).args(["--json", "fleet"]).args(args));
    exact(&text)
}

/// A JSON document whose fractional numbers are exact: serde_json's parser
/// (without its `float_roundtrip` feature, which numaprobe does not use)
/// may read a 17-digit number one unit in the last place off, so the
/// document is read by Python's (correctly rounded) parser and each such
/// number handed over as its shortest text (`repr`), which [`num`] reads
/// with Rust's own (correctly rounded) parser. Integers stay numbers.
pub fn exact(text: &str) -> Value {
    use std::io::Write;
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import json, sys\n\
             def x(v):\n\
             \x20   if isinstance(v, float): return repr(v)\n\
             \x20   if isinstance(v, list): return [x(i) for i in v]\n\
             \x20   if isinstance(v, dict): return {k: x(i) for k, i in v.items()}\n\
             \x20   return v\n\
             json.dump(x(json.load(sys.stdin)), sys.stdout)\n",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = text.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "python3 could not read the document");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A number of an [`exact`] document: a fractional one read from its text
/// by Rust's parser, an integer as it is; `None` for null.
pub fn num(v: &Value) -> Option<f64> {
    match v {
        Value::String(s) => Some(s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))),
        Value::Number(n) => n.as_f64(),
        Value::Null => None,
        other => panic!("not a number: {other}"),
    }
}

/// Unix ms of an RFC 3339 time as `fleet --json` writes it
/// (`2026-11-09T11:00:00.000Z`).
pub fn unix_ms(t: &str) -> i64 {
    let out = run_ok(Command::new("python3").arg("-c").arg(format!(
        "import datetime; print(int(datetime.datetime.fromisoformat({:?}.replace('Z', '+00:00')).timestamp() * 1000))",
        t
    )));
    out.trim().parse().unwrap()
}

/// scripts/fleet-sql.py with `engine` on `parquet` and `args`: the
/// verdicts, or what it said on failure. It stops itself at `limit` (and
/// Spark with it); past a minute more, its whole process group (the
/// script, Spark's launcher and JVM) is killed.
pub fn sql(
    engine: &str,
    parquet: &Path,
    args: &[String],
    limit: Duration,
) -> Result<Value, String> {
    use std::os::unix::process::CommandExt;
    let timing = std::env::temp_dir().join(format!("fleet-sql-time-{}-sql", std::process::id()));
    let mut script = Command::new(python());
    script
        .arg(repo().join("scripts/fleet-sql.py"))
        .args(["--engine", engine, "--timeout"])
        .arg(limit.as_secs().to_string())
        .args(args)
        .arg(parquet);
    let child = under_time(&script, &timing)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}: run scripts/duckdb-setup.sh (and scripts/spark-setup.sh for Spark) first",
                python().display()
            )
        });
    let pgid = child.id() as i32;
    let start = Instant::now();
    // Its output is read as it comes (a full pipe would stop it).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let grace = limit + Duration::from_secs(60);
    let out = match rx.recv_timeout(grace) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the process group this test made for the
            // script; it takes no pointers.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            panic!("scripts/fleet-sql.py --engine {engine} ran past {} s: killed", grace.as_secs());
        }
    };
    eprintln!(
        "fleet-sql: {engine} verdicts: {:.1} s (scripts/fleet-sql.py, engine start included)",
        start.elapsed().as_secs_f64()
    );
    said_time(&format!("{engine} verdicts"), &timing);
    if out.status.success() {
        Ok(exact(&String::from_utf8(out.stdout).unwrap()))
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The arguments that give the SQL `fleet`'s time.
pub fn now_arg(fleet: &Value) -> Vec<String> {
    vec!["--now-ms".into(), unix_ms(fleet["now"].as_str().unwrap()).to_string()]
}

fn s(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::String(x) => x.clone(),
        other => other.to_string(),
    }
}

/// A host's key in both documents: its group, its machine (identity, else
/// name) and its run.
type HostKey = (String, String, String, String);

fn machine(id: &Value, host: &Value) -> String {
    match id.as_str() {
        Some(i) => format!("id:{i}"),
        None => format!("host:{}", s(host)),
    }
}

/// What a compared host's verdict is, as both documents give it.
#[derive(Debug, PartialEq)]
struct Verdict {
    host: String,
    age_s: Option<f64>,
    stale: bool,
    future: bool,
    healthy: bool,
    outlier: bool,
    peers_missing: bool,
    duplicate_hostname: bool,
    /// metric -> (value, median, deviation %)
    flags: BTreeMap<String, (f64, f64, f64)>,
    drift: BTreeSet<String>,
    passed_over: BTreeSet<String>,
    also_named: BTreeSet<String>,
}

fn f(v: &Value) -> f64 {
    num(v).unwrap_or_else(|| panic!("not a number: {v}"))
}

/// What was compared, for the suites' messages.
#[derive(Debug, Default)]
pub struct Compared {
    pub hosts: usize,
    pub flags: usize,
    pub drift: usize,
    pub stale: usize,
    pub future: usize,
    pub incomplete: usize,
    pub unmeasured: usize,
    pub skipped: usize,
    pub peer_stats: usize,
    pub passed_over: usize,
}

/// Drifting settings by (model, subgroup, setting): the majority value
/// (none on a tie) and each drifting value's host count.
type DriftSettings = BTreeMap<(String, String, String), (Option<String>, BTreeMap<String, u64>)>;

/// Asserts that the SQL's verdicts (`q`, scripts/fleet-sql.py's JSON) are
/// `fleet --json`'s (`j`) for every host: the hosts compared and their
/// runs, each host's outliers (metric, value, median, deviation, to the
/// bit), drift, staleness, future dates, health and peers; every group's
/// medians and MADs (to the bit) and drifting settings with their counts
/// and majority; the incomplete, not measured and skipped hosts; the
/// counts. Panics naming the first difference of each kind.
pub fn assert_same(j: &Value, q: &Value) -> Compared {
    let mut c = Compared::default();
    let grouped = j["group_by"] != "model";
    let mut want: BTreeMap<HostKey, Verdict> = BTreeMap::new();
    let mut want_stats: BTreeMap<(String, String, String), (f64, f64, u64)> = BTreeMap::new();
    let mut want_drift = DriftSettings::new();
    for g in j["groups"].as_array().unwrap() {
        let model = s(&g["model"]);
        let sub = if grouped { s(&g["subgroup"]) } else { String::new() };
        for m in g["medians"].as_array().unwrap() {
            want_stats.insert(
                (model.clone(), sub.clone(), s(&m["metric"])),
                (f(&m["median"]), f(&m["mad"]), m["hosts"].as_u64().unwrap()),
            );
        }
        for d in g["drift_settings"].as_array().unwrap() {
            let values = d["values"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
                .collect();
            want_drift.insert(
                (model.clone(), sub.clone(), s(&d["setting"])),
                (d["majority"].as_str().map(str::to_string), values),
            );
        }
        for h in g["hosts"].as_array().unwrap() {
            let key = (
                model.clone(),
                sub.clone(),
                machine(&h["machine_id"], &h["host"]),
                s(&h["run_uuid"]),
            );
            let flags = h["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    (s(&x["metric"]), (f(&x["value"]), f(&x["median"]), f(&x["deviation_pct"])))
                })
                .collect();
            let v = Verdict {
                host: s(&h["host"]),
                age_s: num(&h["age_s"]),
                stale: h["stale"].as_bool().unwrap(),
                future: h["future"].as_bool().unwrap(),
                healthy: h["healthy"].as_bool().unwrap(),
                outlier: h["outlier"].as_bool().unwrap(),
                peers_missing: g["peers_missing"].as_bool().unwrap(),
                duplicate_hostname: h["duplicate_hostname"].as_bool().unwrap(),
                flags,
                drift: h["drift"].as_array().unwrap().iter().map(s).collect(),
                passed_over: h["passed_over"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| s(&p["run_uuid"]))
                    .collect(),
                also_named: h["also_named"].as_array().unwrap().iter().map(s).collect(),
            };
            assert!(want.insert(key.clone(), v).is_none(), "{key:?} twice in fleet --json");
        }
    }
    // The SQL's, keyed the same way.
    let mut got: BTreeMap<HostKey, Verdict> = BTreeMap::new();
    let key_of = |x: &Value| -> HostKey {
        (
            s(&x["model"]),
            s(&x["subgroup"]),
            machine(&x["machine_id"], &x["host"]),
            s(&x["run_uuid"]),
        )
    };
    let mut flags: BTreeMap<HostKey, BTreeMap<String, (f64, f64, f64)>> = BTreeMap::new();
    for o in q["outliers"].as_array().unwrap() {
        flags
            .entry(key_of(o))
            .or_default()
            .insert(s(&o["metric_id"]), (f(&o["value"]), f(&o["median"]), f(&o["deviation_pct"])));
    }
    let mut drift: BTreeMap<HostKey, BTreeSet<String>> = BTreeMap::new();
    for d in q["drift"].as_array().unwrap() {
        drift.entry(key_of(d)).or_default().insert(s(&d["setting"]));
    }
    let mut passed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in q["passed_over"].as_array().unwrap() {
        passed.entry(s(&p["compared_uuid"])).or_default().insert(s(&p["run_uuid"]));
        c.passed_over += 1;
    }
    let mut also: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for a in q["also_named"].as_array().unwrap() {
        also.entry(machine(&a["machine_id"], &a["host"])).or_default().insert(s(&a["also_named"]));
    }
    for h in q["hosts"].as_array().unwrap() {
        let key = key_of(h);
        let v = Verdict {
            host: s(&h["host"]),
            age_s: num(&h["age_s"]),
            stale: h["stale"].as_bool().unwrap(),
            future: h["future"].as_bool().unwrap(),
            healthy: h["healthy"].as_bool().unwrap(),
            outlier: h["outlier"].as_bool().unwrap(),
            peers_missing: h["peers_missing"].as_bool().unwrap(),
            duplicate_hostname: h["duplicate_hostname"].as_bool().unwrap(),
            flags: flags.remove(&key).unwrap_or_default(),
            drift: drift.remove(&key).unwrap_or_default(),
            passed_over: passed.get(&key.3).cloned().unwrap_or_default(),
            also_named: also.get(&key.2).cloned().unwrap_or_default(),
        };
        assert!(got.insert(key.clone(), v).is_none(), "{key:?} twice in the SQL's fleet_hosts");
    }
    assert!(flags.is_empty(), "outliers of hosts fleet_hosts lacks: {flags:?}");
    assert!(drift.is_empty(), "drift of hosts fleet_hosts lacks: {drift:?}");
    let only_fleet: Vec<&HostKey> = want.keys().filter(|k| !got.contains_key(*k)).collect();
    let only_sql: Vec<&HostKey> = got.keys().filter(|k| !want.contains_key(*k)).collect();
    assert!(
        only_fleet.is_empty() && only_sql.is_empty(),
        "hosts compared differ: only in fleet --json {only_fleet:?}; only in the SQL {only_sql:?}"
    );
    for (k, w) in &want {
        assert_eq!(&got[k], w, "host {k:?}: the SQL (left) and fleet --json (right) differ");
        c.flags += w.flags.len();
        c.drift += w.drift.len();
        c.stale += usize::from(w.stale);
        c.future += usize::from(w.future);
    }
    c.hosts = want.len();
    // Each group's medians and MADs.
    let mut got_stats = BTreeMap::new();
    for p in q["peer_stats"].as_array().unwrap() {
        got_stats.insert(
            (s(&p["model"]), s(&p["subgroup"]), s(&p["metric_id"])),
            (f(&p["median"]), f(&p["mad"]), p["hosts"].as_u64().unwrap()),
        );
    }
    assert_eq!(
        got_stats, want_stats,
        "peer medians and MADs: the SQL (left), fleet --json (right)"
    );
    c.peer_stats = want_stats.len();
    let mut got_drift = DriftSettings::new();
    for d in q["drift_settings"].as_array().unwrap() {
        let e = got_drift
            .entry((s(&d["model"]), s(&d["subgroup"]), s(&d["setting"])))
            .or_insert_with(|| (d["majority"].as_str().map(str::to_string), BTreeMap::new()));
        e.1.insert(s(&d["value"]), d["hosts"].as_u64().unwrap());
    }
    assert_eq!(got_drift, want_drift, "drifting settings: the SQL (left), fleet --json (right)");
    // The hosts listed, not compared: each entry's fields (`a/b`: field b
    // of object a), sorted.
    let listed = |v: &Value, fields: &[&str]| -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|x| fields.iter().map(|f| s(f.split('/').fold(x, |v, k| &v[k]))).collect())
            .collect();
        out.sort();
        out
    };
    let inc_want = listed(
        &j["incomplete"],
        &["host", "machine_id", "run_uuid", "reason", "last_complete/run_uuid"],
    );
    let inc_got = listed(
        &q["incomplete"],
        &["host", "machine_id", "run_uuid", "reason", "last_complete_uuid"],
    );
    assert_eq!(inc_got, inc_want, "incomplete hosts: the SQL (left), fleet --json (right)");
    c.incomplete = inc_want.len();
    let un_want = listed(&j["unmeasured"], &["host", "machine_id", "error", "last_run/run_uuid"]);
    let un_got = listed(&q["unmeasured"], &["host", "machine_id", "error", "last_run_uuid"]);
    assert_eq!(un_got, un_want, "hosts not measured: the SQL (left), fleet --json (right)");
    c.unmeasured = un_want.len();
    let sk_want = listed(&j["skipped"], &["host", "reason"]);
    let sk_got = listed(&q["skipped"], &["host", "reason"]);
    assert_eq!(sk_got, sk_want, "hosts skipped: the SQL (left), fleet --json (right)");
    c.skipped = sk_want.len();
    let sum = &q["summary"];
    for k in ["hosts", "healthy", "stale", "future", "no_peers"] {
        assert_eq!(sum[k], j[k], "{k}: the SQL's fleet_summary (left), fleet --json (right)");
    }
    c
}
