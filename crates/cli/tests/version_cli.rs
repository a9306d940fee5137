//! `--version`: the package version, the commit and the commit's date, from
//! git in a checkout and from the file `git archive` fills in otherwise
//! (build.rs; its parsing lives in `build/version.rs`, included here).

#[path = "../build/version.rs"]
#[allow(dead_code)]
mod version;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// Runs git in the repository; `None` when it fails (not a checkout, no git).
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").arg("-C").arg(repo()).args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether the repository is a git checkout of its own (as build.rs asks).
fn is_checkout() -> bool {
    git(&["rev-parse", "--show-toplevel"])
        .is_some_and(|top| Path::new(&top).canonicalize().ok() == Some(repo()))
}

#[test]
fn utc_dates_match_gnu_date() {
    // Each value is what `date -u -d @T +%F` prints.
    for (t, d) in [
        (0, "1970-01-01"),
        (-1, "1969-12-31"),
        (951_782_400, "2000-02-29"),
        (1_700_000_000, "2023-11-14"),
        (4_102_444_799, "2099-12-31"),
        (-62_135_596_800, "0001-01-01"),
    ] {
        assert_eq!(version::utc_date(t), d, "unix time {t}");
    }
}

#[test]
fn archive_commit_is_read_only_when_git_archive_filled_it_in() {
    let hash = "0123456789abcdef0123456789abcdef01234567";
    let filled = format!("# comment\n{hash} 1700000000\n");
    assert_eq!(
        version::parse_archive_commit(&filled),
        Some(version::Commit { hash: hash.into(), time: 1_700_000_000 })
    );
    // The file as committed, before `git archive` substitutes it.
    let raw = std::fs::read_to_string(repo().join("crates/cli/build/archive-commit")).unwrap();
    if is_checkout() {
        assert_eq!(version::parse_archive_commit(&raw), None, "{raw}");
    }
    for bad in [
        "$Format:%H %ct$",
        "",
        "# only a comment",
        "xyz 1700000000",
        "0123456789abcdef0123456789abcdef0123456 1",
        "0123 1",
    ] {
        assert_eq!(version::parse_archive_commit(bad), None, "{bad:?}");
    }
    assert_eq!(version::parse_archive_commit(&format!("{hash} 17 extra")), None);
    assert_eq!(version::parse_archive_commit(&format!("{hash} soon")), None);
}

#[test]
fn suffix_says_commit_and_date_or_the_date_alone() {
    let c = version::Commit { hash: "a".repeat(40), time: 1_700_000_000 };
    assert_eq!(version::suffix(Some(&c), Some(0)), " (aaaaaaaaaaaa 2023-11-14)");
    assert_eq!(version::suffix(None, Some(0)), " (1970-01-01)");
    assert_eq!(version::suffix(None, None), "");
}

/// `git archive` fills in build/archive-commit (export-subst in
/// .gitattributes), so a source tarball without .git still knows its
/// commit. Outside a checkout the file must already be filled in.
#[test]
fn git_archive_fills_in_the_commit_file() {
    let text = if is_checkout() {
        let out = Command::new("sh")
            .arg("-c")
            .arg("git archive HEAD crates/cli/build/archive-commit | tar -xOf -")
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    } else {
        std::fs::read_to_string(repo().join("crates/cli/build/archive-commit")).unwrap()
    };
    let commit = version::parse_archive_commit(&text)
        .unwrap_or_else(|| panic!("not filled in by git archive:\n{text}"));
    if is_checkout() {
        assert_eq!(Some(commit.hash), git(&["rev-parse", "HEAD"]));
        assert_eq!(Some(commit.time.to_string()), git(&["show", "-s", "--format=%ct", "HEAD"]));
    }
}

/// The binary says its version, commit and the commit's date (UTC), the
/// date computed here by git itself.
#[test]
fn version_prints_version_commit_and_commit_date() {
    let out = Command::new(assert_cmd::cargo::cargo_bin("numaprobe")).arg("--version").output();
    let out = out.unwrap();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let expected = if is_checkout() {
        let hash = git(&["rev-parse", "--short=12", "HEAD"]).unwrap();
        let out = Command::new("git")
            .arg("-C")
            .arg(repo())
            .args(["show", "-s", "--date=format-local:%Y-%m-%d", "--format=%cd", "HEAD"])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let date = String::from_utf8_lossy(&out.stdout).trim().to_string();
        format!("numaprobe {} ({hash} {date})\n", env!("CARGO_PKG_VERSION"))
    } else {
        let raw = std::fs::read_to_string(repo().join("crates/cli/build/archive-commit")).unwrap();
        let c = version::parse_archive_commit(&raw).expect("a tarball has the commit file filled");
        format!(
            "numaprobe {} ({} {})\n",
            env!("CARGO_PKG_VERSION"),
            &c.hash[..12],
            version::utc_date(c.time)
        )
    };
    assert_eq!(line, expected);
}
