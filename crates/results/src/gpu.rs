//! A host<->GPU copy measured by `numaprobe gpu`: one node x GPU pair in
//! one direction at one size, from pinned host memory placed on the node.

use serde::{Deserialize, Serialize};

/// A copy direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Host to device.
    H2d,
    /// Device to host.
    D2h,
    /// Both at once, on two streams; the figure counts both directions' bytes.
    Bidir,
}

impl Direction {
    pub const ALL: [Direction; 3] = [Direction::H2d, Direction::D2h, Direction::Bidir];

    pub fn name(self) -> &'static str {
        match self {
            Direction::H2d => "h2d",
            Direction::D2h => "d2h",
            Direction::Bidir => "bidir",
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Direction::H2d => "host to device",
            Direction::D2h => "device to host",
            Direction::Bidir => "both directions at once",
        }
    }

    pub fn parse(s: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.name() == s)
    }
}

/// One measured point of `numaprobe gpu`, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuCopy {
    /// The driver's device ordinal.
    pub gpu: u32,
    /// The device's name as the driver gives it.
    pub device: String,
    /// Its PCI address (`0000:3b:00.0`).
    pub pci_address: String,
    /// The host node the pinned buffer was on.
    pub mem_node: u32,
    pub direction: Direction,
    pub size_bytes: u64,
    /// GB/s (10^9 bytes/s) of each timed copy, in order.
    pub gbs: Vec<f64>,
    /// Median of `gbs`.
    pub median_gbs: f64,
    /// How the copies were timed (`device events`).
    pub timer: String,
    /// Share of the buffer's sampled pages found on `mem_node`.
    pub on_node: f64,
    /// Empty for a GPU copying alone (the node x GPU matrix). Otherwise the
    /// GPUs that copied at the same time from `mem_node`, this one among
    /// them (the all-GPUs-at-once step, which finds shared bottlenecks:
    /// a PCIe switch, the socket's link).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<u32>,
}
