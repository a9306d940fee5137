//! What `numaprobe run` prints: the plan before measuring (and its
//! `--dry-run --json` document), each run's `--json` document and the
//! summary after it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use bench::suite::{Budget, SuitePlan, Unselected};
use serde::Serialize;
use store::{LoadedRun, RunId, RunStatus};
use topo::Topology;

use super::{Lines, Table, TableStyle};

/// Why `--skip` or `--only` left a package-scope step out: the words the
/// run stores as the step's reason (`bench::suite::SuitePlan::select`).
pub fn left_out_by(why: Unselected) -> String {
    match why {
        Unselected::Skipped => "left out by --skip",
        Unselected::NotKept => "left out by --only",
    }
    .to_string()
}

/// A duration as seconds, or minutes past 90 s.
pub fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 90.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.1} min", s / 60.0)
    }
}

/// The machine's load when the plan was made: the 1-minute load average
/// (`None`: unreadable) over the online CPUs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    pub average: Option<f64>,
    pub cpus: usize,
}

impl Load {
    /// The plan's estimate at this load ([`bench::suite::load_factor`]).
    pub fn estimate(&self, idle: Duration) -> Duration {
        idle.mul_f64(self.average.map_or(1.0, |l| bench::suite::load_factor(l, self.cpus)))
    }
}

/// The estimate's line: the time on an idle machine and, where the load
/// average says the machine is busy (the estimate grows by a tenth or
/// more), the time at that load; or that an idle machine was assumed, and
/// why.
pub fn estimate_line(idle: Duration, load: Load) -> String {
    match load.average {
        None => format!(
            "Estimated time: about {} (measuring only), assuming an idle machine: the load average could not be read",
            fmt_secs(idle)
        ),
        Some(l) if load.estimate(idle).as_secs_f64() >= idle.as_secs_f64() * 1.1 => format!(
            "Estimated time: about {} on an idle machine; at this machine's load (1-minute load average {l:.1} on {} CPUs) about {} (measuring only)",
            fmt_secs(idle),
            load.cpus,
            fmt_secs(load.estimate(idle))
        ),
        Some(l) => format!(
            "Estimated time: about {} (measuring only; the machine is about idle: 1-minute load average {l:.1} on {} CPUs)",
            fmt_secs(idle),
            load.cpus
        ),
    }
}

/// The plan: its steps with what each measures and its estimate.
pub fn plan(topo: &Topology, plan: &SuitePlan, load: Load, style: TableStyle) -> String {
    let mut t = Table::with_header(&["step", "measures", "estimate"], style);
    for s in &plan.steps {
        t.add_row(vec![s.step.name(), s.what.clone(), fmt_secs(s.estimate)]);
    }
    let skipped: String = plan
        .skipped
        .iter()
        .map(|(id, why)| format!("Skipped: {} ({why})\n", id.as_str()))
        .collect();
    format!(
        "Plan ({} budget) for {}\n{t}\n{skipped}{}\n",
        plan.budget.name(),
        topo.summary_line(),
        estimate_line(plan.estimate(), load)
    )
}

/// `run --dry-run --json`: the plan (numaprobe writes it with its keys sorted).
#[derive(Serialize)]
pub struct PlanDoc<'a> {
    pub budget: Budget,
    pub steps: Vec<PlanStep<'a>>,
    /// Steps this machine cannot run: `{"step", "reason"}`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<PlanSkip<'a>>,
    /// On an idle machine.
    pub estimate_s: f64,
    /// At the load the machine had when the plan was made.
    pub estimate_at_load_s: f64,
    /// The 1-minute load average then (absent where unreadable).
    pub load_average: Option<f64>,
}

impl<'a> PlanDoc<'a> {
    /// The document of `plan`, made for `budget`.
    pub fn of(budget: Budget, plan: &'a SuitePlan, load: Load) -> Self {
        let steps = plan.steps.iter().map(|s| PlanStep {
            step: s.step.name(),
            measures: &s.what,
            estimate_s: s.estimate.as_secs_f64(),
        });
        let skipped =
            plan.skipped.iter().map(|(id, why)| PlanSkip { step: id.as_str(), reason: why });
        PlanDoc {
            budget,
            steps: steps.collect(),
            skipped: skipped.collect(),
            estimate_s: plan.estimate().as_secs_f64(),
            estimate_at_load_s: load.estimate(plan.estimate()).as_secs_f64(),
            load_average: load.average,
        }
    }
}

/// A step the plan leaves out on this machine, with why.
#[derive(Serialize)]
pub struct PlanSkip<'a> {
    pub step: &'static str,
    pub reason: &'a str,
}

/// One step of the plan.
#[derive(Serialize)]
pub struct PlanStep<'a> {
    pub step: String,
    pub measures: &'a str,
    pub estimate_s: f64,
}

/// One run's `--json` document (numaprobe writes it with its keys sorted):
/// what it measured, where it went, its headline metrics.
#[derive(Serialize)]
pub struct RunDoc {
    /// The run's id (`id` says the same).
    pub run: RunId,
    pub id: RunId,
    pub uuid: String,
    pub label: Option<String>,
    pub declared: audit::declared::Declared,
    pub status: RunStatus,
    pub complete: bool,
    pub message: Option<String>,
    pub budget: Budget,
    pub machine: String,
    pub machine_fingerprint: Option<String>,
    pub config_hash: String,
    pub config_fingerprint: Option<String>,
    pub elapsed_s: f64,
    pub estimate_s: f64,
    /// Results saved.
    pub results: usize,
    pub audit: audit::Counts,
    /// Headline metrics by their stable ids.
    pub metrics: BTreeMap<&'static str, MetricDoc>,
    pub report_html: PathBuf,
    pub report_md: PathBuf,
    pub textfile: Option<PathBuf>,
    pub db: PathBuf,
    pub hmat: Option<Vec<report::hmat::HmatPair>>,
    /// Every impossible figure of the run, with the likely cause
    /// ([`analysis::impossible::of_run`], worded by [`crate::impossible`]).
    pub impossible: Vec<crate::impossible::Doc>,
}

/// A headline metric with its unit and direction.
#[derive(Serialize)]
pub struct MetricDoc {
    #[serde(flatten)]
    pub metric: analysis::metrics::Metric,
    pub unit: &'static str,
    pub higher_is_better: bool,
    /// The impossible figure the metric is made of, when one is: a
    /// headline never stands without its flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impossible: Option<crate::impossible::Doc>,
}

/// The headline metrics of `run` by their stable ids ([`RunDoc::metrics`]).
pub fn metric_docs(run: &LoadedRun) -> BTreeMap<&'static str, MetricDoc> {
    let d = analysis::data::RunData::of(run);
    let mut flagged = analysis::impossible::headlines(&d);
    analysis::metrics::metrics(&d)
        .into_iter()
        .map(|(k, metric)| {
            let doc = MetricDoc {
                metric,
                unit: k.unit(),
                higher_is_better: k.higher_is_better(),
                impossible: flagged.remove(&k).as_ref().map(crate::impossible::Doc::from),
            };
            (k.id(), doc)
        })
        .collect()
}

/// What `run` prints after each run: the headline tables, where the run
/// and its reports went, the settings audit's count.
pub fn summary(
    doc: &RunDoc,
    loaded: &LoadedRun,
    elapsed: Duration,
    estimate: Duration,
    load: Load,
) -> String {
    let mut out = Lines::new();
    out.push(report::summary_text(loaded));
    let tiers = report::hmat::summary_text(loaded);
    if !tiers.is_empty() {
        out.push(tiers);
    }
    let at_load = load.estimate(estimate);
    let estimated = if at_load.as_secs_f64() >= estimate.as_secs_f64() * 1.1 {
        format!(
            "estimated {} idle, {} at the load seen before",
            fmt_secs(estimate),
            fmt_secs(at_load)
        )
    } else {
        format!("estimated {}", fmt_secs(estimate))
    };
    out.push(format!(
        "Run {} {}: {} results in {} ({estimated}); saved in {}\nReport: {}\n        {}",
        doc.run,
        doc.status.as_str(),
        doc.results,
        fmt_secs(elapsed),
        doc.db.display(),
        doc.report_html.display(),
        doc.report_md.display(),
    ));
    if let Some(t) = &doc.textfile {
        out.push(format!("Metrics: {}", t.display()));
    }
    if doc.audit.warn + doc.audit.critical > 0 {
        out.push(format!(
            "Settings audit: {} critical, {} warning(s); see the report or `numaprobe audit`.",
            doc.audit.critical, doc.audit.warn
        ));
    }
    out.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The headline documents of `run --json` carry each impossible figure
    /// whole: what, figure, limit, ratio and the likely cause.
    #[test]
    fn a_headline_carries_its_impossible_figure_whole() {
        let mut run: LoadedRun = serde_json::from_value(serde_json::json!({
            "id": 1, "uuid": "u", "label": null, "started": "2026-01-01T00:00:00Z",
            "finished": null, "status": "complete", "complete": true, "message": null,
            "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
            "command_line": "numaprobe run", "result_count": 0, "imported": false,
            "machine_info": {}, "config": {}, "topology": {}, "results": []
        }))
        .unwrap();
        let bw = serde_json::json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": 2, "best_gbs": 23.6, "peak_gbs": 1.0,
            "size_rule_ok": true, "array_bytes": 1u64 << 30, "stable": true, "placement": 1.0,
            "placement_check": {"ok": true}});
        let lat = serde_json::json!({"mode": "matrix", "cpu": 0, "cpu_node": 0, "mem_node": 0,
            "median_ns": 4.0, "size_bytes": 16u64 << 20, "stride_bytes": 256, "noise_pct": 0.5});
        run.results = [("bw", bw), ("lat", lat)]
            .iter()
            .enumerate()
            .map(|(i, (kind, v))| results::run::StoredRecord {
                seq: i as u32 + 1,
                recorded: "2026-01-01T00:00:00Z".into(),
                record: results::upgrade::read(kind, v).record,
                as_stored: None,
            })
            .collect();
        let docs = metric_docs(&run);
        let json = |id: &str| serde_json::to_string(&docs[id].impossible).unwrap();
        assert_eq!(
            json("local_bw_gbs"),
            r#"{"what":"bw local triad, 2 thread(s), CPU node 0 -> memory 0","figure":23.6,"unit":"GB/s","limit":1.0,"limit_what":"the theoretical peak","ratio":23.6,"cause":"a wrong peak: the arrays were DRAM-sized on verified pages, so the peak given (--peak-gbs) or read from the DIMM table is too low (channels or MT/s)"}"#
        );
        assert_eq!(
            json("local_lat_ns"),
            r#"{"what":"lat matrix, CPU 0 -> memory node 0","figure":4.0,"unit":"ns","limit":8.0,"limit_what":"the fastest last-level cache's latency (typical figure: no sweep measured)","ratio":0.5,"cause":"a cache or prefetcher passing for DRAM (chase of 16 MiB, 256 B stride): a DRAM figure needs a chase well past the last-level cache"}"#
        );
    }

    #[test]
    fn the_estimate_says_the_load_it_assumed() {
        let idle = Duration::from_secs(30);
        let busy = estimate_line(idle, Load { average: Some(3.0), cpus: 2 });
        assert!(busy.contains("about 30 s on an idle machine"), "{busy}");
        assert!(busy.contains("load average 3.0 on 2 CPUs) about 75 s"), "{busy}");
        let quiet = estimate_line(idle, Load { average: Some(0.05), cpus: 2 });
        assert!(quiet.contains("about idle") && !quiet.contains("75 s"), "{quiet}");
        let unknown = estimate_line(idle, Load { average: None, cpus: 2 });
        assert!(unknown.contains("assuming an idle machine"), "{unknown}");
    }
}
