//! The one path every measuring command takes to the machine and the store:
//! the measuring lock ([`take_lock`]), then a run opened with the machine's
//! and configuration's fingerprints ([`Recording::open`]), every result saved
//! the moment it is reported ([`Recording::record`], through [`Saving`]),
//! and the run closed with how it ended ([`Recording::finish`]).
//! `run`, `exec`, and `bw`/`lat` with `--label`/`--save` all go through it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use events::{Event, Observer, StopFlag};
use lock::{MeasureLock, TakeError};
use results::Record;
use store::{NewRun, RunId, RunStatus, Store};
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

/// How a recorded run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Everything planned was measured.
    Complete,
    /// Stopped by Ctrl-C, SIGTERM or SIGHUP; keeps what was measured.
    Interrupted,
    /// Part of the plan failed (the message says what).
    Incomplete(String),
    /// Stopped by an error.
    Failed(String),
}

impl Outcome {
    /// How a measurement that returned `result` ended: failed on an
    /// error, interrupted when `stopped`, complete otherwise.
    pub fn of<T, E: std::fmt::Display>(result: &Result<T, E>, stopped: bool) -> Self {
        match result {
            Err(e) => Outcome::Failed(e.to_string()),
            Ok(_) if stopped => Outcome::Interrupted,
            Ok(_) => Outcome::Complete,
        }
    }
}

/// An open run in the store, saving results as they are reported.
pub struct Recording {
    db: Mutex<Store>,
    run: RunId,
    path: PathBuf,
    quiet: bool,
    saved: Mutex<(usize, Vec<String>)>,
}

/// What [`Recording::finish`] leaves: the store, the run and its counts.
pub struct Finished {
    pub db: Store,
    pub run: RunId,
    pub path: PathBuf,
    pub status: RunStatus,
    pub message: Option<String>,
    /// Results saved through [`Recording::record`]/[`Recording::save`].
    pub saved: usize,
}

impl Finished {
    /// One line on stderr (unless quiet): where the run was saved.
    pub fn tell(&self, quiet: bool) {
        if !quiet {
            eprintln!(
                "numaprobe: saved as run {} ({}) in {}",
                self.run,
                self.status,
                self.path.display()
            );
        }
    }
}

impl Recording {
    /// Opens (creating if need be) the results database and begins `new`.
    pub fn open(g: &Global, new: &NewRun) -> anyhow::Result<Recording> {
        let path = crate::cmd::store::db_path(g)?;
        // StoreError names the file already.
        let mut db = Store::open(&path)?;
        let run = db.begin_run(new)?;
        Ok(Recording {
            db: Mutex::new(db),
            run,
            path,
            quiet: g.quiet,
            saved: Mutex::new((0, Vec::new())),
        })
    }

    pub fn run(&self) -> RunId {
        self.run
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves one result now; a failure is warned about and remembered (the
    /// run then ends incomplete).
    pub fn save(&self, record: &Record) {
        let res = self.db.lock().unwrap_or_else(|p| p.into_inner()).add_result(self.run, record);
        let mut saved = self.saved.lock().unwrap_or_else(|p| p.into_inner());
        match res {
            Ok(_) => saved.0 += 1,
            Err(e) => {
                let msg = format!("could not save a {} result: {e}", record.kind());
                output::warn(self.quiet, &msg);
                saved.1.push(msg);
            }
        }
    }

    /// The one place a measurement event becomes a stored result.
    pub fn record(&self, event: &Event) {
        if let Event::Record(r) = event {
            self.save(r);
        }
    }

    /// Closes the run with its status: complete, incomplete (interrupted,
    /// part failed, or a result could not be saved) or failed.
    pub fn finish(self, outcome: Outcome) -> anyhow::Result<Finished> {
        let (saved, errors) = self.saved.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut db = self.db.into_inner().unwrap_or_else(|p| p.into_inner());
        let lost = (!errors.is_empty()).then(|| errors.join("; "));
        let join = |a: String, b: Option<String>| match b {
            Some(b) => format!("{a}; {b}"),
            None => a,
        };
        let (status, message) = match outcome {
            Outcome::Complete => match lost {
                None => (RunStatus::Complete, None),
                Some(l) => (RunStatus::Incomplete, Some(l)),
            },
            Outcome::Interrupted => {
                let by = format!("interrupted ({})", crate::signal::cause());
                (RunStatus::Incomplete, Some(join(by, lost)))
            }
            Outcome::Incomplete(m) => (RunStatus::Incomplete, Some(join(m, lost))),
            Outcome::Failed(m) => (RunStatus::Failed, Some(join(m, lost))),
        };
        db.finish_run(self.run, status, message.as_deref())?;
        Ok(Finished { db, run: self.run, path: self.path, status, message, saved })
    }
}

/// An observer that saves every result into the recording (when there is
/// one) before passing the event on.
pub struct Saving<'a> {
    pub rec: Option<&'a Recording>,
    pub next: &'a dyn Observer,
}

impl Observer for Saving<'_> {
    fn event(&self, event: Event) {
        if let Some(r) = self.rec {
            r.record(&event);
        }
        self.next.event(event);
    }
}
