//! What a run's results say, by kind and mode: its records
//! (`results::Record`, as the store read them) sorted into one list per
//! kind, so that metrics, studies and reports match on the records' enums.

use kernels::Kernel;
use results::audit::Finding;
use results::bw::{self, BwResult};
use results::exec::PolicyResult;
use results::hidden::{self, NumaBelow};
use results::lat::{
    self, C2cResult, Lat, LatResult, LatSummary, LoadedPoint, LoadedSummary, PerCpuSummary,
    PerCpuSweepSummary, PrefetchCheck, SweepSummary,
};
use results::run::LoadedRun;
use results::{Record, Unknown};

/// Everything a run holds, one list per kind of record.
#[derive(Debug, Clone, Default)]
pub struct RunData {
    pub bw: Vec<BwResult>,
    /// Pointer chases: points, matrix cells, sweep and per-CPU points.
    pub chases: Vec<LatResult>,
    /// Loaded-latency steps.
    pub loaded: Vec<LoadedPoint>,
    /// Core-to-core pairs.
    pub c2c: Vec<C2cResult>,
    /// The settings audit's findings, most severe first.
    pub findings: Vec<Finding>,
    /// `numaprobe gpu`'s copy points.
    pub gpu: Vec<results::gpu::GpuCopy>,
    /// `exec`'s policies, in the order measured.
    pub exec: Vec<PolicyResult>,
    pub per_cpu_summaries: Vec<PerCpuSummary>,
    pub sweep_summaries: Vec<SweepSummary>,
    /// `lat --per-cpu --sweep`: each CPU's plateaus, CPU groups per size.
    pub per_cpu_sweep_summaries: Vec<PerCpuSweepSummary>,
    /// Each loaded curve's knee.
    pub loaded_summaries: Vec<LoadedSummary>,
    pub prefetch_checks: Vec<PrefetchCheck>,
    /// Package-scope steps of `run` that measured nothing, and why.
    pub step_notes: Vec<results::scope::StepNote>,
    /// Results this version cannot read.
    pub other: Vec<Unknown>,
}

impl RunData {
    /// A run's data. Each per-CPU summary's `hidden_numa` is judged again
    /// by [`hides_numa`] (the stored flag may come from an
    /// older rule), and a stored hidden-NUMA note the evidence does not
    /// support is dropped.
    pub fn of(run: &LoadedRun) -> RunData {
        let mut d = RunData::of_records(run.records());
        let judged: Vec<bool> = d
            .per_cpu_summaries
            .iter()
            .map(|s| {
                let sizes: Vec<usize> = s.groups.iter().map(|g| g.cpus.len()).collect();
                hides_numa(run, &d, &sizes).is_some()
            })
            .collect();
        for (s, hidden) in d.per_cpu_summaries.iter_mut().zip(judged) {
            if s.hidden_numa && !hidden {
                s.note = None;
            }
            s.hidden_numa = hidden;
        }
        d
    }

    /// [`RunData::of`] from some of a run's records.
    pub fn of_records<'a>(records: impl Iterator<Item = &'a Record>) -> RunData {
        let mut d = RunData::default();
        for r in records {
            match r {
                Record::Bw(b) => d.bw.push(b.as_ref().clone()),
                Record::Lat(l) => match l.as_ref() {
                    Lat::Chase(c) => d.chases.push(c.clone()),
                    Lat::Loaded(p) => d.loaded.push(p.clone()),
                    Lat::C2c(c) => d.c2c.push(c.clone()),
                },
                Record::Finding(f) => d.findings.push(f.as_ref().clone()),
                Record::Gpu(g) => d.gpu.push(g.as_ref().clone()),
                Record::Exec(e) => d.exec.push(e.as_ref().clone()),
                Record::LatSummary(s) => match s.as_ref() {
                    LatSummary::PerCpu(s) => d.per_cpu_summaries.push(s.clone()),
                    LatSummary::Sweep(s) => d.sweep_summaries.push(s.clone()),
                    LatSummary::PerCpuSweep(s) => d.per_cpu_sweep_summaries.push(s.clone()),
                    LatSummary::Loaded(s) => d.loaded_summaries.push(s.clone()),
                    LatSummary::PrefetchCheck(s) => d.prefetch_checks.push(s.clone()),
                },
                Record::Step(n) => d.step_notes.push(n.as_ref().clone()),
                Record::Unknown(u) => d.other.push(u.clone()),
            }
        }
        d.findings.sort_by_key(|f| f.severity.rank());
        d
    }

    /// Bandwidth results of one mode, in the order measured.
    pub fn bw_mode(&self, mode: bw::Mode) -> impl Iterator<Item = &BwResult> + '_ {
        self.bw.iter().filter(move |b| b.mode == mode)
    }

    /// Chases of one mode, in the order measured.
    pub fn chase_mode(&self, mode: lat::Mode) -> impl Iterator<Item = &LatResult> + '_ {
        self.chases.iter().filter(move |l| l.mode == mode)
    }
}

/// The kernel a headline figure uses among `points`: triad when present
/// (STREAM's headline), else the most frequent kernel (first seen on ties).
pub fn pick_kernel<'a>(points: impl IntoIterator<Item = &'a BwResult>) -> Option<Kernel> {
    let mut counts: Vec<(Kernel, usize)> = Vec::new();
    for p in points {
        if !p.best_gbs.is_finite() {
            continue;
        }
        if p.kernel == Kernel::Triad {
            return Some(Kernel::Triad);
        }
        match counts.iter_mut().find(|(k, _)| *k == p.kernel) {
            Some(c) => c.1 += 1,
            None => counts.push((p.kernel, 1)),
        }
    }
    let max = counts.iter().map(|c| c.1).max()?;
    counts.into_iter().find(|c| c.1 == max).map(|c| c.0)
}

/// Nodes the OS showed to the run: the configuration's count, else the
/// nodes its latency and bandwidth records name.
pub fn os_nodes(run: &LoadedRun, d: &RunData) -> u64 {
    if let Some(n) = run.config.nodes {
        return n;
    }
    let mut seen: Vec<u32> = d.chases.iter().filter_map(|c| c.cpu_node.or(c.mem_node)).collect();
    seen.extend(d.bw.iter().filter_map(|b| b.cpu_node));
    seen.sort_unstable();
    seen.dedup();
    seen.len().max(1) as u64
}

/// The evidence, independent of the OS's nodes, that a machine has NUMA
/// below them ([`results::hidden::numa_below_the_os`]): more than one
/// package, or more than one firmware proximity domain with CPUs and
/// memory (ACPI SRAT; from the stored topology, else the number of
/// domains the configuration records). `None` without such evidence.
pub fn numa_below_the_os(run: &LoadedRun) -> Option<String> {
    below(run).map(|b| b.to_string())
}

fn below(run: &LoadedRun) -> Option<NumaBelow> {
    let packages = run.machine_info.packages.as_ref().map(|c| c.get()).unwrap_or(0);
    let fw = run
        .topology
        .get()
        .and_then(|t| t.firmware_numa.as_ref())
        .and_then(|f| f.local_domains())
        .map(|n| n as u64)
        // Else the domains the configuration records (all of them: the
        // record of older runs says no more).
        .or_else(|| run.config.firmware_numa().map(|f| f.domains));
    hidden::numa_below_the_os(packages, fw)
}

/// The machine's evidence ([`numa_below_the_os`]) when per-CPU latency
/// groups of `group_cpus` CPUs each show that `run`'s settings hide NUMA
/// ([`results::hidden::hides_numa`], the rule `lat --per-cpu` measures
/// by). `None` says nothing is hidden.
pub fn hides_numa(run: &LoadedRun, d: &RunData, group_cpus: &[usize]) -> Option<NumaBelow> {
    let os_nodes = usize::try_from(os_nodes(run, d)).unwrap_or(usize::MAX);
    hidden::hides_numa(os_nodes, below(run), group_cpus.iter().copied())
}

#[cfg(test)]
#[path = "../tests/support/export.rs"]
pub(crate) mod export;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A record of `kind` read from JSON as the store reads it.
    pub fn rec(kind: &str, v: Value) -> Record {
        results::upgrade::read(kind, &v).record
    }

    /// A complete run of one machine holding these records; `nodes` is its
    /// configuration's OS node count (absent: not recorded).
    pub fn run_of(records: Vec<Record>, nodes: Option<u64>) -> LoadedRun {
        let config = match nodes {
            Some(n) => json!({ "nodes": n }),
            None => json!({}),
        };
        let mut run: LoadedRun = serde_json::from_value(json!({
            "id": 1, "uuid": "u", "label": null, "started": "2026-01-01T00:00:00Z",
            "finished": null, "status": "complete", "complete": true, "message": null,
            "machine": "m", "machine_fingerprint": "f", "config_hash": "c", "tool_version": "0",
            "command_line": "numaprobe run", "result_count": 0, "imported": false,
            "machine_info": {}, "config": config, "topology": {}, "results": []
        }))
        .unwrap();
        run.results = records
            .into_iter()
            .enumerate()
            .map(|(i, record)| results::run::StoredRecord {
                seq: i as u32 + 1,
                recorded: "2026-01-01T00:00:00Z".into(),
                record,
                as_stored: None,
            })
            .collect();
        run
    }

    /// The data of a run holding these records.
    pub fn data(records: Vec<Record>) -> RunData {
        RunData::of(&run_of(records, None))
    }

    #[test]
    fn triad_is_the_headline_kernel() {
        let b = |k: &str| rec("bw", json!({"mode": "local", "kernel": k, "best_gbs": 1.0}));
        let d = data(vec![b("copy"), b("read"), b("read"), b("triad")]);
        assert_eq!(pick_kernel(&d.bw), Some(Kernel::Triad));
        assert_eq!(pick_kernel(&d.bw[..3]), Some(Kernel::Read));
        assert_eq!(pick_kernel(&d.bw[..0]), None);
    }
}
