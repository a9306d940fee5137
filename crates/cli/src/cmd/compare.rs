//! `compare`: groups of saved runs side by side against a baseline, with
//! verdicts. Documented in docs/store.md and docs/report.md.

use store::LoadedRun;

use super::store::{open_existing, print_table, resolve};
use crate::cli::Global;
use crate::output;
use crate::usage;

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Runs to compare (ids, `latest`, `latest~N`, UUIDs or labels).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    /// The run the others are compared against (default: the first RUN).
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
}

pub fn run(a: CompareArgs, g: &Global) -> anyhow::Result<()> {
    let db = open_existing(g)?;
    let mut ids = Vec::new();
    for r in &a.runs {
        let id = resolve(&db, r)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let baseline = match &a.baseline {
        Some(b) => {
            let id = resolve(&db, b)?;
            match ids.iter().position(|x| *x == id) {
                Some(i) => i,
                None => {
                    ids.insert(0, id);
                    0
                }
            }
        }
        None => 0,
    };
    if ids.len() < 2 {
        usage!("compare needs at least two different runs (got {})", ids.len());
    }
    let runs: Vec<LoadedRun> = ids.iter().map(|id| db.load_run(*id)).collect::<Result<_, _>>()?;
    let c = report::Comparison::build(&runs, baseline);
    if g.json {
        return output::json(&c);
    }
    print_table(&c.runs_table())?;
    output::emit("")?;
    print_table(&c.table())?;
    if c.across_machines {
        output::emit(
            "\nThese runs come from different machines: differences include the hardware.",
        )?;
    }
    let lines = c.verdict_lines();
    output::emit(&format!("\n{}", lines.join("\n")))
}
