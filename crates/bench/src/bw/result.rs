//! One bandwidth figure: the record lives in `results` (read by the store,
//! audit evidence and reports); re-exported here for the experiment's users.

pub use results::bw::{BwResult, Mode, Policy, Stores};
