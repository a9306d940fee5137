//! `numaprobe gpu`'s document and text: the node x GPU matrix per
//! direction, where a data loader should keep its pinned memory, the
//! all-GPUs-at-once step and the DMA-contention rows.

use analysis::gpu::{Cell, Change, Contention, Feed, Together};
use gpu::protocol::{Direction, Probe};
use results::gpu::GpuCopy;
use serde::Serialize;

use super::{Table, TableStyle};

/// `numaprobe gpu`'s document (`--json`, after its `schema_version`) and
/// what its text is made from.
#[derive(Serialize)]
pub struct Doc<'a> {
    pub unit: &'static str,
    pub probe: Option<&'a Probe>,
    /// GPU ordinal -> the node sysfs puts its PCI device on (absent: unknown).
    pub gpu_nodes: &'a [GpuNode],
    /// Every point measured, as stored.
    pub points: &'a [GpuCopy],
    /// The largest size of each direction: the matrix.
    pub matrix: Vec<Cell>,
    pub feeds: Vec<FeedDoc>,
    /// The all-GPUs-at-once step, per node and direction (absent with one GPU).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<Together>,
    /// `--contention`: latency idle and while the GPUs copy.
    #[serde(skip_serializing_if = "<[Contention]>::is_empty")]
    pub contention: &'a [Contention],
    pub warnings: &'a [String],
    /// Why the measurement stopped early (absent when it finished).
    pub stopped: Option<&'a str>,
}

#[derive(Serialize)]
pub struct GpuNode {
    pub gpu: u32,
    pub pci_address: String,
    pub node: Option<u32>,
}

/// One feed and the `numactl` line of its advice
/// ([`report::gpu::advice`]).
#[derive(Serialize)]
pub struct FeedDoc {
    #[serde(flatten)]
    pub feed: Feed,
    pub command: Option<String>,
}

impl FeedDoc {
    /// `feed` with its advice worded; `memory_only` says whether a node
    /// has no CPUs.
    pub fn of(feed: Feed, memory_only: impl Fn(u32) -> bool) -> FeedDoc {
        let advice = feed.best_node.and_then(|n| feed.advice(memory_only(n)));
        FeedDoc { command: advice.as_ref().map(report::gpu::advice), feed }
    }
}

/// What the copies did to a CPU's latency, in words.
pub fn change(c: &Change) -> String {
    let spread = "beyond the spread of the idle chases before and after";
    match c {
        Change::Slower { pct } => format!("{pct:.0}% slower while the GPUs copy, {spread}"),
        Change::Faster { pct } => {
            format!("{pct:.0}% faster while the GPUs copy, {spread} (check the machine's load)")
        }
        Change::Within => format!("no change {spread}"),
    }
}

/// The text of a run (or of `--probe`).
pub fn render(d: &Doc<'_>, style: TableStyle) -> String {
    let mut out = text(style, d.probe, d.gpu_nodes, &d.matrix, &d.feeds, &d.together, d.points);
    out.push_str(&contention_text(d.contention, style));
    out
}

fn text(
    style: TableStyle,
    probe: Option<&Probe>,
    gpu_nodes: &[GpuNode],
    cells: &[Cell],
    feeds: &[FeedDoc],
    together: &[Together],
    points: &[GpuCopy],
) -> String {
    let mut out = String::new();
    if let Some(p) = probe {
        out.push_str(&format!(
            "Driver: {} API {}.{} ({})\n",
            p.runtime,
            p.driver_version / 1000,
            p.driver_version % 1000 / 10,
            p.library
        ));
    }
    for gn in gpu_nodes {
        let name = probe
            .and_then(|p| p.devices.iter().find(|d| d.ordinal == gn.gpu))
            .map(|d| d.name.as_str())
            .unwrap_or("?");
        let node = gn.node.map(|n| format!("node {n}")).unwrap_or_else(|| "node unknown".into());
        out.push_str(&format!(
            "GPU {}: {name}, PCI {} ({node} per sysfs)\n",
            gn.gpu, gn.pci_address
        ));
    }
    let gpus: Vec<u32> = gpu_nodes.iter().map(|x| x.gpu).collect();
    for dir in Direction::ALL {
        let row: Vec<&Cell> = cells.iter().filter(|c| c.direction == dir).collect();
        let Some(first) = row.first() else { continue };
        let reps = first.copies;
        out.push_str(&format!(
            "\n{} ({}), GB/s (10^9 bytes/s), {} copies, median of {reps} timed by device events:\n",
            dir.name(),
            dir.words(),
            topo::units::binary_size(first.size_bytes)
        ));
        let mut header = vec!["host node".to_string()];
        header.extend(gpus.iter().map(|x| format!("GPU {x}")));
        let mut table = Table::new(header, style);
        let mut nodes: Vec<u32> = row.iter().map(|c| c.node).collect();
        nodes.dedup();
        for n in nodes {
            let mut r = vec![format!("node {n}")];
            for &gp in &gpus {
                r.push(
                    row.iter()
                        .find(|c| c.node == n && c.gpu == gp)
                        .map(|c| format!("{:.1}", c.median_gbs))
                        .unwrap_or_else(|| "-".into()),
                );
            }
            table.add_row(r);
        }
        out.push_str(&format!("{table}\n"));
    }
    if !feeds.is_empty() {
        out.push_str("\nWhere a data loader feeding each GPU should keep its pinned memory (host to device):\n");
    }
    for f in feeds {
        let fd = &f.feed;
        match (&f.command, fd.others.is_empty()) {
            (Some(cmd), true) => out.push_str(&format!(
                "  GPU {}: node {} is the only node measured ({:.1} GB/s): {cmd}\n",
                fd.gpu, fd.top_node, fd.top_gbs
            )),
            (Some(cmd), false) => {
                let others: Vec<String> = fd
                    .others
                    .iter()
                    .map(|o| format!("node {} {:.1} GB/s ({:.0}% less)", o.node, o.median_gbs, o.penalty_pct))
                    .collect();
                out.push_str(&format!(
                    "  GPU {}: node {} ({:.1} GB/s) beats every other beyond the spread of the copies: {}; {cmd}\n",
                    fd.gpu,
                    fd.top_node,
                    fd.top_gbs,
                    others.join(", ")
                ));
            }
            (None, _) => out.push_str(&format!(
                "  GPU {}: undecided: no node feeds it faster beyond the spread of the copies (highest median: node {}, {:.1} GB/s)\n",
                fd.gpu, fd.top_node, fd.top_gbs
            )),
        }
    }
    out.push_str(&together_text(together, style));
    if points.is_empty() && probe.is_some() {
        out.push_str("\nNothing measured (--probe).\n");
    }
    out
}

/// The all-GPUs-at-once step: each GPU together against alone, the sum,
/// and what that says about a shared link.
fn together_text(steps: &[Together], style: TableStyle) -> String {
    let mut out = String::new();
    for st in steps {
        let gpus: Vec<String> = st.gpus.iter().map(u32::to_string).collect();
        out.push_str(&format!(
            "\nAll GPUs at once ({}) from node {}, {} ({}), GB/s (10^9 bytes/s), {} copies, medians:\n",
            gpus.join(","),
            st.node,
            st.direction.name(),
            st.direction.words(),
            topo::units::binary_size(st.size_bytes)
        ));
        let mut table =
            Table::with_header(&["GPU", "alone", "together", "change %", "beyond spread"], style);
        for m in &st.members {
            table.add_row(vec![
                format!("GPU {}", m.gpu),
                m.alone.as_ref().map_or("-".into(), |a| format!("{:.1}", a.median_gbs)),
                format!("{:.1}", m.together.median_gbs),
                m.drop_pct.map_or("-".into(), |d| format!("{:+.0}", -d)),
                if m.separated { "yes".into() } else { "no".into() },
            ]);
        }
        out.push_str(&format!("{table}\n"));
        out.push_str(&format!("  {}\n", report::gpu::sharing(st)));
    }
    out
}

fn contention_text(rows: &[Contention], style: TableStyle) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\nCPU memory latency while the GPUs copy (DMA contention), ns per load, median (min-max) of the chase's samples (idle: the chases before and after the copies), {} working set:\n",
        topo::units::binary_size(rows[0].chase_bytes)
    );
    let mut table = Table::with_header(
        &["node", "CPU", "GPUs copying", "idle ns", "during ns", "change %", "GPU GB/s meanwhile"],
        style,
    );
    for c in rows {
        let gpus: Vec<String> = c.gpus.iter().map(u32::to_string).collect();
        let rates: Vec<String> = c.gpu_gbs.iter().map(|(g, r)| format!("GPU {g} {r:.1}")).collect();
        table.add_row(vec![
            c.node.to_string(),
            c.cpu.to_string(),
            format!("{} {}", gpus.join(","), c.direction.name()),
            format!("{:.1} ({:.1}-{:.1})", c.idle_ns[0], c.idle_ns[1], c.idle_ns[2]),
            format!("{:.1} ({:.1}-{:.1})", c.during_ns[0], c.during_ns[1], c.during_ns[2]),
            format!("{:+.1}", c.change_pct),
            rates.join(", "),
        ]);
    }
    out.push_str(&format!("{table}\n"));
    for c in rows {
        let change = change(&c.change());
        out.push_str(&format!("  node {} {}: {change}\n", c.node, c.direction.name()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(node: u32, gpu: u32, dir: Direction, gbs: &[f64], together: &[u32]) -> GpuCopy {
        GpuCopy {
            gpu,
            device: "d".into(),
            pci_address: "0000:01:00.0".into(),
            mem_node: node,
            direction: dir,
            size_bytes: 1 << 30,
            gbs: gbs.to_vec(),
            median_gbs: f64::NAN,
            timer: "device events".into(),
            on_node: 1.0,
            together: together.to_vec(),
        }
    }

    fn contention(change_pct: f64, beyond_spread: bool) -> Contention {
        Contention {
            node: 0,
            cpu: 2,
            direction: Direction::H2d,
            gpus: vec![0, 1],
            chase_bytes: 1 << 28,
            idle_ns: [100.0, 95.0, 105.0],
            during_ns: [100.0 * (1.0 + change_pct / 100.0), 90.0, 130.0],
            idle_before_after_ns: [99.0, 101.0],
            change_pct,
            beyond_spread,
            gpu_gbs: vec![(0, 20.0), (1, 19.5)],
        }
    }

    /// Each change is worded without a flag, and each feed's advice is
    /// the `numactl` line its `--json` document carries.
    #[test]
    fn every_change_and_advice_is_worded() {
        assert_eq!(contention(12.4, true).change(), Change::Slower { pct: 12.4 });
        assert_eq!(contention(-8.6, true).change(), Change::Faster { pct: 8.6 });
        assert_eq!(contention(-8.6, false).change(), Change::Within);
        for c in [Change::Slower { pct: 5.0 }, Change::Faster { pct: 5.0 }, Change::Within] {
            assert!(!change(&c).contains("--"), "{c:?}");
        }
        let points = [
            p(0, 0, Direction::H2d, &[24.0, 25.0, 24.5], &[]),
            p(1, 0, Direction::H2d, &[12.0, 12.5, 12.2], &[]),
            p(0, 1, Direction::H2d, &[20.0, 24.0, 21.0], &[]),
            p(1, 1, Direction::H2d, &[22.0, 23.0, 22.5], &[]),
        ];
        let json = |memory_only: bool| -> Vec<String> {
            analysis::gpu::feeds(&points)
                .into_iter()
                .map(|f| FeedDoc::of(f, |_| memory_only))
                .map(|d| serde_json::to_value(&d).unwrap()["command"].to_string())
                .collect()
        };
        let both = r#""numactl --cpunodebind=0 --membind=0 <data loader>""#;
        assert_eq!(json(false), [both, "null"]);
        assert_eq!(json(true), [r#""numactl --membind=0 <data loader>""#, "null"]);
    }

    /// The text's steps and notes whole: each sharing call (with and
    /// without the GPUs alone), each latency-under-copy call.
    #[test]
    fn the_sharing_and_contention_notes_are_worded_whole() {
        use Direction::{D2h, H2d};
        let both = [0, 1];
        let points = vec![
            p(0, 0, H2d, &[10.0, 10.5, 11.0], &[]),
            p(0, 1, H2d, &[24.0, 25.0, 24.5], &[]),
            p(4, 0, H2d, &[20.0, 21.0, 22.0], &[]),
            p(4, 1, H2d, &[12.0, 12.5, 12.2], &[]),
            p(0, 0, H2d, &[5.0, 5.1, 5.2], &both),
            p(0, 1, H2d, &[12.0, 12.1, 12.2], &both),
            p(4, 0, H2d, &[20.5, 21.0, 21.5], &both),
            p(4, 1, H2d, &[12.3, 12.4, 12.2], &both),
            p(0, 0, D2h, &[5.0], &both),
            p(0, 1, D2h, &[6.0], &both),
        ];
        let rows = [contention(12.4, true), contention(-8.6, true), contention(3.0, false)];
        let doc = Doc {
            unit: "GB/s (10^9 bytes/s)",
            probe: None,
            gpu_nodes: &[],
            points: &points,
            matrix: vec![],
            feeds: vec![],
            together: analysis::gpu::together(&points),
            contention: &rows,
            warnings: &[],
            stopped: None,
        };
        let text = render(&doc, TableStyle::Tsv);
        let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("  ")).collect();
        assert_eq!(
            notes,
            [
                "  together 17.2 GB/s in all, against 35.0 alone added up: shared bottleneck: every GPU lost more than 10% beyond the spread of its copies (a PCIe switch or the socket's link that the GPUs share)",
                "  together 11.0 GB/s in all: undecided: the GPUs did not all fall beyond the spread of their copies, or one was not measured alone at this size",
                "  together 33.3 GB/s in all, against 33.2 alone added up: no shared bottleneck: no GPU lost more than 10%",
                "  node 0 h2d: 12% slower while the GPUs copy, beyond the spread of the idle chases before and after",
                "  node 0 h2d: 9% faster while the GPUs copy, beyond the spread of the idle chases before and after (check the machine's load)",
                "  node 0 h2d: no change beyond the spread of the idle chases before and after",
            ]
        );
        let head = |node: u32, dir: &str| {
            format!(
                "\nAll GPUs at once (0,1) from node {node}, {dir}, GB/s (10^9 bytes/s), 1 GiB \
                 copies, medians:\nGPU\talone\ttogether\tchange %\tbeyond spread\n"
            )
        };
        let row = |during: &str, change: &str| {
            format!(
                "0\t2\t0,1 h2d\t100.0 (95.0-105.0)\t{during} (90.0-130.0)\t{change}\tGPU 0 20.0, \
                 GPU 1 19.5\n"
            )
        };
        let want = [
            head(0, "h2d (host to device)"),
            "GPU 0\t10.5\t5.1\t-51\tyes\nGPU 1\t24.5\t12.1\t-51\tyes\n".into(),
            format!("{}\n", notes[0]),
            head(0, "d2h (device to host)"),
            "GPU 0\t-\t5.0\t-\tno\nGPU 1\t-\t6.0\t-\tno\n".into(),
            format!("{}\n", notes[1]),
            head(4, "h2d (host to device)"),
            "GPU 0\t21.0\t21.0\t-0\tno\nGPU 1\t12.2\t12.3\t+1\tno\n".into(),
            format!("{}\n", notes[2]),
            "\nCPU memory latency while the GPUs copy (DMA contention), ns per load, median \
             (min-max) of the chase's samples (idle: the chases before and after the copies), 256 \
             MiB working set:\nnode\tCPU\tGPUs copying\tidle ns\tduring ns\tchange %\tGPU GB/s \
             meanwhile\n"
                .into(),
            row("112.4", "+12.4"),
            row("91.4", "-8.6"),
            row("103.0", "+3.0"),
            notes[3..].iter().map(|n| format!("{n}\n")).collect(),
        ]
        .concat();
        assert_eq!(text, want);
    }
}
