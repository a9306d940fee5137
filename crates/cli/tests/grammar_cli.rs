//! The one grammar of flag values (docs/cli.md) end to end: sizes with
//! fractions and both unit families, numactl sets wherever a set is taken,
//! single-node flags refusing lists, one `--pages` vocabulary; then help,
//! completions, the man page, `--version` and table styles. Every bad value
//! exits 2 with one line naming it, before anything is measured.

use assert_cmd::Command;
use serde_json::Value;

fn np(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", dir.path().join("results.db"))
        // A lock of this call's own: tests run in parallel, and a benchmark
        // elsewhere on the machine must not turn a grammar check into a refusal.
        .env("NUMAPROBE_LOCK", dir.path().join("measure.lock"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `args`, expects exit 2, and returns stderr's first line (the error)
/// after checking it holds every needle.
fn usage_error(args: &[&str], needles: &[&str]) -> String {
    let out = np(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    let line = err.lines().next().unwrap_or_default().to_string();
    for n in needles {
        assert!(line.contains(n), "{args:?}: '{n}' not in the error line: {err}");
    }
    assert!(!err.contains("invalid digit"), "{args:?}: Rust's parse error leaked: {err}");
    line
}

fn stdout(args: &[&str]) -> String {
    let out = np(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn bad_sizes_are_refused_naming_the_value_and_the_grammar_in_every_command() {
    for (cmd, flag) in
        [("bw", "--size"), ("lat", "--size"), ("place", "--size"), ("exec", "--touch")]
    {
        for bad in ["12Q", "0", "1e9", "-1K", "1,5G", "99999999999999999999"] {
            let arg = format!("{flag}={bad}");
            usage_error(&[cmd, &arg], &[flag, &format!("'{bad}'")]);
        }
        let arg = format!("{flag}=12Q");
        usage_error(&[cmd, &arg], &["unknown unit 'Q'", "KiB", "GB"]);
    }
}

#[test]
fn fractional_sizes_are_taken_by_bw_and_place() {
    // Parsed (1.5G = 1536 MiB), then refused for another reason: nothing runs.
    usage_error(&["bw", "--size", "1.5G", "--threads", "0"], &["'0' for '--threads <N>'"]);
    let out = np(&["--json", "place", "--mem-nodes", "0", "--size", "1.5M", "--pages", "4k"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["size_bytes"], 3 << 19);
}

#[test]
fn decimal_units_are_powers_of_1000() {
    // 10TB = 10^13 bytes = 9.09 TiB; errors answer in binary units
    usage_error(&["place", "--mem-nodes", "0", "--size", "10TB"], &["cannot spare 9.1 TiB:"]);
    usage_error(&["bw", "--size", "10TB"], &["--size 9.1 TiB per array"]);
    usage_error(&["bw", "--size", "10TiB"], &["--size 10 TiB per array"]);
    usage_error(&["lat", "--size", "10TiB"], &["cannot spare 10 TiB:"]);
}

#[test]
fn single_node_and_cpu_flags_refuse_lists_clearly() {
    for (cmd, flag) in [
        ("bw", "--mem-node"),
        ("bw", "--cpu-node"),
        ("lat", "--mem-node"),
        ("lat", "--cpu-node"),
        ("place", "--cpu-node"),
    ] {
        usage_error(&[cmd, flag, "0,1"], &[flag, "'0,1'", "one node number", "not a list"]);
    }
    usage_error(&["lat", "--cpu", "0-3"], &["--cpu", "one CPU number"]);
    usage_error(&["place", "--cpu", "+0"], &["--cpu", "one CPU number"]);
}

#[test]
fn cpu_sets_take_numactl_syntax_in_bw_and_lat() {
    // `all` parses; the combination is then refused (nothing runs).
    usage_error(&["bw", "--cpus", "all", "--matrix"], &["'--cpus <CPUS>' cannot be used with"]);
    usage_error(&["bw", "--cpus", "+4000"], &["--cpus", "relative index 4000"]);
    usage_error(&["bw", "--cpus", "!0-65000"], &["--cpus", "selects no CPU"]);
    usage_error(&["bw", "--cpus", "x-y"], &["'x-y'", "!LIST"]);
    usage_error(&["lat", "--loaded", "--load-cpus", "+4000"], &["--load-cpus", "relative"]);
}

#[test]
fn exec_interleave_takes_all() {
    let out = np(&["--json", "exec", "--no-save", "-r", "1", "-p", "interleave:all", "--", "true"]);
    let err = String::from_utf8_lossy(&out.stderr);
    // One memory node: interleave over all of them is node 0 alone; the
    // policy is accepted under its canonical name either way.
    assert!(out.status.success(), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["policies"][0]["policy"], "interleave", "{j}");
    usage_error(&["exec", "-p", "interleave:+100", "--", "true"], &["relative index 100"]);
}

#[test]
fn pages_mean_the_same_in_every_command() {
    let requested = |pages: &str| -> Value {
        let out = np(&["--json", "place", "--mem-nodes", "0", "--size", "4M", "--pages", pages]);
        assert!(out.status.success(), "{pages}: {}", String::from_utf8_lossy(&out.stderr));
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        j["pages"]["requested"].clone()
    };
    // 4k is base pages with THP refused, not the kernel's default (which may be THP).
    assert_eq!(requested("4k"), "nothp");
    assert_eq!(requested("nothp"), "nothp");
    assert_eq!(requested("default"), "base");
    assert_eq!(requested("base"), "base");
    usage_error(&["lat", "--pages", "default"], &["--pages default", "4k"]);
    usage_error(&["lat", "--pages", "3m"], &["'3m'"]);
    usage_error(&["bw", "--pages", "3m"], &["'3m'"]);
    // lat takes the same aliases as the others (parsed, then refused on size).
    usage_error(&["lat", "--pages", "nothp", "--size", "100"], &["minimum"]);
}

#[test]
fn closed_sets_are_refused_with_their_values_listed() {
    let out = np(&["bw", "--kernel", "copy,bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'bogus'") && err.contains("rw3:1"), "{err}");
    usage_error(&["audit", "--profile", "gaming"], &["'gaming'"]);
    usage_error(&["run", "--skip", "bw-nope"], &["'bw-nope'"]);
    usage_error(&["--table", "fancy", "list"], &["'fancy'"]);
}

#[test]
fn global_options_have_their_own_heading() {
    let help = stdout(&["bw", "--help"]);
    let (own, global) = help.split_once("Global options:").expect("a Global options heading");
    assert!(global.contains("--json") && global.contains("--table <STYLE>"), "{help}");
    assert!(!own.contains("--json"), "--json listed among bw's own options: {help}");
    assert!(own.contains("--mem-node <NODE>") && own.contains("--cpus <CPUS>"), "{help}");
    assert!(own.contains("--size <SIZE>") && own.contains("--pages <PAGES>"), "{help}");
    let help = stdout(&["place", "--help"]);
    assert!(help.contains("--cpu <CPU>") && help.contains("--mem-nodes <NODES>"), "{help}");
}

#[test]
fn completions_and_man_pages_are_printed() {
    let bash = stdout(&["completions", "bash"]);
    assert!(bash.contains("_numaprobe()") && bash.contains("--mem-node"), "{bash}");
    let zsh = stdout(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef numaprobe"), "{zsh}");
    let man = stdout(&["man"]);
    assert!(man.contains(".TH numaprobe") && man.contains("completions"), "{man}");
    let man = stdout(&["man", "bw"]);
    assert!(man.contains(".TH numaprobe-bw") && man.contains("mem\\-node"), "{man}");
    // A command's subcommand, as the pages name each other.
    let man = stdout(&["man", "advise-interleave"]);
    assert!(man.contains(".TH numaprobe-advise-interleave") && man.contains("from\\-run"), "{man}");
    // Every page has the sections a manual page is expected to have; the
    // help's examples stay one per line.
    for page in [
        "", "topo", "run", "bw", "lat", "audit", "exec", "compare", "report", "list", "show",
        "advise",
    ] {
        let args: Vec<&str> = if page.is_empty() { vec!["man"] } else { vec!["man", page] };
        let man = stdout(&args);
        for section in
            [".SH EXAMPLES\n.nf\n", ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"]
        {
            assert!(man.contains(section), "man {page}: no {section:?}");
        }
        assert!(!man.contains(".SH EXTRA"), "man {page}");
        assert!(
            man.contains("NUMAPROBE_DB") && man.contains("numaprobe\\-measure.lock"),
            "man {page}"
        );
    }
    usage_error(&["man", "nope"], &["no such command"]);
    usage_error(&["man", "advise-nope"], &["no such command"]);
    usage_error(&["completions", "tcsh"], &["'tcsh'"]);
}

const BOX: [char; 4] = ['┌', '│', '┆', '═'];

#[test]
fn tables_are_plain_text_in_pipes_and_styled_on_request() {
    let root = ["topo", "--root", "../topo/tests/data/snc2-cxl", "--quiet"];
    let piped = stdout(&root);
    assert!(!piped.contains(BOX), "box drawing in a pipe: {piped}");
    assert!(piped.contains("package  CPUs  dies"), "{piped}");
    let with = |style: &str| stdout(&[&root[..], &["--table", style]].concat());
    assert!(with("box").contains(BOX));
    let md = with("markdown");
    assert!(md.contains("| package | CPUs | dies |") && md.contains("| --- |"), "{md}");
    assert!(md.contains("0 \\| 1 \\| 2"), "cell pipes escaped: {md}");
    let tsv = with("tsv");
    assert!(
        tsv.contains("package\tCPUs\tdies\tcores\tthreads\tnodes\n0\t0-3\t1\t4\t4\t0-1"),
        "{tsv}"
    );
}

/// `--table` is accepted by every command (docs/cli.md lists
/// those that print tables), but with `--json` no table is printed, so
/// asking for a style there is a usage error rather than silently dropped.
#[test]
fn table_with_json_is_refused_and_commands_without_tables_ignore_it() {
    for args in [&["--table", "tsv", "--json", "list"][..], &["topo", "--json", "--table", "plain"]]
    {
        let out = np(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).count(),
            1,
            "one line: {err}"
        );
        assert!(err.contains("--table") && err.contains("--json"), "{err}");
        assert!(out.stdout.is_empty(), "nothing printed: {args:?}");
    }
    // A command that prints no table takes it and prints what it always does.
    assert_eq!(
        stdout(&["--table", "markdown", "completions", "bash"]),
        stdout(&["completions", "bash"])
    );
}
