//! The one definition of the command line (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::{cmd, output};

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

/// Options every command takes (shown under their own heading).
#[derive(Debug, clap::Args, Clone)]
#[command(next_help_heading = "Global options")]
pub struct Global {
    /// Print machine-readable JSON on stdout instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Print no progress and no warnings on stderr (errors still print).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Results database (default: $XDG_DATA_HOME/numaprobe/results.db).
    #[arg(long, global = true, value_name = "PATH", env = "NUMAPROBE_DB")]
    pub db: Option<PathBuf>,
    /// The measuring lock file every measuring command takes (default:
    /// /run/lock/numaprobe-measure.lock). In containers, point it at a
    /// hostPath shared by every pod of the node (docs/fleet.md).
    #[arg(long, global = true, value_name = "PATH", env = "NUMAPROBE_LOCK")]
    pub lock: Option<PathBuf>,
    /// How tables are drawn (default: box on a terminal, plain otherwise).
    #[arg(long, global = true, value_name = "STYLE", value_enum)]
    pub table: Option<output::TableStyle>,
}

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

/// A mistake in what the user asked (bad flag value, unknown node...):
/// exits with status 2 instead of 1.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// What numaprobe says after a panic: a bug, to be reported.
pub const BUG_REPORT: &str = "numaprobe panicked (see the message above): this is a bug in \
     numaprobe, not in what you asked; please report it with the command line and the output of \
     `numaprobe --version`";

/// The one classification of errors into usage errors (exit 2) and
/// failures (exit 1): a [`UsageError`] anywhere in the chain, or a library
/// error whose own `is_usage()` says the request was at fault (the
/// placement layer's [`place::PlaceError::is_usage`], reused by bw and lat).
/// The error keeps its whole source chain for printing.
pub fn is_usage(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.is::<UsageError>()
            || e.downcast_ref::<place::PlaceError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<bench::bw::BwError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<bench::lat::LatError>().is_some_and(|e| e.is_usage())
            || e.downcast_ref::<exec::ExecError>().is_some_and(|e| e.is_usage())
    })
}

/// The error and its causes on one line, outermost first (anyhow's `{:#}`),
/// leaving out a cause whose text the message before it already holds:
/// library errors often say their source in their own message
/// (`/sys/x: Permission denied`) and also return it from `source()`.
pub fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Returns a usage error (exit status 2) from a command.
#[macro_export]
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::cli::UsageError(format!($($arg)*))))
    };
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
    fn usage_is_classified_through_the_chain() {
        let place_usage = place::parse_size("0").unwrap_err();
        assert!(is_usage(&anyhow::Error::new(place_usage).context("--size")));
        let bw = bench::bw::BwError::Place(place::parse_size("x").unwrap_err());
        assert!(is_usage(&anyhow::Error::new(bw)));
        let lat = bench::lat::LatError::Panicked("the measuring thread".into());
        assert!(!is_usage(&anyhow::Error::new(lat)), "a panic is a bug, not a usage error");
        let io = std::io::Error::other("disk on fire");
        assert!(!is_usage(&anyhow::Error::new(io).context("writing")));
        let chained = anyhow::Error::new(UsageError("bad".into())).context("while planning");
        assert!(is_usage(&chained));
        assert_eq!(format!("{chained:#}"), "while planning: bad");
    }

    #[test]
    fn the_error_line_keeps_every_cause_once() {
        let io = std::io::Error::from_raw_os_error(libc::EACCES);
        let io_text = io.to_string();
        let topo = topo::TopoError::Io { path: "/sys/x".into(), source: io };
        let err = anyhow::Error::new(topo).context("reading the topology");
        assert_eq!(error_line(&err), format!("reading the topology: /sys/x: {io_text}"));
        // A cause the message does not repeat is kept.
        let err = anyhow::Error::new(std::io::Error::other("disk full")).context("writing x");
        assert_eq!(error_line(&err), "writing x: disk full");
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
