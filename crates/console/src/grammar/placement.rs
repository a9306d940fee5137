//! The grammar of placement flag values, shared by every command of
//! numaprobe (documented once in its docs/cli.md): sizes, single nodes and
//! CPUs, and node and CPU sets in numactl's syntax. The errors are the
//! messages a flag prints after its name. Numbers with bounds are
//! [`super`]'s.

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
}
