//! The `--json` documents' versions: one `schema_version` per document,
//! first in the document, for the documents whose type does not carry its
//! own ([`schema`], [`Versioned`]).

use serde::Serialize;

/// The `schema_version` of each `--json` document whose type does not
/// carry its own; numaprobe writes it through [`Versioned`]. The others
/// carry theirs: `topo` ([`topo::SCHEMA_VERSION`]). `bw`, `lat`, `scan` and
/// `advise interleave` are versioned by [`results::SCHEMA_VERSION`]. A
/// version goes up when a field of its document changes meaning or goes
/// away; an added field keeps it. docs/cli.md lists them all.
pub mod schema {
    /// `run` (each run's object) and `run --dry-run`.
    pub const RUN: u32 = 1;
    /// `exec`.
    pub const EXEC: u32 = 1;
    /// `compare`.
    pub const COMPARE: u32 = 1;
    /// `fleet`: hosts are machine identities, a host whose latest run is
    /// incomplete is listed in `incomplete`, `skipped` only for `--label`.
    pub const FLEET: u32 = 2;
    /// `list` (each run of the array).
    pub const LIST: u32 = 1;
    /// `show`.
    pub const SHOW: u32 = 1;
    /// `import` (each file of the array).
    pub const IMPORT: u32 = 1;
    /// `advise interleave --restore`.
    pub const RESTORE: u32 = 1;
    /// `study` and `study --dry-run`.
    pub const STUDY: u32 = 1;
    /// `gpu` and `gpu --probe`.
    pub const GPU: u32 = 1;
    /// `audit` (the audit's [`audit::Report`]).
    pub const AUDIT: u32 = 1;
    /// `place` ([`crate::place::PlaceDoc`]).
    pub const PLACE: u32 = 1;
}

/// A `--json` document with `schema_version` first and then every field of
/// `doc` (a struct or a map), for documents whose type does not carry a
/// version (see [`schema`]).
#[derive(Serialize)]
pub struct Versioned<'a, T: Serialize + ?Sized> {
    schema_version: u32,
    #[serde(flatten)]
    doc: &'a T,
}

impl<'a, T: Serialize + ?Sized> Versioned<'a, T> {
    pub fn new(schema_version: u32, doc: &'a T) -> Self {
        Versioned { schema_version, doc }
    }
}

impl<'a, T: Serialize> Versioned<'a, T> {
    /// Each element of a list versioned, for commands whose document is
    /// an array (`list`, `import`).
    pub fn each(schema_version: u32, docs: &'a [T]) -> Vec<Self> {
        docs.iter().map(|doc| Versioned { schema_version, doc }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_versioned_document_keeps_its_fields_after_the_version() {
        #[derive(Serialize)]
        struct Doc {
            b: u32,
            a: &'static str,
        }
        let text = serde_json::to_string(&Versioned::new(3, &Doc { b: 1, a: "x" })).unwrap();
        assert_eq!(text, r#"{"schema_version":3,"b":1,"a":"x"}"#);
        let list = serde_json::to_string(&Versioned::each(1, &[Doc { b: 2, a: "y" }])).unwrap();
        assert_eq!(list, r#"[{"schema_version":1,"b":2,"a":"y"}]"#);
    }
}
