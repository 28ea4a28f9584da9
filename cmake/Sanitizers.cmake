# SPDX-License-Identifier: BSD-3-Clause
# REDLOCK_SANITIZE: build every target (library, tool, tests, helpers,
# bench) with compiler sanitizers. A comma-separated list of
#   address    AddressSanitizer (with LeakSanitizer)
#   undefined  UndefinedBehaviorSanitizer (plus float-cast-overflow, which
#              GCC leaves out of "undefined" although it is undefined in C)
#   thread     ThreadSanitizer (not together with address)
# e.g. -DREDLOCK_SANITIZE=address,undefined or -DREDLOCK_SANITIZE=thread.
# Empty (the default): no sanitizer. Every report is fatal: UBSan does not
# recover (-fno-sanitize-recover=all), and ASan and TSan stop at the first
# report when run with halt_on_error=1 (scripts/sanitize.sh).
#
# Sets REDLOCK_SANITIZERS (the validated list) for the rest of the build.
set(REDLOCK_SANITIZE "" CACHE STRING
  "Sanitizers for every target: address,undefined | thread | ... (empty: none)")

set(REDLOCK_SANITIZERS "")
if(NOT REDLOCK_SANITIZE STREQUAL "")
  string(REPLACE "," ";" _redlock_requested "${REDLOCK_SANITIZE}")
  foreach(_s IN LISTS _redlock_requested)
    string(STRIP "${_s}" _s)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "REDLOCK_SANITIZE: unknown sanitizer '${_s}' in "
        "'${REDLOCK_SANITIZE}' (use address, undefined, thread, comma-separated)")
    endif()
    list(APPEND REDLOCK_SANITIZERS "${_s}")
  endforeach()
  list(REMOVE_DUPLICATES REDLOCK_SANITIZERS)
  if("address" IN_LIST REDLOCK_SANITIZERS AND "thread" IN_LIST REDLOCK_SANITIZERS)
    message(FATAL_ERROR "REDLOCK_SANITIZE: address and thread cannot be combined; "
      "build them separately")
  endif()
  if(NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "REDLOCK_SANITIZE needs GCC or Clang (not ${CMAKE_C_COMPILER_ID})")
  endif()

  set(_redlock_checks ${REDLOCK_SANITIZERS})
  if("undefined" IN_LIST REDLOCK_SANITIZERS)
    list(APPEND _redlock_checks float-cast-overflow)
  endif()
  list(JOIN _redlock_checks "," _redlock_checks)
  set(_redlock_sanitize_flag "-fsanitize=${_redlock_checks}")

  # A compiler without the runtime fails here, with a clear message, rather
  # than at the first link.
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "${_redlock_sanitize_flag}")
  set(CMAKE_REQUIRED_LINK_OPTIONS "${_redlock_sanitize_flag}")
  string(REPLACE "," "_" _redlock_result "REDLOCK_SANITIZE_WORKS_${_redlock_checks}")
  check_c_source_compiles("int main(void) { return 0; }" ${_redlock_result})
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT ${_redlock_result})
    message(FATAL_ERROR "${CMAKE_C_COMPILER} cannot build with ${_redlock_sanitize_flag}: "
      "is its sanitizer runtime installed? (scripts/deps.sh)")
  endif()

  # Directory-wide, so everything defined after this is covered. Frame
  # pointers give complete stacks in reports.
  add_compile_options(${_redlock_sanitize_flag} -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  add_link_options(${_redlock_sanitize_flag})
  message(STATUS "Sanitizers: ${_redlock_checks}")
endif()
