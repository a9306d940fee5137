//! `numaprobe exec` sets, in the child, the memory policy and CPUs each
//! placement claims, with the nodes it claims: the child prints its own
//! `/proc/self/status` and `/proc/self/numa_maps`, and every mapping of it
//! must carry the policy. On a one-node machine the pages of every policy
//! land on node 0, so the policy the kernel reports is what tells a
//! placement from none (docs/testing.md). The guest suite covers the
//! placement on several nodes.

use assert_cmd::Command;

/// What the child prints about itself: its allowed CPUs and memory nodes,
/// then the policy field of every mapping.
const PROBE: &str = "grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status; \
                     echo @@maps; cut -d' ' -f2- /proc/self/numa_maps; echo @@end";

struct Child {
    cpus: String,
    mems: String,
    /// Each mapping's line after its address: the policy first.
    maps: Vec<String>,
}

/// Runs the probe under `policy` and reads what the child printed
/// (`--show-output` copies it to stderr).
fn child_under(policy: &str) -> Child {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", dir.path().join("results.db"))
        .env("NUMAPROBE_LOCK", dir.path().join("measure.lock"))
        .current_dir(dir.path())
        .args(["exec", "-p", policy, "-r", "1", "--show-output", "--", "sh", "-c", PROBE])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "exec -p {policy}: {err}");
    let field = |name: &str| {
        err.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("{policy}: no {name} in {err}"))
            .trim()
            .to_string()
    };
    // Between the child's own markers: numaprobe's warnings (a run too
    // short to compare, the machine's memory state) share the stream.
    let maps: Vec<String> = err
        .lines()
        .skip_while(|l| *l != "@@maps")
        .skip(1)
        .take_while(|l| *l != "@@end")
        .map(str::to_string)
        .collect();
    assert!(maps.len() >= 5, "{policy}: too few mappings: {err}");
    Child { cpus: field("Cpus_allowed_list:"), mems: field("Mems_allowed_list:"), maps }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap().trim().to_string()
}

/// This test's own allowed CPUs, as the kernel lists them.
fn own_cpus() -> String {
    read("/proc/self/status")
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string()
}

fn assert_every_mapping(c: &Child, policy: &str, want: &str) {
    let carries = |m: &str| m == want || m.starts_with(&format!("{want} "));
    let wrong: Vec<&String> = c.maps.iter().filter(|m| !carries(m)).collect();
    assert!(wrong.is_empty(), "{policy}: mappings without '{want}': {wrong:?}");
}

#[test]
fn local_and_remote_bind_the_memory_and_pin_the_cpus_of_node_0() {
    let node0_cpus = read("/sys/devices/system/node/node0/cpulist");
    for policy in ["local:0", "remote:0/0"] {
        let c = child_under(policy);
        // the kernel writes MPOL_BIND as bind:NODES
        assert_every_mapping(&c, policy, "bind:0");
        assert_eq!(c.cpus, node0_cpus, "{policy}: node 0's CPUs");
        assert_eq!(c.mems, "0", "{policy}");
    }
}

#[test]
fn interleave_sets_interleave_over_the_nodes_it_names() {
    for policy in ["interleave:0", "interleave"] {
        let c = child_under(policy);
        assert_every_mapping(&c, policy, "interleave:0");
        assert_eq!(c.cpus, own_cpus(), "{policy}: the CPUs are left alone");
    }
}

#[test]
fn weighted_interleave_is_set_where_the_kernel_has_it() {
    if !std::path::Path::new("/sys/kernel/mm/mempolicy/weighted_interleave").is_dir() {
        // an older kernel refuses it (exec_cli covers the refusal)
        return;
    }
    let c = child_under("weighted:0");
    assert_every_mapping(&c, "weighted:0", "weighted interleave:0");
}

#[test]
fn default_and_cpus_only_leave_the_memory_policy_alone() {
    let node0_cpus = read("/sys/devices/system/node/node0/cpulist");
    for (policy, cpus) in [("default", own_cpus()), ("cpus-only:0", node0_cpus)] {
        let c = child_under(policy);
        assert_every_mapping(&c, policy, "default");
        assert_eq!(c.cpus, cpus, "{policy}");
    }
}
