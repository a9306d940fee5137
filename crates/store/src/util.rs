//! Small helpers: UTC timestamps in RFC 3339 and a stable hash of JSON.

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

/// A stable 64-bit FNV-1a hash of a JSON value in canonical form (object
/// keys sorted, no whitespace), as 16 hex digits. Used to group runs by
/// machine and by configuration; not a security hash.
pub fn json_hash(value: &serde_json::Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    format!("{:016x}", topo::hash::fnv1a64(text.as_bytes()))
}

fn canonical(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn hash_ignores_key_order_but_not_values() {
        let a = json!({"cpu": "X", "nodes": 2, "list": [1, 2]});
        let b = json!({"nodes": 2, "list": [1, 2], "cpu": "X"});
        let c = json!({"nodes": 4, "list": [1, 2], "cpu": "X"});
        assert_eq!(json_hash(&a), json_hash(&b));
        assert_ne!(json_hash(&a), json_hash(&c));
        assert_eq!(json_hash(&a).len(), 16);
        // FNV-1a of the empty object "{}" is fixed forever.
        assert_eq!(json_hash(&json!({})), "08f44b07b5901a25");
    }
}
