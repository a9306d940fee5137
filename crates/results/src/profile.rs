//! Workload profiles: what each kind of workload wants from the machine.
//! The one list the settings audit judges by and settings studies
//! recommend for (`audit::Profile`, `analysis::study`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Scientific codes with known locality (MPI + OpenMP).
    Hpc,
    /// Large OLTP databases.
    Database,
    /// Hosts running virtual machines.
    Virtualization,
    /// GPU training servers.
    AiTraining,
    /// Latency-sensitive services.
    Latency,
    /// No particular workload.
    #[default]
    General,
}

impl Profile {
    pub const ALL: [Profile; 6] = [
        Profile::Hpc,
        Profile::Database,
        Profile::Virtualization,
        Profile::AiTraining,
        Profile::Latency,
        Profile::General,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Hpc => "hpc",
            Profile::Database => "database",
            Profile::Virtualization => "virtualization",
            Profile::AiTraining => "ai-training",
            Profile::Latency => "latency",
            Profile::General => "general",
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown profile name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl std::fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown profile '{}' (expected hpc, database, virtualization, ai-training, latency or general)",
            self.0
        )
    }
}

impl std::error::Error for UnknownProfile {}

impl std::str::FromStr for Profile {
    type Err = UnknownProfile;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownProfile(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Profile::ALL {
            assert_eq!(p.name().parse::<Profile>().unwrap(), p);
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        assert!("olap".parse::<Profile>().unwrap_err().to_string().contains("'olap'"));
    }
}
