#!/usr/bin/env bash
# Prepares the emulated multi-node guest suite (crates/cli/tests/guest.rs):
#   1. installs the Debian packages it needs (qemu-system-x86, busybox-static,
#      cpio, xz-utils, zstd, file) when missing;
#   2. downloads a Debian kernel package into target/guest/ and extracts the
#      uncompressed vmlinux from its vmlinuz (booting vmlinux saves ~5 s per
#      boot under emulation);
#   3. builds numaprobe as a static binary into target/static/ and checks
#      that it really is static.
# Everything it caches lives under target/. It fails, saying why, when any
# step cannot be done: it never skips anything.
#
# Environment:
#   NUMAPROBE_GUEST_KERNEL  kernel package to use, e.g. linux-image-6.1.0-56-amd64
#                           (default: the newest linux-image-X.Y-amd64 that apt knows)
#   NUMAPROBE_GUEST_NO_APT  set to 1 to never run apt-get (fail instead)
# Options:
#   --no-build              skip building the static binary (the test builds it too)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
guest="$root/target/guest"
build=1
for a in "$@"; do
    case "$a" in
    --no-build) build=0 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "guest-setup: unknown option '$a' (try --help)" >&2; exit 2 ;;
    esac
done

t0=$(date +%s.%N)
say() { echo "guest-setup: $*" >&2; }
die() { echo "guest-setup: error: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# --- 1. packages ------------------------------------------------------------
# command -> Debian package providing it.
declare -A need=(
    [qemu-system-x86_64]=qemu-system-x86
    [cpio]=cpio
    [xz]=xz-utils
    [zstd]=zstd
    [file]=file
    [dpkg-deb]=dpkg
    [apt-get]=apt
)
missing=()
for cmd in "${!need[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
# The guest needs a statically linked busybox (busybox-static installs one as
# /bin/busybox); a dynamic busybox cannot run in the initramfs.
busybox_static() { [ -x /bin/busybox ] && file -L /bin/busybox | grep -q 'statically linked'; }
busybox_static || missing+=(busybox-static)

apt_updated=0
apt() {
    [ "${NUMAPROBE_GUEST_NO_APT:-0}" = 1 ] && die "apt-get is disabled (NUMAPROBE_GUEST_NO_APT=1) but needed for: $*"
    [ "$(id -u)" = 0 ] || die "need root to run apt-get for: $* (install them, or rerun as root)"
    if [ "$apt_updated" = 0 ]; then
        say "apt-get update"
        apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
        apt_updated=1
    fi
}
if [ "${#missing[@]}" -gt 0 ]; then
    apt "${missing[@]}"
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
for cmd in "${!need[@]}"; do
    command -v "$cmd" >/dev/null 2>&1 || die "'$cmd' is still missing after installing ${need[$cmd]}"
done
busybox_static || die "/bin/busybox is missing or not statically linked after installing busybox-static"

# --- 2. kernel --------------------------------------------------------------
mkdir -p "$guest"
# The concrete package behind a meta package such as linux-image-6.12-amd64.
resolve() { apt-cache depends "$1" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'; }
pick_kernel() {
    if [ -n "${NUMAPROBE_GUEST_KERNEL:-}" ]; then
        echo "$NUMAPROBE_GUEST_KERNEL"
        return
    fi
    # Newest linux-image-X.Y-amd64 meta package (6.9+ has weighted
    # interleave), else the distribution's default linux-image-amd64.
    local meta pkg
    meta=$(apt-cache search --names-only '^linux-image-[0-9]+\.[0-9]+-amd64$' 2>/dev/null |
        awk '{ print $1 }' | sort -V | tail -1)
    for m in $meta linux-image-amd64; do
        pkg=$(resolve "$m")
        [ -n "$pkg" ] && { echo "$pkg"; return; }
    done
}

want=${NUMAPROBE_GUEST_KERNEL:-}
have=$(cat "$guest/kernel-package" 2>/dev/null || true)
kpkg=""
if [ -s "$guest/vmlinux" ] && [ -n "$have" ] && { [ -z "$want" ] || [ "$want" = "$have" ]; }; then
    kpkg=$have # cached: no network needed
fi
if [ -z "$kpkg" ]; then
    kpkg=$(pick_kernel)
    if [ -z "$kpkg" ]; then
        # apt's lists may simply be empty (fresh container): update once, retry.
        apt "kernel package lookup"
        kpkg=$(pick_kernel)
    fi
    [ -n "$kpkg" ] || die "no linux-image-*-amd64 package found by apt-cache (is deb.debian.org reachable?)"
    say "kernel package: $kpkg"
    rm -rf "$guest/deb" "$guest/kernel" "$guest/vmlinux" "$guest/kernel-package"
    mkdir -p "$guest/deb" "$guest/kernel"
    download() { (cd "$guest/deb" && apt-get download "$kpkg" 2>&1 | grep -v 'unsandboxed' >&2; exit "${PIPESTATUS[0]}"); }
    download || { apt "apt-get download $kpkg" && download; } || die "apt-get download $kpkg failed"
    deb=$(ls "$guest"/deb/*.deb)
    # Only ./boot is needed (vmlinuz and config); the modules are not.
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$guest/kernel" --wildcards './boot/*' ||
        die "could not unpack ./boot from $deb"
    vmlinuz=$(ls "$guest"/kernel/boot/vmlinuz-* 2>/dev/null | head -1)
    [ -n "$vmlinuz" ] || die "$deb has no boot/vmlinuz-*"

    # The kernel options the guest tests depend on, all built in (no modules).
    config=$(ls "$guest"/kernel/boot/config-* | head -1)
    for opt in NUMA ACPI_NUMA ACPI_HMAT HMEM_REPORTING MIGRATION SERIAL_8250_CONSOLE \
        BLK_DEV_INITRD DEVTMPFS; do
        grep -qx "CONFIG_$opt=y" "$config" || die "$kpkg lacks CONFIG_$opt=y (see $config)"
    done

    # Extract vmlinux like the kernel's scripts/extract-vmlinux: try every
    # compressed stream in vmlinuz until one decompresses to an ELF file.
    try_decomp() { # magic (grep -P bytes), decompressor
        local off
        for off in $(LC_ALL=C grep -obUaP "$1" "$vmlinuz" | cut -d: -f1); do
            tail -c +"$((off + 1))" "$vmlinuz" | $2 >"$guest/vmlinux.tmp" 2>/dev/null || true
            if file "$guest/vmlinux.tmp" | grep -q 'ELF 64-bit'; then
                mv "$guest/vmlinux.tmp" "$guest/vmlinux"
                return 0
            fi
        done
        return 1
    }
    try_decomp '\x28\xb5\x2f\xfd' 'zstd -dcq' ||
        try_decomp '\xfd\x37\x7a\x58\x5a\x00' 'xz -dcq' ||
        try_decomp '\x1f\x8b\x08' 'gzip -dcq' ||
        die "could not extract vmlinux from $vmlinuz (neither zstd, xz nor gzip payload)"
    rm -f "$guest/vmlinux.tmp"
    rm -rf "$guest/deb" # 100+ MB; the vmlinux and config are what we keep
    echo "$kpkg" >"$guest/kernel-package"
fi
say "kernel: $kpkg -> target/guest/vmlinux ($(du -m "$guest/vmlinux" | cut -f1) MiB)"

# --- 3. static numaprobe ----------------------------------------------------
if [ "$build" = 1 ]; then
    say "building static numaprobe (target/static)"
    flags=$(scripts/static-rustflags) || die "scripts/static-rustflags failed"
    RUSTFLAGS="$flags" cargo build --release --locked \
        --target x86_64-unknown-linux-gnu -p numaprobe --target-dir "$root/target/static" >&2 ||
        die "static build of numaprobe failed"
    bin="$root/target/static/x86_64-unknown-linux-gnu/release/numaprobe"
    [ -x "$bin" ] || die "static build produced no $bin"
    file "$bin" | grep -Eq 'statically linked|static-pie linked' ||
        die "$bin is not static: $(file -b "$bin")"
    if ldd "$bin" >/dev/null 2>&1 && ! ldd "$bin" 2>&1 | grep -q 'statically linked'; then
        die "$bin has dynamic dependencies: $(ldd "$bin" | tr '\n' ' ')"
    fi
    say "numaprobe: $bin ($(file -b "$bin" | cut -d, -f1-5))"
fi
say "ready in $(elapsed "$t0") s"
