#!/usr/bin/env bash
# Peak memory of `numaprobe import` on large and hostile inputs (the
# README's Reliability table): a 300 MB export built from the synthetic
# fixture (fresh UUIDs per copy), read from a file and from stdin, then
# 1 GiB of `[`, 1 GB of random bytes, one 1 GiB string and a 1 GiB unknown
# array on stdin. Prints one line per input: peak resident set (GNU time's
# %M, KiB), wall and user seconds, exit status.
#
#   scripts/import-memory.sh [BINARY]   # default: target/release/numaprobe
#
# Needs GNU time (/usr/bin/time, Debian package `time`) and python3, and
# about 600 MB free in $TMPDIR (the export and its database).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/numaprobe}
[ -x "$bin" ] || { echo "import-memory: no binary at $bin (cargo build --release)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "import-memory: needs GNU time (/usr/bin/time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work/big.json" <<'EOF'
import json, sys, uuid
doc = json.load(open("crates/report/tests/fixtures/synthetic-export.json"))
with open(sys.argv[1], "w") as f:
    f.write('{"format":"numaprobe-export","version":1,"exported":"2026-11-05T08:00:00.000Z","runs":[')
    size, first = 0, True
    while size < 300 * 10**6:
        for r in doc["runs"]:
            r = dict(r, uuid=str(uuid.uuid4()))
            text = json.dumps(r)
            f.write(text if first else "," + text)
            first, size = False, size + len(text)
    f.write("]}")
EOF

measure() { # NAME, then the command's stdin comes from the caller
    local name=$1; shift
    rm -f "$work"/r.db*
    /usr/bin/time -o "$work/time" -f "%M %e %U %x" "$bin" --db "$work/r.db" import "$@" \
        >/dev/null 2>"$work/err" || true
    # GNU time puts "Command exited with non-zero status N" first when N > 0.
    read -r kib wall user rc < <(tail -n 1 "$work/time")
    printf '%-34s peak RSS %7d KiB  wall %6.2f s  user %6.2f s  exit %s\n' \
        "$name" "$kib" "$wall" "$user" "$rc"
}

echo "export: $(stat -c %s "$work/big.json") bytes"
measure "300 MB export, file" "$work/big.json"
measure "300 MB export, stdin" - <"$work/big.json"
rm -f "$work/big.json"
measure "1 GiB of [" - < <(head -c 1G /dev/zero | tr '\0' '[')
measure "1 GB of random bytes" - < <(head -c 1000000000 /dev/urandom)
measure "one 1 GiB string" - < <(printf '{"exported": "'; head -c 1G /dev/zero | tr '\0' 'a')
measure "a 1 GiB unknown array" - < <(printf '{"junk": ['; yes '1,' | head -c 1G; printf '1]}')
