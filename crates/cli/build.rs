//! Build script of the binary: records the commit and its date for
//! `--version` (`NUMAPROBE_VERSION_SUFFIX`, e.g. ` (a1b2c3d4e5f6 2026-11-25)`).
//!
//! Where they come from, first found wins:
//! 1. git, when this workspace is a git checkout (its own, not a folder
//!    inside some other repository) and git is installed;
//! 2. `build/archive-commit`, which `git archive` fills in (a source
//!    tarball without .git);
//! 3. `SOURCE_DATE_EPOCH` (reproducible-builds convention): the date alone.
//!
//! Otherwise `--version` shows the package version alone. The date is the
//! commit's, never the clock's, so two builds of one commit are identical.

#[path = "build/version.rs"]
mod version;

use std::path::{Path, PathBuf};
use std::process::Command;

use version::Commit;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

/// HEAD of the workspace's own repository, or `None` when the workspace is
/// not the top of a git checkout (an unpacked tarball, perhaps inside a
/// distribution's packaging repository, must not take that one's commit).
fn git_commit(workspace: &Path) -> Option<Commit> {
    let top = PathBuf::from(git(workspace, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != workspace.canonicalize().ok()? {
        return None;
    }
    let hash = git(workspace, &["rev-parse", "HEAD"])?;
    let time = git(workspace, &["show", "-s", "--format=%ct", "HEAD"])?.parse().ok()?;
    version::is_hash(&hash).then_some(Commit { hash, time })
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest.join("../..");
    let archive = manifest.join("build/archive-commit");

    let commit = git_commit(&workspace).or_else(|| {
        std::fs::read_to_string(&archive).ok().and_then(|t| version::parse_archive_commit(&t))
    });
    let epoch = std::env::var("SOURCE_DATE_EPOCH").ok().and_then(|s| s.trim().parse().ok());
    println!(
        "cargo:rustc-env=NUMAPROBE_VERSION_SUFFIX={}",
        version::suffix(commit.as_ref(), epoch)
    );

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/version.rs");
    println!("cargo:rerun-if-changed=build/archive-commit");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // Rebuild when HEAD moves: HEAD itself, the branch it points to, and
    // packed refs (paths asked from git, so worktrees work too); a path that
    // does not exist would make cargo rerun this script on every build.
    let w = workspace.as_path();
    for path in [
        git(w, &["rev-parse", "--git-path", "HEAD"]),
        git(w, &["rev-parse", "--symbolic-full-name", "HEAD"])
            .and_then(|r| git(w, &["rev-parse", "--git-path", &r])),
        git(w, &["rev-parse", "--git-path", "packed-refs"]),
    ]
    .into_iter()
    .flatten()
    {
        // `--git-path` answers relative to the directory git ran in.
        let p = if Path::new(&path).is_absolute() { PathBuf::from(&path) } else { w.join(&path) };
        if p.exists() {
            println!("cargo:rerun-if-changed={}", p.display());
        }
    }
}
