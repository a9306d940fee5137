//! The grammar of flag values, shared by every command (documented once in
//! docs/cli.md): numbers with bounds are [`console::grammar`]'s, sizes,
//! nodes, CPUs and sets [`console::grammar::placement`]'s, declared settings
//! [`audit::declared`]'s, and the closed sets (`--pages`, `--kernel`...)
//! [`console::grammar::closed`]'s, each a library's own enum.
//! This module keeps what checks them against the command line itself.

pub use console::grammar::placement::{cpu, node, set, size};
pub use console::grammar::*;

/// `--set KEY=VALUE`: a declared setting ([`audit::declared::parse_assignment`]).
pub fn assignment(s: &str) -> Result<(String, String), String> {
    audit::declared::parse_assignment(s).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        f(&["lat"], "--sizes", SIZE_OK, SIZE_BAD),
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
            ..f(&["exec"], "--keep-output", &["0", "1024"], &["1025", "-1", "1.5"])
        },
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
            ValueParser::new(crate::cmd::exec::keep_output_kib),
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
