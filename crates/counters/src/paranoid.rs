//! The kernel's `perf_event_paranoid` level: what the kernel lets a user
//! count. Read by the access probe and by the words an open error gets.

use topo::SysRoot;

/// `kernel.perf_event_paranoid` (`None` when the file is absent or
/// unreadable). -1: no restriction; 0: no raw tracepoints for users;
/// 1: no CPU-wide events for users; 2: users count their own user space
/// only (the kernel's default); 3 and above (Debian, Android patches):
/// users count nothing.
pub fn paranoid(root: &SysRoot) -> Option<i64> {
    root.read_optional("proc/sys/kernel/perf_event_paranoid")
        .ok()
        .flatten()
        .and_then(|s| s.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paranoid_is_read_under_a_root() {
        let dir = std::env::temp_dir().join(format!("np-paranoid-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/sys/kernel")).unwrap();
        let root = SysRoot::new(&dir).unwrap();
        assert_eq!(paranoid(&root), None, "absent");
        std::fs::write(dir.join("proc/sys/kernel/perf_event_paranoid"), "3\n").unwrap();
        assert_eq!(paranoid(&root), Some(3));
        std::fs::write(dir.join("proc/sys/kernel/perf_event_paranoid"), "-1\n").unwrap();
        assert_eq!(paranoid(&root), Some(-1));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
