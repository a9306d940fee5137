//! A latency point measured on a CPU nothing else wants raises no flag.
//!
//! The development and CI machines are shared (other builds run beside
//! the suite), so "a CPU nothing else wants" is made, not hoped for: the
//! measurement runs under `chrt -f 1` (SCHED_FIFO, util-linux), which no
//! ordinary process can preempt, and is kept far below the kernel's RT
//! throttling window (95% of each second) so that never stops it. This
//! needs root or CAP_SYS_NICE; without it the test fails saying so. It is
//! the only test of its binary: tests of one binary run in parallel, and
//! test binaries one after another.

#[path = "support/lock.rs"]
mod lock_support;

use serde_json::Value;

#[test]
fn a_latency_point_on_an_idle_cpu_is_not_marked() {
    let np = assert_cmd::cargo::cargo_bin("numaprobe");
    let out = std::process::Command::new("chrt")
        .args(["-f", "1"])
        .arg(&np)
        .args(["lat", "--size", "16M", "--samples", "5", "--sample-ms", "5"])
        .args(["--no-prefetch-check", "--json"])
        .env("NUMAPROBE_LOCK", lock_support::private_lock("quiet"))
        .output()
        .expect("chrt (util-linux) is needed to give the measurement a CPU of its own");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "chrt -f 1 numaprobe lat failed (SCHED_FIFO needs root or CAP_SYS_NICE): {err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(r["stable"], true, "{r}\n{err}");
    let d = &r["disturbance"];
    assert_eq!(d["source"], "run-delay", "{d}");
    assert!(d["clean"].as_u64().unwrap() >= 5, "{d}");
    assert!(!err.contains("disturbed"), "{err}");
}
