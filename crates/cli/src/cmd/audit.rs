//! `numaprobe audit` (being written).

use crate::cli::Global;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, _g: &Global) -> anyhow::Result<()> {
    anyhow::bail!("`numaprobe audit` is not built yet")
}
