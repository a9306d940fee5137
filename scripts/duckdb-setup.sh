#!/usr/bin/env bash
# Installs DuckDB's Python package (from PyPI, into a virtual environment
# of its own, /opt/numaprobe-fleet-py or the python NUMAPROBE_DUCKDB_PYTHON
# names) for the fleet suite's DuckDB test:
#   scripts/fleet-setup.sh && scripts/duckdb-setup.sh &&
#   cargo test -p numaprobe --features duckdb-tests --test fleet_real duckdb
# Debian has no DuckDB package and CI reaches only Debian's archive and
# crates.io, so CI does not run it (docs/testing.md). Needs python3-venv.
set -euo pipefail
# DuckDB (its Python package, from PyPI, in a virtual environment of its
# own) reads `export --format parquet` in the fleet suite.
py=${NUMAPROBE_DUCKDB_PYTHON:-/opt/numaprobe-fleet-py/bin/python3}
if ! "$py" -c 'import duckdb' 2>/dev/null; then
    [ "$(id -u)" = 0 ] || [ -n "${NUMAPROBE_DUCKDB_PYTHON:-}" ] || { echo "duckdb-setup: need root to install DuckDB in /opt/numaprobe-fleet-py" >&2; exit 1; }
    python3 -m venv "$(dirname "$(dirname "$py")")"
    "$py" -m pip install -q --disable-pip-version-check duckdb==1.5.6
fi
"$py" -c 'import duckdb' || { echo "duckdb-setup: DuckDB's Python package is still missing ($py)" >&2; exit 1; }
echo "duckdb-setup: DuckDB is installed ($py)"
