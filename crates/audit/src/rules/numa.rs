//! The NUMA rules: is the topology visible, nodes per package (SNC/NPS on
//! x86, dies or the firmware's NUMA mode on Arm), the measured remote
//! penalty, the declared distances against the measured ones, and
//! placement advice for the profile.

use super::*;

pub(super) fn numa_mode(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    let m = &t.numa_mode;
    let packages = t.packages.len();
    let groups = i
        .evidence
        .latency_groups
        .filter(|&g| g > 1)
        .map(|g| format!("measured {g} distinct latency groups from CPUs to memory: the hardware is NUMA, only hidden"));
    let ev = groups.or_else(|| latency_evidence(i.evidence));
    let label = match (m.label_text(), m.confidence) {
        (Some(l), topo::Confidence::Ambiguous) => format!(" ({l}: ambiguous)"),
        (Some(l), _) => format!(" ({l})"),
        (None, _) => String::new(),
    };
    let hidden_sev = match i.profile {
        Profile::General | Profile::Latency => Severity::Warn,
        _ => Severity::Critical,
    };
    match m.kind {
        NumaModeKind::DisabledByFirmware => {
            let bios = if arm(t) {
                "firmware: turn its NUMA option on (memory interleaving across sockets off; the option's name is the vendor's), then reboot"
            } else {
                "BIOS: Memory > Node Interleaving = Disabled (or NUMA = Enabled; AMD: NPS1 or higher), then reboot"
            };
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
            rule.finding(hidden_sev)
                .found(format!("{found} [{}]", m.reason))
                .expected("NUMA enabled in firmware: at least one node per package")
                .why("Interleaving spreads every page across sockets, so each access pays a mix of local and remote latency and the OS can no longer place memory near its threads.")
                .fix(fix, Needs::Bios)
                .evidence(ev)
                .done()
        }
        NumaModeKind::DisabledByKernel => rule.finding(hidden_sev)
            .found(match t.firmware_numa.as_ref().and_then(|f| f.srat.found()) {
                Some(srat) if t.cmdline.get("numa") == Some("off") => format!(
                    "{packages} package(s) but one NUMA node: numa=off on the kernel command line, over a firmware that describes {} (ACPI SRAT)",
                    srat.config_text()
                ),
                Some(srat) => format!(
                    "{packages} package(s) but one NUMA node, while the firmware describes {} (ACPI SRAT): the kernel ignores them",
                    srat.config_text()
                ),
                None => format!("{packages} packages but one NUMA node: numa=off on the kernel command line"),
            })
            .expected("no numa=off: the kernel sees the real nodes")
            .why("numa=off hides the topology from the kernel but not from the hardware: remote accesses and their jitter remain, and nothing can place memory locally any more.")
            .fix("remove numa=off (or numa=noacpi, acpi=off) from the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub or grub2-mkconfig) and reboot", Needs::Reboot)
            .evidence(ev)
            .done(),
        NumaModeKind::Fake => rule.finding(Severity::Warn)
            .found(format!("numa=fake on the kernel command line: {} emulated nodes", t.nodes.len()))
            .expected("real NUMA nodes only (numa=fake is for testing)")
            .why("Emulated nodes have no latency or bandwidth difference, so placement decisions based on them are meaningless.")
            .fix("remove numa=fake=... from the kernel command line and reboot", Needs::Reboot)
            .done(),
        NumaModeKind::NodesSpanPackages => rule.finding(Severity::Warn)
            .found(format!("NUMA nodes that span several packages: {}", m.reason))
            .expected("each node inside one package")
            .why("A node spanning sockets usually means a broken firmware SRAT, so the kernel's placement puts 'local' memory on the other socket.")
            .fix("update the BIOS/firmware; check the BIOS NUMA and memory interleaving settings", Needs::Bios)
            .done(),
        NumaModeKind::Unknown => rule.finding(Severity::Unknown)
            .found(format!("no NUMA information: {}", m.reason))
            .expected("a node directory under /sys/devices/system/node")
            .why("Without node information numaprobe cannot tell whether NUMA is off or merely not exposed, so it does not guess.")
            .done(),
        NumaModeKind::PackagesUnknown => rule.finding(Severity::Unknown)
            .found(format!("{} nodes with CPUs, packages unknown: {}", t.cpu_nodes().count(), m.reason))
            .expected("package ids from the kernel (cpuN/topology/physical_package_id)")
            .why("Without package ids numaprobe cannot tell whether a node is a socket, part of one or several, so it does not guess.")
            .done(),
        NumaModeKind::SingleNode | NumaModeKind::NodePerPackage | NumaModeKind::NodesPerPackage => {
            rule.finding(Severity::Ok)
                .found(format!("{packages} package(s), {} node(s){label}: {}", t.nodes.len(), m.reason))
                .expected("the kernel sees the hardware's NUMA nodes")
                .why("The OS can place memory next to the threads that use it.")
                .evidence(latency_evidence(i.evidence))
                .done()
        }
    }
}

pub(super) fn sub_numa(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    let m = &t.numa_mode;
    let per = m.nodes_per_package.unwrap_or(1);
    let label = m.label_text().unwrap_or_else(|| format!("{per} nodes per package"));
    match m.kind {
        NumaModeKind::NodesPerPackage if arm(t) => arm_sub_numa(rule, i, &label),
        NumaModeKind::NodePerPackage | NumaModeKind::SingleNode if arm(t) => Vec::new(),
        NumaModeKind::NodesPerPackage => {
            let found = format!("{label}: {} nodes on {} packages", t.cpu_nodes().count(), t.packages.len());
            let bios = "BIOS: Sub-NUMA Clustering = Disabled (Intel) or NUMA nodes per socket = NPS1 (AMD)";
            match i.profile {
                Profile::Database => rule.finding(Severity::Warn)
                    .found(found)
                    .expected("SNC off / NPS1: one node per package")
                    .why("A large OLTP buffer pool and its threads span the socket anyway, so splitting the socket into nodes only adds remote accesses within it.")
                    .fix(bios, Needs::Bios)
                    .done(),
                Profile::Hpc | Profile::Latency => rule.finding(Severity::Ok)
                    .found(found)
                    .expected("SNC/NPS > 1 with one process per node")
                    .why("Smaller nodes give each process nearer memory controllers: lower local latency and more local bandwidth when the code keeps its data local.")
                    .done(),
                Profile::Virtualization => rule.finding(Severity::Info)
                    .found(found)
                    .expected("each guest fits in one (smaller) node, or SNC off / NPS1 for guests larger than a node")
                    .why("A guest that spans nodes sees remote memory it cannot know about unless its virtual NUMA topology mirrors the host's.")
                    .fix(format!("size and pin guests per node (libvirt <numatune mode='strict'> and vCPU pinning), or {bios}"), Needs::Runtime)
                    .done(),
                Profile::AiTraining => rule.finding(Severity::Info)
                    .found(found)
                    .expected("each GPU's process pinned to its GPU's node (or NPS1/SNC off for simpler pinning)")
                    .why("With several nodes per socket, data loaders must sit on the GPU's own node to avoid crossing the socket's mesh.")
                    .fix(format!("pin each rank with numactl --cpunodebind=<gpu node> --membind=<gpu node>, or {bios}"), Needs::Runtime)
                    .done(),
                Profile::General => rule.finding(Severity::Info)
                    .found(found)
                    .expected("SNC/NPS > 1 only for NUMA-aware software")
                    .why("Software that is not NUMA-aware sees more remote accesses when a socket is split into several nodes.")
                    .fix(format!("keep it when applications bind to nodes; otherwise {bios}"), Needs::Bios)
                    .done(),
            }
        }
        NumaModeKind::NodePerPackage | NumaModeKind::SingleNode if i.profile == Profile::Hpc => {
            rule.finding(Severity::Info)
                .found(format!("one node per package ({} package(s))", t.packages.len()))
                .expected("SNC2/SNC4 (Intel) or NPS2/NPS4 (AMD) with one rank per node, when the code has known locality")
                .why("Smaller nodes give each MPI rank its own memory controllers and lower local latency, which NUMA-aware codes turn into bandwidth.")
                .fix("BIOS: Sub-NUMA Clustering = SNC2/SNC4 (Intel) or NUMA nodes per socket = NPS2/NPS4 (AMD); run one rank per node", Needs::Bios)
                .done()
        }
        _ => Vec::new(),
    }
}

/// Several nodes per package on an Arm machine: per die on HiSilicon
/// Kunpeng (hardware: nothing merges them but interleaving), else the
/// firmware's memory layout; never SNC or NPS.
fn arm_sub_numa(rule: &Rule, i: &Inputs, label: &str) -> Vec<Finding> {
    let t = i.topology;
    let found =
        format!("{label}: {} nodes on {} packages", t.cpu_nodes().count(), t.packages.len());
    let per_die = t.numa_mode.label.as_deref() == Some("per-die");
    let (what, firmware) = if per_die {
        (
            "each node is one die of the package, with its own memory controllers: a hardware boundary, not a setting",
            "no firmware option splits a die or joins dies but memory interleaving, which hides the nodes",
        )
    } else {
        (
            "the firmware divides each package's memory into nodes (an Arm server's NUMA mode, e.g. Ampere Altra's)",
            "the firmware's NUMA mode gives one node per package (the option's name is the vendor's)",
        )
    };
    let bind =
        "numactl --cpunodebind=N --membind=N <command> keeps NUMA-unaware software inside one node";
    let (sev, expected, why, fix, needs) = match i.profile {
        Profile::Database => (
            Severity::Warn,
            "each instance inside one node, or one node per package",
            "A buffer pool and its threads that span the package's nodes pay remote accesses within it.",
            format!("{bind}; {firmware}"),
            Needs::Runtime,
        ),
        Profile::Hpc | Profile::Latency => (
            Severity::Ok,
            "one process (rank) per node",
            "Smaller nodes give each process nearer memory controllers when the code keeps its data local.",
            String::new(),
            Needs::Nothing,
        ),
        _ => (
            Severity::Info,
            "several nodes per package only for NUMA-aware software",
            "Software that is not NUMA-aware sees more remote accesses when a package holds several nodes.",
            format!("{bind}; {firmware}"),
            Needs::Runtime,
        ),
    };
    rule.finding(sev)
        .found(format!("{found} ({what})"))
        .expected(expected)
        .why(why)
        .fix(fix, needs)
        .done()
}

pub(super) fn remote_penalty(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let Some(r) = i.evidence.remote_local_latency_ratio else { return Vec::new() };
    let ev = latency_evidence(i.evidence);
    if r < 1.3 {
        return rule
            .finding(Severity::Ok)
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
    rule.finding(sev)
        .found(format!("remote latency {r:.1}x local: bind instances to nodes"))
        .expected("latency-critical work bound to one node")
        .why("Every access that lands on another node pays the measured penalty, so unbound processes run measurably slower.")
        .fix("numactl --cpunodebind=N --membind=N <command> (or the service's own NUMA binding)", Needs::Runtime)
        .evidence(ev)
        .done()
}

/// The run's declared distances (SLIT, HMAT) against its latency matrix
/// ([`analysis::distances`]): an order the measurement reverses is a
/// warning, ratios off beyond the tolerance information, agreement ok.
/// Nothing compared (no matrix, no SLIT) gives no finding: the audit says
/// why under its evidence line.
pub(super) fn declared_distances(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    use analysis::distances::Check;
    let Some(Check::Checked { pairs, ratios, order, ratio, flat, rows, unsettled }) =
        &i.evidence.distances
    else {
        return Vec::new();
    };
    let src = i.evidence.source.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
    let measured: Vec<String> = rows
        .iter()
        .map(|r| {
            let order: Vec<String> = r.measured_order.iter().map(|n| n.to_string()).collect();
            let decl: Vec<String> = r.declared_order.iter().map(|n| n.to_string()).collect();
            format!(
                "from node {}: declared {}, measured {}",
                r.from,
                decl.join(" "),
                order.join(" ")
            )
        })
        .collect();
    let left_out = match unsettled.len() {
        0 => String::new(),
        n => format!(
            "; {n} cell(s) left out, their samples more than {}x apart (a busy machine or host)",
            analysis::distances::UNSETTLED_RATIO
        ),
    };
    let orders = format!("{src}nearest first {}{left_out}", measured.join("; "));
    let words = i.terms.contradiction;
    let all = |v: &[analysis::distances::Contradiction]| {
        v.iter().map(words).collect::<Vec<_>>().join("; ")
    };
    let first_and_more = |v: &[analysis::distances::Contradiction]| {
        let more = match v.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        format!("{}{more}", words(&v[0]))
    };
    let fix = format!("on a virtual machine, give the guest the host's distances (QEMU -numa dist, libvirt <distances>); on bare metal, update the firmware or report the table to the vendor. Meanwhile give hwloc-based runtimes the measured figures: {}, then HWLOC_XMLFILE=topo.xml", i.terms.export_hwloc);
    let expected = "each node's memory ordered nearest first as measured, and remote/local distance ratios matching remote/local latency within the SLIT's rounding and the noise";
    if !order.is_empty() {
        return rule
            .finding(Severity::Warn)
            .found(first_and_more(order))
            .expected(expected)
            .why("The kernel (NUMA balancing, memory tiering and reclaim), the scheduler's NUMA domains, hwloc and the MPI and OpenMP runtimes read these distances to keep threads and pages on the nearest node: a wrong order sends them to a farther one.")
            .fix(fix, Needs::Bios)
            .evidence(Some(format!("{orders}; {}", all(order))))
            .done();
    }
    if !ratio.is_empty() {
        let flat_note = if *flat {
            "; the measured memory is flat (every node within the noise of local: a virtual machine whose memory is one host node?), so no declared order can be confirmed"
        } else {
            ""
        };
        return rule
            .finding(Severity::Info)
            .found(first_and_more(ratio))
            .expected(expected)
            .why("The order is right, but the magnitudes are not what was measured: what weighs distances (the kernel's reclaim distance, hwloc's grouping of nodes by distance) is misled.")
            .fix(fix, Needs::Bios)
            .evidence(Some(format!("{orders}{flat_note}; {}", all(ratio))))
            .done();
    }
    let found = if *flat {
        format!("the measured memory is flat: every node within the noise of local, so the declared order ({pairs} pair(s)) can be neither confirmed nor contradicted")
    } else {
        format!("the declared distances order every node's memory as measured ({pairs} pair(s)) and their {ratios} remote/local ratio(s) match within the tolerance")
    };
    rule.finding(Severity::Ok)
        .found(found)
        .expected(expected)
        .why("Software that reads the distances picks the node that really is nearest.")
        .evidence(Some(orders))
        .done()
}

pub(super) fn placement(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let t = i.topology;
    if !multi_node(t) {
        return Vec::new();
    }
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
    rule.finding(Severity::Info)
        .found(format!("{} nodes with CPUs ({nodes})", t.cpu_nodes().count()))
        .expected(expected)
        .why(why)
        .fix(fix, Needs::Runtime)
        .evidence(ev)
        .done()
}
