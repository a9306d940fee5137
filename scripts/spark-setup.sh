#!/usr/bin/env bash
# Installs what the Spark suite runs deploy/sql with (docs/testing.md): a
# Java runtime from Debian (openjdk-17-jre-headless) when `java` is
# missing or older than 17, and pyspark (pinned, from PyPI) in the virtual
# environment scripts/duckdb-setup.sh makes (/opt/numaprobe-fleet-py, or
# the python NUMAPROBE_SQL_PYTHON names; DuckDB is installed there first):
#   scripts/spark-setup.sh &&
#   cargo test -p numaprobe --features spark-tests --test fleet_spark -- --nocapture
# Spark then runs in local mode (local[2]) inside the test's own process
# tree, bound to 127.0.0.1, and stops with it. Needs root to install;
# fails, saying why, otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
PYSPARK_VERSION=4.0.1
scripts/duckdb-setup.sh >/dev/null
py=${NUMAPROBE_SQL_PYTHON:-/opt/numaprobe-fleet-py/bin/python3}
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1; }
if ! command -v java >/dev/null || [ "$(java_major)" -lt 17 ]; then
    [ "$(id -u)" = 0 ] || { echo "spark-setup: need root to install openjdk-17-jre-headless (java $(java_major 2>/dev/null) found)" >&2; exit 1; }
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    # The JRE's postinst wants its man page folder, which slim images drop.
    mkdir -p /usr/share/man/man1
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends openjdk-17-jre-headless >/dev/null
fi
[ "$(java_major)" -ge 17 ] || { echo "spark-setup: java 17 or later is still missing" >&2; exit 1; }
have() { "$py" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$PYSPARK_VERSION')" 2>/dev/null; }
have || "$py" -m pip install -q --disable-pip-version-check "pyspark==$PYSPARK_VERSION"
have || { echo "spark-setup: pyspark $PYSPARK_VERSION is still missing ($py)" >&2; exit 1; }
echo "spark-setup: pyspark $PYSPARK_VERSION and java $(java_major) are installed ($py)"
