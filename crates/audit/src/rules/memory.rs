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
        other => return rule.not_read(i.terms, "the SMBIOS table", other, expected),
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

/// Configured speed below the DIMMs' rating (SMBIOS): a CPU limit, a BIOS
/// setting, or two DIMMs per channel (most platforms lower the speed
/// then). No finding without SMBIOS (`memory.population` says so).
pub(super) fn speed(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let Read::Value(m) = i.memory else { return Vec::new() };
    let populated: Vec<_> = m.populated().collect();
    let known: Vec<_> =
        populated.iter().filter_map(|d| Some((d, d.speed_mts?, d.configured_speed_mts?))).collect();
    let expected = "every DIMM at its rated speed";
    if known.is_empty() {
        return Vec::new();
    }
    let slow: Vec<_> = known.iter().filter(|(_, r, c)| c < r).collect();
    if slow.is_empty() {
        let speeds: std::collections::BTreeSet<u32> = known.iter().map(|(_, _, c)| *c).collect();
        return rule
            .finding(Severity::Ok)
            .found(format!(
                "{} DIMM(s) at their rated speed ({} MT/s)",
                known.len(),
                speeds.iter().map(u32::to_string).collect::<Vec<_>>().join("/")
            ))
            .expected(expected)
            .why("Bandwidth is proportional to the transfer rate.")
            .done();
    }
    // DIMMs per (socket, channel), where the locators say.
    let mut per_channel: std::collections::BTreeMap<(u32, &str), u32> = Default::default();
    for d in &populated {
        if let (Some(s), Some(c)) = (d.socket, d.channel.as_deref()) {
            *per_channel.entry((s, c)).or_default() += 1;
        }
    }
    let two_per_channel = slow.iter().any(|(d, _, _)| {
        matches!((d.socket, d.channel.as_deref()), (Some(s), Some(c)) if per_channel.get(&(s, c)).copied().unwrap_or(0) >= 2)
    });
    let (d, r, c) = slow[0];
    let name = d.locator.clone().unwrap_or_else(|| format!("handle {:#06x}", d.handle));
    let worst = slow.iter().map(|(_, r, c)| f64::from(*c) / f64::from(*r)).fold(1.0, f64::min);
    let cause = if two_per_channel {
        "two DIMMs per channel: the platform lowers the speed (2DPC downclock)"
    } else {
        "the CPU's supported speed, a BIOS memory-speed setting, or mixed DIMMs"
    };
    rule.finding(Severity::Warn)
        .found(format!(
            "{} of {} DIMM(s) below their rating (e.g. {name}: {r} MT/s rated, {c} configured; \
             worst {:.0}% of rated); likely cause: {cause}",
            slow.len(),
            known.len(),
            worst * 100.0
        ))
        .expected(expected)
        .why("Peak bandwidth is DIMMs x transfer rate x 8 bytes: a lower configured speed costs bandwidth in proportion.")
        .fix(
            if two_per_channel {
                "use one DIMM per channel (larger DIMMs) where capacity allows, or accept the 2DPC speed"
            } else {
                "BIOS: set the memory frequency to Auto/maximum; check the CPU's supported DDR speed"
            },
            if two_per_channel { Needs::Hardware } else { Needs::Bios },
        )
        .evidence(fraction_text(i))
        .done()
}

/// DIMMs with corrected (CE) or uncorrected (UE) errors from EDAC.
pub(super) fn dimm_errors(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let expected = "no corrected or uncorrected memory errors";
    let e = match i.edac {
        Read::Value(e) => e,
        Read::Absent => {
            return rule
                .finding(Severity::Unknown)
                .found("no EDAC memory controller (/sys/devices/system/edac/mc): no EDAC driver loaded, or a virtual machine")
                .expected(expected)
                .why("Without EDAC the kernel reports no DIMM errors, and numaprobe does not guess.")
                .fix(if arm(i.topology) {
                    "load the platform's EDAC driver (Arm servers mostly report memory errors firmware-first: modprobe ghes_edac)"
                } else {
                    "load the platform's EDAC driver (e.g. modprobe skx_edac, i10nm_edac or amd64_edac)"
                }, Needs::Runtime)
                .done()
        }
        other => return rule.not_read(i.terms, "EDAC error counts", other, expected),
    };
    let bad = e.dimms_with_errors();
    let (ce, ue) = e.totals();
    let dimms: usize = e.controllers.iter().map(|c| c.dimms.len()).sum();
    if bad.is_empty() && ce == 0 && ue == 0 {
        return rule
            .finding(Severity::Ok)
            .found(format!(
                "{} controller(s), {dimms} DIMM(s)/rank(s), no errors counted",
                e.controllers.len()
            ))
            .expected(expected)
            .why("Corrected errors are the early sign of a failing DIMM; none are counted.")
            .done();
    }
    let list: Vec<String> = bad
        .iter()
        .map(|(c, d)| {
            format!(
                "{}/{} {}{}: {} corrected, {} uncorrected",
                c.name,
                d.name,
                d.label.as_deref().unwrap_or("(no label)"),
                d.location.as_deref().map(|l| format!(" ({l})")).unwrap_or_default(),
                d.ce_count.unwrap_or(0),
                d.ue_count.unwrap_or(0)
            )
        })
        .collect();
    let any_ue = ue > 0 || bad.iter().any(|(_, d)| d.ue_count.unwrap_or(0) > 0);
    let found = if list.is_empty() {
        format!("{ce} corrected, {ue} uncorrected error(s) not attributed to a DIMM")
    } else {
        list.join("; ")
    };
    rule.finding(if any_ue { Severity::Critical } else { Severity::Warn })
        .found(found)
        .expected(expected)
        .why(if any_ue {
            "An uncorrected error means data was lost or a machine check was raised: the DIMM is failing."
        } else {
            "Corrected errors cost latency when they are scrubbed and often precede uncorrected ones; a slow node can be one DIMM."
        })
        .fix("replace the named DIMM(s) (the label is the board's slot name); check `ras-mc-ctl --errors` for the history", Needs::Hardware)
        .done()
}
