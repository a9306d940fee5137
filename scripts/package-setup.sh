#!/usr/bin/env bash
# Installs what the packages suite (crates/cli/tests/packages.rs) needs
# besides what scripts/release.sh installs itself (cargo-deb and
# cargo-generate-rpm from crates.io):
#   lintian, rpm (rpm, rpm2cpio), cpio, man-db, file, binutils (readelf, nm),
#   systemd (systemd-analyze), from Debian's packages, when missing.
# Needs root for apt-get (or the packages already there); fails, saying
# why, when anything is still missing afterwards.
set -euo pipefail
say() { echo "package-setup: $*" >&2; }
die() { echo "package-setup: error: $*" >&2; exit 1; }

# command -> Debian package providing it.
declare -A need=(
    [lintian]=lintian
    [rpm]=rpm
    [rpm2cpio]=rpm2cpio
    [cpio]=cpio
    [man]=man-db
    [file]=file
    [readelf]=binutils
    [nm]=binutils
    [systemd-analyze]=systemd
    [dpkg-deb]=dpkg
)
missing=()
for cmd in "${!need[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
if [ "${#missing[@]}" -gt 0 ]; then
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    [ "$(id -u)" = 0 ] || die "need root to install ${missing[*]}"
    say "installing ${missing[*]}"
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
for cmd in "${!need[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || die "'$cmd' is still missing after installing ${need[$cmd]}"
done
say "ready"
