//! What numaprobe says when a command fails: a usage error (exit status 2)
//! or a failure (1), on one line.

/// A mistake in what the user asked (bad flag value, unknown node...):
/// exits with status 2 instead of 1.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// What numaprobe says after a panic: a bug, to be reported.
pub const BUG_REPORT: &str = "numaprobe panicked (see the message above): this is a bug in \
     numaprobe, not in what you asked; please report it with the command line and the output of \
     `numaprobe --version`";

/// The one classification of errors into usage errors (exit 2) and
/// failures (exit 1): a [`UsageError`] anywhere in the chain, or a library
/// error whose own `is_usage()` says the request was at fault (the
/// placement layer's [`place::PlaceError::is_usage`], reused by bw and lat).
/// The error keeps its whole source chain for printing.
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<UsageError>()
            || e.downcast_ref::<place::PlaceError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<bench::bw::BwError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<bench::lat::LatError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<exec::ExecError>().is_some_and(|e| e.is_usage())
    })
}

/// The error and its causes on one line, outermost first (anyhow's `{:#}`),
/// leaving out a cause whose text the message before it already holds:
/// library errors often say their source in their own message
/// (`/sys/x: Permission denied`) and also return it from `source()`.
/// A missing data directory is worded with the flag that names a database
/// (`console::store::no_data_dir`), the study lock's refusals with
/// `--lock` and `study --restore` (`console::study::refusal::study_lock`).
pub fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = match cause.downcast_ref::<store::StoreError>() {
            Some(store::StoreError::NoDataDir) => console::store::no_data_dir(),
            _ => match cause.downcast_ref::<vary::journal::StudyLockError>() {
                Some(e) => console::study::refusal::study_lock(e),
                None => cause.to_string(),
            },
        };
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Returns a usage error (exit status 2) from a command.
#[macro_export]
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::error::UsageError(format!($($arg)*))))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_classified_through_the_chain() {
        let place_usage = place::parse_size("0").unwrap_err();
        assert!(is_usage(&anyhow::Error::new(place_usage).context("--size")));
        let bw = bench::bw::BwError::Place(place::parse_size("x").unwrap_err());
        assert!(is_usage(&anyhow::Error::new(bw)));
        let lat = bench::lat::LatError::Panicked("the measuring thread".into());
        assert!(!is_usage(&anyhow::Error::new(lat)), "a panic is a bug, not a usage error");
        let io = std::io::Error::other("disk on fire");
        assert!(!is_usage(&anyhow::Error::new(io).context("writing")));
        let chained = anyhow::Error::new(UsageError("bad".into())).context("while planning");
        assert!(is_usage(&chained));
        assert_eq!(format!("{chained:#}"), "while planning: bad");
    }

    #[test]
    fn the_error_line_keeps_every_cause_once() {
        let io = std::io::Error::from_raw_os_error(libc::EACCES);
        let io_text = io.to_string();
        let topo = topo::TopoError::Io { path: "/sys/x".into(), source: io };
        let err = anyhow::Error::new(topo).context("reading the topology");
        assert_eq!(error_line(&err), format!("reading the topology: /sys/x: {io_text}"));
        // A cause the message does not repeat is kept.
        let err = anyhow::Error::new(std::io::Error::other("disk full")).context("writing x");
        assert_eq!(error_line(&err), "writing x: disk full");
    }
}
