#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install libredlock and build the examples against the installed files,
# never the source tree (docs/packaging.md):
#
#   1. `cmake --install` into a temporary prefix; check what is there (the
#      SONAME, only redlock_* exported, the man page and docs/cli.md the
#      build generated, saying what the installed tool prints, the docs,
#      redlock.pc naming that prefix, the example config);
#   2. build examples/ with find_package(redlock) and with pkg-config
#      (shared and static), and run each against local masters;
#   3. `cpack -G DEB`: check the three packages' names, maintainer,
#      descriptions, copyright files and dependencies, redlock.pc
#      (prefix=/usr) and /etc/redlock/redlock.yaml.example, install them with apt-get, run `redlock --version` and
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
  $sudo rm -f /etc/redlock/redlock.yaml.before-package-check 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "package-check: $*" >&2; exit 1; }
step() { echo "--- $*"; }

# Local masters for the examples: with-masters starts them and writes a
# config naming them (test/support/with_masters.c).
build="build-package"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDLOCK_BUILD_TESTS=OFF \
  -DREDLOCK_BUILD_DEMO=ON -DREDLOCK_WERROR=ON -DCMAKE_RULE_MESSAGES=OFF "$@" >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
with_masters="$src/$build/test/support/with-masters"

# redlock.pc as installed under PREFIX: prefix=PREFIX itself, libdir and
# includedir under ${prefix}, nothing relative (no "..").
check_pc_file() {
  local pc="$1" want_prefix="$2" want_libdir="$3"
  [ -f "$pc" ] || fail "no $pc"
  grep -qx "prefix=$want_prefix" "$pc" || fail "$pc: not prefix=$want_prefix: $(grep '^prefix=' "$pc")"
  grep -qx "libdir=\${prefix}/$want_libdir" "$pc" || fail "$pc: libdir is not \${prefix}/$want_libdir: $(grep '^libdir=' "$pc")"
  grep -qx 'includedir=${prefix}/include' "$pc" || fail "$pc: includedir is not \${prefix}/include: $(grep '^includedir=' "$pc")"
  if grep -q '\.\.\|pcfiledir' "$pc"; then fail "$pc has relative paths: $(grep '\.\.\|pcfiledir' "$pc")"; fi
  echo "$pc: prefix=$want_prefix, libdir=\${prefix}/$want_libdir, includedir=\${prefix}/include"
}

# Run the examples (a directory of built programs) against three masters.
run_examples() {
  local dir="$1" tool="$2"
  "$with_masters" --timeout 60 3 "$work/masters.yaml" -- sh -c "
    set -e
    '$dir/blocking' \"\$REDLOCK_CONFIG\" example-blocking
    '$dir/async' \"\$REDLOCK_CONFIG\" example-async
    if [ -x '$dir/blocking-static' ]; then '$dir/blocking-static' \"\$REDLOCK_CONFIG\" example-static; fi
    '$dir/cpp_lock' \"\$REDLOCK_CONFIG\" example-cpp
    '$dir/stats_exporter' \"\$REDLOCK_CONFIG\" --once >'$work/metrics.txt'
    grep -q '^redlock_acquires_total{status=.ok.} 1\$' '$work/metrics.txt'
    grep -q '^redlock_hold_seconds_count 1\$' '$work/metrics.txt'
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
[ -f "$prefix/include/redlock/redlock.hpp" ] || fail "no C++ header installed"
[ -f "$libdir/libredlock.a" ] || fail "no static library installed"
[ -f "$prefix/share/man/man1/redlock.1" ] || fail "no man page installed"
[ -f "$prefix/share/doc/redlock-tools/docs/cli.md" ] || fail "no docs/cli.md installed"
[ -f "$prefix/share/bash-completion/completions/redlock" ] || fail "no bash completion installed"
[ -f "$prefix/share/zsh/vendor-completions/_redlock" ] || fail "no zsh completion installed"
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
check_pc_file "$libdir/pkgconfig/redlock.pc" "$prefix" lib
[ "$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --variable=includedir redlock)" = "$prefix/include" ] ||
  fail "pkg-config --variable=includedir redlock is not $prefix/include"
# The example config beside (never as) the configuration.
cmp -s "$prefix/etc/redlock/redlock.yaml.example" config/redlock.yaml ||
  fail "no etc/redlock/redlock.yaml.example, or not config/redlock.yaml"
[ ! -e "$prefix/etc/redlock/redlock.yaml" ] || fail "etc/redlock/redlock.yaml installed: only the example may be"
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
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -pedantic -Werror" >/dev/null
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
PKG_CONFIG_PATH="$libdir/pkgconfig" make -s -C "$work/pc-examples" CFLAGS="-O2 -Wall -Wextra -Werror" \
  CXXFLAGS="-O2 -Wall -Wextra -pedantic -Werror"
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
  -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_DEMO=OFF -DREDLOCK_WERROR=ON -DCMAKE_RULE_MESSAGES=OFF \
  "$@" >/dev/null
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
# A maintainer ("Name <address>", the same for all) and descriptions of
# their own: no two synopses (the Description's first line) alike.
maintainers=$(for deb in "${debs[@]}"; do dpkg-deb -f "$deb" Maintainer; done | sort -u)
[ "$(wc -l <<<"$maintainers")" -eq 1 ] || fail "the packages name different maintainers: $maintainers"
grep -Eqx '[^<>@]*[^<>@ ] <[^<>@ ]+@[^<>@ ]+\.[^<>@ ]+>' <<<"$maintainers" ||
  fail "Maintainer is not 'Name <address>': $maintainers"
synopses=$(for deb in "${debs[@]}"; do dpkg-deb -f "$deb" Description | head -1; done)
[ "$(sort -u <<<"$synopses" | wc -l)" -eq 3 ] || fail "package descriptions alike: $synopses"
for deb in "${debs[@]}"; do
  [ "$(dpkg-deb -f "$deb" Description | wc -l)" -ge 3 ] ||
    fail "$(dpkg-deb -f "$deb" Package): no long description"
done
echo "Maintainer: $maintainers; synopses: $(paste -sd'|' <<<"$synopses")"
# libredlock-dev's redlock.pc: prefix=/usr, paths under ${prefix}.
multiarch=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$deb_build/CMakeCache.txt")
multiarch=${multiarch:-lib}
dpkg-deb --fsys-tarfile "$work"/debs/libredlock-dev_*.deb |
  tar -xOf - "./usr/$multiarch/pkgconfig/redlock.pc" >"$work/deb-redlock.pc" ||
  fail "libredlock-dev has no /usr/$multiarch/pkgconfig/redlock.pc"
check_pc_file "$work/deb-redlock.pc" /usr "$multiarch"
# redlock-tools ships /etc/redlock/redlock.yaml.example, and nothing else
# in /etc: never a redlock.yaml of its own.
tools_etc=$(dpkg-deb -c "$work"/debs/redlock-tools_*.deb | awk '{print $NF}' | grep '^\./etc/.*[^/]$' || true)
[ "$tools_etc" = ./etc/redlock/redlock.yaml.example ] ||
  fail "redlock-tools' files in /etc are not /etc/redlock/redlock.yaml.example alone: $tools_etc"
cmp -s <(dpkg-deb --fsys-tarfile "$work"/debs/redlock-tools_*.deb | tar -xOf - ./etc/redlock/redlock.yaml.example) \
  config/redlock.yaml || fail "redlock-tools' redlock.yaml.example is not config/redlock.yaml"
for deb in "${debs[@]}"; do
  if dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | grep -q 'redlock\.yaml$'; then
    fail "$(dpkg-deb -f "$deb" Package) has redlock.yaml as a conffile"
  fi
done
echo "redlock-tools: /etc/redlock/redlock.yaml.example (config/redlock.yaml), no redlock.yaml"
runtime_deps=$(dpkg-deb -f "$work"/debs/"$runtime_pkg"_*.deb Depends)
for dep in libhiredis0.14 libev4 libyaml-0-2; do
  grep -q "$dep" <<<"$runtime_deps" || fail "$runtime_pkg does not depend on $dep"
done

step "apt-get install ./*.deb"
# An operator's own /etc/redlock/redlock.yaml is left as it is.
if [ -f /etc/redlock/redlock.yaml ]; then
  $sudo cp -p /etc/redlock/redlock.yaml /etc/redlock/redlock.yaml.before-package-check
fi
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
cmp -s /usr/share/bash-completion/completions/redlock completion/redlock ||
  fail "redlock-tools has no bash completion, or not completion/redlock"
cmp -s /usr/share/zsh/vendor-completions/_redlock completion/_redlock ||
  fail "redlock-tools has no zsh completion, or not completion/_redlock"
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
# Canonical paths from the system's redlock.pc: no "..", the directories
# the files are in.
for flags in "$(pkg-config --cflags redlock)" "$(pkg-config --libs redlock)"; do
  if grep -q '\.\.' <<<"$flags"; then fail "pkg-config redlock gives non-canonical paths: $flags"; fi
done
[ "$(pkg-config --variable=libdir redlock)" = "/usr/$multiarch" ] ||
  fail "pkg-config --variable=libdir redlock is $(pkg-config --variable=libdir redlock), not /usr/$multiarch"
[ -f "$(pkg-config --variable=includedir redlock)/redlock/redlock.h" ] ||
  fail "no redlock/redlock.h in pkg-config's includedir $(pkg-config --variable=includedir redlock)"
[ -f "$(pkg-config --variable=includedir redlock)/redlock/redlock.hpp" ] ||
  fail "no redlock/redlock.hpp (libredlock-dev) in pkg-config's includedir"
cmp -s /etc/redlock/redlock.yaml.example config/redlock.yaml || fail "no /etc/redlock/redlock.yaml.example"
if [ -e /etc/redlock/redlock.yaml.before-package-check ]; then
  cmp -s /etc/redlock/redlock.yaml /etc/redlock/redlock.yaml.before-package-check ||
    fail "installing the packages changed /etc/redlock/redlock.yaml"
fi
cp -R examples "$work/deb-examples"
make -s -C "$work/deb-examples" clean all CFLAGS="-O2 -Wall -Wextra -Werror" \
  CXXFLAGS="-O2 -Wall -Wextra -pedantic -Werror"
run_examples "$work/deb-examples" /usr/bin/redlock
echo "package-check: the packages install, and the examples build and run against them"
