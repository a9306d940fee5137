//! The processes of a run as procfs shows them, read through [`SysRoot`]:
//! the process list, `/proc/PID/stat` (one parser, [`parse_stat`]),
//! `/proc/PID/environ` and `/proc/PID/numa_maps`.
//!
//! Processes come and go while they are read: one that exited between the
//! listing and the read, or whose file this user may not read, is simply
//! not there (`None`), never an error.

use topo::SysRoot;

/// The fields of a `/proc/PID/stat` line that supervising a run needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub pid: i32,
    /// The command name (`comm`), at most 15 bytes, any characters.
    pub comm: String,
    /// `R`, `S`, `D`, `Z`, `X`...
    pub state: char,
    pub ppid: i32,
    /// The process group.
    pub pgrp: i32,
}

impl Stat {
    /// Exited and waiting to be reaped (`Z`), or dead (`X`): nothing left
    /// to signal.
    pub fn is_gone(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Parses one `/proc/PID/stat` line. The command name sits between the
/// first `(` and the last `)` and may itself hold spaces and parentheses,
/// so the fields after it are counted from the last `)` (proc(5)).
pub fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    let pid = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_string();
    let mut f = line[close + 1..].split_whitespace();
    let mut one_char = f.next()?.chars();
    let state = one_char.next()?;
    if one_char.next().is_some() {
        return None;
    }
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    Some(Stat { pid, comm, state, ppid, pgrp })
}

/// The pids under `proc/` (empty when it cannot be listed).
pub fn pids(root: &SysRoot) -> Vec<i32> {
    let names = root.list_dir("proc").unwrap_or_default();
    names.iter().filter_map(|n| n.parse().ok()).collect()
}

/// Process `pid`'s `stat`, parsed.
pub fn stat(root: &SysRoot, pid: i32) -> Option<Stat> {
    parse_stat(&root.read_optional(&format!("proc/{pid}/stat")).ok()??)
}

/// Process `pid`'s environment: `NAME=value` entries, each ended by a NUL.
pub fn environ(root: &SysRoot, pid: i32) -> Option<Vec<u8>> {
    root.read_optional_bytes(&format!("proc/{pid}/environ")).ok()?
}

/// The text of process `pid`'s `numa_maps`.
pub fn numa_maps(root: &SysRoot, pid: i32) -> Option<String> {
    root.read_optional(&format!("proc/{pid}/numa_maps")).ok()?
}

/// The processes of `root` that `keep` selects, parsed, leaving out those
/// already gone ([`Stat::is_gone`]).
pub fn live_processes(root: &SysRoot, keep: impl Fn(&Stat) -> bool) -> Vec<Stat> {
    pids(root)
        .into_iter()
        .filter_map(|p| stat(root, p))
        .filter(|s| !s.is_gone() && keep(s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_read_as_the_kernel_writes_them() {
        let s = parse_stat("1234 (bash) S 1 999 998 0 -1 4194560 0").unwrap();
        assert_eq!(s, Stat { pid: 1234, comm: "bash".into(), state: 'S', ppid: 1, pgrp: 999 });
        assert!(!s.is_gone());
    }

    #[test]
    fn a_command_name_with_spaces_and_parentheses_does_not_shift_the_fields() {
        // comm is what the program chose (prctl PR_SET_NAME): ") Z 5 6" in
        // it must not be read as the state and the pids.
        let s = parse_stat("42 (a b) Z 5 6) R 7 42 40 0").unwrap();
        assert_eq!((s.comm.as_str(), s.state, s.ppid, s.pgrp), ("a b) Z 5 6", 'R', 7, 42));
        let s = parse_stat("43 ((sd-pam)) Z 1 43 43 0").unwrap();
        assert_eq!((s.comm.as_str(), s.state, s.pgrp), ("(sd-pam)", 'Z', 43));
        assert!(s.is_gone());
        let s = parse_stat("44 () X 1 44 44").unwrap();
        assert_eq!((s.comm.as_str(), s.is_gone()), ("", true));
    }

    #[test]
    fn malformed_lines_are_none() {
        for bad in [
            "",
            "garbage",
            "12 (x S 1 2 3",
            "12 x) S 1 2",
            "x (y) S 1 2 3",
            "12 (y) S",
            "12 (y) S 1",
            "12 (y) S one 2",
            "12 (y) SS 1 2",
            ") 12 ( S 1 2",
        ] {
            assert_eq!(parse_stat(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn processes_are_read_under_the_root() {
        let d = tempfile::tempdir().unwrap();
        let mk = |pid: &str, stat: &str, env: &[u8]| {
            let p = d.path().join("proc").join(pid);
            std::fs::create_dir_all(&p).unwrap();
            std::fs::write(p.join("stat"), stat).unwrap();
            std::fs::write(p.join("environ"), env).unwrap();
        };
        mk("7", "7 (run me) S 1 7 7 0\n", b"A=1\0B=\xff\0");
        mk("8", "8 (zombie) Z 7 7 7 0\n", b"");
        mk("9", "9 (other) R 1 9 9 0\n", b"");
        mk("self", "7 (run me) S 1 7 7 0\n", b"");
        std::fs::create_dir_all(d.path().join("proc/10")).unwrap(); // exited meanwhile
        let root = SysRoot::new(d.path()).unwrap();
        let mut all = pids(&root);
        all.sort_unstable();
        assert_eq!(all, [7, 8, 9, 10], "numbers only: `self` is not a process");
        assert_eq!(stat(&root, 7).unwrap().comm, "run me");
        assert_eq!(stat(&root, 10), None);
        assert_eq!(environ(&root, 7).unwrap(), b"A=1\0B=\xff\0", "not text, read as bytes");
        let group: Vec<i32> =
            live_processes(&root, |s| s.pgrp == 7).iter().map(|s| s.pid).collect();
        assert_eq!(group, [7], "the zombie of the group is left out");
    }
}
