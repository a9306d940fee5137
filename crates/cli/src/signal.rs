//! Ctrl-C: the first press asks measurements to stop at the next safe point
//! (they keep what they measured); a second press exits at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use bench::events::StopFlag;

static FLAG: OnceLock<StopFlag> = OnceLock::new();
static PRESSES: AtomicUsize = AtomicUsize::new(0);

/// Installs the handler once and returns the shared stop flag.
pub fn stop_flag() -> StopFlag {
    FLAG.get_or_init(|| {
        let flag = StopFlag::new();
        let f = flag.clone();
        let _ = ctrlc::set_handler(move || {
            if PRESSES.fetch_add(1, Ordering::SeqCst) >= 1 {
                std::process::exit(130);
            }
            eprintln!(
                "\nnumaprobe: stopping after the current measurement (Ctrl-C again to quit now)"
            );
            f.stop();
        });
        flag
    })
    .clone()
}

/// The command was stopped by Ctrl-C after printing (and saving) what it
/// measured: exits with status 130, as shells expect after SIGINT.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted by Ctrl-C; what was measured before it is kept")
    }
}

impl std::error::Error for Interrupted {}

/// Turns a command's success into [`Interrupted`] when Ctrl-C stopped it
/// part way, so every measuring command exits 130 alike.
pub fn check_interrupted(result: anyhow::Result<()>) -> anyhow::Result<()> {
    match (result, FLAG.get()) {
        (Ok(()), Some(flag)) if flag.is_stopped() => Err(Interrupted.into()),
        (r, _) => r,
    }
}
