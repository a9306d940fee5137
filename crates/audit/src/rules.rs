//! The rules: each reads the topology, settings, memory population and
//! evidence, and says what is set, what the profile expects, why, and how
//! to change it.

use serde::{Deserialize, Serialize};
use topo::{DeviceClass, NumaModeKind, Topology};

use crate::evidence::Evidence;
use crate::profile::Profile;
use crate::read::Read;
use crate::settings::{IommuMode, Settings};
use crate::smbios::MemoryPopulation;

/// How much a finding matters, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Set as the profile wants.
    Ok,
    /// Worth knowing; a recommendation.
    Info,
    /// Absent or could not be read: numaprobe does not guess.
    Unknown,
    /// Costs performance for this profile.
    Warn,
    /// Costs a lot (e.g. the NUMA topology hidden).
    Critical,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Unknown => "unknown",
            Severity::Warn => "warn",
            Severity::Critical => "critical",
        }
    }
}

/// What a fix takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Needs {
    /// Nothing to change.
    Nothing,
    /// A command on the running system.
    Runtime,
    /// A kernel command-line change and a reboot.
    Reboot,
    /// A firmware (BIOS/UEFI) setting and a reboot.
    Bios,
    /// Moving or adding hardware (DIMMs, cards).
    Hardware,
}

/// One checked item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier, e.g. `kernel.zone_reclaim_mode`.
    pub id: String,
    pub severity: Severity,
    /// Short name for tables.
    pub title: String,
    /// What the machine has.
    pub found: String,
    /// What the profile wants.
    pub expected: String,
    /// Why, in one sentence.
    pub why: String,
    /// The exact command or BIOS setting (empty when nothing to do).
    pub fix: String,
    pub needs: Needs,
    /// Measured figures that support the finding.
    pub evidence: Option<String>,
}

/// What the rules look at.
pub struct Inputs<'a> {
    pub topology: &'a Topology,
    pub settings: &'a Settings,
    pub memory: &'a Read<MemoryPopulation>,
    pub evidence: &'a Evidence,
    pub profile: Profile,
}

type Rule = fn(&Inputs) -> Vec<Finding>;

/// Every rule, in report order.
pub const RULES: &[(&str, Rule)] = &[
    ("numa.mode", numa_mode),
    ("numa.sub_numa", sub_numa),
    ("numa.remote_penalty", remote_penalty),
    ("placement.profile", placement),
    ("kernel.numa_balancing", numa_balancing),
    ("kernel.zone_reclaim_mode", zone_reclaim),
    ("kernel.thp", thp),
    ("kernel.hugepages", hugepages),
    ("kernel.swappiness", swappiness),
    ("cpu.governor", governor),
    ("cpu.epp", epp),
    ("cpu.boost", boost),
    ("cpu.cstates", cstates),
    ("cpu.smt", smt),
    ("cpu.isolation", isolation),
    ("iommu.mode", iommu),
    ("memory.population", population),
    ("memory.peak_fraction", peak_fraction),
    ("memory.free", free_memory),
    ("devices.locality", device_locality),
    ("devices.gpu_affinity", gpu_affinity),
];

/// Runs every rule; findings sorted most severe first, stable within a severity.
pub fn check_all(i: &Inputs) -> Vec<Finding> {
    let mut all: Vec<Finding> = RULES.iter().flat_map(|(_, r)| r(i)).collect();
    all.sort_by_key(|f| std::cmp::Reverse(f.severity));
    all
}

struct F {
    f: Finding,
}

fn finding(id: &str, title: &str, severity: Severity) -> F {
    F {
        f: Finding {
            id: id.to_string(),
            severity,
            title: title.to_string(),
            found: String::new(),
            expected: String::new(),
            why: String::new(),
            fix: String::new(),
            needs: Needs::Nothing,
            evidence: None,
        },
    }
}

impl F {
    fn found(mut self, s: impl Into<String>) -> Self {
        self.f.found = s.into();
        self
    }
    fn expected(mut self, s: impl Into<String>) -> Self {
        self.f.expected = s.into();
        self
    }
    fn why(mut self, s: impl Into<String>) -> Self {
        self.f.why = s.into();
        self
    }
    fn fix(mut self, s: impl Into<String>, needs: Needs) -> Self {
        self.f.fix = s.into();
        self.f.needs = needs;
        self
    }
    fn evidence(mut self, e: Option<String>) -> Self {
        self.f.evidence = e;
        self
    }
    fn done(self) -> Vec<Finding> {
        vec![self.f]
    }
}

/// The finding for a setting that is absent or could not be read.
fn not_read<T>(id: &str, title: &str, what: &str, r: &Read<T>, expected: &str) -> Vec<Finding> {
    let found = match r {
        Read::Unreadable(reason) => format!("could not read {what}: {reason}"),
        _ => format!(
            "{what} is absent (this kernel does not have it, or the capture did not record it)"
        ),
    };
    let fix = match r {
        Read::Unreadable(reason) if reason.contains("ermission") => "run numaprobe audit as root",
        _ => "",
    };
    finding(id, title, Severity::Unknown)
        .found(found)
        .expected(expected)
        .why("numaprobe does not guess a setting it could not read.")
        .fix(fix, if fix.is_empty() { Needs::Nothing } else { Needs::Runtime })
        .done()
}

fn multi_node(t: &Topology) -> bool {
    t.cpu_nodes().count() > 1 || t.memory_nodes().count() > 1
}

fn latency_evidence(ev: &Evidence) -> Option<String> {
    ev.remote_local_latency_ratio.map(|r| {
        let worst = ev
            .worst_remote_local_latency_ratio
            .map(|w| format!(" (worst pair {w:.1}x)"))
            .unwrap_or_default();
        let bw = ev
            .remote_local_bandwidth_ratio
            .map(|b| format!("; remote bandwidth {:.0}% of local", b * 100.0))
            .unwrap_or_default();
        format!("measured remote latency {r:.1}x local{worst}{bw}")
    })
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

// ---------------------------------------------------------------- NUMA

fn numa_mode(i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    let m = &t.numa_mode;
    let id = "numa.mode";
    let title = "NUMA visibility";
    let packages = t.packages.len();
    let groups = i
        .evidence
        .latency_groups
        .filter(|&g| g > 1)
        .map(|g| format!("measured {g} distinct latency groups from CPUs to memory: the hardware is NUMA, only hidden"));
    let ev = groups.or_else(|| latency_evidence(i.evidence));
    let label = m.label.as_deref().map(|l| format!(" ({l})")).unwrap_or_default();
    let hidden_sev = match i.profile {
        Profile::General | Profile::Latency => Severity::Warn,
        _ => Severity::Critical,
    };
    match m.kind {
        NumaModeKind::DisabledByFirmware => {
            let bios = "BIOS: Memory > Node Interleaving = Disabled (or NUMA = Enabled; AMD: NPS1 or higher), then reboot";
            // Without the kernel command line numa=off is not ruled out.
            let (found, fix) = if i.settings.cmdline.is_value() {
                (
                    format!("{packages} packages but one node with CPUs, and no numa=off on the kernel line: firmware memory interleaving"),
                    bios.to_string(),
                )
            } else {
                (
                    format!("{packages} packages but one node with CPUs; the kernel command line could not be read, so numa=off is not ruled out (otherwise: firmware memory interleaving)"),
                    format!("if /proc/cmdline has numa=off, remove it and reboot; otherwise {bios}"),
                )
            };
            finding(id, title, hidden_sev)
                .found(format!("{found} [{}]", m.reason))
                .expected("NUMA enabled in firmware: at least one node per package")
                .why("Interleaving spreads every page across sockets, so each access pays a mix of local and remote latency and the OS can no longer place memory near its threads.")
                .fix(fix, Needs::Bios)
                .evidence(ev)
                .done()
        }
        NumaModeKind::DisabledByKernel => finding(id, title, hidden_sev)
            .found(format!("{packages} packages but one NUMA node: numa=off on the kernel command line"))
            .expected("no numa=off: the kernel sees the real nodes")
            .why("numa=off hides the topology from the kernel but not from the hardware: remote accesses and their jitter remain, and nothing can place memory locally any more.")
            .fix("remove numa=off from the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub or grub2-mkconfig) and reboot", Needs::Reboot)
            .evidence(ev)
            .done(),
        NumaModeKind::Fake => finding(id, title, Severity::Warn)
            .found(format!("numa=fake on the kernel command line: {} emulated nodes", t.nodes.len()))
            .expected("real NUMA nodes only (numa=fake is for testing)")
            .why("Emulated nodes have no latency or bandwidth difference, so placement decisions based on them are meaningless.")
            .fix("remove numa=fake=... from the kernel command line and reboot", Needs::Reboot)
            .done(),
        NumaModeKind::NodesSpanPackages => finding(id, title, Severity::Warn)
            .found(format!("NUMA nodes that span several packages: {}", m.reason))
            .expected("each node inside one package")
            .why("A node spanning sockets usually means a broken firmware SRAT, so the kernel's placement puts 'local' memory on the other socket.")
            .fix("update the BIOS/firmware; check the BIOS NUMA and memory interleaving settings", Needs::Bios)
            .done(),
        NumaModeKind::Unknown => finding(id, title, Severity::Unknown)
            .found(format!("no NUMA information: {}", m.reason))
            .expected("a node directory under /sys/devices/system/node")
            .why("Without node information numaprobe cannot tell whether NUMA is off or merely not exposed, so it does not guess.")
            .done(),
        NumaModeKind::SingleNode | NumaModeKind::NodePerPackage | NumaModeKind::NodesPerPackage => {
            finding(id, title, Severity::Ok)
                .found(format!("{packages} package(s), {} node(s){label}: {}", t.nodes.len(), m.reason))
                .expected("the kernel sees the hardware's NUMA nodes")
                .why("The OS can place memory next to the threads that use it.")
                .evidence(latency_evidence(i.evidence))
                .done()
        }
    }
}

fn sub_numa(i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    let m = &t.numa_mode;
    let id = "numa.sub_numa";
    let title = "Nodes per package (SNC/NPS)";
    let per = m.nodes_per_package.unwrap_or(1);
    let label = m.label.clone().unwrap_or_else(|| format!("{per} nodes per package"));
    match m.kind {
        NumaModeKind::NodesPerPackage => {
            let found = format!("{label}: {} nodes on {} packages", t.cpu_nodes().count(), t.packages.len());
            let bios = "BIOS: Sub-NUMA Clustering = Disabled (Intel) or NUMA nodes per socket = NPS1 (AMD)";
            match i.profile {
                Profile::Database => finding(id, title, Severity::Warn)
                    .found(found)
                    .expected("SNC off / NPS1: one node per package")
                    .why("A large OLTP buffer pool and its threads span the socket anyway, so splitting the socket into nodes only adds remote accesses within it.")
                    .fix(bios, Needs::Bios)
                    .done(),
                Profile::Hpc | Profile::Latency => finding(id, title, Severity::Ok)
                    .found(found)
                    .expected("SNC/NPS > 1 with one process per node")
                    .why("Smaller nodes give each process nearer memory controllers: lower local latency and more local bandwidth when the code keeps its data local.")
                    .done(),
                Profile::Virtualization => finding(id, title, Severity::Info)
                    .found(found)
                    .expected("each guest fits in one (smaller) node, or SNC off / NPS1 for guests larger than a node")
                    .why("A guest that spans nodes sees remote memory it cannot know about unless its virtual NUMA topology mirrors the host's.")
                    .fix(format!("size and pin guests per node (libvirt <numatune mode='strict'> and vCPU pinning), or {bios}"), Needs::Runtime)
                    .done(),
                Profile::AiTraining => finding(id, title, Severity::Info)
                    .found(found)
                    .expected("each GPU's process pinned to its GPU's node (or NPS1/SNC off for simpler pinning)")
                    .why("With several nodes per socket, data loaders must sit on the GPU's own node to avoid crossing the socket's mesh.")
                    .fix(format!("pin each rank with numactl --cpunodebind=<gpu node> --membind=<gpu node>, or {bios}"), Needs::Runtime)
                    .done(),
                Profile::General => finding(id, title, Severity::Info)
                    .found(found)
                    .expected("SNC/NPS > 1 only for NUMA-aware software")
                    .why("Software that is not NUMA-aware sees more remote accesses when a socket is split into several nodes.")
                    .fix(format!("keep it when applications bind to nodes; otherwise {bios}"), Needs::Bios)
                    .done(),
            }
        }
        NumaModeKind::NodePerPackage | NumaModeKind::SingleNode if i.profile == Profile::Hpc => {
            finding(id, title, Severity::Info)
                .found(format!("one node per package ({} package(s))", t.packages.len()))
                .expected("SNC2/SNC4 (Intel) or NPS2/NPS4 (AMD) with one rank per node, when the code has known locality")
                .why("Smaller nodes give each MPI rank its own memory controllers and lower local latency, which NUMA-aware codes turn into bandwidth.")
                .fix("BIOS: Sub-NUMA Clustering = SNC2/SNC4 (Intel) or NUMA nodes per socket = NPS2/NPS4 (AMD); run one rank per node", Needs::Bios)
                .done()
        }
        _ => Vec::new(),
    }
}

fn remote_penalty(i: &Inputs) -> Vec<Finding> {
    let Some(r) = i.evidence.remote_local_latency_ratio else { return Vec::new() };
    let id = "numa.remote_penalty";
    let title = "Remote access penalty";
    let ev = latency_evidence(i.evidence);
    if r < 1.3 {
        return finding(id, title, Severity::Ok)
            .found(format!("remote latency {r:.1}x local"))
            .expected("below 1.3x: placement matters little")
            .why("A small remote penalty means unbound processes lose little.")
            .evidence(ev)
            .done();
    }
    let sev = match i.profile {
        Profile::Database | Profile::Hpc | Profile::Latency => Severity::Warn,
        _ => Severity::Info,
    };
    finding(id, title, sev)
        .found(format!("remote latency {r:.1}x local: bind instances to nodes"))
        .expected("latency-critical work bound to one node")
        .why("Every access that lands on another node pays the measured penalty, so unbound processes run measurably slower.")
        .fix("numactl --cpunodebind=N --membind=N <command> (or the service's own NUMA binding)", Needs::Runtime)
        .evidence(ev)
        .done()
}

fn placement(i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    if !multi_node(t) {
        return Vec::new();
    }
    let id = "placement.profile";
    let title = "Placement for this profile";
    let nodes = t.cpu_nodes().map(|n| n.id.to_string()).collect::<Vec<_>>().join(", ");
    let mut ev = latency_evidence(i.evidence);
    if let Some(r) = i.evidence.interleave_local_ratio {
        let s = format!("interleaved bandwidth {:.0}% of the best local", r * 100.0);
        ev = Some(ev.map_or(s.clone(), |e| format!("{e}; {s}")));
    }
    let (expected, why, fix) = match i.profile {
        Profile::Hpc => (
            "one MPI rank (or process) per node, threads bound to cores",
            "Ranks that stay on their node read only local memory, which gives the highest aggregate bandwidth.",
            "mpirun --map-by numa --bind-to core (Open MPI), OMP_PLACES=cores OMP_PROC_BIND=close".to_string(),
        ),
        Profile::Database => (
            "each instance bound to one node (CPUs and memory), zone_reclaim_mode=0",
            "An instance confined to a node never pays remote latency on its buffer pool.",
            format!("numactl --cpunodebind=N --membind=N <db server> for node N in {{{nodes}}}, or the database's own NUMA settings"),
        ),
        Profile::Virtualization => (
            "NUMA-aware guest placement: each guest's vCPUs and memory on one host node",
            "A guest whose memory sits on another node than its vCPUs pays remote latency on every access without knowing it.",
            "libvirt: <numatune><memory mode='strict' nodeset='N'/></numatune> with <vcpupin> on node N's CPUs (or numad)".to_string(),
        ),
        Profile::AiTraining => (
            "each GPU's training process and data loaders on the GPU's node",
            "Pinned host buffers and loader threads near the GPU keep host-to-device copies off the socket interconnect.",
            "numactl --cpunodebind=<gpu node> --membind=<gpu node> per rank (see devices.gpu_affinity)".to_string(),
        ),
        Profile::Latency => (
            "the service pinned to isolated cores on the node of its NIC, memory bound to that node",
            "Keeping the request path on one node avoids remote memory and cross-socket interrupts on every request.",
            "taskset -c <isolated cpus on NIC node> numactl --membind=<NIC node> <service>; steer NIC IRQs to that node".to_string(),
        ),
        Profile::General => (
            "large processes bound to a node, or numa_balancing=1 for unbound ones",
            "Processes larger than one node's memory or CPUs are best interleaved, smaller ones bound.",
            format!("numactl --cpunodebind=N --membind=N <command> for node N in {{{nodes}}}; numactl --interleave=all for memory-bound jobs wider than a node"),
        ),
    };
    finding(id, title, Severity::Info)
        .found(format!("{} nodes with CPUs ({nodes})", t.cpu_nodes().count()))
        .expected(expected)
        .why(why)
        .fix(fix, Needs::Runtime)
        .evidence(ev)
        .done()
}

// ---------------------------------------------------------------- kernel

fn numa_balancing(i: &Inputs) -> Vec<Finding> {
    let id = "kernel.numa_balancing";
    let title = "Automatic NUMA balancing";
    let want_on = matches!(i.profile, Profile::General | Profile::Virtualization);
    let expected = if want_on {
        "1 (unless every process is bound)"
    } else {
        "0 (processes are bound explicitly)"
    };
    let v = match &i.settings.numa_balancing {
        Read::Value(v) => *v,
        other => {
            if !multi_node(i.topology) {
                return Vec::new();
            }
            return not_read(id, title, "kernel.numa_balancing", other, expected);
        }
    };
    let found = format!("kernel.numa_balancing = {v}");
    if !multi_node(i.topology) {
        return finding(id, title, Severity::Ok)
            .found(format!("{found} (single node: no effect)"))
            .expected("anything: one node")
            .why("With one node there is nothing to balance.")
            .done();
    }
    let ev = latency_evidence(i.evidence);
    match (v != 0, want_on) {
        (true, false) => finding(id, title, Severity::Warn)
            .found(found)
            .expected(expected)
            .why("NUMA balancing unmaps pages to sample accesses and migrates them, which adds latency spikes to workloads that are already bound to nodes.")
            .fix("sysctl -w kernel.numa_balancing=0 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
            .evidence(ev)
            .done(),
        (false, true) => finding(id, title, Severity::Info)
            .found(found)
            .expected(expected)
            .why("Without NUMA balancing, unbound processes keep their pages where they were first touched, often on a remote node.")
            .fix("sysctl -w kernel.numa_balancing=1 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
            .evidence(ev)
            .done(),
        _ => finding(id, title, Severity::Ok)
            .found(found)
            .expected(expected)
            .why(if want_on {
                "Unbound processes get their pages migrated towards the CPUs that use them."
            } else {
                "Bound workloads are not disturbed by page sampling and migration."
            })
            .done(),
    }
}

fn zone_reclaim(i: &Inputs) -> Vec<Finding> {
    let id = "kernel.zone_reclaim_mode";
    let title = "Zone reclaim";
    let expected = if i.profile == Profile::Hpc {
        "0 (1 acceptable for strictly node-local HPC jobs)"
    } else {
        "0"
    };
    let v = match &i.settings.zone_reclaim_mode {
        Read::Value(v) => *v,
        other => {
            if !multi_node(i.topology) {
                return Vec::new();
            }
            return not_read(id, title, "vm.zone_reclaim_mode", other, expected);
        }
    };
    let found = format!("vm.zone_reclaim_mode = {v}");
    if v == 0 || !multi_node(i.topology) || i.profile == Profile::Hpc {
        return finding(id, title, Severity::Ok)
            .found(found)
            .expected(expected)
            .why("Allocations fall back to another node instead of reclaiming the local one.")
            .done();
    }
    let sev = if i.profile == Profile::Database { Severity::Critical } else { Severity::Warn };
    finding(id, title, sev)
        .found(found)
        .expected(expected)
        .why("zone_reclaim_mode makes the kernel drop page cache (and possibly write back) on the local node before allocating remotely, which stalls database and file-serving workloads.")
        .fix("sysctl -w vm.zone_reclaim_mode=0 (persist in /etc/sysctl.d/90-numa.conf)", Needs::Runtime)
        .done()
}

fn thp(i: &Inputs) -> Vec<Finding> {
    let mut out = Vec::new();
    let p = i.profile;
    // enabled
    let id = "kernel.thp_enabled";
    let title = "Transparent huge pages";
    let (expected, ok): (&str, &[&str]) = match p {
        Profile::Hpc | Profile::AiTraining | Profile::Virtualization => ("always", &["always"]),
        Profile::Database | Profile::Latency => ("madvise or never", &["madvise", "never"]),
        Profile::General => ("madvise or always", &["madvise", "always"]),
    };
    match &i.settings.thp_enabled {
        Read::Value(v) => {
            let found = format!("transparent_hugepage/enabled = {v}");
            if ok.contains(&v.as_str()) {
                out.extend(
                    finding(id, title, Severity::Ok)
                        .found(found)
                        .expected(expected)
                        .why("Huge pages are used where this workload benefits from them.")
                        .done(),
                );
            } else {
                let (sev, why) = match p {
                    Profile::Database | Profile::Latency => (Severity::Warn, "With THP always, page faults may stall on compaction and khugepaged collapses pages in the background, which shows as latency spikes (most database vendors advise madvise or never)."),
                    _ => (Severity::Info, "Large heaps and arrays touched sequentially get fewer TLB misses with huge pages, which THP always provides without code changes."),
                };
                out.extend(
                    finding(id, title, sev)
                        .found(found)
                        .expected(expected)
                        .why(why)
                        .fix(format!("echo {} > /sys/kernel/mm/transparent_hugepage/enabled (persist: transparent_hugepage={} on the kernel line)", expected.split(' ').next().unwrap_or("madvise"), expected.split(' ').next().unwrap_or("madvise")), Needs::Runtime)
                        .done(),
                );
            }
        }
        other => out.extend(not_read(id, title, "transparent_hugepage/enabled", other, expected)),
    }
    // defrag
    let id = "kernel.thp_defrag";
    let title = "THP defrag";
    let expected = "defer, defer+madvise or madvise (not always)";
    match &i.settings.thp_defrag {
        Read::Value(v) if v == "always" => {
            let sev = match p {
                Profile::Database | Profile::Latency | Profile::Virtualization => Severity::Warn,
                _ => Severity::Info,
            };
            out.extend(
                finding(id, title, sev)
                    .found(format!("transparent_hugepage/defrag = {v}"))
                    .expected(expected)
                    .why("defrag=always makes page faults compact memory synchronously when no huge page is free, which stalls the faulting thread for milliseconds.")
                    .fix("echo defer+madvise > /sys/kernel/mm/transparent_hugepage/defrag", Needs::Runtime)
                    .done(),
            );
        }
        Read::Value(v) => out.extend(
            finding(id, title, Severity::Ok)
                .found(format!("transparent_hugepage/defrag = {v}"))
                .expected(expected)
                .why("Page faults do not stall on synchronous compaction.")
                .done(),
        ),
        other => out.extend(not_read(id, title, "transparent_hugepage/defrag", other, expected)),
    }
    out
}

fn hugepages(i: &Inputs) -> Vec<Finding> {
    let id = "kernel.hugepages";
    let title = "Huge pages per node";
    let wants = matches!(i.profile, Profile::Database | Profile::Virtualization);
    let expected = if wants {
        "reserved on every node the instances or guests are bound to, evenly"
    } else {
        "none needed; if reserved, evenly across nodes"
    };
    let hp = match &i.settings.hugepages {
        Read::Value(v) => v,
        other => {
            return if wants {
                not_read(id, title, "per-node huge page counts", other, expected)
            } else {
                Vec::new()
            }
        }
    };
    let mem_nodes: Vec<u32> = i.topology.memory_nodes().map(|n| n.id).collect();
    let mut sizes: Vec<u64> = hp.iter().map(|h| h.page_size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut reserved_any = false;
    let mut uneven = Vec::new();
    let mut parts = Vec::new();
    for size in sizes {
        let per: Vec<(u32, u64, u64)> = hp
            .iter()
            .filter(|h| {
                h.page_size_bytes == size && (mem_nodes.is_empty() || mem_nodes.contains(&h.node))
            })
            .map(|h| (h.node, h.total, h.free))
            .collect();
        let total: u64 = per.iter().map(|p| p.1).sum();
        if total == 0 {
            continue;
        }
        reserved_any = true;
        let size_s = if size >= 1 << 30 {
            format!("{} GiB", size >> 30)
        } else {
            format!("{} MiB", size >> 20)
        };
        parts.push(format!(
            "{size_s}: {}",
            per.iter()
                .map(|(n, t, f)| format!("node {n} {t} ({f} free)"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let max = per.iter().map(|p| p.1).max().unwrap_or(0);
        let min = per.iter().map(|p| p.1).min().unwrap_or(0);
        if per.len() > 1 && (min == 0 || max as f64 > 1.5 * min as f64) {
            uneven.push(size_s);
        }
    }
    if !reserved_any {
        return if wants {
            finding(id, title, Severity::Info)
                .found("no huge pages reserved")
                .expected(expected)
                .why("Reserved huge pages on the right node back a buffer pool or guest memory with no TLB pressure and no fragmentation risk at start-up.")
                .fix("echo N > /sys/devices/system/node/nodeX/hugepages/hugepages-2048kB/nr_hugepages for each node X (or hugepagesz=1G hugepages=N on the kernel line)", Needs::Runtime)
                .done()
        } else {
            finding(id, title, Severity::Ok)
                .found("no huge pages reserved")
                .expected(expected)
                .why("Nothing is withheld from normal allocations.")
                .done()
        };
    }
    if !uneven.is_empty() {
        let sev = if wants { Severity::Warn } else { Severity::Info };
        return finding(id, title, sev)
            .found(format!("uneven reservation ({}): {}", uneven.join(", "), parts.join("; ")))
            .expected(expected)
            .why("An instance bound to a node with few reserved huge pages falls back to small pages or to another node's huge pages, which are remote.")
            .fix("set each node's count: echo N > /sys/devices/system/node/nodeX/hugepages/hugepages-<size>kB/nr_hugepages", Needs::Runtime)
            .done();
    }
    finding(id, title, Severity::Ok)
        .found(parts.join("; "))
        .expected(expected)
        .why("Each node holds its share of huge pages.")
        .done()
}

fn swappiness(i: &Inputs) -> Vec<Finding> {
    let id = "kernel.swappiness";
    let title = "Swappiness";
    let cares = matches!(i.profile, Profile::Database | Profile::Latency);
    if !cares {
        return Vec::new();
    }
    let expected = "1 to 10 when swap is present";
    let v = match &i.settings.swappiness {
        Read::Value(v) => *v,
        other => return not_read(id, title, "vm.swappiness", other, expected),
    };
    let swap = i.settings.swap_total_bytes.value().copied();
    let found = format!(
        "vm.swappiness = {v}, swap {}",
        swap.map(gib).unwrap_or_else(|| "size unknown".to_string())
    );
    if v <= 10 || swap == Some(0) {
        return finding(id, title, Severity::Ok)
            .found(found)
            .expected(expected)
            .why("The kernel prefers dropping page cache to swapping the workload's memory.")
            .done();
    }
    let sev = if i.profile == Profile::Database { Severity::Warn } else { Severity::Info };
    finding(id, title, sev)
        .found(found)
        .expected(expected)
        .why("With swap present, a high swappiness lets the kernel swap out cold parts of a buffer pool or heap, and the next access waits on disk.")
        .fix("sysctl -w vm.swappiness=1 (persist in /etc/sysctl.d/)", Needs::Runtime)
        .done()
}

// ---------------------------------------------------------------- CPU

fn governor(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.governor";
    let title = "CPU frequency governor";
    let wants_perf = !matches!(i.profile, Profile::General);
    let expected =
        if wants_perf { "performance" } else { "any (schedutil/ondemand/powersave are fine)" };
    let cf = &i.settings.cpufreq;
    let g = match &cf.governor {
        Read::Value(g) => g,
        Read::Absent => {
            return finding(id, title, Severity::Unknown)
                .found("no cpufreq: frequency is managed by firmware or a hypervisor (or the capture did not record it)")
                .expected(expected)
                .why("Without cpufreq the OS cannot set the governor; the BIOS power profile decides.")
                .fix(if wants_perf { "BIOS: System Profile / Power Policy = Performance (or OS control)" } else { "" }, if wants_perf { Needs::Bios } else { Needs::Nothing })
                .done()
        }
        other => return not_read(id, title, "scaling_governor", other, expected),
    };
    let driver = cf.driver.value().map(|d| d.describe()).unwrap_or_else(|| "unknown".into());
    let found = format!("{} (driver {driver})", g.describe());
    if !wants_perf || g.uniform() == Some("performance") {
        return finding(id, title, Severity::Ok)
            .found(found)
            .expected(expected)
            .why("The governor suits this profile.")
            .done();
    }
    let sev = if i.profile == Profile::Virtualization { Severity::Info } else { Severity::Warn };
    finding(id, title, sev)
        .found(found)
        .expected(expected)
        .why(match i.profile {
            Profile::Latency => "Dynamic governors lower the clock between requests and raise it only after load appears, so each burst starts slow.",
            _ => "Dynamic governors lag behind bursty load and lower the clock during memory-bound phases, which costs throughput and steadiness.",
        })
        .fix("cpupower frequency-set -g performance (or tuned-adm profile throughput-performance / latency-performance)", Needs::Runtime)
        .done()
}

fn epp(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.epp";
    let title = "Energy performance preference";
    let p = match &i.settings.cpufreq.energy_performance_preference {
        Read::Value(p) => p,
        Read::Absent => return Vec::new(),
        other => return not_read(id, title, "energy_performance_preference", other, "performance"),
    };
    let found = p.describe();
    let sev = match i.profile {
        _ if p.uniform() == Some("performance") => Severity::Ok,
        Profile::Latency | Profile::Hpc => Severity::Warn,
        Profile::Database | Profile::AiTraining | Profile::Virtualization => Severity::Info,
        Profile::General if p.has("power") || p.has("balance_power") => Severity::Info,
        Profile::General => Severity::Ok,
    };
    let expected = if i.profile == Profile::General {
        "default or balance_performance"
    } else {
        "performance"
    };
    if sev == Severity::Ok {
        return finding(id, title, sev)
            .found(found)
            .expected(expected)
            .why("The hardware favours speed as this profile wants.")
            .done();
    }
    finding(id, title, sev)
        .found(found)
        .expected(expected)
        .why("The EPP hint tells the CPU's own frequency control how much to trade speed for energy; power-leaning values ramp up late.")
        .fix("echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference", Needs::Runtime)
        .done()
}

fn boost(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.boost";
    let title = "Turbo / boost";
    let b = &i.settings.boost;
    let expected = if i.profile == Profile::Latency {
        "on (or off for the steadiest frequency)"
    } else {
        "on"
    };
    match b.enabled() {
        Read::Value(true) => finding(id, title, Severity::Ok)
            .found("enabled")
            .expected(expected)
            .why("Cores run above base clock when thermal headroom allows.")
            .done(),
        Read::Value(false) if i.profile == Profile::Latency => finding(id, title, Severity::Ok)
            .found("disabled")
            .expected(expected)
            .why("A fixed clock avoids frequency transitions on the request path, at some single-thread speed.")
            .done(),
        Read::Value(false) => finding(id, title, Severity::Info)
            .found("disabled")
            .expected(expected)
            .why("Turbo raises clock speed when thermal headroom allows; with it off every core stays at base clock.")
            .fix("echo 0 > /sys/devices/system/cpu/intel_pstate/no_turbo, or echo 1 > /sys/devices/system/cpu/cpufreq/boost; BIOS: Turbo Boost / Core Performance Boost = Enabled", Needs::Runtime)
            .done(),
        other => not_read(id, title, "the turbo/boost switch", &other, expected),
    }
}

/// Exit latency above which an idle state counts as deep, microseconds.
pub const DEEP_CSTATE_US: u64 = 10;

fn cstates(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.cstates";
    let title = "C-states";
    let s = &i.settings;
    let cmd: Vec<String> = ["intel_idle.max_cstate", "processor.max_cstate", "idle", "cpuidle.off"]
        .iter()
        .filter_map(|k| {
            s.cmdline_option(k)
                .map(|v| if v.is_empty() { k.to_string() } else { format!("{k}={v}") })
        })
        .collect();
    let cmd_s =
        if cmd.is_empty() { String::new() } else { format!("; kernel line: {}", cmd.join(" ")) };
    let expected = if i.profile == Profile::Latency {
        format!("no enabled idle state with exit latency above {DEEP_CSTATE_US} us")
    } else {
        "deep states allowed (they free power for turbo)".to_string()
    };
    let poll = s.cmdline_option("idle").as_deref() == Some("poll");
    let states = match &s.cpuidle.states {
        Read::Value(v) => v,
        other => {
            if poll && i.profile != Profile::Latency {
                return idle_poll(id, title, &expected);
            }
            return not_read(id, title, "cpuidle states", other, &expected);
        }
    };
    let ncpus = i.topology.cpus.len().max(1);
    let enabled: Vec<_> = states.iter().filter(|st| st.disabled_on.len() < ncpus).collect();
    let deep: Vec<_> = enabled.iter().filter(|st| st.exit_latency_us > DEEP_CSTATE_US).collect();
    let list = |v: &[&&crate::settings::IdleState]| {
        v.iter()
            .map(|st| format!("{} ({} us)", st.name, st.exit_latency_us))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let driver = s.cpuidle.driver.value().cloned().unwrap_or_else(|| "unknown".into());
    let found =
        format!("driver {driver}; enabled: {}{cmd_s}", list(&enabled.iter().collect::<Vec<_>>()));
    if i.profile == Profile::Latency && !deep.is_empty() {
        return finding(id, title, Severity::Warn)
            .found(format!("{found}; deep: {}", list(&deep)))
            .expected(expected)
            .why("A request that arrives at an idle core waits for the state's exit latency, tens to hundreds of microseconds for deep states.")
            .fix(format!("cpupower idle-set -D {DEEP_CSTATE_US} (runtime), or intel_idle.max_cstate=1 processor.max_cstate=1 on the kernel line, or BIOS: Package C-state limit = C0/C1"), Needs::Runtime)
            .done();
    }
    if poll && i.profile != Profile::Latency {
        return idle_poll(id, title, &expected);
    }
    finding(id, title, Severity::Ok)
        .found(found)
        .expected(expected)
        .why("The idle states suit this profile.")
        .done()
}

fn idle_poll(id: &str, title: &str, expected: &str) -> Vec<Finding> {
    finding(id, title, Severity::Info)
        .found("idle=poll on the kernel command line")
        .expected(expected)
        .why("idle=poll keeps idle cores spinning, which burns power, takes turbo headroom and steals cycles from SMT siblings.")
        .fix("remove idle=poll from the kernel command line and reboot", Needs::Reboot)
        .done()
}

fn smt(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.smt";
    let title = "SMT (Hyper-Threading)";
    let threads = i.topology.cpus.iter().map(|c| c.thread_siblings.len()).max().unwrap_or(0);
    let control = match &i.settings.smt.control {
        Read::Value(c) => c.clone(),
        Read::Absent if threads > 0 => {
            if threads > 1 {
                "on".into()
            } else {
                "off or not supported".into()
            }
        }
        other => return not_read(id, title, "smt/control", other, "on"),
    };
    let on = control == "on" || (control.starts_with("not") && threads > 1);
    let found = format!("smt/control = {control}, {threads} thread(s) per core");
    if control.starts_with("not") && threads <= 1 {
        return finding(id, title, Severity::Ok)
            .found(found)
            .expected("n/a")
            .why("This CPU has no SMT to configure.")
            .done();
    }
    if control == "off or not supported" && !matches!(i.profile, Profile::Latency | Profile::Hpc) {
        // No smt/control file and one thread per core: SMT disabled, or a
        // CPU without SMT. Do not guess which.
        return finding(id, title, Severity::Unknown)
            .found(format!("smt/control is absent and there is {threads} thread per core: SMT is off or this CPU has none"))
            .expected("on (where the CPU has SMT)")
            .why("numaprobe cannot tell a CPU without SMT from SMT disabled in the BIOS without smt/control, and does not guess.")
            .done();
    }
    match (i.profile, on) {
        (Profile::Latency, true) => finding(id, title, Severity::Info)
            .found(found)
            .expected("off, or latency-critical threads on cores whose sibling is idle")
            .why("SMT siblings share a core's caches and execution ports, so a busy sibling adds jitter to a latency-critical thread.")
            .fix("echo off > /sys/devices/system/cpu/smt/control (or nosmt on the kernel line; BIOS: Hyper-Threading = Disabled)", Needs::Runtime)
            .done(),
        (Profile::Latency, false) | (Profile::Hpc, _) => finding(id, title, Severity::Ok)
            .found(found)
            .expected(if i.profile == Profile::Hpc { "either (most codes run one rank per core)" } else { "off" })
            .why("SMT matters little for codes that run one thread per core.")
            .done(),
        (_, true) => finding(id, title, Severity::Ok).found(found).expected("on").why("SMT adds throughput to mixed and consolidated workloads.").done(),
        (_, false) => finding(id, title, Severity::Info)
            .found(found)
            .expected("on")
            .why("SMT off halves the hardware threads, which costs throughput for databases, guests and mixed services.")
            .fix("echo on > /sys/devices/system/cpu/smt/control (BIOS: Hyper-Threading / SMT = Enabled)", Needs::Runtime)
            .done(),
    }
}

fn isolation(i: &Inputs) -> Vec<Finding> {
    let id = "cpu.isolation";
    let title = "CPU isolation";
    let s = &i.settings;
    let expected = if i.profile == Profile::Latency {
        "isolcpus/nohz_full on the cores that run the service"
    } else {
        "none needed"
    };
    if !s.cmdline.is_value() {
        return if i.profile == Profile::Latency {
            not_read(id, title, "the kernel command line", &s.cmdline, expected)
        } else {
            Vec::new()
        };
    }
    let iso = s.isolcpus.value();
    let nohz = s.nohz_full.value();
    let found = format!(
        "isolcpus={}, nohz_full={}",
        iso.map(String::as_str).unwrap_or("(none)"),
        nohz.map(String::as_str).unwrap_or("(none)")
    );
    match (i.profile, iso.is_some() || nohz.is_some()) {
        (Profile::Latency, false) => finding(id, title, Severity::Info)
            .found(found)
            .expected(expected)
            .why("Isolated, tickless cores keep the scheduler, timer ticks and other tasks off the latency-critical threads.")
            .fix("add isolcpus=managed_irq,domain,<cpus> nohz_full=<cpus> rcu_nocbs=<cpus> to the kernel line (cores on the NIC's node), reboot, pin the service there", Needs::Reboot)
            .done(),
        (Profile::Latency, true) => finding(id, title, Severity::Ok).found(found).expected(expected).why("Latency-critical threads can run undisturbed.").done(),
        (_, true) => finding(id, title, Severity::Info)
            .found(found)
            .expected(expected)
            .why("Isolated CPUs get no load balancing: only processes pinned to them ever run there.")
            .fix("pin the intended work with taskset/numactl, or remove isolcpus/nohz_full from the kernel line", Needs::Reboot)
            .done(),
        (_, false) => finding(id, title, Severity::Ok).found(found).expected(expected).why("Every CPU is available to the scheduler.").done(),
    }
}

fn iommu(i: &Inputs) -> Vec<Finding> {
    let id = "iommu.mode";
    let title = "IOMMU mode";
    let io = &i.settings.iommu;
    if let Read::Unreadable(_) = io.units {
        return not_read(id, title, "/sys/class/iommu", &io.units, "pass-through");
    }
    let mode = io.mode();
    let cmd = if io.cmdline.is_empty() {
        String::new()
    } else {
        format!(
            " (kernel line: {})",
            io.cmdline.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
        )
    };
    let mode_s = match mode {
        IommuMode::Off => "no IOMMU active",
        IommuMode::Passthrough => "pass-through (identity domains)",
        IommuMode::Translated => "translated DMA",
        IommuMode::Unknown => "IOMMU present, domain type unknown",
    };
    let found = format!("{mode_s}{cmd}");
    let fast_io = matches!(i.profile, Profile::Latency | Profile::AiTraining | Profile::Hpc);
    match (mode, i.profile) {
        (IommuMode::Translated, _) if fast_io => finding(id, title, Severity::Warn)
            .found(found)
            .expected("pass-through (iommu=pt)")
            .why("Translated DMA costs an IOTLB lookup and map/unmap per buffer, which limits high packet rates and GPU/RDMA transfers.")
            .fix("add iommu=pt (and intel_iommu=on on Intel) to the kernel command line and reboot", Needs::Reboot)
            .done(),
        (IommuMode::Off, Profile::Virtualization) => finding(id, title, Severity::Warn)
            .found(found)
            .expected("IOMMU on (iommu=pt for host devices)")
            .why("Device passthrough to guests (VFIO, SR-IOV) needs an active IOMMU.")
            .fix("BIOS: VT-d / AMD-Vi (IOMMU) = Enabled; kernel line intel_iommu=on iommu=pt; reboot", Needs::Bios)
            .done(),
        (IommuMode::Unknown, _) if fast_io => finding(id, title, Severity::Unknown)
            .found(found)
            .expected("pass-through (iommu=pt)")
            .why("numaprobe could not read the IOMMU groups' domain type, so it does not guess.")
            .done(),
        _ => finding(id, title, Severity::Ok)
            .found(found)
            .expected(if fast_io { "pass-through or off" } else { "any" })
            .why("The IOMMU mode does not limit this profile.")
            .done(),
    }
}

// ---------------------------------------------------------------- memory

fn population(i: &Inputs) -> Vec<Finding> {
    let id = "memory.population";
    let title = "DIMM population";
    let expected = "every memory channel populated, identical DIMMs";
    let m = match i.memory {
        Read::Value(m) => m,
        Read::Absent => {
            return finding(id, title, Severity::Unknown)
                .found("no SMBIOS table (/sys/firmware/dmi/tables/DMI absent: firmware or hypervisor does not expose it, or the capture did not record it)")
                .expected(expected)
                .why("Without the DIMM records numaprobe cannot check channels or compute the theoretical peak, and does not guess.")
                .done()
        }
        other => return not_read(id, title, "the SMBIOS table", other, expected),
    };
    let populated: Vec<_> = m.populated().collect();
    if populated.is_empty() {
        return finding(id, title, Severity::Unknown)
            .found(format!("{} memory slot records, none populated{}", m.dimms.len(), if m.notes.is_empty() { String::new() } else { format!(": {}", m.notes.join("; ")) }))
            .expected(expected)
            .why("The firmware's records describe no installed module (common in virtual machines), so nothing can be checked.")
            .done();
    }
    let mut sizes: Vec<u64> = populated.iter().filter_map(|d| d.size_bytes).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let speeds: Vec<u32> = populated.iter().filter_map(|d| d.configured_speed_mts).collect();
    let types: std::collections::BTreeSet<&str> =
        populated.iter().filter_map(|d| d.memory_type.as_deref()).collect();
    let mut summary = format!(
        "{} of {} slots populated ({}), sizes {}, configured {} MT/s",
        populated.len(),
        m.dimms.len(),
        if types.is_empty() {
            "type unknown".to_string()
        } else {
            types.into_iter().collect::<Vec<_>>().join("/")
        },
        sizes.iter().map(|s| gib(*s)).collect::<Vec<_>>().join(" + "),
        match (speeds.iter().min(), speeds.iter().max()) {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(b)) => format!("{a}-{b}"),
            _ => "unknown".to_string(),
        }
    );
    for s in &m.sockets {
        summary.push_str(&format!(
            "; socket {}: {} of {} channels, {}{}",
            s.socket,
            s.populated_channels.len(),
            s.channels.len(),
            gib(s.total_bytes),
            s.peak_gbs.map(|p| format!(", peak {p:.1} GB/s")).unwrap_or_default()
        ));
    }
    let mut problems = Vec::new();
    for s in &m.sockets {
        let empty: Vec<&String> =
            s.channels.iter().filter(|c| !s.populated_channels.contains(c)).collect();
        if !empty.is_empty() {
            problems.push(format!(
                "socket {}: {} of {} channels empty ({})",
                s.socket,
                empty.len(),
                s.channels.len(),
                empty.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    if sizes.len() > 1 {
        problems.push(format!(
            "mixed DIMM sizes ({})",
            sizes.iter().map(|s| gib(*s)).collect::<Vec<_>>().join(", ")
        ));
    }
    let totals: Vec<u64> = m.sockets.iter().map(|s| s.total_bytes).collect();
    if totals.len() > 1 && totals.iter().min() != totals.iter().max() {
        problems.push(format!(
            "sockets hold different amounts ({})",
            totals.iter().map(|t| gib(*t)).collect::<Vec<_>>().join(" vs ")
        ));
    }
    let slow: Vec<_> = populated
        .iter()
        .filter(|d| matches!((d.speed_mts, d.configured_speed_mts), (Some(r), Some(c)) if c < r))
        .collect();
    let mut notes = m.notes.clone();
    if let Some(d) = slow.first() {
        notes.push(format!(
            "{} DIMM(s) run below their rating (e.g. {} MT/s rated, {} configured: CPU limit or two DIMMs per channel)",
            slow.len(),
            d.speed_mts.unwrap_or(0),
            d.configured_speed_mts.unwrap_or(0)
        ));
    }
    let found = if notes.is_empty() { summary } else { format!("{summary}; {}", notes.join("; ")) };
    if problems.is_empty() {
        return finding(id, title, if m.locator_scheme_known { Severity::Ok } else { Severity::Info })
            .found(found)
            .expected(expected)
            .why(if m.locator_scheme_known {
                "Every channel carries memory, so the socket can reach its full bandwidth."
            } else {
                "The slot names do not say which channel each DIMM is on, so empty channels cannot be checked."
            })
            .done();
    }
    let sev = if i.profile == Profile::Hpc || i.profile == Profile::AiTraining {
        Severity::Critical
    } else {
        Severity::Warn
    };
    finding(id, title, sev)
        .found(format!("{}; {found}", problems.join("; ")))
        .expected(expected)
        .why("Bandwidth scales with populated channels and interleaves evenly only over identical DIMMs: one real server lost half its bandwidth with 4 of 8 channels filled.")
        .fix("populate every channel of every socket with identical DIMMs (same size, rank and speed), one per channel first", Needs::Hardware)
        .evidence(fraction_text(i))
        .done()
}

/// (measured local GB/s, theoretical peak GB/s, fraction) for the best-measured node.
fn fraction_of_peak(i: &Inputs) -> Option<(f64, f64, f64)> {
    let ev = i.evidence;
    if let Some(f) = ev.fraction_of_peak {
        return Some((f64::NAN, f64::NAN, f));
    }
    let m = i.memory.value()?;
    ev.local_best_gbs_per_node
        .iter()
        .filter_map(|(&node, &gbs)| {
            let node_peak = m.node_peak_gbs(i.topology, node)?;
            Some((gbs, node_peak, gbs / node_peak))
        })
        .max_by(|a, b| a.2.total_cmp(&b.2))
}

fn fraction_text(i: &Inputs) -> Option<String> {
    fraction_of_peak(i).map(|(gbs, peak, f)| {
        if gbs.is_nan() {
            format!("measured {:.0}% of theoretical peak", f * 100.0)
        } else {
            format!("measured {:.0}% of theoretical peak ({gbs:.1} of {peak:.1} GB/s)", f * 100.0)
        }
    })
}

/// Below this fraction of the theoretical peak, a local bandwidth figure is suspicious.
pub const LOW_PEAK_FRACTION: f64 = 0.6;

fn peak_fraction(i: &Inputs) -> Vec<Finding> {
    let Some((_, _, f)) = fraction_of_peak(i) else { return Vec::new() };
    let id = "memory.peak_fraction";
    let title = "Measured vs theoretical bandwidth";
    let ev = fraction_text(i);
    if f >= LOW_PEAK_FRACTION {
        return finding(id, title, Severity::Ok)
            .found(format!("{:.0}% of theoretical peak", f * 100.0))
            .expected(format!(
                "at least {:.0}% (STREAM-like kernels reach 60-85%)",
                LOW_PEAK_FRACTION * 100.0
            ))
            .why("The memory system delivers what its DIMMs and channels allow.")
            .evidence(ev)
            .done();
    }
    finding(id, title, Severity::Warn)
        .found(format!("measured {:.0}% of theoretical peak: check DIMM population", f * 100.0))
        .expected(format!("at least {:.0}% (STREAM-like kernels reach 60-85%)", LOW_PEAK_FRACTION * 100.0))
        .why("Far below peak usually means empty or mismatched channels, memory running below its rated speed, or a power profile that throttles the uncore.")
        .fix("check DIMM population (memory.population), BIOS memory speed and the power profile (BIOS: System Profile = Performance)", Needs::Bios)
        .evidence(ev)
        .done()
}

/// Free fraction under which a node counts as nearly full.
pub const NEARLY_FULL: f64 = 0.10;
/// Free-fraction spread between nodes that counts as imbalance.
pub const IMBALANCE: f64 = 0.40;

fn free_memory(i: &Inputs) -> Vec<Finding> {
    let id = "memory.free";
    let title = "Free memory per node";
    let nodes: Vec<_> = i.topology.memory_nodes().collect();
    if nodes.is_empty() {
        return Vec::new();
    }
    let frac = |n: &topo::Node| n.mem_free_bytes as f64 / n.mem_total_bytes as f64;
    let found_all = nodes
        .iter()
        .map(|n| {
            format!(
                "node {}: {} free of {} ({:.0}%)",
                n.id,
                gib(n.mem_free_bytes),
                gib(n.mem_total_bytes),
                frac(n) * 100.0
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let expected = format!(
        "every node above {:.0}% free, nodes within {:.0} points of each other",
        NEARLY_FULL * 100.0,
        IMBALANCE * 100.0
    );
    let full: Vec<String> =
        nodes.iter().filter(|n| frac(n) < NEARLY_FULL).map(|n| n.id.to_string()).collect();
    let fmax = nodes.iter().map(|n| frac(n)).fold(0.0, f64::max);
    let fmin = nodes.iter().map(|n| frac(n)).fold(1.0, f64::min);
    if !full.is_empty() {
        return finding(id, title, Severity::Warn)
            .found(format!("node(s) {} nearly full; {found_all}", full.join(", ")))
            .expected(expected)
            .why("Allocations meant for a full node reclaim memory or fall back to a remote node, so bound processes silently run remote.")
            .fix("numastat -m to find the consumers; sync; echo 1 > /proc/sys/vm/drop_caches to drop page cache; rebind or spread the large processes", Needs::Runtime)
            .done();
    }
    if nodes.len() > 1 && fmax - fmin > IMBALANCE {
        return finding(id, title, Severity::Info)
            .found(format!("uneven: {found_all}"))
            .expected(expected)
            .why("One node filling before the others means new allocations there will soon go remote.")
            .fix("numastat -m to see which processes or page cache fill the node; rebalance bindings", Needs::Runtime)
            .done();
    }
    finding(id, title, Severity::Ok)
        .found(found_all)
        .expected(expected)
        .why("Every node has room for local allocations.")
        .done()
}

// ---------------------------------------------------------------- devices

fn class_name(c: DeviceClass) -> &'static str {
    match c {
        DeviceClass::Gpu => "GPU",
        DeviceClass::Nic => "NIC",
        DeviceClass::Infiniband => "InfiniBand",
        DeviceClass::Nvme => "NVMe",
        DeviceClass::Storage => "storage",
        DeviceClass::Accelerator => "accelerator",
        DeviceClass::Other => "device",
    }
}

fn relevant(c: DeviceClass) -> bool {
    matches!(
        c,
        DeviceClass::Gpu
            | DeviceClass::Nic
            | DeviceClass::Infiniband
            | DeviceClass::Nvme
            | DeviceClass::Accelerator
    )
}

/// The device's node: `numa_node`, else the one node holding all its local CPUs.
fn device_node(t: &Topology, d: &topo::PciDevice) -> Option<u32> {
    d.numa_node.or_else(|| {
        let local = d.local_cpus.as_ref().filter(|c| !c.is_empty())?;
        let mut nodes = t.cpu_nodes().filter(|n| local.is_subset(&n.cpus));
        let n = nodes.next()?;
        nodes.next().is_none().then_some(n.id)
    })
}

fn device_locality(i: &Inputs) -> Vec<Finding> {
    let id = "devices.locality";
    let title = "Device locality";
    let t = i.topology;
    let devs: Vec<_> = t.devices.iter().filter(|d| relevant(d.class)).collect();
    if devs.is_empty() {
        return Vec::new();
    }
    let multi = multi_node(t);
    let list = devs
        .iter()
        .map(|d| {
            format!(
                "{} {} on node {}",
                class_name(d.class),
                d.address,
                d.numa_node.map(|n| n.to_string()).unwrap_or_else(|| "unknown".into())
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut problems = Vec::new();
    for d in &devs {
        match d.numa_node {
            None if multi => problems.push(match device_node(t, d) {
                Some(n) => format!(
                    "{} {} has no node (numa_node -1; its local CPUs lie on node {n})",
                    class_name(d.class),
                    d.address
                ),
                None => format!("{} {} has no node (numa_node -1)", class_name(d.class), d.address),
            }),
            None => {}
            Some(n) => match t.node(n) {
                Some(node) if node.cpus.is_empty() => problems.push(format!(
                    "{} {} is on node {n}, which has no CPUs",
                    class_name(d.class),
                    d.address
                )),
                Some(node) if node.mem_total_bytes == 0 => problems.push(format!(
                    "{} {} is on node {n}, which has no memory",
                    class_name(d.class),
                    d.address
                )),
                Some(_) => {}
                None => problems.push(format!(
                    "{} {} names node {n}, which does not exist",
                    class_name(d.class),
                    d.address
                )),
            },
        }
    }
    let expected = "every device on a node that has CPUs and memory, reported by firmware";
    if problems.is_empty() {
        return finding(id, title, Severity::Ok)
            .found(list)
            .expected(expected)
            .why("Threads and buffers that serve each device can be placed on its node.")
            .done();
    }
    let gpu_problem = problems.iter().any(|p| p.starts_with("GPU"));
    let sev = if gpu_problem && i.profile == Profile::AiTraining {
        Severity::Critical
    } else {
        Severity::Warn
    };
    finding(id, title, sev)
        .found(format!("{}; {list}", problems.join("; ")))
        .expected(expected)
        .why("A device whose node has no CPUs or memory (or is unknown) forces the threads and buffers that feed it onto a remote node.")
        .fix("move the card to a slot wired to a CPU socket; on a missing node, update the BIOS (ACPI _PXM) and place the driver's threads by the device's local_cpulist", Needs::Hardware)
        .done()
}

fn gpu_affinity(i: &Inputs) -> Vec<Finding> {
    if i.profile != Profile::AiTraining {
        return Vec::new();
    }
    let id = "devices.gpu_affinity";
    let title = "CPUs nearest each GPU";
    let t = i.topology;
    let gpus: Vec<_> = t
        .devices
        .iter()
        .filter(|d| matches!(d.class, DeviceClass::Gpu | DeviceClass::Accelerator))
        .collect();
    if gpus.is_empty() {
        return finding(id, title, Severity::Info)
            .found("no GPU or accelerator found on the PCI bus")
            .expected("each GPU's process on the GPU's node")
            .why("Without a GPU there is nothing to pin to.")
            .done();
    }
    let allowed = t.cgroup.cpus.clone().or_else(|| t.cgroup.affinity.clone());
    let mut lines = Vec::new();
    let mut outside = Vec::new();
    let mut pins = Vec::new();
    for g in &gpus {
        let near = g
            .local_cpus
            .clone()
            .filter(|c| !c.is_empty())
            .or_else(|| g.numa_node.and_then(|n| t.node(n)).map(|n| n.cpus.clone()));
        let node = device_node(t, g).map(|n| n.to_string()).unwrap_or_else(|| "?".into());
        let what = class_name(g.class);
        match near {
            Some(cpus) if !cpus.is_empty() => {
                lines.push(format!("{what} {} (node {node}): CPUs {}", g.address, cpus.to_list()));
                pins.push(match device_node(t, g) {
                    Some(n) => {
                        format!("rank on {}: numactl --cpunodebind={n} --membind={n}", g.address)
                    }
                    None => format!("rank on {}: taskset -c {}", g.address, cpus.to_list()),
                });
                if let Some(a) = &allowed {
                    if a.intersection(&cpus).is_empty() {
                        outside.push(format!(
                            "{what} {}: CPUs {} not in the allowed set {}",
                            g.address,
                            cpus.to_list(),
                            a.to_list()
                        ));
                    }
                }
            }
            _ => lines.push(format!("{what} {} (node {node}): nearest CPUs unknown", g.address)),
        }
    }
    let fix = pins.join("; ");
    if !outside.is_empty() {
        return finding(id, title, Severity::Warn)
            .found(format!("{}; {}", outside.join("; "), lines.join("; ")))
            .expected("the CPUs nearest each GPU are among those this job may use")
            .why("A cgroup or affinity mask that excludes a GPU's local CPUs forces its data loaders and pinned buffers onto another node.")
            .fix(format!("allow the GPU-local CPUs in the job's cpuset (e.g. Slurm --gpu-bind=closest), then pin: {fix}"), Needs::Runtime)
            .done();
    }
    finding(id, title, Severity::Info)
        .found(lines.join("; "))
        .expected("each GPU's training process and loaders pinned to these CPUs and that node's memory")
        .why("Host-to-device copies from pinned memory on the GPU's node avoid the socket interconnect.")
        .fix(if fix.is_empty() { "pin each rank with taskset -c <the GPU's CPUs>".to_string() } else { fix }, Needs::Runtime)
        .done()
}
