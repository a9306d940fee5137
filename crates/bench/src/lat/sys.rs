//! The chase's memory, on top of the `place` crate: a buffer of the page
//! kind asked for, bound to one node, faulted in from the measuring thread,
//! with its placement checked by `move_pages` and its page size as obtained.

use place::{Buffer, MemPolicy, NodeSet};
use serde::{Deserialize, Serialize};

use super::LatError;

/// The page kind asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PageKind {
    /// Base pages (4 KiB on x86), transparent huge pages refused.
    #[serde(rename = "4k")]
    Small,
    /// Transparent huge pages (`madvise(MADV_HUGEPAGE)`), best effort.
    #[serde(rename = "thp")]
    Thp,
    /// 2 MiB hugetlbfs pages (must be reserved).
    #[serde(rename = "2m")]
    Huge2M,
    /// 1 GiB hugetlbfs pages (must be reserved).
    #[serde(rename = "1g")]
    Huge1G,
}

impl PageKind {
    pub fn parse(s: &str) -> Option<PageKind> {
        match s.to_ascii_lowercase().as_str() {
            "4k" | "small" => Some(PageKind::Small),
            "thp" => Some(PageKind::Thp),
            "2m" => Some(PageKind::Huge2M),
            "1g" => Some(PageKind::Huge1G),
            _ => None,
        }
    }

    /// The `place` page kind: base pages with THP refused for `4k`.
    pub fn to_place(self) -> place::PageKind {
        match self {
            PageKind::Small => place::PageKind::NoThp,
            PageKind::Thp => place::PageKind::Thp,
            PageKind::Huge2M => place::PageKind::Huge2M,
            PageKind::Huge1G => place::PageKind::Huge1G,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PageKind::Small => "4k",
            PageKind::Thp => "thp",
            PageKind::Huge2M => "2m",
            PageKind::Huge1G => "1g",
        }
    }

    /// Bytes of one page of this kind (THP counted as 2 MiB).
    pub fn bytes(self) -> usize {
        match self {
            PageKind::Small => place::base_page_size(),
            PageKind::Thp | PageKind::Huge2M => 2 << 20,
            PageKind::Huge1G => 1 << 30,
        }
    }
}

/// Pins the calling thread to one CPU.
pub fn pin_to_cpu(cpu: u32) -> Result<(), LatError> {
    Ok(place::pin_current_thread(cpu)?)
}

/// A buffer of one page kind, bound to one node, faulted in.
pub struct Mapping {
    buf: Buffer,
    pub kind: PageKind,
}

impl Mapping {
    /// Maps `len` bytes, binds them to `node` (`None`: local allocation)
    /// and writes every page from the calling thread so it is placed now.
    pub fn new(len: usize, kind: PageKind, node: Option<u32>) -> Result<Mapping, LatError> {
        let mut buf = Buffer::alloc(len, kind.to_place())?;
        if let Some(n) = node {
            buf.bind(&MemPolicy::Bind(NodeSet::from_iter([n])))?;
        }
        buf.touch();
        Ok(Mapping { buf, kind })
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr()
    }

    /// The whole buffer as bytes.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice::<u8>()
    }

    /// The page size obtained: `4k`, `thp`, `2m`, `1g`, or `4k (thp
    /// refused)` when THP was asked for and smaps shows none.
    pub fn obtained(&self) -> (String, u64) {
        let base = place::base_page_size() as u64;
        match self.buf.page_report() {
            Ok(r) => {
                let thp_pct =
                    r.thp_bytes.map_or(0.0, |t| t as f64 / self.len().max(1) as f64 * 100.0);
                let name = match r.obtained.as_str() {
                    "hugetlb" if r.page_size_bytes == 1 << 30 => "1g".to_string(),
                    "hugetlb" => "2m".to_string(),
                    "thp" if r.page_size_bytes == 2 << 20 && thp_pct >= 90.0 => "thp".to_string(),
                    "thp" => format!("thp-partial ({:.0}%)", thp_pct.min(100.0)),
                    "thp-requested" => "4k (thp not obtained)".to_string(),
                    _ => "4k".to_string(),
                };
                (name, r.page_size_bytes)
            }
            Err(_) => (format!("{} (unverified)", self.kind.name()), base),
        }
    }

    /// Asks the kernel where up to `max_pages` pages are and judges them
    /// against `node`.
    pub fn check_placement(&self, node: u32, max_pages: usize) -> Placement {
        let want = NodeSet::from_iter([node]);
        match self.buf.page_nodes(max_pages) {
            Ok(pages) => {
                let c = place::check(&pages, &want, place::DEFAULT_THRESHOLD);
                Placement {
                    status: if c.ok {
                        PlacementStatus::Verified
                    } else {
                        PlacementStatus::Mismatch
                    },
                    check: Some(c),
                }
            }
            Err(_) => Placement::unverified(),
        }
    }
}

pub use results::placement::{Placement, PlacementStatus};
