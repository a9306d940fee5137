//! On the real binary: files numaprobe did not create are never
//! rewritten (the lock, `-o`), the database is a regular file or nothing
//! (a loop block device, a FIFO, a character device), a corrupt page is
//! one line, readers work for an unprivileged user on a read-only folder,
//! and Ctrl-C while waiting for the lock exits 130.
//!
//! The block device is a loop device made here (`losetup`, root) on a
//! file of the test's own and detached at the end; the unprivileged user
//! is `nobody` (uid 65534, `setpriv` from util-linux, root needed).
//! Without them these tests fail saying so.

#[path = "support/lock.rs"]
mod lock_support;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../report/tests/fixtures/synthetic-export.json")
}

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("numaprobe")
}

/// numaprobe with database `db` and a private measuring lock.
fn np(db: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB")
        .env("NUMAPROBE_LOCK", lock_support::private_lock("hostile"))
        .arg("--db")
        .arg(db);
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `c`, killed after `secs` (a command that blocks on a FIFO would
/// hang): the output, or a panic naming what hung.
fn run_bounded(mut c: Command, secs: u64, what: &str) -> Output {
    let mut child = c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let until = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `args` on database `db` exits 1 with one line naming `db` and `why`.
fn refused_in_one_line(db: &Path, args: &[&str], why: &str) {
    let out = run_bounded(
        {
            let mut c = np(db);
            c.args(args);
            c
        },
        30,
        &format!("{args:?} on {}", db.display()),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}{}", text(&out.stdout));
    // The machine's own warnings (memory the nodes do not show yet, a
    // cgroup limit) can join any command's stderr: the refusal is the one
    // line that is not such a warning.
    let own: Vec<&str> = err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).collect();
    assert_eq!(own.len(), 1, "{args:?}: one line: {err}");
    assert!(err.contains(&*db.to_string_lossy()) && err.contains(why), "{args:?}: {err}");
}

/// Every kind of command that opens the database: readers, an importer
/// and a measuring writer.
const DB_COMMANDS: [&[&str]; 8] = [
    &["list"],
    &["show", "1"],
    &["report"],
    &["export", "1"],
    &["compare", "1", "2"],
    &["fleet"],
    &["import", "IMPORT"],
    &["run", "--quick", "--only", "bw-local"],
];

fn each_command_refuses(db: &Path, why: &str) {
    let f = fixture();
    for args in DB_COMMANDS {
        let args: Vec<&str> =
            args.iter().map(|a| if *a == "IMPORT" { f.to_str().unwrap() } else { a }).collect();
        refused_in_one_line(db, &args, why);
    }
    // `exec` measures on without saving, and says why.
    let out = run_bounded(
        {
            let mut c = np(db);
            c.args(["exec", "-r", "1", "-p", "default", "--", "true"]);
            c
        },
        30,
        "exec",
    );
    let err = text(&out.stderr);
    assert!(err.contains("results will not be saved") && err.contains(why), "{err}");
}

/// `cp /etc/passwd p; numaprobe --lock p bw ...` made `p` a PID; also
/// through `NUMAPROBE_LOCK`, and for files of any mode.
#[test]
fn a_hostile_lock_path_numaprobe_did_not_create_is_never_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let content = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/false\n";
    for (i, mode) in [0o644, 0o600, 0o444].into_iter().enumerate() {
        let p = dir.path().join(format!("p{i}"));
        std::fs::write(&p, content).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        let by_flag = np(&db).arg("--lock").arg(&p).args(["place", "--size", "1M"]).output();
        let by_env = np(&db).env("NUMAPROBE_LOCK", &p).args(["place", "--size", "1M"]).output();
        for out in [by_flag.unwrap(), by_env.unwrap()] {
            assert!(out.status.success(), "{}", text(&out.stderr));
            assert_eq!(std::fs::read_to_string(&p).unwrap(), content, "mode {mode:o}");
            let m = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, mode, "mode unchanged");
        }
    }
}

/// A loop device on a file of this test's own, detached when dropped.
struct Loop {
    dev: PathBuf,
    _backing: tempfile::NamedTempFile,
}

impl Loop {
    fn new(pattern: u8) -> Loop {
        let backing = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(backing.path(), vec![pattern; 1 << 20]).unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(backing.path())
            .output()
            .expect("this test needs losetup (util-linux) to make a loop block device");
        assert!(
            out.status.success(),
            "cannot make a loop device (root and /dev/loop-control needed): {}",
            text(&out.stderr)
        );
        Loop { dev: PathBuf::from(text(&out.stdout).trim()), _backing: backing }
    }

    /// The device's first 64 KiB, read through the device.
    fn head(&self) -> Vec<u8> {
        let mut b = vec![0u8; 64 << 10];
        std::fs::File::open(&self.dev).unwrap().read_exact(&mut b).unwrap();
        b
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// `--db /dev/loop0 import good.json` overwrote the first 40 KiB of the
/// device and said "left untouched"; `list` said "No runs".
#[test]
fn a_block_device_as_the_database_is_refused_by_every_command_and_left_untouched() {
    let dev = Loop::new(0xa5);
    let before = dev.head();
    assert!(before.iter().all(|&b| b == 0xa5));
    each_command_refuses(&dev.dev, "a block device");
    assert!(dev.head() == before, "the device was written");
}

/// A FIFO as `--db` would hang the readers and `/dev/null` would pass
/// for an empty database: both are refused at once.
#[test]
fn a_fifo_or_a_character_device_as_the_database_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.db");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    each_command_refuses(&fifo, "a FIFO");
    each_command_refuses(Path::new("/dev/null"), "a character device");
    // SQLite's files beside the database are checked too.
    let db = dir.path().join("r.db");
    let c = std::ffi::CString::new(format!("{}-wal", db.display())).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    refused_in_one_line(&db, &["import", fixture().to_str().unwrap()], "r.db-wal: a FIFO");
}

/// A folder holding `r.db` with the fixture's runs 1, 2, 3.
fn imported() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let out = np(&db).arg("import").arg(fixture()).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    (dir, db)
}

/// A damaged page is one line naming the file, not SQLite's integrity
/// report (one problem per line).
#[test]
fn a_corrupt_page_is_one_line_naming_the_file() {
    let (_dir, db) = imported();
    let mut bytes = std::fs::read(&db).unwrap();
    // Page 3 (a table's root page) overwritten with garbage.
    for (i, b) in bytes[2 * 4096..3 * 4096].iter_mut().enumerate() {
        *b = (i * 131 % 251) as u8;
    }
    std::fs::write(&db, bytes).unwrap();
    for args in [&["list"][..], &["show", "1"], &["import", fixture().to_str().unwrap()]] {
        refused_in_one_line(&db, args, "the database is corrupt");
    }
}

/// `list`/`show`/`report`/`export`/`compare` as an unprivileged user on a
/// root-owned database in a folder it cannot write failed with
/// SQLITE_READONLY_DIRECTORY.
#[test]
fn readers_work_for_an_unprivileged_user_in_a_read_only_folder() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "this test runs a reader as nobody: root needed");
    let (dir, db) = imported();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let listing = || {
        let mut n: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let before = (listing(), std::fs::read(&db).unwrap());
    for args in [
        &["list", "--json"][..],
        &["show", "1"],
        &["report", "latest", "--format", "md"],
        &["export", "1", "2"],
        &["export", "1", "--format", "csv"],
        &["compare", "1", "2"],
    ] {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(bin())
            .arg("--db")
            .arg(&db)
            .args(args)
            .env_remove("NUMAPROBE_DB")
            .env("HOME", "/nonexistent")
            .output()
            .expect("this test needs setpriv (util-linux)");
        let err = text(&out.stderr);
        assert!(out.status.success(), "{args:?} as nobody: {err}");
        if args[0] == "list" {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v.as_array().unwrap().len(), 3);
        }
    }
    assert!((listing(), std::fs::read(&db).unwrap()) == before, "nothing created or changed");
}

/// `-o` onto a symbolic link to a file wrote through it; a link to a
/// stream (`/dev/null`) is still written.
#[test]
fn an_output_onto_a_symlink_to_a_file_is_refused_and_the_file_untouched() {
    let (dir, db) = imported();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    for (args, name) in
        [(&["export", "1"][..], "x.json"), (&["report", "1"], "x.html"), (&["fleet"], "x.md")]
    {
        let link = dir.path().join(name);
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let out = np(&db).args(args).arg("-o").arg(&link).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("symbolic link") && err.contains(name), "{err}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    }
    let null = dir.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    assert!(np(&db).args(["export", "1", "-o"]).arg(&null).output().unwrap().status.success());
}

/// Ctrl-C while `--wait`ing for the measuring lock exited 1.
#[test]
fn ctrl_c_while_waiting_for_the_lock_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let lock = lock_support::private_lock("ctrl-c-wait");
    let held = lock::MeasureLock::acquire_at(&lock).unwrap();
    let mut child = np(&dir.path().join("r.db"))
        .env("NUMAPROBE_LOCK", &lock)
        .args(["place", "--size", "1M", "--wait"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.contains("waiting for the measuring numaprobe"), "{first}");
    // SAFETY: kill has no memory effects; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    drop(held);
    assert_eq!(status.code(), Some(130), "{first}{rest}");
    assert!(rest.contains("interrupted by Ctrl-C while waiting for the measuring lock"), "{rest}");
}
