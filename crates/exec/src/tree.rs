//! Keeping the measured program's whole process tree inside numaprobe's
//! reach, so nothing it starts outlives the run:
//!
//! * numaprobe is a child subreaper (`PR_SET_CHILD_SUBREAPER`): processes
//!   the command orphans come to numaprobe rather than to init;
//! * every process of the command carries a tag in its environment
//!   ([`TAG_VAR`]), so numaprobe finds those that left the command's
//!   process group (`setsid`) among the processes re-parented to it, and
//!   kills and reaps them after the run ([`kill_escaped`]); processes that
//!   are numaprobe's own children for other reasons are never touched;
//! * a watchdog process ([`Watchdog`]), forked per run into a session of
//!   its own (a signal to numaprobe's process group does not reach it),
//!   holds the read end of a pipe whose write end only numaprobe has: if
//!   numaprobe dies (`kill -9`), the pipe closes and the watchdog kills the
//!   run's cgroup ([`crate::cgroup`]) and removes it, and kills the
//!   command's process group, where the child's own `PR_SET_PDEATHSIG`
//!   would only end the child. A normal end disarms it with one byte first.
//!
//! Without a cgroup, a process that both left the group and outlived a
//! `kill -9` of numaprobe is not covered (nothing names it); the run's
//! record says which way its tree was held.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use topo::SysRoot;

use crate::proc;

/// The environment variable that tags the command's processes.
pub const TAG_VAR: &str = "NUMAPROBE_EXEC_TAG";

/// Makes this process a child subreaper, once: orphaned descendants are
/// re-parented here, where they can be found and reaped.
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with integer arguments has no memory effects.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    });
}

/// A tag no other run of this process (or other process) uses.
pub fn new_tag() -> OsString {
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed)).into()
}

/// Whether a `/proc/PID/environ` text holds `TAG_VAR=tag`.
fn has_tag(environ: &[u8], tag: &[u8]) -> bool {
    let mut want = Vec::with_capacity(TAG_VAR.len() + 1 + tag.len());
    want.extend_from_slice(TAG_VAR.as_bytes());
    want.push(b'=');
    want.extend_from_slice(tag);
    environ.split(|&b| b == 0).any(|e| e == want.as_slice())
}

/// Live processes re-parented to this one that carry `tag` (procfs under
/// `root`).
pub fn escaped(root: &SysRoot, tag: &OsString) -> Vec<i32> {
    use std::os::unix::ffi::OsStrExt;
    let me = std::process::id() as i32;
    proc::live_processes(root, |s| s.ppid == me)
        .into_iter()
        .filter(|s| proc::environ(root, s.pid).is_some_and(|env| has_tag(&env, tag.as_bytes())))
        .map(|s| s.pid)
        .collect()
}

/// Kills and reaps every process of the run tagged `tag` that left the
/// command's process group and was re-parented here; returns how many.
/// Their own orphans come here in turn, so it repeats until none is left
/// (for at most `grace`).
pub fn kill_escaped(root: &SysRoot, tag: &OsString, grace: Duration) -> u32 {
    let until = Instant::now() + grace;
    let mut killed = 0;
    loop {
        let found = escaped(root, tag);
        if found.is_empty() || Instant::now() >= until {
            return killed;
        }
        for &pid in &found {
            // SAFETY: kill and waitpid have no memory effects beyond the
            // status out-pointer; each pid is a live child of this process.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                libc::waitpid(pid, &mut status, 0);
            }
        }
        killed += found.len() as u32;
    }
}

/// Kills the command's process group if numaprobe dies (see the module).
pub struct Watchdog {
    pid: libc::pid_t,
    /// The write end: closing it without a byte first fires the watchdog.
    arm: Option<OwnedFd>,
}

impl Watchdog {
    /// Forks the watchdog for process group `pgid` and the run's cgroup
    /// (`None` when the system refuses a pipe or a process: the run goes
    /// on without it).
    pub fn start(
        pgid: libc::pid_t,
        cgroup: Option<&crate::cgroup::WatchdogPlan>,
    ) -> Option<Watchdog> {
        if pgid <= 1 {
            return None;
        }
        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: both descriptors were just created and are owned here.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let (r, w) = (read_end.as_raw_fd(), write_end.as_raw_fd());
        // SAFETY: after fork the child makes only async-signal-safe system
        // calls (close, setsid, sigaction via signal, read, kill, and the
        // cgroup plan's write, pread, nanosleep, rmdir, then _exit) on
        // values prepared before the fork; it never returns into Rust code.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return None;
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe {
                libc::close(w);
                // A session of its own: `kill -9 -PGID` of numaprobe's
                // group leaves it to clean up. Ctrl-C and a hang-up reach
                // numaprobe's whole group; the watchdog waits for
                // numaprobe's end instead.
                libc::setsid();
                libc::signal(libc::SIGINT, libc::SIG_IGN);
                libc::signal(libc::SIGHUP, libc::SIG_IGN);
                let mut b = 0u8;
                let n = loop {
                    let n = libc::read(r, (&mut b as *mut u8).cast(), 1);
                    if n >= 0 || *libc::__errno_location() != libc::EINTR {
                        break n;
                    }
                };
                if n != 1 {
                    // numaprobe is gone without disarming: end the command.
                    libc::kill(-pgid, libc::SIGKILL);
                    if let Some(plan) = cgroup {
                        plan.kill_and_remove();
                    }
                }
                libc::_exit(0);
            }
        }
        drop(read_end);
        Some(Watchdog { pid, arm: Some(write_end) })
    }

    /// Disarms the watchdog and reaps it.
    pub fn disarm(&mut self) {
        if let Some(w) = self.arm.take() {
            // SAFETY: one byte from a valid buffer to our own pipe.
            unsafe { libc::write(w.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            drop(w);
            let mut status = 0;
            // SAFETY: the watchdog is this process's child, waited once.
            unsafe { libc::waitpid(self.pid, &mut status, 0) };
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.disarm();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environ_is_read_as_the_kernel_writes_it() {
        let env = b"A=1\0NUMAPROBE_EXEC_TAG=9-3\0B=2\0";
        assert!(has_tag(env, b"9-3"));
        assert!(!has_tag(env, b"9-30"), "a prefix is another tag");
        assert!(!has_tag(env, b"9"));
    }
}
