//! What `numaprobe study` says when it refuses a request, in the command
//! line's words: the `--vary` and `--label` refusals of vary's plan, and
//! the dry run's warning that the `--rounds` are too few to decide.

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
}
