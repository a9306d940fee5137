//! The user's figures of merit, taken from the command's output (or from a
//! file it writes, `--metric-file`) with regular expressions whose first
//! capture group is a number: one unnamed metric (`--metric REGEX`) and
//! any number of named ones (`--metric NAME=REGEX`), each with its own
//! direction.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

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

/// A compiled `--metric` pattern: the unnamed metric (`--metric REGEX`,
/// `name` `None`) or a named one (`--metric NAME=REGEX`).
#[derive(Debug, Clone)]
pub struct Metric {
    name: Option<String>,
    regex: Regex,
    pub direction: Direction,
}

/// Why a run has no metric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "text")]
pub enum MetricMiss {
    /// The pattern matched nowhere in stdout or stderr (or in the metric
    /// file).
    NoMatch,
    /// It matched, but the first group is not a number (the text found).
    NotANumber(String),
    /// The metric file gave nothing to search: missing, not written by
    /// this run, or refused (the sentence says which).
    File(String),
}

impl std::fmt::Display for MetricMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetricMiss::NoMatch => f.write_str("no match"),
            MetricMiss::NotANumber(t) => write!(f, "not a number: '{t}'"),
            MetricMiss::File(why) => f.write_str(why),
        }
    }
}

/// The longest metric name.
pub const MAX_NAME_LEN: usize = 40;

/// `NAME` of a `NAME=REGEX` value: an ASCII letter, then letters, digits,
/// `_` or `-` (at most [`MAX_NAME_LEN`]), then `=`. `None`: the whole
/// value is the unnamed metric's pattern. A value whose REGEX would begin
/// with its capture group (`rate=(\d+)`) stays the unnamed pattern it
/// always was (a `key=value` line): as a name it would take any number
/// in the output.
pub fn split_name(value: &str) -> Option<(&str, &str)> {
    let (name, pattern) = value.split_once('=')?;
    if pattern.starts_with('(') && !pattern.starts_with("(?") {
        return None;
    }
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= MAX_NAME_LEN;
    ok.then_some((name, pattern))
}

/// Why the metrics asked for cannot be read: the names and patterns at
/// fault, for the front end to word against its own flags. A name `None`
/// (or an empty direction name) is the unnamed metric.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MetricRefusal {
    #[error("the metric name '{0}' is given twice")]
    NameTwice(String),
    /// Two metrics without a name: the first one's pattern and the second's.
    #[error("two unnamed metrics ('{0}' and '{1}'): name them")]
    TwoUnnamed(String, String),
    /// `why`: the last line of the regular expression parser's message.
    #[error("{}invalid regular expression '{pattern}': {why}", prefix(.name))]
    Invalid { name: Option<String>, pattern: String, why: String },
    #[error("{}'{pattern}' has no capture group", prefix(.name))]
    NoCaptureGroup { name: Option<String>, pattern: String },
    /// A direction for the unnamed metric, which is not given.
    #[error("a direction is given for the unnamed metric, which is not given")]
    DirectionWithoutMetric,
    /// A direction for `name`, which no named metric has; `named`: the
    /// names given.
    #[error("a direction is given for '{name}', which no metric is named (named: {named:?})")]
    DirectionForNone { name: String, named: Vec<String> },
    #[error("'{0}' is said to be both lower- and higher-is-better (empty: the unnamed metric)")]
    BothDirections(String),
    #[error("a metric file is given without a metric to search it for")]
    FileWithoutMetric,
}

fn prefix(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!("{n}: ")).unwrap_or_default()
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
            let pattern = pattern.to_string();
            ExecError::BadMetric(MetricRefusal::Invalid { name: None, pattern, why })
        })?;
        if regex.captures_len() < 2 {
            let pattern = pattern.to_string();
            return Err(ExecError::BadMetric(MetricRefusal::NoCaptureGroup {
                name: None,
                pattern,
            }));
        }
        Ok(Metric { name: None, regex, direction })
    }

    /// A named metric (`--metric NAME=REGEX`).
    pub fn named(name: &str, pattern: &str, direction: Direction) -> Result<Metric, ExecError> {
        let named = Some(name.to_string());
        let m = Metric::new(pattern, direction).map_err(|e| match e {
            ExecError::BadMetric(MetricRefusal::Invalid { pattern, why, .. }) => {
                ExecError::BadMetric(MetricRefusal::Invalid { name: named, pattern, why })
            }
            ExecError::BadMetric(MetricRefusal::NoCaptureGroup { pattern, .. }) => {
                ExecError::BadMetric(MetricRefusal::NoCaptureGroup { name: named, pattern })
            }
            other => other,
        })?;
        Ok(Metric { name: Some(name.to_string()), ..m })
    }

    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// The name of a named metric; `None` for the unnamed one.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
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

/// Every `--metric` of one `exec`, and where they are searched: the
/// command's stdout then stderr, or the file it writes (`--metric-file`).
#[derive(Debug, Clone, Default)]
pub struct MetricSet {
    /// The unnamed metric first (when given), then the named ones by name.
    metrics: Vec<Metric>,
    /// `--metric-file PATH`: every metric is searched in this file's
    /// content after each run instead of in the command's output.
    pub file: Option<PathBuf>,
}

impl MetricSet {
    /// Reads `--metric` values (`REGEX` or `NAME=REGEX`), the metrics
    /// said to improve downwards (`lower`) or upwards (`higher`; an empty
    /// string names the unnamed metric) and `--metric-file`. Refuses, as a
    /// usage error naming the culprit: two unnamed metrics, a name given
    /// twice, an invalid pattern or one without a capture group, a
    /// direction for a metric not given (or given both ways), and a metric
    /// file without a metric.
    pub fn parse(
        values: &[String],
        lower: &[String],
        higher: &[String],
        file: Option<PathBuf>,
    ) -> Result<MetricSet, ExecError> {
        let bad = |r: MetricRefusal| Err(ExecError::BadMetric(r));
        let mut parsed: Vec<(Option<&str>, &str)> = Vec::new();
        for v in values {
            let (name, pattern) = match split_name(v) {
                Some((n, p)) => (Some(n), p),
                None => (None, v.as_str()),
            };
            if parsed.iter().any(|(n, _)| *n == name) {
                return match name {
                    Some(n) => bad(MetricRefusal::NameTwice(n.to_string())),
                    None => bad(MetricRefusal::TwoUnnamed(
                        parsed.iter().find(|(n, _)| n.is_none()).map_or("", |x| x.1).to_string(),
                        pattern.to_string(),
                    )),
                };
            }
            parsed.push((name, pattern));
        }
        for n in lower.iter().chain(higher) {
            let wanted = (!n.is_empty()).then_some(n.as_str());
            if !parsed.iter().any(|(name, _)| *name == wanted) {
                return match wanted {
                    None => bad(MetricRefusal::DirectionWithoutMetric),
                    Some(_) => bad(MetricRefusal::DirectionForNone {
                        name: n.clone(),
                        named: parsed.iter().filter_map(|p| p.0.map(str::to_string)).collect(),
                    }),
                };
            }
            if lower.contains(n) && higher.contains(n) {
                return bad(MetricRefusal::BothDirections(n.clone()));
            }
        }
        if file.is_some() && parsed.is_empty() {
            return bad(MetricRefusal::FileWithoutMetric);
        }
        // The unnamed metric first, then the named ones by name (the
        // order the records keep them in: the first one is what a run
        // without an unnamed metric is compared on, here and in reports).
        parsed.sort_by_key(|(n, _)| (n.is_some(), *n));
        let mut metrics = Vec::new();
        for (name, pattern) in parsed {
            let key = name.unwrap_or("").to_string();
            let dir = if lower.contains(&key) {
                Direction::LowerIsBetter
            } else {
                Direction::HigherIsBetter
            };
            metrics.push(match name {
                Some(n) => Metric::named(n, pattern, dir)?,
                None => Metric::new(pattern, dir)?,
            });
        }
        Ok(MetricSet { metrics, file })
    }

    /// A set of one unnamed metric.
    pub fn single(m: Metric) -> MetricSet {
        MetricSet { metrics: vec![m], file: None }
    }

    pub fn is_empty(&self) -> bool {
        self.metrics.is_empty()
    }

    /// The unnamed metric, when given.
    pub fn unnamed(&self) -> Option<&Metric> {
        self.metrics.first().filter(|m| m.name.is_none())
    }

    /// The named metrics, by name.
    pub fn named_metrics(&self) -> impl Iterator<Item = &Metric> {
        self.metrics.iter().filter(|m| m.name.is_some())
    }

    /// Every metric, the unnamed one first.
    pub fn all(&self) -> &[Metric] {
        &self.metrics
    }

    /// What each metric reads after a run: searched in `stdout` then
    /// `stderr`, or, with a metric file, in `file` (its content, or why it
    /// gave none, which every metric then carries).
    pub fn extract(
        &self,
        stdout: &str,
        stderr: &str,
        file: Option<&Result<String, MetricMiss>>,
    ) -> Vec<Result<f64, MetricMiss>> {
        self.metrics
            .iter()
            .map(|m| match file {
                None => m.extract(stdout, stderr),
                Some(Ok(text)) => m.extract(text, ""),
                Some(Err(miss)) => Err(miss.clone()),
            })
            .collect()
    }
}

/// The most bytes read from a metric file.
pub const METRIC_FILE_CAP: u64 = 16 << 20;

/// How far a metric file's modification time may lie before the run's
/// start and still be the run's: file-system timestamps come from a
/// coarse clock (one kernel tick) and some file systems keep whole
/// seconds.
pub const MTIME_SLACK: Duration = Duration::from_secs(1);

/// What a metric file was just before a run: a file the run leaves
/// exactly so was not written by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    fn of(m: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }

    /// The stamp of what is at `path` (not following a symbolic link);
    /// `None` when nothing is.
    pub fn take(path: &Path) -> Option<FileStamp> {
        std::fs::symlink_metadata(path).ok().map(|m| FileStamp::of(&m))
    }
}

/// The content of the metric file a run wrote, read by the rules of every
/// input file numaprobe reads: a regular file only (a FIFO, a device or a
/// directory is refused, and opening never blocks), at most
/// [`METRIC_FILE_CAP`] bytes, and never through a symbolic link (a link
/// could point at another run's file). A file the run did not write gives
/// no score, never the previous run's: missing, unchanged since `before`
/// (its stamp just before the run), or last modified before `started`
/// (beyond [`MTIME_SLACK`]) are misses that say so.
pub fn read_metric_file(
    path: &Path,
    before: Option<&FileStamp>,
    started: SystemTime,
) -> Result<String, MetricMiss> {
    let shown = path.display();
    let miss = |why: String| MetricMiss::File(format!("metric file {shown}: {why}"));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => miss("missing: this run did not write it".into()),
            Some(libc::ELOOP) => miss(
                "a symbolic link; refusing to follow it (name the file the program writes)".into(),
            ),
            _ => miss(format!("cannot open it: {e}")),
        })?;
    let meta = file.metadata().map_err(|e| miss(format!("cannot read its status: {e}")))?;
    if let Some(what) = topo::fs::not_regular(meta.file_type()) {
        return Err(miss(format!("{what}, where a regular file is expected")));
    }
    if before == Some(&FileStamp::of(&meta)) {
        return Err(miss(
            "not written by this run (unchanged since before it started): the previous score is not used"
                .into(),
        ));
    }
    let modified = meta.modified().map_err(|e| miss(format!("no modification time: {e}")))?;
    if modified + MTIME_SLACK < started {
        return Err(miss(format!(
            "last modified {:.1} s before this run started: not written by it",
            started.duration_since(modified).unwrap_or_default().as_secs_f64()
        )));
    }
    if meta.len() > METRIC_FILE_CAP {
        return Err(miss(format!("larger than {METRIC_FILE_CAP} bytes; refusing to read it")));
    }
    let mut buf = Vec::new();
    file.take(METRIC_FILE_CAP + 1)
        .read_to_end(&mut buf)
        .map_err(|e| miss(format!("cannot read it: {e}")))?;
    if buf.len() as u64 > METRIC_FILE_CAP {
        return Err(miss(format!("larger than {METRIC_FILE_CAP} bytes; refusing to read it")));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
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

    fn set(values: &[&str], lower: &[&str], higher: &[&str]) -> Result<MetricSet, ExecError> {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        MetricSet::parse(&v(values), &v(lower), &v(higher), None)
    }

    #[test]
    fn names_directions_and_the_unnamed_metric_are_parsed() {
        assert_eq!(split_name("int=SPECint.*?([0-9.]+)"), Some(("int", "SPECint.*?([0-9.]+)")));
        assert_eq!(split_name("fp_rate-2=x(y)"), Some(("fp_rate-2", "x(y)")));
        assert_eq!(split_name("t=(?i)time: (y)"), Some(("t", "(?i)time: (y)")));
        // `key=(value)`: the unnamed pattern it always was
        assert_eq!(split_name(r"rate=(\d+)"), None);
        // not a name: the whole value is the unnamed metric's pattern
        assert_eq!(split_name(r"Triad:\s+([0-9.]+)"), None);
        assert_eq!(split_name(r"(?:rate)=(\d+)"), None);
        assert_eq!(split_name(r"rate[=](\d+)"), None);
        assert_eq!(split_name("2x=(x)"), None);
        assert_eq!(split_name("=(x)"), None);

        let s = set(&["int=int: ([0-9.]+)", r"rate: ([0-9.]+)", "fp=fp: ([0-9.]+)"], &["fp"], &[])
            .unwrap();
        let u = s.unnamed().unwrap();
        assert_eq!((u.name(), u.pattern()), (None, "rate: ([0-9.]+)"));
        assert_eq!(u.direction, Direction::HigherIsBetter);
        let named: Vec<(Option<&str>, Direction)> =
            s.named_metrics().map(|m| (m.name(), m.direction)).collect();
        assert_eq!(
            named,
            [(Some("fp"), Direction::LowerIsBetter), (Some("int"), Direction::HigherIsBetter)]
        );
        assert_eq!(s.all()[0].name(), None, "the unnamed metric first, then by name");
        // the empty name is the unnamed metric's direction
        let s = set(&["t: ([0-9.]+)"], &[""], &[]).unwrap();
        assert_eq!(s.unnamed().unwrap().direction, Direction::LowerIsBetter);
        let extracted =
            set(&["a=a=(\\d+)", "(\\d+)$"], &[], &[]).unwrap().extract("a=1\nb=2", "", None);
        assert_eq!(extracted, [Ok(2.0), Ok(1.0)]);
    }

    #[test]
    fn bad_metric_sets_are_refused_naming_the_culprit() {
        let refused = |v: &[&str], l: &[&str], h: &[&str]| match set(v, l, h) {
            Err(ExecError::BadMetric(r)) => r,
            other => panic!("{other:?}"),
        };
        let owned = |s: &str| s.to_string();
        assert_eq!(
            refused(&["int=i(a)", "int=i(b)"], &[], &[]),
            MetricRefusal::NameTwice(owned("int"))
        );
        let two = MetricRefusal::TwoUnnamed(owned("(a)"), owned("(b)"));
        assert_eq!(refused(&["(a)", "(b)"], &[], &[]), two);
        match refused(&["int=i([0-9"], &[], &[]) {
            MetricRefusal::Invalid { name, pattern, .. } => {
                assert_eq!((name.as_deref(), pattern.as_str()), (Some("int"), "i([0-9"))
            }
            other => panic!("{other:?}"),
        }
        let none =
            MetricRefusal::NoCaptureGroup { name: Some(owned("fp")), pattern: owned("fp: \\d+") };
        assert_eq!(refused(&["fp=fp: \\d+"], &[], &[]), none);
        let fpp = MetricRefusal::DirectionForNone { name: owned("fpp"), named: vec![owned("int")] };
        assert_eq!(refused(&["int=i(a)"], &["fpp"], &[]), fpp);
        assert_eq!(refused(&["int=i(a)"], &[""], &[]), MetricRefusal::DirectionWithoutMetric);
        let int = MetricRefusal::DirectionForNone { name: owned("int"), named: vec![] };
        assert_eq!(refused(&[], &[], &["int"]), int);
        assert_eq!(
            refused(&["int=i(a)"], &["int"], &["int"]),
            MetricRefusal::BothDirections(owned("int"))
        );
        let e = MetricSet::parse(&[], &[], &[], Some("r.csv".into())).unwrap_err();
        assert!(matches!(e, ExecError::BadMetric(MetricRefusal::FileWithoutMetric)), "{e:?}");
        // every refusal is the user's (exit 2)
        assert!(MetricSet::parse(&["(a)".into(), "(b)".into()], &[], &[], None)
            .unwrap_err()
            .is_usage());
    }

    fn started_now() -> SystemTime {
        SystemTime::now()
    }

    #[test]
    fn a_metric_file_the_run_wrote_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.csv");
        std::fs::write(&path, "old,1\n").unwrap();
        let before = FileStamp::take(&path);
        let start = started_now();
        // rewritten (another size) during the run
        std::fs::write(&path, "int,41.5\nfp,30.25\n").unwrap();
        let text = read_metric_file(&path, before.as_ref(), start).unwrap();
        assert!(text.contains("int,41.5"));
        // a file that did not exist before the run
        let new = dir.path().join("new.json");
        let start = started_now();
        std::fs::write(&new, r#"{"rate": 7}"#).unwrap();
        assert!(read_metric_file(&new, None, start).unwrap().contains("rate"));
    }

    #[test]
    fn a_stale_or_missing_metric_file_gives_no_score() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.csv");
        // missing: the run did not write it
        let e = read_metric_file(&path, None, started_now()).unwrap_err().to_string();
        assert!(e.contains("result.csv: missing: this run did not write it"), "{e}");
        // left as the previous run wrote it
        std::fs::write(&path, "int,40\n").unwrap();
        let before = FileStamp::take(&path);
        let e = read_metric_file(&path, before.as_ref(), started_now()).unwrap_err().to_string();
        assert!(e.contains("not written by this run (unchanged since before it started)"), "{e}");
        // older than the run's start (restored with an old time, `cp -p`)
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
        let e = read_metric_file(&path, None, started_now()).unwrap_err().to_string();
        assert!(
            e.contains("last modified 3600.") && e.contains("s before this run started"),
            "{e}"
        );
        // every metric carries the file's miss
        let s = MetricSet::parse(&["int=int,(\\d+)".into(), "(x)".into()], &[], &[], None).unwrap();
        let miss = Err(MetricMiss::File("metric file r: missing".into()));
        let got = s.extract("int,5", "", Some(&miss));
        let want = MetricMiss::File("metric file r: missing".into());
        assert!(got.iter().all(|r| r.as_ref().err() == Some(&want)), "{got:?}");
    }

    #[test]
    fn a_metric_file_that_is_a_link_a_fifo_or_too_big_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("other-run.csv");
        std::fs::write(&target, "int,99\n").unwrap();
        let link = dir.path().join("result.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = read_metric_file(&link, None, started_now()).unwrap_err().to_string();
        assert!(e.contains("result.csv: a symbolic link; refusing to follow it"), "{e}");
        assert!(!e.contains("99"));

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_metric_file(&fifo, None, started_now()).unwrap_err().to_string();
        assert!(e.contains("a FIFO, where a regular file is expected"), "{e}");

        let big = dir.path().join("big.csv");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(METRIC_FILE_CAP + 1).unwrap();
        let e = read_metric_file(&big, None, started_now()).unwrap_err().to_string();
        assert!(e.contains(&format!("larger than {METRIC_FILE_CAP} bytes")), "{e}");
        f.set_len(METRIC_FILE_CAP).unwrap();
        assert_eq!(
            read_metric_file(&big, None, started_now()).unwrap().len() as u64,
            METRIC_FILE_CAP
        );
    }
}
