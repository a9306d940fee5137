//! Load-generator loops for loaded latency: walk a buffer line by line,
//! reading, read-modify-writing or writing each 64 B line with
//! non-temporal stores in a repeating pattern (the traffic mix), and wait a
//! calibrated number of spin iterations after each line.
//!
//! No allocation, no I/O: callers hand in the buffer and own the threads.

use std::time::Instant;

/// Words of one 64 B cache line.
pub const LINE_WORDS: usize = 8;

/// What to do to one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Load one word (the line comes in).
    Read,
    /// Load one word and store it back changed (in, then back dirty).
    Modify,
    /// Store the whole line with non-temporal stores (no read for
    /// ownership; `MOVNTI` on x86-64, `STNP` on aarch64); ordinary stores
    /// on other architectures.
    NtWrite,
}

/// Spins `iters` iterations of a dependent add that the compiler cannot
/// remove; returns a value to feed to `black_box`.
#[inline]
pub fn spin(iters: u64) -> u64 {
    let mut x = 0u64;
    for k in 0..iters {
        x = std::hint::black_box(x.wrapping_add(k));
    }
    x
}

/// The cost of one [`spin`] iteration on the calling thread, ns: the
/// fastest of several timed runs (interference only adds time).
pub fn spin_ns_per_iter() -> f64 {
    let n = 1u64 << 18;
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t = Instant::now();
        std::hint::black_box(spin(n));
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    best.max(0.01)
}

/// Where a generator is in its buffer and its pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Next line of the buffer.
    pub line: usize,
    /// Next step of the pattern.
    pub step: usize,
}

/// Touches `lines` lines of `buf` (whole 64 B lines; a partial last line is
/// never touched), from `cur`, wrapping at the end, doing `pattern`'s ops
/// in turn and spinning `wait` iterations after each. Returns a value to
/// feed to `black_box`. Ends with a store fence when it wrote with
/// non-temporal stores, so the lines are in memory before anyone reads them.
pub fn touch_lines(
    buf: &mut [u64],
    cur: &mut Cursor,
    pattern: &[Op],
    lines: u64,
    wait: u64,
) -> u64 {
    let nlines = buf.len() / LINE_WORDS;
    if nlines == 0 || pattern.is_empty() {
        return 0;
    }
    let mut acc = 0u64;
    let mut nt = false;
    let base = buf.as_mut_ptr();
    for _ in 0..lines {
        if cur.line >= nlines {
            cur.line = 0;
        }
        if cur.step >= pattern.len() {
            cur.step = 0;
        }
        // SAFETY: cur.line < nlines, so the line's 8 words are inside `buf`,
        // which is borrowed mutably; u64 slices are 8-byte aligned.
        unsafe {
            let p = base.add(cur.line * LINE_WORDS);
            match pattern[cur.step] {
                Op::Read => acc = acc.wrapping_add(p.read_volatile()),
                Op::Modify => {
                    let v = p.read_volatile();
                    p.write_volatile(v.wrapping_add(1));
                    acc = acc.wrapping_add(v);
                }
                Op::NtWrite => {
                    nt_line(p, acc);
                    nt = true;
                }
            }
        }
        if wait > 0 {
            acc = acc.wrapping_add(spin(wait));
        }
        cur.line = if cur.line + 1 >= nlines { 0 } else { cur.line + 1 };
        cur.step = (cur.step + 1) % pattern.len();
    }
    if nt {
        fence();
    }
    acc
}

/// Writes the 8 words at `p` with non-temporal stores.
///
/// # Safety
/// `p` must point to 8 writable, 8-byte aligned words.
#[cfg(target_arch = "x86_64")]
unsafe fn nt_line(p: *mut u64, v: u64) {
    use std::arch::x86_64::_mm_stream_si64;
    for w in 0..LINE_WORDS {
        // SAFETY: the caller guarantees 8 aligned words at p; MOVNTI is
        // SSE2, part of the x86-64 baseline.
        unsafe { _mm_stream_si64(p.add(w).cast::<i64>(), v as i64) };
    }
}

/// Writes the 8 words at `p` with two `STNP` of NEON q-register pairs
/// (Arm's store pair with a non-temporal hint).
///
/// # Safety
/// `p` must point to 8 writable, 8-byte aligned words.
#[cfg(target_arch = "aarch64")]
unsafe fn nt_line(p: *mut u64, v: u64) {
    use std::arch::aarch64::vdupq_n_u64;
    // SAFETY: NEON is part of the aarch64 baseline.
    let q = unsafe { vdupq_n_u64(v) };
    // SAFETY: the caller guarantees 64 writable bytes at p: two pairs of
    // 16-byte registers at p and p + 32 bytes.
    unsafe {
        std::arch::asm!(
            "stnp {q:q}, {q:q}, [{p}]",
            "stnp {q:q}, {q:q}, [{p}, #32]",
            p = in(reg) p,
            q = in(vreg) q,
            options(nostack, preserves_flags)
        )
    };
}

/// Ordinary stores where no non-temporal store is wired up.
///
/// # Safety
/// `p` must point to 8 writable, 8-byte aligned words.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn nt_line(p: *mut u64, v: u64) {
    for w in 0..LINE_WORDS {
        // SAFETY: as the caller guarantees.
        unsafe { p.add(w).write_volatile(v) };
    }
}

/// Orders the non-temporal stores before what follows.
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SFENCE has no preconditions (SSE, x86-64 baseline).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(target_arch = "aarch64")]
    crate::arch::aarch64::store_fence();
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

/// Whether [`Op::NtWrite`] uses real non-temporal stores on this target
/// (`MOVNTI` on x86-64, `STNP` on aarch64).
pub const HAS_NT_STORES: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_does_what_it_says_to_the_lines() {
        let mut buf = vec![5u64; 8 * LINE_WORDS];
        let mut cur = Cursor::default();
        // read, read, modify: lines 2 and 5 change, by their first word only
        touch_lines(&mut buf, &mut cur, &[Op::Read, Op::Read, Op::Modify], 6, 0);
        let firsts: Vec<u64> = buf.chunks(LINE_WORDS).map(|l| l[0]).collect();
        assert_eq!(firsts, vec![5, 5, 6, 5, 5, 6, 5, 5]);
        assert!(buf.chunks(LINE_WORDS).all(|l| l[1..].iter().all(|&w| w == 5)));
        assert_eq!(cur, Cursor { line: 6, step: 0 });
        // the cursor carries on and wraps at the end of the buffer
        touch_lines(&mut buf, &mut cur, &[Op::Read, Op::Read, Op::Modify], 3, 0);
        assert_eq!(buf[0], 6, "line 0 is the 9th line, the pattern's third step");
        assert_eq!(cur.line, 1);
    }

    #[test]
    fn nt_writes_fill_whole_lines() {
        let mut buf = vec![1u64; 4 * LINE_WORDS + 3];
        let mut cur = Cursor::default();
        touch_lines(&mut buf, &mut cur, &[Op::NtWrite], 4, 1);
        // acc starts at 0 and a write adds nothing: every word of the 4
        // whole lines is 0, the partial tail untouched
        assert!(buf[..4 * LINE_WORDS].iter().all(|&w| w == 0));
        assert_eq!(&buf[4 * LINE_WORDS..], &[1, 1, 1]);
    }

    #[test]
    fn spinning_is_not_optimised_away_and_calibrates() {
        let ns = spin_ns_per_iter();
        // a dependent add through the stack: well under a microsecond, and
        // not optimised away (that would read as the 0.01 ns floor)
        assert!(ns > 0.05 && ns < 1000.0, "{ns}");
    }
}
