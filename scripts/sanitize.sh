#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build and test under compiler sanitizers (docs/sanitizers.md).
#
#   scripts/sanitize.sh asan [CTEST-ARGS...]
#       build-asan: AddressSanitizer (with LeakSanitizer) and
#       UndefinedBehaviorSanitizer; runs the whole ctest suite but the
#       model checks (spin, not our code).
#   scripts/sanitize.sh asan --hiredis1 [CTEST-ARGS...]
#       The same, built against hiredis 1.x (scripts/hiredis1-fetch.sh:
#       Debian 13's, with TLS) in build-asan-hiredis1: the TLS tests run
#       too. CI's pass: one run covers AddressSanitizer and hiredis 1.x.
#   scripts/sanitize.sh tsan [CTEST-ARGS...]
#       build-tsan: ThreadSanitizer; runs the tests that are not Criterion
#       tests (Criterion's runner cannot start under TSan): the thread tests
#       (test/threads), the failover suite, the bench smoke test and the
#       C++ face's tests (test/cpp).
#
# After the mode (and --hiredis1), --build-only configures and builds, and
# --no-build runs the tests of a tree built so (CI builds beside other
# work). CTEST-ARGS narrow the run (e.g. -R threads). Every build uses
# -DREDLOCK_WERROR=ON and -O1 -g. Fails on any failed test and on any
# sanitizer report, also one from a process whose exit status no test looks
# at (a failover worker, a forked helper): every report is written to
# BUILD/sanitizer-logs/ and printed at the end.
#
# Environment:
#   CC                       compiler for a new build directory (default: cc)
#   JOBS                     tests run at once (default: 2)
#   REDLOCK_TEST_TIME_SCALE  stretches the tests' timeouts and time bounds
#                            (cmake/TestRun.cmake; default: 1, 3 under TSan)
#   ASAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS
#                            appended to the options below
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in
  asan)
    build="build-asan"
    sanitize=address,undefined
    ;;
  tsan)
    build="build-tsan"
    sanitize=thread
    ;;
  *)
    echo "usage: $0 asan [--hiredis1]|tsan [--build-only|--no-build] [CTEST-ARGS...]" >&2
    exit 2
    ;;
esac
shift
hiredis1=0
if [ "$mode" = asan ] && [ "${1:-}" = --hiredis1 ]; then
  hiredis1=1
  build="build-asan-hiredis1"
  shift
fi
phase=all
case "${1:-}" in
  --build-only) phase=build; shift ;;
  --no-build) phase="tests"; shift ;;
esac

jobs=${JOBS:-2}
# TSan slows the threads tests' clients several times over: their timeouts
# (100 ms a command) are stretched to match.
default_scale=1
[ "$mode" = tsan ] && default_scale=3
scale=${REDLOCK_TEST_TIME_SCALE:-$default_scale}
logs="$PWD/$build/sanitizer-logs"

start=$(date +%s)
pkg_config_path=${PKG_CONFIG_PATH:-}
if [ "$hiredis1" = 1 ]; then
  mkdir -p "$build"
  if [ "$phase" = tests ]; then
    # Built by --build-only: the hiredis it unpacked.
    libdir=$(sed -n 's/^Libs: -L\([^ ]*\) .*/\1/p' "$build/hiredis1/pkgconfig/hiredis.pc")
  else
    libdir=$(scripts/hiredis1-fetch.sh "$build/hiredis1" | tail -n 1)
  fi
  pkg_config_path="$PWD/$build/hiredis1/pkgconfig"
  export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# Criterion suites run as one test each (cmake/TestRun.cmake): a process
# start under ASan costs as much as most tests. The minute-long soak of
# masters a little fast holds one lock on paths the other clock tests
# take: the main suite runs it.
# TSan registers no Criterion test: only the targets of its tests are built.
targets=()
[ "$mode" = tsan ] && targets=(--target threads_tests redlock-failover redlock-bench
  redlock-hold-bench redlock-semaphore-bench test_cpp cpp_lock_example with-masters)
if [ "$phase" != tests ]; then
  PKG_CONFIG_PATH="$pkg_config_path" \
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
    -DREDLOCK_SANITIZE="$sanitize" -DREDLOCK_WERROR=ON -DREDLOCK_SERVER_MATRIX=OFF \
    -DCMAKE_RULE_MESSAGES=OFF \
    -DREDLOCK_TEST_TIME_SCALE="$scale" -DREDLOCK_TEST_WRAPPER= -DREDLOCK_TEST_PER=suite \
    -DREDLOCK_TEST_SKIP="clock/masters_a_little_fast_within_the_allowance*" >/dev/null
  cmake --build "$build" -j "$jobs" "${targets[@]}"
fi
built=$(date +%s)
if [ "$hiredis1" = 1 ]; then
  scripts/hiredis1-verify.sh "$build" "$libdir"
fi
if [ "$phase" = build ]; then
  echo "sanitize.sh $mode: built in $((built - start)) s"
  exit 0
fi

rm -rf "$logs"
mkdir -p "$logs"
# halt_on_error: the first report ends the process (UBSan is built not to
# recover). log_path: reports go to files, one per process, so that none is
# lost in a child's stderr; log_exe_name puts the program's name in them.
if [ "$mode" = asan ]; then
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$logs/asan:log_exe_name=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/ubsan:log_exe_name=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
  # The model checks run spin, not our code, and the docs checks scripts
  # over the sources: the main suite runs them. The load tests (many locks
  # at once) are too heavy under ASan. The failover suite's runs (a minute
  # of five masters and clients at full load) run plain and under TSan
  # (its workers share a client among threads); the faults they inject
  # are the integration suites' too (stopped_master, restart, cleanup),
  # which run here.
  labels=(-LE 'model|load|docs' -E '^failover\.')
else
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$logs/tsan:log_exe_name=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
  # Only these are registered in a TSan build; named to say so.
  labels=(-L 'threads|failover|bench|cpp')
fi

status=0
ctest --test-dir "$build" --output-on-failure -j "$jobs" "${labels[@]}" "$@" || status=$?
end=$(date +%s)

# A log holding nothing but LeakSanitizer's note that a thread was still
# running during the leak check (a process exiting while one of its
# threads winds down) reports nothing: shown, not counted.
benign='^(==[^=]+)?==[0-9]+==Running thread [0-9]+ was not suspended\. False leaks are possible\.$'
reports=0
for f in $(find "$logs" -type f | sort); do
  if ! grep -qvE "$benign" "$f"; then
    echo "note: $(basename "$f"): $(head -1 "$f")"
    continue
  fi
  echo "==== $f"
  cat "$f"
  reports=$((reports + 1))
done
if [ "$reports" -gt 0 ]; then
  echo "sanitize.sh $mode: sanitizer reports above ($reports processes)" >&2
  status=1
fi
echo "sanitize.sh $mode: build $((built - start)) s, tests $((end - built)) s," \
  "$([ "$status" = 0 ] && echo clean || echo FAILED)"
exit "$status"
