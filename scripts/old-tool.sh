#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the 0.2.0 release's redlock tool from this repository's history,
# for the tests that check that it and this version share a lock
# (test/cli/test_cli_interop.c). Nothing is installed.
#
#   scripts/old-tool.sh DIR
#
# Unpacks the sources of the commit that made 0.2.0 into DIR/src, builds
# its redlock-cli target in DIR/build, and prints the tool's version. A
# tool already built there is kept. Needs the history (a clone made
# without --depth) and the build's packages (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 64; }
out=$1
rev=6782e5c # "Version 0.2.0"
tool="$out/build/redlock"
if [ -x "$tool" ] && "$tool" --version 2>/dev/null | grep -qx 'redlock 0\.2\.0'; then
  "$tool" --version
  exit 0
fi
git cat-file -e "$rev^{commit}" 2>/dev/null ||
  { echo "old-tool: commit $rev (0.2.0) is not in this clone's history; clone without --depth" >&2
    exit 1; }
rm -rf "$out/src" "$out/build"
mkdir -p "$out/src"
git archive "$rev" | tar -x -C "$out/src"
if ! cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_RULE_MESSAGES=OFF >"$out/configure.log" 2>&1; then
  cat "$out/configure.log" >&2
  exit 1
fi
if ! cmake --build "$out/build" --target redlock-cli -j "$(nproc)" >"$out/build.log" 2>&1; then
  tail -50 "$out/build.log" >&2
  exit 1
fi
"$tool" --version
