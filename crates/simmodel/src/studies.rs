//! The machines of the published studies (`../shared/STUDIES.md`) as
//! hardware facts: what each study states of the machine (packages,
//! cores, channels, DIMM rate), and the figures it measured read back as
//! the limits that produce them. Where a study's figures exceed what its
//! DIMMs can deliver, the model keeps the study's figures and says so:
//! the tests check the conclusions an expert draws from those figures.

use crate::facts::{Clustering, Family, Machine};

const GIB: u64 = 1 << 30;

/// Study 1: Xeon Platinum 8380, 2 sockets of 40 cores (HT off), 16 x 32 GB
/// DDR4-3200 (8 channels per socket).
///
/// The study's figures, per setting (local = STREAM bound per domain,
/// global = unbound, remote = one socket reading the other's memory):
///
/// | setting | local GB/s | global GB/s | local ns | remote ns | remote GB/s |
/// |---|---|---|---|---|---|
/// | SNC off | 550 | 540 | 130 | 450 | 250 |
/// | SNC2 | 580 | 525 | 115 | 470 | 220 |
/// | SNC4 | 585 | 510 | 110 | 490 | 200 |
/// | NUMA off | - | 400 | - | 380 (average) | - |
///
/// Read back as limits: the bound figure is the channels' (40 cores at
/// 56 lines in flight could pull 1100 GB/s at 130 ns): 550 GB/s over 16
/// channels is 34.4 GB/s per channel, above DDR4-3200's 25.6 GB/s peak, so
/// `dram_efficiency` is a fitted 1.34, not a DIMM's (the study's figures
/// are kept as published). SNC's gain on them is `channels`. The remote
/// figure is the socket link's (250 GB/s, `link` 0.88 and 0.8 under SNC2
/// and SNC4); 40 cores at 56 lines would pull 318 GB/s at 450 ns. The
/// unbound figure is the mesh's: half of an interleaved buffer lies on the
/// other socket and crosses both packages' meshes, a quarter (SNC2) or
/// three eighths (SNC4) lies on a sibling cluster and crosses one, which
/// gives 270, 328 and 351 GB/s per package. NUMA off interleaves by cache
/// line in the firmware: 400 of the 540 GB/s (0.74) at 380 of the 290 ns
/// average (1.31). Latencies are the study's; a sibling cluster is 1.1
/// times SNC off's local latency (the study does not give it).
///
/// The 56 lines in flight per core (Ice Lake SP's L2 keeps up to 48
/// misses in flight besides the L1's 16 fill buffers) make a SNC2 node
/// alone reach its channels reading the other socket (145 GB/s, 66% of
/// the socket's 220) and a SNC4 node alone 72 GB/s (36% of 200): what
/// issue 47 describes as cells measured alone.
pub fn xeon_8380() -> Machine {
    Machine {
        family: Family::XeonSnc,
        model: "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz".into(),
        hostname: "xeon-8380".into(),
        packages: 2,
        cores_per_package: 40,
        channels_per_package: 8,
        dimm_mts: 3200,
        dram_efficiency: 550.0 / 16.0 / 25.6,
        lines_in_flight: 56.0,
        link_gbs: 250.0,
        local_ns: 130.0,
        remote_ns: 450.0,
        mem_per_package_bytes: 256 * GIB,
        llc_per_package_bytes: 60 << 20,
        clusterings: vec![
            Clustering { mesh_gbs: 270.0, ..Clustering::none() },
            Clustering {
                domains: 2,
                local: 115.0 / 130.0,
                neighbour: 1.1,
                far_neighbour: 1.1,
                remote: 470.0 / 450.0,
                mesh_gbs: 525.0 * 0.625,
                channels: 580.0 / 550.0,
                link: 220.0 / 250.0,
            },
            Clustering {
                domains: 4,
                local: 110.0 / 130.0,
                neighbour: 1.1,
                far_neighbour: 1.1,
                remote: 490.0 / 450.0,
                mesh_gbs: 510.0 * 0.6875,
                channels: 585.0 / 550.0,
                link: 200.0 / 250.0,
            },
        ],
        firmware_interleave: 400.0 / 540.0,
        firmware_interleave_latency: 380.0 / 290.0,
        c2c_ns: [48.0, 62.0, 140.0],
    }
}

/// Study 3: EPYC 7763 (Milan), 1 socket of 64 cores, 8 channels of
/// DDR4-3200. The study gives the order, not the figures: small
/// differences, NPS4 the lowest local latency, NPS1 the highest per-node
/// bandwidth. The socket sustains 160 GB/s (20 GB/s per channel, 78% of
/// the 25.6 GB/s peak) in every mode (`channels` 1); local latency 112,
/// 108 and 104 ns under NPS1, NPS2 and NPS4 (3.6% apart: the order, one
/// figure each), a sibling quadrant 1.08 times the mode's local latency
/// and the other half of the I/O die (SLIT 12) 1.15 times; an interleaved
/// buffer 158 GB/s under NPS2 and NPS4 (the Infinity Fabric carries the
/// half or three quarters that lie on sibling domains). Zen 3 keeps about
/// 24 lines in flight per core, so 16 cores alone fill their 2 channels.
pub fn epyc_7763() -> Machine {
    Machine {
        family: Family::EpycNps,
        model: "AMD EPYC 7763 64-Core Processor".into(),
        hostname: "milan-64".into(),
        packages: 1,
        cores_per_package: 64,
        channels_per_package: 8,
        dimm_mts: 3200,
        dram_efficiency: 20.0 / 25.6,
        lines_in_flight: 24.0,
        link_gbs: 0.0,
        local_ns: 112.0,
        remote_ns: 112.0,
        mem_per_package_bytes: 256 * GIB,
        llc_per_package_bytes: 256 << 20,
        clusterings: vec![
            Clustering { mesh_gbs: 200.0, ..Clustering::none() },
            Clustering {
                domains: 2,
                local: 108.0 / 112.0,
                neighbour: 108.0 * 1.08 / 112.0,
                far_neighbour: 108.0 * 1.08 / 112.0,
                remote: 1.0,
                mesh_gbs: 158.0 * 0.5,
                channels: 1.0,
                link: 1.0,
            },
            Clustering {
                domains: 4,
                local: 104.0 / 112.0,
                neighbour: 104.0 * 1.08 / 112.0,
                far_neighbour: 104.0 * 1.15 / 112.0,
                remote: 1.0,
                mesh_gbs: 158.0 * 0.75,
                channels: 1.0,
                link: 1.0,
            },
        ],
        firmware_interleave: 1.0,
        firmware_interleave_latency: 1.0,
        c2c_ns: [30.0, 90.0, 90.0],
    }
}

/// Study 5: two sockets of 48 cores, one node per socket under NUMA on:
/// local 67.6 ns, the other socket 100.6 ns; NUMA off in the BIOS gives
/// every CPU the interleaved average, about 87 ns (1.035 times the mean of
/// the two). Bandwidth is not part of the study: 8 channels of DDR4-2933
/// per socket at 80% of peak, 150 GB/s of socket link (UPI, 3 links),
/// 12 lines in flight per core.
pub fn two_socket_96() -> Machine {
    Machine {
        family: Family::XeonSnc,
        model: "Intel(R) Xeon(R) Platinum 8260 CPU @ 2.40GHz".into(),
        hostname: "two-socket-96".into(),
        packages: 2,
        cores_per_package: 48,
        channels_per_package: 8,
        dimm_mts: 2933,
        dram_efficiency: 0.8,
        lines_in_flight: 12.0,
        link_gbs: 150.0,
        local_ns: 67.6,
        remote_ns: 100.6,
        mem_per_package_bytes: 192 * GIB,
        llc_per_package_bytes: 36 << 20,
        clusterings: vec![Clustering { mesh_gbs: 220.0, ..Clustering::none() }],
        firmware_interleave: 0.85,
        firmware_interleave_latency: 87.0 / ((67.6 + 100.6) / 2.0),
        c2c_ns: [45.0, 45.0, 120.0],
    }
}
