//! CPU affinity: pinning the calling thread, reading back where it runs,
//! and placing a child process between `fork` and `exec`.

use std::io;

use topo::CpuSet;

use crate::error::{PlaceError, Result};
use crate::policy::MemPolicy;
use crate::sys::{self, Mask, NODE_MASK_BITS};

/// Restricts the calling thread to exactly one CPU (`sched_setaffinity`).
pub fn pin_current_thread(cpu: u32) -> Result<()> {
    set_current_thread_affinity(&[cpu].into_iter().collect())
}

/// Restricts the calling thread to `cpus` (`sched_setaffinity`). Threads
/// it creates afterwards inherit the mask.
pub fn set_current_thread_affinity(cpus: &CpuSet) -> Result<()> {
    if cpus.is_empty() {
        return Err(PlaceError::InvalidArgument(
            "sched_setaffinity: the CPU set is empty".to_string(),
        ));
    }
    let mask = Mask::from_set(cpus, 64);
    if sys::sched_setaffinity(&mask) < 0 {
        return Err(PlaceError::last_os("sched_setaffinity", format!("CPUs {cpus}")));
    }
    Ok(())
}

/// The calling thread's affinity mask (`sched_getaffinity`, read by
/// [`topo::read::affinity`] with a mask that grows until the kernel takes it).
pub fn current_thread_affinity() -> Result<CpuSet> {
    topo::read::affinity().map_err(|source| PlaceError::Syscall {
        syscall: "sched_getaffinity",
        what: "calling thread".into(),
        source,
    })
}

/// The CPU the calling thread runs on right now (`getcpu`). Only stable
/// when the thread is pinned to one CPU.
pub fn current_cpu() -> Result<u32> {
    Ok(current_cpu_and_node()?.0)
}

/// The CPU and the node the calling thread runs on right now (`getcpu`).
pub fn current_cpu_and_node() -> Result<(u32, u32)> {
    sys::getcpu().map_err(|source| PlaceError::Syscall {
        syscall: "getcpu",
        what: "calling thread".into(),
        source,
    })
}

/// Where a child process should run and allocate, applied between `fork`
/// and `exec` (through [`std::os::unix::process::CommandExt::pre_exec`]).
///
/// Build it, call [`prepare`](Self::prepare) in the parent (this allocates
/// the masks), then call [`PreparedPlacement::apply_in_child`] in the
/// `pre_exec` closure, which only makes system calls:
///
/// ```no_run
/// use std::os::unix::process::CommandExt;
/// use place::{ChildPlacement, MemPolicy};
/// let p = ChildPlacement { cpus: Some("0".parse().unwrap()), policy: MemPolicy::Bind("0".parse().unwrap()) }
///     .prepare();
/// let mut cmd = std::process::Command::new("true");
/// // SAFETY: apply_in_child only makes async-signal-safe system calls.
/// unsafe { cmd.pre_exec(move || p.apply_in_child()) };
/// cmd.status().unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildPlacement {
    /// CPUs the child may run on; `None` leaves the inherited mask.
    pub cpus: Option<CpuSet>,
    /// The child's memory policy (inherited across `exec`); `Default`
    /// resets it to the system default.
    pub policy: MemPolicy,
}

impl ChildPlacement {
    /// Builds the kernel masks now, in the parent, so that the child only
    /// has to make system calls.
    pub fn prepare(&self) -> PreparedPlacement {
        let policy_mask = match &self.policy {
            MemPolicy::Default | MemPolicy::Local => None,
            p => Some(Mask::from_set(&p.nodes(), NODE_MASK_BITS)),
        };
        PreparedPlacement {
            cpu_mask: self.cpus.as_ref().map(|c| Mask::from_set(c, 64)),
            mode: self.policy.mode(),
            policy_mask,
        }
    }
}

/// What the placement does, for tables and JSON: `cpus 0-3, bind 1`,
/// `cpus 4-7` (memory policy reset to the default), `interleave 0-1`.
impl std::fmt::Display for ChildPlacement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let nodes = self.policy.nodes();
        let mem = match &self.policy {
            MemPolicy::Default => None,
            p if nodes.is_empty() => Some(p.name().to_string()),
            p => Some(format!("{} {nodes}", p.name())),
        };
        match (&self.cpus, mem) {
            (Some(c), Some(m)) => write!(f, "cpus {c}, {m}"),
            (Some(c), None) => write!(f, "cpus {c}"),
            (None, Some(m)) => f.write_str(&m),
            (None, None) => f.write_str("default memory policy"),
        }
    }
}

impl ChildPlacement {
    /// Checks, before spawning anything, that the kernel accepts this
    /// placement: applies it to a short-lived thread of this process (CPU
    /// mask and memory policy are per thread) and lets the thread end.
    pub fn probe(&self) -> Result<()> {
        let prepared = self.prepare();
        let what = format!(
            "CPUs {} and policy {}",
            self.cpus.as_ref().map_or("inherited".to_string(), |c| c.to_string()),
            self.policy
        );
        let r = std::thread::spawn(move || prepared.apply_in_child())
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("placement probe thread panicked")));
        r.map_err(|source| PlaceError::Syscall {
            syscall: "sched_setaffinity/set_mempolicy",
            what,
            source,
        })
    }
}

/// A [`ChildPlacement`] with its masks built; see
/// [`apply_in_child`](Self::apply_in_child).
#[derive(Debug, Clone)]
pub struct PreparedPlacement {
    cpu_mask: Option<Mask>,
    mode: i32,
    policy_mask: Option<Mask>,
}

impl PreparedPlacement {
    /// Applies the placement to the calling thread: `sched_setaffinity`
    /// then `set_mempolicy`. Async-signal-safe (no allocation, no locks):
    /// meant for `pre_exec`, where a failure makes `spawn` return the error.
    pub fn apply_in_child(&self) -> io::Result<()> {
        if let Some(m) = &self.cpu_mask {
            if sys::sched_setaffinity(m) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if sys::set_mempolicy(self.mode, self.policy_mask.as_ref()) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinning_moves_the_thread_and_reads_back() {
        std::thread::spawn(|| {
            let allowed = current_thread_affinity().unwrap();
            assert!(!allowed.is_empty());
            for cpu in allowed.iter() {
                pin_current_thread(cpu).unwrap();
                assert_eq!(current_thread_affinity().unwrap(), [cpu].into_iter().collect());
                assert_eq!(current_cpu().unwrap(), cpu);
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_to_a_cpu_that_does_not_exist_fails_naming_it() {
        std::thread::spawn(|| {
            let e = pin_current_thread(4000).unwrap_err().to_string();
            assert!(e.contains("sched_setaffinity") && e.contains("4000"), "{e}");
            assert!(set_current_thread_affinity(&CpuSet::new()).is_err());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn child_placement_applies_before_exec() {
        use std::os::unix::process::CommandExt;
        let cpu = current_thread_affinity().unwrap().last().unwrap();
        let p = ChildPlacement {
            cpus: Some([cpu].into_iter().collect()),
            policy: MemPolicy::Bind([0].into_iter().collect()),
        }
        .prepare();
        let mut cmd = std::process::Command::new("/bin/sh");
        // numa_maps shows the task policy the exec'd program inherited.
        cmd.args([
            "-c",
            "grep '^Cpus_allowed_list' /proc/self/status; head -1 /proc/self/numa_maps",
        ]);
        // SAFETY: apply_in_child only makes async-signal-safe syscalls.
        unsafe { cmd.pre_exec(move || p.apply_in_child()) };
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("Cpus_allowed_list:\t{cpu}\n")), "{text}");
        assert!(text.contains(" bind:0 "), "{text}");
    }

    #[test]
    fn probe_accepts_good_placements_and_names_bad_ones() {
        let good = ChildPlacement { cpus: Some("0".parse().unwrap()), policy: MemPolicy::Local };
        good.probe().unwrap();
        let bad = ChildPlacement { cpus: None, policy: MemPolicy::Bind("1000".parse().unwrap()) };
        let e = bad.probe().unwrap_err().to_string();
        assert!(e.contains("bind nodes 1000") && e.contains("inherited"), "{e}");
        let bad =
            ChildPlacement { cpus: Some("4000".parse().unwrap()), policy: MemPolicy::Default };
        assert!(bad.probe().unwrap_err().to_string().contains("CPUs 4000"));
        // The probe ran on another thread: this one is untouched.
        assert_eq!(crate::policy::current_process_policy().unwrap(), MemPolicy::Default);
    }

    #[test]
    fn child_placements_describe_themselves() {
        let p = |cpus: Option<&str>, policy| ChildPlacement {
            cpus: cpus.map(|c| c.parse().unwrap()),
            policy,
        };
        let nodes = |s: &str| s.parse::<topo::NodeSet>().unwrap();
        assert_eq!(p(Some("0-3"), MemPolicy::Bind(nodes("1"))).to_string(), "cpus 0-3, bind 1");
        assert_eq!(p(Some("4-7"), MemPolicy::Default).to_string(), "cpus 4-7");
        assert_eq!(
            p(None, MemPolicy::WeightedInterleave(nodes("0-1"))).to_string(),
            "weighted-interleave 0-1"
        );
        assert_eq!(p(None, MemPolicy::Local).to_string(), "local");
        assert_eq!(p(None, MemPolicy::Default).to_string(), "default memory policy");
    }

    #[test]
    fn child_placement_failure_surfaces_from_spawn() {
        use std::os::unix::process::CommandExt;
        let p =
            ChildPlacement { cpus: None, policy: MemPolicy::Bind([1000].into_iter().collect()) }
                .prepare();
        let mut cmd = std::process::Command::new("/bin/true");
        // SAFETY: apply_in_child only makes async-signal-safe syscalls.
        unsafe { cmd.pre_exec(move || p.apply_in_child()) };
        assert!(cmd.status().is_err());
    }
}
