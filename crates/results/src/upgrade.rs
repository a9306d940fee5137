//! Stored results of any age read into today's [`Record`]s: the one place
//! that reads a stored payload field by field.
//!
//! A payload of today's shape deserializes into its record as it is. The
//! first version's shapes are upgraded first (a bandwidth `placement` that
//! was a fraction, `stopped` for `interrupted`, the loaded mix `rw`), and
//! hand-made or partial payloads (other tools' field names, fields left
//! out: `docs/report.md` lists what is accepted) are read field by field
//! into the same records:
//!
//! * a figure the payload lacks reads as not a number (`NaN`), which every
//!   reader skips like a figure that was never measured; a count it lacks
//!   reads as 0 (for a bandwidth result's `reps`, "not known": its noise
//!   is then taken over 10 repetitions, as before), a text as empty;
//! * names map onto the record's vocabulary: severities `warning`,
//!   `error`, ... onto [`audit::Severity`], `needs_reboot`/`needs_bios`
//!   onto [`audit::Needs`], a policy the mode implies (a `local` result was
//!   bound, `global` placed per thread);
//! * what has no place in a record (a per-CPU point's `group`, an unknown
//!   core-to-core relation) is not read.
//!
//! A payload that is not a result of its kind at all (no object, no mode a
//! record knows, no kernel) and a kind this version does not know (written
//! by a newer numaprobe) become [`Record::Unknown`], kept as stored.
//!
//! Nothing is written back: the store keeps the stored text beside the
//! record when the record would write it differently
//! ([`Upgraded::as_stored`]).

use serde::de::DeserializeOwned;
use serde_json::Value;
use topo::{CpuSet, NodeSet};

use crate::audit::{Finding, Needs, Severity};
use crate::bw::{self, ArrayPolicy, BwResult, Stores};
use crate::counters::Counters;
use crate::exec::{NodePages, NumaPages, PolicyResult, PolicyStats, PolicyVerdict, RunRecord};
use crate::lat::{
    C2cResult, CacheMark, CpuGroup, Lat, LatResult, LatSummary, LoadKind, LoadedPoint, Mode,
    PerCpuSummary, Plateau, Relation, SweepSummary,
};
use crate::pages::PageKind;
use crate::placement::{Placement, PlacementCheck, PlacementStatus, FLAG_BELOW};
use crate::stats::{noise_from_spread, Summary};
use crate::{Record, Unknown};
use kernels::{Isa, Kernel};

/// A stored result read into its record.
#[derive(Debug, Clone, PartialEq)]
pub struct Upgraded {
    pub record: Record,
    /// The stored JSON, when the record writes something else (an upgraded
    /// payload, or one with fields this version does not know).
    pub as_stored: Option<String>,
}

/// Reads a stored payload of `kind`.
pub fn read(kind: &str, payload: &Value) -> Upgraded {
    let record = record(kind, payload);
    let same = matches!(record, Record::Unknown(_)) || record.to_json() == *payload;
    Upgraded { record, as_stored: (!same).then(|| payload.to_string()) }
}

/// The record [`read`] reads, without telling whether it writes its
/// payload back unchanged (for readers that never write it back).
pub fn record(kind: &str, payload: &Value) -> Record {
    record_of(kind, payload).unwrap_or_else(|| {
        Record::Unknown(Unknown { kind: kind.to_string(), json: payload.to_string() })
    })
}

fn record_of(kind: &str, v: &Value) -> Option<Record> {
    Some(match kind {
        "bw" => Record::Bw(Box::new(bw_result(v)?)),
        "lat" => Record::Lat(Box::new(lat(v)?)),
        "lat-summary" => Record::LatSummary(Box::new(lat_summary(v)?)),
        "exec" => Record::Exec(Box::new(policy(v)?)),
        "audit" => Record::Finding(Box::new(finding(v)?)),
        "gpu" => Record::Gpu(Box::new(today(v)?)),
        "step" => Record::Step(Box::new(today(v)?)),
        _ => return None,
    })
}

/// Today's shape, read as it is (from the borrowed value: no copy).
fn today<T: DeserializeOwned>(v: &Value) -> Option<T> {
    T::deserialize(v).ok()
}

/// A number field (a JSON number, or a string holding one), finite.
fn num(v: &Value, k: &str) -> Option<f64> {
    match v.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

fn int(v: &Value, k: &str) -> Option<i64> {
    match v.get(k)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn uint<T: TryFrom<i64>>(v: &Value, k: &str) -> Option<T> {
    int(v, k).and_then(|i| T::try_from(i).ok())
}

/// A text field; numbers and booleans as text, arrays of scalars joined
/// with commas.
fn text(v: &Value, k: &str) -> Option<String> {
    crate::context::scalar_text(v.get(k)?)
}

fn flag(v: &Value, k: &str) -> Option<bool> {
    v.get(k).and_then(Value::as_bool)
}

fn figure(v: &Value, k: &str) -> f64 {
    num(v, k).unwrap_or(f64::NAN)
}

/// The first of `keys` the payload has, as text.
fn first_text(v: &Value, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| text(v, k)).filter(|s| !s.is_empty())
}

/// A mode as its record names it.
fn mode<T: DeserializeOwned>(v: &Value) -> Option<T> {
    today(&Value::String(text(v, "mode")?))
}

/// How many samples a payload was summarised from (`samples`, `n` or
/// `reps`, or the length of a `samples` list).
fn samples(v: &Value) -> Option<usize> {
    ["samples", "n", "reps"]
        .iter()
        .find_map(|k| uint(v, k).or_else(|| v.get(*k).and_then(Value::as_array).map(Vec::len)))
}

/// A payload's noise as a robust CV, percent: the producer's
/// (`robust_cv_pct`, `noise_pct`, `cv_pct`), else from its spread.
fn noise(v: &Value) -> f64 {
    ["robust_cv_pct", "noise_pct", "cv_pct"]
        .iter()
        .find_map(|k| num(v, k))
        .map(f64::abs)
        .or_else(|| noise_from_spread(num(v, "spread_pct")?, samples(v)))
        .unwrap_or(f64::NAN)
}

fn counters(v: &Value) -> Option<Counters> {
    today(v.get("counters")?)
}

fn interrupted(v: &Value) -> bool {
    ["interrupted", "stopped"].iter().any(|k| flag(v, k) == Some(true))
}

/// Where the pages were, from any shape a payload gave it: today's
/// `{status, check}`, a fraction (the first version's bandwidth results),
/// or an object with `fraction` (or `on_target`, or `pages_on_node` /
/// `pages_checked`) and `ok`, `flagged` or `status: "mismatch"`. Flagged
/// below 99% on target or when said.
fn placement(v: &Value, expected: &NodeSet) -> Placement {
    let Some(p) = v.get("placement") else { return Placement::unverified() };
    if let Some(typed) = p.get("check").and(today::<Placement>(p)) {
        return typed;
    }
    let (fraction, ok, flagged) = match p {
        Value::Number(n) => (n.as_f64(), None, None),
        Value::Object(_) => (
            num(p, "fraction").or_else(|| num(p, "on_target")).or_else(|| {
                let checked = num(p, "pages_checked").filter(|c| *c > 0.0)?;
                Some(num(p, "pages_on_node")? / checked)
            }),
            flag(p, "ok"),
            flag(p, "flagged").or_else(|| text(p, "status").map(|s| s == "mismatch")),
        ),
        _ => (None, None, None),
    };
    let bad = ok == Some(false) || flagged == Some(true);
    let Some(fraction) = fraction else {
        let status = if bad { PlacementStatus::Mismatch } else { PlacementStatus::Unverified };
        return Placement { status, check: None };
    };
    let ok = fraction >= FLAG_BELOW && !bad;
    Placement {
        status: if ok { PlacementStatus::Verified } else { PlacementStatus::Mismatch },
        check: Some(PlacementCheck {
            expected: expected.clone(),
            fraction,
            per_node: Default::default(),
            sampled_pages: 0,
            total_pages: 0,
            not_present_pages: 0,
            threshold: FLAG_BELOW,
            ok,
            spread: None,
        }),
    }
}

fn bw_result(v: &Value) -> Option<BwResult> {
    let mut up = v.clone();
    bw::upgrade_v1(&mut up);
    if let Some(r) = today(&up) {
        return Some(r);
    }
    let mode: bw::Mode = mode(v)?;
    let kernel = Kernel::parse(&text(v, "kernel")?)?;
    let mem_node = uint(v, "mem_node");
    let mem_nodes = text(v, "mem_nodes")
        .and_then(|s| NodeSet::parse_list(&s).ok())
        .or_else(|| mem_node.map(|n| [n].into_iter().collect()))
        .unwrap_or_default();
    let policy = text(v, "policy").and_then(|p| today(&Value::String(p))).unwrap_or(match mode {
        bw::Mode::Global => ArrayPolicy::LocalPerThread,
        bw::Mode::Interleave => ArrayPolicy::Interleave,
        bw::Mode::Weighted => ArrayPolicy::WeightedInterleave,
        _ => ArrayPolicy::Bind,
    });
    let arrays = kernel.uses().iter().filter(|u| **u).count();
    Some(BwResult {
        mode,
        kernel,
        threads: uint(v, "threads").unwrap_or(0),
        cpus: text(v, "cpus").and_then(|s| CpuSet::parse_list(&s).ok()).unwrap_or_default(),
        cpu_node: uint(v, "cpu_node"),
        mem_node,
        placement: placement(v, &mem_nodes),
        mem_nodes,
        policy,
        array_bytes: uint(v, "array_bytes").or_else(|| uint(v, "size_bytes")).unwrap_or(0),
        arrays: uint(v, "arrays").unwrap_or(arrays),
        bytes_per_rep: uint(v, "bytes_per_rep").unwrap_or(0),
        best_gbs: figure(v, "best_gbs"),
        median_gbs: figure(v, "median_gbs"),
        min_gbs: figure(v, "min_gbs"),
        max_gbs: figure(v, "max_gbs"),
        mean_gbs: figure(v, "mean_gbs"),
        spread_pct: figure(v, "spread_pct"),
        top_spread_pct: figure(v, "top_spread_pct"),
        stable: flag(v, "stable").unwrap_or(true),
        reps: samples(v).unwrap_or(0),
        median_rep_s: figure(v, "median_rep_s"),
        isa: text(v, "isa").and_then(|s| Isa::parse(&s)).unwrap_or(Isa::Scalar),
        stores: text(v, "stores")
            .and_then(|s| today(&Value::String(s)))
            .unwrap_or(if kernel == Kernel::Read { Stores::None } else { Stores::Regular }),
        pages: text(v, "pages").and_then(|s| today(&Value::String(s))).unwrap_or(PageKind::Base),
        llc_bytes: uint(v, "llc_bytes"),
        size_rule_ok: flag(v, "size_rule_ok").unwrap_or(true),
        peak_gbs: num(v, "peak_gbs"),
        peak_fraction: num(v, "peak_fraction"),
        validated: flag(v, "validated").unwrap_or(true),
        interrupted: interrupted(v),
        counters: counters(v),
        power: v.get("power").and_then(today),
        disturbance: v.get("disturbance").and_then(today),
        scope: v.get("scope").and_then(today),
    })
}

fn lat(v: &Value) -> Option<Lat> {
    if let Ok(r) = Lat::try_from(v) {
        return Some(r);
    }
    // a chase Ctrl-C cut short or whose answers failed validation is no
    // figure (numaprobe never stored one)
    if interrupted(v) || flag(v, "validated") == Some(false) {
        return None;
    }
    let m: Mode = mode(v)?;
    let size_bytes = uint(v, "size_bytes").unwrap_or(0);
    let page_size = text(v, "page_size").unwrap_or_default();
    let expected: NodeSet = uint(v, "mem_node").into_iter().collect();
    Some(match m {
        Mode::Loaded => {
            let median = figure(v, "median_ns");
            Lat::Loaded(LoadedPoint {
                mode: m,
                delay: uint(v, "delay").unwrap_or(0),
                delay_ns: num(v, "delay_ns"),
                idle: flag(v, "idle").unwrap_or(false),
                latency_ns: num(v, "latency_ns").unwrap_or(median),
                median_ns: median,
                p90_ns: figure(v, "p90_ns"),
                p99_ns: figure(v, "p99_ns"),
                spread_pct: figure(v, "spread_pct"),
                load_gbs: figure(v, "load_gbs"),
                read_gbs: num(v, "read_gbs"),
                write_gbs: num(v, "write_gbs"),
                load_threads: uint(v, "load_threads").unwrap_or(0),
                load_kind: text(v, "load_kind")
                    .and_then(|k| LoadKind::parse(&k))
                    .unwrap_or(LoadKind::Read),
                cpu: uint(v, "cpu").unwrap_or(0),
                mem_node: uint(v, "mem_node"),
                size_bytes,
                page_size,
                placement: placement(v, &expected),
                load_placement: None,
                stride_bytes: uint(v, "stride_bytes"),
                tlb_group_bytes: uint(v, "tlb_group_bytes"),
                stable: flag(v, "stable").unwrap_or(true),
                disturbance: v.get("disturbance").and_then(today),
                power: v.get("power").and_then(today),
            })
        }
        Mode::C2c => Lat::C2c(C2cResult {
            mode: m,
            cpu_a: uint(v, "cpu_a")?,
            cpu_b: uint(v, "cpu_b")?,
            relation: text(v, "relation").and_then(|r| relation(&r)),
            median_ns: figure(v, "median_ns"),
            p90_ns: figure(v, "p90_ns"),
            p99_ns: figure(v, "p99_ns"),
            min_ns: figure(v, "min_ns"),
            max_ns: figure(v, "max_ns"),
            spread_pct: figure(v, "spread_pct"),
            samples: samples(v).unwrap_or(0),
            round_trips_per_sample: uint(v, "round_trips_per_sample").unwrap_or(0),
            stable: flag(v, "stable").unwrap_or(true),
            disturbance: v.get("disturbance").and_then(today),
        }),
        _ => Lat::Chase(LatResult {
            mode: m,
            size_bytes,
            cpu: uint(v, "cpu").unwrap_or(0),
            cpu_node: uint(v, "cpu_node"),
            mem_node: uint(v, "mem_node"),
            median_ns: figure(v, "median_ns"),
            p50_ns: figure(v, "p50_ns"),
            p90_ns: figure(v, "p90_ns"),
            p99_ns: figure(v, "p99_ns"),
            min_ns: figure(v, "min_ns"),
            max_ns: figure(v, "max_ns"),
            spread_pct: figure(v, "spread_pct"),
            noise_pct: noise(v),
            samples: samples(v).unwrap_or(0),
            loads_per_sample: uint(v, "loads_per_sample").unwrap_or(0),
            stride_bytes: uint(v, "stride_bytes").unwrap_or(0),
            tlb_group_bytes: uint(v, "tlb_group_bytes").unwrap_or(0),
            page_size,
            placement: placement(v, &expected),
            counters: counters(v).map(Box::new),
            histogram: v.get("histogram").and_then(today),
            stable: flag(v, "stable").unwrap_or(true),
            disturbance: v.get("disturbance").and_then(today),
            min_loads_per_sample: uint(v, "min_loads_per_sample"),
            interleave: v.get("interleave").and_then(today),
            scope: v.get("scope").and_then(today),
        }),
    })
}

fn lat_summary(v: &Value) -> Option<LatSummary> {
    if let Ok(r) = LatSummary::try_from(v) {
        return Some(r);
    }
    let list = |k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
    Some(match mode::<Mode>(v)? {
        Mode::PerCpu => LatSummary::PerCpu(PerCpuSummary {
            mode: Mode::PerCpu,
            mem_node: uint(v, "mem_node"),
            groups: list("groups")
                .iter()
                .filter(|g| g.is_object())
                .map(|g| CpuGroup {
                    cpus: text(g, "cpus")
                        .and_then(|c| CpuSet::parse_list(&c).ok())
                        .unwrap_or_default(),
                    median_ns: figure(g, "median_ns"),
                    min_ns: figure(g, "min_ns"),
                    max_ns: figure(g, "max_ns"),
                    os_nodes: text(g, "os_nodes")
                        .and_then(|n| NodeSet::parse_list(&n).ok())
                        .unwrap_or_default(),
                })
                .collect(),
            hidden_numa: flag(v, "hidden_numa").unwrap_or(false),
            note: text(v, "note").filter(|s| !s.is_empty()),
        }),
        Mode::Sweep => LatSummary::Sweep(SweepSummary {
            mode: Mode::Sweep,
            cpu: uint(v, "cpu").unwrap_or(0),
            mem_node: uint(v, "mem_node"),
            caches: list("caches")
                .iter()
                .filter_map(|c| {
                    Some(CacheMark { level: uint(c, "level")?, size_bytes: uint(c, "size_bytes")? })
                })
                .collect(),
            plateaus: list("plateaus")
                .iter()
                .filter(|p| p.is_object())
                .map(|p| Plateau {
                    label: text(p, "label").unwrap_or_else(|| "?".into()),
                    from_bytes: uint(p, "from_bytes").unwrap_or(0),
                    to_bytes: uint(p, "to_bytes").unwrap_or(0),
                    latency_ns: figure(p, "latency_ns"),
                    cache_bytes: uint(p, "cache_bytes"),
                    points: uint(p, "points").unwrap_or(0),
                })
                .collect(),
        }),
        _ => return None,
    })
}

fn policy(v: &Value) -> Option<PolicyResult> {
    if let Some(r) = today(v) {
        return Some(r);
    }
    v.as_object()?;
    let summary = |k: &str| v.get(k).and_then(today::<Summary>);
    let runs: Vec<RunRecord> = v
        .get("runs")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let exit_code = uint(r, "exit_code");
            let nodes: Vec<NodePages> = r
                .get("numa_pages")
                .and_then(|p| p.get("nodes"))
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|n| {
                    let share = num(n, "anon_fraction").or_else(|| num(n, "fraction"))?;
                    Some(NodePages {
                        node: uint(n, "node")?,
                        anon_kib: uint(n, "anon_kib").unwrap_or(0),
                        file_kib: uint(n, "file_kib").unwrap_or(0),
                        anon_fraction: share,
                        fraction: num(n, "fraction").unwrap_or(share),
                    })
                })
                .collect();
            RunRecord {
                rep: uint(r, "rep").unwrap_or(i as u32 + 1),
                wall_s: figure(r, "wall_s"),
                user_s: figure(r, "user_s"),
                sys_s: figure(r, "sys_s"),
                max_rss_kib: uint(r, "max_rss_kib").unwrap_or(0),
                exit_code,
                signal: uint(r, "signal"),
                timed_out: flag(r, "timed_out").unwrap_or(false),
                interrupted: flag(r, "interrupted").unwrap_or(false),
                ok: flag(r, "ok").unwrap_or(exit_code == Some(0)),
                metric: num(r, "metric"),
                metric_error: text(r, "metric_error"),
                numa_pages: (!nodes.is_empty()).then_some(NumaPages {
                    samples: 0,
                    processes: 0,
                    nodes,
                }),
                numastat_delta: Vec::new(),
                stderr_tail: None,
                counters: counters(r),
                containment: text(r, "containment"),
                metrics: r.get("metrics").and_then(today).unwrap_or_default(),
                output: r.get("output").and_then(today),
                power: r.get("power").and_then(today),
            }
        })
        .collect();
    let ok_runs = uint(v, "ok_runs").unwrap_or_else(|| runs.iter().filter(|r| r.ok).count());
    Some(PolicyResult {
        policy: text(v, "policy").unwrap_or_else(|| "?".into()),
        placement: text(v, "placement").unwrap_or_default(),
        cpus: text(v, "cpus").and_then(|s| CpuSet::parse_list(&s).ok()),
        mem_policy: text(v, "mem_policy"),
        mem_nodes: text(v, "mem_nodes").and_then(|s| NodeSet::parse_list(&s).ok()),
        runs,
        ok_runs,
        stats: PolicyStats {
            median_metric: num(v, "median_metric"),
            median_wall_s: num(v, "median_wall_s"),
            metric_summary: summary("metric_summary"),
            wall_summary: summary("wall_summary"),
            noise_pct: num(v, "noise_pct"),
            change_pct: num(v, "change_pct"),
        },
        verdict: text(v, "verdict")
            .and_then(|s| today(&Value::String(s)))
            .unwrap_or(PolicyVerdict::NoData),
        counters: counters(v),
        metric_higher_is_better: flag(v, "metric_higher_is_better"),
        metrics: v.get("metrics").and_then(today).unwrap_or_default(),
    })
}

/// A core-to-core relation by its name or the names other tools use.
fn relation(s: &str) -> Option<Relation> {
    today::<Relation>(&Value::String(s.to_string())).or(match s {
        "same-core" | "sibling" => Some(Relation::Smt),
        "same-node" => Some(Relation::Node),
        "same-package" | "same-socket" => Some(Relation::Package),
        "cross-socket" | "remote" => Some(Relation::CrossPackage),
        _ => None,
    })
}

/// A severity by the names other tools use.
fn severity(s: &str) -> Severity {
    match s.to_ascii_lowercase().as_str() {
        "critical" | "error" | "high" | "bad" => Severity::Critical,
        "warning" | "warn" | "medium" => Severity::Warn,
        "info" | "low" | "notice" => Severity::Info,
        "ok" | "pass" | "good" => Severity::Ok,
        _ => Severity::Unknown,
    }
}

fn finding(v: &Value) -> Option<Finding> {
    if let Some(f) = today(v) {
        return Some(f);
    }
    v.as_object()?;
    let needs = match (flag(v, "needs_reboot"), flag(v, "needs_bios")) {
        (_, Some(true)) => Needs::Bios,
        (Some(true), _) => Needs::Reboot,
        _ => text(v, "needs").and_then(|n| today(&Value::String(n))).unwrap_or(Needs::Nothing),
    };
    let id = first_text(v, &["id", "rule"]).unwrap_or_else(|| "?".into());
    Some(Finding {
        title: first_text(v, &["title"]).unwrap_or_else(|| id.clone()),
        id,
        severity: first_text(v, &["severity", "level"]).map_or(Severity::Unknown, |s| severity(&s)),
        found: first_text(v, &["found", "title", "message", "summary"]).unwrap_or_default(),
        expected: first_text(v, &["expected"]).unwrap_or_default(),
        why: first_text(v, &["why", "reason"]).unwrap_or_default(),
        fix: first_text(v, &["fix", "how", "remedy"]).unwrap_or_default(),
        needs,
        evidence: first_text(v, &["evidence"]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bw_of(v: Value) -> BwResult {
        match read("bw", &v).record {
            Record::Bw(b) => *b,
            other => panic!("not bw: {other:?}"),
        }
    }

    #[test]
    fn fields_are_read_leniently() {
        let v = json!({"a": 1.5, "b": "2.5", "c": "x", "d": [0, 1], "e": true, "f": null});
        assert_eq!(num(&v, "a"), Some(1.5));
        assert_eq!(num(&v, "b"), Some(2.5));
        assert_eq!(num(&v, "c"), None);
        assert_eq!(num(&v, "missing"), None);
        assert_eq!(text(&v, "d").as_deref(), Some("0,1"));
        assert_eq!(text(&v, "e").as_deref(), Some("true"));
        assert_eq!(text(&v, "f"), None);
        assert_eq!(int(&v, "a"), Some(1));
    }

    #[test]
    fn noise_prefers_the_producers_robust_cv() {
        assert_eq!(noise(&json!({"robust_cv_pct": 0.8, "spread_pct": 9.0})), 0.8);
        // spread 6.156% over 10 samples: d2(10) = 3.078 -> 2%
        let n = noise(&json!({"spread_pct": 6.156}));
        assert!((n - 2.0).abs() < 1e-9, "{n}");
        let n = noise(&json!({"spread_pct": 4.652, "samples": 5}));
        assert!((n - 2.0).abs() < 1e-9, "{n}");
        assert!(noise(&json!({})).is_nan());
    }

    #[test]
    fn placement_is_flagged_below_99_percent_or_when_said() {
        let p = |v: Value| placement(&json!({ "placement": v }), &NodeSet::new());
        let flagged = |p: &Placement| p.status == PlacementStatus::Mismatch;
        assert!(!flagged(&p(json!(0.995))));
        assert!(flagged(&p(json!(0.9))));
        assert!(flagged(&p(json!({"fraction": 1.0, "ok": false}))));
        assert!(!flagged(&p(json!({"on_target": 1.0}))));
        let lat = p(json!({"pages_checked": 200, "pages_on_node": 150, "status": "mismatch"}));
        assert_eq!(lat.fraction(), Some(0.75));
        assert!(flagged(&lat));
        assert_eq!(placement(&json!({}), &NodeSet::new()), Placement::unverified());
    }

    #[test]
    fn a_hand_made_bandwidth_result_reads_with_its_aliases() {
        let b = bw_of(json!({"mode": "global", "kernel": "triad", "threads": 32,
            "mem_nodes": "0-1", "best_gbs": 198.4, "spread_pct": 1.6, "samples": 10,
            "size_bytes": 1073741824u64, "placement": {"fraction": 1.0, "ok": true},
            "isa": "avx512", "stopped": true}));
        assert_eq!((b.mode, b.kernel, b.threads), (bw::Mode::Global, Kernel::Triad, 32));
        assert_eq!(b.policy, ArrayPolicy::LocalPerThread, "implied by the mode");
        assert_eq!((b.reps, b.array_bytes, b.best_gbs), (10, 1 << 30, 198.4));
        assert!(b.median_gbs.is_nan(), "not measured: not a number");
        assert_eq!(b.mem_nodes.to_list(), "0-1");
        assert_eq!(b.placement.fraction(), Some(1.0));
        assert!(b.interrupted, "the first version's `stopped`");
        // no kernel: not a bandwidth result; kept as stored
        let v = json!({"mode": "local", "best_gbs": 1.0});
        let u = read("bw", &v);
        assert_eq!(u.record, Record::Unknown(Unknown { kind: "bw".into(), json: v.to_string() }));
    }

    #[test]
    fn findings_read_the_usual_names() {
        let u = read(
            "audit",
            &json!({"rule": "thp", "level": "warning", "title": "THP is never",
                    "fix": "echo always > ...", "needs_reboot": true}),
        );
        let Record::Finding(f) = u.record else { panic!("{:?}", u.record) };
        assert_eq!((f.id.as_str(), f.severity), ("thp", Severity::Warn));
        assert_eq!(f.found, "THP is never");
        assert_eq!(f.needs, Needs::Reboot);
        assert!(u.as_stored.is_some(), "upgraded: the stored text is kept");
    }

    #[test]
    fn today_records_read_as_they_are_and_unknown_kinds_are_kept() {
        let f = Finding {
            id: "kernel.thp".into(),
            severity: Severity::Ok,
            title: "THP".into(),
            found: "madvise".into(),
            expected: "madvise".into(),
            why: "w".into(),
            fix: String::new(),
            needs: Needs::Nothing,
            evidence: None,
        };
        let r = Record::from(f);
        let u = read("audit", &r.to_json());
        assert_eq!((&u.record, u.as_stored), (&r, None));
        let v = json!({"what": "a newer numaprobe's result"});
        let u = read("future-kind", &v);
        assert_eq!(u.record.kind(), "future-kind");
        assert_eq!(u.record.to_json(), v);
        assert_eq!(u.as_stored, None);
        // a field this version does not know: the stored text is kept
        let mut newer = r.to_json();
        newer["added_later"] = json!(1);
        assert_eq!(read("audit", &newer).as_stored, Some(newer.to_string()));
    }
}
