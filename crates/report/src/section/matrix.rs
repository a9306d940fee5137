//! A node matrix as a report section draws it: the heatmap, the
//! remote/local view, or a sentence where there is one node pair only
//! (bandwidth and latency sections both).

use crate::chart::{matrix_heatmap, ratio_heatmap, Chart};
use crate::doc::Document;

/// A node matrix in a report: its heatmap and, when a row has a local and
/// a remote cell, the remote/local view; a sentence instead for a single
/// node pair.
pub(crate) fn charts(
    doc: &mut Document,
    title: String,
    unit: &str,
    cells: Vec<((u32, u32), Option<f64>)>,
    ratio_title: &str,
) {
    if cells.len() > 1 {
        let hm = matrix_heatmap(title, unit, cells.into_iter());
        let ratio = ratio_heatmap(&hm, ratio_title);
        doc.chart(Chart::Heatmap(hm));
        if let Some(r) = ratio {
            doc.chart(Chart::Heatmap(r));
        }
    } else {
        doc.p("One node pair only (a single-node machine): the matrix is the table below, no heatmap is drawn.");
    }
}
