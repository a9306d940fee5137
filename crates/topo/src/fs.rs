//! Reading sysfs and procfs under a root. The only place that knows that a
//! live machine's files are under `/`: every reader takes a [`SysRoot`].
//!
//! A file that this kernel or architecture does not have is `Ok(None)`, not
//! an error; only an unreadable or malformed file is an error, and the error
//! names the file.
//!
//! Every read is bounded ([`read_bounded`]): a sysfs or procfs file is
//! small, so a tree where one is a character device (`/dev/zero`), a FIFO
//! or something huge is refused instead of filling memory.

use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The most bytes read from one sysfs/procfs file (the largest real ones,
/// `/proc/cpuinfo` of a machine with thousands of CPUs, stay far below).
pub const SYS_FILE_CAP: u64 = 16 << 20;

/// Opens the regular file at `path` for reading, without blocking on a
/// FIFO; anything but a regular file (a device, a FIFO, a socket, a
/// directory) is an `InvalidData` error saying what it is. Symbolic links
/// are followed.
pub fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    if let Some(what) = not_regular(file.metadata()?.file_type()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("refusing to read it: {what}, where a regular file is expected"),
        ));
    }
    Ok(file)
}

/// Reads at most `cap` bytes of the regular file at `path`. Refuses what is
/// not a regular file (a character device such as `/dev/zero`, a FIFO, a
/// socket, a directory) and a file longer than `cap`, with an
/// `InvalidData` error saying which; symbolic links are followed (sysfs is
/// full of them) but their target must be a regular file. Opening never
/// blocks on a FIFO.
pub fn read_bounded(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut buf = Vec::new();
    file.take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("refusing to read it: longer than {cap} bytes"),
        ));
    }
    Ok(buf)
}

/// What a file that is not a regular file is, in words for an error
/// (`a FIFO`, `a block device`...); `None` for a regular file.
pub fn not_regular(kind: std::fs::FileType) -> Option<&'static str> {
    if kind.is_file() {
        None
    } else if kind.is_char_device() {
        Some("a character device")
    } else if kind.is_block_device() {
        Some("a block device")
    } else if kind.is_fifo() {
        Some("a FIFO")
    } else if kind.is_socket() {
        Some("a socket")
    } else if kind.is_dir() {
        Some("a directory")
    } else if kind.is_symlink() {
        Some("a symbolic link")
    } else {
        Some("not a regular file")
    }
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_string(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, cap)?).map_err(|_| {
        io::Error::new(io::ErrorKind::InvalidData, "stream did not contain valid UTF-8")
    })
}

/// What went wrong reading the machine, always naming the file.
#[derive(Debug, thiserror::Error)]
pub enum TopoError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}: {msg}", path.display())]
    Malformed { path: PathBuf, msg: String },
    #[error("{}: no such directory (is this a sysfs/procfs root?)", .0.display())]
    NoRoot(PathBuf),
}

impl TopoError {
    pub fn malformed(path: impl Into<PathBuf>, msg: impl Into<String>) -> Self {
        TopoError::Malformed { path: path.into(), msg: msg.into() }
    }

    /// The file or directory the error is about.
    pub fn path(&self) -> &Path {
        match self {
            TopoError::Io { path, .. } | TopoError::Malformed { path, .. } => path,
            TopoError::NoRoot(p) => p,
        }
    }

    /// What went wrong, without the path.
    pub fn problem(&self) -> String {
        match self {
            TopoError::Io { source, .. } => source.to_string(),
            TopoError::Malformed { msg, .. } => msg.clone(),
            TopoError::NoRoot(_) => "no such directory".into(),
        }
    }
}

/// When `path` (not found) is a symbolic link to nothing: the error
/// saying so. Something is there, broken, which is not absence.
fn dangling(path: &Path) -> Option<io::Error> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type()
        .is_symlink()
        .then(|| io::Error::new(io::ErrorKind::NotFound, "a symbolic link to nothing (dangling)"))
}

/// A root directory holding `sys/` and `proc/`: `/` on a live machine, or
/// an unpacked capture.
#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
    /// Files read so far (relative paths), when asked for with
    /// [`SysRoot::recording`]: the mutation suite learns from it which
    /// files discovery and the audit read.
    log: Option<std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>>,
}

impl PartialEq for SysRoot {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Eq for SysRoot {}

impl SysRoot {
    /// A root at `dir`; fails when `dir` is not a directory.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, TopoError> {
        let root = dir.into();
        if !root.is_dir() {
            return Err(TopoError::NoRoot(root));
        }
        Ok(SysRoot { root, log: None })
    }

    /// A root at `dir` that remembers every file read through it (see
    /// [`SysRoot::files_read`]).
    pub fn recording(dir: impl Into<PathBuf>) -> Result<Self, TopoError> {
        let mut r = SysRoot::new(dir)?;
        r.log = Some(Default::default());
        Ok(r)
    }

    /// The files read so far, relative to the root, sorted (empty unless
    /// made with [`SysRoot::recording`]).
    pub fn files_read(&self) -> Vec<String> {
        self.log.as_ref().map_or_else(Vec::new, |l| {
            l.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
        })
    }

    fn note(&self, rel: &str) {
        if let Some(l) = &self.log {
            l.lock().unwrap_or_else(|e| e.into_inner()).insert(rel.trim_start_matches('/').into());
        }
    }

    /// The running machine.
    pub fn live() -> Self {
        SysRoot { root: PathBuf::from("/"), log: None }
    }

    /// True when this is the running machine's `/`.
    pub fn is_live(&self) -> bool {
        self.root == Path::new("/")
    }

    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The path of `rel` (e.g. `sys/devices/system/node`) under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// Reads a file; `Ok(None)` when it does not exist. A symbolic link
    /// to nothing is an error, not absence: something is there, broken.
    pub fn read_optional(&self, rel: &str) -> Result<Option<String>, TopoError> {
        self.optional(rel, |p| read_bounded_string(p, SYS_FILE_CAP))
    }

    /// [`Self::read_optional`] for files that are not text (an ACPI
    /// table; `/proc/PID/environ`: NUL-separated, in any encoding).
    pub fn read_optional_bytes(&self, rel: &str) -> Result<Option<Vec<u8>>, TopoError> {
        self.optional(rel, |p| read_bounded(p, SYS_FILE_CAP))
    }

    fn optional<T>(
        &self,
        rel: &str,
        read: impl Fn(&Path) -> io::Result<T>,
    ) -> Result<Option<T>, TopoError> {
        self.note(rel);
        let path = self.path(rel);
        match read(&path) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => match dangling(&path) {
                Some(source) => Err(TopoError::Io { path, source }),
                None => Ok(None),
            },
            // sysfs answers some reads with EINVAL/ENODATA/EOPNOTSUPP when a
            // feature is absent: that is absence too.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINVAL | libc::ENODATA | libc::EOPNOTSUPP | libc::ENXIO)
                ) =>
            {
                Ok(None)
            }
            Err(source) => Err(TopoError::Io { path, source }),
        }
    }

    /// Reads a file that must exist.
    pub fn read(&self, rel: &str) -> Result<String, TopoError> {
        self.note(rel);
        let path = self.path(rel);
        read_bounded_string(&path, SYS_FILE_CAP).map_err(|source| TopoError::Io { path, source })
    }

    /// Reads and parses a file holding one number; `Ok(None)` when absent.
    pub fn read_u64(&self, rel: &str) -> Result<Option<u64>, TopoError> {
        match self.read_optional(rel)? {
            None => Ok(None),
            Some(s) => s.trim().parse().map(Some).map_err(|_| {
                TopoError::malformed(
                    self.path(rel),
                    format!("expected a number, found '{}'", s.trim()),
                )
            }),
        }
    }

    /// Names in a directory, sorted; empty when the directory is absent
    /// (a symbolic link to nothing is an error, as in [`Self::read_optional`]).
    pub fn list_dir(&self, rel: &str) -> Result<Vec<String>, TopoError> {
        let path = self.path(rel);
        let rd = match std::fs::read_dir(&path) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return match dangling(&path) {
                    Some(source) => Err(TopoError::Io { path, source }),
                    None => Ok(Vec::new()),
                }
            }
            Err(source) => return Err(TopoError::Io { path, source }),
        };
        let mut names = Vec::new();
        for entry in rd {
            let entry = entry.map_err(|source| TopoError::Io { path: path.clone(), source })?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    /// Ids `N` of directory entries named `{prefix}N` (e.g. `node` -> node ids),
    /// ascending.
    pub fn list_ids(&self, rel: &str, prefix: &str) -> Result<Vec<u32>, TopoError> {
        let mut ids: Vec<u32> = self
            .list_dir(rel)?
            .iter()
            .filter_map(|n| n.strip_prefix(prefix)?.parse().ok())
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `/dev/zero` (or any endless or huge file) in a tree is refused,
    /// naming the path, instead of being read into memory.
    #[test]
    fn devices_fifos_directories_and_long_files_are_refused_naming_the_path() {
        let dir = std::env::temp_dir().join(format!("np-topo-bounded-{}", std::process::id()));
        let nd = dir.join("sys/devices/system/node/node0");
        std::fs::create_dir_all(&nd).unwrap();
        std::os::unix::fs::symlink("/dev/zero", nd.join("distance")).unwrap();
        std::fs::create_dir_all(nd.join("cpulist")).unwrap();
        let fifo =
            std::ffi::CString::new(nd.join("meminfo").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::write(nd.join("numastat"), "x".repeat(100)).unwrap();
        let root = SysRoot::new(&dir).unwrap();
        for (rel, what) in
            [("distance", "a character device"), ("cpulist", "a directory"), ("meminfo", "a FIFO")]
        {
            let rel = format!("sys/devices/system/node/node0/{rel}");
            let e = root.read_optional(&rel).unwrap_err().to_string();
            assert!(e.contains(&rel) && e.contains(what), "{e}");
            assert!(root.read(&rel).is_err());
        }
        let long = nd.join("numastat");
        assert_eq!(read_bounded(&long, 100).unwrap().len(), 100);
        let e = read_bounded(&long, 99).unwrap_err().to_string();
        assert!(e.contains("longer than 99 bytes"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_files_are_none_and_errors_name_the_path() {
        let dir = std::env::temp_dir().join(format!("np-fs-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sys/devices/system/node/node3")).unwrap();
        std::fs::create_dir_all(dir.join("sys/devices/system/node/node10")).unwrap();
        std::fs::write(dir.join("sys/x"), "42\n").unwrap();
        std::fs::write(dir.join("sys/bad"), "forty\n").unwrap();
        let root = SysRoot::new(&dir).unwrap();
        assert_eq!(root.read_optional("sys/nope").unwrap(), None);
        assert_eq!(root.read_u64("/sys/x").unwrap(), Some(42));
        let err = root.read_u64("sys/bad").unwrap_err().to_string();
        assert!(err.contains("sys/bad") && err.contains("forty"), "{err}");
        assert!(root.read("sys/nope").unwrap_err().to_string().contains("sys/nope"));
        assert_eq!(root.list_ids("sys/devices/system/node", "node").unwrap(), vec![3, 10]);
        assert!(root.list_dir("nope").unwrap().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(matches!(SysRoot::new(&dir), Err(TopoError::NoRoot(_))));
    }
}
