//! The `numaprobe` binary: parses the command line, runs one command, and
//! maps the outcome to an exit code (0 ok, 1 failure, 2 usage error).

mod cli;
mod cmd;
mod declare;
mod error;
mod grammar;
mod invocation;
mod output;
mod progress;
mod record;
mod signal;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            // clap prints help/version on stdout (exit 0) and errors on
            // stderr (exit 2), the errors with numaprobe's one prefix
            // (`cli::usage_error_text`).
            if !e.use_stderr() {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // `args_os`: an argument that is not UTF-8 is what clap refused
            // here, and `std::env::args` would panic on it.
            let args: Vec<String> =
                std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
            eprintln!("{}", cli::usage_error_text(&e, &args));
            return ExitCode::from(2);
        }
    };
    // A panic (in a measuring thread or here) is numaprobe's bug, not the
    // user's: the hook has printed it; say so and fail with status 1.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| cli::run(args)));
    let Ok(result) = outcome else {
        eprintln!("numaprobe: error: {}", error::BUG_REPORT);
        return ExitCode::from(1);
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            if signal::is_interrupted(&err) {
                eprintln!("numaprobe: {}", report::safe::one_line(&error::error_line(&err)));
                return ExitCode::from(signal::exit_status());
            }
            // One line, and no control character from a label or a file
            // name reaches the terminal.
            eprintln!("numaprobe: error: {}", report::safe::one_line(&error::error_line(&err)));
            ExitCode::from(if error::is_usage(&err) { 2 } else { 1 })
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
