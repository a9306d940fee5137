//! The text of `numaprobe advise interleave`: the advised weights beside
//! the kernel's, what the other CPU nodes lose, the notes, the commands
//! that set the weights, and what `--apply` and `--verify` did.

use std::collections::BTreeMap;

use bench::weights::Verify;
use place::weights::{
    Advice, Commands, KernelWeights, Matrix, MatrixAdvice, OtherView, WriteFailure,
};
use serde::Serialize;

use super::{Table, TableStyle};

#[derive(Debug, Serialize)]
pub struct Applied {
    pub backup: String,
    pub restore_command: String,
}

#[derive(Debug, Serialize)]
/// `advise interleave`'s document (`--json`, with `schema_version`
/// first) and what its text is written from.
pub struct Doc {
    pub unit: &'static str,
    /// `measured now` or `run N`.
    pub source: String,
    pub kernel: String,
    pub cpu_node: u32,
    /// The whole matrix used, GB/s (CPU node -> memory node -> GB/s).
    pub matrix_gbs: Matrix,
    pub advice: Advice,
    pub others: Vec<OtherView>,
    pub kernel_weights: Option<KernelWeights>,
    /// The kernel has weighted interleave (Linux 6.9+).
    pub kernel_supported: bool,
    pub notes: Vec<String>,
    pub commands: Commands,
    pub applied: Option<Applied>,
    pub verify: Option<Verify>,
}

/// What the reader of the advice should know: a kernel without weighted
/// interleave (`kernel` is `None`) or in auto mode, nodes left out, one
/// memory node only, weights that are global across `cpu_nodes` CPU nodes.
pub fn notes(m: &MatrixAdvice, kernel: Option<&KernelWeights>, cpu_nodes: usize) -> Vec<String> {
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

/// The advice as text: the weights table, the other CPU nodes' loss, the
/// notes, the commands, and what `--apply` and `--verify` did.
pub fn render(d: &Doc, style: TableStyle) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Weighted interleave for CPU node {} ({} bandwidth, {}; GB/s = 1e9 B/s)\n\n",
        d.cpu_node, d.kernel, d.source
    ));
    let mut t = Table::new(
        ["memory node", "GB/s", "advised weight", "share of pages", "kernel weight now"]
            .map(String::from)
            .to_vec(),
        style,
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
        let mut t = Table::new(
            ["CPU node", "their best weights", "their best GB/s", "with these GB/s", "loss"]
                .map(String::from)
                .to_vec(),
            style,
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

/// `advise interleave --restore`'s document: the weights put back from
/// `backup`, and those that could not be.
#[derive(Serialize)]
pub struct RestoreDoc {
    pub backup: String,
    pub restored: BTreeMap<u32, u32>,
    pub auto: Option<bool>,
    pub failed: Vec<WriteFailure>,
}

/// What `--restore` says it did.
pub fn restored(d: &RestoreDoc) -> String {
    let list: Vec<String> = d.restored.iter().map(|(n, w)| format!("node{n}={w}")).collect();
    let auto = d.auto.map(|x| format!(", auto={x}")).unwrap_or_default();
    format!("restored weights {}{auto} from {}\n", list.join(" "), d.backup)
}

/// Says loudly which files could not be restored and what to write by hand.
pub fn loud_failures(failed: &[WriteFailure]) -> String {
    let mut s =
        String::from("COULD NOT RESTORE every weight: write these values by hand (as root):\n");
    for f in failed {
        s.push_str(&format!("  echo {} > {}    # failed: {}\n", f.value, f.path, f.error));
    }
    s
}
