//! The published settings studies of `../shared/STUDIES.md` (1, 3, 4 and 5)
//! as numaprobe studies: each configuration's figures from the study, as
//! runs in numaprobe's own export format (`numaprobe-export` version 1),
//! three runs per configuration with deterministic run-to-run noise
//! (about 1% for bandwidth and program scores, 0.5% for latency), imported
//! into a temporary store and compared with the real binary. The tests
//! check that `compare --json` reaches the study's published conclusion
//! for the right reason: the metric that decides it, and the settings diff
//! it names. Only the study's own figures are used; where this file maps a
//! study's column onto a numaprobe metric, the comment says how.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

/// Deterministic noise: xorshift64*, about normal (sum of four uniforms).
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// `x` times a factor of relative standard deviation `rel`.
    fn jitter(&mut self, x: f64, rel: f64) -> f64 {
        let z = (0..4).map(|_| self.uniform()).sum::<f64>() - 2.0; // sd 0.577
        x * (1.0 + rel * z / 0.577)
    }
}

/// The records of one run, drawn with the run's own noise.
type Records = Box<dyn Fn(&mut Noise) -> Vec<(&'static str, Value)>>;

/// One configuration of a study: its label, settings and records (one
/// function per run so that each run gets its own noise).
struct Setting {
    label: &'static str,
    config: Value,
    /// `packages` of the machine document.
    packages: u64,
    /// The topology document (`{}`: none stored, as in older exports).
    topology: Value,
    records: Records,
}

/// Writes the export of `settings` (three runs each, taken in alternation
/// A B C A B C ... as a careful study does) and imports it into a new
/// store; returns the store's path.
fn import(dir: &Path, name: &str, settings: &[Setting], seed: u64) -> PathBuf {
    let mut noise = Noise(seed);
    let mut runs = Vec::new();
    let mut n = 0u32;
    for round in 0..3 {
        for (si, s) in settings.iter().enumerate() {
            n += 1;
            let results: Vec<Value> = (s.records)(&mut noise)
                .into_iter()
                .enumerate()
                .map(|(i, (kind, payload))| {
                    json!({"seq": i + 1, "recorded": format!("2026-11-20T10:{:02}:{:02}.000Z", n, i % 60),
                           "kind": kind, "payload": payload})
                })
                .collect();
            runs.push(json!({
                "uuid": format!("57ad1e50-0000-4000-8000-{seed:04x}{n:08}"),
                "source_id": n,
                "label": s.label,
                "command_line": format!("numaprobe run --label '{}'", s.label),
                "tool_version": "0.1.0",
                "started": format!("2026-11-20T10:{:02}:00.000Z", n),
                "finished": format!("2026-11-20T10:{:02}:59.000Z", n),
                "status": "complete",
                "message": null,
                "machine": {"fingerprint": format!("5717d1e5{seed:08x}"), "description": name,
                            "info": {"hostname": name, "packages": s.packages}},
                "config_hash": format!("c{si:02}{seed:04x}5717d1e5"),
                "config": s.config,
                "topology": s.topology,
                "results": results,
            }));
            let _ = round;
        }
    }
    let doc = json!({"format": "numaprobe-export", "version": 1,
                     "exported": "2026-11-20T12:00:00.000Z", "runs": runs});
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, doc.to_string()).unwrap();
    // To rerun a study by hand (or with another numaprobe): keep its export.
    if let Some(keep) = std::env::var_os("NUMAPROBE_KEEP_STUDY_EXPORTS") {
        let _ =
            std::fs::write(Path::new(&keep).join(format!("{name}-{seed}.json")), doc.to_string());
    }
    let db = dir.join(format!("{name}.db"));
    np(&db).arg("import").arg(&file).assert().success();
    db
}

fn compare_json(db: &Path, groups: &[&str], baseline: Option<&str>) -> Value {
    let mut c = np(db);
    c.args(["--json", "compare"]);
    for g in groups {
        c.arg(format!("label:{g}"));
    }
    if let Some(b) = baseline {
        c.args(["--baseline", &format!("label:{b}")]);
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn compare_text(db: &Path, groups: &[&str]) -> String {
    let mut c = np(db);
    c.arg("compare");
    for g in groups {
        c.arg(format!("label:{g}"));
    }
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn group_index(v: &Value, label: &str) -> usize {
    v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .position(|g| g["label"] == label)
        .unwrap_or_else(|| panic!("no group {label} in {}", v["groups"]))
}

fn rec<'a>(v: &'a Value, profile: &str) -> &'a Value {
    v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["profile"] == profile)
        .unwrap_or_else(|| panic!("no {profile} recommendation in {}", v["recommendations"]))
}

fn metric<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == id)
        .unwrap_or_else(|| panic!("no metric {id} in {}", v["metrics"]))
}

/// The pick of `profile` is the group labelled `label`, decided by
/// `metric`.
fn assert_pick(v: &Value, profile: &str, label: &str, by: &str) {
    assert_pick_in(v, profile, label, by, "");
}

/// [`assert_pick`], saying `what` was compared when it fails.
fn assert_pick_in(v: &Value, profile: &str, label: &str, by: &str, what: &str) {
    let r = rec(v, profile);
    assert_eq!(r["group"], json!(group_index(v, label)), "{what}: {profile}: {}", r["text"]);
    assert_eq!(r["decided_by"], by, "{what}: {profile}: {}", r["text"]);
}

fn lat_cell(c: u32, m: u32, ns: f64) -> (&'static str, Value) {
    (
        "lat",
        json!({"mode": "matrix", "cpu": c * 8, "cpu_node": c, "mem_node": m, "median_ns": ns,
                   "noise_pct": 0.5, "samples": 11}),
    )
}

fn bw(mode: &str, gbs: f64) -> (&'static str, Value) {
    (
        "bw",
        json!({"mode": mode, "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs,
                  "spread_pct": 1.0, "samples": 10}),
    )
}

fn bw_local(c: u32, gbs: f64) -> (&'static str, Value) {
    (
        "bw",
        json!({"mode": "local", "kernel": "triad", "cpu_node": c, "mem_node": c,
                  "best_gbs": gbs, "median_gbs": gbs, "spread_pct": 1.0, "samples": 10}),
    )
}

fn bw_cell(c: u32, m: u32, gbs: f64) -> (&'static str, Value) {
    (
        "bw",
        json!({"mode": "matrix", "kernel": "triad", "cpu_node": c, "mem_node": m,
                  "best_gbs": gbs, "median_gbs": gbs, "spread_pct": 1.0, "samples": 10}),
    )
}

// ---------------------------------------------------------------------------
// Study 1: Xeon Platinum 8380, 2 sockets, BIOS NUMA on/off x SNC, written
// as a default `run` stores it on each node structure (STUDIES.md, "What a
// real machine reports in each mode"): 2 x 40 cores (HT off); SNC off: 2
// nodes of 40 CPUs, SLIT 10 20; SNC2: 4 nodes of 20 CPUs, SLIT 10 11 20 20;
// SNC4: 8 nodes of 10 CPUs, SLIT 10 11 11 11 20...; BIOS NUMA off: 1 node of
// 80 CPUs, no SRAT. Each run holds the real topology, the firmware's SRAT
// and SLIT as the configuration records them, the declared `bios.numa` and
// `bios.snc`, per-node local bandwidth, and full bandwidth and latency
// matrices including the same-package cells the study does not give.
//
// Mapping: the study's "local GB/s" (STREAM bound per domain, whole
// machine) is `bw` global; its "global GB/s" (unbound) is `bw` interleave;
// a node's local cell is its share of the machine's bound figure (a node
// of a quarter of the channels moves about a quarter); a cross-package
// matrix cell is one node reading one node of the other package, so the
// package's "remote GB/s" is the sum of its nodes' cells; latency cells
// are the study's local and remote figures. The same-package neighbour
// cells, which the study does not give, are written at `neighbour` times
// the local latency (and the local bandwidth divided by it): the test runs
// 1.1, 1.25 and 1.5, and no pick may depend on the value. With NUMA off the
// one node's latency is the study's "380 (average)".

/// One configuration of the Xeon 8380 study: `snc` nodes per socket.
struct Xeon {
    label: &'static str,
    snc: u32,
    local_gbs: f64,
    global_gbs: f64,
    local_ns: f64,
    remote_ns: f64,
    remote_gbs: f64,
}

const XEON: [Xeon; 4] = [
    Xeon {
        label: "NUMA on, SNC off",
        snc: 1,
        local_gbs: 550.0,
        global_gbs: 540.0,
        local_ns: 130.0,
        remote_ns: 450.0,
        remote_gbs: 250.0,
    },
    Xeon {
        label: "NUMA on, SNC2",
        snc: 2,
        local_gbs: 580.0,
        global_gbs: 525.0,
        local_ns: 115.0,
        remote_ns: 470.0,
        remote_gbs: 220.0,
    },
    Xeon {
        label: "NUMA on, SNC4",
        snc: 4,
        local_gbs: 585.0,
        global_gbs: 510.0,
        local_ns: 110.0,
        remote_ns: 490.0,
        remote_gbs: 200.0,
    },
    // BIOS NUMA off: the study gives one node's 600 and the 380 average.
    Xeon {
        label: "NUMA off",
        snc: 0,
        local_gbs: 600.0,
        global_gbs: 400.0,
        local_ns: 380.0,
        remote_ns: 380.0,
        remote_gbs: 180.0,
    },
];

/// The topology `topo` discovers on `packages` sockets of `cpus` CPUs each
/// under `per_socket` nodes per socket (0: one node for the whole machine,
/// BIOS NUMA off), with SLIT `near` inside a socket and `far` across.
fn socket_topology(
    vendor: topo::Vendor,
    model: &str,
    packages: u32,
    cpus: u32,
    per_socket: u32,
    near: &dyn Fn(u32, u32) -> u32,
    far: u32,
) -> Value {
    let mut m = topo::synthetic::Machine::new(vendor, model);
    for p in 0..packages {
        m = m.package(p, &format!("{}-{}", p * cpus, (p + 1) * cpus - 1));
    }
    let mem = 256u64 << 30;
    if per_socket == 0 {
        m = m.node(0, &format!("0-{}", packages * cpus - 1), mem * u64::from(packages));
    } else {
        let n = packages * per_socket;
        let size = cpus / per_socket;
        for i in 0..n {
            m = m.node(
                i,
                &format!("{}-{}", i * size, (i + 1) * size - 1),
                mem / u64::from(per_socket),
            );
        }
        let rows: Vec<Vec<u32>> = (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| match (a == b, a / per_socket == b / per_socket) {
                        (true, _) => 10,
                        (false, true) => near(a % per_socket, b % per_socket),
                        (false, false) => far,
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        m = m.distances(&refs);
    }
    serde_json::to_value(m.build()).unwrap()
}

/// The SLIT as a run's configuration records it (`acpi_slit`, from the
/// firmware's table: the rows joined, `10 11 20 20 / 11 10 20 20 / ...`
/// up to 8 localities), from the topology's distances.
fn slit_text(topology: &Value) -> String {
    let rows: Vec<String> = topology["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let d: Vec<String> =
                n["distances"].as_array().unwrap().iter().map(|x| x.to_string()).collect();
            d.join(" ")
        })
        .collect();
    assert!(rows.len() <= 8, "above 8 localities the table is summarised");
    rows.join(" / ")
}

fn xeon_setting(x: &'static Xeon, neighbour: f64) -> Setting {
    let per_socket = x.snc;
    let nodes = (2 * per_socket).max(1);
    let topology = socket_topology(
        topo::Vendor::Intel,
        "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
        2,
        40,
        per_socket,
        &|_, _| 11,
        20,
    );
    let (mode, mode_label, srat, slit) = match per_socket {
        0 => (
            "single-node",
            "NUMA off (one node)".to_string(),
            "none".to_string(),
            "none".to_string(),
        ),
        1 => (
            "node-per-package",
            "NUMA per socket".to_string(),
            "2 proximity domains (2 with CPUs, 2 with memory)".to_string(),
            slit_text(&topology),
        ),
        k => (
            "nodes-per-package",
            format!("SNC{k}"),
            format!("{nodes} proximity domains ({nodes} with CPUs, {nodes} with memory)"),
            slit_text(&topology),
        ),
    };
    let declared = match per_socket {
        0 => json!({"bios.numa": "off"}),
        1 => json!({"bios.numa": "on", "bios.snc": "off"}),
        k => json!({"bios.numa": "on", "bios.snc": k.to_string()}),
    };
    Setting {
        label: x.label,
        packages: 2,
        topology,
        config: json!({"numa_mode": mode, "numa_mode_label": mode_label, "nodes": nodes,
                       "nodes_with_cpus": nodes, "online_cpus": 80, "kernel": "5.14.0",
                       "smt": "off", "acpi_srat": srat, "acpi_slit": slit, "declared": declared}),
        records: Box::new(move |rng| {
            let mut v = vec![
                bw("global", rng.jitter(x.local_gbs, 0.01)),
                bw("interleave", rng.jitter(x.global_gbs, 0.01)),
            ];
            let node_local = x.local_gbs / f64::from(nodes);
            for c in 0..nodes {
                v.push(bw_local(c, rng.jitter(node_local, 0.01)));
                for m in 0..nodes {
                    let same_socket = per_socket == 0 || c / per_socket == m / per_socket;
                    let (ns, gbs) = match (c == m, same_socket) {
                        (true, _) => (x.local_ns, node_local),
                        (false, true) => (x.local_ns * neighbour, node_local / neighbour),
                        // A node's cell into one node of the other socket:
                        // the package's figure shared by its nodes.
                        (false, false) => (x.remote_ns, x.remote_gbs / f64::from(per_socket)),
                    };
                    v.push(lat_cell(c, m, rng.jitter(ns, 0.005)));
                    v.push(bw_cell(c, m, rng.jitter(gbs, 0.01)));
                }
            }
            v
        }),
    }
}

fn study1(neighbour: f64) -> Vec<Setting> {
    XEON.iter().map(|x| xeon_setting(x, neighbour)).collect()
}

/// The study's figure for a metric, per socket where the metric is per
/// package, for the metrics that map onto the study's columns.
fn xeon_figure(x: &Xeon, id: &str) -> Option<f64> {
    Some(match id {
        "global_bw_gbs" => x.local_gbs,
        "local_bw_pkg_gbs" => x.local_gbs / 2.0,
        "interleave_bw_gbs" => x.global_gbs,
        "cross_pkg_bw_gbs" => x.remote_gbs,
        "local_lat_ns" | "thread_lat_ns" => x.local_ns,
        "remote_lat_ns" => x.remote_ns,
        "remote_penalty_ratio" => x.remote_ns / x.local_ns,
        _ => return None,
    })
}

#[test]
fn study1_snc_and_numa_reach_the_published_conclusions() {
    let all: Vec<&str> = XEON.iter().map(|x| x.label).collect();
    for neighbour in [1.1, 1.25, 1.5] {
        let dir = tempfile::tempdir().unwrap();
        let db = import(dir.path(), "xeon-8380", &study1(neighbour), 1);
        for baseline in &all {
            let v = compare_json(&db, &all, Some(baseline));
            let what = format!("neighbour at {neighbour}x, baseline {baseline}");
            // HPC bound per domain (docs/store.md's premise) sees the
            // package's bound bandwidth, then its own domain's latency: the
            // bound figures of SNC2 and SNC4 (580 and 585 GB/s) tie, SNC4's
            // local latency is lower (110 against 115 ns). The experts pick
            // SNC2 for what it keeps of the unbound and cross-socket
            // bandwidth, which a workload bound per domain does not see.
            assert_pick_in(&v, "hpc", "NUMA on, SNC4", "thread_lat_ns", &what);
            let hpc = rec(&v, "hpc")["text"].as_str().unwrap();
            assert!(hpc.contains("numa_mode_label"), "{what}: hpc names the SNC setting: {hpc}");
            assert!(hpc.contains("bios.snc"), "{what}: hpc names the declared setting: {hpc}");
            assert!(!hpc.contains("not measured"), "{what}: {hpc}");
            // OLTP databases, virtualization: node-spanning work keeps the
            // unbound and the cross-package bandwidth; multi-GPU training
            // the cross-package bandwidth once the unbound one ties.
            for p in ["database", "virtualization", "ai-training"] {
                let r = rec(&v, p);
                assert_eq!(
                    r["group"],
                    json!(group_index(&v, "NUMA on, SNC off")),
                    "{what}: {p}: {}",
                    r["text"]
                );
            }
            let ai = rec(&v, "ai-training");
            assert!(
                ai["decided_by"] == "cross_pkg_bw_gbs" || ai["decided_by"] == "interleave_bw_gbs",
                "{what}: {}",
                ai["text"]
            );
            for p in ["database", "virtualization"] {
                let t = rec(&v, p)["text"].as_str().unwrap();
                assert!(
                    t.contains("NUMA on, SNC2 loses on cross-package bandwidth")
                        || t.contains("NUMA on, SNC2 loses on interleaved bandwidth:"),
                    "{what}: {p}: {t}"
                );
            }
            // Keep NUMA on: no profile picks NUMA off.
            let off = group_index(&v, "NUMA off");
            for r in v["recommendations"].as_array().unwrap() {
                assert_ne!(r["group"], json!(off), "{what}: {}", r["text"]);
            }
            let m = metric(&v, "interleave_bw_gbs");
            // SNC off and SNC2 are 2.8% apart in the study, at the 3% margin:
            // the best is SNC off or none, never another.
            let snc_off_i = group_index(&v, "NUMA on, SNC off");
            assert!(
                m["best_group"].is_null() || m["best_group"] == json!(snc_off_i),
                "{what}: {}",
                m["best_group"]
            );
            let off_med = m["groups"][off]["median"].as_f64().unwrap();
            let snc_off =
                m["groups"][group_index(&v, "NUMA on, SNC off")]["median"].as_f64().unwrap();
            assert!((off_med / snc_off - 0.74).abs() < 0.02, "{what}: {off_med} vs {snc_off}");
            // No metric reports a change the study's per-socket figures do
            // not show: every metric that maps onto a column of the study
            // has that column's figure (per socket where it is per package)
            // and never a verdict against the column's direction.
            let base = group_index(&v, baseline);
            for m in v["metrics"].as_array().unwrap() {
                let id = m["metric"].as_str().unwrap();
                for (i, x) in XEON.iter().enumerate() {
                    let g = &m["groups"][group_index(&v, x.label)];
                    let Some(med) = g["median"].as_f64() else { continue };
                    let Some(fig) = xeon_figure(x, id) else { continue };
                    assert!(
                        (med / fig - 1.0).abs() < 0.03,
                        "{what}: {id} of {}: {med} vs the study's {fig}",
                        x.label
                    );
                    let vd = g["verdict"].as_str().unwrap_or("");
                    if vd == "better" || vd == "worse" {
                        let b = &XEON[XEON.iter().position(|y| y.label == *baseline).unwrap()];
                        let seed = fig / xeon_figure(b, id).unwrap() - 1.0;
                        let higher = m["higher_is_better"].as_bool().unwrap();
                        let better = (seed > 0.0) == higher;
                        assert_eq!(
                            vd == "better",
                            better,
                            "{what}: {id} of {} called {vd}, the study moves {:+.1}%",
                            x.label,
                            seed * 100.0
                        );
                        let _ = i;
                    }
                }
                // A node's bandwidth is never judged against a node of
                // another size.
                if id == "local_bw_gbs" || id == "neighbour_bw_gbs" {
                    for (i, g) in m["groups"].as_array().unwrap().iter().enumerate() {
                        if i != base && v["groups"][i]["label"] != v["groups"][base]["label"] {
                            assert!(
                                g["verdict"].is_null(),
                                "{what}: {id} judged across node sizes: {g}"
                            );
                        }
                    }
                }
                assert_ne!(
                    id, "cross_node_bw_gbs",
                    "{what}: the topology says which cells cross the sockets"
                );
                assert!(!id.starts_with("remote_lat_ns_d"), "{what}: SLIT tiers are not metrics");
            }
            assert!(
                v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(
                    "Local bandwidth is not judged between groups whose nodes differ"
                )),
                "{what}: {}",
                v["notes"]
            );
            // Remote figures are impossible with one OS node: never asked for.
            let remote = metric(&v, "remote_lat_ns");
            assert!(remote["groups"][off]["not_applicable"].is_string(), "{what}");
            let neighbour_lat = metric(&v, "neighbour_lat_ns");
            let snc_off = group_index(&v, "NUMA on, SNC off");
            assert!(
                neighbour_lat["groups"][snc_off]["not_applicable"]
                    .as_str()
                    .unwrap()
                    .contains("one node per package"),
                "{what}"
            );
            for r in v["recommendations"].as_array().unwrap() {
                let t = r["text"].as_str().unwrap();
                assert!(!t.contains("remote latency was not measured"), "{what}: {t}");
                // Only figures the study gives within the 3% margin of each
                // other may be left undecided by 3 runs: SNC off against SNC2
                // on unbound bandwidth (2.8% apart), SNC2, SNC4 and NUMA off
                // on bound bandwidth per package (580, 585, 600).
                let rest = t
                    .replace(
                        "nterleaved bandwidth is undecided between NUMA on, SNC off and NUMA on, SNC2",
                        "",
                    )
                    .replace(
                        "ocal bandwidth per package is undecided between NUMA on, SNC2, NUMA on, SNC4 and NUMA off",
                        "",
                    );
                assert!(!rest.contains("undecided"), "{what}: 1% noise decides the rest: {t}");
            }
            assert!(v["groups"].as_array().unwrap().iter().all(|g| g["hidden_numa"].is_null()));
        }
    }
}

// ---------------------------------------------------------------------------
// Study 3's NPS settings (EPYC Milan, 1 socket of 64 cores, 8 channels)
// written as a default `run` stores them: NPS1 / NPS2 / NPS4 are 1 / 2 / 4
// nodes of 64 / 32 / 16 CPUs, SLIT from node 0 in NPS4 `10 11 12 12`
// (STUDIES.md). The study says: small differences, NPS4 the lowest local
// latency, NPS1 the highest per-node bandwidth. The socket's bandwidth is
// therefore written the same in every mode (160 GB/s bound per domain,
// 158 GB/s interleaved) and a node's local figure is its share of it; the
// local latency falls from NPS1 to NPS4 (112, 108, 104 ns: the study gives
// the order, the test needs one figure each, 3.6% apart, beyond the 3%
// margin), neighbour cells at SLIT 11 and 12 take 1.08x and 1.15x it.

fn milan_nps(label: &'static str, nps: u32, local_ns: f64) -> Setting {
    let near = |a: u32, b: u32| if a / 2 == b / 2 { 11 } else { 12 };
    let topology = socket_topology(
        topo::Vendor::Amd,
        "AMD EPYC 7763 64-Core Processor",
        1,
        64,
        nps,
        &near,
        32,
    );
    let slit = slit_text(&topology);
    Setting {
        label,
        packages: 1,
        topology,
        config: json!({"numa_mode": if nps == 1 { "node-per-package" } else { "nodes-per-package" },
                       "numa_mode_label": format!("NPS{nps}"), "nodes": nps, "nodes_with_cpus": nps,
                       "online_cpus": 64, "kernel": "6.1.0",
                       "acpi_srat": format!("{nps} proximity domains ({nps} with CPUs, {nps} with memory)"),
                       "acpi_slit": slit,
                       "declared": {"bios.nps": nps.to_string()}}),
        records: Box::new(move |rng| {
            let mut v = vec![
                bw("global", rng.jitter(160.0, 0.01)),
                bw("interleave", rng.jitter(158.0, 0.01)),
            ];
            let node_local = 160.0 / f64::from(nps);
            for c in 0..nps {
                v.push(bw_local(c, rng.jitter(node_local, 0.01)));
                for m in 0..nps {
                    let f = match (c == m, c / 2 == m / 2) {
                        (true, _) => 1.0,
                        (false, true) => 1.08,
                        (false, false) => 1.15,
                    };
                    v.push(lat_cell(c, m, rng.jitter(local_ns * f, 0.005)));
                    v.push(bw_cell(c, m, rng.jitter(node_local / f, 0.01)));
                }
            }
            v
        }),
    }
}

#[test]
fn study3_nps_modes_compare_like_scopes() {
    let dir = tempfile::tempdir().unwrap();
    let settings =
        vec![milan_nps("NPS1", 1, 112.0), milan_nps("NPS2", 2, 108.0), milan_nps("NPS4", 4, 104.0)];
    let db = import(dir.path(), "milan-64", &settings, 3);
    for baseline in ["NPS1", "NPS2", "NPS4"] {
        let v = compare_json(&db, &["NPS1", "NPS2", "NPS4"], Some(baseline));
        let what = format!("baseline {baseline}");
        let base = group_index(&v, baseline);
        // The socket's bandwidth is the same in every mode: never better or
        // worse, bound or unbound, per package or whole machine.
        for id in ["global_bw_gbs", "local_bw_pkg_gbs", "interleave_bw_gbs"] {
            for g in metric(&v, id)["groups"].as_array().unwrap() {
                let vd = g["verdict"].as_str().unwrap_or("same");
                assert!(vd == "same" || vd == "undecided", "{what}: {id}: {g}");
            }
        }
        // NPS1 has the highest per-node bandwidth: shown (a node of 8
        // channels against one of 2), never judged as a change.
        let local = metric(&v, "local_bw_gbs");
        let med = |i: usize| local["groups"][i]["median"].as_f64().unwrap();
        let (n1, n2, n4) =
            (group_index(&v, "NPS1"), group_index(&v, "NPS2"), group_index(&v, "NPS4"));
        assert!(med(n1) > med(n2) && med(n2) > med(n4), "{what}: {local}");
        for (i, g) in local["groups"].as_array().unwrap().iter().enumerate() {
            assert!(i == base || g["verdict"].is_null(), "{what}: per-node bandwidth judged: {g}");
        }
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("1 node of 64 CPUs on 1 package")
                && notes.contains("4 nodes of 16 CPUs on 1 package"),
            "{what}: {notes}"
        );
        // NPS4 gives the lowest local latency: latency-sensitive and HPC
        // work bound per domain pick it (HPC once the package's bandwidth
        // ties).
        assert_pick_in(&v, "latency", "NPS4", "thread_lat_ns", &what);
        assert_pick_in(&v, "hpc", "NPS4", "thread_lat_ns", &what);
        let hpc = rec(&v, "hpc")["text"].as_str().unwrap();
        assert!(hpc.contains("tie on local bandwidth per package"), "{what}: {hpc}");
        // A database's spread latency is its node's and its neighbours'
        // in proportion: the three modes tie on it, and the profile says
        // so instead of picking.
        let db = rec(&v, "database");
        assert!(db["group"].is_null(), "{what}: {}", db["text"]);
        assert_eq!(db["no_pick"]["reason"], "tie", "{what}: {db}");
        assert_eq!(db["no_pick"]["groups"].as_array().map(Vec::len), Some(3), "{what}: {db}");
        // One socket: nothing crosses a socket link, nothing is asked of it.
        for id in ["remote_lat_ns", "cross_pkg_bw_gbs", "remote_penalty_ratio"] {
            assert!(
                v["metrics"].as_array().unwrap().iter().all(|m| m["metric"] != id),
                "{what}: {id}"
            );
        }
        for r in v["recommendations"].as_array().unwrap() {
            let t = r["text"].as_str().unwrap();
            assert!(
                !t.contains("cross-package bandwidth") && !t.contains("remote penalty"),
                "{what}: {t}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Study 5: numa=off hides NUMA, it does not remove it. Two sockets of 48
// CPUs; per-CPU latency of all 96 CPUs to node 0 (no `lat-summary`: the
// groups are recomputed from the per-CPU results) and the latency matrix
// `run` stores. NUMA on: local 67.7 ns, remote ~100 ns; NUMA on +
// numa=off: the OS shows one node, its "local" latency is CPU 0's (67.5
// ns) while half the CPUs see ~100 ns; BIOS NUMA off (firmware
// interleave): every CPU sees the interleaved average (~87 ns), with or
// without numa=off.

fn per_cpu(cpu: u32, node: u32, ns: f64) -> (&'static str, Value) {
    (
        "lat",
        json!({"mode": "per-cpu", "cpu": cpu, "cpu_node": node, "mem_node": 0,
                   "median_ns": ns, "noise_pct": 0.5, "samples": 11}),
    )
}

fn study5_setting(label: &'static str, bios_numa: bool, numa_off: bool) -> Setting {
    study5_measured(label, bios_numa, numa_off, true)
}

/// A study-5 configuration; `matrix`: with the latency matrix `run`
/// stores, else per-CPU latency only (the seed's lmbench method).
fn study5_measured(label: &'static str, bios_numa: bool, numa_off: bool, matrix: bool) -> Setting {
    let os_nodes: u32 = if bios_numa && !numa_off { 2 } else { 1 };
    let mut config = json!({
        "numa_mode": if os_nodes == 2 { "node-per-package" } else { "single-node" },
        "nodes": os_nodes, "kernel": "6.1.0",
        "acpi_srat": if bios_numa { "2 proximity domains (2 with CPUs, 2 with memory)" }
                     else { "1 proximity domain (1 with CPUs, 1 with memory)" },
    });
    if numa_off {
        config["cmdline_options"] = json!({"numa": "off"});
    }
    Setting {
        topology: json!({}),
        label,
        packages: 2,
        config,
        records: Box::new(move |rng| {
            let mut v = Vec::new();
            for cpu in 0..96u32 {
                let socket = cpu / 48;
                let ns = match (bios_numa, socket) {
                    (true, 0) => 67.6,
                    (true, _) => 100.6,
                    (false, _) => 87.0,
                };
                let node = if os_nodes == 2 { socket } else { 0 };
                v.push(per_cpu(cpu, node, rng.jitter(ns, 0.005)));
            }
            if !matrix {
                return v;
            }
            if os_nodes == 2 {
                v.push(lat_cell(0, 0, rng.jitter(67.7, 0.004)));
                v.push(lat_cell(1, 1, rng.jitter(67.7, 0.004)));
                v.push(lat_cell(0, 1, rng.jitter(100.5, 0.004)));
                v.push(lat_cell(1, 0, rng.jitter(100.5, 0.004)));
            } else {
                // CPU 0 to the one node: local when the firmware keeps NUMA.
                v.push(lat_cell(0, 0, rng.jitter(if bios_numa { 67.5 } else { 87.0 }, 0.004)));
            }
            v
        }),
    }
}

fn study5() -> Vec<Setting> {
    vec![
        study5_setting("BIOS NUMA on", true, false),
        study5_setting("BIOS NUMA on + numa=off", true, true),
        study5_setting("BIOS NUMA off", false, false),
        study5_setting("BIOS NUMA off + numa=off", false, true),
    ]
}

const STUDY5: [&str; 4] =
    ["BIOS NUMA on", "BIOS NUMA on + numa=off", "BIOS NUMA off", "BIOS NUMA off + numa=off"];

#[test]
fn study5_numa_off_hides_the_split_under_every_baseline_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = import(dir.path(), "two-socket-96", &study5(), 5);
    // Every group as the baseline, the others forwards and backwards.
    for base in STUDY5 {
        for reverse in [false, true] {
            let mut order: Vec<&str> = STUDY5.iter().copied().filter(|&g| g != base).collect();
            if reverse {
                order.reverse();
            }
            order.insert(0, base);
            let v = compare_json(&db, &order, None);
            let what = format!("order {order:?}");
            let hidden = group_index(&v, "BIOS NUMA on + numa=off");
            // Latency-sensitive and database work: NUMA on, bound locally,
            // decided by the latency a thread sees.
            assert_pick(&v, "latency", "BIOS NUMA on", "thread_lat_ns");
            // A database's buffer pool spans the nodes: the spread latency.
            assert_pick(&v, "database", "BIOS NUMA on", "spread_lat_ns");
            for p in ["latency", "database"] {
                let r = rec(&v, p);
                assert_eq!(r["excluded"], json!([hidden]), "{what}: {p}");
                let t = r["text"].as_str().unwrap();
                assert!(t.contains("hides the split"), "{what}: {p}: {t}");
                assert!(!t.contains("undecided"), "{what}: {p}: {t}");
                assert!(!t.contains("remote latency"), "{what}: {p}: impossible metric asked: {t}");
                assert!(
                    t.contains("acpi_srat") || t.contains("nodes"),
                    "{what}: {p}: no diff: {t}"
                );
            }
            // The hidden split is found from the per-CPU results alone, in
            // this group only; firmware interleave shows a uniform latency.
            for (i, g) in v["groups"].as_array().unwrap().iter().enumerate() {
                assert_eq!(g["hidden_numa"].is_string(), i == hidden, "{what}: {g}");
            }
            let h = v["groups"][hidden]["hidden_numa"].as_str().unwrap();
            assert!(h.contains("48 CPUs at") && h.contains("2 packages"), "{what}: {h}");
            let split = metric(&v, "per_cpu_split_to_node0");
            assert_eq!(split["groups"][hidden]["median"].as_f64().map(|x| x > 1.4), Some(true));
            // The 0.2 ns tie on CPU 0's local latency is never a best.
            let local = metric(&v, "local_lat_ns");
            assert_ne!(local["best_group"], json!(hidden), "{what}");
            let best: Vec<i64> = v["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["best_group"].as_i64())
                .collect();
            assert!(!best.contains(&(hidden as i64)) || split["best_group"] != json!(hidden));
            // Remote latency is impossible with one OS node, never asked for.
            let remote = metric(&v, "remote_lat_ns");
            for (i, g) in remote["groups"].as_array().unwrap().iter().enumerate() {
                let one_node = v["groups"][i]["one_node"].as_bool().unwrap();
                assert_eq!(g["not_applicable"].is_string(), one_node, "{what}: {g}");
            }
            // The two numa=off configurations are told apart by the
            // firmware's SRAT, never pooled as one configuration.
            let d = v["settings_diff"].as_array().unwrap();
            assert!(d.iter().any(|d| d["setting"] == "acpi_srat"), "{what}: {d:?}");
        }
    }
    let text = compare_text(&db, &STUDY5);
    eprintln!("{text}");
    assert!(text.contains("latency: "), "{text}");
}

// ---------------------------------------------------------------------------
// Study 3: EPYC Milan, 1 socket: BIOS settings the OS cannot see, declared
// with `--set`, judged by the program's own score (`exec --metric`, SPEC
// CPU 2017 integer rate, higher is better). SMT: +10%, boost: +15%, both:
// +30% against both off; NPS1 vs NPS4: about 1%; memory interleaving
// disabled: -30% at NPS1.

fn exec_rec(policy: &str, metric: f64, wall: f64, higher: bool) -> (&'static str, Value) {
    (
        "exec",
        json!({"policy": policy, "placement": "", "runs": [], "ok_runs": 3,
                    "median_metric": metric, "median_wall_s": wall, "verdict": "baseline",
                    "metric_higher_is_better": higher}),
    )
}

fn milan(label: &'static str, declared: Value, score: f64) -> Setting {
    Setting {
        topology: json!({}),
        label,
        packages: 1,
        config: json!({"numa_mode": "node-per-package", "nodes": 1, "kernel": "6.1.0",
                       "acpi_srat": "1 proximity domain (1 with CPUs, 1 with memory)",
                       "declared": declared}),
        records: Box::new(move |rng| {
            vec![exec_rec(
                "default",
                rng.jitter(score, 0.01),
                rng.jitter(3600.0 * 100.0 / score, 0.01),
                true,
            )]
        }),
    }
}

#[test]
fn study3_milan_settings_are_judged_by_the_program_score() {
    let dir = tempfile::tempdir().unwrap();
    let d = |smt: &str, boost: &str| json!({"bios.smt": smt, "bios.boost": boost, "bios.nps": "1"});
    let db = import(
        dir.path(),
        "milan",
        &[
            milan("SMT off, boost off", d("off", "off"), 100.0),
            milan("SMT on, boost off", d("on", "off"), 110.0),
            milan("SMT off, boost on", d("off", "on"), 115.0),
            milan("SMT on, boost on", d("on", "on"), 130.0),
            milan("NPS4", json!({"bios.smt": "on", "bios.boost": "on", "bios.nps": "4"}), 131.3),
            milan(
                "interleave off",
                json!({"bios.smt": "on", "bios.boost": "on", "bios.nps": "1", "bios.mem_interleave": "off"}),
                91.0,
            ),
        ],
        3,
    );
    let four = ["SMT off, boost off", "SMT on, boost off", "SMT off, boost on", "SMT on, boost on"];
    let v = compare_json(&db, &four, None);
    // The program's metric is a study metric: one row, higher is better.
    let m = metric(&v, "exec_metric[default]");
    assert_eq!(m["higher_is_better"], true);
    for (i, want) in [(1, 10.0), (2, 15.0), (3, 30.0)] {
        let c = &m["groups"][i];
        assert_eq!(c["verdict"], "better", "{c}");
        assert!((c["change_pct"].as_f64().unwrap() - want).abs() < 3.0, "{c}");
    }
    assert_eq!(m["best_group"], json!(3));
    assert!(metric(&v, "exec_wall_s[default]")["higher_is_better"] == false);
    assert_pick(&v, "program", "SMT on, boost on", "exec_metric[default]");
    let t = rec(&v, "program")["text"].as_str().unwrap();
    assert!(
        t.contains("declared.bios.smt (off -> on)")
            && t.contains("declared.bios.boost (off -> on)"),
        "the declared settings explain the winner: {t}"
    );
    // NPS1 against NPS4: about 1%, inside the margin: never better or
    // worse (same, or undecided with three runs of 1% noise), no pick.
    let v = compare_json(&db, &["SMT on, boost on", "NPS4"], None);
    let verdict = &metric(&v, "exec_metric[default]")["groups"][1]["verdict"];
    assert!(verdict == "same" || verdict == "undecided", "{verdict}");
    assert!(rec(&v, "program")["group"].is_null(), "{}", rec(&v, "program")["text"]);
    // Memory interleaving disabled: about -30%, worse; keep it enabled.
    let v = compare_json(&db, &["SMT on, boost on", "interleave off"], None);
    let c = &metric(&v, "exec_metric[default]")["groups"][1];
    assert_eq!(c["verdict"], "worse", "{c}");
    assert!((c["change_pct"].as_f64().unwrap() + 30.0).abs() < 3.0, "{c}");
    assert_pick(&v, "program", "SMT on, boost on", "exec_metric[default]");
    assert!(rec(&v, "program")["text"].as_str().unwrap().contains("declared.bios.mem_interleave"));
    let text = compare_text(&db, &four);
    eprintln!("{text}");
    assert!(text.contains("Program metric"), "{text}");
    // Runs of `exec` only: the program profile alone speaks; no machine
    // profile lists what `run` measures as not measured.
    let v = compare_json(&db, &four, None);
    let profiles: Vec<&Value> =
        v["recommendations"].as_array().unwrap().iter().map(|r| &r["profile"]).collect();
    assert_eq!(profiles, [&json!("program")], "{}", v["recommendations"]);
    for gone in ["was not measured", "the `lat-matrix` step", "database:", "latency:"] {
        assert!(!text.contains(gone), "{gone:?} in:\n{text}");
    }
}

/// A study on one OS node (as `study --vary thp_enabled=madvise,always
/// -- --quick` runs on a one-node machine): local and global bandwidth and
/// the one latency cell, no interleaved, cross-node or remote figure,
/// because `run` plans no step for them on one node. Global bandwidth has
/// a 12% spread over 20 repetitions, as on a busy machine.
fn one_node_study(dir: &Path) -> PathBuf {
    let one_node = |label: &'static str, thp: &str, gbs: f64, ns: f64| Setting {
        topology: json!({}),
        label,
        packages: 1,
        config: json!({"nodes": 1, "kernel": "6.1.0", "thp_enabled": thp}),
        records: Box::new(move |rng| {
            vec![
                bw("local", rng.jitter(gbs, 0.01)),
                (
                    "bw",
                    json!({"mode": "global", "kernel": "triad", "best_gbs": rng.jitter(gbs * 1.1, 0.01),
                           "median_gbs": gbs, "spread_pct": 12.0, "reps": 20}),
                ),
                lat_cell(0, 0, rng.jitter(ns, 0.005)),
            ]
        }),
    };
    import(
        dir,
        "one-node",
        &[one_node("madvise", "madvise", 151.3, 120.0), one_node("always", "always", 153.7, 118.0)],
        11,
    )
}

/// The recommendations of a one-node study never ask for a step that
/// needs two or more nodes.
#[test]
fn a_one_node_study_asks_for_no_two_node_step() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_node_study(dir.path());
    let v = compare_json(&db, &["madvise", "always"], None);
    assert!(
        v["groups"].as_array().unwrap().iter().all(|g| g["one_node"] == true),
        "{}",
        v["groups"]
    );
    for r in v["recommendations"].as_array().unwrap() {
        let t = r["text"].as_str().unwrap();
        for step in ["bw-interleave", "bw-matrix", "interleaved bandwidth", "remote"] {
            assert!(!t.contains(step), "{}: asks for {step:?}: {t}", r["profile"]);
        }
    }
    let text = compare_text(&db, &["madvise", "always"]);
    assert!(!text.contains("bw-interleave"), "{text}");
}

/// One statistic per figure: `compare` prints each group's median as the
/// runs' own tables write it (12% spread: 2 or 3 digits), `--json` keeps
/// the unrounded value.
#[test]
fn compare_rounds_a_group_as_its_runs_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = one_node_study(dir.path());
    let v = compare_json(&db, &["madvise", "always"], None);
    let text = compare_text(&db, &["madvise", "always"]);
    let row = text.lines().find(|l| l.starts_with("Global bandwidth (GB/s)")).unwrap();
    let cells: Vec<&str> = row.split(" (n=3)").collect();
    for (i, g) in ["madvise", "always"].iter().enumerate() {
        let m = metric(&v, "global_bw_gbs")["groups"][i]["median"].as_f64().unwrap();
        assert!(m.fract() != 0.0, "{g}: {m}");
        let shown = cells[i].split_whitespace().last().unwrap();
        let x: f64 = shown.parse().unwrap();
        assert!(!shown.contains('.') && (x / m - 1.0).abs() < 0.03, "{g}: {m} shown as {row}");
    }
}

#[test]
fn runs_nothing_told_apart_are_named_and_the_user_is_told_to_declare() {
    // The same Milan configuration twice under two labels, nothing
    // declared: the study says so and suggests --set.
    let dir = tempfile::tempdir().unwrap();
    let same = json!({});
    let db = import(
        dir.path(),
        "undeclared",
        &[milan("first try", same.clone(), 100.0), milan("second try", same, 130.0)],
        7,
    );
    let v = compare_json(&db, &["first try", "second try"], None);
    assert!(v["settings_diff"].as_array().unwrap().is_empty());
    let notes = v["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("--set")), "{notes:?}");
}

// ---------------------------------------------------------------------------
// Study 4: EPYC 7543P, 2 sockets (distances 10/32), validated with a
// runner over numactl policies running sysbench memory (MiB/s, higher is
// better): one `exec` run per policy. Remote binding costs about a third
// of the bandwidth; interleave sits between (taken here at the midpoint,
// which the study does not give: only its order is asserted).

fn epyc_policy(label: &'static str, policy: &'static str, mibs: f64, higher: bool) -> Setting {
    Setting {
        topology: json!({}),
        label,
        packages: 2,
        config: json!({"numa_mode": "node-per-package", "nodes": 2, "kernel": "6.1.0",
                       "acpi_srat": "2 proximity domains (2 with CPUs, 2 with memory)",
                       "acpi_slit": "10 32 / 32 10"}),
        records: Box::new(move |rng| vec![exec_rec(policy, rng.jitter(mibs, 0.01), 10.0, higher)]),
    }
}

#[test]
fn study4_remote_binding_costs_a_third_and_interleave_sits_between() {
    let dir = tempfile::tempdir().unwrap();
    let db = import(
        dir.path(),
        "epyc-7543p",
        &[
            epyc_policy("local bind", "local:0", 12000.0, true),
            epyc_policy("remote bind", "remote:0/1", 8000.0, true),
            epyc_policy("interleave", "interleave", 10000.0, true),
        ],
        4,
    );
    let v = compare_json(&db, &["remote bind", "local bind", "interleave"], None);
    let m = metric(&v, "exec_metric");
    let local = group_index(&v, "local bind");
    let il = group_index(&v, "interleave");
    assert_eq!(m["groups"][local]["verdict"], "better");
    let c = m["groups"][local]["change_pct"].as_f64().unwrap();
    assert!((c - 50.0).abs() < 5.0, "local is +50% over remote (remote -33%): {c}");
    assert_eq!(m["groups"][il]["verdict"], "better");
    let (lm, im) = (
        m["groups"][local]["median"].as_f64().unwrap(),
        m["groups"][il]["median"].as_f64().unwrap(),
    );
    assert!(im < lm && im > m["groups"][0]["median"].as_f64().unwrap());
    assert_pick(&v, "program", "local bind", "exec_metric");
    let t = rec(&v, "program")["text"].as_str().unwrap();
    assert!(t.contains("exec.policies ("), "the policy explains the winner: {t}");
}

#[test]
fn an_exec_metric_recorded_lower_is_better_is_judged_that_way() {
    // The same figures recorded as a time the program prints
    // (`--metric-lower-is-better`): the smallest value wins.
    let dir = tempfile::tempdir().unwrap();
    let db = import(
        dir.path(),
        "lower",
        &[
            epyc_policy("local bind", "local:0", 12000.0, false),
            epyc_policy("remote bind", "remote:0/1", 8000.0, false),
        ],
        9,
    );
    let v = compare_json(&db, &["local bind", "remote bind"], None);
    let m = metric(&v, "exec_metric");
    assert_eq!(m["higher_is_better"], false);
    assert_eq!(m["groups"][1]["verdict"], "better");
    assert_pick(&v, "program", "remote bind", "exec_metric");
}

// ---------------------------------------------------------------------------
// Real `exec` runs on this machine: the program's metric and its recorded
// direction reach `compare`.

#[test]
fn compare_of_two_real_exec_runs_shows_the_program_metric() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("exec.db");
    let exec = |label: &str, value: &str, dir_flag: &str| {
        let mut c = np(&db);
        c.env("NUMAPROBE_LOCK", dir.path().join("measure.lock")).args([
            "exec",
            "--policies",
            "default",
            "--repeat",
            "3",
            "--metric",
            "score=([0-9.]+)",
            dir_flag,
            "--label",
            label,
            "--set",
            &format!("bios.smt={label}"),
            "--",
            "sh",
            "-c",
            &format!("echo score={value}"),
        ]);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    exec("off", "100", "--metric-lower-is-better");
    exec("on", "130", "--metric-lower-is-better");
    let out = np(&db).args(["--json", "compare", "1", "2"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = metric(&v, "exec_metric[default]");
    assert_eq!(m["higher_is_better"], false, "the recorded direction: {m}");
    assert_eq!(m["groups"][0]["median"], 100.0);
    assert_eq!(m["groups"][1]["median"], 130.0);
    assert!((m["groups"][1]["change_pct"].as_f64().unwrap() - 30.0).abs() < 1e-9);
    metric(&v, "exec_wall_s[default]");
    let d = v["settings_diff"].as_array().unwrap();
    assert!(d.iter().any(|d| d["setting"] == "declared.bios.smt"), "{d:?}");
}

#[test]
fn study5_two_groups_numa_on_against_numa_off_over_numa_firmware() {
    // The smallest form of the study: NUMA on against numa=off over a
    // NUMA firmware. CPU 0's latency is a tie (67.7 against 67.5 ns), yet
    // latency-sensitive work must keep NUMA on: the other configuration
    // hides the split.
    let dir = tempfile::tempdir().unwrap();
    let db = import(dir.path(), "two-socket-pair", &study5()[..2], 6);
    for order in [[STUDY5[0], STUDY5[1]], [STUDY5[1], STUDY5[0]]] {
        let v = compare_json(&db, &order, None);
        let on = group_index(&v, "BIOS NUMA on");
        for p in ["latency", "database"] {
            let r = rec(&v, p);
            assert_eq!(r["group"], json!(on), "{order:?} {p}: {}", r["text"]);
        }
        assert_ne!(metric(&v, "local_lat_ns")["best_group"], json!(1 - on), "{order:?}");
    }
}

/// Study 5 measured the seed's way: `lat --per-cpu --mem-node 0` only, no
/// matrix (what the seed did with lmbench per CPU). The CPUs on node 0 give
/// the local latency, the other socket's the remote one: NUMA on is picked
/// for latency-sensitive work and for databases, whatever the baseline.
#[test]
fn study5_measured_per_cpu_only_picks_numa_on() {
    let dir = tempfile::tempdir().unwrap();
    let settings = vec![
        study5_measured("BIOS NUMA on", true, false, false),
        study5_measured("BIOS NUMA on + numa=off", true, true, false),
        study5_measured("BIOS NUMA off", false, false, false),
        study5_measured("BIOS NUMA off + numa=off", false, true, false),
    ];
    let db = import(dir.path(), "two-socket-per-cpu", &settings, 55);
    for base in STUDY5 {
        let v = compare_json(&db, &STUDY5, Some(base));
        let what = format!("baseline {base}");
        assert_pick_in(&v, "latency", "BIOS NUMA on", "thread_lat_ns", &what);
        assert_pick_in(&v, "database", "BIOS NUMA on", "spread_lat_ns", &what);
        let on = group_index(&v, "BIOS NUMA on");
        // Local and remote latency derived from the per-CPU results.
        let local = metric(&v, "local_lat_ns")["groups"][on]["median"].as_f64().unwrap();
        let remote = metric(&v, "remote_lat_ns")["groups"][on]["median"].as_f64().unwrap();
        assert!(
            (local - 67.6).abs() < 0.5 && (remote - 100.6).abs() < 0.5,
            "{what}: {local} {remote}"
        );
        for p in ["latency", "database"] {
            let t = rec(&v, p)["text"].as_str().unwrap();
            assert!(t.contains("hides the split"), "{what}: {p}: {t}");
        }
    }
}

/// Runs labelled X (score 40) and Y (score 30), taken X Y X Y X Y with no
/// spread inside either group and nothing recorded or declared that
/// differs: the labels are the user's statement that something does, so
/// the noise floor never pools X with Y (which made "-25% undecided,
/// within the 249.8% by which identical settings can differ").
#[test]
fn alternated_labels_with_a_steady_gap_are_decided() {
    let dir = tempfile::tempdir().unwrap();
    let same = || json!({"numa_mode": "single-node", "nodes": 1, "kernel": "6.1.0"});
    let program = |label: &'static str, score: f64| Setting {
        label,
        packages: 1,
        topology: json!({}),
        config: same(),
        records: Box::new(move |_| vec![exec_rec("default", score, 10.0, true)]),
    };
    let db = import(dir.path(), "xy", &[program("X", 40.0), program("Y", 30.0)], 77);
    let v = compare_json(&db, &["X", "Y"], None);
    let m = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"].as_str().unwrap().starts_with("exec_metric"))
        .unwrap_or_else(|| panic!("no program metric: {}", v["metrics"]));
    let y = &m["groups"][group_index(&v, "Y")];
    assert_eq!(y["verdict"], "worse", "{y}");
    assert!((y["change_pct"].as_f64().unwrap() + 25.0).abs() < 1e-9, "{y}");
    let floor = y["noise_floor_pct"].as_f64().unwrap_or(0.0);
    assert!(floor < 1.0, "the floor pooled X with Y: {y}");
    let r = rec(&v, "program");
    assert_eq!(r["group"], json!(group_index(&v, "X")), "{}", r["text"]);
    // Nothing recorded differs: the study still says so.
    assert!(v["notes"].to_string().contains("--set"), "{}", v["notes"]);
}
