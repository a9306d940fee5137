//! The document model: a report as blocks ([`doc`]), drawn by a renderer
//! ([`render`]: Markdown, HTML, text) with its charts ([`chart`]) as inline
//! SVG ([`svg`]); figures written to the digits their noise allows
//! ([`fmt`]) and text made safe for a terminal, Markdown or HTML
//! ([`safe`]). It knows no section and no record.

pub mod chart;
pub mod doc;
pub mod fmt;
pub mod render;
pub mod safe;
pub mod svg;
pub mod text;
