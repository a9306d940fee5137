//! Declared distances against measured ones, end to end on the real
//! binary, over hand-made runs of the `snc2-cxl` test tree (SLIT 10 / 11
//! within a package, 21 across, 30 and 40 to the CXL node 4) whose
//! latency matrix is made from a hardware model (90 ns local, 99 ns to
//! the package's other node, 189 ns across, 270 and 360 ns to node 4):
//! the audit finding and the report section when they agree, when the
//! measurement reverses an order, and when the run has no SLIT (no
//! finding, the reason said); `topo --from-run`'s matrices in `numactl
//! --hardware`'s layout; `fleet`'s count of hosts whose orders disagree;
//! and `export --format hwloc`'s refusals (no matrix, malformed XML,
//! another machine's topology, runs of two machines) and its document.
//! The export read back by Debian's hwloc is `hwloc_real.rs`.

#[path = "support/distances.rs"]
mod support;
#[path = "support/tiered.rs"]
mod tiered;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use support::{figures, import, model_ns, np, reversed, topology, tree};

/// `audit --run RUN` on the snc2-cxl tree: its stdout (`--json` when
/// `json`).
fn audit(db: &Path, run: &str, json: bool) -> String {
    let mut c = np(db);
    if json {
        c.arg("--json");
    }
    let out = c.args(["audit", "--run", run, "--root"]).arg(tree("snc2-cxl")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn audit_json(db: &Path, run: &str) -> Value {
    serde_json::from_str(&audit(db, run, true)).unwrap()
}

fn finding<'a>(audit: &'a Value, id: &str) -> Option<&'a Value> {
    audit["findings"].as_array().unwrap().iter().find(|f| f["id"] == id)
}

fn report(db: &Path, run: &str) -> String {
    let out = np(db).args(["report", run]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

const ID: &str = "numa.declared_distances";

#[test]
fn a_slit_that_orders_and_scales_like_the_measurement_agrees() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "agree", "a", &figures(model_ns), &topology("snc2-cxl", true));
    let v = audit_json(&db, "agree");
    let f = finding(&v, ID).unwrap_or_else(|| panic!("no {ID} finding: {v:#}"));
    assert_eq!(f["severity"], "ok", "{f:#}");
    assert!(f["found"].as_str().unwrap().contains("order every node's memory as measured"), "{f}");
    assert_eq!(v["evidence"]["distances"]["status"], "checked");
    let md = report(&db, "agree");
    assert!(md.contains("## Declared distances against measured"), "{md}");
    assert!(md.contains("Orders agree: the declared distances order every node's memory"), "{md}");
    assert!(!md.contains("Contradiction:"), "{md}");
    // one table cell: declared 21, measured 189 ns = 21.0 as a distance
    assert!(md.contains("| 21 / 21.0 (189 ns) |"), "{md}");
}

#[test]
fn a_measurement_that_reverses_the_declared_order_is_a_warning_with_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "reversed", "b", &figures(reversed), &topology("snc2-cxl", true));
    let v = audit_json(&db, "reversed");
    let f = finding(&v, ID).unwrap_or_else(|| panic!("no {ID} finding: {v:#}"));
    assert_eq!(f["severity"], "warn", "{f:#}");
    let want = "the firmware says node 1 is nearer to node 0 than node 2 (distance 11 vs 21); \
                measured, node 2 is nearer by 18%";
    assert!(f["found"].as_str().unwrap().starts_with(want), "{f:#}");
    let tie = "the firmware says node 2 and node 3 are equally near node 0 (distance 21); \
               measured, node 2 is nearer by 99%";
    assert_eq!(f["found"], format!("{want} (and 1 more)"), "{f:#}");
    assert_eq!(
        f["evidence"],
        format!(
            "run 1 (2026-11-20T10:00:00Z, reversed): nearest first from node 0: declared 0 1 2 3 \
             4, measured 0 2 1 3 4; from node 1: declared 1 0 2 3 4, measured 1 0 2 3 4; from \
             node 2: declared 2 3 0 1 4, measured 2 3 0 1 4; from node 3: declared 3 2 0 1 4, \
             measured 3 2 0 1 4; {want}; {tie}"
        ),
        "{f:#}"
    );
    let ev = f["evidence"].as_str().unwrap();
    assert!(ev.starts_with("run 1 ("), "the evidence names the run: {ev}");
    assert!(ev.contains("from node 0: declared 0 1 2 3 4, measured 0 2 1 3 4"), "{ev}");
    assert_eq!(f["needs"], "bios");
    assert_eq!(
        f["fix"],
        "on a virtual machine, give the guest the host's distances (QEMU -numa dist, libvirt \
         <distances>); on bare metal, update the firmware or report the table to the vendor. \
         Meanwhile give hwloc-based runtimes the measured figures: numaprobe export --format \
         hwloc RUN -o topo.xml, then HWLOC_XMLFILE=topo.xml",
        "{f:#}"
    );
    // the audit's text says it too
    let text = audit(&db, "reversed", false);
    assert!(text.contains(&format!("[warn] {ID}: Declared distances vs measured")), "{text}");
    assert!(text.contains(want), "{text}");

    let md = report(&db, "reversed");
    assert!(md.contains(&format!("Contradiction: {want}.")), "{md}");
    let listed: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("- Contradiction: ") || l.starts_with("- Ratio: "))
        .collect();
    let beyond = "the SLIT's rounding and the run's noise allow.";
    assert_eq!(
        listed,
        [
            format!("- Contradiction: {want}."),
            format!("- Contradiction: {tie}."),
            format!(
                "- Ratio: the firmware says node 1 is 1.1x as far from node 0 as its own memory \
                 (11/10); measured, 1.24x: off by 13%, beyond the 10% {beyond}"
            ),
            format!(
                "- Ratio: the firmware says node 2 is 2.1x as far from node 0 as its own memory \
                 (21/10); measured, 1.06x: off by 50%, beyond the 8% {beyond}"
            ),
        ],
        "{md}"
    );
    assert!(md.contains("contradict the measurement"), "{md}");
}

#[test]
fn a_run_without_a_slit_gets_no_finding_and_the_reason_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "noslit", "c", &figures(reversed), &topology("snc2-cxl", false));
    let v = audit_json(&db, "noslit");
    assert!(finding(&v, ID).is_none(), "{v:#}");
    let d = &v["evidence"]["distances"];
    assert_eq!(d["status"], "not-checked", "{d}");
    assert!(d["reason"].as_str().unwrap().starts_with("run 1's topology has no SLIT"), "{d}");
    let text = audit(&db, "noslit", false);
    assert!(
        text.contains(
            "Declared distances not compared with measured ones: run 1's topology has no SLIT"
        ),
        "{text}"
    );
    let md = report(&db, "noslit");
    assert!(md.contains("Not compared: run 1's topology has no SLIT"), "{md}");
    assert!(!md.contains("Contradiction:"), "{md}");
}

/// Why run `run` was not compared, as each output says it: the audit's
/// `--json` block, the audit's line, the report's paragraph, `topo
/// --from-run`'s line and its `--json` block, each whole.
fn not_compared(db: &Path, run: &str) -> [String; 5] {
    let block = |json: &str, key: &str| {
        let lines: Vec<&str> = json.lines().map(str::trim).collect();
        let at = lines.iter().position(|l| *l == key).unwrap_or_else(|| panic!("{json}"));
        lines[at..at + 4].join("\n")
    };
    let line = |text: &str, start: &str| {
        text.lines().map(str::trim).find(|l| l.starts_with(start)).unwrap_or_default().to_string()
    };
    let topo = |json: bool| {
        let mut c = np(db);
        if json {
            c.arg("--json");
        }
        let out = c.args(["topo", "--root"]).arg(tree("snc2-cxl")).args(["--from-run", run]);
        let out = out.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    [
        block(&audit(db, run, true), "\"distances\": {"),
        line(&audit(db, run, false), "Declared distances not compared"),
        line(&report(db, run), "Not compared: "),
        line(&topo(false), "not compared: "),
        block(&topo(true), "\"check\": {"),
    ]
}

/// A run with a SLIT and no latency matrix: nothing compared, and every
/// output says how to measure one, whole.
#[test]
fn a_run_without_a_latency_matrix_says_how_to_measure_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let f = tiered::Figures { bw_gbs: figures(model_ns).bw_gbs, lat_ns: BTreeMap::new() };
    import(&db, 1, "nolat", "c", &f, &topology("snc2-cxl", true));
    let why = "no latency matrix: run `numaprobe run --only lat-matrix` (or `numaprobe lat \
               --matrix --save`) to measure one";
    assert_eq!(
        not_compared(&db, "nolat"),
        [
            format!("\"distances\": {{\n\"status\": \"not-checked\",\n\"reason\": \"{why}\"\n}}"),
            format!("Declared distances not compared with measured ones: {why}"),
            format!("Not compared: {why}."),
            format!("not compared: {why}"),
            format!("\"check\": {{\n\"reason\": \"{why}\",\n\"status\": \"not-checked\"\n}},"),
        ]
    );
    let noslit = "run 2's topology has no SLIT (no complete distance matrix: the firmware gave \
                  none, or the run was imported from a machine or version that did not record it)";
    import(&db, 2, "noslit", "d", &figures(reversed), &topology("snc2-cxl", false));
    assert_eq!(
        not_compared(&db, "noslit")[1..4],
        [
            format!("Declared distances not compared with measured ones: {noslit}"),
            format!("Not compared: {noslit}."),
            format!("not compared: {noslit}"),
        ]
    );
}

#[test]
fn topo_from_run_prints_the_measured_matrix_in_numactl_layout_beside_the_slit() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "agree", "a", &figures(model_ns), &topology("snc2-cxl", true));
    let out = np(&db)
        .args(["topo", "--root"])
        .arg(tree("snc2-cxl"))
        .args(["--from-run", "agree"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let words: Vec<String> =
        text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
    assert!(
        words.contains(
            &"declared (SLIT): measured (ns, median): measured as distances (local = 10):"
                .to_string()
        ),
        "{text}"
    );
    assert!(words.contains(&"node 0 1 2 3 4 node 0 1 2 3 4 node 0 1 2 3 4".to_string()), "{text}");
    assert!(
        words.contains(
            &"0: 10 11 21 21 30 0: 90 99 189 189 270 0: 10.0 11.0 21.0 21.0 30.0".to_string()
        ),
        "{text}"
    );
    // node 4 has no CPUs: a declared row, no measured one
    assert!(words.contains(&"4: 30 30 40 40 10".to_string()), "{text}");
    assert!(text.contains("orders agree"), "{text}");

    let out = np(&db)
        .args(["topo", "--json", "--root"])
        .arg(tree("snc2-cxl"))
        .args(["--from-run", "agree"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &v["from_run"]["distances"];
    assert_eq!(d["check"]["status"], "checked", "{d}");
    assert_eq!(d["measured"].as_array().unwrap().len(), 20, "{d}");
    assert_eq!(d["declared"]["rows"][0], serde_json::json!([10, 11, 21, 21, 30]), "{d}");
}

#[test]
fn fleet_counts_the_hosts_whose_declared_and_measured_orders_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let topo = topology("snc2-cxl", true);
    import(&db, 1, "f", "good-1", &figures(model_ns), &topo);
    import(&db, 2, "f", "good-2", &figures(model_ns), &topo);
    import(&db, 3, "f", "bad-3", &figures(reversed), &topo);
    let out = np(&db).args(["fleet", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["declared_order_disagree"], 1, "{v:#}");
    let hosts: BTreeMap<String, Value> = v["groups"][0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["host"].as_str().unwrap().to_string(), h["declared_order_disagrees"].clone()))
        .collect();
    assert_eq!(hosts["bad-3"], true);
    assert_eq!(hosts["good-1"], false);
    let out = np(&db).args(["fleet"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 host(s) whose declared distances (SLIT, HMAT) order the nodes otherwise than measured: bad-3"),
        "{text}"
    );
}

// --- export --format hwloc, without hwloc ---

fn export(db: &Path, args: &[&str]) -> std::process::Output {
    np(db).args(["export", "--format", "hwloc"]).args(args).output().unwrap()
}

fn one_line_error(out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("numaprobe: warning:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(out.stdout.is_empty());
    lines[0].to_string()
}

#[test]
fn the_export_holds_every_pair_in_hwlocs_units_on_the_runs_own_topology() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    import(&db, 1, "x", "a", &figures(model_ns), &topology("snc2-cxl", true));
    let out = export(&db, &["x"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let xml = String::from_utf8(out.stdout).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">"), "{xml}");
    // 4 CPU nodes x 5 memory nodes, each attribute
    assert_eq!(xml.matches("<memattr_value ").count(), 40, "{xml}");
    assert!(xml.contains("<memattr name=\"Bandwidth\" flags=\"5\">"), "{xml}");
    assert!(xml.contains("<memattr name=\"Latency\" flags=\"6\">"), "{xml}");
    // 100 GB/s = 95367 MiB/s from node 0 (CPUs 0-1 = 0x3); 360 ns from
    // node 2 (CPUs 4-5 = 0x30) to node 4
    assert!(xml.contains("value=\"95367\" initiator_cpuset=\"0x00000003\""), "{xml}");
    assert!(xml.contains("value=\"360\" initiator_cpuset=\"0x00000030\""), "{xml}");
    // the SLIT as hwloc's own NUMALatency matrix
    assert!(xml.contains("name=\"NUMALatency\""), "{xml}");
    assert!(
        xml.contains("<u64values length=\"30\">10 11 21 21 30 11 10 21 21 30 </u64values>"),
        "{xml}"
    );
    assert!(
        xml.contains(
            "<info name=\"numaprobeMeasured\" value=\"Bandwidth Latency: measured by numaprobe"
        ),
        "{xml}"
    );
    assert!(xml.contains("<info name=\"numaprobeLatency\" value=\"pointer chase, median"), "{xml}");
    // node 4 (CPU-less) is the Machine's memory child, not a package's
    assert!(
        xml.contains("<object type=\"NUMANode\" os_index=\"4\" cpuset=\"0x000000ff\""),
        "{xml}"
    );
}

#[test]
fn the_export_refuses_what_it_cannot_write_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let topo = topology("snc2-cxl", true);
    let empty = tiered::Figures { bw_gbs: BTreeMap::new(), lat_ns: BTreeMap::new() };
    import(&db, 1, "nothing", "a", &empty, &topo);
    import(&db, 2, "x", "a", &figures(model_ns), &topo);

    // a run without a matrix: which steps to run
    let out = export(&db, &["nothing"]);
    assert_eq!(out.status.code(), Some(1));
    let e = one_line_error(&out);
    assert!(e.contains("run 1: no bandwidth or latency matrix to export"), "{e}");
    assert!(e.contains("numaprobe run --only bw-matrix,lat-matrix"), "{e}");

    // malformed XML
    let bad = dir.path().join("bad.xml");
    std::fs::write(&bad, "<topology version=\"2.0\">\n  <object type=\"Machine\"\n").unwrap();
    let out = export(&db, &["x", "--topology", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let e = one_line_error(&out);
    assert!(e.contains(&format!("{}: not hwloc XML:", bad.display())), "{e}");

    // hwloc 1.x
    std::fs::write(&bad, "<topology><object type=\"Machine\"/></topology>").unwrap();
    let e = one_line_error(&export(&db, &["x", "--topology", bad.to_str().unwrap()]));
    assert!(e.contains("hwloc 1.x XML"), "{e}");

    // another machine: 4 CPUs and 2 nodes against the run's 8 CPUs, 5 nodes
    let other = dir.path().join("other.xml");
    std::fs::write(&other, OTHER_MACHINE).unwrap();
    let out = export(&db, &["x", "--topology", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let e = one_line_error(&out);
    assert!(
        e.contains(&format!("{} describes another machine than run 2", other.display())),
        "{e}"
    );
    assert!(e.contains("4 CPU(s) (0-3) against the run's 8 (0-7)"), "{e}");
    assert!(e.contains("NUMA nodes 0-1 against the run's 0-4"), "{e}");

    // --topology only with hwloc; the runs of two machines not merged
    let out = np(&db).args(["export", "x", "--topology", "x.xml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    import(&db, 3, "y", "b", &figures(model_ns), &topo);
    let e = one_line_error(&export(&db, &["x", "y"]));
    assert!(e.contains("runs 2, 3 were measured on different machines"), "{e}");
}

/// A 4-CPU, 2-node machine in hwloc's XML, as lstopo writes it (two
/// packages of two cores, a node each).
const OTHER_MACHINE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x0000000f" complete_cpuset="0x0000000f" allowed_cpuset="0x0000000f" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="1">
    <object type="Package" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="2">
      <object type="NUMANode" os_index="0" cpuset="0x00000003" complete_cpuset="0x00000003" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="3" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="4">
        <object type="PU" os_index="0" cpuset="0x00000001" complete_cpuset="0x00000001" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="5"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="6">
        <object type="PU" os_index="1" cpuset="0x00000002" complete_cpuset="0x00000002" nodeset="0x00000001" complete_nodeset="0x00000001" gp_index="7"/>
      </object>
    </object>
    <object type="Package" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="8">
      <object type="NUMANode" os_index="1" cpuset="0x0000000c" complete_cpuset="0x0000000c" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="9" local_memory="1073741824"/>
      <object type="Core" os_index="0" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="10">
        <object type="PU" os_index="2" cpuset="0x00000004" complete_cpuset="0x00000004" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="11"/>
      </object>
      <object type="Core" os_index="1" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="12">
        <object type="PU" os_index="3" cpuset="0x00000008" complete_cpuset="0x00000008" nodeset="0x00000002" complete_nodeset="0x00000002" gp_index="13"/>
      </object>
    </object>
  </object>
</topology>
"#;
