//! The text of `numaprobe scan`: each chunk's read bandwidth with its
//! flag (slow, cleared, unconfirmed, disturbed) and physical addresses,
//! then what was found.

use bench::scan::{self, Chunk, Verdict};
use serde::Serialize;

use super::{Table, TableStyle};

#[derive(Serialize)]
/// `scan`'s document (`--json`, with `schema_version` first) and what its
/// text is written from.
pub struct Doc<'a> {
    pub unit: &'static str,
    pub mem_node: u32,
    pub cpus: String,
    pub chunk_bytes: u64,
    pub chunks_planned: usize,
    /// Bytes filled (chunks planned x chunk bytes).
    pub total_bytes: u64,
    /// What the node could spare when the scan started.
    pub spare_bytes: u64,
    /// How the total was chosen: `default` (half of what the node can
    /// spare, at most 8 GiB), `size` (`--size BYTES`), `all`.
    pub total_from: &'static str,
    /// Ctrl-C stopped the scan: `chunks` holds what was measured.
    pub interrupted: bool,
    /// Whether physical ranges were readable (root).
    pub physical: bool,
    pub chunks: &'a [Chunk],
    pub verdict: Verdict,
}

fn phys_text(c: &Chunk) -> String {
    match &c.phys {
        None => "-".into(),
        Some(r) if r.is_empty() => "none present".into(),
        Some(r) => {
            let first = r.first().expect("not empty");
            let last = r.last().expect("not empty");
            format!("{:#x}-{:#x} ({} range(s))", first.start, last.end - 1, r.len())
        }
    }
}

/// The flag column: `SLOW` (stayed slow against the reference chunk),
/// `cleared` (slow on the first pass only), `unconfirmed` (its
/// re-measurement stopped or disturbed), and `(disturbed)` for an
/// unstable figure.
fn flag(d: &Doc, c: &Chunk) -> String {
    let v = &d.verdict;
    let mut f = Vec::new();
    if v.slow.contains(&c.index) {
        f.push("SLOW".to_string());
    } else if v.cleared.contains(&c.index) {
        f.push("cleared".to_string());
    } else if v.unconfirmed.contains(&c.index) {
        f.push("unconfirmed".to_string());
    }
    if let Some(r) = &c.recheck {
        f.push(format!("{:.1}% of chunk {}", r.ratio * 100.0, r.reference));
    }
    if !c.stable {
        f.push("(disturbed)".into());
    }
    f.join(" ")
}

fn list(v: &[usize]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
    }
}

/// A refused sizing in the words of `scan`'s flags (`--size`, `--chunk`).
pub fn refusal(e: &scan::SizingError) -> String {
    let size = topo::units::binary_size;
    match e {
        scan::SizingError::TotalOverSpare { total, mem } => {
            format!("--size {}: {}; nothing was allocated", size(*total), scan::can_spare(mem))
        }
        scan::SizingError::ChunkOverTotal { chunk, total, total_from, mem } => {
            let what = match *total_from {
                "default" => format!(
                    "the default total of {} (half of what the node can spare, at most {}; {})",
                    size(*total),
                    size(scan::DEFAULT_MAX_TOTAL),
                    scan::can_spare(mem)
                ),
                "all" => scan::can_spare(mem),
                _ => format!("--size {}", size(*total)),
            };
            format!(
                "--chunk {} is larger than {what}: give a smaller --chunk or a larger --size; \
                 nothing was allocated",
                size(*chunk)
            )
        }
        scan::SizingError::ChunkUnderPages { chunk, threads, page } => format!(
            "--chunk {}: each of the {threads} reading thread(s) needs at least one page of {}",
            size(*chunk),
            size(*page)
        ),
    }
}

/// The chunks' table and what was found.
pub fn render(d: &Doc, style: TableStyle) -> String {
    let human = topo::units::binary_size;
    let mut s = format!(
        "Read bandwidth of node {} by chunk of {}, CPUs {} (GB/s = 1e9 B/s)\n{} in {} chunk(s) of \
         the {} the node could spare ({})\n\n",
        d.mem_node,
        human(d.chunk_bytes),
        d.cpus,
        human(d.total_bytes),
        d.chunks_planned,
        human(d.spare_bytes),
        match d.total_from {
            "default" => format!(
                "default: half of it, at most {}; --size all scans everything",
                human(scan::DEFAULT_MAX_TOTAL)
            ),
            "all" => "--size all".to_string(),
            _ => "--size".to_string(),
        }
    );
    let mut t = Table::new(
        ["chunk", "GB/s", "spread", "on node", "physical addresses", "flag"]
            .map(String::from)
            .to_vec(),
        style,
    );
    for c in d.chunks {
        t.add_row(vec![
            c.index.to_string(),
            format!("{:.2}", c.best_gbs),
            format!("{:.1}%", c.spread_pct),
            format!("{:.0}%", c.on_node * 100.0),
            phys_text(c),
            flag(d, c),
        ]);
    }
    s.push_str(&format!("{t}\n"));
    let v = &d.verdict;
    s.push_str(&format!(
        "\n{} of {} planned chunk(s) measured; median {:.2} GB/s; below the median by more than \
         {:.1}% (the chunks' median spread, at least {:.0}%), then re-measured {} times \
         alternating with the chunk nearest the median: slow (slower in every round): {}; \
         cleared (as fast when re-measured): {}\n",
        d.chunks.len(),
        d.chunks_planned,
        v.median_gbs,
        v.margin_pct,
        scan::MIN_MARGIN_PCT,
        scan::RECHECK_ROUNDS,
        list(&v.slow),
        list(&v.cleared),
    ));
    if !v.unconfirmed.is_empty() {
        s.push_str(&format!(
            "Below the median but not decided (re-measurement stopped or disturbed): {}\n",
            list(&v.unconfirmed)
        ));
    }
    if !v.unstable.is_empty() {
        s.push_str(&format!(
            "Disturbed (the reading threads waited to run; figures marked): {}\n",
            list(&v.unstable)
        ));
    }
    if !d.physical {
        s.push_str("Physical addresses need root (/proc/self/pagemap hides frame numbers).\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refused sizing, whole, as scan said it before the sizing's
    /// errors were typed.
    #[test]
    fn refusals_are_worded_with_scans_flags() {
        let mem = place::NodeMemory {
            node: 1,
            total_bytes: 32 << 30,
            free_bytes: 20 << 30,
            reclaimable_bytes: 1 << 30,
            available_bytes: 21 << 30,
            reserve_bytes: 1 << 30,
            spare_bytes: 20 << 30,
        };
        let spare = "node 1 can spare 20 GiB (21 GiB available, 1 GiB kept free)";
        let over = |total_from| scan::SizingError::ChunkOverTotal {
            chunk: 32 << 30,
            total: 8 << 30,
            total_from,
            mem,
        };
        let tail = "give a smaller --chunk or a larger --size; nothing was allocated";
        let cases = [
            (
                scan::SizingError::TotalOverSpare { total: 1 << 40, mem },
                format!("--size 1 TiB: {spare}; nothing was allocated"),
            ),
            (
                over("default"),
                format!(
                    "--chunk 32 GiB is larger than the default total of 8 GiB (half of what \
                     the node can spare, at most 8 GiB; {spare}): {tail}"
                ),
            ),
            (over("all"), format!("--chunk 32 GiB is larger than {spare}: {tail}")),
            (over("size"), format!("--chunk 32 GiB is larger than --size 8 GiB: {tail}")),
            (
                scan::SizingError::ChunkUnderPages { chunk: 1024, threads: 2, page: 4096 },
                "--chunk 1 KiB: each of the 2 reading thread(s) needs at least one page of 4 KiB"
                    .to_string(),
            ),
        ];
        for (e, want) in cases {
            assert_eq!(refusal(&e), want);
            assert!(!e.to_string().contains("--"), "the library's own words name no flag: {e}");
        }
    }
}
