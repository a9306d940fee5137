//! The true best setting per workload profile, from the model's own
//! figures and the profiles' premises (docs/store.md,
//! "Recommendations"): what each workload does with memory says which
//! figure it sees, and the model says what that figure is under each
//! setting, without noise and at the scope the premise names. Nothing
//! here reads a run's records or calls the analysis.
//!
//! A difference inside the margin is a tie; one that lies within `band`
//! of the margin could come out either way from noisy runs, so the truth
//! is the set of picks some reading of those near-margin comparisons
//! allows ([`Truth::acceptable`]), and a case is clear when no comparison
//! on the way to the pick is near the margin.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::{Firmware, Setting};
use crate::physics::Team;
use crate::runs::Noise;
use crate::view::View;

/// How near the margin a comparison must lie to come out either way
/// (log-ratio widths), for bandwidth and latency figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bands {
    pub bw: f64,
    pub lat: f64,
}

impl Bands {
    /// `k` times a study's noise: each figure's run-to-run spread plus
    /// what the machine's state moves per run.
    pub fn of(noise: &Noise, k: f64) -> Bands {
        let state = noise.state_per_run();
        Bands { bw: k * (noise.bw_total() + state), lat: k * (noise.lat_total() + state) }
    }

    /// The width for `f` (a ratio of two latencies spreads as both).
    fn of_figure(&self, f: Option<Figure>) -> f64 {
        match f {
            Some(f) if f.higher_is_better() => self.bw,
            Some(Figure::RemotePenalty) => self.lat * std::f64::consts::SQRT_2,
            _ => self.lat,
        }
    }
}

/// A figure a premise names, by what the workload's threads do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Figure {
    /// A thread bound with its memory to its node: the local latency;
    /// under one OS node (nothing can be bound), the mean over CPUs of
    /// each CPU's latency to the memory the kernel gives.
    ThreadLat,
    /// Memory spread over every node in proportion to its size, threads
    /// on every node: the mean over CPUs of the mean over memory; under
    /// one OS node, as [`Figure::ThreadLat`].
    SpreadLat,
    /// The latency of a thread bound with its memory to its node while
    /// the node's other cores load that memory as hard as they can (under
    /// one OS node, every other CPU on the memory the kernel gives).
    LoadedLat,
    /// Every CPU at once, pages interleaved over every node (measured
    /// only where the OS shows two or more nodes).
    InterleaveBw,
    /// Per package, its CPUs each on their own node's memory, every node
    /// of the machine at once.
    LocalBwPkg,
    /// All of one package's CPUs at once reading another package's memory
    /// interleaved over its nodes (the mean over ordered package pairs;
    /// two or more OS nodes and packages).
    CrossPkgBw,
    /// The latency from a node's CPU to its own node's memory; under one
    /// OS node, as [`Figure::ThreadLat`] (no rank can bind its memory).
    LocalLat,
    /// The latency to another package's memory (two or more OS nodes and
    /// packages).
    RemoteLat,
    /// [`Figure::RemoteLat`] over the local latency.
    RemotePenalty,
}

impl Figure {
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::InterleaveBw | Figure::LocalBwPkg | Figure::CrossPkgBw)
    }

    /// The catalogue id of the metric that stands for the figure
    /// (docs/store.md, "The metric catalogue").
    pub fn metric_id(self) -> &'static str {
        match self {
            Figure::ThreadLat => "thread_lat_ns",
            Figure::SpreadLat => "spread_lat_ns",
            Figure::LoadedLat => "loaded_lat_at_peak_ns",
            Figure::InterleaveBw => "interleave_bw_gbs",
            Figure::LocalBwPkg => "local_bw_pkg_gbs",
            Figure::CrossPkgBw => "cross_pkg_bw_gbs",
            Figure::LocalLat => "local_lat_ns",
            Figure::RemoteLat => "remote_lat_ns",
            Figure::RemotePenalty => "remote_penalty_ratio",
        }
    }

    pub const ALL: [Figure; 9] = [
        Figure::ThreadLat,
        Figure::SpreadLat,
        Figure::LoadedLat,
        Figure::InterleaveBw,
        Figure::LocalBwPkg,
        Figure::CrossPkgBw,
        Figure::LocalLat,
        Figure::RemoteLat,
        Figure::RemotePenalty,
    ];
}

/// What one setting truly gives: each figure (absent where no run on the
/// setting can measure it) and how far apart its CPUs' latencies to the
/// kernel's memory lie when the OS shows one node (1: no split).
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub setting: Setting,
    pub values: BTreeMap<Figure, f64>,
    /// Slowest over fastest CPU's latency to the memory the kernel gives,
    /// where the OS shows one node over a machine with NUMA below it.
    pub hidden_split: Option<f64>,
}

impl Figures {
    pub fn of(view: &View) -> Figures {
        let hw = &view.hw;
        let m = view.machine();
        let s = view.setting();
        let multi = view.nodes.len() > 1;
        let all: Vec<u32> = (0..m.cpus()).collect();
        let mut v = BTreeMap::new();
        // What a CPU sees to the kernel's memory, for one OS node.
        let to_kernel_mem: Vec<f64> =
            all.iter().map(|&c| view.latency(c, &view.memory_of(0))).collect();
        let mean_cpu = to_kernel_mem.iter().sum::<f64>() / to_kernel_mem.len() as f64;
        let local = if multi {
            let l: Vec<f64> =
                view.nodes.iter().map(|n| view.latency(n.cpus[0], &view.memory_of(n.id))).collect();
            l.iter().sum::<f64>() / l.len() as f64
        } else {
            mean_cpu
        };
        v.insert(Figure::ThreadLat, local);
        v.insert(Figure::LocalLat, local);
        let spread = if multi {
            let per_cpu: Vec<f64> = all
                .iter()
                .map(|&c| {
                    view.nodes.iter().map(|n| view.latency(c, &view.memory_of(n.id))).sum::<f64>()
                        / view.nodes.len() as f64
                })
                .collect();
            per_cpu.iter().sum::<f64>() / per_cpu.len() as f64
        } else {
            mean_cpu
        };
        v.insert(Figure::SpreadLat, spread);
        // Loaded: the first node's other CPUs on its memory.
        let mem = view.memory_of(0);
        let others: Vec<u32> = view.nodes[0].cpus.iter().copied().filter(|&c| c != 0).collect();
        if !others.is_empty() {
            let teams = view.teams(&others, &mem);
            let chase = hw.domain_of_cpu(0);
            let (l, _) = hw.loaded_latency(chase, mem[0].0, &teams);
            let l = if mem.len() > 1 {
                hw.latency_to(chase, &mem) + (l - hw.latency(chase, mem[0].0))
            } else {
                l
            };
            v.insert(Figure::LoadedLat, l);
        }
        // Bound per domain, every node at once, per package.
        let bound: Vec<Team> =
            view.nodes.iter().flat_map(|n| view.teams(&n.cpus, &view.memory_of(n.id))).collect();
        v.insert(Figure::LocalBwPkg, hw.together(&bound) / f64::from(m.packages));
        if multi {
            v.insert(Figure::InterleaveBw, hw.together(&view.teams(&all, &view.interleaved())));
        }
        if multi && m.packages > 1 {
            let mut cross = Vec::new();
            let mut remote = Vec::new();
            for p in 0..m.packages {
                for q in 0..m.packages {
                    if p == q {
                        continue;
                    }
                    let theirs: Vec<u32> = view
                        .nodes
                        .iter()
                        .filter(|n| view.package_of_cpu(n.cpus[0]) == q)
                        .map(|n| n.id)
                        .collect();
                    let mem = hw.even(theirs.iter().map(|&n| view.memory_of(n)[0].0));
                    let cpus: Vec<u32> =
                        all.iter().copied().filter(|&c| view.package_of_cpu(c) == p).collect();
                    cross.push(hw.together(&view.teams(&cpus, &mem)));
                    for n in view.nodes.iter().filter(|n| view.package_of_cpu(n.cpus[0]) == p) {
                        for &t in &theirs {
                            remote.push(view.latency(n.cpus[0], &view.memory_of(t)));
                        }
                    }
                }
            }
            let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
            v.insert(Figure::CrossPkgBw, mean(&cross));
            v.insert(Figure::RemoteLat, mean(&remote));
            v.insert(Figure::RemotePenalty, mean(&remote) / local);
        }
        let below = m.packages > 1 || s.per_package() > 1;
        let hidden_split = (!multi && below && s.firmware != Firmware::Interleave).then(|| {
            let lo = to_kernel_mem.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = to_kernel_mem.iter().copied().fold(0.0, f64::max);
            hi / lo
        });
        Figures { setting: s, values: v, hidden_split }
    }
}

/// A profile's premise as data: the groups it never picks, the figures
/// no pick may lose on, and the figures that pick, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Premise {
    /// The profile's name as `compare` writes it.
    pub profile: &'static str,
    /// Never a setting that hides a per-CPU latency split from the OS.
    pub no_hidden_split: bool,
    pub guards: Vec<Figure>,
    pub gains: Vec<Figure>,
}

/// The premises of docs/store.md's "Recommendations", one per profile.
pub fn premises() -> Vec<Premise> {
    use Figure::*;
    let p = |profile, no_hidden_split, guards: &[Figure], gains: &[Figure]| Premise {
        profile,
        no_hidden_split,
        guards: guards.to_vec(),
        gains: gains.to_vec(),
    };
    vec![
        p("latency", true, &[], &[ThreadLat, LoadedLat]),
        p("database", true, &[InterleaveBw], &[SpreadLat]),
        p("hpc", false, &[], &[LocalBwPkg, ThreadLat]),
        p("virtualization", false, &[InterleaveBw], &[SpreadLat, RemoteLat]),
        p("ai-training", false, &[], &[InterleaveBw, CrossPkgBw]),
    ]
}

/// The truth for one profile over a study's settings (indices into the
/// study's groups).
#[derive(Debug, Clone, PartialEq)]
pub struct Truth {
    pub profile: &'static str,
    /// The pick with every near-margin comparison read as it truly lies
    /// (a difference under the margin a tie); `None`: a tie.
    pub pick: Option<usize>,
    /// Every group a pick may name without being wrong: the pick under
    /// some reading of the near-margin comparisons, or a member of a tie.
    pub acceptable: BTreeSet<usize>,
    /// No comparison on the way to the pick was within `band` of the
    /// margin, and there is a pick.
    pub clear: bool,
    /// The figure that decided the pick.
    pub decided_by: Option<Figure>,
}

/// How a comparison reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    /// `a` better beyond the margin and the band.
    Clear(bool),
    /// Within the margin less the band.
    Tie,
    /// Near the margin: a tie, or `a` better when `true` (the sign the
    /// figures give).
    Near(bool),
}

/// A comparison the procedure asked about, by (figure, a, b) with a < b,
/// or the hidden split of a group.
type Key = (Option<Figure>, usize, usize);

struct Procedure<'a> {
    figs: &'a [Figures],
    premise: &'a Premise,
    margin: f64,
    bands: Bands,
    /// How each near comparison is read in this branch (true: ordered).
    chosen: BTreeMap<Key, bool>,
}

enum Outcome {
    Pick(usize, Option<Figure>),
    Tie(Vec<usize>),
    /// A near comparison not chosen yet: branch on it.
    Branch(Key),
}

impl Procedure<'_> {
    fn cmp(&self, f: Figure, a: usize, b: usize) -> Option<Cmp> {
        let va = *self.figs[a].values.get(&f)?;
        let vb = *self.figs[b].values.get(&f)?;
        let r = (va / vb).ln() * if f.higher_is_better() { 1.0 } else { -1.0 };
        let m = (1.0 + self.margin).ln();
        let band = self.bands.of_figure(Some(f));
        Some(if r.abs() >= m + band {
            Cmp::Clear(r > 0.0)
        } else if r.abs() <= (m - band).max(0.0) {
            Cmp::Tie
        } else {
            Cmp::Near(r > 0.0)
        })
    }

    /// `a` judged better than `b` on `f`; `Err` to branch.
    fn better(&mut self, f: Figure, a: usize, b: usize) -> Result<bool, Key> {
        Ok(match self.cmp(f, a, b) {
            None | Some(Cmp::Tie) => false,
            Some(Cmp::Clear(x)) => x,
            Some(Cmp::Near(x)) => {
                let key = (Some(f), a.min(b), a.max(b));
                match self.chosen.get(&key) {
                    Some(&ordered) => ordered && x,
                    None => return Err(key),
                }
            }
        })
    }

    fn hidden(&mut self, g: usize) -> Result<bool, Key> {
        let Some(split) = self.figs[g].hidden_split else { return Ok(false) };
        // A split beyond 8% (the rule's relative gap) is one; near it,
        // noisy runs may see it either way.
        let band = self.bands.of_figure(None);
        let (lo, hi) = ((1.08f64).ln() - band, (1.08f64).ln() + band);
        let x = split.ln();
        if x >= hi {
            return Ok(true);
        }
        if x <= lo {
            return Ok(false);
        }
        let key = (None, g, g);
        self.chosen.get(&key).copied().ok_or(key)
    }

    fn run(&mut self) -> Outcome {
        match self.steps() {
            Ok(o) => o,
            Err(k) => Outcome::Branch(k),
        }
    }

    fn steps(&mut self) -> Result<Outcome, Key> {
        let n = self.figs.len();
        let mut cand: Vec<usize> = Vec::new();
        let mut excluded = false;
        for g in 0..n {
            if self.premise.no_hidden_split && self.hidden(g)? {
                excluded = true;
            } else {
                cand.push(g);
            }
        }
        let has = |figs: &[Figures], f: Figure, g: usize| figs[g].values.contains_key(&f);
        let mut guarded = false;
        for f in self.premise.guards.clone() {
            let have: Vec<usize> = cand.iter().copied().filter(|&g| has(self.figs, f, g)).collect();
            let mut drop = Vec::new();
            for &c in &have {
                for &d in &have {
                    if d != c && self.better(f, d, c)? {
                        drop.push(c);
                        break;
                    }
                }
            }
            guarded |= !drop.is_empty();
            cand.retain(|c| !drop.contains(c));
        }
        let mut decided = None;
        for f in self.premise.gains.clone() {
            let have: Vec<usize> = cand.iter().copied().filter(|&g| has(self.figs, f, g)).collect();
            if cand.len() < 2 || have.len() < 2 {
                continue;
            }
            decided = Some(f);
            for &w in &have {
                let mut all = true;
                for &o in &have {
                    if o != w && !self.better(f, w, o)? {
                        all = false;
                        break;
                    }
                }
                if all {
                    return Ok(Outcome::Pick(w, Some(f)));
                }
            }
            let mut beaten = Vec::new();
            for &c in &have {
                for &d in &have {
                    if d != c && self.better(f, d, c)? {
                        beaten.push(c);
                        break;
                    }
                }
            }
            cand.retain(|c| !beaten.contains(c));
        }
        Ok(match cand.as_slice() {
            [one] if excluded || guarded || decided.is_some() || n == 1 => {
                Outcome::Pick(*one, decided)
            }
            _ => Outcome::Tie(cand),
        })
    }
}

/// The truth of `premise` over the groups' figures, with `margin`
/// (relative, 0.03 = 3%) and `bands` (how near the margin a comparison
/// may come out either way).
pub fn truth(figs: &[Figures], premise: &Premise, margin: f64, bands: Bands) -> Truth {
    let mut acceptable = BTreeSet::new();
    let mut pick = None;
    let mut decided_by = None;
    let mut clear = true;
    // Depth-first over the readings of the near comparisons met; the
    // first branch reads each as it truly lies (ordered when beyond the
    // margin), so the first outcome is the strict truth.
    let mut stack: Vec<BTreeMap<Key, bool>> = vec![BTreeMap::new()];
    let mut first = true;
    let mut seen = 0usize;
    while let Some(chosen) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            // Too many near comparisons to read every way: anything goes.
            acceptable.extend(0..figs.len());
            clear = false;
            break;
        }
        let mut p = Procedure { figs, premise, margin, bands, chosen: chosen.clone() };
        match p.run() {
            Outcome::Branch(key) => {
                clear = false;
                // The strict reading goes on top of the stack: searched
                // first.
                let strict = strict_reading(figs, key, margin);
                for reading in [!strict, strict] {
                    let mut c = chosen.clone();
                    c.insert(key, reading);
                    stack.push(c);
                }
            }
            Outcome::Pick(g, f) => {
                acceptable.insert(g);
                if first {
                    pick = Some(g);
                    decided_by = f;
                    first = false;
                }
            }
            Outcome::Tie(v) => {
                // A member of a tie that was never weighed against another
                // on a gain (no gain figure it and another member both
                // have) is not a pick the tie allows.
                let weighed = |g: usize| {
                    v.len() == 1
                        || premise.gains.iter().any(|f| {
                            figs[g].values.contains_key(f)
                                && v.iter().any(|&o| o != g && figs[o].values.contains_key(f))
                        })
                };
                acceptable.extend(v.iter().copied().filter(|&g| weighed(g)));
                if first {
                    first = false;
                }
            }
        }
    }
    Truth { profile: premise.profile, pick, acceptable, clear: clear && pick.is_some(), decided_by }
}

/// How a near comparison truly lies: ordered when the difference is
/// beyond the margin (a hidden split beyond 8%).
fn strict_reading(figs: &[Figures], key: Key, margin: f64) -> bool {
    match key {
        (Some(f), a, b) => {
            let (va, vb) = (figs[a].values[&f], figs[b].values[&f]);
            (va / vb).ln().abs() >= (1.0 + margin).ln()
        }
        (None, g, _) => figs[g].hidden_split.is_some_and(|s| s >= 1.08),
    }
}

/// The truth of every premise over `views` (one per group).
pub fn truths(views: &[View], margin: f64, bands: Bands) -> Vec<Truth> {
    let figs: Vec<Figures> = views.iter().map(Figures::of).collect();
    premises().iter().map(|p| truth(&figs, p, margin, bands)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(rows: &[&[(Figure, f64)]]) -> Vec<Figures> {
        rows.iter()
            .map(|r| Figures {
                setting: Setting::domains(1),
                values: r.iter().copied().collect(),
                hidden_split: None,
            })
            .collect()
    }

    fn premise(guards: &[Figure], gains: &[Figure]) -> Premise {
        Premise {
            profile: "test",
            no_hidden_split: true,
            guards: guards.into(),
            gains: gains.into(),
        }
    }

    const BANDS: Bands = Bands { bw: 0.01, lat: 0.01 };

    /// Beyond the margin and the band: one pick, clear; inside the margin
    /// less the band: a tie, no pick, either allowed; near the margin:
    /// the strict reading picks, both are allowed, not clear.
    #[test]
    fn margin_band_and_tie() {
        use Figure::ThreadLat as T;
        let p = premise(&[], &[T]);
        let clear = truth(&figs(&[&[(T, 100.0)], &[(T, 110.0)]]), &p, 0.03, BANDS);
        assert_eq!((clear.pick, clear.clear), (Some(0), true));
        assert_eq!(clear.acceptable.iter().copied().collect::<Vec<_>>(), [0]);
        let tie = truth(&figs(&[&[(T, 100.0)], &[(T, 101.0)]]), &p, 0.03, BANDS);
        assert_eq!((tie.pick, tie.clear), (None, false));
        assert_eq!(tie.acceptable.iter().copied().collect::<Vec<_>>(), [0, 1]);
        let near = truth(&figs(&[&[(T, 100.0)], &[(T, 103.5)]]), &p, 0.03, BANDS);
        assert_eq!((near.pick, near.clear), (Some(0), false));
        assert_eq!(near.acceptable.iter().copied().collect::<Vec<_>>(), [0, 1]);
    }

    /// A guard drops what another group beats on it, whatever it gains
    /// later; one group left is the pick; a group without the guard's
    /// figure is neither dropped nor judged by it.
    #[test]
    fn guards_drop_and_one_left_is_the_pick() {
        use Figure::{InterleaveBw as I, SpreadLat as S};
        let p = premise(&[I], &[S]);
        let t =
            truth(&figs(&[&[(I, 100.0), (S, 200.0)], &[(I, 80.0), (S, 100.0)]]), &p, 0.03, BANDS);
        assert_eq!((t.pick, t.decided_by), (Some(0), None));
        let t = truth(
            &figs(&[&[(I, 100.0), (S, 200.0)], &[(I, 80.0), (S, 100.0)], &[(S, 150.0)]]),
            &p,
            0.03,
            BANDS,
        );
        assert_eq!((t.pick, t.decided_by), (Some(2), Some(S)));
    }

    /// A hidden split beyond 8% rules a group out where the premise says
    /// so, and the one left is the pick.
    #[test]
    fn a_hidden_split_is_ruled_out() {
        use Figure::ThreadLat as T;
        let mut f = figs(&[&[(T, 100.0)], &[(T, 90.0)]]);
        f[1].hidden_split = Some(1.5);
        let t = truth(&f, &premise(&[], &[T]), 0.03, BANDS);
        assert_eq!(t.pick, Some(0));
        let keep = Premise { no_hidden_split: false, ..premise(&[], &[T]) };
        assert_eq!(truth(&f, &keep, 0.03, BANDS).pick, Some(1));
    }

    /// The metric ids of a table cell (backticked, no space), GPU figures
    /// left out (the model has no GPU).
    fn ids(cell: &str) -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|id| !id.starts_with("gpu_") && !id.contains(' '))
            .map(str::to_string)
            .collect()
    }

    /// The premises the truth reads are the table of docs/store.md
    /// ("Recommendations"): each workload profile's ruled-out setting,
    /// guards and gains, in order.
    #[test]
    fn the_premises_are_the_documented_table() {
        let doc =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/store.md"))
                .expect("docs/store.md");
        let mut rows = BTreeMap::new();
        let mut table = false;
        for line in doc.lines() {
            if line.starts_with("| profile | ruled out | guards | gains") {
                table = true;
                continue;
            }
            if table && !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if !table || cells.len() < 5 || cells[1].starts_with("---") {
                continue;
            }
            let name = cells[1].trim_matches('`').to_string();
            rows.insert(name, (cells[2].contains("hidden split"), ids(cells[3]), ids(cells[4])));
        }
        assert!(!rows.is_empty(), "no premise table in docs/store.md");
        for p in premises() {
            let Some((hidden, guards, gains)) = rows.get(p.profile) else {
                panic!("docs/store.md has no row for {}", p.profile)
            };
            let mine =
                |v: &[Figure]| v.iter().map(|f| f.metric_id().to_string()).collect::<Vec<_>>();
            assert_eq!(*hidden, p.no_hidden_split, "{}", p.profile);
            assert_eq!(*guards, mine(&p.guards), "{} guards", p.profile);
            assert_eq!(*gains, mine(&p.gains), "{} gains", p.profile);
        }
    }
}
