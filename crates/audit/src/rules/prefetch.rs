//! The prefetcher rule: what `lat`'s prefetch check (the same memory
//! chased with a 64 B stride and with the default, prefetch-defeating
//! stride) says about the hardware prefetchers' firmware settings, judged
//! per profile. Settings cannot be read from the OS (they are BIOS options
//! or MSRs), so the measurement is the only evidence; without a saved check
//! the finding is `unknown`.

use super::*;
use crate::evidence::PrefetchEvidence;

/// The firmware options that control the spatial and stream prefetchers
/// (names differ per vendor and board).
const BIOS_NAMES: &str =
    "Intel: 'Hardware Prefetcher' (L2 streamer), 'Adjacent Cache Line Prefetch', \
    'DCU Streamer Prefetcher', 'DCU IP Prefetcher'; AMD: 'L1 Stream HW Prefetcher', 'L2 Stream HW \
    Prefetcher', 'L1/L2 Up/Down (region) Prefetcher'";

fn expected(p: Profile) -> &'static str {
    match p {
        Profile::Latency => {
            "prefetchers as the service's own benchmark prefers (random-access, latency-bound \
             services gain little from them)"
        }
        _ => "hardware prefetchers enabled (spatial prefetch measurable)",
    }
}

pub(super) fn prefetchers(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let p = i.profile;
    let Some(ev) = &i.evidence.prefetch else {
        return rule
            .finding(Severity::Unknown)
            .found("no saved run of this machine has a prefetch check")
            .expected(expected(p))
            .why("Prefetcher settings live in the firmware and are not visible to the OS; numaprobe judges them only from its measurement and does not guess.")
            .fix(format!("{} (or {}): both measure and save the prefetch check, then audit again", i.terms.lat, i.terms.run), Needs::Runtime)
            .done();
    };
    let c = &ev.check;
    let evidence = Some(ev.describe());
    // A check stored as disturbed decided nothing: read it as stored,
    // never as "no effect" (its two figures may differ by 30% and more).
    if !c.stable {
        return undecided(rule, i.terms, p, ev);
    }
    if !c.significant {
        if c.noise_ns > 0.05 * c.stride_ns {
            return undecided(rule, i.terms, p, ev);
        }
        // Measured quietly and no difference: adjacent-line / region
        // prefetch is off or does nothing for neighbouring lines.
        let f = rule
            .finding(if p == Profile::Latency { Severity::Info } else { Severity::Warn })
            .found(format!(
                "no spatial-prefetch effect: neighbouring lines (stride 64 B) take as long as isolated ones \
                 ({:.1} vs {:.1} ns): the adjacent-line / region prefetchers are off or ineffective",
                c.line_ns, c.stride_ns
            ))
            .expected(expected(p))
            .evidence(evidence);
        return match p {
            Profile::Latency => f
                .why("A latency-bound, random-access service loses little with the prefetchers off (random loads pay the full DRAM latency either way) and saves the bandwidth they would spend; its sequential parts (scans, copies, logging) run slower.")
                .done(),
            _ => f
                .why("Streaming and sequential code (scans, copies, stencils, checkpoints, page copies of VM migration) depend on the prefetchers to keep DRAM busy: without them every line is a demand miss and bandwidth per core drops.")
                .fix(format!("enable the hardware prefetchers in the BIOS/UEFI ({BIOS_NAMES})"), Needs::Bios)
                .done(),
        };
    }
    if c.shortened_pct <= 0.0 {
        return rule
            .finding(Severity::Info)
            .found(format!(
                "stride 64 B is slower than stride {} B by {:.0}% ({:.1} vs {:.1} ns): unexpected; the machine may have been busy",
                c.stride_bytes, -c.shortened_pct, c.line_ns, c.stride_ns
            ))
            .expected(expected(p))
            .why("A chase over neighbouring lines should never be slower than one over isolated lines; the check does not say anything about the prefetchers.")
            .fix(again_quietly(i.terms), Needs::Runtime)
            .evidence(evidence)
            .done();
    }
    let found = format!(
        "spatial prefetchers active: neighbouring-line loads {:.0}% shorter than isolated ones ({:.1} vs {:.1} ns)",
        c.shortened_pct, c.line_ns, c.stride_ns
    );
    match p {
        Profile::Latency => rule
            .finding(Severity::Info)
            .found(found)
            .expected(expected(p))
            .why(format!(
                "The prefetchers help sequential neighbours only: a random access still pays {:.1} ns (the stride {} B figure, the one to compare). Adjacent-line prefetch fetches a second line per miss, which under heavy random load spends bandwidth and can raise loaded latency; switching it off ({BIOS_NAMES}) is worth it only if the service's own benchmark improves.",
                c.stride_ns, c.stride_bytes
            ))
            .evidence(evidence)
            .done(),
        _ => rule
            .finding(Severity::Ok)
            .found(found)
            .expected(expected(p))
            .why("Streaming and sequential access get neighbouring lines early and bandwidth-bound code keeps DRAM busy; random accesses still pay the full (stride 256 B) latency, which is the figure numaprobe reports.")
            .evidence(evidence)
            .done(),
    }
}

/// The fix of a check that says nothing: measure again, quietly.
fn again_quietly(terms: Terms) -> String {
    format!("{} on a quiet machine, then audit again", terms.lat)
}

fn undecided(rule: &Rule, terms: Terms, p: Profile, ev: &PrefetchEvidence) -> Vec<Finding> {
    let c = &ev.check;
    let found = if c.stable {
        format!(
            "the prefetch check could not tell: noise {:.1} ns is more than 5% of {:.1} ns",
            c.noise_ns, c.stride_ns
        )
    } else {
        format!(
            "the prefetch check is undecided: it was disturbed while it ran (other work took its CPU), so its {:.1} vs {:.1} ns say nothing about the prefetchers",
            c.line_ns, c.stride_ns
        )
    };
    rule.finding(Severity::Unknown)
        .found(found)
        .expected(expected(p))
        .why("The machine was too busy while the check ran for its difference to mean anything; numaprobe does not guess.")
        .fix(again_quietly(terms), Needs::Runtime)
        .evidence(Some(ev.describe()))
        .done()
}
