//! The key order of the `--json` documents whose order their readers see:
//! `run` and `study` write every object's keys sorted, at every level;
//! `bw` writes its document's keys in the order its fields are declared.
//! The order is read from the bytes written (a map visitor sees the keys
//! as they come), so a document routed through another writer fails here.

use std::fmt;
use std::path::Path;

use assert_cmd::Command;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value's shape: objects with their keys in written order.
enum Node {
    Obj(Vec<(String, Node)>),
    Arr(Vec<Node>),
    Leaf,
}

struct Shape;

impl<'de> Visitor<'de> for Shape {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Node, A::Error> {
        let mut v = Vec::new();
        while let Some(n) = s.next_element()? {
            v.push(n);
        }
        Ok(Node::Arr(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Node, A::Error> {
        let mut v = Vec::new();
        while let Some(e) = m.next_entry()? {
            v.push(e);
        }
        Ok(Node::Obj(v))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(Shape)
    }
}

/// Checks that every object's keys are sorted; counts the objects of two
/// keys or more (so that a check of nothing is seen).
fn sorted_everywhere(n: &Node, path: &str, objects: &mut usize) -> Result<(), String> {
    match n {
        Node::Obj(entries) => {
            let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            if keys.windows(2).any(|w| w[0] > w[1]) {
                return Err(format!("{path}: keys not sorted: {keys:?}"));
            }
            *objects += usize::from(keys.len() >= 2);
            for (k, v) in entries {
                sorted_everywhere(v, &format!("{path}.{k}"), objects)?;
            }
        }
        Node::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                sorted_everywhere(v, &format!("{path}[{i}]"), objects)?;
            }
        }
        Node::Leaf => {}
    }
    Ok(())
}

fn np(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("numaprobe").unwrap();
    c.env_remove("NUMAPROBE_DB")
        .env("NUMAPROBE_LOCK", dir.join("measure.lock"))
        .env("NUMAPROBE_STATE_DIR", dir.join("state"))
        .arg("--db")
        .arg(dir.join("results.db"));
    c
}

fn json_of(dir: &Path, args: &[&str]) -> Node {
    let out = np(dir).arg("--json").args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

#[test]
fn run_and_study_documents_have_every_key_sorted() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["run", "--quick", "--dry-run"][..],
        &["study", "--vary", "thp_enabled=madvise,always", "--dry-run", "--", "--quick"],
        &["study", "--restore"],
    ] {
        let doc = json_of(dir.path(), args);
        let mut objects = 0;
        if let Err(e) = sorted_everywhere(&doc, "$", &mut objects) {
            panic!("{args:?}: {e}");
        }
        assert!(objects >= 1, "{args:?}: no object of two keys or more to check");
    }
}

#[test]
fn bw_document_keeps_its_declared_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["bw", "--size", "1M", "--kernel", "triad", "--threads", "1", "--budget", "0.05"];
    let Node::Obj(top) = json_of(dir.path(), &args) else { panic!("bw --json: not an object") };
    let keys: Vec<&str> = top.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["schema_version", "unit", "interrupted", "results", "impossible"]);
}

/// The keys of `node`'s object, in written order.
fn keys(node: &Node, what: &str) -> Vec<String> {
    let Node::Obj(entries) = node else { panic!("{what}: not an object") };
    entries.iter().map(|(k, _)| k.clone()).collect()
}

/// `lat` measures, so its figures vary: its document is pinned by its
/// keys in written order, at the top and in a result, and its text by
/// its table's heading and the line saying the method.
#[test]
fn lat_point_document_keeps_its_declared_key_order() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["lat", "--size", "1M", "--samples", "3", "--sample-ms", "2"];
    let doc = json_of(dir.path(), &args);
    // `impossible` is written only when the chase came out below the
    // fastest cache's latency, which a loaded machine's 1 MiB chase may
    // not: when written, it is last.
    let top = ["schema_version", "mode", "results", "interrupted", "prefetch_check", "impossible"];
    let got = keys(&doc, "lat");
    let written = if got.last().map(String::as_str) == Some("impossible") { 6 } else { 5 };
    assert_eq!(got, top[..written]);
    let Node::Obj(entries) = &doc else { unreachable!() };
    let Node::Arr(results) = &entries[2].1 else { panic!("lat: results is not a list") };
    let first = keys(&results[0], "lat results[0]");
    let want = ["mode", "size_bytes", "cpu", "cpu_node", "mem_node", "median_ns", "p50_ns"];
    assert_eq!(first[..want.len()], want, "{first:?}");
    let out = np(dir.path()).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("CPU  CPU node  mem node  size   pages  stride B  median ns"),
        "{text}"
    );
    assert!(text.lines().nth(2).is_some_and(|l| l.starts_with("method: random chase")), "{text}");
}

/// `place` measures the pages' nodes: its document is pinned by its keys
/// in written order, its text by each line's first word.
#[test]
fn place_document_keeps_its_key_order_and_its_text_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["place", "--size", "1M", "--mem-nodes", "0"];
    let doc = json_of(dir.path(), &args);
    let want = [
        "schema_version",
        "kernel",
        "allowed",
        "cpu",
        "policy_requested",
        "policy",
        "fallback",
        "applied_with",
        "policy_read_back",
        "size_bytes",
        "pages",
        "expect_source",
        "placement",
        "page_counts",
        "weights",
        "memory",
        "numastat_delta",
        "numa_balancing",
        "numa_balancing_enabled",
        "ok",
    ];
    assert_eq!(keys(&doc, "place"), want);
    let out = np(dir.path()).args(args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Vec<&str> = text.lines().map(|l| l.split(' ').next().unwrap()).collect();
    let want = ["policy", "cpu", "buffer", "sampled", "node", "0", "numa_balancing", "check"];
    assert_eq!(first, want, "{text}");
    assert!(text.ends_with(" from policy: OK\n"), "{text}");
}

/// `fleet --this-host`: its three keys (the playbooks' contract), and its
/// text the same name and identity, tab-separated on one line.
#[test]
fn this_host_document_and_text_say_the_same() {
    let bin = || {
        let mut c = Command::cargo_bin("numaprobe").unwrap();
        c.env_remove("NUMAPROBE_DB").env_remove("NUMAPROBE_LOCK");
        c
    };
    let out = bin().args(["--json", "fleet", "--this-host"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Node = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(keys(&doc, "this-host"), ["host", "machine_id", "machine_id_source"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = bin().args(["fleet", "--this-host"]).output().unwrap();
    assert!(text.status.success());
    let field = |k: &str| v[k].as_str().unwrap_or("").to_string();
    let want = format!("{}\t{}\n", field("host"), field("machine_id"));
    assert_eq!(String::from_utf8(text.stdout).unwrap(), want);
}
