-- Loads `numaprobe export --format parquet --all -o fleet.parquet` into
-- Spark SQL for deploy/sql/fleet.sql (docs/fleet.md): run this file, then
-- fleet.sql, in one session (spark-sql, a notebook, or
-- scripts/fleet-sql.py --engine spark, which starts Spark in local mode,
-- runs both and prints every verdict as JSON). Spark 3.4 or later.

-- Files: edit the paths. The figures table, and the runs and settings
-- tables `export` writes beside it; the hosts the orchestrator could not
-- measure (fleet --unmeasured; an empty file: none).
SET numaprobe.figures = fleet.parquet;
SET numaprobe.runs = fleet.runs.parquet;
SET numaprobe.settings = fleet.settings.parquet;
SET numaprobe.unmeasured = none.tsv;

-- Each table is read with the columns of schema version 2 stated, so a
-- file of another version reads with schema_version NULL (version 1 has
-- no such column) or its own, and fleet.sql's first checks name both.
CREATE OR REPLACE TEMPORARY VIEW numaprobe_figures_file (
  machine_id STRING, host STRING, run_uuid STRING, started TIMESTAMP, label STRING,
  config_hash STRING, kind STRING, metric_id STRING, relation STRING, scope STRING,
  cpu_node INT, mem_node INT, value DOUBLE, unit STRING, higher_is_better BOOLEAN,
  stable BOOLEAN, schema_version INT
) USING parquet OPTIONS (path '${numaprobe.figures}');
CREATE OR REPLACE TEMPORARY VIEW numaprobe_runs_file (
  run_uuid STRING, machine_id STRING, host STRING, model STRING, started TIMESTAMP,
  finished TIMESTAMP, status STRING, label STRING, config_hash STRING,
  machine_fingerprint STRING, tool_version STRING, figures BIGINT, run_id BIGINT,
  exec BOOLEAN, message STRING, settings BIGINT, schema_version INT
) USING parquet OPTIONS (path '${numaprobe.runs}');
CREATE OR REPLACE TEMPORARY VIEW numaprobe_settings_file (
  run_uuid STRING, setting STRING, value STRING, schema_version INT
) USING parquet OPTIONS (path '${numaprobe.settings}');
CREATE OR REPLACE TEMPORARY VIEW numaprobe_unmeasured_file USING text
OPTIONS (path '${numaprobe.unmeasured}', wholetext 'true');

CREATE OR REPLACE TEMPORARY VIEW numaprobe_figures AS
SELECT *, unix_millis(started) AS started_ms FROM numaprobe_figures_file;
CREATE OR REPLACE TEMPORARY VIEW numaprobe_runs AS
SELECT *, unix_millis(started) AS started_ms FROM numaprobe_runs_file;
CREATE OR REPLACE TEMPORARY VIEW numaprobe_settings AS SELECT * FROM numaprobe_settings_file;
-- The unmeasured list's lines, numbered from 1 (read whole, split here, so
-- that the numbers are the file's).
CREATE OR REPLACE TEMPORARY VIEW numaprobe_unmeasured_lines AS
SELECT CAST(p.pos + 1 AS BIGINT) AS line, p.text
FROM numaprobe_unmeasured_file f
LATERAL VIEW posexplode(split(f.value, '\n')) p AS pos, text;
-- The time ages are measured from when fleet_params.now_ms is NULL.
CREATE OR REPLACE TEMPORARY VIEW fleet_clock AS SELECT unix_millis(current_timestamp()) AS now_ms;
