//! Random machines and studies in realistic ranges (docs/testing.md, "The
//! simulated truth", gives each range and where it comes from), drawn
//! from one seed so that any case can be rebuilt from the seed a test
//! prints.

use crate::facts::{Clustering, Family, Machine, Setting};
use crate::rng::Rng;
use crate::runs::{Budget, Noise, Outlier, Study};

const GIB: u64 = 1 << 30;

/// A machine of `family` drawn from the ranges real ones span.
pub fn machine(rng: &mut Rng, family: Family) -> Machine {
    let u = |rng: &mut Rng, lo: f64, hi: f64| rng.range(lo, hi);
    let (packages, cores, channels, mts, link, local, remote_x, lines) = match family {
        // Xeon Scalable (Skylake-SP to Sapphire Rapids): 1-4 sockets of
        // 16-60 cores, 6 or 8 DDR4/DDR5 channels, 2-4 UPI links of
        // 20-32 GB/s per direction, 70-130 ns local, 1.5-2.2x remote.
        Family::XeonSnc => (
            1 + (rng.next_u64() % 4) as u32,
            4 * (4 + (rng.next_u64() % 12) as u32),
            *rng.pick(&[6u32, 8, 8]),
            *rng.pick(&[2666u32, 2933, 3200, 4400, 4800]),
            u(rng, 50.0, 130.0),
            u(rng, 70.0, 130.0),
            u(rng, 1.5, 2.2),
            u(rng, 12.0, 48.0),
        ),
        // Xeon E5 v3/v4 with Cluster-on-Die: 12-22 cores, 4 DDR4 channels
        // of 1866-2400 MT/s, 2 QPI links of 16-19.2 GB/s.
        Family::XeonCod => (
            1 + (rng.next_u64() % 4) as u32,
            2 * (6 + (rng.next_u64() % 6) as u32),
            4,
            *rng.pick(&[1866u32, 2133, 2400]),
            u(rng, 25.0, 40.0),
            u(rng, 75.0, 110.0),
            u(rng, 1.4, 1.9),
            u(rng, 10.0, 20.0),
        ),
        // EPYC (Rome to Genoa): 1-2 sockets of 16-96 cores, 8 or 12
        // channels, 3-4 xGMI links of 32-64 GB/s, 90-140 ns local, 1.5-2x
        // remote (SLIT 32).
        Family::EpycNps => (
            1 + (rng.next_u64() % 2) as u32,
            8 * (2 + (rng.next_u64() % 11) as u32),
            *rng.pick(&[8u32, 12]),
            *rng.pick(&[2933u32, 3200, 4800]),
            u(rng, 100.0, 220.0),
            u(rng, 90.0, 140.0),
            u(rng, 1.5, 2.0),
            u(rng, 16.0, 40.0),
        ),
    };
    let eff = u(rng, 0.7, 0.88);
    let package_gbs = f64::from(channels) * f64::from(mts) * 8.0 / 1000.0 * eff;
    let mut clusterings = Vec::new();
    let mut prev_local = 1.0;
    for &d in family.domain_choices() {
        if channels % d != 0 || cores % d != 0 {
            continue;
        }
        // The mesh carries a package's cross-domain and link traffic: from
        // about its channels' figure to 1.6 times it.
        let mesh_gbs = package_gbs * u(rng, 0.8, 1.6);
        let c = if d == 1 {
            Clustering { mesh_gbs, ..Clustering::none() }
        } else {
            let local = prev_local * u(rng, 0.88, 0.99);
            prev_local = local;
            let neighbour = u(rng, 1.03, 1.3);
            Clustering {
                domains: d,
                local,
                neighbour,
                far_neighbour: if family == Family::EpycNps {
                    neighbour * u(rng, 1.0, 1.1)
                } else {
                    neighbour
                },
                remote: u(rng, 1.0, 1.09),
                mesh_gbs,
                channels: u(rng, 1.0, 1.07),
                link: u(rng, 0.8, 1.0),
            }
        };
        clusterings.push(c);
    }
    Machine {
        family,
        model: match family {
            Family::XeonSnc => "Intel(R) Xeon(R) Gold 6348 CPU @ 2.60GHz",
            Family::XeonCod => "Intel(R) Xeon(R) CPU E5-2697 v4 @ 2.30GHz",
            Family::EpycNps => "AMD EPYC 7543 32-Core Processor",
        }
        .into(),
        hostname: format!("sim-{:08x}", rng.next_u64() as u32),
        packages,
        cores_per_package: cores,
        channels_per_package: channels,
        dimm_mts: mts,
        dram_efficiency: eff,
        lines_in_flight: lines,
        link_gbs: link,
        local_ns: local,
        remote_ns: local * remote_x,
        mem_per_package_bytes: *rng.pick(&[64u64, 128, 256, 512]) * GIB,
        llc_per_package_bytes: (*rng.pick(&[16u64, 32, 60, 128, 256])) << 20,
        clusterings,
        firmware_interleave: u(rng, 0.65, 0.95),
        firmware_interleave_latency: u(rng, 1.0, 1.15),
        c2c_ns: [u(rng, 30.0, 60.0), u(rng, 60.0, 90.0), u(rng, 110.0, 200.0)],
    }
}

/// Noise of a study's runs: per-figure scatter 0.3-2% (bandwidth) and
/// 0.2-1% (latency), a shared run shift up to 1%, warm-up up to 3%, a
/// linear drift of up to 1% per run either way, a random walk up to 0.5%
/// a step, and in one study out of five a disturbed run losing 10-40%
/// (its records flagged in half of them).
pub fn noise(rng: &mut Rng, runs: usize) -> Noise {
    let outlier = (rng.uniform() < 0.2).then(|| Outlier {
        run: (rng.next_u64() % runs as u64) as usize,
        loss: rng.range(0.1, 0.4),
        flagged: rng.uniform() < 0.5,
    });
    Noise {
        run_sd: rng.range(0.0, 0.01),
        bw_sd: rng.range(0.003, 0.02),
        lat_sd: rng.range(0.002, 0.01),
        warmup: if rng.uniform() < 0.3 { rng.range(0.0, 0.03) } else { 0.0 },
        drift: if rng.uniform() < 0.5 { rng.range(-0.01, 0.01) } else { 0.0 },
        walk_sd: if rng.uniform() < 0.3 { rng.range(0.0, 0.005) } else { 0.0 },
        outlier,
    }
}

/// A study of 2 to 4 of a random machine's settings, 3 to 5 runs each,
/// alternated, at either budget.
pub fn study(seed: u64) -> Study {
    let mut rng = Rng::new(seed);
    let family = *rng.pick(&[Family::XeonSnc, Family::XeonCod, Family::EpycNps]);
    let m = machine(&mut rng, family);
    let mut offered: Vec<Setting> = m.settings();
    let k = 2 + (rng.next_u64() % 3) as usize;
    let mut chosen = Vec::new();
    while chosen.len() < k.min(offered.len()) {
        let i = (rng.next_u64() % offered.len() as u64) as usize;
        chosen.push(offered.remove(i));
    }
    let runs = 3 + (rng.next_u64() % 3) as usize;
    let mut s = Study::new(m, chosen, runs, seed);
    s.budget = if rng.uniform() < 0.5 { Budget::Quick } else { Budget::Default };
    s.noise = noise(&mut rng, runs * s.settings.len());
    s.weighted_interleave = rng.uniform() < 0.3;
    s
}
