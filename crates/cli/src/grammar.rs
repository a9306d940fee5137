//! The grammar of flag values, shared by every command (documented once in
//! docs/cli.md): sizes, durations, counts and fractions with stated bounds,
//! single nodes and CPUs, node and CPU sets. The closed sets are the
//! libraries' own enums, which derive clap's `ValueEnum` under their `clap`
//! feature: `results::pages::PageKind` (`--pages`), `kernels::Kernel`, `kernels::Isa`,
//! `bench::bw::StoreMode`, `audit::Profile`, `bench::suite::StepName`.

use std::time::Duration;

use place::SetSpec;

/// `--size` and friends: `4096`, `512M`, `1.5G`, `512MiB`, `2GB` (decimal
/// units are powers of 1000); see [`place::parse_size`].
pub fn size(s: &str) -> Result<u64, String> {
    place::parse_size(s).map_err(|e| e.to_string())
}

/// `--set KEY=VALUE`: a declared setting ([`audit::declared::parse_assignment`]).
pub fn assignment(s: &str) -> Result<(String, String), String> {
    audit::declared::parse_assignment(s).map_err(|e| e.to_string())
}

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

/// One id (a node or a CPU), with a clear message when given a list or a
/// set spec: these flags name exactly one.
fn one_id(s: &str, what: &str, plural: &str) -> Result<u32, String> {
    let t = s.trim();
    // Digits only: Rust would read `+0` as 0, which numactl's syntax means
    // as "the first allowed".
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t.parse::<u32>().map_err(|_| {
            format!("no such {what}: '{t}' is beyond every {what} number (at most {})", u32::MAX)
        });
    }
    // A minus sign before digits is a negative number, not numactl's range.
    if t.strip_prefix('-').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
        return Err(format!("'{t}' is not a {what} number: {what} numbers are 0 or more"));
    }
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || ",-:!+ ".contains(c))
        || t.eq_ignore_ascii_case("all")
    {
        return Err(format!(
            "this flag takes one {what} number (e.g. 0), not a list of {plural}; \
             '{t}' is a set"
        ));
    }
    Err(format!("expected one {what} number (e.g. 0)"))
}

/// A GPU's driver ordinal (`gpu --gpus 0,1`): 0 to 4095.
pub fn gpu(s: &str) -> Result<u32, String> {
    count(s, 0, 4095).map(|n| n as u32)
}

/// A single NUMA node id (`--mem-node 1`).
pub fn node(s: &str) -> Result<u32, String> {
    one_id(s, "node", "nodes")
}

/// A single CPU id (`--cpu 3`).
pub fn cpu(s: &str) -> Result<u32, String> {
    one_id(s, "CPU", "CPUs")
}

/// A node or CPU set in numactl's syntax (`0-3,8`, `all`, `!2`, `+0-1`),
/// checked now and resolved once the machine is known.
pub fn set(s: &str) -> Result<SetSpec, String> {
    SetSpec::parse(s).map_err(|e| {
        format!("{e}; a set is a list (0-3,8), all, !LIST (all but) or +LIST (relative)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Guards issue 37 cause 7: `--cpu-node 4294967296` said "is a set".
    #[test]
    fn a_number_beyond_u32_is_no_such_node_not_a_set() {
        for big in ["4294967296", "99999999999999999999999"] {
            let e = node(big).unwrap_err();
            assert!(e.starts_with("no such node"), "{e}");
            assert!(!e.contains("set"), "{e}");
            assert!(cpu(big).unwrap_err().starts_with("no such CPU"));
        }
        assert_eq!(node("4294967295").unwrap(), u32::MAX);
    }

    #[test]
    fn single_ids_refuse_lists_clearly() {
        assert_eq!(node(" 3 ").unwrap(), 3);
        assert_eq!(cpu("17").unwrap(), 17);
        for list in ["0,1", "0-3", "all", "!2", "+0"] {
            let e = node(list).unwrap_err();
            assert!(e.contains("one node number") && e.contains("not a list"), "{list}: {e}");
        }
        let e = cpu("x").unwrap_err();
        assert_eq!(e, "expected one CPU number (e.g. 0)");
        assert_eq!(
            node("-1").unwrap_err(),
            "'-1' is not a node number: node numbers are 0 or more"
        );
        assert_eq!(cpu("-12").unwrap_err(), "'-12' is not a CPU number: CPU numbers are 0 or more");
    }

    #[test]
    fn sets_take_numactl_syntax() {
        for s in ["0-3,8", "all", "!2", "+0-1"] {
            assert_eq!(set(s).unwrap().to_string(), s);
        }
        let e = set("1-").unwrap_err();
        assert!(e.contains("'1-'") && e.contains("!LIST"), "{e}");
    }

    #[test]
    fn sizes_are_the_placement_layers() {
        assert_eq!(size("1.5G").unwrap(), 3 << 29);
        assert_eq!(size("2GB").unwrap(), 2_000_000_000);
        assert!(size("0").unwrap_err().contains("at least 1 byte"));
    }

    /// Every name a closed set accepts is one its library parses into the
    /// same value, so the flag and the library cannot drift.
    #[test]
    fn closed_sets_agree_with_their_libraries() {
        for k in kernels::Kernel::value_variants() {
            for n in k.to_possible_value().unwrap().get_name_and_aliases() {
                assert_eq!(kernels::Kernel::parse(n), Some(*k), "{n}");
            }
        }
        for i in kernels::Isa::value_variants() {
            let n = i.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(kernels::Isa::parse(&n), Some(*i), "{n}");
            assert_eq!(n, i.name());
        }
        for s in bench::bw::StoreMode::value_variants() {
            for n in s.to_possible_value().unwrap().get_name_and_aliases() {
                assert_eq!(bench::bw::StoreMode::parse(n), Some(*s), "{n}");
            }
        }
        for p in audit::Profile::value_variants() {
            let n = p.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(n.parse::<audit::Profile>().unwrap(), *p, "{n}");
        }
        for s in bench::suite::StepName::value_variants() {
            assert_eq!(s.to_possible_value().unwrap().get_name(), s.as_str());
        }
    }

    /// `--pages` means the same in every command: `default` is the
    /// kernel's choice, `4k` refuses THP (bw, lat, place and scan alike).
    #[test]
    fn pages_mean_the_same_everywhere() {
        let p = |s: &str| results::pages::PageKind::from_str(s, true).unwrap();
        assert_eq!(p("default"), results::pages::PageKind::Base);
        for s in ["4k", "nothp", "no-thp", "small"] {
            assert_eq!(p(s), results::pages::PageKind::NoThp, "{s}");
        }
        for (s, k) in [
            ("thp", results::pages::PageKind::Thp),
            ("2m", results::pages::PageKind::Huge2M),
            ("1g", results::pages::PageKind::Huge1G),
        ] {
            assert_eq!(p(s), k);
        }
    }

    /// Every numeric flag of every command: where it is, values at its
    /// bounds (accepted) and just past them (refused).
    struct Flag {
        cmd: &'static [&'static str],
        flag: &'static str,
        ok: &'static [&'static str],
        bad: &'static [&'static str],
        /// What must follow (exec's command).
        tail: &'static [&'static str],
    }

    const fn f(
        cmd: &'static [&'static str],
        flag: &'static str,
        ok: &'static [&'static str],
        bad: &'static [&'static str],
    ) -> Flag {
        Flag { cmd, flag, ok, bad, tail: &[] }
    }

    const NODE_OK: &[&str] = &["0", "4294967295"];
    const NODE_BAD: &[&str] = &["4294967296", "1.5"];
    const SIZE_OK: &[&str] = &["1", "18446744073709551615"];
    const SIZE_BAD: &[&str] = &["0", "18446744073709551616", "17E"];
    const THREADS_OK: &[&str] = &["1", "65536"];
    const THREADS_BAD: &[&str] = &["0", "65537"];
    const BUDGET_OK: &[&str] = &["0.001", "3600", "2"];
    const BUDGET_BAD: &[&str] = &["0", "0.0009", "3600.5"];
    const PCT_OPEN_OK: &[&str] = &["0.001", "99.9"];
    const PCT_OPEN_BAD: &[&str] = &["0", "100"];
    const FRACTION_OK: &[&str] = &["0", "1", "0.5"];
    const FRACTION_BAD: &[&str] = &["1.01"];

    const FLAGS: &[Flag] = &[
        f(&["bw"], "--cpu-node", NODE_OK, NODE_BAD),
        f(&["bw"], "--mem-node", NODE_OK, NODE_BAD),
        f(&["bw"], "--threads", THREADS_OK, THREADS_BAD),
        f(&["bw"], "--size", SIZE_OK, SIZE_BAD),
        f(&["bw"], "--budget", BUDGET_OK, BUDGET_BAD),
        f(&["bw"], "--min-reps", &["1", "1000000"], &["0", "1000001"]),
        f(&["bw"], "--max-reps", &["1", "1000000"], &["0", "1000001"]),
        f(&["bw"], "--target-spread", &["0", "100"], &["100.1"]),
        f(&["bw"], "--peak-gbs", &["0.1", "1000000"], &["0", "1000001"]),
        f(&["run"], "--peak-gbs", &["0.1", "1000000"], &["0", "1000001"]),
        f(&["lat"], "--size", SIZE_OK, SIZE_BAD),
        f(&["lat"], "--cpu", NODE_OK, NODE_BAD),
        f(&["lat"], "--cpu-node", NODE_OK, NODE_BAD),
        f(&["lat"], "--mem-node", NODE_OK, NODE_BAD),
        f(&["lat"], "--stride", &["8", "4096", "64"], &["4", "8192", "48", "0"]),
        f(&["lat"], "--tlb-pages", &["1", "262144"], &["0", "262145"]),
        f(&["lat"], "--samples", &["1", "10000"], &["0", "10001", "1000000000"]),
        f(&["lat"], "--sample-ms", &["1", "10000", "2.5"], &["0", "0.5", "10001", "99999999999"]),
        f(&["lat"], "--seed", &["0", "18446744073709551615"], &["18446744073709551616"]),
        f(&["lat"], "--max-cpus", THREADS_OK, THREADS_BAD),
        f(&["lat"], "--delays", &["0", "10000000", "0,50,20000"], &["10000001", "0,1e308"]),
        f(&["lat"], "--pairs-per-relation", &["1", "1024"], &["0", "1025"]),
        f(&["place"], "--cpu", NODE_OK, NODE_BAD),
        f(&["place"], "--cpu-node", NODE_OK, NODE_BAD),
        f(&["place"], "--size", SIZE_OK, SIZE_BAD),
        f(&["place"], "--threshold", FRACTION_OK, FRACTION_BAD),
        f(&["place"], "--spread-tolerance", FRACTION_OK, FRACTION_BAD),
        f(&["place"], "--samples", &["1", "16777216"], &["0", "16777217"]),
        Flag {
            tail: &["--", "true"],
            ..f(&["exec"], "--repeat", &["1", "10000"], &["0", "10001"])
        },
        Flag { tail: &["--", "true"], ..f(&["exec"], "--warmup", &["0", "10000"], &["10001"]) },
        Flag {
            tail: &["--", "true"],
            ..f(&["exec"], "--timeout", &["0.001", "604800"], &["0", "604801", "1e20"])
        },
        f(&["exec"], "--touch", SIZE_OK, SIZE_BAD),
        Flag {
            tail: &["--", "true"],
            ..f(&["exec"], "--touch-hold-ms", &["0", "600000"], &["600001"])
        },
        f(&["run"], "--repeat", &["1", "1000"], &["0", "1001"]),
        f(
            &["study", "--vary", "thp_enabled=never,always"],
            "--rounds",
            &["1", "1000"],
            &["0", "1001"],
        ),
        f(&["advise", "interleave"], "--cpu-node", NODE_OK, NODE_BAD),
        f(&["advise", "interleave"], "--max-weight", &["1", "255"], &["0", "256"]),
        f(&["advise", "interleave"], "--budget", BUDGET_OK, BUDGET_BAD),
        f(&["advise", "interleave"], "--size", SIZE_OK, SIZE_BAD),
        f(&["scan"], "--mem-node", NODE_OK, NODE_BAD),
        f(&["scan", "--mem-node", "0"], "--chunk", SIZE_OK, SIZE_BAD),
        f(&["scan", "--mem-node", "0"], "--size", SIZE_OK, SIZE_BAD),
        f(&["scan", "--mem-node", "0"], "--cpu-node", NODE_OK, NODE_BAD),
        f(&["scan", "--mem-node", "0"], "--threads", THREADS_OK, THREADS_BAD),
        f(&["scan", "--mem-node", "0"], "--reps", &["1", "1000"], &["0", "1001"]),
        f(&["gpu"], "--gpus", &["0", "4095", "0,1"], &["4096", "1.5", "-1"]),
        f(&["gpu"], "--nodes", NODE_OK, NODE_BAD),
        f(&["gpu"], "--sizes", SIZE_OK, SIZE_BAD),
        f(&["gpu"], "--reps", &["1", "1000"], &["0", "1001"]),
        f(&["compare", "1", "2"], "--margin", PCT_OPEN_OK, PCT_OPEN_BAD),
        f(&["compare", "1", "2"], "--confidence", &["0.5", "0.999"], &["0.49", "1"]),
        f(&["fleet"], "--threshold", PCT_OPEN_OK, PCT_OPEN_BAD),
        f(
            &["fleet"],
            "--max-age",
            &["1s", "7d", "36h", "90m", "0.5d", "3650d"],
            &["0.5s", "3651d", "7", "7w", "d"],
        ),
    ];

    /// What every numeric flag is also fed, and must refuse.
    const EXTREMES: &[&str] = &[
        "nan",
        "NaN",
        "inf",
        "-inf",
        "infinity",
        "-1",
        "1e308",
        "1e20",
        "-0.5",
        "99999999999999999999",
        "",
        "x",
        "0x10",
    ];

    fn parse(fl: &Flag, value: &str) -> Result<crate::cli::Cli, clap::Error> {
        use clap::Parser;
        let arg = format!("{}={value}", fl.flag);
        let mut argv = vec!["numaprobe"];
        argv.extend(fl.cmd);
        argv.push(&arg);
        argv.extend(fl.tail);
        crate::cli::Cli::try_parse_from(argv)
    }

    /// Every numeric flag has bounds and refuses the extremes, each with a
    /// message naming the flag: `bw --budget 1e20` and `exec --timeout
    /// 1e308` would overflow a Duration, `lat --samples 1000000000` and
    /// `--sample-ms 99999999999` would run for ever.
    #[test]
    fn every_numeric_flag_takes_its_bounds_and_refuses_the_extremes() {
        for fl in FLAGS {
            for v in fl.ok {
                if let Err(e) = parse(fl, v) {
                    panic!("{:?} {}={v} refused: {e}", fl.cmd, fl.flag);
                }
            }
            for v in fl.bad.iter().chain(EXTREMES) {
                let Err(e) = parse(fl, v) else {
                    panic!("{:?} {}={v} was accepted", fl.cmd, fl.flag);
                };
                assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{:?} {v}", fl.cmd);
                let text = e.render().to_string();
                let first = text.lines().next().unwrap_or_default();
                assert!(first.contains(fl.flag), "{:?} {}={v}: {text}", fl.cmd, fl.flag);
            }
        }
    }

    /// The table above holds every numeric flag the CLI has: a new one
    /// without bounds fails here.
    #[test]
    fn the_table_covers_every_numeric_flag() {
        use clap::builder::ValueParser;
        use clap::CommandFactory;
        let numeric = [
            clap::value_parser!(u64).into(),
            clap::value_parser!(u32).into(),
            clap::value_parser!(usize).into(),
            clap::value_parser!(i64).into(),
            clap::value_parser!(f64).into(),
            ValueParser::new(budget),
            ValueParser::new(crate::cmd::scan::total),
        ]
        .map(|p: ValueParser| p.type_id());
        fn walk(c: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
            for a in c.get_arguments() {
                if let Some(long) = a.get_long() {
                    out.push((path.clone(), format!("--{long}")));
                }
            }
            for s in c.get_subcommands() {
                let mut p = path.clone();
                p.push(s.get_name().to_string());
                walk(s, p, out);
            }
        }
        let cli = crate::cli::Cli::command();
        let mut args = Vec::new();
        walk(&cli, Vec::new(), &mut args);
        let mut found = 0;
        for (path, long) in args {
            let mut c = &cli;
            for p in &path {
                c = c.find_subcommand(p).unwrap();
            }
            let a = c.get_arguments().find(|a| a.get_long() == Some(&long[2..])).unwrap();
            if !numeric.contains(&a.get_value_parser().type_id()) {
                continue;
            }
            found += 1;
            let listed = FLAGS.iter().any(|f| {
                f.flag == long
                    && f.cmd.starts_with(&path.iter().map(String::as_str).collect::<Vec<_>>())
            });
            assert!(
                listed,
                "numaprobe {} {long}: a numeric flag missing from FLAGS",
                path.join(" ")
            );
        }
        assert_eq!(found, FLAGS.len(), "FLAGS lists a flag the CLI does not have");
    }
}
