//! Each run of a study measured by a child `numaprobe run` ([`RunCommand`],
//! the [`Runner`] that `numaprobe study` uses), and what that child gives
//! back read into types ([`RunOutput`], [`PlanOutput`]), never by key.
//!
//! The child is held three ways, so that nothing it starts measures on
//! under a setting nobody restores:
//! * its own process group, so a Ctrl-C reaches the study alone, which
//!   passes each stopping signal on ([`Relay`]) and restores after the
//!   child has saved what it measured;
//! * `PR_SET_PDEATHSIG`: the kernel kills it should the study die;
//! * a cgroup v2 of its own (`exec::cgroup`, as `exec` holds its
//!   commands): whatever the child forks, even out of its session, is
//!   killed when the run ends, and by a watchdog (`exec::tree::Watchdog`)
//!   should the study be killed with `kill -9`. Where no cgroup can be made
//!   (not root, no cgroup2 mount) the observer hears why once
//!   ([`Event::Uncontained`]) and the study goes on with the first two.

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use audit::runtime::Knob;
use events::StopFlag;
use exec::cgroup::RunCgroup;
use serde::{Deserialize, Serialize};

use crate::{Ended, Event, Observer, Runner};

/// How long the processes a run left in its cgroup get to die.
const LEFTOVER_GRACE: Duration = Duration::from_secs(5);

/// What a study reads back from the `--json` document of each run it
/// started (the rest of that document is the run's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutput {
    pub id: store::RunId,
    pub status: store::RunStatus,
}

/// What a study reads from `numaprobe --json run OPTIONS --dry-run`.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct PlanOutput {
    /// The run's estimated seconds of measuring.
    #[serde(default)]
    pub estimate_s: Option<f64>,
}

/// The stopping signals the study received, to pass on to its child.
pub trait Relay {
    /// How many have arrived so far.
    fn presses(&self) -> usize;
    /// The one to send (the first received; 0 for none known: SIGINT).
    fn signal(&self) -> i32;
}

/// A [`Relay`] from two functions (the CLI's signal counters).
#[derive(Debug, Clone, Copy)]
pub struct FnRelay {
    pub presses: fn() -> usize,
    pub signal: fn() -> i32,
}

impl Relay for FnRelay {
    fn presses(&self) -> usize {
        (self.presses)()
    }
    fn signal(&self) -> i32 {
        (self.signal)()
    }
}

/// The command line of each child a study starts, from the front end
/// that knows the flags: vary asks for a plan or a run in its own terms.
pub trait Argv {
    /// Plan one run with the study's run options, measuring nothing: the
    /// child prints its plan document ([`PlanOutput`]).
    fn estimate(&self) -> Vec<OsString>;
    /// Measure one run labelled `label`; `declare` is the setting and its
    /// value where the machine's configuration does not show it
    /// ([`Knob::detected`]). With [`Launch::json`] the child prints its
    /// run document ([`RunOutput`]).
    fn run(&self, label: &str, declare: Option<(&str, &str)>) -> Vec<OsString>;
}

/// How the child of each run of a study is started.
#[derive(Clone)]
pub struct Launch {
    /// The numaprobe binary.
    pub exe: PathBuf,
    /// Each run's document is read back ([`RunOutput`]) from the child's
    /// standard output.
    pub json: bool,
    /// The children's arguments.
    pub argv: Arc<dyn Argv + Send + Sync>,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch").field("exe", &self.exe).field("json", &self.json).finish()
    }
}

impl Launch {
    /// One run's estimated seconds (`None` when the plan gives none).
    pub fn estimate(&self) -> Option<f64> {
        let mut cmd = Command::new(&self.exe);
        cmd.args(self.argv.estimate());
        let out = cmd.stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
        let doc: PlanOutput = serde_json::from_slice(&out.stdout).ok()?;
        doc.estimate_s.filter(|s| s.is_finite() && *s >= 0.0)
    }
}

/// A folder only this process uses (the children's lock and documents),
/// removed on drop.
#[derive(Debug)]
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> Result<PrivateDir, String> {
        let base = std::env::temp_dir();
        for i in 0..1000 {
            let p = base.join(format!("numaprobe-study-{}-{i}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(PrivateDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!("{}: cannot make a private folder: {e}", p.display()))
                }
            }
        }
        Err(format!("{}: no free name for a private folder", base.display()))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Each run of a study: a child `numaprobe run RUN-OPTIONS --label LABEL`
/// (and `--set KEY=VALUE` for a setting the configuration does not show),
/// with a private measuring lock (the study holds the machine's).
pub struct RunCommand<'a> {
    launch: Launch,
    knob: Knob,
    stop: &'a StopFlag,
    relay: &'a dyn Relay,
    observer: &'a dyn Observer,
    private: PrivateDir,
    /// Makes each run's cgroup (a test gives one that fails).
    cgroup: fn() -> Result<RunCgroup, String>,
    told_uncontained: bool,
}

impl<'a> RunCommand<'a> {
    pub fn new(
        launch: Launch,
        knob: Knob,
        stop: &'a StopFlag,
        relay: &'a dyn Relay,
        observer: &'a dyn Observer,
    ) -> Result<RunCommand<'a>, String> {
        Ok(RunCommand {
            launch,
            knob,
            stop,
            relay,
            observer,
            private: PrivateDir::new()?,
            cgroup: RunCgroup::create,
            told_uncontained: false,
        })
    }

    /// Starts the child (in `cgroup` when there is one).
    fn spawn(
        &self,
        value: &str,
        label: &str,
        json_out: &Path,
        cgroup: Option<&RunCgroup>,
    ) -> Result<std::process::Child, String> {
        let l = &self.launch;
        let mut cmd = Command::new(&l.exe);
        let declare = (!self.knob.detected()).then(|| (self.knob.key(), value));
        cmd.args(l.argv.run(label, declare));
        if l.json {
            let f = std::fs::File::create(json_out)
                .map_err(|e| format!("{}: cannot create: {e}", json_out.display()))?;
            cmd.stdout(Stdio::from(f));
        }
        cmd.env("NUMAPROBE_LOCK", self.private.0.join("measure.lock"));
        cmd.process_group(0);
        // The child must not outlive the study (a `kill -9` of the study
        // would leave it measuring under a setting nobody restores): the
        // kernel kills it when the study's thread ends. If the study died
        // before prctl took effect, the child's parent is already another.
        let study = std::process::id();
        let join = cgroup.map_or(-1, RunCgroup::join_fd);
        // SAFETY: the closure runs in the child between fork and exec and
        // calls only async-signal-safe functions (write, prctl, getppid)
        // on values prepared before the fork.
        unsafe {
            cmd.pre_exec(move || {
                if join >= 0 && libc::write(join, b"0".as_ptr().cast(), 1) != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() as u32 != study {
                    return Err(std::io::Error::other("the study ended before its run started"));
                }
                Ok(())
            });
        }
        cmd.spawn().map_err(|e| e.to_string())
    }

    /// Waits for `child`, passing each stopping signal the study receives
    /// on to it (the first asks it to stop after the current measurement
    /// and save; a second makes it quit at once).
    fn wait(&self, child: &mut std::process::Child) -> std::io::Result<ExitStatus> {
        let mut passed = self.relay.presses();
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(status);
            }
            let presses = self.relay.presses();
            if presses > passed {
                let sig = match self.relay.signal() {
                    0 => libc::SIGINT,
                    s => s,
                };
                // SAFETY: kill(2) on our own child's PID (not yet reaped,
                // so the PID cannot have been reused).
                unsafe { libc::kill(child.id() as libc::pid_t, sig) };
                passed = presses;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Runner for RunCommand<'_> {
    /// The run's id and status from its `--json` document (with `--json`).
    type Output = Option<RunOutput>;

    fn run(&mut self, n: usize, value: &str, label: &str) -> Result<(Ended, Self::Output), String> {
        let out = self.private.0.join(format!("run-{n}.json"));
        let cgroup = match (self.cgroup)() {
            Ok(c) => Some(c),
            Err(why) => {
                if !self.told_uncontained {
                    self.observer.event(Event::Uncontained(&why));
                    self.told_uncontained = true;
                }
                None
            }
        };
        let mut child = self.spawn(value, label, &out, cgroup.as_ref())?;
        let plan = cgroup.as_ref().and_then(RunCgroup::watchdog_plan);
        let mut watchdog = exec::tree::Watchdog::start(child.id() as libc::pid_t, plan.as_ref());
        let status = self.wait(&mut child);
        if let Some(c) = &cgroup {
            let left = c.kill_all(LEFTOVER_GRACE);
            if left > 0 {
                self.observer.event(Event::LeftBehind { n, processes: left });
            }
        }
        if let Some(w) = watchdog.as_mut() {
            w.disarm();
        }
        drop(cgroup);
        let status = status.map_err(|e| e.to_string())?;
        // Interrupted only when the study was asked to stop: a run that
        // ends with 130 on its own is a failure, said as one.
        let ended = if status.success() {
            Ended::Complete
        } else if self.stop.is_stopped() {
            Ended::Interrupted
        } else {
            Ended::Failed(status.code())
        };
        let output = self
            .launch
            .json
            .then(|| std::fs::read(&out).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok());
        Ok((ended, output))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::os::unix::fs::PermissionsExt;
    use std::time::Instant;

    struct NoSignals;
    impl Relay for NoSignals {
        fn presses(&self) -> usize {
            0
        }
        fn signal(&self) -> i32 {
            libc::SIGINT
        }
    }

    #[derive(Default)]
    struct Heard(RefCell<Vec<String>>);
    impl Observer for Heard {
        fn event(&self, e: Event<'_>) {
            self.0.borrow_mut().push(format!("{e:?}"));
        }
    }

    /// A stand-in for `numaprobe`: a script that leaves `sleep MARKER`
    /// behind in a session of its own, and prints a run document.
    fn fake_numaprobe(dir: &Path, marker: &str) -> PathBuf {
        let exe = dir.join("fake-numaprobe");
        std::fs::write(
            &exe,
            format!(
                "#!/bin/sh\nsetsid sleep {marker} < /dev/null > /dev/null 2>&1 &\nsleep 0.3\n\
                 echo '{{\"id\": 7, \"status\": \"complete\", \"other\": [1, 2]}}'\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    /// The pids of live `sleep MARKER` processes.
    fn sleepers(marker: &str) -> Vec<i32> {
        let want = format!("sleep\0{marker}\0");
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|p: &i32| {
                std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == want.as_bytes())
                    && !std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                        s.rsplit(')').next().is_some_and(|r| r.trim_start().starts_with('Z'))
                    })
            })
            .collect()
    }

    /// Children that take no arguments (the stand-ins ignore them).
    struct NoArgs;
    impl Argv for NoArgs {
        fn estimate(&self) -> Vec<OsString> {
            Vec::new()
        }
        fn run(&self, _: &str, _: Option<(&str, &str)>) -> Vec<OsString> {
            Vec::new()
        }
    }

    fn launch(exe: PathBuf) -> Launch {
        Launch { exe, json: true, argv: Arc::new(NoArgs) }
    }

    /// Guards issue 37 (containment): a run's child that forks a process
    /// out of its session must not outlive the run. Needs root or a
    /// delegated cgroup v2 (this test machine is root with cgroup2).
    #[test]
    fn what_a_run_leaves_behind_is_killed_with_its_cgroup() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("500.{}3", std::process::id());
        let stop = StopFlag::new();
        let heard = Heard::default();
        let mut r = RunCommand::new(
            launch(fake_numaprobe(dir.path(), &marker)),
            Knob::ThpEnabled,
            &stop,
            &NoSignals,
            &heard,
        )
        .unwrap();
        let (ended, out) = r.run(0, "always", "s: thp_enabled=always").unwrap();
        let left = sleepers(&marker);
        for &p in &left {
            // SAFETY: our own test's sleeps.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert_eq!(ended, Ended::Complete);
        assert_eq!(
            out,
            Some(RunOutput { id: store::RunId(7), status: store::RunStatus::Complete }),
            "the run's document is read into its type"
        );
        assert!(left.is_empty(), "the run's setsid child {left:?} outlived it: {:?}", heard.0);
        let heard = heard.0.borrow();
        assert!(!heard.iter().any(|e| e.starts_with("Uncontained")), "{heard:?}");
        assert!(
            heard.iter().any(|e| e.starts_with("LeftBehind { n: 0, processes: 1 }")),
            "{heard:?}"
        );
    }

    /// Where no cgroup can be made, the study says why once and measures
    /// on: the runs are not refused.
    #[test]
    fn without_a_cgroup_the_study_says_so_once_and_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("500.{}4", std::process::id());
        let stop = StopFlag::new();
        let heard = Heard::default();
        let mut r = RunCommand::new(
            launch(fake_numaprobe(dir.path(), &marker)),
            Knob::ThpEnabled,
            &stop,
            &NoSignals,
            &heard,
        )
        .unwrap();
        r.cgroup = || Err("no cgroup2 file system mounted".into());
        let first = r.run(0, "always", "a").unwrap();
        let second = r.run(1, "never", "b").unwrap();
        let until = Instant::now() + Duration::from_secs(5);
        while sleepers(&marker).len() < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        for p in sleepers(&marker) {
            // SAFETY: our own test's sleeps.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert_eq!((first.0, second.0), (Ended::Complete, Ended::Complete));
        assert_eq!(heard.0.borrow().clone(), [r#"Uncontained("no cgroup2 file system mounted")"#]);
    }

    #[test]
    fn a_run_that_fails_or_prints_no_document_is_said_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("failing");
        std::fs::write(&exe, "#!/bin/sh\nexit 3\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let stop = StopFlag::new();
        let heard = Heard::default();
        let mut r =
            RunCommand::new(launch(exe), Knob::ThpEnabled, &stop, &NoSignals, &heard).unwrap();
        assert_eq!(r.run(0, "always", "a").unwrap(), (Ended::Failed(Some(3)), None));
        stop.stop();
        assert_eq!(r.run(1, "never", "b").unwrap(), (Ended::Interrupted, None));
    }
}
