//! The text of `numaprobe place`: where the probe's pages landed against
//! what was expected, with the numastat deltas.

use std::collections::BTreeMap;

use place::probe::CpuReport;
use place::{Allowed, ExpectSource, MemPolicy, NodeMemory, PageReport, ProbeReport};
use results::exec::NodeCounters;
use results::placement::PlacementCheck;
use serde::Serialize;

use super::{Table, TableStyle};

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Why a placement check failed, in one line.
pub fn failure_line(c: &PlacementCheck) -> String {
    let per: Vec<String> =
        c.per_node.iter().map(|(n, f)| format!("node {n} {}", pct(*f))).collect();
    let mut s = format!(
        "{} of {} sampled pages on nodes {} (need {}); found: {}",
        pct(c.fraction),
        c.sampled_pages,
        c.expected,
        pct(c.threshold),
        if per.is_empty() { "no present pages".to_string() } else { per.join(", ") }
    );
    if let Some(sp) = &c.spread {
        if !sp.ok {
            s.push_str(&format!(
                "; spread off by {} (tolerance {})",
                pct(sp.max_deviation),
                pct(sp.tolerance)
            ));
        }
    }
    s
}

/// The `place --json` document ([`crate::versioned::schema::PLACE`]
/// before it): the probe's report in its order, with where the
/// expectation came from in words ([`expect_source`]).
#[derive(Serialize)]
pub struct PlaceDoc<'a> {
    kernel: &'a Option<String>,
    allowed: &'a Allowed,
    cpu: &'a CpuReport,
    policy_requested: &'a MemPolicy,
    policy: &'a MemPolicy,
    fallback: &'a Option<String>,
    applied_with: place::Via,
    policy_read_back: &'a MemPolicy,
    size_bytes: u64,
    pages: &'a PageReport,
    expect_source: &'static str,
    placement: &'a PlacementCheck,
    page_counts: &'a BTreeMap<u32, u64>,
    weights: &'a Option<BTreeMap<u32, u32>>,
    memory: &'a [NodeMemory],
    numastat_delta: &'a BTreeMap<u32, NodeCounters>,
    numa_balancing: Option<place::NumaBalancing>,
    numa_balancing_enabled: Option<bool>,
    ok: bool,
}

impl<'a> PlaceDoc<'a> {
    pub fn of(r: &'a ProbeReport) -> Self {
        PlaceDoc {
            kernel: &r.kernel,
            allowed: &r.allowed,
            cpu: &r.cpu,
            policy_requested: &r.policy_requested,
            policy: &r.policy,
            fallback: &r.fallback,
            applied_with: r.applied_with,
            policy_read_back: &r.policy_read_back,
            size_bytes: r.size_bytes,
            pages: &r.pages,
            expect_source: expect_source(r.expect_source),
            placement: &r.placement,
            page_counts: &r.page_counts,
            weights: &r.weights,
            memory: &r.memory,
            numastat_delta: &r.numastat_delta,
            numa_balancing: r.numa_balancing,
            numa_balancing_enabled: r.numa_balancing_enabled,
            ok: r.ok,
        }
    }
}

/// Where the expectation came from, as the document and the text's check
/// line name it: the policy's nodes, the pinned CPU's node, or `--expect`.
pub fn expect_source(s: ExpectSource) -> &'static str {
    match s {
        ExpectSource::Policy => "policy",
        ExpectSource::LocalCpu => "local-cpu",
        ExpectSource::Given => "--expect",
    }
}

/// The probe's report: policy, CPU, buffer, the pages per node and the
/// check.
pub fn render(r: &ProbeReport, style: TableStyle) -> serde_json::Result<String> {
    let pages = &r.sampled;
    let mut out = String::new();
    let policy = match &r.fallback {
        Some(_) => format!("{} (asked {}, not supported here)", r.policy, r.policy_requested),
        None => r.policy.to_string(),
    };
    out.push_str(&format!(
        "policy    {policy} via {}; read back: {}\n",
        match r.applied_with {
            place::Via::Range => "mbind",
            place::Via::Thread => "set_mempolicy",
        },
        r.policy_read_back
    ));
    out.push_str(&format!(
        "cpu       pinned to {}, ran on CPU {} (node {})\n",
        r.cpu.pinned_to, r.cpu.ran_on_cpu, r.cpu.ran_on_node
    ));
    out.push_str(&format!(
        "buffer    {} bytes ({:.1} MiB), pages asked {}, obtained {} ({} bytes{})\n",
        r.size_bytes,
        r.size_bytes as f64 / (1u64 << 20) as f64,
        r.pages.requested.name(),
        r.pages.obtained,
        r.pages.page_size_bytes,
        r.pages.thp_bytes.map(|b| format!(", {b} bytes in THP")).unwrap_or_default()
    ));
    out.push_str(&format!(
        "sampled   {} of {} pages; not present {}, unreadable {}\n",
        pages.sampled_pages, pages.total_pages, pages.not_present, pages.faulted
    ));
    let mut t = Table::new(
        vec![
            "node".into(),
            "pages".into(),
            "share".into(),
            "expected".into(),
            "numa_hit Δ".into(),
            "numa_miss Δ".into(),
            "interleave_hit Δ".into(),
        ],
        style,
    );
    let mut ids: Vec<u32> = r.numastat_delta.keys().copied().collect();
    ids.extend(r.page_counts.keys());
    ids.sort_unstable();
    ids.dedup();
    for id in ids {
        let d = r.numastat_delta.get(&id).copied().unwrap_or_default();
        let exp = match r.placement.spread.as_ref().and_then(|s| s.expected_share.get(&id)) {
            Some(s) => pct(*s),
            None if r.placement.expected.contains(id) => "yes".into(),
            None => "".into(),
        };
        t.add_row(vec![
            id.to_string(),
            r.page_counts.get(&id).copied().unwrap_or(0).to_string(),
            pct(r.placement.per_node.get(&id).copied().unwrap_or(0.0)),
            exp,
            d.numa_hit.to_string(),
            d.numa_miss.to_string(),
            d.interleave_hit.to_string(),
        ]);
    }
    out.push_str(&format!("{t}\n"));
    out.push_str(&format!(
        "numa_balancing {}\n",
        match r.numa_balancing {
            None => "unknown".to_string(),
            Some(b) => serde_json::to_value(b)?.as_str().unwrap_or("?").to_string(),
        }
    ));
    out.push_str(&format!(
        "check     {} of pages on nodes {} (need {}) from {}: {}",
        pct(r.placement.fraction),
        r.placement.expected,
        pct(r.placement.threshold),
        expect_source(r.expect_source),
        if r.ok { "OK" } else { "FAILED" }
    ));
    Ok(out)
}
