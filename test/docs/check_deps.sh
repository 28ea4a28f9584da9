#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What the README's commands install on a fresh Debian 12 machine:
# scripts/demo.sh and the README's install steps only what building and
# running need (scripts/deps.sh --run / --build: no checker, no model
# checker, no docker); scripts/test.sh everything else before it builds;
# and an install into /usr/local is followed by `sudo ldconfig`. Without
# root and sudo, scripts/deps.sh says what to run as root.
#
#   test/docs/check_deps.sh [SOURCE_DIR]
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
problems=()
problem() { problems+=("$*"); }

checkers=(clang llvm valgrind cppcheck clang-tidy spin docker-compose faketime libfaketime
          prometheus)
full=$(scripts/deps.sh --list) || problem "scripts/deps.sh --list exited $?"
build=$(scripts/deps.sh --build --list) || problem "scripts/deps.sh --build --list exited $?"
run=$(scripts/deps.sh --run --list) || problem "scripts/deps.sh --run --list exited $?"
for p in "${checkers[@]}" redis-server; do
    grep -qx -- "$p" <<<"$full" || problem "scripts/deps.sh (everything) does not install $p"
done
for p in "${checkers[@]}"; do
    grep -qx -- "$p" <<<"$run" && problem "scripts/deps.sh --run installs $p, which only the tests need"
    grep -qx -- "$p" <<<"$build" && problem "scripts/deps.sh --build installs $p, which only the tests need"
done
grep -qx redis-server <<<"$run" || problem "scripts/deps.sh --run does not install redis-server (the demo's masters)"
while IFS= read -r p; do
    [ -z "$p" ] || grep -qx -- "$p" <<<"$run" || problem "scripts/deps.sh --run lacks $p of --build"
done <<<"$build"

# Not root, and no sudo (a fresh Debian server often has none): say what to
# run as root, install nothing, never "sudo: command not found". Nothing is
# installed here: dpkg-query, id and apt-get are stand-ins on a PATH
# without sudo.
stub=$(mktemp -d) || exit 2
trap 'rm -rf "$stub"' EXIT
for tool in bash grep; do ln -s "$(command -v "$tool")" "$stub/$tool"; done
printf '#!/bin/sh\nexit 1\n' >"$stub/dpkg-query"
printf '#!/bin/sh\necho 1000\n' >"$stub/id"
printf '#!/bin/sh\necho "$*" >>"%s/apt-get.called"\n' "$stub" >"$stub/apt-get"
chmod +x "$stub/dpkg-query" "$stub/id" "$stub/apt-get"
out=$(PATH=$stub scripts/deps.sh --run 2>&1)
rc=$?
[ "$rc" -ne 0 ] || problem "scripts/deps.sh --run, not root and without sudo, exited 0"
[ ! -e "$stub/apt-get.called" ] || problem "scripts/deps.sh --run, not root and without sudo, ran apt-get $(head -1 "$stub/apt-get.called")"
grep -q 'as root' <<<"$out" && grep -q 'apt-get install.* redis-server' <<<"$out" ||
    problem "scripts/deps.sh --run, not root and without sudo, does not say what to run as root: $out"

# Who calls which.
grep -qx 'scripts/deps.sh --run' scripts/demo.sh || problem "scripts/demo.sh does not install with scripts/deps.sh --run"
grep -q '^scripts/deps.sh$' scripts/test.sh || problem "scripts/test.sh does not install the test tools (scripts/deps.sh)"
# The first line that configures or builds comes after the install.
deps_line=$(grep -n -m1 '^scripts/deps.sh$' scripts/test.sh | cut -d: -f1)
build_line=$(grep -n -m1 -E '^[^#]*(scripts/build\.sh|cmake -S)' scripts/test.sh | cut -d: -f1)
[ -n "$deps_line" ] && [ -n "$build_line" ] && [ "$deps_line" -lt "$build_line" ] ||
    problem "scripts/test.sh builds before installing what it needs"
grep -q '^\./scripts/demo\.sh' README.md && grep -q '^\./scripts/test\.sh' README.md ||
    problem "README.md's first commands are not scripts/demo.sh and scripts/test.sh"

# README's install from source: the build's packages, then ldconfig after
# the install into /usr/local.
install=$(awk '/^## Installing/ { on = 1 } on && /^```sh/ { inside = 1; next }
               inside && /^```/ { exit } inside' README.md)
grep -qx 'scripts/deps.sh --build' <<<"$install" ||
    problem "README.md's install steps do not use scripts/deps.sh --build: $install"
grep -q 'sudo cmake --install build' <<<"$install" && grep -q '^sudo ldconfig' <<<"$install" ||
    problem "README.md's install steps have no sudo ldconfig after sudo cmake --install"

if [ ${#problems[@]} -gt 0 ]; then
    printf 'check_deps: %s\n' "${problems[@]}"
    exit 1
fi
echo "check_deps: the demo installs $(wc -l <<<"$run") packages, the tests $(wc -l <<<"$full")"
