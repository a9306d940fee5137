//! Energy from the powercap RAPL zones and the mean core frequency over a
//! measured interval ([`Meter`]), under any root so tests use fake trees.
//!
//! Energy: every zone `sys/class/powercap/intel-rapl:N[:M]` (package,
//! DRAM, core, psys; the kernel's `intel_rapl` driver names AMD's zones the
//! same way since Linux 5.11; without any such zone, the socket counters
//! of the `amd_energy` hwmon driver as `package-S` zones), its
//! `energy_uj` counter read at the start and the end, a counter that went
//! down having wrapped at `max_energy_range_uj` (undone). Frequency: the
//! APERF/MPERF MSRs through `dev/cpu/N/msr` when they can be read (the
//! mean over the interval: base x dAPERF/dMPERF), else cpufreq's
//! `scaling_cur_freq`, sampled at the start and the end. Every file is read
//! bounded, without blocking, and only when it is a regular file (the MSR
//! device a character device): a FIFO, a huge or garbage file gives
//! "unavailable (reason)", never a hang or a panic.

use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::time::Instant;

use results::power::{Power, ZoneEnergy};
use topo::{SysRoot, TopoError};

const POWERCAP: &str = "sys/class/powercap";
const MSR_MPERF: u64 = 0xE7;
const MSR_APERF: u64 = 0xE8;

/// One RAPL zone.
#[derive(Debug, Clone, PartialEq)]
struct Zone {
    /// `intel-rapl:0:1`.
    id: String,
    /// `dram`.
    name: String,
    /// Where `energy_uj` wraps (0 when unknown: a counter that goes down
    /// is then unreadable, not guessed).
    max_uj: u64,
    /// The counter, microjoules, under the root.
    file: String,
}

/// Where the frequency comes from.
#[derive(Debug, Clone, PartialEq)]
enum Freq {
    /// The MSRs of these CPUs, with each one's base frequency in MHz when
    /// cpufreq gives it.
    Msr(Vec<(u32, Option<f64>)>),
    /// cpufreq's figure of these CPUs.
    Cpufreq(Vec<u32>),
    Unavailable(String),
}

/// Reads energy and frequency around a measurement.
#[derive(Debug, Clone)]
pub struct Meter {
    root: SysRoot,
    zones: Result<Vec<Zone>, String>,
    freq: Freq,
}

/// The readings at the start of an interval.
#[derive(Debug, Clone)]
pub struct Start {
    at: Instant,
    energy: Vec<Option<u64>>,
    /// (aperf, mperf) per MSR CPU, or kHz per cpufreq CPU.
    freq: Vec<Option<(u64, u64)>>,
}

/// Why a read failed, in a few words.
fn why(e: &TopoError) -> String {
    match e {
        TopoError::Io { source, path } if source.kind() == io::ErrorKind::PermissionDenied => {
            format!("permission denied reading {} (root only since Linux 5.10)", path.display())
        }
        e => e.to_string(),
    }
}

fn is_vm(root: &SysRoot) -> bool {
    root.read_optional("proc/cpuinfo")
        .ok()
        .flatten()
        .is_some_and(|c| c.lines().any(|l| l.starts_with("flags") && l.contains(" hypervisor")))
}

fn zones(root: &SysRoot) -> Result<Vec<Zone>, String> {
    let names = root.list_dir(POWERCAP).map_err(|e| why(&e))?;
    let ids: Vec<&String> = names.iter().filter(|n| n.starts_with("intel-rapl:")).collect();
    if ids.is_empty() {
        // AMD without the RAPL powercap zones: the amd_energy hwmon driver
        if let Some(z) = amd_energy(root) {
            return z;
        }
        return Err(if cfg!(target_arch = "aarch64") {
            "no RAPL zone: RAPL is x86's, and numaprobe reads no Arm power meter".into()
        } else if is_vm(root) {
            "no RAPL zone: a virtual machine (the hypervisor passes no RAPL counters)".into()
        } else {
            format!(
                "no RAPL zone under /{POWERCAP} (the intel_rapl driver is not loaded, or the CPU has none)"
            )
        });
    }
    let mut out = Vec::new();
    let mut first_error = None;
    for id in ids {
        let dir = format!("{POWERCAP}/{id}");
        let probe = (|| -> Result<Zone, String> {
            let name = root
                .read_optional(&format!("{dir}/name"))
                .map_err(|e| why(&e))?
                .map(|s| s.trim().to_string())
                .filter(|s| {
                    !s.is_empty() && s.len() <= 64 && s.bytes().all(|b| b.is_ascii_graphic())
                })
                .ok_or_else(|| format!("{dir}/name: missing or not a zone name"))?;
            let max_uj = root
                .read_u64(&format!("{dir}/max_energy_range_uj"))
                .map_err(|e| why(&e))?
                .unwrap_or(0);
            root.read_u64(&format!("{dir}/energy_uj"))
                .map_err(|e| why(&e))?
                .ok_or_else(|| format!("{dir}/energy_uj: absent"))?;
            Ok(Zone { id: id.clone(), name, max_uj, file: format!("{dir}/energy_uj") })
        })();
        match probe {
            Ok(z) => out.push(z),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if out.is_empty() {
        return Err(first_error.unwrap_or_else(|| "no readable RAPL zone".into()));
    }
    Ok(out)
}

const HWMON: &str = "sys/class/hwmon";

/// The socket counters of the `amd_energy` hwmon driver (AMD family 17h/19h
/// before RAPL came to powercap, or where only it is loaded): in each
/// `hwmonN` named `amd_energy`, every `energyK_input` (microjoules) whose
/// `energyK_label` is `EsocketS`, as zone `package-S` (the per-core
/// counters are left out). The driver accumulates the 32-bit hardware
/// counter into 64 bits, so no wrap point is known: a counter that goes
/// down is unreadable, not guessed. `None` when no such driver is there.
fn amd_energy(root: &SysRoot) -> Option<Result<Vec<Zone>, String>> {
    let hwmons = root.list_dir(HWMON).ok()?;
    let mut found = false;
    let mut out = Vec::new();
    let mut first_error = None;
    for h in hwmons.iter().filter(|h| h.starts_with("hwmon") && h.len() <= 16) {
        let dir = format!("{HWMON}/{h}");
        let named = root.read_optional(&format!("{dir}/name")).ok().flatten();
        if named.as_deref().map(str::trim) != Some("amd_energy") {
            continue;
        }
        found = true;
        let Ok(files) = root.list_dir(&dir) else { continue };
        for f in files.iter().filter(|f| f.starts_with("energy") && f.ends_with("_label")) {
            let n = &f["energy".len()..f.len() - "_label".len()];
            if n.is_empty() || n.len() > 6 || !n.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let label = match root.read_optional(&format!("{dir}/{f}")) {
                Ok(Some(l)) => l.trim().to_string(),
                Ok(None) => continue,
                Err(e) => {
                    first_error.get_or_insert(why(&e));
                    continue;
                }
            };
            let Some(socket) = label
                .strip_prefix("Esocket")
                .filter(|s| !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let file = format!("{dir}/energy{n}_input");
            match root.read_u64(&file) {
                Ok(Some(_)) => out.push(Zone {
                    id: format!("amd_energy:{h}:energy{n}"),
                    name: format!("package-{socket}"),
                    max_uj: 0,
                    file,
                }),
                Ok(None) => {
                    first_error.get_or_insert(format!("{file}: absent"));
                }
                Err(e) => {
                    first_error.get_or_insert(why(&e));
                }
            }
        }
    }
    if !found {
        return None;
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Some(if out.is_empty() {
        Err(first_error.unwrap_or_else(|| "amd_energy: no readable socket counter".into()))
    } else {
        Ok(out)
    })
}

/// Opens `dev/cpu/N/msr` without blocking: a character device (or a
/// regular file in a test tree); anything else is refused.
fn open_msr(root: &SysRoot, cpu: u32) -> io::Result<std::fs::File> {
    let path = root.path(&format!("dev/cpu/{cpu}/msr"));
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&path)?;
    let t = f.metadata()?.file_type();
    if !(t.is_char_device() || t.is_file()) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not an MSR device"));
    }
    Ok(f)
}

fn read_msr(f: &std::fs::File, reg: u64) -> io::Result<u64> {
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, reg)?;
    Ok(u64::from_le_bytes(b))
}

fn aperf_mperf(root: &SysRoot, cpu: u32) -> io::Result<(u64, u64)> {
    let f = open_msr(root, cpu)?;
    Ok((read_msr(&f, MSR_APERF)?, read_msr(&f, MSR_MPERF)?))
}

fn cur_khz(root: &SysRoot, cpu: u32) -> Option<u64> {
    root.read_u64(&format!("sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq"))
        .ok()
        .flatten()
        .filter(|k| *k > 0 && *k < 100_000_000)
}

fn freq(root: &SysRoot, cpus: &[u32]) -> Freq {
    if cpus.is_empty() {
        return Freq::Unavailable("no CPU to read".into());
    }
    let msr_why = match aperf_mperf(root, cpus[0]) {
        Ok(_) => {
            let base = |c: u32| {
                root.read_u64(&format!("sys/devices/system/cpu/cpu{c}/cpufreq/base_frequency"))
                    .ok()
                    .flatten()
                    .filter(|k| *k > 0)
                    .map(|k| k as f64 / 1000.0)
            };
            return Freq::Msr(cpus.iter().map(|&c| (c, base(c))).collect());
        }
        Err(_) if cfg!(target_arch = "aarch64") => {
            "no /dev/cpu/N/msr (model-specific registers are x86's)".to_string()
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            "no /dev/cpu/N/msr (the msr module is not loaded)".to_string()
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            "/dev/cpu/N/msr: permission denied (root or CAP_SYS_RAWIO)".to_string()
        }
        Err(e) => format!("/dev/cpu/N/msr: {e}"),
    };
    if cpus.iter().any(|&c| cur_khz(root, c).is_some()) {
        return Freq::Cpufreq(cpus.to_vec());
    }
    let vm = if is_vm(root) { "; a virtual machine" } else { "" };
    Freq::Unavailable(format!("{msr_why}; no cpufreq scaling_cur_freq{vm}"))
}

/// Busy MHz between two (APERF, MPERF) readings: base x dAPERF / dMPERF
/// (turbostat's Bzy_MHz); `None` when MPERF did not advance.
fn busy_mhz(base_mhz: f64, a: (u64, u64), b: (u64, u64)) -> Option<f64> {
    let (da, dm) = (b.0.wrapping_sub(a.0), b.1.wrapping_sub(a.1));
    (dm > 0).then(|| base_mhz * da as f64 / dm as f64)
}

/// Counter difference `a` -> `b`, undoing one wrap at `max`: `None` when
/// the counter went down with no known wrap point, or by more than it can.
fn delta(a: u64, b: u64, max: u64) -> Option<(u64, bool)> {
    if b >= a {
        Some((b - a, false))
    } else if max > 0 && a <= max {
        Some((max - a + b, true))
    } else {
        None
    }
}

impl Meter {
    /// The RAPL zones under `root` and the frequency source of `cpus`
    /// (those the measurement runs on), or why each is unavailable.
    pub fn open(root: &SysRoot, cpus: &[u32]) -> Meter {
        Meter { root: root.clone(), zones: zones(root), freq: freq(root, cpus) }
    }

    /// Reads every counter now.
    pub fn start(&self) -> Start {
        let energy = match &self.zones {
            Ok(z) => z.iter().map(|z| self.energy_uj(z)).collect(),
            Err(_) => Vec::new(),
        };
        Start { at: Instant::now(), energy, freq: self.freq_now() }
    }

    fn energy_uj(&self, z: &Zone) -> Option<u64> {
        self.root.read_u64(&z.file).ok().flatten()
    }

    fn freq_now(&self) -> Vec<Option<(u64, u64)>> {
        match &self.freq {
            Freq::Msr(cpus) => cpus.iter().map(|(c, _)| aperf_mperf(&self.root, *c).ok()).collect(),
            Freq::Cpufreq(cpus) => {
                cpus.iter().map(|c| cur_khz(&self.root, *c).map(|k| (k, 0))).collect()
            }
            Freq::Unavailable(_) => Vec::new(),
        }
    }

    /// Energy and frequency since `start`.
    pub fn finish(&self, start: &Start) -> Power {
        let seconds = start.at.elapsed().as_secs_f64();
        self.finish_over(start, seconds)
    }

    /// [`Self::finish`] over a given interval (tests).
    pub fn finish_over(&self, start: &Start, seconds: f64) -> Power {
        let mut p = Power { seconds, ..Power::default() };
        match &self.zones {
            Err(e) => p.energy_unavailable = Some(e.clone()),
            Ok(zones) => {
                let mut lost = None;
                for (z, a) in zones.iter().zip(&start.energy) {
                    let b = self.energy_uj(z);
                    match (a, b) {
                        (Some(a), Some(b)) => match delta(*a, b, z.max_uj) {
                            Some((uj, wrapped)) => {
                                let joules = uj as f64 / 1e6;
                                p.zones.push(ZoneEnergy {
                                    zone: z.id.clone(),
                                    name: z.name.clone(),
                                    joules,
                                    watts: if seconds > 0.0 { joules / seconds } else { 0.0 },
                                    wrapped,
                                });
                            }
                            None => {
                                lost.get_or_insert(format!(
                                    "{}: energy_uj went down with no max_energy_range_uj",
                                    z.id
                                ));
                            }
                        },
                        _ => {
                            lost.get_or_insert(format!("{}: energy_uj became unreadable", z.id));
                        }
                    }
                }
                if p.zones.is_empty() {
                    p.energy_unavailable = Some(lost.unwrap_or_else(|| "no zone read".into()));
                }
            }
        }
        let now = self.freq_now();
        match &self.freq {
            Freq::Unavailable(why) => p.frequency_unavailable = Some(why.clone()),
            Freq::Msr(cpus) => {
                let mut mhz = Vec::new();
                for (((_, base), a), b) in cpus.iter().zip(&start.freq).zip(&now) {
                    let (Some((a0, m0)), Some((a1, m1))) = (a, b) else { continue };
                    let da = a1.wrapping_sub(*a0);
                    match base {
                        Some(base) => mhz.extend(busy_mhz(*base, (*a0, *m0), (*a1, *m1))),
                        // without a base: APERF per second (idle counts as 0)
                        None if seconds > 0.0 => mhz.push(da as f64 / seconds / 1e6),
                        _ => {}
                    }
                }
                if mhz.is_empty() {
                    p.frequency_unavailable = Some("the MSRs did not advance".into());
                } else {
                    p.mean_mhz = Some(mhz.iter().sum::<f64>() / mhz.len() as f64);
                    let with_base = cpus.iter().all(|(_, b)| b.is_some());
                    p.frequency_source =
                        Some(if with_base { "aperf/mperf" } else { "aperf/time" }.into());
                }
            }
            Freq::Cpufreq(_) => {
                let khz: Vec<f64> = start
                    .freq
                    .iter()
                    .chain(&now)
                    .filter_map(|v| v.map(|(k, _)| k as f64))
                    .collect();
                if khz.is_empty() {
                    p.frequency_unavailable = Some("scaling_cur_freq became unreadable".into());
                } else {
                    p.mean_mhz = Some(khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0);
                    p.frequency_source = Some("scaling_cur_freq (sampled at start and end)".into());
                }
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A fake tree: package-0 and its dram zone, wrapping at 1000 J.
    fn rapl(dir: &Path, pkg_uj: u64, dram_uj: u64) {
        put(dir, "sys/class/powercap/intel-rapl:0/name", "package-0\n");
        put(dir, "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "1000000000\n");
        put(dir, "sys/class/powercap/intel-rapl:0/energy_uj", &format!("{pkg_uj}\n"));
        put(dir, "sys/class/powercap/intel-rapl:0:0/name", "dram\n");
        put(dir, "sys/class/powercap/intel-rapl:0:0/max_energy_range_uj", "1000000000\n");
        put(dir, "sys/class/powercap/intel-rapl:0:0/energy_uj", &format!("{dram_uj}\n"));
        // mmio duplicates the package zone: never added twice
        put(dir, "sys/class/powercap/intel-rapl-mmio:0/name", "package-0\n");
        put(dir, "sys/class/powercap/intel-rapl-mmio:0/energy_uj", "5\n");
    }

    fn energy_uj(dir: &Path, zone: &str, v: &str) {
        put(dir, &format!("sys/class/powercap/{zone}/energy_uj"), v);
    }

    #[test]
    fn counters_that_advance_give_joules_and_watts() {
        let d = tempfile::tempdir().unwrap();
        rapl(d.path(), 1_000_000, 500_000);
        put(d.path(), "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2000000\n");
        let m = Meter::open(&SysRoot::new(d.path()).unwrap(), &[0]);
        let s = m.start();
        energy_uj(d.path(), "intel-rapl:0", "201000000\n");
        energy_uj(d.path(), "intel-rapl:0:0", "20500000\n");
        put(d.path(), "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "3000000\n");
        let p = m.finish_over(&s, 2.0);
        assert_eq!(p.energy_unavailable, None);
        assert_eq!(p.zones.len(), 2, "{p:?}");
        assert_eq!(p.package_joules(), Some(200.0));
        assert_eq!(p.dram_joules(), Some(20.0));
        assert_eq!(p.zones[0].watts, 100.0);
        assert_eq!(p.mean_watts(), Some(110.0));
        // cpufreq sampled at both ends: (2000 + 3000) / 2 MHz, saying so
        assert_eq!(p.mean_mhz, Some(2500.0));
        assert!(p.frequency_source.as_deref().unwrap().starts_with("scaling_cur_freq"));
        assert!(p.text().contains("package-0 100.0 W"), "{}", p.text());
    }

    #[test]
    fn a_counter_that_wraps_is_undone_at_its_range() {
        let d = tempfile::tempdir().unwrap();
        rapl(d.path(), 999_000_000, 0);
        let m = Meter::open(&SysRoot::new(d.path()).unwrap(), &[]);
        let s = m.start();
        // 1 J to the wrap point, then 4 J
        energy_uj(d.path(), "intel-rapl:0", "4000000\n");
        let p = m.finish_over(&s, 1.0);
        let z = &p.zones[0];
        assert_eq!((z.name.as_str(), z.joules, z.wrapped), ("package-0", 5.0, true));
        assert!(!p.zones[1].wrapped);
        // a counter going down with no known range is not guessed
        put(d.path(), "sys/class/powercap/intel-rapl:0/max_energy_range_uj", "0\n");
        put(d.path(), "sys/class/powercap/intel-rapl:0:0/max_energy_range_uj", "0\n");
        energy_uj(d.path(), "intel-rapl:0", "999000000\n");
        energy_uj(d.path(), "intel-rapl:0:0", "9\n");
        let m = Meter::open(&SysRoot::new(d.path()).unwrap(), &[]);
        let s = m.start();
        energy_uj(d.path(), "intel-rapl:0", "4000000\n");
        energy_uj(d.path(), "intel-rapl:0:0", "1\n");
        let p = m.finish_over(&s, 1.0);
        assert!(p.zones.is_empty(), "{p:?}");
        assert!(p.energy_unavailable.unwrap().contains("went down"));
    }

    /// amd_energy's socket counters (no RAPL powercap zone): advance,
    /// never wrap (a counter that goes down is not guessed), core counters
    /// and hostile labels left out, an unreadable counter says why.
    #[test]
    fn amd_energy_sockets_are_package_zones() {
        let d = tempfile::tempdir().unwrap();
        let h = "sys/class/hwmon/hwmon3";
        put(d.path(), "sys/class/hwmon/hwmon0/name", "k10temp\n");
        put(d.path(), &format!("{h}/name"), "amd_energy\n");
        put(d.path(), &format!("{h}/energy1_label"), "Ecore000\n");
        put(d.path(), &format!("{h}/energy1_input"), "5\n");
        put(d.path(), &format!("{h}/energy129_label"), "Esocket0\n");
        put(d.path(), &format!("{h}/energy129_input"), "1000000\n");
        put(d.path(), &format!("{h}/energy130_label"), "Esocket1\n");
        put(d.path(), &format!("{h}/energy130_input"), "2000000\n");
        put(d.path(), &format!("{h}/energy131_label"), &"Esocket9".repeat(10_000));
        put(d.path(), &format!("{h}/energy131_input"), "1\n");
        let root = SysRoot::new(d.path()).unwrap();
        let m = Meter::open(&root, &[]);
        let s = m.start();
        put(d.path(), &format!("{h}/energy129_input"), "61000000\n");
        put(d.path(), &format!("{h}/energy130_input"), "32000000\n");
        let p = m.finish_over(&s, 2.0);
        assert_eq!(p.energy_unavailable, None, "{p:?}");
        let z: Vec<(&str, f64)> = p.zones.iter().map(|z| (z.name.as_str(), z.joules)).collect();
        assert_eq!(z, vec![("package-0", 60.0), ("package-1", 30.0)]);
        assert_eq!(p.package_joules(), Some(90.0));
        assert_eq!(p.zones[0].watts, 30.0);
        assert!(p.zones[0].zone.starts_with("amd_energy:hwmon3:"));
        // a socket counter that goes down: no wrap point, not guessed
        let s = m.start();
        put(d.path(), &format!("{h}/energy129_input"), "7\n");
        put(d.path(), &format!("{h}/energy130_input"), "garbage\n");
        let p = m.finish_over(&s, 1.0);
        assert!(p.zones.is_empty(), "{p:?}");
        assert!(p.energy_unavailable.is_some());
        // garbage counters at the start: unavailable, saying which file
        put(d.path(), &format!("{h}/energy129_input"), "garbage\n");
        put(d.path(), &format!("{h}/energy130_input"), "x".repeat(1 << 20).as_str());
        let p = Meter::open(&root, &[]).finish_over(&Meter::open(&root, &[]).start(), 1.0);
        assert!(p.zones.is_empty());
        assert!(p.energy_unavailable.unwrap().contains("hwmon3/energy"), "says the file");
        // RAPL zones win when both are there
        rapl(d.path(), 1, 1);
        let m = Meter::open(&root, &[]);
        let p = m.finish_over(&m.start(), 1.0);
        assert!(p.zones.iter().all(|z| z.zone.starts_with("intel-rapl")), "{p:?}");
    }

    #[test]
    fn missing_unreadable_and_hostile_sources_say_why() {
        // no powercap at all, a VM's cpuinfo
        let d = tempfile::tempdir().unwrap();
        put(d.path(), "proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu sse2 hypervisor\n");
        let p = Meter::open(&SysRoot::new(d.path()).unwrap(), &[0])
            .finish_over(&Meter::open(&SysRoot::new(d.path()).unwrap(), &[0]).start(), 1.0);
        let e = p.energy_unavailable.unwrap();
        assert!(e.contains("no RAPL zone") && e.contains("virtual machine"), "{e}");
        let f = p.frequency_unavailable.unwrap();
        assert!(f.contains("msr module") && f.contains("virtual machine"), "{f}");

        // garbage, a FIFO, a huge file as energy_uj: unavailable, no hang
        for hostile in ["garbage", "fifo", "huge"] {
            let d = tempfile::tempdir().unwrap();
            rapl(d.path(), 1, 1);
            for zone in ["intel-rapl:0", "intel-rapl:0:0"] {
                let p = d.path().join(format!("sys/class/powercap/{zone}/energy_uj"));
                std::fs::remove_file(&p).unwrap();
                match hostile {
                    "garbage" => std::fs::write(&p, "\u{1}\u{2}zz\n").unwrap(),
                    "fifo" => {
                        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
                        // SAFETY: a valid C string path; mkfifo only creates a node.
                        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                    }
                    _ => std::fs::write(&p, vec![b'9'; 4 << 20]).unwrap(),
                }
            }
            let m = Meter::open(&SysRoot::new(d.path()).unwrap(), &[]);
            let p = m.finish_over(&m.start(), 1.0);
            assert!(p.zones.is_empty(), "{hostile}: {p:?}");
            assert!(p.energy_unavailable.is_some(), "{hostile}");
        }
    }

    #[test]
    fn unreadable_energy_says_permission() {
        // root reads anything: the permission case is checked through the
        // message built for it
        let e = TopoError::Io {
            path: "/sys/class/powercap/intel-rapl:0/energy_uj".into(),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert!(why(&e).contains("permission denied"), "{}", why(&e));
    }

    #[test]
    fn aperf_mperf_give_the_busy_frequency() {
        let d = tempfile::tempdir().unwrap();
        let msr = |aperf: u64, mperf: u64| {
            let mut b = vec![0u8; 0xF0];
            b[MSR_MPERF as usize..MSR_MPERF as usize + 8].copy_from_slice(&mperf.to_le_bytes());
            b[MSR_APERF as usize..MSR_APERF as usize + 8].copy_from_slice(&aperf.to_le_bytes());
            std::fs::create_dir_all(d.path().join("dev/cpu/0")).unwrap();
            std::fs::write(d.path().join("dev/cpu/0/msr"), b).unwrap();
        };
        // A file stands for the device: registers 0xE7 and 0xE8 are byte
        // offsets here, so the two 8-byte reads overlap; the figure expected
        // is computed from what the file gives at each offset.
        let at = |b: &[u8], reg: u64| {
            u64::from_le_bytes(b[reg as usize..reg as usize + 8].try_into().unwrap())
        };
        msr(1_000, 1_000);
        let b0 = std::fs::read(d.path().join("dev/cpu/0/msr")).unwrap();
        put(d.path(), "sys/devices/system/cpu/cpu0/cpufreq/base_frequency", "2000000\n");
        let m = Meter::open(&SysRoot::new(d.path()).unwrap(), &[0]);
        let s = m.start();
        msr(1_000 + 3_000_000, 1_000 + 2_000_000);
        let b1 = std::fs::read(d.path().join("dev/cpu/0/msr")).unwrap();
        let p = m.finish_over(&s, 1.0);
        let da = at(&b1, MSR_APERF).wrapping_sub(at(&b0, MSR_APERF)) as f64;
        let dm = at(&b1, MSR_MPERF).wrapping_sub(at(&b0, MSR_MPERF)) as f64;
        assert_eq!(p.mean_mhz, Some(2000.0 * da / dm));
        assert_eq!(p.frequency_source.as_deref(), Some("aperf/mperf"));
        // the arithmetic: APERF ran 1.5x MPERF, 1.5 x the 2000 MHz base
        assert_eq!(busy_mhz(2000.0, (1_000, 1_000), (3_001_000, 2_001_000)), Some(3000.0));
        assert_eq!(busy_mhz(2000.0, (5, 5), (9, 5)), None);
    }
}
