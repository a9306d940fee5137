//! `numaprobe lat` end to end: usage errors (exit 2, naming the bad value,
//! before anything is allocated) and short real runs checking the JSON.

#[path = "support/lock.rs"]
mod lock_support;
use lock_support::assert_refused_by_our_lock;
use lock_support::private_lock;

use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;

fn lat() -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env("NUMAPROBE_LOCK", private_lock("lat")).arg("lat");
    c
}

/// Short timing for real runs: they check structure, not speed.
const QUICK: [&str; 4] = ["--samples", "3", "--sample-ms", "2"];

fn json_of(args: &[&str]) -> Value {
    let out = lat().args(args).args(QUICK).arg("--json").arg("--quiet").output().unwrap();
    assert!(out.status.success(), "lat {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[test]
fn bad_stride_is_a_usage_error() {
    lat().args(["--stride", "48"]).assert().code(2).stderr(contains("'48' for '--stride"));
    lat().args(["--stride", "8192"]).assert().code(2).stderr(contains("'8192' for '--stride"));
}

#[test]
fn bad_size_is_a_usage_error() {
    lat().args(["--size", "12Q"]).assert().code(2).stderr(contains("12Q"));
    lat().args(["--size", "100"]).assert().code(2).stderr(contains("minimum"));
}

#[test]
fn a_size_the_node_cannot_spare_is_refused_before_allocating() {
    lat().args(["--size", "1000T"]).assert().code(2).stderr(contains("cannot spare"));
}

#[test]
fn huge_pages_that_are_not_reserved_are_refused() {
    // half a million 2 MiB pages are reserved nowhere this test runs
    lat().args(["--size", "1T", "--pages", "2m"]).assert().code(2).stderr(contains("huge pages"));
}

#[test]
fn unknown_node_and_cpu_are_usage_errors() {
    lat().args(["--mem-node", "999"]).assert().code(2).stderr(contains("node 999"));
    lat().args(["--cpu", "99999"]).assert().code(2).stderr(contains("CPU 99999"));
    lat().args(["--cpu-node", "999"]).assert().code(2).stderr(contains("node 999"));
}

#[test]
fn two_modes_at_once_are_refused() {
    lat().args(["--matrix", "--sweep"]).assert().code(2);
    lat().args(["--pages", "3m"]).assert().code(2);
    lat().args(["--c2c", "--pairs", "0-1"]).assert().code(2).stderr(contains("0-1"));
}

#[test]
fn a_point_gives_the_documented_json() {
    let v = json_of(&["--size", "256K"]);
    assert_eq!(v["mode"], "point");
    assert_eq!(v["schema_version"], 2);
    assert_eq!(v["interrupted"], false);
    let r = &v["results"][0];
    assert_eq!(r["mode"], "point");
    assert_eq!(r["size_bytes"], 256 * 1024);
    // the default stride measures DRAM, not the prefetchers
    assert_eq!(r["stride_bytes"], 256);
    assert_eq!(r["page_size"], "4k");
    // the figure is made of the clean samples (3 asked for; a busy machine
    // may leave fewer, and the figure says so)
    let d = &r["disturbance"];
    let clean = d["clean"].as_u64().unwrap();
    assert_eq!(r["samples"], if clean > 0 { clean } else { d["disturbed"].as_u64().unwrap() });
    assert!(clean <= 3 && clean + d["disturbed"].as_u64().unwrap() >= 3, "{d}");
    assert_eq!(r["stable"], clean >= 2 && d["lost_pct"].as_f64().unwrap() <= 10.0, "{r}");
    assert!(r["cpu"].is_u64());
    for k in ["median_ns", "p50_ns", "p90_ns", "p99_ns", "min_ns", "max_ns", "spread_pct"] {
        assert!(r[k].as_f64().is_some_and(|x| x > 0.0 || k == "spread_pct"), "{k} = {}", r[k]);
    }
    let (min, med, p90, max) = (
        r["min_ns"].as_f64().unwrap(),
        r["median_ns"].as_f64().unwrap(),
        r["p90_ns"].as_f64().unwrap(),
        r["max_ns"].as_f64().unwrap(),
    );
    assert!(min <= med && med <= p90 && p90 <= max);
    assert!(r["placement"]["status"].is_string());
    // the per-chunk histogram: log buckets whose counts add up
    let h = &r["histogram"];
    assert_eq!(h["sub_buckets"], 16);
    let buckets = h["buckets"].as_array().unwrap();
    let total: u64 = buckets.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert!(total > 0 && total == h["count"].as_u64().unwrap(), "{h}");
    assert!(buckets.iter().all(|b| b["lo_ns"].as_f64() < b["hi_ns"].as_f64()));
    // the prefetch check ran after the point, 64 B against the default
    let c = &v["prefetch_check"];
    assert_eq!(c["mode"], "prefetch-check");
    assert_eq!(c["stride_bytes"], 256);
    assert!(c["line_ns"].as_f64().unwrap() > 0.0 && c["stride_ns"].as_f64().unwrap() > 0.0);
    assert!(c["significant"].is_boolean());
    assert!(c["note"].as_str().unwrap().contains("64 B"), "{c}");
}

/// The figure is ns per load: each sample's time over its loads, and
/// each chunk of a sample (the histogram) its time over its loads. A
/// sample is its chunks (and a partial one, under 0.3% of its loads), so
/// every sample's figure lies within the chunks' range: a figure computed
/// over the wrong number of loads (halved, doubled) falls out of it. The
/// chunks are counted exactly: whole chunks of every kept sample.
#[test]
fn a_points_figures_are_its_chunks_ns_per_load() {
    // A point keeps a histogram only of clean samples (`disturbance.clean`
    // > 0); on a machine busy with other tests every sample may be
    // disturbed, and then the histogram is absent by design. Measure again
    // (up to 5 times) until one is kept; a run without one must say why.
    let mut reasons = vec![];
    for _ in 0..5 {
        let out = lat()
            .args(["--size", "16M", "--samples", "5", "--sample-ms", "4", "--no-prefetch-check"])
            .args(["--json", "--quiet"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &v["results"][0];
        if r["histogram"].is_null() {
            assert_eq!(
                r["disturbance"]["clean"].as_u64(),
                Some(0),
                "no histogram, yet clean samples: {r}"
            );
            reasons.push(r["disturbance"].to_string());
            continue;
        }
        return chunks_make_the_figures(r);
    }
    panic!("5 points, none with a clean sample: {reasons:?}");
}

fn chunks_make_the_figures(r: &Value) {
    let h = &r["histogram"];
    let buckets = h["buckets"].as_array().unwrap();
    let lo = buckets.iter().map(|b| b["lo_ns"].as_f64().unwrap()).fold(f64::MAX, f64::min);
    let hi = buckets.iter().map(|b| b["hi_ns"].as_f64().unwrap()).fold(0.0, f64::max);
    let (min, max) = (r["min_ns"].as_f64().unwrap(), r["max_ns"].as_f64().unwrap());
    // 1% either side: the partial chunk of each sample is not in the histogram
    assert!(
        min >= lo * 0.99 && max <= hi * 1.01,
        "samples {min}..{max} ns, chunks {lo}..{hi} ns: {r}"
    );
    let loads = r["loads_per_sample"].as_u64().unwrap();
    let per_chunk = h["loads_per_value"].as_u64().unwrap();
    assert!(loads >= 100_000 && per_chunk >= 256 && per_chunk <= loads, "{r}");
    let samples = r["samples"].as_u64().unwrap();
    if r["min_loads_per_sample"].is_null() && r["disturbance"]["clean"].as_u64() == Some(samples) {
        assert_eq!(h["count"].as_u64().unwrap(), samples * (loads / per_chunk), "{r}");
    }
}

#[test]
fn the_prefetch_check_is_skipped_when_asked_or_pointless() {
    let v = json_of(&["--size", "256K", "--no-prefetch-check"]);
    assert!(v.get("prefetch_check").is_none(), "{v}");
    let v = json_of(&["--size", "256K", "--stride", "64"]);
    assert!(v.get("prefetch_check").is_none(), "{v}");
    assert_eq!(v["results"][0]["stride_bytes"], 64);
}

#[test]
fn tables_name_the_method() {
    lat().args(["--size", "256K", "--no-prefetch-check"]).args(QUICK).assert().success().stdout(
        contains("method: random chase, stride 256 B, 64-page TLB groups (256 KiB), 4k pages"),
    );
}

#[test]
fn bad_mixes_are_usage_errors() {
    lat().args(["--loaded", "--mix", "read,5:1"]).assert().code(2).stderr(contains("5:1"));
    lat().args(["--mix", "read"]).assert().code(2).stderr(contains("--loaded"));
}

#[test]
fn stride_128_is_reported() {
    let v = json_of(&["--size", "256K", "--stride", "128"]);
    assert_eq!(v["results"][0]["stride_bytes"], 128);
}

#[test]
fn a_sweep_goes_up_in_log_steps_and_names_plateaus() {
    let v = json_of(&["--sweep", "--size", "64K"]);
    assert_eq!(v["mode"], "sweep");
    let sizes: Vec<u64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, vec![4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536]);
    assert!(v["caches"].is_array());
    assert!(v["plateaus"].is_array());
}

#[test]
fn per_cpu_measures_every_cpu_and_groups_them() {
    let v = json_of(&["--per-cpu", "--size", "256K"]);
    assert_eq!(v["mode"], "per-cpu");
    let n = v["results"].as_array().unwrap().len();
    assert_eq!(n, usable_cpus().min(64));
    let grouped: usize = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["cpus"]
                .as_str()
                .unwrap()
                .split(',')
                .map(|r| match r.split_once('-') {
                    Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                    None => 1,
                })
                .sum::<usize>()
        })
        .sum();
    assert_eq!(grouped, n, "every measured CPU is in one group");
    assert!(v["hidden_numa"].is_boolean());
}

#[test]
fn the_matrix_has_a_cell_per_cpu_node_and_memory_node() {
    let v = json_of(&["--matrix", "--size", "256K"]);
    assert_eq!(v["mode"], "matrix");
    let cells = v["results"].as_array().unwrap();
    assert!(!cells.is_empty());
    assert!(cells
        .iter()
        .all(|c| c["mode"] == "matrix" && (c["cpu_node"].is_u64() || c["cpu_node"].is_null())));
}

#[test]
fn core_to_core_needs_two_cpus() {
    if usable_cpus() < 2 {
        lat().args(["--c2c"]).args(QUICK).assert().code(2).stderr(contains("two usable CPUs"));
        return;
    }
    let v = json_of(&["--c2c", "--pairs", "0:1"]);
    let r = &v["results"][0];
    assert_eq!((r["cpu_a"].as_u64(), r["cpu_b"].as_u64()), (Some(0), Some(1)));
    assert!(r["median_ns"].as_f64().unwrap() > 0.0);
    lat().args(["--c2c", "--pairs", "0:0"]).assert().code(2).stderr(contains("two different CPUs"));
}

#[test]
fn loaded_latency_gives_a_curve_per_mix_from_idle_to_full_load() {
    if usable_cpus() < 2 {
        lat().args(["--loaded"]).args(QUICK).assert().code(2);
        return;
    }
    let v =
        json_of(&["--loaded", "--size", "256K", "--mix", "read,nt-write", "--delays", "0,5000"]);
    let pts = v["results"].as_array().unwrap();
    // per mix: the idle point, then the waits from the longest to none
    assert_eq!(pts.len(), 6, "{v}");
    for (i, mix) in ["read", "nt-write"].iter().enumerate() {
        let c = &pts[i * 3..i * 3 + 3];
        assert!(c.iter().all(|p| p["load_kind"] == *mix), "{c:?}");
        assert_eq!(c[0]["idle"], true);
        assert!(c[0].get("delay_ns").is_none());
        // paused load threads move nothing
        assert_eq!(c[0]["load_gbs"].as_f64(), Some(0.0), "{}", c[0]);
        assert_eq!(
            (c[1]["delay_ns"].as_f64(), c[2]["delay_ns"].as_f64()),
            (Some(5000.0), Some(0.0))
        );
        // with no wait the load threads always move lines
        assert!(c[2]["load_gbs"].as_f64().unwrap() > 0.0);
        assert!(c.iter().all(|p| p["latency_ns"].as_f64().unwrap() > 0.0
            && p["p99_ns"].as_f64() >= p["p90_ns"].as_f64()));
        assert!(c[2]["load_threads"].as_u64().unwrap() >= 1);
        assert!(c[2]["load_placement"]["status"].is_string(), "{}", c[2]);
        // each point records power over its samples, or why not (no RAPL
        // zone on this project's VM)
        for p in c {
            let pw = &p["power"];
            assert!(pw["seconds"].as_f64().unwrap() > 0.0, "{p}");
            let zones = pw["zones"].as_array().map_or(0, |z| z.len());
            assert!((zones > 0) != pw["energy_unavailable"].is_string(), "{pw}");
        }
    }
    // read-only traffic writes nothing, non-temporal writes read nothing
    assert_eq!(pts[2]["write_gbs"].as_f64(), Some(0.0));
    assert_eq!(pts[5]["read_gbs"].as_f64(), Some(0.0));
    assert!(pts[5]["write_gbs"].as_f64().unwrap() > 0.0);
    let curves = v["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 2);
    for c in curves {
        assert_eq!(c["mode"], "loaded");
        assert_eq!(c["knee_pct"], 20.0);
        assert!(c["idle_ns"].as_f64().unwrap() > 0.0 && c["usable_gbs"].as_f64().is_some(), "{c}");
    }
}

#[test]
fn the_first_versions_load_flag_still_means_one_mix() {
    if usable_cpus() < 2 {
        return;
    }
    let v = json_of(&["--loaded", "--size", "256K", "--load", "rw", "--delays", "0"]);
    let pts = v["results"].as_array().unwrap();
    assert_eq!(pts.len(), 2);
    assert!(pts.iter().all(|p| p["load_kind"] == "1:1"), "{v}");
}

/// `lat` honours the measuring lock while `run` holds it.
#[test]
fn a_held_measuring_lock_makes_lat_refuse_naming_the_holder() {
    let path = private_lock("lat");
    let _held = lock::MeasureLock::acquire_at(&path).unwrap();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_LOCK", &path)
        .args(["lat", "--size", "1M"])
        .args(QUICK)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_refused_by_our_lock(&err);
}

/// `lat --label X` saves its results as a run.
#[test]
fn lat_with_a_label_saves_a_run_that_show_finds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    lat()
        .arg("--db")
        .arg(&db)
        .args(["--size", "1M", "--label", "lat X", "--quiet"])
        .args(QUICK)
        .assert()
        .success();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .arg("--db")
        .arg(&db)
        .args(["show", "lat X", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "complete");
    let results = v["results"].as_array().unwrap();
    // the point, then the prefetch check (recorded in the run too)
    assert_eq!(results.len(), 2, "{v}");
    assert_eq!(results[0]["kind"], "lat");
    assert!(results[0]["payload"]["median_ns"].as_f64().unwrap() > 0.0);
    assert_eq!(results[1]["kind"], "lat-summary");
    assert_eq!(results[1]["payload"]["mode"], "prefetch-check");
}

/// A panic in lat's measuring thread is numaprobe's bug (exit 1,
/// a request for a report), not a usage error; provoked through the hook
/// debug builds honour (`NUMAPROBE_TEST_PANIC`, absent from release).
#[test]
fn a_panic_in_the_measuring_thread_is_a_bug_report_with_exit_1() {
    let out = lat()
        .env("NUMAPROBE_TEST_PANIC", "lat-thread")
        .args(["--size", "1M"])
        .args(QUICK)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("deliberate test panic in lat-thread"), "the panic is shown: {err}");
    assert!(
        err.contains("this is a bug in numaprobe") && err.contains("please report it"),
        "{err}"
    );
}

/// The last-level cache of CPU 0 as sysfs gives it, bytes (the largest
/// data or unified cache).
fn llc_bytes() -> u64 {
    let mut best = 0;
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let Ok(kind) = std::fs::read_to_string(format!("{dir}/type")) else { continue };
        if kind.trim() == "Instruction" {
            continue;
        }
        let size = std::fs::read_to_string(format!("{dir}/size")).unwrap_or_default();
        let size = size.trim();
        let n: u64 = size.trim_end_matches(['K', 'M']).parse().unwrap_or(0);
        let n = match size.chars().last() {
            Some('K') => n << 10,
            Some('M') => n << 20,
            _ => n,
        };
        best = best.max(n);
    }
    best
}

/// `--per-cpu --sweep`: one sweep per CPU (CPUs x sizes), each size at the
/// same stride on every CPU, the cache stride up to the LLC and 256 B past
/// it, and the DRAM column and its groups only from a size past the LLC.
#[test]
fn a_per_cpu_sweep_is_a_cpu_by_size_grid_with_dram_at_stride_256() {
    let llc = llc_bytes();
    assert!(llc > 0, "this test needs the LLC size in sysfs");
    let max = (2 * llc).next_power_of_two();
    let v = json_of(&["--per-cpu", "--sweep", "--size", &max.to_string()]);
    assert_eq!(v["mode"], "per-cpu-sweep");
    assert_eq!(v["interrupted"], false);
    let sizes: Vec<u64> =
        v["sizes"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    assert_eq!(sizes.first(), Some(&4096));
    assert_eq!(sizes.last(), Some(&max));
    let cpus = usable_cpus().min(8);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), cpus * sizes.len(), "CPUs x sizes");
    let mut seen: Vec<u64> = results.iter().map(|r| r["cpu"].as_u64().unwrap()).collect();
    seen.dedup();
    assert_eq!(seen.len(), cpus, "{seen:?}");
    for r in results {
        assert_eq!(r["mode"], "per-cpu-sweep");
        let size = r["size_bytes"].as_u64().unwrap();
        let want = if size > llc { 256 } else { 64 };
        assert_eq!(r["stride_bytes"], want, "size {size}, LLC {llc}");
        assert!(r["median_ns"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["dram_size_bytes"], max);
    assert_eq!(v["dram_stride_bytes"], 256);
    assert_eq!(v["plateaus"].as_array().unwrap().len(), cpus);
    let grouped: u64 = v["dram_groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["cpus"].as_str().unwrap().split(',').map(str::to_owned).collect::<Vec<_>>())
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap() + 1,
            None => 1,
        })
        .sum();
    assert_eq!(grouped as usize, cpus, "every CPU in one DRAM group");
}

/// The whole note of a per-CPU sweep that measured no size past the
/// last-level cache (whose size is this machine's).
fn is_no_dram_note(note: &str) -> bool {
    use predicates::Predicate;
    let re = predicates::str::is_match(
        r"^no size measured past the last-level cache \([0-9.]+ [KMGT]?i?B\): no DRAM column; give --size \(or a --sizes entry\) above it$",
    )
    .unwrap();
    re.eval(note)
}

/// A sweep that stays inside the LLC calls nothing DRAM.
#[test]
fn a_per_cpu_sweep_inside_the_cache_has_no_dram_column() {
    let v = json_of(&["--per-cpu", "--sweep", "--size", "64K", "--max-cpus", "1"]);
    assert!(v["dram_size_bytes"].is_null(), "{}", v["dram_size_bytes"]);
    assert_eq!(v["dram_groups"].as_array().unwrap().len(), 0);
    assert!(v["note"].as_str().unwrap().contains("no DRAM column"), "{}", v["note"]);
    let note = v["note"].as_str().unwrap();
    assert!(is_no_dram_note(note), "{note}");
    let out = lat()
        .args(["--per-cpu", "--sweep", "--size", "64K", "--max-cpus", "1", "--quiet"])
        .args(QUICK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("note: ")).expect("a note line");
    assert!(is_no_dram_note(line.strip_prefix("note: ").unwrap()), "{line}");
    assert!(!text.contains("(DRAM)") && !text.contains("DRAM group"), "{text}");
    assert!(text.contains("stride B") && text.contains("64 KiB"), "{text}");
}

/// `--max-cpus N` bounds the CPUs of a per-CPU sweep.
#[test]
fn max_cpus_bounds_a_per_cpu_sweep() {
    let v = json_of(&["--per-cpu", "--sweep", "--size", "16K", "--max-cpus", "1"]);
    assert_eq!(v["cpus"].as_array().unwrap().len(), 1);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), v["sizes"].as_array().unwrap().len());
    assert!(results.iter().all(|r| r["cpu"] == v["cpus"][0]));
}

/// `--sizes` chases exactly the sizes listed (sorted), from each CPU, and
/// states them in the plan; the plan's estimate counts only those.
#[test]
fn sizes_choose_the_points_of_a_per_cpu_sweep() {
    let v = json_of(&["--per-cpu", "--sweep", "--sizes", "64K,8K,2M", "--max-cpus", "1"]);
    let sizes: Vec<u64> =
        v["sizes"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect();
    assert_eq!(sizes, vec![8 << 10, 64 << 10, 2 << 20]);
    let measured: Vec<u64> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["size_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(measured, sizes);
    let out = lat()
        .args(["--per-cpu", "--sweep", "--sizes", "8K,64K", "--max-cpus", "1"])
        .args(QUICK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 CPU(s) x 2 sizes (8 KiB to 64 KiB) = 2 points"), "{err}");
    // the estimate counts the listed sizes only: 4 of 1000 one-second
    // samples is over the hour, refused with the plan
    lat()
        .args(["--per-cpu", "--sweep", "--sizes", "8K,16K,32K,64K", "--max-cpus", "1"])
        .args(["--samples", "1000", "--sample-ms", "1000"])
        .assert()
        .code(2)
        .stderr(contains("1 CPU(s) x 4 sizes (8 KiB to 64 KiB)").and(contains("over an hour")));
}

/// Bad `--sizes` exit 2 before anything is measured: empty, an empty
/// entry, a repeat (written two ways), not a size, too small, with
/// --size, or without --per-cpu --sweep.
#[test]
fn bad_sizes_are_refused() {
    let bad = |args: &[&str], says: &str| {
        lat().args(args).args(QUICK).assert().code(2).stderr(contains(says));
    };
    let pcs = ["--per-cpu", "--sweep", "--max-cpus", "1", "--sizes"];
    bad(&[&pcs[..], &[""]].concat(), "--sizes");
    bad(&[&pcs[..], &["8K,,64K"]].concat(), "--sizes");
    bad(&[&pcs[..], &["1M,1024K"]].concat(), "1 MiB given twice");
    bad(&[&pcs[..], &["8K,lots"]].concat(), "lots");
    bad(&[&pcs[..], &["1K"]].concat(), "below the minimum");
    bad(&[&pcs[..], &["8K", "--size", "1M"]].concat(), "--size");
    bad(&["--sweep", "--sizes", "8K,64K"], "--sizes applies to --per-cpu --sweep only");
    bad(&["--per-cpu", "--sizes", "8K,64K"], "--sizes applies to --per-cpu --sweep only");
}

/// The plan comes first on stderr, and one over an hour is refused (exit
/// 2, with the estimate) unless --yes.
#[test]
fn a_per_cpu_sweep_states_its_plan_and_refuses_hours() {
    let out = lat()
        .args(["--per-cpu", "--sweep", "--size", "16K", "--max-cpus", "1"])
        .args(QUICK)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("per-CPU sweep: 1 CPU(s) x 5 sizes"), "{err}");
    // 29 sizes x 1000 samples x 1 s each: hours
    lat()
        .args(["--per-cpu", "--sweep", "--size", "64M", "--max-cpus", "1"])
        .args(["--samples", "1000", "--sample-ms", "1000"])
        .assert()
        .code(2)
        .stderr(contains("over an hour").and(contains(" h")));
    lat().args(["--sweep", "--yes"]).assert().code(2).stderr(contains("--yes applies"));
    lat().args(["--sweep", "--max-cpus", "2"]).assert().code(2).stderr(contains("--max-cpus"));
}

/// `--per-cpu --sweep --label X` saves ordinary lat results of mode
/// per-cpu-sweep that `show` finds.
#[test]
fn a_per_cpu_sweep_is_saved_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    lat()
        .arg("--db")
        .arg(&db)
        .args(["--per-cpu", "--sweep", "--size", "16K", "--max-cpus", "1"])
        .args(["--label", "pcs", "--quiet"])
        .args(QUICK)
        .assert()
        .success();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .arg("--db")
        .arg(&db)
        .args(["show", "pcs", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "complete");
    let results = v["results"].as_array().unwrap();
    // 16K: 4, 6, 8, 12, 16 KiB from one CPU, then the summary (the CPU's
    // plateaus, the groups at each size)
    assert_eq!(results.len(), 6, "{v}");
    assert!(results.iter().all(|r| r["payload"]["mode"] == "per-cpu-sweep"));
    assert!(results[..5].iter().all(|r| r["kind"] == "lat"));
    assert_eq!(results[5]["kind"], "lat-summary");
    assert_eq!(results[5]["payload"]["plateaus"][0]["cpu"], v["results"][0]["payload"]["cpu"]);
    // the stored summary's note, whole
    let note = results[5]["payload"]["note"].as_str().unwrap();
    assert!(is_no_dram_note(note), "{note}");
    // the report draws them as a heat map (CPUs x sizes) and a table per
    // size with its stride
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .arg("--db")
        .arg(&db)
        .args(["report", "pcs", "--format", "html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        html.contains(">Latency from each CPU against working-set size (median ns)</title>"),
        "no heat map"
    );
    assert!(
        html.contains("<th class=\"r\">Stride B</th>") || html.contains(">Stride B<"),
        "no stride"
    );
    for size in ["4 KiB", "16 KiB"] {
        assert!(html.contains(&format!(">{size}<")), "no {size}");
    }
    // and the stored summary's tables: the CPU's plateaus, groups per size
    assert!(html.contains("The plateaus of each CPU"), "no plateau table");
    // one CPU: no groups, and 16 KiB is inside the cache: the note says so
    assert!(html.contains("no DRAM column"), "no note");
}

/// Every chase table names its working-set size and stride.
#[test]
fn per_cpu_text_names_its_working_set_and_stride() {
    let out = lat().args(["--per-cpu", "--size", "256K", "--quiet"]).args(QUICK).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("256 KiB working set at stride 256 B"), "{text}");
}

/// Ctrl-C during a per-CPU sweep keeps what was measured: the JSON says
/// `interrupted` and holds the points so far, the saved run is incomplete
/// with the same points.
#[test]
fn ctrl_c_keeps_what_a_per_cpu_sweep_measured() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let show = || {
        let out = Command::cargo_bin("numaprobe")
            .unwrap()
            .arg("--db")
            .arg(&db)
            .args(["show", "latest", "--json"])
            .output()
            .unwrap();
        out.status.success().then(|| serde_json::from_slice::<Value>(&out.stdout).unwrap())
    };
    // 29 sizes from each CPU at 5 x 20 ms: several seconds at least
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("numaprobe"))
        .env("NUMAPROBE_LOCK", private_lock("lat-cut"))
        .arg("--db")
        .arg(&db)
        .args(["lat", "--per-cpu", "--sweep", "--size", "64M", "--samples", "5"])
        .args(["--sample-ms", "20", "--label", "cut", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < Duration::from_secs(120), "nothing saved in 2 minutes");
        let n = show().map_or(0, |v| {
            v["results"].as_array().map_or(0, |r| r.iter().filter(|r| r["kind"] == "lat").count())
        });
        if n >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: kill(2) on our own child's PID; no memory is involved.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("the JSON of what was measured");
    assert_eq!(v["interrupted"], true);
    let measured = v["results"].as_array().unwrap().len();
    let planned = v["cpus"].as_array().unwrap().len() * v["sizes"].as_array().unwrap().len();
    assert!(measured >= 2 && measured < planned, "{measured} of {planned}");
    let saved = show().unwrap();
    assert_eq!(saved["status"], "incomplete", "{saved}");
    let kept = saved["results"].as_array().unwrap().iter().filter(|r| r["kind"] == "lat").count();
    assert_eq!(kept, measured);
}

/// The sweep's `--sizes` refusals, each the one whole line it says (a
/// memory warning may join stderr on another line), exit 2.
#[test]
fn sizes_refusals_name_their_flag_word_for_word() {
    let pcs = ["--per-cpu", "--sweep", "--max-cpus", "1", "--sizes"];
    let line = |sizes: &str, want: &str| {
        let out = lat().args(pcs).arg(sizes).args(QUICK).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.lines().any(|l| l == want), "no line {want:?} in:\n{err}");
    };
    line("1M,1024K", "numaprobe: error: --sizes: 1 MiB given twice");
    line(
        "1K",
        "numaprobe: error: --sizes: 1024 bytes is below the minimum of 4096 bytes (two elements of stride 64)",
    );
}
