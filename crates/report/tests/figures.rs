//! One statistic per figure: a single-node run measured while other work
//! ran (synthetic records in the shape `run` stores them) must show each
//! figure with the same value, spread and rounding in the glance box, the
//! summary, the section tables, the chart hover values and the brief; mark
//! its disturbed figures with their cause; say in one line why figures
//! that differ by method differ; and not contradict itself about the
//! prefetch check. Also the comparison report's opening.

use report::{render_report, Format};
use serde_json::json;
use store::{ExportDoc, LoadedRun, RunRef, Store};

const FIXTURE: &str = include_str!("fixtures/synthetic-export.json");
const SNC2: &str = include_str!("fixtures/snc2-cxl-export.json");

fn fixture_runs() -> Vec<LoadedRun> {
    import(FIXTURE)
}

fn import(json: &str) -> Vec<LoadedRun> {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Store::open(dir.path().join("r.db")).unwrap();
    let doc = ExportDoc::from_json(json, "export.json").unwrap();
    let out = db.import(&doc).unwrap();
    out.imported.iter().map(|i| db.load(&RunRef::Id(i.id.0)).unwrap()).collect()
}

fn result(seq: u32, kind: &str, payload: serde_json::Value) -> store::StoredRecord {
    let up = results::upgrade::read(kind, &payload);
    store::StoredRecord {
        seq,
        recorded: "2026-11-04T09:01:00.000Z".into(),
        record: up.record,
        as_stored: up.as_stored,
    }
}

fn busy() -> serde_json::Value {
    json!({"clean": 2, "disturbed": 9, "lost_pct": 48.2, "busiest_cpu": 0,
           "involuntary_switches": 30, "migrations": 0, "source": "run-delay"})
}

/// The single-node desktop run of the SNC2 fixture with its results
/// replaced: local
/// bandwidth disturbed (spread 97.4%), global from the same 2 threads, a
/// scaling curve, a latency point whose histogram p50 lies below its
/// median, an audit taken before the prefetch check, and the check.
fn busy_run() -> LoadedRun {
    let mut run = import(SNC2)[3].clone();
    assert_eq!(run.display_name(), "desktop");
    run.results.clear();
    let bw = |mode: &str, threads: u32, best: f64, spread: f64, stable: bool| {
        let mut v = json!({"mode": mode, "kernel": "triad", "cpu_node": 0, "mem_node": 0,
            "threads": threads, "best_gbs": best, "median_gbs": best * 0.7,
            "min_gbs": best * 0.4, "max_gbs": best, "spread_pct": spread, "reps": 20,
            "stable": stable, "top_spread_pct": 4.0, "validated": true});
        if !stable {
            v["disturbance"] = busy();
        }
        v
    };
    let payloads = [
        ("bw", bw("local", 2, 41.23, 97.4, false)),
        ("bw", bw("global", 2, 70.31, 12.0, true)),
        ("bw", bw("scaling", 1, 13.61, 90.0, true)),
        ("bw", bw("scaling", 2, 41.23, 97.4, false)),
        (
            "lat",
            json!({"mode": "matrix", "cpu": 0, "cpu_node": 0, "mem_node": 0,
                "size_bytes": 1u64 << 28, "median_ns": 237.4, "spread_pct": 8.0, "noise_pct": 2.0,
                "samples": 11, "stable": true,
                "histogram": {"sub_buckets": 16, "loads_per_value": 256, "count": 100,
                    "buckets": [{"lo_ns": 144.0, "hi_ns": 152.0, "count": 60},
                                {"lo_ns": 480.0, "hi_ns": 512.0, "count": 40}]}}),
        ),
        (
            "audit",
            json!({"id": "cpu.prefetchers", "severity": "unknown",
                "found": "no saved run of this machine has a prefetch check",
                "expected": "hardware prefetchers enabled (spatial prefetch measurable)",
                "fix": "numaprobe lat, then audit again"}),
        ),
        (
            "lat-summary",
            serde_json::to_value(results::lat::PrefetchCheck::judge(
                0,
                Some(0),
                1 << 28,
                "4k".into(),
                256,
                (101.7, 1.0),
                (162.0, 1.0),
            ))
            .unwrap(),
        ),
    ];
    for (i, (kind, p)) in payloads.into_iter().enumerate() {
        run.results.push(result(i as u32 + 1, kind, p));
    }
    run
}

fn md(run: &LoadedRun, compare: &[LoadedRun]) -> String {
    String::from_utf8(render_report(Format::Markdown, run, compare)).unwrap()
}

fn html(run: &LoadedRun, compare: &[LoadedRun]) -> String {
    String::from_utf8(render_report(Format::Html, run, compare)).unwrap()
}

#[test]
fn the_glance_box_and_the_tables_write_the_same_figure_and_spread() {
    let run = busy_run();
    let md = md(&run, &[]);
    // glance: value, the table's spread, the mark
    assert!(
        md.contains(
            "local 41 GB/s (spread 97.4%, disturbed) per node; global 70 GB/s (spread 12.0%)"
        ),
        "{md}"
    );
    assert!(md.contains("local 237 ns (spread 8.0%)"), "{md}");
    // summary and section tables: the same value, rounding and spread
    assert!(
        md.contains("| local, node 0 | triad (regular stores) | 2 | 41 (disturbed) | 97.4 |"),
        "{md}"
    );
    assert!(md.contains("| local, node 0 | 237 |"), "{md}");
    assert!(md.contains("| 0 | 0 | triad | 2 | 41 (disturbed) |"), "{md}");
    // the cause of the mark, once per flagged result
    assert!(md.contains(
        "bw local triad, 2 thread(s), CPU node 0 -> memory 0: disturbed: CPU 0 was busy with other processes for 48% of the time (9 of 11 samples discarded)."
    ));
    // the plain-text summary (`show`, `run`) carries the cause too
    let text = report::summary_text(&run);
    assert!(text.contains("41 (disturbed)") && text.contains("was busy with other processes"));
}

#[test]
fn local_beside_global_on_one_node_says_why_they_differ() {
    let md = md(&busy_run(), &[]);
    assert!(md.contains(
        "| **Why they differ** | on one node, local (41 GB/s) and global (70 GB/s) run the same 2 thread(s) on the same memory: the difference is run-to-run noise"
    ), "{md}");
}

#[test]
fn the_scaling_chart_hover_writes_the_tables_figure() {
    let run = busy_run();
    let md = md(&run, &[]);
    let html = html(&run, &[]);
    // 13.61 GB/s at 90% spread: the table writes 14, and so does the chart
    assert!(md.contains("| 0 | 0 | triad | 1 | 14 |"), "{md}");
    assert!(html.contains("<title>triad, node 0 -&gt; 0: 1, 14 GB/s (spread"), "hover text");
}

#[test]
fn the_brief_writes_the_figures_as_the_report_does() {
    let b = report::brief(&busy_run(), &[]);
    assert!(b.contains("| Global bandwidth | 70 GB/s | 12.0% | 1 result(s), triad |"), "{b}");
    assert!(b.contains("| Local bandwidth | 41 GB/s (disturbed) | 97.4% |"), "{b}");
    assert!(b.contains("was busy with other processes for 48%"), "{b}");
}

#[test]
fn the_briefs_comparison_rounds_a_group_as_the_runs_tables_do() {
    let a = busy_run();
    let mut b = a.clone();
    b.summary.id = store::RunId(99);
    b.summary.uuid = "99999999-0000-4000-8000-000000000000".into();
    b.summary.label = Some("again".into());
    let brief = report::brief(&a, &[b]);
    // 70.31 GB/s at 12% spread is "70" in the figures table and in the
    // comparison's table, never 70.3 in one and 70 in the other
    assert!(brief.contains("| Global bandwidth | 70 GB/s |"), "{brief}");
    assert!(brief.contains("| Global bandwidth (GB/s) | 70 (n=1) | 70 (n=1) "), "{brief}");
    assert!(!brief.contains("70.3"), "{brief}");
}

#[test]
fn the_histogram_p50_beside_the_median_is_explained() {
    let md = md(&busy_run(), &[]);
    assert!(md.contains("Why the p50 here differs from the median in the tables (local: CPU node 0 -> memory node 0: median 237 ns, p50 148 ns)"), "{md}");
}

#[test]
fn the_audit_taken_before_the_prefetch_check_does_not_deny_it() {
    let run = busy_run();
    let md = md(&run, &[]);
    let audit = &md[md.find("### Settings audit").unwrap()..md.find("## Appendix").unwrap()];
    assert!(!audit.contains("no saved run of this machine has a prefetch check"), "{audit}");
    assert!(
        audit.contains("audited before this run measured its prefetch check, which found: "),
        "{audit}"
    );
    let glance = &md[..md.find("## Environment").unwrap()];
    assert!(!glance.contains("no saved run of this machine"), "{glance}");
}

#[test]
fn a_comparison_report_opens_with_the_study() {
    let runs = fixture_runs();
    for format in [Format::Markdown, Format::Html] {
        let out = String::from_utf8(render_report(format, &runs[0], &runs[1..2])).unwrap();
        let title = "numaprobe comparison: baseline (baseline) vs THP always, performance governor";
        assert!(out.contains(title), "{out}");
        let answer = out.find("The answer").expect("the study's answer first");
        let comparison = out.find("Comparison<").or_else(|| out.find("## Comparison")).unwrap();
        let group1 = out.find("Group 1: baseline (baseline)").unwrap();
        let environment = out.find("Environment").unwrap();
        assert!(answer < comparison && comparison < group1 && group1 < environment);
        // settings that differ, verdicts and recommendations in the answer
        let bx = &out[answer..comparison];
        for want in [
            "Settings that differ",
            "governor (powersave | performance)",
            "+0.4%",
            "undecided",
            "hpc",
            "Recommendations",
        ] {
            assert!(bx.contains(want), "{want:?} not in the answer: {bx}");
        }
        // one table, change and verdict in their own columns
        assert!(
            bx.contains("| Change | 90% interval | Verdict |") || bx.contains("<th>Verdict</th>"),
            "{bx}"
        );
    }
}

#[test]
fn no_markdown_marks_leak_into_html() {
    let runs = fixture_runs();
    let html = html(&runs[0], &runs[1..2]);
    // the study's recommendations quote commands in backticks
    assert!(
        html.contains("<code>numaprobe gpu --label ...</code>"),
        "backticks not turned into code"
    );
    let mut text = html.clone();
    // outside code blocks (command lines are shown as typed)
    while let (Some(a), Some(b)) = (text.find("<pre>"), text.find("</pre>")) {
        text.replace_range(a..b + 6, "");
    }
    assert!(!text.contains('`'), "a backtick leaks into the HTML");
    assert!(!text.contains("**"), "a ** leaks into the HTML");
}

#[test]
fn the_audit_table_wraps_to_the_page() {
    let html = html(&busy_run(), &[]);
    let at = html.find(">Settings audit</h3>").unwrap();
    assert!(html[at..]
        .starts_with(">Settings audit</h3>\n<div class=\"table-wrap\"><table class=\"prose\">"));
    // sentences wrap anywhere (a long path inside one too); an identifier
    // or a single word (one token: a setting, `nothing`) is never broken
    assert!(html.contains("table.prose td { overflow-wrap: anywhere; }"));
    assert!(html.contains(
        "td.id, table.prose td.id { overflow-wrap: normal; word-break: keep-all; hyphens: none; }"
    ));
    assert!(html[at..].contains("<td class=\"id\">"), "no identifier cell in the audit");
}

/// A loaded point below the idle latency of its chase, the idle figure
/// from each place it can come from (a chase of each DRAM mode, or the
/// curve's own idle point), whole.
#[test]
fn a_loaded_point_below_idle_names_where_the_idle_figure_came_from() {
    let mut run = busy_run();
    run.results.clear();
    let chase = |mode: &str, cpu: u32| {
        json!({"mode": mode, "cpu": cpu, "cpu_node": 0, "mem_node": 0,
            "size_bytes": 1u64 << 28, "stride_bytes": 256, "median_ns": 200.0,
            "spread_pct": 1.0, "noise_pct": 0.5, "samples": 11, "stable": true})
    };
    let loaded = |cpu: u32, idle: bool, ns: f64, load: f64| {
        json!({"mode": "loaded", "cpu": cpu, "mem_node": 0, "idle": idle,
            "delay": if idle { 0 } else { 10 }, "latency_ns": ns, "load_gbs": load,
            "spread_pct": 1.0, "size_bytes": 1u64 << 28, "stride_bytes": 256,
            "load_kind": "read", "stable": true})
    };
    let payloads = [
        ("lat", chase("matrix", 0)),
        ("lat", chase("point", 1)),
        ("lat", chase("per-cpu", 2)),
        ("lat", chase("sweep", 3)),
        ("lat", loaded(0, false, 120.0, 40.0)),
        ("lat", loaded(1, false, 120.0, 40.0)),
        ("lat", loaded(2, false, 120.0, 40.0)),
        ("lat", loaded(3, false, 120.0, 40.0)),
        ("lat", loaded(4, true, 200.0, 1.0)),
        ("lat", loaded(4, false, 120.0, 40.0)),
    ];
    for (i, (kind, p)) in payloads.into_iter().enumerate() {
        run.results.push(result(i as u32 + 1, kind, p));
    }
    let lines = report::figures::lat_contradiction_lines(&analysis::data::RunData::of(&run));
    assert_eq!(
        lines,
        [
            "lat loaded read, CPU 0 -> memory node 0: contradicts the idle latency: 120.0 ns under 40.0 GB/s of load is 40.0% below the 200.0 ns the matrix measured idle on the same CPU and memory, beyond the 5.0% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
            "lat loaded read, CPU 1 -> memory node 0: contradicts the idle latency: 120.0 ns under 40.0 GB/s of load is 40.0% below the 200.0 ns the latency point measured idle on the same CPU and memory, beyond the 5.0% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
            "lat loaded read, CPU 2 -> memory node 0: contradicts the idle latency: 120.0 ns under 40.0 GB/s of load is 40.0% below the 200.0 ns the per-CPU latency measured idle on the same CPU and memory, beyond the 5.0% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
            "lat loaded read, CPU 3 -> memory node 0: contradicts the idle latency: 120.0 ns under 40.0 GB/s of load is 40.0% below the 200.0 ns the sweep measured idle on the same CPU and memory, beyond the 5.0% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
            "lat loaded read, CPU 4 -> memory node 0: contradicts the idle latency: 120.0 ns under 40.0 GB/s of load is 40.0% below the 200.0 ns the curve's idle point measured idle on the same CPU and memory, beyond the 5.0% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
        ]
    );
}
