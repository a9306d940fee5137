//! `exec`'s record: everything measured under one placement policy
//! ([`PolicyResult`]), each repetition ([`RunRecord`]), where the program's
//! pages were ([`NumaPages`]) and the per-node allocation counters across a
//! run ([`NodeDelta`] of [`NodeCounters`], which the placement layer's
//! probe reports too). The `exec` crate produces them; the store files one
//! [`PolicyResult`] per policy under kind `exec`, and reports judge them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet};

use crate::counters::Counters;
use crate::stats::Summary;

/// One node's allocation counters (`nodeN/numastat`), in pages, as the
/// kernel counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCounters {
    /// Allocations intended for this node that succeeded here.
    pub numa_hit: u64,
    /// Allocations intended elsewhere that landed here.
    pub numa_miss: u64,
    /// Allocations intended for this node that landed elsewhere.
    pub numa_foreign: u64,
    /// Interleaved allocations that got their intended node here.
    pub interleave_hit: u64,
    /// Allocations here by a process running on this node.
    pub local_node: u64,
    /// Allocations here by a process running on another node.
    pub other_node: u64,
}

impl NodeCounters {
    /// `self - before`, saturating at zero (counters only grow).
    pub fn since(&self, before: &NodeCounters) -> NodeCounters {
        NodeCounters {
            numa_hit: self.numa_hit.saturating_sub(before.numa_hit),
            numa_miss: self.numa_miss.saturating_sub(before.numa_miss),
            numa_foreign: self.numa_foreign.saturating_sub(before.numa_foreign),
            interleave_hit: self.interleave_hit.saturating_sub(before.interleave_hit),
            local_node: self.local_node.saturating_sub(before.local_node),
            other_node: self.other_node.saturating_sub(before.other_node),
        }
    }
}

/// One node's change across a run, in pages: a flat `{node, numa_hit, ...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDelta {
    pub node: u32,
    #[serde(flatten)]
    pub stat: NodeCounters,
}

/// Where the command's pages were, as the JSON reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumaPages {
    /// How many times `numa_maps` was read while the command ran.
    pub samples: u32,
    /// Processes whose fullest reading is summed here.
    pub processes: u32,
    pub nodes: Vec<NodePages>,
}

/// One node's share of the command's pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePages {
    pub node: u32,
    pub anon_kib: u64,
    pub file_kib: u64,
    /// Share of all anonymous memory that is on this node (0..1).
    pub anon_fraction: f64,
    /// Share of all memory (anonymous and file) that is on this node (0..1).
    pub fraction: f64,
}

impl NumaPages {
    /// Anonymous memory in KiB, all nodes.
    pub fn anon_kib(&self) -> u64 {
        self.nodes.iter().map(|n| n.anon_kib).sum()
    }

    /// "N0 98% N1 2%" of anonymous memory, for tables.
    pub fn anon_summary(&self) -> String {
        if self.anon_kib() == 0 {
            return "-".into();
        }
        self.nodes
            .iter()
            .filter(|n| n.anon_kib > 0)
            .map(|n| format!("N{} {:.0}%", n.node, n.anon_fraction * 100.0))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One measured repetition, as `--json` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// 1-based repetition number.
    pub rep: u32,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub max_rss_kib: u64,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub interrupted: bool,
    /// Exited 0, not timed out or interrupted.
    pub ok: bool,
    pub metric: Option<f64>,
    /// Why `metric` is null: "no match" or "not a number: '...'".
    pub metric_error: Option<String>,
    /// Where the command's pages were (null when no reading was taken).
    pub numa_pages: Option<NumaPages>,
    pub numastat_delta: Vec<NodeDelta>,
    /// Last lines of stderr of a failed run.
    pub stderr_tail: Option<Vec<String>>,
    /// Event counts of the command and its children (`--counters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Counters>,
    /// How the command's process tree was held: `cgroup v2 DIR` (killed
    /// whole at the end), `cgroup v1 freezer DIR`, or `process group only
    /// ...: no cgroup: WHY`. Absent in runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<String>,
    /// The named metrics (`--metric NAME=REGEX`) of this run, by name:
    /// each one's value, or why it has none. Absent without named metrics
    /// (and in runs stored before they existed).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, MetricReading>,
    /// The end of the command's output (`exec --keep-output N` KiB per
    /// stream); absent when nothing was kept (0) and in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<KeptOutput>,
    /// Energy, mean power and mean core frequency over the run (RAPL or
    /// amd_energy, APERF/MPERF or cpufreq), or why each is unavailable;
    /// absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::Power>,
}

/// The last bytes of one run's stdout and stderr, and how much each
/// stream wrote in all (so a reader sees how much was left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptOutput {
    pub stdout_tail: String,
    pub stdout_bytes: u64,
    pub stderr_tail: String,
    pub stderr_bytes: u64,
}

/// One named metric of one run: the number found, or why there is none
/// (`no match`, `not a number: '...'`, `metric file ...: not written by
/// this run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricReading {
    pub value: Option<f64>,
    pub error: Option<String>,
}

/// A named metric's statistics under one policy, and its direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedMetric {
    /// `--metric-lower-is-better NAME` stores false; the default is true.
    pub higher_is_better: bool,
    /// Median of the successful runs' values.
    pub median: Option<f64>,
    pub summary: Option<Summary>,
    /// Robust coefficient of variation of the values, percent.
    pub noise_pct: Option<f64>,
    /// Against the baseline policy's median, percent.
    pub change_pct: Option<f64>,
    pub verdict: PolicyVerdict,
}

/// How a policy compares with the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyVerdict {
    Baseline,
    Better,
    Worse,
    WithinNoise,
    /// Fewer than [`crate::stats::MIN_RUNS_FOR_VERDICT`] successful runs
    /// here or in the baseline: too few to tell a change from noise.
    Undecided,
    /// No successful run to compare (or the baseline has none).
    NoData,
}

impl PolicyVerdict {
    /// For tables: `within noise`, `no data`.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyVerdict::Baseline => "baseline",
            PolicyVerdict::Better => "better",
            PolicyVerdict::Worse => "worse",
            PolicyVerdict::WithinNoise => "within noise",
            PolicyVerdict::Undecided => "undecided",
            PolicyVerdict::NoData => "no data",
        }
    }

    /// As stored: `within-noise`, `no-data`.
    pub fn stored_name(self) -> &'static str {
        match self {
            PolicyVerdict::WithinNoise => "within-noise",
            PolicyVerdict::NoData => "no-data",
            other => other.as_str(),
        }
    }
}

/// The statistics of one policy's successful runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyStats {
    pub median_metric: Option<f64>,
    pub median_wall_s: Option<f64>,
    pub metric_summary: Option<Summary>,
    pub wall_summary: Option<Summary>,
    /// Robust coefficient of variation of the compared quantity, percent.
    pub noise_pct: Option<f64>,
    /// Change of the compared quantity against the baseline, percent.
    pub change_pct: Option<f64>,
}

/// Everything measured under one policy (kind `exec` in the store).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    pub policy: String,
    /// What the policy did here, e.g. "cpus 0-3, bind 1".
    pub placement: String,
    pub cpus: Option<CpuSet>,
    /// The memory policy's name (`bind`, `interleave`,
    /// `weighted-interleave`); `None` when left unchanged.
    pub mem_policy: Option<String>,
    pub mem_nodes: Option<NodeSet>,
    pub runs: Vec<RunRecord>,
    pub ok_runs: usize,
    /// The statistics of the successful runs (flat in the JSON).
    #[serde(flatten)]
    pub stats: PolicyStats,
    pub verdict: PolicyVerdict,
    /// Median counts over the successful runs (`--counters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Counters>,
    /// The program metric's direction (`--metric-higher-is-better`, the
    /// default, or `--metric-lower-is-better`); absent without `--metric`
    /// and in runs stored before it was recorded (read as higher).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_higher_is_better: Option<bool>,
    /// The named metrics (`--metric NAME=REGEX`), by name: statistics of
    /// the successful runs, direction and verdict. Absent without them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, NamedMetric>,
}

impl PolicyResult {
    /// Values of the compared quantity (the metric, else wall seconds)
    /// from successful runs.
    pub fn values(&self, on_metric: bool) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| if on_metric { r.metric } else { Some(r.wall_s) })
            .collect()
    }

    /// The summary of the compared quantity: the stored `metric_summary` /
    /// `wall_summary`, else computed from the successful runs' figures.
    pub fn summary(&self, on_metric: bool) -> Option<Summary> {
        let stored = if on_metric { self.stats.metric_summary } else { self.stats.wall_summary };
        stored.or_else(|| {
            let v: Vec<f64> =
                self.values(on_metric).into_iter().filter(|x| x.is_finite()).collect();
            Summary::of(&v)
        })
    }

    /// The values of one program metric from the successful runs, in run
    /// order: the unnamed metric (`name` `None`) or a named one.
    pub fn metric_values(&self, name: Option<&str>) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| match name {
                None => r.metric,
                Some(n) => r.metrics.get(n).and_then(|m| m.value),
            })
            .filter(|v| v.is_finite())
            .collect()
    }

    /// Whether a larger value of the program metric is better: the
    /// direction stored with the policy (`metric_higher_is_better`, or a
    /// named metric's own); for the unnamed metric of runs stored before
    /// the direction was, the command line that ran it
    /// (`--lower-is-better` / `--metric-lower-is-better`), else higher.
    pub fn metric_higher_is_better(&self, name: Option<&str>, command_line: &str) -> bool {
        match name {
            Some(n) => self.metrics.get(n).map_or(true, |m| m.higher_is_better),
            None => self.metric_higher_is_better.unwrap_or_else(|| {
                let own = command_line.split(" -- ").next().unwrap_or("");
                !own.split_whitespace()
                    .any(|w| w == "--lower-is-better" || w == "--metric-lower-is-better")
            }),
        }
    }

    /// `N0 98% N1 2%`: the share of anonymous pages per node of the last
    /// run with a reading.
    pub fn pages_text(&self) -> Option<String> {
        let pages = self.runs.iter().rev().find_map(|r| r.numa_pages.as_ref())?;
        let parts: Vec<String> = pages
            .nodes
            .iter()
            .filter(|n| n.anon_fraction.is_finite())
            .map(|n| format!("N{} {:.0}%", n.node, n.anon_fraction * 100.0))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_names_are_the_stored_ones() {
        for v in [
            PolicyVerdict::Baseline,
            PolicyVerdict::Better,
            PolicyVerdict::Worse,
            PolicyVerdict::WithinNoise,
            PolicyVerdict::Undecided,
            PolicyVerdict::NoData,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.stored_name());
        }
    }

    #[test]
    fn node_deltas_are_flat_and_read_back() {
        let d = NodeDelta { node: 1, stat: NodeCounters { numa_hit: 5, ..Default::default() } };
        let v = serde_json::to_value(d).unwrap();
        assert_eq!((v["node"].as_u64(), v["numa_hit"].as_u64()), (Some(1), Some(5)));
        assert_eq!(serde_json::from_value::<NodeDelta>(v).unwrap(), d);
        let a = NodeCounters { numa_hit: 10, other_node: 1, ..Default::default() };
        let b = NodeCounters { numa_hit: 25, other_node: 0, ..Default::default() };
        assert_eq!(b.since(&a), NodeCounters { numa_hit: 15, ..Default::default() });
    }

    #[test]
    fn runs_stored_before_named_metrics_read_and_write_back_the_same() {
        // a policy as `exec` stored it before named metrics existed
        let old = serde_json::json!({
            "policy": "default", "placement": "unchanged", "cpus": null, "mem_policy": null,
            "mem_nodes": null,
            "runs": [{"rep": 1, "wall_s": 1.5, "user_s": 1.0, "sys_s": 0.1, "max_rss_kib": 100,
                      "exit_code": 0, "signal": null, "timed_out": false, "interrupted": false,
                      "ok": true, "metric": 40.0, "metric_error": null, "numa_pages": null,
                      "numastat_delta": [], "stderr_tail": null}],
            "ok_runs": 1, "median_metric": 40.0, "median_wall_s": 1.5, "metric_summary": null,
            "wall_summary": null, "noise_pct": null, "change_pct": null, "verdict": "baseline",
            "metric_higher_is_better": false});
        let up = crate::upgrade::read("exec", &old);
        assert_eq!(up.as_stored, None, "read and written back unchanged");
        let crate::Record::Exec(p) = up.record else { panic!("not an exec record") };
        assert!(p.metrics.is_empty() && p.runs[0].metrics.is_empty());
        assert_eq!(p.metric_values(None), [40.0]);
        assert!(!p.metric_higher_is_better(None, "numaprobe exec -- ./b"), "stored: lower");
        // a named metric round-trips; the unnamed fields stay as they were
        let mut p = *p;
        p.runs[0].metrics.insert("int".into(), MetricReading { value: Some(7.0), error: None });
        p.metrics.insert(
            "int".into(),
            NamedMetric {
                higher_is_better: true,
                median: Some(7.0),
                summary: None,
                noise_pct: None,
                change_pct: None,
                verdict: PolicyVerdict::Baseline,
            },
        );
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(v["runs"][0]["metrics"]["int"]["value"], 7.0);
        assert_eq!(v["median_metric"], 40.0);
        let back: PolicyResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, p);
        assert_eq!(back.metric_values(Some("int")), [7.0]);
        assert_eq!(back.metric_values(Some("fp")), Vec::<f64>::new());
    }
}
