//! Hidden NUMA on evidence, the one rule every reader applies (studies,
//! reports, `show`): the OS shows one node, the machine has NUMA below it
//! (more than one package, or more than one firmware proximity domain),
//! and per-CPU latency splits into at least two groups of at least 2 CPUs.
//! A stored `hidden_numa` flag is the measuring version's verdict and may
//! predate this rule; readers judge again with [`hides_numa`].

use store::LoadedRun;

use crate::catalogue;
use crate::data::RunData;

/// The evidence, independent of the OS's nodes, that a machine has NUMA
/// below them: more than one package, or more than one firmware proximity
/// domain with CPUs and memory (ACPI SRAT). `None` without such evidence.
pub fn numa_below_the_os(run: &LoadedRun) -> Option<String> {
    let packages = run.machine_info.packages.as_ref().map(|c| c.get()).unwrap_or(0);
    if packages > 1 {
        return Some(format!("{packages} packages"));
    }
    let fw = run
        .topology
        .get()
        .and_then(|t| t.firmware_numa.as_ref())
        .and_then(|f| f.local_domains())
        .or_else(|| {
            // `2 proximity domains (...)` as the configuration records it.
            let srat = run.config.acpi_srat.as_deref()?;
            srat.split_whitespace().next()?.parse::<usize>().ok()
        });
    match fw {
        Some(n) if n > 1 => Some(format!("{n} firmware proximity domains")),
        _ => None,
    }
}

/// The machine's evidence ([`numa_below_the_os`]) when per-CPU latency
/// groups of `group_cpus` CPUs each show that `run`'s settings hide NUMA:
/// the OS showed the run one node and at least two groups hold 2 CPUs or
/// more (one noisy CPU is not a socket). `None` says nothing is hidden.
pub fn hides_numa(run: &LoadedRun, d: &RunData, group_cpus: &[usize]) -> Option<String> {
    if catalogue::os_nodes(run, d) > 1 || group_cpus.iter().filter(|&&n| n >= 2).count() < 2 {
        return None;
    }
    numa_below_the_os(run)
}
