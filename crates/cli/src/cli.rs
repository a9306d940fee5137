//! The one definition of the command line (clap derive), and the
//! dispatch of the command it names.

use clap::{Parser, Subcommand};

use crate::cmd;
use crate::invocation::{Global, Invocation};

/// Measure what a multi-socket machine's memory really does: topology,
/// bandwidth, latency, placement, settings, and how they change.
#[derive(Debug, Parser)]
#[command(name = "numaprobe", version = VERSION, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// The version `--version` prints: the package version, then the commit and
/// its date when the build knew them (`0.1.0 (a1b2c3d4e5f6 2026-11-25)`;
/// see build.rs). The date is the commit's, so a rebuild prints the same.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("NUMAPROBE_VERSION_SUFFIX"));

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the machine: packages, caches, NUMA nodes, distances, devices, mode.
    Topo(cmd::topo::Args),
    /// Try the placement layer: pin, place pages, and verify where they are.
    Place(cmd::place::Args),
    /// Measure memory bandwidth (STREAM kernels, node matrix, scaling).
    Bw(cmd::bw::Args),
    /// Measure memory latency (node matrix, sweep, per-CPU, loaded, core-to-core).
    Lat(cmd::lat::Args),
    /// Check OS and BIOS settings against a workload profile.
    Audit(cmd::audit::Args),
    /// Run a program under a matrix of NUMA placements and compare.
    Exec(cmd::exec::Args),
    /// Characterise the machine in one budgeted, saved run (the main job).
    Run(cmd::run::Args),
    /// Advice from measurement: weighted-interleave weights (`advise interleave`).
    Advise(cmd::advise::Args),
    /// Read bandwidth of one node chunk by chunk, slow ranges flagged.
    Scan(cmd::scan::Args),
    /// Host<->GPU copy bandwidth from every NUMA node to every GPU.
    Gpu(cmd::gpu::Args),
    /// List saved runs.
    List(cmd::store::ListArgs),
    /// Show one saved run.
    Show(cmd::store::ShowArgs),
    /// Export a saved run as JSON or CSV.
    Export(cmd::store::ExportArgs),
    /// Import runs exported from another machine.
    Import(cmd::store::ImportArgs),
    /// Compare saved runs against a baseline.
    Compare(cmd::compare::CompareArgs),
    /// Vary a runtime setting (THP, governor...) over alternated runs, restore it, compare.
    Study(cmd::study::Args),
    /// Write a Markdown or HTML report of a run.
    Report(cmd::store::ReportArgs),
    /// Many hosts side by side: outliers against peers of one model, drift.
    Fleet(cmd::fleet::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) of numaprobe or of one command.
    Man(ManArgs),
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  numaprobe completions bash > ~/.local/share/bash-completion/completions/numaprobe"
)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  numaprobe man > numaprobe.1 && man ./numaprobe.1\n  numaprobe man bw | man -l -"
)]
pub struct ManArgs {
    /// The command whose page to print (default: numaprobe itself); a
    /// command's own subcommand as the pages name it (`advise-interleave`).
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// Runs the command `cli` names with the global options resolved once
/// into the [`Invocation`] every command takes.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    let g = &Invocation::new(&cli.global)?;
    if !matches!(cli.command, Command::Study(_) | Command::Completions(_) | Command::Man(_)) {
        cmd::study::warn_unfinished();
    }
    let result = match cli.command {
        Command::Topo(a) => cmd::topo::run(a, g),
        Command::Place(a) => cmd::place::run(a, g),
        Command::Bw(a) => cmd::bw::run(a, g),
        Command::Lat(a) => cmd::lat::run(a, g),
        Command::Audit(a) => cmd::audit::run(a, g),
        Command::Exec(a) => cmd::exec::run(a, g),
        Command::Run(a) => cmd::run::run(a, g),
        Command::Advise(a) => cmd::advise::run(a, g),
        Command::Scan(a) => cmd::scan::run(a, g),
        Command::Gpu(a) => cmd::gpu::run(a, g),
        Command::List(a) => cmd::store::list(a, g),
        Command::Show(a) => cmd::store::show(a, g),
        Command::Export(a) => cmd::store::export(a, g),
        Command::Import(a) => cmd::store::import(a, g),
        Command::Compare(a) => cmd::compare::run(a, g),
        Command::Study(a) => cmd::study::run(a, g),
        Command::Report(a) => cmd::store::report(a, g),
        Command::Fleet(a) => cmd::fleet::run(a, g),
        Command::Completions(_) | Command::Man(_) if g.json => {
            // A script or a manual page has no JSON form: --json would be
            // silently dropped.
            crate::usage!(
                "completions and man print a shell script or a manual page: leave out --json"
            )
        }
        Command::Completions(a) => {
            let mut out = Vec::new();
            completions(a.shell, &mut out);
            crate::output::emit(&String::from_utf8_lossy(&out))
        }
        Command::Man(a) => {
            let mut out = Vec::new();
            man(a.command.as_deref(), &mut out)?;
            // On a terminal the page is read, not saved: formatted by
            // man(1) through its pager when man is there.
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) && page_with_man(&out) {
                return crate::signal::check_interrupted(Ok(()));
            }
            crate::output::emit(&String::from_utf8_lossy(&out))
        }
    };
    crate::signal::check_interrupted(result)
}

/// Writes the completion script for `shell` to `out`.
pub fn completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    use clap::CommandFactory;
    clap_complete::generate(shell, &mut Cli::command(), "numaprobe", out);
}

/// Writes the man page of numaprobe, or of one of its commands, to `out`.
pub fn man(command: Option<&str>, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let page = match command {
        None => cli,
        Some(name) => {
            let names: Vec<String> =
                cli.get_subcommands().map(|c| c.get_name().to_string()).collect();
            match console::man::find_page(&cli, name) {
                // clap names are 'static; the process prints one page and exits.
                Some(c) => {
                    c.clone().name(&*Box::leak(format!("numaprobe-{name}").into_boxed_str()))
                }
                None => {
                    crate::usage!("man {name}: no such command (commands: {})", names.join(", "))
                }
            }
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    let page = console::man::with_sections(&String::from_utf8_lossy(&roff), command.unwrap_or(""));
    out.write_all(page.as_bytes())?;
    Ok(())
}

/// Shows the roff `page` with `man -l -` (formatted, through man's pager);
/// false when man cannot be started (then the caller prints the roff).
pub fn page_with_man(page: &[u8]) -> bool {
    use std::io::Write;
    let child = std::process::Command::new("man")
        .args(["-l", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn();
    let Ok(mut child) = child else { return false };
    if let Some(mut stdin) = child.stdin.take() {
        // The reader may quit the pager early: a closed pipe is no error.
        let _ = stdin.write_all(page);
    }
    child.wait().is_ok_and(|s| s.success())
}

/// A value the grammar refused, on one line whatever it holds: `error:
/// invalid value 'V' for 'FLAG': WHY`, every control character of the
/// value and the reason written as an escape (`\n`, `\x1b`), so a
/// newline in a value can neither cut the message short nor forge a line.
pub fn value_error_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let text = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    let why = std::error::Error::source(e).map(|s| s.to_string());
    match (text(ContextKind::InvalidValue), text(ContextKind::InvalidArg), why) {
        (Some(value), Some(arg), Some(why)) => format!(
            "error: invalid value '{}' for '{}': {}",
            report::safe::escape_controls(&value),
            report::safe::escape_controls(&arg),
            report::safe::escape_controls(&why)
        ),
        _ => e.render().to_string().lines().next().unwrap_or_default().to_string(),
    }
}

/// Every error numaprobe prints starts with this, clap's usage errors
/// included, so that a script or a reader looks for one prefix.
pub const ERROR_PREFIX: &str = "numaprobe: error:";

/// A command-line error as numaprobe prints it on stderr: clap's text
/// with [`ERROR_PREFIX`] in place of its `error:`; a value the grammar
/// refused and two flags that conflict on one line without clap's usage
/// and tip; an unknown subcommand with the subcommands it may have meant
/// ([`similar_subcommands`]) where clap suggested none.
pub fn usage_error_text(e: &clap::Error, args: &[String]) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = match e.kind() {
        ErrorKind::ValueValidation => value_error_line(e),
        ErrorKind::ArgumentConflict => {
            e.render().to_string().lines().next().unwrap_or_default().to_string()
        }
        _ => {
            let mut t = e.render().to_string();
            if e.kind() == ErrorKind::InvalidSubcommand && !t.contains("tip:") {
                if let Some(ContextValue::String(bad)) = e.get(ContextKind::InvalidSubcommand) {
                    let near = similar_subcommands(args, bad);
                    if !near.is_empty() {
                        let quoted: Vec<String> = near.iter().map(|n| format!("'{n}'")).collect();
                        let tip = if near.len() == 1 {
                            format!("\n  tip: a similar subcommand exists: {}\n", quoted[0])
                        } else {
                            format!(
                                "\n  tip: some similar subcommands exist: {}\n",
                                quoted.join(", ")
                            )
                        };
                        // after the first line, before the usage
                        let at = t.find('\n').map_or(t.len(), |i| i + 1);
                        t.insert_str(at, &tip);
                    }
                }
            }
            t.trim_end().to_string()
        }
    };
    match text.strip_prefix("error:") {
        Some(rest) => format!("{ERROR_PREFIX}{rest}"),
        None => text,
    }
}

/// The subcommands of the command `args` (the command line without the
/// program) had reached when `bad` was not one of its subcommands, that
/// `bad` is a slip of: one or two letters wrong, missing, added or
/// swapped with their neighbour (optimal string alignment distance, at
/// most one edit per three letters), or the same letters in another order.
pub fn similar_subcommands(args: &[String], bad: &str) -> Vec<String> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    for a in args {
        if a == bad {
            break;
        }
        if let Some(sub) = cmd.find_subcommand(a.as_str()) {
            cmd = sub.clone();
        }
    }
    let bad_l = bad.to_lowercase();
    let allowed = (bad_l.chars().count() / 3).max(1);
    let sorted = |s: &str| {
        let mut v: Vec<char> = s.chars().collect();
        v.sort_unstable();
        v
    };
    cmd.get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .filter(|name| {
            osa_distance(&bad_l, name) <= allowed
                || (bad_l.len() > 2 && sorted(&bad_l) == sorted(name))
        })
        .collect()
}

/// Optimal string alignment distance: insertions, deletions, substitutions
/// and swaps of two neighbouring letters, each one edit.
fn osa_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_of_a_subcommand_find_it() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(similar_subcommands(&args(&["rnu"]), "rnu"), vec!["run"]);
        assert_eq!(similar_subcommands(&args(&["shwo"]), "shwo"), vec!["show"]);
        assert!(similar_subcommands(&args(&["xyzzy"]), "xyzzy").is_empty());
        // nested: `advise interlave`
        assert_eq!(
            similar_subcommands(&args(&["advise", "interlave"]), "interlave"),
            vec!["interleave"]
        );
        assert_eq!(osa_distance("comapre", "compare"), 1);
        assert_eq!(osa_distance("abc", "abc"), 0);
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// docs/cli.md's "Closed sets" table against the flags themselves:
    /// each row's words are exactly the flag's values (aliases in
    /// parentheses), and every flag with a closed set has a row.
    #[test]
    fn the_documented_closed_sets_are_the_flags_values() {
        use clap::CommandFactory;
        let doc = include_str!("../../../docs/cli.md");
        let table = doc.split("## Closed sets").nth(1).unwrap().split("\n## ").next().unwrap();
        let ticked = |s: &str| -> Vec<String> {
            s.split('`').skip(1).step_by(2).map(str::to_string).collect()
        };
        // (command or "" for any, flag or "" for the positional) -> (names,
        // aliases); none for a row that points to another table
        type Values = Option<(Vec<String>, Vec<String>)>;
        let mut rows: Vec<((String, String), Values)> = Vec::new();
        for line in table.lines().filter(|l| l.starts_with("| `")) {
            let cells: Vec<&str> = line.split(" | ").collect();
            let (flags, values) = (cells[0].trim_start_matches("| "), cells[1]);
            let (mut names, mut aliases) = (Vec::new(), Vec::new());
            let mut depth = 0;
            for (i, part) in values.split('`').enumerate() {
                if i % 2 == 1 {
                    if depth > 0 {
                        aliases.push(part.to_string())
                    } else {
                        names.push(part.to_string())
                    }
                } else {
                    depth += part.matches('(').count() as i32 - part.matches(')').count() as i32;
                }
            }
            for f in ticked(flags) {
                let (cmd, flag) = match f.rsplit_once(' ') {
                    Some((c, f)) => (c.to_string(), f.to_string()),
                    None if f.starts_with("--") => (String::new(), f),
                    None => (f, String::new()),
                };
                let v = (!values.contains("see above")).then(|| (names.clone(), aliases.clone()));
                rows.push(((cmd, flag), v));
            }
        }
        assert!(rows.len() > 10, "the closed-sets table was not found: {table}");
        fn walk(c: &clap::Command, name: &str, out: &mut Vec<(String, clap::Arg)>) {
            for a in c.get_arguments().filter(|a| !a.is_hide_set() && a.get_action().takes_values())
            {
                out.push((name.to_string(), a.clone()));
            }
            for s in c.get_subcommands() {
                walk(s, format!("{name} {}", s.get_name()).trim(), out);
            }
        }
        let mut args = Vec::new();
        walk(&Cli::command(), "", &mut args);
        let mut seen = 0;
        for (cmd, a) in &args {
            let values = a.get_possible_values();
            let visible: Vec<&clap::builder::PossibleValue> =
                values.iter().filter(|v| !v.is_hide_set()).collect();
            if visible.is_empty() {
                continue;
            }
            let flag = a.get_long().map(|l| format!("--{l}")).unwrap_or_default();
            let row = rows.iter().find(|((c, f), _)| {
                *f == flag && (c.is_empty() || c == cmd || cmd.ends_with(&format!(" {c}")))
            });
            let Some((_, values)) = row else {
                panic!("docs/cli.md's closed sets lack `{cmd} {flag}`");
            };
            seen += 1;
            let Some((names, aliases)) = values else { continue };
            let want: Vec<String> = visible.iter().map(|v| v.get_name().to_string()).collect();
            let sorted = |v: &[String]| {
                let mut v = v.to_vec();
                v.sort();
                v
            };
            assert_eq!(sorted(names), sorted(&want), "`{cmd} {flag}` in docs/cli.md");
            for al in aliases {
                assert!(
                    visible.iter().any(|v| v.get_name_and_aliases().any(|n| n == al)),
                    "`{cmd} {flag}`: docs/cli.md names the alias {al}, the flag has no such value"
                );
            }
        }
        assert!(seen >= 10, "{seen} flags with closed sets");
    }
}
