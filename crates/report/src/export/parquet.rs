//! `export --format parquet`: runs as three tidy Parquet tables (the
//! figures, one row per figure; the runs; the settings each run was
//! measured under), read one run at a time from the database. The rows are
//! drawn here from the typed records, the fleet's reduction of a run
//! (`analysis::fleet::HostRun`: the figures and settings `fleet` compares)
//! and the metric catalogue, beside the CSV and OpenMetrics exporters;
//! `store::parquet` writes them. Schema in docs/fleet.md; the fleet's
//! verdicts over these tables, as SQL, in deploy/sql.

use std::path::{Path, PathBuf};

use analysis::fleet::HostRun;
use analysis::metrics::MetricKey;
use results::lat::Lat;
use results::stats::measured;
use results::Record;
use store::parquet::{FigureRow, FiguresTable, ParquetError, RunKey, RunRow, SettingsTable};
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

/// The path of a table beside the figures file `path`: `NAME.parquet` ->
/// `NAME.TABLE.parquet`.
fn beside(path: &Path, table: &str) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
    let name = match ext {
        Some(e) => format!("{stem}.{table}.{e}"),
        None => format!("{stem}.{table}.parquet"),
    };
    path.with_file_name(name)
}

/// Where the runs table goes beside the figures file `path`:
/// `NAME.parquet` -> `NAME.runs.parquet`.
pub fn runs_path(path: &Path) -> PathBuf {
    beside(path, "runs")
}

/// Where the settings table goes beside the figures file `path`:
/// `NAME.parquet` -> `NAME.settings.parquet`.
pub fn settings_path(path: &Path) -> PathBuf {
    beside(path, "settings")
}

/// The rows each table got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub figures: u64,
    pub runs: u64,
    pub settings: u64,
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

/// Every figure of a run: the figures `fleet` compares (`kind = 'fleet'`,
/// `host`'s: the run reduced as the fleet reduces it), each catalogue
/// metric (what `compare` compares, with its relation and scope), then
/// each bandwidth and latency result (its nodes and whether it was
/// stable). A catalogue metric may share its id with a fleet figure
/// (`local_lat_ns`) and differ from it: the catalogue draws it by
/// hardware relation, the fleet from the run's headline figures.
pub fn figures_of(run: &LoadedRun, host: &HostRun) -> Vec<FigureRow> {
    let mut out: Vec<FigureRow> = MetricKey::ALL
        .into_iter()
        .filter_map(|k| {
            let value = *host.metrics.get(&k)?;
            Some(FigureRow {
                kind: "fleet",
                metric_id: k.id().to_string(),
                relation: None,
                scope: None,
                cpu_node: None,
                mem_node: None,
                value,
                unit: k.unit().to_string(),
                higher_is_better: Some(k.higher_is_better()),
                stable: None,
            })
        })
        .collect();
    out.extend(
        analysis::catalogue::catalogue(run).into_iter().filter(|m| m.value.is_finite()).map(|m| {
            FigureRow {
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
            }
        }),
    );
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

/// Writes `ids`' figures to `path`, their runs and settings beside it
/// ([`runs_path`], [`settings_path`]), reading one run at a time.
pub fn export(db: &Store, ids: &[RunId], path: &Path) -> Result<Written, ExportError> {
    let open = |p: &Path| {
        topo::outfile::open_output(p)
            .map(std::io::BufWriter::new)
            .map_err(|e| ExportError::Open(p.to_path_buf(), e))
    };
    let sp = settings_path(path);
    let rp = runs_path(path);
    let werr = |p: &Path| {
        let p = p.to_path_buf();
        move |e| ExportError::Write(p, e)
    };
    let mut figures = FiguresTable::new(open(path)?).map_err(werr(path))?;
    let mut settings = SettingsTable::new(open(&sp)?).map_err(werr(&sp))?;
    let mut runs: Vec<RunRow> = Vec::with_capacity(ids.len());
    for id in ids {
        // Every record (the catalogue reads most kinds), none written back.
        let run = db.load_run_records(*id, None)?;
        let host = HostRun::of(&run);
        let key = key_of(&run);
        let rows = figures_of(&run, &host);
        figures.push(&key, &rows).map_err(werr(path))?;
        settings
            .push(&key.run_uuid, host.settings.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .map_err(werr(&sp))?;
        runs.push(RunRow {
            model: host.model,
            finished_ms: run.summary.finished.as_deref().and_then(store::util::parse_rfc3339),
            status: run.summary.status.to_string(),
            machine_fingerprint: run.summary.machine_fingerprint.clone(),
            tool_version: run.summary.tool_version.clone(),
            figures: rows.len() as i64,
            run_id: run.summary.id.0,
            exec: host.exec,
            message: run.summary.message.clone(),
            settings: host.settings.len() as i64,
            key,
        });
    }
    let figures = figures.finish().map_err(werr(path))?;
    let settings = settings.finish().map_err(werr(&sp))?;
    let n = store::parquet::write_runs(open(&rp)?, &runs).map_err(werr(&rp))?;
    Ok(Written { figures, runs: n, settings })
}
