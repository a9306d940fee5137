//! [`Topology::discover`]: reads sysfs and procfs under a [`SysRoot`] into a
//! [`Topology`]. Absent files are normal (kernels and captures differ) and
//! leave fields empty; malformed files are errors naming the file;
//! inconsistent firmware becomes a warning.

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
    /// or when a file is malformed; everything else that is missing is
    /// left empty and, where it matters, said in `warnings`.
    pub fn discover(root: &SysRoot) -> Result<Topology, TopoError> {
        Discovery { root, warnings: Vec::new(), packages_unknown: false }.run()
    }
}

struct Discovery<'a> {
    root: &'a SysRoot,
    warnings: Vec<String>,
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
        let cpuinfo = self.text("proc/cpuinfo")?.map(|s| parse::parse_cpuinfo(&s));
        let arch = if root.is_live() {
            Some(std::env::consts::ARCH.to_string())
        } else {
            cpuinfo.as_ref().and_then(|c| c.arch.clone())
        };
        let kernel = read::kernel_release(root)?;

        let (online_cpus, offline_cpus) = self.online_offline()?;
        let cpus_raw = self.cpus(&online_cpus)?;
        let caches = self.caches(&cpus_raw)?;
        let nodes_raw = self.nodes()?;
        let memory_tiers = self.memory_tiers()?;
        let system_memory = self.system_memory()?;

        // Each CPU's node: the first node whose cpulist holds it; the
        // kernel's cpuN/nodeM link is used when no cpulist does.
        let mut cpus = cpus_raw;
        for c in &mut cpus {
            c.node = nodes_raw.iter().find(|n| n.cpus.contains(c.id)).map(|n| n.id);
            if c.node.is_none() {
                c.node = root.list_ids(&format!("{CPU_DIR}/cpu{}", c.id), "node")?.first().copied();
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
        let devices = self.devices()?;
        let cmdline = match self.text("proc/cmdline")? {
            Some(s) => parse::parse_cmdline(&s),
            None => Cmdline::default(),
        };
        let cgroup = self.cgroup(&online_cpus, &nodes)?;
        let (dax_devices, cxl_regions, memdev_warnings) = crate::memdev::read(root);
        for w in memdev_warnings {
            self.warn(w);
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
            warnings: Vec::new(),
        };
        t.numa_mode = infer_mode(&t);
        t.memory_kinds = crate::memkind::memory_kinds(&t);
        t.warnings = self.warnings;
        Ok(t)
    }

    fn warn(&mut self, msg: String) {
        if !self.warnings.contains(&msg) {
            self.warnings.push(msg);
        }
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

    fn read_mask(&self, rel: &str) -> Result<Option<IdSet>, TopoError> {
        match self.text(rel)? {
            None => Ok(None),
            Some(s) => IdSet::parse_mask(&s).map(Some).map_err(|e| malformed(self.root, rel, e)),
        }
    }

    /// A cpulist file, or its cpumap twin when the list is absent.
    fn read_list_or_map(&self, list: &str, map: &str) -> Result<Option<IdSet>, TopoError> {
        match self.read_set(list)? {
            Some(s) => Ok(Some(s)),
            None => self.read_mask(map),
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

    /// Online CPUs, and CPUs present but offline.
    fn online_offline(&mut self) -> Result<(CpuSet, CpuSet), TopoError> {
        let dirs: CpuSet = self.root.list_ids(CPU_DIR, "cpu")?.into_iter().collect();
        let online = match self.read_set(&format!("{CPU_DIR}/online"))? {
            Some(s) => s,
            None => {
                // Old kernels: every cpuN dir whose `online` is not 0.
                let mut s = CpuSet::new();
                for id in dirs.iter() {
                    if self.read_i64(&format!("{CPU_DIR}/cpu{id}/online"))? != Some(0) {
                        s.insert(id);
                    }
                }
                s
            }
        };
        // The kernel's `offline` file also lists possible-but-absent CPUs
        // (hot-plug slots); only present ones are worth reporting.
        let present = self.read_set(&format!("{CPU_DIR}/present"))?.unwrap_or(dirs);
        Ok((online.clone(), present.difference(&online)))
    }

    /// Online CPUs that have a topology directory.
    fn cpus(&mut self, online: &CpuSet) -> Result<Vec<Cpu>, TopoError> {
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
            let pkg_raw = self.read_i64(&format!("{topo}/physical_package_id"))?;
            let package = match pkg_raw {
                Some(p) if p >= 0 => u32::try_from(p).map_err(|_| {
                    malformed(
                        self.root,
                        &format!("{topo}/physical_package_id"),
                        format!("package id {p} is out of range"),
                    )
                })?,
                _ => {
                    let sibs = self
                        .read_list_or_map(
                            &format!("{topo}/package_cpus_list"),
                            &format!("{topo}/package_cpus"),
                        )?
                        .or(self.read_list_or_map(
                            &format!("{topo}/core_siblings_list"),
                            &format!("{topo}/core_siblings"),
                        )?)
                        .unwrap_or_default();
                    unnumbered.push((out.len(), sibs));
                    0
                }
            };
            // Some kernels write -1 or 0xffff for "no such level".
            let opt_id = |v: Option<i64>| v.filter(|&x| (0..0xffff).contains(&x)).map(|x| x as u32);
            let die = opt_id(self.read_i64(&format!("{topo}/die_id"))?);
            let cluster = opt_id(self.read_i64(&format!("{topo}/cluster_id"))?);
            let core = opt_id(self.read_i64(&format!("{topo}/core_id"))?).unwrap_or(id);
            let mut thread_siblings = self
                .read_list_or_map(
                    &format!("{topo}/thread_siblings_list"),
                    &format!("{topo}/thread_siblings"),
                )?
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
        Ok(out)
    }

    fn caches(&mut self, cpus: &[Cpu]) -> Result<Vec<Cache>, TopoError> {
        let mut seen: BTreeMap<(u8, u8, CpuSet), Cache> = BTreeMap::new();
        for c in cpus {
            let dir = format!("{CPU_DIR}/cpu{}/cache", c.id);
            for idx in self.root.list_ids(&dir, "index")? {
                let d = format!("{dir}/index{idx}");
                let Some(level) = self.read_u64(&format!("{d}/level"))? else { continue };
                let kind = match self.text(&format!("{d}/type"))? {
                    Some(t) => match t.trim() {
                        "Data" => CacheKind::Data,
                        "Instruction" => CacheKind::Instruction,
                        "Unified" => CacheKind::Unified,
                        other => {
                            return Err(malformed(
                                self.root,
                                &format!("{d}/type"),
                                format!("unknown cache type '{other}'"),
                            ))
                        }
                    },
                    None => CacheKind::Unified,
                };
                let size_rel = format!("{d}/size");
                let Some(size) = self.text(&size_rel)? else { continue };
                let size_bytes = parse::parse_cache_size(&size)
                    .map_err(|e| malformed(self.root, &size_rel, e))?;
                if size_bytes == 0 {
                    continue;
                }
                let line_bytes = self
                    .root
                    .read_u64(&format!("{d}/coherency_line_size"))?
                    .and_then(|v| u32::try_from(v).ok());
                let mut shared = self
                    .read_list_or_map(
                        &format!("{d}/shared_cpu_list"),
                        &format!("{d}/shared_cpu_map"),
                    )?
                    .unwrap_or_default();
                shared.insert(c.id);
                let level = u8::try_from(level).map_err(|_| {
                    malformed(self.root, &format!("{d}/level"), format!("cache level {level}"))
                })?;
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
        Ok(v)
    }

    fn nodes(&mut self) -> Result<Vec<Node>, TopoError> {
        let ids = self.root.list_ids(NODE_DIR, "node")?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in &ids {
            let d = format!("{NODE_DIR}/node{id}");
            let list = self.read_set(&format!("{d}/cpulist"))?;
            let map = self.read_mask(&format!("{d}/cpumap"))?;
            let cpus = match (list, map) {
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
            let (mem_total_bytes, mem_free_bytes) = match read::node_meminfo(self.root, id)? {
                Some(m) => (
                    m.get("MemTotal").copied().unwrap_or(0),
                    m.get("MemFree").copied().unwrap_or(0),
                ),
                None => {
                    self.warn(format!("node {id}: no meminfo; memory taken as 0"));
                    (0, 0)
                }
            };
            let dist_rel = format!("{d}/distance");
            let distances = match self.text(&dist_rel)? {
                Some(s) => {
                    let row = parse::parse_distance(&s)
                        .map_err(|e| malformed(self.root, &dist_rel, e))?;
                    self.distance_row(id, &ids, row)?
                }
                None => Vec::new(),
            };
            let hugepages = self.hugepages(&format!("{d}/hugepages"))?;
            let hmat = self.hmat(&d)?;
            let memory_side_caches = self.memory_side_caches(&d)?;
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
    fn distance_row(&mut self, id: u32, ids: &[u32], row: Vec<u32>) -> Result<Vec<u32>, TopoError> {
        if row.len() == ids.len() {
            return Ok(row);
        }
        for file in ["possible", "online"] {
            let Some(index) = self.read_set(&format!("{NODE_DIR}/{file}"))? else { continue };
            if index.len() != row.len() {
                continue;
            }
            let index: Vec<u32> = index.iter().collect();
            let picked: Option<Vec<u32>> =
                ids.iter().map(|n| index.iter().position(|x| x == n).map(|j| row[j])).collect();
            if let Some(r) = picked {
                return Ok(r);
            }
        }
        self.warn(format!(
            "node {id}: distance row has {} entries for {} nodes; distances dropped",
            row.len(),
            ids.len()
        ));
        Ok(Vec::new())
    }

    fn hugepages(&self, dir: &str) -> Result<Vec<HugePages>, TopoError> {
        let mut out = Vec::new();
        for name in self.root.list_dir(dir)? {
            let Some(page_size_bytes) = parse::parse_hugepage_dir(&name) else { continue };
            let d = format!("{dir}/{name}");
            let total = self.read_u64(&format!("{d}/nr_hugepages"))?.unwrap_or(0);
            let free = self.read_u64(&format!("{d}/free_hugepages"))?.unwrap_or(0);
            out.push(HugePages { page_size_bytes, total, free });
        }
        out.sort_by_key(|h| h.page_size_bytes);
        Ok(out)
    }

    fn hmat(&self, node_dir: &str) -> Result<Option<Hmat>, TopoError> {
        let a0 = self.hmat_access(&format!("{node_dir}/access0"))?;
        let a1 = self.hmat_access(&format!("{node_dir}/access1"))?;
        if a0.is_none() && a1.is_none() {
            return Ok(None);
        }
        Ok(Some(Hmat { access0: a0, access1: a1 }))
    }

    fn hmat_access(&self, dir: &str) -> Result<Option<HmatAccess>, TopoError> {
        if !self.root.path(dir).is_dir() {
            return Ok(None);
        }
        let ini = format!("{dir}/initiators");
        let initiators: NodeSet = self.root.list_ids(&ini, "node")?.into_iter().collect();
        let targets: NodeSet =
            self.root.list_ids(&format!("{dir}/targets"), "node")?.into_iter().collect();
        Ok(Some(HmatAccess {
            initiators,
            targets,
            read_bandwidth_mbs: self.read_u64(&format!("{ini}/read_bandwidth"))?,
            write_bandwidth_mbs: self.read_u64(&format!("{ini}/write_bandwidth"))?,
            read_latency_ns: self.read_u64(&format!("{ini}/read_latency"))?,
            write_latency_ns: self.read_u64(&format!("{ini}/write_latency"))?,
        }))
    }

    fn memory_side_caches(&self, node_dir: &str) -> Result<Vec<MemorySideCache>, TopoError> {
        let dir = format!("{node_dir}/memory_side_cache");
        let mut out = Vec::new();
        for index in self.root.list_ids(&dir, "index")? {
            let d = format!("{dir}/index{index}");
            let Some(size_bytes) = self.read_u64(&format!("{d}/size"))? else { continue };
            let line_bytes =
                self.read_u64(&format!("{d}/line_size"))?.and_then(|v| u32::try_from(v).ok());
            // include/linux/node.h: enum cache_indexing / cache_write_policy.
            let indexing = self.read_u64(&format!("{d}/indexing"))?.map(|v| {
                match v {
                    0 => "direct-mapped",
                    1 => "indexed",
                    _ => "other",
                }
                .to_string()
            });
            let write_policy = self.read_u64(&format!("{d}/write_policy"))?.map(|v| {
                match v {
                    0 => "write-back",
                    1 => "write-through",
                    _ => "other",
                }
                .to_string()
            });
            out.push(MemorySideCache { index, size_bytes, line_bytes, indexing, write_policy });
        }
        Ok(out)
    }

    fn system_memory(&self) -> Result<Option<SystemMemory>, TopoError> {
        let rel = "proc/meminfo";
        let Some(m) = read::meminfo(self.root, rel)? else { return Ok(None) };
        let Some(&total_bytes) = m.get("MemTotal") else {
            return Err(malformed(self.root, rel, "no MemTotal line"));
        };
        Ok(Some(SystemMemory {
            total_bytes,
            free_bytes: m.get("MemFree").copied(),
            available_bytes: m.get("MemAvailable").copied(),
            default_hugepage_bytes: m.get("Hugepagesize").copied(),
            hugepages: self.hugepages("sys/kernel/mm/hugepages")?,
        }))
    }

    fn memory_tiers(&self) -> Result<Vec<MemoryTier>, TopoError> {
        let dir = "sys/devices/virtual/memory_tiering";
        let mut out = Vec::new();
        for id in self.root.list_ids(dir, "memory_tier")? {
            let nodes =
                self.read_set(&format!("{dir}/memory_tier{id}/nodelist"))?.unwrap_or_default();
            out.push(MemoryTier { id, nodes });
        }
        Ok(out)
    }

    fn devices(&self) -> Result<Vec<PciDevice>, TopoError> {
        let dir = "sys/bus/pci/devices";
        let mut out = Vec::new();
        for address in self.root.list_dir(dir)? {
            let d = format!("{dir}/{address}");
            let class_rel = format!("{d}/class");
            let Some(class_s) = self.text(&class_rel)? else { continue };
            let code = parse::parse_pci_class(&class_s)
                .map_err(|e| malformed(self.root, &class_rel, e))?;
            let Some(class) = parse::classify_pci(code) else { continue };
            let numa_rel = format!("{d}/numa_node");
            let numa_node = match self.text(&numa_rel)? {
                Some(s) => {
                    parse::parse_numa_node(&s).map_err(|e| malformed(self.root, &numa_rel, e))?
                }
                None => None,
            };
            let local_cpus =
                self.read_list_or_map(&format!("{d}/local_cpulist"), &format!("{d}/local_cpus"))?;
            let hex = |s: Option<String>| s.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
            out.push(PciDevice {
                address,
                class,
                class_code: format!("{code:#08x}"),
                vendor_id: hex(self.text(&format!("{d}/vendor"))?),
                device_id: hex(self.text(&format!("{d}/device"))?),
                numa_node,
                local_cpus,
            });
        }
        Ok(out)
    }

    fn cgroup(&mut self, online: &CpuSet, nodes: &[Node]) -> Result<Cgroup, TopoError> {
        let root = self.root;
        let mounts = self.text("proc/mounts")?.map(|s| parse::parse_mounts(&s)).unwrap_or_default();
        let entries = match self.text("proc/self/cgroup")? {
            Some(s) => {
                parse::parse_proc_cgroup(&s).map_err(|e| malformed(root, "proc/self/cgroup", e))?
            }
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
                None => self.text("proc/self/cpuset")?.map_or("/".into(), |s| s.trim().to_string()),
            };
            let dir = join_rel(&m.mount_point, &path);
            let eff_cpus = self.first_set(&[
                format!("{dir}/cpuset.effective_cpus"),
                format!("{dir}/effective_cpus"),
            ])?;
            let cpus = self.first_set(&[format!("{dir}/cpuset.cpus"), format!("{dir}/cpus")])?;
            let eff_mems = self.first_set(&[
                format!("{dir}/cpuset.effective_mems"),
                format!("{dir}/effective_mems"),
            ])?;
            let mems = self.first_set(&[format!("{dir}/cpuset.mems"), format!("{dir}/mems")])?;
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
                let cpus = self.read_set(&format!("{dir}/cpuset.cpus.effective"))?;
                let mems = self.read_set(&format!("{dir}/cpuset.mems.effective"))?;
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
        Ok(cg)
    }

    fn first_set(&self, rels: &[String]) -> Result<Option<IdSet>, TopoError> {
        for r in rels {
            if let Some(s) = self.read_set(r)? {
                return Ok(Some(s));
            }
        }
        Ok(None)
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
