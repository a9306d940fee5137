#!/usr/bin/env bash
# Prepares the emulated Arm guest suite (crates/cli/tests/guest_arm.rs;
# docs/aarch64.md), after scripts/aarch64-setup.sh:
#   1. installs qemu-system-arm (qemu-system-aarch64) when missing;
#   2. downloads Debian's arm64 kernels into target/guest-arm/: the
#      4 KiB-page one (linux-image-X.Y-arm64) as vmlinuz, and the 16 KiB-page
#      one (linux-image-X.Y-arm64-16k) as vmlinuz-16k, each with its config
#      beside it (only ./boot is unpacked; Debian's arm64 vmlinuz is an
#      uncompressed Image, which QEMU boots as it is), and checks the
#      options the tests need;
#   3. takes busybox from busybox-static:arm64 as target/guest-arm/busybox;
#   4. builds the static aarch64 numaprobe (scripts/aarch64-cargo, the
#      release's features) and checks that it is static.
# Everything it caches lives under target/guest-arm. It fails, saying why,
# when any step cannot be done: it never skips anything.
#
# Environment:
#   NUMAPROBE_GUEST_ARM_KERNEL  the 4 KiB-page package, e.g.
#                               linux-image-6.12.117+deb12-arm64 (default:
#                               the newest linux-image-X.Y-arm64 apt knows);
#                               the 16 KiB-page one is its -16k-unsigned twin
#   NUMAPROBE_GUEST_NO_APT      set to 1 to never run apt-get (fail instead)
# Options:
#   --no-build                  skip building numaprobe (the tests build it)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir="$root/target/guest-arm"
build=1
for a in "$@"; do
    case "$a" in
    --no-build) build=0 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "guest-arm-setup: unknown option '$a' (try --help)" >&2; exit 2 ;;
    esac
done
t0=$(date +%s)
say() { echo "guest-arm-setup: $*" >&2; }
die() { echo "guest-arm-setup: error: $*" >&2; exit 1; }

apt_updated=0
apt() {
    [ "${NUMAPROBE_GUEST_NO_APT:-0}" = 1 ] && die "apt-get is disabled (NUMAPROBE_GUEST_NO_APT=1) but needed for: $*"
    [ "$(id -u)" = 0 ] || die "need root to run apt-get for: $*"
    if [ "$apt_updated" = 0 ]; then
        say "apt-get update"
        apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
        apt_updated=1
    fi
}

# --- 1. qemu-system-aarch64 ----------------------------------------------------
if ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
    apt qemu-system-arm
    say "installing qemu-system-arm"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends qemu-system-arm >&2 || die "apt-get install qemu-system-arm failed"
fi
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 is still missing"
dpkg --print-foreign-architectures | grep -qx arm64 ||
    die "dpkg has no arm64 architecture: run scripts/aarch64-setup.sh first"

# --- 2. kernels, 3. busybox ------------------------------------------------------
mkdir -p "$dir"
# Downloads an arm64 package (name without :arm64) and unpacks the paths
# matching $3 (a tar wildcard) into $2.
fetch() {
    local work="$dir/deb"
    rm -rf "$work" "$2"
    mkdir -p "$work" "$2"
    get() { (cd "$work" && apt-get download "$1:arm64" 2>&1 | grep -v unsandboxed >&2; exit "${PIPESTATUS[0]}"); }
    get "$1" || { apt "apt-get download $1" && get "$1"; } || die "apt-get download $1:arm64 failed"
    dpkg-deb --fsys-tarfile "$work"/*.deb | tar -x -C "$2" --wildcards "$3" || die "could not unpack $3 from $1"
    rm -rf "$work"
}
meta_target() { apt-cache depends "$1:arm64" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { sub(/:arm64$/, "", $2); print $2; exit }'; }
pick_kernel() {
    [ -n "${NUMAPROBE_GUEST_ARM_KERNEL:-}" ] && { echo "$NUMAPROBE_GUEST_ARM_KERNEL"; return; }
    local meta
    meta=$(apt-cache search --names-only '^linux-image-[0-9]+\.[0-9]+-arm64$' 2>/dev/null |
        awk '{ print $1 }' | sort -V | tail -1)
    [ -n "$meta" ] && meta_target "$meta"
}
# Installs kernel package $1 as $dir/$2 (and $2.config), checking options.
kernel() {
    local pkg=$1 name=$2 image config opt
    if [ -s "$dir/$name" ] && [ "$(cat "$dir/$name.package" 2>/dev/null)" = "$pkg" ]; then
        say "$name: $pkg (cached)"
        return
    fi
    say "$name: downloading $pkg"
    fetch "$pkg" "$dir/unpack" './boot/*'
    image=$(ls "$dir"/unpack/boot/vmlinuz-* 2>/dev/null | head -1)
    config=$(ls "$dir"/unpack/boot/config-* 2>/dev/null | head -1)
    [ -n "$image" ] && [ -n "$config" ] || die "$pkg has no boot/vmlinuz-* and config-*"
    file -b "$image" | grep -q 'ARM64 boot executable Image' || die "$image is not an arm64 Image: $(file -b "$image")"
    for opt in NUMA OF_NUMA MIGRATION SERIAL_AMBA_PL011_CONSOLE BLK_DEV_INITRD DEVTMPFS \
        HW_PERF_EVENTS ARM_PMUV3 TRANSPARENT_HUGEPAGE HUGETLBFS; do
        grep -qx "CONFIG_$opt=y" "$config" || die "$pkg lacks CONFIG_$opt=y (see $config)"
    done
    mv "$image" "$dir/$name"
    mv "$config" "$dir/$name.config"
    rm -rf "$dir/unpack"
    echo "$pkg" >"$dir/$name.package"
}

kpkg=$(pick_kernel)
if [ -z "$kpkg" ]; then
    apt "kernel package lookup"
    kpkg=$(pick_kernel)
fi
[ -n "$kpkg" ] || die "no linux-image-*-arm64 package found by apt-cache (is deb.debian.org reachable?)"
kernel "$kpkg" vmlinuz
grep -qx 'CONFIG_ARM64_4K_PAGES=y' "$dir/vmlinuz.config" || die "$kpkg is not a 4 KiB-page kernel"
kernel "$kpkg-16k-unsigned" vmlinuz-16k
grep -qx 'CONFIG_ARM64_16K_PAGES=y' "$dir/vmlinuz-16k.config" || die "$kpkg-16k-unsigned is not a 16 KiB-page kernel"

if ! file -b "$dir/busybox" 2>/dev/null | grep -q 'ARM aarch64.*statically linked'; then
    say "busybox: downloading busybox-static:arm64"
    fetch busybox-static "$dir/unpack" ./bin/busybox
    install -m 755 "$dir/unpack/bin/busybox" "$dir/busybox"
    rm -rf "$dir/unpack"
    file -b "$dir/busybox" | grep -q 'ARM aarch64.*statically linked' ||
        die "busybox-static:arm64 gave no static aarch64 busybox: $(file -b "$dir/busybox")"
fi

# --- 4. static aarch64 numaprobe ----------------------------------------------------
if [ "$build" = 1 ]; then
    say "building the static aarch64 numaprobe (target/aarch64)"
    scripts/aarch64-cargo build --release --locked -p numaprobe --features parquet >&2 ||
        die "aarch64 build of numaprobe failed"
    bin="$root/target/aarch64/aarch64-unknown-linux-gnu/release/numaprobe"
    file -b "$bin" | grep -Eq 'ARM aarch64.*(statically linked|static-pie linked)' ||
        die "$bin is not a static aarch64 program: $(file -b "$bin")"
fi
say "ready in $(( $(date +%s) - t0 )) s"
