//! Typed result records of every experiment, their enums and the
//! statistics behind them: what the measuring code emits, the store saves,
//! and audit evidence and reports read back.
//!
//! * [`audit`]: the settings audit's findings ([`audit::Finding`]);
//! * [`bw`]: one bandwidth figure ([`bw::BwResult`]) and the noise rule;
//! * [`counters`]: event counts recorded with a result (`--counters`);
//! * [`disturbance`]: samples a figure lost to other work, and when
//!   that makes it unstable;
//! * [`exec`]: a program under one placement policy
//!   ([`exec::PolicyResult`]) and its repetitions;
//! * [`hidden`]: the hidden-NUMA rule (bench measures by it, analysis
//!   judges stored runs by it);
//! * [`lat`]: latency records by mode and their summaries;
//! * [`pages`]: the page kind asked for a buffer (and `--pages`);
//! * [`placement`]: the one placement shape every result carries;
//! * [`scope`]: where a package-scope figure was measured (which
//!   package's CPUs, whose memory, which nodes, which policy) and the note
//!   `run` stores for a package-scope step that measured nothing;
//! * [`stats`]: summaries, percentiles, change and verdict;
//! * [`context`]: the machine, settings and topology a run was measured
//!   under;
//! * [`profile`]: the workload profiles the audit judges by and studies
//!   recommend for;
//! * [`run`]: a stored run read back ([`run::LoadedRun`]), its summary
//!   and its records in order;
//! * [`time`]: RFC 3339 timestamps;
//! * [`upgrade`]: stored results of any age read into today's records.
//!
//! A [`Record`] is what an experiment reports as soon as it has a result
//! and what the store keeps; [`Record::kind`] names it in the store and
//! [`Record::to_json`] is the stored JSON.

pub mod audit;
pub mod bw;
pub mod context;
pub mod counters;
pub mod disturbance;
pub mod exec;
pub mod gpu;
pub mod hidden;
pub mod hist;
pub mod lat;
pub mod pages;
pub mod placement;
pub mod power;
pub mod profile;
pub mod run;
pub mod runstats;
pub mod scope;
pub mod stats;
pub mod time;
pub mod upgrade;

use serde::Serialize;
use serde_json::Value;

use placement::Placement;

/// Version of the JSON documents `bw --json` and `lat --json` print, and
/// of the records inside them. 1 was the first version (no field);
/// 2 gives bandwidth results the `placement: {status, check}` object of
/// latency results and says `interrupted` where `lat` said `stopped`.
pub const SCHEMA_VERSION: u32 = 2;

/// A finished result, as an experiment reports it and the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Bw(Box<bw::BwResult>),
    Lat(Box<lat::Lat>),
    LatSummary(Box<lat::LatSummary>),
    /// A policy of `exec`.
    Exec(Box<exec::PolicyResult>),
    /// A finding of the settings audit.
    Finding(Box<audit::Finding>),
    /// A host<->GPU copy point of `numaprobe gpu`.
    Gpu(Box<gpu::GpuCopy>),
    /// A package-scope step of `run` that measured nothing, and why.
    Step(Box<scope::StepNote>),
    /// A result of a kind this version does not know (written by a newer
    /// numaprobe), or a stored payload that is no result of its kind: kept
    /// as stored, so that export and import pass it on unchanged.
    Unknown(Unknown),
}

/// A result this version cannot read, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Unknown {
    /// The kind it was stored under.
    pub kind: String,
    /// Its JSON text.
    pub json: String,
}

impl Record {
    /// The kind the store files it under: `bw`, `lat`, `lat-summary`,
    /// `exec`, `audit`, `gpu`, `step` (or the stored kind of an unknown
    /// result).
    pub fn kind(&self) -> &str {
        match self {
            Record::Bw(_) => "bw",
            Record::Lat(_) => "lat",
            Record::LatSummary(_) => "lat-summary",
            Record::Exec(_) => "exec",
            Record::Finding(_) => "audit",
            Record::Gpu(_) => "gpu",
            Record::Step(_) => "step",
            Record::Unknown(u) => &u.kind,
        }
    }

    /// The mode it was measured in (`local`, `matrix`, `per-cpu`, ...),
    /// for kinds that have modes.
    pub fn mode(&self) -> Option<&'static str> {
        Some(match self {
            Record::Bw(b) => b.mode.name(),
            Record::Lat(l) => match l.as_ref() {
                lat::Lat::Chase(c) => c.mode.name(),
                lat::Lat::Loaded(p) => p.mode.name(),
                lat::Lat::C2c(c) => c.mode.name(),
            },
            Record::LatSummary(s) => match s.as_ref() {
                lat::LatSummary::PerCpu(x) => x.mode.name(),
                lat::LatSummary::Sweep(x) => x.mode.name(),
                lat::LatSummary::PerCpuSweep(x) => x.mode.name(),
                lat::LatSummary::Loaded(x) => x.mode.name(),
                lat::LatSummary::PrefetchCheck(x) => x.mode.name(),
            },
            _ => return None,
        })
    }

    /// Where its pages were, for results that checked a buffer's placement.
    pub fn placement(&self) -> Option<&Placement> {
        match self {
            Record::Bw(b) => Some(&b.placement),
            Record::Lat(l) => match l.as_ref() {
                lat::Lat::Chase(c) => Some(&c.placement),
                lat::Lat::Loaded(p) => Some(&p.placement),
                lat::Lat::C2c(_) => None,
            },
            _ => None,
        }
    }

    /// The noise of its figures as a robust CV, percent, when it has one.
    pub fn noise(&self) -> Option<f64> {
        match self {
            Record::Bw(b) => b.noise(),
            Record::Lat(l) => match l.as_ref() {
                lat::Lat::Chase(c) => c.noise(),
                lat::Lat::Loaded(p) => p.noise(),
                lat::Lat::C2c(c) => c.noise(),
            },
            Record::Exec(e) => e.stats.noise_pct.and_then(stats::measured),
            _ => None,
        }
    }

    /// The JSON the store keeps (keys in the order the store has always
    /// written them: sorted).
    pub fn to_json(&self) -> Value {
        fn json(v: &impl Serialize) -> Value {
            serde_json::to_value(v).unwrap_or(Value::Null)
        }
        match self {
            Record::Bw(r) => json(r),
            Record::Lat(r) => json(r),
            Record::LatSummary(r) => json(r),
            Record::Exec(r) => json(r),
            Record::Finding(r) => json(r),
            Record::Gpu(r) => json(r),
            Record::Step(r) => json(r),
            Record::Unknown(u) => serde_json::from_str(&u.json).unwrap_or(Value::Null),
        }
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

impl From<gpu::GpuCopy> for Record {
    fn from(r: gpu::GpuCopy) -> Self {
        Record::Gpu(Box::new(r))
    }
}

impl From<scope::StepNote> for Record {
    fn from(r: scope::StepNote) -> Self {
        Record::Step(Box::new(r))
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
