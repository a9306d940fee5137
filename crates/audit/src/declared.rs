//! Settings the user declares (`--set bios.numa=on`, `--set-file FILE`):
//! the BIOS switches and anything else Linux cannot see. They are recorded
//! in a run's configuration under `declared` and are part of its
//! fingerprint, so runs under two declared settings are never pooled as
//! repeats of one; a run that declares nothing keeps the configuration
//! document, and so the fingerprint, it had without this.
//!
//! Grammar: `KEY=VALUE`, split at the first `=`; both sides trimmed; the
//! key is lower-cased, non-empty and holds no whitespace or control
//! characters; the value is non-empty. One key given twice with different
//! values is an error; given twice alike, once. A file holds one
//! `KEY=VALUE` per line; blank lines and lines starting with `#` are
//! ignored, and a UTF-8 byte order mark at the start of a file is dropped
//! (a key never holds one). Any key is accepted: docs/store.md recommends
//! names for the common BIOS switches. One run declares at most
//! [`MAX_KEYS`] settings of at most [`MAX_BYTES`] bytes in all, each key
//! at most [`MAX_KEY_BYTES`] and each value at most [`MAX_VALUE_BYTES`]:
//! a declaration is a handful of BIOS switches, and every reader of the
//! run (compare, report, fleet) holds them all.

use std::collections::BTreeMap;

use results::context::Configuration;
use serde::{Deserialize, Serialize};

pub use results::context::declared_limits::{MAX_BYTES, MAX_KEYS, MAX_KEY_BYTES, MAX_VALUE_BYTES};

/// The UTF-8 byte order mark some editors put at the start of a file.
const BOM: char = '\u{feff}';

/// A bad declaration: each names what the user wrote.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclareError {
    #[error("{0:?}: expected KEY=VALUE (e.g. bios.numa=on)")]
    NoEquals(String),
    #[error("{0:?}: the key before '=' is empty")]
    EmptyKey(String),
    #[error("{0:?}: the value after '=' is empty")]
    EmptyValue(String),
    #[error("{0:?}: a key may hold no spaces, control or invisible characters")]
    BadKey(String),
    #[error("{key} is declared twice with different values ({first:?} and {second:?})")]
    Conflict { key: String, first: String, second: String },
    #[error("{what} (declared settings are a handful of switches)")]
    TooMuch { what: String },
}

impl DeclareError {
    /// The error without what the user wrote: for a file, whose content
    /// must never be echoed (`--set-file /etc/shadow` through sudo).
    pub fn without_text(&self) -> String {
        match self {
            DeclareError::NoEquals(_) => "expected KEY=VALUE (e.g. bios.numa=on)".into(),
            DeclareError::EmptyKey(_) => "the key before '=' is empty".into(),
            DeclareError::EmptyValue(_) => "the value after '=' is empty".into(),
            DeclareError::BadKey(_) => {
                "a key may hold no spaces, control or invisible characters".into()
            }
            DeclareError::Conflict { .. } => {
                "this key is declared twice with different values".into()
            }
            DeclareError::TooMuch { what } => what.clone(),
        }
    }
}

/// Parses one `KEY=VALUE`.
pub fn parse_assignment(s: &str) -> Result<(String, String), DeclareError> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(DeclareError::NoEquals(s.to_string()));
    };
    let (k, v) = (k.trim(), v.trim());
    if k.is_empty() {
        return Err(DeclareError::EmptyKey(s.to_string()));
    }
    if k.chars().any(|c| c.is_whitespace() || c.is_control() || invisible(c)) {
        return Err(DeclareError::BadKey(s.to_string()));
    }
    if v.is_empty() {
        return Err(DeclareError::EmptyValue(s.to_string()));
    }
    if k.len() > MAX_KEY_BYTES {
        return Err(DeclareError::TooMuch {
            what: format!("a key of {} bytes, above {MAX_KEY_BYTES}", k.len()),
        });
    }
    if v.len() > MAX_VALUE_BYTES {
        return Err(DeclareError::TooMuch {
            what: format!("a value of {} bytes, above {MAX_VALUE_BYTES}", v.len()),
        });
    }
    Ok((k.to_lowercase(), v.to_string()))
}

/// Characters that show as nothing (a byte order mark, zero-width
/// spaces and joiners, directional marks): two keys that look alike must
/// be one key.
fn invisible(c: char) -> bool {
    matches!(c, BOM | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{00ad}')
}

/// Declared settings, by key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Declared(BTreeMap<String, String>);

impl Declared {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Settings declared.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Bytes of keys and values, all together.
    pub fn bytes(&self) -> usize {
        self.0.iter().map(|(k, v)| k.len() + v.len()).sum()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Adds `key = value` (from [`parse_assignment`]); the same value
    /// again is fine, another one is a [`DeclareError::Conflict`].
    pub fn insert(&mut self, key: String, value: String) -> Result<(), DeclareError> {
        match self.0.get(&key) {
            Some(first) if *first != value => {
                Err(DeclareError::Conflict { key, first: first.clone(), second: value })
            }
            Some(_) => Ok(()),
            None => {
                if self.0.len() >= MAX_KEYS {
                    return Err(DeclareError::TooMuch {
                        what: format!("more than {MAX_KEYS} settings declared in all"),
                    });
                }
                let bytes: usize = self.bytes() + key.len() + value.len();
                if bytes > MAX_BYTES {
                    return Err(DeclareError::TooMuch {
                        what: format!("more than {MAX_BYTES} bytes of settings declared in all"),
                    });
                }
                self.0.insert(key, value);
                Ok(())
            }
        }
    }

    /// Adds the lines of a settings file; an error carries its 1-based
    /// line number.
    pub fn add_text(&mut self, text: &str) -> Result<(), (usize, DeclareError)> {
        let text = text.strip_prefix(BOM).unwrap_or(text);
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let (k, v) = parse_assignment(l).map_err(|e| (i + 1, e))?;
            self.insert(k, v).map_err(|e| (i + 1, e))?;
        }
        Ok(())
    }

    /// Records the settings in a configuration document (`declared`) and
    /// seals its fingerprint again over the settings, the declared ones
    /// included (the `budget` stays outside it). Nothing declared: the
    /// document is left exactly as it is.
    pub fn apply(&self, config: &mut Configuration) {
        if self.is_empty() {
            return;
        }
        config.declared = Some(self.0.clone());
        config.fingerprint = Some(config.settings_hash());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_assignment(" BIOS.NUMA = on ").unwrap(),
            ("bios.numa".into(), "on".into())
        );
        assert_eq!(parse_assignment("note=a=b").unwrap(), ("note".into(), "a=b".into()));
        let e = |s: &str| parse_assignment(s).unwrap_err().to_string();
        assert_eq!(e("bios.numa"), "\"bios.numa\": expected KEY=VALUE (e.g. bios.numa=on)");
        assert_eq!(e("=on"), "\"=on\": the key before '=' is empty");
        assert_eq!(e(" =on"), "\" =on\": the key before '=' is empty");
        assert_eq!(e("bios.numa="), "\"bios.numa=\": the value after '=' is empty");
        assert!(e("bios numa=on").contains("no spaces"));
    }

    /// Guards issue 37 cause 5: a BOM became part of the first key
    /// (`\u{feff}bios.a`), a second `declared.bios.a` that never pools.
    #[test]
    fn a_byte_order_mark_is_dropped_and_never_part_of_a_key() {
        let mut d = Declared::default();
        d.add_text("\u{feff}bios.a=1\nbios.b=2\n").unwrap();
        assert_eq!(d.iter().collect::<Vec<_>>(), [("bios.a", "1"), ("bios.b", "2")]);
        let e = parse_assignment("bios\u{feff}.a=1").unwrap_err();
        assert!(matches!(e, DeclareError::BadKey(_)), "{e}");
        assert!(parse_assignment("\u{200b}bios.a=1").is_err());
    }

    /// Guards issue 37 cause 5: ten files of 70k keys were accepted.
    #[test]
    fn the_declared_settings_are_capped_in_count_and_bytes() {
        let mut d = Declared::default();
        let text: String = (0..MAX_KEYS).map(|i| format!("k{i}=v\n")).collect();
        d.add_text(&text).unwrap();
        let (line, e) = d.add_text("one.more=v\n").unwrap_err();
        assert_eq!(line, 1);
        assert!(e.to_string().contains(&format!("more than {MAX_KEYS} settings")), "{e}");
        // The same key again is not a new one.
        d.add_text("k1=v\n").unwrap();

        let mut d = Declared::default();
        let big = "x".repeat(MAX_VALUE_BYTES);
        let n = MAX_BYTES / (MAX_VALUE_BYTES + 8) + 1;
        let e = (0..n).find_map(|i| d.insert(format!("key{i:04}"), big.clone()).err()).unwrap();
        assert!(e.to_string().contains(&format!("more than {MAX_BYTES} bytes")), "{e}");
        assert!(d.bytes() <= MAX_BYTES);

        let long = format!("{}=1", "k".repeat(MAX_KEY_BYTES + 1));
        assert!(matches!(parse_assignment(&long), Err(DeclareError::TooMuch { .. })));
        let long = format!("k={}", "v".repeat(MAX_VALUE_BYTES + 1));
        assert!(matches!(parse_assignment(&long), Err(DeclareError::TooMuch { .. })));
    }

    #[test]
    fn errors_without_text_echo_nothing_the_user_wrote() {
        for bad in ["root:*:20228:0:99999:7:::", "=secret", "secret=", "sec ret=1"] {
            let e = parse_assignment(bad).unwrap_err();
            assert!(!e.without_text().contains("secret"), "{e:?}");
            assert!(!e.without_text().contains("root"), "{e:?}");
        }
    }

    #[test]
    fn a_key_twice_with_different_values_is_refused() {
        let mut d = Declared::default();
        d.insert("bios.snc".into(), "2".into()).unwrap();
        d.insert("bios.snc".into(), "2".into()).unwrap();
        let e = d.insert("bios.snc".into(), "off".into()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bios.snc is declared twice with different values (\"2\" and \"off\")"
        );
        assert_eq!(d.get("bios.snc"), Some("2"));
    }

    #[test]
    fn files_skip_comments_and_name_the_bad_line() {
        let mut d = Declared::default();
        d.add_text("# Milan study\n\nbios.smt = on\n  # boost\nbios.boost=off\n").unwrap();
        assert_eq!(d.iter().collect::<Vec<_>>(), [("bios.boost", "off"), ("bios.smt", "on")]);
        let (line, e) = d.add_text("bios.cstates=on\nbios.smt=off\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(matches!(e, DeclareError::Conflict { .. }));
        let (line, _) = Declared::default().add_text("a=1\n\nnonsense\n").unwrap_err();
        assert_eq!(line, 3);
    }
}

#[cfg(test)]
mod fingerprint_tests {
    use super::*;
    use crate::{fingerprint, Read, Settings};
    use topo::{SysRoot, Topology};

    /// A hand-made 2-socket tree (topo's test data) with no firmware or
    /// power state beyond the OS settings.
    fn config() -> Configuration {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../topo/tests/data/two-socket-numa-off");
        let root = SysRoot::new(dir).unwrap();
        let topo = Topology::discover(&root).unwrap();
        fingerprint::config_with_memory(&topo, &Settings::read(&root), &Read::Absent)
    }

    /// The fingerprint numaprobe gave this tree before declared settings
    /// (main at 7f8e394): a run that declares nothing keeps it.
    const STORED: &str = "8a1e4569b654b963";

    #[test]
    fn declaring_nothing_keeps_the_stored_fingerprint() {
        let mut c = config();
        assert_eq!(c.fingerprint.as_deref(), Some(STORED), "{}", c.to_json());
        let before = c.clone();
        Declared::default().apply(&mut c);
        assert_eq!(c, before, "nothing declared: the document is untouched");
        assert!(c.to_json().get("declared").is_none());
    }

    #[test]
    fn declared_settings_enter_the_fingerprint_and_the_budget_stays_out() {
        let declare = |pairs: &[(&str, &str)], budget: &str| {
            let mut c = config();
            c.budget = Some(budget.into());
            let mut d = Declared::default();
            for (k, v) in pairs {
                d.insert(k.to_string(), v.to_string()).unwrap();
            }
            d.apply(&mut c);
            c
        };
        let on = declare(&[("bios.numa", "on")], "quick");
        let off = declare(&[("bios.numa", "off")], "quick");
        assert_eq!(on.to_json()["declared"]["bios.numa"], "on");
        assert_eq!(on.budget.as_deref(), Some("quick"));
        assert_ne!(on.fingerprint, off.fingerprint);
        assert_ne!(on.fingerprint.as_deref(), Some(STORED));
        // Another budget: the same fingerprint.
        let other = declare(&[("bios.numa", "on")], "thorough");
        assert_eq!(other.fingerprint, on.fingerprint);
        // Read back from its JSON (as the store gives it), the same hash.
        let stored: Configuration = serde_json::from_value(on.to_json()).unwrap();
        assert_eq!(stored.settings_hash(), on.fingerprint.clone().unwrap());
    }
}
