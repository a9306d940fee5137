//! The few CUDA driver API calls the helper makes, opened at run time from
//! `libcuda.so.1` (or the library `NUMAPROBE_CUDA_LIBRARY` names) with
//! `dlopen`. Only the helper calls this: the release `numaprobe` binary is
//! static, and a static glibc program cannot reliably `dlopen` a library
//! that needs the dynamic glibc (docs/architecture.md, "GPU helper").

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

use libloading::Library;

use crate::protocol::Device;
use crate::GpuError;

/// The oldest driver API the helper accepts: CUDA 11.0 (2020). Every call
/// used here exists there with the signature declared below.
pub const MIN_DRIVER_VERSION: u32 = 11000;

/// The library opened when `NUMAPROBE_CUDA_LIBRARY` is not set.
pub const DEFAULT_LIBRARY: &str = "libcuda.so.1";

type R = c_int;
type Ptr = *mut c_void;

/// A stream handle from [`Driver::stream`] (opaque: only the driver makes one).
#[derive(Debug, Clone, Copy)]
pub struct Stream(Ptr);

/// An event handle from [`Driver::event`].
#[derive(Debug, Clone, Copy)]
pub struct Event(Ptr);

/// A device's primary context.
#[derive(Debug, Clone, Copy)]
pub struct Context(Ptr);

/// `CU_MEMHOSTREGISTER_PORTABLE`.
const PORTABLE: c_uint = 0x01;

/// Resolved entry points. Raw function pointers, valid while `_lib` lives.
pub struct Driver {
    pub library: String,
    _lib: Library,
    init: unsafe extern "C" fn(c_uint) -> R,
    driver_get_version: unsafe extern "C" fn(*mut c_int) -> R,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> R,
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> R,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> R,
    device_get_pci_bus_id: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> R,
    device_total_mem: unsafe extern "C" fn(*mut usize, c_int) -> R,
    primary_ctx_retain: unsafe extern "C" fn(*mut Ptr, c_int) -> R,
    primary_ctx_release: unsafe extern "C" fn(c_int) -> R,
    ctx_set_current: unsafe extern "C" fn(Ptr) -> R,
    mem_alloc: unsafe extern "C" fn(*mut u64, usize) -> R,
    mem_free: unsafe extern "C" fn(u64) -> R,
    host_register: unsafe extern "C" fn(Ptr, usize, c_uint) -> R,
    host_unregister: unsafe extern "C" fn(Ptr) -> R,
    stream_create: unsafe extern "C" fn(*mut Ptr, c_uint) -> R,
    stream_destroy: unsafe extern "C" fn(Ptr) -> R,
    stream_synchronize: unsafe extern "C" fn(Ptr) -> R,
    stream_wait_event: unsafe extern "C" fn(Ptr, Ptr, c_uint) -> R,
    event_create: unsafe extern "C" fn(*mut Ptr, c_uint) -> R,
    event_destroy: unsafe extern "C" fn(Ptr) -> R,
    event_record: unsafe extern "C" fn(Ptr, Ptr) -> R,
    event_synchronize: unsafe extern "C" fn(Ptr) -> R,
    event_elapsed: unsafe extern "C" fn(*mut f32, Ptr, Ptr) -> R,
    memcpy_htod_async: unsafe extern "C" fn(u64, *const c_void, usize, Ptr) -> R,
    memcpy_dtoh_async: unsafe extern "C" fn(Ptr, u64, usize, Ptr) -> R,
    get_error_name: unsafe extern "C" fn(R, *mut *const c_char) -> R,
}

// SAFETY: the driver API is thread-safe; the pointers are plain C entry
// points of a library kept open for the Driver's life.
unsafe impl Send for Driver {}
// SAFETY: as above.
unsafe impl Sync for Driver {}

macro_rules! sym {
    ($lib:expr, $path:expr, $name:literal) => {{
        // SAFETY: the symbol's type is the driver API's documented
        // signature for this name (cuda.h); the library outlives the copy.
        let s: libloading::Symbol<'_, _> = unsafe { $lib.get(concat!($name, "\0").as_bytes()) }
            .map_err(|e| GpuError::Library {
                library: $path.to_string(),
                why: format!("has no {} ({e})", $name),
            })?;
        *s
    }};
}

impl Driver {
    /// Opens the driver library: `NUMAPROBE_CUDA_LIBRARY` when set, else
    /// `libcuda.so.1` from the loader's search path.
    pub fn open() -> Result<Driver, GpuError> {
        let path =
            std::env::var("NUMAPROBE_CUDA_LIBRARY").unwrap_or_else(|_| DEFAULT_LIBRARY.to_string());
        // SAFETY: loading a library runs its initialisers; the CUDA driver
        // (or its test double) has no initialiser with preconditions.
        let lib = unsafe { Library::new(&path) }.map_err(|e| GpuError::Library {
            library: path.clone(),
            why: format!("cannot be opened ({e}); is the NVIDIA driver installed?"),
        })?;
        Ok(Driver {
            init: sym!(lib, path, "cuInit"),
            driver_get_version: sym!(lib, path, "cuDriverGetVersion"),
            device_get_count: sym!(lib, path, "cuDeviceGetCount"),
            device_get: sym!(lib, path, "cuDeviceGet"),
            device_get_name: sym!(lib, path, "cuDeviceGetName"),
            device_get_pci_bus_id: sym!(lib, path, "cuDeviceGetPCIBusId"),
            device_total_mem: sym!(lib, path, "cuDeviceTotalMem_v2"),
            primary_ctx_retain: sym!(lib, path, "cuDevicePrimaryCtxRetain"),
            primary_ctx_release: sym!(lib, path, "cuDevicePrimaryCtxRelease_v2"),
            ctx_set_current: sym!(lib, path, "cuCtxSetCurrent"),
            mem_alloc: sym!(lib, path, "cuMemAlloc_v2"),
            mem_free: sym!(lib, path, "cuMemFree_v2"),
            host_register: sym!(lib, path, "cuMemHostRegister_v2"),
            host_unregister: sym!(lib, path, "cuMemHostUnregister"),
            stream_create: sym!(lib, path, "cuStreamCreate"),
            stream_destroy: sym!(lib, path, "cuStreamDestroy_v2"),
            stream_synchronize: sym!(lib, path, "cuStreamSynchronize"),
            stream_wait_event: sym!(lib, path, "cuStreamWaitEvent"),
            event_create: sym!(lib, path, "cuEventCreate"),
            event_destroy: sym!(lib, path, "cuEventDestroy_v2"),
            event_record: sym!(lib, path, "cuEventRecord"),
            event_synchronize: sym!(lib, path, "cuEventSynchronize"),
            event_elapsed: sym!(lib, path, "cuEventElapsedTime"),
            memcpy_htod_async: sym!(lib, path, "cuMemcpyHtoDAsync_v2"),
            memcpy_dtoh_async: sym!(lib, path, "cuMemcpyDtoHAsync_v2"),
            get_error_name: sym!(lib, path, "cuGetErrorName"),
            library: path,
            _lib: lib,
        })
    }

    /// `Err` naming the call and the driver's error name when `r` is not
    /// CUDA_SUCCESS.
    fn check(&self, call: &'static str, r: R) -> Result<(), GpuError> {
        if r == 0 {
            return Ok(());
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorName writes a pointer to a static string.
        let ok = unsafe { (self.get_error_name)(r, &mut name) } == 0 && !name.is_null();
        let name = if ok {
            // SAFETY: a NUL-terminated static string from the driver.
            unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
        } else {
            "unknown error".to_string()
        };
        Err(GpuError::Driver { call, code: r, name })
    }

    /// `cuDriverGetVersion` then `cuInit`; refuses drivers older than
    /// [`MIN_DRIVER_VERSION`].
    pub fn init(&self) -> Result<u32, GpuError> {
        let mut v: c_int = 0;
        // SAFETY: writes one int.
        self.check("cuDriverGetVersion", unsafe { (self.driver_get_version)(&mut v) })?;
        let v = v.max(0) as u32;
        if v < MIN_DRIVER_VERSION {
            return Err(GpuError::TooOld { have: v, need: MIN_DRIVER_VERSION });
        }
        // SAFETY: plain call, flags must be 0.
        let r = unsafe { (self.init)(0) };
        if r == 100 {
            return Err(GpuError::NoDevice);
        }
        self.check("cuInit", r)?;
        Ok(v)
    }

    pub fn devices(&self) -> Result<Vec<Device>, GpuError> {
        let mut n: c_int = 0;
        // SAFETY: writes one int.
        self.check("cuDeviceGetCount", unsafe { (self.device_get_count)(&mut n) })?;
        let mut out = Vec::new();
        for ordinal in 0..n.max(0) {
            let mut dev: c_int = 0;
            // SAFETY: writes one int.
            self.check("cuDeviceGet", unsafe { (self.device_get)(&mut dev, ordinal) })?;
            let mut name = [0 as c_char; 256];
            // SAFETY: the buffer holds 256 bytes and we pass its length.
            self.check("cuDeviceGetName", unsafe {
                (self.device_get_name)(name.as_mut_ptr(), 256, dev)
            })?;
            let mut bus = [0 as c_char; 64];
            // SAFETY: as above, 64 bytes.
            self.check("cuDeviceGetPCIBusId", unsafe {
                (self.device_get_pci_bus_id)(bus.as_mut_ptr(), 64, dev)
            })?;
            let mut mem: usize = 0;
            // SAFETY: writes one size_t.
            self.check("cuDeviceTotalMem", unsafe { (self.device_total_mem)(&mut mem, dev) })?;
            // SAFETY: the driver NUL-terminates within the lengths given;
            // the last byte is forced to NUL in case it did not.
            let text = |b: &mut [c_char]| {
                if let Some(last) = b.last_mut() {
                    *last = 0;
                }
                unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().into_owned()
            };
            out.push(Device {
                ordinal: ordinal as u32,
                name: text(&mut name),
                pci_address: text(&mut bus).to_ascii_lowercase(),
                memory_bytes: mem as u64,
            });
        }
        Ok(out)
    }

    /// Makes the device's primary context current on this thread (one
    /// retain, undone by [`release_device`](Self::release_device)), and
    /// returns it for [`set_current`](Self::set_current).
    pub fn use_device(&self, ordinal: u32) -> Result<Context, GpuError> {
        let mut ctx: Ptr = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.check("cuDevicePrimaryCtxRetain", unsafe {
            (self.primary_ctx_retain)(&mut ctx, ordinal as c_int)
        })?;
        let ctx = Context(ctx);
        self.set_current(ctx)?;
        Ok(ctx)
    }

    /// Makes a context retained by [`use_device`](Self::use_device) current
    /// again (switching between GPUs without another retain).
    pub fn set_current(&self, ctx: Context) -> Result<(), GpuError> {
        // SAFETY: a context the driver gave us, still retained.
        self.check("cuCtxSetCurrent", unsafe { (self.ctx_set_current)(ctx.0) })
    }

    pub fn release_device(&self, ordinal: u32) {
        // SAFETY: releases the retain of use_device; errors are moot here.
        unsafe { (self.primary_ctx_release)(ordinal as c_int) };
    }

    pub fn alloc(&self, bytes: usize) -> Result<u64, GpuError> {
        let mut p: u64 = 0;
        // SAFETY: writes one device pointer.
        self.check("cuMemAlloc", unsafe { (self.mem_alloc)(&mut p, bytes) })?;
        Ok(p)
    }

    pub fn free(&self, p: u64) {
        // SAFETY: a pointer from alloc, freed once by its owner.
        unsafe { (self.mem_free)(p) };
    }

    /// Pins `bytes` of host memory at `p` (`cuMemHostRegister`, flag
    /// `CU_MEMHOSTREGISTER_PORTABLE`: pinned for every context, so that all
    /// GPUs may copy from it at once).
    ///
    /// # Safety
    /// `p..p+bytes` must be a mapping that stays valid until
    /// [`unregister`](Self::unregister).
    pub unsafe fn register(&self, p: *mut u8, bytes: usize) -> Result<(), GpuError> {
        self.check("cuMemHostRegister", (self.host_register)(p as Ptr, bytes, PORTABLE))
    }

    /// # Safety
    /// `p` was registered by [`register`](Self::register).
    pub unsafe fn unregister(&self, p: *mut u8) {
        (self.host_unregister)(p as Ptr);
    }

    pub fn stream(&self) -> Result<Stream, GpuError> {
        let mut s: Ptr = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.check("cuStreamCreate", unsafe { (self.stream_create)(&mut s, 0) })?;
        Ok(Stream(s))
    }

    pub fn destroy_stream(&self, s: Stream) {
        // SAFETY: a handle from stream(), destroyed once.
        unsafe { (self.stream_destroy)(s.0) };
    }

    pub fn synchronize(&self, s: Stream) -> Result<(), GpuError> {
        // SAFETY: a live stream handle.
        self.check("cuStreamSynchronize", unsafe { (self.stream_synchronize)(s.0) })
    }

    pub fn wait_event(&self, s: Stream, e: Event) -> Result<(), GpuError> {
        // SAFETY: live handles.
        self.check("cuStreamWaitEvent", unsafe { (self.stream_wait_event)(s.0, e.0, 0) })
    }

    pub fn event(&self) -> Result<Event, GpuError> {
        let mut e: Ptr = std::ptr::null_mut();
        // SAFETY: writes one handle; flags 0 = timing enabled.
        self.check("cuEventCreate", unsafe { (self.event_create)(&mut e, 0) })?;
        Ok(Event(e))
    }

    pub fn destroy_event(&self, e: Event) {
        // SAFETY: a handle from event(), destroyed once.
        unsafe { (self.event_destroy)(e.0) };
    }

    pub fn record(&self, e: Event, s: Stream) -> Result<(), GpuError> {
        // SAFETY: live handles.
        self.check("cuEventRecord", unsafe { (self.event_record)(e.0, s.0) })
    }

    /// Waits for `end`, then the time from `start` to `end` in seconds.
    pub fn elapsed_s(&self, start: Event, end: Event) -> Result<f64, GpuError> {
        // SAFETY: a live event handle.
        self.check("cuEventSynchronize", unsafe { (self.event_synchronize)(end.0) })?;
        let mut ms: f32 = 0.0;
        // SAFETY: writes one float; both events recorded.
        self.check("cuEventElapsedTime", unsafe { (self.event_elapsed)(&mut ms, start.0, end.0) })?;
        Ok(f64::from(ms) / 1e3)
    }

    /// # Safety
    /// `src..src+n` is readable host memory, `dst..dst+n` device memory of
    /// the current context; both stay valid until the stream is synchronised.
    pub unsafe fn htod(
        &self,
        dst: u64,
        src: *const u8,
        n: usize,
        s: Stream,
    ) -> Result<(), GpuError> {
        self.check("cuMemcpyHtoDAsync", (self.memcpy_htod_async)(dst, src as *const c_void, n, s.0))
    }

    /// # Safety
    /// As [`htod`](Self::htod), host memory writable.
    pub unsafe fn dtoh(&self, dst: *mut u8, src: u64, n: usize, s: Stream) -> Result<(), GpuError> {
        self.check("cuMemcpyDtoHAsync", (self.memcpy_dtoh_async)(dst as Ptr, src, n, s.0))
    }
}
