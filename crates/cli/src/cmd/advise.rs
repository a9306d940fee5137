//! `numaprobe advise interleave`: weighted-interleave weights from measured
//! bandwidth (measured now, or read from a saved run), shown beside the
//! kernel's current weights, with the commands that set them, `--apply`
//! (root; the old values saved and a restore command printed),
//! `--restore FILE`, and `--verify` (weighted against plain interleave and
//! local-only, with the noise). The weights, applying and restoring them
//! are [`place::weights`]'s, the measurements [`bench::weights`]'; this
//! command reads the flags, calls them and prints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bench::weights::{CellFigure, Sizing};
use console::advise;
use kernels::Kernel;
use place::weights::{self, ApplyError, CannotWrite, Matrix, MatrixError, RestoreError};
use topo::{NodeSet, SysRoot, Topology};

use crate::grammar;
use crate::invocation::Invocation;
use crate::{output, usage};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Weighted-interleave weights from measured bandwidth per memory node.
    #[command(after_help = "Examples:\n  numaprobe advise interleave\n  \
        numaprobe advise interleave --from-run latest --cpu-node 0\n  \
        sudo numaprobe advise interleave --from-run latest --apply --verify\n  \
        sudo numaprobe advise interleave --restore ~/.local/share/numaprobe/weights-backup-1700000000.json")]
    Interleave(InterleaveArgs),
}

#[derive(Debug, clap::Args)]
pub struct InterleaveArgs {
    /// The CPU node whose view of bandwidth the weights are optimised for
    /// (default: the first CPU node). The kernel's weights are global: the
    /// other CPU nodes' loss is shown.
    #[arg(long, value_name = "NODE", value_parser = grammar::node)]
    pub cpu_node: Option<u32>,
    /// Use the bandwidth matrix of a saved run (`latest`, an id, a label)
    /// instead of measuring now.
    #[arg(long, value_name = "RUN")]
    pub from_run: Option<String>,
    /// Memory nodes to interleave over (default: every memory node measured).
    #[arg(long, value_name = "NODES", value_parser = node_set)]
    pub nodes: Option<NodeSet>,
    /// Largest weight to propose (1-255; small weights keep the pattern short).
    #[arg(long, value_name = "N", default_value_t = weights::DEFAULT_MAX_WEIGHT,
          value_parser = grammar::max_weight)]
    pub max_weight: u32,
    /// Write the weights to /sys/kernel/mm/mempolicy/weighted_interleave
    /// (root), saving the old values and printing the command that
    /// restores them.
    #[arg(long)]
    pub apply: bool,
    /// Where --apply saves the old values (default: beside the results
    /// database, weights-backup-TIME.json).
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub backup: Option<PathBuf>,
    /// Put back the weights saved by an earlier --apply (root).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["apply", "from_run", "verify"])]
    pub restore: Option<PathBuf>,
    /// Then measure whole-machine triad with weighted interleave (the
    /// kernel's weights, as applied), plain interleave and local-only, and
    /// state the gain with its noise.
    #[arg(long)]
    pub verify: bool,
    /// Seconds per bandwidth figure when measuring.
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = grammar::budget)]
    pub budget: Duration,
    /// Bytes per array when measuring (default: bw's rule, 4x the LLC).
    #[arg(long, value_name = "SIZE", value_parser = grammar::size)]
    pub size: Option<u64>,
    /// Wait for another measuring numaprobe to finish instead of refusing.
    #[arg(long)]
    pub wait: bool,
    /// Read and write the weight files under this directory instead of /
    /// (tests).
    #[arg(long, value_name = "DIR", hide = true)]
    pub sysfs_root: Option<PathBuf>,
}

fn node_set(s: &str) -> Result<NodeSet, String> {
    s.parse::<NodeSet>().map_err(|e| format!("{e}"))
}

pub fn run(a: Args, g: &Invocation) -> anyhow::Result<()> {
    match a.what {
        What::Interleave(a) => interleave(a, g),
    }
}

fn sys_root(a: &InterleaveArgs) -> anyhow::Result<SysRoot> {
    Ok(match &a.sysfs_root {
        Some(d) => SysRoot::new(d)?,
        None => SysRoot::live(),
    })
}

/// The refusals of --apply/--restore that need nothing measured: not root,
/// or no weight files. Exit 1, nothing written.
fn refusal(what: &str, why: &CannotWrite) -> anyhow::Error {
    match why {
        CannotWrite::NotRoot => anyhow::anyhow!(
            "{what} writes /sys/kernel/mm/mempolicy/weighted_interleave: run it as root (nothing was written)"
        ),
        CannotWrite::Unsupported { dir } => anyhow::anyhow!(
            "{what}: {} is absent: weighted interleave needs Linux 6.9 or later (nothing was written)",
            dir.display()
        ),
    }
}

fn sizing(a: &InterleaveArgs) -> Sizing {
    Sizing { array_bytes: a.size, budget: a.budget }
}

fn interleave(a: InterleaveArgs, g: &Invocation) -> anyhow::Result<()> {
    let root = sys_root(&a)?;
    if let Some(file) = &a.restore {
        return restore(&root, file, g);
    }
    if a.apply {
        weights::ensure_can_write(&root).map_err(|why| refusal("--apply", &why))?;
    }
    let stop = crate::signal::stop_flag();
    let (source, kernel, matrix) = match &a.from_run {
        Some(r) => from_run(r, g)?,
        None => {
            let topo = Topology::discover(&SysRoot::live())?;
            let _lock = g.take_lock(a.wait, &stop)?;
            let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
            let Some(m) = bench::weights::measure_matrix(&topo, &sizing(&a), &obs, &stop)
                .map_err(super::bw::worded)?
            else {
                anyhow::bail!("interrupted before the bandwidth matrix was complete: no advice");
            };
            ("measured now".to_string(), Kernel::Triad, m)
        }
    };
    let m = match weights::advise_matrix(&matrix, a.cpu_node, a.nodes.as_ref(), a.max_weight) {
        Ok(m) => m,
        Err(MatrixError::Empty) => {
            anyhow::bail!("no CPU node -> memory node bandwidth to work from ({source})")
        }
        Err(MatrixError::NoSuchCpuNode { node, cpu_nodes }) => usage!(
            "--cpu-node {node}: no bandwidth from node {node} in {source} (CPU nodes: {})",
            cpu_nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        Err(MatrixError::MissingNodes { cpu_node, missing }) => usage!(
            "--nodes {}: no bandwidth from CPU node {cpu_node} to node(s) {missing:?} in {source}",
            a.nodes.as_ref().map(NodeSet::to_string).unwrap_or_default()
        ),
        Err(MatrixError::Advice(e)) => anyhow::bail!("{e}"),
    };
    let live = SysRoot::live();
    let wroot = if a.sysfs_root.is_some() { &root } else { &live };
    let kernel_weights = weights::read_kernel_weights(wroot).ok().flatten();
    let notes = advise::notes(&m, kernel_weights.as_ref(), matrix.len());
    let commands = weights::commands(&m.advice.weights);
    let applied = if a.apply { Some(apply(wroot, &m.advice.weights, &a, g)?) } else { None };
    let verify = if a.verify {
        if kernel_weights.is_none() {
            anyhow::bail!("--verify: this kernel has no weighted interleave (Linux 6.9+ needed)");
        }
        let topo = Topology::discover(&SysRoot::live())?;
        let _lock = g.take_lock(a.wait, &stop)?;
        let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
        Some(bench::weights::verify(&topo, &sizing(&a), &obs, &stop).map_err(super::bw::worded)?)
    } else {
        None
    };
    let doc = advise::Doc {
        unit: "GB/s = 1e9 bytes/s",
        source,
        kernel: kernel.name().to_string(),
        cpu_node: m.cpu_node,
        matrix_gbs: matrix,
        advice: m.advice,
        others: m.others,
        kernel_supported: kernel_weights.is_some(),
        kernel_weights,
        notes,
        commands,
        applied,
        verify,
    };
    g.answer(results::SCHEMA_VERSION, &doc, |style| advise::render(&doc, style))
}

/// The bandwidth matrix of a saved run: its `bw` results with a CPU node
/// and one memory node (the matrix, or local runs), as
/// [`bench::weights::saved_matrix`] picks them.
fn from_run(r: &str, g: &Invocation) -> anyhow::Result<(String, Kernel, Matrix)> {
    let run = super::store::load_for(g, "--from-run", r)?;
    let figures = CellFigure::of_records(run.records());
    let Some((kernel, m)) = bench::weights::saved_matrix(&figures) else {
        anyhow::bail!(
            "--from-run {r}: run {} has no bandwidth per CPU node and memory node \
             (run `numaprobe run` or `numaprobe bw --matrix --save`)",
            run.summary.id
        )
    };
    Ok((format!("run {}", run.summary.id), kernel, m))
}

fn backup_path(a: &InterleaveArgs, g: &Invocation) -> anyhow::Result<PathBuf> {
    if let Some(p) = &a.backup {
        return Ok(p.clone());
    }
    let db = g.db_path()?;
    let dir = db.parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(dir.join(format!("weights-backup-{secs}.json")))
}

fn apply(
    root: &SysRoot,
    w: &BTreeMap<u32, u32>,
    a: &InterleaveArgs,
    g: &Invocation,
) -> anyhow::Result<advise::Applied> {
    let path = backup_path(a, g)?;
    match weights::apply_with_backup(root, w, &path) {
        Ok(_) => {}
        Err(ApplyError::Refused(e)) => anyhow::bail!("--apply: {e}"),
        Err(ApplyError::BackupDir { dir, source }) => {
            return Err(anyhow::Error::new(source).context(format!("creating {}", dir.display())))
        }
        Err(ApplyError::Backup(e)) => {
            return Err(anyhow::Error::new(e).context("--apply: nothing was written"))
        }
        Err(ApplyError::Write { why, unrestored }) if unrestored.is_empty() => {
            anyhow::bail!("--apply failed: {why}; the old weights were put back")
        }
        Err(ApplyError::Write { why, unrestored }) => {
            eprint!("{}", advise::loud_failures(&unrestored));
            anyhow::bail!(
                "--apply failed: {why}; and some old weights could not be put back (above)"
            )
        }
    }
    let restore_command = format!(
        "numaprobe advise interleave --restore {}{}",
        path.display(),
        a.sysfs_root.as_ref().map(|r| format!(" --sysfs-root {}", r.display())).unwrap_or_default()
    );
    Ok(advise::Applied { backup: path.display().to_string(), restore_command })
}

fn restore(root: &SysRoot, file: &Path, g: &Invocation) -> anyhow::Result<()> {
    let (b, failed) = match weights::restore_file(root, file) {
        Ok(done) => done,
        Err(e) if e.is_usage() => usage!("--restore {e}"),
        Err(RestoreError::CannotWrite(why)) => return Err(refusal("--restore", &why)),
        Err(e) => return Err(anyhow::Error::new(e).context("--restore")),
    };
    let doc = advise::RestoreDoc {
        backup: file.display().to_string(),
        restored: b.previous.weights.clone(),
        auto: b.previous.auto,
        failed: failed.clone(),
    };
    g.answer(output::schema::RESTORE, &doc, |_| advise::restored(&doc))?;
    if !failed.is_empty() {
        eprint!("{}", advise::loud_failures(&failed));
        anyhow::bail!("--restore: {} file(s) could not be written (values above)", failed.len());
    }
    Ok(())
}
