//! The text of `numaprobe bw`: one table per mode (the node matrix laid
//! out like MLC's, one per kernel), the power and frequency lines, and the
//! counters table (`--counters`).

use std::collections::BTreeSet;

use bench::bw::Refusal;
use kernels::Kernel;
use results::bw::{BwResult, Mode};
use results::placement::PlacementStatus;

use super::counters::{self, Row};
use super::{Lines, Table, TableStyle};

/// Everything `bw` prints after measuring: the tables, the power lines and
/// the counters table when any result has counts.
pub fn text(results: &[BwResult], style: TableStyle) -> String {
    let mut out = Lines::new();
    out.push(render(results, style));
    let impossible: Vec<String> = results
        .iter()
        .filter_map(analysis::impossible::bw)
        .map(|i| crate::impossible::line(&i))
        .collect();
    if !impossible.is_empty() {
        out.push(impossible.concat());
    }
    out.push(render_power(results));
    let rows = counter_rows(results);
    if !rows.is_empty() {
        out.push(counters::render(&rows, style));
    }
    out.into_string()
}

/// A refused plan in the words of `bw`'s flags (also `advise interleave
/// --size`, which measures with bw's plan).
pub fn refusal(r: &Refusal) -> String {
    let size = topo::units::binary_size;
    match r {
        Refusal::NoThreads => "--threads 0: at least one thread is needed".into(),
        Refusal::EmptyArrays => "--size 0: arrays need at least one page".into(),
        Refusal::NoNtStores { isa } => format!(
            "--stores nt: the {isa} kernels have no non-temporal stores (use --stores regular or another --isa)"
        ),
        Refusal::NoCpus => "--cpus: the CPU list is empty".into(),
        Refusal::ThreadsOverCpus { threads, given } => {
            format!("--threads {threads} is more than the {given} CPU(s) given with --cpus")
        }
        Refusal::CpusOffNode { cpus, node } => {
            format!("--cpus {cpus} are not all on --cpu-node {node}")
        }
        Refusal::ThreadsOverNode { threads, node, usable } => format!(
            "--threads {threads}: node {node} has only {} usable CPU(s) ({usable})",
            usable.len()
        ),
        Refusal::ThreadsOverPackageNode { threads, node, package, usable } => format!(
            "--threads {threads}: node {node} of package {package} has only {usable} usable CPU(s)"
        ),
        Refusal::ArraysOverSpare { asked, arrays, needs, spare, most } => format!(
            "--size {} per array x {arrays} arrays needs {}, more than the memory node(s) can \
             spare ({}); use --size {} or less",
            size(*asked),
            size(*needs),
            size(*spare),
            topo::units::binary_size_floor(*most)
        ),
    }
}

/// The plan's warning that the arrays asked for (`bytes` each) are below
/// STREAM's rule (`want`: 4x the last-level cache the threads share), in
/// the words of the flag that asked (`bw --size`, `advise interleave
/// --size`): bench's `Event::SmallArrays`.
pub fn small_arrays(bytes: u64, want: u64) -> String {
    let w = bench::bw::PlanWarning::SmallArrays { bytes, want };
    format!("--size {w}")
}

/// One counters row per result that has counts (`--counters`).
fn counter_rows(results: &[BwResult]) -> Vec<Row<'_>> {
    results
        .iter()
        .filter_map(|r| {
            Some(Row {
                label: format!("{} {} {}", r.mode, r.kernel, nodes_of(r)),
                counters: r.counters.as_ref()?,
                counted_bytes: Some(r.bytes_per_rep as f64 * r.reps as f64),
            })
        })
        .collect()
}

fn stores_note(stores: results::bw::Stores) -> String {
    match stores {
        results::bw::Stores::None => String::new(),
        s => format!(", {} stores", s.name()),
    }
}

/// A figure of `r` in GB/s, rounded as every output rounds it
/// ([`report::fmt::fig`], to the result's noise).
fn gbs(r: &BwResult, v: f64) -> String {
    report::fmt::fig(results::stats::measured(v), r.noise(), "GB/s")
}

fn nodes_of(r: &BwResult) -> String {
    match r.mem_node {
        Some(m) => m.to_string(),
        None => r.mem_nodes.to_string(),
    }
}

/// Tables in the house style: one per mode, the matrix laid out like MLC's
/// (CPU nodes as rows, memory nodes as columns), one per kernel.
pub fn render(results: &[BwResult], style: TableStyle) -> String {
    let mut out = String::new();
    if results.is_empty() {
        return "no bandwidth measured\n".into();
    }
    let has_peak = results.iter().any(|r| r.peak_check().is_some());
    let modes: Vec<Mode> = {
        let mut seen = Vec::new();
        for r in results {
            if !seen.contains(&r.mode) {
                seen.push(r.mode);
            }
        }
        seen
    };
    for mode in modes {
        let rs: Vec<&BwResult> = results.iter().filter(|r| r.mode == mode).collect();
        if mode == Mode::Matrix {
            let kernels: Vec<Kernel> = {
                let mut v: Vec<Kernel> = Vec::new();
                for r in &rs {
                    if !v.contains(&r.kernel) {
                        v.push(r.kernel);
                    }
                }
                v
            };
            for k in kernels {
                let rk: Vec<&&BwResult> = rs.iter().filter(|r| r.kernel == k).collect();
                let rows: BTreeSet<u32> = rk.iter().filter_map(|r| r.cpu_node).collect();
                let cols: BTreeSet<u32> = rk.iter().filter_map(|r| r.mem_node).collect();
                let mut header = vec!["CPU node \\ memory node".to_string()];
                header.extend(cols.iter().map(|c| c.to_string()));
                let mut t = Table::new(header, style);
                for row in &rows {
                    let mut line = vec![row.to_string()];
                    for col in &cols {
                        let cell = rk
                            .iter()
                            .find(|r| r.cpu_node == Some(*row) && r.mem_node == Some(*col))
                            .map(|r| {
                                let flag = if r.placement.status == PlacementStatus::Verified {
                                    ""
                                } else {
                                    " !"
                                };
                                // Against the memory node's channels, and
                                // a remote cell against the declared link.
                                let peak = match r.peak_check() {
                                    Some(c) => format!(" ({})", peak_text(&c)),
                                    None => String::new(),
                                };
                                format!("{}{flag}{peak}", gbs(r, r.best_gbs))
                            })
                            .unwrap_or_else(|| "-".into());
                        line.push(cell);
                    }
                    t.add_row(line);
                }
                let threads: BTreeSet<usize> = rk.iter().map(|r| r.threads).collect();
                let threads: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
                out.push_str(&format!(
                    "Bandwidth matrix, {k}: best GB/s (1e9 bytes/s), {} thread(s) per CPU node, {}{}\n",
                    threads.join("/"),
                    rk[0].isa.name(),
                    stores_note(rk[0].stores)
                ));
                out.push_str(&t.to_string());
                out.push_str("\n(! = fewer than 99% of pages on the intended node");
                if rk.iter().any(|r| r.peak_check().is_some()) {
                    out.push_str(
                        "; (N) = % of the theoretical peak: the memory node's channels, for a \
                         remote cell the declared link (--set link.gbs) when smaller",
                    );
                }
                out.push_str(")\n\n");
            }
            continue;
        }
        let mut header: Vec<String> = [
            "kernel",
            "threads",
            "CPUs",
            "CPU node",
            "memory",
            "best GB/s",
            "median GB/s",
            "min GB/s",
            "max GB/s",
            "spread %",
            "reps",
            "pages on target %",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if has_peak {
            header.push("of peak %".into());
        }
        let mut t = Table::new(header, style);
        for r in &rs {
            let mut row = vec![
                r.kernel.to_string(),
                r.threads.to_string(),
                r.cpus.to_string(),
                r.cpu_node.map(|n| n.to_string()).unwrap_or_else(|| "all".into()),
                format!("{} {}", r.policy.name(), nodes_of(r)),
                gbs(r, r.best_gbs),
                gbs(r, r.median_gbs),
                gbs(r, r.min_gbs),
                gbs(r, r.max_gbs),
                format!("{:.1}{}", r.spread_pct, noise_mark(r)),
                r.reps.to_string(),
                format!("{:.1}", r.placement_fraction() * 100.0),
            ];
            if has_peak {
                row.push(r.peak_check().map(|c| peak_text(&c)).unwrap_or_default());
            }
            t.add_row(row);
        }
        let first = rs[0];
        out.push_str(&format!(
            "Bandwidth, {mode}: GB/s = 1e9 bytes/s (STREAM byte counting), {} kernels{}, arrays of {:.1} MiB each\n",
            first.isa.name(),
            stores_note(
                rs.iter().find(|r| r.stores != results::bw::Stores::None).map_or(results::bw::Stores::None, |r| r.stores),
            ),
            first.array_bytes as f64 / (1u64 << 20) as f64
        ));
        out.push_str(&t.to_string());
        out.push_str("\n\n");
    }
    out
}

/// Energy and frequency of each result over its timed repetitions, with
/// GB/s per watt where the package power is known; one line when every
/// result says the same (a machine without RAPL).
pub fn render_power(results: &[BwResult]) -> String {
    let lines: Vec<(String, String)> = results
        .iter()
        .filter_map(|r| {
            let p = r.power.as_ref()?;
            let mut t = p.text();
            if let Some(w) = p.mean_watts().filter(|w| *w > 0.0) {
                t.push_str(&format!(
                    "; {:.3} GB/s per W (best GB/s / mean package+DRAM W)",
                    r.best_gbs / w
                ));
            }
            Some((format!("{} {} {} -> {}", r.mode, r.kernel, r.cpus, nodes_of(r)), t))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("Power and frequency over the timed repetitions:\n");
    let first = &lines[0].1;
    if lines.len() > 1 && lines.iter().all(|(_, t)| t == first) {
        out.push_str(&format!("  every result: {first}\n"));
    } else {
        for (what, t) in &lines {
            out.push_str(&format!("  {what}: {t}\n"));
        }
    }
    out.push('\n');
    out
}

/// `87.3`, or `287.0 (impossible: ...)` naming which of figure and peak
/// is wrong (the column is headed "of peak %").
fn peak_text(c: &results::bw::PeakCheck) -> String {
    match c.over {
        None => format!("{:.1}", c.fraction * 100.0),
        Some(s) => format!("{:.1} ({})", c.fraction * 100.0, report::impossible::suspect(s)),
    }
}

/// ` (disturbed)` when other work made the figure unstable, ` (noisy)`
/// when its repetitions spread for other reasons, else nothing.
fn noise_mark(r: &BwResult) -> &'static str {
    if r.disturbed() {
        " (disturbed)"
    } else if r.noisy() {
        " (noisy)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STYLE: TableStyle = TableStyle::Plain;

    /// A global triad result as the first version stored it (the fixture
    /// run of `report/tests/data/v1`): its best three agreed within 0.75%,
    /// its repetitions spread 13.2% overall.
    const STORED: &str = r#"{"array_bytes":134217728,"arrays":3,"best_gbs":35.8,"bytes_per_rep":402653184,
        "cpu_node":null,"cpus":"0-1","interrupted":false,"isa":"avx2","kernel":"triad","llc_bytes":33554432,
        "max_gbs":35.8,"mean_gbs":34.4,"median_gbs":35.2,"median_rep_s":0.0114,"mem_node":null,"mem_nodes":"0",
        "min_gbs":31.1,"mode":"global","pages":"thp","peak_fraction":null,"peak_gbs":null,"placement":1.0,
        "placement_check":{"expected":"0","fraction":1.0,"not_present_pages":0,"ok":true,"per_node":{"0":1.0},
        "sampled_pages":12288,"spread":null,"threshold":0.99,"total_pages":98304},"policy":"local-per-thread",
        "reps":6,"size_rule_ok":true,"spread_pct":13.2,"stable":true,"stores":"nt","threads":2,
        "top_spread_pct":0.75,"validated":true}"#;

    fn result(spread_pct: f64, stable: bool) -> BwResult {
        let v: serde_json::Value = serde_json::from_str(STORED).unwrap();
        let results::Record::Bw(mut r) = results::upgrade::read("bw", &v).record else {
            panic!("not a bandwidth record")
        };
        r.spread_pct = spread_pct;
        r.stable = stable;
        *r
    }

    #[test]
    fn small_arrays_name_the_size_flag_and_the_plan_names_none() {
        let mib = 1 << 20;
        assert_eq!(
            small_arrays(mib, 128 * mib),
            "--size 1 MiB per array is below 4x the last-level cache the threads share \
             (128 MiB): figures may include cache bandwidth"
        );
        use bench::bw::PlanWarning as W;
        for w in [
            W::SmallArrays { bytes: mib, want: 128 * mib },
            W::Capped { bytes: mib, spare: 3 * mib, want: 128 * mib },
            W::UnknownLlc { assumed: 32 * mib },
            W::NoWeightedInterleave,
            W::GlobalUnchecked,
        ] {
            assert!(!w.to_string().contains("--"), "{w}");
        }
    }

    #[test]
    fn a_wide_overall_spread_is_marked_noisy_although_the_best_three_agreed() {
        assert!(render(&[result(13.2, true)], STYLE).contains("13.2 (noisy)"));
        assert!(render(&[result(118.0, true)], STYLE).contains("118.0 (noisy)"));
        assert!(render(&[result(0.9, false)], STYLE).contains("0.9 (noisy)"));
        let quiet = render(&[result(0.9, true)], STYLE);
        assert!(quiet.contains("0.9") && !quiet.contains("(noisy)"), "{quiet}");
    }

    #[test]
    fn a_figure_above_its_peak_is_called_impossible_with_its_suspect() {
        // The stored run's 35.8 GB/s against a 12.5 GB/s peak: 286.4%.
        let mut r = result(0.9, true);
        r.peak_gbs = Some(12.5);
        let out = render(&[r.clone()], STYLE);
        assert!(out.contains("of peak %"), "{out}");
        assert!(out.contains("286.4 (impossible: above the peak; the peak is suspect"), "{out}");
        // under the peak: the share alone
        r.peak_gbs = Some(71.6);
        let out = render(&[r.clone()], STYLE);
        assert!(out.contains("50.0") && !out.contains("impossible"), "{out}");
        // a local matrix cell shows its share of the node's peak
        r.mode = Mode::Matrix;
        r.cpu_node = Some(0);
        r.mem_node = Some(0);
        let out = render(&[r], STYLE);
        assert!(out.contains("35.8 (50.0)"), "{out}");
    }

    /// The row of a figure above its peak, up to the suspect.
    const ROW: &str =
        "triad   2        0-1   all       local-per-thread 0  35.8       35.2         \
                       31.1      35.8      0.9       6     100.0              286.4 (impossible: \
                       above the peak; ";

    /// The table's row and the line under the tables of a figure above its
    /// peak, whole.
    #[test]
    fn a_figure_above_its_peak_is_worded_whole() {
        let mut r = result(0.9, true);
        r.peak_gbs = Some(12.5);
        let out = text(&[r.clone()], STYLE);
        let line = |start: &str| {
            out.lines().find(|l| l.trim_start().starts_with(start)).unwrap_or_default()
        };
        assert_eq!(
            line("triad"),
            format!(
                "{ROW}the peak is suspect (DRAM-sized arrays on verified pages: check \
                     --peak-gbs or the DIMM table))"
            )
        );
        assert_eq!(
            line("impossible: "),
            "impossible: bw global triad, 2 thread(s), memory 0: 35.8 GB/s is impossible: 2.86x \
             the theoretical peak of 12.5 GB/s; likely cause: a wrong peak: the arrays were \
             DRAM-sized on verified pages, so the peak given (--peak-gbs) or read from the DIMM \
             table is too low (channels or MT/s)"
        );
        r.size_rule_ok = false;
        let out = render(&[r], STYLE);
        let row = out.lines().find(|l| l.trim_start().starts_with("triad")).unwrap_or_default();
        assert_eq!(
            row,
            format!(
                "{ROW}the figure is suspect (arrays under 4x LLC or pages not verified: \
                     caches or other nodes served part))"
            )
        );
    }

    #[test]
    fn a_figure_whose_threads_waited_is_marked_disturbed() {
        let mut r = result(0.9, false);
        r.disturbance = Some(results::disturbance::Disturbance {
            clean: 2,
            disturbed: 9,
            lost_pct: 48.0,
            busiest_cpu: Some(1),
            ..Default::default()
        });
        let out = render(&[r.clone()], STYLE);
        assert!(out.contains("0.9 (disturbed)"), "{out}");
        // disturbed repetitions that left a stable figure mark nothing
        r.stable = true;
        assert!(!render(&[r], STYLE).contains("(disturbed)"));
    }

    /// The refusals `bw` words with its flags, each whole line as the plan
    /// said it before it was typed (the ones the flag grammar leaves
    /// unreachable from the command line included).
    #[test]
    fn refusals_are_worded_with_bws_flags() {
        let set = |s: &str| topo::CpuSet::parse_list(s).unwrap();
        let cases = [
            (Refusal::NoThreads, "--threads 0: at least one thread is needed"),
            (Refusal::EmptyArrays, "--size 0: arrays need at least one page"),
            (
                Refusal::NoNtStores { isa: kernels::Isa::Scalar },
                "--stores nt: the scalar kernels have no non-temporal stores (use --stores regular or another --isa)",
            ),
            (Refusal::NoCpus, "--cpus: the CPU list is empty"),
            (
                Refusal::ThreadsOverCpus { threads: 5, given: 4 },
                "--threads 5 is more than the 4 CPU(s) given with --cpus",
            ),
            (
                Refusal::CpusOffNode { cpus: set("0-3,8"), node: 1 },
                "--cpus 0-3,8 are not all on --cpu-node 1",
            ),
            (
                Refusal::ThreadsOverNode { threads: 9, node: 2, usable: set("16-23") },
                "--threads 9: node 2 has only 8 usable CPU(s) (16-23)",
            ),
            (
                Refusal::ThreadsOverPackageNode { threads: 9, node: 3, package: 1, usable: 8 },
                "--threads 9: node 3 of package 1 has only 8 usable CPU(s)",
            ),
            (
                Refusal::ArraysOverSpare {
                    asked: 1 << 40,
                    arrays: 3,
                    needs: 3 << 40,
                    spare: 6 << 30,
                    most: 2 << 30,
                },
                "--size 1 TiB per array x 3 arrays needs 3 TiB, more than the memory node(s) can \
                 spare (6 GiB); use --size 2 GiB or less",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(refusal(&r), want);
            assert!(!r.to_string().contains("--"), "the library's own words name no flag: {r}");
        }
    }
}
