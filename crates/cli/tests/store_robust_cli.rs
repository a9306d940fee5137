//! The store on the real binary against hostile input: the reading commands on a read-only
//! database, hostile imports (times that are not times, duplicate result
//! numbers, a full disk), reports of two databases in one folder, and
//! hostile labels in Markdown, terminal and CSV output.
//!
//! Read-only storage and a full disk are made for real in a private mount
//! namespace (`unshare -m`, as root; `unshare -rm` otherwise): a read-only
//! bind mount of the test's folder, a 400 KiB tmpfs. Root ignores file
//! permissions, so `chmod` would test nothing here. Without `unshare` the
//! tests fail, naming it (util-linux).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("numaprobe")
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `script` with `sh` in a private mount namespace (`$NP` is the
/// binary, `$D` the folder), so its mounts vanish with it.
fn in_mount_ns(dir: &Path, script: &str) -> Output {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let out = Command::new("unshare")
        .arg(if root { "-m" } else { "-rm" })
        .args(["sh", "-c", script])
        .env("NP", bin())
        .env("D", dir)
        .env_remove("NUMAPROBE_DB")
        .output()
        .expect(
            "these tests need `unshare` (util-linux) to mount a read-only folder and a small tmpfs",
        );
    let err = text(&out.stderr);
    assert!(
        !err.contains("unshare failed") && !err.contains("mount: "),
        "could not set up the mount namespace (root or user namespaces needed): {err}"
    );
    out
}

/// A folder holding `r.db` with the fixture's runs 1, 2, 3.
fn imported() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = np(&db).arg("import").arg(fixture()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, db)
}

/// Guards against every reading command saying "unable to open database
/// file".
#[test]
fn reading_commands_work_on_a_read_only_mount() {
    let (dir, _db) = imported();
    let out = in_mount_ns(
        dir.path(),
        r#"set -e
        mount --bind "$D" "$D"
        mount -o remount,ro,bind "$D"
        if touch "$D/probe" 2>/dev/null; then echo "NOT READ-ONLY"; exit 9; fi
        "$NP" --db "$D/r.db" list --json > "$D.list" || exit 11
        "$NP" --db "$D/r.db" show 1 > /dev/null || exit 12
        "$NP" --db "$D/r.db" report latest --format md > /dev/null || exit 13
        "$NP" --db "$D/r.db" export 1 2 > /dev/null || exit 14
        "$NP" --db "$D/r.db" export 1 --format csv > /dev/null || exit 15
        "$NP" --db "$D/r.db" compare 1 2 > /dev/null || exit 16
        cat "$D.list"; rm -f "$D.list""#,
    );
    assert!(
        out.status.success(),
        "rc {:?}: {}{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 3, "{runs}");
    assert!(!dir.path().join("probe").exists());
}

/// `show`, `report`, `export` and `compare` on `db` exit 1 with one line
/// naming it and saying `why`.
fn reading_commands_fail_in_one_line(db: &Path, why: &str) {
    for args in [&["show", "1"][..], &["report"], &["export", "1"], &["compare", "1", "2"]] {
        let out = np(db).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let e = text(&out.stderr);
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(&*db.to_string_lossy()) && e.contains(why), "{e}");
    }
}

/// Guards against `list` turning a 0-byte file into a 40 KiB database.
#[test]
fn an_empty_file_is_not_made_a_database_by_reading_commands() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("empty.db");
    std::fs::write(&db, b"").unwrap();
    let out = np(&db).arg("list").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("No runs in"), "{}", text(&out.stdout));
    reading_commands_fail_in_one_line(&db, "an empty file");
    assert_eq!(std::fs::metadata(&db).unwrap().len(), 0, "still empty");
}

#[test]
fn a_missing_database_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.db");
    reading_commands_fail_in_one_line(&db, "no results database");
    assert!(!db.exists());
}

fn fixture_doc() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap()
}

/// Guards against importing `"started": "not a date"`, which, sorting
/// after every digit, would stay `latest` for ever.
#[test]
fn an_import_whose_start_is_not_a_time_is_refused_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut doc = fixture_doc();
    doc["runs"][1]["started"] = "not a date".into();
    let uuid = doc["runs"][1]["uuid"].as_str().unwrap().to_string();
    let f = dir.path().join("crafted.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let out = np(&db).arg("import").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(e.contains("crafted.json") && e.contains(&uuid) && e.contains("\"not a date\""), "{e}");
    assert!(!db.exists(), "nothing from the file was committed");
}

/// Guards against text order, which makes `2026-11-05T01:00:00+05:00`
/// later than `2026-11-04T21:00:00Z`, an hour after it.
#[test]
fn latest_is_the_latest_instant() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut doc = fixture_doc();
    doc["runs"][0]["started"] = "2026-11-05T01:00:00.000+05:00".into();
    doc["runs"][1]["started"] = "2026-11-04T21:00:00.000Z".into();
    doc["runs"][2]["started"] = "2026-11-04T10:00:00.000Z".into();
    let f = dir.path().join("zones.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    assert!(np(&db).arg("import").arg(&f).output().unwrap().status.success());
    let out = np(&db).args(["--json", "show", "latest"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["id"], 2, "{v}");
    let out = np(&db).args(["--json", "list"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<i64> = v.as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [3, 1, 2]);
}

/// Guards against the up-front check letting it through and SQLite
/// failing later with "UNIQUE constraint failed: results.run_id,
/// results.seq".
#[test]
fn duplicate_result_numbers_are_refused_up_front_naming_run_and_seq() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut doc = fixture_doc();
    let seq = doc["runs"][0]["results"][0]["seq"].clone();
    doc["runs"][0]["results"][1]["seq"] = seq.clone();
    let uuid = doc["runs"][0]["uuid"].as_str().unwrap().to_string();
    let f = dir.path().join("dup.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let out = np(&db).arg("import").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(e.contains(&uuid) && e.contains(&format!("seq {seq}")), "{e}");
    assert!(!e.contains("UNIQUE") && e.lines().count() <= 2, "{e}");
    assert!(!db.exists());
}

/// 40 copies of the fixture's runs under new UUIDs: about 1 MiB of
/// results, more than the tmpfs holds.
fn big_export(dir: &Path) -> PathBuf {
    let mut doc = fixture_doc();
    let runs = doc["runs"].as_array().unwrap().clone();
    let mut many = Vec::new();
    for i in 0..40u64 {
        let mut r = runs[i as usize % runs.len()].clone();
        r["uuid"] = format!("00000000-0000-4000-8000-{i:012x}").into();
        many.push(r);
    }
    doc["runs"] = many.into();
    let f = dir.join("big.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    f
}

/// Guards against the first file's runs being committed without a word
/// and the command ending on a bare "database or disk is full".
#[test]
fn a_full_disk_stops_import_saying_what_was_committed() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_export(dir.path());
    let out = in_mount_ns(
        dir.path(),
        &format!(
            r#"mkdir "$D/small" && mount -t tmpfs -o size=400k tmpfs "$D/small" || exit 9
            "$NP" --db "$D/small/r.db" import "{}" "{}" "{}"
            echo "rc=$?"
            "$NP" --db "$D/small/r.db" --json list"#,
            fixture().display(),
            big.display(),
            fixture().display()
        ),
    );
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(o.contains("imported 3 run(s) as 1, 2, 3"), "the first file's line: {o}\n{e}");
    assert!(o.contains("rc=1"), "{o}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("big.json: not imported")
            && e.contains("disk is full")
            && e.contains("nothing from it was committed")
            && e.contains("1 file(s) before it imported")
            && e.contains("1 after it not tried"),
        "{e}"
    );
    let list = o.split_once("rc=1").unwrap().1;
    let runs: Value = serde_json::from_str(list.trim()).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 3, "only the first file's runs: {runs}");
}

/// Guards against both databases writing `reports/run-1.html`, the second
/// over the first.
#[test]
fn two_databases_in_one_folder_keep_their_own_reports() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for label in ["first-db", "second-db"] {
        let out = np(&dir.path().join(format!("{label}.db")))
            .env("NUMAPROBE_LOCK", dir.path().join("measure.lock"))
            .args(["--json", "--quiet", "run", "--quick", "--only", "lat-matrix", "--label", label])
            .arg("--report-dir")
            .arg(dir.path().join("reports"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["id"], 1);
        let html = PathBuf::from(v["report_html"].as_str().unwrap());
        let name = html.file_name().unwrap().to_string_lossy().into_owned();
        let uuid = v["uuid"].as_str().unwrap();
        assert_eq!(name, format!("run-1-{}.html", &uuid[..8]));
        paths.push((label, html, PathBuf::from(v["report_md"].as_str().unwrap())));
    }
    assert_ne!(paths[0].1, paths[1].1);
    for (label, html, md) in &paths {
        for f in [html, md] {
            let body = std::fs::read_to_string(f).unwrap();
            assert!(body.contains(label), "{} lost its run's report", f.display());
        }
    }
}

const SCRIPT: &str = "<script>alert(1)</script>";
const TITLE: &str = "\u{1b}]0;pwned\u{7}";
const FORMULA: &str = "=HYPERLINK(\"http://evil.example\",\"x\")";

/// The fixture with hostile labels, machine description and message.
fn hostile(dir: &Path) -> PathBuf {
    let mut doc = fixture_doc();
    doc["runs"][0]["label"] = format!("{SCRIPT} <svg onload=alert(2)>").into();
    doc["runs"][0]["machine"]["description"] = "<img src=x onerror=alert(3)>".into();
    doc["runs"][1]["label"] = format!("{TITLE}[click](javascript:alert(4))").into();
    doc["runs"][2]["label"] = FORMULA.into();
    doc["runs"][2]["message"] = "<script>alert(5)</script>".into();
    let f = dir.join("hostile.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    f
}

fn stdout_ok(c: &mut Command) -> String {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{c:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

/// Guards against the Markdown carrying `<script>`, `<svg onload=...>`
/// and a `javascript:` link as they are.
#[test]
fn hostile_labels_are_inert_in_markdown_reports() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    stdout_ok(np(&db).arg("import").arg(hostile(dir.path())));
    let mut all = String::new();
    for args in [
        &["report", "1", "--format", "md"][..],
        &["report", "1", "--compare", "2", "3", "--format", "md"],
        &["report", "3", "--brief"],
        &["report", "1", "--compare", "2", "--brief"],
        &["--table", "markdown", "list"],
    ] {
        all.push_str(&stdout_ok(np(&db).args(args)));
    }
    // Inside a fenced code block (the commands) Markdown shows text as it
    // is, so only the text outside fences must be inert.
    let prose = outside_code_blocks(&all);
    assert!(prose.len() < all.len(), "the commands block holds the labels too");
    for bad in ["<script", "<svg", "<img", "](javascript:"] {
        assert!(!prose.contains(bad), "{bad:?} got through:\n{prose}");
    }
    for bad in ["\u{1b}", "\u{7}"] {
        assert!(!all.contains(bad), "{bad:?} got through:\n{all}");
    }
    assert!(all.contains("&lt;script>alert(1)&lt;/script>"), "the label is still shown");
    assert!(all.contains("\\x1b]0;pwned\\x07"), "the control characters are shown");
}

/// The lines of Markdown `md` outside fenced code blocks (CommonMark: a
/// fence closes on a line of at least as many backticks).
fn outside_code_blocks(md: &str) -> String {
    let mut open: Option<usize> = None;
    let mut out = String::new();
    for line in md.lines() {
        let ticks = line.len() - line.trim_start_matches('`').len();
        match open {
            None if ticks >= 3 => open = Some(ticks),
            Some(n) if ticks >= n && line[ticks..].trim().is_empty() => open = None,
            Some(_) => {}
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// Guards against `list` and `show` sending ESC ] 0 ; ... BEL to the
/// terminal, retitling it.
#[test]
fn control_characters_in_labels_are_shown_not_sent_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    stdout_ok(np(&db).arg("import").arg(hostile(dir.path())));
    for args in [&["list"][..], &["show", "2"], &["compare", "1", "2"], &["--table", "tsv", "list"]]
    {
        let out = stdout_ok(np(&db).args(args));
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{args:?}: {out:?}"
        );
        if args[0] != "compare" {
            assert!(out.contains("\\x1b]0;pwned\\x07"), "{args:?}: {out}");
        }
    }
    // JSON keeps the label exactly (escaped the JSON way).
    let v: Value = serde_json::from_str(&stdout_ok(np(&db).args(["--json", "list"]))).unwrap();
    assert!(v[1]["label"].as_str().unwrap().starts_with(TITLE));
}

/// An imported hostname's ESC and BEL, and a label's line break, are shown
/// as text in every output (terminal through `fleet`, HTML, OpenMetrics
/// label values), and titles and cells stay on one line: raw, they would
/// reach the terminal or inject a Markdown heading.
#[test]
fn hostile_hostnames_and_line_breaks_are_escaped_in_every_output() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let mut doc = fixture_doc();
    for (i, r) in doc["runs"].as_array_mut().unwrap().iter_mut().enumerate() {
        r["label"] = format!("evil {i}\n# Injected heading\r\n- item {TITLE}").into();
        let host = format!("host{i}{TITLE}\u{1b}[2J\u{9b}");
        r["machine"]["description"] = host.clone().into();
        r["machine"]["info"]["hostname"] = host.into();
    }
    let f = dir.path().join("evil.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    stdout_ok(np(&db).arg("import").arg(&f));
    let raw = |c: char| c.is_control() && c != '\n' && c != '\t';
    for args in [
        &["fleet"][..],
        &["fleet", "--format", "md"],
        &["fleet", "--format", "html"],
        &["report", "1", "--format", "md"],
        &["report", "1", "--format", "html"],
        &["report", "1", "--compare", "2", "--format", "md"],
        &["report", "1", "--compare", "2", "--format", "html"],
        &["export", "1", "2", "--format", "openmetrics"],
        &["list"],
        &["show", "1"],
        &["compare", "1", "3"],
    ] {
        let out = np(&db).args(args).output().unwrap();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(out.status.success(), "{args:?}: {stderr}");
        for (name, out) in [("stdout", &stdout), ("stderr", &stderr)] {
            if let Some(at) = out.find(raw) {
                let around: String = out[at.saturating_sub(80)..].chars().take(160).collect();
                panic!("{args:?} {name}: a raw control character: {around:?}");
            }
        }
        assert!(stdout.contains("\\x1b") || args[0] == "fleet", "{args:?}: shown as text");
        if args.contains(&"md") {
            let injected =
                stdout.lines().filter(|l| l.starts_with("# Injected") || l.starts_with("- item"));
            assert_eq!(injected.count(), 0, "{args:?}: a label made Markdown structure:\n{stdout}");
        }
    }
}

/// Guards against a label cell beginning with `=`, which a spreadsheet
/// runs.
#[test]
fn csv_cells_that_would_be_formulas_get_a_quote() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    stdout_ok(np(&db).arg("import").arg(hostile(dir.path())));
    let csv = stdout_ok(np(&db).args(["export", "3", "--format", "csv"]));
    let quoted = format!("\"'{}\"", FORMULA.replace('"', "\"\""));
    assert!(csv.lines().skip(1).all(|l| l.contains(&quoted)), "{csv}");
    assert!(!csv.contains(",=") && !csv.contains(",\"="), "{csv}");
}

/// A WAL database copied onto read-only storage while its write-ahead log
/// still held a result: with the `-shm` file beside it SQLite reads both;
/// without it, the log cannot be read and opening `immutable` would hide
/// the result, so the error says so in one line instead.
#[test]
fn a_write_ahead_log_on_read_only_storage_is_read_or_named() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    let mut db = store::Store::open(live.join("r.db")).unwrap();
    let mut new = store::NewRun::new("numaprobe run", "0.1.0");
    new.label = Some("in-the-log".into());
    let run = db.begin_run(&new).unwrap();
    let finding = serde_json::json!({"id": "x", "severity": "ok"});
    db.add_result(run, &results::upgrade::read("audit", &finding).record).unwrap();
    db.finish_run(run, store::RunStatus::Complete, None).unwrap();
    let wal = std::fs::metadata(live.join("r.db-wal")).map(|m| m.len()).unwrap_or(0);
    assert!(wal > 0, "the run is still in the write-ahead log");
    for (name, files) in
        [("with-shm", &["r.db", "r.db-wal", "r.db-shm"][..]), ("no-shm", &["r.db", "r.db-wal"])]
    {
        let d = dir.path().join(name);
        std::fs::create_dir(&d).unwrap();
        for f in files {
            std::fs::copy(live.join(f), d.join(f)).unwrap();
        }
    }
    drop(db);
    let out = in_mount_ns(
        dir.path(),
        r#"mount --bind "$D" "$D" && mount -o remount,ro,bind "$D" || exit 9
        "$NP" --db "$D/with-shm/r.db" list; echo "rc=$?"
        "$NP" --db "$D/no-shm/r.db" list; echo "rc=$?""#,
    );
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(o.contains("in-the-log"), "the run in the log is read: {o}\n{e}");
    assert_eq!(o.matches("rc=0").count(), 1, "{o}");
    assert!(o.contains("rc=1"), "{o}");
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("no-shm/r.db") && e.contains("r.db-wal") && e.contains("write-ahead log"),
        "{e}"
    );
}
