#!/usr/bin/env bash
# Accuracy check of `numaprobe lat` (a benchmark, not a unit test).
#
# Compares numaprobe's idle chase latency, with its default method (stride
# 256 B, 64-page TLB groups), with an independent pointer chase of the same
# method written in plain C (scripts/ref/chase.c, built here with gcc;
# Debian has neither lmbench nor multichase), at the same size, stride,
# page size, TLB grouping and CPU, alternating the two RUNS times so drifts
# in machine load hit both. For each page size of PAGES: per-run figures,
# the ratio numaprobe/reference of the medians of the runs, and each tool's
# run-to-run spread ((max - min) / median of the per-run medians). Goal:
# ratio within 3% at DRAM sizes (1 GiB), with 4k and THP pages.
#
# usage: scripts/lat-vs-reference.sh [SIZE=1G] [PAGES="4k thp"] [RUNS=5] [CPU=0]
# env:   NUMAPROBE=path/to/numaprobe (default: target/release/numaprobe,
#        built with cargo when missing), STRIDE=256, SAMPLES=11, SAMPLE_MS=20,
#        NUMAPROBE_BASE=path/to/another/numaprobe: a second build run in the
#        same rounds (base, numaprobe, reference), with its own ratio to the
#        reference and numaprobe/base, to show a change moves nothing.
#        Each line of numaprobe's also says whether the figure was marked
#        disturbed (builds before the check print "-").
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
size="${1:-1G}"
pages_list="${2:-4k thp}"
runs="${3:-5}"
cpu="${4:-0}"
stride="${STRIDE:-256}"
samples="${SAMPLES:-11}"
sample_ms="${SAMPLE_MS:-20}"
tlb_pages=64

for pages in $pages_list; do
    case "$pages" in 4k|thp|2m|1g) ;; *) echo "pages must be 4k, thp, 2m or 1g, not '$pages'" >&2; exit 2 ;; esac
done

to_bytes() {
    local s="$1" n u
    n="${s%%[KkMmGgTt]*}"; u="${s#"$n"}"
    case "$u" in
        "") echo "$n" ;; K|k) echo $((n << 10)) ;; M|m) echo $((n << 20)) ;;
        G|g) echo $((n << 30)) ;; T|t) echo $((n << 40)) ;;
        *) echo "bad size '$s'" >&2; exit 2 ;;
    esac
}
bytes="$(to_bytes "$size")"

np="${NUMAPROBE:-$root/target/release/numaprobe}"
if [[ ! -x "$np" ]]; then
    (cd "$root" && cargo build --release -q -p numaprobe)
    np="${CARGO_TARGET_DIR:-$root/target}/release/numaprobe"
fi
command -v gcc >/dev/null || { echo "gcc is needed (apt-get install gcc)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
gcc -O2 -o "$work/chase" "$here/ref/chase.c"

for pages in $pages_list; do
    echo "== lat vs reference: size $size ($bytes B), pages $pages, stride $stride B, CPU $cpu, $runs runs x $samples samples of ${sample_ms} ms"
    echo "machine load: $(cut -d' ' -f1-3 /proc/loadavg)"
    : > "$work/np.txt"; : > "$work/ref.txt"; : > "$work/base.txt"
    point() { # binary seed -> "median_ns min_ns page stable"
        "$1" lat --quiet --json --no-prefetch-check --size "$bytes" --pages "$pages" --stride "$stride" --cpu "$cpu" \
            --tlb-pages "$tlb_pages" --samples "$samples" --sample-ms "$sample_ms" --seed "$2" \
            | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["median_ns"], r["min_ns"], r["page_size"].replace(" ", "_"), r.get("stable", "-"))'
    }
    for i in $(seq 1 "$runs"); do
        if [[ -n "${NUMAPROBE_BASE:-}" ]]; then point "$NUMAPROBE_BASE" "$i" >> "$work/base.txt"; fi
        point "$np" "$i" >> "$work/np.txt"
        "$work/chase" "$bytes" "$stride" "$pages" "$tlb_pages" "$samples" "$sample_ms" "$cpu" \
            | sed -E 's/.*median_ns=([0-9.]+) min_ns=([0-9.]+).*/\1 \2/' >> "$work/ref.txt"
    done

    python3 - "$work/np.txt" "$work/ref.txt" "$pages" "$work/base.txt" <<'PY'
import statistics as st, sys
np = [l.split() for l in open(sys.argv[1]) if l.strip()]
ref = [l.split() for l in open(sys.argv[2]) if l.strip()]
base = [l.split() for l in open(sys.argv[4]) if l.strip()]
marked = sum(1 for x in np if x[3] == "False")
print(f"numaprobe figures marked disturbed: {marked} of {len(np)}")
if base:
    bm = [float(x[0]) for x in base]
    rm = [float(x[0]) for x in ref]
    nm = [float(x[0]) for x in np]
    print(f"{'run':>4} {'base ns':>9} {'numaprobe ns':>13} {'numaprobe/base':>15}")
    for i, (a, b) in enumerate(zip(bm, nm), 1):
        print(f"{i:>4} {a:>9.2f} {b:>13.2f} {b / a:>15.3f}")
    print(f"base: median {st.median(bm):.2f} ns, ratio to the reference {st.median(bm) / st.median(rm):.3f}; "
          f"numaprobe/base {st.median(nm) / st.median(bm):.3f} (median of runs)")
npm = [float(x[0]) for x in np]; npmin = [float(x[1]) for x in np]
rfm = [float(x[0]) for x in ref]; rfmin = [float(x[1]) for x in ref]
print(f"{'run':>4} {'numaprobe ns':>13} {'reference ns':>13} {'ratio':>7}   (median per run; pages obtained: {np[0][2]})")
for i, (a, b) in enumerate(zip(npm, rfm), 1):
    print(f"{i:>4} {a:>13.2f} {b:>13.2f} {a / b:>7.3f}")
def spread(v): return (max(v) - min(v)) / st.median(v) * 100
a, b = st.median(npm), st.median(rfm)
print(f"median of runs ({sys.argv[3]}): numaprobe {a:.2f} ns, reference {b:.2f} ns, ratio {a / b:.3f} ({(a / b - 1) * 100:+.1f}%)")
a2, b2 = st.median(npmin), st.median(rfmin)
print(f"median of per-run minima: numaprobe {a2:.2f} ns, reference {b2:.2f} ns, ratio {a2 / b2:.3f}")
print(f"run-to-run spread: numaprobe {spread(npm):.1f}%, reference {spread(rfm):.1f}%")
ok = abs(a / b - 1) <= 0.03
print(f"goal ({sys.argv[3]}: ratio within 3%):", "met" if ok else "NOT met")
PY
done
