//! An impossible figure as the `--json` documents of `bw`, `lat` and `run`
//! carry it: analysis's [`Impossible`] with its limit and likely cause in
//! words (`report::impossible` words them, as the report and `compare`
//! do).

use analysis::impossible::Impossible;
use serde::Serialize;

/// One impossible figure in a `--json` document: what, the figure, the
/// limit it breaks (in its unit and in words), how far past it and the
/// likely cause, one sentence without a full stop.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Doc {
    pub what: String,
    pub figure: f64,
    /// `GB/s` (10^9 bytes/s) or `ns`.
    pub unit: &'static str,
    pub limit: f64,
    pub limit_what: String,
    /// figure / limit: above 1 for bandwidth, below 1 for latency.
    pub ratio: f64,
    pub cause: String,
}

impl From<&Impossible> for Doc {
    fn from(i: &Impossible) -> Doc {
        Doc {
            what: report::subject::flagged(&i.what),
            figure: i.figure,
            unit: i.unit,
            limit: i.limit,
            limit_what: report::impossible::limit(&i.limit_what),
            ratio: i.ratio,
            cause: report::impossible::cause(&i.cause),
        }
    }
}

/// The documents of `figures`, in their order.
pub fn docs(figures: &[Impossible]) -> Vec<Doc> {
    figures.iter().map(Doc::from).collect()
}

/// `impossible: bw local triad, ...: 6.7 GB/s is impossible: ...`: the
/// line `bw` and `lat` print under their tables for each.
pub fn line(i: &Impossible) -> String {
    format!("{}: {}\n", Impossible::WORD, report::impossible::text(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::impossible::{Cause, Limit};
    use analysis::subject::Subject;

    #[test]
    fn the_document_words_the_cause_and_names_the_flag_only_for_a_wrong_peak() {
        let v = serde_json::json!({"mode": "local", "kernel": "triad", "threads": 2,
            "cpu_node": 0, "mem_node": 0});
        let what = match results::upgrade::read("bw", &v).record {
            results::Record::Bw(b) => Subject::bw(&b),
            r => panic!("{r:?}"),
        };
        let i = Impossible {
            what,
            figure: 23.6,
            unit: "GB/s",
            limit: 1.0,
            limit_what: Limit::Peak,
            ratio: 23.6,
            cause: Cause::WrongPeak,
        };
        let d = Doc::from(&i);
        assert!(d.cause.starts_with("a wrong peak: ") && d.cause.contains("(--peak-gbs)"));
        assert_eq!(
            line(&i),
            "impossible: bw local triad, 2 thread(s), CPU node 0 -> memory 0: 23.6 GB/s is \
             impossible: 23.60x the theoretical peak of 1.0 GB/s; likely cause: a wrong peak: the \
             arrays were DRAM-sized on verified pages, so the peak given (--peak-gbs) or read \
             from the DIMM table is too low (channels or MT/s)\n"
        );
        let cached = Doc::from(&Impossible { cause: Cause::LoadCached, ..i });
        assert!(!cached.cause.contains("--"), "{}", cached.cause);
    }
}
