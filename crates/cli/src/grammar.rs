//! The grammar of flag values, shared by every command (documented once in
//! docs/cli.md): sizes, single nodes and CPUs, node and CPU sets, and the
//! closed sets (page kinds, kernels, instruction sets, stores, profiles,
//! steps) as clap `ValueEnum`s, each mapped to its library type.

use place::SetSpec;

/// `--size` and friends: `4096`, `512M`, `1.5G`, `512MiB`, `2GB` (decimal
/// units are powers of 1000); see [`place::parse_size`].
pub fn size(s: &str) -> Result<u64, String> {
    place::parse_size(s).map_err(|e| e.to_string())
}

/// One id (a node or a CPU), with a clear message when given a list or a
/// set spec: these flags name exactly one.
fn one_id(s: &str, what: &str, plural: &str) -> Result<u32, String> {
    let t = s.trim();
    // Digits only: Rust would read `+0` as 0, which numactl's syntax means
    // as "the first allowed".
    if t.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = t.parse::<u32>() {
            return Ok(n);
        }
    }
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || ",-:!+ ".contains(c))
        || t.eq_ignore_ascii_case("all")
    {
        return Err(format!(
            "this flag takes one {what} number (e.g. 0), not a list of {plural}; \
             '{t}' is a set"
        ));
    }
    Err(format!("expected one {what} number (e.g. 0)"))
}

/// A single NUMA node id (`--mem-node 1`).
pub fn node(s: &str) -> Result<u32, String> {
    one_id(s, "node", "nodes")
}

/// A single CPU id (`--cpu 3`).
pub fn cpu(s: &str) -> Result<u32, String> {
    one_id(s, "CPU", "CPUs")
}

/// A node or CPU set in numactl's syntax (`0-3,8`, `all`, `!2`, `+0-1`),
/// checked now and resolved once the machine is known.
pub fn set(s: &str) -> Result<SetSpec, String> {
    SetSpec::parse(s).map_err(|e| {
        format!("{e}; a set is a list (0-3,8), all, !LIST (all but) or +LIST (relative)")
    })
}

/// `--pages`: one vocabulary for every command that allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Pages {
    /// Whatever the kernel gives (4 KiB pages, or THP when THP is
    /// `always`): no advice.
    #[value(alias = "base")]
    Default,
    /// Base pages (4 KiB on x86) with transparent huge pages refused
    /// (`MADV_NOHUGEPAGE`).
    #[value(name = "4k", aliases = ["nothp", "no-thp", "small"])]
    Small,
    /// Transparent huge pages asked for (`MADV_HUGEPAGE`), best effort: the
    /// share obtained is reported.
    Thp,
    /// 2 MiB hugetlbfs pages (must be reserved).
    #[value(name = "2m", alias = "huge2m")]
    Huge2M,
    /// 1 GiB hugetlbfs pages (must be reserved).
    #[value(name = "1g", alias = "huge1g")]
    Huge1G,
}

impl Pages {
    /// The placement layer's page kind.
    pub fn to_place(self) -> place::PageKind {
        match self {
            Pages::Default => place::PageKind::Base,
            Pages::Small => place::PageKind::NoThp,
            Pages::Thp => place::PageKind::Thp,
            Pages::Huge2M => place::PageKind::Huge2M,
            Pages::Huge1G => place::PageKind::Huge1G,
        }
    }

    /// The latency experiment's page kind (the placement layer's); `None`
    /// for `default`, which it does not take (a chase needs to know its
    /// page size).
    pub fn to_lat(self) -> Option<place::PageKind> {
        (self != Pages::Default).then(|| self.to_place())
    }
}

/// `bw --kernel`: the bandwidth kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelName {
    /// STREAM copy: a = b.
    Copy,
    /// STREAM scale: a = q*b.
    Scale,
    /// STREAM add: a = b + c.
    Add,
    /// STREAM triad: a = b + q*c.
    Triad,
    /// Read only (a sum).
    #[value(alias = "load")]
    Read,
    /// Write only (a fill).
    #[value(alias = "store")]
    Write,
    /// Three reads to one write.
    #[value(name = "rw3:1")]
    Rw3to1,
    /// Two reads to one write.
    #[value(name = "rw2:1")]
    Rw2to1,
    /// One read to one write.
    #[value(name = "rw1:1")]
    Rw1to1,
}

impl From<KernelName> for kernels::Kernel {
    fn from(k: KernelName) -> Self {
        use kernels::Kernel as K;
        match k {
            KernelName::Copy => K::Copy,
            KernelName::Scale => K::Scale,
            KernelName::Add => K::Add,
            KernelName::Triad => K::Triad,
            KernelName::Read => K::Read,
            KernelName::Write => K::Write,
            KernelName::Rw3to1 => K::Rw3to1,
            KernelName::Rw2to1 => K::Rw2to1,
            KernelName::Rw1to1 => K::Rw1to1,
        }
    }
}

/// `bw --isa`: an instruction set to force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IsaName {
    Scalar,
    Sse2,
    Avx2,
    Avx512,
    Neon,
}

impl From<IsaName> for kernels::Isa {
    fn from(i: IsaName) -> Self {
        use kernels::Isa as I;
        match i {
            IsaName::Scalar => I::Scalar,
            IsaName::Sse2 => I::Sse2,
            IsaName::Avx2 => I::Avx2,
            IsaName::Avx512 => I::Avx512,
            IsaName::Neon => I::Neon,
        }
    }
}

/// `bw --stores`: how kernels write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stores {
    /// Non-temporal stores when the instruction set has them.
    Auto,
    /// Non-temporal (streaming) stores.
    #[value(aliases = ["non-temporal", "streaming"])]
    Nt,
    /// Regular stores (through the caches).
    #[value(aliases = ["normal", "temporal"])]
    Regular,
}

impl From<Stores> for bench::bw::StoreMode {
    fn from(s: Stores) -> Self {
        match s {
            Stores::Auto => bench::bw::StoreMode::Auto,
            Stores::Nt => bench::bw::StoreMode::Nt,
            Stores::Regular => bench::bw::StoreMode::Regular,
        }
    }
}

/// `--profile`: the workload a settings audit judges against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Profile {
    Hpc,
    Database,
    Virtualization,
    AiTraining,
    Latency,
    General,
}

impl From<Profile> for audit::Profile {
    fn from(p: Profile) -> Self {
        match p {
            Profile::Hpc => audit::Profile::Hpc,
            Profile::Database => audit::Profile::Database,
            Profile::Virtualization => audit::Profile::Virtualization,
            Profile::AiTraining => audit::Profile::AiTraining,
            Profile::Latency => audit::Profile::Latency,
            Profile::General => audit::Profile::General,
        }
    }
}

/// `run --only/--skip`: the steps of the plan, as it names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StepName {
    BwLocal,
    BwMatrix,
    BwGlobal,
    BwInterleave,
    BwWeighted,
    BwScaling,
    LatMatrix,
    LatSweep,
    LatPrefetch,
    LatPerCpu,
    LatLoaded,
    LatC2c,
}

impl StepName {
    /// The name as typed (`bw-local`).
    pub fn name(self) -> String {
        use clap::ValueEnum;
        self.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn single_ids_refuse_lists_clearly() {
        assert_eq!(node(" 3 ").unwrap(), 3);
        assert_eq!(cpu("17").unwrap(), 17);
        for list in ["0,1", "0-3", "all", "!2", "+0"] {
            let e = node(list).unwrap_err();
            assert!(e.contains("one node number") && e.contains("not a list"), "{list}: {e}");
        }
        let e = cpu("x").unwrap_err();
        assert_eq!(e, "expected one CPU number (e.g. 0)");
        assert!(node("-1").unwrap_err().contains("not a list"));
    }

    #[test]
    fn sets_take_numactl_syntax() {
        for s in ["0-3,8", "all", "!2", "+0-1"] {
            assert_eq!(set(s).unwrap().to_string(), s);
        }
        let e = set("1-").unwrap_err();
        assert!(e.contains("'1-'") && e.contains("!LIST"), "{e}");
    }

    #[test]
    fn sizes_are_the_placement_layers() {
        assert_eq!(size("1.5G").unwrap(), 3 << 29);
        assert_eq!(size("2GB").unwrap(), 2_000_000_000);
        assert!(size("0").unwrap_err().contains("at least 1 byte"));
    }

    /// Every name a closed set accepts maps to the library's own parse of
    /// that name, so the two cannot drift.
    #[test]
    fn closed_sets_agree_with_their_libraries() {
        for k in KernelName::value_variants() {
            let name = k.to_possible_value().unwrap();
            for n in name.get_name_and_aliases() {
                assert_eq!(kernels::Kernel::parse(n), Some(kernels::Kernel::from(*k)), "{n}");
            }
        }
        for i in IsaName::value_variants() {
            let n = i.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(kernels::Isa::parse(&n), Some(kernels::Isa::from(*i)), "{n}");
        }
        for s in Stores::value_variants() {
            for n in s.to_possible_value().unwrap().get_name_and_aliases() {
                assert_eq!(bench::bw::StoreMode::parse(n), Some(bench::bw::StoreMode::from(*s)));
            }
        }
        for p in Profile::value_variants() {
            let n = p.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(n.parse::<audit::Profile>().unwrap(), audit::Profile::from(*p), "{n}");
        }
    }

    #[test]
    fn pages_mean_the_same_everywhere() {
        let p = |s: &str| Pages::from_str(s, true).unwrap();
        assert_eq!(p("default").to_place(), place::PageKind::Base);
        assert_eq!(p("base").to_place(), place::PageKind::Base);
        // 4k is base pages with THP refused, in bw, lat and place alike.
        for s in ["4k", "nothp", "no-thp", "small"] {
            assert_eq!(p(s).to_place(), place::PageKind::NoThp, "{s}");
            assert_eq!(p(s).to_lat().unwrap(), place::PageKind::NoThp, "{s}");
        }
        for (s, k) in [
            ("thp", place::PageKind::Thp),
            ("2m", place::PageKind::Huge2M),
            ("1g", place::PageKind::Huge1G),
        ] {
            assert_eq!(p(s).to_place(), k);
            assert_eq!(p(s).to_lat().unwrap(), k);
        }
        assert_eq!(p("default").to_lat(), None);
    }

    #[test]
    fn step_names_are_the_plans() {
        assert_eq!(StepName::LatPerCpu.name(), "lat-per-cpu");
        assert_eq!(StepName::LatC2c.name(), "lat-c2c");
        assert_eq!(StepName::LatPrefetch.name(), "lat-prefetch");
    }
}
