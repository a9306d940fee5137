//! One set of counters (every event of [`event::HARDWARE`] and
//! [`event::SOFTWARE`]) on a thread or a command: open, enable, disable,
//! read into a [`Counters`] record.

use std::io;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Software};
use perf_event::{Builder, Counter, ReadFormat};
use results::counters::{event, Counters, Reading};

use crate::paranoid;

/// What a set counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The calling thread only (a worker of a team opens its own set).
    ThisThread,
    /// A forked child that has not exec'd yet: counted with its
    /// descendants (`inherit`), from its `exec` on (`enable_on_exec`).
    Child(i32),
}

fn builder(name: &str) -> Option<Builder<'static>> {
    use event::*;
    let node = |operation, result| Cache { which: CacheId::NODE, operation, result };
    Some(match name {
        CYCLES => Builder::new(Hardware::CPU_CYCLES),
        INSTRUCTIONS => Builder::new(Hardware::INSTRUCTIONS),
        CACHE_REFERENCES => Builder::new(Hardware::CACHE_REFERENCES),
        CACHE_MISSES => Builder::new(Hardware::CACHE_MISSES),
        NODE_LOADS => Builder::new(node(CacheOp::READ, CacheResult::ACCESS)),
        NODE_LOAD_MISSES => Builder::new(node(CacheOp::READ, CacheResult::MISS)),
        NODE_STORES => Builder::new(node(CacheOp::WRITE, CacheResult::ACCESS)),
        NODE_STORE_MISSES => Builder::new(node(CacheOp::WRITE, CacheResult::MISS)),
        PAGE_FAULTS => Builder::new(Software::PAGE_FAULTS),
        MINOR_FAULTS => Builder::new(Software::PAGE_FAULTS_MIN),
        MAJOR_FAULTS => Builder::new(Software::PAGE_FAULTS_MAJ),
        CPU_MIGRATIONS => Builder::new(Software::CPU_MIGRATIONS),
        CONTEXT_SWITCHES => Builder::new(Software::CONTEXT_SWITCHES),
        _ => return None,
    })
}

/// Opens one event on `target`, kernel included when allowed; when the
/// kernel refuses that (`perf_event_paranoid` 2 without privileges), user
/// space only. Returns the counter and whether the kernel was excluded.
fn open_one(name: &str, target: Target) -> Result<(Counter, bool), String> {
    let Some(mut b) = builder(name) else {
        return Err(format!("unknown event '{name}'"));
    };
    match target {
        Target::ThisThread => {
            b.observe_self();
        }
        Target::Child(pid) => {
            b.observe_pid(pid).inherit(true).enable_on_exec(true);
        }
    }
    b.any_cpu()
        .enabled(false)
        .exclude_hv(true)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING);
    b.exclude_kernel(false);
    match b.build() {
        Ok(c) => Ok((c, false)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM)) => {
            b.exclude_kernel(true);
            b.build().map(|c| (c, true)).map_err(|e| reason(&e))
        }
        Err(e) => Err(reason(&e)),
    }
}

/// Why the kernel would not open an event, in words (the `unavailable`
/// text of a reading).
pub fn reason(e: &io::Error) -> String {
    let paranoid = || {
        paranoid::paranoid(&topo::SysRoot::live())
            .map_or_else(|| "unreadable".to_string(), |p| p.to_string())
    };
    match e.raw_os_error() {
        Some(libc::ENOENT) => "not supported by this machine's PMU (ENOENT: no PMU offers the \
                               event; virtual machines often expose none)"
            .into(),
        Some(libc::EOPNOTSUPP) => "not supported by this machine's PMU (EOPNOTSUPP)".into(),
        Some(libc::ENODEV) => "no such PMU (ENODEV)".into(),
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "not permitted: kernel.perf_event_paranoid is {} (run as root, grant CAP_PERFMON, \
             or sysctl -w kernel.perf_event_paranoid=1)",
            paranoid()
        ),
        Some(libc::EINVAL) => "rejected by the kernel (EINVAL)".into(),
        Some(libc::EBUSY) => "the PMU is held exclusively by another user (EBUSY)".into(),
        Some(libc::EMFILE) => "too many open files (EMFILE)".into(),
        Some(libc::ENOSPC) => "no free hardware counter (ENOSPC)".into(),
        Some(libc::ESRCH) => "the process was gone (ESRCH)".into(),
        Some(libc::ENOSYS) => "no perf_event_open here (ENOSYS: a kernel without perf events, or \
                               an emulator that does not pass the call through, such as \
                               qemu-user: no PMU under emulation)"
            .into(),
        _ if e.kind() == io::ErrorKind::Unsupported => {
            format!("this kernel does not know an attribute used ({e})")
        }
        _ => e.to_string(),
    }
}

struct Slot {
    event: &'static str,
    counter: Result<Counter, String>,
    user_only: bool,
}

/// Counters for every event, on one target; each event opened on its own
/// (not as a group, so that one the PMU lacks does not take the others
/// down, and the kernel multiplexes them when there are more events than
/// hardware counters; [`Reading`] scales them).
pub struct EventSet {
    scope: String,
    slots: Vec<Slot>,
}

impl EventSet {
    /// Opens every event on `target`, disabled (a [`Target::Child`] set
    /// enables itself at the child's `exec`). `scope` names what is counted
    /// in the record.
    pub fn open(target: Target, scope: impl Into<String>) -> EventSet {
        let slots = event::HARDWARE
            .iter()
            .chain(event::SOFTWARE.iter())
            .map(|&name| {
                let (counter, user_only) = match open_one(name, target) {
                    Ok((c, u)) => (Ok(c), u),
                    Err(why) => (Err(why), false),
                };
                Slot { event: name, counter, user_only }
            })
            .collect();
        EventSet { scope: scope.into(), slots }
    }

    /// Starts counting (a thread's set, around the measured part).
    pub fn enable(&mut self) {
        for s in &mut self.slots {
            if let Ok(c) = &mut s.counter {
                let _ = c.enable();
            }
        }
    }

    /// Stops counting.
    pub fn disable(&mut self) {
        for s in &mut self.slots {
            if let Ok(c) = &mut s.counter {
                let _ = c.disable();
            }
        }
    }

    /// Zeroes the counts (and leaves the times running).
    pub fn reset(&mut self) {
        for s in &mut self.slots {
            if let Ok(c) = &mut s.counter {
                let _ = c.reset();
            }
        }
    }

    /// Reads every event into a record (derived figures computed).
    pub fn read(&mut self) -> Counters {
        let events = self
            .slots
            .iter_mut()
            .map(|s| match &mut s.counter {
                Err(why) => Reading::unavailable(s.event, why.clone()),
                Ok(c) => match c.read_full() {
                    Ok(d) => {
                        let ns = |t: Option<std::time::Duration>| {
                            t.map_or(0, |t| t.as_nanos().min(u64::MAX as u128) as u64)
                        };
                        Reading::counted(
                            s.event,
                            d.count(),
                            ns(d.time_enabled()),
                            ns(d.time_running()),
                            s.user_only,
                        )
                    }
                    Err(e) => Reading::unavailable(s.event, format!("read failed: {e}")),
                },
            })
            .map(|r| r.named_for(std::env::consts::ARCH))
            .collect();
        Counters::new(self.scope.clone(), events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The base page size (4 KiB on x86-64, up to 64 KiB on arm64).
    fn page() -> usize {
        // SAFETY: sysconf has no preconditions.
        (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
    }

    /// Touches `bytes` of fresh anonymous memory, one write per base page;
    /// returns the pages touched.
    fn touch(bytes: usize) -> usize {
        let page = page();
        // zeroed memory from a fresh mapping: each page faults on its first write
        let mut v = vec![0u8; bytes];
        for i in (0..bytes).step_by(page) {
            v[i] = 1;
        }
        std::hint::black_box(&v).iter().step_by(page).map(|&b| b as usize).sum()
    }

    #[test]
    fn a_thread_counts_its_own_page_faults_and_only_while_enabled() {
        let mut set = EventSet::open(Target::ThisThread, "this thread");
        // software events always open
        let before = set.read();
        let pf = before.get(event::PAGE_FAULTS).unwrap();
        assert_eq!(pf.unavailable, None, "{pf:?}");
        assert_eq!(pf.value, Some(0.0), "disabled: nothing counted yet");
        touch(8 << 20);
        assert_eq!(set.read().value(event::PAGE_FAULTS), Some(0.0), "still disabled");
        set.enable();
        let n = touch(16 << 20);
        set.disable();
        let pages = (16 << 20) / page();
        assert_eq!(n, pages);
        let c = set.read();
        let faults = c.value(event::PAGE_FAULTS).unwrap();
        // every page touched: at least one fault each unless THP served
        // some (a 2 MiB fault covers 512 pages of 4 KiB), and never wildly
        // more
        assert!((8.0..=(pages + 512) as f64).contains(&faults), "{faults}");
        assert_eq!(c.value(event::MAJOR_FAULTS), Some(0.0));
        let minor = c.value(event::MINOR_FAULTS).unwrap();
        assert_eq!(minor, faults, "anonymous memory: every fault is minor");
        // every event is there, counted or with a reason
        assert_eq!(c.events.len(), event::HARDWARE.len() + event::SOFTWARE.len());
        for r in &c.events {
            assert!(r.value.is_some() != r.unavailable.is_some(), "{r:?}");
        }
    }

    fn allowed_cpus() -> Vec<usize> {
        // SAFETY: set is plain data, filled by sched_getaffinity.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: set is a valid cpu_set_t of the size passed.
        let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
        assert_eq!(r, 0);
        // SAFETY: CPU_ISSET reads the set filled above.
        (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
    }

    fn pin(cpu: usize) {
        // SAFETY: set is plain data; CPU_SET writes inside it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: set is a valid cpu_set_t of the size passed; 0 is this thread.
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
        assert_eq!(r, 0, "pin to {cpu}: {}", io::Error::last_os_error());
    }

    #[test]
    fn migrations_appear_when_the_thread_is_moved_and_not_otherwise() {
        let cpus = allowed_cpus();
        assert!(cpus.len() >= 2, "this test moves a thread between two CPUs; allowed: {cpus:?}");
        let (a, b) = (cpus[0], cpus[1]);
        std::thread::spawn(move || {
            pin(a);
            let mut set = EventSet::open(Target::ThisThread, "moved thread");
            // pinned to one CPU and re-pinned there: the thread cannot move
            set.enable();
            for _ in 0..20 {
                pin(a);
                std::hint::black_box((0..10_000u64).sum::<u64>());
            }
            set.disable();
            let still = set.read().value(event::CPU_MIGRATIONS);
            assert_eq!(still, Some(0.0), "pinned to one CPU: no migration");
            set.reset();
            set.enable();
            for i in 0..20 {
                pin(if i % 2 == 0 { b } else { a });
                std::hint::black_box((0..10_000u64).sum::<u64>());
            }
            set.disable();
            let moved = set.read().value(event::CPU_MIGRATIONS).unwrap();
            // each of the 20 moves is a migration (the running thread is
            // pushed to the new CPU at once)
            assert!((20.0..=25.0).contains(&moved), "{moved} migrations for 20 moves");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reasons_name_the_errno() {
        let r = reason(&io::Error::from_raw_os_error(libc::ENOENT));
        assert!(r.starts_with("not supported by this machine's PMU (ENOENT"), "{r}");
        let r = reason(&io::Error::from_raw_os_error(libc::EACCES));
        assert!(r.contains("perf_event_paranoid is") && r.contains("CAP_PERFMON"), "{r}");
        let r = reason(&io::Error::from_raw_os_error(libc::EMFILE));
        assert!(r.contains("EMFILE"), "{r}");
    }
}
