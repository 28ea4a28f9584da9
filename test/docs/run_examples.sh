#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The documentation's complete C programs, compiled and run against real
# masters: every ```c block of the given Markdown files (by default
# README.md, docs/*.md and docs/api/*.md) that defines main() is built
# against BUILD_DIR's library with warnings as errors and run, in a
# scratch directory where redlock.yaml, config/redlock.yaml and
# $REDLOCK_CONFIG name 3 masters of scripts/masters.sh on free ports. A
# program must exit 0 within 10 s (times REDLOCK_TEST_TIME_SCALE, when
# set): a hang is a failure. The other blocks
# (fragments) are scripts/check-doc-examples.sh's, compile-only. The
# masters are stopped however the run ends.
#
#   test/docs/run_examples.sh BUILD_DIR [FILE.md...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run_examples.sh BUILD_DIR [FILE.md...]}" && pwd)
shift
if [ $# -eq 0 ]; then
    set -- "$root"/README.md "$root"/docs/*.md "$root"/docs/api/*.md
fi
work=$(mktemp -d)
cleanup() {
    REDLOCK_MASTERS_DIR=$work/masters timeout 30 "$root/scripts/masters.sh" stop >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

config=$(REDLOCK_MASTERS_DIR=$work/masters REDLOCK_MASTERS_PORT=0 timeout 30 \
         "$root/scripts/masters.sh" start 3 2>"$work/masters.log") || fail "the masters did not start: $(cat "$work/masters.log")"
mkdir -p "$work/run/config"
ln -s "$config" "$work/run/redlock.yaml"
ln -s "$config" "$work/run/config/redlock.yaml"

cc=${CC:-cc}
scale=${REDLOCK_TEST_TIME_SCALE:-1}
[[ "$scale" =~ ^[1-9][0-9]?$ ]] || scale=1
bound=$((10 * scale))
# A build with sanitizers: a program linked with its library needs them too.
# shellcheck disable=SC2206
extra=(${DOC_EXAMPLES_CC_FLAGS:-})
programs=0
fragments=0
failed=0
for md in "$@"; do
    [ -f "$md" ] || fail "no such file: $md"
    "$root/scripts/md-c-blocks.sh" "$md" "$work"
    for block in "$work"/block_*.c; do
        [ -e "$block" ] || continue
        if ! grep -Eq '^int main\(' "$block"; then
            fragments=$((fragments + 1))
            continue
        fi
        programs=$((programs + 1))
        start=$(sed -n '1s/^#line \([0-9]*\).*/\1/p' "$block")
        where="${md#"$root"/}:$start"
        if ! "$cc" -std=c11 -Wall -Wextra -Werror "${extra[@]}" -I "$root/include" -x c "$block" \
               -o "$work/program" -L "$build" -lredlock -lev -Wl,-rpath,"$build" \
               >"$work/cc.log" 2>&1; then
            failed=$((failed + 1))
            echo "FAIL: $where: does not build"
            cat "$work/cc.log"
            continue
        fi
        (cd "$work/run" && REDLOCK_CONFIG=$config timeout -k 2 "$bound" "$work/program") \
            >"$work/out.log" 2>&1 </dev/null
        rc=$?
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            failed=$((failed + 1))
            echo "FAIL: $where: still running after $bound s (a hang)"
            cat "$work/out.log"
        elif [ "$rc" -ne 0 ]; then
            failed=$((failed + 1))
            echo "FAIL: $where: exited $rc"
            cat "$work/out.log"
        else
            echo "ok: $where: $(head -c 200 "$work/out.log" | tr '\n' ' ')"
        fi
    done
done
[ "$programs" -gt 0 ] || fail "no complete program (a block with int main) in: $*"
echo "run-examples: $programs programs run, $failed failed; $fragments fragments left to check-doc-examples.sh"
[ "$failed" -eq 0 ]
