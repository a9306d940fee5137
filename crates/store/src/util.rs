//! Small helpers: a stable hash of JSON, and the RFC 3339 timestamps of
//! [`results::time`] under the names the store has always used.

pub use results::time::{format_utc, now_rfc3339, parse_rfc3339, time_order_key};

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
