//! Hidden NUMA on evidence: the one rule that `lat --per-cpu` applies as
//! it measures (`bench`) and that every reader of a stored run applies
//! again (`analysis`: studies, reports, `show`), so that the two can never
//! disagree. The OS shows one node, the machine has NUMA below it (more
//! than one package, or more than one firmware proximity domain), and
//! per-CPU latency splits: some step between its latency groups (taken
//! from fastest to slowest) has at least [`MIN_GROUP_CPUS`] CPUs on each
//! side (one noisy CPU is not a socket; the sampled CPUs of one package
//! may themselves fall into groups of one, a CPU of each SNC domain).

use std::fmt;

/// The fewest CPUs a latency group needs to count as evidence.
pub const MIN_GROUP_CPUS: usize = 2;

/// The evidence, independent of the OS's nodes, that a machine has NUMA
/// below them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumaBelow {
    /// More than one package (socket).
    Packages(u64),
    /// More than one firmware (ACPI SRAT) proximity domain.
    FirmwareDomains(u64),
}

impl fmt::Display for NumaBelow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumaBelow::Packages(n) => write!(f, "{n} packages"),
            NumaBelow::FirmwareDomains(n) => write!(f, "{n} firmware proximity domains"),
        }
    }
}

/// The machine's NUMA below the OS: `packages` (0 when unknown), else the
/// firmware's proximity domains (`None` when the firmware was not read).
/// `None` without such evidence.
pub fn numa_below_the_os(packages: u64, firmware_domains: Option<u64>) -> Option<NumaBelow> {
    if packages > 1 {
        return Some(NumaBelow::Packages(packages));
    }
    match firmware_domains {
        Some(n) if n > 1 => Some(NumaBelow::FirmwareDomains(n)),
        _ => None,
    }
}

/// The evidence `below` when per-CPU latency groups of `group_cpus` CPUs
/// each (from the fastest group to the slowest) show that the settings
/// hide it: the OS showed `os_nodes` node(s) (at most one) and the CPUs
/// faster than some step between groups, and those slower, are
/// [`MIN_GROUP_CPUS`] or more each. `None` says nothing is hidden.
pub fn hides_numa(
    os_nodes: usize,
    below: Option<NumaBelow>,
    group_cpus: impl IntoIterator<Item = usize>,
) -> Option<NumaBelow> {
    let sizes: Vec<usize> = group_cpus.into_iter().collect();
    let total: usize = sizes.iter().sum();
    let mut faster = 0;
    let split = sizes[..sizes.len().saturating_sub(1)].iter().any(|&n| {
        faster += n;
        faster >= MIN_GROUP_CPUS && total - faster >= MIN_GROUP_CPUS
    });
    if os_nodes > 1 || !split {
        return None;
    }
    below
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_below_the_os_is_packages_first_then_firmware() {
        assert_eq!(numa_below_the_os(2, Some(4)), Some(NumaBelow::Packages(2)));
        assert_eq!(numa_below_the_os(1, Some(2)), Some(NumaBelow::FirmwareDomains(2)));
        assert_eq!(numa_below_the_os(0, Some(1)), None);
        assert_eq!(numa_below_the_os(1, None), None);
        assert_eq!(NumaBelow::Packages(2).to_string(), "2 packages");
        assert_eq!(NumaBelow::FirmwareDomains(4).to_string(), "4 firmware proximity domains");
    }

    #[test]
    fn hidden_only_with_one_os_node_and_two_groups_of_two_cpus() {
        let two = Some(NumaBelow::Packages(2));
        assert_eq!(hides_numa(1, two, [4, 4]), two);
        assert_eq!(hides_numa(0, two, [2, 2, 1]), two);
        // One noisy CPU is not a socket, fast or slow.
        assert_eq!(hides_numa(1, two, [7, 1]), None);
        assert_eq!(hides_numa(1, two, [1, 7]), None);
        assert_eq!(hides_numa(1, two, [8]), None);
        // The first package's two sampled CPUs (one per SNC domain, 17%
        // apart) against six on the other packages: split.
        assert_eq!(hides_numa(1, two, [1, 1, 6]), two);
        assert_eq!(hides_numa(1, two, [6, 1, 1]), two);
        // The OS shows the nodes: nothing hidden.
        assert_eq!(hides_numa(2, two, [4, 4]), None);
        // No NUMA below the OS: a split is not hidden NUMA.
        assert_eq!(hides_numa(1, None, [4, 4]), None);
    }
}
