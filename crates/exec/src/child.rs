//! Running the command once: resolve it, spawn it in its own process group
//! under a placement, capture its output, sample where its pages are, time
//! it out or interrupt it, and collect `wait4`'s resource usage.
//!
//! Everything the child does between `fork` and `exec` is a raw system call
//! on memory prepared in the parent (async-signal-safe).
//!
//! With counters (`exec --counters`) the child, before `exec`, writes its
//! pid into a pipe and waits on a second one; the parent opens the
//! counters on that pid (inherited by its descendants, enabled at `exec`)
//! and lets it go. `spawn` returns only after `exec`, so a helper thread
//! does that meanwhile.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use crate::numa_maps::{self, NumaSample};
use crate::{proc, ExecError};
use events::StopFlag;
use place::ChildPlacement;
use topo::SysRoot;

/// How long a signalled process group gets before the next, harder signal.
pub const KILL_GRACE: Duration = Duration::from_millis(1000);

/// How much of each output stream is kept: the first and the last this
/// many bytes.
const KEEP_BYTES: usize = 1 << 20;

/// The command to run, checked and resolved before any run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedCommand {
    /// The file that is executed.
    pub program: PathBuf,
    /// `argv[0]` as the user wrote it (busybox applets look at it).
    pub arg0: OsString,
    pub args: Vec<OsString>,
}

impl ResolvedCommand {
    /// Resolves `argv[0]` like `execvp` does (a name with a `/` is a path;
    /// otherwise each `PATH` entry, `/usr/local/bin:/usr/bin:/bin` when
    /// unset) and checks that it is an executable file.
    pub fn resolve(argv: &[OsString], path_env: Option<&OsStr>) -> Result<Self, ExecError> {
        let (arg0, args) = argv.split_first().ok_or(ExecError::NoCommand)?;
        let name = Path::new(arg0);
        let program = if arg0.as_bytes().contains(&b'/') {
            check_executable(name)?;
            name.to_path_buf()
        } else {
            let path = path_env.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
            let mut not_exec = None;
            let mut found = None;
            for dir in std::env::split_paths(path) {
                let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
                let cand = dir.join(name);
                match check_executable(&cand) {
                    Ok(()) => {
                        found = Some(cand);
                        break;
                    }
                    Err(e @ ExecError::NotExecutable(..)) => {
                        not_exec.get_or_insert(e);
                    }
                    Err(_) => {}
                }
            }
            match (found, not_exec) {
                (Some(p), _) => p,
                (None, Some(e)) => return Err(e),
                (None, None) => {
                    return Err(ExecError::CommandNotFound(arg0.to_string_lossy().into_owned()))
                }
            }
        };
        Ok(ResolvedCommand { program, arg0: arg0.clone(), args: args.to_vec() })
    }

    /// The command line for display, arguments with spaces quoted.
    pub fn display(&self) -> Vec<String> {
        std::iter::once(&self.arg0)
            .chain(&self.args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }
}

fn check_executable(p: &Path) -> Result<(), ExecError> {
    let meta = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ExecError::CommandNotFound(p.display().to_string()))
        }
        Err(e) => return Err(ExecError::NotExecutable(p.to_path_buf(), e)),
    };
    if meta.is_dir() {
        return Err(ExecError::NotExecutable(p.to_path_buf(), io::Error::other("is a directory")));
    }
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|e| ExecError::NotExecutable(p.to_path_buf(), e.into()))?;
    // SAFETY: c is a valid NUL-terminated string; access only reads it.
    let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
    if !ok || meta.permissions().mode() & 0o111 == 0 {
        let why = io::Error::new(io::ErrorKind::PermissionDenied, "permission to execute denied");
        return Err(ExecError::NotExecutable(p.to_path_buf(), why));
    }
    Ok(())
}

/// Receives the command's output as it arrives (`--show-output`).
pub trait OutputSink: Send + Sync {
    fn chunk(&self, stream: Stream, bytes: &[u8]);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Exit of the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl Exit {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// Output kept from one stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The first and last [`KEEP_BYTES`] bytes, lossily decoded, with a
    /// marker where the middle was left out.
    pub text: String,
    pub total_bytes: u64,
}

impl Captured {
    /// The last `n` lines.
    pub fn tail_lines(&self, n: usize) -> Vec<String> {
        let lines: Vec<&str> = self.text.lines().collect();
        lines[lines.len().saturating_sub(n)..].iter().map(|l| l.to_string()).collect()
    }
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    /// Peak resident set of the command and the descendants it waited for.
    pub max_rss_kib: u64,
    pub exit: Exit,
    pub timed_out: bool,
    pub interrupted: bool,
    pub stdout: Captured,
    pub stderr: Captured,
    /// The fullest `numa_maps` reading (most resident KiB) of each process
    /// of the group, summed.
    pub numa: NumaSample,
    /// Readings taken, and processes summed.
    pub numa_samples: u32,
    pub numa_processes: u32,
    /// Processes the command left in its group, terminated after it exited.
    pub leftovers_killed: u32,
    /// An output pipe stayed open after the run (a process outside the
    /// group holds it); that output was abandoned.
    pub output_abandoned: bool,
    /// Event counts of the command and its descendants (`counters`).
    pub counters: Option<results::counters::Counters>,
    /// How the command's process tree was held (a cgroup, or why not).
    pub containment: crate::cgroup::Containment,
}

/// Knobs of one run.
pub struct RunOptions<'a> {
    pub timeout: Option<Duration>,
    pub stop: &'a StopFlag,
    pub sink: Option<Arc<dyn OutputSink>>,
    /// Read `numa_maps` while the command runs.
    pub sample: bool,
    /// Count events of the command and its descendants.
    pub counters: bool,
    /// Where procfs is read (the live machine: `SysRoot::live()`).
    pub root: &'a SysRoot,
}

fn sample_interval(elapsed: Duration) -> Duration {
    if elapsed < Duration::from_millis(500) {
        Duration::from_millis(20)
    } else if elapsed < Duration::from_secs(5) {
        Duration::from_millis(100)
    } else {
        Duration::from_millis(500)
    }
}

/// Processes of process group `pgid` that are not zombies, from procfs
/// under `root`.
pub fn group_members(root: &SysRoot, pgid: i32) -> Vec<i32> {
    proc::live_processes(root, |s| s.pgrp == pgid).iter().map(|s| s.pid).collect()
}

fn signal_group(pgid: i32, sig: libc::c_int) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill has no memory effects; pgid > 1 so this never signals
    // every process or our own group by accident.
    unsafe {
        if libc::kill(-pgid, sig) != 0 {
            libc::kill(pgid, sig);
        }
    }
}

fn spawn_reader(
    mut pipe: impl Read + Send + 'static,
    stream: Stream,
    sink: Option<Arc<dyn OutputSink>>,
    done: mpsc::Sender<(Stream, Captured)>,
) {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let mut total = 0u64;
        let mut cut = false;
        let mut chunk = [0u8; 65536];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    total += n as u64;
                    if let Some(s) = &sink {
                        s.chunk(stream, &chunk[..n]);
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if buf.len() > 3 * KEEP_BYTES {
                        buf.drain(KEEP_BYTES..buf.len() - KEEP_BYTES);
                        cut = true;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if buf.len() > 2 * KEEP_BYTES {
            buf.drain(KEEP_BYTES..buf.len() - KEEP_BYTES);
            cut = true;
        }
        let text = if cut {
            let skipped = total - buf.len() as u64;
            let (head, tail) = buf.split_at(KEEP_BYTES);
            format!(
                "{}\n[... {skipped} bytes left out ...]\n{}",
                String::from_utf8_lossy(head),
                String::from_utf8_lossy(tail)
            )
        } else {
            String::from_utf8_lossy(&buf).into_owned()
        };
        let _ = done.send((stream, Captured { text, total_bytes: total }));
    });
}

fn pidfd_open(pid: i32) -> Option<libc::c_int> {
    // SAFETY: pidfd_open takes a pid and flags, returns a new fd or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then_some(fd as libc::c_int)
}

/// Waits until `fd` is readable (the process exited) or `wait` passes.
fn wait_readable(fd: Option<libc::c_int>, wait: Duration) {
    match fd {
        Some(fd) => {
            let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            let ms = wait.as_millis().clamp(0, i32::MAX as u128) as libc::c_int;
            // SAFETY: p is one valid pollfd for the duration of the call.
            unsafe { libc::poll(&mut p, 1, ms) };
        }
        None => std::thread::sleep(wait.min(Duration::from_millis(2))),
    }
}

fn tv(t: libc::timeval) -> Duration {
    Duration::from_secs(t.tv_sec.max(0) as u64) + Duration::from_micros(t.tv_usec.max(0) as u64)
}

/// Runs `cmd` once under `placement` (`None`: everything inherited) and
/// waits for it.
pub fn run_once(
    cmd: &ResolvedCommand,
    placement: Option<&ChildPlacement>,
    opts: &RunOptions<'_>,
) -> Result<RunOutcome, ExecError> {
    let mut spawned = spawn(cmd, placement, opts)?;
    let pid = spawned.pid;
    let (tx, rx) = mpsc::channel();
    if let Some(out) = spawned.child.stdout.take() {
        spawn_reader(out, Stream::Stdout, opts.sink.clone(), tx.clone());
    }
    if let Some(err) = spawned.child.stderr.take() {
        spawn_reader(err, Stream::Stderr, opts.sink.clone(), tx.clone());
    }
    drop(tx);
    let waited = wait_for(pid, spawned.start, opts)?;
    let Spawned { child, tag, cgroup, containment, mut watchdog, mut counting, .. } = spawned;
    // The child is reaped; the handle only closes what it still holds.
    drop(child);
    let leftovers_killed = end_leftovers(opts, pid, &tag, cgroup, &mut watchdog);
    let (stdout, stderr, got) = read_output(&rx);

    let counters = counting.as_mut().map(|c| c.read());
    let mut numa = NumaSample::new();
    for s in waited.last.values() {
        numa_maps::add(&mut numa, s);
    }
    let (status, ru) = (waited.status, waited.ru);
    let exit = if libc::WIFEXITED(status) {
        Exit { code: Some(libc::WEXITSTATUS(status)), signal: None }
    } else if libc::WIFSIGNALED(status) {
        Exit { code: None, signal: Some(libc::WTERMSIG(status)) }
    } else {
        Exit { code: None, signal: None }
    };
    Ok(RunOutcome {
        wall: waited.wall,
        user: tv(ru.ru_utime),
        sys: tv(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss.max(0) as u64,
        exit,
        timed_out: waited.timed_out,
        interrupted: waited.interrupted,
        stdout,
        stderr,
        numa,
        numa_samples: waited.samples,
        numa_processes: waited.last.len() as u32,
        leftovers_killed,
        output_abandoned: got < 2,
        counters,
        containment,
    })
}

/// A command started in its own process group (and cgroup when one could
/// be made), watched by a watchdog. Dropped early (a failed wait), the
/// watchdog goes first, then the child, then the cgroup.
struct Spawned {
    watchdog: Option<crate::tree::Watchdog>,
    child: std::process::Child,
    /// Its counters (`exec --counters`), open before it ran.
    counting: Option<counters::EventSet>,
    cgroup: Option<crate::cgroup::RunCgroup>,
    /// The tag its processes carry in their environment.
    tag: OsString,
    containment: crate::cgroup::Containment,
    pid: i32,
    start: Instant,
}

/// Starts `cmd` under `placement`: its own process group, the run's
/// cgroup, the counters' handshake, and the watchdog that ends the
/// group and cgroup if numaprobe is killed outright.
fn spawn(
    cmd: &ResolvedCommand,
    placement: Option<&ChildPlacement>,
    opts: &RunOptions<'_>,
) -> Result<Spawned, ExecError> {
    // The masks are built here, in the parent: the child only makes system calls.
    let setup = placement.map(ChildPlacement::prepare);
    // Orphans of the command come to numaprobe, tagged so they are found.
    crate::tree::become_subreaper();
    let tag = crate::tree::new_tag();
    // The whole tree in a cgroup of its own, killed whole at the end.
    let (cgroup, mut containment) = match crate::cgroup::RunCgroup::create() {
        Ok(c) => {
            let how = c.containment();
            (Some(c), how)
        }
        Err(why) => (None, crate::cgroup::Containment::None { why }),
    };
    let join_fd = cgroup.as_ref().map_or(-1, |c| c.join_fd());
    let mut command = std::process::Command::new(&cmd.program);
    command
        .arg0(&cmd.arg0)
        .args(&cmd.args)
        .env(crate::tree::TAG_VAR, &tag)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let gate = if opts.counters {
        Some(Gate::new().map_err(|e| spawn_error(cmd, placement, e))?)
    } else {
        None
    };
    let (ready_w, go_r) = gate.as_ref().map_or((-1, -1), |g| (g.ready_w_raw(), g.go_r_raw()));
    // SAFETY: the closure only makes system calls (setpgid, prctl, getpid,
    // write, read, and through place's apply_in_child sched_setaffinity and
    // set_mempolicy) on masks and descriptors made before fork: no
    // allocation, no locks.
    unsafe {
        command.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // Into the run's cgroup before anything else can fork (the
            // parent checks that it got there).
            if join_fd >= 0 {
                libc::write(join_fd, b"0".as_ptr().cast(), 1);
            }
            // the command dies with numaprobe rather than outliving it
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            if let Some(s) = &setup {
                s.apply_in_child()?;
            }
            if ready_w >= 0 {
                // tell the parent who we are, then wait until it has opened
                // the counters and sent one byte
                let pid = libc::getpid();
                libc::write(ready_w, (&pid as *const libc::pid_t).cast(), 4);
                let mut b = 0u8;
                while libc::read(go_r, (&mut b as *mut u8).cast(), 1) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let (spawned, counting) = match gate {
        None => (command.spawn(), None),
        Some(gate) => gate.spawn(command),
    };
    let child = spawned.map_err(|source| spawn_error(cmd, placement, source))?;
    let pid = child.id() as i32;
    // Also set the group from this side, so a signal sent before the child
    // ran its pre_exec still reaches the group (EACCES after exec is fine).
    // SAFETY: setpgid has no memory effects.
    unsafe { libc::setpgid(pid, pid) };
    if let Some(c) = &cgroup {
        if !c.holds(pid) {
            containment = crate::cgroup::Containment::None {
                why: format!("the command did not join {}", c.containment().describe()),
            };
        }
    }
    // If numaprobe is killed outright, the watchdog ends the command's
    // group and cgroup.
    let plan = cgroup.as_ref().and_then(|c| c.watchdog_plan());
    let watchdog = crate::tree::Watchdog::start(pid, plan.as_ref());
    Ok(Spawned { watchdog, child, counting, cgroup, tag, containment, pid, start })
}

/// What waiting for the command saw.
struct Waited {
    status: libc::c_int,
    ru: libc::rusage,
    wall: Duration,
    timed_out: bool,
    interrupted: bool,
    /// The fullest `numa_maps` reading of each process of the group.
    last: HashMap<i32, NumaSample>,
    samples: u32,
}

/// Waits for the command `pid` (its group `pid`): stops it on the stop
/// flag or at the timeout (SIGINT or SIGTERM, then harder signals after
/// [`KILL_GRACE`]) and reads where its group's pages are meanwhile.
fn wait_for(pid: i32, start: Instant, opts: &RunOptions<'_>) -> Result<Waited, ExecError> {
    let pidfd = pidfd_open(pid);
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain data; zeroed is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut last: HashMap<i32, NumaSample> = HashMap::new();
    let mut samples = 0u32;
    let mut next_sample = start;
    let mut next_group_scan = start;
    let mut timed_out = false;
    let mut interrupted = false;
    // (when, signal) still to send once the previous one was ignored
    let mut escalation: Vec<(Instant, libc::c_int)> = Vec::new();
    let wall;
    loop {
        // SAFETY: status and ru are valid out-pointers for wait4.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        let now = Instant::now();
        if r == pid {
            wall = now - start;
            break;
        }
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                signal_group(pid, libc::SIGKILL);
                return Err(ExecError::Wait(e));
            }
        }
        if !interrupted && opts.stop.is_stopped() {
            interrupted = true;
            signal_group(pid, libc::SIGINT);
            escalation =
                vec![(now + KILL_GRACE, libc::SIGTERM), (now + 2 * KILL_GRACE, libc::SIGKILL)];
        }
        if let Some(t) = opts.timeout {
            if !timed_out && !interrupted && now - start >= t {
                timed_out = true;
                signal_group(pid, libc::SIGTERM);
                escalation = vec![(now + KILL_GRACE, libc::SIGKILL)];
            }
        }
        while let Some(&(at, sig)) = escalation.first() {
            if now < at {
                break;
            }
            signal_group(pid, sig);
            escalation.remove(0);
        }
        if opts.sample && now >= next_sample {
            let scan_group = now >= next_group_scan;
            if scan_group {
                next_group_scan = now + Duration::from_millis(100);
            }
            sample_numa(opts.root, pid, scan_group, &mut last);
            samples += 1;
            next_sample = Instant::now() + sample_interval(now - start);
        }
        let mut wake = now + Duration::from_millis(50);
        if opts.sample {
            wake = wake.min(next_sample);
        }
        if let Some(t) = opts.timeout {
            if !timed_out {
                wake = wake.min(start + t);
            }
        }
        if let Some(&(at, _)) = escalation.first() {
            wake = wake.min(at);
        }
        wait_readable(pidfd, wake.saturating_duration_since(Instant::now()));
    }
    if let Some(fd) = pidfd {
        // SAFETY: fd came from pidfd_open and is closed once.
        unsafe { libc::close(fd) };
    }
    Ok(Waited { status, ru, wall, timed_out, interrupted, last, samples })
}

/// One reading of where the pages are: the command `pid`, and every
/// process of its group when `scan_group`. Keeps each process's fullest
/// reading in `last`.
fn sample_numa(root: &SysRoot, pid: i32, scan_group: bool, last: &mut HashMap<i32, NumaSample>) {
    let mut pids = vec![pid];
    if scan_group {
        pids = group_members(root, pid);
        if !pids.contains(&pid) {
            pids.push(pid);
        }
    }
    for p in pids {
        if let Some(text) = proc::numa_maps(root, p) {
            let s = numa_maps::parse(&text);
            // Keep each process's fullest reading: an exiting
            // process reads empty, and one that frees its memory
            // before exiting would otherwise hide where it was.
            let size = numa_maps::total_kib(&s);
            if size > 0 && !matches!(last.get(&p), Some(old) if numa_maps::total_kib(old) > size) {
                last.insert(p, s);
            }
        }
    }
}

/// Ends what the command left running, so the next run starts on a quiet
/// machine and the output pipes close: its group (SIGTERM, then SIGKILL
/// after [`KILL_GRACE`]), the tagged orphans that left it, and whatever is
/// still in its cgroup. Disarms the watchdog. Returns how many processes
/// were ended.
fn end_leftovers(
    opts: &RunOptions<'_>,
    pid: i32,
    tag: &OsString,
    cgroup: Option<crate::cgroup::RunCgroup>,
    watchdog: &mut Option<crate::tree::Watchdog>,
) -> u32 {
    let mut leftovers = group_members(opts.root, pid);
    let leftovers_killed = leftovers.len() as u32;
    if !leftovers.is_empty() {
        signal_group(pid, libc::SIGTERM);
        let until = Instant::now() + KILL_GRACE;
        while !leftovers.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
            leftovers = group_members(opts.root, pid);
        }
        if !leftovers.is_empty() {
            signal_group(pid, libc::SIGKILL);
        }
    }
    // Processes that left the group (setsid) and were orphaned came here:
    // they are ended too, before the output pipes they may hold are read.
    let mut leftovers_killed =
        leftovers_killed + crate::tree::kill_escaped(opts.root, tag, KILL_GRACE);
    // Whatever is still in the cgroup (it left the group and dropped the
    // tag: `setsid env -i ...`) is killed whole.
    if let Some(c) = &cgroup {
        leftovers_killed += c.kill_all(KILL_GRACE);
    }
    if let Some(w) = watchdog {
        w.disarm();
    }
    drop(cgroup);
    leftovers_killed
}

/// The command's stdout and stderr as the readers captured them, waiting
/// at most [`KILL_GRACE`] for a pipe another process still holds; and how
/// many of the two arrived.
fn read_output(rx: &mpsc::Receiver<(Stream, Captured)>) -> (Captured, Captured, usize) {
    let mut stdout = Captured::default();
    let mut stderr = Captured::default();
    let mut got = 0;
    let until = Instant::now() + KILL_GRACE;
    while got < 2 {
        match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok((Stream::Stdout, c)) => stdout = c,
            Ok((Stream::Stderr, c)) => stderr = c,
            Err(_) => break,
        }
        got += 1;
    }
    (stdout, stderr, got)
}

fn spawn_error(
    cmd: &ResolvedCommand,
    placement: Option<&ChildPlacement>,
    source: io::Error,
) -> ExecError {
    ExecError::Spawn {
        program: cmd.program.clone(),
        placement: crate::policy::describe(placement),
        source,
    }
}

/// The two pipes of the counters handshake (all ends close-on-exec, so the
/// command never sees them).
struct Gate {
    ready_r: std::os::fd::OwnedFd,
    ready_w: std::os::fd::OwnedFd,
    go_r: std::os::fd::OwnedFd,
    go_w: std::os::fd::OwnedFd,
}

fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a valid array of two ints for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two new descriptors that nothing else owns.
    Ok(unsafe {
        (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1]))
    })
}

impl Gate {
    fn new() -> io::Result<Gate> {
        let (ready_r, ready_w) = pipe()?;
        let (go_r, go_w) = pipe()?;
        Ok(Gate { ready_r, ready_w, go_r, go_w })
    }

    fn ready_w_raw(&self) -> libc::c_int {
        use std::os::fd::AsRawFd;
        self.ready_w.as_raw_fd()
    }

    fn go_r_raw(&self) -> libc::c_int {
        use std::os::fd::AsRawFd;
        self.go_r.as_raw_fd()
    }

    /// Spawns `command` (from this thread: the child's parent-death signal
    /// follows the thread that forked it); a helper thread waits for the
    /// child's pid, opens the counters on it and lets it `exec`.
    fn spawn(
        self,
        mut command: std::process::Command,
    ) -> (io::Result<std::process::Child>, Option<counters::EventSet>) {
        let Gate { ready_r, ready_w, go_r, go_w } = self;
        std::thread::scope(|s| {
            let h = s.spawn(move || {
                let mut pid_bytes = [0u8; 4];
                let mut got = 0;
                let mut reader = std::fs::File::from(ready_r);
                while got < 4 {
                    match reader.read(&mut pid_bytes[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let set = (got == 4).then(|| {
                    let pid = libc::pid_t::from_ne_bytes(pid_bytes);
                    counters::EventSet::open(
                        counters::Target::Child(pid),
                        "command and its children",
                    )
                });
                // let the child go: one byte (it holds a copy of the write
                // end itself, so closing ours would not end its read); the
                // read end stays open until then, so the write cannot fail
                let mut go = std::fs::File::from(go_w);
                let _ = std::io::Write::write_all(&mut go, &[1]);
                drop(go);
                drop(go_r);
                set
            });
            let r = command.spawn();
            // the child has exec'd (or failed): our copy of its end closes,
            // so a child that never wrote reads as end of file
            drop(ready_w);
            let set = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            (r, set)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error and its sources, as the CLI prints them.
    fn chain(e: &dyn std::error::Error) -> String {
        let mut out = e.to_string();
        let mut s = e.source();
        while let Some(x) = s {
            out = format!("{out}: {x}");
            s = x.source();
        }
        out
    }

    fn argv(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn resolves_like_execvp() {
        let c = ResolvedCommand::resolve(
            &argv(&["sh", "-c", "true"]),
            Some(OsStr::new("/nonexistent:/bin")),
        )
        .unwrap();
        assert_eq!(c.program, Path::new("/bin/sh"));
        assert_eq!(c.arg0, "sh");
        let e =
            ResolvedCommand::resolve(&argv(&["no-such-cmd-xyz"]), None).unwrap_err().to_string();
        assert!(e.contains("no-such-cmd-xyz") && e.contains("not found"), "{e}");
        let plain = std::env::temp_dir().join(format!("np-exec-plain-{}", std::process::id()));
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e =
            chain(&ResolvedCommand::resolve(&[plain.clone().into_os_string()], None).unwrap_err());
        std::fs::remove_file(&plain).unwrap();
        assert!(e.contains("np-exec-plain") && e.contains("not executable"), "{e}");
        let e = chain(&ResolvedCommand::resolve(&argv(&["/tmp"]), None).unwrap_err());
        assert!(e.contains("directory"), "{e}");
        assert!(matches!(ResolvedCommand::resolve(&[], None), Err(ExecError::NoCommand)));
    }

    #[test]
    fn captures_exit_output_and_usage() {
        let stop = StopFlag::new();
        let cmd =
            ResolvedCommand::resolve(&argv(&["sh", "-c", "echo out; echo err >&2; exit 3"]), None)
                .unwrap();
        let root = SysRoot::live();
        let opts = RunOptions {
            timeout: None,
            stop: &stop,
            sink: None,
            sample: true,
            counters: false,
            root: &root,
        };
        let o = run_once(&cmd, None, &opts).unwrap();
        assert_eq!(o.exit, Exit { code: Some(3), signal: None });
        assert_eq!(o.stdout.text, "out\n");
        assert_eq!(o.stderr.tail_lines(5), vec!["err".to_string()]);
        assert!(o.max_rss_kib > 0);
        assert!(!o.timed_out && !o.interrupted && !o.output_abandoned);
    }
}
