//! What numaprobe and its GPU helper say to each other: a [`Plan`] as JSON
//! on the helper's stdin, then one [`Message`] per line on its stdout, so
//! that every point measured before a failure or Ctrl-C reaches numaprobe.
//!
//! The protocol names no vendor: a helper for another runtime (HIP's
//! `libamdhip64.so`) answers the same messages. That is the seam.

use serde::{Deserialize, Serialize};

/// Bumped when a field changes meaning or goes away.
pub const PROTOCOL_VERSION: u32 = 2;

pub use results::gpu::Direction;

/// One host NUMA node the plan copies from, with the CPUs the helper's
/// thread runs on while it copies (empty for a memory-only node: the thread
/// is then left where it is).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanNode {
    pub node: u32,
    /// CPU list (`0-7,16-23`).
    pub cpus: String,
}

/// What to measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub protocol: u32,
    /// Device ordinals, as the driver numbers them.
    pub gpus: Vec<u32>,
    pub nodes: Vec<PlanNode>,
    pub directions: Vec<Direction>,
    /// Copy sizes in bytes, ascending.
    pub sizes: Vec<u64>,
    /// Timed copies per point (after one untimed warm-up copy).
    pub reps: u32,
    /// After each node's pairs, copy from it to all `gpus` at once (only
    /// with two GPUs or more), at [`together_size`] of the largest size.
    #[serde(default)]
    pub together: bool,
}

/// The copy size of the all-GPUs-at-once step: the plan's largest, at most
/// 256 MiB (each GPU gets its own pinned range, twice that for bidir, so
/// 8 GPUs need 4 GiB on the node).
pub fn together_size(largest: u64) -> u64 {
    largest.min(256 << 20)
}

/// One device as the driver describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub ordinal: u32,
    pub name: String,
    /// PCI address, lower case (`0000:3b:00.0`), to match sysfs.
    pub pci_address: String,
    pub memory_bytes: u64,
}

/// The driver and its devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The runtime (`cuda`).
    pub runtime: String,
    /// The library opened (`libcuda.so.1`, or the path given).
    pub library: String,
    /// The driver's API version as it reports it (12040 = 12.4).
    pub driver_version: u32,
    pub devices: Vec<Device>,
}

/// One measured point: `reps` timed copies of `size_bytes` between the
/// pinned host buffer on `node` and `gpu`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub gpu: u32,
    pub node: u32,
    pub direction: Direction,
    pub size_bytes: u64,
    /// GB/s (10^9 bytes/s) of each timed copy, in order.
    pub gbs: Vec<f64>,
    /// How the copies were timed: `device events` or `host clock`.
    pub timer: String,
    /// Share of the host buffer's sampled pages found on `node`
    /// (`move_pages`) before the copies.
    pub on_node: f64,
    /// The GPUs that copied at the same time (all-GPUs-at-once step);
    /// empty when this GPU copied alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub together: Vec<u32>,
}

/// One line of the helper's stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    Probe(Probe),
    Point(Point),
    /// Something the user should know that did not stop the measurement.
    Warning {
        text: String,
    },
    /// Why the helper stopped early; the last line it writes then.
    Failed {
        text: String,
    },
    /// `stream` mode: the GPUs are copying now, and go on until numaprobe
    /// closes the helper's stdin.
    Streaming,
    /// All planned points were measured.
    Done,
}

/// The longest a `stream` runs when numaprobe never says stop (it closes
/// the helper's stdin; a numaprobe that hangs must not leave the GPUs
/// copying for ever).
pub const MAX_STREAM_SECS: u64 = 600;

/// The default copy sizes: 64 KiB to 1 GiB in steps of 4.
pub fn default_sizes() -> Vec<u64> {
    (0..=7).map(|i| (64u64 << 10) << (2 * i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_span_64k_to_1g() {
        let s = default_sizes();
        assert_eq!(s.first(), Some(&(64 << 10)));
        assert_eq!(s.last(), Some(&(1 << 30)));
        assert_eq!(s.len(), 8);
    }

    #[test]
    fn messages_round_trip_as_one_line_each() {
        let m = Message::Point(Point {
            gpu: 1,
            node: 0,
            direction: Direction::Bidir,
            size_bytes: 1 << 20,
            gbs: vec![20.5, 21.0],
            timer: "device events".into(),
            on_node: 1.0,
            together: vec![],
        });
        let line = serde_json::to_string(&m).unwrap();
        assert!(!line.contains('\n'));
        assert!(line.contains("\"type\":\"point\""), "{line}");
        assert!(line.contains("\"direction\":\"bidir\""), "{line}");
        assert_eq!(serde_json::from_str::<Message>(&line).unwrap(), m);
    }
}
