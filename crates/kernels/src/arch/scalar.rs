//! The scalar reference: plain loops every other variant is tested against.
//! It has no non-temporal stores.

use super::{Isa, Ops};

/// The portable reference variant (always available).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scalar;

impl Ops for Scalar {
    fn isa(&self) -> Isa {
        Isa::Scalar
    }
    fn has_nt(&self) -> bool {
        false
    }
    fn copy(&self, dst: &mut [f64], src: &[f64], _nt: bool) {
        assert_eq!(dst.len(), src.len());
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
    fn scale(&self, dst: &mut [f64], src: &[f64], s: f64, _nt: bool) {
        assert_eq!(dst.len(), src.len());
        for (d, x) in dst.iter_mut().zip(src) {
            *d = s * *x;
        }
    }
    fn add(&self, dst: &mut [f64], a: &[f64], b: &[f64], _nt: bool) {
        assert!(dst.len() == a.len() && a.len() == b.len());
        for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
            *d = *x + *y;
        }
    }
    fn triad(&self, dst: &mut [f64], a: &[f64], b: &[f64], s: f64, _nt: bool) {
        assert!(dst.len() == a.len() && a.len() == b.len());
        for ((d, x), y) in dst.iter_mut().zip(a).zip(b) {
            *d = *x + s * *y;
        }
    }
    fn add3(&self, dst: &mut [f64], a: &[f64], b: &[f64], c: &[f64], _nt: bool) {
        assert!(dst.len() == a.len() && a.len() == b.len() && b.len() == c.len());
        for (((d, x), y), z) in dst.iter_mut().zip(a).zip(b).zip(c) {
            *d = *x + *y + *z;
        }
    }
    fn sum(&self, src: &[f64]) -> f64 {
        src.iter().sum()
    }
    fn fill(&self, dst: &mut [f64], v: f64, _nt: bool) {
        dst.fill(v);
    }
}
