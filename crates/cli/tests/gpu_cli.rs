//! `numaprobe gpu` end to end against the driver library's double
//! (crates/cuda-double): the real helper binary opens it with dlopen,
//! places and pins host buffers, and times copies with the double's
//! modelled events. The double's rates are set per GPU, so the figures
//! the matrix must show are known exactly: a copy counted twice, a
//! pageable (unpinned) buffer, a wrong unit or a lost direction changes
//! them. Then every way the driver can be missing or fail.

#[path = "support/gpu.rs"]
mod gpu_support;
#[path = "support/lock.rs"]
mod lock_support;

use gpu_support::{double, helper};

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn np(config: &str) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", lock_support::private_lock("gpu"))
        .env("NUMAPROBE_CUDA_LIBRARY", double())
        .env("CUDA_DOUBLE", config)
        .env("NUMAPROBE_GPU_HELPER", helper());
    c
}

/// The GB/s a copy of `bytes` gets from the double at `gbs` with its 5 us
/// per-copy overhead.
fn modelled(bytes: f64, gbs: f64) -> f64 {
    bytes / (5e-6 + bytes / (gbs * 1e9)) / 1e9
}

fn json(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn close(got: f64, want: f64) -> bool {
    (got / want - 1.0).abs() < 1e-3
}

#[test]
fn the_matrix_shows_each_gpus_modelled_rate_from_pinned_memory() {
    let v = json(
        np("devices=2;rate=0:0:24;rate=0:1:h2d:12;rate=0:1:d2h:6")
            .args(["gpu", "--sizes", "64K,16M", "--reps", "3", "--json", "--quiet"])
            .arg("--no-together"),
    );
    assert_eq!(v["unit"], "GB/s (10^9 bytes/s)");
    assert!(v.get("together").is_none(), "--no-together: {v}");
    assert_eq!(v["probe"]["devices"].as_array().unwrap().len(), 2);
    let points = v["points"].as_array().unwrap();
    // 1 node x 2 GPUs x 3 directions x 2 sizes.
    assert_eq!(points.len(), 12, "{v}");
    for p in points {
        assert_eq!(p["on_node"], 1.0, "{p}");
        assert_eq!(p["gbs"].as_array().unwrap().len(), 3, "{p}");
    }
    let cell = |dir: &str, gpu: u64| -> f64 {
        let c = v["matrix"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["direction"] == dir && c["gpu"] == gpu)
            .unwrap_or_else(|| panic!("no {dir} cell for GPU {gpu}: {v}"));
        assert_eq!(c["size_bytes"], 16 << 20, "the matrix shows the largest size: {c}");
        c["median_gbs"].as_f64().unwrap()
    };
    let b = (16 << 20) as f64;
    assert!(close(cell("h2d", 0), modelled(b, 24.0)), "{}", cell("h2d", 0));
    assert!(close(cell("d2h", 0), modelled(b, 24.0)), "{}", cell("d2h", 0));
    assert!(close(cell("h2d", 1), modelled(b, 12.0)), "{}", cell("h2d", 1));
    assert!(close(cell("d2h", 1), modelled(b, 6.0)), "{}", cell("d2h", 1));
    // Both directions at once on two streams: both directions' bytes over
    // the longer of the two.
    assert!(close(cell("bidir", 0), 2.0 * modelled(b, 24.0)), "{}", cell("bidir", 0));
    assert!(close(cell("bidir", 1), 2.0 * b / (5e-6 + b / 6e9) / 1e9), "{}", cell("bidir", 1));
    // Small copies pay the per-copy overhead: the sweep keeps them.
    let small = points
        .iter()
        .find(|p| p["size_bytes"] == 64 << 10 && p["gpu"] == 0 && p["direction"] == "h2d")
        .unwrap();
    assert!(close(small["gbs"][0].as_f64().unwrap(), modelled(65536.0, 24.0)), "{small}");
    let feeds = v["feeds"].as_array().unwrap();
    assert_eq!(feeds.len(), 2);
    assert_eq!(feeds[0]["best_node"], 0);
    assert_eq!(feeds[0]["command"], "numactl --cpunodebind=0 --membind=0 <data loader>");
}

#[test]
fn the_text_matrix_names_units_size_and_timer() {
    let out = np("devices=2;rate=0:0:24;rate=0:1:12")
        .args(["gpu", "--sizes", "1M", "--reps", "2", "--directions", "h2d", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("h2d (host to device), GB/s (10^9 bytes/s), 1 MiB copies, median of 2 timed by device events"), "{text}");
    let row = text.lines().find(|l| l.starts_with("node 0")).unwrap_or_else(|| panic!("{text}"));
    let cells: Vec<&str> = row.split_whitespace().skip(2).collect();
    assert_eq!(
        cells,
        [format!("{:.1}", modelled(1048576.0, 24.0)), format!("{:.1}", modelled(1048576.0, 12.0))],
        "{text}"
    );
    assert!(!text.contains("d2h ("), "only the direction asked for: {text}");
}

#[test]
fn probe_describes_the_driver_and_measures_nothing() {
    let v = json(np("devices=3;driver=12080").args(["gpu", "--probe", "--json"]));
    assert_eq!(v["probe"]["driver_version"], 12080);
    let devs = v["probe"]["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 3);
    assert_eq!(devs[2]["pci_address"], "0000:12:00.0");
    assert_eq!(v["points"].as_array().unwrap().len(), 0);
    assert_eq!(v["gpu_nodes"].as_array().unwrap().len(), 3);
}

/// Runs `gpu` expecting failure; returns stderr after checking it is short,
/// names no panic, and the exit status is `code`.
fn fails(c: &mut Command, code: i32) -> String {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(code),
        "stdout {} stderr {err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.lines().count() <= 3, "one clear line, not a wall: {err}");
    err
}

#[test]
fn no_driver_library_is_one_line() {
    let err = fails(
        np("").env("NUMAPROBE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1").args(["gpu", "--quiet"]),
        1,
    );
    assert!(err.contains("/nonexistent/libcuda.so.1 cannot be opened"), "{err}");
    assert!(err.contains("NVIDIA driver installed"), "{err}");
}

#[test]
fn no_device_too_old_a_driver_and_failing_calls_say_which() {
    let err = fails(np("nodevice").args(["gpu", "--quiet"]), 1);
    assert!(err.contains("shows no device"), "{err}");
    let err = fails(np("driver=10020").args(["gpu", "--quiet"]), 1);
    assert!(err.contains("too old: it offers API 10.2") && err.contains("11.0 or newer"), "{err}");
    let err = fails(np("fail=cuMemAlloc_v2:2").args(["gpu", "--sizes", "1M", "--quiet"]), 1);
    assert!(err.contains("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)"), "{err}");
    let err = fails(
        np("").env("NUMAPROBE_GPU_HELPER", "/nonexistent/numaprobe-gpu").args(["gpu", "--quiet"]),
        1,
    );
    assert!(
        err.contains("GPU helper /nonexistent/numaprobe-gpu (NUMAPROBE_GPU_HELPER) is missing"),
        "{err}"
    );
    let err = fails(np("devices=2").args(["gpu", "--gpus", "2"]), 2);
    assert!(err.contains("the driver shows 2 GPU(s), numbered 0-1"), "{err}");
    let err = fails(np("").args(["gpu", "--directions", "up"]), 2);
    assert!(err.contains("'up' is not a direction"), "{err}");
}

#[test]
fn a_helper_that_cannot_start_or_speaks_garbage_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    // What the dynamic loader does on a system with too old a glibc.
    let old = script("old-glibc", "echo \"version 'GLIBC_2.34' not found\" >&2; exit 127");
    let err = fails(np("").env("NUMAPROBE_GPU_HELPER", &old).args(["gpu", "--quiet"]), 1);
    assert!(
        err.contains("could not start (status 127") && err.contains("glibc 2.34 or newer"),
        "{err}"
    );
    let garbage = script("garbage", "echo 'not json'");
    let err = fails(np("").env("NUMAPROBE_GPU_HELPER", &garbage).args(["gpu", "--quiet"]), 1);
    assert!(err.contains("wrote a line numaprobe cannot read"), "{err}");
}

#[test]
fn a_labelled_run_is_saved_and_reported_as_a_node_by_gpu_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let with_db = |c: &mut Command| {
        c.arg("--db").arg(&db);
    };
    let mut c = np("devices=2;rate=0:0:24;rate=0:1:12");
    with_db(&mut c);
    json(c.args([
        "gpu",
        "--sizes",
        "64K,16M",
        "--reps",
        "3",
        "--label",
        "gpu double",
        "--json",
        "--quiet",
    ]));
    let mut c = np("");
    with_db(&mut c);
    let shown = json(c.args(["show", "latest", "--json"]));
    let text = shown.to_string();
    assert!(text.contains("gpu double"), "{text}");
    let mut c = np("");
    with_db(&mut c);
    let out = c.args(["report", "latest"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("## GPU copy bandwidth by host node"), "{md}");
    // The all-GPUs-at-once step, run by default with two GPUs, has its own
    // table and call (no shared link in this double: nothing falls).
    assert!(
        md.contains("### All GPUs at once (0,1) from node 0, h2d (host to device), 16 MiB copies"),
        "{md}"
    );
    assert!(md.contains("no shared bottleneck: no GPU lost more than 10%"), "{md}");
    let b = (16 << 20) as f64;
    for (gpu, gbs) in [(0, 24.0), (1, 12.0)] {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| {gpu} |")))
            .unwrap_or_else(|| panic!("no row for GPU {gpu}: {md}"));
        assert!(row.contains(&format!("| {:.1} |", modelled(b, gbs))), "{row}");
        assert!(row.contains("numactl --cpunodebind=0 --membind=0 "), "{row}");
    }
    // Three heat maps (h2d, d2h, bidir) in the HTML report.
    let mut c = np("");
    with_db(&mut c);
    let html = dir.path().join("r.html");
    let out = c.args(["report", "latest", "--format", "html", "-o"]).arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&html).unwrap();
    for dir in ["h2d (host to device)", "d2h (device to host)", "bidir (both directions at once)"] {
        assert!(html.contains(&format!("GPU copies {dir}, 16 MiB copies, median GB/s")), "{dir}");
    }
}

#[test]
fn compare_judges_each_gpus_feed_and_ai_training_leads_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    // Alternated, three runs each: GPU 0 fed at 24 GB/s, then at 12.
    for (label, rate) in
        [("fast", 24), ("slow", 12), ("slow", 12), ("fast", 24), ("fast", 24), ("slow", 12)]
    {
        let mut c = np(&format!("devices=1;rate=0:0:{rate}"));
        c.arg("--db").arg(&db);
        json(c.args([
            "gpu",
            "--sizes",
            "16M",
            "--reps",
            "2",
            "--directions",
            "h2d",
            "--label",
            label,
            "--json",
            "--quiet",
        ]));
    }
    let mut c = np("");
    c.arg("--db").arg(&db);
    let v = json(c.args(["compare", "label:fast", "label:slow", "--json"]));
    let m = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "gpu_h2d_gbs_gpu0")
        .unwrap_or_else(|| panic!("no gpu_h2d_gbs_gpu0: {v}"));
    assert_eq!(
        (m["relation"].as_str(), m["scope"].as_str()),
        (Some("host-device"), Some("device")),
        "{m}"
    );
    let b = (16 << 20) as f64;
    assert!(close(m["groups"][0]["median"].as_f64().unwrap(), modelled(b, 24.0)), "{m}");
    assert_eq!(m["groups"][1]["verdict"], "worse", "{m}");
    let ai = v["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["profile"] == "ai-training")
        .unwrap_or_else(|| panic!("{v}"));
    let text = ai["text"].as_str().unwrap();
    assert!(text.contains("host-to-GPU 0 bandwidth") && text.contains("Keep fast"), "{text}");
}

/// Links (or copies) `from` to `to`.
fn place_file(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).unwrap();
    }
}

#[test]
fn without_the_variable_the_helper_is_the_one_beside_numaprobe() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("numaprobe");
    place_file(&assert_cmd::cargo::cargo_bin("numaprobe"), &bin);
    let run = || {
        let mut c = Command::new(&bin);
        c.env("NUMAPROBE_LOCK", lock_support::private_lock("gpu"))
            .env("NUMAPROBE_CUDA_LIBRARY", double())
            .env("CUDA_DOUBLE", "devices=1")
            .env_remove("NUMAPROBE_GPU_HELPER")
            .args(["gpu", "--probe", "--json"]);
        c
    };
    let err = fails(&mut run(), 1);
    let beside = dir.path().join("numaprobe-gpu");
    let packaged = dir.path().join("../libexec/numaprobe/numaprobe-gpu");
    assert!(
        err.contains(&format!(
            "GPU helper is missing: looked for {} and {}",
            beside.display(),
            packaged.display()
        )),
        "{err}"
    );
    place_file(helper(), &beside);
    let v = json(&mut run());
    assert_eq!(v["probe"]["devices"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn a_failure_mid_way_keeps_the_points_measured_before_it() {
    // Device-to-host copies fail: the host-to-device points measured
    // first are printed, and the stop says why.
    let out = np("devices=1;fail=cuMemcpyDtoHAsync_v2")
        .args([
            "gpu",
            "--sizes",
            "1M,4M",
            "--reps",
            "2",
            "--directions",
            "h2d,d2h",
            "--json",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stopped after 2 of 4 points: cuMemcpyDtoHAsync failed: CUDA_ERROR_UNKNOWN"),
        "{err}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(points.iter().all(|p| p["direction"] == "h2d"), "{v}");
    assert!(v["stopped"].as_str().unwrap().contains("cuMemcpyDtoHAsync"), "{v}");
}

/// The all-GPUs-at-once step against the double's shared link: alone each
/// GPU gets its own rate, together the node's link is split between them,
/// and the step says so; without a shared link nothing falls.
#[test]
fn all_gpus_at_once_finds_a_shared_link_and_only_a_shared_one() {
    let args =
        ["gpu", "--sizes", "16M", "--reps", "3", "--directions", "h2d,bidir", "--json", "--quiet"];
    let b = (16 << 20) as f64;
    let v = json(np("devices=3;default=20;shared=0:24").args(args));
    let points = v["points"].as_array().unwrap();
    // 3 GPUs x 2 directions alone, then the same together.
    assert_eq!(points.len(), 12, "{v}");
    let together: Vec<&Value> = points.iter().filter(|p| p.get("together").is_some()).collect();
    assert_eq!(together.len(), 6, "{v}");
    for p in &together {
        assert_eq!(p["together"], serde_json::json!([0, 1, 2]), "{p}");
    }
    // The matrix and the feeds are the GPUs alone: 20 GB/s (the link's 24
    // is not reached by one GPU).
    for c in v["matrix"].as_array().unwrap().iter().filter(|c| c["direction"] == "h2d") {
        assert!(close(c["median_gbs"].as_f64().unwrap(), modelled(b, 20.0)), "{c}");
    }
    let steps = v["together"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{v}");
    for st in steps {
        let per_dir = if st["direction"] == "bidir" { 2.0 } else { 1.0 };
        assert_eq!(st["sharing"], "bottleneck", "{st}");
        for m in st["members"].as_array().unwrap() {
            // 24 GB/s shared by 3 GPUs: 8 each (per direction).
            let got = m["together"]["median_gbs"].as_f64().unwrap();
            assert!(close(got, per_dir * modelled(b, 8.0)), "{m}");
            assert_eq!(m["separated"], true, "{m}");
        }
        let agg = st["aggregate_gbs"].as_f64().unwrap();
        assert!(close(agg, 3.0 * per_dir * modelled(b, 8.0)), "{st}");
    }
    // No shared link: together as alone.
    let v = json(np("devices=2;default=20").args(args));
    for st in v["together"].as_array().unwrap() {
        assert_eq!(st["sharing"], "no_bottleneck", "{st}");
    }
    // The text says it in one line per step, with units.
    let out = np("devices=2;default=20;shared=0:20")
        .args(["gpu", "--sizes", "16M", "--reps", "3", "--directions", "h2d"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("All GPUs at once (0,1) from node 0, h2d (host to device), GB/s (10^9 bytes/s), 16 MiB copies"),
        "{text}"
    );
    assert!(
        text.contains("together 19.9 GB/s in all, against 39.8 alone added up: shared bottleneck"),
        "{text}"
    );
    let line = text.lines().find(|l| l.contains(" GB/s in all")).unwrap_or_default();
    assert_eq!(
        line,
        "  together 19.9 GB/s in all, against 39.8 alone added up: shared bottleneck: every GPU \
         lost more than 10% beyond the spread of its copies (a PCIe switch or the socket's link \
         that the GPUs share)"
    );
}

#[test]
fn one_gpu_or_no_together_skips_the_step() {
    let args = ["gpu", "--sizes", "1M", "--reps", "2", "--directions", "h2d", "--json", "--quiet"];
    let v = json(np("devices=1;shared=0:1").args(args));
    assert_eq!(v["points"].as_array().unwrap().len(), 1, "{v}");
    assert!(v.get("together").is_none(), "{v}");
    let v = json(np("devices=2;shared=0:1").args(args).arg("--no-together"));
    assert_eq!(v["points"].as_array().unwrap().len(), 2, "{v}");
    assert!(v.get("together").is_none(), "{v}");
}

/// `--contention`: the same chase (one CPU of the node, the node's memory)
/// idle and while every GPU copies from the node; the GPUs' rates
/// meanwhile are the double's, and the call follows the samples' ranges.
/// (The double really copies, so the chase does meet real traffic; its
/// size is not asserted: that is timing.)
#[test]
fn contention_chases_idle_and_while_every_gpu_copies() {
    let v = json(np("devices=2;default=20").args([
        "gpu",
        "--sizes",
        "16M",
        "--reps",
        "2",
        "--directions",
        "h2d",
        "--no-together",
        "--contention",
        "--json",
        "--quiet",
    ]));
    let rows = v["contention"].as_array().unwrap_or_else(|| panic!("no contention: {v}"));
    assert_eq!(rows.len(), 1, "one node, one direction: {v}");
    let c = &rows[0];
    assert_eq!(c["node"], 0);
    assert_eq!(c["direction"], "h2d");
    assert_eq!(c["gpus"], serde_json::json!([0, 1]));
    let first_cpu = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist").unwrap();
    let first_cpu: u64 = first_cpu.trim().split([',', '-']).next().unwrap().parse().unwrap();
    assert_eq!(c["cpu"], first_cpu, "the chase runs on the node's first CPU: {c}");
    let b = (16 << 20) as f64;
    let rates = c["gpu_gbs"].as_array().unwrap();
    assert_eq!(rates.len(), 2, "{c}");
    for r in rates {
        assert!(close(r[1].as_f64().unwrap(), modelled(b, 20.0)), "{r}");
    }
    let three = |k: &str| -> Vec<f64> {
        c[k].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
    };
    let (idle, during) = (three("idle_ns"), three("during_ns"));
    for t in [&idle, &during] {
        assert!(t[1] > 1.0 && t[1] <= t[0] && t[0] <= t[2], "median within min..max: {c}");
    }
    // Idle is the chases before and after the copies: the mean of their
    // medians, within the lowest and highest of their samples.
    let ba: Vec<f64> =
        c["idle_before_after_ns"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!((idle[0] - (ba[0] + ba[1]) / 2.0).abs() < 1e-9, "{c}");
    assert!(ba.iter().all(|&m| idle[1] <= m && m <= idle[2]), "{c}");
    let beyond = during[1] > idle[2] || during[2] < idle[1];
    assert_eq!(c["beyond_spread"], beyond, "{c}");
    let change = (during[0] / idle[0] - 1.0) * 100.0;
    assert!((c["change_pct"].as_f64().unwrap() - change).abs() < 1e-9, "{c}");
    // The matrix was measured first, alone, as without --contention.
    assert_eq!(v["points"].as_array().unwrap().len(), 2, "{v}");
}
