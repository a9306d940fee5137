#!/usr/bin/env bash
# Scale of the fleet path on real-shaped hosts: makes a real export (this
# machine's `numaprobe run --quick`, every result and the full
# configuration and topology; or --base FILE), writes N hosts from it
# (scripts/fleet-synth.py: default 1000, one host at 85% bandwidth, one with
# THP drifted), then times `import` of all of them into a fresh database and
# the fleet analysis over it (`fleet --json`, and the gather steps' one pass
# writing HTML, Markdown, JSON and text) and `export --format parquet` of
# every run, with each step's peak memory and
# the machine's load average. Never asserts: it prints figures.
#
#   scripts/bench-fleet.sh [--base EXPORT.json] [N]
#
# Goal (issue 27): import + fleet of 1,000 real-shaped hosts under 5 s,
# 10,000 under 60 s, with peak memory bounded. Uses the release binary
# (NUMAPROBE_BIN, default target/release/numaprobe; built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
base=
base_given=
if [ "${1:-}" = "--base" ]; then base=$(realpath "$2"); base_given=$base; shift 2; fi
n=${1:-1000}
bin=${NUMAPROBE_BIN:-target/release/numaprobe}
if [ ! -x "$bin" ]; then
    echo "bench-fleet: building $bin" >&2
    cargo build --release -p numaprobe >&2
fi
[ -x /usr/bin/time ] || { echo "bench-fleet: needs GNU time (/usr/bin/time) for peak memory" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-fleet.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -z "$base" ]; then
    echo "bench-fleet: measuring this machine once (numaprobe run --quick) for a real export" >&2
    "$bin" --db "$work/base.db" --lock "$work/base.lock" --quiet run --quick --label fleet \
        --report-dir "$work/reports" >/dev/null
    base="$work/base.json"
    "$bin" --db "$work/base.db" --quiet export latest -o "$base"
fi
python3 scripts/fleet-synth.py --base "$base" --hosts "$n" --out "$work/exports" \
    --slow host-0007=0.85 --drift host-0042=thp_enabled=always
bytes=$(du -sb "$work/exports" | cut -f1)
# The exports just written are flushed first: the import's commits
# (fsync) would otherwise wait for the file system to write them, which
# times the disk, not numaprobe.
sync
results=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['runs'][0]['results']))" "$base")
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Wall seconds and peak RSS (KiB) of a command.
measure() {
    local what=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%M %U %S" -o "$work/$what.mem" "$@" >"$work/$what.out" 2>"$work/$what.err"
    t1=$(date +%s.%N)
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1" >"$work/$what.s"
}
load_before=$(load)
# The files in a stable order: the shell's glob would exceed ARG_MAX at
# 10,000 hosts on some systems, so import takes them in batches of 1,000.
find "$work/exports" -name '*.json' | sort >"$work/files"
measure import bash -c 'xargs -d "\n" -n 1000 "$0" --db "$1" --quiet import <"$2"' "$bin" "$work/fleet.db" "$work/files"
measure fleet "$bin" --db "$work/fleet.db" --json fleet
measure gather "$bin" --db "$work/fleet.db" --quiet fleet -o "$work/fleet.html" -o "$work/fleet.md" \
    -o "$work/fleet.json" -o "$work/fleet.txt"
# Every run of the round as Parquet (scripts/fleet-synth.py labels them
# `fleet`).
measure parquet "$bin" --db "$work/fleet.db" --quiet export --format parquet label:fleet \
    -o "$work/fleet.parquet"
load_after=$(load)
s() { cat "$work/$1.s"; }
mib() { python3 -c "import sys; print(f'{int(sys.argv[1]) / 1024:.0f}')" "$(cut -d' ' -f1 "$work/$1.mem")"; }
# CPU seconds (user + system): what the step costs whatever the load.
cpu() { python3 -c "import sys; print(f'{float(sys.argv[1]) + float(sys.argv[2]):.2f}')" $(cut -d' ' -f2,3 "$work/$1.mem"); }
outliers=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])); print(','.join(h['host'] for g in f['groups'] for h in g['hosts'] if h['outlier']) or '-')" "$work/fleet.out")
drifted=$(python3 -c "import json,sys; f=json.load(open(sys.argv[1])); print(','.join(h['host']+':'+'/'.join(h['drift']) for g in f['groups'] for h in g['hosts'] if h['drift']) or '-')" "$work/fleet.out")
hosts=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['hosts'])" "$work/fleet.out")
printf 'bench-fleet: %d hosts from %s (%d results, %.0f KiB each; %.1f MiB in all), %s in the fleet\n' \
    "$n" "${base_given:-a real export of this machine}" "$results" "$(python3 -c "print($bytes / $n / 1024)")" "$(python3 -c "print($bytes / 1048576)")" "$hosts"
printf '  load average before: %s, after: %s (2 CPUs)\n' "$load_before" "$load_after"
printf '  step                 wall      CPU (user+sys)  peak RSS\n'
printf '  import               %7.2f s  %7s s       %5s MiB\n' "$(s import)" "$(cpu import)" "$(mib import)"
printf '  fleet --json         %7.2f s  %7s s       %5s MiB\n' "$(s fleet)" "$(cpu fleet)" "$(mib fleet)"
printf '  fleet, 4 formats     %7.2f s  %7s s       %5s MiB (%d KiB of HTML)\n' "$(s gather)" "$(cpu gather)" "$(mib gather)" \
    "$(( $(stat -c %s "$work/fleet.html") / 1024 ))"
printf '  export --format parquet %5.2f s  %7s s       %5s MiB (%d KiB + %d KiB + %d KiB)\n' "$(s parquet)" "$(cpu parquet)" "$(mib parquet)" \
    "$(( $(stat -c %s "$work/fleet.parquet") / 1024 ))" "$(( $(stat -c %s "$work/fleet.runs.parquet") / 1024 ))" \
    "$(( $(stat -c %s "$work/fleet.settings.parquet") / 1024 ))"
printf '  import + fleet --json: %.2f s wall, %.2f s CPU\n' "$(python3 -c "print($(s import) + $(s fleet))")" \
    "$(python3 -c "print($(cpu import) + $(cpu fleet))")"
printf '  outliers: %s; drift: %s\n' "$outliers" "$drifted"
