//! How each bandwidth figure was measured, shown beside it: the store
//! method (non-temporal or regular), the figure against its theoretical
//! peak (with an impossible figure-above-peak named), and the
//! STREAM-equivalent figure (regular stores, what a gcc-built STREAM
//! measures) beside the default when the run has both, or how to get it.

use std::collections::BTreeMap;

use results::bw::{BwResult, Stores};
use results::stats::measured;

use crate::doc::{Document, Table};
use crate::fmt::{fig, num};
use analysis::data::RunData;

/// `avx2, nt stores`: the instruction set and the store method of a
/// figure (`avx2` alone for the read kernel, which stores nothing).
pub(crate) fn isa_stores(p: &BwResult) -> String {
    match p.stores {
        Stores::None => p.isa.name().to_string(),
        s => format!("{}, {} stores", p.isa.name(), s.name()),
    }
}

/// `triad (nt stores)`: a kernel with its store method, for tables that
/// name the kernel but not the ISA.
pub(crate) fn kernel_stores(p: &BwResult) -> String {
    match p.stores {
        Stores::None => p.kernel.name().to_string(),
        s => format!("{} ({} stores)", p.kernel.name(), s.name()),
    }
}

/// Whether any figure of the run has a theoretical peak to compare with.
pub(crate) fn any_peak(d: &RunData) -> bool {
    d.bw.iter().any(|p| p.peak_check().is_some())
}

/// The "% of peak" cell: `87.3%`, `287.0% (impossible: ...)`, `-`.
pub(crate) fn peak_cell(p: &BwResult) -> String {
    p.peak_check().map_or_else(|| "-".into(), |c| crate::impossible::peak_share(&c))
}

/// What pairs a regular-store figure with its non-temporal twin: the same
/// case and kernel.
type CaseKey = (String, &'static str, Option<u32>, String, usize);

fn case_key(p: &BwResult) -> CaseKey {
    (p.mode.name().to_string(), p.kernel.name(), p.cpu_node, p.memory(), p.threads)
}

/// The store-method note of the Bandwidth section, with the two methods
/// side by side where the run measured a case both ways, and a warning
/// for every figure above its peak.
pub(crate) fn section(doc: &mut Document, d: &RunData) {
    let storing: Vec<&BwResult> = d.bw.iter().filter(|p| p.stores != Stores::None).collect();
    let nt = storing.iter().any(|p| p.stores == Stores::Nt);
    let regular = storing.iter().any(|p| p.stores == Stores::Regular);
    if nt || regular {
        doc.h(3, "Store method and STREAM-equivalent figures");
        let why = "Non-temporal (nt) stores write around the caches, so a stored line goes to memory once; regular stores first read the line they write (write-allocate). STREAM counts the same bytes either way, but with regular stores the memory moves 4/3 of them for add and triad and 3/2 for copy and scale, so the figure is lower. A gcc-built STREAM (the usual build, and the seeds') uses regular stores: its like-for-like figure here is the regular-store one.";
        match (nt, regular) {
            (true, false) => doc.p(format!(
                "Every figure here used non-temporal stores (numaprobe's default, `--stores auto`). {why} To get the STREAM-equivalent figures, measure again with `--stores regular` (`numaprobe run --stores regular`, or `numaprobe bw --stores regular` for one case)."
            )),
            (false, true) => doc.p(format!(
                "Every figure here used regular stores (`--stores regular`): the STREAM-equivalent figures. {why} numaprobe's default (`--stores auto`) uses non-temporal stores where the instruction set has them."
            )),
            _ => doc.p(format!(
                "This run measured with both store methods; each figure names its method. {why}"
            )),
        }
        let mut pairs: BTreeMap<CaseKey, (Option<&BwResult>, Option<&BwResult>)> = BTreeMap::new();
        for p in &storing {
            let e = pairs.entry(case_key(p)).or_default();
            match p.stores {
                Stores::Nt => e.0 = e.0.or(Some(p)),
                _ => e.1 = e.1.or(Some(p)),
            }
        }
        let mut t = Table::with_header(&[
            "Mode",
            "Kernel",
            "CPU node",
            "Memory node(s)",
            "Threads",
            "nt stores, best GB/s",
            "regular stores (STREAM-equivalent), best GB/s",
            "nt / regular",
        ]);
        for ((mode, kernel, cpu, mem, threads), pair) in &pairs {
            let (Some(a), Some(b)) = pair else { continue };
            let ratio = match (measured(a.best_gbs), measured(b.best_gbs)) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.2}", x / y),
                _ => "-".into(),
            };
            t.push(vec![
                mode.clone(),
                kernel.to_string(),
                cpu.map_or("all".into(), |n| n.to_string()),
                mem.clone(),
                threads.to_string(),
                fig(measured(a.best_gbs), a.noise(), "GB/s"),
                fig(measured(b.best_gbs), b.noise(), "GB/s"),
                ratio,
            ]);
        }
        if !t.is_empty() {
            doc.table(t);
        }
    }

    for p in &d.bw {
        let Some(c) = p.peak_check() else { continue };
        if let Some(s) = c.over {
            doc.p(format!(
                "Warning: {} {} on CPU node {} to memory {}: {} GB/s is {:.0}% of its theoretical peak of {} GB/s, which is impossible: {}.",
                p.mode.name(),
                kernel_stores(p),
                p.cpu_node.map_or("all".into(), |n| n.to_string()),
                p.memory(),
                num(p.best_gbs, "GB/s"),
                c.fraction * 100.0,
                num(c.peak_gbs, "GB/s"),
                crate::impossible::suspect(s).trim_start_matches("impossible: above the peak; ")
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(stores: &str, best: f64, peak: Option<f64>) -> BwResult {
        let v = serde_json::json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": 2, "best_gbs": best, "min_gbs": best, "max_gbs": best,
            "spread_pct": 1.0, "reps": 10, "stores": stores, "isa": "avx2", "peak_gbs": peak,
            "size_rule_ok": true});
        match results::upgrade::read("bw", &v).record {
            results::Record::Bw(mut b) => {
                b.placement.status = results::placement::PlacementStatus::Verified;
                *b
            }
            r => panic!("not a bw record: {r:?}"),
        }
    }

    fn text(results: Vec<BwResult>) -> String {
        let d = RunData { bw: results, ..RunData::default() };
        let mut doc = Document::default();
        section(&mut doc, &d);
        use crate::render::Renderer;
        String::from_utf8(crate::render::Markdown.render(&doc)).unwrap()
    }

    #[test]
    fn each_figure_names_its_store_method() {
        assert_eq!(isa_stores(&bw("nt", 10.0, None)), "avx2, nt stores");
        assert_eq!(kernel_stores(&bw("regular", 10.0, None)), "triad (regular stores)");
        assert_eq!(isa_stores(&bw("none", 10.0, None)), "avx2");
    }

    #[test]
    fn nt_only_says_how_to_get_the_stream_equivalent() {
        let t = text(vec![bw("nt", 30.0, None)]);
        assert!(t.contains("--stores regular"), "{t}");
        assert!(t.contains("non-temporal stores"), "{t}");
        assert!(!t.contains("nt / regular"), "{t}");
        let t = text(vec![bw("regular", 22.0, None)]);
        assert!(t.contains("the STREAM-equivalent figures"), "{t}");
    }

    #[test]
    fn both_methods_are_shown_side_by_side() {
        let t = text(vec![bw("nt", 30.0, None), bw("regular", 24.0, None)]);
        // 30 / 24
        assert!(t.contains("| 1.25 |"), "{t}");
        assert!(t.contains("regular stores (STREAM-equivalent)"), "{t}");
    }

    #[test]
    fn a_figure_above_its_peak_is_warned_about() {
        let t = text(vec![bw("nt", 287.0, Some(100.0))]);
        assert!(
            t.contains(
                "287.0 GB/s is 287% of its theoretical peak of 100.0 GB/s, which is impossible"
            ),
            "{t}"
        );
        assert!(t.contains("the peak is suspect"), "{t}");
        assert!(!text(vec![bw("nt", 87.0, Some(100.0))]).contains("impossible"));
        assert_eq!(peak_cell(&bw("nt", 87.0, Some(100.0))), "87.0%");
        assert_eq!(peak_cell(&bw("nt", 87.0, None)), "-");
    }

    /// The warning and the "% of peak" cell of a figure above its peak,
    /// whole, for either suspect.
    #[test]
    fn the_warning_and_the_cell_name_the_suspect_whole() {
        let peak = bw("nt", 287.0, Some(100.0));
        let line = |t: String| {
            t.lines().find(|l| l.starts_with("Warning: ")).unwrap_or_default().to_string()
        };
        assert_eq!(
            line(text(vec![peak.clone()])),
            "Warning: local triad (nt stores) on CPU node 0 to memory 0: 287.0 GB/s is 287% of its \
             theoretical peak of 100.0 GB/s, which is impossible: the peak is suspect (DRAM-sized \
             arrays on verified pages: check --peak-gbs or the DIMM table)."
        );
        assert_eq!(
            peak_cell(&peak),
            "287.0% (impossible: above the peak; the peak is suspect (DRAM-sized arrays on \
             verified pages: check --peak-gbs or the DIMM table))"
        );
        let mut small = peak;
        small.size_rule_ok = false;
        assert_eq!(
            line(text(vec![small.clone()])),
            "Warning: local triad (nt stores) on CPU node 0 to memory 0: 287.0 GB/s is 287% of its \
             theoretical peak of 100.0 GB/s, which is impossible: the figure is suspect (arrays \
             under 4x LLC or pages not verified: caches or other nodes served part)."
        );
        assert_eq!(
            peak_cell(&small),
            "287.0% (impossible: above the peak; the figure is suspect (arrays under 4x LLC or \
             pages not verified: caches or other nodes served part))"
        );
    }
}
