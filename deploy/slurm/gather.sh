#!/usr/bin/env bash
# Gathers a numaprobe round from the shared folder (deploy/slurm/submit.sh
# submits it as a job that runs after the measuring jobs; it also runs by
# hand): imports the round's exports into one database (each file in its
# own transaction; importing again is harmless) and writes the fleet report
# beside it in one pass, listing the nodes that were not measured with why.
#
#   deploy/slurm/gather.sh SHARED [JOBID...]
#
# With JOBIDs, only those jobs' exports are imported and each job's nodes
# are checked: a node whose run failed, ended incomplete, or that never
# reported (time limit, node failure, cancelled job) is named on stderr and
# in the report. Without, every export in SHARED/exports is imported.
# Writes SHARED/fleet.{html,md,json,txt} (the database, SHARED/fleet.db,
# keeps earlier rounds: the report covers every node, each with its run's
# age; NUMAPROBE_MAX_AGE, default 8d, makes older runs stale).
# Exit status: 0 when every node of the round has a complete run; 1 when a
# node did not (or an export could not be imported); the report is written
# either way. 2: bad arguments.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 SHARED [JOBID...]" >&2; exit 2; }
shared=$1; shift
bin=${NUMAPROBE_BIN:-numaprobe}
db="$shared/fleet.db"
shopt -s nullglob
rc=0
files=()
unmeasured="$shared/unmeasured.tsv"
echo "# Nodes this round could not measure (numaprobe fleet --unmeasured)." >"$unmeasured"
failed() { # NODE EXPORT-EXISTS MESSAGE
    echo "gather: $1: $3" >&2
    rc=1
    # A node whose run was saved (incomplete) is in the report with its run.
    [ "$2" = 1 ] || printf '%s\t%s\n' "$1" "$3" >>"$unmeasured"
}
if [ $# -eq 0 ]; then
    files=("$shared"/exports/*.json)
fi
for job in "$@"; do
    case "$job" in *[!0-9_]*|'') echo "gather: $job is not a job id" >&2; exit 2 ;; esac
    files+=("$shared"/exports/*-"$job".json)
    if [ ! -f "$shared/status/$job.nodes" ]; then
        failed "job-$job" 0 "job $job never started (cancelled, or its nodes never came free)"
        continue
    fi
    while read -r node; do
        [ -n "$node" ] || continue
        export_there=0
        [ -f "$shared/exports/$node-$job.json" ] && export_there=1
        st="$shared/status/$job/$node"
        if [ ! -f "$st" ]; then
            failed "$node" "$export_there" "job $job: no status from the node (time limit, node failure or cancelled)"
            continue
        fi
        IFS=$'\t' read -r code msg <"$st" || true
        case "$code" in
            0) ;;
            *) failed "$node" "$export_there" "job $job: run exit status $code${msg:+: $msg}" ;;
        esac
    done <"$shared/status/$job.nodes"
done
if [ ${#files[@]} -gt 0 ]; then
    "$bin" --db "$db" --quiet import "${files[@]}" || rc=1
elif [ $# -eq 0 ]; then
    echo "gather: no exports in $shared/exports" >&2
    exit 1
fi
"$bin" --db "$db" --quiet fleet --max-age "${NUMAPROBE_MAX_AGE:-8d}" --unmeasured "$unmeasured" \
    -o "$shared/fleet.html" -o "$shared/fleet.md" -o "$shared/fleet.json" -o "$shared/fleet.txt"
sed -n '1,4p' "$shared/fleet.txt"
echo "gather: report in $shared/fleet.{html,md,json,txt}" >&2
exit "$rc"
