//! Parsers for the text of single sysfs/procfs files. They take `&str` so
//! tests feed them strings; discovery adds the path to their errors.

use std::collections::BTreeMap;

use crate::model::{Cmdline, DeviceClass, Vendor};

/// What is wrong with a file's text, and on which line (1-based; 0 when the
/// file as a whole is wrong).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {msg}")]
pub struct ParseError {
    pub line: usize,
    pub msg: String,
}

impl ParseError {
    fn new(line: usize, msg: impl Into<String>) -> Self {
        ParseError { line, msg: msg.into() }
    }
}

/// Parses `/proc/meminfo` or `nodeN/meminfo` (`Node 0 MemTotal: 123 kB`).
///
/// Keys are the field names (`MemTotal`, `HugePages_Total`); values given in
/// `kB` are converted to bytes (kB here means KiB, as the kernel means it),
/// values without a unit (page counts) are kept as they are.
pub fn parse_meminfo(s: &str) -> Result<BTreeMap<String, u64>, ParseError> {
    let mut out = BTreeMap::new();
    for (i, line) in s.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (key, rest) = line
            .split_once(':')
            .ok_or_else(|| ParseError::new(i + 1, format!("no ':' in '{line}'")))?;
        // Node files prefix "Node N ".
        let key = key.split_whitespace().last().unwrap_or("").to_string();
        if key.is_empty() {
            return Err(ParseError::new(i + 1, format!("no field name in '{line}'")));
        }
        let mut words = rest.split_whitespace();
        let num =
            words.next().ok_or_else(|| ParseError::new(i + 1, format!("no value for {key}")))?;
        let v: u64 = num
            .parse()
            .map_err(|_| ParseError::new(i + 1, format!("{key}: '{num}' is not a number")))?;
        let v = match words.next() {
            None => v,
            Some(u) if u.eq_ignore_ascii_case("kb") => v
                .checked_mul(1024)
                .ok_or_else(|| ParseError::new(i + 1, format!("{key}: {v} kB overflows")))?,
            Some(u) => {
                return Err(ParseError::new(i + 1, format!("{key}: unknown unit '{u}'")));
            }
        };
        out.insert(key, v);
    }
    Ok(out)
}

/// Parses one row of `nodeN/distance` (`10 21 11 21`).
pub fn parse_distance(s: &str) -> Result<Vec<u32>, ParseError> {
    let row: Vec<u32> = s
        .split_whitespace()
        .map(|w| {
            w.parse::<u32>()
                .map_err(|_| ParseError::new(1, format!("distance '{w}' is not a number")))
        })
        .collect::<Result<_, _>>()?;
    if row.is_empty() {
        return Err(ParseError::new(0, "empty distance row"));
    }
    Ok(row)
}

/// Parses `nodeN/numastat` or `nodeN/vmstat`: one `name value` pair a line
/// (`numa_hit 12345`).
pub fn parse_numastat(s: &str) -> Result<BTreeMap<String, u64>, ParseError> {
    let mut out = BTreeMap::new();
    for (i, line) in s.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut w = line.split_whitespace();
        let (Some(k), Some(v), None) = (w.next(), w.next(), w.next()) else {
            return Err(ParseError::new(i + 1, format!("expected 'name value', found '{line}'")));
        };
        let v: u64 =
            v.parse().map_err(|_| ParseError::new(i + 1, format!("{k}: '{v}' is not a number")))?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// Parses a cache `size` file (`48K`, `2048K`, `105M`, `1G`, or plain
/// bytes) into bytes; K/M/G are powers of 1024 as the kernel uses them.
pub fn parse_cache_size(s: &str) -> Result<u64, ParseError> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        None => return Err(ParseError::new(0, "empty size")),
        Some((i, c)) => match c.to_ascii_uppercase() {
            'K' => (&t[..i], 1u64 << 10),
            'M' => (&t[..i], 1 << 20),
            'G' => (&t[..i], 1 << 30),
            _ => (t, 1),
        },
    };
    let n: u64 = num
        .trim()
        .parse()
        .map_err(|_| ParseError::new(0, format!("size '{t}' is not a number")))?;
    n.checked_mul(mult).ok_or_else(|| ParseError::new(0, format!("size '{t}' overflows")))
}

/// Parses a kernel page-size directory name such as `hugepages-2048kB`
/// into bytes.
pub fn parse_hugepage_dir(name: &str) -> Option<u64> {
    let kb: u64 = name.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse().ok()?;
    kb.checked_mul(1024)
}

/// What `/proc/cpuinfo` says about the CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuInfo {
    pub vendor: Vendor,
    /// Marketing name where the kernel gives one, or a name built from the
    /// Arm part number / POWER `cpu` line.
    pub model: Option<String>,
    /// x86 `cpu family`, decimal.
    pub family: Option<u32>,
    /// Architecture guessed from the fields present (`x86_64`, `i686`,
    /// `aarch64`, `ppc64`, `s390x`, `ia64`).
    pub arch: Option<String>,
    /// x86 `flags` / Arm `Features` of the first CPU.
    pub flags: Vec<String>,
}

/// Parses `/proc/cpuinfo`, looking at the first CPU's block (and global
/// lines on s390/POWER).
pub fn parse_cpuinfo(s: &str) -> CpuInfo {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in s.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim().to_string();
            // Keep the first occurrence of each key (the first CPU).
            if !fields.iter().any(|(fk, _)| *fk == k) {
                fields.push((k, v.trim().to_string()));
            }
        }
    }
    let get = |k: &str| fields.iter().find(|(fk, _)| fk == k).map(|(_, v)| v.as_str());
    let mut info = CpuInfo {
        vendor: Vendor::Unknown,
        model: None,
        family: get("cpu family").and_then(|f| f.parse().ok()),
        arch: None,
        flags: Vec::new(),
    };
    if let Some(v) = get("vendor_id") {
        info.vendor = match v {
            "GenuineIntel" => Vendor::Intel,
            "AuthenticAMD" | "HygonGenuine" => Vendor::Amd,
            v if v.starts_with("IBM") => Vendor::Ibm,
            _ => Vendor::Other,
        };
        if v.contains("S390") {
            info.arch = Some("s390x".into());
            info.model = get("machine").map(|m| format!("IBM Z machine {m}"));
        }
    }
    if let Some(f) = get("flags") {
        info.flags = f.split_whitespace().map(str::to_string).collect();
        if info.arch.is_none() {
            let lm = info.flags.iter().any(|f| f == "lm");
            info.arch = Some(if lm { "x86_64" } else { "i686" }.into());
        }
    }
    if let Some(m) = get("model name") {
        info.model = Some(squash_spaces(m));
    }
    // Itanium: "vendor : GenuineIntel", "family : Itanium 2".
    if info.vendor == Vendor::Unknown {
        if let Some(v) = get("vendor") {
            info.vendor = if v == "GenuineIntel" { Vendor::Intel } else { Vendor::Other };
            info.arch = Some("ia64".into());
            // Older kernels name the family ("Itanium 2"), newer give its
            // number (32 = Itanium 2 9000 series).
            info.model = get("family").map(|f| match f.parse::<u32>() {
                Ok(n) => format!("Intel Itanium (family {n})"),
                Err(_) => squash_spaces(f),
            });
        }
    }
    // Arm: "CPU implementer : 0x41", "CPU part : 0xd0c".
    if let Some(imp) = get("CPU implementer") {
        let imp = parse_hex(imp);
        let part = get("CPU part").and_then(parse_hex);
        info.vendor = match imp {
            Some(0x48) => Vendor::Hisilicon,
            _ => Vendor::Arm,
        };
        let arm64 = get("CPU architecture")
            .is_some_and(|a| a.trim() == "8" || a.contains("AArch64"))
            || get("Features").is_some_and(|f| f.contains("asimd"));
        info.arch = Some(if arm64 { "aarch64" } else { "arm" }.into());
        if let Some(f) = get("Features") {
            info.flags = f.split_whitespace().map(str::to_string).collect();
        }
        if info.model.is_none() {
            info.model =
                imp.and_then(|i| arm_part_name(i, part?)).map(str::to_string).or_else(|| {
                    Some(format!(
                        "Arm implementer {:#x} part {}",
                        imp.unwrap_or(0),
                        part.map_or("unknown".into(), |p| format!("{p:#x}"))
                    ))
                });
        }
    }
    // POWER: "cpu : POWER9, altivec supported".
    if let Some(cpu) = get("cpu") {
        if cpu.starts_with("POWER") || cpu.starts_with("PPC") {
            info.vendor = Vendor::Ibm;
            info.arch = Some("ppc64".into());
            let name = cpu.split(',').next().unwrap_or(cpu).trim();
            info.model = Some(name.to_string());
        }
    }
    info
}

fn squash_spaces(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_hex(s: &str) -> Option<u32> {
    u32::from_str_radix(s.trim().trim_start_matches("0x").trim_start_matches("0X"), 16).ok()
}

/// Names for the Arm parts a server is likely to have.
fn arm_part_name(implementer: u32, part: u32) -> Option<&'static str> {
    Some(match (implementer, part) {
        (0x41, 0xd03) => "Arm Cortex-A53",
        (0x41, 0xd07) => "Arm Cortex-A57",
        (0x41, 0xd08) => "Arm Cortex-A72",
        (0x41, 0xd0c) => "Arm Neoverse-N1",
        (0x41, 0xd40) => "Arm Neoverse-V1",
        (0x41, 0xd49) => "Arm Neoverse-N2",
        (0x41, 0xd4f) => "Arm Neoverse-V2",
        (0x41, 0xd84) => "Arm Neoverse-V3",
        (0x41, 0xd8e) => "Arm Neoverse-N3",
        (0x48, 0xd01) => "HiSilicon Kunpeng 920 (TaiShan v110)",
        (0x48, 0xd02) => "HiSilicon Kunpeng 930 (TaiShan v120)",
        (0x43, 0x0af) => "Cavium ThunderX2",
        (0x46, 0x001) => "Fujitsu A64FX",
        (0xc0, 0xac3) => "Ampere-1",
        (0x50, 0x000) => "Applied Micro X-Gene",
        _ => return None,
    })
}

/// Kernel command line options that change NUMA behaviour, memory
/// placement or timing; others are left out of [`Cmdline::options`].
pub const NUMA_CMDLINE_KEYS: &[&str] = &[
    "numa",
    "numa_balancing",
    "transparent_hugepage",
    "iommu",
    "intel_iommu",
    "amd_iommu",
    "processor.max_cstate",
    "intel_idle.max_cstate",
    "idle",
    "isolcpus",
    "nohz_full",
    "rcu_nocbs",
    "irqaffinity",
    "default_hugepagesz",
    "hugepagesz",
    "hugepages",
    "hugetlb_cma",
    "mem",
    "memmap",
    "movable_node",
    "kernelcore",
    "numa_interleave_memory",
];

/// Parses `/proc/cmdline`, keeping the options in [`NUMA_CMDLINE_KEYS`] in
/// the order given (a repeated option appears each time). Words after a
/// lone `--` belong to init and are ignored.
pub fn parse_cmdline(s: &str) -> Cmdline {
    let raw = s.trim().to_string();
    let options = kernel_params(&raw)
        .into_iter()
        .filter_map(|(key, v)| {
            NUMA_CMDLINE_KEYS.iter().find(|&&n| n == key).map(|known| (known.to_string(), v))
        })
        .collect();
    Cmdline { raw: Some(raw), options }
}

/// Every parameter of a kernel command line as the kernel reads it, as
/// `(name, value)` in the order given (value empty for a flag): words split
/// on whitespace outside double quotes, the quotes around a value dropped,
/// `-` in a name read as `_` (the kernel's `parameq` treats them alike), and
/// nothing after a lone `--` (init's arguments).
pub fn kernel_params(s: &str) -> Vec<(String, String)> {
    let mut params = Vec::new();
    for word in cmdline_words(s) {
        if word == "--" {
            break;
        }
        let (k, v) = match word.split_once('=') {
            Some((k, v)) => (k, v.trim_matches('"')),
            None => (word.as_str(), ""),
        };
        params.push((k.replace('-', "_"), v.to_string()));
    }
    params
}

/// The words of a kernel command line as the kernel splits it: on
/// whitespace outside double quotes, the quotes kept (init's arguments
/// after a lone `--` included, as words).
pub fn cmdline_words(s: &str) -> Vec<String> {
    split_cmdline(s.trim())
}

/// Splits on whitespace, keeping double-quoted runs together.
fn split_cmdline(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in s.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                cur.push(c);
            }
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One line of `/proc/self/cgroup`: `3:cpuset:/path` (v1) or `0::/path` (v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupEntry {
    pub hierarchy: u32,
    /// Controllers of a v1 hierarchy (`["cpu", "cpuacct"]`); empty for v2.
    pub controllers: Vec<String>,
    pub path: String,
}

/// Parses `/proc/self/cgroup`.
pub fn parse_proc_cgroup(s: &str) -> Result<Vec<CgroupEntry>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in s.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, ':');
        let (Some(h), Some(c), Some(p)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(ParseError::new(
                i + 1,
                format!("expected 'id:controllers:path', found '{line}'"),
            ));
        };
        let hierarchy = h
            .parse()
            .map_err(|_| ParseError::new(i + 1, format!("hierarchy id '{h}' is not a number")))?;
        let controllers =
            c.split(',').filter(|x| !x.is_empty()).map(str::to_string).collect::<Vec<_>>();
        out.push(CgroupEntry { hierarchy, controllers, path: p.to_string() });
    }
    Ok(out)
}

/// One line of `/proc/mounts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_point: String,
    pub fstype: String,
    pub options: Vec<String>,
}

/// Parses `/proc/mounts` (octal escapes such as `\040` decoded).
pub fn parse_mounts(s: &str) -> Vec<Mount> {
    s.lines()
        .filter_map(|line| {
            let mut w = line.split_whitespace();
            let _dev = w.next()?;
            let mp = unescape_mount(w.next()?);
            let fstype = w.next()?.to_string();
            let options = w.next().unwrap_or("").split(',').map(str::to_string).collect();
            Some(Mount { mount_point: mp, fstype, options })
        })
        .collect()
}

/// Undoes the octal escapes of `/proc/mounts` and `mountinfo` (`\040`
/// for a space). An escape above `\377` is not one the kernel writes; it is
/// kept as written.
pub fn unescape_mount(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && (b'0'..=b'3').contains(&b[i + 1])
            && b[i + 2..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a PCI `class` file (`0x030200`) into the 24-bit class code.
pub fn parse_pci_class(s: &str) -> Result<u32, ParseError> {
    let t = s.trim();
    parse_hex(t)
        .filter(|&v| v <= 0xff_ffff)
        .ok_or_else(|| ParseError::new(0, format!("PCI class '{t}' is not a 24-bit hex number")))
}

/// The placement-relevant class of a PCI class code, or `None` for
/// bridges, USB controllers and other devices placement does not care for.
pub fn classify_pci(class_code: u32) -> Option<DeviceClass> {
    let base = class_code >> 16;
    let sub = (class_code >> 8) & 0xff;
    let prog_if = class_code & 0xff;
    Some(match (base, sub) {
        (0x03, _) => DeviceClass::Gpu,
        (0x02, 0x07) => DeviceClass::Infiniband,
        (0x02, _) => DeviceClass::Nic,
        (0x0c, 0x06) => DeviceClass::Infiniband,
        (0x01, 0x08) if prog_if == 0x02 || prog_if == 0x03 => DeviceClass::Nvme,
        (0x01, _) => DeviceClass::Storage,
        (0x12, _) => DeviceClass::Accelerator,
        (0x0b, 0x40) => DeviceClass::Accelerator,
        (0x11, _) => DeviceClass::Accelerator,
        _ => return None,
    })
}

/// Parses a sysfs `numa_node` file: `-1` (unknown) is `None`.
pub fn parse_numa_node(s: &str) -> Result<Option<u32>, ParseError> {
    let t = s.trim();
    let v: i64 =
        t.parse().map_err(|_| ParseError::new(0, format!("numa_node '{t}' is not a number")))?;
    if v < 0 {
        Ok(None)
    } else {
        u32::try_from(v)
            .map(Some)
            .map_err(|_| ParseError::new(0, format!("numa_node {v} is out of range")))
    }
}

/// The kernel release from `/proc/version` (`Linux version 5.3.0 (...)`).
pub fn parse_proc_version(s: &str) -> Option<String> {
    let mut w = s.split_whitespace();
    while let Some(x) = w.next() {
        if x == "version" {
            return w.next().map(str::to_string);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_escapes_above_one_byte_are_kept_as_written() {
        assert_eq!(unescape_mount("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape_mount("/mnt/\\777x"), "/mnt/\\777x");
        assert_eq!(unescape_mount("/mnt/\\4"), "/mnt/\\4");
    }

    #[test]
    fn meminfo_node_and_proc_forms() {
        let node = "Node 0 MemTotal:        5073112 kB\nNode 0 MemFree:   4057112 kB\nNode 0 HugePages_Total:     3\n";
        let m = parse_meminfo(node).unwrap();
        assert_eq!(m["MemTotal"], 5073112 * 1024);
        assert_eq!(m["MemFree"], 4057112 * 1024);
        assert_eq!(m["HugePages_Total"], 3);
        let p = parse_meminfo("MemTotal:  16 kB\nHugepagesize:    2048 kB\n\n").unwrap();
        assert_eq!(p["MemTotal"], 16384);
        assert_eq!(p["Hugepagesize"], 2048 * 1024);
    }

    #[test]
    fn meminfo_malformed_names_the_line() {
        let e = parse_meminfo("MemTotal: 1 kB\nMemFree: lots kB\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("lots"), "{e}");
        assert_eq!(parse_meminfo("garbage line").unwrap_err().line, 1);
        assert!(parse_meminfo("MemTotal: 5 MB").unwrap_err().msg.contains("unit"));
        assert!(parse_meminfo("MemTotal:").is_err());
        assert!(parse_meminfo("MemTotal: 99999999999999999999 kB").is_err());
    }

    #[test]
    fn distance_rows() {
        assert_eq!(parse_distance("10 21 11 21\n").unwrap(), vec![10, 21, 11, 21]);
        assert!(parse_distance("10 x").unwrap_err().msg.contains("'x'"));
        assert!(parse_distance("   \n").is_err());
        assert!(parse_distance("10 -1").is_err());
    }

    #[test]
    fn numastat_pairs() {
        let m = parse_numastat("numa_hit 100\nnuma_miss 2\nlocal_node 98\n").unwrap();
        assert_eq!(m["numa_hit"], 100);
        assert_eq!(m["numa_miss"], 2);
        assert_eq!(m.len(), 3);
        assert_eq!(parse_numastat("numa_hit 1\nnuma_miss\n").unwrap_err().line, 2);
        assert!(parse_numastat("numa_hit x").is_err());
        assert!(parse_numastat("a 1 2").is_err());
    }

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_cache_size("48K\n").unwrap(), 48 * 1024);
        assert_eq!(parse_cache_size("2048K").unwrap(), 2 << 20);
        assert_eq!(parse_cache_size("105M").unwrap(), 105 << 20);
        assert_eq!(parse_cache_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_cache_size("512").unwrap(), 512);
        for bad in ["", "K", "12Q", "-4K", "4.5M"] {
            assert!(parse_cache_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_hugepage_dir("hugepages-2048kB"), Some(2 << 20));
        assert_eq!(parse_hugepage_dir("hugepages-1048576kB"), Some(1 << 30));
        assert_eq!(parse_hugepage_dir("hugepages-x"), None);
    }

    #[test]
    fn cpuinfo_x86() {
        let s = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz\nflags\t\t: fpu lm avx512f\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\n";
        let i = parse_cpuinfo(s);
        assert_eq!(i.vendor, Vendor::Intel);
        assert_eq!(i.model.as_deref(), Some("Intel(R) Xeon(R) Gold 6230 CPU @ 2.10GHz"));
        assert_eq!(i.arch.as_deref(), Some("x86_64"));
        assert!(i.flags.contains(&"avx512f".to_string()));
        assert_eq!(i.family, None);
        let f = parse_cpuinfo("vendor_id : AuthenticAMD\ncpu family\t: 25\n");
        assert_eq!(f.family, Some(25));
        let amd =
            parse_cpuinfo("vendor_id : AuthenticAMD\nmodel name : AMD EPYC 7742\nflags : fpu\n");
        assert_eq!(amd.vendor, Vendor::Amd);
        assert_eq!(amd.arch.as_deref(), Some("i686"));
    }

    #[test]
    fn cpuinfo_arm_power_s390_ia64() {
        let kp = parse_cpuinfo(
            "processor : 0\nBogoMIPS : 200\nFeatures : fp asimd\nCPU implementer : 0x48\nCPU architecture: 8\nCPU part : 0xd01\n",
        );
        assert_eq!(kp.vendor, Vendor::Hisilicon);
        assert_eq!(kp.arch.as_deref(), Some("aarch64"));
        assert!(kp.model.unwrap().contains("Kunpeng 920"));
        let n1 = parse_cpuinfo("CPU implementer : 0x41\nCPU architecture: 8\nCPU part : 0xd0c\n");
        assert_eq!(n1.vendor, Vendor::Arm);
        assert_eq!(n1.model.as_deref(), Some("Arm Neoverse-N1"));
        let unk = parse_cpuinfo("CPU implementer : 0x41\nCPU part : 0xfff\n");
        assert!(unk.model.unwrap().contains("0xfff"));
        let p9 = parse_cpuinfo("processor : 0\ncpu : POWER9, altivec supported\nrevision : 2.2\n");
        assert_eq!(p9.vendor, Vendor::Ibm);
        assert_eq!(p9.model.as_deref(), Some("POWER9"));
        assert_eq!(p9.arch.as_deref(), Some("ppc64"));
        let z = parse_cpuinfo("vendor_id       : IBM/S390\n# processors    : 20\n");
        assert_eq!(z.vendor, Vendor::Ibm);
        assert_eq!(z.arch.as_deref(), Some("s390x"));
        let ia =
            parse_cpuinfo("processor  : 0\nvendor     : GenuineIntel\nfamily     : Itanium 2\n");
        assert_eq!(ia.vendor, Vendor::Intel);
        assert_eq!(ia.arch.as_deref(), Some("ia64"));
        assert_eq!(ia.model.as_deref(), Some("Itanium 2"));
        let ia = parse_cpuinfo("vendor     : GenuineIntel\narch       : IA-64\nfamily     : 32\n");
        assert_eq!(ia.model.as_deref(), Some("Intel Itanium (family 32)"));
        let none = parse_cpuinfo("");
        assert_eq!(none.vendor, Vendor::Unknown);
        assert_eq!(none.model, None);
    }

    #[test]
    fn cmdline_keeps_numa_options_only() {
        let c = parse_cmdline(
            "BOOT_IMAGE=/vmlinuz root=/dev/sda1 numa=off numa-balancing=disable isolcpus=2-3 quiet init_arg=\"a b\" intel_iommu=on -- numa=fake=4\n",
        );
        assert_eq!(c.get("numa"), Some("off"));
        assert_eq!(c.get("numa_balancing"), Some("disable"));
        assert_eq!(c.get("isolcpus"), Some("2-3"));
        assert_eq!(c.get("intel_iommu"), Some("on"));
        assert_eq!(c.get("root"), None);
        assert_eq!(c.options.len(), 4, "{:?}", c.options);
        let f = parse_cmdline(
            "numa=fake=4 processor.max_cstate=1 nohz_full=1-3 transparent_hugepage=never",
        );
        assert_eq!(f.get("numa"), Some("fake=4"));
        assert_eq!(f.get("processor.max_cstate"), Some("1"));
        assert_eq!(f.get("transparent_hugepage"), Some("never"));
        assert!(parse_cmdline("").options.is_empty());
    }

    #[test]
    fn kernel_params_keep_quoted_values_whole() {
        let p = kernel_params(
            "ro dyndbg=\"file x.c -- +p\" intel-idle.max_cstate=1 idle=\"poll\" quiet -- single",
        );
        let want = [
            ("ro", ""),
            ("dyndbg", "file x.c -- +p"),
            ("intel_idle.max_cstate", "1"),
            ("idle", "poll"),
            ("quiet", ""),
        ];
        let got: Vec<(&str, &str)> = p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want);
        assert!(kernel_params("  \n").is_empty());
    }

    #[test]
    fn proc_cgroup_and_mounts() {
        let e =
            parse_proc_cgroup("4:cpuset:/\n2:cpu,cpuacct:/user.slice\n0::/user.slice/x.scope\n")
                .unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].controllers, vec!["cpuset"]);
        assert_eq!(e[1].controllers, vec!["cpu", "cpuacct"]);
        assert!(e[2].controllers.is_empty());
        assert_eq!(e[2].path, "/user.slice/x.scope");
        assert!(parse_proc_cgroup("garbage").is_err());
        assert!(parse_proc_cgroup("x:cpuset:/").is_err());
        let m = parse_mounts(
            "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\nnone /dev/cpu\\040set cpuset rw 0 0\n",
        );
        assert_eq!(m[0].fstype, "cgroup2");
        assert_eq!(m[1].mount_point, "/dev/cpu set");
    }

    #[test]
    fn pci_classes() {
        assert_eq!(parse_pci_class("0x030200\n").unwrap(), 0x030200);
        assert!(parse_pci_class("0xzz").is_err());
        assert!(parse_pci_class("0x1000000").is_err());
        assert_eq!(classify_pci(0x030200), Some(DeviceClass::Gpu));
        assert_eq!(classify_pci(0x030000), Some(DeviceClass::Gpu));
        assert_eq!(classify_pci(0x020000), Some(DeviceClass::Nic));
        assert_eq!(classify_pci(0x020700), Some(DeviceClass::Infiniband));
        assert_eq!(classify_pci(0x010802), Some(DeviceClass::Nvme));
        assert_eq!(classify_pci(0x010601), Some(DeviceClass::Storage));
        assert_eq!(classify_pci(0x120000), Some(DeviceClass::Accelerator));
        assert_eq!(classify_pci(0x060400), None);
        assert_eq!(parse_numa_node("-1\n").unwrap(), None);
        assert_eq!(parse_numa_node("3").unwrap(), Some(3));
        assert!(parse_numa_node("x").is_err());
    }

    #[test]
    fn proc_version() {
        assert_eq!(
            parse_proc_version("Linux version 5.3.0-rc7 (bgoglin@leonide) (gcc 9)").as_deref(),
            Some("5.3.0-rc7")
        );
        assert_eq!(parse_proc_version(""), None);
    }
}
