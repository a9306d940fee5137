//! The machine-wide measuring lock: two measuring runs at once on one
//! machine disturb each other's figures, so the second one refuses (or
//! waits) and names the holder.
//!
//! The lock is an advisory `flock(2)` on `/run/lock/numaprobe-measure.lock`
//! (or `/tmp/numaprobe-measure.lock` when `/run/lock` is missing), shared by
//! every user of the machine; `NUMAPROBE_LOCK` chooses another file. The
//! kernel releases it when the holder exits, even on a crash, so a stale
//! lock cannot exist. The holder writes its PID into the file; when the file
//! cannot be written (another user created it read-only) the holder is found
//! in `/proc/locks`.

use std::fs::{File, OpenOptions};
use std::io::{Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error(
        "another numaprobe measurement is running on this machine ({}; lock {}); wait for it or use --wait",
        holder_text(*pid),
        path.display()
    )]
    Busy { path: PathBuf, pid: Option<u32> },
    /// Waiting was given up (Ctrl-C or the caller said stop).
    #[error("gave up waiting for the measuring lock {} ({})", path.display(), holder_text(*pid))]
    GaveUp { path: PathBuf, pid: Option<u32> },
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
        let file = open_lock_file(path)?;
        if try_flock(&file, path)? {
            return Ok(MeasureLock::held(file, path));
        }
        Err(LockError::Busy { path: path.to_path_buf(), pid: holder_pid(&file, path) })
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
        let file = open_lock_file(path)?;
        loop {
            if try_flock(&file, path)? {
                return Ok(MeasureLock::held(file, path));
            }
            let pid = holder_pid(&file, path);
            if !keep_waiting(pid) {
                return Err(LockError::GaveUp { path: path.to_path_buf(), pid });
            }
            std::thread::sleep(poll);
        }
    }

    fn held(mut file: File, path: &Path) -> MeasureLock {
        // Best effort: a read-only lock file still locks; the holder is then
        // found through /proc/locks.
        let _ = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .and_then(|_| file.flush());
        MeasureLock { _file: file, path: path.to_path_buf() }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Opens (or creates, world-writable so other users can lock it too) the
/// lock file. In a sticky world-writable directory such as /tmp the kernel
/// may refuse `O_CREAT` on another user's file (`protected_regular`), so an
/// existing file is opened without it, read-only if need be.
fn open_lock_file(path: &Path) -> Result<File, LockError> {
    let io = |source| LockError::Io { path: path.to_path_buf(), source };
    loop {
        match OpenOptions::new().read(true).write(true).open(path) {
            Ok(f) => return Ok(f),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return OpenOptions::new().read(true).open(path).map_err(io);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(e)),
        }
        match OpenOptions::new().read(true).write(true).create_new(true).mode(0o666).open(path) {
            Ok(f) => {
                let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666));
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
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

/// The holder's PID from `/proc/locks` (authoritative), else from the file.
fn holder_pid(file: &File, _path: &Path) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let locks = topo::SysRoot::live().read_optional("proc/locks").ok().flatten();
    if let Some(pid) = locks.and_then(|text| pid_in_proc_locks(&text, meta.dev(), meta.ino())) {
        return Some(pid);
    }
    let text = std::fs::read_to_string(_path).ok()?;
    text.trim().parse().ok()
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
}
