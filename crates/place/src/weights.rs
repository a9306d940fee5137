//! Weighted-interleave weights: computing small integer weights from
//! measured per-node bandwidth (one CPU node's row of a bandwidth matrix,
//! with what the weights cost the other CPU nodes), reading the kernel's
//! current weights and `auto` mode, and writing new weights with a backup
//! file that restores the old ones
//! (`/sys/kernel/mm/mempolicy/weighted_interleave/{nodeN,auto}`, Linux
//! 6.9+; `auto` since 6.16). Measuring the matrix and verifying applied
//! weights is `bench::weights`'s.
//!
//! The model: a bandwidth-bound workload streams through pages spread over
//! nodes in shares `p_i`; node `i` delivers at most `B_i` GB/s, so the
//! aggregate is `min_i(B_i / p_i)`, largest (= `sum B_i`) when `p_i` is
//! proportional to `B_i`. Integer weights approximate that proportion;
//! their *efficiency* is the aggregate they give over the best possible.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use topo::{NodeSet, SysRoot};

use crate::error::{PlaceError, Result};

mod backup;
pub use backup::{read_backup, save_backup, BackupError, BACKUP_CAP};

/// The kernel's weight directory, relative to the root.
pub const WEIGHTS_DIR: &str = "sys/kernel/mm/mempolicy/weighted_interleave";
/// The kernel's largest weight.
pub const MAX_KERNEL_WEIGHT: u32 = 255;
/// Default cap on the largest weight the advisor proposes: small weights
/// keep the interleave pattern short (the kernel walks `sum w` pages per
/// round).
pub const DEFAULT_MAX_WEIGHT: u32 = 32;
/// The advisor stops at the first scale whose weights reach this
/// efficiency.
pub const TARGET_EFFICIENCY: f64 = 0.99;

/// Weights proposed for a set of nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advice {
    /// Node -> weight (1..=max).
    pub weights: BTreeMap<u32, u32>,
    /// The bandwidth each node was credited with, GB/s.
    pub bandwidth_gbs: BTreeMap<u32, f64>,
    /// Aggregate bandwidth these weights give over the best possible
    /// (`sum B_i`), in the model above (1.0 = ideal).
    pub efficiency: f64,
    /// Largest relative error of a node's page share against its
    /// bandwidth share (over the nodes weighed), percent.
    pub ratio_error_pct: f64,
    /// Nodes left out of the interleave set: so slow that even the
    /// kernel's minimum weight of 1 gives them more pages than their
    /// bandwidth can serve, lowering the aggregate.
    #[serde(default)]
    pub excluded: Vec<u32>,
    /// Aggregate bandwidth the model expects with these weights, GB/s.
    pub expected_gbs: f64,
}

/// Aggregate bandwidth (GB/s) of weights `w` over nodes of bandwidth `b`
/// in the model of this module: `min_i(B_i * sum(w) / w_i)`. Nodes with
/// no weight hold no pages and add nothing; a node with weight but no
/// bandwidth figure is taken as 0 GB/s.
pub fn aggregate_gbs(w: &BTreeMap<u32, u32>, b: &BTreeMap<u32, f64>) -> f64 {
    let total: u32 = w.values().sum();
    if total == 0 {
        return 0.0;
    }
    w.iter()
        .filter(|(_, &wi)| wi > 0)
        .map(|(n, &wi)| b.get(n).copied().unwrap_or(0.0) * f64::from(total) / f64::from(wi))
        .fold(f64::INFINITY, f64::min)
}

/// `aggregate_gbs(w, b) / sum(b)` (0 when `b` sums to 0).
pub fn efficiency(w: &BTreeMap<u32, u32>, b: &BTreeMap<u32, f64>) -> f64 {
    let best: f64 = b.values().sum();
    if best <= 0.0 {
        return 0.0;
    }
    aggregate_gbs(w, b) / best
}

/// Largest relative error of page share against bandwidth share, percent.
fn ratio_error_pct(w: &BTreeMap<u32, u32>, b: &BTreeMap<u32, f64>) -> f64 {
    let wt: f64 = w.values().map(|&x| f64::from(x)).sum();
    let bt: f64 = b.values().sum();
    if wt <= 0.0 || bt <= 0.0 {
        return 0.0;
    }
    b.iter()
        .map(|(n, &bi)| {
            let want = bi / bt;
            let got = f64::from(w.get(n).copied().unwrap_or(0)) / wt;
            if want > 0.0 {
                ((got - want) / want).abs() * 100.0
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// Why weights cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdviceError {
    #[error("no node to weigh: at least one memory node with a bandwidth figure is needed")]
    NoNodes,
    #[error("node {node}: bandwidth {gbs} GB/s is not a positive figure")]
    BadBandwidth { node: u32, gbs: f64 },
    #[error("largest weight {0}: expected 1 to {MAX_KERNEL_WEIGHT}")]
    BadMax(u32),
}

/// The weights that give the largest aggregate: for each interleave set
/// made of the fastest nodes (all nodes, then without the slowest, ...),
/// the weights of [`advise_set`]; the largest set whose aggregate is
/// within 1% of the best wins (more nodes, more capacity). Efficiency is
/// against the sum over *all* nodes.
pub fn advise(
    bandwidth_gbs: &BTreeMap<u32, f64>,
    max_weight: u32,
) -> std::result::Result<Advice, AdviceError> {
    let all = advise_set(bandwidth_gbs, max_weight)?;
    let mut order: Vec<(u32, f64)> = bandwidth_gbs.iter().map(|(&n, &b)| (n, b)).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut candidates = vec![all];
    for k in (1..order.len()).rev() {
        let set: BTreeMap<u32, f64> = order[..k].iter().copied().collect();
        let mut a = advise_set(&set, max_weight)?;
        a.excluded = order[k..].iter().map(|(n, _)| *n).collect();
        a.excluded.sort_unstable();
        candidates.push(a);
    }
    let best = candidates.iter().map(|a| a.expected_gbs).fold(0.0, f64::max);
    let mut pick = candidates
        .into_iter()
        .find(|a| a.expected_gbs >= best * 0.99)
        .expect("the best candidate qualifies");
    let total: f64 = bandwidth_gbs.values().sum();
    pick.efficiency = pick.expected_gbs / total;
    pick.bandwidth_gbs = bandwidth_gbs.clone();
    Ok(pick)
}

/// The smallest integer weights over every node of `bandwidth_gbs`
/// (largest weight at most `max_weight`) whose efficiency reaches
/// [`TARGET_EFFICIENCY`]; failing that, the most efficient weights within
/// `max_weight` (ties: the smaller scale). Each node gets at least 1 (the
/// kernel's minimum).
pub fn advise_set(
    bandwidth_gbs: &BTreeMap<u32, f64>,
    max_weight: u32,
) -> std::result::Result<Advice, AdviceError> {
    if bandwidth_gbs.is_empty() {
        return Err(AdviceError::NoNodes);
    }
    if !(1..=MAX_KERNEL_WEIGHT).contains(&max_weight) {
        return Err(AdviceError::BadMax(max_weight));
    }
    for (&node, &gbs) in bandwidth_gbs {
        if !(gbs.is_finite() && gbs > 0.0) {
            return Err(AdviceError::BadBandwidth { node, gbs });
        }
    }
    let top = bandwidth_gbs.values().copied().fold(0.0, f64::max);
    let mut best: Option<(f64, BTreeMap<u32, u32>)> = None;
    for scale in 1..=max_weight {
        let w: BTreeMap<u32, u32> = bandwidth_gbs
            .iter()
            .map(|(&n, &b)| (n, ((b / top * f64::from(scale)).round() as u32).clamp(1, scale)))
            .collect();
        let e = efficiency(&w, bandwidth_gbs);
        if best.as_ref().is_none_or(|(be, _)| e > *be + 1e-12) {
            best = Some((e, w));
        }
        if e >= TARGET_EFFICIENCY {
            break;
        }
    }
    let (efficiency, weights) = best.expect("max_weight >= 1");
    // Lowest terms: 6:2 is 3:1.
    let g = weights.values().copied().fold(0, gcd);
    let weights: BTreeMap<u32, u32> = weights.into_iter().map(|(n, w)| (n, w / g.max(1))).collect();
    Ok(Advice {
        ratio_error_pct: ratio_error_pct(&weights, bandwidth_gbs),
        expected_gbs: aggregate_gbs(&weights, bandwidth_gbs),
        weights,
        bandwidth_gbs: bandwidth_gbs.clone(),
        efficiency,
        excluded: Vec::new(),
    })
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Bandwidth from CPU nodes (rows) to memory nodes (columns), GB/s.
pub type Matrix = BTreeMap<u32, BTreeMap<u32, f64>>;

/// What another CPU node gets from the advised weights.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OtherView {
    pub cpu_node: u32,
    /// The weights that would suit this node best.
    pub own_weights: BTreeMap<u32, u32>,
    pub own_expected_gbs: f64,
    /// What the advised weights give it (model), GB/s.
    pub with_advice_gbs: f64,
    /// `1 - with_advice / own_expected`, percent.
    pub loss_pct: f64,
}

/// The weights for one CPU node's view of a bandwidth matrix. The
/// kernel's weights are global, so what they cost each other CPU node is
/// part of the advice.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixAdvice {
    /// The CPU node the weights are optimised for.
    pub cpu_node: u32,
    pub advice: Advice,
    pub others: Vec<OtherView>,
}

/// Why a matrix gives no advice.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MatrixError {
    #[error("no CPU node -> memory node bandwidth to work from")]
    Empty,
    #[error("no bandwidth from node {node} (CPU nodes: {})", list(.cpu_nodes))]
    NoSuchCpuNode { node: u32, cpu_nodes: Vec<u32> },
    #[error("no bandwidth from CPU node {cpu_node} to node(s) {missing:?}")]
    MissingNodes { cpu_node: u32, missing: Vec<u32> },
    #[error(transparent)]
    Advice(#[from] AdviceError),
}

fn list(ids: &[u32]) -> String {
    ids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

/// A matrix row limited to `nodes` (all of it when `None`).
fn restrict(row: &BTreeMap<u32, f64>, nodes: Option<&NodeSet>) -> BTreeMap<u32, f64> {
    row.iter()
        .filter(|(n, _)| nodes.is_none_or(|s| s.contains(**n)))
        .map(|(&n, &b)| (n, b))
        .collect()
}

/// The weights ([`advise`]) for CPU node `cpu_node`'s row of `matrix`
/// (default: the first CPU node), over the memory nodes `nodes` (default:
/// every node of the row), each other CPU node's loss with them beside.
pub fn advise_matrix(
    matrix: &Matrix,
    cpu_node: Option<u32>,
    nodes: Option<&NodeSet>,
    max_weight: u32,
) -> std::result::Result<MatrixAdvice, MatrixError> {
    let Some(&first) = matrix.keys().next() else { return Err(MatrixError::Empty) };
    let cpu_node = match cpu_node {
        Some(n) if matrix.contains_key(&n) => n,
        Some(node) => {
            return Err(MatrixError::NoSuchCpuNode {
                node,
                cpu_nodes: matrix.keys().copied().collect(),
            })
        }
        None => first,
    };
    let row = restrict(&matrix[&cpu_node], nodes);
    if let Some(want) = nodes {
        let missing: Vec<u32> = want.iter().filter(|n| !row.contains_key(n)).collect();
        if !missing.is_empty() {
            return Err(MatrixError::MissingNodes { cpu_node, missing });
        }
    }
    let advice = advise(&row, max_weight)?;
    let mut others = Vec::new();
    for (&c, row) in matrix {
        if c == cpu_node {
            continue;
        }
        let row = restrict(row, nodes);
        let Ok(own) = advise(&row, max_weight) else { continue };
        let with = aggregate_gbs(&advice.weights, &row);
        others.push(OtherView {
            cpu_node: c,
            own_weights: own.weights,
            own_expected_gbs: own.expected_gbs,
            with_advice_gbs: with,
            loss_pct: (1.0 - with / own.expected_gbs) * 100.0,
        });
    }
    Ok(MatrixAdvice { cpu_node, advice, others })
}

/// The commands that put weights to use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Commands {
    /// For one program: `numactl --weighted-interleave=NODES PROGRAM`.
    pub numactl: String,
    /// For the whole system (root): one write per node.
    pub sysfs: Vec<String>,
}

/// The commands for `weights`.
pub fn commands(weights: &BTreeMap<u32, u32>) -> Commands {
    let set: NodeSet = weights.keys().copied().collect();
    Commands {
        numactl: format!("numactl --weighted-interleave={} PROGRAM", set.to_list()),
        sysfs: sysfs_commands(weights),
    }
}

/// The kernel's weighted-interleave settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelWeights {
    /// `nodeN` -> weight.
    pub weights: BTreeMap<u32, u32>,
    /// `auto` (Linux 6.16+): true when the kernel computes the weights from
    /// firmware bandwidth (HMAT/CDAT); `None` when the file is absent.
    pub auto: Option<bool>,
    /// The name of that file: `auto`, or `__auto_type` on kernels whose
    /// C23 `#define auto __auto_type` renamed the attribute (seen on 6.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_file: Option<String>,
}

/// The names the `auto` file has been seen under.
const AUTO_FILES: [&str; 2] = ["auto", "__auto_type"];

/// Reads the kernel's weights and `auto` mode; `None` on kernels without
/// weighted interleave (before 6.9).
pub fn read_kernel_weights(root: &SysRoot) -> Result<Option<KernelWeights>> {
    let Some(weights) = crate::policy::weighted_interleave_weights(root)? else {
        return Ok(None);
    };
    let mut auto = None;
    let mut auto_file = None;
    for name in AUTO_FILES {
        let rel = format!("{WEIGHTS_DIR}/{name}");
        let Some(s) = root.read_optional(&rel)? else { continue };
        auto = Some(match s.trim() {
            "true" | "1" | "Y" => true,
            "false" | "0" | "N" => false,
            other => {
                return Err(topo::TopoError::malformed(
                    root.path(&rel),
                    format!("expected true or false, found {other:?}"),
                )
                .into())
            }
        });
        auto_file = Some(name.to_string());
        break;
    }
    Ok(Some(KernelWeights { weights, auto, auto_file }))
}

/// What [`apply`] replaced: enough to put it back ([`restore`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Backup {
    /// Always `numaprobe-weights-backup`.
    pub format: String,
    /// RFC 3339-ish UTC time of the change (seconds since the epoch when
    /// the clock is odd).
    pub saved: String,
    /// The settings before the change.
    pub previous: KernelWeights,
    /// The weights written.
    pub applied: BTreeMap<u32, u32>,
}

/// The `format` of a [`Backup`] file.
pub const BACKUP_FORMAT: &str = "numaprobe-weights-backup";

/// One file that could not be written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteFailure {
    /// The sysfs file.
    pub path: String,
    /// What should be in it.
    pub value: String,
    pub error: String,
}

fn write_file(root: &SysRoot, rel: &str, value: &str) -> std::result::Result<(), WriteFailure> {
    let path = root.path(rel);
    let fail = |e: std::io::Error| WriteFailure {
        path: path.display().to_string(),
        value: value.to_string(),
        error: e.to_string(),
    };
    // sysfs files exist already: never create one, never follow a link
    // or write anything but a regular file (a sysfs attribute is one).
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(&path)
        .map_err(fail)?;
    if let Some(what) = topo::fs::not_regular(f.metadata().map_err(fail)?.file_type()) {
        return Err(fail(std::io::Error::other(format!("{what}, not a weight file"))));
    }
    f.write_all(format!("{value}\n").as_bytes()).map_err(fail)
}

/// Checks that `weights` can be written under `root`: the kernel has
/// weighted interleave, every node has its file, every weight is 1..=255.
/// Nothing is written.
pub fn check_writable(root: &SysRoot, weights: &BTreeMap<u32, u32>) -> Result<KernelWeights> {
    let Some(current) = read_kernel_weights(root)? else {
        return Err(PlaceError::Unsupported {
            feature: "weighted interleave (MPOL_WEIGHTED_INTERLEAVE)",
            why: format!(
                "{} is absent: the kernel needs Linux 6.9 or later; nothing was written",
                root.path(WEIGHTS_DIR).display()
            ),
        });
    };
    for (&n, &w) in weights {
        if !(1..=MAX_KERNEL_WEIGHT).contains(&w) {
            return Err(PlaceError::Unsupported {
                feature: "this weight",
                why: format!("node {n} weight {w}: the kernel takes 1 to 255; nothing was written"),
            });
        }
        if !current.weights.contains_key(&n) {
            return Err(PlaceError::Unsupported {
                feature: "weighting this node",
                why: format!(
                    "{} is absent (the kernel has weights for nodes {:?}); nothing was written",
                    root.path(&format!("{WEIGHTS_DIR}/node{n}")).display(),
                    current.weights.keys().collect::<Vec<_>>()
                ),
            });
        }
    }
    Ok(current)
}

/// Why the weight files may not be written at all; nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CannotWrite {
    #[error("writing /{WEIGHTS_DIR} needs root")]
    NotRoot,
    #[error("{}: absent: weighted interleave needs Linux 6.9 or later", .dir.display())]
    Unsupported { dir: PathBuf },
}

/// Whether this process may write the weights under `root`: it runs as
/// root and the kernel has weighted interleave. Checked before anything
/// is measured or written.
pub fn ensure_can_write(root: &SysRoot) -> std::result::Result<(), CannotWrite> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(CannotWrite::NotRoot);
    }
    if !crate::policy::supports_weighted_interleave(root) {
        return Err(CannotWrite::Unsupported { dir: root.path(WEIGHTS_DIR) });
    }
    Ok(())
}

/// Writes the weights of `backup.applied` over `backup.previous`. A
/// failure part-way restores what was already written and returns the
/// error with the files that could not be put back.
fn write_weights(
    root: &SysRoot,
    backup: &Backup,
) -> std::result::Result<(), (String, Vec<WriteFailure>)> {
    for (&n, &w) in &backup.applied {
        if let Err(f) = write_file(root, &format!("{WEIGHTS_DIR}/node{n}"), &w.to_string()) {
            let why = format!("writing {}: {}", f.path, f.error);
            let left = restore(root, backup);
            return Err((why, left));
        }
    }
    Ok(())
}

/// Writes `weights` (after [`check_writable`]) and returns the backup of
/// what was there. A failure part-way restores what was already written
/// and returns the error with the files that could not be put back.
pub fn apply(
    root: &SysRoot,
    weights: &BTreeMap<u32, u32>,
    saved: String,
) -> std::result::Result<Backup, (String, Vec<WriteFailure>)> {
    let previous = check_writable(root, weights).map_err(|e| (e.to_string(), Vec::new()))?;
    let backup = Backup { format: BACKUP_FORMAT.into(), saved, previous, applied: weights.clone() };
    write_weights(root, &backup)?;
    Ok(backup)
}

/// Why [`apply_with_backup`] did not apply the weights.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// The weights cannot be written here (no file for a node, a weight
    /// out of range, no weighted interleave); nothing was written.
    #[error(transparent)]
    Refused(PlaceError),
    /// The backup file's folder could not be created; nothing was written.
    #[error("creating {}", .dir.display())]
    BackupDir { dir: PathBuf, source: std::io::Error },
    /// The backup file could not be saved (an existing file there is
    /// never overwritten); nothing was written.
    #[error(transparent)]
    Backup(BackupError),
    /// A write failed part-way; the old weights were put back except those
    /// in `unrestored`.
    #[error("{why}")]
    Write { why: String, unrestored: Vec<WriteFailure> },
}

/// Seconds since the epoch, as text (empty when the clock is before it).
fn now_text() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs().to_string())
        .unwrap_or_default()
}

/// Writes `weights` after saving what is there to `backup_file` (its
/// folder created), so that even a crash part-way leaves the backup that
/// [`restore_file`] reads. Returns the backup.
pub fn apply_with_backup(
    root: &SysRoot,
    weights: &BTreeMap<u32, u32>,
    backup_file: &Path,
) -> std::result::Result<Backup, ApplyError> {
    let previous = check_writable(root, weights).map_err(ApplyError::Refused)?;
    let backup = Backup {
        format: BACKUP_FORMAT.into(),
        saved: now_text(),
        previous,
        applied: weights.clone(),
    };
    if let Some(dir) = backup_file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|source| ApplyError::BackupDir { dir: dir.to_path_buf(), source })?;
    }
    save_backup(backup_file, &backup).map_err(ApplyError::Backup)?;
    write_weights(root, &backup)
        .map_err(|(why, unrestored)| ApplyError::Write { why, unrestored })?;
    Ok(backup)
}

/// Why [`restore_file`] restored nothing.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The file cannot be read or is not a backup a restore may write
    /// ([`read_backup`]); nothing was written.
    #[error(transparent)]
    Backup(BackupError),
    #[error(transparent)]
    CannotWrite(CannotWrite),
}

impl RestoreError {
    /// True when the file given is at fault (unreadable, not a regular
    /// file, not a backup, naming other files), not the machine.
    pub fn is_usage(&self) -> bool {
        matches!(self, RestoreError::Backup(_))
    }
}

/// Puts back the weights saved in `backup_file` ([`read_backup`], then
/// [`ensure_can_write`], then [`restore`]). Returns the backup and the
/// files that could not be written (empty: all restored).
pub fn restore_file(
    root: &SysRoot,
    backup_file: &Path,
) -> std::result::Result<(Backup, Vec<WriteFailure>), RestoreError> {
    let backup = read_backup(backup_file).map_err(RestoreError::Backup)?;
    ensure_can_write(root).map_err(RestoreError::CannotWrite)?;
    let failed = restore(root, &backup);
    Ok((backup, failed))
}

/// Puts back the weights (and `auto` mode) of `backup`. Returns the files
/// that could not be written (empty: all restored). Node weights go first,
/// then `auto` (writing a weight switches the kernel to manual mode;
/// writing `true` to `auto` recomputes the weights from firmware).
pub fn restore(root: &SysRoot, backup: &Backup) -> Vec<WriteFailure> {
    // A backup naming anything but the weight files writes nothing.
    if let Err(why) = backup.check() {
        return vec![WriteFailure {
            path: root.path(WEIGHTS_DIR).display().to_string(),
            value: String::new(),
            error: format!("refused the backup, nothing written: {why}"),
        }];
    }
    let mut failed = Vec::new();
    for (&n, &w) in &backup.previous.weights {
        if let Err(f) = write_file(root, &format!("{WEIGHTS_DIR}/node{n}"), &w.to_string()) {
            failed.push(f);
        }
    }
    if let Some(auto) = backup.previous.auto {
        let v = if auto { "true" } else { "false" };
        let name = backup.previous.auto_file.as_deref().unwrap_or("auto");
        if let Err(f) = write_file(root, &format!("{WEIGHTS_DIR}/{name}"), v) {
            failed.push(f);
        }
    }
    failed
}

/// The shell commands that write `weights` (for the operator to run or to
/// put in a boot script).
pub fn sysfs_commands(weights: &BTreeMap<u32, u32>) -> Vec<String> {
    weights.iter().map(|(n, w)| format!("echo {w} > /{WEIGHTS_DIR}/node{n}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(pairs: &[(u32, f64)]) -> BTreeMap<u32, f64> {
        pairs.iter().copied().collect()
    }

    fn w(pairs: &[(u32, u32)]) -> BTreeMap<u32, u32> {
        pairs.iter().copied().collect()
    }

    #[test]
    fn three_hundred_and_one_hundred_give_three_to_one() {
        let a = advise(&bw(&[(0, 300.0), (1, 100.0)]), DEFAULT_MAX_WEIGHT).unwrap();
        assert_eq!(a.weights, w(&[(0, 3), (1, 1)]));
        assert!((a.efficiency - 1.0).abs() < 1e-9, "{a:?}");
        assert!(a.ratio_error_pct < 1e-9);
        assert!((a.expected_gbs - 400.0).abs() < 1e-9);
    }

    #[test]
    fn equal_nodes_give_one_each() {
        let a = advise(&bw(&[(0, 50.0), (1, 50.0), (2, 50.0)]), 32).unwrap();
        assert_eq!(a.weights, w(&[(0, 1), (1, 1), (2, 1)]));
    }

    #[test]
    fn awkward_ratio_reaches_the_target_with_small_weights() {
        // 250:90 = 2.78: 3:1 is 96.2% efficient, 8:3 is 99.6%... the first
        // scale reaching 99% wins.
        let b = bw(&[(0, 250.0), (4, 90.0)]);
        let a = advise(&b, 32).unwrap();
        assert!(a.efficiency >= TARGET_EFFICIENCY, "{a:?}");
        assert!(a.weights[&0] <= 11, "{a:?}");
        assert!(efficiency(&w(&[(0, 3), (4, 1)]), &b) < TARGET_EFFICIENCY);
    }

    #[test]
    fn a_node_too_slow_for_the_minimum_weight_is_left_out() {
        let b = bw(&[(0, 400.0), (1, 1.0)]);
        // With both, weight 1 gives node 1 a ninth of the pages: 9 GB/s.
        let both = advise_set(&b, 8).unwrap();
        assert_eq!(both.weights, w(&[(0, 8), (1, 1)]));
        assert!(both.expected_gbs < 10.0, "{both:?}");
        let a = advise(&b, 8).unwrap();
        assert_eq!(a.weights, w(&[(0, 1)]));
        assert_eq!(a.excluded, [1]);
        assert!((a.efficiency - 400.0 / 401.0).abs() < 1e-9, "{a:?}");
        // A slow node that still adds bandwidth stays in.
        let c = advise(&bw(&[(0, 300.0), (1, 100.0), (2, 30.0)]), 32).unwrap();
        assert!(c.excluded.is_empty(), "{c:?}");
        // 10:3:1 is 97.7% efficient; 21:7:2 is the first past 99%.
        assert_eq!(c.weights, w(&[(0, 21), (1, 7), (2, 2)]));
    }

    #[test]
    fn model_of_the_aggregate() {
        let b = bw(&[(0, 300.0), (1, 100.0)]);
        // 1:1 -> node 1 limits: 100 * 2 / 1 = 200 GB/s, half the ideal.
        assert!((aggregate_gbs(&w(&[(0, 1), (1, 1)]), &b) - 200.0).abs() < 1e-9);
        assert!((efficiency(&w(&[(0, 1), (1, 1)]), &b) - 0.5).abs() < 1e-9);
        // Only node 0: 300.
        assert!((aggregate_gbs(&w(&[(0, 1)]), &b) - 300.0).abs() < 1e-9);
    }

    #[test]
    fn bad_inputs_are_refused() {
        assert_eq!(advise(&BTreeMap::new(), 32), Err(AdviceError::NoNodes));
        assert!(matches!(advise(&bw(&[(0, 0.0)]), 32), Err(AdviceError::BadBandwidth { .. })));
        assert!(matches!(advise(&bw(&[(0, f64::NAN)]), 32), Err(AdviceError::BadBandwidth { .. })));
        assert_eq!(advise(&bw(&[(0, 1.0)]), 0), Err(AdviceError::BadMax(0)));
        assert_eq!(advise(&bw(&[(0, 1.0)]), 256), Err(AdviceError::BadMax(256)));
    }

    fn tree(auto: Option<&str>) -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join(WEIGHTS_DIR);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("node0"), "1\n").unwrap();
        std::fs::write(dir.join("node1"), "1\n").unwrap();
        if let Some(a) = auto {
            std::fs::write(dir.join("auto"), format!("{a}\n")).unwrap();
        }
        let root = SysRoot::new(d.path()).unwrap();
        (d, root)
    }

    fn read(root: &SysRoot, f: &str) -> String {
        std::fs::read_to_string(root.path(&format!("{WEIGHTS_DIR}/{f}"))).unwrap().trim().into()
    }

    #[test]
    fn apply_then_restore_puts_the_old_values_back() {
        let (_d, root) = tree(Some("true"));
        let before = read_kernel_weights(&root).unwrap().unwrap();
        assert_eq!(before.auto, Some(true));
        let b = apply(&root, &w(&[(0, 3), (1, 1)]), "t".into()).unwrap();
        assert_eq!((read(&root, "node0"), read(&root, "node1")), ("3".into(), "1".into()));
        assert_eq!(b.previous, before);
        // What the kernel does when a weight is written.
        std::fs::write(root.path(&format!("{WEIGHTS_DIR}/auto")), "false\n").unwrap();
        assert!(restore(&root, &b).is_empty());
        assert_eq!((read(&root, "node0"), read(&root, "auto")), ("1".into(), "true".into()));
    }

    #[test]
    fn apply_refuses_unknown_nodes_and_old_kernels_without_writing() {
        let (_d, root) = tree(None);
        let e = apply(&root, &w(&[(0, 3), (7, 1)]), "t".into()).unwrap_err();
        assert!(e.0.contains("node7"), "{e:?}");
        assert_eq!(read(&root, "node0"), "1", "nothing written");
        let empty = tempfile::tempdir().unwrap();
        let old = SysRoot::new(empty.path()).unwrap();
        let e = apply(&old, &w(&[(0, 3)]), "t".into()).unwrap_err();
        assert!(e.0.contains("6.9"), "{e:?}");
    }

    #[test]
    fn auto_is_read_under_its_c23_name_and_restored_there() {
        let (_d, root) = tree(None);
        let f = root.path(&format!("{WEIGHTS_DIR}/__auto_type"));
        std::fs::write(&f, "true\n").unwrap();
        let k = read_kernel_weights(&root).unwrap().unwrap();
        assert_eq!((k.auto, k.auto_file.as_deref()), (Some(true), Some("__auto_type")));
        let b = apply(&root, &w(&[(0, 2)]), "t".into()).unwrap();
        std::fs::write(&f, "false\n").unwrap();
        assert!(restore(&root, &b).is_empty());
        assert_eq!(read(&root, "__auto_type"), "true");
    }

    #[test]
    fn a_file_that_cannot_be_restored_is_reported_with_its_value() {
        let (_d, root) = tree(None);
        let b = apply(&root, &w(&[(0, 3), (1, 1)]), "t".into()).unwrap();
        let f = root.path(&format!("{WEIGHTS_DIR}/node1"));
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap(); // cannot be opened for writing
        let left = restore(&root, &b);
        assert_eq!(left.len(), 1, "{left:?}");
        assert!(left[0].path.ends_with("node1") && left[0].value == "1", "{left:?}");
        assert_eq!(read(&root, "node0"), "1", "the others are still restored");
    }

    fn is_root() -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    /// CPU node 0 sees 300 and 100 GB/s, node 1 150 and 100.
    fn two_by_two() -> Matrix {
        BTreeMap::from([(0, bw(&[(0, 300.0), (4, 100.0)])), (1, bw(&[(0, 150.0), (4, 100.0)]))])
    }

    #[test]
    fn a_matrix_row_gives_the_weights_and_the_other_rows_their_loss() {
        let m = advise_matrix(&two_by_two(), None, None, 32).unwrap();
        assert_eq!((m.cpu_node, &m.advice.weights), (0, &w(&[(0, 3), (4, 1)])));
        // Node 1 would want 3:2 (250 GB/s); 3:1 gives it 200: a 20% loss.
        assert_eq!(m.others.len(), 1);
        let o = &m.others[0];
        assert_eq!((o.cpu_node, &o.own_weights), (1, &w(&[(0, 3), (4, 2)])));
        assert!((o.with_advice_gbs - 200.0).abs() < 1e-9 && (o.loss_pct - 20.0).abs() < 1e-9);
        let m = advise_matrix(&two_by_two(), Some(1), None, 32).unwrap();
        assert_eq!(m.advice.weights, w(&[(0, 3), (4, 2)]));
        let only0: NodeSet = "0".parse().unwrap();
        let m = advise_matrix(&two_by_two(), None, Some(&only0), 32).unwrap();
        assert_eq!(m.advice.weights, w(&[(0, 1)]));
    }

    #[test]
    fn a_matrix_without_the_nodes_asked_for_is_refused_naming_them() {
        assert_eq!(advise_matrix(&Matrix::new(), None, None, 32), Err(MatrixError::Empty));
        let e = advise_matrix(&two_by_two(), Some(3), None, 32).unwrap_err();
        assert_eq!(e, MatrixError::NoSuchCpuNode { node: 3, cpu_nodes: vec![0, 1] });
        assert_eq!(e.to_string(), "no bandwidth from node 3 (CPU nodes: 0, 1)");
        let some: NodeSet = "0,2-3".parse().unwrap();
        let e = advise_matrix(&two_by_two(), None, Some(&some), 32).unwrap_err();
        assert_eq!(e, MatrixError::MissingNodes { cpu_node: 0, missing: vec![2, 3] });
        assert!(matches!(
            advise_matrix(&two_by_two(), None, None, 0),
            Err(MatrixError::Advice(AdviceError::BadMax(0)))
        ));
    }

    #[test]
    fn apply_with_backup_saves_the_old_values_first_and_restore_file_puts_them_back() {
        let (d, root) = tree(Some("true"));
        let file = d.path().join("backups/sub/wb.json");
        let b = apply_with_backup(&root, &w(&[(0, 3), (1, 1)]), &file).unwrap();
        assert_eq!(read(&root, "node0"), "3");
        assert_eq!(read_backup(&file).unwrap(), b, "the file holds the backup returned");
        assert_eq!(b.previous.weights, w(&[(0, 1), (1, 1)]));
        std::fs::write(root.path(&format!("{WEIGHTS_DIR}/auto")), "false\n").unwrap();
        if !is_root() {
            let e = restore_file(&root, &file).unwrap_err();
            assert!(matches!(e, RestoreError::CannotWrite(CannotWrite::NotRoot)), "{e:?}");
            return;
        }
        let (restored, failed) = restore_file(&root, &file).unwrap();
        assert!(failed.is_empty(), "{failed:?}");
        assert_eq!(restored, b);
        assert_eq!((read(&root, "node0"), read(&root, "auto")), ("1".into(), "true".into()));
    }

    #[test]
    fn apply_with_backup_writes_nothing_when_refused_or_when_the_backup_cannot_be_saved() {
        let (d, root) = tree(None);
        let file = d.path().join("wb.json");
        let e = apply_with_backup(&root, &w(&[(0, 3), (7, 1)]), &file).unwrap_err();
        assert!(matches!(&e, ApplyError::Refused(_)) && e.to_string().contains("node7"), "{e}");
        assert!(!file.exists(), "no backup for a refused change");
        let blocker = d.path().join("a-file");
        std::fs::write(&blocker, "").unwrap();
        let e = apply_with_backup(&root, &w(&[(0, 3)]), &blocker.join("wb.json")).unwrap_err();
        assert!(matches!(e, ApplyError::BackupDir { .. }), "{e:?}");
        let e = apply_with_backup(&root, &w(&[(0, 3)]), d.path()).unwrap_err();
        assert!(matches!(e, ApplyError::Backup { .. }), "a folder is no file: {e:?}");
        assert_eq!(read(&root, "node0"), "1", "nothing written");
    }

    #[test]
    fn a_file_that_is_not_a_backup_is_the_users_mistake() {
        let d = tempfile::tempdir().unwrap();
        let junk = d.path().join("junk.json");
        std::fs::write(&junk, "{}").unwrap();
        let e = read_backup(&junk).unwrap_err();
        assert!(
            matches!(e, BackupError::Invalid { .. })
                && e.to_string().contains("not a weights backup"),
            "{e}"
        );
        let other = d.path().join("other.json");
        let b = Backup {
            format: "something-else".into(),
            saved: "1".into(),
            previous: KernelWeights { weights: w(&[(0, 1)]), auto: None, auto_file: None },
            applied: w(&[(0, 2)]),
        };
        std::fs::write(&other, serde_json::to_string(&b).unwrap()).unwrap();
        let e = read_backup(&other).unwrap_err();
        assert!(matches!(e, BackupError::Invalid { .. }), "{e:?}");
        assert!(e.to_string().contains("\"something-else\""), "{e}");
        let e = read_backup(&d.path().join("none.json")).unwrap_err();
        assert!(matches!(e, BackupError::Read { .. }), "{e:?}");
        // A machine without weighted interleave: refused after the file is read.
        let (_t, root) = tree(None);
        let good = d.path().join("good.json");
        apply_with_backup(&root, &w(&[(0, 2)]), &good).unwrap();
        let bare = SysRoot::new(d.path()).unwrap();
        let e = restore_file(&bare, &good).unwrap_err();
        let why = if is_root() { "Unsupported" } else { "NotRoot" };
        assert!(format!("{e:?}").starts_with(&format!("CannotWrite({why}")), "{e:?}");
    }

    #[test]
    fn commands_give_numactl_the_node_list() {
        let c = commands(&w(&[(0, 3), (1, 1), (2, 1), (4, 1)]));
        assert_eq!(c.numactl, "numactl --weighted-interleave=0-2,4 PROGRAM");
        assert_eq!(c.sysfs.len(), 4);
    }

    #[test]
    fn sysfs_commands_name_each_node() {
        assert_eq!(
            sysfs_commands(&w(&[(0, 3), (2, 1)])),
            [
                "echo 3 > /sys/kernel/mm/mempolicy/weighted_interleave/node0",
                "echo 1 > /sys/kernel/mm/mempolicy/weighted_interleave/node2"
            ]
        );
    }
}
