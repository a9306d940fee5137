#!/usr/bin/env bash
# Gathers what deploy/slurm/numaprobe.sbatch left in the shared folder:
# imports every export into one database (each file in its own
# transaction; a corrupt one is named and skipped, the others imported;
# importing again is harmless) and writes the fleet report beside it.
#
#   deploy/slurm/gather.sh SHARED [DB]     (DB default: SHARED/fleet.db)
#
# Writes SHARED/fleet.html, SHARED/fleet.md and SHARED/fleet.json. Exit
# status 1 when a file was skipped (the report is still written).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 SHARED [DB]" >&2; exit 2; }
shared=$1
db=${2:-$shared/fleet.db}
bin=${NUMAPROBE_BIN:-numaprobe}
shopt -s nullglob
files=("$shared"/exports/*.json)
[ ${#files[@]} -gt 0 ] || { echo "gather: no exports in $shared/exports" >&2; exit 1; }
rc=0
"$bin" --db "$db" import "${files[@]}" || rc=$?
"$bin" --db "$db" fleet -o "$shared/fleet.html"
"$bin" --db "$db" fleet --format md -o "$shared/fleet.md"
"$bin" --db "$db" --json fleet -o "$shared/fleet.json"
"$bin" --db "$db" fleet --quiet
exit "$rc"
