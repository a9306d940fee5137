#!/usr/bin/env bash
# Installs DuckDB's Python package (duckdb==1.5.6, from PyPI) into a
# virtual environment of its own, /opt/numaprobe-fleet-py (or the python
# NUMAPROBE_SQL_PYTHON names), for the suites that run deploy/sql with
# DuckDB on `export --format parquet` (docs/testing.md; .ci/run runs them):
#   scripts/duckdb-setup.sh &&
#   cargo test -p numaprobe --features duckdb-tests --test fleet_sql
# Installs Debian's python3-venv first when the venv module cannot make an
# environment. Needs root for /opt and apt; fails, saying why, otherwise.
set -euo pipefail
DUCKDB_VERSION=1.5.6
py=${NUMAPROBE_SQL_PYTHON:-/opt/numaprobe-fleet-py/bin/python3}
have() { "$py" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$DUCKDB_VERSION')" 2>/dev/null; }
if ! have; then
    venv=$(dirname "$(dirname "$py")")
    if [ ! -x "$py" ]; then
        [ "$(id -u)" = 0 ] || [ -n "${NUMAPROBE_SQL_PYTHON:-}" ] || { echo "duckdb-setup: need root to make $venv" >&2; exit 1; }
        if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
            [ "$(id -u)" = 0 ] || { echo "duckdb-setup: python3's venv module is missing (Debian: python3-venv) and installing it needs root" >&2; exit 1; }
            apt-get -o DPkg::Lock::Timeout=600 update -qq
            DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
                --no-install-recommends python3-venv >/dev/null
        fi
        python3 -m venv "$venv"
    fi
    "$py" -m pip install -q --disable-pip-version-check "duckdb==$DUCKDB_VERSION"
fi
have || { echo "duckdb-setup: DuckDB $DUCKDB_VERSION is still missing ($py)" >&2; exit 1; }
echo "duckdb-setup: DuckDB $DUCKDB_VERSION is installed ($py)"
