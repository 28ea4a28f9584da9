#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and test under valgrind's memcheck (docs/sanitizers.md).
#
#   scripts/valgrind.sh [--build-only|--no-build] [CTEST-ARGS...]
#
# --build-only configures and builds; --no-build runs the tests of a tree
# built so (CI builds beside other work). With the default TESTS and
# LABELS and no CTEST-ARGS, only the two programs those tests run are
# built.
# build-valgrind: no sanitizer, -O1 -g, warnings as errors. Every test runs
# under test/valgrind/memcheck.sh (REDLOCK_TEST_WRAPPER), with the tests'
# time stretched (REDLOCK_TEST_TIME_SCALE, default 10), each Criterion
# suite as one test (its runner's start under valgrind is paid once a
# suite, not once a test: a third of the CPU). AddressSanitizer
# runs the whole suite (scripts/sanitize.sh asan); memcheck adds what it
# alone sees: reads of uninitialised memory, and the real, uninstrumented
# binaries with the system's libraries. It runs the suites where that
# matters most, connections and timers and threads (TESTS, a ctest -R
# regex): a master's connection over its life, stopped masters, cleanup
# and owed releases, the send queue, the subscriber connection of waiting
# by notification, the auto-extension timers' schedule, the blocking
# client and its threads, freeing the client from callbacks. The rest of
# the watchdog's tests, the rounds beside a stopped master and the tool's
# signal and descriptor tests run under ASan (CI's time budget: each of
# them costs seconds of CPU here). TESTS=. with
# LABELS='integration|cli|threads' is every test of those labels (about
# twenty minutes); CTEST-ARGS go to ctest (a -R there takes the place of
# TESTS).
#
# Fails on any failed test and on any memcheck error or definite or
# indirect leak in any process of ours: each process writes its report to
# build-valgrind/valgrind-logs/vg.PID (empty when clean), and every
# non-empty one is printed at the end. Criterion does not fail a test whose
# worker process exits with valgrind's error status after the test passed,
# so the logs, not the exit statuses, are what count.
#
# Environment: JOBS (tests at once, default 2), TESTS (a ctest -R regex,
# default the suites above), LABELS (a ctest label regex, default
# integration|cli|threads), REDLOCK_TEST_TIME_SCALE, VALGRIND_OPTS (more
# valgrind options, e.g. --track-origins=yes).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v valgrind >/dev/null; then
  echo "valgrind.sh: valgrind not found (scripts/deps.sh installs it)" >&2
  exit 2
fi

build="build-valgrind"
jobs=${JOBS:-2}
labels=${LABELS:-integration|cli|threads}
# Quoted: unquoted, the default's backslash went and its dot matched any
# character (stopped_master_rounds ran too).
default_tests='^(connection|stopped_master|cleanup|send_queue|notify|watchdog_schedule|sync|blocking|free_in_callback|threads)\.'
tests=${TESTS:-$default_tests}
scale=${REDLOCK_TEST_TIME_SCALE:-10}
logs="$PWD/$build/valgrind-logs"

phase=all
case "${1:-}" in
  --build-only) phase=build; shift ;;
  --no-build) phase="tests"; shift ;;
esac
# The default suites are all in two programs: only they are built (half
# the build's CPU). With TESTS, LABELS or ctest arguments, everything is.
targets=()
[ -n "${TESTS:-}${LABELS:-}" ] || [ $# -gt 0 ] || targets=(--target integration_tests threads_tests)

start=$(date +%s)
# One test at a time, not a suite (cmake/TestRun.cmake): at this time
# scale a suite of the watchdog's takes minutes on its own, and the run
# took twice as long waiting for the last ones.
if [ "$phase" != tests ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
    -DREDLOCK_SANITIZE= -DREDLOCK_WERROR=ON -DREDLOCK_SERVER_MATRIX=OFF -DCMAKE_RULE_MESSAGES=OFF \
    -DREDLOCK_TEST_WRAPPER="$PWD/test/valgrind/memcheck.sh" \
    -DREDLOCK_TEST_TIME_SCALE="$scale" -DREDLOCK_TEST_PER=suite >/dev/null
  cmake --build "$build" -j "$jobs" "${targets[@]}"
fi
built=$(date +%s)
if [ "$phase" = build ]; then
  echo "valgrind.sh: built in $((built - start)) s"
  exit 0
fi

rm -rf "$logs"
mkdir -p "$logs"
export REDLOCK_VALGRIND_LOG_DIR="$logs"
status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" -L "$labels" -R "$tests" "$@" ||
  status=$?
end=$(date +%s)

reports=0
for f in $(find "$logs" -type f -size +0 | sort); do
  echo "==== $f"
  cat "$f"
  reports=$((reports + 1))
done
if [ "$reports" -gt 0 ]; then
  echo "valgrind.sh: memcheck reports above ($reports processes)" >&2
  status=1
fi
echo "valgrind.sh: $(find "$logs" -type f | wc -l) process logs; build $((built - start)) s," \
  "tests $((end - built)) s, $([ "$status" = 0 ] && echo clean || echo FAILED)"
exit "$status"
