#!/usr/bin/env bash
# Scale of the fleet's verdicts as SQL (docs/fleet.md, "Scale"): writes N
# varied hosts (scripts/fleet-synth.py --varied, from the synthetic
# fixture's run or --base EXPORT.json, 1,000 runs an export file), then
# times, each with its wall time, CPU time (user + system, children
# included) and peak RSS (GNU time): `import` of all of them into a fresh
# database, `fleet --json` (with the --unmeasured list), `export --format
# parquet --all`, deploy/sql with DuckDB (scripts/fleet-sql.py) and, with
# --spark, with Spark in local[2]. Prints the figures, the load average
# and each engine's counts beside fleet's. Never asserts: the DuckDB and
# Spark suites check the verdicts host by host (docs/testing.md).
#
#   scripts/bench-fleet-sql.sh [--spark] [--base EXPORT.json] [N]   (default 10000)
#
# Uses the release binary (NUMAPROBE_BIN, default target/release/numaprobe)
# and the Python of scripts/duckdb-setup.sh / spark-setup.sh
# (NUMAPROBE_SQL_PYTHON, default /opt/numaprobe-fleet-py/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
spark=0
base=()
while [ $# -gt 0 ]; do
    case "$1" in
    --spark) spark=1 ;;
    --base) base=(--base "$(realpath "$2")"); shift ;;
    *) break ;;
    esac
    shift
done
n=${1:-10000}
bin=$(realpath "${NUMAPROBE_BIN:-target/release/numaprobe}")
py=${NUMAPROBE_SQL_PYTHON:-/opt/numaprobe-fleet-py/bin/python3}
[ -x "$bin" ] || { echo "bench-fleet-sql: $bin is missing: cargo build --release -p numaprobe" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-fleet-sql: needs GNU time (/usr/bin/time; Debian: time)" >&2; exit 1; }
"$py" -c 'import duckdb' || { echo "bench-fleet-sql: $py has no DuckDB: scripts/duckdb-setup.sh" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet-sql.XXXXXX")
trap 'rm -rf "$work"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
# wall s, user s, system s, peak RSS KiB of a command, into $work/NAME.time.
measure() {
    local what=$1; shift
    /usr/bin/time -f "%e %U %S %M" -o "$work/$what.time" "$@" >"$work/$what.out" 2>"$work/$what.err" ||
        { echo "bench-fleet-sql: $what failed:" >&2; tail -n 5 "$work/$what.err" >&2; exit 1; }
}
row() {
    awk -v what="$2" -v extra="${3:-}" '{ printf "  %-30s %8.2f s  %8.2f s  %7.0f MiB  %s\n", what, $1, $2 + $3, $4 / 1024, extra }' "$work/$1.time"
}
load_before=$(load)
measure synth python3 scripts/fleet-synth.py "${base[@]}" --varied --compact --per-file 1000 --hosts "$n" \
    --out "$work/exports" --unmeasured-out "$work/unmeasured.tsv"
exports=$(du -sm "$work/exports" | cut -f1)
sync
measure import bash -c 'find "$1" -name "*.json" | sort | xargs -d "\n" -n 100 "$0" --db "$2" --quiet import' \
    "$bin" "$work/exports" "$work/fleet.db"
rm -rf "$work/exports"
measure fleet "$bin" --db "$work/fleet.db" --json fleet --unmeasured "$work/unmeasured.tsv"
measure export "$bin" --db "$work/fleet.db" --quiet export --format parquet --all -o "$work/fleet.parquet"
now=$(python3 -c 'import json, sys, datetime; n = json.load(open(sys.argv[1]))["now"]; print(int(datetime.datetime.fromisoformat(n.replace("Z", "+00:00")).timestamp() * 1000))' "$work/fleet.out")
measure duckdb "$py" scripts/fleet-sql.py --engine duckdb --unmeasured "$work/unmeasured.tsv" --now-ms "$now" "$work/fleet.parquet"
if [ "$spark" = 1 ]; then
    measure spark "$py" scripts/fleet-sql.py --engine spark --timeout 3000 --unmeasured "$work/unmeasured.tsv" --now-ms "$now" "$work/fleet.parquet"
fi
load_after=$(load)
size() { du -m "$1" | cut -f1; }
counts() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); s = d.get("summary", d); print(" ".join(f"{k}={s[k]}" for k in ("hosts", "healthy", "stale", "future", "no_peers")))' "$1"
}
echo "bench-fleet-sql: $n hosts ($exports MiB of exports, $(grep -c . "$work/unmeasured.tsv") lines of --unmeasured), $(nproc) CPUs"
echo "  load average before: $load_before, after: $load_after"
echo "  step                             wall        CPU      peak RSS"
row synth "write the exports (python)"
row import "import"
row fleet "fleet --json" "($(counts "$work/fleet.out"))"
row export "export --format parquet --all" "($(size "$work/fleet.parquet") + $(size "$work/fleet.runs.parquet") + $(size "$work/fleet.settings.parquet") MiB)"
row duckdb "deploy/sql, DuckDB" "($(counts "$work/duckdb.out"))"
[ "$spark" = 0 ] || row spark "deploy/sql, Spark local[2]" "($(counts "$work/spark.out"))"
