//! How numaprobe writes sizes for people: binary units (KiB = 2^10 bytes,
//! MiB = 2^20, ...), exact when the size is a whole number of the unit,
//! else one decimal, halves rounded up (`48 KiB`, `1.5 MiB`, `105.3 MiB`, `1 GiB`).

/// A byte count in the largest binary unit that keeps it at least 1.
pub fn binary_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    // One decimal, halves rounded away from zero (1.25 MiB reads 1.3 MiB;
    // `{:.1}` alone would round half to even).
    let v = (v * 10.0).round() / 10.0;
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
}
