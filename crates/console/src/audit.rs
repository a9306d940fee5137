//! The text of `numaprobe audit`: the findings' table, then each
//! finding's details (all of them with `--all`) and the discovery
//! warnings.

use audit::{Report, Terms};
use results::audit::Severity;

use super::{Table, TableStyle};

/// What the audit's findings call numaprobe's options (a finding is kept
/// as text: `audit --json` writes it and a run stores it).
pub const TERMS: Terms = Terms { counters: "--counters" };

/// The table and details (what `numaprobe audit` prints).
pub fn render(r: &Report, all: bool, style: TableStyle) -> String {
    let c = &r.counts;
    let mut out = format!(
        "Audit for profile {} (root {}): {} critical, {} warn, {} unknown, {} info, {} ok\n",
        r.profile, r.root, c.critical, c.warn, c.unknown, c.info, c.ok
    );
    match &r.evidence.source {
        Some(src) => out.push_str(&format!("Evidence from {src}\n")),
        None => out.push_str("No saved measurements of this machine: findings use settings only (run `numaprobe run` for evidence)\n"),
    }
    if let Some(why) = r.evidence.distances.as_ref().and_then(|d| d.not_checked()) {
        out.push_str(&format!("Declared distances not compared with measured ones: {why}\n"));
    }
    let mut t =
        Table::new(vec!["severity".into(), "id".into(), "check".into(), "found".into()], style);
    for f in &r.findings {
        let found = if f.found.chars().count() > 90 {
            format!("{}...", f.found.chars().take(87).collect::<String>())
        } else {
            f.found.clone()
        };
        t.add_row(vec![f.severity.label().to_uppercase(), f.id.clone(), f.title.clone(), found]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let details: Vec<_> = r.findings.iter().filter(|f| all || f.severity != Severity::Ok).collect();
    if !details.is_empty() {
        out.push_str("\nDetails\n");
    }
    for f in details {
        out.push_str(&format!("\n[{}] {}: {}\n", f.severity.label(), f.id, f.title));
        out.push_str(&format!("  found:    {}\n", f.found));
        out.push_str(&format!("  expected: {}\n", f.expected));
        out.push_str(&format!("  why:      {}\n", f.why));
        if !f.fix.is_empty() {
            let needs = serde_json::to_value(f.needs)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            out.push_str(&format!("  fix:      {}\n", f.fix));
            out.push_str(&format!("  needs:    {needs}\n"));
        }
        if let Some(e) = &f.evidence {
            out.push_str(&format!("  evidence: {e}\n"));
        }
    }
    if !r.warnings.is_empty() {
        out.push_str("\nWarnings (topology discovery)\n");
        for w in &r.warnings {
            out.push_str(&format!("  - {w}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters finding names the flag, word for word as before the
    /// rule took its name from here.
    #[test]
    fn the_counters_finding_names_the_flag() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/data/tuned");
        let root = topo::SysRoot::new(dir).unwrap();
        let topology = topo::Topology::discover(&root).unwrap();
        let mut settings = audit::Settings::read(&root);
        settings.perf_event_paranoid = audit::Read::Value(2);
        let r = Report::from_parts(
            "test".into(),
            &topology,
            settings,
            audit::Read::Absent,
            audit::Evidence::default(),
            audit::Profile::General,
            TERMS,
        );
        let f = r.finding("kernel.perf_counters").unwrap();
        assert_eq!(f.expected, "1 or lower for unprivileged --counters (0 for uncore counters)");
        assert_eq!(
            f.why,
            "Without privileges, --counters would miss the kernel's share of each event (or every \
             event), and memory-controller traffic."
        );
    }
}
