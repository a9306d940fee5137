//! The published settings studies of `../shared/STUDIES.md` (1, 3, 4 and 5)
//! as numaprobe studies, in numaprobe's own export format
//! (`numaprobe-export` version 1), three runs per configuration with
//! deterministic run-to-run noise (about 1% for bandwidth and program
//! scores, 0.5% for latency), imported into a temporary store and compared
//! with the real binary. The tests check that `compare --json` reaches the
//! study's published conclusion for the right reason: the metric that
//! decides it, and the settings diff it names.
//!
//! Studies 1, 3 (NPS) and 5, which compare NUMA modes, come from the
//! machine model of crates/simmodel: the study's machine as hardware
//! limits, its runs as `run` stores them (cells measured alone, package
//! figures measured together), and its truth from the profiles' premises;
//! the study's conclusion is checked against the model's truth, and
//! `compare` against both. The program-score studies (3's BIOS settings,
//! 4) use the study's own scores as `exec` records.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{json, Value};
use simmodel::facts::Setting as ModelSetting;
use simmodel::runs::{Budget as ModelBudget, Study as ModelStudy};
use simmodel::truth::{truths, Bands, Truth};
use simmodel::view::View;

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

// ---------------------------------------------------------------------------
// Studies 1, 3 (NPS) and 5 come from the machine model of crates/simmodel:
// each study's machine as hardware facts (simmodel::studies: packages,
// cores, channels and DIMM rate, lines in flight per core, socket link,
// mesh, latencies by relation, read back from the study's own figures),
// its runs written as `run` stores them on each setting's topology (every
// step of the plan: cells measured alone, package figures measured
// together), alternated A B .. B A with 1% (bandwidth) and 0.5% (latency)
// run-to-run noise. Nothing divides a package's figure among its nodes:
// a node alone gets what its cores pull, capped by its channels or the
// link. The model's truth (simmodel::truth: the premises on the model's
// noise-free figures) is checked against the study's conclusion, and
// `compare` against the truth.

/// Writes the export of a modelled study and imports it into a new store;
/// returns the store's path.
fn import_model(dir: &Path, name: &str, s: &ModelStudy) -> PathBuf {
    let doc = simmodel::runs::export(&s.runs());
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, doc.to_string()).unwrap();
    if let Some(keep) = std::env::var_os("NUMAPROBE_KEEP_STUDY_EXPORTS") {
        let _ = std::fs::write(
            Path::new(&keep).join(format!("{name}-{}.json", s.seed)),
            doc.to_string(),
        );
    }
    let db = dir.join(format!("{name}.db"));
    np(&db).arg("import").arg(&file).assert().success();
    db
}

/// The model's truth per profile for a study (margin 3%; a comparison
/// within three times the study's noise of the margin may go either way).
fn model_truth(s: &ModelStudy) -> Vec<Truth> {
    let views: Vec<View> = s.settings.iter().map(|x| View::new(&s.machine, *x)).collect();
    truths(&views, 0.03, Bands::of(&s.noise, 3.0))
}

fn truth_of<'a>(t: &'a [Truth], profile: &str) -> &'a Truth {
    t.iter().find(|t| t.profile == profile).unwrap_or_else(|| panic!("no truth for {profile}"))
}

/// `compare`'s pick for `profile` is one the model's truth allows.
fn assert_pick_allowed(v: &Value, s: &ModelStudy, t: &[Truth], profile: &str, what: &str) {
    let r = rec(v, profile);
    let allowed: Vec<usize> =
        truth_of(t, profile).acceptable.iter().map(|&i| group_index(v, &s.labels[i])).collect();
    if let Some(g) = r["group"].as_u64() {
        assert!(
            allowed.contains(&(g as usize)),
            "{what}: {profile} picks {} where the model's truth allows {:?}: {}",
            v["groups"][g as usize]["label"],
            truth_of(t, profile).acceptable.iter().map(|&i| &s.labels[i]).collect::<Vec<_>>(),
            r["text"]
        );
    }
}

// Study 1: Xeon Platinum 8380, 2 sockets, BIOS NUMA on/off x SNC, as a
// default `run` stores each mode (STUDIES.md, "What a real machine
// reports in each mode"): SNC off 2 nodes of 40 CPUs, SLIT 10 20; SNC2 4
// nodes of 20 CPUs, SLIT 10 11 21 21; SNC4 8 nodes of 10 CPUs; BIOS NUMA
// off 1 node of 80 CPUs, no SRAT; declared `bios.numa` and `bios.snc`.
// The sibling cluster's latency, which the study does not give, is 1.1,
// 1.25 and 1.5 times SNC off's local latency: no pick may depend on it.

const XEON: [&str; 4] = ["NUMA on, SNC off", "NUMA on, SNC2", "NUMA on, SNC4", "NUMA off"];

fn xeon_study(neighbour: f64) -> ModelStudy {
    let mut m = simmodel::studies::xeon_8380();
    for c in m.clusterings.iter_mut().filter(|c| c.domains > 1) {
        c.neighbour = neighbour;
        c.far_neighbour = neighbour;
    }
    let settings = vec![
        ModelSetting::domains(1),
        ModelSetting::domains(2),
        ModelSetting::domains(4),
        ModelSetting::bios_numa_off(),
    ];
    let mut s = ModelStudy::new(m, settings, 3, 1);
    s.labels = XEON.iter().map(|l| l.to_string()).collect();
    s.budget = ModelBudget::Default;
    s
}

/// The study's figure for a metric, per socket where the metric is per
/// package, for the metrics that map onto the study's columns ("local" is
/// STREAM bound per domain: `global_bw_gbs`; "global" unbound:
/// `interleave_bw_gbs`; "remote GB/s" one socket reading the other's
/// memory: `cross_pkg_bw_gbs`). Under NUMA off the one OS node's bound
/// figure is the firmware's interleave, the study's 400 GB/s (its "600 (one
/// node)" is above every bound figure it gives with NUMA on, which the
/// same DIMMs cannot do), and its "380 (average)" is every CPU's latency.
fn xeon_figure(label: &str, id: &str) -> Option<f64> {
    let (local, global, local_ns, remote_ns, remote) = match label {
        "NUMA on, SNC off" => (550.0, 540.0, 130.0, 450.0, 250.0),
        "NUMA on, SNC2" => (580.0, 525.0, 115.0, 470.0, 220.0),
        "NUMA on, SNC4" => (585.0, 510.0, 110.0, 490.0, 200.0),
        _ => {
            return match id {
                "global_bw_gbs" => Some(400.0),
                "local_bw_pkg_gbs" => Some(200.0),
                "thread_lat_ns" | "spread_lat_ns" => Some(380.0),
                _ => None,
            }
        }
    };
    Some(match id {
        "global_bw_gbs" => local,
        "local_bw_pkg_gbs" => local / 2.0,
        "interleave_bw_gbs" => global,
        "cross_pkg_bw_gbs" => remote,
        "local_lat_ns" | "thread_lat_ns" => local_ns,
        "remote_lat_ns" => remote_ns,
        "remote_penalty_ratio" => remote_ns / local_ns,
        _ => return None,
    })
}

/// The model's truth on the Xeon 8380 against the study's conclusion.
/// Where they agree: SNC off for OLTP databases, virtualization and
/// multi-GPU training, never NUMA off. Where they do not: bound HPC work.
/// The study picks SNC2 "(+5-7% local bandwidth, lower local latency)";
/// on its own figures SNC4 has as much bound bandwidth (585 against 580
/// GB/s, inside the margin) and a lower local latency (110 against 115 ns),
/// and what SNC2 keeps over SNC4 is the unbound bandwidth (525 against 510
/// GB/s), which the premise of a job bound per domain never touches
/// (docs/store.md, "Recommendations": no guard). So the truth picks SNC4,
/// with SNC2 within the band (the latencies 4.3% apart, near the margin).
#[test]
fn study1_the_models_truth_against_the_published_conclusion() {
    for neighbour in [1.1, 1.25, 1.5] {
        let s = xeon_study(neighbour);
        let t = model_truth(&s);
        let what = format!("sibling at {neighbour}x: {t:?}");
        let label = |p: &str| truth_of(&t, p).pick.map(|i| s.labels[i].as_str());
        for p in ["database", "virtualization", "ai-training"] {
            assert_eq!(label(p), Some("NUMA on, SNC off"), "{p}: {what}");
        }
        assert_eq!(label("hpc"), Some("NUMA on, SNC4"), "{what}");
        assert_eq!(truth_of(&t, "hpc").decided_by.map(|f| f.metric_id()), Some("thread_lat_ns"));
        assert!(truth_of(&t, "hpc").acceptable.contains(&1), "SNC2 within the band: {what}");
        for x in &t {
            assert!(!x.acceptable.contains(&3), "NUMA off allowed: {x:?}");
        }
    }
}

#[test]
fn study1_snc_and_numa_reach_the_published_conclusions() {
    for neighbour in [1.1, 1.25, 1.5] {
        let s = xeon_study(neighbour);
        let t = model_truth(&s);
        let dir = tempfile::tempdir().unwrap();
        let db = import_model(dir.path(), "xeon-8380", &s);
        for baseline in XEON {
            let v = compare_json(&db, &XEON, Some(baseline));
            let what = format!("neighbour at {neighbour}x, baseline {baseline}");
            for p in ["hpc", "database", "virtualization", "ai-training", "latency"] {
                assert_pick_allowed(&v, &s, &t, p, &what);
            }
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
            // OLTP databases, virtualization, multi-GPU training pick SNC
            // off, or where the truth allows it SNC2 (above), and say which
            // setting differs. Where the truth is clear they decide; where a
            // figure on the way is near the margin (SNC2's interleaved
            // bandwidth is 2.8% behind, its spread latency 1.7-3.3%), three
            // runs may leave it undecided (the text says how many runs would
            // decide) or find the two tied.
            for p in ["database", "virtualization", "ai-training"] {
                let r = rec(&v, p);
                let text = r["text"].as_str().unwrap();
                if truth_of(&t, p).clear || r["group"].is_u64() {
                    assert!(r["group"].is_u64(), "{what}: {p}: {text}");
                    assert!(text.contains("bios.snc"), "{what}: {p}: {text}");
                } else if r["no_pick"]["reason"] == "undecided" {
                    assert!(text.contains("runs per group"), "{what}: {p}: {text}");
                } else {
                    assert_eq!(r["no_pick"]["reason"], "tie", "{what}: {p}: {text}");
                }
            }
            // Keep NUMA on: no profile picks NUMA off.
            let off = group_index(&v, "NUMA off");
            for r in v["recommendations"].as_array().unwrap() {
                assert_ne!(r["group"], json!(off), "{what}: {}", r["text"]);
            }
            // Every metric that maps onto a column of the study has that
            // column's figure (per socket where it is per package), and
            // never a verdict against the column's direction. The
            // cross-package figure is the study's 250, 220 and 200 GB/s,
            // not what the nodes reach alone summed.
            let base = group_index(&v, baseline);
            for m in v["metrics"].as_array().unwrap() {
                let id = m["metric"].as_str().unwrap();
                for label in XEON {
                    let g = &m["groups"][group_index(&v, label)];
                    let (Some(med), Some(fig)) = (g["median"].as_f64(), xeon_figure(label, id))
                    else {
                        continue;
                    };
                    assert!(
                        (med / fig - 1.0).abs() < 0.03,
                        "{what}: {id} of {label}: {med} vs the study's {fig}"
                    );
                    let vd = g["verdict"].as_str().unwrap_or("");
                    // The study gives NUMA off no figure for some columns
                    // (its per-node latency): no direction to hold to.
                    if let (true, Some(b)) =
                        (vd == "better" || vd == "worse", xeon_figure(baseline, id))
                    {
                        let seed = fig / b - 1.0;
                        let better = (seed > 0.0) == m["higher_is_better"].as_bool().unwrap();
                        assert_eq!(
                            vd == "better",
                            better,
                            "{what}: {id} of {label} called {vd}, the study moves {:+.1}%",
                            seed * 100.0
                        );
                    }
                }
                // A node's bandwidth is never judged against a node of
                // another size.
                if id == "local_bw_gbs" || id == "neighbour_bw_gbs" {
                    for (i, g) in m["groups"].as_array().unwrap().iter().enumerate() {
                        assert!(
                            i == base || g["verdict"].is_null(),
                            "{what}: {id} judged across node sizes: {g}"
                        );
                    }
                }
                assert_ne!(id, "cross_node_bw_gbs", "{what}: the topology says which cells cross");
                assert!(!id.starts_with("remote_lat_ns_d"), "{what}: SLIT tiers are not metrics");
            }
            assert!(
                v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(
                    "Local bandwidth is not judged between groups whose nodes differ"
                )),
                "{what}: {}",
                v["notes"]
            );
            // Remote figures are impossible with one OS node: never asked
            // for; one node per package has no neighbour.
            let remote = metric(&v, "remote_lat_ns");
            assert!(remote["groups"][off]["not_applicable"].is_string(), "{what}");
            let snc_off = group_index(&v, "NUMA on, SNC off");
            assert!(
                metric(&v, "neighbour_lat_ns")["groups"][snc_off]["not_applicable"]
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
                // on bound bandwidth per package (580, 585, 600), SNC off
                // against SNC2 on spread latency (the mean of local, sibling
                // and remote: 290 against 295 ns with the sibling at 1.1x,
                // 300 at 1.25x; 1.7-3.3% apart).
                let rest = t
                    .replace(
                        "pread-memory latency is undecided between NUMA on, SNC off and NUMA on, SNC2",
                        "",
                    )
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
// Study 3's NPS settings (EPYC 7763, 1 socket of 64 cores, 8 channels of
// DDR4-3200) from the model (simmodel::studies::epyc_7763): NPS1 / NPS2 /
// NPS4 are 1 / 2 / 4 nodes of 64 / 32 / 16 CPUs, SLIT from node 0 in NPS4
// `10 11 12 12`. The study says: small differences, NPS4 the lowest local
// latency, NPS1 the highest per-node bandwidth.

const NPS: [&str; 3] = ["NPS1", "NPS2", "NPS4"];

fn milan_study() -> ModelStudy {
    let settings =
        vec![ModelSetting::domains(1), ModelSetting::domains(2), ModelSetting::domains(4)];
    let mut s = ModelStudy::new(simmodel::studies::epyc_7763(), settings, 3, 3);
    s.budget = ModelBudget::Default;
    s
}

#[test]
fn study3_nps_modes_compare_like_scopes() {
    let s = milan_study();
    assert_eq!(s.labels, NPS);
    let t = model_truth(&s);
    // The truth: NPS4 for latency-sensitive and bound HPC work (its local
    // latency, the socket's bandwidth the same in every mode).
    for p in ["latency", "hpc"] {
        assert_eq!(truth_of(&t, p).pick, Some(2), "{p}: {t:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let db = import_model(dir.path(), "milan-64", &s);
    for baseline in NPS {
        let v = compare_json(&db, &NPS, Some(baseline));
        let what = format!("baseline {baseline}");
        let base = group_index(&v, baseline);
        for p in ["hpc", "database", "virtualization", "ai-training", "latency"] {
            assert_pick_allowed(&v, &s, &t, p, &what);
        }
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
// cores from the model (simmodel::studies::two_socket_96): local 67.6 ns,
// the other socket 100.6 ns; NUMA on + numa=off: the OS shows one node
// whose pages lie on the first socket's memory, so CPU 0's "local"
// latency is the true local one while the other socket's CPUs see the
// remote one; BIOS NUMA off (firmware interleave): every CPU sees the
// interleaved average (about 87 ns), with or without numa=off.

const STUDY5: [&str; 4] =
    ["BIOS NUMA on", "BIOS NUMA on + numa=off", "BIOS NUMA off", "BIOS NUMA off + numa=off"];

/// Study 5's runs, of the first `k` settings; `only`: `run --only` (the
/// seed measured `lat --per-cpu` alone).
fn study5(k: usize, only: Option<Vec<&'static str>>, seed: u64) -> ModelStudy {
    let on = ModelSetting::domains(1);
    let off = ModelSetting::bios_numa_off();
    let settings = [on, on.with_numa_off(), off, off.with_numa_off()];
    let mut s =
        ModelStudy::new(simmodel::studies::two_socket_96(), settings[..k].to_vec(), 3, seed);
    s.labels = STUDY5[..k].iter().map(|l| l.to_string()).collect();
    s.budget = ModelBudget::Default;
    s.only = only;
    s
}

/// The truth of study 5: latency-sensitive work and databases on NUMA on,
/// never the numa=off configuration over a NUMA firmware (it hides the
/// split). Latency-sensitive work has NUMA on alone; for databases the
/// firmware's interleave (87 ns for every CPU) is 3.4% behind NUMA on's
/// spread latency (84.1 ns, the mean of 67.6 and 100.6), near the 3%
/// margin, so the truth also allows BIOS NUMA off.
fn assert_study5_truth(s: &ModelStudy) {
    let t = model_truth(s);
    assert_eq!(truth_of(&t, "latency").acceptable.iter().collect::<Vec<_>>(), [&0], "{t:?}");
    let db = truth_of(&t, "database");
    assert_eq!(db.pick, Some(0), "{t:?}");
    assert!(!db.acceptable.contains(&1), "{t:?}");
}

#[test]
fn study5_numa_off_hides_the_split_under_every_baseline_order() {
    let s = study5(4, None, 5);
    assert_study5_truth(&s);
    let t = model_truth(&s);
    let dir = tempfile::tempdir().unwrap();
    let db = import_model(dir.path(), "two-socket-96", &s);
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
            for p in ["hpc", "database", "virtualization", "ai-training", "latency"] {
                assert_pick_allowed(&v, &s, &t, p, &what);
            }
            let hidden = group_index(&v, "BIOS NUMA on + numa=off");
            // Latency-sensitive and database work: NUMA on, bound locally,
            // decided by the latency a thread sees; a database's buffer
            // pool spans the nodes: the spread latency.
            assert_pick_in(&v, "latency", "BIOS NUMA on", "thread_lat_ns", &what);
            assert_pick_in(&v, "database", "BIOS NUMA on", "spread_lat_ns", &what);
            for p in ["latency", "database"] {
                let r = rec(&v, p);
                assert_eq!(r["excluded"], json!([hidden]), "{what}: {p}");
                let t = r["text"].as_str().unwrap();
                assert!(t.contains("hides the split"), "{what}: {p}: {t}");
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
            assert!(h.contains("CPUs at") && h.contains("2 packages"), "{what}: {h}");
            let split = metric(&v, "per_cpu_split_to_node0");
            assert_eq!(split["groups"][hidden]["median"].as_f64().map(|x| x > 1.4), Some(true));
            // CPU 0's local latency under numa=off ties NUMA on's: never a
            // best.
            let local = metric(&v, "local_lat_ns");
            assert_ne!(local["best_group"], json!(hidden), "{what}");
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
    // NUMA firmware. CPU 0's latency is a tie (the same local memory), yet
    // latency-sensitive work must keep NUMA on: the other configuration
    // hides the split.
    let s = study5(2, None, 6);
    assert_study5_truth(&s);
    let dir = tempfile::tempdir().unwrap();
    let db = import_model(dir.path(), "two-socket-pair", &s);
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

/// Study 5 measured the seed's way: per-CPU latency to node 0 only
/// (`run --only lat-per-cpu`; the seed did it with lmbench per CPU). The
/// CPUs on node 0 give the local latency, the other socket's the remote
/// one: NUMA on is picked for latency-sensitive work whatever the
/// baseline. A database ranks by the spread latency, which needs every
/// node's cells: NUMA on's is not measured, so the profile picks nothing
/// and says what to measure, never a setting the truth rules out.
#[test]
fn study5_measured_per_cpu_only_picks_numa_on() {
    let s = study5(4, Some(vec!["lat-per-cpu"]), 55);
    assert_study5_truth(&s);
    let dir = tempfile::tempdir().unwrap();
    let db = import_model(dir.path(), "two-socket-per-cpu", &s);
    for base in STUDY5 {
        let v = compare_json(&db, &STUDY5, Some(base));
        let what = format!("baseline {base}");
        assert_pick_in(&v, "latency", "BIOS NUMA on", "thread_lat_ns", &what);
        // per-CPU latency to node 0 alone gives half the cells a spread
        // needs: no spread latency for NUMA on, no pick
        let db = rec(&v, "database");
        assert!(db["group"].is_null(), "{what}: {}", db["text"]);
        assert!(db["text"].as_str().unwrap().contains("Measure next"), "{what}: {}", db["text"]);
        let on = group_index(&v, "BIOS NUMA on");
        // Local and remote latency derived from the per-CPU results.
        let local = metric(&v, "local_lat_ns")["groups"][on]["median"].as_f64().unwrap();
        let remote = metric(&v, "remote_lat_ns")["groups"][on]["median"].as_f64().unwrap();
        assert!(
            (local - 67.6).abs() < 0.7 && (remote - 100.6).abs() < 1.0,
            "{what}: {local} {remote}"
        );
        for p in ["latency", "database"] {
            let t = rec(&v, p)["text"].as_str().unwrap();
            assert!(t.contains("hides the split"), "{what}: {p}: {t}");
        }
    }
}
