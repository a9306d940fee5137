//! Taking the lock as a measuring command does: busy and asked to `wait`,
//! one line saying whom it waits for (again only if the holder changes)
//! until the lock is free or the caller stops; from a terminal, the same
//! wait bounded (a first run on a shared machine waits its turn);
//! otherwise (scripts, CI, cron) an error naming the holder at once. The
//! errors say what to do next, in the command line's words (`--wait`).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::{LockError, MeasureLock};

/// How long a command run from a terminal waits for another measurement
/// before it gives up (without `--wait`).
pub const INTERACTIVE_WAIT: Duration = Duration::from_secs(10 * 60);

/// Why [`take`] returned without the lock.
#[derive(Debug, thiserror::Error)]
pub enum TakeError {
    /// Held by another process, and the caller would not wait.
    #[error("{0}; wait for it to finish or use --wait (from a terminal numaprobe waits up to {m} min by itself)", m = minutes(*.1))]
    Busy(LockError, Duration),
    /// Still held after the bounded wait of a terminal.
    #[error("{0} after {m} min; try again later, or use --wait to wait without a limit", m = minutes(*.1))]
    TimedOut(LockError, Duration),
    /// The caller stopped waiting (a signal): the lock error it ended with.
    #[error(transparent)]
    Stopped(LockError),
    /// Any other failure to open or lock the file.
    #[error(transparent)]
    Other(LockError),
}

fn minutes(d: Duration) -> u64 {
    d.as_secs().div_ceil(60)
}

/// Takes the lock at `path`: waits without a limit when `wait`, up to
/// `bound` when `interactive`, else not at all; the waiting lines go to
/// stderr unless `quiet` (the bounded wait's always: the caller did not
/// ask to wait). `stopped` ends a wait.
pub fn take(
    path: &Path,
    wait: bool,
    interactive: bool,
    quiet: bool,
    stopped: &dyn Fn() -> bool,
    bound: Duration,
) -> Result<MeasureLock, TakeError> {
    let deadline = (!wait).then(|| Instant::now() + bound);
    let mut timed_out = false;
    let r = if wait || interactive {
        let mut told: Option<Option<u32>> = None;
        MeasureLock::acquire_wait(path, Duration::from_millis(500), |pid| {
            if told != Some(pid) && (!quiet || !wait) {
                let who = pid.map(|p| format!(" (PID {p})")).unwrap_or_default();
                match deadline {
                    Some(_) => eprintln!(
                        "numaprobe: another numaprobe measurement{who} is running; waiting up to {} min for it to finish (Ctrl-C to stop; --wait waits without a limit)...",
                        minutes(bound)
                    ),
                    None => eprintln!("numaprobe: waiting for the measuring numaprobe{who} to finish..."),
                }
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
    /// machine. From a terminal a busy lock is waited for, within a bound;
    /// a script still fails at once.
    #[test]
    fn from_a_terminal_a_busy_lock_is_waited_for_within_a_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let held = MeasureLock::acquire_at(&path).unwrap();
        let go_on = || false;

        let e = take(&path, false, false, true, &go_on, Duration::from_secs(3600)).unwrap_err();
        assert!(e.to_string().contains("another numaprobe measurement is running"), "{e}");
        assert!(e.to_string().contains("use --wait"), "{e}");

        let e = take(&path, false, true, true, &go_on, Duration::from_millis(600)).unwrap_err();
        assert!(e.to_string().contains("gave up waiting"), "{e}");
        assert!(e.to_string().contains("--wait to wait without a limit"), "{e}");

        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let got = take(&path, false, true, true, &go_on, Duration::from_secs(3600));
        release.join().unwrap();
        assert_eq!(got.unwrap().path(), path);
    }

    /// A wait the caller stopped is told apart from a timed-out one.
    #[test]
    fn a_stopped_wait_is_not_a_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.lock");
        let _held = MeasureLock::acquire_at(&path).unwrap();
        let stop = || true;
        let e = take(&path, true, false, true, &stop, Duration::from_secs(3600)).unwrap_err();
        assert!(matches!(e, TakeError::Stopped(LockError::GaveUp { .. })), "{e:?}");
    }
}
