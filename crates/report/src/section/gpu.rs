//! `numaprobe gpu` in reports: the node x GPU copy bandwidth as heat maps
//! (one per direction, the largest size measured), and where a data
//! loader feeding each GPU should keep its pinned memory.

use analysis::data::RunData;
use analysis::gpu::{feeds, headline, together, Cell};
use results::gpu::Direction;

use crate::chart::{Chart, Heatmap};
use crate::doc::{Document, Table};

/// The heat map of one direction's cells (rows: host nodes, columns: GPUs).
fn heatmap(dir: Direction, cells: &[&Cell]) -> Option<Heatmap> {
    let first = cells.first()?;
    let mut nodes: Vec<u32> = cells.iter().map(|c| c.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut gpus: Vec<u32> = cells.iter().map(|c| c.gpu).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let values = nodes
        .iter()
        .map(|&n| {
            gpus.iter()
                .map(|&g| cells.iter().find(|c| c.node == n && c.gpu == g).map(|c| c.median_gbs))
                .collect()
        })
        .collect();
    Some(Heatmap {
        title: format!(
            "GPU copies {} ({}), {} copies, median GB/s",
            dir.name(),
            dir.words(),
            topo::units::binary_size(first.size_bytes)
        ),
        x_label: "GPU".into(),
        y_label: "host node".into(),
        unit: "GB/s".into(),
        cols: gpus.iter().map(|g| format!("GPU {g}")).collect(),
        rows: nodes.iter().map(|n| format!("node {n}")).collect(),
        values,
    })
}

pub fn section(doc: &mut Document, d: &RunData, run: &store::LoadedRun) {
    if d.gpu.is_empty() {
        return;
    }
    doc.h(2, "GPU copy bandwidth by host node");
    doc.p("Copies between pinned host memory placed on each node (bound, first-touched and \
         checked with move_pages before pinning) and each GPU, timed by device events; \
         GB/s = 10^9 bytes/s, the median of the timed copies at the largest size measured.");
    let cells = headline(&d.gpu);
    for dir in Direction::ALL {
        let of_dir: Vec<&Cell> = cells.iter().filter(|c| c.direction == dir).collect();
        if let Some(h) = heatmap(dir, &of_dir) {
            doc.chart(Chart::Heatmap(h));
        }
    }
    let mut t =
        Table::with_header(&["GPU", "fastest node (h2d)", "GB/s", "other nodes", "data loader"]);
    for f in feeds(&d.gpu) {
        let others = f
            .others
            .iter()
            .map(|o| {
                format!(
                    "node {} {:.1} ({:.0}% less{})",
                    o.node,
                    o.median_gbs,
                    o.penalty_pct,
                    if o.separated { "" } else { ", within the spread" }
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let best = match f.best_node {
            Some(n) => format!("node {n}"),
            None => format!("undecided (highest median: node {})", f.top_node),
        };
        // A memory-only node has no CPUs to bind the loader's threads to.
        let memory_only = f.best_node.is_some_and(|n| {
            run.topology
                .get()
                .and_then(|t| t.nodes.iter().find(|x| x.id == n))
                .is_some_and(|x| x.cpus.is_empty())
        });
        let loader = f.command(memory_only).unwrap_or_else(|| "-".into());
        t.push(vec![
            f.gpu.to_string(),
            best,
            format!("{:.1}", f.top_gbs),
            if others.is_empty() { "none measured".into() } else { others },
            loader,
        ]);
    }
    doc.table(t.caption(
        "A node is named fastest only when every one of its copies beat every copy from each \
         other node.",
    ));
    for st in together(&d.gpu) {
        let gpus: Vec<String> = st.gpus.iter().map(u32::to_string).collect();
        doc.h(
            3,
            format!(
                "All GPUs at once ({}) from node {}, {} ({}), {} copies",
                gpus.join(","),
                st.node,
                st.direction.name(),
                st.direction.words(),
                topo::units::binary_size(st.size_bytes)
            ),
        );
        let mut t = Table::with_header(&[
            "GPU",
            "alone GB/s",
            "together GB/s",
            "change %",
            "beyond spread",
        ]);
        for m in &st.members {
            t.push(vec![
                m.gpu.to_string(),
                m.alone.as_ref().map_or("-".into(), |a| format!("{:.1}", a.median_gbs)),
                format!("{:.1}", m.together.median_gbs),
                m.drop_pct.map_or("-".into(), |x| format!("{:+.0}", -x)),
                if m.separated { "yes".into() } else { "no".into() },
            ]);
        }
        doc.table(t.caption(st.verdict()));
    }
}
