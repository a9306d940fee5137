//! The command line of each child a study starts, argument for argument:
//! the plan it asks for its estimate, and each run (with `--db`,
//! `--quiet`, `--json`, the run options, the label and, for a setting the
//! configuration does not show, `--set KEY=VALUE`). A stand-in numaprobe
//! writes its arguments to a file and prints a run document.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use audit::runtime::Knob;
use console::study::child::ChildFlags;
use events::StopFlag;
use vary::child::{Launch, Relay, RunCommand};
use vary::{Event, Observer, Runner};

struct NoSignals;
impl Relay for NoSignals {
    fn presses(&self) -> usize {
        0
    }
    fn signal(&self) -> i32 {
        0
    }
}

struct Deaf;
impl Observer for Deaf {
    fn event(&self, _: Event<'_>) {}
}

/// A numaprobe that appends its arguments, one per line, then an empty
/// line, to `argv`, and prints a run document (or a plan with
/// `--dry-run`).
fn fake(dir: &Path) -> (PathBuf, PathBuf) {
    let exe = dir.join("fake-numaprobe");
    let argv = dir.join("argv");
    std::fs::write(
        &exe,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{0}'; done\necho >> '{0}'\n\
             case \" $* \" in *' --dry-run '*) echo '{{\"estimate_s\": 12.5}}';; \
             *) echo '{{\"id\": 3, \"status\": \"complete\"}}';; esac\n",
            argv.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    (exe, argv)
}

fn calls(argv: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(argv).unwrap();
    text.split_terminator("\n\n").map(|call| call.lines().map(str::to_string).collect()).collect()
}

fn launch(exe: PathBuf, db: Option<PathBuf>, quiet: bool, json: bool) -> Launch {
    let options = vec!["--quick".into(), "--only".into(), "bw".into()];
    Launch { exe, json, argv: Arc::new(ChildFlags { db, quiet, json, options }) }
}

#[test]
fn a_studys_children_are_started_with_these_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let (exe, argv) = fake(dir.path());
    let db = dir.path().join("runs.db");
    let l = launch(exe.clone(), Some(db.clone()), true, true);
    assert_eq!(l.estimate(), Some(12.5));
    let stop = StopFlag::new();
    let mut r = RunCommand::new(l, Knob::WeightedInterleave, &stop, &NoSignals, &Deaf).unwrap();
    r.run(0, "0:3,1:1", "s: weighted_interleave=0:3,1:1").unwrap();
    let mut plain = RunCommand::new(
        launch(exe, None, false, false),
        Knob::ThpEnabled,
        &stop,
        &NoSignals,
        &Deaf,
    )
    .unwrap();
    plain.run(1, "always", "s: thp_enabled=always").unwrap();
    let db = db.display().to_string();
    let want: Vec<Vec<&str>> = vec![
        vec!["--db", &db, "--json", "--quiet", "run", "--quick", "--only", "bw", "--dry-run"],
        vec![
            "--db",
            &db,
            "--quiet",
            "--json",
            "run",
            "--quick",
            "--only",
            "bw",
            "--label",
            "s: weighted_interleave=0:3,1:1",
            "--set",
            "weighted_interleave=0:3,1:1",
        ],
        vec!["run", "--quick", "--only", "bw", "--label", "s: thp_enabled=always"],
    ];
    assert_eq!(calls(&argv), want);
}
