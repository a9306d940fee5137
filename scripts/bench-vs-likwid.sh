#!/usr/bin/env bash
# bench-vs-likwid.sh: `numaprobe bw` against likwid-bench, side by side in
# ONE run, on the same CPUs with the same array sizes, several rounds, and
# the median numaprobe/likwid ratio per kernel and thread count.
#
# Kernel pairs (likwid-bench test -> numaprobe kernel):
#   copy_mem_avx512   -> copy  --stores nt   (c = a, NT stores)
#   stream_mem_avx512 -> triad --stores nt   (a = b + s*c, NT stores)
#   load_avx512       -> read                (loads only)
#   store_mem_avx512  -> write --stores nt   (stores only, NT)
#
# Byte counting compared like with like: likwid-bench counts, per element,
# the bytes of each stream once (`likwid-bench -l TEST`: copy 16, stream 24,
# load 8, store 8 bytes per element), without write-allocate; numaprobe
# counts STREAM's way, the same 16/24/8/8. With non-temporal stores (the
# _mem variants and numaprobe --stores nt) there is no write-allocate
# traffic anyway, so both count the bytes that really move.
#
# Sizes: likwid's -w size is the TOTAL over all streams, in decimal units
# (kB = 1000 bytes); numaprobe's --size is PER ARRAY. The script gives
# numaprobe ARRAY_BYTES and likwid ARRAY_BYTES x streams, in kB. The
# default, 524288000 bytes (500 MiB) per array, is a whole number of kB, of
# 2 MiB pages per thread, and of likwid's 32-element loop stride, so both
# tools use exactly the same arrays; it is far beyond the LLC (STREAM's 4x
# rule) on most machines.
#
# Rates compared: likwid-bench prints one MByte/s over all its iterations
# (an average: total bytes / total time, MByte = 1e6 B). numaprobe's
# `median_gbs` (its headline figure after `best_gbs`) is the main ratio, never
# its best; `mean_gbs` (total bytes / total time over numaprobe's timed
# repetitions, likwid's definition) is printed beside it, since on a busy
# machine a median drops preempted repetitions that an average keeps. The CPUs are the
# ones likwid reports it ran on ("running on hwthread N"), passed to
# numaprobe with --cpus. Rounds alternate which tool goes first, so a drift
# in machine load hits both.
#
# Environment: ROUNDS (default 5), THREADS (default "1 2"), ARRAY_BYTES,
# NUMAPROBE (path of the binary; default target/release/numaprobe, built if
# missing), BUDGET (numaprobe seconds per result, default 2).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"1 2"}
ARRAY_BYTES=${ARRAY_BYTES:-524288000}
BUDGET=${BUDGET:-2}
cd "$(dirname "$0")/.."
NUMAPROBE=${NUMAPROBE:-${CARGO_TARGET_DIR:-target}/release/numaprobe}

if ! command -v likwid-bench >/dev/null 2>&1; then
    echo "likwid-bench not found: installing Debian's likwid" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq likwid >&2
fi
if [ ! -x "$NUMAPROBE" ]; then
    echo "building numaprobe (release)" >&2
    cargo build --release -p numaprobe >&2
fi
command -v python3 >/dev/null || { echo "python3 is needed to read the JSON" >&2; exit 1; }
if (( ARRAY_BYTES % 1000 != 0 )); then
    echo "ARRAY_BYTES must be a whole number of kB (1000 bytes) for likwid" >&2; exit 2
fi
ARRAY_KB=$(( ARRAY_BYTES / 1000 ))

# name likwid-test streams numaprobe-kernel
PAIRS="copy:copy_mem_avx512:2:copy triad:stream_mem_avx512:3:triad load:load_avx512:1:read store:store_mem_avx512:1:write"

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

run_likwid() { # test streams threads -> prints "GBs CPUS"
    local test=$1 streams=$2 threads=$3 log
    log=$(likwid-bench -t "$test" -w "S0:$(( ARRAY_KB * streams ))kB:$threads" 2>&1) || {
        echo "likwid-bench failed: $log" >&2; return 1; }
    local mbs cpus
    mbs=$(awk -F: '/^MByte\/s/ {gsub(/[ \t]/, "", $2); print $2}' <<<"$log")
    cpus=$(grep -o 'running on hwthread [0-9]*' <<<"$log" | awk '{print $4}' | sort -n | uniq | paste -sd, -)
    echo "$(python3 -c "print($mbs / 1000)") $cpus"
}

run_numaprobe() { # kernel cpus -> prints "median_GBs mean_GBs"
    local kernel=$1 cpus=$2 stores=nt
    [ "$kernel" = read ] && stores=auto
    "$NUMAPROBE" bw --json --quiet --isa avx512 --stores "$stores" --kernel "$kernel" \
        --cpus "$cpus" --size "$ARRAY_BYTES" --budget "$BUDGET" --min-reps 10 \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["median_gbs"], r["mean_gbs"])'
}

echo "numaprobe vs likwid-bench: $ROUNDS rounds, threads '$THREADS', $ARRAY_BYTES bytes per array" >&2
for round in $(seq 1 "$ROUNDS"); do
    for t in $THREADS; do
        for pair in $PAIRS; do
            IFS=: read -r name test streams kernel <<<"$pair"
            if (( round % 2 )); then
                read -r lk cpus < <(run_likwid "$test" "$streams" "$t")
                read -r np npmean < <(run_numaprobe "$kernel" "$cpus")
            else
                # numaprobe first: ask likwid which CPUs it will use from a tiny dry run
                cpus=$(likwid-bench -t "$test" -w "S0:$(( 32 * streams * t ))kB:$t" -i 1 2>&1 \
                    | grep -o 'running on hwthread [0-9]*' | awk '{print $4}' | sort -n | uniq | paste -sd, -)
                read -r np npmean < <(run_numaprobe "$kernel" "$cpus")
                read -r lk cpus < <(run_likwid "$test" "$streams" "$t")
            fi
            echo "$name $t $round $lk $np $npmean $cpus" >>"$OUT/raw"
            printf 'round %d  %-5s %d thread(s) CPUs %-5s likwid %7.2f GB/s  numaprobe %7.2f GB/s\n' \
                "$round" "$name" "$t" "$cpus" "$lk" "$np" >&2
        done
    done
done

python3 - "$OUT/raw" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, t, rnd, lk, np, npmean, cpus = line.split()
    rows.setdefault((name, int(t)), []).append((float(lk), float(np), float(npmean)))
order = ["copy", "triad", "load", "store"]
print("ratio = numaprobe median_gbs / likwid MByte/s; ratio(mean) uses numaprobe's mean_gbs "
      "(total bytes / total time, likwid's own definition), per round; medians over rounds")
print("kernel  threads  likwid GB/s  numaprobe median GB/s  numaprobe mean GB/s  ratio  ratio(mean)  ratio min  ratio max  rounds")
worst = None
for (name, t) in sorted(rows, key=lambda k: (order.index(k[0]), k[1])):
    v = rows[(name, t)]
    ratios = [n / l for l, n, _ in v]
    mratios = [m / l for l, _, m in v]
    med = statistics.median(ratios)
    worst = med if worst is None else min(worst, med)
    print(f"{name:<7} {t:>7}  {statistics.median(l for l, _, _ in v):>11.2f}  "
          f"{statistics.median(n for _, n, _ in v):>21.2f}  {statistics.median(m for _, _, m in v):>19.2f}  "
          f"{med:>5.3f}  {statistics.median(mratios):>11.3f}  {min(ratios):>9.3f}  "
          f"{max(ratios):>9.3f}  {len(v):>6}")
print(f"lowest median ratio: {worst:.3f} ({'>= 1.00' if worst >= 1.0 else 'BELOW 1.00'})")
PY
