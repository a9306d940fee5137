#!/usr/bin/env bash
# Mutation check of the measurement arithmetic (docs/testing.md, "The
# mutation check"): cargo-mutants changes the code every figure comes
# from, one mutant at a time, and the tests of its crate must fail on each.
#
#   scripts/mutants.sh            the CI set: where the three bugs of issue
#                                 40 lived (12 mutants, a few minutes,
#                                 bounded by NUMAPROBE_MUTANTS_LIMIT_S)
#   scripts/mutants.sh --full     every function of the measurement modules:
#                                 bench's bw/lat/scan measure code, the
#                                 kernels' byte accounting, place's
#                                 bind/verify (hours on 2 cores)
#   scripts/mutants.sh --figures  every function a figure goes through (the
#                                 264 mutants of docs/testing.md: about
#                                 1.5 hours)
#   scripts/mutants.sh --list     the chosen set's mutants, without running
#   (more arguments go to cargo mutants, e.g. --full --re one_way_ns)
#
# Installs cargo-mutants at a pinned version when missing (`cargo install
# --locked`, as scripts/release.sh installs its tools). Mutates the
# checkout in place, one file at a time, and reuses target/ (run it after
# `cargo test`); the files are put back after each mutant, and from a copy
# when the run is stopped. A mutant that survives fails the run; the
# results are in target/mutants/mutants.out/ (caught.txt, missed.txt,
# unviable.txt, timeout.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

CARGO_MUTANTS_VERSION=27.1.0
# The CI set may take this long in all (seconds) before the run fails.
LIMIT_S=${NUMAPROBE_MUTANTS_LIMIT_S:-420}

say() { echo "mutants: $*" >&2; }
die() { say "$*"; exit 1; }

full=0
figures=0
list=0
extra=()
for a in "$@"; do
    case "$a" in
        --full) full=1 ;;
        --figures) figures=1 ;;
        --list) list=1 ;;
        *) extra+=("$a") ;;
    esac
done

# The measurement modules (the full check).
FILES=(
    crates/bench/src/bw/measure.rs
    crates/bench/src/lat/measure.rs
    crates/bench/src/lat/c2c.rs
    crates/bench/src/lat/loaded.rs
    crates/bench/src/scan.rs
    crates/kernels/src/stream.rs
    crates/place/src/verify.rs
    crates/place/src/policy.rs
    crates/place/src/buffer.rs
)
# The CI set: where the three bugs of issue 40 lived (docs/testing.md):
# the chase's per-load division, the bytes a bandwidth repetition counts,
# and the binding of the bandwidth arrays; 2.5-4.5 minutes on the shared
# 2-core machine.
CI_FILES=(
    crates/bench/src/bw/measure.rs
    crates/bench/src/lat/measure.rs
)
CI_RE='(replace | in )(ns_per_load|bytes_per_rep)( |$)|replace place_buffers -> '

# Every function a figure goes through (docs/testing.md, "What was run").
FIG_RE='(replace | in )(bytes_per_rep|gbs|gbs_over|rep_seconds|Reps::add|Reps::gbs|Reps::all|Reps::figure_times|result|settled|enough|place_buffers|alloc_placed|measure_with|timed|ns_per_load|SamplePlan::of|shorter|one_way_ns|LoadRates::of|read_gbs|ChunkLayout::of|Kernel::reads|Kernel::writes|Kernel::bytes_per_element|Kernel::uses|Kernel::stores|check|check_spread|check_interleave|PageNodes::fraction_on|PageNodes::fractions|PageNodes::present|PageNodes::record|bind_range|Buffer::bind|Buffer::touch|policy_at|MemPolicy::mode|MemPolicy::from_kernel)( |$)'

args=(--in-place --baseline skip --no-shuffle --cargo-test-arg=--lib
      --timeout 120 --build-timeout 600 --output target/mutants)
if [ "$full" = 1 ]; then
    for f in "${FILES[@]}"; do args+=(--file "$f"); done
    # Not worth a mutant: logging, Display, the CLI's enums' names.
    args+=(--exclude-re 'fmt|describe|explain_einval|name$')
elif [ "$figures" = 1 ]; then
    for f in "${FILES[@]}"; do args+=(--file "$f"); done
    args+=(--re "$FIG_RE")
else
    for f in "${CI_FILES[@]}"; do args+=(--file "$f"); done
    args+=(--re "$CI_RE")
fi

if ! cargo mutants --version 2>/dev/null | grep -qw "$CARGO_MUTANTS_VERSION"; then
    say "installing cargo-mutants $CARGO_MUTANTS_VERSION from crates.io (cargo install --locked)"
    cargo install --locked --quiet cargo-mutants --version "$CARGO_MUTANTS_VERSION" >&2 ||
        die "cargo install cargo-mutants $CARGO_MUTANTS_VERSION failed"
    cargo mutants --version 2>/dev/null | grep -qw "$CARGO_MUTANTS_VERSION" ||
        die "cargo mutants is not version $CARGO_MUTANTS_VERSION after installing it"
fi

if [ "$list" = 1 ]; then
    exec cargo mutants --list "${args[@]}" "${extra[@]}"
fi

# In place: keep a copy of every file a mutant may touch, put back on any
# exit (cargo-mutants restores each file itself; this covers a kill).
backup=$(mktemp -d)
for f in "${FILES[@]}"; do mkdir -p "$backup/$(dirname "$f")"; cp -p "$f" "$backup/$f"; done
restore() {
    for f in "${FILES[@]}"; do cmp -s "$backup/$f" "$f" || cp -p "$backup/$f" "$f"; done
    rm -rf "$backup"
}
trap restore EXIT

start=$(date +%s)
set +e
if [ "$full" = 1 ] || [ "$figures" = 1 ]; then
    cargo mutants "${args[@]}" "${extra[@]}"
else
    timeout --kill-after=30 "$LIMIT_S" cargo mutants "${args[@]}" "${extra[@]}"
fi
rc=$?
set -e
out=target/mutants/mutants.out
count() { if [ -s "$out/$1.txt" ]; then grep -c . "$out/$1.txt"; else echo 0; fi; }
say "$(count caught) caught, $(count missed) missed, $(count unviable) unviable, $(count timeout) timed out, in $(( $(date +%s) - start )) s"
case "$rc" in
    0) ;;
    # a mutant that made its tests hang: the tests did not pass with it
    3) say "these mutants made the tests hang (counted as caught):"; cat "$out/timeout.txt" >&2 ;;
    124|137) die "stopped after ${LIMIT_S} s (NUMAPROBE_MUTANTS_LIMIT_S): the CI set must stay bounded; narrow it or raise the limit in docs/testing.md" ;;
    2) # the survivors docs/testing.md explains (line numbers left out)
       known='^crates/place/src/verify.rs: replace / with \* in check_interleave$|^crates/bench/src/lat/measure.rs: replace > with >= in measure_with$'
       new=$(sed -E 's/:[0-9]+:[0-9]+:/:/' "$out/missed.txt" | grep -Ev "$known" || true)
       if [ -n "$new" ]; then
           say "missed mutants (a test must catch each, or docs/testing.md says why it cannot matter):"
           echo "$new" >&2
           exit 1
       fi
       say "the only mutants missed are those docs/testing.md explains" ;;
    *) die "cargo mutants failed (exit $rc)" ;;
esac
