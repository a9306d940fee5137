//! `numaprobe-gpu`, the helper `numaprobe gpu` runs: see [`gpu::helper`].

fn main() {
    std::process::exit(gpu::helper::main());
}
