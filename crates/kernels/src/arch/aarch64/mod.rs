//! aarch64 variants: NEON (Advanced SIMD, two doubles per 128-bit vector,
//! every Armv8-A CPU) with `core::arch::aarch64` intrinsics, and SVE
//! (scalable vectors, [`Sve`]) in inline assembly.
//!
//! NEON loops follow the x86-64 skeleton: a scalar head aligns the
//! destination to 64 bytes, the body computes four vectors (a whole line)
//! then stores them, a scalar tail finishes. Non-temporal stores are
//! `STNP` of a pair of q registers (Arm's store-pair with a non-temporal
//! hint; Rust has no intrinsic for it, so it is one `asm!` line), and a
//! non-temporal body ends with `DMB ISHST` before anyone reads, as x86
//! ends with `SFENCE`. Triad multiplies then adds (`FMUL`, `FADD`, never
//! the fused `FMLA`), so every element equals the scalar reference bit for
//! bit.

mod sve;

pub use sve::Sve;

use core::arch::aarch64::*;

/// NEON kernels (128-bit vectors), built only after run-time detection.
#[derive(Debug, Clone, Copy)]
pub struct Neon(());

impl Neon {
    /// `Some` when the CPU has Advanced SIMD (every Armv8-A server does;
    /// the check keeps the rule that a variant exists only after
    /// detection).
    pub fn new() -> Option<Neon> {
        if std::arch::is_aarch64_feature_detected!("neon") {
            Some(Neon(()))
        } else {
            None
        }
    }
}

/// Doubles per NEON vector.
const W: usize = 2;

/// Stores two vectors at `p` with one `STNP` (non-temporal hint).
///
/// # Safety
/// `p` must be valid for writing 4 doubles.
#[inline(always)]
unsafe fn stnp(p: *mut f64, lo: float64x2_t, hi: float64x2_t) {
    // SAFETY: the caller guarantees 32 writable bytes at `p`; STNP needs
    // no alignment beyond the element size for normal memory.
    unsafe {
        core::arch::asm!(
            "stnp {lo:q}, {hi:q}, [{p}]",
            p = in(reg) p,
            lo = in(vreg) lo,
            hi = in(vreg) hi,
            options(nostack, preserves_flags)
        )
    }
}

/// Orders the non-temporal stores before what follows (`DMB ISHST`).
#[inline(always)]
pub(crate) fn store_fence() {
    // SAFETY: a barrier has no preconditions.
    unsafe { core::arch::asm!("dmb ishst", options(nostack, preserves_flags)) }
}

/// The store loop skeleton: `dst[i] = vec(i)` for a whole vector at `i` in
/// the body, `dst[i] = scalar(i)` in the head and the tail.
macro_rules! nloop {
    ($dst:ident, $n:ident, $nt:ident, |$i:ident| $vec:expr, $scalar:expr) => {{
        let head = $crate::arch::head_len($dst, $n);
        for $i in 0..head {
            *$dst.add($i) = $scalar;
        }
        const STEP: usize = 4 * W;
        let body = head + ($n - head) / STEP * STEP;
        let mut base = head;
        let mut d = $dst.add(head);
        macro_rules! vecs {
            () => {{
                let v0 = {
                    let $i = base;
                    $vec
                };
                let v1 = {
                    let $i = base + W;
                    $vec
                };
                let v2 = {
                    let $i = base + 2 * W;
                    $vec
                };
                let v3 = {
                    let $i = base + 3 * W;
                    $vec
                };
                (v0, v1, v2, v3)
            }};
        }
        if $nt {
            while base < body {
                let (v0, v1, v2, v3) = vecs!();
                stnp(d, v0, v1);
                stnp(d.add(2 * W), v2, v3);
                d = d.add(STEP);
                base += STEP;
            }
            store_fence();
        } else {
            while base < body {
                let (v0, v1, v2, v3) = vecs!();
                vst1q_f64(d, v0);
                vst1q_f64(d.add(W), v1);
                vst1q_f64(d.add(2 * W), v2);
                vst1q_f64(d.add(3 * W), v3);
                d = d.add(STEP);
                base += STEP;
            }
        }
        for $i in base..$n {
            *$dst.add($i) = $scalar;
        }
    }};
}

/// The loops. Safety contract of every function: the CPU has NEON, and
/// every pointer is valid for `n` elements (reads, or writes for `dst`),
/// `dst` not overlapping the sources.
mod inner {
    use super::*;

    #[target_feature(enable = "neon")]
    pub unsafe fn copy(dst: *mut f64, a: *const f64, n: usize, nt: bool) {
        nloop!(dst, n, nt, |i| vld1q_f64(a.add(i)), *a.add(i))
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn scale(dst: *mut f64, a: *const f64, s: f64, n: usize, nt: bool) {
        let vs = vdupq_n_f64(s);
        nloop!(dst, n, nt, |i| vmulq_f64(vs, vld1q_f64(a.add(i))), s * *a.add(i))
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn add(dst: *mut f64, a: *const f64, b: *const f64, n: usize, nt: bool) {
        nloop!(
            dst,
            n,
            nt,
            |i| vaddq_f64(vld1q_f64(a.add(i)), vld1q_f64(b.add(i))),
            *a.add(i) + *b.add(i)
        )
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn triad(dst: *mut f64, a: *const f64, b: *const f64, s: f64, n: usize, nt: bool) {
        let vs = vdupq_n_f64(s);
        nloop!(
            dst,
            n,
            nt,
            |i| vaddq_f64(vld1q_f64(a.add(i)), vmulq_f64(vs, vld1q_f64(b.add(i)))),
            *a.add(i) + s * *b.add(i)
        )
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn add3(
        dst: *mut f64,
        a: *const f64,
        b: *const f64,
        c: *const f64,
        n: usize,
        nt: bool,
    ) {
        nloop!(
            dst,
            n,
            nt,
            |i| vaddq_f64(vaddq_f64(vld1q_f64(a.add(i)), vld1q_f64(b.add(i))), vld1q_f64(c.add(i))),
            *a.add(i) + *b.add(i) + *c.add(i)
        )
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn fill(dst: *mut f64, v: f64, n: usize, nt: bool) {
        let vv = vdupq_n_f64(v);
        nloop!(
            dst,
            n,
            nt,
            |i| {
                let _ = i;
                vv
            },
            {
                let _ = i;
                v
            }
        )
    }

    #[target_feature(enable = "neon")]
    pub unsafe fn sum(a: *const f64, n: usize) -> f64 {
        let head = crate::arch::head_len(a, n);
        let mut s = 0.0;
        for i in 0..head {
            s += *a.add(i);
        }
        const STEP: usize = 4 * W;
        let z = vdupq_n_f64(0.0);
        let (mut s0, mut s1, mut s2, mut s3) = (z, z, z, z);
        let mut i = head;
        while i + STEP <= n {
            s0 = vaddq_f64(s0, vld1q_f64(a.add(i)));
            s1 = vaddq_f64(s1, vld1q_f64(a.add(i + W)));
            s2 = vaddq_f64(s2, vld1q_f64(a.add(i + 2 * W)));
            s3 = vaddq_f64(s3, vld1q_f64(a.add(i + 3 * W)));
            i += STEP;
        }
        let v = vaddq_f64(vaddq_f64(s0, s1), vaddq_f64(s2, s3));
        s += vgetq_lane_f64::<0>(v) + vgetq_lane_f64::<1>(v);
        for j in i..n {
            s += *a.add(j);
        }
        s
    }
}

crate::arch::ops_from_inner!(Neon, crate::arch::Isa::Neon);
