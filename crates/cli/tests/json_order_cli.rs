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
