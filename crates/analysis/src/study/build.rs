//! Building a study: the groups as the runs give them, the settings that
//! differ, what the reader must be warned of and told, then the metric
//! rows ([`super::rows`]) and the recommendations ([`super::recommend`]).

use std::collections::{BTreeMap, BTreeSet};

use results::run::{LoadedRun, RunId, RunStatus};
use results::runstats::Criteria;

use super::derivation::Derivation;
use super::floors::{Floors, LevelShift};
use super::recommend::recommend;
use super::rows::RowMaker;
use super::{
    impossible_of, settings_of, GroupInput, HiddenNuma, SettingDiff, SettingValue, Study,
    StudyGroup, StudyNote, StudyWarning,
};
use crate::catalogue;
use crate::data::RunData;
use crate::layout::Layout;

impl Study {
    /// Builds the study of `groups` against `groups[baseline]`.
    ///
    /// # Panics
    /// When `baseline` is out of range.
    pub fn build(
        groups: &[GroupInput],
        baseline: usize,
        policy: &Criteria,
        floors: &Floors,
    ) -> Study {
        assert!(baseline < groups.len(), "baseline index out of range");
        let layouts = layouts_of(groups);
        let mut warnings = Vec::new();
        let mut infos = Vec::new();
        let mut settings = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let (info, merged) = group_of(i, g, &mut warnings);
            infos.push(info);
            settings.push(merged);
        }
        warnings.extend(level_shift_warnings(groups, floors));
        let all_machines: BTreeSet<&String> = infos.iter().flat_map(|g| &g.machines).collect();
        let across_machines = all_machines.len() > 1;
        if across_machines {
            warnings.push(machines_warning(groups, all_machines.len()));
        }
        let (settings_diff, settings_same) = compare_settings(groups, &settings, across_machines);
        name_twins(&mut infos);
        let mut notes = Vec::new();
        if settings_diff.is_empty() {
            notes.push(nothing_differs_note(groups));
        }
        // Per group and run: the metrics derived instead of measured at
        // their scope, and the figures left out for missing cells.
        let derivation = Derivation::of(groups);
        notes.extend(derivation.missing_notes(&infos));
        let maker = RowMaker::new(groups, baseline, policy, floors, &layouts, &derivation);
        let (rows, from_one_run) = maker.rows(&mut notes);
        notes.extend(derivation.why_notes(&infos));
        notes.extend(one_exec_call_note(&from_one_run, &infos));
        notes.extend(node_size_notes(&rows, &layouts, &infos));
        let mut study = Study {
            groups: infos,
            baseline,
            settings_diff,
            settings_same,
            metrics: rows,
            recommendations: Vec::new(),
            confidence: policy.confidence,
            margin_pct: policy.margin_pct,
            across_machines,
            warnings,
            notes,
            layouts,
            impossible: impossible_of(groups),
            marked_inputs: Vec::new(),
        };
        study.marked_inputs = crate::inputs::marked_inputs(
            groups.iter().map(|g| g.runs.as_slice()),
            &study.metrics.iter().map(|m| m.metric.clone()).collect::<Vec<_>>(),
        );
        study.recommendations = recommend(&study);
        study
    }
}

/// Where each group's nodes sit (its first run's): what makes a metric
/// impossible for it, and whether its per-node figures are the same metric
/// as another group's.
fn layouts_of(groups: &[GroupInput]) -> Vec<Layout> {
    groups
        .iter()
        .map(|g| {
            g.runs.first().map_or_else(Layout::default, |r| {
                Layout::of(r, catalogue::os_nodes(r, &RunData::of(r)))
            })
        })
        .collect()
}

/// One group (`index`) as its runs give it, and its settings merged over
/// its runs; what the reader must be warned of about it goes to
/// `warnings`.
fn group_of(
    index: usize,
    g: &GroupInput,
    warnings: &mut Vec<StudyWarning>,
) -> (StudyGroup, BTreeMap<String, SettingValue>) {
    let labels: BTreeSet<Option<&str>> =
        g.runs.iter().map(|r| r.summary.label.as_deref()).collect();
    let label = match labels.iter().next() {
        Some(Some(l)) if labels.len() == 1 => l.to_string(),
        _ => g.reference.trim_start_matches("label:").to_string(),
    };
    let mut configs: Vec<String> = Vec::new();
    let mut machines: Vec<String> = Vec::new();
    for r in &g.runs {
        if !configs.contains(&r.summary.config_hash) {
            configs.push(r.summary.config_hash.clone());
        }
        if !machines.contains(&r.summary.machine_fingerprint) {
            machines.push(r.summary.machine_fingerprint.clone());
        }
    }
    let (merged, inner_diff) = merged_settings(&g.runs);
    if configs.len() > 1 {
        warnings.push(StudyWarning::MixedConfigs {
            group: index,
            configs: configs.clone(),
            differ: inner_diff,
        });
    }
    for r in &g.runs {
        let packages = r.machine_info.packages.as_ref().map(|c| c.get());
        for what in crate::declared::contradictions(&r.config, packages) {
            warnings.push(StudyWarning::Contradiction { group: index, run: r.summary.id, what });
        }
    }
    let incomplete: Vec<(RunId, RunStatus)> = g
        .runs
        .iter()
        .filter(|r| r.summary.status != RunStatus::Complete)
        .map(|r| (r.summary.id, r.summary.status))
        .collect();
    if !incomplete.is_empty() {
        warnings.push(StudyWarning::NotComplete { group: index, runs: incomplete.clone() });
    }
    let info = StudyGroup {
        reference: g.reference.clone(),
        label,
        runs: g.runs.iter().map(|r| r.summary.id).collect(),
        configs,
        machines,
        not_complete: incomplete,
        hidden_numa: hidden_numa_of(&g.runs),
        one_node: !g.runs.is_empty()
            && g.runs.iter().all(|r| catalogue::os_nodes(r, &RunData::of(r)) <= 1),
    };
    (info, merged)
}

/// The settings of a group's runs, one value each (mixed where the runs
/// disagree), and the settings that differ inside the group.
fn merged_settings(runs: &[LoadedRun]) -> (BTreeMap<String, SettingValue>, Vec<String>) {
    let per_run: Vec<BTreeMap<String, String>> = runs.iter().map(settings_of).collect();
    let keys: BTreeSet<&String> = per_run.iter().flat_map(|m| m.keys()).collect();
    let mut merged = BTreeMap::new();
    let mut inner_diff = Vec::new();
    for k in keys {
        let vals: BTreeSet<Option<&String>> = per_run.iter().map(|m| m.get(k)).collect();
        let v = match vals.iter().next() {
            Some(Some(one)) if vals.len() == 1 => SettingValue::One(one.to_string()),
            _ => {
                inner_diff.push(k.clone());
                SettingValue::Mixed(vals.into_iter().map(|v| v.cloned()).collect())
            }
        };
        merged.insert(k.clone(), v);
    }
    (merged, inner_diff)
}

/// The per-CPU evidence that a group's settings hide NUMA: in every run of
/// the group that measured per-CPU latency, the rule every reader applies
/// ([`crate::hidden::hides_numa`]) holds. Anything less says nothing.
fn hidden_numa_of(runs: &[LoadedRun]) -> Option<HiddenNuma> {
    let mut seen = Vec::new();
    for r in runs {
        let d = RunData::of(r);
        let per_cpu = catalogue::per_cpu_groups(&d);
        if per_cpu.is_empty() {
            continue;
        }
        let (below, split) = per_cpu.iter().find_map(|p| {
            let sizes: Vec<usize> = p.groups.iter().map(|g| g.0).collect();
            Some((crate::hidden::hides_numa(r, &d, &sizes)?, p))
        })?;
        seen.push((r.summary.id, below, split.clone()));
    }
    let (_, below, p) = seen.first()?;
    Some(HiddenNuma {
        mem_node: p.mem_node,
        groups: p.groups.clone(),
        runs: seen.iter().map(|s| s.0).collect(),
        below: *below,
    })
}

/// Runs of one configuration at two levels, where the study holds any of
/// them: named once per split, with the metrics it shows on.
fn level_shift_warnings(groups: &[GroupInput], floors: &Floors) -> Vec<StudyWarning> {
    let ours: BTreeSet<RunId> = groups.iter().flat_map(|g| &g.runs).map(|r| r.summary.id).collect();
    let mut shifts: BTreeMap<(Vec<RunId>, Vec<RunId>), Vec<&LevelShift>> = BTreeMap::new();
    for sh in &floors.level_shifts {
        if sh.low.0.iter().chain(&sh.high.0).any(|id| ours.contains(id)) {
            shifts.entry((sh.low.0.clone(), sh.high.0.clone())).or_default().push(sh);
        }
    }
    shifts
        .into_iter()
        .map(|((low, high), v)| StudyWarning::LevelShift {
            low,
            high,
            label: v[0].label.clone(),
            metrics: v.iter().map(|s| (s.metric.clone(), s.low.1, s.high.1)).collect(),
        })
        .collect()
}

/// The groups come from `count` machines: named with their fingerprints.
fn machines_warning(groups: &[GroupInput], count: usize) -> StudyWarning {
    let machines = groups
        .iter()
        .flat_map(|g| &g.runs)
        .map(|r| (r.summary.machine.clone(), r.summary.machine_fingerprint.clone()))
        .collect();
    StudyWarning::Machines { count, machines }
}

/// The settings that differ between the groups (the machine first, when
/// they come from more than one) and those every group shares, with
/// their value.
fn compare_settings(
    groups: &[GroupInput],
    settings: &[BTreeMap<String, SettingValue>],
    across_machines: bool,
) -> (Vec<SettingDiff>, Vec<(String, SettingValue)>) {
    let keys: BTreeSet<&String> = settings.iter().flat_map(|m| m.keys()).collect();
    let mut settings_diff = Vec::new();
    let mut settings_same = Vec::new();
    if across_machines {
        settings_diff.push(SettingDiff {
            setting: "machine".into(),
            values: groups
                .iter()
                .map(|g| {
                    let d: BTreeSet<&String> = g.runs.iter().map(|r| &r.summary.machine).collect();
                    SettingValue::Machines(d.into_iter().cloned().collect())
                })
                .collect(),
        });
    }
    for k in keys {
        let values: Vec<SettingValue> =
            settings.iter().map(|m| m.get(k).cloned().unwrap_or(SettingValue::Unset)).collect();
        if values.iter().all(|v| *v == values[0]) {
            settings_same.push((k.clone(), values[0].clone()));
        } else {
            settings_diff.push(SettingDiff { setting: k.clone(), values });
        }
    }
    (settings_diff, settings_same)
}

/// Group names that say which group they are: a label two groups share is
/// followed by the run (one-run groups) or the reference.
fn name_twins(infos: &mut [StudyGroup]) {
    let twins: Vec<bool> = (0..infos.len())
        .map(|i| (0..infos.len()).any(|j| j != i && infos[j].label == infos[i].label))
        .collect();
    for (g, twin) in infos.iter_mut().zip(twins) {
        if twin {
            g.label = match g.runs.as_slice() {
                [one] => format!("{} (run {one})", g.label),
                _ => format!("{} ({})", g.label, g.reference),
            };
        }
    }
}

/// No recorded or declared setting differs between the groups: what the
/// reader must know, and whether the labels stand in for what differs.
fn nothing_differs_note(groups: &[GroupInput]) -> StudyNote {
    let labels: BTreeSet<Option<&str>> =
        groups.iter().flat_map(|g| &g.runs).map(|r| r.summary.label.as_deref()).collect();
    StudyNote::NothingDiffers { labels_differ: labels.len() > 1 }
}

/// Groups judged on the samples inside one run (`from_one_run`: the group
/// and that run's index in it): what those samples do not sample.
fn one_exec_call_note(
    from_one_run: &BTreeMap<usize, usize>,
    infos: &[StudyGroup],
) -> Option<StudyNote> {
    if from_one_run.is_empty() {
        return None;
    }
    let runs = from_one_run.iter().map(|(&g, &ri)| (g, infos[g].runs[ri])).collect();
    Some(StudyNote::OneExecCall { runs })
}

/// Per-node bandwidth between nodes of different sizes: shown, never
/// judged, and the reader is told which figure to read instead.
fn node_size_notes(
    rows: &[super::StudyMetric],
    layouts: &[Layout],
    infos: &[StudyGroup],
) -> Vec<StudyNote> {
    let mut notes = Vec::new();
    for (row, m) in rows.iter().enumerate() {
        if !catalogue::def_of_id(&m.metric).sized_by_node() {
            continue;
        }
        let have: Vec<usize> = (0..infos.len()).filter(|&i| m.groups[i].n > 0).collect();
        let kinds: BTreeSet<_> = have.iter().map(|&i| layouts[i].structure()).collect();
        if kinds.len() < 2 {
            continue;
        }
        notes.push(StudyNote::NodeSizes { row, groups: have });
    }
    notes
}
