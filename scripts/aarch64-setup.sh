#!/usr/bin/env bash
# Installs what numaprobe's aarch64 build and its emulated tests need, from
# Debian's archive (docs/aarch64.md):
#   rustc-web, libstd-rust-web-dev:arm64  a rustc (1.96 on Debian 12) with
#                                         the aarch64 standard library
#   rust-web-clippy                       clippy for that rustc (the
#                                         aarch64-only code is linted too)
#   gcc-aarch64-linux-gnu,
#   libc6-dev-arm64-cross                 the linker and aarch64 glibc
#   qemu-user-static                      qemu-aarch64-static, which runs
#                                         aarch64 programs here
# It adds the arm64 architecture to dpkg when missing, installs only what
# is missing, then checks that the toolchain really builds for aarch64
# (rustc sees the aarch64 standard library). It fails, saying why, when a
# step cannot be done; it never skips anything.
#
# Environment:
#   NUMAPROBE_AARCH64_NO_APT  set to 1 to never run apt-get (fail instead)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "aarch64-setup: $*" >&2; }
die() { echo "aarch64-setup: error: $*" >&2; exit 1; }
t0=$(date +%s)

# command (or file) -> Debian package providing it.
declare -A need=(
    [/usr/bin/rustc]=rustc-web
    [/usr/bin/rustdoc]=rustc-web
    [/usr/bin/clippy-driver]=rust-web-clippy
    [aarch64-linux-gnu-gcc]=gcc-aarch64-linux-gnu
    [/usr/aarch64-linux-gnu/lib/libc.a]=libc6-dev-arm64-cross
    [qemu-aarch64-static]=qemu-user-static
)
have() { case "$1" in /*) [ -e "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac; }
std_libdir() { /usr/bin/rustc --print target-libdir --target aarch64-unknown-linux-gnu 2>/dev/null; }
has_std() { have /usr/bin/rustc && compgen -G "$(std_libdir)/libstd-*.rlib" >/dev/null; }

missing=()
for c in "${!need[@]}"; do
    have "$c" || missing+=("${need[$c]}")
done
has_std || missing+=(libstd-rust-web-dev:arm64)
if [ "${#missing[@]}" -gt 0 ]; then
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    [ "${NUMAPROBE_AARCH64_NO_APT:-0}" = 1 ] &&
        die "apt-get is disabled (NUMAPROBE_AARCH64_NO_APT=1) but needed for: ${missing[*]}"
    [ "$(id -u)" = 0 ] || die "need root to install ${missing[*]} (install them, or rerun as root)"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        say "dpkg --add-architecture arm64 (the aarch64 standard library is an arm64 package)"
        dpkg --add-architecture arm64
    fi
    say "apt-get update"
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2 || die "apt-get update failed"
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
        --no-install-recommends "${missing[@]}" >&2 || die "apt-get install ${missing[*]} failed"
fi
for c in "${!need[@]}"; do
    have "$c" || die "$c is still missing after installing ${need[$c]}"
done
has_std || die "/usr/bin/rustc has no aarch64 standard library in $(std_libdir) (libstd-rust-web-dev:arm64)"

# The toolchain builds and links a static aarch64 program, and qemu runs it.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'fn main() { println!("{}", std::env::consts::ARCH); }\n' >"$tmp/probe.rs"
/usr/bin/rustc --edition 2021 -O --target aarch64-unknown-linux-gnu -C linker=aarch64-linux-gnu-gcc \
    -C target-feature=+crt-static -o "$tmp/probe" "$tmp/probe.rs" ||
    die "rustc could not build a static aarch64 program"
[ "$(qemu-aarch64-static "$tmp/probe")" = aarch64 ] || die "qemu-aarch64-static did not run the probe"
say "$(/usr/bin/rustc --version) for aarch64, $(aarch64-linux-gnu-gcc --version | head -1)," \
    "$(qemu-aarch64-static --version | head -1); ready in $(( $(date +%s) - t0 )) s"
