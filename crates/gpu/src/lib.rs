//! `numaprobe gpu`: host<->device copy bandwidth from every NUMA node to
//! every GPU, from pinned host memory placed on the node.
//!
//! The release `numaprobe` is a static binary and never opens the GPU
//! runtime itself: it runs the dynamically linked helper `numaprobe-gpu`
//! ([`helper`], shipped beside it), which opens `libcuda.so.1` ([`driver`])
//! and answers in the line protocol of [`protocol`]. [`launch`] finds and
//! runs the helper; `analysis::gpu` turns its points into the node x GPU
//! matrix and the data-loader recommendation.

pub mod driver;
pub mod helper;
pub mod launch;
pub mod plan;
pub mod protocol;

/// Why a GPU measurement could not be made, in one line each.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("the GPU driver library {library} {why}")]
    Library { library: String, why: String },
    #[error("the GPU driver shows no device (cuInit: CUDA_ERROR_NO_DEVICE)")]
    NoDevice,
    #[error("the GPU driver is too old: it offers API {}.{} and numaprobe gpu needs {}.{} or newer", have / 1000, have % 1000 / 10, need / 1000, need % 1000 / 10)]
    TooOld { have: u32, need: u32 },
    #[error("{call} failed: {name} ({code})")]
    Driver { call: &'static str, code: i32, name: String },
    #[error("{0}")]
    Plan(String),
    #[error("{0}")]
    Placement(String),
    #[error("{0}")]
    Timing(String),
    #[error("{0}")]
    Helper(String),
}
