//! The fleet model: many hosts' runs grouped by machine model, each
//! host's headline metrics against its peers' median, outliers flagged
//! robustly (median and MAD), and configuration drift (settings on which a
//! host differs from its group's majority). `numaprobe fleet` prints it
//! (drawn by `report::fleet`);
//! `docs/fleet.md` documents the method and the `--json` contract.
//!
//! Hosts of different models are never peers: the model (CPU model,
//! packages, physical cores, installed memory, memory speed when known) is
//! always part of a group's key; `--group-by label|config` only splits
//! groups further.

use std::collections::BTreeMap;

use results::context::{Count, Machine, Scalar};
use serde::Serialize;
use serde_json::Value;
use store::LoadedRun;

use crate::data::RunData;
use crate::metrics::{metrics, MetricKey};

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
const IDENTITY: [&str; 13] = [
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

/// A fleet: groups of peer hosts and what was found in each.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    pub group_by: GroupBy,
    pub threshold_pct: f64,
    /// The method in one sentence (also in the reports).
    pub method: String,
    /// Only runs with this label were considered.
    pub label: Option<String>,
    pub hosts: usize,
    pub groups: Vec<Group>,
    /// Hosts left out, with why (no complete run).
    pub skipped: Vec<Skipped>,
}

/// One group of peers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The machine model, e.g. `2x Intel Xeon Silver 4314, 32 cores, 256 GiB`.
    pub model: String,
    /// The label (`--group-by label`) or configuration fingerprint
    /// (`--group-by config`) that also defines the group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subgroup: Option<String>,
    /// Fewer than [`MIN_PEERS`] hosts: nobody is flagged.
    pub peers_missing: bool,
    /// Why nothing was flagged, when peers are missing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
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
    pub metric: &'static str,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Host {
    pub host: String,
    /// The run's id in this database.
    pub run: i64,
    pub run_uuid: String,
    pub label: Option<String>,
    pub started: String,
    /// Any flag raised.
    pub outlier: bool,
    pub flags: Vec<Flag>,
    /// Names of the settings that differ from the group's majority.
    pub drift: Vec<String>,
    /// This host's value of each metric and its deviation from the median.
    pub metrics: BTreeMap<&'static str, HostMetric>,
}

/// A metric on which a host is worse than its peers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flag {
    pub metric: &'static str,
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
}

/// A host left out.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    pub host: String,
    pub reason: String,
}

/// What the fleet keeps of one run: its identity, model, headline metric
/// values and settings, without its results (so a thousand hosts' runs
/// never sit in memory at once).
#[derive(Debug, Clone, PartialEq)]
pub struct HostRun {
    pub host: String,
    pub model: String,
    pub id: i64,
    pub uuid: String,
    pub label: Option<String>,
    pub started: String,
    pub complete: bool,
    pub config_hash: String,
    pub metrics: BTreeMap<MetricKey, f64>,
    pub settings: BTreeMap<String, String>,
}

impl HostRun {
    pub fn of(run: &LoadedRun) -> HostRun {
        HostRun {
            host: host_of(run),
            model: model_of(run),
            id: run.summary.id.0,
            uuid: run.summary.uuid.clone(),
            label: run.summary.label.clone(),
            started: run.summary.started.clone(),
            complete: run.summary.complete,
            config_hash: run.summary.config_hash.clone(),
            metrics: metrics(&RunData::of(run)).into_iter().map(|(k, m)| (k, m.value)).collect(),
            settings: settings_of(run),
        }
    }
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

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Flattens a JSON object into `a.b.c` → scalar text (arrays as JSON).
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&name, x, out);
            }
        }
        Value::Null => {
            out.insert(prefix.to_string(), "-".into());
        }
        Value::Array(_) => {
            out.insert(prefix.to_string(), v.to_string());
        }
        other => {
            out.insert(prefix.to_string(), scalar(other).unwrap_or_default());
        }
    }
}

/// The settings a run was measured under, by name: the configuration
/// document and the machine facts that are not the model (BIOS version,
/// DIMM population and speed, ...), flattened to dotted names.
pub fn settings_of(run: &LoadedRun) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Value::Object(m) = run.config.to_json() {
        for (k, v) in &m {
            if !NOT_SETTINGS.contains(&k.as_str()) {
                flatten(k, v, &mut out);
            }
        }
    }
    if let Ok(Value::Object(m)) = serde_json::to_value(&run.machine_info) {
        for (k, v) in &m {
            if !IDENTITY.contains(&k.as_str()) {
                flatten(k, v, &mut out);
            }
        }
    }
    out
}

/// Median of values (sorted copy); `None` when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// Median absolute deviation from `m`.
pub fn mad(values: &[f64], m: f64) -> f64 {
    median(&values.iter().map(|x| (x - m).abs()).collect::<Vec<_>>()).unwrap_or(0.0)
}

/// The method sentence of a threshold.
pub fn method_text(threshold_pct: f64) -> String {
    format!(
        "Each host's latest complete run is compared with the median of its peers (same model). \
         A host is flagged on a metric when it is more than {threshold_pct}% worse than the peer \
         median (bandwidth below it, latency above it) and its robust z-score \
         |value - median| / (1.4826 x MAD) exceeds {ROBUST_Z}, so the spread of normal hosts flags \
         nobody and the outliers do not move the reference. Groups with fewer than {MIN_PEERS} \
         hosts flag nothing (peers missing). Drift: a setting whose value differs from the one \
         most of the group's hosts hold."
    )
}

/// Builds the fleet from runs (any order, any hosts): per host the latest
/// complete run (only those labelled `label` when given; with
/// `GroupBy::Label`, the latest of each label).
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
    // The latest complete run of each (host, subgroup).
    let mut latest: BTreeMap<(String, String), &HostRun> = BTreeMap::new();
    let mut seen_hosts: BTreeMap<String, bool> = BTreeMap::new();
    for r in runs {
        let ok = r.complete && label.is_none_or(|l| r.label.as_deref() == Some(l));
        let e = seen_hosts.entry(r.host.clone()).or_insert(false);
        *e |= ok;
        if !ok {
            continue;
        }
        let sub = match group_by {
            GroupBy::Model | GroupBy::Config => String::new(),
            GroupBy::Label => r.label.clone().unwrap_or_default(),
        };
        let slot = latest.entry((r.host.clone(), sub)).or_insert(r);
        let key = |r: &HostRun| (store::util::time_order_key(&r.started), r.id);
        if key(r) > key(slot) {
            *slot = r;
        }
    }
    let skipped = seen_hosts
        .iter()
        .filter(|(_, ok)| !**ok)
        .map(|(h, _)| Skipped {
            host: h.clone(),
            reason: match label {
                Some(l) => format!("no complete run labelled {l:?}"),
                None => "no complete run".into(),
            },
        })
        .collect();
    let mut groups: BTreeMap<(String, String), Vec<&HostRun>> = BTreeMap::new();
    for ((_, sub), r) in &latest {
        let sub = match group_by {
            GroupBy::Model => String::new(),
            GroupBy::Label => sub.clone(),
            GroupBy::Config => r.config_hash.clone(),
        };
        groups.entry((r.model.clone(), sub)).or_default().push(r);
    }
    let hosts = latest.keys().map(|(h, _)| h).collect::<std::collections::BTreeSet<_>>().len();
    let groups = groups
        .into_iter()
        .map(|((model, sub), members)| {
            let subgroup = match group_by {
                GroupBy::Model => None,
                _ => Some(sub),
            };
            group(model, subgroup, &members, threshold_pct)
        })
        .collect();
    Fleet {
        group_by,
        threshold_pct,
        method: method_text(threshold_pct),
        label: label.map(str::to_string),
        hosts,
        groups,
        skipped,
    }
}

fn group(model: String, subgroup: Option<String>, members: &[&HostRun], threshold: f64) -> Group {
    let values: Vec<&BTreeMap<MetricKey, f64>> = members.iter().map(|r| &r.metrics).collect();
    let mut medians = Vec::new();
    let mut stats: BTreeMap<MetricKey, (f64, f64, usize)> = BTreeMap::new();
    for key in MetricKey::ALL {
        let xs: Vec<f64> = values.iter().filter_map(|m| m.get(&key).copied()).collect();
        let Some(med) = median(&xs) else { continue };
        let d = mad(&xs, med);
        stats.insert(key, (med, d, xs.len()));
        medians.push(PeerStat {
            metric: key.id(),
            unit: key.unit(),
            higher_is_better: key.higher_is_better(),
            median: med,
            mad: d,
            hosts: xs.len(),
        });
    }
    // Settings and their majorities.
    let settings: Vec<&BTreeMap<String, String>> = members.iter().map(|r| &r.settings).collect();
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
        .map(|((r, vals), set)| {
            let (vals, set) = (*vals, *set);
            let mut flags = Vec::new();
            let mut ms = BTreeMap::new();
            for (key, v) in vals {
                let Some(&(med, d, n)) = stats.get(key) else { continue };
                let dev = (med != 0.0).then(|| (v - med) / med * 100.0);
                ms.insert(key.id(), HostMetric { value: *v, deviation_pct: dev });
                let Some(dev) = dev else { continue };
                let worse = if key.higher_is_better() { -dev } else { dev };
                let z_ok = d == 0.0 || (v - med).abs() / (1.4826 * d) > ROBUST_Z;
                if n >= MIN_PEERS && worse > threshold && z_ok {
                    flags.push(Flag {
                        metric: key.id(),
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
                host: r.host.clone(),
                run: r.id,
                run_uuid: r.uuid.clone(),
                label: r.label.clone(),
                started: r.started.clone(),
                outlier: !flags.is_empty(),
                flags,
                drift,
                metrics: ms,
            }
        })
        .collect();
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    let note = peers_missing.then(|| {
        format!(
            "peers missing: {} host(s) of this model; at least {MIN_PEERS} are needed to tell an odd one out, so nothing is flagged",
            members.len()
        )
    });
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
    use store::{ExportDoc, ExportedRun, RunId, RunSummary};

    const FIXTURE: &str = include_str!("../../report/tests/fixtures/synthetic-export.json");

    /// The fixture's baseline run as host `host` (run id `id`), its
    /// bandwidth figures scaled by `bw`, its latency by `lat`.
    fn host(id: i64, name: &str, bw: f64, lat: f64) -> LoadedRun {
        let doc = ExportDoc::from_json(FIXTURE, "fixture").unwrap();
        let r: ExportedRun = doc.runs[0].clone();
        let mut info = r.machine.info.clone();
        info.hostname = Some(Reading::Value(name.into()));
        let mut results = r.results.clone();
        for x in &mut results {
            if let Value::Object(m) = &mut x.payload {
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
        }
        LoadedRun {
            summary: RunSummary {
                id: RunId(id),
                uuid: format!("00000000-0000-4000-8000-{id:012}"),
                label: r.label.clone(),
                started: format!("2026-11-02T11:00:{:02}Z", id % 60),
                finished: None,
                status: store::RunStatus::Complete,
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
        assert!(n4.flags.iter().all(|f| f.metric.ends_with("_gbs")), "{:?}", n4.flags);
        let drifted: Vec<(&str, &Vec<String>)> = g
            .hosts
            .iter()
            .filter(|h| !h.drift.is_empty())
            .map(|h| (h.host.as_str(), &h.drift))
            .collect();
        assert_eq!(drifted, [("n3", &vec!["thp".to_string()])]);
        assert_eq!(g.drift_settings[0].majority.as_deref(), Some("madvise"));
        let json = serde_json::to_value(&f).unwrap();
        assert_eq!(json["groups"][0]["hosts"][3]["outlier"], true);
        assert_eq!(json["groups"][0]["hosts"][2]["drift"][0], "thp");
        assert!(json["groups"][0]["model"]
            .as_str()
            .unwrap()
            .starts_with("2x Intel(R) Xeon(R) Silver 4314"));
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
            assert!(g.note.as_deref().unwrap().starts_with("peers missing"));
            assert!(g.hosts.iter().all(|h| !h.outlier && h.drift.is_empty()));
        }
    }

    #[test]
    fn latest_complete_run_per_host_and_labels() {
        let mut v = fleet_of_five();
        let mut old = host(9, "n4", 1.0, 1.0);
        old.summary.started = "2020-01-01T00:00:00Z".into();
        v.push(old);
        let mut broken = host(10, "n4", 1.0, 1.0);
        broken.summary.complete = false;
        broken.summary.started = "2030-01-01T00:00:00Z".into();
        v.push(broken);
        let mut lone = host(11, "n6", 1.0, 1.0);
        lone.summary.complete = false;
        v.push(lone);
        let f = build(&v, GroupBy::Model, DEFAULT_THRESHOLD_PCT, None);
        let n4 = f.groups[0].hosts.iter().find(|h| h.host == "n4").unwrap();
        assert_eq!(n4.run, 4, "the latest complete run");
        assert_eq!(
            f.skipped,
            vec![Skipped { host: "n6".into(), reason: "no complete run".into() }]
        );
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

    #[test]
    fn median_and_mad() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0], 3.0), 1.0);
    }
}
