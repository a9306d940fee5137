//! The hardware facts of a modelled machine and the NUMA settings it can
//! be measured under. Every figure the model produces follows from these
//! (docs/testing.md, "The simulated truth", gives the sources and the
//! ranges the random machines draw from).

/// The kind of processor, which says which NUMA settings its firmware
/// offers and what they are called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Xeon Scalable: Sub-NUMA Clustering off, SNC2, SNC4.
    XeonSnc,
    /// Xeon E5 v3/v4 (Haswell-EP, Broadwell-EP) with more than 10 cores:
    /// Cluster-on-Die off or on (two clusters per package).
    XeonCod,
    /// EPYC: NUMA nodes per socket NPS1, NPS2, NPS4.
    EpycNps,
}

impl Family {
    pub fn vendor(self) -> topo::Vendor {
        match self {
            Family::XeonSnc | Family::XeonCod => topo::Vendor::Intel,
            Family::EpycNps => topo::Vendor::Amd,
        }
    }

    /// Firmware domains per package the family offers.
    pub fn domain_choices(self) -> &'static [u32] {
        match self {
            Family::XeonSnc => &[1, 2, 4],
            Family::XeonCod => &[1, 2],
            Family::EpycNps => &[1, 2, 4],
        }
    }

    /// The name of `d` domains per package in the family's BIOS.
    pub fn domains_label(self, d: u32) -> String {
        match (self, d) {
            (Family::XeonSnc, 1) => "SNC off".into(),
            (Family::XeonSnc, d) => format!("SNC{d}"),
            (Family::XeonCod, 1) => "COD off".into(),
            (Family::XeonCod, _) => "COD".into(),
            (Family::EpycNps, d) => format!("NPS{d}"),
        }
    }

    /// The BIOS switch `--set` declares for `d` domains per package.
    pub fn declared(self, d: u32) -> (&'static str, String) {
        match (self, d) {
            (Family::XeonSnc, 1) => ("bios.snc", "off".into()),
            (Family::XeonSnc, d) => ("bios.snc", d.to_string()),
            (Family::XeonCod, 1) => ("bios.cod", "off".into()),
            (Family::XeonCod, _) => ("bios.cod", "on".into()),
            (Family::EpycNps, d) => ("bios.nps", d.to_string()),
        }
    }

    /// SLIT distance between two domains of one package (`a != b`, indices
    /// inside the package): Xeon reports 11 for every sibling cluster;
    /// EPYC under NPS4 reports 11 for the domain of the same half of the
    /// I/O die and 12 for the other half (STUDIES.md, "What a real machine
    /// reports in each mode").
    pub fn near_distance(self, d: u32, a: u32, b: u32) -> u8 {
        match self {
            Family::EpycNps if d == 4 && a / 2 != b / 2 => 12,
            _ => 11,
        }
    }

    /// SLIT distance across packages: 20 or 21 on Xeon (21 on Xeon
    /// Scalable's SNC captures, 20 in SNC off), 32 on EPYC.
    pub fn far_distance(self, d: u32) -> u8 {
        match self {
            Family::EpycNps => 32,
            Family::XeonSnc if d > 1 => 21,
            _ => 20,
        }
    }
}

/// What splitting a package into `domains` clusters does, relative to
/// the package as one node: the latencies and the efficiencies the
/// vendors and the published studies give for the mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clustering {
    pub domains: u32,
    /// Local latency over the package-wide local latency (SNC and NPS
    /// shorten the path to the memory controllers: below 1).
    pub local: f64,
    /// Latency to a sibling domain of the same package over the
    /// package-wide local latency (above 1: the far half of the mesh).
    pub neighbour: f64,
    /// Under four domains on EPYC, the sibling in the other half of the
    /// I/O die (SLIT 12) over the package-wide local latency.
    pub far_neighbour: f64,
    /// Other-package latency over the package-wide one (the extra hop
    /// of a clustered mesh: at or above 1).
    pub remote: f64,
    /// What the package's mesh (or Infinity Fabric) carries between its
    /// domains and to and from the socket link, GB/s: every byte that
    /// leaves its home domain (to a sibling domain, out over the link, in
    /// from the link) crosses it once in each package it passes.
    pub mesh_gbs: f64,
    /// Sustained channel efficiency over the package-wide one (local
    /// traffic kept near its controllers: at or above 1).
    pub channels: f64,
    /// Socket-link efficiency over the package-wide one (cross-package
    /// traffic of a clustered package: at or below 1).
    pub link: f64,
}

impl Clustering {
    /// One domain per package: the reference every factor is taken
    /// against.
    pub fn none() -> Clustering {
        Clustering {
            domains: 1,
            local: 1.0,
            neighbour: 1.0,
            far_neighbour: 1.0,
            remote: 1.0,
            mesh_gbs: f64::INFINITY,
            channels: 1.0,
            link: 1.0,
        }
    }
}

/// A machine as its hardware makes it. Latencies in ns, bandwidth in
/// GB/s (10^9 bytes/s), sizes in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    pub family: Family,
    /// The CPU model string `topo` reads from `/proc/cpuinfo`.
    pub model: String,
    /// Host name (the machine document's).
    pub hostname: String,
    pub packages: u32,
    /// Physical cores per package (SMT off: one CPU per core).
    pub cores_per_package: u32,
    /// DDR channels per package, one DIMM each.
    pub channels_per_package: u32,
    /// DIMM transfer rate, MT/s.
    pub dimm_mts: u32,
    /// The share of a channel's peak a STREAM triad sustains (0.65-0.9 on
    /// real machines; read as a fitted figure where a study's own
    /// figures say more than the DIMMs' peak, see [`Machine::channel_gbs`]).
    pub dram_efficiency: f64,
    /// Cache lines one core keeps in flight to DRAM (fill buffers plus the
    /// L2 prefetchers' queue): by Little's law a core alone moves
    /// `lines x 64 B / latency`.
    pub lines_in_flight: f64,
    /// Socket-link bandwidth from one package to another, per direction,
    /// all links between them together, GB/s.
    pub link_gbs: f64,
    /// Idle latency to the package's own memory with one node per
    /// package, ns (the whole package's average).
    pub local_ns: f64,
    /// Idle latency to another package's memory with one node per
    /// package, ns.
    pub remote_ns: f64,
    /// Memory per package, bytes.
    pub mem_per_package_bytes: u64,
    /// Last-level cache per package, bytes (shared by its cores).
    pub llc_per_package_bytes: u64,
    /// What each offered number of domains per package does (one entry
    /// per domain count of [`Family::domain_choices`], 1 included).
    pub clusterings: Vec<Clustering>,
    /// Bandwidth of the firmware's cache-line interleave over every
    /// package (BIOS NUMA off) against the same traffic interleaved by
    /// page over NUMA nodes (at or below 1: the coherence traffic of a
    /// machine without NUMA).
    pub firmware_interleave: f64,
    /// Latency under the firmware's interleave over the mean of the
    /// packages' latencies (at or above 1: snoops broadcast to every
    /// package without NUMA's directory).
    pub firmware_interleave_latency: f64,
    /// Core-to-core latency (ns) inside a node, across nodes of a
    /// package and across packages (`lat-c2c`).
    pub c2c_ns: [f64; 3],
}

/// What the firmware makes of the packages' memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Firmware {
    /// NUMA on, `d` domains per package (SNC off/SNC2/SNC4, COD, NPS1/2/4),
    /// each described in the ACPI SRAT and SLIT.
    Domains(u32),
    /// NUMA off in the BIOS (node interleaving): every package's memory
    /// interleaved by cache line, no SRAT.
    Interleave,
}

/// A NUMA setting: the firmware's, and whether the kernel was booted with
/// `numa=off` (one OS node whatever the firmware describes; memory stays
/// where it physically is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Setting {
    pub firmware: Firmware,
    pub numa_off: bool,
}

impl Setting {
    /// NUMA on with `d` domains per package, the kernel's default.
    pub fn domains(d: u32) -> Setting {
        Setting { firmware: Firmware::Domains(d), numa_off: false }
    }

    /// BIOS NUMA off.
    pub fn bios_numa_off() -> Setting {
        Setting { firmware: Firmware::Interleave, numa_off: false }
    }

    /// The same firmware under `numa=off`.
    pub fn with_numa_off(self) -> Setting {
        Setting { numa_off: true, ..self }
    }

    /// Firmware domains per package (1 under BIOS NUMA off, where the
    /// firmware interleaves instead).
    pub fn per_package(self) -> u32 {
        match self.firmware {
            Firmware::Domains(d) => d,
            Firmware::Interleave => 1,
        }
    }

    /// Nodes the OS shows.
    pub fn os_nodes(self, m: &Machine) -> u32 {
        match (self.firmware, self.numa_off) {
            (Firmware::Domains(d), false) => d * m.packages,
            _ => 1,
        }
    }

    /// The label a study gives the setting (`SNC2`, `NPS4 + numa=off`).
    pub fn label(self, m: &Machine) -> String {
        let fw = match self.firmware {
            Firmware::Domains(d) => m.family.domains_label(d),
            Firmware::Interleave => "BIOS NUMA off".into(),
        };
        if self.numa_off {
            format!("{fw} + numa=off")
        } else {
            fw
        }
    }
}

impl Machine {
    /// One channel's theoretical peak: DIMM rate x 8 bytes, GB/s.
    pub fn channel_peak_gbs(&self) -> f64 {
        f64::from(self.dimm_mts) * 8.0 / 1000.0
    }

    /// What one channel sustains under STREAM, GB/s.
    pub fn channel_gbs(&self) -> f64 {
        self.channel_peak_gbs() * self.dram_efficiency
    }

    pub fn cpus(&self) -> u32 {
        self.packages * self.cores_per_package
    }

    /// The clustering of `d` domains per package.
    pub fn clustering(&self, d: u32) -> Clustering {
        if d <= 1 {
            return self
                .clusterings
                .iter()
                .copied()
                .find(|c| c.domains == 1)
                .unwrap_or_else(Clustering::none);
        }
        self.clusterings
            .iter()
            .copied()
            .find(|c| c.domains == d)
            .unwrap_or_else(|| panic!("{:?} offers no {d} domains per package", self.family))
    }

    /// Every setting this machine's firmware and kernel offer: each
    /// domain count, BIOS NUMA off (with two or more packages: on one it
    /// is one domain without an SRAT), and `numa=off` over each domain
    /// count.
    pub fn settings(&self) -> Vec<Setting> {
        let mut v: Vec<Setting> =
            self.clusterings.iter().map(|c| Setting::domains(c.domains)).collect();
        if self.packages > 1 {
            v.push(Setting::bios_numa_off());
        }
        v.extend(self.clusterings.iter().map(|c| Setting::domains(c.domains).with_numa_off()));
        v
    }
}
