# SPDX-License-Identifier: BSD-3-Clause
# How tests run. For runs under a slow tool (valgrind, sanitizers):
#
#   REDLOCK_TEST_WRAPPER     a command every test runs under (a ;-list),
#                            e.g. test/valgrind/memcheck.sh; empty: none.
#   REDLOCK_TEST_TIME_SCALE  an integer 1..100 that multiplies every test's
#                            ctest TIMEOUT, and is handed to the tests as
#                            REDLOCK_TEST_TIME_SCALE in their environment:
#                            the test fleet then stretches the client's
#                            timeouts and the tests' own time bounds by it
#                            (test/support/fleet.h). 1: as written.
#   REDLOCK_TEST_PER         "test" (default): each Criterion test is a
#                            ctest test of its own, SUITE.TEST; "suite":
#                            each Criterion suite is one, its tests
#                            run one after another in one process. A test
#                            started by itself costs a process start and
#                            exit, which sanitizers and valgrind make dear
#                            (half of an ASan run's CPU); their CI passes
#                            run suites.
#   REDLOCK_TEST_SKIP        a ;-list of SUITE/TEST globs left out (suite
#                            mode; per test, ctest -E does it).
#                            A suite's test is named "SUITE.* (EXE)".
set(REDLOCK_TEST_PER "test" CACHE STRING
  "test: a ctest test per Criterion test; suite: one per Criterion suite")
set_property(CACHE REDLOCK_TEST_PER PROPERTY STRINGS test suite)
if(NOT REDLOCK_TEST_PER MATCHES "^(test|suite)$")
  message(FATAL_ERROR "REDLOCK_TEST_PER must be test or suite, not '${REDLOCK_TEST_PER}'")
endif()
set(REDLOCK_TEST_SKIP "" CACHE STRING
  "SUITE/TEST globs left out when REDLOCK_TEST_PER is suite (a ;-list)")
set(REDLOCK_TEST_WRAPPER "" CACHE STRING
  "Command every test runs under (a ;-list), e.g. a valgrind wrapper")
set(REDLOCK_TEST_TIME_SCALE 1 CACHE STRING
  "Multiplies test timeouts and the tests' own time bounds (1..100), for slow tools")
if(NOT REDLOCK_TEST_TIME_SCALE MATCHES "^([1-9][0-9]?|100)$")
  message(FATAL_ERROR "REDLOCK_TEST_TIME_SCALE must be an integer from 1 to 100, "
    "not '${REDLOCK_TEST_TIME_SCALE}'")
endif()

# redlock_add_test(NAME COMMAND <program> <args>... TIMEOUT <seconds>
#                  [LABELS <label>...] [RUN_SERIAL]
#                  [RESOURCE_LOCK <name>] [COST <n>])
# add_test() under the wrapper, with the scaled timeout and the time scale
# in the environment. RESOURCE_LOCK keeps the tests that name it from
# running at the same time as each other, not from running beside the rest
# (RUN_SERIAL: alone); COST starts a long test early. COMMAND takes a path or generator expression
# ($<TARGET_FILE:...>), not a bare target name.
function(redlock_add_test name)
  cmake_parse_arguments(ARG "RUN_SERIAL" "TIMEOUT;RESOURCE_LOCK;COST" "COMMAND;LABELS" ${ARGN})
  if(NOT ARG_COMMAND OR NOT ARG_TIMEOUT)
    message(FATAL_ERROR "redlock_add_test(${name}): COMMAND and TIMEOUT are required")
  endif()
  add_test(NAME ${name} COMMAND ${REDLOCK_TEST_WRAPPER} ${ARG_COMMAND})
  math(EXPR timeout "${ARG_TIMEOUT} * ${REDLOCK_TEST_TIME_SCALE}")
  set_tests_properties(${name} PROPERTIES
    TIMEOUT ${timeout}
    LABELS "${ARG_LABELS}"
    ENVIRONMENT "REDLOCK_TEST_TIME_SCALE=${REDLOCK_TEST_TIME_SCALE}")
  if(ARG_RUN_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
  if(ARG_RESOURCE_LOCK)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK ${ARG_RESOURCE_LOCK})
  endif()
  if(ARG_COST)
    set_tests_properties(${name} PROPERTIES COST ${ARG_COST})
  endif()
endfunction()
