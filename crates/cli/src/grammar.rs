//! The grammar of flag values, shared by every command (documented once in
//! docs/cli.md): sizes, single nodes and CPUs, node and CPU sets. The
//! closed sets are the libraries' own enums, which derive clap's
//! `ValueEnum` under their `clap` feature: `place::PageKind` (`--pages`),
//! `kernels::Kernel`, `kernels::Isa`, `bench::bw::StoreMode`,
//! `audit::Profile`, `bench::suite::StepName`.

use place::SetSpec;

/// `--size` and friends: `4096`, `512M`, `1.5G`, `512MiB`, `2GB` (decimal
/// units are powers of 1000); see [`place::parse_size`].
pub fn size(s: &str) -> Result<u64, String> {
    place::parse_size(s).map_err(|e| e.to_string())
}

/// One id (a node or a CPU), with a clear message when given a list or a
/// set spec: these flags name exactly one.
fn one_id(s: &str, what: &str, plural: &str) -> Result<u32, String> {
    let t = s.trim();
    // Digits only: Rust would read `+0` as 0, which numactl's syntax means
    // as "the first allowed".
    if t.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = t.parse::<u32>() {
            return Ok(n);
        }
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
        assert!(node("-1").unwrap_err().contains("not a list"));
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
        let p = |s: &str| place::PageKind::from_str(s, true).unwrap();
        assert_eq!(p("default"), place::PageKind::Base);
        for s in ["4k", "nothp", "no-thp", "small"] {
            assert_eq!(p(s), place::PageKind::NoThp, "{s}");
        }
    }
}
