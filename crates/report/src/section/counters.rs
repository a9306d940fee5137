//! Event counts in reports (`--counters`): the columns the exec policy
//! table gains, a table beside bandwidth results, and one note per kind of
//! event the machine could not count, with the reason. Nothing is shown
//! for results recorded without counts.

use results::counters::{count_text as count, event, Counters};
use results::stats::measured;

use crate::doc::{Document, Table};
use crate::fmt::opt;
use analysis::data::RunData;

/// Headers of the columns [`cells`] fills.
pub const HEADER: [&str; 5] =
    ["IPC", "LLC miss %", "Remote loads %", "Page faults", "CPU migrations"];

/// IPC, LLC miss %, remote loads %, page faults and CPU migrations;
/// `unavailable` where the machine could not count, `-` without counts.
pub fn cells(c: Option<&Counters>) -> Vec<String> {
    let Some(c) = c else { return vec!["-".into(); HEADER.len()] };
    let mark = if c.derived.scaled { "*" } else { "" };
    let derived = |v: Option<f64>, a: &str, b: &str, digits: usize| match v {
        Some(x) => format!("{x:.digits$}{mark}"),
        None if c.value(a).is_none() || c.value(b).is_none() => "unavailable".into(),
        None => "-".into(),
    };
    let sw = |e: &str| match c.get(e) {
        Some(r) => r.value.map_or("unavailable".into(), count),
        None => "-".into(),
    };
    vec![
        derived(c.derived.ipc, event::INSTRUCTIONS, event::CYCLES, 2),
        derived(c.derived.llc_miss_pct, event::CACHE_MISSES, event::CACHE_REFERENCES, 1),
        derived(c.derived.remote_load_pct, event::NODE_LOAD_MISSES, event::NODE_LOADS, 1),
        sw(event::PAGE_FAULTS),
        sw(event::CPU_MIGRATIONS),
    ]
}

/// One sentence per reason events could not be counted, naming them;
/// the multiplexing note when a figure was scaled.
pub fn notes<'a>(all: impl IntoIterator<Item = &'a Counters>) -> Vec<String> {
    let mut by_reason = std::collections::BTreeMap::<String, Vec<String>>::new();
    let mut uncore = std::collections::BTreeSet::new();
    let mut scaled = false;
    for c in all {
        scaled |= c.derived.scaled;
        for e in &c.events {
            if let (None, Some(why)) = (e.value, &e.unavailable) {
                let v = by_reason.entry(why.clone()).or_default();
                if !v.contains(&e.event) {
                    v.push(e.event.clone());
                }
            }
        }
        if let Some(w) = &c.uncore_unavailable {
            uncore.insert(w.clone());
        }
    }
    let mut out: Vec<String> = by_reason
        .into_iter()
        .map(|(why, names)| format!("Counters unavailable ({why}): {}.", names.join(", ")))
        .collect();
    out.extend(uncore.into_iter().map(|w| format!("Memory-controller traffic unavailable ({w}).")));
    if scaled {
        out.push(
            "* scaled for multiplexing: an event was on the PMU part of the time and its count is raw × enabled / running."
                .into(),
        );
    }
    out
}

/// The counts recorded beside bandwidth results, when any were.
pub fn bandwidth(doc: &mut Document, d: &RunData) {
    let with: Vec<_> = d.bw.iter().filter(|b| b.counters.is_some()).collect();
    if with.is_empty() {
        return;
    }
    doc.h(3, "Counters beside bandwidth");
    doc.p("Counted over each kernel's timed repetitions on the team's threads (perf_event_open). DRAM bytes come from the memory controllers (system-wide per socket); DRAM / counted above 1 is traffic STREAM does not count, such as write-allocate reads of regular stores.");
    let mut header = vec!["Mode", "Memory node(s)", "Kernel", "Best GB/s"];
    header.extend(HEADER);
    header.extend(["DRAM GB", "DRAM / counted"]);
    let mut t = Table::with_header(&header);
    for b in &with {
        let c = b.counters.as_ref();
        let dram = c.and_then(Counters::dram_bytes);
        let best = opt(measured(b.best_gbs), "GB/s");
        let mut row = vec![b.mode.name().into(), b.memory(), b.kernel.name().into(), best];
        row.extend(cells(c));
        row.push(match (dram, c.map(|c| c.uncore.is_empty())) {
            (Some(x), _) => format!("{:.2}", x / 1e9),
            (None, Some(false)) => "unavailable".into(),
            _ => "-".into(),
        });
        row.push(match (dram, b.counted_bytes()) {
            (Some(x), k) if k > 0.0 => format!("{:.2}x", x / k),
            _ => "-".into(),
        });
        t.push(row);
    }
    doc.table(t);
    for n in notes(with.iter().filter_map(|b| b.counters.as_ref())) {
        doc.p(n);
    }
}
