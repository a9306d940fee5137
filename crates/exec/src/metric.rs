//! The user's figure of merit, taken from the command's output with a
//! regular expression whose first capture group is a number.

use regex::Regex;
use serde::Serialize;

use crate::ExecError;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

impl Direction {
    pub fn higher_is_better(self) -> bool {
        self == Direction::HigherIsBetter
    }
}

/// A compiled `--metric` pattern.
#[derive(Debug, Clone)]
pub struct Metric {
    regex: Regex,
    pub direction: Direction,
}

/// Why a run has no metric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "text")]
pub enum MetricMiss {
    /// The pattern matched nowhere in stdout or stderr.
    NoMatch,
    /// It matched, but the first group is not a number (the text found).
    NotANumber(String),
}

impl std::fmt::Display for MetricMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricMiss::NoMatch => f.write_str("no match"),
            MetricMiss::NotANumber(t) => write!(f, "not a number: '{t}'"),
        }
    }
}

impl Metric {
    /// Compiles `pattern`; refuses an invalid one or one without a capture
    /// group, naming the pattern.
    pub fn new(pattern: &str, direction: Direction) -> Result<Metric, ExecError> {
        let regex = Regex::new(pattern).map_err(|e| {
            // the parser's message draws a caret over several lines; its
            // last line says what is wrong
            let msg = e.to_string();
            let why =
                msg.lines().last().unwrap_or("").trim().trim_start_matches("error: ").to_string();
            ExecError::BadMetric(format!("invalid regular expression '{pattern}': {why}"))
        })?;
        if regex.captures_len() < 2 {
            return Err(ExecError::BadMetric(format!(
                "'{pattern}' has no capture group; put the number in parentheses, e.g. 'Triad:\\s+([0-9.]+)'"
            )));
        }
        Ok(Metric { regex, direction })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// The metric in `stdout`, else in `stderr`: the first capture group of
    /// the LAST match in the stream (programs that print progress print the
    /// final figure last).
    pub fn extract(&self, stdout: &str, stderr: &str) -> Result<f64, MetricMiss> {
        for text in [stdout, stderr] {
            if let Some(caps) = self.regex.captures_iter(text).last() {
                let found = caps.get(1).map(|m| m.as_str()).unwrap_or("");
                return parse_number(found)
                    .ok_or_else(|| MetricMiss::NotANumber(found.to_string()));
            }
        }
        Err(MetricMiss::NoMatch)
    }
}

/// Parses `123.5`, `1e9`, `-4`, and `1,234,567.8` (thousands separators).
fn parse_number(text: &str) -> Option<f64> {
    let t = text.trim();
    let v = t.parse::<f64>().ok().or_else(|| {
        let grouped = t.split('.').next()?.split(',').skip(1).all(|g| g.len() == 3);
        if t.contains(',') && grouped {
            t.replace(',', "").parse().ok()
        } else {
            None
        }
    })?;
    v.is_finite().then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str) -> Metric {
        Metric::new(p, Direction::HigherIsBetter).unwrap()
    }

    #[test]
    fn takes_the_first_group_of_the_last_match() {
        let stream = "Function    Best Rate MB/s\nCopy:  9876.5  0.01\nTriad:  12345.6  0.02\n";
        assert_eq!(m(r"Triad:\s+([0-9.]+)").extract(stream, ""), Ok(12345.6));
        let progress = "rate: 10\nrate: 11\nrate: 12.5\n";
        assert_eq!(m(r"rate: ([0-9.]+)").extract(progress, ""), Ok(12.5));
        // sysbench's line, from stderr when stdout has nothing
        let sb = "    events per second: 4123456.78\n";
        assert_eq!(m(r"events per second:\s+([0-9.]+)").extract("", sb), Ok(4123456.78));
        // stdout wins over stderr
        assert_eq!(m(r"x=(\d+)").extract("x=1", "x=2"), Ok(1.0));
    }

    #[test]
    fn misses_are_told_apart() {
        assert_eq!(m(r"Triad: (\d+)").extract("Copy: 5", "nothing"), Err(MetricMiss::NoMatch));
        assert_eq!(
            m(r"Triad: (\S+)").extract("Triad: fast", ""),
            Err(MetricMiss::NotANumber("fast".into()))
        );
        assert_eq!(m(r"v=(\S*)").extract("v=", ""), Err(MetricMiss::NotANumber(String::new())));
    }

    #[test]
    fn numbers_with_separators_and_exponents() {
        assert_eq!(parse_number("1,234,567.5"), Some(1234567.5));
        assert_eq!(parse_number("1e9"), Some(1e9));
        assert_eq!(parse_number(" -4 "), Some(-4.0));
        assert_eq!(parse_number("1,23"), None); // a decimal comma is not guessed
        assert_eq!(parse_number("inf"), None);
        assert_eq!(parse_number("NaN"), None);
    }

    #[test]
    fn bad_patterns_are_refused_with_the_pattern_named() {
        let e = Metric::new("Triad: ([0-9", Direction::HigherIsBetter).unwrap_err().to_string();
        assert!(e.contains("invalid regular expression 'Triad: ([0-9'"), "{e}");
        let e = Metric::new(r"Triad: \d+", Direction::LowerIsBetter).unwrap_err().to_string();
        assert!(e.contains("no capture group"), "{e}");
        // a non-capturing group alone is no capture group
        assert!(Metric::new(r"(?:a)", Direction::LowerIsBetter).is_err());
    }
}
