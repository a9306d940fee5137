//! Impossible figures in words: the likely cause analysis names
//! ([`analysis::impossible::Cause`]), how far past its limit a figure is,
//! and the suspect of a bandwidth figure above its peak
//! ([`results::bw::Suspect`]). The report, `compare`'s text, the fleet and
//! console's lines and `--json` documents all word them here, so each says
//! the same; the wrong-peak causes name `--peak-gbs`, the flag that gives a
//! peak.

use analysis::impossible::{num, Cause, Impossible, Limit};
use results::bw::{PeakCheck, Suspect};

/// The likely cause, one sentence without a full stop.
pub fn cause(c: &Cause) -> String {
    match c {
        Cause::SmallArrays { array_bytes, llc_bytes } => format!(
            "a cache passing for DRAM: arrays of {} MiB are under 4x the {} last-level cache, so the cache served part of the traffic",
            array_bytes >> 20,
            llc_bytes.map_or("unknown".into(), |b| format!("{} MiB", b >> 20))
        ),
        Cause::UnverifiedPages => "pages not verified on the memory asked for: other nodes (or a cache) may have served part of the traffic".into(),
        Cause::WrongPeak => "a wrong peak: the arrays were DRAM-sized on verified pages, so the peak given (--peak-gbs) or read from the DIMM table is too low (channels or MT/s)".into(),
        Cause::ChaseInCache { size_bytes, cache_bytes, cache } => format!(
            "a cache passing for DRAM: the chase's {} fits in the {} {}",
            mib(*size_bytes),
            mib(*cache_bytes),
            cache.as_deref().unwrap_or("last-level cache")
        ),
        Cause::Prefetcher { stride_bytes, size_bytes } => format!(
            "a prefetcher passing for DRAM: a {stride_bytes} B stride lets the adjacent-line prefetcher serve loads (chase of {})",
            mib(*size_bytes)
        ),
        Cause::CacheOrPrefetcher { size_bytes, stride_bytes, plateau_measured: true } => format!(
            "a cache or prefetcher passing for DRAM (chase of {}, {stride_bytes} B stride), or the cache's plateau misread",
            mib(*size_bytes)
        ),
        Cause::CacheOrPrefetcher { size_bytes, stride_bytes, plateau_measured: false } => format!(
            "a cache or prefetcher passing for DRAM (chase of {}, {stride_bytes} B stride): a DRAM figure needs a chase well past the last-level cache",
            mib(*size_bytes)
        ),
        Cause::LoadCached => "a cache passing for DRAM: the chase fits in a cache, or the load threads' traffic was cached".into(),
        Cause::PeakOrCache => "a wrong peak (--peak-gbs or the DIMM table: channels or MT/s too low), or a cache passing for DRAM".into(),
    }
}

fn mib(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{} MiB", b >> 20)
    } else {
        format!("{} KiB", b >> 10)
    }
}

/// The limit an impossible figure breaks, in words: `the theoretical
/// peak`, `the L3's own latency (the run's sweep plateau)` or the typical
/// figure's.
pub fn limit(l: &Limit) -> String {
    match l {
        Limit::Peak => "the theoretical peak".into(),
        Limit::LlcLatency { measured: Some(level) } => {
            format!("the {level}'s own latency (the run's sweep plateau)")
        }
        Limit::LlcLatency { measured: None } => {
            "the fastest last-level cache's latency (typical figure: no sweep measured)".into()
        }
    }
}

/// `6.70x the theoretical peak of 1.0 GB/s; likely cause: ...`: how far
/// past the limit, and why.
pub fn reason(i: &Impossible) -> String {
    let how = if i.unit == "ns" {
        format!("{:.0}% of {} ({} ns)", i.ratio * 100.0, limit(&i.limit_what), num(i.limit))
    } else {
        format!("{:.2}x {} of {} GB/s", i.ratio, limit(&i.limit_what), num(i.limit))
    };
    format!("{how}; likely cause: {}", cause(&i.cause))
}

/// `bw local triad, ...: 6.7 GB/s is impossible: 6.70x the theoretical
/// peak of 1.0 GB/s; likely cause: ...`.
pub fn text(i: &Impossible) -> String {
    format!(
        "{}: {} is {}: {}",
        crate::subject::flagged(&i.what),
        i.figure_text(),
        Impossible::WORD,
        reason(i)
    )
}

/// The short reason shown beside a bandwidth figure above its peak:
/// `impossible: above the peak; the peak is suspect (...)`.
pub fn suspect(s: Suspect) -> &'static str {
    match s {
        Suspect::Figure => {
            "impossible: above the peak; the figure is suspect (arrays under 4x LLC or pages not verified: caches or other nodes served part)"
        }
        Suspect::Peak => {
            "impossible: above the peak; the peak is suspect (DRAM-sized arrays on verified pages: check --peak-gbs or the DIMM table)"
        }
    }
}

/// `87.3%`, or `287.0% (impossible: ...)` naming the suspect.
pub fn peak_share(c: &PeakCheck) -> String {
    let pct = format!("{:.1}%", c.fraction * 100.0);
    match c.over {
        None => pct,
        Some(s) => format!("{pct} ({})", suspect(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What each impossible figure is and the limit it breaks, every
    /// shape, in the words every output writes (`bw`, `lat`, the report,
    /// `compare`), whole.
    #[test]
    fn every_figure_and_limit_is_named_whole() {
        use analysis::impossible::{self as imp, LlcFloor};
        use results::lat::Lat;
        use results::Record;
        use serde_json::json;
        let read = |kind: &str, v: serde_json::Value| results::upgrade::read(kind, &v).record;
        let bw = |v: serde_json::Value| match read("bw", v) {
            Record::Bw(b) => imp::bw(&b).map(|i| text(&i)),
            r => panic!("{r:?}"),
        };
        let floor = LlcFloor {
            ns: 20.0,
            label: Some("L3".into()),
            cache_bytes: Some(32 << 20),
            measured: true,
        };
        let lat = |v: serde_json::Value, floor: &LlcFloor| match read("lat", v) {
            Record::Lat(l) => match *l {
                Lat::Chase(c) => imp::chase(&c, floor).map(|i| text(&i)),
                Lat::Loaded(p) => imp::loaded(&p, floor).map(|i| text(&i)),
                other => panic!("{other:?}"),
            },
            r => panic!("{r:?}"),
        };
        let over = |extra: serde_json::Value| {
            let mut v = json!({"mode": "local", "kernel": "triad", "threads": 2,
                "best_gbs": 23.6, "peak_gbs": 1.0, "size_rule_ok": true,
                "array_bytes": 1u64 << 30, "stable": true});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            v
        };
        let words = [
            bw(over(json!({"cpu_node": 0, "mem_node": 1}))),
            bw(over(json!({"mode": "interleave", "threads": 32, "mem_nodes": "0-1"}))),
            bw(over(json!({"mode": "global", "threads": 32}))),
            lat(
                json!({"mode": "matrix", "cpu": 4, "mem_node": 1, "median_ns": 15.0,
                    "size_bytes": 1u64 << 30, "stride_bytes": 256}),
                &floor,
            ),
            lat(
                json!({"mode": "point", "cpu": 4, "interleave": "0-3", "median_ns": 5.0,
                    "size_bytes": 1u64 << 30, "stride_bytes": 256}),
                &LlcFloor::typical(),
            ),
            lat(
                json!({"mode": "per-cpu", "cpu": 4, "median_ns": 5.0,
                    "size_bytes": 1u64 << 30, "stride_bytes": 64}),
                &LlcFloor::typical(),
            ),
            lat(
                json!({"mode": "loaded", "cpu": 2, "mem_node": 0, "idle": false, "delay": 10,
                    "latency_ns": 6.0, "load_gbs": 5.0, "load_kind": "rw",
                    "size_bytes": 1u64 << 30}),
                &LlcFloor::typical(),
            ),
            imp::against_peak("global bandwidth", 250.0, 100.0).map(|i| text(&i)),
        ];
        let words: Vec<String> = words.into_iter().map(|w| w.expect("impossible")).collect();
        assert_eq!(
            words,
            [
                "bw local triad, 2 thread(s), CPU node 0 -> memory 1: 23.6 GB/s is impossible: 23.60x the theoretical peak of 1.0 GB/s; likely cause: pages not verified on the memory asked for: other nodes (or a cache) may have served part of the traffic",
                "bw interleave triad, 32 thread(s), memory 0-1: 23.6 GB/s is impossible: 23.60x the theoretical peak of 1.0 GB/s; likely cause: pages not verified on the memory asked for: other nodes (or a cache) may have served part of the traffic",
                "bw global triad, 32 thread(s), memory ?: 23.6 GB/s is impossible: 23.60x the theoretical peak of 1.0 GB/s; likely cause: pages not verified on the memory asked for: other nodes (or a cache) may have served part of the traffic",
                "lat matrix, CPU 4 -> memory node 1: 15.0 ns is impossible: 75% of the L3's own latency (the run's sweep plateau) (20.0 ns); likely cause: a cache or prefetcher passing for DRAM (chase of 1024 MiB, 256 B stride), or the cache's plateau misread",
                "lat point, CPU 4 -> memory interleaved over nodes 0-3: 5.0 ns is impossible: 62% of the fastest last-level cache's latency (typical figure: no sweep measured) (8.0 ns); likely cause: a cache or prefetcher passing for DRAM (chase of 1024 MiB, 256 B stride): a DRAM figure needs a chase well past the last-level cache",
                "lat per-cpu, CPU 4 -> memory node ?: 5.0 ns is impossible: 62% of the fastest last-level cache's latency (typical figure: no sweep measured) (8.0 ns); likely cause: a prefetcher passing for DRAM: a 64 B stride lets the adjacent-line prefetcher serve loads (chase of 1024 MiB)",
                "lat loaded, CPU 2, 1:1 load: 6.0 ns is impossible: 75% of the fastest last-level cache's latency (typical figure: no sweep measured) (8.0 ns); likely cause: a cache passing for DRAM: the chase fits in a cache, or the load threads' traffic was cached",
                "global bandwidth: 250 GB/s is impossible: 2.50x the theoretical peak of 100 GB/s; likely cause: a wrong peak (--peak-gbs or the DIMM table: channels or MT/s too low), or a cache passing for DRAM",
            ]
        );
    }

    /// Every cause and suspect is worded, and only the wrong-peak ones
    /// name a flag (`--peak-gbs`, the flag that gives a peak).
    #[test]
    fn every_cause_is_worded_and_only_a_wrong_peak_names_the_flag() {
        let all = [
            Cause::SmallArrays { array_bytes: 1 << 30, llc_bytes: None },
            Cause::UnverifiedPages,
            Cause::WrongPeak,
            Cause::ChaseInCache { size_bytes: 16 << 20, cache_bytes: 32 << 20, cache: None },
            Cause::Prefetcher { stride_bytes: 64, size_bytes: 512 << 10 },
            Cause::CacheOrPrefetcher {
                size_bytes: 1 << 30,
                stride_bytes: 256,
                plateau_measured: true,
            },
            Cause::LoadCached,
            Cause::PeakOrCache,
        ];
        for c in &all {
            let w = cause(c);
            assert!(!w.is_empty() && !w.ends_with('.'), "{c:?}: {w}");
            let wrong_peak = matches!(c, Cause::WrongPeak | Cause::PeakOrCache);
            assert_eq!(w.contains("--peak-gbs"), wrong_peak, "{c:?}: {w}");
        }
        assert_eq!(
            cause(&all[0]),
            "a cache passing for DRAM: arrays of 1024 MiB are under 4x the unknown last-level \
             cache, so the cache served part of the traffic"
        );
        assert_eq!(
            cause(&all[3]),
            "a cache passing for DRAM: the chase's 16 MiB fits in the 32 MiB last-level cache"
        );
        assert!(suspect(Suspect::Peak).contains("check --peak-gbs"));
        assert!(!suspect(Suspect::Figure).contains("--"));
    }
}
