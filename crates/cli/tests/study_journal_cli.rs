//! A study that dies without restoring: `kill -9` of the study's process
//! group, then `numaprobe study --restore`; one study per machine whatever
//! `--lock` says; an interrupted study's JSON document; `--dry-run`'s time
//! estimate and its warning about rounds that cannot decide.
//!
//! The studies really run (as root), but never on this machine's settings:
//! each test works in a private mount namespace (`unshare -m`, as
//! tests/store_robust_cli.rs does) where a temporary file is bind-mounted
//! over `/proc/sys/vm/zone_reclaim_mode`, the setting the studies vary.
//! What the study writes lands in that file and vanishes with the
//! namespace. The study journal lives in a temporary state folder
//! (`NUMAPROBE_STATE_DIR`). Without root or `unshare` the tests fail,
//! naming what is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::Command as Cmd;

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("numaprobe")
}

/// Runs `script` (sh) in a private mount namespace where `$D/zrm` (holding
/// `0`) is bind-mounted over zone_reclaim_mode; `$NP` is the binary, the
/// database and state folder are in `$D`. Returns stdout.
fn in_namespace(dir: &Path, script: &str) -> String {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(unsafe { libc::geteuid() }, 0, "these tests change a setting: they need root");
    let setup = r#"set -e
printf '0\n' > "$D/zrm"
mount --bind "$D/zrm" /proc/sys/vm/zone_reclaim_mode
[ "$(cat /proc/sys/vm/zone_reclaim_mode)" = 0 ] || { echo "BIND FAILED"; exit 9; }
set +e
export NUMAPROBE_STATE_DIR="$D/state" NUMAPROBE_DB="$D/r.db"
"#;
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", &format!("{setup}{script}")])
        .env("NP", bin())
        .env("D", dir)
        .env_remove("NUMAPROBE_DB")
        .env_remove("NUMAPROBE_LOCK")
        .env_remove("NUMAPROBE_STATE_DIR")
        .output()
        .expect("these tests need `unshare` (util-linux) for a private mount namespace");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains("BIND FAILED") && !stderr.contains("unshare failed"),
        "could not bind a file over zone_reclaim_mode: {stdout}{stderr}"
    );
    stdout
}

/// The value of `KEY=` in the script's output (the last one).
fn field<'a>(out: &'a str, key: &str) -> &'a str {
    out.lines()
        .rev()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in:\n{out}"))
}

/// Waits (up to 90 s) until the study started as `$A` has a child `run`
/// measuring, and sets `$C` to that child's PID.
const WAIT_FOR_CHILD: &str = r#"
C=""
for i in $(seq 1 900); do
  C=$(cat /proc/$A/task/$A/children 2>/dev/null | awk '{print $1}')
  if [ -n "$C" ] && grep -q "run 1 of" "$D/a.err"; then break; fi
  C=""
  sleep 0.1
done
echo "CHILD=${C:-none}"
sleep 1
"#;

/// Guards cause 1 and 2 of issue 37: after `kill -9` of a study the
/// setting stayed changed with only a line of stderr as a trace, the
/// child run went on measuring under it, the next study took the changed
/// value for the original, and a second study with another `--lock` ran
/// alongside the first.
#[test]
fn a_study_killed_with_kill_9_is_restored_from_its_journal_and_its_run_dies_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"
NUMAPROBE_LOCK="$D/a.lock" setsid "$NP" study --vary zone_reclaim_mode=1,0 --rounds 1 --label k9 -- --quick > "$D/a.out" 2> "$D/a.err" &
A=$!
echo "STUDY_PID=$A"
{WAIT_FOR_CHILD}
echo "DURING=$(cat "$D/zrm")"
echo "JOURNAL_DURING=$([ -f "$D/state/study.journal" ] && echo yes || echo no)"
# A second study with its own measuring lock: refused, nothing changed.
NUMAPROBE_LOCK="$D/b.lock" "$NP" study --vary zone_reclaim_mode=2,0 --rounds 1 -- --quick > /dev/null 2> "$D/b.err"
echo "B_RC=$?"
echo "B_ERR=$(head -c 400 "$D/b.err" | tr '\n' ' ')"
echo "B_LINE=$(grep '^numaprobe: error: ' "$D/b.err")"
echo "AFTER_B=$(cat "$D/zrm")"
# No warning while the study runs (its journal is not left over).
"$NP" list > /dev/null 2> "$D/l0.err"
echo "LIST_DURING=$(tr '\n' ' ' < "$D/l0.err")"
kill -9 -$A || echo "KILL FAILED"
sleep 1
if [ -d /proc/$C ]; then S=$(awk '{{print $3}}' /proc/$C/stat); else S=gone; fi
echo "CHILD_STATE=$S"
echo "KILLED=$(cat "$D/zrm")"
"$NP" list > /dev/null 2> "$D/l1.err"
echo "LIST_WARN=$(tr '\n' ' ' < "$D/l1.err")"
NUMAPROBE_LOCK="$D/c.lock" "$NP" study --vary zone_reclaim_mode=1,0 --rounds 1 -- --quick > /dev/null 2> "$D/c.err"
echo "C_RC=$?"
echo "C_ERR=$(head -c 400 "$D/c.err" | tr '\n' ' ')"
echo "C_LINE=$(grep '^numaprobe: error: ' "$D/c.err")"
echo "AFTER_C=$(cat "$D/zrm")"
"$NP" study --restore > "$D/r.out" 2> "$D/r.err"
echo "RESTORE_RC=$?"
echo "RESTORE_OUT=$(tr '\n' ' ' < "$D/r.out")$(tr '\n' ' ' < "$D/r.err")"
echo "RESTORED=$(cat "$D/zrm")"
echo "JOURNAL_AFTER=$([ -e "$D/state/study.journal" ] && echo yes || echo no)"
"$NP" --json study --restore > "$D/r2.out" 2>&1
echo "RESTORE2_RC=$?"
echo "RESTORE2=$(tr '\n' ' ' < "$D/r2.out")"
"$NP" list > /dev/null 2> "$D/l2.err"
echo "LIST_AFTER=$(tr '\n' ' ' < "$D/l2.err")"
"$NP" --json list > "$D/list.json" 2>/dev/null
echo "COMPLETE_K9=$(grep -c '"status": "complete"' "$D/list.json")"
"#
    );
    let out = in_namespace(dir.path(), &script);
    assert_ne!(field(&out, "CHILD"), "none", "the study's run never started:\n{out}");
    assert_eq!(field(&out, "DURING"), "1", "{out}");
    assert_eq!(field(&out, "JOURNAL_DURING"), "yes", "{out}");

    // One study per machine, whatever --lock says.
    assert_eq!(field(&out, "B_RC"), "1", "{out}");
    assert!(field(&out, "B_ERR").contains("another study is running"), "{out}");
    // The whole line, word for word: the holder's PID and the study lock.
    let study = field(&out, "STUDY_PID");
    let lock = dir.path().join("state/study.lock");
    assert_eq!(
        field(&out, "B_LINE"),
        format!(
            "numaprobe: error: another study is running on this machine (PID {study}; study lock \
             {}): one study at a time, whatever --lock says",
            lock.display()
        ),
        "{out}"
    );
    assert_eq!(field(&out, "AFTER_B"), "1", "the second study changed nothing: {out}");
    assert_eq!(field(&out, "LIST_DURING").trim(), "", "{out}");

    // The child died with the study: it measures nothing more.
    let state = field(&out, "CHILD_STATE");
    assert!(state == "gone" || state == "Z", "the child run outlived the study ({state}):\n{out}");
    assert_eq!(field(&out, "KILLED"), "1", "killed before restoring: still changed: {out}");

    // Every command says so, with the restore command.
    let warn = field(&out, "LIST_WARN");
    assert!(warn.contains("was killed before it put zone_reclaim_mode back to 0"), "{out}");
    assert!(warn.contains("numaprobe study --restore"), "{out}");

    // The next study refuses rather than take the changed value as the
    // original.
    assert_eq!(field(&out, "C_RC"), "1", "{out}");
    assert!(field(&out, "C_ERR").contains("study --restore"), "{out}");
    assert_eq!(
        field(&out, "C_LINE"),
        format!(
            "numaprobe: error: a study killed earlier left zone_reclaim_mode changed (it was 0 \
             before; study PID {study}): put it back first with `numaprobe study --restore`"
        ),
        "{out}"
    );
    assert_eq!(field(&out, "AFTER_C"), "1", "{out}");

    // --restore puts the original back and clears the journal.
    assert_eq!(field(&out, "RESTORE_RC"), "0", "{out}");
    assert!(field(&out, "RESTORE_OUT").contains("zone_reclaim_mode put back to 0"), "{out}");
    assert_eq!(field(&out, "RESTORED"), "0", "{out}");
    assert_eq!(field(&out, "JOURNAL_AFTER"), "no", "{out}");
    assert_eq!(field(&out, "RESTORE2_RC"), "0", "{out}");
    let again: serde_json::Value = serde_json::from_str(field(&out, "RESTORE2")).unwrap();
    assert_eq!(again["journal"], false, "{out}");
    assert_eq!(field(&out, "LIST_AFTER").trim(), "", "{out}");
    assert_eq!(field(&out, "COMPLETE_K9"), "0", "no run of the study was saved complete: {out}");
}

/// Guards cause 3 of issue 37: `--json ... study` interrupted printed
/// nothing on stdout, and the suggested `compare` named a label without
/// runs (and itself failed).
#[test]
fn an_interrupted_study_prints_its_document_and_a_command_that_works() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        r#"
NUMAPROBE_LOCK="$D/a.lock" setsid "$NP" --json study --vary zone_reclaim_mode=1,0 --rounds 1 --label int -- --quick > "$D/a.out" 2> "$D/a.err" &
A=$!
{WAIT_FOR_CHILD}
kill -INT $A
wait $A
echo "RC=$?"
echo "VALUE=$(cat "$D/zrm")"
echo "DOC=$(tr '\n' ' ' < "$D/a.out")"
echo "ERR=$(tr '\n' ' ' < "$D/a.err")"
"#
    );
    let out = in_namespace(dir.path(), &script);
    assert_ne!(field(&out, "CHILD"), "none", "the study's run never started:\n{out}");
    assert_eq!(field(&out, "RC"), "130", "{out}");
    assert_eq!(field(&out, "VALUE"), "0", "restored: {out}");
    let doc: serde_json::Value = serde_json::from_str(field(&out, "DOC"))
        .unwrap_or_else(|e| panic!("no JSON document on stdout ({e}):\n{out}"));
    assert_eq!(doc["restored"], "0", "{doc}");
    assert!(doc["stopped"].as_str().unwrap_or_default().contains("interrupted"), "{doc}");
    assert_eq!(doc["comparison"], serde_json::Value::Null, "{doc}");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1), "{doc}");
    let err = field(&out, "ERR");
    assert!(err.contains("study interrupted"), "{err}");
    assert!(!err.contains("'label:int: zone_reclaim_mode=0'"), "names a label without runs: {err}");
}

/// Issue 35: `study --dry-run` estimates the time and warns when the
/// rounds cannot decide.
#[test]
fn a_dry_run_estimates_the_time_and_warns_that_one_round_cannot_decide() {
    let dir = tempfile::tempdir().unwrap();
    let zrm = "/proc/sys/vm/zone_reclaim_mode";
    let before = std::fs::read_to_string(zrm).unwrap();
    let run = |rounds: &str| {
        Cmd::cargo_bin("numaprobe")
            .unwrap()
            .env("NUMAPROBE_DB", dir.path().join("r.db"))
            .env("NUMAPROBE_LOCK", dir.path().join("m.lock"))
            .env("NUMAPROBE_STATE_DIR", dir.path().join("state"))
            .args([
                "study",
                "--vary",
                &format!("zone_reclaim_mode={},7", before.trim()),
                "--rounds",
                rounds,
            ])
            .args(["--dry-run", "--", "--quick"])
            .output()
            .unwrap()
    };
    let one = run("1");
    let (text, err) = (String::from_utf8_lossy(&one.stdout), String::from_utf8_lossy(&one.stderr));
    assert!(one.status.success(), "{text}{err}");
    assert!(err.contains("--rounds 1 gives 1 run(s) per value"), "{err}");
    assert!(err.contains("undecided"), "{err}");
    assert!(text.contains("Estimated time: about "), "{text}");
    assert!(text.contains("(2 runs of about "), "{text}");

    let three = run("3");
    let err = String::from_utf8_lossy(&three.stderr);
    assert!(three.status.success());
    assert!(!err.contains("undecided"), "3 rounds can decide: {err}");
    assert!(String::from_utf8_lossy(&three.stdout).contains("(6 runs of about "));
    assert_eq!(std::fs::read_to_string(zrm).unwrap(), before, "a dry run changes nothing");
}
