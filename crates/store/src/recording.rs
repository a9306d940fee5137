//! A run being saved: opened with its description ([`Recording::open`]),
//! every result saved the moment it is reported ([`Recording::record`],
//! through the [`Saving`] observer), and closed with how it ended
//! ([`Recording::finish`]). Where the database is, how a warning is shown
//! and what stopped a run are the caller's ([`Destination`]): numaprobe's
//! measuring commands all save through here.

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use events::{Event, Observer};
use results::Record;

use crate::{NewRun, RunId, RunStatus, Store, StoreError};

/// Where a recording goes and how it speaks: the caller's settings.
pub trait Destination {
    /// The error the caller reports ([`Recording::open`] and
    /// [`Recording::finish`] return it).
    type Error: From<StoreError>;
    /// The results database (created if need be).
    fn db_path(&self) -> Result<PathBuf, Self::Error>;
    /// Whether warnings are kept off stderr.
    fn quiet(&self) -> bool;
    /// Shows a warning (unless `quiet`): a result that could not be saved.
    fn warn(quiet: bool, msg: &str);
    /// What interrupted the run, as its message says it (`Ctrl-C`).
    fn interrupted_by() -> &'static str;
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
pub struct Recording<D: Destination> {
    db: Mutex<Store>,
    run: RunId,
    path: PathBuf,
    quiet: bool,
    saved: Mutex<(usize, Vec<String>)>,
    to: PhantomData<fn() -> D>,
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

impl<D: Destination> Recording<D> {
    /// Opens (creating if need be) the results database and begins `new`.
    pub fn open(to: &D, new: &NewRun) -> Result<Self, D::Error> {
        let path = to.db_path()?;
        // StoreError names the file already.
        let mut db = Store::open(&path)?;
        let run = db.begin_run(new)?;
        Ok(Recording {
            db: Mutex::new(db),
            run,
            path,
            quiet: to.quiet(),
            saved: Mutex::new((0, Vec::new())),
            to: PhantomData,
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
                D::warn(self.quiet, &msg);
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
    pub fn finish(self, outcome: Outcome) -> Result<Finished, D::Error> {
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
                let by = format!("interrupted ({})", D::interrupted_by());
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
pub struct Saving<'a, D: Destination> {
    pub rec: Option<&'a Recording<D>>,
    pub next: &'a dyn Observer,
}

impl<D: Destination> Observer for Saving<'_, D> {
    fn event(&self, event: Event) {
        if let Some(r) = self.rec {
            r.record(&event);
        }
        self.next.event(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct To(PathBuf);

    impl Destination for To {
        type Error = StoreError;
        fn db_path(&self) -> Result<PathBuf, StoreError> {
            Ok(self.0.clone())
        }
        fn quiet(&self) -> bool {
            true
        }
        fn warn(_: bool, _: &str) {}
        fn interrupted_by() -> &'static str {
            "SIGTERM"
        }
    }

    /// A stopped run is kept as incomplete and says what stopped it, in
    /// the caller's words; a failed one as failed with its message.
    #[test]
    fn a_run_ends_as_its_outcome_says() {
        let dir = tempfile::tempdir().unwrap();
        let to = To(dir.path().join("r.db"));
        let new = NewRun::new("numaprobe bw", "0.0.0");
        let rec = Recording::open(&to, &new).unwrap();
        let done = rec.finish(Outcome::Interrupted).unwrap();
        assert_eq!(done.status, RunStatus::Incomplete);
        assert_eq!(done.message.as_deref(), Some("interrupted (SIGTERM)"));
        assert_eq!(done.saved, 0);

        let rec = Recording::open(&to, &new).unwrap();
        let err: Result<(), String> = Err("no CPU".into());
        let done = rec.finish(Outcome::of(&err, false)).unwrap();
        assert_eq!((done.status, done.message.as_deref()), (RunStatus::Failed, Some("no CPU")));
        assert_eq!(done.path, to.0);
    }
}
