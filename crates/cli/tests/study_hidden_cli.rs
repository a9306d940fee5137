//! The exact bytes of what a study says where a setting hides NUMA
//! (`numa=off` over a NUMA firmware): the hidden-NUMA evidence of its
//! group, the general profile's line that names it, the profiles that
//! rule it out, and the remote figures impossible for one OS node, in
//! `compare --json`, `compare`'s text and `--verbose`, the warnings, and
//! the report (Markdown and brief). Golden files `hidden-*` under
//! tests/golden/study_words (`NUMAPROBE_BLESS=1` rewrites them).
//!
//! The runs are study 5 of crates/cli/tests/studies.rs from the machine
//! model (simmodel's two sockets of 48 cores, three runs per setting,
//! seed 5): deterministic, so the figures and the words are fixed.

use std::path::Path;

use simmodel::facts::Setting;
use simmodel::runs::{Budget, Study};

#[path = "support/study_pin.rs"]
mod study_pin;
use study_pin::{np, pin};

const LABELS: [&str; 4] =
    ["BIOS NUMA on", "BIOS NUMA on + numa=off", "BIOS NUMA off", "BIOS NUMA off + numa=off"];

#[test]
fn what_a_study_says_of_a_setting_that_hides_numa_is_pinned_byte_for_byte() {
    let (on, off) = (Setting::domains(1), Setting::bios_numa_off());
    let settings = vec![on, on.with_numa_off(), off, off.with_numa_off()];
    let mut s = Study::new(simmodel::studies::two_socket_96(), settings, 3, 5);
    s.labels = LABELS.iter().map(|l| l.to_string()).collect();
    s.budget = Budget::Default;

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs.json");
    std::fs::write(&file, simmodel::runs::export(&s.runs()).to_string()).unwrap();
    let db = dir.path().join("results.db");
    np(&db).arg("import").arg(&file).assert().success();

    let groups: Vec<String> = LABELS.iter().map(|l| format!("label:{l}")).collect();
    let groups: Vec<&str> = groups.iter().map(String::as_str).collect();
    let mut failures = Vec::new();
    pin(Path::new(&db), "hidden", &groups, false, &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
