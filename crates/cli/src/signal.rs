//! Ctrl-C, SIGTERM and SIGHUP: the first asks measurements to stop at the
//! next safe point (they keep what they measured, the run is saved
//! interrupted and its report written); a second exits at once. The
//! command then exits 128 + the signal's number (130, 143, 129), as shells
//! and service managers expect.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use events::StopFlag;

static FLAG: OnceLock<StopFlag> = OnceLock::new();
static PRESSES: AtomicUsize = AtomicUsize::new(0);
/// The first stopping signal received (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Set by a command that must never exit from the handler (`study`
/// restores settings first): further signals are only counted.
static PATIENT: AtomicBool = AtomicBool::new(false);

/// Notes `sig` and raises the stop flag; on a second stopping signal the
/// process exits at once with 128 + its number.
fn arrived(sig: i32) {
    let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
    if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 && !PATIENT.load(Ordering::SeqCst) {
        // SAFETY: _exit is async-signal-safe and ends the process.
        unsafe { libc::_exit(128 + sig) };
    }
    if let Some(f) = FLAG.get() {
        f.stop();
    }
}

/// The handler of SIGTERM and SIGHUP. Only async-signal-safe work: atomics
/// (the flag is an atomic behind an initialised `OnceLock`) and write(2).
extern "C" fn on_terminate(sig: libc::c_int) {
    arrived(sig);
    let msg: &[u8] = if sig == libc::SIGHUP {
        b"\nnumaprobe: SIGHUP: stopping after the current measurement\n"
    } else {
        b"\nnumaprobe: SIGTERM: stopping after the current measurement\n"
    };
    // SAFETY: write(2) on stderr with a valid buffer and length.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// Installs the handlers once and returns the shared stop flag.
pub fn stop_flag() -> StopFlag {
    FLAG.get_or_init(|| {
        let flag = StopFlag::new();
        let _ = ctrlc::set_handler(move || {
            // ctrlc calls this on its own thread: printing is fine here.
            arrived(libc::SIGINT);
            eprintln!(
                "\nnumaprobe: stopping after the current measurement (Ctrl-C again to quit now)"
            );
        });
        for sig in [libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: a zeroed sigaction with a plain handler (no
            // SA_SIGINFO) is valid; the handler only does async-signal-safe
            // work; SA_RESTART keeps interrupted reads and waits going.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_terminate as extern "C" fn(libc::c_int) as usize;
                sa.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        // A signal between installing the handlers and this return found
        // no flag to raise.
        if SIGNAL.load(Ordering::SeqCst) != 0 {
            flag.stop();
        }
        flag
    })
    .clone()
}

/// [`stop_flag`] for a command that must finish its clean-up whatever
/// happens: a second Ctrl-C does not exit at once, it is counted
/// ([`presses`]) for the command to act on.
pub fn patient_stop_flag() -> StopFlag {
    PATIENT.store(true, Ordering::SeqCst);
    stop_flag()
}

/// How many stopping signals have arrived.
pub fn presses() -> usize {
    PRESSES.load(Ordering::SeqCst)
}

/// The first stopping signal's number (0: none yet).
pub fn first_signal() -> i32 {
    SIGNAL.load(Ordering::SeqCst)
}

/// What stopped the command, as messages and saved runs say it:
/// `Ctrl-C`, `SIGTERM` or `SIGHUP`.
pub fn cause() -> &'static str {
    match SIGNAL.load(Ordering::SeqCst) {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "Ctrl-C",
    }
}

/// The exit status after a stopping signal: 128 + its number.
pub fn exit_status() -> u8 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        sig => (128 + sig) as u8,
    }
}

/// The command was stopped by a signal after printing (and saving) what it
/// measured: exits 128 + the signal's number.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted by {}; what was measured before it is kept", cause())
    }
}

impl std::error::Error for Interrupted {}

/// The command was stopped by a signal while it waited for the measuring
/// lock (`--wait`), before it measured anything: exits 128 + the signal's
/// number like [`Interrupted`].
#[derive(Debug)]
pub struct StoppedWaiting;

impl std::fmt::Display for StoppedWaiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interrupted by {} while waiting for the measuring lock; nothing was measured",
            cause()
        )
    }
}

impl std::error::Error for StoppedWaiting {}

/// Whether `err` says the command was stopped by a signal (exit 128 + its
/// number) rather than failed.
pub fn is_interrupted(err: &anyhow::Error) -> bool {
    err.downcast_ref::<Interrupted>().is_some() || err.downcast_ref::<StoppedWaiting>().is_some()
}

/// Turns a command's success into [`Interrupted`] when a signal stopped it
/// part way, so every measuring command exits alike.
pub fn check_interrupted(result: anyhow::Result<()>) -> anyhow::Result<()> {
    match (result, FLAG.get()) {
        (Ok(()), Some(flag)) if flag.is_stopped() => Err(Interrupted.into()),
        (r, _) => r,
    }
}
