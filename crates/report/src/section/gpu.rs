//! `numaprobe gpu` in reports: the node x GPU copy bandwidth as heat maps
//! (one per direction, the largest size measured), and where a data
//! loader feeding each GPU should keep its pinned memory.

use analysis::data::RunData;
use analysis::gpu::{
    feeds, headline, together, Advice, Cell, Sharing, Together, SHARING_FLOOR_PCT,
};
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

/// The `numactl` line that places a data loader as `a` says (numactl's
/// own options: the fix itself, as an audit finding's may name them).
pub fn advice(a: &Advice) -> String {
    match *a {
        Advice::MemOnly { node } => format!("numactl --membind={node} <data loader>"),
        Advice::Both { node } => {
            format!("numactl --cpunodebind={node} --membind={node} <data loader>")
        }
    }
}

/// The all-GPUs-at-once step in one line, without a full stop: the sum
/// together against alone, and the call on a shared bottleneck (the
/// report's caption and `gpu`'s text).
pub fn sharing(st: &Together) -> String {
    let sum = match st.alone_sum_gbs {
        Some(a) => {
            format!("together {:.1} GB/s in all, against {a:.1} alone added up", st.aggregate_gbs)
        }
        None => format!("together {:.1} GB/s in all", st.aggregate_gbs),
    };
    let floor = SHARING_FLOOR_PCT;
    let call = match st.sharing {
        Sharing::Bottleneck => format!(
            "shared bottleneck: every GPU lost more than {floor:.0}% beyond the spread of its \
             copies (a PCIe switch or the socket's link that the GPUs share)"
        ),
        Sharing::NoBottleneck => {
            format!("no shared bottleneck: no GPU lost more than {floor:.0}%")
        }
        Sharing::Undecided => "undecided: the GPUs did not all fall beyond the spread of their \
                               copies, or one was not measured alone at this size"
            .into(),
    };
    format!("{sum}: {call}")
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
        let loader = f.advice(memory_only).map_or_else(|| "-".into(), |a| advice(&a));
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
        doc.table(t.caption(sharing(&st)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::gpu::GpuCopy;
    use store::{ExportDoc, LoadedRun};

    const FIXTURE: &str = include_str!("../../tests/fixtures/synthetic-export.json");

    /// The fixture's first run on the snc2-cxl test tree (node 4 has no
    /// CPUs).
    fn run() -> LoadedRun {
        let doc = ExportDoc::from_json(FIXTURE, "fixture").unwrap();
        let r = doc.runs[0].clone();
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../topo/tests/data/snc2-cxl");
        let t = topo::Topology::discover(&topo::SysRoot::new(dir).unwrap()).unwrap();
        assert!(t.nodes.iter().find(|n| n.id == 4).unwrap().cpus.is_empty());
        LoadedRun {
            summary: store::RunSummary {
                id: store::RunId(1),
                uuid: r.uuid.clone(),
                label: None,
                started: r.started.clone(),
                finished: r.finished.clone(),
                status: r.status,
                complete: true,
                message: None,
                machine: r.machine.description.clone(),
                machine_fingerprint: r.machine.fingerprint.clone(),
                config_hash: r.config_hash.clone(),
                tool_version: r.tool_version.clone(),
                command_line: r.command_line.clone(),
                result_count: 0,
                imported: true,
            },
            machine_info: r.machine.info.clone(),
            config: r.config.clone(),
            topology: results::context::RunTopology::of(&t),
            results: vec![],
        }
    }

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

    /// The section whole: a feed from a memory-only node, one from a node
    /// with CPUs, an undecided one; a shared bottleneck, none, and an
    /// undecided step without the GPUs alone.
    #[test]
    fn the_section_words_each_feed_and_each_sharing_call_whole() {
        use Direction::{D2h, H2d};
        let both = [0, 1];
        let d = RunData {
            gpu: vec![
                p(0, 0, H2d, &[10.0, 10.5, 11.0], &[]),
                p(4, 0, H2d, &[20.0, 21.0, 22.0], &[]),
                p(0, 1, H2d, &[24.0, 25.0, 24.5], &[]),
                p(4, 1, H2d, &[12.0, 12.5, 12.2], &[]),
                p(0, 2, H2d, &[20.0, 24.0, 21.0], &[]),
                p(4, 2, H2d, &[22.0, 23.0, 22.5], &[]),
                p(0, 0, H2d, &[5.0, 5.1, 5.2], &both),
                p(0, 1, H2d, &[12.0, 12.1, 12.2], &both),
                p(4, 0, H2d, &[20.5, 21.0, 21.5], &both),
                p(4, 1, H2d, &[12.3, 12.4, 12.2], &both),
                p(0, 0, D2h, &[5.0], &both),
                p(0, 1, D2h, &[6.0], &both),
            ],
            ..RunData::default()
        };
        let mut doc = Document::new("t");
        section(&mut doc, &d, &run());
        let md = String::from_utf8(crate::Renderer::render(&crate::Markdown, &doc)).unwrap();
        let rows = "| 0 | node 4 | 21.0 | node 0 10.5 (50% less) | numactl --membind=4 &lt;data loader> |\n\
                    | 1 | node 0 | 24.5 | node 4 12.2 (50% less) | numactl --cpunodebind=0 --membind=0 &lt;data loader> |\n\
                    | 2 | undecided (highest median: node 4) | 22.5 | node 0 21.0 (7% less, within the spread) | - |\n";
        let want = format!(
            "# t\n\n## GPU copy bandwidth by host node\n\nCopies between pinned host memory placed on each node (bound, first-touched and checked with move_pages before pinning) and each GPU, timed by device events; GB/s = 10^9 bytes/s, the median of the timed copies at the largest size measured.\n\n\
             *A node is named fastest only when every one of its copies beat every copy from each other node.*\n\n\
             | GPU | fastest node (h2d) | GB/s | other nodes | data loader |\n|---|---|---:|---|---|\n{rows}\n\
             ### All GPUs at once (0,1) from node 0, h2d (host to device), 1 GiB copies\n\n\
             *together 17.2 GB/s in all, against 35.0 alone added up: shared bottleneck: every GPU lost more than 10% beyond the spread of its copies (a PCIe switch or the socket's link that the GPUs share)*\n\n\
             | GPU | alone GB/s | together GB/s | change % | beyond spread |\n|---|---:|---:|---:|---|\n| 0 | 10.5 | 5.1 | -51 | yes |\n| 1 | 24.5 | 12.1 | -51 | yes |\n\n\
             ### All GPUs at once (0,1) from node 0, d2h (device to host), 1 GiB copies\n\n\
             *together 11.0 GB/s in all: undecided: the GPUs did not all fall beyond the spread of their copies, or one was not measured alone at this size*\n\n\
             | GPU | alone GB/s | together GB/s | change % | beyond spread |\n|---|---:|---:|---:|---|\n| 0 | - | 5.0 | - | no |\n| 1 | - | 6.0 | - | no |\n\n\
             ### All GPUs at once (0,1) from node 4, h2d (host to device), 1 GiB copies\n\n\
             *together 33.3 GB/s in all, against 33.2 alone added up: no shared bottleneck: no GPU lost more than 10%*\n\n\
             | GPU | alone GB/s | together GB/s | change % | beyond spread |\n|---|---:|---:|---:|---|\n| 0 | 21.0 | 21.0 | -0 | no |\n| 1 | 12.2 | 12.3 | +1 | no |\n"
        );
        assert_eq!(md, want);
    }
}
