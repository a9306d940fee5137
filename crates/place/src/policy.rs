//! NUMA memory policies: process-wide (`set_mempolicy`) and per address
//! range (`mbind`), plus reading them back (`get_mempolicy`).
//!
//! Semantics follow set_mempolicy(2), mbind(2) and the kernel's
//! `Documentation/admin-guide/mm/numa_memory_policy.rst`: a policy decides
//! where pages are allocated at first touch (fault); it does not move pages
//! that already exist unless `mbind` is asked to (`MPOL_MF_MOVE`).

use std::os::raw::{c_int, c_void};

use serde::{Deserialize, Serialize};
use topo::{NodeSet, SysRoot};

use crate::error::{PlaceError, Result};
use crate::sys::{self, Mask, NODE_MASK_BITS};

/// Where new pages go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MemPolicy {
    /// Fall back to the next level (range -> task -> system default, which is
    /// local allocation).
    Default,
    /// Allocate on the node of the CPU that touches the page (`MPOL_LOCAL`).
    Local,
    /// Only these nodes; never fall back (`MPOL_BIND`). Pages go to the
    /// nearest node of the set with free memory.
    Bind(NodeSet),
    /// This node first, others when it is full (`MPOL_PREFERRED`).
    Preferred(u32),
    /// These nodes first, others when they are full (`MPOL_PREFERRED_MANY`,
    /// Linux 5.15+).
    PreferredMany(NodeSet),
    /// Page by page round-robin over the set (`MPOL_INTERLEAVE`).
    Interleave(NodeSet),
    /// Round-robin weighted by `/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`
    /// (`MPOL_WEIGHTED_INTERLEAVE`, Linux 6.9+).
    WeightedInterleave(NodeSet),
}

impl MemPolicy {
    /// The kernel's mode number (`MPOL_*`).
    pub fn mode(&self) -> i32 {
        match self {
            MemPolicy::Default => sys::MPOL_DEFAULT,
            MemPolicy::Local => sys::MPOL_LOCAL,
            MemPolicy::Bind(_) => sys::MPOL_BIND,
            MemPolicy::Preferred(_) => sys::MPOL_PREFERRED,
            MemPolicy::PreferredMany(_) => sys::MPOL_PREFERRED_MANY,
            MemPolicy::Interleave(_) => sys::MPOL_INTERLEAVE,
            MemPolicy::WeightedInterleave(_) => sys::MPOL_WEIGHTED_INTERLEAVE,
        }
    }

    /// The short name used in flags and JSON: `default`, `local`, `bind`,
    /// `preferred`, `preferred-many`, `interleave`, `weighted-interleave`.
    pub fn name(&self) -> &'static str {
        match self {
            MemPolicy::Default => "default",
            MemPolicy::Local => "local",
            MemPolicy::Bind(_) => "bind",
            MemPolicy::Preferred(_) => "preferred",
            MemPolicy::PreferredMany(_) => "preferred-many",
            MemPolicy::Interleave(_) => "interleave",
            MemPolicy::WeightedInterleave(_) => "weighted-interleave",
        }
    }

    /// The nodes the policy names (empty for `Default` and `Local`).
    pub fn nodes(&self) -> NodeSet {
        match self {
            MemPolicy::Default | MemPolicy::Local => NodeSet::new(),
            MemPolicy::Preferred(n) => [*n].into_iter().collect(),
            MemPolicy::Bind(s)
            | MemPolicy::PreferredMany(s)
            | MemPolicy::Interleave(s)
            | MemPolicy::WeightedInterleave(s) => s.clone(),
        }
    }

    /// Builds a policy from its [`name`](Self::name) and node set (a
    /// `preferred` policy takes exactly one node).
    pub fn from_name(name: &str, nodes: &NodeSet) -> Result<MemPolicy> {
        let need_nodes = |p: fn(NodeSet) -> MemPolicy| {
            if nodes.is_empty() {
                Err(PlaceError::bad_spec(name, "this policy needs a non-empty node set"))
            } else {
                Ok(p(nodes.clone()))
            }
        };
        match name {
            "default" => Ok(MemPolicy::Default),
            "local" => Ok(MemPolicy::Local),
            "bind" | "membind" => need_nodes(MemPolicy::Bind),
            "preferred-many" => need_nodes(MemPolicy::PreferredMany),
            "interleave" => need_nodes(MemPolicy::Interleave),
            "weighted-interleave" | "weighted" => need_nodes(MemPolicy::WeightedInterleave),
            "preferred" => match (nodes.len(), nodes.first()) {
                (1, Some(n)) => Ok(MemPolicy::Preferred(n)),
                _ => Err(PlaceError::bad_spec(
                    name,
                    format!("preferred takes exactly one node, got '{nodes}' (use preferred-many)"),
                )),
            },
            _ => Err(PlaceError::bad_spec(
                name,
                "unknown policy (expected default, local, bind, preferred, preferred-many, \
                 interleave, weighted-interleave)",
            )),
        }
    }

    fn mask(&self) -> Option<Mask> {
        match self {
            MemPolicy::Default | MemPolicy::Local => None,
            _ => Some(Mask::from_set(&self.nodes(), NODE_MASK_BITS)),
        }
    }

    fn describe(&self) -> String {
        let nodes = self.nodes();
        if nodes.is_empty() {
            self.name().to_string()
        } else {
            format!("{} nodes {}", self.name(), nodes)
        }
    }

    fn from_kernel(mode: c_int, mask: &Mask) -> Result<MemPolicy> {
        let nodes = mask.to_set();
        Ok(match mode & !sys::MPOL_MODE_FLAGS {
            sys::MPOL_DEFAULT => MemPolicy::Default,
            sys::MPOL_LOCAL => MemPolicy::Local,
            sys::MPOL_BIND => MemPolicy::Bind(nodes),
            // Old kernels report local allocation as preferred with no node.
            sys::MPOL_PREFERRED => match nodes.first() {
                Some(n) => MemPolicy::Preferred(n),
                None => MemPolicy::Local,
            },
            sys::MPOL_PREFERRED_MANY => MemPolicy::PreferredMany(nodes),
            sys::MPOL_INTERLEAVE => MemPolicy::Interleave(nodes),
            sys::MPOL_WEIGHTED_INTERLEAVE => MemPolicy::WeightedInterleave(nodes),
            m => {
                return Err(PlaceError::Unsupported {
                    feature: "get_mempolicy mode",
                    why: format!("the kernel reported mode {m}, which numaprobe does not know"),
                })
            }
        })
    }

    /// Turns an EINVAL for a mode the kernel may not know into a clear error.
    fn explain_einval(&self, syscall: &'static str, err: std::io::Error) -> PlaceError {
        if err.raw_os_error() == Some(libc::EINVAL) {
            match self {
                MemPolicy::PreferredMany(_) if !kernel_at_least(&SysRoot::live(), 5, 15) => {
                    return PlaceError::Unsupported {
                        feature: "preferred-many policy (MPOL_PREFERRED_MANY)",
                        why: format!(
                            "it needs Linux 5.15 or later; this kernel is {}; use preferred or bind",
                            kernel_release(&SysRoot::live()).unwrap_or_else(|| "unknown".into())
                        ),
                    }
                }
                MemPolicy::WeightedInterleave(_) if !supports_weighted_interleave(&SysRoot::live()) => {
                    return weighted_unsupported(&SysRoot::live())
                }
                _ => {}
            }
        }
        PlaceError::Syscall { syscall, what: self.describe(), source: err }
    }
}

/// Serialises as `{"mode": "bind", "nodes": "0-1"}`.
impl Serialize for MemPolicy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PolicyJson { mode: self.name().to_string(), nodes: self.nodes() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for MemPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = PolicyJson::deserialize(d)?;
        MemPolicy::from_name(&j.mode, &j.nodes).map_err(serde::de::Error::custom)
    }
}

#[derive(Serialize, Deserialize)]
struct PolicyJson {
    mode: String,
    #[serde(default)]
    nodes: NodeSet,
}

impl std::fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

fn weighted_unsupported(root: &SysRoot) -> PlaceError {
    PlaceError::Unsupported {
        feature: "weighted interleave (MPOL_WEIGHTED_INTERLEAVE)",
        why: format!(
            "it needs Linux 6.9 or later ({} is absent; this kernel is {}); use interleave instead",
            root.path(WEIGHTED_DIR).display(),
            kernel_release(root).unwrap_or_else(|| "unknown".into())
        ),
    }
}

const WEIGHTED_DIR: &str = "sys/kernel/mm/mempolicy/weighted_interleave";

/// The kernel release ([`topo::read::kernel_release`]), when readable.
fn kernel_release(root: &SysRoot) -> Option<String> {
    topo::read::kernel_release(root).ok().flatten()
}

/// True when the kernel release is at least `major.minor` (unknown: true,
/// so that the syscall itself decides).
pub fn kernel_at_least(root: &SysRoot, major: u32, minor: u32) -> bool {
    match kernel_release(root).as_deref().and_then(parse_release) {
        Some(v) => v >= (major, minor),
        None => true,
    }
}

fn parse_release(s: &str) -> Option<(u32, u32)> {
    let mut it = s.split(|c: char| !c.is_ascii_digit());
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// True when `/sys/kernel/mm/mempolicy/weighted_interleave/` exists
/// (Linux 6.9+).
pub fn supports_weighted_interleave(root: &SysRoot) -> bool {
    root.path(WEIGHTED_DIR).is_dir()
}

/// Which optional policy modes this kernel supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PolicySupport {
    /// `MPOL_PREFERRED_MANY` (Linux 5.15+; judged from the release).
    pub preferred_many: bool,
    /// `MPOL_WEIGHTED_INTERLEAVE` (Linux 6.9+; judged from sysfs).
    pub weighted_interleave: bool,
}

/// What this kernel supports; see [`PolicySupport`].
pub fn policy_support(root: &SysRoot) -> PolicySupport {
    PolicySupport {
        preferred_many: kernel_at_least(root, 5, 15),
        weighted_interleave: supports_weighted_interleave(root),
    }
}

/// Fails with a clear [`PlaceError::Unsupported`] when `policy` needs a
/// newer kernel than the one under `root`.
pub fn ensure_supported(policy: &MemPolicy, root: &SysRoot) -> Result<()> {
    let s = policy_support(root);
    match policy {
        MemPolicy::WeightedInterleave(_) if !s.weighted_interleave => {
            Err(weighted_unsupported(root))
        }
        MemPolicy::PreferredMany(_) if !s.preferred_many => Err(PlaceError::Unsupported {
            feature: "preferred-many policy (MPOL_PREFERRED_MANY)",
            why: format!(
                "it needs Linux 5.15 or later; this kernel is {}",
                kernel_release(root).unwrap_or_else(|| "unknown".into())
            ),
        }),
        _ => Ok(()),
    }
}

/// The policy to use on this kernel: `policy` itself when supported, else
/// the nearest older mode with a sentence saying so (weighted interleave
/// falls back to interleave over the same nodes, preferred-many to
/// preferred on its first node).
pub fn with_fallback(policy: &MemPolicy, root: &SysRoot) -> (MemPolicy, Option<String>) {
    match ensure_supported(policy, root) {
        Ok(()) => (policy.clone(), None),
        Err(e) => {
            let fallback = match policy {
                MemPolicy::WeightedInterleave(s) => MemPolicy::Interleave(s.clone()),
                MemPolicy::PreferredMany(s) => MemPolicy::Preferred(s.first().unwrap_or(0)),
                p => p.clone(),
            };
            let note = format!("{e}; using {fallback} instead");
            (fallback, Some(note))
        }
    }
}

/// The weights of weighted interleave per node
/// (`/sys/kernel/mm/mempolicy/weighted_interleave/nodeN`); `None` when the
/// kernel has none.
pub fn weighted_interleave_weights(
    root: &SysRoot,
) -> Result<Option<std::collections::BTreeMap<u32, u32>>> {
    if !supports_weighted_interleave(root) {
        return Ok(None);
    }
    let mut out = std::collections::BTreeMap::new();
    for id in root.list_ids(WEIGHTED_DIR, "node")? {
        if let Some(w) = root.read_u64(&format!("{WEIGHTED_DIR}/node{id}"))? {
            out.insert(id, w as u32);
        }
    }
    Ok(Some(out))
}

/// Sets the memory policy of the calling thread (`set_mempolicy(2)`).
///
/// Linux keeps this policy per thread: it applies to the calling thread,
/// to threads it creates afterwards, and to children it forks, which is
/// what "process policy" means in practice when called before spawning.
pub fn set_process_policy(policy: &MemPolicy) -> Result<()> {
    let mask = policy.mask();
    if sys::set_mempolicy(policy.mode(), mask.as_ref()) < 0 {
        return Err(policy.explain_einval("set_mempolicy", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The calling thread's memory policy (`get_mempolicy(2)` with no flags).
pub fn current_process_policy() -> Result<MemPolicy> {
    let mut mode: c_int = 0;
    let mut mask = Mask::zeroed(NODE_MASK_BITS);
    if sys::get_mempolicy(&mut mode, Some(&mut mask), std::ptr::null_mut(), 0) < 0 {
        return Err(PlaceError::last_os("get_mempolicy", "thread policy"));
    }
    MemPolicy::from_kernel(mode, &mask)
}

/// The policy that governs the page at `addr` (`MPOL_F_ADDR`): the range's
/// own policy when `mbind` set one, else `Default`.
pub fn policy_at(addr: *const u8) -> Result<MemPolicy> {
    let mut mode: c_int = 0;
    let mut mask = Mask::zeroed(NODE_MASK_BITS);
    if sys::get_mempolicy(&mut mode, Some(&mut mask), addr as *mut c_void, sys::MPOL_F_ADDR) < 0 {
        return Err(PlaceError::last_os("get_mempolicy", format!("MPOL_F_ADDR at {addr:p}")));
    }
    MemPolicy::from_kernel(mode, &mask)
}

/// The node holding the page at `addr` (`MPOL_F_NODE | MPOL_F_ADDR`); the
/// kernel faults the page in if it is not present yet.
pub fn node_of_address(addr: *const u8) -> Result<u32> {
    let mut node: c_int = 0;
    if sys::get_mempolicy(&mut node, None, addr as *mut c_void, sys::MPOL_F_NODE | sys::MPOL_F_ADDR)
        < 0
    {
        return Err(PlaceError::last_os("get_mempolicy", format!("MPOL_F_NODE at {addr:p}")));
    }
    Ok(node as u32)
}

/// The nodes this thread may allocate on (`MPOL_F_MEMS_ALLOWED`): the
/// cgroup cpuset's `mems`.
pub fn mems_allowed() -> Result<NodeSet> {
    let mut mode: c_int = 0;
    let mut mask = Mask::zeroed(NODE_MASK_BITS);
    if sys::get_mempolicy(
        &mut mode,
        Some(&mut mask),
        std::ptr::null_mut(),
        sys::MPOL_F_MEMS_ALLOWED,
    ) < 0
    {
        return Err(PlaceError::last_os("get_mempolicy", "MPOL_F_MEMS_ALLOWED"));
    }
    Ok(mask.to_set())
}

/// How `bind_range` treats pages that already exist in the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Leave them where they are; only new pages follow the policy.
    Leave,
    /// Migrate pages that do not follow the policy (`MPOL_MF_MOVE`), and for
    /// `Bind` fail with EIO when one cannot be moved (`MPOL_MF_STRICT`).
    #[default]
    Move,
}

/// Sets the policy of the page-aligned range `ptr..ptr+len` (`mbind(2)`).
///
/// Pages touched later follow `policy`. With [`Existing::Move`], pages
/// already present are migrated (`MPOL_MF_MOVE`, plus `MPOL_MF_STRICT` for
/// `Bind`, so that a page that cannot be moved is an error rather than a
/// silent miss). `Default` removes the range's policy.
///
/// # Safety
/// `ptr..ptr+len` must be memory this caller owns (e.g. a [`crate::Buffer`]);
/// the kernel validates the range but migrating other code's pages is
/// surprising.
pub unsafe fn bind_range(
    ptr: *mut u8,
    len: usize,
    policy: &MemPolicy,
    existing: Existing,
) -> Result<()> {
    let page = sys::page_size();
    if !(ptr as usize).is_multiple_of(page) {
        return Err(PlaceError::InvalidArgument(format!(
            "mbind: address {ptr:p} is not aligned to the {page}-byte page size"
        )));
    }
    let flags = match (existing, policy) {
        (Existing::Leave, _) | (_, MemPolicy::Default) => 0,
        (Existing::Move, MemPolicy::Bind(_)) => sys::MPOL_MF_MOVE | sys::MPOL_MF_STRICT,
        (Existing::Move, _) => sys::MPOL_MF_MOVE,
    };
    let mask = policy.mask();
    // SAFETY: the caller vouches for the range; the mask lives across the call.
    let r = unsafe { sys::mbind(ptr as *mut c_void, len, policy.mode(), mask.as_ref(), flags) };
    if r < 0 {
        let err = std::io::Error::last_os_error();
        return Err(match policy.explain_einval("mbind", err) {
            PlaceError::Syscall { syscall, what, source } => PlaceError::Syscall {
                syscall,
                what: format!("{what}, {len} bytes at {ptr:p}"),
                source,
            },
            e => e,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> NodeSet {
        NodeSet::parse_list(s).unwrap()
    }

    #[test]
    fn names_round_trip_and_preferred_needs_one_node() {
        for p in [
            MemPolicy::Default,
            MemPolicy::Local,
            MemPolicy::Bind(set("0-1")),
            MemPolicy::Preferred(2),
            MemPolicy::PreferredMany(set("0,2")),
            MemPolicy::Interleave(set("0-3")),
            MemPolicy::WeightedInterleave(set("1")),
        ] {
            assert_eq!(MemPolicy::from_name(p.name(), &p.nodes()).unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<MemPolicy>(&json).unwrap(), p, "{json}");
        }
        assert!(MemPolicy::from_name("preferred", &set("0-1")).is_err());
        assert!(MemPolicy::from_name("bind", &set("")).is_err());
        let e = MemPolicy::from_name("bogus", &set("0")).unwrap_err().to_string();
        assert!(e.contains("bogus") && e.contains("interleave"), "{e}");
        assert_eq!(
            serde_json::to_string(&MemPolicy::Bind(set("0-1"))).unwrap(),
            r#"{"mode":"bind","nodes":"0-1"}"#
        );
    }

    #[test]
    fn release_versions_compare() {
        assert_eq!(parse_release("6.18.44-fc-v595"), Some((6, 18)));
        assert_eq!(parse_release("5.15.0-91-generic"), Some((5, 15)));
        assert_eq!(parse_release("garbage"), None);
    }

    #[test]
    fn old_kernel_capture_refuses_weighted_interleave_clearly() {
        let dir = std::env::temp_dir().join(format!("np-place-oldk-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc/sys/kernel")).unwrap();
        std::fs::write(dir.join("proc/sys/kernel/osrelease"), "5.10.0-old\n").unwrap();
        let root = SysRoot::new(&dir).unwrap();
        let s = policy_support(&root);
        assert!(!s.weighted_interleave && !s.preferred_many);
        let e = ensure_supported(&MemPolicy::WeightedInterleave(set("0")), &root)
            .unwrap_err()
            .to_string();
        assert!(e.contains("6.9") && e.contains("5.10.0-old"), "{e}");
        let e =
            ensure_supported(&MemPolicy::PreferredMany(set("0")), &root).unwrap_err().to_string();
        assert!(e.contains("5.15"), "{e}");
        assert!(ensure_supported(&MemPolicy::Bind(set("0")), &root).is_ok());
        let (p, note) = with_fallback(&MemPolicy::WeightedInterleave(set("0-1")), &root);
        assert_eq!(p, MemPolicy::Interleave(set("0-1")));
        assert!(note.unwrap().contains("using interleave nodes 0-1 instead"));
        let (p, _) = with_fallback(&MemPolicy::PreferredMany(set("2-3")), &root);
        assert_eq!(p, MemPolicy::Preferred(2));
        assert_eq!(with_fallback(&MemPolicy::Local, &root), (MemPolicy::Local, None));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // The thread policy is per thread, so each test sets it on its own
    // thread and restores it.
    #[test]
    fn thread_policy_round_trips_through_the_kernel() {
        std::thread::spawn(|| {
            set_process_policy(&MemPolicy::Bind(set("0"))).unwrap();
            assert_eq!(current_process_policy().unwrap(), MemPolicy::Bind(set("0")));
            set_process_policy(&MemPolicy::Interleave(set("0"))).unwrap();
            assert_eq!(current_process_policy().unwrap(), MemPolicy::Interleave(set("0")));
            set_process_policy(&MemPolicy::Preferred(0)).unwrap();
            assert_eq!(current_process_policy().unwrap(), MemPolicy::Preferred(0));
            set_process_policy(&MemPolicy::Default).unwrap();
            assert_eq!(current_process_policy().unwrap(), MemPolicy::Default);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn binding_to_a_node_that_does_not_exist_names_the_syscall_and_nodes() {
        std::thread::spawn(|| {
            let e = set_process_policy(&MemPolicy::Bind(set("1000"))).unwrap_err();
            let msg = e.to_string();
            assert!(msg.contains("set_mempolicy") && msg.contains("1000"), "{msg}");
            assert_eq!(current_process_policy().unwrap(), MemPolicy::Default);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn mems_allowed_includes_node_zero() {
        assert!(mems_allowed().unwrap().contains(0));
    }
}
