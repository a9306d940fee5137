//! The hwloc export (`export --format hwloc`): a run's measured bandwidth
//! and latency as hwloc memory attributes, where MPI runtimes, OpenMP and
//! schedulers read a machine's memory. hwloc's conventions (its
//! `memattrs.h` and XML format, version 2.x):
//!
//! * `Bandwidth` (MiB/s, higher first, flags 5) and `Latency` (ns, lower
//!   first, flags 6), one value per initiator (the CPU node's cpuset) and
//!   target (the NUMANode by its `gp_index`), for every CPU node and every
//!   memory node the run measured, CPU-less ones included;
//! * measured values stand apart from the firmware's: the firmware's
//!   `Bandwidth` and `Latency` values the input held are kept under
//!   `FirmwareBandwidth` and `FirmwareLatency` (hwloc also keeps the HMAT's
//!   own `ReadBandwidth`, `WriteBandwidth`, `ReadLatency`, `WriteLatency`,
//!   untouched), and user-given `info` pairs on the Machine object (hwloc's
//!   way to annotate a topology, as `hwloc-annotate` does) say which
//!   attributes numaprobe measured, how, and in which run.
//!
//! It writes onto the topology hwloc itself discovered (`lstopo --of
//! xml`), refusing one of another machine, or builds one from the run's
//! own stored topology (packages, cores, PUs, NUMA nodes and the SLIT as
//! hwloc's `NUMALatency` distances). Each value's method: docs/topo.md,
//! "hwloc memory attributes".

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use analysis::data::RunData;
use analysis::metrics::{bw_matrix, lat_matrix, local_points};
use results::bw::BwResult;
use results::lat::{self, LatResult};
use results::stats::measured;
use store::{LoadedRun, RunId, Store};
use topo::{IdSet, Topology};

/// hwloc's flags of its predefined attributes: `HIGHER_FIRST` (1) or
/// `LOWER_FIRST` (2), with `NEED_INITIATOR` (4).
const BANDWIDTH_FLAGS: u32 = 5;
const LATENCY_FLAGS: u32 = 6;
/// `HWLOC_DISTANCES_KIND_FROM_OS | MEANS_LATENCY`: the SLIT.
const SLIT_KIND: u32 = 1 | 4;

/// Why an export could not be written; each one line.
#[derive(Debug, thiserror::Error)]
pub enum HwlocError {
    #[error(
        "{run}: no bandwidth or latency matrix to export: measure one with `numaprobe run \
         --only bw-matrix,lat-matrix` (one node: `--only bw-local`, and `numaprobe lat --save`), \
         or `numaprobe bw --matrix --label L` and `numaprobe lat --matrix --label L`, then \
         export label:L"
    )]
    NoMatrix { run: String },
    #[error(
        "{run} holds no topology to describe the machine by: give the machine's own with \
         --topology FILE (`lstopo --of xml > FILE`)"
    )]
    NoTopology { run: String },
    #[error("{runs} were measured on different machines (fingerprints {fingerprints}): export one machine's runs")]
    Mixed { runs: String, fingerprints: String },
    #[error("{path}: not hwloc XML: {why}")]
    Malformed { path: String, why: String },
    #[error("{path} describes another machine than {run}: {why}")]
    OtherMachine { path: String, run: String, why: String },
    #[error("{run}'s topology cannot be written as hwloc XML: {why}; give --topology FILE (`lstopo --of xml > FILE`)")]
    Unsupported { run: String, why: String },
}

/// One measured initiator -> target value of each attribute.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Value {
    /// MiB/s (2^20 bytes per second), as hwloc counts bandwidth.
    pub bandwidth_mibs: Option<u64>,
    /// ns.
    pub latency_ns: Option<u64>,
}

/// What the export writes: a value per (CPU node, memory node) and how
/// they were measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    pub values: BTreeMap<(u32, u32), Value>,
    /// The bandwidth's method in words (kernel, threads, arrays, stores,
    /// statistic).
    pub bandwidth_method: Option<String>,
    pub latency_method: Option<String>,
}

/// GB/s (10^9 B/s) as hwloc's MiB/s.
pub fn mibs(gbs: f64) -> u64 {
    (gbs * 1e9 / f64::from(1u32 << 20)).round() as u64
}

fn bw_value(p: &BwResult) -> Option<f64> {
    measured(p.median_gbs).or(measured(p.best_gbs)).filter(|g| *g > 0.0)
}

fn bw_method(p: &BwResult, fallback: bool) -> String {
    let stores = match p.stores {
        results::bw::Stores::None => String::new(),
        s => format!(", {} stores", s.name()),
    };
    format!(
        "STREAM {} kernel, median of the repetitions, {} thread(s) of the CPU node on the memory node, arrays of {} MiB{stores} ({} mode{}); MiB/s = 2^20 bytes/s",
        p.kernel.name(),
        p.threads,
        p.array_bytes >> 20,
        p.mode.name(),
        if fallback { ", the local step where no matrix cell was measured" } else { "" }
    )
}

fn lat_method(p: &LatResult) -> String {
    format!(
        "pointer chase, median of the samples, {} B stride in {} KiB page groups, {} MiB ring on {} pages ({} mode); ns",
        p.stride_bytes,
        p.tlb_group_bytes >> 10,
        p.size_bytes >> 20,
        p.page_size,
        p.mode.name()
    )
}

impl Measured {
    /// The runs' figures, the first run's where several measured a pair
    /// (a `bw --matrix` run and a `lat --matrix` run of one machine make
    /// one export): bandwidth from the `matrix` cells of the headline
    /// kernel (triad when measured), else the `local` step's figure of
    /// that node; latency from the `lat` matrix, else a `point` chase of
    /// that pair. Medians both.
    pub fn of_runs(runs: &[LoadedRun]) -> Measured {
        let mut m = Measured::default();
        for run in runs {
            m.add(&RunData::of(run));
        }
        m
    }

    fn add(&mut self, d: &RunData) {
        let m = self;
        let (_, cells) = bw_matrix(d);
        for ((c, n), p) in &cells {
            let v = m.values.entry((*c, *n)).or_default();
            if let (None, Some(g)) = (v.bandwidth_mibs, bw_value(p)) {
                v.bandwidth_mibs = Some(mibs(g));
                m.bandwidth_method.get_or_insert_with(|| bw_method(p, false));
            }
        }
        for p in local_points(d).1 {
            let (Some(c), Some(g)) = (p.cpu_node, bw_value(p)) else { continue };
            let n = p.mem_node.unwrap_or(c);
            let v = m.values.entry((c, n)).or_default();
            if v.bandwidth_mibs.is_none() {
                v.bandwidth_mibs = Some(mibs(g));
                let method = bw_method(p, !cells.is_empty());
                m.bandwidth_method.get_or_insert(method);
            }
        }
        let lats = lat_matrix(d);
        let points = d.chase_mode(lat::Mode::Point).filter(|p| p.interleave.is_none());
        for p in lats.values().copied().chain(points) {
            let (Some(c), Some(n), Some(ns)) = (p.cpu_node, p.mem_node, measured(p.median_ns))
            else {
                continue;
            };
            let v = m.values.entry((c, n)).or_default();
            if v.latency_ns.is_none() {
                v.latency_ns = Some((ns.round() as u64).max(1));
                m.latency_method.get_or_insert_with(|| lat_method(p));
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether any pair has a bandwidth (`true`) or latency value.
    fn has(&self, bandwidth: bool) -> bool {
        self.values.values().any(|v| {
            if bandwidth {
                v.bandwidth_mibs.is_some()
            } else {
                v.latency_ns.is_some()
            }
        })
    }

    /// The attributes written, as the `numaprobeMeasured` info names them.
    fn names(&self) -> String {
        let mut n = Vec::new();
        if self.has(true) {
            n.push("Bandwidth");
        }
        if self.has(false) {
            n.push("Latency");
        }
        n.join(" ")
    }
}

/// An hwloc bitmap string: 32-bit words in hex, most significant first,
/// comma-separated (`0x00000003`, `0x00000001,0x00000000`).
pub fn bitmap(ids: impl IntoIterator<Item = u32>) -> String {
    let mut words: BTreeMap<u32, u32> = BTreeMap::new();
    for id in ids {
        *words.entry(id / 32).or_default() |= 1 << (id % 32);
    }
    let top = words.keys().next_back().copied().unwrap_or(0);
    (0..=top)
        .rev()
        .map(|w| format!("0x{:08x}", words.get(&w).copied().unwrap_or(0)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads an hwloc bitmap string (empty words are zero, as hwloc writes
/// them); `None` for an infinite set or what is not one.
pub fn parse_bitmap(s: &str) -> Option<IdSet> {
    let words: Vec<String> = s
        .split(',')
        .map(|w| {
            let w = w.trim();
            let w = w.strip_prefix("0x").unwrap_or(w);
            if w.is_empty() {
                "0".to_string()
            } else {
                w.to_string()
            }
        })
        .collect();
    if words.iter().any(|w| w.contains("f...f") || w.len() > 8) {
        return None;
    }
    IdSet::parse_mask(&words.join(",")).ok()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\n', "&#10;")
}

fn run_names(runs: &[LoadedRun]) -> String {
    let ids: Vec<String> = runs.iter().map(|r| r.summary.id.to_string()).collect();
    match ids.len() {
        1 => format!("run {}", ids[0]),
        _ => format!("runs {}", ids.join(", ")),
    }
}

/// The runs' figures and the topology to describe them by: every run of
/// one machine (fingerprint), the first run's topology.
fn prepare(runs: &[LoadedRun]) -> Result<(Measured, &Topology), HwlocError> {
    let first = runs.first().ok_or_else(|| HwlocError::NoMatrix { run: "none".into() })?;
    let fps: BTreeSet<&str> = runs.iter().map(|r| r.summary.machine_fingerprint.as_str()).collect();
    if fps.len() > 1 {
        return Err(HwlocError::Mixed {
            runs: run_names(runs),
            fingerprints: fps.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    let m = Measured::of_runs(runs);
    if m.is_empty() {
        return Err(HwlocError::NoMatrix { run: run_names(runs) });
    }
    let t = runs
        .iter()
        .find_map(|r| r.topology.get())
        .ok_or_else(|| HwlocError::NoTopology { run: run_names(std::slice::from_ref(first)) })?;
    Ok((m, t))
}

/// The `info` pairs on the Machine object: which attributes numaprobe
/// measured, how, in which run, and where the firmware's values went.
fn infos(runs: &[LoadedRun], m: &Measured, firmware_moved: &[&str]) -> Vec<(String, String)> {
    let which: Vec<String> = runs
        .iter()
        .map(|r| {
            let s = &r.summary;
            format!("run {} ({}, started {})", s.id, s.uuid, s.started)
        })
        .collect();
    let s = &runs[0].summary;
    let mut v = vec![
        (
            "numaprobeMeasured".to_string(),
            format!("{}: measured by numaprobe, not declared by the firmware", m.names()),
        ),
        ("numaprobeRun".into(), format!("{} on {}", which.join("; "), s.machine)),
        ("numaprobeVersion".into(), s.tool_version.clone()),
    ];
    if let Some(b) = &m.bandwidth_method {
        v.push(("numaprobeBandwidth".into(), b.clone()));
    }
    if let Some(l) = &m.latency_method {
        v.push(("numaprobeLatency".into(), l.clone()));
    }
    if !firmware_moved.is_empty() {
        v.push((
            "numaprobeFirmwareValues".into(),
            format!(
                "the input's {} values (the firmware's HMAT) are under {}",
                firmware_moved.join(" and "),
                firmware_moved
                    .iter()
                    .map(|a| format!("Firmware{a}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ));
    }
    v
}

/// The two `memattr` elements, one value per measured pair whose target
/// has a gp_index and whose initiator node has CPUs.
fn memattrs(
    m: &Measured,
    targets: &BTreeMap<u32, u64>,
    initiators: &BTreeMap<u32, IdSet>,
    indent: &str,
) -> String {
    let mut s = String::new();
    for (name, flags, bw) in
        [("Bandwidth", BANDWIDTH_FLAGS, true), ("Latency", LATENCY_FLAGS, false)]
    {
        if !m.has(bw) {
            continue;
        }
        let _ = writeln!(s, "{indent}<memattr name=\"{name}\" flags=\"{flags}\">");
        for ((c, n), v) in &m.values {
            let value = if bw { v.bandwidth_mibs } else { v.latency_ns };
            let (Some(value), Some(gp), Some(cpus)) = (value, targets.get(n), initiators.get(c))
            else {
                continue;
            };
            if cpus.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "{indent}  <memattr_value target_obj_type=\"NUMANode\" target_obj_gp_index=\"{gp}\" value=\"{value}\" initiator_cpuset=\"{}\"/>",
                bitmap(cpus.iter())
            );
        }
        let _ = writeln!(s, "{indent}</memattr>");
    }
    s
}

/// The export of `runs` (one machine's) as hwloc XML built from the
/// first run's stored topology.
pub fn export_own(runs: &[LoadedRun]) -> Result<String, HwlocError> {
    let (m, t) = prepare(runs)?;
    let mut tree =
        Tree::of(t).map_err(|why| HwlocError::Unsupported { run: run_names(runs), why })?;
    tree.infos = infos(runs, &m, &[]);
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n",
    );
    tree.write(&mut s);
    if t.nodes.len() > 1 && t.nodes.iter().all(|n| n.distances.len() == t.nodes.len()) {
        let ids: Vec<String> = t.nodes.iter().map(|n| n.id.to_string()).collect();
        let vals: Vec<String> =
            t.nodes.iter().flat_map(|n| n.distances.iter().map(|d| d.to_string())).collect();
        let _ = writeln!(
            s,
            "  <distances2 type=\"NUMANode\" nbobjs=\"{}\" kind=\"{SLIT_KIND}\" name=\"NUMALatency\" indexing=\"os\">",
            ids.len()
        );
        for (tag, list) in [("indexes", &ids), ("u64values", &vals)] {
            // ten values to an element, `length` their text's bytes, each
            // value followed by a space, as hwloc writes them
            for chunk in list.chunks(10) {
                let text: String = chunk.iter().map(|v| format!("{v} ")).collect();
                let _ = writeln!(s, "    <{tag} length=\"{}\">{text}</{tag}>", text.len());
            }
        }
        s.push_str("  </distances2>\n");
    }
    let initiators: BTreeMap<u32, IdSet> = t.nodes.iter().map(|n| (n.id, n.cpus.clone())).collect();
    s.push_str(&memattrs(&m, &tree.node_gp, &initiators, "  "));
    s.push_str("</topology>\n");
    Ok(s)
}

/// The export of `runs` (one machine's) written onto `xml`, the topology
/// hwloc discovered (`lstopo --of xml`), read from `path` (named in
/// errors). Refused when it is not hwloc 2 XML, or when it describes
/// another machine: other CPUs, other NUMA node ids, or other CPUs in a
/// node.
pub fn export_onto(runs: &[LoadedRun], xml: &str, path: &str) -> Result<String, HwlocError> {
    let bad = |why: String| HwlocError::Malformed { path: path.to_string(), why };
    let opts = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(xml, opts)
        .map_err(|e| bad(e.to_string().replace('\n', " ")))?;
    let root = doc.root_element();
    if !root.has_tag_name("topology") {
        return Err(bad(format!(
            "the root element is <{}>, not <topology>",
            root.tag_name().name()
        )));
    }
    match root.attribute("version") {
        Some(v) if v.starts_with("2.") || v.starts_with("3.") => {}
        Some(v) => return Err(bad(format!("topology version {v}: hwloc 2 XML is needed"))),
        None => {
            return Err(bad(
                "hwloc 1.x XML (no version): write it again with hwloc 2 (`lstopo --of xml`)"
                    .into(),
            ))
        }
    }
    let Some(machine) = root.children().find(|n| n.has_tag_name("object")) else {
        return Err(bad("no Machine object".into()));
    };
    let objects = || machine.descendants().filter(|n| n.has_tag_name("object"));
    let of_type = |t: &'static str| objects().filter(move |n| n.attribute("type") == Some(t));
    let mut pus = IdSet::new();
    for pu in of_type("PU") {
        let id = pu.attribute("os_index").and_then(|s| s.parse().ok());
        let Some(id) = id else { return Err(bad("a PU without its os_index".into())) };
        pus.insert(id);
    }
    let mut numa: BTreeMap<u32, (u64, IdSet)> = BTreeMap::new();
    for n in of_type("NUMANode") {
        let (Some(id), Some(gp)) = (
            n.attribute("os_index").and_then(|s| s.parse().ok()),
            n.attribute("gp_index").and_then(|s| s.parse().ok()),
        ) else {
            return Err(bad("a NUMANode without its os_index or gp_index".into()));
        };
        let Some(cpus) = n.attribute("cpuset").and_then(parse_bitmap) else {
            return Err(bad(format!("NUMANode {id} has no readable cpuset")));
        };
        numa.insert(id, (gp, cpus));
    }
    let (m, t) = prepare(runs)?;
    same_machine(t, &pus, &numa).map_err(|why| HwlocError::OtherMachine {
        path: path.to_string(),
        run: run_names(runs),
        why,
    })?;

    // Edits on the text, applied from the end: the firmware's Bandwidth
    // and Latency renamed (or dropped when empty), the infos and the
    // measured attributes inserted.
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut moved: Vec<&str> = Vec::new();
    for e in root.children().filter(|n| n.has_tag_name("memattr")) {
        let Some(name @ ("Bandwidth" | "Latency")) = e.attribute("name") else { continue };
        if !m.has(name == "Bandwidth") {
            continue;
        }
        let r = e.range();
        if e.children().any(|c| c.has_tag_name("memattr_value")) {
            let tag = &xml[r.clone()];
            let Some(at) =
                tag.find(&format!("\"{name}\"")).or_else(|| tag.find(&format!("'{name}'")))
            else {
                continue;
            };
            let start = r.start + at + 1;
            edits.push((start..start + name.len(), format!("Firmware{name}")));
            moved.push(if name == "Bandwidth" { "Bandwidth" } else { "Latency" });
        } else {
            edits.push((r, String::new()));
        }
    }
    moved.sort_unstable();
    moved.dedup();
    let Some(first) = machine.first_element_child() else {
        return Err(bad("an empty Machine object".into()));
    };
    let at = first.range().start;
    let indent: String = xml[..at].rsplit('\n').next().unwrap_or("").to_string();
    let mut ins = String::new();
    for (k, v) in infos(runs, &m, &moved) {
        let _ = write!(ins, "<info name=\"{}\" value=\"{}\"/>\n{indent}", esc(&k), esc(&v));
    }
    edits.push((at..at, ins));
    let end = root.range().end;
    let close = xml[..end].rfind("</topology").ok_or_else(|| bad("no </topology>".into()))?;
    let targets: BTreeMap<u32, u64> = numa.iter().map(|(id, (gp, _))| (*id, *gp)).collect();
    let initiators: BTreeMap<u32, IdSet> = t.nodes.iter().map(|n| (n.id, n.cpus.clone())).collect();
    edits.push((close..close, memattrs(&m, &targets, &initiators, "  ")));
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = xml.to_string();
    for (r, text) in edits {
        out.replace_range(r, &text);
    }
    Ok(out)
}

/// Whether hwloc's topology is the run's machine: the same CPUs, the same
/// NUMA node ids, the same CPUs in each node; else what differs.
fn same_machine(
    t: &Topology,
    pus: &IdSet,
    numa: &BTreeMap<u32, (u64, IdSet)>,
) -> Result<(), String> {
    let mut why = Vec::new();
    let cpus: IdSet = if t.cpus.is_empty() {
        t.online_cpus.clone()
    } else {
        t.cpus.iter().map(|c| c.id).collect()
    };
    if *pus != cpus {
        why.push(format!(
            "{} CPU(s) ({}) against the run's {} ({})",
            pus.len(),
            pus.to_list(),
            cpus.len(),
            cpus.to_list()
        ));
    }
    let ids: IdSet = numa.keys().copied().collect();
    let run_ids: IdSet = t.nodes.iter().map(|n| n.id).collect();
    if ids != run_ids {
        why.push(format!("NUMA nodes {} against the run's {}", ids.to_list(), run_ids.to_list()));
    } else {
        for n in t.nodes.iter().filter(|n| !n.cpus.is_empty()) {
            let theirs = &numa[&n.id].1;
            if *theirs != n.cpus {
                why.push(format!(
                    "node {}'s CPUs {} against the run's {}",
                    n.id,
                    theirs.to_list(),
                    n.cpus.to_list()
                ));
            }
        }
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

/// An hwloc object of the tree numaprobe writes from its own topology.
#[derive(Debug, Default)]
struct Obj {
    kind: &'static str,
    os_index: Option<u32>,
    cpus: IdSet,
    /// Memory children (NUMANode ids), written first.
    memory: Vec<(u32, u64)>,
    children: Vec<Obj>,
}

/// The topology as hwloc objects: Machine > Package > (Group) > Core >
/// PU, each NUMA node a memory child of the smallest object whose CPUs
/// are exactly its own (the Machine for a CPU-less node, or one over
/// every CPU).
#[derive(Debug)]
struct Tree {
    machine: Obj,
    node_gp: BTreeMap<u32, u64>,
    infos: Vec<(String, String)>,
    /// gp_index of each object in writing order, assigned by `write`.
    next_gp: u64,
}

impl Tree {
    fn of(t: &Topology) -> Result<Tree, String> {
        let all: IdSet = t.cpus.iter().map(|c| c.id).collect();
        if all.is_empty() {
            return Err("no CPUs with a topology".into());
        }
        let core_of = |cpus: &IdSet| -> Vec<Obj> {
            let mut seen = BTreeSet::new();
            let mut cores = Vec::new();
            for c in t.cpus.iter().filter(|c| cpus.contains(c.id)) {
                let sib: IdSet = if c.thread_siblings.is_empty() {
                    std::iter::once(c.id).collect()
                } else {
                    c.thread_siblings.intersection(cpus)
                };
                if !seen.insert(sib.first()) {
                    continue;
                }
                let pus = sib
                    .iter()
                    .map(|p| Obj {
                        kind: "PU",
                        os_index: Some(p),
                        cpus: std::iter::once(p).collect(),
                        ..Obj::default()
                    })
                    .collect();
                cores.push(Obj {
                    kind: "Core",
                    os_index: Some(c.core),
                    cpus: sib,
                    children: pus,
                    ..Obj::default()
                });
            }
            cores
        };
        let mut machine =
            Obj { kind: "Machine", os_index: Some(0), cpus: all.clone(), ..Obj::default() };
        let cpu_nodes: Vec<&topo::Node> = t.nodes.iter().filter(|n| !n.cpus.is_empty()).collect();
        for p in &t.packages {
            let pcpus = p.cpus.intersection(&all);
            let mut pkg = Obj {
                kind: "Package",
                os_index: Some(p.id),
                cpus: pcpus.clone(),
                ..Obj::default()
            };
            let inside: Vec<&&topo::Node> =
                cpu_nodes.iter().filter(|n| n.cpus.is_subset(&pcpus) && n.cpus != all).collect();
            let mut covered = IdSet::new();
            for n in &inside {
                covered = covered.union(&n.cpus);
                if n.cpus == pcpus {
                    pkg.memory.push((n.id, n.mem_total_bytes));
                } else {
                    pkg.children.push(Obj {
                        kind: "Group",
                        cpus: n.cpus.clone(),
                        memory: vec![(n.id, n.mem_total_bytes)],
                        children: core_of(&n.cpus),
                        ..Obj::default()
                    });
                }
            }
            let rest = pcpus.difference(&covered);
            if !rest.is_empty() {
                pkg.children.extend(core_of(&rest));
            }
            if pkg.memory.len() == 1 && pkg.children.iter().all(|c| c.kind == "Core") {
                pkg.children = core_of(&pcpus);
            }
            pkg.children.sort_by_key(|c| c.cpus.first());
            machine.children.push(pkg);
        }
        for n in &cpu_nodes {
            let in_package = t.packages.iter().any(|p| n.cpus.is_subset(&p.cpus));
            if n.cpus == all {
                machine.memory.push((n.id, n.mem_total_bytes));
            } else if !in_package {
                return Err(format!(
                    "node {} spans packages without being the whole machine",
                    n.id
                ));
            }
        }
        for n in t.nodes.iter().filter(|n| n.cpus.is_empty()) {
            machine.memory.push((n.id, n.mem_total_bytes));
        }
        machine.children.sort_by_key(|c| c.cpus.first());
        Ok(Tree { machine, node_gp: BTreeMap::new(), infos: Vec::new(), next_gp: 1 })
    }

    fn write(&mut self, s: &mut String) {
        let machine = std::mem::take(&mut self.machine);
        let all_nodes: IdSet = collect_memory(&machine).keys().copied().collect();
        self.write_obj(s, &machine, &IdSet::new(), &all_nodes, 1);
        self.machine = machine;
    }

    fn write_obj(
        &mut self,
        s: &mut String,
        o: &Obj,
        above: &IdSet,
        all_nodes: &IdSet,
        depth: usize,
    ) {
        let indent = "  ".repeat(depth);
        let own: IdSet = o.memory.iter().map(|(n, _)| *n).collect();
        let below: IdSet = collect_memory(o).keys().copied().collect();
        let nodeset = above.union(&below);
        let cpus = bitmap(o.cpus.iter());
        let nodes = bitmap(nodeset.iter());
        let gp = self.take_gp();
        let mut head = format!("{indent}<object type=\"{}\"", o.kind);
        if let Some(i) = o.os_index {
            let _ = write!(head, " os_index=\"{i}\"");
        }
        let _ = write!(head, " cpuset=\"{cpus}\" complete_cpuset=\"{cpus}\"");
        if o.kind == "Machine" {
            let _ = write!(head, " allowed_cpuset=\"{cpus}\"");
        }
        let _ = write!(head, " nodeset=\"{nodes}\" complete_nodeset=\"{nodes}\"");
        if o.kind == "Machine" {
            let _ = write!(head, " allowed_nodeset=\"{}\"", bitmap(all_nodes.iter()));
        }
        let _ = write!(head, " gp_index=\"{gp}\"");
        let leaf = o.children.is_empty() && o.memory.is_empty() && o.kind != "Machine";
        if leaf {
            let _ = writeln!(s, "{head}/>");
            return;
        }
        let _ = writeln!(s, "{head}>");
        if o.kind == "Machine" {
            for (k, v) in &self.infos {
                let _ = writeln!(s, "{indent}  <info name=\"{}\" value=\"{}\"/>", esc(k), esc(v));
            }
        }
        for (n, b) in &o.memory {
            let gp = self.take_gp();
            self.node_gp.insert(*n, gp);
            let one = bitmap([*n]);
            let _ = writeln!(
                s,
                "{indent}  <object type=\"NUMANode\" os_index=\"{n}\" cpuset=\"{cpus}\" complete_cpuset=\"{cpus}\" nodeset=\"{one}\" complete_nodeset=\"{one}\" gp_index=\"{gp}\" local_memory=\"{b}\"/>"
            );
        }
        let inherited = above.union(&own);
        for c in &o.children {
            self.write_obj(s, c, &inherited, all_nodes, depth + 1);
        }
        let _ = writeln!(s, "{indent}</object>");
    }

    fn take_gp(&mut self) -> u64 {
        let g = self.next_gp;
        self.next_gp += 1;
        g
    }
}

/// The NUMA nodes attached at or below `o`, with their bytes.
fn collect_memory(o: &Obj) -> BTreeMap<u32, u64> {
    let mut m: BTreeMap<u32, u64> = o.memory.iter().copied().collect();
    for c in &o.children {
        m.extend(collect_memory(c));
    }
    m
}

/// The hwloc export as an exporter: onto the topology hwloc discovered
/// (its XML text and the path it was read from, named in errors), else
/// onto the runs' own ([`export_own`]).
pub struct Hwloc<'a> {
    pub onto: Option<(&'a str, &'a str)>,
}

impl super::Exporter for Hwloc<'_> {
    fn export(&self, db: &Store, ids: &[RunId]) -> Result<super::Exported, super::Error> {
        let runs = super::load(db, ids)?;
        let xml = match self.onto {
            None => export_own(&runs)?,
            Some((xml, path)) => export_onto(&runs, xml, path)?,
        };
        Ok(super::Exported::bytes(xml.into_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps_are_hwlocs_32_bit_words_most_significant_first() {
        assert_eq!(bitmap([0, 1]), "0x00000003");
        assert_eq!(bitmap([32]), "0x00000001,0x00000000");
        assert_eq!(bitmap([]), "0x00000000");
        let s = parse_bitmap("0x00006000,,0x00040000,0x00006007").unwrap();
        assert_eq!(s.to_list(), "0-2,13-14,50,109-110");
        assert_eq!(parse_bitmap(&bitmap(s.iter())).unwrap(), s);
        assert_eq!(parse_bitmap("0xf...f,0x1"), None);
    }

    #[test]
    fn bandwidth_goes_out_in_mib_per_second() {
        // 10 GB/s = 10^10 B/s = 9536.7 MiB/s
        assert_eq!(mibs(10.0), 9537);
    }
}
