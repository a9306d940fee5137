#!/usr/bin/env bash
# model-study.sh: a published study's machine, modelled from hardware limits
# (crate simmodel, docs/testing.md "The simulated truth"), measured the way
# `run` stores it and judged by a numaprobe binary: each profile's pick and
# the cross-package bandwidth's change, beside the model's truth, for the
# noise-free runs and for seeds 0-9 of 1% (bandwidth) / 0.5% (latency)
# run-to-run noise.
#
#   scripts/model-study.sh [NUMAPROBE] [STUDY] [--no-scope]
#
# NUMAPROBE: the binary to judge with (default target/debug/numaprobe,
# built if missing); STUDY: xeon-8380 (default), milan-64, two-socket-96;
# --no-scope: runs as a numaprobe before the package-scope steps stored
# them (what an older binary's `run` wrote; give it to an older binary).
#
# Issue 47's "seed 000" figure is the xeon-8380 line: an older numaprobe
# sums the cells measured alone into the cross-package figure.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/numaprobe}
study=${2:-xeon-8380}
shift $(( $# > 2 ? 2 : $# ))
extra=("$@")
command -v python3 >/dev/null || { echo "model-study.sh: needs python3" >&2; exit 1; }
[ -x "$bin" ] || cargo build -q -p numaprobe
cargo build -q -p simmodel --example export_study
ex=target/debug/examples/export_study
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $study in
  xeon-8380) groups=("SNC off" SNC2 SNC4 "BIOS NUMA off") ;;
  milan-64) groups=(NPS1 NPS2 NPS4) ;;
  two-socket-96) groups=("SNC off" "SNC off + numa=off" "BIOS NUMA off" "BIOS NUMA off + numa=off") ;;
  *) echo "model-study.sh: unknown study $study" >&2; exit 2 ;;
esac
refs=()
for g in "${groups[@]}"; do refs+=("label:$g"); done
echo "judged by: $("$bin" --version)"
echo "the model's truth (noise-free figures, margin 3%):"
$ex "$study" "$work/truth.json" --noise-free "${extra[@]}" 2>&1 | sed -n '2,$p'
for seed in noise-free 0 1 2 3 4 5 6 7 8 9; do
  f=$work/$seed.json
  if [ "$seed" = noise-free ]; then
    $ex "$study" "$f" --noise-free "${extra[@]}" 2>/dev/null
  else
    $ex "$study" "$f" --seed "$seed" "${extra[@]}" 2>/dev/null
  fi
  "$bin" --db "$work/$seed.db" import "$f" >/dev/null 2>&1
  "$bin" --db "$work/$seed.db" --json compare "${refs[@]}" 2>/dev/null >"$work/$seed.out"
  python3 - "$seed" "$work/$seed.out" <<'PY'
import json, sys
v = json.load(open(sys.argv[2]))
labels = [g["label"] for g in v["groups"]]
cross = next((m for m in v["metrics"] if m["metric"] == "cross_pkg_bw_gbs"), None)
moves = "-"
if cross:
    moves = ", ".join(
        f"{labels[i]} {g['change_pct']:+.1f}% {g['verdict']}"
        for i, g in enumerate(cross["groups"])
        if g.get("change_pct") is not None
    )
    if cross.get("derived"):
        moves += f" [{cross['derived']}]"
picks = {r["profile"]: labels[r["group"]] if r["group"] is not None else "no pick"
         for r in v["recommendations"]}
order = ["hpc", "database", "virtualization", "ai-training", "latency"]
print(f"{sys.argv[1]:>10}: " + "; ".join(f"{p} {picks.get(p, '-')}" for p in order)
      + f" | cross-package GB/s: {moves}")
PY
done
