//! The GPU helper program (`numaprobe-gpu`): opens the driver, and for each
//! planned node and GPU copies between a pinned host buffer placed on the
//! node (bound with `mbind`, first touched, checked with `move_pages`) and
//! device memory, timing each copy with device events. Speaks
//! [`crate::protocol`]: a plan on stdin, one message per line on stdout.
//!
//! `numaprobe-gpu probe` only describes the driver and its devices.
//! `numaprobe-gpu stream` reads a plan as its first line of stdin, then
//! keeps all the plan's GPUs copying from its first node, in its first
//! direction, until stdin closes (DMA contention: numaprobe measures the
//! CPU's memory meanwhile), and reports what the GPUs moved.
//! Exit status: 0 done, 1 stopped (a `failed` message says why), 2 usage.

use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use place::{Buffer, MemPolicy};
use results::pages::PageKind;
use topo::{CpuSet, NodeSet};

use crate::driver::{Context, Driver, Event, Stream};
use crate::protocol::{
    together_size, Direction, Message, Plan, PlanNode, Point, Probe, MAX_STREAM_SECS,
    PROTOCOL_VERSION,
};
use crate::GpuError;

/// The largest plan read from stdin.
const MAX_PLAN_BYTES: u64 = 1 << 20;

fn emit(m: &Message) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (numaprobe gone) ends the helper at the next write.
    let line = serde_json::to_string(m).expect("a message serialises");
    if writeln!(out, "{line}").is_err() || out.flush().is_err() {
        std::process::exit(1);
    }
}

/// The helper's `main`. Returns the exit status.
pub fn main() -> i32 {
    // Not `std::env::args`, which panics on an argument that is not UTF-8:
    // such an argument is a usage error like any other.
    let args: Vec<String> =
        std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["probe"] => probe().map(|(_, p)| emit(&Message::Probe(p))),
        ["measure"] => read_plan().and_then(|plan| measure(&plan)),
        ["stream"] => read_plan_line().and_then(|plan| stream(&plan)),
        ["--version"] => {
            println!("numaprobe-gpu {} (protocol {PROTOCOL_VERSION})", env!("CARGO_PKG_VERSION"));
            return 0;
        }
        _ => {
            eprintln!("usage: numaprobe-gpu probe | numaprobe-gpu measure|stream < PLAN.json (run by `numaprobe gpu`)");
            return 2;
        }
    };
    match result {
        Ok(()) => {
            emit(&Message::Done);
            0
        }
        Err(e) => {
            emit(&Message::Failed { text: e.to_string() });
            1
        }
    }
}

fn read_plan() -> Result<Plan, GpuError> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_PLAN_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| GpuError::Plan(format!("cannot read the plan on stdin: {e}")))?;
    check_plan(&text)
}

/// The plan as the first line of stdin; the rest of stdin stays open (its
/// end is the signal to stop).
fn read_plan_line() -> Result<Plan, GpuError> {
    let mut text = String::new();
    std::io::stdin()
        .lock()
        .take(MAX_PLAN_BYTES)
        .read_line(&mut text)
        .map_err(|e| GpuError::Plan(format!("cannot read the plan on stdin: {e}")))?;
    check_plan(&text)
}

fn check_plan(text: &str) -> Result<Plan, GpuError> {
    let plan: Plan = serde_json::from_str(text)
        .map_err(|e| GpuError::Plan(format!("the plan is not valid: {e}")))?;
    if plan.protocol != PROTOCOL_VERSION {
        return Err(GpuError::Plan(format!(
            "the plan speaks protocol {} and this helper {PROTOCOL_VERSION}: install numaprobe and numaprobe-gpu from one release",
            plan.protocol
        )));
    }
    if plan.sizes.is_empty() || plan.sizes.contains(&0) || plan.reps == 0 {
        return Err(GpuError::Plan(
            "the plan has no sizes, a zero size or zero repetitions".into(),
        ));
    }
    Ok(plan)
}

fn probe() -> Result<(Driver, Probe), GpuError> {
    let d = Driver::open()?;
    let driver_version = d.init()?;
    let devices = d.devices()?;
    if devices.is_empty() {
        return Err(GpuError::NoDevice);
    }
    let p = Probe { runtime: "cuda".into(), library: d.library.clone(), driver_version, devices };
    Ok((d, p))
}

fn measure(plan: &Plan) -> Result<(), GpuError> {
    let (d, p) = probe()?;
    let count = p.devices.len() as u32;
    emit(&Message::Probe(p));
    if let Some(g) = plan.gpus.iter().find(|&&g| g >= count) {
        return Err(GpuError::Plan(format!("GPU {g} does not exist: the driver shows {count}")));
    }
    let max = *plan.sizes.iter().max().expect("checked non-empty") as usize;
    for node in &plan.nodes {
        pin_to(node)?;
        // Two halves: bidirectional copies read one and write the other.
        let host = host_buffer(node.node, 2 * max)?;
        let on_node = on_node_share(&host, node.node)?;
        if on_node < 0.99 {
            emit(&Message::Warning {
                text: format!(
                    "node {}: only {:.0}% of the pinned buffer's pages are on the node (memory short?); its figures are left out",
                    node.node,
                    on_node * 100.0
                ),
            });
            continue;
        }
        for &gpu in &plan.gpus {
            copy_node_gpu(&d, plan, &host, node.node, gpu, on_node)?;
        }
        if plan.together && plan.gpus.len() > 1 {
            drop(host);
            copy_together(&d, plan, node.node)?;
        }
    }
    Ok(())
}

fn pin_to(node: &PlanNode) -> Result<(), GpuError> {
    if node.cpus.is_empty() {
        return Ok(());
    }
    let cpus = CpuSet::parse_list(&node.cpus)
        .map_err(|e| GpuError::Plan(format!("node {} CPUs '{}': {e}", node.node, node.cpus)))?;
    place::set_current_thread_affinity(&cpus)
        .map_err(|e| GpuError::Placement(format!("pinning to node {}'s CPUs: {e}", node.node)))
}

/// A buffer bound to `node` and first-touched, so every page is there
/// before it is pinned (pinned pages do not migrate).
fn host_buffer(node: u32, len: usize) -> Result<Buffer, GpuError> {
    let place_err = |what: &str, e: place::PlaceError| {
        GpuError::Placement(format!("{what} {len} bytes on node {node}: {e}"))
    };
    let mut b = Buffer::alloc(len, PageKind::Base).map_err(|e| place_err("allocating", e))?;
    let mut set = NodeSet::new();
    set.insert(node);
    b.bind(&MemPolicy::Bind(set)).map_err(|e| place_err("binding", e))?;
    b.touch();
    Ok(b)
}

fn on_node_share(b: &Buffer, node: u32) -> Result<f64, GpuError> {
    let pn = b
        .page_nodes(4096)
        .map_err(|e| GpuError::Placement(format!("move_pages on the host buffer: {e}")))?;
    let there = pn.per_node.get(&node).copied().unwrap_or(0);
    Ok(if pn.sampled_pages == 0 { 0.0 } else { there as f64 / pn.sampled_pages as f64 })
}

/// Device-side resources of one node x GPU pair, released on drop.
struct Pair<'a> {
    d: &'a Driver,
    gpu: u32,
    host: *mut u8,
    registered: bool,
    dev: u64,
    streams: Vec<Stream>,
    events: Vec<Event>,
}

impl Drop for Pair<'_> {
    fn drop(&mut self) {
        for &s in &self.streams {
            let _ = self.d.synchronize(s);
        }
        for &e in &self.events {
            self.d.destroy_event(e);
        }
        for &s in &self.streams {
            self.d.destroy_stream(s);
        }
        if self.dev != 0 {
            self.d.free(self.dev);
        }
        if self.registered {
            // SAFETY: registered in copy_node_gpu, the buffer still mapped.
            unsafe { self.d.unregister(self.host) };
        }
        self.d.release_device(self.gpu);
    }
}

fn copy_node_gpu(
    d: &Driver,
    plan: &Plan,
    host: &Buffer,
    node: u32,
    gpu: u32,
    on_node: f64,
) -> Result<(), GpuError> {
    d.use_device(gpu)?;
    let len = host.len();
    let mut pair = Pair {
        d,
        gpu,
        host: host.as_ptr() as *mut u8,
        registered: false,
        dev: 0,
        streams: vec![],
        events: vec![],
    };
    // SAFETY: the buffer outlives `pair`, which unregisters it.
    unsafe { d.register(pair.host, len)? };
    pair.registered = true;
    pair.dev = d.alloc(len)?;
    for _ in 0..2 {
        pair.streams.push(d.stream()?);
    }
    for _ in 0..3 {
        pair.events.push(d.event()?);
    }
    let half = len / 2;
    for &dir in &plan.directions {
        for &size in &plan.sizes {
            let n = size as usize;
            let once = || -> Result<f64, GpuError> {
                let (s0, s1) = (pair.streams[0], pair.streams[1]);
                let (e0, e1, e2) = (pair.events[0], pair.events[1], pair.events[2]);
                d.record(e0, s0)?;
                // SAFETY: host and device ranges are within their buffers
                // (n <= half), which live until the streams are synchronised.
                unsafe {
                    match dir {
                        Direction::H2d => d.htod(pair.dev, pair.host, n, s0)?,
                        Direction::D2h => d.dtoh(pair.host, pair.dev, n, s0)?,
                        Direction::Bidir => {
                            d.wait_event(s1, e0)?;
                            d.htod(pair.dev, pair.host, n, s0)?;
                            d.dtoh(pair.host.add(half), pair.dev + half as u64, n, s1)?;
                        }
                    }
                }
                d.record(e1, s0)?;
                let mut secs = d.elapsed_s(e0, e1)?;
                let mut bytes = n as f64;
                if dir == Direction::Bidir {
                    d.record(e2, s1)?;
                    secs = secs.max(d.elapsed_s(e0, e2)?);
                    bytes *= 2.0;
                }
                if secs <= 0.0 {
                    return Err(GpuError::Timing(format!(
                        "GPU {gpu}: a {n}-byte copy timed at {secs} s by the device's events"
                    )));
                }
                Ok(bytes / secs / 1e9)
            };
            once()?; // warm-up, not kept
            let gbs = (0..plan.reps).map(|_| once()).collect::<Result<Vec<_>, _>>()?;
            emit(&Message::Point(Point {
                gpu,
                node,
                direction: dir,
                size_bytes: size,
                gbs,
                timer: "device events".into(),
                on_node,
                together: vec![],
            }));
        }
    }
    Ok(())
}

/// One GPU's share of the all-at-once step, released on drop.
struct Member<'a> {
    d: &'a Driver,
    gpu: u32,
    ctx: Context,
    /// This GPU's own range of the host buffer (two halves for bidir).
    host: *mut u8,
    dev: u64,
    streams: Vec<Stream>,
    events: Vec<Event>,
}

impl Drop for Member<'_> {
    fn drop(&mut self) {
        if self.d.set_current(self.ctx).is_ok() {
            for &s in &self.streams {
                let _ = self.d.synchronize(s);
            }
            for &e in &self.events {
                self.d.destroy_event(e);
            }
            for &s in &self.streams {
                self.d.destroy_stream(s);
            }
            if self.dev != 0 {
                self.d.free(self.dev);
            }
        }
        self.d.release_device(self.gpu);
    }
}

/// The pinned buffer of the all-at-once step, unregistered on drop
/// (before the buffer itself is unmapped: fields drop in order).
struct Pinned<'a> {
    d: &'a Driver,
    ptr: *mut u8,
    _buf: Buffer,
}

impl Drop for Pinned<'_> {
    fn drop(&mut self) {
        // SAFETY: registered in copy_together, the buffer still mapped.
        unsafe { self.d.unregister(self.ptr) };
    }
}

/// All of the plan's GPUs copying from `node` at the same time: each GPU
/// gets its own range of one buffer placed on the node, every GPU's copy
/// is enqueued before any is waited for, and each is timed by its own
/// device's events. Shared bottlenecks (a PCIe switch, the socket's link)
/// show as each GPU's figure falling below what it reached alone.
///
/// The copies start within the few microseconds the enqueueing takes; at
/// the sizes used (up to 256 MiB, milliseconds per copy) that skew is
/// under 1% of a copy.
fn copy_together(d: &Driver, plan: &Plan, node: u32) -> Result<(), GpuError> {
    with_members(d, plan, node, "all-GPUs-at-once", |members, size, on_node| {
        measure_together(d, plan, node, size, on_node, members)
    })
}

/// `stream` mode: the plan's GPUs copy from its first node in its first
/// direction, round after round, until stdin closes (or
/// [`MAX_STREAM_SECS`]); `Streaming` is said after the first round, and
/// each GPU's rates over the rounds after it are reported as a point.
fn stream(plan: &Plan) -> Result<(), GpuError> {
    let (d, p) = probe()?;
    let count = p.devices.len() as u32;
    emit(&Message::Probe(p));
    if let Some(g) = plan.gpus.iter().find(|&&g| g >= count) {
        return Err(GpuError::Plan(format!("GPU {g} does not exist: the driver shows {count}")));
    }
    let (Some(node), Some(&dir)) = (plan.nodes.first(), plan.directions.first()) else {
        return Err(GpuError::Plan("a stream needs a node and a direction".into()));
    };
    pin_to(node)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    std::thread::spawn(move || {
        // Anything after the plan line, or its end, means stop.
        let mut rest = String::new();
        let _ = std::io::stdin().lock().read_line(&mut rest);
        flag.store(true, Ordering::SeqCst);
    });
    with_members(&d, plan, node.node, "stream", |members, size, on_node| {
        let deadline = Instant::now() + Duration::from_secs(MAX_STREAM_SECS);
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); members.len()];
        let mut round = 0u64;
        while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
            let got = one_round(&d, dir, size, members)?;
            if round == 0 {
                emit(&Message::Streaming);
            } else {
                for (r, g) in rates.iter_mut().zip(got) {
                    r.push(g);
                }
            }
            round += 1;
        }
        for (m, gbs) in members.iter().zip(rates) {
            emit(&Message::Point(Point {
                gpu: m.gpu,
                node: node.node,
                direction: dir,
                size_bytes: size as u64,
                gbs,
                timer: "device events".into(),
                on_node,
                together: plan.gpus.clone(),
            }));
        }
        Ok(())
    })
}

/// Sets up every plan GPU's share of one pinned buffer on `node`, runs
/// `body`, and undoes it all (copies finished first).
fn with_members(
    d: &Driver,
    plan: &Plan,
    node: u32,
    step: &str,
    body: impl FnOnce(&[Member], usize, f64) -> Result<(), GpuError>,
) -> Result<(), GpuError> {
    let largest = *plan.sizes.iter().max().expect("checked non-empty");
    let size = together_size(largest) as usize;
    let per_gpu = 2 * size;
    let host = host_buffer(node, per_gpu * plan.gpus.len())?;
    let on_node = on_node_share(&host, node)?;
    if on_node < 0.99 {
        emit(&Message::Warning {
            text: format!(
                "node {node}: only {:.0}% of the {step} buffer's pages are on the node (memory short?); that step is left out",
                on_node * 100.0
            ),
        });
        return Ok(());
    }
    let base = host.as_ptr() as *mut u8;
    // Every GPU's context is retained before the buffer is pinned, and the
    // pin is undone (Pinned, declared after, drops first) while they are.
    let mut members = Vec::with_capacity(plan.gpus.len());
    for (i, &gpu) in plan.gpus.iter().enumerate() {
        let ctx = d.use_device(gpu)?;
        let mut m = Member {
            d,
            gpu,
            ctx,
            // SAFETY: within the buffer: i * per_gpu + per_gpu <= its length.
            host: unsafe { base.add(i * per_gpu) },
            dev: 0,
            streams: vec![],
            events: vec![],
        };
        m.dev = d.alloc(per_gpu)?;
        for _ in 0..2 {
            m.streams.push(d.stream()?);
        }
        for _ in 0..3 {
            m.events.push(d.event()?);
        }
        members.push(m);
    }
    // SAFETY: the buffer lives in `pinned`, which unregisters it first.
    unsafe { d.register(base, host.len())? };
    let _pinned = Pinned { d, ptr: base, _buf: host };
    let result = body(&members, size, on_node);
    // No copy may still run on the buffer when it is unpinned and unmapped.
    for m in &members {
        if d.set_current(m.ctx).is_ok() {
            for &s in &m.streams {
                let _ = d.synchronize(s);
            }
        }
    }
    result
}

fn measure_together(
    d: &Driver,
    plan: &Plan,
    node: u32,
    size: usize,
    on_node: f64,
    members: &[Member],
) -> Result<(), GpuError> {
    for &dir in &plan.directions {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); members.len()];
        for rep in 0..=plan.reps {
            let got = one_round(d, dir, size, members)?;
            if rep > 0 {
                // rep 0 is the warm-up, not kept
                for (r, g) in rates.iter_mut().zip(got) {
                    r.push(g);
                }
            }
        }
        for (m, gbs) in members.iter().zip(rates) {
            emit(&Message::Point(Point {
                gpu: m.gpu,
                node,
                direction: dir,
                size_bytes: size as u64,
                gbs,
                timer: "device events".into(),
                on_node,
                together: plan.gpus.clone(),
            }));
        }
    }
    Ok(())
}

/// One copy of `size` on every member at once, each GPU's GB/s (10^9
/// bytes/s) by its own events.
fn one_round(
    d: &Driver,
    dir: Direction,
    size: usize,
    members: &[Member],
) -> Result<Vec<f64>, GpuError> {
    for m in members {
        d.set_current(m.ctx)?;
        let (s0, s1) = (m.streams[0], m.streams[1]);
        d.record(m.events[0], s0)?;
        // SAFETY: each range is within its member's buffers, which live
        // until the streams are synchronised (with_members).
        unsafe {
            match dir {
                Direction::H2d => d.htod(m.dev, m.host, size, s0)?,
                Direction::D2h => d.dtoh(m.host, m.dev, size, s0)?,
                Direction::Bidir => {
                    d.wait_event(s1, m.events[0])?;
                    d.htod(m.dev, m.host, size, s0)?;
                    d.dtoh(m.host.add(size), m.dev + size as u64, size, s1)?;
                }
            }
        }
        d.record(m.events[1], s0)?;
        if dir == Direction::Bidir {
            d.record(m.events[2], s1)?;
        }
    }
    let mut out = Vec::with_capacity(members.len());
    for m in members {
        d.set_current(m.ctx)?;
        let mut secs = d.elapsed_s(m.events[0], m.events[1])?;
        let mut bytes = size as f64;
        if dir == Direction::Bidir {
            secs = secs.max(d.elapsed_s(m.events[0], m.events[2])?);
            bytes *= 2.0;
        }
        if secs <= 0.0 {
            return Err(GpuError::Timing(format!(
                "GPU {}: a {size}-byte copy timed at {secs} s by the device's events",
                m.gpu
            )));
        }
        out.push(bytes / secs / 1e9);
    }
    Ok(out)
}
