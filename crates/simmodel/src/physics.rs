//! What a measurement reaches on the modelled hardware: which limit binds
//! first, never a share of a package's figure.
//!
//! A team of cores reads memory placed over physical domains. Each core
//! keeps [`Machine::lines_in_flight`] cache lines in flight, so by
//! Little's law it asks for `lines x 64 B / latency` (the latency is the
//! mean over where its memory lies). What it gets is then limited by the
//! channels of each domain it reads and by the socket link of each
//! package pair it crosses; when several teams run at once they share
//! those limits. The solver fills every team in proportion to what it
//! asks for until a channel or a link is full, freezes the teams that use
//! it, and goes on with the rest (progressive filling, max-min fair in
//! the share of what each asks). A node measured alone therefore gets
//! what its cores can pull, capped by its channels or the link; the same
//! node measured with its package's other nodes shares the link.

use crate::facts::{Clustering, Firmware, Machine, Setting};

/// Bytes per cache line.
pub const LINE: f64 = 64.0;

/// The physical memory domains of a machine under one setting: the
/// firmware's domains (each package split in `d`), with their cores,
/// channels and latencies.
#[derive(Debug, Clone)]
pub struct Hardware {
    pub machine: Machine,
    pub setting: Setting,
    /// Domains per package.
    pub d: u32,
    pub clustering: Clustering,
}

/// Where a team's memory lies: shares of its accesses per physical
/// domain (summing to 1).
pub type Spread = Vec<(usize, f64)>;

/// One team of a measurement: `cores` cores of physical domain `domain`
/// reading memory spread as `memory`, each core waiting `delay_ns`
/// after each line (0: as fast as it can).
#[derive(Debug, Clone)]
pub struct Team {
    pub domain: usize,
    pub cores: f64,
    pub memory: Spread,
    pub delay_ns: f64,
}

impl Team {
    pub fn new(domain: usize, cores: f64, memory: Spread) -> Team {
        Team { domain, cores, memory, delay_ns: 0.0 }
    }
}

/// What the solver found for a set of teams measured together.
#[derive(Debug, Clone)]
pub struct Solved {
    /// GB/s of each team.
    pub gbs: Vec<f64>,
    /// Bytes/ns each domain's channels serve, and their capacity.
    pub channel_load: Vec<f64>,
    pub channel_cap: Vec<f64>,
    /// Whether each team was stopped by a full channel (else by its
    /// cores or a link).
    pub channel_bound: Vec<Option<usize>>,
}

impl Solved {
    pub fn total(&self) -> f64 {
        self.gbs.iter().sum()
    }
}

impl Hardware {
    pub fn new(machine: &Machine, setting: Setting) -> Hardware {
        let d = setting.per_package();
        Hardware { machine: machine.clone(), setting, d, clustering: machine.clustering(d) }
    }

    /// Physical domains of the whole machine.
    pub fn domains(&self) -> usize {
        (self.machine.packages * self.d) as usize
    }

    pub fn package_of(&self, domain: usize) -> u32 {
        domain as u32 / self.d
    }

    /// Cores of one domain.
    pub fn cores_per_domain(&self) -> u32 {
        self.machine.cores_per_package / self.d
    }

    /// The physical domain of CPU `cpu` (CPUs numbered package by package,
    /// domain by domain).
    pub fn domain_of_cpu(&self, cpu: u32) -> usize {
        (cpu / self.cores_per_domain()) as usize
    }

    /// Whether the firmware interleaves every package's memory by cache
    /// line (BIOS NUMA off on two or more packages).
    pub fn firmware_interleaved(&self) -> bool {
        self.setting.firmware == Firmware::Interleave && self.machine.packages > 1
    }

    /// Idle latency from a core of domain `a` to memory of domain `b`, ns
    /// (under the firmware's interleave, to the share of a line on `b`'s
    /// package: [`Hardware::latency_to`] averages them).
    pub fn latency(&self, a: usize, b: usize) -> f64 {
        let m = &self.machine;
        let c = &self.clustering;
        let fw = if self.firmware_interleaved() { m.firmware_interleave_latency } else { 1.0 };
        fw * if self.package_of(a) != self.package_of(b) {
            m.remote_ns * c.remote
        } else if a == b {
            m.local_ns * c.local
        } else if m.family.near_distance(self.d, a as u32 % self.d, b as u32 % self.d) == 11 {
            m.local_ns * c.neighbour
        } else {
            m.local_ns * c.far_neighbour
        }
    }

    /// Mean idle latency from a core of domain `a` to memory spread as
    /// `memory`, ns.
    pub fn latency_to(&self, a: usize, memory: &Spread) -> f64 {
        memory.iter().map(|&(b, f)| f * self.latency(a, b)).sum()
    }

    /// What one domain's channels sustain, bytes/ns (= GB/s).
    pub fn channel_capacity(&self, _domain: usize) -> f64 {
        let m = &self.machine;
        let per = f64::from(m.channels_per_package) / f64::from(self.d);
        per * m.channel_gbs() * self.clustering.channels * self.fw()
    }

    /// What the link from package `from` (its memory) to package `to`
    /// (its cores) carries, GB/s.
    pub fn link_capacity(&self) -> f64 {
        self.machine.link_gbs * self.clustering.link * self.fw()
    }

    /// One domain's memory.
    pub fn on(&self, domain: usize) -> Spread {
        vec![(domain, 1.0)]
    }

    /// Memory interleaved evenly over `domains`.
    pub fn even(&self, domains: impl IntoIterator<Item = usize>) -> Spread {
        let v: Vec<usize> = domains.into_iter().collect();
        let f = 1.0 / v.len().max(1) as f64;
        v.into_iter().map(|d| (d, f)).collect()
    }

    /// Every domain of package `p`.
    pub fn package_domains(&self, p: u32) -> Vec<usize> {
        ((p * self.d) as usize..((p + 1) * self.d) as usize).collect()
    }

    /// The firmware-interleave factor on every shared limit (1 unless
    /// the firmware interleaves over packages).
    fn fw(&self) -> f64 {
        if self.firmware_interleaved() {
            self.machine.firmware_interleave
        } else {
            1.0
        }
    }

    /// What one package's mesh carries between domains and the link, GB/s.
    pub fn mesh_capacity(&self) -> f64 {
        self.clustering.mesh_gbs * self.fw()
    }

    /// What each team moves when they all run at once (GB/s each).
    pub fn solve(&self, teams: &[Team]) -> Solved {
        let n = self.domains();
        let p = self.machine.packages as usize;
        let m = &self.machine;
        // Resources: each domain's channels, each package's mesh, each
        // ordered package pair's link (memory's package -> cores').
        let mesh = |pkg: usize| n + pkg;
        let link = |from: usize, to: usize| n + p + from * p + to;
        let cap: Vec<f64> = (0..n)
            .map(|d| self.channel_capacity(d))
            .chain((0..p).map(|_| self.mesh_capacity()))
            .chain((0..p * p).map(|_| self.link_capacity()))
            .collect();
        // Each team's use of each resource per byte it moves.
        let uses: Vec<Vec<(usize, f64)>> = teams
            .iter()
            .map(|t| {
                let to = self.package_of(t.domain) as usize;
                let mut u: Vec<(usize, f64)> = Vec::new();
                for &(dom, f) in &t.memory {
                    u.push((dom, f));
                    let from = self.package_of(dom) as usize;
                    if from != to {
                        u.push((link(from, to), f));
                        u.push((mesh(from), f));
                        u.push((mesh(to), f));
                    } else if dom != t.domain {
                        u.push((mesh(to), f));
                    }
                }
                u
            })
            .collect();
        // What each team asks for: Little's law per core, slowed by the
        // delay each core waits after a line.
        let demand: Vec<f64> = teams
            .iter()
            .map(|t| {
                let lat = self.latency_to(t.domain, &t.memory);
                let per_core = LINE / (t.delay_ns + lat / m.lines_in_flight);
                t.cores * per_core
            })
            .collect();
        let mut rate = vec![0.0; teams.len()];
        let mut frozen = vec![false; teams.len()];
        let mut bound_by: Vec<Option<usize>> = vec![None; teams.len()];
        for _ in 0..=cap.len() {
            let mut used = vec![0.0; cap.len()];
            let mut want = vec![0.0; cap.len()];
            for (i, u) in uses.iter().enumerate() {
                for &(r, f) in u {
                    if frozen[i] {
                        used[r] += rate[i] * f;
                    } else {
                        want[r] += demand[i] * f;
                    }
                }
            }
            let mut s = 1.0f64;
            for r in 0..cap.len() {
                if want[r] > 0.0 {
                    s = s.min(((cap[r] - used[r]) / want[r]).max(0.0));
                }
            }
            let full: Vec<usize> = (0..cap.len())
                .filter(|&r| want[r] > 0.0 && used[r] + s * want[r] >= cap[r] * (1.0 - 1e-9))
                .collect();
            for i in 0..teams.len() {
                if !frozen[i] {
                    rate[i] = s * demand[i];
                }
            }
            if s >= 1.0 || full.is_empty() {
                break;
            }
            for (i, u) in uses.iter().enumerate() {
                if !frozen[i] {
                    if let Some(&(r, _)) = u.iter().find(|(r, _)| full.contains(r)) {
                        frozen[i] = true;
                        bound_by[i] = (r < n).then_some(r);
                    }
                }
            }
            if frozen.iter().all(|f| *f) {
                break;
            }
        }
        let mut channel_load = vec![0.0; n];
        for (i, u) in uses.iter().enumerate() {
            for &(r, f) in u {
                if r < n {
                    channel_load[r] += rate[i] * f;
                }
            }
        }
        Solved { gbs: rate, channel_load, channel_cap: cap[..n].to_vec(), channel_bound: bound_by }
    }

    /// GB/s of one team alone.
    pub fn alone(&self, team: Team) -> f64 {
        self.solve(&[team]).gbs[0]
    }

    /// GB/s of several teams together, summed.
    pub fn together(&self, teams: &[Team]) -> f64 {
        self.solve(teams).total()
    }

    /// The latency a chasing core of domain `chase` sees to memory of
    /// domain `mem` while `load` runs (ns): its idle latency, plus the
    /// queue at `mem`'s channels. Below saturation the queue grows with
    /// the square of the channels' use; once they are full, every line in
    /// flight to them waits its turn (Little's law: lines x 64 B over what
    /// the channels serve), less the idle time already counted.
    pub fn loaded_latency(&self, chase: usize, mem: usize, load: &[Team]) -> (f64, f64) {
        let idle = self.latency(chase, mem);
        if load.is_empty() {
            return (idle, 0.0);
        }
        let s = self.solve(load);
        let served = s.channel_load[mem];
        let cap = s.channel_cap[mem];
        let u = (served / cap).min(1.0);
        let mut queue = idle * 0.25 * u * u;
        if u > 0.999 {
            // Lines in flight at the full channels: those of teams they
            // stopped, all of them; the others' rate times their latency.
            let mut lines = 0.0;
            for (i, t) in load.iter().enumerate() {
                let f: f64 = t.memory.iter().filter(|(d, _)| *d == mem).map(|(_, f)| f).sum();
                if f == 0.0 {
                    continue;
                }
                lines += if s.channel_bound[i] == Some(mem) {
                    t.cores * self.machine.lines_in_flight * f
                } else {
                    s.gbs[i] * f * self.latency_to(t.domain, &t.memory) / LINE
                };
            }
            let wait = lines * LINE / served - self.latency(mem, mem);
            queue = queue.max(wait);
        }
        (idle + queue, s.total())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies;

    /// A node alone is not a share of its package: on the Xeon 8380 of
    /// STUDIES.md a SNC2 node alone reaches well over half of what its
    /// package reaches across the link, and the package's nodes together
    /// reach the package figure (the link binds), not twice a node.
    #[test]
    fn a_node_alone_is_not_a_share_of_its_package() {
        let m = studies::xeon_8380();
        let hw = Hardware::new(&m, Setting::domains(2));
        let cores = f64::from(hw.cores_per_domain());
        let other = hw.even(hw.package_domains(1));
        let alone = hw.alone(Team::new(0, cores, hw.on(2)));
        let package =
            hw.together(&[Team::new(0, cores, other.clone()), Team::new(1, cores, other.clone())]);
        assert!(alone / package > 0.55 && alone / package < 0.75, "{alone} of {package}");
        assert!((package / 220.0 - 1.0).abs() < 0.01, "{package}");
        // Summed, the cells overstate the package by a fifth or more.
        assert!(2.0 * alone / package > 1.1);
    }

    /// Little's law: one core alone moves lines x 64 B / latency, and a
    /// node's cores together stop at its channels.
    #[test]
    fn cores_pull_by_littles_law_until_the_channels_are_full() {
        let m = studies::xeon_8380();
        let hw = Hardware::new(&m, Setting::domains(1));
        let one = hw.alone(Team::new(0, 1.0, hw.on(0)));
        assert!((one - m.lines_in_flight * 64.0 / m.local_ns).abs() < 1e-9, "{one}");
        let all = hw.alone(Team::new(0, 40.0, hw.on(0)));
        assert!((all - hw.channel_capacity(0)).abs() < 1e-6, "{all}");
    }

    /// Loaded latency rises past idle once the channels are full.
    #[test]
    fn latency_under_full_load_exceeds_idle() {
        let m = studies::xeon_8380();
        let hw = Hardware::new(&m, Setting::domains(1));
        let (idle, _) = hw.loaded_latency(0, 0, &[]);
        let (full, gbs) = hw.loaded_latency(0, 0, &[Team::new(0, 39.0, hw.on(0))]);
        assert!(full > 2.0 * idle, "{idle} -> {full} at {gbs}");
        let light = Team { delay_ns: 5000.0, ..Team::new(0, 39.0, hw.on(0)) };
        let (l, _) = hw.loaded_latency(0, 0, &[light]);
        assert!(l < idle * 1.05, "{l}");
    }
}
