#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/quickstart.md, run as written: its ```sh blocks in order, in one
# shell with `set -e`, in a scratch directory where scripts/, include/ and
# config/ are the sources' and build/ is BUILD_DIR; its C block saved as
# quickstart.c where the text says so. The build step's commands (the
# packages, cmake) are checked to be the ones the suite's build stands
# for, not run. The masters start on free ports (REDLOCK_MASTERS_PORT=0)
# in the scratch directory, and are stopped however the run ends.
#
#   test/docs/quickstart.sh BUILD_DIR
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: quickstart.sh BUILD_DIR}" && pwd)
md=$root/docs/quickstart.md
work=$(mktemp -d)
cleanup() {
    (cd "$work" && REDLOCK_MASTERS_DIR=$work/masters timeout 30 "$root/scripts/masters.sh" stop >/dev/null 2>&1)
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

ln -s "$root/scripts" "$work/scripts"
ln -s "$root/include" "$work/include"
ln -s "$root/config" "$work/config"
ln -s "$build" "$work/build"

# The blocks, in order: sh blocks become the script; the C block is
# written out as quickstart.c before the step that compiles it.
awk -v dir="$work" '
    /^```sh[ \t]*$/ { kind = "sh"; next }
    /^```c[ \t]*$/ { kind = "c"; nc++; next }
    /^```/ && kind { kind = ""; next }
    kind == "sh" { print > (dir "/steps.sh") }
    kind == "c" { print > (dir "/quickstart.c") }
' "$md"
[ -s "$work/steps.sh" ] || fail "no sh block in docs/quickstart.md"
[ -s "$work/quickstart.c" ] || fail "no C block in docs/quickstart.md"
grep -q 'scripts/masters.sh start' "$work/steps.sh" || fail "the quickstart starts no masters"
grep -q 'scripts/masters.sh stop' "$work/steps.sh" || fail "the quickstart does not stop its masters"
grep -q '^\./quickstart' "$work/steps.sh" || fail "the quickstart does not run its C program"

# The build step: the commands the suite's own build stands for.
setup=$(grep -E '^(scripts/deps\.sh|cmake )' "$work/steps.sh")
expected='scripts/deps.sh --run
cmake -S . -B build -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_DEMO=OFF
cmake --build build -j'
[ "$setup" = "$expected" ] || fail "the build step is not what this test stands for:
$setup"
grep -vE '^(scripts/deps\.sh|cmake )' "$work/steps.sh" >"$work/run.sh"

# A build with sanitizers: the program linked with its library needs them
# too (QUICKSTART_CC_FLAGS, from ctest), so `cc` gets them.
mkdir "$work/bin"
printf '#!/bin/sh\nexec %s %s "$@"\n' "${CC:-/usr/bin/cc}" "${QUICKSTART_CC_FLAGS:-}" >"$work/bin/cc"
chmod +x "$work/bin/cc"

cd "$work" || exit 1
out=$(env -u REDLOCK_CONFIG PATH="$work/bin:$PATH" REDLOCK_MASTERS_DIR="$work/masters" REDLOCK_MASTERS_PORT=0 \
      timeout 120 bash -e -o pipefail ${QUICKSTART_TRACE:+-x} run.sh 2>&1)
rc=$?
printf '%s\n' "$out"
[ "$rc" -eq 0 ] || fail "the quickstart's steps exited $rc"
grep -Eq '^held on [23] of 3 masters for [0-9]+ ms$' <<<"$out" || fail "the C program held no lock"
for want in "I hold the lock" "status 75" "free again" \
            "redlock $(sed -n 's/^#define REDLOCK_VERSION_STRING "\(.*\)"$/\1/p' "$root/include/redlock/redlock.h")"; do
    grep -qF -- "$want" <<<"$out" || fail "the quickstart's output has no \"$want\""
done
[ ! -e "$work/masters" ] || fail "the masters' directory is left after the last step"
echo "quickstart: every step ran as written"
