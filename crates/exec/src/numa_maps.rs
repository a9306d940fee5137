//! Where a process's pages are: `/proc/PID/numa_maps` parsed into bytes
//! per node, split into anonymous memory (heap, stack, anonymous mappings)
//! and file-backed memory (binaries, libraries, page cache, shared memory).

use std::collections::BTreeMap;

/// KiB resident per node, anonymous and file-backed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeKib {
    pub anon_kib: u64,
    pub file_kib: u64,
}

/// One reading of one or more processes' `numa_maps`: node id -> KiB.
pub type NumaSample = BTreeMap<u32, NodeKib>;

/// Parses the text of `/proc/PID/numa_maps`. A mapping counts as file-backed
/// when it has `file=` (except anonymous huge pages, which the kernel shows
/// as `file=/anon_hugepage`); every other mapping is anonymous. `N<node>=`
/// counts pages of the mapping's `kernelpagesize_kB` (4 when absent). Lines
/// that do not parse are skipped: the file changes while it is read.
pub fn parse(text: &str) -> NumaSample {
    let mut out = NumaSample::new();
    for line in text.lines() {
        let mut fields = line.split_ascii_whitespace();
        // address and policy come first
        if fields.next().is_none() || fields.next().is_none() {
            continue;
        }
        let mut file = false;
        let mut page_kib = 4u64;
        let mut per_node: Vec<(u32, u64)> = Vec::new();
        for f in fields {
            if let Some(path) = f.strip_prefix("file=") {
                file = !path.starts_with("/anon_hugepage");
            } else if let Some(v) = f.strip_prefix("kernelpagesize_kB=") {
                page_kib = v.parse().unwrap_or(4);
            } else if let Some(rest) = f.strip_prefix('N') {
                if let Some((node, pages)) = rest.split_once('=') {
                    if let (Ok(node), Ok(pages)) = (node.parse(), pages.parse()) {
                        per_node.push((node, pages));
                    }
                }
            }
        }
        for (node, pages) in per_node {
            let e = out.entry(node).or_default();
            if file {
                e.file_kib += pages * page_kib;
            } else {
                e.anon_kib += pages * page_kib;
            }
        }
    }
    out
}

/// Resident KiB of a reading, anonymous and file, all nodes.
pub fn total_kib(s: &NumaSample) -> u64 {
    s.values().map(|k| k.anon_kib + k.file_kib).sum()
}

/// Adds `b` into `a`.
pub fn add(a: &mut NumaSample, b: &NumaSample) {
    for (node, kib) in b {
        let e = a.entry(*node).or_default();
        e.anon_kib += kib.anon_kib;
        e.file_kib += kib.file_kib;
    }
}

use results::exec::{NodePages, NumaPages};

/// The record of a reading: KiB and shares per node of `processes`'
/// fullest reading over `samples` reads.
pub fn numa_pages(sample: &NumaSample, samples: u32, processes: u32) -> NumaPages {
    let anon: u64 = sample.values().map(|k| k.anon_kib).sum();
    let all: u64 = sample.values().map(|k| k.anon_kib + k.file_kib).sum();
    let frac = |x: u64, of: u64| if of == 0 { 0.0 } else { x as f64 / of as f64 };
    NumaPages {
        samples,
        processes,
        nodes: sample
            .iter()
            .map(|(&node, k)| NodePages {
                node,
                anon_kib: k.anon_kib,
                file_kib: k.file_kib,
                anon_fraction: frac(k.anon_kib, anon),
                fraction: frac(k.anon_kib + k.file_kib, all),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines as Linux 6.x prints them (from real processes, addresses kept).
    const SAMPLE: &str = "\
55d0c2a00000 default file=/usr/bin/sysbench mapped=40 mapmax=2 N0=40 kernelpagesize_kB=4
55d0c2c5e000 default file=/usr/bin/sysbench anon=3 dirty=3 mapped=5 mapmax=2 N0=5 kernelpagesize_kB=4
55d0c3a1f000 default heap anon=33 dirty=33 active=0 N0=33 kernelpagesize_kB=4
7f1c40000000 bind:1 anon=262144 dirty=262144 active=0 N1=262144 kernelpagesize_kB=4
7f1c80000000 interleave:0-1 anon=1000 dirty=1000 N0=500 N1=500 kernelpagesize_kB=4
7f1cc0000000 default file=/anon_hugepage\\040(deleted) huge anon=2 dirty=2 N1=2 kernelpagesize_kB=2048
7f1cd0000000 default file=/dev/shm/x\\040y dirty=10 N0=10 kernelpagesize_kB=4
7f1ce0000000 default
7ffd5c1b2000 default stack anon=9 dirty=9 active=1 N0=9 kernelpagesize_kB=4
garbage
";

    #[test]
    fn sums_anon_and_file_kib_per_node() {
        let s = parse(SAMPLE);
        assert_eq!(s.len(), 2);
        // anon on N0: heap 33 + interleave 500 + stack 9 pages
        assert_eq!(s[&0].anon_kib, (33 + 500 + 9) * 4);
        // file on N0: 40 + 5 (COW pages of a file mapping count as file) + shm 10
        assert_eq!(s[&0].file_kib, (40 + 5 + 10) * 4);
        // N1: 1 GiB bound + 500 interleaved + two 2 MiB huge pages
        assert_eq!(s[&1].anon_kib, 262144 * 4 + 500 * 4 + 2 * 2048);
        assert_eq!(s[&1].file_kib, 0);
    }

    #[test]
    fn fractions_and_summary() {
        let mut s = NumaSample::new();
        s.insert(0, NodeKib { anon_kib: 100, file_kib: 300 });
        s.insert(1, NodeKib { anon_kib: 300, file_kib: 0 });
        let p = numa_pages(&s, 3, 1);
        assert_eq!(p.nodes[0].anon_fraction, 0.25);
        assert_eq!(p.nodes[1].anon_fraction, 0.75);
        assert!((p.nodes[0].fraction - 400.0 / 700.0).abs() < 1e-12);
        assert_eq!(p.anon_summary(), "N0 25% N1 75%");
        let mut twice = s.clone();
        add(&mut twice, &s);
        assert_eq!(twice[&1].anon_kib, 600);
        assert_eq!(total_kib(&twice), 1400);
        let empty = numa_pages(&NumaSample::new(), 0, 0);
        assert_eq!(empty.anon_summary(), "-");
    }

    #[test]
    fn reads_this_process() {
        // our own numa_maps has a heap and a stack on some node
        let root = topo::SysRoot::live();
        let text = crate::proc::numa_maps(&root, std::process::id() as i32).unwrap();
        let s = parse(&text);
        assert!(s.values().map(|k| k.anon_kib).sum::<u64>() > 0, "{text}");
    }
}
