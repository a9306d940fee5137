//! Dependent pointer-chase kernels: the random ring a latency measurement
//! walks, and the unrolled walk itself.
//!
//! The ring holds one element per `stride` bytes (one cache line at the
//! default 64 B; 128 B leaves the adjacent line of each pair unused, so an
//! adjacent-line prefetcher brings nothing useful). Each element's first
//! word holds the address of the next element. The visiting order is built
//! the way Google's multichase builds it: the buffer is cut into groups of
//! `group_elems` elements (a TLB-sized span of pages), the groups are
//! visited in a random order, and inside each group the elements are visited
//! in a random order. Stream and stride prefetchers see no pattern, and the
//! walk stays inside a span the TLB covers for a while, so the figure is the
//! memory's latency and not a page walk's. The order is closed into a ring,
//! which makes it one cycle through every element by construction; with a
//! single group it is a uniformly random cyclic permutation, what Sattolo's
//! algorithm draws.
//!
//! No allocation policy and no I/O here: callers hand in the buffer.

use std::fmt;

/// Why a ring could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaseError {
    /// The stride is not a power of two of at least one pointer.
    BadStride(usize),
    /// The buffer holds fewer than two elements of `stride` bytes.
    TooSmall { len: usize, stride: usize },
    /// The buffer is not aligned to a pointer.
    Misaligned,
    /// The TLB group holds no element.
    BadGroup,
}

impl fmt::Display for ChaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChaseError::BadStride(s) => write!(
                f,
                "stride {s} B is not a power of two of at least {} B",
                std::mem::size_of::<usize>()
            ),
            ChaseError::TooSmall { len, stride } => {
                write!(f, "a buffer of {len} B holds fewer than two elements of {stride} B")
            }
            ChaseError::Misaligned => f.write_str("the chase buffer is not pointer-aligned"),
            ChaseError::BadGroup => f.write_str("the TLB group holds no element"),
        }
    }
}

impl std::error::Error for ChaseError {}

/// A small, fast, seedable generator (SplitMix64, Steele et al. 2014):
/// enough to shuffle, and the same seed gives the same ring.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below
    /// 2^-32 for the sizes used here). `n` must be > 0.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Fisher-Yates shuffle in place.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// Calls `f` with every element index in `0..n` exactly once, in the chase's
/// visiting order: groups of `group_elems` consecutive elements (the last
/// one may be short) in random order, elements within each group in random
/// order. Memory used: one index per group plus one group.
pub fn for_each_in_visit_order(
    n: usize,
    group_elems: usize,
    rng: &mut Rng,
    mut f: impl FnMut(usize),
) {
    if n == 0 || group_elems == 0 {
        return;
    }
    let groups = n.div_ceil(group_elems);
    let mut group_order: Vec<usize> = (0..groups).collect();
    rng.shuffle(&mut group_order);
    let mut inner: Vec<usize> = Vec::with_capacity(group_elems.min(n));
    for g in group_order {
        let lo = g * group_elems;
        let hi = (lo + group_elems).min(n);
        inner.clear();
        inner.extend(lo..hi);
        rng.shuffle(&mut inner);
        for &e in &inner {
            f(e);
        }
    }
}

/// The visiting order as a vector (see [`for_each_in_visit_order`]).
pub fn visit_order(n: usize, group_elems: usize, seed: u64) -> Vec<usize> {
    let mut v = Vec::with_capacity(n);
    for_each_in_visit_order(n, group_elems, &mut Rng::new(seed), |e| v.push(e));
    v
}

/// A single-cycle random permutation by Sattolo's algorithm:
/// `next[i]` is the element after `i`. Kept as the reference the grouped
/// order is compared with in tests, and for callers that want no grouping.
pub fn sattolo(n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut next: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i); // j < i: this is what makes it one cycle
        next.swap(i, j);
    }
    next
}

/// A pointer ring threaded through a borrowed buffer.
pub struct Ring<'a> {
    buf: &'a mut [u8],
    stride: usize,
    elems: usize,
    /// Where the next walk starts (an address inside `buf`).
    pos: usize,
}

impl<'a> Ring<'a> {
    /// Threads a ring through `buf`: one element every `stride` bytes, in
    /// the grouped random order (`group_elems` elements per TLB group),
    /// drawn from `seed`. Every element's first word gets the address of
    /// the next one; the rest of the buffer is left as it was.
    pub fn build(
        buf: &'a mut [u8],
        stride: usize,
        group_elems: usize,
        seed: u64,
    ) -> Result<Ring<'a>, ChaseError> {
        let word = std::mem::size_of::<usize>();
        if !stride.is_power_of_two() || stride < word {
            return Err(ChaseError::BadStride(stride));
        }
        if group_elems == 0 {
            return Err(ChaseError::BadGroup);
        }
        let elems = buf.len() / stride;
        if elems < 2 {
            return Err(ChaseError::TooSmall { len: buf.len(), stride });
        }
        let base = buf.as_mut_ptr();
        if (base as usize) & (word - 1) != 0 {
            return Err(ChaseError::Misaligned);
        }
        let mut first: Option<usize> = None;
        let mut prev: Option<usize> = None;
        for_each_in_visit_order(elems, group_elems, &mut Rng::new(seed), |e| {
            if let Some(p) = prev {
                // SAFETY: p < elems, so p * stride + word <= buf.len(); the
                // address is pointer-aligned (base aligned, stride a multiple
                // of the word) and `buf` is borrowed mutably.
                unsafe { base.add(p * stride).cast::<usize>().write(base as usize + e * stride) };
            } else {
                first = Some(e);
            }
            prev = Some(e);
        });
        let (first, last) = (first.unwrap_or(0), prev.unwrap_or(0));
        // SAFETY: as above, `last` < elems.
        unsafe { base.add(last * stride).cast::<usize>().write(base as usize + first * stride) };
        Ok(Ring { buf, stride, elems, pos: base as usize + first * stride })
    }

    /// Number of elements in the ring (the loads of one full lap).
    pub fn elems(&self) -> usize {
        self.elems
    }

    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Bytes the ring spans.
    pub fn span_bytes(&self) -> usize {
        self.elems * self.stride
    }

    /// Follows the ring for `loads` dependent loads, from where the last walk
    /// stopped, and returns the address reached. The loop is unrolled 16
    /// times; each load's address is the previous load's value, so no two
    /// loads overlap and the compiler cannot drop any (the end address is
    /// returned and passed through `black_box`).
    #[inline(never)]
    pub fn walk(&mut self, loads: u64) -> usize {
        let mut p = self.pos as *const usize;
        let mut left = loads;
        // SAFETY: every word the walk reads was written by `build` with the
        // address of another element of this buffer, which `self` borrows
        // mutably for its whole life, so every dereference stays inside it.
        unsafe {
            while left >= 16 {
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                p = *p as *const usize;
                left -= 16;
            }
            while left > 0 {
                p = *p as *const usize;
                left -= 1;
            }
        }
        let end = std::hint::black_box(p as usize);
        self.pos = end;
        end
    }

    /// Follows one full lap from the current position and checks that it
    /// visits every element once and comes back: the ring's own proof.
    pub fn is_single_cycle(&self) -> bool {
        let base = self.buf.as_ptr() as usize;
        let mut seen = vec![false; self.elems];
        let start = self.pos;
        let mut p = start;
        for _ in 0..self.elems {
            let off = p.wrapping_sub(base);
            if off >= self.elems * self.stride || off & (self.stride - 1) != 0 {
                return false;
            }
            let i = off / self.stride;
            if seen[i] {
                return false;
            }
            seen[i] = true;
            // SAFETY: `off` was checked to be an element inside the buffer.
            p = unsafe { *(p as *const usize) };
        }
        p == start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(bytes: usize) -> Vec<u64> {
        vec![0u64; bytes / 8]
    }

    fn as_bytes(v: &mut [u64]) -> &mut [u8] {
        let len = v.len() * 8;
        // SAFETY: a u64 slice is a valid, aligned u8 slice of 8x the length.
        unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), len) }
    }

    fn is_permutation(order: &[usize], n: usize) -> bool {
        let mut seen = vec![false; n];
        order.len() == n && order.iter().all(|&e| e < n && !std::mem::replace(&mut seen[e], true))
    }

    #[test]
    fn visit_order_is_a_permutation_for_many_sizes_and_groups() {
        for &n in &[1usize, 2, 3, 7, 64, 100, 4096, 4097, 65_536 + 13] {
            for &g in &[1usize, 2, 3, 64, 4096, 1 << 20] {
                let o = visit_order(n, g, n as u64 * 31 + g as u64);
                assert!(is_permutation(&o, n), "n={n} g={g}");
            }
        }
    }

    #[test]
    fn visit_order_keeps_each_tlb_group_together() {
        // 10 groups of 64: the visit must finish a group before the next.
        let (n, g) = (640, 64);
        let o = visit_order(n, g, 7);
        for chunk in o.chunks(g) {
            let grp = chunk[0] / g;
            assert!(chunk.iter().all(|&e| e / g == grp), "group split: {chunk:?}");
        }
        // and the groups are not in address order, nor lines within them
        let groups: Vec<usize> = o.chunks(g).map(|c| c[0] / g).collect();
        assert_ne!(groups, (0..10).collect::<Vec<_>>());
        assert_ne!(&o[..g], &(groups[0] * g..groups[0] * g + g).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn visit_order_is_not_sequential() {
        // Few successive elements should be neighbours in memory.
        let o = visit_order(1 << 16, 1 << 12, 3);
        let adjacent = o.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(adjacent < 64, "{adjacent} sequential steps out of 65535");
    }

    #[test]
    fn sattolo_gives_one_cycle() {
        for n in [2usize, 3, 10, 1000] {
            let next = sattolo(n, &mut Rng::new(n as u64));
            let (mut p, mut steps) = (0, 0);
            loop {
                p = next[p];
                steps += 1;
                if p == 0 {
                    break;
                }
                assert!(steps <= n);
            }
            assert_eq!(steps, n);
        }
    }

    #[test]
    fn ring_is_one_cycle_through_every_element() {
        for &(bytes, stride, group) in &[
            (128usize, 64usize, 1usize),
            (4096, 64, 64),
            (64 * 1024, 64, 64 * 4),
            (64 * 1024 + 192, 64, 100),
            (256 * 1024, 128, 512),
            (64 * 1024, 8, 4096),
        ] {
            let mut v = aligned(bytes);
            let ring = Ring::build(as_bytes(&mut v), stride, group, 42).unwrap();
            assert_eq!(ring.elems(), bytes / stride);
            assert!(ring.is_single_cycle(), "bytes={bytes} stride={stride} group={group}");
        }
    }

    #[test]
    fn a_broken_ring_is_detected() {
        let mut v = aligned(4096);
        let ring = Ring::build(as_bytes(&mut v), 64, 64, 1).unwrap();
        // make the start point to itself: a short cycle
        let start = ring.pos;
        // SAFETY: start is an element of the ring's buffer.
        unsafe { *(start as *mut usize) = start };
        assert!(!ring.is_single_cycle());
    }

    #[test]
    fn walk_follows_the_ring() {
        let mut v = aligned(64 * 1024);
        let mut ring = Ring::build(as_bytes(&mut v), 64, 64, 9).unwrap();
        let n = ring.elems() as u64;
        let start = ring.pos;
        // a full lap returns to the start, whatever the unrolling remainder
        assert_eq!(ring.walk(n), start);
        let a = ring.walk(5);
        ring.walk(n - 5);
        assert_eq!(ring.walk(5), a);
        assert_ne!(a, start);
    }

    #[test]
    fn build_rejects_bad_input() {
        let mut v = aligned(4096);
        assert_eq!(Ring::build(as_bytes(&mut v), 48, 1, 0).err(), Some(ChaseError::BadStride(48)));
        assert_eq!(Ring::build(as_bytes(&mut v), 4, 1, 0).err(), Some(ChaseError::BadStride(4)));
        assert_eq!(Ring::build(as_bytes(&mut v), 64, 0, 0).err(), Some(ChaseError::BadGroup));
        assert!(matches!(
            Ring::build(as_bytes(&mut v), 4096, 1, 0),
            Err(ChaseError::TooSmall { .. })
        ));
        let bytes = as_bytes(&mut v);
        assert_eq!(Ring::build(&mut bytes[1..], 64, 1, 0).err(), Some(ChaseError::Misaligned));
    }
}
