//! `export --format parquet`: runs as two tidy Parquet tables (the figures,
//! one row per figure, and the runs), read one run at a time from the
//! database. The rows are drawn here from the typed records and the
//! metric catalogue, beside the CSV and OpenMetrics exporters;
//! `store::parquet` writes them. Schema and a DuckDB query in
//! docs/fleet.md.

use std::path::{Path, PathBuf};

use results::lat::Lat;
use results::stats::measured;
use results::Record;
use store::parquet::{FigureRow, ParquetError, RunKey, RunRow};
use store::{LoadedRun, RunId, Store, StoreError};

/// Why an export stopped: a file could not be written, or a run could not
/// be read. Each names the file it was writing.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{}: cannot write", .0.display())]
    Open(PathBuf, #[source] std::io::Error),
    #[error("{}: cannot write Parquet", .0.display())]
    Write(PathBuf, #[source] ParquetError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where the runs table goes beside the figures file `path`:
/// `NAME.parquet` -> `NAME.runs.parquet`.
pub fn runs_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
    let name = match ext {
        Some(e) => format!("{stem}.runs.{e}"),
        None => format!("{stem}.runs.parquet"),
    };
    path.with_file_name(name)
}

fn key_of(run: &LoadedRun) -> RunKey {
    RunKey {
        machine_id: run.machine_info.machine_id.clone().filter(|s| !s.is_empty()),
        host: analysis::fleet::host_of(run),
        run_uuid: run.summary.uuid.clone(),
        started_ms: store::util::parse_rfc3339(&run.summary.started),
        label: run.summary.label.clone(),
        config_hash: run.summary.config_hash.clone(),
    }
}

fn text_of<T: serde::Serialize>(v: &T) -> Option<String> {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_string))
}

/// Every figure of a run: each catalogue metric (what `compare` and
/// `fleet` compare, with its relation and scope), then each bandwidth and
/// latency result (its nodes and whether it was stable).
pub fn figures_of(run: &LoadedRun) -> Vec<FigureRow> {
    let mut out: Vec<FigureRow> = analysis::catalogue::catalogue(run)
        .into_iter()
        .filter(|m| m.value.is_finite())
        .map(|m| FigureRow {
            kind: "metric",
            relation: text_of(&m.def.relation),
            scope: text_of(&m.def.scope),
            metric_id: m.def.id.to_string(),
            cpu_node: None,
            mem_node: None,
            value: m.value,
            unit: m.def.unit,
            higher_is_better: Some(m.def.higher_is_better),
            stable: None,
        })
        .collect();
    let node = |n: Option<u32>| n.and_then(|n| i32::try_from(n).ok());
    for r in run.records() {
        let row = match r {
            Record::Bw(b) if b.best_gbs.is_finite() => FigureRow {
                kind: "result",
                metric_id: match b.mode.name() {
                    "scaling" => format!("bw.scaling.{}.{}t", b.kernel.name(), b.threads),
                    m => format!("bw.{m}.{}", b.kernel.name()),
                },
                relation: None,
                scope: None,
                cpu_node: node(b.cpu_node),
                mem_node: node(b.mem_node),
                value: b.best_gbs,
                unit: "GB/s".into(),
                higher_is_better: Some(true),
                stable: Some(b.stable),
            },
            Record::Lat(l) => {
                let (id, cpu, mem, v, stable) = match l.as_ref() {
                    Lat::Chase(c) => {
                        let id = match c.mode.name() {
                            "sweep" => format!("lat.sweep.{}B", c.size_bytes),
                            "per-cpu" => format!("lat.per-cpu.cpu{}", c.cpu),
                            m => format!("lat.{m}"),
                        };
                        (id, c.cpu_node, c.mem_node, c.median_ns, c.stable)
                    }
                    Lat::Loaded(p) => {
                        let load = match (p.idle, p.delay_ns) {
                            (true, _) => "idle".to_string(),
                            (false, Some(ns)) => format!("{ns:.0}ns"),
                            (false, None) => format!("spin{}", p.delay),
                        };
                        let id = format!("lat.loaded.{}.{load}", p.load_kind.name());
                        let v = measured(p.median_ns).unwrap_or(p.latency_ns);
                        (id, None, p.mem_node, v, p.stable)
                    }
                    Lat::C2c(c) => (
                        format!("lat.c2c.{}-{}", c.cpu_a, c.cpu_b),
                        None,
                        None,
                        c.median_ns,
                        c.stable,
                    ),
                };
                if !v.is_finite() {
                    continue;
                }
                FigureRow {
                    kind: "result",
                    metric_id: id,
                    relation: None,
                    scope: None,
                    cpu_node: node(cpu),
                    mem_node: node(mem),
                    value: v,
                    unit: "ns".into(),
                    higher_is_better: Some(false),
                    stable: Some(stable),
                }
            }
            _ => continue,
        };
        out.push(row);
    }
    out
}

/// Writes `ids`' figures to `path` and their runs beside it
/// ([`runs_path`]): (figure rows, run rows).
pub fn export(db: &Store, ids: &[RunId], path: &Path) -> Result<(u64, u64), ExportError> {
    let file =
        topo::outfile::open_output(path).map_err(|e| ExportError::Open(path.to_path_buf(), e))?;
    let mut runs: Vec<RunRow> = Vec::with_capacity(ids.len());
    let mut failed: Option<StoreError> = None;
    let iter = ids.iter().map_while(|id| match db.load_run(*id) {
        Ok(run) => {
            let key = key_of(&run);
            let figures = figures_of(&run);
            runs.push(RunRow {
                key: key.clone(),
                model: analysis::fleet::model_of(&run),
                finished_ms: run.summary.finished.as_deref().and_then(store::util::parse_rfc3339),
                status: run.summary.status.to_string(),
                machine_fingerprint: run.summary.machine_fingerprint.clone(),
                tool_version: run.summary.tool_version.clone(),
                figures: figures.len() as i64,
            });
            Some(Ok((key, figures)))
        }
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    let figures = store::parquet::write_figures(std::io::BufWriter::new(file), iter)
        .map_err(|e| ExportError::Write(path.to_path_buf(), e))?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    let rp = runs_path(path);
    let file = topo::outfile::open_output(&rp).map_err(|e| ExportError::Open(rp.clone(), e))?;
    let n = store::parquet::write_runs(std::io::BufWriter::new(file), &runs)
        .map_err(|e| ExportError::Write(rp.clone(), e))?;
    Ok((figures, n))
}
