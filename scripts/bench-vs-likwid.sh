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
# Pages, like for like: likwid-bench allocates its arrays with plain
# malloc, so it gets 4 KiB pages unless THP is "always" (it is "madvise"
# on the development VM). numaprobe's default is THP, so every numaprobe
# figure is taken twice: with its default pages and with --pages 4k, and
# both ratios are printed; the 4k one is the like-for-like comparison.
#
# Reference STREAM: scripts/ref/stream.c (C, OpenMP, STREAM's method:
# best of the repetitions, 24 B per triad element), built here with
# Debian's gcc (-O3 -march=native -fopenmp), run for triad with the same
# thread counts, pinned (OMP_PROC_BIND=close, OMP_PLACES=cores), with 4 KiB
# pages and with THP. Goal: numaprobe's median >= the best of the other
# tools at the same page size.
#
# Loop shape (issue 14): the first x86-64 loops fell 4-7% short of likwid at
# 4 KiB pages on the development VM (1-thread triad and copy, 2-thread
# store). Staggered array starts (4K aliasing) and software prefetch across
# page boundaries changed nothing or cost; the cause was the loops' code
# generation (three-part lea per NT store), fixed in crates/kernels; the A/B
# figures are in docs/bw.md ("Loop shape").
#
# Environment: ROUNDS (default 5), THREADS (default "1 2"), KERNELS
# (default "copy triad load store"), ARRAY_BYTES, NUMAPROBE (path of the
# binary; default target/release/numaprobe, built if missing), BUDGET
# (numaprobe seconds per result, default 1: at least 10 repetitions, ~15
# for triad at 500 MiB), ISA (avx512 or avx2; default: avx512 when the CPU
# has it, else avx2 with likwid's _avx tests), NUMAPROBE_BASE (another
# build of numaprobe, run beside NUMAPROBE in the same rounds at both page
# sizes; the summary adds its ratios and numaprobe/base, to show that a
# change moves nothing; about 40% more time). With the defaults a round
# takes 98-108 s on the 2-CPU development VM (5 rounds: 515 s, measured);
# each round prints its time.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-"1 2"}
KERNELS=${KERNELS:-"copy triad load store"}
ARRAY_BYTES=${ARRAY_BYTES:-524288000}
BUDGET=${BUDGET:-1}
cd "$(dirname "$0")/.."
NUMAPROBE=${NUMAPROBE:-${CARGO_TARGET_DIR:-target}/release/numaprobe}
if [ -z "${ISA:-}" ]; then
    if grep -qw avx512f /proc/cpuinfo; then ISA=avx512; else ISA=avx2; fi
fi
case "$ISA" in
    avx512) LK=avx512 ;;
    avx2) LK=avx ;;
    *) echo "ISA must be avx512 or avx2, not '$ISA'" >&2; exit 2 ;;
esac

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
command -v gcc >/dev/null || { echo "gcc is needed for the reference STREAM (apt-get install gcc)" >&2; exit 1; }
if (( ARRAY_BYTES % 1000 != 0 )); then
    echo "ARRAY_BYTES must be a whole number of kB (1000 bytes) for likwid" >&2; exit 2
fi
ARRAY_KB=$(( ARRAY_BYTES / 1000 ))

# name likwid-test streams numaprobe-kernel
ALL_PAIRS="copy:copy_mem_${LK}:2:copy triad:stream_mem_${LK}:3:triad load:load_${LK}:1:read store:store_mem_${LK}:1:write"
PAIRS=""
for k in $KERNELS; do
    p=$(tr ' ' '\n' <<<"$ALL_PAIRS" | grep "^$k:" || true)
    [ -n "$p" ] || { echo "KERNELS: '$k' is not one of copy, triad, load, store" >&2; exit 2; }
    PAIRS="$PAIRS $p"
done

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
gcc -O3 -march=native -fopenmp -o "$OUT/stream" scripts/ref/stream.c -lm

run_likwid() { # test streams threads -> prints "GBs CPUS"
    local test=$1 streams=$2 threads=$3 log
    log=$(likwid-bench -t "$test" -w "S0:$(( ARRAY_KB * streams ))kB:$threads" 2>&1) || {
        echo "likwid-bench failed: $log" >&2; return 1; }
    local mbs cpus
    mbs=$(awk -F: '/^MByte\/s/ {gsub(/[ \t]/, "", $2); print $2}' <<<"$log")
    cpus=$(grep -o 'running on hwthread [0-9]*' <<<"$log" | awk '{print $4}' | sort -n | uniq | paste -sd, -)
    echo "$(python3 -c "print($mbs / 1000)") $cpus"
}

run_numaprobe() { # kernel cpus pages [binary] -> prints "median_GBs mean_GBs"
    local kernel=$1 cpus=$2 pages=$3 bin=${4:-$NUMAPROBE} stores=nt
    [ "$kernel" = read ] && stores=auto
    "$bin" bw --json --quiet --isa "$ISA" --stores "$stores" --kernel "$kernel" \
        --cpus "$cpus" --size "$ARRAY_BYTES" --budget "$BUDGET" --min-reps 10 --pages "$pages" \
        | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["median_gbs"], r["mean_gbs"])'
}

run_stream() { # threads pages -> prints "best_GBs"
    OMP_NUM_THREADS=$1 OMP_PROC_BIND=close OMP_PLACES=cores "$OUT/stream" "$ARRAY_BYTES" "$2" 20 \
        | sed -E 's/.*best_gbs=([0-9.]+).*/\1/'
}

echo "numaprobe vs likwid-bench and a reference STREAM: $ROUNDS rounds, threads '$THREADS', $ARRAY_BYTES bytes per array, ISA $ISA" >&2
echo "machine load: $(cut -d' ' -f1-3 /proc/loadavg); THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)" >&2
for round in $(seq 1 "$ROUNDS"); do
    round_start=$SECONDS
    for t in $THREADS; do
        for pair in $PAIRS; do
            IFS=: read -r name test streams kernel <<<"$pair"
            sc4=- sthp=- bp=- bp4=- _m=-
            if (( round % 2 )); then
                read -r lk cpus < <(run_likwid "$test" "$streams" "$t")
                read -r np npmean < <(run_numaprobe "$kernel" "$cpus" thp)
                read -r np4 np4mean < <(run_numaprobe "$kernel" "$cpus" 4k)
                if [ -n "${NUMAPROBE_BASE:-}" ]; then
                    read -r bp _m < <(run_numaprobe "$kernel" "$cpus" thp "$NUMAPROBE_BASE")
                    read -r bp4 _m < <(run_numaprobe "$kernel" "$cpus" 4k "$NUMAPROBE_BASE")
                fi
                if [ "$name" = triad ]; then
                    sc4=$(run_stream "$t" 4k); sthp=$(run_stream "$t" thp)
                fi
            else
                # the others first: ask likwid which CPUs it will use from a tiny dry run
                cpus=$(likwid-bench -t "$test" -w "S0:$(( 32 * streams * t ))kB:$t" -i 1 2>&1 \
                    | grep -o 'running on hwthread [0-9]*' | awk '{print $4}' | sort -n | uniq | paste -sd, -)
                if [ "$name" = triad ]; then
                    sthp=$(run_stream "$t" thp); sc4=$(run_stream "$t" 4k)
                fi
                if [ -n "${NUMAPROBE_BASE:-}" ]; then
                    read -r bp4 _m < <(run_numaprobe "$kernel" "$cpus" 4k "$NUMAPROBE_BASE")
                    read -r bp _m < <(run_numaprobe "$kernel" "$cpus" thp "$NUMAPROBE_BASE")
                fi
                read -r np4 np4mean < <(run_numaprobe "$kernel" "$cpus" 4k)
                read -r np npmean < <(run_numaprobe "$kernel" "$cpus" thp)
                read -r lk cpus < <(run_likwid "$test" "$streams" "$t")
            fi
            echo "$name $t $round $lk $np $npmean $np4 $np4mean $sc4 $sthp $cpus $bp $bp4" >>"$OUT/raw"
            printf 'round %d  %-5s %d thread(s) CPUs %-5s likwid %7.2f  numaprobe thp %7.2f  4k %7.2f  stream 4k %s thp %s GB/s\n' \
                "$round" "$name" "$t" "$cpus" "$lk" "$np" "$np4" "$sc4" "$sthp" >&2
        done
    done
    echo "round $round took $(( SECONDS - round_start )) s" >&2
done

python3 - "$OUT/raw" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, t, rnd, lk, np, npmean, np4, np4mean, sc4, sthp, cpus, bp, bp4 = line.split()
    f = lambda x: None if x == "-" else float(x)
    rows.setdefault((name, int(t)), []).append(
        (float(lk), float(np), float(npmean), float(np4), float(np4mean), f(sc4), f(sthp), f(bp), f(bp4)))
order = ["copy", "triad", "load", "store"]
med = lambda v: statistics.median(v) if v else None
fmt = lambda v: "-" if v is None else f"{v:.2f}"
print("GB/s = 1e9 B/s; medians over rounds. numaprobe: median_gbs of its repetitions, with THP (its default)")
print("and with --pages 4k; likwid-bench: its MByte/s (4 KiB pages here); STREAM-C: scripts/ref/stream.c, best of 19.")
print("ratio = numaprobe / likwid per round (median); 4k ratio is like for like.")
print(f"{'kernel':<7}{'thr':>4}{'likwid':>9}{'np thp':>9}{'np 4k':>9}{'STREAM 4k':>11}{'STREAM thp':>12}"
      f"{'thp/likwid':>12}{'4k/likwid':>11}{'4k/STREAM4k':>13}{'thp/STREAMthp':>15}  goal (np >= best at equal pages)")
worst4 = None
for (name, t) in sorted(rows, key=lambda k: (order.index(k[0]), k[1])):
    v = rows[(name, t)]
    lk = med([x[0] for x in v]); np = med([x[1] for x in v]); np4 = med([x[3] for x in v])
    s4 = med([x[5] for x in v if x[5] is not None]); sthp = med([x[6] for x in v if x[6] is not None])
    r_thp = med([x[1] / x[0] for x in v]); r_4k = med([x[3] / x[0] for x in v])
    worst4 = r_4k if worst4 is None else min(worst4, r_4k)
    r_s4 = None if s4 is None else np4 / s4
    r_sthp = None if sthp is None else np / sthp
    best4 = max(x for x in [lk, s4] if x is not None)
    ok = np4 >= best4 and (sthp is None or np >= sthp)
    print(f"{name:<7}{t:>4}{lk:>9.2f}{np:>9.2f}{np4:>9.2f}{fmt(s4):>11}{fmt(sthp):>12}"
          f"{r_thp:>12.3f}{r_4k:>11.3f}{fmt(r_s4):>13}{fmt(r_sthp):>15}  {'met' if ok else 'NOT met'} ({len(v)} rounds)")
print(f"lowest like-for-like (4k) median ratio to likwid: {worst4:.3f} ({'>= 1.00' if worst4 >= 1.0 else 'BELOW 1.00'})")
if any(x[8] is not None for v in rows.values() for x in v):
    print("NUMAPROBE_BASE beside numaprobe, same rounds (medians over rounds of the per-round ratios):")
    print(f"{'kernel':<7}{'thr':>4}{'base thp':>10}{'base 4k':>9}{'base4k/likwid':>15}{'np4k/likwid':>13}{'np/base thp':>13}{'np/base 4k':>12}")
    for (name, t) in sorted(rows, key=lambda k: (order.index(k[0]), k[1])):
        v = [x for x in rows[(name, t)] if x[7] is not None and x[8] is not None]
        if not v:
            continue
        print(f"{name:<7}{t:>4}{med([x[7] for x in v]):>10.2f}{med([x[8] for x in v]):>9.2f}"
              f"{med([x[8] / x[0] for x in v]):>15.3f}{med([x[3] / x[0] for x in v]):>13.3f}"
              f"{med([x[1] / x[7] for x in v]):>13.3f}{med([x[3] / x[8] for x in v]):>12.3f}")
PY
