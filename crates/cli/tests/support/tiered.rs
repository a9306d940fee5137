//! A hand-made saved run for the tiering tests (advisor, HMAT declared vs
//! measured): an export document whose bandwidth and latency matrices
//! hold known figures, with the topology spliced in as raw JSON (a file
//! written by `topo --json`, or a hand-made one).

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// Bandwidth (GB/s) and latency (ns) per (CPU node, memory node).
pub struct Figures {
    pub bw_gbs: BTreeMap<(u32, u32), f64>,
    pub lat_ns: BTreeMap<(u32, u32), f64>,
}

/// The `results` of the run: one `bw` matrix result (triad) and one `lat`
/// matrix result per cell.
pub fn results(f: &Figures) -> Value {
    let mut out = Vec::new();
    let mut seq = 0;
    for (&(c, m), &gbs) in &f.bw_gbs {
        seq += 1;
        out.push(json!({"seq": seq, "recorded": "2026-11-20T10:00:00Z", "kind": "bw", "payload": {
            "mode": "matrix", "kernel": "triad", "threads": 1, "cpu_node": c, "mem_node": m,
            "mem_nodes": m.to_string(), "best_gbs": gbs, "median_gbs": gbs, "min_gbs": gbs,
            "max_gbs": gbs, "spread_pct": 0.5, "validated": true,
            "placement": {"status": "verified", "check": null}}}));
    }
    for (&(c, m), &ns) in &f.lat_ns {
        seq += 1;
        out.push(
            json!({"seq": seq, "recorded": "2026-11-20T10:00:01Z", "kind": "lat", "payload": {
            "mode": "matrix", "cpu": c, "cpu_node": c, "mem_node": m, "median_ns": ns,
            "p90_ns": ns, "p99_ns": ns, "spread_pct": 0.5}}),
        );
    }
    Value::Array(out)
}

/// The export document's text before and after the topology: `head +
/// TOPOLOGY_JSON + tail` is a valid document holding one run labelled
/// `label`.
pub fn export_parts(label: &str, f: &Figures) -> (String, String) {
    let run_head = json!({
        "uuid": "0d6f2a9e-1c4b-4f7e-9a3d-5b8c7e6f1a20", "source_id": 1, "label": label,
        "command_line": "numaprobe run (hand-made)", "tool_version": "0.1.0",
        "started": "2026-11-20T10:00:00Z", "finished": "2026-11-20T10:01:00Z",
        "status": "complete", "message": null,
        "machine": {"fingerprint": "feedc0de00000017", "description": "tiered test machine",
                    "info": {"hostname": "tiered"}},
        "config_hash": "17", "config": {"kernel": "test"},
        "results": results(f)
    });
    let mut head = serde_json::to_string(&run_head).unwrap();
    head.pop(); // the closing brace: the topology follows
    let head = format!(
        "{{\"format\":\"numaprobe-export\",\"version\":1,\"exported\":\"2026-11-20T10:02:00Z\",\
         \"runs\":[{head},\"topology\":"
    );
    (head, "}]}".to_string())
}
