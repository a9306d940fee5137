//! Event counts recorded with a result (`--counters`): one reading per
//! event with its multiplexing scale, the figures derived from them (IPC,
//! LLC miss ratio, share of remote node loads), and memory-controller
//! traffic per socket. Data and arithmetic only: opening the counters is
//! the `counters` crate's job. Nothing here is ever estimated: an event
//! the machine could not count carries `unavailable` and no value.

use serde::{Deserialize, Serialize};

/// The events `--counters` asks for, by the names `perf stat -e` takes.
pub mod event {
    pub const CYCLES: &str = "cycles";
    pub const INSTRUCTIONS: &str = "instructions";
    /// `PERF_COUNT_HW_CACHE_REFERENCES`: last-level cache references on
    /// Intel (see docs/counters.md for AMD and Arm).
    pub const CACHE_REFERENCES: &str = "cache-references";
    pub const CACHE_MISSES: &str = "cache-misses";
    /// Generic NUMA cache events (`PERF_COUNT_HW_CACHE_NODE`): loads
    /// served by DRAM, and of those the ones from a remote node.
    pub const NODE_LOADS: &str = "node-loads";
    pub const NODE_LOAD_MISSES: &str = "node-load-misses";
    pub const NODE_STORES: &str = "node-stores";
    pub const NODE_STORE_MISSES: &str = "node-store-misses";
    pub const PAGE_FAULTS: &str = "page-faults";
    pub const MINOR_FAULTS: &str = "minor-faults";
    pub const MAJOR_FAULTS: &str = "major-faults";
    pub const CPU_MIGRATIONS: &str = "cpu-migrations";
    pub const CONTEXT_SWITCHES: &str = "context-switches";

    /// Hardware events (the PMU's), in the order they are recorded.
    pub const HARDWARE: [&str; 8] = [
        CYCLES,
        INSTRUCTIONS,
        CACHE_REFERENCES,
        CACHE_MISSES,
        NODE_LOADS,
        NODE_LOAD_MISSES,
        NODE_STORES,
        NODE_STORE_MISSES,
    ];
    /// Software events (the kernel's): they work in virtual machines too.
    pub const SOFTWARE: [&str; 5] =
        [PAGE_FAULTS, MINOR_FAULTS, MAJOR_FAULTS, CPU_MIGRATIONS, CONTEXT_SWITCHES];
}

/// A count for a table: `812`, `45.3 k`, `1.20 M`, `3.41 G` (the one
/// format the CLI's counters table and the report share).
pub fn count_text(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

/// A count scaled for multiplexing: when the PMU had more events than
/// counters, the kernel rotated them and an event counted only for
/// `running_ns` of the `enabled_ns` it was enabled; the estimate of the
/// full count is `raw × enabled / running` (what `perf stat` prints with a
/// percentage). Returns the value and whether it was scaled; `None` when
/// the event never ran (`running_ns == 0`), since nothing can be said then.
pub fn scale(raw: u64, enabled_ns: u64, running_ns: u64) -> Option<(f64, bool)> {
    if running_ns == 0 {
        return if enabled_ns == 0 && raw == 0 { Some((0.0, false)) } else { None };
    }
    if running_ns >= enabled_ns {
        return Some((raw as f64, false));
    }
    Some((raw as f64 * enabled_ns as f64 / running_ns as f64, true))
}

/// One event's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// The event, as `perf stat -e` names it (see [`event`]).
    pub event: String,
    /// The count, scaled for multiplexing when `scaled`; null when
    /// unavailable.
    pub value: Option<f64>,
    /// The count as read, before scaling.
    pub raw: Option<u64>,
    /// Time the event was enabled and time it was on the PMU, ns.
    pub enabled_ns: Option<u64>,
    pub running_ns: Option<u64>,
    /// True when the event was multiplexed (`running_ns < enabled_ns`) and
    /// `value` is `raw × enabled / running`.
    #[serde(default)]
    pub scaled: bool,
    /// True when only user space was counted (the kernel was excluded:
    /// `perf_event_paranoid` ≥ 2 without privileges).
    #[serde(default)]
    pub user_only: bool,
    /// Why there is no value (`not supported by this machine's PMU`,
    /// `not permitted: perf_event_paranoid is 3`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// The PMU's own name for what the kernel counts for this generic
    /// event, where it differs by architecture (on Arm: `INST_RETIRED`
    /// for `instructions`, see [`arm_pmu_event`]); absent on x86-64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pmu_event: Option<String>,
}

/// The Arm PMUv3 event the arm64 kernel counts for a generic hardware
/// event (`armv8_pmuv3_perf_map` in Linux's `drivers/perf/arm_pmuv3.c`,
/// `arch/arm64/kernel/perf_event.c` before 6.4): `cache-references` and
/// `cache-misses` are the level-1 data cache's, not a last-level cache's.
/// `None` for the `node-*` events, which the Arm PMU driver does not map
/// (they are unavailable there), and for software events.
pub fn arm_pmu_event(event: &str) -> Option<&'static str> {
    Some(match event {
        event::CYCLES => "CPU_CYCLES",
        event::INSTRUCTIONS => "INST_RETIRED",
        event::CACHE_REFERENCES => "L1D_CACHE",
        event::CACHE_MISSES => "L1D_CACHE_REFILL",
        _ => return None,
    })
}

impl Reading {
    /// A reading of `raw` over `enabled_ns`/`running_ns`, scaled as
    /// [`scale`] says; an event that never ran is unavailable.
    pub fn counted(
        event: &str,
        raw: u64,
        enabled_ns: u64,
        running_ns: u64,
        user_only: bool,
    ) -> Reading {
        let scaled = scale(raw, enabled_ns, running_ns);
        Reading {
            event: event.to_string(),
            value: scaled.map(|s| s.0),
            raw: Some(raw),
            enabled_ns: Some(enabled_ns),
            running_ns: Some(running_ns),
            scaled: scaled.is_some_and(|s| s.1),
            user_only,
            unavailable: scaled.is_none().then(|| {
                "never on the PMU while enabled (multiplexed out: too many events)".to_string()
            }),
            pmu_event: None,
        }
    }

    /// An event that could not be counted, and why.
    pub fn unavailable(event: &str, reason: impl Into<String>) -> Reading {
        Reading {
            event: event.to_string(),
            value: None,
            raw: None,
            enabled_ns: None,
            running_ns: None,
            scaled: false,
            user_only: false,
            unavailable: Some(reason.into()),
            pmu_event: None,
        }
    }

    fn with_pmu(mut self, pmu_event: Option<String>) -> Reading {
        self.pmu_event = pmu_event;
        self
    }

    /// The reading with the PMU's name for its event on a machine of
    /// architecture `arch` (`std::env::consts::ARCH`'s names): the Arm
    /// PMUv3 name on `aarch64`, nothing elsewhere.
    pub fn named_for(mut self, arch: &str) -> Reading {
        if arch == "aarch64" {
            self.pmu_event = arm_pmu_event(&self.event).map(str::to_string);
        }
        self
    }

    /// Share of the enabled time the event was on the PMU, percent (what
    /// `perf stat` prints in parentheses), when it was scaled.
    pub fn running_pct(&self) -> Option<f64> {
        let (e, r) = (self.enabled_ns?, self.running_ns?);
        (self.scaled && e > 0).then(|| r as f64 / e as f64 * 100.0)
    }

    /// The value for a table: `1234567`, `1234567 (scaled, 50% on PMU)`,
    /// `1234567 (INST_RETIRED)` where the PMU names the event itself, or
    /// `unavailable (reason)`.
    pub fn text(&self) -> String {
        match (self.value, &self.unavailable) {
            (Some(v), _) => {
                let mut s = format!("{v:.0}");
                if let Some(p) = &self.pmu_event {
                    s.push_str(&format!(" ({p})"));
                }
                if let Some(p) = self.running_pct() {
                    s.push_str(&format!(" (scaled, {p:.0}% on PMU)"));
                }
                if self.user_only {
                    s.push_str(" (user space)");
                }
                s
            }
            (None, Some(why)) => format!("unavailable ({why})"),
            (None, None) => "unavailable".into(),
        }
    }
}

/// Figures derived from the readings; each is null when an input is
/// unavailable (the input's reading says why) or zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Instructions per cycle.
    pub ipc: Option<f64>,
    /// `cache-misses / cache-references`, percent.
    pub llc_miss_pct: Option<f64>,
    /// `node-load-misses / node-loads`, percent: the share of loads that
    /// DRAM served from a remote node.
    pub remote_load_pct: Option<f64>,
    /// `node-store-misses / node-stores`, percent.
    pub remote_store_pct: Option<f64>,
    /// True when an input was scaled for multiplexing.
    pub scaled: bool,
}

/// Bytes a socket's memory controllers moved while the result was
/// measured (uncore counters: Intel `uncore_imc_*` CAS counts, AMD
/// `amd_umc_*`), system-wide: everything on the socket is counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UncoreReading {
    /// The package (socket) id.
    pub socket: u32,
    /// The PMUs summed, e.g. `uncore_imc_0-5`.
    pub pmus: String,
    /// DRAM bytes read and written (CAS commands × 64 B).
    pub read_bytes: Option<f64>,
    pub write_bytes: Option<f64>,
    #[serde(default)]
    pub scaled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
}

/// Everything `--counters` recorded for one result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// What was counted: `command and its children`, `2 team threads`,
    /// `chase thread`.
    pub scope: String,
    /// One reading per event of [`event::HARDWARE`] and
    /// [`event::SOFTWARE`], in that order.
    pub events: Vec<Reading>,
    pub derived: Derived,
    /// Memory-controller traffic per socket, when asked and exposed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncore: Vec<UncoreReading>,
    /// Why there is no memory-controller traffic, when asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncore_unavailable: Option<String>,
}

impl Counters {
    /// Readings of `scope`, with the derived figures computed.
    pub fn new(scope: impl Into<String>, events: Vec<Reading>) -> Counters {
        let mut c = Counters {
            scope: scope.into(),
            events,
            derived: Derived::default(),
            uncore: Vec::new(),
            uncore_unavailable: None,
        };
        c.derive();
        c
    }

    /// The reading of `event`.
    pub fn get(&self, event: &str) -> Option<&Reading> {
        self.events.iter().find(|r| r.event == event)
    }

    /// The (scaled) count of `event`, when available.
    pub fn value(&self, event: &str) -> Option<f64> {
        self.get(event)?.value
    }

    /// Recomputes [`Derived`] from the readings.
    pub fn derive(&mut self) {
        let ratio = |num: &str, den: &str, pct: bool| {
            let (n, d) = (self.value(num)?, self.value(den)?);
            (d > 0.0).then(|| n / d * if pct { 100.0 } else { 1.0 })
        };
        let scaled = |names: &[&str]| {
            names.iter().any(|n| self.get(n).is_some_and(|r| r.scaled && r.value.is_some()))
        };
        use event::*;
        self.derived = Derived {
            ipc: ratio(INSTRUCTIONS, CYCLES, false),
            llc_miss_pct: ratio(CACHE_MISSES, CACHE_REFERENCES, true),
            remote_load_pct: ratio(NODE_LOAD_MISSES, NODE_LOADS, true),
            remote_store_pct: ratio(NODE_STORE_MISSES, NODE_STORES, true),
            scaled: scaled(&[
                INSTRUCTIONS,
                CYCLES,
                CACHE_MISSES,
                CACHE_REFERENCES,
                NODE_LOADS,
                NODE_LOAD_MISSES,
                NODE_STORES,
                NODE_STORE_MISSES,
            ]),
        };
    }

    /// The readings of several threads counted separately (a team), summed
    /// event by event: counts, raw counts and times add up; an event is
    /// scaled when any thread's was, and unavailable (with the first
    /// reason) when any thread's was, since a partial sum would be wrong.
    pub fn sum(scope: impl Into<String>, parts: &[Counters]) -> Counters {
        let names: Vec<String> = parts
            .first()
            .map(|p| p.events.iter().map(|r| r.event.clone()).collect())
            .unwrap_or_default();
        let events = names
            .iter()
            .map(|name| {
                let rs: Vec<&Reading> = parts.iter().filter_map(|p| p.get(name)).collect();
                let pmu = rs.iter().find_map(|r| r.pmu_event.clone());
                if let Some(bad) = rs.iter().find(|r| r.value.is_none()) {
                    return Reading::unavailable(
                        name,
                        bad.unavailable.clone().unwrap_or_else(|| "unavailable".into()),
                    )
                    .with_pmu(pmu);
                }
                if rs.len() < parts.len() {
                    return Reading::unavailable(name, "not read on every thread").with_pmu(pmu);
                }
                let add = |f: fn(&Reading) -> Option<u64>| rs.iter().map(|r| f(r)).sum();
                Reading {
                    event: name.clone(),
                    value: Some(rs.iter().filter_map(|r| r.value).sum()),
                    raw: add(|r| r.raw),
                    enabled_ns: add(|r| r.enabled_ns),
                    running_ns: add(|r| r.running_ns),
                    scaled: rs.iter().any(|r| r.scaled),
                    user_only: rs.iter().any(|r| r.user_only),
                    unavailable: None,
                    pmu_event: pmu,
                }
            })
            .collect();
        Counters::new(scope, events)
    }

    /// The median reading of each event over several runs (`exec`'s
    /// repetitions): value, raw count and times are each the median of the
    /// runs that have one; unavailable when no run has a value.
    pub fn median(parts: &[&Counters]) -> Option<Counters> {
        let first = parts.first()?;
        let events = first
            .events
            .iter()
            .map(|r0| {
                let rs: Vec<&Reading> = parts
                    .iter()
                    .filter_map(|p| p.get(&r0.event))
                    .filter(|r| r.value.is_some())
                    .collect();
                if rs.is_empty() {
                    return Reading::unavailable(
                        &r0.event,
                        r0.unavailable.clone().unwrap_or_else(|| "unavailable".into()),
                    )
                    .with_pmu(r0.pmu_event.clone());
                }
                let med = |v: Vec<f64>| crate::stats::median(&v);
                let medu = |f: fn(&Reading) -> Option<u64>| {
                    med(rs.iter().filter_map(|r| f(r)).map(|x| x as f64).collect())
                        .map(|x| x.round() as u64)
                };
                Reading {
                    event: r0.event.clone(),
                    value: med(rs.iter().filter_map(|r| r.value).collect()),
                    raw: medu(|r| r.raw),
                    enabled_ns: medu(|r| r.enabled_ns),
                    running_ns: medu(|r| r.running_ns),
                    scaled: rs.iter().any(|r| r.scaled),
                    user_only: rs.iter().any(|r| r.user_only),
                    unavailable: None,
                    pmu_event: r0.pmu_event.clone(),
                }
            })
            .collect();
        let mut c = Counters::new(first.scope.clone(), events);
        c.uncore_unavailable = first.uncore_unavailable.clone();
        Some(c)
    }

    /// DRAM bytes all sockets' memory controllers moved, read plus write,
    /// when every socket was counted.
    pub fn dram_bytes(&self) -> Option<f64> {
        if self.uncore.is_empty() {
            return None;
        }
        self.uncore.iter().map(|u| Some(u.read_bytes? + u.write_bytes?)).sum()
    }

    /// True when no hardware event could be counted.
    pub fn hardware_unavailable(&self) -> bool {
        event::HARDWARE.iter().all(|e| self.value(e).is_none())
    }

    /// The reason shared by every unavailable hardware event, when they
    /// all give the same one (for a one-line note).
    pub fn hardware_reason(&self) -> Option<String> {
        let reasons: std::collections::BTreeSet<&str> =
            event::HARDWARE.iter().filter_map(|e| self.get(e)?.unavailable.as_deref()).collect();
        (reasons.len() == 1).then(|| reasons.into_iter().next().unwrap_or_default().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(vals: &[(&str, u64, u64, u64)]) -> Counters {
        Counters::new(
            "t",
            vals.iter()
                .map(|&(e, raw, en, run)| Reading::counted(e, raw, en, run, false))
                .collect(),
        )
    }

    #[test]
    fn multiplexed_counts_are_scaled_by_enabled_over_running() {
        // counted half the time: the estimate doubles, and says so
        assert_eq!(scale(1_000, 2_000_000, 1_000_000), Some((2_000.0, true)));
        assert_eq!(scale(1_000, 2_000_000, 2_000_000), Some((1_000.0, false)));
        // running a hair over enabled (rounding in the kernel): not scaled
        assert_eq!(scale(7, 100, 101), Some((7.0, false)));
        // a third of the time
        let (v, s) = scale(300, 900, 300).unwrap();
        assert!((v - 900.0).abs() < 1e-9 && s);
        // never on the PMU: nothing can be said
        assert_eq!(scale(0, 5_000, 0), None);
        assert_eq!(scale(0, 0, 0), Some((0.0, false)));
        let r = Reading::counted(event::CYCLES, 0, 5_000, 0, false);
        assert_eq!(r.value, None);
        assert!(r.unavailable.as_deref().unwrap().contains("multiplexed out"));
        let r = Reading::counted(event::CYCLES, 1_000, 4_000, 1_000, false);
        assert_eq!(r.text(), "4000 (scaled, 25% on PMU)");
        assert_eq!(r.running_pct(), Some(25.0));
    }

    /// On aarch64 each generic hardware event carries the Arm PMU's name
    /// for what the kernel counts (the L1 data cache for the cache events);
    /// the node events and software events have none, and x86-64's
    /// readings are left as they are.
    #[test]
    fn arm_readings_carry_the_arm_pmus_event_names() {
        let named =
            |e: &str, arch: &str| Reading::counted(e, 10, 1, 1, false).named_for(arch).pmu_event;
        let want = [
            (event::CYCLES, Some("CPU_CYCLES")),
            (event::INSTRUCTIONS, Some("INST_RETIRED")),
            (event::CACHE_REFERENCES, Some("L1D_CACHE")),
            (event::CACHE_MISSES, Some("L1D_CACHE_REFILL")),
            (event::NODE_LOADS, None),
            (event::NODE_LOAD_MISSES, None),
            (event::PAGE_FAULTS, None),
        ];
        for (e, pmu) in want {
            assert_eq!(named(e, "aarch64").as_deref(), pmu, "{e}");
            assert_eq!(named(e, "x86_64"), None, "{e}");
        }
        let r = Reading::counted(event::INSTRUCTIONS, 1234, 5, 5, false).named_for("aarch64");
        assert_eq!(r.text(), "1234 (INST_RETIRED)");
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["pmu_event"], "INST_RETIRED");
        let x86 = serde_json::to_value(Reading::counted(event::CYCLES, 1, 1, 1, false)).unwrap();
        assert!(x86.get("pmu_event").is_none(), "{x86}");
        let r = Reading::unavailable(event::CYCLES, "no PMU").named_for("aarch64");
        assert_eq!(r.text(), "unavailable (no PMU)");
    }

    #[test]
    fn derived_figures_from_recorded_values() {
        use event::*;
        let c = set(&[
            (CYCLES, 2_000, 10, 10),
            (INSTRUCTIONS, 3_000, 10, 10),
            (CACHE_REFERENCES, 400, 10, 5),
            (CACHE_MISSES, 100, 10, 10),
            (NODE_LOADS, 80, 10, 10),
            (NODE_LOAD_MISSES, 20, 10, 10),
        ]);
        assert_eq!(c.derived.ipc, Some(1.5));
        // references scaled to 800: 100 / 800
        assert_eq!(c.derived.llc_miss_pct, Some(12.5));
        assert_eq!(c.derived.remote_load_pct, Some(25.0));
        assert_eq!(c.derived.remote_store_pct, None, "no store events");
        assert!(c.derived.scaled, "an input was scaled");
        // an unavailable input gives no figure, never a guess
        let mut c2 = c.clone();
        c2.events[0] = Reading::unavailable(CYCLES, "not supported by this machine's PMU");
        c2.derive();
        assert_eq!(c2.derived.ipc, None);
        assert!(!c2.hardware_unavailable());
        let none = Counters::new(
            "t",
            HARDWARE.iter().map(|e| Reading::unavailable(e, "no PMU")).collect(),
        );
        assert!(none.hardware_unavailable());
        assert_eq!(none.hardware_reason().as_deref(), Some("no PMU"));
        assert_eq!(none.events[0].text(), "unavailable (no PMU)");
    }

    #[test]
    fn threads_sum_and_runs_take_the_median() {
        use event::*;
        let a = set(&[(CYCLES, 100, 10, 5), (PAGE_FAULTS, 3, 10, 10)]);
        let b = set(&[(CYCLES, 50, 10, 10), (PAGE_FAULTS, 4, 10, 10)]);
        let s = Counters::sum("2 team threads", &[a.clone(), b.clone()]);
        assert_eq!(s.value(CYCLES), Some(250.0), "200 scaled + 50");
        assert_eq!(s.get(CYCLES).unwrap().raw, Some(150));
        assert!(s.get(CYCLES).unwrap().scaled);
        assert_eq!(s.value(PAGE_FAULTS), Some(7.0));
        // one thread could not count: the sum would be wrong, so none
        let mut c = b.clone();
        c.events[0] = Reading::unavailable(CYCLES, "busy");
        let s = Counters::sum("2", &[a.clone(), c]);
        assert_eq!(s.value(CYCLES), None);
        assert_eq!(s.get(CYCLES).unwrap().unavailable.as_deref(), Some("busy"));
        let m = Counters::median(&[&a, &b, &set(&[(CYCLES, 70, 10, 10), (PAGE_FAULTS, 9, 1, 1)])])
            .unwrap();
        assert_eq!(m.value(CYCLES), Some(70.0));
        assert_eq!(m.value(PAGE_FAULTS), Some(4.0));
        assert!(Counters::median(&[]).is_none());
    }

    #[test]
    fn dram_bytes_need_every_socket() {
        let mut c = Counters::new("t", Vec::new());
        assert_eq!(c.dram_bytes(), None);
        let u = |s, r: Option<f64>| UncoreReading {
            socket: s,
            pmus: "uncore_imc_0".into(),
            read_bytes: r,
            write_bytes: Some(10.0),
            scaled: false,
            unavailable: None,
        };
        c.uncore = vec![u(0, Some(100.0)), u(1, Some(50.0))];
        assert_eq!(c.dram_bytes(), Some(170.0));
        c.uncore[1].read_bytes = None;
        assert_eq!(c.dram_bytes(), None);
    }

    #[test]
    fn results_keep_their_counts_through_the_store_and_old_ones_read_without() {
        let stored = serde_json::json!({"array_bytes":1048576,"arrays":3,"best_gbs":10.0,
            "bytes_per_rep":3145728,"cpu_node":0,"cpus":"0-1","interrupted":false,"isa":"avx2",
            "kernel":"triad","llc_bytes":null,"max_gbs":10.0,"mean_gbs":9.0,"median_gbs":9.5,
            "median_rep_s":0.001,"mem_node":0,"mem_nodes":"0","min_gbs":8.0,"mode":"local",
            "pages":"thp","peak_fraction":null,"peak_gbs":null,"placement":{"status":"unverified",
            "check":null},"policy":"bind","reps":5,"size_rule_ok":false,"spread_pct":25.0,
            "stable":true,"stores":"nt","threads":2,"top_spread_pct":0.5,"validated":true});
        let bw = |v: &serde_json::Value| match crate::upgrade::read("bw", v).record {
            crate::Record::Bw(r) => r,
            other => panic!("not bandwidth: {other:?}"),
        };
        let mut r = bw(&stored);
        assert_eq!(r.counters, None, "a result saved before --counters");
        let c = Counters::new(
            "2 team thread(s)",
            vec![Reading::counted(event::PAGE_FAULTS, 5, 1, 1, false)],
        );
        r.counters = Some(c.clone());
        let payload = crate::Record::Bw(r).to_json();
        assert_eq!(payload["counters"]["scope"], "2 team thread(s)");
        let back = bw(&payload);
        assert_eq!(back.counters.as_ref().and_then(|c| c.value(event::PAGE_FAULTS)), Some(5.0));
        assert_eq!(back.counters, Some(c));
    }

    #[test]
    fn old_records_without_optional_fields_still_read() {
        let v = serde_json::json!({"scope": "x", "events": [{"event": "cycles", "value": null,
            "raw": null, "enabled_ns": null, "running_ns": null, "unavailable": "no PMU"}],
            "derived": {"ipc": null, "llc_miss_pct": null, "remote_load_pct": null,
            "remote_store_pct": null, "scaled": false}});
        let c: Counters = serde_json::from_value(v).unwrap();
        assert!(c.uncore.is_empty() && !c.events[0].scaled);
    }
}
