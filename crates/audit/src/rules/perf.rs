//! The performance-counter rule: `kernel.perf_event_paranoid` and whether
//! the counters option can count hardware events here (a PMU the kernel
//! can use, permission to use it). Counters explain a placement's cost;
//! they do not change performance, so findings are `ok` or `info`, never
//! warnings. The option's name is the front end's ([`Terms::counters`]).

use super::*;
use crate::settings::PerfCounters;

/// What the rule expects, `counters` being the front end's name for the
/// option that counts events.
fn expected(counters: &str) -> String {
    format!("hardware and software events countable (for {counters})")
}

fn paranoid_meaning(p: i64) -> &'static str {
    match p {
        i64::MIN..=-1 => "no restriction",
        0 => "users may count CPU-wide events, including uncore memory-controller traffic",
        1 => "users may count their own processes, kernel included; not CPU-wide or uncore events",
        2 => "users may count their own processes in user space only; uncore counters need root or CAP_PERFMON",
        _ => "users may count nothing; only root or CAP_PERFMON may",
    }
}

const FIX_PARANOID: &str = "sysctl -w kernel.perf_event_paranoid=1 (0 also allows uncore memory-controller counters; persist in /etc/sysctl.d/90-perf.conf), or run numaprobe as root or with CAP_PERFMON";

pub(super) fn counters(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let paranoid = i.settings.perf_event_paranoid.value().copied();
    let level = paranoid.map_or_else(
        || "kernel.perf_event_paranoid not read".to_string(),
        |p| format!("kernel.perf_event_paranoid = {p} ({})", paranoid_meaning(p)),
    );
    let counters = i.terms.counters;
    match &i.settings.perf_counters {
        Read::Value(pc) => live(rule, pc, &level, counters),
        _ => match paranoid {
            // a capture: the level alone says what an unprivileged user may count
            None => Vec::new(),
            Some(p) if p >= 2 => rule
                .finding(Severity::Info)
                .found(level)
                .expected(format!("1 or lower for unprivileged {counters} (0 for uncore counters)"))
                .why(format!("Without privileges, {counters} would miss the kernel's share of each event (or every event), and memory-controller traffic."))
                .fix(FIX_PARANOID, Needs::Runtime)
                .done(),
            Some(_) => rule
                .finding(Severity::Ok)
                .found(level)
                .expected(expected(counters))
                .why("Unprivileged users may count their own processes, kernel included.")
                .done(),
        },
    }
}

fn live(rule: &Rule, pc: &PerfCounters, level: &str, counters: &str) -> Vec<Finding> {
    let who = if pc.root { "root" } else { "this user" };
    match (&pc.hardware_unavailable, &pc.software_unavailable) {
        (None, _) => rule
            .finding(Severity::Ok)
            .found(format!(
                "hardware and software events countable by {who}{}; {level}",
                if pc.user_only { " (user space only)" } else { "" }
            ))
            .expected(expected(counters))
            .why(format!("{counters} shows IPC, LLC misses and the share of remote node loads per placement, which explain why a remote placement is slow."))
            .done(),
        (Some(hw), sw) => {
            let not_permitted = hw.starts_with("not permitted");
            let sw_text = match sw {
                None => "software events (page faults, migrations, context switches) countable".to_string(),
                Some(s) => format!("software events unavailable too ({s})"),
            };
            let f = rule
                .finding(Severity::Info)
                .found(format!("hardware events unavailable to {who} ({hw}); {sw_text}; {level}"))
                .expected(expected(counters));
            if not_permitted {
                f.why(format!("The kernel forbids counting hardware events to this user, so {counters} records them as unavailable."))
                    .fix(FIX_PARANOID, Needs::Runtime)
                    .done()
            } else {
                f.why(format!("No PMU is available to the kernel (usually a virtual machine without a virtual PMU), so {counters} records hardware events as unavailable and only software events."))
                    .fix("Measure on bare metal, or give the guest a virtual PMU (QEMU/libvirt: -cpu host,pmu=on or <pmu state='on'/>; VMware: enable 'virtualize CPU performance counters') and restart it", Needs::Reboot)
                    .done()
            }
        }
    }
}
