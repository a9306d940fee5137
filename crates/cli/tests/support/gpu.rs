//! The GPU tests' pieces: the driver library's double and the helper
//! binary (shared by gpu_cli.rs and json_cli.rs).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The double, built beside the test binary as a dev-dependency.
pub fn double() -> PathBuf {
    let deps = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
    let so = deps.join("libcuda_double.so");
    assert!(
        so.is_file(),
        "{} is missing: cargo builds it as the cuda-double dev-dependency",
        so.display()
    );
    so
}

/// The helper binary (crates/gpu), built once into its own target folder:
/// cargo builds no binary of a dependency, and the folder this test runs
/// from is locked by the `cargo test` that runs it.
pub fn helper() -> &'static Path {
    static HELPER: OnceLock<PathBuf> = OnceLock::new();
    HELPER.get_or_init(|| {
        let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let target = ws.join("target/gpu-helper");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "--locked",
                "-p",
                "gpu",
                "--bin",
                "numaprobe-gpu",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(&ws)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .expect("running cargo to build numaprobe-gpu");
        assert!(
            out.status.success(),
            "building numaprobe-gpu: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        target.join("debug/numaprobe-gpu")
    })
}
