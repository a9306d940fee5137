//! The metric rows of a study: every catalogue metric any run holds, in
//! catalogue order, each group judged against the baseline and every pair
//! of groups against each other.

use std::collections::{BTreeMap, BTreeSet};

use results::run::LoadedRun;
use results::runstats::{
    bracketed_study, judge, judge_bracketed, judge_fit, noise_is_even, Basis, Criteria,
    GroupVerdict, Judgement, NoiseFloor, StudyFit,
};

use super::derivation::Derivation;
use super::floors::Floors;
use super::recommend::best_of;
use super::{GroupInput, GroupMetric, Pair, StudyMetric, StudyNote};
use crate::catalogue::{self, MetricDef, MetricId};
use crate::layout::Layout;

/// The floor for a pair of group sizes ([`Floors::for_sizes`]).
type FloorFor = Result<Option<NoiseFloor>, (usize, usize)>;

/// The values of every catalogue metric in a run, each with its samples
/// (empty: the value is the only one).
type RunValues = BTreeMap<MetricId, (f64, Vec<f64>)>;

/// Each run's place in the study's series and its metrics' values.
type Timeline = Vec<Vec<(f64, BTreeMap<MetricId, f64>)>>;

/// A group with fewer runs than this that measured a metric is judged on
/// the samples inside its runs (each repeat of `exec`) instead of one
/// value per run.
const POOL_SAMPLES_BELOW_RUNS: usize = 3;

/// What every row of a study is made from.
pub(super) struct RowMaker<'a> {
    groups: &'a [GroupInput],
    baseline: usize,
    policy: &'a Criteria,
    floors: &'a Floors,
    layouts: &'a [Layout],
    derivation: &'a Derivation,
    /// Per group and run: every catalogue metric's value and samples.
    per_group: Vec<Vec<RunValues>>,
    /// Per group and run: its place in the study's series and its values,
    /// for the brackets of alternated groups.
    timeline: Timeline,
    g_has_runs: Vec<bool>,
}

impl<'a> RowMaker<'a> {
    pub(super) fn new(
        groups: &'a [GroupInput],
        baseline: usize,
        policy: &'a Criteria,
        floors: &'a Floors,
        layouts: &'a [Layout],
        derivation: &'a Derivation,
    ) -> RowMaker<'a> {
        let per_group: Vec<Vec<RunValues>> = groups
            .iter()
            .map(|g| {
                g.runs
                    .iter()
                    .map(|r| {
                        catalogue::catalogue(r)
                            .into_iter()
                            .map(|m| (m.def.id, (m.value, m.samples)))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        RowMaker {
            groups,
            baseline,
            policy,
            floors,
            layouts,
            derivation,
            per_group,
            timeline: timeline_of(groups),
            g_has_runs: groups.iter().map(|g| !g.runs.is_empty()).collect(),
        }
    }

    /// Every row, and the groups judged on the samples inside one run (one
    /// `exec` call): the group and that run's index in it. The notes on
    /// rows of derived figures go to `notes`.
    pub(super) fn rows(
        &self,
        notes: &mut Vec<StudyNote>,
    ) -> (Vec<StudyMetric>, BTreeMap<usize, usize>) {
        let mut rows = Vec::new();
        let mut from_one_run: BTreeMap<usize, usize> = BTreeMap::new();
        for def in metric_defs(self.groups) {
            if self.same_as_policy_row(&def) {
                continue;
            }
            let key = def.id.clone();
            let values = self.values_of(&key, &mut from_one_run);
            let judging = Judging::new(self, &def, key, values);
            rows.push(judging.row(notes));
        }
        (rows, from_one_run)
    }

    /// A program figure without its policy (runs of one policy each) says
    /// nothing more where every run that has it measured the same one
    /// policy: the row `exec_metric[POLICY]` is the same.
    fn same_as_policy_row(&self, def: &MetricDef) -> bool {
        if !catalogue::exec_policy_free(&def.id) {
            return false;
        }
        let under: BTreeSet<&MetricId> = self
            .per_group
            .iter()
            .flatten()
            .filter(|m| m.contains_key(&def.id))
            .flat_map(|m| m.keys())
            .filter(|k| k.policy().is_some() && k.without_policy() == def.id)
            .collect();
        under.len() == 1
    }

    /// Each group's values of `key`: one value per run with 3 or more runs;
    /// with fewer, the pooled samples of the runs (each repeat of `exec` is
    /// a whole run of the program, alternated across policies).
    fn values_of(
        &self,
        key: &MetricId,
        from_one_run: &mut BTreeMap<usize, usize>,
    ) -> Vec<Vec<f64>> {
        self.per_group
            .iter()
            .enumerate()
            .map(|(gi, rs)| {
                let have: Vec<&(f64, Vec<f64>)> = rs.iter().filter_map(|m| m.get(key)).collect();
                if have.len() >= POOL_SAMPLES_BELOW_RUNS
                    || have.iter().all(|(_, samples)| samples.len() < 2)
                {
                    return have.iter().map(|(v, _)| *v).collect();
                }
                if let (1, Some(ri)) = (have.len(), rs.iter().position(|m| m.contains_key(key))) {
                    from_one_run.insert(gi, ri);
                }
                have.iter()
                    .flat_map(
                        |(v, samples)| {
                            if samples.is_empty() {
                                vec![*v]
                            } else {
                                samples.clone()
                            }
                        },
                    )
                    .collect()
            })
            .collect()
    }
}

/// Every catalogue metric any run holds, in catalogue order.
fn metric_defs(groups: &[GroupInput]) -> Vec<MetricDef> {
    let mut defs: Vec<MetricDef> = Vec::new();
    for r in groups.iter().flat_map(|g| &g.runs) {
        for m in catalogue::catalogue(r) {
            if !defs.iter().any(|d| d.id == m.def.id) {
                defs.push(m.def);
            }
        }
    }
    defs.sort_by_key(|d| catalogue::rank(&d.id));
    defs
}

/// Each run's place in the study's series (its rank by start, then by id)
/// and its values, for the brackets of alternated groups.
fn timeline_of(groups: &[GroupInput]) -> Timeline {
    let started =
        |r: &LoadedRun| results::time::parse_rfc3339(&r.summary.started).unwrap_or(i64::MIN);
    let mut order: Vec<(i64, results::run::RunId)> =
        groups.iter().flat_map(|g| &g.runs).map(|r| (started(r), r.summary.id)).collect();
    order.sort();
    let place =
        |r: &LoadedRun| order.binary_search(&(started(r), r.summary.id)).unwrap_or(0) as f64;
    groups
        .iter()
        .map(|g| {
            g.runs
                .iter()
                .map(|r| {
                    let v = catalogue::catalogue(r).into_iter().map(|m| (m.def.id, m.value));
                    (place(r), v.collect())
                })
                .collect()
        })
        .collect()
}

/// One metric's row as it is judged: its values per group, which groups'
/// figures are derived, and the noise pooled over the study's alternated
/// groups where it can be.
struct Judging<'a, 'm> {
    m: &'m RowMaker<'a>,
    def: &'m MetricDef,
    key: MetricId,
    values: Vec<Vec<f64>>,
    derived: Vec<Option<super::GroupDerived>>,
    pooled: Option<StudyFit>,
}

impl<'a, 'm> Judging<'a, 'm> {
    fn new(
        m: &'m RowMaker<'a>,
        def: &'m MetricDef,
        key: MetricId,
        values: Vec<Vec<f64>>,
    ) -> Judging<'a, 'm> {
        let derived: Vec<Option<super::GroupDerived>> =
            (0..m.groups.len()).map(|g| m.derivation.of_group(g, &key)).collect();
        let mut j = Judging { m, def, key, values, derived, pooled: None };
        j.pooled = j.pooled_noise();
        j
    }

    /// The group's `(place, value)` series of this metric.
    fn series(&self, g: usize) -> Vec<(f64, f64)> {
        self.m.timeline[g].iter().filter_map(|(t, v)| Some((*t, *v.get(&self.key)?))).collect()
    }

    /// One run-to-run noise for the study's alternated groups of 3+ runs
    /// each, where no group's own scatter is far above the others' (the
    /// premise in docs/store.md, checked by runstats::noise_is_even);
    /// otherwise each pair on its own.
    fn pooled_noise(&self) -> Option<StudyFit> {
        let pool_in: Vec<Vec<(f64, f64)>> = (0..self.values.len())
            .map(|g| {
                let s = self.series(g);
                if self.values[g].len() == s.len() && s.len() >= 3 {
                    s
                } else {
                    Vec::new()
                }
            })
            .collect();
        noise_is_even(&pool_in)
            .ok()
            .and_then(|_| bracketed_study(&pool_in).ok())
            .filter(|f| f.groups > 2)
    }

    /// The floor for groups of `runs_needed` runs: a change inside it stays
    /// undecided however many runs are taken.
    fn held_by_floor(&self, j: &Judgement) -> Option<f64> {
        // Bracketed verdicts are drift-free: no floor holds them.
        if j.basis == Basis::Bracketed {
            return None;
        }
        let n = j.runs_needed? as usize;
        let f = self.m.floors.for_sizes(&self.key, n, n, self.m.policy).ok().flatten()?;
        let change = (1.0 + j.change_pct / 100.0).ln().abs();
        (change <= (1.0 + f.pct / 100.0).ln()).then_some(f.pct)
    }

    /// Group `b` judged against group `a`, with the floor it was held to.
    fn judge_pair(&self, a: usize, b: usize) -> Option<(Judgement, FloorFor)> {
        let (def, policy, values) = (self.def, self.m.policy, &self.values);
        // A per-node bandwidth figure of nodes of another size is not the
        // same metric: no verdict (see the notes).
        if def.sized_by_node() && self.m.layouts[a].structure() != self.m.layouts[b].structure() {
            return None;
        }
        // A derived figure is never judged against a measured one.
        if self.derived[a].is_some() != self.derived[b].is_some() {
            return None;
        }
        // Groups judged one value per run whose runs alternate: each run
        // against the other group's runs on both sides of it, so that the
        // machine's drift cancels (results::runstats::bracketed). The rank
        // interval below assumes the runs of a group exchangeable, which a
        // drifting machine breaks.
        let (sa, sb) = (self.series(a), self.series(b));
        let mut unbracketed = None;
        if values[a].len() == sa.len() && values[b].len() == sb.len() {
            if let Some(fit) = self.pooled.as_ref().and_then(|f| f.pair(a, b)) {
                let j = judge_fit(&fit, &sa, &sb, def.higher_is_better, policy);
                return Some((j, Ok(None)));
            }
            match judge_bracketed(&sa, &sb, def.higher_is_better, policy) {
                Ok(j) => return Some((j, Ok(None))),
                Err(why) => unbracketed = Some(why),
            }
        }
        let floor = self.m.floors.for_sizes(&self.key, values[a].len(), values[b].len(), policy);
        let f = floor.as_ref().ok().and_then(Option::as_ref);
        let mut j = judge(&values[a], &values[b], def.higher_is_better, policy, f)?;
        // One run on a side can never be bracketed: "too few runs" says it
        // all there.
        if j.verdict == GroupVerdict::Undecided && sa.len().min(sb.len()) >= 2 {
            j.undecided_because = unbracketed;
        }
        Some((j, floor))
    }

    /// Group `i`'s cell: its values, and its verdict against the baseline.
    fn cell(&self, i: usize) -> GroupMetric {
        let v = &self.values[i];
        let mut c = GroupMetric {
            n: v.len(),
            median: results::stats::median(v),
            values: v.clone(),
            change_pct: None,
            ci_low_pct: None,
            ci_high_pct: None,
            verdict: None,
            runs_needed: None,
            basis: None,
            noise_floor_pct: None,
            noise_floor_source: None,
            floor_runs_needed: None,
            more_runs_held_by_floor_pct: None,
            brackets: None,
            pooled_groups: None,
            undecided_because: None,
            not_applicable: if self.m.g_has_runs[i] {
                self.def.impossible(&self.m.layouts[i])
            } else {
                None
            },
            derived: self.derived[i].clone(),
        };
        if i == self.m.baseline {
            return c;
        }
        let Some((j, floor)) = self.judge_pair(self.m.baseline, i) else { return c };
        c.brackets = j.brackets;
        c.pooled_groups = j.pooled_groups;
        c.undecided_because = j.undecided_because;
        if let Ok(Some(f)) = &floor {
            c.noise_floor_pct = Some(f.pct);
            c.noise_floor_source = Some(self.m.floors.source(&self.key, f));
        }
        if let Err((have, need)) = floor {
            c.floor_runs_needed = Some(need.saturating_sub(have));
        }
        c.change_pct = Some(j.change_pct);
        c.ci_low_pct = j.ci_low_pct;
        c.ci_high_pct = j.ci_high_pct;
        c.verdict = Some(j.verdict);
        c.basis = Some(j.basis);
        c.runs_needed = j.runs_needed;
        if let Some(pct) = self.held_by_floor(&j) {
            c.runs_needed = None;
            c.more_runs_held_by_floor_pct = Some(pct);
        }
        c
    }

    /// `pairs[a][b]`: group `b` judged against group `a`.
    fn pairs(&self) -> Vec<Vec<Option<Pair>>> {
        let k = self.values.len();
        (0..k)
            .map(|a| {
                (0..k)
                    .map(|b| {
                        let (j, _) = self.judge_pair(a, b).filter(|_| a != b)?;
                        let held = self.held_by_floor(&j);
                        Some(Pair {
                            verdict: j.verdict,
                            change_pct: j.change_pct,
                            ci_low_pct: j.ci_low_pct,
                            ci_high_pct: j.ci_high_pct,
                            runs_needed: j.runs_needed.filter(|_| held.is_none()),
                            more_runs_held_by_floor_pct: held,
                        })
                    })
                    .collect()
            })
            .collect()
    }

    /// The row: every group's cell, the pairs, the baseline's floor, and
    /// how a derived figure was derived (its note goes to `notes`).
    fn row(&self, notes: &mut Vec<StudyNote>) -> StudyMetric {
        let (def, key) = (self.def, &self.key);
        let cells: Vec<GroupMetric> = (0..self.values.len()).map(|i| self.cell(i)).collect();
        let nb = self.values[self.m.baseline].len();
        let base_floor = self.m.floors.for_sizes(key, nb, nb, self.m.policy).ok().flatten();
        let mut row = StudyMetric {
            metric: key.clone(),
            name: def.name.clone(),
            unit: def.unit.clone(),
            higher_is_better: def.higher_is_better,
            relation: def.relation,
            scope: def.scope,
            groups: cells,
            best_group: None,
            noise_floor_pct: base_floor.as_ref().map(|f| f.pct),
            noise_floor_source: base_floor.as_ref().map(|f| self.m.floors.source(key, f)),
            pairs: self.pairs(),
            derived: None,
        };
        let d = self.m.derivation;
        if let Some(how) = d.row(key, &self.derived) {
            row.derived = Some(how);
            notes.extend(d.mixed_note(key, &self.derived));
        }
        let all: Vec<usize> = (0..self.values.len()).collect();
        row.best_group = best_of(&row, &all);
        row
    }
}
