//! The words of a settings study's recommendations, byte for byte: every
//! shape a profile's reasoning can take (a guard lost, a pick that may
//! lose on an undecided guard, a gain undecided, a tie, a win, a pick
//! kept, no recorded setting differing, nothing compared, a figure not
//! measured or only derived, a group ruled out for hiding NUMA and the
//! `general` line naming it), on hand-made studies whose figures the test
//! chooses. The golden is `tests/golden/recommend_words.txt`; set
//! `UPDATE_GOLDEN=1` to write it after a deliberate change of wording.

use analysis::study::{Floors, GroupInput, Study};
use report::study::sentences::merged_recommendations;
use results::run::{LoadedRun, StoredRecord};
use results::runstats::Criteria;
use serde_json::{json, Value};

/// What varies between the hand-made studies.
#[derive(Clone, Copy)]
struct Shape {
    /// Every figure of B as a multiple of A's: `[global, interleave,
    /// local, remote]`.
    b: [f64; 4],
    /// Each run's figures off by this fraction (alternately up and down).
    jitter: f64,
    /// Runs per group (taken A B A B ...).
    runs: usize,
    /// The groups declare a setting of their own (`bios.x=A`, `=B`).
    declared: bool,
    /// Bandwidth records only (no latency).
    bandwidth_only: bool,
    /// Group B's OS shows one node while its per-CPU latency splits in
    /// two (numa=off on two packages).
    b_hides_numa: bool,
}

const BASE: Shape = Shape {
    b: [1.0; 4],
    jitter: 0.002,
    runs: 3,
    declared: true,
    bandwidth_only: false,
    b_hides_numa: false,
};

fn rec(seq: u32, kind: &str, v: Value) -> StoredRecord {
    StoredRecord {
        seq,
        recorded: "2026-01-01T00:00:00Z".into(),
        record: results::upgrade::read(kind, &v).record,
        as_stored: None,
    }
}

/// The records of a run of a machine of two packages of one node each:
/// bound bandwidth (`global`, each package's at half of it), interleaved
/// bandwidth, the latency matrix (`local`, `remote` ns) and each
/// package's chases to its own and the other package's memory.
fn records(f: [f64; 4], bandwidth_only: bool) -> Vec<(&'static str, Value)> {
    let [global, interleave, local, remote] = f;
    let bw = |mode: &str, gbs: f64| {
        ("bw", json!({"mode": mode, "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs}))
    };
    let scope = |p: u32, to: u32, policy: &str| {
        let memory = if p == to { "own-package" } else { "other-package" };
        json!({"package": p, "memory": memory, "mem_package": to, "policy": policy,
               "cpus": p.to_string(), "cpu_nodes": p.to_string(), "mem_nodes": to.to_string()})
    };
    let mut v = vec![bw("global", global), bw("interleave", interleave)];
    for p in 0..2u32 {
        v.push((
            "bw",
            json!({"mode": "package", "kernel": "triad", "best_gbs": global / 2.0,
                   "median_gbs": global / 2.0, "scope": scope(p, p, "bind-per-node")}),
        ));
    }
    if bandwidth_only {
        return v;
    }
    for (c, m) in [(0u32, 0u32), (0, 1), (1, 0), (1, 1)] {
        let ns = if c == m { local } else { remote };
        v.push(("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns})));
        v.push((
            "lat",
            json!({"mode": "package", "cpu": c, "median_ns": ns, "interleave": m.to_string(),
                   "scope": scope(c, m, "interleave")}),
        ));
    }
    v
}

/// Run `id` of group `label`, its figures `f`.
fn run(id: i64, label: &str, f: [f64; 4], shape: &Shape, hides_numa: bool) -> LoadedRun {
    let declared = if shape.declared { label } else { "same" };
    let nodes = if hides_numa { 1 } else { 2 };
    let mut config = json!({"nodes": nodes, "declared": {"bios.x": declared}});
    if hides_numa {
        config["cmdline_options"] = json!({"numa": "off"});
    }
    let mut r: LoadedRun = serde_json::from_value(json!({
        "id": id, "uuid": format!("u{id}"), "label": label,
        "started": format!("2026-01-01T00:{id:02}:00Z"),
        "finished": null, "status": "complete", "complete": true, "message": null,
        "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
        "command_line": "numaprobe run", "result_count": 0, "imported": false,
        "machine_info": {"packages": 2}, "config": config, "topology": {}, "results": []
    }))
    .unwrap();
    let mut recs = records(f, shape.bandwidth_only);
    if hides_numa {
        recs.push((
            "lat-summary",
            json!({"mode": "per-cpu", "mem_node": 0, "hidden_numa": true, "note": null,
                "groups": [
                    {"cpus": "0-15", "median_ns": 92.0, "min_ns": 90.0, "max_ns": 95.0, "os_nodes": "0"},
                    {"cpus": "16-31", "median_ns": 141.0, "min_ns": 138.0, "max_ns": 145.0, "os_nodes": "0"}
                ]}),
        ));
    }
    r.results = recs.into_iter().enumerate().map(|(i, (k, v))| rec(i as u32 + 1, k, v)).collect();
    r
}

/// Groups A (baseline) and B of `shape.runs` runs each, taken A B A B.
fn study(shape: Shape) -> Study {
    let a = [400.0, 300.0, 100.0, 200.0];
    let wobble = [1.0, -1.0, 0.5, 0.0, -0.5, 1.0];
    let (mut ga, mut gb) = (Vec::new(), Vec::new());
    for i in 0..2 * shape.runs {
        let j = 1.0 + shape.jitter * wobble[i % wobble.len()];
        let in_b = i % 2 == 1;
        let f = std::array::from_fn(|k| a[k] * j * if in_b { shape.b[k] } else { 1.0 });
        let (label, g) = if in_b { ("B", &mut gb) } else { ("A", &mut ga) };
        g.push(run(i as i64 + 1, label, f, &shape, in_b && shape.b_hides_numa));
    }
    let groups = vec![
        GroupInput { reference: "label:A".into(), runs: ga },
        GroupInput { reference: "label:B".into(), runs: gb },
    ];
    Study::build(&groups, 0, &Criteria::default(), &Floors::default())
}

/// Each recommendation line with the profiles that say it, then the
/// reasoning behind it.
fn words(name: &str, s: &Study) -> String {
    let mut out = format!("== {name}\n");
    for (profiles, line, reasons) in merged_recommendations(s) {
        out.push_str(&format!("{}: {line}\n", profiles.join(", ")));
        for r in reasons {
            out.push_str(&format!("    {r}\n"));
        }
    }
    out
}

#[test]
fn every_shape_of_a_recommendation_is_worded_as_before() {
    let studies: Vec<(&str, Shape)> = vec![
        ("guard lost, baseline kept", Shape { b: [1.0, 0.94, 0.8, 0.8], ..BASE }),
        (
            "may lose on an undecided guard",
            Shape { b: [1.0, 0.965, 0.8, 0.8], jitter: 0.03, ..BASE },
        ),
        ("ahead on an undecided guard", Shape { b: [1.0, 1.035, 0.8, 0.8], jitter: 0.03, ..BASE }),
        ("gain undecided", Shape { b: [1.05, 1.0, 0.8, 1.0], jitter: 0.08, ..BASE }),
        ("wins on bound bandwidth", Shape { b: [1.1, 0.9, 1.0, 1.0], ..BASE }),
        ("tie", BASE),
        ("undecided, noisier", Shape { b: [1.0, 1.0, 0.95, 0.95], jitter: 0.3, ..BASE }),
        ("undecided", Shape { b: [1.0, 1.0, 0.95, 0.95], jitter: 0.08, ..BASE }),
        ("picked", Shape { b: [1.0, 1.0, 0.8, 0.8], ..BASE }),
        ("no setting differs", Shape { b: [1.0, 1.0, 0.8, 0.8], declared: false, ..BASE }),
        ("bandwidth only", Shape { bandwidth_only: true, ..BASE }),
        ("B hides NUMA", Shape { b_hides_numa: true, ..BASE }),
        ("B hides NUMA, one run each", Shape { b_hides_numa: true, runs: 1, ..BASE }),
    ];
    let got: String = studies.iter().map(|(name, shape)| words(name, &study(*shape))).collect();
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/recommend_words.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap();
    assert_eq!(got, want, "the recommendations' words changed");
}

/// What a run's declared settings are contradicted by, as every front end
/// says it (the run's warning, a study's warning), word for word.
fn contradictions_said(config: Value, packages: Option<u64>) -> Vec<String> {
    let c: results::context::Configuration = serde_json::from_value(config).unwrap();
    let said = analysis::declared::contradictions(&c, packages);
    said.iter().map(report::study::words::contradiction).collect()
}

/// Every shape of a declared setting the run's own readings contradict.
#[test]
fn declared_settings_contradicted_are_said_word_for_word() {
    let cases = [
        (
            json!({"smt": "notsupported", "declared": {"bios.smt": "enabled"}}),
            Some(1),
            "declared bios.smt=enabled, but the kernel reports smt=notsupported: the run measured no SMT siblings",
        ),
        (
            json!({"smt": "on", "declared": {"bios.smt": "off"}}),
            Some(1),
            "declared bios.smt=off, but the kernel reports smt=on: SMT siblings were active",
        ),
        (
            json!({"nodes": 1, "acpi_srat": "3 proximity domains (2 with CPUs, 3 with memory)",
                   "declared": {"bios.numa": "disabled"}}),
            Some(2),
            "declared bios.numa=disabled, but the firmware's SRAT lists 3 proximity domains: NUMA is on in the firmware (numa=off on the kernel command line only hides it)",
        ),
        (
            json!({"nodes": 1, "acpi_srat": "none", "declared": {"bios.numa": "on"}}),
            Some(4),
            "declared bios.numa=on, but the firmware has no SRAT on a machine of 4 packages: NUMA is off (node interleave) in the firmware",
        ),
        (
            json!({"nodes": 2, "nodes_with_cpus": 2, "declared": {"bios.snc": "2"}}),
            Some(2),
            "declared bios.snc=2 (2 nodes per package), but the run saw 2 nodes with CPUs on 2 packages: 1 per package",
        ),
        (
            json!({"nodes": 4, "nodes_with_cpus": 4, "declared": {"bios.nps": "off"}}),
            Some(1),
            "declared bios.nps=off (1 node per package), but the run saw 4 nodes with CPUs on 1 package: 4 per package",
        ),
    ];
    for (config, packages, want) in cases {
        assert_eq!(contradictions_said(config, packages), [want]);
    }
}
