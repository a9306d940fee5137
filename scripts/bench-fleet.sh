#!/usr/bin/env bash
# Scale of the fleet path: writes exports of N synthetic hosts (default
# 1000; each a copy of a default run's 97 results, scripts/fleet-synth.py,
# one host at 85% bandwidth and one with THP drifted), then times `import`
# of all of them into a fresh database and `fleet` over it, and prints the
# figures (wall seconds, peak memory). Goal: import + fleet under 10 s for
# 1,000 hosts. Uses the release binary (built if missing); never asserts.
#
#   scripts/bench-fleet.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
bin=${NUMAPROBE_BIN:-target/release/numaprobe}
if [ ! -x "$bin" ]; then
    echo "bench-fleet: building $bin" >&2
    cargo build --release -p numaprobe >&2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 scripts/fleet-synth.py --hosts "$n" --out "$work/exports" \
    --slow host-0007=0.85 --drift host-0042=thp=always
bytes=$(du -sb "$work/exports" | cut -f1)
# /usr/bin/time gives peak memory when present; bash's time otherwise.
measure() {
    local what=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%M" -o "$work/$what.mem" "$@" >"$work/$what.out" 2>"$work/$what.err"
    else
        "$@" >"$work/$what.out" 2>"$work/$what.err"
        echo "?" >"$work/$what.mem"
    fi
    t1=$(date +%s.%N)
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1" >"$work/$what.s"
}
measure import "$bin" --db "$work/fleet.db" --quiet import "$work"/exports/*.json
measure fleet "$bin" --db "$work/fleet.db" --json fleet
measure fleet-html "$bin" --db "$work/fleet.db" fleet -o "$work/fleet.html" --quiet
imp=$(cat "$work/import.s"); fl=$(cat "$work/fleet.s"); html=$(cat "$work/fleet-html.s")
outliers=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])); print(','.join(h['host'] for g in f['groups'] for h in g['hosts'] if h['outlier']) or '-')" "$work/fleet.out")
drifted=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])); print(','.join(h['host']+':'+'/'.join(h['drift']) for g in f['groups'] for h in g['hosts'] if h['drift']) or '-')" "$work/fleet.out")
runs=$("$bin" --db "$work/fleet.db" --json list | python3 -c "import json,sys; print(len(json.load(sys.stdin)))")
printf 'bench-fleet: %d hosts, %.1f MiB of exports (%d results each), %s runs imported\n' \
    "$n" "$(python3 -c "print($bytes / 1048576)")" 97 "$runs"
printf '  import      %6.2f s  peak RSS %s KiB\n' "$imp" "$(cat "$work/import.mem")"
printf '  fleet --json%6.2f s  peak RSS %s KiB\n' "$fl" "$(cat "$work/fleet.mem")"
printf '  fleet html  %6.2f s  peak RSS %s KiB (%d KiB report)\n' "$html" "$(cat "$work/fleet-html.mem")" "$(( $(stat -c %s "$work/fleet.html") / 1024 ))"
printf '  import + fleet: %.2f s (goal < 10 s)\n' "$(python3 -c "print($imp + $fl)")"
printf '  outliers: %s; drift: %s\n' "$outliers" "$drifted"
