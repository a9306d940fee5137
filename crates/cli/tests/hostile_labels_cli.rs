//! Hostile labels stay text in every output: labels holding markup
//! (`<script>`, an `<img onerror>`, a closing `</text>` meant for an SVG),
//! quotes, Markdown links and code spans, control characters (ESC, BEL,
//! CR, a line feed) and 10 KB of text go through every HTML, Markdown and
//! text output of the store's runs: the run report and the comparison
//! report (runs and groups) in HTML and Markdown, the brief, `list`,
//! `show`, `compare` (text, `--table markdown`, `--json`). (The CSV and
//! JSON exports are data and keep the exact text; CSV's formula guard has
//! its own test.) HTML may hold only the tags the same reports hold with plain
//! labels, and no SVG `<text>` any markup; Markdown no raw HTML or link
//! outside code; no output a raw control character; JSON the exact label.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

/// 10 KB of words, so that wrapping and shortening have work to do.
fn long_words() -> String {
    "wordy ".repeat(1707).trim_end().to_string()
}

/// The labels: markup and quotes, Markdown and controls, and 10 KB.
fn hostile_labels() -> [String; 3] {
    [
        format!(
            "L0 <script>alert(1)</script> \"q\" 'a' & <img src=x onerror=alert(2)></text><text> {}",
            long_words()
        ),
        "L1 `code <b>x</b>` [click](javascript:alert(3)) \u{1b}]0;title\u{7} \u{1b}[31mred\r\nnext"
            .to_string(),
        format!("L2 {}", "x".repeat(10_240)),
    ]
}

/// The fixture's three runs under `labels`, imported into a new store.
fn store(dir: &Path, labels: &[String]) -> PathBuf {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    for (r, l) in doc["runs"].as_array_mut().unwrap().iter_mut().zip(labels) {
        r["label"] = Value::String(l.clone());
    }
    let file = dir.join("export.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let db = dir.join("results.db");
    np(&db).arg("import").arg(&file).assert().success();
    db
}

fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB").arg("--db").arg(db);
    c
}

fn out(db: &Path, args: &[&str]) -> String {
    let o = np(db).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Every output, by name: (name, kind, text).
fn outputs(
    db: &Path,
    dir: &Path,
    label_of: &dyn Fn(usize) -> String,
) -> Vec<(String, &'static str, String)> {
    let mut v = Vec::new();
    let groups = [format!("label:{}", label_of(0)), format!("label:{}", label_of(1))];
    let reports: [(&str, Vec<&str>); 3] = [
        ("run", vec!["1"]),
        ("runs", vec!["1", "--compare", "2", "3"]),
        ("groups", vec![&groups[0], "--compare", &groups[1]]),
    ];
    for (name, args) in &reports {
        for (ext, kind) in [("html", "html"), ("md", "md")] {
            let file = dir.join(format!("{name}.{ext}"));
            let mut a: Vec<&str> = vec!["report"];
            a.extend(args.iter().copied());
            np(db).args(&a).arg("-o").arg(&file).assert().success();
            v.push((
                format!("report {name} .{ext}"),
                kind,
                std::fs::read_to_string(&file).unwrap(),
            ));
        }
        let mut a: Vec<&str> = vec!["report"];
        a.extend(args.iter().copied());
        a.push("--brief");
        v.push((format!("report {name} --brief"), "md", out(db, &a)));
    }
    v.push(("list".into(), "text", out(db, &["list"])));
    v.push(("show".into(), "text", out(db, &["show", "1"])));
    v.push(("compare".into(), "text", out(db, &["compare", "1", "2", "3"])));
    v.push(("compare groups".into(), "text", out(db, &["compare", &groups[0], &groups[1]])));
    v.push((
        "compare --table markdown".into(),
        "md",
        out(db, &["--table", "markdown", "compare", "1", "2", "3"]),
    ));
    v
}

/// The tag names an HTML text holds (`<svg`, `</text`: `svg`, `text`).
fn tags(html: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in html.split('<').skip(1) {
        let name: String = part
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() {
            out.insert(name.to_ascii_lowercase());
        }
    }
    out
}

/// Markdown with fenced blocks and code spans taken out: what a renderer
/// would interpret.
fn outside_code(md: &str) -> String {
    let mut out = String::new();
    let mut fence = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        let mut in_span = false;
        for (k, part) in line.split('`').enumerate() {
            if k > 0 {
                in_span = !in_span;
            }
            if !in_span {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

fn raw_controls(s: &str) -> Vec<char> {
    s.chars().filter(|c| c.is_control() && !matches!(c, '\n' | '\t')).collect()
}

#[test]
fn hostile_labels_stay_text_in_every_html_markdown_and_text_output() {
    let dir = tempfile::tempdir().unwrap();
    // The same outputs with plain labels: the tags HTML may hold.
    let plain_dir = dir.path().join("plain");
    std::fs::create_dir(&plain_dir).unwrap();
    let plain: Vec<String> = (0..3).map(|i| format!("plain label {i}")).collect();
    let plain_db = store(&plain_dir, &plain);
    let plain_out = outputs(&plain_db, &plain_dir, &|i| plain[i].clone());
    let allowed: BTreeSet<String> =
        plain_out.iter().filter(|o| o.1 == "html").flat_map(|o| tags(&o.2)).collect();
    assert!(allowed.contains("svg") && allowed.contains("text"), "{allowed:?}");

    let bad_dir = dir.path().join("hostile");
    std::fs::create_dir(&bad_dir).unwrap();
    let labels = hostile_labels();
    let db = store(&bad_dir, &labels);
    let all = outputs(&db, &bad_dir, &|i| labels[i].clone());
    assert_eq!(all.len(), plain_out.len());
    for (name, kind, text) in &all {
        assert!(
            raw_controls(text).is_empty(),
            "{name}: raw control characters {:?}",
            raw_controls(text)
        );
        match *kind {
            "html" => {
                let extra: Vec<String> = tags(text).difference(&allowed).cloned().collect();
                assert!(extra.is_empty(), "{name}: tags no plain report holds: {extra:?}");
                assert!(
                    !text.contains("<script") && !text.contains("<img"),
                    "{name}: markup as markup"
                );
                // Every SVG text holds text only (and its hover title): no
                // other element starts inside one.
                for t in text.split("<text").skip(1) {
                    let mut body =
                        t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string();
                    if let (Some(a), Some(b)) = (body.find("<title>"), body.find("</title>")) {
                        body.replace_range(a..b + "</title>".len(), "");
                    }
                    assert!(!body.contains('<'), "{name}: markup inside an SVG text: {body:.120}");
                }
                assert!(text.contains("&lt;script&gt;"), "{name}: the label is not shown");
            }
            "md" => {
                let live = outside_code(text);
                for bad in ["<script", "<img", "<b>", "](javascript", "</text>"] {
                    assert!(!live.contains(bad), "{name}: {bad:?} outside code");
                }
            }
            _ => {}
        }
    }
    // The JSON documents keep the exact labels.
    let v: Value = serde_json::from_str(&out(&db, &["--json", "list"])).unwrap();
    let got: BTreeSet<&str> =
        v.as_array().unwrap().iter().filter_map(|r| r["label"].as_str()).collect();
    for l in &labels {
        assert!(got.contains(l.as_str()), "list --json lost a label");
    }
    let v: Value = serde_json::from_str(&out(&db, &["--json", "compare", "1", "2", "3"])).unwrap();
    let names: Vec<&str> =
        v["groups"].as_array().unwrap().iter().map(|g| g["label"].as_str().unwrap()).collect();
    assert_eq!(names, labels.iter().map(String::as_str).collect::<Vec<_>>());
}
