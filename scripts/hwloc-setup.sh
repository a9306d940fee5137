#!/usr/bin/env bash
# Installs what the hwloc suite (crates/cli/tests/hwloc_real.rs, and the
# guest suite's hwloc round trip) runs: Debian's hwloc package, which has
# lstopo-no-graphics, hwloc-info and hwloc-annotate (hwloc 2.9 on Debian
# 12). Fails, saying why, when they cannot be installed; never skips.
#
# Environment:
#   NUMAPROBE_HWLOC_NO_APT  set to 1 to never run apt-get (fail instead)
set -euo pipefail
say() { echo "hwloc-setup: $*" >&2; }
die() { echo "hwloc-setup: error: $*" >&2; exit 1; }

need=(lstopo-no-graphics hwloc-info hwloc-annotate)
missing=0
for p in "${need[@]}"; do
    command -v "$p" >/dev/null 2>&1 || missing=1
done
if [ "$missing" = 1 ]; then
    [ "${NUMAPROBE_HWLOC_NO_APT:-0}" = 1 ] && die "hwloc is missing and apt-get is disabled (NUMAPROBE_HWLOC_NO_APT=1)"
    [ "$(id -u)" = 0 ] || die "need root to apt-get install hwloc (or install it yourself)"
    say "apt-get install hwloc"
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
    # --no-install-recommends: lstopo-no-graphics, hwloc-info and
    # hwloc-annotate need no X libraries
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends hwloc >&2 || die "apt-get install hwloc failed"
fi
for p in "${need[@]}"; do
    command -v "$p" >/dev/null 2>&1 || die "'$p' is still missing after installing hwloc"
done
v=$(lstopo-no-graphics --version 2>/dev/null | awk '{ print $2 }')
case "$v" in
2.*) ;;
*) die "lstopo $v: the hwloc suite needs hwloc 2 (memory attributes)" ;;
esac
say "hwloc $v ready"
