//! Latency records: one chase (point, matrix cell, sweep point, per-CPU
//! point), a loaded-latency step, a core-to-core pair, and the summaries of
//! a sweep (plateaus), of a per-CPU measurement (latency groups), of a
//! loaded curve (its knee) and of the prefetch check; the method caption
//! and the knee rule every reader shares. Times are ns per dependent load.

use serde::{Deserialize, Serialize};
use topo::{CpuSet, NodeSet};

use crate::disturbance::Disturbance;
use crate::hist::Histogram;
use crate::placement::Placement;

/// Which experiment produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    Point,
    Matrix,
    Sweep,
    PerCpu,
    /// One CPU's point of a per-CPU sweep (`lat --per-cpu --sweep`): the
    /// working-set sweep repeated from each of several CPUs.
    PerCpuSweep,
    Loaded,
    C2c,
    /// Stride 64 B against the default stride: what the spatial
    /// prefetchers do to a chase.
    PrefetchCheck,
    /// A chase from one CPU of a package through memory interleaved over
    /// its own package's nodes or another package's (`scope` says which).
    Package,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Point => "point",
            Mode::Matrix => "matrix",
            Mode::Sweep => "sweep",
            Mode::PerCpu => "per-cpu",
            Mode::PerCpuSweep => "per-cpu-sweep",
            Mode::Loaded => "loaded",
            Mode::C2c => "c2c",
            Mode::PrefetchCheck => "prefetch-check",
            Mode::Package => "package",
        }
    }
}

/// One measured chase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatResult {
    pub mode: Mode,
    pub size_bytes: u64,
    pub cpu: u32,
    pub cpu_node: Option<u32>,
    pub mem_node: Option<u32>,
    pub median_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// `(max - min) / median` of the samples, percent.
    pub spread_pct: f64,
    /// Robust coefficient of variation of the samples, percent.
    pub noise_pct: f64,
    pub samples: usize,
    pub loads_per_sample: u64,
    pub stride_bytes: usize,
    pub tlb_group_bytes: u64,
    /// Page kind obtained: `4k`, `thp`, `thp-partial (N%)`, `2m`, `1g`.
    pub page_size: String,
    pub placement: Placement,
    /// Event counts of the chase thread over the timed samples
    /// (`--counters`; absent otherwise and in older records). Boxed: most
    /// results have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<Box<crate::counters::Counters>>,
    /// Per-value latencies (each value: `loads_per_value` loads timed
    /// together), log buckets; absent in results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
    /// False when the samples were disturbed (see [`Disturbance::stable`]);
    /// records from before the check read as true.
    #[serde(default = "crate::disturbance::unchecked_is_stable")]
    pub stable: bool,
    /// Samples kept and discarded, time lost to other work (absent in
    /// records from before the check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
    /// Loads of the shortest kept sample, when disturbed samples made the
    /// later ones shorter (`loads_per_sample` is the planned length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_loads_per_sample: Option<u64>,
    /// The nodes the chased memory was interleaved over (`MPOL_INTERLEAVE`
    /// before first touch: `run`'s interleaved latency; `mem_node` is then
    /// absent). Absent for memory on one node and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<NodeSet>,
    /// Mode `package`: the package of the chasing CPU, whose memory, which
    /// nodes and which policy (absent for every other mode and in older
    /// records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<crate::scope::Scope>,
}

impl LatResult {
    /// The noise of the samples as a robust CV, percent, when recorded.
    pub fn noise(&self) -> Option<f64> {
        crate::stats::measured(self.noise_pct).map(f64::abs)
    }
}

impl LoadedPoint {
    /// The chase's latency under this load: `latency_ns`, else the median.
    pub fn latency(&self) -> Option<f64> {
        crate::stats::measured(self.latency_ns).or(crate::stats::measured(self.median_ns))
    }

    /// Noise from the spread of the chase's samples, percent.
    pub fn noise(&self) -> Option<f64> {
        crate::stats::noise_from_spread(self.spread_pct, None)
    }
}

impl C2cResult {
    /// Noise from the spread of the samples, percent.
    pub fn noise(&self) -> Option<f64> {
        crate::stats::noise_from_spread(self.spread_pct, Some(self.samples))
    }
}

impl PerCpuSummary {
    /// The group holding `cpu` (its index), if any.
    pub fn group_of(&self, cpu: u32) -> Option<usize> {
        self.groups.iter().position(|g| g.cpus.contains(cpu))
    }

    /// "CPUs 0-15 at 80.0 ns, CPUs 16-31 at 131.0 ns".
    pub fn groups_text(&self) -> String {
        self.groups
            .iter()
            .map(|g| match crate::stats::measured(g.median_ns) {
                Some(ns) => format!("CPUs {} at {ns:.1} ns", g.cpus),
                None => format!("CPUs {}", g.cpus),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The method of a chase in words, for table and report captions:
/// `random chase, stride 256 B, 64-page TLB groups (256 KiB), 4k pages`.
pub fn method_caption(stride_bytes: u64, tlb_group_bytes: Option<u64>, page: &str) -> String {
    let group = match tlb_group_bytes {
        Some(g) if g > 0 => {
            let pages = g / 4096;
            format!(", {pages}-page TLB groups ({} KiB)", g >> 10)
        }
        _ => String::new(),
    };
    let note = if stride_bytes <= 64 { " (cache-assisted: adjacent-line prefetch)" } else { "" };
    format!("random chase, stride {stride_bytes} B{note}{group}, {page} pages")
}

/// Traffic mix of the load threads (read:write in cache lines, as MLC's
/// loaded-latency traffic types). A write with ordinary stores first reads
/// the line (read for ownership), so a read-modify-write line is one read
/// and one write: `1:1` writes every line back, `2:1` every second, `3:1`
/// every third; `nt-write` writes whole lines with non-temporal stores (no
/// read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LoadKind {
    /// Read one word per line: 64 B of traffic per line.
    #[serde(rename = "read")]
    Read,
    /// Two lines read, the third read and written back: 3 reads : 1 write.
    #[serde(rename = "3:1")]
    R3W1,
    /// One line read, the next read and written back: 2 reads : 1 write.
    #[serde(rename = "2:1")]
    R2W1,
    /// Every line read and written back dirty: 128 B of traffic per line
    /// (the first version called it `rw`).
    #[serde(rename = "1:1", alias = "rw")]
    Rw,
    /// Whole lines written with non-temporal stores: 64 B per line, no
    /// read.
    #[serde(rename = "nt-write")]
    NtWrite,
}

impl LoadKind {
    /// Every mix, lightest reader first.
    pub const ALL: [LoadKind; 5] =
        [LoadKind::Read, LoadKind::R3W1, LoadKind::R2W1, LoadKind::Rw, LoadKind::NtWrite];

    pub fn name(self) -> &'static str {
        match self {
            LoadKind::Read => "read",
            LoadKind::R3W1 => "3:1",
            LoadKind::R2W1 => "2:1",
            LoadKind::Rw => "1:1",
            LoadKind::NtWrite => "nt-write",
        }
    }

    /// Parses [`LoadKind::name`] (and `rw`, `read-only`, `nt`).
    pub fn parse(s: &str) -> Option<LoadKind> {
        match s.trim().to_ascii_lowercase().as_str() {
            "read" | "read-only" | "r" => Some(LoadKind::Read),
            "3:1" => Some(LoadKind::R3W1),
            "2:1" => Some(LoadKind::R2W1),
            "1:1" | "rw" => Some(LoadKind::Rw),
            "nt-write" | "nt" | "ntw" => Some(LoadKind::NtWrite),
            _ => None,
        }
    }

    /// Words saying what one line costs, for captions.
    pub fn describe(self) -> &'static str {
        match self {
            LoadKind::Read => "read-only (64 B per line)",
            LoadKind::R3W1 => "3:1 read:write (2 lines read, 1 read and written back)",
            LoadKind::R2W1 => "2:1 read:write (1 line read, 1 read and written back)",
            LoadKind::Rw => "1:1 read:write (every line read and written back)",
            LoadKind::NtWrite => "non-temporal writes (64 B per line, no read)",
        }
    }

    /// The repeating pattern of line operations of the mix.
    pub fn pattern(self) -> &'static [LineOp] {
        match self {
            LoadKind::Read => &[LineOp::Read],
            LoadKind::R3W1 => &[LineOp::Read, LineOp::Read, LineOp::Modify],
            LoadKind::R2W1 => &[LineOp::Read, LineOp::Modify],
            LoadKind::Rw => &[LineOp::Modify],
            LoadKind::NtWrite => &[LineOp::NtWrite],
        }
    }

    /// Bytes (read, written) that moving `lines` lines of this mix costs
    /// at the memory, 64 B lines.
    pub fn bytes_of(self, lines: u64) -> (f64, f64) {
        let pat = self.pattern();
        let (mut r, mut w) = (0.0, 0.0);
        for op in pat {
            match op {
                LineOp::Read => r += 64.0,
                LineOp::Modify => {
                    r += 64.0;
                    w += 64.0
                }
                LineOp::NtWrite => w += 64.0,
            }
        }
        let per = lines as f64 / pat.len() as f64;
        (r * per, w * per)
    }
}

/// What a load thread does to one cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOp {
    /// Load one word.
    Read,
    /// Load one word and store it back changed (the line goes back dirty).
    Modify,
    /// Store the whole line with non-temporal stores.
    NtWrite,
}

/// One delay step of loaded latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedPoint {
    pub mode: Mode,
    /// Spin iterations each load thread waits after each cache line
    /// (`delay_ns` converted with the calibrated cost of one iteration).
    pub delay: u64,
    /// The wait after each line in ns, as asked; `None` for the idle point
    /// (load threads paused) and in results before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ns: Option<f64>,
    /// The load threads were paused: the curve's no-load point.
    #[serde(default)]
    pub idle: bool,
    /// Median chase latency under this load, ns.
    pub latency_ns: f64,
    pub median_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub spread_pct: f64,
    /// Bandwidth of the load threads while the chase ran, GB/s (1e9 B/s).
    pub load_gbs: f64,
    /// Its read and write parts, GB/s (absent before they were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_gbs: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_gbs: Option<f64>,
    pub load_threads: usize,
    /// The traffic mix (`read`, `3:1`, `2:1`, `1:1`, `nt-write`; the first
    /// version's `rw` reads as `1:1`).
    pub load_kind: LoadKind,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub size_bytes: u64,
    pub page_size: String,
    /// The chase buffer's placement.
    pub placement: Placement,
    /// The load threads' buffers' placement (the worst of them), checked
    /// like the chase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_placement: Option<Placement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride_bytes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlb_group_bytes: Option<u64>,
    /// False when the chase's samples were disturbed (records from before
    /// the check read as true).
    #[serde(default = "crate::disturbance::unchecked_is_stable")]
    pub stable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
    /// Energy, mean power and mean core frequency of the chasing and load
    /// CPUs over the point's timed samples, or why each is unavailable
    /// (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Box<crate::power::Power>>,
}

/// Latency over idle above which a loaded curve has passed its knee, %.
pub const KNEE_PCT: f64 = 20.0;

/// Where a loaded-latency curve bends: the bandwidth at which latency
/// first exceeds idle by [`KNEE_PCT`], and the usable bandwidth before it
/// doubles.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Latency with no load (the idle point, else the lightest load), ns.
    pub idle_ns: f64,
    /// The threshold used, % over idle.
    pub knee_pct: f64,
    /// Bandwidth where latency crosses idle x (1 + knee_pct/100), GB/s,
    /// interpolated between the two points around it; `None` when it
    /// never does.
    pub knee_gbs: Option<f64>,
    /// Usable bandwidth before latency doubles: where latency crosses
    /// 2 x idle (interpolated), else the highest bandwidth measured.
    pub usable_gbs: f64,
    /// Whether latency reached 2 x idle at all.
    pub doubled: bool,
    /// Highest bandwidth measured, GB/s.
    pub peak_gbs: f64,
    /// Latency at the highest bandwidth, ns.
    pub peak_ns: f64,
}

/// Finds the knee of a curve given as `(GB/s, latency ns)` in the order
/// measured, from no load to full load; `idle_ns` is the no-load latency
/// (`None`: the first point's). A limit is crossed where the curve goes
/// above it for good: the last step from at-or-below to above, so a noise
/// spike at light load that comes back down is not taken, and a curve that
/// folds back at overload (latency up, bandwidth down) is judged where it
/// rose. The crossing is interpolated between the two points around it.
/// `None` for an empty curve.
pub fn knee(points: &[(f64, f64)], idle_ns: Option<f64>) -> Option<Knee> {
    let pts: Vec<(f64, f64)> =
        points.iter().copied().filter(|(g, l)| g.is_finite() && l.is_finite()).collect();
    let idle = idle_ns.or_else(|| pts.first().map(|p| p.1))?;
    if pts.is_empty() || idle <= 0.0 {
        return None;
    }
    let crossing = |limit: f64| -> Option<f64> {
        if pts.last()?.1 <= limit {
            return None;
        }
        // the first point of the final run above the limit
        let i = pts.iter().rposition(|p| p.1 <= limit).map_or(0, |j| j + 1);
        let (g, l) = pts[i];
        Some(match i.checked_sub(1).map(|j| pts[j]) {
            Some((pg, pl)) if l > pl => pg + (g - pg) * (limit - pl) / (l - pl),
            Some((pg, _)) => pg,
            None => g,
        })
    };
    let (peak_gbs, peak_ns) =
        pts.iter().copied().fold((f64::MIN, 0.0), |a, p| if p.0 > a.0 { p } else { a });
    let knee_gbs = crossing(idle * (1.0 + KNEE_PCT / 100.0));
    let double = crossing(2.0 * idle);
    Some(Knee {
        idle_ns: idle,
        knee_pct: KNEE_PCT,
        knee_gbs,
        usable_gbs: double.unwrap_or(peak_gbs),
        doubled: double.is_some(),
        peak_gbs,
        peak_ns,
    })
}

impl Knee {
    /// What the curve shows, in one sentence: the knee and the usable
    /// bandwidth, or plainly that the load never reached a knee (a small
    /// machine, or too few load threads, cannot saturate memory).
    pub fn verdict(&self) -> String {
        let rise = (self.peak_ns / self.idle_ns - 1.0) * 100.0;
        let rose = if rise >= 0.0 {
            format!("latency rose {rise:.0}% at {:.2} GB/s", self.peak_gbs)
        } else {
            format!("latency did not rise ({rise:.0}% at {:.2} GB/s)", self.peak_gbs)
        };
        match self.knee_gbs {
            None => format!(
                "no knee within the load this machine could generate: {rose} (the knee is +{:.0}% \
                 over idle {:.1} ns); more load threads, or a bigger machine, are needed to find it",
                self.knee_pct, self.idle_ns
            ),
            Some(k) if self.doubled => format!(
                "knee (+{:.0}% over idle {:.1} ns) at {k:.2} GB/s; latency doubles at {:.2} GB/s",
                self.knee_pct, self.idle_ns, self.usable_gbs
            ),
            Some(k) => format!(
                "knee (+{:.0}% over idle {:.1} ns) at {k:.2} GB/s; latency never doubled: rose \
                 {rise:.0}% at {:.2} GB/s, the most this machine could generate",
                self.knee_pct, self.idle_ns, self.peak_gbs
            ),
        }
    }
}

/// The summary of one loaded curve (kind `lat-summary`, mode `loaded`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedSummary {
    pub mode: Mode,
    pub load_kind: LoadKind,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub load_threads: usize,
    pub points: usize,
    #[serde(flatten)]
    pub knee: Knee,
}

/// The prefetch check (kind `lat-summary`, mode `prefetch-check`): the
/// same memory chased with a 64 B stride and with the default stride.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefetchCheck {
    pub mode: Mode,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub size_bytes: u64,
    pub page_size: String,
    /// Median with the 64 B stride (neighbouring lines in the ring), ns.
    pub line_ns: f64,
    /// Median with the default stride, ns.
    pub stride_ns: f64,
    pub stride_bytes: usize,
    /// Noise of the difference (robust SDs of both, combined), ns.
    pub noise_ns: f64,
    /// How much shorter the 64 B chase is: `(stride - line) / stride`, %.
    pub shortened_pct: f64,
    /// The difference is larger than the noise (3 x noise and 3%).
    pub significant: bool,
    /// The sentence for tables and reports.
    pub note: String,
    /// False when either chase was disturbed: then `significant` is false
    /// and the note says why (records from before the check read as true).
    #[serde(default = "crate::disturbance::unchecked_is_stable")]
    pub stable: bool,
    /// Both chases' samples together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
}

impl PrefetchCheck {
    /// Judges two medians with their robust SDs (ns).
    #[allow(clippy::too_many_arguments)]
    pub fn judge(
        cpu: u32,
        mem_node: Option<u32>,
        size_bytes: u64,
        page_size: String,
        stride_bytes: usize,
        (line_ns, line_sd): (f64, f64),
        (stride_ns, stride_sd): (f64, f64),
    ) -> PrefetchCheck {
        let noise_ns = (line_sd * line_sd + stride_sd * stride_sd).sqrt();
        let diff = stride_ns - line_ns;
        let shortened_pct = if stride_ns > 0.0 { diff / stride_ns * 100.0 } else { 0.0 };
        let significant = diff.abs() > 3.0 * noise_ns && shortened_pct.abs() >= 3.0;
        let note = if significant && diff > 0.0 {
            format!(
                "the CPU's spatial prefetchers shorten sequential-neighbour loads by {shortened_pct:.0}% \
                 ({line_ns:.1} ns at stride 64 B vs {stride_ns:.1} ns at {stride_bytes} B): \
                 the DRAM figure is the {stride_bytes} B one; prefetcher BIOS settings change the 64 B one"
            )
        } else if significant {
            format!(
                "stride 64 B is slower than {stride_bytes} B by {:.0}% ({line_ns:.1} vs {stride_ns:.1} ns)",
                -shortened_pct
            )
        } else if noise_ns > 0.05 * stride_ns {
            format!(
                "undecided: the noise ({noise_ns:.1} ns) is too large to tell ({line_ns:.1} ns at 64 B \
                 vs {stride_ns:.1} ns at {stride_bytes} B); measure on a quieter machine"
            )
        } else {
            format!(
                "no prefetch effect above the noise ({line_ns:.1} ns at 64 B vs {stride_ns:.1} ns at \
                 {stride_bytes} B, noise {noise_ns:.1} ns): adjacent-line prefetch off or ineffective"
            )
        };
        PrefetchCheck {
            mode: Mode::PrefetchCheck,
            cpu,
            mem_node,
            size_bytes,
            page_size,
            line_ns,
            stride_ns,
            stride_bytes,
            noise_ns,
            shortened_pct,
            significant,
            note,
            stable: true,
            disturbance: None,
        }
    }

    /// Attaches the disturbance of both chases; an unstable check decides
    /// nothing (`significant` false) and its note says why.
    pub fn with_disturbance(mut self, d: Disturbance, stable: bool) -> PrefetchCheck {
        if !stable {
            self.significant = false;
            self.note = format!(
                "undecided: the measurement was disturbed: {}; measure on a quieter machine \
                 ({:.1} ns at 64 B vs {:.1} ns at {} B)",
                d.cause(),
                self.line_ns,
                self.stride_ns,
                self.stride_bytes
            );
        }
        self.stable = stable;
        self.disturbance = Some(d);
        self
    }
}

/// How two CPUs relate in the topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// SMT siblings of one core.
    Smt,
    /// Different cores of one NUMA node.
    Node,
    /// Different nodes of one package.
    Package,
    /// Different packages.
    CrossPackage,
}

impl Relation {
    pub fn name(self) -> &'static str {
        match self {
            Relation::Smt => "smt",
            Relation::Node => "node",
            Relation::Package => "package",
            Relation::CrossPackage => "cross-package",
        }
    }
}

/// One pair's core-to-core latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct C2cResult {
    pub mode: Mode,
    pub cpu_a: u32,
    pub cpu_b: u32,
    pub relation: Option<Relation>,
    /// One-way latency (half a round trip), ns.
    pub median_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub spread_pct: f64,
    pub samples: usize,
    pub round_trips_per_sample: u64,
    /// False when the samples were disturbed (either thread of the pair
    /// counts; records from before the check read as true).
    #[serde(default = "crate::disturbance::unchecked_is_stable")]
    pub stable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disturbance: Option<Disturbance>,
}

/// One flat stretch of a sweep's curve.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plateau {
    /// `L1`, `L2`, `L3`... or `DRAM`.
    pub label: String,
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// Median over the plateau's points of the latency given (the sweep
    /// gives each point's fastest sample, `min_ns`).
    pub latency_ns: f64,
    /// Size of the cache level the label names, as the topology reports.
    pub cache_bytes: Option<u64>,
    /// Sweep points on the plateau.
    pub points: usize,
}

/// A data cache of the measuring CPU, marked on a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheMark {
    pub level: u8,
    pub size_bytes: u64,
}

/// CPUs grouped by latency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuGroup {
    pub cpus: CpuSet,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    /// Nodes the OS puts these CPUs in.
    pub os_nodes: NodeSet,
}

/// The summary of a sweep (kind `lat-summary`, mode `sweep`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    pub mode: Mode,
    pub cpu: u32,
    pub mem_node: Option<u32>,
    pub caches: Vec<CacheMark>,
    pub plateaus: Vec<Plateau>,
}

/// The summary of a per-CPU measurement (kind `lat-summary`, mode
/// `per-cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuSummary {
    pub mode: Mode,
    pub mem_node: Option<u32>,
    pub groups: Vec<CpuGroup>,
    /// The OS shows one node but CPUs form separated latency groups.
    pub hidden_numa: bool,
    pub note: Option<String>,
}

/// The plateaus one CPU's curve reached in a per-CPU sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuPlateaus {
    pub cpu: u32,
    pub cpu_node: Option<u32>,
    pub plateaus: Vec<Plateau>,
}

/// The CPUs of a per-CPU sweep grouped by their latency at one size (the
/// grouping of the plain `--per-cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeGroups {
    pub size_bytes: u64,
    pub stride_bytes: usize,
    pub groups: Vec<CpuGroup>,
    /// Noise the grouping allowed: median robust standard deviation, ns.
    pub noise_ns: f64,
}

/// The summary of a per-CPU sweep (kind `lat-summary`, mode
/// `per-cpu-sweep`): each CPU's plateaus and the CPU groups at each size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerCpuSweepSummary {
    pub mode: Mode,
    pub mem_node: Option<u32>,
    /// Data caches of the first CPU measured.
    #[serde(default)]
    pub caches: Vec<CacheMark>,
    #[serde(default)]
    pub plateaus: Vec<CpuPlateaus>,
    #[serde(default)]
    pub groups_by_size: Vec<SizeGroups>,
    /// The size the DRAM groups come from (largest past the LLC), if any.
    #[serde(default)]
    pub dram_size_bytes: Option<u64>,
    #[serde(default)]
    pub note: Option<String>,
}

/// A result of kind `lat`: its shape follows its mode (`loaded`, `c2c`,
/// else one chase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[serde(try_from = "serde_json::Value")]
pub enum Lat {
    Chase(LatResult),
    Loaded(LoadedPoint),
    C2c(C2cResult),
}

/// A result of kind `lat-summary`, by mode (`sweep`, `per-cpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[serde(try_from = "serde_json::Value")]
pub enum LatSummary {
    Sweep(SweepSummary),
    PerCpu(PerCpuSummary),
    PerCpuSweep(PerCpuSweepSummary),
    Loaded(LoadedSummary),
    PrefetchCheck(PrefetchCheck),
}

/// The `mode` of a record.
fn mode_of(v: &serde_json::Value) -> Result<Mode, serde_json::Error> {
    Mode::deserialize(v.get("mode").unwrap_or(&serde_json::Value::Null))
}

// Dispatch on `mode` rather than trying each shape: serde's untagged
// buffering cannot read the integer keys of `placement.check.per_node`.
impl TryFrom<&serde_json::Value> for Lat {
    type Error = serde_json::Error;

    fn try_from(v: &serde_json::Value) -> Result<Self, Self::Error> {
        Ok(match mode_of(v)? {
            Mode::Loaded => Lat::Loaded(LoadedPoint::deserialize(v)?),
            Mode::C2c => Lat::C2c(C2cResult::deserialize(v)?),
            _ => Lat::Chase(LatResult::deserialize(v)?),
        })
    }
}

impl TryFrom<serde_json::Value> for Lat {
    type Error = serde_json::Error;

    fn try_from(v: serde_json::Value) -> Result<Self, Self::Error> {
        Lat::try_from(&v)
    }
}

impl TryFrom<&serde_json::Value> for LatSummary {
    type Error = serde_json::Error;

    fn try_from(v: &serde_json::Value) -> Result<Self, Self::Error> {
        match mode_of(v)? {
            Mode::Sweep => Ok(LatSummary::Sweep(SweepSummary::deserialize(v)?)),
            Mode::PerCpu => Ok(LatSummary::PerCpu(PerCpuSummary::deserialize(v)?)),
            Mode::PerCpuSweep => Ok(LatSummary::PerCpuSweep(PerCpuSweepSummary::deserialize(v)?)),
            Mode::Loaded => Ok(LatSummary::Loaded(LoadedSummary::deserialize(v)?)),
            Mode::PrefetchCheck => Ok(LatSummary::PrefetchCheck(PrefetchCheck::deserialize(v)?)),
            m => Err(serde::de::Error::custom(format!("no lat-summary of mode {}", m.name()))),
        }
    }
}

impl TryFrom<serde_json::Value> for LatSummary {
    type Error = serde_json::Error;

    fn try_from(v: serde_json::Value) -> Result<Self, Self::Error> {
        LatSummary::try_from(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_is_where_latency_first_passes_the_threshold_interpolated() {
        // idle 100 ns; 20% over idle (120) is crossed between 10 and 20 GB/s
        let pts = [(0.0, 100.0), (10.0, 110.0), (20.0, 130.0), (30.0, 180.0), (35.0, 260.0)];
        let k = knee(&pts, Some(100.0)).unwrap();
        assert_eq!(k.knee_pct, KNEE_PCT);
        assert!((k.knee_gbs.unwrap() - 15.0).abs() < 1e-9, "{k:?}");
        // 2 x idle = 200 between 30 (180) and 35 (260): 30 + 5 * 20/80
        assert!(k.doubled);
        assert!((k.usable_gbs - 31.25).abs() < 1e-9, "{k:?}");
        assert_eq!((k.peak_gbs, k.peak_ns), (35.0, 260.0));
    }

    #[test]
    fn a_flat_curve_has_no_knee_and_all_its_bandwidth_is_usable() {
        let pts = [(0.0, 100.0), (10.0, 101.0), (20.0, 105.0)];
        let k = knee(&pts, None).unwrap();
        assert_eq!(k.knee_gbs, None);
        assert!(!k.doubled);
        assert_eq!(k.usable_gbs, 20.0);
        assert_eq!(knee(&[], None), None);
    }

    #[test]
    fn a_noise_spike_at_light_load_is_not_the_knee() {
        let pts = [(0.0, 100.0), (1.0, 150.0), (5.0, 101.0), (20.0, 110.0), (30.0, 140.0)];
        let k = knee(&pts, Some(100.0)).unwrap();
        // crossed for good between 20 (110) and 30 (140): 20 + 10 * 10/30
        assert!((k.knee_gbs.unwrap() - 23.333).abs() < 0.01, "{k:?}");
        // a curve that ends below the limit has not crossed it
        let k = knee(&pts[..3], Some(100.0)).unwrap();
        assert_eq!(k.knee_gbs, None);
    }

    #[test]
    fn the_verdict_says_plainly_when_no_knee_was_reached() {
        // one load thread on a small VM: latency rose 12% at 3.9 GB/s
        let pts = [(0.0, 100.0), (1.0, 104.0), (2.5, 108.0), (3.9, 112.0)];
        let v = knee(&pts, Some(100.0)).unwrap().verdict();
        assert!(
            v.starts_with(
                "no knee within the load this machine could generate: latency rose 12% at 3.90 GB/s"
            ),
            "{v}"
        );
        let pts = [(0.0, 100.0), (10.0, 110.0), (20.0, 130.0), (30.0, 180.0), (35.0, 260.0)];
        let v = knee(&pts, Some(100.0)).unwrap().verdict();
        assert_eq!(
            v,
            "knee (+20% over idle 100.0 ns) at 15.00 GB/s; latency doubles at 31.25 GB/s"
        );
        let v = knee(&pts[..3], Some(100.0)).unwrap().verdict();
        assert!(v.contains("at 15.00 GB/s; latency never doubled: rose 30% at 20.00 GB/s"), "{v}");
        // a noisy idle point above the loaded ones: no rise to speak of
        let v = knee(&[(0.0, 118.1), (12.28, 100.4)], None).unwrap().verdict();
        assert!(v.contains("latency did not rise (-15% at 12.28 GB/s)"), "{v}");
    }

    #[test]
    fn a_folding_curve_is_judged_where_it_rose() {
        // overload: bandwidth falls back while latency keeps rising
        let pts = [(0.0, 100.0), (20.0, 115.0), (25.0, 300.0), (22.0, 400.0)];
        let k = knee(&pts, Some(100.0)).unwrap();
        assert!(k.knee_gbs.unwrap() > 20.0 && k.knee_gbs.unwrap() < 25.0);
        assert!(k.usable_gbs > 20.0 && k.usable_gbs < 25.0);
        assert_eq!(k.peak_gbs, 25.0);
    }

    #[test]
    fn mixes_have_their_names_and_byte_counts() {
        for m in LoadKind::ALL {
            assert_eq!(LoadKind::parse(m.name()), Some(m));
            let j = serde_json::to_value(m).unwrap();
            assert_eq!(j, m.name());
        }
        // the first version's `rw` is today's 1:1
        assert_eq!(serde_json::from_value::<LoadKind>("rw".into()).unwrap(), LoadKind::Rw);
        assert_eq!(LoadKind::Read.bytes_of(3), (192.0, 0.0));
        assert_eq!(LoadKind::R3W1.bytes_of(3), (192.0, 64.0));
        assert_eq!(LoadKind::R2W1.bytes_of(2), (128.0, 64.0));
        assert_eq!(LoadKind::Rw.bytes_of(1), (64.0, 64.0));
        assert_eq!(LoadKind::NtWrite.bytes_of(2), (0.0, 128.0));
    }

    #[test]
    fn a_first_version_loaded_point_still_reads() {
        let v = serde_json::json!({"mode": "loaded", "delay": 100, "latency_ns": 120.0,
            "median_ns": 120.0, "p90_ns": 125.0, "p99_ns": 130.0, "spread_pct": 2.0,
            "load_gbs": 8.0, "load_threads": 1, "load_kind": "rw", "cpu": 0, "mem_node": 0,
            "size_bytes": 1024, "page_size": "4k",
            "placement": {"status": "unverified", "check": null}});
        let Lat::Loaded(p) = Lat::try_from(v).unwrap() else { panic!("not a loaded point") };
        assert_eq!(p.load_kind, LoadKind::Rw);
        assert_eq!((p.delay_ns, p.idle, p.read_gbs), (None, false, None));
    }

    #[test]
    fn prefetch_check_says_so_only_above_the_noise() {
        let c =
            PrefetchCheck::judge(0, Some(0), 1 << 28, "4k".into(), 256, (100.0, 1.0), (155.0, 2.0));
        assert!(c.significant);
        assert!((c.shortened_pct - 35.48).abs() < 0.01);
        assert!(c.note.contains("shorten sequential-neighbour loads by 35%"), "{}", c.note);
        let c =
            PrefetchCheck::judge(0, None, 1 << 28, "4k".into(), 256, (150.0, 3.0), (152.0, 3.0));
        assert!(!c.significant);
        assert!(c.note.contains("no prefetch effect"), "{}", c.note);
        let v = serde_json::to_value(LatSummary::PrefetchCheck(c.clone())).unwrap();
        assert_eq!(v["mode"], "prefetch-check");
        assert_eq!(LatSummary::try_from(v).unwrap(), LatSummary::PrefetchCheck(c));
    }

    #[test]
    fn a_disturbed_prefetch_check_decides_nothing() {
        let c =
            PrefetchCheck::judge(0, Some(0), 1 << 28, "4k".into(), 256, (100.0, 1.0), (155.0, 2.0));
        let d = crate::disturbance::Disturbance {
            clean: 20,
            disturbed: 22,
            lost_pct: 91.0,
            busiest_cpu: Some(0),
            ..Default::default()
        };
        let quiet = c.clone().with_disturbance(crate::disturbance::Disturbance::default(), true);
        assert!(quiet.significant && quiet.stable && quiet.note == c.note);
        let busy = c.with_disturbance(d, false);
        assert!(!busy.significant && !busy.stable);
        // the stored note, whole
        assert_eq!(
            busy.note,
            "undecided: the measurement was disturbed: CPU 0 was busy with other processes for \
             91% of the time (22 of 42 samples discarded); measure on a quieter machine (100.0 ns \
             at 64 B vs 155.0 ns at 256 B)"
        );
    }

    #[test]
    fn records_saved_before_the_disturbance_check_read_as_stable() {
        let v = serde_json::json!({"mode": "c2c", "cpu_a": 0, "cpu_b": 1, "relation": null,
            "median_ns": 50.0, "p90_ns": 55.0, "p99_ns": 60.0, "min_ns": 45.0, "max_ns": 70.0,
            "spread_pct": 50.0, "samples": 7, "round_trips_per_sample": 20000});
        let r: C2cResult = serde_json::from_value(v).unwrap();
        assert!(r.stable && r.disturbance.is_none());
    }

    #[test]
    fn captions_name_the_method() {
        assert_eq!(
            method_caption(256, Some(256 << 10), "thp"),
            "random chase, stride 256 B, 64-page TLB groups (256 KiB), thp pages"
        );
        assert!(method_caption(64, None, "4k").contains("cache-assisted"));
    }
}
