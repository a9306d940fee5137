//! The counters table that `exec`, `bw` and `lat --counters` print under
//! their results: derived figures and software events per result, with a
//! note for each event the machine could not count and why.

use results::counters::{count_text as count, event, Counters};

use super::{Table, TableStyle};

/// One row: what was measured, its counts, and for bandwidth the bytes the
/// kernel counted (STREAM's rule) to set beside the memory controllers'.
pub struct Row<'a> {
    pub label: String,
    pub counters: &'a Counters,
    pub counted_bytes: Option<f64>,
}

fn cell(c: &Counters, name: &str) -> String {
    match c.get(name) {
        Some(r) => match r.value {
            Some(v) => format!("{}{}", count(v), if r.scaled { "*" } else { "" }),
            None => "unavailable".into(),
        },
        None => "-".into(),
    }
}

fn derived(v: Option<f64>, scaled: bool, digits: usize, inputs_ok: bool) -> String {
    match v {
        Some(x) => format!("{x:.digits$}{}", if scaled { "*" } else { "" }),
        None if inputs_ok => "-".into(),
        None => "unavailable".into(),
    }
}

/// The table and its notes; empty when no row has counts.
pub fn render(rows: &[Row<'_>], style: TableStyle) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let with_dram = rows.iter().any(|r| r.counters.dram_bytes().is_some());
    let mut header: Vec<String> =
        ["counted", "IPC", "LLC miss %", "remote loads %"].iter().map(|s| s.to_string()).collect();
    header.extend(
        ["page-faults", "major-faults", "cpu-migrations", "context-switches"]
            .iter()
            .map(|s| s.to_string()),
    );
    if with_dram {
        header.push("DRAM GB (uncore)".into());
        header.push("DRAM / counted".into());
    }
    let mut t = Table::new(header, style);
    let mut scaled = false;
    let mut user_only = false;
    for r in rows {
        let c = r.counters;
        let d = &c.derived;
        let ok = |a: &str, b: &str| c.value(a).is_some() && c.value(b).is_some();
        scaled |= c.events.iter().any(|e| e.scaled && e.value.is_some());
        user_only |= c.events.iter().any(|e| e.user_only);
        let mut row = vec![
            r.label.clone(),
            derived(d.ipc, d.scaled, 2, ok(event::INSTRUCTIONS, event::CYCLES)),
            derived(d.llc_miss_pct, d.scaled, 1, ok(event::CACHE_MISSES, event::CACHE_REFERENCES)),
            derived(d.remote_load_pct, d.scaled, 1, ok(event::NODE_LOAD_MISSES, event::NODE_LOADS)),
            cell(c, event::PAGE_FAULTS),
            cell(c, event::MAJOR_FAULTS),
            cell(c, event::CPU_MIGRATIONS),
            cell(c, event::CONTEXT_SWITCHES),
        ];
        if with_dram {
            let dram = c.dram_bytes();
            row.push(dram.map_or("unavailable".into(), |b| format!("{:.2}", b / 1e9)));
            row.push(match (dram, r.counted_bytes) {
                (Some(b), Some(k)) if k > 0.0 => format!("{:.2}x", b / k),
                _ => "-".into(),
            });
        }
        t.add_row(row);
    }
    let mut out = format!("counters ({}):\n{t}\n", rows[0].counters.scope);
    out.push_str(&notes(rows.iter().map(|r| r.counters), scaled, user_only));
    out
}

/// One line per kind of event the machine could not count, with the
/// reason; the multiplexing and user-space notes.
fn notes<'a>(
    all: impl Iterator<Item = &'a Counters> + Clone,
    scaled: bool,
    user_only: bool,
) -> String {
    let mut out = String::new();
    let mut seen = std::collections::BTreeMap::<String, Vec<String>>::new();
    for c in all.clone() {
        for e in &c.events {
            if let (None, Some(why)) = (e.value, &e.unavailable) {
                let names = seen.entry(why.clone()).or_default();
                if !names.contains(&e.event) {
                    names.push(e.event.clone());
                }
            }
        }
    }
    for (why, names) in &seen {
        out.push_str(&format!("note: {} unavailable ({why})\n", names.join(", ")));
    }
    let uncore: std::collections::BTreeSet<&str> =
        all.filter_map(|c| c.uncore_unavailable.as_deref()).collect();
    for why in uncore {
        out.push_str(&format!("note: memory-controller traffic unavailable ({why})\n"));
    }
    if scaled {
        out.push_str(
            "note: * scaled for multiplexing: the event was on the PMU part of the time; \
             count = raw x enabled / running\n",
        );
    }
    if user_only {
        out.push_str("note: user space only (kernel.perf_event_paranoid excludes the kernel)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::counters::Reading;

    #[test]
    fn unavailable_events_are_said_with_their_reason_and_never_filled_in() {
        let mut events: Vec<Reading> = event::HARDWARE
            .iter()
            .map(|e| Reading::unavailable(e, "not supported by this machine's PMU (ENOENT)"))
            .collect();
        events.push(Reading::counted(event::PAGE_FAULTS, 12_345, 10, 10, false));
        events.push(Reading::counted(event::CPU_MIGRATIONS, 3, 10, 5, false));
        let c = Counters::new("command and its children", events);
        let out = render(
            &[Row { label: "default".into(), counters: &c, counted_bytes: None }],
            TableStyle::Plain,
        );
        assert!(out.starts_with("counters (command and its children):"), "{out}");
        assert!(out.contains("12.3 k") && out.contains("6*"), "{out}");
        assert!(out.contains("unavailable"), "{out}");
        assert!(
            out.contains(
                "note: cycles, instructions, cache-references, cache-misses, node-loads, \
                 node-load-misses, node-stores, node-store-misses unavailable (not supported by \
                 this machine's PMU (ENOENT))"
            ),
            "{out}"
        );
        assert!(out.contains("scaled for multiplexing"), "{out}");
        assert_eq!(render(&[], TableStyle::Plain), "");
    }

    #[test]
    fn counts_read_at_a_glance() {
        assert_eq!(count(812.0), "812");
        assert_eq!(count(45_300.0), "45.3 k");
        assert_eq!(count(1_204_000.0), "1.20 M");
        assert_eq!(count(3.41e9), "3.41 G");
    }
}
