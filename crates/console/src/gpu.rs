//! `numaprobe gpu`'s document and text: the node x GPU matrix per
//! direction, where a data loader should keep its pinned memory, the
//! all-GPUs-at-once step and the DMA-contention rows.

use analysis::gpu::{Cell, Contention, Feed, Together};
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

#[derive(Serialize)]
pub struct FeedDoc {
    #[serde(flatten)]
    pub feed: Feed,
    pub command: Option<String>,
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
        out.push_str(&format!("  {}\n", st.verdict()));
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
        out.push_str(&format!("  node {} {}: {}\n", c.node, c.direction.name(), c.verdict()));
    }
    out
}
