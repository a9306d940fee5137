#!/usr/bin/env python3
"""Runs the fleet's verdicts as SQL (deploy/sql) on the Parquet tables of
`numaprobe export --format parquet --all -o FLEET.parquet`, with DuckDB or
with Spark (local mode, started here and stopped before exit), and prints
every verdict view as one JSON document.

    scripts/fleet-sql.py --engine duckdb FLEET.parquet
    scripts/fleet-sql.py --engine spark --unmeasured failed.tsv --max-age 172800 FLEET.parquet

The load file (deploy/sql/duckdb.sql or spark.sql) is run with its file
paths set to FLEET.parquet, FLEET.runs.parquet, FLEET.settings.parquet
and --unmeasured; then deploy/sql/fleet.sql with its parameters set from
the flags (the values at the top of the file otherwise). Needs DuckDB's
or pyspark's Python package (scripts/duckdb-setup.sh,
scripts/spark-setup.sh): run it with the Python they install into,
/opt/numaprobe-fleet-py/bin/python3. Exit 1 when the SQL fails (a
Parquet file of another schema version, a bad --unmeasured line: the
engine's message on stderr), 2 for bad flags.
"""
import argparse
import json
import os
import re
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SQL = os.path.join(HERE, "..", "deploy", "sql")

# The verdict views and what the JSON calls them.
VIEWS = [
    ("summary", "fleet_summary"),
    ("hosts", "fleet_hosts"),
    ("outliers", "fleet_outliers"),
    ("peer_stats", "fleet_peer_stats"),
    ("drift", "fleet_drift"),
    ("drift_settings", "fleet_drift_settings"),
    ("stale", "fleet_stale"),
    ("future", "fleet_future"),
    ("incomplete", "fleet_incomplete"),
    ("unmeasured", "fleet_unmeasured"),
    ("skipped", "fleet_skipped"),
    ("passed_over", "fleet_passed_over"),
    ("also_named", "fleet_also_named"),
]


def statements(text):
    """The statements of a deploy/sql file: each ends with ';' at the end
    of a line (a comment without quotes may follow it)."""
    out, cur = [], []
    for line in text.splitlines():
        cur.append(line)
        if re.search(r";\s*(--[^']*)?$", line):
            out.append("\n".join(cur).strip())
            cur = []
    rest = "\n".join(cur).strip()
    if re.sub(r"--[^\n]*", "", rest).strip():
        sys.exit(f"fleet-sql: a statement without its ';': {rest[:200]}")
    return out


def stages(text):
    """The views fleet.sql names on its `-- Stages:` line."""
    m = re.search(r"^-- Stages: (.*)$", text, re.M)
    return set(m.group(1).split()) if m else set()


def stage_of(stmt, names):
    """(name, SELECT) of a statement that creates one of the stages named,
    else None."""
    m = re.match(r"(?:\s*--[^\n]*\n)*\s*CREATE OR REPLACE TEMPORARY VIEW (\w+) AS\b", stmt)
    if not m or m.group(1) not in names:
        return None
    return m.group(1), stmt[m.end():].rstrip().rstrip(";")


def is_query(stmt):
    body = re.sub(r"--[^\n]*", "", stmt).strip()
    return body[:6].upper() == "SELECT"


def set_param(text, name, sql_type, value):
    """Sets the value of parameter `name` in fleet.sql's fleet_params."""
    pat = re.compile(r"CAST\((.*?) AS %s\) AS %s\b" % (sql_type, name))
    if not pat.search(text):
        sys.exit(f"fleet-sql: deploy/sql/fleet.sql has no parameter {name}")
    return pat.sub(lambda m: f"CAST({value} AS {sql_type}) AS {name}", text, count=1)


def quoted(what, s):
    if "'" in s or "\\" in s or ";" in s:
        print(f"fleet-sql: {what} {s!r}: quotes, backslashes and ';' are not taken", file=sys.stderr)
        sys.exit(2)
    return f"'{s}'"


class Timeout(Exception):
    pass


def stop_children():
    """Ends every process this one started (Spark's JVM and its launcher),
    whatever state they are in: TERM, then KILL after 5 s."""
    me = os.getpid()
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    stat = f.read()
                parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    mine, grew = set(), True
    while grew:
        grew = False
        for pid, pp in parent.items():
            if pid not in mine and (pp == me or pp in mine):
                mine.add(pid)
                grew = True
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in mine:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            break
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") and not zombie(p) for p in alive):
            time.sleep(0.1)
    # Reaped, so that their time and memory count as this process's
    # children's (GNU time, getrusage).
    for pid, pp in parent.items():
        if pp == me:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2] == "Z"
    except OSError:
        return True


def engine_message(e):
    """What the engine said, in a line or a few: DuckDB's message, or the
    Java exception's inside pyspark's wrapper (without its stack)."""
    java = getattr(e, "java_exception", None)
    text = str(java.getMessage()) if java is not None else str(e)
    lines = [x for x in text.strip().splitlines() if x.strip() and not x.startswith("\tat ")]
    lines = [x for x in lines if not x.startswith("An error occurred while calling")]
    return " ".join(lines[:4]) if lines else type(e).__name__


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parquet", help="the figures table (its runs and settings tables beside it)")
    ap.add_argument("--engine", choices=["duckdb", "spark"], required=True)
    ap.add_argument("--unmeasured", help="fleet --unmeasured's list")
    ap.add_argument("--threshold", type=float, help="fleet --threshold (percent)")
    ap.add_argument("--max-age", type=int, metavar="SECONDS", help="fleet --max-age in seconds")
    ap.add_argument("--now-ms", type=int, help="the time ages are measured from (Unix ms; default now)")
    ap.add_argument("--label", help="fleet --label")
    ap.add_argument("--group-by", choices=["model", "label", "config"])
    ap.add_argument("--timeout", type=float, default=1800.0, help="give up after this many seconds (default 1800)")
    ap.add_argument("-o", "--output", help="write the JSON here instead of stdout")
    a = ap.parse_args()

    base = a.parquet[: -len(".parquet")] if a.parquet.endswith(".parquet") else a.parquet
    files = {
        "figures": a.parquet,
        "runs": base + ".runs.parquet",
        "settings": base + ".settings.parquet",
    }
    for f in files.values():
        if not os.path.isfile(f):
            print(f"fleet-sql: {f}: no such file (export --format parquet --all -o {a.parquet} writes it)", file=sys.stderr)
            sys.exit(2)
    unmeasured = a.unmeasured
    if unmeasured is not None and not os.path.isfile(unmeasured):
        print(f"fleet-sql: --unmeasured {unmeasured}: no such file", file=sys.stderr)
        sys.exit(2)

    with open(os.path.join(SQL, f"{a.engine}.sql")) as f:
        load = f.read()
    for name, path in files.items():
        p = quoted(name, os.path.abspath(path))
        if a.engine == "duckdb":
            load = re.sub(r"(SET VARIABLE numaprobe_%s = )'[^']*';" % name, lambda m: m.group(1) + p + ";", load)
        else:
            load = re.sub(r"(SET numaprobe\.%s = ).*;" % name, lambda m: m.group(1) + p[1:-1] + ";", load)
    work = None
    if unmeasured is None:
        if a.engine == "duckdb":
            unmeasured = "/dev/null"
        else:
            import tempfile
            work = tempfile.TemporaryDirectory(prefix="fleet-sql.")
            unmeasured = os.path.join(work.name, "none.tsv")
            open(unmeasured, "w").close()
    u = quoted("--unmeasured", os.path.abspath(unmeasured))
    if a.engine == "duckdb":
        load = re.sub(r"(SET VARIABLE numaprobe_unmeasured = )'[^']*';", lambda m: m.group(1) + u + ";", load)
    else:
        load = re.sub(r"(SET numaprobe\.unmeasured = ).*;", lambda m: m.group(1) + u[1:-1] + ";", load)

    with open(os.path.join(SQL, "fleet.sql")) as f:
        fleet = f.read()
    if a.threshold is not None:
        if not 0 < a.threshold < 100:
            print("fleet-sql: --threshold must be above 0 and below 100", file=sys.stderr)
            sys.exit(2)
        fleet = set_param(fleet, "threshold_pct", "DOUBLE", repr(a.threshold))
    if a.max_age is not None:
        fleet = set_param(fleet, "max_age_s", "BIGINT", str(a.max_age))
    if a.now_ms is not None:
        fleet = set_param(fleet, "now_ms", "BIGINT", str(a.now_ms))
    if a.label is not None:
        fleet = set_param(fleet, "label", "STRING", quoted("--label", a.label))
    if a.group_by is not None:
        fleet = set_param(fleet, "group_by", "STRING", f"'{a.group_by}'")

    def on_alarm(_sig, _frame):
        raise Timeout()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, a.timeout)
    t0 = time.monotonic()
    engine = None
    current = [""]
    try:
        if a.engine == "duckdb":
            import duckdb

            con = duckdb.connect()
            version = duckdb.__version__

            def run(stmt):
                cur = con.execute(stmt)
                return cur.fetchall() if is_query(stmt) else None

            def keep(name, select):
                con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {select}")

            def rows(view):
                cur = con.execute(f"SELECT * FROM {view}")
                cols = [d[0] for d in cur.description]
                return [dict(zip(cols, r)) for r in cur.fetchall()]

            engine = con
        else:
            from pyspark.sql import SparkSession

            spark = (
                SparkSession.builder.master("local[2]")
                .appName("numaprobe-fleet-sql")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.driver.memory", os.environ.get("NUMAPROBE_SPARK_MEMORY", "3g"))
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            version = spark.version
            engine = spark

            def run(stmt):
                df = spark.sql(stmt)
                return df.collect() if is_query(stmt) else None

            def keep(name, select):
                # Checkpointed: its rows kept, its plan cut, so that the
                # plans of the stages after it stay small.
                spark.sql(select).localCheckpoint(eager=True).createOrReplaceTempView(name)

            def rows(view):
                return [r.asDict() for r in spark.sql(f"SELECT * FROM {view}").collect()]

        names = stages(fleet)
        body = statements(fleet)
        missing = names - {st[0] for st in map(lambda x: stage_of(x, names), body) if st}
        if missing:
            sys.exit(f"fleet-sql: deploy/sql/fleet.sql names stages it does not create: {sorted(missing)}")
        for stmt in statements(load) + body:
            current[0] = stmt
            t = time.monotonic()
            st = stage_of(stmt, names)
            if st:
                # A stage kept as a table: computed once, and the stages
                # after it start from its rows, not from its query.
                keep(*st)
            else:
                run(stmt)
            if os.environ.get("NUMAPROBE_SQL_DEBUG"):
                print(f"fleet-sql: {time.monotonic() - t:7.2f} s  {stmt.splitlines()[-1][:70]}", file=sys.stderr)
        t_load = time.monotonic() - t0
        out = {"engine": a.engine, "version": version}
        for key, view in VIEWS:
            out[key] = rows(view)
        out["summary"] = out["summary"][0]
        out["seconds"] = {"setup": round(t_load, 3), "total": round(time.monotonic() - t0, 3)}
    except Timeout:
        print(f"fleet-sql: {a.engine} took more than {a.timeout:.0f} s: stopped", file=sys.stderr)
        sys.exit(1)
    except Exception as e:  # the engine's error: a schema version, a bad line
        print(f"fleet-sql: {a.engine}: {engine_message(e)}", file=sys.stderr)
        if os.environ.get("NUMAPROBE_SQL_DEBUG"):
            print(f"fleet-sql: in:\n{current[0]}", file=sys.stderr)
        sys.exit(1)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if a.engine == "spark":
            if engine is not None:
                try:
                    engine.stop()
                except Exception:  # a JVM already gone: nothing to stop
                    pass
            stop_children()
        if work is not None:
            work.cleanup()
    text = json.dumps(out, allow_nan=False, default=str)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
