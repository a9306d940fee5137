//! The text of `numaprobe audit`: the findings' table, then each
//! finding's details (all of them with `--all`) and the discovery
//! warnings; and its `--json` document ([`Doc`]).

use audit::{Evidence, Report, Terms};
use results::audit::Severity;
use serde::Serialize;

use super::{Table, TableStyle};

/// What the audit's findings and memory notes call numaprobe's commands
/// and options (a finding is kept as text: `audit --json` writes it and a
/// run stores it).
pub const TERMS: Terms = Terms {
    counters: "--counters",
    lat: "numaprobe lat",
    run: "numaprobe run",
    audit: "numaprobe audit",
    export_hwloc: "numaprobe export --format hwloc RUN -o topo.xml",
    peak_gbs: "--peak-gbs",
    contradiction: report::distances::contradiction,
};

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
        out.push_str(&format!(
            "Declared distances not compared with measured ones: {}\n",
            report::distances::unchecked(why)
        ));
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

/// `numaprobe audit --json`: the audit's [`Report`] field for field, its
/// evidence's comparison of declared and measured distances with the
/// reason nothing was compared in words
/// ([`report::distances::worded`]; the library's `Evidence` leaves the
/// comparison out of its own serialization).
#[derive(Serialize)]
pub struct Doc<'a> {
    profile: &'a audit::Profile,
    root: &'a str,
    findings: &'a [results::audit::Finding],
    counts: &'a audit::Counts,
    settings: &'a audit::Settings,
    memory: &'a audit::Read<audit::MemoryPopulation>,
    edac: &'a audit::Read<audit::edac::Edac>,
    evidence: EvidenceDoc<'a>,
    warnings: &'a [topo::Warning],
}

/// The evidence's fields, then its distance comparison worded.
#[derive(Serialize)]
struct EvidenceDoc<'a> {
    #[serde(flatten)]
    evidence: &'a Evidence,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "report::distances::worded")]
    distances: &'a Option<analysis::distances::Check>,
}

impl<'a> Doc<'a> {
    pub fn of(r: &'a Report) -> Doc<'a> {
        Doc {
            profile: &r.profile,
            root: &r.root,
            findings: &r.findings,
            counts: &r.counts,
            settings: &r.settings,
            memory: &r.memory,
            edac: &r.edac,
            evidence: EvidenceDoc { evidence: &r.evidence, distances: &r.evidence.distances },
            warnings: &r.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::distances::{Check, Unchecked};

    fn json<T: Serialize>(v: &T) -> String {
        serde_json::to_string(v).unwrap()
    }

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

    /// numaprobe's words for what the findings tell the user to use, and
    /// report's for a distances contradiction.
    #[test]
    fn the_terms_are_numaprobes_commands_and_options() {
        let Terms { counters, lat, run, audit, export_hwloc, peak_gbs, contradiction } = TERMS;
        assert_eq!(
            [counters, lat, run, audit, export_hwloc, peak_gbs],
            [
                "--counters",
                "numaprobe lat",
                "numaprobe run",
                "numaprobe audit",
                "numaprobe export --format hwloc RUN -o topo.xml",
                "--peak-gbs",
            ]
        );
        use analysis::distances::{Claim, Contradiction, Kind, Source};
        let c = Contradiction {
            kind: Kind::Order,
            source: Source::Firmware,
            claim: Claim::Distances { near: 11, far: 21 },
            from: 0,
            a: 1,
            b: 2,
            measured_pct: 18.0,
            allowed_pct: 5.0,
        };
        assert_eq!(contradiction(&c), report::distances::contradiction(&c));
    }

    /// Other words, kept in every finding and note that names a command or
    /// an option: the audit names none of numaprobe's own.
    #[test]
    fn the_findings_take_every_command_and_option_from_the_terms() {
        use analysis::distances::{Claim, Contradiction, Kind, Row, Source};
        let other = Terms {
            counters: "<counters>",
            lat: "<lat>",
            run: "<run>",
            audit: "<audit>",
            export_hwloc: "<export>",
            peak_gbs: "<peak>",
            contradiction: |_| "<contradiction>".into(),
        };
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../audit/tests/data/tuned");
        let root = topo::SysRoot::new(dir).unwrap();
        let topology = topo::Topology::discover(&root).unwrap();
        let mut settings = audit::Settings::read(&root);
        settings.zone_reclaim_mode = audit::Read::Unreadable("Permission denied".into());
        settings.perf_event_paranoid = audit::Read::Value(2);
        // Dell-like slots A1..A12, B1..B12: a layout assumed from positions
        let memory = {
            use audit::smbios::build::*;
            let mut t = processor(1, "CPU1");
            t.extend(processor(2, "CPU2"));
            for (h, (l, n)) in
                ["A", "B"].iter().flat_map(|l| (1..=12).map(move |n| (l, n))).enumerate()
            {
                let size = if n <= 6 { 32768 } else { 0 };
                t.extend(dimm(
                    0x100 + h as u16,
                    &format!("{l}{n}"),
                    "Not Specified",
                    size,
                    3200,
                    2933,
                    0x1A,
                ));
            }
            t.extend(end());
            audit::MemoryPopulation::from_table(&t, None).unwrap()
        };
        let reversed = Contradiction {
            kind: Kind::Order,
            from: 0,
            a: 1,
            b: 2,
            source: Source::Firmware,
            claim: Claim::Distances { near: 11, far: 21 },
            measured_pct: 18.0,
            allowed_pct: 5.0,
        };
        let distances = analysis::distances::Check::Checked {
            pairs: 2,
            ratios: 0,
            order: vec![reversed],
            ratio: vec![],
            flat: false,
            rows: vec![Row {
                from: 0,
                declared_order: vec![0, 1, 2],
                measured_order: vec![0, 2, 1],
            }],
            unsettled: vec![],
        };
        // no prefetch check, then one whose neighbour chase measured slower
        let slower = results::lat::PrefetchCheck::judge(
            3,
            Some(0),
            1 << 30,
            "4k".into(),
            256,
            (160.0, 1.0),
            (150.0, 1.0),
        );
        let slower =
            results::Record::LatSummary(Box::new(results::lat::LatSummary::PrefetchCheck(slower)));
        let mut checked = Evidence::from_records(&[slower]);
        checked.distances = Some(distances.clone());
        let none = Evidence { distances: Some(distances), ..Evidence::default() };
        let (mut texts, mut said) = (Vec::new(), 0);
        for (p, evidence) in
            audit::Profile::ALL.into_iter().flat_map(|p| [(p, &none), (p, &checked)])
        {
            let r = Report::from_parts(
                "test".into(),
                &topology,
                settings.clone(),
                audit::Read::Value(memory.clone()),
                evidence.clone(),
                p,
                other,
            );
            for f in &r.findings {
                texts.extend([&f.found, &f.expected, &f.why, &f.fix].map(|t| t.clone()));
            }
            texts.extend(r.memory.value().unwrap().notes.iter().cloned());
        }
        for word in [
            "<lat> (or <run>)",
            "<lat> on",
            "run <audit> as root",
            "<export>, then",
            "give <peak> if",
            "<counters>",
        ] {
            assert!(texts.iter().any(|t| t.contains(word)), "{word}");
            said += 1;
        }
        assert_eq!(said, 6);
        // Other tools' commands and flags (numactl, mpirun, sysctl) stay:
        // none of numaprobe's commands or options does.
        let ours = [TERMS.counters, TERMS.peak_gbs, "--format", "--json", "--all", "--profile"];
        let commands = ["lat", "run", "audit", "export", "bw", "exec", "gpu", "report", "topo"];
        for t in &texts {
            for flag in ours {
                assert!(!t.contains(flag), "{flag}: {t}");
            }
            for cmd in commands {
                assert!(!t.contains(&format!("numaprobe {cmd}")), "{t}");
            }
        }
    }

    /// The document is the report's own serialization, field for field,
    /// plus the distance comparison worded after the evidence's fields.
    #[test]
    fn the_document_is_the_report_with_the_distances_worded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../topo/tests/data/snc2-cxl");
        let root = topo::SysRoot::new(dir).unwrap();
        let t = topo::Topology::discover(&root).unwrap();
        let mut r = Report::build(&root, &t, audit::Profile::General, Evidence::default(), TERMS);
        assert_eq!(json(&Doc::of(&r)), json(&r));
        r.evidence.distances = Some(Check::NotChecked { reason: Unchecked::NoMatrix });
        let (doc, own) = (json(&Doc::of(&r)), json(&r));
        let worded = format!(
            ",\"distances\":{{\"status\":\"not-checked\",\"reason\":\"{}\"}}}}",
            report::distances::unchecked(&Unchecked::NoMatrix)
        );
        let ev = json(&r.evidence);
        assert!(own.contains(&ev), "{own}");
        assert_eq!(doc, own.replace(&ev, &format!("{}{worded}", &ev[..ev.len() - 1])));
    }
}
