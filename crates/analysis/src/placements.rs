//! `exec` results judged: each policy of a run's `exec` experiment
//! against the baseline policy, the way `exec` judges them, in the
//! direction stored with the policies (`metric_higher_is_better`, a named
//! metric's own; the command line only for runs stored before the
//! direction was). The report's "Program under placements" section and
//! `show` draw it.
//!
//! `exec` saves each policy as soon as it is measured, before the matrix is
//! judged, so stored payloads usually hold `change_pct: null` and
//! `verdict: "no-data"`; the change and verdict are then computed from the
//! stored `metric_summary` / `wall_summary` with
//! [`results::stats::compare_samples`] (fewer than 3 runs on either side:
//! `undecided`).

use results::exec::{PolicyResult, PolicyVerdict};
use results::run::LoadedRun;
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
    /// The named metric compared on (`exec --metric NAME=REGEX` without an
    /// unnamed metric: the first by name, as `exec` judges); `None` for the
    /// unnamed metric or wall time.
    pub metric_name: Option<String>,
    /// The compared quantity's direction, as stored with the policies.
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
        let unnamed = exec.iter().any(|p| p.stats.median_metric.is_some());
        // No unnamed metric: the named one first by name, as `exec`
        // compares them.
        let metric_name =
            if unnamed { None } else { exec.iter().find_map(|p| p.metrics.keys().next().cloned()) };
        let on_metric = unnamed || metric_name.is_some();
        let name = metric_name.as_deref();
        // The direction stored with the policy (per metric), never a guess
        // from the command line (which older runs only fall back to).
        let higher_is_better = on_metric
            && exec
                .iter()
                .find(|p| match name {
                    None => p.metric_higher_is_better.is_some(),
                    Some(n) => p.metrics.contains_key(n),
                })
                .unwrap_or(&exec[0])
                .metric_higher_is_better(name, cmdline);
        let summary = |p: &PolicyResult| match name {
            None => p.summary(on_metric),
            Some(n) => p
                .metrics
                .get(n)
                .and_then(|m| m.summary)
                .or_else(|| results::stats::Summary::of(&p.metric_values(Some(n)))),
        };
        let base_idx = exec.iter().position(|p| p.policy == "default").unwrap_or(0);
        let base = summary(&exec[base_idx]);
        let policies = exec
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let codes: std::collections::BTreeSet<String> =
                    p.runs.iter().filter_map(|r| r.exit_code.map(|c| c.to_string())).collect();
                let stored_verdict = (p.verdict != PolicyVerdict::NoData).then_some(p.verdict);
                let own = summary(p);
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
                    median_metric: match name {
                        None => p.stats.median_metric,
                        Some(n) => p.metrics.get(n).and_then(|m| m.median),
                    }
                    .and_then(measured),
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
            metric_name,
            higher_is_better,
            baseline: policies.get(base_idx).map(|p| p.policy.clone()),
            policies,
        })
    }

    /// The compared figure of `p`: its median metric, else its median
    /// wall time.
    pub fn value(&self, p: &PolicyView) -> Option<f64> {
        if self.on_metric {
            p.median_metric
        } else {
            p.median_wall_s
        }
    }

    /// The policy judged better than the baseline with the best figure
    /// (in the stored direction); `None` when no policy is.
    pub fn best(&self) -> Option<&PolicyView> {
        self.policies.iter().filter(|p| p.verdict == "better" && self.value(p).is_some()).max_by(
            |a, b| {
                let (x, y) = (self.value(a).unwrap_or(0.0), self.value(b).unwrap_or(0.0));
                if self.higher_is_better {
                    x.total_cmp(&y)
                } else {
                    y.total_cmp(&x)
                }
            },
        )
    }

    /// Whether any policy was recorded with counters.
    pub fn counted(&self) -> bool {
        self.policies.iter().any(|p| p.counters.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An exec run: `default` at 10 s and `local:0` at 8 s of a metric
    /// (three runs each), the unnamed one or named `t`, with the
    /// direction as stored (`None`: not stored) and the command line.
    fn exec_run(named: bool, stored: Option<bool>, cmdline: &str) -> LoadedRun {
        let policy = |name: &str, v: [f64; 3]| {
            let runs: Vec<serde_json::Value> = v
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let mut r = json!({"rep": i + 1, "wall_s": 1.0, "exit_code": 0, "ok": true});
                    if named {
                        r["metrics"] = json!({"t": {"value": x, "error": null}});
                    } else {
                        r["metric"] = json!(x);
                    }
                    r
                })
                .collect();
            let mut p = json!({"policy": name, "placement": "", "runs": runs, "ok_runs": 3,
                               "median_wall_s": 1.0, "verdict": "no-data"});
            if named {
                p["metrics"] = json!({"t": {"higher_is_better": stored.unwrap_or(true),
                    "median": v[1], "summary": null, "noise_pct": null, "change_pct": null,
                    "verdict": "no-data"}});
            } else {
                p["median_metric"] = json!(v[1]);
                if let Some(h) = stored {
                    p["metric_higher_is_better"] = json!(h);
                }
            }
            results::upgrade::read("exec", &p).record
        };
        let mut run: LoadedRun = serde_json::from_value(json!({
            "id": 1, "uuid": "u", "label": null, "started": "2026-01-01T00:00:00Z",
            "finished": null, "status": "complete", "complete": true, "message": null,
            "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
            "command_line": cmdline, "result_count": 0, "imported": false,
            "machine_info": {}, "config": {}, "topology": {}, "results": []
        }))
        .unwrap();
        for (i, record) in
            [policy("default", [10.0, 10.1, 9.9]), policy("local:0", [8.0, 8.1, 7.9])]
                .into_iter()
                .enumerate()
        {
            run.results.push(results::run::StoredRecord {
                seq: i as u32 + 1,
                recorded: "2026-01-01T00:00:00Z".into(),
                record,
                as_stored: None,
            });
        }
        run
    }

    fn verdict(run: &LoadedRun) -> (String, bool) {
        let d = crate::data::RunData::of(run);
        let v = ExecView::of(run, &d.exec).unwrap();
        (v.policies[1].verdict.clone(), v.higher_is_better)
    }

    #[test]
    fn the_stored_direction_decides_never_a_guess_from_the_command_line() {
        // lower is better, stored; the command line does not say it (a
        // named metric's flag, or a later spelling)
        let run = exec_run(false, Some(false), "numaprobe exec -m t=([0-9.]+) -- ./b");
        assert_eq!(verdict(&run), ("better".into(), false));
        // stored higher; `--lower-is-better` is only the program's own argument
        let run =
            exec_run(false, Some(true), "numaprobe exec -m ([0-9.]+) -- ./b --lower-is-better");
        assert_eq!(verdict(&run), ("worse".into(), true));
        // a named metric's own stored direction
        let run = exec_run(true, Some(false), "numaprobe exec --metric-lower-is-better t -- ./b");
        assert_eq!(verdict(&run), ("better".into(), false));
        let d = crate::data::RunData::of(&run);
        assert_eq!(ExecView::of(&run, &d.exec).unwrap().metric_name.as_deref(), Some("t"));
        // runs stored before the direction was: the command line that ran them
        let run = exec_run(false, None, "numaprobe exec --lower-is-better -m ([0-9.]+) -- ./b");
        assert_eq!(verdict(&run), ("better".into(), false));
        let run = exec_run(false, None, "numaprobe exec -m ([0-9.]+) -- ./b");
        assert_eq!(verdict(&run), ("worse".into(), true));
    }
}
