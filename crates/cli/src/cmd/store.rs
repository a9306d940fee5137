//! The result store's commands: list, show, export, import, compare, report
//! (being written).

use crate::cli::Global;

#[derive(Debug, clap::Args)]
pub struct ListArgs {}
#[derive(Debug, clap::Args)]
pub struct ShowArgs {}
#[derive(Debug, clap::Args)]
pub struct ExportArgs {}
#[derive(Debug, clap::Args)]
pub struct ImportArgs {}
#[derive(Debug, clap::Args)]
pub struct CompareArgs {}
#[derive(Debug, clap::Args)]
pub struct ReportArgs {}

fn todo() -> anyhow::Result<()> {
    anyhow::bail!("the result store is not built yet")
}
pub fn list(_a: ListArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
pub fn show(_a: ShowArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
pub fn export(_a: ExportArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
pub fn import(_a: ImportArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
pub fn compare(_a: CompareArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
pub fn report(_a: ReportArgs, _g: &Global) -> anyhow::Result<()> {
    todo()
}
