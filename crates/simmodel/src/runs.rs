//! The model's runs, written as `numaprobe run` stores them: every step
//! the run's plan holds on the setting's topology (crates/bench's
//! `SuitePlan::for_topology`, docs/cli.md), each result a
//! `results::Record` in the order the plan measures it, the run's
//! topology, configuration and machine documents, and the export
//! document (`numaprobe export`, docs/store.md) they travel in.
//!
//! Each figure comes from [`crate::physics`] for what the step measures
//! (which CPUs, which memory, alone or together), then takes the run's
//! noise: a state the machine drifts through from run to run (warm-up,
//! a linear trend, a random walk) that every figure of a run shares, the
//! run's own shift, each figure's own scatter, and, where asked, one
//! disturbed run far off the others.

use std::collections::BTreeMap;

use kernels::{Isa, Kernel};
use results::bw::{ArrayPolicy, BwResult, Mode as BwMode, Stores};
use results::context::RunTopology;
use results::disturbance::{Disturbance, Source};
use results::lat::{
    self, C2cResult, CacheMark, CpuGroup, LatResult, LatSummary, LoadKind, LoadedPoint,
    LoadedSummary, Mode as LatMode, PerCpuSummary, Plateau, PrefetchCheck, Relation, SweepSummary,
};
use results::pages::PageKind;
use results::placement::{Placement, PlacementCheck, SpreadCheck};
use results::run::{LoadedRun, RunId, RunStatus, RunSummary, StoredRecord};
use results::scope::{MemoryOf, Scope, ScopePolicy, StepNote, StepStatus};
use results::Record;
use serde_json::{json, Value};
use topo::{CpuSet, NodeSet};

use crate::facts::{Machine, Setting};
use crate::physics::{Spread, Team};
use crate::rng::Rng;
use crate::view::View;

/// How long `run` measures (`--quick` or the default budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Quick,
    Default,
}

impl Budget {
    pub fn name(self) -> &'static str {
        match self {
            Budget::Quick => "quick",
            Budget::Default => "default",
        }
    }

    fn kernels(self) -> &'static [Kernel] {
        match self {
            Budget::Quick => &[Kernel::Triad],
            Budget::Default => &[Kernel::Copy, Kernel::Scale, Kernel::Add, Kernel::Triad],
        }
    }
}

/// The disturbed run of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// Its place in time order (0: the first run of the study).
    pub run: usize,
    /// What it loses: bandwidth x (1 - loss), latency x (1 + loss).
    pub loss: f64,
    /// Whether its records say so (`stable: false`, a disturbance); a
    /// neighbour the run could not see leaves them clean.
    pub flagged: bool,
}

/// Run-to-run variation, relative (0.01 = 1%).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// The run's own shift, shared by every figure of the run (standard
    /// deviation).
    pub run_sd: f64,
    /// Each bandwidth figure's own scatter from run to run.
    pub bw_sd: f64,
    /// Each latency figure's own scatter from run to run.
    pub lat_sd: f64,
    /// The first run's shortfall (a machine warming up); it halves with
    /// each run.
    pub warmup: f64,
    /// The machine's state moves by this per run (linear drift).
    pub drift: f64,
    /// And by a random walk of this step (standard deviation).
    pub walk_sd: f64,
    pub outlier: Option<Outlier>,
}

impl Noise {
    /// No variation at all: every run at the model's figures.
    pub fn none() -> Noise {
        Noise {
            run_sd: 0.0,
            bw_sd: 0.0,
            lat_sd: 0.0,
            warmup: 0.0,
            drift: 0.0,
            walk_sd: 0.0,
            outlier: None,
        }
    }

    /// Typical of a quiet server: 1% on bandwidth, 0.5% on latency.
    pub fn quiet() -> Noise {
        Noise { run_sd: 0.0, bw_sd: 0.01, lat_sd: 0.005, ..Noise::none() }
    }

    /// The spread of one bandwidth figure from run to run, relative: the
    /// run's shift and the figure's own scatter together.
    pub fn bw_total(&self) -> f64 {
        (self.run_sd * self.run_sd + self.bw_sd * self.bw_sd).sqrt()
    }

    /// The same for a latency figure (the run's shift moves latency half
    /// as much as bandwidth).
    pub fn lat_total(&self) -> f64 {
        (0.25 * self.run_sd * self.run_sd + self.lat_sd * self.lat_sd).sqrt()
    }

    /// What the machine's state moves per run (relative): the drift, a
    /// random-walk step and half the warm-up.
    pub fn state_per_run(&self) -> f64 {
        self.drift.abs() + self.walk_sd + self.warmup / 2.0
    }
}

/// A settings study on one machine: runs of each setting, alternated.
#[derive(Debug, Clone)]
pub struct Study {
    pub machine: Machine,
    pub settings: Vec<Setting>,
    /// One label per setting (the group a study compares).
    pub labels: Vec<String>,
    pub runs_per_setting: usize,
    pub budget: Budget,
    pub noise: Noise,
    /// The kernel has weighted interleave (Linux 6.9+): `bw-weighted`.
    pub weighted_interleave: bool,
    /// `run --only STEPS`: the steps kept (every step when `None`).
    pub only: Option<Vec<&'static str>>,
    /// Whether `run` measures at package scope (`bw-package`,
    /// `bw-cross-package`, `lat-package`); `false` writes runs as a
    /// numaprobe before those steps stored them (7262f9f and older).
    pub scope_steps: bool,
    pub seed: u64,
}

impl Study {
    /// A study of `settings` labelled by their names.
    pub fn new(machine: Machine, settings: Vec<Setting>, runs: usize, seed: u64) -> Study {
        let labels = settings.iter().map(|s| s.label(&machine)).collect();
        Study {
            machine,
            settings,
            labels,
            runs_per_setting: runs,
            budget: Budget::Quick,
            noise: Noise::quiet(),
            weighted_interleave: false,
            only: None,
            scope_steps: true,
            seed,
        }
    }

    /// The order runs are taken in: rounds alternate forwards and
    /// backwards (A B, B A, A B...: `study --vary`'s order, so that a
    /// drift falls on every setting alike). Indices into `settings`.
    pub fn order(&self) -> Vec<usize> {
        let k = self.settings.len();
        (0..self.runs_per_setting)
            .flat_map(|r| (0..k).map(move |i| if r % 2 == 0 { i } else { k - 1 - i }))
            .collect()
    }

    /// Every run of the study, in time order, ids from 1 (as an import
    /// into an empty database numbers them).
    pub fn runs(&self) -> Vec<LoadedRun> {
        let mut rng = Rng::new(self.seed);
        let views: Vec<View> = self.settings.iter().map(|s| View::new(&self.machine, *s)).collect();
        let n = self.noise;
        let mut walk = 0.0;
        self.order()
            .into_iter()
            .enumerate()
            .map(|(t, si)| {
                walk += n.walk_sd * rng.normal();
                let mut state = n.warmup * 0.5f64.powi(t as i32)
                    + n.drift * t as f64
                    + walk
                    + n.run_sd * rng.normal();
                let disturbed = n.outlier.filter(|o| o.run == t);
                if let Some(o) = disturbed {
                    state += -(1.0 - o.loss).ln();
                }
                let mut w = Writer {
                    view: &views[si],
                    rng: &mut rng,
                    noise: n,
                    state,
                    flagged: disturbed.is_some_and(|o| o.flagged),
                    budget: self.budget,
                    records: Vec::new(),
                    tags: Vec::new(),
                    current: "",
                    scope_steps: self.scope_steps,
                };
                w.all_steps(self.weighted_interleave);
                let records = w.kept(self.only.as_deref());
                self.stored_run(t, &views[si], &self.labels[si], records)
            })
            .collect()
    }

    fn stored_run(&self, t: usize, view: &View, label: &str, records: Vec<Record>) -> LoadedRun {
        let topo = view.topology();
        let config = view.configuration(&topo, self.budget.name());
        let machine = view.machine_doc();
        // Runs 20 minutes apart from 2026-12-01T08:00Z; each result a
        // second after the last.
        let start = 1_796_112_000 + 1200 * t as i64;
        let stamp = |s: i64| results::time::format_utc(s, 0);
        let results: Vec<StoredRecord> = records
            .into_iter()
            .enumerate()
            .map(|(i, record)| StoredRecord {
                seq: i as u32 + 1,
                recorded: stamp(start + 1 + i as i64),
                record,
                as_stored: None,
            })
            .collect();
        let declared: Vec<String> =
            view.declared().iter().map(|(k, v)| format!(" --set {k}={v}")).collect();
        let budget = match self.budget {
            Budget::Quick => " --quick",
            Budget::Default => "",
        };
        LoadedRun {
            summary: RunSummary {
                id: RunId(t as i64 + 1),
                uuid: format!("5e0de100-{:04x}-4000-8000-{:012x}", self.seed & 0xffff, t + 1),
                label: Some(label.to_string()),
                started: stamp(start),
                finished: Some(stamp(start + 1 + results.len() as i64)),
                status: RunStatus::Complete,
                complete: true,
                message: None,
                machine: machine.description.clone().unwrap_or_default(),
                machine_fingerprint: machine.fingerprint.clone().unwrap_or_default(),
                config_hash: config.fingerprint.clone().unwrap_or_default(),
                tool_version: "0.1.0".into(),
                command_line: format!(
                    "numaprobe run{budget} --label '{label}'{}",
                    declared.join("")
                ),
                result_count: results.len() as u64,
                imported: true,
            },
            machine_info: machine,
            config,
            topology: RunTopology::of(&topo),
            results,
        }
    }
}

/// The export document (`numaprobe export`, version 1) of `runs`.
pub fn export(runs: &[LoadedRun]) -> Value {
    let runs: Vec<Value> = runs
        .iter()
        .map(|r| {
            let s = &r.summary;
            json!({
                "uuid": s.uuid, "source_id": s.id.0, "label": s.label,
                "command_line": s.command_line, "tool_version": s.tool_version,
                "started": s.started, "finished": s.finished, "status": s.status,
                "message": s.message,
                "machine": {"fingerprint": s.machine_fingerprint, "description": s.machine,
                            "info": r.machine_info},
                "config_hash": s.config_hash, "config": r.config, "topology": r.topology,
                "results": r.results,
            })
        })
        .collect();
    json!({"format": "numaprobe-export", "version": 1,
           "exported": "2026-12-02T08:00:00.000Z", "runs": runs})
}

/// Writes one run's records.
struct Writer<'a> {
    view: &'a View,
    rng: &'a mut Rng,
    noise: Noise,
    /// The machine's state this run (positive: slower).
    state: f64,
    /// This run is the disturbed one and its records say so.
    flagged: bool,
    budget: Budget,
    records: Vec<Record>,
    /// The step of each record written so far (filled by [`Writer::begin`]).
    tags: Vec<&'static str>,
    /// The step being written.
    current: &'static str,
    /// The package-scope steps are part of `run`.
    scope_steps: bool,
}

/// The package-scope steps, whose absence a run stores with why.
const SCOPE_STEPS: [&str; 3] = ["bw-package", "bw-cross-package", "lat-package"];

/// Bandwidth of each STREAM kernel against triad's (copy and scale move
/// two arrays' worth of counted bytes per three touched with
/// non-temporal stores; add and triad three).
fn kernel_factor(k: Kernel) -> f64 {
    match k {
        Kernel::Copy | Kernel::Scale => 0.97,
        _ => 1.0,
    }
}

fn nodes(ids: impl IntoIterator<Item = u32>) -> NodeSet {
    ids.into_iter().collect()
}

fn cpus(ids: &[u32]) -> CpuSet {
    ids.iter().copied().collect()
}

/// A placement verified on `expected` (an even spread over them when
/// `spread`).
fn verified(expected: &NodeSet, spread: bool) -> Placement {
    let k = expected.len().max(1) as f64;
    let per_node: BTreeMap<u32, f64> = expected.iter().map(|n| (n, 1.0 / k)).collect();
    Placement::of_check(PlacementCheck {
        expected: expected.clone(),
        fraction: 1.0,
        per_node: per_node.clone(),
        sampled_pages: 4096,
        total_pages: 131_072,
        not_present_pages: 0,
        threshold: 0.99,
        ok: true,
        spread: spread.then_some(SpreadCheck {
            expected_share: per_node,
            max_deviation: 0.004,
            tolerance: 0.05,
            ok: true,
        }),
    })
}

impl Writer<'_> {
    fn machine(&self) -> &Machine {
        self.view.machine()
    }

    /// Starts step `name` (`run --only`'s names): the records written
    /// since the last call were the last step's.
    fn begin(&mut self, name: &'static str) {
        let last = self.current;
        self.tags.resize(self.records.len(), last);
        self.current = name;
    }

    /// The records `run --only` keeps, with the notes of the
    /// package-scope steps it left out (after those the machine cannot
    /// run), as `run` stores them.
    fn kept(&mut self, only: Option<&[&'static str]>) -> Vec<Record> {
        self.begin("");
        let records = std::mem::take(&mut self.records);
        let tags = std::mem::take(&mut self.tags);
        let Some(only) = only else { return records };
        let mut notes: Vec<Record> = Vec::new();
        let mut kept = Vec::new();
        let mut left_out: Vec<&str> = Vec::new();
        for (tag, r) in tags.into_iter().zip(records) {
            let scope = SCOPE_STEPS.contains(&tag);
            match (&r, only.contains(&tag)) {
                (Record::Step(_), _) => notes.push(r),
                (_, true) => kept.push(r),
                (_, false) if scope && self.machine().packages > 1 && !left_out.contains(&tag) => {
                    left_out.push(tag)
                }
                _ => {}
            }
        }
        // The notes of steps `--only` keeps first, then the steps it left
        // out, then the notes of those (`SuitePlan::select`'s order).
        let named = |r: &Record, inside: bool| match r {
            Record::Step(s) => only.contains(&s.step.as_str()) == inside,
            _ => false,
        };
        let mut out: Vec<Record> = notes.iter().filter(|r| named(r, true)).cloned().collect();
        out.extend(left_out.into_iter().map(|step| {
            Record::Step(Box::new(StepNote {
                step: step.into(),
                status: StepStatus::Skipped,
                reason: "left out by --only".into(),
            }))
        }));
        out.extend(notes.into_iter().filter(|r| named(r, false)));
        out.extend(kept);
        out
    }

    /// A bandwidth figure as this run measures it.
    fn bw_figure(&mut self, truth: f64) -> f64 {
        truth * (-self.state + self.noise.bw_sd * self.rng.normal()).exp()
    }

    /// A latency figure as this run measures it.
    fn lat_figure(&mut self, truth: f64) -> f64 {
        truth * (0.5 * self.state + self.noise.lat_sd * self.rng.normal()).exp()
    }

    fn disturbance(&self, cpu: u32) -> Option<Disturbance> {
        Some(if self.flagged {
            Disturbance {
                clean: 3,
                disturbed: 8,
                lost_pct: 38.0,
                busiest_cpu: Some(cpu),
                involuntary_switches: 420,
                migrations: 2,
                source: Source::RunDelay,
            }
        } else {
            Disturbance {
                clean: 11,
                disturbed: 0,
                lost_pct: 0.2,
                busiest_cpu: None,
                involuntary_switches: 1,
                migrations: 0,
                source: Source::RunDelay,
            }
        })
    }

    fn llc_for(&self, cpu_list: &[u32]) -> u64 {
        let m = self.machine();
        let pkgs: std::collections::BTreeSet<u32> =
            cpu_list.iter().map(|&c| self.view.package_of_cpu(c)).collect();
        m.llc_per_package_bytes * pkgs.len().max(1) as u64
    }

    /// One bandwidth result.
    #[allow(clippy::too_many_arguments)]
    fn bw(
        &mut self,
        mode: BwMode,
        kernel: Kernel,
        team_cpus: &[u32],
        cpu_node: Option<u32>,
        mem_node: Option<u32>,
        mem_nodes: NodeSet,
        policy: ArrayPolicy,
        truth_gbs: f64,
    ) {
        let best = self.bw_figure(truth_gbs * kernel_factor(kernel));
        let median = best * (1.0 - (0.004 * self.rng.normal()).abs() - 0.003);
        let min = median * 0.985;
        let llc = self.llc_for(team_cpus);
        let array_bytes = 4 * llc;
        let arrays = if matches!(kernel, Kernel::Copy | Kernel::Scale) { 2 } else { 3 };
        let bytes_per_rep = array_bytes * arrays as u64;
        let spread = matches!(policy, ArrayPolicy::Interleave | ArrayPolicy::WeightedInterleave);
        let first = team_cpus.first().copied().unwrap_or(0);
        let disturbance = self.disturbance(first);
        self.records.push(Record::Bw(Box::new(BwResult {
            mode,
            kernel,
            threads: team_cpus.len(),
            cpus: cpus(team_cpus),
            cpu_node,
            mem_node,
            placement: verified(&mem_nodes, spread),
            mem_nodes,
            policy,
            array_bytes,
            arrays,
            bytes_per_rep,
            best_gbs: best,
            median_gbs: median,
            min_gbs: min,
            max_gbs: best,
            mean_gbs: median,
            spread_pct: (best - min) / median * 100.0,
            top_spread_pct: 0.4,
            stable: !self.flagged,
            reps: match self.budget {
                Budget::Quick => 6,
                Budget::Default => 8,
            },
            median_rep_s: bytes_per_rep as f64 / (median * 1e9),
            isa: Isa::Avx512,
            stores: Stores::Nt,
            pages: PageKind::Thp,
            llc_bytes: Some(llc),
            size_rule_ok: true,
            peak_gbs: None,
            peak_fraction: None,
            validated: true,
            interrupted: false,
            counters: None,
            power: None,
            disturbance,
            scope: None,
        })));
    }

    /// One chase result.
    fn chase(&mut self, mode: LatMode, cpu: u32, mem: Option<u32>, size: u64, truth_ns: f64) {
        let ns = self.lat_figure(truth_ns);
        let noise_pct = 0.6 + 0.2 * self.rng.uniform();
        let placement = verified(&nodes(mem.or(Some(0))), false);
        let disturbance = self.disturbance(cpu);
        self.records.push(Record::Lat(Box::new(lat::Lat::Chase(LatResult {
            mode,
            size_bytes: size,
            cpu,
            cpu_node: Some(self.view.node_of(cpu)),
            mem_node: mem,
            median_ns: ns,
            p50_ns: ns,
            p90_ns: ns * 1.03,
            p99_ns: ns * 1.08,
            min_ns: ns * 0.98,
            max_ns: ns * 1.1,
            spread_pct: 12.0,
            noise_pct,
            samples: 11,
            loads_per_sample: 100_000,
            stride_bytes: 256,
            tlb_group_bytes: 262_144,
            page_size: "4k".into(),
            placement,
            counters: None,
            histogram: None,
            stable: !self.flagged,
            disturbance,
            min_loads_per_sample: None,
            interleave: None,
            scope: None,
        }))));
    }

    fn lat_size(&self) -> u64 {
        match self.budget {
            Budget::Quick => 512 << 20,
            Budget::Default => 1 << 30,
        }
    }

    /// Every step of the plan, in its order.
    fn all_steps(&mut self, weighted_interleave: bool) {
        let v = self.view;
        self.begin("notes");
        self.skipped_scope_steps();
        self.begin("bw-local");
        let kernels = self.budget.kernels();
        let node_ids: Vec<u32> = v.nodes.iter().map(|n| n.id).collect();
        let multi = v.nodes.len() > 1;
        // bw-local: each node's CPUs on its own memory, alone.
        for n in &v.nodes {
            let mem = v.memory_of(n.id);
            let gbs = v.hw.together(&v.teams(&n.cpus, &mem));
            for &k in kernels {
                self.bw(
                    BwMode::Local,
                    k,
                    &n.cpus,
                    Some(n.id),
                    Some(n.id),
                    nodes([n.id]),
                    ArrayPolicy::Bind,
                    gbs,
                );
            }
        }
        // bw-matrix: every CPU node on every memory node, one cell at a
        // time while the rest of the machine idles.
        self.begin("bw-matrix");
        if multi {
            for c in &v.nodes {
                for m in &v.nodes {
                    let gbs = v.hw.together(&v.teams(&c.cpus, &v.memory_of(m.id)));
                    self.bw(
                        BwMode::Matrix,
                        Kernel::Triad,
                        &c.cpus,
                        Some(c.id),
                        Some(m.id),
                        nodes([m.id]),
                        ArrayPolicy::Bind,
                        gbs,
                    );
                }
            }
        }
        // bw-global: every node's CPUs on their own node's memory, all at
        // once.
        let all_cpus: Vec<u32> = v.nodes.iter().flat_map(|n| n.cpus.clone()).collect();
        let global: Vec<Team> =
            v.nodes.iter().flat_map(|n| v.teams(&n.cpus, &v.memory_of(n.id))).collect();
        let global_gbs = v.hw.together(&global);
        self.begin("bw-global");
        for &k in kernels {
            self.bw(
                BwMode::Global,
                k,
                &all_cpus,
                None,
                None,
                nodes(node_ids.clone()),
                ArrayPolicy::LocalPerThread,
                global_gbs,
            );
        }
        // bw-interleave (and bw-weighted): every CPU, pages over every
        // node.
        self.begin("bw-interleave");
        if multi {
            let il = v.hw.together(&v.teams(&all_cpus, &v.interleaved()));
            for &k in kernels {
                self.bw(
                    BwMode::Interleave,
                    k,
                    &all_cpus,
                    None,
                    None,
                    nodes(node_ids.clone()),
                    ArrayPolicy::Interleave,
                    il,
                );
            }
            self.begin("bw-weighted");
            if weighted_interleave {
                for &k in kernels {
                    self.bw(
                        BwMode::Weighted,
                        k,
                        &all_cpus,
                        None,
                        None,
                        nodes(node_ids.clone()),
                        ArrayPolicy::WeightedInterleave,
                        il,
                    );
                }
            }
        }
        self.package_bandwidth();
        // bw-scaling: 1..N threads of the first node on its memory.
        self.begin("bw-scaling");
        let first = &v.nodes[0];
        let mem0 = v.memory_of(first.id);
        for k in scaling_counts(first.cpus.len()) {
            let team = &first.cpus[..k];
            let gbs = v.hw.together(&v.teams(team, &mem0));
            self.bw(
                BwMode::Scaling,
                Kernel::Triad,
                team,
                Some(first.id),
                Some(first.id),
                nodes([first.id]),
                ArrayPolicy::Bind,
                gbs,
            );
        }
        self.latency_steps();
    }

    /// The packages' CPUs, and whether the OS shows one node for them
    /// all (NUMA off: no page can be kept on one package).
    fn package_cpus(&self, p: u32) -> Vec<u32> {
        let c = self.machine().cores_per_package;
        (p * c..(p + 1) * c).collect()
    }

    fn numa_off(&self) -> bool {
        self.view.nodes.len() == 1
    }

    /// The OS nodes holding package `p`'s memory (its DRAM nodes).
    fn dram(&self, p: u32) -> Vec<u32> {
        let v = self.view;
        v.nodes.iter().filter(|n| v.package_of_cpu(n.cpus[0]) == p).map(|n| n.id).collect()
    }

    /// On two or more packages under NUMA off, the package-scope steps
    /// that cannot run, stored first with why (kind `step`).
    fn skipped_scope_steps(&mut self) {
        let m = self.machine();
        if m.packages < 2 || !self.numa_off() || !self.scope_steps {
            return;
        }
        let reason = |q: u32| {
            format!(
                "NUMA off: node(s) 0 hold several packages' CPUs, so no page can \
                 be placed on package {q}'s memory"
            )
        };
        let pairs: Vec<(u32, u32)> = (0..m.packages)
            .flat_map(|p| (0..m.packages).filter(move |&q| q != p).map(move |q| (p, q)))
            .collect();
        let mut notes: Vec<StepNote> = Vec::new();
        for step in ["bw-cross-package", "lat-package"] {
            for &(_, q) in &pairs {
                let n =
                    StepNote { step: step.into(), status: StepStatus::Skipped, reason: reason(q) };
                if step == "bw-cross-package" || !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
        self.records.extend(notes.into_iter().map(|n| Record::Step(Box::new(n))));
    }

    /// The scope of a package figure.
    fn scope(&self, p: u32, q: u32, policy: ScopePolicy, cpus_run: &[u32], mem: &[u32]) -> Scope {
        Scope {
            package: p,
            memory: if p == q { MemoryOf::OwnPackage } else { MemoryOf::OtherPackage },
            mem_package: q,
            policy,
            cpus: cpus(cpus_run),
            cpu_nodes: nodes(cpus_run.iter().map(|&c| self.view.node_of(c))),
            mem_nodes: nodes(mem.iter().copied()),
        }
    }

    /// bw-package and bw-cross-package (two or more packages): each
    /// package's CPUs all at once on its own memory, bound per node and
    /// interleaved, then on each other package's memory interleaved; the
    /// rest of the machine idles.
    fn package_bandwidth(&mut self) {
        let v = self.view;
        let m = self.machine().clone();
        if m.packages < 2 || !self.scope_steps {
            return;
        }
        self.begin("bw-package");
        for p in 0..m.packages {
            let list = self.package_cpus(p);
            if self.numa_off() {
                let gbs = v.hw.together(&v.teams(&list, &v.memory_of(0)));
                self.package_bw(p, p, ScopePolicy::OsGiven, &list, &[0], gbs);
                continue;
            }
            let dram = self.dram(p);
            let bound: Vec<Team> = dram
                .iter()
                .flat_map(|&n| {
                    let on: Vec<u32> =
                        list.iter().copied().filter(|&c| v.node_of(c) == n).collect();
                    v.teams(&on, &v.memory_of(n))
                })
                .collect();
            let gbs = v.hw.together(&bound);
            self.package_bw(p, p, ScopePolicy::BindPerNode, &list, &dram, gbs);
            let mem = v.hw.even(dram.iter().map(|&n| v.memory_of(n)[0].0));
            let gbs = v.hw.together(&v.teams(&list, &mem));
            self.package_bw(p, p, ScopePolicy::Interleave, &list, &dram, gbs);
        }
        if self.numa_off() {
            return;
        }
        self.begin("bw-cross-package");
        for p in 0..m.packages {
            let list = self.package_cpus(p);
            for q in (0..m.packages).filter(|&q| q != p) {
                let dram = self.dram(q);
                let mem = v.hw.even(dram.iter().map(|&n| v.memory_of(n)[0].0));
                let gbs = v.hw.together(&v.teams(&list, &mem));
                self.package_bw(p, q, ScopePolicy::Interleave, &list, &dram, gbs);
            }
        }
    }

    /// One package-scope bandwidth result: package `p`'s CPUs `list` on
    /// package `q`'s nodes `mem` placed by `policy`.
    fn package_bw(
        &mut self,
        p: u32,
        q: u32,
        policy: ScopePolicy,
        list: &[u32],
        mem: &[u32],
        gbs: f64,
    ) {
        let os_nodes: std::collections::BTreeSet<u32> =
            list.iter().map(|&c| self.view.node_of(c)).collect();
        let cpu_node = (os_nodes.len() == 1).then(|| *os_nodes.iter().next().expect("one"));
        let (mem_node, array_policy) = match policy {
            ScopePolicy::OsGiven => (Some(0), ArrayPolicy::Bind),
            ScopePolicy::BindPerNode => (None, ArrayPolicy::LocalPerThread),
            ScopePolicy::Interleave => (None, ArrayPolicy::Interleave),
        };
        let scope = self.scope(p, q, policy, list, mem);
        let set = nodes(mem.iter().copied());
        self.bw(BwMode::Package, Kernel::Triad, list, cpu_node, mem_node, set, array_policy, gbs);
        self.set_scope(scope);
    }

    /// Sets the scope of the record just written.
    fn set_scope(&mut self, scope: Scope) {
        match self.records.last_mut() {
            Some(Record::Bw(b)) => b.scope = Some(scope),
            Some(Record::Lat(l)) => {
                if let lat::Lat::Chase(c) = l.as_mut() {
                    c.scope = Some(scope);
                }
            }
            _ => {}
        }
    }

    /// lat-package (two or more packages): from each package's first CPU
    /// through memory interleaved over its own package's nodes, then over
    /// each other package's.
    fn package_latency(&mut self) {
        let v = self.view;
        let m = self.machine().clone();
        if m.packages < 2 || !self.scope_steps {
            return;
        }
        let size = self.lat_size();
        self.begin("lat-package");
        for p in 0..m.packages {
            let cpu = self.package_cpus(p)[0];
            let targets: Vec<u32> = if self.numa_off() {
                vec![p]
            } else {
                (0..m.packages).filter(|&q| q != p).collect()
            };
            for q in std::iter::once(p).chain(targets.into_iter().filter(|&q| q != p)) {
                let (dram, mem, policy) = if self.numa_off() {
                    (vec![0], v.memory_of(0), ScopePolicy::OsGiven)
                } else {
                    let dram = self.dram(q);
                    let mem = v.hw.even(dram.iter().map(|&n| v.memory_of(n)[0].0));
                    (dram, mem, ScopePolicy::Interleave)
                };
                let ns = v.latency(cpu, &mem);
                self.chase(LatMode::Package, cpu, None, size, ns);
                let scope = self.scope(p, q, policy, &[cpu], &dram);
                if let Some(Record::Lat(l)) = self.records.last_mut() {
                    if let lat::Lat::Chase(c) = l.as_mut() {
                        let set = nodes(dram.iter().copied());
                        c.placement = verified(&set, set.len() > 1);
                        c.interleave = Some(set);
                        c.scope = Some(scope);
                    }
                }
            }
        }
    }

    fn latency_steps(&mut self) {
        let v = self.view;
        let size = self.lat_size();
        // lat-matrix: the first CPU of each node to each node's memory.
        self.begin("lat-matrix");
        for c in &v.nodes {
            for m in &v.nodes {
                let cpu = c.cpus[0];
                let ns = v.latency(cpu, &v.memory_of(m.id));
                self.chase(LatMode::Matrix, cpu, Some(m.id), size, ns);
            }
        }
        // lat-interleave: the first CPU to memory interleaved over the
        // nodes with CPUs and memory (two or more of them).
        self.begin("lat-interleave");
        if v.nodes.len() > 1 {
            let ns = v.latency(0, &v.interleaved());
            self.chase(LatMode::Point, 0, None, size, ns);
            if let Some(Record::Lat(l)) = self.records.last_mut() {
                if let lat::Lat::Chase(c) = l.as_mut() {
                    let all = nodes(v.nodes.iter().map(|n| n.id));
                    c.placement = verified(&all, true);
                    c.interleave = Some(all);
                }
            }
        }
        self.package_latency();
        self.begin("lat-sweep");
        self.sweep();
        self.begin("lat-prefetch");
        self.prefetch();
        self.begin("lat-per-cpu");
        self.per_cpu();
        if self.machine().cpus() > 1 {
            self.begin("lat-loaded");
            self.loaded();
            self.begin("lat-c2c");
            self.c2c();
        }
    }

    /// lat-sweep: working sets from 4 KiB to past the LLC on the first
    /// CPU: the caches' plateaus, then DRAM.
    fn sweep(&mut self) {
        let v = self.view;
        let m = self.machine().clone();
        let llc = m.llc_per_package_bytes;
        let dram = v.latency(0, &v.memory_of(0));
        let (l1, l2, l3) = (48u64 << 10, 2u64 << 20, llc);
        let l3_ns = match m.family.vendor() {
            topo::Vendor::Amd => 13.0,
            _ => 24.0,
        };
        let mut size = 4096u64;
        let mut points: Vec<(u64, f64)> = Vec::new();
        while size <= 8 * llc {
            let ns = if size <= l1 {
                1.3
            } else if size <= l2 {
                4.4
            } else if size <= l3 {
                l3_ns
            } else {
                let f = l3 as f64 / size as f64;
                dram * (1.0 - f) + l3_ns * f
            };
            points.push((size, ns));
            size *= 2;
        }
        let mut measured = Vec::new();
        for (s, ns) in points {
            let stride = if s <= l3 { 64 } else { 256 };
            self.chase(LatMode::Sweep, 0, Some(0), s, ns);
            if let Some(Record::Lat(l)) = self.records.last_mut() {
                if let lat::Lat::Chase(c) = l.as_mut() {
                    c.stride_bytes = stride;
                    measured.push((s, c.median_ns));
                }
            }
        }
        let plateau = |label: &str, lo: u64, hi: u64, cache: Option<u64>| {
            let pts: Vec<f64> =
                measured.iter().filter(|(s, _)| *s >= lo && *s <= hi).map(|p| p.1).collect();
            let mut sorted = pts.clone();
            sorted.sort_by(f64::total_cmp);
            Plateau {
                label: label.into(),
                from_bytes: lo,
                to_bytes: hi,
                latency_ns: sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN),
                cache_bytes: cache,
                points: pts.len(),
            }
        };
        let plateaus = vec![
            plateau("L1", 4096, l1 / 2, Some(l1)),
            plateau("L2", l1 * 2, l2 / 2, Some(l2)),
            plateau("L3", l2 * 2, l3 / 2, Some(l3)),
            plateau("DRAM", l3 * 4, 8 * l3, None),
        ];
        self.records.push(Record::LatSummary(Box::new(LatSummary::Sweep(SweepSummary {
            mode: LatMode::Sweep,
            cpu: 0,
            mem_node: Some(0),
            caches: vec![
                CacheMark { level: 1, size_bytes: l1 },
                CacheMark { level: 2, size_bytes: l2 },
                CacheMark { level: 3, size_bytes: l3 },
            ],
            plateaus,
        }))));
    }

    /// lat-prefetch: the same memory at a 64 B and a 256 B stride.
    fn prefetch(&mut self) {
        let v = self.view;
        let dram = v.latency(0, &v.memory_of(0));
        let stride = self.lat_figure(dram);
        let line = self.lat_figure(dram * 0.62);
        let mut check = PrefetchCheck::judge(
            0,
            Some(0),
            self.lat_size(),
            "4k".into(),
            256,
            (line, line * 0.01),
            (stride, stride * 0.01),
        );
        if self.flagged {
            let d = self.disturbance(0).expect("a disturbance");
            check = check.with_disturbance(d, false);
        }
        self.records.push(Record::LatSummary(Box::new(LatSummary::PrefetchCheck(check))));
    }

    /// lat-per-cpu: up to 8 (quick) or 32 CPUs, spread evenly, to the
    /// first node's memory; then their groups.
    fn per_cpu(&mut self) {
        let v = self.view;
        let all: Vec<u32> = (0..self.machine().cpus()).collect();
        let max = match self.budget {
            Budget::Quick => 8,
            Budget::Default => 32,
        };
        let sample: Vec<u32> = if all.len() <= max {
            all.clone()
        } else {
            (0..max).map(|i| all[i * all.len() / max]).collect()
        };
        let mem = v.memory_of(0);
        let size = self.lat_size();
        let mut seen: Vec<(u32, f64, f64)> = Vec::new();
        for &cpu in &sample {
            let truth = v.latency(cpu, &mem);
            self.chase(LatMode::PerCpu, cpu, Some(0), size, truth);
            if let Some(Record::Lat(l)) = self.records.last() {
                if let lat::Lat::Chase(c) = l.as_ref() {
                    seen.push((cpu, truth, c.median_ns));
                }
            }
        }
        // Groups: CPUs whose latencies differ by less than 8% together.
        seen.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut groups: Vec<Vec<(u32, f64)>> = Vec::new();
        let mut prev: Option<f64> = None;
        for (cpu, truth, ns) in seen {
            match (groups.last_mut(), prev) {
                (Some(g), Some(p)) if truth <= p * 1.08 => g.push((cpu, ns)),
                _ => groups.push(vec![(cpu, ns)]),
            }
            prev = Some(truth);
        }
        let groups: Vec<CpuGroup> = groups
            .into_iter()
            .map(|g| {
                let mut ns: Vec<f64> = g.iter().map(|x| x.1).collect();
                ns.sort_by(f64::total_cmp);
                let ids: Vec<u32> = g.iter().map(|x| x.0).collect();
                CpuGroup {
                    cpus: cpus(&ids),
                    median_ns: ns[ns.len() / 2],
                    min_ns: ns[0],
                    max_ns: ns[ns.len() - 1],
                    os_nodes: nodes(ids.iter().map(|&c| v.node_of(c))),
                }
            })
            .collect();
        let hidden = v.nodes.len() == 1 && groups.len() > 1;
        self.records.push(Record::LatSummary(Box::new(LatSummary::PerCpu(PerCpuSummary {
            mode: LatMode::PerCpu,
            mem_node: Some(0),
            groups,
            hidden_numa: hidden,
            note: None,
        }))));
    }

    /// lat-loaded: a chase on the first CPU to its node's memory while
    /// the node's other CPUs load that memory (every other CPU when the
    /// node has none), from no load through the delays to none; one curve
    /// per traffic mix.
    fn loaded(&mut self) {
        let v = self.view;
        let (mixes, delays): (&[LoadKind], &[f64]) = match self.budget {
            Budget::Quick => (&[LoadKind::Read], &[5000.0, 500.0, 50.0, 0.0]),
            Budget::Default => (
                &[LoadKind::Read, LoadKind::R2W1],
                &[10_000.0, 5000.0, 2000.0, 1000.0, 500.0, 200.0, 50.0, 0.0],
            ),
        };
        let mem = v.memory_of(0);
        let mem_domain = mem[0].0;
        let mut others: Vec<u32> = v.nodes[0].cpus.iter().copied().filter(|&c| c != 0).collect();
        if others.is_empty() {
            others = (1..self.machine().cpus()).collect();
        }
        let chase_domain = v.hw.domain_of_cpu(0);
        for &mix in mixes {
            let mut curve: Vec<(f64, f64)> = Vec::new();
            let mut idle_ns = None;
            for step in std::iter::once(None).chain(delays.iter().map(|d| Some(*d))) {
                let (ns, gbs) = match step {
                    None => (v.latency(0, &mem), 0.0),
                    Some(d) => {
                        let teams: Vec<Team> = v
                            .teams(&others, &mem)
                            .into_iter()
                            .map(|t| Team { delay_ns: d, ..t })
                            .collect();
                        let (l, g) = v.hw.loaded_latency(chase_domain, mem_domain, &teams);
                        (self.mean_over(&mem, chase_domain, l), g)
                    }
                };
                let ns = self.lat_figure(ns);
                let gbs = if gbs > 0.0 { self.bw_figure(gbs) } else { 0.0 };
                let (read, write) = match mix {
                    LoadKind::R2W1 => (gbs * 2.0 / 3.0, gbs / 3.0),
                    _ => (gbs, 0.0),
                };
                if step.is_none() {
                    idle_ns = Some(ns);
                }
                curve.push((gbs, ns));
                let all = nodes([0]);
                let disturbance = self.disturbance(0);
                self.records.push(Record::Lat(Box::new(lat::Lat::Loaded(LoadedPoint {
                    mode: LatMode::Loaded,
                    delay: step.map_or(0, |d| (d * 2.5) as u64),
                    delay_ns: step,
                    idle: step.is_none(),
                    latency_ns: ns,
                    median_ns: ns,
                    p90_ns: ns * 1.05,
                    p99_ns: ns * 1.15,
                    spread_pct: 8.0,
                    load_gbs: gbs,
                    read_gbs: Some(read),
                    write_gbs: Some(write),
                    load_threads: others.len(),
                    load_kind: mix,
                    cpu: 0,
                    mem_node: Some(0),
                    size_bytes: self.lat_size(),
                    page_size: "4k".into(),
                    placement: verified(&all, false),
                    load_placement: Some(verified(&all, false)),
                    stride_bytes: Some(256),
                    tlb_group_bytes: Some(262_144),
                    stable: !self.flagged,
                    disturbance,
                    power: None,
                }))));
            }
            if let Some(k) = lat::knee(&curve, idle_ns) {
                self.records.push(Record::LatSummary(Box::new(LatSummary::Loaded(
                    LoadedSummary {
                        mode: LatMode::Loaded,
                        load_kind: mix,
                        cpu: 0,
                        mem_node: Some(0),
                        load_threads: others.len(),
                        points: curve.len(),
                        knee: k,
                    },
                ))));
            }
        }
    }

    /// The loaded latency when the chased memory is spread (the
    /// firmware's interleave): each share of the ring waits at its own
    /// domain; the queue was computed at the first domain, and every
    /// domain is loaded alike.
    fn mean_over(&self, mem: &Spread, chase_domain: usize, at_first: f64) -> f64 {
        if mem.len() <= 1 {
            return at_first;
        }
        let v = self.view;
        let queue = at_first - v.hw.latency(chase_domain, mem[0].0);
        v.hw.latency_to(chase_domain, mem) + queue
    }

    /// lat-c2c: pairs per relation (one when quick, three by default).
    fn c2c(&mut self) {
        let v = self.view;
        let m = self.machine().clone();
        let pairs = match self.budget {
            Budget::Quick => 1,
            Budget::Default => 3,
        };
        let node0 = &v.nodes[0].cpus;
        let mut candidates: Vec<(Relation, u32, u32, f64)> = Vec::new();
        if node0.len() > 1 {
            candidates.push((Relation::Node, node0[0], node0[1], m.c2c_ns[0]));
        }
        if v.nodes.len() > 1 && v.package_of_cpu(v.nodes[1].cpus[0]) == 0 {
            candidates.push((Relation::Package, node0[0], v.nodes[1].cpus[0], m.c2c_ns[1]));
        }
        if m.packages > 1 {
            let other = m.cores_per_package;
            candidates.push((Relation::CrossPackage, 0, other, m.c2c_ns[2]));
        }
        for (rel, a, b, ns) in candidates {
            for i in 0..pairs {
                let ns = self.lat_figure(ns);
                let disturbance = self.disturbance(a);
                self.records.push(Record::Lat(Box::new(lat::Lat::C2c(C2cResult {
                    mode: LatMode::C2c,
                    cpu_a: a,
                    cpu_b: b + i as u32,
                    relation: Some(rel),
                    median_ns: ns,
                    p90_ns: ns * 1.04,
                    p99_ns: ns * 1.1,
                    min_ns: ns * 0.97,
                    max_ns: ns * 1.15,
                    spread_pct: 6.0,
                    samples: 11,
                    round_trips_per_sample: 20_000,
                    stable: !self.flagged,
                    disturbance,
                }))));
            }
        }
    }
}

/// The thread counts of `bw-scaling` on a node of `n` CPUs: every count
/// up to 16; past 16, 1 to 8 then about 8 more steps to `n`. The plan's
/// rule (`bench::bw::plan::scaling_counts`), restated rather than called:
/// the model knows what `run` stores, never the measuring code.
pub fn scaling_counts(n: usize) -> Vec<usize> {
    if n <= 16 {
        return (1..=n).collect();
    }
    let mut v: Vec<usize> = (1..=8).collect();
    let step = (n - 8).div_ceil(8);
    let mut k = 8 + step;
    while k < n {
        v.push(k);
        k += step;
    }
    v.push(n);
    v
}
