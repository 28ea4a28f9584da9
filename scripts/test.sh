#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and run the whole test suite: unit tests, and integration tests
# against real redis-server masters that the tests start and stop themselves.
# It installs what the tests need first (scripts/deps.sh: the checkers and
# tools the demo does without; nothing when all is there).
# Extra arguments go to cmake's configure step of the plain build (e.g.
# -DREDLOCK_WERROR=ON).
#
# Every test runs once, in the build that judges it best
# (docs/sanitizers.md, "What runs where"):
#  - under AddressSanitizer and UndefinedBehaviorSanitizer, built against
#    hiredis 1.x (scripts/sanitize.sh asan --hiredis1; Debian 12 ships 0.14,
#    which the plain build uses): the unit, integration, CLI, TLS, thread,
#    C++, metrics and bench tests, every code path of the library and the
#    tool;
#  - on the plain build (build/: what the demo and users run): the tests
#    that time the real thing or look at the tree rather than at memory:
#    the failover runs (labels failover), the server matrix (servers), the
#    load tests, the docs checks, the minute-long soak of masters a little
#    fast, and the model checks (spin).
# The model checks (ctest label model: minutes of CPU and no clock to keep)
# run beside the rest at the lowest priority (scripts/check-model.sh runs
# them under nice), in a ctest of their own: the other tests mostly wait
# on their masters and timers, and take the CPU first when they need it.
# Their output follows the other tests'. The ASan build is made while the
# plain build's tests run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
# Configured first: the model checks need no build, and start before it
# (they end last).
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
jobs=$(nproc)
mkdir -p build/Testing
models_log=build/Testing/models.log
# At nice 19, in a process group of their own (its id in the file
# REDLOCK_MODELS_PGID names, if set), so that a caller can raise their
# priority once the tests that keep time are done (CI does).
MODEL_NICE=0 nice -n 19 setsid ctest --test-dir build --output-on-failure -j "$jobs" -L model \
  >"$models_log" 2>&1 &
models=$!
[ -z "${REDLOCK_MODELS_PGID:-}" ] || echo "$models" >"$REDLOCK_MODELS_PGID"
# shellcheck disable=SC2317 # called by the trap
stop_models() { kill -TERM -- "-$models" 2>/dev/null || true; }
trap stop_models INT TERM
if ! scripts/build.sh "$@"; then
  stop_models
  exit 1
fi
asan_build_log=build/Testing/asan-build.log
nice -n 5 scripts/sanitize.sh asan --hiredis1 --build-only >"$asan_build_log" 2>&1 &
asan_build=$!
# shellcheck disable=SC2317 # called by the trap
stop_background() {
  kill -TERM -- "-$models" 2>/dev/null || true
  kill -TERM "$asan_build" "${soak:-}" 2>/dev/null || true
}
trap stop_background INT TERM
status=0
echo "==== the plain build's tests: failover, servers, load, docs"
# The soak (a minute of one lock held, mostly waiting) beside them.
soak_log=build/Testing/soak.log
ctest --test-dir build --output-on-failure -R '^clock\.masters_a_little_fast' >"$soak_log" 2>&1 &
soak=$!
ctest --test-dir build --output-on-failure -j "$jobs" -L '^(failover|servers|load|docs)$' ||
  status=$?
wait "$soak" || status=$?
cat "$soak_log"
asan_status=0
wait "$asan_build" || asan_status=$?
if [ "$asan_status" != 0 ]; then
  cat "$asan_build_log"
  echo "test.sh: the ASan build failed" >&2
  status=$asan_status
else
  echo "==== the rest under ASan and UBSan, built against hiredis 1.x"
  scripts/sanitize.sh asan --hiredis1 --no-build || status=$?
fi
# REDLOCK_SUITE_DONE: a file that gets these tests' status while the model
# checks may still run (CI starts its next steps then).
[ -z "${REDLOCK_SUITE_DONE:-}" ] || echo "$status" >"$REDLOCK_SUITE_DONE"
models_status=0
wait "$models" || models_status=$?
echo "==== model checks (ctest -L model)"
cat "$models_log"
[ "$models_status" = 0 ] || status=$models_status
exit "$status"
