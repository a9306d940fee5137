//! The one definition of the command line (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::cmd;

/// Measure what a multi-socket machine's memory really does: topology,
/// bandwidth, latency, placement, settings, and how they change.
#[derive(Debug, Parser)]
#[command(name = "numaprobe", version, about, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, clap::Args, Clone)]
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
    /// List saved runs.
    List(cmd::store::ListArgs),
    /// Show one saved run.
    Show(cmd::store::ShowArgs),
    /// Export a saved run as JSON or CSV.
    Export(cmd::store::ExportArgs),
    /// Import runs exported from another machine.
    Import(cmd::store::ImportArgs),
    /// Compare saved runs against a baseline.
    Compare(cmd::store::CompareArgs),
    /// Write a Markdown or HTML report of a run.
    Report(cmd::store::ReportArgs),
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

/// Returns a usage error (exit status 2) from a command.
#[macro_export]
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::cli::UsageError(format!($($arg)*))))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
