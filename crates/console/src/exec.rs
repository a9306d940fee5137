//! The text of `numaprobe exec`: the policy comparison table, the verdict
//! lines and the counters table (`--counters`).

use exec::{
    BestReason, Compared, Direction, ExecReport, MetricRefusal, PolicyRefusal, Quantity, Searched,
    Stop, Undecided, UnmatchedMetric,
};
use results::exec::{NumaPages, PolicyResult, PolicyVerdict};

use super::counters::{self, Row};
use super::{Table, TableStyle};

fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{v:.4e}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn last_pages(p: &PolicyResult) -> Option<&NumaPages> {
    p.runs.iter().rev().find_map(|r| r.numa_pages.as_ref().filter(|n| n.anon_kib() > 0))
}

/// Refused metric flags in the words of `exec`'s flags (`--metric`,
/// `--metric-file`, the direction flags).
pub fn metric_refusal(r: &MetricRefusal) -> String {
    let prefix =
        |name: &Option<String>| name.as_ref().map(|n| format!("{n}: ")).unwrap_or_default();
    let said = match r {
        MetricRefusal::NameTwice(n) => format!("the metric name '{n}' is given twice"),
        MetricRefusal::TwoUnnamed(first, second) => format!(
            "two unnamed metrics ('{first}' and '{second}'): name them, e.g. --metric int=REGEX --metric fp=REGEX"
        ),
        MetricRefusal::Invalid { name, pattern, why } => {
            format!("{}invalid regular expression '{pattern}': {why}", prefix(name))
        }
        MetricRefusal::NoCaptureGroup { name, pattern } => format!(
            "{}'{pattern}' has no capture group; put the number in parentheses, e.g. 'Triad:\\s+([0-9.]+)'",
            prefix(name)
        ),
        MetricRefusal::DirectionWithoutMetric => "--higher-is-better/--lower-is-better need --metric \
                                                  (wall time is always lower-is-better)"
            .to_string(),
        MetricRefusal::DirectionForNone { name, named } => format!(
            "a direction is given for '{name}', which no --metric NAME=REGEX names ({})",
            if named.is_empty() {
                "no metric is named".to_string()
            } else {
                format!("named: {}", named.join(", "))
            }
        ),
        MetricRefusal::BothDirections(n) => format!(
            "{} is said to be both lower- and higher-is-better",
            if n.is_empty() { "the unnamed metric".to_string() } else { format!("'{n}'") }
        ),
        MetricRefusal::FileWithoutMetric => {
            "--metric-file needs --metric (the patterns searched in the file)".to_string()
        }
    };
    format!("bad --metric: {said}")
}

/// Why the matrix stopped early, as the `--json` document, the text and
/// the saved run say it: `signal` names what interrupted it (`Ctrl-C`,
/// `SIGTERM`).
pub fn stop_reason(stop: &Stop, signal: &str) -> String {
    match stop {
        Stop::Interrupted => format!("interrupted ({signal})"),
        Stop::FailFast { what } => format!("--fail-fast: {what} failed"),
    }
}

/// A metric no successful run gave, worded as its `--metric` flag, with
/// the end of the last run's stdout when it was searched there.
pub fn unmatched_metric(u: &UnmatchedMetric) -> String {
    let shown = match &u.name {
        None => format!("--metric '{}'", u.pattern),
        Some(n) => format!("--metric {n}='{}'", u.pattern),
    };
    match &u.searched {
        Searched::File(f) => format!("{shown} found no number in the metric file {}", f.display()),
        Searched::Output { last_stdout_tail } => {
            let mut msg = format!("{shown} matched no run's output");
            if let Some(tail) = last_stdout_tail {
                msg.push_str("; the last run's stdout ends with:");
                for l in tail {
                    msg.push_str("\n    ");
                    msg.push_str(l);
                }
            }
            msg
        }
    }
}

/// Why policies got no verdict: the policies short of runs, and the
/// `--repeat` that gives one.
pub fn undecided(u: &Undecided) -> String {
    let short: Vec<String> = u.short.iter().map(|(p, n)| format!("'{p}' has {n}")).collect();
    format!(
        "no better/worse verdict from fewer than {n} successful runs per policy ({}); \
         run with --repeat {n} or more",
        short.join(", "),
        n = u.needed
    )
}

/// Why a policy is the best, or why none is: the `best_reason` of the
/// `--json` document and the text's verdict line.
pub fn best_reason(r: &BestReason) -> String {
    match r {
        BestReason::NothingMeasured => "no policy was measured".into(),
        BestReason::BaselineUnmeasured { baseline: b, on } => match on {
            Compared::Metric => {
                format!("no best policy: the baseline '{b}' has no successful run with a metric")
            }
            Compared::Named(n) => format!(
                "no best policy: the baseline '{b}' has no successful run with metric '{n}'"
            ),
            Compared::Wall => format!("no best policy: the baseline '{b}' has no successful run"),
        },
        BestReason::NoneBetter { baseline } => {
            format!("no policy is better than '{baseline}' beyond noise")
        }
        BestReason::Undecided(u) => undecided(u),
        BestReason::Best { best, change_pct, baseline, tied, undecided: u } => format!(
            "'{best}' is {change_pct:+.1}% against '{baseline}', beyond noise{}{}",
            if tied.is_empty() {
                String::new()
            } else {
                format!("; within noise of it: {}", tied.join(", "))
            },
            u.as_ref().map(|u| format!("; {}", undecided(u))).unwrap_or_default(),
        ),
    }
}

/// Fills the report's `best_reason` and each named metric's with
/// [`best_reason`]'s words (the library leaves them empty).
pub fn word_reasons(r: &mut ExecReport) {
    r.best_reason = best_reason(&r.why_best);
    for n in &mut r.named_metrics {
        n.best_reason = best_reason(&n.why_best);
    }
}

/// The warnings of the matrix's end, in order: each metric no run gave,
/// why policies got no verdict, runs too short to compare.
pub fn end_warnings(r: &ExecReport) -> Vec<String> {
    let mut out: Vec<String> = r.unmatched.iter().map(unmatched_metric).collect();
    out.extend(exec::undecided(r).as_ref().map(undecided));
    out.extend(exec::short_runs_warning(r));
    out
}

/// A refused policy in the words of `--policies` (`bad policy` and what
/// is wrong with it).
pub fn policy_refusal(r: &PolicyRefusal) -> String {
    let said = match r {
        PolicyRefusal::Relative { policy, part } => format!(
            "'{policy}': '{part}' is relative to this machine's nodes; give it in --policies"
        ),
        // The others name no flag: the library's own words.
        r => r.to_string(),
    };
    format!("bad policy {said}")
}

/// The comparison table and the verdict line.
pub fn render(r: &ExecReport, style: TableStyle) -> String {
    let on_metric = r.metric.is_some();
    let baseline = r.baseline.clone().unwrap_or_else(|| "-".into());
    let mut header = vec!["policy".to_string(), "placement".into(), "ok".into()];
    if on_metric {
        header.push("metric (median)".into());
    }
    for n in &r.named_metrics {
        header.push(format!("{} (median)", n.name));
    }
    header.extend([
        "wall s (median)".to_string(),
        "noise %".into(),
        "peak RSS MiB".into(),
        format!("vs {baseline}"),
        "verdict".into(),
        "anon pages".into(),
    ]);
    let mut t = Table::new(header, style);
    for p in &r.policies {
        let mut row =
            vec![p.policy.clone(), p.placement.clone(), format!("{}/{}", p.ok_runs, p.runs.len())];
        if on_metric {
            row.push(p.stats.median_metric.map_or("-".into(), fmt_num));
        }
        for n in &r.named_metrics {
            row.push(p.metrics.get(&n.name).and_then(|m| m.median).map_or("-".into(), fmt_num));
        }
        let rss = p.runs.iter().map(|x| x.max_rss_kib).max().unwrap_or(0);
        row.extend([
            p.stats.median_wall_s.map_or("-".into(), |w| format!("{w:.3}")),
            p.stats.noise_pct.map_or("-".into(), |n| format!("{n:.1}")),
            format!("{:.1}", rss as f64 / 1024.0),
            match (p.verdict, p.stats.change_pct) {
                (PolicyVerdict::Baseline, _) => "-".into(),
                (_, Some(c)) => format!("{c:+.1}%"),
                (_, None) => "-".into(),
            },
            p.verdict.as_str().into(),
            last_pages(p).map_or("-".into(), |n| n.anon_summary()),
        ]);
        t.add_row(row);
    }
    let way = |d: Direction| {
        if d == Direction::HigherIsBetter {
            "higher is better"
        } else {
            "lower is better"
        }
    };
    let what = match (r.compared(), &r.metric) {
        (Quantity::Metric, Some(m)) => format!("metric /{m}/, {}", way(r.direction)),
        (Quantity::Named(n), _) => {
            let pattern = r.named_metrics.iter().find(|x| x.name == n).map(|x| x.pattern.as_str());
            format!("metric {n} /{}/, {}", pattern.unwrap_or(""), way(r.direction))
        }
        _ => "wall time, lower is better".into(),
    };
    let what = match &r.metric_file {
        Some(f) => format!("{what} (metrics read from {f})"),
        None => what,
    };
    let mut out = format!(
        "numaprobe exec: {}\n{} measured run(s) per policy{}; compared on {what}\n{t}\n",
        report::text::shell_join(&r.command),
        r.repeat,
        if r.warmup > 0 { format!(" after {} warmup(s)", r.warmup) } else { String::new() },
    );
    let why = best_reason(&r.why_best);
    match &r.best_policy {
        Some(b) => out.push_str(&format!("best: {b} ({why})\n")),
        None => out.push_str(&format!("best: none ({why})\n")),
    }
    for n in &r.named_metrics {
        if r.compared() == Quantity::Named(&n.name) {
            continue;
        }
        let best = n.best_policy.as_deref().unwrap_or("none");
        out.push_str(&format!(
            "best by {} /{}/ ({}): {best} ({})\n",
            n.name,
            n.pattern,
            way(n.direction),
            best_reason(&n.why_best)
        ));
    }
    if let Some(s) = &r.stopped {
        out.push_str(&format!("stopped early: {s}\n"));
    }
    let rows: Vec<Row> = r
        .policies
        .iter()
        .filter_map(|p| {
            Some(Row {
                label: p.policy.clone(),
                counters: p.counters.as_ref()?,
                counted_bytes: None,
            })
        })
        .collect();
    if !rows.is_empty() {
        out.push_str("\nmedian of the successful runs; ");
        out.push_str(&counters::render(&rows, style));
    }
    out
}

#[cfg(test)]
mod refusal_tests {
    use super::*;

    /// The refusals the command line cannot reach (the unnamed metric said
    /// both ways), whole, as exec said them before they were typed; the
    /// others are pinned through the binary (exec_study_cli).
    #[test]
    fn metric_refusals_are_worded_with_execs_flags() {
        let both = MetricRefusal::BothDirections(String::new());
        let want =
            "bad --metric: the unnamed metric is said to be both lower- and higher-is-better";
        assert_eq!(metric_refusal(&both), want);
        let named = MetricRefusal::DirectionForNone {
            name: "fp".into(),
            named: vec!["int".into(), "rate".into()],
        };
        let want = "bad --metric: a direction is given for 'fp', which no --metric NAME=REGEX \
                    names (named: int, rate)";
        assert_eq!(metric_refusal(&named), want);
        assert!(!both.to_string().contains("--") && !named.to_string().contains("--"));
    }
}

#[cfg(test)]
mod words_tests {
    use std::path::PathBuf;

    use super::*;

    /// The stop reasons, whole: a signal named by the caller, and the
    /// first failed run with `--fail-fast`.
    #[test]
    fn stop_reasons_name_the_signal_and_the_flag() {
        assert_eq!(stop_reason(&Stop::Interrupted, "SIGTERM"), "interrupted (SIGTERM)");
        let ff = Stop::FailFast { what: "local:0 warmup 1/2".into() };
        assert_eq!(stop_reason(&ff, "Ctrl-C"), "--fail-fast: local:0 warmup 1/2 failed");
    }

    /// A metric no run gave: named or not, in a file (no output shown) or
    /// the output, with or without the last run's stdout.
    #[test]
    fn unmatched_metrics_are_worded_with_the_metric_flag() {
        let tail = Some(vec!["a".to_string(), "b".to_string()]);
        let u = UnmatchedMetric {
            name: Some("fp".into()),
            pattern: r"fp: (\d+)".into(),
            searched: Searched::Output { last_stdout_tail: tail },
        };
        let want = "--metric fp='fp: (\\d+)' matched no run's output; the last run's stdout \
                    ends with:\n    a\n    b";
        assert_eq!(unmatched_metric(&u), want);
        let u = UnmatchedMetric {
            name: None,
            pattern: "v=(.*)".into(),
            searched: Searched::Output { last_stdout_tail: None },
        };
        assert_eq!(unmatched_metric(&u), "--metric 'v=(.*)' matched no run's output");
        let u = UnmatchedMetric {
            name: None,
            pattern: "v=(.*)".into(),
            searched: Searched::File(PathBuf::from("out/r.csv")),
        };
        assert_eq!(
            unmatched_metric(&u),
            "--metric 'v=(.*)' found no number in the metric file out/r.csv"
        );
    }

    /// Every verdict reason, whole, as exec said them before they were
    /// typed (exec_cli pins those the command line reaches cheaply).
    #[test]
    fn verdict_reasons_are_worded_whole_and_name_the_repeat_flag() {
        let p = |s: &str| s.to_string();
        let u = |s: &[(&str, usize)]| Undecided {
            needed: 3,
            short: s.iter().map(|&(p, n)| (p.to_string(), n)).collect(),
        };
        let few = u(&[("default", 2), ("local:0", 1)]);
        let few_words = "no better/worse verdict from fewer than 3 successful runs per policy \
                         ('default' has 2, 'local:0' has 1); run with --repeat 3 or more";
        assert_eq!(undecided(&few), few_words);
        let unmeasured = |on| BestReason::BaselineUnmeasured { baseline: p("default"), on };
        let cases = [
            (BestReason::NothingMeasured, p("no policy was measured")),
            (
                unmeasured(Compared::Metric),
                p("no best policy: the baseline 'default' has no successful run with a metric"),
            ),
            (
                unmeasured(Compared::Named(p("fp"))),
                p("no best policy: the baseline 'default' has no successful run with metric 'fp'"),
            ),
            (
                unmeasured(Compared::Wall),
                p("no best policy: the baseline 'default' has no successful run"),
            ),
            (
                BestReason::NoneBetter { baseline: p("local:0") },
                p("no policy is better than 'local:0' beyond noise"),
            ),
            (BestReason::Undecided(few.clone()), p(few_words)),
            (
                BestReason::Best {
                    best: p("local:0"),
                    change_pct: -12.34,
                    baseline: p("default"),
                    tied: Vec::new(),
                    undecided: None,
                },
                p("'local:0' is -12.3% against 'default', beyond noise"),
            ),
            (
                BestReason::Best {
                    best: p("interleave"),
                    change_pct: 20.0,
                    baseline: p("default"),
                    tied: vec![p("local:0"), p("local:1")],
                    undecided: Some(u(&[("remote:0/1", 2)])),
                },
                p("'interleave' is +20.0% against 'default', beyond noise; within noise of it: \
                   local:0, local:1; no better/worse verdict from fewer than 3 successful runs \
                   per policy ('remote:0/1' has 2); run with --repeat 3 or more"),
            ),
        ];
        for (r, want) in cases {
            assert_eq!(best_reason(&r), want, "{r:?}");
        }
    }

    /// Every policy refusal, whole; only the relative node set names the
    /// flag, and the library's own words never do.
    #[test]
    fn policy_refusals_are_worded_with_the_policies_flag() {
        let p = |s: &str| s.to_string();
        let cases = [
            (PolicyRefusal::EmptyList, "bad policy list is empty"),
            (
                PolicyRefusal::EmptyEntry { list: p("a,,b") },
                "bad policy empty entry in policy list 'a,,b'",
            ),
            (
                PolicyRefusal::NeedsNode { policy: p("remote") },
                "bad policy 'remote' needs a node, e.g. remote:0",
            ),
            (
                PolicyRefusal::NotANode { policy: p("local:x"), part: p("x") },
                "bad policy 'local:x': 'x' is not a node number",
            ),
            (
                PolicyRefusal::RemoteWithoutSlash { policy: p("remote:1") },
                "bad policy 'remote:1': expected remote:CPU_NODE/MEM_NODE",
            ),
            (
                PolicyRefusal::BadSet { policy: p("interleave:!x"), why: p("why") },
                "bad policy 'interleave:!x': bad node set: why",
            ),
            (
                PolicyRefusal::Relative { policy: p("weighted:+0"), part: p("+0") },
                "bad policy 'weighted:+0': '+0' is relative to this machine's nodes; give it in \
                 --policies",
            ),
            (
                PolicyRefusal::DefaultTakesNone { policy: p("default:1") },
                "bad policy 'default:1': default takes no argument",
            ),
            (
                PolicyRefusal::Unknown { policy: p("x") },
                "bad policy unknown policy 'x' (known: default, local:N, remote:A/B, \
                 interleave[:LIST], weighted[:LIST], cpus-only:N, all)",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(policy_refusal(&r), want);
            assert!(!r.to_string().contains("--"), "{r}");
        }
    }
}
