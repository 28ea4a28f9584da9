#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and run the whole test suite: unit tests, and integration tests
# against real redis-server masters that the tests start and stop themselves.
# It installs what the tests need first (scripts/deps.sh: the checkers and
# tools the demo does without; nothing when all is there).
# Extra arguments go to cmake's configure step (e.g. -DREDLOCK_WERROR=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh "$@"
ctest --test-dir build --output-on-failure -j "$(nproc)"
