//! The values the store takes: a new run. What it gives back (run ids,
//! statuses, summaries, stored records and loaded runs) is
//! [`results::run`], re-exported here.

use results::context::{Configuration, Machine, RunTopology};
pub use results::run::{LoadedRun, RunId, RunStatus, RunSummary, StoredRecord};

/// What a writer says about a run when it begins.
///
/// `machine` identifies the machine (CPU model, packages, cores, memory,
/// DIMMs...). Runs are grouped by machine on its `fingerprint`, or on the
/// hash of the whole document when it has none. For the one-line
/// description the store takes `description` when present, else
/// `hostname`, `cpu_model`, `packages`, `nodes`, `mem_total_bytes`.
///
/// `config` holds the settings (NUMA mode, kernel, cmdline, THP, governor,
/// SMT, boost, numa_balancing, zone_reclaim_mode, firmware...): runs on one
/// machine are told apart by its `fingerprint` (or the hash of the whole
/// document). Reports show its settings, studies and the fleet diff them.
///
/// `topology` is the `numaprobe topo --json` document.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// The user's name for the configuration, e.g. `"SNC2 on, THP always"`.
    pub label: Option<String>,
    /// The command line that made the run, as the user typed it.
    pub command_line: String,
    /// numaprobe's version.
    pub tool_version: String,
    /// RFC 3339 start time; `None` means now.
    pub started: Option<String>,
    pub machine: Machine,
    pub config: Configuration,
    pub topology: RunTopology,
    /// A UUID to use; `None` makes a new random one.
    pub uuid: Option<String>,
}

impl NewRun {
    /// A run with empty machine, configuration and topology documents.
    pub fn new(command_line: impl Into<String>, tool_version: impl Into<String>) -> NewRun {
        NewRun {
            label: None,
            command_line: command_line.into(),
            tool_version: tool_version.into(),
            started: None,
            machine: Machine::default(),
            config: Configuration::default(),
            topology: RunTopology::default(),
            uuid: None,
        }
    }
}
