//! aarch64: the seam for NEON kernels. Not written yet (no Arm machine to
//! build and test on here): [`Neon::new`] returns `None`, so selection falls
//! back to the scalar reference. To add it, implement [`super::Ops`] with
//! `core::arch::aarch64` intrinsics in `#[target_feature(enable = "neon")]`
//! inner loops and return `Some` after `is_aarch64_feature_detected!("neon")`.

/// NEON kernels (not implemented yet; never constructed).
#[derive(Debug, Clone, Copy)]
pub struct Neon(());

impl Neon {
    /// `None` until the NEON loops exist.
    pub fn new() -> Option<Neon> {
        None
    }
}

impl super::Ops for Neon {
    fn isa(&self) -> super::Isa {
        super::Isa::Neon
    }
    fn has_nt(&self) -> bool {
        false
    }
    fn copy(&self, dst: &mut [f64], src: &[f64], nt: bool) {
        super::scalar::Scalar.copy(dst, src, nt)
    }
    fn scale(&self, dst: &mut [f64], src: &[f64], s: f64, nt: bool) {
        super::scalar::Scalar.scale(dst, src, s, nt)
    }
    fn add(&self, dst: &mut [f64], a: &[f64], b: &[f64], nt: bool) {
        super::scalar::Scalar.add(dst, a, b, nt)
    }
    fn triad(&self, dst: &mut [f64], a: &[f64], b: &[f64], s: f64, nt: bool) {
        super::scalar::Scalar.triad(dst, a, b, s, nt)
    }
    fn add3(&self, dst: &mut [f64], a: &[f64], b: &[f64], c: &[f64], nt: bool) {
        super::scalar::Scalar.add3(dst, a, b, c, nt)
    }
    fn sum(&self, src: &[f64]) -> f64 {
        super::scalar::Scalar.sum(src)
    }
    fn fill(&self, dst: &mut [f64], v: f64, nt: bool) {
        super::scalar::Scalar.fill(dst, v, nt)
    }
}
