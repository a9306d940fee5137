//! The report's Analysis and recommendations section: what the headline
//! metrics say (remote penalty, cross-node and interleaved bandwidth),
//! flagged placements, noisy results, hidden NUMA, an incomplete run, the
//! best placement of a program, and the settings audit's findings, most
//! severe first, with their fixes.

use results::audit::{Finding, Severity};
use results::bw::NOISY_SPREAD_PCT;
use store::{LoadedRun, RunStatus};

use crate::doc::{Align, Document, Table};
use crate::fmt::num;
use crate::placements::{ExecText, ExecView};
use analysis::advice::{self, Penalty};
use analysis::data::RunData;
use analysis::metrics::{metrics, MetricKey};

pub(crate) fn section(doc: &mut Document, run: &LoadedRun, d: &RunData, exec: Option<&ExecView>) {
    doc.h(2, "Analysis and recommendations");
    let m = metrics(d);
    let mut notes = Vec::new();
    match run.summary.status {
        RunStatus::Complete => {}
        s => notes.push(format!(
            "The run is {s}{}; the figures cover only what was measured.",
            run.summary.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default()
        )),
    }
    if let (Some(l), Some(r)) = (m.get(&MetricKey::LocalLat), m.get(&MetricKey::RemoteLat)) {
        let ratio = r.value / l.value;
        let advice = match Penalty::of(ratio) {
            Penalty::Large => "keep latency-sensitive processes and their memory on one node (numactl --cpunodebind=N --membind=N, or numaprobe exec to compare placements)",
            Penalty::Moderate => "binding processes to nodes helps latency-bound work",
            Penalty::Small => "the penalty is small; interleaving costs little latency here",
        };
        notes.push(format!(
            "Remote memory is {ratio:.2}x as slow as local ({} ns against {} ns): {advice}.",
            num(r.value, "ns"),
            num(l.value, "ns")
        ));
    }
    if let (Some(l), Some(x)) = (m.get(&MetricKey::LocalBw), m.get(&MetricKey::CrossBw)) {
        notes.push(format!(
            "Cross-node bandwidth is {:.0}% of local ({} against {} GB/s): bandwidth-bound programs should allocate on the node they run on.",
            x.value / l.value * 100.0,
            num(x.value, "GB/s"),
            num(l.value, "GB/s")
        ));
    }
    if let (Some(g), Some(i)) = (m.get(&MetricKey::GlobalBw), m.get(&MetricKey::InterleaveBw)) {
        notes.push(format!(
            "Interleaving memory over all nodes gives {:.0}% of the bandwidth of node-local placement ({} against {} GB/s); programs that are not NUMA-aware get roughly the interleaved figure.",
            i.value / g.value * 100.0,
            num(i.value, "GB/s"),
            num(g.value, "GB/s")
        ));
    }
    let flagged = advice::misplaced_results(d);
    if flagged > 0 {
        notes.push(format!(
            "{flagged} result(s) had pages away from the node asked for (placement flagged): their figures mix nodes. Check free memory per node and numa_balancing."
        ));
    }
    let noisy = advice::noisy_results(d);
    if noisy > 0 {
        notes.push(format!(
            "{noisy} result(s) varied by more than {NOISY_SPREAD_PCT:.0}% between repetitions: the machine was busy or its frequency moved; repeat on a quiet machine before drawing conclusions from small differences."
        ));
    }
    for s in d.per_cpu_summaries.iter().filter(|s| s.hidden_numa && !s.groups.is_empty()) {
        notes.push(format!(
            "{} Check the BIOS NUMA settings (NUMA per socket, sub-NUMA clustering, node interleaving) and the kernel command line for numa=off, then measure again.",
            crate::per_cpu::hidden_numa_text(s)
        ));
    }
    if let Some(e) = exec {
        notes.push(e.best_sentence());
    }
    if notes.is_empty() {
        notes.push("Nothing stands out in the measured figures.".into());
    }
    doc.list(notes);

    let findings: Vec<&Finding> =
        d.findings.iter().filter(|f| f.severity != Severity::Ok).collect();
    if !d.findings.is_empty() {
        doc.h(3, "Settings audit");
        if findings.is_empty() {
            doc.p(format!("All {} audited settings are as recommended.", d.findings.len()));
        }
        let mut t = Table::with_header(&[
            "Severity", "Finding", "Found", "Expected", "Why", "Fix", "Needs",
        ]);
        t.align = vec![Align::Left; 7];
        let or_dash = |s: &str| if s.is_empty() { "-".to_string() } else { s.to_string() };
        for f in &findings {
            t.push(vec![
                f.severity.label().into(),
                or_dash(&f.id),
                found_text(f, d),
                or_dash(&f.expected),
                or_dash(&f.why),
                or_dash(&f.fix),
                f.needs.label().into(),
            ]);
        }
        doc.table(t);
    } else if !d.bw.is_empty() || !d.chases.is_empty() || !d.loaded.is_empty() || !d.c2c.is_empty()
    {
        doc.p("No settings audit in this run (numaprobe audit adds findings with fixes).");
    }
}

/// What a finding found, as the report shows it. `run` audits before it
/// measures, so its prefetcher finding says no run has a prefetch check
/// although the same run then measured one: the report says so and quotes
/// the check instead of contradicting itself.
pub(crate) fn found_text(f: &Finding, d: &RunData) -> String {
    match d.prefetch_checks.last() {
        Some(c) if f.id == "cpu.prefetchers" && f.found.starts_with("no saved run") => format!(
            "audited before this run measured its prefetch check, which found: {} (`numaprobe audit` judges it)",
            c.note
        ),
        _ => f.found.clone(),
    }
}
