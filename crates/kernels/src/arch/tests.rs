//! Every variant against the scalar reference, through one runner, with
//! odd lengths and starts misaligned to the vector width and cache line.

use super::scalar::Scalar;
use super::{Isa, Ops};

const LENGTHS: [usize; 18] = [0, 1, 2, 3, 5, 7, 8, 15, 17, 31, 33, 63, 64, 65, 127, 129, 257, 1031];
/// Start offsets in elements for (dst, src1, src2, src3): equal, and
/// mutually misaligned.
const OFFSETS: [[usize; 4]; 5] =
    [[0, 0, 0, 0], [1, 1, 1, 1], [3, 5, 7, 2], [7, 0, 3, 6], [5, 2, 1, 4]];

/// Deterministic, non-trivial inputs (a 64-bit LCG), distinct per seed.
fn input(len: usize, seed: u64) -> Vec<f64> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 11) as f64 / (1u64 << 53) as f64) * 200.0 - 100.0
        })
        .collect()
}

/// The variants the tests below compare with the reference on this CPU,
/// and those they cannot run here, each with why.
fn coverage() -> (Vec<Isa>, Vec<(Isa, &'static str)>) {
    let mut ran = Vec::new();
    let mut not_run = Vec::new();
    for isa in Isa::ALL.into_iter().filter(|&i| i != Isa::Scalar) {
        if super::ops_for(isa).is_some() {
            ran.push(isa);
        } else if cfg!(target_arch = "x86_64") && isa.is_aarch64() {
            not_run.push((isa, "an aarch64 variant"));
        } else if cfg!(target_arch = "aarch64") && !isa.is_aarch64() {
            not_run.push((isa, "an x86-64 variant"));
        } else {
            not_run.push((isa, "not supported by this CPU"));
        }
    }
    (ran, not_run)
}

/// A variant's name as the coverage line gives it: SVE with the vector
/// length it ran at (the CPU's, or qemu's `sve-default-vector-length`).
fn ran_name(isa: Isa) -> String {
    #[cfg(target_arch = "aarch64")]
    if isa == Isa::Sve {
        if let Some(sve) = super::aarch64::Sve::new() {
            return format!("sve ({}-bit vectors)", sve.lanes() * 64);
        }
    }
    isa.name().to_string()
}

/// The coverage in one line, e.g. `kernel variants checked against the
/// scalar reference: sse2, avx2; not run on this CPU: avx512 (not
/// supported by this CPU), neon (an aarch64 variant)`.
fn coverage_line() -> String {
    let (ran, not_run) = coverage();
    let names = |v: &[Isa]| v.iter().map(|&i| ran_name(i)).collect::<Vec<_>>().join(", ");
    let missing: Vec<String> = not_run.iter().map(|(i, why)| format!("{i} ({why})")).collect();
    format!(
        "kernel variants checked against the scalar reference: {}; not run on this CPU: {}",
        if ran.is_empty() { "none".to_string() } else { names(&ran) },
        if missing.is_empty() { "none".to_string() } else { missing.join(", ") }
    )
}

/// A variant this CPU lacks is never dropped silently: the tests print
/// which ran and which did not (`cargo test -p kernels coverage --
/// --nocapture`; `.ci/run` shows it), and `NUMAPROBE_REQUIRE_ISAS=avx2,avx512`
/// makes a missing one a failure on a machine known to have it.
#[test]
fn variant_coverage_is_reported() {
    let line = coverage_line();
    println!("{line}");
    let (ran, not_run) = coverage();
    assert_eq!(ran.len() + not_run.len(), Isa::ALL.len() - 1, "{line}");
    #[cfg(target_arch = "x86_64")]
    assert!(ran.contains(&Isa::Sse2), "SSE2 is the x86-64 baseline: {line}");
    if let Ok(want) = std::env::var("NUMAPROBE_REQUIRE_ISAS") {
        for name in want.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let isa = Isa::parse(name).unwrap_or_else(|| panic!("unknown ISA '{name}'"));
            assert!(
                isa == Isa::Scalar || ran.contains(&isa),
                "NUMAPROBE_REQUIRE_ISAS asks for {isa}, which this CPU cannot run: {line}"
            );
        }
    }
}

/// The variants under test: everything this CPU has but the reference.
fn variants() -> Vec<&'static dyn Ops> {
    Isa::available()
        .into_iter()
        .filter(|&i| i != Isa::Scalar)
        .map(|i| super::ops_for(i).unwrap())
        .collect()
}

/// Runs `op` on a variant and on the reference for every length, offset and
/// store mode, with the destination pre-filled with a sentinel, and demands
/// identical destinations, sentinels untouched around them.
fn runner(name: &str, op: impl Fn(&dyn Ops, &mut [f64], [&[f64]; 3], bool)) {
    let vs = variants();
    for v in &vs {
        for &len in &LENGTHS {
            for off in OFFSETS {
                for nt in [false, true] {
                    let srcs: Vec<Vec<f64>> = (1..4)
                        .map(|k| input(len + off[k] + 1, k as u64 * 31 + len as u64))
                        .collect();
                    let s: [&[f64]; 3] = [
                        &srcs[0][off[1]..off[1] + len],
                        &srcs[1][off[2]..off[2] + len],
                        &srcs[2][off[3]..off[3] + len],
                    ];
                    let mut want = vec![-7.5; len + off[0] + 1];
                    let mut got = want.clone();
                    op(&Scalar, &mut want[off[0]..off[0] + len], s, nt);
                    op(*v, &mut got[off[0]..off[0] + len], s, nt);
                    assert_eq!(
                        got,
                        want,
                        "{name} on {} differs from scalar: len {len}, offsets {off:?}, nt {nt}",
                        v.isa()
                    );
                }
            }
        }
    }
}

#[test]
fn variants_are_detected_consistently() {
    assert!(Isa::available().contains(&Isa::Scalar));
    assert!(super::select(Some(Isa::Scalar)).is_ok());
    let best = super::select(None).unwrap();
    assert_eq!(best.isa(), Isa::best());
    #[cfg(target_arch = "x86_64")]
    assert!(Isa::available().contains(&Isa::Sse2), "SSE2 is the x86-64 baseline");
    if !Isa::available().contains(&Isa::Avx512) {
        let err = super::select(Some(Isa::Avx512)).err().unwrap();
        assert!(err.to_string().contains("avx512"));
    }
}

#[test]
fn copy_matches_scalar() {
    runner("copy", |o, d, s, nt| o.copy(d, s[0], nt));
}

#[test]
fn scale_matches_scalar() {
    runner("scale", |o, d, s, nt| o.scale(d, s[0], 3.0, nt));
}

#[test]
fn add_matches_scalar() {
    runner("add", |o, d, s, nt| o.add(d, s[0], s[1], nt));
}

#[test]
fn triad_matches_scalar() {
    runner("triad", |o, d, s, nt| o.triad(d, s[0], s[1], 3.0, nt));
}

#[test]
fn add3_matches_scalar() {
    runner("add3", |o, d, s, nt| o.add3(d, s[0], s[1], s[2], nt));
}

#[test]
fn fill_matches_scalar() {
    runner("fill", |o, d, _s, nt| o.fill(d, 2.25, nt));
}

#[test]
fn sum_matches_scalar() {
    // Summation order differs between variants: compare with a tolerance
    // relative to the sum of magnitudes, and exactly on integers.
    for v in variants() {
        for &len in &LENGTHS {
            for off in 0..8 {
                let x = input(len + off, len as u64);
                let s = &x[off..];
                let want = Scalar.sum(s);
                let got = v.sum(s);
                let mag: f64 = s.iter().map(|y| y.abs()).sum();
                assert!(
                    (got - want).abs() <= 1e-12 * mag.max(1.0),
                    "sum on {}: {got} vs {want}, len {len}, offset {off}",
                    v.isa()
                );
                let ints: Vec<f64> = (0..len + off).map(|i| (i % 13) as f64).collect();
                assert_eq!(v.sum(&ints[off..]), Scalar.sum(&ints[off..]), "len {len} off {off}");
            }
        }
    }
}
