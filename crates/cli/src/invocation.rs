//! The one typed invocation (ripgrep's `HiArgs` is the model): the global
//! options are parsed once by clap ([`Global`]) and turned once into an
//! [`Invocation`], the value every command takes and builds its parts
//! from: the results database, the measuring lock, `--json`, `--quiet`
//! and the table style. No process static holds any of them.
//!
//! The steps every measuring command shares are its methods too: taking
//! the lock ([`Invocation::take_lock`]), opening a saved run
//! ([`Invocation::record`]) and writing the command's answer: its
//! `--json` document or its text, never both, the document versioned as
//! its kind is ([`Invocation::answer`], [`Invocation::answer_each`],
//! [`Invocation::answer_own`]) with its keys sorted where its readers
//! have always seen them so ([`Invocation::answer_sorted`]). No command
//! writes a document itself.

use std::io::IsTerminal;
use std::path::PathBuf;

use events::StopFlag;
use lock::{MeasureLock, TakeError};
use serde::Serialize;
use store::{NewRun, Store};

use crate::output::{self, TableStyle, Versioned};

/// Options every command takes (shown under their own heading): what clap
/// parses, before [`Invocation::new`] checks and resolves it.
#[derive(Debug, clap::Args, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print no progress and no warnings on stderr (errors still print).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Results database (default: $XDG_DATA_HOME/numaprobe/results.db).
    #[arg(long, global = true, value_name = "PATH", env = "NUMAPROBE_DB")]
    pub db: Option<PathBuf>,
    /// The measuring lock file every measuring command takes (default:
    /// /run/lock/numaprobe-measure.lock). In containers, point it at a
    /// hostPath shared by every pod of the node (docs/fleet.md).
    #[arg(long, global = true, value_name = "PATH", env = "NUMAPROBE_LOCK")]
    pub lock: Option<PathBuf>,
    /// How tables are drawn (default: box on a terminal, plain otherwise).
    #[arg(long, global = true, value_name = "STYLE", value_enum)]
    pub table: Option<TableStyle>,
}

/// The global options resolved: what every command is given.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `--json`: the command's `--json` document on stdout, no text.
    pub json: bool,
    /// `--quiet`: no progress and no warnings on stderr.
    pub quiet: bool,
    /// `--db`/`NUMAPROBE_DB` as given; `None` is the default path
    /// ([`Invocation::db_path`]).
    pub db: Option<PathBuf>,
    /// The measuring lock file: `--lock`/`NUMAPROBE_LOCK`, else the
    /// default path.
    pub lock: PathBuf,
    /// How tables are drawn: `--table`, else box on a terminal and plain
    /// text otherwise.
    pub style: TableStyle,
}

impl Invocation {
    /// Checks the global options against each other and resolves them.
    pub fn new(g: &Global) -> anyhow::Result<Invocation> {
        if g.json && g.table.is_some() {
            // --json prints no table: a style asked for would be silently lost.
            crate::usage!("--table styles tables and --json prints none: give one or the other");
        }
        let style = g.table.unwrap_or_else(|| {
            if std::io::stdout().is_terminal() {
                TableStyle::Box
            } else {
                TableStyle::Plain
            }
        });
        let lock = match g.lock.clone().filter(|p| !p.as_os_str().is_empty()) {
            Some(p) => p,
            None => MeasureLock::default_path(),
        };
        Ok(Invocation { json: g.json, quiet: g.quiet, db: g.db.clone(), lock, style })
    }

    /// The database `--db`/`NUMAPROBE_DB` names, else the default path.
    pub fn db_path(&self) -> anyhow::Result<PathBuf> {
        match &self.db {
            Some(p) => Ok(p.clone()),
            None => Ok(Store::default_path()?),
        }
    }

    /// The database, which must exist.
    pub fn open_existing(&self) -> anyhow::Result<Store> {
        Ok(Store::open_existing(self.db_path()?)?)
    }

    /// Takes the machine-wide measuring lock as [`lock::take`] does:
    /// waiting with `wait`, from a terminal (stdin and stderr both) up to
    /// [`lock::INTERACTIVE_WAIT`], else not at all. Stopped while waiting:
    /// exits as stopped by that signal.
    pub fn take_lock(&self, wait: bool, stop: &StopFlag) -> anyhow::Result<MeasureLock> {
        let interactive = std::io::stderr().is_terminal() && std::io::stdin().is_terminal();
        let stopped = || stop.is_stopped();
        let bound = lock::INTERACTIVE_WAIT;
        let taken =
            lock::take(&self.lock, wait, interactive, self.quiet, &stopped, bound, &mut waiting);
        taken.map_err(|e| match e {
            // Ctrl-C (or SIGTERM) while waiting: stopped by a signal, 128 + its number.
            TakeError::Stopped(e) => anyhow::Error::new(e).context(crate::signal::StoppedWaiting),
            TakeError::Other(e) => anyhow::Error::new(e),
            TakeError::Busy(e, bound) => anyhow::anyhow!(
                "{e}; wait for it to finish or use --wait (from a terminal numaprobe waits up to \
                 {} min by itself)",
                lock::take::minutes(bound)
            ),
            e @ TakeError::TimedOut(..) => {
                anyhow::anyhow!("{e}; try again later, or use --wait to wait without a limit")
            }
        })
    }

    /// Opens the saved run `new` when `saving`, in the database.
    pub fn record(
        &self,
        saving: bool,
        new: impl FnOnce() -> NewRun,
    ) -> anyhow::Result<Option<Recording>> {
        match saving {
            true => Ok(Some(Recording::open(self, &new())?)),
            false => Ok(None),
        }
    }

    /// Writes a warning to stderr unless `--quiet`.
    pub fn warn(&self, msg: &str) {
        output::warn(self.quiet, msg)
    }

    /// Writes the command's answer on stdout: `doc` (its `--json`
    /// document, versioned by `schema`) with `--json`, else `text` drawn
    /// in the table style.
    pub fn answer<T: Serialize + ?Sized, X: Text>(
        &self,
        schema: u32,
        doc: &T,
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        self.respond(false, &Versioned::new(schema, doc), text)
    }

    /// [`Invocation::answer`] with the keys of every object of the
    /// document sorted: the order the documents of `run` and `study` have
    /// always had.
    pub fn answer_sorted<T: Serialize + ?Sized, X: Text>(
        &self,
        schema: u32,
        doc: &T,
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        self.respond(true, &Versioned::new(schema, doc), text)
    }

    /// [`Invocation::answer`] for a document that is a list: each element
    /// versioned by `schema` (`list`, `import`).
    pub fn answer_each<T: Serialize, X: Text>(
        &self,
        schema: u32,
        docs: &[T],
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        self.respond(false, &Versioned::each(schema, docs), text)
    }

    /// [`Invocation::answer`] for a document written as it is: one whose
    /// type carries its own `schema_version` (`topo`, `audit`, `place`),
    /// or one whose keys are the contract (`fleet --this-host`).
    pub fn answer_own<T: Serialize + ?Sized, X: Text>(
        &self,
        doc: &T,
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        self.respond(false, doc, text)
    }

    /// [`Invocation::answer_own`] with the keys of every object sorted
    /// (`topo --from-run`).
    pub fn answer_own_sorted<T: Serialize + ?Sized, X: Text>(
        &self,
        doc: &T,
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        self.respond(true, doc, text)
    }

    /// `doc` as it is with `--json`, else the text; an empty text writes
    /// nothing (not an empty line).
    fn respond<T: Serialize + ?Sized, X: Text>(
        &self,
        sorted: bool,
        doc: &T,
        text: impl FnOnce(TableStyle) -> X,
    ) -> anyhow::Result<()> {
        if self.json {
            return write_json(sorted, doc);
        }
        match text(self.style).into_text()? {
            t if t.is_empty() => Ok(()),
            t => output::emit(&t),
        }
    }

    /// With `--json`, writes `doc` as it is (a document whose text went
    /// elsewhere: stderr, a file); without, nothing.
    pub fn document<T: Serialize + ?Sized>(&self, doc: &T) -> anyhow::Result<()> {
        self.respond(false, doc, |_| String::new())
    }

    /// With `--json`, writes `doc` (a versioned document, or a list of
    /// them) with its keys sorted as [`Invocation::answer_sorted`] does;
    /// without, nothing: for a command whose text went elsewhere (stderr,
    /// an error) or comes after.
    pub fn document_sorted<T: Serialize + ?Sized>(&self, doc: &T) -> anyhow::Result<()> {
        self.respond(true, doc, |_| String::new())
    }
}

/// Whom a measuring command waits for, on stderr: with `--wait`, until
/// the holder lets go; from a terminal, up to the bound.
fn waiting(w: lock::Waiting) {
    let who = w.pid.map(|p| format!(" (PID {p})")).unwrap_or_default();
    match w.bound {
        Some(bound) => eprintln!(
            "numaprobe: another numaprobe measurement{who} is running; waiting up to {} min for \
             it to finish (Ctrl-C to stop; --wait waits without a limit)...",
            lock::take::minutes(bound)
        ),
        None => eprintln!("numaprobe: waiting for the measuring numaprobe{who} to finish..."),
    }
}

/// A command's text: a `String`, or the `Result` of drawing one.
pub trait Text {
    fn into_text(self) -> anyhow::Result<String>;
}

impl Text for String {
    fn into_text(self) -> anyhow::Result<String> {
        Ok(self)
    }
}

impl<E: Into<anyhow::Error>> Text for Result<String, E> {
    fn into_text(self) -> anyhow::Result<String> {
        self.map_err(Into::into)
    }
}

/// `doc`, versioned by `schema`, as a file holds it (`fleet`'s `-o
/// FILE.json`, and stdout without `-o`): pretty JSON and a line end,
/// written as it is, as the command's other outputs are.
pub fn document_file<T: Serialize + ?Sized>(schema: u32, doc: &T) -> anyhow::Result<Vec<u8>> {
    let mut text = serde_json::to_string_pretty(&Versioned::new(schema, doc))?;
    text.push('\n');
    Ok(text.into_bytes())
}

/// Writes `doc` as pretty JSON to stdout, with the keys of every object,
/// at every level, in alphabetical order when `sorted`. DEL and C1
/// controls are written as `\u` escapes ([`report::safe::json_controls`]).
fn write_json<T: Serialize + ?Sized>(sorted: bool, doc: &T) -> anyhow::Result<()> {
    let text = match sorted {
        // A `serde_json::Value` keeps its objects' keys sorted.
        true => serde_json::to_string_pretty(&serde_json::to_value(doc)?)?,
        false => serde_json::to_string_pretty(doc)?,
    };
    output::emit(&report::safe::json_controls(&text))
}

/// A run being saved by this command line: in `--db`'s database, warnings
/// as `output::warn` shows them, stopped as `signal::cause` says.
pub type Recording = store::recording::Recording<Invocation>;
/// The observer saving every result into a [`Recording`].
pub type Saving<'a> = store::recording::Saving<'a, Invocation>;
pub use store::recording::Outcome;

/// The invocation is where a saved run goes and how it speaks.
impl store::recording::Destination for Invocation {
    type Error = anyhow::Error;
    fn db_path(&self) -> anyhow::Result<PathBuf> {
        Invocation::db_path(self)
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
