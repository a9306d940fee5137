//! Reports of the synthetic runs in `fixtures/synthetic-export.json` (made
//! by `fixtures/make_synthetic.py`): Markdown and compare tables pinned as
//! snapshots, HTML checked for its charts, metrics checked against the
//! figures written into the fixture.

use report::{render_report, Comparison, Format, MetricKey};
use store::{ExportDoc, LoadedRun, RunRef, Store};

const FIXTURE: &str = include_str!("fixtures/synthetic-export.json");

/// The fixture's runs, imported into a fresh store and loaded back (so the
/// test goes through the same path as the CLI): baseline, THP always, epyc.
fn runs() -> Vec<LoadedRun> {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(dir.path().join("r.db")).unwrap();
    let doc = ExportDoc::from_json(FIXTURE, "synthetic-export.json").unwrap();
    let out = db.import(&doc).unwrap();
    assert_eq!(out.imported.len(), 3);
    out.imported.iter().map(|i| db.load(&RunRef::Id(i.id.0)).unwrap()).collect()
}

#[test]
fn metrics_of_the_synthetic_baseline() {
    let runs = runs();
    let m = report::metrics(&report::data::RunData::of(&runs[0]));
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
fn compare_table_snapshot() {
    let runs = runs();
    let c = Comparison::build(&runs, 0);
    assert!(c.across_machines);
    let text = format!("{}\n{}", c.table().to_text(), c.verdict_lines().join("\n"));
    insta::assert_snapshot!("compare_table", text);
    // THP always: latency 4.8% lower, beyond the noise; bandwidth +0.4% within it
    let local_lat = c.metrics.iter().find(|m| m.metric == "local_lat_ns").unwrap();
    assert_eq!(local_lat.runs[1].verdict, Some(bench::stats::Verdict::Better));
    let local_bw = c.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap();
    assert_eq!(local_bw.runs[1].verdict, Some(bench::stats::Verdict::WithinNoise));
    // the interrupted epyc run measured no global bandwidth
    let global = c.metrics.iter().find(|m| m.metric == "global_bw_gbs").unwrap();
    assert_eq!(global.runs[2].value, None);
    assert_eq!(global.runs[2].verdict, None);
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
    // bw matrix, scaling, lat matrix, sweep, per-CPU, loaded, c2c, comparison
    assert_eq!(charts, 8);
    for title in [
        "Bandwidth matrix (triad, best GB/s)",
        "Bandwidth against thread count",
        "Latency matrix (median ns)",
        "Latency against working-set size",
        "Latency from each CPU to one node&#39;s memory",
        "Loaded latency against bandwidth",
        "Core-to-core latency (median ns, one way)",
        "Runs against the baseline",
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
            odd.results.push(store::StoredResult {
                seq: 100 + i as u32,
                recorded: "2026-11-04T09:01:00.000Z".into(),
                kind: store::ResultKind::from(kind),
                payload: p.clone(),
            });
        }
    }
    odd.topology = serde_json::json!({"nodes": "not a list", "caches": [{"level": "x"}]});
    for f in [Format::Markdown, Format::Html] {
        let out = render_report(f, &odd, &runs[..1]);
        assert!(!out.is_empty());
    }
    assert!(!report::summary_text(&odd).is_empty());
    let c = Comparison::build(&[odd, runs[0].clone()], 1);
    assert_eq!(c.metrics.len(), 7);
}
