//! Reports of stored runs: the end-of-run summary tables, the settings
//! study and fleet as documents, and Markdown / HTML (inline SVG charts) /
//! text reports, plus the CSV and OpenMetrics exports. What is computed
//! (metrics, study statistics, fleet outliers) is the `analysis` crate's;
//! this crate only draws it.
//!
//! A report is built once as a [`Document`] and drawn by a [`Renderer`]
//! (Markdown, HTML, Text), so every format shares one layout. Every part
//! reads the run's typed records (`results::Record`, as the store read
//! them) and matches on their enums; the CSV and OpenMetrics exporters go
//! through the same records. [`brief`] writes the short Markdown of
//! `report --brief`; [`console`] the text commands print on a terminal.

mod appendix;
mod bandwidth;
mod brief;
mod build;
pub mod chart;
pub mod console;
pub mod counters;
pub mod csv;
mod doc;
mod environment;
pub mod figures;
pub mod fleet;
pub mod fmt;
pub mod glance;
pub mod gpu;
pub mod hmat;
pub mod latency;
mod method;
pub mod openmetrics;
mod per_cpu;
pub mod placements;
mod power;
mod recommendations;
mod render;
pub mod safe;
pub mod study;
pub mod study_text;
mod summary;
pub mod svg;
mod sweep;
mod tiers;
mod validation;

use std::str::FromStr;

pub use brief::{brief, brief_with};
pub use build::{build_report, build_report_with};
pub use doc::{Align, Block, Document, Table, Tile};
pub use render::{Html, Markdown, Renderer, Text};
pub use summary::{placements_summary, summary_flags, summary_tables, summary_text};

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
