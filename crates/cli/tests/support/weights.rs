//! A weighted-interleave folder for the `advise interleave` tests, as
//! Linux 6.16 has it: nodes 0-4 at weight 1, `auto` on.

use std::path::{Path, PathBuf};

/// The folder made under `dir/sysroot`; returns that sysfs root.
pub fn weight_tree(dir: &Path) -> PathBuf {
    let root = dir.join("sysroot");
    let w = root.join("sys/kernel/mm/mempolicy/weighted_interleave");
    std::fs::create_dir_all(&w).unwrap();
    for n in 0..5 {
        std::fs::write(w.join(format!("node{n}")), "1\n").unwrap();
    }
    std::fs::write(w.join("auto"), "true\n").unwrap();
    root
}
