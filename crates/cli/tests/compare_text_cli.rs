//! `numaprobe compare`'s text: one table with a column per group, each
//! explanation once as a numbered note, one recommendation line per
//! profile (identical ones merged), the shared settings counted, and every
//! line within the terminal's width. The study is built from the stored
//! SNC2+CXL fixture runs (crates/report/tests/fixtures): its "SNC2
//! baseline" and "THP always" runs, three copies of each taken in
//! alternation, every measured figure scaled by its own small
//! deterministic factor (about ±1%) so that the groups have run-to-run
//! spread, imported into a temporary store.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").env_remove("COLUMNS").arg("--db").arg(db);
    c
}

fn fixture() -> Value {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/snc2-cxl-export.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A deterministic factor in [1 - 0.01, 1 + 0.01] for the `k`-th figure of
/// copy `copy` (a 64-bit mix, no randomness).
fn factor(copy: u64, k: u64) -> f64 {
    let mut x = copy.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 29;
    1.0 + 0.01 * ((x % 2001) as f64 / 1000.0 - 1.0)
}

/// Scales every non-integer number under `v` (the measured figures; ids,
/// CPU numbers and counts are integers and stay as they are).
fn jitter(v: &mut Value, copy: u64, k: &mut u64) {
    match v {
        Value::Number(n) if n.is_f64() => {
            *k += 1;
            let x = n.as_f64().unwrap() * factor(copy, *k);
            *v = serde_json::json!(x);
        }
        Value::Array(a) => a.iter_mut().for_each(|x| jitter(x, copy, k)),
        Value::Object(o) => o.values_mut().for_each(|x| jitter(x, copy, k)),
        _ => {}
    }
}

/// The two-group study's store: runs 1-6 alternate "SNC2 baseline" and
/// "THP always".
fn store(dir: &Path) -> PathBuf {
    store_of(dir, &[(0, None), (1, None)])
}

/// A store of three copies of each fixture run `(index, new label)`, in
/// alternation.
fn store_of(dir: &Path, sources: &[(usize, Option<&str>)]) -> PathBuf {
    let doc = fixture();
    let runs = doc["runs"].as_array().unwrap();
    let mut out = Vec::new();
    for round in 0..3u64 {
        for (g, (src, label)) in sources.iter().enumerate() {
            let copy = round * sources.len() as u64 + g as u64 + 1;
            let mut r = runs[*src].clone();
            if let Some(l) = label {
                r["label"] = (*l).into();
                r["config_hash"] = format!("{l}-config").into();
            }
            r["uuid"] = format!("c0ffee00-0000-4000-8000-{copy:012}").into();
            r["source_id"] = Value::Null;
            r["started"] = format!("2026-11-{:02}T12:00:00.000Z", copy + 1).into();
            r["finished"] = format!("2026-11-{:02}T12:31:00.000Z", copy + 1).into();
            let mut k = 0;
            jitter(&mut r["results"], copy, &mut k);
            out.push(r);
        }
    }
    let doc = serde_json::json!({"format": "numaprobe-export", "version": 1,
        "exported": "2026-11-27T12:00:00.000Z", "runs": out});
    let file = dir.join("two-groups.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    // To look at the study by hand (reports, page counts): keep its export.
    if let Some(keep) = std::env::var_os("NUMAPROBE_KEEP_STUDY_EXPORTS") {
        std::fs::copy(&file, Path::new(&keep).join("two-groups.json")).unwrap();
    }
    let db = dir.join("results.db");
    np(&db).arg("import").arg(&file).assert().success();
    db
}

fn compare(db: &Path, extra: &[&str], columns: Option<&str>) -> String {
    compare_groups(db, &["label:SNC2 baseline", "label:THP always"], extra, columns)
}

fn compare_groups(db: &Path, groups: &[&str], extra: &[&str], columns: Option<&str>) -> String {
    let mut c = np(db);
    if let Some(w) = columns {
        c.env("COLUMNS", w);
    }
    c.arg("compare").args(groups).args(extra);
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn compare_text_of_two_groups_is_pinned_within_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let text = compare(&db, &[], None);
    if std::env::var_os("NUMAPROBE_SHOW_COMPARE").is_some() {
        eprintln!("{text}");
    }
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "a line of {widest} columns:\n{text}");
    insta::assert_snapshot!(text);
}

/// A narrower terminal (`COLUMNS`) narrows every line, the table's too;
/// nothing is lost: every metric row and verdict is still there.
#[test]
fn compare_text_fits_a_narrow_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let wide = compare(&db, &[], None);
    for cols in [60usize, 80] {
        let text = compare(&db, &[], Some(&cols.to_string()));
        for l in text.lines() {
            assert!(l.chars().count() <= cols, "{cols} columns: {l:?} in\n{text}");
        }
        for word in ["better", "same", "(n=3)", "Recommendations:"] {
            assert_eq!(
                text.matches(word).count(),
                wide.matches(word).count(),
                "{word:?} at {cols} columns:\n{text}"
            );
        }
    }
}

/// The settings every group shares are counted; `--verbose` lists them and
/// gives each profile's reasoning under its line.
#[test]
fn shared_settings_are_counted_and_listed_with_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let db = store(dir.path());
    let short = compare(&db, &[], None);
    assert!(
        short.contains("9 settings are the same in every group (--verbose lists them)."),
        "{short}"
    );
    assert!(!short.contains("governor=powersave"), "{short}");
    assert!(!short.contains("What differs from SNC2 baseline"), "{short}");
    let long = compare(&db, &["--verbose"], None);
    assert!(long.contains("Same in every group (9): boost=true, governor=powersave,"), "{long}");
    assert!(long.contains("What differs from SNC2 baseline"), "{long}");
    // one line per profile; the profiles saying the same thing merged
    // (the spread latency of these runs is derived from cells: it decides
    // nothing, so the database, whose premise ranks by it alone, picks
    // nothing; the latency a thread sees decides for latency and hpc)
    assert!(short.contains("  latency, hpc: pick THP always (latency a thread sees"), "{short}");
    assert_eq!(short.matches("pick THP always (latency a thread sees").count(), 1, "{short}");
    assert!(!short.contains("pick THP always (spread-memory latency"), "{short}");
}

/// Two groups of the one-node desktop run: every group's CPUs form one
/// latency group, so the per-CPU fastest / slowest / split / groups rows
/// would only repeat the mean: they are left out and counted.
#[test]
fn per_cpu_rows_that_cannot_differ_are_left_out_with_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_of(dir.path(), &[(3, Some("A")), (3, Some("B"))]);
    let text = compare_groups(&db, &["label:A", "label:B"], &[], Some("200"));
    assert!(text.contains("Per-CPU latency to node 0, mean over CPUs"), "{text}");
    for gone in
        ["fastest group (ns)", "slowest group (ns)", "split (slowest", "groups of CPUs (groups)"]
    {
        assert!(!text.contains(gone), "{gone:?} is shown:\n{text}");
    }
    assert!(
        text.contains("4 per-CPU metrics left out: every group's CPUs form one latency group"),
        "{text}"
    );
    // the JSON keeps them: only the text leaves them out
    let mut c = np(&db);
    let out = c.args(["--json", "compare", "label:A", "label:B"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> =
        v["metrics"].as_array().unwrap().iter().map(|m| m["metric"].as_str().unwrap()).collect();
    assert!(ids.contains(&"per_cpu_split_to_node0"), "{ids:?}");
}

/// Three groups: one table per compared group (a table of every group's
/// columns cannot fit), each within the width.
#[test]
fn three_groups_get_one_table_per_compared_group_within_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let db = store_of(dir.path(), &[(0, None), (1, None), (2, None)]);
    let groups = ["label:SNC2 baseline", "label:THP always", "label:NUMA balancing on"];
    let text = compare_groups(&db, &groups, &[], None);
    for l in text.lines() {
        assert!(l.chars().count() <= 100, "{l:?} in\n{text}");
    }
    for want in ["THP always against SNC2 baseline:", "NUMA balancing on against SNC2 baseline:"] {
        assert_eq!(text.matches(want).count(), 1, "{want:?} in\n{text}");
    }
    // every metric row twice, once per compared group
    let rows = text.lines().filter(|l| l.starts_with("Local latency ")).count();
    assert_eq!(rows, 2, "{text}");
}
