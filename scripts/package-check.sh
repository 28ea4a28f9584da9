#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install libredlock and build the examples against the installed files,
# never the source tree (docs/packaging.md):
#
#   1. `cmake --install` into a temporary prefix; check what is there (the
#      SONAME, only redlock_* exported, the man page and docs/cli.md the
#      build generated, saying what the installed tool prints, the docs);
#   2. build examples/ with find_package(redlock) and with pkg-config
#      (shared and static), and run each against local masters;
#   3. `cpack -G DEB`: check the three packages' names, copyright files and
#      dependencies, install them with apt-get, run `redlock --version` and
#      the pkg-config examples against the installed system files, and
#      remove the packages again (unless KEEP_PACKAGES=1).
#
# Both times, `pkg-config redlock` must give no dependency's Cflags and
# -lev in --libs.
#
# Needs root (or sudo) for step 3; SKIP_DEB=1 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
src="$PWD"

work="$(mktemp -d)"
# The SONAME's version: major.minor before 1.0 (each 0.x minor may break
# the ABI), major from then on; the runtime package is named for it.
major=$(sed -n 's/^#define REDLOCK_VERSION_MAJOR \([0-9]*\)$/\1/p' include/redlock/redlock.h)
minor=$(sed -n 's/^#define REDLOCK_VERSION_MINOR \([0-9]*\)$/\1/p' include/redlock/redlock.h)
if [ "$major" = 0 ]; then soversion="$major.$minor"; else soversion="$major"; fi
runtime_pkg="libredlock$soversion"
packages=("$runtime_pkg" libredlock-dev redlock-tools)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
cleanup() {
  if [ "${installed_debs:-0}" = 1 ] && [ "${KEEP_PACKAGES:-0}" != 1 ]; then
    $sudo apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "package-check: $*" >&2; exit 1; }
step() { echo "--- $*"; }

# Local masters for the examples: with-masters starts them and writes a
# config naming them (test/support/with_masters.c).
build="build-package"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDLOCK_BUILD_TESTS=OFF \
  -DREDLOCK_BUILD_DEMO=ON -DREDLOCK_WERROR=ON "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
with_masters="$src/$build/test/support/with-masters"

# Run the examples (a directory of built programs) against three masters.
run_examples() {
  local dir="$1" tool="$2"
  "$with_masters" --timeout 60 3 "$work/masters.yaml" -- sh -c "
    set -e
    '$dir/blocking' \"\$REDLOCK_CONFIG\" example-blocking
    '$dir/async' \"\$REDLOCK_CONFIG\" example-async
    if [ -x '$dir/blocking-static' ]; then '$dir/blocking-static' \"\$REDLOCK_CONFIG\" example-static; fi
    '$dir/stats_exporter' \"\$REDLOCK_CONFIG\" 3 >'$work/metrics.txt'
    grep -q '^redlock_acquires_total{status=.REDLOCK_OK.} 3' '$work/metrics.txt'
    grep -q '^redlock_hold_seconds_count 3' '$work/metrics.txt'
    # New masters: their fencing counters are put in use once.
    '$tool' fencing-init >/dev/null
    REDLOCK='$tool' '$src/examples/cron-guard.sh'
    # Held by someone else: the guard skips the round quietly.
    '$tool' acquire --ttl 10s nightly-report >/dev/null
    REDLOCK='$tool' '$src/examples/cron-guard.sh' true 2>&1 | grep -q 'skipping this round'
  "
}

# ---- 1. Install into a prefix -------------------------------------------
prefix="$work/prefix"
step "cmake --install --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir="$prefix/lib"
[ -f "$prefix/include/redlock/redlock.h" ] || fail "no header installed"
[ -f "$libdir/libredlock.a" ] || fail "no static library installed"
[ -f "$prefix/share/man/man1/redlock.1" ] || fail "no man page installed"
[ -f "$prefix/share/doc/redlock-tools/docs/cli.md" ] || fail "no docs/cli.md installed"
[ -f "$prefix/share/doc/libredlock-dev/docs/api/README.md" ] || fail "no API reference installed"
[ -f "$libdir/cmake/redlock/redlockConfig.cmake" ] || fail "no CMake package installed"
[ -f "$libdir/cmake/redlock/FindLibev.cmake" ] || fail "no FindLibev.cmake installed"
soname=$(readelf -d "$libdir/libredlock.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = "libredlock.so.$soversion" ] ||
  fail "SONAME is '$soname', expected libredlock.so.$soversion"
exported=$(nm -D --defined-only "$libdir/libredlock.so" | awk '{print $3}')
[ -n "$exported" ] || fail "the shared library exports nothing"
stray=$(grep -v '^redlock_' <<<"$exported" || true)
[ -z "$stray" ] || fail "exported symbols outside redlock_*: $stray"
echo "SONAME $soname; $(wc -l <<<"$exported") symbols exported, all redlock_*"
"$prefix/bin/redlock" --version
# The manual installed is the one the build generates from the tool's tables
# (tool/docgen), and says what the installed tool prints.
man_page="$prefix/share/man/man1/redlock.1"
cmp -s "$man_page" "$src/$build/man/redlock.1" || fail "the installed man page is not the generated one"
for md in "$prefix"/share/doc/{redlock-tools,libredlock-dev}/docs/cli.md; do
  cmp -s "$md" "$src/$build/docs/cli.md" || fail "$md is not the generated docs/cli.md"
done
scripts/check-cli-docs.sh man "$man_page"
scripts/check-cli-docs.sh help "$prefix/bin/redlock" "$prefix/share/doc/redlock-tools/docs/cli.md"

# ---- 2. The examples against the prefix ---------------------------------
step "examples with find_package(redlock)"
cmake -S examples -B "$work/cmake-examples" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$work/cmake-examples" >/dev/null
if grep -rq -- "$src/include" "$work/cmake-examples/CMakeFiles"; then
  fail "the find_package build used the source tree's headers"
fi
LD_LIBRARY_PATH="$libdir" run_examples "$work/cmake-examples" "$prefix/bin/redlock"

# What `pkg-config redlock` hands to a program: our include directory and
# no dependency's Cflags (hiredis and libyaml are private to the library);
# -lev in --libs (the asynchronous API runs on the caller's libev loop).
check_pkg_config() {
  local cflags libs
  cflags=$(pkg-config --cflags redlock) || fail "pkg-config does not know redlock"
  libs=$(pkg-config --libs redlock)
  echo "pkg-config --cflags redlock: $cflags"
  echo "pkg-config --libs redlock: $libs"
  if grep -q hiredis <<<"$cflags"; then fail "pkg-config --cflags redlock names hiredis: $cflags"; fi
  if grep -q -- -D_FILE_OFFSET_BITS <<<"$cflags"; then
    fail "pkg-config --cflags redlock defines _FILE_OFFSET_BITS: $cflags"
  fi
  grep -qw -- -lev <<<"$libs" || fail "pkg-config --libs redlock has no -lev: $libs"
}

step "examples with pkg-config"
PKG_CONFIG_PATH="$libdir/pkgconfig" check_pkg_config
cp -R examples "$work/pc-examples"
PKG_CONFIG_PATH="$libdir/pkgconfig" make -s -C "$work/pc-examples" CFLAGS="-O2 -Wall -Wextra -Werror"
LD_LIBRARY_PATH="$libdir" run_examples "$work/pc-examples" "$prefix/bin/redlock"
echo "examples: built and run both ways"

# ---- 3. Debian packages ----------------------------------------------------
if [ "${SKIP_DEB:-0}" = 1 ]; then
  echo "package-check: SKIP_DEB=1: no .deb built"
  exit 0
fi
step "cpack -G DEB"
deb_build="build-deb"
cmake -S . -B "$deb_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_DEMO=OFF -DREDLOCK_WERROR=ON "$@" >/dev/null
cmake --build "$deb_build" -j "$(nproc)" >/dev/null
rm -rf "$work/debs" && mkdir -p "$work/debs"
(cd "$deb_build" && cpack -G DEB -B "$work/debs" >/dev/null)
shopt -s nullglob
debs=("$work"/debs/*.deb)
[ "${#debs[@]}" -eq 3 ] || fail "expected 3 packages, got: ${debs[*]##*/}"
for deb in "${debs[@]}"; do
  echo "${deb##*/}: $(dpkg-deb -f "$deb" Package) depends on: $(dpkg-deb -f "$deb" Depends)"
done
# Each package carries its copyright file: the licence named, and LICENSE
# word for word.
for deb in "${debs[@]}"; do
  pkg=$(dpkg-deb -f "$deb" Package)
  copyright=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/share/doc/$pkg/copyright" 2>/dev/null) ||
    fail "$pkg has no /usr/share/doc/$pkg/copyright"
  [[ "$copyright" == *"$(cat LICENSE)"* ]] || fail "$pkg: the copyright file does not hold LICENSE"
  grep -q '^License: BSD-3-Clause$' <<<"$copyright" || fail "$pkg: the copyright file names no BSD-3-Clause"
done
echo "each package has /usr/share/doc/PACKAGE/copyright (BSD-3-Clause)"
runtime_deps=$(dpkg-deb -f "$work"/debs/"$runtime_pkg"_*.deb Depends)
for dep in libhiredis0.14 libev4 libyaml-0-2; do
  grep -q "$dep" <<<"$runtime_deps" || fail "$runtime_pkg does not depend on $dep"
done

step "apt-get install ./*.deb"
installed_debs=1
if ! $sudo env DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 \
    apt-get install -y -qq "${debs[@]}" >"$work/apt.log" 2>&1; then
  cat "$work/apt.log" >&2
  fail "apt-get install of the packages failed"
fi
[ "$(command -v redlock)" = /usr/bin/redlock ] || fail "redlock is not /usr/bin/redlock"
redlock --version
man -w redlock >/dev/null 2>&1 || [ -f /usr/share/man/man1/redlock.1.gz ] || fail "no man page"
[ -f /usr/share/doc/redlock-tools/docs/cli.md ] || fail "redlock-tools has no docs/cli.md"
installed_man=$(man -w redlock 2>/dev/null || echo /usr/share/man/man1/redlock.1.gz)
case $installed_man in
  *.gz) zcat "$installed_man" >"$work/redlock.1" ;;
  *) cp "$installed_man" "$work/redlock.1" ;;
esac
cmp -s "$work/redlock.1" "$deb_build/man/redlock.1" || fail "redlock-tools' man page is not the generated one"
cmp -s /usr/share/doc/redlock-tools/docs/cli.md "$deb_build/docs/cli.md" ||
  fail "redlock-tools' docs/cli.md is not the generated one"
scripts/check-cli-docs.sh help /usr/bin/redlock /usr/share/doc/redlock-tools/docs/cli.md
[ -n "$(pkg-config --modversion redlock)" ] || fail "pkg-config does not know redlock"
check_pkg_config
cp -R examples "$work/deb-examples"
make -s -C "$work/deb-examples" clean all CFLAGS="-O2 -Wall -Wextra -Werror"
run_examples "$work/deb-examples" /usr/bin/redlock
echo "package-check: the packages install, and the examples build and run against them"
