-- numaprobe fleet's verdicts as SQL, over the Parquet tables of
-- `numaprobe export --format parquet --all` (schema version 2), in one text
-- that DuckDB and Spark SQL both run. Load the tables first with
-- deploy/sql/duckdb.sql or deploy/sql/spark.sql (each names the files and
-- defines numaprobe_figures, numaprobe_runs, numaprobe_settings,
-- numaprobe_unmeasured_lines and fleet_clock), then run this file.
-- Every verdict is a view (docs/fleet.md, "The fleet's verdicts as SQL"):
--   fleet_hosts           every host compared, with its verdict
--   fleet_outliers        hosts worse than their peers, one row per metric
--   fleet_peer_stats      each group's median and MAD per metric
--   fleet_drift           hosts whose setting differs from their group's majority
--   fleet_drift_settings  the values of each drifting setting, with hosts and majority
--   fleet_stale           hosts whose run is older than max_age_s
--   fleet_future          hosts whose run started after now (a clock is wrong)
--   fleet_incomplete      hosts whose latest measuring run is incomplete or failed
--   fleet_unmeasured      hosts the orchestrator could not measure
--   fleet_skipped         hosts left out, with why
--   fleet_passed_over     newer runs without the fleet's figures, not compared
--   fleet_also_named      other host names of a renamed machine
--   fleet_summary         the counts of `fleet --json`
-- The rules are those of `numaprobe fleet` (crates/analysis/src/fleet.rs),
-- to the last bit: medians interpolated as Hyndman and Fan's definition 7
-- (an even count's median is lo + 0.5 * (hi - lo)), the MAD the median of
-- |value - median|, every figure a DOUBLE, every division guarded.
-- Statements end with ';' at the end of a line, and no string holds one.
-- The views below build on each other; an engine runs much faster when
-- these stages are kept as tables as they are made (scripts/fleet-sql.py
-- makes each a DuckDB temporary table, or a checkpointed Spark view; the
-- verdicts are the same either way):
-- Stages: fleet_runs fleet_machines fleet_unmeasured_taken fleet_slot_runs fleet_slot_latest fleet_members fleet_groups fleet_values fleet_peer_stats fleet_judged fleet_member_settings fleet_drift_settings fleet_drift fleet_hosts

-- Parameters: `numaprobe fleet`'s flags. Edit the values, keep the names.
CREATE OR REPLACE TEMPORARY VIEW fleet_params AS SELECT
  CAST(5.0 AS DOUBLE) AS threshold_pct,    -- --threshold: % worse than the peer median
  CAST(691200 AS BIGINT) AS max_age_s,     -- --max-age in seconds (8d)
  CAST(NULL AS BIGINT) AS now_ms,          -- ages from this time, Unix ms (NULL: now)
  CAST(NULL AS STRING) AS label,           -- --label TEXT (NULL: every run)
  CAST('model' AS STRING) AS group_by,     -- --group-by: model, label or config
  CAST(3 AS BIGINT) AS min_peers,          -- fixed in fleet: fewer hosts flag nothing
  CAST(3.5 AS DOUBLE) AS robust_z,         -- fixed in fleet: Iglewicz and Hoaglin
  CAST(1.4826 AS DOUBLE) AS mad_scale,     -- fixed in fleet: MAD to a normal sigma
  CAST(2 AS INT) AS schema_version;        -- the Parquet schema these views read

-- The tables must be of the schema version this file reads: anything else
-- fails here, naming both versions.
SELECT raise_error('deploy/sql/fleet.sql reads numaprobe Parquet schema version ' || CAST(p.schema_version AS STRING) || ', but numaprobe_runs holds version ' || coalesce(CAST(t.schema_version AS STRING), 'none (a version 1 export)') || ': export the runs again with this numaprobe (export --format parquet --all)')
FROM (SELECT DISTINCT schema_version FROM numaprobe_runs) t CROSS JOIN fleet_params p
WHERE coalesce(t.schema_version, -1) <> p.schema_version;
SELECT raise_error('deploy/sql/fleet.sql reads numaprobe Parquet schema version ' || CAST(p.schema_version AS STRING) || ', but numaprobe_figures holds version ' || coalesce(CAST(t.schema_version AS STRING), 'none (a version 1 export)') || ': export the runs again with this numaprobe (export --format parquet --all)')
FROM (SELECT DISTINCT schema_version FROM numaprobe_figures) t CROSS JOIN fleet_params p
WHERE coalesce(t.schema_version, -1) <> p.schema_version;
SELECT raise_error('deploy/sql/fleet.sql reads numaprobe Parquet schema version ' || CAST(p.schema_version AS STRING) || ', but numaprobe_settings holds version ' || coalesce(CAST(t.schema_version AS STRING), 'none (a version 1 export)') || ': export the runs again with this numaprobe (export --format parquet --all)')
FROM (SELECT DISTINCT schema_version FROM numaprobe_settings) t CROSS JOIN fleet_params p
WHERE coalesce(t.schema_version, -1) <> p.schema_version;

-- The parameters with the report's time resolved.
CREATE OR REPLACE TEMPORARY VIEW fleet_p AS
SELECT p.threshold_pct, p.max_age_s, coalesce(p.now_ms, c.now_ms) AS now_ms, p.label, p.group_by,
       p.min_peers, p.robust_z, p.mad_scale
FROM fleet_params p CROSS JOIN fleet_clock c;

-- --group-by must be one of fleet's three.
SELECT raise_error('fleet_params.group_by must be model, label or config, not ' || coalesce(group_by, 'NULL'))
FROM fleet_params WHERE coalesce(group_by, '') NOT IN ('model', 'label', 'config');

-- Every run: the machine it measured (its identity, else its host name),
-- its place in time (start time when known, then its id), whether it holds
-- the fleet's figures and whether it stands for its host's measured state
-- (it holds them, or it is a measurement that did not end well).
CREATE OR REPLACE TEMPORARY VIEW fleet_runs AS
SELECT r.run_uuid, r.run_id, r.machine_id, r.host, r.model, r.started_ms, r.status,
       r.status = 'complete' AS complete, r.exec, r.message, r.label, r.config_hash,
       CASE WHEN r.machine_id IS NOT NULL AND r.machine_id <> '' THEN 'id:' || r.machine_id
            ELSE 'host:' || r.host END AS machine_key,
       CASE WHEN r.started_ms IS NULL THEN 0 ELSE 1 END AS t_known,
       coalesce(r.started_ms, CAST(0 AS BIGINT)) AS t_ms,
       f.run_uuid IS NOT NULL AS has_figures,
       f.run_uuid IS NOT NULL OR (r.status <> 'complete' AND NOT r.exec) AS measures,
       CASE WHEN r.exec AND r.status = 'complete' THEN 'an exec run: none of the fleet' || chr(39) || 's figures'
            WHEN r.exec THEN 'an exec run (' || r.status || '): none of the fleet' || chr(39) || 's figures'
            ELSE 'none of the fleet' || chr(39) || 's figures' END AS why_passed_over
FROM numaprobe_runs r
LEFT JOIN (SELECT DISTINCT run_uuid FROM numaprobe_figures WHERE kind = 'fleet') f ON f.run_uuid = r.run_uuid;

-- Every machine: the host name of its latest run (what it is shown by),
-- its latest run and its latest measuring run.
CREATE OR REPLACE TEMPORARY VIEW fleet_machines AS
SELECT a.machine_key, a.host AS name, a.machine_id, a.run_uuid AS latest_uuid, m.run_uuid AS latest_measuring_uuid
FROM (SELECT machine_key, host, machine_id, run_uuid,
             row_number() OVER (PARTITION BY machine_key ORDER BY t_known DESC, t_ms DESC, run_id DESC) AS rn
      FROM fleet_runs) a
LEFT JOIN (SELECT machine_key, run_uuid,
                  row_number() OVER (PARTITION BY machine_key ORDER BY t_known DESC, t_ms DESC, run_id DESC) AS rn
           FROM fleet_runs WHERE measures) m ON m.machine_key = a.machine_key AND m.rn = 1
WHERE a.rn = 1;

-- The --unmeasured list (HOST<TAB>ERROR[<TAB>MACHINE_ID] a line, # comments),
-- read as fleet reads it; a bad line fails, naming its line.
CREATE OR REPLACE TEMPORARY VIEW fleet_unmeasured_text AS
SELECT line, t, length(t) - length(replace(t, chr(9), '')) + 1 AS fields
FROM (SELECT line, regexp_replace(text, chr(13) || '+$', '') AS t FROM numaprobe_unmeasured_lines) x
WHERE trim(replace(t, chr(9), ' ')) <> '' AND NOT trim(replace(t, chr(9), ' ')) LIKE '#%';
SELECT raise_error('--unmeasured line ' || CAST(line AS STRING) || ': expected HOST<TAB>ERROR[<TAB>MACHINE_ID] (' || CASE WHEN fields < 2 THEN 'no tab' WHEN fields > 3 THEN 'more than 3 fields' WHEN trim(split_part(t, chr(9), 1)) = '' THEN 'no host name before the tab' ELSE 'the machine id has a space' END || ')')
FROM fleet_unmeasured_text
WHERE fields < 2 OR fields > 3 OR trim(split_part(t, chr(9), 1)) = ''
   OR (fields = 3 AND trim(split_part(t, chr(9), 3)) LIKE '% %');
CREATE OR REPLACE TEMPORARY VIEW fleet_unmeasured_input AS
SELECT line, trim(split_part(t, chr(9), 1)) AS host,
       CASE WHEN trim(split_part(t, chr(9), 2)) = '' THEN 'not measured' ELSE trim(split_part(t, chr(9), 2)) END AS error,
       CASE WHEN fields = 3 AND trim(split_part(t, chr(9), 3)) <> '' THEN trim(split_part(t, chr(9), 3)) END AS machine_id
FROM fleet_unmeasured_text;

-- Which machine each entry names: by its identity when given, else by name
-- when one machine alone is shown by it (a name several machines share
-- names none: which one failed is not known). A machine named twice is
-- taken by its first entry; the other entries are listed on their own.
CREATE OR REPLACE TEMPORARY VIEW fleet_unmeasured_taken AS
SELECT machine_key, min(line) AS line FROM (
  SELECT u.line, m.machine_key FROM fleet_unmeasured_input u
  JOIN fleet_machines m ON u.machine_id IS NOT NULL AND m.machine_key = 'id:' || u.machine_id
  UNION ALL
  SELECT u.line, min(m.machine_key) AS machine_key FROM fleet_unmeasured_input u
  JOIN fleet_machines m ON u.machine_id IS NULL AND m.name = u.host
  GROUP BY u.line HAVING count(*) = 1
) c GROUP BY machine_key;

-- Runs that count (of the label, when one is given) in their slot: the
-- machine, and with group_by = 'label' the run's label too; machines not
-- measured this round are out.
CREATE OR REPLACE TEMPORARY VIEW fleet_slot_runs AS
SELECT r.*, CASE WHEN p.group_by = 'label' THEN coalesce(r.label, '') ELSE '' END AS sub
FROM fleet_runs r CROSS JOIN fleet_p p
LEFT JOIN fleet_unmeasured_taken t ON t.machine_key = r.machine_key
WHERE t.machine_key IS NULL AND (p.label IS NULL OR r.label = p.label);

-- Each slot's latest measuring run, and its latest complete run with figures.
CREATE OR REPLACE TEMPORARY VIEW fleet_slot_latest AS
SELECT s.*, c.run_uuid AS last_complete_uuid FROM (
  SELECT r.*, row_number() OVER (PARTITION BY machine_key, sub ORDER BY t_known DESC, t_ms DESC, run_id DESC) AS rn
  FROM fleet_slot_runs r WHERE measures
) s
LEFT JOIN (
  SELECT machine_key, sub, run_uuid,
         row_number() OVER (PARTITION BY machine_key, sub ORDER BY t_known DESC, t_ms DESC, run_id DESC) AS rn
  FROM fleet_slot_runs WHERE complete AND has_figures
) c ON c.machine_key = s.machine_key AND c.sub = s.sub AND c.rn = 1
WHERE s.rn = 1;

-- The machines shown in the report (compared, listed or not measured): a
-- host name two of them share is marked on each.
CREATE OR REPLACE TEMPORARY VIEW fleet_shown AS
SELECT m.machine_key, m.name FROM fleet_machines m
WHERE EXISTS (SELECT 1 FROM fleet_slot_runs s WHERE s.machine_key = m.machine_key)
   OR EXISTS (SELECT 1 FROM fleet_unmeasured_taken t WHERE t.machine_key = m.machine_key);
CREATE OR REPLACE TEMPORARY VIEW fleet_duplicate_names AS
SELECT name FROM fleet_shown GROUP BY name HAVING count(*) > 1;

-- The hosts compared: each slot whose latest measuring run is complete,
-- with its group (the model, and the label or configuration with
-- group_by), its age and freshness.
CREATE OR REPLACE TEMPORARY VIEW fleet_members AS
SELECT l.machine_key, l.sub, m.name AS host, l.machine_id, l.run_uuid, l.run_id, l.label, l.started_ms,
       l.model,
       CASE p.group_by WHEN 'label' THEN l.sub WHEN 'config' THEN l.config_hash ELSE '' END AS subgroup,
       CASE WHEN l.started_ms IS NULL THEN NULL
            ELSE CAST(p.now_ms - l.started_ms AS DOUBLE) / CAST(1000 AS DOUBLE) END AS age_s,
       d.name IS NOT NULL AS duplicate_hostname
FROM fleet_slot_latest l CROSS JOIN fleet_p p
JOIN fleet_machines m ON m.machine_key = l.machine_key
LEFT JOIN fleet_duplicate_names d ON d.name = m.name
WHERE l.complete;

CREATE OR REPLACE TEMPORARY VIEW fleet_groups AS
SELECT model, subgroup, count(*) AS members, count(*) < min(p.min_peers) AS peers_missing
FROM fleet_members CROSS JOIN fleet_p p GROUP BY model, subgroup;

-- Each host's figures (kind = 'fleet': what fleet compares, whatever the
-- metric id, so ids of another numaprobe version are judged too), ranked
-- in its group for the median.
CREATE OR REPLACE TEMPORARY VIEW fleet_values AS
SELECT m.model, m.subgroup, m.machine_key, m.sub, f.metric_id, f.value, f.unit, f.higher_is_better,
       row_number() OVER (PARTITION BY m.model, m.subgroup, f.metric_id ORDER BY f.value) AS rn,
       count(*) OVER (PARTITION BY m.model, m.subgroup, f.metric_id) AS n
FROM fleet_members m JOIN numaprobe_figures f ON f.run_uuid = m.run_uuid AND f.kind = 'fleet';

CREATE OR REPLACE TEMPORARY VIEW fleet_medians AS
SELECT model, subgroup, metric_id, n,
       lo + CASE WHEN n % 2 = 0 THEN CAST(0.5 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END * (hi - lo) AS median
FROM (SELECT model, subgroup, metric_id, max(n) AS n,
             max(CASE WHEN 2 * rn = n OR 2 * rn = n + 1 THEN value END) AS lo,
             max(CASE WHEN 2 * rn = n + 1 OR 2 * rn = n + 2 THEN value END) AS hi
      FROM fleet_values GROUP BY model, subgroup, metric_id) x;

CREATE OR REPLACE TEMPORARY VIEW fleet_peer_stats AS
SELECT model, subgroup, metric_id, median,
       lo + CASE WHEN n % 2 = 0 THEN CAST(0.5 AS DOUBLE) ELSE CAST(0.0 AS DOUBLE) END * (hi - lo) AS mad,
       n AS hosts
FROM (SELECT model, subgroup, metric_id, max(n) AS n, max(median) AS median,
             max(CASE WHEN 2 * rn = n OR 2 * rn = n + 1 THEN dev END) AS lo,
             max(CASE WHEN 2 * rn = n + 1 OR 2 * rn = n + 2 THEN dev END) AS hi
      FROM (SELECT v.model, v.subgroup, v.metric_id, v.n, d.median, abs(v.value - d.median) AS dev,
                   row_number() OVER (PARTITION BY v.model, v.subgroup, v.metric_id ORDER BY abs(v.value - d.median)) AS rn
            FROM fleet_values v JOIN fleet_medians d
              ON d.model = v.model AND d.subgroup = v.subgroup AND d.metric_id = v.metric_id) a
      GROUP BY model, subgroup, metric_id) x;

-- Each host's figure against its peers: deviation (value - median) / median
-- in % (none when the median is 0), flagged when it is more than
-- threshold_pct worse (bandwidth below, latency above) and its robust
-- z-score |value - median| / (mad_scale * MAD) exceeds robust_z (a MAD of
-- 0: the threshold alone decides), in a metric min_peers hosts measured.
CREATE OR REPLACE TEMPORARY VIEW fleet_judged AS
SELECT j.model, j.subgroup, j.machine_key, j.sub, j.metric_id, j.value, j.unit, j.higher_is_better,
       j.median, j.mad, j.hosts, j.deviation_pct,
       j.hosts >= j.min_peers AND j.deviation_pct IS NOT NULL
         AND CASE WHEN j.higher_is_better THEN -j.deviation_pct ELSE j.deviation_pct END > j.threshold_pct
         AND CASE WHEN j.mad = 0 THEN TRUE
                  ELSE abs(j.value - j.median) / (j.mad_scale * j.mad) > j.robust_z END AS flagged
FROM (SELECT v.model, v.subgroup, v.machine_key, v.sub, v.metric_id, v.value, v.unit, v.higher_is_better,
             s.median, s.mad, s.hosts, p.min_peers, p.threshold_pct, p.mad_scale, p.robust_z,
             CASE WHEN s.median <> 0 THEN (v.value - s.median) / s.median * CAST(100 AS DOUBLE) END AS deviation_pct
      FROM fleet_values v CROSS JOIN fleet_p p
      JOIN fleet_peer_stats s ON s.model = v.model AND s.subgroup = v.subgroup AND s.metric_id = v.metric_id) j;

CREATE OR REPLACE TEMPORARY VIEW fleet_outliers AS
SELECT m.host, m.machine_id, m.run_uuid, m.model, m.subgroup, j.metric_id, j.value, j.median, j.mad,
       j.deviation_pct, j.unit, j.higher_is_better, m.machine_key, m.sub
FROM fleet_judged j JOIN fleet_members m ON m.machine_key = j.machine_key AND m.sub = j.sub
WHERE j.flagged;

-- Settings: each value of each setting in a group of 2 hosts or more, a
-- host without the setting counted under '-'; a setting drifts when its
-- hosts hold 2 values or more, its majority the value most hold (none on a
-- tie: then every host of the group lists it).
CREATE OR REPLACE TEMPORARY VIEW fleet_member_settings AS
SELECT m.model, m.subgroup, m.machine_key, m.sub, s.setting, s.value
FROM fleet_members m JOIN numaprobe_settings s ON s.run_uuid = m.run_uuid;

CREATE OR REPLACE TEMPORARY VIEW fleet_setting_values AS
SELECT model, subgroup, setting, value, sum(n) AS hosts FROM (
  SELECT model, subgroup, setting, value, count(*) AS n
  FROM fleet_member_settings GROUP BY model, subgroup, setting, value
  UNION ALL
  SELECT w.model, w.subgroup, w.setting, '-' AS value, g.members - w.n AS n
  FROM (SELECT model, subgroup, setting, count(*) AS n FROM fleet_member_settings
        GROUP BY model, subgroup, setting) w
  JOIN fleet_groups g ON g.model = w.model AND g.subgroup = w.subgroup
  WHERE g.members > w.n
) x GROUP BY model, subgroup, setting, value;

CREATE OR REPLACE TEMPORARY VIEW fleet_drift_settings AS
SELECT v.model, v.subgroup, v.setting, v.value, v.hosts, t.majority
FROM fleet_setting_values v
JOIN (SELECT model, subgroup, setting,
             CASE WHEN sum(CASE WHEN hosts = top THEN 1 ELSE 0 END) = 1
                  THEN max(CASE WHEN hosts = top THEN value END) END AS majority
      FROM (SELECT model, subgroup, setting, value, hosts,
                   max(hosts) OVER (PARTITION BY model, subgroup, setting) AS top
            FROM fleet_setting_values) a
      GROUP BY model, subgroup, setting HAVING count(*) >= 2) t
  ON t.model = v.model AND t.subgroup = v.subgroup AND t.setting = v.setting
JOIN fleet_groups g ON g.model = v.model AND g.subgroup = v.subgroup
WHERE g.members >= 2;

CREATE OR REPLACE TEMPORARY VIEW fleet_drift AS
SELECT m.host, m.machine_id, m.run_uuid, m.model, m.subgroup, d.setting,
       coalesce(s.value, '-') AS value, d.majority, m.machine_key, m.sub
FROM fleet_members m
JOIN (SELECT DISTINCT model, subgroup, setting, majority FROM fleet_drift_settings) d
  ON d.model = m.model AND d.subgroup = m.subgroup
LEFT JOIN fleet_member_settings s
  ON s.machine_key = m.machine_key AND s.sub = m.sub AND s.model = m.model AND s.subgroup = m.subgroup
 AND s.setting = d.setting
WHERE d.majority IS NULL OR coalesce(s.value, '-') <> d.majority;

-- Every host compared, with its verdict: stale (older than max_age_s, or
-- of unknown time), future (started after now: a clock is wrong), without
-- peers (a group of fewer than min_peers hosts), outlier, drift, healthy
-- (fresh, with peers, not flagged).
CREATE OR REPLACE TEMPORARY VIEW fleet_hosts AS
SELECT m.host, m.machine_id, m.run_uuid, m.run_id, m.label, m.model, m.subgroup, m.started_ms, m.age_s,
       m.age_s IS NULL OR m.age_s > CAST(p.max_age_s AS DOUBLE) AS stale,
       coalesce(m.age_s < 0, FALSE) AS future,
       g.peers_missing,
       o.machine_key IS NOT NULL AS outlier,
       d.machine_key IS NOT NULL AS drift,
       NOT (m.age_s IS NULL OR m.age_s > CAST(p.max_age_s AS DOUBLE)) AND NOT coalesce(m.age_s < 0, FALSE)
         AND NOT g.peers_missing AND o.machine_key IS NULL AS healthy,
       m.duplicate_hostname, m.machine_key, m.sub
FROM fleet_members m CROSS JOIN fleet_p p
JOIN fleet_groups g ON g.model = m.model AND g.subgroup = m.subgroup
LEFT JOIN (SELECT DISTINCT machine_key, sub FROM fleet_judged WHERE flagged) o
  ON o.machine_key = m.machine_key AND o.sub = m.sub
LEFT JOIN (SELECT DISTINCT machine_key, sub FROM fleet_drift) d
  ON d.machine_key = m.machine_key AND d.sub = m.sub;

CREATE OR REPLACE TEMPORARY VIEW fleet_stale AS
SELECT host, machine_id, run_uuid, model, subgroup, started_ms, age_s FROM fleet_hosts WHERE stale;

CREATE OR REPLACE TEMPORARY VIEW fleet_future AS
SELECT host, machine_id, run_uuid, model, subgroup, started_ms, age_s FROM fleet_hosts WHERE future;

-- Hosts whose latest measuring run (of the label) is incomplete or failed:
-- not compared, whatever an older run says; with the run's reason and the
-- latest complete run with figures, not compared either.
CREATE OR REPLACE TEMPORARY VIEW fleet_incomplete AS
SELECT m.name AS host, l.machine_id, l.run_uuid, l.run_id, l.label, l.started_ms, l.status,
       coalesce(l.message, l.status) AS reason, l.last_complete_uuid, l.sub
FROM fleet_slot_latest l JOIN fleet_machines m ON m.machine_key = l.machine_key
WHERE NOT l.complete;

-- Hosts the orchestrator could not measure: with their error and their
-- latest run here (measuring, else any), which is not compared.
CREATE OR REPLACE TEMPORARY VIEW fleet_unmeasured AS
SELECT coalesce(m.name, u.host) AS host,
       CASE WHEN t.machine_key IS NULL THEN u.machine_id ELSE m.machine_id END AS machine_id,
       u.error, coalesce(m.latest_measuring_uuid, m.latest_uuid) AS last_run_uuid, u.line
FROM fleet_unmeasured_input u
LEFT JOIN fleet_unmeasured_taken t ON t.line = u.line
LEFT JOIN fleet_machines m ON m.machine_key = t.machine_key;

-- Hosts left out: no run with the label, or no run holding the fleet's
-- figures (with why, of its latest run).
CREATE OR REPLACE TEMPORARY VIEW fleet_skipped AS
SELECT m.name AS host, m.machine_id, 'no run labelled "' || p.label || '"' AS reason
FROM fleet_machines m CROSS JOIN fleet_p p
LEFT JOIN fleet_unmeasured_taken t ON t.machine_key = m.machine_key
WHERE t.machine_key IS NULL AND p.label IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM fleet_slot_runs s WHERE s.machine_key = m.machine_key)
UNION ALL
SELECT m.name AS host, m.machine_id,
       'no run holds the fleet' || chr(39) || 's figures (its latest: ' || r.why_passed_over || ')' AS reason
FROM (SELECT machine_key, sub, why_passed_over,
             max(CASE WHEN measures THEN 1 ELSE 0 END) OVER (PARTITION BY machine_key, sub) AS any_measures,
             row_number() OVER (PARTITION BY machine_key, sub ORDER BY t_known DESC, t_ms DESC, run_id DESC) AS rn
      FROM fleet_slot_runs) r
JOIN fleet_machines m ON m.machine_key = r.machine_key
WHERE r.rn = 1 AND r.any_measures = 0;

-- Runs newer than a compared host's run that hold none of the fleet's
-- figures (an exec run): not compared, with why.
CREATE OR REPLACE TEMPORARY VIEW fleet_passed_over AS
SELECT m.host, m.machine_id, m.run_uuid AS compared_uuid, r.run_uuid, r.run_id, r.status, r.why_passed_over AS why
FROM fleet_members m
JOIN fleet_slot_latest l ON l.machine_key = m.machine_key AND l.sub = m.sub
JOIN fleet_slot_runs r ON r.machine_key = m.machine_key AND r.sub = m.sub
WHERE r.t_known > l.t_known OR (r.t_known = l.t_known AND r.t_ms > l.t_ms)
   OR (r.t_known = l.t_known AND r.t_ms = l.t_ms AND r.run_id > l.run_id);

-- A machine's other host names (renamed: one machine, shown by its latest).
CREATE OR REPLACE TEMPORARY VIEW fleet_also_named AS
SELECT DISTINCT m.name AS host, m.machine_id, r.host AS also_named
FROM fleet_machines m JOIN fleet_runs r ON r.machine_key = m.machine_key
WHERE r.host <> m.name;

-- The counts of `fleet --json`: hosts (machines compared), healthy, stale,
-- future, no_peers (hosts in groups without peers), outliers, drifted.
CREATE OR REPLACE TEMPORARY VIEW fleet_summary AS
SELECT count(DISTINCT machine_key) AS hosts,
       sum(CASE WHEN healthy THEN 1 ELSE 0 END) AS healthy,
       sum(CASE WHEN stale THEN 1 ELSE 0 END) AS stale,
       sum(CASE WHEN future THEN 1 ELSE 0 END) AS future,
       sum(CASE WHEN peers_missing THEN 1 ELSE 0 END) AS no_peers,
       sum(CASE WHEN outlier THEN 1 ELSE 0 END) AS outliers,
       sum(CASE WHEN drift THEN 1 ELSE 0 END) AS drifted
FROM fleet_hosts;
