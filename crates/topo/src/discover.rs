//! [`Topology::discover`]: reads sysfs and procfs under a [`SysRoot`] into a
//! [`Topology`]. Absent files are normal (kernels and captures differ) and
//! leave fields empty; inconsistent firmware becomes a warning.
//!
//! Degrade, don't abort: only the essential reads (the `cpu` and `node`
//! directory listings: without them nothing can be said) fail discovery.
//! Any other file that is empty where a value belongs, unreadable, refused
//! (a device, a FIFO, a directory, over the size cap, a dangling link) or
//! malformed becomes a [`Warning`] naming it and what was assumed instead,
//! and discovery goes on.

use std::collections::BTreeMap;

use crate::fs::{SysRoot, TopoError};
use crate::idset::{CpuSet, IdSet, NodeSet};
use crate::mode::{firmware_warnings, infer_mode};
use crate::model::*;
use crate::parse;
use crate::read;

const CPU_DIR: &str = "sys/devices/system/cpu";
const NODE_DIR: &str = "sys/devices/system/node";

impl Topology {
    /// Reads the machine (or capture) under `root`.
    ///
    /// Fails when `root` has no `sys/devices/system/cpu` (not a sysfs root)
    /// or when the `cpu` or `node` directory cannot be listed; a missing
    /// file is left empty, and one that cannot be used is said in
    /// `warnings` with what was assumed.
    pub fn discover(root: &SysRoot) -> Result<Topology, TopoError> {
        Discovery { root, warnings: Vec::new(), packages_unknown: false }.run()
    }
}

struct Discovery<'a> {
    root: &'a SysRoot,
    warnings: Vec<Warning>,
    /// Some CPU had no package id (or no topology directory).
    packages_unknown: bool,
}

/// Turns a parser error into one naming the file.
fn malformed(root: &SysRoot, rel: &str, e: impl std::fmt::Display) -> TopoError {
    TopoError::malformed(root.path(rel), e.to_string())
}

impl Discovery<'_> {
    fn run(mut self) -> Result<Topology, TopoError> {
        let root = self.root;
        if !root.path(CPU_DIR).is_dir() {
            return Err(TopoError::malformed(
                root.path(CPU_DIR),
                "missing: not a sysfs root (expected sys/devices/system/cpu)",
            ));
        }
        let no_cpuinfo = "CPU vendor, family and model unknown";
        let cpuinfo = self.soft(self.text("proc/cpuinfo"), no_cpuinfo);
        let cpuinfo = self.nonempty("proc/cpuinfo", cpuinfo, no_cpuinfo, |s| s.trim().is_empty());
        let cpuinfo = cpuinfo.map(|s| parse::parse_cpuinfo(&s));
        let arch = if root.is_live() {
            Some(std::env::consts::ARCH.to_string())
        } else {
            cpuinfo.as_ref().and_then(|c| c.arch.clone())
        };
        let kernel = self.soft(read::kernel_release(root), "kernel release unknown");
        if kernel.is_none() {
            // No osrelease, and a proc/version that names no release.
            if let Some(_text) = self.soft(self.text("proc/version"), "kernel release unknown") {
                let e = malformed(root, "proc/version", "names no kernel release");
                self.degrade(&e, "kernel release unknown");
            }
        }

        let nodes_raw = self.nodes()?;
        let (online_cpus, offline_cpus) = self.online_offline(&nodes_raw)?;
        let cpus_raw = self.cpus(&online_cpus);
        let caches = self.caches(&cpus_raw);
        let memory_tiers = self.memory_tiers();
        let system_memory = self.system_memory();

        // Each CPU's node: the first node whose cpulist holds it; the
        // kernel's cpuN/nodeM link is used when no cpulist does.
        let mut cpus = cpus_raw;
        for c in &mut cpus {
            c.node = nodes_raw.iter().find(|n| n.cpus.contains(c.id)).map(|n| n.id);
            if c.node.is_none() {
                let links = root.list_ids(&format!("{CPU_DIR}/cpu{}", c.id), "node");
                c.node =
                    self.soft(links.map(Some), "no node link").and_then(|l| l.first().copied());
            }
        }
        let mut nodes = nodes_raw;
        for n in &mut nodes {
            n.memory_tier = memory_tiers.iter().find(|t| t.nodes.contains(n.id)).map(|t| t.id);
        }
        for w in firmware_warnings(&nodes, &online_cpus) {
            self.warn(w);
        }

        let packages = packages_of(&cpus, &nodes);
        let distance_tiers = crate::tiers::distance_tiers(&nodes);
        let devices = self.devices();
        let cmdline = match self.soft(self.text("proc/cmdline"), "an empty kernel command line") {
            Some(s) => parse::parse_cmdline(&s),
            None => Cmdline::default(),
        };
        let cgroup = self.cgroup(&online_cpus, &nodes);
        let (dax_devices, cxl_regions, memdev_warnings) = crate::memdev::read(root);
        for w in memdev_warnings {
            self.push(w);
        }
        let (firmware_numa, acpi_warnings) = crate::acpi::read(root);
        for w in acpi_warnings {
            self.push(w);
        }

        let mut t = Topology {
            schema_version: SCHEMA_VERSION,
            root: root.dir().display().to_string(),
            live: root.is_live(),
            arch,
            cpu_vendor: cpuinfo.as_ref().map_or(Vendor::Unknown, |c| c.vendor),
            cpu_family: cpuinfo.as_ref().and_then(|c| c.family),
            cpu_model: cpuinfo.and_then(|c| c.model),
            kernel,
            online_cpus,
            offline_cpus,
            packages,
            cpus,
            caches,
            nodes,
            memory_tiers,
            system_memory,
            devices,
            cgroup,
            cmdline,
            packages_unknown: self.packages_unknown,
            distance_tiers,
            numa_mode: crate::mode::undetermined(),
            dax_devices,
            cxl_regions,
            memory_kinds: Vec::new(),
            firmware_numa: Some(firmware_numa),
            warnings: Vec::new(),
        };
        t.numa_mode = infer_mode(&t);
        t.memory_kinds = crate::memkind::memory_kinds(&t);
        if let Some((nodes, system)) = t.nodes_short_of_system() {
            let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
            self.warn(format!(
                "{} {:.1} GiB of the system's {:.1} GiB (/proc/meminfo MemTotal): memory the kernel counts but no node shows yet, as when a virtual machine's memory is plugged in as it is used (virtio-mem, a balloon); per-node sizes and free memory, and the working sets fitted to them, are what the nodes hold now",
                crate::NODES_SHORT_OF_SYSTEM,
                gib(nodes),
                gib(system)
            ));
        }
        t.warnings = self.warnings;
        Ok(t)
    }

    /// A warning about no file in particular.
    fn warn(&mut self, msg: String) {
        self.push(Warning::general(msg));
    }

    fn push(&mut self, w: Warning) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A non-essential read: its value, or `None` with a warning naming
    /// the file, what went wrong and what is `assumed` instead.
    fn soft<T>(&mut self, r: Result<Option<T>, TopoError>, assumed: &str) -> Option<T> {
        match r {
            Ok(v) => v,
            Err(e) => {
                self.degrade(&e, assumed);
                None
            }
        }
    }

    /// `value` unless it is empty (`is_empty`) where a file must say
    /// something: then a warning naming `rel`, and `None`.
    fn nonempty<T>(
        &mut self,
        rel: &str,
        value: Option<T>,
        assumed: &str,
        is_empty: impl FnOnce(&T) -> bool,
    ) -> Option<T> {
        match value {
            Some(v) if is_empty(&v) => {
                self.degrade(&malformed(self.root, rel, "empty, where a value belongs"), assumed);
                None
            }
            v => v,
        }
    }

    /// Warns that the file of `e` could not be used and `assumed` was.
    fn degrade(&mut self, e: &TopoError, assumed: &str) {
        self.push(Warning::file(e.path().display().to_string(), e.problem(), assumed));
    }

    /// A file's text with the trailing NULs some captures carry removed;
    /// `None` when absent.
    fn text(&self, rel: &str) -> Result<Option<String>, TopoError> {
        Ok(self.root.read_optional(rel)?.map(|s| s.trim_end_matches(['\0', '\n', ' ']).to_string()))
    }

    fn read_u64(&self, rel: &str) -> Result<Option<u64>, TopoError> {
        match self.text(rel)? {
            None => Ok(None),
            Some(s) => s.trim().parse().map(Some).map_err(|_| {
                malformed(self.root, rel, format!("expected a number, found '{}'", s.trim()))
            }),
        }
    }

    fn read_set(&self, rel: &str) -> Result<Option<IdSet>, TopoError> {
        match self.text(rel)? {
            None => Ok(None),
            Some(s) => IdSet::parse_list(&s).map(Some).map_err(|e| malformed(self.root, rel, e)),
        }
    }

    /// A hex mask (`cpumap`): the kernel writes zeros for none, so an
    /// empty file is malformed.
    fn read_mask(&self, rel: &str) -> Result<Option<IdSet>, TopoError> {
        match self.text(rel)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => {
                Err(malformed(self.root, rel, "empty, where a hex mask belongs"))
            }
            Some(s) => IdSet::parse_mask(&s).map(Some).map_err(|e| malformed(self.root, rel, e)),
        }
    }

    /// [`Self::read_list_or_map`] where an unusable file is a warning: the
    /// twin is tried, and `None` (the set unknown) when neither is usable or there.
    /// These sets (siblings, shared caches, a device's CPUs) always hold at
    /// least one CPU: an empty one is unusable too.
    fn soft_list_or_map(&mut self, list: &str, map: &str) -> Option<IdSet> {
        let twin = format!("the set from {}", map.rsplit('/').next().unwrap_or(map));
        let l = self.soft(self.read_set(list), &twin);
        match self.nonempty(list, l, &twin, IdSet::is_empty) {
            Some(s) => Some(s),
            None => {
                let m = self.soft(self.read_mask(map), "the set unknown");
                self.nonempty(map, m, "the set unknown", IdSet::is_empty)
            }
        }
    }

    fn read_i64(&self, rel: &str) -> Result<Option<i64>, TopoError> {
        match self.text(rel)? {
            None => Ok(None),
            Some(s) => s.trim().parse().map(Some).map_err(|_| {
                malformed(self.root, rel, format!("expected a number, found '{}'", s.trim()))
            }),
        }
    }

    /// Online CPUs, and CPUs present but offline. The `cpu` directory's
    /// listing is essential; an unusable `online` falls back to each
    /// CPU's own `online`, an empty one to the nodes' CPU lists.
    fn online_offline(&mut self, nodes: &[Node]) -> Result<(CpuSet, CpuSet), TopoError> {
        let dirs: CpuSet = self.root.list_ids(CPU_DIR, "cpu")?.into_iter().collect();
        let online_rel = format!("{CPU_DIR}/online");
        let listed = self
            .soft(self.read_set(&online_rel), "each CPU's own online file (else online) decides");
        let mut online = match listed {
            Some(s) => s,
            None => {
                // Old kernels: every cpuN dir whose `online` is not 0.
                let mut s = CpuSet::new();
                for id in dirs.iter() {
                    let rel = format!("{CPU_DIR}/cpu{id}/online");
                    let v = self.read_i64(&rel);
                    if self.soft(v, &format!("CPU {id} online")) != Some(0) {
                        s.insert(id);
                    }
                }
                s
            }
        };
        let node_cpus: CpuSet = nodes.iter().flat_map(|n| n.cpus.iter()).collect();
        if online.is_empty() && !node_cpus.is_empty() {
            let e = malformed(self.root, &online_rel, "lists no CPU, while the nodes list CPUs");
            self.degrade(&e, &format!("the nodes' CPUs ({}) online", node_cpus.to_list()));
            online = node_cpus;
        } else if online.is_empty() && !dirs.is_empty() {
            let e = malformed(self.root, &online_rel, "lists no CPU");
            self.degrade(&e, &format!("the cpuN directories ({}) online", dirs.to_list()));
            online = dirs.clone();
        }
        // The kernel's `offline` file also lists possible-but-absent CPUs
        // (hot-plug slots); only present ones are worth reporting.
        let present_rel = format!("{CPU_DIR}/present");
        let by_dirs = "the cpuN directories present";
        let present = self.soft(self.read_set(&present_rel), by_dirs);
        let present =
            self.nonempty(&present_rel, present, by_dirs, IdSet::is_empty).unwrap_or(dirs);
        Ok((online.clone(), present.difference(&online)))
    }

    /// Online CPUs that have a topology directory.
    fn cpus(&mut self, online: &CpuSet) -> Vec<Cpu> {
        let mut out = Vec::new();
        let mut no_topology = CpuSet::new();
        // CPUs whose package id is -1 (s390, some old Arm kernels), with
        // their core_siblings (package) set to group them by.
        let mut unnumbered: Vec<(usize, CpuSet)> = Vec::new();
        for id in online.iter() {
            let topo = format!("{CPU_DIR}/cpu{id}/topology");
            if !self.root.path(&topo).is_dir() {
                no_topology.insert(id);
                continue;
            }
            let pkg_rel = format!("{topo}/physical_package_id");
            let unknown_pkg = "the package unknown (numbered from its siblings)";
            let mut pkg_raw = self.soft(self.read_i64(&pkg_rel), unknown_pkg);
            if let Some(p) = pkg_raw.filter(|&p| p > i64::from(u32::MAX)) {
                let e = malformed(self.root, &pkg_rel, format!("package id {p} is out of range"));
                self.degrade(&e, unknown_pkg);
                pkg_raw = None;
            }
            let package = match pkg_raw {
                Some(p) if p >= 0 => p as u32,
                _ => {
                    let pkg = self.soft_list_or_map(
                        &format!("{topo}/package_cpus_list"),
                        &format!("{topo}/package_cpus"),
                    );
                    let sibs = match pkg {
                        Some(s) => Some(s),
                        None => self.soft_list_or_map(
                            &format!("{topo}/core_siblings_list"),
                            &format!("{topo}/core_siblings"),
                        ),
                    }
                    .unwrap_or_default();
                    unnumbered.push((out.len(), sibs));
                    0
                }
            };
            // Some kernels write -1 or 0xffff for "no such level".
            let opt_id = |v: Option<i64>| v.filter(|&x| (0..0xffff).contains(&x)).map(|x| x as u32);
            let die = opt_id(self.soft(self.read_i64(&format!("{topo}/die_id")), "no die id"));
            let cluster =
                opt_id(self.soft(self.read_i64(&format!("{topo}/cluster_id")), "no cluster id"));
            let core_rel = format!("{topo}/core_id");
            let core =
                opt_id(self.soft(self.read_i64(&core_rel), &format!("core id {id}"))).unwrap_or(id);
            let mut thread_siblings = self
                .soft_list_or_map(
                    &format!("{topo}/thread_siblings_list"),
                    &format!("{topo}/thread_siblings"),
                )
                .unwrap_or_default();
            thread_siblings.insert(id);
            out.push(Cpu { id, package, die, cluster, core, node: None, thread_siblings });
        }
        if !unnumbered.is_empty() {
            // Number the distinct sibling sets in order of their first CPU.
            let mut groups: Vec<CpuSet> = Vec::new();
            for (i, sibs) in &unnumbered {
                let key =
                    if sibs.is_empty() { out[*i].thread_siblings.clone() } else { sibs.clone() };
                let n = match groups.iter().position(|g| *g == key) {
                    Some(n) => n,
                    None => {
                        groups.push(key);
                        groups.len() - 1
                    }
                };
                out[*i].package = n as u32;
            }
            self.packages_unknown = true;
            self.warn(format!(
                "physical_package_id is -1 on CPUs {}: packages numbered from their core_siblings \
                 lists instead",
                unnumbered.iter().map(|(i, _)| out[*i].id).collect::<CpuSet>().to_list()
            ));
        }
        if !no_topology.is_empty() && !out.is_empty() {
            self.warn(format!(
                "online CPUs {} have no topology directory; left out of the CPU list",
                no_topology.to_list()
            ));
        }
        if out.is_empty() {
            // No topology at all (very old kernels): one package of all
            // online CPUs, one core each.
            for id in online.iter() {
                out.push(Cpu {
                    id,
                    package: 0,
                    die: None,
                    cluster: None,
                    core: id,
                    node: None,
                    thread_siblings: [id].into_iter().collect(),
                });
            }
            if !online.is_empty() {
                self.packages_unknown = true;
                self.warn(
                    "no CPU topology directories: packages and cores are unknown, each CPU \
                     counted as its own core in package 0"
                        .into(),
                );
            }
        }
        out
    }

    fn caches(&mut self, cpus: &[Cpu]) -> Vec<Cache> {
        let mut seen: BTreeMap<(u8, u8, CpuSet), Cache> = BTreeMap::new();
        for c in cpus {
            let dir = format!("{CPU_DIR}/cpu{}/cache", c.id);
            let listed = self.root.list_ids(&dir, "index").map(Some);
            let no_caches = format!("no caches known for CPU {}", c.id);
            for idx in self.soft(listed, &no_caches).unwrap_or_default() {
                let d = format!("{dir}/index{idx}");
                let skipped = format!("cache index{idx} of CPU {} left out", c.id);
                let level_rel = format!("{d}/level");
                let Some(level) = self.soft(self.read_u64(&level_rel), &skipped) else { continue };
                let Ok(level) = u8::try_from(level) else {
                    let e = malformed(self.root, &level_rel, format!("cache level {level}"));
                    self.degrade(&e, &skipped);
                    continue;
                };
                let type_rel = format!("{d}/type");
                let kind = match self.soft(self.text(&type_rel), "a unified cache") {
                    Some(t) => match t.trim() {
                        "Data" => CacheKind::Data,
                        "Instruction" => CacheKind::Instruction,
                        "Unified" => CacheKind::Unified,
                        other => {
                            let e = malformed(
                                self.root,
                                &type_rel,
                                format!("unknown cache type '{other}'"),
                            );
                            self.degrade(&e, "a unified cache");
                            CacheKind::Unified
                        }
                    },
                    None => CacheKind::Unified,
                };
                let size_rel = format!("{d}/size");
                let Some(size) = self.soft(self.text(&size_rel), &skipped) else { continue };
                let size_bytes = match parse::parse_cache_size(&size) {
                    Ok(b) => b,
                    Err(e) => {
                        let e = malformed(self.root, &size_rel, e);
                        self.degrade(&e, &skipped);
                        continue;
                    }
                };
                if size_bytes == 0 {
                    continue;
                }
                let line_bytes = self
                    .soft(
                        self.root.read_u64(&format!("{d}/coherency_line_size")),
                        "line size unknown",
                    )
                    .and_then(|v| u32::try_from(v).ok());
                let mut shared = self
                    .soft_list_or_map(
                        &format!("{d}/shared_cpu_list"),
                        &format!("{d}/shared_cpu_map"),
                    )
                    .unwrap_or_default();
                shared.insert(c.id);
                let key = (level, kind as u8, shared.clone());
                seen.entry(key).or_insert(Cache {
                    level,
                    kind,
                    size_bytes,
                    line_bytes,
                    cpus: shared,
                });
            }
        }
        let mut v: Vec<Cache> = seen.into_values().collect();
        v.sort_by(|a, b| {
            (a.level, a.kind as u8, a.cpus.first()).cmp(&(b.level, b.kind as u8, b.cpus.first()))
        });
        v
    }

    fn nodes(&mut self) -> Result<Vec<Node>, TopoError> {
        let ids = self.root.list_ids(NODE_DIR, "node")?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in &ids {
            let d = format!("{NODE_DIR}/node{id}");
            let list = self.soft(self.read_set(&format!("{d}/cpulist")), "the cpumap");
            let map = self.soft(self.read_mask(&format!("{d}/cpumap")), "the cpulist");
            let cpus = match (list, map) {
                // An empty list or map beside a non-empty twin: the twin.
                (Some(l), Some(m)) if l.is_empty() != m.is_empty() => {
                    let (rel, used, set) = if l.is_empty() {
                        (format!("{d}/cpulist"), "cpumap", m)
                    } else {
                        (format!("{d}/cpumap"), "cpulist", l)
                    };
                    let e = malformed(self.root, &rel, format!("empty, while the {used} is not"));
                    self.degrade(&e, &format!("the {used} ({})", set.to_list()));
                    set
                }
                (Some(l), Some(m)) => {
                    if l != m {
                        self.warn(format!(
                            "node {id}: cpulist ({}) and cpumap ({}) disagree; using cpulist",
                            l.to_list(),
                            m.to_list()
                        ));
                    }
                    l
                }
                (Some(l), None) => l,
                (None, Some(m)) => m,
                (None, None) => CpuSet::new(),
            };
            let no_mem = format!("node {id} memory taken as 0");
            let (mem_total_bytes, mem_free_bytes) = match read::node_meminfo(self.root, id) {
                Ok(Some(m)) => {
                    if !m.contains_key("MemTotal") {
                        let rel = read::node_meminfo_rel(id);
                        let e = malformed(self.root, &rel, "no MemTotal line");
                        self.degrade(&e, &no_mem);
                    }
                    (
                        m.get("MemTotal").copied().unwrap_or(0),
                        m.get("MemFree").copied().unwrap_or(0),
                    )
                }
                Err(e) => {
                    self.degrade(&e, &no_mem);
                    (0, 0)
                }
                Ok(None) => {
                    self.warn(format!("node {id}: no meminfo; memory taken as 0"));
                    (0, 0)
                }
            };
            let dist_rel = format!("{d}/distance");
            let no_row = format!("no distance row for node {id}");
            let distances = match self.soft(self.text(&dist_rel), &no_row) {
                Some(s) => match parse::parse_distance(&s) {
                    Ok(row) => self.distance_row(id, &ids, row),
                    Err(e) => {
                        self.degrade(&malformed(self.root, &dist_rel, e), &no_row);
                        Vec::new()
                    }
                },
                None => Vec::new(),
            };
            let hugepages = self.hugepages(&format!("{d}/hugepages"));
            let hmat = self.hmat(&d);
            let memory_side_caches = self.memory_side_caches(&d);
            let kind = match (cpus.is_empty(), mem_total_bytes == 0) {
                (false, false) => NodeKind::CpuMemory,
                (true, false) => NodeKind::MemoryOnly,
                (false, true) => NodeKind::CpuOnly,
                (true, true) => NodeKind::Neither,
            };
            out.push(Node {
                id,
                cpus,
                mem_total_bytes,
                mem_free_bytes,
                distances,
                kind,
                hugepages,
                hmat,
                memory_side_caches,
                memory_tier: None,
            });
        }
        // A matrix with some rows missing is no matrix.
        if out.iter().any(|n| n.distances.is_empty()) && out.iter().any(|n| !n.distances.is_empty())
        {
            self.warn("some nodes have no distance row; distance matrix dropped".into());
            for n in &mut out {
                n.distances.clear();
            }
        }
        Ok(out)
    }

    /// A node's distance row in the order of `ids` (the node directories).
    /// The kernel may index the row by possible or online node rather than
    /// by directory (with node 0 offline, node 1's row is `21 10`): the
    /// row is read by whichever of those sets has its length. A row that
    /// fits none is dropped with a warning.
    fn distance_row(&mut self, id: u32, ids: &[u32], row: Vec<u32>) -> Vec<u32> {
        if row.len() == ids.len() {
            return row;
        }
        for file in ["possible", "online"] {
            let set = self.read_set(&format!("{NODE_DIR}/{file}"));
            let Some(index) = self.soft(set, "no index for short distance rows") else { continue };
            if index.len() != row.len() {
                continue;
            }
            let index: Vec<u32> = index.iter().collect();
            let picked: Option<Vec<u32>> =
                ids.iter().map(|n| index.iter().position(|x| x == n).map(|j| row[j])).collect();
            if let Some(r) = picked {
                return r;
            }
        }
        self.warn(format!(
            "node {id}: distance row has {} entries for {} nodes; distances dropped",
            row.len(),
            ids.len()
        ));
        Vec::new()
    }

    fn hugepages(&mut self, dir: &str) -> Vec<HugePages> {
        let mut out = Vec::new();
        let names = self.soft(self.root.list_dir(dir).map(Some), "no huge pages");
        for name in names.unwrap_or_default() {
            let Some(page_size_bytes) = parse::parse_hugepage_dir(&name) else { continue };
            let d = format!("{dir}/{name}");
            let total = self.soft(self.read_u64(&format!("{d}/nr_hugepages")), "0 pages");
            let free = self.soft(self.read_u64(&format!("{d}/free_hugepages")), "0 free pages");
            out.push(HugePages {
                page_size_bytes,
                total: total.unwrap_or(0),
                free: free.unwrap_or(0),
            });
        }
        out.sort_by_key(|h| h.page_size_bytes);
        out
    }

    fn hmat(&mut self, node_dir: &str) -> Option<Hmat> {
        let a0 = self.hmat_access(&format!("{node_dir}/access0"));
        let a1 = self.hmat_access(&format!("{node_dir}/access1"));
        if a0.is_none() && a1.is_none() {
            return None;
        }
        Some(Hmat { access0: a0, access1: a1 })
    }

    fn hmat_access(&mut self, dir: &str) -> Option<HmatAccess> {
        if !self.root.path(dir).is_dir() {
            return None;
        }
        let ini = format!("{dir}/initiators");
        let listed = self.root.list_ids(&ini, "node").map(Some);
        let initiators: NodeSet =
            self.soft(listed, "no initiators").unwrap_or_default().into_iter().collect();
        let listed = self.root.list_ids(&format!("{dir}/targets"), "node").map(Some);
        let targets: NodeSet =
            self.soft(listed, "no targets").unwrap_or_default().into_iter().collect();
        let mut value = |name: &str| {
            let r = self.read_u64(&format!("{ini}/{name}"));
            self.soft(r, "not reported")
        };
        Some(HmatAccess {
            initiators,
            targets,
            read_bandwidth_mbs: value("read_bandwidth"),
            write_bandwidth_mbs: value("write_bandwidth"),
            read_latency_ns: value("read_latency"),
            write_latency_ns: value("write_latency"),
        })
    }

    fn memory_side_caches(&mut self, node_dir: &str) -> Vec<MemorySideCache> {
        let dir = format!("{node_dir}/memory_side_cache");
        let mut out = Vec::new();
        let listed = self.root.list_ids(&dir, "index").map(Some);
        for index in self.soft(listed, "no memory-side caches").unwrap_or_default() {
            let d = format!("{dir}/index{index}");
            let skipped = format!("memory-side cache index{index} left out");
            let Some(size_bytes) = self.soft(self.read_u64(&format!("{d}/size")), &skipped) else {
                continue;
            };
            let line_bytes = self
                .soft(self.read_u64(&format!("{d}/line_size")), "line size unknown")
                .and_then(|v| u32::try_from(v).ok());
            let indexing = self.soft(self.read_u64(&format!("{d}/indexing")), "indexing unknown");
            let write_policy =
                self.soft(self.read_u64(&format!("{d}/write_policy")), "write policy unknown");
            // include/linux/node.h: enum cache_indexing / cache_write_policy.
            let indexing = indexing.map(|v| {
                match v {
                    0 => "direct-mapped",
                    1 => "indexed",
                    _ => "other",
                }
                .to_string()
            });
            let write_policy = write_policy.map(|v| {
                match v {
                    0 => "write-back",
                    1 => "write-through",
                    _ => "other",
                }
                .to_string()
            });
            out.push(MemorySideCache { index, size_bytes, line_bytes, indexing, write_policy });
        }
        out
    }

    fn system_memory(&mut self) -> Option<SystemMemory> {
        let rel = "proc/meminfo";
        let m = self.soft(read::meminfo(self.root, rel), "system memory unknown")?;
        let Some(&total_bytes) = m.get("MemTotal") else {
            self.degrade(&malformed(self.root, rel, "no MemTotal line"), "system memory unknown");
            return None;
        };
        Some(SystemMemory {
            total_bytes,
            free_bytes: m.get("MemFree").copied(),
            available_bytes: m.get("MemAvailable").copied(),
            default_hugepage_bytes: m.get("Hugepagesize").copied(),
            hugepages: self.hugepages("sys/kernel/mm/hugepages"),
        })
    }

    fn memory_tiers(&mut self) -> Vec<MemoryTier> {
        let dir = "sys/devices/virtual/memory_tiering";
        let mut out = Vec::new();
        let listed = self.root.list_ids(dir, "memory_tier").map(Some);
        for id in self.soft(listed, "no memory tiers").unwrap_or_default() {
            let set = self.read_set(&format!("{dir}/memory_tier{id}/nodelist"));
            let nodes = self.soft(set, "a tier of no node").unwrap_or_default();
            out.push(MemoryTier { id, nodes });
        }
        out
    }

    fn devices(&mut self) -> Vec<PciDevice> {
        let dir = "sys/bus/pci/devices";
        let mut out = Vec::new();
        let listed = self.root.list_dir(dir).map(Some);
        for address in self.soft(listed, "no PCI devices").unwrap_or_default() {
            let d = format!("{dir}/{address}");
            let class_rel = format!("{d}/class");
            let skipped = format!("device {address} left out");
            let Some(class_s) = self.soft(self.text(&class_rel), &skipped) else { continue };
            let code = match parse::parse_pci_class(&class_s) {
                Ok(c) => c,
                Err(e) => {
                    self.degrade(&malformed(self.root, &class_rel, e), &skipped);
                    continue;
                }
            };
            let Some(class) = parse::classify_pci(code) else { continue };
            let numa_rel = format!("{d}/numa_node");
            let numa_node = match self.soft(self.text(&numa_rel), "no node") {
                Some(s) => match parse::parse_numa_node(&s) {
                    Ok(n) => n,
                    Err(e) => {
                        self.degrade(&malformed(self.root, &numa_rel, e), "no node");
                        None
                    }
                },
                None => None,
            };
            let local_cpus =
                self.soft_list_or_map(&format!("{d}/local_cpulist"), &format!("{d}/local_cpus"));
            let hex = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            let mut id = |file: &str, assumed: &str| {
                let rel = format!("{d}/{file}");
                let v = self.soft(self.text(&rel), assumed);
                hex(self.nonempty(&rel, v, assumed, |s| s.trim().is_empty()))
            };
            let vendor_id = id("vendor", "vendor unknown");
            let device_id = id("device", "device unknown");
            out.push(PciDevice {
                address,
                class,
                class_code: format!("{code:#08x}"),
                vendor_id,
                device_id,
                numa_node,
                local_cpus,
            });
        }
        out
    }

    fn cgroup(&mut self, online: &CpuSet, nodes: &[Node]) -> Cgroup {
        let root = self.root;
        let no_limits = "no cgroup limits";
        let empty = |s: &String| s.trim().is_empty();
        let mounts = self.soft(self.text("proc/mounts"), no_limits);
        let mounts = self.nonempty("proc/mounts", mounts, no_limits, empty);
        let mounts = mounts.map(|s| parse::parse_mounts(&s)).unwrap_or_default();
        let entries = self.soft(self.text("proc/self/cgroup"), no_limits);
        let entries = match self.nonempty("proc/self/cgroup", entries, no_limits, empty) {
            Some(s) => match parse::parse_proc_cgroup(&s) {
                Ok(e) => e,
                Err(e) => {
                    self.degrade(&malformed(root, "proc/self/cgroup", e), no_limits);
                    Vec::new()
                }
            },
            None => Vec::new(),
        };
        let mut cg = Cgroup { version: "none".into(), ..Cgroup::default() };

        // cgroup v1 cpuset hierarchy, or the older cpuset filesystem
        // (`/dev/cpuset`, files without the `cpuset.` prefix).
        let v1_mount = mounts.iter().find(|m| {
            (m.fstype == "cgroup" && m.options.iter().any(|o| o == "cpuset"))
                || m.fstype == "cpuset"
        });
        let v2 = entries.iter().find(|e| e.hierarchy == 0 && e.controllers.is_empty());
        let v2_mount = mounts.iter().find(|m| m.fstype == "cgroup2");

        if let Some(m) = v1_mount {
            let path = match entries.iter().find(|e| e.controllers.iter().any(|c| c == "cpuset")) {
                Some(e) => e.path.clone(),
                None => {
                    let c = self.soft(self.text("proc/self/cpuset"), "the root cpuset");
                    self.nonempty("proc/self/cpuset", c, "the root cpuset", empty)
                        .map_or("/".into(), |s| s.trim().to_string())
                }
            };
            let dir = join_rel(&m.mount_point, &path);
            let eff_cpus = self.first_set(&[
                format!("{dir}/cpuset.effective_cpus"),
                format!("{dir}/effective_cpus"),
            ]);
            let cpus = self.first_set(&[format!("{dir}/cpuset.cpus"), format!("{dir}/cpus")]);
            let eff_mems = self.first_set(&[
                format!("{dir}/cpuset.effective_mems"),
                format!("{dir}/effective_mems"),
            ]);
            let mems = self.first_set(&[format!("{dir}/cpuset.mems"), format!("{dir}/mems")]);
            for (what, eff, conf) in [("cpus", &eff_cpus, &cpus), ("mems", &eff_mems, &mems)] {
                if let (Some(e), Some(c)) = (eff, conf) {
                    if e != c {
                        self.warn(format!(
                            "cgroup {path}: effective {what} ({}) differ from the configured \
                             cpuset.{what} ({}); the effective ones are what the kernel enforces",
                            e.to_list(),
                            c.to_list()
                        ));
                    }
                }
            }
            cg.cpus = eff_cpus.or(cpus);
            cg.mems = eff_mems.or(mems);
            if cg.cpus.is_some() || cg.mems.is_some() {
                cg.version = if m.fstype == "cpuset" { "cpuset" } else { "cgroup1" }.into();
                cg.path = Some(path);
            }
        } else if let (Some(e), Some(m)) = (v2, v2_mount) {
            // Walk up until a cgroup that has the cpuset files (the
            // controller may be enabled only higher up).
            let mut path = e.path.trim_end_matches('/').to_string();
            loop {
                let dir = join_rel(&m.mount_point, &path);
                let (c_rel, m_rel) = (
                    format!("{dir}/cpuset.cpus.effective"),
                    format!("{dir}/cpuset.mems.effective"),
                );
                let cpus = self.soft(self.read_set(&c_rel), "no CPU limit");
                let cpus = self.nonempty(&c_rel, cpus, "no CPU limit", IdSet::is_empty);
                let mems = self.soft(self.read_set(&m_rel), "no memory limit");
                let mems = self.nonempty(&m_rel, mems, "no memory limit", IdSet::is_empty);
                if cpus.is_some() || mems.is_some() {
                    cg.version = "cgroup2".into();
                    cg.path = Some(e.path.clone());
                    cg.cpus = cpus;
                    cg.mems = mems;
                    break;
                }
                match path.rfind('/') {
                    Some(i) => path.truncate(i),
                    None => break,
                }
            }
        }

        if root.is_live() {
            cg.affinity = live_affinity();
        }
        let all_mems: NodeSet =
            nodes.iter().filter(|n| n.mem_total_bytes > 0).map(|n| n.id).collect();
        let cpu_limit = cg.cpus.as_ref().is_some_and(|c| !online.is_subset(c))
            || cg.affinity.as_ref().is_some_and(|a| !online.is_subset(a));
        let mem_limit =
            cg.mems.as_ref().is_some_and(|m| !all_mems.is_empty() && !all_mems.is_subset(m));
        cg.restricts = cpu_limit || mem_limit;
        cg
    }

    /// The first of `rels` that is there and usable. A cpuset this process
    /// is in cannot be empty, so an empty file is unusable.
    fn first_set(&mut self, rels: &[String]) -> Option<IdSet> {
        for r in rels {
            let s = self.soft(self.read_set(r), "no limit from it");
            if let Some(s) = self.nonempty(r, s, "no limit from it", IdSet::is_empty) {
                return Some(s);
            }
        }
        None
    }
}

/// `mount` + `path` as a path relative to the root; `..` components (which
/// would leave the root) are dropped.
fn join_rel(mount: &str, path: &str) -> String {
    mount
        .split('/')
        .chain(path.split('/'))
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect::<Vec<_>>()
        .join("/")
}

fn packages_of(cpus: &[Cpu], nodes: &[Node]) -> Vec<Package> {
    let mut map: BTreeMap<u32, Package> = BTreeMap::new();
    for c in cpus {
        let p = map.entry(c.package).or_insert_with(|| Package {
            id: c.package,
            cpus: CpuSet::new(),
            dies: Vec::new(),
            nodes: NodeSet::new(),
        });
        p.cpus.insert(c.id);
        let die = c.die.unwrap_or(0);
        if !p.dies.contains(&die) {
            p.dies.push(die);
        }
        if let Some(n) = c.node {
            p.nodes.insert(n);
        }
    }
    let mut out: Vec<Package> = map.into_values().collect();
    for p in &mut out {
        p.dies.sort_unstable();
        // Nodes whose cpulist touches the package, even for CPUs not online.
        for n in nodes {
            if !n.cpus.is_disjoint(&p.cpus) {
                p.nodes.insert(n.id);
            }
        }
    }
    out
}

/// This process's `sched_getaffinity` mask.
fn live_affinity() -> Option<CpuSet> {
    read::affinity().ok()
}

#[cfg(test)]
mod tests {
    use super::join_rel;

    #[test]
    fn cgroup_paths_stay_under_the_root() {
        assert_eq!(
            join_rel("/sys/fs/cgroup", "/user.slice/a.scope"),
            "sys/fs/cgroup/user.slice/a.scope"
        );
        assert_eq!(join_rel("/sys/fs/cgroup/cpuset", "/"), "sys/fs/cgroup/cpuset");
        assert_eq!(join_rel("/dev/cpuset", "/../../etc"), "dev/cpuset/etc");
        assert_eq!(join_rel("/", "/"), "");
    }
}
