//! The CPU rules: frequency governor, energy preference, boost, C-states,
//! SMT, isolation, and the IOMMU mode.

use super::*;

pub(super) fn governor(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let wants_perf = !matches!(i.profile, Profile::General);
    let expected =
        if wants_perf { "performance" } else { "any (schedutil/ondemand/powersave are fine)" };
    let cf = &i.settings.cpufreq;
    let g = match &cf.governor {
        Read::Value(g) => g,
        Read::Absent => {
            return rule.finding(Severity::Unknown)
                .found("no cpufreq: frequency is managed by firmware or a hypervisor (or the capture did not record it)")
                .expected(expected)
                .why("Without cpufreq the OS cannot set the governor; the BIOS power profile decides.")
                .fix(if wants_perf { "BIOS: System Profile / Power Policy = Performance (or OS control)" } else { "" }, if wants_perf { Needs::Bios } else { Needs::Nothing })
                .done()
        }
        other => return rule.not_read(i.terms, "scaling_governor", other, expected),
    };
    let driver = cf.driver.value().map(|d| d.describe()).unwrap_or_else(|| "unknown".into());
    // The P-state driver's mode: `active` means its own governor decides.
    let b = &i.settings.boost;
    let mode = [&b.amd_pstate_status, &b.intel_pstate_status]
        .into_iter()
        .find_map(|r| r.value())
        .map(|m| format!(", mode {m}"))
        .unwrap_or_default();
    let found = format!("{} (driver {driver}{mode})", g.describe());
    if !wants_perf || g.uniform() == Some("performance") {
        return rule
            .finding(Severity::Ok)
            .found(found)
            .expected(expected)
            .why("The governor suits this profile.")
            .done();
    }
    let sev = if i.profile == Profile::Virtualization { Severity::Info } else { Severity::Warn };
    rule.finding(sev)
        .found(found)
        .expected(expected)
        .why(match i.profile {
            Profile::Latency => "Dynamic governors lower the clock between requests and raise it only after load appears, so each burst starts slow.",
            _ => "Dynamic governors lag behind bursty load and lower the clock during memory-bound phases, which costs throughput and steadiness.",
        })
        .fix("cpupower frequency-set -g performance (or tuned-adm profile throughput-performance / latency-performance)", Needs::Runtime)
        .done()
}

pub(super) fn epp(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let p = match &i.settings.cpufreq.energy_performance_preference {
        Read::Value(p) => p,
        Read::Absent => return Vec::new(),
        other => {
            return rule.not_read(i.terms, "energy_performance_preference", other, "performance")
        }
    };
    let found = match i.settings.cpufreq.energy_perf_bias.value() {
        Some(epb) => format!("{}; energy_perf_bias {}", p.describe(), epb.describe()),
        None => p.describe(),
    };
    let sev = match i.profile {
        _ if p.uniform() == Some("performance") => Severity::Ok,
        Profile::Latency | Profile::Hpc => Severity::Warn,
        Profile::Database | Profile::AiTraining | Profile::Virtualization => Severity::Info,
        Profile::General if p.has("power") || p.has("balance_power") => Severity::Info,
        Profile::General => Severity::Ok,
    };
    let expected = if i.profile == Profile::General {
        "default or balance_performance"
    } else {
        "performance"
    };
    if sev == Severity::Ok {
        return rule
            .finding(sev)
            .found(found)
            .expected(expected)
            .why("The hardware favours speed as this profile wants.")
            .done();
    }
    rule.finding(sev)
        .found(found)
        .expected(expected)
        .why("The EPP hint tells the CPU's own frequency control how much to trade speed for energy; power-leaning values ramp up late.")
        .fix("echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference", Needs::Runtime)
        .done()
}

pub(super) fn boost(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let b = &i.settings.boost;
    let expected = if i.profile == Profile::Latency {
        "on (or off for the steadiest frequency)"
    } else {
        "on"
    };
    match b.enabled() {
        Read::Value(true) => rule.finding(Severity::Ok)
            .found("enabled")
            .expected(expected)
            .why("Cores run above base clock when thermal headroom allows.")
            .done(),
        Read::Value(false) if i.profile == Profile::Latency => rule.finding(Severity::Ok)
            .found("disabled")
            .expected(expected)
            .why("A fixed clock avoids frequency transitions on the request path, at some single-thread speed.")
            .done(),
        Read::Value(false) => rule.finding(Severity::Info)
            .found("disabled")
            .expected(expected)
            .why("Turbo raises clock speed when thermal headroom allows; with it off every core stays at base clock.")
            .fix("echo 0 > /sys/devices/system/cpu/intel_pstate/no_turbo, or echo 1 > /sys/devices/system/cpu/cpufreq/boost; BIOS: Turbo Boost / Core Performance Boost = Enabled", Needs::Runtime)
            .done(),
        // No switch on Arm is no setting to read: the x86 drivers' switches
        // do not exist there (docs/audit.md, "Arm servers").
        Read::Absent if arm(i.topology) => rule.finding(Severity::Ok)
            .found("no boost switch: intel_pstate/no_turbo and the AMD/ACPI cpufreq/boost are x86's, and this Arm machine's cpufreq driver offers none")
            .expected("n/a (an Arm cpufreq driver shows cpufreq/boost only where the firmware gives a boost range)")
            .why("Without a boost range the clock is what the firmware sets; there is nothing for the OS to switch.")
            .done(),
        other => rule.not_read(i.terms, "the turbo/boost switch", &other, expected),
    }
}

/// Exit latency above which an idle state counts as deep, microseconds.
pub const DEEP_CSTATE_US: u64 = 10;

pub(super) fn cstates(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let s = &i.settings;
    let cmd: Vec<String> = ["intel_idle.max_cstate", "processor.max_cstate", "idle", "cpuidle.off"]
        .iter()
        .filter_map(|k| {
            s.cmdline_option(k)
                .map(|v| if v.is_empty() { k.to_string() } else { format!("{k}={v}") })
        })
        .collect();
    let cmd_s =
        if cmd.is_empty() { String::new() } else { format!("; kernel line: {}", cmd.join(" ")) };
    let expected = if i.profile == Profile::Latency {
        format!("no enabled idle state with exit latency above {DEEP_CSTATE_US} us")
    } else {
        "deep states allowed (they free power for turbo)".to_string()
    };
    let poll = s.cmdline_option("idle").as_deref() == Some("poll");
    let states = match &s.cpuidle.states {
        Read::Value(v) => v,
        other => {
            if poll && i.profile != Profile::Latency {
                return idle_poll(rule, &expected);
            }
            return rule.not_read(i.terms, "cpuidle states", other, &expected);
        }
    };
    let ncpus = i.topology.cpus.len().max(1);
    let enabled: Vec<_> = states.iter().filter(|st| st.disabled_on.len() < ncpus).collect();
    let deep: Vec<_> = enabled.iter().filter(|st| st.exit_latency_us > DEEP_CSTATE_US).collect();
    let list = |v: &[&&crate::settings::IdleState]| {
        v.iter()
            .map(|st| format!("{} ({} us)", st.name, st.exit_latency_us))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let driver = s.cpuidle.driver.value().cloned().unwrap_or_else(|| "unknown".into());
    let found =
        format!("driver {driver}; enabled: {}{cmd_s}", list(&enabled.iter().collect::<Vec<_>>()));
    if i.profile == Profile::Latency && !deep.is_empty() {
        return rule.finding(Severity::Warn)
            .found(format!("{found}; deep: {}", list(&deep)))
            .expected(expected)
            .why("A request that arrives at an idle core waits for the state's exit latency, tens to hundreds of microseconds for deep states.")
            .fix(if arm(i.topology) {
                format!("cpupower idle-set -D {DEEP_CSTATE_US} (runtime), or cpuidle.off=1 on the kernel line")
            } else {
                format!("cpupower idle-set -D {DEEP_CSTATE_US} (runtime), or intel_idle.max_cstate=1 processor.max_cstate=1 on the kernel line, or BIOS: Package C-state limit = C0/C1")
            }, Needs::Runtime)
            .done();
    }
    if poll && i.profile != Profile::Latency {
        return idle_poll(rule, &expected);
    }
    rule.finding(Severity::Ok)
        .found(found)
        .expected(expected)
        .why("The idle states suit this profile.")
        .done()
}

fn idle_poll(rule: &Rule, expected: &str) -> Vec<Finding> {
    rule.finding(Severity::Info)
        .found("idle=poll on the kernel command line")
        .expected(expected)
        .why("idle=poll keeps idle cores spinning, which burns power, takes turbo headroom and steals cycles from SMT siblings.")
        .fix("remove idle=poll from the kernel command line and reboot", Needs::Reboot)
        .done()
}

pub(super) fn smt(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let threads = i.topology.cpus.iter().map(|c| c.thread_siblings.len()).max().unwrap_or(0);
    let control = match &i.settings.smt.control {
        Read::Value(c) => c.clone(),
        Read::Absent if threads > 0 => {
            if threads > 1 {
                "on".into()
            } else {
                "off or not supported".into()
            }
        }
        other => return rule.not_read(i.terms, "smt/control", other, "on"),
    };
    let on = control == "on" || (control.starts_with("not") && threads > 1);
    let found = format!("smt/control = {control}, {threads} thread(s) per core");
    if control.starts_with("not") && threads <= 1 {
        return rule
            .finding(Severity::Ok)
            .found(found)
            .expected("n/a")
            .why("This CPU has no SMT to configure.")
            .done();
    }
    if control == "off or not supported" && !matches!(i.profile, Profile::Latency | Profile::Hpc) {
        // No smt/control file and one thread per core: SMT disabled, or a
        // CPU without SMT. Do not guess which.
        return rule.finding(Severity::Unknown)
            .found(format!("smt/control is absent and there is {threads} thread per core: SMT is off or this CPU has none"))
            .expected("on (where the CPU has SMT)")
            .why("numaprobe cannot tell a CPU without SMT from SMT disabled in the BIOS without smt/control, and does not guess.")
            .done();
    }
    match (i.profile, on) {
        (Profile::Latency, true) => rule.finding(Severity::Info)
            .found(found)
            .expected("off, or latency-critical threads on cores whose sibling is idle")
            .why("SMT siblings share a core's caches and execution ports, so a busy sibling adds jitter to a latency-critical thread.")
            .fix("echo off > /sys/devices/system/cpu/smt/control (or nosmt on the kernel line; BIOS: Hyper-Threading = Disabled)", Needs::Runtime)
            .done(),
        (Profile::Latency, false) | (Profile::Hpc, _) => rule.finding(Severity::Ok)
            .found(found)
            .expected(if i.profile == Profile::Hpc { "either (most codes run one rank per core)" } else { "off" })
            .why("SMT matters little for codes that run one thread per core.")
            .done(),
        (_, true) => rule.finding(Severity::Ok).found(found).expected("on").why("SMT adds throughput to mixed and consolidated workloads.").done(),
        (_, false) => rule.finding(Severity::Info)
            .found(found)
            .expected("on")
            .why("SMT off halves the hardware threads, which costs throughput for databases, guests and mixed services.")
            .fix("echo on > /sys/devices/system/cpu/smt/control (BIOS: Hyper-Threading / SMT = Enabled)", Needs::Runtime)
            .done(),
    }
}

pub(super) fn isolation(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let s = &i.settings;
    let expected = if i.profile == Profile::Latency {
        "isolcpus/nohz_full on the cores that run the service"
    } else {
        "none needed"
    };
    if !s.cmdline.is_value() {
        return if i.profile == Profile::Latency {
            rule.not_read(i.terms, "the kernel command line", &s.cmdline, expected)
        } else {
            Vec::new()
        };
    }
    let iso = s.isolcpus.value();
    let nohz = s.nohz_full.value();
    let found = format!(
        "isolcpus={}, nohz_full={}",
        iso.map(String::as_str).unwrap_or("(none)"),
        nohz.map(String::as_str).unwrap_or("(none)")
    );
    match (i.profile, iso.is_some() || nohz.is_some()) {
        (Profile::Latency, false) => rule.finding(Severity::Info)
            .found(found)
            .expected(expected)
            .why("Isolated, tickless cores keep the scheduler, timer ticks and other tasks off the latency-critical threads.")
            .fix("add isolcpus=managed_irq,domain,<cpus> nohz_full=<cpus> rcu_nocbs=<cpus> to the kernel line (cores on the NIC's node), reboot, pin the service there", Needs::Reboot)
            .done(),
        (Profile::Latency, true) => rule.finding(Severity::Ok).found(found).expected(expected).why("Latency-critical threads can run undisturbed.").done(),
        (_, true) => rule.finding(Severity::Info)
            .found(found)
            .expected(expected)
            .why("Isolated CPUs get no load balancing: only processes pinned to them ever run there.")
            .fix("pin the intended work with taskset/numactl, or remove isolcpus/nohz_full from the kernel line", Needs::Reboot)
            .done(),
        (_, false) => rule.finding(Severity::Ok).found(found).expected(expected).why("Every CPU is available to the scheduler.").done(),
    }
}

pub(super) fn iommu(rule: &Rule, i: &Inputs) -> Vec<Finding> {
    let io = &i.settings.iommu;
    if let Read::Unreadable(_) = io.units {
        return rule.not_read(i.terms, "/sys/class/iommu", &io.units, "pass-through");
    }
    let mode = io.mode();
    let cmd = if io.cmdline.is_empty() {
        String::new()
    } else {
        format!(
            " (kernel line: {})",
            io.cmdline.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
        )
    };
    let mode_s = match mode {
        IommuMode::Off => "no IOMMU active",
        IommuMode::Passthrough => "pass-through (identity domains)",
        IommuMode::Translated => "translated DMA",
        IommuMode::Unknown => "IOMMU present, domain type unknown",
    };
    let found = format!("{mode_s}{cmd}");
    let fast_io = matches!(i.profile, Profile::Latency | Profile::AiTraining | Profile::Hpc);
    let on_arm = arm(i.topology);
    let (pt, pt_fix, on_fix) = if on_arm {
        (
            "pass-through (iommu.passthrough=1)",
            "add iommu.passthrough=1 to the kernel command line and reboot",
            "firmware: SMMU enabled; kernel line iommu.passthrough=1 for host devices; reboot",
        )
    } else {
        (
            "pass-through (iommu=pt)",
            "add iommu=pt (and intel_iommu=on on Intel) to the kernel command line and reboot",
            "BIOS: VT-d / AMD-Vi (IOMMU) = Enabled; kernel line intel_iommu=on iommu=pt; reboot",
        )
    };
    match (mode, i.profile) {
        (IommuMode::Translated, _) if fast_io => rule.finding(Severity::Warn)
            .found(found)
            .expected(pt)
            .why("Translated DMA costs an IOTLB lookup and map/unmap per buffer, which limits high packet rates and GPU/RDMA transfers.")
            .fix(pt_fix, Needs::Reboot)
            .done(),
        (IommuMode::Off, Profile::Virtualization) => rule.finding(Severity::Warn)
            .found(found)
            .expected(if on_arm { "IOMMU (SMMU) on, pass-through for host devices" } else { "IOMMU on (iommu=pt for host devices)" })
            .why("Device passthrough to guests (VFIO, SR-IOV) needs an active IOMMU.")
            .fix(on_fix, Needs::Bios)
            .done(),
        (IommuMode::Unknown, _) if fast_io => rule.finding(Severity::Unknown)
            .found(found)
            .expected(pt)
            .why("numaprobe could not read the IOMMU groups' domain type, so it does not guess.")
            .done(),
        _ => rule.finding(Severity::Ok)
            .found(found)
            .expected(if fast_io { "pass-through or off" } else { "any" })
            .why("The IOMMU mode does not limit this profile.")
            .done(),
    }
}
