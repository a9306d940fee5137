//! One bandwidth figure with everything needed to trust and reproduce it
//! (the `numaprobe bw --json` record; fields are only ever added), its
//! enums, the rule that calls it noisy, and the reader of the first
//! version's shape.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use topo::{CpuSet, NodeSet};

use crate::pages::PageKind;
use kernels::{Isa, Kernel};

use crate::placement::{Placement, PlacementStatus};

/// Which experiment produced a bandwidth figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Threads and memory on one node.
    Local,
    /// One cell of the node-to-node matrix.
    Matrix,
    /// Every node's threads on their own node's memory, whole machine.
    Global,
    /// All CPUs, pages interleaved over the nodes.
    Interleave,
    /// All CPUs, weighted interleave.
    Weighted,
    /// One point of a thread-count sweep.
    Scaling,
    /// A package's CPUs all at once, on its own or another package's
    /// memory (`scope` says which).
    Package,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Local => "local",
            Mode::Matrix => "matrix",
            Mode::Global => "global",
            Mode::Interleave => "interleave",
            Mode::Weighted => "weighted",
            Mode::Scaling => "scaling",
            Mode::Package => "package",
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The memory policy the arrays were placed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArrayPolicy {
    Bind,
    /// Each thread's chunk on its own node (global).
    LocalPerThread,
    Interleave,
    WeightedInterleave,
}

impl ArrayPolicy {
    pub fn name(self) -> &'static str {
        match self {
            ArrayPolicy::Bind => "bind",
            ArrayPolicy::LocalPerThread => "local-per-thread",
            ArrayPolicy::Interleave => "interleave",
            ArrayPolicy::WeightedInterleave => "weighted-interleave",
        }
    }
}

/// How the kernel stored (`none` for kernels that only read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stores {
    /// Non-temporal (streaming) stores.
    Nt,
    Regular,
    None,
}

impl Stores {
    pub fn name(self) -> &'static str {
        match self {
            Stores::Nt => "nt",
            Stores::Regular => "regular",
            Stores::None => "none",
        }
    }
}

/// Spread (percent) of the best repetitions above which the stopping rule
/// has not settled, and of all repetitions above which a figure is noisy.
pub const NOISY_SPREAD_PCT: f64 = 5.0;

/// Whether a bandwidth figure is noisy: its best repetitions never agreed
/// within the target (`stable` false), or its repetitions overall spread
/// beyond [`NOISY_SPREAD_PCT`] even though the best ones agreed (a 118%
/// overall spread with the best three within 1% is still a busy machine).
pub fn is_noisy(stable: bool, spread_pct: f64) -> bool {
    !stable || spread_pct > NOISY_SPREAD_PCT
}

/// One kernel measured on one case (a set of CPUs against a placement).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BwResult {
    pub mode: Mode,
    #[serde(with = "kernel_name")]
    pub kernel: Kernel,
    pub threads: usize,
    /// The CPUs the workers were pinned to (cpulist).
    pub cpus: CpuSet,
    /// The node the CPUs belong to; `None` when they span nodes (global,
    /// interleave, weighted).
    pub cpu_node: Option<u32>,
    /// The one memory node the arrays were bound to; `None` when spread
    /// (see `mem_nodes`).
    pub mem_node: Option<u32>,
    /// Every memory node holding the arrays (the interleave set; each
    /// thread's own node for global).
    pub mem_nodes: NodeSet,
    pub policy: ArrayPolicy,
    /// Bytes of each array (all threads' chunks together).
    pub array_bytes: u64,
    /// Arrays the kernel touches.
    pub arrays: usize,
    /// Bytes counted per repetition (STREAM's rule, no write-allocate).
    pub bytes_per_rep: u64,
    /// Best, median, worst and highest-but-best figures, GB/s (1e9 B/s).
    pub best_gbs: f64,
    pub median_gbs: f64,
    pub min_gbs: f64,
    pub max_gbs: f64,
    /// Total bytes over total time of all timed repetitions, GB/s: the
    /// average rate, as likwid-bench reports it.
    pub mean_gbs: f64,
    /// `(max - min) / median` of the repetitions, percent.
    pub spread_pct: f64,
    /// Spread of the best `top_k` repetitions, percent: the stopping rule.
    pub top_spread_pct: f64,
    /// Whether `top_spread_pct` reached the target before the budget ran
    /// out, with repetitions whose threads were not kept waiting (see
    /// `disturbance`).
    pub stable: bool,
    /// Timed repetitions (a warm-up repetition is not counted).
    pub reps: usize,
    /// Median seconds per repetition.
    pub median_rep_s: f64,
    /// Where the pages were (the first version wrote the fraction here and
    /// the check beside it as `placement_check`; [`upgrade_v1`] reads it).
    pub placement: Placement,
    /// Instruction-set variant of the kernels.
    #[serde(with = "isa_name")]
    pub isa: Isa,
    pub stores: Stores,
    /// Page kind asked for the arrays.
    pub pages: PageKind,
    /// Last-level cache the team shares, bytes, when known.
    pub llc_bytes: Option<u64>,
    /// Whether each array is at least 4x `llc_bytes` (STREAM's rule).
    pub size_rule_ok: bool,
    /// Theoretical peak of the memory used, GB/s, when known.
    pub peak_gbs: Option<f64>,
    /// `best_gbs / peak_gbs`.
    pub peak_fraction: Option<f64>,
    /// Whether the arrays were checked after the run (always true for an
    /// emitted result: a wrong answer is an error, never a figure).
    pub validated: bool,
    /// True when Ctrl-C cut the repetitions short (`stopped` is read too).
    #[serde(alias = "stopped")]
    pub interrupted: bool,
    /// Event counts of the team over the timed repetitions (`--counters`;
    /// absent otherwise and in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<crate::counters::Counters>,
    /// Energy (RAPL package and DRAM zones) and mean core frequency over
    /// the timed repetitions, or why each is unavailable (absent in older
    /// records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::Power>,
    /// Repetitions kept and discarded because a thread of the team waited
    /// to run, and the time lost (absent in records from before the
    /// check). The figures come from the kept repetitions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<crate::disturbance::Disturbance>,
    /// Mode `package`: which package's CPUs, whose memory, which nodes
    /// and which policy (absent for every other mode and in older
    /// records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::scope::Scope>,
}

impl BwResult {
    /// See [`is_noisy`].
    pub fn noisy(&self) -> bool {
        is_noisy(self.stable, self.spread_pct)
    }

    /// Noise as a robust CV, percent, from the spread of the repetitions
    /// ([`crate::stats::noise_from_spread`]); `None` without a spread.
    pub fn noise(&self) -> Option<f64> {
        crate::stats::noise_from_spread(self.spread_pct, Some(self.reps))
    }

    /// Where the memory was: its node, else the node set, else `?`.
    pub fn memory(&self) -> String {
        match (self.mem_node, self.mem_nodes.is_empty()) {
            (Some(n), _) => n.to_string(),
            (None, false) => self.mem_nodes.to_string(),
            (None, true) => "?".into(),
        }
    }

    /// Bytes the kernel counted over the timed repetitions (STREAM's rule),
    /// to set beside measured DRAM bytes.
    pub fn counted_bytes(&self) -> f64 {
        self.bytes_per_rep as f64 * self.reps as f64
    }

    /// Unstable because its threads were kept waiting: repetitions were
    /// discarded (`disturbance`) and the figure is not stable.
    pub fn disturbed(&self) -> bool {
        !self.stable && self.disturbance.as_ref().is_some_and(|d| d.disturbed > 0)
    }

    /// Share of sampled pages on the intended nodes (0 when unchecked).
    pub fn placement_fraction(&self) -> f64 {
        self.placement.fraction().unwrap_or(0.0)
    }

    /// The figure against its theoretical peak: `None` without a peak
    /// (or a peak of 0). A best figure above the peak is impossible, and
    /// says which side to doubt: arrays smaller than 4x the LLC or pages
    /// not verified on the memory asked for can let caches or other nodes
    /// serve part of the traffic (the figure is suspect); DRAM-sized arrays
    /// on verified pages point at the peak (too few channels or too low a
    /// speed given, or the DIMM table misread).
    pub fn peak_check(&self) -> Option<PeakCheck> {
        let peak = self.peak_gbs.filter(|p| p.is_finite() && *p > 0.0)?;
        let fraction = self.best_gbs / peak;
        let over = (fraction > 1.0).then(|| {
            if !self.size_rule_ok || self.placement.status != PlacementStatus::Verified {
                Suspect::Figure
            } else {
                Suspect::Peak
            }
        });
        Some(PeakCheck { peak_gbs: peak, fraction, over })
    }
}

/// A bandwidth figure set against its theoretical peak
/// ([`BwResult::peak_check`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakCheck {
    pub peak_gbs: f64,
    /// best / peak.
    pub fraction: f64,
    /// Set when the figure is above the peak: which of the two is wrong.
    pub over: Option<Suspect>,
}

/// Which side of an impossible figure-above-peak is to be doubted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspect {
    /// The figure: its arrays fit in a cache, or its pages were not
    /// verified where asked, so more than DRAM may have served it.
    Figure,
    /// The peak: the figure is DRAM-sized on verified pages.
    Peak,
}

/// Rewrites a first-version `bw` payload in place into today's shape: the
/// fraction in `placement` and the check in `placement_check` become one
/// `placement: {status, check}` object. Other payloads are left alone.
pub fn upgrade_v1(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else { return };
    if !obj.get("placement").is_some_and(Value::is_number) {
        return;
    }
    let check = obj.remove("placement_check").unwrap_or(Value::Null);
    let ok = check.get("ok").and_then(Value::as_bool).unwrap_or(false);
    let status = if check.is_null() {
        PlacementStatus::Unverified
    } else if ok {
        PlacementStatus::Verified
    } else {
        PlacementStatus::Mismatch
    };
    let status = serde_json::to_value(status).unwrap_or(Value::Null);
    obj.insert("placement".into(), serde_json::json!({ "status": status, "check": check }));
}

/// `kernel` as [`Kernel::name`] writes it.
mod kernel_name {
    use super::*;

    pub fn serialize<S: Serializer>(k: &Kernel, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Kernel, D::Error> {
        let s = String::deserialize(d)?;
        Kernel::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown kernel {s:?}")))
    }
}

/// `isa` as [`Isa::name`] writes it.
mod isa_name {
    use super::*;

    pub fn serialize<S: Serializer>(i: &Isa, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(i.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Isa, D::Error> {
        let s = String::deserialize(d)?;
        Isa::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown ISA {s:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noisy_on_the_overall_spread_too() {
        // the best three agreed (stable) but the repetitions spread 118%
        assert!(is_noisy(true, 118.0));
        assert!(!is_noisy(true, NOISY_SPREAD_PCT));
        assert!(is_noisy(false, 0.5));
        assert!(!is_noisy(true, 0.5));
    }

    #[test]
    fn a_v1_placement_becomes_one_object() {
        let mut v = serde_json::json!({"placement": 0.5, "placement_check": {"fraction": 0.5, "ok": false}});
        upgrade_v1(&mut v);
        assert_eq!(v["placement"]["status"], "mismatch");
        assert_eq!(v["placement"]["check"]["fraction"], 0.5);
        assert!(v.get("placement_check").is_none());
        let mut today = v.clone();
        upgrade_v1(&mut today);
        assert_eq!(today, v);
    }

    fn with_peak(best: f64, peak: Option<f64>, size_rule_ok: bool, verified: bool) -> BwResult {
        let v = serde_json::json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": 8, "best_gbs": best, "min_gbs": best, "max_gbs": best,
            "spread_pct": 1.0, "reps": 10, "peak_gbs": peak, "size_rule_ok": size_rule_ok});
        match crate::upgrade::read("bw", &v).record {
            crate::Record::Bw(mut b) => {
                b.placement.status =
                    if verified { PlacementStatus::Verified } else { PlacementStatus::Unverified };
                *b
            }
            r => panic!("not a bw record: {r:?}"),
        }
    }

    #[test]
    fn a_figure_above_its_peak_is_impossible_and_names_the_suspect() {
        // 70% of the peak: no flag
        let c = with_peak(70.0, Some(100.0), true, true).peak_check().unwrap();
        assert_eq!((c.fraction, c.over), (0.7, None));
        // exactly the peak is possible
        assert_eq!(with_peak(100.0, Some(100.0), true, true).peak_check().unwrap().over, None);
        // 287% with DRAM-sized arrays on verified pages: the peak is wrong
        let c = with_peak(287.0, Some(100.0), true, true).peak_check().unwrap();
        assert_eq!(c.over, Some(Suspect::Peak));
        // arrays that fit a cache, or pages not checked: the figure is
        for (size_ok, verified) in [(false, true), (true, false)] {
            let c = with_peak(287.0, Some(100.0), size_ok, verified).peak_check().unwrap();
            assert_eq!(c.over, Some(Suspect::Figure), "{size_ok} {verified}");
        }
        // no peak, or a zero / non-finite one: nothing to compare with
        for p in [None, Some(0.0), Some(f64::NAN), Some(-5.0)] {
            assert_eq!(with_peak(50.0, p, true, true).peak_check(), None, "{p:?}");
        }
    }

    #[test]
    fn enums_keep_the_first_versions_names() {
        let name = |v: serde_json::Result<String>| v.unwrap();
        assert_eq!(name(serde_json::to_string(&Mode::Weighted)), "\"weighted\"");
        assert_eq!(
            name(serde_json::to_string(&ArrayPolicy::LocalPerThread)),
            "\"local-per-thread\""
        );
        assert_eq!(name(serde_json::to_string(&PageKind::NoThp)), "\"nothp\"");
        assert_eq!(name(serde_json::to_string(&Stores::Nt)), "\"nt\"");
    }
}
