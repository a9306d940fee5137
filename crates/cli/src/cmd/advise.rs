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

use bench::weights::{CellFigure, Sizing, Verify};
use kernels::Kernel;
use place::weights::{
    self, Advice, ApplyError, CannotWrite, Commands, KernelWeights, Matrix, MatrixAdvice,
    MatrixError, OtherView, RestoreError, WriteFailure,
};
use serde::Serialize;
use topo::{NodeSet, SysRoot, Topology};

use crate::cli::Global;
use crate::grammar;
use crate::record;
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

pub fn run(a: Args, g: &Global) -> anyhow::Result<()> {
    match a.what {
        What::Interleave(a) => interleave(a, g),
    }
}

#[derive(Debug, Serialize)]
struct Applied {
    backup: String,
    restore_command: String,
}

#[derive(Debug, Serialize)]
struct Doc {
    schema_version: u32,
    unit: &'static str,
    /// `measured now` or `run N`.
    source: String,
    kernel: String,
    cpu_node: u32,
    /// The whole matrix used, GB/s (CPU node -> memory node -> GB/s).
    matrix_gbs: Matrix,
    advice: Advice,
    others: Vec<OtherView>,
    kernel_weights: Option<KernelWeights>,
    /// The kernel has weighted interleave (Linux 6.9+).
    kernel_supported: bool,
    notes: Vec<String>,
    commands: Commands,
    applied: Option<Applied>,
    verify: Option<Verify>,
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

fn interleave(a: InterleaveArgs, g: &Global) -> anyhow::Result<()> {
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
            let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
            let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
            let Some(m) = bench::weights::measure_matrix(&topo, &sizing(&a), &obs, &stop)? else {
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
    let notes = notes(&m, kernel_weights.as_ref(), matrix.len());
    let commands = weights::commands(&m.advice.weights);
    let applied = if a.apply { Some(apply(wroot, &m.advice.weights, &a, g)?) } else { None };
    let verify = if a.verify {
        if kernel_weights.is_none() {
            anyhow::bail!("--verify: this kernel has no weighted interleave (Linux 6.9+ needed)");
        }
        let topo = Topology::discover(&SysRoot::live())?;
        let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
        let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
        Some(bench::weights::verify(&topo, &sizing(&a), &obs, &stop)?)
    } else {
        None
    };
    let doc = Doc {
        schema_version: results::SCHEMA_VERSION,
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
    if g.json {
        return output::json(&doc);
    }
    output::emit(&render(&doc))
}

/// What the reader of the advice should know: a kernel without weighted
/// interleave (`kernel` is `None`) or in auto mode, nodes left out, one
/// memory node only, weights that are global across `cpu_nodes` CPU nodes.
fn notes(m: &MatrixAdvice, kernel: Option<&KernelWeights>, cpu_nodes: usize) -> Vec<String> {
    let mut notes = Vec::new();
    if kernel.is_none() {
        notes.push(
            "this kernel has no weighted interleave (/sys/kernel/mm/mempolicy/weighted_interleave): \
             it needs Linux 6.9 or later; the weights below are for when it has"
                .to_string(),
        );
    }
    if kernel.is_some_and(|k| k.auto == Some(true)) {
        notes.push(
            "the kernel is in auto mode: its weights come from firmware (HMAT/CDAT) bandwidth, \
             not from measurement; writing a weight switches it to manual mode"
                .to_string(),
        );
    }
    if !m.advice.excluded.is_empty() {
        notes.push(format!(
            "node(s) {:?} left out: even the smallest weight (1) gives them more pages than their \
             bandwidth serves, so including them lowers the aggregate",
            m.advice.excluded
        ));
    }
    if m.advice.weights.len() < 2 {
        notes.push(
            "one memory node: there is nothing to interleave; weights matter on machines with \
             several memory nodes (CXL, HBM, several sockets)"
                .to_string(),
        );
    }
    if cpu_nodes > 1 {
        notes.push(format!(
            "weights are global in the kernel: optimised for CPU node {}'s view \
             (--cpu-node picks another); what the other CPU nodes lose is listed",
            m.cpu_node
        ));
    }
    notes
}

/// The bandwidth matrix of a saved run: its `bw` results with a CPU node
/// and one memory node (the matrix, or local runs), as
/// [`bench::weights::saved_matrix`] picks them.
fn from_run(r: &str, g: &Global) -> anyhow::Result<(String, Kernel, Matrix)> {
    let run = super::store::load_for(g, "--from-run", r)?;
    let figures: Vec<CellFigure> = run
        .records()
        .filter_map(|r| match r {
            results::Record::Bw(b) => Some(b.as_ref()),
            _ => None,
        })
        .filter(|b| matches!(b.mode, results::bw::Mode::Matrix | results::bw::Mode::Local))
        .filter_map(|b| {
            Some(CellFigure {
                kernel: b.kernel,
                cpu_node: b.cpu_node?,
                mem_node: b.mem_node?,
                best_gbs: results::stats::measured(b.best_gbs),
            })
        })
        .collect();
    let Some((kernel, m)) = bench::weights::saved_matrix(&figures) else {
        anyhow::bail!(
            "--from-run {r}: run {} has no bandwidth per CPU node and memory node \
             (run `numaprobe run` or `numaprobe bw --matrix --save`)",
            run.summary.id
        )
    };
    Ok((format!("run {}", run.summary.id), kernel, m))
}

fn backup_path(a: &InterleaveArgs, g: &Global) -> anyhow::Result<PathBuf> {
    if let Some(p) = &a.backup {
        return Ok(p.clone());
    }
    let db = super::store::db_path(g)?;
    let dir = db.parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(dir.join(format!("weights-backup-{secs}.json")))
}

/// Says loudly which files could not be restored and what to write by hand.
fn loud_failures(failed: &[WriteFailure]) -> String {
    let mut s =
        String::from("COULD NOT RESTORE every weight: write these values by hand (as root):\n");
    for f in failed {
        s.push_str(&format!("  echo {} > {}    # failed: {}\n", f.value, f.path, f.error));
    }
    s
}

fn apply(
    root: &SysRoot,
    w: &BTreeMap<u32, u32>,
    a: &InterleaveArgs,
    g: &Global,
) -> anyhow::Result<Applied> {
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
            eprint!("{}", loud_failures(&unrestored));
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
    Ok(Applied { backup: path.display().to_string(), restore_command })
}

#[derive(Serialize)]
struct RestoreDoc {
    schema_version: u32,
    backup: String,
    restored: BTreeMap<u32, u32>,
    auto: Option<bool>,
    failed: Vec<WriteFailure>,
}

fn restore(root: &SysRoot, file: &Path, g: &Global) -> anyhow::Result<()> {
    let (b, failed) = match weights::restore_file(root, file) {
        Ok(done) => done,
        Err(e) if e.is_usage() => usage!("--restore {e}"),
        Err(RestoreError::CannotWrite(why)) => return Err(refusal("--restore", &why)),
        Err(e) => return Err(anyhow::Error::new(e).context("--restore")),
    };
    let doc = RestoreDoc {
        schema_version: output::schema::RESTORE,
        backup: file.display().to_string(),
        restored: b.previous.weights.clone(),
        auto: b.previous.auto,
        failed: failed.clone(),
    };
    if g.json {
        output::json(&doc)?;
    } else {
        let list: Vec<String> =
            b.previous.weights.iter().map(|(n, w)| format!("node{n}={w}")).collect();
        let auto = b.previous.auto.map(|x| format!(", auto={x}")).unwrap_or_default();
        output::emit(&format!(
            "restored weights {}{auto} from {}\n",
            list.join(" "),
            file.display()
        ))?;
    }
    if !failed.is_empty() {
        eprint!("{}", loud_failures(&failed));
        anyhow::bail!("--restore: {} file(s) could not be written (values above)", failed.len());
    }
    Ok(())
}

fn render(d: &Doc) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Weighted interleave for CPU node {} ({} bandwidth, {}; GB/s = 1e9 B/s)\n\n",
        d.cpu_node, d.kernel, d.source
    ));
    let mut t = output::table(
        ["memory node", "GB/s", "advised weight", "share of pages", "kernel weight now"]
            .map(String::from)
            .to_vec(),
    );
    let total: u32 = d.advice.weights.values().sum();
    for (n, b) in &d.advice.bandwidth_gbs {
        let w = d.advice.weights.get(n);
        let kw = d
            .kernel_weights
            .as_ref()
            .and_then(|k| k.weights.get(n))
            .map_or("-".to_string(), u32::to_string);
        t.add_row(vec![
            n.to_string(),
            format!("{b:.2}"),
            w.map_or("left out".into(), u32::to_string),
            w.map_or("-".into(), |w| format!("{:.1}%", f64::from(*w) * 100.0 / f64::from(total))),
            kw,
        ]);
    }
    s.push_str(&format!("{t}\n"));
    let ratio: Vec<String> = d.advice.weights.values().map(u32::to_string).collect();
    s.push_str(&format!(
        "\nWeights {} (nodes {}): {:.1}% of the ideal aggregate ({:.1} of {:.1} GB/s in the \
         model), largest ratio error {:.1}%\n",
        ratio.join(":"),
        d.advice.weights.keys().map(u32::to_string).collect::<Vec<_>>().join(","),
        d.advice.efficiency * 100.0,
        d.advice.expected_gbs,
        d.advice.bandwidth_gbs.values().sum::<f64>(),
        d.advice.ratio_error_pct
    ));
    if let Some(k) = &d.kernel_weights {
        if let Some(auto) = k.auto {
            s.push_str(&format!("Kernel auto mode: {auto}\n"));
        }
    }
    if !d.others.is_empty() {
        s.push_str("\nOther CPU nodes with these weights:\n");
        let mut t = output::table(
            ["CPU node", "their best weights", "their best GB/s", "with these GB/s", "loss"]
                .map(String::from)
                .to_vec(),
        );
        for o in &d.others {
            t.add_row(vec![
                o.cpu_node.to_string(),
                o.own_weights.values().map(u32::to_string).collect::<Vec<_>>().join(":"),
                format!("{:.1}", o.own_expected_gbs),
                format!("{:.1}", o.with_advice_gbs),
                format!("{:.1}%", o.loss_pct),
            ]);
        }
        s.push_str(&format!("{t}\n"));
    }
    for n in &d.notes {
        s.push_str(&format!("\nNote: {n}\n"));
    }
    s.push_str("\nOne program:\n  ");
    s.push_str(&d.commands.numactl);
    s.push_str("\nThe whole system (root):\n");
    for c in &d.commands.sysfs {
        s.push_str(&format!("  {c}\n"));
    }
    if let Some(ap) = &d.applied {
        s.push_str(&format!(
            "\nApplied. Old values saved in {}\nRestore with:\n  {}\n",
            ap.backup, ap.restore_command
        ));
    }
    if let Some(v) = &d.verify {
        s.push_str("\nVerify (whole machine, triad):\n");
        for f in &v.figures {
            let nz = f.noise_pct.map(|n| format!(" (noise {n:.1}%)")).unwrap_or_default();
            s.push_str(&format!("  {:<11} {:.2} GB/s{nz}\n", f.policy, f.best_gbs));
        }
        if let Some(l) = v.gain_vs_local_pct {
            s.push_str(&format!("  against local-only: {l:+.1}%\n"));
        }
        s.push_str(&format!("  {}\n", v.verdict));
    }
    s
}
