//! One statistic per figure, written the same way everywhere (glance box,
//! summary tables, section tables, brief, chart hover values): bandwidth is
//! the best repetition (GB/s), latency the median of the clean samples
//! (ns), each with the spread of its repetitions or samples ((max - min) /
//! median, %) and rounded to its noise ([`crate::fmt::fig`]). A figure
//! whose record says `stable: false` is marked `(disturbed)` (samples
//! discarded because other work kept the thread waiting) or `(noisy)`
//! (the repetitions never settled), with its cause; one that cannot be
//! true of the memory it names ([`analysis::impossible`]: above the peak,
//! below the last-level cache's latency) is marked `(impossible)` first.

use std::collections::BTreeMap;

use results::bw::BwResult;
use results::disturbance::Disturbance;
use results::lat::{LatResult, LoadedPoint};
use results::stats::measured;

use crate::fmt::fig;
use crate::subject::flagged;
use analysis::data::RunData;
use analysis::impossible::{self, Impossible};
use analysis::metrics::{best_of_mode, bw_parts, lat_parts, local_points, metrics, MetricKey};
use analysis::subject::Subject;
use analysis::trust::{self, Distrust};

/// Why a figure is not to be trusted as it stands, in words
/// ([`analysis::trust`] decides it).
#[derive(Debug, Clone, PartialEq)]
pub enum Flag {
    /// Samples or repetitions were discarded because the thread waited for
    /// its CPU; the cause names the CPU and the share of time lost.
    Disturbed(String),
    /// The repetitions never reached the spread the stopping rule wants.
    Noisy(String),
    /// Above the theoretical peak, or below the last-level cache's
    /// latency: the figure and the limit it breaks, and the likely cause.
    Impossible(String),
}

impl Flag {
    /// `disturbed` or `noisy`: the word written after the figure.
    pub fn word(&self) -> &'static str {
        match self {
            Flag::Disturbed(_) => "disturbed",
            Flag::Noisy(_) => "noisy",
            Flag::Impossible(_) => Impossible::WORD,
        }
    }

    /// The cause, one sentence without a full stop.
    pub fn cause(&self) -> &str {
        match self {
            Flag::Disturbed(c) | Flag::Noisy(c) | Flag::Impossible(c) => c,
        }
    }
}

impl From<Distrust> for Flag {
    fn from(d: Distrust) -> Flag {
        match d {
            Distrust::Disturbed(_) => Flag::Disturbed(crate::trust::cause(&d)),
            _ => Flag::Noisy(crate::trust::cause(&d)),
        }
    }
}

impl From<Impossible> for Flag {
    /// `6.7 GB/s is 6.70x the theoretical peak of 1.0 GB/s; likely cause:
    /// ...` (the line names the figure before it).
    fn from(i: Impossible) -> Flag {
        Flag::Impossible(format!("{} is {}", i.figure_text(), crate::impossible::reason(&i)))
    }
}

/// The flag of a bandwidth result: impossible above its peak
/// ([`analysis::impossible::bw`]), else as [`analysis::trust::of_bw`]
/// decides (`stable: false`).
pub fn bw_flag(p: &BwResult) -> Option<Flag> {
    impossible::bw(p).map(Flag::from).or_else(|| trust::of_bw(p).map(Flag::from))
}

/// The flag of a latency figure from its `stable`, `disturbance` and
/// spread.
pub fn lat_flag(stable: bool, d: Option<&Disturbance>, spread_pct: f64) -> Option<Flag> {
    trust::of_lat(stable, d, spread_pct).map(Flag::from)
}

/// The flag of a chase of run `d`: impossible below the last-level
/// cache's latency the run measured ([`analysis::impossible::chase`]),
/// else disturbed.
pub fn chase_flag(p: &LatResult, d: &RunData) -> Option<Flag> {
    impossible::chase(p, &impossible::llc_floor(d))
        .map(Flag::from)
        .or_else(|| trust::of_chase(p).map(Flag::from))
}

/// The flag of a loaded-latency point of run `d`.
pub fn loaded_flag(p: &LoadedPoint, d: &RunData) -> Option<Flag> {
    impossible::loaded(p, &impossible::llc_floor(d))
        .map(Flag::from)
        .or_else(|| trust::of_loaded(p).map(Flag::from))
}

/// `text` with ` (disturbed)` or ` (noisy)` when flagged.
pub fn marked(text: String, flag: Option<&Flag>) -> String {
    match flag {
        Some(f) => format!("{text} ({})", f.word()),
        None => text,
    }
}

/// A headline figure: the metric ([`analysis::metrics`]) and the results
/// it is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    pub key: MetricKey,
    pub value: f64,
    /// Robust CV %, what the figure is rounded to.
    pub noise_pct: f64,
    /// The largest spread % among its results, when they have one.
    pub spread_pct: Option<f64>,
    /// How many results it is made of.
    pub results: usize,
    /// The kernel (bandwidth) or the load (loaded latency).
    pub detail: Option<String>,
    /// Its flagged results: what each is and why.
    pub flags: Vec<(String, Flag)>,
    /// Which measurement it took and why, when the run measured its
    /// quantity more than once ([`Taken`]).
    pub taken: Option<Taken>,
}

/// Which of several measurements of one quantity a headline took, and
/// why ([`analysis::trust`]: clean before marked, then the tighter
/// spread, at equal CPU, memory, size and method).
#[derive(Debug, Clone, PartialEq)]
pub struct Taken {
    /// How many measurements of its quantities the run holds in all.
    pub measurements: usize,
    /// How many parts (nodes, node pairs) the figure is made of.
    pub parts: usize,
    /// Its parts taken from another measurement than the one that defines
    /// them: `(what, taken, instead of)`, each in words.
    pub replaced: Vec<(String, String, String)>,
    /// Where the figure comes from when nothing was replaced (`the
    /// matrix`).
    pub source: String,
}

impl Taken {
    /// One short phrase for a tile or a table cell: `from the sweep, the
    /// most trustworthy of 4`.
    pub fn short(&self) -> String {
        let from = match self.replaced.first() {
            Some((_, taken, _)) => taken.split(" (").next().unwrap_or(taken).to_string(),
            None => self.source.clone(),
        };
        if self.parts > 1 {
            format!(
                "from {from}, each of its {} parts the most trustworthy of its measurements, {} in all",
                self.parts, self.measurements
            )
        } else {
            format!("from {from}, the most trustworthy of {} measurements", self.measurements)
        }
    }

    /// What was taken in place of what: `node 0: the sweep (89.2 ns;
    /// clean, spread 0.9%) in place of the matrix (294 ns; disturbed,
    /// spread 63.7%)`; empty when nothing was replaced.
    pub fn replacements(&self) -> String {
        self.replaced
            .iter()
            .map(|(what, taken, instead)| format!("{what}: {taken} in place of {instead}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Headline {
    /// The value as every table writes it (`40`, `152.7`), no unit.
    pub fn value_text(&self) -> String {
        fig(Some(self.value), Some(self.noise_pct), self.key.unit())
    }

    /// The spread as the tables' Spread % column writes it, with
    /// `up to` when the figure is made of several results.
    pub fn spread_text(&self) -> Option<String> {
        let s = self.spread_pct?;
        let up_to = if self.results > 1 { "up to " } else { "" };
        Some(format!("spread {up_to}{}%", crate::fmt::num(s, "%")))
    }

    /// `40 GB/s (spread 137.2%, disturbed)`.
    pub fn text(&self) -> String {
        let mut notes: Vec<String> = self.spread_text().into_iter().collect();
        if let Some((_, f)) = self.flags.first() {
            notes.push(f.word().to_string());
        }
        let notes =
            if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) };
        format!("{} {}{notes}", self.value_text(), self.key.unit())
    }
}

fn spread_max(it: impl Iterator<Item = f64>) -> Option<f64> {
    it.filter_map(measured).reduce(f64::max)
}

/// A chase in words for "which it took": `the sweep (120 ns; disturbed,
/// spread 43.5%)`.
fn chase_taken_words(p: &LatResult, d: &RunData) -> String {
    let state = chase_flag(p, d).map_or("clean", |f| f.word());
    format!(
        "{} ({} ns; {state}, spread {}%)",
        crate::trust::chase_source(p.mode),
        fig(measured(p.median_ns), p.noise(), "ns"),
        crate::fmt::num(p.spread_pct, "%")
    )
}

/// A bandwidth result in words for "which it took": `the scaling point
/// (7.8 GB/s; clean, spread 3.2%)`.
fn bw_taken_words(p: &BwResult) -> String {
    let state = bw_flag(p).map_or("clean", |f| f.word());
    let what = match p.mode {
        results::bw::Mode::Local => "the local result",
        results::bw::Mode::Matrix => "the matrix",
        results::bw::Mode::Scaling => "the scaling point",
        _ => "the result",
    };
    format!(
        "{what} ({} GB/s; {state}, spread {}%)",
        fig(measured(p.best_gbs), p.noise(), "GB/s"),
        crate::fmt::num(p.spread_pct, "%")
    )
}

/// Which measurements a headline took: `None` when each of its parts was
/// measured once.
fn taken_of<T>(
    parts: &[(String, trust::Taken<'_, T>)],
    words: impl Fn(&T) -> String,
    source: impl Fn(&T) -> String,
) -> Option<Taken> {
    let measurements: usize = parts.iter().map(|(_, t)| 1 + t.others.len()).sum();
    if measurements <= parts.len() {
        return None;
    }
    let replaced = parts
        .iter()
        .filter_map(|(what, t)| Some((what.clone(), words(t.chosen), words(t.instead_of?))))
        .collect();
    Some(Taken {
        measurements,
        parts: parts.len(),
        replaced,
        source: parts.first().map(|(_, t)| source(t.chosen)).unwrap_or_default(),
    })
}

fn lat_taken(d: &RunData, key: MetricKey) -> Option<Taken> {
    let cells = analysis::metrics::lat_matrix_taken(d);
    let mut parts: Vec<(String, trust::Taken<'_, LatResult>)> = cells
        .into_iter()
        .filter(|((c, m), _)| (c == m) == (key == MetricKey::LocalLat))
        .map(|((c, m), t)| {
            let what = if c == m {
                format!("node {c}")
            } else {
                format!("CPU node {c} -> memory node {m}")
            };
            (what, t)
        })
        .collect();
    if parts.is_empty() && key == MetricKey::LocalLat {
        parts = analysis::metrics::local_lat_points_taken(d)
            .into_iter()
            .map(|t| (format!("CPU {}", t.chosen.cpu), t))
            .collect();
    }
    taken_of(
        &parts,
        |p| chase_taken_words(p, d),
        |p| crate::trust::chase_source(p.mode).to_string(),
    )
}

fn bw_taken(d: &RunData) -> Option<Taken> {
    let parts: Vec<(String, trust::Taken<'_, BwResult>)> = analysis::metrics::local_taken(d)
        .1
        .into_iter()
        .map(|t| (format!("node {}", t.chosen.cpu_node.map_or("?".into(), |n| n.to_string())), t))
        .collect();
    taken_of(&parts, bw_taken_words, |p| {
        bw_taken_words(p).split(" (").next().unwrap_or_default().to_string()
    })
}

/// The headline figures of a run, each with its spread and flags.
pub fn headlines(d: &RunData) -> BTreeMap<MetricKey, Headline> {
    let mut out = BTreeMap::new();
    for (key, m) in metrics(d) {
        let (spread_pct, flags) = match key {
            MetricKey::LocalBw
            | MetricKey::GlobalBw
            | MetricKey::InterleaveBw
            | MetricKey::CrossBw => {
                let parts = bw_parts(d, key);
                (
                    spread_max(parts.iter().map(|p| p.spread_pct)),
                    parts
                        .iter()
                        .filter_map(|p| Some((flagged(&Subject::bw(p)), bw_flag(p)?)))
                        .collect(),
                )
            }
            MetricKey::LocalLat | MetricKey::RemoteLat => {
                let parts = lat_parts(d, key);
                (
                    spread_max(parts.iter().map(|p| p.spread_pct)),
                    parts
                        .iter()
                        .filter_map(|p| Some((flagged(&Subject::chase(p)), chase_flag(p, d)?)))
                        .collect(),
                )
            }
            MetricKey::LoadedLatPeak => match analysis::metrics::peak_loaded(d) {
                Some(p) => (
                    measured(p.spread_pct),
                    loaded_flag(p, d)
                        .map(|f| (format!("lat loaded, CPU {}", p.cpu), f))
                        .into_iter()
                        .collect(),
                ),
                None => (None, Vec::new()),
            },
        };
        // An impossible figure's flag comes first: the one a headline shows.
        let mut flags = flags;
        flags.sort_by_key(|(_, f): &(String, Flag)| !matches!(f, Flag::Impossible(_)));
        let taken = match key {
            MetricKey::LocalBw => bw_taken(d),
            MetricKey::LocalLat | MetricKey::RemoteLat => lat_taken(d, key),
            _ => None,
        };
        out.insert(
            key,
            Headline {
                key,
                value: m.value,
                noise_pct: m.noise_pct,
                spread_pct,
                results: m.results,
                detail: m.detail,
                flags,
                taken,
            },
        );
    }
    out
}

/// On a machine with one CPU node, local and global bandwidth put the
/// same threads on the same memory: the sentence saying why their figures
/// differ (run-to-run noise, or another thread count), `None` when they
/// agree at the tables' rounding or one is missing.
pub fn same_placement_note(
    d: &RunData,
    h: &BTreeMap<MetricKey, Headline>,
    cpu_nodes: usize,
) -> Option<String> {
    if cpu_nodes != 1 {
        return None;
    }
    let (l, g) = (h.get(&MetricKey::LocalBw)?, h.get(&MetricKey::GlobalBw)?);
    if l.value_text() == g.value_text() {
        return None;
    }
    let lt = local_points(d).1.first().map(|p| p.threads)?;
    let gt = best_of_mode(d, results::bw::Mode::Global)?.threads;
    let (lv, gv) = (l.value_text(), g.value_text());
    if lt != gt {
        return Some(format!(
            "local ({lv} GB/s) used {lt} thread(s), global ({gv} GB/s) {gt}: on one node they differ only by the thread count"
        ));
    }
    let spreads = [l.spread_text(), g.spread_text()].into_iter().flatten().collect::<Vec<_>>();
    Some(format!(
        "on one node, local ({lv} GB/s) and global ({gv} GB/s) run the same {lt} thread(s) on the same memory: the difference is run-to-run noise{}",
        if spreads.is_empty() {
            String::new()
        } else {
            format!(" (their repetitions: {})", spreads.join(", "))
        }
    ))
}

/// One line per contradiction between figures of the run: a
/// thread-scaling point above what local bandwidth reached on the same
/// CPUs ([`analysis::trust::contradictions`]), a loaded latency below the
/// idle latency of its chase, and a latency figure outside every other
/// measurement of its quantity ([`analysis::trust::lat_contradictions`]),
/// each beyond the noise.
pub fn contradiction_lines(d: &RunData) -> Vec<String> {
    let mut out: Vec<String> = trust::contradictions(d)
        .iter()
        .map(|c| {
            let (s, l) = (c.scaling, c.local);
            let gbs = |p: &BwResult| fig(measured(p.best_gbs), p.noise(), "GB/s");
            format!(
                "bw scaling {}, {} thread(s) on CPUs {}: contradicts local: {} GB/s is {}% above the {} GB/s local {} reached with {} thread(s) on CPUs {}, beyond the {}% their best repetitions' noise allows; one of the two was held back (other work, or repetitions that only looked settled): measure again on a quiet machine.",
                s.kernel.name(),
                s.threads,
                s.cpus.to_list(),
                gbs(s),
                crate::fmt::num(c.excess_pct, "%"),
                gbs(l),
                l.kernel.name(),
                l.threads,
                l.cpus.to_list(),
                crate::fmt::num(c.allowed_pct, "%"),
            )
        })
        .collect();
    out.extend(lat_contradiction_lines(d));
    out
}

/// The latency contradictions' lines ([`contradiction_lines`]).
pub fn lat_contradiction_lines(d: &RunData) -> Vec<String> {
    let ns = |v: f64, noise: Option<f64>| fig(measured(v), noise, "ns");
    trust::lat_contradictions(d)
        .iter()
        .map(|c| match c {
            trust::LatContradiction::LoadedBelowIdle {
                loaded,
                idle_ns,
                idle_from,
                below_pct,
                allowed_pct,
            } => format!(
                "lat loaded {}, CPU {} -> memory node {}: contradicts the idle latency: {} ns under {} GB/s of load is {}% below the {} ns {} measured idle on the same CPU and memory, beyond the {}% their noise allows; a load never makes memory faster, so one of the two was held back: measure again on a quiet machine.",
                loaded.load_kind.name(),
                loaded.cpu,
                loaded.mem_node.map_or("?".into(), |n| n.to_string()),
                ns(loaded.latency().unwrap_or(f64::NAN), loaded.noise()),
                crate::fmt::num(loaded.load_gbs, "GB/s"),
                crate::fmt::num(*below_pct, "%"),
                ns(*idle_ns, None),
                crate::trust::idle_from(*idle_from),
                crate::fmt::num(*allowed_pct, "%"),
            ),
            trust::LatContradiction::Outside { figure, others, count, off_pct, allowed_pct } => {
                format!(
                    "{}: contradicts the {count} other measurements of the same CPU, memory and size: {} ns is {}% outside their {}-{} ns, beyond the {}% their noise allows; the headlines take the most trustworthy of them (clean first, then the tighter spread).",
                    flagged(&Subject::chase(figure)),
                    ns(figure.median_ns, figure.noise()),
                    crate::fmt::num(*off_pct, "%"),
                    ns(others.0, None),
                    ns(others.1, None),
                    crate::fmt::num(*allowed_pct, "%"),
                )
            }
        })
        .collect()
}

/// Why a headline takes another measurement of its quantity than the one
/// defining it, said once with the lines of [`taken_lines`].
pub const TAKEN_RULE: &str = "each headline takes the most trustworthy measurement of its quantity, at the same CPU, memory, size and method: a clean one before a marked one, then one whose spread is at most half and 5 points less";

/// One line per headline that took another measurement than the one
/// defining it (`Local latency: node 0: the sweep (...) in place of the
/// matrix (...).`), in the order of [`MetricKey::ALL`].
pub fn taken_lines(h: &BTreeMap<MetricKey, Headline>) -> Vec<String> {
    MetricKey::ALL
        .iter()
        .filter_map(|k| {
            let t = h.get(k)?.taken.as_ref().filter(|t| !t.replaced.is_empty())?;
            Some(format!("{}: {}.", k.name(), t.replacements()))
        })
        .collect()
}

/// One line per flagged result of `flags`: `what: disturbed: cause.`
pub fn flag_lines<'a>(flags: impl IntoIterator<Item = (&'a str, &'a Flag)>) -> Vec<String> {
    flags.into_iter().map(|(what, f)| format!("{what}: {}: {}.", f.word(), f.cause())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::Record;
    use serde_json::json;

    fn bw(v: serde_json::Value) -> BwResult {
        match results::upgrade::read("bw", &v).record {
            Record::Bw(b) => *b,
            r => panic!("{r:?}"),
        }
    }

    #[test]
    fn flags_say_disturbed_with_the_cause_or_noisy() {
        let quiet = bw(json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0,
            "stable": true}));
        assert_eq!(bw_flag(&quiet), None);
        let busy = bw(json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0,
            "stable": false, "disturbance": {"clean": 2, "disturbed": 9, "lost_pct": 48.2,
            "busiest_cpu": 0, "involuntary_switches": 3, "migrations": 0,
            "source": "run-delay"}}));
        let f = bw_flag(&busy).unwrap();
        assert_eq!(f.word(), "disturbed");
        assert_eq!(
            f.cause(),
            "CPU 0 was busy with other processes for 48% of the time (9 of 11 samples discarded)"
        );
        let noisy = bw(json!({"mode": "local", "kernel": "triad", "best_gbs": 40.0,
            "stable": false, "top_spread_pct": 7.5}));
        assert_eq!(bw_flag(&noisy).unwrap().word(), "noisy");
        assert_eq!(marked("40".into(), bw_flag(&noisy).as_ref()), "40 (noisy)");
    }

    /// Every likely cause an impossible figure is given, word for word.
    #[test]
    fn impossible_flags_word_every_likely_cause() {
        use results::placement::PlacementStatus;
        let over = |size_rule_ok: bool, status: PlacementStatus| {
            let mut b = bw(json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
                "mem_node": 0, "threads": 2, "best_gbs": 23.6, "peak_gbs": 1.0,
                "size_rule_ok": size_rule_ok, "array_bytes": 1u64 << 30,
                "llc_bytes": 32u64 << 20, "stable": true}));
            b.placement.status = status;
            b
        };
        let cause = |f: Option<Flag>| f.map(|f| f.cause().to_string()).unwrap_or_default();
        assert_eq!(
            cause(bw_flag(&over(true, PlacementStatus::Verified))),
            "23.6 GB/s is 23.60x the theoretical peak of 1.0 GB/s; likely cause: a wrong peak: \
             the arrays were DRAM-sized on verified pages, so the peak given (--peak-gbs) or read \
             from the DIMM table is too low (channels or MT/s)"
        );
        assert_eq!(
            cause(bw_flag(&over(false, PlacementStatus::Verified))),
            "23.6 GB/s is 23.60x the theoretical peak of 1.0 GB/s; likely cause: a cache passing \
             for DRAM: arrays of 1024 MiB are under 4x the 32 MiB last-level cache, so the cache \
             served part of the traffic"
        );
        assert_eq!(
            cause(bw_flag(&over(true, PlacementStatus::Unverified))),
            "23.6 GB/s is 23.60x the theoretical peak of 1.0 GB/s; likely cause: pages not \
             verified on the memory asked for: other nodes (or a cache) may have served part of \
             the traffic"
        );
        let chase = |size: u64, stride: u64| match results::upgrade::read(
            "lat",
            &json!({"mode": "point", "cpu": 0, "cpu_node": 0,
                "mem_node": 0, "median_ns": 4.0, "size_bytes": size, "stride_bytes": stride,
                "noise_pct": 0.5}),
        )
        .record
        {
            Record::Lat(l) => match *l {
                results::lat::Lat::Chase(c) => c,
                l => panic!("{l:?}"),
            },
            r => panic!("{r:?}"),
        };
        let none = RunData::of_records(std::iter::empty());
        assert_eq!(
            cause(chase_flag(&chase(1 << 20, 64), &none)),
            "4.0 ns is 50% of the fastest last-level cache's latency (typical figure: no sweep \
             measured) (8.0 ns); likely cause: a prefetcher passing for DRAM: a 64 B stride lets \
             the adjacent-line prefetcher serve loads (chase of 1 MiB)"
        );
        assert_eq!(
            cause(chase_flag(&chase(512 << 10, 256), &none)),
            "4.0 ns is 50% of the fastest last-level cache's latency (typical figure: no sweep \
             measured) (8.0 ns); likely cause: a cache or prefetcher passing for DRAM (chase of \
             512 KiB, 256 B stride): a DRAM figure needs a chase well past the last-level cache"
        );
        let sweep = results::upgrade::read(
            "lat-summary",
            &json!({"mode": "sweep", "cpu": 0,
            "mem_node": 0, "caches": [], "plateaus": [
                {"label": "L3", "from_bytes": 4194304, "to_bytes": 16777216, "latency_ns": 20.0,
                 "cache_bytes": 33554432, "points": 5}]}),
        )
        .record;
        let swept = RunData::of_records(std::iter::once(&sweep));
        assert_eq!(
            cause(chase_flag(&chase(1 << 30, 256), &swept)),
            "4.0 ns is 20% of the L3's own latency (the run's sweep plateau) (20.0 ns); likely \
             cause: a cache or prefetcher passing for DRAM (chase of 1024 MiB, 256 B stride), or \
             the cache's plateau misread"
        );
        assert_eq!(
            cause(chase_flag(&chase(16 << 20, 256), &swept)),
            "4.0 ns is 20% of the L3's own latency (the run's sweep plateau) (20.0 ns); likely \
             cause: a cache passing for DRAM: the chase's 16 MiB fits in the 32 MiB L3"
        );
        let point = match results::upgrade::read(
            "lat",
            &json!({"mode": "loaded", "cpu": 0,
            "mem_node": 0, "idle": false, "delay": 0, "latency_ns": 4.0, "median_ns": 4.0,
            "load_gbs": 9.5, "spread_pct": 2.0, "size_bytes": 536870912u64,
            "stride_bytes": 256, "page_size": "4k", "load_kind": "read", "stable": true}),
        )
        .record
        {
            Record::Lat(l) => match *l {
                results::lat::Lat::Loaded(p) => p,
                l => panic!("{l:?}"),
            },
            r => panic!("{r:?}"),
        };
        assert_eq!(
            cause(loaded_flag(&point, &none)),
            "4.0 ns is 50% of the fastest last-level cache's latency (typical figure: no sweep \
             measured) (8.0 ns); likely cause: a cache passing for DRAM: the chase fits in a \
             cache, or the load threads' traffic was cached"
        );
    }
}
