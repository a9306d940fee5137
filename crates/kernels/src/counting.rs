//! An [`Ops`] that counts the array elements each loop reads and writes,
//! over another variant: what the byte accounting of [`crate::Kernel`]
//! (STREAM's counting) is checked against, loop by loop.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::arch::{Isa, Ops};

/// Counts elements read and written by the loops of `inner`, which does
/// the work (so the arrays hold what they would).
pub struct Counting<'a> {
    inner: &'a dyn Ops,
    read: AtomicU64,
    written: AtomicU64,
}

impl<'a> Counting<'a> {
    pub fn new(inner: &'a dyn Ops) -> Counting<'a> {
        Counting { inner, read: AtomicU64::new(0), written: AtomicU64::new(0) }
    }

    /// Elements read so far.
    pub fn reads(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// Elements written so far.
    pub fn writes(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }

    /// Bytes moved so far, 8 per element read or written.
    pub fn bytes(&self) -> u64 {
        8 * (self.reads() + self.writes())
    }

    fn count(&self, read: usize, written: usize) {
        self.read.fetch_add(read as u64, Ordering::Relaxed);
        self.written.fetch_add(written as u64, Ordering::Relaxed);
    }
}

impl Ops for Counting<'_> {
    fn isa(&self) -> Isa {
        self.inner.isa()
    }
    fn has_nt(&self) -> bool {
        self.inner.has_nt()
    }
    fn copy(&self, dst: &mut [f64], src: &[f64], nt: bool) {
        self.count(src.len(), dst.len());
        self.inner.copy(dst, src, nt);
    }
    fn scale(&self, dst: &mut [f64], src: &[f64], s: f64, nt: bool) {
        self.count(src.len(), dst.len());
        self.inner.scale(dst, src, s, nt);
    }
    fn add(&self, dst: &mut [f64], a: &[f64], b: &[f64], nt: bool) {
        self.count(a.len() + b.len(), dst.len());
        self.inner.add(dst, a, b, nt);
    }
    fn triad(&self, dst: &mut [f64], a: &[f64], b: &[f64], s: f64, nt: bool) {
        self.count(a.len() + b.len(), dst.len());
        self.inner.triad(dst, a, b, s, nt);
    }
    fn add3(&self, dst: &mut [f64], a: &[f64], b: &[f64], c: &[f64], nt: bool) {
        self.count(a.len() + b.len() + c.len(), dst.len());
        self.inner.add3(dst, a, b, c, nt);
    }
    fn sum(&self, src: &[f64]) -> f64 {
        self.count(src.len(), 0);
        self.inner.sum(src)
    }
    fn fill(&self, dst: &mut [f64], v: f64, nt: bool) {
        self.count(0, dst.len());
        self.inner.fill(dst, v, nt);
    }
}
