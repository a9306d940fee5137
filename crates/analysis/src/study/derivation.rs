//! What a study's runs derived instead of measuring at a metric's scope
//! ([`crate::scope`]), and the figures they left out for missing cells:
//! the labels and notes a study shows.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::MetricId;
use crate::data::RunData;
use crate::scope::{DerivedFrom, Missing};

use super::{GroupDerived, RowDerived, StudyNote};

/// What a study's runs derived instead of measuring at the metric's
/// scope, and which figures they left out for missing cells: the labels
/// and notes `compare` shows ([`super::Study::build`]).
#[derive(Debug, Clone, Default)]
pub struct Derivation {
    /// Per group, per run.
    runs: Vec<Vec<RunDerivation>>,
}

#[derive(Debug, Clone, Default)]
struct RunDerivation {
    /// Metric id -> how it was derived.
    derived: BTreeMap<MetricId, DerivedFrom>,
    /// Every metric id the run has.
    has: BTreeSet<MetricId>,
    missing: Vec<Missing>,
    /// Its package-scope steps that measured nothing, and why.
    steps: Vec<results::scope::StepNote>,
}

impl Derivation {
    /// The derivations of every run of `groups`.
    pub fn of(groups: &[super::GroupInput]) -> Derivation {
        let runs = groups
            .iter()
            .map(|g| {
                g.runs
                    .iter()
                    .map(|r| {
                        let (values, missing) = crate::catalogue::catalogue_and_missing(r);
                        RunDerivation {
                            derived: values
                                .iter()
                                .filter_map(|m| Some((m.def.id.clone(), m.derived?)))
                                .collect(),
                            has: values.iter().map(|m| m.def.id.clone()).collect(),
                            missing,
                            steps: RunData::of(r).step_notes,
                        }
                    })
                    .collect()
            })
            .collect();
        Derivation { runs }
    }

    /// How group `g`'s value of `key` was derived: `None` when every run
    /// of the group that has it measured it; with some runs measured and
    /// some derived, which runs were derived (the group is then derived
    /// too: one figure never mixes the two silently).
    pub fn of_group(&self, g: usize, key: &MetricId) -> Option<GroupDerived> {
        let runs = self.runs.get(g)?;
        let with: Vec<&RunDerivation> = runs.iter().filter(|r| r.has.contains(key)).collect();
        let from: BTreeSet<DerivedFrom> =
            with.iter().filter_map(|r| r.derived.get(key).copied()).collect();
        let n = with.iter().filter(|r| r.derived.contains_key(key)).count();
        if n == 0 {
            return None;
        }
        let runs = (n != with.len()).then_some((n, with.len()));
        Some(GroupDerived { from: from.into_iter().collect(), runs })
    }

    /// How a row whose groups' values are `derived` (one per group) was
    /// derived: the groups' derivations, and the derived groups named
    /// where another group measured the metric; `None` when none is
    /// derived.
    pub fn row(&self, key: &MetricId, derived: &[Option<GroupDerived>]) -> Option<RowDerived> {
        let mut how: Vec<GroupDerived> = Vec::new();
        for d in derived.iter().flatten() {
            if !how.contains(d) {
                how.push(d.clone());
            }
        }
        if how.is_empty() {
            return None;
        }
        let named = (!self.measured_groups(key, derived).is_empty()).then(|| {
            derived.iter().enumerate().filter(|(_, d)| d.is_some()).map(|(g, _)| g).collect()
        });
        Some(RowDerived { how, named })
    }

    /// The groups that have metric `key` and measured it (`derived`
    /// `None`).
    fn measured_groups(&self, key: &MetricId, derived: &[Option<GroupDerived>]) -> Vec<usize> {
        derived
            .iter()
            .enumerate()
            .filter(|(g, d)| {
                d.is_none()
                    && self.runs.get(*g).is_some_and(|rs| rs.iter().any(|r| r.has.contains(key)))
            })
            .map(|(g, _)| g)
            .collect()
    }

    /// The note of a metric some groups measured and others derived:
    /// shown side by side, not judged across.
    pub fn mixed_note(
        &self,
        key: &MetricId,
        derived: &[Option<GroupDerived>],
    ) -> Option<StudyNote> {
        let d: Vec<usize> =
            derived.iter().enumerate().filter(|(_, d)| d.is_some()).map(|(g, _)| g).collect();
        let m = self.measured_groups(key, derived);
        if d.is_empty() || m.is_empty() {
            return None;
        }
        Some(StudyNote::MixedScope { metric: key.clone(), measured: m, derived: d })
    }

    /// The runs that derived some metric, grouped by what they derived
    /// and why they have no package-scope records (their stored step
    /// notes, or that they hold none): one note per such group of runs.
    pub fn why_notes(&self, infos: &[super::StudyGroup]) -> Vec<StudyNote> {
        let mut out: Vec<StudyNote> = Vec::new();
        for (g, runs) in self.runs.iter().enumerate() {
            for (i, r) in runs.iter().enumerate() {
                if r.derived.is_empty() {
                    continue;
                }
                // In the order of their text ids.
                let mut ids: Vec<MetricId> = r.derived.keys().cloned().collect();
                ids.sort_by_cached_key(|id| id.to_string());
                let run = infos[g].runs.get(i).copied();
                let same = |n: &&mut StudyNote| {
                    matches!(n, StudyNote::Derived { metrics, steps, .. }
                        if *metrics == ids && *steps == r.steps)
                };
                match out.iter_mut().find(same) {
                    Some(StudyNote::Derived { runs, .. }) => match runs.last_mut() {
                        Some((last, ids)) if *last == g => ids.push(run),
                        _ => runs.push((g, vec![run])),
                    },
                    _ => out.push(StudyNote::Derived {
                        metrics: ids,
                        runs: vec![(g, vec![run])],
                        steps: r.steps.clone(),
                    }),
                }
            }
        }
        out
    }

    /// Per run, the figures left out because cells are missing.
    pub fn missing_notes(&self, infos: &[super::StudyGroup]) -> Vec<StudyNote> {
        let mut out = Vec::new();
        for (g, runs) in self.runs.iter().enumerate() {
            for (i, r) in runs.iter().enumerate() {
                for m in &r.missing {
                    out.push(StudyNote::Missing {
                        group: g,
                        run: infos[g].runs.get(i).copied(),
                        metric: m.metric.into(),
                        what: m.what.clone(),
                    });
                }
            }
        }
        out
    }
}
