//! The exact bytes of what a settings study says in words, wherever it is
//! shown: `compare --json` (the warnings, notes, impossible figures and
//! recommendations are part of that document), `compare`'s text, the
//! warnings `compare` writes on stderr, and the study's report (Markdown,
//! HTML and the brief). Each is compared with its golden file under
//! tests/golden/study_words; `NUMAPROBE_BLESS=1` rewrites them (only for a
//! deliberate change of what a study says).
//!
//! The studies are chosen so that every kind of sentence appears:
//! - `mixed`: hand-made runs of three machines, one group mixing two
//!   configurations and holding an interrupted run with an impossible
//!   bandwidth and latency (warnings, an impossible figure, recommendations);
//! - `one-run`: the stored SNC2+CXL fixture's "SNC2 baseline" and "THP
//!   always" runs, one run each (the notes on derived figures and on
//!   program metrics from the repeats of one `exec` call);
//! - `same`: one fixture run stored under two labels (the note that no
//!   recorded setting differs);
//! - `nodes`: the fixture's SNC2 run against its one-node desktop run
//!   (per-node figures not judged between nodes of different sizes,
//!   remote figures impossible for one OS node).
//!
//! A second test pins what the typed fields of a study's rows come out as
//! where the studies above do not reach them:
//! - `pooled`: the fixture's SNC2 and desktop runs pooled in each of two
//!   groups (a group's runs on two machines, settings a group's runs
//!   disagree on, the same disagreement in both groups, a figure derived in
//!   one of a group's two runs);
//! - `v1`: the first version's database, runs 3, 4 and 5 (a remote figure
//!   impossible on one package, in `compare --json` too).

use std::path::{Path, PathBuf};

use serde_json::Value;

#[path = "support/hand_made.rs"]
mod hand_made;
use hand_made::Made;
#[path = "support/study_pin.rs"]
mod study_pin;
use study_pin::{np, pin};

/// A hand-made run `n` of host `host` ([`hand_made::run`]) on one of three
/// machines, incomplete when its triad is above the stated peak.
fn hand_made(
    n: u32,
    host: &str,
    label: &str,
    config: (&str, &str),
    gbs: f64,
    lat_ns: f64,
) -> Value {
    let status = if gbs > 10.0 { "incomplete" } else { "complete" };
    hand_made::run(&Made { n, host, label, machine: n % 3, config, status, gbs, lat_ns })
}

/// Imports `runs` into a new store under `dir`.
fn store(dir: &Path, runs: Vec<Value>) -> PathBuf {
    let db = dir.join("results.db");
    let f = dir.join("runs.json");
    std::fs::write(&f, hand_made::export(runs)).unwrap();
    np(&db).arg("import").arg(&f).assert().success();
    db
}

/// The fixture's run `index`, as run `n`, labelled `label`.
fn fixture_run(index: usize, n: u64, label: Option<&str>) -> Value {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/snc2-cxl-export.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let mut r = doc["runs"][index].clone();
    if let Some(l) = label {
        r["label"] = l.into();
        r["config_hash"] = format!("{l}-config").into();
    }
    r["uuid"] = format!("c0ffee00-0000-4000-8000-{n:012}").into();
    r["source_id"] = Value::Null;
    r
}

#[test]
fn what_studies_say_in_words_is_pinned_byte_for_byte() {
    let mut failures = Vec::new();

    let dir = tempfile::tempdir().unwrap();
    let db = store(
        dir.path(),
        vec![
            hand_made(1, "h1", "ok", ("c1", "6.1"), 9.0, 95.0),
            hand_made(2, "h2", "bad", ("c2", "6.1"), 50.0, 15.0),
            hand_made(3, "h3", "ok", ("c3", "6.8"), 9.1, 96.0),
            hand_made(4, "h1", "ok", ("c1", "6.1"), 9.2, 94.0),
            hand_made(5, "h2", "bad", ("c2", "6.1"), 9.0, 90.0),
            hand_made(6, "h3", "bad", ("c2", "6.1"), 9.1, 91.0),
        ],
    );
    pin(&db, "mixed", &["label:ok", "label:bad"], true, &mut failures);

    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), vec![fixture_run(0, 1, None), fixture_run(1, 2, None)]);
    pin(&db, "one-run", &["1", "2"], false, &mut failures);

    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), vec![fixture_run(0, 1, Some("A")), fixture_run(0, 2, Some("B"))]);
    pin(&db, "same", &["1", "2"], false, &mut failures);

    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path(), vec![fixture_run(0, 1, None), fixture_run(3, 2, None)]);
    pin(&db, "nodes", &["1", "2"], false, &mut failures);

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn what_pooled_groups_and_the_v1_comparison_say_is_pinned_byte_for_byte() {
    let mut failures = Vec::new();

    let dir = tempfile::tempdir().unwrap();
    let db = store(
        dir.path(),
        vec![
            fixture_run(0, 1, Some("X")),
            fixture_run(3, 2, Some("X")),
            fixture_run(1, 3, Some("Y")),
            fixture_run(3, 4, Some("Y")),
        ],
    );
    pin(&db, "pooled", &["label:X", "label:Y"], false, &mut failures);

    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/v1/results.db");
    std::fs::copy(v1, &db).unwrap();
    pin(&db, "v1", &["3", "4", "5"], false, &mut failures);

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
