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
