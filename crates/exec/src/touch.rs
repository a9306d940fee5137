//! A tiny memory-touching workload (`numaprobe exec --touch SIZE`) for
//! checking placements where no other program is at hand (the busybox
//! guest): it faults in a buffer under whatever policy it inherited, reads
//! back where its own pages are, and holds them long enough for `exec`'s
//! sampler to see them.

use std::time::{Duration, Instant};

use topo::SysRoot;

use crate::numa_maps::{self, NumaSample};
use crate::proc;

/// What the touch workload did.
#[derive(Debug, Clone)]
pub struct TouchReport {
    pub bytes: usize,
    /// Time to fault in and write every byte.
    pub seconds: f64,
    /// `bytes` / seconds / 1e9 (page faults included: a placement check,
    /// not a bandwidth measurement).
    pub gb_per_s: f64,
    /// This process's own `numa_maps` while the buffer was held.
    pub own_pages: NumaSample,
    /// A checksum of the read pass, so it cannot be optimised away.
    pub checksum: u64,
}

/// Allocates `bytes`, writes every byte, reads one byte per page, reads its own
/// `numa_maps` (procfs under `root`), then sleeps `hold` with the buffer
/// resident.
pub fn touch(root: &SysRoot, bytes: usize, hold: Duration) -> TouchReport {
    let t0 = Instant::now();
    let mut buf = vec![0u8; bytes];
    // every byte written (the first write of each page faults it in under
    // the inherited policy), then one byte per page read back
    buf.fill(0x5a);
    let page = place::base_page_size();
    let checksum = buf.chunks(page).fold(0u64, |a, c| a.wrapping_add(c[0] as u64));
    let seconds = t0.elapsed().as_secs_f64();
    let own_pages = proc::numa_maps(root, std::process::id() as i32)
        .map(|t| numa_maps::parse(&t))
        .unwrap_or_default();
    std::thread::sleep(hold);
    std::hint::black_box(&buf);
    TouchReport {
        bytes,
        seconds,
        gb_per_s: if seconds > 0.0 { bytes as f64 / seconds / 1e9 } else { 0.0 },
        own_pages,
        checksum,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_memory_is_resident_in_our_own_numa_maps() {
        let r = touch(&SysRoot::live(), 8 << 20, Duration::ZERO);
        let anon: u64 = r.own_pages.values().map(|k| k.anon_kib).sum();
        assert!(anon >= 8 << 10, "anon {anon} KiB < 8 MiB");
        assert!(r.checksum > 0 && r.gb_per_s > 0.0);
    }
}
