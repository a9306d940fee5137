//! What discovery warns about: a file it could not use, or a firmware
//! inconsistency (part of the topology document, `warnings`).

use serde::{Deserialize, Serialize};

/// One thing discovery warns about. A file it could not read or parse has
/// its `path` and what was `assumed` instead, and discovery went on
/// without it; a firmware inconsistency has neither.
///
/// JSON: `{"path": ".../cpu0/online" | null, "problem": "...", "assumed": "..." | null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    pub path: Option<String>,
    pub problem: String,
    pub assumed: Option<String>,
}

impl Warning {
    /// A warning about no file in particular (firmware tables, counts).
    pub fn general(problem: impl Into<String>) -> Self {
        Warning { path: None, problem: problem.into(), assumed: None }
    }

    /// A file that could not be used, and what was assumed instead.
    pub fn file(
        path: impl Into<String>,
        problem: impl Into<String>,
        assumed: impl Into<String>,
    ) -> Self {
        Warning { path: Some(path.into()), problem: problem.into(), assumed: Some(assumed.into()) }
    }

    /// Whether the warning's one-line text (as printed) contains `pat`.
    pub fn contains(&self, pat: &str) -> bool {
        self.to_string().contains(pat)
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.problem)?;
        if let Some(a) = &self.assumed {
            write!(f, "; assumed {a}")?;
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            Text(String),
            Full {
                #[serde(default)]
                path: Option<String>,
                problem: String,
                #[serde(default)]
                assumed: Option<String>,
            },
        }
        Ok(match Any::deserialize(d)? {
            Any::Text(problem) => Warning::general(problem),
            Any::Full { path, problem, assumed } => Warning { path, problem, assumed },
        })
    }
}
