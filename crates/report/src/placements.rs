//! The "Program under placements" section: the `exec` results of a run
//! (one payload per policy, as `numaprobe exec` saves them), judged against
//! the baseline policy the way `exec` judges them.
//!
//! `exec` saves each policy as soon as it is measured, before the matrix is
//! judged, so stored payloads usually hold `change_pct: null` and
//! `verdict: "no-data"`; the report then computes both from the stored
//! `metric_summary` / `wall_summary` with [`bench::stats::compare_samples`].

use serde_json::Value;
use store::LoadedRun;

use crate::chart::{BarChart, BarGroup, Chart};
use crate::data::{int, num as field_num, text as field_text};
use crate::doc::{Document, Table};
use crate::fmt::{num, opt, plain, signed_pct};
use bench::stats::Summary;

/// One policy of an exec experiment, read from its payload.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyView {
    pub policy: String,
    pub placement: Option<String>,
    pub runs: usize,
    pub ok_runs: Option<i64>,
    pub median_metric: Option<f64>,
    pub median_wall_s: Option<f64>,
    pub noise_pct: Option<f64>,
    /// Change of the compared quantity against the baseline, percent.
    pub change_pct: Option<f64>,
    /// `baseline`, `better`, `worse`, `within noise`, `undecided` (too few runs), `no data`.
    pub verdict: String,
    /// `N0 98% N1 2%`: anonymous pages per node of the last run with a
    /// reading.
    pub pages: Option<String>,
    pub exit_codes: String,
}

/// The exec results of one run, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecView {
    /// The measured command (the part of the command line after `--`),
    /// when the run's command line has one.
    pub command: Option<String>,
    /// True when compared on the `--metric` figure, false on wall time.
    pub on_metric: bool,
    pub higher_is_better: bool,
    pub baseline: Option<String>,
    pub policies: Vec<PolicyView>,
}

fn summary_of(v: &Value, k: &str) -> Option<Summary> {
    v.get(k).and_then(|s| serde_json::from_value(s.clone()).ok())
}

/// The summary of the compared quantity of one policy: the stored
/// `metric_summary` / `wall_summary`, else computed from its successful
/// runs (`ok`, or exit code 0 when `ok` is absent).
fn summary_for(p: &Value, on_metric: bool) -> Option<Summary> {
    let key = if on_metric { "metric_summary" } else { "wall_summary" };
    summary_of(p, key).or_else(|| {
        let runs = p.get("runs")?.as_array()?;
        let values: Vec<f64> = runs
            .iter()
            .filter(|r| {
                r.get("ok").and_then(Value::as_bool).unwrap_or(int(r, "exit_code") == Some(0))
            })
            .filter_map(|r| field_num(r, if on_metric { "metric" } else { "wall_s" }))
            .collect();
        Summary::of(&values)
    })
}

/// `N0 98% N1 2%` from the last run with a `numa_pages` reading.
fn pages_of(runs: &[Value]) -> Option<String> {
    let nodes = runs
        .iter()
        .rev()
        .find_map(|r| r.get("numa_pages")?.get("nodes")?.as_array().filter(|n| !n.is_empty()))?;
    let parts: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let frac = field_num(n, "anon_fraction").or_else(|| field_num(n, "fraction"))?;
            Some(format!("N{} {:.0}%", int(n, "node")?, frac * 100.0))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

impl ExecView {
    /// The exec payloads of `run` (in `exec`), or None when it has none.
    pub fn of(run: &LoadedRun, exec: &[Value]) -> Option<ExecView> {
        let payloads: Vec<&Value> = exec.iter().filter(|p| p.is_object()).collect();
        if payloads.is_empty() {
            return None;
        }
        let cmdline = &run.summary.command_line;
        let command = cmdline.split_once(" -- ").map(|(_, c)| c.trim().to_string());
        let on_metric = payloads.iter().any(|p| field_num(p, "median_metric").is_some());
        let higher_is_better = on_metric && !cmdline.contains("--lower-is-better");
        let base_idx = payloads
            .iter()
            .position(|p| field_text(p, "policy").as_deref() == Some("default"))
            .unwrap_or(0);
        let base = summary_for(payloads[base_idx], on_metric);
        let policies = payloads
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let runs: Vec<Value> =
                    p.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
                let codes: std::collections::BTreeSet<String> =
                    runs.iter().filter_map(|r| field_text(r, "exit_code")).collect();
                let stored_verdict =
                    field_text(p, "verdict").filter(|v| v != "no-data" && v != "no data");
                let stored_change = field_num(p, "change_pct");
                let own = summary_for(p, on_metric);
                let (change_pct, verdict) = match (stored_change, stored_verdict) {
                    (Some(c), Some(v)) => (Some(c), v.replace('-', " ")),
                    _ => match (&base, own) {
                        (Some(b), Some(s)) => {
                            let change = bench::stats::change_pct(b.median, s.median);
                            let v = if i == base_idx {
                                "baseline".to_string()
                            } else {
                                match bench::stats::compare_samples(
                                    b,
                                    &s,
                                    higher_is_better,
                                    bench::stats::DEFAULT_FLOOR_PCT,
                                ) {
                                    Some(bench::stats::Verdict::Better) => "better".into(),
                                    Some(bench::stats::Verdict::Worse) => "worse".into(),
                                    Some(bench::stats::Verdict::WithinNoise) => {
                                        "within noise".into()
                                    }
                                    None => "undecided".into(),
                                }
                            };
                            (Some(change), v)
                        }
                        _ if i == base_idx => (None, "baseline".into()),
                        _ => (None, "no data".into()),
                    },
                };
                PolicyView {
                    policy: field_text(p, "policy").unwrap_or_else(|| "?".into()),
                    placement: field_text(p, "placement"),
                    runs: runs.len(),
                    ok_runs: int(p, "ok_runs"),
                    median_metric: field_num(p, "median_metric"),
                    median_wall_s: field_num(p, "median_wall_s")
                        .or_else(|| summary_for(p, false).map(|s| s.median)),
                    noise_pct: field_num(p, "noise_pct").or(own.map(|s| s.robust_cv_pct())),
                    change_pct,
                    verdict,
                    pages: pages_of(&runs),
                    exit_codes: codes.into_iter().collect::<Vec<_>>().join(","),
                }
            })
            .collect::<Vec<_>>();
        Some(ExecView {
            command,
            on_metric,
            higher_is_better,
            baseline: policies.get(base_idx).map(|p| p.policy.clone()),
            policies,
        })
    }

    fn value(&self, p: &PolicyView) -> Option<f64> {
        if self.on_metric {
            p.median_metric
        } else {
            p.median_wall_s
        }
    }

    /// What is compared: "the metric" or "wall time".
    fn quantity(&self) -> &'static str {
        if self.on_metric {
            "median metric"
        } else {
            "median wall time"
        }
    }

    /// One sentence naming the best policy, or saying none beats the
    /// baseline.
    pub fn best_sentence(&self) -> String {
        let base = self.baseline.clone().unwrap_or_else(|| "?".into());
        let better: Vec<&PolicyView> =
            self.policies.iter().filter(|p| p.verdict == "better").collect();
        let best = better.into_iter().filter(|p| self.value(p).is_some()).max_by(|a, b| {
            let (x, y) = (self.value(a).unwrap_or(0.0), self.value(b).unwrap_or(0.0));
            if self.higher_is_better {
                x.total_cmp(&y)
            } else {
                y.total_cmp(&x)
            }
        });
        let unit = if self.on_metric { "" } else { " s" };
        match best {
            Some(p) => format!(
                "Best placement: {}{}, {} than {base} beyond noise ({} {}{unit}, {}).",
                p.policy,
                p.placement.as_ref().map(|x| format!(" ({x})")).unwrap_or_default(),
                if self.higher_is_better == (p.change_pct.unwrap_or(0.0) > 0.0) {
                    "better"
                } else {
                    "worse"
                },
                self.quantity(),
                self.value(p).map_or("-".into(), plain),
                p.change_pct.map_or("-".into(), signed_pct)
            ),
            None if self.policies.iter().all(|p| p.change_pct.is_none()) => format!(
                "No best placement: the baseline '{base}' has no successful run{} to compare with.",
                if self.on_metric { " with a metric" } else { "" }
            ),
            None => format!(
                "No placement is better than '{base}' beyond noise: the program runs as well under the default placement as under any measured one."
            ),
        }
    }

    /// The section's blocks.
    pub fn render(&self, doc: &mut Document) {
        doc.h(2, "Program under placements");
        doc.p(format!(
            "{}Compared on the {} ({}), each placement against '{}'; a change counts only beyond three combined robust standard deviations and at least {}%.",
            self.command.as_ref().map(|c| format!("Command: {c}. ")).unwrap_or_default(),
            if self.on_metric { "--metric figure" } else { "wall time" },
            if self.higher_is_better { "higher is better" } else { "lower is better" },
            self.baseline.as_deref().unwrap_or("?"),
            plain(bench::stats::DEFAULT_FLOOR_PCT)
        ));
        let base = self.baseline.as_deref().unwrap_or("baseline");
        let change_h = format!("Change vs {base} %");
        let mut t = Table::new(
            [
                "Policy",
                "Placement",
                "OK runs",
                "Median metric",
                "Median wall s",
                "Noise %",
                change_h.as_str(),
                "Verdict",
                "Anon pages per node",
                "Exit codes",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        );
        for p in &self.policies {
            t.push(vec![
                p.policy.clone(),
                p.placement.clone().unwrap_or_else(|| "-".into()),
                match p.ok_runs {
                    Some(ok) => format!("{ok}/{}", p.runs),
                    None => p.runs.to_string(),
                },
                p.median_metric.map_or("-".into(), plain),
                opt(p.median_wall_s, "s"),
                opt(p.noise_pct, "%"),
                p.change_pct.map_or("-".into(), signed_pct),
                p.verdict.clone(),
                p.pages.clone().unwrap_or_else(|| "-".into()),
                if p.exit_codes.is_empty() { "-".into() } else { p.exit_codes.clone() },
            ]);
        }
        doc.table(t);
        doc.callout(self.best_sentence());

        let with_change: Vec<&PolicyView> =
            self.policies.iter().filter(|p| p.change_pct.is_some()).collect();
        if with_change.len() >= 2 {
            let groups = with_change
                .iter()
                .map(|p| BarGroup {
                    name: p.policy.clone(),
                    note: p.placement.clone().unwrap_or_default(),
                    values: vec![p.change_pct.map(|c| 100.0 + c)],
                    labels: vec![format!(
                        "{} ({}, {})",
                        self.value(p).map_or("-".into(), |v| if self.on_metric {
                            plain(v)
                        } else {
                            format!("{} s", num(v, "s"))
                        }),
                        p.change_pct.map_or("-".into(), signed_pct),
                        p.verdict
                    )],
                })
                .collect();
            doc.chart(Chart::Bars(BarChart {
                title: format!("Placements against {base} ({})", self.quantity()),
                x_label: format!(
                    "{} as % of {base} ({})",
                    self.quantity(),
                    if self.higher_is_better { "higher is better" } else { "lower is better" }
                ),
                series: vec![self.quantity().to_string()],
                groups,
                reference: Some(100.0),
            }));
        } else {
            doc.p("Only one placement has a figure to compare: no chart.");
        }
    }
}
