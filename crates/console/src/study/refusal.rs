//! What `numaprobe study` says when it refuses a request, in the command
//! line's words: the `--vary` and `--label` refusals of vary's plan, the
//! dry run's warning that the `--rounds` are too few to decide, and the
//! study lock's refusals (another study running whatever `--lock` says, a
//! killed study's journal to put back with `study --restore`).

use vary::journal::StudyLockError;
use vary::{PlanError, TooFewRounds, VaryError};

/// A refused `--vary KEY=A,B,...`, as one usage line.
pub fn vary(e: &VaryError) -> String {
    match e {
        VaryError::Key(k) => format!("--vary: {k}"),
        e => format!("--vary {e}"),
    }
}

/// A plan refused for its request, `given` being what `--vary` was given.
pub fn plan(e: &PlanError, given: &str) -> String {
    match e {
        PlanError::Twice(_) => format!("--vary {given}: {e}"),
        PlanError::EmptyLabel => "study --label: empty".to_string(),
        PlanError::Runtime(_) => format!("--vary: {e}"),
    }
}

/// The dry run's warning: every verdict would be undecided.
pub fn too_few_rounds(t: &TooFewRounds) -> String {
    format!(
        "--rounds {r} gives {r} run(s) per value: a comparison needs {need} per value for an \
         interval at {:.0}% confidence, so every verdict would be undecided (use --rounds {need} \
         or more)",
        t.confidence * 100.0,
        r = t.rounds,
        need = t.need,
    )
}

/// Why a study could not start (or `study --restore` could not take the
/// study lock), as its error line says it.
pub fn study_lock(e: &StudyLockError) -> String {
    match e {
        StudyLockError::Busy { path, pid } => format!(
            "another study is running on this machine ({}; study lock {}): one study at a time, \
             whatever --lock says",
            pid.map_or("holder PID unknown".into(), |p| format!("PID {p}")),
            path.display()
        ),
        StudyLockError::LeftOver(entry) => format!(
            "a study killed earlier left {} changed (it was {} before; study PID {}): put it back \
             first with `numaprobe study --restore`",
            entry.key, entry.shown, entry.pid
        ),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_names_its_flag() {
        let e = vary::parse_vary("thp_enabled=always").unwrap_err();
        assert_eq!(
            vary(&e),
            r#"--vary "thp_enabled=always": give 2 to 8 values to compare (got 1)"#
        );
        let t = TooFewRounds { rounds: 1, need: 3, confidence: 0.9 };
        assert_eq!(
            too_few_rounds(&t),
            "--rounds 1 gives 1 run(s) per value: a comparison needs 3 per value for an interval \
             at 90% confidence, so every verdict would be undecided (use --rounds 3 or more)"
        );
        assert_eq!(plan(&PlanError::EmptyLabel, "x=a,b"), "study --label: empty");
        assert_eq!(
            plan(&PlanError::Twice("a".into()), "x=a,a"),
            "--vary x=a,a: the value a is given twice"
        );
    }

    #[test]
    fn the_study_locks_refusals_name_lock_and_restore_and_vary_names_neither() {
        let busy = StudyLockError::Busy { path: "/s/study.lock".into(), pid: Some(42) };
        assert_eq!(
            study_lock(&busy),
            "another study is running on this machine (PID 42; study lock /s/study.lock): one \
             study at a time, whatever --lock says"
        );
        let unknown = StudyLockError::Busy { path: "/s/study.lock".into(), pid: None };
        assert_eq!(
            study_lock(&unknown),
            "another study is running on this machine (holder PID unknown; study lock \
             /s/study.lock): one study at a time, whatever --lock says"
        );
        let entry = vary::journal::Entry {
            version: 1,
            pid: 7,
            started_unix: 0,
            key: "zone_reclaim_mode".into(),
            shown: "0".into(),
            files: Vec::new(),
        };
        let left = StudyLockError::LeftOver(Box::new(entry));
        assert_eq!(
            study_lock(&left),
            "a study killed earlier left zone_reclaim_mode changed (it was 0 before; study PID \
             7): put it back first with `numaprobe study --restore`"
        );
        let journal = StudyLockError::Journal(vary::journal::JournalError::Bad {
            path: "/s/study.journal".into(),
            why: "not JSON".into(),
        });
        assert_eq!(study_lock(&journal), journal.to_string());
        for e in [&busy, &unknown, &left, &journal] {
            let own = e.to_string();
            assert!(!own.contains("--") && !own.contains("numaprobe"), "{own}");
        }
    }
}
