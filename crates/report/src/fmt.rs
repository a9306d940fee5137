//! Number formatting shared by every output: fixed decimals per unit,
//! signed percentages, binary byte sizes.

/// A value in `unit`: GB/s, ns, % and s with one decimal (the precision
/// the measurements support), anything else with up to three.
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

/// `+3.4%`, `-6.0%`, `0.0%`.
pub fn signed_pct(v: f64) -> String {
    if v.abs() < 0.05 {
        "0.0%".into()
    } else {
        format!("{v:+.1}%")
    }
}

/// A size in binary units: `512 B`, `48 KiB`, `1.5 MiB`, `1 GiB`.
pub use topo::units::binary_size as bytes;

/// An optional value in `unit`, `-` when absent.
pub fn opt(v: Option<f64>, unit: &str) -> String {
    v.map(|x| num(x, unit)).unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(num(101.249, "GB/s"), "101.2");
        assert_eq!(num(2.0, "threads"), "2");
        assert_eq!(plain(0.1250), "0.125");
        assert_eq!(signed_pct(3.44), "+3.4%");
        assert_eq!(signed_pct(-6.0), "-6.0%");
        assert_eq!(signed_pct(0.01), "0.0%");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(48 << 10), "48 KiB");
        assert_eq!(bytes(3 << 19), "1.5 MiB");
        assert_eq!(bytes(105 << 20), "105 MiB");
        assert_eq!(bytes(1 << 30), "1 GiB");
        assert_eq!(opt(None, "ns"), "-");
    }
}
