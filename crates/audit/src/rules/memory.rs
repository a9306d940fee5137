//! The memory rules: DIMM population, measured bandwidth against the
//! theoretical peak, free memory per node.

use super::*;

pub(super) fn population(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let expected = "every memory channel populated, identical DIMMs";
    let m = match i.memory {
        Read::Value(m) => m,
        Read::Absent => {
            return rule.finding(Severity::Unknown)
                .found("no SMBIOS table (/sys/firmware/dmi/tables/DMI absent: firmware or hypervisor does not expose it, or the capture did not record it)")
                .expected(expected)
                .why("Without the DIMM records numaprobe cannot check channels or compute the theoretical peak, and does not guess.")
                .done()
        }
        other => return rule.not_read("the SMBIOS table", other, expected),
    };
    let populated: Vec<_> = m.populated().collect();
    if populated.is_empty() {
        return rule.finding(Severity::Unknown)
            .found(format!("{} memory slot records, none populated{}", m.dimms.len(), if m.notes.is_empty() { String::new() } else { format!(": {}", m.notes.join("; ")) }))
            .expected(expected)
            .why("The firmware's records describe no installed module (common in virtual machines), so nothing can be checked.")
            .done();
    }
    let mut sizes: Vec<u64> = populated.iter().filter_map(|d| d.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let speeds: Vec<u32> = populated.iter().filter_map(|d| d.configured_speed_mts).collect();
    let types: std::collections::BTreeSet<&str> =
        populated.iter().filter_map(|d| d.memory_type.as_deref()).collect();
    let mut summary = format!(
        "{} of {} slots populated ({}), sizes {}, configured {} MT/s",
        populated.len(),
        m.dimms.len(),
        if types.is_empty() {
            "type unknown".to_string()
        } else {
            types.into_iter().collect::<Vec<_>>().join("/")
        },
        sizes.iter().map(|s| gib(*s)).collect::<Vec<_>>().join(" + "),
        match (speeds.iter().min(), speeds.iter().max()) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => "unknown".to_string(),
        }
    );
    for s in &m.sockets {
        summary.push_str(&format!(
            "; socket {}: {} of {} channels, {}{}",
            s.socket,
            s.populated_channels.len(),
            s.channels.len(),
            gib(s.total_bytes),
            s.peak_gbs.map(|p| format!(", peak {p:.1} GB/s")).unwrap_or_default()
        ));
    }
    let mut problems = Vec::new();
    for s in &m.sockets {
        let empty: Vec<&String> =
            s.channels.iter().filter(|c| !s.populated_channels.contains(c)).collect();
        if !empty.is_empty() {
            problems.push(format!(
                "socket {}: {} of {} channels empty ({})",
                s.socket,
                empty.len(),
                s.channels.len(),
                empty.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if sizes.len() > 1 {
        problems.push(format!(
            "mixed DIMM sizes ({})",
            sizes.iter().map(|s| gib(*s)).collect::<Vec<_>>().join(", ")
        ));
    }
    let totals: Vec<u64> = m.sockets.iter().map(|s| s.total_bytes).collect();
    if totals.len() > 1 && totals.iter().min() != totals.iter().max() {
        problems.push(format!(
            "sockets hold different amounts ({})",
            totals.iter().map(|t| gib(*t)).collect::<Vec<_>>().join(" vs ")
        ));
    }
    let slow: Vec<_> = populated
        .iter()
        .filter(|d| matches!((d.speed_mts, d.configured_speed_mts), (Some(r), Some(c)) if c < r))
        .collect();
    let mut notes = m.notes.clone();
    if let Some(d) = slow.first() {
        notes.push(format!(
            "{} DIMM(s) run below their rating (e.g. {} MT/s rated, {} configured: CPU limit or two DIMMs per channel)",
            slow.len(),
            d.speed_mts.unwrap_or(0),
            d.configured_speed_mts.unwrap_or(0)
        ));
    }
    let found = if notes.is_empty() { summary } else { format!("{summary}; {}", notes.join("; ")) };
    if problems.is_empty() {
        return rule.finding(if m.locator_scheme_known { Severity::Ok } else { Severity::Info })
            .found(found)
            .expected(expected)
            .why(if m.locator_scheme_known {
                "Every channel carries memory, so the socket can reach its full bandwidth."
            } else {
                "The slot names do not say which channel each DIMM is on, so empty channels cannot be checked."
            })
            .done();
    }
    let sev = if i.profile == Profile::Hpc || i.profile == Profile::AiTraining {
        Severity::Critical
    } else {
        Severity::Warn
    };
    rule.finding(sev)
        .found(format!("{}; {found}", problems.join("; ")))
        .expected(expected)
        .why("Bandwidth scales with populated channels and interleaves evenly only over identical DIMMs: one real server lost half its bandwidth with 4 of 8 channels filled.")
        .fix("populate every channel of every socket with identical DIMMs (same size, rank and speed), one per channel first", Needs::Hardware)
        .evidence(fraction_text(i))
        .done()
}

/// (measured local GB/s, theoretical peak GB/s, fraction) for the best-measured node.
fn fraction_of_peak(i: &Inputs) -> Option<(f64, f64, f64)> {
    let ev = i.evidence;
    if let Some(f) = ev.fraction_of_peak {
        return Some((f64::NAN, f64::NAN, f));
    }
    let m = i.memory.value()?;
    ev.local_best_gbs_per_node
        .iter()
        .filter_map(|(&node, &gbs)| {
            let node_peak = m.node_peak_gbs(i.topology, node)?;
            Some((gbs, node_peak, gbs / node_peak))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

fn fraction_text(i: &Inputs) -> Option<String> {
    fraction_of_peak(i).map(|(gbs, peak, f)| {
        if gbs.is_nan() {
            format!("measured {:.0}% of theoretical peak", f * 100.0)
        } else {
            format!("measured {:.0}% of theoretical peak ({gbs:.1} of {peak:.1} GB/s)", f * 100.0)
        }
    })
}

/// Below this fraction of the theoretical peak, a local bandwidth figure is suspicious.
pub const LOW_PEAK_FRACTION: f64 = 0.6;

pub(super) fn peak_fraction(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let Some((_, _, f)) = fraction_of_peak(i) else { return Vec::new() };
    let ev = fraction_text(i);
    if f >= LOW_PEAK_FRACTION {
        return rule
            .finding(Severity::Ok)
            .found(format!("{:.0}% of theoretical peak", f * 100.0))
            .expected(format!(
                "at least {:.0}% (STREAM-like kernels reach 60-85%)",
                LOW_PEAK_FRACTION * 100.0
            ))
            .why("The memory system delivers what its DIMMs and channels allow.")
            .evidence(ev)
            .done();
    }
    rule.finding(Severity::Warn)
        .found(format!("measured {:.0}% of theoretical peak: check DIMM population", f * 100.0))
        .expected(format!("at least {:.0}% (STREAM-like kernels reach 60-85%)", LOW_PEAK_FRACTION * 100.0))
        .why("Far below peak usually means empty or mismatched channels, memory running below its rated speed, or a power profile that throttles the uncore.")
        .fix("check DIMM population (memory.population), BIOS memory speed and the power profile (BIOS: System Profile = Performance)", Needs::Bios)
        .evidence(ev)
        .done()
}

/// Free fraction under which a node counts as nearly full.
pub const NEARLY_FULL: f64 = 0.10;
/// Free-fraction spread between nodes that counts as imbalance.
pub const IMBALANCE: f64 = 0.40;

pub(super) fn free_memory(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let nodes: Vec<_> = i.topology.memory_nodes().collect();
    if nodes.is_empty() {
        return Vec::new();
    }
    let frac = |n: &topo::Node| n.mem_free_bytes as f64 / n.mem_total_bytes as f64;
    let found_all = nodes
        .iter()
        .map(|n| {
            format!(
                "node {}: {} free of {} ({:.0}%)",
                n.id,
                gib(n.mem_free_bytes),
                gib(n.mem_total_bytes),
                frac(n) * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!(
        "every node above {:.0}% free, nodes within {:.0} points of each other",
        NEARLY_FULL * 100.0,
        IMBALANCE * 100.0
    );
    let full: Vec<String> =
        nodes.iter().filter(|n| frac(n) < NEARLY_FULL).map(|n| n.id.to_string()).collect();
    let fmax = nodes.iter().map(|n| frac(n)).fold(0.0, f64::max);
    let fmin = nodes.iter().map(|n| frac(n)).fold(1.0, f64::min);
    if !full.is_empty() {
        return rule.finding(Severity::Warn)
            .found(format!("node(s) {} nearly full; {found_all}", full.join(", ")))
            .expected(expected)
            .why("Allocations meant for a full node reclaim memory or fall back to a remote node, so bound processes silently run remote.")
            .fix("numastat -m to find the consumers; sync; echo 1 > /proc/sys/vm/drop_caches to drop page cache; rebind or spread the large processes", Needs::Runtime)
            .done();
    }
    if nodes.len() > 1 && fmax - fmin > IMBALANCE {
        return rule.finding(Severity::Info)
            .found(format!("uneven: {found_all}"))
            .expected(expected)
            .why("One node filling before the others means new allocations there will soon go remote.")
            .fix("numastat -m to see which processes or page cache fill the node; rebalance bindings", Needs::Runtime)
            .done();
    }
    rule.finding(Severity::Ok)
        .found(found_all)
        .expected(expected)
        .why("Every node has room for local allocations.")
        .done()
}
