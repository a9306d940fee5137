//! Typed result records of every experiment, their enums and the
//! statistics behind them: what the measuring code emits, the store saves,
//! and audit evidence and reports read back.
//!
//! * [`audit`]: the settings audit's findings ([`audit::Finding`]);
//! * [`bw`]: one bandwidth figure ([`bw::BwResult`]) and the noise rule;
//! * [`counters`]: event counts recorded with a result (`--counters`);
//! * [`exec`]: a program under one placement policy
//!   ([`exec::PolicyResult`]) and its repetitions;
//! * [`lat`]: latency records by mode and their summaries;
//! * [`pages`]: the page kind asked for a buffer (and `--pages`);
//! * [`placement`]: the one placement shape every result carries;
//! * [`stats`]: summaries, percentiles, change and verdict;
//! * [`view`]: the reader of stored payloads, today's and the first
//!   version's (with the alias names it accepted), into the typed views
//!   every reader shares.
//!
//! A [`Record`] is what an experiment reports as soon as it has a result;
//! [`Record::kind`] names it in the store and [`Record::to_payload`] is the
//! stored JSON.

pub mod audit;
pub mod bw;
pub mod context;
pub mod counters;
pub mod exec;
pub mod hist;
pub mod lat;
pub mod pages;
pub mod placement;
pub mod runstats;
pub mod stats;
pub mod view;

use serde::Serialize;
use serde_json::Value;

pub use placement::{Placement, PlacementCheck, PlacementStatus};

/// Version of the JSON documents `bw --json` and `lat --json` print, and
/// of the records inside them. 1 was the first version (no field);
/// 2 gives bandwidth results the `placement: {status, check}` object of
/// latency results and says `interrupted` where `lat` said `stopped`.
pub const SCHEMA_VERSION: u32 = 2;

/// A finished result, as an experiment reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Bw(Box<bw::BwResult>),
    Lat(Box<lat::Lat>),
    LatSummary(Box<lat::LatSummary>),
    /// A policy of `exec`.
    Exec(Box<exec::PolicyResult>),
    /// A finding of the settings audit.
    Finding(Box<audit::Finding>),
}

impl Record {
    /// The kind the store files it under.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Bw(_) => "bw",
            Record::Lat(_) => "lat",
            Record::LatSummary(_) => "lat-summary",
            Record::Exec(_) => "exec",
            Record::Finding(_) => "audit",
        }
    }

    /// The stored JSON.
    pub fn to_payload(&self) -> Value {
        fn json(v: &impl Serialize) -> Value {
            serde_json::to_value(v).unwrap_or(Value::Null)
        }
        match self {
            Record::Bw(r) => json(r),
            Record::Lat(r) => json(r),
            Record::LatSummary(r) => json(r),
            Record::Exec(r) => json(r),
            Record::Finding(r) => json(r),
        }
    }
}

impl Record {
    /// The typed record of a stored payload of `kind`, today's shape or
    /// the first version's (see [`bw::upgrade_v1`]); an error for hand-made
    /// or partial payloads (read those with [`view`]).
    pub fn from_stored(kind: &str, payload: &Value) -> Result<Record, serde_json::Error> {
        use serde::de::Error;
        Ok(match kind {
            "bw" => {
                let mut v = payload.clone();
                bw::upgrade_v1(&mut v);
                Record::Bw(Box::new(serde_json::from_value(v)?))
            }
            "lat" => Record::Lat(Box::new(serde_json::from_value(payload.clone())?)),
            "lat-summary" => Record::LatSummary(Box::new(serde_json::from_value(payload.clone())?)),
            "exec" => Record::Exec(Box::new(serde_json::from_value(payload.clone())?)),
            "audit" => Record::Finding(Box::new(serde_json::from_value(payload.clone())?)),
            other => {
                return Err(serde_json::Error::custom(format!("no typed record of kind {other:?}")))
            }
        })
    }
}

impl From<exec::PolicyResult> for Record {
    fn from(r: exec::PolicyResult) -> Self {
        Record::Exec(Box::new(r))
    }
}

impl From<audit::Finding> for Record {
    fn from(r: audit::Finding) -> Self {
        Record::Finding(Box::new(r))
    }
}

impl From<bw::BwResult> for Record {
    fn from(r: bw::BwResult) -> Self {
        Record::Bw(Box::new(r))
    }
}

impl From<lat::LatResult> for Record {
    fn from(r: lat::LatResult) -> Self {
        Record::Lat(Box::new(lat::Lat::Chase(r)))
    }
}

impl From<lat::LoadedPoint> for Record {
    fn from(r: lat::LoadedPoint) -> Self {
        Record::Lat(Box::new(lat::Lat::Loaded(r)))
    }
}

impl From<lat::C2cResult> for Record {
    fn from(r: lat::C2cResult) -> Self {
        Record::Lat(Box::new(lat::Lat::C2c(r)))
    }
}

impl From<lat::LatSummary> for Record {
    fn from(r: lat::LatSummary) -> Self {
        Record::LatSummary(Box::new(r))
    }
}
