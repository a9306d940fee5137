-- Loads `numaprobe export --format parquet --all -o fleet.parquet` into
-- DuckDB for deploy/sql/fleet.sql (docs/fleet.md):
--   duckdb -c '.read deploy/sql/duckdb.sql' -c '.read deploy/sql/fleet.sql' \
--          -c 'SELECT * FROM fleet_outliers'
-- (or scripts/fleet-sql.py --engine duckdb, which runs both and prints
-- every verdict as JSON). DuckDB 1.1 or later.

-- Files: edit the paths. The figures table, and the runs and settings
-- tables `export` writes beside it; the hosts the orchestrator could not
-- measure (fleet --unmeasured; /dev/null: none).
SET VARIABLE numaprobe_figures = 'fleet.parquet';
SET VARIABLE numaprobe_runs = 'fleet.runs.parquet';
SET VARIABLE numaprobe_settings = 'fleet.settings.parquet';
SET VARIABLE numaprobe_unmeasured = '/dev/null';

-- Spark SQL's names for what fleet.sql calls in both dialects.
CREATE OR REPLACE TEMP MACRO raise_error(msg) AS error(msg);

-- Each file must be numaprobe's Parquet of schema version 2 (its key-value
-- metadata says so whatever its columns): anything else fails here.
SELECT raise_error(path || ': deploy/sql reads numaprobe Parquet schema version 2, but this file holds ' || coalesce('version ' || v, 'no version (numaprobe Parquet schema version 1, or not numaprobe''s)') || ': export the runs again with this numaprobe (export --format parquet --all)')
FROM (SELECT getvariable('numaprobe_figures') AS path, (SELECT max(decode(value)) FROM parquet_kv_metadata(getvariable('numaprobe_figures')) WHERE decode(key) = 'numaprobe.schema_version') AS v
      UNION ALL
      SELECT getvariable('numaprobe_runs'), (SELECT max(decode(value)) FROM parquet_kv_metadata(getvariable('numaprobe_runs')) WHERE decode(key) = 'numaprobe.schema_version')
      UNION ALL
      SELECT getvariable('numaprobe_settings'), (SELECT max(decode(value)) FROM parquet_kv_metadata(getvariable('numaprobe_settings')) WHERE decode(key) = 'numaprobe.schema_version')) x
WHERE coalesce(v, '') <> '2';

CREATE OR REPLACE TEMPORARY VIEW numaprobe_figures AS
SELECT *, epoch_ms(started) AS started_ms FROM read_parquet(getvariable('numaprobe_figures'));
CREATE OR REPLACE TEMPORARY VIEW numaprobe_runs AS
SELECT *, epoch_ms(started) AS started_ms FROM read_parquet(getvariable('numaprobe_runs'));
CREATE OR REPLACE TEMPORARY VIEW numaprobe_settings AS
SELECT * FROM read_parquet(getvariable('numaprobe_settings'));
-- The unmeasured list's lines, numbered from 1.
CREATE OR REPLACE TEMPORARY VIEW numaprobe_unmeasured_lines AS
SELECT CAST(generate_subscripts(l, 1) AS BIGINT) AS line, unnest(l) AS text
FROM (SELECT string_split(content, chr(10)) AS l FROM read_text(getvariable('numaprobe_unmeasured')));
-- The time ages are measured from when fleet_params.now_ms is NULL.
CREATE OR REPLACE TEMPORARY VIEW fleet_clock AS SELECT epoch_ms(current_timestamp) AS now_ms;
