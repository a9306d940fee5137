//! Number formatting shared by every output: fixed decimals per unit,
//! figures rounded to their noise.
//!
//! The one rule for a measured figure ([`fig`]): it keeps the decimals its
//! noise supports, at most the unit's ([`num`]) and never fewer than
//! none, so a figure is never rounded into its integer digits (65.9 at 15%
//! noise is `66`, never `70`) and never differs from the stored value by
//! more than half a unit of its last digit. Every output that writes a
//! run's figure (the run table, `show`, the brief, the reports, `fleet`,
//! `bw`) writes it through [`fig`] with the figure's noise.

/// A value in `unit`: GB/s, ns, % and s with one decimal (the precision
/// the measurements support), anything else (ratios, `x`, included) with
/// up to three.
pub fn num(v: f64, unit: &str) -> String {
    match unit {
        "GB/s" | "ns" | "%" => format!("{v:.1}"),
        "s" => format!("{v:.3}"),
        _ => plain(v),
    }
}

/// A number without a unit: integers as such, else up to three decimals
/// with trailing zeros trimmed.
pub fn plain(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `v` rounded to what its noise supports: the uncertainty (`noise_pct`
/// of `v`, one robust standard deviation) keeps one significant digit and
/// `v` is cut at that digit (`152.7` at 2% -> `153`, at 0.3% -> `152.7`),
/// but never above the units digit (`12345` at 1% -> `12345`, `65.9` at
/// 15% -> `66`): a figure written `70` would read as 70 to anyone. Without
/// noise (0 or unknown) four significant digits.
pub fn noisy(v: f64, noise_pct: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let u = (v * noise_pct / 100.0).abs();
    if u.is_nan() || u <= 0.0 || !u.is_finite() {
        // four significant digits, but never into the integer digits
        return if v.abs() >= 1e4 { format!("{v:.0}") } else { sig(v, 4) };
    }
    let e = u.log10().floor() as i32;
    let e = e.clamp(-3, 0);
    let step = 10f64.powi(e);
    let r = (v / step).round() * step;
    if e >= 0 {
        format!("{r:.0}")
    } else {
        format!("{r:.*}", (-e) as usize)
    }
}

/// `v` with `digits` significant digits, no exponent, trailing zeros of
/// the fraction trimmed (`0.0001234567` -> `0.0001235`, `101.26` -> `101.3`).
pub fn sig(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return plain(v);
    }
    let e = v.abs().log10().floor() as i32;
    let dec = (digits - 1 - e).max(0);
    let step = 10f64.powi(digits - 1 - e);
    let r = (v * step).round() / step;
    let s = format!("{r:.*}", dec as usize);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// An optional figure in `unit` rounded to its noise when known
/// ([`noisy`]), never with more decimals than [`num`] gives the unit; `-`
/// when absent.
pub fn fig(v: Option<f64>, noise_pct: Option<f64>, unit: &str) -> String {
    match (v, noise_pct) {
        (Some(x), Some(n)) if n > 0.0 && n.is_finite() => {
            let a = noisy(x, n);
            let b = num(x, unit);
            let dec = |s: &str| s.split('.').nth(1).map_or(0, str::len);
            if dec(&a) > dec(&b) {
                b
            } else {
                a
            }
        }
        (Some(x), _) => num(x, unit),
        (None, _) => "-".into(),
    }
}

/// An optional value in `unit`, `-` when absent.
pub fn opt(v: Option<f64>, unit: &str) -> String {
    v.map(|x| num(x, unit)).unwrap_or_else(|| "-".into())
}

/// The lowest, median and highest of latencies (not empty), ns, as cells.
pub(crate) fn min_median_max(v: &[f64]) -> [String; 3] {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let med = results::stats::median(v).unwrap_or(f64::NAN);
    [num(lo, "ns"), num(med, "ns"), num(hi, "ns")]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(num(101.249, "GB/s"), "101.2");
        assert_eq!(num(2.0, "threads"), "2");
        assert_eq!(plain(0.1250), "0.125");
        assert_eq!(opt(None, "ns"), "-");
        assert_eq!(num(1.7464, "x"), "1.746");
    }

    #[test]
    fn figures_keep_the_digits_their_noise_supports() {
        assert_eq!(noisy(152.7, 2.0), "153");
        assert_eq!(noisy(152.74, 0.3), "152.7");
        assert_eq!(noisy(12345.0, 1.0), "12345");
        assert_eq!(noisy(65.9, 15.0), "66");
        assert_eq!(noisy(1.1234, 1.0), "1.12");
        assert_eq!(noisy(10.9, 11.0), "11");
        assert_eq!(noisy(0.123456789, 0.0), "0.1235");
        assert_eq!(sig(0.30000000000000004, 4), "0.3");
        assert_eq!(sig(101.26, 4), "101.3");
        assert_eq!(sig(-2.5e-5, 3), "-0.000025");
    }
}
