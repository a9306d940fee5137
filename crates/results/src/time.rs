//! UTC timestamps in RFC 3339: writing them, parsing them and ordering
//! runs by them.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current time as RFC 3339 UTC with milliseconds,
/// e.g. `2026-11-21T21:07:32.123Z`.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    format_utc(d.as_secs() as i64, d.subsec_millis())
}

/// Formats seconds since the Unix epoch (UTC) as RFC 3339 with milliseconds.
pub fn format_utc(secs: i64, millis: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Parses an RFC 3339 date-time (`2026-11-21T21:07:32.123Z`,
/// `2026-11-21t22:07:32+01:00`; `T` may be a space, as RFC 3339 allows)
/// into milliseconds since the Unix epoch; `None` for anything else,
/// including impossible dates (February 30) and a missing offset.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let d = b.get(from..from + len)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0i64, |n, c| n * 10 + i64::from(c - b'0')))
    };
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[mo as usize - 1] {
        return None;
    }
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if at(i, b".") {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return None;
        }
        for k in 0..3 {
            millis = millis * 10 + num(i + 1 + k, 1).filter(|_| k < digits).unwrap_or(0);
        }
        i += 1 + digits;
    }
    let offset_min = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && at(i + 3, b":") => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let m = oh * 60 + om;
            if *sign == b'-' {
                -m
            } else {
                m
            }
        }
        _ => return None,
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs * 1000 + millis)
}

/// The order of two start times: by the instant they name, and a time that
/// does not parse (imported before timestamps were checked) before every
/// valid one, so it is never the `latest`.
pub fn time_order_key(s: &str) -> (bool, i64) {
    match parse_rfc3339(s) {
        Some(ms) => (true, ms),
        None => (false, 0),
    }
}

/// A proleptic Gregorian date to days since 1970-01-01 (H. Hinnant,
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant,
/// "chrono-Compatible Low-Level Date Algorithms", `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 12:34:56 UTC (a leap day)
        assert_eq!(format_utc(951_827_696, 7), "2000-02-29T12:34:56.007Z");
        // 2026-11-21 21:07:32 UTC
        assert_eq!(format_utc(1_795_295_252, 123), "2026-11-21T21:07:32.123Z");
        assert_eq!(format_utc(-1, 0), "1969-12-31T23:59:59.000Z");
    }

    #[test]
    fn parses_rfc3339_and_nothing_else() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-11-21T21:07:32.123Z"), Some(1_795_295_252_123));
        assert_eq!(parse_rfc3339("2026-11-21t22:07:32.1234+01:00"), Some(1_795_295_252_123));
        assert_eq!(parse_rfc3339("2026-11-21 21:07:32.1z"), Some(1_795_295_252_100));
        assert_eq!(parse_rfc3339("2000-02-29T12:34:56.007-00:30"), Some(951_829_496_007));
        for bad in [
            "not a date",
            "",
            "2026-11-21",
            "2026-11-21T21:07:32",
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-11-21T24:00:00Z",
            "2026-11-21T21:07:32.Z",
            "2026-11-21T21:07:32+0100",
            "2026-11-21T21:07:32Zjunk",
            "+026-11-21T21:07:32Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
        // every time this crate writes reads back
        let now = now_rfc3339();
        assert!(parse_rfc3339(&now).is_some(), "{now}");
        assert!(time_order_key("not a date") < time_order_key("1900-01-01T00:00:00Z"));
    }
}
