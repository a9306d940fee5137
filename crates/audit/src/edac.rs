//! DIMM health from the kernel's EDAC memory controllers
//! (`/sys/devices/system/edac/mc/mcN/`): per controller its corrected and
//! uncorrected error counts, and per DIMM (`dimmN/`, or `rankN/` on
//! drivers that report ranks) its label, location, size and counts
//! (Documentation/admin-guide/ras.rst). Absent when no EDAC driver is
//! loaded (virtual machines, or a platform without one).

use serde::{Deserialize, Serialize};
use topo::SysRoot;

use crate::read::Read;

const MC_DIR: &str = "sys/devices/system/edac/mc";

/// One DIMM (or rank) as EDAC reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacDimm {
    /// `dimm3` or `rank3`.
    pub name: String,
    /// `dimm_label` (the board's silkscreen name when the firmware or
    /// a label file gave it, e.g. `CPU_SrcID#0_MC#0_Chan#1_DIMM#0`).
    pub label: Option<String>,
    /// `dimm_location`, e.g. `channel 1 slot 0`.
    pub location: Option<String>,
    /// `size`, MiB.
    pub size_mib: Option<u64>,
    /// `dimm_mem_type`, e.g. `Registered-DDR4`.
    pub mem_type: Option<String>,
    /// Corrected errors (`dimm_ce_count`).
    pub ce_count: Option<u64>,
    /// Uncorrected errors (`dimm_ue_count`).
    pub ue_count: Option<u64>,
}

/// One memory controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EdacController {
    /// `mc0`.
    pub name: String,
    /// `mc_name`, the driver's name for it (e.g. `Skylake Socket#0 IMC#0`).
    pub mc_name: Option<String>,
    pub ce_count: Option<u64>,
    pub ue_count: Option<u64>,
    /// Corrected/uncorrected errors the driver could not pin to a DIMM.
    pub ce_noinfo_count: Option<u64>,
    pub ue_noinfo_count: Option<u64>,
    pub dimms: Vec<EdacDimm>,
}

/// Every EDAC memory controller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edac {
    pub controllers: Vec<EdacController>,
}

impl Edac {
    /// DIMMs with corrected or uncorrected errors, with their controller.
    pub fn dimms_with_errors(&self) -> Vec<(&EdacController, &EdacDimm)> {
        self.controllers
            .iter()
            .flat_map(|c| c.dimms.iter().map(move |d| (c, d)))
            .filter(|(_, d)| d.ce_count.unwrap_or(0) > 0 || d.ue_count.unwrap_or(0) > 0)
            .collect()
    }

    /// Errors over all controllers: (corrected, uncorrected).
    pub fn totals(&self) -> (u64, u64) {
        self.controllers.iter().fold((0, 0), |(ce, ue), c| {
            (ce + c.ce_count.unwrap_or(0), ue + c.ue_count.unwrap_or(0))
        })
    }
}

/// What EDAC shows of the memory system, without error counts: a setting
/// of the machine (channels populated), not its health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryControllers {
    pub controllers: u32,
    /// DIMMs (or ranks, on drivers that report ranks) listed.
    pub dimms: u32,
    /// Distinct (controller, channel) pairs named by the DIMMs'
    /// `dimm_location`; `None` when no location names a channel.
    pub channels: Option<u32>,
}

impl MemoryControllers {
    /// `2 memory controllers, 16 DIMMs in 16 channels`.
    pub fn describe(&self) -> String {
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let mut s = format!(
            "{} memory controller{}, {} DIMM{}",
            self.controllers,
            plural(self.controllers),
            self.dimms,
            plural(self.dimms)
        );
        if let Some(c) = self.channels {
            s.push_str(&format!(" in {c} channel{}", plural(c)));
        }
        s
    }
}

/// The channel number a `dimm_location` names (`channel 1 slot 0`,
/// `csrow 0 channel 1`), if any.
fn channel_of(location: &str) -> Option<u32> {
    let mut words = location.split_whitespace();
    while let Some(w) = words.next() {
        if w == "channel" {
            return words.next()?.parse().ok();
        }
    }
    None
}

impl Edac {
    /// Controllers, DIMMs and channels, for a run's configuration.
    pub fn controllers_summary(&self) -> MemoryControllers {
        let mut channels = std::collections::BTreeSet::new();
        for c in &self.controllers {
            for d in &c.dimms {
                if let Some(ch) = d.location.as_deref().and_then(channel_of) {
                    channels.insert((c.name.clone(), ch));
                }
            }
        }
        MemoryControllers {
            controllers: self.controllers.len() as u32,
            dimms: self.controllers.iter().map(|c| c.dimms.len() as u32).sum(),
            channels: (!channels.is_empty()).then_some(channels.len() as u32),
        }
    }
}

fn text(root: &SysRoot, rel: &str) -> Result<Option<String>, String> {
    match root.read_optional(rel) {
        Ok(s) => Ok(s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty())),
        Err(e) => Err(e.to_string()),
    }
}

fn number(root: &SysRoot, rel: &str) -> Result<Option<u64>, String> {
    match text(root, rel)? {
        None => Ok(None),
        Some(s) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("{}: expected a number, found '{s}'", root.path(rel).display())),
    }
}

fn dimm(root: &SysRoot, dir: &str, name: String) -> Result<EdacDimm, String> {
    let d = format!("{dir}/{name}");
    Ok(EdacDimm {
        label: text(root, &format!("{d}/dimm_label"))?,
        location: text(root, &format!("{d}/dimm_location"))?,
        size_mib: number(root, &format!("{d}/size"))?,
        mem_type: text(root, &format!("{d}/dimm_mem_type"))?,
        ce_count: number(root, &format!("{d}/dimm_ce_count"))?,
        ue_count: number(root, &format!("{d}/dimm_ue_count"))?,
        name,
    })
}

fn controller(root: &SysRoot, id: u32) -> Result<EdacController, String> {
    let dir = format!("{MC_DIR}/mc{id}");
    let mut dimms = Vec::new();
    for prefix in ["dimm", "rank"] {
        let ids = root.list_ids(&dir, prefix).map_err(|e| e.to_string())?;
        for i in ids {
            dimms.push(dimm(root, &dir, format!("{prefix}{i}"))?);
        }
    }
    Ok(EdacController {
        name: format!("mc{id}"),
        mc_name: text(root, &format!("{dir}/mc_name"))?,
        ce_count: number(root, &format!("{dir}/ce_count"))?,
        ue_count: number(root, &format!("{dir}/ue_count"))?,
        ce_noinfo_count: number(root, &format!("{dir}/ce_noinfo_count"))?,
        ue_noinfo_count: number(root, &format!("{dir}/ue_noinfo_count"))?,
        dimms,
    })
}

/// Reads every controller under `root`: absent without `edac/mc` or with
/// no `mcN` in it; unreadable (naming the file) when a count is malformed.
pub fn read(root: &SysRoot) -> Read<Edac> {
    if !root.path(MC_DIR).is_dir() {
        return Read::Absent;
    }
    let ids = match root.list_ids(MC_DIR, "mc") {
        Ok(ids) => ids,
        Err(e) => return Read::Unreadable(e.to_string()),
    };
    if ids.is_empty() {
        return Read::Absent;
    }
    let mut controllers = Vec::new();
    for id in ids {
        match controller(root, id) {
            Ok(c) => controllers.push(c),
            Err(e) => return Read::Unreadable(e),
        }
    }
    Read::Value(Edac { controllers })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (path relative to edac/mc, content) under a new root.
    pub(crate) fn tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
        let d = tempfile::tempdir().unwrap();
        for (rel, content) in files {
            let p = d.path().join(MC_DIR).join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{content}\n")).unwrap();
        }
        std::fs::create_dir_all(d.path().join("sys")).unwrap();
        let root = SysRoot::new(d.path()).unwrap();
        (d, root)
    }

    #[test]
    fn dimms_and_ranks_with_their_counts() {
        let (_d, root) = tree(&[
            ("mc0/mc_name", "Skylake Socket#0 IMC#0"),
            ("mc0/ce_count", "12"),
            ("mc0/ue_count", "0"),
            ("mc0/dimm0/dimm_label", "CPU_SrcID#0_MC#0_Chan#0_DIMM#0"),
            ("mc0/dimm0/dimm_location", "channel 0 slot 0"),
            ("mc0/dimm0/size", "32768"),
            ("mc0/dimm0/dimm_mem_type", "Registered-DDR4"),
            ("mc0/dimm0/dimm_ce_count", "12"),
            ("mc0/dimm0/dimm_ue_count", "0"),
            ("mc0/dimm1/dimm_label", "CPU_SrcID#0_MC#0_Chan#1_DIMM#0"),
            ("mc0/dimm1/dimm_ce_count", "0"),
            ("mc0/dimm1/dimm_ue_count", "0"),
            ("mc1/rank2/dimm_label", "B1"),
            ("mc1/rank2/dimm_ue_count", "1"),
        ]);
        let e = read(&root);
        let Read::Value(e) = e else { panic!("{e:?}") };
        assert_eq!(e.controllers.len(), 2);
        let mc0 = &e.controllers[0];
        assert_eq!(mc0.mc_name.as_deref(), Some("Skylake Socket#0 IMC#0"));
        assert_eq!(mc0.dimms.len(), 2);
        assert_eq!(mc0.dimms[0].size_mib, Some(32768));
        assert_eq!(mc0.dimms[0].location.as_deref(), Some("channel 0 slot 0"));
        assert_eq!(e.controllers[1].dimms[0].name, "rank2");
        let bad: Vec<&str> = e.dimms_with_errors().iter().map(|(_, d)| d.name.as_str()).collect();
        assert_eq!(bad, ["dimm0", "rank2"]);
        assert_eq!(e.totals(), (12, 0));
        let m = e.controllers_summary();
        assert_eq!((m.controllers, m.dimms, m.channels), (2, 3, Some(1)));
        assert_eq!(m.describe(), "2 memory controllers, 3 DIMMs in 1 channel");
    }

    #[test]
    fn channels_are_counted_per_controller_from_the_locations() {
        let (_d, root) = tree(&[
            ("mc0/dimm0/dimm_location", "channel 0 slot 0"),
            ("mc0/dimm1/dimm_location", "channel 0 slot 1"),
            ("mc0/dimm2/dimm_location", "channel 1 slot 0"),
            ("mc1/dimm0/dimm_location", "csrow 0 channel 0"),
            ("mc2/rank0/dimm_label", "no location"),
        ]);
        let Read::Value(e) = read(&root) else { panic!() };
        let m = e.controllers_summary();
        assert_eq!((m.controllers, m.dimms, m.channels), (3, 5, Some(3)));
        assert_eq!(channel_of("slot 2"), None);
        assert_eq!(channel_of("channel x"), None);
    }

    #[test]
    fn no_edac_is_absent_and_a_bad_count_is_unreadable_naming_the_file() {
        let (_d, root) = tree(&[]);
        assert_eq!(read(&root), Read::Absent);
        let (_d, root) = tree(&[("mc0/dimm0/dimm_ce_count", "lots")]);
        match read(&root) {
            Read::Unreadable(why) => assert!(why.contains("dimm0/dimm_ce_count"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
