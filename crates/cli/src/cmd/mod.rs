//! One module per command; each has `Args` (clap) and `run`.

pub mod advise;
pub mod audit;
pub mod bw;
pub mod compare;
pub mod exec;
pub mod fleet;
pub mod gpu;
pub mod lat;
pub mod place;
pub mod run;
pub mod scan;
pub mod store;
pub mod study;
pub mod topo;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let g = &cli.global;
    if g.json && g.table.is_some() {
        // --json prints no table: a style asked for would be silently lost.
        crate::usage!("--table styles tables and --json prints none: give one or the other");
    }
    crate::output::set_table_style(g.table);
    crate::record::set_lock_path(g.lock.clone());
    if !matches!(cli.command, Command::Study(_) | Command::Completions(_) | Command::Man(_)) {
        study::warn_unfinished();
    }
    let result = match cli.command {
        Command::Topo(a) => topo::run(a, g),
        Command::Place(a) => place::run(a, g),
        Command::Bw(a) => bw::run(a, g),
        Command::Lat(a) => lat::run(a, g),
        Command::Audit(a) => audit::run(a, g),
        Command::Exec(a) => exec::run(a, g),
        Command::Run(a) => run::run(a, g),
        Command::Advise(a) => advise::run(a, g),
        Command::Scan(a) => scan::run(a, g),
        Command::Gpu(a) => gpu::run(a, g),
        Command::List(a) => store::list(a, g),
        Command::Show(a) => store::show(a, g),
        Command::Export(a) => store::export(a, g),
        Command::Import(a) => store::import(a, g),
        Command::Compare(a) => compare::run(a, g),
        Command::Study(a) => study::run(a, g),
        Command::Report(a) => store::report(a, g),
        Command::Fleet(a) => fleet::run(a, g),
        Command::Completions(_) | Command::Man(_) if g.json => {
            // A script or a manual page has no JSON form: --json would be
            // silently dropped.
            crate::usage!(
                "completions and man print a shell script or a manual page: leave out --json"
            )
        }
        Command::Completions(a) => {
            let mut out = Vec::new();
            crate::cli::completions(a.shell, &mut out);
            crate::output::emit(&String::from_utf8_lossy(&out))
        }
        Command::Man(a) => {
            let mut out = Vec::new();
            crate::cli::man(a.command.as_deref(), &mut out)?;
            // On a terminal the page is read, not saved: formatted by
            // man(1) through its pager when man is there.
            if std::io::IsTerminal::is_terminal(&std::io::stdout())
                && crate::cli::page_with_man(&out)
            {
                return crate::signal::check_interrupted(Ok(()));
            }
            crate::output::emit(&String::from_utf8_lossy(&out))
        }
    };
    crate::signal::check_interrupted(result)
}
