//! SVE: scalable vectors, as many doubles per vector as the CPU has (2 on
//! a 128-bit implementation such as Neoverse V2 / Grace, 4 on 256-bit
//! Neoverse V1 / Graviton3; the code reads the length at run time).
//!
//! Rust 1.96 has no stable SVE intrinsics (scalable vector types are not
//! in the language), so the loops are inline assembly in
//! `#[target_feature(enable = "sve")]` functions. Each is the
//! vector-length-agnostic loop compilers emit for SVE: `WHILELO` builds
//! the predicate of the elements left, so the last, partial vector needs
//! no scalar tail, and `INCD` steps by one vector. Stores are `ST1D`, or
//! `STNT1D` (SVE's contiguous store with a non-temporal hint) followed by
//! `DMB ISHST`. Triad is `FMUL` then `FADD` (never the fused `FMLA`), so
//! each element equals the scalar reference bit for bit; the sum adds
//! per lane and reduces with `FADDV`, so its rounding differs from the
//! reference's left-to-right order (the tests allow for that).
//!
//! Registers used: `z0`-`z2` (declared clobbered through `v0`-`v2`, their
//! low 128 bits, which the compiler knows), `p0`-`p1`, the flags.

use super::store_fence;

/// SVE kernels, built only after run-time detection of SVE.
#[derive(Debug, Clone, Copy)]
pub struct Sve(());

impl Sve {
    /// `Some` when the CPU has SVE (`HWCAP_SVE`).
    pub fn new() -> Option<Sve> {
        if std::arch::is_aarch64_feature_detected!("sve") {
            Some(Sve(()))
        } else {
            None
        }
    }

    /// Doubles per vector on this CPU (`CNTD`).
    pub fn lanes(&self) -> usize {
        // SAFETY: `self` exists only after SVE was detected.
        unsafe { inner::cntd() }
    }
}

/// One predicated loop over `n` elements storing `z0` to `dst` each step:
/// `$pre` lines run once, `$body` lines load (at `[{x}, {i}, lsl #3]`)
/// and compute the active elements into `z0`; `$store` is `st1d` or
/// `stnt1d`.
macro_rules! sve_loop {
    ($store:literal, $dst:expr, $n:expr, [$($pre:literal),*], [$($body:literal),*],
     $($operand:tt)*) => {
        core::arch::asm!(
            $($pre,)*
            "mov {i}, #0",
            "whilelo p0.d, {i}, {n}",
            "b.none 4f",
            "3:",
            $($body,)*
            concat!($store, " {{ z0.d }}, p0, [{d}, {i}, lsl #3]"),
            "incd {i}",
            "whilelo p0.d, {i}, {n}",
            "b.first 3b",
            "4:",
            d = in(reg) $dst,
            n = in(reg) $n,
            i = out(reg) _,
            $($operand)*
            out("v0") _,
            out("v1") _,
            out("v2") _,
            out("p0") _,
            options(nostack),
        )
    };
}

/// Both store kinds of one loop, chosen by `$nt`; the non-temporal one is
/// fenced before anyone reads.
macro_rules! sve_op {
    ($nt:expr, $dst:expr, $n:expr, [$($pre:literal),*], [$($body:literal),*],
     $($operand:tt)*) => {{
        if $nt {
            sve_loop!("stnt1d", $dst, $n, [$($pre),*], [$($body),*], $($operand)*);
            store_fence();
        } else {
            sve_loop!("st1d", $dst, $n, [$($pre),*], [$($body),*], $($operand)*);
        }
    }};
}

/// The loops. Safety contract of every function: the CPU has SVE, and
/// every pointer is valid for `n` elements (reads, or writes for `dst`),
/// `dst` not overlapping the sources.
mod inner {
    use super::store_fence;

    #[target_feature(enable = "sve")]
    pub unsafe fn cntd() -> usize {
        let n: usize;
        // SAFETY: CNTD only reads the vector length.
        unsafe {
            core::arch::asm!("cntd {n}", n = out(reg) n, options(nomem, nostack, preserves_flags))
        };
        n
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn copy(dst: *mut f64, a: *const f64, n: usize, nt: bool) {
        // SAFETY: the caller's contract; the loop touches elements 0..n only.
        unsafe {
            sve_op!(nt, dst, n, [], ["ld1d {{ z0.d }}, p0/z, [{a}, {i}, lsl #3]"], a = in(reg) a,)
        }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn scale(dst: *mut f64, a: *const f64, s: f64, n: usize, nt: bool) {
        // SAFETY: as in `copy`.
        unsafe {
            sve_op!(
                nt,
                dst,
                n,
                ["mov z1.d, {s}"],
                ["ld1d {{ z0.d }}, p0/z, [{a}, {i}, lsl #3]", "fmul z0.d, z1.d, z0.d"],
                a = in(reg) a,
                s = in(reg) s.to_bits(),
            )
        }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn add(dst: *mut f64, a: *const f64, b: *const f64, n: usize, nt: bool) {
        // SAFETY: as in `copy`.
        unsafe {
            sve_op!(
                nt,
                dst,
                n,
                [],
                [
                    "ld1d {{ z0.d }}, p0/z, [{a}, {i}, lsl #3]",
                    "ld1d {{ z1.d }}, p0/z, [{b}, {i}, lsl #3]",
                    "fadd z0.d, z0.d, z1.d"
                ],
                a = in(reg) a,
                b = in(reg) b,
            )
        }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn triad(dst: *mut f64, a: *const f64, b: *const f64, s: f64, n: usize, nt: bool) {
        // SAFETY: as in `copy`.
        unsafe {
            sve_op!(
                nt,
                dst,
                n,
                ["mov z1.d, {s}"],
                [
                    "ld1d {{ z0.d }}, p0/z, [{a}, {i}, lsl #3]",
                    "ld1d {{ z2.d }}, p0/z, [{b}, {i}, lsl #3]",
                    "fmul z2.d, z1.d, z2.d",
                    "fadd z0.d, z0.d, z2.d"
                ],
                a = in(reg) a,
                b = in(reg) b,
                s = in(reg) s.to_bits(),
            )
        }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn add3(
        dst: *mut f64,
        a: *const f64,
        b: *const f64,
        c: *const f64,
        n: usize,
        nt: bool,
    ) {
        // SAFETY: as in `copy`.
        unsafe {
            sve_op!(
                nt,
                dst,
                n,
                [],
                [
                    "ld1d {{ z0.d }}, p0/z, [{a}, {i}, lsl #3]",
                    "ld1d {{ z1.d }}, p0/z, [{b}, {i}, lsl #3]",
                    "fadd z0.d, z0.d, z1.d",
                    "ld1d {{ z2.d }}, p0/z, [{c}, {i}, lsl #3]",
                    "fadd z0.d, z0.d, z2.d"
                ],
                a = in(reg) a,
                b = in(reg) b,
                c = in(reg) c,
            )
        }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn fill(dst: *mut f64, v: f64, n: usize, nt: bool) {
        // SAFETY: as in `copy`.
        unsafe { sve_op!(nt, dst, n, ["mov z0.d, {v}"], [], v = in(reg) v.to_bits(),) }
    }

    #[target_feature(enable = "sve")]
    pub unsafe fn sum(a: *const f64, n: usize) -> f64 {
        let bits: u64;
        // SAFETY: the caller's contract; the loop reads elements 0..n only.
        unsafe {
            core::arch::asm!(
                "mov z0.d, #0",
                "mov {i}, #0",
                "whilelo p0.d, {i}, {n}",
                "b.none 4f",
                "3:",
                "ld1d {{ z1.d }}, p0/z, [{a}, {i}, lsl #3]",
                "fadd z0.d, p0/m, z0.d, z1.d",
                "incd {i}",
                "whilelo p0.d, {i}, {n}",
                "b.first 3b",
                "4:",
                "ptrue p1.d",
                "faddv d0, p1, z0.d",
                "fmov {r}, d0",
                a = in(reg) a,
                n = in(reg) n,
                i = out(reg) _,
                r = out(reg) bits,
                out("v0") _,
                out("v1") _,
                out("p0") _,
                out("p1") _,
                options(nostack, readonly),
            )
        };
        f64::from_bits(bits)
    }
}

crate::arch::ops_from_inner!(Sve, crate::arch::Isa::Sve);
