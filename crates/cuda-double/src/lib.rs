//! A test double of the CUDA driver library: the calls `numaprobe gpu`'s
//! helper makes, implemented on host memory so that discovery, the node x
//! GPU matrix, the error paths and the reports run in CI without a GPU.
//!
//! Copies really copy (device memory is host memory), and their time is
//! modelled: each stream has a virtual clock that a copy advances by
//! `overhead + bytes / rate`, and events read that clock. The rate depends
//! on the NUMA node the host buffer's first page is on (asked of the kernel
//! with `get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)`, so a buffer that was not
//! placed where the helper says shows up), on the device, on the direction,
//! and on whether the host range was registered (pinned): a pageable copy
//! runs at `pageable` times the rate.
//!
//! Configured by `CUDA_DOUBLE`, read at `cuInit`, `;`-separated:
//! - `devices=N` (default 1)
//! - `driver=V` the driver version `cuDriverGetVersion` reports (default 12040)
//! - `rate=NODE:GPU:GBS` or `rate=NODE:GPU:h2d|d2h:GBS`, repeatable (GB/s,
//!   10^9 bytes/s); unlisted pairs run at `default=GBS` (default 10)
//! - `overhead_us=X` per-copy fixed cost (default 5)
//! - `pageable=F` rate factor of copies from unregistered memory (default 0.5)
//! - `fail=NAME` or `fail=NAME:CODE`, repeatable: that call returns CODE
//!   (default 999, CUDA_ERROR_UNKNOWN)
//! - `nodevice`: `cuInit` returns CUDA_ERROR_NO_DEVICE (100)
//! - `busid=GPU:ADDRESS` the PCI address of a device (default `0000:GPU+0x10:00.0`)
//! - `shared=NODE:GBS`, repeatable: a link all GPUs share when they copy
//!   from NODE's memory at the same time (a PCIe switch, the socket's
//!   link): copies enqueued on K devices before the host next waits each
//!   run at no more than GBS / K (per direction: PCIe is full duplex)
//!
//! Copies and event records are timed when the host next waits or reads an
//! event (not when enqueued), so that copies enqueued together on several
//! devices are known to overlap.
//!
//! Not a CUDA implementation: only what the helper uses, single process.

#![allow(clippy::missing_safety_doc)]

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Mutex, MutexGuard};

type CuResult = c_int;
const SUCCESS: CuResult = 0;
const INVALID_VALUE: CuResult = 1;
const OUT_OF_MEMORY: CuResult = 2;
const NOT_INITIALIZED: CuResult = 3;
const NO_DEVICE: CuResult = 100;
const INVALID_DEVICE: CuResult = 101;
const INVALID_CONTEXT: CuResult = 201;
const INVALID_HANDLE: CuResult = 400;
const UNKNOWN: CuResult = 999;

const TOTAL_MEM: usize = 80 << 30;

#[derive(Default)]
struct Config {
    devices: i32,
    driver: i32,
    rates: HashMap<(u32, i32, Option<bool>), f64>,
    default_gbs: f64,
    overhead_s: f64,
    pageable: f64,
    fail: HashMap<String, CuResult>,
    nodevice: bool,
    busid: HashMap<i32, String>,
    shared: HashMap<u32, f64>,
}

impl Config {
    fn parse(s: &str) -> Config {
        let mut c = Config {
            devices: 1,
            driver: 12040,
            default_gbs: 10.0,
            overhead_s: 5e-6,
            pageable: 0.5,
            ..Config::default()
        };
        for item in s.split(';').map(str::trim).filter(|i| !i.is_empty()) {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            match k {
                "devices" => c.devices = v.parse().unwrap_or(1),
                "driver" => c.driver = v.parse().unwrap_or(12040),
                "default" => c.default_gbs = v.parse().unwrap_or(10.0),
                "overhead_us" => c.overhead_s = v.parse::<f64>().unwrap_or(5.0) * 1e-6,
                "pageable" => c.pageable = v.parse().unwrap_or(0.5),
                "nodevice" => c.nodevice = true,
                "rate" => {
                    let f: Vec<&str> = v.split(':').collect();
                    let (node, gpu) = (
                        f.first().and_then(|x| x.parse().ok()),
                        f.get(1).and_then(|x| x.parse().ok()),
                    );
                    let (dir, gbs) = match f.len() {
                        3 => (None, f[2].parse().ok()),
                        4 => (Some(f[2] == "h2d"), f[3].parse().ok()),
                        _ => (None, None),
                    };
                    if let (Some(n), Some(g), Some(r)) = (node, gpu, gbs) {
                        c.rates.insert((n, g, dir), r);
                    }
                }
                "fail" => {
                    let (name, code) = v.split_once(':').unwrap_or((v, "999"));
                    c.fail.insert(name.to_string(), code.parse().unwrap_or(UNKNOWN));
                }
                "shared" => {
                    if let Some((n, g)) = v.split_once(':') {
                        if let (Ok(n), Ok(g)) = (n.parse(), g.parse()) {
                            c.shared.insert(n, g);
                        }
                    }
                }
                "busid" => {
                    if let Some((g, a)) = v.split_once(':') {
                        if let Ok(g) = g.parse() {
                            c.busid.insert(g, a.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        c
    }

    fn rate(&self, node: u32, gpu: i32, h2d: bool) -> f64 {
        self.rates
            .get(&(node, gpu, Some(h2d)))
            .or_else(|| self.rates.get(&(node, gpu, None)))
            .copied()
            .unwrap_or(self.default_gbs)
    }
}

#[derive(Default)]
struct State {
    init: bool,
    cfg: Config,
    /// Device allocations: address -> (device, backing store).
    dmem: HashMap<u64, (i32, Vec<u8>)>,
    /// Registered (pinned) host ranges: start -> length.
    pinned: HashMap<usize, usize>,
    /// Stream handle -> (device, virtual clock in seconds).
    streams: HashMap<usize, (i32, f64)>,
    /// Event handle -> recorded virtual time (None until recorded).
    events: HashMap<usize, Option<f64>>,
    next_handle: usize,
    /// The host's time as far as it has waited for the device: work
    /// enqueued on any stream starts no earlier (the host cannot enqueue
    /// before it returned from a synchronisation).
    host_now: f64,
    /// Work enqueued since the host last waited, in enqueue order:
    /// (stream, what), timed by `settle`.
    pending: Vec<(usize, Op)>,
}

/// Enqueued work that advances a stream's clock.
enum Op {
    Copy {
        node: u32,
        h2d: bool,
        pinned: bool,
        bytes: usize,
    },
    Record(usize),
    /// The stream waits for an event recorded before (on any stream).
    Wait(usize),
}

impl State {
    /// Times the pending work: copies from one node enqueued on several
    /// devices overlap and share that node's `shared` link.
    fn settle(&mut self) {
        let ops = std::mem::take(&mut self.pending);
        let mut devices: HashMap<u32, Vec<i32>> = HashMap::new();
        for (st, op) in &ops {
            if let (Op::Copy { node, .. }, Some(&(dev, _))) = (op, self.streams.get(st)) {
                let d = devices.entry(*node).or_default();
                if !d.contains(&dev) {
                    d.push(dev);
                }
            }
        }
        for (st, op) in ops {
            match op {
                Op::Copy { node, h2d, pinned, bytes } => {
                    let Some(&(dev, _)) = self.streams.get(&st) else { continue };
                    let mut gbs = self.cfg.rate(node, dev, h2d);
                    if !pinned {
                        gbs *= self.cfg.pageable;
                    }
                    if let Some(&cap) = self.cfg.shared.get(&node) {
                        let k = devices.get(&node).map_or(1, Vec::len).max(1);
                        gbs = gbs.min(cap / k as f64);
                    }
                    let secs = self.cfg.overhead_s + bytes as f64 / (gbs * 1e9);
                    if let Some(clock) = self.clock(st) {
                        *clock += secs;
                    }
                }
                Op::Record(ev) => {
                    let t = self.clock(st).map(|c| *c);
                    if let (Some(t), Some(e)) = (t, self.events.get_mut(&ev)) {
                        *e = Some(t);
                    }
                }
                Op::Wait(ev) => {
                    let t = self.events.get(&ev).copied().flatten();
                    if let (Some(t), Some(clock)) = (t, self.clock(st)) {
                        *clock = clock.max(t);
                    }
                }
            }
        }
    }

    /// The clock of stream `st`, brought up to the host's time: the start
    /// of whatever is enqueued next.
    fn clock(&mut self, st: usize) -> Option<&mut f64> {
        let now = self.host_now;
        self.streams.get_mut(&st).map(|(_, c)| {
            *c = c.max(now);
            c
        })
    }
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

thread_local! {
    static CURRENT: std::cell::Cell<Option<i32>> = const { std::cell::Cell::new(None) };
}

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on the initialised state, after the injected failure of `name`.
fn with<F: FnOnce(&mut State) -> CuResult>(name: &str, f: F) -> CuResult {
    let mut g = state();
    let Some(s) = g.as_mut().filter(|s| s.init) else { return NOT_INITIALIZED };
    if let Some(&code) = s.cfg.fail.get(name) {
        return code;
    }
    f(s)
}

fn handle(s: &mut State) -> usize {
    s.next_handle += 1;
    0x1000 + s.next_handle * 16
}

/// The NUMA node of the page at `addr`, as the kernel reports it.
fn node_of(addr: *const c_void) -> u32 {
    let mut node: c_int = 0;
    // MPOL_F_NODE | MPOL_F_ADDR: the node the page at addr is on.
    // SAFETY: get_mempolicy writes one int; the mask pointer is null.
    let r = unsafe {
        libc::syscall(
            libc::SYS_get_mempolicy,
            &mut node as *mut c_int,
            std::ptr::null_mut::<u64>(),
            0u64,
            addr,
            3u64,
        )
    };
    if r == 0 {
        node as u32
    } else {
        0
    }
}

fn device_ok(s: &State, dev: c_int) -> bool {
    dev >= 0 && dev < s.cfg.devices
}

#[no_mangle]
pub extern "C" fn cuInit(_flags: c_uint) -> CuResult {
    let cfg = Config::parse(&std::env::var("CUDA_DOUBLE").unwrap_or_default());
    if let Some(&code) = cfg.fail.get("cuInit") {
        return code;
    }
    if cfg.nodevice {
        return NO_DEVICE;
    }
    let mut g = state();
    if g.as_ref().map_or(true, |s| !s.init) {
        *g = Some(State { init: true, cfg, ..State::default() });
    }
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(v: *mut c_int) -> CuResult {
    // Answers before cuInit, as the real library does.
    let cfg = Config::parse(&std::env::var("CUDA_DOUBLE").unwrap_or_default());
    if let Some(&code) = cfg.fail.get("cuDriverGetVersion") {
        return code;
    }
    if v.is_null() {
        return INVALID_VALUE;
    }
    *v = cfg.driver;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> CuResult {
    with("cuDeviceGetCount", |s| {
        *n = s.cfg.devices;
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(dev: *mut c_int, ordinal: c_int) -> CuResult {
    with("cuDeviceGet", |s| {
        if !device_ok(s, ordinal) {
            return INVALID_DEVICE;
        }
        *dev = ordinal;
        SUCCESS
    })
}

unsafe fn write_cstr(dst: *mut c_char, len: c_int, text: &str) -> CuResult {
    if dst.is_null() || len <= 0 {
        return INVALID_VALUE;
    }
    let b = text.as_bytes();
    let n = b.len().min(len as usize - 1);
    std::ptr::copy_nonoverlapping(b.as_ptr(), dst as *mut u8, n);
    *dst.add(n) = 0;
    SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: c_int) -> CuResult {
    with("cuDeviceGetName", |s| {
        if !device_ok(s, dev) {
            return INVALID_DEVICE;
        }
        write_cstr(name, len, &format!("numaprobe CUDA double {dev}"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetPCIBusId(bus: *mut c_char, len: c_int, dev: c_int) -> CuResult {
    with("cuDeviceGetPCIBusId", |s| {
        if !device_ok(s, dev) {
            return INVALID_DEVICE;
        }
        let addr = s
            .cfg
            .busid
            .get(&dev)
            .cloned()
            .unwrap_or_else(|| format!("0000:{:02x}:00.0", 0x10 + dev));
        write_cstr(bus, len, &addr)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: c_int) -> CuResult {
    with("cuDeviceTotalMem_v2", |s| {
        if !device_ok(s, dev) {
            return INVALID_DEVICE;
        }
        *bytes = TOTAL_MEM;
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, dev: c_int) -> CuResult {
    with("cuDevicePrimaryCtxRetain", |s| {
        if !device_ok(s, dev) {
            return INVALID_DEVICE;
        }
        *ctx = (0x100 + dev as usize) as *mut c_void;
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: c_int) -> CuResult {
    with(
        "cuDevicePrimaryCtxRelease_v2",
        |s| if device_ok(s, dev) { SUCCESS } else { INVALID_DEVICE },
    )
}

#[no_mangle]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CuResult {
    with("cuCtxSetCurrent", |s| {
        let dev = (ctx as usize).wrapping_sub(0x100) as c_int;
        if ctx.is_null() || !device_ok(s, dev) {
            return INVALID_CONTEXT;
        }
        CURRENT.with(|c| c.set(Some(dev)));
        SUCCESS
    })
}

fn current() -> Option<i32> {
    CURRENT.with(|c| c.get())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> CuResult {
    with("cuMemAlloc_v2", |s| {
        let Some(dev) = current() else { return INVALID_CONTEXT };
        let used: usize = s.dmem.values().filter(|(d, _)| *d == dev).map(|(_, v)| v.len()).sum();
        if bytes == 0 || used + bytes > TOTAL_MEM {
            return OUT_OF_MEMORY;
        }
        let v = vec![0u8; bytes];
        let addr = v.as_ptr() as u64;
        s.dmem.insert(addr, (dev, v));
        *dptr = addr;
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuMemFree_v2(dptr: u64) -> CuResult {
    with("cuMemFree_v2", |s| if s.dmem.remove(&dptr).is_some() { SUCCESS } else { INVALID_VALUE })
}

#[no_mangle]
pub extern "C" fn cuMemHostRegister_v2(p: *mut c_void, bytes: usize, _flags: c_uint) -> CuResult {
    with("cuMemHostRegister_v2", |s| {
        if p.is_null() || bytes == 0 {
            return INVALID_VALUE;
        }
        s.pinned.insert(p as usize, bytes);
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CuResult {
    with("cuMemHostUnregister", |s| {
        if s.pinned.remove(&(p as usize)).is_some() {
            SUCCESS
        } else {
            INVALID_VALUE
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(st: *mut *mut c_void, _flags: c_uint) -> CuResult {
    with("cuStreamCreate", |s| {
        let Some(dev) = current() else { return INVALID_CONTEXT };
        let h = handle(s);
        s.streams.insert(h, (dev, 0.0));
        *st = h as *mut c_void;
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuStreamDestroy_v2(st: *mut c_void) -> CuResult {
    with("cuStreamDestroy_v2", |s| {
        if s.streams.remove(&(st as usize)).is_some() {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

#[no_mangle]
pub extern "C" fn cuStreamSynchronize(st: *mut c_void) -> CuResult {
    with("cuStreamSynchronize", |s| {
        s.settle();
        stream_sync(s, st)
    })
}

fn stream_sync(s: &mut State, st: *mut c_void) -> CuResult {
    match s.streams.get(&(st as usize)) {
        Some(&(_, t)) => {
            s.host_now = s.host_now.max(t);
            SUCCESS
        }
        None => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(ev: *mut *mut c_void, _flags: c_uint) -> CuResult {
    with("cuEventCreate", |s| {
        let h = handle(s);
        s.events.insert(h, None);
        *ev = h as *mut c_void;
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuEventDestroy_v2(ev: *mut c_void) -> CuResult {
    with("cuEventDestroy_v2", |s| {
        if s.events.remove(&(ev as usize)).is_some() {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

#[no_mangle]
pub extern "C" fn cuEventRecord(ev: *mut c_void, st: *mut c_void) -> CuResult {
    with("cuEventRecord", |s| {
        if !s.streams.contains_key(&(st as usize)) || !s.events.contains_key(&(ev as usize)) {
            return INVALID_HANDLE;
        }
        s.pending.push((st as usize, Op::Record(ev as usize)));
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuStreamWaitEvent(st: *mut c_void, ev: *mut c_void, _flags: c_uint) -> CuResult {
    with("cuStreamWaitEvent", |s| {
        let ev = ev as usize;
        let recorded = matches!(s.events.get(&ev), Some(Some(_)))
            || s.pending.iter().any(|(_, op)| matches!(op, Op::Record(e) if *e == ev));
        if !recorded || !s.streams.contains_key(&(st as usize)) {
            return INVALID_HANDLE;
        }
        s.pending.push((st as usize, Op::Wait(ev)));
        SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn cuEventSynchronize(ev: *mut c_void) -> CuResult {
    with("cuEventSynchronize", |s| {
        s.settle();
        event_sync(s, ev)
    })
}

fn event_sync(s: &mut State, ev: *mut c_void) -> CuResult {
    match s.events.get(&(ev as usize)) {
        Some(&Some(t)) => {
            s.host_now = s.host_now.max(t);
            SUCCESS
        }
        _ => INVALID_HANDLE,
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> CuResult {
    with("cuEventElapsedTime", |s| {
        s.settle();
        match (s.events.get(&(start as usize)), s.events.get(&(end as usize))) {
            (Some(Some(a)), Some(Some(b))) => {
                *ms = ((b - a) * 1e3) as f32;
                SUCCESS
            }
            _ => INVALID_HANDLE,
        }
    })
}

/// One modelled copy between host memory `host` and device memory `dev`.
unsafe fn copy(
    name: &str,
    host: *mut c_void,
    dev: u64,
    bytes: usize,
    st: *mut c_void,
    h2d: bool,
) -> CuResult {
    with(name, |s| {
        let Some(&(sdev, _)) = s.streams.get(&(st as usize)) else { return INVALID_HANDLE };
        // The device allocation holding [dev, dev + bytes).
        let Some((&base, _)) =
            s.dmem.iter().find(|(&a, (_, v))| dev >= a && dev + bytes as u64 <= a + v.len() as u64)
        else {
            return INVALID_VALUE;
        };
        let (adev, store) = s.dmem.get_mut(&base).expect("found above");
        if *adev != sdev {
            return INVALID_VALUE;
        }
        let off = (dev - base) as usize;
        if h2d {
            std::ptr::copy_nonoverlapping(host as *const u8, store[off..].as_mut_ptr(), bytes);
        } else {
            std::ptr::copy_nonoverlapping(store[off..].as_ptr(), host as *mut u8, bytes);
        }
        let h = host as usize;
        let pinned = s.pinned.iter().any(|(&a, &l)| h >= a && h + bytes <= a + l);
        s.pending.push((st as usize, Op::Copy { node: node_of(host), h2d, pinned, bytes }));
        SUCCESS
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    n: usize,
    st: *mut c_void,
) -> CuResult {
    copy("cuMemcpyHtoDAsync_v2", src as *mut c_void, dst, n, st, true)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    n: usize,
    st: *mut c_void,
) -> CuResult {
    copy("cuMemcpyDtoHAsync_v2", dst, src, n, st, false)
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(code: CuResult, out: *mut *const c_char) -> CuResult {
    let name: &'static CStr = match code {
        SUCCESS => c"CUDA_SUCCESS",
        INVALID_VALUE => c"CUDA_ERROR_INVALID_VALUE",
        OUT_OF_MEMORY => c"CUDA_ERROR_OUT_OF_MEMORY",
        NOT_INITIALIZED => c"CUDA_ERROR_NOT_INITIALIZED",
        NO_DEVICE => c"CUDA_ERROR_NO_DEVICE",
        INVALID_DEVICE => c"CUDA_ERROR_INVALID_DEVICE",
        INVALID_CONTEXT => c"CUDA_ERROR_INVALID_CONTEXT",
        INVALID_HANDLE => c"CUDA_ERROR_INVALID_HANDLE",
        UNKNOWN => c"CUDA_ERROR_UNKNOWN",
        _ => return INVALID_VALUE,
    };
    if out.is_null() {
        return INVALID_VALUE;
    }
    *out = name.as_ptr();
    SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_reads_rates_failures_and_defaults() {
        let c = Config::parse(
            "devices=2; rate=0:1:25; rate=1:0:h2d:12.5; fail=cuMemAlloc_v2:2; default=8",
        );
        assert_eq!(c.devices, 2);
        assert_eq!(c.rate(0, 1, true), 25.0);
        assert_eq!(c.rate(0, 1, false), 25.0);
        assert_eq!(c.rate(1, 0, true), 12.5);
        assert_eq!(c.rate(1, 0, false), 8.0);
        assert_eq!(c.fail.get("cuMemAlloc_v2"), Some(&2));
    }

    #[test]
    fn copies_enqueued_on_two_devices_together_share_the_nodes_link() {
        let mut s = State {
            init: true,
            cfg: Config::parse("devices=2; default=10; shared=0:10; overhead_us=0"),
            ..State::default()
        };
        s.streams.insert(1, (0, 0.0));
        s.streams.insert(2, (1, 0.0));
        let copy = Op::Copy { node: 0, h2d: true, pinned: true, bytes: 1_000_000_000 };
        s.pending.push((1, copy));
        s.settle();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(s.streams[&1].1, 0.1), "alone: 10 GB/s");
        for st in [1, 2] {
            s.pending
                .push((st, Op::Copy { node: 0, h2d: true, pinned: true, bytes: 1_000_000_000 }));
        }
        s.settle();
        assert!(close(s.streams[&1].1, 0.3), "with another GPU: 5 GB/s each");
        assert!(close(s.streams[&2].1, 0.2));
        s.pending.push((2, Op::Copy { node: 1, h2d: true, pinned: true, bytes: 1_000_000_000 }));
        s.pending.push((1, Op::Copy { node: 0, h2d: true, pinned: true, bytes: 1_000_000_000 }));
        s.settle();
        assert!(close(s.streams[&2].1, 0.3), "another node's link is not shared");
        assert!(close(s.streams[&1].1, 0.4), "nor by a GPU copying alone from node 0");
    }
}
