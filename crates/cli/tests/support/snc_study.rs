//! `../shared/STUDIES.md`'s study 1 (Xeon Platinum 8380, 2 sockets, BIOS
//! NUMA on/off x SNC) as four groups of runs in numaprobe's export format,
//! for the reports a reader opens: NUMA on with SNC off, SNC2, SNC4, and
//! NUMA off. Each mode has the node structure a real machine reports in it
//! (2 nodes of 40 cores with SLIT `10 20`; 4 of 20 with `10 11 20 20`; 8
//! of 10; one node of 80 without SRAT), and each node's figures come from
//! the hardware's limits, never from a package figure divided:
//!
//! - a node's cores keep [`LINES_IN_FLIGHT`] cache lines in flight each,
//!   so they move at most `cores x lines x 64 B / latency` (Little's law);
//! - a local cell is also bound by the node's channels, a same-package
//!   neighbour cell by the target node's channels, a cross-package cell by
//!   the socket link;
//! - whichever binds first is the cell's figure, measured alone.
//!
//! The study's own figures set the limits: its "local GB/s" (STREAM bound
//! per domain, whole machine) is the sockets' channels together (`bw
//! global`), its "global GB/s" (unbound) the interleaved figure, its
//! remote GB/s the socket link, its latencies the chases. Three runs per
//! group, alternated, with a deterministic run-to-run noise.

use serde_json::{json, Value};

/// Cache lines each core keeps in flight (fill buffers and the L2's
/// prefetch queue on Ice Lake-SP).
pub const LINES_IN_FLIGHT: f64 = 24.0;

/// One configuration of the study.
pub struct Mode {
    pub label: &'static str,
    /// Nodes per socket; 0: BIOS NUMA off (one node for the machine).
    pub per_socket: u32,
    /// STREAM bound per domain, the whole machine, GB/s.
    pub bound_gbs: f64,
    /// STREAM unbound (interleaved), GB/s.
    pub unbound_gbs: f64,
    pub local_ns: f64,
    pub remote_ns: f64,
    /// The socket link, GB/s.
    pub link_gbs: f64,
}

pub const STUDY1: [Mode; 4] = [
    Mode {
        label: "NUMA on, SNC off",
        per_socket: 1,
        bound_gbs: 550.0,
        unbound_gbs: 540.0,
        local_ns: 130.0,
        remote_ns: 450.0,
        link_gbs: 250.0,
    },
    Mode {
        label: "NUMA on, SNC2",
        per_socket: 2,
        bound_gbs: 580.0,
        unbound_gbs: 525.0,
        local_ns: 115.0,
        remote_ns: 470.0,
        link_gbs: 220.0,
    },
    Mode {
        label: "NUMA on, SNC4",
        per_socket: 4,
        bound_gbs: 585.0,
        unbound_gbs: 510.0,
        local_ns: 110.0,
        remote_ns: 490.0,
        link_gbs: 200.0,
    },
    Mode {
        label: "NUMA off",
        per_socket: 0,
        bound_gbs: 600.0,
        unbound_gbs: 400.0,
        local_ns: 380.0,
        remote_ns: 380.0,
        link_gbs: 180.0,
    },
];

const SOCKETS: u32 = 2;
const CORES: u32 = 40;
const CHANNELS: u32 = 8;

/// Deterministic noise: xorshift64*, about normal (sum of four uniforms).
pub struct Noise(pub u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `x` times a factor of relative standard deviation `rel`.
    pub fn jitter(&mut self, x: f64, rel: f64) -> f64 {
        let z = (0..4).map(|_| self.uniform()).sum::<f64>() - 2.0;
        x * (1.0 + rel * z / 0.577)
    }
}

/// What `cores` cores move with `ns` latency: Little's law.
fn cores_gbs(cores: f64, ns: f64) -> f64 {
    cores * LINES_IN_FLIGHT * 64.0 / ns
}

impl Mode {
    fn nodes(&self) -> u32 {
        (SOCKETS * self.per_socket).max(1)
    }

    fn cores_per_node(&self) -> f64 {
        f64::from(SOCKETS * CORES) / f64::from(self.nodes())
    }

    /// One channel's sustained figure: the bound figure is every channel
    /// of the machine at once.
    fn channel_gbs(&self) -> f64 {
        self.bound_gbs / f64::from(SOCKETS * CHANNELS)
    }

    fn channels_per_node(&self) -> f64 {
        f64::from(SOCKETS * CHANNELS) / f64::from(self.nodes())
    }

    fn same_socket(&self, a: u32, b: u32) -> bool {
        self.per_socket == 0 || a / self.per_socket == b / self.per_socket
    }

    /// The latency of a cell: local, the same socket's other domain (the
    /// mesh adds a few ns per hop), the other socket.
    fn cell_ns(&self, c: u32, m: u32) -> f64 {
        if c == m {
            self.local_ns
        } else if self.same_socket(c, m) {
            self.local_ns + 8.0 * f64::from((c % self.per_socket).abs_diff(m % self.per_socket))
        } else {
            self.remote_ns
        }
    }

    /// A cell measured alone: the node's cores against the memory's limit.
    fn cell_gbs(&self, c: u32, m: u32) -> f64 {
        let cores = cores_gbs(self.cores_per_node(), self.cell_ns(c, m));
        let limit = if self.same_socket(c, m) {
            self.channels_per_node() * self.channel_gbs()
        } else {
            self.link_gbs
        };
        cores.min(limit)
    }

    /// The topology `topo` discovers in this mode.
    fn topology(&self) -> Value {
        let mut t = topo::synthetic::Machine::new(
            topo::Vendor::Intel,
            "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
        );
        for p in 0..SOCKETS {
            t = t.package(p, &format!("{}-{}", p * CORES, (p + 1) * CORES - 1));
        }
        let mem = 256u64 << 30;
        let n = self.nodes();
        let size = SOCKETS * CORES / n;
        for i in 0..n {
            t = t.node(
                i,
                &format!("{}-{}", i * size, (i + 1) * size - 1),
                mem * u64::from(SOCKETS) / u64::from(n),
            );
        }
        if self.per_socket > 0 {
            let rows: Vec<Vec<u32>> = (0..n)
                .map(|a| {
                    (0..n)
                        .map(|b| match (a == b, self.same_socket(a, b)) {
                            (true, _) => 10,
                            (false, true) => 11,
                            (false, false) => 20,
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
            t = t.distances(&refs);
        }
        serde_json::to_value(t.build()).unwrap()
    }

    fn config(&self) -> Value {
        let n = self.nodes();
        let (mode, label, srat) = match self.per_socket {
            0 => ("single-node", "NUMA off (one node)".to_string(), "none".to_string()),
            1 => (
                "node-per-package",
                "NUMA per socket".to_string(),
                "2 proximity domains (2 with CPUs, 2 with memory)".to_string(),
            ),
            k => (
                "nodes-per-package",
                format!("SNC{k}"),
                format!("{n} proximity domains ({n} with CPUs, {n} with memory)"),
            ),
        };
        let declared = match self.per_socket {
            0 => json!({"bios.numa": "off"}),
            1 => json!({"bios.numa": "on", "bios.snc": "off"}),
            k => json!({"bios.numa": "on", "bios.snc": k.to_string()}),
        };
        json!({"numa_mode": mode, "numa_mode_label": label, "nodes": n, "nodes_with_cpus": n,
               "online_cpus": SOCKETS * CORES, "kernel": "5.14.0", "smt": "off",
               "acpi_srat": srat, "declared": declared,
               "cmdline": "BOOT_IMAGE=/vmlinuz-5.14.0 root=UUID=1b2c3d4e-aaaa-bbbb-cccc-0123456789ab ro crashkernel=auto resume=/dev/mapper/rhel-swap rd.lvm.lv=rhel/root rd.lvm.lv=rhel/swap rhgb quiet transparent_hugepage=madvise intel_iommu=on iommu=pt"})
    }

    /// One run's records, with this run's noise.
    fn records(&self, rng: &mut Noise) -> Vec<(&'static str, Value)> {
        let bw = |mode: &str, cpu: Option<u32>, mem: Option<u32>, threads: f64, gbs: f64| {
            let mut v = json!({"mode": mode, "kernel": "triad", "stores": "nt", "best_gbs": gbs,
                "median_gbs": gbs * 0.99, "spread_pct": 1.2, "samples": 10,
                "threads": threads as u64, "stable": true});
            if let (Some(c), Some(m)) = (cpu, mem) {
                v["cpu_node"] = json!(c);
                v["mem_node"] = json!(m);
            }
            ("bw", v)
        };
        let n = self.nodes();
        let cores = self.cores_per_node();
        let mut v = vec![
            bw("global", None, None, f64::from(SOCKETS * CORES), rng.jitter(self.bound_gbs, 0.01)),
            bw(
                "interleave",
                None,
                None,
                f64::from(SOCKETS * CORES),
                rng.jitter(self.unbound_gbs, 0.012),
            ),
        ];
        for c in 0..n {
            let first_cpu = (f64::from(c) * cores) as u32;
            for m in 0..n {
                let gbs = rng.jitter(self.cell_gbs(c, m), 0.01);
                if c == m {
                    v.push(bw("local", Some(c), Some(m), cores, gbs));
                }
                v.push(bw("matrix", Some(c), Some(m), cores, gbs));
                v.push((
                    "lat",
                    json!({"mode": "matrix", "cpu": first_cpu, "cpu_node": c, "mem_node": m,
                           "size_bytes": 536870912u64, "stride_bytes": 256,
                           "median_ns": rng.jitter(self.cell_ns(c, m), 0.005),
                           "noise_pct": 0.5, "spread_pct": 2.0, "samples": 11, "stable": true}),
                ));
            }
        }
        // The loaded-latency curve of the first CPU on its memory: the
        // other cores of node 0 load it up to what node 0 moves.
        let top = self.cell_gbs(0, 0);
        for (k, share) in [0.0, 0.25, 0.5, 0.75, 0.9, 1.0].iter().enumerate() {
            let load = top * share;
            // queueing: latency grows as the load nears the limit
            let ns = self.local_ns * (1.0 + 0.6 * share * share / (1.05 - share).max(0.05) / 4.0);
            v.push((
                "lat",
                json!({"mode": "loaded", "cpu": 0, "mem_node": 0, "delay": 1000 - k * 200,
                       "idle": k == 0, "load_kind": "read", "size_bytes": 536870912u64,
                       "stride_bytes": 256, "latency_ns": rng.jitter(ns, 0.01),
                       "median_ns": rng.jitter(ns, 0.01), "load_gbs": rng.jitter(load, 0.01),
                       "spread_pct": 3.0, "stable": true}),
            ));
        }
        // Scaling on node 0: threads against Little's law and the
        // node's channels.
        let limit = self.channels_per_node() * self.channel_gbs();
        let mut threads = 1.0;
        while threads <= cores {
            let gbs = cores_gbs(threads, self.local_ns).min(limit);
            v.push(bw("scaling", Some(0), Some(0), threads, rng.jitter(gbs, 0.01)));
            threads *= 2.0;
        }
        v
    }
}

/// The export of `modes`, three runs each taken in alternation, labels
/// from the modes; `host` names the machine.
pub fn export(modes: &[Mode], host: &str, seed: u64) -> Value {
    let mut rng = Noise(seed);
    let mut runs = Vec::new();
    let mut n = 0u32;
    for _round in 0..3 {
        for (si, m) in modes.iter().enumerate() {
            n += 1;
            let results: Vec<Value> = m
                .records(&mut rng)
                .into_iter()
                .enumerate()
                .map(|(i, (kind, payload))| {
                    json!({"seq": i + 1,
                           "recorded": format!("2026-11-20T10:{:02}:{:02}.000Z", n, i % 60),
                           "kind": kind, "payload": payload})
                })
                .collect();
            runs.push(json!({
                "uuid": format!("5cc5de00-0000-4000-8000-{seed:04x}{n:08}"),
                "source_id": n,
                "label": m.label,
                "command_line": format!("numaprobe run --label '{}'", m.label),
                "tool_version": "0.1.0",
                "started": format!("2026-11-20T10:{:02}:00.000Z", n),
                "finished": format!("2026-11-20T10:{:02}:59.000Z", n),
                "status": "complete",
                "message": null,
                "machine": {"fingerprint": format!("5cc5de00{seed:08x}"), "description": host,
                            "info": {"hostname": host, "packages": SOCKETS}},
                "config_hash": format!("c{si:02}{seed:04x}5cc5de00"),
                "config": m.config(),
                "topology": m.topology(),
                "results": results,
            }));
        }
    }
    json!({"format": "numaprobe-export", "version": 1,
           "exported": "2026-11-20T12:00:00.000Z", "runs": runs})
}
