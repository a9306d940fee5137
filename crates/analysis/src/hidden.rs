//! Hidden NUMA judged again for a stored run, by the one rule of
//! [`results::hidden`] that `lat --per-cpu` measures by (studies, reports
//! and `show` read it here). A stored `hidden_numa` flag is the measuring
//! version's verdict and may predate the rule; readers judge again with
//! [`hides_numa`]. The judgement lives beside the run's data
//! ([`crate::data`]), which applies it as it reads a run, so that data,
//! this module and the catalogue import each other in one direction only.

pub use crate::data::{hides_numa, numa_below_the_os};
