//! The firmware's own NUMA description, as the ACPI tables give it before
//! the kernel applies or ignores it: the SRAT (System Resource Affinity
//! Table, ACPI 6.5 §5.2.16: which processors and memory ranges belong to
//! which proximity domain) and the SLIT (System Locality Information Table,
//! §5.2.17: the relative distance between proximity domains), read as
//! binary tables from `sys/firmware/acpi/tables/` (readable by root only)
//! and parsed here.
//!
//! They tell apart what the OS shows alike: with `numa=off` over a NUMA
//! firmware the SRAT still lists several proximity domains while the kernel
//! makes one node; with NUMA disabled in the firmware (node interleaving)
//! the SRAT is absent or lists one domain. A missing tables folder, a table
//! that cannot be read or does not parse is `unknown` with the reason,
//! never guessed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::fs::SysRoot;
use crate::warning::Warning;

/// Where Linux shows the firmware's ACPI tables.
pub const TABLES_DIR: &str = "sys/firmware/acpi/tables";

/// The common ACPI table header: signature, length, revision, checksum,
/// OEM ids and creator (36 bytes).
const HEADER_LEN: usize = 36;
/// SRAT: the header, a reserved u32 (1) and a reserved u64.
const SRAT_FIRST: usize = HEADER_LEN + 12;
/// SLIT: the header, then the number of localities (u64), then the matrix.
const SLIT_MATRIX: usize = HEADER_LEN + 8;

/// What one ACPI table says, or why it is not known.
///
/// JSON: `{"status": "found", "value": {...}}`, `{"status": "not-in-firmware"}`
/// or `{"status": "unknown", "value": "<why>"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", content = "value", rename_all = "kebab-case")]
pub enum Table<T> {
    /// The table, parsed.
    Found(T),
    /// The tables folder was listed and holds no such table: the firmware
    /// describes none.
    NotInFirmware,
    /// Could not tell: no tables folder (a capture, a machine without
    /// ACPI), a table only root may read, or a malformed table.
    Unknown(String),
}

impl<T> Table<T> {
    pub fn found(&self) -> Option<&T> {
        match self {
            Table::Found(t) => Some(t),
            _ => None,
        }
    }
}

/// The SRAT and SLIT of one machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FirmwareNuma {
    pub srat: Table<Srat>,
    pub slit: Table<Slit>,
}

impl FirmwareNuma {
    /// Proximity domains holding both processors and memory, when the SRAT
    /// was read (none in the firmware gives `Some(0)`): what the kernel
    /// would make into nodes with CPUs and memory.
    pub fn local_domains(&self) -> Option<usize> {
        match &self.srat {
            Table::Found(s) => Some(s.local_domains()),
            Table::NotInFirmware => Some(0),
            Table::Unknown(_) => None,
        }
    }

    /// One line for people: `2 proximity domains: 0 (2 CPUs, 512 MiB), ...`.
    pub fn srat_text(&self) -> String {
        match &self.srat {
            Table::Found(s) => s.describe(),
            Table::NotInFirmware => "no SRAT: the firmware describes no NUMA domains".into(),
            Table::Unknown(why) => format!("unknown ({why})"),
        }
    }

    /// The SLIT in one line (rows separated by ` / `).
    pub fn slit_text(&self) -> String {
        match &self.slit {
            Table::Found(s) => s.describe(),
            Table::NotInFirmware => "no SLIT: the firmware gives no distances".into(),
            Table::Unknown(why) => format!("unknown ({why})"),
        }
    }
}

/// The SRAT summarised per proximity domain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Srat {
    /// Table revision (1: 8-bit proximity domains; 2 and later: 32-bit).
    pub revision: u8,
    /// Whether the table's bytes sum to zero, as the spec requires (Linux
    /// uses a table whose checksum is wrong, and so is it used here).
    pub checksum_ok: bool,
    /// Domains with an enabled processor, memory range or generic
    /// initiator, by id.
    pub domains: Vec<Domain>,
    /// Processor entries the firmware marked disabled (absent or hot-add
    /// processors).
    pub disabled_processors: u32,
    /// Structures of other kinds (GIC ITS, generic port, newer types).
    pub other_structures: u32,
}

/// One proximity domain of the SRAT.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    pub id: u32,
    /// Enabled processor entries (local APIC, x2APIC or GICC affinity).
    pub cpus: u32,
    /// Bytes of enabled memory ranges that are not hot-pluggable.
    pub memory_bytes: u64,
    /// Bytes of enabled hot-pluggable ranges (often address space set
    /// aside for memory not installed).
    pub hotplug_bytes: u64,
    /// Of the two above, the bytes marked non-volatile.
    pub nonvolatile_bytes: u64,
    /// Generic initiators (GPUs, accelerators) in this domain.
    pub generic_initiators: u32,
}

impl Srat {
    /// Domains holding at least one enabled processor.
    pub fn cpu_domains(&self) -> usize {
        self.domains.iter().filter(|d| d.cpus > 0).count()
    }

    /// Domains holding both processors and memory.
    pub fn local_domains(&self) -> usize {
        self.domains.iter().filter(|d| d.cpus > 0 && d.memory_bytes + d.hotplug_bytes > 0).count()
    }

    /// Domains holding memory (hot-pluggable ranges included).
    pub fn memory_domains(&self) -> usize {
        self.domains.iter().filter(|d| d.memory_bytes + d.hotplug_bytes > 0).count()
    }

    /// `2 proximity domains: 0 (2 CPUs, 512 MiB), 1 (2 CPUs, 512 MiB)`.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .domains
            .iter()
            .map(|d| {
                let mut what = Vec::new();
                if d.cpus > 0 {
                    what.push(format!("{} CPU{}", d.cpus, if d.cpus == 1 { "" } else { "s" }));
                }
                if d.memory_bytes > 0 {
                    what.push(crate::units::binary_size(d.memory_bytes));
                }
                if d.hotplug_bytes > 0 {
                    what.push(format!(
                        "{} hot-pluggable",
                        crate::units::binary_size(d.hotplug_bytes)
                    ));
                }
                if d.nonvolatile_bytes > 0 {
                    what.push(format!(
                        "{} non-volatile",
                        crate::units::binary_size(d.nonvolatile_bytes)
                    ));
                }
                if d.generic_initiators > 0 {
                    what.push(format!("{} generic initiator(s)", d.generic_initiators));
                }
                format!("{} ({})", d.id, what.join(", "))
            })
            .collect();
        let n = self.domains.len();
        let mut s = format!("{n} proximity domain{}", if n == 1 { "" } else { "s" });
        if !parts.is_empty() {
            s.push_str(": ");
            s.push_str(&parts.join(", "));
        }
        if !self.checksum_ok {
            s.push_str(" (the table's checksum is wrong)");
        }
        s
    }

    /// The settings-level summary a run's configuration records:
    /// `2 proximity domains (2 with CPUs, 2 with memory)`.
    pub fn config_text(&self) -> String {
        format!(
            "{} proximity domain{} ({} with CPUs, {} with memory)",
            self.domains.len(),
            if self.domains.len() == 1 { "" } else { "s" },
            self.cpu_domains(),
            self.memory_domains()
        )
    }
}

/// The SLIT: distances between proximity domains (10 = local).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slit {
    pub revision: u8,
    pub checksum_ok: bool,
    /// Row `i`: the distance from domain `i` to each domain (255 means
    /// unreachable).
    pub distances: Vec<Vec<u8>>,
}

/// The most localities whose whole matrix goes into one line of text;
/// larger ones are summarised.
const SLIT_TEXT_MAX: usize = 8;

impl Slit {
    /// The rows in one line (`10 21 / 21 10`); above 8 localities, the
    /// count, the distinct distances and a hash of the matrix.
    pub fn describe(&self) -> String {
        let n = self.distances.len();
        if n == 0 {
            return "0 localities: the SLIT gives no distances".into();
        }
        if n <= SLIT_TEXT_MAX {
            return self
                .distances
                .iter()
                .map(|r| r.iter().map(u8::to_string).collect::<Vec<_>>().join(" "))
                .collect::<Vec<_>>()
                .join(" / ");
        }
        let mut distinct: Vec<u8> = self.distances.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let flat: Vec<u8> = self.distances.iter().flatten().copied().collect();
        format!(
            "{n} localities, distances {} (matrix {:016x})",
            distinct.iter().map(u8::to_string).collect::<Vec<_>>().join("/"),
            crate::hash::fnv1a64(&flat)
        )
    }
}

/// Why a table's bytes do not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcpiError {
    #[error("{len} bytes, shorter than the {need} a {table} needs")]
    TooShort { table: &'static str, len: usize, need: usize },
    #[error("signature {found:?}, expected {expected:?}")]
    Signature { expected: &'static str, found: String },
    #[error("header length {field} does not fit the {len} bytes read")]
    Length { field: u64, len: usize },
    #[error("structure at byte {offset}: {problem}")]
    Structure { offset: usize, problem: String },
    #[error("{localities} localities need {need} bytes of matrix, the table has {have}")]
    Matrix { localities: u64, need: u64, have: usize },
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from(u32_at(b, at)) | (u64::from(u32_at(b, at + 4)) << 32)
}

/// Checks the header of `bytes` against `signature` and returns the table
/// (cut to the length the header gives), its revision and whether the
/// checksum holds.
fn header<'a>(
    bytes: &'a [u8],
    signature: &'static str,
    min: usize,
) -> Result<(&'a [u8], u8, bool), AcpiError> {
    if bytes.len() < min {
        return Err(AcpiError::TooShort { table: signature, len: bytes.len(), need: min });
    }
    if &bytes[..4] != signature.as_bytes() {
        return Err(AcpiError::Signature {
            expected: signature,
            found: String::from_utf8_lossy(&bytes[..4]).into_owned(),
        });
    }
    let length = u32_at(bytes, 4) as usize;
    if length < min || length > bytes.len() {
        return Err(AcpiError::Length { field: length as u64, len: bytes.len() });
    }
    let table = &bytes[..length];
    let sum = table.iter().fold(0u8, |s, b| s.wrapping_add(*b));
    Ok((table, table[8], sum == 0))
}

/// How a processor is named in its affinity structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessorId {
    /// Type 0: local APIC (or SAPIC) id.
    Apic(u8),
    /// Type 2: x2APIC id.
    X2apic(u32),
    /// Type 3: the GIC CPU interface's ACPI processor UID (Arm).
    Gicc(u32),
}

/// One affinity structure of the SRAT, as the table has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SratEntry {
    Processor {
        domain: u32,
        id: ProcessorId,
        enabled: bool,
    },
    Memory {
        domain: u32,
        base: u64,
        length: u64,
        enabled: bool,
        hotplug: bool,
        nonvolatile: bool,
    },
    GenericInitiator {
        domain: u32,
        enabled: bool,
    },
    /// A structure of another type (GIC ITS, generic port, newer ones).
    Other {
        kind: u8,
    },
}

/// The affinity structures of an SRAT, in table order, and its revision
/// and checksum state.
pub fn srat_entries(bytes: &[u8]) -> Result<(Vec<SratEntry>, u8, bool), AcpiError> {
    let (t, revision, checksum_ok) = header(bytes, "SRAT", SRAT_FIRST)?;
    let mut out = Vec::new();
    let mut off = SRAT_FIRST;
    while off < t.len() {
        let bad = |problem: String| AcpiError::Structure { offset: off, problem };
        if off + 2 > t.len() {
            return Err(bad("truncated: no room for its type and length".into()));
        }
        let (kind, len) = (t[off], t[off + 1] as usize);
        if len < 2 {
            return Err(bad(format!("length {len}: a structure is at least 2 bytes")));
        }
        if off + len > t.len() {
            return Err(bad(format!("length {len} runs past the table's end ({})", t.len())));
        }
        let s = &t[off..off + len];
        let need = match kind {
            0 => 16,
            1 => 40,
            2 => 24,
            3 => 18,
            5 => 32,
            _ => 2,
        };
        if len < need {
            return Err(bad(format!("type {kind} with length {len}, expected {need}")));
        }
        out.push(match kind {
            0 => {
                // Proximity domain bits 7:0 at byte 2, bits 31:8 at bytes
                // 9-11 (used from SRAT revision 2 on, as Linux does).
                let hi = u32::from_le_bytes([s[9], s[10], s[11], 0]);
                let domain =
                    if revision >= 2 { u32::from(s[2]) | (hi << 8) } else { u32::from(s[2]) };
                SratEntry::Processor {
                    domain,
                    id: ProcessorId::Apic(s[3]),
                    enabled: u32_at(s, 4) & 1 != 0,
                }
            }
            1 => {
                let raw = u32_at(s, 2);
                let flags = u32_at(s, 28);
                SratEntry::Memory {
                    domain: if revision <= 1 { raw & 0xff } else { raw },
                    base: u64_at(s, 8),
                    length: u64_at(s, 16),
                    enabled: flags & 1 != 0,
                    hotplug: flags & 2 != 0,
                    nonvolatile: flags & 4 != 0,
                }
            }
            2 => SratEntry::Processor {
                domain: u32_at(s, 4),
                id: ProcessorId::X2apic(u32_at(s, 8)),
                enabled: u32_at(s, 12) & 1 != 0,
            },
            3 => SratEntry::Processor {
                domain: u32_at(s, 2),
                id: ProcessorId::Gicc(u32_at(s, 6)),
                enabled: u32_at(s, 10) & 1 != 0,
            },
            5 => SratEntry::GenericInitiator {
                domain: u32_at(s, 4),
                enabled: u32_at(s, 24) & 1 != 0,
            },
            other => SratEntry::Other { kind: other },
        });
        off += len;
    }
    Ok((out, revision, checksum_ok))
}

/// Parses an SRAT into its proximity domains.
pub fn parse_srat(bytes: &[u8]) -> Result<Srat, AcpiError> {
    let (entries, revision, checksum_ok) = srat_entries(bytes)?;
    let mut domains: BTreeMap<u32, Domain> = BTreeMap::new();
    let mut disabled_processors = 0;
    let mut other_structures = 0;
    for e in entries {
        match e {
            SratEntry::Processor { domain: d, enabled: true, .. } => {
                entry(&mut domains, d).cpus += 1;
            }
            SratEntry::Processor { enabled: false, .. } => disabled_processors += 1,
            SratEntry::Memory {
                domain: d, length, enabled: true, hotplug, nonvolatile, ..
            } if length > 0 => {
                let dom = entry(&mut domains, d);
                if hotplug {
                    dom.hotplug_bytes = dom.hotplug_bytes.saturating_add(length);
                } else {
                    dom.memory_bytes = dom.memory_bytes.saturating_add(length);
                }
                if nonvolatile {
                    dom.nonvolatile_bytes = dom.nonvolatile_bytes.saturating_add(length);
                }
            }
            SratEntry::Memory { .. } => {}
            SratEntry::GenericInitiator { domain: d, enabled: true } => {
                entry(&mut domains, d).generic_initiators += 1;
            }
            SratEntry::GenericInitiator { enabled: false, .. } => {}
            SratEntry::Other { .. } => other_structures += 1,
        }
    }
    Ok(Srat {
        revision,
        checksum_ok,
        domains: domains.into_values().collect(),
        disabled_processors,
        other_structures,
    })
}

fn entry(domains: &mut BTreeMap<u32, Domain>, id: u32) -> &mut Domain {
    domains.entry(id).or_insert_with(|| Domain {
        id,
        cpus: 0,
        memory_bytes: 0,
        hotplug_bytes: 0,
        nonvolatile_bytes: 0,
        generic_initiators: 0,
    })
}

/// Parses a SLIT into its distance matrix.
pub fn parse_slit(bytes: &[u8]) -> Result<Slit, AcpiError> {
    let (t, revision, checksum_ok) = header(bytes, "SLIT", SLIT_MATRIX)?;
    let n = u64_at(t, HEADER_LEN);
    let have = t.len() - SLIT_MATRIX;
    let need = n.checked_mul(n).filter(|need| *need <= have as u64).ok_or(AcpiError::Matrix {
        localities: n,
        need: n.saturating_mul(n),
        have,
    })?;
    let n = n as usize;
    let matrix = &t[SLIT_MATRIX..SLIT_MATRIX + need as usize];
    Ok(Slit {
        revision,
        checksum_ok,
        distances: (0..n).map(|i| matrix[i * n..(i + 1) * n].to_vec()).collect(),
    })
}

/// Reads one table: found, not in the firmware (the folder lists no such
/// file), or unknown with the reason; a table that does not parse also
/// gives a warning naming it.
fn read_table<T>(
    root: &SysRoot,
    names: &[String],
    name: &str,
    parse: fn(&[u8]) -> Result<T, AcpiError>,
    warnings: &mut Vec<Warning>,
) -> Table<T> {
    if !names.iter().any(|n| n == name) {
        return Table::NotInFirmware;
    }
    let rel = format!("{TABLES_DIR}/{name}");
    match root.read_optional_bytes(&rel) {
        Ok(Some(bytes)) => match parse(&bytes) {
            Ok(t) => Table::Found(t),
            Err(e) => {
                let path = root.path(&rel).display().to_string();
                let assumed = format!("the firmware's {name} unknown");
                warnings.push(Warning::file(&path, e.to_string(), assumed));
                Table::Unknown(format!("{path}: {e}"))
            }
        },
        Ok(None) => {
            let path = root.path(&rel).display().to_string();
            let assumed = format!("the firmware's {name} unknown");
            warnings.push(Warning::file(&path, "listed but not readable", assumed));
            Table::Unknown(format!("{path}: listed but not readable"))
        }
        Err(e) => {
            let root_only = matches!(&e, crate::TopoError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::PermissionDenied);
            if root_only {
                // Normal without root: said in the table's status, no warning.
                Table::Unknown(format!("{e} (the ACPI tables are readable by root only)"))
            } else {
                // Refused (a FIFO, a device, a folder, a dangling link, a
                // file past the size cap): as much a warning as a table
                // that does not parse.
                let path = root.path(&rel).display().to_string();
                let why = match &e {
                    crate::TopoError::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                let assumed = format!("the firmware's {name} unknown");
                warnings.push(Warning::file(&path, format!("refused: {why}"), assumed));
                Table::Unknown(e.to_string())
            }
        }
    }
}

/// Reads the SRAT and SLIT under `root`, with warnings for tables that
/// are there but do not parse. Without a tables folder both are unknown.
pub fn read(root: &SysRoot) -> (FirmwareNuma, Vec<Warning>) {
    let mut warnings = Vec::new();
    if !root.path(TABLES_DIR).is_dir() {
        let why = format!(
            "no {}: this kernel or capture shows no ACPI tables",
            root.path(TABLES_DIR).display()
        );
        return (
            FirmwareNuma { srat: Table::Unknown(why.clone()), slit: Table::Unknown(why) },
            warnings,
        );
    }
    let names = match root.list_dir(TABLES_DIR) {
        Ok(n) => n,
        Err(e) => {
            let why = e.to_string();
            return (
                FirmwareNuma { srat: Table::Unknown(why.clone()), slit: Table::Unknown(why) },
                warnings,
            );
        }
    };
    let srat = read_table(root, &names, "SRAT", parse_srat, &mut warnings);
    let slit = read_table(root, &names, "SLIT", parse_slit, &mut warnings);
    (FirmwareNuma { srat, slit }, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::acpi::{apic, memory, slit, srat};

    /// Type 2: processor local x2APIC affinity (24 bytes).
    fn x2apic(domain: u32, id: u32, enabled: bool) -> Vec<u8> {
        let mut s = vec![2u8, 24, 0, 0];
        s.extend_from_slice(&domain.to_le_bytes());
        s.extend_from_slice(&id.to_le_bytes());
        s.extend_from_slice(&u32::from(enabled).to_le_bytes());
        s.extend_from_slice(&[0; 8]);
        s
    }

    /// Type 3: GICC affinity (18 bytes).
    fn gicc(domain: u32, uid: u32) -> Vec<u8> {
        let mut s = vec![3u8, 18];
        s.extend_from_slice(&domain.to_le_bytes());
        s.extend_from_slice(&uid.to_le_bytes());
        s.extend_from_slice(&1u32.to_le_bytes());
        s.extend_from_slice(&0u32.to_le_bytes());
        s
    }

    /// Type 5: generic initiator affinity (32 bytes).
    fn generic_initiator(domain: u32) -> Vec<u8> {
        let mut s = vec![5u8, 32, 0, 1];
        s.extend_from_slice(&domain.to_le_bytes());
        s.extend_from_slice(&[0; 16]);
        s.extend_from_slice(&1u32.to_le_bytes());
        s.extend_from_slice(&[0; 4]);
        s
    }

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn srat_processor_memory_and_initiator_structures_make_domains() {
        let t = srat(
            3,
            &[
                apic(0, 0, true),
                apic(0, 1, true),
                apic(1, 2, true),
                apic(1, 3, false),
                x2apic(1, 300, true),
                // 24-bit high part of a type 0 domain: 0x0102 = 258.
                apic(0x0102, 4, true),
                memory(0, 0, 512 * MIB, 1),
                memory(1, 4 * GIB, 512 * MIB, 1),
                memory(1, 8 * GIB, 16 * GIB, 1 | 2),
                memory(2, 32 * GIB, GIB, 1 | 4),
                memory(3, 64 * GIB, GIB, 0),
                memory(4, 0, 0, 1),
                generic_initiator(5),
                vec![4u8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ],
        );
        let s = parse_srat(&t).unwrap();
        assert!(s.checksum_ok);
        assert_eq!(s.revision, 3);
        let ids: Vec<u32> = s.domains.iter().map(|d| d.id).collect();
        assert_eq!(ids, [0, 1, 2, 5, 258], "disabled and zero-length ranges make no domain");
        let d = |id: u32| s.domains.iter().find(|d| d.id == id).unwrap();
        assert_eq!((d(0).cpus, d(0).memory_bytes), (2, 512 * MIB));
        assert_eq!((d(1).cpus, d(1).memory_bytes, d(1).hotplug_bytes), (2, 512 * MIB, 16 * GIB));
        assert_eq!((d(2).cpus, d(2).memory_bytes, d(2).nonvolatile_bytes), (0, GIB, GIB));
        assert_eq!(d(5).generic_initiators, 1);
        assert_eq!(d(258).cpus, 1);
        assert_eq!(s.disabled_processors, 1);
        assert_eq!(s.other_structures, 1);
        assert_eq!((s.cpu_domains(), s.memory_domains(), s.local_domains()), (3, 3, 2));
        assert_eq!(s.config_text(), "5 proximity domains (3 with CPUs, 3 with memory)");
        assert!(s.describe().starts_with(
            "5 proximity domains: 0 (2 CPUs, 512 MiB), 1 (2 CPUs, 512 MiB, 16 GiB hot-pluggable)"
        ));
        let (entries, _, _) = srat_entries(&t).unwrap();
        assert_eq!(
            entries[4],
            SratEntry::Processor { domain: 1, id: ProcessorId::X2apic(300), enabled: true }
        );
    }

    #[test]
    fn srat_revision_one_has_eight_bit_domains_and_gicc_counts_as_a_processor() {
        let mut m = memory(0x0301, 0, 256 * MIB, 1);
        m[2..6].copy_from_slice(&0x0000_0301u32.to_le_bytes());
        let t = srat(1, &[apic(0x0101, 0, true), m, gicc(7, 12)]);
        let s = parse_srat(&t).unwrap();
        let ids: Vec<u32> = s.domains.iter().map(|d| d.id).collect();
        // Revision 1: only bits 7:0 of either domain field count.
        assert_eq!(ids, [1, 7]);
        assert_eq!(s.domains[0].cpus, 1);
        assert_eq!(s.domains[0].memory_bytes, 256 * MIB);
        assert_eq!(s.domains[1].cpus, 1);
    }

    #[test]
    fn a_wrong_checksum_is_said_but_the_table_is_used() {
        let mut t = srat(3, &[apic(0, 0, true), memory(0, 0, MIB, 1)]);
        t[40] ^= 0xff; // a reserved byte
        let s = parse_srat(&t).unwrap();
        assert!(!s.checksum_ok);
        assert!(s.describe().ends_with("(the table's checksum is wrong)"), "{}", s.describe());
    }

    #[test]
    fn malformed_tables_are_refused_with_the_reason() {
        let good = srat(3, &[apic(0, 0, true)]);
        let err = |b: &[u8]| parse_srat(b).unwrap_err().to_string();
        assert!(err(&good[..20]).contains("shorter than the 48"), "{}", err(&good[..20]));
        let mut bad_sig = good.clone();
        bad_sig[..4].copy_from_slice(b"SLIT");
        assert!(err(&bad_sig).contains("signature \"SLIT\""));
        let mut long = good.clone();
        long[4..8].copy_from_slice(&1000u32.to_le_bytes());
        assert!(err(&long).contains("header length 1000"));
        // A structure of length 0 would loop forever if taken.
        let zero = srat(3, &[vec![0u8, 0]]);
        assert!(err(&zero).contains("length 0"), "{}", err(&zero));
        let past = srat(3, &[vec![1u8, 40, 0, 0]]);
        assert!(err(&past).contains("runs past the table's end"), "{}", err(&past));
        let short_mem = srat(3, &[vec![1u8, 8, 0, 0, 0, 0, 0, 0]]);
        assert!(err(&short_mem).contains("type 1 with length 8, expected 40"));
        let stray = srat(3, &[vec![7u8]]);
        assert!(err(&stray).contains("truncated"), "{}", err(&stray));
        // A header length shorter than the data read: the rest is ignored.
        let mut extra = good.clone();
        extra.extend_from_slice(&[0xAB; 7]);
        assert_eq!(parse_srat(&extra).unwrap().domains.len(), 1);
    }

    #[test]
    fn slit_rows_and_malformed_matrices() {
        let s = parse_slit(&slit(&[&[10, 21], &[21, 10]])).unwrap();
        assert_eq!(s.distances, vec![vec![10, 21], vec![21, 10]]);
        assert!(s.checksum_ok);
        assert_eq!(s.describe(), "10 21 / 21 10");
        let rows: Vec<Vec<u8>> =
            (0..9).map(|i| (0..9).map(|j| if i == j { 10 } else { 32 }).collect()).collect();
        let refs: Vec<&[u8]> = rows.iter().map(Vec::as_slice).collect();
        let big = parse_slit(&slit(&refs)).unwrap();
        assert!(big.describe().starts_with("9 localities, distances 10/32 (matrix "));
        // More localities than bytes, and a count whose square overflows.
        let mut t = slit(&[&[10, 21], &[21, 10]]);
        t[36..44].copy_from_slice(&3u64.to_le_bytes());
        let e = parse_slit(&t).unwrap_err().to_string();
        assert_eq!(e, "3 localities need 9 bytes of matrix, the table has 4");
        t[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_slit(&t).unwrap_err().to_string().contains("localities need"));
        assert!(parse_slit(&t[..40]).is_err());
    }

    /// Guards issue 37 cause 8: a SLIT of 0 localities printed an empty
    /// distances line.
    #[test]
    fn a_slit_of_no_localities_says_so() {
        let s = parse_slit(&slit(&[])).unwrap();
        assert!(s.distances.is_empty());
        assert_eq!(s.describe(), "0 localities: the SLIT gives no distances");
    }

    /// Guards issue 37 cause 8: a FIFO, a device, a folder, a file over
    /// the size cap or a dangling link as a table put nothing in the
    /// warnings, while a malformed table did.
    #[test]
    fn a_refused_table_is_a_warning_like_a_malformed_one() {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        type Make = fn(&std::path::Path);
        let cases: [(&str, Make); 5] = [
            ("fifo", |p| {
                let c = CString::new(p.as_os_str().as_bytes()).unwrap();
                // SAFETY: a valid path string.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            }),
            ("device", |p| std::os::unix::fs::symlink("/dev/zero", p).unwrap()),
            ("folder", |p| std::fs::create_dir(p).unwrap()),
            ("huge", |p| {
                let f = std::fs::File::create(p).unwrap();
                f.set_len(crate::fs::SYS_FILE_CAP + 1).unwrap();
            }),
            ("dangling", |p| std::os::unix::fs::symlink("/nonexistent/SLIT", p).unwrap()),
        ];
        for (what, make) in cases {
            let (d, root) = tree(&[("SRAT", srat(3, &[apic(0, 0, true)]))]);
            make(&d.path().join(TABLES_DIR).join("SLIT"));
            let (f, w) = read(&root);
            assert!(matches!(&f.slit, Table::Unknown(_)), "{what}: {:?}", f.slit);
            assert_eq!(w.len(), 1, "{what}: {w:?}");
            assert!(w[0].contains("tables/SLIT"), "{what}: {}", w[0]);
            assert!(w[0].contains("the firmware's SLIT unknown"), "{what}: {}", w[0]);
            assert!(f.srat.found().is_some(), "{what}: the SRAT is still read");
        }
    }

    fn tree(files: &[(&str, Vec<u8>)]) -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("sys")).unwrap();
        for (name, bytes) in files {
            let p = d.path().join(TABLES_DIR).join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
        let root = SysRoot::new(d.path()).unwrap();
        (d, root)
    }

    #[test]
    fn reading_tells_found_not_in_firmware_and_unknown_apart() {
        let two = srat(3, &[apic(0, 0, true), apic(1, 1, true)]);
        let (_d, root) = tree(&[("SRAT", two), ("SLIT", slit(&[&[10, 21], &[21, 10]]))]);
        let (f, w) = read(&root);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.srat.found().map(|s| s.domains.len()), Some(2));
        assert_eq!(f.slit.found().map(|s| s.distances.len()), Some(2));

        let (_d, root) = tree(&[("APIC", b"APIC".to_vec())]);
        let (f, w) = read(&root);
        assert!(w.is_empty());
        assert_eq!(f.srat, Table::NotInFirmware);
        assert_eq!(f.local_domains(), Some(0));
        assert!(f.srat_text().starts_with("no SRAT"));

        let (_d, root) = tree(&[]);
        let (f, _) = read(&root);
        assert!(
            matches!(&f.srat, Table::Unknown(w) if w.contains("no ") && w.contains("acpi/tables"))
        );
        assert_eq!(f.local_domains(), None);

        let (_d, root) = tree(&[("SRAT", b"SRAT\x10".to_vec())]);
        let (f, w) = read(&root);
        assert!(matches!(&f.srat, Table::Unknown(why) if why.contains("tables/SRAT")));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("tables/SRAT") && w[0].contains("shorter than"), "{}", w[0]);
        // JSON says which.
        let j = serde_json::to_value(&f).unwrap();
        assert_eq!(j["srat"]["status"], "unknown");
        assert_eq!(j["slit"]["status"], "not-in-firmware");
    }
}
