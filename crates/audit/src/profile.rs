//! Workload profiles: what each kind of workload wants from the machine
//! (`results::profile`, shared with the settings studies of `analysis`).

pub use results::profile::{Profile, UnknownProfile};
