//! The closed sets of flag values (docs/cli.md, "Closed sets"): each one a
//! library's own enum, taken by the words the command line writes it in.
//!
//! The libraries know no flag, so their enums do not implement clap's
//! `ValueEnum`, and the orphan rule forbids this crate to implement it for
//! them. Each set is therefore [`Closed`] around the library's enum: the
//! flag's words, aliases and help per value here, and a value parser
//! (`value_parser = closed::pages()`) that hands the command the library's
//! value itself. clap's own enum parser does the matching, so the help,
//! the possible values and the refusal of a bad value are clap's.

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};

use bench::bw::StoreMode;
use bench::suite::StepName;
use kernels::{Isa, Kernel};
use results::pages::PageKind;
use results::profile::Profile;

/// A library's enum as a flag's closed set of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed<T>(pub T);

/// Implements `ValueEnum` for `Closed<$ty>` from one row per value (the
/// library's variant, then the flag's word with its aliases and help, in
/// the order `--help` lists them) and defines `$parser`, the value parser
/// a flag names.
macro_rules! closed_set {
    ($(#[$doc:meta])* $parser:ident: $ty:ty { $($variant:path => $value:expr,)+ }) => {
        impl clap::ValueEnum for Closed<$ty> {
            fn value_variants<'a>() -> &'a [Self] {
                &[$(Closed($variant)),+]
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(match self.0 {
                    $($variant => $value,)+
                })
            }
        }

        $(#[$doc])*
        pub fn $parser() -> impl TypedValueParser<Value = $ty> {
            EnumValueParser::<Closed<$ty>>::new().map(|c: Closed<$ty>| c.0)
        }
    };
}

fn value(name: &'static str) -> PossibleValue {
    PossibleValue::new(name)
}

closed_set! {
    /// `--pages` (bw, lat, place, scan): `default` is the kernel's choice,
    /// `4k` refuses THP, in every command alike.
    pages: PageKind {
        PageKind::Base => value("default")
            .alias("base")
            .help("Whatever the kernel gives (4 KiB pages, or THP when THP is `always`): no advice"),
        PageKind::NoThp => value("4k").aliases(["nothp", "no-thp", "small"]).help(
            "Base pages (4 KiB on x86) with transparent huge pages refused \
             (`MADV_NOHUGEPAGE`), for exact page counting",
        ),
        PageKind::Thp => value("thp").help(
            "Transparent huge pages asked for (`MADV_HUGEPAGE`), best effort: the share \
             obtained is reported",
        ),
        PageKind::Huge2M => value("2m").alias("huge2m").help(
            "2 MiB hugetlbfs pages (`MAP_HUGETLB | MAP_HUGE_2MB`; must be reserved in \
             `hugepages-2048kB/nr_hugepages`)",
        ),
        PageKind::Huge1G => value("1g").alias("huge1g").help(
            "1 GiB hugetlbfs pages (`MAP_HUGETLB | MAP_HUGE_1GB`; must be reserved in \
             `hugepages-1048576kB`)",
        ),
    }
}

closed_set! {
    /// `bw --kernel`: the names [`Kernel::parse`] takes.
    kernel: Kernel {
        Kernel::Copy => value("copy").help("STREAM copy: a = b"),
        Kernel::Scale => value("scale").help("STREAM scale: a = q*b"),
        Kernel::Add => value("add").help("STREAM add: a = b + c"),
        Kernel::Triad => value("triad").help("STREAM triad: a = b + q*c"),
        Kernel::Read => value("read").alias("load").help("Read only (a sum)"),
        Kernel::Write => value("write").alias("store").help("Write only (a fill)"),
        Kernel::Rw3to1 => value("rw3:1").help("Three reads to one write"),
        Kernel::Rw2to1 => value("rw2:1").help("Two reads to one write"),
        Kernel::Rw1to1 => value("rw1:1").help("One read to one write"),
    }
}

closed_set! {
    /// `bw --isa`: the names [`Isa::name`] writes.
    isa: Isa {
        Isa::Scalar => value("scalar"),
        Isa::Sse2 => value("sse2"),
        Isa::Avx2 => value("avx2"),
        Isa::Avx512 => value("avx512"),
        Isa::Neon => value("neon"),
        Isa::Sve => value("sve"),
    }
}

closed_set! {
    /// `bw --stores` and `run --stores`.
    stores: StoreMode {
        StoreMode::Auto => value("auto").help(
            "Non-temporal stores when the instruction set has them (what the STREAM figures of \
             vendors use), else regular",
        ),
        StoreMode::Nt => value("nt")
            .aliases(["non-temporal", "streaming"])
            .help("Non-temporal (streaming) stores"),
        StoreMode::Regular => value("regular")
            .aliases(["normal", "temporal"])
            .help("Regular stores (through the caches)"),
    }
}

closed_set! {
    /// `--profile` (audit, run): the workload profiles.
    profile: Profile {
        Profile::Hpc => value("hpc").help("Scientific codes with known locality (MPI + OpenMP)"),
        Profile::Database => value("database").help("Large OLTP databases"),
        Profile::Virtualization => value("virtualization").help("Hosts running virtual machines"),
        Profile::AiTraining => value("ai-training").help("GPU training servers"),
        Profile::Latency => value("latency").help("Latency-sensitive services"),
        Profile::General => value("general").help("No particular workload"),
    }
}

closed_set! {
    /// `run --only` and `run --skip`: the steps by the names the plan
    /// prints ([`StepName::as_str`]).
    step: StepName {
        StepName::BwLocal => value("bw-local"),
        StepName::BwMatrix => value("bw-matrix"),
        StepName::BwGlobal => value("bw-global"),
        StepName::BwInterleave => value("bw-interleave"),
        StepName::BwWeighted => value("bw-weighted"),
        StepName::BwPackage => value("bw-package"),
        StepName::BwCrossPackage => value("bw-cross-package"),
        StepName::BwScaling => value("bw-scaling"),
        StepName::LatMatrix => value("lat-matrix"),
        StepName::LatInterleave => value("lat-interleave"),
        StepName::LatPackage => value("lat-package"),
        StepName::LatSweep => value("lat-sweep"),
        StepName::LatPrefetch => value("lat-prefetch"),
        StepName::LatPerCpu => value("lat-per-cpu"),
        StepName::LatLoaded => value("lat-loaded"),
        StepName::LatC2c => value("lat-c2c"),
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum;

    use super::*;

    /// Every word a set takes, with its aliases.
    fn words<T: Copy>(c: &Closed<T>) -> Vec<String>
    where
        Closed<T>: ValueEnum,
    {
        let v = c.to_possible_value().expect("no value is skipped");
        v.get_name_and_aliases().map(str::to_string).collect()
    }

    /// Every word a closed set accepts is one its library parses into the
    /// same value, so the flag and the library cannot drift; each set
    /// holds every value of its enum.
    #[test]
    fn closed_sets_agree_with_their_libraries() {
        assert_eq!(Closed::<Kernel>::value_variants().len(), Kernel::ALL.len());
        for k in Closed::<Kernel>::value_variants() {
            for n in words(k) {
                assert_eq!(Kernel::parse(&n), Some(k.0), "{n}");
            }
        }
        assert_eq!(Closed::<Isa>::value_variants().len(), Isa::ALL.len());
        for i in Closed::<Isa>::value_variants() {
            assert_eq!(words(i), [i.0.name()]);
            assert_eq!(Isa::parse(i.0.name()), Some(i.0));
        }
        for s in Closed::<StoreMode>::value_variants() {
            for n in words(s) {
                assert_eq!(StoreMode::parse(&n), Some(s.0), "{n}");
            }
        }
        assert_eq!(Closed::<Profile>::value_variants().len(), Profile::ALL.len());
        for p in Closed::<Profile>::value_variants() {
            let n = words(p).remove(0);
            assert_eq!(n.parse::<Profile>().unwrap(), p.0, "{n}");
        }
        assert_eq!(Closed::<StepName>::value_variants().len(), StepName::ALL.len());
        for s in Closed::<StepName>::value_variants() {
            assert_eq!(words(s), [s.0.as_str()]);
        }
        assert_eq!(Closed::<PageKind>::value_variants().len(), PageKind::ALL.len());
    }

    /// `--pages` means the same in every command: `default` is the
    /// kernel's choice, `4k` refuses THP; the words are listed in this
    /// order.
    #[test]
    fn the_pages_vocabulary() {
        let p = |s: &str| Closed::<PageKind>::from_str(s, false).unwrap().0;
        assert_eq!(p("default"), PageKind::Base);
        assert_eq!(p("base"), PageKind::Base);
        for s in ["4k", "nothp", "no-thp", "small"] {
            assert_eq!(p(s), PageKind::NoThp, "{s}");
        }
        assert_eq!(
            (p("thp"), p("2m"), p("1g")),
            (PageKind::Thp, PageKind::Huge2M, PageKind::Huge1G)
        );
        assert_eq!((p("huge2m"), p("huge1g")), (PageKind::Huge2M, PageKind::Huge1G));
        let names: Vec<String> =
            Closed::<PageKind>::value_variants().iter().map(|k| words(k).remove(0)).collect();
        assert_eq!(names, ["default", "4k", "thp", "2m", "1g"]);
    }
}
