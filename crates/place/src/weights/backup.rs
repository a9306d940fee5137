//! Weights backup files: saved only as new files, read bounded, and
//! checked before a restore writes anything. A backup names what it
//! restores (node numbers, the `auto` file's name), so a hostile or
//! damaged one must not reach any file but the kernel's weighted-interleave
//! files: `nodeN` and `auto` (or its other name `__auto_type`).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::{Backup, AUTO_FILES, BACKUP_FORMAT, MAX_KERNEL_WEIGHT};

/// The largest backup file read: a real one is a few hundred bytes, so
/// this bounds memory against `/dev/zero` or a huge file.
pub const BACKUP_CAP: u64 = 1 << 20;

/// Why a backup file cannot be saved, read or restored.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The file cannot be read (missing, a FIFO or a device, too long...).
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not a weights backup, or one naming something a restore must not
    /// write.
    #[error("{}: not a weights backup: {detail}", path.display())]
    Invalid { path: PathBuf, detail: String },
    /// The backup could not be saved (nothing was changed).
    #[error("{}: cannot save the backup: {source}", path.display())]
    Save {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Backup {
    /// Checks what a restore of this backup would write: the format, the
    /// `auto` file's name (one of the names the kernel uses) and each
    /// weight (1 to 255). Node numbers are numbers, so `nodeN` cannot
    /// name any other file.
    pub fn check(&self) -> Result<(), String> {
        if self.format != BACKUP_FORMAT {
            return Err(format!("format {:?}, expected {BACKUP_FORMAT}", self.format));
        }
        if let Some(name) = &self.previous.auto_file {
            if !AUTO_FILES.contains(&name.as_str()) {
                return Err(format!(
                    "\"auto_file\" is {name:?}: a restore writes only the kernel's {} file",
                    AUTO_FILES.join(" or ")
                ));
            }
        }
        for (n, w) in &self.previous.weights {
            if !(1..=MAX_KERNEL_WEIGHT).contains(w) {
                return Err(format!("node {n} weight {w}: the kernel takes 1 to 255"));
            }
        }
        Ok(())
    }
}

/// Reads and checks the backup at `path` ([`Backup::check`]), at most
/// [`BACKUP_CAP`] bytes of a regular file: a FIFO, a device or a longer
/// file is refused without blocking or filling memory.
pub fn read_backup(path: &Path) -> Result<Backup, BackupError> {
    let text = topo::fs::read_bounded_string(path, BACKUP_CAP)
        .map_err(|source| BackupError::Read { path: path.to_path_buf(), source })?;
    let invalid = |detail: String| BackupError::Invalid { path: path.to_path_buf(), detail };
    let b: Backup = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
    b.check().map_err(invalid)?;
    Ok(b)
}

/// Saves `backup` as a new file at `path` (`O_EXCL|O_NOFOLLOW`, mode
/// 0644): an existing file or a symbolic link there is never overwritten.
pub fn save_backup(path: &Path, backup: &Backup) -> Result<(), BackupError> {
    let save = |source| BackupError::Save { path: path.to_path_buf(), source };
    let text = serde_json::to_string_pretty(backup).map_err(|e| save(e.into()))? + "\n";
    let mut f = topo::outfile::create_new(path, 0o644).map_err(save)?;
    f.write_all(text.as_bytes()).and_then(|()| f.sync_all()).map_err(save)
}

#[cfg(test)]
mod tests {
    use super::super::{restore, KernelWeights, WEIGHTS_DIR};
    use super::*;
    use std::collections::BTreeMap;
    use topo::SysRoot;

    fn backup(auto_file: Option<&str>) -> Backup {
        Backup {
            format: BACKUP_FORMAT.into(),
            saved: "t".into(),
            previous: KernelWeights {
                weights: BTreeMap::from([(0, 1)]),
                auto: auto_file.map(|_| true),
                auto_file: auto_file.map(String::from),
            },
            applied: BTreeMap::from([(0, 3)]),
        }
    }

    /// A restore writes nothing but the weight files: a backup naming
    /// `"auto_file": "../../../../home/victim"` must not truncate the victim.
    #[test]
    fn a_restore_naming_a_file_outside_the_weights_is_refused_before_any_write() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(WEIGHTS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("node0"), "7\n").unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let root = SysRoot::new(d.path()).unwrap();
        for evil in ["../../../../../victim", "node0/../../../../../victim", "/etc/x", "node0"] {
            let b = backup(Some(evil));
            assert!(b.check().unwrap_err().contains("auto_file"), "{evil}");
            let failed = restore(&root, &b);
            assert_eq!(failed.len(), 1, "{evil}: {failed:?}");
            assert!(failed[0].error.contains("auto_file"), "{failed:?}");
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
            assert_eq!(std::fs::read_to_string(dir.join("node0")).unwrap(), "7\n", "no write");
            let f = d.path().join("evil.json");
            std::fs::write(&f, serde_json::to_string(&b).unwrap()).unwrap();
            let e = read_backup(&f).unwrap_err().to_string();
            assert!(e.contains("evil.json") && e.contains("auto_file"), "{e}");
        }
        for good in ["auto", "__auto_type"] {
            assert!(backup(Some(good)).check().is_ok());
        }
    }

    /// `--restore /dev/zero` would grow without end and a FIFO would hang:
    /// both are refused, as is a file past the cap.
    #[test]
    fn a_device_a_fifo_or_a_huge_file_is_refused_as_a_backup() {
        let d = tempfile::tempdir().unwrap();
        let e = read_backup(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(e.contains("/dev/zero") && e.contains("character device"), "{e}");
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_backup(&fifo).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let big = d.path().join("big.json");
        std::fs::write(&big, vec![b' '; BACKUP_CAP as usize + 1]).unwrap();
        let e = read_backup(&big).unwrap_err().to_string();
        assert!(e.contains("longer than"), "{e}");
    }

    #[test]
    fn a_backup_is_saved_only_as_a_new_file() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let link = d.path().join("b.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(save_backup(&link, &backup(None)).is_err());
        assert!(save_backup(&victim, &backup(None)).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        let new = d.path().join("new.json");
        save_backup(&new, &backup(Some("auto"))).unwrap();
        assert_eq!(read_backup(&new).unwrap(), backup(Some("auto")));
    }
}
