//! x86-64 variants: SSE2, AVX2 and AVX-512 (foundation), generated from one
//! loop skeleton so that they differ only in vector width and intrinsics.
//!
//! Each loop aligns the destination to 64 bytes with a scalar head, runs a
//! body unrolled four vectors deep (aligned stores, or non-temporal stores
//! followed by `_mm_sfence()`), and finishes with a scalar tail. Loads are
//! unaligned-tolerant (`loadu`), which costs nothing when the arrays share
//! the destination's alignment, as they do in the benchmark.

mod avx2;
mod avx512;
mod sse2;

pub use avx2::Avx2;
pub use avx512::Avx512;
pub use sse2::Sse2;

/// The store loop skeleton: `dst[i] = vec(i)` for a whole vector at `i` in
/// the body, `dst[i] = scalar(i)` in the head and the tail. Each body step
/// computes its four vectors (all their loads) first and stores them after:
/// measured 3.5-4% faster than load-store pairs for the non-temporal copy
/// on AMD Zen, with 4 KiB pages and THP alike (docs/bw.md, "Loop shape"),
/// and no different for triad.
macro_rules! vloop {
    ($w:literal, $store:ident, $stream:ident, $dst:ident, $n:ident, $nt:ident,
     |$i:ident| $vec:expr, $scalar:expr) => {{
        let head = $crate::arch::head_len($dst, $n);
        for $i in 0..head {
            *$dst.add($i) = $scalar;
        }
        const STEP: usize = 4 * $w;
        let body = head + ($n - head) / STEP * STEP;
        let mut base = head;
        // The destination advances as its own pointer: indexing it from
        // `base` made LLVM address the stores through three-part `lea`s,
        // measured 9% slower for the non-temporal copy (docs/bw.md).
        let mut d = $dst.add(head);
        macro_rules! step {
            ($put:ident) => {{
                let v0 = {
                    let $i = base;
                    $vec
                };
                let v1 = {
                    let $i = base + $w;
                    $vec
                };
                let v2 = {
                    let $i = base + 2 * $w;
                    $vec
                };
                let v3 = {
                    let $i = base + 3 * $w;
                    $vec
                };
                $put(d, v0);
                $put(d.add($w), v1);
                $put(d.add(2 * $w), v2);
                $put(d.add(3 * $w), v3);
                d = d.add(STEP);
                base += STEP;
            }};
        }
        if $nt {
            while base < body {
                step!($stream);
            }
            // Non-temporal stores are weakly ordered: fence them before
            // anyone (the tail, the validation, other threads) reads.
            core::arch::x86_64::_mm_sfence();
        } else {
            while base < body {
                step!($store);
            }
        }
        for $i in base..$n {
            *$dst.add($i) = $scalar;
        }
    }};
}
pub(crate) use vloop;

/// Defines one variant: a zero-sized type built only after detection, its
/// `#[target_feature]` inner loops, and its [`crate::arch::Ops`] impl.
macro_rules! simd_variant {
    (
        $(#[$doc:meta])*
        $name:ident, $isa:expr, $feat:literal, detect = $detect:expr, $w:literal, $v:ty,
        loadu = $loadu:ident, store = $store:ident, stream = $stream:ident,
        add = $add:ident, mul = $mul:ident, set1 = $set1:ident, zero = $zero:ident
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $name(());

        impl $name {
            /// `Some` only when this CPU supports the instruction set.
            pub fn new() -> Option<Self> {
                if $detect {
                    Some(Self(()))
                } else {
                    None
                }
            }
        }

        /// The loops. Safety contract of every function: the CPU supports
        /// the enabled feature, and every pointer is valid for `n` elements
        /// (reads, or writes for `dst`), `dst` not overlapping the sources.
        mod inner {
            use core::arch::x86_64::*;

            use $crate::arch::x86_64::vloop;

            #[target_feature(enable = $feat)]
            pub unsafe fn copy(dst: *mut f64, a: *const f64, n: usize, nt: bool) {
                vloop!($w, $store, $stream, dst, n, nt, |i| $loadu(a.add(i)), *a.add(i))
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn scale(dst: *mut f64, a: *const f64, s: f64, n: usize, nt: bool) {
                let vs = $set1(s);
                vloop!($w, $store, $stream, dst, n, nt, |i| $mul(vs, $loadu(a.add(i))), s * *a.add(i))
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn add(dst: *mut f64, a: *const f64, b: *const f64, n: usize, nt: bool) {
                vloop!(
                    $w, $store, $stream, dst, n, nt,
                    |i| $add($loadu(a.add(i)), $loadu(b.add(i))),
                    *a.add(i) + *b.add(i)
                )
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn triad(
                dst: *mut f64, a: *const f64, b: *const f64, s: f64, n: usize, nt: bool,
            ) {
                let vs = $set1(s);
                vloop!(
                    $w, $store, $stream, dst, n, nt,
                    |i| $add($loadu(a.add(i)), $mul(vs, $loadu(b.add(i)))),
                    *a.add(i) + s * *b.add(i)
                )
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn add3(
                dst: *mut f64, a: *const f64, b: *const f64, c: *const f64, n: usize, nt: bool,
            ) {
                vloop!(
                    $w, $store, $stream, dst, n, nt,
                    |i| $add($add($loadu(a.add(i)), $loadu(b.add(i))), $loadu(c.add(i))),
                    *a.add(i) + *b.add(i) + *c.add(i)
                )
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn fill(dst: *mut f64, v: f64, n: usize, nt: bool) {
                let vv = $set1(v);
                vloop!($w, $store, $stream, dst, n, nt, |i| { let _ = i; vv }, { let _ = i; v })
            }

            #[target_feature(enable = $feat)]
            pub unsafe fn sum(a: *const f64, n: usize) -> f64 {
                let head = $crate::arch::head_len(a, n);
                let mut s = 0.0;
                for i in 0..head {
                    s += *a.add(i);
                }
                const STEP: usize = 4 * $w;
                let (mut s0, mut s1, mut s2, mut s3) = ($zero(), $zero(), $zero(), $zero());
                let mut i = head;
                while i + STEP <= n {
                    s0 = $add(s0, $loadu(a.add(i)));
                    s1 = $add(s1, $loadu(a.add(i + $w)));
                    s2 = $add(s2, $loadu(a.add(i + 2 * $w)));
                    s3 = $add(s3, $loadu(a.add(i + 3 * $w)));
                    i += STEP;
                }
                let v = $add($add(s0, s1), $add(s2, s3));
                let lanes: [f64; $w] = core::mem::transmute::<$v, [f64; $w]>(v);
                for l in lanes {
                    s += l;
                }
                for j in i..n {
                    s += *a.add(j);
                }
                s
            }
        }

        $crate::arch::ops_from_inner!($name, $isa);
    };
}
pub(crate) use simd_variant;
