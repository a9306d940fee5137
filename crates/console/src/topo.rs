//! The text of `numaprobe topo`: what the machine is, section after
//! section (packages, caches, NUMA nodes and distances, HMAT, memory
//! kinds, memory-side caches and tiers, devices, limits, the kernel
//! options that matter and the NUMA mode), and a saved run's measured
//! figures beside the declared HMAT (`topo --from-run`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use store::LoadedRun;
use topo::units::binary_size as size;
use topo::{CacheKind, Confidence, Node, NodeKind, Topology};

use super::{Table, TableStyle};
use report::hmat::HmatPair;

/// `topo --json`: the machine's topology record as every run stores it
/// (its own `schema_version`, [`topo::SCHEMA_VERSION`]), so that a live
/// machine and a run's saved topology read alike; with `--from-run`, the
/// run's figures beside it ([`FromRun`]), keys sorted by the invocation.
#[derive(serde::Serialize)]
pub struct TopoDoc<'a> {
    #[serde(flatten)]
    topology: &'a Topology,
    #[serde(skip_serializing_if = "Option::is_none")]
    from_run: Option<&'a FromRun>,
}

impl<'a> TopoDoc<'a> {
    pub fn new(topology: &'a Topology, from_run: Option<&'a FromRun>) -> Self {
        TopoDoc { topology, from_run }
    }
}

/// A saved run's measured figures beside this machine's declared HMAT
/// (`topo --from-run`).
#[derive(Debug, serde::Serialize)]
pub struct FromRun {
    pub run_id: store::RunId,
    pub label: Option<String>,
    pub started: String,
    /// The run's machine fingerprint, and this machine's (or the
    /// capture's under `--root`).
    pub run_machine_fingerprint: String,
    pub machine_fingerprint: String,
    pub same_machine: bool,
    /// A pair further than this from declared (percent) is flagged.
    pub margin_pct: f64,
    /// Each declared pair with the run's figures, as `run --json` has them.
    pub hmat: Vec<HmatPair>,
    /// The run's declared distances against its latency matrix.
    pub distances: report::distances::View,
}

impl FromRun {
    /// `run`'s figures beside `t`'s HMAT; `machine_fingerprint` is the
    /// fingerprint of the machine `t` describes.
    pub fn new(t: &Topology, run: &LoadedRun, machine_fingerprint: String) -> FromRun {
        FromRun {
            run_id: run.summary.id,
            label: run.summary.label.clone(),
            started: run.summary.started.clone(),
            run_machine_fingerprint: run.summary.machine_fingerprint.clone(),
            same_machine: run.summary.machine_fingerprint == machine_fingerprint,
            machine_fingerprint,
            margin_pct: report::hmat::MARGIN_PCT,
            hmat: report::hmat::compare(t, &report::hmat::Measured::of_run(run)),
            distances: report::distances::View::of(run, &analysis::data::RunData::of(run)),
        }
    }

    /// The declared-vs-measured section of `topo --from-run`.
    pub fn text(&self) -> String {
        format!("{}{}", self.hmat_text(), self.distances.text())
    }

    fn hmat_text(&self) -> String {
        let label = self.label.as_deref().map(|l| format!(", {l}")).unwrap_or_default();
        let src = format!("run {} ({}{label})", self.run_id, self.started);
        if self.hmat.is_empty() {
            return format!(
                "\nHMAT declared vs measured: nothing to compare; this machine declares no HMAT \
                 (measured figures: {src})\n"
            );
        }
        let flagged = self.hmat.iter().filter(|p| p.flagged).count();
        format!(
            "\nHMAT declared vs measured by {src} (MB/s = GB/s x 1000; flag: off by more than \
             {:.0}%): {flagged} of {} pair(s) flagged\n{}",
            self.margin_pct,
            self.hmat.len(),
            report::hmat::pairs_table(&self.hmat).to_text()
        )
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn or_dash(s: String) -> String {
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}

fn kind_name(k: NodeKind) -> &'static str {
    match k {
        NodeKind::CpuMemory => "cpu+memory",
        NodeKind::MemoryOnly => "memory-only",
        NodeKind::CpuOnly => "cpu-only",
        NodeKind::Neither => "neither",
    }
}

/// The readable summary: one section after another, in the order below.
pub fn render(t: &Topology, style: TableStyle) -> String {
    let mut s = String::new();
    header(&mut s, t);
    numa_mode(&mut s, t);
    packages(&mut s, t, style);
    caches(&mut s, t, style);
    nodes(&mut s, t, style);
    hmat(&mut s, t, style);
    memory_kinds(&mut s, t, style);
    memory_side_caches(&mut s, t, style);
    memory_tiers(&mut s, t);
    devices(&mut s, t, style);
    limits(&mut s, t);
    cmdline(&mut s, t);
    warnings(&mut s, t);
    s
}

/// Where the facts come from, the one-line summary, CPUs and memory.
fn header(s: &mut String, t: &Topology) {
    let src = if t.live { "this machine".to_string() } else { format!("capture at {}", t.root) };
    let _ = writeln!(s, "Topology of {src}");
    let _ = writeln!(s, "  {}", t.summary_line());
    let mut cpu = vec![format!("vendor {}", serde_plain(&t.cpu_vendor))];
    if let Some(a) = &t.arch {
        cpu.push(format!("arch {a}"));
    }
    if let Some(f) = t.cpu_family {
        cpu.push(format!("family {f}"));
    }
    if let Some(k) = &t.kernel {
        cpu.push(format!("kernel {k}"));
    }
    let _ = writeln!(s, "  {}", cpu.join(", "));
    let _ = writeln!(
        s,
        "  CPUs online {}{}; {} core(s), {} thread(s) per core at most",
        or_dash(t.online_cpus.to_list()),
        if t.offline_cpus.is_empty() {
            String::new()
        } else {
            format!(", offline {}", t.offline_cpus.to_list())
        },
        t.core_count(),
        t.smt_threads_per_core()
    );
    if let Some(sm) = &t.system_memory {
        let mut line = format!("  system memory (/proc/meminfo) {} total", gib(sm.total_bytes));
        if let Some(a) = sm.available_bytes.or(sm.free_bytes) {
            let what = if sm.available_bytes.is_some() { "available" } else { "free" };
            let _ = write!(line, ", {} {what}", gib(a));
        }
        let pools: Vec<String> = sm
            .hugepages
            .iter()
            .map(|h| format!("{}: {}/{}", size(h.page_size_bytes), h.total, h.free))
            .collect();
        if !pools.is_empty() {
            let _ = write!(line, "; huge page pools (total/free) {}", pools.join(", "));
        }
        let _ = writeln!(s, "{line}");
        if let Some((nodes, system)) = t.nodes_short_of_system() {
            let _ = writeln!(
                s,
                "  node memory {} of the system's {}: memory the kernel counts but no NUMA node shows yet (a virtual machine's memory plugged in as it is used: virtio-mem, a balloon); the node table and the working sets use what the nodes hold now",
                gib(nodes),
                gib(system)
            );
        }
    }
}

/// The inferred NUMA mode, how sure it is, its reason and the other
/// readings the evidence fits.
fn numa_mode(s: &mut String, t: &Topology) {
    let m = &t.numa_mode;
    let label = m.label_text().map(|l| format!(" ({l})")).unwrap_or_default();
    let _ =
        writeln!(s, "\nNUMA mode: {}{label}, {}", serde_plain(&m.kind), serde_plain(&m.confidence));
    let _ = writeln!(s, "  {}", m.reason);
    firmware_numa(s, t);
    if m.alternatives.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "  {}",
        if m.confidence == Confidence::Ambiguous {
            "candidates, and what tells them apart:"
        } else {
            "also possible, and what would tell:"
        }
    );
    for a in &m.alternatives {
        let name = a.label.clone().unwrap_or_else(|| serde_plain(&a.kind));
        let _ = writeln!(s, "  - {name}: {}", a.tell);
    }
}

/// The firmware's own NUMA description (ACPI SRAT and SLIT), one line
/// each, or one line saying why it is unknown.
fn firmware_numa(s: &mut String, t: &Topology) {
    use topo::acpi::Table;
    let Some(f) = &t.firmware_numa else { return };
    match (&f.srat, &f.slit) {
        // A capture rarely holds the tables: nothing to say about them.
        (Table::Unknown(_), Table::Unknown(_)) if !t.live => {}
        (Table::Unknown(a), Table::Unknown(b)) if a == b => {
            let _ = writeln!(s, "  firmware NUMA (ACPI SRAT/SLIT): unknown ({a})");
        }
        _ => {
            let _ = writeln!(s, "  firmware NUMA (ACPI SRAT): {}", f.srat_text());
            let _ = writeln!(s, "  firmware distances (ACPI SLIT): {}", f.slit_text());
        }
    }
}

/// One row per package: CPUs, dies, clusters, cores, threads, nodes.
fn packages(s: &mut String, t: &Topology, style: TableStyle) {
    let with_clusters = t.cluster_count().is_some();
    let mut hdr: Vec<String> = ["package", "CPUs", "dies"].map(String::from).to_vec();
    if with_clusters {
        hdr.push("clusters".into());
    }
    hdr.extend(["cores", "threads", "nodes"].map(String::from));
    let mut tb = Table::new(hdr, style);
    for p in &t.packages {
        let cores: std::collections::BTreeSet<_> = t
            .cpus
            .iter()
            .filter(|c| c.package == p.id)
            .map(|c| (c.thread_siblings.first(), c.core))
            .collect();
        let mut row = vec![p.id.to_string(), p.cpus.to_list(), p.dies.len().to_string()];
        if with_clusters {
            let clusters: std::collections::BTreeSet<u32> =
                t.cpus.iter().filter(|c| c.package == p.id).filter_map(|c| c.cluster).collect();
            row.push(clusters.len().to_string());
        }
        row.extend([cores.len().to_string(), p.cpus.len().to_string(), or_dash(p.nodes.to_list())]);
        tb.add_row(row);
    }
    if with_clusters {
        tb.right(&[0, 2, 3, 4, 5]);
    } else {
        tb.right(&[0, 2, 3, 4]);
    }
    let _ = writeln!(s, "\nPackages\n{tb}");
}

/// Caches: one row per (level, kind, size) with instance count and sharing.
fn caches(s: &mut String, t: &Topology, style: TableStyle) {
    if !t.caches.is_empty() {
        let mut groups: BTreeMap<(u8, u8, u64), Vec<&topo::Cache>> = BTreeMap::new();
        for c in &t.caches {
            groups.entry((c.level, c.kind as u8, c.size_bytes)).or_default().push(c);
        }
        let mut tb = Table::with_header(
            &["cache", "size", "line", "instances", "CPUs per instance", "first instances"],
            style,
        );
        for ((level, _, bytes), cs) in &groups {
            let kind = match cs[0].kind {
                CacheKind::Data => "d",
                CacheKind::Instruction => "i",
                CacheKind::Unified => "",
            };
            let per: std::collections::BTreeSet<usize> = cs.iter().map(|c| c.cpus.len()).collect();
            let per: Vec<String> = per.iter().map(|n| n.to_string()).collect();
            let mut first: Vec<String> = cs.iter().take(4).map(|c| c.cpus.to_list()).collect();
            if cs.len() > 4 {
                first.push("...".into());
            }
            tb.add_row(vec![
                format!("L{level}{kind}"),
                size(*bytes),
                cs[0].line_bytes.map_or("-".into(), |l| format!("{l} B")),
                cs.len().to_string(),
                per.join(", "),
                first.join(" | "),
            ]);
        }
        tb.right(&[1, 2, 3]);
        let _ = writeln!(s, "\nCaches (sizes in KiB/MiB = 2^10/2^20 bytes)\n{tb}");
    }
}

/// NUMA nodes and the distance matrix.
fn nodes(s: &mut String, t: &Topology, style: TableStyle) {
    if t.nodes.is_empty() {
        let _ = writeln!(s, "\nNUMA nodes: none reported (no sys/devices/system/node)");
    } else {
        let mut tb = Table::with_header(
            &["node", "kind", "CPUs", "node memory", "free", "huge pages (total/free)", "tier"],
            style,
        );
        for n in &t.nodes {
            tb.add_row(vec![
                n.id.to_string(),
                match topo::memkind::memory_kind(t, n).0 {
                    topo::memkind::MemoryKind::Dram
                    | topo::memkind::MemoryKind::MemoryOnly
                    | topo::memkind::MemoryKind::None => kind_name(n.kind).to_string(),
                    k => format!("{} ({})", kind_name(n.kind), k.name()),
                },
                or_dash(n.cpus.to_list()),
                gib(n.mem_total_bytes),
                gib(n.mem_free_bytes),
                hugepages(n),
                n.memory_tier.map_or("-".into(), |x| x.to_string()),
            ]);
        }
        tb.right(&[0, 3, 4]);
        let _ = writeln!(s, "\nNUMA nodes (GiB = 2^30 bytes)\n{tb}");
        s.push_str(&distance_matrix(t));
        s.push_str(&distance_tiers(t));
    }
}

/// HMAT performance per memory node and access class.
fn hmat(s: &mut String, t: &Topology, style: TableStyle) {
    let hmat: Vec<&Node> = t.nodes.iter().filter(|n| n.hmat.is_some()).collect();
    if !hmat.is_empty() {
        let mut tb = Table::with_header(
            &[
                "node",
                "access",
                "initiators",
                "targets",
                "read MB/s",
                "write MB/s",
                "read ns",
                "write ns",
            ],
            style,
        );
        let opt = |v: Option<u64>| v.map_or("-".into(), |x| x.to_string());
        for n in hmat {
            let h = n.hmat.as_ref().expect("filtered");
            for (name, a) in [("access0", &h.access0), ("access1", &h.access1)] {
                let Some(a) = a else { continue };
                tb.add_row(vec![
                    n.id.to_string(),
                    name.to_string(),
                    or_dash(a.initiators.to_list()),
                    or_dash(a.targets.to_list()),
                    opt(a.read_bandwidth_mbs),
                    opt(a.write_bandwidth_mbs),
                    opt(a.read_latency_ns),
                    opt(a.write_latency_ns),
                ]);
            }
        }
        tb.right(&[0, 4, 5, 6, 7]);
        let _ = writeln!(
            s,
            "\nHMAT (ACPI; access0 = any initiator, access1 = CPUs only; MB/s and ns as the \
             kernel reports them)\n{tb}"
        );
    }
}

/// Each CPU-less memory node's kind with its evidence, then the DAX
/// devices and CXL regions read.
fn memory_kinds(s: &mut String, t: &Topology, style: TableStyle) {
    let lines: Vec<String> = t
        .nodes
        .iter()
        .filter(|n| n.cpus.is_empty() && n.mem_total_bytes > 0)
        .map(|n| {
            let (k, why) = topo::memkind::memory_kind(t, n);
            format!("  node {}: kind {}: {why}", n.id, k.name())
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(s, "\nMemory kinds of CPU-less nodes (evidence)\n{}", lines.join("\n"));
    }
    if !t.dax_devices.is_empty() {
        let mut tb = Table::with_header(
            &["DAX device", "target node", "driver", "provider", "region", "start", "size"],
            style,
        );
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        for x in &t.dax_devices {
            tb.add_row(vec![
                x.name.clone(),
                x.target_node.map_or("-".into(), |n| n.to_string()),
                dash(&x.driver),
                dash(&x.provider),
                dash(&x.region),
                x.resource.map_or("-".into(), |r| format!("{r:#x}")),
                x.size_bytes.map_or("-".into(), size),
            ]);
        }
        let _ =
            writeln!(s, "\nDAX devices (driver kmem = onlined as system RAM, a NUMA node)\n{tb}");
    }
    if !t.cxl_regions.is_empty() {
        let mut tb = Table::with_header(
            &["CXL region", "mode", "size", "start", "ways", "targets", "DAX", "nodes"],
            style,
        );
        for g in &t.cxl_regions {
            tb.add_row(vec![
                g.name.clone(),
                g.mode.clone().unwrap_or_else(|| "-".into()),
                g.size_bytes.map_or("-".into(), size),
                g.resource.map_or("-".into(), |r| format!("{r:#x}")),
                g.interleave_ways.map_or("-".into(), |w| w.to_string()),
                or_dash(g.targets.join(",")),
                or_dash(g.dax_devices.join(",")),
                or_dash(g.nodes.to_list()),
            ]);
        }
        let _ = writeln!(s, "\nCXL regions\n{tb}");
    }
}

/// Memory-side caches (HMAT).
fn memory_side_caches(s: &mut String, t: &Topology, style: TableStyle) {
    let msc: Vec<&Node> = t.nodes.iter().filter(|n| !n.memory_side_caches.is_empty()).collect();
    if !msc.is_empty() {
        let mut tb = Table::with_header(
            &["node", "level", "size", "line", "indexing", "write policy"],
            style,
        );
        for n in msc {
            for c in &n.memory_side_caches {
                tb.add_row(vec![
                    n.id.to_string(),
                    c.index.to_string(),
                    size(c.size_bytes),
                    c.line_bytes.map_or("-".into(), |l| format!("{l} B")),
                    c.indexing.clone().unwrap_or_else(|| "-".into()),
                    c.write_policy.clone().unwrap_or_else(|| "-".into()),
                ]);
            }
        }
        let _ = writeln!(s, "\nMemory-side caches\n{tb}");
    }
}

/// The kernel's memory tiers.
fn memory_tiers(s: &mut String, t: &Topology) {
    if !t.memory_tiers.is_empty() {
        let tiers: Vec<String> =
            t.memory_tiers.iter().map(|m| format!("tier {}: nodes {}", m.id, m.nodes)).collect();
        let _ = writeln!(s, "\nMemory tiers (lower tier = faster memory): {}", tiers.join("; "));
    }
}

/// PCI devices and their nodes.
fn devices(s: &mut String, t: &Topology, style: TableStyle) {
    if !t.devices.is_empty() {
        let mut tb = Table::with_header(
            &["PCI address", "class", "class code", "vendor:device", "node", "local CPUs"],
            style,
        );
        for d in &t.devices {
            tb.add_row(vec![
                d.address.clone(),
                serde_plain(&d.class),
                d.class_code.clone(),
                format!(
                    "{}:{}",
                    d.vendor_id.as_deref().unwrap_or("?"),
                    d.device_id.as_deref().unwrap_or("?")
                ),
                d.numa_node.map_or("unknown".into(), |n| n.to_string()),
                d.local_cpus.as_ref().map_or("-".into(), |c| or_dash(c.to_list())),
            ]);
        }
        let _ = writeln!(
            s,
            "\nDevices (node \"unknown\": the firmware gives none, numa_node = -1)\n{tb}"
        );
    }
}

/// cgroup and affinity limits of this process.
fn limits(s: &mut String, t: &Topology) {
    let cg = &t.cgroup;
    let _ = writeln!(s, "\nCPU and memory limits");
    let set =
        |v: &Option<topo::CpuSet>| v.as_ref().map_or("not set".into(), |x| or_dash(x.to_list()));
    if cg.version == "none" {
        let _ = writeln!(s, "  cgroup: no cpuset limits found");
    } else {
        let _ = writeln!(
            s,
            "  cgroup ({}{}): CPUs {}, memory nodes {}",
            cg.version,
            cg.path.as_ref().map(|p| format!(" {p}")).unwrap_or_default(),
            set(&cg.cpus),
            set(&cg.mems)
        );
    }
    if t.live {
        let _ = writeln!(s, "  sched_getaffinity: CPUs {}", set(&cg.affinity));
    }
    let _ = writeln!(
        s,
        "  {}",
        if cg.restricts {
            "this process may use fewer CPUs or nodes than the machine has"
        } else {
            "no restriction: this process may use every CPU and node"
        }
    );
}

/// The NUMA-related kernel command-line options.
fn cmdline(s: &mut String, t: &Topology) {
    match &t.cmdline.raw {
        None => {
            let _ = writeln!(s, "\nKernel command line: not available");
        }
        Some(_) if t.cmdline.options.is_empty() => {
            let _ = writeln!(s, "\nKernel command line: no NUMA-related options");
        }
        Some(_) => {
            let opts: Vec<String> = t
                .cmdline
                .options
                .iter()
                .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k}={v}") })
                .collect();
            let _ = writeln!(s, "\nKernel command line (NUMA-related): {}", opts.join(" "));
        }
    }
}

/// What discovery warned about, each once: the memory the nodes hold
/// against the system's is said beside the sizes at the top, not again.
fn warnings(s: &mut String, t: &Topology) {
    let shown = t.nodes_short_of_system().is_some();
    let listed: Vec<_> = t
        .warnings
        .iter()
        .filter(|w| !(shown && w.problem.starts_with(topo::NODES_SHORT_OF_SYSTEM)))
        .collect();
    if !listed.is_empty() {
        let _ = writeln!(s, "\nWarnings");
        for w in listed {
            let _ = writeln!(s, "  - {w}");
        }
    }
}

fn hugepages(n: &Node) -> String {
    let v: Vec<String> = n
        .hugepages
        .iter()
        .map(|h| format!("{}: {}/{}", size(h.page_size_bytes), h.total, h.free))
        .collect();
    or_dash(v.join(", "))
}

/// The SLIT laid out like `numactl --hardware`.
fn distance_matrix(t: &Topology) -> String {
    let mut s = String::from("\nNode distances (SLIT, 10 = local):\n");
    if t.nodes.iter().any(|n| n.distances.len() != t.nodes.len()) {
        s.push_str("  not available\n");
        return s;
    }
    let w = t
        .nodes
        .iter()
        .flat_map(|n| n.distances.iter().map(|d| d.to_string().len()))
        .chain(t.nodes.iter().map(|n| n.id.to_string().len()))
        .max()
        .unwrap_or(2)
        .max(3);
    s.push_str("node");
    for n in &t.nodes {
        let _ = write!(s, " {:>w$}", n.id);
    }
    s.push('\n');
    for n in &t.nodes {
        let _ = write!(s, "{:>3}:", n.id);
        for d in &n.distances {
            let _ = write!(s, " {d:>w$}");
        }
        s.push('\n');
    }
    s
}

/// The distance tiers, one line each: distance, pairs, an example pair
/// and the groups of nodes joined by every distance up to the tier's.
fn distance_tiers(t: &Topology) -> String {
    if t.nodes.len() < 2 || t.distance_tiers.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nDistance tiers (nodes grouped by every distance up to the tier's, as hwloc does):\n",
    );
    let w = t.distance_tiers.iter().map(|x| x.distance.to_string().len()).max().unwrap_or(2);
    for x in &t.distance_tiers {
        let groups = if x.groups.iter().all(|g| g.len() == 1) {
            "each node alone".to_string()
        } else if x.groups.len() == 1 {
            format!("one group {}", x.groups[0])
        } else {
            let mut g: Vec<String> = x.groups.iter().take(8).map(|g| g.to_list()).collect();
            if x.groups.len() > 8 {
                g.push(format!("... ({} groups)", x.groups.len()));
            }
            format!("groups {}", g.join(" | "))
        };
        let what = if x.example.from == x.example.to {
            "local".to_string()
        } else {
            format!("e.g. {}->{}", x.example.from, x.example.to)
        };
        let _ = writeln!(s, "  {:>w$}: {} pair(s), {what}; {groups}", x.distance, x.pairs);
    }
    s
}

/// An enum's JSON name (`nodes-per-package`, `amd`), for text output.
fn serde_plain<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}
