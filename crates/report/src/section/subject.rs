//! Which result a flag or a mark is about, in words
//! ([`analysis::subject::Subject`]): the way a flag line names it
//! ([`flagged`]: impossible figures, the report's flags and
//! contradictions) and the shorter way `compare` names a marked input
//! ([`marked`]).

use analysis::subject::Subject;

/// A bandwidth result's memory: its node, else its nodes, else `?`.
fn memory(mem_node: Option<u32>, mem_nodes: &str) -> String {
    match (mem_node, mem_nodes.is_empty()) {
        (Some(n), _) => n.to_string(),
        (None, false) => mem_nodes.to_string(),
        (None, true) => "?".into(),
    }
}

/// What a result is, as flag lines write it: `bw local triad, 2
/// thread(s), CPU node 0 -> memory 0` (a whole-machine mode: `memory
/// 0-1`), `lat matrix, CPU 0 -> memory node 1` (or `memory interleaved
/// over nodes 0-3`), `lat loaded, CPU 0, read load`.
pub fn flagged(s: &Subject) -> String {
    match s {
        Subject::Bw { mode, kernel, threads, cpu_node, mem_node, mem_nodes } => {
            let place = match cpu_node {
                Some(c) => format!("CPU node {c} -> memory {}", memory(*mem_node, mem_nodes)),
                // whole-machine modes: every node's threads
                None => format!("memory {}", memory(*mem_node, mem_nodes)),
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
        Subject::Bw { mode, kernel, threads, cpu_node, mem_node, mem_nodes } => {
            let place = match cpu_node {
                Some(c) => format!(", CPU node {c} -> memory {}", memory(*mem_node, mem_nodes)),
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
        let v = serde_json::json!({"mode": "matrix", "kernel": "triad", "threads": 16});
        let base = match results::upgrade::read("bw", &v).record {
            Record::Bw(b) => Subject::bw(&b),
            r => panic!("{r:?}"),
        };
        let bw = |cpu_node, mem_node, mem_nodes: &str| match base.clone() {
            Subject::Bw { mode, kernel, threads, .. } => Subject::Bw {
                mode,
                kernel,
                threads,
                cpu_node,
                mem_node,
                mem_nodes: mem_nodes.into(),
            },
            other => panic!("{other:?}"),
        };
        let chase = |mem_node, interleave: Option<&str>| Subject::Chase {
            mode: results::lat::Mode::Point,
            cpu: 4,
            mem_node,
            interleave: interleave.map(str::to_string),
        };
        let all = [
            bw(Some(0), Some(1), ""),
            bw(None, None, "0-1"),
            bw(None, None, ""),
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
