//! Which result a flag or a mark is about, in words
//! ([`analysis::subject::Subject`]): the way a flag line names it
//! ([`flagged`]: impossible figures, the report's flags and
//! contradictions) and the shorter way `compare` names a marked input
//! ([`marked`]).

use analysis::subject::Subject;

/// What a result is, as flag lines write it: `bw local triad, 2
/// thread(s), CPU node 0 -> memory 0` (a whole-machine mode: `memory
/// 0-1`), `lat matrix, CPU 0 -> memory node 1` (or `memory interleaved
/// over nodes 0-3`), `lat loaded, CPU 0, read load`.
pub fn flagged(s: &Subject) -> String {
    match s {
        Subject::Bw { mode, kernel, threads, cpu_node, memory } => {
            let place = match cpu_node {
                Some(c) => format!("CPU node {c} -> memory {memory}"),
                // whole-machine modes: every node's threads
                None => format!("memory {memory}"),
            };
            format!("bw {} {}, {threads} thread(s), {place}", mode.name(), kernel.name())
        }
        Subject::Chase { mode, cpu, mem_node, interleave } => {
            let to = match (interleave, mem_node) {
                (Some(set), _) => format!("memory interleaved over nodes {set}"),
                (None, Some(n)) => format!("memory node {n}"),
                (None, None) => "memory node ?".into(),
            };
            format!("lat {}, CPU {cpu} -> {to}", mode.name())
        }
        Subject::Loaded { cpu, load } => format!("lat loaded, CPU {cpu}, {} load", load.name()),
        Subject::Named(what) => what.clone(),
    }
}

/// What a marked input is, as `compare` and its `--json` document write
/// it: `bw global triad, 32 thread(s)` (with `, CPU node 0 -> memory 1`
/// where its threads had one node), `lat matrix, CPU 0 -> memory node 1`,
/// `lat loaded, CPU 0`.
pub fn marked(s: &Subject) -> String {
    match s {
        Subject::Bw { mode, kernel, threads, cpu_node, memory } => {
            let place = match cpu_node {
                Some(c) => format!(", CPU node {c} -> memory {memory}"),
                None => String::new(),
            };
            format!("bw {} {}, {threads} thread(s){place}", mode.name(), kernel.name())
        }
        Subject::Chase { mode, cpu, mem_node, .. } => format!(
            "lat {}, CPU {cpu} -> memory node {}",
            mode.name(),
            mem_node.map_or("?".into(), |n| n.to_string())
        ),
        Subject::Loaded { cpu, .. } => format!("lat loaded, CPU {cpu}"),
        Subject::Named(what) => what.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::lat::LoadKind;
    use results::Record;

    /// Every shape in both ways, whole, the ones the CLI cannot reach too.
    #[test]
    fn every_subject_is_worded_whole_both_ways() {
        // Bandwidth subjects from records as the store reads them: memory
        // on one node, interleaved over a node list, and neither.
        let bw = |place: serde_json::Value| {
            let mut v = serde_json::json!({"mode": "matrix", "kernel": "triad", "threads": 16});
            v.as_object_mut().unwrap().extend(place.as_object().unwrap().clone());
            match results::upgrade::read("bw", &v).record {
                Record::Bw(b) => Subject::bw(&b),
                r => panic!("{r:?}"),
            }
        };
        let chase = |mem_node, interleave: Option<&str>| Subject::Chase {
            mode: results::lat::Mode::Point,
            cpu: 4,
            mem_node,
            interleave: interleave.map(str::to_string),
        };
        let all = [
            bw(serde_json::json!({"cpu_node": 0, "mem_node": 1})),
            bw(serde_json::json!({"mem_nodes": "0-1"})),
            bw(serde_json::json!({})),
            chase(Some(1), None),
            chase(None, Some("0-3")),
            chase(None, None),
            Subject::Loaded { cpu: 2, load: LoadKind::Read },
            Subject::Named("global bandwidth".into()),
        ];
        let words: Vec<(String, String)> = all.iter().map(|s| (flagged(s), marked(s))).collect();
        let pairs: Vec<(&str, &str)> =
            words.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            pairs,
            [
                (
                    "bw matrix triad, 16 thread(s), CPU node 0 -> memory 1",
                    "bw matrix triad, 16 thread(s), CPU node 0 -> memory 1"
                ),
                ("bw matrix triad, 16 thread(s), memory 0-1", "bw matrix triad, 16 thread(s)"),
                ("bw matrix triad, 16 thread(s), memory ?", "bw matrix triad, 16 thread(s)"),
                ("lat point, CPU 4 -> memory node 1", "lat point, CPU 4 -> memory node 1"),
                (
                    "lat point, CPU 4 -> memory interleaved over nodes 0-3",
                    "lat point, CPU 4 -> memory node ?"
                ),
                ("lat point, CPU 4 -> memory node ?", "lat point, CPU 4 -> memory node ?"),
                ("lat loaded, CPU 2, read load", "lat loaded, CPU 2"),
                ("global bandwidth", "global bandwidth"),
            ]
        );
    }
}
