//! `fleet` and the Parquet export load runs with `Store::load_run_records`
//! (only the result kinds the fleet reads; records without their stored
//! text): on real and synthetic exports, each run reduces to the same
//! `HostRun` and the same Parquet figures as from a whole `load_run`.

use analysis::fleet::{HostRun, HOST_RUN_KINDS};
use store::{ExportDoc, RunId, Store};

/// Every run of the exports the report's tests read (a real machine's,
/// the synthetic baseline, THP and EPYC runs, the SNC-2 + CXL one),
/// imported into a fresh store.
fn stores() -> Vec<(tempfile::TempDir, Store, Vec<RunId>)> {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    ["data/v1/real-export.json", "fixtures/synthetic-export.json", "fixtures/snc2-cxl-export.json"]
        .iter()
        .map(|f| {
            let dir = tempfile::tempdir().unwrap();
            let mut db = Store::open(dir.path().join("r.db")).unwrap();
            let text = std::fs::read_to_string(here.join(f)).unwrap();
            let doc = ExportDoc::from_json(&text, f).unwrap();
            let ids = db.import(&doc).unwrap().imported.iter().map(|i| i.id).collect();
            (dir, db, ids)
        })
        .collect()
}

#[test]
fn the_fleets_kinds_give_the_same_host_run() {
    let mut runs = 0;
    let mut with_figures = 0;
    let mut left_out = 0;
    for (_dir, db, ids) in stores() {
        for id in ids {
            let whole = db.load_run(id).unwrap();
            let light = db.load_run_records(id, Some(&HOST_RUN_KINDS)).unwrap();
            assert!(light.results.iter().all(|r| HOST_RUN_KINDS.contains(&r.record.kind())));
            assert!(light.results.iter().all(|r| r.as_stored.is_none()));
            left_out += whole.results.len() - light.results.len();
            let h = HostRun::of(&whole);
            assert_eq!(HostRun::of(&light), h, "run {id}");
            runs += 1;
            with_figures += usize::from(!h.metrics.is_empty());
        }
    }
    // Ten runs, nine with fleet figures (the real export's second run has
    // none): the equality above is not of empty figures.
    assert_eq!((runs, with_figures), (10, 9));
    // The audit findings are left out: the comparison above is not of
    // the same loads twice.
    assert!(left_out > 0);
}

/// Every kind kept, records without their stored text: the same runs.
#[test]
fn every_kind_gives_the_same_records() {
    for (_dir, db, ids) in stores() {
        for id in ids {
            let whole = db.load_run(id).unwrap();
            let light = db.load_run_records(id, None).unwrap();
            assert_eq!(light.results.len(), whole.results.len());
            // Compared as their Debug text: exact for every float, and a
            // NaN (a figure not measured) equals itself there.
            let text =
                |r: &store::LoadedRun| r.records().map(|x| format!("{x:?}")).collect::<Vec<_>>();
            assert_eq!(text(&light), text(&whole), "run {id}");
            assert_eq!(
                (&light.summary, &light.machine_info, &light.config, &light.topology),
                (&whole.summary, &whole.machine_info, &whole.config, &whole.topology)
            );
        }
    }
}

#[cfg(feature = "parquet")]
#[test]
fn the_parquet_figures_are_the_same() {
    use report::export::parquet::figures_of;
    let mut figures = 0;
    for (_dir, db, ids) in stores() {
        for id in ids {
            let whole = db.load_run(id).unwrap();
            let light = db.load_run_records(id, None).unwrap();
            // As Debug text: exact for every float, NaN equal to itself.
            let text = |run: &store::LoadedRun| {
                let rows = figures_of(run, &HostRun::of(run));
                rows.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>()
            };
            let want = text(&whole);
            figures += want.len();
            assert_eq!(text(&light), want, "run {id}");
        }
    }
    // Every run's figures, hundreds of rows: the equality is not of empty
    // tables.
    assert!(figures > 500, "{figures} figures");
}
