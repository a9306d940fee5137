//! How numaprobe writes sizes for people: binary units (KiB = 2^10 bytes,
//! MiB = 2^20, ...), exact when the size is a whole number of the unit,
//! else one decimal, halves rounded up (`48 KiB`, `1.5 MiB`, `105.3 MiB`, `1 GiB`).

/// A byte count in the largest binary unit that keeps it at least 1.
pub fn binary_size(bytes: u64) -> String {
    // halves rounded away from zero (1.25 MiB reads 1.3 MiB; `{:.1}` alone
    // would round half to even)
    scaled(bytes, f64::round)
}

/// Like [`binary_size`], rounded down to the decimal shown, so a limit
/// read back ("at most 18.7 GiB") never exceeds `bytes`.
pub fn binary_size_floor(bytes: u64) -> String {
    scaled(bytes, f64::floor)
}

/// `bytes` in the largest binary unit below it, one decimal rounded by
/// `round`.
fn scaled(bytes: u64, round: fn(f64) -> f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    let v = round(v * 10.0) / 10.0;
    if v.fract() == 0.0 {
        format!("{v} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(binary_size(0), "0 B");
        assert_eq!(binary_size(512), "512 B");
        assert_eq!(binary_size(1536), "1.5 KiB");
        assert_eq!(binary_size(48 << 10), "48 KiB");
        assert_eq!(binary_size(3 << 19), "1.5 MiB");
        assert_eq!(binary_size(1280 << 10), "1.3 MiB", "halves round away from zero");
        assert_eq!(binary_size((105 << 20) + (300 << 10)), "105.3 MiB");
        assert_eq!(binary_size(1 << 30), "1 GiB");
        assert_eq!(binary_size(3 << 40), "3 TiB");
    }

    #[test]
    fn limits_round_down() {
        assert_eq!(binary_size_floor(1280 << 10), "1.2 MiB");
        assert_eq!(binary_size_floor((19 << 30) - 1), "18.9 GiB");
        assert_eq!(binary_size_floor(1 << 30), "1 GiB");
        assert_eq!(binary_size_floor(100), "100 B");
    }
}
