#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and run the whole test suite: unit tests, and integration tests
# against real redis-server masters that the tests start and stop themselves.
# It installs what the tests need first (scripts/deps.sh: the checkers and
# tools the demo does without; nothing when all is there).
# Extra arguments go to cmake's configure step (e.g. -DREDLOCK_WERROR=ON).
#
# The model checks (ctest label model: spin, minutes of CPU and no clock to
# keep) run beside the rest at the lowest priority (scripts/check-model.sh
# runs them under nice), in a ctest of their own with its own slots: the
# other tests mostly wait on their masters and timers, and take the CPU
# first when they need it. Their output follows the other tests'.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh "$@"
jobs=$(nproc)
models_log=build/Testing/models.log
mkdir -p build/Testing
ctest --test-dir build --output-on-failure -j "$jobs" -L model >"$models_log" 2>&1 &
models=$!
# shellcheck disable=SC2317 # called by the trap
stop_models() { kill -TERM "$models" 2>/dev/null || true; }
trap stop_models INT TERM
status=0
ctest --test-dir build --output-on-failure -j "$jobs" -LE model || status=$?
# REDLOCK_SUITE_DONE: a file that gets these tests' status while the model
# checks may still run (CI starts its next pass then).
[ -z "${REDLOCK_SUITE_DONE:-}" ] || echo "$status" >"$REDLOCK_SUITE_DONE"
models_status=0
wait "$models" || models_status=$?
echo "==== model checks (ctest -L model)"
cat "$models_log"
[ "$models_status" = 0 ] || status=$models_status
exit "$status"
