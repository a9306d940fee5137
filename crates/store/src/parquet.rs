//! Runs as tidy Parquet tables for the engines operators already run at
//! scale (DuckDB, Spark, Trino, BigQuery): `numaprobe export --format
//! parquet`. Three files: the figures, one row per figure (what `fleet`
//! compares, the catalogue's metrics and each bandwidth and latency
//! result); the runs, one row per run; the settings each run was measured
//! under, one row per setting. Written with the `parquet` crate's
//! low-level column writer (no Arrow), uncompressed, in row groups of at
//! most [`ROW_GROUP_ROWS`] rows so that memory stays bounded whatever the
//! number of runs. Every table carries its [`SCHEMA_VERSION`] twice: as
//! its last column (what SQL engines read) and in the file's key-value
//! metadata under [`VERSION_KEY`] (readable without knowing the columns).
//! The schema is documented in docs/fleet.md; deploy/sql reads it.

use std::io::Write;
use std::sync::Arc;

use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

/// Rows buffered before a row group is written.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// The version of the three tables' schema. Version 1 had no version
/// column, no settings table and, in the figures and runs tables, neither
/// the fleet's own figures nor the run ids, `exec` flags and messages that
/// deploy/sql needs to give `fleet`'s verdicts; deploy/sql refuses any
/// version but this one, by name.
pub const SCHEMA_VERSION: i32 = 2;

/// The key of [`SCHEMA_VERSION`] in each file's key-value metadata.
pub const VERSION_KEY: &str = "numaprobe.schema_version";

/// The figures table: one row per figure.
pub const FIGURES_SCHEMA: &str = "message numaprobe_figure {
  OPTIONAL BYTE_ARRAY machine_id (UTF8);
  REQUIRED BYTE_ARRAY host (UTF8);
  REQUIRED BYTE_ARRAY run_uuid (UTF8);
  OPTIONAL INT64 started (TIMESTAMP(MILLIS,true));
  OPTIONAL BYTE_ARRAY label (UTF8);
  REQUIRED BYTE_ARRAY config_hash (UTF8);
  REQUIRED BYTE_ARRAY kind (UTF8);
  REQUIRED BYTE_ARRAY metric_id (UTF8);
  OPTIONAL BYTE_ARRAY relation (UTF8);
  OPTIONAL BYTE_ARRAY scope (UTF8);
  OPTIONAL INT32 cpu_node;
  OPTIONAL INT32 mem_node;
  REQUIRED DOUBLE value;
  REQUIRED BYTE_ARRAY unit (UTF8);
  OPTIONAL BOOLEAN higher_is_better;
  OPTIONAL BOOLEAN stable;
  REQUIRED INT32 schema_version;
}";
const FIGURES_COLS: &str = "ssslssssssiidsbbi";

/// The runs table: one row per run.
pub const RUNS_SCHEMA: &str = "message numaprobe_run {
  REQUIRED BYTE_ARRAY run_uuid (UTF8);
  OPTIONAL BYTE_ARRAY machine_id (UTF8);
  REQUIRED BYTE_ARRAY host (UTF8);
  REQUIRED BYTE_ARRAY model (UTF8);
  OPTIONAL INT64 started (TIMESTAMP(MILLIS,true));
  OPTIONAL INT64 finished (TIMESTAMP(MILLIS,true));
  REQUIRED BYTE_ARRAY status (UTF8);
  OPTIONAL BYTE_ARRAY label (UTF8);
  REQUIRED BYTE_ARRAY config_hash (UTF8);
  REQUIRED BYTE_ARRAY machine_fingerprint (UTF8);
  REQUIRED BYTE_ARRAY tool_version (UTF8);
  REQUIRED INT64 figures;
  REQUIRED INT64 run_id;
  REQUIRED BOOLEAN exec;
  OPTIONAL BYTE_ARRAY message (UTF8);
  REQUIRED INT64 settings;
  REQUIRED INT32 schema_version;
}";
const RUNS_COLS: &str = "ssssllsssssllbsli";

/// The settings table: one row per setting of a run.
pub const SETTINGS_SCHEMA: &str = "message numaprobe_setting {
  REQUIRED BYTE_ARRAY run_uuid (UTF8);
  REQUIRED BYTE_ARRAY setting (UTF8);
  REQUIRED BYTE_ARRAY value (UTF8);
  REQUIRED INT32 schema_version;
}";
const SETTINGS_COLS: &str = "sssi";

/// What identifies a run on each of its figure rows.
#[derive(Debug, Clone, PartialEq)]
pub struct RunKey {
    pub machine_id: Option<String>,
    pub host: String,
    pub run_uuid: String,
    /// Unix milliseconds.
    pub started_ms: Option<i64>,
    pub label: Option<String>,
    pub config_hash: String,
}

/// One figure of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// `fleet` (a figure `numaprobe fleet` compares), `metric` (a
    /// catalogue metric) or `result` (one bandwidth or latency result).
    pub kind: &'static str,
    pub metric_id: String,
    pub relation: Option<String>,
    pub scope: Option<String>,
    pub cpu_node: Option<i32>,
    pub mem_node: Option<i32>,
    pub value: f64,
    pub unit: String,
    pub higher_is_better: Option<bool>,
    pub stable: Option<bool>,
}

/// One run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub key: RunKey,
    pub model: String,
    pub finished_ms: Option<i64>,
    pub status: String,
    pub machine_fingerprint: String,
    pub tool_version: String,
    /// Its rows in the figures table.
    pub figures: i64,
    /// Its id in the database it was exported from: what orders two runs
    /// of a machine that started at the same time, as in `fleet`.
    pub run_id: i64,
    /// It holds results of `exec` (a program under placements).
    pub exec: bool,
    /// How it ended when not complete (`interrupted (SIGTERM)`, an error).
    pub message: Option<String>,
    /// Its rows in the settings table.
    pub settings: i64,
}

/// An error writing Parquet (the path is named by the caller).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ParquetError(String);

impl From<parquet::errors::ParquetError> for ParquetError {
    fn from(e: parquet::errors::ParquetError) -> Self {
        ParquetError(e.to_string())
    }
}

/// A column being buffered.
enum Col {
    Str(Strs),
    I32(Vec<Option<i32>>),
    I64(Vec<Option<i64>>),
    F64(Vec<f64>),
    Bool(Vec<Option<bool>>),
}

impl Col {
    /// A column of kind `k`: `s` string, `i` int32, `l` int64, `d` double,
    /// `b` boolean.
    fn of(k: char) -> Col {
        match k {
            's' => Col::Str(Strs::default()),
            'i' => Col::I32(vec![]),
            'l' => Col::I64(vec![]),
            'd' => Col::F64(vec![]),
            _ => Col::Bool(vec![]),
        }
    }

    fn clear(&mut self) {
        match self {
            Col::Str(v) => v.clear(),
            Col::I32(v) => v.clear(),
            Col::I64(v) => v.clear(),
            Col::F64(v) => v.clear(),
            Col::Bool(v) => v.clear(),
        }
    }
}

/// A string column's values, one buffer for all: a row group holds
/// hundreds of thousands of short strings (a run's key repeats on each of
/// its figures), and a `String` each, cloned again for the writer, made
/// the allocator most of an export's cost at 100,000 hosts.
#[derive(Default)]
struct Strs {
    bytes: Vec<u8>,
    /// Where each row's value ends in `bytes`; `None` when it has none.
    ends: Vec<Option<usize>>,
}

impl Strs {
    fn push(&mut self, v: Option<&str>) {
        self.ends.push(v.map(|v| {
            self.bytes.extend_from_slice(v.as_bytes());
            self.bytes.len()
        }));
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// The present values (slices of one shared buffer, not copies) and
    /// the definition levels.
    fn levels(&self) -> (Vec<ByteArray>, Vec<i16>) {
        let all = bytes::Bytes::copy_from_slice(&self.bytes);
        let mut start = 0;
        let mut values = Vec::with_capacity(self.ends.len());
        let defs = self
            .ends
            .iter()
            .map(|end| match end {
                Some(end) => {
                    values.push(ByteArray::from(all.slice(start..*end)));
                    start = *end;
                    1
                }
                None => 0,
            })
            .collect();
        (values, defs)
    }
}

/// Definition levels and the present values of an optional column.
fn levels<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let values = v.iter().flatten().cloned().collect();
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    (values, defs)
}

/// A Parquet file written row group by row group, a row at a time: each
/// value pushed to the next column, [`Table::row_done`] ends the row with
/// the schema version.
struct Table<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    cols: Vec<Col>,
    /// The column the next value goes to.
    at: usize,
    rows: usize,
    total: u64,
}

impl<W: Write + Send> Table<W> {
    fn new(out: W, schema: &str, kinds: &str) -> Result<Self, ParquetError> {
        let schema = Arc::new(parse_message_type(schema)?);
        let cols: Vec<Col> = kinds.chars().map(Col::of).collect();
        if cols.len() != schema.get_fields().len() {
            return Err(ParquetError("schema and columns differ".into()));
        }
        let props = Arc::new(
            WriterProperties::builder()
                .set_created_by(format!("numaprobe {}", env!("CARGO_PKG_VERSION")))
                .set_key_value_metadata(Some(vec![KeyValue::new(
                    VERSION_KEY.to_string(),
                    SCHEMA_VERSION.to_string(),
                )]))
                .build(),
        );
        let writer = SerializedFileWriter::new(out, schema, props)?;
        Ok(Table { writer, cols, at: 0, rows: 0, total: 0 })
    }

    fn next(&mut self) -> &mut Col {
        let i = self.at;
        self.at += 1;
        &mut self.cols[i]
    }

    fn str(&mut self, v: Option<&str>) {
        if let Col::Str(x) = self.next() {
            x.push(v);
        }
    }

    fn i32(&mut self, v: Option<i32>) {
        if let Col::I32(x) = self.next() {
            x.push(v);
        }
    }

    fn i64(&mut self, v: Option<i64>) {
        if let Col::I64(x) = self.next() {
            x.push(v);
        }
    }

    fn f64(&mut self, v: f64) {
        if let Col::F64(x) = self.next() {
            x.push(v);
        }
    }

    fn bool(&mut self, v: Option<bool>) {
        if let Col::Bool(x) = self.next() {
            x.push(v);
        }
    }

    /// Ends a row with the schema version, its last column.
    fn row_done(&mut self) -> Result<(), ParquetError> {
        self.i32(Some(SCHEMA_VERSION));
        if self.at != self.cols.len() {
            return Err(ParquetError(format!(
                "a row of {} values for {} columns",
                self.at,
                self.cols.len()
            )));
        }
        self.at = 0;
        self.rows += 1;
        if self.rows >= ROW_GROUP_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ParquetError> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut rg = self.writer.next_row_group()?;
        let mut i = 0;
        while let Some(mut col) = rg.next_column()? {
            let c =
                self.cols.get(i).ok_or_else(|| ParquetError("schema and columns differ".into()))?;
            match c {
                Col::Str(v) => {
                    let (vals, defs) = v.levels();
                    col.typed::<ByteArrayType>().write_batch(&vals, Some(&defs), None)?;
                }
                Col::I32(v) => {
                    let (vals, defs) = levels(v);
                    col.typed::<Int32Type>().write_batch(&vals, Some(&defs), None)?;
                }
                Col::I64(v) => {
                    let (vals, defs) = levels(v);
                    col.typed::<Int64Type>().write_batch(&vals, Some(&defs), None)?;
                }
                Col::F64(v) => {
                    col.typed::<DoubleType>().write_batch(v, None, None)?;
                }
                Col::Bool(v) => {
                    let (vals, defs) = levels(v);
                    col.typed::<BoolType>().write_batch(&vals, Some(&defs), None)?;
                }
            }
            col.close()?;
            i += 1;
        }
        rg.close()?;
        self.total += self.rows as u64;
        self.rows = 0;
        for c in &mut self.cols {
            c.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> Result<u64, ParquetError> {
        self.flush()?;
        self.writer.close()?;
        Ok(self.total)
    }
}

/// The figures table, written one run after another.
pub struct FiguresTable<W: Write + Send>(Table<W>);

impl<W: Write + Send> FiguresTable<W> {
    pub fn new(out: W) -> Result<Self, ParquetError> {
        Ok(FiguresTable(Table::new(out, FIGURES_SCHEMA, FIGURES_COLS)?))
    }

    /// Adds one run's figures.
    pub fn push(&mut self, k: &RunKey, rows: &[FigureRow]) -> Result<(), ParquetError> {
        let t = &mut self.0;
        for r in rows {
            t.str(k.machine_id.as_deref());
            t.str(Some(&k.host));
            t.str(Some(&k.run_uuid));
            t.i64(k.started_ms);
            t.str(k.label.as_deref());
            t.str(Some(&k.config_hash));
            t.str(Some(r.kind));
            t.str(Some(&r.metric_id));
            t.str(r.relation.as_deref());
            t.str(r.scope.as_deref());
            t.i32(r.cpu_node);
            t.i32(r.mem_node);
            t.f64(r.value);
            t.str(Some(&r.unit));
            t.bool(r.higher_is_better);
            t.bool(r.stable);
            t.row_done()?;
        }
        Ok(())
    }

    /// Writes what is buffered and the footer: the rows written.
    pub fn finish(self) -> Result<u64, ParquetError> {
        self.0.finish()
    }
}

/// The settings table, written one run after another.
pub struct SettingsTable<W: Write + Send>(Table<W>);

impl<W: Write + Send> SettingsTable<W> {
    pub fn new(out: W) -> Result<Self, ParquetError> {
        Ok(SettingsTable(Table::new(out, SETTINGS_SCHEMA, SETTINGS_COLS)?))
    }

    /// Adds one run's settings (dotted name, value as `fleet` compares
    /// it).
    pub fn push<'a>(
        &mut self,
        run_uuid: &str,
        settings: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), ParquetError> {
        let t = &mut self.0;
        for (name, value) in settings {
            t.str(Some(run_uuid));
            t.str(Some(name));
            t.str(Some(value));
            t.row_done()?;
        }
        Ok(())
    }

    /// Writes what is buffered and the footer: the rows written.
    pub fn finish(self) -> Result<u64, ParquetError> {
        self.0.finish()
    }
}

/// Writes the figures table to `out`, the runs' figures one run after
/// another (`runs` yields each run's key and figures, so a caller can read
/// one run at a time): the number of rows written.
pub fn write_figures<W: Write + Send>(
    out: W,
    runs: impl IntoIterator<Item = Result<(RunKey, Vec<FigureRow>), ParquetError>>,
) -> Result<u64, ParquetError> {
    let mut t = FiguresTable::new(out)?;
    for run in runs {
        let (key, rows) = run?;
        t.push(&key, &rows)?;
    }
    t.finish()
}

/// Writes the runs table to `out`: the number of rows written.
pub fn write_runs<W: Write + Send>(out: W, runs: &[RunRow]) -> Result<u64, ParquetError> {
    let mut t = Table::new(out, RUNS_SCHEMA, RUNS_COLS)?;
    for r in runs {
        let k = &r.key;
        t.str(Some(&k.run_uuid));
        t.str(k.machine_id.as_deref());
        t.str(Some(&k.host));
        t.str(Some(&r.model));
        t.i64(k.started_ms);
        t.i64(r.finished_ms);
        t.str(Some(&r.status));
        t.str(k.label.as_deref());
        t.str(Some(&k.config_hash));
        t.str(Some(&r.machine_fingerprint));
        t.str(Some(&r.tool_version));
        t.i64(Some(r.figures));
        t.i64(Some(r.run_id));
        t.bool(Some(r.exec));
        t.str(r.message.as_deref());
        t.i64(Some(r.settings));
        t.row_done()?;
    }
    t.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    use parquet::record::RowAccessor;

    fn key(n: usize) -> RunKey {
        RunKey {
            machine_id: n.is_multiple_of(2).then(|| format!("{n:016x}")),
            host: format!("host-{n}"),
            run_uuid: format!("uuid-{n}"),
            started_ms: Some(1_793_617_200_000 + n as i64),
            label: None,
            config_hash: "c0ffee".into(),
        }
    }

    fn figure(n: usize, i: usize) -> FigureRow {
        FigureRow {
            kind: if i == 0 { "metric" } else { "result" },
            metric_id: if i == 0 { "local_bw_gbs".into() } else { format!("bw.local.triad.{i}") },
            relation: (i == 0).then(|| "local".into()),
            scope: (i == 0).then(|| "node".into()),
            cpu_node: (i > 0).then_some(i as i32 - 1),
            mem_node: (i > 0).then_some(0),
            value: n as f64 + i as f64 / 10.0,
            unit: "GB/s".into(),
            higher_is_better: Some(true),
            stable: (i != 2).then_some(i % 3 != 1),
        }
    }

    /// Written over more than one row group and read back with the crate's
    /// reader: every row, in order, each value and null where it was.
    #[test]
    fn figures_read_back_over_several_row_groups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.parquet");
        let runs = 30_000;
        let per = 3;
        let n = write_figures(
            std::fs::File::create(&path).unwrap(),
            (0..runs).map(|r| Ok((key(r), (0..per).map(|i| figure(r, i)).collect()))),
        )
        .unwrap();
        assert_eq!(n, (runs * per) as u64);
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().num_rows(), (runs * per) as i64);
        assert!(meta.num_row_groups() >= 2, "{} row groups", meta.num_row_groups());
        let mut rows = reader.get_row_iter(None).unwrap();
        let row = |n: usize, i: usize, r: &parquet::record::Row| {
            let f: Vec<(&String, &Field)> = r.get_column_iter().collect();
            assert_eq!(f[1].1, &Field::Str(format!("host-{n}")));
            assert_eq!(
                f[0].1,
                &if n.is_multiple_of(2) { Field::Str(format!("{n:016x}")) } else { Field::Null }
            );
            assert_eq!(f[12].1, &Field::Double(n as f64 + i as f64 / 10.0));
            assert_eq!(f[3].1, &Field::TimestampMillis(1_793_617_200_000 + n as i64));
            assert_eq!(f[10].1, &if i > 0 { Field::Int(i as i32 - 1) } else { Field::Null });
            assert_eq!(f[15].1, &if i == 2 { Field::Null } else { Field::Bool(i % 3 != 1) });
            assert_eq!(f[7].0, "metric_id");
        };
        for (j, r) in rows.by_ref().take(7).enumerate() {
            row(j / per, j % per, &r.unwrap());
        }
        let last = rows.last().unwrap().unwrap();
        row(runs - 1, per - 1, &last);
    }

    #[test]
    fn runs_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.parquet");
        let rows: Vec<RunRow> = (0..3)
            .map(|n| RunRow {
                key: key(n),
                model: "2x Xeon".into(),
                finished_ms: None,
                status: "complete".into(),
                machine_fingerprint: format!("fp{n}"),
                tool_version: "0.1.0".into(),
                figures: 10 + n as i64,
                run_id: 7 - n as i64,
                exec: n == 1,
                message: (n == 2).then(|| "interrupted (SIGTERM)".into()),
                settings: 3 * n as i64,
            })
            .collect();
        assert_eq!(write_runs(std::fs::File::create(&path).unwrap(), &rows).unwrap(), 3);
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let got: Vec<(i64, i64, bool, Field, i64, i32)> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                let f: Vec<(&String, &Field)> = r.get_column_iter().collect();
                assert_eq!(f[14].0, "message");
                let msg = f[14].1.clone();
                (
                    r.get_long(11).unwrap(),
                    r.get_long(12).unwrap(),
                    r.get_bool(13).unwrap(),
                    msg,
                    r.get_long(15).unwrap(),
                    r.get_int(16).unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (10, 7, false, Field::Null, 0, SCHEMA_VERSION),
                (11, 6, true, Field::Null, 3, SCHEMA_VERSION),
                (12, 5, false, Field::Str("interrupted (SIGTERM)".into()), 6, SCHEMA_VERSION),
            ]
        );
    }

    /// The settings table: one row per setting, in the order given, each
    /// with its run and the schema version; every file names the version
    /// in its key-value metadata too.
    #[test]
    fn settings_read_back_and_every_file_names_its_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.parquet");
        let mut t = SettingsTable::new(std::fs::File::create(&path).unwrap()).unwrap();
        t.push("u1", [("thp", "madvise"), ("cmdline_options.numa_balancing", "0")]).unwrap();
        t.push("u2", [("thp", "always")]).unwrap();
        assert_eq!(t.finish().unwrap(), 3);
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let got: Vec<(String, String, String, i32)> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                let s = |i| r.get_string(i).unwrap().clone();
                (s(0), s(1), s(2), r.get_int(3).unwrap())
            })
            .collect();
        let v = SCHEMA_VERSION;
        assert_eq!(
            got,
            [
                ("u1".into(), "thp".into(), "madvise".into(), v),
                ("u1".into(), "cmdline_options.numa_balancing".into(), "0".into(), v),
                ("u2".into(), "thp".into(), "always".into(), v),
            ]
        );
        let figures = dir.path().join("f.parquet");
        write_figures(std::fs::File::create(&figures).unwrap(), [Ok((key(1), vec![figure(1, 0)]))])
            .unwrap();
        for p in [path, figures] {
            let reader = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
            let kv = reader.metadata().file_metadata().key_value_metadata().cloned();
            let kv: Vec<(String, Option<String>)> =
                kv.unwrap_or_default().into_iter().map(|k| (k.key, k.value)).collect();
            assert_eq!(kv, [(VERSION_KEY.to_string(), Some("2".to_string()))], "{}", p.display());
        }
    }
}
