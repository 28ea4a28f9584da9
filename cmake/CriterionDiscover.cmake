# SPDX-License-Identifier: BSD-3-Clause
# Script mode: run EXE --list and write add_test() calls to OUT.
# Criterion prints "suite: N tests" followed by "├── name" / "└── name".
# WRAPPER and LABELS are lists with '|' for ';'; TIMEOUT is already scaled;
# SERIAL true: each test runs alone (RUN_SERIAL).
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
set(content "")
set(suite "")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_]+): [0-9]+ tests?$")
    set(suite "${CMAKE_MATCH_1}")
  elseif(line MATCHES "([A-Za-z0-9_]+)$" AND NOT suite STREQUAL "")
    set(test "${CMAKE_MATCH_1}")
    string(APPEND content
      "add_test([=[${suite}.${test}]=] ${prefix}[=[${EXE}]=] --filter [=[${suite}/${test}]=] --jobs 1 --full-stats)\n"
      "set_tests_properties([=[${suite}.${test}]=] PROPERTIES TIMEOUT ${TIMEOUT} LABELS [=[${labels}]=]"
      " ENVIRONMENT [=[REDLOCK_TEST_TIME_SCALE=${TIME_SCALE}]=]${serial})\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no tests found in ${EXE}")
endif()
file(WRITE "${OUT}" "${content}")
