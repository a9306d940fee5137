//! Build script of the binary: records the git commit for `--version`.
//!
//! `NUMAPROBE_COMMIT` is `git rev-parse --short HEAD` when the source is a
//! git checkout and git is installed, else empty (a source tarball, a build
//! without git): `--version` then shows the package version alone.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=NUMAPROBE_COMMIT={commit}");
    // Rebuild when HEAD moves: HEAD itself, the branch it points to, and
    // packed refs (paths asked from git, so worktrees work too); a path that
    // does not exist would make cargo rerun this script on every build.
    println!("cargo:rerun-if-changed=build.rs");
    for path in [
        git(&["rev-parse", "--git-path", "HEAD"]),
        git(&["rev-parse", "--symbolic-full-name", "HEAD"])
            .and_then(|r| git(&["rev-parse", "--git-path", &r])),
        git(&["rev-parse", "--git-path", "packed-refs"]),
    ]
    .into_iter()
    .flatten()
    .filter(|p| std::path::Path::new(p).exists())
    {
        println!("cargo:rerun-if-changed={path}");
    }
}
