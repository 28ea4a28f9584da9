# SPDX-License-Identifier: BSD-3-Clause
# Register every test of a Criterion executable as its own ctest test,
# named SUITE.TEST, so ctest shows each one (and can run them in parallel).
# (REDLOCK_TEST_PER=suite: each suite as "SUITE.* (EXE)", cmake/TestRun.cmake.)
# The list is read from `EXE --list` after each build, the way
# gtest_discover_tests works. Tests run as redlock_add_test() would run them
# (cmake/TestRun.cmake): under REDLOCK_TEST_WRAPPER, with the timeout
# multiplied by REDLOCK_TEST_TIME_SCALE.
#
# Not under ThreadSanitizer: Criterion's runner maps its shared arena
# (BoxFort) at random fixed addresses between 0x200000000000 and
# 0x7f0000000000, nearly all of which TSan reserves for its shadow and meta
# memory, so most runs abort with "Could not initialize inheritable arena".
# The blocking API's multi-threaded tests (test/threads) run there instead.
function(redlock_add_criterion_tests target)
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "LABELS" ${ARGN})
  if("thread" IN_LIST REDLOCK_SANITIZERS)
    message(STATUS "${target}: not registered with ctest under ThreadSanitizer")
    return()
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  math(EXPR timeout "${ARG_TIMEOUT} * ${REDLOCK_TEST_TIME_SCALE}")
  # Lists travel to the script with '|' for ';' (a -D value cannot hold ';'
  # through add_custom_command).
  string(REPLACE ";" "|" wrapper "${REDLOCK_TEST_WRAPPER}")
  string(REPLACE ";" "|" labels "${ARG_LABELS}")
  string(REPLACE ";" "|" skip "${REDLOCK_TEST_SKIP}")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  # The list is written after a link: when how tests are registered changed
  # since (REDLOCK_TEST_PER, say, or this script), the executable goes, to
  # be linked again.
  file(MD5 "${PROJECT_SOURCE_DIR}/cmake/CriterionDiscover.cmake" discover)
  set(args "${REDLOCK_TEST_PER}|${skip}|${wrapper}|${timeout}|${labels}|${ARG_SERIAL}|${discover}")
  set(args_file "${include_file}.args")
  if(EXISTS "${args_file}")
    file(READ "${args_file}" previous)
    if(NOT previous STREQUAL args)
      file(REMOVE "${include_file}" "${CMAKE_CURRENT_BINARY_DIR}/${target}")
    endif()
  endif()
  file(WRITE "${args_file}" "${args}")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}"
      -D "EXE=$<TARGET_FILE:${target}>"
      -D "OUT=${include_file}"
      -D "TIMEOUT=${timeout}"
      -D "LABELS=${labels}"
      -D "WRAPPER=${wrapper}"
      -D "TIME_SCALE=${REDLOCK_TEST_TIME_SCALE}"
      -D "SERIAL=${ARG_SERIAL}"
      -D "PER=${REDLOCK_TEST_PER}"
      -D "SKIP=${skip}"
      -P "${PROJECT_SOURCE_DIR}/cmake/CriterionDiscover.cmake"
    VERBATIM)
  # ctest reads the list through a guard: a tree where only some programs
  # were built (scripts/valgrind.sh builds the two it runs) registers the
  # others as one failing test each, "TARGET.not_built", with no label,
  # instead of failing to start.
  set(guard_file "${include_file}.guard")
  file(WRITE "${guard_file}"
    "if(EXISTS [=[${include_file}]=])\n"
    "  include([=[${include_file}]=])\n"
    "else()\n"
    "  add_test([=[${target}.not_built]=] [=[${target}-was-not-built]=])\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${guard_file}")
endfunction()
