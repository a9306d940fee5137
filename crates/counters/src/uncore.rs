//! Memory-controller traffic per socket from the uncore PMUs the kernel
//! exposes under `/sys/bus/event_source/devices`, without extra tools:
//! each PMU's `type`, `cpumask` (one CPU per socket to open on), `format/`
//! (where each field's bits go in `config`) and `events/` (named
//! encodings, with `.scale` and `.unit`) build the attribute.
//!
//! * Intel servers: `uncore_imc_N`, events `cas_count_read` and
//!   `cas_count_write` (one CAS = one 64 B line; the kernel's scale says
//!   6.103515625e-5 MiB); when no such PMU has them, the free-running
//!   `uncore_imc_free_running_N` `data_read`/`data_write`.
//! * Intel clients: `uncore_imc`, `data_reads`/`data_writes`.
//! * AMD Zen 4 and later: `amd_umc_N` (Linux 6.10+) has no named events in
//!   sysfs; `umc_cas_cmd.rd` / `.wr` are `event=0x0a,rdwrmask=0x1` /
//!   `0x2`, as Linux's perf event tables give them, 64 B per CAS.
//! * AMD `amd_df` (Zen 2/3 data fabric) is not used: its DRAM channel
//!   events are family-specific encodings the kernel does not name.
//!
//! Counting is system-wide on each socket: anything else running moves
//! bytes too.

use std::collections::BTreeMap;

use perf_event::events::Software;
use perf_event::{Builder, Counter, ReadFormat};
use results::counters::UncoreReading;
use topo::{CpuSet, SysRoot};

const DEVICES: &str = "sys/bus/event_source/devices";

/// One named encoding of a PMU's event.
#[derive(Debug, Clone, PartialEq)]
pub struct PmuEvent {
    pub name: String,
    pub config: u64,
    pub config1: u64,
    /// Bytes one count stands for (`.scale` × `.unit`, else 64).
    pub bytes_per_count: f64,
}

/// A memory-controller PMU and its read and write events.
#[derive(Debug, Clone, PartialEq)]
pub struct ImcPmu {
    pub pmu: String,
    pub ty: u32,
    /// CPUs to open on (one per socket), from `cpumask`.
    pub cpus: Vec<u32>,
    pub read: PmuEvent,
    pub write: PmuEvent,
}

/// Where a format field's bits go.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    config1: bool,
    /// Bit ranges, low to high, inclusive.
    ranges: Vec<(u32, u32)>,
}

fn parse_format(text: &str) -> Option<Field> {
    let (dest, bits) = text.trim().split_once(':')?;
    let config1 = match dest {
        "config" => false,
        "config1" => true,
        _ => return None,
    };
    let ranges = bits
        .split(',')
        .map(|r| match r.split_once('-') {
            Some((lo, hi)) => Some((lo.trim().parse().ok()?, hi.trim().parse().ok()?)),
            None => r.trim().parse().ok().map(|b| (b, b)),
        })
        .collect::<Option<Vec<(u32, u32)>>>()?;
    (!ranges.is_empty() && ranges.iter().all(|&(lo, hi)| lo <= hi && hi < 64))
        .then_some(Field { config1, ranges })
}

fn parse_terms(text: &str) -> Option<Vec<(String, u64)>> {
    text.trim()
        .split(',')
        .filter(|t| !t.is_empty())
        .map(|t| match t.split_once('=') {
            Some((k, v)) => {
                let v = v.trim();
                let n = match v.strip_prefix("0x") {
                    Some(h) => u64::from_str_radix(h, 16).ok()?,
                    None => v.parse().ok()?,
                };
                Some((k.trim().to_string(), n))
            }
            None => Some((t.trim().to_string(), 1)),
        })
        .collect()
}

/// Puts each term's value into the bits its format field names.
fn encode(format: &BTreeMap<String, Field>, terms: &[(String, u64)]) -> Result<(u64, u64), String> {
    let (mut config, mut config1) = (0u64, 0u64);
    for (name, value) in terms {
        let f = format.get(name).ok_or_else(|| format!("no format field '{name}'"))?;
        let mut v = *value;
        let mut bits = 0u64;
        for &(lo, hi) in &f.ranges {
            let width = hi - lo + 1;
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            bits |= (v & mask) << lo;
            v = if width == 64 { 0 } else { v >> width };
        }
        if v != 0 {
            return Err(format!("value {value:#x} does not fit field '{name}'"));
        }
        if f.config1 {
            config1 |= bits;
        } else {
            config |= bits;
        }
    }
    Ok((config, config1))
}

fn unit_bytes(unit: &str) -> Option<f64> {
    Some(match unit.trim() {
        "B" | "Bytes" | "bytes" => 1.0,
        "KiB" | "KB" => 1024.0,
        "MiB" | "MB" => 1048576.0,
        "GiB" | "GB" => 1073741824.0,
        _ => return None,
    })
}

/// Reads one PMU directory; `events` names the (read, write) events to
/// look up, or `None` for AMD UMC's fixed encodings.
fn read_pmu(root: &SysRoot, pmu: &str, events: Option<(&str, &str)>) -> Result<ImcPmu, String> {
    let dir = format!("{DEVICES}/{pmu}");
    let read = |rel: &str| -> Result<Option<String>, String> {
        root.read_optional(&format!("{dir}/{rel}")).map_err(|e| e.to_string())
    };
    let ty: u32 = read("type")?
        .and_then(|t| t.trim().parse().ok())
        .ok_or_else(|| format!("{pmu}: no readable 'type'"))?;
    let cpus: Vec<u32> = match read("cpumask")? {
        Some(m) => {
            m.trim().parse::<CpuSet>().map_err(|e| format!("{pmu}/cpumask: {e}"))?.iter().collect()
        }
        None => vec![0],
    };
    let mut format = BTreeMap::new();
    for name in root.list_dir(&format!("{dir}/format")).map_err(|e| e.to_string())? {
        if let Some(f) = read(&format!("format/{name}"))?.as_deref().and_then(parse_format) {
            format.insert(name, f);
        }
    }
    let event = |name: &str, fixed: Option<&str>| -> Result<PmuEvent, String> {
        let text = match fixed {
            Some(t) => t.to_string(),
            None => read(&format!("events/{name}"))?
                .ok_or_else(|| format!("{pmu}: no event '{name}'"))?,
        };
        let terms = parse_terms(&text).ok_or_else(|| format!("{pmu}/events/{name}: malformed"))?;
        let (config, config1) =
            encode(&format, &terms).map_err(|e| format!("{pmu}/{name}: {e}"))?;
        let scale =
            read(&format!("events/{name}.scale"))?.and_then(|s| s.trim().parse::<f64>().ok());
        let unit = read(&format!("events/{name}.unit"))?.and_then(|u| unit_bytes(&u));
        let bytes_per_count = match (scale, unit) {
            (Some(s), Some(u)) => s * u,
            _ => 64.0,
        };
        Ok(PmuEvent { name: name.to_string(), config, config1, bytes_per_count })
    };
    let (read_ev, write_ev) = match events {
        Some((r, w)) => (event(r, None)?, event(w, None)?),
        None => (
            event("umc_cas_cmd.rd", Some("event=0x0a,rdwrmask=0x1"))?,
            event("umc_cas_cmd.wr", Some("event=0x0a,rdwrmask=0x2"))?,
        ),
    };
    Ok(ImcPmu { pmu: pmu.to_string(), ty, cpus, read: read_ev, write: write_ev })
}

fn numbered(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The memory-controller PMUs under `root`, or why there are none.
pub fn discover(root: &SysRoot) -> Result<Vec<ImcPmu>, String> {
    let mut names = root.list_dir(DEVICES).map_err(|e| e.to_string())?;
    names.sort_by_key(|n| {
        let digits: String = n.chars().rev().take_while(char::is_ascii_digit).collect();
        let num: u32 = digits.chars().rev().collect::<String>().parse().unwrap_or(0);
        (n.trim_end_matches(|c: char| c.is_ascii_digit()).to_string(), num)
    });
    let mut problems = Vec::new();
    let mut pick = |prefix_ok: &dyn Fn(&str) -> bool, ev: Option<(&str, &str)>| -> Vec<ImcPmu> {
        names
            .iter()
            .filter(|n| prefix_ok(n))
            .filter_map(|n| match read_pmu(root, n, ev) {
                Ok(p) => Some(p),
                Err(e) => {
                    problems.push(e);
                    None
                }
            })
            .collect()
    };
    let mut found =
        pick(&|n| numbered(n, "uncore_imc_"), Some(("cas_count_read", "cas_count_write")));
    if found.is_empty() {
        found =
            pick(&|n| numbered(n, "uncore_imc_free_running_"), Some(("data_read", "data_write")));
    }
    if found.is_empty() {
        found = pick(&|n| n == "uncore_imc", Some(("data_reads", "data_writes")));
    }
    if found.is_empty() {
        found = pick(&|n| numbered(n, "amd_umc_"), None);
    }
    if found.is_empty() {
        let amd_df = names.iter().any(|n| n == "amd_df");
        let mut why = if cfg!(target_arch = "aarch64") {
            "no memory-controller PMU numaprobe reads on Arm (it reads Intel's uncore_imc_* and \
             AMD's amd_umc_*; Arm servers' own, such as HiSilicon's hisi_sccl*_ddrc*, are not \
             read)"
                .to_string()
        } else {
            "no memory-controller PMU the kernel exposes (Intel uncore_imc_*, AMD amd_umc_*)"
                .to_string()
        };
        if amd_df {
            why.push_str("; amd_df is present but its DRAM events are not named by the kernel");
        }
        if !problems.is_empty() {
            why.push_str(&format!("; {}", problems.join("; ")));
        }
        return Err(why);
    }
    Ok(found)
}

fn package_of(root: &SysRoot, cpu: u32) -> u32 {
    root.read_optional(&format!("sys/devices/system/cpu/cpu{cpu}/topology/physical_package_id"))
        .ok()
        .flatten()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

struct Open {
    pmu: String,
    socket: u32,
    read: Result<Counter, String>,
    write: Result<Counter, String>,
    bytes: (f64, f64),
}

fn open_on(ty: u32, ev: &PmuEvent, cpu: u32) -> Result<Counter, String> {
    let mut b = Builder::new(Software::DUMMY);
    {
        let a = b.attrs_mut();
        a.type_ = ty;
        a.config = ev.config;
        a.config1 = ev.config1;
    }
    // uncore PMUs refuse the exclude_* bits: count everything on the socket
    b.any_pid()
        .one_cpu(cpu as usize)
        .enabled(false)
        .exclude_kernel(false)
        .exclude_hv(false)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING);
    b.build().map_err(|e| crate::set::reason(&e))
}

/// Memory-controller counters on every socket, opened and disabled.
pub struct Uncore {
    open: Vec<Open>,
}

impl Uncore {
    /// Discovers the PMUs under `root` and opens the read and write events
    /// on each socket; an error says why there is nothing to count.
    pub fn open(root: &SysRoot) -> Result<Uncore, String> {
        let pmus = discover(root)?;
        let mut open = Vec::new();
        for p in &pmus {
            for &cpu in &p.cpus {
                open.push(Open {
                    pmu: p.pmu.clone(),
                    socket: package_of(root, cpu),
                    read: open_on(p.ty, &p.read, cpu),
                    write: open_on(p.ty, &p.write, cpu),
                    bytes: (p.read.bytes_per_count, p.write.bytes_per_count),
                });
            }
        }
        Ok(Uncore { open })
    }

    fn each(&mut self, f: fn(&mut Counter) -> std::io::Result<()>) {
        for o in &mut self.open {
            for c in [&mut o.read, &mut o.write].into_iter().flatten() {
                let _ = f(c);
            }
        }
    }

    pub fn enable(&mut self) {
        self.each(Counter::enable)
    }

    pub fn disable(&mut self) {
        self.each(Counter::disable)
    }

    pub fn reset(&mut self) {
        self.each(Counter::reset)
    }

    /// Bytes read and written per socket since enabled (PMUs of one socket
    /// summed, multiplexing scaled).
    pub fn read(&mut self) -> Vec<UncoreReading> {
        let mut by_socket: BTreeMap<u32, UncoreReading> = BTreeMap::new();
        for o in &mut self.open {
            let get = |c: &mut Result<Counter, String>, per: f64| match c {
                Err(why) => Err(why.clone()),
                Ok(c) => match c.read_full() {
                    Ok(d) => {
                        let ns =
                            |t: Option<std::time::Duration>| t.map_or(0, |t| t.as_nanos() as u64);
                        results::counters::scale(
                            d.count(),
                            ns(d.time_enabled()),
                            ns(d.time_running()),
                        )
                        .map(|(v, s)| (v * per, s))
                        .ok_or_else(|| "never on the PMU while enabled".to_string())
                    }
                    Err(e) => Err(format!("read failed: {e}")),
                },
            };
            let r = get(&mut o.read, o.bytes.0);
            let w = get(&mut o.write, o.bytes.1);
            let entry = by_socket.entry(o.socket).or_insert_with(|| UncoreReading {
                socket: o.socket,
                pmus: String::new(),
                read_bytes: Some(0.0),
                write_bytes: Some(0.0),
                scaled: false,
                unavailable: None,
            });
            if !entry.pmus.is_empty() {
                entry.pmus.push(',');
            }
            entry.pmus.push_str(&o.pmu);
            for (slot, got) in [(&mut entry.read_bytes, r), (&mut entry.write_bytes, w)] {
                match got {
                    Ok((v, s)) => {
                        *slot = slot.map(|x| x + v);
                        entry.scaled |= s;
                    }
                    Err(why) => {
                        *slot = None;
                        entry.unavailable.get_or_insert(why);
                    }
                }
            }
        }
        by_socket.into_values().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn tree(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("np-uncore-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn intel_server_cas_counts_from_sysfs() {
        let d = tree("intel");
        for i in 0..2 {
            let p = format!("{DEVICES}/uncore_imc_{i}");
            write(&d, &format!("{p}/type"), &format!("{}\n", 13 + i));
            write(&d, &format!("{p}/cpumask"), "0,28\n");
            write(&d, &format!("{p}/format/event"), "config:0-7\n");
            write(&d, &format!("{p}/format/umask"), "config:8-15\n");
            write(&d, &format!("{p}/events/cas_count_read"), "event=0x04,umask=0x03\n");
            write(&d, &format!("{p}/events/cas_count_read.scale"), "6.103515625e-5\n");
            write(&d, &format!("{p}/events/cas_count_read.unit"), "MiB\n");
            write(&d, &format!("{p}/events/cas_count_write"), "event=0x04,umask=0x0c\n");
        }
        write(&d, &format!("{DEVICES}/cpu/type"), "4\n");
        let root = SysRoot::new(&d).unwrap();
        let pmus = discover(&root).unwrap();
        assert_eq!(pmus.len(), 2);
        let p = &pmus[1];
        assert_eq!((p.pmu.as_str(), p.ty, p.cpus.clone()), ("uncore_imc_1", 14, vec![0, 28]));
        assert_eq!(p.read.config, 0x0304);
        assert_eq!(p.write.config, 0x0c04);
        assert_eq!(p.read.bytes_per_count, 64.0, "6.103515625e-5 MiB is one 64 B line");
        assert_eq!(p.write.bytes_per_count, 64.0, "no scale file: 64 B per CAS");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn amd_umc_uses_the_fixed_cas_encodings_and_amd_df_alone_is_explained() {
        let d = tree("amd");
        let p = format!("{DEVICES}/amd_umc_0");
        write(&d, &format!("{p}/type"), "21\n");
        write(&d, &format!("{p}/cpumask"), "0\n");
        write(&d, &format!("{p}/format/event"), "config:0-7\n");
        write(&d, &format!("{p}/format/rdwrmask"), "config:8-9\n");
        let root = SysRoot::new(&d).unwrap();
        let pmus = discover(&root).unwrap();
        assert_eq!(pmus[0].read.config, 0x10a);
        assert_eq!(pmus[0].write.config, 0x20a);

        let d2 = tree("df");
        write(&d2, &format!("{DEVICES}/amd_df/type"), "20\n");
        write(&d2, &format!("{DEVICES}/software/type"), "1\n");
        let why = discover(&SysRoot::new(&d2).unwrap()).unwrap_err();
        assert!(why.contains("no memory-controller PMU") && why.contains("amd_df"), "{why}");
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&d2).unwrap();
    }

    #[test]
    fn formats_with_split_fields_and_bad_values() {
        let f = parse_format("config:0-7,32-35").unwrap();
        let mut m = BTreeMap::new();
        m.insert("event".to_string(), f);
        m.insert("edge".to_string(), parse_format("config1:18").unwrap());
        // 0x1ab: low 8 bits at 0-7, the rest (0x1) at 32
        assert_eq!(encode(&m, &[("event".into(), 0x1ab)]).unwrap(), (0x1_0000_00ab, 0));
        assert_eq!(encode(&m, &[("edge".into(), 1)]).unwrap(), (0, 1 << 18));
        assert!(encode(&m, &[("event".into(), 0x1000)]).unwrap_err().contains("does not fit"));
        assert!(encode(&m, &[("nope".into(), 1)]).is_err());
        assert_eq!(parse_format("config2:0-3"), None);
        assert_eq!(parse_format("config:9-3"), None);
        assert_eq!(
            parse_terms("event=0x04,umask=3,edge").unwrap(),
            vec![("event".to_string(), 4), ("umask".to_string(), 3), ("edge".to_string(), 1)]
        );
    }

    #[test]
    fn this_machine_says_why_it_has_no_memory_controller_counters() {
        // the development VM exposes cpu-less PMUs only (software, msr, ...)
        match Uncore::open(&SysRoot::live()) {
            Err(why) => assert!(why.contains("no memory-controller PMU"), "{why}"),
            Ok(mut u) => {
                // a machine that has them: every socket reads or says why
                u.enable();
                u.disable();
                for r in u.read() {
                    assert!(r.read_bytes.is_some() || r.unavailable.is_some(), "{r:?}");
                }
            }
        }
    }
}
