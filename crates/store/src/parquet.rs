//! Runs as tidy Parquet tables for the engines operators already run at
//! scale (DuckDB, Spark, Trino, BigQuery): `numaprobe export --format
//! parquet`. Two files: the figures, one row per figure (the catalogue's
//! metrics and each bandwidth and latency result), and the runs, one row
//! per run. Written with the `parquet` crate's low-level column writer (no
//! Arrow), uncompressed, in row groups of at most [`ROW_GROUP_ROWS`] rows so
//! that memory stays bounded whatever the number of runs. The schema is
//! documented in docs/fleet.md.

use std::io::Write;
use std::sync::Arc;

use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

/// Rows buffered before a row group is written.
pub const ROW_GROUP_ROWS: usize = 65_536;

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
}";

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
}";

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
    /// `metric` (a catalogue metric) or `result` (one bandwidth or latency
    /// result).
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
    pub figures: i64,
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
    Str(Vec<Option<String>>),
    I32(Vec<Option<i32>>),
    I64(Vec<Option<i64>>),
    F64(Vec<f64>),
    Bool(Vec<Option<bool>>),
}

impl Col {
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

/// Definition levels and the present values of an optional column.
fn levels<T: Clone>(v: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
    let values = v.iter().flatten().cloned().collect();
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    (values, defs)
}

/// A Parquet file written row group by row group.
struct Table<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    cols: Vec<Col>,
    rows: usize,
    total: u64,
}

impl<W: Write + Send> Table<W> {
    fn new(out: W, schema: &str, cols: Vec<Col>) -> Result<Self, ParquetError> {
        let schema = Arc::new(parse_message_type(schema)?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_created_by(format!("numaprobe {}", env!("CARGO_PKG_VERSION")))
                .build(),
        );
        Ok(Table {
            writer: SerializedFileWriter::new(out, schema, props)?,
            cols,
            rows: 0,
            total: 0,
        })
    }

    fn row_done(&mut self) -> Result<(), ParquetError> {
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
                    let (vals, defs) = levels(v);
                    let vals: Vec<ByteArray> =
                        vals.into_iter().map(|s| ByteArray::from(s.into_bytes())).collect();
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

fn push_str(c: &mut Col, v: Option<&str>) {
    if let Col::Str(x) = c {
        x.push(v.map(str::to_string));
    }
}

fn push_key(cols: &mut [Col], k: &RunKey) {
    push_str(&mut cols[0], k.machine_id.as_deref());
    push_str(&mut cols[1], Some(&k.host));
    push_str(&mut cols[2], Some(&k.run_uuid));
    if let Col::I64(x) = &mut cols[3] {
        x.push(k.started_ms);
    }
    push_str(&mut cols[4], k.label.as_deref());
    push_str(&mut cols[5], Some(&k.config_hash));
}

/// Writes the figures table to `out`, the runs' figures one run after
/// another (`runs` yields each run's key and figures, so a caller can read
/// one run at a time): the number of rows written.
pub fn write_figures<W: Write + Send>(
    out: W,
    runs: impl IntoIterator<Item = Result<(RunKey, Vec<FigureRow>), ParquetError>>,
) -> Result<u64, ParquetError> {
    let cols = vec![
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::I64(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::I32(vec![]),
        Col::I32(vec![]),
        Col::F64(vec![]),
        Col::Str(vec![]),
        Col::Bool(vec![]),
        Col::Bool(vec![]),
    ];
    let mut t = Table::new(out, FIGURES_SCHEMA, cols)?;
    for run in runs {
        let (key, rows) = run?;
        for r in rows {
            push_key(&mut t.cols, &key);
            push_str(&mut t.cols[6], Some(r.kind));
            push_str(&mut t.cols[7], Some(&r.metric_id));
            push_str(&mut t.cols[8], r.relation.as_deref());
            push_str(&mut t.cols[9], r.scope.as_deref());
            if let Col::I32(x) = &mut t.cols[10] {
                x.push(r.cpu_node);
            }
            if let Col::I32(x) = &mut t.cols[11] {
                x.push(r.mem_node);
            }
            if let Col::F64(x) = &mut t.cols[12] {
                x.push(r.value);
            }
            push_str(&mut t.cols[13], Some(&r.unit));
            if let Col::Bool(x) = &mut t.cols[14] {
                x.push(r.higher_is_better);
            }
            if let Col::Bool(x) = &mut t.cols[15] {
                x.push(r.stable);
            }
            t.row_done()?;
        }
    }
    t.finish()
}

/// Writes the runs table to `out`: the number of rows written.
pub fn write_runs<W: Write + Send>(out: W, runs: &[RunRow]) -> Result<u64, ParquetError> {
    let cols = vec![
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::I64(vec![]),
        Col::I64(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::Str(vec![]),
        Col::I64(vec![]),
    ];
    let mut t = Table::new(out, RUNS_SCHEMA, cols)?;
    for r in runs {
        let k = &r.key;
        push_str(&mut t.cols[0], Some(&k.run_uuid));
        push_str(&mut t.cols[1], k.machine_id.as_deref());
        push_str(&mut t.cols[2], Some(&k.host));
        push_str(&mut t.cols[3], Some(&r.model));
        if let Col::I64(x) = &mut t.cols[4] {
            x.push(k.started_ms);
        }
        if let Col::I64(x) = &mut t.cols[5] {
            x.push(r.finished_ms);
        }
        push_str(&mut t.cols[6], Some(&r.status));
        push_str(&mut t.cols[7], k.label.as_deref());
        push_str(&mut t.cols[8], Some(&k.config_hash));
        push_str(&mut t.cols[9], Some(&r.machine_fingerprint));
        push_str(&mut t.cols[10], Some(&r.tool_version));
        if let Col::I64(x) = &mut t.cols[11] {
            x.push(Some(r.figures));
        }
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
            })
            .collect();
        assert_eq!(write_runs(std::fs::File::create(&path).unwrap(), &rows).unwrap(), 3);
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let got: Vec<i64> =
            reader.get_row_iter(None).unwrap().map(|r| r.unwrap().get_long(11).unwrap()).collect();
        assert_eq!(got, [10, 11, 12]);
    }
}
