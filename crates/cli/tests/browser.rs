//! The HTML reports in a real browser: Debian's `chromium`, headless, loads
//! reports made by the binary from synthetic stores, and we check what it
//! laid out: every chart present with its axis labels, no text running
//! outside its chart or over another text, no cache-size label over a data
//! point, no script errors, and a painted screenshot. Gated behind the
//! `browser-tests` feature (run by .ci/run):
//!
//! ```text
//! apt-get install -y chromium
//! cargo test -p numaprobe --features browser-tests --test browser
//! ```
//!
//! `CHROMIUM=/path/to/chrome` picks another browser binary. Screenshots of
//! every report are kept under `target/tmp/browser-screenshots/` for a
//! person to look at. The layout checks run a small script injected into a
//! test copy of each report (the report itself carries no script and a CSP
//! that forbids one); its findings come back through `--dump-dom`.

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;

#[path = "support/snc_study.rs"]
mod snc_study;

/// Charts the report of run 1 compared with runs 2 and 3 draws: bandwidth
/// matrix and its remote/local view, bandwidth vs threads, latency matrix
/// and its remote/local view, latency vs working set, per-CPU latency,
/// loaded latency, core-to-core, program under placements (exec bars),
/// and one chart per compared metric of the catalogue (21: dots per run,
/// median marked: six headline metrics, the local bandwidth per package,
/// the cross-package bandwidth, the spread-memory latency, the remote
/// penalty, the latency a thread sees, five per-CPU figures, four exec
/// policies' program metric), the answer's forest plot of every
/// change, and the groups' sweep, loaded-latency and scaling curves
/// overlaid.
const EXPECTED_CHARTS: usize = 35;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

/// Three runs of a two-socket SNC2 machine with a CXL node and one run of a
/// single-node machine (`make_snc2_cxl.py`).
fn snc2_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/snc2-cxl-export.json")
}

/// Where screenshots are kept: `target/tmp/browser-screenshots`.
fn screenshot_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("browser-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
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

/// The layout check run inside the page: per chart its kind, title, axis
/// labels, texts outside the chart's box, texts overlapping other texts and
/// marker labels over data points; and the page height.
const CHECK_SCRIPT: &str = r#"<script>
(function () {
  function hit(a, b, tol) {
    return Math.min(a.right, b.right) - Math.max(a.left, b.left) > tol &&
           Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > tol;
  }
  // The first screen as the page opens (folds closed): the comparison's
  // answer table and forest plot, the run report's tiles, the page width.
  var box = function (el) {
    if (!el) return null;
    var b = el.getBoundingClientRect();
    return {top: b.top, bottom: b.bottom, left: b.left, right: b.right, width: b.width};
  };
  var answerWrap = document.querySelector('div.answer div.table-wrap');
  var recs = Array.prototype.filter.call(document.querySelectorAll('h3'), function (h) {
    return h.textContent === 'Recommendations';
  })[0];
  var first = {answer_table: box(document.querySelector('div.answer table')),
               answer_clipped: answerWrap ? answerWrap.scrollWidth - answerWrap.clientWidth : null,
               recommendations: box(recs),
               forest_labels: Array.prototype.map.call(
                 document.querySelectorAll('svg.chart.forest text.row-label'),
                 function (t) { return t.textContent; }),
               forest_ticks: Array.prototype.map.call(
                 document.querySelectorAll('svg.chart.forest g.axis text:not(.axis-label)'),
                 function (t) { return t.textContent; }),
               forest_clipped: document.querySelectorAll('svg.chart.forest path.clipped').length,
               forest: box(document.querySelector('svg.chart.forest')),
               tiles: box(document.querySelector('div.tiles')),
               tile_count: document.querySelectorAll('div.tile').length,
               main: box(document.querySelector('main')),
               closed_folds: document.querySelectorAll('details.fold:not([open])').length};
  // Then every fold opened, as a reader opens them: the charts inside are
  // checked as they are drawn.
  document.querySelectorAll('details').forEach(function (d) { d.open = true; });
  var charts = [];
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    var kind = svg.classList.contains('xy') ? 'xy' : svg.classList.contains('heatmap') ? 'heatmap'
      : svg.classList.contains('forest') ? 'forest' : 'bars';
    var t = svg.querySelector('title');
    var labels = Array.prototype.map.call(svg.querySelectorAll('.axis-label'), function (x) { return x.textContent.trim(); })
      .filter(function (x) { return x.length > 0; });
    var texts = [];
    svg.querySelectorAll('text').forEach(function (x) {
      var b = x.getBoundingClientRect();
      var own = Array.prototype.filter.call(x.childNodes, function (n) { return n.nodeType === 3; })
        .map(function (n) { return n.textContent; }).join('').trim();
      if (b.width > 0 && own.length > 0) texts.push([own, b]);
    });
    var outside = texts.filter(function (x) {
      var b = x[1];
      return b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5 || b.bottom > r.bottom + 0.5;
    }).map(function (x) { return x[0]; });
    var overlaps = [];
    for (var i = 0; i < texts.length; i++)
      for (var j = i + 1; j < texts.length; j++)
        if (hit(texts[i][1], texts[j][1], 2)) overlaps.push(texts[i][0] + ' / ' + texts[j][0]);
    var covered = [];
    svg.querySelectorAll('g.marker text').forEach(function (m) {
      var b = m.getBoundingClientRect();
      svg.querySelectorAll('circle').forEach(function (c) {
        if (hit(b, c.getBoundingClientRect(), 0)) covered.push(m.textContent.trim());
      });
    });
    // dashed reference lines cut by the plot's frame (their box leaves the clip)
    var clipped = [];
    var clip = svg.querySelector('clipPath rect');
    if (clip) {
      // in the chart's own units: a clip path's rectangle is never laid out
      var a = function (n) { return parseFloat(clip.getAttribute(n)); };
      var cx = a('x'), cy = a('y'), cw = a('width'), ch = a('height');
      svg.querySelectorAll('polyline.refline').forEach(function (l) {
        var b = l.getBBox();
        if (b.y < cy - 1 || b.y + b.height > cy + ch + 1 || b.x < cx - 1 || b.x + b.width > cx + cw + 1)
          clipped.push(l.querySelector('title') ? l.querySelector('title').textContent : '?');
      });
    }
    charts.push({kind: kind, title: t ? t.textContent : '', labels: labels, texts: texts.length,
                 outside: outside, overlaps: overlaps, covered: covered, clipped: clipped});
  });
  var pre = document.createElement('pre');
  pre.id = 'np-check';
  // tables of sentences (the audit's, with its Needs column) that still
  // need a horizontal scrollbar
  var overflowing = [];
  document.querySelectorAll('div.table-wrap').forEach(function (w) {
    var t = w.querySelector('table');
    var needs = t && Array.prototype.some.call(t.querySelectorAll('th'), function (h) { return h.textContent === 'Needs'; });
    if (t && (needs || t.classList.contains('prose')) && w.scrollWidth > w.clientWidth + 1)
      overflowing.push(Array.prototype.map.call(t.querySelectorAll('th'), function (h) { return h.textContent; }).join(','));
  });
  pre.textContent = JSON.stringify({height: document.documentElement.scrollHeight, charts: charts,
    viewport: window.innerHeight, overflowing: overflowing, first: first});
  document.body.appendChild(pre);
})();
</script>"#;

/// The page with the check script added and a CSP that lets it run (only
/// this test copy).
fn with_check_script(html: &str) -> String {
    let csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
    assert!(html.contains(csp), "the report's CSP changed");
    assert!(!html.contains("<script"), "the report must not carry a script");
    html.replace(csp, &format!("{csp}; script-src 'unsafe-inline'"))
        .replace("</body>", &format!("{CHECK_SCRIPT}\n</body>"))
}

/// What the check script found in one chart.
#[derive(Debug)]
struct ChartCheck {
    kind: String,
    title: String,
    labels: Vec<String>,
    texts: u64,
    outside: Vec<String>,
    overlaps: Vec<String>,
    covered: Vec<String>,
    clipped: Vec<String>,
}

/// What the check script found on the page.
#[derive(Debug)]
struct PageCheck {
    charts: Vec<ChartCheck>,
    height: u64,
    /// The window's height, px.
    viewport: f64,
    /// Header rows of sentence tables wider than their box.
    overflowing: Vec<String>,
    /// The first screen before any fold is opened: the boxes (`top`,
    /// `bottom`, `left`, `right`, `width`, px) of the answer's table
    /// (`answer_table`), the forest plot (`forest`), the tiles (`tiles`)
    /// and `main`; `tile_count`; `closed_folds`.
    first: serde_json::Value,
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Loads `html` (a report file) in Chromium with the check script; returns
/// the charts' checks and the page height.
fn layout(dir: &Path, name: &str, html: &Path) -> (Vec<ChartCheck>, u64, String) {
    let (page, dom) = page_check(dir, name, html, "1100,2000");
    (page.charts, page.height, dom)
}

/// [`layout`] in a window of `size` (`W,H`), with the page-level checks.
fn page_check(dir: &Path, name: &str, html: &Path, size: &str) -> (PageCheck, String) {
    let page = dir.join(format!("{name}-check.html"));
    std::fs::write(&page, with_check_script(&std::fs::read_to_string(html).unwrap())).unwrap();
    let (dom, log) = run_chromium(
        &dir.join(format!("profile-{name}-dom")),
        &[format!("--window-size={size}"), "--dump-dom".into()],
        &format!("file://{}", page.display()),
    );
    for bad in ["Uncaught", "Refused to", "ERR_", "SyntaxError"] {
        let hit = log.lines().find(|l| l.contains(bad) && l.contains("CONSOLE"));
        assert!(hit.is_none(), "{name}: browser console error: {}", hit.unwrap_or_default());
    }
    let start = dom.find("<pre id=\"np-check\">").unwrap_or_else(|| {
        panic!("{name}: the check script did not run (no #np-check in the DOM)")
    }) + "<pre id=\"np-check\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let v: serde_json::Value = serde_json::from_str(&unescape(&dom[start..end])).unwrap();
    let strs = |x: &serde_json::Value| -> Vec<String> {
        x.as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
    };
    let charts = v["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| ChartCheck {
            kind: c["kind"].as_str().unwrap().into(),
            title: c["title"].as_str().unwrap().into(),
            labels: strs(&c["labels"]),
            texts: c["texts"].as_u64().unwrap(),
            outside: strs(&c["outside"]),
            overlaps: strs(&c["overlaps"]),
            covered: strs(&c["covered"]),
            clipped: strs(&c["clipped"]),
        })
        .collect();
    let page = PageCheck {
        charts,
        height: v["height"].as_u64().unwrap(),
        viewport: v["viewport"].as_f64().unwrap(),
        overflowing: strs(&v["overflowing"]),
        first: v["first"].clone(),
    };
    (page, dom)
}

/// Every chart has its axis labels (two for x-y charts and heatmaps, the
/// value axis for bars), no text outside its box or over another text and
/// no marker label over a data point.
fn assert_readable(name: &str, charts: &[ChartCheck]) {
    for c in charts {
        let want = if c.kind == "bars" || c.kind == "forest" { 1 } else { 2 };
        assert!(
            c.labels.len() >= want,
            "{name}: chart {:?} lacks axis labels: {:?}",
            c.title,
            c.labels
        );
        assert!(c.texts > 0, "{name}: chart {:?} has no text laid out", c.title);
        assert!(
            c.outside.is_empty(),
            "{name}: chart {:?}: text outside the chart: {:?}",
            c.title,
            c.outside
        );
        assert!(
            c.overlaps.is_empty(),
            "{name}: chart {:?}: texts overlap: {:?}",
            c.title,
            c.overlaps
        );
        assert!(
            c.covered.is_empty(),
            "{name}: chart {:?}: labels over data: {:?}",
            c.title,
            c.covered
        );
        assert!(
            c.clipped.is_empty(),
            "{name}: chart {:?}: reference lines cut by the frame: {:?}",
            c.title,
            c.clipped
        );
    }
}

/// A screenshot of the whole page (`height` px tall), kept under
/// `target/tmp/browser-screenshots/NAME.png`; checks it was painted.
fn screenshot(dir: &Path, name: &str, html: &Path, height: u64) -> PathBuf {
    screenshot_at(dir, name, html, 1100, height)
}

/// [`screenshot`] in a window `width` px wide.
fn screenshot_at(dir: &Path, name: &str, html: &Path, width: u32, height: u64) -> PathBuf {
    let height = height.clamp(800, 30000);
    let shot = dir.join(format!("{name}.png"));
    run_chromium(
        &dir.join(format!("profile-{name}-shot")),
        &[format!("--window-size={width},{height}"), format!("--screenshot={}", shot.display())],
        &format!("file://{}", html.display()),
    );
    let bytes = std::fs::read(&shot).expect("chromium wrote no screenshot");
    assert_eq!(png_size(&bytes), (width, height as u32));
    // A blank page compresses to a few kB per 1000 px; a report with
    // charts and tables to several times that.
    assert!(
        bytes.len() as u64 > 12 * height,
        "{name}: screenshot looks blank ({} bytes)",
        bytes.len()
    );
    let keep = screenshot_dir().join(format!("{name}.png"));
    std::fs::copy(&shot, &keep).unwrap();
    eprintln!("screenshot kept at {}", keep.display());
    keep
}

/// Imports `fixture` into a fresh store and writes `report ARGS` to
/// `NAME.html`.
fn report(dir: &Path, db: &Path, name: &str, args: &[&str]) -> PathBuf {
    let html = dir.join(format!("{name}.html"));
    Command::cargo_bin("numaprobe")
        .unwrap()
        .env_remove("NUMAPROBE_DB")
        .arg("--db")
        .arg(db)
        .arg("report")
        .args(args)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    html
}

fn import(db: &Path, fixture: &Path) {
    Command::cargo_bin("numaprobe")
        .unwrap()
        .env_remove("NUMAPROBE_DB")
        .arg("--db")
        .arg(db)
        .arg("import")
        .arg(fixture)
        .assert()
        .success();
}

#[test]
fn snc2_cxl_machine_report_is_readable_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &snc2_fixture());
    // run 1 against runs 2 and 3: a comparison of three groups of settings
    let html = report(dir.path(), &db, "snc2-cxl", &["1", "--compare", "2", "3"]);
    let (charts, height, dom) = layout(dir.path(), "snc2-cxl", &html);
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    for want in [
        "Bandwidth matrix (triad, best GB/s)",
        "Bandwidth relative to the CPU node's local memory (remote / local)",
        "Bandwidth against thread count",
        "Latency matrix (median ns)",
        "Latency relative to the CPU node's local memory (remote / local)",
        "Latency against working-set size",
        "Latency from each CPU to one node's memory",
        "Loaded latency against bandwidth, per traffic mix",
        "Core-to-core latency (median ns, one way)",
        "Placements against default (median metric)",
        "Local bandwidth per group (GB/s, higher is better): one dot per run, median marked",
        "Remote penalty (other-package / local latency) per group (x, lower is better): one dot per run, median marked",
    ] {
        assert!(titles.contains(&want), "chart {want:?} missing; charts: {titles:?}");
    }
    assert_readable("snc2-cxl", &charts);
    // the 5 x 4 node matrix has a value in every cell, the CXL column too
    assert!(dom.contains("3 -&gt; 4: 21.8 GB/s"), "CXL cell of the bandwidth matrix");
    // the sweep spans decades: its latency axis is logarithmic
    assert!(dom.contains("latency (ns, log scale)"));
    // bands, ideal scaling and the theoretical peak are drawn
    assert!(dom.contains("class=\"band\""));
    assert!(dom.contains("ideal linear scaling of triad, node 0 -&gt; 0"));
    assert!(dom.contains("theoretical peak of one node's channels, 153.6 GB/s"));
    // the at-a-glance box, with its worst finding coloured as critical
    assert!(dom.contains("<section class=\"glance\">"));
    assert!(dom.contains(
        "<li class=\"sev-critical\"><span class=\"sev\">critical</span> memory.channels"
    ));
    assert!(dom.contains("theoretical peak 614.4 GB/s"));
    screenshot(dir.path(), "snc2-cxl", &html, height);
}

#[test]
fn single_node_machine_report_is_readable_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &snc2_fixture());
    let html = report(dir.path(), &db, "single-node", &["4"]);
    let (charts, height, dom) = layout(dir.path(), "single-node", &html);
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Bandwidth against thread count",
            "Latency against working-set size",
            "Latency from each CPU to one node's memory"
        ]
    );
    assert_readable("single-node", &charts);
    assert!(dom.contains("One node pair only (a single-node machine)"));
    assert!(dom.contains("<section class=\"glance\">"));
    screenshot(dir.path(), "single-node", &html, height);
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
        "Comparison",
        "Environment",
        "Commands",
        "Bandwidth",
        "Latency",
        "Analysis and recommendations",
        "Appendix: raw figures",
    ] {
        assert!(dom.contains(&format!(">{h}</h2>")), "section {h} missing from the DOM");
    }
    assert!(dom.contains(
        "<h1>numaprobe comparison: baseline (baseline) vs THP always, performance governor vs epyc NPS2</h1>"
    ));
    for bad in ["Uncaught", "Refused to", "ERR_", "SyntaxError"] {
        let hit = log.lines().find(|l| l.contains(bad) && l.contains("CONSOLE"));
        assert!(hit.is_none(), "browser console error: {}", hit.unwrap_or_default());
    }

    // The layout: axis labels, nothing outside or over anything.
    let (charts, height, _) = layout(dir.path(), "xeon-compare", &html);
    assert_eq!(charts.len(), EXPECTED_CHARTS);
    assert_readable("xeon-compare", &charts);
    screenshot(dir.path(), "xeon-compare", &html, height);
}

/// The SNC2 fixture with two findings of a VM's audit added to its first
/// run, as this development VM words them: long sentences with long
/// unbreakable paths, which made the audit table wider than the page.
fn with_long_findings(dir: &Path) -> PathBuf {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snc2_fixture()).unwrap()).unwrap();
    let results = doc["runs"][0]["results"].as_array_mut().unwrap();
    let seq = results.iter().filter_map(|r| r["seq"].as_u64()).max().unwrap();
    for (i, payload) in [
        serde_json::json!({"id": "memory.population", "severity": "unknown",
            "found": "no SMBIOS table (/sys/firmware/dmi/tables/DMI absent: firmware or hypervisor does not expose it, or the capture did not record it)",
            "expected": "every memory channel populated, identical DIMMs",
            "why": "Without the DIMM records numaprobe cannot check channels or compute the theoretical peak, and does not guess.",
            "fix": "", "needs": "nothing"}),
        serde_json::json!({"id": "memory.dimm_errors", "severity": "unknown",
            "found": "no EDAC memory controller (/sys/devices/system/edac/mc): no EDAC driver loaded, or a virtual machine",
            "expected": "no corrected or uncorrected memory errors",
            "why": "Without EDAC the kernel reports no DIMM errors, and numaprobe does not guess.",
            "fix": "load the platform's EDAC driver (e.g. modprobe skx_edac, i10nm_edac or amd64_edac)",
            "needs": "runtime"}),
    ]
    .into_iter()
    .enumerate()
    {
        results.push(serde_json::json!({"seq": seq + 1 + i as u64,
            "recorded": "2026-11-10T12:07:07.000Z", "kind": "audit", "payload": payload}));
    }
    let path = dir.join("snc2-long-findings.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    path
}

/// The comparison report's first screen (a 1100 x 900 window): the title
/// names the groups and the answer starts there (its heading and table
/// visible, the settings that differ and the recommendations in it); no
/// table of sentences (the audit's) needs a horizontal scrollbar; no
/// ideal-scaling line is cut by its chart's frame.
/// Screenshots: `compare-first-screen.png` (the window) and
/// `compare-full.png` (the page).
#[test]
fn comparison_report_opens_with_the_study_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &with_long_findings(dir.path()));
    let html = report(dir.path(), &db, "compare", &["1", "--compare", "2", "3"]);
    let (page, dom) = page_check(dir.path(), "compare", &html, "1100,900");
    assert!(
        dom.contains(
            "<h1>numaprobe comparison: SNC2 baseline (baseline) vs THP always vs NUMA balancing on</h1>"
        ),
        "the title does not name the groups"
    );
    let table = &page.first["answer_table"];
    let top = table["top"].as_f64().expect("no answer table on the page");
    assert!(top + 150.0 < page.viewport, "the answer's table starts at {top} px");
    // laid out, not folded away (a closed fold gives an empty box)
    assert!(table["width"].as_f64().unwrap() > 300.0, "the answer's table is hidden: {table}");
    let bx = &dom[dom.find("<h2>The answer</h2>").expect("no answer")..];
    let bx = &bx[..bx.find("<h2>Comparison</h2>").unwrap()];
    for want in [
        "Settings that differ",
        "Local bandwidth (GB/s)",
        "Recommendations",
        "<details class=\"why\"",
    ] {
        assert!(bx.contains(want), "{want:?} missing from the answer");
    }
    assert!(!bx.contains('`') && !bx.contains("**"), "Markdown marks in the answer");
    assert!(page.overflowing.is_empty(), "tables needing a scrollbar: {:?}", page.overflowing);
    assert_readable("compare", &page.charts);
    screenshot(dir.path(), "compare-first-screen", &html, 900);
    screenshot(dir.path(), "compare-full", &html, page.height);
}

/// Two groups (run 1 against run 2) in a 1280 x 900 window: the answer's
/// table and its forest plot are both on the first screen, side by side
/// (the forest plot whole, each at least 400 px wide), the verdicts
/// coloured; every fold (the comparison's detail) starts closed.
/// Screenshot: `compare-answer-1280.png` (the window).
#[test]
fn comparison_first_screen_shows_the_table_and_the_forest_plot() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &snc2_fixture());
    let html = report(dir.path(), &db, "answer", &["1", "--compare", "2"]);
    let (page, dom) = page_check(dir.path(), "answer", &html, "1280,900");
    let f = &page.first;
    let (table, forest) = (&f["answer_table"], &f["forest"]);
    let n = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {f}"));
    assert!(n(table, "top") + 200.0 < page.viewport, "table below the first screen: {f}");
    assert!(
        n(forest, "top") >= 0.0 && n(forest, "bottom") <= page.viewport,
        "forest plot not whole on the first screen of {} px: {f}",
        page.viewport
    );
    assert!(n(table, "width") >= 400.0 && n(forest, "width") >= 400.0, "squeezed: {f}");
    assert!(n(forest, "left") >= n(table, "right"), "not side by side: {f}");
    assert!(f["closed_folds"].as_u64().unwrap() >= 3, "the detail is not folded: {f}");
    assert!(dom.contains("<td class=\"verdict v-"), "verdicts not coloured");
    assert!(dom.contains("class=\"margin-band\""), "no margin band");
    let forest_check =
        page.charts.iter().find(|c| c.kind == "forest").expect("forest plot checked");
    assert_readable("answer", std::slice::from_ref(forest_check));
    assert_readable("answer", &page.charts);
    screenshot_at(dir.path(), "compare-answer-1280", &html, 1280, 900);
}

/// The SVG of the chart titled `title` in `dom`.
fn chart_svg<'a>(dom: &'a str, title: &str) -> &'a str {
    let at = dom.find(&format!(">{title}</title>")).unwrap_or_else(|| panic!("no chart {title:?}"));
    let start = dom[..at].rfind("<svg").unwrap();
    let end = at + dom[at..].find("</svg>").unwrap();
    &dom[start..end]
}

/// Three groups (runs 1, 2 and 3 of the SNC2 fixture) in a 1280 x 900
/// window: the answer first (recommendations, then the table on the first
/// screen), the forest plot, one row per metric and compared group, under
/// the table; below, the groups' sweep, loaded-latency and scaling curves
/// overlaid, one line and one legend entry per group, each group in its
/// own colour, the same in every chart.
/// Screenshots: `compare3-answer-1280.png` (the window) and
/// `compare3-curves.png` (the page).
#[test]
fn three_groups_answer_first_and_overlay_their_curves() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &snc2_fixture());
    let html = report(dir.path(), &db, "three", &["1", "--compare", "2", "3"]);
    let (page, dom) = page_check(dir.path(), "three", &html, "1280,900");
    let f = &page.first;
    let (recs, table, forest) = (&f["recommendations"], &f["answer_table"], &f["forest"]);
    let n = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {f}"));
    assert!(n(recs, "top") < n(table, "top"), "the recommendations come first: {f}");
    assert!(n(table, "top") + 200.0 < page.viewport, "table below the first screen: {f}");
    assert!(f["answer_clipped"].as_f64().unwrap() <= 1.0, "the answer's table is clipped: {f}");
    assert!(n(forest, "top") >= n(table, "bottom"), "the forest plot comes after the table: {f}");
    let groups = ["SNC2 baseline", "THP always", "NUMA balancing on"];
    let mut colours: Vec<Vec<String>> = Vec::new();
    for title in [
        "Latency against the working set, every group (median ns of each size)",
        "Loaded latency against bandwidth, every group (read traffic, the first CPU on its memory)",
        "Bandwidth against threads, every group (triad, best GB/s of the first node on its memory)",
    ] {
        let svg = chart_svg(&dom, title);
        let lines: Vec<&str> = svg.split("<polyline fill=\"none\" stroke=\"").skip(1).collect();
        assert_eq!(lines.len(), groups.len(), "{title}: one line per group");
        let cols: Vec<String> =
            lines.iter().map(|l| l[..l.find('"').unwrap()].to_string()).collect();
        let mut distinct = cols.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), groups.len(), "{title}: one colour per group: {cols:?}");
        for g in groups {
            assert!(svg.contains(&format!("<title>{g}")), "{title}: no legend entry for {g}");
        }
        colours.push(cols);
    }
    assert!(colours.windows(2).all(|w| w[0] == w[1]), "a group changes colour: {colours:?}");
    // One curve per group: the SNC2 runs also chased and swept their CXL
    // node, which must not join the first node's line.
    let scaling = chart_svg(
        &dom,
        "Bandwidth against threads, every group (triad, best GB/s of the first node on its memory)",
    );
    for line in scaling.split("stroke-width=\"2\" points=\"").skip(1) {
        let pts = &line[..line.find('"').unwrap()];
        let xs: Vec<f64> =
            pts.split_whitespace().map(|p| p.split(',').next().unwrap().parse().unwrap()).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "a scaling line goes back: {pts}");
    }
    let curves = page.charts.iter().filter(|c| c.title.contains("every group")).count();
    assert_eq!(curves, 3, "the curves were laid out");
    assert_readable("three", &page.charts);
    screenshot_at(dir.path(), "compare3-answer-1280", &html, 1280, 900);
    screenshot(dir.path(), "compare3-curves", &html, page.height);
}

/// A run's report in a 1280 x 900 window opens with its headline tiles
/// (at least five: bandwidth local and global, idle and loaded latency,
/// remote penalty, share of the peak), the page uses the window's width,
/// and the glance box lists no informational finding (those are in the
/// audit). Screenshot: `run-tiles-1280.png` (the window).
#[test]
fn run_report_opens_with_headline_tiles() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &with_long_findings(dir.path()));
    let html = report(dir.path(), &db, "tiles", &["1"]);
    let (page, dom) = page_check(dir.path(), "tiles", &html, "1280,900");
    let f = &page.first;
    let tiles = &f["tiles"];
    let top = tiles["top"].as_f64().unwrap_or_else(|| panic!("no tiles: {f}"));
    assert!(top < 150.0 && tiles["bottom"].as_f64().unwrap() < 400.0, "tiles not at the top: {f}");
    assert!(f["tile_count"].as_u64().unwrap() >= 6, "{f}");
    assert!(
        f["main"]["width"].as_f64().unwrap() >= 1200.0,
        "the page does not use the window: {f}"
    );
    for want in [
        "Local bandwidth",
        "Global bandwidth",
        "Idle latency",
        "Loaded latency",
        "Remote penalty",
        "Of the peak",
    ] {
        assert!(dom.contains(&format!("<div class=\"tile-name\">{want}</div>")), "no {want} tile");
    }
    let glance = &dom[dom.find("<section class=\"glance\">").unwrap()..];
    let glance = &glance[..glance.find("</section>").unwrap()];
    assert!(
        !glance.contains("sev-info") && !glance.contains("sev-unknown"),
        "information above the fold"
    );
    assert_readable("tiles", &page.charts);
    screenshot_at(dir.path(), "run-tiles-1280", &html, 1280, 900);
}

/// The SNC2 fixture's first run with what issue 34 added to a run: RAPL
/// power on its local bandwidth results and its `exec` repeats, a per-CPU
/// sweep (`lat --per-cpu --sweep`: four CPUs, one per SNC node, four
/// sizes, with its plateaus and CPU groups), `exec` placements bound to
/// one node or interleaved, and the program's kept output. Written as an
/// export document (no machine here has RAPL or four nodes).
fn with_issue_34_sections(dir: &Path) -> PathBuf {
    use serde_json::json;
    let text = std::fs::read_to_string(snc2_fixture()).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let runs = doc["runs"].as_array_mut().unwrap();
    runs.truncate(1);
    let run = &mut runs[0];
    let power = |pkg_w: f64, dram_w: f64| {
        json!({"seconds": 2.0, "zones": [
            {"zone": "intel-rapl:0", "name": "package-0", "joules": pkg_w * 2.0, "watts": pkg_w},
            {"zone": "intel-rapl:0:0", "name": "dram", "joules": dram_w * 2.0, "watts": dram_w}],
            "mean_mhz": 2890.0, "frequency_source": "aperf/mperf"})
    };
    let results = run["results"].as_array_mut().unwrap();
    for r in results.iter_mut() {
        let kind = r["kind"].as_str().unwrap_or_default().to_string();
        let p = &mut r["payload"];
        if kind == "bw" && p["mode"] == "local" {
            p["power"] = power(180.0, 24.0);
        }
        if kind == "exec" {
            let (cpus, how, mem) = match p["policy"].as_str().unwrap() {
                "local:0" => (Some("0-15"), "bind", "0"),
                "remote:0/2" => (Some("0-15"), "bind", "2"),
                "interleave" => (None, "interleave", "0-3"),
                _ => continue,
            };
            p["cpus"] = json!(cpus);
            p["mem_policy"] = json!(how);
            p["mem_nodes"] = json!(mem);
            let policy = p["policy"].as_str().unwrap().to_string();
            let reps = p["runs"].as_array_mut().unwrap();
            for rep in reps.iter_mut() {
                rep["ok"] = json!(true);
                rep["power"] = power(190.0, 26.0);
            }
            reps.last_mut().unwrap()["output"] = json!({
                "stdout_tail": format!("STREAM-like bench under {policy}\nFunction  Best Rate MB/s\nTriad:    {}\n", reps.len() * 1000),
                "stdout_bytes": 48213, "stderr_tail": "warning: 2 threads idle\n", "stderr_bytes": 24});
        }
    }
    let mut seq = results.iter().map(|r| r["seq"].as_u64().unwrap()).max().unwrap();
    let mut push = |kind: &str, payload: serde_json::Value| {
        seq += 1;
        results.push(json!({"seq": seq, "recorded": "2026-11-05T08:30:00.000Z", "kind": kind,
                            "payload": payload}));
    };
    let sizes: [(u64, f64); 4] =
        [(32 << 10, 1.2), (1 << 20, 4.4), (32 << 20, 21.0), (1 << 30, 95.0)];
    for (i, cpu) in [0u32, 16, 32, 48].into_iter().enumerate() {
        // as the sweep chases: one line (64 B) inside the caches, 256 B
        // at the DRAM size so the prefetcher cannot pass for DRAM
        let stride = |size: u64| if size == 1 << 30 { 256 } else { 64 };
        for (size, ns) in sizes {
            // the other package's CPUs reach node 0's DRAM later
            let ns = if size == 1 << 30 && i >= 2 { ns + 60.0 } else { ns + 0.1 * i as f64 };
            push(
                "lat",
                json!({"mode": "per-cpu-sweep", "size_bytes": size, "stride_bytes": stride(size),
                "cpu": cpu, "cpu_node": i, "mem_node": 0, "median_ns": ns, "p50_ns": ns,
                "p90_ns": ns * 1.01, "p99_ns": ns * 1.02, "min_ns": ns * 0.99, "max_ns": ns * 1.02,
                "spread_pct": 1.0, "noise_pct": 0.5, "samples": 9, "page_size": "4k"}),
            );
        }
    }
    let plateau = |label: &str, from: u64, to: u64, ns: f64| {
        json!({"label": label, "from_bytes": from, "to_bytes": to, "latency_ns": ns,
               "cache_bytes": null, "points": 1})
    };
    let cpu_plateaus: Vec<serde_json::Value> = [0u32, 16, 32, 48]
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let dram = if i >= 2 { 155.0 } else { 95.0 };
            json!({"cpu": c, "cpu_node": i, "plateaus": [
                plateau("L1", 32 << 10, 32 << 10, 1.2),
                plateau("L2", 1 << 20, 1 << 20, 4.4),
                plateau("DRAM", 1 << 30, 1 << 30, dram)]})
        })
        .collect();
    push(
        "lat-summary",
        json!({"mode": "per-cpu-sweep", "mem_node": 0,
        "caches": [{"level": 1, "size_bytes": 49152}, {"level": 2, "size_bytes": 2097152}],
        "plateaus": cpu_plateaus,
        "groups_by_size": [
            {"size_bytes": 32 << 10, "stride_bytes": 64, "noise_ns": 0.1, "groups": [
                {"cpus": "0,16,32,48", "median_ns": 1.3, "min_ns": 1.2, "max_ns": 1.5, "os_nodes": "0-3"}]},
            {"size_bytes": 1 << 20, "stride_bytes": 64, "noise_ns": 0.1, "groups": [
                {"cpus": "0,16,32,48", "median_ns": 4.5, "min_ns": 4.4, "max_ns": 4.7, "os_nodes": "0-3"}]},
            {"size_bytes": 32 << 20, "stride_bytes": 64, "noise_ns": 0.2, "groups": [
                {"cpus": "0,16,32,48", "median_ns": 21.1, "min_ns": 21.0, "max_ns": 21.3, "os_nodes": "0-3"}]},
            {"size_bytes": 1u64 << 30, "stride_bytes": 256, "noise_ns": 1.0, "groups": [
                {"cpus": "0,16", "median_ns": 95.0, "min_ns": 95.0, "max_ns": 95.1, "os_nodes": "0-1"},
                {"cpus": "32,48", "median_ns": 155.0, "min_ns": 154.9, "max_ns": 155.1, "os_nodes": "2-3"}]}],
        "dram_size_bytes": 1u64 << 30}),
    );
    let p = dir.join("issue-34.json");
    std::fs::write(&p, doc.to_string()).unwrap();
    p
}

/// A copy of the report `html` that starts at the heading `title` (every
/// fold opened), screenshot in a 1100 x `height` window: one section
/// readable at full size. The report's own styles apply.
fn section_shot(dir: &Path, name: &str, html: &str, title: &str, height: u64) -> PathBuf {
    let at = html
        .find(&format!(">{title}</h"))
        .unwrap_or_else(|| panic!("no section {title:?} in the report"));
    let start = html[..at].rfind("<h").unwrap();
    let body = html.find("<body").unwrap();
    let body = body + html[body..].find('>').unwrap() + 1;
    let page = format!("{}{}", &html[..body], &html[start..]).replace("<details", "<details open");
    let file = dir.join(format!("{name}-section.html"));
    std::fs::write(&file, page).unwrap();
    screenshot(dir, name, &file, height)
}

/// Issue 34's report sections in Chromium: the per-CPU sweep's heat map
/// and tables, the power and frequency table, the validation report's
/// "Placements side by side" and the program output appendix are drawn,
/// charts readable. Screenshots: `issue34-report.png` (the whole page)
/// and one per section (`issue34-per-cpu-sweep.png`, `issue34-power.png`,
/// `issue34-placements.png`, `issue34-program-output.png`).
#[test]
fn issue_34_sections_render_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &with_issue_34_sections(dir.path()));
    let html = report(dir.path(), &db, "issue34", &["1"]);
    let (charts, height, dom) = layout(dir.path(), "issue34", &html);
    let titles: Vec<&str> = charts.iter().map(|c| c.title.as_str()).collect();
    assert!(
        titles.contains(&"Latency from each CPU against working-set size (median ns)"),
        "{titles:?}"
    );
    assert_readable("issue34", &charts);
    for want in [
        ">Latency from each CPU against working-set size</h",
        ">Power and frequency",
        ">Placements side by side</h",
        ">Program output</h",
        "STREAM-like bench under remote:0/2",
        "32,48",
    ] {
        assert!(dom.contains(want), "{want:?} missing from the report");
    }
    screenshot(dir.path(), "issue34-report", &html, height);
    let text = std::fs::read_to_string(&html).unwrap();
    for (name, title) in [
        ("issue34-per-cpu-sweep", "Latency from each CPU against working-set size"),
        ("issue34-power", "Power and frequency"),
        ("issue34-placements", "Placements side by side"),
        ("issue34-program-output", "Program output"),
    ] {
        section_shot(dir.path(), name, &text, title, 1200);
    }
}

/// Imports `doc` (an export document) into `db`.
fn import_doc(dir: &Path, db: &Path, name: &str, doc: &serde_json::Value) {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, doc.to_string()).unwrap();
    // To look at the study by hand (`numaprobe import`, `compare`): keep it.
    if let Some(keep) = std::env::var_os("NUMAPROBE_KEEP_STUDY_EXPORTS") {
        let _ = std::fs::write(Path::new(&keep).join(format!("{name}.json")), doc.to_string());
    }
    import(db, &file);
}

/// Every word of the forest plot's row labels is a whole word of the
/// labels it was given (`…` alone marks a label shortened after a word):
/// no label is cut inside a word.
fn assert_whole_words(name: &str, lines: &[String], words_of: &[&str]) {
    let bare = |w: &str| w.trim_matches(|c: char| ",;:()".contains(c)).to_string();
    let known: std::collections::BTreeSet<String> =
        words_of.iter().flat_map(|l| l.split_whitespace()).map(bare).collect();
    for line in lines {
        for w in line.split_whitespace() {
            assert!(
                w == "…" || known.contains(&bare(w)),
                "{name}: {w:?} of {line:?} is cut inside a word"
            );
        }
    }
}

/// The forest plot's axis ticks (numbers) as the first screen holds them.
fn forest_ticks(first: &serde_json::Value) -> Vec<f64> {
    first["forest_ticks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str().unwrap().parse().ok())
        .collect()
}

/// The forest plot's row-label lines and the words they may be made of:
/// the `labels` given and the answer table's first-column cells.
fn forest_label_words(
    first: &serde_json::Value,
    dom: &str,
    labels: &[&str],
) -> (Vec<String>, Vec<String>) {
    let lines: Vec<String> = first["forest_labels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let mut words: Vec<String> = labels.iter().map(|l| l.to_string()).collect();
    for m in dom.split("<td>").skip(1) {
        words.push(unescape(&m[..m.find("</td>").unwrap_or(0)]));
    }
    (lines, words)
}

/// `../shared/STUDIES.md`'s study 1 (NUMA on with SNC off, SNC2, SNC4,
/// NUMA off; each mode's node structure as the machine reports it, each
/// node's figures from its cores, channels and link) compared in a
/// 1280 x 900 window. The first screen holds the answer: the
/// recommendation per workload first, then the table, never clipped on
/// the right (one column block per compared group); then the forest plot,
/// whose axis fits the changes of a few % (NUMA off's +192% local latency
/// drawn at the edge with its value written) and whose labels are whole
/// words. Screenshots: `snc-study-1280.png` (the window),
/// `snc-study-full.png` (the page).
#[test]
fn snc_study_answers_first_and_fits_1280_px() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import_doc(dir.path(), &db, "study1", &snc_study::export(&snc_study::STUDY1, "xeon-8380", 1));
    let labels: Vec<&str> = snc_study::STUDY1.iter().map(|m| m.label).collect();
    let html = report(
        dir.path(),
        &db,
        "snc",
        &[
            &format!("label:{}", labels[0]),
            "--compare",
            &format!("label:{}", labels[1]),
            &format!("label:{}", labels[2]),
            &format!("label:{}", labels[3]),
        ],
    );
    let (page, dom) = page_check(dir.path(), "snc", &html, "1280,900");
    let f = &page.first;
    let n = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {f}"));
    let (recs, table) = (&f["recommendations"], &f["answer_table"]);
    assert!(n(recs, "top") < n(table, "top"), "the recommendations come first: {f}");
    assert!(n(recs, "top") < page.viewport / 2.0, "recommendations not on the first screen: {f}");
    assert!(n(table, "top") + 150.0 < page.viewport, "table below the first screen: {f}");
    assert!(f["answer_clipped"].as_f64().unwrap() <= 1.0, "the answer's table is clipped: {f}");
    assert!(n(table, "right") <= n(&f["main"], "right") + 0.5, "table past the page: {f}");
    for l in &labels {
        assert!(
            dom.contains(&format!("{l} against")) || dom.contains(&format!("<th>{l}")),
            "no column for {l}"
        );
    }
    // The forest plot under the table: its axis fits the changes of a few
    // %, NUMA off's local latency past it at the edge, its value written.
    let forest = &f["forest"];
    assert!(n(forest, "top") >= n(table, "bottom"), "the forest plot comes after the table: {f}");
    let ticks = forest_ticks(f);
    let top_tick = ticks.iter().fold(0.0f64, |a, t| a.max(t.abs()));
    assert!(top_tick < 150.0, "the axis runs to {top_tick}%: {ticks:?}");
    assert!(f["forest_clipped"].as_u64().unwrap() >= 1, "no change drawn at the edge: {f}");
    let forest_svg = chart_svg(&dom, "Change against NUMA on, SNC off, 90% interval");
    assert!(forest_svg.contains("+19"), "the clipped change's value is not written");
    let (lines, words) = forest_label_words(f, &dom, &labels);
    assert!(!lines.is_empty(), "no forest labels: {f}");
    let word_refs: Vec<&str> = words.iter().map(String::as_str).collect();
    assert_whole_words("snc", &lines, &word_refs);
    assert_readable("snc", &page.charts);
    screenshot_at(dir.path(), "snc-study-1280", &html, 1280, 900);
    screenshot_at(dir.path(), "snc-study-full", &html, 1280, page.height);
}

/// A settings study of a program's own score (`exec` with `--metric`),
/// as STUDIES.md's study 3 measures SMT and boost: four groups of one
/// `exec --repeat 3` call each, run for real on this machine with a
/// benchmark script whose score is known (SMT on 40, SMT off 36, boost off
/// 30, and a group whose score wobbles up to ±80% around 38: one wide
/// interval).
/// In a 1280 x 900 window the recommendation comes first, the table is
/// not clipped, the forest plot's axis is not set by the wide interval
/// (its end drawn at the edge, its value written) and no row label is
/// cut inside a word. Screenshots: `exec-study-1280.png`,
/// `exec-study-full.png`.
#[test]
fn exec_study_answers_first_and_clips_a_wide_interval() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let bench = dir.path().join("bench.sh");
    // `rate: BASE x (1 + WOBBLE% x j)`, j = -2..2 from a call counter;
    // each call takes 0.2 s, so its wall time barely moves.
    std::fs::write(
        &bench,
        "#!/bin/sh\ncounter=$1; base=$2; wobble=$3\nn=$(cat \"$counter\" 2>/dev/null || echo 0)\nn=$((n + 1))\necho \"$n\" > \"$counter\"\nj=$(( (n * 7) % 5 - 2 ))\nsleep 0.2\nawk -v b=\"$base\" -v w=\"$wobble\" -v j=\"$j\" 'BEGIN { printf \"rate: %.3f\\n\", b * (1 + w * j / 100) }'\n",
    )
    .unwrap();
    std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o755)).unwrap();
    let groups = [
        ("SMT on", "40", "1"),
        ("SMT off", "36", "1"),
        ("boost off", "30", "1"),
        ("noisy neighbour", "38", "40"),
    ];
    for (label, base, wobble) in groups {
        let counter = dir.path().join(format!("counter-{}", label.replace(' ', "-")));
        Command::cargo_bin("numaprobe")
            .unwrap()
            .env("NUMAPROBE_DB", &db)
            .env("NUMAPROBE_LOCK", dir.path().join("measure.lock"))
            .current_dir(dir.path())
            .args(["exec", "--policies", "all", "--repeat", "3", "--label", label])
            .args(["--metric", "rate: ([0-9.]+)", "--"])
            .arg(&bench)
            .arg(&counter)
            .args([base, wobble])
            .assert()
            .success();
    }
    let refs: Vec<String> = groups.iter().map(|(l, _, _)| format!("label:{l}")).collect();
    let html = report(
        dir.path(),
        &db,
        "exec-study",
        &[&refs[0], "--compare", &refs[1], &refs[2], &refs[3]],
    );
    let (page, dom) = page_check(dir.path(), "exec-study", &html, "1280,900");
    let f = &page.first;
    let n = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {f}"));
    let (recs, table) = (&f["recommendations"], &f["answer_table"]);
    assert!(n(recs, "top") < n(table, "top"), "the recommendations come first: {f}");
    assert!(n(table, "top") + 150.0 < page.viewport, "table below the first screen: {f}");
    assert!(f["answer_clipped"].as_f64().unwrap() <= 1.0, "the answer's table is clipped: {f}");
    let ticks = forest_ticks(f);
    let top_tick = ticks.iter().fold(0.0f64, |a, t| a.max(t.abs()));
    // Each row's change and interval, from its hover title (`label:
    // -23.2% [-43.0%, -3.1%], worse`): the axis follows the changes (at
    // most twice the largest, rounded to a tick), and an interval wider
    // than that is clipped at the edge.
    let forest_svg = chart_svg(&dom, "Change against SMT on, 90% interval");
    let pct = |t: &str| t.trim().trim_end_matches('%').parse::<f64>().unwrap();
    let (mut max_change, mut max_end) = (0.0f64, 0.0f64);
    for row in forest_svg.split("<g class=\"forest-row\"><title>").skip(1) {
        let title = unescape(&row[..row.find("</title>").unwrap()]);
        let (_, figs) = title.rsplit_once(": ").unwrap();
        let change = pct(figs.split(' ').next().unwrap());
        max_change = max_change.max(change.abs());
        if let (Some(a), Some(b)) = (figs.find('['), figs.find(']')) {
            for e in figs[a + 1..b].split(", ") {
                max_end = max_end.max(pct(e).abs());
            }
        }
    }
    assert!(max_change > 5.0, "no change read from the plot");
    // (twice the changes, then up to the next nice tick)
    assert!(top_tick <= 3.5 * max_change, "an interval sets the axis to {top_tick}%: {ticks:?}");
    if max_end > top_tick {
        assert!(f["forest_clipped"].as_u64().unwrap() >= 1, "a wide interval is not clipped: {f}");
    }
    let group_labels: Vec<&str> = groups.iter().map(|g| g.0).collect();
    let (lines, words) = forest_label_words(f, &dom, &group_labels);
    let word_refs: Vec<&str> = words.iter().map(String::as_str).collect();
    assert_whole_words("exec-study", &lines, &word_refs);
    assert_readable("exec-study", &page.charts);
    screenshot_at(dir.path(), "exec-study-1280", &html, 1280, 900);
    screenshot_at(dir.path(), "exec-study-full", &html, 1280, page.height);
}

/// A run's report at 1280 x 900 (the synthetic fixture's first run): the
/// tiles first, each headline saying which measurement it took where the
/// run measured its quantity more than once. Screenshot:
/// `run-report-1280.png`.
#[test]
fn run_report_first_screen_at_1280() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    import(&db, &fixture());
    let html = report(dir.path(), &db, "run-report", &["1"]);
    let (page, _dom) = page_check(dir.path(), "run-report", &html, "1280,900");
    let f = &page.first;
    assert!(f["tiles"]["top"].as_f64().unwrap_or(f64::MAX) < 150.0, "tiles not first: {f}");
    assert_readable("run-report", &page.charts);
    screenshot_at(dir.path(), "run-report-1280", &html, 1280, 900);
}
