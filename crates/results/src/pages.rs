//! The kind of pages a buffer is backed with: one type for the placement
//! layer (which allocates them) and the records (which say what was
//! asked). The command line writes them as `--pages` does (`default`,
//! `4k`, `thp`, `2m`, `1g`; docs/cli.md), stored JSON in the first
//! version's names (`base`, `nothp`, `thp`, `2m`, `1g`).

use serde::{Deserialize, Serialize};

/// The kind of pages to back a buffer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PageKind {
    /// Whatever the kernel gives (4 KiB pages, or THP when THP is
    /// `always`): no advice.
    #[serde(rename = "base")]
    Base,
    /// Base pages (4 KiB on x86) with transparent huge pages refused
    /// (`MADV_NOHUGEPAGE`), for exact page counting.
    #[serde(rename = "nothp")]
    NoThp,
    /// Transparent huge pages asked for (`MADV_HUGEPAGE`), best effort: the
    /// share obtained is reported.
    #[serde(rename = "thp")]
    Thp,
    /// 2 MiB hugetlbfs pages (`MAP_HUGETLB | MAP_HUGE_2MB`; must be
    /// reserved in `hugepages-2048kB/nr_hugepages`).
    #[serde(rename = "2m")]
    Huge2M,
    /// 1 GiB hugetlbfs pages (`MAP_HUGETLB | MAP_HUGE_1GB`; must be
    /// reserved in `hugepages-1048576kB`).
    #[serde(rename = "1g")]
    Huge1G,
}

impl PageKind {
    pub const ALL: [PageKind; 5] =
        [PageKind::Base, PageKind::NoThp, PageKind::Thp, PageKind::Huge2M, PageKind::Huge1G];

    /// The stored name (`base`, `thp`, `nothp`, `2m`, `1g`), as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Base => "base",
            PageKind::Thp => "thp",
            PageKind::NoThp => "nothp",
            PageKind::Huge2M => "2m",
            PageKind::Huge1G => "1g",
        }
    }

    /// The hugetlb page size in bytes, for `Huge2M` / `Huge1G`.
    pub fn hugetlb_bytes(self) -> Option<usize> {
        match self {
            PageKind::Huge2M => Some(2 << 20),
            PageKind::Huge1G => Some(1 << 30),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_are_the_first_versions() {
        for k in PageKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<PageKind>(&json).unwrap(), k);
        }
        assert_eq!(PageKind::NoThp.name(), "nothp");
        assert_eq!(PageKind::Huge1G.hugetlb_bytes(), Some(1 << 30));
        assert_eq!(PageKind::Thp.hugetlb_bytes(), None);
    }
}
