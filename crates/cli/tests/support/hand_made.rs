//! Hand-made saved runs for tests of what numaprobe says about stored
//! runs (the impossible-figure and study-wording suites): one host, one
//! node, figures chosen by the test.

#![allow(dead_code)]

use serde_json::{json, Value};

/// What varies between the hand-made runs of a test.
pub struct Made<'a> {
    /// The run's number: its UUID's tail, `source_id` and start minute.
    pub n: u32,
    pub host: &'a str,
    pub label: &'a str,
    /// Its machine's fingerprint is `0xabc0 + machine`.
    pub machine: u32,
    /// The configuration hash and the kernel setting it names.
    pub config: (&'a str, &'a str),
    pub status: &'a str,
    /// The local triad, GB/s, against a stated peak of 10 GB/s.
    pub gbs: f64,
    /// The one-node latency matrix, ns.
    pub lat_ns: f64,
}

/// A run of `m.host`: a local triad of `m.gbs` against a stated peak of
/// 10 GB/s on 1 GiB arrays (4x a 32 MiB LLC, pages verified), the latency
/// matrix of one node at `m.lat_ns` and a sweep whose L3 plateau is at
/// 20 ns.
pub fn run(m: &Made) -> Value {
    let (n, gbs, lat_ns) = (m.n, m.gbs, m.lat_ns);
    let bw = json!({"mode": "local", "kernel": "triad", "threads": 4, "cpus": "0-3",
        "cpu_node": 0, "mem_node": 0, "mem_nodes": "0", "best_gbs": gbs, "median_gbs": gbs,
        "min_gbs": gbs, "max_gbs": gbs, "spread_pct": 0.5, "reps": 10, "stable": true,
        "validated": true, "peak_gbs": 10.0, "size_rule_ok": true, "array_bytes": 1u64 << 30,
        "llc_bytes": 32u64 << 20, "placement": {"fraction": 1.0, "ok": true}});
    let lat = json!({"mode": "matrix", "cpu": 0, "cpu_node": 0, "mem_node": 0,
        "median_ns": lat_ns, "p90_ns": lat_ns, "p99_ns": lat_ns, "spread_pct": 0.5,
        "noise_pct": 0.5, "size_bytes": 1u64 << 30, "stride_bytes": 256, "stable": true});
    let sweep = json!({"mode": "sweep", "cpu": 0, "mem_node": 0, "caches": [],
        "plateaus": [{"label": "L3", "from_bytes": 4194304, "to_bytes": 16777216,
                      "latency_ns": 20.0, "cache_bytes": 33554432, "points": 4}]});
    let results: Vec<Value> = [("bw", bw), ("lat", lat), ("lat-summary", sweep)]
        .into_iter()
        .enumerate()
        .map(|(i, (k, p))| {
            json!({"seq": i + 1, "recorded": "2026-11-20T10:00:00Z", "kind": k, "payload": p})
        })
        .collect();
    json!({"uuid": format!("5e5e5e5e-0000-4000-8000-{n:012}"), "source_id": n, "label": m.label,
        "command_line": "numaprobe run (hand-made)", "tool_version": "0.1.0",
        "started": format!("2026-11-20T10:{n:02}:00Z"), "finished": format!("2026-11-20T10:{n:02}:30Z"),
        "status": m.status, "message": null,
        "machine": {"fingerprint": format!("{:016x}", 0xabc0 + m.machine), "description": "test",
                    "info": {"hostname": m.host, "cpu_model": "Test CPU"}},
        "config_hash": m.config.0, "config": {"kernel": m.config.1}, "results": results,
        "topology": {"schema_version": 2, "nodes": [{"id": 0, "cpus": "0-3", "distances": [10]}]}})
}

/// The export document `numaprobe import` reads, holding `runs`.
pub fn export(runs: Vec<Value>) -> String {
    json!({"format": "numaprobe-export", "version": 1,
        "exported": "2026-11-20T11:00:00Z", "runs": runs})
    .to_string()
}
