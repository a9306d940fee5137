#!/usr/bin/env bash
# Installs what the packages suite (crates/cli/tests/packages.rs) needs
# besides what scripts/release.sh installs itself (cargo-deb and
# cargo-generate-rpm from crates.io):
#   lintian, rpm (rpm, rpm2cpio), cpio, man-db, file, binutils (readelf, nm),
#   systemd (systemd-analyze), python3-apt (Ansible's apt module, which
#   the Ansible role's package mode uses to install the .deb), from
#   Debian's packages, when missing. ansible-playbook itself comes from
#   scripts/fleet-setup.sh, which .ci/run runs before.
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
# Debian's python3 (the interpreter the tests give Ansible) with its apt module.
have_python_apt() { /usr/bin/python3 -c 'import apt' 2>/dev/null; }
have_python_apt || missing+=(python3-apt)
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
have_python_apt || die "/usr/bin/python3 cannot import apt after installing python3-apt"
say "ready"
