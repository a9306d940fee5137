//! Which runs of many hosts a comparison needs, chosen from their
//! summaries so that a long history is not loaded whole.

use std::collections::{BTreeMap, BTreeSet};

use crate::util::time_order_key;
use crate::{RunId, RunSummary};

/// The runs a fleet needs, loaded one at a time (`load` reduces each to
/// what the caller keeps). Per machine and name it went by (the
/// description holds the host name), and per label when `by_label`: its
/// runs newest first, down to the first that `measured` accepts (newer
/// runs without figures, an `exec` run, are passed over and named; a newer
/// incomplete measurement is the host's state). Per machine, its latest
/// run of all (to list a host that `label` leaves out). Usually one run per
/// host is loaded, however long the history.
pub fn latest_per_host<T, E>(
    summaries: &[RunSummary],
    by_label: bool,
    label: Option<&str>,
    mut load: impl FnMut(RunId) -> Result<T, E>,
    measured: impl Fn(&T) -> bool,
) -> Result<Vec<T>, E> {
    type Slot<'a> = (&'a str, &'a str, String);
    let mut any: BTreeMap<Slot, &RunSummary> = BTreeMap::new();
    let mut slots: BTreeMap<Slot, Vec<&RunSummary>> = BTreeMap::new();
    let order = |r: &RunSummary| (time_order_key(&r.started), r.id);
    for s in summaries {
        let who = (s.machine_fingerprint.as_str(), s.machine.as_str());
        let latest = any.entry((who.0, who.1, String::new())).or_insert(s);
        if order(s) > order(latest) {
            *latest = s;
        }
        if label.is_some_and(|l| s.label.as_deref() != Some(l)) {
            continue;
        }
        let sub = if by_label { s.label.clone().unwrap_or_default() } else { String::new() };
        slots.entry((who.0, who.1, sub)).or_default().push(s);
    }
    let mut loaded: BTreeSet<RunId> = BTreeSet::new();
    let mut runs = Vec::new();
    for rs in slots.values_mut() {
        rs.sort_by_key(|r| std::cmp::Reverse(order(r)));
        for s in rs.iter() {
            if !loaded.insert(s.id) {
                continue;
            }
            let run = load(s.id)?;
            let done = measured(&run);
            runs.push(run);
            if done {
                break;
            }
        }
    }
    for s in any.values() {
        if loaded.insert(s.id) {
            runs.push(load(s.id)?);
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RunStatus;

    fn summary(id: i64, machine: &str, started: &str, label: Option<&str>) -> RunSummary {
        RunSummary {
            id: RunId(id),
            uuid: format!("u{id}"),
            label: label.map(str::to_string),
            started: started.into(),
            finished: None,
            status: RunStatus::Complete,
            complete: true,
            message: None,
            machine: format!("host {machine}"),
            machine_fingerprint: machine.into(),
            config_hash: String::new(),
            tool_version: String::new(),
            command_line: String::new(),
            result_count: 1,
            imported: false,
        }
    }

    /// Host a: run 3 (newest) has no figures, run 2 has, run 1 is older
    /// and not loaded. Host b: one run. Only a's labelled run counts with
    /// `--label x`, but a's latest of all is still loaded to name it.
    #[test]
    fn newest_down_to_the_first_measured_run_per_host() {
        let runs = [
            summary(1, "a", "2026-01-01T00:00:00Z", None),
            summary(2, "a", "2026-01-02T00:00:00Z", Some("x")),
            summary(3, "a", "2026-01-03T00:00:00Z", None),
            summary(4, "b", "2026-01-01T00:00:00Z", None),
        ];
        let measured = |id: &i64| *id != 3;
        let got: Result<Vec<i64>, ()> =
            latest_per_host(&runs, false, None, |id| Ok(id.0), measured);
        assert_eq!(got.unwrap(), vec![3, 2, 4]);
        let got: Result<Vec<i64>, ()> =
            latest_per_host(&runs, false, Some("x"), |id| Ok(id.0), measured);
        assert_eq!(got.unwrap(), vec![2, 3, 4]);
    }
}
