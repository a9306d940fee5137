//! Taking the lock as a measuring command does: busy and asked to `wait`,
//! told whom it waits for (again only if the holder changes) until the
//! lock is free or the caller stops; from a terminal, the same wait
//! bounded (a first run on a shared machine waits its turn); otherwise
//! (scripts, CI, cron) an error naming the holder at once. The caller
//! words the waiting ([`Waiting`]) and what to do next ([`TakeError`]).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{LockError, MeasureLock};

/// How long a command run from a terminal waits for another measurement
/// before it gives up (without `--wait`).
pub const INTERACTIVE_WAIT: Duration = Duration::from_secs(10 * 60);

/// Why [`take`] returned without the lock.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    /// Held by another process, and the caller would not wait (a terminal
    /// would have waited up to the bound).
    #[error("{0}")]
    Busy(LockError, Duration),
    /// Still held after the bounded wait of a terminal.
    #[error("{0} after {m} min", m = minutes(*.1))]
    TimedOut(LockError, Duration),
    /// The caller stopped waiting (a signal): the lock error it ended with.
    #[error(transparent)]
    Stopped(LockError),
    /// Any other failure to open or lock the file.
    #[error(transparent)]
    Other(LockError),
}

/// What [`take`] tells its caller while it waits: once, and again when
/// the holder changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// The holder's PID, when the lock file names one.
    pub pid: Option<u32>,
    /// Up to how long it waits (a terminal's bounded wait); `None`:
    /// without a limit, as asked.
    pub bound: Option<Duration>,
}

/// Whole minutes, rounded up.
pub fn minutes(d: Duration) -> u64 {
    d.as_secs().div_ceil(60)
}

/// Takes the lock at `path`: waits without a limit when `wait`, up to
/// `bound` when `interactive`, else not at all; while it waits, `tell`
/// hears whom it waits for, unless `quiet` (the bounded wait's always:
/// the caller did not ask to wait). `stopped` ends a wait.
pub fn take(
    path: &Path,
    wait: bool,
    interactive: bool,
    quiet: bool,
    stopped: &dyn Fn() -> bool,
    bound: Duration,
    tell: &mut dyn FnMut(Waiting),
) -> Result<MeasureLock, TakeError> {
    let deadline = (!wait).then(|| Instant::now() + bound);
    let mut timed_out = false;
    let r = if wait || interactive {
        let mut told: Option<Option<u32>> = None;
        MeasureLock::acquire_wait(path, Duration::from_millis(500), |pid| {
            if told != Some(pid) && (!quiet || !wait) {
                tell(Waiting { pid, bound: deadline.map(|_| bound) });
            }
            told = Some(pid);
            if deadline.is_some_and(|d| Instant::now() >= d) {
                timed_out = true;
                return false;
            }
            !stopped()
        })
    } else {
        MeasureLock::acquire_at(path)
    };
    r.map_err(|e| match e {
        LockError::Busy { .. } => TakeError::Busy(e, bound),
        e @ LockError::GaveUp { .. } if timed_out => TakeError::TimedOut(e, bound),
        e @ LockError::GaveUp { .. } if stopped() => TakeError::Stopped(e),
        e => TakeError::Other(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 35: the README's first command stopped at once on a shared
    /// machine. From a terminal a busy lock is waited for, within a bound,
    /// and the caller is told whom it waits for; a script still fails at
    /// once, told nothing.
    #[test]
    fn from_a_terminal_a_busy_lock_is_waited_for_within_a_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let held = MeasureLock::acquire_at(&path).unwrap();
        let go_on = || false;
        let me = Some(std::process::id());
        let mut heard = Vec::new();

        let hour = Duration::from_secs(3600);
        let e = take(&path, false, false, true, &go_on, hour, &mut |w| heard.push(w)).unwrap_err();
        assert!(
            matches!(e, TakeError::Busy(LockError::Busy { pid, .. }, b) if pid == me && b == hour),
            "{e:?}"
        );
        assert_eq!(heard, []);

        let short = Duration::from_millis(600);
        let e = take(&path, false, true, true, &go_on, short, &mut |w| heard.push(w)).unwrap_err();
        assert!(
            matches!(e, TakeError::TimedOut(LockError::GaveUp { .. }, b) if b == short),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "gave up waiting for the measuring lock {} (held by PID {}) after 0 min",
                path.display(),
                std::process::id()
            )
        );
        assert_eq!(heard, [Waiting { pid: me, bound: Some(short) }]);

        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let got = take(&path, false, true, true, &go_on, hour, &mut |_| {});
        release.join().unwrap();
        assert_eq!(got.unwrap().path(), path);
    }

    /// Asked to wait, the caller hears once whom it waits for, without a
    /// bound, unless quiet; a wait the caller stopped is told apart from a
    /// timed-out one.
    #[test]
    fn a_stopped_wait_is_not_a_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let _held = MeasureLock::acquire_at(&path).unwrap();
        let stop = || true;
        let hour = Duration::from_secs(3600);
        let mut heard = Vec::new();
        let e = take(&path, true, false, false, &stop, hour, &mut |w| heard.push(w)).unwrap_err();
        assert!(matches!(e, TakeError::Stopped(LockError::GaveUp { .. })), "{e:?}");
        assert_eq!(heard, [Waiting { pid: Some(std::process::id()), bound: None }]);
        let e = take(&path, true, false, true, &stop, hour, &mut |w| heard.push(w)).unwrap_err();
        assert!(matches!(e, TakeError::Stopped(_)), "{e:?}");
        assert_eq!(heard.len(), 1, "quiet: {heard:?}");
    }
}
