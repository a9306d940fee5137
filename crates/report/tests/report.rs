//! Reports of the synthetic runs in `fixtures/synthetic-export.json` (made
//! by `fixtures/make_synthetic.py`): Markdown reports (with the comparison) pinned as
//! snapshots, HTML checked for its charts, metrics checked against the
//! figures written into the fixture.

use analysis::metrics::MetricKey;
use analysis::study::Study;
use report::{render_report, study, Format};
use store::LoadedRun;

#[path = "support/synthetic.rs"]
mod synthetic;

use synthetic::runs;

#[test]
fn metrics_of_the_synthetic_baseline() {
    let runs = runs();
    let m = analysis::metrics::metrics(&analysis::data::RunData::of(&runs[0]));
    // local: mean of triad best on node 0 (101.3) and node 1 (100.1)
    assert!((m[&MetricKey::LocalBw].value - 100.7).abs() < 1e-9);
    assert_eq!(m[&MetricKey::GlobalBw].value, 198.4);
    assert_eq!(m[&MetricKey::InterleaveBw].value, 121.7);
    // off-diagonal of the triad matrix: (58.2 + 57.9) / 2
    assert!((m[&MetricKey::CrossBw].value - 58.05).abs() < 1e-9);
    assert!((m[&MetricKey::LocalLat].value - 89.75).abs() < 1e-9);
    assert!((m[&MetricKey::RemoteLat].value - 143.3).abs() < 1e-9);
    // the loaded point with the most load (94.8 GB/s at delay 0)
    assert_eq!(m[&MetricKey::LoadedLatPeak].value, 262.0);
}

#[test]
fn markdown_report_snapshot() {
    let runs = runs();
    let md = String::from_utf8(render_report(Format::Markdown, &runs[0], &runs[1..2])).unwrap();
    insta::assert_snapshot!("markdown_baseline_vs_thp", md);
}

#[test]
fn markdown_report_of_an_interrupted_run_snapshot() {
    let runs = runs();
    let md = String::from_utf8(render_report(Format::Markdown, &runs[2], &[])).unwrap();
    insta::assert_snapshot!("markdown_interrupted_epyc", md);
}

#[test]
fn summary_text_snapshot() {
    let runs = runs();
    insta::assert_snapshot!("summary_baseline", report::summary_text(&runs[0]));
}

#[test]
fn html_report_has_every_chart() {
    let runs = runs();
    let html = String::from_utf8(render_report(Format::Html, &runs[0], &runs[1..])).unwrap();
    let charts = html.matches("<svg class=\"chart").count();
    // bw matrix and its remote/local view, scaling, lat matrix and its
    // remote/local view, sweep, per-CPU, loaded, c2c, exec, and one per
    // compared metric of the catalogue (21: six headline metrics, the
    // local bandwidth per package, the cross-package bandwidth, the
    // spread-memory latency, the remote penalty, the latency a thread
    // sees, five per-CPU figures and four exec policies' program metric),
    // and the answer's forest plot of every change, and the groups'
    // sweep, loaded-latency and scaling curves overlaid
    assert_eq!(charts, 35);
    assert_eq!(html.matches("<svg class=\"chart forest\"").count(), 1);
    for title in [
        "Bandwidth matrix (triad, best GB/s)",
        "Bandwidth relative to the CPU node&#39;s local memory (remote / local)",
        "Latency relative to the CPU node&#39;s local memory (remote / local)",
        "Bandwidth against thread count",
        "Latency matrix (median ns)",
        "Latency against working-set size",
        "Latency from each CPU to one node&#39;s memory",
        "Loaded latency against bandwidth, per traffic mix",
        "Core-to-core latency (median ns, one way)",
        "Placements against default (median metric)",
        "Local bandwidth per group (GB/s, higher is better): one dot per run, median marked",
        "Remote penalty (other-package / local latency) per group (x, lower is better): one dot per run, median marked",
        "Latency against the working set, every group (median ns of each size)",
        "Loaded latency against bandwidth, every group (read traffic, the first CPU on its memory)",
        "Bandwidth against threads, every group (triad, best GB/s of the first node on its memory)",
    ] {
        assert!(html.contains(&format!(">{title}</title>")), "missing chart {title}");
    }
    // cache sizes of CPU 0 marked on the sweep
    for m in ["L1d 48 KiB", "L2 1.3 MiB", "L3 24 MiB"] {
        assert!(html.contains(&format!(">{m}</text>")), "missing marker {m}");
    }
    assert!(!html.contains("<script"));
    assert!(!html.contains("https://"));
}

#[test]
fn html_of_a_run_without_results_has_no_charts() {
    let runs = runs();
    let mut empty = runs[2].clone();
    empty.results.clear();
    let html = String::from_utf8(render_report(Format::Html, &empty, &[])).unwrap();
    assert_eq!(html.matches("<svg class=\"chart").count(), 0);
    assert!(html.contains("No results were stored."));
}

#[test]
fn odd_payloads_never_break_a_report() {
    let runs = runs();
    let mut odd = runs[2].clone();
    let junk = [
        serde_json::json!({"mode": "matrix", "kernel": 7, "cpu_node": "x", "best_gbs": "fast"}),
        serde_json::json!({"mode": "local", "best_gbs": null, "placement": "yes"}),
        serde_json::json!([1, 2, 3]),
        serde_json::json!("just text"),
        serde_json::json!({"mode": "sweep", "size_bytes": -5, "median_ns": 1e308}),
        serde_json::json!({"mode": "loaded", "load_gbs": 10.0}),
        serde_json::json!({"mode": "c2c", "cpu_a": 0, "cpu_b": 0, "median_ns": 50.0}),
        serde_json::json!({"mode": "per-cpu", "cpu": 3, "median_ns": 80.0}),
    ];
    for (i, p) in junk.iter().enumerate() {
        for kind in ["bw", "lat", "audit", "exec", "future-kind"] {
            odd.results.push(result(100 + i as u32, kind, p.clone()));
        }
    }
    odd.topology = serde_json::from_value(
        serde_json::json!({"nodes": "not a list", "caches": [{"level": "x"}]}),
    )
    .unwrap();
    for f in [Format::Markdown, Format::Html] {
        let out = render_report(f, &odd, &runs[..1]);
        assert!(!out.is_empty());
    }
    assert!(!report::summary_text(&odd).is_empty());
    // A study of the odd run against a sane one still has the sane run's
    // metrics, and no verdict where the odd run measured nothing.
    let s = Study::of_runs(&[runs[0].clone(), odd]);
    let lat = s.metrics.iter().find(|m| m.metric == "local_lat_ns").unwrap();
    assert_eq!(lat.groups[0].n, 1);
}

/// A result as the store reads a payload of `kind`.
fn result(seq: u32, kind: &str, payload: serde_json::Value) -> store::StoredRecord {
    let up = results::upgrade::read(kind, &payload);
    store::StoredRecord {
        seq,
        recorded: "2026-11-04T09:01:00.000Z".into(),
        record: up.record,
        as_stored: up.as_stored,
    }
}

/// `run` with only per-CPU latency to node 0 from one OS node: one point
/// per `(cpu, ns)` and the `lat-summary` stored with `hidden_numa: true`,
/// `note` and `groups`, as `lat per-cpu` stores them.
fn per_cpu_run(
    mut run: LoadedRun,
    points: &[(u32, f64)],
    note: &str,
    groups: serde_json::Value,
) -> LoadedRun {
    run.results.clear();
    for (i, &(c, ns)) in points.iter().enumerate() {
        run.results.push(result(
            i as u32 + 1,
            "lat",
            serde_json::json!({"mode": "per-cpu", "cpu": c, "cpu_node": 0, "mem_node": 0,
                               "size_bytes": 1u64 << 30, "median_ns": ns, "spread_pct": 1.0}),
        ));
    }
    run.results.push(result(
        points.len() as u32 + 1,
        "lat-summary",
        serde_json::json!({"mode": "per-cpu", "mem_node": 0, "hidden_numa": true,
                           "note": note, "groups": groups}),
    ));
    run
}

/// The 2-package baseline run with only per-CPU latency: 8 CPUs in one OS
/// node, two latency groups (CPUs 0-3 near, 4-7 far).
fn hidden_numa_run() -> LoadedRun {
    let run = runs()[0].clone();
    assert_eq!(run.machine_info.packages.as_ref().map(|p| p.get()), Some(2));
    let points: Vec<(u32, f64)> = (0..8u32)
        .map(|c| (c, if c < 4 { 92.0 + f64::from(c) * 0.3 } else { 131.0 + f64::from(c) * 0.2 }))
        .collect();
    per_cpu_run(
        run,
        &points,
        "the OS shows 1 node(s) with CPUs, but the CPUs fall into 2 latency groups (92 ns / 132 ns)",
        serde_json::json!([
            {"cpus": "0-3", "median_ns": 92.45, "min_ns": 92.0, "max_ns": 92.9, "os_nodes": "0"},
            {"cpus": "4-7", "median_ns": 132.1, "min_ns": 131.8, "max_ns": 132.4, "os_nodes": "0"}]),
    )
}

#[test]
fn hidden_numa_is_stated_from_the_lat_summary() {
    let run = hidden_numa_run();
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    let note = "Hidden NUMA: the OS shows one node, but the CPUs fall into 2 latency groups to memory node 0: CPUs 0-3 at 92.5 ns, CPUs 4-7 at 132.1 ns.";
    // stated before the summary tables, in the per-CPU section and in the analysis
    assert_eq!(md.matches(note).count(), 3, "{md}");
    assert!(md.find(note).unwrap() < md.find("## Latency").unwrap());
    // the groups table: group, CPUs, count, OS node, memory node, min, median, max
    assert!(md.contains("| 1 | 0-3 | 4 | 0 | 0 | 92.0 | 92.5 | 92.9 |"), "{md}");
    assert!(md.contains("| 2 | 4-7 | 4 | 0 | 0 | 131.8 | 132.1 | 132.4 |"), "{md}");
    let html = String::from_utf8(render_report(Format::Html, &run, &[])).unwrap();
    assert_eq!(html.matches("<p class=\"callout\">Hidden NUMA").count(), 2);
    // the per-CPU chart has one series per latency group
    assert!(html.contains("group 1 (CPUs 0-3, 92.5 ns)"), "series of group 1 missing");
    assert!(html.contains("group 2 (CPUs 4-7, 132.1 ns)"), "series of group 2 missing");

    // the stored flag is judged again: a summary stored without it on this
    // 2-package machine still states it
    let mut unflagged = run.clone();
    let mut summary = unflagged.results.pop().unwrap().stored_json();
    summary["hidden_numa"] = serde_json::json!(false);
    unflagged.results.push(result(9, "lat-summary", summary));
    let md = String::from_utf8(render_report(Format::Markdown, &unflagged, &[])).unwrap();
    assert_eq!(md.matches(note).count(), 3, "{md}");

    // the same split on a one-package machine without firmware domains:
    // no evidence of NUMA below the OS, so no callout although stored
    let mut one_package = run.clone();
    one_package.machine_info = runs()[2].machine_info.clone();
    let md = String::from_utf8(render_report(Format::Markdown, &one_package, &[])).unwrap();
    assert!(!md.contains("Hidden NUMA"), "{md}");
    assert!(md.contains("| 2 | 4-7 | 4 |"));
}

/// Says nothing of hidden NUMA: no callout, no advice, no stored note.
fn assert_no_hidden_numa(text: &str) {
    for s in ["Hidden NUMA", "hides NUMA", "hidden by numa=off", "Check the BIOS NUMA"] {
        assert!(!text.contains(s), "{s:?} in:\n{text}");
    }
}

/// A false positive stored by an older version on a one-package VM: its
/// two CPUs split into two single-CPU "groups" (317 vs 357 ns) and the
/// summary was stored with `hidden_numa: true` and the hidden-NUMA note.
/// Readers judge by the evidence rule (`analysis::hidden`): the report,
/// the brief and the text summary say nothing of hidden NUMA (the
/// report's appendix still lists the record as it was stored).
#[test]
fn a_stored_hidden_numa_false_positive_says_nothing() {
    let vm = runs()[2].clone();
    assert_eq!(vm.machine_info.packages.as_ref().map(|p| p.get()), Some(1));
    let run = per_cpu_run(
        vm,
        &[(0, 317.2), (1, 357.4)],
        "the OS shows 1 node(s) with CPUs, but the CPUs fall into 2 latency groups (317 ns / 357 ns): NUMA is probably hidden by numa=off or firmware interleaving",
        serde_json::json!([
            {"cpus": "0", "median_ns": 317.2, "min_ns": 317.2, "max_ns": 317.2, "os_nodes": "0"},
            {"cpus": "1", "median_ns": 357.4, "min_ns": 357.4, "max_ns": 357.4, "os_nodes": "0"}]),
    );
    for f in [Format::Markdown, Format::Html] {
        let out = String::from_utf8(render_report(f, &run, &[])).unwrap();
        // the appendix lists every stored record as stored, flag included
        let (body, appendix) = out.split_once("Appendix: raw figures").unwrap();
        assert_no_hidden_numa(body);
        assert!(appendix.contains("hidden by numa=off"), "{appendix}");
        // the groups themselves are still shown
        assert!(body.contains("357.4"), "{body}");
    }
    assert_no_hidden_numa(&report::brief(&run, &[]));
    assert_no_hidden_numa(&report::summary_text(&run));
    // and a study of it agrees
    let mut twin = run.clone();
    twin.summary.id = store::RunId(99);
    let s = Study::of_runs(&[run, twin]);
    assert!(s.groups.iter().all(|g| g.hidden_numa.is_none()));
}

#[test]
fn sweep_plateaus_are_listed_against_the_caches() {
    let mut run = runs()[0].clone();
    run.results.retain(|r| r.stored_json()["mode"] == "sweep");
    assert!(!run.results.is_empty(), "the fixture has a sweep");
    run.results.push(result(
        500,
        "lat-summary",
        serde_json::json!({"mode": "sweep", "cpu": 0, "mem_node": 0,
            "caches": [{"level": 1, "size_bytes": 32768}, {"level": 2, "size_bytes": 1048576},
                       {"level": 3, "size_bytes": 33554432}],
            "plateaus": [
                {"label": "L1", "from_bytes": 4096, "to_bytes": 32768, "latency_ns": 1.2, "cache_bytes": 32768, "points": 4},
                {"label": "DRAM", "from_bytes": 134217728, "to_bytes": 1073741824, "latency_ns": 110.4, "cache_bytes": null, "points": 4}]}),
    ));
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    assert!(md.contains("| L1 | 32 KiB | 4 KiB | 32 KiB | 4 | 1.2 |"), "{md}");
    assert!(md.contains("| DRAM | - | 128 MiB | 1 GiB | 4 | 110.4 |"), "{md}");
    assert!(md.contains("No plateau was found for L2 (1 MiB), L3 (32 MiB)"), "{md}");
}

/// The OS distribution recorded with the run's configuration is the
/// Environment's row; a run recorded without one has no such row.
#[test]
fn the_environment_names_the_os_distribution() {
    let mut run = runs()[0].clone();
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    assert!(!md.contains("OS distribution"), "{md}");
    run.config.os = Some(results::context::Reading::Value("Debian GNU/Linux 12 (bookworm)".into()));
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    let env = md.split_once("## Environment").unwrap().1;
    assert!(env.contains("| OS distribution | Debian GNU/Linux 12 (bookworm) |"), "{env}");
    assert!(env.find("OS distribution").unwrap() < env.find("| Kernel |").unwrap());
}

/// A saved `lat --per-cpu --sweep`: CPUs 0 and 4 at 4 sizes, and the
/// `lat-summary` it stores (plateaus per CPU, groups per size).
fn per_cpu_sweep_run(with_summary: bool) -> LoadedRun {
    let mut run = runs()[0].clone();
    run.results.clear();
    let sizes = [16u64 << 10, 32 << 10, 64 << 20, 128 << 20];
    let mut seq = 0;
    for cpu in [0u32, 4] {
        for &size in &sizes {
            seq += 1;
            let ns = if size < 1 << 20 {
                1.2
            } else if cpu == 0 {
                95.0
            } else {
                140.0
            };
            run.results.push(result(
                seq,
                "lat",
                serde_json::json!({"mode": "per-cpu-sweep", "cpu": cpu, "cpu_node": cpu / 4,
                    "mem_node": 0, "size_bytes": size, "stride_bytes": if size < 1 << 20 { 64 } else { 256 },
                    "median_ns": ns, "min_ns": ns, "spread_pct": 1.0}),
            ));
        }
    }
    if with_summary {
        let plateaus = |cpu: u32, dram: f64| {
            serde_json::json!({"cpu": cpu, "cpu_node": cpu / 4, "plateaus": [
                {"label": "L1", "from_bytes": 16384, "to_bytes": 32768, "latency_ns": 1.2, "cache_bytes": 32768, "points": 2},
                {"label": "DRAM", "from_bytes": 67108864, "to_bytes": 134217728, "latency_ns": dram, "cache_bytes": null, "points": 2}]})
        };
        let group = |cpus: &str, node: &str, ns: f64| serde_json::json!({"cpus": cpus, "median_ns": ns, "min_ns": ns, "max_ns": ns, "os_nodes": node});
        run.results.push(result(
            seq + 1,
            "lat-summary",
            serde_json::json!({"mode": "per-cpu-sweep", "mem_node": 0,
                "caches": [{"level": 1, "size_bytes": 32768}],
                "plateaus": [plateaus(0, 95.0), plateaus(4, 140.0)],
                "groups_by_size": [
                    {"size_bytes": 32768, "stride_bytes": 64, "noise_ns": 0.2,
                     "groups": [group("0,4", "0-1", 1.2)]},
                    {"size_bytes": 134217728, "stride_bytes": 256, "noise_ns": 1.4,
                     "groups": [group("0", "0", 95.0), group("4", "1", 140.0)]}],
                "dram_size_bytes": 134217728, "note": null}),
        ));
    }
    run
}

/// The saved per-CPU sweep's summary gives each CPU's plateaus and the CPU
/// groups at each size, the DRAM size marked; points saved without a
/// summary (an older version) still draw the heat map, without them.
#[test]
fn a_per_cpu_sweep_lists_each_cpus_plateaus_and_the_groups_per_size() {
    let md =
        String::from_utf8(render_report(Format::Markdown, &per_cpu_sweep_run(true), &[])).unwrap();
    assert!(md.contains("| CPU | OS node | L1 ns (sizes) | DRAM ns (sizes) |"), "{md}");
    assert!(md.contains("| 0 | 0 | 1.2 (16 KiB-32 KiB) | 95.0 (64 MiB-128 MiB) |"), "{md}");
    assert!(md.contains("| 4 | 1 | 1.2 (16 KiB-32 KiB) | 140.0 (64 MiB-128 MiB) |"), "{md}");
    assert!(
        md.contains("| 32 KiB | 64 | 1 of 1 | 0,4 | 2 | 0-1 | 1.2 | 1.2 | 1.2 | 0.2 |"),
        "{md}"
    );
    assert!(
        md.contains("| 128 MiB (DRAM) | 256 | 1 of 2 | 0 | 1 | 0 | 95.0 | 95.0 | 95.0 | 1.4 |"),
        "{md}"
    );
    assert!(md.contains("| 128 MiB (DRAM) | 256 | 2 of 2 | 4 | 1 | 1 | 140.0 |"), "{md}");
    let html =
        String::from_utf8(render_report(Format::Html, &per_cpu_sweep_run(true), &[])).unwrap();
    assert!(html.contains("The plateaus of each CPU"), "plateau table missing from HTML");
    let old =
        String::from_utf8(render_report(Format::Markdown, &per_cpu_sweep_run(false), &[])).unwrap();
    assert!(old.contains("Latency from each CPU against working-set size"), "{old}");
    assert!(!old.contains("The plateaus of each CPU") && !old.contains("(DRAM)"), "{old}");
}

/// A run made by `numaprobe exec`: exec results only, with the summaries
/// `exec` stores (verdicts not yet judged when saved).
fn exec_run() -> LoadedRun {
    let mut run = runs()[2].clone();
    run.results.clear();
    run.summary.command_line =
        "numaprobe exec --policies default,local:0,interleave --repeat 3 --metric Triad:\\s+([0-9.]+) -- ./stream".into();
    let policy = |name: &str, placement: &str, metrics: [f64; 3], pages: serde_json::Value| {
        let runs: Vec<serde_json::Value> = metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                serde_json::json!({"rep": i + 1, "wall_s": 2.0, "exit_code": 0, "ok": true,
                                             "metric": m, "numa_pages": pages})
            })
            .collect();
        serde_json::json!({"policy": name, "placement": placement, "runs": runs, "ok_runs": 3,
                           "median_metric": metrics[1], "median_wall_s": 2.0,
                           "change_pct": null, "verdict": "no-data"})
    };
    let pages = |n0: f64, n1: f64| {
        serde_json::json!({"samples": 3, "processes": 1, "nodes": [
            {"node": 0, "anon_kib": 1000, "anon_fraction": n0, "fraction": n0},
            {"node": 1, "anon_kib": 1000, "anon_fraction": n1, "fraction": n1}]})
    };
    run.results.push(result(
        1,
        "exec",
        policy("default", "unchanged", [100.0, 101.0, 102.0], pages(0.7, 0.3)),
    ));
    run.results.push(result(
        2,
        "exec",
        policy("local:0", "cpus 0-7, bind 0", [130.0, 131.0, 132.0], pages(1.0, 0.0)),
    ));
    run.results.push(result(
        3,
        "exec",
        policy("interleave", "interleave 0-1", [100.5, 101.5, 102.5], pages(0.5, 0.5)),
    ));
    run
}

#[test]
fn exec_section_judges_each_placement() {
    let run = exec_run();
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    assert!(md.contains("## Program under placements"));
    assert!(md.contains("Command: ./stream."), "{md}");
    // local:0 +29.7% beyond noise; interleave +0.5% within it
    assert!(md.contains("| local:0 | cpus 0-7, bind 0 | 3/3 | 131 | 2.000 |"), "{md}");
    assert!(md.contains("| +29.7% | better | N0 100% N1 0% |"), "{md}");
    assert!(md.contains("| +0.5% | within noise | N0 50% N1 50% |"), "{md}");
    assert!(md.contains("| default | unchanged | 3/3 | 101 |"));
    assert!(md.contains("Best placement: local:0 (cpus 0-7, bind 0), better than default beyond noise (median metric 131, +29.7%)."), "{md}");
    let html = String::from_utf8(render_report(Format::Html, &run, &[])).unwrap();
    assert_eq!(html.matches("<svg class=\"chart").count(), 1);
    assert!(html.contains(">Placements against default (median metric)</title>"));
}

#[test]
fn an_exec_only_run_has_no_empty_sections() {
    let run = exec_run();
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    for absent in [
        "## Summary",
        "## Bandwidth",
        "## Latency",
        "no bandwidth or latency",
        "No settings audit",
        "Nothing stands out",
    ] {
        assert!(!md.contains(absent), "{absent:?} in an exec-only report:\n{md}");
    }
    // every heading is followed by content, not by another heading of its level or higher
    let lines: Vec<&str> = md.lines().filter(|l| !l.is_empty()).collect();
    for w in lines.windows(2) {
        if w[0].starts_with("## ") {
            assert!(!w[1].starts_with("## ") && !w[1].starts_with("# "), "empty section {}", w[0]);
        }
    }
    for present in [
        "## Environment",
        "## Commands",
        "## Program under placements",
        "## Analysis and recommendations",
        "## Appendix: raw figures",
    ] {
        assert!(md.contains(present), "{present} missing");
    }
}

#[test]
fn a_single_node_matrix_draws_no_heatmap() {
    let mut run = runs()[0].clone();
    run.results.retain(|r| {
        let p = &r.stored_json();
        p.get("mode").and_then(|m| m.as_str()) == Some("matrix")
            && p.get("cpu_node") == Some(&serde_json::json!(0))
            && p.get("mem_node") == Some(&serde_json::json!(0))
    });
    assert!(run.results.len() >= 2, "bw and lat cells of node 0 -> 0");
    let html = String::from_utf8(render_report(Format::Html, &run, &[])).unwrap();
    assert_eq!(html.matches("<svg class=\"chart").count(), 0);
    assert_eq!(html.matches("no heatmap is drawn").count(), 2);
}

/// A metric one group lacks is named with that group: the synthetic
/// baseline ran `exec`, the other two did not.
#[test]
fn a_metric_not_measured_names_the_group_that_lacks_it() {
    let s = Study::of_runs(&runs());
    let lines = study::verdict_lines(&s);
    let want = "Program metric under default: not measured in THP always, performance governor.";
    assert!(lines.iter().any(|l| l == want), "{lines:#?}");
    assert!(lines.iter().any(|l| l == "Program metric under default: not measured in epyc NPS2."));
    assert!(!lines.iter().any(|l| l.contains("in both groups")), "{lines:#?}");
}

/// The baseline run with only a local triad on CPUs 0-1 at `local` GB/s
/// and a 2-thread scaling point on the same CPUs at `scaling` GB/s.
fn scaling_vs_local_run(local: f64, scaling: f64) -> LoadedRun {
    let mut run = runs()[0].clone();
    run.results.clear();
    for (seq, (mode, best)) in [("local", local), ("scaling", scaling)].into_iter().enumerate() {
        run.results.push(result(
            seq as u32 + 1,
            "bw",
            serde_json::json!({"mode": mode, "kernel": "triad", "stores": "nt", "threads": 2,
                "cpus": "0-1", "cpu_node": 0, "mem_node": 0, "best_gbs": best,
                "median_gbs": best * 0.98, "min_gbs": best * 0.95, "max_gbs": best,
                "spread_pct": 5.0, "top_spread_pct": 1.5, "reps": 20, "stable": true}),
        ));
    }
    run
}

/// The run: 2-thread scaling at 103 GB/s where local triad on the
/// same CPUs reached 53.6. The run's text (what `run` and `show` print)
/// and its report both say the two contradict each other; the same pair
/// within the noise says nothing.
#[test]
fn scaling_above_local_on_the_same_cpus_is_flagged_in_text_and_report() {
    let run = scaling_vs_local_run(53.6, 103.0);
    let text = report::summary_text(&run);
    let line = "bw scaling triad, 2 thread(s) on CPUs 0-1: contradicts local: 103 GB/s is 92.2% above the 53.6 GB/s local triad reached with 2 thread(s) on CPUs 0-1, beyond the 5.0% their best repetitions' noise allows";
    assert!(text.contains(line), "{text}");
    let md = String::from_utf8(render_report(Format::Markdown, &run, &[])).unwrap();
    // In the summary's marked figures and beside the scaling chart.
    assert_eq!(md.matches(line).count(), 2, "{md}");
    let html = String::from_utf8(render_report(Format::Html, &run, &[])).unwrap();
    assert!(html.contains("contradicts local"), "the HTML report flags it too");

    let quiet = scaling_vs_local_run(53.6, 54.5);
    assert!(!report::summary_text(&quiet).contains("contradicts"));
    let md = String::from_utf8(render_report(Format::Markdown, &quiet, &[])).unwrap();
    assert!(!md.contains("contradicts"));
}

/// The comparison overlays each group's sweep, loaded-latency and scaling
/// curve: one series per group, named as the group, one colour per group
/// (the same in every chart), each the curve of the group's first run.
#[test]
fn the_comparison_overlays_every_groups_curves_one_colour_per_group() {
    let runs = runs();
    let s = Study::of_runs(&runs);
    let refs: Vec<&LoadedRun> = runs.iter().collect();
    let charts = study::curves(&s, &refs);
    let names: Vec<String> = (0..s.groups.len()).map(|i| study::group_name(&s, i)).collect();
    assert!(names.len() >= 2, "{names:?}");
    let titles: Vec<&str> = charts.iter().map(|c| c.title()).collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    for c in &charts {
        let report::chart::Chart::Xy(x) = c else { panic!("{c:?}") };
        let series: Vec<&str> = x.series.iter().map(|s| s.name.as_str()).collect();
        // every group that measured the curve, once, in the groups' order
        let expected: Vec<&str> =
            names.iter().map(String::as_str).filter(|n| series.contains(n)).collect();
        assert_eq!(series, expected, "{}", x.title);
        assert!(series.len() >= 2, "{}: {series:?}", x.title);
        let colours: Vec<Option<usize>> = x.series.iter().map(|s| s.color).collect();
        for (sr, c) in x.series.iter().zip(&colours) {
            let g = names.iter().position(|n| *n == sr.name).unwrap();
            assert_eq!(*c, Some(g), "{}: {} is coloured as its group", x.title, sr.name);
        }
        assert!(x.series.iter().all(|s| s.line && !s.points.is_empty()));
        if !x.title.starts_with("Loaded") {
            // one curve each: every working set or thread count once
            for sr in &x.series {
                assert!(sr.points.windows(2).all(|w| w[0].0 < w[1].0), "{}: {sr:?}", x.title);
            }
        }
    }
    // The baseline's scaling curve is its first run's triad points of node 0.
    let report::chart::Chart::Xy(sc) = &charts[2] else { unreachable!() };
    let d = analysis::data::RunData::of(&runs[0]);
    let mut own: Vec<(f64, f64)> = d
        .bw_mode(results::bw::Mode::Scaling)
        .filter(|p| p.kernel.name() == "triad" && p.cpu_node == Some(0) && p.mem_node == Some(0))
        .map(|p| (p.threads as f64, p.best_gbs))
        .collect();
    own.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(sc.series[s.baseline].points, own);
    // A study whose runs were not loaded draws none.
    assert!(study::curves(&s, &[]).is_empty());
}

/// One name, one statistic: where the run has another package, the tile,
/// the glance box, the summary table and the brief all write `Remote
/// penalty` with the same value (the comparison's other-package / local
/// latency), never a second ratio beside it (the glance box wrote `1.6x
/// local`, the mean of every remote pair over local, beside the tile).
#[test]
fn the_remote_penalty_is_one_statistic_in_every_output() {
    let runs = runs();
    let run = &runs[0];
    let penalty = analysis::catalogue::catalogue(run)
        .into_iter()
        .find(|m| m.def == analysis::catalogue::remote_penalty_def())
        .expect("two packages: a remote penalty")
        .value;
    let want = format!("{}x", report::fmt::num(penalty, "x"));
    let md = String::from_utf8(render_report(Format::Markdown, run, &[])).unwrap();
    let glance = &md[..md.find("## Environment").unwrap()];
    assert!(glance.contains(&format!("remote penalty {want}")), "{glance}");
    assert!(!glance.contains("x local"), "a second ratio in the glance box: {glance}");
    let summary = report::summary_text(run);
    let row = summary
        .lines()
        .find(|l| l.starts_with("remote penalty (other-package / local), difference"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(row.contains(&format!("{want}, ")), "{row}");
    let brief = report::brief(run, &[]);
    assert!(brief.contains(&format!("Remote penalty: {want}")), "{brief}");
    let html = String::from_utf8(render_report(Format::Html, run, &[])).unwrap();
    assert!(
        html.contains(&format!(
            "<div class=\"tile-name\">Remote penalty</div><div class=\"tile-value\">{want}</div>"
        )),
        "the tile"
    );
}
