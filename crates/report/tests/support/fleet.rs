//! A fleet of synthetic hosts that reaches every part of
//! `report::fleet::document` and of console's `fleet --json` document
//! (outliers, drift, stale and future runs, a renamed machine, two machines
//! of one name, runs passed over, impossible figures, disagreeing declared
//! distances, hosts not measured, incomplete and left out, a group without
//! peers), with its sentences, for report's tests/fleet_doc.rs (the report
//! as text, Markdown and HTML) and console's tests/fleet_json.rs (the
//! JSON). The pins are report's tests/data/fleet/*; `NUMAPROBE_BLESS=1`
//! rewrites them (only for a deliberate change of the report).

use std::collections::BTreeMap;
use std::path::PathBuf;

use analysis::fleet::{
    build_fresh, DriftSetting, Fleet, Freshness, GroupBy, HostRun, PassedOver, RunRef,
    UnmeasuredInput, WithoutFigures,
};
use analysis::metrics::MetricKey;
use report::fleet::Words;

/// 2026-11-10T12:00:00Z in ms since the epoch.
const NOW_MS: i64 = 1_794_312_000_000;

/// report's tests/data/fleet, from report's tests and console's.
fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../report/tests/data/fleet")
}

/// Compares `got` with the pin `name` (or writes it, blessing).
pub fn pin(name: &str, got: &[u8], failures: &mut Vec<String>) {
    let path = data().join(name);
    if std::env::var_os("NUMAPROBE_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if want != got {
        failures.push(format!("{name} differs from {}", path.display()));
    }
}

/// A host's run; `bw` and `lat` are its local bandwidth (GB/s) and local
/// latency (ns), `noise` their robust CV %.
fn host(name: &str, id: i64, started: &str, bw: f64, lat: f64, noise: f64) -> HostRun {
    let mut metrics = BTreeMap::new();
    metrics.insert(MetricKey::LocalBw, bw);
    metrics.insert(MetricKey::LocalLat, lat);
    metrics.insert(MetricKey::RemoteLat, lat * 1.7 + id as f64);
    let noise = metrics.keys().map(|k| (*k, noise + id as f64 / 10.0)).collect();
    let mut settings = BTreeMap::new();
    settings.insert("thp".to_string(), "always".to_string());
    settings.insert("governor".to_string(), "performance".to_string());
    HostRun {
        host: name.into(),
        key: format!("host:{name}"),
        machine_id: None,
        machine_id_source: None,
        model: "Xeon Gold 6430, 2 package(s), 64 core(s), 512 GiB".into(),
        id,
        uuid: format!("00000000-0000-4000-8000-{id:012}"),
        label: Some("nightly".into()),
        started: started.into(),
        complete: true,
        status: "complete".into(),
        message: None,
        config_hash: "cfg-a".into(),
        metrics,
        noise,
        exec: false,
        settings,
        declared_order_disagrees: Some(false),
        impossible: BTreeMap::new(),
    }
}

fn runs() -> Vec<HostRun> {
    let t = "2026-11-09T08:00:00Z";
    let mut v = vec![
        host("a1", 1, t, 210.4, 92.1, 0.8),
        host("a2", 2, t, 208.9, 93.0, 1.1),
        host("a3", 3, t, 211.7, 91.4, 0.6),
        host("a4", 4, "2026-10-01T08:00:00Z", 209.3, 92.6, 0.9),
        host("a5", 5, t, 151.2, 131.0, 2.4),
        host("a6", 6, "2026-11-11T08:00:00Z", 210.0, 92.0, 0.7),
    ];
    v[4].settings.insert("thp".into(), "never".into());
    v[4].declared_order_disagrees = Some(true);
    // Two machines called "dup", one renamed from "old-a3".
    for (i, idn) in [(1, "0123456789abcdef"), (2, "fedcba9876543210")] {
        v[i].host = "dup".into();
        v[i].machine_id = Some(idn.into());
        v[i].machine_id_source = Some("dmi".into());
        v[i].key = format!("id:{idn}");
    }
    let mut renamed = host("old-a3", 7, "2026-11-01T08:00:00Z", 210.0, 92.0, 0.7);
    renamed.key = v[2].key.clone();
    v.push(renamed);
    // A newer run without the fleet's figures (an exec run) on a1.
    let mut exec = host("a1", 8, "2026-11-09T09:00:00Z", 0.0, 0.0, 0.0);
    exec.metrics.clear();
    exec.noise.clear();
    exec.exec = true;
    v.push(exec);
    // An interrupted latest run on b1, after a complete one.
    let mut b1 = host("b1", 9, "2026-11-08T08:00:00Z", 120.0, 80.0, 1.0);
    b1.model = "EPYC 9654, 1 package(s), 96 core(s), 384 GiB".into();
    let mut b1_bad = b1.clone();
    b1_bad.id = 10;
    b1_bad.started = "2026-11-09T10:00:00Z".into();
    b1_bad.complete = false;
    b1_bad.status = "interrupted".into();
    b1_bad.message = Some("interrupted (SIGTERM)".into());
    v.push(b1);
    v.push(b1_bad);
    // A group of two: no peers to judge by.
    for (n, id) in [("c1", 11), ("c2", 12)] {
        let mut c = host(n, id, t, 300.0 + id as f64, 70.0, 0.5);
        c.model = "Grace 72c, 1 package(s), 72 core(s), 480 GiB".into();
        v.push(c);
    }
    v
}

/// The fleet and its sentences, with entries no roster builds (a host left
/// out and a warning of the words' own, a figure's reason, a passed-over
/// run's short why) so that the report's and the document's listing of
/// them is pinned whatever words them.
pub fn fleet() -> (Fleet, Words) {
    let runs = runs();
    let unmeasured = vec![
        UnmeasuredInput {
            host: "z9".into(),
            error: "ssh: connect to host z9 port 22: No route to host".into(),
            machine_id: Some("99990000aaaabbbb".into()),
        },
        UnmeasuredInput { host: "c2".into(), error: "numaprobe exited 1".into(), machine_id: None },
    ];
    let fresh = Freshness { max_age_s: 8 * 86400, now_ms: NOW_MS, unmeasured: &unmeasured };
    let mut f = build_fresh(&runs, GroupBy::Label, 5.0, Some("nightly"), &fresh);
    let g = f.groups.iter_mut().find(|g| !g.drift_settings.is_empty()).unwrap();
    g.drift_settings.push(DriftSetting {
        setting: "governor".into(),
        majority: None,
        values: [("performance".to_string(), 3), ("powersave".to_string(), 3)].into(),
    });
    let h = f.groups.iter_mut().flat_map(|g| &mut g.hosts).find(|h| h.host == "a4").unwrap();
    if h.passed_over.is_empty() {
        h.passed_over.push(PassedOver {
            run: RunRef {
                run: 99,
                run_uuid: "u-99".into(),
                label: None,
                started: "2026-11-02T08:00:00Z".into(),
                age_s: Some(691200.0),
                status: "complete".into(),
            },
            why: WithoutFigures::Exec,
        });
    }
    let mut w = Words::of(&f);
    w.skipped.push(("q1".into(), "no machine description".into()));
    w.warnings.push("two runs of q2 share a uuid".into());
    for (g, gw) in f.groups.iter().zip(&mut w.groups) {
        for (h, hw) in g.hosts.iter().zip(&mut gw.hosts) {
            if h.host == "a5" {
                hw.impossible.insert(MetricKey::RemoteLat.into(), "below the local latency".into());
            }
            if h.host == "a4" && h.passed_over.iter().any(|p| p.run.run == 99) {
                hw.passed_over = vec!["an exec run".into()];
            }
        }
    }
    (f, w)
}
