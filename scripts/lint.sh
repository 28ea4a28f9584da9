#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Static analysis: cppcheck and clang-tidy over every C file the build
# compiles (library, tool, tests, bench, demo), with the checked-in
# configuration (.clang-tidy files, lint/). Fails on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-lint
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null

echo "cppcheck $(cppcheck --version | awk '{print $2}')"
cppcheck --project="$build/compile_commands.json" --library=lint/criterion.cfg \
  --enable=warning,performance,portability,style --inline-suppr \
  --error-exitcode=1 --quiet -j "$(nproc)"
echo "cppcheck: clean"

echo "$(clang-tidy --version | grep -i version | head -1 | sed 's/^ *//')"
if ! run-clang-tidy -p "$build" -j "$(nproc)" -quiet >"$build/clang-tidy.log" 2>&1; then
  grep -E "(warning|error): |note: " "$build/clang-tidy.log" | sed 's/\x1b\[[0-9;]*m//g' | head -200
  echo "clang-tidy: findings above (all of it in $build/clang-tidy.log)" >&2
  exit 1
fi
echo "clang-tidy: clean"
