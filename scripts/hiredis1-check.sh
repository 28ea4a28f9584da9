#!/usr/bin/env bash
# Build libredlock against hiredis 1.x and run the whole test suite with it.
#
# Debian 12 ships hiredis 0.14; the library must also work with hiredis 1.x.
# This fetches Debian 13's hiredis packages from the Debian archive (the
# package index tells the current file names), unpacks them into
# build-hiredis1/ without installing anything, and builds and tests there.
set -euo pipefail
cd "$(dirname "$0")/.."

mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite="${HIREDIS1_SUITE:-trixie}"
work="build-hiredis1"
root="$work/root"

rm -rf "$work"
mkdir -p "$root" "$work/debs" "$work/pkgconfig"

echo "Fetching the $suite package index from $mirror"
curl -fsS --retry 3 -m 120 -o "$work/Packages.xz" \
  "$mirror/dists/$suite/main/binary-amd64/Packages.xz"

# The file names of libhiredis-dev and the runtime package it depends on.
files=$(xz -dc "$work/Packages.xz" | awk '
  /^Package: / { pkg = $2 }
  /^Filename: / && (pkg == "libhiredis-dev" || pkg ~ /^libhiredis1\.[0-9.]+$/) { print $2 }')
if [ -z "$files" ]; then
  echo "hiredis packages not found in $suite" >&2
  exit 1
fi
for f in $files; do
  echo "Fetching $f"
  curl -fsS --retry 3 -m 120 -o "$work/debs/$(basename "$f")" "$mirror/$f"
  dpkg-deb -x "$work/debs/$(basename "$f")" "$root"
done

abs_root="$(cd "$root" && pwd)"
libdir="$abs_root/usr/lib/x86_64-linux-gnu"
version=$(sed -n 's/^Version: //p' "$libdir/pkgconfig/hiredis.pc")
cat > "$work/pkgconfig/hiredis.pc" <<PC
Name: hiredis
Description: hiredis $version unpacked for testing
Version: $version
Libs: -L$libdir -lhiredis
Cflags: -I$abs_root/usr/include
PC
case "$version" in
  1.*) ;;
  *) echo "expected hiredis 1.x, got $version" >&2; exit 1 ;;
esac

echo "Building against hiredis $version"
PKG_CONFIG_PATH="$(cd "$work/pkgconfig" && pwd)" \
  cmake -S . -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$work/build" -j "$(nproc)"
# The tests must run with this hiredis, not the system's 0.14.
LD_LIBRARY_PATH="$libdir" ldd "$work/build/test/integration_tests" | grep -q "$libdir/libhiredis"
LD_LIBRARY_PATH="$libdir" ctest --test-dir "$work/build" --output-on-failure -j "$(nproc)"
