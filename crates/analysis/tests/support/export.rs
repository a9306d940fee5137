//! Test support: the runs of a `numaprobe export` document read as the
//! store would give them back after `numaprobe import` into an empty
//! database (ids 1, 2... in the document's order), so that analysis is
//! tested on real exports without the store (docs/store.md, "Export
//! format"). Shared by the unit tests (`data::tests`) and `tests/study.rs`.

use results::context::{Configuration, Machine, RunTopology};
use results::run::{LoadedRun, RunId, RunStatus, RunSummary, StoredRecord};
use serde::Deserialize;

#[derive(Deserialize)]
struct Doc {
    runs: Vec<Run>,
}

#[derive(Deserialize)]
struct Run {
    uuid: String,
    label: Option<String>,
    command_line: String,
    tool_version: String,
    started: String,
    finished: Option<String>,
    status: RunStatus,
    message: Option<String>,
    machine: MachineOf,
    config_hash: String,
    config: Configuration,
    topology: RunTopology,
    results: Vec<StoredRecord>,
}

#[derive(Deserialize)]
struct MachineOf {
    fingerprint: String,
    description: String,
    info: Machine,
}

/// The runs of the export document `text`, as loaded runs.
pub fn runs_of_export(text: &str) -> Vec<LoadedRun> {
    let doc: Doc = serde_json::from_str(text).expect("an export document");
    doc.runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| LoadedRun {
            summary: RunSummary {
                id: RunId(i as i64 + 1),
                uuid: r.uuid,
                label: r.label,
                started: r.started,
                finished: r.finished,
                status: r.status,
                complete: r.status == RunStatus::Complete,
                message: r.message,
                machine: r.machine.description,
                machine_fingerprint: r.machine.fingerprint,
                config_hash: r.config_hash,
                tool_version: r.tool_version,
                command_line: r.command_line,
                result_count: r.results.len() as u64,
                imported: true,
            },
            machine_info: r.machine.info,
            config: r.config,
            topology: r.topology,
            results: r.results,
        })
        .collect()
}
