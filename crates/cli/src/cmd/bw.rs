//! `numaprobe bw`: memory bandwidth of one CPU node against one memory node,
//! the node matrix, the whole machine (local, interleaved, weighted) and
//! thread scaling. Flags are checked first, then turned into a
//! [`bench::bw::BwPlan`] once the topology is known.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::Context;

use bench::bw::{self, BwMode, BwPlan, RepPolicy, StoreMode};
use kernels::{Isa, Kernel};
use results::bw::{BwResult, Mode};
use results::pages::PageKind;
use results::placement::PlacementStatus;
use serde::Serialize;
use topo::{SysRoot, Topology};

use crate::cli::Global;
use crate::grammar;
use crate::record::{self, Outcome, Recording, SaveArgs, Saving};
use crate::{output, usage};

/// The modes that choose their own nodes: one case's flags (`--cpu-node`,
/// `--mem-node`, `--cpus`) conflict with them.
const WHOLE_MACHINE: [&str; 4] = ["matrix", "global", "interleave", "weighted"];

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Node whose CPUs run the threads (default: the first node with CPUs).
    #[arg(long, value_name = "NODE", value_parser = grammar::node,
          conflicts_with_all = WHOLE_MACHINE)]
    pub cpu_node: Option<u32>,
    /// Node holding the arrays (default: the CPU node's own memory, or the
    /// nearest memory node).
    #[arg(long, value_name = "NODE", value_parser = grammar::node,
          conflicts_with_all = WHOLE_MACHINE)]
    pub mem_node: Option<u32>,
    /// Run on exactly these CPUs instead of a node's: a set such as 0-3,8,
    /// all, !0 (all allowed CPUs but 0) or +0-3 (the first four allowed).
    #[arg(long, value_name = "CPUS", value_parser = grammar::set,
          conflicts_with_all = ["cpu_node", "matrix", "global", "interleave", "weighted", "scaling"])]
    pub cpus: Option<place::SetSpec>,
    /// Threads per CPU node (default: every CPU of the node, one per core
    /// first); with --scaling, the largest count.
    #[arg(long, value_name = "N", value_parser = grammar::threads)]
    pub threads: Option<usize>,
    /// Every CPU node against every memory node (memory-only nodes too).
    #[arg(long, conflicts_with_all = ["global", "interleave", "weighted", "scaling"])]
    pub matrix: bool,
    /// Whole machine: every node's threads on their own memory, then
    /// interleaved over all nodes, then weighted interleave when the kernel
    /// has it.
    #[arg(long, conflicts_with_all = ["interleave", "weighted", "scaling"])]
    pub global: bool,
    /// Whole machine with memory interleaved over all memory nodes.
    #[arg(long)]
    pub interleave: bool,
    /// Whole machine with weighted interleave (Linux 6.9+).
    #[arg(long)]
    pub weighted: bool,
    /// Bandwidth against thread count 1..N on one node.
    #[arg(long, conflicts_with_all = ["interleave", "weighted"])]
    pub scaling: bool,
    /// Kernels, comma-separated (read/write also as load/store).
    #[arg(
        long,
        value_name = "KERNELS",
        value_enum,
        value_delimiter = ',',
        default_value = "copy,scale,add,triad"
    )]
    pub kernel: Vec<Kernel>,
    /// Force an instruction set (default: the best this CPU runs).
    #[arg(long, value_name = "ISA", value_enum)]
    pub isa: Option<Isa>,
    /// Stores: nt (non-temporal), regular, or auto (nt when available).
    #[arg(long, value_name = "STORES", value_enum, default_value = "auto")]
    pub stores: StoreMode,
    /// Bytes per array, e.g. 512M, 1.5G (default: 4x the last-level cache
    /// the threads share, capped by what the memory node can spare).
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// Pages for the arrays (default thp: bandwidth of memory, not of the
    /// TLB; the share of huge pages obtained is reported).
    #[arg(long, value_name = "PAGES", value_enum, default_value = "thp")]
    pub pages: PageKind,
    /// Seconds allowed per result before settling for an unstable figure.
    #[arg(long, value_name = "SECONDS", default_value = "2", value_parser = grammar::budget)]
    pub budget: Duration,
    /// Minimum timed repetitions per result.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = grammar::reps)]
    pub min_reps: usize,
    /// Maximum timed repetitions per result.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = grammar::reps)]
    pub max_reps: usize,
    /// Stop when the best 3 repetitions are within this many percent.
    #[arg(long, value_name = "PCT", default_value_t = 1.0, value_parser = grammar::percent)]
    pub target_spread: f64,
    /// Theoretical peak of one memory node in GB/s (DIMMs x MT/s x 8 bytes),
    /// to show the measured fraction of it (default: from the SMBIOS DIMM
    /// table when it is readable, which needs root).
    #[arg(long, value_name = "GB/S", value_parser = grammar::peak_gbs)]
    pub peak_gbs: Option<f64>,
    /// Count events of the team over each kernel's timed repetitions
    /// (perf_event_open per thread), and the memory controllers' bytes
    /// per socket where the kernel exposes them; recorded with each result.
    #[arg(long)]
    pub counters: bool,
    #[command(flatten)]
    pub save: SaveArgs,
    #[command(flatten)]
    pub declare: crate::declare::DeclareArgs,
}

/// Checks the flags and builds the plan. `--cpus` is resolved against the
/// machine: a plain list is checked CPU by CPU; `all`, `!` and `+` work
/// within the allowed online CPUs.
pub fn plan_from_args(
    a: &Args,
    allowed: &place::Allowed,
    topo: &Topology,
) -> anyhow::Result<BwPlan> {
    let mut kernels = Vec::new();
    for k in a.kernel.iter().copied() {
        if !kernels.contains(&k) {
            kernels.push(k);
        }
    }
    if kernels.is_empty() {
        usage!("--kernel: no kernel given");
    }
    let isa = a.isa;
    let stores = a.stores;
    let array_bytes = a.size;
    let pages = a.pages;
    if a.max_reps < a.min_reps {
        usage!("--min-reps {} / --max-reps {}: need min <= max", a.min_reps, a.max_reps);
    }
    let cpus = match &a.cpus {
        Some(spec) => Some(allowed.resolve_cpus(&spec.to_string(), topo).context("--cpus")?),
        None => None,
    };
    let mut modes = Vec::new();
    if a.matrix {
        modes.push(BwMode::Matrix);
    }
    if a.global {
        modes.push(BwMode::Global);
        modes.push(BwMode::Interleave);
        modes.push(BwMode::Weighted { required: false });
    }
    if a.interleave {
        modes.push(BwMode::Interleave);
    }
    if a.weighted {
        modes.push(BwMode::Weighted { required: true });
    }
    if a.scaling {
        modes.push(BwMode::Scaling { cpu_node: a.cpu_node, mem_node: a.mem_node });
    }
    // The flags of one case conflict with every other mode (clap), so no
    // mode means one case.
    if modes.is_empty() {
        modes.push(BwMode::Local { cpu_node: a.cpu_node, mem_node: a.mem_node, cpus });
    }
    Ok(BwPlan {
        modes,
        kernels,
        threads: a.threads,
        isa,
        stores,
        array_bytes,
        pages,
        reps: RepPolicy {
            min_reps: a.min_reps,
            max_reps: a.max_reps,
            top_k: 3,
            target_spread_pct: a.target_spread,
            budget: a.budget,
        },
        peak_gbs: a.peak_gbs,
        link_gbs: None,
    })
}

/// The link between nodes declared with `--set link.gbs=GB/S` (UPI, xGMI,
/// QPI: numaprobe cannot read it), checked as `--peak-gbs` is: remote
/// bandwidth figures are held against it.
pub(crate) fn link_gbs(declared: &audit::declared::Declared) -> anyhow::Result<Option<f64>> {
    match declared.get("link.gbs") {
        None => Ok(None),
        Some(v) => match grammar::peak_gbs(v) {
            Ok(g) => Ok(Some(g)),
            Err(e) => usage!("--set link.gbs={v}: {e}"),
        },
    }
}

/// Progress bars, plus warnings printed directly when stderr is not a
/// terminal (a hidden bar would swallow them).
pub(crate) struct Obs {
    pub(crate) bars: crate::progress::Bars,
    pub(crate) quiet: bool,
}

impl events::Observer for Obs {
    fn event(&self, event: events::Event) {
        use std::io::IsTerminal;
        match event {
            events::Event::Warning(msg) if !std::io::stderr().is_terminal() => {
                output::warn(self.quiet, &msg)
            }
            e => self.bars.event(e),
        }
    }
}

/// The `--json` document.
#[derive(Serialize)]
struct Doc<'a> {
    /// [`results::SCHEMA_VERSION`].
    schema_version: u32,
    /// Always `GB/s = 1e9 bytes/s` (bytes counted as STREAM does).
    unit: &'static str,
    /// True when Ctrl-C stopped the run early.
    interrupted: bool,
    results: &'a [BwResult],
}

pub fn run(args: Args, g: &Global) -> anyhow::Result<()> {
    let declared = args.declare.resolve()?;
    let root = SysRoot::live();
    let topo = Topology::discover(&root)?;
    let allowed = place::Allowed::current(&root)?;
    let mut plan = plan_from_args(&args, &allowed, &topo)?;
    plan.link_gbs = link_gbs(&declared)?;
    // The theoretical peak from the DIMMs when the user gave none (SMBIOS
    // needs root; without it the fraction is simply not shown).
    if plan.peak_gbs.is_none() {
        plan.peak_gbs = audit::smbios::peak_gbs_per_dram_node(&root, &topo);
    }
    let stop = crate::signal::stop_flag();
    bench::counting::request(args.counters);
    let _lock = record::take_lock(args.save.wait, g.quiet, &stop)?;
    let rec = match args.save.saving() || !declared.is_empty() {
        true => Some(Recording::open(
            g,
            &crate::declare::new_run(&root, Some(&topo), args.save.label, &declared),
        )?),
        false => None,
    };
    let obs = Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let outcome = bw::run_plan(&topo, &plan, &Saving { rec: rec.as_ref(), next: &obs }, &stop);
    let interrupted = stop.is_stopped();
    if let Some(rec) = rec {
        rec.finish(Outcome::of(&outcome, interrupted))?.tell(g.quiet);
    }
    let results = outcome?;
    if g.json {
        return output::json(&Doc {
            schema_version: results::SCHEMA_VERSION,
            unit: "GB/s = 1e9 bytes/s",
            interrupted,
            results: &results,
        });
    }
    output::emit(&render(&results, &topo))?;
    output::emit(&render_power(&results))?;
    let rows = counter_rows(&results);
    if !rows.is_empty() {
        output::emit(&crate::counters::render(&rows))?;
    }
    if interrupted {
        output::warn(
            g.quiet,
            &format!(
                "interrupted: the table holds what was measured before {}",
                crate::signal::cause()
            ),
        );
    }
    Ok(())
}

/// One counters row per result that has counts (`--counters`).
fn counter_rows(results: &[BwResult]) -> Vec<crate::counters::Row<'_>> {
    results
        .iter()
        .filter_map(|r| {
            Some(crate::counters::Row {
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

fn gbs(v: f64) -> String {
    format!("{v:.2}")
}

fn nodes_of(r: &BwResult) -> String {
    match r.mem_node {
        Some(m) => m.to_string(),
        None => r.mem_nodes.to_string(),
    }
}

/// Tables in the house style: one per mode, the matrix laid out like MLC's
/// (CPU nodes as rows, memory nodes as columns), one per kernel.
pub fn render(results: &[BwResult], _topo: &Topology) -> String {
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
                let mut t = output::table(header);
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
                                format!("{}{flag}{peak}", gbs(r.best_gbs))
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
        let mut t = output::table(header);
        for r in &rs {
            let mut row = vec![
                r.kernel.to_string(),
                r.threads.to_string(),
                r.cpus.to_string(),
                r.cpu_node.map(|n| n.to_string()).unwrap_or_else(|| "all".into()),
                format!("{} {}", r.policy.name(), nodes_of(r)),
                gbs(r.best_gbs),
                gbs(r.median_gbs),
                gbs(r.min_gbs),
                gbs(r.max_gbs),
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
        Some(s) => format!("{:.1} ({})", c.fraction * 100.0, s.why()),
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

    /// One package, one node, two CPUs.
    fn machine() -> topo::Topology {
        topo::synthetic::Machine::new(topo::Vendor::Amd, "AMD EPYC")
            .package(0, "0-1")
            .node(0, "0-1", 8 << 30)
            .build()
    }

    #[test]
    fn a_wide_overall_spread_is_marked_noisy_although_the_best_three_agreed() {
        let topo = machine();
        assert!(render(&[result(13.2, true)], &topo).contains("13.2 (noisy)"));
        assert!(render(&[result(118.0, true)], &topo).contains("118.0 (noisy)"));
        assert!(render(&[result(0.9, false)], &topo).contains("0.9 (noisy)"));
        let quiet = render(&[result(0.9, true)], &topo);
        assert!(quiet.contains("0.9") && !quiet.contains("(noisy)"), "{quiet}");
    }

    #[test]
    fn a_figure_above_its_peak_is_called_impossible_with_its_suspect() {
        let topo = machine();
        // The stored run's 35.8 GB/s against a 12.5 GB/s peak: 286.4%.
        let mut r = result(0.9, true);
        r.peak_gbs = Some(12.5);
        let out = render(&[r.clone()], &topo);
        assert!(out.contains("of peak %"), "{out}");
        assert!(out.contains("286.4 (impossible: above the peak; the peak is suspect"), "{out}");
        // under the peak: the share alone
        r.peak_gbs = Some(71.6);
        let out = render(&[r.clone()], &topo);
        assert!(out.contains("50.0") && !out.contains("impossible"), "{out}");
        // a local matrix cell shows its share of the node's peak
        r.mode = Mode::Matrix;
        r.cpu_node = Some(0);
        r.mem_node = Some(0);
        let out = render(&[r], &topo);
        assert!(out.contains("35.80 (50.0)"), "{out}");
    }

    #[test]
    fn a_figure_whose_threads_waited_is_marked_disturbed() {
        let topo = machine();
        let mut r = result(0.9, false);
        r.disturbance = Some(results::disturbance::Disturbance {
            clean: 2,
            disturbed: 9,
            lost_pct: 48.0,
            busiest_cpu: Some(1),
            ..Default::default()
        });
        let out = render(&[r.clone()], &topo);
        assert!(out.contains("0.9 (disturbed)"), "{out}");
        // disturbed repetitions that left a stable figure mark nothing
        r.stable = true;
        assert!(!render(&[r], &topo).contains("(disturbed)"));
    }
}
