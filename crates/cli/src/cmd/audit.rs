//! `numaprobe audit`: OS, firmware and DIMM settings checked against a
//! workload profile, with the evidence of the latest saved run of this
//! machine when the store has one. Documented in docs/audit.md.

use std::path::PathBuf;

use anyhow::Context;
use audit::{Evidence, Report};
use results::audit::Severity;

use topo::{SysRoot, Topology};

use crate::invocation::Invocation;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Read sysfs/procfs under DIR instead of `/` (a capture or a copy).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Workload profile the settings are judged against.
    #[arg(long, value_name = "PROFILE", value_parser = crate::grammar::closed::profile(),
          default_value = "general")]
    pub profile: audit::Profile,
    /// Exit with status 1 when a finding is at this severity or above
    /// (warn or critical); the report is printed first.
    #[arg(long, value_name = "SEVERITY", value_enum)]
    pub fail_on: Option<FailOn>,
    /// Take evidence from this saved run (id, uuid, label, `latest`)
    /// instead of the latest run of this machine.
    #[arg(long, value_name = "RUN", conflicts_with = "no_evidence")]
    pub run: Option<String>,
    /// Do not read the results store.
    #[arg(long)]
    pub no_evidence: bool,
    /// Also show the details of findings that are ok.
    #[arg(long)]
    pub all: bool,
}

/// `--fail-on`: the severity that fails the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Warn,
    Critical,
}

pub fn run(args: Args, g: &Invocation) -> anyhow::Result<()> {
    // Same root handling and errors as `numaprobe topo` (missing root: exit 2).
    let topology = crate::cmd::topo::discover(args.root.as_deref())?;
    let root = match &args.root {
        Some(dir) => SysRoot::new(dir).with_context(|| format!("--root {}", dir.display()))?,
        None => SysRoot::live(),
    };
    let (evidence, note) = if args.no_evidence {
        (Evidence::default(), None)
    } else {
        match evidence_from_store(g, &topology, &root, args.run.as_deref()) {
            Ok(e) => e,
            Err(e) if args.run.is_some() => return Err(e),
            Err(e) => {
                g.warn(&format!(
                    "no evidence from the results store: {}",
                    crate::error::error_line(&e)
                ));
                (Evidence::default(), None)
            }
        }
    };
    if let Some(n) = note {
        g.warn(&n);
    }
    let report = Report::build(&root, &topology, args.profile, evidence, console::audit::TERMS);
    g.answer(crate::output::schema::AUDIT, &console::audit::Doc::of(&report), |style| {
        console::audit::render(&report, args.all, style)
    })?;
    if let Some(fail_on) = args.fail_on {
        let (min, level) = match fail_on {
            FailOn::Warn => (Severity::Warn, "warn"),
            FailOn::Critical => (Severity::Critical, "critical"),
        };
        let n = report.findings.iter().filter(|f| f.severity >= min).count();
        if n > 0 {
            anyhow::bail!("{n} finding(s) at {level} or above (--fail-on {level})");
        }
    }
    Ok(())
}

/// Evidence from the run `run` names, or from the latest run of this
/// machine (by the store's machine fingerprint, which SNC/SMT/`numa=off`
/// leave alone; only for the live machine). Returns the
/// evidence and a note for the user when nothing applied.
fn evidence_from_store(
    g: &Invocation,
    topology: &Topology,
    root: &SysRoot,
    run: Option<&str>,
) -> anyhow::Result<(Evidence, Option<String>)> {
    if run.is_none() && !root.is_live() {
        return Ok((Evidence::default(), None));
    }
    let path = match &g.db {
        Some(p) => p.clone(),
        None => store::Store::default_path()?,
    };
    if !path.exists() {
        if run.is_some() {
            anyhow::bail!("--run: no results database at {}", path.display());
        }
        return Ok((Evidence::default(), None));
    }
    let db = match store::Store::open_existing(&path) {
        Ok(db) => db,
        // An empty file holds no runs, as no file does (it stays empty).
        Err(store::StoreError::Empty { .. }) if run.is_none() => {
            return Ok((Evidence::default(), None))
        }
        Err(e) => return Err(e.into()),
    };
    let me = audit::fingerprint::machine_fingerprint(root, topology);
    let source = match run {
        // A reference that names no run is the user's mistake (exit 2),
        // as in `show`, `report` and `compare`.
        Some(r) => audit::evidence::Source::Run(
            crate::cmd::store::resolve(&db, r).map_err(|e| e.context(format!("--run {r}")))?,
        ),
        None => audit::evidence::Source::LatestOfMachine(&me),
    };
    Ok(audit::evidence::from_store(&db, source)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::context::{Machine, RunTopology};
    use store::{NewRun, RunStatus, Store};

    fn save(db: &mut Store, machine: Machine, topology: &Topology, gbs: f64) -> store::RunId {
        let mut new = NewRun::new("numaprobe run", "0");
        new.machine = machine;
        new.topology = RunTopology::of(topology);
        let id = db.begin_run(&new).unwrap();
        // A hand-made payload, read by the upgrader as a stored one is.
        let bw = format!(
            r#"{{"mode": "local", "kernel": "triad", "cpu_node": 0, "mem_node": 0,
                "best_gbs": {gbs:?}, "validated": true}}"#
        );
        let bw: serde_json::Value = serde_json::from_str(&bw).unwrap();
        db.add_result(id, &results::upgrade::read("bw", &bw).record).unwrap();
        db.finish_run(id, RunStatus::Complete, None).unwrap();
        id
    }

    /// A run taken under other SMT or SNC settings (other CPUs and nodes)
    /// is still this machine's: the machine fingerprint ignores them.
    #[test]
    fn the_latest_run_of_this_machine_is_found_after_smt_and_snc_change() {
        let root = SysRoot::live();
        let topo = Topology::discover(&root).unwrap();
        // The run was saved under another configuration: SMT on (a sibling
        // thread of CPU 0) and SNC (one more node).
        let mut then = topo.clone();
        let mut sibling = then.cpus[0].clone();
        sibling.id = 999;
        sibling.thread_siblings.insert(999);
        then.cpus[0].thread_siblings.insert(999);
        then.cpus.push(sibling);
        let mut extra = then.nodes[0].clone();
        extra.id = 99;
        then.nodes.push(extra);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.db");
        let mut db = Store::open(&path).unwrap();
        let machine = audit::fingerprint::machine(&root, &then, &audit::Read::Absent);
        let older = save(&mut db, machine.clone(), &then, 40.0);
        let mine = save(&mut db, machine, &then, 50.0);
        assert!(older < mine);
        // A later run of another machine is not evidence for this one.
        let other = Machine { fingerprint: Some("0123456789abcdef".into()), ..Default::default() };
        save(&mut db, other, &topo, 60.0);
        drop(db);

        let g = Invocation::new(&crate::invocation::Global {
            json: false,
            quiet: true,
            db: Some(path),
            lock: None,
            table: None,
        })
        .unwrap();
        let (ev, note) = evidence_from_store(&g, &topo, &root, None).unwrap();
        assert_eq!(note, None);
        let src = ev.source.clone().unwrap_or_default();
        assert!(src.starts_with(&format!("run {mine} (")), "{src}");
        assert_eq!(ev.local_best_gbs_per_node.values().copied().collect::<Vec<f64>>(), [50.0]);
    }
}
