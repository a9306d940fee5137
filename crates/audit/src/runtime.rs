//! Settings Linux can change at run time, for studies that alternate them
//! (`numaprobe study --vary`): read the value in force, check a value
//! against what the kernel offers before anything is written, apply it,
//! and put back exactly what was there (file by file), with the shell
//! commands that would do it by hand.
//!
//! | key | files (under the root) | values |
//! |---|---|---|
//! | `thp_enabled` | `sys/kernel/mm/transparent_hugepage/enabled` | the file's own list (`always`, `madvise`, `never`) |
//! | `thp_defrag` | `.../transparent_hugepage/defrag` | the file's own list |
//! | `numa_balancing` | `proc/sys/kernel/numa_balancing` | `0`, `1` (and `2`, `3`, memory tiering, from Linux 5.18) |
//! | `zone_reclaim_mode` | `proc/sys/vm/zone_reclaim_mode` | `0` to `7` (bits: reclaim, write, unmap) |
//! | `governor` | every `cpufreq/policyN/scaling_governor` | in every policy's `scaling_available_governors` |
//! | `epp` | every `cpufreq/policyN/energy_performance_preference` | in every policy's `energy_performance_available_preferences` |
//! | `boost` | `cpufreq/boost`, else `intel_pstate/no_turbo` (inverted), else every `cpufreq/policyN/boost` | `on`, `off` |
//! | `weighted_interleave` | `mm/mempolicy/weighted_interleave/nodeN` (then `auto` on restore) | a weight per node in node order, `3:1` (1 to 255) |
//!
//! Nothing here checks privileges beyond the files themselves: a file that
//! cannot be written (a read-only sysfs in a container) is refused before
//! anything is written.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::io::Write as _;

use topo::SysRoot;

const THP: &str = "sys/kernel/mm/transparent_hugepage";
const CPUFREQ: &str = "sys/devices/system/cpu/cpufreq";

/// A setting that can be changed at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Knob {
    ThpEnabled,
    ThpDefrag,
    NumaBalancing,
    ZoneReclaimMode,
    Governor,
    Epp,
    Boost,
    WeightedInterleave,
}

impl Knob {
    pub const ALL: [Knob; 8] = [
        Knob::ThpEnabled,
        Knob::ThpDefrag,
        Knob::NumaBalancing,
        Knob::ZoneReclaimMode,
        Knob::Governor,
        Knob::Epp,
        Knob::Boost,
        Knob::WeightedInterleave,
    ];

    /// The key users write (`--vary thp_enabled=...`), the same as the
    /// configuration field where there is one.
    pub fn key(self) -> &'static str {
        match self {
            Knob::ThpEnabled => "thp_enabled",
            Knob::ThpDefrag => "thp_defrag",
            Knob::NumaBalancing => "numa_balancing",
            Knob::ZoneReclaimMode => "zone_reclaim_mode",
            Knob::Governor => "governor",
            Knob::Epp => "epp",
            Knob::Boost => "boost",
            Knob::WeightedInterleave => "weighted_interleave",
        }
    }

    pub fn parse(key: &str) -> Result<Knob, RuntimeError> {
        Knob::ALL.into_iter().find(|k| k.key() == key.trim()).ok_or_else(|| {
            RuntimeError::UnknownKey {
                key: key.trim().to_string(),
                known: Knob::ALL.iter().map(|k| k.key()).collect::<Vec<_>>().join(", "),
            }
        })
    }

    /// Whether a run's configuration shows this setting as detected
    /// (`audit::fingerprint`); the others must be declared to tell runs
    /// apart.
    pub fn detected(self) -> bool {
        self != Knob::WeightedInterleave
    }
}

/// Why a setting cannot be read, changed or restored. Each names the key,
/// the value or the file.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{key:?} is not a setting that can be changed at run time (known: {known})")]
    UnknownKey { key: String, known: String },
    #[error("{key} cannot be changed here: {why}")]
    NotHere { key: &'static str, why: String },
    #[error("{key}: {value:?} is not a value this kernel takes (it offers: {offered})")]
    Refused { key: &'static str, value: String, offered: String },
    #[error("{path}: cannot write it ({why}); nothing was changed")]
    ReadOnly { path: String, why: String },
    #[error(transparent)]
    Read(#[from] topo::TopoError),
    #[error("{path}: writing {value:?} failed: {error}")]
    Write { path: String, value: String, error: String },
    #[error("{key}: wrote {wanted:?} but the kernel now says {found:?}")]
    NotTaken { key: &'static str, wanted: String, found: String },
}

impl RuntimeError {
    /// True when the request was at fault (exit 2), before any change.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            RuntimeError::UnknownKey { .. }
                | RuntimeError::NotHere { .. }
                | RuntimeError::Refused { .. }
                | RuntimeError::ReadOnly { .. }
        )
    }
}

/// One file and what it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    /// Relative to the root.
    pub rel: String,
    /// What to write to put it back.
    pub value: String,
}

/// What a knob's files held before a change: enough to restore them, in
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub knob: Knob,
    /// The value as users write it (`madvise`, `on`, `3:1`, or `mixed
    /// (...)` when the files disagree).
    pub shown: String,
    pub files: Vec<Saved>,
}

/// A file that could not be put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreFailure {
    pub path: String,
    pub value: String,
    pub error: String,
}

fn not_here(knob: Knob, why: impl Into<String>) -> RuntimeError {
    RuntimeError::NotHere { key: knob.key(), why: why.into() }
}

/// The files of every cpufreq policy holding `file`, in policy order.
fn policy_files(root: &SysRoot, file: &str) -> Result<Vec<String>, RuntimeError> {
    Ok(root
        .list_ids(CPUFREQ, "policy")?
        .into_iter()
        .map(|p| format!("{CPUFREQ}/policy{p}/{file}"))
        .filter(|rel| root.path(rel).is_file())
        .collect())
}

/// Where boost is switched: the file(s) and whether `1` means off.
fn boost_files(root: &SysRoot) -> Result<(Vec<String>, bool), RuntimeError> {
    for (rel, inverted) in [
        (format!("{CPUFREQ}/boost"), false),
        ("sys/devices/system/cpu/intel_pstate/no_turbo".into(), true),
    ] {
        if root.path(&rel).is_file() {
            return Ok((vec![rel], inverted));
        }
    }
    Ok((policy_files(root, "boost")?, false))
}

/// The files a knob writes, in the order they are written (and restored).
fn targets(root: &SysRoot, knob: Knob) -> Result<Vec<String>, RuntimeError> {
    let files = match knob {
        Knob::ThpEnabled => vec![format!("{THP}/enabled")],
        Knob::ThpDefrag => vec![format!("{THP}/defrag")],
        Knob::NumaBalancing => vec!["proc/sys/kernel/numa_balancing".into()],
        Knob::ZoneReclaimMode => vec!["proc/sys/vm/zone_reclaim_mode".into()],
        Knob::Governor => policy_files(root, "scaling_governor")?,
        Knob::Epp => policy_files(root, "energy_performance_preference")?,
        Knob::Boost => boost_files(root)?.0,
        Knob::WeightedInterleave => {
            let dir = place::weights::WEIGHTS_DIR;
            let mut f: Vec<String> =
                root.list_ids(dir, "node")?.into_iter().map(|n| format!("{dir}/node{n}")).collect();
            // `auto` last: writing a weight turns it off, restoring `true`
            // recomputes the weights from the firmware.
            if let Ok(Some(k)) = place::weights::read_kernel_weights(root) {
                if let Some(name) = k.auto_file {
                    f.push(format!("{dir}/{name}"));
                }
            }
            f
        }
    };
    let files: Vec<String> = files.into_iter().filter(|rel| root.path(rel).is_file()).collect();
    if files.is_empty() {
        return Err(not_here(knob, match knob {
            Knob::ThpEnabled | Knob::ThpDefrag => format!("{} is absent (a kernel without transparent huge pages)", root.path(THP).display()),
            Knob::NumaBalancing => "proc/sys/kernel/numa_balancing is absent (a kernel without automatic NUMA balancing)".into(),
            Knob::ZoneReclaimMode => "proc/sys/vm/zone_reclaim_mode is absent (a kernel without NUMA)".into(),
            Knob::Governor | Knob::Epp | Knob::Boost => format!("no cpufreq policy offers it under {} (no cpufreq driver, e.g. a VM or firmware-controlled frequency)", root.path(CPUFREQ).display()),
            Knob::WeightedInterleave => format!("{} is absent or empty (weighted interleave needs Linux 6.9 or later)", root.path(place::weights::WEIGHTS_DIR).display()),
        }));
    }
    Ok(files)
}

fn read_trimmed(root: &SysRoot, rel: &str) -> Result<String, RuntimeError> {
    Ok(root.read(rel)?.trim().to_string())
}

/// What a file holds, as it would be written back: the bracketed choice of
/// a THP selector, the trimmed text otherwise.
fn raw_value(root: &SysRoot, knob: Knob, rel: &str) -> Result<String, RuntimeError> {
    let text = read_trimmed(root, rel)?;
    match knob {
        // The kernel always brackets the choice; a file holding one word
        // (a copy of the file, a test tree) is read as that word.
        Knob::ThpEnabled | Knob::ThpDefrag
            if !text.contains(char::is_whitespace) && !text.contains('[') =>
        {
            Ok(text)
        }
        Knob::ThpEnabled | Knob::ThpDefrag => crate::read::bracketed(&text)
            .map_err(|m| topo::TopoError::malformed(root.path(rel), m).into()),
        _ => Ok(text),
    }
}

/// The values the kernel offers (`None`: weights, checked by shape).
fn offered(
    root: &SysRoot,
    knob: Knob,
    files: &[String],
) -> Result<Option<Vec<String>>, RuntimeError> {
    let listed = |rel: &str| -> Result<Vec<String>, RuntimeError> {
        Ok(read_trimmed(root, rel)?
            .split_whitespace()
            .map(|w| w.trim_matches(['[', ']']).to_string())
            .collect())
    };
    let common = |file: &str| -> Result<Vec<String>, RuntimeError> {
        let mut all: Option<Vec<String>> = None;
        for rel in files {
            let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
            let here = listed(&format!("{dir}/{file}"))?;
            all = Some(match all {
                None => here,
                Some(a) => a.into_iter().filter(|v| here.contains(v)).collect(),
            });
        }
        Ok(all.unwrap_or_default())
    };
    Ok(Some(match knob {
        Knob::ThpEnabled | Knob::ThpDefrag => listed(&files[0])?,
        Knob::NumaBalancing => {
            let tiering = kernel_at_least(root, (5, 18));
            let n = if tiering { 4 } else { 2 };
            (0..n).map(|v: u32| v.to_string()).collect()
        }
        Knob::ZoneReclaimMode => (0..8).map(|v: u32| v.to_string()).collect(),
        Knob::Governor => common("scaling_available_governors")?,
        Knob::Epp if epp_pinned(root, files)? => vec!["performance".into()],
        Knob::Epp => common("energy_performance_available_preferences")?,
        Knob::Boost => vec!["on".into(), "off".into()],
        Knob::WeightedInterleave => return Ok(None),
    }))
}

/// Whether the P-state driver is in active mode with the `performance`
/// governor on every policy: amd-pstate and intel_pstate then refuse any
/// EPP but `performance` (EBUSY), so the study says so before writing.
fn epp_pinned(root: &SysRoot, files: &[String]) -> Result<bool, RuntimeError> {
    let active = ["amd_pstate", "intel_pstate"].iter().any(|d| {
        root.read_optional(&format!("sys/devices/system/cpu/{d}/status"))
            .ok()
            .flatten()
            .is_some_and(|s| s.trim() == "active")
    });
    if !active {
        return Ok(false);
    }
    for rel in files {
        let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
        if read_trimmed(root, &format!("{dir}/scaling_governor"))? != "performance" {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the kernel release under `root` is at least `(major, minor)`
/// (false when it cannot be read: the smaller set of values is offered).
fn kernel_at_least(root: &SysRoot, want: (u32, u32)) -> bool {
    let Ok(Some(release)) = topo::read::kernel_release(root) else { return false };
    let mut parts = release.split(|c: char| !c.is_ascii_digit()).map(|p| p.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= want,
        _ => false,
    }
}

/// `on`/`off` from the spellings people use.
fn on_off(v: &str) -> Option<&'static str> {
    match v.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" | "enabled" => Some("on"),
        "off" | "0" | "false" | "no" | "disabled" => Some("off"),
        _ => None,
    }
}

/// A value in the form [`current`] reports it (`1` for boost is `on`).
fn normalise(knob: Knob, v: &str) -> String {
    match knob {
        Knob::Boost => on_off(v).map_or_else(|| v.trim().to_string(), str::to_string),
        _ => v.trim().to_string(),
    }
}

/// Checks, writing nothing, that `knob` can be changed here and takes
/// every one of `values`; returns the values as [`current`] will report
/// them. The files must exist and be writable (a read-only mount is
/// refused), and each value must be one the kernel lists.
pub fn check(root: &SysRoot, knob: Knob, values: &[String]) -> Result<Vec<String>, RuntimeError> {
    let files = targets(root, knob)?;
    for rel in &files {
        writable(root, rel)?;
    }
    if knob == Knob::WeightedInterleave {
        auto_is_off(root)?;
    }
    let offered = offered(root, knob, &files)?;
    let weights = node_files(&files).len();
    let mut out = Vec::new();
    for v in values {
        let n = normalise(knob, v);
        match &offered {
            Some(list) if !list.contains(&n) => {
                let mut offered = list.join(", ");
                if knob == Knob::Epp && list.len() == 1 && epp_pinned(root, &files)? {
                    offered.push_str(
                        " only: the active P-state driver takes no other EPP under the \
                         performance governor; vary the governor, or set another one first",
                    );
                }
                return Err(RuntimeError::Refused { key: knob.key(), value: v.clone(), offered });
            }
            Some(_) => {}
            None => {
                let ok = n.split(':').count() == weights
                    && n.split(':').all(|w| w.parse::<u32>().is_ok_and(|w| (1..=255).contains(&w)));
                if !ok {
                    return Err(RuntimeError::Refused {
                        key: knob.key(),
                        value: v.clone(),
                        offered: format!(
                            "one weight from 1 to 255 per node, in node order, {weights} here, e.g. {}",
                            vec!["1"; weights].join(":")
                        ),
                    });
                }
            }
        }
        out.push(n);
    }
    Ok(out)
}

/// Refuses weights while the kernel computes them itself (`auto` true,
/// Linux 6.16+): writing a weight turns that off, and the kernel takes
/// `auto = true` back only where the firmware gives node bandwidths (else
/// ENODEV), so the setting could not be put back as it was.
fn auto_is_off(root: &SysRoot) -> Result<(), RuntimeError> {
    let k = place::weights::read_kernel_weights(root)
        .map_err(|e| not_here(Knob::WeightedInterleave, e.to_string()))?;
    if let Some(k) = k.filter(|k| k.auto == Some(true)) {
        let file = root.path(&format!(
            "{}/{}",
            place::weights::WEIGHTS_DIR,
            k.auto_file.as_deref().unwrap_or("auto")
        ));
        return Err(not_here(
            Knob::WeightedInterleave,
            format!(
                "the kernel sets the weights itself ({} is true); writing a weight turns that off \
                 and the kernel may refuse to turn it back on, so the study could not restore it \
                 (to vary the weights anyway: echo false > {} first)",
                file.display(),
                file.display()
            ),
        ));
    }
    Ok(())
}

/// The weight files among a weighted-interleave target list.
fn node_files(files: &[String]) -> Vec<&String> {
    files.iter().filter(|f| f.rsplit('/').next().is_some_and(|n| n.starts_with("node"))).collect()
}

/// `access(2)` for writing: refuses a read-only file system or a file
/// this user may not write, without writing.
fn writable(root: &SysRoot, rel: &str) -> Result<(), RuntimeError> {
    let path = root.path(rel);
    let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| {
        RuntimeError::ReadOnly { path: path.display().to_string(), why: "a NUL in the path".into() }
    })?;
    // SAFETY: a valid NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(RuntimeError::ReadOnly {
            path: path.display().to_string(),
            why: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(())
}

/// The value in force, as users write it (`mixed (a, b)` when the files
/// of a per-policy setting disagree).
pub fn current(root: &SysRoot, knob: Knob) -> Result<String, RuntimeError> {
    Ok(snapshot(root, knob)?.shown)
}

/// What `knob`'s files hold now.
pub fn snapshot(root: &SysRoot, knob: Knob) -> Result<Snapshot, RuntimeError> {
    let files = targets(root, knob)?;
    let mut saved = Vec::new();
    for rel in &files {
        saved.push(Saved { rel: rel.clone(), value: raw_value(root, knob, rel)? });
    }
    let shown = match knob {
        Knob::WeightedInterleave => saved
            .iter()
            .filter(|s| node_files(std::slice::from_ref(&s.rel)).len() == 1)
            .map(|s| s.value.clone())
            .collect::<Vec<_>>()
            .join(":"),
        _ => {
            let inverted = knob == Knob::Boost && boost_files(root)?.1;
            let values: BTreeSet<String> = saved
                .iter()
                .map(|s| match knob {
                    Knob::Boost => {
                        let on = on_off(&s.value) == Some("on");
                        (if on != inverted { "on" } else { "off" }).to_string()
                    }
                    _ => s.value.clone(),
                })
                .collect();
            if values.len() == 1 {
                values.into_iter().next().unwrap_or_default()
            } else {
                format!("mixed ({})", values.into_iter().collect::<Vec<_>>().join(", "))
            }
        }
    };
    Ok(Snapshot { knob, shown, files: saved })
}

/// Writes `value` to an existing file (never creates one).
fn write_file(root: &SysRoot, rel: &str, value: &str) -> Result<(), RestoreFailure> {
    let path = root.path(rel);
    let fail = |e: std::io::Error| RestoreFailure {
        path: path.display().to_string(),
        value: value.to_string(),
        error: e.to_string(),
    };
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(&path).map_err(fail)?;
    f.write_all(format!("{value}\n").as_bytes()).map_err(fail)
}

/// Applies `value` (one [`check`] accepted) and reads it back. A failure
/// part-way leaves the files written so far: restore the snapshot taken
/// before.
pub fn apply(root: &SysRoot, knob: Knob, value: &str) -> Result<(), RuntimeError> {
    let value = normalise(knob, value);
    let files = targets(root, knob)?;
    let per_file: Vec<(String, String)> = match knob {
        Knob::Boost => {
            let inverted = boost_files(root)?.1;
            let one = (value == "on") != inverted;
            files.iter().map(|f| (f.clone(), if one { "1" } else { "0" }.to_string())).collect()
        }
        Knob::WeightedInterleave => node_files(&files)
            .into_iter()
            .cloned()
            .zip(value.split(':').map(str::to_string))
            .collect(),
        _ => files.iter().map(|f| (f.clone(), value.clone())).collect(),
    };
    for (rel, v) in &per_file {
        write_file(root, rel, v).map_err(|f| RuntimeError::Write {
            path: f.path,
            value: f.value,
            error: f.error,
        })?;
    }
    let found = current(root, knob)?;
    if found != value {
        return Err(RuntimeError::NotTaken { key: knob.key(), wanted: value, found });
    }
    Ok(())
}

/// Puts every file of `snap` back, in order, going on past failures;
/// returns the files that could not be written (empty: all restored).
pub fn restore(root: &SysRoot, snap: &Snapshot) -> Vec<RestoreFailure> {
    snap.files.iter().filter_map(|s| write_file(root, &s.rel, &s.value).err()).collect()
}

/// The shell commands that restore `snap` by hand.
pub fn restore_commands(root: &SysRoot, snap: &Snapshot) -> Vec<String> {
    snap.files
        .iter()
        .map(|s| format!("echo {} > {}", s.value, root.path(&s.rel).display()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Tree {
        dir: tempfile::TempDir,
        root: SysRoot,
    }

    impl Tree {
        fn new(files: &[(&str, &str)]) -> Tree {
            let dir = tempfile::tempdir().unwrap();
            for (rel, v) in files {
                let p = dir.path().join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, format!("{v}\n")).unwrap();
            }
            std::fs::create_dir_all(dir.path().join("sys")).unwrap();
            let root = SysRoot::new(dir.path()).unwrap();
            Tree { dir, root }
        }

        fn read(&self, rel: &str) -> String {
            std::fs::read_to_string(self.dir.path().join(rel)).unwrap().trim().to_string()
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn thp_is_checked_against_the_kernels_list_applied_and_restored() {
        let t = Tree::new(&[
            ("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never"),
            (
                "sys/kernel/mm/transparent_hugepage/defrag",
                "always defer defer+madvise [madvise] never",
            ),
        ]);
        let k = Knob::parse("thp_enabled").unwrap();
        assert_eq!(
            check(&t.root, k, &strings(&["madvise", "always"])).unwrap(),
            ["madvise", "always"]
        );
        let e = check(&t.root, k, &strings(&["always", "sometimes"])).unwrap_err();
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "thp_enabled: \"sometimes\" is not a value this kernel takes (it offers: always, madvise, never)"
        );
        let snap = snapshot(&t.root, k).unwrap();
        assert_eq!(snap.shown, "madvise");
        apply(&t.root, k, "always").unwrap();
        assert_eq!(t.read("sys/kernel/mm/transparent_hugepage/enabled"), "always");
        assert_eq!(current(&t.root, k).unwrap(), "always");
        assert!(restore(&t.root, &snap).is_empty());
        assert_eq!(current(&t.root, k).unwrap(), "madvise");
        let cmds = restore_commands(&t.root, &snap);
        assert_eq!(cmds.len(), 1);
        assert!(
            cmds[0].starts_with("echo madvise > /")
                && cmds[0].ends_with("transparent_hugepage/enabled"),
            "{cmds:?}"
        );
        // defrag is its own file.
        assert_eq!(current(&t.root, Knob::ThpDefrag).unwrap(), "madvise");
        assert!(check(&t.root, Knob::ThpDefrag, &strings(&["defer+madvise"])).is_ok());
    }

    #[test]
    fn governors_must_be_offered_by_every_policy_and_each_is_restored() {
        let p = "sys/devices/system/cpu/cpufreq";
        let t = Tree::new(&[
            (&format!("{p}/policy0/scaling_governor"), "performance"),
            (
                &format!("{p}/policy0/scaling_available_governors"),
                "performance powersave schedutil",
            ),
            (&format!("{p}/policy1/scaling_governor"), "powersave"),
            (&format!("{p}/policy1/scaling_available_governors"), "performance powersave"),
        ]);
        let k = Knob::Governor;
        let e = check(&t.root, k, &strings(&["performance", "schedutil"])).unwrap_err().to_string();
        assert!(e.contains("\"schedutil\"") && e.contains("offers: performance, powersave"), "{e}");
        let snap = snapshot(&t.root, k).unwrap();
        assert_eq!(snap.shown, "mixed (performance, powersave)");
        apply(&t.root, k, "performance").unwrap();
        assert_eq!(t.read(&format!("{p}/policy1/scaling_governor")), "performance");
        assert!(restore(&t.root, &snap).is_empty());
        assert_eq!(t.read(&format!("{p}/policy0/scaling_governor")), "performance");
        assert_eq!(t.read(&format!("{p}/policy1/scaling_governor")), "powersave");
    }

    #[test]
    fn epp_under_the_performance_governor_of_an_active_driver_is_refused() {
        let p = "sys/devices/system/cpu/cpufreq/policy0";
        let files = |gov: &str| {
            Tree::new(&[
                ("sys/devices/system/cpu/amd_pstate/status", "active"),
                (&format!("{p}/scaling_governor"), gov),
                (&format!("{p}/energy_performance_preference"), "performance"),
                (
                    &format!("{p}/energy_performance_available_preferences"),
                    "default performance balance_performance balance_power power",
                ),
            ])
        };
        let t = files("performance");
        let e = check(&t.root, Knob::Epp, &strings(&["performance", "balance_power"])).unwrap_err();
        assert!(
            e.to_string().contains("it offers: performance only: the active P-state driver"),
            "{e}"
        );
        let t = files("powersave");
        assert!(check(&t.root, Knob::Epp, &strings(&["performance", "balance_power"])).is_ok());
    }

    #[test]
    fn boost_through_no_turbo_is_inverted() {
        let t = Tree::new(&[("sys/devices/system/cpu/intel_pstate/no_turbo", "1")]);
        let k = Knob::Boost;
        assert_eq!(check(&t.root, k, &strings(&["on", "0"])).unwrap(), ["on", "off"]);
        assert!(check(&t.root, k, &strings(&["turbo"])).is_err());
        let snap = snapshot(&t.root, k).unwrap();
        assert_eq!(snap.shown, "off");
        apply(&t.root, k, "on").unwrap();
        assert_eq!(t.read("sys/devices/system/cpu/intel_pstate/no_turbo"), "0");
        assert!(restore(&t.root, &snap).is_empty());
        assert_eq!(t.read("sys/devices/system/cpu/intel_pstate/no_turbo"), "1");
        // The global cpufreq switch wins where it exists, 1 = on.
        let t = Tree::new(&[("sys/devices/system/cpu/cpufreq/boost", "1")]);
        assert_eq!(current(&t.root, k).unwrap(), "on");
    }

    #[test]
    fn weights_are_one_per_node_and_auto_is_restored_last() {
        let w = place::weights::WEIGHTS_DIR;
        let t = Tree::new(&[
            (&format!("{w}/node0"), "1"),
            (&format!("{w}/node1"), "1"),
            (&format!("{w}/auto"), "false"),
        ]);
        let k = Knob::WeightedInterleave;
        assert_eq!(check(&t.root, k, &strings(&["1:1", "3:1"])).unwrap(), ["1:1", "3:1"]);
        for bad in ["3", "3:1:1", "0:1", "256:1", "a:b"] {
            let e = check(&t.root, k, &strings(&[bad])).unwrap_err().to_string();
            assert!(
                e.contains("one weight from 1 to 255 per node") && e.contains("2 here"),
                "{bad}: {e}"
            );
        }
        let snap = snapshot(&t.root, k).unwrap();
        assert_eq!(snap.shown, "1:1");
        assert_eq!(snap.files.last().unwrap().value, "false");
        apply(&t.root, k, "3:1").unwrap();
        assert_eq!(
            (t.read(&format!("{w}/node0")), t.read(&format!("{w}/node1"))),
            ("3".into(), "1".into())
        );
        assert!(restore(&t.root, &snap).is_empty());
        assert_eq!(t.read(&format!("{w}/node0")), "1");
        assert_eq!(t.read(&format!("{w}/auto")), "false");
    }

    /// With `auto` true the kernel may refuse to take it back (seen on
    /// 6.18 without firmware bandwidths: ENODEV), so weights are refused
    /// before anything is written, under either name of the file.
    #[test]
    fn weights_are_refused_while_the_kernel_sets_them_itself() {
        let w = place::weights::WEIGHTS_DIR;
        for name in ["auto", "__auto_type"] {
            let t = Tree::new(&[(&format!("{w}/node0"), "1"), (&format!("{w}/{name}"), "true")]);
            let e = check(&t.root, Knob::WeightedInterleave, &strings(&["1", "2"])).unwrap_err();
            assert!(e.is_usage());
            let e = e.to_string();
            assert!(e.contains(&format!("{name} is true")) && e.contains("echo false >"), "{e}");
            assert_eq!(t.read(&format!("{w}/node0")), "1");
        }
    }

    #[test]
    fn numa_balancing_tiering_modes_need_linux_5_18() {
        let old = Tree::new(&[
            ("proc/sys/kernel/numa_balancing", "1"),
            ("proc/sys/kernel/osrelease", "5.10.0-28-amd64"),
        ]);
        let e =
            check(&old.root, Knob::NumaBalancing, &strings(&["0", "2"])).unwrap_err().to_string();
        assert!(e.contains("offers: 0, 1"), "{e}");
        let new = Tree::new(&[
            ("proc/sys/kernel/numa_balancing", "1"),
            ("proc/sys/kernel/osrelease", "6.12.9-amd64"),
        ]);
        assert!(check(&new.root, Knob::NumaBalancing, &strings(&["0", "2"])).is_ok());
        let z = Tree::new(&[("proc/sys/vm/zone_reclaim_mode", "0")]);
        assert!(check(&z.root, Knob::ZoneReclaimMode, &strings(&["0", "7"])).is_ok());
        assert!(check(&z.root, Knob::ZoneReclaimMode, &strings(&["8"])).is_err());
    }

    #[test]
    fn settings_the_machine_lacks_and_unknown_keys_are_refused_before_writing() {
        let t = Tree::new(&[]);
        for k in Knob::ALL {
            let e = check(&t.root, k, &strings(&["x"])).unwrap_err();
            assert!(e.is_usage() && e.to_string().contains("cannot be changed here"), "{k:?}: {e}");
        }
        let e = Knob::parse("thp").unwrap_err().to_string();
        assert!(e.contains("\"thp\" is not a setting") && e.contains("thp_enabled"), "{e}");
    }

    #[test]
    fn a_file_that_cannot_be_put_back_is_reported_and_the_others_are_restored() {
        let p = "sys/devices/system/cpu/cpufreq";
        let t = Tree::new(&[
            (&format!("{p}/policy0/scaling_governor"), "powersave"),
            (&format!("{p}/policy1/scaling_governor"), "powersave"),
        ]);
        let snap = snapshot(&t.root, Knob::Governor).unwrap();
        apply(&t.root, Knob::Governor, "performance").unwrap();
        let f0 = t.dir.path().join(format!("{p}/policy0/scaling_governor"));
        std::fs::remove_file(&f0).unwrap();
        std::fs::create_dir(&f0).unwrap();
        let left = restore(&t.root, &snap);
        assert_eq!(left.len(), 1);
        assert!(
            left[0].path.ends_with("policy0/scaling_governor") && left[0].value == "powersave",
            "{left:?}"
        );
        assert_eq!(t.read(&format!("{p}/policy1/scaling_governor")), "powersave");
    }
}
