//! SMBIOS memory population: a hand-written parser for the raw structure
//! table (`/sys/firmware/dmi/tables/DMI`), type 17 (Memory Device) and
//! type 4 (Processor) records, summarised per socket and channel, with the
//! theoretical peak bandwidth (populated channels x MT/s x 8 bytes).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use topo::SysRoot;

use crate::read::Read;

/// Where the table lives under a root (root-only on a live machine).
pub const DMI_TABLE: &str = "sys/firmware/dmi/tables/DMI";
/// The entry point, for the SMBIOS version.
pub const DMI_ENTRY: &str = "sys/firmware/dmi/tables/smbios_entry_point";

/// A malformed table, with the byte offset where parsing stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmbiosError {
    #[error("structure at byte {offset}: header truncated ({left} bytes left)")]
    TruncatedHeader { offset: usize, left: usize },
    #[error("structure at byte {offset}: length {length} is shorter than the 4-byte header")]
    BadLength { offset: usize, length: u8 },
    #[error("structure at byte {offset}: formatted area of {length} bytes runs past the end")]
    TruncatedFormatted { offset: usize, length: u8 },
    #[error("structure at byte {offset}: string set not terminated by two NUL bytes")]
    UnterminatedStrings { offset: usize },
}

/// One SMBIOS structure: header fields, formatted area (header included) and strings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Structure {
    pub kind: u8,
    pub handle: u16,
    pub formatted: Vec<u8>,
    pub strings: Vec<String>,
}

impl Structure {
    fn byte(&self, off: usize) -> Option<u8> {
        self.formatted.get(off).copied()
    }
    fn word(&self, off: usize) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte(off)?, self.byte(off + 1)?]))
    }
    fn dword(&self, off: usize) -> Option<u32> {
        Some(u32::from_le_bytes([
            self.byte(off)?,
            self.byte(off + 1)?,
            self.byte(off + 2)?,
            self.byte(off + 3)?,
        ]))
    }
    /// The string a formatted-area byte refers to (1-based; 0 = none).
    fn string(&self, off: usize) -> Option<String> {
        let i = self.byte(off)? as usize;
        if i == 0 {
            return None;
        }
        self.strings.get(i - 1).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
    }
}

/// Splits a raw structure table into structures; stops at type 127 (end of table).
pub fn parse_table(bytes: &[u8]) -> Result<Vec<Structure>, SmbiosError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let left = bytes.len() - pos;
        if left < 4 {
            // Trailing padding of zeros is common after the end structure.
            if bytes[pos..].iter().all(|&b| b == 0) {
                break;
            }
            return Err(SmbiosError::TruncatedHeader { offset: pos, left });
        }
        let kind = bytes[pos];
        let length = bytes[pos + 1];
        if length < 4 {
            return Err(SmbiosError::BadLength { offset: pos, length });
        }
        let end_formatted = pos + length as usize;
        if end_formatted > bytes.len() {
            return Err(SmbiosError::TruncatedFormatted { offset: pos, length });
        }
        let handle = u16::from_le_bytes([bytes[pos + 2], bytes[pos + 3]]);
        let formatted = bytes[pos..end_formatted].to_vec();
        // String set: NUL-terminated strings, ended by an empty string; a
        // structure without strings has two NULs.
        let mut strings = Vec::new();
        let mut p = end_formatted;
        let end = loop {
            let Some(rel) = bytes[p..].iter().position(|&b| b == 0) else {
                return Err(SmbiosError::UnterminatedStrings { offset: pos });
            };
            if rel == 0 {
                if strings.is_empty() {
                    // Either the empty set (two NULs) or the end.
                    if bytes.get(p + 1) == Some(&0) {
                        break p + 2;
                    }
                    if p == end_formatted {
                        return Err(SmbiosError::UnterminatedStrings { offset: pos });
                    }
                }
                break p + 1;
            }
            strings.push(String::from_utf8_lossy(&bytes[p..p + rel]).into_owned());
            p += rel + 1;
            if p >= bytes.len() {
                return Err(SmbiosError::UnterminatedStrings { offset: pos });
            }
        };
        out.push(Structure { kind, handle, formatted, strings });
        pos = end;
        if kind == 127 {
            break;
        }
    }
    Ok(out)
}

/// One memory slot (type 17 record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimm {
    pub handle: u16,
    pub locator: Option<String>,
    pub bank_locator: Option<String>,
    /// `None` when the slot is empty.
    pub size_bytes: Option<u64>,
    /// True when the record says a module is there but its size is unknown.
    pub size_unknown: bool,
    /// DDR4, DDR5, ... (`None` when unknown).
    pub memory_type: Option<String>,
    /// Rated speed, MT/s.
    pub speed_mts: Option<u32>,
    /// Speed the memory controller runs it at, MT/s.
    pub configured_speed_mts: Option<u32>,
    pub manufacturer: Option<String>,
    pub part_number: Option<String>,
    pub rank: Option<u8>,
    /// Socket and channel inferred from the locators.
    pub socket: Option<u32>,
    pub channel: Option<String>,
}

impl Dimm {
    pub fn populated(&self) -> bool {
        self.size_bytes.is_some() || self.size_unknown
    }
}

/// Decodes one type 17 record. Fields beyond the record's length (older
/// SMBIOS versions) are `None`.
pub fn parse_memory_device(s: &Structure) -> Dimm {
    const MIB: u64 = 1 << 20;
    let mut size_bytes = None;
    let mut size_unknown = false;
    match s.word(0x0C) {
        None | Some(0) => {}
        Some(0xFFFF) => size_unknown = true,
        Some(0x7FFF) => match s.dword(0x1C) {
            Some(ext) => size_bytes = Some((ext & 0x7FFF_FFFF) as u64 * MIB),
            None => size_unknown = true,
        },
        Some(w) if w & 0x8000 != 0 => size_bytes = Some((w & 0x7FFF) as u64 * 1024),
        Some(w) => size_bytes = Some(w as u64 * MIB),
    }
    let speed = |word: usize, ext: usize| -> Option<u32> {
        match s.word(word)? {
            0 => None,
            0xFFFF => s.dword(ext).map(|d| d & 0x7FFF_FFFF).filter(|&d| d != 0),
            w => Some(w as u32),
        }
    };
    let populated = size_bytes.is_some() || size_unknown;
    Dimm {
        handle: s.handle,
        locator: s.string(0x10),
        bank_locator: s.string(0x11),
        size_bytes,
        size_unknown,
        memory_type: s.byte(0x12).and_then(memory_type_name).map(str::to_string),
        speed_mts: speed(0x15, 0x54),
        configured_speed_mts: if populated { speed(0x20, 0x58) } else { None },
        manufacturer: s.string(0x17),
        part_number: s.string(0x1A),
        rank: s.byte(0x1B).map(|b| b & 0x0F).filter(|&r| r != 0),
        socket: None,
        channel: None,
    }
}

fn memory_type_name(b: u8) -> Option<&'static str> {
    Some(match b {
        0x12 => "DDR",
        0x13 => "DDR2",
        0x18 => "DDR3",
        0x1A => "DDR4",
        0x1B => "LPDDR",
        0x1C => "LPDDR2",
        0x1D => "LPDDR3",
        0x1E => "LPDDR4",
        0x1F => "Logical non-volatile device",
        0x20 => "HBM",
        0x21 => "HBM2",
        0x22 => "DDR5",
        0x23 => "LPDDR5",
        0x24 => "HBM3",
        0x0F => "SDRAM",
        _ => return None,
    })
}

/// Socket and channel from a slot's locator strings, for the common schemes
/// (`P1-DIMMA1`, `CPU1_DIMM_A1`, `PROC 1 DIMM 3`, bank `P0_Node0_Channel0_Dimm0`,
/// `P0 CHANNEL A`, `ChannelA-DIMM0`). `None` where the scheme is not known.
pub fn infer_slot(locator: Option<&str>, bank: Option<&str>) -> (Option<u32>, Option<String>) {
    let text = format!("{} {}", bank.unwrap_or(""), locator.unwrap_or("")).to_ascii_uppercase();
    let tokens: Vec<&str> =
        text.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let num = |t: &str| t.parse::<u32>().ok();
    let mut socket = None;
    let mut channel = None;
    for (i, t) in tokens.iter().enumerate() {
        let next = tokens.get(i + 1).copied();
        // Socket: CPU1, PROC 1, SOCKET 0, P0 / P1 (a whole token).
        for prefix in ["CPU", "PROC", "SOCKET", "P"] {
            if let Some(rest) = t.strip_prefix(prefix) {
                let n = if rest.is_empty() { next.and_then(num) } else { num(rest) };
                if let (Some(n), None) = (n, socket) {
                    if rest.is_empty() && prefix == "P" {
                        continue;
                    }
                    socket = Some(n);
                }
            }
        }
        if channel.is_none() {
            if let Some(rest) = t.strip_prefix("CHANNEL") {
                let c =
                    if rest.is_empty() { next.map(str::to_string) } else { Some(rest.to_string()) };
                channel = c.filter(|c| c.len() <= 2);
            } else if let Some(rest) = t.strip_prefix("DIMM") {
                // DIMMA1 / DIMM_A1: the letter is the channel.
                let r = if rest.is_empty() { next.unwrap_or("") } else { rest };
                let mut ch = r.chars();
                if let (Some(l), Some(d)) = (ch.next(), ch.next()) {
                    if l.is_ascii_alphabetic() && d.is_ascii_digit() {
                        channel = Some(l.to_string());
                    }
                }
            }
        }
    }
    // CPU numbering in locators is often 1-based (CPU1, PROC 1, P1-DIMM):
    // normalised by the caller once every slot is known.
    (socket, channel)
}

/// A slot locator that numbers positions rather than naming a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    /// Huawei/Inspur `DIMM000`: the digits are CPU, channel, slot (0-based).
    Huawei { socket: u32, channel: u32 },
    /// Dell `A1`, `B12`: the letter is the processor (A = the first), the
    /// number the slot; the first slots of a processor are one per channel
    /// (`A1..A6` white tabs on a 6-channel board), so the slot number runs
    /// through the channels and then starts again.
    Dell { socket: u32, slot: u32 },
    /// HPE `PROC 1 DIMM 1`: the slot within the processor; a channel's
    /// slots sit side by side (slots 1-2 one channel, 3-4 the next).
    Hpe { slot: u32 },
    /// Lenovo `DIMM 1`..`DIMM 24`: numbered over the whole board, the first
    /// processor's slots first, a channel's slots side by side.
    Lenovo { slot: u32 },
}

fn position_of(d: &Dimm) -> Option<Position> {
    let loc = d.locator.as_deref()?.trim().to_ascii_uppercase();
    let tokens: Vec<&str> =
        loc.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let num = |t: &str| t.parse::<u32>().ok().filter(|_| t.bytes().all(|b| b.is_ascii_digit()));
    match tokens.as_slice() {
        [t] if t.len() == 7 && t.starts_with("DIMM") && num(&t[4..]).is_some() => {
            let b = t.as_bytes();
            Some(Position::Huawei { socket: (b[4] - b'0') as u32, channel: (b[5] - b'0') as u32 })
        }
        [t] if (2..=3).contains(&t.len()) && (b'A'..=b'H').contains(&t.as_bytes()[0]) => {
            let slot = num(&t[1..]).filter(|n| *n >= 1)?;
            Some(Position::Dell { socket: (t.as_bytes()[0] - b'A') as u32, slot })
        }
        ["PROC", _, "DIMM", n] => Some(Position::Hpe { slot: num(n).filter(|n| *n >= 1)? }),
        ["DIMM", n] => Some(Position::Lenovo { slot: num(n).filter(|n| *n >= 1)? }),
        _ => None,
    }
}

/// DIMMs per channel assumed for `slots` slots per processor: two on the
/// 12-, 16- and 24-slot boards of the slot-numbering vendors (6 or 8 or 12
/// channels with two slots each), one otherwise.
fn dimms_per_channel(slots: u32) -> u32 {
    if slots >= 12 && slots.is_multiple_of(2) {
        2
    } else {
        1
    }
}

/// A channel layout assumed from slot positions: `slots` slots per
/// processor taken as channels of `dimms_per_channel` slots, the vendor's
/// usual layout. The report says it in the memory's notes with the front
/// end's option for the peak ([`MemoryPopulation::say_assumed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct AssumedLayout {
    pub slots: u32,
    pub dimms_per_channel: u32,
}

impl AssumedLayout {
    /// The note, naming the front end's option that gives the peak.
    fn note(self, peak_gbs: &str) -> String {
        let AssumedLayout { slots, dimms_per_channel: dpc } = self;
        format!(
            "channels inferred from slot positions ({slots} slots per processor taken as {} \
             channel(s) of {dpc} slot(s), the vendor's usual layout); give {peak_gbs} if \
             this board differs",
            slots / dpc
        )
    }
}

/// Gives socket and channel to the slots whose locator numbers positions
/// (see [`Position`]), when every such slot follows one scheme; returns
/// the layouts it assumed. Slots already placed are left.
fn position_slots(dimms: &mut [Dimm], processor_sockets: u32) -> Vec<AssumedLayout> {
    let open: Vec<usize> = (0..dimms.len()).filter(|&i| dimms[i].channel.is_none()).collect();
    let pos: Vec<Option<Position>> = open.iter().map(|&i| position_of(&dimms[i])).collect();
    if open.is_empty() || pos.iter().any(Option::is_none) {
        return Vec::new();
    }
    let pos: Vec<Position> = pos.into_iter().flatten().collect();
    let same = |a: &Position, b: &Position| std::mem::discriminant(a) == std::mem::discriminant(b);
    if !pos.iter().all(|p| same(p, &pos[0])) {
        return Vec::new();
    }
    // The socket of each slot first, then the slots each socket has.
    let lenovo_slots = (open.len() as u32 / processor_sockets.max(1)).max(1);
    let socket_of: Vec<Option<u32>> = open
        .iter()
        .zip(&pos)
        .map(|(&i, p)| match *p {
            Position::Huawei { socket, .. } | Position::Dell { socket, .. } => Some(socket),
            // `PROC n` gave it (made 0-based by the caller).
            Position::Hpe { .. } => dimms[i].socket,
            Position::Lenovo { slot } => Some((slot - 1) / lenovo_slots),
        })
        .collect();
    let mut slots_of: BTreeMap<Option<u32>, u32> = BTreeMap::new();
    for s in &socket_of {
        *slots_of.entry(*s).or_default() += 1;
    }
    let mut assumed = BTreeSet::new();
    for (k, &i) in open.iter().enumerate() {
        let socket = socket_of[k];
        let slots = slots_of[&socket];
        let dpc = dimms_per_channel(slots);
        let channel = match pos[k] {
            Position::Huawei { channel, .. } => channel,
            Position::Dell { slot, .. } => {
                assumed.insert((slots, dpc));
                (slot - 1) % (slots / dpc).max(1)
            }
            Position::Hpe { slot } => {
                assumed.insert((slots, dpc));
                (slot - 1) / dpc
            }
            Position::Lenovo { slot } => {
                assumed.insert((slots, dpc));
                ((slot - 1) % lenovo_slots) / dpc
            }
        };
        dimms[i].socket = socket;
        dimms[i].channel = Some(channel.to_string());
    }
    assumed
        .into_iter()
        .map(|(slots, dimms_per_channel)| AssumedLayout { slots, dimms_per_channel })
        .collect()
}

/// Memory behind one socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SocketMemory {
    /// Socket index, 0-based.
    pub socket: u32,
    pub slots: u32,
    pub populated_slots: u32,
    pub total_bytes: u64,
    /// Channels seen in the locators, and those with at least one module.
    pub channels: Vec<String>,
    pub populated_channels: Vec<String>,
    /// Distinct module sizes, bytes.
    pub module_sizes_bytes: Vec<u64>,
    /// The slowest configured speed among the modules, MT/s.
    pub configured_speed_mts: Option<u32>,
    /// populated channels x MT/s x 8 bytes, GB/s (1e9 B/s).
    pub peak_gbs: Option<f64>,
}

/// The memory population of the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryPopulation {
    /// `3.3` etc. when the entry point was readable.
    pub smbios_version: Option<String>,
    /// Processor (type 4) records: the number of sockets the firmware describes.
    pub processor_sockets: u32,
    pub dimms: Vec<Dimm>,
    /// True when every slot's socket and channel could be inferred.
    pub locator_scheme_known: bool,
    /// Per socket; empty when the scheme is unknown.
    pub sockets: Vec<SocketMemory>,
    /// What was assumed or could not be inferred, as the report says it
    /// (the assumed layouts first, once the report has said them).
    pub notes: Vec<String>,
    /// Channel layouts assumed from slot positions and not yet said in
    /// `notes` (the report says them there with the front end's option).
    #[serde(skip)]
    pub assumed: Vec<AssumedLayout>,
}

impl MemoryPopulation {
    /// Builds the summary from a raw table (and the entry point, optional).
    pub fn from_table(table: &[u8], entry: Option<&[u8]>) -> Result<Self, SmbiosError> {
        let structures = parse_table(table)?;
        let processor_sockets = structures.iter().filter(|s| s.kind == 4).count() as u32;
        let mut dimms: Vec<Dimm> =
            structures.iter().filter(|s| s.kind == 17).map(parse_memory_device).collect();
        let mut notes = Vec::new();
        for d in &mut dimms {
            let (s, c) = infer_slot(d.locator.as_deref(), d.bank_locator.as_deref());
            d.socket = s;
            d.channel = c;
        }
        // One-based socket numbering (CPU1/CPU2, P1/P2) becomes 0-based.
        let seen: BTreeSet<u32> = dimms.iter().filter_map(|d| d.socket).collect();
        if !seen.is_empty() && !seen.contains(&0) {
            for d in &mut dimms {
                d.socket = d.socket.map(|s| s - 1);
            }
        }
        // Slot-numbered schemes (Dell `A1`, HPE `PROC 1 DIMM 1`, Lenovo
        // `DIMM 1`, Huawei `DIMM000`) need every slot before a channel can
        // be given to one.
        let assumed = position_slots(&mut dimms, processor_sockets);
        // A one-socket machine needs no socket in the locator.
        if processor_sockets <= 1 && seen.is_empty() {
            for d in dimms.iter_mut().filter(|d| d.socket.is_none()) {
                d.socket = Some(0);
            }
        }
        let locator_scheme_known =
            !dimms.is_empty() && dimms.iter().all(|d| d.socket.is_some() && d.channel.is_some());
        if dimms.is_empty() {
            notes.push("the table has no Memory Device (type 17) records".to_string());
        } else if !locator_scheme_known {
            let example = dimms
                .iter()
                .find(|d| d.socket.is_none() || d.channel.is_none())
                .map(|d| {
                    format!(
                        "'{}' / '{}'",
                        d.locator.as_deref().unwrap_or("-"),
                        d.bank_locator.as_deref().unwrap_or("-")
                    )
                })
                .unwrap_or_default();
            notes.push(format!(
                "slot locators such as {example} follow a scheme numaprobe does not know: \
                 channels per socket and the theoretical peak are not inferred"
            ));
        }
        let sockets = if locator_scheme_known { per_socket(&dimms) } else { Vec::new() };
        let smbios_version = entry.and_then(entry_version);
        Ok(MemoryPopulation {
            smbios_version,
            processor_sockets,
            dimms,
            locator_scheme_known,
            sockets,
            notes,
            assumed,
        })
    }

    /// Says the assumed layouts at the head of `notes`, naming the front
    /// end's option that gives the peak instead (`peak_gbs`); once.
    pub fn say_assumed(&mut self, peak_gbs: &str) {
        let said: Vec<String> =
            std::mem::take(&mut self.assumed).into_iter().map(|a| a.note(peak_gbs)).collect();
        self.notes.splice(0..0, said);
    }

    /// Theoretical peak per socket, GB/s (1e9 B/s), where it can be known.
    pub fn peak_gbs_per_socket(&self) -> BTreeMap<u32, f64> {
        self.sockets.iter().filter_map(|s| Some((s.socket, s.peak_gbs?))).collect()
    }

    /// The theoretical peak of DRAM node `node` (a node with CPUs and
    /// memory), GB/s: the one definition numaprobe uses. Each package whose
    /// CPUs the node holds gives its socket's peak shared evenly among that
    /// package's DRAM nodes (SNC/NPS split a socket's channels evenly);
    /// a node spanning packages (`numa=off`, firmware interleave) adds
    /// them up. Memory-only nodes (CXL, HBM) are not DIMMs of type 17:
    /// `None`, as for a package without a known peak. A table describing
    /// one socket on a one-package machine counts for that package
    /// whatever its index.
    pub fn node_peak_gbs(&self, topo: &topo::Topology, node: u32) -> Option<f64> {
        let peaks = self.peak_gbs_per_socket();
        let is_dram = |n: &topo::Node| !n.cpus.is_empty() && n.mem_total_bytes > 0;
        let n = topo.node(node).filter(|n| is_dram(n))?;
        let mut total = 0.0;
        let mut any = false;
        for pkg in topo.packages.iter().filter(|p| !p.cpus.is_disjoint(&n.cpus)) {
            let peak = match peaks.get(&pkg.id) {
                Some(&p) => p,
                None if peaks.len() == 1 && topo.packages.len() == 1 => {
                    *peaks.values().next().expect("one peak")
                }
                None => return None,
            };
            let share = topo
                .nodes
                .iter()
                .filter(|m| is_dram(m) && !m.cpus.is_disjoint(&pkg.cpus))
                .count()
                .max(1);
            total += peak / share as f64;
            any = true;
        }
        (any && total > 0.0).then_some(total)
    }

    pub fn populated(&self) -> impl Iterator<Item = &Dimm> {
        self.dimms.iter().filter(|d| d.populated())
    }
}

fn per_socket(dimms: &[Dimm]) -> Vec<SocketMemory> {
    let mut by_socket: BTreeMap<u32, Vec<&Dimm>> = BTreeMap::new();
    for d in dimms {
        if let Some(s) = d.socket {
            by_socket.entry(s).or_default().push(d);
        }
    }
    by_socket
        .into_iter()
        .map(|(socket, ds)| {
            let channels: BTreeSet<String> = ds.iter().filter_map(|d| d.channel.clone()).collect();
            let pop: Vec<&&Dimm> = ds.iter().filter(|d| d.populated()).collect();
            let populated_channels: BTreeSet<String> =
                pop.iter().filter_map(|d| d.channel.clone()).collect();
            let sizes: BTreeSet<u64> = pop.iter().filter_map(|d| d.size_bytes).collect();
            let speed = pop.iter().filter_map(|d| d.configured_speed_mts.or(d.speed_mts)).min();
            let peak_gbs =
                speed.map(|mts| populated_channels.len() as f64 * mts as f64 * 1e6 * 8.0 / 1e9);
            SocketMemory {
                socket,
                slots: ds.len() as u32,
                populated_slots: pop.len() as u32,
                total_bytes: pop.iter().filter_map(|d| d.size_bytes).sum(),
                channels: channels.into_iter().collect(),
                populated_channels: populated_channels.into_iter().collect(),
                module_sizes_bytes: sizes.into_iter().collect(),
                configured_speed_mts: speed,
                peak_gbs: if pop.is_empty() { None } else { peak_gbs },
            }
        })
        .collect()
}

fn entry_version(e: &[u8]) -> Option<String> {
    if e.starts_with(b"_SM3_") && e.len() > 9 {
        Some(format!("{}.{}.{}", e[7], e[8], e[9]))
    } else if e.starts_with(b"_SM_") && e.len() > 7 {
        Some(format!("{}.{}", e[6], e[7]))
    } else {
        None
    }
}

/// Reads and summarises the machine's table under `root`.
pub fn read(root: &SysRoot) -> Read<MemoryPopulation> {
    let path = root.path(DMI_TABLE);
    // An SMBIOS table is at most 64 KiB (2.x) or a few hundred KiB (3.x).
    let table = match topo::fs::read_bounded(&path, 16 << 20) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::Absent,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Read::Unreadable(format!("{}: permission denied (needs root)", path.display()))
        }
        Err(e) => return Read::Unreadable(format!("{}: {e}", path.display())),
    };
    let entry = topo::fs::read_bounded(&root.path(DMI_ENTRY), 4096).ok();
    match MemoryPopulation::from_table(&table, entry.as_deref()) {
        Ok(m) => Read::Value(m),
        Err(e) => Read::Unreadable(format!("{}: {e}", path.display())),
    }
}

/// Theoretical peak per socket (0-based socket index -> GB/s, 1e9 B/s)
/// under `root`: for `bw` to state the measured fraction. Empty when the
/// table has no usable records or the locator scheme is unknown.
pub fn peak_gbs_per_socket(root: &SysRoot) -> Read<BTreeMap<u32, f64>> {
    read(root).map(|m| m.peak_gbs_per_socket())
}

/// Builds table bytes in tests (here and in the rules' tests).
#[doc(hidden)]
pub mod build {
    /// A structure: type, handle, formatted area after the 4-byte header, strings.
    pub fn structure(kind: u8, handle: u16, body: &[u8], strings: &[&str]) -> Vec<u8> {
        let mut v = vec![kind, (4 + body.len()) as u8];
        v.extend_from_slice(&handle.to_le_bytes());
        v.extend_from_slice(body);
        if strings.is_empty() {
            v.extend_from_slice(&[0, 0]);
        } else {
            for s in strings {
                v.extend_from_slice(s.as_bytes());
                v.push(0);
            }
            v.push(0);
        }
        v
    }

    /// A SMBIOS 3.x type 17 record (0x5C bytes): size in MiB (0 = empty),
    /// rated and configured MT/s, memory type byte (0x1A DDR4, 0x22 DDR5).
    pub fn dimm(
        handle: u16,
        locator: &str,
        bank: &str,
        size_mib: u32,
        speed: u16,
        configured: u16,
        mtype: u8,
    ) -> Vec<u8> {
        let mut f = vec![0u8; 0x5C];
        let put16 =
            |f: &mut Vec<u8>, off: usize, v: u16| f[off..off + 2].copy_from_slice(&v.to_le_bytes());
        let put32 =
            |f: &mut Vec<u8>, off: usize, v: u32| f[off..off + 4].copy_from_slice(&v.to_le_bytes());
        put16(&mut f, 0x08, 72);
        put16(&mut f, 0x0A, 64);
        if size_mib >= 0x7FFF {
            put16(&mut f, 0x0C, 0x7FFF);
            put32(&mut f, 0x1C, size_mib);
        } else {
            put16(&mut f, 0x0C, size_mib as u16);
        }
        f[0x0E] = 0x09; // DIMM
        f[0x10] = 1;
        f[0x11] = 2;
        f[0x12] = mtype;
        put16(&mut f, 0x15, speed);
        f[0x1B] = if size_mib > 0 { 2 } else { 0 };
        put16(&mut f, 0x20, configured);
        structure(17, handle, &f[4..], &[locator, bank])
    }

    pub fn processor(handle: u16, socket: &str) -> Vec<u8> {
        let mut f = [0u8; 0x30];
        f[0x04] = 1;
        structure(4, handle, &f[4..], &[socket])
    }

    pub fn end() -> Vec<u8> {
        structure(127, 0xFFFF, &[], &[])
    }
}

/// Theoretical peak of one DRAM node (a node with CPUs and memory), GB/s:
/// the mean of [`MemoryPopulation::node_peak_gbs`] over the DRAM nodes,
/// which on the symmetric layouts firmware builds is every node's peak
/// (the sockets' peaks added up and shared evenly among those nodes).
/// `None` when the DIMM table gives no peak for them.
pub fn peak_gbs_per_dram_node(root: &SysRoot, topo: &topo::Topology) -> Option<f64> {
    let memory = read(root);
    let m = memory.value()?;
    let peaks: Vec<f64> = topo
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty() && n.mem_total_bytes > 0)
        .map(|n| m.node_peak_gbs(topo, n.id))
        .collect::<Option<_>>()?;
    (!peaks.is_empty()).then(|| peaks.iter().sum::<f64>() / peaks.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::build::*;
    use super::*;

    fn two_socket_table(populated_per_socket: usize) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend(processor(1, "CPU1"));
        t.extend(processor(2, "CPU2"));
        let mut h = 0x10;
        for cpu in 1..=2 {
            for (i, ch) in ["A", "B", "C", "D", "E", "F", "G", "H"].iter().enumerate() {
                let size = if i < populated_per_socket { 32768 } else { 0 };
                t.extend(dimm(
                    h,
                    &format!("P{cpu}-DIMM{ch}1"),
                    &format!("P{}_Node0_Channel{i}_Dimm0", cpu - 1),
                    size,
                    3200,
                    2933,
                    0x1A,
                ));
                h += 1;
            }
        }
        t.extend(end());
        t
    }

    #[test]
    fn half_filled_channels_halve_the_peak() {
        let m = MemoryPopulation::from_table(&two_socket_table(4), None).unwrap();
        assert_eq!(m.processor_sockets, 2);
        assert_eq!(m.dimms.len(), 16);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(m.sockets.len(), 2);
        let s0 = &m.sockets[0];
        assert_eq!(s0.slots, 8);
        assert_eq!(s0.populated_slots, 4);
        assert_eq!(s0.channels.len(), 8);
        // The bank locator's Channel0..7 wins over the slot letter.
        assert_eq!(s0.populated_channels, vec!["0", "1", "2", "3"]);
        assert_eq!(s0.configured_speed_mts, Some(2933));
        assert_eq!(s0.total_bytes, (4 * 32) << 30);
        // 4 channels x 2933 MT/s x 8 B = 93.856 GB/s
        assert!((s0.peak_gbs.unwrap() - 93.856).abs() < 1e-9);
        let full = MemoryPopulation::from_table(&two_socket_table(8), None).unwrap();
        assert!((full.peak_gbs_per_socket()[&1] - 187.712).abs() < 1e-9);
        let d = &m.dimms[0];
        assert_eq!(d.memory_type.as_deref(), Some("DDR4"));
        assert_eq!(d.speed_mts, Some(3200));
        assert_eq!(d.rank, Some(2));
        assert_eq!(d.socket, Some(0));
        assert_eq!(d.channel.as_deref(), Some("0"));
    }

    #[test]
    fn extended_size_and_speed_fields() {
        let mut rec = dimm(5, "DIMM_A1", "BANK 0", 0x7FFF, 0xFFFF, 0xFFFF, 0x22);
        // Extended speeds at 0x54/0x58 (formatted offset; +0 since header is included).
        rec[0x54..0x58].copy_from_slice(&8000u32.to_le_bytes());
        rec[0x58..0x5C].copy_from_slice(&6400u32.to_le_bytes());
        rec[0x1C..0x20].copy_from_slice(&(128 * 1024u32).to_le_bytes());
        let mut t = processor(1, "CPU0");
        t.extend(rec);
        t.extend(end());
        let m = MemoryPopulation::from_table(&t, None).unwrap();
        let d = &m.dimms[0];
        assert_eq!(d.size_bytes, Some(128 << 30));
        assert_eq!(d.speed_mts, Some(8000));
        assert_eq!(d.configured_speed_mts, Some(6400));
        assert_eq!(d.memory_type.as_deref(), Some("DDR5"));
        assert_eq!((d.socket, d.channel.as_deref()), (Some(0), Some("A")));
    }

    #[test]
    fn kib_granularity_and_smbios_2_short_record() {
        // SMBIOS 2.3 record: 0x1B bytes, no extended size or configured speed.
        let mut f = vec![0u8; 0x1B - 4];
        f[0x0C - 4..0x0E - 4].copy_from_slice(&(0x8000u16 | 512).to_le_bytes());
        f[0x10 - 4] = 1;
        f[0x11 - 4] = 0;
        f[0x15 - 4..0x17 - 4].copy_from_slice(&667u16.to_le_bytes());
        let mut t = structure(17, 3, &f, &["DIMM0"]);
        t.extend(end());
        let m = MemoryPopulation::from_table(&t, None).unwrap();
        let d = &m.dimms[0];
        assert_eq!(d.size_bytes, Some(512 * 1024));
        assert_eq!(d.speed_mts, Some(667));
        assert_eq!(d.configured_speed_mts, None);
        assert_eq!(d.bank_locator, None);
        assert_eq!(d.rank, None);
    }

    #[test]
    fn unknown_locator_scheme_is_said_not_guessed() {
        let mut t = processor(1, "CPU1");
        t.extend(processor(2, "CPU2"));
        t.extend(dimm(0x10, "Memory Slot 7", "Not Specified", 16384, 3200, 3200, 0x1A));
        t.extend(dimm(0x11, "Memory Slot 8", "Not Specified", 16384, 3200, 3200, 0x1A));
        t.extend(end());
        let m = MemoryPopulation::from_table(&t, None).unwrap();
        assert!(!m.locator_scheme_known);
        assert!(m.sockets.is_empty());
        assert!(m.peak_gbs_per_socket().is_empty());
        assert!(m.notes[0].contains("'Memory Slot 7'"), "{:?}", m.notes);
    }

    #[test]
    fn peak_from_a_table_under_a_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        assert_eq!(peak_gbs_per_socket(&root), Read::Absent);
        let p = dir.path().join(DMI_TABLE);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, two_socket_table(6)).unwrap();
        let peaks = peak_gbs_per_socket(&root);
        // 6 channels x 2933 MT/s x 8 B
        assert!((peaks.value().unwrap()[&0] - 140.784).abs() < 1e-9, "{peaks:?}");
        std::fs::write(&p, &two_socket_table(6)[..50]).unwrap();
        assert!(matches!(peak_gbs_per_socket(&root), Read::Unreadable(_)));
    }

    #[test]
    fn peak_per_dram_node_shares_the_sockets_among_nodes_with_cpus_and_memory() {
        use topo::synthetic::Machine;
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        let two_sockets = |nodes: &[(u32, &str, u64)]| {
            let mut m =
                Machine::new(topo::Vendor::Intel, "Xeon").package(0, "0-3").package(1, "4-7");
            for &(id, cpus, mem) in nodes {
                m = m.node(id, cpus, mem);
            }
            m.build()
        };
        let snc2 = two_sockets(&[
            (0, "0-1", 8 << 30),
            (1, "2-3", 8 << 30),
            (2, "4-5", 8 << 30),
            (3, "6-7", 8 << 30),
            (4, "", 64 << 30),
        ]);
        assert_eq!(peak_gbs_per_dram_node(&root, &snc2), None, "no table, no peak");
        let p = dir.path().join(DMI_TABLE);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, two_socket_table(6)).unwrap();
        // 2 sockets x 140.784 GB/s shared by the 4 DRAM nodes; the CPU-less
        // node 4 (CXL-like) is not a DIMM node.
        assert!((peak_gbs_per_dram_node(&root, &snc2).unwrap() - 70.392).abs() < 1e-9);
        let numa_off = two_sockets(&[(0, "0-7", 32 << 30)]);
        assert!((peak_gbs_per_dram_node(&root, &numa_off).unwrap() - 281.568).abs() < 1e-9);
        // per node: one SNC2 node has half its socket; a CPU-only or a
        // memory-only node has no DIMM peak
        let m = read(&root).value().cloned().unwrap();
        assert!((m.node_peak_gbs(&snc2, 2).unwrap() - 70.392).abs() < 1e-9);
        assert_eq!(m.node_peak_gbs(&snc2, 4), None);
        let with_cpu_only = two_sockets(&[(0, "0-3", 8 << 30), (1, "4-5", 8 << 30), (2, "6-7", 0)]);
        assert!((m.node_peak_gbs(&with_cpu_only, 0).unwrap() - 140.784).abs() < 1e-9);
        assert!(
            (m.node_peak_gbs(&with_cpu_only, 1).unwrap() - 140.784).abs() < 1e-9,
            "the CPU-only node 2 takes no share of socket 1"
        );
        assert_eq!(m.node_peak_gbs(&with_cpu_only, 2), None);
    }

    #[test]
    fn entry_point_versions() {
        assert_eq!(entry_version(b"_SM3_\x00\x18\x03\x03\x00\x01").as_deref(), Some("3.3.0"));
        assert_eq!(entry_version(b"_SM_\x00\x1f\x02\x08").as_deref(), Some("2.8"));
        assert_eq!(entry_version(b"junk"), None);
    }

    #[test]
    fn malformed_tables_are_errors_not_panics() {
        let good = two_socket_table(2);
        // Every truncation either parses (cut at a structure boundary) or errors.
        for cut in 0..good.len() {
            let _ = MemoryPopulation::from_table(&good[..cut], None);
        }
        assert!(matches!(parse_table(&[17, 0x5C, 0]), Err(SmbiosError::TruncatedHeader { .. })));
        assert!(matches!(parse_table(&[17, 2, 0, 0, 0, 0]), Err(SmbiosError::BadLength { .. })));
        assert!(matches!(
            parse_table(&[17, 0x5C, 0, 0, 1, 2, 3]),
            Err(SmbiosError::TruncatedFormatted { .. })
        ));
        assert!(matches!(
            parse_table(&[17, 4, 0, 0, b'a', b'b']),
            Err(SmbiosError::UnterminatedStrings { .. })
        ));
        let cut = &good[..good.len() - 10];
        assert!(parse_table(cut).is_err());
        // Garbage bytes never panic.
        let mut x: u32 = 12345;
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..64)
                .map(|_| {
                    x = x.wrapping_mul(1103515245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            let _ = MemoryPopulation::from_table(&bytes, Some(&bytes));
        }
    }

    #[test]
    fn locator_schemes() {
        assert_eq!(
            infer_slot(Some("P2-DIMMC1"), Some("P1_Node1_Channel2_Dimm0")),
            (Some(1), Some("2".into()))
        );
        assert_eq!(infer_slot(Some("CPU1_DIMM_B2"), Some("BANK 1")), (Some(1), Some("B".into())));
        assert_eq!(infer_slot(Some("DIMM 3"), Some("P0 CHANNEL A")), (Some(0), Some("A".into())));
        assert_eq!(infer_slot(Some("ChannelB-DIMM0"), Some("BANK 2")), (None, Some("B".into())));
        assert_eq!(infer_slot(Some("A1"), None), (None, None));
    }

    /// A table of `sockets` processors and the given slots (locator,
    /// populated), every module 32 GiB DDR4 at 2933 MT/s, the bank locator
    /// `Not Specified` as the slot-numbering vendors write it.
    fn vendor_table(sockets: u16, slots: &[(String, bool)]) -> MemoryPopulation {
        let mut t = Vec::new();
        for p in 0..sockets {
            t.extend(processor(1 + p, &format!("CPU{}", p + 1)));
        }
        for (h, (loc, pop)) in slots.iter().enumerate() {
            let size = if *pop { 32768 } else { 0 };
            t.extend(dimm(0x100 + h as u16, loc, "Not Specified", size, 3200, 2933, 0x1A));
        }
        t.extend(end());
        MemoryPopulation::from_table(&t, None).unwrap()
    }

    fn slot_of(m: &MemoryPopulation, loc: &str) -> (Option<u32>, Option<String>) {
        let d = m.dimms.iter().find(|d| d.locator.as_deref() == Some(loc)).unwrap();
        (d.socket, d.channel.clone())
    }

    fn peak(m: &MemoryPopulation, socket: u32) -> f64 {
        m.peak_gbs_per_socket()[&socket]
    }

    /// 2933 MT/s x 8 bytes per populated channel, GB/s.
    const PER_CHANNEL: f64 = 2933.0 * 8.0 / 1000.0;

    #[test]
    fn dell_letters_are_processors_and_the_first_slots_one_per_channel() {
        // R740-like: A1..A12 on the first processor, B1..B12 on the second,
        // 6 channels of 2 slots; A1..A6 are the channels' first slots.
        let slots = |pop: &dyn Fn(u32) -> bool| {
            let mut v = Vec::new();
            for l in ["A", "B"] {
                for n in 1..=12 {
                    v.push((format!("{l}{n}"), pop(n)));
                }
            }
            v
        };
        let m = vendor_table(2, &slots(&|n| n <= 6));
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "A1"), (Some(0), Some("0".into())));
        assert_eq!(slot_of(&m, "B6"), (Some(1), Some("5".into())));
        // A7 is the second slot of A1's channel
        assert_eq!(slot_of(&m, "A7"), (Some(0), Some("0".into())));
        assert!((peak(&m, 0) - 6.0 * PER_CHANNEL).abs() < 1e-9);
        assert!((peak(&m, 1) - 6.0 * PER_CHANNEL).abs() < 1e-9);
        // Every slot filled: still 6 channels per processor.
        let full = vendor_table(2, &slots(&|_| true));
        assert!((peak(&full, 0) - 6.0 * PER_CHANNEL).abs() < 1e-9);
        // Two modules in one channel count once.
        let two = vendor_table(2, &slots(&|n| n == 1 || n == 7));
        assert!((peak(&two, 0) - PER_CHANNEL).abs() < 1e-9);
        // The assumption is kept for the report to say.
        assert_eq!(m.assumed, vec![AssumedLayout { slots: 12, dimms_per_channel: 2 }]);
        let mut said = m.clone();
        said.say_assumed("the peak option");
        assert!(said.notes[0].contains("12 slots per processor taken as 6"), "{:?}", said.notes);
        assert!(said.notes[0].ends_with("give the peak option if this board differs"));
        assert!(said.assumed.is_empty());
    }

    #[test]
    fn hpe_proc_dimm_pairs_share_a_channel() {
        let mut v = Vec::new();
        for p in 1..=2 {
            for n in 1..=12 {
                v.push((format!("PROC {p} DIMM {n}"), n % 2 == 1));
            }
        }
        let m = vendor_table(2, &v);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "PROC 1 DIMM 1"), (Some(0), Some("0".into())));
        assert_eq!(slot_of(&m, "PROC 1 DIMM 2"), (Some(0), Some("0".into())));
        assert_eq!(slot_of(&m, "PROC 2 DIMM 12"), (Some(1), Some("5".into())));
        assert!((peak(&m, 1) - 6.0 * PER_CHANNEL).abs() < 1e-9);
        // Slots 1 and 2 filled: one channel.
        let v2: Vec<_> = v
            .iter()
            .map(|(l, _)| (l.clone(), l.ends_with("DIMM 1") || l.ends_with("DIMM 2")))
            .collect();
        assert!((peak(&vendor_table(2, &v2), 0) - PER_CHANNEL).abs() < 1e-9);
    }

    #[test]
    fn lenovo_board_numbering_splits_over_the_processors() {
        let v: Vec<_> = (1..=24).map(|n| (format!("DIMM {n}"), true)).collect();
        let m = vendor_table(2, &v);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "DIMM 1"), (Some(0), Some("0".into())));
        assert_eq!(slot_of(&m, "DIMM 12"), (Some(0), Some("5".into())));
        assert_eq!(slot_of(&m, "DIMM 13"), (Some(1), Some("0".into())));
        assert_eq!(m.sockets.len(), 2);
        assert!((peak(&m, 1) - 6.0 * PER_CHANNEL).abs() < 1e-9);
        // One processor, 8 slots: one slot per channel.
        let one: Vec<_> = (1..=8).map(|n| (format!("DIMM {n}"), n <= 4)).collect();
        let m = vendor_table(1, &one);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert!((peak(&m, 0) - 4.0 * PER_CHANNEL).abs() < 1e-9);
    }

    #[test]
    fn supermicro_inspur_and_huawei_name_their_channels() {
        let v: Vec<_> = ["P1-DIMMA1", "P1-DIMMB1", "P1-DIMMB2", "P2-DIMMA1"]
            .iter()
            .map(|l| (l.to_string(), true))
            .collect();
        let m = vendor_table(2, &v);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "P1-DIMMB2"), (Some(0), Some("B".into())));
        assert_eq!(slot_of(&m, "P2-DIMMA1"), (Some(1), Some("A".into())));
        assert!((peak(&m, 0) - 2.0 * PER_CHANNEL).abs() < 1e-9);

        let v: Vec<_> = ["CPU0_DIMMA0", "CPU0_DIMMB0", "CPU1_DIMMA0", "CPU1_DIMMA1"]
            .iter()
            .map(|l| (l.to_string(), true))
            .collect();
        let m = vendor_table(2, &v);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "CPU1_DIMMA1"), (Some(1), Some("A".into())));
        assert!((peak(&m, 0) - 2.0 * PER_CHANNEL).abs() < 1e-9);
        assert!((peak(&m, 1) - PER_CHANNEL).abs() < 1e-9);

        // Huawei DIMM<cpu><channel><slot>
        let v: Vec<_> = ["DIMM000", "DIMM001", "DIMM010", "DIMM020", "DIMM100"]
            .iter()
            .map(|l| (l.to_string(), true))
            .collect();
        let m = vendor_table(2, &v);
        assert!(m.locator_scheme_known, "{:?}", m.notes);
        assert_eq!(slot_of(&m, "DIMM020"), (Some(0), Some("2".into())));
        assert_eq!(slot_of(&m, "DIMM100"), (Some(1), Some("0".into())));
        assert!((peak(&m, 0) - 3.0 * PER_CHANNEL).abs() < 1e-9);
        assert!((peak(&m, 1) - PER_CHANNEL).abs() < 1e-9);
    }

    #[test]
    fn an_unknown_or_mixed_scheme_gives_no_peak() {
        let v: Vec<_> = ["Slot 7", "Slot 8"].iter().map(|l| (l.to_string(), true)).collect();
        let m = vendor_table(2, &v);
        assert!(!m.locator_scheme_known);
        assert!(m.peak_gbs_per_socket().is_empty());
        // Dell and Lenovo names on one board: not guessed.
        let v: Vec<_> = ["A1", "DIMM 2"].iter().map(|l| (l.to_string(), true)).collect();
        let m = vendor_table(2, &v);
        assert!(!m.locator_scheme_known, "{:?}", m.dimms);
    }
}
