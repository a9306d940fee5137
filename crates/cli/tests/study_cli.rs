//! `numaprobe study --vary` refusals on this machine: every bad request is
//! a one-line usage error (exit 2) given before anything is changed, so
//! these tests never touch a setting (they check that THP is as it was).
//! The study that really changes settings runs in the guest suite
//! (`study_alternates_restores_and_compares` in tests/guest.rs), where it
//! disturbs nobody, and is tried by hand as docs/store.md says.

use std::path::PathBuf;

use assert_cmd::Command;

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Runs `numaprobe study ARGS` (through `wrapper` when given), asserts
    /// exit 2 with one line on stderr and THP untouched, returns the line.
    fn refused(&self, wrapper: &[&str], args: &[&str]) -> String {
        let thp = std::fs::read_to_string(THP)
            .unwrap_or_else(|e| panic!("{THP}: {e}: these tests need a kernel with THP"));
        let bin = assert_cmd::cargo::cargo_bin("numaprobe");
        let mut c = match wrapper.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(&bin);
                c
            }
            None => Command::new(&bin),
        };
        let out = c
            .env("NUMAPROBE_DB", self.path("results.db"))
            .env("NUMAPROBE_LOCK", self.path("measure.lock"))
            .current_dir(self.dir.path())
            .arg("study")
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{wrapper:?}: {e}"));
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
        assert_eq!(std::fs::read_to_string(THP).unwrap(), thp, "{args:?} changed THP");
        assert!(!self.path("results.db").exists(), "{args:?} saved a run");
        err
    }
}

#[test]
fn bad_vary_requests_are_refused_before_any_change() {
    let e = Env::new();
    for (args, why) in [
        (&["--vary", "thp_enabled"][..], "expected KEY=A,B"),
        (
            &["--vary", "thp=always,never"],
            "\"thp\" is not a setting that can be changed at run time",
        ),
        (&["--vary", "thp_enabled=always"], "give 2 to 8 values"),
        (&["--vary", "thp_enabled=always,,never"], "an empty value"),
        (
            &["--vary", "thp_enabled=always,sometimes"],
            "\"sometimes\" is not a value this kernel takes",
        ),
        (&["--vary", "thp_enabled=always,always"], "the value always is given twice"),
        (&["--vary", "thp_enabled=always,never", "--rounds", "0"], "out of range"),
    ] {
        let line = e.refused(&[], args);
        assert!(line.contains(why), "{args:?}: {line}");
    }
}

/// The refusals of `--vary` that do not depend on the kernel, whole line
/// for whole line.
#[test]
fn bad_vary_requests_say_their_whole_line() {
    let e = Env::new();
    let known = "thp_enabled, thp_defrag, numa_balancing, zone_reclaim_mode, governor, epp, \
                 boost, weighted_interleave";
    for (args, want) in [
        (
            &["--vary", "thp_enabled"][..],
            r#"--vary "thp_enabled": expected KEY=A,B (e.g. thp_enabled=madvise,always)"#
                .to_string(),
        ),
        (
            &["--vary", "thp=always,never"],
            format!(
                r#"--vary: "thp" is not a setting that can be changed at run time (known: {known})"#
            ),
        ),
        (
            &["--vary", "thp_enabled=always"],
            r#"--vary "thp_enabled=always": give 2 to 8 values to compare (got 1)"#.to_string(),
        ),
        (
            &["--vary", "thp_enabled=always,,never"],
            r#"--vary "thp_enabled=always,,never": an empty value"#.to_string(),
        ),
        (
            &["--vary", "thp_enabled=always,always"],
            "--vary thp_enabled=always,always: the value always is given twice".to_string(),
        ),
        (
            &["--vary", "thp_enabled=always,never", "--label", " "],
            "study --label: empty".to_string(),
        ),
    ] {
        let line = e.refused(&[], args);
        assert_eq!(line.trim_end(), format!("numaprobe: error: {want}"), "{args:?}");
    }
}

#[test]
fn run_options_the_study_owns_or_run_does_not_know_are_refused() {
    let e = Env::new();
    let vary = ["--vary", "thp_enabled=madvise,always", "--"];
    for (extra, why) in [
        (&["--label", "x"][..], "the study labels every run"),
        (&["--repeat", "2"], "--rounds"),
        (&["--dry-run"], "a study measures"),
        (&["--json"], "go before `study`"),
        (&["--bogus"], "unexpected argument '--bogus'"),
        (&["--set", "thp_enabled=always"], "the setting the study varies"),
        (&["--set", "oops"], "expected KEY=VALUE"),
    ] {
        let line = e.refused(&[], &[&vary[..], extra].concat());
        assert!(line.contains(why), "{extra:?}: {line}");
    }
}

/// Without root nothing can be changed: said before anything is tried
/// (util-linux `setpriv` drops to nobody).
#[test]
fn a_study_without_root_is_refused() {
    let e = Env::new();
    std::fs::set_permissions(e.dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .unwrap();
    let line = e.refused(
        &["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"],
        &["--vary", "thp_enabled=madvise,always", "--", "--quick"],
    );
    assert!(line.contains("run it as root"), "{line}");
}

/// `--dry-run` makes every check and prints the plan: the alternated order,
/// the labels and the command that restores THP; nothing is changed or
/// saved.
#[test]
fn a_dry_run_prints_the_plan_and_changes_nothing() {
    let e = Env::new();
    let thp = std::fs::read_to_string(THP).unwrap();
    let now = thp.split('[').nth(1).and_then(|r| r.split(']').next()).unwrap().to_string();
    let out = Command::cargo_bin("numaprobe")
        .unwrap()
        .env("NUMAPROBE_DB", e.path("results.db"))
        .env("NUMAPROBE_LOCK", e.path("measure.lock"))
        .args(["study", "--vary", "thp_enabled=never,always", "--rounds", "2", "--label", "t"])
        .args(["--dry-run", "--", "--quick"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let runs: Vec<&str> = text.lines().filter(|l| l.contains(". thp_enabled=")).collect();
    assert_eq!(runs.len(), 4, "{text}");
    for (line, value) in runs.iter().zip(["never", "always", "always", "never"]) {
        assert!(
            line.contains(&format!("thp_enabled={value}  (label \"t: thp_enabled={value}\")")),
            "{line}"
        );
    }
    assert!(text.contains(&format!("(now {now})")), "{text}");
    assert!(
        text.contains(&format!("echo {now} > /sys/kernel/mm/transparent_hugepage/enabled")),
        "{text}"
    );
    assert_eq!(std::fs::read_to_string(THP).unwrap(), thp);
    assert!(!e.path("results.db").exists());
    // Two rounds are too few for an interval: said in one line.
    let err = String::from_utf8_lossy(&out.stderr);
    let want = "numaprobe: warning: --rounds 2 gives 2 run(s) per value: a comparison needs 3 per \
                value for an interval at 90% confidence, so every verdict would be undecided (use \
                --rounds 3 or more)";
    assert!(err.lines().any(|l| l == want), "{err}");
}
