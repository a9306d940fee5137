//! Settings studies on real repeated runs of the development machine (a
//! 2-vCPU VM shared with compilers: very noisy) and on synthetic groups
//! with known effects. The real runs are 12 `numaprobe run --quick` of
//! identical settings taken back to back on 2026-11-22 in three labelled
//! blocks (A: 3 runs, B: 3 runs, C: 6 runs), exported to
//! `data/repeat/identical-12-runs.json.gz` (see data/repeat/README.md).
//! Identical settings must never come out better or worse.

use std::io::Read;

use analysis::catalogue::LOCAL_BW_PKG;
use analysis::study::{
    Floors, ForWhom, GroupInput, Next, Reason, SettingValue, Study, StudyNote, StudyWarning,
};
use results::context::Reading;
use results::profile::Profile;
use results::run::{LoadedRun, RunId, RunStatus, StoredRecord};
use results::runstats::{widest_ratio_pct, Criteria, GroupVerdict};
use serde_json::Value;

#[path = "support/export.rs"]
mod export;

/// The 12 runs as the store gives them back after importing the export
/// into an empty database (ids 1 to 12); analysis never reads a store.
struct Db(Vec<LoadedRun>);

impl Db {
    fn load_run(&self, id: RunId) -> Option<LoadedRun> {
        self.0.iter().find(|r| r.summary.id == id).cloned()
    }

    /// Every complete run of the runs' machine: the noise floors' pool
    /// `compare` reads.
    fn pool(&self) -> Vec<LoadedRun> {
        self.0.iter().filter(|r| r.summary.status == RunStatus::Complete).cloned().collect()
    }
}

fn real_store() -> Db {
    let gz = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/repeat/identical-12-runs.json.gz"),
    )
    .unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..]).read_to_string(&mut text).unwrap();
    let db = Db(export::runs_of_export(&text));
    assert_eq!(db.0.len(), 12);
    db
}

/// The runs of a group reference (`label:A`), in time order as the store
/// resolves it.
fn group_runs(db: &Db, reference: &str) -> Vec<LoadedRun> {
    let label = reference.strip_prefix("label:").expect("a label: reference");
    let mut runs: Vec<LoadedRun> =
        db.0.iter().filter(|r| r.summary.label.as_deref() == Some(label)).cloned().collect();
    runs.sort_by_key(|r| (results::time::time_order_key(&r.summary.started), r.summary.id));
    assert!(!runs.is_empty(), "{reference} selects no run");
    runs
}

/// The runs of a group reference with their label taken off: the blocks
/// A, B and C are repeats of one setting, and a label says a setting
/// differs (runs of two labels are never pooled into one noise floor), so
/// the tests that treat them as repeats say so by unlabelling them.
fn repeats(db: &Db, reference: &str) -> GroupInput {
    let mut runs = group_runs(db, reference);
    for r in &mut runs {
        r.summary.label = None;
    }
    GroupInput { reference: reference.to_string(), runs }
}

/// The 12 runs, unlabelled: one configuration's repeats.
fn all_repeats(db: &Db) -> Vec<LoadedRun> {
    ["label:A", "label:B", "label:C"].iter().flat_map(|r| repeats(db, r).runs).collect()
}

fn assert_never_different(s: &Study, what: &str) {
    assert!(!s.metrics.is_empty(), "{what}: no metric");
    for m in &s.metrics {
        for (i, c) in m.groups.iter().enumerate() {
            assert!(
                !matches!(c.verdict, Some(GroupVerdict::Better | GroupVerdict::Worse)),
                "{what}: identical settings called {:?} on {} for group {i}: {c:?}",
                c.verdict,
                m.metric
            );
        }
    }
}

#[test]
fn identical_settings_are_never_better_or_worse_on_real_runs() {
    let db = real_store();
    let p = Criteria::default();
    // The groups as a user takes them: the labelled blocks, 2-way and 3-way.
    let floors = Floors::from_runs(&all_repeats(&db));
    for groups in [
        vec!["label:A", "label:B"],
        vec!["label:A", "label:C"],
        vec!["label:B", "label:C"],
        vec!["label:C", "label:A", "label:B"],
    ] {
        let inputs: Vec<GroupInput> = groups.iter().map(|g| repeats(&db, g)).collect();
        let s = Study::build(&inputs, 0, &p, &floors);
        assert_never_different(&s, &groups.join(" vs "));
        assert!(s.settings_diff.is_empty(), "same configuration: {:?}", s.settings_diff);
        assert!(s.recommendations.iter().all(|r| r.group.is_none()), "{:?}", s.recommendations);
    }
    // One run per side, every pair of the 12: the 1-run noise floor.
    let all = all_repeats(&db);
    let one = |i: usize| GroupInput {
        reference: all[i].summary.id.to_string(),
        runs: vec![all[i].clone()],
    };
    for a in 1..=12usize {
        for b in (a + 1)..=12 {
            let s = Study::build(&[one(a - 1), one(b - 1)], 0, &p, &floors);
            assert_never_different(&s, &format!("run {a} vs run {b}"));
            assert!(s.recommendations.iter().all(|r| r.group.is_none()), "{:?}", s.recommendations);
            // Nothing recorded differs: the study says so and asks for --set.
            assert!(
                s.notes.iter().any(|n| matches!(n, StudyNote::NothingDiffers { .. })),
                "{:?}",
                s.notes
            );
        }
    }
    // Two single runs of one label are named apart.
    let single = |i: i64| GroupInput {
        reference: i.to_string(),
        runs: vec![db.load_run(RunId(i)).unwrap()],
    };
    let s = Study::of_groups(&[single(1), single(2)], 0, &p, &db.pool()).unwrap();
    assert_eq!(
        (s.groups[0].label.as_str(), s.groups[1].label.as_str()),
        ("A (run 1)", "A (run 2)")
    );
}

/// A label is a setting: runs of two labels are never pooled into one
/// noise floor, even where everything the OS shows is the same.
#[test]
fn labels_are_never_pooled_into_one_noise_floor() {
    let db = real_store();
    let labelled: Vec<LoadedRun> = (1..=12).map(|i| db.load_run(RunId(i)).unwrap()).collect();
    let f = Floors::from_runs(&labelled);
    let lens: Vec<usize> = f.by_metric[&"local_bw_gbs".into()].iter().map(Vec::len).collect();
    assert_eq!(lens, vec![3, 3, 6], "one series per label");
    let u = Floors::from_runs(&all_repeats(&db));
    let lens: Vec<usize> = u.by_metric[&"local_bw_gbs".into()].iter().map(Vec::len).collect();
    assert_eq!(lens, vec![12], "unlabelled repeats are one series");
}

#[test]
fn a_floor_measured_on_other_runs_keeps_identical_groups_undecided() {
    // The test above takes the floor from the same 12 runs it compares.
    // Here the floor comes from block C alone and the verdicts are taken on
    // runs of A and B, which the floor never saw: the group A against the
    // group B, and every run of A and B against every other one. Nothing
    // changed, so nothing may come out better or worse.
    let db = real_store();
    let load = |r: &str| group_runs(&db, r);
    let (a, b, c) = (load("label:A"), load("label:B"), load("label:C"));
    assert_eq!((a.len(), b.len(), c.len()), (3, 3, 6));
    let floors = Floors::from_runs(&c);
    let p = Criteria::default();
    let groups = vec![
        GroupInput { reference: "label:A".into(), runs: a.clone() },
        GroupInput { reference: "label:B".into(), runs: b.clone() },
    ];
    let s = Study::build(&groups, 0, &p, &floors);
    assert_never_different(&s, "A vs B, floor from C");
    // One run per side. A floor that may decide alone must be a prediction
    // bound: from 6 runs none is valid at 90% (38 runs are needed), so
    // every pair is undecided and says how many more runs would do.
    let ab: Vec<LoadedRun> = a.iter().chain(&b).cloned().collect();
    let mut old_rule_fooled = Vec::new();
    for i in 0..ab.len() {
        for j in (i + 1)..ab.len() {
            let (x, y) = (&ab[i], &ab[j]);
            let what = format!("run {} vs run {}, floor from C", x.summary.id, y.summary.id);
            let pair = vec![
                GroupInput { reference: x.summary.id.to_string(), runs: vec![x.clone()] },
                GroupInput { reference: y.summary.id.to_string(), runs: vec![y.clone()] },
            ];
            let s = Study::build(&pair, 0, &p, &floors);
            assert_never_different(&s, &what);
            for m in &s.metrics {
                let g = &m.groups[1];
                assert_eq!(g.floor_runs_needed, Some(38 - 6), "{what}: {g:?}");
                // The old rule: one run per side was better/worse beyond the
                // widest ratio seen between two of C's runs.
                let seen = widest_ratio_pct(&floors.by_metric[&m.metric]).unwrap();
                let change = (g.change_pct.unwrap() / 100.0).ln_1p().abs();
                if change > (seen / 100.0).ln_1p() && change >= (1.0 + p.margin_pct / 100.0).ln() {
                    old_rule_fooled.push(format!(
                        "{what}: {} {:+.1}%",
                        m.metric,
                        g.change_pct.unwrap()
                    ));
                }
            }
        }
    }
    // What makes this test able to fail: under the old rule some of these
    // pairs were called better/worse (runs 1 and 4 differ by 106% in local
    // bandwidth, more than any two of C's runs).
    assert!(
        old_rule_fooled.iter().any(|f| f.starts_with("run 1 vs run 4, floor from C: local_bw_gbs")),
        "{old_rule_fooled:?}"
    );
    eprintln!(
        "the old floor rule would call {} of these verdicts: {old_rule_fooled:#?}",
        old_rule_fooled.len()
    );
}

#[test]
fn without_a_floor_the_rank_interval_alone_is_fooled_by_drift() {
    // What the noise floor is for: blocks of back-to-back runs drift
    // together on this machine, and the rank interval alone calls the
    // later block C worse than A although nothing changed.
    let db = real_store();
    let load = |r: &str| group_runs(&db, r);
    let groups = vec![
        GroupInput { reference: "label:A".into(), runs: load("label:A") },
        GroupInput { reference: "label:C".into(), runs: load("label:C") },
    ];
    let bare = Study::build(&groups, 0, &Criteria::default(), &Floors::default());
    let fooled =
        bare.metrics.iter().filter(|m| m.groups[1].verdict == Some(GroupVerdict::Worse)).count();
    assert!(fooled >= 1, "the drift this data was kept for is gone: {:?}", bare.metrics);
    let floored =
        Study::build(&groups, 0, &Criteria::default(), &Floors::from_runs(&all_repeats(&db)));
    assert_never_different(&floored, "A vs C with the floor");
}

/// A copy of `run` as another run: bandwidth figures scaled by `bw`,
/// latency by `lat`, under configuration `config`.
fn synthetic(run: &LoadedRun, id: i64, config: &str, bw: f64, lat: f64) -> LoadedRun {
    let mut r = run.clone();
    r.summary.id = RunId(id);
    r.summary.uuid = format!("synthetic-{id}");
    r.summary.config_hash = config.to_string();
    r.summary.started = format!("2026-11-23T00:{:02}:00.000Z", id);
    r.config.thp_enabled =
        Some(Reading::Value(if config == "aaaa" { "madvise" } else { "always" }.into()));
    for res in &mut r.results {
        let mut payload = res.stored_json();
        scale(&mut payload, bw, lat);
        let up = results::upgrade::read(res.record.kind(), &payload);
        (res.record, res.as_stored) = (up.record, up.as_stored);
    }
    r
}

fn scale(v: &mut Value, bw: f64, lat: f64) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let f = if k.ends_with("_gbs") {
                    bw
                } else if k.ends_with("_ns") {
                    lat
                } else {
                    1.0
                };
                match x {
                    Value::Number(n) if f != 1.0 => {
                        if let Some(y) = n.as_f64() {
                            *x = serde_json::json!(y * f);
                        }
                    }
                    _ => scale(x, bw, lat),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| scale(x, bw, lat)),
        _ => {}
    }
}

fn study_of(a: &[(f64, f64)], b: &[(f64, f64)]) -> Study {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let mut id = 100;
    let mut mk = |cfg: &str, f: &[(f64, f64)]| -> Vec<LoadedRun> {
        f.iter()
            .map(|(bw, lat)| {
                id += 1;
                synthetic(&t, id, cfg, *bw, *lat)
            })
            .collect()
    };
    let groups = vec![
        GroupInput { reference: "label:base".into(), runs: mk("aaaa", a) },
        GroupInput { reference: "label:new".into(), runs: mk("bbbb", b) },
    ];
    let all: Vec<LoadedRun> = groups.iter().flat_map(|g| g.runs.clone()).collect();
    Study::build(&groups, 0, &Criteria::default(), &Floors::from_runs(&all))
}

fn verdict(s: &Study, metric: &str) -> GroupVerdict {
    s.metrics.iter().find(|m| m.metric == metric).unwrap().groups[1].verdict.unwrap()
}

#[test]
fn synthetic_groups_with_known_effects() {
    let quiet = [(1.0, 1.0), (1.01, 0.995), (0.99, 1.004)];
    // +20% bandwidth, latency unchanged: better / same.
    let plus20: Vec<(f64, f64)> = quiet.iter().map(|(b, l)| (b * 1.2, *l)).collect();
    let s = study_of(&quiet, &plus20);
    assert_eq!(verdict(&s, "local_bw_gbs"), GroupVerdict::Better);
    assert_eq!(verdict(&s, "global_bw_gbs"), GroupVerdict::Better);
    assert_eq!(verdict(&s, "local_lat_ns"), GroupVerdict::Same);
    let m = s.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap();
    assert_eq!(m.best_group, Some(1));
    assert!((m.groups[1].change_pct.unwrap() - 20.0).abs() < 0.5);
    let hpc =
        s.recommendations.iter().find(|r| r.profile == ForWhom::Workload(Profile::Hpc)).unwrap();
    assert_eq!(hpc.group, Some(1), "{:?}", hpc.reasons);
    // Judged against the baseline, whose THP setting differs.
    let a = hpc.against.as_ref().expect("judged against the baseline");
    assert_eq!(a.group, 0);
    assert!(
        a.differs.iter().any(|&i| {
            let d = &s.settings_diff[i];
            d.setting == "thp_enabled"
                && d.values
                    == [SettingValue::One("madvise".into()), SettingValue::One("always".into())]
        }),
        "{:?}",
        hpc.against
    );
    // +5% with 1% noise: better; latency 5% lower: better (lower is better).
    let plus5: Vec<(f64, f64)> = quiet.iter().map(|(b, l)| (b * 1.05, l * 0.95)).collect();
    let s = study_of(&quiet, &plus5);
    assert_eq!(verdict(&s, "local_bw_gbs"), GroupVerdict::Better);
    assert_eq!(verdict(&s, "local_lat_ns"), GroupVerdict::Better);
    // +5% buried in 8% noise: undecided, with the runs that would decide.
    let noisy = [(1.0, 1.0), (0.92, 1.0), (1.08, 1.0)];
    let noisy5: Vec<(f64, f64)> = noisy.iter().map(|(b, l)| (b * 1.05, *l)).collect();
    let s = study_of(&noisy, &noisy5);
    assert_eq!(verdict(&s, "local_bw_gbs"), GroupVerdict::Undecided);
    // Bimodal noise (each run lands at 60% or 100%), same modes in both
    // groups: never better or worse.
    let bi_a = [(1.0, 1.0), (0.6, 1.0), (1.0, 1.0), (0.6, 1.0)];
    let bi_b = [(0.6, 1.0), (1.0, 1.0), (0.61, 1.0), (0.99, 1.0)];
    assert_never_different(&study_of(&bi_a, &bi_b), "bimodal");
    // Identical groups: same.
    let s = study_of(&quiet, &quiet);
    assert_eq!(verdict(&s, "local_bw_gbs"), GroupVerdict::Same);
}

#[test]
fn one_run_per_side_finds_a_known_effect_once_the_floor_has_enough_runs() {
    // A floor that decides alone must come from at least 38 runs of one
    // configuration (90%, distribution-free). Synthetic runs with 1% noise:
    // with 38 stored runs of the baseline's settings, one run at +20% or +5%
    // against one baseline run is found; with 37, it is undecided and says
    // that 1 more run is needed.
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let noise = |i: i64| 1.0 + 0.01 * ((i as f64) * 2.4).sin();
    for (stored, effect, want) in [
        (38, 1.20, GroupVerdict::Better),
        (38, 1.05, GroupVerdict::Better),
        (37, 1.20, GroupVerdict::Undecided),
    ] {
        let mut pool: Vec<LoadedRun> =
            (1..stored).map(|i| synthetic(&t, i, "aaaa", noise(i), noise(i))).collect();
        let base = synthetic(&t, 58, "aaaa", 1.0, 1.0);
        let new = synthetic(&t, 59, "bbbb", effect, 1.0);
        pool.push(base.clone());
        pool.push(new.clone());
        let groups = vec![
            GroupInput { reference: "58".into(), runs: vec![base] },
            GroupInput { reference: "59".into(), runs: vec![new] },
        ];
        let s = Study::build(&groups, 0, &Criteria::default(), &Floors::from_runs(&pool));
        let what = format!("{stored} stored runs, effect {effect}");
        assert_eq!(verdict(&s, "local_bw_gbs"), want, "{what}: {:?}", s.metrics[0]);
        let m = s.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap();
        if want == GroupVerdict::Undecided {
            assert_eq!(m.groups[1].floor_runs_needed, Some(1), "{what}");
            assert_eq!(m.groups[1].runs_needed, Some(3), "{what}");
        } else {
            assert!(m.groups[1].noise_floor_pct.unwrap() < 3.0, "{what}: {:?}", m.groups[1]);
            // Latency unchanged, floor and change inside the 3% margin: same.
            assert_eq!(verdict(&s, "local_lat_ns"), GroupVerdict::Same, "{what}");
        }
    }
}

#[test]
fn the_study_serialises_to_the_documented_contract() {
    let db = real_store();
    let group = |r: &str| GroupInput { reference: r.to_string(), runs: group_runs(&db, r) };
    let s = Study::of_groups(
        &[group("label:A"), group("label:B")],
        0,
        &Criteria::default(),
        &db.pool(),
    )
    .unwrap();
    // The parts the `compare --json` document is made of (the document
    // itself, with the warnings and notes in words, is the front end's).
    assert_eq!(s.baseline, 0);
    assert!(s.settings_diff.is_empty());
    assert_eq!(s.groups[0].reference, "label:A");
    assert_eq!(s.groups[0].label, "A");
    assert_eq!(s.groups[1].runs, [RunId(4), RunId(5), RunId(6)]);
    let m = &s.metrics[0];
    assert_eq!(m.groups.len(), 2);
    let (base, other) = (&m.groups[0], &m.groups[1]);
    assert_eq!(other.n, 3);
    assert!(other.median.is_some() && other.change_pct.is_some(), "{other:?}");
    assert!(other.verdict.is_some(), "{other:?}");
    assert!(base.verdict.is_none(), "the baseline has no verdict");
    let recommendations = serde_json::to_value(&s.recommendations).unwrap();
    let r = &recommendations[0];
    for k in ["profile", "group", "decided_by", "excluded"] {
        assert!(r.get(k).is_some(), "{k} missing in {r}");
    }
}

#[test]
fn a_setting_that_hides_numa_is_named_with_its_per_cpu_evidence() {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let mut hidden = synthetic(&t, 201, "bbbb", 1.0, 1.0);
    hidden.summary.label = None;
    hidden.config.cmdline_options = Some([("numa".into(), "off".into())].into());
    let summary = serde_json::json!({
        "mode": "per-cpu", "mem_node": 0, "hidden_numa": true, "note": null,
        "groups": [
            {"cpus": "0-15", "median_ns": 92.0, "min_ns": 90.0, "max_ns": 95.0, "os_nodes": "0"},
            {"cpus": "16-31", "median_ns": 141.0, "min_ns": 138.0, "max_ns": 145.0, "os_nodes": "0"}
        ]
    });
    // The template's own per-CPU results (2 CPUs, one group) give way to
    // the 32-CPU summary.
    hidden.results.retain(|r| r.stored_json()["mode"] != "per-cpu");
    hidden.results.push(StoredRecord {
        seq: 9999,
        recorded: "2026-11-23T00:00:00.000Z".into(),
        record: results::upgrade::read("lat-summary", &summary).record,
        as_stored: None,
    });
    let mut shown = synthetic(&t, 202, "aaaa", 1.0, 1.0);
    shown.summary.label = None;
    let groups = vec![
        GroupInput { reference: "label:numa on".into(), runs: vec![shown] },
        GroupInput { reference: "label:numa=off".into(), runs: vec![hidden] },
    ];
    // The development VM has one package and no firmware NUMA: a split
    // there is no evidence of hidden NUMA, and nothing is said.
    let s = Study::build(&groups, 0, &Criteria::default(), &Floors::default());
    assert!(s.groups[1].hidden_numa.is_none(), "{:?}", s.groups[1].hidden_numa);
    assert!(s.recommendations.iter().all(|r| r.profile != ForWhom::Workload(Profile::General)));
    // On a machine of two packages it is.
    let mut groups = groups;
    for g in &mut groups {
        for r in &mut g.runs {
            r.machine_info.packages = Some(results::context::Count::Number(2));
        }
    }
    let s = Study::build(&groups, 0, &Criteria::default(), &Floors::default());
    assert!(s.groups[0].hidden_numa.is_none());
    let h = s.groups[1].hidden_numa.as_ref().expect("hidden NUMA evidence");
    // The summary's two groups of 16 CPUs, in the one run that has them,
    // on a machine of two packages.
    assert_eq!(h.mem_node, Some(0));
    assert_eq!(h.groups, [(16, 92.0), (16, 141.0)]);
    assert_eq!(h.runs, [RunId(201)]);
    assert_eq!(h.below, results::hidden::NumaBelow::Packages(2));
    let r = s
        .recommendations
        .iter()
        .find(|r| r.profile == ForWhom::Workload(Profile::General))
        .expect("named");
    assert_eq!(r.reasons, [Reason::HidesNuma { group: 1 }]);
    // The settings diff shows the command-line option that did it.
    let d = s.settings_diff.iter().find(|d| d.setting == "cmdline_options.numa").unwrap();
    assert_eq!(d.values, vec![SettingValue::Unset, SettingValue::One("off".into())]);
}

/// Floors cut each configuration's runs into consecutive blocks, so their
/// order is the order the runs were taken: by the instant each start time
/// names, not its text (a run started at 01:30+02:00 came before one at
/// 00:10Z the same day).
#[test]
fn floor_series_follow_the_instant_not_the_start_text() {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let mut early = synthetic(&t, 201, "aaaa", 2.0, 1.0);
    early.summary.started = "2026-11-23T01:30:00.000+02:00".into();
    let mut late = synthetic(&t, 202, "aaaa", 1.0, 1.0);
    late.summary.started = "2026-11-23T00:10:00.000Z".into();
    let floors = Floors::from_runs(&[late, early]);
    let series = &floors.by_metric[&"local_bw_gbs".into()];
    assert_eq!(series.len(), 1);
    let s = &series[0];
    assert_eq!(s.len(), 2);
    assert!(s[0] > 1.9 * s[1], "the +02:00 run (twice the bandwidth) must come first: {s:?}");
}

/// "Runs needed" never suggests a group size whose noise floor would still
/// hold the change undecided: here the floor for groups of 3 (blocks of 3
/// consecutive runs of identical settings drifting by 60%) is far larger
/// than the +23% change seen with 2 runs per side.
#[test]
fn runs_needed_accounts_for_the_floor_of_that_many_runs() {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let mk = |id: i64, cfg: &str, bw: f64| synthetic(&t, id, cfg, bw, 1.0);
    let groups = vec![
        GroupInput {
            reference: "label:base".into(),
            runs: vec![mk(301, "aaaa", 1.0), mk(302, "aaaa", 1.01)],
        },
        GroupInput {
            reference: "label:new".into(),
            runs: vec![mk(303, "bbbb", 1.23), mk(304, "bbbb", 1.24)],
        },
    ];
    let drift: Vec<f64> = [100.0, 101.0, 99.0, 160.0, 161.0, 159.0, 100.0, 99.5, 100.5].to_vec();
    let floors = Floors {
        by_metric: [
            ("local_bw_gbs".into(), vec![drift.clone()]),
            ("local_bw_pkg_gbs".into(), vec![drift.clone()]),
            ("global_bw_gbs".into(), vec![drift]),
        ]
        .into(),
        level_shifts: Vec::new(),
    };
    let s = Study::build(&groups, 0, &Criteria::default(), &floors);
    let m = s.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap();
    let c = &m.groups[1];
    assert_eq!(c.verdict, Some(GroupVerdict::Undecided), "{c:?}");
    assert_eq!(c.runs_needed, None, "{c:?}");
    assert!(c.more_runs_held_by_floor_pct.is_some_and(|f| f > 23.0), "{c:?}");
    // The recommendations say the same as the verdict: no run count that
    // the floor would leave undecided.
    let hpc =
        s.recommendations.iter().find(|r| r.profile == ForWhom::Workload(Profile::Hpc)).unwrap();
    let runs: Vec<_> = hpc
        .next
        .iter()
        .filter_map(|n| match n {
            Next::Runs { metric, runs, held_by_floor_pct } if *metric == LOCAL_BW_PKG => {
                Some((*runs, *held_by_floor_pct))
            }
            _ => None,
        })
        .collect();
    assert!(
        matches!(runs.as_slice(), [(_, Some(f))] if *f > 23.0),
        "more runs per group would not decide: {:?}",
        hpc.next
    );
    // Without that drift on record, 3 runs per group is the suggestion.
    let s = Study::build(&groups, 0, &Criteria::default(), &Floors::default());
    let m = s.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap();
    assert_eq!(m.groups[1].runs_needed, Some(3), "{:?}", m.groups[1]);
}

/// Settings alternated over time (A B A B ...) on a machine whose every
/// run is 5% faster than the one before it (the drift applied per run, so
/// that each B follows an A 5% lower): each run is judged against the runs
/// of the other group on both sides of it, and the drift cancels. Identical
/// settings are never better; a 6% gap is. The same runs taken in blocks
/// (A A A A A A B B B B B B) cannot be bracketed: judged as before, by the
/// groups' medians held to the noise floor.
#[test]
fn alternated_runs_are_judged_by_their_brackets_where_blocks_cannot_be() {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let floors = Floors {
        by_metric: [(
            "local_bw_gbs".into(),
            vec![vec![100.0, 101.0, 99.0, 160.0, 161.0, 159.0, 100.0, 99.5, 100.5]],
        )]
        .into(),
        level_shifts: Vec::new(),
    };
    let judged = |alternate: bool, gap: f64| {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..6i64 {
            let (ia, ib) = if alternate { (10 + 2 * i, 11 + 2 * i) } else { (10 + i, 16 + i) };
            let at = |id: i64| 1.05f64.powi((id - 10) as i32);
            a.push(synthetic(&t, ia, "aaaa", at(ia), 1.0));
            b.push(synthetic(&t, ib, "bbbb", at(ib) * gap, 1.0));
        }
        let groups = vec![
            GroupInput { reference: "label:base".into(), runs: a },
            GroupInput { reference: "label:new".into(), runs: b },
        ];
        let s = Study::build(&groups, 0, &Criteria::default(), &floors);
        s.metrics.iter().find(|m| m.metric == "local_bw_gbs").unwrap().groups[1].clone()
    };
    let same = judged(true, 1.0);
    assert_eq!(same.basis, Some(results::runstats::Basis::Bracketed), "{same:?}");
    assert_eq!(same.verdict, Some(GroupVerdict::Same), "{same:?}");
    assert!(same.change_pct.unwrap().abs() < 0.1, "{same:?}");
    assert_eq!(same.brackets, Some(10), "{same:?}");
    let alt = judged(true, 1.06);
    assert_eq!(alt.verdict, Some(GroupVerdict::Better), "{alt:?}");
    assert_eq!(alt.basis, Some(results::runstats::Basis::Bracketed), "{alt:?}");
    assert!((alt.change_pct.unwrap() - 6.0).abs() < 0.1, "{alt:?}");
    let blocks = judged(false, 1.0);
    assert_ne!(blocks.basis, Some(results::runstats::Basis::Bracketed), "{blocks:?}");
    assert_eq!(blocks.brackets, None, "{blocks:?}");
}

/// Six runs of one label and identical recorded settings at two levels
/// (1.0x and 1.5x bandwidth, 1% apart inside each): not repeats. They are
/// left out of the noise floor and the study names both sets of runs.
#[test]
fn two_levels_of_one_configuration_are_not_repeats() {
    let db = real_store();
    let t = db.load_run(RunId(1)).unwrap();
    let scales = [1.0, 1.01, 0.99, 1.5, 1.51, 1.49];
    let base: Vec<LoadedRun> = scales
        .iter()
        .enumerate()
        .map(|(i, f)| synthetic(&t, 10 + i as i64, "aaaa", *f, 1.0))
        .collect();
    let new: Vec<LoadedRun> =
        (0..3).map(|i| synthetic(&t, 20 + i as i64, "bbbb", 1.2, 1.0)).collect();
    let all: Vec<LoadedRun> = base.iter().chain(&new).cloned().collect();
    let floors = Floors::from_runs(&all);
    let shift =
        floors.level_shifts.iter().find(|s| s.metric == "local_bw_gbs").expect("a level shift");
    let ids = |v: &[i64]| v.iter().map(|i| RunId(*i)).collect::<Vec<_>>();
    assert_eq!(shift.low.0, ids(&[10, 11, 12]));
    assert_eq!(shift.high.0, ids(&[13, 14, 15]));
    // The split series is not in the floor; the other configuration's is.
    assert_eq!(floors.by_metric[&"local_bw_gbs".into()].len(), 1);
    let groups = vec![
        GroupInput { reference: "label:base".into(), runs: base },
        GroupInput { reference: "label:new".into(), runs: new },
    ];
    let s = Study::build(&groups, 0, &Criteria::default(), &floors);
    let split = s.warnings.iter().find_map(|w| match w {
        StudyWarning::LevelShift { low, high, .. } => Some((low.clone(), high.clone())),
        _ => None,
    });
    assert_eq!(split, Some((ids(&[10, 11, 12]), ids(&[13, 14, 15]))), "{:?}", s.warnings);
    // One steady level is a series of repeats.
    let steady: Vec<LoadedRun> = scales[..3]
        .iter()
        .enumerate()
        .map(|(i, f)| synthetic(&t, 30 + i as i64, "aaaa", *f, 1.0))
        .collect();
    assert!(Floors::from_runs(&steady).level_shifts.is_empty());
}
