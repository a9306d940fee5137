//! The text of `numaprobe lat`: one table per experiment (a point, the
//! node matrix, the size sweep, per-CPU latency and its groups, loaded
//! latency and its knees, core-to-core), then the lines that say how it
//! was measured and what was discarded.

use analysis::impossible::{Impossible, LlcFloor};
use results::disturbance::{self, Disturbance};
use results::lat::{
    method_caption, C2cResult, CacheMark, CpuGroup, LatResult, LoadedPoint, LoadedSummary, Plateau,
    PrefetchCheck, KNEE_PCT,
};
use results::placement::PlacementStatus;
use topo::units::binary_size;

use bench::lat::experiment::Measured;
use bench::lat::per_cpu_sweep::{NoDram, SizesRefusal};
use bench::lat::PerCpuSweepReport;

use super::counters::{render as counters_table, Row};
use super::{Lines, Table, TableStyle};

/// A refused list of sweep sizes in the words of `lat --sizes`.
pub fn sizes_refusal(r: &SizesRefusal) -> String {
    let said = match r {
        SizesRefusal::Empty => "no size given".to_string(),
        SizesRefusal::Twice(s) => format!("{} given twice", binary_size(*s)),
        SizesRefusal::BelowMinimum { size, min, stride } => format!(
            "{size} bytes is below the minimum of {min} bytes (two elements of stride {stride})"
        ),
    };
    format!("--sizes: {said}")
}

/// Why a per-CPU sweep has no DRAM column, as its note says it (in `lat
/// --json`, the text and the stored summary): past an LLC of known size,
/// with the flags that would reach past it.
pub fn no_dram(why: &NoDram) -> String {
    match why {
        NoDram::UnknownLlc => why.to_string(),
        NoDram::NoSizePastLlc { .. } => {
            format!("{why}; give --size (or a --sizes entry) above it")
        }
    }
}

/// What one `lat` invocation measured, as text, with a line for each
/// impossible figure ([`impossible`]; `llc_bytes`: the last-level cache
/// the topology reports).
pub fn measured(m: &Measured, llc_bytes: Option<u64>, style: TableStyle) -> String {
    let mut s = tables(m, style);
    for i in impossible(m, llc_bytes) {
        s.push_str(&crate::impossible::line(&i));
    }
    s
}

/// The DRAM figures of one `lat` invocation below the last-level cache's
/// latency: held against the typical floor
/// ([`analysis::impossible::LlcFloor::typical`]), as `lat` measures no
/// sweep beside them (a sweep measures caches on purpose).
pub fn impossible(m: &Measured, llc_bytes: Option<u64>) -> Vec<Impossible> {
    let floor = LlcFloor::typical_of(llc_bytes);
    match m {
        Measured::Loaded(r) => {
            r.points.iter().filter_map(|p| analysis::impossible::loaded(p, &floor)).collect()
        }
        m => m
            .chase_points()
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| analysis::impossible::chase(p, &floor))
            .collect(),
    }
}

/// A chase's median in ns, marked ` (impossible)` below the last-level
/// cache's latency, else ` (disturbed)` when it is not stable.
fn chase_marked(r: &LatResult) -> String {
    if analysis::impossible::chase(r, &LlcFloor::typical()).is_some() {
        format!("{} ({})", ns(r.median_ns), Impossible::WORD)
    } else {
        ns_marked(r.median_ns, r.stable)
    }
}

fn tables(m: &Measured, style: TableStyle) -> String {
    match m {
        Measured::Point(r, check) => point(r, check.as_ref(), style),
        Measured::Matrix(v) => matrix(v, style),
        Measured::Sweep(r) => sweep(r.cpu, r.mem_node, &r.results, &r.caches, &r.plateaus, style),
        Measured::PerCpu(r) => {
            per_cpu(r.mem_node, &r.results, &r.groups, r.noise_ns, r.note.as_deref(), style)
        }
        Measured::PerCpuSweep(r) => per_cpu_sweep(r, style),
        Measured::Loaded(r) => loaded(&r.points, &r.curves, style),
        Measured::C2c(v) => c2c(v, style),
    }
}

/// The counters table of chase points (`--counters`).
pub fn counters(points: &[&LatResult], style: TableStyle) -> String {
    let rows: Vec<Row> = points
        .iter()
        .filter_map(|r| {
            Some(Row {
                label: format!(
                    "cpu {} -> node {}, {} KiB",
                    r.cpu,
                    node(r.mem_node),
                    r.size_bytes / 1024
                ),
                counters: r.counters.as_ref()?,
                counted_bytes: None,
            })
        })
        .collect();
    counters_table(&rows, style)
}

/// A latency in ns: two decimals below 10, one above.
pub fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// A figure in ns, marked ` (disturbed)` when it is not stable.
fn ns_marked(v: f64, stable: bool) -> String {
    if stable {
        ns(v)
    } else {
        format!("{} (disturbed)", ns(v))
    }
}

/// A node, or `-` for none.
pub fn node(n: Option<u32>) -> String {
    n.map_or("-".into(), |n| n.to_string())
}

/// The line under a table when samples were discarded: how many, and why
/// (the figure stands on the clean ones).
fn discarded_line<'a>(ds: impl IntoIterator<Item = Option<&'a Disturbance>>) -> Option<String> {
    let ds: Vec<&Disturbance> = ds.into_iter().flatten().collect();
    let discarded: usize = ds.iter().map(|d| d.disturbed).sum();
    if discarded == 0 {
        return None;
    }
    let all: usize = ds.iter().map(|d| d.clean + d.disturbed).sum();
    let worst = ds.iter().max_by(|a, b| a.lost_pct.total_cmp(&b.lost_pct))?;
    Some(format!(
        "disturbance: {discarded} of {all} samples discarded (the measuring thread waited to run \
         beyond {}% of a sample); up to {:.0}% of the time lost; (disturbed) = too few clean \
         samples or more than {:.0}% of the time lost",
        disturbance::SAMPLE_TOLERANCE_PCT,
        worst.lost_pct,
        disturbance::LOST_LIMIT_PCT
    ))
}

fn placement(r: &LatResult) -> String {
    match r.placement.status {
        PlacementStatus::Verified => "verified".into(),
        PlacementStatus::Unverified => "unverified".into(),
        PlacementStatus::Mismatch => {
            format!("MISMATCH ({:.0}% on node)", r.placement.pct_on_node().unwrap_or(0.0))
        }
    }
}

/// The method line under every chase table.
fn method_line(r: &LatResult) -> String {
    format!(
        "method: {}",
        method_caption(r.stride_bytes as u64, Some(r.tlb_group_bytes), &r.page_size)
    )
}

/// One point, with the prefetch check when it was made.
pub fn point(r: &LatResult, check: Option<&PrefetchCheck>, style: TableStyle) -> String {
    let mut t = Table::with_header(
        &[
            "CPU",
            "CPU node",
            "mem node",
            "size",
            "pages",
            "stride B",
            "median ns",
            "p90 ns",
            "p99 ns",
            "min ns",
            "max ns",
            "spread %",
            "placement",
        ],
        style,
    );
    t.add_row(vec![
        r.cpu.to_string(),
        node(r.cpu_node),
        node(r.mem_node),
        binary_size(r.size_bytes),
        r.page_size.clone(),
        r.stride_bytes.to_string(),
        chase_marked(r),
        ns(r.p90_ns),
        ns(r.p99_ns),
        ns(r.min_ns),
        ns(r.max_ns),
        format!("{:.1}", r.spread_pct),
        placement(r),
    ]);
    let mut out = Lines::new();
    out.push(t);
    out.push(method_line(r));
    if let Some(l) = discarded_line([r.disturbance.as_ref()]) {
        out.push(l);
    }
    if let Some(c) = check {
        out.push(format_args!(
            "prefetch check ({} on node {}): {}",
            binary_size(c.size_bytes),
            node(c.mem_node),
            c.note
        ));
    }
    out.into_string()
}

/// The node matrix: CPU nodes down, memory nodes across.
pub fn matrix(v: &[LatResult], style: TableStyle) -> String {
    let mut mems: Vec<Option<u32>> = v.iter().map(|r| r.mem_node).collect();
    mems.sort();
    mems.dedup();
    let mut cpus: Vec<Option<u32>> = v.iter().map(|r| r.cpu_node).collect();
    cpus.sort();
    cpus.dedup();
    let mut header = vec!["CPU node \\ mem node (ns)".to_string()];
    header.extend(mems.iter().map(|m| node(*m)));
    let mut t = Table::new(header, style);
    for c in &cpus {
        let mut row = vec![node(*c)];
        for m in &mems {
            row.push(v.iter().find(|r| r.cpu_node == *c && r.mem_node == *m).map_or(
                "-".into(),
                |r| {
                    let flag =
                        if r.placement.status == PlacementStatus::Mismatch { " !" } else { "" };
                    format!("{}{flag}", chase_marked(r))
                },
            ));
        }
        t.add_row(row);
    }
    let mut out = Lines::new();
    out.push(t);
    if let Some(r) = v.first() {
        out.push(format_args!(
            "median ns per dependent load; {} per cell (! = pages not all on the node)",
            binary_size(r.size_bytes),
        ));
        out.push(method_line(r));
    }
    if let Some(l) = discarded_line(v.iter().map(|r| r.disturbance.as_ref())) {
        out.push(l);
    }
    out.into_string()
}

/// The size sweep on `cpu` to `mem_node`: each size with the caches it
/// has passed, then the plateaus found.
pub fn sweep(
    cpu: u32,
    mem_node: Option<u32>,
    results: &[LatResult],
    caches: &[CacheMark],
    plateaus: &[Plateau],
    style: TableStyle,
) -> String {
    let mut t = Table::with_header(
        &["size", "stride B", "median ns", "p90 ns", "spread %", "cache"],
        style,
    );
    let mut prev = 0u64;
    for p in results {
        let marks: Vec<String> = caches
            .iter()
            .filter(|c| c.size_bytes > prev && c.size_bytes <= p.size_bytes)
            .map(|c| format!("L{} = {}", c.level, binary_size(c.size_bytes)))
            .collect();
        t.add_row(vec![
            binary_size(p.size_bytes),
            p.stride_bytes.to_string(),
            ns_marked(p.median_ns, p.stable),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
            if marks.is_empty() { String::new() } else { format!("past {}", marks.join(", ")) },
        ]);
        prev = p.size_bytes;
    }
    let mut pt = Table::with_header(
        &["plateau", "from", "to", "latency ns", "cache size (topology)"],
        style,
    );
    for p in plateaus {
        pt.add_row(vec![
            p.label.clone(),
            binary_size(p.from_bytes),
            binary_size(p.to_bytes),
            ns(p.latency_ns),
            p.cache_bytes.map_or("-".into(), binary_size),
        ]);
    }
    let mut out = Lines::new();
    out.push(t);
    out.push(pt);
    if let (Some(first), Some(last)) = (results.first(), results.last()) {
        out.push(format_args!("CPU {cpu}, memory node {}", node(mem_node)));
        let strides = if first.stride_bytes == last.stride_bytes {
            String::new()
        } else {
            format!(
                " (stride {} B while the ring fits in the last-level cache: every cache set used)",
                first.stride_bytes
            )
        };
        out.push(format_args!("{}{strides}", method_line(last)));
    }
    if let Some(l) = discarded_line(results.iter().map(|p| p.disturbance.as_ref())) {
        out.push(l);
    }
    out.into_string()
}

/// Per-CPU latency to `mem_node`, then the CPUs grouped by it (`noise_ns`:
/// the noise the grouping allowed), then the note on hidden NUMA.
pub fn per_cpu(
    mem_node: Option<u32>,
    results: &[LatResult],
    groups: &[CpuGroup],
    noise_ns: f64,
    note: Option<&str>,
    style: TableStyle,
) -> String {
    let mut t = Table::with_header(
        &["CPU", "CPU node", "median ns", "p90 ns", "spread %", "placement"],
        style,
    );
    for p in results {
        t.add_row(vec![
            p.cpu.to_string(),
            node(p.cpu_node),
            ns_marked(p.median_ns, p.stable),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
            placement(p),
        ]);
    }
    let mut gt =
        Table::with_header(&["group", "CPUs", "OS nodes", "median ns", "min ns", "max ns"], style);
    for (i, grp) in groups.iter().enumerate() {
        gt.add_row(vec![
            (i + 1).to_string(),
            grp.cpus.to_string(),
            grp.os_nodes.to_string(),
            ns(grp.median_ns),
            ns(grp.min_ns),
            ns(grp.max_ns),
        ]);
    }
    let mut out = Lines::new();
    out.push(t);
    out.push(gt);
    out.push(format_args!(
        "memory node {}{}; {} latency group(s), noise {} ns",
        node(mem_node),
        results.first().map_or(String::new(), |p| format!(
            ", {} working set at stride {} B per CPU",
            binary_size(p.size_bytes),
            p.stride_bytes
        )),
        groups.len(),
        ns(noise_ns)
    ));
    if let Some(p) = results.first() {
        out.push(method_line(p));
    }
    if let Some(l) = discarded_line(results.iter().map(|p| p.disturbance.as_ref())) {
        out.push(l);
    }
    if let Some(n) = note {
        out.push(format_args!("note: {n}"));
    }
    out.into_string()
}

/// The per-CPU sweep: sizes down, CPUs across (median ns per load), with
/// the stride of each size and the latency groups found there; then each
/// CPU's plateaus, then the groups at the DRAM size.
pub fn per_cpu_sweep(r: &PerCpuSweepReport, style: TableStyle) -> String {
    let mut cpus: Vec<u32> = Vec::new();
    for p in &r.results {
        if !cpus.contains(&p.cpu) {
            cpus.push(p.cpu);
        }
    }
    let mut header = vec!["size".to_string(), "stride B".to_string()];
    header.extend(cpus.iter().map(|c| format!("CPU {c} ns")));
    header.push("groups".into());
    let mut t = Table::new(header, style);
    let llc = r.caches.last().map_or(0, |c| c.size_bytes);
    for &size in &r.sizes {
        let at: Vec<&LatResult> = r.results.iter().filter(|p| p.size_bytes == size).collect();
        let Some(first) = at.first() else { continue };
        let mut label = binary_size(size);
        if Some(size) == r.dram_size_bytes {
            label.push_str(" (DRAM)");
        } else if llc > 0 && size > llc {
            label.push_str(" (past LLC)");
        }
        let mut row = vec![label, first.stride_bytes.to_string()];
        for c in &cpus {
            row.push(
                at.iter()
                    .find(|p| p.cpu == *c)
                    .map_or("-".into(), |p| ns_marked(p.median_ns, p.stable)),
            );
        }
        row.push(
            r.groups_by_size
                .iter()
                .find(|g| g.size_bytes == size)
                .map_or("-".into(), |g| g.groups.len().to_string()),
        );
        t.add_row(row);
    }
    let mut labels: Vec<String> = Vec::new();
    for cp in &r.plateaus {
        for p in &cp.plateaus {
            if !labels.contains(&p.label) {
                labels.push(p.label.clone());
            }
        }
    }
    let mut ph = vec!["CPU".to_string(), "CPU node".to_string()];
    ph.extend(labels.iter().map(|l| format!("{l} ns")));
    let mut pt = Table::new(ph, style);
    for cp in &r.plateaus {
        let mut row = vec![cp.cpu.to_string(), node(cp.cpu_node)];
        for l in &labels {
            row.push(
                cp.plateaus.iter().find(|p| &p.label == l).map_or("-".into(), |p| ns(p.latency_ns)),
            );
        }
        pt.add_row(row);
    }
    let mut out = Lines::new();
    out.push(t);
    out.push(pt);
    let marks: Vec<String> =
        r.caches.iter().map(|c| format!("L{} = {}", c.level, binary_size(c.size_bytes))).collect();
    out.push(format_args!(
        "memory node {}; median ns per dependent load; plateaus from each point's fastest sample; \
         caches of CPU {}: {}",
        node(r.mem_node),
        r.cpus.first().map_or("-".into(), |c| c.to_string()),
        if marks.is_empty() { "unknown".to_string() } else { marks.join(", ") }
    ));
    if let Some(size) = r.dram_size_bytes {
        let mut gt = Table::with_header(
            &["DRAM group", "CPUs", "OS nodes", "median ns", "min ns", "max ns"],
            style,
        );
        for (i, grp) in r.dram_groups.iter().enumerate() {
            gt.add_row(vec![
                (i + 1).to_string(),
                grp.cpus.to_string(),
                grp.os_nodes.to_string(),
                ns(grp.median_ns),
                ns(grp.min_ns),
                ns(grp.max_ns),
            ]);
        }
        out.push(gt);
        out.push(format_args!(
            "DRAM: {} at stride {} B (past the last-level cache); {} latency group(s), noise {} ns",
            binary_size(size),
            r.dram_stride_bytes,
            r.dram_groups.len(),
            ns(r.dram_noise_ns)
        ));
    }
    if let Some(last) = r.results.iter().max_by_key(|p| p.size_bytes) {
        let cached = r.results.iter().find(|p| p.stride_bytes != last.stride_bytes);
        let strides = cached.map_or(String::new(), |c| {
            format!(
                " (stride {} B while the ring fits in the last-level cache: every cache set used)",
                c.stride_bytes
            )
        });
        out.push(format_args!("{}{strides}", method_line(last)));
    }
    if let Some(l) = discarded_line(r.results.iter().map(|p| p.disturbance.as_ref())) {
        out.push(l);
    }
    if let Some(n) = &r.note {
        out.push(format_args!("note: {n}"));
    }
    out.into_string()
}

/// Loaded latency: every point of every mix, then each mix's knee and
/// its verdict.
pub fn loaded(points: &[LoadedPoint], curves: &[LoadedSummary], style: TableStyle) -> String {
    let mut t = Table::with_header(
        &[
            "mix",
            "delay ns",
            "load GB/s",
            "read GB/s",
            "write GB/s",
            "median ns",
            "p90 ns",
            "p99 ns",
            "spread %",
        ],
        style,
    );
    let gbs = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
    for p in points {
        t.add_row(vec![
            p.load_kind.name().to_string(),
            match (p.idle, p.delay_ns) {
                (true, _) => "idle".into(),
                (false, Some(d)) => format!("{d:.0}"),
                (false, None) => format!("{} it", p.delay),
            },
            format!("{:.2}", p.load_gbs),
            gbs(p.read_gbs),
            gbs(p.write_gbs),
            ns_marked(p.latency_ns, p.stable),
            ns(p.p90_ns),
            ns(p.p99_ns),
            format!("{:.1}", p.spread_pct),
        ]);
    }
    let mut out = Lines::new();
    out.push(t);
    if !curves.is_empty() {
        let knee = format!("knee GB/s (+{KNEE_PCT:.0}%)");
        let mut k = Table::with_header(
            &[
                "mix",
                "idle ns",
                &knee,
                "usable GB/s (latency < 2x idle)",
                "peak GB/s",
                "latency at peak ns",
            ],
            style,
        );
        for c in curves {
            let kn = &c.knee;
            k.add_row(vec![
                c.load_kind.name().to_string(),
                ns(kn.idle_ns),
                kn.knee_gbs.map_or("not reached".into(), |v| format!("{v:.2}")),
                if kn.doubled {
                    format!("{:.2}", kn.usable_gbs)
                } else {
                    format!("{:.2} (never doubled)", kn.usable_gbs)
                },
                format!("{:.2}", kn.peak_gbs),
                ns(kn.peak_ns),
            ]);
        }
        out.push(k);
        for c in curves {
            out.push(format_args!("{}: {}", c.load_kind.name(), c.knee.verdict()));
        }
    }
    if let Some(p) = points.first() {
        out.push(format_args!(
            "chase on CPU {} to node {} ({}), {} load thread(s) on the same node; \
             waits calibrated in ns; GB/s = 1e9 B/s, measured from the lines moved",
            p.cpu,
            node(p.mem_node),
            binary_size(p.size_bytes),
            p.load_threads,
        ));
        // Every point measured by this version carries its stride.
        if let Some(stride) = p.stride_bytes {
            out.push(format_args!(
                "method: {}",
                method_caption(stride as u64, p.tlb_group_bytes, &p.page_size)
            ));
        }
    }
    if let Some(l) = discarded_line(points.iter().map(|p| p.disturbance.as_ref())) {
        out.push(l);
    }
    out.into_string()
}

/// Core-to-core latency, one pair a row.
pub fn c2c(v: &[C2cResult], style: TableStyle) -> String {
    let mut t = Table::with_header(
        &["CPU a", "CPU b", "relation", "one-way ns", "p90 ns", "spread %"],
        style,
    );
    for p in v {
        t.add_row(vec![
            p.cpu_a.to_string(),
            p.cpu_b.to_string(),
            p.relation.map_or("unknown", |r| r.name()).to_string(),
            ns_marked(p.median_ns, p.stable),
            ns(p.p90_ns),
            format!("{:.1}", p.spread_pct),
        ]);
    }
    let mut out = Lines::new();
    out.push(t);
    out.push("one-way latency = half the round trip of a cache line bounced between the two CPUs");
    if let Some(l) = discarded_line(v.iter().map(|p| p.disturbance.as_ref())) {
        out.push(l);
    }
    out.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both reasons, whole, as the sweep's note said them before they were
    /// typed; the sweep's own words name no flag.
    #[test]
    fn no_dram_names_the_size_flags_and_the_sweep_names_none() {
        let past = NoDram::NoSizePastLlc { llc_bytes: 32 << 20 };
        assert_eq!(
            no_dram(&past),
            "no size measured past the last-level cache (32 MiB): no DRAM column; give --size \
             (or a --sizes entry) above it"
        );
        assert_eq!(
            no_dram(&NoDram::UnknownLlc),
            "the last-level cache size is unknown: no size is called DRAM"
        );
        for w in [past, NoDram::UnknownLlc] {
            assert!(!w.to_string().contains("--"), "{w}");
        }
    }

    /// Each refused list, whole, as lat said it before the refusals were
    /// typed (the empty list too, which the flag grammar stops first).
    #[test]
    fn sizes_refusals_are_worded_with_the_flag() {
        let cases = [
            (SizesRefusal::Empty, "--sizes: no size given"),
            (SizesRefusal::Twice(1 << 20), "--sizes: 1 MiB given twice"),
            (
                SizesRefusal::BelowMinimum { size: 1024, min: 4096, stride: 64 },
                "--sizes: 1024 bytes is below the minimum of 4096 bytes (two elements of stride 64)",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(sizes_refusal(&r), want);
            assert!(!r.to_string().contains("--"), "the library's own words name no flag: {r}");
        }
    }
}
