#!/usr/bin/env bash
# Builds a numaprobe release of the current commit into target/dist/:
#   numaprobe-VERSION-x86_64-linux.tar.gz  the static stripped binary, the
#                                          GPU helper numaprobe-gpu beside
#                                          it (dynamically linked), man
#                                          pages, bash/zsh/fish completions,
#                                          README, licences, deploy/ (Ansible,
#                                          Slurm, systemd...) and SHA256SUMS
#   numaprobe_VERSION-1_amd64.deb          cargo-deb
#   numaprobe-VERSION-1.x86_64.rpm         cargo-generate-rpm
#   SHA256SUMS                             of the three
# The archive is reproducible: two runs on one commit give the same bytes
# (fixed order, owners, modes and times; the time is the commit's,
# SOURCE_DATE_EPOCH). docs/release.md says what must match between builds.
#
# The binary is the static build the guest suite makes (same command, same
# flags, same folder: target/static), so after the guest suite it is a
# no-op. cargo-deb and cargo-generate-rpm are installed from crates.io
# (pinned versions, `cargo install --locked`) when missing.
#
# Options:
#   --target TRIPLE  x86_64-unknown-linux-gnu (default) or
#                    aarch64-unknown-linux-gnu: numaprobe-VERSION-aarch64-linux.tar.gz,
#                    numaprobe_VERSION-1_arm64.deb, numaprobe-VERSION-1.aarch64.rpm
#                    and SHA256SUMS-aarch64, built with Debian's cross
#                    toolchain (scripts/aarch64-setup.sh, scripts/aarch64-cargo;
#                    the aarch64 programs run under qemu-aarch64-static here)
#   --archive-only   only the archive (no packaging tools needed)
#   --tools          only install the packaging tools when missing, then stop
#                    (.ci/run does it in the background, ahead of the build)
#   --out DIR        write the results there (default: target/dist)
#   --allow-dirty    build from a tree with uncommitted changes (the result
#                    then does not match the commit it names)
# It fails, saying why, when a step cannot be done.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

CARGO_DEB_VERSION=3.8.0
CARGO_GENERATE_RPM_VERSION=0.21.1
TARGET=x86_64-unknown-linux-gnu

out="$root/target/dist"
archive_only=0
allow_dirty=0
tools_only=0
while [ $# -gt 0 ]; do
    case "$1" in
    --archive-only) archive_only=1 ;;
    --tools) tools_only=1 ;;
    --target) [ $# -ge 2 ] || { echo "release: --target needs a triple" >&2; exit 2; }; TARGET=$2; shift ;;
    --allow-dirty) allow_dirty=1 ;;
    --out) [ $# -ge 2 ] || { echo "release: --out needs a folder" >&2; exit 2; }; out=$2; shift ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "release: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
if [ "$tools_only" = 0 ]; then
    mkdir -p "$out"
    out=$(cd "$out" && pwd)
fi

# What differs per target: the names, the folders the builds go to, how
# cargo is run, and how this machine runs the target's programs ($run).
arch_name=x86_64
deb_arch=amd64
rpm_arch=x86_64
sums=SHA256SUMS
static_dir="$root/target/static"
helper_dir="$root/target/gpu-helper-release"
loader=ld-linux-x86-64.so.2
overrides=packaging/deb/lintian-overrides
run=()
case "$TARGET" in
x86_64-unknown-linux-gnu) ;;
# >>> aarch64 >>>
aarch64-unknown-linux-gnu)
    # scripts/aarch64-cargo's toolchain, target folders and flags (the
    # static build is the one the Arm guest suite boots), with Parquet as
    # on x86-64; its programs run here under qemu-aarch64-static.
    arch_name=aarch64
    deb_arch=arm64
    rpm_arch=aarch64
    sums=SHA256SUMS-aarch64
    static_dir="$root/target/aarch64"
    helper_dir="$root/target/aarch64-dynamic"
    loader=ld-linux-aarch64.so.1
    # lintian sees a plain static executable here (x86-64's is static-pie):
    # the arm64 package's overrides say so, with why.
    overrides=packaging/deb/lintian-overrides-arm64
    run=(qemu-aarch64-static)
    command -v qemu-aarch64-static >/dev/null || { echo "release: qemu-aarch64-static is missing: run scripts/aarch64-setup.sh" >&2; exit 1; }
    export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
    [ -x /usr/bin/rustc ] && command -v aarch64-linux-gnu-gcc >/dev/null ||
        { echo "release: the aarch64 toolchain is missing: run scripts/aarch64-setup.sh" >&2; exit 1; }
    # cargo-deb takes the package's architecture (arm64) from the target.
    deb_target=(--target "$TARGET")
    ;;
# <<< aarch64 <<<
*) echo "release: --target $TARGET: only x86_64-unknown-linux-gnu and aarch64-unknown-linux-gnu" >&2; exit 2 ;;
esac

t0=$(date +%s.%N)
say() { echo "release: $*" >&2; }
die() { echo "release: error: $*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
# Installs the packaging tools (cargo subcommands) at their pinned versions
# when missing.
tools() {
    local t crate version sub
    for t in "cargo-deb $CARGO_DEB_VERSION deb" "cargo-generate-rpm $CARGO_GENERATE_RPM_VERSION generate-rpm"; do
        read -r crate version sub <<<"$t"
        if cargo "$sub" --version 2>/dev/null | grep -qw "$version"; then continue; fi
        say "installing $crate $version from crates.io (cargo install --locked)"
        cargo install --locked --quiet "$crate" --version "$version" >&2 || die "cargo install $crate $version failed"
        cargo "$sub" --version 2>/dev/null | grep -qw "$version" || die "cargo $sub is not version $version after installing it"
    done
}
if [ "$tools_only" = 1 ]; then
    tools
    say "cargo-deb $CARGO_DEB_VERSION and cargo-generate-rpm $CARGO_GENERATE_RPM_VERSION are installed"
    exit 0
fi
for cmd in git cargo tar gzip sha256sum readelf objdump file python3; do
    command -v "$cmd" >/dev/null || die "'$cmd' is missing"
done

# --- what is being released ---------------------------------------------------
commit=$(git rev-parse HEAD) || die "not a git checkout: a release is made from a commit"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    [ "$allow_dirty" = 1 ] || die "the working tree has uncommitted changes: commit them, or pass --allow-dirty"
    say "warning: uncommitted changes: the result does not match commit ${commit:0:12}"
fi
version=$(cargo pkgid --locked -p numaprobe | sed 's/.*[#@]//')
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "cannot read numaprobe's version (got '$version')"
# Every time in the archive and packages is the commit's.
epoch=$(git show -s --format=%ct HEAD)
name="numaprobe-$version-$arch_name-linux"
say "numaprobe $version, commit ${commit:0:12}, SOURCE_DATE_EPOCH=$epoch"

# --- the static binary (the guest suite's build) -------------------------------
# Same command, flags and environment as scripts/guest-setup.sh and the
# guest harness, so cargo finds it up to date (build.rs takes the commit's
# date from git itself).
say "building the static binary (${static_dir#"$root/"}; a no-op when up to date)"
flags=$(scripts/static-rustflags) || die "scripts/static-rustflags failed"
# `--features parquet` is a default feature already (the guest suite's
# build has it too, so this stays a no-op): named so that a release never
# ships without `export --format parquet`.
env -u CARGO_ENCODED_RUSTFLAGS -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET RUSTFLAGS="$flags" \
    cargo build --release --locked --target "$TARGET" -p numaprobe --features parquet \
    --target-dir "$static_dir" >&2 || die "static build failed"
bin="$static_dir/$TARGET/release/numaprobe"
[ -x "$bin" ] || die "the build produced no $bin"
file -b "$bin" | grep -Eq 'statically linked|static-pie linked' || die "$bin is not static: $(file -b "$bin")"
# The section list is read whole first: `readelf | grep -q` under pipefail
# fails whenever grep stops reading before readelf has written everything.
sections=$(readelf -S "$bin") || die "readelf -S $bin failed"
if grep -q '\.debug_' <<<"$sections"; then
    die "$bin has debug sections: the release profile must strip them (Cargo.toml [profile.release] strip)"
fi
grep -q '\.symtab' <<<"$sections" || die "$bin has no symbol table: backtraces would show no function names"
"${run[@]}" "$bin" --version | grep -q "^numaprobe $version (${commit:0:12} " ||
    die "$bin --version says '$("${run[@]}" "$bin" --version)', not $version and commit ${commit:0:12}"

# --- the GPU helper: dynamically linked ------------------------------------------
# `numaprobe gpu` runs numaprobe-gpu, which opens the driver library
# (libcuda.so.1) with dlopen: a static glibc program cannot do that
# reliably, so the helper alone is linked against the system's glibc
# (docs/architecture.md, "GPU helper"). Its own small crate: only the
# placement layer and the protocol are built a second time.
say "building the GPU helper (dynamically linked; ${helper_dir#"$root/"})"
remap=$(printf '%s\n' "$flags" | sed 's/-C target-feature=+crt-static *//')
env -u CARGO_ENCODED_RUSTFLAGS -u CARGO_TARGET_DIR -u CARGO_BUILD_TARGET RUSTFLAGS="$remap" \
    cargo build --release --locked --target "$TARGET" -p gpu --bin numaprobe-gpu \
    --target-dir "$helper_dir" >&2 || die "GPU helper build failed"
helper="$helper_dir/$TARGET/release/numaprobe-gpu"
[ -x "$helper" ] || die "the build produced no $helper"
file -b "$helper" | grep -q 'dynamically linked' || die "$helper is not dynamically linked: $(file -b "$helper")"
# Only glibc's own libraries, and no symbol newer than glibc 2.34 (EL9;
# Debian 12 has 2.36), so the packages' "glibc >= 2.34" holds.
needed=$(readelf -d "$helper" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
    case "$lib" in
    libc.so.6 | libm.so.6 | libgcc_s.so.1 | "$loader") ;;
    *) die "$helper needs $lib: only glibc's libraries may be needed (got: $needed)" ;;
    esac
done
newest=$(objdump -T "$helper" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
[ "$(printf '%s\n2.34\n' "$newest" | sort -V | tail -1)" = 2.34 ] ||
    die "$helper needs glibc $newest, newer than the 2.34 the packages promise"
"${run[@]}" "$helper" --version | grep -q "^numaprobe-gpu $version " ||
    die "$helper --version says '$("${run[@]}" "$helper" --version)', not $version"

# --- generated files: man pages, completions ----------------------------------
gen="$root/target/release-files"
rm -rf "$gen"
mkdir -p "$gen/man" "$gen/completions"
"${run[@]}" "$bin" man >"$gen/man/numaprobe.1"
# A page for every page the pages refer to (numaprobe-bw(1), and below
# numaprobe-advise(1) numaprobe-advise-interleave(1)), so none is missing.
refs() { { grep -o 'numaprobe\\-[a-z0-9\\-]*(1)' "$1" || true; } | sed 's/\\-/-/g; s/^numaprobe-//; s/(1)$//' | sort -u; }
todo=$(refs "$gen/man/numaprobe.1")
[ -n "$todo" ] || die "the main man page names no command pages"
while [ -n "$todo" ]; do
    next=""
    for c in $todo; do
        [ -e "$gen/man/numaprobe-$c.1" ] && continue
        "${run[@]}" "$bin" man "$c" >"$gen/man/numaprobe-$c.1" || die "numaprobe man $c failed"
        next="$next $(refs "$gen/man/numaprobe-$c.1")"
    done
    todo=$(echo $next)
done
"${run[@]}" "$bin" completions bash >"$gen/completions/numaprobe.bash"
"${run[@]}" "$bin" completions zsh >"$gen/completions/_numaprobe"
"${run[@]}" "$bin" completions fish >"$gen/completions/numaprobe.fish"

# Copies tracked files (as git lists them, with git's executable bit) into
# the folder given last.
copy_tracked() { # pathspec... -- dest
    local dest=${*: -1} mode path
    git ls-files -s -z -- "${@:1:$#-1}" | while IFS= read -r -d '' entry; do
        mode=${entry%% *}
        path=${entry#*$'\t'}
        install -D -m "$([ "$mode" = 100755 ] && echo 755 || echo 644)" "$path" "$dest/$path"
    done
}

# Sets every time under $1 to the commit's, and modes to 755/644 (umask-proof).
normalise() {
    find "$1" -type d -exec chmod 755 {} +
    find "$1" -type f -perm /111 -exec chmod 755 {} +
    find "$1" -type f ! -perm /111 -exec chmod 644 {} +
    find "$1" -exec touch -h -d "@$epoch" {} +
}

# --- the archive ---------------------------------------------------------------
stage="$out/$name"
rm -rf "$stage" "$out/$name.tar.gz"
mkdir -p "$stage"
install -m 755 "$bin" "$stage/numaprobe"
install -m 755 "$helper" "$stage/numaprobe-gpu"
cp -r "$gen/man" "$gen/completions" "$stage/"
copy_tracked README.md LICENSE-MIT LICENSE-APACHE deploy "$stage"
normalise "$stage"
(cd "$stage" && find . -type f ! -name SHA256SUMS -printf '%P\n' | LC_ALL=C sort |
    xargs -d '\n' sha256sum >SHA256SUMS)
normalise "$stage"
LC_ALL=C tar --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
    --mtime="@$epoch" -C "$out" -cf - "$name" | gzip -9 -n >"$out/$name.tar.gz"
rm -rf "$stage"
say "$out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB)"
artifacts=("$name.tar.gz")

# --- .deb and .rpm --------------------------------------------------------------
if [ "$archive_only" = 0 ]; then
    # The packages' files, at the paths crates/cli/Cargo.toml's
    # [package.metadata.deb] and [package.metadata.generate-rpm] name.
    pkg="$root/target/pkg-stage"
    rm -rf "$pkg"
    mkdir -p "$pkg/man"
    install -m 755 "$bin" "$pkg/numaprobe"
    install -m 755 "$helper" "$pkg/numaprobe-gpu"
    for page in "$gen"/man/*.1; do
        gzip -9 -n -c "$page" >"$pkg/man/$(basename "$page").gz"
    done
    cp -r "$gen/completions" "$pkg/"
    copy_tracked README.md LICENSE-MIT LICENSE-APACHE deploy/systemd packaging "$pkg"
    # The target's lintian overrides, at the path the .deb's assets name.
    install -m 644 "$overrides" "$pkg/packaging/deb/lintian-overrides"
    # Debian's changelog: one entry for this version, dated by the commit.
    {
        echo "numaprobe ($version-1) unstable; urgency=medium"
        echo
        echo "  * numaprobe $version, built from commit $commit."
        echo
        echo " -- numaprobe maintainers <maintainers@users.noreply.a-seed-bb4e7afa.example>  $(LC_ALL=C date -u -R -d "@$epoch")"
    } >"$pkg/changelog"
    normalise "$pkg"

    tools

    # Both tools date their files by SOURCE_DATE_EPOCH.
    export SOURCE_DATE_EPOCH=$epoch
    deb="numaprobe_${version}-1_${deb_arch}.deb"
    rm -f "$out/$deb"
    cargo deb --locked -p numaprobe --no-build --no-strip --quiet ${deb_target[@]+"${deb_target[@]}"} \
        --output "$out/$deb" >&2 || die "cargo deb failed"
    rpm="numaprobe-${version}-1.${rpm_arch}.rpm"
    rm -f "$out/$rpm"
    # xz: what EL8's own packages use; every rpm since EL6 reads it.
    cargo generate-rpm -p crates/cli --target "$TARGET" --target-dir "$static_dir" \
        --payload-compress xz --output "$out/$rpm" >&2 || die "cargo generate-rpm failed"
    # cargo-generate-rpm cannot flag %license; this sets the flag.
    python3 scripts/package-rpm-license.py "$out/$rpm" \
        /usr/share/licenses/numaprobe/LICENSE-MIT /usr/share/licenses/numaprobe/LICENSE-APACHE ||
        die "marking the licences %license failed"
    say "$out/$deb ($(du -k "$out/$deb" | cut -f1) KiB)"
    say "$out/$rpm ($(du -k "$out/$rpm" | cut -f1) KiB)"
    artifacts+=("$deb" "$rpm")
fi

(cd "$out" && sha256sum "${artifacts[@]}" >"$sums")
say "$out/$sums:"
sed 's/^/  /' "$out/$sums" >&2
say "done in $(elapsed "$t0") s"
