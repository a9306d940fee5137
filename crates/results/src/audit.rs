//! The settings audit's record: one [`Finding`] per checked item, with how
//! much it matters ([`Severity`]) and what a fix takes ([`Needs`]). The
//! `audit` crate produces them; the store files each under kind `audit`,
//! and reports list them.

use serde::{Deserialize, Serialize};

/// How much a finding matters, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Set as the profile wants.
    Ok,
    /// Worth knowing; a recommendation.
    Info,
    /// Absent or could not be read: numaprobe does not guess.
    Unknown,
    /// Costs performance for this profile.
    Warn,
    /// Costs a lot (e.g. the NUMA topology hidden).
    Critical,
}

impl Severity {
    /// The stored name (`ok`, `info`, `unknown`, `warn`, `critical`).
    pub fn label(self) -> &'static str {
        match self {
            Severity::Ok => "ok",
            Severity::Info => "info",
            Severity::Unknown => "unknown",
            Severity::Warn => "warn",
            Severity::Critical => "critical",
        }
    }
}

impl Severity {
    /// Order for listing, most severe first: critical, warn, info, then
    /// unknown and ok.
    pub fn rank(self) -> u8 {
        match self {
            Severity::Critical => 0,
            Severity::Warn => 1,
            Severity::Info => 3,
            Severity::Unknown | Severity::Ok => 4,
        }
    }
}

/// What a fix takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Needs {
    /// Nothing to change.
    Nothing,
    /// A command on the running system.
    Runtime,
    /// A kernel command-line change and a reboot.
    Reboot,
    /// A firmware (BIOS/UEFI) setting and a reboot.
    Bios,
    /// Moving or adding hardware (DIMMs, cards).
    Hardware,
}

impl Needs {
    /// The stored name (`nothing`, `runtime`, `reboot`, `bios`, `hardware`).
    pub fn label(self) -> &'static str {
        match self {
            Needs::Nothing => "nothing",
            Needs::Runtime => "runtime",
            Needs::Reboot => "reboot",
            Needs::Bios => "bios",
            Needs::Hardware => "hardware",
        }
    }
}

/// One checked item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable identifier, e.g. `kernel.zone_reclaim_mode`.
    pub id: String,
    pub severity: Severity,
    /// Short name for tables.
    pub title: String,
    /// What the machine has.
    pub found: String,
    /// What the profile wants.
    pub expected: String,
    /// Why, in one sentence.
    pub why: String,
    /// The exact command or BIOS setting (empty when nothing to do).
    pub fix: String,
    pub needs: Needs,
    /// Measured figures that support the finding.
    pub evidence: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_stored_names() {
        for s in
            [Severity::Ok, Severity::Info, Severity::Unknown, Severity::Warn, Severity::Critical]
        {
            assert_eq!(serde_json::to_value(s).unwrap(), s.label());
        }
        for n in [Needs::Nothing, Needs::Runtime, Needs::Reboot, Needs::Bios, Needs::Hardware] {
            assert_eq!(serde_json::to_value(n).unwrap(), n.label());
        }
        assert!(Severity::Critical > Severity::Warn && Severity::Warn > Severity::Unknown);
    }
}
