//! The study journal: what a study is about to change, and the values it
//! found, written before the first change, so that whatever ends the
//! process (`kill -9`, a power cut) the machine can be put back with
//! `numaprobe study --restore`. Beside it, the machine-wide study lock:
//! one study per machine, whatever measuring lock (`--lock`) each uses.
//!
//! Both live in a state folder only root may enter: `/var/lib/numaprobe`
//! (or `$NUMAPROBE_STATE_DIR`), made with mode 0700 when missing. The
//! folder must be a real folder (not a symbolic link), owned by this user
//! and writable by nobody else; the journal is written to a new file
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600), synced and renamed into
//! place, and read back only when it is a regular file of this user that
//! nobody else may read or write, of at most [`JOURNAL_CAP`] bytes. What
//! it names is checked again on restore: only the files this kernel shows
//! for the journaled setting are written.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use audit::runtime::{self, Knob, Saved, Snapshot};
use serde::{Deserialize, Serialize};
use topo::SysRoot;

/// The variable that moves the state folder (tests, containers).
pub const STATE_DIR_ENV: &str = "NUMAPROBE_STATE_DIR";
/// The state folder when [`STATE_DIR_ENV`] is not set.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/numaprobe";
/// The journal's file name in the state folder.
pub const JOURNAL_FILE: &str = "study.journal";
/// The study lock's file name in the state folder.
pub const LOCK_FILE: &str = "study.lock";
/// The largest journal read back (one holds a few hundred bytes).
pub const JOURNAL_CAP: u64 = 64 << 10;
/// The journal's format.
const VERSION: u32 = 1;

/// Why the journal could not be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("study state folder {}: {why}", path.display())]
    Unsafe { path: PathBuf, why: String },
    #[error("study journal {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("study journal {}: {why} (restore by hand, then remove it)", path.display())]
    Bad { path: PathBuf, why: String },
}

/// One changed file and the value it held before the study.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalFile {
    /// Under the root (`sys/kernel/mm/transparent_hugepage/enabled`).
    pub rel: String,
    pub value: String,
}

/// What an unfinished study changed, and what to put back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub version: u32,
    /// The study's process.
    pub pid: u32,
    /// When the study began (seconds since 1970-01-01 UTC).
    pub started_unix: u64,
    /// The setting (`thp_enabled`).
    pub key: String,
    /// Its value before the study, as users write it.
    pub shown: String,
    pub files: Vec<JournalFile>,
}

impl Entry {
    /// The journal of a study about to change what `snap` holds.
    pub fn of(snap: &Snapshot) -> Entry {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        Entry {
            version: VERSION,
            pid: std::process::id(),
            started_unix: now.map_or(0, |d| d.as_secs()),
            key: snap.knob.key().to_string(),
            shown: snap.shown.clone(),
            files: snap
                .files
                .iter()
                .map(|f| JournalFile { rel: f.rel.clone(), value: f.value.clone() })
                .collect(),
        }
    }
}

/// The state folder, checked.
#[derive(Debug, Clone)]
pub struct StateDir(PathBuf);

/// The state folder's path: `$NUMAPROBE_STATE_DIR`, else
/// [`DEFAULT_STATE_DIR`].
pub fn default_path() -> PathBuf {
    std::env::var_os(STATE_DIR_ENV)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_STATE_DIR))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

impl StateDir {
    /// The folder at `path`, made (mode 0700; its parents as usual) when
    /// missing; refused when it is a symbolic link or not a folder, owned
    /// by another user, or writable by others.
    pub fn ensure(path: &Path) -> Result<StateDir, JournalError> {
        // Its parent (`/var/lib`) as the system makes folders: missing in
        // a bare initramfs.
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|source| JournalError::Io { path: parent.to_path_buf(), source })?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(JournalError::Io { path: path.to_path_buf(), source }),
        }
        StateDir::check(path)
    }

    /// The folder at `path` when it exists (`None` when it does not),
    /// checked as [`StateDir::ensure`] does.
    pub fn existing(path: &Path) -> Result<Option<StateDir>, JournalError> {
        match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            _ => StateDir::check(path).map(Some),
        }
    }

    fn check(path: &Path) -> Result<StateDir, JournalError> {
        let unsafe_ =
            |why: &str| JournalError::Unsafe { path: path.to_path_buf(), why: why.into() };
        let meta = std::fs::symlink_metadata(path)
            .map_err(|source| JournalError::Io { path: path.to_path_buf(), source })?;
        if meta.file_type().is_symlink() {
            return Err(unsafe_("it is a symbolic link"));
        }
        if !meta.is_dir() {
            return Err(unsafe_("it is not a folder"));
        }
        if meta.uid() != euid() {
            return Err(unsafe_(&format!(
                "owned by user {}, not by this user ({})",
                meta.uid(),
                euid()
            )));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(unsafe_(&format!(
                "others may write in it (mode {:o}); it must be 0700",
                meta.mode() & 0o777
            )));
        }
        Ok(StateDir(path.to_path_buf()))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The journal's path.
    pub fn journal(&self) -> PathBuf {
        self.0.join(JOURNAL_FILE)
    }

    /// The machine-wide study lock's path.
    pub fn lock(&self) -> PathBuf {
        self.0.join(LOCK_FILE)
    }

    /// Writes `entry` as the journal: to a new file, synced, then renamed
    /// over the journal's name (so a reader sees the old journal or the
    /// new one, never a part).
    pub fn write(&self, entry: &Entry) -> Result<(), JournalError> {
        let tmp = self.0.join(format!("{JOURNAL_FILE}.new"));
        let io = |source| JournalError::Io { path: tmp.clone(), source };
        // A leftover of a write that died: unlink never follows a link.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
        let text = serde_json::to_string_pretty(entry).unwrap_or_default() + "\n";
        let mut f =
            open_raw(&tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o600).map_err(io)?;
        f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).map_err(io)?;
        drop(f);
        std::fs::rename(&tmp, self.journal())
            .map_err(|source| JournalError::Io { path: self.journal(), source })?;
        self.sync();
        Ok(())
    }

    /// The journal of an unfinished study, `None` when there is none.
    pub fn read(&self) -> Result<Option<Entry>, JournalError> {
        let path = self.journal();
        let io = |source| JournalError::Io { path: path.clone(), source };
        let bad = |why: String| JournalError::Bad { path: path.clone(), why };
        let f = match open_raw(&path, libc::O_RDONLY | libc::O_NONBLOCK, 0) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(bad("it is a symbolic link".into()))
            }
            Err(e) => return Err(io(e)),
        };
        let meta = f.metadata().map_err(io)?;
        if !meta.file_type().is_file() {
            return Err(bad("not a regular file".into()));
        }
        if meta.uid() != euid() || meta.mode() & 0o077 != 0 {
            return Err(bad(format!(
                "owned by user {} with mode {:o}; a journal is this user's, mode 0600",
                meta.uid(),
                meta.mode() & 0o777
            )));
        }
        let mut bytes = Vec::new();
        f.take(JOURNAL_CAP + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > JOURNAL_CAP {
            return Err(bad(format!("larger than {JOURNAL_CAP} bytes")));
        }
        let entry: Entry =
            serde_json::from_slice(&bytes).map_err(|e| bad(format!("not a journal: {e}")))?;
        if entry.version != VERSION {
            return Err(bad(format!("format {}, this numaprobe writes {VERSION}", entry.version)));
        }
        Ok(Some(entry))
    }

    /// Removes the journal (the study put everything back).
    pub fn clear(&self) -> Result<(), JournalError> {
        match std::fs::remove_file(self.journal()) {
            Ok(()) => {
                self.sync();
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(JournalError::Io { path: self.journal(), source }),
        }
    }

    /// Syncs the folder, so a rename or an unlink survives a power cut
    /// (best effort).
    fn sync(&self) {
        if let Ok(d) = File::open(&self.0) {
            let _ = d.sync_all();
        }
    }
}

/// `open(2)` never following a final symbolic link.
fn open_raw(path: &Path, flags: libc::c_int, mode: libc::mode_t) -> std::io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in the path"))?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
    // SAFETY: `c` is a valid NUL-terminated string for the call's duration;
    // the mode is read only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// The snapshot to put back for `entry`, after checking it against this
/// machine: a setting numaprobe knows, and only files this kernel shows
/// for it (a journal naming any other file is refused, nothing written).
pub fn snapshot_of(root: &SysRoot, entry: &Entry) -> Result<Snapshot, String> {
    let knob = Knob::parse(&entry.key).map_err(|e| e.to_string())?;
    let now = runtime::snapshot(root, knob).map_err(|e| e.to_string())?;
    for f in &entry.files {
        if !now.files.iter().any(|n| n.rel == f.rel) {
            return Err(format!("names {:?}, which is not a file of {}", f.rel, entry.key));
        }
        if f.value.is_empty() || f.value.len() > 4096 || f.value.chars().any(char::is_control) {
            return Err(format!("holds an unusable value for {:?}", f.rel));
        }
    }
    Ok(Snapshot {
        knob,
        shown: entry.shown.clone(),
        files: entry
            .files
            .iter()
            .map(|f| Saved { rel: f.rel.clone(), value: f.value.clone() })
            .collect(),
    })
}

/// Why the machine-wide study lock was not taken. Its own words name no
/// flag and no command: the front end words `Busy` and `LeftOver` with
/// them (console's `study::refusal::study_lock`).
#[derive(Debug, thiserror::Error)]
pub enum StudyLockError {
    /// Another study holds the study lock at `path` (its holder's PID when
    /// the lock file names one), whichever measuring lock each was given.
    #[error(
        "another study is running on this machine ({}; study lock {}): one study at a time",
        pid.map_or("holder PID unknown".into(), |p| format!("PID {p}")),
        path.display()
    )]
    Busy { path: PathBuf, pid: Option<u32> },
    #[error(transparent)]
    Lock(lock::LockError),
    /// A study killed earlier left its journal: it must be restored first.
    #[error(
        "a study killed earlier left {} changed (it was {} before; study PID {}): its journal \
         must be restored first",
        .0.key, .0.shown, .0.pid
    )]
    LeftOver(Box<Entry>),
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl StateDir {
    /// The machine-wide study lock beside the journal: one study at a time
    /// on this machine, whichever measuring lock each was given.
    pub fn take_study_lock(&self) -> Result<lock::MeasureLock, StudyLockError> {
        let path = self.lock();
        lock::MeasureLock::acquire_at(&path).map_err(|e| match e {
            lock::LockError::Busy { pid, .. } => StudyLockError::Busy { path, pid },
            e => StudyLockError::Lock(e),
        })
    }

    /// Before a study: the study lock taken, and no journal left by a
    /// study killed earlier (its values would be taken for the originals).
    pub fn begin_study(&self) -> Result<lock::MeasureLock, StudyLockError> {
        let held = self.take_study_lock()?;
        match self.read()? {
            Some(left) => Err(StudyLockError::LeftOver(Box::new(left))),
            None => Ok(held),
        }
    }
}

/// The journal a study left when it was killed, if any (in the default
/// state folder; nothing while that study still holds its lock).
pub fn left_over() -> Option<Entry> {
    let state = StateDir::existing(&default_path()).ok().flatten()?;
    let entry = state.read().ok().flatten()?;
    // A running study's journal is not left over.
    lock::held_by(&state.lock()).is_none().then_some(entry)
}

/// Why `study --restore` could not put the journaled values back; the
/// journal is kept.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("study journal {}: {why}", path.display())]
    Unusable { path: PathBuf, why: String },
    #[error("{key} could not be put back to {shown}: {files}; the journal is kept; restore by hand: {commands}")]
    NotRestored { key: String, shown: String, files: String, commands: String },
    #[error("{key} reads {now} after being put back to {shown}; the journal is kept; restore by hand: {commands}")]
    ReadsOther { key: String, now: String, shown: String, commands: String },
    #[error(transparent)]
    ReadBack(#[from] runtime::RuntimeError),
}

/// What `study --restore` put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub entry: Entry,
    /// The value in force before (`None`: unreadable).
    pub was: Option<String>,
}

/// Puts back the values journaled in `state` (checked against this
/// machine, [`snapshot_of`]), reads them back and clears the journal;
/// `None` when nothing is journaled. The caller holds the study lock.
pub fn restore(root: &SysRoot, state: &StateDir) -> Result<Option<Restored>, RestoreError> {
    let Some(entry) = state.read()? else { return Ok(None) };
    let snap = snapshot_of(root, &entry)
        .map_err(|why| RestoreError::Unusable { path: state.journal(), why })?;
    let was = runtime::current(root, snap.knob).ok();
    let left = runtime::restore(root, &snap);
    let commands = runtime::restore_commands(root, &snap).join("; ");
    if !left.is_empty() {
        let files: Vec<String> =
            left.iter().map(|f| format!("{} ({}: {})", f.path, f.value, f.error)).collect();
        return Err(RestoreError::NotRestored {
            key: entry.key,
            shown: entry.shown,
            files: files.join(", "),
            commands,
        });
    }
    let now = runtime::current(root, snap.knob)?;
    if now != entry.shown {
        return Err(RestoreError::ReadsOther { key: entry.key, now, shown: entry.shown, commands });
    }
    state.clear()?;
    Ok(Some(Restored { entry, was }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const THP: &str = "sys/kernel/mm/transparent_hugepage/enabled";

    fn entry() -> Entry {
        Entry {
            version: VERSION,
            pid: 7,
            started_unix: 1_795_000_000,
            key: "thp_enabled".into(),
            shown: "madvise".into(),
            files: vec![JournalFile { rel: THP.into(), value: "madvise".into() }],
        }
    }

    #[test]
    fn the_state_folder_is_made_private_and_the_journal_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        assert!(StateDir::existing(&path).unwrap().is_none());
        let s = StateDir::ensure(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        assert_eq!(s.read().unwrap(), None);
        s.write(&entry()).unwrap();
        let jmode = std::fs::metadata(s.journal()).unwrap().permissions().mode() & 0o777;
        assert_eq!(jmode, 0o600);
        assert_eq!(s.read().unwrap(), Some(entry()));
        assert!(StateDir::existing(&path).unwrap().is_some());
        s.clear().unwrap();
        assert_eq!(s.read().unwrap(), None);
        s.clear().unwrap();
    }

    #[test]
    fn links_and_open_folders_are_refused_and_their_targets_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let e = StateDir::ensure(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");

        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = StateDir::ensure(&open).unwrap_err().to_string();
        assert!(e.contains("others may write"), "{e}");

        // A journal that is a link to a file is refused, never read.
        let s = StateDir::ensure(&dir.path().join("s")).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, s.journal()).unwrap();
        let e = s.read().unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        // Writing replaces the link itself, never its target.
        s.write(&entry()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert_eq!(s.read().unwrap(), Some(entry()));

        // A journal others may read or write is not trusted.
        std::fs::set_permissions(s.journal(), std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = s.read().unwrap_err().to_string();
        assert!(e.contains("mode 666"), "{e}");
    }

    #[test]
    fn a_journal_naming_another_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(THP);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "always [madvise] never\n").unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        let snap = snapshot_of(&root, &entry()).unwrap();
        assert_eq!(snap.files[0].value, "madvise");
        let mut evil = entry();
        evil.files[0].rel = "etc/shadow".into();
        let e = snapshot_of(&root, &evil).unwrap_err();
        assert!(e.contains("not a file of thp_enabled"), "{e}");
        let mut evil = entry();
        evil.files[0].value = "always\nnever".into();
        assert!(snapshot_of(&root, &evil).is_err());
    }

    /// `study --restore`: the journaled value back, read back, journal
    /// cleared; a second study refused while the journal is there.
    #[test]
    fn a_left_journal_is_restored_and_blocks_the_next_study_until_then() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(THP);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "[always] madvise never\n").unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        let s = StateDir::ensure(&dir.path().join("state")).unwrap();
        assert_eq!(restore(&root, &s).unwrap(), None, "nothing journaled: nothing done");
        s.write(&entry()).unwrap();
        let e = s.begin_study().unwrap_err();
        assert!(
            e.to_string().contains("left thp_enabled changed (it was madvise before; study PID 7)"),
            "{e}"
        );
        let done = restore(&root, &s).unwrap().unwrap();
        assert_eq!((done.entry, done.was.as_deref()), (entry(), Some("always")));
        assert_eq!(runtime::current(&root, Knob::ThpEnabled).unwrap(), "madvise");
        assert_eq!(s.read().unwrap(), None);
        let held = s.begin_study().unwrap();
        let busy = s.take_study_lock().unwrap_err();
        assert!(busy.to_string().contains("another study is running on this machine"), "{busy}");
        drop(held);
    }
}
