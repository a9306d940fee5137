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

pub(crate) fn section(doc: &mut Document, d: &RunData) {
    let measured: Vec<(&BwResult, &Power)> =
        d.bw.iter().filter_map(|r| Some((r, r.power.as_ref()?))).collect();
    if measured.is_empty() {
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
}
