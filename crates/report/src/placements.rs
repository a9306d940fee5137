//! The "Program under placements" section: the `exec` results of a run
//! (one payload per policy, as `numaprobe exec` saves them), judged against
//! the baseline policy the way `exec` judges them.
//!
//! `exec` saves each policy as soon as it is measured, before the matrix is
//! judged, so stored payloads usually hold `change_pct: null` and
//! `verdict: "no-data"`; the report then computes both from the stored
//! `metric_summary` / `wall_summary` with [`results::stats::compare_samples`]
//! (fewer than 3 runs on either side: `undecided`).

use store::LoadedRun;

use crate::chart::{BarChart, BarGroup, Chart};
use crate::doc::{Document, Table};
use analysis::text::signed_pct;

use crate::fmt::{num, opt, plain};
use results::exec::{PolicyResult, PolicyVerdict};
use results::stats::measured;

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
    /// Median event counts of the successful runs (`exec --counters`).
    pub counters: Option<results::counters::Counters>,
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

impl ExecView {
    /// The exec results of `run` (in `exec`), or None when it has none.
    pub fn of(run: &LoadedRun, exec: &[PolicyResult]) -> Option<ExecView> {
        if exec.is_empty() {
            return None;
        }
        let cmdline = &run.summary.command_line;
        let command = cmdline.split_once(" -- ").map(|(_, c)| c.trim().to_string());
        let on_metric = exec.iter().any(|p| p.stats.median_metric.is_some());
        let higher_is_better = on_metric && !cmdline.contains("--lower-is-better");
        let base_idx = exec.iter().position(|p| p.policy == "default").unwrap_or(0);
        let base = exec[base_idx].summary(on_metric);
        let policies = exec
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let codes: std::collections::BTreeSet<String> =
                    p.runs.iter().filter_map(|r| r.exit_code.map(|c| c.to_string())).collect();
                let stored_verdict = (p.verdict != PolicyVerdict::NoData).then_some(p.verdict);
                let own = p.summary(on_metric);
                let change = p.stats.change_pct.and_then(measured);
                let (change_pct, verdict) = match (change, stored_verdict) {
                    (Some(c), Some(v)) => (Some(c), v.as_str().to_string()),
                    _ => match (&base, own) {
                        (Some(b), Some(s)) => {
                            let change = results::stats::change_pct(b.median, s.median);
                            let v = if i == base_idx {
                                "baseline".to_string()
                            } else {
                                match results::stats::compare_samples(
                                    b,
                                    &s,
                                    higher_is_better,
                                    results::stats::EXEC_FLOOR_PCT,
                                ) {
                                    Some(results::stats::Verdict::Better) => "better".into(),
                                    Some(results::stats::Verdict::Worse) => "worse".into(),
                                    Some(results::stats::Verdict::WithinNoise) => {
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
                    policy: p.policy.clone(),
                    placement: Some(p.placement.clone()).filter(|p| !p.is_empty()),
                    runs: p.runs.len(),
                    ok_runs: Some(p.ok_runs as i64),
                    median_metric: p.stats.median_metric.and_then(measured),
                    median_wall_s: p
                        .stats
                        .median_wall_s
                        .and_then(measured)
                        .or_else(|| p.summary(false).map(|s| s.median)),
                    noise_pct: p
                        .stats
                        .noise_pct
                        .and_then(measured)
                        .or(own.map(|s| s.robust_cv_pct())),
                    change_pct,
                    verdict,
                    pages: p.pages_text(),
                    exit_codes: codes.into_iter().collect::<Vec<_>>().join(","),
                    counters: p.counters.clone(),
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

    /// Whether any policy was recorded with counters.
    fn counted(&self) -> bool {
        self.policies.iter().any(|p| p.counters.is_some())
    }

    /// The table of the policies: placement, runs, medians, noise, change
    /// and verdict against the baseline, pages per node, exit codes (and
    /// counters when recorded). `show` prints it for an exec run.
    pub fn table(&self) -> Table {
        let base = self.baseline.as_deref().unwrap_or("baseline");
        let change_h = format!("Change vs {base} %");
        let counted = self.counted();
        let mut header: Vec<String> = [
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
        .collect();
        if counted {
            header.extend(crate::counters::HEADER.iter().map(|s| s.to_string()));
        }
        let mut t = Table::new(header);
        for p in &self.policies {
            let mut row = vec![
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
            ];
            if counted {
                row.extend(crate::counters::cells(p.counters.as_ref()));
            }
            t.push(row);
        }
        t
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
            plain(results::stats::EXEC_FLOOR_PCT)
        ));
        let base = self.baseline.as_deref().unwrap_or("baseline");
        let counted = self.counted();
        doc.table(self.table());
        if counted {
            doc.p("Counters: median of the successful runs, the command and its children (perf_event_open).");
            for n in
                crate::counters::notes(self.policies.iter().filter_map(|p| p.counters.as_ref()))
            {
                doc.p(n);
            }
        }
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
