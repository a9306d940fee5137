//! Devices that back NUMA memory: DAX devices (`/sys/bus/dax/devices/daxX.Y`:
//! `target_node`, `resource`, `size`, the driver — `kmem` when the memory
//! is onlined as system RAM — and who provides it: a CXL region, soft-
//! reserved memory (`hmem`) or an NVDIMM namespace) and CXL regions
//! (`/sys/bus/cxl/devices/regionZ`: `mode`, `size`, `resource`,
//! `interleave_ways`, `targetN`, and the NUMA node(s) their memory reached,
//! through their DAX devices or the memory blocks their address range
//! covers). Files as documented in the kernel's
//! `Documentation/ABI/testing/sysfs-bus-dax` and `sysfs-bus-cxl`.
//!
//! Reading never fails: a missing directory means none; a file that is
//! missing, unreadable or odd leaves that field unknown and adds a
//! warning naming it.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fs::SysRoot;
use crate::idset::NodeSet;
use crate::model::Warning;

const DAX_DIR: &str = "sys/bus/dax/devices";
const CXL_DIR: &str = "sys/bus/cxl/devices";
const MEMORY_DIR: &str = "sys/devices/system/memory";

/// The most memory blocks looked at per CXL region (evenly spread over
/// its range): a 1 TiB region of 128 MiB blocks has 8192.
const MAX_BLOCKS: u64 = 1024;

/// One device-dax instance.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DaxDevice {
    /// `daxX.Y`.
    pub name: String,
    /// The NUMA node its memory becomes when onlined (`target_node`).
    pub target_node: Option<u32>,
    /// Physical start address (`resource`).
    pub resource: Option<u64>,
    pub size_bytes: Option<u64>,
    /// The bound driver: `kmem` (onlined as system RAM, a NUMA node) or
    /// `device_dax` (a character device); `None` when unbound or unknown.
    pub driver: Option<String>,
    /// `cxl`, `hmem` (soft-reserved memory, EFI_MEMORY_SP) or `pmem`
    /// (an NVDIMM namespace), from where the device sits in sysfs.
    pub provider: Option<String>,
    /// The CXL region it belongs to (`regionZ`).
    pub region: Option<String>,
}

/// One CXL region (an interleave set of CXL memory devices).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CxlRegion {
    /// `regionZ`.
    pub name: String,
    /// `ram` (volatile), `pmem`, or what the kernel says.
    pub mode: Option<String>,
    pub size_bytes: Option<u64>,
    /// Physical start address.
    pub resource: Option<u64>,
    pub interleave_ways: Option<u32>,
    /// Endpoint decoders in interleave order (`target0`, `target1`, ...).
    pub targets: Vec<String>,
    /// Its DAX devices (`dax_regionZ/daxZ.Y`).
    pub dax_devices: Vec<String>,
    /// NUMA nodes its memory is in: its DAX devices' `target_node`, and
    /// the nodes of the memory blocks its range covers.
    pub nodes: NodeSet,
}

/// A number as sysfs writes it: `0x`-prefixed hex or decimal.
fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Reads the files; every oddity becomes a warning.
struct Reader<'a> {
    root: &'a SysRoot,
    warnings: Vec<Warning>,
}

impl Reader<'_> {
    /// A file's trimmed text; `None` when absent (silently) or unreadable
    /// (with a warning).
    fn text(&mut self, rel: &str) -> Option<String> {
        match self.root.read_optional(rel) {
            Ok(s) => s.map(|s| s.trim_end_matches(['\0', '\n', ' ']).trim().to_string()),
            Err(e) => {
                self.warnings.push(Warning::file(
                    e.path().display().to_string(),
                    e.problem(),
                    "unknown",
                ));
                None
            }
        }
    }

    /// A number (hex or decimal); odd text is a warning and `None`.
    fn num(&mut self, rel: &str) -> Option<u64> {
        let s = self.text(rel)?;
        let n = number(&s);
        if n.is_none() {
            self.warnings.push(Warning::file(
                self.root.path(rel).display().to_string(),
                format!("expected a number, found '{s}'"),
                "unknown",
            ));
        }
        n
    }

    fn list(&mut self, rel: &str) -> Vec<String> {
        self.root.list_dir(rel).unwrap_or_else(|e| {
            self.warnings.push(Warning::file(
                e.path().display().to_string(),
                e.problem(),
                "no entries (skipped)",
            ));
            Vec::new()
        })
    }

    fn link_name(&self, rel: &str) -> Option<String> {
        let l = std::fs::read_link(self.root.path(rel)).ok()?;
        Some(l.file_name()?.to_string_lossy().into_owned())
    }

    fn dax(&mut self, name: &str) -> DaxDevice {
        let d = format!("{DAX_DIR}/{name}");
        let tn = format!("{d}/target_node");
        // -1: the device has no node of its own.
        let target_node = if self.text(&tn).as_deref() == Some("-1") {
            None
        } else {
            self.num(&tn).and_then(|n| u32::try_from(n).ok())
        };
        let (provider, region) = provider_of(self.root.dir(), &self.root.path(&d));
        DaxDevice {
            name: name.to_string(),
            target_node,
            resource: self.num(&format!("{d}/resource")),
            size_bytes: self.num(&format!("{d}/size")),
            driver: self.link_name(&format!("{d}/driver")),
            provider,
            region,
        }
    }

    fn region(&mut self, name: &str, dax: &[DaxDevice]) -> CxlRegion {
        let d = format!("{CXL_DIR}/{name}");
        let mode = self.text(&format!("{d}/mode")).filter(|m| !m.is_empty());
        let size_bytes = self.num(&format!("{d}/size"));
        let resource = self.num(&format!("{d}/resource"));
        let interleave_ways =
            self.num(&format!("{d}/interleave_ways")).and_then(|n| u32::try_from(n).ok());
        let mut targets: Vec<(u32, String)> = Vec::new();
        for f in self.list(&d) {
            let Some(i) = f.strip_prefix("target").and_then(|i| i.parse::<u32>().ok()) else {
                continue;
            };
            if let Some(t) = self.text(&format!("{d}/{f}")).filter(|t| !t.is_empty()) {
                targets.push((i, t));
            }
        }
        targets.sort();
        // DAX devices below the region, and those whose place in sysfs
        // names it.
        let id = name.trim_start_matches("region");
        let mut dax_devices: Vec<String> = self
            .list(&format!("{d}/dax_region{id}"))
            .into_iter()
            .filter(|n| n.starts_with("dax") && n.contains('.'))
            .collect();
        for x in dax.iter().filter(|x| x.region.as_deref() == Some(name)) {
            if !dax_devices.contains(&x.name) {
                dax_devices.push(x.name.clone());
            }
        }
        dax_devices.sort();
        let mut nodes: NodeSet = dax
            .iter()
            .filter(|x| dax_devices.contains(&x.name))
            .filter_map(|x| x.target_node)
            .collect();
        if let (Some(start), Some(size)) = (resource, size_bytes) {
            nodes = nodes.union(&self.block_nodes(start, size));
        }
        CxlRegion {
            name: name.to_string(),
            mode,
            size_bytes,
            resource,
            interleave_ways,
            targets: targets.into_iter().map(|(_, t)| t).collect(),
            dax_devices,
            nodes,
        }
    }

    /// Nodes of the memory blocks (`memoryN/nodeM`) that the physical
    /// range covers; empty when the blocks are not online or unknown.
    fn block_nodes(&mut self, start: u64, size: u64) -> NodeSet {
        let mut out = NodeSet::new();
        if size == 0 {
            return out;
        }
        let Some(bs) = self.text(&format!("{MEMORY_DIR}/block_size_bytes")) else { return out };
        // `block_size_bytes` is hex without a prefix.
        let Some(bs) = u64::from_str_radix(bs.trim_start_matches("0x"), 16).ok().filter(|&b| b > 0)
        else {
            self.warnings.push(Warning::file(
                format!("{}/block_size_bytes", self.root.path(MEMORY_DIR).display()),
                format!("expected a hex number, found '{bs}'"),
                "memory blocks not read",
            ));
            return out;
        };
        let first = start / bs;
        let last = start.saturating_add(size - 1) / bs;
        let count = last - first + 1;
        let step = count.div_ceil(MAX_BLOCKS).max(1);
        let mut b = first;
        while b <= last {
            let ids = self.root.list_ids(&format!("{MEMORY_DIR}/memory{b}"), "node");
            for n in ids.unwrap_or_default() {
                out.insert(n);
            }
            b += step;
        }
        out
    }
}

/// Who provides a DAX device, from its real place in sysfs (the
/// `/sys/bus/dax/devices` entries are links into `/sys/devices`): under
/// a CXL `regionZ` (with `decoder` above it), under `hmem`, or under an
/// NVDIMM bus. `(None, None)` when the path says nothing.
fn provider_of(root: &Path, path: &Path) -> (Option<String>, Option<String>) {
    let Ok(real) = std::fs::canonicalize(path) else { return (None, None) };
    // Only what lies below the root counts (a capture's own path may
    // hold any name).
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let real = real.strip_prefix(&root).unwrap_or(&real);
    let parts: Vec<String> =
        real.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let region = parts
        .iter()
        .rev()
        .find(|p| p.strip_prefix("region").is_some_and(|r| r.parse::<u32>().is_ok()))
        .cloned();
    if parts.iter().any(|p| p.starts_with("decoder")) && region.is_some() {
        return (Some("cxl".into()), region);
    }
    if parts.iter().any(|p| p.starts_with("ndbus") || p.starts_with("namespace")) {
        return (Some("pmem".into()), None);
    }
    if parts.iter().any(|p| p.starts_with("hmem")) {
        return (Some("hmem".into()), None);
    }
    (None, None)
}

/// The DAX devices and CXL regions under `root`, and the warnings for
/// what could not be read.
pub fn read(root: &SysRoot) -> (Vec<DaxDevice>, Vec<CxlRegion>, Vec<Warning>) {
    let mut r = Reader { root, warnings: Vec::new() };
    let mut dax = Vec::new();
    for name in r.list(DAX_DIR) {
        if name.starts_with("dax") {
            dax.push(r.dax(&name));
        }
    }
    let mut regions = Vec::new();
    for name in r.list(CXL_DIR) {
        if name.strip_prefix("region").is_some_and(|i| i.parse::<u32>().is_ok()) {
            regions.push(r.region(&name, &dax));
        }
    }
    regions.sort_by_key(|g| g.name.trim_start_matches("region").parse::<u32>().unwrap_or(0));
    // A DAX device listed by a region belongs to it even when its link
    // did not say so (a capture without links).
    for x in &mut dax {
        if let Some(g) = regions.iter().find(|g| g.dax_devices.contains(&x.name)) {
            x.region = Some(g.name.clone());
            x.provider = Some("cxl".into());
        }
    }
    (dax, regions, r.warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_hex_or_decimal() {
        assert_eq!(number("0x10000000\n"), Some(1 << 28));
        assert_eq!(number("268435456"), Some(1 << 28));
        assert_eq!(number("lots"), None);
        assert_eq!(number(""), None);
    }
}
