#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# memcheck.sh PROGRAM [ARGS...]: run a test under valgrind's memcheck, as
# REDLOCK_TEST_WRAPPER (cmake/TestRun.cmake; scripts/valgrind.sh sets it up).
#
# Every process of ours is checked: the test program, the processes it
# forks (Criterion runs each test in a child of its runner, which it
# execs), and the programs they exec (the redlock tool, the CLI tests'
# helper commands), except the CLI tests' own process (below). Not
# checked, as not ours: redis-server, and the system programs the tests
# and the fleet run (rm, sh, true, ...).
#
# Errors: any memcheck error, and any definitely or indirectly lost block,
# counts; a process with errors exits 1. Possibly lost and still reachable
# blocks are not errors (Criterion's runner and libev keep memory until
# exit by design). No suppressions.
#
# REDLOCK_VALGRIND_LOG_DIR (optional): write each process's report to
# DIR/vg.PID instead of stderr, so that scripts/valgrind.sh can find errors
# in processes whose exit status no test looks at. VALGRIND_OPTS adds
# options (e.g. --track-origins=yes).
set -eu

# The CLI tests' own process watches the tool with pidfd_open(2), which
# valgrind 3.19 does not implement (the call fails with ENOSYS). It is test
# code; the code under test there is the tool. So it runs as is, and each
# tool it starts runs under this wrapper (cli_harness.h).
case "$(basename "$1")" in
  cli_tests)
    REDLOCK_TEST_TOOL_WRAPPER="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
    export REDLOCK_TEST_TOOL_WRAPPER
    exec "$@"
    ;;
esac

# Each process pays valgrind's start-up (about 0.8 s of CPU here), and the
# suite starts some 2,000: no gdbserver and no inlined frames in reports
# take 7 % off the run.
skip='*redis-server*,*/rm,*/sh,*/dash,*/bash,*/env,*/true,*/false,*/echo,*/printf,*/sleep,*/cat'
log=--log-fd=2
if [ -n "${REDLOCK_VALGRIND_LOG_DIR:-}" ]; then
  log="--log-file=$REDLOCK_VALGRIND_LOG_DIR/vg.%p"
fi

# cli_run_closed() (cli_harness.h): the tool is to start with the fds in
# REDLOCK_TEST_CLOSE_FDS (bit N: fd N) closed. valgrind would open its
# --log-file on the lowest fd free and leave it open to the tool: the report
# goes to fd 9, opened here, and those fds are closed just before the exec.
closed=${REDLOCK_TEST_CLOSE_FDS:-0}
unset REDLOCK_TEST_CLOSE_FDS
if [ "$closed" != 0 ]; then
  if [ -n "${REDLOCK_VALGRIND_LOG_DIR:-}" ]; then
    exec 9>"$REDLOCK_VALGRIND_LOG_DIR/vg.$$"
  else
    exec 9>&2
  fi
  log=--log-fd=9
  [ $((closed & 1)) = 0 ] || exec 0<&-
  [ $((closed & 2)) = 0 ] || exec 1>&-
  [ $((closed & 4)) = 0 ] || exec 2>&-
fi
exec valgrind --tool=memcheck --quiet --vgdb=no --read-inline-info=no --leak-check=full --show-leak-kinds=definite,indirect \
  --errors-for-leak-kinds=definite,indirect --error-exitcode=1 --num-callers=40 \
  --trace-children=yes --trace-children-skip="$skip" "$log" "$@"
