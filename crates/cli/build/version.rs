//! What `--version` says after the package version: the commit and its
//! date (`0.1.0 (a1b2c3d4e5f6 2026-11-25)`). Shared by `build.rs` and the
//! tests (`tests/version_cli.rs` includes this file), so the parsing is
//! tested without a build.
//!
//! The date is the commit's (committer time, UTC), never the clock's: two
//! builds of one commit print the same text, so the binary is reproducible.

/// The commit a build comes from: its hash and committer time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The full hash (40 hex digits, or 64 for SHA-256 repositories).
    pub hash: String,
    /// Committer time, seconds since the Unix epoch.
    pub time: i64,
}

/// How many hex digits of the hash `--version` shows.
pub const SHORT_HASH: usize = 12;

/// The commit recorded in `build/archive-commit` by `git archive`
/// (`export-subst` in `.gitattributes` replaces its `$Format:...$` line with
/// `HASH UNIX-TIME`). `None` for the unsubstituted file of a checkout, or
/// anything else that is not one hex hash and one integer.
pub fn parse_archive_commit(text: &str) -> Option<Commit> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let mut words = line.split_whitespace();
    let (hash, time) = (words.next()?, words.next()?);
    if words.next().is_some() || !is_hash(hash) {
        return None;
    }
    Some(Commit { hash: hash.to_ascii_lowercase(), time: time.parse().ok()? })
}

/// Whether `s` is a full git object name (SHA-1 or SHA-256).
pub fn is_hash(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The UTC calendar date (`YYYY-MM-DD`) of a Unix time, for any time from
/// year 0 to 9999 (Howard Hinnant's days-to-civil algorithm).
pub fn utc_date(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // day of era, 0..=146096
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365; // year of era
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of year, March-based
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The text after the package version: ` (HASH12 DATE)` from a commit,
/// ` (DATE)` from `SOURCE_DATE_EPOCH` alone, or nothing.
pub fn suffix(commit: Option<&Commit>, source_date_epoch: Option<i64>) -> String {
    match (commit, source_date_epoch) {
        (Some(c), _) => {
            format!(" ({} {})", &c.hash[..SHORT_HASH.min(c.hash.len())], utc_date(c.time))
        }
        (None, Some(t)) => format!(" ({})", utc_date(t)),
        (None, None) => String::new(),
    }
}
