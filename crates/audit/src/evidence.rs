//! Measurements the audit cites: the figures `analysis::evidence` draws
//! from saved `bw` and `lat` results (remote/local ratios, local bandwidth
//! per node, interleave, latency groups found under `numa=off`, the
//! prefetch check of `lat`), the GPU feeds of `analysis::gpu`, and which
//! saved run they come from ([`from_store`]).

use std::collections::BTreeMap;

use results::lat::PrefetchCheck;
use results::Record;
use serde::{Deserialize, Serialize};
use store::{LoadedRun, RunId, Store, StoreError};

/// Optional measured figures; every rule works without them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Where the figures come from (e.g. `run 12, 2026-11-21`).
    pub source: Option<String>,
    /// Mean remote idle latency / mean local idle latency.
    pub remote_local_latency_ratio: Option<f64>,
    /// Worst remote pair latency / its CPU node's local latency.
    pub worst_remote_local_latency_ratio: Option<f64>,
    /// Mean remote bandwidth / mean local bandwidth (below 1).
    pub remote_local_bandwidth_ratio: Option<f64>,
    /// Best local bandwidth per node (CPUs and memory on that node), GB/s.
    pub local_best_gbs_per_node: BTreeMap<u32, f64>,
    /// Measured fraction of the theoretical peak, when the caller knows it
    /// directly; otherwise the rules compute it from `local_best_gbs_per_node`.
    pub fraction_of_peak: Option<f64>,
    /// Best interleaved bandwidth, GB/s.
    pub interleave_gbs: Option<f64>,
    /// Interleaved bandwidth / best local bandwidth.
    pub interleave_local_ratio: Option<f64>,
    /// Distinct latency levels seen from CPUs to memory (per-CPU latency
    /// sweep): more than one under `numa=off` shows hidden NUMA.
    pub latency_groups: Option<u32>,
    /// The latest prefetch check of `lat` (stride 64 B against the default
    /// stride), with the run it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetch: Option<PrefetchEvidence>,
    /// The latest `numaprobe gpu` matrix: for each GPU, the node that
    /// feeds it fastest from pinned memory, with the run it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_feeds: Vec<GpuFeedEvidence>,
    /// The run's declared distances (SLIT, HMAT) against its latency
    /// matrix ([`analysis::distances`]), or why they were not compared;
    /// absent for a machine of one node. Not serialized here: `audit
    /// --json` (console's document) writes it after the other fields, with
    /// why nothing was compared in words.
    #[serde(skip)]
    pub distances: Option<analysis::distances::Check>,
}

/// One GPU's measured feed (host to device, `numaprobe gpu`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFeedEvidence {
    /// The device's PCI address, to match `topo`'s devices.
    pub pci_address: String,
    pub gpu: u32,
    /// The fastest node beyond the spread of the copies (`None`: no node
    /// measurably faster).
    pub best_node: Option<u32>,
    /// The node with the highest median and its GB/s.
    pub top_node: u32,
    pub top_gbs: f64,
    /// The largest shortfall of another node, percent of the top's figure.
    pub worst_penalty_pct: Option<f64>,
    /// The run holding the matrix.
    pub source: Option<String>,
}

/// The GPU feeds of a run's `gpu` records (empty without them).
pub fn gpu_feeds<'a>(records: impl IntoIterator<Item = &'a Record>) -> Vec<GpuFeedEvidence> {
    let copies: Vec<results::gpu::GpuCopy> = records
        .into_iter()
        .filter_map(|r| match r {
            Record::Gpu(g) => Some(g.as_ref().clone()),
            _ => None,
        })
        .collect();
    analysis::gpu::feeds(&copies)
        .into_iter()
        .map(|f| GpuFeedEvidence {
            pci_address: copies
                .iter()
                .find(|c| c.gpu == f.gpu)
                .map(|c| c.pci_address.clone())
                .unwrap_or_default(),
            gpu: f.gpu,
            best_node: f.best_node,
            top_node: f.top_node,
            top_gbs: f.top_gbs,
            worst_penalty_pct: f.others.iter().map(|o| o.penalty_pct).max_by(f64::total_cmp),
            source: None,
        })
        .collect()
}

/// A saved prefetch check and where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrefetchEvidence {
    /// The run holding the check (e.g. `run 12 (2026-11-21T...)`); set by
    /// the caller that loaded it.
    pub source: Option<String>,
    #[serde(flatten)]
    pub check: PrefetchCheck,
}

impl PrefetchEvidence {
    /// The figures in one line: `stride 64 B: 101.7 ns, stride 256 B: 162.0
    /// ns, prefetchers shorten neighbour loads by 37%`, then how it was
    /// measured and where it comes from.
    pub fn describe(&self) -> String {
        let c = &self.check;
        let effect = if !c.stable {
            "undecided: the check was disturbed".to_string()
        } else if c.significant && c.shortened_pct > 0.0 {
            format!("prefetchers shorten neighbour loads by {:.0}%", c.shortened_pct)
        } else if c.significant {
            format!("stride 64 B slower by {:.0}%", -c.shortened_pct)
        } else {
            format!("no difference above the noise ({:.1} ns)", c.noise_ns)
        };
        let from = self.source.as_deref().map(|s| format!(", {s}")).unwrap_or_default();
        format!(
            "stride 64 B: {:.1} ns, stride {} B: {:.1} ns, {effect} ({} MiB rings, {} pages, CPU {}{from})",
            c.line_ns,
            c.stride_bytes,
            c.stride_ns,
            c.size_bytes >> 20,
            c.page_size,
            c.cpu
        )
    }
}

pub use analysis::evidence::{count_groups, prefetch_check};

/// Which saved run the audit cites.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source<'a> {
    /// The run the user named (`audit --run`).
    Run(RunId),
    /// The latest run of the machine with this fingerprint that holds
    /// figures the audit cites (bandwidth, latency or a prefetch check; a
    /// later `exec` or `audit` run is passed over), whatever settings it
    /// ran under (the machine fingerprint
    /// survives SNC, SMT and `numa=off`); its prefetch check, when it has
    /// none, from the latest of the machine's runs that has one.
    LatestOfMachine(&'a str),
}

/// The evidence in `db` from `source`, and a note for the user when the
/// run found holds nothing to cite. No run (an empty database, a machine
/// never measured) is empty evidence without a note.
pub fn from_store(db: &Store, source: Source) -> Result<(Evidence, Option<String>), StoreError> {
    let loaded = match source {
        Source::Run(id) => Some(db.load_run(id)?),
        Source::LatestOfMachine(me) => latest_with_figures(db, me)?,
    };
    let gpu = match source {
        Source::Run(_) => Vec::new(),
        Source::LatestOfMachine(me) => latest_gpu_feeds(db, me)?,
    };
    let Some(l) = loaded else {
        return Ok((Evidence { gpu_feeds: gpu, ..Evidence::default() }, None));
    };
    let mut ev = Evidence::from_records(l.records());
    let src = source_of(&l);
    let distances = analysis::distances::of_run(&l, &analysis::data::RunData::of(&l));
    if let Some(p) = &mut ev.prefetch {
        p.source = Some(src.clone());
    } else if let Source::LatestOfMachine(me) = source {
        // The latest run may not have measured latency: the prefetch
        // evidence comes from the latest run of this machine that did.
        ev.prefetch = latest_prefetch_check(db, me, l.summary.id)?;
    }
    // The GPU matrix of the run asked for, else the machine's latest one
    // (a `gpu` run holds no bandwidth or latency and the other way round).
    let mut own = gpu_feeds(l.records());
    for f in &mut own {
        f.source = Some(src.clone());
    }
    let gpu_feeds = if own.is_empty() { gpu } else { own };
    if ev.is_empty() {
        let note = format!("{src} has no bandwidth or latency results to cite");
        return Ok((Evidence { gpu_feeds, ..Evidence::default() }, Some(note)));
    }
    ev.source = Some(src);
    ev.gpu_feeds = gpu_feeds;
    ev.distances = distances;
    Ok((ev, None))
}

/// The GPU feeds of the latest run of machine `me` that measured GPUs.
fn latest_gpu_feeds(db: &Store, me: &str) -> Result<Vec<GpuFeedEvidence>, StoreError> {
    for s in newest_first(db, me)? {
        let l = db.load_run(s.id)?;
        let mut feeds = gpu_feeds(l.records());
        if !feeds.is_empty() {
            let src = source_of(&l);
            for f in &mut feeds {
                f.source = Some(src.clone());
            }
            return Ok(feeds);
        }
    }
    Ok(Vec::new())
}

/// The machine's runs, newest first (by the instant their start time
/// names, then by id).
fn newest_first(db: &Store, me: &str) -> Result<Vec<store::RunSummary>, StoreError> {
    let mut runs = db.list_runs_for_machine(me)?;
    runs.sort_by_cached_key(|s| (store::util::time_order_key(&s.started), s.id));
    runs.reverse();
    Ok(runs)
}

/// The latest run of machine `me` that holds a figure the audit cites:
/// a run of `exec` or `audit` (results, but no bandwidth or latency) is
/// passed over for an older one that measured. When none did, the latest
/// run holding results, so that the note names it.
fn latest_with_figures(db: &Store, me: &str) -> Result<Option<LoadedRun>, StoreError> {
    for s in newest_first(db, me)? {
        let l = db.load_run(s.id)?;
        if !Evidence::from_records(l.records()).is_empty() {
            return Ok(Some(l));
        }
    }
    db.latest_run_of_machine(me)?.map(|id| db.load_run(id)).transpose()
}

/// `run N (started, label)`: where evidence comes from.
fn source_of(l: &LoadedRun) -> String {
    let label = l.summary.label.as_deref().map(|s| format!(", {s}")).unwrap_or_default();
    format!("run {} ({}{label})", l.summary.id, l.summary.started)
}

/// The prefetch check of the latest run of machine `me` that has one,
/// other than `seen` (already read).
fn latest_prefetch_check(
    db: &Store,
    me: &str,
    seen: RunId,
) -> Result<Option<PrefetchEvidence>, StoreError> {
    for s in newest_first(db, me)?.iter().filter(|s| s.id != seen) {
        let l = db.load_run(s.id)?;
        if let Some(check) = prefetch_check(l.records()) {
            return Ok(Some(PrefetchEvidence { source: Some(source_of(&l)), check }));
        }
    }
    Ok(None)
}

impl Evidence {
    /// True when no figure is known.
    pub fn is_empty(&self) -> bool {
        self.remote_local_latency_ratio.is_none()
            && self.remote_local_bandwidth_ratio.is_none()
            && self.local_best_gbs_per_node.is_empty()
            && self.fraction_of_peak.is_none()
            && self.interleave_gbs.is_none()
            && self.latency_groups.is_none()
            && self.prefetch.is_none()
    }

    /// The figures of a run's records ([`analysis::evidence::figures`]),
    /// without a source yet.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a Record> + Clone) -> Evidence {
        let f = analysis::evidence::figures(records);
        Evidence {
            source: None,
            remote_local_latency_ratio: f.remote_local_latency_ratio,
            worst_remote_local_latency_ratio: f.worst_remote_local_latency_ratio,
            remote_local_bandwidth_ratio: f.remote_local_bandwidth_ratio,
            local_best_gbs_per_node: f.local_best_gbs_per_node,
            fraction_of_peak: None,
            interleave_gbs: f.interleave_gbs,
            interleave_local_ratio: f.interleave_local_ratio,
            latency_groups: f.latency_groups,
            prefetch: f.prefetch.map(|check| PrefetchEvidence { source: None, check }),
            gpu_feeds: Vec::new(),
            distances: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::lat::LatSummary;
    use serde_json::{json, Value};

    /// Records read from stored JSON (`kind` beside the payload's fields).
    fn records(v: &[Value]) -> Vec<Record> {
        v.iter()
            .map(|r| {
                let kind = r["kind"].as_str().unwrap_or("").to_string();
                results::upgrade::read(&kind, r).record
            })
            .collect()
    }

    #[test]
    fn ratios_from_matrix_results() {
        let results = records(&[
            json!({"kind":"lat","mode":"matrix","cpu_node":0,"mem_node":0,"median_ns":90.0}),
            json!({"kind":"lat","mode":"matrix","cpu_node":0,"mem_node":1,"median_ns":162.0}),
            json!({"kind":"lat","mode":"matrix","cpu_node":1,"mem_node":1,"median_ns":90.0}),
            json!({"kind":"lat","mode":"matrix","cpu_node":1,"mem_node":0,"median_ns":144.0}),
            json!({"kind":"bw","mode":"matrix","kernel":"triad","cpu_node":0,"mem_node":0,"best_gbs":100.0,"median_gbs":98.0}),
            json!({"kind":"bw","mode":"matrix","kernel":"copy","cpu_node":0,"mem_node":0,"best_gbs":110.0,"median_gbs":98.0}),
            json!({"kind":"bw","mode":"matrix","kernel":"triad","cpu_node":0,"mem_node":1,"best_gbs":40.0}),
            json!({"kind":"bw","mode":"interleave","kernel":"triad","best_gbs":55.0}),
            json!({"kind":"note","text":"ignored"}),
            json!({"kind":"lat","cpu_node":0}),
            json!({"kind":"lat","mode":"sweep","cpu_node":0,"mem_node":1,"median_ns":3.0}),
            json!({"kind":"bw","mode":"matrix","kernel":"triad","cpu_node":1,"mem_node":1,"best_gbs":900.0,"interrupted":true}),
            json!({"kind":"bw","mode":"matrix","kernel":"triad","cpu_node":1,"mem_node":1,"best_gbs":900.0,"validated":false}),
            json!({"kind":"lat","mode":"matrix","cpu_node":1,"mem_node":0,"median_ns":999.0,"interrupted":true}),
        ]);
        let ev = Evidence::from_records(&results);
        assert!((ev.remote_local_latency_ratio.unwrap() - 1.7).abs() < 1e-9);
        assert!((ev.worst_remote_local_latency_ratio.unwrap() - 1.8).abs() < 1e-9);
        assert!((ev.remote_local_bandwidth_ratio.unwrap() - 40.0 / 110.0).abs() < 1e-9);
        assert_eq!(ev.local_best_gbs_per_node.get(&0), Some(&110.0));
        assert!((ev.interleave_local_ratio.unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(ev.latency_groups, None);
        assert!(!ev.is_empty());
        assert!(Evidence::from_records(&[]).is_empty());
    }

    #[test]
    fn latency_groups_from_per_cpu_sweep() {
        let mut results: Vec<Value> = (0..8)
            .map(|c| json!({"kind":"lat","mode":"per-cpu","cpu":c,"cpu_node":0,"mem_node":0,"median_ns": if c < 4 { 80.0 + c as f64 } else { 140.0 }}))
            .collect();
        assert_eq!(Evidence::from_records(&records(&results)).latency_groups, Some(2));
        results.truncate(4);
        assert_eq!(Evidence::from_records(&records(&results)).latency_groups, Some(1));
    }

    /// A store with two runs of machine `m1`: an older one holding a
    /// prefetch check, a newer one holding only a bandwidth result.
    fn store_with_runs(dir: &std::path::Path) -> (Store, RunId, RunId) {
        let mut db = Store::open(dir.join("r.db")).unwrap();
        let machine: results::context::Machine =
            serde_json::from_value(json!({"fingerprint": "m1"})).unwrap();
        let mut ids = Vec::new();
        for (started, record) in [
            (
                "2026-01-01T00:00:00Z",
                Record::LatSummary(Box::new(LatSummary::PrefetchCheck(PrefetchCheck::judge(
                    0,
                    Some(0),
                    1 << 30,
                    "4k".into(),
                    256,
                    (100.0, 1.0),
                    (160.0, 1.0),
                )))),
            ),
            (
                "2026-01-02T00:00:00Z",
                records(&[json!({"kind": "bw", "mode": "local",
                "kernel": "triad", "cpu_node": 0, "mem_node": 0, "best_gbs": 50.0})])[0]
                    .clone(),
            ),
        ] {
            let mut new = store::NewRun::new("numaprobe run", "0");
            new.machine = machine.clone();
            new.started = Some(started.into());
            let id = db.begin_run(&new).unwrap();
            db.add_result(id, &record).unwrap();
            db.finish_run(id, store::RunStatus::Complete, None).unwrap();
            ids.push(id);
        }
        (db, ids[0], ids[1])
    }

    #[test]
    fn the_latest_run_is_cited_with_the_prefetch_check_of_an_older_one() {
        let dir = tempfile::tempdir().unwrap();
        let (db, older, newer) = store_with_runs(dir.path());
        let (ev, note) = from_store(&db, Source::LatestOfMachine("m1")).unwrap();
        assert_eq!(note, None);
        assert_eq!(ev.local_best_gbs_per_node.get(&0), Some(&50.0));
        assert!(ev.source.as_deref().unwrap().starts_with(&format!("run {newer} (")));
        let p = ev.prefetch.expect("the older run's check");
        assert!(p.source.as_deref().unwrap().starts_with(&format!("run {older} (")));
        // a named run is cited alone; with nothing to cite it says so
        let (ev, note) = from_store(&db, Source::Run(older)).unwrap();
        assert!(ev.prefetch.is_some() && ev.local_best_gbs_per_node.is_empty());
        assert_eq!(note, None);
        let (ev, note) = from_store(&db, Source::LatestOfMachine("another")).unwrap();
        assert!(ev.is_empty() && note.is_none());
    }

    #[test]
    fn a_later_run_without_figures_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let (mut db, _, measured) = store_with_runs(dir.path());
        // a later `exec` run: results, but nothing the audit can cite
        let mut new = store::NewRun::new("numaprobe exec -- sh -c 'exit 3'", "0");
        new.machine = serde_json::from_value(json!({"fingerprint": "m1"})).unwrap();
        new.started = Some("2026-01-03T00:00:00Z".into());
        let exec = db.begin_run(&new).unwrap();
        let rec = results::upgrade::read(
            "exec",
            &json!({"policy": "default", "runs": [{"wall_s": 0.01, "exit_code": 3, "ok": false}]}),
        )
        .record;
        db.add_result(exec, &rec).unwrap();
        db.finish_run(exec, store::RunStatus::Failed, None).unwrap();
        let (ev, note) = from_store(&db, Source::LatestOfMachine("m1")).unwrap();
        assert_eq!(note, None);
        assert!(ev.source.as_deref().unwrap().starts_with(&format!("run {measured} (")));
        assert_eq!(ev.local_best_gbs_per_node.get(&0), Some(&50.0));
        // named, the exec run is cited as it is: nothing to cite
        let (ev, note) = from_store(&db, Source::Run(exec)).unwrap();
        assert!(ev.is_empty());
        assert!(note.unwrap().contains(&format!("run {exec} (")));
    }

    #[test]
    fn the_latest_gpu_matrix_is_cited_beside_a_later_run_of_other_figures() {
        let dir = tempfile::tempdir().unwrap();
        let (mut db, _, measured) = store_with_runs(dir.path());
        // An earlier `gpu` run: GPU 0 fed from node 0 at 24 and node 1 at 12.
        let mut new = store::NewRun::new("numaprobe gpu", "0");
        new.machine = serde_json::from_value(json!({"fingerprint": "m1"})).unwrap();
        new.started = Some("2026-01-01T12:00:00Z".into());
        let gpu = db.begin_run(&new).unwrap();
        for (node, gbs) in [(0, [24.0, 24.2]), (1, [12.0, 12.1])] {
            let c = results::gpu::GpuCopy {
                gpu: 0,
                device: "d".into(),
                pci_address: "0000:3b:00.0".into(),
                mem_node: node,
                direction: results::gpu::Direction::H2d,
                size_bytes: 1 << 30,
                gbs: gbs.to_vec(),
                median_gbs: (gbs[0] + gbs[1]) / 2.0,
                timer: "device events".into(),
                on_node: 1.0,
                together: vec![],
            };
            db.add_result(gpu, &c.into()).unwrap();
        }
        db.finish_run(gpu, store::RunStatus::Complete, None).unwrap();
        let (ev, note) = from_store(&db, Source::LatestOfMachine("m1")).unwrap();
        assert_eq!(note, None);
        // The bandwidth figures come from the latest run that has them ...
        assert!(ev.source.as_deref().unwrap().starts_with(&format!("run {measured} (")));
        // ... the GPU matrix from the gpu run.
        assert_eq!(ev.gpu_feeds.len(), 1, "{ev:?}");
        let f = &ev.gpu_feeds[0];
        assert_eq!((f.pci_address.as_str(), f.best_node, f.top_node), ("0000:3b:00.0", Some(0), 0));
        assert!((f.top_gbs - 24.1).abs() < 1e-9, "{f:?}");
        assert!((f.worst_penalty_pct.unwrap() - (1.0 - 12.05 / 24.1) * 100.0).abs() < 1e-9);
        assert!(f.source.as_deref().unwrap().starts_with(&format!("run {gpu} (")));
    }
}
