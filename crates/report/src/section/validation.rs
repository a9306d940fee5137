//! Sections of seed 002's validation template that the placements section
//! does not give: the `numactl` command equivalent to each `exec` policy
//! (so a reader can reproduce one placement without numaprobe), and the
//! numastat counters per policy (in `--json` only before).

use results::exec::PolicyResult;

use crate::doc::{Document, Table};
use analysis::data::RunData;

/// The program as the run's command line gave it (after ` -- `), or
/// `PROGRAM`.
fn program(command_line: &str) -> String {
    command_line
        .split_once(" -- ")
        .map(|(_, p)| crate::safe::one_line(p.trim()).into_owned())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "PROGRAM".into())
}

/// The `numactl` command line that places a program as `p` did:
/// `--physcpubind` for its CPUs, then its memory policy (`--membind`,
/// `--interleave`, `--weighted-interleave` (numactl 2.0.19+),
/// `--preferred`, `--localalloc`); a policy that changed nothing is the
/// program alone.
pub(crate) fn numactl(p: &PolicyResult, program: &str) -> String {
    let mut args = Vec::new();
    if let Some(c) = &p.cpus {
        args.push(format!("--physcpubind={c}"));
    }
    let nodes = p.mem_nodes.as_ref().map(|n| n.to_string());
    match (p.mem_policy.as_deref(), nodes) {
        (Some("bind"), Some(n)) => args.push(format!("--membind={n}")),
        (Some("interleave"), Some(n)) => args.push(format!("--interleave={n}")),
        (Some("weighted-interleave"), Some(n)) => args.push(format!("--weighted-interleave={n}")),
        (Some("preferred"), Some(n)) => args.push(format!("--preferred={n}")),
        (Some("local"), _) => args.push("--localalloc".into()),
        (Some(other), n) => args.push(format!(
            "(memory policy {other}{})",
            n.map_or(String::new(), |n| format!(" on {n}"))
        )),
        (None, _) => {}
    }
    if args.is_empty() {
        return program.to_string();
    }
    format!("numactl {} -- {program}", args.join(" "))
}

pub(crate) fn section(doc: &mut Document, d: &RunData, command_line: &str) {
    if d.exec.is_empty() {
        return;
    }
    let prog = program(command_line);
    // Runs stored before the placement was recorded as CPUs and a memory
    // policy give no command: left out rather than shown as the program
    // alone.
    let recorded = |p: &PolicyResult| p.cpus.is_some() || p.mem_policy.is_some();
    if d.exec.iter().any(recorded) {
        doc.h(3, "numactl equivalents");
        doc.p("Each policy as a numactl command line, to reproduce one placement without numaprobe (numaprobe verified where the pages went; numactl does not).");
        let mut t = Table::with_header(&["Policy", "Placement", "numactl"]);
        for p in &d.exec {
            let cmd = if recorded(p) || p.policy == "default" {
                format!("`{}`", numactl(p, &prog))
            } else {
                "- (not recorded)".into()
            };
            t.push(vec![p.policy.clone(), p.placement.clone(), cmd]);
        }
        doc.table(t);
    }

    let mut t = Table::with_header(&[
        "Policy",
        "Node",
        "numa_hit",
        "numa_miss",
        "numa_foreign",
        "interleave_hit",
        "local_node",
        "other_node",
    ]);
    for p in &d.exec {
        // the last successful run with a reading
        let Some(run) = p.runs.iter().rev().find(|r| r.ok && !r.numastat_delta.is_empty()) else {
            continue;
        };
        for n in &run.numastat_delta {
            let s = &n.stat;
            t.push(vec![
                format!("{} (run {})", p.policy, run.rep),
                n.node.to_string(),
                s.numa_hit.to_string(),
                s.numa_miss.to_string(),
                s.numa_foreign.to_string(),
                s.interleave_hit.to_string(),
                s.local_node.to_string(),
                s.other_node.to_string(),
            ]);
        }
    }
    if !t.is_empty() {
        doc.h(3, "numastat per policy");
        doc.p("The change of each node's /sys/devices/system/node/nodeN/numastat counters (pages) over one run of the program, per policy: what `numastat` shows before and after, machine-wide (other processes' allocations count too).");
        doc.table(t);
    }
}

/// Where a placement ran: CPUs of one node on one node's memory, or all
/// CPUs with the memory interleaved over the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Nodes(u32, u32),
    Interleave,
}

impl Place {
    fn text(self) -> String {
        match self {
            Place::Nodes(c, m) if c == m => format!("CPU node {c}, memory node {m} (local)"),
            Place::Nodes(c, m) => format!("CPU node {c}, memory node {m} (remote)"),
            Place::Interleave => "memory interleaved over the nodes".into(),
        }
    }
}

/// The placement an `exec` policy ran under, where it is one of [`Place`]:
/// its CPUs all on one node (by the topology) and its memory bound to one
/// node, or its memory interleaved over several.
fn exec_place(p: &PolicyResult, topo: Option<&topo::Topology>) -> Option<Place> {
    let nodes = p.mem_nodes.as_ref()?;
    match p.mem_policy.as_deref()? {
        "interleave" | "weighted-interleave" if nodes.len() > 1 => Some(Place::Interleave),
        "bind" | "preferred" if nodes.len() == 1 => {
            let mem = nodes.iter().next()?;
            let cpus = p.cpus.as_ref()?;
            let node = topo?.cpu_nodes().find(|n| cpus.iter().all(|c| n.cpus.contains(c)))?;
            Some(Place::Nodes(node.id, mem))
        }
        _ => None,
    }
}

/// One table of each placement's bandwidth, latency and the program's
/// metric side by side (seed 002's per-scenario table): bandwidth from
/// `bw` (local, matrix, interleave; triad when measured), latency from the
/// chase points and matrix (the interleaved point on its own row), the program from `exec` policies whose CPUs
/// lie on one node and whose memory is bound to one node or interleaved.
/// Left out unless two of the three were measured.
pub(crate) fn placement_table(doc: &mut Document, d: &RunData, topo: Option<&topo::Topology>) {
    use results::bw::Mode as Bw;
    use std::collections::BTreeMap;
    #[derive(Default)]
    struct Row {
        bw: Option<(f64, String)>,
        lat: Vec<f64>,
        program: Vec<String>,
    }
    let mut rows: BTreeMap<Place, Row> = BTreeMap::new();
    let kernel = analysis::data::pick_kernel(&d.bw);
    for b in d.bw.iter().filter(|b| Some(b.kernel) == kernel && b.best_gbs.is_finite()) {
        let place = match (b.mode, b.cpu_node, b.mem_node) {
            (Bw::Local, Some(c), m) => Place::Nodes(c, m.unwrap_or(c)),
            (Bw::Matrix, Some(c), Some(m)) => Place::Nodes(c, m),
            (Bw::Interleave, _, _) => Place::Interleave,
            _ => continue,
        };
        let e = &mut rows.entry(place).or_default().bw;
        if e.as_ref().is_none_or(|(g, _)| b.best_gbs > *g) {
            let stores = match b.stores {
                results::bw::Stores::None => String::new(),
                s => format!(", {} stores", s.name()),
            };
            *e = Some((b.best_gbs, format!("{}{stores}", b.kernel.name())));
        }
    }
    for l in d.chases.iter().filter(|l| {
        matches!(l.mode, results::lat::Mode::Point | results::lat::Mode::Matrix)
            && l.median_ns.is_finite()
    }) {
        let place = match (l.cpu_node, l.mem_node, &l.interleave) {
            (_, _, Some(_)) => Place::Interleave,
            (Some(c), Some(m), None) => Place::Nodes(c, m),
            _ => continue,
        };
        rows.entry(place).or_default().lat.push(l.median_ns);
    }
    for p in &d.exec {
        let Some(place) = exec_place(p, topo) else { continue };
        let (v, unit) = match (p.stats.median_metric, p.stats.median_wall_s) {
            (Some(m), _) => (m, ""),
            (None, Some(w)) => (w, " s wall"),
            (None, None) => continue,
        };
        rows.entry(place).or_default().program.push(format!(
            "{}{unit} ({})",
            crate::fmt::plain(v),
            p.policy
        ));
    }
    let kinds = [
        rows.values().any(|r| r.bw.is_some()),
        rows.values().any(|r| !r.lat.is_empty()),
        rows.values().any(|r| !r.program.is_empty()),
    ];
    if kinds.iter().filter(|k| **k).count() < 2 {
        return;
    }
    doc.h(3, "Placements side by side");
    let mut t = Table::with_header(&["Placement", "Bandwidth GB/s", "Latency ns", "Program"]);
    for (place, r) in &rows {
        let lat = if r.lat.is_empty() {
            match place {
                Place::Interleave => {
                    "- (no interleaved chase stored: `run` measures one on 2+ nodes with memory and CPUs)"
                        .into()
                }
                _ => "-".into(),
            }
        } else {
            let mut v = r.lat.clone();
            v.sort_by(f64::total_cmp);
            crate::fmt::num(v[v.len() / 2], "ns")
        };
        t.push(vec![
            place.text(),
            r.bw.as_ref()
                .map_or("-".into(), |(g, how)| format!("{} ({how})", crate::fmt::num(*g, "GB/s"))),
            lat,
            if r.program.is_empty() { "-".into() } else { r.program.join("; ") },
        ]);
    }
    doc.table(t.caption("Each placement's best bandwidth (the kernel and store method said), median latency per load (the median over the chase points of that pair) and the program's median metric (else its median wall time) under the exec policy of that placement"));
}

/// The appendix's program output: for each `exec` policy, the end of its
/// last run's stdout and stderr as stored (`exec --keep-output`), with how
/// much the streams wrote in all; nothing for runs stored without output.
pub(crate) fn output_appendix(doc: &mut Document, d: &RunData) {
    let kept: Vec<(&PolicyResult, u32, &results::exec::KeptOutput)> = d
        .exec
        .iter()
        .filter_map(|p| {
            let r = p.runs.iter().rev().find(|r| r.output.is_some())?;
            Some((p, r.rep, r.output.as_ref()?))
        })
        .collect();
    if kept.is_empty() {
        return;
    }
    doc.h(3, "Program output");
    doc.p("The end of each policy's last run's output, as stored (`exec --keep-output`, KiB per stream); a stream that wrote more says how much was left out.");
    for (p, rep, o) in kept {
        for (name, tail, total) in
            [("stdout", &o.stdout_tail, o.stdout_bytes), ("stderr", &o.stderr_tail, o.stderr_bytes)]
        {
            if total == 0 && tail.is_empty() {
                continue;
            }
            let shown = tail.len() as u64;
            let cut = if total > shown {
                format!(
                    ", the last {} of {} ({} left out)",
                    topo::units::binary_size(shown),
                    topo::units::binary_size(total),
                    topo::units::binary_size(total - shown)
                )
            } else {
                format!(", all {}", topo::units::binary_size(total))
            };
            doc.p(format!("{} (run {rep}), {name}{cut}:", p.policy));
            doc.code(tail.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(v: serde_json::Value) -> PolicyResult {
        serde_json::from_value(v).unwrap()
    }

    fn base(
        policy_name: &str,
        cpus: Option<&str>,
        mem: Option<&str>,
        nodes: Option<&str>,
    ) -> serde_json::Value {
        serde_json::json!({"policy": policy_name, "placement": "p", "cpus": cpus,
            "mem_policy": mem, "mem_nodes": nodes, "runs": [], "ok_runs": 0,
            "verdict": "no-data"})
    }

    #[test]
    fn each_policy_has_its_numactl_command() {
        let p = |v| numactl(&policy(v), "./stream");
        assert_eq!(
            p(base("bind-1", Some("0-3"), Some("bind"), Some("1"))),
            "numactl --physcpubind=0-3 --membind=1 -- ./stream"
        );
        assert_eq!(
            p(base("interleave", None, Some("interleave"), Some("0-1"))),
            "numactl --interleave=0-1 -- ./stream"
        );
        assert_eq!(
            p(base("weighted", None, Some("weighted-interleave"), Some("0-1"))),
            "numactl --weighted-interleave=0-1 -- ./stream"
        );
        assert_eq!(p(base("default", None, None, None)), "./stream");
        assert_eq!(program("numaprobe exec --policies all -- ./stream -n 4"), "./stream -n 4");
        assert_eq!(program("numaprobe exec"), "PROGRAM");
    }

    /// The kept output of each policy's last run is shown with how much
    /// was left out; a run stored without output adds nothing.
    #[test]
    fn kept_output_is_shown_with_what_was_left_out() {
        let mut v = base("bind-0", Some("0-1"), Some("bind"), Some("0"));
        let run = |rep: u32, out: serde_json::Value| {
            serde_json::json!({"rep": rep, "wall_s": 1.0, "user_s": 0.0, "sys_s": 0.0,
                "max_rss_kib": 0, "exit_code": 0, "signal": null, "timed_out": false,
                "interrupted": false, "ok": true, "metric": null, "numa_pages": null,
                "numastat_delta": [], "output": out})
        };
        v["runs"] = serde_json::json!([
            run(
                1,
                serde_json::json!({"stdout_tail": "first run\n", "stdout_bytes": 10,
                "stderr_tail": "", "stderr_bytes": 0})
            ),
            run(
                2,
                serde_json::json!({"stdout_tail": "Triad: 12.5 GB/s\n", "stdout_bytes": 5u64 << 20,
                "stderr_tail": "warning: x\n", "stderr_bytes": 11})
            )
        ]);
        let d = RunData { exec: vec![policy(v)], ..RunData::default() };
        let mut doc = Document::default();
        output_appendix(&mut doc, &d);
        use crate::render::Renderer;
        let t = String::from_utf8(crate::render::Markdown.render(&doc)).unwrap();
        assert!(
            t.contains("bind-0 (run 2), stdout, the last 17 B of 5 MiB (5 MiB left out):"),
            "{t}"
        );
        assert!(t.contains("```text\nTriad: 12.5 GB/s\n```"), "{t}");
        assert!(t.contains("bind-0 (run 2), stderr, all 11 B:"), "{t}");
        assert!(!t.contains("first run"), "{t}");
        let none = RunData {
            exec: vec![policy(base("bind-0", None, Some("bind"), Some("0")))],
            ..RunData::default()
        };
        let mut doc = Document::default();
        output_appendix(&mut doc, &none);
        assert!(doc.blocks.is_empty());
    }

    /// Bandwidth, latency and the program's metric of one placement share a
    /// row; a kind not measured there is '-'; one kind alone adds nothing.
    #[test]
    fn placements_are_tabled_side_by_side() {
        use topo::synthetic::Machine;
        let topo = Machine::new(topo::Vendor::Intel, "Xeon")
            .package(0, "0-3")
            .node(0, "0-1", 8 << 30)
            .node(1, "2-3", 8 << 30)
            .build();
        let bw = |mode: &str, cpu: Option<u32>, mem: Option<u32>, gbs: f64| {
            let v = serde_json::json!({"mode": mode, "kernel": "triad", "threads": 2,
                "cpu_node": cpu, "mem_node": mem, "best_gbs": gbs, "median_gbs": gbs,
                "stores": "nt"});
            match results::upgrade::read("bw", &v).record {
                results::Record::Bw(b) => *b,
                other => panic!("{other:?}"),
            }
        };
        let lat = |cpu: u32, mem: u32, ns: f64| {
            let v = serde_json::json!({"mode": "matrix", "cpu": cpu * 2, "cpu_node": cpu,
                "mem_node": mem, "median_ns": ns});
            match results::upgrade::read("lat", &v).record {
                results::Record::Lat(l) => match *l {
                    results::lat::Lat::Chase(c) => c,
                    other => panic!("{other:?}"),
                },
                other => panic!("{other:?}"),
            }
        };
        let mut remote = base("bind-1", Some("0-1"), Some("bind"), Some("1"));
        remote["median_metric"] = serde_json::json!(8.25);
        let mut inter = base("interleave", None, Some("interleave"), Some("0-1"));
        inter["median_metric"] = serde_json::json!(11.5);
        let d = RunData {
            bw: vec![
                bw("local", Some(0), Some(0), 20.5),
                bw("matrix", Some(0), Some(1), 12.0),
                bw("interleave", None, None, 30.25),
            ],
            chases: vec![lat(0, 0, 90.0), lat(0, 1, 140.0)],
            exec: vec![policy(remote), policy(inter)],
            ..RunData::default()
        };
        let mut doc = Document::default();
        placement_table(&mut doc, &d, Some(&topo));
        use crate::render::Renderer;
        let t = String::from_utf8(crate::render::Markdown.render(&doc)).unwrap();
        assert!(
            t.contains(
                "| CPU node 0, memory node 0 (local) | 20.5 (triad, nt stores) | 90.0 | - |"
            ),
            "{t}"
        );
        assert!(t.contains("| CPU node 0, memory node 1 (remote) | 12.0 (triad, nt stores) | 140.0 | 8.25 (bind-1) |"), "{t}");
        assert!(t.contains("| memory interleaved over the nodes | 30.2 (triad, nt stores) | - (no interleaved chase stored: `run` measures one on 2+ nodes with memory and CPUs) | 11.5 (interleave) |"), "{t}");
        // bandwidth alone: no table
        let only = RunData { bw: d.bw.clone(), ..RunData::default() };
        let mut doc = Document::default();
        placement_table(&mut doc, &only, Some(&topo));
        assert!(doc.blocks.is_empty());

        // a stored interleaved chase (`run`'s lat interleave, as the store
        // reads it back) fills the interleaved row's latency, exactly, and
        // no node pair's
        let v = serde_json::json!({"mode": "point", "cpu": 0, "cpu_node": 0,
            "median_ns": 117.4, "interleave": "0-1"});
        let point = match results::upgrade::read("lat", &v).record {
            results::Record::Lat(l) => match *l {
                results::lat::Lat::Chase(c) => c,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert_eq!(point.interleave, Some(topo::NodeSet::from_iter([0, 1])));
        let mut with = RunData { chases: vec![lat(0, 0, 90.0), point], ..d };
        with.exec.clear();
        let mut doc = Document::default();
        placement_table(&mut doc, &with, Some(&topo));
        let t = String::from_utf8(crate::render::Markdown.render(&doc)).unwrap();
        assert!(
            t.contains(
                "| memory interleaved over the nodes | 30.2 (triad, nt stores) | 117.4 | - |"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "| CPU node 0, memory node 0 (local) | 20.5 (triad, nt stores) | 90.0 | - |"
            ),
            "{t}"
        );
    }

    #[test]
    fn numastat_per_policy_is_tabled() {
        let mut v = base("bind-0", Some("0-1"), Some("bind"), Some("0"));
        v["runs"] = serde_json::json!([{"rep": 2, "wall_s": 1.0, "user_s": 0.0, "sys_s": 0.0,
            "max_rss_kib": 0, "exit_code": 0, "signal": null, "timed_out": false,
            "interrupted": false, "ok": true, "metric": null, "numa_pages": null,
            "numastat_delta": [{"node": 0, "numa_hit": 1000, "numa_miss": 3,
            "numa_foreign": 0, "interleave_hit": 0, "local_node": 990, "other_node": 13}]}]);
        let d = RunData { exec: vec![policy(v)], ..RunData::default() };
        let mut doc = Document::default();
        section(&mut doc, &d, "numaprobe exec -- ./a.out");
        use crate::render::Renderer;
        let t = String::from_utf8(crate::render::Markdown.render(&doc)).unwrap();
        assert!(t.contains("`numactl --physcpubind=0-1 --membind=0 -- ./a.out`"), "{t}");
        assert!(t.contains("| bind-0 (run 2) | 0 | 1000 | 3 | 0 | 0 | 990 | 13 |"), "{t}");
    }
}
