//! Copying a test's sysfs tree (a hand-made capture under
//! `crates/topo/tests/data`) into a folder of its own, to change a file.

use std::path::Path;

/// Copies the folder `from` into `to`, every file and folder below it.
pub fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}
