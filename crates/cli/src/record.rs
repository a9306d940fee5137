//! The one path every measuring command takes to the machine and the store:
//! the measuring lock ([`take_lock`]), then a run opened with the machine's
//! and configuration's fingerprints ([`Recording::open`]), every result saved
//! the moment it is reported ([`Recording::record`], through [`Saving`]),
//! and the run closed with how it ended ([`Recording::finish`]).
//! `run`, `exec`, and `bw`/`lat` with `--label`/`--save` all go through it.
//! Taking the lock is [`lock::take`]'s and saving [`store::recording`]'s;
//! this module gives them the command line's settings.

use std::path::PathBuf;

use events::StopFlag;
use lock::{MeasureLock, TakeError};
use store::NewRun;
use topo::{SysRoot, Topology};

use crate::cli::Global;
use crate::output;

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

/// The lock file `--lock`/`NUMAPROBE_LOCK` named, set once at start.
static LOCK_PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Makes `path` the measuring lock of this process (from `--lock`).
pub fn set_lock_path(path: Option<PathBuf>) {
    if let Some(p) = path.filter(|p| !p.as_os_str().is_empty()) {
        let _ = LOCK_PATH.set(p);
    }
}

/// The measuring lock file: `--lock`/`NUMAPROBE_LOCK`, else the default.
pub fn lock_path() -> PathBuf {
    LOCK_PATH.get().cloned().unwrap_or_else(MeasureLock::default_path)
}

pub use lock::INTERACTIVE_WAIT;

/// Takes the machine-wide measuring lock (`--lock`, `NUMAPROBE_LOCK` or the
/// default path) as [`lock::take`] does: waiting with `wait`, from a
/// terminal (stdin and stderr both) up to [`INTERACTIVE_WAIT`], else not
/// at all. Stopped while waiting: exits as stopped by that signal.
pub fn take_lock(wait: bool, quiet: bool, stop: &StopFlag) -> anyhow::Result<MeasureLock> {
    use std::io::IsTerminal;
    let interactive = std::io::stderr().is_terminal() && std::io::stdin().is_terminal();
    let stopped = || stop.is_stopped();
    lock::take(&lock_path(), wait, interactive, quiet, &stopped, INTERACTIVE_WAIT).map_err(|e| {
        match e {
            // Ctrl-C (or SIGTERM) while waiting: stopped by a signal, 128 + its number.
            TakeError::Stopped(e) => anyhow::Error::new(e).context(crate::signal::StoppedWaiting),
            TakeError::Other(e) => anyhow::Error::new(e),
            e => anyhow::anyhow!("{e}"),
        }
    })
}

/// A run being saved by this command line: in `--db`'s database, warnings
/// as `output::warn` shows them, stopped as `signal::cause` says.
pub type Recording = store::recording::Recording<Global>;
/// The observer saving every result into a [`Recording`].
pub type Saving<'a> = store::recording::Saving<'a, Global>;
pub use store::recording::Outcome;

impl store::recording::Destination for Global {
    type Error = anyhow::Error;
    fn db_path(&self) -> anyhow::Result<PathBuf> {
        crate::cmd::store::db_path(self)
    }
    fn quiet(&self) -> bool {
        self.quiet
    }
    fn warn(quiet: bool, msg: &str) {
        output::warn(quiet, msg)
    }
    fn interrupted_by() -> &'static str {
        crate::signal::cause()
    }
}

/// A new run described with this machine's fingerprints (the same for
/// every command, so all of a machine's runs group together).
pub fn new_run(root: &SysRoot, topo: Option<&Topology>, label: Option<String>) -> NewRun {
    // Quoted as a shell reads it back: the stored command pastes back.
    let args: Vec<String> = std::env::args().collect();
    let mut new = NewRun::new(analysis::text::shell_join(&args), env!("CARGO_PKG_VERSION"));
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
