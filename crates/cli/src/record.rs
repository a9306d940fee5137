//! The one path every measuring command takes to the machine and the store:
//! the measuring lock ([`Invocation::take_lock`]), then a run opened with the machine's
//! and configuration's fingerprints ([`Recording::open`]), every result saved
//! the moment it is reported ([`Recording::record`], through [`Saving`]),
//! and the run closed with how it ended ([`Recording::finish`]).
//! `run`, `exec`, and `bw`/`lat` with `--label`/`--save` all go through it.
//! Taking the lock is [`lock::take`]'s and saving [`store::recording`]'s,
//! with the settings of the [`crate::invocation::Invocation`] (where a
//! saved run goes); this module holds the flags of saving and the new
//! run's description.

use store::NewRun;
use topo::{SysRoot, Topology};

/// `--label`/`--save`/`--wait` of the measuring commands that save only
/// when asked (`bw`, `lat`).
#[derive(Debug, Clone, clap::Args)]
pub struct SaveArgs {
    /// Save the results into the results database as a run with this name
    /// (e.g. "SNC2 on, THP always"); implies --save.
    #[arg(long, value_name = "TEXT")]
    pub label: Option<String>,
    /// Save the results into the results database (see `numaprobe list`).
    #[arg(long)]
    pub save: bool,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
}

impl SaveArgs {
    pub fn saving(&self) -> bool {
        self.save || self.label.is_some()
    }
}

pub use crate::invocation::{Outcome, Recording, Saving};

/// A new run described with this machine's fingerprints (the same for
/// every command, so all of a machine's runs group together).
pub fn new_run(root: &SysRoot, topo: Option<&Topology>, label: Option<String>) -> NewRun {
    // Quoted as a shell reads it back: the stored command pastes back. A
    // path argument that is not UTF-8 (clap takes those as they are) is
    // stored with U+FFFD for its bad bytes rather than panicking.
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let mut new = NewRun::new(report::text::shell_join(&args), env!("CARGO_PKG_VERSION"));
    new.label = label;
    if let Some(t) = topo {
        let settings = audit::Settings::read(root);
        let memory = audit::smbios::read(root);
        new.machine = audit::fingerprint::machine(root, t, &memory);
        new.config = audit::fingerprint::config_with_memory(t, &settings, &memory);
        new.topology = results::context::RunTopology::of(t);
    }
    new
}
