//! The recommendations of a study: per workload profile, the groups it
//! can never pick, the guards no pick may lose on and the gains that pick
//! among the rest (docs/store.md, "Recommendations").

use results::profile::Profile as WorkloadProfile;
use results::runstats::GroupVerdict;
use serde::Serialize;

use super::{NoPick, Pair, Recommendation, SettingDiff, Study, StudyMetric};
use crate::catalogue::{self, MetricId};
use crate::metric_id::{Fixed, GpuStat, PerCpuStat};
use crate::metrics::MetricKey;

/// A pair's change (percent, in the metric's own direction of the later
/// group against the earlier) and its interval, where it has one (none:
/// the change is beyond the machine's noise floor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub change_pct: f64,
    pub interval: Option<(f64, f64)>,
}

impl Change {
    fn of(p: &Pair) -> Change {
        Change { change_pct: p.change_pct, interval: p.ci_low_pct.zip(p.ci_high_pct) }
    }
}

/// One reason a profile's recommendation gives, in the order found; the
/// front ends word it. `metric`: the study's row (for the figure's name),
/// except in [`Reason::DecidesNothing`] and [`Reason::NotMeasured`], where
/// it is the catalogue's metric the profile needs. Groups are indices
/// into [`Study::groups`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The group's settings hide a per-CPU latency split from the OS.
    RuledOut { group: usize },
    /// A guard: `group` is decidedly worse than `beaten_by` (`change`:
    /// `beaten_by` against `group`).
    LosesOn { metric: MetricId, group: usize, beaten_by: usize, change: Change },
    /// A gain: `group` beats every other candidate; `change`: it against
    /// `rival`, the closest of them.
    WinsOn { metric: MetricId, group: usize, rival: usize, change: Change },
    /// The groups tie within the study's margin.
    Tie { metric: MetricId, groups: Vec<usize> },
    /// The metric leaves the groups undecided (ranking stops there).
    Undecided { metric: MetricId, groups: Vec<usize> },
    /// The pick `group` may lose to `rivals` on an undecided guard.
    MayLoseOn { metric: MetricId, group: usize, rivals: Vec<usize> },
    /// The metric is only derived (`how`), never measured at its scope.
    DecidesNothing { metric: MetricId, how: super::RowDerived },
    /// The metric was not measured.
    NotMeasured { metric: MetricId },
    /// No metric the profile needs was measured in two groups.
    NothingToCompare,
    /// `general`: the group's settings hide NUMA
    /// ([`super::StudyGroup::hidden_numa`]).
    HidesNuma { group: usize },
}

/// What to measure next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// The runs that would decide the study row `metric`: `runs` per group
    /// where known, `held_by_floor_pct` where the noise floor for groups
    /// that size is larger than the change (neither: more than
    /// [`results::runstats::MAX_RUNS_SUGGESTED`]).
    Runs { metric: MetricId, runs: Option<u32>, held_by_floor_pct: Option<f64> },
    /// The `step` in every group, to measure a derived figure at its scope.
    StepAtScope { step: &'static str },
    /// The `step`, to measure a figure not measured.
    Step { step: &'static str },
}

/// What a profile's study leaves unmeasured whatever the runs say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Each GPU's host-to-device bandwidth (`numaprobe gpu`).
    GpuH2d,
}

/// The group a pick is judged against (its closest rival when the pick
/// keeps the baseline, else the baseline) and the settings that differ
/// between them: indices into [`Study::settings_diff`], those the user
/// declared and the NUMA mode's name first, at most six.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Against {
    pub group: usize,
    pub differs: Vec<usize>,
}

/// The group among `among` judged better than every other one of them
/// that has the metric (pairwise, with the study's intervals, margin and
/// floors); `None` when none is, or fewer than two have it.
pub(super) fn best_of(m: &StudyMetric, among: &[usize]) -> Option<usize> {
    let have: Vec<usize> = among.iter().copied().filter(|&i| m.groups[i].n > 0).collect();
    if have.len() < 2 {
        return None;
    }
    have.iter().copied().find(|&g| {
        have.iter().all(|&h| {
            h == g || m.pairs[h][g].as_ref().is_some_and(|p| p.verdict == GroupVerdict::Better)
        })
    })
}

/// Those of `among` that no other of them beats on the metric (the top
/// tier: ties and undecided pairs stay together).
fn top_tier(m: &StudyMetric, among: &[usize]) -> Vec<usize> {
    among
        .iter()
        .copied()
        .filter(|&g| {
            m.groups[g].n == 0
                || !among.iter().any(|&h| {
                    h != g
                        && m.groups[h].n > 0
                        && m.pairs[g][h].as_ref().is_some_and(|p| p.verdict == GroupVerdict::Better)
                })
        })
        .collect()
}

/// Whom a recommendation is for: a workload profile of the audit's list
/// ([`results::profile::Profile`]), or a program measured under `exec`
/// (its unnamed metric and wall time, or one named metric).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForWhom {
    Workload(WorkloadProfile),
    Program(Option<String>),
}

impl Serialize for ForWhom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::fmt::Display for ForWhom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForWhom::Workload(p) => f.write_str(p.name()),
            ForWhom::Program(None) => f.write_str("program"),
            ForWhom::Program(Some(n)) => write!(f, "program {n}"),
        }
    }
}

/// A workload profile: the groups it can never pick, the metrics no pick
/// may lose on (guards: a group decidedly worse than another on one is
/// ruled out), and the metrics that pick among the rest, in order.
struct Profile {
    who: ForWhom,
    /// Rule out configurations that hide a per-CPU latency split.
    no_hidden_split: bool,
    guards: Vec<MetricId>,
    gains: Vec<MetricId>,
    missing: Option<Missing>,
}

/// The AI-training profile: each GPU's host-to-device bandwidth from its
/// fastest node (`numaprobe gpu`) leads where the study holds it; without
/// it, a note says how to measure it.
fn ai_training(s: &Study, mut prof: Profile) -> Profile {
    let gpu: Vec<MetricId> = s
        .metrics
        .iter()
        .filter(|m| matches!(m.metric, MetricId::Gpu { stat: GpuStat::H2dBw, .. }))
        .map(|m| m.metric.clone())
        .collect();
    if gpu.is_empty() {
        prof.missing = Some(Missing::GpuH2d);
    }
    prof.gains.splice(0..0, gpu);
    prof
}

/// The profiles and the metrics that matter to each (docs/store.md,
/// "Recommendations": each follows from the profile's premise there).
/// Runs of `exec` only: the program's own figures are the study; the
/// machine profiles would only list what `run` measures.
fn profiles(s: &Study) -> Vec<Profile> {
    // Any `exec` figure (metric, wall time, per watt, energy).
    let program = |m: &StudyMetric| m.metric.is_exec();
    if !s.metrics.iter().any(program) {
        return machine_profiles(s);
    }
    if s.metrics.iter().all(program) {
        return program_profiles(s);
    }
    let mut v = machine_profiles(s);
    v.extend(program_profiles(s));
    v
}

/// A profile that misses nothing.
fn profile(
    who: ForWhom,
    no_hidden_split: bool,
    guards: Vec<MetricId>,
    gains: Vec<MetricId>,
) -> Profile {
    Profile { who, no_hidden_split, guards, gains, missing: None }
}

/// The audit's workload profiles.
fn machine_profiles(s: &Study) -> Vec<Profile> {
    use Fixed::{CrossPkgBw, LocalBwPkg, SpreadLat, ThreadLat};
    use MetricKey::{InterleaveBw, LoadedLatPeak, RemoteLat};
    let p = profile;
    // Each profile starts from its premise: where the workload's threads
    // run, where its pages are and how it touches them. Its metrics are
    // the figures that placement sees, by hardware relation and scope, so
    // that they mean the same under every NUMA mode.
    vec![
        // Premise: threads run on every node and move between them; the
        // buffer pool is spread over every node. A lookup lands on a node
        // in proportion to its memory (spread latency); scans stream the
        // spread memory from every CPU (interleaved bandwidth, a guard).
        // A hidden split: the OS places the pool without knowing it.
        p(
            ForWhom::Workload(WorkloadProfile::Database),
            true,
            vec![InterleaveBw.into()],
            vec![SpreadLat.into()],
        ),
        // Premise: threads and their memory bound to one node, each
        // request a pointer chase through it while the node's other cores
        // keep it busy: its own node's latency, then under that load. It
        // can bind only to nodes the OS shows.
        p(
            ForWhom::Workload(WorkloadProfile::Latency),
            true,
            vec![],
            vec![ThreadLat.into(), LoadedLatPeak.into()],
        ),
        // Premise: ranks or teams bound per domain, every core streaming
        // its own domain's memory at once: the package's bandwidth bound
        // per domain, then its own domain's latency for the accesses that
        // are not streamed. Bound, it touches no memory spread over nodes.
        p(
            ForWhom::Workload(WorkloadProfile::Hpc),
            false,
            vec![],
            vec![LocalBwPkg.into(), ThreadLat.into()],
        ),
        // Premise: guests span the nodes, their memory spread by the host
        // and their vCPUs moving between packages: the spread latency, then
        // the other package's latency (a vCPU away from its memory); all
        // guests stream spread memory from every CPU (interleaved
        // bandwidth, a guard).
        p(
            ForWhom::Workload(WorkloadProfile::Virtualization),
            false,
            vec![InterleaveBw.into()],
            vec![SpreadLat.into(), RemoteLat.into()],
        ),
        // Premise: pinned host buffers on every package feed the GPUs by
        // host-to-device copies (`numaprobe gpu`, when the runs hold it);
        // the loaders stream host memory from every CPU (interleaved
        // bandwidth) and fill the buffers of GPUs on the other package
        // across the link (cross-package bandwidth).
        ai_training(
            s,
            p(
                ForWhom::Workload(WorkloadProfile::AiTraining),
                false,
                vec![],
                vec![InterleaveBw.into(), CrossPkgBw.into()],
            ),
        ),
    ]
}

/// The program's unnamed metric, then its wall time (wall time alone when
/// the runs have no metric); then one profile per named metric (`exec
/// --metric NAME=REGEX`), each judged alone in its own direction (a
/// program's int and fp rates can move apart). Runs with named metrics
/// only are judged by them, not by wall time.
fn program_profiles(s: &Study) -> Vec<Profile> {
    let mut named: Vec<String> = Vec::new();
    for m in &s.metrics {
        if let Some(n) = m.metric.exec_metric_name() {
            if !named.iter().any(|x| x == n) {
                named.push(n.to_string());
            }
        }
    }
    let mut progs = Vec::new();
    let metric = |name| MetricId::ExecMetric { name, policy: None };
    if named.is_empty() || !rows_for(s, &metric(None)).is_empty() {
        progs.push(profile(
            ForWhom::Program(None),
            false,
            vec![],
            vec![metric(None), MetricId::ExecWall { policy: None }],
        ));
    }
    for n in named {
        let id = metric(Some(n.clone()));
        progs.push(profile(ForWhom::Program(Some(n)), false, vec![], vec![id]));
    }
    progs
}

/// The study's metrics a profile's metric id stands for: an `exec` id
/// without its policy (`exec_metric`, `exec_metric:NAME`, `exec_wall_s`)
/// stands for that metric under every policy (`exec_metric:NAME[POLICY]`).
fn rows_for<'a>(s: &'a Study, id: &MetricId) -> Vec<&'a StudyMetric> {
    let exec = matches!(
        id,
        MetricId::ExecWall { policy: None } | MetricId::ExecMetric { policy: None, .. }
    );
    s.metrics
        .iter()
        // a figure derived from cells never decides a pick
        .filter(|m| m.derived.is_none())
        .filter(|m| {
            m.metric == *id
                || (exec && m.metric.policy().is_some() && m.metric.without_policy() == *id)
        })
        .collect()
}

/// An undecided pair of groups `(a, b)`, the runs per group that would
/// decide it and the noise floor that holds more runs back.
type Undecided4 = (usize, usize, Option<u32>, Option<f64>);

/// Whether group `c` is ahead of group `w` on `m` (its median, in the
/// metric's direction).
fn ahead(m: &StudyMetric, c: usize, w: usize) -> bool {
    match (m.groups[c].median, m.groups[w].median) {
        (Some(a), Some(b)) => {
            if m.higher_is_better {
                a > b
            } else {
                a < b
            }
        }
        _ => false,
    }
}

/// The pairs of `groups` (both measured) that `m` leaves undecided, with
/// the runs per group that would decide and the noise floor that holds
/// more runs back.
fn undecided_pairs(
    m: &StudyMetric,
    groups: &[usize],
) -> Vec<(usize, usize, Option<u32>, Option<f64>)> {
    groups
        .iter()
        .flat_map(|&a| groups.iter().map(move |&b| (a, b)))
        .filter(|(a, b)| a < b && m.groups[*a].n > 0 && m.groups[*b].n > 0)
        .filter_map(|(a, b)| {
            let p = m.pairs[a][b].as_ref()?;
            (p.verdict == GroupVerdict::Undecided).then_some((
                a,
                b,
                p.runs_needed,
                p.more_runs_held_by_floor_pct,
            ))
        })
        .collect()
}

/// What would decide the undecided pairs of the study row `metric`.
fn runs_that_decide(metric: &MetricId, undecided: &[Undecided4]) -> Next {
    Next::Runs {
        metric: metric.clone(),
        runs: undecided.iter().filter_map(|u| u.2).max(),
        held_by_floor_pct: undecided.iter().filter_map(|u| u.3).reduce(f64::max),
    }
}

/// One profile's pick as it is worked out: the groups still in the running
/// and what was said about the others.
struct Picking {
    /// The reasons, in the order they were found.
    reasons: Vec<Reason>,
    /// What to measure next.
    next: Vec<Next>,
    /// Groups ruled out whatever their figures (a hidden per-CPU split).
    excluded: Vec<usize>,
    /// The groups still in the running.
    cand: Vec<usize>,
    /// The metric that decided the pick.
    decided_by: Option<MetricId>,
    /// The last group a guard dropped (the pick's rival when no gain ranks).
    last_lost: Option<usize>,
    /// Some gain was measured in two of the candidates.
    compared: bool,
    /// The winner and its closest rival.
    group: Option<(usize, usize)>,
    /// The first metric that left the remaining groups undecided.
    undecided_on: Option<(MetricId, Vec<usize>)>,
}

/// What a gain row left: go on to the next row, or stop ranking.
enum Ranked {
    Next,
    Stop,
}

impl Picking {
    fn new(s: &Study) -> Picking {
        Picking {
            reasons: Vec::new(),
            next: Vec::new(),
            excluded: Vec::new(),
            cand: (0..s.groups.len()).collect(),
            decided_by: None,
            last_lost: None,
            compared: false,
            group: None,
            undecided_on: None,
        }
    }

    /// Rules out the groups whose settings hide a per-CPU latency split.
    fn rule_out_hidden(&mut self, s: &Study) {
        for (i, g) in s.groups.iter().enumerate() {
            if g.hidden_numa.is_some() {
                self.excluded.push(i);
                self.reasons.push(Reason::RuledOut { group: i });
            }
        }
        let excluded = &self.excluded;
        self.cand.retain(|i| !excluded.contains(i));
    }

    /// Guards: drops every candidate another candidate decidedly beats,
    /// whatever it gains elsewhere (figures of different kinds are never
    /// weighed against each other).
    fn apply_guards(&mut self, s: &Study, prof: &Profile) {
        for id in &prof.guards {
            for m in rows_for(s, id) {
                let top = top_tier(m, &self.cand);
                let mut dropped = Vec::new();
                for l in self.cand.iter().copied().filter(|c| !top.contains(c)) {
                    let beaten = self.cand.iter().copied().find_map(|t| {
                        let p = m.pairs[l][t].as_ref()?;
                        (p.verdict == GroupVerdict::Better).then_some((t, p))
                    });
                    if let Some((t, p)) = beaten {
                        self.reasons.push(Reason::LosesOn {
                            metric: m.metric.clone(),
                            group: l,
                            beaten_by: t,
                            change: Change::of(p),
                        });
                        dropped.push(l);
                    }
                }
                if let Some(&l) = dropped.first() {
                    self.decided_by.get_or_insert_with(|| m.metric.clone());
                    self.last_lost = Some(l);
                }
                self.cand.retain(|c| !dropped.contains(c));
            }
        }
    }

    /// Gains: the first metric with a clear winner among the candidates
    /// picks it; a tie narrows the candidates to the top tier.
    fn apply_gains(&mut self, s: &Study, prof: &Profile) {
        for id in &prof.gains {
            if self.undecided_on.is_some() {
                break;
            }
            for m in rows_for(s, id) {
                if self.cand.len() < 2 {
                    break;
                }
                if let Ranked::Stop = self.rank_by(m) {
                    break;
                }
            }
            if self.group.is_some() || self.undecided_on.is_some() {
                break;
            }
        }
    }

    /// Ranks the candidates by one gain row: a winner, a tie (the top
    /// tier goes on) or undecided (ranking stops there).
    fn rank_by(&mut self, m: &StudyMetric) -> Ranked {
        if self.cand.iter().filter(|&&c| m.groups[c].n > 0).count() < 2 {
            return Ranked::Next;
        }
        self.compared = true;
        if let Some(w) = best_of(m, &self.cand) {
            // The closest rival: the smallest change against the winner.
            let rival = self
                .cand
                .iter()
                .copied()
                .filter(|&c| c != w && m.groups[c].n > 0)
                .min_by(|&a, &b| {
                    let ca = m.pairs[a][w].as_ref().map_or(f64::MAX, |p| p.change_pct.abs());
                    let cb = m.pairs[b][w].as_ref().map_or(f64::MAX, |p| p.change_pct.abs());
                    ca.total_cmp(&cb)
                })
                .unwrap_or(w);
            if let Some(p) = m.pairs[rival][w].as_ref() {
                self.reasons.push(Reason::WinsOn {
                    metric: m.metric.clone(),
                    group: w,
                    rival,
                    change: Change::of(p),
                });
            }
            self.decided_by = Some(m.metric.clone());
            self.group = Some((w, rival));
            self.cand = vec![w];
            return Ranked::Stop;
        }
        let top = top_tier(m, &self.cand);
        let measured: Vec<usize> = top.iter().copied().filter(|&c| m.groups[c].n > 0).collect();
        let undecided = undecided_pairs(m, &measured);
        self.cand = top;
        if undecided.is_empty() {
            self.reasons.push(Reason::Tie { metric: m.metric.clone(), groups: measured });
            return Ranked::Next;
        }
        // Undecided is not a tie: a later figure would pick between groups
        // this one may rank the other way.
        self.reasons.push(Reason::Undecided { metric: m.metric.clone(), groups: measured.clone() });
        self.undecided_on.get_or_insert_with(|| (m.metric.clone(), measured));
        self.next.push(runs_that_decide(&m.metric, &undecided));
        Ranked::Stop
    }

    /// A winner on a gain metric, or the one candidate the guards (or the
    /// ruling out of a hidden split) left.
    fn settle(&mut self, s: &Study) {
        if self.group.is_none()
            && self.cand.len() == 1
            && !self.excluded.is_empty()
            && self.decided_by.is_none()
        {
            self.decided_by = s
                .metrics
                .iter()
                .find(|m| matches!(m.metric, MetricId::PerCpu { stat: PerCpuStat::Split, .. }))
                .map(|m| m.metric.clone());
            self.last_lost = self.excluded.first().copied();
        }
        if self.group.is_none() && self.cand.len() == 1 && self.decided_by.is_some() {
            self.group = Some((self.cand[0], self.last_lost.unwrap_or(self.cand[0])));
        }
    }

    /// Guards the runs could not rank between groups still in the running:
    /// a pick that one of them may lose to on a guard is not made (the
    /// guard may drop it).
    fn hold_at_risk(&mut self, open_guards: &[(&StudyMetric, Vec<Undecided4>)]) {
        let Some((w, _)) = self.group else { return };
        for (m, open) in open_guards {
            let at_risk: Vec<Undecided4> = open
                .iter()
                .copied()
                .filter(|u| {
                    let c = if u.0 == w {
                        u.1
                    } else if u.1 == w {
                        u.0
                    } else {
                        return false;
                    };
                    ahead(m, c, w)
                })
                .collect();
            if at_risk.is_empty() {
                continue;
            }
            let rivals: Vec<usize> =
                at_risk.iter().map(|u| if u.0 == w { u.1 } else { u.0 }).collect();
            let mut groups = vec![w];
            groups.extend(&rivals);
            groups.sort_unstable();
            self.reasons.push(Reason::MayLoseOn { metric: m.metric.clone(), group: w, rivals });
            self.undecided_on = Some((m.metric.clone(), groups));
            self.next.push(runs_that_decide(&m.metric, &at_risk));
            self.group = None;
            self.decided_by = None;
            break;
        }
    }

    /// What was not measured (never what a configuration makes impossible).
    fn not_measured(&mut self, s: &Study, prof: &Profile) {
        for id in prof.guards.iter().chain(&prof.gains) {
            if !rows_for(s, id).is_empty() || id.is_exec() {
                continue;
            }
            let def = catalogue::def_of_id(id);
            if let Some(how) =
                s.metrics.iter().find(|m| m.metric == *id).and_then(|m| m.derived.as_ref())
            {
                self.reasons.push(Reason::DecidesNothing { metric: id.clone(), how: how.clone() });
                if let Some(step) = def.step {
                    self.next.push(Next::StepAtScope { step });
                }
                continue;
            }
            let impossible =
                !s.layouts.is_empty() && s.layouts.iter().all(|l| def.impossible(l).is_some());
            if impossible || (def.step_needs_nodes && s.groups.iter().all(|g| g.one_node)) {
                continue;
            }
            self.reasons.push(Reason::NotMeasured { metric: id.clone() });
            if let Some(step) = def.step {
                self.next.push(Next::Step { step });
            }
        }
    }

    /// The recommendation: the reasons, the pick (or why none) and the
    /// group it is judged against.
    fn finish(mut self, s: &Study, prof: Profile) -> Recommendation {
        if self.reasons.is_empty() && self.next.is_empty() {
            self.reasons.push(Reason::NothingToCompare);
        }
        let pick = self.group.map(|(w, _)| w);
        let no_pick = match (pick, self.undecided_on) {
            (Some(_), _) => None,
            (None, _) if self.cand.is_empty() => Some(NoPick::AllRuledOut),
            (None, Some((metric, groups))) => Some(NoPick::Undecided { metric, groups }),
            (None, None) if self.compared => Some(NoPick::Tie { groups: self.cand.clone() }),
            (None, None) => Some(NoPick::NothingMeasured),
        };
        let no_pick_between = if pick.is_none() && self.cand.len() > 1 && self.compared {
            self.cand
        } else {
            Vec::new()
        };
        Recommendation {
            profile: prof.who,
            reasons: self.reasons,
            against: pick.and_then(|g| against(s, g, self.group)),
            no_pick_between,
            missing: prof.missing,
            next: self.next,
            group: pick,
            decided_by: self.decided_by,
            excluded: self.excluded,
            no_pick,
        }
    }
}

/// The group the pick `g` is judged against (`group`: it and its closest
/// rival, which a kept baseline is judged against) and the settings that
/// differ; `None` when that is the pick itself.
fn against(s: &Study, g: usize, group: Option<(usize, usize)>) -> Option<Against> {
    let against = match group {
        Some((_, rival)) if g == s.baseline => rival,
        _ => s.baseline,
    };
    (g != against).then(|| Against { group: against, differs: differing(s, against, g) })
}

/// One profile's recommendation.
fn recommend_for(s: &Study, prof: Profile) -> Recommendation {
    let mut pick = Picking::new(s);
    if prof.no_hidden_split {
        pick.rule_out_hidden(s);
    }
    pick.apply_guards(s, &prof);
    let open_guards: Vec<(&StudyMetric, Vec<Undecided4>)> = prof
        .guards
        .iter()
        .flat_map(|id| rows_for(s, id))
        .map(|m| (m, undecided_pairs(m, &pick.cand)))
        .filter(|(_, u)| !u.is_empty())
        .collect();
    pick.apply_gains(s, &prof);
    pick.settle(s);
    pick.hold_at_risk(&open_guards);
    pick.not_measured(s, &prof);
    pick.finish(s, prof)
}

/// Every profile's recommendation, then one `general` line per group
/// whose settings hide NUMA.
pub(super) fn recommend(s: &Study) -> Vec<Recommendation> {
    let mut out: Vec<Recommendation> =
        profiles(s).into_iter().map(|p| recommend_for(s, p)).collect();
    for (i, g) in s.groups.iter().enumerate() {
        if g.hidden_numa.is_some() {
            out.push(Recommendation {
                profile: ForWhom::Workload(WorkloadProfile::General),
                reasons: vec![Reason::HidesNuma { group: i }],
                against: None,
                no_pick_between: Vec::new(),
                missing: None,
                next: Vec::new(),
                group: None,
                decided_by: None,
                excluded: Vec::new(),
                no_pick: None,
            });
        }
    }
    out
}

/// The settings (detected and declared) where group `g` differs from
/// group `a`, as indices into [`Study::settings_diff`]: what the user
/// declared and the NUMA mode's name say most, so they come first; at
/// most six.
fn differing(s: &Study, a: usize, g: usize) -> Vec<usize> {
    let rank = |d: &SettingDiff| match d.setting.as_str() {
        k if k.starts_with("declared.") => 0,
        "numa_mode_label" => 1,
        _ => 2,
    };
    let mut v: Vec<usize> = (0..s.settings_diff.len())
        .filter(|&i| s.settings_diff[i].values[g] != s.settings_diff[i].values[a])
        .collect();
    v.sort_by_key(|&i| rank(&s.settings_diff[i]));
    v.truncate(6);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::tests::{rec, run_of};
    use crate::study::{Floors, GroupInput};
    use results::run::{LoadedRun, RunId};
    use results::runstats::Criteria;
    use serde_json::json;

    /// A complete run of a machine of two packages of one node each,
    /// started `id` minutes into the series: bound (`bw` global, and each
    /// package's `bw-package` record at half of it) and interleaved
    /// bandwidth, a latency matrix whose local cells are `local` ns and
    /// remote ones `remote` ns, and each package's chases to its own and
    /// the other package's memory at the same figures.
    fn run(
        id: i64,
        label: &str,
        global: f64,
        interleave: f64,
        local: f64,
        remote: f64,
    ) -> LoadedRun {
        let bw = |mode: &str, gbs: f64| {
            rec("bw", json!({"mode": mode, "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs}))
        };
        let lat = |c: u32, m: u32, ns: f64| {
            rec("lat", json!({"mode": "matrix", "cpu_node": c, "mem_node": m, "median_ns": ns}))
        };
        let scope = |p: u32, to: u32, policy: &str| {
            let memory = if p == to { "own-package" } else { "other-package" };
            json!({"package": p, "memory": memory, "mem_package": to, "policy": policy,
                   "cpus": p.to_string(), "cpu_nodes": p.to_string(), "mem_nodes": to.to_string()})
        };
        let bw_pkg = |p: u32, gbs: f64| {
            rec(
                "bw",
                json!({"mode": "package", "kernel": "triad", "best_gbs": gbs, "median_gbs": gbs,
                       "scope": scope(p, p, "bind-per-node")}),
            )
        };
        let lat_pkg = |p: u32, to: u32, ns: f64| {
            rec(
                "lat",
                json!({"mode": "package", "cpu": p, "median_ns": ns, "interleave": to.to_string(),
                       "scope": scope(p, to, "interleave")}),
            )
        };
        let mut r = run_of(
            vec![
                bw("global", global),
                bw_pkg(0, global / 2.0),
                bw_pkg(1, global / 2.0),
                bw("interleave", interleave),
                lat(0, 0, local),
                lat(0, 1, remote),
                lat(1, 0, remote),
                lat(1, 1, local),
                lat_pkg(0, 0, local),
                lat_pkg(0, 1, remote),
                lat_pkg(1, 0, remote),
                lat_pkg(1, 1, local),
            ],
            Some(2),
        );
        r.summary.id = RunId(id);
        r.summary.label = Some(label.into());
        r.summary.started = format!("2026-01-01T00:{id:02}:00Z");
        r.machine_info = serde_json::from_value(json!({"packages": 2})).unwrap();
        r.config =
            serde_json::from_value(json!({"nodes": 2, "declared": {"bios.x": label}})).unwrap();
        r
    }

    /// Groups A and B of three runs each, taken A B A B A B, every figure
    /// of B `f` times A's (`[global, interleave, local, remote]`), each
    /// run's figures off by `jitter` (a fraction, alternately up and down).
    fn study(b: [f64; 4], jitter: f64) -> Study {
        let a = [400.0, 300.0, 100.0, 200.0];
        let (mut ga, mut gb) = (Vec::new(), Vec::new());
        for i in 0..6i64 {
            let j = 1.0 + jitter * [1.0, -1.0, 0.5, 0.0, -0.5, 1.0][i as usize];
            let f = |k: usize| a[k] * j * if i % 2 == 1 { b[k] } else { 1.0 };
            let (label, g) = if i % 2 == 0 { ("A", &mut ga) } else { ("B", &mut gb) };
            g.push(run(i + 1, label, f(0), f(1), f(2), f(3)));
        }
        let groups = vec![
            GroupInput { reference: "label:A".into(), runs: ga },
            GroupInput { reference: "label:B".into(), runs: gb },
        ];
        Study::build(&groups, 0, &Criteria::default(), &Floors::default())
    }

    fn rec_of(s: &Study, p: WorkloadProfile) -> &Recommendation {
        s.recommendations.iter().find(|r| r.profile == ForWhom::Workload(p)).unwrap()
    }

    #[test]
    fn a_guard_drops_a_group_whatever_it_gains_elsewhere() {
        // B's spread latency is 20% lower (the database's gain) but its
        // interleaved bandwidth 6% lower (the database's guard): dropped.
        let s = study([1.0, 0.94, 0.8, 0.8], 0.002);
        let db = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(db.group, Some(0), "{:?}", db.reasons);
        assert_eq!(
            db.decided_by.as_ref().map(ToString::to_string).as_deref(),
            Some("interleave_bw_gbs"),
            "{:?}",
            db.reasons
        );
        // B loses to A on the guard; nothing it gains is weighed against it.
        assert!(
            matches!(
                db.reasons.as_slice(),
                [Reason::LosesOn { metric, group: 1, beaten_by: 0, change }]
                    if *metric == "interleave_bw_gbs" && change.change_pct > 5.0
            ),
            "{:?}",
            db.reasons
        );
        assert_eq!(db.against.as_ref().map(|a| a.group), Some(1), "{:?}", db.reasons);
    }

    #[test]
    fn a_pick_that_may_lose_on_an_undecided_guard_is_not_made() {
        // B's spread latency is 20% lower; its interleaved bandwidth 3.5%
        // lower in 3% noise: the guard cannot tell whether B loses beyond
        // the margin, so B (behind on it) is not picked.
        let s = study([1.0, 0.965, 0.8, 0.8], 0.03);
        let db = rec_of(&s, WorkloadProfile::Database);
        let il = s.metrics.iter().find(|m| m.metric == "interleave_bw_gbs").unwrap();
        assert_eq!(
            il.pairs[0][1].as_ref().map(|p| p.verdict),
            Some(GroupVerdict::Undecided),
            "{:?}",
            db.reasons
        );
        assert_eq!(db.group, None, "{:?}", db.reasons);
        assert_eq!(
            db.no_pick,
            Some(NoPick::Undecided { metric: "interleave_bw_gbs".into(), groups: vec![0, 1] }),
            "{:?}",
            db.reasons
        );
        assert!(
            db.reasons.contains(&Reason::MayLoseOn {
                metric: "interleave_bw_gbs".into(),
                group: 1,
                rivals: vec![0]
            }),
            "{:?}",
            db.reasons
        );
        // B ahead on the same undecided guard cannot be dropped by it: the
        // spread latency picks B.
        let s = study([1.0, 1.035, 0.8, 0.8], 0.03);
        let db = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(db.group, Some(1), "{:?}", db.reasons);
        assert_eq!(
            db.decided_by.as_ref().map(ToString::to_string).as_deref(),
            Some(catalogue::SPREAD_LAT),
            "{:?}",
            db.reasons
        );
    }

    #[test]
    fn a_gain_left_undecided_is_not_passed_over_to_the_next() {
        // Hpc: B's bound bandwidth 5% higher in 8% noise (undecided), its
        // local latency 20% lower (decided): the latency does not pick.
        let s = study([1.05, 1.0, 0.8, 1.0], 0.08);
        let hpc = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(hpc.group, None, "{:?}", hpc.reasons);
        assert_eq!(
            hpc.no_pick,
            Some(NoPick::Undecided { metric: catalogue::LOCAL_BW_PKG.into(), groups: vec![0, 1] }),
            "{:?}",
            hpc.reasons
        );
    }

    #[test]
    fn hpc_bound_per_domain_is_not_held_to_the_interleaved_bandwidth() {
        // B: +10% bound per domain, -10% interleaved. A workload bound per
        // domain sees the first only.
        let s = study([1.1, 0.9, 1.0, 1.0], 0.002);
        let hpc = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(hpc.group, Some(1), "{:?}", hpc.reasons);
        assert_eq!(
            hpc.decided_by.as_ref().map(ToString::to_string).as_deref(),
            Some(catalogue::LOCAL_BW_PKG),
            "{:?}",
            hpc.reasons
        );
        // The database, whose scans stream spread memory, keeps A.
        assert_eq!(rec_of(&s, WorkloadProfile::Database).group, Some(0));
    }

    #[test]
    fn a_profile_that_cannot_pick_says_why() {
        // Identical settings, quiet: every figure ties.
        let s = study([1.0; 4], 0.002);
        for p in [WorkloadProfile::Database, WorkloadProfile::Hpc, WorkloadProfile::Latency] {
            let r = rec_of(&s, p);
            assert_eq!(r.group, None, "{p:?}: {:?}", r.reasons);
            assert_eq!(
                r.no_pick,
                Some(NoPick::Tie { groups: vec![0, 1] }),
                "{p:?}: {:?}",
                r.reasons
            );
        }
        // A 5% gap in 8% noise: the first figure that ranks them is
        // undecided, and the reason names it.
        let s = study([1.0, 1.0, 0.95, 0.95], 0.08);
        let r = rec_of(&s, WorkloadProfile::Database);
        assert_eq!(
            r.no_pick,
            Some(NoPick::Undecided { metric: catalogue::SPREAD_LAT.into(), groups: vec![0, 1] }),
            "{:?}",
            r.reasons
        );
        // Hpc has no guard: its first gain, the bound bandwidth per
        // package, is undecided, and the latency after it picks nothing.
        let r = rec_of(&s, WorkloadProfile::Hpc);
        assert_eq!(
            r.no_pick,
            Some(NoPick::Undecided { metric: catalogue::LOCAL_BW_PKG.into(), groups: vec![0, 1] }),
            "{:?}",
            r.reasons
        );
        // A pick carries no reason.
        let s = study([1.0, 1.0, 0.8, 0.8], 0.002);
        let r = rec_of(&s, WorkloadProfile::Database);
        assert_eq!((r.group, &r.no_pick), (Some(1), &None), "{:?}", r.reasons);
        // Nothing the profile ranks by in two groups: the runs measured
        // bandwidth only.
        let mut s = study([1.0; 4], 0.002);
        s.metrics.retain(|m| m.metric.to_string().ends_with("_gbs"));
        let r = recommend(&s)
            .into_iter()
            .find(|r| r.profile == ForWhom::Workload(WorkloadProfile::Latency))
            .unwrap();
        assert_eq!(r.no_pick, Some(NoPick::NothingMeasured), "{:?}", r.reasons);
        // In JSON, a tagged reason.
        let v = serde_json::to_value(NoPick::Tie { groups: vec![0, 1] }).unwrap();
        assert_eq!(v, json!({"reason": "tie", "groups": [0, 1]}));
    }
}
