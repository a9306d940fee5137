//! Physical address ranges of a buffer from `/proc/self/pagemap` (8 bytes
//! per virtual page: bit 63 present, bits 0-54 the page frame number).
//! The kernel shows frame numbers only to `CAP_SYS_ADMIN`; others read
//! zeros, which this module reports as "not available".

use std::io::{Read, Seek, SeekFrom};

use serde::{Deserialize, Serialize};

use crate::error::{PlaceError, Result};

/// One run of physically contiguous memory, `[start, end)` in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysRange {
    pub start: u64,
    pub end: u64,
}

const PFN_MASK: u64 = (1 << 55) - 1;
const PRESENT: u64 = 1 << 63;

/// Merges page frame numbers (in virtual order, `None` = not present)
/// into contiguous physical ranges, sorted by address.
pub fn ranges_of(pfns: &[Option<u64>], page: u64) -> Vec<PhysRange> {
    let mut out: Vec<PhysRange> = Vec::new();
    for pfn in pfns.iter().flatten() {
        let start = pfn * page;
        match out.last_mut() {
            Some(r) if r.end == start => r.end += page,
            _ => out.push(PhysRange { start, end: start + page }),
        }
    }
    out.sort_by_key(|r| r.start);
    let mut merged: Vec<PhysRange> = Vec::with_capacity(out.len());
    for r in out {
        match merged.last_mut() {
            Some(m) if m.end == r.start => m.end = r.end,
            _ => merged.push(r),
        }
    }
    merged
}

/// The physical ranges backing `[ptr, ptr + len)` (touched pages only);
/// `None` when the kernel hides frame numbers (not root).
pub fn physical_ranges(ptr: *const u8, len: usize) -> Result<Option<Vec<PhysRange>>> {
    let page = crate::base_page_size() as u64;
    let first = ptr as u64 / page;
    let npages = (len as u64).div_ceil(page) as usize;
    let path = "/proc/self/pagemap";
    let io = |e: std::io::Error| PlaceError::Syscall {
        syscall: "read",
        what: path.to_string(),
        source: e,
    };
    let mut f = std::fs::File::open(path).map_err(io)?;
    f.seek(SeekFrom::Start(first * 8)).map_err(io)?;
    let mut buf = vec![0u8; npages * 8];
    f.read_exact(&mut buf).map_err(io)?;
    let mut pfns = Vec::with_capacity(npages);
    let mut any_present = false;
    let mut any_pfn = false;
    for e in buf.chunks_exact(8) {
        let v = u64::from_le_bytes(e.try_into().expect("8 bytes"));
        if v & PRESENT != 0 {
            any_present = true;
            let pfn = v & PFN_MASK;
            any_pfn |= pfn != 0;
            pfns.push(Some(pfn));
        } else {
            pfns.push(None);
        }
    }
    if any_present && !any_pfn {
        return Ok(None);
    }
    Ok(Some(ranges_of(&pfns, page)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_frames_merge_and_gaps_split() {
        let r = ranges_of(&[Some(10), Some(11), None, Some(12), Some(40), Some(5)], 4096);
        assert_eq!(
            r,
            [
                PhysRange { start: 5 * 4096, end: 6 * 4096 },
                PhysRange { start: 10 * 4096, end: 13 * 4096 },
                PhysRange { start: 40 * 4096, end: 41 * 4096 }
            ]
        );
    }

    #[test]
    fn a_touched_buffer_has_ranges_or_none_without_privilege() {
        let mut b = crate::Buffer::alloc(1 << 20, results::pages::PageKind::Base).unwrap();
        b.touch();
        match physical_ranges(b.as_ptr(), b.len()).unwrap() {
            Some(r) => {
                let bytes: u64 = r.iter().map(|r| r.end - r.start).sum();
                assert_eq!(bytes, 1 << 20, "{r:?}");
            }
            None => {
                // SAFETY: geteuid has no preconditions.
                assert_ne!(unsafe { libc::geteuid() }, 0, "root sees frame numbers");
            }
        }
    }
}
