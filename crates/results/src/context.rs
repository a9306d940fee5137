//! The context of a run: the machine it ran on ([`Machine`]), the settings
//! it ran under ([`Configuration`]) and its topology ([`RunTopology`]), as
//! `numaprobe` discovers and the settings audit writes them, the store
//! keeps them and the reports, the fleet and the studies read them.
//!
//! Each is a typed document: the fields numaprobe writes (and the names
//! older or hand-made documents used) are typed, and everything else stays
//! in [`Extra`] exactly as stored, as does a known field whose stored value
//! has another shape (a `null` where a text is expected, a string where a
//! number is). Reading a document and writing it back therefore gives the
//! same JSON, key for key: a field a newer numaprobe adds survives an
//! export and import through this version, and the configuration's hash
//! (its `fingerprint`, which groups runs of identical settings) is the
//! same for the same document.
//!
//! The documents carry no version field of their own: a field added to the
//! configuration would change the hash of every configuration, so fields
//! are only ever added (new names), never changed, and the store's schema
//! and export versions cover the documents' shapes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use topo::Topology;

/// The fields of a document this version does not type, as stored.
pub type Extra = BTreeMap<String, Value>;

/// A setting or fact as it was read: its value, absent on the machine
/// (`null`: no cpufreq, no SMBIOS, no host name), or present but not
/// readable (`"unreadable"`: permission denied).
#[derive(Debug, Clone, PartialEq)]
pub enum Reading<T> {
    Value(T),
    Absent,
    Unreadable,
}

impl<T> Reading<T> {
    /// The value, when one was read.
    pub fn value(&self) -> Option<&T> {
        match self {
            Reading::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl<T: fmt::Display> Reading<T> {
    /// The value as text, `unreadable` when it could not be read, `None`
    /// when absent.
    pub fn text(&self) -> Option<String> {
        match self {
            Reading::Value(v) => Some(v.to_string()),
            Reading::Absent => None,
            Reading::Unreadable => Some(UNREADABLE.to_string()),
        }
    }
}

/// What a setting that could not be read is written as.
pub const UNREADABLE: &str = "unreadable";

impl<T: Serialize> Serialize for Reading<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Reading::Value(v) => v.serialize(s),
            Reading::Absent => s.serialize_none(),
            Reading::Unreadable => s.serialize_str(UNREADABLE),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Reading<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Null => Ok(Reading::Absent),
            Value::String(s) if s == UNREADABLE => Ok(Reading::Unreadable),
            v => serde_json::from_value(v).map(Reading::Value).map_err(D::Error::custom),
        }
    }
}

/// A setting that is a number or a text (`memory_speed_mts`: one speed,
/// or `mixed (4400, 4800)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => b.fmt(f),
            Scalar::Int(i) => i.fmt(f),
            // as JSON writes it (`3200.0`), the text settings are compared by
            Scalar::Float(x) => match serde_json::Number::from_f64(*x) {
                Some(n) => n.fmt(f),
                None => x.fmt(f),
            },
            Scalar::Text(s) => f.write_str(s),
        }
    }
}

/// How many of something a machine document gives: a number, or (in
/// hand-made documents) the list of their ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Count {
    Number(u64),
    Ids(Vec<u64>),
}

impl Count {
    pub fn get(&self) -> u64 {
        match self {
            Count::Number(n) => *n,
            Count::Ids(v) => v.len() as u64,
        }
    }
}

impl fmt::Display for Count {
    /// The number, or the ids joined with commas.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Count::Number(n) => n.fmt(f),
            Count::Ids(v) => {
                f.write_str(&v.iter().map(u64::to_string).collect::<Vec<_>>().join(","))
            }
        }
    }
}

/// A JSON scalar as text (an array of scalars joined with commas), for
/// readers that list every field of a document or a stored payload.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            Some(a.iter().filter_map(scalar_text).collect::<Vec<_>>().join(","))
        }
        _ => None,
    }
}

/// A known field of `extra`, typed, when its value has the type's shape
/// and writes back unchanged; it is then taken out of `extra`.
fn take<T: Serialize + DeserializeOwned>(extra: &mut Extra, key: &str) -> Option<T> {
    let v = extra.get(key)?;
    let typed: T = serde_json::from_value(v.clone()).ok()?;
    if serde_json::to_value(&typed).ok().as_ref() != Some(v) {
        return None;
    }
    extra.remove(key);
    Some(typed)
}

/// A JSON object (or `null`, an empty document) as a map.
fn object<'de, D: Deserializer<'de>>(d: D) -> Result<Extra, D::Error> {
    match Value::deserialize(d)? {
        Value::Object(m) => Ok(m.into_iter().collect()),
        Value::Null => Ok(Extra::new()),
        other => Err(D::Error::custom(format!("a document must be a JSON object, not {other}"))),
    }
}

/// A document type: typed optional fields (absent when the document lacks
/// them) and the rest in `extra`; (de)serialised as one JSON object with
/// its keys sorted, the way the store has always written them.
macro_rules! document {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: Option<$ty>, )*
            /// Fields this version does not type, and typed ones whose
            /// stored value has another shape, exactly as stored.
            pub extra: Extra,
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::Error as _;
                let mut map = self.extra.clone();
                $(
                    if let Some(v) = &self.$field {
                        let v = serde_json::to_value(v).map_err(S::Error::custom)?;
                        map.insert(stringify!($field).to_string(), v);
                    }
                )*
                map.serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let mut extra = object(d)?;
                Ok($name { $( $field: take(&mut extra, stringify!($field)), )* extra })
            }
        }
    };
}

document! {
    /// The machine a run was measured on: what identifies it (written by
    /// `audit::fingerprint::machine`). The store groups runs by
    /// `fingerprint`; a document without one is grouped by its hash.
    pub struct Machine {
        /// The machine's identity (else its host name), CPU model,
        /// packages, physical cores and installed memory, hashed: unchanged
        /// by BIOS and OS settings.
        fingerprint: String,
        /// What tells this machine from another whatever it is called: a
        /// keyed hash of the DMI product UUID, else of `/etc/machine-id`,
        /// else of the host name (16 hex digits).
        machine_id: String,
        /// Where `machine_id` came from: `dmi_product_uuid`, `machine_id`,
        /// `hostname` or `NUMAPROBE_MACHINE_ID`.
        machine_id_source: String,
        /// One line, e.g. `db1: 2x Xeon Gold 6430, 64 cores, 512 GiB`.
        description: String,
        /// Installed memory in the fingerprint (SMBIOS, else `MemTotal`
        /// rounded), GiB.
        installed_gib: u64,
        hostname: Reading<String>,
        cpu_model: Reading<String>,
        cpu_vendor: String,
        arch: Reading<String>,
        packages: Count,
        /// Physical cores.
        cores: u64,
        /// Logical CPUs.
        cpus: Count,
        nodes: Count,
        mem_total_bytes: u64,
        /// The DIMMs in SMBIOS (`null` where there is no table, as in most
        /// VMs).
        dimms: Reading<Dimms>,
        /// Older and hand-made documents: board and BIOS (current documents
        /// keep them in the configuration, where a BIOS update shows as a
        /// changed setting).
        bios: Bios,
        system_model: String,
        product_name: String,
        bios_version: String,
        /// Older and hand-made documents: the memory's speed, MT/s.
        memory_speed_mts: Scalar,
        memory: MemorySpeed,
    }
}

impl Machine {
    /// The host name, when recorded.
    pub fn hostname(&self) -> Option<&str> {
        self.hostname.as_ref().and_then(Reading::value).map(String::as_str)
    }

    /// The CPU model, when recorded.
    pub fn cpu_model(&self) -> Option<&str> {
        self.cpu_model.as_ref().and_then(Reading::value).map(String::as_str)
    }

    /// The DIMM summary, when SMBIOS was read.
    pub fn dimm_summary(&self) -> Option<&DimmSummary> {
        match self.dimms.as_ref()?.value()? {
            Dimms::Summary(s) => Some(s),
            Dimms::Text(_) => None,
        }
    }
}

/// The DIMMs of a machine: the summary numaprobe writes, or a line of
/// text (hand-made documents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Dimms {
    Text(String),
    Summary(DimmSummary),
}

document! {
    /// The SMBIOS memory records summed up.
    pub struct DimmSummary {
        /// Populated slots, and all slots.
        modules: u64,
        slots: u64,
        /// Theoretical peak per socket, GB/s (`null` where unknown).
        peak_gbs_per_socket: Vec<Option<f64>>,
        /// `DDR5`, or `DDR4/DDR5` for a mixed population.
        memory_type: String,
        /// The slowest configured speed, MT/s.
        configured_speed_mts: u64,
        /// Older documents: the rated speed, MT/s.
        speed_mts: u64,
        channels: u64,
        channels_populated: u64,
        module_sizes_bytes: Vec<u64>,
        /// Why the table could not be read.
        unreadable: String,
    }
}

/// Board and BIOS in older and hand-made machine documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bios {
    Text(String),
    Fields(Firmware),
}

document! {
    /// Board, BIOS and microcode, as an older machine document held them.
    pub struct Firmware {
        sys_vendor: String,
        product_name: String,
        bios_vendor: String,
        bios_version: String,
        bios_date: String,
        microcode: String,
    }
}

document! {
    /// The memory's speed in older machine documents.
    pub struct MemorySpeed {
        speed_mts: Scalar,
        configured_speed_mts: Scalar,
    }
}

document! {
    /// The settings a run was measured under (written by
    /// `audit::fingerprint::config_with_memory`): those that change what
    /// memory does, the firmware and board, and the DIMM population. Runs
    /// of one machine are told apart by `fingerprint`, the hash of the
    /// settings alone; `budget` (how the run was asked for) is added after
    /// it and stays outside it.
    pub struct Configuration {
        fingerprint: String,
        /// `quick` or `default`: how long `run` measured.
        budget: String,
        /// `topo::NumaModeKind` (`nodes-per-package`, ...), and the
        /// setting's name where known (`SNC2`, `NPS4`).
        numa_mode: Reading<String>,
        numa_mode_label: Reading<String>,
        nodes: u64,
        nodes_with_cpus: u64,
        online_cpus: u64,
        kernel: Reading<String>,
        /// The OS distribution (`os-release`), where one was read.
        os: Reading<String>,
        /// The whole kernel command line, and its NUMA options.
        cmdline: Reading<String>,
        cmdline_options: BTreeMap<String, String>,
        thp_enabled: Reading<String>,
        thp_defrag: Reading<String>,
        /// Older and hand-made documents' name for `thp_enabled`.
        thp: Reading<String>,
        numa_balancing: Reading<u64>,
        zone_reclaim_mode: Reading<u64>,
        /// One value for every CPU, or `mixed (a, b)`.
        cpufreq_driver: Reading<String>,
        governor: Reading<String>,
        epp: Reading<String>,
        boost: Reading<bool>,
        /// `smt/control`: `on`, `off`, `forceoff`, `notsupported`, ...
        smt: Reading<String>,
        iommu: Reading<String>,
        /// `none`, or `cpus 0-3, mems 0 (/slurm/job42)`.
        cgroup_restriction: Reading<String>,
        bios_vendor: Reading<String>,
        bios_version: Reading<String>,
        bios_date: Reading<String>,
        sys_vendor: Reading<String>,
        product_name: Reading<String>,
        board_vendor: Reading<String>,
        board_name: Reading<String>,
        board_version: Reading<String>,
        microcode: Reading<String>,
        /// Configured DIMM speed (one value, or `mixed (...)`), MT/s.
        memory_speed_mts: Reading<Scalar>,
        /// `8 of 16 slots: 8x 32 GiB DDR5`.
        dimm_population: Reading<String>,
        /// The firmware and power state (`audit::firmware_state`), each
        /// written only where it was read: the firmware's ACPI SRAT
        /// ([`AcpiSrat`]: its domains, `none`, or an older run's sentence)
        /// and SLIT (`10 21 / 21 10`, `none`).
        acpi_srat: AcpiSrat,
        acpi_slit: String,
        /// The cpuidle driver and states, `intel_idle: POLL, C1, C6 (off)`.
        cpuidle: String,
        /// The P-state driver's mode, `amd_pstate active`.
        pstate: String,
        /// Energy performance bias, one value or `mixed (...)`.
        epb: String,
        /// `2 memory controllers, 16 DIMMs in 16 channels` (EDAC).
        edac_memory: String,
        /// The settings the user declared (`--set bios.numa=on`), by key
        /// (`audit::declared`); written only when something was declared.
        declared: BTreeMap<String, String>,
    }
}

/// The bounds of a run's declared settings (`Configuration::declared`):
/// what `--set`/`--set-file` accept (`audit::declared`) and what an import
/// accepts (`store`), one definition for both.
pub mod declared_limits {
    /// The most settings one run declares.
    pub const MAX_KEYS: usize = 1024;
    /// The most bytes of keys and values one run declares, all together.
    pub const MAX_BYTES: usize = 256 << 10;
    /// The longest key.
    pub const MAX_KEY_BYTES: usize = 128;
    /// The longest value.
    pub const MAX_VALUE_BYTES: usize = 1024;
}

impl Configuration {
    /// The hash of the settings: of the document without `fingerprint`
    /// and `budget`, keys sorted (the text the store has always hashed).
    pub fn settings_hash(&self) -> String {
        let mut doc = self.clone();
        doc.fingerprint = None;
        doc.budget = None;
        let text = doc.settings_json().to_string();
        format!("{:016x}", topo::hash::fnv1a64(text.as_bytes()))
    }

    /// The document as the JSON object it is stored as, for readers that
    /// list every setting.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The `topo --json` document of a run: the typed [`Topology`] when the
/// document is one, and what it holds beyond that (fields a newer
/// numaprobe added, or a whole hand-made document that is not a topology)
/// kept as stored, so that it writes back unchanged.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunTopology {
    topology: Option<Box<Topology>>,
    /// Top-level fields the typed topology does not reproduce, as stored.
    extra: Extra,
    /// Fields the typed topology writes that the stored document lacked
    /// (added to the topology since it was written): not written back.
    not_stored: BTreeSet<String>,
}

impl RunTopology {
    /// The document of a discovered topology.
    pub fn of(t: &Topology) -> RunTopology {
        RunTopology { topology: Some(Box::new(t.clone())), ..Default::default() }
    }

    /// The typed topology, when the document is one.
    pub fn get(&self) -> Option<&Topology> {
        self.topology.as_deref()
    }

    fn typed_map(t: &Topology) -> Extra {
        match serde_json::to_value(t) {
            Ok(Value::Object(m)) => m.into_iter().collect(),
            _ => Extra::new(),
        }
    }
}

impl Serialize for RunTopology {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = self.topology.as_deref().map(RunTopology::typed_map).unwrap_or_default();
        map.retain(|k, _| !self.not_stored.contains(k));
        map.extend(self.extra.clone());
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RunTopology {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = object(d)?;
        if stored.is_empty() {
            return Ok(RunTopology::default());
        }
        let doc = Value::Object(stored.clone().into_iter().collect());
        let Ok(t) = serde_json::from_value::<Topology>(doc) else {
            return Ok(RunTopology { extra: stored, ..Default::default() });
        };
        let typed = RunTopology::typed_map(&t);
        let extra = stored.iter().filter(|(k, v)| typed.get(*k) != Some(*v));
        Ok(RunTopology {
            extra: extra.map(|(k, v)| (k.clone(), v.clone())).collect(),
            not_stored: typed.keys().filter(|k| !stored.contains_key(*k)).cloned().collect(),
            topology: Some(Box::new(t)),
        })
    }
}

/// The firmware's NUMA description as a run's configuration records it
/// (`acpi_srat`, drawn from [`topo::acpi::Srat`]): how many proximity
/// domains the ACPI SRAT describes, and how many of them hold CPUs and
/// memory (unknown where an older run's sentence did not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareNuma {
    pub domains: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_cpus: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub with_memory: Option<u64>,
}

impl FirmwareNuma {
    /// The counts of a parsed SRAT.
    pub fn of(srat: &topo::acpi::Srat) -> FirmwareNuma {
        FirmwareNuma {
            domains: srat.domains.len() as u64,
            with_cpus: Some(srat.cpu_domains() as u64),
            with_memory: Some(srat.memory_domains() as u64),
        }
    }

    /// Reads an older run's sentence, `2 proximity domains (2 with CPUs,
    /// 2 with memory)`, and `none` or `no SRAT...` (the firmware describes
    /// no domain); `None` for anything else.
    fn parse(text: &str) -> Option<FirmwareNuma> {
        let s = text.trim();
        if s.eq_ignore_ascii_case("none") || s.starts_with("no SRAT") {
            return Some(FirmwareNuma { domains: 0, with_cpus: Some(0), with_memory: Some(0) });
        }
        let domains = s.split_whitespace().next()?.parse().ok()?;
        let count = |what: &str| -> Option<u64> {
            let before = s.split(what).next().filter(|b| b.len() < s.len())?;
            before.rsplit(['(', ',', ' ']).find(|w| !w.is_empty())?.parse().ok()
        };
        Some(FirmwareNuma {
            domains,
            with_cpus: count(" with CPUs"),
            with_memory: count(" with memory"),
        })
    }

    /// `2 proximity domains (2 with CPUs, 2 with memory)`: the text
    /// settings are listed, compared and hashed by, the same as older runs
    /// stored.
    pub fn text(&self) -> String {
        let n = self.domains;
        let s = if n == 1 { "" } else { "s" };
        match (self.with_cpus, self.with_memory) {
            (Some(c), Some(m)) => {
                format!("{n} proximity domain{s} ({c} with CPUs, {m} with memory)")
            }
            (Some(c), None) => format!("{n} proximity domain{s} ({c} with CPUs)"),
            (None, Some(m)) => format!("{n} proximity domain{s} ({m} with memory)"),
            (None, None) => format!("{n} proximity domain{s}"),
        }
    }
}

/// The firmware's ACPI SRAT as a run's configuration stores it: `"none"`
/// where the firmware has none, its counts as an object
/// (`{"domains": 2, "with_cpus": 2, "with_memory": 2}`), or, in runs
/// stored before the counts were, the sentence they were written as (kept
/// as stored, so that an older document writes back unchanged; read once,
/// by [`AcpiSrat::numa`]).
#[derive(Debug, Clone, PartialEq)]
pub enum AcpiSrat {
    NotInFirmware,
    Domains(FirmwareNuma),
    Sentence(String),
}

impl AcpiSrat {
    /// The firmware's domains; `None` for a sentence that says none.
    pub fn numa(&self) -> Option<FirmwareNuma> {
        match self {
            AcpiSrat::NotInFirmware => {
                Some(FirmwareNuma { domains: 0, with_cpus: Some(0), with_memory: Some(0) })
            }
            AcpiSrat::Domains(f) => Some(*f),
            AcpiSrat::Sentence(s) => FirmwareNuma::parse(s),
        }
    }

    /// The text the setting is listed, compared and hashed by: what runs
    /// stored before the counts were hold, so that a run of either kind
    /// on one configuration is the same configuration.
    pub fn text(&self) -> String {
        match self {
            AcpiSrat::NotInFirmware => "none".into(),
            AcpiSrat::Domains(f) => f.text(),
            AcpiSrat::Sentence(s) => s.clone(),
        }
    }
}

impl Serialize for AcpiSrat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AcpiSrat::NotInFirmware => s.serialize_str("none"),
            AcpiSrat::Domains(f) => f.serialize(s),
            AcpiSrat::Sentence(t) => s.serialize_str(t),
        }
    }
}

impl<'de> Deserialize<'de> for AcpiSrat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<AcpiSrat, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Text(String),
            Domains(FirmwareNuma),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Text(t) if t == "none" => AcpiSrat::NotInFirmware,
            Stored::Text(t) => AcpiSrat::Sentence(t),
            Stored::Domains(f) => AcpiSrat::Domains(f),
        })
    }
}

impl Configuration {
    /// The firmware's NUMA domains as recorded (`acpi_srat`), when read.
    pub fn firmware_numa(&self) -> Option<FirmwareNuma> {
        self.acpi_srat.as_ref().and_then(AcpiSrat::numa)
    }

    /// The document as settings are listed, compared and hashed: as
    /// stored, with the SRAT as its text ([`AcpiSrat::text`]).
    fn settings_json(&self) -> Value {
        let mut v = self.to_json();
        if let (Some(srat), Value::Object(m)) = (&self.acpi_srat, &mut v) {
            m.insert("acpi_srat".into(), Value::String(srat.text()));
        }
        v
    }
}

/// Where a setting's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SettingSource {
    /// Read from the running system (sysfs, procfs, the kernel).
    Detected,
    /// The firmware's own tables and identity (ACPI SRAT/SLIT, BIOS,
    /// microcode).
    Firmware,
    /// What the user declared (`--set bios.numa=on`).
    Declared,
}

/// The value of one setting, as the document holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingValue {
    /// Not read (`null`).
    NotRead,
    Bool(bool),
    Number(serde_json::Number),
    Text(String),
    /// A list (kept as the JSON it is stored as).
    List(Vec<Value>),
}

impl SettingValue {
    fn of(v: &Value) -> SettingValue {
        match v {
            Value::Null => SettingValue::NotRead,
            Value::Bool(b) => SettingValue::Bool(*b),
            Value::Number(n) => SettingValue::Number(n.clone()),
            Value::String(s) => SettingValue::Text(s.clone()),
            Value::Array(a) => SettingValue::List(a.clone()),
            // Objects are flattened into their leaves before this.
            Value::Object(_) => SettingValue::List(vec![v.clone()]),
        }
    }

    /// The text settings are compared by (studies, the fleet's drift): `-`
    /// for a value not read, a list as its JSON.
    pub fn compared_text(&self) -> String {
        match self {
            SettingValue::NotRead => "-".into(),
            SettingValue::Bool(b) => b.to_string(),
            SettingValue::Number(n) => n.to_string(),
            SettingValue::Text(s) => s.clone(),
            SettingValue::List(a) => Value::Array(a.clone()).to_string(),
        }
    }

    /// The text a report lists: `None` for a value not read, a list of
    /// plain values joined by `,`.
    pub fn shown_text(&self) -> Option<String> {
        match self {
            SettingValue::NotRead => None,
            SettingValue::List(a) => {
                let v = Value::Array(a.clone());
                Some(scalar_text(&v).unwrap_or_else(|| v.to_string()))
            }
            other => Some(other.compared_text()),
        }
    }
}

/// One setting of a run: its dotted name (`cmdline_options.numa`,
/// `declared.bios.numa`), its value and where the value comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub name: String,
    pub value: SettingValue,
    pub source: SettingSource,
}

/// The firmware facts of a configuration document: its top-level fields
/// whose values come from the firmware.
const FIRMWARE_SETTINGS: [&str; 6] =
    ["acpi_srat", "acpi_slit", "bios_vendor", "bios_version", "bios_date", "microcode"];

/// The leaves of a JSON document as settings, nested objects flattened to
/// dotted names, in the document's order.
fn leaves(name: &str, v: &Value, source: SettingSource, out: &mut Vec<Setting>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let key = if name.is_empty() { k.clone() } else { format!("{name}.{k}") };
                leaves(&key, x, source, out);
            }
        }
        leaf => out.push(Setting { name: name.to_string(), value: SettingValue::of(leaf), source }),
    }
}

fn settings_of(doc: Value, source_of: impl Fn(&str) -> SettingSource) -> Vec<Setting> {
    let mut out = Vec::new();
    if let Value::Object(m) = doc {
        for (k, v) in &m {
            leaves(k, v, source_of(k), &mut out);
        }
    }
    out
}

impl Configuration {
    /// Every setting of the document, typed, with its source: the one
    /// reading of the configuration that studies, the fleet and reports
    /// list and compare (each leaves out what is not a setting to it,
    /// such as `fingerprint`).
    pub fn settings(&self) -> impl Iterator<Item = Setting> {
        settings_of(self.settings_json(), |k| {
            if k == "declared" {
                SettingSource::Declared
            } else if FIRMWARE_SETTINGS.contains(&k) {
                SettingSource::Firmware
            } else {
                SettingSource::Detected
            }
        })
        .into_iter()
    }
}

impl Machine {
    /// The machine document's facts as settings (the fleet compares those
    /// that are not the model: BIOS version, DIMM population, ...).
    pub fn settings(&self) -> impl Iterator<Item = Setting> {
        let doc = serde_json::to_value(self).unwrap_or(Value::Null);
        settings_of(doc, |k| {
            if k.starts_with("bios") || k == "microcode" {
                SettingSource::Firmware
            } else {
                SettingSource::Detected
            }
        })
        .into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn round_trip<T: Serialize + DeserializeOwned>(v: &Value) -> (T, Value) {
        let t: T = serde_json::from_value(v.clone()).unwrap();
        let back = serde_json::to_value(&t).unwrap();
        (t, back)
    }

    #[test]
    fn a_configuration_reads_its_settings_and_writes_back_what_it_read() {
        let doc = json!({"fingerprint": "ab12", "budget": "quick", "numa_mode": "nodes-per-package",
            "numa_mode_label": null, "nodes": 4, "kernel": "unreadable", "boost": true,
            "numa_balancing": 1, "cmdline_options": {"numa_balancing": "0"},
            "memory_speed_mts": "mixed (4400, 4800)", "governor": 7,
            "added_by_a_newer_numaprobe": {"nested": [1, 2]}});
        let (c, back): (Configuration, _) = round_trip(&doc);
        assert_eq!(back, doc);
        assert_eq!(c.numa_mode.as_ref().and_then(Reading::value).unwrap(), "nodes-per-package");
        assert_eq!(c.numa_mode_label, Some(Reading::Absent));
        assert_eq!(c.kernel, Some(Reading::Unreadable));
        assert_eq!(c.boost, Some(Reading::Value(true)));
        assert_eq!(c.nodes, Some(4));
        assert_eq!(c.thp_enabled, None, "absent from the document: not written back either");
        // a known setting of another shape is kept as stored, not typed
        assert_eq!(c.governor, None);
        assert_eq!(c.extra["governor"], 7);
        assert!(c.extra.contains_key("added_by_a_newer_numaprobe"));
        assert_eq!(
            c.memory_speed_mts.as_ref().and_then(Reading::text).as_deref(),
            Some("mixed (4400, 4800)")
        );
    }

    #[test]
    fn the_settings_hash_leaves_out_the_fingerprint_and_the_budget() {
        let doc = json!({"numa_mode": "single-node", "nodes": 1, "thp_enabled": "madvise"});
        let plain: Configuration = serde_json::from_value(doc.clone()).unwrap();
        let want = format!("{:016x}", topo::hash::fnv1a64(doc.to_string().as_bytes()));
        assert_eq!(plain.settings_hash(), want);
        let mut sealed = plain.clone();
        sealed.fingerprint = Some(want.clone());
        sealed.budget = Some("quick".into());
        assert_eq!(sealed.settings_hash(), want);
    }

    #[test]
    fn a_machine_keeps_nulls_lists_and_unknown_fields() {
        let doc = json!({"fingerprint": "f00d", "hostname": null, "cpu_model": "EPYC",
            "packages": [0, 1], "nodes": 4, "dimms": {"peak_gbs_per_socket": [204.8, null],
            "modules": 16, "unreadable": "EACCES", "future": true}, "bios": "AMI 2.1"});
        let (m, back): (Machine, _) = round_trip(&doc);
        assert_eq!(back, doc);
        assert_eq!(m.hostname(), None);
        assert_eq!(m.cpu_model(), Some("EPYC"));
        assert_eq!(m.packages.as_ref().map(Count::get), Some(2));
        let d = m.dimm_summary().unwrap();
        assert_eq!(d.peak_gbs_per_socket, Some(vec![Some(204.8), None]));
        assert!(d.extra.contains_key("future"));
        assert_eq!(m.bios, Some(Bios::Text("AMI 2.1".into())));
        // an integer where a float is typed writes back as stored
        let doc = json!({"dimms": {"peak_gbs_per_socket": [205]}});
        let (_, back): (Machine, _) = round_trip(&doc);
        assert_eq!(back, doc);
    }

    #[test]
    fn a_topology_document_writes_back_unchanged() {
        let t = Topology::discover(&topo::SysRoot::live()).unwrap();
        let mut doc = serde_json::to_value(&t).unwrap();
        doc["added_later"] = json!({"x": 1});
        doc.as_object_mut().unwrap().remove("cpu_family");
        let (rt, back): (RunTopology, _) = round_trip(&doc);
        assert_eq!(back, doc);
        assert_eq!(rt.get().map(|t| t.cpus.len()), Some(t.cpus.len()));
        // not a topology: kept whole, nothing typed
        let odd = json!({"nodes": "not a list"});
        let (rt, back): (RunTopology, _) = round_trip(&odd);
        assert_eq!(back, odd);
        assert!(rt.get().is_none());
        let (rt, back): (RunTopology, _) = round_trip(&json!({}));
        assert_eq!((rt.get(), back), (None, json!({})));
    }

    #[test]
    fn settings_are_the_leaves_with_their_source() {
        let c: Configuration = serde_json::from_value(serde_json::json!({
            "nodes": 2, "boost": true, "thp_enabled": null, "acpi_srat": "none",
            "cmdline_options": {"numa": "off"}, "declared": {"bios.numa": "on"},
            "future": [1, 2], "nested": {"deep": {"x": "y"}}
        }))
        .unwrap();
        let s: Vec<Setting> = c.settings().collect();
        let get = |n: &str| s.iter().find(|x| x.name == n).unwrap_or_else(|| panic!("{n}: {s:?}"));
        assert_eq!(get("nodes").value.compared_text(), "2");
        assert_eq!(get("boost").value, SettingValue::Bool(true));
        assert_eq!(get("thp_enabled").value.compared_text(), "-");
        assert_eq!(get("thp_enabled").value.shown_text(), None);
        assert_eq!(get("acpi_srat").source, SettingSource::Firmware);
        assert_eq!(get("cmdline_options.numa").source, SettingSource::Detected);
        assert_eq!(get("declared.bios.numa").source, SettingSource::Declared);
        assert_eq!(get("future").value.compared_text(), "[1,2]");
        assert_eq!(get("future").value.shown_text().as_deref(), Some("1,2"));
        assert_eq!(get("nested.deep.x").value.compared_text(), "y");
    }

    #[test]
    fn the_recorded_srat_reads_back_as_numbers() {
        let f = |t: &str| FirmwareNuma::parse(t);
        assert_eq!(
            f("2 proximity domains (2 with CPUs, 1 with memory)"),
            Some(FirmwareNuma { domains: 2, with_cpus: Some(2), with_memory: Some(1) })
        );
        assert_eq!(
            f("1 proximity domain (1 with CPUs, 1 with memory)").map(|x| x.domains),
            Some(1)
        );
        assert_eq!(
            f("4 proximity domains"),
            Some(FirmwareNuma { domains: 4, with_cpus: None, with_memory: None })
        );
        assert_eq!(f("none").map(|x| x.domains), Some(0));
        assert_eq!(
            f("no SRAT: the firmware describes no NUMA domains").map(|x| x.domains),
            Some(0)
        );
        assert_eq!(f("unknown (unreadable)"), None);
        let c: Configuration = serde_json::from_value(
            serde_json::json!({"acpi_srat": "3 proximity domains (2 with CPUs, 3 with memory)"}),
        )
        .unwrap();
        assert_eq!(c.firmware_numa().and_then(|x| x.with_cpus), Some(2));
    }

    /// Runs since the SRAT was stored as counts hold an object; older
    /// runs hold the sentence. Both read as the same domains, an older
    /// document writes back as stored, and both list and hash as the same
    /// setting, so that runs of one configuration before and after stay
    /// one configuration.
    #[test]
    fn the_srat_is_stored_as_counts_and_older_sentences_still_read() {
        let sentence =
            json!({"nodes": 2, "acpi_srat": "2 proximity domains (2 with CPUs, 1 with memory)"});
        let counts =
            json!({"nodes": 2, "acpi_srat": {"domains": 2, "with_cpus": 2, "with_memory": 1}});
        let (old, old_back) = round_trip::<Configuration>(&sentence);
        let (new, new_back) = round_trip::<Configuration>(&counts);
        assert_eq!(old_back, sentence);
        assert_eq!(new_back, counts);
        let want = FirmwareNuma { domains: 2, with_cpus: Some(2), with_memory: Some(1) };
        assert_eq!(new.acpi_srat, Some(AcpiSrat::Domains(want)));
        assert!(new.extra.is_empty(), "{:?}", new.extra);
        assert_eq!(old.firmware_numa(), Some(want));
        assert_eq!(new.firmware_numa(), Some(want));
        assert_eq!(old.settings_hash(), new.settings_hash());
        let srat = |c: &Configuration| c.settings().find(|s| s.name == "acpi_srat").unwrap();
        assert_eq!(srat(&old), srat(&new));
        assert_eq!(
            srat(&new).value,
            SettingValue::Text("2 proximity domains (2 with CPUs, 1 with memory)".into())
        );
        assert_eq!(srat(&new).source, SettingSource::Firmware);
        // No SRAT: `none`, as before.
        let none = json!({"acpi_srat": "none"});
        let (c, back) = round_trip::<Configuration>(&none);
        assert_eq!((c.acpi_srat.clone(), back), (Some(AcpiSrat::NotInFirmware), none));
        assert_eq!(c.firmware_numa().map(|f| f.domains), Some(0));
        // One domain is said in the singular, as the sentences were.
        let one = FirmwareNuma { domains: 1, with_cpus: Some(1), with_memory: Some(1) };
        assert_eq!(one.text(), "1 proximity domain (1 with CPUs, 1 with memory)");
        // An object of another shape is kept as stored, not typed.
        let odd = json!({"acpi_srat": {"domains": 2, "tables": 1}});
        let (c, back) = round_trip::<Configuration>(&odd);
        assert_eq!((c.acpi_srat.is_none(), back), (true, odd));
    }
}
