//! Importing an export in bounded memory: a file of at most
//! [`WHOLE_FILE_CAP`] bytes is read whole (parsing from memory is faster
//! than through a reader), a larger one as a stream that holds one run at
//! a time, never the file, so a 300 MB export or a gigabyte of garbage is
//! read in bounded memory.
//!
//! A file is read twice: once to check every run (nothing is written, and
//! the database is not even opened; result payloads are checked to be
//! JSON, not read into records), then, when all passed, again to import
//! the runs in one transaction. Standard input is copied to an
//! unlinked temporary file during the first pass. Limits, each a one-line
//! `corrupt` error naming the byte where it was passed: a string of more
//! than [`STRING_CAP`] bytes, nesting deeper than [`MAX_DEPTH`], more than
//! [`RUN_CAP`] bytes in one run (or one other field), an array or object
//! inside a run of more than [`ITEM_CAP`] items (a topology of a million
//! CPUs, a million declared keys: small in bytes, gigabytes once built,
//! and rebuilt by every reader). The shape is checked by the lexer, before
//! serde builds anything; the typed checks of each run
//! (`check_exported_run`) then bound what a run declares. A run over a
//! limit refuses the whole file: nothing of it is imported.
//!
//! [`STRING_CAP`]: crate::limits::STRING_CAP
//! [`MAX_DEPTH`]: crate::limits::MAX_DEPTH
//! [`RUN_CAP`]: crate::limits::RUN_CAP
//! [`ITEM_CAP`]: crate::limits::ITEM_CAP

use std::cell::{Cell, RefCell};
use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, Write};
use std::path::Path;
use std::rc::Rc;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::db::Store;
use crate::error::{Result, StoreError};
use crate::export::{check_exported_run, import_run, ExportedRun, ImportOutcome};
use crate::export::{ResultFields, ResultHead, ResultRow};
use crate::export::{EXPORT_FORMAT, EXPORT_VERSION};
use crate::limits::{Guard, LimitPassed};

/// Copies what is read into `copy` (standard input into its spool file).
struct Tee<R, W> {
    inner: R,
    copy: W,
}

impl<R: Read, W: Write> Read for Tee<R, W> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.copy.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// The fields of the document seen so far.
#[derive(Default)]
struct Header {
    format: Option<String>,
    version: Option<Value>,
    exported: bool,
    runs: bool,
}

/// Where the visitors leave an error of ours (serde only carries text).
type Slot = RefCell<Option<StoreError>>;

fn bad(origin: &str, detail: String) -> StoreError {
    StoreError::BadExport { origin: origin.to_string(), detail }
}

/// Checks `format` and `version` as soon as each is read.
fn check_header(h: &Header, origin: &str, complete: bool) -> Result<()> {
    match h.format.as_deref() {
        Some(EXPORT_FORMAT) => {}
        Some(other) => {
            return Err(bad(origin, format!("format is {other:?}, not {EXPORT_FORMAT:?}")))
        }
        None if complete => {
            return Err(bad(origin, format!("no \"format\": {EXPORT_FORMAT:?} field")))
        }
        None => {}
    }
    match h.version.as_ref().map(Value::as_u64) {
        Some(Some(n)) if n == u64::from(EXPORT_VERSION) => {}
        Some(Some(n)) if n > u64::from(EXPORT_VERSION) => {
            return Err(StoreError::ExportTooNew {
                origin: origin.to_string(),
                found: n,
                known: EXPORT_VERSION,
            })
        }
        Some(Some(n)) => {
            return Err(bad(
                origin,
                format!("export version {n}; this numaprobe reads version {EXPORT_VERSION}"),
            ))
        }
        Some(None) => return Err(bad(origin, "no \"version\" field".into())),
        None if complete => return Err(bad(origin, "no \"version\" field".into())),
        None => {}
    }
    if complete && !h.exported {
        return Err(bad(origin, "missing field `exported`".into()));
    }
    if complete && !h.runs {
        return Err(bad(origin, "missing field `runs`".into()));
    }
    Ok(())
}

struct DocVisitor<'a, F, R> {
    origin: &'a str,
    slot: &'a Slot,
    run_start: Rc<Cell<u64>>,
    pos: Rc<Cell<u64>>,
    on_run: &'a mut F,
    result: std::marker::PhantomData<R>,
}

impl<'de, R, F> Visitor<'de> for DocVisitor<'_, F, R>
where
    R: ResultFields + de::DeserializeOwned,
    F: FnMut(ExportedRun<R>) -> Result<()>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a numaprobe export object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut h = Header::default();
        let fail = |e: StoreError| {
            *self.slot.borrow_mut() = Some(e);
            de::Error::custom("stopped")
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => h.format = Some(map.next_value()?),
                "version" => h.version = Some(map.next_value()?),
                "exported" => {
                    map.next_value::<String>()?;
                    h.exported = true;
                }
                "runs" => {
                    h.runs = true;
                    map.next_value_seed(RunsSeed {
                        origin: self.origin,
                        slot: self.slot,
                        run_start: self.run_start.clone(),
                        pos: self.pos.clone(),
                        on_run: &mut *self.on_run,
                        result: std::marker::PhantomData,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            check_header(&h, self.origin, false).map_err(fail)?;
        }
        check_header(&h, self.origin, true).map_err(fail)
    }
}

struct RunsSeed<'a, F, R> {
    origin: &'a str,
    slot: &'a Slot,
    run_start: Rc<Cell<u64>>,
    pos: Rc<Cell<u64>>,
    on_run: &'a mut F,
    result: std::marker::PhantomData<R>,
}

impl<'de, R, F> DeserializeSeed<'de> for RunsSeed<'_, F, R>
where
    R: ResultFields + de::DeserializeOwned,
    F: FnMut(ExportedRun<R>) -> Result<()>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, R, F> Visitor<'de> for RunsSeed<'_, F, R>
where
    R: ResultFields + de::DeserializeOwned,
    F: FnMut(ExportedRun<R>) -> Result<()>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of runs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        self.run_start.set(self.pos.get());
        while let Some(run) = seq.next_element::<ExportedRun<R>>()? {
            let checked = check_exported_run(&run)
                .map_err(|d| bad(self.origin, d))
                .and_then(|()| (self.on_run)(run));
            if let Err(e) = checked {
                *self.slot.borrow_mut() = Some(e);
                return Err(de::Error::custom("stopped"));
            }
            self.run_start.set(self.pos.get());
        }
        Ok(())
    }
}

/// Reads an export from `reader`, checking the document and each run as
/// it comes and handing each checked run, its results read as `R`, to
/// `on_run`; `origin` names the input in errors.
fn stream_runs<I: Read, R: ResultFields + de::DeserializeOwned>(
    reader: I,
    origin: &str,
    on_run: impl FnMut(ExportedRun<R>) -> Result<()>,
) -> Result<()> {
    let run_start = Rc::new(Cell::new(0));
    let pos = Rc::new(Cell::new(0));
    let guarded =
        BufReader::with_capacity(64 << 10, Guard::new(reader, run_start.clone(), pos.clone()));
    let json = serde_json::Deserializer::from_reader(guarded);
    parse_runs(json, origin, run_start, pos, on_run)
}

/// [`stream_runs`] over an export held in memory (at most
/// [`WHOLE_FILE_CAP`] bytes, so no string or run can pass its limit): the
/// nesting is checked over all of it first, then it is parsed in place,
/// which is faster than through a reader.
fn slice_runs<R: ResultFields + de::DeserializeOwned>(
    bytes: &[u8],
    origin: &str,
    on_run: impl FnMut(ExportedRun<R>) -> Result<()>,
) -> Result<()> {
    let run_start = Rc::new(Cell::new(0));
    let pos = Rc::new(Cell::new(0));
    let mut guard = Guard::new(io::empty(), run_start.clone(), pos.clone());
    if let Err(e) = guard.scan(bytes) {
        return Err(bad(origin, e.to_string()));
    }
    let json = serde_json::Deserializer::from_slice(bytes);
    parse_runs(json, origin, run_start, pos, on_run)
}

/// The largest export file read whole into memory rather than streamed.
pub const WHOLE_FILE_CAP: u64 = 8 << 20;

/// Reads the export in `file` from its start: whole when it holds at most
/// [`WHOLE_FILE_CAP`] bytes, else as a stream.
fn file_runs<R: ResultFields + de::DeserializeOwned>(
    file: &mut File,
    origin: &str,
    on_run: impl FnMut(ExportedRun<R>) -> Result<()>,
) -> Result<()> {
    let unreadable = |source| StoreError::ExportUnreadable { origin: origin.to_string(), source };
    let len = file.metadata().map_err(unreadable)?.len();
    if len <= WHOLE_FILE_CAP {
        let mut bytes = Vec::with_capacity(len as usize);
        (&mut *file).take(WHOLE_FILE_CAP + 1).read_to_end(&mut bytes).map_err(unreadable)?;
        if bytes.len() as u64 <= WHOLE_FILE_CAP {
            return slice_runs(&bytes, origin, on_run);
        }
        // It grew past the cap while being read: streamed after all.
        file.rewind().map_err(unreadable)?;
    }
    stream_runs(file, origin, on_run)
}

/// The export document in `json`, each run handed to `on_run`.
fn parse_runs<'de, J, R>(
    mut json: serde_json::Deserializer<J>,
    origin: &str,
    run_start: Rc<Cell<u64>>,
    pos: Rc<Cell<u64>>,
    mut on_run: impl FnMut(ExportedRun<R>) -> Result<()>,
) -> Result<()>
where
    J: serde_json::de::Read<'de>,
    R: ResultFields + de::DeserializeOwned,
{
    let slot: Slot = RefCell::new(None);
    let visitor = DocVisitor {
        origin,
        slot: &slot,
        run_start,
        pos,
        on_run: &mut on_run,
        result: std::marker::PhantomData,
    };
    let parsed = de::Deserializer::deserialize_map(&mut json, visitor).and_then(|()| json.end());
    if let Some(e) = slot.into_inner() {
        return Err(e);
    }
    parsed.map_err(|e| json_error(origin, e))
}

/// A serde_json error as the store's: a limit passed or bad JSON is a
/// `corrupt` export, a read failure an unreadable one.
fn json_error(origin: &str, e: serde_json::Error) -> StoreError {
    use serde_json::error::Category;
    match e.classify() {
        Category::Io => {
            let io = io::Error::from(e);
            match io.get_ref().and_then(|x| x.downcast_ref::<LimitPassed>()) {
                Some(limit) => bad(origin, limit.to_string()),
                None => StoreError::ExportUnreadable { origin: origin.to_string(), source: io },
            }
        }
        Category::Syntax | Category::Eof => bad(origin, format!("invalid JSON: {e}")),
        Category::Data => bad(origin, e.to_string()),
    }
}

/// An export file whose every run passed the checks, ready to import.
pub struct CheckedExport {
    file: File,
    origin: String,
    /// Runs in it.
    pub runs: usize,
}

impl fmt::Debug for CheckedExport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckedExport")
            .field("origin", &self.origin)
            .field("runs", &self.runs)
            .finish()
    }
}

impl CheckedExport {
    /// Checks the export at `path`, a regular file (a FIFO or a device is
    /// refused at once, without blocking), reading it as a stream.
    pub fn from_file(path: &Path) -> Result<CheckedExport> {
        let origin = path.display().to_string();
        let unreadable = |source| StoreError::ExportUnreadable { origin: origin.clone(), source };
        let mut file = topo::fs::open_regular(path).map_err(unreadable)?;
        let mut runs = 0;
        file_runs(&mut file, &origin, |_: ExportedRun<ResultHead>| {
            runs += 1;
            Ok(())
        })?;
        Ok(CheckedExport { file, origin, runs })
    }

    /// Checks the export on standard input (named `stdin`), keeping a copy
    /// in an unlinked temporary file for the import.
    pub fn from_stdin() -> Result<CheckedExport> {
        let origin = "stdin".to_string();
        let unreadable = |source| StoreError::ExportUnreadable { origin: origin.clone(), source };
        let spool = topo::outfile::anonymous_temp(&std::env::temp_dir()).map_err(unreadable)?;
        let mut runs = 0;
        let mut tee = Tee { inner: io::stdin().lock(), copy: io::BufWriter::new(spool) };
        stream_runs(&mut tee, &origin, |_: ExportedRun<ResultHead>| {
            runs += 1;
            Ok(())
        })?;
        // What serde left unread after the document (only whitespace).
        io::copy(&mut tee.inner, &mut tee.copy).map_err(unreadable)?;
        let file = tee.copy.into_inner().map_err(|e| unreadable(e.into_error()))?;
        Ok(CheckedExport { file, origin, runs })
    }

    /// The name errors give it (the path, or `stdin`).
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl Store {
    /// Imports a checked export in one transaction (`BEGIN IMMEDIATE`):
    /// the file comes in whole or not at all. It is read again as a
    /// stream and checked again as it is (it may have changed since).
    pub fn import_checked(&mut self, export: &mut CheckedExport) -> Result<ImportOutcome> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::sqlite(&path, e);
        let origin = export.origin.clone();
        export
            .file
            .rewind()
            .map_err(|source| StoreError::ExportUnreadable { origin: origin.clone(), source })?;
        let mut outcome = ImportOutcome::default();
        let tx = self.conn_mut().transaction().map_err(err)?;
        file_runs(&mut export.file, &origin, |run: ExportedRun<ResultRow>| {
            import_run(&tx, &run, &mut outcome).map_err(|e| StoreError::sqlite(&path, e))
        })?;
        tx.commit().map_err(err)?;
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{ITEM_CAP, MAX_DEPTH, STRING_CAP};

    fn check(text: &str) -> Result<usize> {
        let mut n = 0;
        stream_runs(text.as_bytes(), "t.json", |_: ExportedRun<ResultHead>| {
            n += 1;
            Ok(())
        })?;
        Ok(n)
    }

    fn detail(e: StoreError) -> String {
        match e {
            StoreError::BadExport { detail, .. } => detail,
            other => panic!("expected a corrupt export, got {other:?}"),
        }
    }

    #[test]
    fn the_header_is_checked_as_from_json_does() {
        let e = detail(check(r#"{"format": "other", "version": 1}"#).unwrap_err());
        assert_eq!(e, "format is \"other\", not \"numaprobe-export\"");
        let e = detail(check(r#"{"version": 1, "exported": "x", "runs": []}"#).unwrap_err());
        assert!(e.contains("no \"format\""), "{e}");
        let e = check(r#"{"format": "numaprobe-export", "version": 9}"#).unwrap_err();
        assert!(matches!(e, StoreError::ExportTooNew { found: 9, .. }), "{e:?}");
        let ok = r#"{"format": "numaprobe-export", "version": 1, "exported": "x", "runs": []}"#;
        assert_eq!(check(ok).unwrap(), 0);
        let e = detail(check(&format!("{ok} trailing")).unwrap_err());
        assert!(e.starts_with("invalid JSON: trailing characters"), "{e}");
        let e = detail(check("[1, 2]").unwrap_err());
        assert!(e.contains("expected a numaprobe export object"), "{e}");
    }

    #[test]
    fn nesting_and_strings_are_bounded_with_one_line_errors() {
        let deep = "[".repeat(10_000);
        let e = detail(check(&deep).unwrap_err());
        assert_eq!(e, format!("nesting deeper than {MAX_DEPTH} levels at byte 65"));
        let long = format!(
            r#"{{"format": "numaprobe-export", "exported": "{}"}}"#,
            "x".repeat(STRING_CAP as usize + 10)
        );
        let e = detail(check(&long).unwrap_err());
        assert!(e.starts_with(&format!("a string longer than {STRING_CAP} bytes at byte")), "{e}");
        assert_eq!(e.lines().count(), 1);
        // Escaped quotes do not end a string early.
        let quoted =
            r#"{"format": "numaprobe-export", "version": 1, "exported": "a\"[[[[", "runs": []}"#;
        assert_eq!(check(quoted).unwrap(), 0);
    }

    #[test]
    fn a_run_is_checked_before_it_is_handed_on() {
        let run = |uuid: &str, started: &str| {
            serde_json::json!({
                "uuid": uuid, "label": null, "command_line": "c", "tool_version": "0.1.0",
                "started": started, "finished": null, "status": "complete", "message": null,
                "machine": {"fingerprint": "f", "description": "d", "info": {}},
                "config_hash": "h", "config": {}, "topology": {}, "results": []
            })
        };
        let doc = |runs: Vec<Value>| {
            serde_json::json!({"format": "numaprobe-export", "version": 1, "exported": "x",
                               "runs": runs})
            .to_string()
        };
        let good = run("3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6b", "2026-11-02T11:40:00.000Z");
        assert_eq!(check(&doc(vec![good.clone(), good.clone()])).unwrap(), 2);
        let bad_time = run("3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6c", "not a date");
        let mut seen = 0;
        let e = stream_runs(doc(vec![good, bad_time]).as_bytes(), "t.json", |_: ExportedRun| {
            seen += 1;
            Ok(())
        })
        .unwrap_err();
        assert_eq!(seen, 1, "the bad run is never handed on");
        assert!(detail(e).contains("\"not a date\""));
    }
    /// A run as an export holds it, with `config` and `topology` given.
    fn run_with(uuid: &str, config: Value, topology: Value) -> Value {
        serde_json::json!({
            "uuid": uuid, "label": "l", "command_line": "c", "tool_version": "0.1.0",
            "started": "2026-11-02T11:40:00.000Z", "finished": null, "status": "complete",
            "message": null, "machine": {"fingerprint": "f", "description": "d", "info": {}},
            "config_hash": "h", "config": config, "topology": topology, "results": []
        })
    }

    fn export_of(runs: Vec<Value>) -> String {
        serde_json::json!({"format": "numaprobe-export", "version": 1, "exported": "x",
                           "runs": runs})
        .to_string()
    }

    const UUID: &str = "3f2b8c1e-4d5a-4e6f-9a7b-1c2d3e4f5a6b";

    /// Guards issue 37 cause 4: a topology of 10^6 CPUs (16 MB) took 2 GB
    /// to import and 1.4 GB in every reader after. Refused by its shape,
    /// in a one-line error, before anything is built, both read whole and
    /// streamed.
    #[test]
    fn a_collection_of_more_than_item_cap_items_is_refused_by_its_shape() {
        let cpus: Vec<Value> = (0..=ITEM_CAP).map(|i| serde_json::json!({"id": i})).collect();
        let text = export_of(vec![run_with(
            UUID,
            serde_json::json!({}),
            serde_json::json!({"cpus": cpus}),
        )]);
        let e = detail(check(&text).unwrap_err());
        assert!(
            e.starts_with(&format!("an array or object of more than {ITEM_CAP} items in a run")),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        let e = slice_runs(text.as_bytes(), "t.json", |_: ExportedRun<ResultHead>| Ok(()));
        assert!(detail(e.unwrap_err()).contains("more than 65536 items"));
        // Exactly at the cap is fine.
        let cpus: Vec<Value> = (0..ITEM_CAP).map(|i| serde_json::json!(i)).collect();
        let ok = export_of(vec![run_with(
            UUID,
            serde_json::json!({}),
            serde_json::json!({"cpus": cpus}),
        )]);
        assert_eq!(check(&ok).unwrap(), 1);
        // The export's own list of runs is not bounded by it.
        let mut g = Guard::new(io::empty(), Rc::default(), Rc::default());
        let many = format!("{{\"runs\": [{}]}}", vec!["1"; ITEM_CAP as usize + 2].join(","));
        g.scan(many.as_bytes()).unwrap();
    }

    /// Guards issue 37 cause 4: 10^6 declared keys cost 500 MB in every
    /// reader; a run declares at most what `--set` accepts.
    #[test]
    fn a_run_declaring_more_than_set_accepts_is_refused() {
        use results::context::declared_limits::MAX_KEYS;
        let declared: serde_json::Map<String, Value> =
            (0..=MAX_KEYS).map(|i| (format!("k{i}"), Value::from("v"))).collect();
        let text = export_of(vec![run_with(
            UUID,
            serde_json::json!({"declared": declared}),
            serde_json::json!({}),
        )]);
        let e = detail(check(&text).unwrap_err());
        assert!(
            e.contains(&format!("declares {} settings, more than {MAX_KEYS}", MAX_KEYS + 1)),
            "{e}"
        );
        assert!(e.contains(UUID), "names the run: {e}");
        let long = serde_json::json!({"declared": {"k": "v".repeat(2000)}});
        let e = detail(
            check(&export_of(vec![run_with(UUID, long, serde_json::json!({}))])).unwrap_err(),
        );
        assert!(e.contains("longer than"), "{e}");
    }
}
