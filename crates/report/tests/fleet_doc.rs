//! The fleet report pinned byte for byte: the fleet of tests/support/fleet.rs
//! rendered as text, Markdown and HTML (console's tests/fleet_json.rs pins
//! its `--json` document, tests/data/fleet/fleet.json).

mod support {
    pub mod fleet;
}

use report::Renderer;
use support::fleet::{fleet, pin};

#[test]
fn fleet_report_is_pinned() {
    let (f, w) = fleet();
    // The fixture reaches what it is meant to reach.
    assert!(f.outliers() > 0 && f.drifted() > 0, "{f:#?}");
    assert!(f.stale > 0 && f.future > 0 && f.no_peers > 0, "{f:#?}");
    assert!(!f.incomplete.is_empty() && !f.unmeasured.is_empty(), "{f:#?}");
    let hosts: Vec<_> = f.groups.iter().flat_map(|g| &g.hosts).collect();
    assert!(hosts.iter().any(|h| h.duplicate_hostname && h.machine_id.is_some()));
    assert!(hosts.iter().any(|h| !h.also_named.is_empty()));
    let words = w.groups.iter().flat_map(|g| &g.hosts);
    assert!(words.clone().any(|h| !h.impossible.is_empty()));
    assert!(words.clone().any(|h| !h.passed_over.is_empty()));
    assert!(!w.skipped.is_empty() && !w.warnings.is_empty());
    assert!(f.groups.iter().any(|g| g.note.is_some()), "{f:#?}");
    assert!(f.groups.iter().any(|g| !g.drift_settings.is_empty()), "{f:#?}");
    assert!(hosts.iter().any(|h| h.declared_order_disagrees == Some(true)));
    let doc = report::fleet::document_worded(&f, &w);
    let mut failures = Vec::new();
    pin("fleet.txt", &report::Text.render(&doc), &mut failures);
    pin("fleet.md", &report::Markdown.render(&doc), &mut failures);
    pin("fleet.html", &report::Html.render(&doc), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Words pair with the fleet by position: words made from the fleet fit
/// it, and words of another shape (a host or a passed-over run fewer) are
/// refused rather than cut short.
#[test]
fn words_of_another_fleet_are_refused() {
    let (f, w) = fleet();
    assert!(w.fits(&f) && report::fleet::Words::of(&f).fits(&f));
    let g = f.groups.iter().position(|g| g.hosts.len() > 1).expect("a group of peers");
    let mut fewer_hosts = w.clone();
    fewer_hosts.groups[g].hosts.pop();
    let mut fewer_passed = w.clone();
    let h = fewer_passed.groups.iter_mut().flat_map(|g| &mut g.hosts);
    h.into_iter().find(|h| !h.passed_over.is_empty()).expect("a passed-over run").passed_over.pop();
    for other in [fewer_hosts, fewer_passed] {
        assert!(!other.fits(&f));
        let drawn = std::panic::catch_unwind(|| report::fleet::document_worded(&f, &other));
        assert!(drawn.is_err());
    }
}
