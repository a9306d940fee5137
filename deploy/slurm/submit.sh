#!/usr/bin/env bash
# Submits a numaprobe round on a Slurm cluster: the measuring job(s), then
# the gather job (deploy/slurm/gather.sh) that runs after them whatever
# their end (--dependency=afterany) and writes the fleet report into the
# shared folder. Works from any folder: it finds its scripts beside itself.
#
#   deploy/slurm/submit.sh [--wait] [SBATCH_OPTIONS...]
#       one job over the nodes asked for (e.g. --nodes=16 -p batch)
#   deploy/slurm/submit.sh [--wait] --per-node NODELIST [SBATCH_OPTIONS...]
#       one single-node job per node of NODELIST (node[01-16]), each
#       measuring its node when that node comes free
#
# Job arrays (--array) are refused (exit 2): every node is measured once per
# round, by one job over the nodes or by one job per node.
# --wait: wait for the gather job and exit with its status (0: every node
# measured with a complete run; 1: a node failed, timed out or never ran,
# named on stderr and in the report). Without it, prints the job ids.
# Environment: NUMAPROBE_SHARED (required), NUMAPROBE_BIN, NUMAPROBE_LABEL
# (default slurm-JOBID of the first job), NUMAPROBE_BUDGET, NUMAPROBE_ARGS,
# NUMAPROBE_MAX_AGE (the report's --max-age, default 8d).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${NUMAPROBE_SHARED:?set NUMAPROBE_SHARED to a folder every node can write}"
wait=() per_node=
while [ $# -gt 0 ]; do
    case "$1" in
        --wait) wait=(--wait); shift ;;
        --per-node) [ $# -ge 2 ] || { echo "submit: --per-node needs a node list" >&2; exit 2; }
                    per_node=$2; shift 2 ;;
        --per-node=*) per_node=${1#--per-node=}; shift ;;
        *) break ;;
    esac
done
# Job arrays are refused: each array task is its own job (its own job id,
# status folder and default label) that Slurm may start on a node another
# task is measuring, and a round already covers every node once (one job
# over N nodes, or --per-node).
for a in "$@"; do
    case "$a" in
        --array|--array=*|-a|-a?*)
            echo "submit: job arrays are not supported ($a): a round measures every node once;" \
                "ask for the nodes with --nodes=N (one job) or --per-node NODELIST (one job per node)" >&2
            exit 2 ;;
    esac
done
# The shared folder holds this round's files only (exports/, status/,
# logs/, fleet.db, the report): never the binary's own folder.
if [ -n "${NUMAPROBE_BIN:-}" ] && [ -e "$NUMAPROBE_BIN" ] &&
    [ "$(realpath -m "$(dirname "$NUMAPROBE_BIN")")" = "$(realpath -m "$NUMAPROBE_SHARED")" ]; then
    echo "submit: NUMAPROBE_SHARED ($NUMAPROBE_SHARED) is the folder of NUMAPROBE_BIN: give the round a folder of its own" >&2
    exit 2
fi
mkdir -p "$NUMAPROBE_SHARED/logs"
log="$NUMAPROBE_SHARED/logs/%x-%j.out"
jobs=()
if [ -n "$per_node" ]; then
    label=${NUMAPROBE_LABEL:-slurm-$(date -u +%Y%m%dT%H%M%SZ)}
    mkdir -p "$NUMAPROBE_SHARED/status"
    for node in $(scontrol show hostnames "$per_node"); do
        id=$(NUMAPROBE_LABEL=$label sbatch --parsable --output="$log" --nodes=1 \
            --nodelist="$node" "$@" "$here/numaprobe.sbatch" | cut -d';' -f1)
        # The node is known before the job starts: a job that never runs
        # is still named by its node.
        echo "$node" >"$NUMAPROBE_SHARED/status/$id.nodes"
        jobs+=("$id")
    done
else
    jobs+=("$(sbatch --parsable --output="$log" "$@" "$here/numaprobe.sbatch" | cut -d';' -f1)")
fi
dep=$(IFS=:; echo "afterany:${jobs[*]}")
echo "submit: measuring job(s) ${jobs[*]}" >&2
gather=$(sbatch --parsable "${wait[@]}" --job-name=numaprobe-gather --output="$log" \
    --dependency="$dep" --kill-on-invalid-dep=yes --ntasks=1 --time=00:30:00 \
    "$here/gather.sh" "$NUMAPROBE_SHARED" "${jobs[@]}") && rc=0 || rc=$?
echo "submit: gather job ${gather%%;*}: report in $NUMAPROBE_SHARED/fleet.{html,md,json,txt}" >&2
exit "$rc"
