//! Runs as OpenMetrics text (also valid Prometheus text format 0.0.4, so
//! node_exporter's textfile collector and `promtool check metrics` read
//! it): `numaprobe export --format openmetrics RUN` and `run --textfile
//! DIR`. Names follow Prometheus conventions (`numaprobe_` prefix, base
//! units: bytes per second, seconds). A series is known by its host (name
//! and machine identity) and what it measures: every series carries `host`
//! and `machine_id` (when the run recorded one), no label holds a value
//! that changes from run to run (a calibrated figure is a sample, never a
//! label), and only `numaprobe_run_info` names the run (`run_uuid`,
//! `label`, `config`), so a new run of a host continues the same series
//! instead of starting new ones. One run per machine: given several runs
//! of a machine, its latest; two machines with one host name (clones) are
//! both written, told apart by `machine_id`. Families (documented in
//! docs/fleet.md):
//!
//! * `numaprobe_bandwidth_bytes_per_second`: each bandwidth result's best
//!   figure, labels `mode`, `stream_kernel`, `cpu_node`, `mem_node`,
//!   `pages`, `threads`;
//! * `numaprobe_latency_seconds`: each latency result's median, labels
//!   `mode`, `cpu_node`, `mem_node`, `pages`, `size_bytes`, `cpu`,
//!   `load_kind` and `load` (a loaded-latency point: `idle`, or the wait
//!   after each line asked of the load threads, in ns: the nominal level,
//!   the same in every run), `cpu_a`, `cpu_b` where they apply;
//! * `numaprobe_loaded_latency_delay_iterations`: the calibrated spin
//!   count each load thread waited at that point (it differs from run to
//!   run, so it is a value), the labels of its latency series;
//! * `numaprobe_headline_bandwidth_bytes_per_second` and
//!   `numaprobe_headline_latency_seconds`: the report's headline metrics,
//!   label `metric`;
//! * `numaprobe_run_timestamp_seconds`: when the run started (Unix time);
//! * `numaprobe_run_info` (value 1): machine and settings as labels.
//!
//! A label a result does not have is left out; two results with the same
//! label set (a repeated measurement) keep the first.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use results::context::{Count, Reading};
use results::lat::Lat;
use results::stats::measured;
use results::Record;
use serde_json::Value;
use store::{LoadedRun, RunId, Store, StoreError};

use analysis::data::RunData;
use analysis::metrics::{metrics, MetricKey};

struct Family {
    name: &'static str,
    help: &'static str,
    unit: &'static str,
    samples: Vec<(Vec<(String, String)>, f64)>,
    seen: BTreeSet<String>,
}

impl Family {
    fn new(name: &'static str, unit: &'static str, help: &'static str) -> Family {
        Family { name, help, unit, samples: Vec::new(), seen: BTreeSet::new() }
    }

    fn push(&mut self, labels: Vec<(String, String)>, value: f64) {
        if !value.is_finite() {
            return;
        }
        let key = labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("\u{1}");
        if self.seen.insert(key) {
            self.samples.push((labels, value));
        }
    }
}

/// Escapes a label value (backslash, double quote, line feed); other
/// control characters are written as visible text (`\x1b`, its backslash
/// escaped), so none reaches a scraper's logs or a terminal raw.
fn esc(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            '\r' | '\t' => o.push(' '),
            c if c.is_control() => {
                let mut shown = String::new();
                crate::safe::visible_push(&mut shown, c);
                o.push_str(&shown.replace('\\', "\\\\"));
            }
            c => o.push(c),
        }
    }
    o
}

/// A number as OpenMetrics writes it (Rust's shortest round-trip form).
fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Unix seconds of an RFC 3339 UTC time (`2026-11-02T11:00:02.000Z`);
/// `None` when it is not one.
pub fn unix_seconds(t: &str) -> Option<f64> {
    let t = t.strip_suffix('Z').or_else(|| t.strip_suffix("+00:00"))?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut hms = time.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let mi: i64 = hms.next()?.parse().ok()?;
    let s: f64 = hms.next()?.parse().ok()?;
    if !(1..=12).contains(&m)
        || !(1..=31).contains(&day)
        || h > 23
        || mi > 59
        || !(0.0..61.0).contains(&s)
    {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60) as f64 + s)
}

/// The labels every series of `run` carries: its host name and, when the
/// run recorded it, its machine identity (two clones share a name).
fn run_labels(run: &LoadedRun) -> Vec<(String, String)> {
    let mut l = vec![("host".into(), analysis::fleet::host_of(run))];
    if let Some(id) = run.machine_info.machine_id.as_deref().filter(|s| !s.is_empty()) {
        l.push(("machine_id".into(), id.to_string()));
    }
    l
}

/// The latest run of each machine among `runs` (in their order otherwise):
/// without the run in the labels, two runs of a machine would be one
/// series. Machines are known as the fleet knows them (identity, else host
/// name), so two clones with one host name keep a run each.
fn latest_per_host(runs: &[LoadedRun]) -> Vec<&LoadedRun> {
    let order = |r: &LoadedRun| (store::util::time_order_key(&r.summary.started), r.summary.id);
    let mut best: BTreeMap<String, &LoadedRun> = BTreeMap::new();
    for r in runs {
        let slot = best.entry(analysis::fleet::host_key(r).0).or_insert(r);
        if order(r) > order(slot) {
            *slot = r;
        }
    }
    runs.iter().filter(|r| best.values().any(|b| std::ptr::eq(*b, *r))).collect()
}

fn with(base: &[(String, String)], extra: &[(&str, Option<String>)]) -> Vec<(String, String)> {
    let mut l: Vec<(String, String)> =
        extra.iter().filter_map(|(k, v)| v.clone().map(|v| (k.to_string(), v))).collect();
    l.extend(base.iter().cloned());
    l
}

/// Whether a run holds a figure this exposition writes as a series of its
/// own (a bandwidth or latency result): an `exec` run, or a run that saved
/// nothing, is only its `numaprobe_run_info`.
pub fn has_figures(run: &LoadedRun) -> bool {
    run.records().any(|r| matches!(r, Record::Bw(_) | Record::Lat(_)))
}

/// The OpenMetrics text of `runs`, ending with `# EOF`.
pub fn render(runs: &[LoadedRun]) -> String {
    let mut f = Families::new();
    for run in latest_per_host(runs) {
        let base = run_labels(run);
        f.add_records(run, &base);
        f.add_headlines(run, &base);
        if let Some(t) = unix_seconds(&run.summary.started) {
            f.ts.push(base.clone(), t);
        }
        f.add_info(run, &base);
    }
    f.text()
}

/// The labels of one latency sample, in the order every latency series
/// writes them.
type LatLabels = [(&'static str, Option<String>); 10];

/// Every family the exposition writes, in the order it writes them.
struct Families {
    bw: Family,
    lat: Family,
    spin: Family,
    head_bw: Family,
    head_lat: Family,
    ts: Family,
    info: Family,
}

impl Families {
    fn new() -> Families {
        let bw = Family::new(
            "numaprobe_bandwidth_bytes_per_second",
            "bytes_per_second",
            "Best memory bandwidth of a numaprobe bandwidth result (10^9 B/s = 1 GB/s).",
        );
        let lat = Family::new(
            "numaprobe_latency_seconds",
            "seconds",
            "Median load-to-use latency of a numaprobe latency result.",
        );
        let spin = Family::new(
            "numaprobe_loaded_latency_delay_iterations",
            "",
            "Calibrated spin iterations each load thread waited after each line at a loaded-latency point.",
        );
        let head_bw = Family::new(
            "numaprobe_headline_bandwidth_bytes_per_second",
            "bytes_per_second",
            "A headline bandwidth metric of the run (local, global, interleave, cross_node).",
        );
        let head_lat = Family::new(
            "numaprobe_headline_latency_seconds",
            "seconds",
            "A headline latency metric of the run (local, remote, loaded_at_peak).",
        );
        let ts = Family::new(
            "numaprobe_run_timestamp_seconds",
            "seconds",
            "When the run started, Unix time.",
        );
        let info = Family::new(
            "numaprobe_run_info",
            "",
            "The run's machine and settings as labels (value 1).",
        );
        Families { bw, lat, spin, head_bw, head_lat, ts, info }
    }

    /// The run's bandwidth and latency results, one sample each.
    fn add_records(&mut self, run: &LoadedRun, base: &[(String, String)]) {
        // Loaded points of results recorded before the nominal wait: their
        // place in their curve.
        let mut steps: BTreeMap<String, usize> = BTreeMap::new();
        let n = |v: Option<u32>| v.map(|n| n.to_string());
        for r in run.records() {
            match r {
                Record::Bw(b) if b.best_gbs.is_finite() => {
                    let mem = n(b.mem_node).unwrap_or_else(|| b.mem_nodes.to_string());
                    let pages = serde_json::to_value(b.pages).ok().and_then(|v| text(Some(&v)));
                    self.bw.push(
                        with(
                            base,
                            &[
                                ("mode", Some(b.mode.name().into())),
                                ("stream_kernel", Some(b.kernel.name().into())),
                                ("cpu_node", n(b.cpu_node)),
                                ("mem_node", Some(mem)),
                                ("pages", pages),
                                ("threads", Some(b.threads.to_string())),
                            ],
                        ),
                        b.best_gbs * 1e9,
                    );
                }
                Record::Lat(l) => {
                    let (v, labels, delay) = lat_sample(l, &mut steps);
                    if let Some(delay) = delay {
                        self.spin.push(with(base, &labels), delay);
                    }
                    self.lat.push(with(base, &labels), v * 1e-9);
                }
                _ => {}
            }
        }
    }

    /// The run's headline metrics.
    fn add_headlines(&mut self, run: &LoadedRun, base: &[(String, String)]) {
        for (key, m) in metrics(&RunData::of(run)) {
            let name = match key {
                MetricKey::LocalBw | MetricKey::LocalLat => "local",
                MetricKey::GlobalBw => "global",
                MetricKey::InterleaveBw => "interleave",
                MetricKey::CrossBw => "cross_node",
                MetricKey::RemoteLat => "remote",
                MetricKey::LoadedLatPeak => "loaded_at_peak",
            };
            let labels = with(base, &[("metric", Some(name.into()))]);
            if key.higher_is_better() {
                self.head_bw.push(labels, m.value * 1e9);
            } else {
                self.head_lat.push(labels, m.value * 1e-9);
            }
        }
    }

    /// The run's machine and settings, as the labels of one sample.
    fn add_info(&mut self, run: &LoadedRun, base: &[(String, String)]) {
        let mi = &run.machine_info;
        let c = &run.config;
        fn setting<T: std::fmt::Display>(r: &Option<Reading<T>>) -> Option<String> {
            r.as_ref().and_then(Reading::text)
        }
        // Firmware facts are in the configuration today, in the machine
        // document in older runs.
        let system_model = mi.system_model.clone().or_else(|| mi.product_name.clone());
        let packages = match &mi.packages {
            Some(Count::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        self.info.push(
            with(
                base,
                &[
                    ("run_uuid", Some(run.summary.uuid.clone())),
                    ("label", Some(run.summary.label.clone().unwrap_or_default())),
                    ("config", Some(run.summary.config_hash.clone())),
                    ("model", Some(analysis::fleet::model_of(run))),
                    ("machine", Some(run.summary.machine_fingerprint.clone())),
                    ("cpu_model", mi.cpu_model().map(str::to_string)),
                    ("packages", packages),
                    ("cores", mi.cores.map(|n| n.to_string())),
                    ("mem_total_bytes", mi.mem_total_bytes.map(|n| n.to_string())),
                    ("system_model", system_model.or_else(|| setting(&c.product_name))),
                    ("bios_version", mi.bios_version.clone().or_else(|| setting(&c.bios_version))),
                    ("numa_mode", setting(&c.numa_mode)),
                    ("kernel", setting(&c.kernel)),
                    ("thp", setting(&c.thp_enabled).or_else(|| setting(&c.thp))),
                    ("governor", setting(&c.governor)),
                    ("smt", setting(&c.smt)),
                    ("boost", setting(&c.boost)),
                    ("numa_balancing", setting(&c.numa_balancing)),
                    ("memory_speed_mts", setting(&c.memory_speed_mts)),
                    ("dimm_population", setting(&c.dimm_population)),
                    ("cgroup_restriction", setting(&c.cgroup_restriction)),
                    ("status", Some(run.summary.status.to_string())),
                    ("version", Some(run.summary.tool_version.clone())),
                ],
            ),
            1.0,
        );
    }

    /// The exposition: each family with samples, then `# EOF`.
    fn text(&self) -> String {
        let mut out = String::new();
        for f in
            [&self.bw, &self.lat, &self.spin, &self.head_bw, &self.head_lat, &self.ts, &self.info]
        {
            if f.samples.is_empty() {
                continue;
            }
            let _ = writeln!(out, "# HELP {} {}", f.name, f.help);
            let _ = writeln!(out, "# TYPE {} gauge", f.name);
            if !f.unit.is_empty() {
                let _ = writeln!(out, "# UNIT {} {}", f.name, f.unit);
            }
            for (labels, v) in &f.samples {
                let l: Vec<String> =
                    labels.iter().map(|(k, v)| format!("{k}=\"{}\"", esc(v))).collect();
                let _ = writeln!(out, "{}{{{}}} {}", f.name, l.join(","), num(*v));
            }
        }
        out.push_str("# EOF\n");
        out
    }
}

/// One latency result's value (ns), labels and, for a loaded point under
/// load, its wait (spin iterations); `steps` numbers the loaded points of
/// each curve recorded before the nominal wait.
fn lat_sample(l: &Lat, steps: &mut BTreeMap<String, usize>) -> (f64, LatLabels, Option<f64>) {
    let n = |v: Option<u32>| v.map(|n| n.to_string());
    let mut delay = None;
    let (v, labels) = match l {
        Lat::Chase(c) => (
            c.median_ns,
            [
                ("mode", Some(c.mode.name().into())),
                ("cpu_node", n(c.cpu_node)),
                ("mem_node", n(c.mem_node)),
                ("pages", Some(c.page_size.clone())),
                ("size_bytes", Some(c.size_bytes.to_string())),
                ("cpu", Some(c.cpu.to_string())),
                ("load_kind", None),
                ("load", None),
                ("cpu_a", None),
                ("cpu_b", None),
            ],
        ),
        Lat::Loaded(p) => {
            let curve = format!(
                "{}/{}/{:?}/{}/{}/{}",
                p.mode.name(),
                p.cpu,
                p.mem_node,
                p.load_kind.name(),
                p.page_size,
                p.size_bytes
            );
            let step = steps.entry(curve).or_default();
            let load = match (p.idle, p.delay_ns) {
                (true, _) => "idle".to_string(),
                (false, Some(ns)) => format!("{ns:.0}"),
                (false, None) => format!("step{step}"),
            };
            *step += 1;
            let labels = [
                ("mode", Some(p.mode.name().into())),
                ("cpu_node", None),
                ("mem_node", n(p.mem_node)),
                ("pages", Some(p.page_size.clone())),
                ("size_bytes", Some(p.size_bytes.to_string())),
                ("cpu", Some(p.cpu.to_string())),
                ("load_kind", Some(p.load_kind.name().into())),
                ("load", Some(load)),
                ("cpu_a", None),
                ("cpu_b", None),
            ];
            if !p.idle {
                delay = Some(p.delay as f64);
            }
            (measured(p.median_ns).unwrap_or(p.latency_ns), labels)
        }
        Lat::C2c(c) => (
            c.median_ns,
            [
                ("mode", Some(c.mode.name().into())),
                ("cpu_node", None),
                ("mem_node", None),
                ("pages", None),
                ("size_bytes", None),
                ("cpu", None),
                ("load_kind", None),
                ("load", None),
                ("cpu_a", Some(c.cpu_a.to_string())),
                ("cpu_b", Some(c.cpu_b.to_string())),
            ],
        ),
    };
    (v, labels, delay)
}

/// Label names seen per family (for tests and docs).
pub fn label_names(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, rest)) = line.split_once('{') else { continue };
        let set = out.entry(name.to_string()).or_default();
        for part in rest.split("\",") {
            if let Some((k, _)) = part.split_once("=\"") {
                set.insert(k.trim_start_matches(',').to_string());
            }
        }
    }
    out
}

/// A run without a bandwidth or latency figure exports as its
/// `numaprobe_run_info` alone: say so, and name the latest run of the same
/// machine that has figures.
pub fn without_figures(db: &Store, runs: &[LoadedRun]) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    for run in runs.iter().filter(|r| !has_figures(r)) {
        let all = db.list_runs_for_machine(&run.summary.machine_fingerprint)?;
        let mut same: Vec<&store::RunSummary> =
            all.iter().filter(|s| s.id != run.summary.id && s.result_count > 0).collect();
        same.sort_by_key(|s| std::cmp::Reverse((store::util::time_order_key(&s.started), s.id)));
        let mut with = None;
        for s in same {
            if has_figures(&db.load_run(s.id)?) {
                with = Some(s.id);
                break;
            }
        }
        let what = if run.summary.result_count == 0 {
            "saved no result"
        } else {
            "holds no bandwidth or latency figure (an exec run?)"
        };
        out.push(format!(
            "run {} ({}) {what}: the export has only its numaprobe_run_info; {}",
            run.summary.id,
            run.summary.machine,
            match with {
                Some(id) => format!(
                    "the latest run of this machine with figures is {id} (`numaprobe export --format openmetrics {id}`)"
                ),
                None => "no run of this machine here has any".into(),
            }
        ));
    }
    Ok(out)
}

/// `dir/numaprobe.prom` could not be written.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot write", .0.display())]
pub struct TextfileError(pub std::path::PathBuf, #[source] pub std::io::Error);

/// Writes `text` to `dir/numaprobe.prom` atomically, as node_exporter's
/// textfile collector requires: a new file under a random name in the same
/// folder (`O_EXCL|O_NOFOLLOW`; its name does not end in `.prom`, so the
/// collector never reads it half written), synced, then renamed over the
/// old file. A symbolic link planted at either name is never followed.
pub fn write_textfile(
    dir: &std::path::Path,
    text: &str,
) -> Result<std::path::PathBuf, TextfileError> {
    topo::outfile::replace_atomically(dir, "numaprobe.prom", text.as_bytes(), 0o644)
        .map_err(|e| TextfileError(dir.join("numaprobe.prom"), e))
}

/// [`render`] as an exporter, with a warning per run that gave it no
/// figure ([`without_figures`]).
pub struct OpenMetrics;

impl super::Exporter for OpenMetrics {
    fn export(&self, db: &Store, ids: &[RunId]) -> Result<super::Exported, super::Error> {
        let runs = super::load(db, ids)?;
        let warnings = without_figures(db, &runs)?;
        Ok(super::Exported { bytes: render(&runs).into_bytes(), warnings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::{ExportDoc, RunId, RunSummary};

    const FIXTURE: &str = include_str!("../../tests/fixtures/synthetic-export.json");

    fn run() -> LoadedRun {
        let doc = ExportDoc::from_json(FIXTURE, "fixture").unwrap();
        let r = doc.runs[0].clone();
        LoadedRun {
            summary: RunSummary {
                id: RunId(1),
                uuid: r.uuid.clone(),
                label: Some("say \"hi\"\\n".into()),
                started: r.started.clone(),
                finished: r.finished.clone(),
                status: r.status,
                complete: true,
                message: None,
                machine: r.machine.description.clone(),
                machine_fingerprint: r.machine.fingerprint.clone(),
                config_hash: r.config_hash.clone(),
                tool_version: r.tool_version.clone(),
                command_line: r.command_line.clone(),
                result_count: r.results.len() as u64,
                imported: true,
            },
            machine_info: r.machine.info.clone(),
            config: r.config.clone(),
            topology: Default::default(),
            results: r.results.clone(),
        }
    }

    #[test]
    fn families_units_labels_and_eof() {
        let t = render(&[run()]);
        assert!(t.ends_with("# EOF\n"));
        assert!(t.contains("# TYPE numaprobe_bandwidth_bytes_per_second gauge\n# UNIT numaprobe_bandwidth_bytes_per_second bytes_per_second\n"));
        // triad on node 0: 101.3 GB/s in bytes per second.
        assert!(
            t.lines().any(|l| l.starts_with("numaprobe_bandwidth_bytes_per_second{mode=\"local\",stream_kernel=\"triad\",cpu_node=\"0\",mem_node=\"0\"")
                && l.ends_with(" 101300000000.0")),
            "{t}"
        );
        assert!(t.contains("numaprobe_headline_latency_seconds{metric=\"remote\""));
        assert!(t.contains("label=\"say \\\"hi\\\"\\\\n\""), "escaped label");
        let names = label_names(&t);
        // A series is its host and what it measures; the run is named on
        // run_info alone, so a new run continues the same series.
        for (f, set) in &names {
            assert!(set.contains("host"), "{f} lacks host");
            let per_run = ["run_uuid", "label", "config"].iter().all(|l| set.contains(*l));
            assert_eq!(per_run, f == "numaprobe_run_info", "{f}: {set:?}");
        }
        assert!(!names["numaprobe_bandwidth_bytes_per_second"].contains("kernel"));
        let info = &names["numaprobe_run_info"];
        for l in ["numa_mode", "kernel", "model", "machine"] {
            assert!(info.contains(l), "run_info lacks {l}");
        }
        // No family has two samples with one label set.
        let mut seen = BTreeSet::new();
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let (series, _) = l.rsplit_once(' ').unwrap();
            assert!(seen.insert(series.to_string()), "duplicate {series}");
        }
    }

    /// Two runs of one host: its latest alone (they would be one series);
    /// each of two hosts keeps its own.
    #[test]
    fn one_run_per_host_the_latest() {
        let old = run();
        let mut new = run();
        new.summary.id = RunId(2);
        new.summary.uuid = "new-run".into();
        new.summary.started = "2099-01-01T00:00:00Z".into();
        let t = render(&[new.clone(), old.clone()]);
        assert_eq!(t.matches("numaprobe_run_info{").count(), 1, "{t}");
        assert!(t.contains("run_uuid=\"new-run\""));
        let mut other = old.clone();
        other.machine_info.hostname = Some(Reading::Value("other-host".into()));
        let t = render(&[old, other, new]);
        assert_eq!(t.matches("numaprobe_run_info{").count(), 2);
        assert!(t.contains("host=\"other-host\"") && t.contains("run_uuid=\"new-run\""));
    }

    /// Two machines with one host name (clones) are two machines: each
    /// its run_info and its series, told apart by machine_id.
    #[test]
    fn clones_keep_a_run_each() {
        let mut a = run();
        a.machine_info.hostname = Some(Reading::Value("clone".into()));
        a.machine_info.machine_id = Some("aaaa000000000001".into());
        let mut b = a.clone();
        b.summary.id = RunId(2);
        b.summary.uuid = "other-clone".into();
        b.machine_info.machine_id = Some("bbbb000000000002".into());
        let t = render(&[a, b]);
        assert_eq!(t.matches("numaprobe_run_info{").count(), 2, "{t}");
        for id in ["aaaa000000000001", "bbbb000000000002"] {
            assert!(t.contains(&format!("host=\"clone\",machine_id=\"{id}\"}} 1.0")), "{t}");
        }
        let mut seen = BTreeSet::new();
        for l in t.lines().filter(|l| !l.starts_with('#')) {
            let (series, _) = l.rsplit_once(' ').unwrap();
            assert!(seen.insert(series.to_string()), "duplicate {series}");
        }
    }

    /// A loaded-latency point is labelled by its nominal load (`idle`, the
    /// wait asked in ns), never by the calibrated spin count, which is a
    /// sample of its own: two runs whose calibration differs write the
    /// same series.
    #[test]
    fn loaded_latency_series_do_not_change_with_the_calibration() {
        let series = |t: &str| -> BTreeSet<String> {
            t.lines()
                .filter(|l| !l.starts_with('#'))
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
                .collect()
        };
        // The fixture's points predate the nominal wait: each is its step.
        let old = render(&[run()]);
        assert!(old.contains("load=\"step1\""), "{old}");
        // As runs record them now: the idle point, then waits asked in ns,
        // converted to spins with the cost of one spin, calibrated per run.
        let calibrated = |ns_per_spin: f64| {
            let mut r = run();
            let mut i = 0;
            for x in &mut r.results {
                if let Record::Lat(l) = &mut x.record {
                    if let Lat::Loaded(p) = l.as_mut() {
                        p.idle = i == 0;
                        p.delay_ns = (i > 0).then(|| 2000.0 / i as f64);
                        p.delay = p.delay_ns.map_or(0, |ns| (ns / ns_per_spin).round() as u64);
                        i += 1;
                    }
                }
            }
            assert!(i > 2, "the fixture has loaded points");
            r
        };
        let (t1, t2) = (render(&[calibrated(0.99)]), render(&[calibrated(1.01)]));
        assert_eq!(series(&t1), series(&t2));
        let spins: Vec<u64> =
            [2000.0, 1000.0].iter().map(|ns| (ns / 1.01_f64).round() as u64).collect();
        assert!(t1.contains("load=\"idle\"") && t1.contains("load=\"2000\""), "{t1}");
        assert!(!t1.contains("delay=\""), "{t1}");
        let spin = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.starts_with("numaprobe_loaded_latency_delay_iterations{"))
                .map(|l| l.rsplit_once(' ').unwrap().1.to_string())
                .collect()
        };
        assert_ne!(spin(&t1), spin(&t2), "the calibrated delay is carried as a value");
        for n in spins {
            assert!(spin(&t2).contains(&format!("{n}.0")), "{n}: {t2}");
        }
    }

    #[test]
    fn rfc3339_to_unix() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(unix_seconds("2026-11-02T11:00:02.500Z"), Some(1_793_617_202.5));
        assert_eq!(unix_seconds("2000-02-29T00:00:00Z"), Some(951_782_400.0));
        assert_eq!(unix_seconds("yesterday"), None);
    }

    /// A symbolic link planted under the temporary file's name must not
    /// send the metrics into its target: the temporary file is created
    /// anew, never opened through whatever is there.
    #[test]
    fn textfile_never_writes_through_a_planted_symlink() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious\n").unwrap();
        let planted = d.path().join(format!(".numaprobe.prom.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        std::os::unix::fs::symlink(&victim, d.path().join("numaprobe.prom")).unwrap();
        let t = write_textfile(d.path(), "numaprobe_up 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert_eq!(std::fs::read_to_string(&t).unwrap(), "numaprobe_up 1\n");
        assert!(!std::fs::symlink_metadata(&t).unwrap().file_type().is_symlink());
    }
}
