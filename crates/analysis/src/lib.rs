//! The analysis of stored runs, apart from any rendering: what a run's
//! results say ([`data::RunData`], the headline [`metrics`]), settings
//! studies of groups of runs with their statistics and recommendations
//! ([`study`]), and the fleet model of many hosts' runs, its outliers and
//! configuration drift ([`fleet`]), and `numaprobe gpu`'s node x GPU
//! matrix with its data-loader recommendation ([`gpu`]), the figures the
//! settings audit cites ([`evidence`]) and the hidden-NUMA judgement of a
//! stored run ([`hidden`]). Pure functions over typed runs the caller
//! loaded (`results::run::LoadedRun`): analysis never reads the store. The
//! `report` crate draws their results as documents, `numaprobe compare`
//! and `numaprobe fleet` print them.

pub mod advice;
pub mod catalogue;
pub mod data;
pub mod declared;
pub mod distances;
pub mod evidence;
pub mod fleet;
pub mod gpu;
pub mod hidden;
pub mod impossible;
pub mod inputs;
pub mod layout;
pub mod metric_id;
pub mod metrics;
pub mod placements;
pub mod scope;
pub mod study;
pub mod subject;
pub mod trust;
