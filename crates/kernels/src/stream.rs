//! The kernels users pick, STREAM's byte counting, and STREAM-style
//! validation of what they computed.
//!
//! Arrays follow STREAM's names and roles (`a`, `b`, `c`) plus a fourth,
//! `d`, for the read:write mixes:
//!
//! | kernel | operation | bytes counted per element |
//! |---|---|---|
//! | copy | `c = a` | 16 |
//! | scale | `b = s*c` | 16 |
//! | add | `c = a + b` | 24 |
//! | triad | `a = b + s*c` | 24 |
//! | read | `sum(a)` | 8 |
//! | write | `a = 1.0` | 8 |
//! | rw3:1 | `d = a + b + c` | 32 |
//! | rw2:1 | `d = a + b` | 24 |
//! | rw1:1 | `d = a` | 16 |
//!
//! Bytes are counted as STREAM does: each array element read or written
//! once, 8 bytes, with no allowance for the write-allocate read a regular
//! store causes (so regular-store figures understate the traffic by a third
//! for copy, like STREAM's). Validation follows STREAM's `checkSTREAMresults`:
//! every element equals the value the same sequence of operations gives on
//! scalars, within a relative error of 1e-13.

use crate::arch::Ops;

/// STREAM's scalar `s`.
pub const SCALAR: f64 = 3.0;
/// The value the write-only kernel stores.
pub const FILL: f64 = 1.0;

/// A bandwidth kernel (`bw --kernel` takes the names [`Kernel::parse`]
/// takes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// STREAM copy: a = b.
    Copy,
    /// STREAM scale: a = q*b.
    Scale,
    /// STREAM add: a = b + c.
    Add,
    /// STREAM triad: a = b + q*c.
    Triad,
    /// Read only (a sum).
    Read,
    /// Write only (a fill).
    Write,
    /// Three reads to one write.
    Rw3to1,
    /// Two reads to one write.
    Rw2to1,
    /// One read to one write.
    Rw1to1,
}

impl Kernel {
    pub const ALL: [Kernel; 9] = [
        Kernel::Copy,
        Kernel::Scale,
        Kernel::Add,
        Kernel::Triad,
        Kernel::Read,
        Kernel::Write,
        Kernel::Rw3to1,
        Kernel::Rw2to1,
        Kernel::Rw1to1,
    ];
    /// STREAM's four, the default.
    pub const STREAM: [Kernel; 4] = [Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad];

    /// Name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Copy => "copy",
            Kernel::Scale => "scale",
            Kernel::Add => "add",
            Kernel::Triad => "triad",
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::Rw3to1 => "rw3:1",
            Kernel::Rw2to1 => "rw2:1",
            Kernel::Rw1to1 => "rw1:1",
        }
    }

    /// Parses [`Kernel::name`] (case-insensitive; `load`/`store` are
    /// accepted for read/write).
    pub fn parse(s: &str) -> Option<Kernel> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "load" => return Some(Kernel::Read),
            "store" => return Some(Kernel::Write),
            _ => {}
        }
        Kernel::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Which of the arrays `[a, b, c, d]` the kernel touches.
    pub fn uses(self) -> [bool; 4] {
        match self {
            Kernel::Copy => [true, false, true, false],
            Kernel::Scale => [false, true, true, false],
            Kernel::Add | Kernel::Triad => [true, true, true, false],
            Kernel::Read | Kernel::Write => [true, false, false, false],
            Kernel::Rw3to1 => [true, true, true, true],
            Kernel::Rw2to1 => [true, true, false, true],
            Kernel::Rw1to1 => [true, false, false, true],
        }
    }

    /// Array elements read per element of the loop.
    pub fn reads(self) -> u64 {
        match self {
            Kernel::Copy | Kernel::Scale | Kernel::Read | Kernel::Rw1to1 => 1,
            Kernel::Add | Kernel::Triad | Kernel::Rw2to1 => 2,
            Kernel::Rw3to1 => 3,
            Kernel::Write => 0,
        }
    }

    /// Array elements written per element of the loop.
    pub fn writes(self) -> u64 {
        match self {
            Kernel::Read => 0,
            _ => 1,
        }
    }

    /// Bytes counted per element, STREAM's way (no write-allocate).
    pub fn bytes_per_element(self) -> u64 {
        8 * (self.reads() + self.writes())
    }

    /// Whether the kernel stores at all (so store mode matters).
    pub fn stores(self) -> bool {
        self.writes() > 0
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How kernels store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stores {
    Regular,
    /// Non-temporal (streaming) stores that bypass the caches.
    NonTemporal,
}

impl Stores {
    pub fn name(self) -> &'static str {
        match self {
            Stores::Regular => "regular",
            Stores::NonTemporal => "nt",
        }
    }
}

/// One thread's part of the arrays. Arrays a kernel does not use may be
/// empty; the ones it uses must have equal lengths.
#[derive(Debug)]
pub struct Arrays<'a> {
    pub a: &'a mut [f64],
    pub b: &'a mut [f64],
    pub c: &'a mut [f64],
    pub d: &'a mut [f64],
}

impl Arrays<'_> {
    /// Runs `kernel` once over the arrays with `ops`; returns the sum for
    /// [`Kernel::Read`] and 0 otherwise.
    pub fn run(&mut self, ops: &dyn Ops, kernel: Kernel, stores: Stores) -> f64 {
        let nt = stores == Stores::NonTemporal;
        let Arrays { a, b, c, d } = self;
        match kernel {
            Kernel::Copy => ops.copy(c, a, nt),
            Kernel::Scale => ops.scale(b, c, SCALAR, nt),
            Kernel::Add => ops.add(c, a, b, nt),
            Kernel::Triad => ops.triad(a, b, c, SCALAR, nt),
            Kernel::Read => return ops.sum(a),
            Kernel::Write => ops.fill(a, FILL, nt),
            Kernel::Rw3to1 => ops.add3(d, a, b, c, nt),
            Kernel::Rw2to1 => ops.add(d, a, b, nt),
            Kernel::Rw1to1 => ops.copy(d, a, nt),
        }
        0.0
    }

    /// Fills every array with its initial value (the first touch).
    pub fn init(&mut self) {
        let e = Expected::new();
        self.a.fill(e.values[0]);
        self.b.fill(e.values[1]);
        self.c.fill(e.values[2]);
        self.d.fill(e.values[3]);
    }

    /// Checks every element of the arrays `kernel` (or any earlier kernel)
    /// may have written against `expected`, like STREAM's check.
    pub fn validate(&self, expected: &Expected) -> Result<(), ValidationError> {
        let arrays: [(&str, &[f64]); 4] =
            [("a", self.a), ("b", self.b), ("c", self.c), ("d", self.d)];
        for (k, (name, arr)) in arrays.into_iter().enumerate() {
            let want = expected.values[k];
            let mut bad = 0usize;
            let mut first = None;
            for (i, &got) in arr.iter().enumerate() {
                if !close(got, want) {
                    bad += 1;
                    first.get_or_insert((i, got));
                }
            }
            if let Some((index, got)) = first {
                return Err(ValidationError::Array { array: name, index, got, want, bad });
            }
        }
        Ok(())
    }
}

/// The value every element of each array should hold, tracked by applying
/// the kernels to scalars (STREAM's `checkSTREAMresults`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expected {
    /// `[a, b, c, d]`.
    pub values: [f64; 4],
}

impl Default for Expected {
    fn default() -> Self {
        Self::new()
    }
}

impl Expected {
    /// STREAM's initial values (`a = 1, b = 2, c = 0`), and `d = 0`.
    pub fn new() -> Self {
        Expected { values: [1.0, 2.0, 0.0, 0.0] }
    }

    /// Accounts for one run of `kernel` over the arrays.
    pub fn apply(&mut self, kernel: Kernel) {
        let [a, b, c, d] = &mut self.values;
        match kernel {
            Kernel::Copy => *c = *a,
            Kernel::Scale => *b = SCALAR * *c,
            Kernel::Add => *c = *a + *b,
            Kernel::Triad => *a = *b + SCALAR * *c,
            Kernel::Read => {}
            Kernel::Write => *a = FILL,
            Kernel::Rw3to1 => *d = *a + *b + *c,
            Kernel::Rw2to1 => *d = *a + *b,
            Kernel::Rw1to1 => *d = *a,
        }
    }

    /// Checks the sum the read kernel returned for `n` elements of `a`.
    pub fn check_sum(&self, got: f64, n: usize) -> Result<(), ValidationError> {
        let want = self.values[0] * n as f64;
        if close(got, want) {
            Ok(())
        } else {
            Err(ValidationError::Sum { got, want, n })
        }
    }
}

/// STREAM's tolerance for doubles: relative error at most 1e-13.
fn close(got: f64, want: f64) -> bool {
    if want == 0.0 {
        got == 0.0
    } else {
        ((got - want) / want).abs() <= 1e-13
    }
}

/// A kernel computed a wrong answer: the measurement is void.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    #[error(
        "array {array}[{index}] = {got}, expected {want} ({bad} wrong element(s)): the kernel \
         computed a wrong answer"
    )]
    Array { array: &'static str, index: usize, got: f64, want: f64, bad: usize },
    #[error("read kernel summed {n} elements to {got}, expected {want}")]
    Sum { got: f64, want: f64, n: usize },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::select;

    fn arrays(n: usize) -> [Vec<f64>; 4] {
        [vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]]
    }

    #[test]
    fn byte_counting_matches_stream() {
        assert_eq!(Kernel::Copy.bytes_per_element(), 16);
        assert_eq!(Kernel::Scale.bytes_per_element(), 16);
        assert_eq!(Kernel::Add.bytes_per_element(), 24);
        assert_eq!(Kernel::Triad.bytes_per_element(), 24);
        assert_eq!(Kernel::Read.bytes_per_element(), 8);
        assert_eq!(Kernel::Write.bytes_per_element(), 8);
        assert_eq!(Kernel::Rw3to1.bytes_per_element(), 32);
        assert_eq!(Kernel::Rw3to1.reads(), 3 * Kernel::Rw3to1.writes());
        assert_eq!(Kernel::Rw2to1.reads(), 2 * Kernel::Rw2to1.writes());
    }

    /// STREAM's count per element is what the loops really touch: every
    /// kernel run through a counting variant, for odd lengths, both store
    /// methods, and on every variant this CPU has.
    #[test]
    fn the_bytes_counted_are_the_elements_the_loops_touch() {
        for isa in crate::arch::Isa::available() {
            for n in [1usize, 7, 513, 1001] {
                for k in Kernel::ALL {
                    for stores in [Stores::Regular, Stores::NonTemporal] {
                        let ops = crate::counting::Counting::new(select(Some(isa)).unwrap());
                        let [mut a, mut b, mut c, mut d] = arrays(n);
                        let mut arr = Arrays { a: &mut a, b: &mut b, c: &mut c, d: &mut d };
                        arr.run(&ops, k, stores);
                        let what = format!("{k} {} n={n} on {isa}", stores.name());
                        assert_eq!(ops.reads(), k.reads() * n as u64, "{what}");
                        assert_eq!(ops.writes(), k.writes() * n as u64, "{what}");
                        assert_eq!(ops.bytes(), k.bytes_per_element() * n as u64, "{what}");
                    }
                }
            }
        }
    }

    #[test]
    fn each_kernel_reads_and_writes_what_its_table_says() {
        // (kernel, reads, writes, arrays [a, b, c, d] touched, stores)
        let table = [
            (Kernel::Copy, 1, 1, [true, false, true, false]),
            (Kernel::Scale, 1, 1, [false, true, true, false]),
            (Kernel::Add, 2, 1, [true, true, true, false]),
            (Kernel::Triad, 2, 1, [true, true, true, false]),
            (Kernel::Read, 1, 0, [true, false, false, false]),
            (Kernel::Write, 0, 1, [true, false, false, false]),
            (Kernel::Rw3to1, 3, 1, [true, true, true, true]),
            (Kernel::Rw2to1, 2, 1, [true, true, false, true]),
            (Kernel::Rw1to1, 1, 1, [true, false, false, true]),
        ];
        assert_eq!(table.len(), Kernel::ALL.len());
        for (k, r, w, uses) in table {
            assert_eq!((k.reads(), k.writes(), k.uses()), (r, w, uses), "{k}");
            assert_eq!(k.bytes_per_element(), 8 * (r + w), "{k}");
            assert_eq!(k.stores(), w > 0, "{k}");
        }
    }

    #[test]
    fn names_round_trip() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::parse(k.name()), Some(k));
        }
        assert_eq!(Kernel::parse("LOAD"), Some(Kernel::Read));
        assert_eq!(Kernel::parse("rw4:1"), None);
    }

    #[test]
    fn stream_sequence_validates_on_every_variant() {
        for isa in crate::arch::Isa::available() {
            let ops = select(Some(isa)).unwrap();
            let [mut a, mut b, mut c, mut d] = arrays(1001);
            let mut arr = Arrays { a: &mut a, b: &mut b, c: &mut c, d: &mut d };
            arr.init();
            let mut exp = Expected::new();
            for k in Kernel::ALL {
                for stores in [Stores::Regular, Stores::NonTemporal] {
                    let s = arr.run(ops, k, stores);
                    exp.apply(k);
                    if k == Kernel::Read {
                        exp.check_sum(s, 1001).unwrap();
                    }
                    arr.validate(&exp).unwrap_or_else(|e| panic!("{isa} {k}: {e}"));
                }
            }
        }
    }

    #[test]
    fn validation_catches_a_corrupted_array() {
        let ops = select(None).unwrap();
        let [mut a, mut b, mut c, mut d] = arrays(333);
        let mut arr = Arrays { a: &mut a, b: &mut b, c: &mut c, d: &mut d };
        arr.init();
        let mut exp = Expected::new();
        arr.run(ops, Kernel::Triad, Stores::Regular);
        exp.apply(Kernel::Triad);
        arr.validate(&exp).unwrap();
        arr.a[200] += 1e-9;
        let err = arr.validate(&exp).unwrap_err();
        assert!(
            matches!(err, ValidationError::Array { array: "a", index: 200, bad: 1, .. }),
            "{err}"
        );
        // a kernel that skipped its work leaves the old values behind
        arr.init();
        exp.apply(Kernel::Copy);
        assert!(arr.validate(&exp).is_err());
        assert!(exp.check_sum(332.0, 333).is_err());
    }
}
