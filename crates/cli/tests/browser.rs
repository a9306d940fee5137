//! The HTML report in a real browser: Debian's `chromium`, headless, loads
//! a report made by the binary from a synthetic store, and we check the DOM
//! it built (every chart present, no script errors) and that it painted a
//! screenshot. Gated behind the `browser-tests` feature (run by .ci/run):
//!
//! ```text
//! apt-get install -y chromium
//! cargo test -p numaprobe --features browser-tests --test browser
//! ```
//!
//! `CHROMIUM=/path/to/chrome` picks another browser binary. The screenshot
//! is kept at `$CARGO_TARGET_TMPDIR/report-screenshot.png` for a person to
//! look at.

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

/// Charts the report of run 1 compared with runs 2 and 3 draws: bandwidth
/// matrix, bandwidth vs threads, latency matrix, latency vs working set,
/// per-CPU latency, loaded latency, core-to-core, program under placements
/// (exec bars), comparison bars.
const EXPECTED_CHARTS: usize = 9;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "chromium is not installed: the browser test needs it (`apt-get install -y chromium`), \
         or set CHROMIUM to a Chrome/Chromium binary"
    );
}

/// Runs chromium headless on `url` with `extra` flags; returns (stdout,
/// stderr). Fails the test after two minutes.
fn run_chromium(profile: &Path, extra: &[String], url: &str) -> (String, String) {
    let out_path = profile.with_extension("stdout");
    let err_path = profile.with_extension("stderr");
    let mut child = Process::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        // Files, not pipes: the DOM is larger than a pipe buffer.
        .stdout(Stdio::from(std::fs::File::create(&out_path).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err_path).unwrap()))
        .spawn()
        .expect("start chromium");
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read =
        |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
    let (out, err) = (read(&out_path), read(&err_path));
    assert!(status.success(), "chromium failed ({status}): {err}");
    (out, err)
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 24 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

#[test]
fn html_report_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let html = dir.path().join("report.html");
    let np = || {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env_remove("NUMAPROBE_DB").arg("--db").arg(&db);
        c
    };
    np().arg("import").arg(fixture()).assert().success();
    np().args(["report", "1", "--compare", "2", "3", "-o"]).arg(&html).assert().success();
    let url = format!("file://{}", html.display());

    // The DOM after load: every chart, every section, no script errors.
    let (dom, log) = run_chromium(&dir.path().join("profile-dom"), &["--dump-dom".into()], &url);
    assert_eq!(
        dom.matches("<svg class=\"chart").count(),
        EXPECTED_CHARTS,
        "charts in the rendered DOM"
    );
    for h in [
        "Environment",
        "Commands",
        "Summary",
        "Bandwidth",
        "Latency",
        "Comparison",
        "Analysis and recommendations",
        "Appendix: raw figures",
    ] {
        assert!(dom.contains(&format!(">{h}</h2>")), "section {h} missing from the DOM");
    }
    assert!(dom.contains("<h1>numaprobe report: baseline</h1>"));
    for bad in ["Uncaught", "Refused to", "ERR_", "SyntaxError"] {
        let hit = log.lines().find(|l| l.contains(bad) && l.contains("CONSOLE"));
        assert!(hit.is_none(), "browser console error: {}", hit.unwrap_or_default());
    }

    // A screenshot of the whole page.
    let shot = dir.path().join("report.png");
    run_chromium(
        &dir.path().join("profile-shot"),
        &["--window-size=1100,14000".into(), format!("--screenshot={}", shot.display())],
        &url,
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote no screenshot");
    assert_eq!(png_size(&bytes), (1100, 14000));
    // A blank page of this size compresses to a few tens of kB; the report
    // with its charts and tables is several hundred.
    assert!(bytes.len() > 200_000, "screenshot looks blank ({} bytes)", bytes.len());
    let keep = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    std::fs::copy(&shot, &keep).unwrap();
    eprintln!("screenshot kept at {}", keep.display());
}
