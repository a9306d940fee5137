//! Figures measured while another process keeps the measuring CPU busy
//! are marked: a thread of this test spins pinned to the very CPU the
//! measurement is pinned to (same priority, so the scheduler shares the
//! CPU about half and half), and `lat`, `lat --c2c`, `bw` and `scan` must
//! say `stable: false`, count the discarded samples, and warn naming the
//! CPU. The figures themselves are never judged.
//!
//! This binary holds only tests that load a CPU on purpose; the check that
//! an idle CPU raises no flag is `quiet_cpu_cli.rs`, alone in its binary,
//! since tests of one binary run in parallel.

#[path = "support/lock.rs"]
mod lock_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use assert_cmd::Command;
use serde_json::Value;

/// One test at a time: each loads a CPU on purpose, and a busy loop of
/// one test must not be what another test's figure sees.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The CPUs this test may use.
fn usable_cpus() -> Vec<u32> {
    // SAFETY: an all-zero cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 (this thread) with a correctly sized set.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    assert_eq!(rc, 0, "sched_getaffinity");
    (0..libc::CPU_SETSIZE as u32)
        // SAFETY: the index is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect()
}

/// A thread spinning on one CPU until dropped.
struct Busy {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Busy {
    fn on(cpu: u32) -> Busy {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            // SAFETY: as in usable_cpus; one CPU set in a zeroed set.
            let ok = unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu as usize, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0
            };
            tx.send(ok).unwrap();
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        });
        assert!(rx.recv().unwrap(), "could not pin the busy thread to CPU {cpu}");
        Busy { stop, thread: Some(thread) }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs numaprobe with `args` and `--json`; returns the document and
/// stderr.
fn run(args: &[&str]) -> (Value, String) {
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_LOCK", lock_support::private_lock("disturbed"))
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {err}");
    (serde_json::from_slice(&out.stdout).unwrap(), err)
}

/// The figure is marked, its disturbance counted and named: the CPU that
/// lost the most time is `cpu`, or one of `cpus` where the measurement
/// used several (what else the machine runs decides which of them).
fn assert_marked(what: &str, r: &Value, cpu: u32) {
    assert_marked_on(what, r, &[cpu]);
}

fn assert_marked_on(what: &str, r: &Value, cpus: &[u32]) {
    let mut r = r.clone();
    r.as_object_mut().unwrap().remove("phys");
    assert_eq!(r["stable"], false, "{what}: {r}");
    let d = &r["disturbance"];
    assert!(d["disturbed"].as_u64().unwrap() > 0, "{what}: {d}");
    assert!(d["lost_pct"].as_f64().unwrap() > 10.0, "{what}: {d}");
    let busiest = d["busiest_cpu"].as_u64().map(|c| c as u32);
    assert!(busiest.is_some_and(|c| cpus.contains(&c)), "{what}: {d}");
    assert_eq!(d["source"], "run-delay", "{what}: {d}");
}

fn assert_warned(what: &str, err: &str, cpu: u32) {
    let needle = format!("CPU {cpu} was busy with other processes for");
    assert!(err.contains(&needle), "{what}: no warning naming CPU {cpu}: {err}");
}

#[test]
fn a_latency_point_on_a_busy_cpu_is_marked_disturbed() {
    let _alone = alone();
    let cpu = usable_cpus()[0];
    let _busy = Busy::on(cpu);
    let c = cpu.to_string();
    let (v, err) = run(&["lat", "--cpu", &c, "--size", "32M", "--no-prefetch-check"]);
    assert_marked("lat", &v["results"][0], cpu);
    assert_warned("lat", &err, cpu);
}

#[test]
fn core_to_core_latency_with_a_busy_partner_cpu_is_marked() {
    let _alone = alone();
    let cpus = usable_cpus();
    assert!(cpus.len() >= 2, "core-to-core latency needs two CPUs: {cpus:?}");
    let (a, b) = (cpus[1], cpus[0]);
    let _busy = Busy::on(b);
    let pair = format!("{a}:{b}");
    // 200 samples of 20,000 round trips: tens of ms, longer than a
    // scheduler slice, so the busy thread takes the responder's CPU while
    // it is measured (5 samples, about 1.5 ms, could fit in one slice)
    let (v, err) = run(&["lat", "--c2c", "--pairs", &pair, "--samples", "200"]);
    // the responder on the busy CPU stalls the round trips; the warning
    // names whichever of the pair lost the most time
    let r = &v["results"][0];
    assert_marked_on("c2c", r, &[a, b]);
    let named = r["disturbance"]["busiest_cpu"].as_u64().unwrap() as u32;
    assert_warned("c2c", &err, named);
}

#[test]
fn bandwidth_on_a_busy_cpu_is_marked() {
    let _alone = alone();
    let cpu = usable_cpus()[0];
    let _busy = Busy::on(cpu);
    let c = cpu.to_string();
    let (v, err) = run(&[
        "bw", "--cpus", &c, "--kernel", "copy", "--size", "32M", "--pages", "4k", "--budget", "0.5",
    ]);
    assert_marked("bw", &v["results"][0], cpu);
    assert_warned("bw", &err, cpu);
}

#[test]
fn scan_chunks_read_on_a_busy_cpu_are_marked() {
    let _alone = alone();
    let cpu = usable_cpus()[0];
    let _busy = Busy::on(cpu);
    // the reading team is the first usable CPU of node 0; a repetition
    // (128 MiB) lasts longer than a time slice
    let (v, err) = run(&[
        "scan",
        "--mem-node",
        "0",
        "--threads",
        "1",
        "--chunk",
        "128M",
        "--size",
        "256M",
        "--reps",
        "3",
        "--pages",
        "nothp",
    ]);
    for c in v["chunks"].as_array().unwrap() {
        assert_marked("scan", c, cpu);
    }
    assert_eq!(v["verdict"]["unstable"], serde_json::json!([0, 1]));
    assert_warned("scan", &err, cpu);
}
