//! Raw Linux system calls and the bit masks they take. Private: the rest of
//! the crate wraps them in typed, documented functions.

use std::os::raw::{c_int, c_long, c_ulong, c_void};

use topo::IdSet;

pub const MPOL_DEFAULT: c_int = 0;
pub const MPOL_PREFERRED: c_int = 1;
pub const MPOL_BIND: c_int = 2;
pub const MPOL_INTERLEAVE: c_int = 3;
pub const MPOL_LOCAL: c_int = 4;
pub const MPOL_PREFERRED_MANY: c_int = 5;
pub const MPOL_WEIGHTED_INTERLEAVE: c_int = 6;
/// Mode flags the kernel may OR into the mode reported by get_mempolicy.
pub const MPOL_MODE_FLAGS: c_int = (1 << 15) | (1 << 14) | (1 << 13);

pub const MPOL_F_NODE: c_ulong = 1;
pub const MPOL_F_ADDR: c_ulong = 2;
pub const MPOL_F_MEMS_ALLOWED: c_ulong = 4;

pub const MPOL_MF_STRICT: c_ulong = 1;
pub const MPOL_MF_MOVE: c_ulong = 2;

/// Bits in the node masks we hand the kernel: the largest MAX_NUMNODES a
/// kernel can be built with (NODES_SHIFT=10). get_mempolicy refuses masks
/// smaller than the kernel's node count, so we always pass this many.
pub const NODE_MASK_BITS: usize = 1024;

const WORD_BITS: usize = c_ulong::BITS as usize;

/// A bitmap in the kernel's layout: an array of `unsigned long`, bit `i` in
/// word `i / BITS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask {
    pub words: Vec<c_ulong>,
}

impl Mask {
    /// A zeroed mask of at least `bits` bits.
    pub fn zeroed(bits: usize) -> Self {
        Mask { words: vec![0; bits.div_ceil(WORD_BITS).max(1)] }
    }

    /// The mask of `set`, at least `min_bits` wide.
    pub fn from_set(set: &IdSet, min_bits: usize) -> Self {
        let bits = set.last().map_or(0, |m| m as usize + 1).max(min_bits);
        let mut m = Mask::zeroed(bits);
        for id in set.iter() {
            m.words[id as usize / WORD_BITS] |= 1 << (id as usize % WORD_BITS);
        }
        m
    }

    pub fn to_set(&self) -> IdSet {
        let mut s = IdSet::new();
        for (w, &word) in self.words.iter().enumerate() {
            for b in 0..WORD_BITS {
                if word & (1 << b) != 0 {
                    s.insert((w * WORD_BITS + b) as u32);
                }
            }
        }
        s
    }

    pub fn bits(&self) -> usize {
        self.words.len() * WORD_BITS
    }

    pub fn bytes(&self) -> usize {
        self.words.len() * std::mem::size_of::<c_ulong>()
    }
}

/// `set_mempolicy(mode, nodemask, maxnode)`. Async-signal-safe.
///
/// The kernel reads `maxnode - 1` bits (a historic off-by-one that libnuma
/// also compensates for), hence `bits + 1`.
pub fn set_mempolicy(mode: c_int, mask: Option<&Mask>) -> c_long {
    let (ptr, maxnode) = match mask {
        Some(m) => (m.words.as_ptr(), m.bits() as c_ulong + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `ptr` is null or points at `maxnode - 1` readable bits that
    // live for the duration of the call; the kernel only reads them.
    unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) }
}

/// `mbind(addr, len, mode, nodemask, maxnode, flags)`.
///
/// # Safety
/// `addr..addr+len` must be a mapping this process owns (the kernel checks
/// it, but changing the policy of memory other code owns is surprising).
pub unsafe fn mbind(
    addr: *mut c_void,
    len: usize,
    mode: c_int,
    mask: Option<&Mask>,
    flags: c_ulong,
) -> c_long {
    let (ptr, maxnode) = match mask {
        Some(m) => (m.words.as_ptr(), m.bits() as c_ulong + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: the mask pointer is valid for `maxnode - 1` bits or null; the
    // caller vouches for the address range.
    unsafe { libc::syscall(libc::SYS_mbind, addr, len, mode, ptr, maxnode, flags) }
}

/// `get_mempolicy(&mode, nodemask, maxnode, addr, flags)`; returns the
/// syscall result, filling `mode` and `mask`.
pub fn get_mempolicy(
    mode: &mut c_int,
    mask: Option<&mut Mask>,
    addr: *mut c_void,
    flags: c_ulong,
) -> c_long {
    let (ptr, maxnode) = match mask {
        Some(m) => (m.words.as_mut_ptr(), m.bits() as c_ulong),
        None => (std::ptr::null_mut(), 0),
    };
    // SAFETY: `mode` is a valid int; `ptr` is null or a writable buffer of
    // `maxnode` bits; with MPOL_F_ADDR the kernel only looks `addr` up in
    // our address space and never dereferences it from user space.
    unsafe { libc::syscall(libc::SYS_get_mempolicy, mode as *mut c_int, ptr, maxnode, addr, flags) }
}

/// `move_pages(0, count, pages, NULL, status, 0)`: where each page is,
/// without moving anything.
pub fn query_pages(pages: &[*mut c_void], status: &mut [c_int]) -> c_long {
    assert_eq!(pages.len(), status.len());
    // SAFETY: `pages` and `status` hold `len` elements each; with a null
    // node list the kernel only reads `pages` and writes `status`; it
    // validates the addresses itself (-EFAULT per page).
    unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as c_int,
            pages.len() as c_ulong,
            pages.as_ptr(),
            std::ptr::null::<c_int>(),
            status.as_mut_ptr(),
            0 as c_int,
        )
    }
}

/// `sched_setaffinity(0, mask)` for the calling thread. Async-signal-safe.
pub fn sched_setaffinity(mask: &Mask) -> c_long {
    // SAFETY: the kernel reads `bytes()` bytes from a live buffer.
    unsafe {
        libc::syscall(libc::SYS_sched_setaffinity, 0 as c_int, mask.bytes(), mask.words.as_ptr())
    }
}

/// `getcpu(&cpu, &node)`.
pub fn getcpu() -> Result<(u32, u32), std::io::Error> {
    let mut cpu: u32 = 0;
    let mut node: u32 = 0;
    // SAFETY: both pointers are valid for a u32 write; the third argument
    // (tcache) is unused by the kernel and may be null.
    let r = unsafe {
        libc::syscall(
            libc::SYS_getcpu,
            &mut cpu as *mut u32,
            &mut node as *mut u32,
            std::ptr::null_mut::<c_void>(),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((cpu, node))
}

/// The base page size (sysconf(_SC_PAGESIZE)).
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_round_trip_and_use_kernel_bit_layout() {
        let set = IdSet::parse_list("0,3,64,65").unwrap();
        let m = Mask::from_set(&set, 0);
        assert_eq!(m.words.len(), 2);
        assert_eq!(m.words[0], 0b1001);
        assert_eq!(m.words[1], 0b11);
        assert_eq!(m.to_set(), set);
        assert_eq!(Mask::from_set(&IdSet::new(), NODE_MASK_BITS).bits(), NODE_MASK_BITS);
    }
}
