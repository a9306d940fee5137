//! Reports of stored runs: the end-of-run summary tables, the settings
//! study and fleet as documents, and Markdown / HTML (inline SVG charts) /
//! text reports, plus the exporters ([`export`]). What is computed
//! (metrics, study statistics, fleet outliers) is the `analysis` crate's;
//! this crate only draws it.
//!
//! A report is built once as a [`Document`] and drawn by a [`Renderer`]
//! (Markdown, HTML, Text), so every format shares one layout. Every part
//! reads the run's typed records (`results::Record`, as the store read
//! them) and matches on their enums; the exporters go through the same
//! records. [`brief`] writes the short Markdown of
//! `report --brief`. What the commands print on a terminal is the
//! `console` crate's.

mod brief;
mod build;
pub mod export;
pub mod fleet;
mod model;
mod section;

pub use model::{chart, fmt, safe, svg, text};
pub use section::{
    counters, distances, figures, glance, gpu, hmat, impossible, latency, placements, study,
    subject, trust,
};

use model::{doc, render};
use section::{
    appendix, bandwidth, environment, matrix, method, per_cpu, power, recommendations, summary,
    sweep, tiers, validation,
};

use std::str::FromStr;

pub use brief::{brief, brief_with};
pub use build::{build_report, build_report_with};
pub use doc::{Align, Block, Document, Table, Tile};
pub use render::{Html, Markdown, Renderer, Text};
pub use summary::{placements_summary, summary_flags, summary_tables, summary_taken, summary_text};

use analysis::study::Study;
use store::LoadedRun;

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
}

impl Format {
    /// The renderer of this format.
    pub fn renderer(self) -> Box<dyn Renderer> {
        match self {
            Format::Markdown => Box::new(Markdown),
            Format::Html => Box::new(Html),
        }
    }

    /// The format a file name implies (`.md`, `.markdown`, `.html`, `.htm`).
    pub fn from_path(path: &std::path::Path) -> Option<Format> {
        path.extension()?.to_str()?.parse().ok()
    }
}

/// An unknown report format name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown report format {0:?} (expected md or html)")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Ok(Format::Markdown),
            "html" | "htm" => Ok(Format::Html),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// The report of `run` (compared with `compare`, `run` as baseline) in
/// `format`, as the bytes of a file.
pub fn render_report(format: Format, run: &LoadedRun, compare: &[LoadedRun]) -> Vec<u8> {
    format.renderer().render(&build_report(run, compare))
}

/// A report file that could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}: cannot create", .0.display())]
    Create(std::path::PathBuf, #[source] std::io::Error),
    #[error("{}: cannot write", .0.display())]
    Write(std::path::PathBuf, #[source] std::io::Error),
}

/// Writes `run`'s HTML and Markdown reports into `dir` (created when
/// missing) as `run-ID-UUID8.html` and `.md`: the id, then the first 8 hex
/// digits of the run's UUID, so that two databases sharing a report folder
/// (ids count from 1 in each) never overwrite each other's reports. Each
/// file is replaced atomically: a link planted under its name is replaced,
/// never written through. Returns the two paths.
pub fn write_run_reports(
    run: &LoadedRun,
    dir: &std::path::Path,
) -> Result<(std::path::PathBuf, std::path::PathBuf), WriteError> {
    std::fs::create_dir_all(dir).map_err(|e| WriteError::Create(dir.to_path_buf(), e))?;
    let uuid = &run.summary.uuid;
    let stem = format!("run-{}-{}", run.summary.id, &uuid[..uuid.len().min(8)]);
    let write = |ext: &str, format: Format| {
        let name = format!("{stem}.{ext}");
        let bytes = render_report(format, run, &[]);
        topo::outfile::replace_atomically(dir, &name, &bytes, 0o644)
            .map_err(|e| WriteError::Write(dir.join(&name), e))
    };
    Ok((write("html", Format::Html)?, write("md", Format::Markdown)?))
}

/// The report of `run` with a settings study of groups of runs (`others`:
/// the other runs of the study, listed with their commands).
pub fn render_study_report(
    format: Format,
    run: &LoadedRun,
    others: &[LoadedRun],
    study: &Study,
) -> Vec<u8> {
    format.renderer().render(&build_report_with(run, others, Some(study)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reports are named by the run's id and UUID prefix, and a link
    /// planted under a report's name is replaced, never written through.
    #[test]
    fn run_reports_are_named_by_id_and_uuid_and_never_follow_a_link() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/v1");
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.db");
        std::fs::copy(data.join("results.db"), &db).unwrap();
        let store = store::Store::open_existing(&db).unwrap();
        let run = store.load_run(store::RunId(1)).unwrap();
        let out = dir.path().join("reports");
        std::fs::create_dir(&out).unwrap();
        let stem = format!("run-1-{}", &run.summary.uuid[..8]);
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, out.join(format!("{stem}.md"))).unwrap();
        let (html, md) = write_run_reports(&run, &out).unwrap();
        assert_eq!(html, out.join(format!("{stem}.html")));
        assert_eq!(md, out.join(format!("{stem}.md")));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::read_to_string(&md).unwrap().starts_with('#'));
        assert!(std::fs::read_to_string(&html).unwrap().contains("<html"));
    }
}
