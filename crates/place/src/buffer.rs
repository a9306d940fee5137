//! Large anonymous buffers with the page size the caller asks for, and an
//! honest account of the page size obtained.

use std::os::raw::c_void;

use serde::{Deserialize, Serialize};
use topo::SysRoot;

use crate::error::{PlaceError, Result};
use crate::policy::{bind_range, Existing, MemPolicy};
use crate::sys;
use crate::verify::{page_nodes, PageNodes};

const MAP_HUGE_SHIFT: i32 = 26;

/// The size of one transparent huge page: the kernel's PMD size
/// (`/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`), 2 MiB with
/// 4 KiB base pages, 32 MiB with arm64's 16 KiB and 512 MiB with its
/// 64 KiB. Without the file (a kernel without THP) the size is what the
/// base page implies on x86-64 and arm64, [`pmd_size`]. Read once.
pub fn thp_size() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        SysRoot::live()
            .read_u64("sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
            .ok()
            .flatten()
            .and_then(|b| usize::try_from(b).ok())
            .filter(|b| b.is_power_of_two())
            .unwrap_or_else(|| pmd_size(sys::page_size()))
    })
}

/// What one page-table page maps on x86-64 and arm64: `page / 8` entries
/// of 8 bytes, each mapping a page (4 KiB -> 2 MiB, 16 KiB -> 32 MiB,
/// 64 KiB -> 512 MiB).
pub fn pmd_size(page: usize) -> usize {
    page / 8 * page
}

use results::pages::PageKind;

/// Plain data that may be viewed in a buffer: any bit pattern is valid
/// (untouched anonymous memory reads as zeros).
///
/// # Safety
/// Implementors must be valid for every bit pattern, with no padding.
pub unsafe trait Pod: Copy {}
// SAFETY: primitive numbers are valid for all bit patterns.
unsafe impl Pod for u8 {}
// SAFETY: as above.
unsafe impl Pod for u16 {}
// SAFETY: as above.
unsafe impl Pod for u32 {}
// SAFETY: as above.
unsafe impl Pod for u64 {}
// SAFETY: as above.
unsafe impl Pod for usize {}
// SAFETY: as above.
unsafe impl Pod for i32 {}
// SAFETY: as above.
unsafe impl Pod for i64 {}
// SAFETY: as above.
unsafe impl Pod for f32 {}
// SAFETY: as above.
unsafe impl Pod for f64 {}

/// An anonymous private mapping, page-aligned (aligned to the transparent
/// huge page size, [`thp_size`], when at least that long; hugetlb-page-aligned
/// for hugetlb), never touched by `alloc`. Unmapped on drop.
#[derive(Debug)]
pub struct Buffer {
    ptr: *mut u8,
    len: usize,
    /// Length of the mapping (len rounded up to the page size).
    map_len: usize,
    kind: PageKind,
}

// SAFETY: a Buffer owns its mapping exclusively; shared access only hands
// out `&[T]` and raw pointers, mutation needs `&mut self`.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps `len` bytes of anonymous memory backed by `kind` pages. Nothing
    /// is touched: call [`bind`](Self::bind) (or set a thread policy) then
    /// [`touch`](Self::touch) to place the pages.
    pub fn alloc(len: usize, kind: PageKind) -> Result<Buffer> {
        if len == 0 {
            return Err(PlaceError::InvalidArgument("buffer length must be positive".into()));
        }
        let page = sys::page_size();
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let base_flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        if let Some(huge) = kind.hugetlb_bytes() {
            let map_len = len.div_ceil(huge) * huge;
            let shift = huge.trailing_zeros() as i32;
            let flags = base_flags | libc::MAP_HUGETLB | (shift << MAP_HUGE_SHIFT);
            // SAFETY: anonymous mapping, no address hint; result checked.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), map_len, prot, flags, -1, 0) };
            if p == libc::MAP_FAILED {
                let err = std::io::Error::last_os_error();
                let dir = format!("hugepages-{}kB", huge / 1024);
                return Err(PlaceError::NoHugePages {
                    page_size_bytes: huge as u64,
                    msg: format!(
                        "mmap(MAP_HUGETLB, {map_len} bytes of {} KiB pages) failed: {err}; \
                         reserve pages first, e.g. echo N > /sys/kernel/mm/hugepages/{dir}/nr_hugepages",
                        huge / 1024
                    ),
                });
            }
            return Ok(Buffer { ptr: p as *mut u8, len, map_len, kind });
        }
        let map_len = len.div_ceil(page) * page;
        // Map a little more and trim, so that the buffer starts on a huge
        // page boundary and THP can back all of it.
        let thp = thp_size();
        let align = if map_len >= thp { thp } else { page };
        let over = map_len + align - page;
        // SAFETY: anonymous mapping, no address hint; result checked.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), over, prot, base_flags, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(PlaceError::last_os("mmap", format!("{over} bytes anonymous")));
        }
        let start = (p as usize).next_multiple_of(align);
        let head = start - p as usize;
        let tail = over - head - map_len;
        // SAFETY: we unmap only the slack before `start` and after
        // `start + map_len`, both inside the mapping we just made.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((start + map_len) as *mut c_void, tail);
            }
        }
        let buf = Buffer { ptr: start as *mut u8, len, map_len, kind };
        let advice = match kind {
            PageKind::Thp => Some((libc::MADV_HUGEPAGE, "MADV_HUGEPAGE")),
            PageKind::NoThp => Some((libc::MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE")),
            _ => None,
        };
        if let Some((adv, name)) = advice {
            // SAFETY: advice on our own mapping.
            if unsafe { libc::madvise(buf.ptr as *mut c_void, map_len, adv) } != 0 {
                return Err(PlaceError::last_os("madvise", format!("{name}, {map_len} bytes")));
            }
        }
        Ok(buf)
    }

    /// The length asked for, in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false (an empty buffer cannot be allocated).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The length of the mapping (the length rounded up to the page size).
    pub fn mapped_len(&self) -> usize {
        self.map_len
    }

    /// The page kind requested.
    pub fn kind(&self) -> PageKind {
        self.kind
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The buffer as `len / size_of::<T>()` elements of `T`.
    pub fn as_slice<T: Pod>(&self) -> &[T] {
        // SAFETY: the mapping is readable, page-aligned (so aligned for any
        // primitive), `len` bytes long, and any bit pattern is a valid `T`.
        unsafe {
            std::slice::from_raw_parts(self.ptr as *const T, self.len / std::mem::size_of::<T>())
        }
    }

    /// The buffer as mutable elements of `T`.
    pub fn as_mut_slice<T: Pod>(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, and `&mut self` makes the access exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr as *mut T, self.len / std::mem::size_of::<T>())
        }
    }

    /// Sets the memory policy of the whole mapping (`mbind`), migrating
    /// pages already present (see [`Existing::Move`]).
    pub fn bind(&self, policy: &MemPolicy) -> Result<()> {
        // SAFETY: the range is exactly our own mapping.
        unsafe { bind_range(self.ptr, self.map_len, policy, Existing::Move) }
    }

    /// First touch: writes one zero byte per base page from the calling
    /// thread, so that each page is allocated under the policy in force.
    pub fn touch(&mut self) {
        let page = sys::page_size();
        let mut off = 0;
        while off < self.map_len {
            // SAFETY: `off < map_len`, inside our writable mapping.
            unsafe { std::ptr::write_volatile(self.ptr.add(off), 0) };
            off += page;
        }
    }

    /// Where the pages are (`move_pages`), sampling at most `max_samples`
    /// pages; see [`crate::verify::page_nodes`].
    pub fn page_nodes(&self, max_samples: usize) -> Result<PageNodes> {
        // SAFETY-free: page_nodes only queries addresses.
        page_nodes(self.ptr, self.map_len, max_samples)
    }

    /// What backs the buffer now: hugetlb size from the mapping, THP share
    /// measured from `/proc/self/smaps`. Call after touching.
    pub fn page_report(&self) -> Result<PageReport> {
        let smaps = SysRoot::live().read("proc/self/smaps")?;
        Ok(page_report_from_smaps(&smaps, self.ptr as usize, self.map_len, self.kind))
    }

    /// The page size obtained, in bytes: the hugetlb size, the transparent
    /// huge page size ([`thp_size`]) when smaps shows the whole buffer in
    /// transparent huge pages, else the base page size. See [`page_report`](Self::page_report) for the detail.
    pub fn obtained_page_size(&self) -> Result<u64> {
        Ok(self.page_report()?.page_size_bytes)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly our own mapping, once.
        unsafe { libc::munmap(self.ptr as *mut c_void, self.map_len) };
    }
}

/// What page size a buffer really got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageReport {
    /// What was asked (`base`, `thp`, `nothp`, `2m`, `1g`).
    pub requested: PageKind,
    /// What backs most of the buffer: the hugetlb page size, the
    /// transparent huge page size (2097152 with 4 KiB base pages) when at
    /// least half of the buffer is in transparent huge pages, else the
    /// base page size.
    pub page_size_bytes: u64,
    /// `hugetlb`, `thp` (measured), `thp-requested` (asked, but smaps shows
    /// no huge pages), `base`.
    pub obtained: String,
    /// Bytes of the mapping in transparent huge pages (`AnonHugePages` of
    /// the smaps entries covering it; they may include a merged neighbour).
    pub thp_bytes: Option<u64>,
    /// `KernelPageSize` of the mapping in smaps.
    pub kernel_page_size_bytes: Option<u64>,
    /// Where the figures came from (`smaps`, or `none` when the mapping was
    /// not found).
    pub source: String,
}

/// Builds a [`PageReport`] from the text of `/proc/self/smaps` for the
/// range `start..start+len`, with this machine's page sizes.
pub fn page_report_from_smaps(smaps: &str, start: usize, len: usize, kind: PageKind) -> PageReport {
    let sizes = PageSizes { base: sys::page_size() as u64, thp: thp_size() as u64 };
    page_report_with(smaps, start, len, kind, sizes)
}

/// A machine's base and transparent huge page sizes, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSizes {
    pub base: u64,
    pub thp: u64,
}

/// [`page_report_from_smaps`] for a machine with the page sizes `sizes`.
pub fn page_report_with(
    smaps: &str,
    start: usize,
    len: usize,
    kind: PageKind,
    sizes: PageSizes,
) -> PageReport {
    let end = start + len;
    let mut thp: Option<u64> = None;
    let mut kps: Option<u64> = None;
    let mut in_range = false;
    let mut found = false;
    for line in smaps.lines() {
        if let Some((range, _)) = line.split_once(' ') {
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
                {
                    in_range = a < end && b > start;
                    found |= in_range;
                    continue;
                }
            }
        }
        if !in_range {
            continue;
        }
        let kb = |l: &str| -> Option<u64> {
            l.split_whitespace().nth(1)?.parse::<u64>().ok().map(|v| v * 1024)
        };
        if line.starts_with("AnonHugePages:") {
            thp = Some(thp.unwrap_or(0) + kb(line).unwrap_or(0));
        } else if line.starts_with("KernelPageSize:") {
            kps = kb(line).or(kps);
        }
    }
    let base = sizes.base;
    let (size, obtained) = if let Some(h) = kind.hugetlb_bytes() {
        (kps.unwrap_or(h as u64), "hugetlb")
    } else if thp.unwrap_or(0) * 2 >= len as u64 && thp.unwrap_or(0) > 0 {
        (sizes.thp, "thp")
    } else if kind == PageKind::Thp {
        (base, "thp-requested")
    } else {
        (kps.unwrap_or(base), "base")
    };
    PageReport {
        requested: kind,
        page_size_bytes: size,
        obtained: obtained.to_string(),
        thp_bytes: thp,
        kernel_page_size_bytes: kps,
        source: if found { "smaps".into() } else { "none".into() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB2: usize = 2 << 20;

    #[test]
    fn buffers_are_aligned_zeroed_and_writable() {
        let mut b = Buffer::alloc(3 * MIB2 + 5, PageKind::NoThp).unwrap();
        assert_eq!(b.as_ptr() as usize % MIB2, 0);
        assert_eq!(b.len(), 3 * MIB2 + 5);
        assert_eq!(b.mapped_len() % sys::page_size(), 0);
        assert!(b.as_slice::<u64>().iter().all(|&x| x == 0));
        b.as_mut_slice::<u64>()[7] = 42;
        assert_eq!(b.as_slice::<u64>()[7], 42);
        assert!(Buffer::alloc(0, PageKind::Base).is_err());
    }

    #[test]
    fn nothp_buffer_reports_base_pages() {
        let mut b = Buffer::alloc(4 * MIB2, PageKind::NoThp).unwrap();
        b.touch();
        let r = b.page_report().unwrap();
        assert_eq!(r.source, "smaps");
        assert_eq!(r.thp_bytes, Some(0));
        assert_eq!(r.page_size_bytes, sys::page_size() as u64);
        assert_eq!(r.obtained, "base");
    }

    #[test]
    fn smaps_parser_sums_thp_of_the_covering_entries_only() {
        let smaps = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
KernelPageSize:        4 kB
AnonHugePages:      4096 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0 
Size:               2048 kB
KernelPageSize:        4 kB
AnonHugePages:      2048 kB
";
        let r = page_report_from_smaps(smaps, 0x7f0000000000, 0x400000, PageKind::Thp);
        assert_eq!(r.thp_bytes, Some(4 << 20));
        assert_eq!(r.obtained, "thp");
        assert_eq!(r.page_size_bytes, MIB2 as u64);
        let none = smaps.replace("AnonHugePages:      4096 kB", "AnonHugePages:         0 kB");
        let r = page_report_from_smaps(&none, 0x7f0000000000, 0x400000, PageKind::Thp);
        assert_eq!(r.obtained, "thp-requested");
        let r = page_report_from_smaps(smaps, 0x100, 0x1000, PageKind::Base);
        assert_eq!(r.source, "none");
    }

    #[test]
    fn the_huge_page_follows_the_base_page() {
        assert_eq!(pmd_size(4 << 10), 2 << 20);
        assert_eq!(pmd_size(16 << 10), 32 << 20);
        assert_eq!(pmd_size(64 << 10), 512 << 20);
        assert!(thp_size().is_power_of_two() && thp_size() > sys::page_size());
    }

    /// A 64 KiB-page arm64 kernel: its smaps count 64 kB kernel pages and
    /// 512 MiB transparent huge pages, and the report says so (not 2 MiB,
    /// not 4 KiB).
    #[test]
    fn a_64k_page_kernels_smaps_give_its_own_page_sizes() {
        let sizes = PageSizes { base: 64 << 10, thp: pmd_size(64 << 10) as u64 };
        let smaps = "\
ffff80000000-ffffc0000000 rw-p 00000000 00:00 0 
Size:            1048576 kB
KernelPageSize:       64 kB
AnonHugePages:    524288 kB
";
        let start = 0xffff_8000_0000;
        let r = page_report_with(smaps, start, 1 << 30, PageKind::Thp, sizes);
        assert_eq!((r.obtained.as_str(), r.page_size_bytes), ("thp", 512 << 20));
        assert_eq!(r.kernel_page_size_bytes, Some(64 << 10));
        // what smaps measured, whatever was asked
        let r = page_report_with(smaps, start, 1 << 30, PageKind::NoThp, sizes);
        assert_eq!((r.obtained.as_str(), r.page_size_bytes), ("thp", 512 << 20));
        let none = smaps.replace("524288 kB", "0 kB");
        let r = page_report_with(&none, start, 1 << 30, PageKind::NoThp, sizes);
        assert_eq!((r.obtained.as_str(), r.page_size_bytes), ("base", 64 << 10));
        let r = page_report_with(&none, start, 1 << 30, PageKind::Thp, sizes);
        assert_eq!((r.obtained.as_str(), r.page_size_bytes), ("thp-requested", 64 << 10));
    }

    #[test]
    fn thp_report_is_consistent_with_what_smaps_measured() {
        let mut b = Buffer::alloc(4 * MIB2, PageKind::Thp).unwrap();
        b.touch();
        let r = b.page_report().unwrap();
        let thp = r.thp_bytes.expect("smaps has AnonHugePages");
        // Whatever the kernel gave, the verdict follows the measurement.
        if thp * 2 >= b.len() as u64 {
            assert_eq!((r.obtained.as_str(), r.page_size_bytes), ("thp", thp_size() as u64));
        } else {
            assert_eq!(r.obtained, "thp-requested");
        }
    }

    #[test]
    fn hugetlb_without_reserved_pages_fails_clearly() {
        let free = topo::SysRoot::live()
            .read_u64("sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages")
            .unwrap();
        if free.unwrap_or(0) > 0 {
            let b = Buffer::alloc(MIB2, PageKind::Huge2M).unwrap();
            assert_eq!(b.mapped_len(), MIB2);
            return;
        }
        // With no pool, mmap(MAP_HUGETLB) fails at once (reservation).
        let e = Buffer::alloc(MIB2, PageKind::Huge2M).unwrap_err().to_string();
        assert!(e.contains("MAP_HUGETLB") && e.contains("nr_hugepages"), "{e}");
    }
}
