//! The device rules: PCI devices' nodes, and the CPUs nearest each GPU.

use super::*;

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

pub(super) fn device_locality(rule: &Rule, i: &Inputs) -> Vec<Finding> {
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
        return rule
            .finding(Severity::Ok)
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
    rule.finding(sev)
        .found(format!("{}; {list}", problems.join("; ")))
        .expected(expected)
        .why("A device whose node has no CPUs or memory (or is unknown) forces the threads and buffers that feed it onto a remote node.")
        .fix("move the card to a slot wired to a CPU socket; on a missing node, update the BIOS (ACPI _PXM) and place the driver's threads by the device's local_cpulist", Needs::Hardware)
        .done()
}

pub(super) fn gpu_affinity(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    if i.profile != Profile::AiTraining {
        return Vec::new();
    }
    let t = i.topology;
    let gpus: Vec<_> = t
        .devices
        .iter()
        .filter(|d| matches!(d.class, DeviceClass::Gpu | DeviceClass::Accelerator))
        .collect();
    if gpus.is_empty() {
        return rule
            .finding(Severity::Info)
            .found("no GPU or accelerator found on the PCI bus")
            .expected("each GPU's process on the GPU's node")
            .why("Without a GPU there is nothing to pin to.")
            .done();
    }
    let allowed = t.cgroup.cpus.clone().or_else(|| t.cgroup.affinity.clone());
    let mut lines = Vec::new();
    let mut outside = Vec::new();
    let mut pins = Vec::new();
    // Measured feeds (`numaprobe gpu`) that disagree with sysfs's node.
    let mut disagree = Vec::new();
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
        if let Some(f) = i.evidence.gpu_feeds.iter().find(|f| f.pci_address == g.address) {
            let from = f.source.as_deref().map(|s| format!(", {s}")).unwrap_or_default();
            let worst = f
                .worst_penalty_pct
                .map(|p| format!("; other nodes up to {p:.0}% less"))
                .unwrap_or_default();
            match f.best_node {
                Some(b) => {
                    lines.push(format!(
                        "measured: {} fed fastest from node {b} ({:.1} GB/s host to device{worst}{from})",
                        g.address, f.top_gbs
                    ));
                    if device_node(t, g).is_some_and(|n| n != b) {
                        disagree.push((g.address.clone(), node.clone(), b));
                    }
                }
                None => lines.push(format!(
                    "measured: no node feeds {} faster beyond the spread of the copies ({:.1} GB/s at best{from})",
                    g.address, f.top_gbs
                )),
            }
        }
    }
    if !disagree.is_empty() {
        let found: Vec<String> = disagree
            .iter()
            .map(|(a, n, b)| {
                format!("{a}: sysfs says node {n}, pinned memory on node {b} feeds it fastest")
            })
            .collect();
        let fix: Vec<String> = disagree
            .iter()
            .map(|(a, _, b)| format!("loaders for {a}: numactl --cpunodebind={b} --membind={b}"))
            .collect();
        return rule.finding(Severity::Warn)
            .found(format!("{}; {}", found.join("; "), lines.join("; ")))
            .expected("each GPU fed fastest from the node sysfs puts it on")
            .why("Data loaders placed by the GPU's sysfs node (as Slurm --gpu-bind=closest and most launchers do) keep their pinned memory where the measurement says copies are slower: the firmware's PCIe proximity (_PXM) or the slot wiring is not what sysfs reports.")
            .fix(format!("{}; check the BIOS's PCIe/NUMA settings", fix.join("; ")), Needs::Runtime)
            .done();
    }
    let fix = pins.join("; ");
    if !outside.is_empty() {
        return rule.finding(Severity::Warn)
            .found(format!("{}; {}", outside.join("; "), lines.join("; ")))
            .expected("the CPUs nearest each GPU are among those this job may use")
            .why("A cgroup or affinity mask that excludes a GPU's local CPUs forces its data loaders and pinned buffers onto another node.")
            .fix(format!("allow the GPU-local CPUs in the job's cpuset (e.g. Slurm --gpu-bind=closest), then pin: {fix}"), Needs::Runtime)
            .done();
    }
    rule.finding(Severity::Info)
        .found(lines.join("; "))
        .expected("each GPU's training process and loaders pinned to these CPUs and that node's memory")
        .why("Host-to-device copies from pinned memory on the GPU's node avoid the socket interconnect.")
        .fix(if fix.is_empty() { "pin each rank with taskset -c <the GPU's CPUs>".to_string() } else { fix }, Needs::Runtime)
        .done()
}
