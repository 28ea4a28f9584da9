# SPDX-License-Identifier: BSD-3-Clause
# Script mode: run EXE --list and write add_test() calls to OUT.
# Criterion prints "suite: N tests" followed by "├── name" / "└── name".
# Without --full-stats: with it, Criterion sends every passing assertion
# to its runner, and a loop of 100,000 checks took 46 s instead of 0.6 s.
# WRAPPER and LABELS are lists with '|' for ';'; TIMEOUT is already scaled;
# SERIAL true: each test runs alone (RUN_SERIAL). PER "suite": a ctest test
# per suite, "SUITE.* (EXE)", else per test (cmake/TestRun.cmake); SKIP: SUITE/GLOB
# entries left out, with '|' for ';' (a GLOB of names and '*').
cmake_policy(VERSION 3.16)
execute_process(COMMAND "${EXE}" --list
  OUTPUT_VARIABLE listing RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --list failed (${rc}): ${err}")
endif()
string(REPLACE "|" ";" labels "${LABELS}")
string(REPLACE "|" ";" wrapper "${WRAPPER}")
set(prefix "")
foreach(word IN LISTS wrapper)
  string(APPEND prefix "[=[${word}]=] ")
endforeach()
if(NOT TIME_SCALE)
  set(TIME_SCALE 1)
endif()
string(REPLACE "\n" ";" lines "${listing}")
set(serial "")
if(SERIAL)
  set(serial " RUN_SERIAL TRUE")
endif()
string(REPLACE "|" ";" skip "${SKIP}")

# The tests of SUITE that SKIP leaves out, as a Criterion glob alternation
# ("a*|b") in skipped_globs, and as a CMake regex in skipped_regex.
function(skipped_in suite)
  set(globs "")
  set(regex "")
  foreach(entry IN LISTS skip)
    if(entry MATCHES "^([A-Za-z0-9_]+)/([A-Za-z0-9_*]+)$" AND CMAKE_MATCH_1 STREQUAL suite)
      set(glob "${CMAKE_MATCH_2}")
      string(REPLACE "*" ".*" re "${glob}")
      if(globs STREQUAL "")
        set(globs "${glob}")
        set(regex "^(${re}")
      else()
        string(APPEND globs "|${glob}")
        string(APPEND regex "|${re}")
      endif()
    elseif(NOT entry MATCHES "^([A-Za-z0-9_]+)/([A-Za-z0-9_*]+)$")
      message(FATAL_ERROR "REDLOCK_TEST_SKIP: '${entry}' is not SUITE/GLOB")
    endif()
  endforeach()
  if(NOT regex STREQUAL "")
    string(APPEND regex ")$")
  endif()
  set(skipped_globs "${globs}" PARENT_SCOPE)
  set(skipped_regex "${regex}" PARENT_SCOPE)
endfunction()

set(content "")
set(count 0)

# A suite as one test: its tests one after another in one process, for as
# long as they would have had one by one (at least TIMEOUT, at most half an
# hour unless TIMEOUT is longer).
function(add_suite suite tests)
  if(suite STREQUAL "" OR tests EQUAL 0)
    return()
  endif()
  skipped_in("${suite}")
  if(skipped_globs STREQUAL "")
    set(filter "${suite}/*")
  else()
    set(filter "${suite}/!(${skipped_globs})")
  endif()
  math(EXPR timeout "${TIMEOUT} * ${tests}")
  set(cap 1800)
  if(TIMEOUT GREATER cap)
    set(cap ${TIMEOUT})
  endif()
  if(timeout GREATER cap)
    set(timeout ${cap})
  endif()
  # Named with the executable too: two of them may have a suite of one
  # name (unit and integration tests of the send queue), and properties
  # are set by name.
  get_filename_component(exe_name "${EXE}" NAME)
  set(name "${suite}.* (${exe_name})")
  string(APPEND content
    "add_test([=[${name}]=] ${prefix}[=[${EXE}]=] --filter [=[${filter}]=] --jobs 1)\n"
    "set_tests_properties([=[${name}]=] PROPERTIES TIMEOUT ${timeout} LABELS [=[${labels}]=]"
    " ENVIRONMENT [=[REDLOCK_TEST_TIME_SCALE=${TIME_SCALE}]=]${serial})\n")
  set(content "${content}" PARENT_SCOPE)
endfunction()

set(suite "")
set(in_suite 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_]+): [0-9]+ tests?$")
    if(PER STREQUAL "suite")
      add_suite("${suite}" ${in_suite})
    endif()
    set(suite "${CMAKE_MATCH_1}")
    set(in_suite 0)
    skipped_in("${suite}")
  elseif(line MATCHES "([A-Za-z0-9_]+)$" AND NOT suite STREQUAL "")
    set(test "${CMAKE_MATCH_1}")
    math(EXPR count "${count} + 1")
    math(EXPR in_suite "${in_suite} + 1")
    if(PER STREQUAL "suite" OR (NOT skipped_regex STREQUAL "" AND test MATCHES "${skipped_regex}"))
      continue()
    endif()
    string(APPEND content
      "add_test([=[${suite}.${test}]=] ${prefix}[=[${EXE}]=] --filter [=[${suite}/${test}]=] --jobs 1)\n"
      "set_tests_properties([=[${suite}.${test}]=] PROPERTIES TIMEOUT ${TIMEOUT} LABELS [=[${labels}]=]"
      " ENVIRONMENT [=[REDLOCK_TEST_TIME_SCALE=${TIME_SCALE}]=]${serial})\n")
  endif()
endforeach()
if(PER STREQUAL "suite")
  add_suite("${suite}" ${in_suite})
endif()
if(count EQUAL 0)
  message(FATAL_ERROR "no tests found in ${EXE}")
endif()
file(WRITE "${OUT}" "${content}")
