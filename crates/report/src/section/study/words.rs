//! A study's warnings and notes in words ([`analysis::study::StudyWarning`],
//! [`analysis::study::StudyNote`]): one sentence each, without its full
//! stop, as the report, `compare`'s text and stderr and the `--json`
//! documents of `compare` and `study` all give them.

use std::collections::BTreeSet;

use analysis::catalogue::{self, MetricId};
use analysis::declared::Contradiction;
use analysis::layout::NotApplicable;
use analysis::metrics::MetricKey;
use analysis::scope::{DerivedFrom, Lacking};
use analysis::study::{
    FloorSource, GroupDerived, HiddenNuma, RowDerived, SettingValue, Study, StudyMetric, StudyNote,
    StudyWarning,
};
use results::runstats::FloorKind;
use results::scope::StepNote;

/// What a figure derived from cells lacks, in a study's note.
pub fn lacking(l: &Lacking) -> String {
    let cells = |c: &[(u32, u32)]| {
        c.iter().map(|(c, m)| format!("{c}->{m}")).collect::<Vec<_>>().join(", ")
    };
    match l {
        Lacking::LocalBw(nodes) => format!(
            "the local bandwidth of node(s) {}",
            nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        Lacking::BwCells(c) => {
            format!("the bw matrix cells {} (CPU node -> memory node)", cells(c))
        }
        Lacking::LatCells(c) => {
            format!("the lat matrix cells {} (CPU node -> memory node)", cells(c))
        }
    }
}

/// A declared setting the run's own readings contradict, in the words of
/// the run's warning and of a study's.
pub fn contradiction(c: &Contradiction) -> String {
    match c {
        Contradiction::SmtAbsent { value, kernel } => format!(
            "declared bios.smt={value}, but the kernel reports smt={kernel}: the run measured no SMT siblings"
        ),
        Contradiction::SmtActive { value } => format!(
            "declared bios.smt={value}, but the kernel reports smt=on: SMT siblings were active"
        ),
        Contradiction::NumaInFirmware { value, domains } => format!(
            "declared bios.numa={value}, but the firmware's SRAT lists {domains} proximity domains: NUMA is on in the firmware (numa=off on the kernel command line only hides it)"
        ),
        Contradiction::NoSrat { value, packages } => format!(
            "declared bios.numa={value}, but the firmware has no SRAT on a machine of {packages} packages: NUMA is off (node interleave) in the firmware"
        ),
        Contradiction::Domains { key, value, want, nodes, packages } => format!(
            "declared {key}={value} ({want} node{} per package), but the run saw {nodes} nodes with CPUs on {packages} package{}: {} per package",
            if *want == 1 { "" } else { "s" },
            if *packages == 1 { "" } else { "s" },
            nodes / packages
        ),
    }
}

/// Every warning of `study`, in its order.
pub fn warnings(study: &Study) -> Vec<String> {
    study.warnings.iter().map(|w| warning(study, w)).collect()
}

/// Every note of `study`, in its order.
pub fn notes(study: &Study) -> Vec<String> {
    study.notes.iter().map(|n| note(study, n)).collect()
}

/// The per-CPU evidence that a group's settings hide NUMA, in words
/// (without a full stop): what `compare`, the report and the `general`
/// recommendation say of it.
pub fn hidden_numa(h: &HiddenNuma) -> String {
    let groups: Vec<String> =
        h.groups.iter().map(|(n, ns)| format!("{n} CPUs at {ns:.1} ns")).collect();
    let runs: Vec<String> = h.runs.iter().map(ToString::to_string).collect();
    format!(
        "the OS shows one node but per-CPU latency to memory node {} splits into {} groups ({}) in run{} {} of a machine with {}: this setting hides NUMA (numa=off, NPS0 or firmware interleave) without removing it",
        h.mem_node.map_or("?".into(), |n| n.to_string()),
        h.groups.len(),
        groups.join(", "),
        if runs.len() == 1 { "" } else { "s" },
        runs.join(", "),
        h.below,
    )
}

/// Why a group cannot have a metric, in words (without a full stop):
/// what `compare`, its `--json` document and the report say of it.
pub fn not_applicable(why: NotApplicable) -> &'static str {
    match why {
        NotApplicable::NoRemoteMemory => "one OS node: no remote memory to measure",
        NotApplicable::OnePackage => "one package: no other package's memory",
        NotApplicable::NoOtherNodeOnOneOsNode => "one OS node: no other node in the package",
        NotApplicable::NoOtherNodeInPackage => "one node per package: no other node in the package",
        NotApplicable::NoMemoryOnlyNode => "no memory-only node",
    }
}

/// A setting's value in one group, in words: the value; `-` where no run
/// of the group records it; `mixed (a | b)` where the group's runs
/// disagree (their values in the order of their words); the machines'
/// names `a | b`.
pub fn setting_value(v: &SettingValue) -> String {
    match v {
        SettingValue::Unset => "-".into(),
        SettingValue::One(v) => v.clone(),
        SettingValue::Mixed(vs) => {
            let w: BTreeSet<&str> = vs.iter().map(|v| v.as_deref().unwrap_or("-")).collect();
            format!("mixed ({})", w.into_iter().collect::<Vec<_>>().join(" | "))
        }
        SettingValue::Machines(names) => names.join(" | "),
    }
}

/// How a figure was derived instead of measured at its metric's scope,
/// in words.
pub fn derived_from(d: DerivedFrom) -> &'static str {
    match d {
        DerivedFrom::Cells => "derived from cells measured one at a time",
        DerivedFrom::PackageAlone => {
            "derived from one package measured alone on memory every package shares"
        }
        DerivedFrom::Machine => {
            "derived from the whole machine's figure shared equally by its packages"
        }
    }
}

/// How a group's value was derived, in words: each way (in the order of
/// their words) and, where some of its runs measured it, how many did
/// not (`... in 1 of its 2 runs`).
pub fn group_derived(d: &GroupDerived) -> String {
    let ways: BTreeSet<&str> = d.from.iter().map(|f| derived_from(*f)).collect();
    let how = ways.into_iter().collect::<Vec<_>>().join("; ");
    match d.runs {
        Some((n, of)) => format!("{how} in {n} of its {of} runs"),
        None => how,
    }
}

/// How a row's values were derived, in words: the groups' derivations (in
/// the order of their words), followed by the derived groups' names where
/// another group measured the metric.
pub fn row_derived(study: &Study, d: &RowDerived) -> String {
    let ways: BTreeSet<String> = d.how.iter().map(group_derived).collect();
    let how = ways.into_iter().collect::<Vec<_>>().join("; ");
    match &d.named {
        Some(groups) => {
            let names: Vec<&str> = groups.iter().map(|&g| study.groups[g].label.as_str()).collect();
            format!("{how}: {}", names.join(", "))
        }
        None => how,
    }
}

/// A metric row's name as every table and sentence shows it: the
/// catalogue's name, followed by how it was derived (in brackets) where
/// some group's value was.
pub fn row_name(study: &Study, m: &StudyMetric) -> String {
    match &m.derived {
        Some(d) => format!("{} ({})", m.name, row_derived(study, d)),
        None => m.name.clone(),
    }
}

/// Where a noise floor came from, in words (without a full stop): the
/// bound it is, at `confidence` (the study's), and the runs it rests on.
pub fn floor_source(confidence: f64, s: &FloorSource) -> String {
    let bound = match s.kind {
        FloorKind::Range { runs, new, coverage } => format!(
            "the widest gap between two of {runs} or more runs of one configuration of identical settings; distribution-free, {new} further runs of identical settings fall outside it with probability at most {:.1}%",
            (1.0 - coverage) * 100.0
        ),
        FloorKind::Guard { k, blocks, df } => {
            let what = if k == 1 {
                format!("two single runs, from {blocks} runs")
            } else {
                format!("two medians of {k} consecutive runs, from {blocks} such blocks")
            };
            format!(
                "{:.0}% Student-t prediction bound on the gap between {what} of identical settings ({df} degrees of freedom)",
                confidence * 100.0
            )
        }
    };
    format!(
        "{bound} ({} runs of {} configuration(s) of this machine in this database)",
        s.runs, s.configurations
    )
}

/// One warning of `study` in words.
pub fn warning(study: &Study, w: &StudyWarning) -> String {
    let reference = |g: usize| study.groups[g].reference.as_str();
    match w {
        StudyWarning::MixedConfigs { group, configs, differ } => format!(
            "group {} mixes {} configurations ({}){}",
            reference(*group),
            configs.len(),
            configs.join(", "),
            if differ.is_empty() {
                String::new()
            } else {
                format!(": {} differ inside it", differ.join(", "))
            }
        ),
        StudyWarning::Contradiction { group, run, what } => {
            format!("group {}: run {run}: {}", reference(*group), contradiction(what))
        }
        StudyWarning::NotComplete { group, runs } => format!(
            "group {} holds runs that are not complete: {}",
            reference(*group),
            runs.iter()
                .map(|(id, status)| format!("run {id} {status}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        StudyWarning::LevelShift { low, high, label, metrics } => {
            let ids = |v: &[results::run::RunId]| {
                v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
            };
            let shown: Vec<String> = metrics
                .iter()
                .take(3)
                .map(|(m, lo, hi)| format!("{} {lo:.4} vs {hi:.4}", catalogue::def_of_id(m).name))
                .collect();
            let label = label.as_deref().map_or("no label".to_string(), |l| format!("label {l}"));
            format!(
                "runs {} and runs {} ({label}, the same recorded and declared settings) sit at two levels far beyond their own spread ({}{}): they are not repeats, something unrecorded changed between them; they are left out of the noise floor. Declare what changed with `--set KEY=VALUE`, or label the runs apart",
                ids(low),
                ids(high),
                shown.join("; "),
                if metrics.len() > 3 {
                    format!("; {} more metrics", metrics.len() - 3)
                } else {
                    String::new()
                },
            )
        }
        StudyWarning::Machines { count, machines } => {
            let each: BTreeSet<String> =
                machines.iter().map(|(m, fp)| format!("{m} [{fp}]")).collect();
            format!(
                "the groups come from {count} machines ({}): differences include the hardware, not only the settings",
                each.into_iter().collect::<Vec<_>>().join("; ")
            )
        }
    }
}

/// One note of `study` in words.
pub fn note(study: &Study, n: &StudyNote) -> String {
    let label = |g: usize| study.groups[g].label.as_str();
    let run = |r: &Option<results::run::RunId>| r.map_or("?".into(), |id| id.to_string());
    match n {
        StudyNote::NothingDiffers { labels_differ: true } => "no recorded or declared setting differs between the groups: their labels are taken as what differs (runs of different labels are never pooled as repeats in the noise floor), but nothing records what changed, and a gap between groups taken one after the other may be the machine's drift. Alternate their runs over time (A, B, A, B: each run is then judged against the runs of the other group on both sides of it, so that the drift cancels) and declare what you changed with `--set KEY=VALUE` on `run`/`exec`/`bw`/`lat` (e.g. `--set bios.smt=off`)".to_string(),
        StudyNote::NothingDiffers { labels_differ: false } => "no recorded or declared setting differs between the groups: a difference between them cannot be told from run-to-run drift, and their runs count as repeats of one configuration in the noise floor. Declare what you changed with `--set KEY=VALUE` on `run`/`exec`/`bw`/`lat` (e.g. `--set bios.smt=off`) so that the runs of each setting are told apart".to_string(),
        StudyNote::Missing { group, run: r, metric, what } => format!(
            "run {} ({}): {} is not computed from part of what it needs: {} are missing",
            run(r),
            label(*group),
            name_in_text(metric),
            lacking(what),
        ),
        StudyNote::MixedScope { metric, measured, derived } => {
            let labels = |v: &[usize]| v.iter().map(|&g| label(g)).collect::<Vec<_>>().join(", ");
            format!(
                "{}: {} measured at the metric's scope, {} derived: the two are not the same measurement, so no verdict is given between them",
                catalogue::def_of_id(metric).name,
                labels(measured),
                labels(derived)
            )
        }
        StudyNote::Derived { metrics, runs, steps } => {
            let what: Vec<String> = metrics.iter().map(name_in_text).collect();
            let why = if steps.is_empty() {
                "no package-scope records (`run` before it measured them, or an import)".to_string()
            } else {
                steps.iter().map(StepNote::text).collect::<Vec<_>>().join("; ")
            };
            // `1, 3, 5 (SNC2), 2 (THP)`: each group's runs, then its label
            let parts: Vec<String> = runs
                .iter()
                .map(|(g, ids)| {
                    let ids: Vec<String> = ids.iter().map(run).collect();
                    format!("{} ({})", ids.join(", "), label(*g))
                })
                .collect();
            let count: usize = runs.iter().map(|(_, ids)| ids.len()).sum();
            format!(
                "{} derived in run{} {}, never deciding a pick: {why}",
                and_list(&what),
                if count == 1 { "" } else { "s" },
                parts.join(", "),
            )
        }
        StudyNote::OneExecCall { runs } => {
            let names: Vec<String> =
                runs.iter().map(|(g, id)| format!("{} (run {id})", label(*g))).collect();
            format!(
                "the program metrics of {} are the repeats inside one `exec` call: each repeat is a whole run of the program (a new process, placement, allocation and first touch), alternated across policies, so they sample run-to-run variation within one boot; they do not sample what changes between boots or calls (memory layout after a reboot, firmware training, the machine's state that day). Repeat the call, after a reboot where that matters, for 3 or more runs per group: the runs are then judged one value each",
                names.join(", ")
            )
        }
        StudyNote::NodeSizes { row, groups } => {
            let each: Vec<String> = groups
                .iter()
                .map(|&i| format!("{}: {}", label(i), study.layouts[i].structure().text()))
                .collect();
            format!(
                "{} is not judged between groups whose nodes differ ({}): a node's figure grows and shrinks with the NUMA mode's node size; read the per-package and whole-machine figures ({}, {}, {}) instead",
                row_name(study, &study.metrics[*row]),
                each.join("; "),
                catalogue::LOCAL_BW_PKG,
                catalogue::CROSS_PKG_BW,
                MetricKey::GlobalBw.id()
            )
        }
    }
}

/// A metric's name inside a sentence: its first letter lower case, but
/// for a name that starts with an acronym (`HMAT`).
fn name_in_text(metric: &MetricId) -> String {
    let name = &catalogue::def_of_id(metric).name;
    let mut c = name.chars();
    match c.next() {
        Some(f) if !name.starts_with("HMAT") => f.to_lowercase().chain(c).collect(),
        _ => name.to_string(),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(v: &[String]) -> String {
    match v {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::study::StudyGroup;
    use results::run::RunId;

    /// Every kind of noise floor in words, word for word as analysis
    /// wrote them before the words moved here (the floors of
    /// `analysis::study::floors`' test: 40 and 9 runs of two
    /// configurations, then 3 and 3).
    #[test]
    fn a_floors_source_is_worded_by_its_kind_and_runs() {
        use results::runstats::range_coverage;
        let range = FloorKind::Range { runs: 40, new: 2, coverage: range_coverage(40, 2) };
        let src = |kind, runs| floor_source(0.9, &FloorSource { kind, runs, configurations: 2 });
        assert_eq!(src(range, 49), "the widest gap between two of 40 or more runs of one configuration of identical settings; distribution-free, 2 further runs of identical settings fall outside it with probability at most 9.4% (49 runs of 2 configuration(s) of this machine in this database)");
        assert_eq!(src(FloorKind::Guard { k: 3, blocks: 16, df: 14 }, 49), "90% Student-t prediction bound on the gap between two medians of 3 consecutive runs, from 16 such blocks of identical settings (14 degrees of freedom) (49 runs of 2 configuration(s) of this machine in this database)");
        assert_eq!(src(FloorKind::Guard { k: 1, blocks: 6, df: 4 }, 6), "90% Student-t prediction bound on the gap between two single runs, from 6 runs of identical settings (4 degrees of freedom) (6 runs of 2 configuration(s) of this machine in this database)");
    }

    /// A study of two one-run groups (`label:a`, `label:b`) that says
    /// only `warnings` and `notes`.
    fn study(warnings: Vec<StudyWarning>, notes: Vec<StudyNote>) -> Study {
        let group = |i: i64, l: &str| StudyGroup {
            reference: format!("label:{l}"),
            label: l.into(),
            runs: vec![RunId(i)],
            configs: vec![],
            machines: vec![],
            not_complete: vec![],
            hidden_numa: None,
            one_node: false,
        };
        Study {
            groups: vec![group(1, "a"), group(2, "b")],
            baseline: 0,
            settings_diff: vec![],
            settings_same: vec![],
            metrics: vec![],
            recommendations: vec![],
            confidence: 0.9,
            margin_pct: 3.0,
            across_machines: false,
            warnings,
            notes,
            layouts: vec![],
            impossible: vec![],
            marked_inputs: vec![],
        }
    }

    /// The sentences no stored study of the golden tests gives
    /// (tests/golden/study_words of the numaprobe package pins the
    /// others byte for byte).
    #[test]
    fn level_shifts_contradictions_and_missing_cells_are_worded() {
        let ids = |v: &[i64]| v.iter().map(|i| RunId(*i)).collect::<Vec<_>>();
        let m = |id: &str| MetricId::from(id);
        let shift = StudyWarning::LevelShift {
            low: ids(&[10, 11]),
            high: ids(&[12]),
            label: Some("x".into()),
            metrics: vec![
                (m("local_bw_gbs"), 1.0, 2.0),
                (m("local_bw_gbs"), 1.5, 2.25),
                (m("local_bw_gbs"), 3.0, 4.0),
                (m("local_bw_gbs"), 5.0, 6.0),
            ],
        };
        let said = warnings(&study(
            vec![
                shift,
                StudyWarning::Contradiction {
                    group: 1,
                    run: RunId(2),
                    what: Contradiction::SmtActive { value: "0".into() },
                },
            ],
            vec![],
        ));
        assert_eq!(
            said,
            [
                "runs 10, 11 and runs 12 (label x, the same recorded and declared settings) sit at two levels far beyond their own spread (Local bandwidth 1.0000 vs 2.0000; Local bandwidth 1.5000 vs 2.2500; Local bandwidth 3.0000 vs 4.0000; 1 more metrics): they are not repeats, something unrecorded changed between them; they are left out of the noise floor. Declare what changed with `--set KEY=VALUE`, or label the runs apart",
                "group label:b: run 2: declared bios.smt=0, but the kernel reports smt=on: SMT siblings were active",
            ]
        );
        let said = notes(&study(
            vec![],
            vec![StudyNote::Missing {
                group: 0,
                run: Some(RunId(1)),
                metric: m("cross_pkg_bw_gbs"),
                what: Lacking::LatCells(vec![(0, 1)]),
            }],
        ));
        assert_eq!(
            said,
            ["run 1 (a): cross-package bandwidth is not computed from part of what it needs: the lat matrix cells 0->1 (CPU node -> memory node) are missing"]
        );
        // every shape, as the notes said them before they were typed
        assert_eq!(
            [
                lacking(&Lacking::LocalBw(vec![1, 2])),
                lacking(&Lacking::BwCells(vec![(0, 3), (1, 2), (3, 1)])),
                lacking(&Lacking::LatCells(vec![(0, 1), (0, 2), (0, 3)])),
            ],
            [
                "the local bandwidth of node(s) 1, 2",
                "the bw matrix cells 0->3, 1->2, 3->1 (CPU node -> memory node)",
                "the lat matrix cells 0->1, 0->2, 0->3 (CPU node -> memory node)",
            ]
        );
    }
}
