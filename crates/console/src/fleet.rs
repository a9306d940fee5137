//! The `fleet --json` document: analysis's [`Fleet`] field for field, in
//! the keys and order docs/fleet.md documents (deploy/sql and the fleet
//! playbooks read it), its sentences (the method, a group's missing peers,
//! the warnings, why a host is left out or a newer run passed over, each
//! host's impossible figures) as [`report::fleet::Words`] words them.

use std::collections::BTreeMap;

use analysis::fleet::{
    BadLine, DriftSetting, Flag, Fleet, GroupBy, HostMetric, Incomplete, LineFault, NotMeasured,
    PeerStat, RunRef,
};
use report::fleet::{GroupWords, HostWords, Words};
use serde::Serialize;

/// The fleet as `fleet --json` writes it (without its `schema_version`,
/// which the command's envelope adds).
#[derive(Debug, Serialize)]
pub struct Doc<'a> {
    group_by: GroupBy,
    threshold_pct: f64,
    method: &'a str,
    label: Option<&'a str>,
    max_age_s: u64,
    now: &'a str,
    hosts: usize,
    healthy: usize,
    stale: usize,
    future: usize,
    no_peers: usize,
    groups: Vec<GroupDoc<'a>>,
    warnings: &'a [String],
    incomplete: &'a [Incomplete],
    unmeasured: &'a [NotMeasured],
    skipped: Vec<SkippedDoc<'a>>,
    declared_order_disagree: usize,
}

#[derive(Debug, Serialize)]
struct GroupDoc<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    subgroup: Option<&'a str>,
    peers_missing: bool,
    note: Option<&'a str>,
    medians: &'a [PeerStat],
    drift_settings: &'a [DriftSetting],
    hosts: Vec<HostDoc<'a>>,
}

#[derive(Debug, Serialize)]
struct HostDoc<'a> {
    host: &'a str,
    machine_id: Option<&'a str>,
    machine_id_source: Option<&'a str>,
    also_named: &'a [String],
    duplicate_hostname: bool,
    run: i64,
    run_uuid: &'a str,
    label: Option<&'a str>,
    started: &'a str,
    age_s: Option<f64>,
    stale: bool,
    future: bool,
    healthy: bool,
    outlier: bool,
    flags: &'a [Flag],
    drift: &'a [String],
    /// By the ids' text, the order the document has always had.
    metrics: BTreeMap<String, &'a HostMetric>,
    passed_over: Vec<PassedOverDoc<'a>>,
    declared_order_disagrees: Option<bool>,
    impossible: BTreeMap<String, &'a str>,
}

#[derive(Debug, Serialize)]
struct PassedOverDoc<'a> {
    #[serde(flatten)]
    run: &'a RunRef,
    why: &'a str,
}

#[derive(Debug, Serialize)]
struct SkippedDoc<'a> {
    host: &'a str,
    reason: &'a str,
}

impl<'a> Doc<'a> {
    /// The document of `fleet`, whose sentences are `words`
    /// ([`Words::of`] the fleet).
    pub fn new(fleet: &'a Fleet, words: &'a Words) -> Doc<'a> {
        assert!(words.fits(fleet), "the fleet's words were made from another fleet");
        Doc {
            group_by: fleet.group_by,
            threshold_pct: fleet.threshold_pct,
            method: &words.method,
            label: fleet.label.as_deref(),
            max_age_s: fleet.max_age_s,
            now: &fleet.now,
            hosts: fleet.hosts,
            healthy: fleet.healthy,
            stale: fleet.stale,
            future: fleet.future,
            no_peers: fleet.no_peers,
            groups: fleet.groups.iter().zip(&words.groups).map(group).collect(),
            warnings: &words.warnings,
            incomplete: &fleet.incomplete,
            unmeasured: &fleet.unmeasured,
            skipped: words
                .skipped
                .iter()
                .map(|(host, reason)| SkippedDoc { host, reason })
                .collect(),
            declared_order_disagree: fleet.declared_order_disagree,
        }
    }
}

fn group<'a>((g, w): (&'a analysis::fleet::Group, &'a GroupWords)) -> GroupDoc<'a> {
    GroupDoc {
        model: &g.model,
        subgroup: g.subgroup.as_deref(),
        peers_missing: g.peers_missing,
        note: w.note.as_deref(),
        medians: &g.medians,
        drift_settings: &g.drift_settings,
        hosts: g.hosts.iter().zip(&w.hosts).map(host).collect(),
    }
}

fn host<'a>((h, w): (&'a analysis::fleet::Host, &'a HostWords)) -> HostDoc<'a> {
    HostDoc {
        host: &h.host,
        machine_id: h.machine_id.as_deref(),
        machine_id_source: h.machine_id_source.as_deref(),
        also_named: &h.also_named,
        duplicate_hostname: h.duplicate_hostname,
        run: h.run,
        run_uuid: &h.run_uuid,
        label: h.label.as_deref(),
        started: &h.started,
        age_s: h.age_s,
        stale: h.stale,
        future: h.future,
        healthy: h.healthy,
        outlier: h.outlier,
        flags: &h.flags,
        drift: &h.drift,
        metrics: h.metrics.iter().map(|(k, v)| (k.to_string(), v)).collect(),
        passed_over: h
            .passed_over
            .iter()
            .zip(&w.passed_over)
            .map(|(p, why)| PassedOverDoc { run: &p.run, why })
            .collect(),
        declared_order_disagrees: h.declared_order_disagrees,
        impossible: w.impossible.iter().map(|(k, t)| (k.to_string(), t.as_str())).collect(),
    }
}

/// A line of `fleet --unmeasured`'s list that cannot be read: its number,
/// what is wrong and the line as written (`line 2: expected
/// HOST<TAB>ERROR[<TAB>MACHINE_ID] (no tab): "node-1 timed out"`).
pub fn bad_line(b: &BadLine) -> String {
    let why = match b.fault {
        LineFault::NoTab => "expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (no tab)",
        LineFault::TooManyFields => "expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (more than 3 fields)",
        LineFault::NoHost => "no host name before the tab",
        LineFault::SpacedMachineId => "the machine id has a space",
    };
    format!("line {}: {why}: {:?}", b.line, b.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fault of a line, whole.
    #[test]
    fn every_bad_line_is_worded() {
        let said: Vec<String> = [
            LineFault::NoTab,
            LineFault::TooManyFields,
            LineFault::NoHost,
            LineFault::SpacedMachineId,
        ]
        .into_iter()
        .map(|fault| bad_line(&BadLine { line: 3, text: "a\tb c".into(), fault }))
        .collect();
        assert_eq!(
            said,
            [
                "line 3: expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (no tab): \"a\\tb c\"",
                "line 3: expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (more than 3 fields): \"a\\tb c\"",
                "line 3: no host name before the tab: \"a\\tb c\"",
                "line 3: the machine id has a space: \"a\\tb c\"",
            ]
        );
    }
}
