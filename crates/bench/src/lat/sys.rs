//! The chase's memory, on top of the `place` crate: a buffer of the page
//! kind asked for, bound to one node, faulted in from the measuring thread,
//! with its placement checked by `move_pages` and its page size as obtained.

use place::{Buffer, MemPolicy};
use results::pages::PageKind;
use topo::NodeSet;

use super::LatError;

/// Bytes of one page of `kind` as the chase lays it out (THP counted as
/// 2 MiB; base pages, with or without THP refused, as the base page size).
pub fn page_bytes(kind: PageKind) -> usize {
    match kind {
        PageKind::Base | PageKind::NoThp => place::base_page_size(),
        PageKind::Thp | PageKind::Huge2M => 2 << 20,
        PageKind::Huge1G => 1 << 30,
    }
}

/// The name latency results give the page kind asked for: `4k` for base
/// pages (the chase asks for [`PageKind::NoThp`]: THP refused), else the
/// placement layer's name.
pub fn asked_name(kind: PageKind) -> &'static str {
    match kind {
        PageKind::Base | PageKind::NoThp => "4k",
        k => k.name(),
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
        let policy = node.map(|n| MemPolicy::Bind(NodeSet::from_iter([n])));
        Mapping::with_policy(len, kind, policy.as_ref())
    }

    /// Maps `len` bytes interleaved over `nodes` (`MPOL_INTERLEAVE`, the
    /// policy `bw interleave` gives its arrays) before the first touch.
    pub fn interleaved(len: usize, kind: PageKind, nodes: &NodeSet) -> Result<Mapping, LatError> {
        Mapping::with_policy(len, kind, Some(&MemPolicy::Interleave(nodes.clone())))
    }

    fn with_policy(
        len: usize,
        kind: PageKind,
        policy: Option<&MemPolicy>,
    ) -> Result<Mapping, LatError> {
        let mut buf = Buffer::alloc(len, kind)?;
        if let Some(p) = policy {
            buf.bind(p)?;
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
            Err(_) => (format!("{} (unverified)", asked_name(self.kind)), base),
        }
    }

    /// Asks the kernel where up to `max_pages` pages are and judges them
    /// against `node`.
    pub fn check_placement(&self, node: u32, max_pages: usize) -> Placement {
        let want = NodeSet::from_iter([node]);
        match self.buf.page_nodes(max_pages) {
            Ok(pages) => Placement::of_check(place::check(&pages, &want, place::DEFAULT_THRESHOLD)),
            Err(_) => Placement::unverified(),
        }
    }

    /// Asks the kernel where up to `max_pages` pages are (`move_pages`)
    /// and judges them as `bw` judges its interleaved arrays: on `nodes`,
    /// each node's share within the spread tolerance of an even split.
    pub fn check_interleave(&self, nodes: &NodeSet, max_pages: usize) -> Placement {
        match self.buf.page_nodes(max_pages) {
            Ok(pages) => Placement::of_check(place::check_interleave(
                &pages,
                nodes,
                place::DEFAULT_THRESHOLD,
                crate::bw::SPREAD_TOLERANCE,
            )),
            Err(_) => Placement::unverified(),
        }
    }
}

use results::placement::Placement;
