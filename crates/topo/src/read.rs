//! The one reader of each kernel file that several crates need: a node's
//! and the machine's `meminfo`, the kernel release, and this thread's CPU
//! affinity. Discovery, the placement layer and the audit call these
//! instead of reading the files themselves.

use std::collections::BTreeMap;
use std::io;

use crate::fs::{SysRoot, TopoError};
use crate::idset::{CpuSet, MAX_ID};
use crate::parse;

/// `/proc/meminfo`, or a node's `meminfo` (`Node 0 MemTotal: 123 kB`),
/// parsed with [`parse::parse_meminfo`]: field name -> bytes (page counts
/// as they are). `None` when the file is absent; a malformed file is an
/// error naming it and the line.
pub fn meminfo(root: &SysRoot, rel: &str) -> Result<Option<BTreeMap<String, u64>>, TopoError> {
    let Some(text) = root.read_optional(rel)? else { return Ok(None) };
    parse::parse_meminfo(&text)
        .map(Some)
        .map_err(|e| TopoError::malformed(root.path(rel), e.to_string()))
}

/// The path of node `node`'s `meminfo` under a root.
pub fn node_meminfo_rel(node: u32) -> String {
    format!("sys/devices/system/node/node{node}/meminfo")
}

/// Node `node`'s `meminfo`; see [`meminfo`].
pub fn node_meminfo(root: &SysRoot, node: u32) -> Result<Option<BTreeMap<String, u64>>, TopoError> {
    meminfo(root, &node_meminfo_rel(node))
}

/// The kernel release: `/proc/sys/kernel/osrelease`, else the word after
/// `version` in `/proc/version`; `None` when neither says.
pub fn kernel_release(root: &SysRoot) -> Result<Option<String>, TopoError> {
    let trimmed = |s: String| s.trim_end_matches(['\0', '\n', ' ']).trim().to_string();
    match root.read_optional("proc/sys/kernel/osrelease")?.map(trimmed) {
        Some(s) if !s.is_empty() => Ok(Some(s)),
        _ => Ok(root.read_optional("proc/version")?.and_then(|s| parse::parse_proc_version(&s))),
    }
}

/// The OS distribution as `os-release(5)` names it: `PRETTY_NAME`, else
/// `NAME VERSION_ID` (or `NAME` alone), from `etc/os-release`, else
/// `usr/lib/os-release`, under the root (so a capture or a test's fake
/// root gives its own); `None` when neither file is there or names
/// nothing. Values may be quoted; shell escapes (`\"`) are undone; control
/// characters are dropped and the name is cut at 200 characters.
pub fn os_release(root: &SysRoot) -> Result<Option<String>, TopoError> {
    for rel in ["etc/os-release", "usr/lib/os-release"] {
        if let Some(text) = root.read_optional(rel)? {
            return Ok(parse_os_release(&text));
        }
    }
    Ok(None)
}

/// The name [`os_release`] gives from the file's text.
pub fn parse_os_release(text: &str) -> Option<String> {
    let mut fields: BTreeMap<&str, String> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        let v = v.trim();
        let v = match v.as_bytes() {
            [q @ (b'"' | b'\''), .., e] if q == e && v.len() >= 2 => &v[1..v.len() - 1],
            _ => v,
        };
        let mut out = String::new();
        let mut chars = v.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                c if c.is_control() => {}
                c => out.push(c),
            }
        }
        fields.insert(k.trim(), out.trim().to_string());
    }
    let get = |k: &str| fields.get(k).filter(|v| !v.is_empty()).cloned();
    let name = get("PRETTY_NAME").or_else(|| {
        let n = get("NAME")?;
        Some(get("VERSION_ID").map_or(n.clone(), |v| format!("{n} {v}")))
    })?;
    Some(name.chars().take(200).collect())
}

/// Bits of the first affinity mask asked for: enough for any kernel's
/// `nr_cpu_ids` we are likely to meet; doubled while the kernel says the
/// mask is too small (EINVAL).
const AFFINITY_START_BITS: usize = 4096;

/// The calling thread's CPU affinity (`sched_getaffinity`), with a mask
/// that grows until the kernel accepts it, so machines with more CPUs than
/// glibc's fixed `cpu_set_t` (1024) are read whole.
pub fn affinity() -> io::Result<CpuSet> {
    let mut bits = AFFINITY_START_BITS;
    loop {
        let mut words = vec![0u64; bits / 64];
        // SAFETY: the kernel writes at most `words.len() * 8` bytes into a
        // live buffer of that size.
        let r = unsafe {
            libc::syscall(
                libc::SYS_sched_getaffinity,
                0 as libc::c_int,
                words.len() * 8,
                words.as_mut_ptr(),
            )
        };
        if r >= 0 {
            let mut set = CpuSet::new();
            for (w, word) in words.iter().enumerate() {
                for b in 0..64 {
                    if word & (1u64 << b) != 0 {
                        set.insert((w * 64 + b) as u32);
                    }
                }
            }
            return Ok(set);
        }
        let err = io::Error::last_os_error();
        // EINVAL: our mask is smaller than the kernel's nr_cpu_ids.
        if err.raw_os_error() == Some(libc::EINVAL) && bits < (MAX_ID as usize) * 2 {
            bits *= 2;
            continue;
        }
        return Err(err);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root(tag: &str, files: &[(&str, &str)]) -> (std::path::PathBuf, SysRoot) {
        let dir = std::env::temp_dir().join(format!("np-topo-read-{tag}-{}", std::process::id()));
        for (rel, text) in files {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        let root = SysRoot::new(&dir).unwrap();
        (dir, root)
    }

    #[test]
    fn meminfo_of_a_node_in_bytes_absent_or_malformed() {
        let (dir, root) = fake_root(
            "meminfo",
            &[
                (&node_meminfo_rel(0), "Node 0 MemTotal: 1024 kB\nNode 0 MemFree: 512 kB\n"),
                (&node_meminfo_rel(1), "Node 1 MemTotal: lots kB\n"),
            ],
        );
        let m = node_meminfo(&root, 0).unwrap().unwrap();
        assert_eq!((m["MemTotal"], m["MemFree"]), (1 << 20, 512 << 10));
        assert_eq!(node_meminfo(&root, 2).unwrap(), None);
        let e = node_meminfo(&root, 1).unwrap_err().to_string();
        assert!(e.contains("node1/meminfo") && e.contains("line 1"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn os_release_names_the_distribution() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::new(dir.path()).unwrap();
        assert_eq!(os_release(&root).unwrap(), None);
        std::fs::create_dir_all(dir.path().join("usr/lib")).unwrap();
        std::fs::write(
            dir.path().join("usr/lib/os-release"),
            "NAME=\"Rocky Linux\"\nVERSION_ID=\"9.3\"\n",
        )
        .unwrap();
        assert_eq!(os_release(&root).unwrap().as_deref(), Some("Rocky Linux 9.3"));
        // etc/os-release wins; PRETTY_NAME wins; quotes and escapes undone
        std::fs::create_dir_all(dir.path().join("etc")).unwrap();
        std::fs::write(
            dir.path().join("etc/os-release"),
            "# comment\nNAME=Debian\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n",
        )
        .unwrap();
        assert_eq!(os_release(&root).unwrap().as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
        assert_eq!(
            parse_os_release("PRETTY_NAME='A \\\"b\\\" \x1bc'").as_deref(),
            Some("A \"b\" c")
        );
        assert_eq!(parse_os_release("NAME=Arch\n").as_deref(), Some("Arch"));
        assert_eq!(parse_os_release("garbage\n\0\0"), None);
        assert_eq!(
            parse_os_release(&format!("PRETTY_NAME={}", "x".repeat(5000))).unwrap().len(),
            200
        );
    }

    #[test]
    fn kernel_release_from_osrelease_else_proc_version() {
        let (dir, root) = fake_root(
            "release",
            &[
                ("proc/sys/kernel/osrelease", "6.1.0-18-amd64\n"),
                ("proc/version", "Linux version 5.0.0 (x@y) (gcc 9)\n"),
            ],
        );
        assert_eq!(kernel_release(&root).unwrap().as_deref(), Some("6.1.0-18-amd64"));
        std::fs::write(dir.join("proc/sys/kernel/osrelease"), "\n").unwrap();
        assert_eq!(kernel_release(&root).unwrap().as_deref(), Some("5.0.0"));
        std::fs::remove_file(dir.join("proc/version")).unwrap();
        assert_eq!(kernel_release(&root).unwrap(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn affinity_of_this_thread_matches_proc_status() {
        let mine = affinity().unwrap();
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let listed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|l| CpuSet::parse_list(l.trim()).unwrap())
            .unwrap();
        assert_eq!(mine, listed);
        assert!(!mine.is_empty());
    }
}
