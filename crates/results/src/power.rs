//! Energy and mean core frequency over a measurement: what the RAPL zones
//! of powercap counted (package, DRAM) and how fast the cores ran, each
//! with its source, or why it is unavailable. Read by `counters::power`.

use serde::{Deserialize, Serialize};

/// Energy and frequency over one measured interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Power {
    /// Length of the interval, seconds.
    pub seconds: f64,
    /// One entry per RAPL zone read (empty when energy is unavailable).
    #[serde(default)]
    pub zones: Vec<ZoneEnergy>,
    /// Why there is no energy figure (no RAPL zone, permission, a VM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_unavailable: Option<String>,
    /// Mean core frequency, MHz, over the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_mhz: Option<f64>,
    /// Where the frequency came from: `aperf/mperf` (the MSRs, the mean
    /// over the interval) or `scaling_cur_freq` (cpufreq's figure,
    /// sampled at the start and end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_source: Option<String>,
    /// Why there is no frequency figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_unavailable: Option<String>,
}

/// What one RAPL zone counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZoneEnergy {
    /// The powercap zone (`intel-rapl:0`, `intel-rapl:0:1`).
    pub zone: String,
    /// Its domain name (`package-0`, `dram`, `core`, `psys`).
    pub name: String,
    /// Joules over the interval (counter wrap-around undone).
    pub joules: f64,
    /// Mean watts over the interval.
    pub watts: f64,
    /// The counter wrapped during the interval (and was undone).
    #[serde(default)]
    pub wrapped: bool,
}

impl Power {
    /// Joules of the package zones (`package-N`), summed; `None` when none
    /// was read.
    pub fn package_joules(&self) -> Option<f64> {
        self.sum(|n| n.starts_with("package"))
    }

    /// Joules of the DRAM zones, summed.
    pub fn dram_joules(&self) -> Option<f64> {
        self.sum(|n| n == "dram")
    }

    /// Mean power of packages and DRAM together, watts: what a per-watt
    /// figure divides by. `None` without a package zone.
    pub fn mean_watts(&self) -> Option<f64> {
        let j = self.package_joules()? + self.dram_joules().unwrap_or(0.0);
        (self.seconds > 0.0).then(|| j / self.seconds)
    }

    fn sum(&self, pick: impl Fn(&str) -> bool) -> Option<f64> {
        let v: Vec<f64> = self.zones.iter().filter(|z| pick(&z.name)).map(|z| z.joules).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    }

    /// One line: `package 85.0 W, dram 12.1 W, 2890 MHz (aperf/mperf)`, or
    /// what is unavailable and why.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        match &self.energy_unavailable {
            Some(why) => parts.push(format!("energy unavailable ({why})")),
            None => {
                for z in &self.zones {
                    parts.push(format!("{} {:.1} W", z.name, z.watts));
                }
            }
        }
        match (&self.mean_mhz, &self.frequency_unavailable) {
            (Some(m), _) => parts
                .push(format!("{m:.0} MHz ({})", self.frequency_source.as_deref().unwrap_or("?"))),
            (None, Some(why)) => parts.push(format!("frequency unavailable ({why})")),
            (None, None) => {}
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str, joules: f64) -> ZoneEnergy {
        ZoneEnergy {
            zone: "intel-rapl:0".into(),
            name: name.into(),
            joules,
            watts: joules / 2.0,
            wrapped: false,
        }
    }

    #[test]
    fn package_and_dram_add_up_to_the_mean_power() {
        let p = Power {
            seconds: 2.0,
            zones: vec![zone("package-0", 100.0), zone("package-1", 80.0), zone("dram", 20.0)],
            ..Power::default()
        };
        assert_eq!(p.package_joules(), Some(180.0));
        assert_eq!(p.dram_joules(), Some(20.0));
        assert_eq!(p.mean_watts(), Some(100.0));
        // no package zone: no per-watt figure
        let p = Power { seconds: 2.0, zones: vec![zone("dram", 20.0)], ..Power::default() };
        assert_eq!(p.mean_watts(), None);
        let p = Power { energy_unavailable: Some("no RAPL zone".into()), ..Power::default() };
        assert_eq!(p.text(), "energy unavailable (no RAPL zone)");
    }
}
