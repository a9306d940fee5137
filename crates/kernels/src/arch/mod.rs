//! Instruction-set variants of the bandwidth loops and their run-time
//! selection. Each variant is a zero-sized type whose constructor returns
//! `None` unless the CPU supports it, so holding one proves detection ran.

use std::fmt;

pub mod scalar;

#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;

#[cfg(test)]
mod tests;

/// An instruction-set variant of the kernels (`bw --isa` takes them by
/// [`Isa::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Isa {
    Scalar,
    Sse2,
    Avx2,
    Avx512,
    Neon,
    Sve,
}

impl Isa {
    /// Every variant numaprobe knows, in increasing preference.
    pub const ALL: [Isa; 6] = [Isa::Scalar, Isa::Sse2, Isa::Avx2, Isa::Avx512, Isa::Neon, Isa::Sve];

    /// Lower-case name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Sse2 => "sse2",
            Isa::Avx2 => "avx2",
            Isa::Avx512 => "avx512",
            Isa::Neon => "neon",
            Isa::Sve => "sve",
        }
    }

    /// Parses a name as [`Isa::name`] writes it.
    pub fn parse(s: &str) -> Option<Isa> {
        Isa::ALL.into_iter().find(|i| i.name() == s.trim().to_ascii_lowercase())
    }

    /// The variants this CPU runs, in increasing preference.
    pub fn available() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|&i| ops_for(i).is_some()).collect()
    }

    /// The preferred variant on this CPU.
    pub fn best() -> Isa {
        *Isa::available().last().unwrap_or(&Isa::Scalar)
    }

    /// Whether the variant is one of aarch64's (NEON, SVE); the others but
    /// the scalar reference are x86-64's.
    pub fn is_aarch64(self) -> bool {
        matches!(self, Isa::Neon | Isa::Sve)
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a variant cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    #[error("instruction set `{isa}` is not supported by this CPU (available: {available})")]
    Unsupported { isa: Isa, available: String },
}

/// The bandwidth loops of one instruction set. Slices passed together must
/// have the same length (checked; a mismatch is a programming error and
/// panics). `nt` asks for non-temporal stores; variants without them
/// ([`Ops::has_nt`] false) use regular stores.
pub trait Ops: Send + Sync {
    fn isa(&self) -> Isa;
    /// Whether the variant has non-temporal (streaming) stores.
    fn has_nt(&self) -> bool;
    /// `dst[i] = src[i]`
    fn copy(&self, dst: &mut [f64], src: &[f64], nt: bool);
    /// `dst[i] = s * src[i]`
    fn scale(&self, dst: &mut [f64], src: &[f64], s: f64, nt: bool);
    /// `dst[i] = a[i] + b[i]`
    fn add(&self, dst: &mut [f64], a: &[f64], b: &[f64], nt: bool);
    /// `dst[i] = a[i] + s * b[i]`
    fn triad(&self, dst: &mut [f64], a: &[f64], b: &[f64], s: f64, nt: bool);
    /// `dst[i] = a[i] + b[i] + c[i]`
    fn add3(&self, dst: &mut [f64], a: &[f64], b: &[f64], c: &[f64], nt: bool);
    /// `sum(src)`, loads only.
    fn sum(&self, src: &[f64]) -> f64;
    /// `dst[i] = v`, stores only.
    fn fill(&self, dst: &mut [f64], v: f64, nt: bool);
}

/// The kernels of `isa` when this CPU supports it.
pub fn ops_for(isa: Isa) -> Option<&'static dyn Ops> {
    match isa {
        Isa::Scalar => Some(&scalar::Scalar),
        #[cfg(target_arch = "x86_64")]
        Isa::Sse2 => x86_64::Sse2::new().map(|v| leak(v) as &dyn Ops),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx2 => x86_64::Avx2::new().map(|v| leak(v) as &dyn Ops),
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 => x86_64::Avx512::new().map(|v| leak(v) as &dyn Ops),
        #[cfg(target_arch = "aarch64")]
        Isa::Neon => aarch64::Neon::new().map(|v| leak(v) as &dyn Ops),
        #[cfg(target_arch = "aarch64")]
        Isa::Sve => aarch64::Sve::new().map(|v| leak(v) as &dyn Ops),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// The [`Ops`] impl of a variant type `$ty` whose loops are the functions
/// of a module `inner` where the macro is used (`copy`, `scale`, `add`,
/// `triad`, `add3`, `sum`, `fill`, each taking raw pointers and a length),
/// every one with non-temporal stores. The safety contract of those
/// functions: the CPU has the variant's instruction set (a value of `$ty`
/// exists only after run-time detection), every pointer is valid for the
/// length, the destination overlaps no source.
macro_rules! ops_from_inner {
    ($ty:ty, $isa:expr) => {
        impl $crate::arch::Ops for $ty {
            fn isa(&self) -> $crate::arch::Isa {
                $isa
            }
            fn has_nt(&self) -> bool {
                true
            }
            fn copy(&self, dst: &mut [f64], src: &[f64], nt: bool) {
                assert_eq!(dst.len(), src.len());
                // SAFETY: `self` exists only after run-time detection of
                // the instruction set; both slices hold `dst.len()`
                // elements and a `&mut` cannot overlap a `&`.
                unsafe { inner::copy(dst.as_mut_ptr(), src.as_ptr(), dst.len(), nt) }
            }
            fn scale(&self, dst: &mut [f64], src: &[f64], s: f64, nt: bool) {
                assert_eq!(dst.len(), src.len());
                // SAFETY: as in `copy`.
                unsafe { inner::scale(dst.as_mut_ptr(), src.as_ptr(), s, dst.len(), nt) }
            }
            fn add(&self, dst: &mut [f64], a: &[f64], b: &[f64], nt: bool) {
                assert!(dst.len() == a.len() && a.len() == b.len());
                // SAFETY: as in `copy`.
                unsafe { inner::add(dst.as_mut_ptr(), a.as_ptr(), b.as_ptr(), dst.len(), nt) }
            }
            fn triad(&self, dst: &mut [f64], a: &[f64], b: &[f64], s: f64, nt: bool) {
                assert!(dst.len() == a.len() && a.len() == b.len());
                // SAFETY: as in `copy`.
                unsafe { inner::triad(dst.as_mut_ptr(), a.as_ptr(), b.as_ptr(), s, dst.len(), nt) }
            }
            fn add3(&self, dst: &mut [f64], a: &[f64], b: &[f64], c: &[f64], nt: bool) {
                assert!(dst.len() == a.len() && a.len() == b.len() && b.len() == c.len());
                // SAFETY: as in `copy`.
                unsafe {
                    inner::add3(dst.as_mut_ptr(), a.as_ptr(), b.as_ptr(), c.as_ptr(), dst.len(), nt)
                }
            }
            fn sum(&self, src: &[f64]) -> f64 {
                // SAFETY: detected instruction set; `src` holds `src.len()`
                // elements.
                unsafe { inner::sum(src.as_ptr(), src.len()) }
            }
            fn fill(&self, dst: &mut [f64], v: f64, nt: bool) {
                // SAFETY: detected instruction set; `dst` holds `dst.len()`
                // elements.
                unsafe { inner::fill(dst.as_mut_ptr(), v, dst.len(), nt) }
            }
        }
    };
}
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(unused_imports))]
pub(crate) use ops_from_inner;

/// Zero-sized values live forever for free.
fn leak<T: 'static>(v: T) -> &'static T {
    debug_assert_eq!(std::mem::size_of::<T>(), 0);
    Box::leak(Box::new(v))
}

/// The kernels to use: `forced` when given (an error if unsupported), else
/// the best this CPU has. Detection is done here, once per call.
pub fn select(forced: Option<Isa>) -> Result<&'static dyn Ops, KernelError> {
    let isa = forced.unwrap_or_else(Isa::best);
    ops_for(isa).ok_or_else(|| KernelError::Unsupported {
        isa,
        available: Isa::available().iter().map(|i| i.name()).collect::<Vec<_>>().join(", "),
    })
}

/// Elements before `p` reaches a 64-byte boundary, at most `n` (used by the
/// x86-64 and NEON loops; SVE's predicated loops need no head).
#[cfg_attr(not(any(target_arch = "x86_64", target_arch = "aarch64")), allow(dead_code))]
pub(crate) fn head_len(p: *const f64, n: usize) -> usize {
    let mis = (p as usize) % 64;
    let head = if mis == 0 { 0 } else { (64 - mis) / 8 };
    head.min(n)
}
