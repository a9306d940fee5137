//! Each `exec` run in a cgroup of its own, so the command's whole process
//! tree can be found and killed at once, whatever it did to leave its
//! process group or session (`setsid`, `env -i`, double forks):
//!
//! * cgroup v2: a child of numaprobe's own cgroup,
//!   `numaprobe-exec-PID-N`; the command joins it between `fork` and
//!   `exec` (it writes `0` to `cgroup.procs`, so nothing it starts is ever
//!   outside), and it is killed whole by writing `1` to `cgroup.kill`
//!   (Linux 5.14+; before that, every member is sent SIGKILL until none is
//!   left);
//! * cgroup v1 where it is writable: the same in the `freezer` hierarchy,
//!   killed by freezing it, sending SIGKILL to each member and thawing;
//! * neither: the run says why ([`Containment::None`]) and relies on its
//!   process group and the subreaper of [`crate::tree`].
//!
//! If numaprobe is killed (`kill -9`), the run's watchdog
//! ([`crate::tree::Watchdog`]), a process of its own session outside the
//! cgroup, kills the cgroup with the descriptors prepared here (only
//! async-signal-safe calls after `fork`) and removes it.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use topo::parse::unescape_mount;
use topo::SysRoot;

/// How a run's process tree is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// In a cgroup v2 of its own (`dir`).
    CgroupV2 { dir: PathBuf },
    /// In a cgroup v1 `freezer` cgroup of its own (`dir`).
    CgroupV1 { dir: PathBuf },
    /// No cgroup could be made: the process group and the subreaper only.
    None { why: String },
}

impl Containment {
    /// One line for the run's record.
    pub fn describe(&self) -> String {
        match self {
            Containment::CgroupV2 { dir } => format!("cgroup v2 {}", dir.display()),
            Containment::CgroupV1 { dir } => format!("cgroup v1 freezer {}", dir.display()),
            Containment::None { why } => format!(
                "process group only (a process that leaves it and outlives numaprobe is not \
                 found): no cgroup: {why}"
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// v2 with `cgroup.kill`.
    V2Kill,
    /// v2 without `cgroup.kill` (before Linux 5.14).
    V2Loop,
    /// v1 `freezer`.
    V1Freezer,
}

/// A cgroup made for one run; removed when dropped (after [`kill_all`]).
///
/// [`kill_all`]: RunCgroup::kill_all
#[derive(Debug)]
pub struct RunCgroup {
    dir: PathBuf,
    kind: Kind,
    /// `cgroup.procs`, for writing: the child joins with `0`.
    join: OwnedFd,
    /// `cgroup.procs`, for reading the members (the watchdog's copy).
    procs: OwnedFd,
    /// `cgroup.kill` (v2) or `freezer.state` (v1).
    killer: Option<OwnedFd>,
}

/// The mount points of the cgroup v2 tree and of the v1 `freezer`
/// hierarchy, each with the path of the hierarchy at that mount (the
/// 4th field of `/proc/self/mountinfo`; `/` unless a bind mount or a
/// cgroup namespace moved it).
#[derive(Debug, Default, PartialEq, Eq)]
struct Mounts {
    v2: Option<(PathBuf, String)>,
    freezer: Option<(PathBuf, String)>,
}

fn parse_mountinfo(text: &str) -> Mounts {
    let mut m = Mounts::default();
    for line in text.lines() {
        let Some((pre, post)) = line.split_once(" - ") else { continue };
        let pre: Vec<&str> = pre.split(' ').collect();
        let post: Vec<&str> = post.split(' ').collect();
        if pre.len() < 5 || post.len() < 3 {
            continue;
        }
        let (root, point) = (unescape_mount(pre[3]), PathBuf::from(unescape_mount(pre[4])));
        match post[0] {
            "cgroup2" if m.v2.is_none() => m.v2 = Some((point, root)),
            "cgroup" if m.freezer.is_none() && post[2].split(',').any(|o| o == "freezer") => {
                m.freezer = Some((point, root))
            }
            _ => {}
        }
    }
    m
}

/// This process's cgroup paths from `/proc/self/cgroup`: (v2, freezer).
fn parse_proc_cgroup(text: &str) -> (Option<String>, Option<String>) {
    let (mut v2, mut freezer) = (None, None);
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (Some(id), Some(ctl), Some(path)) = (f.next(), f.next(), f.next()) else { continue };
        if id == "0" && ctl.is_empty() {
            v2 = Some(path.to_string());
        } else if ctl.split(',').any(|c| c == "freezer") {
            freezer = Some(path.to_string());
        }
    }
    (v2, freezer)
}

/// The folder of cgroup `path` in a hierarchy mounted at `point` whose
/// mount shows the hierarchy's `root`.
fn cgroup_dir(point: &Path, root: &str, path: &str) -> Option<PathBuf> {
    let rel = if root == "/" {
        path
    } else {
        let rest = path.strip_prefix(root)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    Some(point.join(rel.trim_start_matches('/')))
}

/// The cgroup mounts and this process's v2 and freezer cgroups.
fn locate() -> (Mounts, Option<String>, Option<String>) {
    let root = SysRoot::live();
    let read = |rel: &str| root.read_optional(rel).ok().flatten().unwrap_or_default();
    let (v2, freezer) = parse_proc_cgroup(&read("proc/self/cgroup"));
    (parse_mountinfo(&read("proc/self/mountinfo")), v2, freezer)
}

fn open_fd(path: &Path, write: bool) -> std::io::Result<OwnedFd> {
    let f = std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)?;
    Ok(f.into())
}

impl RunCgroup {
    /// Makes a cgroup for one run under this process's own: v2 first, else
    /// v1 `freezer`. The error says why neither could be made.
    pub fn create() -> Result<RunCgroup, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let name = format!("numaprobe-exec-{}-{n}", std::process::id());
        let (mounts, v2_path, freezer_path) = locate();
        let v2 = match (&mounts.v2, &v2_path) {
            (Some((point, r)), Some(p)) => match cgroup_dir(point, r, p) {
                Some(parent) => RunCgroup::make(&parent, &name, true),
                None => Err(format!("our cgroup {p} is outside the mounted tree")),
            },
            (None, _) => Err("no cgroup2 file system mounted".into()),
            (Some(_), None) => Err("no cgroup v2 line in /proc/self/cgroup".into()),
        };
        let v2_err = match v2 {
            Ok(c) => return Ok(c),
            Err(e) => e,
        };
        RunCgroup::v1(&mounts, freezer_path.as_deref(), &name)
            .map_err(|v1_err| format!("cgroup v2: {v2_err}; cgroup v1: {v1_err}"))
    }

    /// A v1 `freezer` cgroup even where v2 is there (the v1 way's tests);
    /// the error says why not.
    pub fn create_v1() -> Result<RunCgroup, String> {
        let (mounts, _, freezer_path) = locate();
        let name = format!("numaprobe-v1-{}", std::process::id());
        RunCgroup::v1(&mounts, freezer_path.as_deref(), &name)
    }

    fn v1(mounts: &Mounts, path: Option<&str>, name: &str) -> Result<RunCgroup, String> {
        match (&mounts.freezer, path) {
            (Some((point, r)), Some(p)) => match cgroup_dir(point, r, p) {
                Some(parent) => RunCgroup::make(&parent, name, false),
                None => Err(format!("our freezer cgroup {p} is outside its mount")),
            },
            _ => Err("no cgroup v1 freezer hierarchy mounted".into()),
        }
    }

    fn make(parent: &Path, name: &str, v2: bool) -> Result<RunCgroup, String> {
        let dir = parent.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let opened = (|| -> std::io::Result<RunCgroup> {
            let join = open_fd(&dir.join("cgroup.procs"), true)?;
            let procs = open_fd(&dir.join("cgroup.procs"), false)?;
            let (kind, killer) = if v2 {
                match open_fd(&dir.join("cgroup.kill"), true) {
                    Ok(k) => (Kind::V2Kill, Some(k)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Kind::V2Loop, None),
                    Err(e) => return Err(e),
                }
            } else {
                (Kind::V1Freezer, Some(open_fd(&dir.join("freezer.state"), true)?))
            };
            Ok(RunCgroup { dir: dir.clone(), kind, join, procs, killer })
        })();
        opened.map_err(|e| {
            let _ = std::fs::remove_dir(&dir);
            format!("cannot use {}: {e}", dir.display())
        })
    }

    /// What the run's record says.
    pub fn containment(&self) -> Containment {
        match self.kind {
            Kind::V2Kill | Kind::V2Loop => Containment::CgroupV2 { dir: self.dir.clone() },
            Kind::V1Freezer => Containment::CgroupV1 { dir: self.dir.clone() },
        }
    }

    /// The descriptor the child writes `0` to (in `pre_exec`) to join.
    pub fn join_fd(&self) -> RawFd {
        self.join.as_raw_fd()
    }

    /// What the watchdog needs to kill and remove this cgroup after
    /// numaprobe died (descriptors it inherits through `fork`).
    pub fn watchdog_plan(&self) -> Option<WatchdogPlan> {
        Some(WatchdogPlan {
            kill: (self.kind == Kind::V2Kill)
                .then(|| self.killer.as_ref().map(|k| k.as_raw_fd()))
                .flatten(),
            freeze: (self.kind == Kind::V1Freezer)
                .then(|| self.killer.as_ref().map(|k| k.as_raw_fd()))
                .flatten(),
            procs: self.procs.as_raw_fd(),
            dir: CString::new(self.dir.as_os_str().as_bytes()).ok()?,
        })
    }

    /// Whether process `pid` (alive, or a zombie not yet reaped) is in
    /// this cgroup, from `/proc/PID/cgroup`.
    pub fn holds(&self, pid: i32) -> bool {
        let Some(name) = self.dir.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            return false;
        };
        let text = SysRoot::live()
            .read_optional(&format!("proc/{pid}/cgroup"))
            .ok()
            .flatten()
            .unwrap_or_default();
        let suffix = format!("/{name}");
        text.lines().any(|l| l.ends_with(&suffix))
    }

    /// The processes in the cgroup now.
    pub fn members(&self) -> Vec<i32> {
        let rel = self.dir.join("cgroup.procs");
        let rel = rel.to_string_lossy();
        let text = SysRoot::live().read_optional(&rel).ok().flatten().unwrap_or_default();
        text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
    }

    /// Kills every process in the cgroup and waits (at most `grace`) until
    /// none is left; returns how many there were. Killed children of this
    /// process (orphans that came to the subreaper) are reaped.
    pub fn kill_all(&self, grace: Duration) -> u32 {
        let before = self.members();
        if before.is_empty() {
            return 0;
        }
        let until = Instant::now() + grace;
        loop {
            match self.kind {
                // SAFETY: write of one byte from a static buffer to our fd.
                Kind::V2Kill => unsafe {
                    if let Some(k) = &self.killer {
                        libc::write(k.as_raw_fd(), b"1".as_ptr().cast(), 1);
                    }
                },
                Kind::V2Loop => kill_each(&self.members()),
                Kind::V1Freezer => {
                    let state = self.killer.as_ref().map(|k| k.as_raw_fd());
                    write_fd(state, b"FROZEN");
                    kill_each(&self.members());
                    write_fd(state, b"THAWED");
                }
            }
            std::thread::sleep(Duration::from_millis(5));
            if self.members().is_empty() || Instant::now() >= until {
                break;
            }
        }
        for &pid in &before {
            let mut status = 0;
            // SAFETY: waitpid on a pid with a valid status out-pointer;
            // ECHILD for processes that are not our children is ignored.
            unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        }
        before.len() as u32
    }
}

fn write_fd(fd: Option<RawFd>, text: &[u8]) {
    if let Some(fd) = fd {
        // SAFETY: write from a valid buffer to a descriptor we own.
        unsafe { libc::write(fd, text.as_ptr().cast(), text.len()) };
    }
}

fn kill_each(pids: &[i32]) {
    for &p in pids.iter().filter(|&&p| p > 1) {
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        // Empty by now (the run kills it whole): rmdir fails otherwise,
        // and an empty cgroup left behind holds nothing.
        let until = Instant::now() + Duration::from_secs(1);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Descriptors and a path the watchdog uses after `fork`.
#[derive(Debug)]
pub struct WatchdogPlan {
    /// `cgroup.kill` (v2).
    kill: Option<RawFd>,
    /// `freezer.state` (v1).
    freeze: Option<RawFd>,
    /// `cgroup.procs`, readable.
    procs: RawFd,
    dir: CString,
}

impl WatchdogPlan {
    /// Kills the cgroup's processes and removes it. Only async-signal-safe
    /// calls (write, pread, kill, nanosleep, rmdir) on values prepared
    /// before `fork`, no allocation.
    ///
    /// # Safety
    /// To be called in a forked child that only makes such calls.
    pub unsafe fn kill_and_remove(&self) {
        let sleep = libc::timespec { tv_sec: 0, tv_nsec: 10_000_000 };
        // Up to about 5 s: killing is quick, rmdir waits for the last exit.
        for _ in 0..500 {
            if let Some(k) = self.kill {
                libc::write(k, b"1".as_ptr().cast(), 1);
            } else {
                if let Some(f) = self.freeze {
                    libc::write(f, b"FROZEN".as_ptr().cast(), 6);
                }
                self.kill_listed();
                if let Some(f) = self.freeze {
                    libc::write(f, b"THAWED".as_ptr().cast(), 6);
                }
            }
            if libc::rmdir(self.dir.as_ptr()) == 0 {
                return;
            }
            libc::nanosleep(&sleep, std::ptr::null_mut());
        }
    }

    /// SIGKILL to every pid in `cgroup.procs`, parsed from a stack buffer.
    unsafe fn kill_listed(&self) {
        let mut buf = [0u8; 4096];
        let mut offset: libc::off_t = 0;
        let mut pid: i32 = 0;
        let mut digits = false;
        loop {
            let n = libc::pread(self.procs, buf.as_mut_ptr().cast(), buf.len(), offset);
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                if b.is_ascii_digit() {
                    pid = pid.saturating_mul(10).saturating_add(i32::from(b - b'0'));
                    digits = true;
                } else {
                    if digits && pid > 1 {
                        libc::kill(pid, libc::SIGKILL);
                    }
                    pid = 0;
                    digits = false;
                }
            }
            offset += n as libc::off_t;
        }
        if digits && pid > 1 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `sh -c script` in cgroup `c` the way a run does (it joins
    /// before `exec`) and waits for it; returns the pids of the `sleep
    /// marker` processes it left behind.
    fn leave_sleepers(c: &RunCgroup, marker: &str) -> Vec<i32> {
        use std::os::unix::process::CommandExt;
        let fd = c.join_fd();
        let script =
            format!("setsid sleep {marker} & env -i setsid sh -c 'sleep {marker}; true' &");
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", &script]);
        // SAFETY: only write(2) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::write(fd, b"0".as_ptr().cast(), 1);
                Ok(())
            });
        }
        assert!(cmd.status().unwrap().success());
        let want = format!("sleep\0{marker}\0");
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            let found: Vec<i32> = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .filter(|p: &i32| {
                    std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                })
                .collect();
            if found.len() == 2 || Instant::now() > until {
                return found;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(s) => matches!(
                s.rsplit(')').next().and_then(|r| r.split_whitespace().next()),
                Some("Z" | "X")
            ),
            Err(_) => true,
        }
    }

    fn kills_what_left_the_session(c: RunCgroup, marker: &str) {
        let dir = c.dir.clone();
        let pids = leave_sleepers(&c, marker);
        assert_eq!(pids.len(), 2, "both sleeps started: {pids:?}");
        assert!(pids.iter().all(|&p| c.holds(p)), "{pids:?} in {}", dir.display());
        // The two sleeps and the shell that waits for one of them.
        let members = c.members();
        assert!(pids.iter().all(|p| members.contains(p)), "{members:?}");
        assert_eq!(c.kill_all(Duration::from_secs(5)) as usize, members.len());
        let until = Instant::now() + Duration::from_secs(5);
        while !pids.iter().all(|&p| gone(p)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let left: Vec<i32> = pids.iter().copied().filter(|&p| !gone(p)).collect();
        for &p in &left {
            // SAFETY: our own test's sleeps.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(left.is_empty(), "{left:?} survived");
        drop(c);
        assert!(!dir.exists(), "{} removed", dir.display());
    }

    /// A `setsid` process and an `env -i setsid` one (no tag, own
    /// session) die with the run's cgroup v2.
    #[test]
    fn a_setsid_grandchild_is_killed_with_the_runs_cgroup() {
        let c = RunCgroup::create().expect("a cgroup for the run (root or a delegated cgroup)");
        assert!(matches!(c.containment(), Containment::CgroupV2 { .. }), "{:?}", c.containment());
        kills_what_left_the_session(c, &format!("400.{}1", std::process::id()));
    }

    /// The v1 way (freeze, kill each, thaw), on this machine's v1 freezer
    /// hierarchy.
    #[test]
    fn a_setsid_grandchild_is_killed_with_a_v1_freezer_cgroup() {
        let c = RunCgroup::create_v1().unwrap_or_else(|why| {
            panic!("this test needs a writable cgroup v1 freezer hierarchy: {why}")
        });
        assert!(matches!(c.containment(), Containment::CgroupV1 { .. }));
        kills_what_left_the_session(c, &format!("400.{}2", std::process::id()));
    }

    #[test]
    fn mountinfo_and_proc_cgroup_are_read_as_the_kernel_writes_them() {
        let text = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
                    37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n\
                    41 31 0:38 /kubepods/pod1 /sys/fs/cgroup/my\\040tree rw - cgroup2 cgroup2 rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.v2, Some((PathBuf::from("/sys/fs/cgroup/my tree"), "/kubepods/pod1".into())));
        assert_eq!(m.freezer, Some((PathBuf::from("/sys/fs/cgroup/freezer"), "/".into())));
        let (v2, fr) = parse_proc_cgroup("6:freezer:/x/y\n4:memory:/m\n0::/kubepods/pod1/c1\n");
        assert_eq!((v2.as_deref(), fr.as_deref()), (Some("/kubepods/pod1/c1"), Some("/x/y")));
        let (point, root) = m.v2.unwrap();
        assert_eq!(
            cgroup_dir(&point, &root, "/kubepods/pod1/c1"),
            Some(PathBuf::from("/sys/fs/cgroup/my tree/c1"))
        );
        assert_eq!(cgroup_dir(&point, &root, "/kubepods/pod10"), None);
        assert_eq!(cgroup_dir(Path::new("/cg"), "/", "/"), Some(PathBuf::from("/cg")));
    }
}
