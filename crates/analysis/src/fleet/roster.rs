//! Who is in a fleet and how fresh their runs are, before any comparison:
//! hosts known by their machine identity (DMI product UUID, else
//! `/etc/machine-id`, else the host name; the machine document's
//! `machine_id`), so two machines with one host name stay two and a renamed
//! machine stays one; each host's latest run that holds the fleet's
//! figures (latest with the label, or of each label) and its age, newer
//! runs without them (an `exec` run) passed over and named; runs older
//! than the maximum age are stale; a host whose latest measuring run is
//! incomplete or failed is listed with why, never replaced by an older run; hosts the orchestrator could not measure
//! (Ansible, Slurm) are listed with their error, never shown by an older
//! run as if measured.

use std::collections::{BTreeMap, BTreeSet};

use results::run::LoadedRun;
use serde::Serialize;

use super::HostRun;

/// The default `fleet --max-age`: eight days. The weekly timer of
/// deploy/systemd (randomized by up to an hour) keeps a host fresh; a host
/// that missed a round is stale.
pub const DEFAULT_MAX_AGE_S: u64 = 8 * 86_400;

/// A host the orchestrator could not measure, with its error (`fleet
/// --unmeasured FILE`: one `HOST<TAB>ERROR[<TAB>MACHINE_ID]` per line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmeasuredInput {
    pub host: String,
    pub error: String,
    /// The machine's identity (the `machine_id` runs record, as `numaprobe
    /// fleet --this-host` prints it on the host) when the orchestrator
    /// could ask the host: it tells two machines with one host name apart.
    pub machine_id: Option<String>,
}

/// Reads the `--unmeasured` list: one host per line, `HOST<TAB>ERROR`,
/// optionally a third field `<TAB>MACHINE_ID`; `#` comments and blank lines
/// are ignored; an empty error says "not measured". A line without a tab,
/// with an empty host name or with more than three fields is an error
/// naming its line (a list typed with spaces would otherwise read its
/// error's first word as the host).
pub fn parse_unmeasured(text: &str) -> Result<Vec<UnmeasuredInput>, BadLine> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim_end_matches('\r');
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = l.split('\t').collect();
        let bad = |fault| BadLine { line: i + 1, text: l.to_string(), fault };
        if fields.len() < 2 {
            return Err(bad(LineFault::NoTab));
        }
        if fields.len() > 3 {
            return Err(bad(LineFault::TooManyFields));
        }
        let host = fields[0].trim();
        if host.is_empty() {
            return Err(bad(LineFault::NoHost));
        }
        let error = fields[1].trim();
        let machine_id = fields.get(2).map(|m| m.trim()).filter(|m| !m.is_empty());
        if let Some(m) = machine_id {
            if m.contains(char::is_whitespace) {
                return Err(bad(LineFault::SpacedMachineId));
            }
        }
        out.push(UnmeasuredInput {
            host: host.to_string(),
            error: if error.is_empty() { "not measured".into() } else { error.to_string() },
            machine_id: machine_id.map(str::to_string),
        });
    }
    Ok(out)
}

/// A line of the unmeasured list that cannot be read: its number (from 1),
/// its text and what is wrong with it (the front end words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub text: String,
    pub fault: LineFault,
}

/// What is wrong with a line of the unmeasured list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineFault {
    /// No tab: not `HOST<TAB>ERROR`.
    NoTab,
    /// More than three fields.
    TooManyFields,
    /// Nothing before the first tab.
    NoHost,
    /// The third field, the machine id, holds a space.
    SpacedMachineId,
}

/// What a fleet is built for besides the comparison itself.
#[derive(Debug, Clone)]
pub struct Freshness<'a> {
    /// Runs older than this many seconds are stale.
    pub max_age_s: u64,
    /// The time ages are measured from (Unix ms).
    pub now_ms: i64,
    /// Hosts the orchestrator could not measure this time.
    pub unmeasured: &'a [UnmeasuredInput],
}

impl Freshness<'_> {
    /// The default maximum age, from now, nobody unmeasured.
    pub fn now() -> Freshness<'static> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        Freshness { max_age_s: DEFAULT_MAX_AGE_S, now_ms: now, unmeasured: &[] }
    }
}

/// A run named in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    pub run: i64,
    pub run_uuid: String,
    pub label: Option<String>,
    pub started: String,
    /// Seconds from `started` to the fleet's `now` (null when the time
    /// cannot be read).
    pub age_s: Option<f64>,
    pub status: String,
}

/// A run newer than the one its host is compared on, passed over because it
/// holds none of the fleet's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct PassedOver {
    pub run: RunRef,
    /// Why it is not compared.
    pub why: WithoutFigures,
}

/// What a run without the fleet's figures is (`report::fleet` words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WithoutFigures {
    /// A complete `exec` run (a program's policies).
    Exec,
    /// An `exec` run that did not complete, with its status (`failed`).
    ExecEnded { status: String },
    /// Any other run that holds none of them.
    Nothing,
}

/// Something the roster must warn of (`report::fleet` words it).
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// Host `host`'s run `run` started `ahead_s` seconds after the fleet's
    /// time (a clock ahead): its age is not known, it is not healthy.
    Future { host: String, run: i64, ahead_s: Option<f64>, started: String },
    /// One machine's runs recorded other host names (renamed).
    AlsoNamed { host: String, names: Vec<String> },
    /// Several machines share one host name: each is listed.
    SharedName { name: String, machine_ids: Vec<String> },
    /// The orchestrator did not measure `host` (`error`) but gave no
    /// machine id, and `machines` machines here have that name: the runs
    /// of each stay compared.
    UnmeasuredNameShared { host: String, error: String, machines: usize },
}

/// A host whose latest measuring run (of the label, with `--label`) is not
/// complete.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Incomplete {
    pub host: String,
    pub machine_id: Option<String>,
    #[serde(flatten)]
    pub latest: RunRef,
    /// The run's message (`interrupted (SIGTERM)`, the error), else its
    /// status.
    pub reason: String,
    /// Its latest complete run, if any: not compared, since the host's
    /// latest state is the incomplete one.
    pub last_complete: Option<RunRef>,
}

/// A host the orchestrator could not measure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NotMeasured {
    pub host: String,
    /// The machine's identity, when the orchestrator gave it.
    pub machine_id: Option<String>,
    pub error: String,
    /// Its latest run in this database, if any: not compared, since it is
    /// not this round's.
    pub last_run: Option<RunRef>,
}

/// A host of the comparison with what the roster knows of it.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    pub run: &'a HostRun,
    /// `--group-by label`: the label; else empty.
    pub sub: String,
    /// The host name of its latest run.
    pub name: String,
    /// Other host names the same machine's runs recorded (renamed).
    pub also_named: Vec<String>,
    /// Another machine has the same host name.
    pub duplicate_hostname: bool,
    pub age_s: Option<f64>,
    /// Older than the maximum age (or of unknown time): never healthy.
    pub stale: bool,
    /// Started after the fleet's `now` (a clock ahead): its age is not
    /// known, so it is suspect and never healthy.
    pub future: bool,
    /// Newer runs without the fleet's figures, newest first.
    pub passed_over: Vec<PassedOver>,
}

/// The hosts of a fleet sorted into those compared and those listed.
#[derive(Debug, Clone, Default)]
pub struct Roster<'a> {
    pub members: Vec<Member<'a>>,
    pub incomplete: Vec<Incomplete>,
    pub unmeasured: Vec<NotMeasured>,
    pub skipped: Vec<super::Skipped>,
    pub warnings: Vec<Warning>,
}

/// The key a run's machine is known by: its identity when the run recorded
/// one, else its host name (runs older than the identity), else its
/// fingerprint.
pub fn host_key(run: &LoadedRun) -> (String, Option<String>, Option<String>) {
    let info = &run.machine_info;
    match info.machine_id.as_deref().filter(|s| !s.is_empty()) {
        Some(id) => (format!("id:{id}"), Some(id.to_string()), info.machine_id_source.clone()),
        None => (format!("host:{}", super::host_of(run)), None, None),
    }
}
fn age_s(started: &str, now_ms: i64) -> Option<f64> {
    results::time::parse_rfc3339(started).map(|t| (now_ms - t) as f64 / 1000.0)
}

fn order(r: &HostRun) -> ((bool, i64), i64) {
    (results::time::time_order_key(&r.started), r.id)
}

/// Whether a run holds at least one of the fleet's figures.
fn has_figures(r: &HostRun) -> bool {
    !r.metrics.is_empty()
}

/// Whether a run stands for its host's measured state: it holds the
/// fleet's figures, or it is a measurement that did not end well (an
/// incomplete or failed run that is not an `exec` run, whatever it saved).
/// A complete run without figures (an `exec` run, core-to-core latency
/// only) or an `exec` run that failed says nothing of them.
fn measures(r: &HostRun) -> bool {
    has_figures(r) || (!r.complete && !r.exec)
}

/// Why a run is passed over (it does not [`measures`]).
fn why_passed_over(r: &HostRun) -> WithoutFigures {
    match (r.exec, r.complete) {
        (true, true) => WithoutFigures::Exec,
        (true, false) => WithoutFigures::ExecEnded { status: r.status.clone() },
        (false, _) => WithoutFigures::Nothing,
    }
}

fn run_ref(r: &HostRun, now_ms: i64) -> RunRef {
    RunRef {
        run: r.id,
        run_uuid: r.uuid.clone(),
        label: r.label.clone(),
        started: r.started.clone(),
        age_s: age_s(&r.started, now_ms),
        status: r.status.clone(),
    }
}

/// Sorts `runs` (any hosts, any order) into the fleet's roster: per
/// machine (and label with `by_label`) its latest run, compared when
/// complete, listed as incomplete otherwise; machines named in
/// `f.unmeasured` listed as not measured instead.
pub fn roster<'a>(
    runs: &'a [HostRun],
    by_label: bool,
    label: Option<&str>,
    f: &Freshness<'_>,
) -> Roster<'a> {
    let mut out = Roster::default();
    // Every machine's runs, and the names each went by.
    let mut machines: BTreeMap<&str, Vec<&HostRun>> = BTreeMap::new();
    for r in runs {
        machines.entry(r.key.as_str()).or_default().push(r);
    }
    let name_of: BTreeMap<&str, &str> =
        machines.iter().filter_map(|(k, rs)| Some((*k, latest_of(rs)?.host.as_str()))).collect();
    let entry_of = unmeasured_entries(&machines, &name_of, f, &mut out.warnings);
    let mut listed_unmeasured: BTreeSet<usize> = BTreeSet::new();
    let mut shown: Vec<(&str, &str)> = Vec::new(); // (key, name) of every host listed
    for (key, rs) in &machines {
        let name = name_of[key];
        if let Some(&i) = entry_of.get(key) {
            listed_unmeasured.insert(i);
            let u = &f.unmeasured[i];
            out.unmeasured.push(NotMeasured {
                host: name.to_string(),
                machine_id: rs.iter().find_map(|r| r.machine_id.clone()),
                error: u.error.clone(),
                last_run: latest_of(&measuring(rs))
                    .or_else(|| latest_of(rs))
                    .map(|r| run_ref(r, f.now_ms)),
            });
            shown.push((key, name));
            continue;
        }
        if machine_entry(&mut out, rs, name, by_label, label, f) {
            shown.push((key, name));
        }
    }
    for (i, u) in f.unmeasured.iter().enumerate() {
        if listed_unmeasured.insert(i) {
            out.unmeasured.push(NotMeasured {
                host: u.host.clone(),
                machine_id: u.machine_id.clone(),
                error: u.error.clone(),
                last_run: None,
            });
        }
    }
    mark_shared_names(&mut out, &shown);
    out
}

/// The latest of `rs` in the fleet's order.
fn latest_of<'a>(rs: &[&'a HostRun]) -> Option<&'a HostRun> {
    rs.iter().copied().max_by_key(|r| order(r))
}

/// Those of `rs` that hold (or tried to hold) the fleet's figures.
fn measuring<'a>(rs: &[&'a HostRun]) -> Vec<&'a HostRun> {
    rs.iter().copied().filter(|r| measures(r)).collect()
}

/// Which machine each unmeasured entry names (the entry's index, per
/// machine key): by its identity when the orchestrator gave it, else by
/// name when one machine alone has it; a name several machines share names
/// none of them (which one failed is not known: their runs stay compared,
/// with a warning).
fn unmeasured_entries<'k>(
    machines: &BTreeMap<&'k str, Vec<&HostRun>>,
    name_of: &BTreeMap<&'k str, &str>,
    f: &Freshness<'_>,
    warnings: &mut Vec<Warning>,
) -> BTreeMap<&'k str, usize> {
    let mut machines_named: BTreeMap<&str, Vec<&'k str>> = BTreeMap::new();
    for (k, n) in name_of {
        machines_named.entry(n).or_default().push(k);
    }
    let mut entry_of: BTreeMap<&'k str, usize> = BTreeMap::new();
    for (i, u) in f.unmeasured.iter().enumerate() {
        match u.machine_id.as_deref() {
            Some(id) => {
                let key = machines.keys().find(|k| k.strip_prefix("id:") == Some(id));
                if let Some(k) = key {
                    entry_of.entry(k).or_insert(i);
                }
            }
            None => match machines_named.get(u.host.as_str()).map(Vec::as_slice) {
                Some([k]) => {
                    entry_of.entry(k).or_insert(i);
                }
                Some(ks) if ks.len() > 1 => warnings.push(Warning::UnmeasuredNameShared {
                    host: u.host.clone(),
                    error: u.error.clone(),
                    machines: ks.len(),
                }),
                _ => {}
            },
        }
    }
    entry_of
}

/// One measured machine's entries (one per label with `by_label`), named
/// `name`: a member, an incomplete host or a host skipped with why. False
/// when no run of it has the label asked for (the machine is not shown).
fn machine_entry<'a>(
    out: &mut Roster<'a>,
    rs: &[&'a HostRun],
    name: &str,
    by_label: bool,
    label: Option<&str>,
    f: &Freshness<'_>,
) -> bool {
    let labelled: Vec<&HostRun> = rs
        .iter()
        .copied()
        .filter(|r| label.is_none_or(|l| r.label.as_deref() == Some(l)))
        .collect();
    if labelled.is_empty() {
        out.skipped.push(super::Skipped {
            host: name.to_string(),
            reason: super::Skip::NotLabelled { label: label.unwrap_or_default().to_string() },
        });
        return false;
    }
    let mut subs: BTreeMap<String, Vec<&HostRun>> = BTreeMap::new();
    for r in labelled {
        let sub = if by_label { r.label.clone().unwrap_or_default() } else { String::new() };
        subs.entry(sub).or_default().push(r);
    }
    let mut names: BTreeSet<&str> = rs.iter().map(|r| r.host.as_str()).collect();
    names.remove(name);
    for (sub, rs) in subs {
        sub_entry(out, &rs, sub, name, &names, f);
    }
    if !names.is_empty() {
        out.warnings.push(Warning::AlsoNamed {
            host: name.to_string(),
            names: names.iter().map(|n| n.to_string()).collect(),
        });
    }
    true
}

/// The entry of one machine's runs of one label (`sub`): its latest
/// measuring run as a member when complete, else the host as incomplete;
/// skipped when no run holds the fleet's figures.
fn sub_entry<'a>(
    out: &mut Roster<'a>,
    rs: &[&'a HostRun],
    sub: String,
    name: &str,
    names: &BTreeSet<&str>,
    f: &Freshness<'_>,
) {
    let Some(latest) = latest_of(&measuring(rs)) else {
        out.skipped.push(super::Skipped {
            host: name.to_string(),
            reason: super::Skip::NoFigures { latest: latest_of(rs).map(why_passed_over) },
        });
        return;
    };
    if !latest.complete {
        let complete: Vec<&HostRun> =
            rs.iter().copied().filter(|r| r.complete && has_figures(r)).collect();
        out.incomplete.push(Incomplete {
            host: name.to_string(),
            machine_id: latest.machine_id.clone(),
            latest: run_ref(latest, f.now_ms),
            reason: latest.message.clone().unwrap_or_else(|| latest.status.clone()),
            last_complete: latest_of(&complete).map(|r| run_ref(r, f.now_ms)),
        });
        return;
    }
    let mut newer: Vec<&HostRun> =
        rs.iter().copied().filter(|r| order(r) > order(latest)).collect();
    newer.sort_by_key(|r| std::cmp::Reverse(order(r)));
    let age = age_s(&latest.started, f.now_ms);
    let future = age.is_some_and(|a| a < 0.0);
    if future {
        out.warnings.push(Warning::Future {
            host: name.to_string(),
            run: latest.id,
            ahead_s: age.map(f64::abs),
            started: latest.started.clone(),
        });
    }
    out.members.push(Member {
        run: latest,
        sub,
        name: name.to_string(),
        also_named: names.iter().map(|s| s.to_string()).collect(),
        duplicate_hostname: false,
        age_s: age,
        stale: age.is_none_or(|a| a > f.max_age_s as f64),
        future,
        passed_over: newer
            .iter()
            .map(|r| PassedOver { run: run_ref(r, f.now_ms), why: why_passed_over(r) })
            .collect(),
    });
}

/// One host name, several machines: all shown, each marked (`shown`: the
/// key and name of every host listed).
fn mark_shared_names(out: &mut Roster<'_>, shown: &[(&str, &str)]) {
    let mut by_name: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (key, name) in shown {
        by_name.entry(name).or_default().insert(key);
    }
    let dup: BTreeSet<&str> =
        by_name.iter().filter(|(_, ks)| ks.len() > 1).map(|(n, _)| *n).collect();
    for (name, keys) in by_name.iter().filter(|(n, _)| dup.contains(*n)) {
        out.warnings.push(Warning::SharedName {
            name: name.to_string(),
            machine_ids: keys.iter().map(|k| k.trim_start_matches("id:").to_string()).collect(),
        });
    }
    for m in &mut out.members {
        m.duplicate_hostname = dup.contains(m.name.as_str());
    }
}
