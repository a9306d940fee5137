//! The real machines' sysfs/procfs captures in `../shared/fixtures/hwloc-sysfs`
//! (hwloc's test suite, BSD-3-Clause), for the feature-gated fixture suites
//! of topo, audit and the CLI, which include this file with `#[path]`.
//! Missing captures fail the suite, saying where they were looked for.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The folder of captures beside the checkout.
pub fn dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/hwloc-sysfs");
    assert!(
        dir.is_dir(),
        "fixture folder {} is missing: the `fixtures` suites need the hwloc sysfs captures \
         beside the checkout (../shared/fixtures/hwloc-sysfs); run the plain `cargo test` \
         without --features fixtures when you do not have them",
        dir.display()
    );
    dir
}

/// The captures' names (`NAME` of each `NAME.tar.gz`), sorted.
pub fn names() -> Vec<String> {
    let dir = dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".tar.gz").map(str::to_string))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no *.tar.gz in {}", dir.display());
    names
}

/// Unpacks `NAME.tar.gz` once into Cargo's test scratch folder
/// (`target/tmp/hwloc-sysfs/`), again only when the archive changes, and
/// returns the capture's root.
pub fn unpack(name: &str) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let archive = dir().join(format!("{name}.tar.gz"));
    let meta = std::fs::metadata(&archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    let stamp = format!("{} {:?}", meta.len(), meta.modified().ok());
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hwloc-sysfs").join(name);
    let marker = base.join(".unpacked");
    let root = base.join(name);
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(stamp.as_str()) && root.is_dir() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap_or_else(|e| panic!("{}: {e}", base.display()));
    let f = std::fs::File::open(&archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    ar.set_preserve_permissions(false);
    ar.unpack(&base).unwrap_or_else(|e| panic!("unpacking {}: {e}", archive.display()));
    assert!(root.is_dir(), "{} did not unpack to {name}/", archive.display());
    std::fs::write(&marker, stamp).unwrap();
    root
}
