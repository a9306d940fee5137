//! Running Debian's hwloc programs on the host and reading what they
//! print, for the tests that read `export --format hwloc` back
//! (`hwloc_real.rs`, and the guest suite's round trip).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::process::Command;

/// Runs an hwloc program; its stdout. The test fails with its output
/// unless it exits 0, and says how to install hwloc when it is missing.
pub fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| {
        panic!("{program}: {e}: run scripts/hwloc-setup.sh (Debian's hwloc package)")
    });
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The values of attribute `name` in `lstopo --memattrs -p`'s listing:
/// (initiator, target NUMA node P#) -> value, the initiator named by
/// `initiator` from the cpuset lstopo prints (`0x00000003`).
pub fn memattr(
    listing: &str,
    name: &str,
    initiator: impl Fn(&str) -> u32,
) -> BTreeMap<(u32, u32), u64> {
    let mut out = BTreeMap::new();
    let mut on = false;
    for line in listing.lines() {
        if line.starts_with("Memory attribute ") {
            on = line.contains(&format!("name `{name}'"));
            continue;
        }
        if !on {
            continue;
        }
        // `  NUMANode P#4 = 28610 from cpuset 0x00000003 (Group0 P#-1)`
        let w: Vec<&str> = line.split_whitespace().collect();
        assert!(w.len() >= 7 && w[0] == "NUMANode" && w[4] == "from", "{line}");
        let target = w[1].trim_start_matches("P#").parse().unwrap();
        out.insert((initiator(w[6]), target), w[3].parse().unwrap());
    }
    out
}

/// The `os index` of the best target of `attr` from `location` among
/// every node, as `hwloc-info --best-memattr` prints it.
pub fn best(xml: &str, attr: &str, location: &str) -> u32 {
    let text = run(
        "hwloc-info",
        &["--input", xml, "--best-memattr", attr, "--local-memory-flags", "FLAG_ALL", location],
    );
    text.lines()
        .find_map(|l| l.trim().strip_prefix("os index = "))
        .unwrap_or_else(|| panic!("no best target of {attr} from {location}: {text}"))
        .parse()
        .unwrap()
}
