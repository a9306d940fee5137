//! The machine model of `crates/simmodel` writes runs as `run` stores
//! them: here its runs are held against the plan `run` makes for the
//! same topology (`bench::suite::SuitePlan`), step by step, and imported
//! through the real binary. The model itself never calls `bench`: this
//! test is where the two meet.

use std::collections::BTreeSet;

use assert_cmd::Command;
use bench::suite::{Budget, MachineFacts, SuitePlan};
use results::lat::{Lat, LatSummary, Mode as LatMode};
use results::scope::MemoryOf;
use results::Record;
use serde_json::Value;
use simmodel::runs;
use simmodel::view::View;

/// The `run` step that writes `r` (`run --only`'s name), or `note` for a
/// step note.
fn step_of(r: &Record) -> &'static str {
    use results::bw::Mode as B;
    match r {
        Record::Bw(b) => match b.mode {
            B::Local => "bw-local",
            B::Matrix => "bw-matrix",
            B::Global => "bw-global",
            B::Interleave => "bw-interleave",
            B::Weighted => "bw-weighted",
            B::Scaling => "bw-scaling",
            B::Package => match b.scope.as_ref().map(|s| s.memory) {
                Some(MemoryOf::OtherPackage) => "bw-cross-package",
                _ => "bw-package",
            },
        },
        Record::Lat(l) => match l.as_ref() {
            Lat::Chase(c) => match c.mode {
                LatMode::Matrix => "lat-matrix",
                LatMode::Point if c.interleave.is_some() => "lat-interleave",
                LatMode::Package => "lat-package",
                LatMode::Sweep => "lat-sweep",
                LatMode::PerCpu => "lat-per-cpu",
                m => panic!("a chase of mode {m:?} run does not store"),
            },
            Lat::Loaded(_) => "lat-loaded",
            Lat::C2c(_) => "lat-c2c",
        },
        Record::LatSummary(s) => match s.as_ref() {
            LatSummary::Sweep(_) => "lat-sweep",
            LatSummary::PrefetchCheck(_) => "lat-prefetch",
            LatSummary::PerCpu(_) => "lat-per-cpu",
            LatSummary::Loaded(_) => "lat-loaded",
            LatSummary::PerCpuSweep(_) => panic!("run stores no per-CPU sweep"),
        },
        Record::Step(_) => "note",
        other => panic!("run stores no {}", other.kind()),
    }
}

/// Over random machines and every setting each offers, the steps whose
/// records a modelled run holds are the steps `run` plans on that
/// topology, in the plan's order, and its step notes are the plan's
/// package-scope steps that cannot run, with the plan's reasons.
#[test]
fn the_model_writes_every_step_run_plans_and_no_other() {
    let mut seen = BTreeSet::new();
    for seed in 0..40u64 {
        let study = simmodel::random::study(seed);
        for &setting in &study.machine.settings() {
            let mut one = runs::Study::new(study.machine.clone(), vec![setting], 1, seed);
            one.budget = study.budget;
            one.weighted_interleave = study.weighted_interleave;
            let run = &one.runs()[0];
            let view = View::new(&study.machine, setting);
            let budget = match study.budget {
                runs::Budget::Quick => Budget::Quick,
                runs::Budget::Default => Budget::Default,
            };
            let facts = MachineFacts {
                weighted_interleave: study.weighted_interleave,
                ..MachineFacts::default()
            };
            let plan = SuitePlan::for_topology(&view.topology(), budget, &facts);
            let planned: Vec<&str> = plan.steps.iter().map(|s| s.step.id().as_str()).collect();
            let mut written: Vec<&str> = Vec::new();
            let mut notes: Vec<(String, String)> = Vec::new();
            for r in run.records() {
                match (step_of(r), r) {
                    ("note", Record::Step(n)) => notes.push((n.step.clone(), n.reason.clone())),
                    (s, _) if written.last() != Some(&s) => written.push(s),
                    _ => {}
                }
            }
            let mut planned_once = planned.clone();
            planned_once.dedup();
            let what = format!("seed {seed}, {}", setting.label(&study.machine));
            assert_eq!(written, planned_once, "{what}");
            let skipped: Vec<(String, String)> = plan
                .skipped
                .iter()
                .filter(|(id, _)| id.is_scope() && study.machine.packages > 1)
                .map(|(id, why)| (id.as_str().to_string(), why.clone()))
                .collect();
            assert_eq!(notes, skipped, "{what}");
            seen.insert(format!("{}{}", view.nodes.len() > 1, study.machine.packages > 1));
        }
    }
    // Several nodes and one, one package and several, were all met.
    assert_eq!(seen.len(), 4, "{seen:?}");
}

/// `run --only lat-per-cpu` keeps that step's records and stores why the
/// package-scope steps are missing, in the order `SuitePlan::select`
/// leaves them.
#[test]
fn only_one_step_keeps_its_records_and_notes_the_scope_steps_left_out() {
    let m = simmodel::studies::two_socket_96();
    for setting in
        [simmodel::facts::Setting::domains(1), simmodel::facts::Setting::domains(1).with_numa_off()]
    {
        let mut s = runs::Study::new(m.clone(), vec![setting], 1, 3);
        s.only = Some(vec!["lat-per-cpu"]);
        let run = &s.runs()[0];
        let view = View::new(&m, setting);
        let mut plan =
            SuitePlan::for_topology(&view.topology(), Budget::Quick, &MachineFacts::default());
        plan.select(&[bench::suite::StepName::LatPerCpu], &[], console::run::left_out_by).unwrap();
        let want: Vec<(String, String)> = plan
            .skipped
            .iter()
            .chain(&plan.left_out)
            .filter(|(id, _)| id.is_scope())
            .map(|(id, why)| (id.as_str().to_string(), why.clone()))
            .collect();
        let notes: Vec<(String, String)> = run
            .records()
            .filter_map(|r| match r {
                Record::Step(n) => Some((n.step.clone(), n.reason.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(notes, want, "{}", setting.label(&m));
        assert!(run.records().all(|r| matches!(step_of(r), "note" | "lat-per-cpu")));
    }
}

/// A modelled study's export imports into the real binary, every run and
/// every result.
/// A step `--skip` or `--only` leaves out is stored with the flag that
/// left it out, word for word (the two-socket model: every package-scope
/// step is planned).
#[test]
fn the_scope_steps_left_out_name_the_selection_that_left_them_out() {
    use bench::suite::StepName as S;
    let m = simmodel::studies::two_socket_96();
    let view = View::new(&m, simmodel::facts::Setting::domains(1));
    let plan = SuitePlan::for_topology(&view.topology(), Budget::Quick, &MachineFacts::default());
    let mut skip = plan.clone();
    skip.select(&[], &[S::LatPackage, S::BwLocal], console::run::left_out_by).unwrap();
    assert_eq!(skip.left_out, [(S::LatPackage, "left out by --skip".to_string())]);
    let mut only = plan;
    only.select(&[S::BwLocal], &[S::LatPackage], console::run::left_out_by).unwrap();
    let by = |w: &str| w.to_string();
    assert_eq!(
        only.left_out,
        [
            (S::BwPackage, by("left out by --only")),
            (S::BwCrossPackage, by("left out by --only")),
            (S::LatPackage, by("left out by --skip")),
        ]
    );
}

#[test]
fn a_modelled_study_imports_through_the_binary() {
    let study = simmodel::random::study(7);
    let runs = study.runs();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("study.json");
    std::fs::write(&file, runs::export(&runs).to_string()).unwrap();
    let db = dir.path().join("s.db");
    let np = || {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env_remove("NUMAPROBE_DB").arg("--db").arg(&db);
        c
    };
    np().arg("import").arg(&file).assert().success();
    let out = np().args(["--json", "list"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = v.as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(listed.len(), runs.len());
    let total: u64 = listed.iter().map(|r| r["result_count"].as_u64().unwrap()).sum();
    assert_eq!(total, runs.iter().map(|r| r.results.len() as u64).sum::<u64>());
}
