#!/usr/bin/env bash
# Installs what the fleet suite (crates/cli/tests/fleet_real.rs, feature
# `fleet-tests`) runs for real, from Debian's packages, when missing:
# ansible-core (ansible-playbook), openssh-client, binutils (strip),
# slurmctld, slurmd, slurm-client (sbatch), munge, prometheus (promtool),
# prometheus-node-exporter and systemd (systemd-analyze), and DuckDB's
# Python package (PyPI, in /opt/numaprobe-fleet-py). Needs root to
# install; fails, saying what is missing, otherwise. Installing the
# packages starts no daemon here (no systemd in CI containers; where there
# is one, the packages' services are stopped again so the suite's own,
# loopback-only instances are the only ones).
set -euo pipefail
need=()
command -v ansible-playbook >/dev/null || need+=(ansible-core)
command -v slurmctld >/dev/null || need+=(slurmctld)
command -v slurmd >/dev/null || need+=(slurmd)
command -v sbatch >/dev/null || need+=(slurm-client)
command -v munged >/dev/null || need+=(munge)
command -v promtool >/dev/null || need+=(prometheus)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
command -v ip >/dev/null || need+=(iproute2)
# The Ansible test's unreachable host is an ssh connection refused; the
# playbook strips the binary it ships with binutils' strip.
command -v ssh >/dev/null || need+=(openssh-client)
command -v strip >/dev/null || need+=(binutils)
# deploy/systemd's units are checked with systemd-analyze verify.
command -v systemd-analyze >/dev/null || need+=(systemd)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "fleet-setup: need root to install ${need[*]}" >&2; exit 1; }
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    # policy-rc.d 101: the packages' daemons are not started by the install.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${need[@]}" >/dev/null
fi
# DuckDB (its Python package, from PyPI, in a virtual environment of its
# own) reads `export --format parquet` in the fleet suite.
py=${NUMAPROBE_DUCKDB_PYTHON:-/opt/numaprobe-fleet-py/bin/python3}
if ! "$py" -c 'import duckdb' 2>/dev/null; then
    [ "$(id -u)" = 0 ] || [ -n "${NUMAPROBE_DUCKDB_PYTHON:-}" ] || { echo "fleet-setup: need root to install DuckDB in /opt/numaprobe-fleet-py" >&2; exit 1; }
    python3 -m venv "$(dirname "$(dirname "$py")")"
    "$py" -m pip install -q --disable-pip-version-check duckdb==1.5.6
fi
"$py" -c 'import duckdb' || { echo "fleet-setup: DuckDB's Python package is still missing ($py)" >&2; exit 1; }
for p in ansible-playbook ssh strip systemd-analyze slurmctld slurmd sbatch munged promtool prometheus-node-exporter unshare ip; do
    command -v "$p" >/dev/null || { echo "fleet-setup: $p is still missing" >&2; exit 1; }
done
echo "fleet-setup: ansible-core, Slurm, munge, promtool, node_exporter and DuckDB are installed"
