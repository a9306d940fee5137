//! The `fleet --json` document pinned byte for byte: the fleet of report's
//! tests/support/fleet.rs (which reaches every key and every sentence's
//! place) written by [`console::fleet::Doc`], against report's
//! tests/data/fleet/fleet.json.

#[path = "../../report/tests/support/fleet.rs"]
mod fleet;

#[test]
fn fleet_json_is_pinned() {
    let (f, w) = fleet::fleet();
    let mut json = serde_json::to_string_pretty(&console::fleet::Doc::new(&f, &w)).unwrap();
    json.push('\n');
    let mut failures = Vec::new();
    fleet::pin("fleet.json", json.as_bytes(), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
