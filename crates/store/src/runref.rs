//! How users name a run on the command line: `latest`, `latest~N`, an id,
//! a UUID, or a label; and a group of runs: `label:TEXT` (every run with
//! that label) or `config:HASH` (every run of one configuration
//! fingerprint, a prefix of at least 4 characters is enough).

use std::fmt;
use std::str::FromStr;

use crate::error::StoreError;

/// A reference to a run, resolved by [`crate::Store::resolve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    /// `latest` (0), or `latest~N`: the N-th run before the most recent one
    /// (by start time, then id).
    Latest(u32),
    /// A numeric run id in this database.
    Id(i64),
    /// A run's UUID (as in exports); stable across databases.
    Uuid(String),
    /// A run's label; must match exactly one run.
    Label(String),
    /// `label:TEXT`: every run with this label (a group).
    LabelGroup(String),
    /// `config:HASH`: every run whose configuration fingerprint starts
    /// with HASH (a group).
    Config(String),
}

impl RunRef {
    /// True for the forms that select a group of runs.
    pub fn is_group(&self) -> bool {
        matches!(self, RunRef::LabelGroup(_) | RunRef::Config(_))
    }
}

impl FromStr for RunRef {
    type Err = StoreError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if t.is_empty() {
            return Err(StoreError::BadRunRef(s.to_string()));
        }
        if let Some(l) = t.strip_prefix("label:") {
            if l.is_empty() {
                return Err(StoreError::BadRunRef(s.to_string()));
            }
            return Ok(RunRef::LabelGroup(l.to_string()));
        }
        if let Some(h) = t.strip_prefix("config:") {
            if h.len() < 4 || !h.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return Err(StoreError::BadRunRef(s.to_string()));
            }
            return Ok(RunRef::Config(h.to_ascii_lowercase()));
        }
        if t == "latest" || t == "last" {
            return Ok(RunRef::Latest(0));
        }
        if let Some(n) = t.strip_prefix("latest~").or_else(|| t.strip_prefix("last~")) {
            return n.parse().map(RunRef::Latest).map_err(|_| StoreError::BadRunRef(s.to_string()));
        }
        if t.bytes().all(|b| b.is_ascii_digit()) {
            return t.parse().map(RunRef::Id).map_err(|_| StoreError::BadRunRef(s.to_string()));
        }
        if uuid::Uuid::parse_str(t).is_ok() && t.len() == 36 {
            return Ok(RunRef::Uuid(t.to_ascii_lowercase()));
        }
        Ok(RunRef::Label(s.to_string()))
    }
}

impl fmt::Display for RunRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunRef::Latest(0) => f.write_str("latest"),
            RunRef::Latest(n) => write!(f, "latest~{n}"),
            RunRef::Id(id) => write!(f, "{id}"),
            RunRef::Uuid(u) => f.write_str(u),
            RunRef::Label(l) => f.write_str(l),
            RunRef::LabelGroup(l) => write!(f, "label:{l}"),
            RunRef::Config(h) => write!(f, "config:{h}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_form() {
        assert_eq!("latest".parse::<RunRef>().unwrap(), RunRef::Latest(0));
        assert_eq!("latest~2".parse::<RunRef>().unwrap(), RunRef::Latest(2));
        assert_eq!("17".parse::<RunRef>().unwrap(), RunRef::Id(17));
        assert_eq!(
            "6F9619FF-8B86-D011-B42D-00C04FC964FF".parse::<RunRef>().unwrap(),
            RunRef::Uuid("6f9619ff-8b86-d011-b42d-00c04fc964ff".into())
        );
        assert_eq!("SNC2 on".parse::<RunRef>().unwrap(), RunRef::Label("SNC2 on".into()));
        let g = "label:SNC off".parse::<RunRef>().unwrap();
        assert_eq!(g, RunRef::LabelGroup("SNC off".into()));
        assert!(g.is_group());
        assert_eq!(g.to_string(), "label:SNC off");
        assert_eq!("config:3F2A9c".parse::<RunRef>().unwrap(), RunRef::Config("3f2a9c".into()));
        assert!(!RunRef::Label("x".into()).is_group());
    }

    #[test]
    fn rejects_bad_forms() {
        assert!("".parse::<RunRef>().is_err());
        assert!("latest~x".parse::<RunRef>().is_err());
        assert!("99999999999999999999999".parse::<RunRef>().is_err());
        assert!("label:".parse::<RunRef>().is_err());
        assert!("config:ab".parse::<RunRef>().is_err());
        assert!("config:ab/cd".parse::<RunRef>().is_err());
    }
}
