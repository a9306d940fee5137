//! `Read<T>`: a value read from the machine, or why there is none. "Could
//! not read" (permissions, malformed file) is kept apart from "absent" (this
//! kernel, architecture or capture has no such file).

use serde::{Deserialize, Serialize};
use topo::SysRoot;

/// The outcome of reading one setting.
///
/// JSON: `{"status":"value","value":...}`, `{"status":"absent"}` or
/// `{"status":"unreadable","value":"<reason naming the file>"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "value", rename_all = "lowercase")]
pub enum Read<T> {
    Value(T),
    /// The file does not exist under this root.
    Absent,
    /// The file exists but could not be read or parsed; the reason names it.
    Unreadable(String),
}

impl<T> Read<T> {
    pub fn value(&self) -> Option<&T> {
        match self {
            Read::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn is_value(&self) -> bool {
        matches!(self, Read::Value(_))
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Read<U> {
        match self {
            Read::Value(v) => Read::Value(f(v)),
            Read::Absent => Read::Absent,
            Read::Unreadable(r) => Read::Unreadable(r),
        }
    }

    pub fn as_ref(&self) -> Read<&T> {
        match self {
            Read::Value(v) => Read::Value(v),
            Read::Absent => Read::Absent,
            Read::Unreadable(r) => Read::Unreadable(r.clone()),
        }
    }

    /// A short description for tables: the value through `show`, "absent",
    /// or "could not read (<reason>)".
    pub fn describe(&self, show: impl FnOnce(&T) -> String) -> String {
        match self {
            Read::Value(v) => show(v),
            Read::Absent => "absent".to_string(),
            Read::Unreadable(r) => format!("could not read ({r})"),
        }
    }
}

/// Reads `rel` under `root` and parses its trimmed text with `parse`
/// (which returns a message on failure).
pub fn read_with<T>(
    root: &SysRoot,
    rel: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Read<T> {
    match root.read_optional(rel) {
        Ok(None) => Read::Absent,
        Ok(Some(s)) => match parse(s.trim()) {
            Ok(v) => Read::Value(v),
            Err(msg) => Read::Unreadable(format!("{}: {msg}", root.path(rel).display())),
        },
        Err(e) => Read::Unreadable(e.to_string()),
    }
}

/// Reads a trimmed string that says something: an empty file is
/// unreadable (sysfs never writes an empty governor, driver or mode).
pub fn read_string(root: &SysRoot, rel: &str) -> Read<String> {
    read_with(root, rel, |s| {
        if s.is_empty() {
            Err("empty, where a value belongs".to_string())
        } else {
            Ok(s.to_string())
        }
    })
}

/// Reads a trimmed string that may be empty (DMI strings firmware left
/// blank, a kernel command line).
pub fn read_text(root: &SysRoot, rel: &str) -> Read<String> {
    read_with(root, rel, |s| Ok(s.to_string()))
}

/// Reads one unsigned number.
pub fn read_u64(root: &SysRoot, rel: &str) -> Read<u64> {
    read_with(root, rel, |s| s.parse().map_err(|_| format!("expected a number, found '{s}'")))
}

/// The bracketed choice of a sysfs selector such as `always [madvise] never`.
pub fn bracketed(s: &str) -> Result<String, String> {
    let start = s.find('[').ok_or_else(|| format!("no [selected] value in '{s}'"))?;
    let end = s[start..].find(']').ok_or_else(|| format!("unclosed '[' in '{s}'"))? + start;
    Ok(s[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_picks_the_selected_value() {
        assert_eq!(bracketed("always [madvise] never").unwrap(), "madvise");
        assert_eq!(bracketed("[always] defer").unwrap(), "always");
        assert!(bracketed("always madvise").is_err());
        assert!(bracketed("always [madvise").is_err());
    }

    #[test]
    fn read_distinguishes_absent_unreadable_and_value() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n"), "12\n").unwrap();
        std::fs::write(dir.path().join("bad"), "twelve\n").unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        assert_eq!(read_u64(&root, "n"), Read::Value(12));
        assert_eq!(read_u64(&root, "missing"), Read::Absent);
        match read_u64(&root, "bad") {
            Read::Unreadable(r) => assert!(r.contains("bad") && r.contains("twelve"), "{r}"),
            other => panic!("expected unreadable, got {other:?}"),
        }
        let json = serde_json::to_string(&Read::<u64>::Absent).unwrap();
        assert_eq!(json, r#"{"status":"absent"}"#);
        let json = serde_json::to_string(&Read::Value(3u64)).unwrap();
        assert_eq!(json, r#"{"status":"value","value":3}"#);
    }
}
