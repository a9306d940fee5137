//! The report's "Power and frequency" section: each bandwidth result's
//! energy (RAPL package and DRAM zones), mean power, GB/s per watt and mean
//! core frequency over its timed repetitions, with where the frequency came
//! from, or why either is unavailable. Absent when no result recorded them
//! (runs from before the readers).

use results::bw::BwResult;
use results::power::Power;

use crate::doc::{Document, Table};
use analysis::data::RunData;

fn watts(p: &Power, pick: impl Fn(&str) -> bool) -> String {
    let w: Vec<f64> = p.zones.iter().filter(|z| pick(&z.name)).map(|z| z.watts).collect();
    if w.is_empty() {
        "-".into()
    } else {
        format!("{:.1}", w.iter().sum::<f64>())
    }
}

fn row(r: &BwResult, p: &Power) -> Vec<String> {
    vec![
        r.mode.name().to_string(),
        crate::method::kernel_stores(r),
        r.cpu_node.map_or("all".into(), |n| n.to_string()),
        r.memory(),
        format!("{:.1}", r.best_gbs),
        watts(p, |n| n.starts_with("package")),
        watts(p, |n| n == "dram"),
        p.mean_watts()
            .filter(|w| *w > 0.0)
            .map_or("-".into(), |w| format!("{:.3}", r.best_gbs / w)),
        p.mean_mhz.map_or("-".into(), |m| {
            format!("{m:.0} ({})", p.frequency_source.as_deref().unwrap_or("?"))
        }),
    ]
}

/// The power of the loaded-latency points and of the `exec` runs: what
/// ran, package and DRAM W, mean MHz; reasons it is unavailable added to
/// `reasons`.
fn others(d: &RunData, reasons: &mut Vec<String>) -> Option<Table> {
    let mut rows: Vec<(String, &Power)> = Vec::new();
    for l in &d.loaded {
        if let Some(p) = l.power.as_deref() {
            let load = match l.delay_ns {
                _ if l.idle => "idle".to_string(),
                Some(ns) => format!("{ns:.0} ns wait, {:.1} GB/s", l.load_gbs),
                None => format!("{:.1} GB/s", l.load_gbs),
            };
            rows.push((format!("lat loaded {} ({load})", l.load_kind.name()), p));
        }
    }
    for e in &d.exec {
        for r in &e.runs {
            if let Some(p) = &r.power {
                rows.push((format!("exec {} (run {})", e.policy, r.rep), p));
            }
        }
    }
    for (_, p) in &rows {
        for why in [&p.energy_unavailable, &p.frequency_unavailable].into_iter().flatten() {
            if !reasons.contains(why) {
                reasons.push(why.clone());
            }
        }
    }
    if !rows.iter().any(|(_, p)| !p.zones.is_empty() || p.mean_mhz.is_some()) {
        return None;
    }
    let mut t =
        Table::with_header(&["Measurement", "Seconds", "Package W", "DRAM W", "Mean MHz (source)"]);
    for (what, p) in rows {
        t.push(vec![
            what,
            format!("{:.2}", p.seconds),
            watts(p, |n| n.starts_with("package")),
            watts(p, |n| n == "dram"),
            p.mean_mhz.map_or("-".into(), |m| {
                format!("{m:.0} ({})", p.frequency_source.as_deref().unwrap_or("?"))
            }),
        ]);
    }
    Some(t.caption(
        "Loaded-latency points (over each point's samples) and program runs (over each run)",
    ))
}

pub(crate) fn section(doc: &mut Document, d: &RunData) {
    let measured: Vec<(&BwResult, &Power)> =
        d.bw.iter().filter_map(|r| Some((r, r.power.as_ref()?))).collect();
    let mut other_reasons = Vec::new();
    let other = others(d, &mut other_reasons);
    let other_recorded = d.loaded.iter().any(|l| l.power.is_some())
        || d.exec.iter().flat_map(|e| &e.runs).any(|r| r.power.is_some());
    if measured.is_empty() && !other_recorded {
        return;
    }
    doc.h(3, "Power and frequency");
    doc.p("Over each result's timed repetitions: mean power of the RAPL zones (powercap; package and DRAM, W), GB/s per W = best GB/s / (package + DRAM W), and the mean core frequency of the team's CPUs (MHz; from APERF/MPERF when the MSRs are readable, else cpufreq's scaling_cur_freq sampled at the start and end).");
    let mut reasons: Vec<String> = Vec::new();
    for (_, p) in &measured {
        for why in [&p.energy_unavailable, &p.frequency_unavailable].into_iter().flatten() {
            if !reasons.contains(why) {
                reasons.push(why.clone());
            }
        }
    }
    let any_figure = measured.iter().any(|(_, p)| !p.zones.is_empty() || p.mean_mhz.is_some());
    if any_figure {
        let mut t = Table::with_header(&[
            "Mode",
            "Kernel",
            "CPU node",
            "Memory node(s)",
            "Best GB/s",
            "Package W",
            "DRAM W",
            "GB/s per W",
            "Mean MHz (source)",
        ]);
        for (r, p) in &measured {
            t.push(row(r, p));
        }
        doc.table(t);
    }
    if let Some(t) = other {
        doc.table(t);
    }
    for why in other_reasons {
        if !reasons.contains(&why) {
            reasons.push(why);
        }
    }
    for why in reasons {
        doc.p(format!("Unavailable: {why}."));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(power: serde_json::Value) -> BwResult {
        let v = serde_json::json!({"mode": "local", "kernel": "triad", "cpu_node": 0,
            "mem_node": 0, "threads": 2, "best_gbs": 100.0, "stores": "nt", "isa": "avx2",
            "power": power});
        match results::upgrade::read("bw", &v).record {
            results::Record::Bw(b) => *b,
            r => panic!("not a bw record: {r:?}"),
        }
    }

    fn text(results: Vec<BwResult>) -> String {
        use crate::render::Renderer;
        let d = RunData { bw: results, ..RunData::default() };
        let mut doc = Document::default();
        section(&mut doc, &d);
        String::from_utf8(crate::render::Markdown.render(&doc)).unwrap()
    }

    #[test]
    fn figures_per_result_and_reasons_once() {
        let t = text(vec![bw(serde_json::json!({"seconds": 2.0, "mean_mhz": 2900.0,
            "frequency_source": "aperf/mperf", "zones": [
            {"zone": "intel-rapl:0", "name": "package-0", "joules": 180.0, "watts": 90.0},
            {"zone": "intel-rapl:0:0", "name": "dram", "joules": 20.0, "watts": 10.0}]}))]);
        // 100 GB/s / (90 + 10) W
        assert!(t.contains("| 100.0 | 90.0 | 10.0 | 1.000 | 2900 (aperf/mperf) |"), "{t}");
        let vm = serde_json::json!({"seconds": 1.0, "zones": [],
            "energy_unavailable": "no RAPL zone: a virtual machine",
            "frequency_unavailable": "no /dev/cpu/N/msr"});
        let t = text(vec![bw(vm.clone()), bw(vm)]);
        assert!(!t.contains("| Mode |"), "no table without a figure: {t}");
        assert_eq!(t.matches("Unavailable: no RAPL zone: a virtual machine.").count(), 1, "{t}");
        assert!(t.contains("Unavailable: no /dev/cpu/N/msr."), "{t}");
        // no power recorded: no section
        assert!(!text(vec![]).contains("Power and frequency"));
    }

    /// exec runs and loaded-latency points with power get their rows; a
    /// VM's reasons are said once with the bandwidth ones.
    #[test]
    fn exec_runs_and_loaded_points_have_their_power() {
        use crate::render::Renderer;
        let pw = serde_json::json!({"seconds": 2.0, "mean_mhz": 3100.0,
            "frequency_source": "aperf/mperf", "zones": [
            {"zone": "amd_energy:hwmon3:energy129", "name": "package-0", "joules": 240.0, "watts": 120.0}]});
        let exec: results::exec::PolicyResult = serde_json::from_value(serde_json::json!({
            "policy": "bind-1", "placement": "p", "cpus": null, "mem_policy": "bind",
            "mem_nodes": "1", "ok_runs": 1, "verdict": "no-data", "runs": [{"rep": 1,
            "wall_s": 2.0, "user_s": 0.0, "sys_s": 0.0, "max_rss_kib": 0, "exit_code": 0,
            "signal": null, "timed_out": false, "interrupted": false, "ok": true,
            "metric": null, "numa_pages": null, "numastat_delta": [], "power": pw}]}))
        .unwrap();
        let loaded = match results::upgrade::read(
            "lat",
            &serde_json::json!({"mode": "loaded",
            "idle": false, "delay_ns": 500.0, "load_gbs": 41.5, "load_kind": "read",
            "median_ns": 150.0, "power": {"seconds": 0.5, "zones": [],
            "energy_unavailable": "no RAPL zone: a virtual machine",
            "frequency_unavailable": "no /dev/cpu/N/msr"}}),
        )
        .record
        {
            results::Record::Lat(l) => match *l {
                results::lat::Lat::Loaded(p) => p,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        };
        let d = RunData { exec: vec![exec], loaded: vec![loaded], ..RunData::default() };
        let mut doc = Document::default();
        section(&mut doc, &d);
        let t = String::from_utf8(crate::render::Markdown.render(&doc)).unwrap();
        assert!(
            t.contains("| exec bind-1 (run 1) | 2.00 | 120.0 | - | 3100 (aperf/mperf) |"),
            "{t}"
        );
        assert!(
            t.contains("| lat loaded read (500 ns wait, 41.5 GB/s) | 0.50 | - | - | - |"),
            "{t}"
        );
        assert_eq!(t.matches("Unavailable: no RAPL zone: a virtual machine.").count(), 1, "{t}");
    }
}
