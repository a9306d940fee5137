//! The fleet model: many hosts' runs grouped by machine model, each
//! host's headline metrics against its peers' median, outliers flagged
//! robustly (median and MAD), and configuration drift (settings on which a
//! host differs from its group's majority). `numaprobe fleet` prints it
//! (drawn by `report::fleet`, which words what this module finds: the
//! method, a group's missing peers, the roster's warnings, why a host is
//! left out, each host's impossible figures; console's `fleet::Doc`
//! writes the `--json` document);
//! `docs/fleet.md` documents the method and the `--json` contract.
//!
//! Hosts of different models are never peers: the model (CPU model,
//! packages, physical cores, installed memory, memory speed when known) is
//! always part of a group's key; `--group-by label|config` only splits
//! groups further.

use std::collections::{BTreeMap, BTreeSet};

use results::context::{Count, Machine, Scalar};
use results::run::LoadedRun;
use results::stats::{mad, median};
use serde::Serialize;

use crate::data::RunData;
use crate::metric_id::MetricId;
use crate::metrics::{feeds_headline, metrics, MetricKey};

mod roster;
use crate::impossible::Impossible;
pub use roster::{
    host_key, parse_unmeasured, BadLine, Freshness, Incomplete, LineFault, NotMeasured, PassedOver,
    RunRef, UnmeasuredInput, Warning, WithoutFigures, DEFAULT_MAX_AGE_S,
};

/// What hosts are compared with: their model, and optionally the same
/// label or the same configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupBy {
    Model,
    Label,
    Config,
}

/// The fewest hosts with a metric for a group to flag outliers: with two,
/// nothing says which one is odd.
pub const MIN_PEERS: usize = 3;

/// The robust z-score a host must also exceed to be flagged:
/// |value − median| / (1.4826 · MAD) > 3.5 (Iglewicz and Hoaglin), so the
/// normal spread of a noisy group flags nobody.
pub const ROBUST_Z: f64 = 3.5;

/// The default threshold, % worse than the peer median.
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;

/// Entries of the configuration left out of drift: how the run was asked
/// for (`budget`), the fingerprint of the rest, and the raw kernel command
/// line (it names each host's root disk; its NUMA options are compared as
/// `cmdline_options.*`).
const NOT_SETTINGS: [&str; 3] = ["budget", "fingerprint", "cmdline"];

/// Machine facts that make the model (or the host), not settings; `dimms`
/// is compared through the configuration's `dimm_population`.
const IDENTITY: [&str; 15] = [
    "machine_id",
    "machine_id_source",
    "installed_gib",
    "dimms",
    "fingerprint",
    "description",
    "hostname",
    "cpu_model",
    "cpu_vendor",
    "arch",
    "packages",
    "cores",
    "cpus",
    "nodes",
    "mem_total_bytes",
];

/// How hosts are judged (`report::fleet::method` words it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Method {
    /// % worse than the peer median.
    pub threshold_pct: f64,
    /// The robust z-score a host must also exceed ([`ROBUST_Z`]).
    pub robust_z: f64,
    /// The fewest hosts of a group that flags anyone ([`MIN_PEERS`]).
    pub min_peers: usize,
}

impl Method {
    /// The method of a threshold.
    pub fn of(threshold_pct: f64) -> Method {
        Method { threshold_pct, robust_z: ROBUST_Z, min_peers: MIN_PEERS }
    }
}

/// A group with too few hosts to flag any (`report::fleet::peers_missing`
/// words it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeersMissing {
    /// The group's hosts.
    pub hosts: usize,
    /// The fewest needed ([`MIN_PEERS`]).
    pub min_peers: usize,
}

/// Why a host is left out (`report::fleet::skip` words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// No run of it has the label the fleet was asked for.
    NotLabelled { label: String },
    /// No run of it holds the fleet's figures; what its latest run is.
    NoFigures { latest: Option<WithoutFigures> },
}

/// A fleet: groups of peer hosts and what was found in each.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    pub group_by: GroupBy,
    pub threshold_pct: f64,
    /// The method (worded in the reports and the `--json` document).
    pub method: Method,
    /// Only runs with this label were considered.
    pub label: Option<String>,
    /// Runs older than this are stale, never healthy.
    pub max_age_s: u64,
    /// The time ages are measured from (RFC 3339 UTC).
    pub now: String,
    /// Hosts in the groups.
    pub hosts: usize,
    /// Hosts in the groups fresh, compared with peers and not flagged.
    pub healthy: usize,
    /// Hosts in the groups whose run is older than `max_age_s`.
    pub stale: usize,
    /// Hosts in the groups whose run started after `now` (a clock ahead):
    /// suspect, never healthy.
    pub future: usize,
    /// Hosts in groups with fewer than 3 hosts: not judged (no peers),
    /// never healthy.
    pub no_peers: usize,
    pub groups: Vec<Group>,
    /// Duplicate host names, renamed machines.
    pub warnings: Vec<Warning>,
    /// Hosts whose latest run is incomplete or failed, with why.
    pub incomplete: Vec<Incomplete>,
    /// Hosts the orchestrator could not measure, with its error.
    pub unmeasured: Vec<NotMeasured>,
    /// Hosts left out, with why (no run with the `--label`).
    pub skipped: Vec<Skipped>,
    /// Hosts in the groups whose declared distances (SLIT, HMAT) order
    /// the nodes otherwise than their run measured
    /// ([`crate::distances`]).
    pub declared_order_disagree: usize,
}

/// One group of peers.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The machine model, e.g. `2x Intel Xeon Silver 4314, 32 cores, 256 GiB`.
    pub model: String,
    /// The label (`--group-by label`) or configuration fingerprint
    /// (`--group-by config`) that also defines the group.
    pub subgroup: Option<String>,
    /// Fewer than [`MIN_PEERS`] hosts: nobody is flagged.
    pub peers_missing: bool,
    /// Why nothing was flagged, when peers are missing.
    pub note: Option<PeersMissing>,
    /// The peer median and MAD of each metric measured by any host.
    pub medians: Vec<PeerStat>,
    /// Settings whose values differ inside the group, with how many hosts
    /// hold each value.
    pub drift_settings: Vec<DriftSetting>,
    pub hosts: Vec<Host>,
}

/// A metric's peer statistics in a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerStat {
    pub metric: MetricId,
    /// The metric as people call it (`Local bandwidth`).
    pub name: &'static str,
    pub unit: &'static str,
    pub higher_is_better: bool,
    pub median: f64,
    /// Median absolute deviation (same unit).
    pub mad: f64,
    pub hosts: usize,
}

/// A setting that differs inside a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftSetting {
    pub setting: String,
    /// The value most hosts hold (absent on a tie).
    pub majority: Option<String>,
    /// Each value with how many hosts hold it.
    pub values: BTreeMap<String, usize>,
}

/// One host in its group.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    pub host: String,
    /// The machine's identity (a hash; absent in runs recorded before it).
    pub machine_id: Option<String>,
    /// Where the identity came from: `dmi_product_uuid`, `machine_id`,
    /// `hostname` or `NUMAPROBE_MACHINE_ID`.
    pub machine_id_source: Option<String>,
    /// Other host names this machine's runs recorded (renamed).
    pub also_named: Vec<String>,
    /// Another machine of the fleet has the same host name.
    pub duplicate_hostname: bool,
    /// The id in this database of the run compared: the host's latest run
    /// holding the fleet's figures.
    pub run: i64,
    pub run_uuid: String,
    pub label: Option<String>,
    pub started: String,
    /// Seconds from `started` to the fleet's `now`.
    pub age_s: Option<f64>,
    /// Older than the fleet's maximum age: never healthy.
    pub stale: bool,
    /// Started after the fleet's `now` (a clock ahead): suspect, never
    /// healthy.
    pub future: bool,
    /// Fresh, compared with peers (a group of 3 hosts or more) and not
    /// flagged.
    pub healthy: bool,
    /// Any flag raised.
    pub outlier: bool,
    pub flags: Vec<Flag>,
    /// Names of the settings that differ from the group's majority.
    pub drift: Vec<String>,
    /// This host's value of each metric and its deviation from the median.
    pub metrics: BTreeMap<MetricId, HostMetric>,
    /// The host's runs newer than `run` that hold none of the fleet's
    /// figures (an `exec` run), newest first, each with why: not compared.
    pub passed_over: Vec<PassedOver>,
    /// Whether the declared distances order the nodes otherwise than the
    /// run measured (null when not compared: one node, no matrix, no
    /// SLIT).
    pub declared_order_disagrees: Option<bool>,
    /// The host's headline figures that are impossible
    /// ([`crate::impossible`]), by metric id, each with why.
    pub impossible: BTreeMap<MetricId, Impossible>,
}

/// A metric on which a host is worse than its peers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    pub metric: MetricId,
    /// (value − median) / median, %: negative for bandwidth below the
    /// median, positive for latency above it.
    pub deviation_pct: f64,
    pub value: f64,
    pub median: f64,
    pub unit: &'static str,
}

/// A host's value of a metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostMetric {
    pub value: f64,
    pub deviation_pct: Option<f64>,
    /// The figure's noise (robust CV %, [`crate::metrics::Metric`]): what
    /// every output rounds it to, so `fleet` writes the figure as the
    /// run's own tables do.
    pub noise_pct: Option<f64>,
}

/// A host left out.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub host: String,
    pub reason: Skip,
}

/// What the fleet keeps of one run: its identity, model, headline metric
/// values and settings, without its results (so a thousand hosts' runs
/// never sit in memory at once).
#[derive(Debug, Clone, PartialEq)]
pub struct HostRun {
    pub host: String,
    /// What the machine is known by ([`host_key`]).
    pub key: String,
    pub machine_id: Option<String>,
    pub machine_id_source: Option<String>,
    pub model: String,
    pub id: i64,
    pub uuid: String,
    pub label: Option<String>,
    pub started: String,
    pub complete: bool,
    /// `complete`, `incomplete`, `failed`, `running`.
    pub status: String,
    pub message: Option<String>,
    pub config_hash: String,
    pub metrics: BTreeMap<MetricKey, f64>,
    /// Each metric's noise (robust CV %), what its figure is rounded to.
    pub noise: BTreeMap<MetricKey, f64>,
    /// It holds results of `exec` (a program's policies): without the
    /// fleet's figures it is another kind of run than a measurement.
    pub exec: bool,
    pub settings: BTreeMap<String, String>,
    /// Declared and measured distance orders disagree (`None`: not
    /// compared).
    pub declared_order_disagrees: Option<bool>,
    /// Impossible headline figures, by metric, with why.
    pub impossible: BTreeMap<MetricKey, Impossible>,
}

/// The kinds of stored result (`Record::kind`) [`HostRun::of`] reads: a
/// run loaded with only these reduces to the same `HostRun` (`fleet` loads
/// one run per host this way).
pub const HOST_RUN_KINDS: [&str; 4] = ["bw", "lat", "lat-summary", "exec"];

impl HostRun {
    /// The run reduced.
    pub fn of(run: &LoadedRun) -> HostRun {
        let (key, machine_id, machine_id_source) = host_key(run);
        // Only the records a headline metric reads: the rest (latency
        // sweeps above all) is most of a run and the fleet reads
        // thousands of runs.
        let d = RunData::of_records(run.records().filter(|r| feeds_headline(r) || sweep(r)));
        let figures = metrics(&d);
        let declared_order_disagrees = match crate::distances::of_run(run, &d) {
            Some(c @ crate::distances::Check::Checked { .. }) => Some(c.order_disagrees()),
            _ => None,
        };
        let impossible = crate::impossible::headlines(&d);
        HostRun {
            host: host_of(run),
            key,
            machine_id,
            machine_id_source,
            status: run.summary.status.as_str().to_string(),
            message: run.summary.message.clone(),
            model: model_of(run),
            id: run.summary.id.0,
            uuid: run.summary.uuid.clone(),
            label: run.summary.label.clone(),
            started: run.summary.started.clone(),
            complete: run.summary.complete,
            config_hash: run.summary.config_hash.clone(),
            metrics: figures.iter().map(|(k, m)| (*k, m.value)).collect(),
            noise: figures.iter().map(|(k, m)| (*k, m.noise_pct)).collect(),
            exec: run.records().any(|r| matches!(r, results::Record::Exec(_))),
            settings: settings_of(run),
            declared_order_disagrees,
            impossible,
        }
    }
}

/// A latency sweep's summary: the last-level cache plateau an impossible
/// latency is judged against.
fn sweep(r: &results::Record) -> bool {
    use results::lat::LatSummary;
    matches!(r, results::Record::LatSummary(s) if matches!(s.as_ref(), LatSummary::Sweep(_) | LatSummary::PerCpuSweep(_)))
}

/// The name a run's host goes by: the recorded host name, else the
/// machine fingerprint.
pub fn host_of(run: &LoadedRun) -> String {
    run.machine_info
        .hostname()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| run.summary.machine_fingerprint.clone())
}

fn gib(bytes: f64) -> f64 {
    (bytes / (1u64 << 30) as f64).round()
}

/// The DIMMs' rated memory speed when the machine facts record one (MT/s),
/// in the shapes machine documents have had. The configured speed is a
/// BIOS setting: the configuration's `memory_speed_mts`, compared as
/// drift.
fn memory_speed(info: &Machine) -> Option<String> {
    let dimms = info.dimm_summary();
    let memory = info.memory.as_ref();
    info.memory_speed_mts
        .as_ref()
        .map(Scalar::to_string)
        .or_else(|| {
            dimms.and_then(|d| d.speed_mts.or(d.configured_speed_mts)).map(|s| s.to_string())
        })
        .or_else(|| memory.and_then(|m| m.speed_mts.as_ref()).map(Scalar::to_string))
        .or_else(|| memory.and_then(|m| m.configured_speed_mts.as_ref()).map(Scalar::to_string))
}

/// The machine model of a run: CPU model, packages, physical cores,
/// installed memory (GiB) and memory speed when recorded.
pub fn model_of(run: &LoadedRun) -> String {
    let i = &run.machine_info;
    let cpu = i.cpu_model().unwrap_or("unknown CPU");
    let mut s = match &i.packages {
        Some(Count::Number(p)) => format!("{p}x {cpu}"),
        _ => cpu.to_string(),
    };
    if let Some(c) = i.cores {
        s.push_str(&format!(", {c} cores"));
    }
    // Installed memory (SMBIOS, else coarse MemTotal) when recorded: the
    // kernel's MemTotal moves with crashkernel= and huge pages.
    if let Some(g) = i.installed_gib {
        s.push_str(&format!(", {g} GiB"));
    } else if let Some(b) = i.mem_total_bytes {
        s.push_str(&format!(", {} GiB", gib(b as f64)));
    }
    if let Some(speed) = memory_speed(i) {
        s.push_str(&format!(", {speed} MT/s"));
    }
    s
}

/// The settings a run was measured under, by name: the configuration
/// document and the machine facts that are not the model (BIOS version,
/// DIMM population and speed, ...), flattened to dotted names.
pub fn settings_of(run: &LoadedRun) -> BTreeMap<String, String> {
    let top = |name: &str| name.split('.').next().unwrap_or_default().to_string();
    let config = run.config.settings().filter(|s| !NOT_SETTINGS.contains(&top(&s.name).as_str()));
    let machine =
        run.machine_info.settings().filter(|s| !IDENTITY.contains(&top(&s.name).as_str()));
    config.chain(machine).map(|s| (s.name, s.value.compared_text())).collect()
}

/// Builds the fleet from runs (any order, any hosts): per host the latest
/// run (only those labelled `label` when given; with `GroupBy::Label`, the
/// latest of each label), compared when complete; ages from now, the
/// default maximum age.
pub fn build(
    runs: &[LoadedRun],
    group_by: GroupBy,
    threshold_pct: f64,
    label: Option<&str>,
) -> Fleet {
    let hosts: Vec<HostRun> = runs.iter().map(HostRun::of).collect();
    build_from(&hosts, group_by, threshold_pct, label)
}

/// [`build`] from runs already reduced to [`HostRun`]s.
pub fn build_from(
    runs: &[HostRun],
    group_by: GroupBy,
    threshold_pct: f64,
    label: Option<&str>,
) -> Fleet {
    build_fresh(runs, group_by, threshold_pct, label, &Freshness::now())
}

/// [`build_from`] with a maximum age, a time to measure ages from and the
/// hosts the orchestrator could not measure.
pub fn build_fresh(
    runs: &[HostRun],
    group_by: GroupBy,
    threshold_pct: f64,
    label: Option<&str>,
    fresh: &Freshness<'_>,
) -> Fleet {
    let r = roster::roster(runs, group_by == GroupBy::Label, label, fresh);
    let mut groups: BTreeMap<(String, String), Vec<&roster::Member>> = BTreeMap::new();
    for m in &r.members {
        let sub = match group_by {
            GroupBy::Model => String::new(),
            GroupBy::Label => m.sub.clone(),
            GroupBy::Config => m.run.config_hash.clone(),
        };
        groups.entry((m.run.model.clone(), sub)).or_default().push(m);
    }
    let hosts = r.members.iter().map(|m| m.run.key.as_str()).collect::<BTreeSet<_>>().len();
    let groups: Vec<Group> = groups
        .into_iter()
        .map(|((model, sub), members)| {
            let subgroup = match group_by {
                GroupBy::Model => None,
                _ => Some(sub),
            };
            group(model, subgroup, &members, threshold_pct)
        })
        .collect();
    let all = || groups.iter().flat_map(|g| &g.hosts);
    let healthy = all().filter(|h| h.healthy).count();
    let stale = all().filter(|h| h.stale).count();
    let future = all().filter(|h| h.future).count();
    let no_peers = groups.iter().filter(|g| g.peers_missing).map(|g| g.hosts.len()).sum();
    let declared_order_disagree =
        all().filter(|h| h.declared_order_disagrees == Some(true)).count();
    let secs = fresh.now_ms.div_euclid(1000);
    Fleet {
        group_by,
        threshold_pct,
        method: Method::of(threshold_pct),
        label: label.map(str::to_string),
        max_age_s: fresh.max_age_s,
        now: results::time::format_utc(secs, fresh.now_ms.rem_euclid(1000) as u32),
        hosts,
        healthy,
        stale,
        future,
        no_peers,
        groups,
        warnings: r.warnings,
        incomplete: r.incomplete,
        unmeasured: r.unmeasured,
        skipped: r.skipped,
        declared_order_disagree,
    }
}

fn group(
    model: String,
    subgroup: Option<String>,
    members: &[&roster::Member],
    threshold: f64,
) -> Group {
    let values: Vec<&BTreeMap<MetricKey, f64>> = members.iter().map(|m| &m.run.metrics).collect();
    let mut medians = Vec::new();
    let mut stats: BTreeMap<MetricKey, (f64, f64, usize)> = BTreeMap::new();
    for key in MetricKey::ALL {
        let xs: Vec<f64> = values.iter().filter_map(|m| m.get(&key).copied()).collect();
        let Some(med) = median(&xs) else { continue };
        let d = mad(&xs, med).unwrap_or(0.0);
        stats.insert(key, (med, d, xs.len()));
        medians.push(PeerStat {
            metric: key.into(),
            name: key.name(),
            unit: key.unit(),
            higher_is_better: key.higher_is_better(),
            median: med,
            mad: d,
            hosts: xs.len(),
        });
    }
    // Settings and their majorities.
    let settings: Vec<&BTreeMap<String, String>> =
        members.iter().map(|m| &m.run.settings).collect();
    let mut names: std::collections::BTreeSet<&String> = Default::default();
    for s in &settings {
        names.extend(s.keys());
    }
    let mut drift_settings = Vec::new();
    let mut majority: BTreeMap<String, Option<String>> = BTreeMap::new();
    if members.len() >= 2 {
        for name in names {
            let mut counts: BTreeMap<String, usize> = BTreeMap::new();
            for s in &settings {
                *counts.entry(s.get(name).cloned().unwrap_or_else(|| "-".into())).or_default() += 1;
            }
            if counts.len() < 2 {
                continue;
            }
            let top = counts.values().copied().max().unwrap_or(0);
            let winners: Vec<&String> =
                counts.iter().filter(|(_, n)| **n == top).map(|(v, _)| v).collect();
            let maj = (winners.len() == 1).then(|| winners[0].clone());
            majority.insert(name.clone(), maj.clone());
            drift_settings.push(DriftSetting {
                setting: name.clone(),
                majority: maj,
                values: counts,
            });
        }
    }
    let peers_missing = members.len() < MIN_PEERS;
    let mut hosts: Vec<Host> = members
        .iter()
        .zip(&values)
        .zip(&settings)
        .map(|((m, vals), set)| {
            let (vals, set, r) = (*vals, *set, m.run);
            let mut flags = Vec::new();
            let mut ms = BTreeMap::new();
            for (key, v) in vals {
                let Some(&(med, d, n)) = stats.get(key) else { continue };
                let dev = (med != 0.0).then(|| (v - med) / med * 100.0);
                let noise_pct = r.noise.get(key).copied();
                ms.insert(
                    MetricId::from(*key),
                    HostMetric { value: *v, deviation_pct: dev, noise_pct },
                );
                let Some(dev) = dev else { continue };
                let worse = if key.higher_is_better() { -dev } else { dev };
                let z_ok = d == 0.0 || (v - med).abs() / (1.4826 * d) > ROBUST_Z;
                if n >= MIN_PEERS && worse > threshold && z_ok {
                    flags.push(Flag {
                        metric: MetricId::from(*key),
                        deviation_pct: dev,
                        value: *v,
                        median: med,
                        unit: key.unit(),
                    });
                }
            }
            let drift = majority
                .iter()
                .filter(|(name, maj)| match maj {
                    Some(m) => set.get(*name).map(String::as_str).unwrap_or("-") != m,
                    None => true,
                })
                .map(|(name, _)| name.clone())
                .collect();
            Host {
                host: m.name.clone(),
                machine_id: r.machine_id.clone(),
                machine_id_source: r.machine_id_source.clone(),
                also_named: m.also_named.clone(),
                duplicate_hostname: m.duplicate_hostname,
                run: r.id,
                run_uuid: r.uuid.clone(),
                label: r.label.clone(),
                started: r.started.clone(),
                age_s: m.age_s,
                stale: m.stale,
                future: m.future,
                healthy: !m.stale && !m.future && !peers_missing && flags.is_empty(),
                outlier: !flags.is_empty(),
                flags,
                drift,
                metrics: ms,
                passed_over: m.passed_over.clone(),
                declared_order_disagrees: r.declared_order_disagrees,
                impossible: r
                    .impossible
                    .iter()
                    .map(|(k, i)| (MetricId::from(*k), i.clone()))
                    .collect(),
            }
        })
        .collect();
    hosts.sort_by(|a, b| a.host.cmp(&b.host).then_with(|| a.machine_id.cmp(&b.machine_id)));
    let note = peers_missing.then_some(PeersMissing { hosts: members.len(), min_peers: MIN_PEERS });
    Group { model, subgroup, peers_missing, note, medians, drift_settings, hosts }
}

impl Fleet {
    /// Outlier hosts over all groups.
    pub fn outliers(&self) -> usize {
        self.groups.iter().flat_map(|g| &g.hosts).filter(|h| h.outlier).count()
    }

    /// Hosts with drift over all groups.
    pub fn drifted(&self) -> usize {
        self.groups.iter().flat_map(|g| &g.hosts).filter(|h| !h.drift.is_empty()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use results::context::Reading;
    use results::run::{RunId, RunSummary};
    use serde_json::Value;

    const FIXTURE: &str = include_str!("../../report/tests/fixtures/synthetic-export.json");

    /// The fixture's baseline run as host `host` (run id `id`), its
    /// bandwidth figures scaled by `bw`, its latency by `lat`.
    fn host(id: i64, name: &str, bw: f64, lat: f64) -> LoadedRun {
        let r = crate::data::export::runs_of_export(FIXTURE).remove(0);
        let mut info = r.machine_info.clone();
        info.hostname = Some(Reading::Value(name.into()));
        let mut results = r.results.clone();
        for x in &mut results {
            let mut payload = x.stored_json();
            if let Value::Object(m) = &mut payload {
                for (k, v) in m.iter_mut() {
                    let f = if k.ends_with("_gbs") {
                        bw
                    } else if k.ends_with("_ns") {
                        lat
                    } else {
                        continue;
                    };
                    if let Some(n) = v.as_f64() {
                        *v = (n * f).into();
                    }
                }
            }
            let up = results::upgrade::read(x.record.kind(), &payload);
            (x.record, x.as_stored) = (up.record, up.as_stored);
        }
        LoadedRun {
            summary: RunSummary {
                id: RunId(id),
                uuid: format!("00000000-0000-4000-8000-{id:012}"),
                label: r.summary.label.clone(),
                started: format!("2026-11-02T11:00:{:02}Z", id % 60),
                finished: None,
                status: results::run::RunStatus::Complete,
                complete: true,
                message: None,
                machine: name.into(),
                machine_fingerprint: format!("fp-{name}"),
                config_hash: "c1".into(),
                tool_version: "0".into(),
                command_line: "numaprobe run".into(),
                result_count: results.len() as u64,
                imported: true,
            },
            machine_info: info,
            config: r.config.clone(),
            topology: Default::default(),
            results,
        }
    }

    fn fleet_of_five() -> Vec<LoadedRun> {
        let mut v = vec![
            host(1, "n1", 1.0, 1.0),
            host(2, "n2", 1.01, 0.99),
            host(3, "n3", 0.99, 1.01),
            host(4, "n4", 0.85, 1.0),
            host(5, "n5", 1.005, 1.0),
        ];
        v[2].config.thp = Some(Reading::Value("always".into()));
        v
    }

    #[test]
    fn the_slow_host_and_the_drifted_setting_are_found() {
        let f = build(&fleet_of_five(), GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        assert_eq!(f.groups.len(), 1);
        let g = &f.groups[0];
        assert!(!g.peers_missing);
        let out: Vec<&str> =
            g.hosts.iter().filter(|h| h.outlier).map(|h| h.host.as_str()).collect();
        assert_eq!(out, ["n4"]);
        let n4 = &g.hosts[3];
        let local = n4.flags.iter().find(|f| f.metric == "local_bw_gbs").unwrap();
        assert!((local.deviation_pct + 15.0).abs() < 1.0, "{local:?}");
        // Latency unchanged: no latency flag.
        assert!(n4.flags.iter().all(|f| f.metric.to_string().ends_with("_gbs")), "{:?}", n4.flags);
        let drifted: Vec<(&str, &Vec<String>)> = g
            .hosts
            .iter()
            .filter(|h| !h.drift.is_empty())
            .map(|h| (h.host.as_str(), &h.drift))
            .collect();
        assert_eq!(drifted, [("n3", &vec!["thp".to_string()])]);
        assert_eq!(g.drift_settings[0].majority.as_deref(), Some("madvise"));
        assert!(g.hosts[3].outlier);
        assert_eq!(g.hosts[2].drift, ["thp"]);
        assert!(g.model.starts_with("2x Intel(R) Xeon(R) Silver 4314"), "{}", g.model);
    }

    #[test]
    fn latency_is_flagged_above_the_median() {
        let mut v = fleet_of_five();
        v[0] = host(1, "n1", 1.0, 1.2);
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        let n1 = &f.groups[0].hosts[0];
        assert!(
            n1.flags.iter().any(|f| f.metric == "local_lat_ns" && f.deviation_pct > 15.0),
            "{n1:?}"
        );
        // A threshold above the deviation flags nothing for it.
        let f = build(&v, GroupBy::Model, 25.0, None);
        assert_eq!(f.outliers(), 0);
    }

    #[test]
    fn the_normal_spread_of_a_noisy_group_flags_nobody() {
        // Hosts spread over +-8%: more than the threshold from the median
        // for some, but within 3.5 robust z.
        let scales = [0.92, 0.95, 0.97, 1.0, 1.02, 1.05, 1.08];
        let v: Vec<LoadedRun> = scales
            .iter()
            .enumerate()
            .map(|(i, s)| host(i as i64 + 1, &format!("h{i}"), *s, 1.0))
            .collect();
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        assert_eq!(
            f.outliers(),
            0,
            "{:?}",
            f.groups[0].hosts.iter().map(|h| &h.flags).collect::<Vec<_>>()
        );
    }

    #[test]
    fn one_host_says_peers_are_missing_and_models_never_mix() {
        let mut v = vec![host(1, "a", 1.0, 1.0), host(2, "b", 0.5, 1.0)];
        v[1].machine_info.cpu_model = Some(Reading::Value("AMD EPYC 7313".into()));
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        assert_eq!(f.groups.len(), 2, "two models, two groups");
        for g in &f.groups {
            assert!(g.peers_missing);
            assert_eq!(g.note, Some(PeersMissing { hosts: 1, min_peers: MIN_PEERS }));
            assert!(g.hosts.iter().all(|h| !h.outlier && h.drift.is_empty()));
        }
    }

    /// A host with no peers (alone in its model, or one of two) is not
    /// judged: never healthy, counted as without peers.
    #[test]
    fn a_lone_host_is_without_peers_never_healthy() {
        let f = build_at(&[host(1, "alone", 1.0, 1.0)], &[]);
        assert_eq!((f.hosts, f.healthy, f.no_peers), (1, 0, 1), "{f:?}");
        assert!(!f.groups[0].hosts[0].healthy);
        let f = build_at(&fleet_of_five(), &[]);
        assert_eq!((f.healthy, f.no_peers), (4, 0), "n4 is the outlier");
    }

    /// A run that started after the report's time (a clock ahead) is
    /// suspect: marked, warned about, never healthy, whatever --max-age.
    #[test]
    fn a_run_from_the_future_is_never_healthy() {
        let mut v = fleet_of_five();
        for r in &mut v {
            r.summary.started = "2026-11-09T09:00:00Z".into();
        }
        v[0].summary.started = "2026-11-09T13:00:00Z".into();
        let mut fr = fresh(&[]);
        fr.max_age_s = 1;
        let runs: Vec<HostRun> = v.iter().map(HostRun::of).collect();
        let f = build_fresh(&runs, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None, &fr);
        let n1 = f.groups[0].hosts.iter().find(|h| h.host == "n1").unwrap();
        assert_eq!((n1.future, n1.healthy, n1.age_s), (true, false, Some(-7200.0)), "{n1:?}");
        assert_eq!((f.future, f.healthy), (1, 0), "the others are stale at --max-age 1s");
        let f = build_at(&v, &[]);
        assert_eq!((f.future, f.healthy), (1, 3), "n1 from the future, n4 an outlier");
        assert_eq!(
            f.warnings,
            [Warning::Future {
                host: "n1".into(),
                run: 1,
                ahead_s: Some(7200.0),
                started: "2026-11-09T13:00:00Z".into()
            }]
        );
    }

    #[test]
    fn latest_complete_run_per_host_and_labels() {
        let mut v = fleet_of_five();
        let mut old = host(9, "n4", 1.0, 1.0);
        old.summary.started = "2020-01-01T00:00:00Z".into();
        v.push(old);
        let mut broken = host(10, "n4", 1.0, 1.0);
        broken.summary.complete = false;
        broken.summary.status = results::run::RunStatus::Incomplete;
        broken.summary.started = "2030-01-01T00:00:00Z".into();
        v.push(broken);
        let mut lone = host(11, "n6", 1.0, 1.0);
        lone.summary.complete = false;
        lone.summary.status = results::run::RunStatus::Incomplete;
        v.push(lone);
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        // n4's latest run is incomplete: listed with why, never replaced
        // by its older complete run.
        assert!(f.groups[0].hosts.iter().all(|h| h.host != "n4"), "{:?}", f.groups[0].hosts);
        let inc: Vec<(&str, i64, Option<i64>)> = f
            .incomplete
            .iter()
            .map(|i| (i.host.as_str(), i.latest.run, i.last_complete.as_ref().map(|r| r.run)))
            .collect();
        assert_eq!(inc, [("n4", 10, Some(4)), ("n6", 11, None)]);
        assert_eq!(f.incomplete[0].reason, "incomplete");
        assert!(f.skipped.is_empty());
        // --group-by config splits the drifted host off.
        let mut v = fleet_of_five();
        v[2].summary.config_hash = "c2".into();
        let f = build(&v, GroupBy::Config, DEFAULT_THRESHOLD_PCT, None);
        assert_eq!(f.groups.len(), 2);
        assert_eq!(f.groups.iter().map(|g| g.hosts.len()).sum::<usize>(), 5);
    }

    #[test]
    fn firmware_memory_and_restriction_settings_drift_and_ids_do_not() {
        let mut v = fleet_of_five();
        for (i, r) in v.iter_mut().enumerate() {
            let c = &mut r.config;
            c.fingerprint = Some(format!("cfg{i}"));
            c.cmdline = Some(Reading::Value(format!("root=UUID={i} quiet")));
            c.bios_version = Some(Reading::Value("2.1".into()));
            c.memory_speed_mts = Some(Reading::Value(Scalar::Int(3200)));
            c.dimm_population = Some(Reading::Value("16 of 16 slots: 16x 16 GiB DDR4".into()));
            c.cmdline_options = Some([("numa_balancing".into(), "0".into())].into());
        }
        v[0].config.bios_version = Some(Reading::Value("1.9".into()));
        v[1].config.memory_speed_mts = Some(Reading::Value(Scalar::Int(2933)));
        v[1].config.dimm_population =
            Some(Reading::Value("15 of 16 slots: 15x 16 GiB DDR4".into()));
        v[4].config.cmdline_options = Some(Default::default());
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        let drift: Vec<(&str, Vec<&str>)> = f.groups[0]
            .hosts
            .iter()
            .map(|h| (h.host.as_str(), h.drift.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            drift,
            [
                ("n1", vec!["bios_version"]),
                ("n2", vec!["dimm_population", "memory_speed_mts"]),
                ("n3", vec!["thp"]),
                ("n4", vec![]),
                ("n5", vec!["cmdline_options.numa_balancing"]),
            ]
        );
    }

    const NOW: &str = "2026-11-09T11:00:00Z";

    fn fresh(unmeasured: &[UnmeasuredInput]) -> Freshness<'_> {
        Freshness {
            max_age_s: DEFAULT_MAX_AGE_S,
            now_ms: results::time::parse_rfc3339(NOW).unwrap(),
            unmeasured,
        }
    }

    fn build_at(v: &[LoadedRun], unmeasured: &[UnmeasuredInput]) -> Fleet {
        let runs: Vec<HostRun> = v.iter().map(HostRun::of).collect();
        build_fresh(&runs, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None, &fresh(unmeasured))
    }

    fn with_id(mut r: LoadedRun, id: &str) -> LoadedRun {
        r.machine_info.machine_id = Some(id.into());
        r.machine_info.machine_id_source = Some("dmi_product_uuid".into());
        r
    }

    /// Cloned images share a host name: two machines, both shown, both
    /// marked, with a warning. One machine renamed is one host.
    #[test]
    fn hosts_are_machines_not_host_names() {
        let mut v = fleet_of_five();
        v.push(with_id(host(6, "clone", 1.0, 1.0), "aaaa000000000001"));
        v.push(with_id(host(7, "clone", 0.8, 1.0), "bbbb000000000002"));
        v.push(with_id(host(8, "old-name", 1.0, 1.0), "cccc000000000003"));
        v.push(with_id(host(9, "new-name", 1.0, 1.0), "cccc000000000003"));
        let f = build_at(&v, &[]);
        assert_eq!(f.hosts, 8, "5 + 2 clones + 1 renamed");
        let g = &f.groups[0];
        let clones: Vec<&Host> = g.hosts.iter().filter(|h| h.host == "clone").collect();
        assert_eq!(clones.len(), 2);
        assert!(clones.iter().all(|h| h.duplicate_hostname));
        assert_eq!(clones.iter().filter(|h| h.outlier).count(), 1, "the slow clone alone");
        assert!(f.warnings.contains(&Warning::SharedName {
            name: "clone".into(),
            machine_ids: vec!["aaaa000000000001".into(), "bbbb000000000002".into()]
        }));
        let renamed: Vec<&Host> = g
            .hosts
            .iter()
            .filter(|h| h.machine_id.as_deref() == Some("cccc000000000003"))
            .collect();
        assert_eq!(renamed.len(), 1);
        assert_eq!((renamed[0].host.as_str(), renamed[0].run), ("new-name", 9));
        assert_eq!(renamed[0].also_named, ["old-name"]);
    }

    /// Runs older than the maximum age are stale and never healthy; every
    /// host has its run's time and age.
    #[test]
    fn stale_runs_are_never_healthy() {
        let mut v = fleet_of_five();
        for r in &mut v {
            r.summary.started = "2026-11-09T09:00:00Z".into();
        }
        v[1].summary.started = "2026-10-01T11:00:00Z".into();
        let f = build_at(&v, &[]);
        assert_eq!(f.now, "2026-11-09T11:00:00.000Z");
        assert_eq!((f.hosts, f.healthy, f.stale), (5, 3, 1), "n4 is an outlier, n2 stale");
        let n2 = f.groups[0].hosts.iter().find(|h| h.host == "n2").unwrap();
        assert!(n2.stale && !n2.healthy && !n2.outlier);
        assert_eq!(n2.age_s, Some(39.0 * 86_400.0));
        let n1 = &f.groups[0].hosts[0];
        assert_eq!((n1.age_s, n1.stale, n1.healthy), (Some(7200.0), false, true));
        assert_eq!(f.max_age_s, 691_200);
        assert_eq!(f.groups[0].note, None);
    }

    /// A host the orchestrator could not measure is listed with its error;
    /// its older run is not shown as if it were this round's.
    #[test]
    fn hosts_not_measured_are_listed_not_compared() {
        let v = fleet_of_five();
        let u = parse_unmeasured(
            "# from the gather step\nn5\ttimed out after 8 s: waiting for the lock\n\nnever-seen\tunreachable: ssh: connect refused\n",
        )
        .unwrap();
        assert_eq!(u.len(), 2);
        let f = build_at(&v, &u);
        assert_eq!(f.hosts, 4);
        assert!(f.groups[0].hosts.iter().all(|h| h.host != "n5"));
        let listed: Vec<(&str, &str, Option<i64>)> = f
            .unmeasured
            .iter()
            .map(|n| (n.host.as_str(), n.error.as_str(), n.last_run.as_ref().map(|r| r.run)))
            .collect();
        assert_eq!(
            listed,
            [
                ("n5", "timed out after 8 s: waiting for the lock", Some(5)),
                ("never-seen", "unreachable: ssh: connect refused", None),
            ]
        );
        assert_eq!(parse_unmeasured("lonely\t").unwrap()[0].error, "not measured");
    }

    /// Every line is HOST<TAB>ERROR[<TAB>MACHINE_ID]: a line without a tab
    /// is an error naming its line, not a host named by its first word.
    #[test]
    fn unmeasured_lines_need_a_tab() {
        let e = parse_unmeasured("# c\nn5 timed out after 8 s\n").unwrap_err();
        assert_eq!(
            e,
            BadLine { line: 2, text: "n5 timed out after 8 s".into(), fault: LineFault::NoTab }
        );
        assert_eq!(parse_unmeasured("\tno host\n").unwrap_err().fault, LineFault::NoHost);
        assert_eq!(parse_unmeasured("a\tb\tc\td\n").unwrap_err().fault, LineFault::TooManyFields);
        assert_eq!(parse_unmeasured("a\tb\tid x\n").unwrap_err().fault, LineFault::SpacedMachineId);
        let u = parse_unmeasured("clone\trun exit status 2\taaaa000000000001\r\n").unwrap();
        assert_eq!(u[0].machine_id.as_deref(), Some("aaaa000000000001"));
        assert_eq!(u[0].error, "run exit status 2");
    }

    /// Two machines named `clone`, one of them not measured: the entry
    /// with its machine id takes out that machine alone, the other clone
    /// stays compared (and its group keeps its peers). Without an id, a
    /// name two machines share takes out neither, with a warning.
    #[test]
    fn an_unmeasured_clone_leaves_the_other_clone_compared() {
        let mut v = fleet_of_five();
        v.push(with_id(host(6, "clone", 1.0, 1.0), "aaaa000000000001"));
        v.push(with_id(host(7, "clone", 1.0, 1.0), "bbbb000000000002"));
        let u = parse_unmeasured("clone\trun exit status 2\taaaa000000000001\n").unwrap();
        let f = build_at(&v, &u);
        let clones: Vec<&Host> = f.groups[0].hosts.iter().filter(|h| h.host == "clone").collect();
        assert_eq!(clones.len(), 1, "{f:?}");
        assert_eq!(clones[0].machine_id.as_deref(), Some("bbbb000000000002"));
        assert_eq!(f.unmeasured.len(), 1);
        assert_eq!(f.unmeasured[0].machine_id.as_deref(), Some("aaaa000000000001"));
        assert_eq!(f.unmeasured[0].last_run.as_ref().map(|r| r.run), Some(6));
        // The failing clone never measured before: the other one stays.
        let f = build_at(&v[..5].iter().cloned().chain([v[6].clone()]).collect::<Vec<_>>(), &u);
        assert_eq!(f.hosts, 6, "{f:?}");
        assert!(f.unmeasured[0].last_run.is_none());
        // No machine id: which clone failed is not known.
        let u = parse_unmeasured("clone\tunreachable\n").unwrap();
        let f = build_at(&v, &u);
        assert_eq!(f.hosts, 7);
        assert!(f.warnings.contains(&Warning::UnmeasuredNameShared {
            host: "clone".into(),
            error: "unreachable".into(),
            machines: 2
        }));
        assert_eq!(f.unmeasured.len(), 1);
    }

    /// The fixture's run as host `name` holding its `exec` results only.
    fn exec_only(id: i64, name: &str, started: &str) -> LoadedRun {
        let mut r = host(id, name, 1.0, 1.0);
        r.results.retain(|x| matches!(x.record, results::Record::Exec(_)));
        assert!(!r.results.is_empty(), "the fixture's run has exec results");
        r.summary.started = started.into();
        r
    }

    /// A run without the fleet's figures (an `exec` run, complete or
    /// failed, or a run that saved nothing) newer than a host's last
    /// measurement does not hide it: the measurement is compared and the
    /// newer run named. A measurement that fails after it still does.
    #[test]
    fn runs_without_figures_do_not_hide_the_last_measurement() {
        let mut v = fleet_of_five();
        v.push(exec_only(20, "n4", "2026-11-03T00:00:00Z"));
        let mut failed = exec_only(21, "n2", "2026-11-03T00:00:00Z");
        failed.summary.complete = false;
        failed.summary.status = results::run::RunStatus::Failed;
        v.push(failed);
        let mut empty = host(22, "n5", 1.0, 1.0);
        empty.results.clear();
        empty.summary.started = "2026-11-03T00:00:00Z".into();
        v.push(empty);
        v.push(exec_only(23, "n6", "2026-11-03T00:00:00Z"));
        let f = build_at(&v, &[]);
        let g = &f.groups[0];
        type Used<'a> = (&'a str, i64, bool, Vec<(i64, WithoutFigures)>);
        let used: Vec<Used> = g
            .hosts
            .iter()
            .map(|h| {
                let over = h.passed_over.iter().map(|p| (p.run.run, p.why.clone())).collect();
                (h.host.as_str(), h.run, h.outlier, over)
            })
            .collect();
        assert_eq!(
            used,
            [
                ("n1", 1, false, vec![]),
                ("n2", 2, false, vec![(21, WithoutFigures::ExecEnded { status: "failed".into() })]),
                ("n3", 3, false, vec![]),
                ("n4", 4, true, vec![(20, WithoutFigures::Exec)]),
                ("n5", 5, false, vec![(22, WithoutFigures::Nothing)]),
            ]
        );
        assert!(f.incomplete.is_empty(), "{:?}", f.incomplete);
        assert_eq!(
            f.skipped,
            [Skipped {
                host: "n6".into(),
                reason: Skip::NoFigures { latest: Some(WithoutFigures::Exec) }
            }]
        );
        assert_eq!(f.groups[0].hosts[3].passed_over[0].run.run, 20);
        assert_eq!(f.groups[0].medians[0].name, "Local bandwidth");
        // n4's measurement fails after the exec run: that is its state.
        let mut broken = host(24, "n4", 1.0, 1.0);
        broken.results.clear();
        broken.summary.complete = false;
        broken.summary.status = results::run::RunStatus::Failed;
        broken.summary.message = Some("bw: cannot allocate 8 GiB on node 0".into());
        broken.summary.started = "2026-11-04T00:00:00Z".into();
        v.push(broken);
        let f = build_at(&v, &[]);
        assert!(f.groups[0].hosts.iter().all(|h| h.host != "n4"));
        let inc = &f.incomplete[0];
        assert_eq!(
            (inc.host.as_str(), inc.latest.run, inc.reason.as_str()),
            ("n4", 24, "bw: cannot allocate 8 GiB on node 0")
        );
        assert_eq!(inc.last_complete.as_ref().map(|r| r.run), Some(4));
    }
}
