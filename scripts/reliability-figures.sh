#!/usr/bin/env bash
# Counts the README's reliability figures from test output (issue 12).
#
#   scripts/reliability-figures.sh LOG   # LOG: the output of `bash .ci/run`
#   scripts/reliability-figures.sh       # runs `cargo test` and the mutation
#                                        # suite itself (needs ../shared/fixtures)
#
# Prints one line per figure:
#   captures / mutations / binary runs: the mutation suite's own summary line
#     ("mutation suite: N mutations of F files and D essential directories on
#     C captures; B runs of the binary; ...").
#   bad inputs: passing tests whose name says they feed numaprobe bad input
#     (refused, rejected, malformed, garbage, bad, invalid, hostile,
#     conflicting, out of range, escaped, a usage error, one line, a device,
#     a symlink, a dangling link, non-UTF-8, empty, spoiled).
#   fault cases: passing tests whose name says a fault is injected while
#     numaprobe runs (interrupted, SIGTERM/SIGINT, killed, timeout, a held
#     lock, a read-only or full disk, a crash, a hang).
#   failed: failing tests in the log (must be 0 for the figures to hold).
# Each test counts once, under the first of the two it matches.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ge 1 ]; then
    log=$1
else
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    cargo test 2>&1 | tee -a "$log" >/dev/null || true
    cargo test -p numaprobe --features fixtures --test mutation -- --nocapture 2>&1 \
        | tee -a "$log" >/dev/null || true
fi

summary=$(grep -o 'mutation suite: [0-9]* mutations of [0-9]* files and [0-9]* essential directories on [0-9]* captures; [0-9]* runs of the binary' "$log" | tail -1 || true)
if [ -z "$summary" ]; then
    echo "reliability-figures: no mutation suite summary in $log (did it run?)" >&2
    exit 1
fi
read -r mutations files dirs captures binary < <(echo "$summary" \
    | sed -E 's/.*: ([0-9]+) mutations of ([0-9]+) files and ([0-9]+) essential directories on ([0-9]+) captures; ([0-9]+) runs.*/\1 \2 \3 \4 \5/')

# Whole words of the test's name (snake_case; `::` and `_` separate words).
bad='refused|refuse|refuses|rejected|rejects|reject|malformed|garbage|bad|invalid|hostile|conflicting|conflict|out_of_range|escaped|escapes|neutralised|usage_error|one_line|device|symlink|dangling|non_utf8|empty|spoiled|huge|zz|mutated'
fault='interrupted|interrupt|ctrl_c|sigterm|sigint|sigkill|killed|kills|kill|timeout|held|concurrent|read_only|full_disk|crash|hang|hangs|subreaper|setsid'
words() { grep -E${2:-} "(^|_|:)($1)(_|$)"; }
passed=$(grep -E '^test [^ ]+ \.\.\. ok$' "$log" | sed -E 's/^test ([^ ]+) .*/\1/' | sort -u)
faults=$(echo "$passed" | words "$fault" | grep -c . || true)
bads=$(echo "$passed" | words "$fault" v | words "$bad" | grep -c . || true)
failed=$(grep -cE '^test [^ ]+ \.\.\. FAILED$' "$log" || true)

echo "captures: $captures"
echo "mutations: $mutations (of $files files and $dirs essential directories; $binary runs of the binary)"
echo "bad inputs: $bads tests"
echo "fault cases: $faults tests"
echo "failed: $failed"
