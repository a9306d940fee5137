//! The grammar of numeric flag values, shared by every command of
//! numaprobe (documented once in its docs/cli.md): durations, counts and
//! decimal figures with stated bounds ([`bounds`]), each refused with the
//! accepted range, so no later conversion (to a [`Duration`], a count of
//! samples) can overflow or run for ever. The errors are the messages a
//! flag prints after its name. Sizes, nodes, CPUs and sets are placement's
//! grammar ([`placement`]).

pub mod closed;
pub mod placement;

use std::time::Duration;

/// The unit a duration flag is written in (its name says which:
/// `--budget` seconds, `--sample-ms` milliseconds, `--delays` ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Millis,
    Nanos,
}

impl TimeUnit {
    fn name(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "seconds",
            TimeUnit::Millis => "ms",
            TimeUnit::Nanos => "ns",
        }
    }

    fn per_second(self) -> f64 {
        match self {
            TimeUnit::Seconds => 1.0,
            TimeUnit::Millis => 1e3,
            TimeUnit::Nanos => 1e9,
        }
    }
}

/// The one parser of durations: a decimal number (fractions allowed) in
/// `unit`, from `min` to `max` inclusive. NaN, infinities, negative numbers
/// and anything outside the bounds are refused with the accepted range, so
/// no later conversion to a [`Duration`] can overflow.
pub fn duration(s: &str, unit: TimeUnit, min: f64, max: f64) -> Result<Duration, String> {
    let range = || format!("expected {} to {} {}", fmt_num(min), fmt_num(max), unit.name());
    let v =
        plain_number(s).ok_or_else(|| format!("'{}' is not a number; {}", s.trim(), range()))?;
    if !(min..=max).contains(&v) {
        return Err(format!("'{}' is out of range; {}", s.trim(), range()));
    }
    Ok(Duration::from_secs_f64(v / unit.per_second()))
}

/// The one parser of counts: digits only, from `min` to `max` inclusive
/// (a sign, a fraction, an exponent or a number past `max` are refused with
/// the accepted range).
pub fn count(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let t = s.trim();
    let range = || format!("expected a whole number from {min} to {max}");
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{t}' is not a whole number; {}", range()));
    }
    match t.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{t}' is out of range; {}", range())),
    }
}

/// The one parser of other decimal figures (percentages, fractions,
/// GB/s): finite, within `lo`..`hi`, each end excluded when `open` says so.
fn figure(s: &str, lo: f64, hi: f64, open: (bool, bool), what: &str) -> Result<f64, String> {
    let range = || {
        let (lo, hi) = (fmt_num(lo), fmt_num(hi));
        match open {
            (false, false) => format!("expected {what} from {lo} to {hi}"),
            _ => {
                let above = if open.0 { "above" } else { "at least" };
                let below = if open.1 { "below" } else { "at most" };
                format!("expected {what} {above} {lo} and {below} {hi}")
            }
        }
    };
    let v =
        plain_number(s).ok_or_else(|| format!("'{}' is not a number; {}", s.trim(), range()))?;
    let low_ok = if open.0 { v > lo } else { v >= lo };
    let high_ok = if open.1 { v < hi } else { v <= hi };
    if !(low_ok && high_ok) {
        return Err(format!("'{}' is out of range; {}", s.trim(), range()));
    }
    Ok(v)
}

/// A finite decimal number as people write it (`2`, `0.5`, `1e-3`), not
/// `nan`, `inf` or `infinity`, which Rust's parser takes.
fn plain_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() || t.bytes().any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E') {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A bound as written in messages: `0.001`, `3600`, `1000000`.
fn fmt_num(v: f64) -> String {
    format!("{v}")
}

/// Bounds of every numeric flag, in one place (docs/cli.md lists them).
pub mod bounds {
    /// `bw --budget`, `advise interleave --budget`: seconds per result.
    pub const BUDGET_S: (f64, f64) = (0.001, 3600.0);
    /// `exec --timeout`: seconds (a week at most).
    pub const TIMEOUT_S: (f64, f64) = (0.001, 604_800.0);
    /// `lat --sample-ms`: one sample; Ctrl-C waits for at most one.
    pub const SAMPLE_MS: (f64, f64) = (1.0, 10_000.0);
    /// `exec --touch-hold-ms` (hidden).
    pub const HOLD_MS: (f64, f64) = (0.0, 600_000.0);
    /// `lat --delays`: the wait after each cache line, ns.
    pub const DELAY_NS: (f64, f64) = (0.0, 10_000_000.0);
    /// Threads (`bw --threads`, `scan --threads`) and CPUs (`lat --max-cpus`).
    pub const THREADS: (u64, u64) = (1, 65_536);
    /// `bw --min-reps`, `--max-reps`.
    pub const REPS: (u64, u64) = (1, 1_000_000);
    /// `scan --reps`.
    pub const SCAN_REPS: (u64, u64) = (1, 1000);
    /// `lat --samples`.
    pub const SAMPLES: (u64, u64) = (1, 10_000);
    /// `lat --tlb-pages` (1 GiB of 4 KiB pages).
    pub const TLB_PAGES: (u64, u64) = (1, 262_144);
    /// `lat --stride` (also a power of two).
    pub const STRIDE: (u64, u64) = (8, 4096);
    /// `lat --pairs-per-relation`.
    pub const PAIRS: (u64, u64) = (1, 1024);
    /// `place --samples`: pages whose node is asked.
    pub const PAGE_SAMPLES: (u64, u64) = (1, 16_777_216);
    /// `exec --repeat`.
    pub const EXEC_REPEAT: (u64, u64) = (1, 10_000);
    /// `exec --warmup`.
    pub const WARMUP: (u64, u64) = (0, 10_000);
    /// `run --repeat`.
    pub const RUN_REPEAT: (u64, u64) = (1, 1000);
    /// `study --rounds`.
    pub const STUDY_ROUNDS: (u64, u64) = (1, 1000);
    /// `advise interleave --max-weight` (the kernel's largest weight).
    pub const MAX_WEIGHT: (u64, u64) = (1, 255);
    /// `lat --seed`: any 64-bit number.
    pub const SEED: (u64, u64) = (0, u64::MAX);
    /// `fleet --max-age`: seconds (ten years at most).
    pub const MAX_AGE_S: (f64, f64) = (1.0, 3650.0 * 86_400.0);
}

fn secs(s: &str, (lo, hi): (f64, f64), unit: TimeUnit) -> Result<Duration, String> {
    duration(s, unit, lo, hi)
}

fn usize_count(s: &str, (lo, hi): (u64, u64)) -> Result<usize, String> {
    count(s, lo, hi).map(|n| n as usize)
}

fn u32_count(s: &str, (lo, hi): (u64, u64)) -> Result<u32, String> {
    count(s, lo, hi).map(|n| n as u32)
}

/// `--budget SECONDS`.
pub fn budget(s: &str) -> Result<Duration, String> {
    secs(s, bounds::BUDGET_S, TimeUnit::Seconds)
}
/// `exec --timeout SECONDS`.
pub fn timeout(s: &str) -> Result<Duration, String> {
    secs(s, bounds::TIMEOUT_S, TimeUnit::Seconds)
}
/// `lat --sample-ms MS`.
pub fn sample_ms(s: &str) -> Result<Duration, String> {
    secs(s, bounds::SAMPLE_MS, TimeUnit::Millis)
}
/// `exec --touch-hold-ms MS`.
pub fn hold_ms(s: &str) -> Result<Duration, String> {
    secs(s, bounds::HOLD_MS, TimeUnit::Millis)
}
/// One of `lat --delays NS`, in ns.
pub fn delay_ns(s: &str) -> Result<u64, String> {
    secs(s, bounds::DELAY_NS, TimeUnit::Nanos).map(|d| d.as_nanos() as u64)
}
/// `--threads N`, `lat --max-cpus N`.
pub fn threads(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::THREADS)
}
/// `bw --min-reps/--max-reps N`.
pub fn reps(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::REPS)
}
/// `scan --reps N`.
pub fn scan_reps(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::SCAN_REPS)
}
/// `lat --samples N`.
pub fn samples(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::SAMPLES)
}
/// `lat --tlb-pages N`.
pub fn tlb_pages(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::TLB_PAGES)
}
/// `lat --stride BYTES`: a power of two within bounds.
pub fn stride(s: &str) -> Result<usize, String> {
    let n = usize_count(s, bounds::STRIDE)?;
    if !n.is_power_of_two() {
        return Err(format!("{n} is not a power of two (8, 16, ..., 4096)"));
    }
    Ok(n)
}
/// `lat --pairs-per-relation N`.
pub fn pairs_per_relation(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::PAIRS)
}
/// `place --samples N`.
pub fn page_samples(s: &str) -> Result<usize, String> {
    usize_count(s, bounds::PAGE_SAMPLES)
}
/// `exec --repeat N`.
pub fn exec_repeat(s: &str) -> Result<u32, String> {
    u32_count(s, bounds::EXEC_REPEAT)
}
/// `exec --warmup N`.
pub fn warmup(s: &str) -> Result<u32, String> {
    u32_count(s, bounds::WARMUP)
}
/// `run --repeat N`.
pub fn run_repeat(s: &str) -> Result<u32, String> {
    u32_count(s, bounds::RUN_REPEAT)
}
/// `study --rounds N`.
pub fn study_rounds(s: &str) -> Result<u32, String> {
    u32_count(s, bounds::STUDY_ROUNDS)
}
/// `advise interleave --max-weight N`.
pub fn max_weight(s: &str) -> Result<u32, String> {
    u32_count(s, bounds::MAX_WEIGHT)
}
/// `lat --seed N`.
pub fn seed(s: &str) -> Result<u64, String> {
    count(s, bounds::SEED.0, bounds::SEED.1)
}
/// `fleet --max-age`: a number and its unit, `s`, `m`, `h` or `d` (`7d`,
/// `36h`, `90m`; the unit is required: an age in seconds is rarely meant).
pub fn max_age(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (lo, hi) = bounds::MAX_AGE_S;
    let range =
        || format!("expected a number and a unit s, m, h or d, from 1s to {}d", hi / 86_400.0);
    let (num, per) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        Some((i, 'd')) => (&t[..i], 86_400.0),
        Some((_, c)) if c.is_ascii_alphabetic() => {
            return Err(format!("'{t}' has an unknown unit '{c}'; {}", range()))
        }
        _ => return Err(format!("'{t}' has no unit; {}", range())),
    };
    let v = plain_number(num).ok_or_else(|| format!("'{t}' is not a duration; {}", range()))?;
    let secs = v * per;
    if !(lo..=hi).contains(&secs) {
        return Err(format!("'{t}' is out of range; {}", range()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A percentage from 0 to 100 (`bw --target-spread`).
pub fn percent(s: &str) -> Result<f64, String> {
    figure(s, 0.0, 100.0, (false, false), "a percentage")
}
/// A percentage strictly between 0 and 100 (`compare --margin`,
/// `fleet --threshold`).
pub fn open_percent(s: &str) -> Result<f64, String> {
    figure(s, 0.0, 100.0, (true, true), "a percentage")
}
/// A fraction from 0 to 1 (`place --threshold`, `--spread-tolerance`).
pub fn fraction(s: &str) -> Result<f64, String> {
    figure(s, 0.0, 1.0, (false, false), "a fraction")
}
/// A two-sided confidence (`compare --confidence`).
pub fn confidence(s: &str) -> Result<f64, String> {
    figure(s, 0.5, 0.999, (false, false), "a probability")
}
/// `bw --peak-gbs`: a positive bandwidth, at most 1 PB/s.
pub fn peak_gbs(s: &str) -> Result<f64, String> {
    figure(s, 0.0, 1e6, (true, false), "GB/s")
}

/// A GPU's driver ordinal (`gpu --gpus 0,1`): 0 to 4095.
pub fn gpu(s: &str) -> Result<u32, String> {
    count(s, 0, 4095).map(|n| n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_refused_with_their_range() {
        assert_eq!(count("7", 1, 10).unwrap(), 7);
        assert_eq!(
            count("11", 1, 10).unwrap_err(),
            "'11' is out of range; expected a whole number from 1 to 10"
        );
        assert_eq!(
            count("+1", 1, 10).unwrap_err(),
            "'+1' is not a whole number; expected a whole number from 1 to 10"
        );
        assert_eq!(budget("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(
            budget("nan").unwrap_err(),
            "'nan' is not a number; expected 0.001 to 3600 seconds"
        );
        assert_eq!(
            open_percent("100").unwrap_err(),
            "'100' is out of range; expected a percentage above 0 and below 100"
        );
        assert_eq!(max_age("36h").unwrap(), Duration::from_secs(36 * 3600));
        assert_eq!(
            max_age("7").unwrap_err(),
            "'7' has no unit; expected a number and a unit s, m, h or d, from 1s to 3650d"
        );
        assert_eq!(stride("48").unwrap_err(), "48 is not a power of two (8, 16, ..., 4096)");
    }
}
