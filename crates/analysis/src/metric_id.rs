//! A catalogue metric's identity ([`MetricId`]): which figure it is and,
//! for the figures drawn once per node, GPU or `exec` policy, which one.
//! Written and read as the stable text ids users see in JSON, the store's
//! Parquet export and reports (`local_bw_gbs`, `per_cpu_split_to_node0`,
//! `gpu_h2d_gbs_gpu1`, `exec_metric:int[local:0]`); [`MetricId::parse`]
//! of any text and [`std::fmt::Display`] give the same text back.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::metrics::MetricKey;

impl MetricKey {
    /// The stable text id of a headline metric, used in JSON.
    pub fn id(self) -> &'static str {
        match self {
            MetricKey::LocalBw => "local_bw_gbs",
            MetricKey::GlobalBw => "global_bw_gbs",
            MetricKey::InterleaveBw => "interleave_bw_gbs",
            MetricKey::CrossBw => "cross_node_bw_gbs",
            MetricKey::LocalLat => "local_lat_ns",
            MetricKey::RemoteLat => "remote_lat_ns",
            MetricKey::LoadedLatPeak => "loaded_lat_at_peak_ns",
        }
    }
}

/// The metrics named by hardware relation, or derived from others, beside
/// the headline ones ([`MetricKey`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fixed {
    /// Other-package / local latency.
    RemotePenalty,
    /// The latency a thread sees.
    ThreadLat,
    /// The latency a thread sees to memory spread over every node.
    SpreadLat,
    /// Local bandwidth per package.
    LocalBwPkg,
    /// Cross-package bandwidth, per package.
    CrossPkgBw,
    /// Bandwidth and latency to the other nodes of the same package.
    NeighbourBw,
    NeighbourLat,
    /// Bandwidth and latency to memory-only nodes.
    TierBw,
    TierLat,
    /// Latency to another node where the run says nothing of its package.
    OtherNodeLat,
    /// Local bandwidth per watt of package and DRAM power (RAPL).
    LocalBwPerW,
    /// A package's CPUs on its own memory interleaved over its nodes.
    PkgInterleaveBw,
    /// Latency from a CPU of a package to its own package's memory,
    /// interleaved over its nodes.
    PkgLat,
    /// Latency from a CPU of a package to another package's memory,
    /// interleaved over its nodes.
    CrossPkgLat,
}

impl Fixed {
    pub const ALL: [Fixed; 14] = [
        Fixed::RemotePenalty,
        Fixed::ThreadLat,
        Fixed::SpreadLat,
        Fixed::LocalBwPkg,
        Fixed::CrossPkgBw,
        Fixed::NeighbourBw,
        Fixed::NeighbourLat,
        Fixed::TierBw,
        Fixed::TierLat,
        Fixed::OtherNodeLat,
        Fixed::LocalBwPerW,
        Fixed::PkgInterleaveBw,
        Fixed::PkgLat,
        Fixed::CrossPkgLat,
    ];

    /// The stable text id.
    pub const fn as_str(self) -> &'static str {
        match self {
            Fixed::RemotePenalty => "remote_penalty_ratio",
            Fixed::ThreadLat => "thread_lat_ns",
            Fixed::SpreadLat => "spread_lat_ns",
            Fixed::LocalBwPkg => "local_bw_pkg_gbs",
            Fixed::CrossPkgBw => "cross_pkg_bw_gbs",
            Fixed::NeighbourBw => "neighbour_bw_gbs",
            Fixed::NeighbourLat => "neighbour_lat_ns",
            Fixed::TierBw => "tier_bw_gbs",
            Fixed::TierLat => "tier_lat_ns",
            Fixed::OtherNodeLat => "other_node_lat_ns",
            Fixed::LocalBwPerW => "local_bw_per_watt",
            Fixed::PkgInterleaveBw => "pkg_interleave_bw_gbs",
            Fixed::PkgLat => "pkg_lat_ns",
            Fixed::CrossPkgLat => "cross_pkg_lat_ns",
        }
    }
}

/// The figures of per-CPU latency to one memory node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PerCpuStat {
    /// Mean over CPUs.
    Mean,
    /// The fastest group's median.
    Fast,
    /// The slowest group's median.
    Slow,
    /// Slowest / fastest group.
    Split,
    /// How many latency groups.
    Groups,
}

impl PerCpuStat {
    pub const ALL: [PerCpuStat; 5] = [
        PerCpuStat::Mean,
        PerCpuStat::Fast,
        PerCpuStat::Slow,
        PerCpuStat::Split,
        PerCpuStat::Groups,
    ];

    /// The id's text before the node (`per_cpu_split`).
    pub const fn prefix(self) -> &'static str {
        match self {
            PerCpuStat::Mean => "per_cpu_mean_ns",
            PerCpuStat::Fast => "per_cpu_fast_ns",
            PerCpuStat::Slow => "per_cpu_slow_ns",
            PerCpuStat::Split => "per_cpu_split",
            PerCpuStat::Groups => "per_cpu_groups",
        }
    }
}

/// The figures of `numaprobe gpu`, per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GpuStat {
    /// Host-to-device bandwidth from the GPU's fastest node.
    H2dBw,
    /// The slowest node's shortfall against the fastest, %.
    H2dPenalty,
}

impl GpuStat {
    pub const ALL: [GpuStat; 2] = [GpuStat::H2dBw, GpuStat::H2dPenalty];

    /// The id's text before the GPU (`gpu_h2d_gbs`).
    pub const fn prefix(self) -> &'static str {
        match self {
            GpuStat::H2dBw => "gpu_h2d_gbs",
            GpuStat::H2dPenalty => "gpu_h2d_penalty_pct",
        }
    }
}

/// The text of the unnamed program metric of `exec`.
pub const EXEC_METRIC: &str = "exec_metric";
/// The text of a program's wall time under `exec`.
pub const EXEC_WALL: &str = "exec_wall_s";
/// The text of a program metric per watt of package + DRAM power under
/// `exec` (`exec_metric_per_watt:NAME[POLICY]`).
pub const EXEC_PER_WATT: &str = "exec_metric_per_watt";
/// The text of a program's package + DRAM energy per run under `exec`.
pub const EXEC_ENERGY: &str = "exec_energy_j";

/// Which catalogue metric a figure is. Ordered by kind, then by what the
/// kind holds: an order for maps, not the catalogue's (`catalogue::rank`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MetricId {
    /// A headline metric.
    Headline(MetricKey),
    /// A metric named by relation or derived from others.
    Fixed(Fixed),
    /// Per-CPU latency to one memory node (`None`: the run named none).
    PerCpu { stat: PerCpuStat, node: Option<u32> },
    /// One GPU's host-to-device figure.
    Gpu { stat: GpuStat, gpu: u32 },
    /// A program's metric under `exec` (`name`: `exec --metric NAME=..`),
    /// under one placement policy or (`None`) the run's one policy.
    ExecMetric { name: Option<String>, policy: Option<String> },
    /// A program's wall time under `exec`, as for [`MetricId::ExecMetric`].
    ExecWall { policy: Option<String> },
    /// A higher-is-better program metric over the package + DRAM power
    /// (RAPL) of the run it came from, as for [`MetricId::ExecMetric`].
    ExecPerWatt { name: Option<String>, policy: Option<String> },
    /// A program's package + DRAM energy per run (RAPL), joules.
    ExecEnergy { policy: Option<String> },
    /// An id this catalogue does not draw (a stored document of another
    /// version): kept as written.
    Other(String),
}

impl MetricId {
    /// The id of a text id; [`MetricId::Other`] when the catalogue does
    /// not know it. Its text is always `s` again.
    pub fn parse(s: &str) -> MetricId {
        let id = Self::known(s).unwrap_or_else(|| MetricId::Other(s.to_string()));
        // Only a spelling that writes back the same is taken apart
        // (`per_cpu_split_to_node01` is no node's id).
        if id.is_spelled(s) {
            id
        } else {
            MetricId::Other(s.to_string())
        }
    }

    fn known(s: &str) -> Option<MetricId> {
        if let Some(k) = MetricKey::ALL.into_iter().find(|k| k.id() == s) {
            return Some(MetricId::Headline(k));
        }
        if let Some(f) = Fixed::ALL.into_iter().find(|f| f.as_str() == s) {
            return Some(MetricId::Fixed(f));
        }
        for stat in PerCpuStat::ALL {
            if let Some(rest) = s.strip_prefix(stat.prefix()) {
                let node = match rest {
                    "_to_any_node" => None,
                    _ => Some(rest.strip_prefix("_to_node")?.parse().ok()?),
                };
                return Some(MetricId::PerCpu { stat, node });
            }
        }
        for stat in GpuStat::ALL {
            if let Some(rest) = s.strip_prefix(stat.prefix()) {
                let gpu = rest.strip_prefix("_gpu")?.parse().ok()?;
                return Some(MetricId::Gpu { stat, gpu });
            }
        }
        let (head, policy) = match s.strip_suffix(']').and_then(|h| h.split_once('[')) {
            Some((head, p)) => (head, Some(p.to_string())),
            None => (s, None),
        };
        if head == EXEC_WALL {
            return Some(MetricId::ExecWall { policy });
        }
        if head == EXEC_ENERGY {
            return Some(MetricId::ExecEnergy { policy });
        }
        // Before `exec_metric`, which it starts with.
        if let Some(rest) = head.strip_prefix(EXEC_PER_WATT) {
            let name = match rest {
                "" => None,
                named => Some(named.strip_prefix(':')?.to_string()),
            };
            return Some(MetricId::ExecPerWatt { name, policy });
        }
        let name = match head.strip_prefix(EXEC_METRIC)? {
            "" => None,
            named => Some(named.strip_prefix(':')?.to_string()),
        };
        Some(MetricId::ExecMetric { name, policy })
    }

    /// True when the id's text is `s` (without writing the text out).
    pub fn is_spelled(&self, s: &str) -> bool {
        struct Rest<'a>(Option<&'a str>);
        impl fmt::Write for Rest<'_> {
            fn write_str(&mut self, part: &str) -> fmt::Result {
                self.0 = self.0.and_then(|r| r.strip_prefix(part));
                Ok(())
            }
        }
        let mut rest = Rest(Some(s));
        fmt::Write::write_fmt(&mut rest, format_args!("{self}")).is_ok() && rest.0 == Some("")
    }

    /// The headline metric this id is, if it is one.
    pub fn headline(&self) -> Option<MetricKey> {
        match self {
            MetricId::Headline(k) => Some(*k),
            _ => None,
        }
    }

    /// True for an `exec` figure (program metric, wall time, per watt,
    /// energy).
    pub fn is_exec(&self) -> bool {
        matches!(
            self,
            MetricId::ExecMetric { .. }
                | MetricId::ExecWall { .. }
                | MetricId::ExecPerWatt { .. }
                | MetricId::ExecEnergy { .. }
        )
    }

    /// The `exec` policy the figure was measured under.
    pub fn policy(&self) -> Option<&str> {
        match self {
            MetricId::ExecMetric { policy, .. }
            | MetricId::ExecWall { policy }
            | MetricId::ExecPerWatt { policy, .. }
            | MetricId::ExecEnergy { policy } => policy.as_deref(),
            _ => None,
        }
    }

    /// The same `exec` figure without its policy (what a run of one
    /// policy also gives); any other id unchanged.
    pub fn without_policy(&self) -> MetricId {
        match self {
            MetricId::ExecMetric { name, .. } => {
                MetricId::ExecMetric { name: name.clone(), policy: None }
            }
            MetricId::ExecWall { .. } => MetricId::ExecWall { policy: None },
            MetricId::ExecPerWatt { name, .. } => {
                MetricId::ExecPerWatt { name: name.clone(), policy: None }
            }
            MetricId::ExecEnergy { .. } => MetricId::ExecEnergy { policy: None },
            other => other.clone(),
        }
    }

    /// A named program metric's name (`exec_metric:int[default]` gives
    /// `int`).
    pub fn exec_metric_name(&self) -> Option<&str> {
        match self {
            MetricId::ExecMetric { name, .. } => name.as_deref(),
            _ => None,
        }
    }
}

impl fmt::Display for MetricId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // the exec ids: a base, an optional `:NAME`, an optional `[POLICY]`
        let (base, name, policy) = match self {
            MetricId::Headline(k) => return f.write_str(k.id()),
            MetricId::Fixed(x) => return f.write_str(x.as_str()),
            MetricId::PerCpu { stat, node: Some(n) } => {
                return write!(f, "{}_to_node{n}", stat.prefix())
            }
            MetricId::PerCpu { stat, node: None } => {
                return write!(f, "{}_to_any_node", stat.prefix())
            }
            MetricId::Gpu { stat, gpu } => return write!(f, "{}_gpu{gpu}", stat.prefix()),
            MetricId::Other(s) => return f.write_str(s),
            MetricId::ExecMetric { name, policy } => (EXEC_METRIC, name, policy),
            MetricId::ExecPerWatt { name, policy } => (EXEC_PER_WATT, name, policy),
            MetricId::ExecWall { policy } => (EXEC_WALL, &None, policy),
            MetricId::ExecEnergy { policy } => (EXEC_ENERGY, &None, policy),
        };
        f.write_str(base)?;
        if let Some(n) = name {
            write!(f, ":{n}")?;
        }
        match policy {
            Some(p) => write!(f, "[{p}]"),
            None => Ok(()),
        }
    }
}

impl From<MetricKey> for MetricId {
    fn from(k: MetricKey) -> MetricId {
        MetricId::Headline(k)
    }
}

impl From<Fixed> for MetricId {
    fn from(f: Fixed) -> MetricId {
        MetricId::Fixed(f)
    }
}

/// Compares with a text id, as tests and callers holding stored ids do.
impl PartialEq<str> for MetricId {
    fn eq(&self, other: &str) -> bool {
        self.is_spelled(other)
    }
}

impl PartialEq<String> for MetricId {
    fn eq(&self, other: &String) -> bool {
        self.is_spelled(other)
    }
}

impl PartialEq<&str> for MetricId {
    fn eq(&self, other: &&str) -> bool {
        self.is_spelled(other)
    }
}

impl From<&str> for MetricId {
    fn from(s: &str) -> MetricId {
        MetricId::parse(s)
    }
}

impl Serialize for MetricId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MetricId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MetricId, D::Error> {
        let s = String::deserialize(d)?;
        Ok(MetricId::parse(&s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_written_back_as_it_was_read() {
        for s in [
            "local_bw_gbs",
            "loaded_lat_at_peak_ns",
            "remote_penalty_ratio",
            "local_bw_per_watt",
            "per_cpu_split_to_node0",
            "per_cpu_mean_ns_to_any_node",
            "gpu_h2d_penalty_pct_gpu3",
            "exec_metric",
            "exec_metric[remote:0/1]",
            "exec_metric:int[default]",
            "exec_metric:fp",
            "exec_wall_s[local:0]",
            "exec_wall_s",
            "exec_metric_per_watt[local:0]",
            "exec_metric_per_watt:int[default]",
            "exec_metric_per_watt",
            "exec_energy_j[remote:0/1]",
            "exec_energy_j",
            // not the catalogue's
            "exec_metric_per_wattx",
            "exec_energy_jx",
            "per_cpu_split_to_node01",
            "per_cpu_split_to_nodex",
            "gpu_h2d_gbs_gpu",
            "exec_metricx",
            "something_else",
            "",
        ] {
            let id = MetricId::parse(s);
            assert_eq!(id.to_string(), s);
            assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{s}\""));
            let back: MetricId = serde_json::from_str(&format!("\"{s}\"")).unwrap();
            assert_eq!(back, id);
        }
    }

    #[test]
    fn ids_are_taken_apart() {
        assert_eq!(MetricId::parse("local_lat_ns"), MetricId::Headline(MetricKey::LocalLat));
        assert_eq!(MetricId::parse("tier_bw_gbs"), MetricId::Fixed(Fixed::TierBw));
        assert_eq!(
            MetricId::parse("per_cpu_groups_to_node2"),
            MetricId::PerCpu { stat: PerCpuStat::Groups, node: Some(2) }
        );
        assert_eq!(
            MetricId::parse("gpu_h2d_gbs_gpu1"),
            MetricId::Gpu { stat: GpuStat::H2dBw, gpu: 1 }
        );
        let int = MetricId::parse("exec_metric:int[local:0]");
        assert_eq!(
            int,
            MetricId::ExecMetric { name: Some("int".into()), policy: Some("local:0".into()) }
        );
        assert_eq!((int.exec_metric_name(), int.policy()), (Some("int"), Some("local:0")));
        assert_eq!(int.without_policy().to_string(), "exec_metric:int");
        assert_eq!(MetricId::parse("exec_wall_s[x]").without_policy().to_string(), "exec_wall_s");
        assert_eq!(
            MetricId::parse("per_cpu_split_to_node01"),
            MetricId::Other("per_cpu_split_to_node01".into())
        );
        assert!(!MetricId::parse("other").is_exec());
        let pw = MetricId::parse("exec_metric_per_watt:int[local:0]");
        assert_eq!(
            pw,
            MetricId::ExecPerWatt { name: Some("int".into()), policy: Some("local:0".into()) }
        );
        assert!(pw.is_exec() && pw.exec_metric_name().is_none());
        assert_eq!(pw.without_policy().to_string(), "exec_metric_per_watt:int");
        assert_eq!(
            MetricId::parse("exec_energy_j[default]"),
            MetricId::ExecEnergy { policy: Some("default".into()) }
        );
        assert_eq!(
            MetricId::parse("exec_metric_per_wattx"),
            MetricId::Other("exec_metric_per_wattx".into())
        );
        assert!(int.is_spelled("exec_metric:int[local:0]"));
        assert!(!int.is_spelled("exec_metric:int[local:0"));
        assert!(!int.is_spelled("exec_metric:int[local:0]x"));
        assert!(int != "exec_metric");
    }
}
