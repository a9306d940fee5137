//! Declared distances against measured latency, as the report and `topo
//! --from-run` show them: the SLIT and the latency matrix side by side in
//! `numactl --hardware`'s layout (and the latency rescaled to distances,
//! local = 10), then what [`analysis::distances`] found: each
//! contradiction in words, a flat measured memory named as such, or why
//! nothing was compared.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use analysis::data::RunData;
use analysis::distances::{
    self, Cell, Check, Claim, Contradiction, Declared, Kind, Row, Source, Unchecked,
    UNSETTLED_RATIO,
};
use serde::{Serialize, Serializer};
use store::LoadedRun;

use crate::doc::{Document, Table};

/// What a run declares and measured, for `--json` readers.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    /// The run's declared distances, when it has them.
    pub declared: Option<Declared>,
    /// The latency matrix: one entry per CPU node -> memory node.
    pub measured: Vec<MeasuredCell>,
    /// The comparison (absent on a machine of one node); why nothing was
    /// compared is written in words ([`unchecked`]).
    #[serde(serialize_with = "worded")]
    pub check: Option<Check>,
}

/// Why nothing was compared, one sentence without a full stop; a missing
/// matrix names the commands that measure one.
pub fn unchecked(u: &Unchecked) -> String {
    match u {
        Unchecked::NoTopology { run } => format!(
            "run {run} holds no topology (imported without one): no declared distances to compare"
        ),
        Unchecked::OneNode => "one NUMA node: no distances to order".into(),
        Unchecked::NoSlit { run } => format!(
            "run {run}'s topology has no SLIT (no complete distance matrix: the firmware gave none, \
             or the run was imported from a machine or version that did not record it)"
        ),
        Unchecked::NoMatrix => "no latency matrix: run `numaprobe run --only lat-matrix` (or \
                                `numaprobe lat --matrix --save`) to measure one"
            .into(),
        Unchecked::Undecided { unsettled, cells } => format!(
            "undecided: {unsettled} of the latency matrix's {cells} cells have samples more than \
             {UNSETTLED_RATIO}x apart (the machine, or a virtual machine's host, was busy while \
             they ran), which leaves no CPU node two cells to order; measure again on a quiet \
             machine"
        ),
    }
}

/// A contradiction in one sentence without a full stop: whose
/// distances say what, and what was measured (`the firmware says node 1
/// is nearer to node 0 than node 2 (distance 12 vs 21); measured, node 2
/// is nearer by 18%`). `topo --from-run`, the report, the `--json`
/// documents and the audit's stored finding (through console's
/// `audit::TERMS`) say it so.
pub fn contradiction(c: &Contradiction) -> String {
    let who = match c.source {
        Source::Firmware => "the firmware",
        Source::KernelDefaults => {
            "the kernel's default distances (the firmware's SLIT was refused)"
        }
    };
    let from = c.from;
    let name = |n: u32| {
        if n == from {
            format!("node {n}'s own memory")
        } else {
            format!("node {n}")
        }
    };
    let pct = c.measured_pct;
    let (near, far) = (name(c.a), name(c.b));
    match c.claim {
        Claim::Distances { near: dn, far: df } => format!(
            "{who} says {near} is nearer to node {from} than {far} (distance {dn} vs {df}); \
             measured, {far} is nearer by {pct:.0}%"
        ),
        Claim::HmatNs { near: ln, far: lf } => format!(
            "the firmware's HMAT says {near} is nearer to node {from} than {far} ({ln} vs {lf} \
             ns); measured, {far} is nearer by {pct:.0}%"
        ),
        Claim::Equal { distance } => format!(
            "{who} says {} and {} are equally near node {from} (distance {distance}); measured, \
             {near} is nearer by {pct:.0}%",
            name(c.a.min(c.b)),
            name(c.a.max(c.b))
        ),
        Claim::Ratio { remote, local, measured } => format!(
            "{who} says node {} is {:.1}x as far from node {from} as its own memory \
             ({remote}/{local}); measured, {measured:.2}x: off by {:.0}%, beyond the {:.0}% the \
             SLIT's rounding and the run's noise allow",
            c.a,
            c.claim.declared_ratio().unwrap_or_default(),
            pct.abs(),
            c.allowed_pct
        ),
    }
}

/// A comparison as `--json` documents write it: `{"status":
/// "not-checked", "reason": "..."}` with the reason in words
/// ([`unchecked`]); a checked one with each contradiction's figures and
/// its sentence ([`contradiction`]) as `text`.
pub fn worded<S: Serializer>(check: &Option<Check>, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct WordedContradiction {
        kind: Kind,
        from: u32,
        a: u32,
        b: u32,
        measured_pct: f64,
        allowed_pct: f64,
        text: String,
    }
    #[derive(Serialize)]
    #[serde(tag = "status", rename_all = "kebab-case")]
    enum Worded<'a> {
        NotChecked {
            reason: String,
        },
        Checked {
            pairs: usize,
            ratios: usize,
            order: Vec<WordedContradiction>,
            ratio: Vec<WordedContradiction>,
            flat: bool,
            rows: &'a [Row],
            unsettled: &'a [[u32; 2]],
        },
    }
    let each = |v: &[Contradiction]| -> Vec<WordedContradiction> {
        v.iter()
            .map(|c| WordedContradiction {
                kind: c.kind,
                from: c.from,
                a: c.a,
                b: c.b,
                measured_pct: c.measured_pct,
                allowed_pct: c.allowed_pct,
                text: contradiction(c),
            })
            .collect()
    };
    match check {
        None => s.serialize_none(),
        Some(Check::NotChecked { reason }) => {
            s.serialize_some(&Worded::NotChecked { reason: unchecked(reason) })
        }
        Some(Check::Checked { pairs, ratios, order, ratio, flat, rows, unsettled }) => s
            .serialize_some(&Worded::Checked {
                pairs: *pairs,
                ratios: *ratios,
                order: each(order),
                ratio: each(ratio),
                flat: *flat,
                rows,
                unsettled,
            }),
    }
}

/// One measured cell.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredCell {
    pub cpu_node: u32,
    pub mem_node: u32,
    /// Median of the pointer chase, ns.
    pub median_ns: f64,
    /// Robust CV of its samples, percent.
    pub noise_pct: f64,
    /// False when its samples were more than
    /// [`analysis::distances::UNSETTLED_RATIO`] apart (left out).
    pub settled: bool,
}

impl View {
    pub fn of(run: &LoadedRun, d: &RunData) -> View {
        let cells = distances::measured_cells(d);
        View {
            declared: Declared::of_run(run).ok(),
            measured: cells
                .iter()
                .map(|((c, m), x)| MeasuredCell {
                    cpu_node: *c,
                    mem_node: *m,
                    median_ns: x.ns,
                    noise_pct: x.noise_pct,
                    settled: x.settled,
                })
                .collect(),
            check: distances::of_run(run, d),
        }
    }

    fn cells(&self) -> BTreeMap<(u32, u32), Cell> {
        self.measured
            .iter()
            .map(|c| {
                let cell = Cell { ns: c.median_ns, noise_pct: c.noise_pct, settled: c.settled };
                ((c.cpu_node, c.mem_node), cell)
            })
            .collect()
    }

    /// The three matrices side by side in `numactl --hardware`'s layout:
    /// declared distances, measured ns, measured as distances (each row's
    /// local figure = 10). Empty without a measured matrix.
    pub fn matrices_text(&self) -> String {
        let cells = self.cells();
        if cells.is_empty() {
            return String::new();
        }
        let cols: Vec<u32> = match &self.declared {
            Some(d) => d.nodes.clone(),
            None => cells.keys().map(|(_, m)| *m).collect::<BTreeSet<_>>().into_iter().collect(),
        };
        let rows: BTreeSet<u32> = cells.keys().map(|(c, _)| *c).collect();
        let mut blocks: Vec<Vec<String>> = Vec::new();
        if let Some(d) = &self.declared {
            let body = d
                .nodes
                .iter()
                .zip(&d.rows)
                .map(|(n, r)| (*n, r.iter().map(|x| Some(x.to_string())).collect()))
                .collect();
            blocks.push(block("declared (SLIT):", &cols, body, 3));
        }
        let ns = rows
            .iter()
            .map(|r| {
                let row = cols
                    .iter()
                    .map(|c| {
                        let x = cells.get(&(*r, *c))?;
                        Some(format!("{:.0}{}", x.ns, if x.settled { "" } else { "?" }))
                    })
                    .collect();
                (*r, row)
            })
            .collect();
        blocks.push(block("measured (ns, median):", &cols, ns, 5));
        let scaled = rows
            .iter()
            .map(|r| {
                let local = cells.get(&(*r, *r)).map(|x| x.ns).filter(|l| *l > 0.0);
                let row = cols
                    .iter()
                    .map(|c| Some(format!("{:.1}", cells.get(&(*r, *c))?.ns / local? * 10.0)))
                    .collect();
                (*r, row)
            })
            .collect();
        blocks.push(block("measured as distances (local = 10):", &cols, scaled, 5));
        side_by_side(&blocks)
    }

    /// The comparison in lines: contradictions, the flat note, or why
    /// nothing was compared.
    pub fn lines(&self) -> Vec<String> {
        match &self.check {
            None => Vec::new(),
            Some(Check::NotChecked { reason }) => {
                vec![format!("not compared: {}", unchecked(reason))]
            }
            Some(Check::Checked { pairs, ratios, order, ratio, flat, unsettled, .. }) => {
                let mut out = Vec::new();
                if !unsettled.is_empty() {
                    let which: Vec<String> =
                        unsettled.iter().map(|[c, m]| format!("{c}->{m}")).collect();
                    out.push(format!(
                        "left out (? above): {} cell(s) whose samples are more than {}x apart ({}): the machine, or a virtual machine's host, was busy while they ran; what they would decide is undecided",
                        unsettled.len(),
                        analysis::distances::UNSETTLED_RATIO,
                        which.join(", ")
                    ));
                }
                if *flat {
                    out.push(
                        "the measured memory is flat: every node within the noise of local \
                         latency (a virtual machine whose memory is all one host node, or \
                         interleaving), so the declared order can be neither confirmed nor \
                         contradicted; the ratios can"
                            .to_string(),
                    );
                }
                if order.is_empty() && !*flat {
                    out.push(format!(
                        "orders agree: the declared distances order every node's memory as measured ({pairs} pair(s))"
                    ));
                }
                out.extend(order.iter().map(|c| format!("contradiction: {}", contradiction(c))));
                if ratio.is_empty() {
                    out.push(format!(
                        "ratios agree: {ratios} remote/local ratio(s) within the SLIT's rounding and the noise"
                    ));
                }
                out.extend(ratio.iter().map(|c| format!("ratio: {}", contradiction(c))));
                out
            }
        }
    }

    /// The section of `topo --from-run`: the matrices, then the lines.
    pub fn text(&self) -> String {
        let m = self.matrices_text();
        let lines = self.lines();
        if m.is_empty() && lines.is_empty() {
            return String::new();
        }
        let mut s = String::from(
            "\nDeclared distances against measured latency (pointer chase, median; tolerance: \
             docs/topo.md)\n",
        );
        s.push_str(&m);
        for l in lines {
            let _ = writeln!(s, "  {l}");
        }
        s
    }
}

/// One matrix as `numactl --hardware` draws it: a title, `node` and the
/// column ids, then `  N:` and the row.
fn block(
    title: &str,
    cols: &[u32],
    rows: Vec<(u32, Vec<Option<String>>)>,
    w: usize,
) -> Vec<String> {
    let mut out = vec![title.to_string()];
    let mut head = String::from("node ");
    for c in cols {
        let _ = write!(head, " {c:>w$}");
    }
    out.push(head);
    for (r, vals) in rows {
        let mut line = format!("{r:>3}: ");
        for v in vals {
            let _ = write!(line, " {:>w$}", v.unwrap_or_else(|| "-".into()));
        }
        out.push(line);
    }
    out
}

fn side_by_side(blocks: &[Vec<String>]) -> String {
    let widths: Vec<usize> =
        blocks.iter().map(|b| b.iter().map(|l| l.chars().count()).max().unwrap_or(0)).collect();
    let height = blocks.iter().map(Vec::len).max().unwrap_or(0);
    let mut s = String::new();
    for i in 0..height {
        let mut line = String::from("  ");
        for (b, w) in blocks.iter().zip(&widths) {
            let cell = b.get(i).map(String::as_str).unwrap_or("");
            let _ = write!(line, "{cell:<w$}    ");
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}

/// Adds "Declared distances against measured" to a report: nothing on a
/// machine of one node.
pub fn section(doc: &mut Document, run: &LoadedRun, d: &RunData) {
    let v = View::of(run, d);
    let Some(check) = &v.check else { return };
    doc.h(2, "Declared distances against measured");
    doc.p("The firmware's distances (SLIT, as the kernel shows them; HMAT read latencies where \
         present) against this run's latency matrix (pointer chase, median, CPU node -> memory \
         node). Each node's targets are compared nearest first, and each remote/local distance \
         ratio with the remote/local latency, within the SLIT's rounding (whole numbers: ±0.5 on \
         each) and two robust standard deviations of the two figures' noise (docs/topo.md).");
    if let Check::NotChecked { reason } = check {
        doc.p(format!("Not compared: {}.", unchecked(reason)));
        return;
    }
    let cells = v.cells();
    if let Some(decl) = &v.declared {
        let mut head = vec!["CPU node \\ memory node".to_string()];
        head.extend(decl.nodes.iter().map(|n| n.to_string()));
        let mut t = Table::new(head);
        let rows: BTreeSet<u32> = cells.keys().map(|(c, _)| *c).collect();
        for r in rows {
            let i = decl.nodes.iter().position(|n| *n == r);
            let local = cells.get(&(r, r)).map(|x| x.ns).filter(|l| *l > 0.0);
            let mut row = vec![r.to_string()];
            for (j, c) in decl.nodes.iter().enumerate() {
                let declared = i.and_then(|i| decl.rows.get(i)?.get(j)).map(|x| x.to_string());
                let measured = cells.get(&(r, *c)).map(|x| {
                    let mark = if x.settled { "" } else { "?" };
                    match local {
                        Some(l) => format!("{:.1} ({:.0} ns){mark}", x.ns / l * 10.0, x.ns),
                        None => format!("{:.0} ns{mark}", x.ns),
                    }
                });
                row.push(format!(
                    "{} / {}",
                    declared.unwrap_or_else(|| "-".into()),
                    measured.unwrap_or_else(|| "-".into())
                ));
            }
            t.push(row);
        }
        doc.table(t.caption(
            "Each cell: declared distance / measured latency as a distance (local = 10) and in ns.",
        ));
    }
    let lines = v.lines();
    let order: Vec<String> =
        lines.iter().filter(|l| l.starts_with("contradiction:")).map(|l| capital(l)).collect();
    let ratio: Vec<String> =
        lines.iter().filter(|l| l.starts_with("ratio:")).map(|l| capital(l)).collect();
    for g in lines.iter().filter(|l| !l.starts_with("contradiction:") && !l.starts_with("ratio:")) {
        doc.p(capital(g));
    }
    if !order.is_empty() {
        doc.callout(format!(
            "{} declared order(s) contradict the measurement: software that reads the distances \
             to pick the nearest node (the kernel, hwloc, MPI and OpenMP runtimes) picks a \
             farther one; `numaprobe export --format hwloc` gives them the measured figures.",
            order.len()
        ));
        doc.list(order);
    }
    if !ratio.is_empty() {
        doc.p(format!(
            "{} declared ratio(s) differ from the measured ones beyond the tolerance: the order \
             stands, the magnitudes do not (what weighs distances, such as the kernel's reclaim \
             distance and hwloc's grouping of nodes by distance, is misled).",
            ratio.len()
        ));
        doc.list(ratio);
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect::<String>() + ".",
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::run::RunId;

    /// Every reason is worded; only the missing matrix names the commands
    /// (and their flags) that measure one.
    #[test]
    fn every_reason_is_worded_and_only_a_missing_matrix_names_a_command() {
        let all = [
            Unchecked::NoTopology { run: RunId(3) },
            Unchecked::OneNode,
            Unchecked::NoSlit { run: RunId(3) },
            Unchecked::NoMatrix,
            Unchecked::Undecided { unsettled: 9, cells: 9 },
        ];
        for u in &all {
            let w = unchecked(u);
            assert!(!w.is_empty() && !w.ends_with('.'), "{u:?}: {w}");
            assert_eq!(w.contains("--"), *u == Unchecked::NoMatrix, "{u:?}: {w}");
        }
        assert_eq!(
            unchecked(&all[0]),
            "run 3 holds no topology (imported without one): no declared distances to compare"
        );
        assert_eq!(unchecked(&all[1]), "one NUMA node: no distances to order");
        let json = |c: Option<Check>| {
            #[derive(Serialize)]
            struct D {
                #[serde(serialize_with = "worded")]
                check: Option<Check>,
            }
            serde_json::to_string(&D { check: c }).unwrap()
        };
        assert_eq!(
            json(Some(Check::NotChecked { reason: Unchecked::OneNode })),
            r#"{"check":{"status":"not-checked","reason":"one NUMA node: no distances to order"}}"#
        );
        assert_eq!(json(None), r#"{"check":null}"#);
    }

    /// Every claim from either source is one sentence without a full stop
    /// and names no flag (an HMAT order is the firmware's whatever the
    /// source says: the library never pairs it with the kernel's defaults).
    #[test]
    fn every_claim_is_worded_without_a_flag() {
        let claims = [
            Claim::Distances { near: 11, far: 21 },
            Claim::Equal { distance: 21 },
            Claim::HmatNs { near: 150, far: 300 },
            Claim::Ratio { remote: 21, local: 10, measured: 1.5 },
        ];
        for claim in claims {
            for source in [Source::Firmware, Source::KernelDefaults] {
                let c = Contradiction {
                    kind: Kind::Order,
                    source,
                    claim,
                    from: 0,
                    a: 0,
                    b: 2,
                    measured_pct: -30.0,
                    allowed_pct: 9.0,
                };
                let w = contradiction(&c);
                assert!(!w.contains("--") && !w.ends_with('.'), "{w}");
                assert!(w.contains(" node 0"), "{w}");
                if let Claim::HmatNs { .. } = claim {
                    assert!(w.starts_with("the firmware's HMAT says node 0's own memory"), "{w}");
                }
            }
        }
    }

    /// A view of `decl` against cells made by `ns` (every cell 1% noise,
    /// settled), compared by the library.
    fn view(decl: Declared, n: u32, ns: impl Fn(u32, u32) -> f64) -> View {
        let measured: Vec<MeasuredCell> = (0..n)
            .flat_map(|c| (0..n).map(move |m| (c, m)))
            .map(|(c, m)| MeasuredCell {
                cpu_node: c,
                mem_node: m,
                median_ns: ns(c, m),
                noise_pct: 1.0,
                settled: true,
            })
            .collect();
        let mut v = View { declared: Some(decl.clone()), measured, check: None };
        v.check = Some(distances::check(&decl, &v.cells()));
        v
    }

    fn declared(rows: &[&[u32]], kernel_defaults: bool) -> Declared {
        Declared {
            nodes: (0..rows.len() as u32).collect(),
            rows: rows.iter().map(|r| r.to_vec()).collect(),
            kernel_defaults,
            ..Declared::default()
        }
    }

    /// Each kind of contradiction, from the firmware and from the kernel's
    /// defaults, in the lines `topo --from-run` prints and the report
    /// lists, and in the `--json` document, whole.
    #[test]
    fn every_contradiction_is_worded_whole_in_lines_and_json() {
        // An order reversed from node 0 (1 declared nearer, 2 measured
        // nearer), ratios off everywhere.
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 1) => 118.0,
            (0, 2) => 100.0,
            _ if i == j => 80.0,
            _ => 130.0,
        };
        let rows: &[&[u32]] = &[&[10, 12, 21], &[12, 10, 21], &[21, 21, 10]];
        let v = view(declared(rows, false), 3, ns);
        assert_eq!(
            v.lines(),
            [
                "contradiction: the firmware says node 1 is nearer to node 0 than node 2 (distance 12 vs 21); measured, node 2 is nearer by 18%",
                "ratio: the firmware says node 1 is 1.2x as far from node 0 as its own memory (12/10); measured, 1.48x: off by 23%, beyond the 12% the SLIT's rounding and the run's noise allow",
                "ratio: the firmware says node 2 is 2.1x as far from node 0 as its own memory (21/10); measured, 1.25x: off by 40%, beyond the 10% the SLIT's rounding and the run's noise allow",
                "ratio: the firmware says node 0 is 1.2x as far from node 1 as its own memory (12/10); measured, 1.62x: off by 35%, beyond the 12% the SLIT's rounding and the run's noise allow",
                "ratio: the firmware says node 2 is 2.1x as far from node 1 as its own memory (21/10); measured, 1.62x: off by 23%, beyond the 10% the SLIT's rounding and the run's noise allow",
                "ratio: the firmware says node 0 is 2.1x as far from node 2 as its own memory (21/10); measured, 1.62x: off by 23%, beyond the 10% the SLIT's rounding and the run's noise allow",
                "ratio: the firmware says node 1 is 2.1x as far from node 2 as its own memory (21/10); measured, 1.62x: off by 23%, beyond the 10% the SLIT's rounding and the run's noise allow",
            ]
        );
        // The kernel's defaults (10/20) calling every node equally far,
        // node 0's own memory measured farther than node 1: a tie.
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 0) => 100.0,
            (0, 1) => 80.0,
            (0, 2) => 200.0,
            _ if i == j => 100.0,
            _ => 200.0,
        };
        let rows: &[&[u32]] = &[&[10, 20, 20], &[20, 10, 20], &[20, 20, 10]];
        let v = view(declared(rows, true), 3, ns);
        assert_eq!(
            v.lines(),
            [
                "contradiction: the kernel's default distances (the firmware's SLIT was refused) says node 0's own memory is nearer to node 0 than node 1 (distance 10 vs 20); measured, node 1 is nearer by 25%",
                "contradiction: the kernel's default distances (the firmware's SLIT was refused) says node 1 and node 2 are equally near node 0 (distance 20); measured, node 1 is nearer by 150%",
                "ratio: the kernel's default distances (the firmware's SLIT was refused) says node 1 is 2.0x as far from node 0 as its own memory (20/10); measured, 0.80x: off by 60%, beyond the 10% the SLIT's rounding and the run's noise allow",
            ]
        );
        let mut hmat = declared(&[&[10, 17, 17], &[17, 10, 17], &[17, 17, 10]], true);
        hmat.hmat_ns = [((0, 1), 150), ((0, 2), 300)].into();
        let ns = |i: u32, j: u32| match (i, j) {
            (0, 1) => 170.0,
            (0, 2) => 160.0,
            _ if i == j => 100.0,
            _ => 165.0,
        };
        let v = view(hmat, 3, ns);
        let lines = v.lines();
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(
            lines,
            [
                "contradiction: the firmware's HMAT says node 1 is nearer to node 0 than node 2 (150 vs 300 ns); measured, node 2 is nearer by 6%",
                "ratios agree: 6 remote/local ratio(s) within the SLIT's rounding and the noise",
            ]
        );
        let check = &json[json.find(r#""check":"#).unwrap()..];
        assert_eq!(
            check,
            r#""check":{"status":"checked","pairs":10,"ratios":6,"order":[{"kind":"hmat-order","from":0,"a":1,"b":2,"measured_pct":6.25,"allowed_pct":2.8284271247461903,"text":"the firmware's HMAT says node 1 is nearer to node 0 than node 2 (150 vs 300 ns); measured, node 2 is nearer by 6%"}],"ratio":[],"flat":false,"rows":[{"from":0,"declared_order":[0,1,2],"measured_order":[0,2,1]},{"from":1,"declared_order":[1,0,2],"measured_order":[1,0,2]},{"from":2,"declared_order":[2,0,1],"measured_order":[2,0,1]}],"unsettled":[]}}"#
        );
    }
}
