//! Whether counting is allowed and possible here: the
//! `kernel.perf_event_paranoid` level and a probe that opens one hardware
//! and one software event on this thread (for `audit`).

use results::counters::event;
use topo::SysRoot;

use crate::set::{EventSet, Target};

pub use crate::paranoid::paranoid;

/// What this process may count.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub paranoid: Option<i64>,
    /// Effective user id 0 (root passes every paranoid level).
    pub root: bool,
    /// `None` when cycles could be counted, else why not.
    pub hardware: Option<String>,
    /// `None` when page faults could be counted, else why not.
    pub software: Option<String>,
    /// Only user space could be counted (the kernel was excluded).
    pub user_only: bool,
}

impl Access {
    /// One line for tables: `hardware and software events`, or what is
    /// missing and why.
    pub fn describe(&self) -> String {
        match (&self.hardware, &self.software) {
            (None, None) if self.user_only => {
                "hardware and software events (user space only)".into()
            }
            (None, None) => "hardware and software events".into(),
            (Some(h), None) => format!("software events only; hardware events unavailable ({h})"),
            (None, Some(s)) => format!("hardware events only; software events unavailable ({s})"),
            (Some(h), Some(_)) => format!("no events ({h})"),
        }
    }
}

/// Opens the events on this thread and reports which could be counted.
pub fn probe(root: &SysRoot) -> Access {
    let mut set = EventSet::open(Target::ThisThread, "probe");
    set.enable();
    std::hint::black_box((0..1000u64).sum::<u64>());
    set.disable();
    let c = set.read();
    let why = |e: &str| c.get(e).and_then(|r| r.unavailable.clone());
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    Access {
        paranoid: paranoid(root),
        root: root_user,
        hardware: why(event::CYCLES),
        software: why(event::PAGE_FAULTS),
        user_only: c.get(event::CYCLES).is_some_and(|r| r.user_only),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_events_are_always_there_and_the_probe_says_so() {
        let a = probe(&SysRoot::live());
        assert_eq!(a.software, None, "{a:?}");
        let d = a.describe();
        match &a.hardware {
            Some(h) => assert!(d.starts_with("software events only") && d.contains(h), "{d}"),
            None => assert!(d.starts_with("hardware and software events"), "{d}"),
        }
    }
}
