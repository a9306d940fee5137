//! Hidden NUMA judged again for a stored run, by the one rule of
//! [`results::hidden`] that `lat --per-cpu` measures by (studies, reports
//! and `show` read it here). A stored `hidden_numa` flag is the measuring
//! version's verdict and may predate the rule; readers judge again with
//! [`hides_numa`].

use results::hidden::{self, NumaBelow};
use results::run::LoadedRun;

use crate::catalogue;
use crate::data::RunData;

/// The evidence, independent of the OS's nodes, that a machine has NUMA
/// below them ([`results::hidden::numa_below_the_os`]): more than one
/// package, or more than one firmware proximity domain with CPUs and
/// memory (ACPI SRAT; from the stored topology, else the number of
/// domains the configuration records). `None` without such evidence.
pub fn numa_below_the_os(run: &LoadedRun) -> Option<String> {
    below(run).map(|b| b.to_string())
}

fn below(run: &LoadedRun) -> Option<NumaBelow> {
    let packages = run.machine_info.packages.as_ref().map(|c| c.get()).unwrap_or(0);
    let fw = run
        .topology
        .get()
        .and_then(|t| t.firmware_numa.as_ref())
        .and_then(|f| f.local_domains())
        .map(|n| n as u64)
        // Else the domains the configuration records (all of them: the
        // record of older runs says no more).
        .or_else(|| run.config.firmware_numa().map(|f| f.domains));
    hidden::numa_below_the_os(packages, fw)
}

/// The machine's evidence ([`numa_below_the_os`]) when per-CPU latency
/// groups of `group_cpus` CPUs each show that `run`'s settings hide NUMA
/// ([`results::hidden::hides_numa`], the rule `lat --per-cpu` measures
/// by). `None` says nothing is hidden.
pub fn hides_numa(run: &LoadedRun, d: &RunData, group_cpus: &[usize]) -> Option<String> {
    let os_nodes = usize::try_from(catalogue::os_nodes(run, d)).unwrap_or(usize::MAX);
    hidden::hides_numa(os_nodes, below(run), group_cpus.iter().copied()).map(|b| b.to_string())
}
