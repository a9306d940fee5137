//! The "Program under placements" section: the `exec` results of a run as
//! [`analysis::placements`] judges them (each policy against the baseline
//! policy, in the stored direction), drawn as a table, a sentence and a
//! chart.

use crate::chart::{BarChart, BarGroup, Chart};
use crate::doc::{Document, Table};
use crate::text::signed_pct;

use crate::fmt::{num, opt, plain};
pub use analysis::placements::{ExecView, PolicyView};

/// The text of a judged `exec` experiment.
pub trait ExecText {
    /// One sentence naming the best policy, or saying none beats the
    /// baseline.
    fn best_sentence(&self) -> String;
    /// The table of the policies: placement, runs, medians, noise, change
    /// and verdict against the baseline, pages per node, exit codes (and
    /// counters when recorded). `show` prints it for an exec run.
    fn table(&self) -> Table;
    /// The section's blocks.
    fn render(&self, doc: &mut Document);
}

/// What is compared: "median metric", "median metric NAME" or "median wall
/// time".
fn quantity(e: &ExecView) -> String {
    match (&e.metric_name, e.on_metric) {
        (Some(n), _) => format!("median metric {n}"),
        (None, true) => "median metric".into(),
        (None, false) => "median wall time".into(),
    }
}

impl ExecText for ExecView {
    fn best_sentence(&self) -> String {
        let base = self.baseline.clone().unwrap_or_else(|| "?".into());
        let best = self.best();
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
                quantity(self),
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

    fn table(&self) -> Table {
        let base = self.baseline.as_deref().unwrap_or("baseline");
        let change_h = format!("Change vs {base} %");
        let counted = self.counted();
        let metric_h = match &self.metric_name {
            Some(n) => format!("Median {n}"),
            None => "Median metric".into(),
        };
        let mut header: Vec<String> = [
            "Policy",
            "Placement",
            "OK runs",
            metric_h.as_str(),
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

    fn render(&self, doc: &mut Document) {
        doc.h(2, "Program under placements");
        doc.p(format!(
            "{}Compared on the {} ({}), each placement against '{}'; a change counts only beyond three combined robust standard deviations and at least {}%.",
            self.command.as_ref().map(|c| format!("Command: {c}. ")).unwrap_or_default(),
            match (&self.metric_name, self.on_metric) {
                (Some(n), _) => format!("--metric {n} figure"),
                (None, true) => "--metric figure".into(),
                (None, false) => "wall time".into(),
            },
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
                title: format!("Placements against {base} ({})", quantity(self)),
                x_label: format!(
                    "{} as % of {base} ({})",
                    quantity(self),
                    if self.higher_is_better { "higher is better" } else { "lower is better" }
                ),
                series: vec![quantity(self).to_string()],
                groups,
                reference: Some(100.0),
            }));
        } else {
            doc.p("Only one placement has a figure to compare: no chart.");
        }
    }
}
