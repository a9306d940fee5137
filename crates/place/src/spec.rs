//! Node and CPU sets as users write them (numactl-like), and sizes.
//!
//! Grammar of a set spec (whitespace around it ignored):
//! * `0-3,8`, `0-7:2`: a cpulist (the kernel's syntax, strides allowed);
//! * `all`: every id in the universe (the allowed, eligible ids);
//! * `!LIST`: the universe except LIST (numactl's `!`);
//! * `+LIST`: positions in the universe, 0-based (numactl's relative `+`):
//!   with allowed nodes `2,5,7`, `+0-1` means `2,5`.
//!
//! Sizes: a number with an optional binary suffix `K`, `M`, `G`, `T`
//! (also `KiB`, `KB`, `k`...; all mean powers of 1024), e.g. `64M`.

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

/// Parses and resolves a spec in one step.
pub fn resolve_set(spec: &str, universe: &IdSet, what: &str) -> Result<IdSet> {
    SetSpec::parse(spec)?.resolve(universe, what)
}

/// Splits a size into its number and the power of two of its unit
/// (`64M` -> ("64", 20)); units are binary: K, M, G, T, with or without
/// `B`/`iB`.
fn size_parts(s: &str) -> Result<(&str, u32)> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(PlaceError::bad_spec(s, "a size starts with a number, e.g. 64M"));
    }
    let unit = unit.trim();
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(PlaceError::bad_spec(
                s,
                format!("unknown unit '{unit}' (expected K, M, G or T, binary)"),
            ))
        }
    };
    Ok((num, shift))
}

/// Parses a size such as `64M`, `1G`, `4096`, `512KiB` into bytes (binary
/// multiples): a whole number of units. Zero is refused.
pub fn parse_size(s: &str) -> Result<u64> {
    let (num, shift) = size_parts(s)?;
    if num.contains('.') {
        return Err(PlaceError::bad_spec(s, "a whole number of units, e.g. 1536M for 1.5G"));
    }
    let n: u64 = num.parse().map_err(|_| PlaceError::bad_spec(s, "number too large"))?;
    let bytes =
        n.checked_mul(1u64 << shift).ok_or_else(|| PlaceError::bad_spec(s, "size too large"))?;
    if bytes == 0 {
        return Err(PlaceError::bad_spec(s, "size must be positive"));
    }
    Ok(bytes)
}

/// As [`parse_size`], also taking fractions of a unit (`1.5M`), rounded to
/// whole bytes; for working sets, where `1.5M` between cache sizes is the
/// natural way to ask.
pub fn parse_size_fractional(s: &str) -> Result<u64> {
    let (num, shift) = size_parts(s)?;
    let v: f64 = num.parse().map_err(|_| PlaceError::bad_spec(s, "not a number"))?;
    let bytes = (v * (1u64 << shift) as f64).round();
    if !(1.0..=1e18).contains(&bytes) {
        return Err(PlaceError::bad_spec(s, "size out of range (1 byte to 1e18 bytes)"));
    }
    Ok(bytes as u64)
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
    fn sizes_are_binary() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("2k").unwrap(), 2048);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("1t").unwrap(), 1 << 40);
        for bad in ["", "M", "0", "12X", "99999999999999999999", "20000000T", "1.5G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fractional_sizes_round_to_bytes() {
        assert_eq!(parse_size_fractional("1.5M").unwrap(), 3 << 19);
        assert_eq!(parse_size_fractional("64K").unwrap(), 64 << 10);
        assert_eq!(parse_size_fractional("1GiB").unwrap(), 1 << 30);
        for bad in ["", "abc", "12Q", "0", "0.1", "1.2.3M", "2000000T"] {
            assert!(parse_size_fractional(bad).is_err(), "{bad}");
        }
    }
}
