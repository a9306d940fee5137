//! Where a result's pages were: the one placement shape every result
//! carries (`placement: {status, check}`), and the `move_pages` verdict it
//! holds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use topo::NodeSet;

/// Share of sampled pages on the intended nodes below which a result is
/// flagged.
pub const FLAG_BELOW: f64 = 0.99;

/// The verdict on a placement: did the pages land where they were asked?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlacementCheck {
    /// Nodes the pages were expected on.
    pub expected: NodeSet,
    /// Share of sampled pages on `expected` (0..=1).
    pub fraction: f64,
    /// Share of sampled pages per node (0..=1), nodes with none omitted.
    pub per_node: BTreeMap<u32, f64>,
    pub sampled_pages: u64,
    pub total_pages: u64,
    /// Sampled pages not present (not counted as on any node).
    pub not_present_pages: u64,
    /// The share required (default [`DEFAULT_THRESHOLD`]).
    pub threshold: f64,
    /// `fraction >= threshold` and at least one page sampled.
    pub ok: bool,
    /// For spread checks (interleave): each node's expected share and the
    /// largest absolute deviation seen; `None` for plain checks.
    pub spread: Option<SpreadCheck>,
}

/// How evenly pages are spread over a set (interleave checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpreadCheck {
    /// Expected share per node (sums to 1).
    pub expected_share: BTreeMap<u32, f64>,
    /// Largest |actual - expected| share over the nodes.
    pub max_deviation: f64,
    /// The deviation allowed.
    pub tolerance: f64,
    pub ok: bool,
}

/// Where a result's pages were found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    pub status: PlacementStatus,
    /// The `move_pages` verdict (`None` when the kernel could not be asked
    /// or no node was requested).
    pub check: Option<PlacementCheck>,
}

impl Placement {
    pub fn unverified() -> Self {
        Placement { status: PlacementStatus::Unverified, check: None }
    }

    /// The verdict of `check`: verified when its share reaches its threshold.
    pub fn of_check(check: PlacementCheck) -> Self {
        let status = if check.ok { PlacementStatus::Verified } else { PlacementStatus::Mismatch };
        Placement { status, check: Some(check) }
    }

    /// Share of sampled pages on the intended nodes (0..=1), when checked.
    pub fn fraction(&self) -> Option<f64> {
        self.check.as_ref().map(|c| c.fraction)
    }

    /// The pages were not where they were asked: under
    /// [`FLAG_BELOW`] of the sampled pages on target, or the check said so.
    pub fn flagged(&self) -> bool {
        self.fraction().is_some_and(|f| f < FLAG_BELOW) || self.status == PlacementStatus::Mismatch
    }

    /// Share of sampled pages on the requested node, percent.
    pub fn pct_on_node(&self) -> Option<f64> {
        self.fraction().map(|f| f * 100.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlacementStatus {
    /// At least 99% of the sampled pages are on the requested node.
    Verified,
    /// Fewer: the result is flagged.
    Mismatch,
    /// The kernel could not be asked (no NUMA support) or nothing was asked.
    Unverified,
}
