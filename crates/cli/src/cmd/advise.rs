//! `numaprobe advise interleave`: weighted-interleave weights from measured
//! bandwidth (measured now, or read from a saved run), shown beside the
//! kernel's current weights, with the commands that set them, `--apply`
//! (root; the old values saved and a restore command printed),
//! `--restore FILE`, and `--verify` (weighted against plain interleave and
//! local-only, with the noise). The weights themselves come from
//! [`place::weights`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use bench::bw::{self, BwMode, BwPlan, BwResult, Mode, RepPolicy};
use kernels::Kernel;
use place::weights::{self, Advice, Backup, KernelWeights, WriteFailure};
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

/// Bandwidth from CPU nodes (rows) to memory nodes (columns), GB/s.
type Matrix = BTreeMap<u32, BTreeMap<u32, f64>>;

/// What another CPU node gets from the advised weights.
#[derive(Debug, Serialize)]
struct OtherView {
    cpu_node: u32,
    /// The weights that would suit this node best.
    own_weights: BTreeMap<u32, u32>,
    own_expected_gbs: f64,
    /// What the advised weights give it (model), GB/s.
    with_advice_gbs: f64,
    /// `1 - with_advice / own_expected`, percent.
    loss_pct: f64,
}

#[derive(Debug, Serialize)]
struct Commands {
    /// For one program: `numactl --weighted-interleave=NODES PROGRAM`.
    numactl: String,
    /// For the whole system (root): one write per node.
    sysfs: Vec<String>,
}

#[derive(Debug, Serialize)]
struct Applied {
    backup: String,
    restore_command: String,
}

#[derive(Debug, Serialize)]
struct VerifyFigure {
    policy: &'static str,
    best_gbs: f64,
    noise_pct: Option<f64>,
}

#[derive(Debug, Serialize)]
struct Verify {
    kernel: &'static str,
    figures: Vec<VerifyFigure>,
    /// `weighted / interleave - 1`, percent.
    gain_vs_interleave_pct: Option<f64>,
    /// `weighted / local-only - 1`, percent.
    gain_vs_local_pct: Option<f64>,
    /// Combined noise of the two figures compared, percent.
    noise_pct: Option<f64>,
    verdict: String,
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

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The refusals of --apply/--restore that need nothing measured: not root,
/// or no weight files. Exit 1, nothing written.
fn check_can_write(root: &SysRoot, what: &str) -> anyhow::Result<()> {
    if !is_root() {
        anyhow::bail!("{what} writes /sys/kernel/mm/mempolicy/weighted_interleave: run it as root (nothing was written)");
    }
    if !place::policy::supports_weighted_interleave(root) {
        anyhow::bail!(
            "{what}: {} is absent: weighted interleave needs Linux 6.9 or later (nothing was written)",
            root.path(weights::WEIGHTS_DIR).display()
        );
    }
    Ok(())
}

fn interleave(a: InterleaveArgs, g: &Global) -> anyhow::Result<()> {
    let root = sys_root(&a)?;
    if let Some(file) = &a.restore {
        return restore(&root, file, g);
    }
    if a.apply {
        check_can_write(&root, "--apply")?;
    }
    let stop = crate::signal::stop_flag();
    let (source, kernel, matrix) = match &a.from_run {
        Some(r) => from_run(r, g)?,
        None => {
            let topo = Topology::discover(&SysRoot::live())?;
            let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
            let m = measure(&topo, &a, g, &stop)?;
            ("measured now".to_string(), "triad".to_string(), m)
        }
    };
    if matrix.is_empty() {
        anyhow::bail!("no CPU node -> memory node bandwidth to work from ({source})");
    }
    let cpu_node = match a.cpu_node {
        Some(n) if matrix.contains_key(&n) => n,
        Some(n) => usage!(
            "--cpu-node {n}: no bandwidth from node {n} in {source} (CPU nodes: {})",
            matrix.keys().map(u32::to_string).collect::<Vec<_>>().join(", ")
        ),
        None => *matrix.keys().next().expect("not empty"),
    };
    let row = restrict(&matrix[&cpu_node], a.nodes.as_ref());
    if let Some(want) = &a.nodes {
        let missing: Vec<u32> = want.iter().filter(|n| !row.contains_key(n)).collect();
        if !missing.is_empty() {
            usage!(
                "--nodes {want}: no bandwidth from CPU node {cpu_node} to node(s) {missing:?} in {source}"
            );
        }
    }
    let advice = weights::advise(&row, a.max_weight).map_err(|e| anyhow::anyhow!("{e}"))?;
    let others = others(&matrix, cpu_node, &advice, a.nodes.as_ref(), a.max_weight);
    let live = SysRoot::live();
    let wroot = if a.sysfs_root.is_some() { &root } else { &live };
    let kernel_weights = weights::read_kernel_weights(wroot).ok().flatten();
    let kernel_supported = kernel_weights.is_some();
    let mut notes = Vec::new();
    if !kernel_supported {
        notes.push(
            "this kernel has no weighted interleave (/sys/kernel/mm/mempolicy/weighted_interleave): \
             it needs Linux 6.9 or later; the weights below are for when it has"
                .to_string(),
        );
    }
    if kernel_weights.as_ref().is_some_and(|k| k.auto == Some(true)) {
        notes.push(
            "the kernel is in auto mode: its weights come from firmware (HMAT/CDAT) bandwidth, \
             not from measurement; writing a weight switches it to manual mode"
                .to_string(),
        );
    }
    if !advice.excluded.is_empty() {
        notes.push(format!(
            "node(s) {:?} left out: even the smallest weight (1) gives them more pages than their \
             bandwidth serves, so including them lowers the aggregate",
            advice.excluded
        ));
    }
    if advice.weights.len() < 2 {
        notes.push(
            "one memory node: there is nothing to interleave; weights matter on machines with \
             several memory nodes (CXL, HBM, several sockets)"
                .to_string(),
        );
    }
    if matrix.len() > 1 {
        notes.push(format!(
            "weights are global in the kernel: optimised for CPU node {cpu_node}'s view \
             (--cpu-node picks another); what the other CPU nodes lose is listed"
        ));
    }
    let set: NodeSet = advice.weights.keys().copied().collect();
    let commands = Commands {
        numactl: format!("numactl --weighted-interleave={} PROGRAM", set.to_list()),
        sysfs: weights::sysfs_commands(&advice.weights),
    };
    let applied = if a.apply { Some(apply(wroot, &advice.weights, &a, g)?) } else { None };
    let verify = if a.verify {
        if !kernel_supported {
            anyhow::bail!("--verify: this kernel has no weighted interleave (Linux 6.9+ needed)");
        }
        let topo = Topology::discover(&SysRoot::live())?;
        let _lock = record::take_lock(a.wait, g.quiet, &stop)?;
        Some(verify(&topo, &a, g, &stop)?)
    } else {
        None
    };
    let doc = Doc {
        schema_version: results::SCHEMA_VERSION,
        unit: "GB/s = 1e9 bytes/s",
        source,
        kernel,
        cpu_node,
        matrix_gbs: matrix,
        advice,
        others,
        kernel_weights,
        kernel_supported,
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

fn restrict(row: &BTreeMap<u32, f64>, nodes: Option<&NodeSet>) -> BTreeMap<u32, f64> {
    row.iter()
        .filter(|(n, _)| nodes.is_none_or(|s| s.contains(**n)))
        .map(|(&n, &b)| (n, b))
        .collect()
}

fn others(
    matrix: &Matrix,
    chosen: u32,
    advice: &Advice,
    nodes: Option<&NodeSet>,
    max: u32,
) -> Vec<OtherView> {
    let mut out = Vec::new();
    for (&c, row) in matrix {
        if c == chosen {
            continue;
        }
        let row = restrict(row, nodes);
        let Ok(own) = weights::advise(&row, max) else { continue };
        let with = weights::aggregate_gbs(&advice.weights, &row);
        out.push(OtherView {
            cpu_node: c,
            own_weights: own.weights,
            own_expected_gbs: own.expected_gbs,
            with_advice_gbs: with,
            loss_pct: (1.0 - with / own.expected_gbs) * 100.0,
        });
    }
    out
}

/// The bandwidth matrix of a saved run: `bw` results with a CPU node and
/// one memory node (the matrix, or local runs), of the kernel present in
/// most cells (triad first); the best figure of each cell.
fn from_run(r: &str, g: &Global) -> anyhow::Result<(String, String, Matrix)> {
    let run = super::store::load_for(g, "--from-run", r)?;
    let views: Vec<results::view::Bw> = run
        .results
        .iter()
        .filter(|s| s.kind == store::ResultKind::Bw)
        .map(|s| results::view::Bw::of(&s.payload))
        .filter(|b| {
            (b.mode == "matrix" || b.mode == "local")
                && b.cpu_node.is_some()
                && b.mem_node.is_some()
        })
        .collect();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &views {
        *counts.entry(v.kernel.as_str()).or_default() += 1;
    }
    let kernel = if counts.contains_key("triad") {
        "triad".to_string()
    } else {
        match counts.iter().max_by_key(|(_, &c)| c) {
            Some((k, _)) => k.to_string(),
            None => anyhow::bail!(
                "--from-run {r}: run {} has no bandwidth per CPU node and memory node \
                 (run `numaprobe run` or `numaprobe bw --matrix --save`)",
                run.summary.id
            ),
        }
    };
    let mut m: Matrix = BTreeMap::new();
    for v in views.iter().filter(|v| v.kernel == kernel) {
        let (Some(c), Some(n), Some(b)) = (v.cpu_node, v.mem_node, v.best_gbs) else { continue };
        let (Ok(c), Ok(n)) = (u32::try_from(c), u32::try_from(n)) else { continue };
        let cell = m.entry(c).or_default().entry(n).or_insert(0.0);
        *cell = cell.max(b);
    }
    Ok((format!("run {}", run.summary.id), kernel, m))
}

fn plan(a: &InterleaveArgs, modes: Vec<BwMode>) -> BwPlan {
    BwPlan {
        modes,
        kernels: vec![Kernel::Triad],
        array_bytes: a.size,
        reps: RepPolicy { min_reps: 3, budget: a.budget, ..RepPolicy::default() },
        ..BwPlan::default()
    }
}

fn measure(
    topo: &Topology,
    a: &InterleaveArgs,
    g: &Global,
    stop: &bench::events::StopFlag,
) -> anyhow::Result<Matrix> {
    let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let rs = bw::run_plan(topo, &plan(a, vec![BwMode::Matrix]), &obs, stop)?;
    if stop.is_stopped() {
        anyhow::bail!("interrupted before the bandwidth matrix was complete: no advice");
    }
    let mut m: Matrix = BTreeMap::new();
    for r in &rs {
        if let (Some(c), Some(n)) = (r.cpu_node, r.mem_node) {
            m.entry(c).or_default().insert(n, r.best_gbs);
        }
    }
    Ok(m)
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
    // Validate before writing anything (nodes without a weight file...).
    weights::check_writable(root, w).map_err(|e| anyhow::anyhow!("--apply: {e}"))?;
    let saved = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs().to_string())
        .unwrap_or_default();
    // Save what is there first, so a crash mid-way still leaves the backup.
    let current = weights::read_kernel_weights(root)?.expect("checked");
    let planned = Backup {
        format: weights::BACKUP_FORMAT.into(),
        saved: saved.clone(),
        previous: current,
        applied: w.clone(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    weights::save_backup(&path, &planned)
        .with_context(|| "--apply: saving the old weights (nothing was written)")?;
    match weights::apply(root, w, saved) {
        Ok(_) => {}
        Err((why, left)) if left.is_empty() => {
            anyhow::bail!("--apply failed: {why}; the old weights were put back")
        }
        Err((why, left)) => {
            eprint!("{}", loud_failures(&left));
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
    backup: String,
    restored: BTreeMap<u32, u32>,
    auto: Option<bool>,
    failed: Vec<WriteFailure>,
}

fn restore(root: &SysRoot, file: &std::path::Path, g: &Global) -> anyhow::Result<()> {
    // Bounded, regular files only, and naming only the weight files.
    let b = match weights::read_backup(file) {
        Ok(b) => b,
        Err(e) => usage!("--restore {e}"),
    };
    check_can_write(root, "--restore")?;
    let failed = weights::restore(root, &b);
    let doc = RestoreDoc {
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

fn verify(
    topo: &Topology,
    a: &InterleaveArgs,
    g: &Global,
    stop: &bench::events::StopFlag,
) -> anyhow::Result<Verify> {
    let obs = super::bw::Obs { bars: crate::progress::Bars::new(g.quiet), quiet: g.quiet };
    let modes = vec![BwMode::Weighted { required: true }, BwMode::Interleave, BwMode::Global];
    let rs = bw::run_plan(topo, &plan(a, modes), &obs, stop)?;
    let fig = |m: Mode| rs.iter().find(|r| r.mode == m);
    let noise = |r: &BwResult| results::view::Bw::of_record(r).noise_pct;
    let mut figures = Vec::new();
    for (m, name) in [
        (Mode::Weighted, "weighted"),
        (Mode::Interleave, "interleave"),
        (Mode::Global, "local-only"),
    ] {
        if let Some(r) = fig(m) {
            figures.push(VerifyFigure { policy: name, best_gbs: r.best_gbs, noise_pct: noise(r) });
        }
    }
    let (w, i, l) = (fig(Mode::Weighted), fig(Mode::Interleave), fig(Mode::Global));
    let gain = |x: Option<&BwResult>| match (w, x) {
        (Some(w), Some(x)) if x.best_gbs > 0.0 => Some((w.best_gbs / x.best_gbs - 1.0) * 100.0),
        _ => None,
    };
    let noise_pct = match (w.and_then(noise), i.and_then(noise)) {
        (Some(a), Some(b)) => Some((a * a + b * b).sqrt()),
        _ => None,
    };
    let gi = gain(i);
    let verdict = match (gi, noise_pct) {
        (Some(gn), Some(nz)) if gn.abs() <= nz.max(1.0) => format!(
            "no difference beyond the noise: weighted {gn:+.1}% against interleave, noise {nz:.1}%"
        ),
        (Some(gn), Some(nz)) if gn > 0.0 => {
            format!("weighted is {gn:.1}% faster than plain interleave (noise {nz:.1}%)")
        }
        (Some(gn), Some(nz)) => {
            format!("weighted is {:.1}% slower than plain interleave (noise {nz:.1}%)", -gn)
        }
        _ => "not enough figures to compare".to_string(),
    };
    Ok(Verify {
        kernel: "triad",
        figures,
        gain_vs_interleave_pct: gi,
        gain_vs_local_pct: gain(l),
        noise_pct,
        verdict,
    })
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
