//! Writing files without rewriting what numaprobe did not create: a new
//! file is made with `O_CREAT|O_EXCL|O_NOFOLLOW` (never an existing file,
//! never through a symbolic link), a file that is replaced is written
//! under a random temporary name first and renamed over the old one (a
//! symbolic link planted at either name is replaced, not followed), and an
//! output the user names (`-o FILE`) is never written through a symbolic
//! link to a file.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::fs::not_regular;

/// Creates `path`, which must not exist (`O_EXCL`; a symbolic link there,
/// dangling or not, counts as existing and is not followed), for writing
/// with permission bits `mode` (less the umask).
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// 16 random hexadecimal digits from the kernel (`getrandom`), for names
/// nobody can predict.
fn random_hex() -> io::Result<String> {
    let mut b = [0u8; 8];
    // SAFETY: `b` is a valid buffer of its length for the call.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
    if n != b.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// A new, nameless temporary file in `dir` for reading and writing
/// (`O_TMPFILE`; where the filesystem lacks it, a new file under a random
/// name, unlinked at once). It vanishes when closed.
pub fn anonymous_temp(dir: &Path) -> io::Result<File> {
    let tmpfile = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir);
    match tmpfile {
        Ok(f) => Ok(f),
        Err(e)
            if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)) =>
        {
            let path = dir.join(format!(".numaprobe.{}.tmp", random_hex()?));
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                .open(&path)?;
            std::fs::remove_file(&path)?;
            Ok(f)
        }
        Err(e) => Err(e),
    }
}

/// Writes `bytes` to `dir/name` atomically: a new file under a random
/// name (`.name.RANDOM.tmp`: it never ends in the real name's suffix, so a
/// collector reading `*.prom` never sees it half written), synced, then
/// renamed over `dir/name`. Whatever was at `dir/name` (a file, a symbolic
/// link) is replaced, never written through. On failure the temporary
/// file is removed and the old `dir/name` is left as it was.
pub fn replace_atomically(dir: &Path, name: &str, bytes: &[u8], mode: u32) -> io::Result<PathBuf> {
    let target = dir.join(name);
    let mut tries = 0;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.{}.tmp", random_hex()?));
        match create_new(&tmp, mode) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &target));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(target)
}

/// Opens an output file the user named (`-o FILE`) for writing:
/// - a regular file (or nothing: it is created, mode 0644 less the umask)
///   is truncated and written, but never through a symbolic link: a link
///   to a file is refused, so a link planted where a report goes cannot
///   redirect it onto another file;
/// - a stream (a FIFO, a character device such as `/dev/null`, or a
///   socket), also behind a link (`/dev/stdout`, `/dev/fd/63` of a shell's
///   `>(...)`), is written as it is;
/// - a directory or a block device is refused.
///
/// Refusals are `InvalidInput` errors saying why.
pub fn open_output(path: &Path) -> io::Result<File> {
    let refuse = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    let direct = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path);
    let file = match direct {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            // A symbolic link: followed only to a stream.
            let meta = std::fs::metadata(path)?;
            let kind = meta.file_type();
            if kind.is_fifo() || kind.is_char_device() || kind.is_socket() {
                return std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_CLOEXEC | libc::O_NOCTTY)
                    .open(path);
            }
            return Err(refuse(format!(
                "a symbolic link to {}; refusing to write through it (name the file itself, \
                 or remove the link)",
                not_regular(kind).unwrap_or("a regular file")
            )));
        }
        Err(e) => return Err(e),
    };
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        file.set_len(0)?;
    } else if kind.is_block_device() || kind.is_dir() {
        return Err(refuse(format!(
            "{}; refusing to write a file there",
            not_regular(kind).unwrap_or("not a file")
        )));
    } else {
        // A stream opened without blocking: writes block again, as a
        // writer of a pipe expects.
        // SAFETY: fcntl on a descriptor we own; F_SETFL with plain flags.
        unsafe {
            use std::os::fd::AsRawFd;
            let fd = file.as_raw_fd();
            let fl = libc::fcntl(fd, libc::F_GETFL);
            libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_never_an_existing_one_or_a_link() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        assert_eq!(create_new(&victim, 0o644).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &link).unwrap();
        assert!(create_new(&link, 0o644).is_err());
        assert!(!d.path().join("nowhere").exists(), "nothing created behind a dangling link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    }

    #[test]
    fn replacing_never_writes_through_a_planted_symlink() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("numaprobe.prom")).unwrap();
        let t = replace_atomically(d.path(), "numaprobe.prom", b"metrics\n", 0o644).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(!std::fs::symlink_metadata(&t).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&t).unwrap(), "metrics\n");
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file left: {left:?}");
    }

    #[test]
    fn outputs_refuse_links_to_files_but_take_streams() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = d.path().join("out.html");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = open_output(&link).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        // A plain file is truncated and written.
        let mut f = open_output(&victim).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "new");
        // A link to a stream is written through.
        let null = d.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        open_output(&null).unwrap().write_all(b"x").unwrap();
        assert!(open_output(d.path()).is_err(), "a directory");
    }
}
