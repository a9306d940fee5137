//! The mutation suite: on every real machine's capture in
//! `../shared/fixtures/hwloc-sysfs`, each file that discovery or the audit
//! reads is replaced in turn by an empty file, garbage, its first half, a
//! symbolic link to `/dev/zero`, a directory and a symbolic link to
//! nothing; so are the two essential directories (`cpu`, `node`).
//!
//! For each mutation: no panic, no hang, bounded memory, and either
//! success with a warning naming the path (the topology's `warnings`, or
//! the audit's `unknown` finding / unreadable setting for files only the
//! audit reads) or, for the essential directories only, a one-line error
//! naming the path. A truncated file may still be valid (`64K` -> `64`),
//! so it needs no warning, only a clean finish.
//!
//! Discovery and the audit run in-process (fast); each mutation kind also
//! runs through the binary (`topo --json --root`, `audit --json --root`)
//! under an address-space limit and a timeout, on one file per capture.
//!
//! Files of the same role (the path with its numbers taken out: one CPU's
//! `cache/index3/size` is the role of every CPU's) are mutated on their
//! first instance; `NUMAPROBE_MUTATE_ALL=1` mutates every instance.
//!
//! Gated with the other fixture suites: `cargo test -p numaprobe --features
//! fixtures --test mutation -- --nocapture` prints what it tried.

#![cfg(feature = "fixtures")]

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;
use topo::{SysRoot, Topology};

#[path = "../../topo/tests/support/captures.rs"]
mod captures;

const CPU: &str = "sys/devices/system/cpu";
const NODE: &str = "sys/devices/system/node";

/// The binary's limits: address space (RLIMIT_AS), wall time.
const CHILD_AS_BYTES: u64 = 2 << 30;
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);
/// No in-process mutation may take longer than this (a hang).
const STALL: Duration = Duration::from_secs(120);
/// The test process's peak resident memory must stay under this.
const PEAK_RSS_BYTES: u64 = 2 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Empty,
    Garbage,
    Truncated,
    DevZero,
    Directory,
    Dangling,
}

const KINDS: [Kind; 6] =
    [Kind::Empty, Kind::Garbage, Kind::Truncated, Kind::DevZero, Kind::Directory, Kind::Dangling];

/// Files where an empty file is a value, not a fault, so emptying one
/// needs no warning (prefixes of the path relative to the root).
const EMPTY_IS_A_VALUE: &[(&str, &str)] =
    &[("sys/class/dmi/id/", "firmware leaves DMI strings blank")];

/// Bytes no reader can take for a value: not UTF-8, not a number, not a list.
const GARBAGE: &[u8] = b"zz \xff\xfe\x00 garbage-\x01-~\n";

/// Replaces `path` by the mutation `kind` of `original` (its bytes).
fn mutate(path: &Path, kind: Kind, original: &[u8]) {
    remove(path);
    match kind {
        Kind::Empty => std::fs::write(path, b"").unwrap(),
        Kind::Garbage => std::fs::write(path, GARBAGE).unwrap(),
        Kind::Truncated => std::fs::write(path, &original[..original.len() / 2]).unwrap(),
        Kind::DevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Kind::Directory => std::fs::create_dir(path).unwrap(),
        Kind::Dangling => std::os::unix::fs::symlink(path.with_extension("gone"), path).unwrap(),
    }
}

fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).unwrap(),
        Ok(_) => std::fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

/// What a target was before mutating it, to put back.
enum Saved {
    File(Vec<u8>),
    Dir(PathBuf),
}

/// Copies a capture (symbolic links kept as links) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let t = e.file_type().unwrap();
        if t.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else if t.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `path` with each run of digits replaced by `#`: files of one role.
fn role(rel: &str) -> String {
    let mut out = String::new();
    let mut in_digits = false;
    for c in rel.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The regular files (after links) among `rels` under `dir`, one per role
/// unless every instance is asked for.
fn targets(dir: &Path, rels: &BTreeSet<String>, all: bool) -> Vec<String> {
    let mut seen = BTreeSet::new();
    rels.iter()
        .filter(|r| std::fs::metadata(dir.join(r)).is_ok_and(|m| m.is_file()))
        .filter(|r| all || seen.insert(role(r)))
        .cloned()
        .collect()
}

fn audit_json(root: &SysRoot, t: &Topology) -> String {
    let (p, ev) = (audit::Profile::General, audit::Evidence::default());
    let r = audit::Report::build(root, t, p, ev, console::audit::TERMS);
    serde_json::to_string(&r).unwrap()
}

/// Counts and failures of one capture.
#[derive(Default)]
struct Tally {
    mutations: usize,
    binary_runs: usize,
    files: usize,
    essentials: usize,
    warned: BTreeMap<Kind, usize>,
    errors: usize,
    failures: Vec<String>,
}

/// In-process: discovery, then the audit, on the mutated tree. `Ok(Some)`
/// the JSON (topology, audit), `Ok(None)` an error (its one line), or a
/// panic's message.
fn in_process(dir: &Path) -> Result<Result<(Topology, String), String>, String> {
    std::panic::catch_unwind(|| {
        let root = SysRoot::new(dir).unwrap();
        match Topology::discover(&root) {
            Ok(t) => {
                let a = audit_json(&root, &t);
                Ok((t, a))
            }
            Err(e) => Err(e.to_string()),
        }
    })
    .map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// Runs the binary with `args` under the address-space limit and the
/// timeout; returns (exit code, stdout, stderr).
fn binary(args: &[&str], root: &Path) -> (Option<i32>, Vec<u8>, String) {
    let db = root.with_extension("db");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_numaprobe"));
    cmd.args(args)
        .arg("--root")
        .arg(root)
        .env("NUMAPROBE_DB", &db)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: CHILD_AS_BYTES, rlim_max: CHILD_AS_BYTES };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    // Drained while it runs: a full pipe would stall the child.
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > CHILD_TIMEOUT {
            child.kill().unwrap();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    match status {
        Some(s) => (s.code(), out, String::from_utf8_lossy(&err).into_owned()),
        None => (None, out, format!("hung: killed after {CHILD_TIMEOUT:?}")),
    }
}

/// Checks one mutation through the binary: `topo` and `audit` exit 0 with
/// JSON (naming `path` when `must_name`), or (essential) exit 1 with one
/// line naming it.
fn check_binary(
    dir: &Path,
    path: &str,
    (essential, must_name): (bool, bool),
    what: &str,
    tally: &mut Tally,
) {
    for args in [&["topo", "--json"][..], &["audit", "--json", "--no-evidence"][..]] {
        tally.binary_runs += 1;
        let (code, stdout, stderr) = binary(args, dir);
        let ok = match code {
            Some(0) if !essential => {
                (!must_name || String::from_utf8_lossy(&stdout).contains(path))
                    && serde_json::from_slice::<Value>(&stdout).is_ok()
            }
            Some(1) if essential => stderr.trim_end().lines().count() == 1 && stderr.contains(path),
            _ => false,
        };
        if !ok {
            tally.failures.push(format!(
                "{what}: `numaprobe {}` exit {code:?}: {}",
                args.join(" "),
                stderr.trim_end()
            ));
        }
    }
}

/// Every mutation of one capture; `progress` ticks once per mutation.
fn capture(
    name: &str,
    scratch: &Path,
    all: bool,
    progress: &AtomicUsize,
    now: &Mutex<String>,
) -> Tally {
    let mut tally = Tally::default();
    let dir = scratch.join(name);
    copy_tree(&captures::unpack(name), &dir);

    // What discovery reads, and what the audit reads besides.
    let rec = SysRoot::recording(&dir).unwrap();
    let t = Topology::discover(&rec).unwrap_or_else(|e| panic!("{name}: {e}"));
    let topo_reads: BTreeSet<String> = rec.files_read().into_iter().collect();
    let rec_audit = SysRoot::recording(&dir).unwrap();
    audit_json(&rec_audit, &t);
    let audit_reads: BTreeSet<String> =
        rec_audit.files_read().into_iter().filter(|r| !topo_reads.contains(r)).collect();
    let baseline: BTreeSet<String> = t.warnings.iter().filter_map(|w| w.path.clone()).collect();

    let mut files = targets(&dir, &topo_reads, all);
    files.extend(targets(&dir, &audit_reads, all));
    tally.files = files.len();
    let mut by_binary: BTreeSet<Kind> = BTreeSet::new();

    let essentials: Vec<String> =
        [CPU, NODE].into_iter().filter(|d| dir.join(d).is_dir()).map(String::from).collect();
    tally.essentials = essentials.len();
    for (i, rel) in essentials.iter().chain(files.iter()).enumerate() {
        let essential = i < essentials.len();
        let path = dir.join(rel);
        let path_s = path.display().to_string();
        let saved = if essential {
            let keep = scratch.join(format!("{name}.saved"));
            std::fs::rename(&path, &keep).unwrap();
            Saved::Dir(keep)
        } else {
            Saved::File(std::fs::read(&path).unwrap())
        };
        let original = match &saved {
            Saved::File(b) => b.clone(),
            Saved::Dir(_) => Vec::new(),
        };
        for kind in KINDS {
            if essential && matches!(kind, Kind::Directory | Kind::Truncated) {
                continue; // a directory already; truncated is the empty file
            }
            let what = format!("{name}: {rel} as {kind:?}");
            *now.lock().unwrap() = what.clone();
            mutate(&path, kind, &original);
            tally.mutations += 1;
            match in_process(&dir) {
                Err(panic) => tally.failures.push(format!("{what}: panicked: {panic}")),
                Ok(Err(e)) => {
                    tally.errors += 1;
                    if !(essential && e.contains(&path_s) && !e.contains('\n')) {
                        tally.failures.push(format!("{what}: aborted: {e}"));
                    }
                }
                Ok(Ok((t, audit))) => {
                    let warned = t.warnings.iter().any(|w| w.path.as_deref() == Some(&path_s))
                        || (audit_reads.contains(rel) && audit.contains(&path_s));
                    if warned {
                        *tally.warned.entry(kind).or_default() += 1;
                    }
                    let empty_ok = kind == Kind::Empty
                        && (original.iter().all(u8::is_ascii_whitespace)
                            || EMPTY_IS_A_VALUE.iter().any(|(p, _)| rel.starts_with(p)));
                    let must = kind != Kind::Truncated && !empty_ok && !baseline.contains(&path_s);
                    if essential {
                        tally.failures.push(format!("{what}: essential, but discovery went on"));
                    } else if must && !warned {
                        tally.failures.push(format!("{what}: no warning naming it"));
                    }
                }
            }
            // Each essential directory, and one file per kind (rotating over
            // the files), through the binary too.
            if essential || (!by_binary.contains(&kind) && i % KINDS.len() == kind as usize) {
                let must_name = kind != Kind::Truncated && !baseline.contains(&path_s);
                check_binary(&dir, &path_s, (essential, must_name), &what, &mut tally);
                by_binary.insert(kind);
            }
            progress.fetch_add(1, Ordering::Relaxed);
        }
        remove(&path);
        match saved {
            Saved::File(b) => std::fs::write(&path, b).unwrap(),
            Saved::Dir(keep) => std::fs::rename(keep, &path).unwrap(),
        }
    }
    tally
}

/// The test process's peak resident set (VmHWM), bytes.
fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = s
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

#[test]
fn every_file_read_mutated_on_every_capture() {
    let all = std::env::var_os("NUMAPROBE_MUTATE_ALL").is_some_and(|v| v == "1");
    let mut names = captures::names();
    // For debugging one capture: NUMAPROBE_MUTATE_ONLY=NAME.
    if let Ok(only) = std::env::var("NUMAPROBE_MUTATE_ONLY") {
        names.retain(|n| *n == only);
    }
    let scratch = tempfile::tempdir().unwrap();
    let progress = AtomicUsize::new(0);
    let queue = Mutex::new(names.clone());
    let results = Mutex::new(Vec::new());
    let current: Vec<Mutex<String>> = (0..8).map(|_| Mutex::new(String::new())).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // The watchdog: no progress for STALL is a hang; name the mutation.
        s.spawn(|| {
            let (mut last, mut since) = (0, Instant::now());
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                let p = progress.load(Ordering::Relaxed);
                if p != last {
                    (last, since) = (p, Instant::now());
                } else if since.elapsed() > STALL {
                    let now: Vec<String> =
                        current.iter().map(|c| c.lock().unwrap().clone()).collect();
                    eprintln!("mutation suite: no progress for {STALL:?}; hung in {now:?}");
                    std::process::abort();
                }
            }
        });
        let workers: Vec<_> = (0..threads)
            .map(|w| {
                let (queue, results, progress, scratch) =
                    (&queue, &results, &progress, scratch.path());
                let now = &current[w];
                s.spawn(move || loop {
                    let Some(name) = queue.lock().unwrap().pop() else { break };
                    let start = Instant::now();
                    let t = capture(&name, scratch, all, progress, now);
                    eprintln!(
                        "  {name}: {} files, {} mutations, {} failures ({:.0} s)",
                        t.files,
                        t.mutations,
                        t.failures.len(),
                        start.elapsed().as_secs_f64()
                    );
                    results.lock().unwrap().push((name, t));
                })
            })
            .collect();
        let joined: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
        done.store(true, Ordering::Relaxed);
        assert!(joined.iter().all(|j| j.is_ok()), "a worker panicked (above)");
    });

    let results = results.into_inner().unwrap();
    let mut failures = Vec::new();
    let (mut mutations, mut files, mut binary_runs, mut errors, mut dirs) = (0, 0, 0, 0, 0);
    let mut warned: BTreeMap<Kind, usize> = BTreeMap::new();
    for (_, t) in &results {
        mutations += t.mutations;
        files += t.files;
        dirs += t.essentials;
        binary_runs += t.binary_runs;
        errors += t.errors;
        for (k, n) in &t.warned {
            *warned.entry(*k).or_default() += n;
        }
        failures.extend(t.failures.iter().cloned());
    }
    let peak = peak_rss();
    println!(
        "mutation suite: {mutations} mutations of {files} files and {dirs} essential directories \
         on {} captures; {binary_runs} runs of the binary; {errors} one-line errors (essential), \
         warnings by kind {warned:?}; peak RSS {} MiB",
        results.len(),
        peak >> 20
    );
    assert_eq!(results.len(), names.len());
    assert!(peak < PEAK_RSS_BYTES, "peak RSS {} MiB", peak >> 20);
    assert!(
        failures.is_empty(),
        "{} of {mutations} mutations failed:\n{}",
        failures.len(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}
