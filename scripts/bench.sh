#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Reproduce docs/performance.md: five local masters, the raw baseline and
# the library in the same run, the scale table (N = 1..9) and the heap check
# over a million pairs. Takes about ten minutes; arguments go to
# redlock-bench (e.g. --smoke for a quick look, --json for machines).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh >/dev/null
if [ $# -eq 0 ]; then
  set -- --pairs 50000 --seconds 15 --scale --leak-pairs 1000000
fi
exec build/bench/redlock-bench "$@"
