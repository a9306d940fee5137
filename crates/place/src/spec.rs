//! Node and CPU sets as users write them (numactl-like), and sizes.
//!
//! Grammar of a set spec (whitespace around it ignored):
//! * `0-3,8`, `0-7:2`: a cpulist (the kernel's syntax, strides allowed);
//! * `all`: every id in the universe (the allowed, eligible ids);
//! * `!LIST`: the universe except LIST (numactl's `!`);
//! * `+LIST`: positions in the universe, 0-based (numactl's relative `+`):
//!   with allowed nodes `2,5,7`, `+0-1` means `2,5`.
//!
//! Sizes: a number, fractions allowed, with an optional unit: `K`, `M`,
//! `G`, `T` or `KiB`... (powers of 1024), `KB`, `MB`, `GB`, `TB` (powers of
//! 1000), e.g. `64M`, `1.5G`, `2GB` (see docs/cli.md).

use topo::IdSet;

use crate::error::{PlaceError, Result};

/// A parsed set spec, not yet resolved against a universe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetSpec {
    All,
    List(IdSet),
    AllBut(IdSet),
    Relative(IdSet),
}

impl SetSpec {
    /// Parses a spec (see the module docs).
    pub fn parse(s: &str) -> Result<SetSpec> {
        let t = s.trim();
        let list = |body: &str| -> Result<IdSet> {
            let set =
                IdSet::parse_list(body).map_err(|e| PlaceError::bad_spec(s, e.to_string()))?;
            if set.is_empty() {
                return Err(PlaceError::bad_spec(s, "the set is empty"));
            }
            Ok(set)
        };
        if t.eq_ignore_ascii_case("all") {
            Ok(SetSpec::All)
        } else if let Some(rest) = t.strip_prefix('!') {
            Ok(SetSpec::AllBut(list(rest)?))
        } else if let Some(rest) = t.strip_prefix('+') {
            Ok(SetSpec::Relative(list(rest)?))
        } else if t.is_empty() {
            Err(PlaceError::bad_spec(s, "empty (expected e.g. 0-3,8, all, !2 or +0)"))
        } else {
            Ok(SetSpec::List(list(t)?))
        }
    }

    /// The ids the spec means within `universe` (`what` names them in
    /// errors: "node", "CPU"). A list naming ids outside the universe is
    /// refused naming them and the universe; an empty result is refused.
    pub fn resolve(&self, universe: &IdSet, what: &str) -> Result<IdSet> {
        let (spec, out) = match self {
            SetSpec::All => ("all".to_string(), universe.clone()),
            SetSpec::List(l) => {
                let bad = l.difference(universe);
                if !bad.is_empty() {
                    return Err(PlaceError::bad_spec(
                        &l.to_list(),
                        format!("{what}(s) {bad} not available (available: {universe})"),
                    ));
                }
                (l.to_list(), l.clone())
            }
            SetSpec::AllBut(l) => (format!("!{l}"), universe.difference(l)),
            SetSpec::Relative(l) => {
                let ids: Vec<u32> = universe.iter().collect();
                let mut out = IdSet::new();
                for i in l.iter() {
                    match ids.get(i as usize) {
                        Some(&id) => {
                            out.insert(id);
                        }
                        None => {
                            return Err(PlaceError::bad_spec(
                                &format!("+{l}"),
                                format!(
                                    "relative index {i} is out of range: only {} {what}(s) available ({universe})",
                                    ids.len()
                                ),
                            ))
                        }
                    }
                }
                (format!("+{l}"), out)
            }
        };
        if out.is_empty() {
            return Err(PlaceError::bad_spec(
                &spec,
                format!("selects no {what} (available: {universe})"),
            ));
        }
        Ok(out)
    }
}

impl std::fmt::Display for SetSpec {
    /// The spec as a user would write it (`all`, `0-3`, `!2`, `+0-1`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetSpec::All => f.write_str("all"),
            SetSpec::List(l) => write!(f, "{l}"),
            SetSpec::AllBut(l) => write!(f, "!{l}"),
            SetSpec::Relative(l) => write!(f, "+{l}"),
        }
    }
}

/// Parses and resolves a spec in one step.
pub fn resolve_set(spec: &str, universe: &IdSet, what: &str) -> Result<IdSet> {
    SetSpec::parse(spec)?.resolve(universe, what)
}

/// What a size may look like, for error messages.
pub const SIZE_GRAMMAR: &str = "a number (fractions allowed) with an optional unit: K, M, G, T \
     or KiB, MiB, GiB, TiB (powers of 1024), KB, MB, GB, TB (powers of 1000), B; e.g. 4096, \
     512M, 1.5G, 512MiB, 2GB";

/// The multiplier of a size unit (case does not matter): `K`/`KiB` =
/// 2^10, `KB` = 10^3, and so on up to T; no unit or `B` = bytes.
fn unit_bytes(unit: &str) -> Option<u64> {
    let u = unit.to_ascii_lowercase();
    Some(match u.as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Parses a size into bytes: `4096`, `64M`, `1.5G`, `512MiB` (binary
/// units: K, M, G, T with or without `iB`), `2GB` (decimal units: KB, MB,
/// GB, TB are powers of 1000, as in GB/s). Fractions are rounded to the
/// nearest byte. Zero, overflow and anything else are refused, naming the
/// value and what is accepted ([`SIZE_GRAMMAR`]).
pub fn parse_size(s: &str) -> Result<u64> {
    let bad = |why: &str| PlaceError::bad_spec(s, format!("{why}; a size is {SIZE_GRAMMAR}"));
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() || num == "." {
        return Err(bad("not a size"));
    }
    let unit = unit.trim();
    let Some(mult) = unit_bytes(unit) else {
        return Err(bad(&format!("unknown unit '{unit}'")));
    };
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if frac.contains('.') {
        return Err(bad("not a number"));
    }
    // Exact arithmetic: whole * mult + frac * mult / 10^digits, rounded.
    let too_large = || PlaceError::bad_spec(s, "too large (at most 16 EiB)");
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| too_large())? };
    let frac = &frac[..frac.len().min(24)];
    let mut bytes = whole.checked_mul(mult as u128).ok_or_else(too_large)?;
    if !frac.is_empty() {
        let digits: u128 = frac.parse().map_err(|_| bad("not a number"))?;
        let scale = 10u128.pow(frac.len() as u32);
        bytes += (digits * mult as u128 + scale / 2) / scale;
    }
    let bytes = u64::try_from(bytes).map_err(|_| too_large())?;
    if bytes == 0 {
        return Err(PlaceError::bad_spec(s, "a size must be at least 1 byte"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(s: &str) -> IdSet {
        IdSet::parse_list(s).unwrap()
    }

    #[test]
    fn specs_resolve_against_the_universe() {
        let u = ids("0-3,8");
        assert_eq!(resolve_set("all", &u, "node").unwrap(), u);
        assert_eq!(resolve_set(" 0-1,8 ", &u, "node").unwrap(), ids("0-1,8"));
        assert_eq!(resolve_set("!2", &u, "node").unwrap(), ids("0-1,3,8"));
        assert_eq!(resolve_set("!0-3", &u, "node").unwrap(), ids("8"));
        assert_eq!(resolve_set("+4", &u, "node").unwrap(), ids("8"));
        assert_eq!(resolve_set("+0,2", &u, "node").unwrap(), ids("0,2"));
    }

    #[test]
    fn specs_print_as_written() {
        for s in ["all", "0-3,8", "!2", "+0-1"] {
            assert_eq!(SetSpec::parse(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn bad_specs_fail_clearly() {
        let u = ids("0-3");
        let e = resolve_set("5", &u, "node").unwrap_err().to_string();
        assert!(e.contains("node(s) 5 not available") && e.contains("0-3"), "{e}");
        let e = resolve_set("!0-3", &u, "node").unwrap_err().to_string();
        assert!(e.contains("selects no node"), "{e}");
        let e = resolve_set("+4", &u, "CPU").unwrap_err().to_string();
        assert!(e.contains("relative index 4") && e.contains("4 CPU(s)"), "{e}");
        for bad in ["", "x", "3-1", "!", "+", "1,,a"] {
            assert!(resolve_set(bad, &u, "node").is_err(), "{bad}");
        }
        let e = resolve_set("3-1", &u, "node").unwrap_err().to_string();
        assert!(e.contains("'3-1'") && e.contains("backwards"), "{e}");
    }

    #[test]
    fn sizes_take_both_unit_families() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size(" 64M ").unwrap(), 64 << 20);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("64 mib").unwrap(), 64 << 20);
        assert_eq!(parse_size("2k").unwrap(), 2048);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("1t").unwrap(), 1 << 40);
        assert_eq!(parse_size("100B").unwrap(), 100);
        // Decimal units are powers of 1000, as GB/s is.
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("10TB").unwrap(), 10_000_000_000_000);
        assert_eq!(parse_size("512KB").unwrap(), 512_000);
        assert_eq!(parse_size("1mb").unwrap(), 1_000_000);
    }

    #[test]
    fn sizes_take_fractions_rounded_to_bytes() {
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("1.5M").unwrap(), 3 << 19);
        assert_eq!(parse_size("0.5KiB").unwrap(), 512);
        assert_eq!(parse_size(".5K").unwrap(), 512);
        assert_eq!(parse_size("1.").unwrap(), 1);
        assert_eq!(parse_size("2.5GB").unwrap(), 2_500_000_000);
        // 0.1 KiB = 102.4 bytes: rounded, exactly (no float drift).
        assert_eq!(parse_size("0.1K").unwrap(), 102);
        assert_eq!(parse_size("1.0000000000000000000001T").unwrap(), 1 << 40);
    }

    #[test]
    fn bad_sizes_name_the_value_and_the_grammar() {
        for bad in ["", " ", "M", ".", "12X", "1.2.3M", "-1K", "1e9", "abc", "1 G B", "1,5G"] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")) && e.contains("KiB"), "{bad}: {e}");
        }
        let e = parse_size("12Q").unwrap_err().to_string();
        assert!(e.contains("unknown unit 'Q'"), "{e}");
        for zero in ["0", "0.0001", "0K", "0.4"] {
            let e = parse_size(zero).unwrap_err().to_string();
            assert!(e.contains("at least 1 byte"), "{zero}: {e}");
        }
        for huge in ["99999999999999999999", "20000000T", "16777216T", "18446744073709551616"] {
            let e = parse_size(huge).unwrap_err().to_string();
            assert!(e.contains("too large"), "{huge}: {e}");
        }
        assert_eq!(parse_size("18446744073709551615").unwrap(), u64::MAX);
    }
}
