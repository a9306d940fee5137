//! The machine-wide measuring lock: two measuring runs at once on one
//! machine disturb each other's figures, so the second one refuses (or
//! waits) and names the holder.
//!
//! The lock is an advisory `flock(2)` on `/run/lock/numaprobe-measure.lock`
//! (or `/tmp/numaprobe-measure.lock` when `/run/lock` is missing), shared by
//! every user of the machine; `NUMAPROBE_LOCK` chooses another file. The
//! kernel releases it when the holder exits, even on a crash, so a stale
//! lock cannot exist.
//!
//! In containers each has its own `/run/lock`: to keep pods of one node
//! from measuring at once, mount one host folder into all of them (a
//! Kubernetes `hostPath`, e.g. `/var/lock/numaprobe`) and point
//! `NUMAPROBE_LOCK` (the CLI's `--lock`) at a file in it; `flock` on the
//! node's file then excludes across containers (docs/fleet.md).
//!
//! Both default folders are world-writable, and `--lock`/`NUMAPROBE_LOCK`
//! may name any file, so the path is handled as hostile ground: it is
//! opened with `O_NOFOLLOW` (a symbolic link placed there is refused, never
//! followed) and must be a regular file. Only a file this process creates
//! (`O_CREAT|O_EXCL`, mode 0644) receives the holder's PID; an existing
//! file, whoever owns it, is opened read-only and locked as it is, never
//! truncated or written. The holder is found in `/proc/locks`.
//!
//! [`take`] is how a measuring command takes it: waiting, or not, and
//! saying so.

use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub mod take;
pub use take::{take, TakeError, Waiting, INTERACTIVE_WAIT};

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "another numaprobe measurement is running on this machine ({}; lock {})",
        holder_text(*pid),
        path.display()
    )]
    Busy { path: PathBuf, pid: Option<u32> },
    /// Waiting was given up (Ctrl-C or the caller said stop).
    #[error("gave up waiting for the measuring lock {} ({})", path.display(), holder_text(*pid))]
    GaveUp { path: PathBuf, pid: Option<u32> },
    /// The lock path is something that must not be opened or written: a
    /// symbolic link, a directory, a device...
    #[error(
        "measuring lock {}: refusing to use it: {why} (remove it, or set NUMAPROBE_LOCK to another file)",
        path.display()
    )]
    Unsafe { path: PathBuf, why: String },
    #[error("measuring lock {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn holder_text(pid: Option<u32>) -> String {
    match pid {
        Some(p) => format!("held by PID {p}"),
        None => "holder PID unknown".to_string(),
    }
}

/// A held measuring lock; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct MeasureLock {
    _file: File,
    path: PathBuf,
}

/// The opened lock file and whether this process created it (only then
/// is the PID written into it).
struct LockFile {
    file: File,
    created: bool,
}

impl MeasureLock {
    /// The machine-wide lock file: `$NUMAPROBE_LOCK`, else
    /// `/run/lock/numaprobe-measure.lock` when `/run/lock` exists, else
    /// `/tmp/numaprobe-measure.lock`.
    pub fn default_path() -> PathBuf {
        if let Some(p) = std::env::var_os("NUMAPROBE_LOCK").filter(|p| !p.is_empty()) {
            return PathBuf::from(p);
        }
        let run_lock = Path::new("/run/lock");
        if run_lock.is_dir() {
            run_lock.join("numaprobe-measure.lock")
        } else {
            PathBuf::from("/tmp/numaprobe-measure.lock")
        }
    }

    /// Takes the machine-wide lock now, or fails with [`LockError::Busy`].
    pub fn acquire() -> Result<MeasureLock, LockError> {
        MeasureLock::acquire_at(&MeasureLock::default_path())
    }

    /// Takes the lock at `path` now, or fails with [`LockError::Busy`].
    pub fn acquire_at(path: &Path) -> Result<MeasureLock, LockError> {
        let lf = open_lock_file(path)?;
        if try_flock(&lf.file, path)? {
            return Ok(MeasureLock::held(lf, path));
        }
        Err(LockError::Busy { path: path.to_path_buf(), pid: holder_pid(&lf.file) })
    }

    /// Takes the lock at `path`, waiting while it is held. Every `poll`
    /// interval `keep_waiting(holder_pid)` is asked whether to go on (return
    /// false on Ctrl-C); it is first called before the first wait, so the
    /// caller can say "waiting for PID n".
    pub fn acquire_wait(
        path: &Path,
        poll: Duration,
        mut keep_waiting: impl FnMut(Option<u32>) -> bool,
    ) -> Result<MeasureLock, LockError> {
        let lf = open_lock_file(path)?;
        loop {
            if try_flock(&lf.file, path)? {
                return Ok(MeasureLock::held(lf, path));
            }
            let pid = holder_pid(&lf.file);
            if !keep_waiting(pid) {
                return Err(LockError::GaveUp { path: path.to_path_buf(), pid });
            }
            std::thread::sleep(poll);
        }
    }

    fn held(lf: LockFile, path: &Path) -> MeasureLock {
        let mut file = lf.file;
        if lf.created {
            // Best effort: the PID is only a fallback for /proc/locks.
            let _ = file
                .set_len(0)
                .and_then(|_| file.rewind())
                .and_then(|_| writeln!(file, "{}", std::process::id()))
                .and_then(|_| file.flush());
        }
        MeasureLock { _file: file, path: path.to_path_buf() }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The PID holding a lock on the file at `path` now, from `/proc/locks`,
/// without taking or waiting for it: `None` when the file is missing, is
/// not a regular file, or nobody holds it (or `/proc/locks` cannot be
/// read). For readers that only need to know whether a holder is alive
/// (a study's lock beside its journal).
pub fn held_by(path: &Path) -> Option<u32> {
    let file = open_raw(path, libc::O_RDONLY).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    let text = topo::SysRoot::live().read_optional("proc/locks").ok().flatten()?;
    pid_in_proc_locks(&text, meta.dev(), meta.ino())
}

/// Mode of a lock file this process creates: everyone may open it to
/// `flock` it (read access is enough), only its creator may write it.
const CREATE_MODE: libc::mode_t = 0o644;

/// `open(2)` with raw flags, never following a final symbolic link.
fn open_raw(path: &Path, flags: libc::c_int) -> std::io::Result<File> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in the path"))?;
    let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY;
    // SAFETY: `c` is a valid NUL-terminated string for the call's duration;
    // the mode argument is read only with O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags, CREATE_MODE as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Opens the lock file, or creates it, refusing symbolic links and
/// anything that is not a regular file. An existing file is opened
/// read-only (`flock` needs no write access), so nothing numaprobe did not
/// create is ever written, whoever owns it; a new file is made with
/// `O_CREAT|O_EXCL` and mode 0644.
fn open_lock_file(path: &Path) -> Result<LockFile, LockError> {
    let io = |source| LockError::Io { path: path.to_path_buf(), source };
    let unsafe_ = |why: &str| LockError::Unsafe { path: path.to_path_buf(), why: why.into() };
    let refused = |e: &std::io::Error| match e.raw_os_error() {
        Some(libc::ELOOP) => Some(unsafe_("it is a symbolic link")),
        Some(libc::EISDIR) => Some(unsafe_("it is a directory")),
        _ => None,
    };
    loop {
        match open_raw(path, libc::O_RDONLY) {
            Ok(file) => {
                let meta = file.metadata().map_err(io)?;
                if meta.file_type().is_dir() {
                    return Err(unsafe_("it is a directory"));
                }
                if !meta.file_type().is_file() {
                    return Err(unsafe_("it is not a regular file"));
                }
                return Ok(LockFile { file, created: false });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(refused(&e).unwrap_or_else(|| io(e))),
        }
        match open_raw(path, libc::O_RDWR | libc::O_CREAT | libc::O_EXCL) {
            Ok(f) => {
                // The umask may have narrowed the mode; others must be able
                // to open the file to lock it. fchmod acts on this very file.
                // SAFETY: fchmod on a descriptor we own.
                unsafe { libc::fchmod(f.as_raw_fd(), CREATE_MODE) };
                return Ok(LockFile { file: f, created: true });
            }
            // Created by someone else between the two opens: open theirs.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(refused(&e).unwrap_or_else(|| io(e))),
        }
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when held elsewhere.
fn try_flock(file: &File, path: &Path) -> Result<bool, LockError> {
    loop {
        // SAFETY: flock on a file descriptor we own for the call's duration.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EWOULDBLOCK) => return Ok(false),
            Some(libc::EINTR) => continue,
            _ => return Err(LockError::Io { path: path.to_path_buf(), source: e }),
        }
    }
}

/// The holder's PID from `/proc/locks`; only where that cannot be read,
/// the number in the first bytes of the file (written by whoever created
/// it, so possibly an earlier holder's).
fn holder_pid(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    if let Some(text) = topo::SysRoot::live().read_optional("proc/locks").ok().flatten() {
        return pid_in_proc_locks(&text, meta.dev(), meta.ino());
    }
    let mut head = [0u8; 16];
    let mut f = file;
    f.seek(SeekFrom::Start(0)).ok()?;
    let n = f.read(&mut head).ok()?;
    std::str::from_utf8(&head[..n]).ok()?.trim().parse().ok()
}

/// Finds the PID holding an `FLOCK` on the file `dev`/`ino` in the text of
/// `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF`, the
/// device as hex major:minor).
fn pid_in_proc_locks(text: &str, dev: u64, ino: u64) -> Option<u32> {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        // Blocked waiters are listed as "1: -> FLOCK ...": skip them.
        if f.len() < 6 || f[1] != "FLOCK" {
            continue;
        }
        let mut id = f[5].split(':');
        let (Some(ma), Some(mi), Some(i)) = (id.next(), id.next(), id.next()) else {
            continue;
        };
        let same = u32::from_str_radix(ma, 16).ok() == Some(major)
            && u32::from_str_radix(mi, 16).ok() == Some(minor)
            && i.parse::<u64>().ok() == Some(ino);
        if same {
            return f[4].parse().ok();
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn finds_the_holder_in_proc_locks() {
        let dev = libc::makedev(0xfd, 0x01);
        let text = "1: POSIX  ADVISORY  WRITE 999 fd:01:77 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 5555 fd:01:77 0 EOF\n";
        assert_eq!(pid_in_proc_locks(text, dev, 77), Some(4242));
        assert_eq!(pid_in_proc_locks(text, dev, 78), None);
        assert_eq!(pid_in_proc_locks(text, libc::makedev(0xfd, 0x02), 77), None);
    }

    #[test]
    fn a_second_lock_is_refused_with_the_holder_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let held = MeasureLock::acquire_at(&path).unwrap();
        // A new file can be opened by every user, written by its creator.
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        // flock locks belong to the open file description: a second open in
        // this process conflicts just like another process would.
        match MeasureLock::acquire_at(&path) {
            Err(LockError::Busy { pid, path: p }) => {
                assert_eq!(pid, Some(std::process::id()));
                assert_eq!(p, path);
            }
            other => panic!("expected Busy, got {other:?}"),
        }
        let mut asked = 0;
        let r = MeasureLock::acquire_wait(&path, Duration::from_millis(1), |pid| {
            assert_eq!(pid, Some(std::process::id()));
            asked += 1;
            asked < 3
        });
        assert!(matches!(r, Err(LockError::GaveUp { .. })));
        assert_eq!(asked, 3);
        drop(held);
        let again = MeasureLock::acquire_at(&path).unwrap();
        assert_eq!(again.path(), path);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }

    #[test]
    fn held_by_names_the_holder_without_taking_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.lock");
        assert_eq!(held_by(&path), None, "no file");
        let held = MeasureLock::acquire_at(&path).unwrap();
        assert_eq!(held_by(&path), Some(std::process::id()));
        // Asking took nothing: the holder still holds it alone.
        assert!(matches!(MeasureLock::acquire_at(&path), Err(LockError::Busy { .. })));
        drop(held);
        assert_eq!(held_by(&path), None, "released");
    }

    #[test]
    fn waiting_ends_when_the_holder_releases() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let held = Some(MeasureLock::acquire_at(&path).unwrap());
        let mut held = held;
        let got = MeasureLock::acquire_wait(&path, Duration::from_millis(1), |_| {
            held.take(); // the holder finishes while we wait
            true
        });
        assert!(got.is_ok());
    }

    /// `ln -s victim L; NUMAPROBE_LOCK=L numaprobe run` must not replace
    /// the victim's content with a PID.
    #[test]
    fn a_symlink_at_the_lock_path_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let link = dir.path().join("L");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        for r in [
            MeasureLock::acquire_at(&link),
            MeasureLock::acquire_wait(&link, Duration::from_millis(1), |_| false),
        ] {
            match r {
                Err(e @ LockError::Unsafe { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.contains(&link.display().to_string()), "{msg}");
                    assert!(msg.contains("symbolic link"), "{msg}");
                }
                other => panic!("expected Unsafe, got {other:?}"),
            }
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        // A dangling link is refused too, and nothing is created behind it.
        let dangling = dir.path().join("D");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(matches!(MeasureLock::acquire_at(&dangling), Err(LockError::Unsafe { .. })));
        assert!(!dir.path().join("nowhere").exists());
    }

    #[test]
    fn a_directory_or_a_fifo_at_the_lock_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("d");
        std::fs::create_dir(&sub).unwrap();
        assert!(matches!(MeasureLock::acquire_at(&sub), Err(LockError::Unsafe { .. })));
        let fifo = dir.path().join("f");
        let c = CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Must not block on the FIFO, must not lock it.
        assert!(matches!(MeasureLock::acquire_at(&fifo), Err(LockError::Unsafe { .. })));
    }

    /// `cp /etc/passwd p; numaprobe --lock p ...` turned `p` into a PID:
    /// an existing file is locked as it is, whoever owns it and whatever
    /// its mode, and never truncated or written.
    #[test]
    fn an_existing_file_is_locked_but_never_rewritten_whatever_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o644, 0o600, 0o444, 0o666] {
            let path = dir.path().join(format!("p{mode:o}"));
            std::fs::write(&path, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let held = MeasureLock::acquire_at(&path).unwrap();
            let after = std::fs::read_to_string(&path).unwrap();
            assert_eq!(after, "root:x:0:0:root:/root:/bin/bash\n", "mode {mode:o}");
            let meta = std::fs::metadata(&path).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, mode, "mode unchanged");
            // Locked all the same: the holder comes from /proc/locks.
            match MeasureLock::acquire_at(&path) {
                Err(LockError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
                other => panic!("expected Busy, got {other:?}"),
            }
            let waited = MeasureLock::acquire_wait(&path, Duration::from_millis(1), |_| false);
            assert!(matches!(waited, Err(LockError::GaveUp { .. })));
            drop(held);
            assert_eq!(std::fs::read_to_string(&path).unwrap(), after);
        }
    }

    /// A hard link to a file we own (e.g. root's own /etc file linked into
    /// /run/lock by someone else) is locked but never truncated.
    #[test]
    fn a_hard_linked_file_is_locked_but_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "keep me\n").unwrap();
        let link = dir.path().join("hard.lock");
        std::fs::hard_link(&target, &link).unwrap();
        let held = MeasureLock::acquire_at(&link).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
        // Still a lock: the holder is found in /proc/locks.
        match MeasureLock::acquire_at(&link) {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected Busy, got {other:?}"),
        }
        drop(held);
    }
}
