#!/usr/bin/env bash
# Prints the power table of `compare`'s verdicts between two groups of
# alternated runs: for each drift per run, noise, true change and runs per
# group, how many simulated studies were decided right, left undecided or
# judged wrong (crates/analysis/examples/power_table.rs; fixed seeds, so
# two runs print the same table). Arguments go to the example:
#   scripts/power-table.sh [--trials N] [--drift PCT,...] [--order abab|abba]
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo run --quiet --release -p analysis --example power_table -- "$@"
