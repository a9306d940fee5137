//! The reader of stored payloads into the typed views every reader shares
//! (report, audit evidence, the store's key columns). A payload of today's
//! shape deserializes into its typed record ([`crate::bw::BwResult`],
//! [`crate::lat::Lat`], [`crate::lat::LatSummary`],
//! [`crate::exec::PolicyResult`], [`crate::audit::Finding`]) and the view is made
//! from that; anything else (the first version's shapes, the alias names
//! it accepted, hand-made payloads) is read field by field, tolerant of
//! missing fields, here and nowhere else. `docs/report.md` lists the
//! fields and aliases.

use serde_json::Value;

use crate::audit::Finding as AuditFinding;
use crate::bw::{upgrade_v1, BwResult};
use crate::exec::{PolicyResult, PolicyStats};
use crate::lat::{Lat as LatRecord, LatSummary};
use crate::placement::{Placement as PlacementRecord, PlacementStatus, FLAG_BELOW};
use crate::stats::Summary;

/// A number field (a JSON number, or a string holding one).
pub fn num(v: &Value, k: &str) -> Option<f64> {
    match v.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|x: &f64| x.is_finite())
}

/// An integer field.
pub fn int(v: &Value, k: &str) -> Option<i64> {
    match v.get(k)? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A text field; numbers and booleans are shown as text, arrays of scalars
/// joined with commas.
pub fn text(v: &Value, k: &str) -> Option<String> {
    scalar_text(v.get(k)?)
}

pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            Some(a.iter().filter_map(scalar_text).collect::<Vec<_>>().join(","))
        }
        _ => None,
    }
}

/// Noise of one result as a robust coefficient of variation in percent:
/// `robust_cv_pct`, `noise_pct` or `cv_pct` when the producer gives it, else the
/// spread `(max - min) / median` divided by the expected range of a normal
/// sample of its size in standard deviations (the d2 constant of quality
/// control; n from `samples`, `n` or `reps`, else n = 10, d2 = 3.078).
pub fn noise_pct(v: &Value) -> Option<f64> {
    if let Some(cv) = ["robust_cv_pct", "noise_pct", "cv_pct"].iter().find_map(|k| num(v, k)) {
        return Some(cv.abs());
    }
    let spread = num(v, "spread_pct")?;
    let n = ["samples", "n", "reps"].iter().find_map(|k| {
        int(v, k).or_else(|| v.get(*k).and_then(Value::as_array).map(|a| a.len() as i64))
    });
    Some(spread.abs() / d2(n.unwrap_or(10)))
}

/// Expected range of `n` normal samples in standard deviations (ASTM
/// E2587 table of d2); 3.078 (n = 10) when unknown, and grows slowly past
/// 25.
fn d2(n: i64) -> f64 {
    const D2: [f64; 24] = [
        1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336, 3.407,
        3.472, 3.532, 3.588, 3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931,
    ];
    match n {
        i64::MIN..=1 => 1.0,
        2..=25 => D2[(n - 2) as usize],
        _ => 3.931 + 0.0125 * ((n - 25) as f64).sqrt().min(40.0),
    }
}

/// Where a measurement's pages were, read from `placement`: today's
/// `{status, check}` object, a number (the first version's bandwidth
/// results: the fraction on the intended nodes) or an object with `fraction` (or
/// `on_target`, or `pages_on_node` / `pages_checked`) and optionally `ok`,
/// `flagged` or `status` (`mismatch` flags it).
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub fraction: Option<f64>,
    /// Pages were not where they were asked (fraction < 0.99, `ok: false`
    /// or `flagged: true`).
    pub flagged: bool,
}

impl Placement {
    /// The view of a typed placement: flagged when the pages are under
    /// 99% on target or the check said they were not where asked.
    pub fn of_record(p: &PlacementRecord) -> Placement {
        let fraction = p.fraction().filter(|f| f.is_finite());
        let low = fraction.is_some_and(|f| f < FLAG_BELOW);
        Placement { fraction, flagged: low || p.status == PlacementStatus::Mismatch }
    }

    /// The placement of a payload, any shape (see the type's doc).
    pub fn of(v: &Value) -> Option<Placement> {
        let p = v.get("placement")?;
        if p.get("check").is_some() {
            if let Ok(typed) = serde_json::from_value::<PlacementRecord>(p.clone()) {
                return Some(Placement::of_record(&typed));
            }
        }
        let (fraction, ok, flagged) = match p {
            Value::Number(n) => (n.as_f64(), None, None),
            Value::Object(_) => (
                num(p, "fraction").or_else(|| num(p, "on_target")).or_else(|| {
                    let checked = num(p, "pages_checked").filter(|c| *c > 0.0)?;
                    Some(num(p, "pages_on_node")? / checked)
                }),
                p.get("ok").and_then(Value::as_bool),
                p.get("flagged")
                    .and_then(Value::as_bool)
                    .or_else(|| text(p, "status").map(|s| s == "mismatch")),
            ),
            _ => return None,
        };
        let low = fraction.is_some_and(|f| f < 0.99);
        Some(Placement { fraction, flagged: low || ok == Some(false) || flagged == Some(true) })
    }
}

/// A bandwidth result (kind `bw`).
#[derive(Debug, Clone, PartialEq)]
pub struct Bw {
    pub mode: String,
    pub kernel: String,
    pub threads: Option<i64>,
    pub cpu_node: Option<i64>,
    pub mem_node: Option<i64>,
    pub mem_nodes: Option<String>,
    pub best_gbs: Option<f64>,
    pub median_gbs: Option<f64>,
    pub min_gbs: Option<f64>,
    pub max_gbs: Option<f64>,
    pub spread_pct: Option<f64>,
    pub noise_pct: Option<f64>,
    pub placement: Option<Placement>,
    pub isa: Option<String>,
    /// Ctrl-C cut the repetitions short.
    pub interrupted: bool,
    /// Whether the kernels' answers were checked (absent in hand-made data).
    pub validated: Option<bool>,
    /// Event counts (`bw --counters`), when recorded.
    pub counters: Option<crate::counters::Counters>,
    /// Bytes the kernel counted over the timed repetitions (STREAM's rule,
    /// `bytes_per_rep × reps`), to set beside measured DRAM bytes.
    pub counted_bytes: Option<f64>,
}

impl Bw {
    /// The view of a stored `bw` payload: a [`BwResult`] of today's or the
    /// first version's shape, else read field by field.
    pub fn of(v: &Value) -> Bw {
        let mut up = v.clone();
        upgrade_v1(&mut up);
        match serde_json::from_value::<BwResult>(up) {
            Ok(r) => Bw::of_record(&r),
            Err(_) => Bw::of_fields(v),
        }
    }

    /// The view of a typed result.
    pub fn of_record(r: &BwResult) -> Bw {
        let spread = finite(r.spread_pct);
        Bw {
            mode: r.mode.name().to_string(),
            kernel: r.kernel.name().to_string(),
            threads: Some(r.threads as i64),
            cpu_node: r.cpu_node.map(i64::from),
            mem_node: r.mem_node.map(i64::from),
            mem_nodes: Some(r.mem_nodes.to_string()),
            best_gbs: finite(r.best_gbs),
            median_gbs: finite(r.median_gbs),
            min_gbs: finite(r.min_gbs),
            max_gbs: finite(r.max_gbs),
            spread_pct: spread,
            noise_pct: spread.map(|s| s.abs() / d2(r.reps as i64)),
            placement: Some(Placement::of_record(&r.placement)),
            isa: Some(r.isa.name().to_string()),
            interrupted: r.interrupted,
            validated: Some(r.validated),
            counters: r.counters.clone(),
            counted_bytes: Some(r.bytes_per_rep as f64 * r.reps as f64),
        }
    }

    /// A payload of another shape, field by field.
    pub fn of_fields(v: &Value) -> Bw {
        Bw {
            mode: text(v, "mode").unwrap_or_default(),
            kernel: text(v, "kernel").unwrap_or_else(|| "?".into()),
            threads: int(v, "threads"),
            cpu_node: int(v, "cpu_node"),
            mem_node: int(v, "mem_node"),
            mem_nodes: text(v, "mem_nodes"),
            best_gbs: num(v, "best_gbs"),
            median_gbs: num(v, "median_gbs"),
            min_gbs: num(v, "min_gbs"),
            max_gbs: num(v, "max_gbs"),
            spread_pct: num(v, "spread_pct"),
            noise_pct: noise_pct(v),
            placement: Placement::of(v),
            isa: text(v, "isa"),
            interrupted: interrupted(v),
            validated: v.get("validated").and_then(Value::as_bool),
            counters: crate::counters::Counters::of_payload(v),
            counted_bytes: num(v, "bytes_per_rep").zip(num(v, "reps")).map(|(b, n)| b * n),
        }
    }

    /// Where the memory was: `node N`, the node set, or `?`.
    pub fn memory(&self) -> String {
        match (&self.mem_node, &self.mem_nodes) {
            (Some(n), _) => n.to_string(),
            (None, Some(s)) => s.clone(),
            _ => "?".into(),
        }
    }
}

/// A latency result (kind `lat`).
#[derive(Debug, Clone, PartialEq)]
pub struct Lat {
    pub mode: String,
    pub size_bytes: Option<u64>,
    pub cpu: Option<i64>,
    pub cpu_node: Option<i64>,
    pub mem_node: Option<i64>,
    pub median_ns: Option<f64>,
    pub p90_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    /// Fastest and slowest sample (chases that record them).
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub spread_pct: Option<f64>,
    pub noise_pct: Option<f64>,
    pub page_size: Option<String>,
    pub delay: Option<f64>,
    pub latency_ns: Option<f64>,
    pub load_gbs: Option<f64>,
    pub cpu_a: Option<i64>,
    pub cpu_b: Option<i64>,
    pub relation: Option<String>,
    pub group: Option<String>,
    pub placement: Option<Placement>,
    /// Chase layout (for the method caption); absent in old loaded points.
    pub stride_bytes: Option<u64>,
    pub tlb_group_bytes: Option<u64>,
    /// Loaded points: the traffic mix (`read`, `3:1`, ...; old `rw` reads
    /// as `1:1`), the wait in ns, and whether it is the no-load point.
    pub load_kind: Option<String>,
    pub delay_ns: Option<f64>,
    pub idle: bool,
    /// Per-value latency histogram (chase results that recorded one).
    pub histogram: Option<crate::hist::Histogram>,
    /// Ctrl-C cut it short, or its answers failed validation (hand-made
    /// payloads may say so; today's records are never emitted then).
    pub discarded: bool,
}

impl Lat {
    /// The view of a stored `lat` payload: a typed [`LatRecord`] when it
    /// has today's shape, else read field by field.
    pub fn of(v: &Value) -> Lat {
        match serde_json::from_value::<LatRecord>(v.clone()) {
            Ok(r) => Lat::of_record(&r),
            Err(_) => Lat::of_fields(v),
        }
    }

    /// The view of a typed record.
    pub fn of_record(r: &LatRecord) -> Lat {
        let none = Lat {
            mode: String::new(),
            size_bytes: None,
            cpu: None,
            cpu_node: None,
            mem_node: None,
            median_ns: None,
            p90_ns: None,
            p99_ns: None,
            min_ns: None,
            max_ns: None,
            spread_pct: None,
            noise_pct: None,
            page_size: None,
            delay: None,
            latency_ns: None,
            load_gbs: None,
            cpu_a: None,
            cpu_b: None,
            relation: None,
            group: None,
            placement: None,
            stride_bytes: None,
            tlb_group_bytes: None,
            load_kind: None,
            delay_ns: None,
            idle: false,
            histogram: None,
            discarded: false,
        };
        // noise from the spread when the record gives no robust CV
        let from_spread = |spread: f64, n: Option<usize>| {
            finite(spread).map(|s| s.abs() / d2(n.map_or(10, |n| n as i64)))
        };
        match r {
            LatRecord::Chase(c) => Lat {
                mode: c.mode.name().to_string(),
                size_bytes: Some(c.size_bytes),
                cpu: Some(i64::from(c.cpu)),
                cpu_node: c.cpu_node.map(i64::from),
                mem_node: c.mem_node.map(i64::from),
                median_ns: finite(c.median_ns),
                p90_ns: finite(c.p90_ns),
                p99_ns: finite(c.p99_ns),
                min_ns: finite(c.min_ns),
                max_ns: finite(c.max_ns),
                spread_pct: finite(c.spread_pct),
                noise_pct: finite(c.noise_pct).map(f64::abs),
                page_size: Some(c.page_size.clone()),
                placement: Some(Placement::of_record(&c.placement)),
                stride_bytes: Some(c.stride_bytes as u64).filter(|s| *s > 0),
                tlb_group_bytes: Some(c.tlb_group_bytes),
                histogram: c.histogram.clone(),
                ..none
            },
            LatRecord::Loaded(l) => Lat {
                mode: l.mode.name().to_string(),
                size_bytes: Some(l.size_bytes),
                cpu: Some(i64::from(l.cpu)),
                mem_node: l.mem_node.map(i64::from),
                median_ns: finite(l.median_ns),
                p90_ns: finite(l.p90_ns),
                p99_ns: finite(l.p99_ns),
                spread_pct: finite(l.spread_pct),
                noise_pct: from_spread(l.spread_pct, None),
                page_size: Some(l.page_size.clone()),
                delay: Some(l.delay as f64),
                latency_ns: finite(l.latency_ns),
                load_gbs: finite(l.load_gbs),
                placement: Some(Placement::of_record(&l.placement)),
                stride_bytes: l.stride_bytes.map(|s| s as u64),
                tlb_group_bytes: l.tlb_group_bytes,
                load_kind: Some(l.load_kind.name().to_string()),
                delay_ns: l.delay_ns.and_then(finite),
                idle: l.idle,
                ..none
            },
            LatRecord::C2c(c) => Lat {
                mode: c.mode.name().to_string(),
                median_ns: finite(c.median_ns),
                p90_ns: finite(c.p90_ns),
                p99_ns: finite(c.p99_ns),
                min_ns: finite(c.min_ns),
                max_ns: finite(c.max_ns),
                spread_pct: finite(c.spread_pct),
                noise_pct: from_spread(c.spread_pct, Some(c.samples)),
                cpu_a: Some(i64::from(c.cpu_a)),
                cpu_b: Some(i64::from(c.cpu_b)),
                relation: c.relation.map(|r| r.name().to_string()),
                ..none
            },
        }
    }

    /// A payload of another shape, field by field.
    pub fn of_fields(v: &Value) -> Lat {
        Lat {
            mode: text(v, "mode").unwrap_or_default(),
            size_bytes: int(v, "size_bytes").and_then(|s| u64::try_from(s).ok()),
            cpu: int(v, "cpu"),
            cpu_node: int(v, "cpu_node"),
            mem_node: int(v, "mem_node"),
            median_ns: num(v, "median_ns"),
            p90_ns: num(v, "p90_ns"),
            p99_ns: num(v, "p99_ns"),
            min_ns: num(v, "min_ns"),
            max_ns: num(v, "max_ns"),
            spread_pct: num(v, "spread_pct"),
            noise_pct: noise_pct(v),
            page_size: text(v, "page_size"),
            delay: num(v, "delay"),
            latency_ns: num(v, "latency_ns"),
            load_gbs: num(v, "load_gbs"),
            cpu_a: int(v, "cpu_a"),
            cpu_b: int(v, "cpu_b"),
            relation: text(v, "relation"),
            group: text(v, "group"),
            placement: Placement::of(v),
            stride_bytes: int(v, "stride_bytes").and_then(|s| u64::try_from(s).ok()),
            tlb_group_bytes: int(v, "tlb_group_bytes").and_then(|s| u64::try_from(s).ok()),
            load_kind: text(v, "load_kind")
                .map(|k| crate::lat::LoadKind::parse(&k).map_or(k, |m| m.name().to_string())),
            delay_ns: num(v, "delay_ns"),
            idle: v.get("idle").and_then(Value::as_bool) == Some(true),
            histogram: v.get("histogram").and_then(|h| serde_json::from_value(h.clone()).ok()),
            discarded: interrupted(v) || v.get("validated").and_then(Value::as_bool) == Some(false),
        }
    }

    /// The latency figure of a loaded point: `latency_ns`, else `median_ns`.
    pub fn loaded_ns(&self) -> Option<f64> {
        self.latency_ns.or(self.median_ns)
    }
}

/// An audit finding (kind `audit`).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub id: String,
    pub severity: String,
    pub found: String,
    pub expected: Option<String>,
    pub why: Option<String>,
    pub fix: Option<String>,
    pub needs: Option<String>,
}

impl Finding {
    /// The view of a stored `audit` payload: an [`audit::Finding`] as
    /// today's audit writes it, else read field by field.
    pub fn of(v: &Value) -> Finding {
        match serde_json::from_value::<AuditFinding>(v.clone()) {
            Ok(f) => Finding::of_record(&f),
            Err(_) => Finding::of_fields(v),
        }
    }

    /// The view of a typed finding.
    pub fn of_record(f: &AuditFinding) -> Finding {
        let some = |s: &str| Some(s.to_string()).filter(|s| !s.is_empty());
        Finding {
            id: some(&f.id).unwrap_or_else(|| "?".into()),
            severity: f.severity.label().to_string(),
            found: f.found.clone(),
            expected: some(&f.expected),
            why: some(&f.why),
            fix: some(&f.fix),
            needs: Some(f.needs.label().to_string()),
        }
    }

    /// A finding of another shape (hand-made, other tools' names), field
    /// by field.
    pub fn of_fields(v: &Value) -> Finding {
        let first = |keys: &[&str]| keys.iter().find_map(|k| text(v, k)).filter(|s| !s.is_empty());
        let needs = match (
            v.get("needs_reboot").and_then(Value::as_bool),
            v.get("needs_bios").and_then(Value::as_bool),
        ) {
            (_, Some(true)) => Some("BIOS change".to_string()),
            (Some(true), _) => Some("reboot".to_string()),
            _ => first(&["needs"]),
        };
        Finding {
            id: first(&["id", "rule"]).unwrap_or_else(|| "?".into()),
            severity: first(&["severity", "level"]).unwrap_or_else(|| "info".into()),
            found: first(&["found", "title", "message", "summary"]).unwrap_or_default(),
            expected: first(&["expected"]),
            why: first(&["why", "reason"]),
            fix: first(&["fix", "how", "remedy"]),
            needs,
        }
    }

    /// Sort key: most severe first.
    pub fn rank(&self) -> u8 {
        match self.severity.to_ascii_lowercase().as_str() {
            "critical" | "error" | "high" | "bad" => 0,
            "warning" | "warn" | "medium" => 1,
            "low" | "notice" => 2,
            "info" => 3,
            _ => 4,
        }
    }

    /// True for findings that only say all is well.
    pub fn is_ok(&self) -> bool {
        matches!(self.severity.to_ascii_lowercase().as_str(), "ok" | "pass" | "good")
    }
}

/// One group of CPUs with similar latency to one node (a `lat-summary`
/// of mode `per-cpu`, field `groups[]`).
#[derive(Debug, Clone, PartialEq)]
pub struct LatGroup {
    /// The CPUs, as a cpulist (`0-15,32-47`).
    pub cpus: String,
    /// How many CPUs the list holds (0 when it does not parse).
    pub count: usize,
    pub median_ns: Option<f64>,
    pub min_ns: Option<f64>,
    pub max_ns: Option<f64>,
    /// Nodes the OS puts these CPUs in.
    pub os_nodes: Option<String>,
}

/// The summary of a per-CPU latency measurement: CPUs grouped by latency.
#[derive(Debug, Clone, PartialEq)]
pub struct PerCpuSummary {
    pub mem_node: Option<i64>,
    pub groups: Vec<LatGroup>,
    /// The OS shows one node but the CPUs form separate latency groups.
    pub hidden_numa: bool,
    pub note: Option<String>,
}

impl PerCpuSummary {
    /// The view of a typed summary.
    pub fn of_record(r: &crate::lat::PerCpuSummary) -> PerCpuSummary {
        PerCpuSummary {
            mem_node: r.mem_node.map(i64::from),
            groups: r
                .groups
                .iter()
                .map(|g| LatGroup {
                    cpus: g.cpus.to_string(),
                    count: g.cpus.len(),
                    median_ns: finite(g.median_ns),
                    min_ns: finite(g.min_ns),
                    max_ns: finite(g.max_ns),
                    os_nodes: Some(g.os_nodes.to_string()).filter(|s| !s.is_empty()),
                })
                .collect(),
            hidden_numa: r.hidden_numa,
            note: r.note.clone().filter(|s| !s.is_empty()),
        }
    }

    /// A payload of another shape, field by field.
    pub fn of(v: &Value) -> PerCpuSummary {
        let groups = v
            .get("groups")
            .and_then(Value::as_array)
            .map(|gs| {
                gs.iter()
                    .filter(|g| g.is_object())
                    .map(|g| {
                        let cpus = text(g, "cpus").unwrap_or_default();
                        let count = topo::CpuSet::parse_list(&cpus).map(|s| s.len()).unwrap_or(0);
                        LatGroup {
                            cpus,
                            count,
                            median_ns: num(g, "median_ns"),
                            min_ns: num(g, "min_ns"),
                            max_ns: num(g, "max_ns"),
                            os_nodes: text(g, "os_nodes").filter(|s| !s.is_empty()),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        PerCpuSummary {
            mem_node: int(v, "mem_node"),
            groups,
            hidden_numa: v.get("hidden_numa").and_then(Value::as_bool).unwrap_or(false),
            note: text(v, "note").filter(|s| !s.is_empty()),
        }
    }

    /// The group holding `cpu` (its index), if any.
    pub fn group_of(&self, cpu: i64) -> Option<usize> {
        let cpu = u32::try_from(cpu).ok()?;
        self.groups.iter().position(|g| {
            topo::CpuSet::parse_list(&g.cpus).map(|s| s.contains(cpu)).unwrap_or(false)
        })
    }

    /// "CPUs 0-15 at 80 ns, CPUs 16-31 at 131 ns".
    pub fn groups_text(&self) -> String {
        self.groups
            .iter()
            .map(|g| match g.median_ns {
                Some(ns) => format!("CPUs {} at {ns:.1} ns", g.cpus),
                None => format!("CPUs {}", g.cpus),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A latency plateau of a sweep (`lat-summary` of mode `sweep`, field
/// `plateaus[]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// `L1`, `L2`, `L3`... or `DRAM`.
    pub label: String,
    pub from_bytes: Option<u64>,
    pub to_bytes: Option<u64>,
    pub latency_ns: Option<f64>,
    /// Size of the cache level the label names, from the topology.
    pub cache_bytes: Option<u64>,
    pub points: Option<i64>,
}

/// The summary of a latency sweep: the measuring CPU's caches and the
/// plateaus found.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSummary {
    pub cpu: Option<i64>,
    pub mem_node: Option<i64>,
    /// `(level, size_bytes)` of the measuring CPU's data caches.
    pub caches: Vec<(i64, u64)>,
    pub plateaus: Vec<Plateau>,
}

impl SweepSummary {
    /// The view of a typed summary.
    pub fn of_record(r: &crate::lat::SweepSummary) -> SweepSummary {
        SweepSummary {
            cpu: Some(i64::from(r.cpu)),
            mem_node: r.mem_node.map(i64::from),
            caches: r.caches.iter().map(|c| (i64::from(c.level), c.size_bytes)).collect(),
            plateaus: r
                .plateaus
                .iter()
                .map(|p| Plateau {
                    label: p.label.clone(),
                    from_bytes: Some(p.from_bytes),
                    to_bytes: Some(p.to_bytes),
                    latency_ns: finite(p.latency_ns),
                    cache_bytes: p.cache_bytes,
                    points: Some(p.points as i64),
                })
                .collect(),
        }
    }

    /// A payload of another shape, field by field.
    pub fn of(v: &Value) -> SweepSummary {
        let arr = |k: &str| v.get(k).and_then(Value::as_array).cloned().unwrap_or_default();
        let size = |x: &Value, k: &str| int(x, k).and_then(|n| u64::try_from(n).ok());
        SweepSummary {
            cpu: int(v, "cpu"),
            mem_node: int(v, "mem_node"),
            caches: arr("caches")
                .iter()
                .filter_map(|c| Some((int(c, "level")?, size(c, "size_bytes")?)))
                .collect(),
            plateaus: arr("plateaus")
                .iter()
                .filter(|p| p.is_object())
                .map(|p| Plateau {
                    label: text(p, "label").unwrap_or_else(|| "?".into()),
                    from_bytes: size(p, "from_bytes"),
                    to_bytes: size(p, "to_bytes"),
                    latency_ns: num(p, "latency_ns"),
                    cache_bytes: size(p, "cache_bytes"),
                    points: int(p, "points"),
                })
                .collect(),
        }
    }
}

/// One run of a program under a policy (`exec` payload, `runs[]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecRun {
    /// Succeeded: `ok`, else exit code 0.
    pub ok: bool,
    pub exit_code: Option<String>,
    pub wall_s: Option<f64>,
    pub metric: Option<f64>,
    /// `numa_pages.nodes[]`: node and share of anonymous pages
    /// (`anon_fraction`, or `fraction`).
    pub numa_pages: Vec<(Option<i64>, Option<f64>)>,
}

/// One policy of an `exec` experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecPolicy {
    pub policy: String,
    /// What the policy did, e.g. "cpus 0-3, bind 1".
    pub placement: Option<String>,
    pub runs: Vec<ExecRun>,
    pub ok_runs: Option<i64>,
    /// The statistics as stored (the record's type; finite figures only).
    pub stats: PolicyStats,
    /// As stored (`no-data` when saved before the matrix was judged).
    pub verdict: Option<String>,
    /// Median event counts of the successful runs (`exec --counters`).
    pub counters: Option<crate::counters::Counters>,
}

impl ExecPolicy {
    /// The view of a stored `exec` payload: an [`exec::PolicyResult`], else
    /// read field by field (`None` when it is no object).
    pub fn of(v: &Value) -> Option<ExecPolicy> {
        match serde_json::from_value::<PolicyResult>(v.clone()) {
            Ok(r) => Some(ExecPolicy::of_record(&r)),
            Err(_) => ExecPolicy::of_fields(v),
        }
    }

    /// The view of a typed policy record.
    pub fn of_record(r: &PolicyResult) -> ExecPolicy {
        ExecPolicy {
            policy: r.policy.clone(),
            placement: Some(r.placement.clone()).filter(|p| !p.is_empty()),
            runs: r
                .runs
                .iter()
                .map(|run| ExecRun {
                    ok: run.ok,
                    exit_code: run.exit_code.map(|c| c.to_string()),
                    wall_s: finite(run.wall_s),
                    metric: run.metric.and_then(finite),
                    numa_pages: run
                        .numa_pages
                        .iter()
                        .flat_map(|p| &p.nodes)
                        .map(|n| (Some(i64::from(n.node)), finite(n.anon_fraction)))
                        .collect(),
                })
                .collect(),
            ok_runs: Some(r.ok_runs as i64),
            stats: PolicyStats {
                median_metric: r.stats.median_metric.and_then(finite),
                median_wall_s: r.stats.median_wall_s.and_then(finite),
                noise_pct: r.stats.noise_pct.and_then(finite),
                change_pct: r.stats.change_pct.and_then(finite),
                ..r.stats
            },
            verdict: Some(r.verdict.stored_name().to_string()),
            counters: r.counters.clone(),
        }
    }

    /// A payload of another shape, field by field (`None` when it is no
    /// object).
    pub fn of_fields(v: &Value) -> Option<ExecPolicy> {
        if !v.is_object() {
            return None;
        }
        let summary =
            |k: &str| v.get(k).and_then(|s| serde_json::from_value::<Summary>(s.clone()).ok());
        let runs = v.get("runs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        Some(ExecPolicy {
            policy: text(v, "policy").unwrap_or_else(|| "?".into()),
            placement: text(v, "placement"),
            runs: runs
                .iter()
                .map(|r| ExecRun {
                    ok: r
                        .get("ok")
                        .and_then(Value::as_bool)
                        .unwrap_or(int(r, "exit_code") == Some(0)),
                    exit_code: text(r, "exit_code"),
                    wall_s: num(r, "wall_s"),
                    metric: num(r, "metric"),
                    numa_pages: r
                        .get("numa_pages")
                        .and_then(|p| p.get("nodes"))
                        .and_then(Value::as_array)
                        .map(|nodes| {
                            nodes
                                .iter()
                                .map(|n| {
                                    let frac =
                                        num(n, "anon_fraction").or_else(|| num(n, "fraction"));
                                    (int(n, "node"), frac)
                                })
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect(),
            ok_runs: int(v, "ok_runs"),
            stats: PolicyStats {
                median_metric: num(v, "median_metric"),
                median_wall_s: num(v, "median_wall_s"),
                metric_summary: summary("metric_summary"),
                wall_summary: summary("wall_summary"),
                noise_pct: num(v, "noise_pct"),
                change_pct: num(v, "change_pct"),
            },
            verdict: text(v, "verdict"),
            counters: crate::counters::Counters::of_payload(v),
        })
    }

    /// The summary of the compared quantity: the stored `metric_summary`
    /// / `wall_summary`, else computed from the successful runs.
    pub fn summary(&self, on_metric: bool) -> Option<Summary> {
        let stored = if on_metric { self.stats.metric_summary } else { self.stats.wall_summary };
        stored.or_else(|| {
            let values: Vec<f64> = self
                .runs
                .iter()
                .filter(|r| r.ok)
                .filter_map(|r| if on_metric { r.metric } else { r.wall_s })
                .collect();
            Summary::of(&values)
        })
    }

    /// `N0 98% N1 2%` from the last run with a `numa_pages` reading.
    pub fn pages_text(&self) -> Option<String> {
        let nodes = self.runs.iter().rev().find(|r| !r.numa_pages.is_empty())?;
        let parts: Vec<String> = nodes
            .numa_pages
            .iter()
            .filter_map(|(n, f)| Some(format!("N{} {:.0}%", (*n)?, (*f)? * 100.0)))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

fn finite(x: f64) -> Option<f64> {
    Some(x).filter(|x| x.is_finite())
}

/// Whether a payload says Ctrl-C cut it short (`interrupted`, or the
/// `stopped` of the first version's `lat` documents).
pub fn interrupted(v: &Value) -> bool {
    ["interrupted", "stopped"].iter().any(|k| v.get(*k).and_then(Value::as_bool) == Some(true))
}

/// A stored result, read into its view by kind (and mode for summaries).
#[derive(Debug, Clone, PartialEq)]
pub enum Stored {
    Bw(Bw),
    Lat(Lat),
    Finding(Finding),
    /// A `lat-summary` of mode `per-cpu`.
    PerCpu(PerCpuSummary),
    /// A `lat-summary` of mode `sweep`.
    Sweep(SweepSummary),
    /// A policy of `exec`.
    Exec(ExecPolicy),
    /// A kind (or summary mode) this version does not know.
    Other,
}

/// Reads a stored payload of `kind` (`bw`, `lat`, `lat-summary`, `audit`,
/// `exec`).
pub fn read(kind: &str, v: &Value) -> Stored {
    match kind {
        "bw" => Stored::Bw(Bw::of(v)),
        "lat" => Stored::Lat(Lat::of(v)),
        "audit" => Stored::Finding(Finding::of(v)),
        "exec" => ExecPolicy::of(v).map_or(Stored::Other, Stored::Exec),
        "lat-summary" => match serde_json::from_value::<LatSummary>(v.clone()) {
            Ok(LatSummary::PerCpu(r)) => Stored::PerCpu(PerCpuSummary::of_record(&r)),
            Ok(LatSummary::Sweep(r)) => Stored::Sweep(SweepSummary::of_record(&r)),
            // read by their typed records (`results::lat`) where needed
            Ok(LatSummary::Loaded(_) | LatSummary::PrefetchCheck(_)) => Stored::Other,
            Err(_) => match text(v, "mode").as_deref() {
                Some("per-cpu") => Stored::PerCpu(PerCpuSummary::of(v)),
                Some("sweep") => Stored::Sweep(SweepSummary::of(v)),
                _ => Stored::Other,
            },
        },
        _ => Stored::Other,
    }
}

/// The figure a stored result is filed under: `best_gbs` (GB/s),
/// `median_ns`, `latency_ns` (ns), `median_metric` (the program's unit,
/// `None`), `wall_s` (s): the first present.
pub fn headline(v: &Value) -> Option<(f64, Option<&'static str>)> {
    [
        ("best_gbs", Some("GB/s")),
        ("median_ns", Some("ns")),
        ("latency_ns", Some("ns")),
        ("median_metric", None),
        ("wall_s", Some("s")),
    ]
    .iter()
    .find_map(|(k, u)| v.get(*k).and_then(Value::as_f64).map(|x| (x, *u)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn noise_prefers_the_robust_cv() {
        assert_eq!(noise_pct(&json!({"robust_cv_pct": 0.8, "spread_pct": 9.0})), Some(0.8));
        // spread 6.156% over 10 samples: d2(10) = 3.078 -> 2%
        let n = noise_pct(&json!({"spread_pct": 6.156})).unwrap();
        assert!((n - 2.0).abs() < 1e-9, "{n}");
        let n = noise_pct(&json!({"spread_pct": 4.652, "samples": 5})).unwrap();
        assert!((n - 2.0).abs() < 1e-9, "{n}");
        assert_eq!(noise_pct(&json!({})), None);
    }

    #[test]
    fn placement_is_flagged_below_99_percent_or_when_said() {
        let p = |v: Value| Placement::of(&json!({ "placement": v })).unwrap();
        assert!(!p(json!(0.995)).flagged);
        assert!(p(json!(0.9)).flagged);
        assert!(p(json!({"fraction": 1.0, "ok": false})).flagged);
        assert!(!p(json!({"on_target": 1.0})).flagged);
        let lat = p(json!({"pages_checked": 200, "pages_on_node": 150, "status": "mismatch"}));
        assert_eq!(lat.fraction, Some(0.75));
        assert!(lat.flagged);
        assert_eq!(Placement::of(&json!({})), None);
        // today's shape, bandwidth and latency alike
        let today = p(json!({"status": "mismatch", "check": {"expected": "0", "fraction": 0.995,
            "per_node": {"0": 0.995}, "sampled_pages": 200, "total_pages": 200,
            "not_present_pages": 0, "threshold": 0.99, "ok": false, "spread": null}}));
        assert_eq!(today.fraction, Some(0.995));
        assert!(today.flagged, "the check said mismatch");
    }

    #[test]
    fn findings_read_the_usual_names() {
        let f = Finding::of(&json!({"rule": "thp", "level": "warning", "title": "THP is never",
                                    "fix": "echo always > ...", "needs_reboot": true}));
        assert_eq!((f.id.as_str(), f.severity.as_str()), ("thp", "warning"));
        assert_eq!(f.found, "THP is never");
        assert_eq!(f.needs.as_deref(), Some("reboot"));
        assert_eq!(f.rank(), 1);
    }
}
