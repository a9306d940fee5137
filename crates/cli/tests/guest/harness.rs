//! Boots Debian's kernel under QEMU with an emulated NUMA topology and a tiny
//! initramfs (static busybox + static numaprobe + a generated `/init`), runs
//! a list of shell commands inside, and returns what each printed.
//!
//! The guest prints every command's output between serial-log markers:
//!
//! ```text
//! @@BEGIN name@@      stdout
//! @@STDERR name@@     stderr
//! @@END name rc=N@@
//! @@DONE@@            after the last command, just before power-off
//! ```
//!
//! QEMU exits 0 on power-off and on a guest panic alike, so the outcome is
//! decided from these markers only. Artifacts come from
//! `scripts/guest-setup.sh` (kernel in `target/guest/vmlinux`, busybox-static
//! as `/bin/busybox`); the static numaprobe is (re)built here, once per test
//! process, into `target/static`. Each boot leaves its files (init script,
//! initramfs, serial log) in `target/guest/run/<machine>/` for debugging.
//!
//! An Arm machine ([`Machine::arch`] with [`Arch::Aarch64`]) is QEMU's
//! `virt` board under `qemu-system-aarch64` (TCG, `-cpu max`), its NUMA
//! description in the device tree QEMU writes, with the artifacts of
//! `scripts/guest-arm-setup.sh` (`target/guest-arm/`: Debian's arm64
//! kernel, busybox-static:arm64) and the static aarch64 numaprobe built by
//! `scripts/aarch64-cargo` into `target/aarch64`; its files go to
//! `target/guest-arm/run/<machine>/`.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Kernel command line every boot gets; machines add theirs after it.
/// `lpj=` skips the delay-loop calibration (slow under emulation).
const BASE_CMDLINE: &str = "console=ttyS0 panic=-1 quiet lpj=7000000 rdinit=/init";

/// The guest's architecture: what QEMU emulates and which kernel, busybox
/// and numaprobe boot in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// `qemu-system-x86_64 -machine q35`, KVM when it works.
    X86_64,
    /// `qemu-system-aarch64 -machine virt`, always TCG (`-cpu max`: SVE,
    /// an emulated PMUv3), the serial console on the PL011 (`ttyAMA0`).
    /// Only the Arm suite (guest_arm.rs) builds one.
    #[allow(dead_code)]
    Aarch64,
}

impl Arch {
    fn qemu(self) -> &'static str {
        match self {
            Arch::X86_64 => "qemu-system-x86_64",
            Arch::Aarch64 => "qemu-system-aarch64",
        }
    }

    /// The folder under `target/` holding the kernel and the boots.
    fn dir(self) -> &'static str {
        match self {
            Arch::X86_64 => "guest",
            Arch::Aarch64 => "guest-arm",
        }
    }

    fn cmdline(self) -> String {
        match self {
            Arch::X86_64 => BASE_CMDLINE.to_string(),
            Arch::Aarch64 => BASE_CMDLINE.replace("console=ttyS0", "console=ttyAMA0"),
        }
    }
}

/// One node of an emulated machine.
#[derive(Debug, Clone)]
struct NodeSpec {
    id: u32,
    mem_mib: u32,
    /// `(socket, core)` pairs whose CPU belongs to this node.
    cores: Vec<(u32, u32)>,
    /// HMAT initiator: the node whose CPUs are nearest (set for every node
    /// when HMAT is on; CPU nodes are their own initiator).
    initiator: Option<u32>,
}

/// A QEMU machine plus the commands to run in it. Built with chained calls:
///
/// ```ignore
/// let boot = Machine::new("snc2")
///     .sockets(2, 2)
///     .node(0, 256, &[(0, 0)])
///     .distances(&[&[10, 21], &[21, 10]])
///     .run("topo", "numaprobe topo --json")
///     .boot();
/// let topo = boot.json("topo");
/// ```
#[derive(Debug, Clone)]
pub struct Machine {
    name: String,
    sockets: u32,
    cores_per_socket: u32,
    /// Memory when no node is declared (MiB).
    mem_mib: u32,
    nodes: Vec<NodeSpec>,
    distances: Vec<Vec<u32>>,
    hmat: Vec<String>,
    cmdline: Vec<String>,
    commands: Vec<(String, String)>,
    /// QEMU `-cpu` model instead of the accelerator's default (`host`
    /// under KVM, `max` under TCG), e.g. `EPYC`.
    cpu_model: Option<String>,
    /// More files for the initramfs: (path in the guest, file here).
    files: Vec<(String, PathBuf)>,
    /// `-smbios` values (`type=17,...`), in order.
    smbios: Vec<String>,
    arch: Arch,
    /// The kernel file under the architecture's folder (`vmlinux` on
    /// x86-64, `vmlinuz` on Arm).
    kernel: Option<String>,
}

/// The Memory Device (SMBIOS type 17) fields QEMU lets a guest's firmware
/// table carry (`-smbios type=17,...`). QEMU writes one type 17 record per
/// 16 GiB of guest RAM (one for the small guests here), each with locator
/// `"<loc_pfx> <n>"`, `n` counted from 0, the same bank, manufacturer,
/// part number and speed (as both rated and configured speed), and memory
/// type "RAM" (0x07); one type 4 record per socket.
#[derive(Debug, Clone, Default)]
pub struct Dimms {
    pub loc_pfx: &'static str,
    pub bank: Option<&'static str>,
    pub manufacturer: Option<&'static str>,
    pub part: Option<&'static str>,
    pub speed_mts: Option<u32>,
}

impl Dimms {
    /// The `-smbios` value (a `,` inside a value is written `,,`).
    fn arg(&self) -> String {
        let esc = |v: &str| v.replace(',', ",,");
        let mut a = format!("type=17,loc_pfx={}", esc(self.loc_pfx));
        for (k, v) in
            [("bank", self.bank), ("manufacturer", self.manufacturer), ("part", self.part)]
        {
            if let Some(v) = v {
                let _ = write!(a, ",{k}={}", esc(v));
            }
        }
        if let Some(s) = self.speed_mts {
            let _ = write!(a, ",speed={s}");
        }
        a
    }
}

impl Machine {
    /// A machine named `name` (used for its run directory): 2 sockets x 2
    /// cores, 1 GiB, no NUMA description (one node, as with firmware
    /// interleaving) until [`Machine::node`] adds nodes.
    pub fn new(name: &str) -> Machine {
        assert!(valid_name(name), "machine name {name:?}: use [a-z0-9_-]");
        Machine {
            name: name.to_string(),
            sockets: 2,
            cores_per_socket: 2,
            mem_mib: 1024,
            nodes: Vec::new(),
            distances: Vec::new(),
            hmat: Vec::new(),
            cmdline: Vec::new(),
            commands: Vec::new(),
            cpu_model: None,
            files: Vec::new(),
            smbios: Vec::new(),
            arch: Arch::X86_64,
            kernel: None,
        }
    }

    /// The architecture to emulate (default x86-64). Arm machines have no
    /// HMAT and no SMBIOS here (QEMU's `virt` board gives them only with
    /// firmware, and these guests boot the kernel directly).
    #[allow(dead_code)] // the x86-64 suites never call it
    pub fn arch(mut self, arch: Arch) -> Machine {
        self.arch = arch;
        self
    }

    /// Boots `file` of the architecture's folder (`target/guest-arm/vmlinuz-16k`)
    /// instead of the default kernel.
    #[allow(dead_code)] // the x86-64 suites never call it
    pub fn kernel(mut self, file: &str) -> Machine {
        self.kernel = Some(file.to_string());
        self
    }

    /// Puts the file `host` at `guest` (relative, e.g. `lib64/libc.so.6`;
    /// its folder must be `bin` or `lib64`) in the initramfs, executable.
    pub fn file(mut self, guest: &str, host: &Path) -> Machine {
        assert!(
            guest.starts_with("bin/") || guest.starts_with("lib64/"),
            "{guest}: extra files go in bin/ or lib64/"
        );
        self.files.push((guest.to_string(), host.to_path_buf()));
        self
    }

    /// `sockets` packages of `cores` cores each, one thread per core.
    pub fn sockets(mut self, sockets: u32, cores: u32) -> Machine {
        self.sockets = sockets;
        self.cores_per_socket = cores;
        self
    }

    /// A node with `mem_mib` MiB and the CPUs at `(socket, core)`; an empty
    /// list makes a memory-only node. Declare nodes in id order.
    pub fn node(mut self, id: u32, mem_mib: u32, cores: &[(u32, u32)]) -> Machine {
        self.nodes.push(NodeSpec { id, mem_mib, cores: cores.to_vec(), initiator: None });
        self
    }

    /// The full SLIT matrix, rows and columns in node id order.
    pub fn distances(mut self, matrix: &[&[u32]]) -> Machine {
        self.distances = matrix.iter().map(|r| r.to_vec()).collect();
        self
    }

    /// Turns HMAT on: `initiators` gives each memory-only node's initiator
    /// node as `(node, initiator)`; `entries` are raw QEMU `-numa` values
    /// (`hmat-lb,...`, `hmat-cache,...`).
    pub fn hmat(mut self, initiators: &[(u32, u32)], entries: &[String]) -> Machine {
        for n in &mut self.nodes {
            n.initiator = Some(
                initiators.iter().find(|(node, _)| *node == n.id).map_or(n.id, |(_, init)| *init),
            );
        }
        self.hmat = entries.to_vec();
        self
    }

    /// The CPU model QEMU emulates (`-cpu MODEL`), e.g. `EPYC`: its vendor,
    /// family and cache leaves are what the guest kernel reads.
    pub fn cpu_model(mut self, model: &str) -> Machine {
        self.cpu_model = Some(model.to_string());
        self
    }

    /// The firmware's SMBIOS Memory Device records (see [`Dimms`]); without
    /// it they are QEMU's defaults (locator `DIMM 0`, no bank, speed unknown).
    pub fn dimms(mut self, d: &Dimms) -> Machine {
        self.smbios.push(d.arg());
        self
    }

    /// Appends an option to the kernel command line.
    pub fn kernel_arg(mut self, arg: &str) -> Machine {
        self.cmdline.push(arg.to_string());
        self
    }

    /// Runs `shell` (busybox sh; `numaprobe` is on the PATH) in the guest and
    /// keeps its output under `name`. Commands run in the order added.
    pub fn run(mut self, name: &str, shell: &str) -> Machine {
        assert!(valid_name(name), "command name {name:?}: use [a-z0-9_-]");
        assert!(
            self.commands.iter().all(|(n, _)| n != name),
            "command name {name:?} used twice in machine {}",
            self.name
        );
        self.commands.push((name.to_string(), shell.to_string()));
        self
    }

    fn cpus(&self) -> u32 {
        self.sockets * self.cores_per_socket
    }

    /// QEMU's arguments for this machine (without accelerator and files).
    fn qemu_args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |s: String| a.push(s);
        let hmat = !self.hmat.is_empty();
        assert!(
            self.arch == Arch::X86_64 || (!hmat && self.smbios.is_empty()),
            "machine {}: HMAT and SMBIOS are x86-64 only here",
            self.name
        );
        push("-machine".into());
        push(match (self.arch, hmat) {
            (Arch::Aarch64, _) => "virt".into(),
            (Arch::X86_64, true) => "q35,hmat=on".into(),
            (Arch::X86_64, false) => "q35".into(),
        });
        push("-smp".into());
        push(format!(
            "{},sockets={},cores={},threads=1",
            self.cpus(),
            self.sockets,
            self.cores_per_socket
        ));
        let mem: u32 = if self.nodes.is_empty() {
            self.mem_mib
        } else {
            self.nodes.iter().map(|n| n.mem_mib).sum()
        };
        push("-m".into());
        push(format!("{mem}M"));
        for n in &self.nodes {
            push("-object".into());
            push(format!("memory-backend-ram,id=m{},size={}M", n.id, n.mem_mib));
            push("-numa".into());
            let init = n.initiator.map(|i| format!(",initiator={i}")).unwrap_or_default();
            push(format!("node,nodeid={},memdev=m{}{init}", n.id, n.id));
        }
        for n in &self.nodes {
            for (socket, core) in &n.cores {
                push("-numa".into());
                push(format!("cpu,node-id={},socket-id={socket},core-id={core}", n.id));
            }
        }
        for (i, row) in self.distances.iter().enumerate() {
            for (j, d) in row.iter().enumerate() {
                if i != j {
                    push("-numa".into());
                    push(format!("dist,src={},dst={},val={d}", self.nodes[i].id, self.nodes[j].id));
                }
            }
        }
        for e in &self.hmat {
            push("-numa".into());
            push(e.clone());
        }
        for e in &self.smbios {
            push("-smbios".into());
            push(e.clone());
        }
        a
    }

    /// The `/init` script: mounts, runs each command between markers, powers off.
    fn init_script(&self) -> String {
        let mut s = String::from(
            r#"#!/bin/sh
/bin/busybox --install -s /bin
export PATH=/bin HOME=/root NUMAPROBE_DB=/tmp/results.db
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
dmesg -n 1  # keep kernel messages out of the command output
echo "@@READY $(uname -r)@@"
run() {
    ( eval "$2" ) </dev/null >/tmp/out 2>/tmp/err
    rc=$?
    echo "@@BEGIN $1@@"
    cat /tmp/out
    [ -s /tmp/out ] && [ -n "$(tail -c 1 /tmp/out)" ] && echo
    echo "@@STDERR $1@@"
    cat /tmp/err
    [ -s /tmp/err ] && [ -n "$(tail -c 1 /tmp/err)" ] && echo
    echo "@@END $1 rc=$rc@@"
}
"#,
        );
        for (name, shell) in &self.commands {
            let _ = writeln!(s, "run {name} '{}'", shell.replace('\'', r"'\''"));
        }
        // Give the UART time to drain before the power goes.
        s.push_str("echo @@DONE@@\nsleep 0.3\npoweroff -f\n");
        s
    }

    /// Boots the machine, runs the commands and parses the serial log.
    /// Panics (failing the test) with the log's tail when the guest does
    /// not reach `@@DONE@@` in time.
    pub fn boot(self) -> Boot {
        let a = artifacts(self.arch);
        let dir = a.root.join("target").join(self.arch.dir()).join("run").join(&self.name);
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        let init = self.init_script();
        fs::write(dir.join("init.sh"), &init).expect("writing init.sh");
        let initrd = dir.join("initramfs.cpio");
        let cpio = initramfs_with(&init, &a.busybox, &a.numaprobe, &self.files)
            .unwrap_or_else(|e| panic!("building the initramfs: {e}"));
        fs::write(&initrd, cpio).unwrap_or_else(|e| panic!("writing {}: {e}", initrd.display()));

        let cmdline = std::iter::once(self.arch.cmdline())
            .chain(self.cmdline.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let vmlinux = match &self.kernel {
            Some(f) => a.root.join("target").join(self.arch.dir()).join(f),
            None => a.vmlinux.clone(),
        };
        assert!(vmlinux.is_file(), "{} is missing: {}", vmlinux.display(), a.hint);
        let accel = match self.arch {
            Arch::X86_64 => accel(),
            Arch::Aarch64 => Accel::Tcg,
        };
        let mut args = accel.args(self.arch);
        if let (Some(model), Some(i)) = (&self.cpu_model, args.iter().position(|a| a == "-cpu")) {
            args[i + 1] = model.clone();
        }
        args.extend(self.qemu_args());
        args.extend(
            [
                "-nodefaults",
                "-display",
                "none",
                "-no-reboot",
                "-serial",
                &format!("file:{}", dir.join("serial.log").display()),
                "-kernel",
                &vmlinux.display().to_string(),
                "-initrd",
                &initrd.display().to_string(),
                "-append",
                &cmdline,
            ]
            .map(String::from),
        );
        fs::write(dir.join("qemu.args"), args.join("\n")).expect("writing qemu.args");

        let _slot = Slot::take();
        let start = Instant::now();
        let outcome = run_qemu(self.arch.qemu(), &args, &dir, timeout());
        let wall = start.elapsed();
        let log = fs::read(dir.join("serial.log"))
            .map(|b| String::from_utf8_lossy(&b).replace('\r', ""))
            .unwrap_or_default();
        let boot = Boot::parse(&self.name, &log);
        eprintln!(
            "guest {}: {} commands in {:.1} s ({}, kernel {})",
            self.name,
            self.commands.len(),
            wall.as_secs_f64(),
            accel.name(),
            boot.kernel
        );
        let missing = self.commands.iter().find(|(n, _)| !boot.outputs.contains_key(n));
        let why = if !boot.done {
            Some("the guest did not reach @@DONE@@ (panic, hang or cut-off log)".to_string())
        } else {
            missing.map(|(n, _)| format!("no complete @@BEGIN/@@END block for command {n}"))
        };
        if let Some(why) = why {
            panic!(
                "guest {}: {why}\nqemu: {outcome}\nfiles: {}\n--- serial log (tail) ---\n{}",
                self.name,
                dir.display(),
                tail(&log, 60)
            );
        }
        let _ = fs::remove_file(&initrd); // ~50 MiB; kept only when a boot fails
        boot
    }
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

/// What one command printed in the guest.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub name: String,
    pub stdout: String,
    pub stderr: String,
    pub rc: i32,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "command {} exited {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.name,
            self.rc,
            tail(&self.stdout, 40),
            tail(&self.stderr, 20)
        )
    }
}

impl Output {
    /// Stdout as JSON; panics naming the command when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }

    /// The `results` of a `bw`/`lat` document.
    pub fn results(&self) -> Vec<serde_json::Value> {
        let v = self.json();
        v["results"].as_array().unwrap_or_else(|| panic!("no results[]\n{self}")).clone()
    }

    /// Stdout deserialised into `T` (e.g. `topo::Topology`).
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout does not match {} ({e})\n{self}", std::any::type_name::<T>())
        })
    }

    /// Panics unless the command exited with `rc`.
    pub fn expect_rc(&self, rc: i32) -> &Output {
        assert_eq!(self.rc, rc, "unexpected exit status\n{self}");
        self
    }
}

/// The parsed serial log of one boot.
#[derive(Debug)]
pub struct Boot {
    pub machine: String,
    /// `uname -r` in the guest.
    pub kernel: String,
    pub outputs: BTreeMap<String, Output>,
    /// True when the guest printed `@@DONE@@` (all commands ran).
    pub done: bool,
}

impl Boot {
    /// Parses a serial log (`\r` already removed). Lines outside the
    /// markers (kernel messages) are ignored.
    pub fn parse(machine: &str, log: &str) -> Boot {
        let mut boot = Boot {
            machine: machine.to_string(),
            kernel: String::from("?"),
            outputs: BTreeMap::new(),
            done: false,
        };
        // (name, in stderr part, output so far)
        let mut cur: Option<(String, bool, Output)> = None;
        for line in log.lines() {
            if let Some(k) = line.strip_prefix("@@READY ").and_then(|l| l.strip_suffix("@@")) {
                boot.kernel = k.to_string();
            } else if let Some(n) = line.strip_prefix("@@BEGIN ").and_then(|l| l.strip_suffix("@@"))
            {
                let out = Output { name: n.to_string(), ..Output::default() };
                cur = Some((n.to_string(), false, out));
            } else if let Some(n) =
                line.strip_prefix("@@STDERR ").and_then(|l| l.strip_suffix("@@"))
            {
                match &mut cur {
                    Some((name, err, _)) if name == n => *err = true,
                    _ => cur = None,
                }
            } else if let Some(rest) =
                line.strip_prefix("@@END ").and_then(|l| l.strip_suffix("@@"))
            {
                let (n, rc) = rest.rsplit_once(" rc=").unwrap_or((rest, ""));
                match (cur.take(), rc.parse::<i32>()) {
                    (Some((name, _, mut out)), Ok(rc)) if name == n => {
                        out.rc = rc;
                        boot.outputs.insert(name, out);
                    }
                    _ => {} // malformed block: the caller reports it missing
                }
            } else if line == "@@DONE@@" {
                boot.done = true;
            } else if let Some((_, err, out)) = &mut cur {
                let s = if *err { &mut out.stderr } else { &mut out.stdout };
                s.push_str(line);
                s.push('\n');
            }
        }
        boot
    }

    /// The output of command `name`; panics when there is none.
    pub fn get(&self, name: &str) -> &Output {
        self.outputs
            .get(name)
            .unwrap_or_else(|| panic!("guest {}: no output for command {name}", self.machine))
    }

    /// Stdout of `name` as JSON, after checking it exited 0.
    pub fn json(&self, name: &str) -> serde_json::Value {
        self.get(name).expect_rc(0).json()
    }
}

// --- initramfs (cpio "newc", uncompressed: the kernel unpacks it as is) ---

struct Cpio {
    buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, rdev: (u32, u32), data: &[u8]) {
        self.ino += 1;
        let fields = [
            self.ino,
            mode,
            0, // uid
            0, // gid
            1, // nlink
            0, // mtime
            u32::try_from(data.len()).expect("cpio member under 4 GiB"),
            0, // devmajor
            0, // devminor
            rdev.0,
            rdev.1,
            u32::try_from(name.len() + 1).expect("short name"),
            0, // check
        ];
        self.buf.extend_from_slice(b"070701");
        for f in fields {
            self.buf.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        self.pad();
        self.buf.extend_from_slice(data);
        self.pad();
    }

    /// Members and names are aligned to 4 bytes.
    fn pad(&mut self) {
        let len = self.buf.len().next_multiple_of(4);
        self.buf.resize(len, 0);
    }
}

/// The initramfs: directories, `/dev/console`, busybox (+ `/bin/sh`),
/// numaprobe and `/init`.
pub fn initramfs(init: &str, busybox: &Path, numaprobe: &Path) -> std::io::Result<Vec<u8>> {
    initramfs_with(init, busybox, numaprobe, &[])
}

/// [`initramfs`] with more files (path in the guest, file here), each
/// executable, in `bin/` or `lib64/`.
pub fn initramfs_with(
    init: &str,
    busybox: &Path,
    numaprobe: &Path,
    files: &[(String, PathBuf)],
) -> std::io::Result<Vec<u8>> {
    let read = |p: &Path| {
        fs::read(p).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", p.display())))
    };
    let mut c = Cpio { buf: Vec::new(), ino: 0 };
    for d in ["bin", "dev", "proc", "sys", "tmp", "root", "lib64"] {
        c.entry(d, 0o040_755, (0, 0), &[]);
    }
    c.entry("dev/console", 0o020_600, (5, 1), &[]);
    c.entry("bin/busybox", 0o100_755, (0, 0), &read(busybox)?);
    c.entry("bin/sh", 0o120_777, (0, 0), b"busybox");
    c.entry("bin/numaprobe", 0o100_755, (0, 0), &read(numaprobe)?);
    for (guest, host) in files {
        c.entry(guest, 0o100_755, (0, 0), &read(host)?);
    }
    c.entry("init", 0o100_755, (0, 0), init.as_bytes());
    c.entry("TRAILER!!!", 0, (0, 0), &[]);
    Ok(c.buf)
}

// --- artifacts, accelerator, QEMU ---

struct Artifacts {
    root: PathBuf,
    vmlinux: PathBuf,
    busybox: PathBuf,
    numaprobe: PathBuf,
    /// What to run when one is missing.
    hint: &'static str,
}

const SETUP_HINT: &str = "run scripts/guest-setup.sh first";
const ARM_SETUP_HINT: &str = "run scripts/aarch64-setup.sh and scripts/guest-arm-setup.sh first";

/// The artifacts of `arch` (found or built once per test process).
fn artifacts(arch: Arch) -> &'static Artifacts {
    match arch {
        Arch::X86_64 => artifacts_x86(),
        Arch::Aarch64 => artifacts_arm(),
    }
}

/// The Arm guest's kernel and busybox (scripts/guest-arm-setup.sh), and
/// the static aarch64 numaprobe, built here (a no-op when up to date) or
/// taken from `NUMAPROBE_GUEST_ARM_BIN`.
fn artifacts_arm() -> &'static Artifacts {
    static A: OnceLock<Artifacts> = OnceLock::new();
    A.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().unwrap_or(root);
        let dir = root.join("target/guest-arm");
        let vmlinux = dir.join("vmlinuz");
        let busybox = dir.join("busybox");
        for f in [&vmlinux, &busybox] {
            assert!(f.is_file(), "{} is missing: {ARM_SETUP_HINT}", f.display());
        }
        let numaprobe = match std::env::var_os("NUMAPROBE_GUEST_ARM_BIN") {
            Some(p) => root.join(p),
            None => {
                let t = Instant::now();
                let status = Command::new(root.join("scripts/aarch64-cargo"))
                    .current_dir(&root)
                    .args(["build", "--release", "--locked", "-p", "numaprobe"])
                    .args(["--features", "parquet"])
                    .stdout(Stdio::null())
                    .status()
                    .expect("running scripts/aarch64-cargo");
                assert!(status.success(), "aarch64 build of numaprobe failed ({status})");
                eprintln!(
                    "guest: static aarch64 numaprobe ready in {:.1} s",
                    t.elapsed().as_secs_f64()
                );
                root.join("target/aarch64/aarch64-unknown-linux-gnu/release/numaprobe")
            }
        };
        assert!(numaprobe.is_file(), "{} is missing", numaprobe.display());
        Artifacts { root, vmlinux, busybox, numaprobe, hint: ARM_SETUP_HINT }
    })
}

/// Finds the kernel and busybox, builds the static numaprobe (once).
fn artifacts_x86() -> &'static Artifacts {
    static A: OnceLock<Artifacts> = OnceLock::new();
    A.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let root = root.canonicalize().unwrap_or(root);
        let vmlinux = root.join("target/guest/vmlinux");
        assert!(vmlinux.is_file(), "{} is missing: {SETUP_HINT}", vmlinux.display());
        let busybox = PathBuf::from("/bin/busybox");
        assert!(
            busybox.is_file(),
            "/bin/busybox is missing (apt-get install busybox-static): {SETUP_HINT}"
        );
        let numaprobe = match std::env::var_os("NUMAPROBE_GUEST_BIN") {
            Some(p) => root.join(p), // relative to the repository root
            None => build_static(&root),
        };
        assert!(numaprobe.is_file(), "{} is missing", numaprobe.display());
        Artifacts { root, vmlinux, busybox, numaprobe, hint: SETUP_HINT }
    })
}

/// `cargo build` of the static binary; a no-op when it is up to date.
fn build_static(root: &Path) -> PathBuf {
    let target = "x86_64-unknown-linux-gnu";
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let t = Instant::now();
    // The flags scripts/guest-setup.sh and scripts/release.sh use too.
    let flags = Command::new("bash")
        .arg(root.join("scripts/static-rustflags"))
        .output()
        .expect("running scripts/static-rustflags");
    assert!(flags.status.success(), "{}", String::from_utf8_lossy(&flags.stderr));
    let flags = String::from_utf8(flags.stdout).unwrap();
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--release", "--locked", "--target", target, "-p", "numaprobe"])
        .arg("--target-dir")
        .arg(root.join("target/static"))
        .env("RUSTFLAGS", flags.trim())
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .stdout(Stdio::null())
        .status()
        .expect("running cargo build for the static numaprobe");
    assert!(status.success(), "static build of numaprobe failed ({status})");
    eprintln!("guest: static numaprobe ready in {:.1} s", t.elapsed().as_secs_f64());
    root.join("target/static").join(target).join("release/numaprobe")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    fn args(self, arch: Arch) -> Vec<String> {
        match self {
            Accel::Kvm => ["-accel", "kvm", "-cpu", "host"],
            Accel::Tcg if arch == Arch::X86_64 => ["-accel", "tcg,thread=single", "-cpu", "max"],
            // Single-threaded TCG runs one vCPU at a time. An x86 guest's
            // spin hint (PAUSE) ends its vCPU's turn, and x86's `run
            // --quick` completes under it; an Arm guest's (`spin_loop`'s
            // ISB) does not, so the switch waits for QEMU's kick timer,
            // two threads handing a cache line back and forth (`lat c2c`)
            // advance one handoff per switch, and `run --quick` never
            // ended. Multi-threaded TCG gives each vCPU a host thread.
            Accel::Tcg => ["-accel", "tcg,thread=multi", "-cpu", "max"],
        }
        .map(String::from)
        .to_vec()
    }

    fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// KVM when `NUMAPROBE_GUEST_ACCEL=kvm`, or when unset and a probe boot
/// under KVM reaches its marker; TCG otherwise.
fn accel() -> Accel {
    static A: OnceLock<Accel> = OnceLock::new();
    *A.get_or_init(|| match std::env::var("NUMAPROBE_GUEST_ACCEL").as_deref() {
        Ok("kvm") => Accel::Kvm,
        Ok("tcg") => Accel::Tcg,
        Ok(other) => panic!("NUMAPROBE_GUEST_ACCEL={other}: use kvm or tcg"),
        Err(_) => {
            let a = if kvm_boots() { Accel::Kvm } else { Accel::Tcg };
            eprintln!("guest: accelerator {} (KVM probe boot)", a.name());
            a
        }
    })
}

/// Boots a one-command guest under KVM; true when it powers off cleanly.
fn kvm_boots() -> bool {
    let usable = fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_ok();
    if !usable {
        return false;
    }
    let a = artifacts(Arch::X86_64);
    let dir = a.root.join("target/guest/run/kvm-probe");
    let _ = fs::remove_dir_all(&dir);
    if fs::create_dir_all(&dir).is_err() {
        return false;
    }
    let init = "#!/bin/sh\n/bin/busybox echo @@DONE@@\n/bin/busybox poweroff -f\n";
    let Ok(cpio) = initramfs(init, &a.busybox, &a.numaprobe) else { return false };
    if fs::write(dir.join("initramfs.cpio"), cpio).is_err() {
        return false;
    }
    let mut args = Accel::Kvm.args(Arch::X86_64);
    args.extend(
        [
            "-machine",
            "q35",
            "-m",
            "512M",
            "-nodefaults",
            "-display",
            "none",
            "-no-reboot",
            "-serial",
            &format!("file:{}", dir.join("serial.log").display()),
            "-kernel",
            &a.vmlinux.display().to_string(),
            "-initrd",
            &dir.join("initramfs.cpio").display().to_string(),
            "-append",
            BASE_CMDLINE,
        ]
        .map(String::from),
    );
    run_qemu(Arch::X86_64.qemu(), &args, &dir, Duration::from_secs(30));
    let _ = fs::remove_file(dir.join("initramfs.cpio"));
    fs::read_to_string(dir.join("serial.log"))
        .is_ok_and(|l| l.lines().any(|l| l.trim() == "@@DONE@@"))
}

fn timeout() -> Duration {
    let s = std::env::var("NUMAPROBE_GUEST_TIMEOUT_S").ok().and_then(|s| s.parse().ok());
    Duration::from_secs(s.unwrap_or(300))
}

/// Runs QEMU (`qemu`, the system emulator's name) until it exits or
/// `limit` passes (then kills it). Returns a one-line description of how
/// it ended, with QEMU's own stderr.
fn run_qemu(qemu: &str, args: &[String], dir: &Path, limit: Duration) -> String {
    let stderr_path = dir.join("qemu.stderr");
    let stderr = fs::File::create(&stderr_path).expect("creating qemu.stderr");
    let mut child = match Command::new(qemu)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("cannot start {qemu} ({e}): run the guest setup script first"),
    };
    let start = Instant::now();
    let how = loop {
        match child.try_wait() {
            Ok(Some(status)) => break format!("exited ({status})"),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break format!("killed after {} s (NUMAPROBE_GUEST_TIMEOUT_S)", limit.as_secs());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => break format!("wait failed: {e}"),
        }
    };
    let err = fs::read_to_string(&stderr_path).unwrap_or_default();
    if err.trim().is_empty() {
        how
    } else {
        format!("{how}; stderr: {}", tail(err.trim(), 5))
    }
}

/// Limits how many guests boot at once (`NUMAPROBE_GUEST_JOBS`, default 1:
/// each TCG guest keeps one host core busy).
struct Slot;

static SLOTS: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

impl Slot {
    fn take() -> Slot {
        let max = std::env::var("NUMAPROBE_GUEST_JOBS")
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        let mut busy = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
        while *busy >= max {
            busy = FREED.wait(busy).unwrap_or_else(|e| e.into_inner());
        }
        *busy += 1;
        Slot
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        *SLOTS.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        FREED.notify_one();
    }
}

/// `per_node` of a `PlacementCheck`, as numbers (node -> share of pages).
pub fn shares(check: &serde_json::Value) -> BTreeMap<u32, f64> {
    let per = check["per_node"].as_object().unwrap_or_else(|| panic!("no per_node in {check}"));
    per.iter()
        .map(|(k, f)| (k.parse().expect("node id key"), f.as_f64().expect("share is a number")))
        .collect()
}
